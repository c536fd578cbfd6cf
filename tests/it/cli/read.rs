//! The reading commands (`barecat-cat`, `barecat-ls`) and the multicall `barecat`,
//! run as real binaries.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::support::*;
use barecat::{Archive, ArchiveWriter, Layout, Meta, WriterOptions};

fn sample(dir: &Path) -> PathBuf {
    let p = dir.join("s.barecat");
    let mut w = ArchiveWriter::open(&p, WriterOptions::default()).unwrap();
    let meta = Meta {
        mode: Some(0o100640),
        uid: Some(0),
        gid: Some(0),
        mtime_ns: Some(1_600_000_000_000_000_000),
    };
    w.add_file("a/x.txt", meta, b"hello\n", None).unwrap();
    w.add_file("a/b/y.jpg", meta, b"jpeg", None).unwrap();
    w.add_file("a/.h.jpg", meta, b"hidden", None).unwrap();
    w.add_file("top.bin", meta, &pseudo_random(1, 200_000), None)
        .unwrap();
    w.add_dir(
        "empty",
        Meta {
            mode: Some(0o40755),
            ..meta
        },
    )
    .unwrap();
    w.finish().unwrap();
    p
}

fn out_str(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn cat_writes_files_and_checks_them() {
    let dir = tempfile::tempdir().unwrap();
    let p = sample(dir.path());
    let o = run(
        bin("barecat-cat"),
        [p.as_os_str(), "a/x.txt".as_ref(), "./a/b/y.jpg".as_ref()],
    );
    assert!(o.status.success());
    assert_eq!(o.stdout, b"hello\njpeg");
    let o = run(bin("barecat-cat"), [p.as_os_str(), "top.bin".as_ref()]);
    assert_eq!(o.stdout, pseudo_random(1, 200_000));
    // Legacy form.
    let o = run(
        bin("barecat-extract-single"),
        [
            "--barecat-file".as_ref(),
            p.as_os_str(),
            "--path".as_ref(),
            "a/x.txt".as_ref(),
        ],
    );
    assert_eq!(o.stdout, b"hello\n");
}

#[test]
fn cat_refuses_corrupt_files_without_output() {
    let dir = tempfile::tempdir().unwrap();
    let p = sample(dir.path());
    let fi = Archive::open(&p).unwrap().file_info("a/x.txt").unwrap();
    let shard = Layout::current(&p).shard_path(0);
    let mut b = fs::read(&shard).unwrap();
    b[fi.offset as usize] = b'J';
    fs::write(&shard, b).unwrap();
    let o = run(bin("barecat-cat"), [p.as_os_str(), "a/x.txt".as_ref()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    assert_clean_error(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("a/x.txt") && err.contains("CRC32C mismatch"),
        "{err}"
    );
}

#[test]
fn cat_errors_are_one_line_with_status_1() {
    let dir = tempfile::tempdir().unwrap();
    let p = sample(dir.path());
    for args in [
        vec![p.to_str().unwrap(), "missing"],
        vec![p.to_str().unwrap(), "a"],
        vec!["/nonexistent/archive", "x"],
    ] {
        let o = run(bin("barecat-cat"), &args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert_clean_error(&o);
    }
    let garbage = dir.path().join("garbage");
    fs::write(&garbage, vec![0x42u8; 5000]).unwrap();
    let o = run(bin("barecat-cat"), [garbage.as_os_str(), "x".as_ref()]);
    assert_eq!(o.status.code(), Some(1));
    assert_clean_error(&o);
    // Usage errors exit 2.
    let o = run(bin("barecat-cat"), [p.as_os_str()]);
    assert_eq!(o.status.code(), Some(2));
    let o = run(bin("barecat-cat"), ["--no-such-flag"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn corrupt_rows_never_panic_in_commands() {
    for sql in [
        "UPDATE files SET size = -5",
        "UPDATE files SET offset = 99999999999",
        "UPDATE files SET shard = 'x'",
        "UPDATE files SET path = x'ff00' WHERE path = 'a/x.txt'",
        "UPDATE files SET crc32c = 1.5",
        "UPDATE dirs SET num_files = 'many'",
        "DELETE FROM dirs",
        "DROP TABLE dirs",
        "DELETE FROM config",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let p = sample(dir.path());
        rusqlite::Connection::open(&p)
            .unwrap()
            .execute_batch(&format!("PRAGMA foreign_keys = OFF; {sql}"))
            .unwrap();
        for args in [
            vec!["barecat-cat", "a/x.txt"],
            vec!["barecat-ls", "-l"],
            vec!["barecat-ls", "-R"],
            vec!["barecat-ls", "--json", "a"],
            vec!["barecat-ls", "**/*.jpg"],
        ] {
            let mut full = vec![p.to_str().unwrap()];
            full.extend(&args[1..]);
            let o = run(bin(args[0]), &full);
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(
                !err.contains("panicked") && !err.contains("internal error"),
                "{sql} {args:?}: {err}"
            );
            if !o.status.success() {
                assert_clean_error(&o);
            }
        }
    }
}

#[test]
fn ls_formats() {
    let dir = tempfile::tempdir().unwrap();
    let p = sample(dir.path());
    let ls = |args: &[&str]| {
        let mut full = vec![p.to_str().unwrap()];
        full.extend(args);
        let o = run(bin("barecat-ls"), &full);
        (o.status.code(), out_str(&o))
    };
    assert_eq!(ls(&[]), (Some(0), "a/\nempty/\ntop.bin\n".into()));
    assert_eq!(ls(&["a"]), (Some(0), ".h.jpg\nb/\nx.txt\n".into()));
    assert_eq!(ls(&["a/x.txt"]), (Some(0), "a/x.txt\n".into()));
    assert_eq!(ls(&["-R"]).1, "a/.h.jpg\na/b/y.jpg\na/x.txt\ntop.bin\n");
    assert_eq!(
        ls(&["**/*.jpg"]).1,
        "a/b/y.jpg\n",
        "hidden files excluded from globs"
    );
    let (_, long) = ls(&["-l", "a"]);
    let lines: Vec<&str> = long.lines().collect();
    assert_eq!(lines[0], "total 16");
    assert!(
        lines[2].starts_with("drwxr-xr-x") || lines[2].starts_with("d?????????"),
        "{long}"
    );
    assert!(
        lines[3].starts_with("-rw-r-----    1 root     root            6 "),
        "{long}"
    );
    assert!(lines[3].ends_with(" x.txt"), "{long}");
    let (_, json) = ls(&["--json", "a"]);
    for line in json.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(v["path"].as_str().unwrap().starts_with("a/"));
    }
    let (code, both) = ls(&["a/b", "empty"]);
    assert_eq!(code, Some(0));
    assert_eq!(both, "a/b:\ny.jpg\n\nempty:\n");
    let o = run(
        bin("barecat-ls"),
        [p.as_os_str(), "nope".as_ref(), "a/b".as_ref()],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        out_str(&o).contains("y.jpg"),
        "other paths are still listed"
    );
    assert_clean_error(&o);
}

#[test]
fn multicall_by_subcommand_and_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let p = sample(dir.path());
    let o = run(
        bin("barecat"),
        ["cat".as_ref(), p.as_os_str(), "a/x.txt".as_ref()],
    );
    assert_eq!(o.stdout, b"hello\n");
    let link = dir.path().join("barecat-ls");
    std::os::unix::fs::symlink(bin("barecat"), &link).unwrap();
    let o = run(&link, [p.as_os_str(), "a/b".as_ref()]);
    assert_eq!(out_str(&o), "y.jpg\n");
    let list = run_ok(bin("barecat"), ["--list"]);
    assert!(list.contains("cat") && list.contains("ls"), "{list}");
    assert!(
        !list.contains("extract-single"),
        "legacy names are not listed"
    );
    assert_eq!(run(bin("barecat"), ["frobnicate"]).status.code(), Some(2));
    assert_eq!(
        run(bin("barecat"), Vec::<&str>::new()).status.code(),
        Some(2)
    );
    assert!(run_ok(bin("barecat"), ["--version"]).starts_with("barecat "));
    let help = run_ok(bin("barecat"), ["ls", "--help"]);
    assert!(help.contains("Examples:"), "{help}");
}

#[test]
fn broken_pipe_is_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = sample(dir.path());
    let mut child = Command::new(bin("barecat-cat"))
        .args([
            p.as_os_str(),
            "top.bin".as_ref(),
            "top.bin".as_ref(),
            "top.bin".as_ref(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.output_bounded().unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn repair_fixes_statistics_and_cuts_what_a_killed_writer_left() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("r.barecat");
    let mut w = ArchiveWriter::open(
        &p,
        WriterOptions {
            shard_size_limit: Some(400),
            ..Default::default()
        },
    )
    .unwrap();
    for i in 0..10u8 {
        w.add_file(&format!("d/f{i}"), Meta::default(), &[i; 100], None)
            .unwrap();
    }
    w.finish().unwrap();
    let layout = Layout::current(&p);
    // A killed batch: bytes after the last file, and shards no row refers to.
    let last = layout.shard_path(2);
    let mut b = fs::read(&last).unwrap();
    b.extend_from_slice(&[9; 77]);
    fs::write(&last, b).unwrap();
    fs::write(layout.shard_path(3), [9; 400]).unwrap();
    fs::write(layout.shard_path(4), [9; 50]).unwrap();
    // Stale statistics, as a foreign tool with triggers off would leave them.
    rusqlite::Connection::open(&p)
        .unwrap()
        .execute_batch("UPDATE dirs SET num_files_tree = 0, size_tree = 0")
        .unwrap();
    let out = run_ok(bin("barecat-repair"), [&p]);
    assert!(out.contains("2 directory rows fixed"), "{out}");
    assert!(out.contains("527 of trailing garbage"), "{out}");
    assert_eq!(layout.shard_files().unwrap().len(), 3);
    assert_eq!(fs::metadata(&last).unwrap().len(), 200);
    let a = Archive::open(&p).unwrap();
    assert!(a.with_index(|i| i.stats_mismatches()).unwrap().is_empty());
    for i in 0..10u8 {
        assert_eq!(a.read(&format!("d/f{i}")).unwrap(), vec![i; 100]);
    }
    // Nothing left to do the second time.
    let out = run_ok(bin("barecat-repair"), [&p]);
    assert!(
        out.contains("0 directory rows fixed, 0 of trailing"),
        "{out}"
    );
}
