//! Helpers shared by the export tests (tests/it/export/).

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use barecat::{ArchiveWriter, Layout, Meta, WriterOptions};

pub const T0: i64 = 1_600_000_000_123_456_789;

pub fn meta(mode: u32, mtime_ns: i64) -> Meta {
    Meta {
        mode: Some(mode),
        uid: Some(1000),
        gid: Some(1000),
        mtime_ns: Some(mtime_ns),
    }
}

/// A small archive with metadata, unicode, hidden and empty directories.
pub fn sample(dir: &Path) -> PathBuf {
    let p = dir.join("s.barecat");
    let mut w = ArchiveWriter::open(&p, WriterOptions::default()).unwrap();
    w.add_dir("a", meta(0o40750, T0 + 1)).unwrap();
    w.add_file("a/x.txt", meta(0o100640, T0), b"hello\n", None)
        .unwrap();
    w.add_file("a/b/y.jpg", meta(0o100644, T0 + 2), b"jpeg", None)
        .unwrap();
    w.add_file("a/.h.txt", meta(0o100600, T0 + 3), b"hidden", None)
        .unwrap();
    w.add_file("ünï/ćödé.txt", meta(0o100644, T0 + 4), "ü".as_bytes(), None)
        .unwrap();
    w.add_file(
        "top.bin",
        meta(0o100755, T0 + 5),
        &crate::support::pseudo_random(1, 200_000),
        None,
    )
    .unwrap();
    w.add_file("empty.txt", meta(0o100444, T0 + 6), b"", None)
        .unwrap();
    w.add_dir("void", meta(0o40700, T0 + 7)).unwrap();
    w.add_dir("void/deeper", meta(0o40755, T0 + 8)).unwrap();
    w.finish().unwrap();
    p
}

/// The files of `sample` with their contents.
pub fn sample_files() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("a/x.txt", b"hello\n".to_vec()),
        ("a/b/y.jpg", b"jpeg".to_vec()),
        ("a/.h.txt", b"hidden".to_vec()),
        ("ünï/ćödé.txt", "ü".as_bytes().to_vec()),
        ("top.bin", crate::support::pseudo_random(1, 200_000)),
        ("empty.txt", Vec::new()),
    ]
}

/// Open the index of an archive for raw edits (the kind of damage or attack another
/// tool could leave).
/// Triggers and foreign keys are off, so rows go in as they are.
pub fn raw_index(archive: &Path) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open(archive).unwrap();
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_TRIGGER,
        false,
    )
    .unwrap();
    conn.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
    conn
}

/// Overwrite one byte of a stored file in its shard.
pub fn corrupt(archive: &Path, path: &str) {
    let a = barecat::Archive::open(archive).unwrap();
    let fi = a.file_info(path).unwrap();
    let shard = Layout::current(archive).shard_path(fi.shard);
    let mut b = fs::read(&shard).unwrap();
    b[fi.offset as usize] ^= 0xFF;
    fs::write(&shard, b).unwrap();
}

/// Everything below `root` except below `skip`: path → (kind, mode, content or
/// link target). Used to show that nothing outside an extraction directory changed.
pub fn snapshot(root: &Path, skip: &Path) -> BTreeMap<PathBuf, (String, u32, Vec<u8>)> {
    let mut out = BTreeMap::new();
    for e in walkdir::WalkDir::new(root).follow_links(false) {
        let e = e.unwrap();
        let p = e.path();
        if p.starts_with(skip) {
            continue;
        }
        let md = fs::symlink_metadata(p).unwrap();
        let (kind, data) = if md.file_type().is_symlink() {
            (
                "link",
                fs::read_link(p)
                    .unwrap()
                    .into_os_string()
                    .into_encoded_bytes(),
            )
        } else if md.is_dir() {
            ("dir", Vec::new())
        } else {
            ("file", fs::read(p).unwrap())
        };
        out.insert(p.to_path_buf(), (kind.to_string(), md.mode(), data));
    }
    out
}

pub fn mode_of(p: &Path) -> u32 {
    fs::symlink_metadata(p).unwrap().permissions().mode() & 0o7777
}

/// Sorted relative paths of the files below `root` (directories end in `/`).
pub fn tree(root: &Path) -> Vec<String> {
    let mut v: Vec<String> = walkdir::WalkDir::new(root)
        .min_depth(1)
        .into_iter()
        .map(|e| {
            let e = e.unwrap();
            let rel = e
                .path()
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if e.file_type().is_dir() {
                format!("{rel}/")
            } else {
                rel
            }
        })
        .collect();
    v.sort();
    v
}
