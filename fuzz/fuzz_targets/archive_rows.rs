//! Structured corruption: a valid archive whose rows, config and shard bytes are
//! changed as the input says (values of every type, in every column).
#![no_main]

use barecat::{ArchiveWriter, Meta, WriterOptions};
use libfuzzer_sys::fuzz_target;
use rusqlite::types::Value;

#[path = "common.rs"]
mod common;

const COLUMNS: [(&str, &str); 14] = [
    ("files", "path"),
    ("files", "shard"),
    ("files", "offset"),
    ("files", "size"),
    ("files", "crc32c"),
    ("files", "mode"),
    ("files", "mtime_ns"),
    ("dirs", "path"),
    ("dirs", "num_files"),
    ("dirs", "size_tree"),
    ("dirs", "num_subdirs"),
    ("config", "value_int"),
    ("files", "uid"),
    ("dirs", "mode"),
];

fn value(b: &[u8]) -> Value {
    let n = i64::from_le_bytes(b[1..9].try_into().unwrap());
    match b[0] % 6 {
        0 => Value::Null,
        1 => Value::Integer(n),
        2 => Value::Integer(n % 64),
        3 => Value::Real(f64::from_bits(n as u64)),
        4 => Value::Text(String::from_utf8_lossy(&b[1..9]).into_owned()),
        _ => Value::Blob(b[1..9].to_vec()),
    }
}

/// A small valid archive with three shards, built once; every run works on a copy.
fn template() -> &'static std::path::Path {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.barecat");
        let opts = WriterOptions {
            shard_size_limit: Some(64),
            ..Default::default()
        };
        let mut w = ArchiveWriter::open(&p, opts).unwrap();
        for (i, name) in ["a/x", "a/b/y", "c", "d/e/f/g", "z"].iter().enumerate() {
            w.add_file(name, Meta::default(), &vec![i as u8 + 1; 10 + 7 * i], None)
                .unwrap();
        }
        w.add_dir("empty", Meta::default()).unwrap();
        w.finish().unwrap();
        dir
    })
    .path()
}

fuzz_target!(|data: &[u8]| {
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(template()).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.path().join(entry.file_name())).unwrap();
    }
    let p = dir.path().join("a.barecat");
    {
        let c = rusqlite::Connection::open(&p).unwrap();
        c.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
        for op in data.chunks_exact(11) {
            let (table, col) = COLUMNS[op[0] as usize % COLUMNS.len()];
            let row = (op[1] % 8) as i64 + 1;
            let v = value(&op[2..11]);
            if op[0] == 255 {
                // Flip a byte in a shard instead.
                let s = dir.path().join(format!("a.barecat-shard-{:05}", op[1] % 3));
                if let Ok(mut b) = std::fs::read(&s) {
                    if !b.is_empty() {
                        let at = op[2] as usize % b.len();
                        b[at] ^= op[3] | 1;
                        let _ = std::fs::write(&s, b);
                    }
                }
                continue;
            }
            let _ = c.execute(
                &format!("UPDATE {table} SET {col} = ?1 WHERE rowid = ?2"),
                rusqlite::params![v, row],
            );
        }
    }
    common::exercise(&p);
});
