//! `barecat-records` end to end: every subcommand on real files, bad input (one-line
//! errors, exit 1 or 2), a second writer, record tables over archives going stale
//! (also when Python barecat changes the archive), and defrag/merge handling the
//! table.

use std::path::Path;
use std::process::Output;

use crate::support::*;
use barecat::records::Records;

fn rec_bin() -> std::path::PathBuf {
    bin("barecat-records")
}

fn records<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    run(rec_bin(), args)
}

fn ok<I, S>(args: I) -> Vec<u8>
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let out = records(args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn fails(out: &Output, code: i32, needle: &str) {
    assert_eq!(out.status.code(), Some(code), "{out:?}");
    if code == 1 {
        assert_clean_error(out);
    }
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(needle), "{err} lacks {needle}");
}

/// A tree of 12 files; returns their contents in path order.
fn tree(root: &Path) -> Vec<Vec<u8>> {
    let mut files: Vec<(String, Vec<u8>)> = (0..12)
        .map(|i| {
            (
                format!("t/d{}/f{:02}", i % 3, 12 - i),
                pseudo_random(i, 50 + i as usize * 31),
            )
        })
        .collect();
    files.push(("t/empty".into(), Vec::new()));
    let refs: Vec<(&str, &[u8])> = files.iter().map(|(p, d)| (p.as_str(), &d[..])).collect();
    write_tree(root, &refs);
    files.sort();
    files.into_iter().map(|f| f.1).collect()
}

#[test]
fn create_get_gather_info_verify_from_a_tree() {
    need!("zstd", "compress");
    let t = tempfile::tempdir().unwrap();
    let want = tree(t.path());
    let ds = t.path().join("ds");
    let out = ok([
        "create".as_ref(),
        ds.as_os_str(),
        "-C".as_ref(),
        t.path().as_os_str(),
        "t".as_ref(),
        "--compress".as_ref(),
        "zstd".as_ref(),
    ]);
    assert!(String::from_utf8_lossy(&out).contains("13 records"));
    for (i, w) in want.iter().enumerate() {
        assert_eq!(
            ok(["get".as_ref(), ds.as_os_str(), i.to_string().as_ref()]),
            *w
        );
    }
    // Request order, duplicates, framing.
    let g = ok([
        "gather".as_ref(),
        ds.as_os_str(),
        "5".as_ref(),
        "0".as_ref(),
        "5".as_ref(),
        "--framing".as_ref(),
        "len".as_ref(),
    ]);
    let mut expect = Vec::new();
    for i in [5, 0, 5] {
        expect.extend_from_slice(&(want[i].len() as u64).to_le_bytes());
        expect.extend_from_slice(&want[i]);
    }
    assert_eq!(g, expect);
    // The framed stream appends as records to another dataset.
    let framed = t.path().join("g.bin");
    std::fs::write(&framed, &g).unwrap();
    let ds2 = t.path().join("ds2");
    ok([
        "create".as_ref(),
        ds2.as_os_str(),
        "--framed".as_ref(),
        framed.as_os_str(),
    ]);
    assert_eq!(ok(["get".as_ref(), ds2.as_os_str(), "2".as_ref()]), want[5]);
    // One file per requested position, named by position.
    let idx = t.path().join("idx.txt");
    std::fs::write(&idx, "12 0\n3\n0 1 2 3 4 5 6 7 8 9\n").unwrap();
    let od = t.path().join("out");
    ok([
        "gather".as_ref(),
        ds.as_os_str(),
        "--indices".as_ref(),
        idx.as_os_str(),
        "-o".as_ref(),
        od.as_os_str(),
    ]);
    let mut names: Vec<String> = std::fs::read_dir(&od)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names.len(), 13);
    assert_eq!(names[0], "00");
    assert_eq!(std::fs::read(od.join("00")).unwrap(), want[12]);
    assert_eq!(std::fs::read(od.join("02")).unwrap(), want[3]);
    // CRC lines.
    let c = String::from_utf8(ok([
        "gather".as_ref(),
        ds.as_os_str(),
        "1".as_ref(),
        "--crc".as_ref(),
    ]))
    .unwrap();
    assert_eq!(
        c.trim(),
        format!(
            "0 1 {} {:08x}",
            want[1].len(),
            barecat::core::crc::crc32c(&want[1])
        )
    );
    let info: serde_json::Value =
        serde_json::from_slice(&ok(["info".as_ref(), ds.as_os_str(), "--json".as_ref()])).unwrap();
    assert_eq!(info["length"], 13);
    assert_eq!(info["compress"], "zstd");
    assert_eq!(info["kind"], "dataset");
    let v: serde_json::Value =
        serde_json::from_slice(&ok(["verify".as_ref(), ds.as_os_str(), "--json".as_ref()]))
            .unwrap();
    assert_eq!(v["ok"], true);
    assert_eq!(v["checked_records"], 13);
    // Also as `barecat records`.
    let out = run(
        bin("barecat"),
        ["records".as_ref(), "info".as_ref(), ds.as_os_str()],
    );
    assert!(out.status.success());
}

#[test]
fn append_modify_delete_rebalance_to_archive() {
    let t = tempfile::tempdir().unwrap();
    let mut want = tree(t.path());
    let ds = t.path().join("ds");
    ok([
        "create".as_ref(),
        ds.as_os_str(),
        t.path().join("t").as_os_str(),
        "-q".as_ref(),
    ]);
    let f = t.path().join("new");
    std::fs::write(&f, b"new record").unwrap();
    ok([
        "append".as_ref(),
        ds.as_os_str(),
        f.as_os_str(),
        f.as_os_str(),
    ]);
    want.push(b"new record".to_vec());
    want.push(b"new record".to_vec());
    let m = t.path().join("m");
    std::fs::write(&m, b"modified").unwrap();
    ok([
        "modify".as_ref(),
        ds.as_os_str(),
        "3".as_ref(),
        m.as_os_str(),
        "0".as_ref(),
        m.as_os_str(),
    ]);
    want[3] = b"modified".to_vec();
    want[0] = b"modified".to_vec();
    // Delete names records as they are before the command.
    ok([
        "delete".as_ref(),
        ds.as_os_str(),
        "2".as_ref(),
        "5".as_ref(),
        "14".as_ref(),
    ]);
    for i in [14usize, 5, 2] {
        want.swap_remove(i);
    }
    let r = Records::open(&ds).unwrap();
    let got: Vec<Vec<u8>> = (0..r.len()).map(|i| r.get(i).unwrap().to_vec()).collect();
    assert_eq!(got, want);
    drop(r);
    let rep: serde_json::Value = serde_json::from_slice(&ok([
        "rebalance".as_ref(),
        ds.as_os_str(),
        "--json".as_ref(),
    ]))
    .unwrap();
    assert!(rep["before"]["ratio"].as_f64().unwrap() < 1.0);
    assert_eq!(rep["after"]["ratio"].as_f64().unwrap(), 1.0);
    let r = Records::open(&ds).unwrap();
    let got: Vec<Vec<u8>> = (0..r.len()).map(|i| r.get(i).unwrap().to_vec()).collect();
    assert_eq!(got, want);
    let a = t.path().join("ds.barecat");
    ok([
        "to-archive".as_ref(),
        ds.as_os_str(),
        a.as_os_str(),
        "--prefix".as_ref(),
        "x/".as_ref(),
    ]);
    let arch = barecat::Archive::open(&a).unwrap();
    assert_eq!(arch.read("x/03").unwrap(), want[3]);
    assert_eq!(arch.count_files().unwrap(), want.len() as u64);
}

#[test]
fn bad_input_is_one_line_and_the_right_exit_status() {
    let t = tempfile::tempdir().unwrap();
    tree(t.path());
    let ds = t.path().join("ds");
    ok([
        "create".as_ref(),
        ds.as_os_str(),
        t.path().join("t").as_os_str(),
    ]);
    let dso = ds.as_os_str();
    fails(
        &records(["get".as_ref(), dso, "13".as_ref()]),
        1,
        "record 13 out of range",
    );
    fails(
        &records(["get".as_ref(), dso, "x".as_ref()]),
        2,
        "invalid value",
    );
    fails(
        &records(["delete".as_ref(), dso, "99".as_ref()]),
        1,
        "out of range",
    );
    fails(&records(["modify".as_ref(), dso, "1".as_ref()]), 2, "pairs");
    // A framed input that ends inside its second record: the first is appended,
    // nothing of the second.
    let framed = t.path().join("cut.bin");
    let mut fb = Vec::new();
    fb.extend_from_slice(&5u64.to_le_bytes());
    fb.extend_from_slice(b"hello");
    fb.extend_from_slice(&100u64.to_le_bytes());
    fb.extend_from_slice(b"only part");
    std::fs::write(&framed, &fb).unwrap();
    let ds3 = t.path().join("ds3");
    fails(
        &records([
            "create".as_ref(),
            ds3.as_os_str(),
            "--framed".as_ref(),
            framed.as_os_str(),
        ]),
        1,
        "cut.bin: record 1 is cut short",
    );
    fails(
        &records(["get".as_ref(), ds3.as_os_str(), "1".as_ref()]),
        1,
        "out of range",
    );
    let idx = t.path().join("idx");
    std::fs::write(&idx, "1 2 three\n").unwrap();
    fails(
        &records([
            "gather".as_ref(),
            dso,
            "--indices".as_ref(),
            idx.as_os_str(),
        ]),
        1,
        "idx: line 1: \"three\" is not a record index",
    );
    fails(
        &records(["create".as_ref(), dso]),
        1,
        "a dataset exists here",
    );
    fails(
        &records([
            "get".as_ref(),
            t.path().join("nothing").as_os_str(),
            "0".as_ref(),
        ]),
        1,
        "nothing",
    );
    // A second writer.
    let w = barecat::records::RecordWriter::open(&ds, 1).unwrap();
    let f = t.path().join("t/d0/f12");
    fails(
        &records(["append".as_ref(), dso, f.as_os_str()]),
        1,
        "being written by another process",
    );
    drop(w);
    // Damaged files, each named.
    let meta = std::fs::read(ds.join("meta.json")).unwrap();
    std::fs::write(ds.join("meta.json"), &meta[..meta.len() / 2]).unwrap();
    fails(
        &records(["get".as_ref(), dso, "0".as_ref()]),
        1,
        "meta.json: not a valid meta.json",
    );
    fails(
        &records(["append".as_ref(), dso, f.as_os_str()]),
        1,
        "meta.json",
    );
    std::fs::write(ds.join("meta.json"), &meta).unwrap();
    std::fs::rename(ds.join("chunk/0.zr"), ds.join("chunk/x")).unwrap();
    fails(
        &records(["get".as_ref(), dso, "0".as_ref()]),
        1,
        "chunk 0 is missing",
    );
    let v = records(["verify".as_ref(), dso]);
    assert_eq!(v.status.code(), Some(1));
    std::fs::create_dir(ds.join("chunk/0.zr")).unwrap();
    fails(
        &records(["get".as_ref(), dso, "0".as_ref()]),
        1,
        "is a directory",
    );
    std::fs::remove_dir(ds.join("chunk/0.zr")).unwrap();
    std::fs::rename(ds.join("chunk/x"), ds.join("chunk/0.zr")).unwrap();
    let off = std::fs::read(ds.join("offset")).unwrap();
    std::fs::write(ds.join("offset"), &off[..20]).unwrap();
    fails(
        &records(["get".as_ref(), dso, "0".as_ref()]),
        1,
        "offset: too short",
    );
    std::fs::write(ds.join("offset"), &off).unwrap();
    ok(["verify".as_ref(), dso]);
}

fn archive_from_tree(t: &Path) -> (std::path::PathBuf, Vec<Vec<u8>>) {
    let want = tree(t);
    let a = t.join("a.barecat");
    run_ok(
        bin("barecat-create"),
        [
            a.as_os_str(),
            "-C".as_ref(),
            t.as_os_str(),
            "t".as_ref(),
            "-q".as_ref(),
        ],
    );
    (a, want)
}

#[test]
fn a_table_over_an_archive_reads_without_copying_and_is_refused_when_stale() {
    let t = tempfile::tempdir().unwrap();
    let (a, want) = archive_from_tree(t.path());
    let rep: serde_json::Value =
        serde_json::from_slice(&ok(["build".as_ref(), a.as_os_str(), "--json".as_ref()])).unwrap();
    assert_eq!(rep["records"], 13);
    assert!(t.path().join("a.barecat-records").is_file());
    for (i, w) in want.iter().enumerate() {
        assert_eq!(
            ok(["get".as_ref(), a.as_os_str(), i.to_string().as_ref()]),
            *w
        );
    }
    ok(["verify".as_ref(), a.as_os_str()]);
    // Added through our writer: stale.
    let f = t.path().join("t/d0/f12");
    run_ok(
        bin("barecat-create"),
        [
            "--resume".as_ref(),
            a.as_os_str(),
            f.as_os_str(),
            "-q".as_ref(),
        ],
    );
    let out = records(["get".as_ref(), a.as_os_str(), "0".as_ref()]);
    fails(&out, 1, "record table is out of date");
    fails(&out, 1, "barecat-records build");
    assert_eq!(
        records(["verify".as_ref(), a.as_os_str()]).status.code(),
        Some(1)
    );
    ok([
        "build".as_ref(),
        a.as_os_str(),
        "--order".as_ref(),
        "address".as_ref(),
    ]);
    ok(["get".as_ref(), a.as_os_str(), "0".as_ref()]);
    ok(["build".as_ref(), a.as_os_str(), "--remove".as_ref()]);
    fails(
        &records(["get".as_ref(), a.as_os_str(), "0".as_ref()]),
        1,
        "no record table",
    );
}

#[test]
fn python_barecat_changing_the_archive_makes_the_table_stale() {
    need!("barecat");
    let t = tempfile::tempdir().unwrap();
    let (a, want) = archive_from_tree(t.path());
    ok(["build".as_ref(), a.as_os_str()]);
    // Python reading the archive changes nothing: the cheap check holds, no warning.
    run_ok(
        python(),
        [
            "-c",
            "import sys; from barecat import Barecat\n\
             with Barecat(sys.argv[1]) as bc: print(len(bc[sorted(bc.index.iter_all_filepaths())[0]]))",
            a.to_str().unwrap(),
        ],
    );
    let out = records(["get".as_ref(), a.as_os_str(), "1".as_ref()]);
    assert!(out.status.success() && out.stderr.is_empty(), "{out:?}");
    assert_eq!(out.stdout, want[1]);
    // Python adding a file (it knows nothing of the table): refused.
    run_ok(
        python(),
        [
            "-c",
            "import sys; from barecat import Barecat\n\
             with Barecat(sys.argv[1], readonly=False) as bc: bc['t/d1/aaa'] = b'from python'",
            a.to_str().unwrap(),
        ],
    );
    fails(
        &records(["get".as_ref(), a.as_os_str(), "1".as_ref()]),
        1,
        "record table is out of date",
    );
    ok(["build".as_ref(), a.as_os_str()]);
    // Four files of t/d0 come first in path order.
    assert_eq!(
        ok(["get".as_ref(), a.as_os_str(), "4".as_ref()]),
        b"from python"
    );
    // Python deleting a file: refused again.
    run_ok(
        python(),
        [
            "-c",
            "import sys; from barecat import Barecat\n\
             with Barecat(sys.argv[1], readonly=False) as bc: del bc['t/d1/aaa']",
            a.to_str().unwrap(),
        ],
    );
    fails(
        &records(["info".as_ref(), a.as_os_str()]),
        1,
        "record table is out of date",
    );
}

#[test]
fn defrag_rebuilds_the_table_merge_replaces_it_with_its_output() {
    let t = tempfile::tempdir().unwrap();
    let (a, _) = archive_from_tree(t.path());
    let mut w = barecat::ArchiveWriter::open(
        &a,
        barecat::WriterOptions::with_mode(barecat::CreateMode::Append),
    )
    .unwrap();
    w.remove_file("t/d0/f12").unwrap();
    w.finish().unwrap();
    ok([
        "build".as_ref(),
        a.as_os_str(),
        "--order".as_ref(),
        "address".as_ref(),
    ]);
    let out = run_ok(bin("barecat-defrag"), [a.as_os_str()]);
    assert!(out.contains("record table rebuilt"), "{out}");
    let r = Records::open(&a).unwrap();
    let arch = barecat::Archive::open(&a).unwrap();
    let files: Vec<_> = arch
        .files(barecat::FileOrder::Address, "")
        .map(|f| f.unwrap())
        .collect();
    assert_eq!(r.len(), files.len() as u64);
    for (i, f) in files.iter().enumerate() {
        assert_eq!(
            &*r.get_checked(i as u64).unwrap(),
            &arch.read_file(f).unwrap()[..]
        );
    }
    drop(r);
    // A table in the order of a list cannot be rebuilt: removed, and said so.
    let list = t.path().join("list");
    std::fs::write(&list, "t/d1/f11\nt/empty\n").unwrap();
    ok([
        "build".as_ref(),
        a.as_os_str(),
        "-T".as_ref(),
        list.as_os_str(),
    ]);
    let info = String::from_utf8(ok(["info".as_ref(), a.as_os_str()])).unwrap();
    assert!(info.contains("order:       list"), "{info}");
    let mut w = barecat::ArchiveWriter::open(
        &a,
        barecat::WriterOptions::with_mode(barecat::CreateMode::Append),
    )
    .unwrap();
    w.remove_file("t/d0/f09").unwrap();
    w.finish().unwrap();
    let out = run_ok(bin("barecat-defrag"), [a.as_os_str()]);
    assert!(out.contains("record table removed"), "{out}");
    assert!(!t.path().join("a.barecat-records").exists());
    // Replacing an archive replaces its companion files: the old table goes.
    ok(["build".as_ref(), a.as_os_str()]);
    let b = t.path().join("b.barecat");
    run_ok(
        bin("barecat-create"),
        [
            b.as_os_str(),
            "-C".as_ref(),
            t.path().as_os_str(),
            "t/d2".as_ref(),
            "-q".as_ref(),
        ],
    );
    run_ok(
        bin("barecat-merge"),
        [
            "-f".as_ref(),
            "-o".as_ref(),
            a.as_os_str(),
            b.as_os_str(),
            "-q".as_ref(),
        ],
    );
    assert!(!t.path().join("a.barecat-records").exists());
    // Merging into an existing output with a table: rebuilt.
    ok(["build".as_ref(), b.as_os_str()]);
    let c = t.path().join("c.barecat");
    run_ok(
        bin("barecat-create"),
        [
            c.as_os_str(),
            "-C".as_ref(),
            t.path().as_os_str(),
            "t/d1".as_ref(),
            "-q".as_ref(),
        ],
    );
    let out = run_ok(
        bin("barecat-merge"),
        ["-a".as_ref(), "-o".as_ref(), b.as_os_str(), c.as_os_str()],
    );
    assert!(out.contains("record table rebuilt"), "{out}");
    assert_eq!(
        Records::open(&b).unwrap().len(),
        barecat::Archive::open(&b).unwrap().count_files().unwrap()
    );
}

/// The Python reader of docs/FORMAT.md §10.4 reads what we write: a dataset
/// (uncompressed and flate, with a redo list left by a killed writer) and a table.
#[test]
fn the_documented_python_reader_reads_datasets_and_tables() {
    need!("barecat");
    let t = tempfile::tempdir().unwrap();
    let (a, want) = archive_from_tree(t.path());
    ok(["build".as_ref(), a.as_os_str()]);
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/FORMAT.md")).unwrap();
    let reader = doc
        .split("```python\n")
        .nth(1)
        .unwrap()
        .split("```")
        .next()
        .unwrap();
    let script = format!(
        "{reader}\nimport sys, zlib\nkind, path = sys.argv[1], sys.argv[2]\n\
         n, get = open_dataset(path) if kind == 'ds' else open_table(path)\n\
         for i in range(n): print(zlib.crc32(get(i)))\n"
    );
    let sums = |data: &[Vec<u8>]| -> String {
        data.iter()
            .map(|d| format!("{}\n", crc32fast::hash(d)))
            .collect()
    };
    let got = run_ok(python(), ["-c", &script, "table", a.to_str().unwrap()]);
    assert_eq!(got, sums(&want));
    for c in ["none", "flate"] {
        let ds = t.path().join(format!("ds-{c}"));
        ok([
            "create".as_ref(),
            ds.as_os_str(),
            t.path().join("t").as_os_str(),
            "--compress".as_ref(),
            c.as_ref(),
        ]);
        let got = run_ok(python(), ["-c", &script, "ds", ds.to_str().unwrap()]);
        assert_eq!(got, sums(&want), "{c}");
    }
}

#[test]
fn gathers_of_many_blocks_read_ahead_and_keep_request_order() {
    // More than one block of 65,536 requests: the helper thread that reads dense
    // blocks ahead runs; sorted (dense) and shuffled (scattered) requests, with
    // duplicates, come out in request order, on stdout and with --digest.
    let t = tempfile::tempdir().unwrap();
    let want = tree(t.path());
    let ds = t.path().join("ds");
    ok([
        "create".as_ref(),
        ds.as_os_str(),
        "-C".as_ref(),
        t.path().as_os_str(),
        "t".as_ref(),
    ]);
    let n = want.len() as u64;
    let sorted: Vec<u64> = (0..150_000u64).map(|k| k * n / 150_000).collect();
    let shuffled: Vec<u64> = (0..150_000u64).map(|k| (k * 7919 + 3) % n).collect();
    for idx in [sorted, shuffled] {
        let f = t.path().join("idx.txt");
        let text: Vec<String> = idx.iter().map(|i| i.to_string()).collect();
        std::fs::write(&f, text.join("\n")).unwrap();
        let g = ok([
            "gather".as_ref(),
            ds.as_os_str(),
            "--indices".as_ref(),
            f.as_os_str(),
        ]);
        let mut expect = Vec::new();
        for &i in &idx {
            expect.extend_from_slice(&want[i as usize]);
        }
        assert!(g == expect, "gathered bytes differ from the requests");
        let d = String::from_utf8(ok([
            "gather".as_ref(),
            ds.as_os_str(),
            "--indices".as_ref(),
            f.as_os_str(),
            "--digest".as_ref(),
        ]))
        .unwrap();
        let crc = format!("{:08x}", barecat::core::crc::crc32c(&expect));
        assert_eq!(d.trim(), format!("{} {} {crc}", idx.len(), expect.len()));
    }
}
