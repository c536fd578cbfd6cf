//! The B-tree sidecar `ARCHIVE-btreemeta` (SFBTM v3): byte-identical to an
//! independent reference producer (tests/py/btreemeta_ref.py: APSW's `dbstat` and
//! the `zstandard` package), each side parsing the other's; written by every writer
//! and replaced or removed with the archive; Python barecat working with it and
//! its changes making it stale; bad sidecars absent for readers and precisely
//! reported by `barecat-sidecar --check`; WAL indexes refused silently; an
//! unexpected failure one warning line, never a failed command.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::support::*;
use barecat::core::sidecar::{self, PageMap, Rejection, RejectionKind};
use barecat::Layout;
use serde_json::Value;

fn sidecar_of(archive: &Path) -> PathBuf {
    Layout::resolve(archive).sidecar()
}

/// An archive of `n` small files in nested directories, written by barecat-create.
fn sample(dir: &Path, name: &str, n: usize) -> PathBuf {
    let src = dir.join(format!("src-{name}"));
    for i in 0..n {
        let p = src.join(format!(
            "data/part_{:02}/class_{:03}/item_{i:07}.txt",
            i % 7,
            i % 53
        ));
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, format!("{i}\n").repeat(i % 5)).unwrap();
    }
    let arch = dir.join(name);
    run_ok(
        bin("barecat-create"),
        [
            "-q".as_ref(),
            "-C".as_ref(),
            src.as_os_str(),
            arch.as_os_str(),
            "data".as_ref(),
        ],
    );
    arch
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `barecat-sidecar --check --json`: exit status and the report.
fn check(archive: &Path) -> (i32, Value) {
    let o = run(
        bin("barecat-sidecar"),
        ["--check".as_ref(), "--json".as_ref(), archive.as_os_str()],
    );
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("no report ({e}): {}", stderr(&o)));
    (o.status.code().unwrap(), v)
}

fn assert_valid(archive: &Path, what: &str) {
    let (code, v) = check(archive);
    assert_eq!(
        (code, v["status"].as_str()),
        (0, Some("valid")),
        "{what}: {v:#}"
    );
}

fn assert_missing(archive: &Path, what: &str) {
    assert!(!sidecar_of(archive).exists(), "{what}: a sidecar was left");
}

/// The index's page 1 (its first page, as a reader gets it when SQLite opens it).
fn index_page1(archive: &Path) -> Vec<u8> {
    let index = fs::read(Layout::resolve(archive).index()).unwrap();
    index[..4096.min(index.len())].to_vec()
}

/// What a reader does: the sidecar's bytes, the index's size and page 1.
fn reader_load(archive: &Path) -> Result<PageMap, Rejection> {
    let layout = Layout::resolve(archive);
    let bytes = fs::read(layout.sidecar()).unwrap();
    let len = fs::metadata(layout.index()).unwrap().len();
    sidecar::load(&bytes, len, &index_page1(archive))
}

/// Python's reference producer at `level`, written to `out`.
fn reference(archive: &Path, out: &Path, level: u32) {
    py(
        "btreemeta_ref.py",
        [
            "build".as_ref(),
            Layout::resolve(archive).index().as_os_str(),
            out.as_os_str(),
            level.to_string().as_ref(),
        ],
    );
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
fn ours_is_byte_identical_to_the_reference_producer_and_each_parses_the_other() {
    need!("apsw", "zstandard");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let arch = sample(d, "a.barecat", 4000);
    let ours = fs::read(sidecar_of(&arch)).unwrap();
    let map = reader_load(&arch).unwrap();
    assert!(map.len() > 3, "too small to have interior pages: {map:?}");
    let refp = d.join("ref.btreemeta");
    // As barecat-create wrote it (writers use level 1), and rebuilt at the
    // reference producer's level and others.
    reference(&arch, &refp, sidecar::WRITER_LEVEL as u32);
    assert!(fs::read(&refp).unwrap() == ours, "the writer's differs");
    for level in [3u32, 9, 19] {
        run_ok(
            bin("barecat-sidecar"),
            [
                "-q".as_ref(),
                "--level".as_ref(),
                level.to_string().as_ref(),
                arch.as_os_str(),
            ],
        );
        reference(&arch, &refp, level);
        assert!(
            fs::read(&refp).unwrap() == fs::read(sidecar_of(&arch)).unwrap(),
            "level {level} differs"
        );
    }
    // Python parses ours: the same pages.
    let parsed: Value = serde_json::from_str(&py(
        "btreemeta_ref.py",
        ["parse".as_ref(), sidecar_of(&arch).as_os_str()],
    ))
    .unwrap();
    assert_eq!(parsed["page_size"], 4096);
    let theirs: Vec<(u64, String)> = parsed["pages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p[0].as_u64().unwrap(), p[1].as_str().unwrap().to_string()))
        .collect();
    let mine: Vec<(u64, String)> = map.pages().map(|(n, p)| (n as u64, hex(p))).collect();
    let numbers = |v: &[(u64, String)]| v.iter().map(|x| x.0).collect::<Vec<_>>();
    assert_eq!(numbers(&theirs), numbers(&mine));
    assert!(theirs == mine, "the page contents differ");
    // Each page equals the index's page at (pageno - 1) * 4096.
    let index = fs::read(&arch).unwrap();
    for (n, p) in map.pages() {
        let at = (n as usize - 1) * 4096;
        assert!(index[at..at + 4096] == *p, "page {n}");
    }
    // We parse theirs (a level we never write by default).
    reference(&arch, &sidecar_of(&arch), 19);
    assert_valid(&arch, "the reference producer's sidecar");
    let again = reader_load(&arch).unwrap();
    assert_eq!(
        again.pages().collect::<Vec<_>>(),
        map.pages().collect::<Vec<_>>()
    );
}

#[test]
fn python_barecat_reads_appends_and_verifies_then_the_sidecar_is_stale() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let arch = sample(dir.path(), "p.barecat", 500);
    assert_valid(&arch, "after create");
    let out = run_ok(
        python(),
        [
            "-c".as_ref(),
            "import sys, barecat\n\
             with barecat.Barecat(sys.argv[1]) as bc:\n    \
                 print(bc['data/part_03/class_003/item_0000003.txt'].decode(), end='')\n\
             with barecat.Barecat(sys.argv[1], readonly=False) as bc:\n    \
                 bc['python/added.txt'] = b'from python'\n"
                .as_ref(),
            arch.as_os_str(),
        ],
    );
    assert_eq!(out, "3\n3\n3\n");
    py_verify(&arch);
    // Python changed the index without knowing about the sidecar.
    let r = reader_load(&arch).unwrap_err();
    assert_eq!(r.kind(), RejectionKind::Stale, "{r}");
    let (code, v) = check(&arch);
    assert_eq!((code, v["status"].as_str()), (1, Some("stale")), "{v:#}");
    assert_eq!(v["reason"], "stale_change_counter", "{v:#}");
    // Not a problem of the archive: a warning.
    let o = run(bin("barecat-verify"), [arch.as_os_str()]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let warnings = stdout(&o)
        .lines()
        .filter(|l| l.contains("btreemeta"))
        .count();
    assert_eq!(warnings, 1, "{}", stdout(&o));
    assert!(stdout(&o).contains("warning:") && stdout(&o).contains("stale"));
    // Rebuilt, it is fresh again, and Python still reads and verifies.
    run_ok(bin("barecat-sidecar"), ["-q".as_ref(), arch.as_os_str()]);
    assert_valid(&arch, "after barecat-sidecar");
    py_verify(&arch);
    assert!(reader_load(&arch).is_ok());
}

/// `prog argv` writes `out` with a valid sidecar and says nothing; `prog again`
/// with `--no-sidecar` leaves none, even where there was one.
fn with_and_without_sidecar(
    prog: &str,
    argv: &[std::ffi::OsString],
    again: &[std::ffi::OsString],
    out: &Path,
) {
    let o = run(bin(prog), argv);
    assert!(o.status.success(), "{prog}: {}", stderr(&o));
    assert_eq!(stderr(&o), "", "{prog}");
    assert_valid(out, prog);
    let mut no = again.to_vec();
    no.insert(0, "--no-sidecar".into());
    let o = run(bin(prog), &no);
    assert!(o.status.success(), "{prog} --no-sidecar: {}", stderr(&o));
    assert_missing(out, &format!("{prog} --no-sidecar"));
}

#[test]
fn every_writer_leaves_a_valid_sidecar_and_no_sidecar_leaves_none() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let a = sample(d, "a.barecat", 300);
    let b = sample(d, "b.barecat", 200);
    let args = |v: &[&dyn AsRef<std::ffi::OsStr>]| -> Vec<std::ffi::OsString> {
        v.iter().map(|x| x.as_ref().to_owned()).collect()
    };
    let tar = d.join("a.tar");
    let zip = d.join("a.zip");
    run_ok(bin("barecat-to-tar"), args(&[&a, &tar]));
    run_ok(bin("barecat-to-zip"), args(&[&a, &zip]));
    let out = d.join("out.barecat");
    let runs: Vec<(&str, Vec<std::ffi::OsString>)> = vec![
        (
            "barecat-create",
            args(&[&"-q", &"-f", &"-C", &d.join("src-a.barecat"), &out, &"data"]),
        ),
        ("barecat-from-tar", args(&[&"-q", &"-f", &tar, &out])),
        ("barecat-from-zip", args(&[&"-q", &"-f", &zip, &out])),
        (
            "barecat-merge",
            args(&[&"-q", &"-f", &"--ignore-duplicates", &"-o", &out, &a, &b]),
        ),
        (
            "barecat-merge",
            args(&[
                &"-q",
                &"-f",
                &"--ignore-duplicates",
                &"--symlink",
                &"-o",
                &out,
                &a,
                &b,
            ]),
        ),
        (
            "barecat-merge-symlink",
            args(&[&"-q", &"-f", &"--ignore-duplicates", &"-o", &out, &a, &b]),
        ),
    ];
    for (prog, argv) in &runs {
        Layout::remove(&out).unwrap();
        // A leftover of another archive beside the output's name.
        fs::write(sidecar_of(&out), b"SFBTM\0\0\0\x03\0\0\0old").unwrap();
        with_and_without_sidecar(prog, argv, argv, &out);
    }
    // The writers that change an archive in place: -a, defrag, repair.
    let base = d.join("base.barecat");
    run_ok(bin("barecat-merge"), args(&[&"-q", &"-o", &base, &a]));
    let mut w = barecat::ArchiveWriter::open(
        &base,
        barecat::WriterOptions {
            sidecar: false,
            ..barecat::WriterOptions::with_mode(barecat::CreateMode::Append)
        },
    )
    .unwrap();
    w.remove_file("data/part_01/class_001/item_0000001.txt")
        .unwrap();
    w.finish().unwrap();
    assert_missing(&base, "library writer without sidecar");
    write_tree(d, &[("extra1/e.txt", b"1"), ("extra2/e.txt", b"2")]);
    let in_place: Vec<(&str, Vec<std::ffi::OsString>, Vec<std::ffi::OsString>)> = vec![
        (
            "barecat-create",
            args(&[&"-q", &"-a", &"-C", &d, &base, &"extra1"]),
            args(&[&"-q", &"-a", &"-C", &d, &base, &"extra2"]),
        ),
        (
            "barecat-defrag",
            args(&[&"-q", &"--quick", &base]),
            args(&[&"-q", &"--quick", &base]),
        ),
        (
            "barecat-defrag",
            args(&[&"-q", &base]),
            args(&[&"-q", &base]),
        ),
        (
            "barecat-repair",
            args(&[&"-q", &base]),
            args(&[&"-q", &base]),
        ),
        (
            "barecat-merge",
            args(&[&"-q", &"-a", &"-o", &base, &b]),
            args(&[&"-q", &"-a", &"-o", &base, &b]),
        ),
    ];
    for (prog, argv, again) in &in_place {
        with_and_without_sidecar(prog, argv, again, &base);
        run_ok(bin("barecat-sidecar"), args(&[&"-q", &base]));
    }
    // `barecat sidecar` is the same command; --remove; removing the archive
    // removes it.
    run_ok(
        bin("barecat"),
        args(&[&"sidecar", &"-q", &"--check", &base]),
    );
    let o = run_ok(bin("barecat-sidecar"), args(&[&"--remove", &base]));
    assert!(o.contains("removed"), "{o}");
    assert_missing(&base, "--remove");
    let o = run_ok(bin("barecat-sidecar"), args(&[&"--remove", &base]));
    assert!(o.contains("no sidecar"), "{o}");
    let (code, v) = check(&base);
    assert_eq!((code, v["status"].as_str()), (1, Some("missing")));
    run_ok(bin("barecat-sidecar"), args(&[&"-q", &base]));
    Layout::remove(&base).unwrap();
    assert_missing(&base, "Layout::remove");
    assert_eq!(
        fs::read_dir(d)
            .unwrap()
            .filter(|e| e
                .as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .contains("btreemeta.tmp"))
            .count(),
        0
    );
}

#[test]
fn legacy_named_archives_get_a_sidecar_beside_the_base_name() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let arch = sample(d, "old", 100);
    fs::remove_file(sidecar_of(&arch)).unwrap();
    fs::rename(&arch, d.join("old-sqlite-index")).unwrap();
    assert!(Layout::resolve(&arch).is_legacy());
    run_ok(bin("barecat-sidecar"), ["-q".as_ref(), arch.as_os_str()]);
    assert!(d.join("old-btreemeta").is_file());
    assert_valid(&arch, "legacy");
    Layout::remove(&arch).unwrap();
    assert!(!d.join("old-btreemeta").exists());
}

/// A valid sidecar's decompressed body, to damage.
fn body_of(bytes: &[u8]) -> Vec<u8> {
    zstd::stream::decode_all(&bytes[12..]).unwrap()
}

fn wrap(body: &[u8]) -> Vec<u8> {
    let mut out = b"SFBTM\0\0\0\x03\0\0\0".to_vec();
    out.extend_from_slice(&zstd::bulk::compress(body, 3).unwrap());
    out
}

#[test]
fn bad_sidecars_are_absent_for_readers_and_precise_for_check() {
    need!("zstd");
    let dir = tempfile::tempdir().unwrap();
    let arch = sample(dir.path(), "x.barecat", 3000);
    let good = fs::read(sidecar_of(&arch)).unwrap();
    let map = reader_load(&arch).unwrap();
    let n = map.len();
    let body = body_of(&good);
    let set_u32 =
        |b: &mut Vec<u8>, at: usize, v: u32| b[at..at + 4].copy_from_slice(&v.to_le_bytes());
    let mut cases: Vec<(&str, Vec<u8>, &str, &str)> = Vec::new();
    cases.push(("truncated", good[..7].to_vec(), "corrupt", "truncated"));
    cases.push((
        "cut frame",
        good[..good.len() / 2].to_vec(),
        "corrupt",
        "zstd_error",
    ));
    cases.push(("garbage", pseudo_random(7, 3000), "absent", "other_magic"));
    let mut g = good[..12].to_vec();
    g.extend_from_slice(&pseudo_random(8, 3000));
    cases.push(("garbage frame", g, "corrupt", "zstd_error"));
    let mut m = good.clone();
    m[..8].copy_from_slice(b"SQPC\0\0\0\0");
    cases.push(("another format", m, "absent", "other_magic"));
    for (v, status, code) in [
        (4u32, "absent", "newer_version"),
        (2, "corrupt", "old_version"),
    ] {
        let mut b = good.clone();
        b[8..12].copy_from_slice(&v.to_le_bytes());
        cases.push(("version", b, status, code));
    }
    // A zstd bomb: 16 MiB of zeros in a few KB, for an index of a few hundred KB.
    let mut bomb = good[..12].to_vec();
    bomb.extend_from_slice(&zstd::bulk::compress(&vec![0u8; 16 << 20], 3).unwrap());
    assert!(bomb.len() < 100_000);
    cases.push(("zstd bomb", bomb, "corrupt", "too_large"));
    let mut t = good.clone();
    t.extend_from_slice(b"tail");
    cases.push(("trailing bytes", t, "corrupt", "trailing_data"));
    // Page table damage (entries from byte 8, 8 bytes each: pageno, offset).
    let mut b = body.clone();
    let (p2, p3) = (
        u32::from_le_bytes(b[16..20].try_into().unwrap()),
        u32::from_le_bytes(b[24..28].try_into().unwrap()),
    );
    set_u32(&mut b, 16, p3);
    set_u32(&mut b, 24, p2);
    cases.push(("unsorted", wrap(&b), "corrupt", "not_ascending"));
    let mut b = body.clone();
    set_u32(&mut b, 24, p2);
    cases.push(("duplicate", wrap(&b), "corrupt", "not_ascending"));
    let mut b = body.clone();
    set_u32(&mut b, 8 + 8 * (n - 1) + 4, body.len() as u32 - 100);
    cases.push((
        "offset out of bounds",
        wrap(&b),
        "corrupt",
        "offset_out_of_bounds",
    ));
    let mut b = body.clone();
    set_u32(&mut b, 8 + 8 * (n - 1), 1 << 30);
    cases.push((
        "page past the end",
        wrap(&b),
        "corrupt",
        "page_out_of_range",
    ));
    let mut b = body.clone();
    set_u32(&mut b, 0, 1000);
    cases.push(("bad page size", wrap(&b), "corrupt", "bad_page_size"));
    // A well-formed sidecar of 1024-byte pages for a 4096-byte-page index.
    let mut p1 = map.get(1).unwrap()[..1024].to_vec();
    p1[16..18].copy_from_slice(&1024u16.to_be_bytes());
    cases.push((
        "page size of another index",
        sidecar::encode(1024, &[(1, &p1)], 3).unwrap(),
        "corrupt",
        "page_size_mismatch",
    ));
    // Fresh page 1, but another page differs (only a full check sees it).
    let pages: Vec<(u32, Vec<u8>)> = map
        .pages()
        .map(|(k, p)| {
            let mut p = p.to_vec();
            if k == map.page_numbers().last().unwrap() {
                p[4000] ^= 0xff;
            }
            (k, p)
        })
        .collect();
    let refs: Vec<(u32, &[u8])> = pages.iter().map(|(k, p)| (*k, p.as_slice())).collect();
    cases.push((
        "a page differs",
        sidecar::encode(4096, &refs, 3).unwrap(),
        "stale",
        "page_differs",
    ));
    let without1: Vec<(u32, &[u8])> = refs[1..].to_vec();
    cases.push((
        "no page 1",
        sidecar::encode(4096, &without1, 3).unwrap(),
        "corrupt",
        "no_page_1",
    ));
    cases.push(("empty file", Vec::new(), "corrupt", "truncated"));

    let index_len = fs::metadata(&arch).unwrap().len();
    let page1 = index_page1(&arch);
    for (what, bytes, status, code) in &cases {
        fs::write(sidecar_of(&arch), bytes).unwrap();
        // A reader: absent (every rejection is "no sidecar"), with the same reason.
        let r = sidecar::load(bytes, index_len, &page1);
        if *code == "page_differs" {
            assert!(r.is_ok(), "{what}: freshness alone cannot see it");
        } else {
            assert_eq!(r.unwrap_err().code(), *code, "{what}");
        }
        let (c, v) = check(&arch);
        assert_eq!(c, 1, "{what}: {v:#}");
        assert_eq!(v["status"], *status, "{what}: {v:#}");
        assert_eq!(v["reason"], *code, "{what}: {v:#}");
        // In text: one line naming the sidecar and the reason.
        let o = run(
            bin("barecat-sidecar"),
            ["--check".as_ref(), arch.as_os_str()],
        );
        assert_eq!(o.status.code(), Some(1));
        let text = stdout(&o);
        assert_eq!(text.lines().count(), 1, "{what}: {text}");
        assert!(
            text.starts_with(&format!("{}: ", sidecar_of(&arch).display())),
            "{text}"
        );
        assert_eq!(stderr(&o), "", "{what}");
        // verify: a warning, not a problem.
        let o = run(bin("barecat-verify"), ["--json".as_ref(), arch.as_os_str()]);
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(o.status.code(), Some(0), "{what}: {v:#}");
        let kinds: Vec<&str> = v["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["kind"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["sidecar"], "{what}");
    }
    // The stale one of a changed index: page 1 says so.
    fs::write(sidecar_of(&arch), &good).unwrap();
    assert_valid(&arch, "restored");
    let conn = rusqlite::Connection::open(&arch).unwrap();
    conn.execute(
        "INSERT INTO config (key, value_text) VALUES ('another_tool', 'was here')",
        [],
    )
    .unwrap();
    drop(conn);
    let (c, v) = check(&arch);
    assert_eq!(
        (c, v["reason"].as_str()),
        (1, Some("stale_change_counter")),
        "{v:#}"
    );
    assert_eq!(reader_load(&arch).unwrap_err().kind(), RejectionKind::Stale);
}

#[test]
fn a_wal_index_gets_no_sidecar_and_no_warning() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let arch = sample(d, "w.barecat", 50);
    let conn = rusqlite::Connection::open(&arch).unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    drop(conn);
    // The old sidecar is stale now (the header records WAL).
    assert_eq!(check(&arch).1["status"], "stale");
    fs::write(d.join("more.txt"), b"more").unwrap();
    let o = run(
        bin("barecat-create"),
        [
            "-a".as_ref(),
            "-q".as_ref(),
            "-C".as_ref(),
            d.as_os_str(),
            arch.as_os_str(),
            "more.txt".as_ref(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "", "an expected refusal is silent");
    assert_missing(&arch, "WAL index");
    let o = run(bin("barecat-sidecar"), [arch.as_os_str()]);
    assert_eq!(o.status.code(), Some(1));
    assert_clean_error(&o);
    assert!(
        stderr(&o).contains("unsupported_journal_mode"),
        "{}",
        stderr(&o)
    );
    // With BARECAT_LOG=debug the skipped sidecar is one debug line.
    let o = std::process::Command::new(bin("barecat-repair"))
        .args(["-q".as_ref(), arch.as_os_str()])
        .env("BARECAT_LOG", "debug")
        .output_bounded()
        .unwrap();
    assert!(o.status.success());
    assert!(
        stderr(&o).contains("unsupported_journal_mode"),
        "{}",
        stderr(&o)
    );
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
}

#[test]
fn an_unexpected_failure_is_one_warning_and_the_archive_is_complete() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let src = d.join("src");
    write_tree(&src, &[("a/x.txt", b"x"), ("a/y.txt", b"yy")]);
    let arch = d.join("f.barecat");
    // A directory where the sidecar goes: not ours, left alone.
    fs::create_dir(sidecar_of(&arch)).unwrap();
    let o = run(
        bin("barecat-create"),
        [
            "-q".as_ref(),
            "-C".as_ref(),
            src.as_os_str(),
            arch.as_os_str(),
            "a".as_ref(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("barecat-create: warning: ") && err.contains("btreemeta"),
        "{err}"
    );
    assert!(sidecar_of(&arch).is_dir());
    let v: Value = serde_json::from_slice(
        &run(bin("barecat-verify"), ["--json".as_ref(), arch.as_os_str()]).stdout,
    )
    .unwrap();
    assert_eq!(v["ok"], true, "{v:#}");
    assert_eq!(v["files"], 2);
    assert_eq!(check(&arch).1["status"], "missing");
    // -f and Layout::remove leave the directory too.
    let o = run(
        bin("barecat-create"),
        [
            "-q".as_ref(),
            "-f".as_ref(),
            "--no-sidecar".as_ref(),
            "-C".as_ref(),
            src.as_os_str(),
            arch.as_os_str(),
            "a".as_ref(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    Layout::remove(&arch).unwrap();
    assert!(sidecar_of(&arch).is_dir());
}

/// Checking a sidecar reads the index through SQLite's own file handle: the read
/// lock another connection of the same process holds survives it. (Closing a
/// descriptor of our own on the index would drop every POSIX lock of the process on
/// it, and another process could then change the index under that connection.)
#[test]
fn checking_keeps_the_locks_of_other_connections_of_the_process() {
    let dir = tempfile::tempdir().unwrap();
    let arch = sample(dir.path(), "l.barecat", 50);
    let reader =
        rusqlite::Connection::open_with_flags(&arch, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    reader.execute_batch("BEGIN").unwrap();
    reader
        .query_row("SELECT count(*) FROM files", [], |_| Ok(()))
        .unwrap();
    assert!(sidecar::check(&arch).unwrap().is_valid());
    let write = "import sqlite3, sys\n\
                 c = sqlite3.connect(sys.argv[1], timeout=0.3)\n\
                 c.execute(\"INSERT INTO config (key, value_text) VALUES ('x', 'y')\")\n\
                 c.commit()\n";
    let o = run("python3", ["-c".as_ref(), write.as_ref(), arch.as_os_str()]);
    assert!(
        !o.status.success() && stderr(&o).contains("locked"),
        "another process wrote under a read lock: {}",
        stderr(&o)
    );
    reader.execute_batch("COMMIT").unwrap();
    let o = run("python3", ["-c".as_ref(), write.as_ref(), arch.as_os_str()]);
    assert!(o.status.success(), "{}", stderr(&o));
}
