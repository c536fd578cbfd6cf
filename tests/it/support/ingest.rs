//! Helpers for the ingest tests: archive contents, consistency checks, trees.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;

use std::path::Path;
use std::process::Output;

use barecat::{Archive, FileOrder, Layout};
use rusqlite::Connection;

use crate::support::{py_verify, ChildExt, CommandExt};

/// Every file of an archive with its content (read CRC-checked).
pub fn contents(archive: &Path) -> BTreeMap<String, Vec<u8>> {
    let a = Archive::open(archive).unwrap();
    a.files(FileOrder::Path, "")
        .map(|f| {
            let f = f.unwrap();
            let data = a.read_file(&f).unwrap();
            (f.path, data)
        })
        .collect()
}

/// Compare two path → content maps: first the sets of paths, then the first path
/// whose content differs (without printing megabytes of bytes).
pub fn assert_same(got: &BTreeMap<String, Vec<u8>>, want: &BTreeMap<String, Vec<u8>>, ctx: &str) {
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>(),
        "{ctx}: the paths differ"
    );
    for (k, v) in want {
        let g = &got[k];
        assert!(
            g == v,
            "{ctx}: content of {k} differs ({} vs {} bytes)",
            g.len(),
            v.len()
        );
    }
}

/// Every directory path of an archive (the root excluded).
pub fn dir_paths(archive: &Path) -> BTreeSet<String> {
    let a = Archive::open(archive).unwrap();
    a.dirs("")
        .unwrap()
        .into_iter()
        .map(|d| d.path)
        .filter(|p| !p.is_empty())
        .collect()
}

/// One row per file and directory, in row order, every column: for byte-level
/// comparisons of two archives. The root's mtime (the creation time) is left out.
pub fn rows(archive: &Path) -> Vec<String> {
    let c = Connection::open(archive).unwrap();
    let mut out = Vec::new();
    for (table, sql) in [
        ("files", "SELECT path, shard, offset, size, crc32c, mode, uid, gid, mtime_ns FROM files ORDER BY rowid"),
        ("dirs", "SELECT path, num_subdirs, num_files, num_files_tree, size_tree, mode, uid, gid, CASE WHEN path = '' THEN NULL ELSE mtime_ns END FROM dirs ORDER BY rowid"),
    ] {
        let mut st = c.prepare(sql).unwrap();
        let mut r = st.query([]).unwrap();
        while let Some(row) = r.next().unwrap() {
            let vals: Vec<String> = (0..9)
                .map(|i| format!("{:?}", row.get_ref(i).unwrap()))
                .collect();
            out.push(format!("{table}: {}", vals.join(" | ")));
        }
    }
    out
}

/// The shard files' bytes, in order.
pub fn shard_bytes(archive: &Path) -> Vec<Vec<u8>> {
    Layout::current(archive)
        .shard_files()
        .unwrap()
        .iter()
        .map(|s| fs::read(&s.path).unwrap())
        .collect()
}

/// Our own consistency checks and Python barecat's `verify`.
pub fn check(archive: &Path) {
    let a = Archive::open(archive).unwrap();
    let bad = a.with_index(|i| i.stats_mismatches()).unwrap();
    assert!(bad.is_empty(), "stats mismatches: {bad:?}");
    drop(a);
    let c = Connection::open(archive).unwrap();
    let orphans: i64 = c
        .query_row("SELECT count(*) FROM pragma_foreign_key_check", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(orphans, 0, "rows whose parent directory is missing");
    let triggers: i64 = c
        .query_row(
            "SELECT value_int FROM config WHERE key = 'use_triggers'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(triggers, 1);
    // No two files share bytes, and every shard ends at its last file.
    let mut st = c
        .prepare("SELECT shard, offset, size FROM files WHERE size > 0 ORDER BY shard, offset")
        .unwrap();
    let ext: Vec<(i64, i64, i64)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for w in ext.windows(2) {
        if w[0].0 == w[1].0 {
            assert!(w[0].1 + w[0].2 <= w[1].1, "overlapping extents {w:?}");
        }
    }
    py_verify(archive);
}

/// Files of a directory tree (relative paths with `/`) and their contents.
pub fn tree_files(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for e in walkdir::WalkDir::new(root).follow_links(false) {
        let e = e.unwrap();
        if e.file_type().is_file() {
            let rel = e.path().strip_prefix(root).unwrap();
            out.insert(
                rel.to_str().unwrap().to_string(),
                fs::read(e.path()).unwrap(),
            );
        }
    }
    out
}

/// Prefix every key of a map.
pub fn prefixed(prefix: &str, m: &BTreeMap<String, Vec<u8>>) -> BTreeMap<String, Vec<u8>> {
    m.iter()
        .map(|(k, v)| (format!("{prefix}/{k}"), v.clone()))
        .collect()
}

/// Run a command with bytes on its standard input.
pub fn run_stdin<I, S>(program: &Path, args: I, input: &[u8]) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let data = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&data);
    });
    let out = child.output_bounded().unwrap();
    writer.join().unwrap();
    out
}

/// Run a shell command line (for tar, zip, find); it must succeed.
pub fn sh(dir: &Path, cmd: &str) {
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .current_dir(dir)
        .output_bounded()
        .unwrap();
    assert!(
        out.status.success(),
        "{cmd} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Run a Python snippet (system python3) in `dir`; it must succeed.
pub fn python3(dir: &Path, code: &str) {
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(code)
        .current_dir(dir)
        .output_bounded()
        .unwrap();
    assert!(
        out.status.success(),
        "python failed: {}\n{code}",
        String::from_utf8_lossy(&out.stderr)
    );
}
