//! Helpers for the maintenance tests (verify, defrag, merge, du…).

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::support::{code, stderr, stdout, CommandExt};

use barecat::{Archive, ArchiveWriter, FileOrder, Meta, WriterOptions};

/// Run a command within two minutes: a hang fails the test instead of blocking it.
pub fn run_t<I, S>(program: impl AsRef<OsStr>, args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    Command::new(program.as_ref())
        .args(args)
        .output_within(Duration::from_secs(120))
        .unwrap_or_else(|e| panic!("cannot run {:?}: {e}", program.as_ref()))
}

/// File metadata used by the fixtures.
pub fn meta() -> Meta {
    Meta {
        mode: Some(0o100644),
        uid: Some(1000),
        gid: Some(1000),
        mtime_ns: Some(1_700_000_000_123_456_789),
    }
}

/// Open an existing archive for appending. Retries while the writer lock is held:
/// a child process spawned by another test thread can hold a copy of a just-closed
/// lock descriptor for a moment (between its fork and its exec).
pub fn open_append(path: &Path) -> ArchiveWriter {
    let start = Instant::now();
    loop {
        match ArchiveWriter::open(path, WriterOptions::with_mode(barecat::CreateMode::Append)) {
            Err(barecat::Error::Locked { .. }) if start.elapsed() < Duration::from_secs(10) => {
                std::thread::sleep(Duration::from_millis(20))
            }
            other => return other.unwrap(),
        }
    }
}

/// Build an archive from (path, content) pairs.
pub fn build(path: &Path, limit: Option<u64>, files: &[(String, Vec<u8>)]) -> PathBuf {
    let mut w = ArchiveWriter::open(
        path,
        WriterOptions {
            shard_size_limit: limit,
            ..WriterOptions::default()
        },
    )
    .unwrap();
    for (p, data) in files {
        w.add_file(p, meta(), data, None).unwrap();
    }
    w.finish().unwrap();
    path.to_path_buf()
}

/// `n` files of pseudo-random sizes up to `max` bytes in a few directories.
pub fn sample_files(prefix: &str, n: usize, max: usize, seed: u64) -> Vec<(String, Vec<u8>)> {
    let sizes = crate::support::pseudo_random(seed, n * 2);
    (0..n)
        .map(|i| {
            let size = (u16::from_le_bytes([sizes[2 * i], sizes[2 * i + 1]]) as usize) % (max + 1);
            let path = format!("{prefix}/d{}/f{i:04}.bin", i % 5);
            (
                path,
                crate::support::pseudo_random(seed * 1000 + i as u64, size),
            )
        })
        .collect()
}

/// Every file of an archive with its content (CRC-checked reads).
pub fn contents(path: &Path) -> BTreeMap<String, Vec<u8>> {
    let a = Archive::open(path).unwrap();
    a.files(FileOrder::Path, "")
        .map(|f| {
            let f = f.unwrap();
            let data = a
                .read_file(&f)
                .unwrap_or_else(|e| panic!("{}: {e}", f.path));
            (f.path, data)
        })
        .collect()
}

/// `barecat-verify --json`: exit code and the parsed report.
pub fn verify_json(path: &Path, quick: bool) -> (i32, serde_json::Value) {
    let mut args: Vec<&OsStr> = vec![OsStr::new("--json")];
    if quick {
        args.push(OsStr::new("--quick"));
    }
    args.push(path.as_os_str());
    let o = run_t(crate::support::bin("barecat-verify"), args);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\nstderr: {}", stdout(&o), stderr(&o)));
    (code(&o), v)
}

/// The kinds of the problems in a verify report.
pub fn kinds(report: &serde_json::Value, list: &str) -> Vec<String> {
    report[list]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["kind"].as_str().unwrap().to_string())
        .collect()
}

/// A plain read-write SQLite connection (no triggers disabled, no checks): for
/// damaging an index on purpose.
pub fn raw_sql(index: &Path, sql: &str) {
    let c = rusqlite::Connection::open(index).unwrap();
    c.execute_batch(sql).unwrap();
}

/// Sum of the shard lengths.
pub fn physical(path: &Path) -> u64 {
    barecat::Layout::current(path)
        .shard_files()
        .unwrap()
        .iter()
        .map(|s| std::fs::metadata(&s.path).unwrap().len())
        .sum()
}

pub fn shard_count(path: &Path) -> usize {
    barecat::Layout::current(path).shard_files().unwrap().len()
}

/// Names in a directory (to check nothing was left behind).
pub fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// (path, shard, offset, size) of every file, by address.
pub fn placement(p: &Path) -> Vec<(String, u64, u64, u64)> {
    let a = Archive::open(p).unwrap();
    a.files(FileOrder::Address, "")
        .map(|f| {
            let f = f.unwrap();
            (f.path, f.shard, f.offset, f.size)
        })
        .collect()
}
