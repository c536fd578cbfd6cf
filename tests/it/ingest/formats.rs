//! Importing every archive that bsdtar reads, whole or loudly: a corpus written by
//! the real tools installed here (GNU tar in every format, bsdtar writing cpio,
//! pax, ustar, 7zip, ISO 9660, xar, ar and zip, GNU cpio, Info-ZIP, p7zip,
//! genisoimage, xorriso, gcab, rpmbuild, dpkg-deb, ar, Python's tarfile and
//! zipfile, and every compressor), plus archives made here byte by byte (rar,
//! lha, oddities). Each import is compared member by member with what `bsdtar
//! -x` extracts from the same file: the same regular files (hard links
//! included) with the same bytes, and the same mode, modification time and
//! owner where the format keeps them; or the import fails with exit status 1 and
//! a line naming the member and what is not supported.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::process::CommandExt;
use crate::support::*;
use barecat::{Archive, FileOrder};

// ------------------------------------------------------------------ helpers

/// Files of the corpus tree: path, content, mode.
fn files() -> Vec<(&'static str, Vec<u8>, u32)> {
    vec![
        ("d/a.txt", b"hello\n".to_vec(), 0o644),
        ("d/sub/b.bin", pseudo_random(7, 300_000), 0o600),
        ("d/exe.sh", b"#!/bin/sh\necho hi\n".to_vec(), 0o755),
        ("d/empty", Vec::new(), 0o640),
        (
            "d/\u{fc}n\u{ef}c\u{f6}d\u{e9}.txt",
            b"unicode".to_vec(),
            0o644,
        ),
    ]
}

const MTIME: i64 = 1_600_000_000;

/// The corpus tree below `root/src`: the files above, a hard link, a symbolic
/// link, a long path, fixed times. Returns `root/src`.
fn tree(root: &Path, long: bool) -> PathBuf {
    let src = root.join("src");
    for (p, data, mode) in files() {
        let f = src.join(p);
        fs::create_dir_all(f.parent().unwrap()).unwrap();
        fs::write(&f, data).unwrap();
        fs::set_permissions(&f, fs::Permissions::from_mode(mode)).unwrap();
    }
    fs::hard_link(src.join("d/a.txt"), src.join("d/hl.txt")).unwrap();
    std::os::unix::fs::symlink("a.txt", src.join("d/sl")).unwrap();
    if long {
        let dir = src.join("d/long").join("x".repeat(120));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join(format!("{}.txt", "y".repeat(110))), b"long").unwrap();
    }
    set_times(&src);
    src
}

/// Every entry below `dir` gets the modification time [`MTIME`].
fn set_times(dir: &Path) {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(MTIME as u64);
    for e in walk(dir) {
        if fs::symlink_metadata(&e).unwrap().file_type().is_symlink() {
            continue;
        }
        let f = fs::File::options().read(true).open(&e);
        if let Ok(f) = f {
            let _ = f.set_modified(t);
        }
    }
    if let Ok(f) = fs::File::open(dir) {
        let _ = f.set_modified(t);
    }
}

/// Every path below `dir` (not `dir` itself), depth first, deepest last.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = fs::read_dir(&d) else { continue };
        for e in rd {
            let p = e.unwrap().path();
            if fs::symlink_metadata(&p).unwrap().is_dir() {
                stack.push(p.clone());
            }
            out.push(p);
        }
    }
    out
}

/// Run a shell command in `dir`; it must succeed.
fn sh(dir: &Path, cmd: &str) {
    let o = Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .current_dir(dir)
        .output_bounded()
        .unwrap();
    assert!(
        o.status.success(),
        "{cmd} failed: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Run a shell command in `dir`, whatever its exit status (a writer that warns
/// about members it could not store, e.g. long names in v7 tars).
fn sh_any(dir: &Path, cmd: &str) {
    Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .current_dir(dir)
        .output_bounded()
        .unwrap();
}

/// The result of an import.
struct Imported {
    code: i32,
    stderr: String,
    archive: PathBuf,
}

/// Import `input` into a new archive with `barecat-PROG` and `extra` options.
fn import(prog: &str, input: &Path, extra: &[&str]) -> Imported {
    let archive = input.with_extension(format!(
        "{}.barecat",
        input
            .extension()
            .map_or("x".into(), |e| e.to_string_lossy())
    ));
    let mut args: Vec<std::ffi::OsString> =
        vec!["-f".into(), "--buffer-size".into(), "256K".into()];
    args.extend(extra.iter().map(|a| a.into()));
    args.push(input.into());
    args.push(archive.clone().into());
    let o = run(bin(&format!("barecat-{prog}")), &args);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{stderr}");
    Imported {
        code: o.status.code().unwrap_or(-1),
        stderr,
        archive,
    }
}

/// What to compare besides the bytes.
#[derive(Clone, Copy)]
struct Cmp {
    mode: bool,
    mtime: bool,
    owner: bool,
}

const ALL: Cmp = Cmp {
    mode: true,
    mtime: true,
    owner: true,
};
const BYTES_MODE_TIME: Cmp = Cmp {
    mode: true,
    mtime: true,
    owner: false,
};

/// A stored file: content and metadata.
struct Stored {
    data: Vec<u8>,
    mode: Option<u32>,
    mtime_ns: Option<i64>,
    uid: Option<u32>,
    gid: Option<u32>,
}

fn stored(archive: &Path) -> BTreeMap<String, Stored> {
    let a = Archive::open(archive).unwrap();
    a.files(FileOrder::Path, "")
        .map(|f| {
            let f = f.unwrap();
            let data = a.read_file(&f).unwrap();
            (
                f.path.clone(),
                Stored {
                    data,
                    mode: f.meta.mode,
                    mtime_ns: f.meta.mtime_ns,
                    uid: f.meta.uid,
                    gid: f.meta.gid,
                },
            )
        })
        .collect()
}

/// Extract `input` with `bsdtar -x` (and `opts`) into a new directory.
fn bsdtar_extract(input: &Path, opts: &[&str]) -> (PathBuf, Output) {
    let out = input.with_extension("bsdtar-x");
    let _ = fs::remove_dir_all(&out);
    fs::create_dir_all(&out).unwrap();
    let mut args: Vec<std::ffi::OsString> = vec!["-x".into(), "-p".into()];
    args.extend(opts.iter().map(|a| a.into()));
    args.extend(["-f".into(), input.into(), "-C".into(), out.clone().into()]);
    let o = Command::new("bsdtar")
        .args(&args)
        .env("LC_ALL", "C.UTF-8")
        .output_bounded()
        .unwrap();
    (out, o)
}

/// The regular files below `dir`, relative paths → (bytes, metadata).
fn extracted(dir: &Path) -> BTreeMap<String, (Vec<u8>, fs::Metadata)> {
    walk(dir)
        .into_iter()
        .filter_map(|p| {
            let m = fs::symlink_metadata(&p).unwrap();
            m.is_file().then(|| {
                let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
                (rel, (fs::read(&p).unwrap(), m))
            })
        })
        .collect()
}

/// The import of `input` holds exactly the regular files `bsdtar -x` extracts
/// from it, with the same bytes and (per `cmp`) metadata.
fn same_as_bsdtar(input: &Path, imp: &Imported, cmp: Cmp, bsdtar_opts: &[&str]) {
    let ctx = input.file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(imp.code, 0, "{ctx}: import failed: {}", imp.stderr);
    let (dir, o) = bsdtar_extract(input, bsdtar_opts);
    assert!(
        o.status.success(),
        "{ctx}: bsdtar -x failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let want = extracted(&dir);
    let got = stored(&imp.archive);
    assert!(!want.is_empty(), "{ctx}: bsdtar extracted nothing");
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>(),
        "{ctx}: the files differ from bsdtar's"
    );
    let root = unsafe { libc::geteuid() } == 0;
    for (path, (data, m)) in &want {
        let s = &got[path];
        assert!(
            &s.data == data,
            "{ctx}: {path}: {} bytes stored, bsdtar extracts {}",
            s.data.len(),
            data.len()
        );
        if cmp.mode {
            assert_eq!(
                s.mode.map(|x| x & 0o7777),
                Some(m.mode() & 0o7777),
                "{ctx}: {path}: mode"
            );
        }
        if cmp.mtime {
            let secs = s.mtime_ns.map(|ns| ns.div_euclid(1_000_000_000));
            assert_eq!(secs, Some(m.mtime()), "{ctx}: {path}: mtime");
        }
        if cmp.owner && root {
            assert_eq!(
                (s.uid, s.gid),
                (Some(m.uid()), Some(m.gid())),
                "{ctx}: {path}: owner"
            );
        }
    }
    let _ = fs::remove_dir_all(&dir);
}

/// The import of `input` failed loudly: exit status 1, and a line holding each of
/// `needles`.
fn loud(imp: &Imported, needles: &[&str]) {
    assert_eq!(imp.code, 1, "{}", imp.stderr);
    for n in needles {
        assert!(imp.stderr.contains(n), "expected {n:?} in: {}", imp.stderr);
    }
    assert!(!imp.stderr.contains("stack backtrace"), "{}", imp.stderr);
}

// ----------------------------------------------------------- byte builders

/// A ustar header block for `name` of type `typeflag` and `size` bytes.
fn tar_header(name: &[u8], typeflag: u8, size: usize, mode: u32) -> Vec<u8> {
    let mut h = vec![0u8; 512];
    h[..name.len()].copy_from_slice(name);
    h[100..108].copy_from_slice(format!("{mode:07o}\0").as_bytes());
    h[108..116].copy_from_slice(b"0001750\0");
    h[116..124].copy_from_slice(b"0001750\0");
    h[124..136].copy_from_slice(format!("{size:011o}\0").as_bytes());
    h[136..148].copy_from_slice(format!("{MTIME:011o}\0").as_bytes());
    h[156] = typeflag;
    h[257..263].copy_from_slice(b"ustar\0");
    h[263..265].copy_from_slice(b"00");
    h[148..156].copy_from_slice(b"        ");
    let sum: u32 = h.iter().map(|&b| b as u32).sum();
    h[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
    h
}

/// A member: header and data padded to a block.
fn tar_member(name: &[u8], typeflag: u8, data: &[u8], mode: u32) -> Vec<u8> {
    let mut m = tar_header(name, typeflag, data.len(), mode);
    m.extend_from_slice(data);
    m.resize(m.len().div_ceil(512) * 512, 0);
    m
}

/// PAX records.
fn pax(records: &[(&str, &str)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (k, v) in records {
        let body = format!(" {k}={v}\n");
        let mut len = body.len() + 1;
        while format!("{len}{body}").len() != len {
            len += 1;
        }
        out.extend(format!("{len}{body}").as_bytes());
    }
    out
}

fn crc32(data: &[u8]) -> u32 {
    crc32fast::hash(data)
}

/// A RAR 4 archive of stored files (method 0x30) and directories.
fn rar4(entries: &[(&str, &[u8], bool)]) -> Vec<u8> {
    let mut out = b"Rar!\x1a\x07\x00".to_vec();
    let block = |typ: u8, flags: u16, rest: &[u8]| -> Vec<u8> {
        let mut h = vec![typ];
        h.extend(flags.to_le_bytes());
        h.extend(((rest.len() + 7) as u16).to_le_bytes());
        h.extend(rest);
        let crc = (crc32(&h) & 0xffff) as u16;
        let mut b = crc.to_le_bytes().to_vec();
        b.extend(h);
        b
    };
    out.extend(block(0x73, 0, &[0u8; 6]));
    let dos_time: u32 = (2020 - 1980) << 25 | 9 << 21 | 13 << 16 | 12 << 11 | 26 << 5 | 20;
    for (name, data, dir) in entries {
        let mut f = Vec::new();
        f.extend((data.len() as u32).to_le_bytes());
        f.extend((data.len() as u32).to_le_bytes());
        f.push(3); // Unix
        f.extend(crc32(data).to_le_bytes());
        f.extend(dos_time.to_le_bytes());
        f.push(20);
        f.push(0x30);
        f.extend((name.len() as u16).to_le_bytes());
        let attr: u32 = if *dir { 0o40755 } else { 0o100644 };
        f.extend(attr.to_le_bytes());
        f.extend(name.as_bytes());
        let flags = 0x8000 | if *dir { 0x00e0 } else { 0 };
        out.extend(block(0x74, flags, &f));
        out.extend(*data);
    }
    out.extend(block(0x7b, 0x4000, &[]));
    out
}

fn vint(mut n: u64) -> Vec<u8> {
    let mut v = Vec::new();
    loop {
        let b = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            v.push(b);
            return v;
        }
        v.push(b | 0x80);
    }
}

/// A RAR 5 archive of stored files and directories.
fn rar5(entries: &[(&str, &[u8], bool)]) -> Vec<u8> {
    let mut out = b"Rar!\x1a\x07\x01\x00".to_vec();
    let header = |body: &[u8]| -> Vec<u8> {
        let mut h = vint(body.len() as u64);
        h.extend(body);
        let mut b = crc32(&h).to_le_bytes().to_vec();
        b.extend(h);
        b
    };
    // Main archive header: type 1, no flags, archive flags 0.
    out.extend(header(&[1, 0, 0]));
    for (name, data, dir) in entries {
        let mut b = vint(2); // file header
        b.extend(vint(0x2)); // a data area follows
        b.extend(vint(data.len() as u64));
        let file_flags = 0x2 | 0x4 | if *dir { 0x1 } else { 0 };
        b.extend(vint(file_flags));
        b.extend(vint(data.len() as u64));
        b.extend(vint(if *dir { 0o40755 } else { 0o100644 }));
        b.extend((MTIME as u32).to_le_bytes());
        b.extend(crc32(data).to_le_bytes());
        b.extend(vint(0)); // version 0, stored
        b.extend(vint(1)); // Unix
        b.extend(vint(name.len() as u64));
        b.extend(name.as_bytes());
        out.extend(header(&b));
        out.extend(*data);
    }
    out.extend(header(&[5, 0, 0]));
    out
}

/// CRC-16 of LHA (CRC-16/ARC).
fn crc16(data: &[u8]) -> u16 {
    let mut crc = 0u16;
    for &b in data {
        crc ^= b as u16;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xa001
            } else {
                crc >> 1
            };
        }
    }
    crc
}

/// An LHA archive of stored (-lh0-) files with level-0 headers.
fn lha(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    let dos_time: u32 = (2020 - 1980) << 25 | 9 << 21 | 13 << 16 | 12 << 11 | 26 << 5 | 20;
    for (name, data) in entries {
        let mut h = b"-lh0-".to_vec();
        h.extend((data.len() as u32).to_le_bytes());
        h.extend((data.len() as u32).to_le_bytes());
        h.extend(dos_time.to_le_bytes());
        h.push(0x20);
        h.push(0);
        h.push(name.len() as u8);
        h.extend(name.as_bytes());
        h.extend(crc16(data).to_le_bytes());
        let sum = h.iter().fold(0u8, |s, &b| s.wrapping_add(b));
        out.push(h.len() as u8);
        out.push(sum);
        out.extend(h);
        out.extend(*data);
    }
    out.push(0);
    out
}

// ---------------------------------------------------------------- the tests

#[test]
fn gnu_tar_in_every_format_with_sparse_files_long_names_and_links() {
    need!("tar", "bsdtar");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let src = tree(root, true);
    // A sparse file: 1 MiB with data in the middle.
    let sp = src.join("d/sparse");
    let f = fs::File::create(&sp).unwrap();
    f.set_len(1 << 20).unwrap();
    std::os::unix::fs::FileExt::write_at(&f, b"data in a hole", 500_000).unwrap();
    drop(f);
    set_times(&src);
    for (name, cmd) in [
        ("v7", "tar --format=v7 -cf ../v7.tar d"),
        ("oldgnu", "tar --format=oldgnu --sparse -cf ../oldgnu.tar d"),
        ("gnu", "tar --format=gnu --sparse -cf ../gnu.tar d"),
        ("ustar", "tar --format=ustar -cf ../ustar.tar d"),
        ("posix", "tar --format=posix --sparse -cf ../posix.tar d"),
        (
            "posix0.0",
            "tar --format=posix --sparse --sparse-version=0.0 -cf ../posix0.0.tar d",
        ),
        (
            "posix0.1",
            "tar --format=posix --sparse --sparse-version=0.1 -cf ../posix0.1.tar d",
        ),
        (
            "posix1.0",
            "tar --format=posix --sparse --sparse-version=1.0 -cf ../posix1.0.tar d",
        ),
    ] {
        // v7 and ustar cannot hold the long name: GNU tar warns and leaves it out.
        sh_any(&src, cmd);
        let input = root.join(format!("{name}.tar"));
        for prog in ["from-tar", "from-archive"] {
            let imp = import(prog, &input, &[]);
            same_as_bsdtar(&input, &imp, ALL, &[]);
        }
    }
}

#[test]
fn every_compressor() {
    need!(
        "tar", "bsdtar", "bzip2", "pigz", "pbzip2", "pzstd", "zstd", "xz", "lz4", "lzip",
        "compress"
    );
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let src = tree(root, true);
    sh(&src, "tar -cf ../base.tar d");
    let cases = [
        ("gzip", "gzip -c base.tar > t.tar.gz"),
        ("pigz", "pigz -c base.tar > t.tar.pigz"),
        ("bzip2", "bzip2 -c base.tar > t.tar.bz2"),
        ("pbzip2", "pbzip2 -c base.tar > t.tar.pbz2"),
        ("xz", "xz -c base.tar > t.tar.xz"),
        ("zstd", "zstd -q -c base.tar > t.tar.zst"),
        ("pzstd", "pzstd -q -c base.tar > t.tar.pzst"),
        ("lz4-64K", "lz4 -q -B4 base.tar t.tar.lz4-64K"),
        ("lz4-256K", "lz4 -q -B5 base.tar t.tar.lz4-256K"),
        ("lz4-1M", "lz4 -q -B6 base.tar t.tar.lz4-1M"),
        ("lz4-4M", "lz4 -q -B7 base.tar t.tar.lz4-4M"),
        ("lz4-linked", "lz4 -q -B4 -BD base.tar t.tar.lz4-linked"),
        ("lz4-sums", "lz4 -q -BX --content-size base.tar t.tar.lz4-sums"),
        ("lz4-nosum", "lz4 -q --no-frame-crc base.tar t.tar.lz4-nosum"),
        ("lz4-legacy", "lz4 -q -l base.tar t.tar.lz4-legacy"),
        (
            "lz4-concat",
            "head -c 20480 base.tar | lz4 -q -c > t.tar.lz4-concat && tail -c +20481 base.tar | lz4 -q -c >> t.tar.lz4-concat",
        ),
        ("lzip", "lzip -c base.tar > t.tar.lz"),
        ("lzip-multi", "lzip -c -b 200KiB base.tar > t.tar.lz-multi"),
        ("compress16", "compress -c base.tar > t.tar.Z"),
        ("compress12", "compress -b12 -c base.tar > t.tar.Z12"),
    ];
    for (name, cmd) in cases {
        sh(root, cmd);
        let file = cmd
            .split_whitespace()
            .find(|w| w.starts_with("t.tar"))
            .unwrap()
            .to_string();
        let input = root.join(&file);
        // Names say nothing: the content tells the compression.
        let renamed = root.join(format!("{name}.data"));
        fs::copy(&input, &renamed).unwrap();
        for prog in ["from-tar", "from-archive"] {
            let imp = import(prog, &renamed, &[]);
            assert!(
                imp.stderr.is_empty() || !imp.stderr.contains("uncompressed"),
                "{name}"
            );
            same_as_bsdtar(&renamed, &imp, ALL, &[]);
        }
    }
    // Truncated compressed streams fail loudly, keeping what came before.
    for file in ["t.tar.lz4-64K", "t.tar.lz", "t.tar.Z", "t.tar.zst"] {
        let bytes = fs::read(root.join(file)).unwrap();
        let cut = root.join(format!("cut-{file}"));
        fs::write(&cut, &bytes[..bytes.len() * 2 / 3]).unwrap();
        let imp = import("from-archive", &cut, &[]);
        loud(&imp, &[&cut.display().to_string()]);
    }
}

#[test]
fn lzop_is_refused_with_what_to_do() {
    need!("tar", "lzop");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let src = tree(root, false);
    sh(
        &src,
        "tar -cf ../base.tar d && lzop -c ../base.tar > ../t.tar.lzo",
    );
    let imp = import("from-archive", &root.join("t.tar.lzo"), &[]);
    loud(&imp, &["lzop", "lzop -dc"]);
}

#[test]
fn oddities_of_compressed_streams() {
    need!("tar", "bsdtar", "zstd", "lz4");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let src = tree(root, false);
    sh(&src, "tar -cf ../base.tar d");
    // gzip with bytes after the stream (the tar's end inside it).
    sh(
        root,
        "gzip -c base.tar > g.tgz && printf 'trailing garbage' >> g.tgz",
    );
    sh(
        root,
        "gzip -c base.tar > z.tgz && head -c 5000 /dev/zero >> z.tgz",
    );
    // Two gzip members back to back.
    sh(
        root,
        "head -c 20480 base.tar | gzip -c > m.tgz && tail -c +20481 base.tar | gzip -c >> m.tgz",
    );
    // zstd and lz4 streams starting with skippable frames.
    sh(
        root,
        "printf 'P*M\\030\\004\\000\\000\\000abcd' > s.zst && zstd -q -c base.tar >> s.zst",
    );
    sh(
        root,
        "printf 'Q*M\\030\\000\\000\\000\\000' > s.lz4 && lz4 -q -c base.tar >> s.lz4",
    );
    // (bsdtar takes an lz4 stream after a skippable frame for zstd and fails: the
    // reference is then the tar inside, which `lz4 -d` gives.)
    for (file, note) in [
        ("g.tgz", Some("after the gzip stream (from byte")),
        ("z.tgz", Some("zero bytes after the gzip stream")),
        ("m.tgz", None),
        ("s.zst", None),
        ("s.lz4", None),
    ] {
        let input = root.join(file);
        let imp = import("from-tar", &input, &[]);
        let reference = if file == "s.lz4" {
            root.join("base.tar")
        } else {
            input.clone()
        };
        same_as_bsdtar(&reference, &imp, ALL, &[]);
        if let Some(n) = note {
            assert!(imp.stderr.contains(n), "{file}: {}", imp.stderr);
        }
    }
}

#[test]
fn tar_without_end_blocks_is_read_with_a_warning() {
    need!("tar", "bsdtar");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let src = tree(root, false);
    sh(&src, "tar -b1 -cf ../b1.tar d");
    let full = fs::read(root.join("b1.tar")).unwrap();
    let input = root.join("noend.tar");
    fs::write(&input, &full[..full.len() - 1024]).unwrap();
    let imp = import("from-tar", &input, &["-q"]);
    same_as_bsdtar(&input, &imp, ALL, &[]);
    assert!(
        imp.stderr.contains("warning: the tar ends at byte")
            && imp.stderr.contains("without its end-of-archive blocks"),
        "{}",
        imp.stderr
    );
    assert_eq!(imp.stderr.lines().count(), 1, "{}", imp.stderr);
    let imp = import("from-tar", &input, &["--strict"]);
    loud(&imp, &["--strict refuses it"]);
    // Compressed the same way, the same.
    let gz = root.join("noend.tgz");
    sh(root, "gzip -c noend.tar > noend.tgz");
    let imp = import("from-archive", &gz, &[]);
    same_as_bsdtar(&gz, &imp, ALL, &[]);
}

#[test]
fn acl_entries_are_metadata_never_files() {
    need!("bsdtar");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // Solaris tar: an 'A' entry before a directory and before a file.
    let acl = b"user::rwx,group::r-x,other::r-x\0";
    let mut t = Vec::new();
    let mut a = b"01000002\0".to_vec();
    a.extend_from_slice(acl);
    t.extend(tar_member(b"dir/", b'A', &a, 0o755));
    t.extend(tar_member(b"dir/", b'5', b"", 0o755));
    // (bsdtar sets the permissions from the ACL: the ACL of f.txt matches its mode.)
    let mut a644 = b"01000002\0".to_vec();
    a644.extend_from_slice(b"user::rw-,group::r--,other::r--\0");
    t.extend(tar_member(b"dir/f.txt", b'A', &a644, 0o644));
    t.extend(tar_member(b"dir/f.txt", b'0', b"content", 0o644));
    // PAX ACL records.
    let recs = pax(&[("SCHILY.acl.access", "user::rw-,group::r--,other::r--")]);
    t.extend(tar_member(b"PaxHeaders/g.txt", b'x', &recs, 0o644));
    t.extend(tar_member(b"dir/g.txt", b'0', b"pax acl", 0o644));
    t.extend(vec![0u8; 1024]);
    let input = root.join("acl.tar");
    fs::write(&input, &t).unwrap();
    let imp = import("from-tar", &input, &[]);
    same_as_bsdtar(&input, &imp, BYTES_MODE_TIME, &[]);
    let a = Archive::open(&imp.archive).unwrap();
    assert!(
        a.with_index(|i| i.is_dir("dir")).unwrap(),
        "the directory with an ACL is kept"
    );
}

#[test]
fn pax_sparse_headers_of_other_writers() {
    need!("bsdtar");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // Format 1.0 with GNU.sparse.size instead of realsize, and a comment line in
    // the map; format 0.1 naming its version.
    let mut t = Vec::new();
    let recs = pax(&[
        ("GNU.sparse.major", "1"),
        ("GNU.sparse.minor", "0"),
        ("GNU.sparse.name", "s1.bin"),
        ("GNU.sparse.size", "3000"),
    ]);
    t.extend(tar_member(b"PaxHeaders/s1", b'x', &recs, 0o644));
    let mut data = b"# made by another tool\n2\n0\n4\n2000\n3\n".to_vec();
    data.resize(512, 0);
    data.extend_from_slice(b"abcdxyz");
    t.extend(tar_member(b"GNUSparseFile.0/s1.bin", b'0', &data, 0o644));
    t.extend(vec![0u8; 1024]);
    let input = root.join("sparse.tar");
    fs::write(&input, &t).unwrap();
    let imp = import("from-tar", &input, &[]);
    same_as_bsdtar(&input, &imp, BYTES_MODE_TIME, &[]);
    let mut want = vec![0u8; 3000];
    want[..4].copy_from_slice(b"abcd");
    want[2000..2003].copy_from_slice(b"xyz");
    assert_eq!(stored(&imp.archive)["s1.bin"].data, want);
    // Format 0.1 naming its version: bsdtar extracts it (with a warning about the
    // version) from the map in the records.
    let recs = pax(&[
        ("GNU.sparse.major", "0"),
        ("GNU.sparse.minor", "1"),
        ("GNU.sparse.size", "100"),
        ("GNU.sparse.map", "10,2,50,3"),
    ]);
    let mut t = tar_member(b"PaxHeaders/s2", b'x', &recs, 0o644);
    t.extend(tar_member(b"s2.bin", b'0', b"ab123", 0o644));
    t.extend(vec![0u8; 1024]);
    let input = root.join("sparse01.tar");
    fs::write(&input, &t).unwrap();
    let imp = import("from-tar", &input, &[]);
    assert_eq!(imp.code, 0, "{}", imp.stderr);
    let (dir, _) = bsdtar_extract(&input, &[]);
    let mut want = vec![0u8; 100];
    want[10..12].copy_from_slice(b"ab");
    want[50..53].copy_from_slice(b"123");
    assert_eq!(fs::read(dir.join("s2.bin")).unwrap(), want);
    assert_eq!(stored(&imp.archive)["s2.bin"].data, want);
}

#[test]
fn bsdtar_writers() {
    need!("bsdtar", "cpio", "lz4", "xz", "zip", "zstd");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let src = tree(root, true);
    for (fmt, cmp) in [
        ("cpio", ALL),
        ("odc", ALL),
        ("newc", ALL),
        ("bin", ALL),
        ("pax", ALL),
        ("paxr", ALL),
        ("ustar", ALL),
        ("gnutar", ALL),
        ("v7tar", ALL),
        ("7zip", BYTES_MODE_TIME),
        ("iso9660", ALL),
        ("xar", ALL),
        ("zip", BYTES_MODE_TIME),
        ("argnu", ALL),
        ("arbsd", ALL),
    ] {
        let input = root.join(format!("t.{fmt}"));
        // Formats that cannot hold some member (long names in v7 and ar, links in
        // ar) leave it out with a warning.
        sh_any(
            &src,
            &format!("bsdtar --format {fmt} -cf {} d", input.display()),
        );
        assert!(input.exists(), "{fmt}");
        let imp = import("from-archive", &input, &[]);
        same_as_bsdtar(&input, &imp, cmp, &[]);
        // The legacy converter takes every format too.
        let o = run(
            bin("archive2barecat"),
            [&input, &root.join(format!("a2b-{fmt}.barecat"))],
        );
        assert!(
            o.status.success(),
            "{fmt}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    // Compressed cpio and iso by name only: the content decides.
    for (fmt, filter) in [
        ("newc", "xz"),
        ("odc", "lz4"),
        ("newc", "zstd"),
        ("bin", "gzip"),
    ] {
        let input = root.join(format!("c-{fmt}-{filter}.img"));
        sh(
            &src,
            &format!("bsdtar --format {fmt} --{filter} -cf {} d", input.display()),
        );
        let imp = import("from-archive", &input, &[]);
        same_as_bsdtar(&input, &imp, ALL, &[]);
    }
}

#[test]
fn gnu_cpio_every_variant_and_byte_order() {
    need!("cpio", "bsdtar");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let src = tree(root, true);
    for fmt in ["odc", "newc", "crc", "bin"] {
        sh(
            &src,
            &format!("find d | cpio -o -H {fmt} --quiet > ../g.{fmt}"),
        );
        let input = root.join(format!("g.{fmt}"));
        let imp = import("from-archive", &input, &[]);
        same_as_bsdtar(&input, &imp, ALL, &[]);
    }
    // Binary cpio of the other byte order: every 16-bit field swapped.
    let le = fs::read(root.join("g.bin")).unwrap();
    let mut be = Vec::new();
    let mut at = 0;
    while at + 26 <= le.len() {
        let h = &le[at..at + 26];
        if h[..2] != [0xc7, 0x71] {
            break;
        }
        let field = |i: usize| u16::from_le_bytes([h[i], h[i + 1]]);
        let namesize = field(20) as usize;
        let filesize = ((field(22) as usize) << 16) | field(24) as usize;
        for i in (0..26).step_by(2) {
            be.extend([h[i + 1], h[i]]);
        }
        at += 26;
        let name_len = namesize + (namesize & 1);
        be.extend(&le[at..at + name_len]);
        at += name_len;
        let data_len = filesize + (filesize & 1);
        be.extend(&le[at..at + data_len]);
        at += data_len;
    }
    be.extend(&le[at..]);
    let input = root.join("g.bin-be");
    fs::write(&input, &be).unwrap();
    let imp = import("from-archive", &input, &[]);
    same_as_bsdtar(&input, &imp, ALL, &[]);
}

#[test]
fn zips_of_every_writer_and_their_quirks() {
    need!("zip", "7z", "bsdtar");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let src = tree(root, false);
    let big = pseudo_random(3, 50_000).repeat(8);
    fs::write(src.join("d/text.txt"), &big).unwrap();
    set_times(&src);
    sh(&src, "zip -q -r -y ../iz.zip d");
    sh(&src, "7z a -tzip -bd ../p7.zip d > /dev/null");
    sh(&src, "7z a -tzip -mm=PPMd -bd ../ppmd.zip d > /dev/null");
    sh(&src, "7z a -tzip -mm=BZip2 -bd ../bz.zip d > /dev/null");
    let base = fs::read(root.join("iz.zip")).unwrap();
    // Data before the zip (a self-extracting stub), offsets not adjusted.
    let mut pre = b"#!/bin/sh\necho self-extracting\nexit 0\n".to_vec();
    pre.extend(vec![0u8; 4000]);
    pre.extend(&base);
    fs::write(root.join("prefix.zip"), &pre).unwrap();
    // Bytes after the end record.
    let mut post = base.clone();
    post.extend(vec![0u8; 3000]);
    fs::write(root.join("trail.zip"), &post).unwrap();
    // Padding between the entries and the central directory (offset right).
    let eocd = base.windows(4).rposition(|w| w == b"PK\x05\x06").unwrap();
    let cd = u32::from_le_bytes(base[eocd + 16..eocd + 20].try_into().unwrap()) as usize;
    let mut pad = base[..cd].to_vec();
    pad.extend(vec![0u8; 700]);
    pad.extend(&base[cd..eocd + 16]);
    pad.extend(((cd + 700) as u32).to_le_bytes());
    pad.extend(&base[eocd + 20..]);
    fs::write(root.join("padcd.zip"), &pad).unwrap();
    // MS-DOS era: made on FAT, backslashes, DOS attributes, no extra fields.
    fs::write(root.join("dos.py"), DOS_ZIP).unwrap();
    sh(root, "python3 dos.py dos.zip");
    for (name, cmp) in [
        ("iz.zip", ALL),
        ("p7.zip", BYTES_MODE_TIME),
        ("ppmd.zip", BYTES_MODE_TIME),
        ("bz.zip", BYTES_MODE_TIME),
        ("prefix.zip", ALL),
        ("trail.zip", ALL),
        ("padcd.zip", ALL),
        (
            "dos.zip",
            Cmp {
                mode: false,
                mtime: true,
                owner: false,
            },
        ),
    ] {
        let input = root.join(name);
        for prog in ["from-zip", "from-archive"] {
            let imp = import(prog, &input, &[]);
            same_as_bsdtar(&input, &imp, cmp, &[]);
        }
    }
    // Encrypted members: loud, named.
    sh(&src, "zip -q -P secret ../enc.zip d/a.txt");
    let imp = import("from-archive", &root.join("enc.zip"), &[]);
    loud(&imp, &["d/a.txt", "encrypted"]);
}

/// A zip as PKZIP wrote them under MS-DOS: version made by 0 (FAT), names with
/// backslashes, DOS attributes, DOS times, no extra fields, a directory entry.
const DOS_ZIP: &str = r#"
import struct, sys, zlib
entries = [("DIR\\", b"", 0x10), ("DIR\\README.TXT", b"read me\r\n", 0x20), ("DIR\\SUB\\DATA.BIN", bytes(range(256)) * 40, 0x21)]
out = bytearray(); central = bytearray()
t = (12 << 11) | (26 << 5) | 10; d = ((1994 - 1980) << 9) | (3 << 5) | 14
for name, data, attr in entries:
    n = name.encode("ascii"); crc = zlib.crc32(data)
    comp = zlib.compressobj(9, zlib.DEFLATED, -15); body = comp.compress(data) + comp.flush()
    method = 8 if data else 0
    if not data: body = b""
    off = len(out)
    out += struct.pack("<IHHHHHIIIHH", 0x04034b50, 20, 0, method, t, d, crc, len(body), len(data), len(n), 0) + n + body
    central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 20, 20, 0, method, t, d, crc, len(body), len(data), len(n), 0, 0, 0, 0, attr, off) + n
cd = len(out); out += central
out += struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, len(entries), len(entries), len(central), cd, 0)
open(sys.argv[1], "wb").write(out)
"#;

#[test]
fn zip_and_tar_names_in_legacy_encodings() {
    need!("bsdtar");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // Names in cp866, koi8-r, Shift-JIS and EUC-JP, without the UTF-8 flag.
    for (enc, label, raw, text) in [
        (
            "cp866",
            "CP866",
            vec![0x8f, 0xe0, 0xa8, 0xa2, 0xa5, 0xe2],
            "Привет",
        ),
        (
            "koi8-r",
            "KOI8-R",
            vec![0xf0, 0xd2, 0xc9, 0xd7, 0xc5, 0xd4],
            "Привет",
        ),
        ("shift_jis", "CP932", vec![0x93, 0xfa, 0x96, 0x7b], "日本"),
        ("euc-jp", "EUC-JP", vec![0xc6, 0xfc, 0xcb, 0xdc], "日本"),
    ] {
        let mut name = raw.clone();
        name.extend(b".txt");
        let zip_path = root.join(format!("{enc}.zip"));
        fs::write(&zip_path, stored_zip(&name, b"legacy")).unwrap();
        // Without the option: CP437, the zip standard's, with a hint.
        let imp = import("from-zip", &zip_path, &[]);
        assert_eq!(imp.code, 0, "{}", imp.stderr);
        assert!(imp.stderr.contains("--name-encoding"), "{}", imp.stderr);
        let imp = import("from-zip", &zip_path, &["--name-encoding", enc]);
        let hdr = format!("hdrcharset={label}");
        same_as_bsdtar(&zip_path, &imp, BYTES_MODE_TIME, &["--options", &hdr]);
        assert!(stored(&imp.archive).contains_key(&format!("{text}.txt")));
        // A tar with the same name: not UTF-8, reported with the hint...
        let mut t = tar_member(&name, b'0', b"legacy", 0o644);
        t.extend(vec![0u8; 1024]);
        let tar_path = root.join(format!("{enc}.tar"));
        fs::write(&tar_path, &t).unwrap();
        let imp = import("from-tar", &tar_path, &[]);
        loud(
            &imp,
            &["member name is not valid UTF-8", "--name-encoding ENC"],
        );
        // ...and decoded with it.
        let imp = import("from-archive", &tar_path, &["--name-encoding", enc]);
        assert_eq!(imp.code, 0, "{}", imp.stderr);
        assert_eq!(stored(&imp.archive)[&format!("{text}.txt")].data, b"legacy");
    }
}

/// A zip of one stored member with the raw name `name`, without the UTF-8 flag.
fn stored_zip(name: &[u8], data: &[u8]) -> Vec<u8> {
    let crc = crc32(data);
    let mut out = Vec::new();
    let t: u16 = (12 << 11) | (26 << 5) | 10;
    let d: u16 = ((2020 - 1980) << 9) | (9 << 5) | 13;
    let local = |out: &mut Vec<u8>| {
        out.extend(0x04034b50u32.to_le_bytes());
        for v in [20u16, 0, 0, t, d] {
            out.extend(v.to_le_bytes());
        }
        out.extend(crc.to_le_bytes());
        out.extend((data.len() as u32).to_le_bytes());
        out.extend((data.len() as u32).to_le_bytes());
        out.extend((name.len() as u16).to_le_bytes());
        out.extend(0u16.to_le_bytes());
        out.extend(name);
    };
    local(&mut out);
    out.extend(data);
    let cd = out.len();
    out.extend(0x02014b50u32.to_le_bytes());
    for v in [0x0314u16, 20, 0, 0, t, d] {
        out.extend(v.to_le_bytes());
    }
    out.extend(crc.to_le_bytes());
    out.extend((data.len() as u32).to_le_bytes());
    out.extend((data.len() as u32).to_le_bytes());
    for v in [name.len() as u16, 0, 0, 0, 0] {
        out.extend(v.to_le_bytes());
    }
    out.extend((0o100644u32 << 16).to_le_bytes());
    out.extend(0u32.to_le_bytes());
    out.extend(name);
    let cd_len = out.len() - cd;
    out.extend(0x06054b50u32.to_le_bytes());
    for v in [0u16, 0, 1, 1] {
        out.extend(v.to_le_bytes());
    }
    out.extend((cd_len as u32).to_le_bytes());
    out.extend((cd as u32).to_le_bytes());
    out.extend(0u16.to_le_bytes());
    out
}

#[test]
fn seven_zip_archives() {
    need!("7z", "bsdtar", "bzip2");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let src = tree(root, true);
    for (name, opts) in [
        ("lzma2", ""),
        ("lzma", "-m0=LZMA"),
        ("ppmd", "-m0=PPMd"),
        ("bzip2", "-m0=BZip2"),
        ("deflate", "-m0=Deflate"),
        ("copy", "-mx0"),
        ("nonsolid", "-ms=off"),
        ("bcj", "-mf=BCJ"),
    ] {
        let input = root.join(format!("{name}.7z"));
        sh(
            &src,
            &format!("7z a -bd {opts} {} d > /dev/null", input.display()),
        );
        let imp = import("from-archive", &input, &[]);
        same_as_bsdtar(&input, &imp, BYTES_MODE_TIME, &[]);
    }
    // Encrypted: loud, naming a member.
    let input = root.join("enc.7z");
    sh(
        &src,
        &format!("7z a -bd -psecret {} d/a.txt > /dev/null", input.display()),
    );
    let imp = import("from-archive", &input, &[]);
    loud(&imp, &["d/a.txt"]);
    // Truncated: loud.
    let bytes = fs::read(root.join("lzma2.7z")).unwrap();
    let cut = root.join("cut.7z");
    fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let imp = import("from-archive", &cut, &[]);
    assert_eq!(imp.code, 1, "{}", imp.stderr);
}

#[test]
fn rar_archives_v4_and_v5() {
    need!("bsdtar");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let data = pseudo_random(11, 100_000);
    let entries: Vec<(&str, &[u8], bool)> = vec![
        ("r", b"", true),
        ("r/a.txt", b"hello rar", false),
        ("r/b.bin", &data, false),
        ("r/\u{444}\u{430}\u{439}\u{43b}.txt", b"unicode name", false),
    ];
    for (name, bytes) in [("v4.rar", rar4(&entries)), ("v5.rar", rar5(&entries))] {
        let input = root.join(name);
        fs::write(&input, bytes).unwrap();
        let imp = import("from-archive", &input, &[]);
        same_as_bsdtar(&input, &imp, BYTES_MODE_TIME, &[]);
        assert_eq!(stored(&imp.archive).len(), 3, "{name}");
    }
}

#[test]
fn iso_images() {
    need!("genisoimage", "xorriso", "bsdtar");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let src = tree(root, true);
    for (name, cmd, cmp) in [
        ("rr.iso", "genisoimage -quiet -R -J -o ../rr.iso d", ALL),
        (
            "joliet.iso",
            "genisoimage -quiet -J -joliet-long -o ../joliet.iso d",
            Cmp {
                mode: false,
                mtime: true,
                owner: false,
            },
        ),
        (
            "xorriso.iso",
            "xorriso -as mkisofs -quiet -R -o ../xorriso.iso d",
            ALL,
        ),
    ] {
        sh(&src, cmd);
        let input = root.join(name);
        let imp = import("from-archive", &input, &[]);
        same_as_bsdtar(&input, &imp, cmp, &[]);
    }
}

#[test]
fn ar_deb_rpm_cab_lha_xar() {
    need!("ar", "dpkg-deb", "rpmbuild", "gcab", "bsdtar");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let src = tree(root, false);
    // ar (GNU binutils).
    sh(&src, "ar rc ../t.a d/a.txt d/exe.sh d/sub/b.bin");
    // A Debian package.
    let pkg = root.join("pkg");
    fs::create_dir_all(pkg.join("DEBIAN")).unwrap();
    fs::write(
        pkg.join("DEBIAN/control"),
        "Package: bctest\nVersion: 1.0\nArchitecture: all\nMaintainer: t <t@example.org>\nDescription: test\n",
    )
    .unwrap();
    fs::create_dir_all(pkg.join("usr/share/bctest")).unwrap();
    fs::write(
        pkg.join("usr/share/bctest/data.bin"),
        pseudo_random(5, 20_000),
    )
    .unwrap();
    sh(
        root,
        "dpkg-deb --root-owner-group -Zxz -b pkg t.deb > /dev/null",
    );
    // An rpm.
    fs::write(root.join("t.spec"), RPM_SPEC).unwrap();
    sh(
        root,
        "rpmbuild --quiet -bb --define \"_topdir $PWD/rpm\" --define \"_sourcedir $PWD/src\" t.spec",
    );
    let rpm = walk(&root.join("rpm/RPMS"))
        .into_iter()
        .find(|p| p.extension().is_some_and(|e| e == "rpm"))
        .unwrap();
    fs::copy(&rpm, root.join("t.rpm")).unwrap();
    // Cabinets, stored and MSZIP.
    sh(&src, "gcab -c ../stored.cab d/a.txt d/sub/b.bin d/exe.sh");
    sh(&src, "gcab -c -z ../mszip.cab d/a.txt d/sub/b.bin d/exe.sh");
    // LHA, level 0 headers.
    fs::write(
        root.join("t.lzh"),
        lha(&[
            ("a.txt", b"hello lha"),
            ("dir\\b.bin", &pseudo_random(9, 5000)),
        ]),
    )
    .unwrap();
    // xar.
    sh(&src, "bsdtar --format xar -cf ../t.xar d");
    for (name, cmp) in [
        ("t.a", ALL),
        ("t.deb", ALL),
        ("t.rpm", ALL),
        (
            "stored.cab",
            Cmp {
                mode: false,
                mtime: true,
                owner: false,
            },
        ),
        (
            "mszip.cab",
            Cmp {
                mode: false,
                mtime: true,
                owner: false,
            },
        ),
        ("t.lzh", BYTES_MODE_TIME),
        ("t.xar", ALL),
    ] {
        let input = root.join(name);
        let imp = import("from-archive", &input, &[]);
        same_as_bsdtar(&input, &imp, cmp, &[]);
    }
    // The deb's members are its control and data tars, as bsdtar extracts them.
    let s = stored(&root.join("t.deb.barecat"));
    assert!(
        s.contains_key("debian-binary"),
        "{:?}",
        s.keys().collect::<Vec<_>>()
    );
}

const RPM_SPEC: &str = "Name: bctest
Version: 1.0
Release: 1
Summary: test
License: MIT
BuildArch: noarch
%description
test
%install
mkdir -p %{buildroot}/opt/bctest/sub
cp %{_sourcedir}/d/a.txt %{_sourcedir}/d/exe.sh %{buildroot}/opt/bctest/
cp %{_sourcedir}/d/sub/b.bin %{buildroot}/opt/bctest/sub/
%files
/opt/bctest
";

#[test]
fn python_tarfile_and_zipfile() {
    need!("bsdtar");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let src = tree(root, true);
    let script = r#"
import tarfile, zipfile, os, sys
os.chdir(sys.argv[1])
for name, fmt in [("gnu", tarfile.GNU_FORMAT), ("pax", tarfile.PAX_FORMAT), ("ustar", tarfile.USTAR_FORMAT)]:
    for mode, ext in [("w", "tar"), ("w:gz", "tgz"), ("w:bz2", "tbz"), ("w:xz", "txz")]:
        try:
            with tarfile.open(f"../py-{name}.{ext}", mode, format=fmt) as t:
                t.add("d")
        except ValueError:
            pass
with zipfile.ZipFile("../py.zip", "w", zipfile.ZIP_DEFLATED) as z:
    for base, dirs, files in os.walk("d"):
        for f in files:
            p = os.path.join(base, f)
            if not os.path.islink(p):
                z.write(p)
"#;
    fs::write(root.join("mk.py"), script).unwrap();
    run_ok("python3", [root.join("mk.py").as_os_str(), src.as_os_str()]);
    for e in walk(root) {
        let name = e.file_name().unwrap().to_string_lossy().into_owned();
        if !name.starts_with("py") || name.ends_with(".barecat") || !e.is_file() {
            continue;
        }
        let imp = import("from-archive", &e, &[]);
        // zipfile keeps no owner.
        let cmp = if name.ends_with(".zip") {
            BYTES_MODE_TIME
        } else {
            ALL
        };
        same_as_bsdtar(&e, &imp, cmp, &[]);
    }
}

#[test]
fn unknown_formats_and_the_wrap_option_fail_clearly() {
    need!("bsdtar");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let input = root.join("notes.txt");
    fs::write(&input, "just some text, not an archive\n".repeat(40)).unwrap();
    let imp = import("from-archive", &input, &[]);
    loud(&imp, &["not an archive in a known format"]);
    let rar = root.join("x.rar");
    fs::write(&rar, rar5(&[("a", b"a", false)])).unwrap();
    let imp = import("from-archive", &rar, &["--wrap"]);
    loud(&imp, &["cannot be indexed in place"]);
    // barecat convert tells the format by content, whatever the name.
    let renamed = root.join("archive.bin");
    fs::copy(&rar, &renamed).unwrap();
    let out = root.join("conv.barecat");
    let o = run(
        bin("barecat"),
        [
            std::ffi::OsStr::new("convert"),
            renamed.as_os_str(),
            out.as_os_str(),
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(stored(&out)["a"].data, b"a");
}
