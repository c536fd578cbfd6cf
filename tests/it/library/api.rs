//! Integration tests of the library: naming, schema, bulk mode, writing, durability,
//! paths, reading, listing, mutations and bad input.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::support::*;
use barecat::core::archive::{WalkEvent, WalkOptions};
use barecat::core::glob::GlobOptions;
use barecat::{
    Archive, ArchiveWriter, CreateMode, Entry, Error, FileOrder, Layout, Meta, WriterOptions,
};
use rusqlite::Connection;

fn new_writer(path: &Path, limit: Option<u64>) -> ArchiveWriter {
    ArchiveWriter::open(
        path,
        WriterOptions {
            mode: CreateMode::New,
            shard_size_limit: limit,
            ..Default::default()
        },
    )
    .unwrap()
}

fn append(path: &Path) -> ArchiveWriter {
    ArchiveWriter::open(path, WriterOptions::with_mode(CreateMode::Append)).unwrap()
}

fn consistent(path: &Path) {
    let a = Archive::open(path).unwrap();
    let bad = a.with_index(|i| i.stats_mismatches()).unwrap();
    assert!(bad.is_empty(), "stats mismatches: {bad:?}");
    let c = Connection::open(a.layout().index()).unwrap();
    let orphans: i64 = c
        .query_row("SELECT count(*) FROM pragma_foreign_key_check", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(orphans, 0, "rows whose parent directory is missing");
    let use_triggers: i64 = c
        .query_row(
            "SELECT value_int FROM config WHERE key='use_triggers'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(use_triggers, 1);
}

fn shard_len(path: &Path, n: u64) -> u64 {
    fs::metadata(Layout::current(path).shard_path(n))
        .unwrap()
        .len()
}

/// Three shards of 10 files of 100 bytes (limit 400).
fn three_shards(dir: &Path) -> PathBuf {
    let p = dir.join("s.barecat");
    let mut w = new_writer(&p, Some(400));
    for i in 0..10 {
        w.add_file(&format!("d/f{i}"), Meta::default(), &[i as u8; 100], None)
            .unwrap();
    }
    w.finish().unwrap();
    assert_eq!(Layout::current(&p).shard_files().unwrap().len(), 3);
    p
}

// ---------------------------------------------------------------- naming, discovery

#[test]
fn missing_middle_shard_is_a_clear_error_and_never_recreated() {
    let dir = tempfile::tempdir().unwrap();
    let p = three_shards(dir.path());
    let middle = Layout::current(&p).shard_path(1);
    fs::remove_file(&middle).unwrap();
    let err = Archive::open(&p).err().unwrap().to_string();
    assert!(err.contains("missing shard 1"), "{err}");
    let err = ArchiveWriter::open(&p, WriterOptions::with_mode(CreateMode::Append))
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("missing shard 1"), "{err}");
    assert!(!middle.exists(), "a bogus shard was created");
}

#[test]
fn missing_last_shard_referenced_by_index_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = three_shards(dir.path());
    fs::remove_file(Layout::current(&p).shard_path(2)).unwrap();
    let err = Archive::open(&p).err().unwrap().to_string();
    assert!(err.contains("missing shard 2"), "{err}");
    // A lenient open (for verify) still reads what is there.
    let a = Archive::open_with(&p, barecat::OpenOptions::lenient()).unwrap();
    assert_eq!(a.read("d/f0").unwrap(), vec![0u8; 100]);
    let err = a.read("d/f9").unwrap_err().to_string();
    assert!(err.contains("missing shard 2"), "{err}");
}

#[test]
fn archive_names_are_taken_literally() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("no_suffix");
    let mut w = new_writer(&p, None);
    w.add_file("x", Meta::default(), b"1", None).unwrap();
    w.finish().unwrap();
    assert!(p.is_file());
    assert!(dir.path().join("no_suffix-shard-00000").is_file());
    // Names with characters that are special in URIs work.
    let odd = dir.path().join("we?ird#name%20'q.barecat");
    let mut w = new_writer(&odd, None);
    w.add_file("x", Meta::default(), b"1", None).unwrap();
    w.finish().unwrap();
    assert_eq!(Archive::open(&odd).unwrap().read("x").unwrap(), b"1");
}

#[test]
fn creating_over_an_existing_archive_is_refused_unless_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let p = three_shards(dir.path());
    let before = fs::read(&p).unwrap();
    let err = ArchiveWriter::open(&p, WriterOptions::with_mode(CreateMode::New))
        .err()
        .unwrap();
    assert!(matches!(err, Error::ArchiveExists { .. }), "{err}");
    assert_eq!(fs::read(&p).unwrap(), before);
    let w = ArchiveWriter::open(&p, WriterOptions::with_mode(CreateMode::Overwrite)).unwrap();
    w.finish().unwrap();
    assert_eq!(Archive::open(&p).unwrap().count_files().unwrap(), 0);
    assert_eq!(Layout::current(&p).shard_files().unwrap().len(), 1);
}

#[test]
fn a_second_writer_is_refused_while_one_is_open() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.barecat");
    let _w = new_writer(&p, None);
    let err = ArchiveWriter::open(&p, WriterOptions::with_mode(CreateMode::Append))
        .err()
        .unwrap();
    assert!(matches!(err, Error::Locked { .. }), "{err}");
}

// ---------------------------------------------------------------- schema

#[test]
fn writable_connections_have_recursive_triggers_and_foreign_keys() {
    let dir = tempfile::tempdir().unwrap();
    let w = new_writer(&dir.path().join("a.barecat"), None);
    let c = w.index().conn();
    let get = |p: &str| -> i64 { c.pragma_query_value(None, p, |r| r.get(0)).unwrap() };
    assert_eq!(get("recursive_triggers"), 1);
    assert_eq!(get("foreign_keys"), 1);
    assert_eq!(get("trusted_schema"), 0);
}

#[test]
fn triggers_keep_statistics_for_plain_sql_writers() {
    // A tool that inserts through SQL with triggers on (as Python does) keeps every
    // ancestor's statistics right in an archive we created.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.barecat");
    new_writer(&p, None).finish().unwrap();
    let c = Connection::open(&p).unwrap();
    c.execute_batch(
        "PRAGMA recursive_triggers = ON; PRAGMA foreign_keys = ON;
         INSERT INTO files (path, shard, offset, size) VALUES ('a/b/c/f', 0, 0, 5);
         INSERT INTO files (path, shard, offset, size) VALUES ('a/g', 0, 5, 7);
         DELETE FROM files WHERE path = 'a/b/c/f';
         INSERT INTO dirs (path) VALUES ('x/y');
         UPDATE files SET path = 'x/y/g' WHERE path = 'a/g';",
    )
    .unwrap();
    drop(c);
    fs::write(Layout::current(&p).shard_path(0), [0u8; 12]).unwrap();
    consistent(&p);
    let a = Archive::open(&p).unwrap();
    let root = a.root().unwrap();
    assert_eq!((root.num_files_tree, root.size_tree), (1, 7));
    let err = Connection::open(&p)
        .unwrap()
        .execute(
            "INSERT INTO files (path, shard, offset) VALUES ('a', 0, 0)",
            [],
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("Path already exists as directory"), "{err}");
}

fn set_config(p: &Path, key: &str, v: i64) {
    Connection::open(p)
        .unwrap()
        .execute(
            "UPDATE config SET value_int = ?2 WHERE key = ?1",
            rusqlite::params![key, v],
        )
        .unwrap();
}

#[test]
fn schema_02_opens_read_only_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let p = three_shards(dir.path());
    set_config(&p, "schema_version_minor", 2);
    let a = Archive::open(&p).unwrap();
    assert_eq!(a.read("d/f3").unwrap(), vec![3u8; 100]);
    assert!(
        a.warnings().iter().any(|w| w.contains("0.2")),
        "{:?}",
        a.warnings()
    );
    let err = ArchiveWriter::open(&p, WriterOptions::with_mode(CreateMode::Append))
        .err()
        .unwrap();
    assert!(matches!(err, Error::ReadOnly { .. }), "{err}");
}

#[test]
fn newer_major_versions_and_pre_versioned_indexes_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = three_shards(dir.path());
    set_config(&p, "schema_version_major", 1);
    let err = Archive::open(&p).err().unwrap().to_string();
    assert!(err.contains("newer"), "{err}");
    Connection::open(&p)
        .unwrap()
        .execute_batch("DROP TABLE config")
        .unwrap();
    let err = Archive::open(&p).err().unwrap().to_string();
    assert!(err.contains("schema version"), "{err}");
}

#[test]
fn hostile_index_views_and_triggers_execute_nothing_on_read() {
    let dir = tempfile::tempdir().unwrap();
    let p = three_shards(dir.path());
    let marker = dir.path().join("marker.db");
    // A trigger on the config table that would create a file if it ever ran, and a
    // `files` view instead of the table.
    let c = Connection::open(&p).unwrap();
    c.execute_batch(&format!(
        "CREATE TABLE log (x);
         CREATE TRIGGER evil AFTER UPDATE ON config BEGIN INSERT INTO log VALUES (1); END;
         ATTACH '{}' AS m; CREATE TABLE m.t (x); DETACH m;",
        marker.display()
    ))
    .unwrap();
    drop(c);
    fs::remove_file(&marker).unwrap();
    let a = Archive::open(&p).unwrap();
    assert_eq!(a.read("d/f1").unwrap(), vec![1u8; 100]);
    assert!(!marker.exists());
    let c = Connection::open(&p).unwrap();
    c.execute_batch(
        "ALTER TABLE files RENAME TO files_real;
         CREATE VIEW files AS SELECT * FROM files_real;",
    )
    .unwrap();
    drop(c);
    let err = Archive::open(&p).err().unwrap().to_string();
    assert!(err.contains("'files' is a view"), "{err}");
}

// ---------------------------------------------------------------- bulk mode

#[test]
fn use_triggers_is_never_left_at_zero() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.barecat");
    let mut w = new_writer(&p, None);
    w.add_file("a/b", Meta::default(), b"x", None).unwrap();
    // Inside the batch, triggers are off for this connection's transaction only.
    assert!(!w.index().use_triggers().unwrap());
    // Another connection sees the committed state: triggers on.
    let other = Connection::open(&p).unwrap();
    let v: i64 = other
        .query_row(
            "SELECT value_int FROM config WHERE key='use_triggers'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(v, 1);
    drop(other);
    w.commit().unwrap();
    assert!(w.index().use_triggers().unwrap());
    // A failed add in the middle of a batch, then the writer goes away unfinished.
    w.add_file("c/d", Meta::default(), b"y", None).unwrap();
    assert!(w.add_file("c/d", Meta::default(), b"y", None).is_err());
    drop(w);
    consistent(&p);
    let a = Archive::open(&p).unwrap();
    assert!(a.exists("a/b").unwrap());
    assert!(
        !a.exists("c/d").unwrap(),
        "an uncommitted batch was rolled back"
    );
}

#[test]
fn interrupted_foreign_bulk_operation_is_repaired_on_writable_open() {
    let dir = tempfile::tempdir().unwrap();
    let p = three_shards(dir.path());
    // What a killed Python bulk operation leaves: use_triggers=0 committed, stale stats.
    let c = Connection::open(&p).unwrap();
    c.execute_batch(
        "PRAGMA foreign_keys = OFF;
         UPDATE config SET value_int = 0 WHERE key = 'use_triggers';
         INSERT INTO files (path, shard, offset, size) VALUES ('new/x', 0, 0, 10);
         UPDATE dirs SET num_files = 99 WHERE path = 'd';",
    )
    .unwrap();
    drop(c);
    append(&p).finish().unwrap();
    consistent(&p);
    assert!(Archive::open(&p).unwrap().exists("new").unwrap());
}

#[test]
fn rebuild_fixes_every_counter_and_is_rerunnable() {
    let dir = tempfile::tempdir().unwrap();
    let p = three_shards(dir.path());
    let mut w = append(&p);
    w.add_dir("empty/deeper", Meta::default()).unwrap();
    w.commit().unwrap();
    let c = w.index().conn();
    c.execute_batch(
        "UPDATE dirs SET num_files = 7, num_subdirs = 7, num_files_tree = 7, size_tree = 7;",
    )
    .unwrap();
    let changed = w.index().rebuild_statistics().unwrap();
    assert!(changed >= 4, "{changed}");
    assert_eq!(w.index().rebuild_statistics().unwrap(), 0);
    // Missing ancestors are created too.
    c.execute_batch(
        "PRAGMA foreign_keys = OFF; UPDATE config SET value_int = 0 WHERE key = 'use_triggers';
         INSERT INTO files (path, shard, offset, size) VALUES ('p/q/r/s', 0, 0, 3);
         UPDATE config SET value_int = 1 WHERE key = 'use_triggers'; PRAGMA foreign_keys = ON;",
    )
    .unwrap();
    assert_eq!(w.index().rebuild_statistics().unwrap(), 3 + 4); // 3 added; they and the root change
    assert!(w.index().stats_mismatches().unwrap().is_empty());
    drop(w);
    consistent(&p);
    let root = Archive::open(&p).unwrap().root().unwrap();
    assert_eq!(
        (
            root.num_subdirs,
            root.num_files,
            root.num_files_tree,
            root.size_tree
        ),
        (3, 0, 11, 1003)
    );
}

// ---------------------------------------------------------------- writing

#[test]
fn conflicts_are_detected_before_any_byte_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.barecat");
    let mut w = new_writer(&p, None);
    w.add_file("f", Meta::default(), b"12345", None).unwrap();
    w.add_file("d/g", Meta::default(), b"abc", None).unwrap();
    w.commit().unwrap();
    let len = shard_len(&p, 0);
    type Check = fn(&Error) -> bool;
    let cases: Vec<(&str, Check)> = vec![
        ("f", |e| matches!(e, Error::FileExists(_))),
        ("d", |e| matches!(e, Error::IsADirectory(_))),
        ("f/x", |e| matches!(e, Error::NotADirectory(_))),
        ("f/x/y", |e| matches!(e, Error::NotADirectory(_))),
        ("", |e| matches!(e, Error::IsADirectory(_))),
        ("../up", |e| matches!(e, Error::InvalidPath { .. })),
        ("/abs", |e| matches!(e, Error::InvalidPath { .. })),
        ("nul\0x", |e| matches!(e, Error::InvalidPath { .. })),
    ];
    for (path, ok) in cases {
        let e = w
            .add_file(path, Meta::default(), b"zzzz", None)
            .unwrap_err();
        assert!(ok(&e), "{path:?}: {e}");
        let e = w
            .add_file_from_reader(path, Meta::default(), 4, &mut &b"zzzz"[..])
            .unwrap_err();
        assert!(ok(&e), "streamed {path:?}: {e}");
    }
    assert!(matches!(
        w.add_dir("f", Meta::default()).unwrap_err(),
        Error::FileExists(_)
    ));
    assert!(matches!(
        w.add_dir("f/sub", Meta::default()).unwrap_err(),
        Error::NotADirectory(_)
    ));
    w.finish().unwrap();
    assert_eq!(shard_len(&p, 0), len, "a rejected add left bytes behind");
    consistent(&p);
}

#[test]
fn streamed_sources_that_change_size_leave_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.barecat");
    let mut w = new_writer(&p, None);
    w.add_file("keep", Meta::default(), b"keep", None).unwrap();
    let short = w
        .add_file_from_reader("short", Meta::default(), 10, &mut &b"abc"[..])
        .unwrap_err();
    assert!(matches!(short, Error::SourceChanged { .. }), "{short}");
    let long = w
        .add_file_from_reader("long", Meta::default(), 2, &mut &b"abcdef"[..])
        .unwrap_err();
    assert!(matches!(long, Error::SourceChanged { .. }), "{long}");
    let big = pseudo_random(3, 3 << 20);
    w.add_file_from_reader("big", Meta::default(), big.len() as u64, &mut &big[..])
        .unwrap();
    w.finish().unwrap();
    assert_eq!(shard_len(&p, 0), 4 + big.len() as u64);
    let a = Archive::open(&p).unwrap();
    assert_eq!(a.read("big").unwrap(), big);
    assert!(!a.exists("short").unwrap());
    consistent(&p);
}

#[test]
fn directories_carry_metadata_and_repeated_dirs_update_it() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.barecat");
    let mut w = new_writer(&p, None);
    w.add_file("d/inner/f", Meta::default(), b"x", None)
        .unwrap();
    // A directory listed after its contents (as tars do), then again.
    let m1 = Meta {
        mode: Some(0o40700),
        uid: Some(5),
        gid: Some(6),
        mtime_ns: Some(42),
    };
    w.add_dir("d", m1).unwrap();
    let m2 = Meta {
        mtime_ns: Some(43),
        ..m1
    };
    w.add_dir("d", m2).unwrap();
    w.add_dir(
        "",
        Meta {
            mode: Some(0o40755),
            ..Meta::default()
        },
    )
    .unwrap();
    w.finish().unwrap();
    let a = Archive::open(&p).unwrap();
    match a.stat("d").unwrap() {
        Entry::Dir(d) => {
            assert_eq!(d.meta, m2);
            assert_eq!((d.num_subdirs, d.num_files_tree), (1, 1));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(a.root().unwrap().meta.mode, Some(0o40755));
    consistent(&p);
}

#[test]
fn metadata_comes_from_the_file_system() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("f");
    fs::write(&f, b"data").unwrap();
    let md = fs::metadata(&f).unwrap();
    let m = Meta::from_fs(&md);
    use std::os::unix::fs::MetadataExt;
    assert_eq!(m.mode, Some(md.mode()));
    assert_eq!(m.mode.unwrap() & 0o170000, 0o100000);
    assert_eq!(m.uid, Some(md.uid()));
    assert_eq!(
        m.mtime_ns,
        Some(md.mtime() * 1_000_000_000 + md.mtime_nsec())
    );
}

#[test]
fn shard_limit_is_stored_and_kept_unless_changed() {
    let dir = tempfile::tempdir().unwrap();
    let p = three_shards(dir.path());
    // Append without a limit keeps it (Python resets it to unlimited).
    let w = append(&p);
    assert_eq!(w.shard_size_limit(), 400);
    drop(w);
    // A smaller limit than the largest shard is refused.
    let err = ArchiveWriter::open(
        &p,
        WriterOptions {
            mode: CreateMode::Append,
            shard_size_limit: Some(100),
            ..Default::default()
        },
    )
    .err()
    .unwrap();
    assert!(
        err.to_string().contains("smaller than the largest"),
        "{err}"
    );
    assert_eq!(Archive::open(&p).unwrap().shard_size_limit().unwrap(), 400);
}

// ---------------------------------------------------------------- durability

#[test]
fn long_operations_commit_periodically() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.barecat");
    let mut w = ArchiveWriter::open(
        &p,
        WriterOptions {
            commit_bytes: 1000,
            ..Default::default()
        },
    )
    .unwrap();
    for i in 0..10 {
        w.add_file(&format!("f{i}"), Meta::default(), &[1u8; 300], None)
            .unwrap();
    }
    // Without finish(), a reader already sees the committed batches.
    let n = Archive::open(&p).unwrap().count_files().unwrap();
    assert!(n >= 8, "only {n} committed");
    let mut w2 = w;
    w2.commit().unwrap();
    drop(w2);
    consistent(&p);
}

/// Child side of the kill test: writes until it is killed.
#[test]
#[ignore = "helper run by killed_writer_leaves_a_readable_archive"]
fn writer_child() {
    let Some(p) = std::env::var_os("BARECAT_CHILD_ARCHIVE") else {
        return;
    };
    let mut w = ArchiveWriter::open(
        &p,
        WriterOptions {
            mode: CreateMode::AppendOrCreate,
            commit_interval: Duration::from_millis(20),
            shard_size_limit: Some(1 << 20),
            ..Default::default()
        },
    )
    .unwrap();
    // Earlier rounds committed files 0..n (batches commit in order): go on from n.
    let start = committed_files(Path::new(&p));
    for i in start.. {
        let data = pseudo_random(i, (i as usize * 7919) % 30_000);
        w.add_file(&format!("d{}/f{i}", i % 13), Meta::default(), &data, None)
            .unwrap();
    }
}

/// Files committed to the archive at `p` so far (0 while it does not exist yet).
fn committed_files(p: &Path) -> u64 {
    Archive::open(p).and_then(|a| a.count_files()).unwrap_or(0)
}

#[test]
fn killed_writer_leaves_a_readable_archive() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("k.barecat");
    // The child is this test binary running only `writer_child`, named by its path
    // in the binary (`library::api::writer_child`: module_path! less the crate).
    let (_, module) = module_path!().split_once("::").unwrap();
    let writer_child = format!("{module}::writer_child");
    for round in 0..3u64 {
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", &writer_child, "--ignored", "--nocapture"])
            .env("BARECAT_CHILD_ARCHIVE", &p)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Kill once this child has committed something of its own (however long a
        // loaded machine takes to get there), at a different moment in each round.
        let before = committed_files(&p);
        let deadline = std::time::Instant::now() + Duration::from_secs(120);
        while committed_files(&p) <= before {
            if let Some(st) = child.try_wait().unwrap() {
                panic!("the writer ({writer_child}) exited ({st}) before committing anything");
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the writer committed nothing in 120 s"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        std::thread::sleep(Duration::from_millis(30 * round));
        child.kill().unwrap();
        child.wait_bounded().unwrap();
        let a = Archive::open(&p).unwrap();
        let mut n = 0;
        for f in a.files(FileOrder::Address, "") {
            let f = f.unwrap();
            let i: u64 = f.path.rsplit_once("/f").unwrap().1.parse().unwrap();
            let want = pseudo_random(i, (i as usize * 7919) % 30_000);
            assert_eq!(a.read_file(&f).unwrap(), want, "{}", f.path);
            n += 1;
        }
        assert!(n > before, "nothing committed in round {round}");
        drop(a);
        consistent(&p);
    }
}

// ---------------------------------------------------------------- reading

fn sample(dir: &Path) -> PathBuf {
    let p = dir.join("r.barecat");
    let mut w = new_writer(&p, Some(1000));
    for (path, data) in [
        ("a/x.txt", &b"hello"[..]),
        ("a/y.jpg", b"jpeg"),
        ("a/b/z.jpg", b"deep jpeg"),
        ("a/.hidden.jpg", b"hidden"),
        ("c.txt", b""),
        ("ü/ñ.txt", b"unicode"),
    ] {
        w.add_file(path, Meta::default(), data, None).unwrap();
    }
    w.add_dir("empty", Meta::default()).unwrap();
    w.finish().unwrap();
    p
}

#[test]
fn crc_mismatch_names_path_expected_and_actual() {
    let dir = tempfile::tempdir().unwrap();
    let p = sample(dir.path());
    let a = Archive::open(&p).unwrap();
    let fi = a.file_info("a/y.jpg").unwrap();
    let shard = Layout::current(&p).shard_path(fi.shard);
    let mut bytes = fs::read(&shard).unwrap();
    bytes[fi.offset as usize] ^= 0x40;
    fs::write(&shard, bytes).unwrap();
    let err = a.read("a/y.jpg").unwrap_err();
    let Error::CrcMismatch {
        member,
        expected,
        actual,
    } = &err
    else {
        panic!("{err}")
    };
    assert_eq!(member, "a/y.jpg");
    assert_eq!(*expected, fi.crc32c.unwrap());
    assert_ne!(expected, actual);
    let msg = err.to_string();
    assert!(
        msg.contains("a/y.jpg") && msg.contains(&expected.to_string()),
        "{msg}"
    );
    // Range reads and plain maps do not check; a verified map does.
    assert_eq!(a.read_range(&fi, 1, 100).unwrap(), b"peg");
    assert_eq!(&a.map(&fi).unwrap()[1..], b"peg");
    assert!(a.map_verified(&fi).is_err());
    // Output is withheld when the file fails its check.
    let mut out = Vec::new();
    assert!(a.write_to(&fi, &mut out).is_err());
    assert!(out.is_empty());
}

#[test]
fn many_threads_read_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.barecat");
    let mut w = new_writer(&p, Some(50_000));
    for i in 0..400u64 {
        w.add_file(
            &format!("c{}/f{i}", i % 7),
            Meta::default(),
            &pseudo_random(i, 997 * (i as usize % 50)),
            None,
        )
        .unwrap();
    }
    w.finish().unwrap();
    let a = Archive::open(&p).unwrap();
    std::thread::scope(|s| {
        for t in 0..8u64 {
            let a = &a;
            s.spawn(move || {
                for i in (t..400).step_by(3) {
                    let got = a.read(&format!("c{}/f{i}", i % 7)).unwrap();
                    assert_eq!(got, pseudo_random(i, 997 * (i as usize % 50)));
                    let fi = a.file_info(&format!("c{}/f{i}", i % 7)).unwrap();
                    assert_eq!(&a.map_verified(&fi).unwrap()[..], &got[..]);
                }
            });
        }
    });
}

#[test]
fn lookups_normalize_paths() {
    let dir = tempfile::tempdir().unwrap();
    let a = Archive::open(sample(dir.path())).unwrap();
    assert_eq!(a.read("./a//x.txt").unwrap(), b"hello");
    assert_eq!(a.read("/a/x.txt").unwrap(), b"hello");
    assert!(matches!(a.read("a").unwrap_err(), Error::IsADirectory(_)));
    assert!(matches!(a.read("nope").unwrap_err(), Error::NotFound(_)));
}

// ---------------------------------------------------------------- listing

#[test]
fn listing_walk_glob_and_orders() {
    let dir = tempfile::tempdir().unwrap();
    let a = Archive::open(sample(dir.path())).unwrap();
    assert!(a.exists("a/b").unwrap());
    assert!(a.exists("empty").unwrap());
    assert!(!a.exists("a/q").unwrap());
    assert!(a.stat("a").unwrap().is_dir());
    let l = a.listdir("a").unwrap();
    let names = |v: Vec<&str>| v.into_iter().map(String::from).collect::<Vec<_>>();
    assert_eq!(
        l.dirs.iter().map(|d| d.path.clone()).collect::<Vec<_>>(),
        names(vec!["a/b"])
    );
    assert_eq!(
        l.files.iter().map(|d| d.path.clone()).collect::<Vec<_>>(),
        names(vec!["a/.hidden.jpg", "a/x.txt", "a/y.jpg"])
    );
    assert!(matches!(
        a.listdir("c.txt").unwrap_err(),
        Error::NotADirectory(_)
    ));
    // The names alone: the same listing, directories first.
    assert_eq!(
        a.with_index(|i| i.child_names("a")).unwrap(),
        names(vec!["b", ".hidden.jpg", "x.txt", "y.jpg"])
    );
    assert!(matches!(
        a.with_index(|i| i.child_names("c.txt")).unwrap_err(),
        Error::NotADirectory(_)
    ));
    assert!(matches!(
        a.with_index(|i| i.child_names("nope")).unwrap_err(),
        Error::NotFound(_)
    ));
    let walked: Vec<String> = a
        .walk("", WalkOptions::default())
        .unwrap()
        .filter_map(|w| match w.unwrap() {
            WalkEvent::Dir { info, .. } => Some(info.path),
            _ => None,
        })
        .collect();
    assert_eq!(walked, names(vec!["", "a", "a/b", "empty", "ü"]));
    // A streaming walk: each directory, its files, then its subdirectories, by name;
    // `last` marks the last child of each directory.
    let events: Vec<String> = a
        .walk("a", WalkOptions::default())
        .unwrap()
        .map(|w| match w.unwrap() {
            WalkEvent::Dir { info, depth, last } => format!("D{depth}{last} {}", info.path),
            WalkEvent::File { info, depth, last } => format!("F{depth}{last} {}", info.path),
            WalkEvent::End { depth } => format!("E{depth}"),
        })
        .collect();
    assert_eq!(
        events,
        [
            "D0true a",
            "F1false a/.hidden.jpg",
            "F1false a/x.txt",
            "F1false a/y.jpg",
            "D1true a/b",
            "F2true a/b/z.jpg",
            "E1",
            "E0"
        ]
    );
    assert!(matches!(
        a.walk("c.txt", WalkOptions::default()).err().unwrap(),
        Error::NotADirectory(_)
    ));
    let g = |pat: &str, hidden: bool| -> Vec<String> {
        a.glob(
            pat,
            GlobOptions {
                recursive: true,
                include_hidden: hidden,
            },
        )
        .unwrap()
        .map(|e| e.unwrap().path().to_string())
        .collect()
    };
    assert_eq!(g("**/*.jpg", false), names(vec!["a/b/z.jpg", "a/y.jpg"]));
    assert_eq!(
        g("**/*.jpg", true),
        names(vec!["a/.hidden.jpg", "a/b/z.jpg", "a/y.jpg"])
    );
    assert_eq!(g("a/*", false), names(vec!["a/b", "a/x.txt", "a/y.jpg"]));
    assert_eq!(g("ü/*", false), names(vec!["ü/ñ.txt"]));
    let by_path: Vec<String> = a
        .files(FileOrder::Path, "")
        .map(|f| f.unwrap().path)
        .collect();
    let mut sorted = by_path.clone();
    sorted.sort();
    assert_eq!(by_path, sorted);
    let by_addr: Vec<(u64, u64)> = a
        .files(FileOrder::Address, "")
        .map(|f| f.unwrap())
        .map(|f| (f.shard, f.offset))
        .collect();
    let mut s = by_addr.clone();
    s.sort();
    assert_eq!(by_addr, s);
    let within: Vec<String> = a
        .files(FileOrder::Path, "a/b")
        .map(|f| f.unwrap().path)
        .collect();
    assert_eq!(within, names(vec!["a/b/z.jpg"]));
}

#[test]
fn paging_goes_through_large_listings() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("p.barecat");
    let mut w = new_writer(&p, None);
    for i in 0..10_000 {
        w.add_file(&format!("d{}/f{i:05}", i % 3), Meta::default(), b"", None)
            .unwrap();
    }
    w.finish().unwrap();
    let a = Archive::open(&p).unwrap();
    for order in [FileOrder::Path, FileOrder::Address, FileOrder::Insertion] {
        assert_eq!(a.files(order, "").count(), 10_000, "{order:?}");
    }
    assert_eq!(a.files(FileOrder::Address, "d1").count(), 3333);
}

// ---------------------------------------------------------------- mutations

#[test]
fn deletes_and_renames_keep_statistics_right() {
    let dir = tempfile::tempdir().unwrap();
    let p = sample(dir.path());
    let mut w = append(&p);
    let fi = w.remove_file("a/b/z.jpg").unwrap();
    assert_eq!(fi.size, 9);
    assert!(matches!(
        w.remove_file("a/b/z.jpg").unwrap_err(),
        Error::NotFound(_)
    ));
    assert!(matches!(
        w.remove_file("a").unwrap_err(),
        Error::IsADirectory(_)
    ));
    w.remove_empty_dir("a/b").unwrap();
    assert!(matches!(
        w.remove_empty_dir("a").unwrap_err(),
        Error::DirectoryNotEmpty(_)
    ));
    w.rename("a/x.txt", "new/parent/x.txt", false).unwrap();
    w.rename("a", "moved/a2", false).unwrap();
    assert!(w.rename("moved", "moved/inside", false).is_err());
    assert!(matches!(
        w.rename("c.txt", "moved/a2/y.jpg", false).unwrap_err(),
        Error::FileExists(_)
    ));
    w.rename("c.txt", "moved/a2/y.jpg", true).unwrap();
    assert!(w.rename("ü", "new/parent/x.txt", false).is_err());
    assert_eq!(w.remove_tree("moved").unwrap().files, 2);
    assert!(w.remove_tree("").is_err());
    w.finish().unwrap();
    consistent(&p);
    let a = Archive::open(&p).unwrap();
    assert_eq!(a.read("new/parent/x.txt").unwrap(), b"hello");
    assert!(!a.exists("moved").unwrap());
    assert!(!a.exists("a").unwrap());
    let all: Vec<String> = a
        .files(FileOrder::Path, "")
        .map(|f| f.unwrap().path)
        .collect();
    assert_eq!(all, vec!["new/parent/x.txt", "ü/ñ.txt"]);
}

#[test]
fn deleting_the_last_file_shrinks_the_shard() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.barecat");
    let mut w = new_writer(&p, None);
    w.add_file("a", Meta::default(), b"first", None).unwrap();
    w.add_file("b", Meta::default(), b"second", None).unwrap();
    w.remove_file("b").unwrap();
    w.add_file("c", Meta::default(), b"3", None).unwrap();
    w.finish().unwrap();
    assert_eq!(
        fs::read(Layout::current(&p).shard_path(0)).unwrap(),
        b"first3"
    );
}

/// Across commits: removing a file in the middle gives nothing back; removing
/// the last files, in any order, cuts the shard after their commit down to the
/// end of the files left.
#[test]
fn committed_last_files_removed_shrink_the_shard_middle_ones_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.barecat");
    let mut w = new_writer(&p, None);
    for (f, d) in [("a", "11"), ("b", "222"), ("c", "3333"), ("d", "44444")] {
        w.add_file(f, Meta::default(), d.as_bytes(), None).unwrap();
    }
    w.finish().unwrap();
    let mut w = append(&p);
    w.remove_file("b").unwrap();
    w.commit().unwrap();
    assert_eq!(shard_len(&p, 0), 14);
    w.remove_file("c").unwrap();
    w.remove_file("d").unwrap();
    w.commit().unwrap();
    assert_eq!(shard_len(&p, 0), 2);
    w.add_file("e", Meta::default(), b"5", None).unwrap();
    w.finish().unwrap();
    consistent(&p);
    assert_eq!(fs::read(Layout::current(&p).shard_path(0)).unwrap(), b"115");
}

#[test]
fn resume_trims_trailing_garbage() {
    let dir = tempfile::tempdir().unwrap();
    let p = sample(dir.path());
    let shard = Layout::current(&p).shard_path(0);
    let len = fs::metadata(&shard).unwrap().len();
    fs::OpenOptions::new()
        .append(true)
        .open(&shard)
        .unwrap()
        .write_all_at_end(b"garbage");
    let mut w = append(&p);
    assert_eq!(w.trim_garbage().unwrap(), 7);
    w.finish().unwrap();
    assert_eq!(fs::metadata(&shard).unwrap().len(), len);
}

trait AppendExt {
    fn write_all_at_end(&mut self, data: &[u8]);
}
impl AppendExt for fs::File {
    fn write_all_at_end(&mut self, data: &[u8]) {
        use std::io::Write;
        self.write_all(data).unwrap();
    }
}

// ---------------------------------------------------------------- bad input

fn corrupt_with(sql: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let p = sample(dir.path());
    Connection::open(&p).unwrap().execute_batch(sql).unwrap();
    (dir, p)
}

#[test]
fn corrupt_rows_are_clear_errors() {
    let cases = [
        (
            "UPDATE files SET size = -5 WHERE path = 'a/x.txt'",
            "size is out of range",
        ),
        (
            "UPDATE files SET offset = -1 WHERE path = 'a/x.txt'",
            "offset is out of range",
        ),
        (
            "UPDATE files SET shard = 'zero' WHERE path = 'a/x.txt'",
            "files.shard holds a Text value",
        ),
        (
            "UPDATE files SET crc32c = -3 WHERE path = 'a/x.txt'",
            "crc32c is out of range",
        ),
        (
            "UPDATE files SET mode = x'00' WHERE path = 'a/x.txt'",
            "mode has type Blob",
        ),
        (
            "UPDATE files SET offset = 9223372036854775000, size = 1000 WHERE path = 'a/x.txt'",
            "overflows",
        ),
        (
            "UPDATE files SET offset = 100000 WHERE path = 'a/x.txt'",
            "extends past the end",
        ),
        (
            "UPDATE files SET size = 4000000000000 WHERE path = 'a/x.txt'",
            "extends past the end",
        ),
        (
            "UPDATE files SET shard = 7 WHERE path = 'a/x.txt'",
            "missing shard 7",
        ),
    ];
    for (sql, want) in cases {
        let (_d, p) = corrupt_with(sql);
        let r = Archive::open(&p).and_then(|a| a.read("a/x.txt"));
        let msg = r.unwrap_err().to_string();
        assert!(msg.contains(want), "{sql}: {msg}");
    }
}

#[test]
fn garbage_and_truncated_indexes_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("g.barecat");
    fs::write(&p, b"this is not a database at all, just text").unwrap();
    let msg = Archive::open(&p).err().unwrap().to_string();
    assert!(msg.contains("not a barecat archive"), "{msg}");
    let real = sample(dir.path());
    let bytes = fs::read(&real).unwrap();
    fs::write(&p, &bytes[..bytes.len() / 3]).unwrap();
    let r = Archive::open(&p).and_then(|a| {
        a.files(FileOrder::Path, "").try_for_each(|f| f.map(drop))?;
        a.read("a/x.txt")
    });
    assert!(r.is_err());
    fs::write(&p, b"").unwrap();
    let msg = Archive::open(&p).err().unwrap().to_string();
    assert!(
        msg.contains("not a barecat archive") || msg.contains("no 'files' table"),
        "{msg}"
    );
    assert!(matches!(
        Archive::open(dir.path().join("absent")).err().unwrap(),
        Error::ArchiveNotFound { .. }
    ));
}

/// A reader keeps its read transaction for a few milliseconds after a lookup (so
/// that lookups cost no locking system calls); an idle one must still let writers
/// commit, in this process and in another one, and then see what they wrote.
#[test]
fn idle_readers_let_writers_commit_and_then_see_their_files() {
    let dir = tempfile::tempdir().unwrap();
    let p = sample(dir.path());
    let a = Archive::open(&p).unwrap();
    let first = a.read("a/x.txt").unwrap();
    // This process: a writer commits while `a` sits idle after its read.
    let mut w = append(&p);
    w.add_file("late/in_process.txt", Meta::default(), b"written", None)
        .unwrap();
    w.finish().unwrap();
    assert_eq!(a.read("late/in_process.txt").unwrap(), b"written");
    assert_eq!(a.read("a/x.txt").unwrap(), first);
}

#[test]
fn idle_readers_let_python_writers_commit() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let p = sample(dir.path());
    let a = Archive::open(&p).unwrap();
    // Many lookups from several threads, then idle while Python writes.
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..200 {
                    a.read("a/x.txt").unwrap();
                }
            });
        }
    });
    let script = "import sys\nfrom barecat import Barecat\n\
                  with Barecat(sys.argv[1], readonly=False) as bc:\n    \
                  bc['late/from_python.txt'] = b'py'\n";
    let out = run(python(), ["-c".as_ref(), script.as_ref(), p.as_os_str()]);
    assert!(
        out.status.success(),
        "python could not write: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(a.read("late/from_python.txt").unwrap(), b"py");
}

#[test]
fn reads_into_caller_buffers_check_what_they_should() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("b.barecat");
    let mut w = new_writer(&p, None);
    w.add_file("a", Meta::default(), b"hello world", None)
        .unwrap();
    w.finish().unwrap();
    let a = Archive::open(&p).unwrap();
    let fi = a.file_info("a").unwrap();
    let mut whole = vec![0u8; 11];
    a.read_file_into(&fi, &mut whole).unwrap();
    assert_eq!(whole, b"hello world");
    // A buffer of another size than the file is an error, not a short read.
    assert!(a.read_file_into(&fi, &mut [0u8; 5]).is_err());
    let mut part = [0u8; 8];
    assert_eq!(a.read_range_into(&fi, 6, &mut part).unwrap(), 5);
    assert_eq!(&part[..5], b"world");
    assert_eq!(a.read_range_into(&fi, 50, &mut part).unwrap(), 0);
    // Corrupt a byte: the whole-file read fails its CRC check, the range read does not check.
    let shard = format!("{}-shard-00000", p.display());
    let mut bytes = std::fs::read(&shard).unwrap();
    bytes[0] = b'j';
    std::fs::write(&shard, bytes).unwrap();
    let a = Archive::open(&p).unwrap();
    assert!(matches!(
        a.read_file_into(&fi, &mut whole),
        Err(barecat::Error::CrcMismatch { .. })
    ));
    assert_eq!(a.read_range_into(&fi, 0, &mut part).unwrap(), 8);
    assert_eq!(&part, b"jello wo");
}

#[test]
fn a_writer_reads_back_its_open_batch() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("rw.barecat");
    let mut w = new_writer(&p, None);
    // Never commits by itself: everything stays in one open batch.
    w.set_commit_policy(std::time::Duration::MAX, u64::MAX);
    let fi = w
        .add_file("x/y", Meta::default(), b"uncommitted", None)
        .unwrap();
    assert_eq!(w.read_file(&fi).unwrap(), b"uncommitted");
    assert_eq!(w.read_at(&fi, 2, 3).unwrap(), b"com");
    assert_eq!(w.read_at(&fi, 100, 3).unwrap(), b"");
    // Nothing is committed yet: a reader sees an empty archive.
    assert_eq!(Archive::open(&p).unwrap().count_files().unwrap(), 0);
    w.finish().unwrap();
    assert_eq!(
        Archive::open(&p).unwrap().read("x/y").unwrap(),
        b"uncommitted"
    );
}

/// Replacing a file keeps its row id (the mount's inode number) and counts; a
/// rewrite of unknown length that crosses the shard limit moves to a shard of its
/// own; an aborted one leaves nothing; empty files added meanwhile stay valid.
#[test]
fn rewrites_keep_the_row_id_and_respect_the_shard_limit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.barecat");
    let mut w = new_writer(&path, Some(1000));
    w.add_file("d/a", Meta::default(), &[1u8; 600], None)
        .unwrap();
    w.add_file("d/b", Meta::default(), &[2u8; 10], None)
        .unwrap();
    w.commit().unwrap();
    let id = |w: &ArchiveWriter, p: &str| w.index().file_with_id(p).unwrap().unwrap().0;
    let (ida, idb) = (id(&w, "d/a"), id(&w, "d/b"));

    // Same length class, known size: replaced in place of the row.
    let fi = w
        .replace_file_from_reader(idb, Meta::default(), 20, &mut &[3u8; 20][..])
        .unwrap();
    assert_eq!((fi.path.as_str(), fi.size), ("d/b", 20));
    assert_eq!(id(&w, "d/b"), idb);

    // Open-ended, crossing the limit from the middle of shard 0: moved to shard 1.
    let mut pf = w.begin_rewrite(ida).unwrap();
    w.add_file("d/empty", Meta::default(), b"", None).unwrap();
    for _ in 0..5 {
        w.write_chunk(&mut pf, &[4u8; 200]).unwrap();
    }
    let mut back = [0u8; 3];
    w.read_pending(&pf, 998, &mut back[..2]).unwrap();
    assert!(w.read_pending(&pf, 999, &mut back).is_err());
    let fi = w.finish_file(pf).unwrap();
    assert_eq!((fi.shard, fi.offset, fi.size), (1, 0, 1000));
    assert_eq!(id(&w, "d/a"), ida);

    // Aborted: its bytes are cut off, the empty file added meanwhile stays valid.
    let mut pf = w.begin_rewrite(idb).unwrap();
    w.write_chunk(&mut pf, &[5u8; 300]).unwrap();
    w.add_file("d/empty2", Meta::default(), b"", None).unwrap();
    w.abort_file(pf).unwrap();
    w.finish().unwrap();

    let a = Archive::open(&path).unwrap();
    assert_eq!(a.read("d/a").unwrap(), vec![4u8; 1000]);
    assert_eq!(a.read("d/b").unwrap(), vec![3u8; 20]);
    assert_eq!(a.root().unwrap().num_files_tree, 4);
    assert_eq!(a.root().unwrap().size_tree, 1020);
    assert_eq!(shard_len(&path, 1), 1000);
    drop(a);
    consistent(&path);
    let out = run(bin("barecat-verify"), [path.as_os_str()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// A range read with a row taken before a defragmentation moved the file and cut
/// its shard follows the file to its new place (the old extent is past the end).
#[test]
fn a_range_read_with_a_stale_row_follows_the_file_a_defrag_moved() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.barecat");
    let mut w = new_writer(&p, None);
    w.add_file("big", Meta::default(), &vec![7u8; 1 << 20], None)
        .unwrap();
    let small = pseudo_random(3, 5000);
    w.add_file("small", Meta::default(), &small, None).unwrap();
    w.finish().unwrap();
    let a = Archive::open(&p).unwrap();
    let stale = a.file_info("small").unwrap();
    let mut w = append(&p);
    w.remove_file("big").unwrap();
    w.finish().unwrap();
    let opts = barecat::maint::defrag::DefragOptions::new(barecat::maint::defrag::DefragMode::Full);
    let r = barecat::maint::defrag::defrag(&p, &opts, &barecat::core::progress::Progress::hidden())
        .unwrap();
    assert_eq!(r.moved_files, 1);
    assert!(shard_len(&p, 0) < stale.offset);
    assert_eq!(a.read_range(&stale, 1000, 2000).unwrap(), small[1000..3000]);
    assert_eq!(a.read_file(&stale).unwrap(), small);
}

/// `Index::glob_paths` (behind the Python `glob`s): one stream in path order.
#[test]
fn glob_paths_come_in_path_order_across_ranges_and_tables() {
    let dir = tempfile::tempdir().unwrap();
    let mut w =
        ArchiveWriter::open(dir.path().join("a.barecat"), WriterOptions::default()).unwrap();
    for f in ["a-b/y", "a/c/d", "a/x", "a/c-/e", "b/z", "zz"] {
        w.add_file(f, Meta::default(), b"1", None).unwrap();
    }
    w.commit().unwrap();
    let glob = |pattern: &str| {
        let opts = GlobOptions {
            recursive: true,
            include_hidden: false,
        };
        let g = barecat::core::glob::Glob::new(pattern, opts).unwrap();
        let found = w.index().glob_paths(&g, false).unwrap();
        found
            .iter()
            .map(|(p, d)| format!("{p}{}", if d { "/" } else { "" }))
            .collect::<Vec<_>>()
    };
    // Ranges of several parents (`a-b/...` sorts before `a/...`); paths sort
    // bytewise (`a/c` < `a/c-` < `a/c-/e` < `a/c/d`), marked `/` here.
    assert_eq!(glob("[ab]*/*"), ["a-b/y", "a/c/", "a/c-/", "a/x", "b/z"]);
    // Directories among the files of one range.
    assert_eq!(
        glob("**"),
        ["a/", "a-b/", "a-b/y", "a/c/", "a/c-/", "a/c-/e", "a/c/d", "a/x", "b/", "b/z", "zz"]
    );
    assert_eq!(glob("a/**/?"), ["a/c/", "a/c-/e", "a/c/d", "a/x"]);
}

/// Globs over more paths than the first probe of a range (4096): SQLite's
/// prefilter taken for a selective pattern and left out for one that matches
/// most paths, each giving exactly the matching paths, none twice.
#[test]
fn globs_over_long_ranges_give_every_match_once() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.barecat");
    let mut w = new_writer(&p, None);
    let mut all = Vec::new();
    for i in 0..10_000 {
        let f = format!("d/{:05}.{}", i, if i % 97 == 0 { "jpg" } else { "txt" });
        w.add_file(&f, Meta::default(), b"", None).unwrap();
        all.push(f);
    }
    w.finish().unwrap();
    let a = Archive::open(&p).unwrap();
    let opts = GlobOptions {
        recursive: true,
        include_hidden: false,
    };
    for (pattern, ext) in [
        ("**/*.jpg", ".jpg"),
        ("**/*.txt", ".txt"),
        ("d/*0.txt", "0.txt"),
    ] {
        let g = barecat::core::glob::Glob::new(pattern, opts).unwrap();
        let found = a.with_index(|i| i.glob_paths(&g, true)).unwrap();
        let got: Vec<&str> = found.iter().map(|(p, _)| p).collect();
        let want: Vec<&str> = all
            .iter()
            .map(String::as_str)
            .filter(|f| f.ends_with(ext))
            .collect();
        assert_eq!(got, want, "{pattern}");
    }
}

/// A writer appending to an archive loads its directories once it has asked the
/// index about as often as loading costs: a file where a directory is stays
/// refused, and new files under existing or new directories land with the right
/// statistics.
#[test]
fn appending_writers_know_the_existing_directories() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.barecat");
    let mut w = new_writer(&p, None);
    w.add_file("x/y/f", Meta::default(), b"1", None).unwrap();
    w.add_dir("e", Meta::default()).unwrap();
    w.finish().unwrap();
    let mut w = append(&p);
    w.add_file("x/g", Meta::default(), b"22", None).unwrap();
    // Enough misses to load the directories.
    for i in 0..100 {
        w.add_file(&format!("x/m{i}"), Meta::default(), b"", None)
            .unwrap();
    }
    assert!(matches!(
        w.add_file("x/y", Meta::default(), b"", None),
        Err(Error::IsADirectory(_))
    ));
    assert!(matches!(
        w.add_file("e", Meta::default(), b"", None),
        Err(Error::IsADirectory(_))
    ));
    w.add_file("e/n/h", Meta::default(), b"333", None).unwrap();
    w.finish().unwrap();
    let a = Archive::open(&p).unwrap();
    let root = a.root().unwrap();
    assert_eq!((root.num_files_tree, root.size_tree), (103, 6));
    let Entry::Dir(x) = a.stat("x").unwrap() else {
        panic!("x is not a directory");
    };
    assert_eq!((x.num_files, x.num_files_tree), (101, 102));
    assert!(a.stat("e/n").unwrap().is_dir());
}

/// `patch_meta` changes the fields given and keeps the others, on a file or else
/// a directory; a missing path is `NotFound`.
#[test]
fn patch_meta_changes_only_the_fields_given() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.barecat");
    let mut w = new_writer(&p, None);
    let full = Meta {
        mode: Some(0o100644),
        uid: Some(7),
        gid: Some(8),
        mtime_ns: Some(9),
    };
    w.add_file("d/f", full, b"x", None).unwrap();
    w.set_meta("d", full).unwrap();
    let mode_only = Meta {
        mode: Some(0o100600),
        ..Meta::default()
    };
    w.patch_meta("d/f", mode_only).unwrap();
    w.patch_meta(
        "d",
        Meta {
            mtime_ns: Some(10),
            ..Meta::default()
        },
    )
    .unwrap();
    assert!(matches!(
        w.patch_meta("nope", mode_only).unwrap_err(),
        Error::NotFound(_)
    ));
    w.finish().unwrap();
    let a = Archive::open(&p).unwrap();
    assert_eq!(
        *a.stat("d/f").unwrap().meta(),
        Meta {
            mode: Some(0o100600),
            ..full
        }
    );
    assert_eq!(
        *a.stat("d").unwrap().meta(),
        Meta {
            mtime_ns: Some(10),
            ..full
        }
    );
}

/// File renames keep the writer's directory cache (only what they add): the
/// directories a rename creates are known to later adds, as are the existing
/// ones once loaded; a directory rename makes the cache ask the index again.
#[test]
fn renames_keep_the_directory_cache_right() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.barecat");
    let mut w = new_writer(&p, None);
    for i in 0..100 {
        w.add_file(&format!("a/f{i}"), Meta::default(), b"1", None)
            .unwrap();
    }
    w.finish().unwrap();
    let mut w = append(&p);
    for i in 0..80 {
        w.rename(&format!("a/f{i}"), &format!("a/g{i}"), false)
            .unwrap();
    }
    w.rename("a/g0", "n/m/x", false).unwrap();
    assert!(matches!(
        w.add_file("n/m", Meta::default(), b"", None),
        Err(Error::IsADirectory(_))
    ));
    w.rename("n", "o", false).unwrap();
    w.add_file("n/m", Meta::default(), b"2", None).unwrap();
    assert!(matches!(
        w.add_file("o/m", Meta::default(), b"", None),
        Err(Error::IsADirectory(_))
    ));
    w.finish().unwrap();
    consistent(&p);
    let a = Archive::open(&p).unwrap();
    assert_eq!(a.read("o/m/x").unwrap(), b"1");
    assert_eq!(a.read("n/m").unwrap(), b"2");
}
