//! Tar and zip files as other tools wrote them over the years, built byte by byte
//! (checksums included), imported and compared with what GNU tar, bsdtar and
//! Python's tarfile and zipfile see in them: sizes on headers that carry no data,
//! signed checksums, Solaris `X` headers, duplicate names, names that are not UTF-8,
//! zip names with Windows backslashes. Every file a reference reader sees is
//! stored with identical bytes or reported on its own line
//! ([`crate::support::reference::violations`]).

use std::fs;
use std::path::Path;

use crate::support::ingest::*;
use crate::support::reference::*;
use crate::support::*;
use barecat::Archive;

/// Write `bytes` as `name` under `dir`.
fn put(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let p = dir.join(name);
    fs::write(&p, bytes).unwrap();
    p
}

fn cat(parts: &[Vec<u8>]) -> Vec<u8> {
    parts.concat()
}

/// What GNU tar, bsdtar and Python's tarfile see in a tar.
fn three_views(tar: &Path) -> Vec<View> {
    vec![
        tar_view("tar", tar),
        tar_view("bsdtar", tar),
        py_view("tarfile", tar),
    ]
}

/// The case: a directory header with a size and no data blocks, then an
/// empty file and a file. Before the fix the empty file was swallowed with exit 0.
#[test]
fn a_directory_header_with_a_size_loses_nothing() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let tar = put(
        dir.path(),
        "d.tar",
        &cat(&[
            header(&Hdr {
                name: b"d/",
                typeflag: b'5',
                size: 255,
                mode: 0o755,
                ..Hdr::default()
            }),
            file(b"empty-file", b""),
            file(b"after", b"abc"),
            end(),
        ]),
    );
    for (cmd, arch) in [
        ("barecat-from-tar", "t.barecat"),
        // merge reads tar inputs with the same reader.
        ("barecat-merge", "m.barecat"),
    ] {
        let arch = dir.path().join(arch);
        let o = if cmd == "barecat-merge" {
            run(
                bin(cmd),
                [&"-o".as_ref(), &arch.as_os_str(), &tar.as_os_str()],
            )
        } else {
            run(bin(cmd), [tar.as_os_str(), arch.as_os_str()])
        };
        assert_eq!(code(&o), 0, "{cmd}: {}", stderr(&o));
        let c = contents(&arch);
        assert_eq!(c.len(), 2, "{cmd}: {:?}", c.keys());
        assert_eq!(c["empty-file"], b"");
        assert_eq!(c["after"], b"abc");
        assert!(dir_paths(&arch).contains("d"));
        let a = Archive::open(&arch).unwrap();
        let Some(barecat::Entry::Dir(d)) = a.lookup("d").unwrap() else {
            panic!("d is not a directory")
        };
        assert_eq!(d.meta.mode, Some(0o40755));
        drop(a);
        check(&arch);
    }
}

/// A header type that carries no data, with a size of 255, with or without data
/// blocks behind it: which reference readers see the member after it.
#[derive(Debug, Clone, Copy)]
struct Case {
    /// The type flag; `b'0'` and `0` get a name ending in '/'.
    typeflag: u8,
    format: Format,
    pax: bool,
    with_data: bool,
}

impl Case {
    /// Whether `reader` lists the empty file after the header (measured with GNU tar
    /// 1.34, bsdtar 3.6.2 and Python 3.11's tarfile; see src/ingest/tar_reader.rs).
    fn reader_sees_next(&self, reader: &str) -> bool {
        let t = self.typeflag;
        match reader {
            // GNU tar skips the size except for hard links and directories.
            "tar" => self.with_data || matches!(t, b'1' | b'5'),
            // Ignores the size except for a hard link in a PAX archive; fails on the
            // data after a volume label.
            "bsdtar" => match t {
                b'V' => !self.with_data,
                b'1' if self.pax => self.with_data,
                _ => true,
            },
            // Skips the size of a volume label and of '0' with a trailing slash;
            // stops at data blocks it does not expect.
            _ => match t {
                b'V' | b'0' => self.with_data,
                _ => !self.with_data,
            },
        }
    }

    /// Members whose content in `reader`'s view is not one to match, the two other
    /// readers agreeing on another: where it takes the next header for a file's data
    /// (garbage), or the bytes after a hard link for the content of the link's
    /// target too (bsdtar in a PAX archive; the link itself is reported).
    fn not_matched(&self, reader: &str) -> &'static [&'static [u8]] {
        match (reader, self.typeflag, self.pax, self.with_data) {
            ("bsdtar", b'1', true, false) => &[b"f0", b"x"],
            ("bsdtar", b'1', true, true) => &[b"f0"],
            ("tarfile", b'0', _, false) => &[b"d/"],
            _ => &[],
        }
    }

    /// Data blocks that one reader reads as a file's content, and we do not.
    fn disputed(&self) -> bool {
        self.with_data && matches!(self.typeflag, b'1' | b'0')
    }

    fn tar(&self) -> Vec<u8> {
        let name: &[u8] = match self.typeflag {
            b'5' => b"x/",
            b'0' | 0 => b"d/",
            _ => b"x",
        };
        let link: &[u8] = if matches!(self.typeflag, b'1' | b'2') {
            b"f0"
        } else {
            b""
        };
        let h = |name: &'static [u8], typeflag: u8, size: u64| Hdr {
            name,
            typeflag,
            size,
            format: self.format,
            ..Hdr::default()
        };
        let mut v = header(&h(b"f0", b'0', 2));
        v.extend(data(b"f0"));
        if self.pax {
            v.extend(pax(b'x', &[("mtime", b"1.5")]));
        }
        v.extend(header(&Hdr {
            name,
            typeflag: self.typeflag,
            size: 255,
            link,
            format: self.format,
            ..Hdr::default()
        }));
        if self.with_data {
            v.extend(data(&[b'Q'; 255]));
        }
        v.extend(header(&h(b"empty-file", b'0', 0)));
        v.extend(header(&h(b"after", b'0', 3)));
        v.extend(data(b"abc"));
        v.extend(end());
        v
    }
}

#[test]
fn sizes_on_headers_without_data_follow_the_reference_readers() {
    need!("tar", "bsdtar", "barecat");
    let dir = tempfile::tempdir().unwrap();
    let mut cases = Vec::new();
    for typeflag in [b'1', b'2', b'3', b'4', b'5', b'6', b'V', b'0', 0] {
        for (format, pax) in [
            (Format::Ustar, false),
            (Format::Gnu, false),
            (Format::V7, false),
            (Format::Ustar, true),
        ] {
            for with_data in [false, true] {
                cases.push(Case {
                    typeflag,
                    format,
                    pax,
                    with_data,
                });
            }
        }
    }
    let mut failures = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let tar = put(dir.path(), &format!("{i}.tar"), &case.tar());
        // The readers behave as documented.
        let views = three_views(&tar);
        for v in &views {
            let sees = v.names.iter().any(|n| n == b"empty-file");
            if sees != case.reader_sees_next(v.reader) {
                failures.push(format!("{case:?}: {} lists {:?}", v.reader, v.names));
            }
        }
        // Ours reads every member, whatever the readers do.
        let imp = import(
            "barecat-from-tar",
            &tar,
            &dir.path().join(format!("{i}.barecat")),
            &[],
        );
        let mut want: Vec<(&str, &[u8])> =
            vec![("after", b"abc"), ("empty-file", b""), ("f0", b"f0")];
        if case.typeflag == b'1' {
            want.push(("x", b"f0"));
        }
        let got: Vec<(&str, &[u8])> = imp
            .stored
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_slice()))
            .collect();
        if got != want || imp.code != i32::from(case.disputed()) {
            failures.push(format!(
                "{case:?}: stored {:?}, exit {}: {}",
                imp.stored.keys().collect::<Vec<_>>(),
                imp.code,
                imp.stderr
            ));
        }
        // Data behind such a header is skipped with a note, or an error where a
        // reader takes it for a file's content; nothing is said when there is none.
        let noted = imp.stderr.contains("bytes of data");
        if noted != case.with_data {
            failures.push(format!("{case:?}: note {noted}: {}", imp.stderr));
        }
        // What every reader sees is stored or reported.
        for mut v in views {
            let skip = case.not_matched(v.reader);
            v.files.retain(|(n, _)| !skip.contains(&n.as_slice()));
            failures.extend(violations(&v, &imp, &[], false, &mut Vec::new()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn signed_checksums_are_accepted_and_bad_ones_skip_one_member() {
    need!("tar", "bsdtar", "barecat");
    let dir = tempfile::tempdir().unwrap();
    // High bytes in the owner name make the signed sum differ from the unsigned one.
    let signed = |name: &'static [u8], content: &[u8]| {
        let mut v = header(&Hdr {
            name,
            size: content.len() as u64,
            uname: b"\xe4\xf6\xfc\xc4",
            checksum: Checksum::Signed,
            ..Hdr::default()
        });
        v.extend(data(content));
        v
    };
    let first = signed(b"first", b"1st");
    assert_ne!(
        first[..512].iter().map(|&b| b as i64).sum::<i64>(),
        first[..512].iter().map(|&b| b as i8 as i64).sum::<i64>()
    );
    let mut damaged = header(&Hdr {
        name: b"damaged",
        size: 600,
        checksum: Checksum::Wrong,
        ..Hdr::default()
    });
    damaged.extend(data(&pseudo_random(5, 600)));
    let tar = put(
        dir.path(),
        "s.tar",
        &cat(&[
            first,
            file(b"plain", b"plain"),
            signed(b"middle", b"mid"),
            damaged,
            file(b"last", b"last"),
            end(),
        ]),
    );
    let imp = import("barecat-from-tar", &tar, &dir.path().join("s.barecat"), &[]);
    let keys: Vec<&str> = imp.stored.keys().map(String::as_str).collect();
    assert_eq!(keys, ["first", "last", "middle", "plain"], "{}", imp.stderr);
    assert_eq!(imp.code, 1, "{}", imp.stderr);
    let line = line_naming(&imp.stderr, tar.to_str().unwrap().as_bytes()).unwrap();
    assert!(
        line.contains("damaged header at byte 3072 (header checksum mismatch")
            && line.contains("its name field reads \"damaged\"")
            && line.contains("reading goes on at byte 4608"),
        "{line}"
    );
    for v in three_views(&tar) {
        for n in ["first", "plain", "middle"] {
            assert!(
                v.names.iter().any(|x| x == n.as_bytes()),
                "{} misses {n}: {v:?}",
                v.reader
            );
        }
        let bad = violations(&v, &imp, &[], false, &mut Vec::new());
        assert!(bad.is_empty(), "{}", bad.join("\n"));
    }
    // A signed checksum on the only header is a tar too (it was "not a tar").
    let one = put(dir.path(), "one.tar", &cat(&[signed(b"only", b"x"), end()]));
    let imp = import(
        "barecat-from-tar",
        &one,
        &dir.path().join("one.barecat"),
        &[],
    );
    assert_eq!(imp.code, 0, "{}", imp.stderr);
    assert_eq!(imp.stored["only"], b"x");
    // A wrong checksum on the first header: not a tar.
    let bad = put(
        dir.path(),
        "bad.tar",
        &cat(&[
            header(&Hdr {
                name: b"x",
                checksum: Checksum::Wrong,
                ..Hdr::default()
            }),
            end(),
        ]),
    );
    let arch = dir.path().join("bad.barecat");
    let o = run(bin("barecat-from-tar"), [bad.as_os_str(), arch.as_os_str()]);
    assert_eq!(code(&o), 1);
    assert_clean_error(&o);
    assert!(stderr(&o).contains("not a tar archive"), "{}", stderr(&o));
    assert!(!arch.exists());
}

#[test]
fn solaris_x_headers_and_global_pax_headers() {
    need!("tar", "barecat");
    let dir = tempfile::tempdir().unwrap();
    let long = format!("{}/file.txt", "solaris".repeat(20));
    let tar = put(
        dir.path(),
        "x.tar",
        &cat(&[
            pax(b'g', &[("mtime", b"1500000000.5"), ("uid", b"4242")]),
            pax(
                b'X',
                &[
                    ("path", long.as_bytes()),
                    ("mtime", b"1041808783.123456789"),
                ],
            ),
            file(b"truncated-name", b"solaris"),
            file(b"global", b"g"),
            pax(b'x', &[("mtime", b"7.25"), ("uid", b"7")]),
            file(b"own", b"o"),
            end(),
        ]),
    );
    let arch = dir.path().join("x.barecat");
    let imp = import("barecat-from-tar", &tar, &arch, &[]);
    assert_eq!(imp.code, 0, "{}", imp.stderr);
    assert_eq!(imp.stored[&long], b"solaris");
    let a = Archive::open(&arch).unwrap();
    let meta = |p: &str| a.file_info(p).unwrap().meta;
    assert_eq!(meta(&long).mtime_ns, Some(1_041_808_783_123_456_789));
    // Global records give what a member's own records and header do not.
    assert_eq!(meta(&long).uid, Some(4242));
    assert_eq!(meta("global").mtime_ns, Some(1_500_000_000_500_000_000));
    assert_eq!(meta("global").uid, Some(4242));
    assert_eq!(meta("own").mtime_ns, Some(7_250_000_000));
    assert_eq!(meta("own").uid, Some(7));
    drop(a);
    // GNU tar reads the X header the same way.
    let v = tar_view("tar", &tar);
    assert!(v.names.iter().any(|n| n == long.as_bytes()), "{v:?}");
    assert!(violations(&v, &imp, &[], false, &mut Vec::new()).is_empty());
    check(&arch);
}

/// `a` three times (the second one streamed), a hard link to it between the second
/// and the third, as `tar -r` leaves an archive.
fn duplicates_tar(dir: &Path) -> (std::path::PathBuf, Vec<u8>, Vec<u8>, Vec<u8>) {
    let (v1, v2, v3) = (
        b"first".to_vec(),
        pseudo_random(2, 100_000),
        b"third!".to_vec(),
    );
    let tar = put(
        dir,
        "dup.tar",
        &cat(&[
            file(b"a", &v1),
            file(b"b", b"b"),
            file(b"a", &v2),
            header(&Hdr {
                name: b"hl",
                typeflag: b'1',
                link: b"a",
                ..Hdr::default()
            }),
            file(b"./a", &v3),
            end(),
        ]),
    );
    (tar, v1, v2, v3)
}

#[test]
fn duplicate_names_keep_what_tar_x_leaves() {
    need!("tar", "barecat");
    let dir = tempfile::tempdir().unwrap();
    let (tar, v1, v2, v3) = duplicates_tar(dir.path());
    // What extraction leaves: the last a, and the hard link to the a before it.
    let x = tar_view("tar", &tar);
    let extracted: std::collections::BTreeMap<String, Vec<u8>> = x
        .files
        .iter()
        .map(|(n, d)| (String::from_utf8(n.clone()).unwrap(), d.clone()))
        .collect();
    assert_eq!(extracted["a"], v3);
    assert_eq!(extracted["hl"], v2);
    let small = ["--buffer-size", "256K"];
    for (flag, want_code, want) in [(None, 1, &extracted), (Some("last"), 0, &extracted)] {
        let mut args = small.to_vec();
        if let Some(f) = flag {
            args.extend(["--duplicates", f]);
        }
        let arch = dir.path().join(format!("{flag:?}.barecat"));
        let imp = import("barecat-from-tar", &tar, &arch, &args);
        assert_eq!(imp.code, want_code, "{flag:?}: {}", imp.stderr);
        assert_eq!(&imp.stored, want, "{flag:?}");
        let lines: Vec<&str> = imp
            .stderr
            .lines()
            .filter(|l| l.contains("duplicate name"))
            .collect();
        assert_eq!(lines.len(), 2, "one line per duplicate: {}", imp.stderr);
        assert!(
            lines[0].starts_with(
                "barecat-from-tar: a: duplicate name: replaces an earlier copy (5 bytes)"
            ),
            "{}",
            lines[0]
        );
        assert!(
            lines[1].starts_with(
                "barecat-from-tar: a: duplicate name: replaces an earlier copy (100000 bytes)"
            ),
            "{}",
            lines[1]
        );
        assert_eq!(
            lines[0].contains("--duplicates last accepts this"),
            flag.is_none(),
            "{}",
            lines[0]
        );
        assert!(
            imp.stderr
                .contains("2 files replaced by a later member of the same name"),
            "{}",
            imp.stderr
        );
        // Every copy tarfile lists is stored or named.
        let v = py_view("tarfile", &tar);
        // Chosen with --duplicates, the earlier copies are left out with exit 0.
        let chosen = flag.is_some();
        let bad = violations(&v, &imp, &[], chosen, &mut Vec::new());
        assert!(bad.is_empty(), "{}", bad.join("\n"));
        check(&arch);
    }
    // The first copy wins.
    let arch = dir.path().join("first.barecat");
    let imp = import(
        "barecat-from-tar",
        &tar,
        &arch,
        &["--duplicates", "first", "--buffer-size", "256K"],
    );
    assert_eq!(imp.code, 0, "{}", imp.stderr);
    assert_eq!(imp.stored["a"], v1);
    assert_eq!(imp.stored["hl"], v1);
    assert_eq!(
        imp.stderr
            .matches("an earlier copy is kept, this one is skipped")
            .count(),
        2,
        "{}",
        imp.stderr
    );
    check(&arch);
    // Or the first duplicate stops the import; what came before is kept.
    let arch = dir.path().join("error.barecat");
    let imp = import("barecat-from-tar", &tar, &arch, &["--duplicates", "error"]);
    assert_eq!(imp.code, 1);
    assert!(
        imp.stderr
            .contains("a: duplicate name: an earlier entry has it"),
        "{}",
        imp.stderr
    );
    assert_eq!(imp.stored.keys().collect::<Vec<_>>(), ["a", "b"]);
    check(&arch);
    // A usage error for anything else.
    let o = run(
        bin("barecat-from-tar"),
        [
            "--duplicates".as_ref(),
            "middle".as_ref(),
            tar.as_os_str(),
            dir.path().join("u.barecat").as_os_str(),
        ],
    );
    assert_eq!(code(&o), 2);
}

#[test]
fn merge_takes_duplicates_of_tar_inputs_as_asked() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let (tar, _v1, _v2, v3) = duplicates_tar(dir.path());
    // An input holding `a` before the tar.
    let pre = dir.path().join("pre");
    write_tree(&pre, &[("a", b"from the barecat input"), ("z", b"z")]);
    let input = dir.path().join("in.barecat");
    let o = run(
        bin("barecat-create"),
        [
            "-q".as_ref(),
            "-C".as_ref(),
            pre.as_os_str(),
            input.as_os_str(),
            "a".as_ref(),
            "z".as_ref(),
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let merge = |out: &str, extra: &[&str]| {
        let out = dir.path().join(out);
        let mut args: Vec<std::ffi::OsString> = extra.iter().map(|s| s.into()).collect();
        args.extend([
            "-o".into(),
            out.clone().into(),
            input.clone().into(),
            tar.clone().into(),
        ]);
        (run(bin("barecat-merge"), args), out)
    };
    // Fails by default, naming the path and the options.
    let (o, out) = merge("err.barecat", &[]);
    assert_eq!(code(&o), 1);
    assert_clean_error(&o);
    assert!(stderr(&o).contains("--duplicates last"), "{}", stderr(&o));
    assert!(!out.exists());
    // First: the barecat input's a; the hard link takes that copy.
    for flag in [&["--duplicates", "first"][..], &["--ignore-duplicates"][..]] {
        let (o, out) = merge("first.barecat", flag);
        assert_eq!(code(&o), 0, "{flag:?}: {}", stderr(&o));
        let c = contents(&out);
        assert_eq!(c["a"], b"from the barecat input", "{flag:?}");
        assert_eq!(c["hl"], b"from the barecat input", "{flag:?}");
        fs::remove_file(&out).unwrap();
        for s in barecat::Layout::current(&out).shard_files().unwrap() {
            fs::remove_file(s.path).unwrap();
        }
    }
    // Last: the tar's last a, the hard link to the copy before it.
    let (o, out) = merge("last.barecat", &["--duplicates", "last"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let c = contents(&out);
    assert_eq!(c["a"], v3);
    assert_eq!(c["z"], b"z");
    assert!(
        stdout_of(&o).contains("3 duplicate(s) left out"),
        "{}",
        stdout_of(&o)
    );
    check(&out);
    // --symlink keeps the first only.
    let (o, _) = merge("sym.barecat", &["--symlink", "--duplicates", "last"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
}

fn stdout_of(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn names_that_are_not_utf8_are_shown_with_their_bytes_escaped() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let tar = put(
        dir.path(),
        "n.tar",
        &cat(&[
            file(b"caf\xe9.txt", b"latin-1"),
            file(b"line\nbreak\\x", b"ok"),
            header(&Hdr {
                name: b"link",
                typeflag: b'1',
                link: b"t\xff",
                ..Hdr::default()
            }),
            header(&Hdr {
                name: b"sym\x01",
                typeflag: b'2',
                link: b"to\tthere",
                ..Hdr::default()
            }),
            end(),
        ]),
    );
    let imp = import(
        "barecat-from-tar",
        &tar,
        &dir.path().join("n.barecat"),
        &["--symlinks", "error"],
    );
    assert_eq!(imp.code, 1);
    for line in [
        "barecat-from-tar: caf\\xe9.txt: member name is not valid UTF-8; skipped",
        "barecat-from-tar: link: hard link to \"t\\xff\", a name that is not UTF-8; skipped",
        "barecat-from-tar: sym\\x01: symbolic link to \"to\\tthere\"; skipped",
    ] {
        assert!(
            imp.stderr.lines().any(|l| l == line),
            "missing {line:?} in\n{}",
            imp.stderr
        );
    }
    // A name with a line break is stored as it is, and shown on one line.
    assert_eq!(imp.stored["line\nbreak\\x"], b"ok");
    assert!(!imp.stderr.contains("\u{fffd}"), "{}", imp.stderr);
}

#[test]
fn unknown_types_labels_continuations_and_what_follows_the_end() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let typed = |name: &'static [u8], typeflag: u8, content: &[u8]| {
        let mut v = header(&Hdr {
            name,
            typeflag,
            size: content.len() as u64,
            ..Hdr::default()
        });
        v.extend(data(content));
        v
    };
    let mut bytes = cat(&[
        typed(b"label", b'V', b""),
        typed(b"vendor", b'Z', b"unknown type"),
        typed(b"cont", b'M', b"continued"),
        file(b"ok", b"ok"),
        vec![0u8; 512],
    ]);
    // A lone zero block, then a member nobody reads.
    bytes.extend(file(b"hidden", b"hidden"));
    bytes.extend(end());
    let tar = put(dir.path(), "t.tar", &bytes);
    let imp = import("barecat-from-tar", &tar, &dir.path().join("t.barecat"), &[]);
    assert_eq!(imp.code, 1, "{}", imp.stderr);
    assert_eq!(imp.stored.keys().collect::<Vec<_>>(), ["ok", "vendor"]);
    assert_eq!(imp.stored["vendor"], b"unknown type");
    for needle in [
        "vendor: unknown tar entry type 'Z': stored as a regular file",
        "cont: continues a file from an earlier volume of a multi-volume archive; skipped",
        "a lone zero block at byte 3584 ends the archive",
    ] {
        assert!(
            imp.stderr.contains(needle),
            "missing {needle:?}:\n{}",
            imp.stderr
        );
    }
    // Another tar appended after the end marker: noted, not read (as tar -x).
    let tar2 = put(
        dir.path(),
        "cat.tar",
        &cat(&[file(b"one", b"1"), end(), file(b"two", b"2"), end()]),
    );
    let imp = import(
        "barecat-from-tar",
        &tar2,
        &dir.path().join("c.barecat"),
        &[],
    );
    assert_eq!(imp.code, 0, "{}", imp.stderr);
    assert_eq!(imp.stored.keys().collect::<Vec<_>>(), ["one"]);
    assert!(
        imp.stderr
            .contains("the archive ends at byte 1024, but data follows at byte 2048"),
        "{}",
        imp.stderr
    );
}

// ------------------------------------------------------------------ zip

/// A stored zip entry: name, content, host (0 MS-DOS, 3 Unix).
struct ZipEntry<'a> {
    name: &'a [u8],
    content: &'a [u8],
    host: u8,
}

/// A zip file built byte by byte (stored entries, CRC-32 included), after
/// `prefix` (as a self-extracting zip has its program in front).
fn zip_bytes_after(prefix: &[u8], entries: &[ZipEntry]) -> Vec<u8> {
    let mut out = prefix.to_vec();
    let mut central = Vec::new();
    for e in entries {
        let offset = out.len() as u32;
        let crc = crc32fast::hash(e.content);
        let len = e.content.len() as u32;
        let common = |v: &mut Vec<u8>| {
            v.extend(20u16.to_le_bytes()); // version needed
            v.extend(0u16.to_le_bytes()); // flags
            v.extend(0u16.to_le_bytes()); // stored
            v.extend(0u16.to_le_bytes()); // time
            v.extend(0x5821u16.to_le_bytes()); // date 2024-01-01
            v.extend(crc.to_le_bytes());
            v.extend(len.to_le_bytes());
            v.extend(len.to_le_bytes());
            v.extend((e.name.len() as u16).to_le_bytes());
            v.extend(0u16.to_le_bytes()); // extra
        };
        out.extend(b"PK\x03\x04");
        common(&mut out);
        out.extend(e.name);
        out.extend(e.content);
        central.extend(b"PK\x01\x02");
        central.extend(((e.host as u16) << 8 | 20).to_le_bytes());
        common(&mut central);
        central.extend(0u16.to_le_bytes()); // comment
        central.extend(0u16.to_le_bytes()); // disk
        central.extend(0u16.to_le_bytes()); // internal attributes
        let external: u32 = if e.host == 3 { 0o100644 << 16 } else { 0x20 };
        central.extend(external.to_le_bytes());
        central.extend(offset.to_le_bytes());
        central.extend(e.name);
    }
    let cd_offset = out.len() as u32;
    out.extend(&central);
    out.extend(b"PK\x05\x06");
    out.extend(0u16.to_le_bytes());
    out.extend(0u16.to_le_bytes());
    out.extend((entries.len() as u16).to_le_bytes());
    out.extend((entries.len() as u16).to_le_bytes());
    out.extend((central.len() as u32).to_le_bytes());
    out.extend(cd_offset.to_le_bytes());
    out.extend(0u16.to_le_bytes());
    out
}

fn zip_bytes(entries: &[ZipEntry]) -> Vec<u8> {
    zip_bytes_after(b"", entries)
}

#[test]
fn zip_names_with_windows_backslashes_are_paths() {
    need!("unzip", "barecat");
    let dir = tempfile::tempdir().unwrap();
    let zip = put(
        dir.path(),
        "b.zip",
        &zip_bytes(&[
            ZipEntry {
                name: b"a\\b\\c",
                content: b"abc",
                host: 0,
            },
            ZipEntry {
                name: b"d\\e\\",
                content: b"",
                host: 0,
            },
            // A slash too: the backslash is part of a name.
            ZipEntry {
                name: b"w\\v/u",
                content: b"wvu",
                host: 0,
            },
            // Made on Unix: a backslash may be part of a name there.
            ZipEntry {
                name: b"x\\y",
                content: b"xy",
                host: 3,
            },
        ]),
    );
    let arch = dir.path().join("b.barecat");
    let imp = import("barecat-from-zip", &zip, &arch, &[]);
    assert_eq!(imp.code, 0, "{}", imp.stderr);
    let keys: Vec<&str> = imp.stored.keys().map(String::as_str).collect();
    assert_eq!(keys, ["a/b/c", "w\\v/u", "x\\y"]);
    assert!(imp.dirs.contains("d/e"), "{:?}", imp.dirs);
    for line in [
        "barecat-from-zip: a\\\\b\\\\c: written on Windows with '\\' as the path separator: stored as \"a/b/c\"",
        "barecat-from-zip: d\\\\e\\\\: written on Windows with '\\' as the path separator: stored as \"d/e/\"",
    ] {
        assert!(
            imp.stderr.lines().any(|l| l.starts_with(line)),
            "missing {line:?} in\n{}",
            imp.stderr
        );
    }
    check(&arch);
    // Info-ZIP's unzip makes the same paths.
    let out = dir.path().join("unzipped");
    fs::create_dir(&out).unwrap();
    let o = std::process::Command::new("unzip")
        .arg("-q")
        .arg(&zip)
        .current_dir(&out)
        .output_bounded()
        .unwrap();
    assert!(o.status.success() || code(&o) == 1, "{}", stderr(&o));
    assert_eq!(fs::read(out.join("a/b/c")).unwrap(), b"abc");
    assert!(out.join("d/e").is_dir());
    // zipfile keeps the backslashes: those two are stored elsewhere, and named.
    let v = py_view("zipfile", &zip);
    let instead = [
        (&b"a\\b\\c"[..], Instead::File("a/b/c")),
        (&b"d\\e\\"[..], Instead::Dir("d/e")),
    ];
    let bad = violations(&v, &imp, &instead, false, &mut Vec::new());
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn zip_entries_of_one_name_keep_the_last_and_are_reported() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let entry = |name: &'static [u8], content: &'static [u8]| ZipEntry {
        name,
        content,
        host: 3,
    };
    let zip = put(
        dir.path(),
        "d.zip",
        &zip_bytes_after(
            b"#!/bin/sh\nexit 0\n",
            &[
                entry(b"dup", b"first"),
                entry(b"other", b"o"),
                entry(b"dup", b"second"),
                entry(b"./other", b"o2"),
            ],
        ),
    );
    let imp = import("barecat-from-zip", &zip, &dir.path().join("d.barecat"), &[]);
    assert_eq!(imp.code, 1, "{}", imp.stderr);
    assert_eq!(imp.stored["dup"], b"second");
    assert_eq!(imp.stored["other"], b"o2");
    assert!(
        imp.stderr.contains(
            "dup: 2 entries of this name: the last is stored (as unzip and Python's zipfile \
             extract it), the earlier ones are not"
        ),
        "{}",
        imp.stderr
    );
    assert!(
        imp.stderr
            .contains("other: duplicate name: replaces an earlier copy (1 byte)"),
        "{}",
        imp.stderr
    );
    let v = py_view("zipfile", &zip);
    assert_eq!(v.files.len(), 4);
    let bad = violations(&v, &imp, &[], false, &mut Vec::new());
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    // --duplicates error stops at the name; last accepts it with exit 0.
    let imp = import(
        "barecat-from-zip",
        &zip,
        &dir.path().join("e.barecat"),
        &["--duplicates", "error"],
    );
    assert_eq!(imp.code, 1);
    assert!(
        imp.stderr.contains("dup: duplicate name: 2 entries"),
        "{}",
        imp.stderr
    );
    let imp = import(
        "barecat-from-zip",
        &zip,
        &dir.path().join("l.barecat"),
        &["--duplicates", "last"],
    );
    assert_eq!(imp.code, 0, "{}", imp.stderr);
}
