//! `barecat-from-tar` (and the legacy `archive2barecat`) on tar files made at test
//! time by GNU tar, bsdtar and Python's tarfile.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::os::unix::fs::{symlink, MetadataExt};
use std::path::{Path, PathBuf};

use crate::support::ingest::*;
use crate::support::*;
use barecat::{Archive, Entry};

fn from_tar() -> PathBuf {
    bin("barecat-from-tar")
}

const LONG_DIR: &str = "a_directory_name_that_is_quite_long_to_push_paths_over_one_hundred_bytes";
const LONG_NAME: &str = "a_file_name_longer_than_the_one_hundred_bytes_of_the_old_ustar_name_field_so_it_needs_gnu_or_pax_headers.txt";

/// A tree for the tar tests; returns the files a conversion must produce (the hard
/// link included, the symbolic link not).
fn tar_tree(root: &Path, long_names: bool) -> BTreeMap<String, Vec<u8>> {
    let mut files: Vec<(String, Vec<u8>)> = vec![
        ("t/empty".into(), vec![]),
        ("t/x.txt".into(), b"hello\n".to_vec()),
        ("t/ünï/файл.bin".into(), pseudo_random(3, 5000)),
        ("t/sub/deeper/big.bin".into(), pseudo_random(4, 200_000)),
    ];
    if long_names {
        files.push((
            format!("t/{LONG_DIR}/{LONG_DIR}/{LONG_NAME}"),
            b"long".to_vec(),
        ));
    }
    for (p, d) in &files {
        let full = root.join(p);
        fs::create_dir_all(full.parent().unwrap()).unwrap();
        fs::write(full, d).unwrap();
    }
    fs::create_dir_all(root.join("t/empty_dir/inner")).unwrap();
    fs::hard_link(root.join("t/x.txt"), root.join("t/hardlink.txt")).unwrap();
    symlink("x.txt", root.join("t/symlink")).unwrap();
    files.push(("t/hardlink.txt".into(), b"hello\n".to_vec()));
    files.into_iter().collect()
}

fn convert(input: &Path, arch: &Path, extra: &[&str]) -> std::process::Output {
    let mut args: Vec<&std::ffi::OsStr> = extra.iter().map(|s| s.as_ref()).collect();
    args.push(input.as_os_str());
    args.push(arch.as_os_str());
    run(from_tar(), args)
}

fn compress(kind: &str, data: &[u8]) -> Vec<u8> {
    match kind {
        "gz" => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        "bz2" => {
            let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        "xz" => {
            let mut e = liblzma::write::XzEncoder::new(Vec::new(), 1);
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        "zst" => zstd::encode_all(data, 1).unwrap(),
        _ => data.to_vec(),
    }
}

#[test]
fn gnu_tar_formats_and_every_compression() {
    need!("tar", "xz", "barecat");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let want = tar_tree(root, true);
    let short = tempfile::tempdir().unwrap();
    let want_short = tar_tree(short.path(), false);
    for format in ["gnu", "pax", "ustar"] {
        let (src, want) = if format == "ustar" {
            (short.path(), &want_short)
        } else {
            (root, &want)
        };
        let tar = root.join(format!("{format}.tar"));
        sh(src, &format!("tar -H {format} -cf {} t", tar.display()));
        let plain = fs::read(&tar).unwrap();
        for comp in ["", "gz", "bz2", "xz", "zst"] {
            let input = root.join(format!("{format}.tar.{comp}"));
            fs::write(&input, compress(comp, &plain)).unwrap();
            let arch = root.join(format!("{format}-{comp}.barecat"));
            let o = convert(&input, &arch, &[]);
            assert_eq!(code(&o), 0, "{format} {comp}: {}", stderr(&o));
            assert!(
                stderr(&o).contains("1 symbolic link"),
                "{format} {comp}: {}",
                stderr(&o)
            );
            assert_same(&contents(&arch), want, &format!("{format} {comp}"));
            let dirs = dir_paths(&arch);
            assert!(dirs.contains("t/empty_dir/inner"), "{format}: {dirs:?}");
            if comp.is_empty() || comp == "zst" {
                check(&arch);
            }
        }
    }
    // Metadata: permission bits with the type bits added, owner, seconds or (PAX)
    // nanoseconds.
    for (format, exact) in [("gnu", false), ("pax", true)] {
        let arch = root.join(format!("{format}-.barecat"));
        let a = Archive::open(&arch).unwrap();
        let fi = a.file_info("t/x.txt").unwrap();
        let md = fs::metadata(root.join("t/x.txt")).unwrap();
        assert_eq!(fi.meta.mode, Some(md.mode()), "{format}");
        assert_eq!(fi.meta.uid, Some(md.uid()));
        assert_eq!(fi.meta.gid, Some(md.gid()));
        let ns = mtime_ns(&root.join("t/x.txt"));
        let want_ns = if exact {
            ns
        } else {
            ns / 1_000_000_000 * 1_000_000_000
        };
        assert_eq!(fi.meta.mtime_ns, Some(want_ns), "{format}");
        let Some(Entry::Dir(d)) = a.lookup("t/sub").unwrap() else {
            panic!()
        };
        assert_eq!(
            d.meta.mode,
            Some(fs::metadata(root.join("t/sub")).unwrap().mode())
        );
    }
}

#[test]
fn pax_mtimes_keep_nanoseconds_and_sparse_files_keep_their_content() {
    need!("tar", "barecat");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir(root.join("s")).unwrap();
    let sparse = root.join("s/sparse.img");
    {
        let f = fs::File::create(&sparse).unwrap();
        f.set_len(3 << 20).unwrap();
        use std::os::unix::fs::FileExt;
        f.write_all_at(b"data in the middle", 1_000_000).unwrap();
        f.write_all_at(&pseudo_random(7, 70_000), 2_500_000)
            .unwrap();
    }
    fs::write(root.join("s/plain.txt"), b"plain").unwrap();
    sh(root, "touch -d '2021-03-04 05:06:07.123456789' s/plain.txt");
    let logical = fs::read(&sparse).unwrap();
    for (name, flags) in [
        ("gnu", "-H gnu --sparse"),
        ("pax00", "-H pax --sparse --sparse-version=0.0"),
        ("pax01", "-H pax --sparse --sparse-version=0.1"),
        ("pax10", "-H pax --sparse --sparse-version=1.0"),
    ] {
        let tar = root.join(format!("{name}.tar"));
        sh(root, &format!("tar {flags} -cf {} s", tar.display()));
        // Small budget: the sparse file is streamed in chunks.
        let arch = root.join(format!("{name}.barecat"));
        let o = convert(&tar, &arch, &["--buffer-size", "1M"]);
        assert_eq!(code(&o), 0, "{name}: {}", stderr(&o));
        let c = contents(&arch);
        assert_eq!(
            c.keys().collect::<Vec<_>>(),
            ["s/plain.txt", "s/sparse.img"],
            "{name}"
        );
        assert!(
            c["s/sparse.img"] == logical,
            "{name}: sparse content differs"
        );
        if name.starts_with("pax") {
            let a = Archive::open(&arch).unwrap();
            assert_eq!(
                a.file_info("s/plain.txt").unwrap().meta.mtime_ns,
                Some(mtime_ns(&root.join("s/plain.txt"))),
                "{name}: PAX mtime must keep nanoseconds"
            );
            assert_eq!(
                mtime_ns(&root.join("s/plain.txt")) % 1_000_000_000,
                123_456_789
            );
        }
        check(&arch);
    }
}

#[test]
fn bsdtar_and_python_tarfile_archives() {
    need!("bsdtar", "barecat");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let want = tar_tree(root, true);
    for format in ["pax", "gnutar", "ustar"] {
        let tar = root.join(format!("bsd-{format}.tar"));
        let src = if format == "ustar" {
            // ustar cannot hold the long names.
            fs::remove_dir_all(root.join(format!("t/{LONG_DIR}"))).unwrap();
            root
        } else {
            root
        };
        sh(
            src,
            &format!("bsdtar --format {format} -cf {} t", tar.display()),
        );
        let arch = root.join(format!("bsd-{format}.barecat"));
        let o = convert(&tar, &arch, &[]);
        assert_eq!(code(&o), 0, "{format}: {}", stderr(&o));
        let mut want = want.clone();
        if format == "ustar" {
            want.retain(|k, _| !k.contains(LONG_DIR));
        }
        assert_same(&contents(&arch), &want, &format!("bsdtar {format}"));
        check(&arch);
    }

    // Python tarfile: long names, a directory after its contents and listed twice
    // (metadata updated in place, counters kept), fractional PAX mtimes.
    for format in ["GNU_FORMAT", "PAX_FORMAT"] {
        let tar = root.join(format!("py-{format}.tar"));
        python3(
            root,
            &format!(
                r#"
import io, tarfile
long = "{LONG_DIR}/" * 3 + "{LONG_NAME}"
with tarfile.open("{tar}", "w", format=tarfile.{format}) as t:
    def add(name, data=None, mode=0o644, mtime=1600000000.25, kind=tarfile.REGTYPE, link=""):
        i = tarfile.TarInfo(name)
        i.type, i.mode, i.mtime, i.uid, i.gid, i.linkname = kind, mode, mtime, 1234, 5678, link
        if data is not None:
            i.size = len(data)
        t.addfile(i, io.BytesIO(data) if data is not None else None)
    add("d/f.txt", b"content")
    add("d", kind=tarfile.DIRTYPE, mode=0o700, mtime=1500000000)
    add("d/", kind=tarfile.DIRTYPE, mode=0o750, mtime=1500000001)
    add("d/sub/g.txt", b"g")
    add(long, b"long")
    add("d/link", kind=tarfile.LNKTYPE, link="d/f.txt", mode=0o600)
    add("d/sym", kind=tarfile.SYMTYPE, link="f.txt")
    add("d/fifo", kind=tarfile.FIFOTYPE)
"#,
                tar = tar.display()
            ),
        );
        let arch = root.join(format!("py-{format}.barecat"));
        let o = convert(&tar, &arch, &[]);
        assert_eq!(code(&o), 0, "{format}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(
            err.contains("1 symbolic link") && err.contains("1 special file"),
            "{err}"
        );
        let c = contents(&arch);
        assert_eq!(c["d/f.txt"], b"content");
        assert_eq!(c["d/link"], b"content");
        assert_eq!(c.len(), 4, "{:?}", c.keys());
        let a = Archive::open(&arch).unwrap();
        let Some(Entry::Dir(d)) = a.lookup("d").unwrap() else {
            panic!()
        };
        assert_eq!(d.meta.mode, Some(0o40750), "the last listing of d wins");
        assert_eq!(d.meta.mtime_ns, Some(1_500_000_001_000_000_000));
        assert_eq!((d.num_files, d.num_subdirs, d.num_files_tree), (2, 1, 3));
        let f = a.file_info("d/link").unwrap();
        assert_eq!(f.meta.mode, Some(0o100600));
        assert_eq!((f.meta.uid, f.meta.gid), (Some(1234), Some(5678)));
        let g = a.file_info("d/f.txt").unwrap();
        if format == "PAX_FORMAT" {
            assert_eq!(g.meta.mtime_ns, Some(1_600_000_000_250_000_000));
        } else {
            assert_eq!(g.meta.mtime_ns, Some(1_600_000_000_000_000_000));
        }
        // The hard link got its own copy of the bytes.
        assert_ne!((f.shard, f.offset), (g.shard, g.offset));
        drop(a);
        check(&arch);
    }
}

#[test]
fn hostile_members_are_reported_and_not_stored() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let tar = root.join("evil.tar");
    python3(
        root,
        &format!(
            r#"
import io, tarfile
with tarfile.open("{}", "w", format=tarfile.PAX_FORMAT) as t:
    def add(name, data=b"x", kind=tarfile.REGTYPE, link=""):
        i = tarfile.TarInfo(name)
        i.type, i.linkname = kind, link
        i.size = len(data) if kind == tarfile.REGTYPE else 0
        t.addfile(i, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
    add("../evil.txt")
    add("/abs/evil.txt")
    add("ok/../../escape.txt")
    add("ok/file.txt", b"fine")
    add("./ok/./dot.txt", b"dot")
    add("ok/hl", kind=tarfile.LNKTYPE, link="../evil.txt")
    add("ok/hl2", kind=tarfile.LNKTYPE, link="ok/missing.txt")
    add("ok/sym", kind=tarfile.SYMTYPE, link="/etc/passwd")
    i = tarfile.TarInfo("nul-placeholder")
    i.pax_headers = {{"path": "nul\x00name.txt"}}
    i.size = 1
    t.addfile(i, io.BytesIO(b"n"))
    add("ok/last.txt", b"last")
"#,
            tar.display()
        ),
    );
    let arch = root.join("evil.barecat");
    let o = convert(&tar, &arch, &[]);
    let err = stderr(&o);
    assert_eq!(code(&o), 1, "{err}");
    for needle in [
        "../evil.txt: '..' would point outside",
        "/abs/evil.txt: absolute paths are not stored",
        "ok/../../escape.txt: '..' would point outside",
        "ok/hl: hard link to \"../evil.txt\", outside the archive root",
        "ok/hl2: hard link to \"ok/missing.txt\", which is not in the archive",
        "nul\\x00name.txt: contains a NUL character",
    ] {
        assert!(err.contains(needle), "missing {needle:?}:\n{err}");
    }
    assert_eq!(
        contents(&arch).keys().collect::<Vec<_>>(),
        ["ok/dot.txt", "ok/file.txt", "ok/last.txt"]
    );
    assert!(dir_paths(&arch).iter().all(|d| !d.contains("..")));
    check(&arch);
    // --symlinks error reports the link; --strict stops at the first problem.
    let o = convert(&tar, &root.join("strict.barecat"), &["--strict"]);
    assert_eq!(code(&o), 1);
    assert_clean_error(&o);
    assert!(stderr(&o).contains("../evil.txt"), "{}", stderr(&o));
}

#[test]
fn symlink_policy_strip_components_append_and_existing_outputs() {
    need!("tar", "barecat");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let want = tar_tree(root, false);
    sh(root, "tar -cf one.tar t");
    write_tree(root, &[("u/more.txt", b"more")]);
    sh(root, "tar -cf two.tar u");
    let arch = root.join("s.barecat");
    let o = convert(&root.join("one.tar"), &arch, &["--symlinks", "error"]);
    assert_eq!(code(&o), 1);
    assert!(
        stderr(&o).contains("t/symlink: symbolic link to \"x.txt\""),
        "{}",
        stderr(&o)
    );
    assert_same(&contents(&arch), &want, "contents");
    // An existing output is refused and left alone.
    let before = shard_bytes(&arch);
    let o = convert(&root.join("two.tar"), &arch, &[]);
    assert_eq!(code(&o), 1);
    assert_clean_error(&o);
    assert_eq!(shard_bytes(&arch), before);
    // -a adds a second tar.
    let o = convert(&root.join("two.tar"), &arch, &["-a"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(contents(&arch).len(), want.len() + 1);
    check(&arch);
    // --strip-components drops the top directory.
    let arch = root.join("strip.barecat");
    let o = convert(&root.join("one.tar"), &arch, &["--strip-components", "1"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let stripped: BTreeMap<String, Vec<u8>> = want
        .iter()
        .map(|(k, v)| (k.strip_prefix("t/").unwrap().to_string(), v.clone()))
        .collect();
    assert_same(&contents(&arch), &stripped, "contents");
    check(&arch);
}

#[test]
fn tar_streams_from_stdin() {
    need!("tar", "xz", "barecat");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let want = tar_tree(root, true);
    sh(root, "tar -H pax -cf t.tar t");
    let data = compress("zst", &fs::read(root.join("t.tar")).unwrap());
    let arch = root.join("stdin.barecat");
    let o = run_stdin(&from_tar(), ["-".as_ref(), arch.as_os_str()], &data);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_same(&contents(&arch), &want, "contents");
    check(&arch);
}

#[test]
fn tar_from_stdin_that_is_a_file_is_read_from_its_current_offset() {
    need!("tar", "barecat");
    // `< x.tar` makes standard input a regular file, read ahead like a named file;
    // a shell that already read part of it leaves its offset past the start.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let want = tar_tree(root, true);
    sh(
        root,
        "tar -H pax -cf t.tar t && printf 'JUNK' > junk && cat junk t.tar > j.tar",
    );
    sh(
        root,
        &format!(
            "{{ head -c 4 > /dev/null; {} -q - stdin.barecat; }} < j.tar",
            from_tar().display()
        ),
    );
    let arch = root.join("stdin.barecat");
    assert_same(&contents(&arch), &want, "contents");
    check(&arch);
}

/// GNU tar output of a few files, with the offsets where each member starts.
fn damaged_fixture(root: &Path) -> (Vec<u8>, Vec<(String, u64, u64)>) {
    for i in 0..6u64 {
        write_tree(
            root,
            &[(&format!("m/f{i}"), &pseudo_random(i, 10_000 + i as usize))],
        );
    }
    write_tree(root, &[("m/f9_big", &pseudo_random(9, 3 << 20))]);
    sh(
        root,
        "tar -H gnu -cf good.tar m/f0 m/f1 m/f2 m/f3 m/f4 m/f5 m/f9_big",
    );
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(
            "import tarfile\nfor m in tarfile.open('good.tar'): print(m.name, m.offset, m.offset_data)",
        )
        .current_dir(root)
        .output_bounded()
        .unwrap();
    let members = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: Vec<&str> = l.split(' ').collect();
            (
                v[0].to_string(),
                v[1].parse().unwrap(),
                v[2].parse().unwrap(),
            )
        })
        .collect();
    (fs::read(root.join("good.tar")).unwrap(), members)
}

#[test]
fn truncated_tars_stop_keeping_what_came_before_and_damaged_headers_are_skipped() {
    need!("tar", "xz", "barecat");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let (good, members) = damaged_fixture(root);
    let offset = |name: &str| members.iter().find(|m| m.0 == name).unwrap();
    let mut corrupt_header = good.clone();
    corrupt_header[offset("m/f3").1 as usize + 10] ^= 0x55;
    let gz = compress("gz", &good);
    let cases: Vec<(&str, Vec<u8>, &str, usize)> = vec![
        // (name, bytes, expected message, files kept)
        (
            "mid-data",
            good[..offset("m/f3").2 as usize + 100].to_vec(),
            "input ends inside member \"m/f3\"",
            3,
        ),
        (
            "mid-header",
            good[..offset("m/f4").1 as usize + 200].to_vec(),
            "corrupt or truncated",
            4,
        ),
        // Cut at a member boundary: read as GNU tar and bsdtar read it, with a
        // warning (tests/ingest_formats.rs).
        // A damaged header: reported, and reading goes on at the next header (as
        // GNU tar and bsdtar do); only the member it starts is lost.
        (
            "bad-checksum",
            corrupt_header,
            "damaged header at byte 32256 (header checksum mismatch",
            6,
        ),
        (
            "big-member",
            good[..offset("m/f9_big").2 as usize + (2 << 20)].to_vec(),
            "input ends",
            6,
        ),
        ("gzip-cut", gz[..gz.len() * 2 / 3].to_vec(), "deflate", 0),
    ];
    for (name, bytes, msg, kept) in cases {
        let input = root.join(format!("{name}.tar"));
        fs::write(&input, &bytes).unwrap();
        let arch = root.join(format!("{name}.barecat"));
        let o = convert(&input, &arch, &["--buffer-size", "1M"]);
        let err = stderr(&o);
        assert_eq!(code(&o), 1, "{name}: {err}");
        assert!(err.contains(msg), "{name}: expected {msg:?} in {err}");
        assert!(!err.contains("panicked"), "{err}");
        if !matches!(name, "big-member" | "gzip-cut" | "bad-checksum") {
            assert_clean_error(&o);
        }
        if name == "bad-checksum" {
            assert!(err.contains("its name field reads \"m/f3\""), "{err}");
            assert_eq!(offset("m/f3").1, 32256);
        }
        let c = contents(&arch);
        if name == "gzip-cut" {
            assert!(c.len() < 7, "{name}");
        } else {
            assert_eq!(c.len(), kept, "{name}: {:?}", c.keys());
        }
        for (p, data) in &c {
            assert_eq!(data, &fs::read(root.join(p)).unwrap(), "{name}: {p}");
        }
        check(&arch);
    }
    // Inputs that are not tars at all: an error, and no archive left behind.
    for (name, bytes) in [("empty", Vec::new()), ("garbage", pseudo_random(1, 5000))] {
        let input = root.join(name);
        fs::write(&input, &bytes).unwrap();
        let arch = root.join(format!("{name}.barecat"));
        let o = convert(&input, &arch, &[]);
        assert_eq!(code(&o), 1, "{name}");
        assert_clean_error(&o);
        assert!(!arch.exists(), "{name}: an empty archive was left behind");
    }
}

#[test]
fn legacy_archive2barecat_appends_unless_overwrite() {
    need!("tar", "zip", "barecat");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_tree(root, &[("p/a.txt", b"a"), ("q/b.txt", b"b")]);
    sh(root, "tar -cf p.tar p && zip -qr q.zip q");
    let arch = root.join("legacy.barecat");
    let a2b = bin("archive2barecat");
    let o = run(&a2b, [root.join("p.tar").as_os_str(), arch.as_os_str()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = run(
        &a2b,
        [
            root.join("q.zip").as_os_str(),
            arch.as_os_str(),
            "--shard-size-limit".as_ref(),
            "1M".as_ref(),
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(
        contents(&arch).keys().collect::<Vec<_>>(),
        ["p/a.txt", "q/b.txt"]
    );
    assert_eq!(
        Archive::open(&arch).unwrap().shard_size_limit().unwrap(),
        1 << 20
    );
    check(&arch);
    let o = run(
        &a2b,
        [
            root.join("q.zip").as_os_str(),
            arch.as_os_str(),
            "--overwrite".as_ref(),
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(contents(&arch).keys().collect::<Vec<_>>(), ["q/b.txt"]);
    check(&arch);
}

/// create → to-tar / to-zip (the export commands) → from-tar / from-zip: the same
/// files, contents and metadata come back.
#[test]
fn round_trip_through_the_export_commands() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    tar_tree(root, true);
    let first = root.join("first.barecat");
    let o = run(
        bin("barecat-create"),
        [
            "-q",
            "-C",
            root.to_str().unwrap(),
            first.to_str().unwrap(),
            "t",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    // create stores the symbolic link as a file holding its target's content.
    let want = contents(&first);
    assert!(want.contains_key("t/symlink"));
    let rows_of = |p: &Path| -> BTreeMap<String, (Option<u32>, Option<i64>)> {
        let a = Archive::open(p).unwrap();
        a.files(barecat::FileOrder::Path, "")
            .map(|f| {
                let f = f.unwrap();
                (f.path, (f.meta.mode, f.meta.mtime_ns))
            })
            .collect()
    };
    for (export, import, name) in [
        ("barecat-to-tar", "barecat-from-tar", "rt.tar.zst"),
        ("barecat-to-zip", "barecat-from-zip", "rt.zip"),
    ] {
        let out = root.join(name);
        let mut args = vec![
            first.to_str().unwrap().to_string(),
            out.to_str().unwrap().to_string(),
        ];
        if name.ends_with(".zst") {
            args.insert(0, "--zstd".into());
        }
        let o = run(bin(export), &args);
        assert_eq!(code(&o), 0, "{export}: {}", stderr(&o));
        let back = root.join(format!("{name}.barecat"));
        let o = run(bin(import), [out.as_os_str(), back.as_os_str()]);
        assert_eq!(code(&o), 0, "{import}: {}", stderr(&o));
        let got = contents(&back);
        assert_eq!(
            got.keys().collect::<Vec<_>>(),
            want.keys().collect::<Vec<_>>(),
            "{name}"
        );
        assert!(got == want, "{name}: contents differ");
        if name.ends_with(".zst") {
            // Tar keeps modes and nanosecond times exactly (PAX).
            assert_eq!(rows_of(&back), rows_of(&first), "{name}");
        }
        check(&back);
    }
}
