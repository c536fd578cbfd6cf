//! `barecat-extract`: round trips, metadata, filters, overwrite and CRC handling,
//! legacy forms.

use std::fs;
use std::path::Path;

use crate::support::export::*;
use crate::support::*;
use barecat::{ArchiveWriter, Meta, WriterOptions};

fn extract(args: &[&std::ffi::OsStr]) -> std::process::Output {
    run(bin("barecat-extract"), args)
}

#[test]
fn round_trip_restores_content_modes_and_times() {
    let tmp = tempfile::tempdir().unwrap();
    let arch = sample(tmp.path());
    let out = tmp.path().join("out");
    let o = extract(&[
        "-q".as_ref(),
        arch.as_os_str(),
        "-C".as_ref(),
        out.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stderr.is_empty(), "-q prints nothing: {}", stderr(&o));
    for (p, data) in sample_files() {
        assert_eq!(fs::read(out.join(p)).unwrap(), data, "{p}");
    }
    assert_eq!(
        tree(&out),
        vec![
            "a/",
            "a/.h.txt",
            "a/b/",
            "a/b/y.jpg",
            "a/x.txt",
            "empty.txt",
            "top.bin",
            "void/",
            "void/deeper/",
            "ünï/",
            "ünï/ćödé.txt"
        ]
    );
    // Permission bits exactly as stored (not reduced by the umask), times to the ns.
    assert_eq!(mode_of(&out.join("a/x.txt")), 0o640);
    assert_eq!(mode_of(&out.join("top.bin")), 0o755);
    assert_eq!(mode_of(&out.join("empty.txt")), 0o444);
    assert_eq!(mtime_ns(&out.join("a/x.txt")), T0);
    assert_eq!(mtime_ns(&out.join("top.bin")), T0 + 5);
    // Directories, empty ones included, get theirs after their contents.
    assert_eq!(mode_of(&out.join("a")), 0o750);
    assert_eq!(mtime_ns(&out.join("a")), T0 + 1);
    assert_eq!(mode_of(&out.join("void")), 0o700);
    assert_eq!(mtime_ns(&out.join("void")), T0 + 7);
    assert_eq!(mtime_ns(&out.join("void/deeper")), T0 + 8);
    // The summary line without -q.
    let out2 = tmp.path().join("out2");
    let o = extract(&[
        "-j3".as_ref(),
        arch.as_os_str(),
        "-C".as_ref(),
        out2.as_os_str(),
    ]);
    assert!(o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("extracted 6 files") && err.contains("directories"),
        "{err}"
    );
    assert_eq!(tree(&out), tree(&out2));
}

#[test]
fn special_bits_only_with_same_permissions() {
    let tmp = tempfile::tempdir().unwrap();
    let arch = tmp.path().join("s.barecat");
    let mut w = ArchiveWriter::open(&arch, WriterOptions::default()).unwrap();
    w.add_file("suid", meta(0o104755, T0), b"#!", None).unwrap();
    w.add_dir("sticky", meta(0o41777, T0)).unwrap();
    w.finish().unwrap();
    let a = tmp.path().join("a");
    let b = tmp.path().join("b");
    assert!(extract(&[arch.as_os_str(), "-C".as_ref(), a.as_os_str()])
        .status
        .success());
    assert_eq!(mode_of(&a.join("suid")), 0o755);
    assert_eq!(mode_of(&a.join("sticky")), 0o777);
    let o = extract(&[
        "-p".as_ref(),
        arch.as_os_str(),
        "-C".as_ref(),
        b.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(mode_of(&b.join("suid")), 0o4755);
    assert_eq!(mode_of(&b.join("sticky")), 0o1777);
}

#[test]
fn archive_made_by_python_round_trips() {
    need!("barecat");
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    write_tree(
        &src,
        &[
            ("d/a.txt", b"alpha"),
            ("d/e/b.bin", &pseudo_random(3, 70_000)),
            ("c.txt", b""),
            ("ü/ß.txt", b"unicode"),
        ],
    );
    fs::create_dir_all(src.join("emptydir")).unwrap();
    let arch = tmp.path().join("py.barecat");
    let o = std::process::Command::new(py_barecat())
        .args([
            "create".as_ref(),
            arch.as_os_str(),
            "d".as_ref(),
            "c.txt".as_ref(),
        ])
        .args(["ü", "emptydir"])
        .current_dir(&src)
        .output_bounded()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = tmp.path().join("out");
    let o = extract(&[arch.as_os_str(), "-C".as_ref(), out.as_os_str()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(tree(&out), tree(&src));
    for f in ["d/a.txt", "d/e/b.bin", "c.txt", "ü/ß.txt"] {
        assert_eq!(
            fs::read(out.join(f)).unwrap(),
            fs::read(src.join(f)).unwrap()
        );
        assert_eq!(mtime_ns(&out.join(f)), mtime_ns(&src.join(f)), "{f}");
        assert_eq!(mode_of(&out.join(f)), mode_of(&src.join(f)), "{f}");
    }
}

#[test]
fn filters_select_files_directories_and_globs() {
    let tmp = tempfile::tempdir().unwrap();
    let arch = sample(tmp.path());
    let cases: &[(&[&str], &[&str])] = &[
        (&["a/x.txt"], &["a/", "a/x.txt"]),
        (&["a/b"], &["a/", "a/b/", "a/b/y.jpg"]),
        // Globs: ** spans directories, wildcards skip hidden names.
        (
            &["**/*.txt"],
            &["a/", "a/x.txt", "empty.txt", "ünï/", "ünï/ćödé.txt"],
        ),
        (&["a/*"], &["a/", "a/b/", "a/b/y.jpg", "a/x.txt"]),
        (&["void"], &["void/", "void/deeper/"]),
        (
            &["./a/x.txt", "a"],
            &["a/", "a/.h.txt", "a/b/", "a/b/y.jpg", "a/x.txt"],
        ),
    ];
    for (i, (ops, want)) in cases.iter().enumerate() {
        let out = tmp.path().join(format!("out{i}"));
        let mut args = vec![arch.as_os_str(), "-C".as_ref(), out.as_os_str()];
        args.extend(ops.iter().map(std::ffi::OsStr::new));
        let o = extract(&args);
        assert!(o.status.success(), "{ops:?}: {}", stderr(&o));
        assert_eq!(tree(&out), *want, "{ops:?}");
    }
    // An operand that matches nothing is reported; the others are still extracted.
    let out = tmp.path().join("missing");
    let o = extract(&[
        arch.as_os_str(),
        "-C".as_ref(),
        out.as_os_str(),
        "nope".as_ref(),
        "a/x.txt".as_ref(),
        "*.none".as_ref(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("nope: no such file") && err.contains("*.none"),
        "{err}"
    );
    assert_eq!(fs::read(out.join("a/x.txt")).unwrap(), b"hello\n");
}

#[test]
fn strip_components_drops_leading_directories() {
    let tmp = tempfile::tempdir().unwrap();
    let arch = sample(tmp.path());
    let out = tmp.path().join("out");
    let o = extract(&[
        "--strip-components".as_ref(),
        "1".as_ref(),
        arch.as_os_str(),
        "-C".as_ref(),
        out.as_os_str(),
        "a".as_ref(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(tree(&out), vec![".h.txt", "b/", "b/y.jpg", "x.txt"]);
    assert_eq!(mtime_ns(&out.join("b/y.jpg")), T0 + 2);
    let o = extract(&[
        "--strip-components=2".as_ref(),
        arch.as_os_str(),
        "-C".as_ref(),
        tmp.path().join("out2").as_os_str(),
    ]);
    assert!(o.status.success());
    assert_eq!(tree(&tmp.path().join("out2")), vec!["y.jpg"]);
    assert!(stderr(&o).contains("skipped by --strip-components"));
}

#[test]
fn existing_files_are_kept_and_reported_unless_overwrite() {
    let tmp = tempfile::tempdir().unwrap();
    let arch = sample(tmp.path());
    let out = tmp.path().join("out");
    fs::create_dir_all(out.join("a")).unwrap();
    fs::write(out.join("a/x.txt"), b"mine").unwrap();
    fs::write(out.join("top.bin"), b"mine too").unwrap();
    let o = extract(&[arch.as_os_str(), "-C".as_ref(), out.as_os_str()]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("a/x.txt: already exists; not overwritten (use --overwrite)"),
        "{err}"
    );
    assert!(err.contains("top.bin: already exists"), "{err}");
    assert!(err.contains("2 problems"), "{err}");
    assert_eq!(fs::read(out.join("a/x.txt")).unwrap(), b"mine");
    assert_eq!(fs::read(out.join("top.bin")).unwrap(), b"mine too");
    // The rest was extracted.
    assert_eq!(fs::read(out.join("a/b/y.jpg")).unwrap(), b"jpeg");
    // With --overwrite everything is replaced, and a second run changes nothing.
    for _ in 0..2 {
        let o = extract(&[
            "--overwrite".as_ref(),
            arch.as_os_str(),
            "-C".as_ref(),
            out.as_os_str(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(fs::read(out.join("a/x.txt")).unwrap(), b"hello\n");
        assert_eq!(mode_of(&out.join("a/x.txt")), 0o640);
    }
    // A directory is never replaced by a file, even with --overwrite.
    fs::remove_file(out.join("empty.txt")).unwrap();
    fs::create_dir(out.join("empty.txt")).unwrap();
    let o = extract(&[
        "--overwrite".as_ref(),
        arch.as_os_str(),
        "-C".as_ref(),
        out.as_os_str(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("empty.txt: is a directory"),
        "{}",
        stderr(&o)
    );
    assert!(out.join("empty.txt").is_dir());
}

#[test]
fn crc_mismatch_is_reported_and_not_left_in_place() {
    let tmp = tempfile::tempdir().unwrap();
    let arch = sample(tmp.path());
    corrupt(&arch, "a/x.txt");
    corrupt(&arch, "top.bin");
    let out = tmp.path().join("out");
    let o = extract(&[arch.as_os_str(), "-C".as_ref(), out.as_os_str()]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("a/x.txt: CRC32C mismatch"), "{err}");
    assert!(err.contains("top.bin: CRC32C mismatch"), "{err}");
    assert!(!out.join("a/x.txt").exists());
    assert!(!out.join("top.bin").exists());
    assert_eq!(fs::read(out.join("a/b/y.jpg")).unwrap(), b"jpeg");
    assert_eq!(fs::read(out.join("ünï/ćödé.txt")).unwrap(), "ü".as_bytes());
}

#[test]
fn large_files_go_through_a_temporary_name() {
    // Over 64 MiB: written under a temporary name, renamed only when the CRC matches.
    let tmp = tempfile::tempdir().unwrap();
    let arch = tmp.path().join("big.barecat");
    let big = pseudo_random(9, (64 << 20) + 4096);
    let mut w = ArchiveWriter::open(&arch, WriterOptions::default()).unwrap();
    w.add_file("d/big", meta(0o100600, T0), &big, None).unwrap();
    w.add_file("d/small", Meta::default(), b"s", None).unwrap();
    w.finish().unwrap();
    let out = tmp.path().join("out");
    let o = extract(&[arch.as_os_str(), "-C".as_ref(), out.as_os_str()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(fs::read(out.join("d/big")).unwrap() == big);
    assert_eq!(mode_of(&out.join("d/big")), 0o600);
    assert_eq!(mtime_ns(&out.join("d/big")), T0);
    // Existing: refused without --overwrite.
    let o = extract(&[
        arch.as_os_str(),
        "-C".as_ref(),
        out.as_os_str(),
        "d/big".as_ref(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("already exists"));
    // Corrupt: reported, nothing left behind (no partial file, no temporary).
    barecat::Archive::open(&arch).unwrap();
    let shard = barecat::Layout::current(&arch).shard_path(0);
    let f = fs::OpenOptions::new().write(true).open(&shard).unwrap();
    std::os::unix::fs::FileExt::write_at(&f, b"XXXX", 1 << 20).unwrap();
    let out2 = tmp.path().join("out2");
    let o = extract(&[arch.as_os_str(), "-C".as_ref(), out2.as_os_str()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("d/big: CRC32C mismatch"),
        "{}",
        stderr(&o)
    );
    assert_eq!(tree(&out2), vec!["d/", "d/small"]);
    // With --overwrite over a good copy, the good copy stays.
    let o = extract(&[
        "--overwrite".as_ref(),
        arch.as_os_str(),
        "-C".as_ref(),
        out.as_os_str(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(fs::read(out.join("d/big")).unwrap() == big);
    assert_eq!(tree(&out), vec!["d/", "d/big", "d/small"]);
}

#[test]
fn legacy_forms() {
    let tmp = tempfile::tempdir().unwrap();
    let arch = sample(tmp.path());
    let out = tmp.path().join("legacy");
    let o = extract(&[
        "--file".as_ref(),
        arch.as_os_str(),
        "--target-directory".as_ref(),
        out.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(fs::read(out.join("a/x.txt")).unwrap(), b"hello\n");
    assert_eq!(tree(&out).len(), 11);
    // Through the multicall binary, as a subcommand and under the command's name.
    let out2 = tmp.path().join("multi");
    let o = run(
        bin("barecat"),
        [
            "extract".as_ref(),
            arch.as_os_str(),
            "-C".as_ref(),
            out2.as_os_str(),
            "a/b".as_ref(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(tree(&out2), vec!["a/", "a/b/", "a/b/y.jpg"]);
    let link = tmp.path().join("barecat-extract");
    std::os::unix::fs::symlink(bin("barecat"), &link).unwrap();
    let out3 = tmp.path().join("link");
    let o = run(
        &link,
        [
            "--file".as_ref(),
            arch.as_os_str(),
            "--target-directory".as_ref(),
            out3.as_os_str(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(tree(&out3), tree(&out));
}

#[test]
fn usage_and_open_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let o = extract(&[]);
    assert_eq!(o.status.code(), Some(2));
    let o = extract(&["--strip-components".as_ref(), "x".as_ref(), "a".as_ref()]);
    assert_eq!(o.status.code(), Some(2));
    let missing = tmp.path().join("none.barecat");
    let o = extract(&[
        missing.as_os_str(),
        "-C".as_ref(),
        tmp.path().join("o").as_os_str(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert_clean_error(&o);
    assert!(stderr(&o).contains("none.barecat"));
    // The destination is a file.
    let arch = sample(tmp.path());
    let f = tmp.path().join("file");
    fs::write(&f, b"").unwrap();
    let o = extract(&[arch.as_os_str(), "-C".as_ref(), f.as_os_str()]);
    assert_eq!(o.status.code(), Some(1));
    assert_clean_error(&o);
    assert!(Path::new(&f).is_file());
}
