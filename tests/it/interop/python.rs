//! Interoperability with the real Python barecat 0.3.1 (from PyPI), both directions.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use crate::support::*;
use barecat::{Archive, ArchiveWriter, CreateMode, FileOrder, Meta, WriterOptions};
use serde_json::Value;

type Contents = BTreeMap<String, Vec<u8>>;

/// Every file of `archive` as our library reads it (CRC-checked).
fn our_contents(archive: &Path) -> Contents {
    let a = Archive::open(archive).unwrap();
    a.files(FileOrder::Path, "")
        .map(|f| {
            let f = f.unwrap();
            let data = a.read_file(&f).unwrap();
            (f.path, data)
        })
        .collect()
}

fn py_contents(dump: &Value) -> Contents {
    dump["files"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(p, v)| {
            let h = v["hex"].as_str().unwrap();
            let bytes = (0..h.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
                .collect();
            (p.clone(), bytes)
        })
        .collect()
}

/// Our directory statistics must be exactly what our recomputation gives.
fn assert_our_stats_consistent(archive: &Path) {
    let a = Archive::open(archive).unwrap();
    let bad = a.with_index(|i| i.stats_mismatches()).unwrap();
    assert!(bad.is_empty(), "statistics mismatches: {bad:?}");
}

/// Python's stored counters, as dumped, equal ours read from the same index.
fn assert_stats_agree(archive: &Path, dump: &Value) {
    let a = Archive::open(archive).unwrap();
    let ours: BTreeMap<String, Vec<i64>> = a
        .dirs("")
        .unwrap()
        .into_iter()
        .map(|d| {
            (
                d.path,
                vec![d.num_subdirs, d.num_files, d.num_files_tree, d.size_tree],
            )
        })
        .collect();
    let theirs: BTreeMap<String, Vec<i64>> = serde_json::from_value(dump["dirs"].clone()).unwrap();
    assert_eq!(ours, theirs);
}

/// An archive written by our library: nested and empty directories, empty files,
/// unicode and awkward names, several shards with a file bigger than the limit,
/// then deletions and renames. Returns the expected contents.
fn build_ours(path: &Path) -> Contents {
    let opts = WriterOptions {
        mode: CreateMode::New,
        shard_size_limit: Some(4096),
        ..Default::default()
    };
    let mut w = ArchiveWriter::open(path, opts).unwrap();
    let mut expected = Contents::new();
    let mut add = |w: &mut ArchiveWriter, p: &str, data: Vec<u8>| {
        let meta = Meta {
            mode: Some(0o100644),
            uid: Some(1000),
            gid: Some(1000),
            mtime_ns: Some(1_700_000_000_123_456_789),
        };
        w.add_file(p, meta, &data, None).unwrap();
        expected.insert(p.to_string(), data);
    };
    add(&mut w, "top.txt", b"top level\n".to_vec());
    add(&mut w, "nested/a/b/c/deep.bin", pseudo_random(1, 1000));
    add(&mut w, "nested/a/sibling.txt", b"sibling".to_vec());
    add(&mut w, "empty_files/zero1", Vec::new());
    add(&mut w, "empty_files/zero2", Vec::new());
    add(
        &mut w,
        "ünïcödé/日本語.txt",
        "こんにちは".as_bytes().to_vec(),
    );
    add(&mut w, "ünïcödé/emoji 😀 name", b"smile".to_vec());
    add(
        &mut w,
        "odd/with space & 'quote' %20 #?[x].txt",
        b"odd".to_vec(),
    );
    for i in 0..40 {
        add(
            &mut w,
            &format!("multi/f{i:03}.dat"),
            pseudo_random(100 + i, 100 + 97 * i as usize),
        );
    }
    add(&mut w, "big/oversize.bin", pseudo_random(7, 10_000));
    add(&mut w, "multi/after_big.dat", pseudo_random(8, 500));
    w.add_dir(
        "empty_dir/inner_empty",
        Meta {
            mode: Some(0o40750),
            uid: Some(1),
            gid: Some(2),
            mtime_ns: Some(1_600_000_000_000_000_000),
        },
    )
    .unwrap();
    add(&mut w, "doomed/a.txt", b"a".to_vec());
    add(&mut w, "doomed/sub/b.txt", b"b".to_vec());
    add(&mut w, "to_rename/x.txt", b"x".to_vec());
    w.commit().unwrap();
    // Mutations after the fact.
    for p in ["multi/f003.dat", "multi/f017.dat", "multi/after_big.dat"] {
        w.remove_file(p).unwrap();
        expected.remove(p);
    }
    w.remove_tree("doomed").unwrap();
    expected.remove("doomed/a.txt");
    expected.remove("doomed/sub/b.txt");
    w.rename("top.txt", "moved/into/new/parent.txt", false)
        .unwrap();
    let d = expected.remove("top.txt").unwrap();
    expected.insert("moved/into/new/parent.txt".into(), d);
    w.rename("to_rename", "renamed_dir/inside", false).unwrap();
    let d = expected.remove("to_rename/x.txt").unwrap();
    expected.insert("renamed_dir/inside/x.txt".into(), d);
    w.finish().unwrap();
    expected
}

#[test]
fn our_archive_is_read_verified_and_extended_by_python() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let arch = dir.path().join("ours.barecat");
    let expected = build_ours(&arch);
    assert!(
        Layout::current(&arch).shard_files().unwrap().len() > 3,
        "several shards"
    );
    assert_our_stats_consistent(&arch);

    // Python verifies it and reads every file identically, with the same statistics.
    let out = py_verify(&arch);
    assert!(
        out.contains(&format!("Verified {} files", expected.len())),
        "{out}"
    );
    let dump = py_dump(&arch);
    assert_eq!(py_contents(&dump), expected);
    assert_eq!(dump["integrity_ok"], Value::Bool(true));
    assert_eq!(dump["num_files"], expected.len());
    assert_eq!(dump["shard_size_limit"], 4096);
    assert_stats_agree(&arch, &dump);
    let meta = &dump["files"]["nested/a/sibling.txt"];
    assert_eq!(meta["mode"], 0o100644);
    assert_eq!(meta["mtime_ns"], 1_700_000_000_123_456_789i64);
    // Empty directories are visible to Python's walk.
    let walk = dump["walk"].to_string();
    assert!(walk.contains("empty_dir/inner_empty"), "{walk}");

    // Python adds, deletes and renames with its triggers; its verify still passes
    // and we read its result identically, with consistent statistics.
    py("modify.py", [&arch]);
    py_verify(&arch);
    let dump = py_dump(&arch);
    assert_eq!(our_contents(&arch), py_contents(&dump));
    assert_our_stats_consistent(&arch);
    assert_stats_agree(&arch, &dump);
    assert!(py_contents(&dump).contains_key("py_added/renamed_deeper/more.bin"));
}

use barecat::Layout;

/// A tree on disk and the contents it holds.
fn make_tree(root: &Path) -> Contents {
    let mut c = Contents::new();
    let mut put = |p: &str, data: Vec<u8>| {
        let full = root.join(p);
        fs::create_dir_all(full.parent().unwrap()).unwrap();
        fs::write(&full, &data).unwrap();
        c.insert(format!("src/{p}"), data);
    };
    for i in 0..30u64 {
        put(
            &format!("cls{}/img{i:02}.jpg", i % 3),
            pseudo_random(i, 50 + 211 * i as usize),
        );
    }
    put("empty.txt", Vec::new());
    put("ünï/file", b"unicode dir".to_vec());
    fs::create_dir_all(root.join("empty_dir")).unwrap();
    c
}

#[test]
fn python_archives_are_read_identically() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    let mut expected = make_tree(&src);

    // Several shards, then deletions (gaps) and additions through Python.
    let arch = dir.path().join("py.barecat");
    run_ok_in(
        dir.path(),
        py_barecat(),
        ["create", "-s", "8K", "py.barecat", "src"],
    );
    assert!(Layout::current(&arch).shard_files().unwrap().len() > 3);
    py(
        "pyfs.py",
        [
            "delete",
            arch.to_str().unwrap(),
            "src/cls0/img03.jpg",
            "src/cls1/img10.jpg",
        ],
    );
    expected.remove("src/cls0/img03.jpg");
    expected.remove("src/cls1/img10.jpg");
    py(
        "pyfs.py",
        ["put", arch.to_str().unwrap(), "later/added.bin", "00ff10"],
    );
    expected.insert("later/added.bin".into(), vec![0, 0xff, 0x10]);

    assert_eq!(our_contents(&arch), expected);
    assert_our_stats_consistent(&arch);
    let dump = py_dump(&arch);
    assert_stats_agree(&arch, &dump);
    // Our listing sees what Python's walk sees.
    let a = Archive::open(&arch).unwrap();
    for step in dump["walk"].as_array().unwrap() {
        let d = step[0].as_str().unwrap();
        let l = a.listdir(d).unwrap();
        let subdirs: Vec<&str> = l
            .dirs
            .iter()
            .map(|x| barecat::core::path::basename(&x.path))
            .collect();
        let files: Vec<&str> = l
            .files
            .iter()
            .map(|x| barecat::core::path::basename(&x.path))
            .collect();
        assert_eq!(serde_json::json!(subdirs), step[1], "dirs of {d:?}");
        assert_eq!(serde_json::json!(files), step[2], "files of {d:?}");
    }
    // Filesystem metadata that Python stored comes through.
    let fi = a.file_info("src/ünï/file").unwrap();
    assert_eq!(fi.meta.mode.unwrap() & 0o170000, 0o100000);
}

#[test]
fn legacy_naming_from_python_opens() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    let expected = make_tree(&src);
    let arch = dir.path().join("old");
    run_ok_in(
        dir.path(),
        py_barecat(),
        ["create", "-s", "8K", "old", "src"],
    );
    fs::rename(&arch, dir.path().join("old-sqlite-index")).unwrap();
    assert_eq!(our_contents(&arch), expected);
    assert!(Layout::resolve(&arch).is_legacy());
    // Python still opens it the same way.
    py_verify(&arch);
}

#[test]
fn python_extends_our_archive_and_we_read_it() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let arch = dir.path().join("mixed.barecat");
    let mut w = ArchiveWriter::open(&arch, WriterOptions::default()).unwrap();
    w.add_file("ours/a.txt", Meta::default(), b"ours", None)
        .unwrap();
    w.finish().unwrap();
    let src = dir.path().join("src");
    let mut expected = make_tree(&src);
    run_ok_in(dir.path(), py_barecat(), ["add", "mixed.barecat", "src"]);
    expected.insert("ours/a.txt".into(), b"ours".to_vec());
    assert_eq!(our_contents(&arch), expected);
    assert_our_stats_consistent(&arch);
    // And we can keep writing after Python.
    let mut w = ArchiveWriter::open(&arch, WriterOptions::with_mode(CreateMode::Append)).unwrap();
    w.add_file("ours/b.txt", Meta::default(), b"again", None)
        .unwrap();
    w.finish().unwrap();
    py_verify(&arch);
}

#[test]
fn python_archive_with_dotdot_path_still_reads() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let arch = dir.path().join("evil.barecat");
    py(
        "pyfs.py",
        ["put", arch.to_str().unwrap(), "../escape.txt", "6f7574"],
    );
    let a = Archive::open(&arch).unwrap();
    let fi = a.file_info("../escape.txt").unwrap();
    assert_eq!(a.read_file(&fi).unwrap(), b"out");
    assert!(!barecat::core::path::is_safe_stored(&fi.path));
}

#[test]
fn schema_matches_python_exactly() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let ours = dir.path().join("ours.barecat");
    ArchiveWriter::open(&ours, WriterOptions::default())
        .unwrap()
        .finish()
        .unwrap();
    let theirs = dir.path().join("theirs.barecat");
    py("pyfs.py", ["put", theirs.to_str().unwrap(), "x", "00"]);
    let schema = |p: &Path, kind: &str| -> BTreeMap<String, Option<String>> {
        let c = rusqlite::Connection::open(p).unwrap();
        let mut s = c
            .prepare(
                "SELECT name, sql FROM sqlite_schema WHERE type = ?1 AND name NOT LIKE 'sqlite_%'",
            )
            .unwrap();
        s.query_map([kind], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    // Tables and indexes: identical DDL text.
    assert_eq!(schema(&ours, "table"), schema(&theirs, "table"));
    assert_eq!(schema(&ours, "index"), schema(&theirs, "index"));
    // Triggers: the same ten names.
    let names = |m: BTreeMap<String, Option<String>>| m.into_keys().collect::<Vec<_>>();
    assert_eq!(
        names(schema(&ours, "trigger")),
        names(schema(&theirs, "trigger"))
    );
    assert_eq!(schema(&ours, "trigger").len(), 10);
    // Config rows.
    let config = |p: &Path| -> Vec<(String, Option<i64>)> {
        let c = rusqlite::Connection::open(p).unwrap();
        let mut s = c
            .prepare("SELECT key, value_int FROM config ORDER BY key")
            .unwrap();
        s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    assert_eq!(config(&ours), config(&theirs));
    // An empty archive still has shard 0, as Python expects.
    assert!(dir.path().join("ours.barecat-shard-00000").exists());
    py_verify(&ours);
}

#[test]
fn our_crc_is_unsigned_and_python_agrees() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let arch = dir.path().join("crc.barecat");
    let mut w = ArchiveWriter::open(&arch, WriterOptions::default()).unwrap();
    // Find contents whose CRC has the top bit set.
    let data = (0..1000u64)
        .map(|s| pseudo_random(s, 64))
        .find(|d| barecat::core::crc::crc32c(d) >= 1 << 31)
        .unwrap();
    let fi = w
        .add_file("high.bin", Meta::default(), &data, None)
        .unwrap();
    w.finish().unwrap();
    let stored: i64 = rusqlite::Connection::open(&arch)
        .unwrap()
        .query_row("SELECT crc32c FROM files", [], |r| r.get(0))
        .unwrap();
    assert!(stored >= 1 << 31);
    assert_eq!(stored, fi.crc32c.unwrap() as i64);
    let dump = py_dump(&arch);
    assert_eq!(dump["files"]["high.bin"]["crc32c"], stored);
    py_verify(&arch);
}
