//! `barecat convert` and `--wrap` (from-tar, from-zip, convert): the direction rules
//! and messages of Python barecat's converter, archives compared with the ones
//! Python barecat 0.3.1's CLI makes from the same inputs, and archives wrapped
//! around a tar or zip: indexed in place with CRC32C, read by Python barecat, and
//! never written through by any writer.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::support::ingest::*;
use crate::support::*;
use barecat::{Archive, ArchiveWriter, CreateMode, FileOrder, Layout, Meta, WriterOptions};

fn barecat() -> PathBuf {
    bin("barecat")
}

/// Per file: (size, crc32c, permission bits, uid, gid, mtime_ns, content).
type Described = BTreeMap<
    String,
    (
        u64,
        Option<u32>,
        Option<u32>,
        Option<u32>,
        Option<u32>,
        Option<i64>,
        Vec<u8>,
    ),
>;

/// Every file of an archive (ours or Python's) with its metadata and content.
fn describe(archive: &Path) -> Described {
    let a = Archive::open(archive).unwrap();
    a.files(FileOrder::Path, "")
        .map(|f| {
            let f = f.unwrap();
            let data = a.read_file(&f).unwrap();
            (
                f.path.clone(),
                (
                    f.size,
                    f.crc32c,
                    f.meta.mode.map(|m| m & 0o7777),
                    f.meta.uid,
                    f.meta.gid,
                    f.meta.mtime_ns,
                    data,
                ),
            )
        })
        .collect()
}

/// The same, without the CRC32C (Python's --wrap stores none).
fn without_crc(d: &Described) -> Described {
    d.iter()
        .map(|(k, v)| (k.clone(), (v.0, None, v.2, v.3, v.4, v.5, v.6.clone())))
        .collect()
}

fn places(archive: &Path) -> Vec<(String, u64, u64, u64)> {
    let a = Archive::open(archive).unwrap();
    a.files(FileOrder::Path, "")
        .map(|f| {
            let f = f.unwrap();
            (f.path, f.shard, f.offset, f.size)
        })
        .collect()
}

/// A small tree with nested and empty directories, an empty file and a file of
/// a few hundred KB, made under `root/src`.
fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let files: Vec<(&str, Vec<u8>)> = vec![
        ("src/a.txt", b"hello\n".to_vec()),
        ("src/empty", Vec::new()),
        ("src/d/b.bin", pseudo_random(1, 300_000)),
        ("src/d/e/c.bin", pseudo_random(2, 4097)),
        ("src/ünï.txt", b"unicode\n".to_vec()),
    ];
    for (p, data) in &files {
        let full = root.join(p);
        fs::create_dir_all(full.parent().unwrap()).unwrap();
        fs::write(full, data).unwrap();
    }
    fs::create_dir_all(root.join("src/empty_dir")).unwrap();
    files.into_iter().map(|(p, d)| (p.to_string(), d)).collect()
}

fn out_err(o: &std::process::Output) -> String {
    format!(
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

// ---------------------------------------------------------------------- --wrap

#[test]
fn wrap_indexes_a_tar_in_place_with_crcs_and_python_reads_it() {
    need!("tar", "barecat");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let want = tree(d);
    sh(d, "tar -cf t.tar src");
    let tar_before = fs::read(d.join("t.tar")).unwrap();
    let out = d.join("w.barecat");
    let o = run(
        bin("barecat-from-tar"),
        [s(&"--wrap"), s(&d.join("t.tar")), s(&out)],
    );
    assert!(o.status.success(), "{}", out_err(&o));
    // Shard 0 is a link to the tar, by its absolute path; nothing was copied.
    let shard = Layout::current(&out).shard_path(0);
    assert_eq!(fs::read_link(&shard).unwrap(), d.join("t.tar"));
    assert_eq!(Layout::current(&out).shard_files().unwrap().len(), 1);
    assert_same(&contents(&out), &want, "wrapped tar");
    // Every file has its CRC32C (Python barecat's --wrap stores none).
    for (p, (_, crc, ..)) in describe(&out) {
        assert_eq!(crc, Some(barecat::core::crc::crc32c(&want[&p])), "{p}");
    }
    assert!(dir_paths(&out).contains("src/empty_dir"));
    check(&out);
    let v = run_ok(bin("barecat-verify"), [s(&out)]);
    assert!(v.contains("Verified 5 files"), "{v}");
    assert!(v.contains("Linked shards:"), "{v}");
    assert!(
        v.contains("0 reclaimable"),
        "the tar's headers are not ours to free: {v}"
    );
    let dump = py_dump(&out);
    assert_eq!(dump["files"].as_object().unwrap().len(), 5);
    assert_eq!(fs::read(d.join("t.tar")).unwrap(), tar_before);
}

#[test]
fn ours_and_pythons_wrap_index_the_same_members_at_the_same_offsets() {
    need!("tar", "zip", "barecat");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    tree(d);
    sh(d, "tar -cf t.tar src && zip -qr0 z.zip src");
    for input in ["t.tar", "z.zip"] {
        let py = d.join(format!("{input}.py.barecat"));
        let rs = d.join(format!("{input}.rs.barecat"));
        let o = run(
            py_barecat(),
            [s(&"convert"), s(&"--wrap"), s(&d.join(input)), s(&py)],
        );
        assert!(o.status.success(), "python: {}", out_err(&o));
        let o = run(
            barecat(),
            [s(&"convert"), s(&"--wrap"), s(&d.join(input)), s(&rs)],
        );
        assert!(o.status.success(), "ours: {}", out_err(&o));
        // The same rows at the same places in the same file.
        let at = |a: &Path| -> Vec<(u64, u64, u64)> {
            places(a).into_iter().map(|p| (p.1, p.2, p.3)).collect()
        };
        assert_eq!(at(&rs), at(&py), "{input}");
        let (ours, theirs) = (describe(&rs), describe(&py));
        if input == "t.tar" {
            assert_eq!(without_crc(&ours), theirs, "{input}: metadata");
        } else {
            // Zip entries: Python stores no mode, owner or time of its own here;
            // ours come from the zip's extra fields (as barecat-from-zip does).
            let sizes = |m: &Described| -> Vec<(String, u64, Vec<u8>)> {
                ascii_names(m)
                    .iter()
                    .map(|(k, v)| (k.clone(), v.0, v.6.clone()))
                    .collect()
            };
            assert_eq!(sizes(&ours), sizes(&theirs), "{input}: contents");
            unicode_zip_names(&ours, &theirs);
        }
        // Ours carry a CRC32C; Python's carry none (not a bug we copy).
        assert!(ours.values().all(|v| v.1.is_some()));
        assert!(theirs.values().all(|v| v.1.is_none()));
        assert_eq!(places(&rs).len(), places(&py).len());
        assert_eq!(dir_paths(&rs), dir_paths(&py), "{input}: directories");
        py_verify(&rs);
        // Our verify reads Python's wrapped archive and says what it cannot check.
        let v = run_ok(bin("barecat-verify"), [s(&py)]);
        assert!(v.contains("have no stored CRC32C"), "{v}");
    }
}

#[test]
fn a_tar_changed_after_wrapping_is_caught_by_verify() {
    need!("tar", "barecat");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    tree(d);
    sh(d, "tar -cf t.tar src");
    let out = d.join("w.barecat");
    run_ok(
        bin("barecat-from-tar"),
        [s(&"-q"), s(&"--wrap"), s(&d.join("t.tar")), s(&out)],
    );
    let fi = Archive::open(&out)
        .unwrap()
        .file_info("src/d/b.bin")
        .unwrap();
    let mut tar = fs::read(d.join("t.tar")).unwrap();
    tar[fi.offset as usize + 1000] ^= 0x40;
    fs::write(d.join("t.tar"), &tar).unwrap();
    let o = run(bin("barecat-verify"), [s(&"--json"), s(&out)]);
    assert_eq!(o.status.code(), Some(1), "{}", out_err(&o));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let kinds: Vec<&str> = r["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["crc_mismatch"], "{}", r["problems"]);
    // A CRC-checked read refuses the changed bytes.
    let o = run(bin("barecat-cat"), [s(&out), s(&"src/d/b.bin")]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
}

#[test]
fn wrap_refuses_compressed_input_with_pythons_messages() {
    need!("tar", "zip");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    tree(d);
    sh(
        d,
        "tar -czf t.tar.gz src && cp t.tar.gz gz-inside.tar && zip -qr deflated.zip src",
    );
    for (input, msg) in [
        (
            "t.tar.gz",
            "--wrap only works with uncompressed .tar or .zip files",
        ),
        (
            "gz-inside.tar",
            "Cannot wrap compressed file (gzip). Wrap only works with uncompressed .tar or \
             .zip files.",
        ),
        (
            "deflated.zip",
            "Use 'zip -0' to create uncompressed ZIP, or convert without --wrap.",
        ),
    ] {
        let out = d.join("w.barecat");
        for prog in ["barecat-from-tar", "barecat-from-zip", "barecat-convert"] {
            if (prog == "barecat-from-zip") != input.ends_with(".zip") {
                continue;
            }
            let o = run(bin(prog), [s(&"--wrap"), s(&d.join(input)), s(&out)]);
            assert_eq!(o.status.code(), Some(1), "{prog} {input}: {}", out_err(&o));
            assert_clean_error(&o);
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(err.contains(msg), "{prog} {input}: {err}");
            assert!(err.contains(input), "names the input: {err}");
            assert!(!Layout::exists(&out).unwrap(), "nothing left behind");
            assert_eq!(
                fs::read_dir(d).unwrap().count(),
                4,
                "no temporary left behind"
            );
        }
    }
    // Standard input cannot be wrapped.
    let o = run(
        bin("barecat-convert"),
        [
            s(&"--wrap"),
            s(&"--stdin"),
            s(&"tar"),
            s(&d.join("x.barecat")),
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", out_err(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--wrap cannot be used with --stdin"));
}

#[test]
fn wrap_reports_sparse_files_and_hard_links_and_keeps_the_rest() {
    need!("tar", "barecat");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::create_dir_all(d.join("src")).unwrap();
    fs::write(d.join("src/plain.txt"), b"plain").unwrap();
    // A sparse file: 1 MiB with a few bytes in the middle.
    let f = fs::File::create(d.join("src/sparse.bin")).unwrap();
    f.set_len(1 << 20).unwrap();
    std::os::unix::fs::FileExt::write_all_at(&f, b"data", 500_000).unwrap();
    drop(f);
    fs::hard_link(d.join("src/plain.txt"), d.join("src/link.txt")).unwrap();
    sh(d, "tar --sparse -cf t.tar src");
    let out = d.join("w.barecat");
    let o = run(
        bin("barecat-from-tar"),
        [s(&"--wrap"), s(&d.join("t.tar")), s(&out)],
    );
    assert_eq!(o.status.code(), Some(1), "{}", out_err(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("src/sparse.bin: sparse file"), "{err}");
    assert!(err.contains("src/link.txt: hard link"), "{err}");
    let got: Vec<String> = contents(&out).into_keys().collect();
    assert_eq!(got, ["src/plain.txt"]);
    check(&out);
    // Without --wrap both are stored (a copy, the expanded content).
    let copy = d.join("c.barecat");
    run_ok(
        bin("barecat-from-tar"),
        [s(&"-q"), s(&d.join("t.tar")), s(&copy)],
    );
    let c = contents(&copy);
    assert_eq!(c["src/sparse.bin"].len(), 1 << 20);
    assert_eq!(c["src/link.txt"], b"plain");
}

#[test]
fn wrap_follows_the_duplicate_rules_of_from_tar() {
    need!("tar", "barecat");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::create_dir_all(d.join("src")).unwrap();
    fs::write(d.join("src/f"), b"first").unwrap();
    sh(d, "tar -cf t.tar src && sleep 0.01");
    fs::write(d.join("src/f"), b"second copy").unwrap();
    sh(d, "tar -rf t.tar src/f");
    let out = d.join("w.barecat");
    let o = run(
        bin("barecat-from-tar"),
        [s(&"--wrap"), s(&d.join("t.tar")), s(&out)],
    );
    assert_eq!(
        o.status.code(),
        Some(1),
        "a duplicate is reported: {}",
        out_err(&o)
    );
    assert_eq!(contents(&out)["src/f"], b"second copy");
    for (which, content) in [("last", &b"second copy"[..]), ("first", &b"first"[..])] {
        let o = run(
            bin("barecat-from-tar"),
            [
                s(&"-f"),
                s(&"--wrap"),
                s(&"--duplicates"),
                s(&which),
                s(&d.join("t.tar")),
                s(&out),
            ],
        );
        assert!(o.status.success(), "{which}: {}", out_err(&o));
        assert_eq!(contents(&out)["src/f"], content, "{which}");
        check(&out);
    }
}

#[test]
fn no_writer_writes_through_a_wrapped_tar() {
    need!("tar", "barecat");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let want = tree(d);
    sh(d, "tar -cf t.tar src");
    let tar = d.join("t.tar");
    let tar_bytes = fs::read(&tar).unwrap();
    let out = d.join("w.barecat");
    run_ok(
        bin("barecat-from-tar"),
        [s(&"-q"), s(&"--wrap"), s(&tar), s(&out)],
    );
    let index_before = fs::read(&out).unwrap();
    fs::write(d.join("new.txt"), b"new").unwrap();
    let more = d.join("more.barecat");
    run_ok(
        bin("barecat-create"),
        [s(&"-q"), s(&more), s(&d.join("new.txt"))],
    );
    let attempts: Vec<(&str, Vec<std::ffi::OsString>)> = vec![
        (
            "barecat-create",
            vec![s(&"-a"), s(&out), s(&d.join("new.txt"))],
        ),
        ("barecat-defrag", vec![s(&out)]),
        ("barecat-defrag", vec![s(&"--quick"), s(&out)]),
        ("barecat-merge", vec![s(&"-a"), s(&"-o"), s(&out), s(&more)]),
        ("barecat-repair", vec![s(&out)]),
        ("barecat-from-tar", vec![s(&"-a"), s(&tar), s(&out)]),
        (
            "barecat",
            vec![s(&"reshard"), s(&"-s"), s(&"100K"), s(&out)],
        ),
        ("barecat", vec![s(&"add"), s(&out), s(&d.join("new.txt"))]),
        ("barecat", vec![s(&"rm"), s(&out), s(&"src/a.txt")]),
        (
            "barecat",
            vec![s(&"mv"), s(&out), s(&"src/a.txt"), s(&"src/b.txt")],
        ),
        (
            "barecat",
            vec![s(&"chmod"), s(&out), s(&"600"), s(&"src/a.txt")],
        ),
        ("barecat", vec![s(&"touch"), s(&out), s(&"src/a.txt")]),
        (
            "barecat",
            vec![
                s(&"rsync"),
                s(&d.join("new.txt")),
                s(&format!("{}::x", out.display())),
            ],
        ),
    ];
    for (prog, args) in attempts {
        let o = run(bin(prog), &args);
        assert_eq!(o.status.code(), Some(1), "{prog} {args:?}: {}", out_err(&o));
        assert_clean_error(&o);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("symbolic link to") && err.contains("t.tar"),
            "{prog}: {err}"
        );
        assert_eq!(fs::read(&tar).unwrap(), tar_bytes, "{prog} changed the tar");
        assert_eq!(
            fs::read(&out).unwrap(),
            index_before,
            "{prog} changed the index"
        );
    }
    // Python barecat refuses on its own.
    let o = run(py_barecat(), [s(&"add"), s(&out), s(&d.join("new.txt"))]);
    assert!(!o.status.success());
    // A writer that is allowed to write into an archive with linked shards (the
    // Python module's allow_writing_symlinked_shard) appends to a shard of its own,
    // and its recovery never cuts the tar.
    let mut w = ArchiveWriter::open(
        &out,
        WriterOptions {
            allow_symlinked_shards: true,
            ..WriterOptions::with_mode(CreateMode::Append)
        },
    )
    .unwrap();
    let fi = w
        .add_file("added.txt", Meta::default(), b"added", None)
        .unwrap();
    assert_eq!((fi.shard, fi.offset), (1, 0));
    w.commit().unwrap();
    w.trim_garbage().unwrap();
    w.add_file("dropped.txt", Meta::default(), b"dropped", None)
        .unwrap();
    w.rollback().unwrap();
    w.remove_file("src/ünï.txt").unwrap();
    w.finish().unwrap();
    assert_eq!(fs::read(&tar).unwrap(), tar_bytes, "the tar is untouched");
    let mut now = contents(&out);
    assert_eq!(now.remove("added.txt").unwrap(), b"added");
    let mut expected = want.clone();
    expected.remove("src/ünï.txt");
    assert_same(&now, &expected, "after writing");
    check(&out);
    let v = run_ok(bin("barecat-defrag"), [s(&"--dry-run"), s(&out)]);
    assert!(v.contains("defrag does not write through them"), "{v}");
}

#[test]
fn wrap_replaces_an_old_output_only_with_force_and_never_its_own_input() {
    need!("tar");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    tree(d);
    sh(d, "tar -cf t.tar src");
    let tar = d.join("t.tar");
    let out = d.join("w.barecat");
    run_ok(
        bin("barecat-from-tar"),
        [s(&"-q"), s(&"--wrap"), s(&tar), s(&out)],
    );
    let o = run(bin("barecat-from-tar"), [s(&"--wrap"), s(&tar), s(&out)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("already exists"));
    run_ok(
        bin("barecat-from-tar"),
        [s(&"-q"), s(&"-f"), s(&"--wrap"), s(&tar), s(&out)],
    );
    assert_eq!(contents(&out).len(), 5);
    // The input as the output's index or shard: refused, nothing removed.
    for (input, output) in [
        (tar.clone(), tar.clone()),
        (Layout::current(&out).shard_path(0), out.clone()),
    ] {
        let o = run(
            bin("barecat-from-tar"),
            [s(&"-f"), s(&"--wrap"), s(&input), s(&output)],
        );
        assert_eq!(o.status.code(), Some(1), "{}", out_err(&o));
        assert!(String::from_utf8_lossy(&o.stderr).contains("part of the output"));
    }
    assert_eq!(contents(&out).len(), 5);
    // Options that make no sense with --wrap are usage errors.
    for extra in [["-a"], ["--resume"], ["-s 1M"]] {
        let mut args: Vec<std::ffi::OsString> =
            extra[0].split(' ').map(std::ffi::OsString::from).collect();
        args.extend([s(&"--wrap"), s(&tar), s(&d.join("x.barecat"))]);
        let o = run(bin("barecat-from-tar"), &args);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", out_err(&o));
    }
}

// ---------------------------------------------------------------------- convert

#[test]
fn convert_tells_the_direction_from_the_names_with_pythons_messages() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (a, b, msg) in [
        (
            "x.tar",
            "y.zip",
            "Both input and output are tar/zip. One must be a barecat path.",
        ),
        (
            "x.barecat",
            "y.barecat",
            "Neither input nor output is tar/zip. One must have extension like .tar, \
             .tar.gz, .zip (or use --stdin/--stdout)",
        ),
    ] {
        let o = run(barecat(), [s(&"convert"), s(&d.join(a)), s(&d.join(b))]);
        assert_eq!(o.status.code(), Some(2), "{}", out_err(&o));
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(msg),
            "{}",
            out_err(&o)
        );
    }
    let o = run(
        barecat(),
        [
            s(&"convert"),
            s(&"--stdin"),
            s(&"tgz"),
            s(&d.join("y.barecat")),
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr)
        .contains("With --stdin, input must be a tar format: tar, tar.gz, tar.bz2, tar.xz"));
}

#[test]
fn convert_round_trips_through_every_format_and_stdio() {
    need!("tar");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let want = tree(d);
    let arch = d.join("a.barecat");
    run_ok(
        bin("barecat-create"),
        [s(&"-q"), s(&"-C"), s(&d), s(&arch), s(&"src")],
    );
    // Upper-case and short names work too (Python's writer fails on them: docs/FORMAT.md §11.19).
    for name in [
        "o.tar",
        "o.TAR",
        "o.tgz",
        "o.tar.bz2",
        "o.txz",
        "o.tar.zst",
        "o.zip",
    ] {
        let o = d.join(name);
        run_ok(barecat(), [s(&"convert"), s(&"-q"), s(&arch), s(&o)]);
        let back = d.join(format!("{name}.barecat"));
        run_ok(barecat(), [s(&"convert"), s(&"-q"), s(&o), s(&back)]);
        assert_same(&contents(&back), &want, name);
        // -f is needed to replace either side.
        let again = run(barecat(), [s(&"convert"), s(&o), s(&back)]);
        assert_eq!(again.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&again.stderr).contains("use -f"));
        run_ok(
            barecat(),
            [s(&"convert"), s(&"-q"), s(&"-f"), s(&o), s(&back)],
        );
    }
    // --stdout FORMAT | --stdin FORMAT, with --root-dir.
    for fmt in ["tar", "tar.gz", "tar.bz2", "tar.xz", "tar.zst"] {
        let o = run(
            barecat(),
            [
                s(&"convert"),
                s(&"-q"),
                s(&"--stdout"),
                s(&"--root-dir"),
                s(&"R"),
                s(&arch),
                s(&fmt),
            ],
        );
        assert!(o.status.success(), "{fmt}: {}", out_err(&o));
        let back = d.join(format!("stdin-{fmt}.barecat"));
        let r = run_stdin(
            &barecat(),
            [s(&"convert"), s(&"-q"), s(&"--stdin"), s(&fmt), s(&back)],
            &o.stdout,
        );
        assert!(r.status.success(), "{fmt}: {}", out_err(&r));
        assert_same(&contents(&back), &prefixed("R", &want), fmt);
    }
}

#[test]
fn convert_makes_the_archives_python_barecat_makes() {
    need!("tar", "zip", "unzip", "barecat");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let want = tree(d);
    sh(
        d,
        "tar -cf t.tar src && tar -czf t.tar.gz src && zip -qr z.zip src",
    );
    // tar/zip -> barecat: the same files and metadata; Python verifies ours.
    for input in ["t.tar", "t.tar.gz", "z.zip"] {
        let py = d.join(format!("{input}.py.barecat"));
        let rs = d.join(format!("{input}.rs.barecat"));
        let o = run(py_barecat(), [s(&"convert"), s(&d.join(input)), s(&py)]);
        assert!(o.status.success(), "python {input}: {}", out_err(&o));
        run_ok(
            barecat(),
            [s(&"convert"), s(&"-q"), s(&d.join(input)), s(&rs)],
        );
        assert_same(&contents(&rs), &want, input);
        let (ours, theirs) = (describe(&rs), describe(&py));
        if input.ends_with(".zip") {
            // Python stores no mode or owner for zip entries; ours keep the zip's.
            // Python takes the time from the DOS field (2-second steps, local time);
            // ours from the extended-timestamp field Info-ZIP writes (the second).
            let strip = |m: &Described| -> Described {
                ascii_names(m)
                    .into_iter()
                    .map(|(k, v)| (k, (v.0, v.1, None, None, None, None, v.6)))
                    .collect()
            };
            assert_eq!(strip(&ours), strip(&theirs), "{input}");
            for (k, v) in ascii_names(&ours) {
                let (a, b) = (v.5.unwrap(), theirs[&k].5.unwrap());
                assert!((a - b).abs() <= 2_000_000_000, "{input}: {k}: {a} vs {b}");
            }
            unicode_zip_names(&ours, &theirs);
        } else {
            assert_eq!(ours, theirs, "{input}");
        }
        assert_eq!(dir_paths(&rs), dir_paths(&py), "{input}: directories");
        py_verify(&rs);
    }
    // barecat -> tar/zip: the same members with the same contents and modes.
    let arch = d.join("t.tar.rs.barecat");
    for out in ["p.tar", "p.zip"] {
        let py = d.join(format!("py-{out}"));
        let rs = d.join(format!("rs-{out}"));
        let o = run(py_barecat(), [s(&"convert"), s(&arch), s(&py)]);
        assert!(o.status.success(), "python {out}: {}", out_err(&o));
        run_ok(barecat(), [s(&"convert"), s(&"-q"), s(&arch), s(&rs)]);
        let (px, rx) = (d.join(format!("x-py-{out}")), d.join(format!("x-rs-{out}")));
        fs::create_dir_all(&px).unwrap();
        fs::create_dir_all(&rx).unwrap();
        if out.ends_with(".tar") {
            sh(d, &format!("tar -xf {} -C {}", py.display(), px.display()));
            sh(d, &format!("tar -xf {} -C {}", rs.display(), rx.display()));
        } else {
            sh(d, &format!("unzip -q {} -d {}", py.display(), px.display()));
            sh(d, &format!("unzip -q {} -d {}", rs.display(), rx.display()));
        }
        assert_eq!(tree_files(&rx), tree_files(&px), "{out}");
        assert_same(&tree_files(&rx), &want, out);
        assert!(rx.join("src/empty_dir").is_dir());
    }
}

/// The files whose names are ASCII.
fn ascii_names(m: &Described) -> Described {
    m.iter()
        .filter(|(k, _)| k.is_ascii())
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Info-ZIP stores UTF-8 names without the zip's UTF-8 flag: we take the name as
/// UTF-8 (as unzip and bsdtar show it); Python's zipfile decodes it as CP437 and
/// stores mojibake (a difference we do not copy).
fn unicode_zip_names(ours: &Described, theirs: &Described) {
    assert!(ours.contains_key("src/ünï.txt"), "{:?}", ours.keys());
    assert!(!theirs.contains_key("src/ünï.txt"), "{:?}", theirs.keys());
}

fn s<P: AsRef<std::ffi::OsStr> + ?Sized>(p: &P) -> std::ffi::OsString {
    p.as_ref().to_owned()
}
