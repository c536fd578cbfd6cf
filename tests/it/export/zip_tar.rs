//! `barecat-to-zip`, `barecat-to-tar` and legacy `barecat2archive`: outputs checked by
//! `unzip -t`, Python's zipfile and tarfile, GNU tar and bsdtar.

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::export::*;
use crate::support::*;
use barecat::{ArchiveWriter, Meta, WriterOptions};

const SAMPLE_ENTRIES: &[&str] = &[
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
    "ünï/ćödé.txt",
];

fn to(cmd: &str, args: &[&OsStr]) -> std::process::Output {
    run(bin(cmd), args)
}

fn py_run(code: &str, args: &[&OsStr]) -> String {
    let mut all: Vec<&OsStr> = vec!["-c".as_ref(), code.as_ref()];
    all.extend_from_slice(args);
    run_ok(python(), all)
}

fn lines(s: &str) -> Vec<String> {
    s.lines().map(str::to_string).collect()
}

#[test]
fn zip_passes_unzip_python_and_the_zip_crate() {
    need!("unzip", "barecat");
    let tmp = tempfile::tempdir().unwrap();
    let arch = sample(tmp.path());
    let z = tmp.path().join("s.zip");
    let o = to("barecat-to-zip", &[arch.as_os_str(), z.as_os_str()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("wrote 6 files"), "{}", stderr(&o));
    let t = run_ok("unzip", ["-t".as_ref(), z.as_os_str()]);
    assert!(t.contains("No errors detected"), "{t}");
    // Python: names in path order, Unix modes, UTC times, contents (CRC-checked).
    let listing = py_run(
        "import sys, zipfile\n\
         z = zipfile.ZipFile(sys.argv[1])\n\
         assert z.testzip() is None\n\
         for i in z.infolist():\n\
         \x20   print(i.filename, oct(i.external_attr >> 16), i.compress_type, *i.date_time, z.read(i).hex())",
        &[z.as_os_str()],
    );
    let got = lines(&listing);
    let names: Vec<&str> = got.iter().map(|l| l.split(' ').next().unwrap()).collect();
    assert_eq!(names, SAMPLE_ENTRIES);
    assert_eq!(got[4], "a/x.txt 0o100640 0 2020 9 13 12 26 40 68656c6c6f0a");
    assert_eq!(got[0], "a/ 0o40750 0 2020 9 13 12 26 40 ");
    assert!(got[6].starts_with("top.bin 0o100755 0 2020 9 13 12 26 40 "));
    // unzip restores the UTC modification time from the extended timestamp field.
    let out = tmp.path().join("unzipped");
    run_ok(
        "unzip",
        ["-q".as_ref(), z.as_os_str(), "-d".as_ref(), out.as_os_str()],
    );
    for (p, data) in sample_files() {
        assert_eq!(fs::read(out.join(p)).unwrap(), data, "{p}");
    }
    assert_eq!(
        mtime_ns(&out.join("a/x.txt")) / 1_000_000_000,
        T0 / 1_000_000_000
    );
    // The zip crate reads it too.
    let mut za = zip::ZipArchive::new(fs::File::open(&z).unwrap()).unwrap();
    assert_eq!(za.len(), SAMPLE_ENTRIES.len());
    assert_eq!(za.by_name("a/x.txt").unwrap().unix_mode(), Some(0o100640));
    // Streamed to standard output: the very same bytes.
    let o = Command::new(bin("barecat-to-zip"))
        .args([arch.as_os_str(), "-".as_ref(), "-q".as_ref()])
        .output_bounded()
        .unwrap();
    assert!(o.status.success());
    assert!(o.stderr.is_empty());
    assert!(o.stdout == fs::read(&z).unwrap());
}

#[test]
fn zip_deflate_levels() {
    need!("unzip", "barecat");
    let tmp = tempfile::tempdir().unwrap();
    let arch = tmp.path().join("c.barecat");
    let text = b"all work and no play makes jack a dull boy\n".repeat(2000);
    let mut w = ArchiveWriter::open(&arch, WriterOptions::default()).unwrap();
    w.add_file("text.txt", meta(0o100644, T0), &text, None)
        .unwrap();
    w.add_file(
        "noise.bin",
        meta(0o100644, T0),
        &pseudo_random(5, 5000),
        None,
    )
    .unwrap();
    w.finish().unwrap();
    for (i, flag) in ["--deflate", "--deflate=1", "--deflate=9"]
        .iter()
        .enumerate()
    {
        let z = tmp.path().join(format!("{i}.zip"));
        let o = to(
            "barecat-to-zip",
            &[flag.as_ref(), arch.as_os_str(), z.as_os_str()],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(run_ok("unzip", ["-t".as_ref(), z.as_os_str()]).contains("No errors"));
        let got = py_run(
            "import sys, zipfile\n\
             z = zipfile.ZipFile(sys.argv[1])\n\
             for i in z.infolist(): print(i.filename, i.compress_type, i.compress_size < i.file_size, len(z.read(i)))",
            &[z.as_os_str()],
        );
        // Compressible text is deflated; noise that would grow is stored.
        assert_eq!(
            lines(&got),
            vec!["noise.bin 0 False 5000", "text.txt 8 True 86000"],
            "{flag}"
        );
    }
    let o = to(
        "barecat-to-zip",
        &["--deflate=10".as_ref(), arch.as_os_str(), "x.zip".as_ref()],
    );
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn zip64_for_more_than_65535_entries() {
    need!("unzip", "barecat");
    let tmp = tempfile::tempdir().unwrap();
    let arch = tmp.path().join("many.barecat");
    let mut w = ArchiveWriter::open(&arch, WriterOptions::default()).unwrap();
    for i in 0..66_000u32 {
        let name = format!("d{:02}/{i}", i % 50);
        w.add_file(&name, Meta::default(), &i.to_le_bytes()[..1], None)
            .unwrap();
    }
    w.finish().unwrap();
    let z = tmp.path().join("many.zip");
    let o = to(
        "barecat-to-zip",
        &["-q".as_ref(), arch.as_os_str(), z.as_os_str()],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let t = run_ok("unzip", ["-tq".as_ref(), z.as_os_str()]);
    assert!(t.contains("No errors detected"), "{t}");
    let n = py_run(
        "import sys, zipfile\n\
         z = zipfile.ZipFile(sys.argv[1])\n\
         print(len(z.infolist()), z.read('d07/65007').hex())",
        &[z.as_os_str()],
    );
    assert_eq!(n.trim(), "66050 ef");
    // The end records are the Zip64 ones (the 16-bit count field overflows).
    let bytes = fs::read(&z).unwrap();
    let eocd64 = bytes.windows(4).rposition(|w| w == b"PK\x06\x06");
    assert!(eocd64.is_some());
}

#[test]
fn tar_passes_gnu_tar_bsdtar_and_python() {
    need!("tar", "bsdtar", "barecat");
    let tmp = tempfile::tempdir().unwrap();
    let arch = sample(tmp.path());
    let t = tmp.path().join("s.tar");
    let o = to("barecat-to-tar", &[arch.as_os_str(), t.as_os_str()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let listing = run_ok("tar", ["-tf".as_ref(), t.as_os_str()]);
    assert_eq!(lines(&listing), SAMPLE_ENTRIES);
    for tool in ["tar", "bsdtar"] {
        let out = tmp.path().join(tool);
        fs::create_dir(&out).unwrap();
        run_ok(
            tool,
            [
                "-xf".as_ref(),
                t.as_os_str(),
                "-C".as_ref(),
                out.as_os_str(),
            ],
        );
        for (p, data) in sample_files() {
            assert_eq!(fs::read(out.join(p)).unwrap(), data, "{tool} {p}");
        }
        // Sub-second times come through the PAX headers.
        assert_eq!(mtime_ns(&out.join("a/x.txt")), T0, "{tool}");
        assert_eq!(mode_of(&out.join("a/x.txt")), 0o640, "{tool}");
    }
    let py = py_run(
        "import sys, tarfile\n\
         for m in tarfile.open(sys.argv[1]):\n\
         \x20   print(m.name, m.type.decode(), oct(m.mode), m.uid, m.pax_headers.get('mtime', ''), m.size)",
        &[t.as_os_str()],
    );
    let py = lines(&py);
    assert_eq!(py[4], "a/x.txt 0 0o640 1000 1600000000.123456789 6");
    assert_eq!(py[0], "a 5 0o750 1000 1600000000.12345679 0");
    // The same entries as Python barecat's own converter writes.
    let pyt = tmp.path().join("py.tar");
    run_ok(
        py_barecat(),
        ["convert".as_ref(), arch.as_os_str(), pyt.as_os_str()],
    );
    let ours = run_ok(
        "tar",
        ["-tvf".as_ref(), t.as_os_str(), "--numeric-owner".as_ref()],
    );
    let theirs = run_ok(
        "tar",
        ["-tvf".as_ref(), pyt.as_os_str(), "--numeric-owner".as_ref()],
    );
    let strip = |s: &str| -> Vec<(String, String, String)> {
        s.lines()
            .map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                (f[0].to_string(), f[2].to_string(), f[5..].join(" "))
            })
            .collect()
    };
    assert_eq!(strip(&ours), strip(&theirs));
}

#[test]
fn tar_streams_into_tar() {
    need!("tar");
    let tmp = tempfile::tempdir().unwrap();
    let arch = sample(tmp.path());
    let out = tmp.path().join("dest");
    fs::create_dir(&out).unwrap();
    let script = format!(
        "set -o pipefail; '{}' -q '{}' - | tar -x -C '{}'",
        bin("barecat-to-tar").display(),
        arch.display(),
        out.display()
    );
    let o = run("bash", ["-c", &script]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stderr.is_empty(), "{}", stderr(&o));
    for (p, data) in sample_files() {
        assert_eq!(fs::read(out.join(p)).unwrap(), data, "{p}");
    }
    assert!(out.join("void/deeper").is_dir());
}

#[test]
fn tar_compression_by_flag_and_by_name() {
    need!("bsdtar");
    let tmp = tempfile::tempdir().unwrap();
    let arch = sample(tmp.path());
    let magic: &[(&str, &[u8])] = &[
        ("x.tar.gz", b"\x1f\x8b"),
        ("X.TGZ", b"\x1f\x8b"),
        ("x.tar.zst", b"\x28\xb5\x2f\xfd"),
        ("x.tzst", b"\x28\xb5\x2f\xfd"),
        ("x.tar.xz", b"\xfd7zXZ\x00"),
        ("x.TXZ", b"\xfd7zXZ\x00"),
        ("x.tar.bz2", b"BZh"),
        ("x.tbz2", b"BZh"),
        ("x.tar", b"PaxHeader/a\0"),
    ];
    for (name, m) in magic {
        let out = tmp.path().join(name);
        let o = to("barecat-to-tar", &[arch.as_os_str(), out.as_os_str()]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        assert!(fs::read(&out).unwrap().starts_with(m), "{name}");
        let listing = run_ok("bsdtar", ["-tf".as_ref(), out.as_os_str()]);
        assert_eq!(lines(&listing), SAMPLE_ENTRIES, "{name}");
    }
    // Flags win over the name, and work on standard output.
    for (flag, m) in [
        ("--gzip", &b"\x1f\x8b"[..]),
        ("--zstd", b"\x28\xb5\x2f\xfd"),
        ("--xz", b"\xfd7zXZ"),
        ("--bzip2", b"BZh"),
    ] {
        let o = to(
            "barecat-to-tar",
            &[
                flag.as_ref(),
                "--level=1".as_ref(),
                arch.as_os_str(),
                "-".as_ref(),
            ],
        );
        assert!(o.status.success(), "{flag}: {}", stderr(&o));
        assert!(o.stdout.starts_with(m), "{flag}");
    }
    let o = to(
        "barecat-to-tar",
        &[
            "--xz".as_ref(),
            "--gzip".as_ref(),
            arch.as_os_str(),
            "-".as_ref(),
        ],
    );
    assert_eq!(o.status.code(), Some(2), "one compression at a time");
    let o = to(
        "barecat-to-tar",
        &["--level=3".as_ref(), arch.as_os_str(), "-".as_ref()],
    );
    assert_eq!(o.status.code(), Some(2), "a level needs compression");
    let o = to(
        "barecat-to-tar",
        &[
            "--gzip".as_ref(),
            "--level=12".as_ref(),
            arch.as_os_str(),
            "-".as_ref(),
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
}

#[test]
fn pax_headers_for_long_names_times_and_ids() {
    need!("tar", "bsdtar", "barecat");
    let tmp = tempfile::tempdir().unwrap();
    let arch = tmp.path().join("pax.barecat");
    let long = format!(
        "{}/{}/{}.txt",
        "a".repeat(200),
        "b".repeat(200),
        "é".repeat(100)
    );
    let mut w = ArchiveWriter::open(&arch, WriterOptions::default()).unwrap();
    w.add_file(&long, meta(0o100600, T0), b"long", None)
        .unwrap();
    let old = Meta {
        mode: Some(0o100644),
        uid: Some(3_000_000),
        gid: Some(4_000_000),
        mtime_ns: Some(-1_500_000_000),
    };
    w.add_file("old.txt", old, b"1969", None).unwrap();
    w.add_file("nometa.txt", Meta::default(), b"?", None)
        .unwrap();
    w.finish().unwrap();
    let t = tmp.path().join("pax.tar");
    let o = to("barecat-to-tar", &[arch.as_os_str(), t.as_os_str()]);
    assert!(o.status.success(), "{}", stderr(&o));
    for tool in ["tar", "bsdtar"] {
        let out = tmp.path().join(tool);
        fs::create_dir(&out).unwrap();
        run_ok(
            tool,
            [
                "-xf".as_ref(),
                t.as_os_str(),
                "-C".as_ref(),
                out.as_os_str(),
            ],
        );
        assert_eq!(fs::read(out.join(&long)).unwrap(), b"long", "{tool}");
        assert_eq!(mtime_ns(&out.join(&long)), T0, "{tool}");
        // Before 1970: whole seconds (rounded down), which every reader agrees on.
        assert_eq!(mtime_ns(&out.join("old.txt")), -2_000_000_000, "{tool}");
        assert_eq!(mode_of(&out.join("nometa.txt")), 0o644, "{tool}");
    }
    let py = py_run(
        "import sys, tarfile\n\
         for m in tarfile.open(sys.argv[1]): print(len(m.name), m.uid, m.gid, m.mtime, oct(m.mode))",
        &[t.as_os_str()],
    );
    let py = lines(&py);
    assert!(
        py.contains(&format!(
            "{} 1000 1000 1600000000.1234567 0o600",
            long.chars().count()
        )),
        "{py:?}"
    );
    assert!(
        py.contains(&"7 3000000 4000000 -2.0 0o644".to_string()),
        "{py:?}"
    );
    assert!(py.contains(&"10 0 0 0 0o644".to_string()), "{py:?}");
}

#[test]
fn filters_mean_the_same_in_all_three_commands() {
    need!("bsdtar");
    let tmp = tempfile::tempdir().unwrap();
    let arch = sample(tmp.path());
    let sets: &[&[&str]] = &[
        &["a"],
        &["**/*.txt"],
        &["a/x.txt", "void"],
        &["?op.bin", "ünï"],
    ];
    for (i, ops) in sets.iter().enumerate() {
        let ops: Vec<&OsStr> = ops.iter().map(OsStr::new).collect();
        let dest = tmp.path().join(format!("x{i}"));
        let mut args = vec![arch.as_os_str(), "-C".as_ref(), dest.as_os_str()];
        args.extend_from_slice(&ops);
        assert!(run(bin("barecat-extract"), &args).status.success());
        // What extract created, minus the parents it had to create for single files.
        let extracted: Vec<String> = tree(&dest);
        let mut listed = Vec::new();
        for (cmd, name) in [("barecat-to-zip", "x.zip"), ("barecat-to-tar", "x.tar")] {
            let out = tmp.path().join(format!("{i}{name}"));
            let mut args = vec![arch.as_os_str(), out.as_os_str()];
            args.extend_from_slice(&ops);
            let o = run(bin(cmd), &args);
            assert!(o.status.success(), "{}", stderr(&o));
            let l = run_ok("bsdtar", ["-tf".as_ref(), out.as_os_str()]);
            listed.push(lines(&l));
        }
        assert_eq!(listed[0], listed[1], "{ops:?}");
        for entry in &listed[0] {
            assert!(extracted.contains(entry), "{ops:?}: {entry} not extracted");
        }
        for e in &extracted {
            assert!(
                listed[0].contains(e)
                    || (e.ends_with('/') && listed[0].iter().any(|l| l.starts_with(e.as_str()))),
                "{ops:?}: {e} extracted but not exported"
            );
        }
    }
}

#[test]
fn corrupt_members_are_left_out_of_a_valid_output() {
    need!("bsdtar", "unzip");
    let tmp = tempfile::tempdir().unwrap();
    let arch = sample(tmp.path());
    corrupt(&arch, "a/x.txt");
    for (cmd, name) in [("barecat-to-zip", "c.zip"), ("barecat-to-tar", "c.tar.gz")] {
        let out = tmp.path().join(name);
        let o = to(cmd, &[arch.as_os_str(), out.as_os_str()]);
        assert_eq!(o.status.code(), Some(1), "{cmd}");
        let err = stderr(&o);
        assert!(
            err.contains("a/x.txt: CRC32C mismatch") && err.contains("1 left out"),
            "{err}"
        );
        let l = lines(&run_ok("bsdtar", ["-tf".as_ref(), out.as_os_str()]));
        assert_eq!(l.len(), SAMPLE_ENTRIES.len() - 1);
        assert!(!l.contains(&"a/x.txt".to_string()));
    }
    let zip = tmp.path().join("c.zip");
    assert!(run_ok("unzip", ["-t".as_ref(), zip.as_os_str()]).contains("No errors"));
}

#[test]
fn outputs_appear_whole_or_not_at_all() {
    need!("unzip");
    let tmp = tempfile::tempdir().unwrap();
    let arch = sample(tmp.path());
    let z = tmp.path().join("o.zip");
    fs::write(&z, b"old").unwrap();
    let o = to("barecat-to-zip", &[arch.as_os_str(), z.as_os_str()]);
    assert_eq!(o.status.code(), Some(1));
    assert_clean_error(&o);
    assert!(stderr(&o).contains("already exists (use -f/--force"));
    assert_eq!(fs::read(&z).unwrap(), b"old");
    let o = to(
        "barecat-to-zip",
        &["-f".as_ref(), arch.as_os_str(), z.as_os_str()],
    );
    assert!(o.status.success());
    assert!(run_ok("unzip", ["-t".as_ref(), z.as_os_str()]).contains("No errors"));
    // A failure leaves nothing: no output, no temporary file.
    let before: Vec<PathBuf> = fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let missing = tmp.path().join("missing.barecat");
    let t = tmp.path().join("never.tar");
    let o = to("barecat-to-tar", &[missing.as_os_str(), t.as_os_str()]);
    assert_eq!(o.status.code(), Some(1));
    assert_clean_error(&o);
    let o = to(
        "barecat-to-tar",
        &[
            arch.as_os_str(),
            tmp.path().join("no/such/dir.tar").as_os_str(),
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    assert_clean_error(&o);
    let after: Vec<PathBuf> = fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(before, after);
    // Special files are written to, not replaced.
    let o = to("barecat-to-tar", &[arch.as_os_str(), "/dev/null".as_ref()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(Path::new("/dev/null")
        .metadata()
        .unwrap()
        .file_type()
        .is_char_device_like());
}

trait CharDevice {
    fn is_char_device_like(&self) -> bool;
}

impl CharDevice for fs::FileType {
    fn is_char_device_like(&self) -> bool {
        std::os::unix::fs::FileTypeExt::is_char_device(self)
    }
}

#[test]
fn legacy_barecat2archive_picks_the_format_from_the_name() {
    need!("bsdtar", "unzip");
    let tmp = tempfile::tempdir().unwrap();
    let arch = sample(tmp.path());
    for name in ["l.zip", "l.tar", "l.tgz", "L.TAR.BZ2", "l.txz"] {
        let out = tmp.path().join(name);
        fs::write(&out, b"replaced").unwrap();
        let o = run(bin("barecat2archive"), [arch.as_os_str(), out.as_os_str()]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let l = run_ok("bsdtar", ["-tf".as_ref(), out.as_os_str()]);
        assert_eq!(lines(&l), SAMPLE_ENTRIES, "{name}");
    }
    let zip = tmp.path().join("l.zip");
    assert!(run_ok("unzip", ["-t".as_ref(), zip.as_os_str()]).contains("No errors"));
    let o = run(
        bin("barecat2archive"),
        [arch.as_os_str(), tmp.path().join("l.rar").as_os_str()],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(!tmp.path().join("l.rar").exists());
}
