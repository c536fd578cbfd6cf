//! Hostile archives and inputs: paths that `--strip-components` could turn into an
//! escape, bombs (huge declared sizes in rows, tar and zip headers; 10,000-level
//! deep paths; 100,000 empty entries) handled in bounded memory and without
//! overflowing the stack, and an index carrying malicious triggers and views that
//! every read-only command opens without running any of it.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::support::maint::*;
use crate::support::*;
use barecat::{Archive, ArchiveWriter, Layout, Meta, WriterOptions};

/// Run a command under `/usr/bin/time` (with the usual time limit): its output and
/// its peak resident set size in MiB.
fn run_rss<I, S>(program: impl AsRef<OsStr>, args: I) -> (Output, f64)
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let tmp = tempfile::NamedTempFile::new().unwrap();
    let mut all: Vec<OsString> = vec![
        "-f".into(),
        "%M".into(),
        "-o".into(),
        tmp.path().into(),
        program.as_ref().into(),
    ];
    all.extend(args.into_iter().map(|a| a.as_ref().to_owned()));
    let o = run_t("/usr/bin/time", all);
    let text = fs::read_to_string(tmp.path()).unwrap();
    let kb: f64 = text
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or_else(|| panic!("no RSS figure in {text:?}"));
    (o, kb / 1024.0)
}

fn no_panic(what: &str, o: &Output) {
    let err = stderr(o);
    assert!(
        !err.contains("panicked") && !err.contains("internal error") && !err.contains("overflow"),
        "{what}: {err}"
    );
    assert!(
        o.status.code().is_some(),
        "{what}: killed by a signal ({})",
        o.status
    );
}

// ----------------------------------------------------------------- strip-components

/// Rows no writer stores, put in by hand: each one would escape after stripping one
/// or two components if extract checked the path only after stripping.
#[test]
fn strip_components_never_turns_a_stored_path_into_an_escape() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let p = root.join("evil.barecat");
    let mut w = ArchiveWriter::open(&p, WriterOptions::default()).unwrap();
    w.add_file("top/a.txt", Meta::default(), b"safe", None)
        .unwrap();
    w.add_file("one/x", Meta::default(), b"first", None)
        .unwrap();
    w.add_file("two/x", Meta::default(), b"second", None)
        .unwrap();
    w.finish().unwrap();
    let evil = [
        "a/../../evil1",
        "k/./../../evil2",
        "k//../evil3",
        "/abs/evil4",
        "../evil5",
        "a/b/../../../evil6",
        "a/.",
    ];
    let c = rusqlite::Connection::open(&p).unwrap();
    c.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
    for e in evil {
        c.execute(
            "INSERT INTO files (path, shard, offset, size, crc32c)
             SELECT ?1, shard, offset, size, crc32c FROM files WHERE path = 'top/a.txt'",
            [e],
        )
        .unwrap();
        c.execute(
            "INSERT OR IGNORE INTO dirs (path) VALUES (?1)",
            [format!("{e}d")],
        )
        .unwrap();
    }
    drop(c);
    fs::create_dir(root.join("outside")).unwrap();
    for strip in ["0", "1", "2", "3"] {
        let dest = root.join(format!("outside/dest{strip}"));
        fs::create_dir(&dest).unwrap();
        let before = walkdir_names(root, &dest);
        let o = run_t(
            bin("barecat-extract"),
            [
                p.as_os_str(),
                "-C".as_ref(),
                dest.as_os_str(),
                "--strip-components".as_ref(),
                strip.as_ref(),
            ],
        );
        no_panic("extract", &o);
        assert_eq!(code(&o), 1, "strip {strip}: {}", stderr(&o));
        for e in evil {
            assert!(
                stderr(&o).contains(&format!("{e:?}")),
                "strip {strip}: {e} not named: {}",
                stderr(&o)
            );
        }
        assert_eq!(
            before,
            walkdir_names(root, &dest),
            "strip {strip}: something outside changed"
        );
        let inside = walkdir_names(&dest, Path::new("/nonexistent"));
        assert!(
            inside.iter().all(|n| !n.contains("evil")),
            "strip {strip}: {inside:?}"
        );
        match strip {
            "0" => assert_eq!(fs::read(dest.join("top/a.txt")).unwrap(), b"safe"),
            "1" => {
                // one/x and two/x both become x: the second is refused, not written
                // over the first.
                assert_eq!(fs::read(dest.join("a.txt")).unwrap(), b"safe");
                assert_eq!(fs::read(dest.join("x")).unwrap(), b"first");
                assert!(
                    stderr(&o).contains("two/x") || stderr(&o).contains("x: "),
                    "{}",
                    stderr(&o)
                );
            }
            _ => assert!(!dest.join("x").exists()),
        }
    }
}

/// Every path below `root` except below `skip`.
fn walkdir_names(root: &Path, skip: &Path) -> Vec<String> {
    let mut v: Vec<String> = walk(root)
        .into_iter()
        .filter(|p| !p.starts_with(skip))
        .map(|p| p.display().to_string())
        .collect();
    v.sort();
    v
}

/// The entries below `root`, iteratively (deep trees must not overflow the test).
fn walk(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(rd) = fs::read_dir(&d) else { continue };
        for e in rd {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                todo.push(e.path());
            }
            out.push(e.path());
        }
    }
    out
}

// ----------------------------------------------------------------- size bombs

/// A tar member whose header claims 1 TB (and one claiming 8 GiB in octal), with a
/// few bytes after it: from-tar reports the truncation and allocates nothing like it.
#[test]
fn tar_headers_claiming_huge_sizes_allocate_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    for (name, size) in [("tb", 1u64 << 40), ("octal", 0o77777777777)] {
        let mut h = tar::Header::new_gnu();
        h.set_path("big.bin").unwrap();
        h.set_mode(0o644);
        h.set_size(size);
        h.set_cksum();
        let mut bytes = h.as_bytes().to_vec();
        bytes.extend_from_slice(&[7u8; 4096]);
        let input = tmp.path().join(format!("{name}.tar"));
        fs::write(&input, &bytes).unwrap();
        let gz = tmp.path().join(format!("{name}.tar.gz"));
        let mut enc = flate2::write::GzEncoder::new(
            fs::File::create(&gz).unwrap(),
            flate2::Compression::fast(),
        );
        enc.write_all(&bytes).unwrap();
        enc.finish().unwrap();
        for input in [input, gz] {
            let out = tmp.path().join(format!("{name}.barecat"));
            let (o, rss) = run_rss(
                bin("barecat-from-tar"),
                [input.as_os_str(), out.as_os_str()],
            );
            no_panic("from-tar", &o);
            assert_eq!(code(&o), 1, "{}", stderr(&o));
            assert!(stderr(&o).contains("truncated"), "{}", stderr(&o));
            println!("from-tar {input:?}: {rss:.1} MiB: {}", stderr(&o).trim());
            assert!(rss < 150.0, "from-tar of a {size}-byte claim: {rss:.0} MiB");
            // What was committed before the damage is a valid archive.
            if out.exists() {
                let (c, v) = verify_json(&out, false);
                assert_eq!(c, 0, "{v:#}");
                Layout::remove(&out).unwrap();
            }
        }
    }
}

/// A PAX extended header, a GNU long name and a long link claiming a gigabyte,
/// backed by 200 MiB of zeros that gzip shrinks to a few hundred KB: the `tar`
/// crate would hold each whole in memory; the import stops at 16 MiB.
#[test]
fn tar_metadata_members_claiming_gigabytes_are_bounded() {
    let tmp = tempfile::tempdir().unwrap();
    let gz = |data: &[u8]| {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    };
    let zeros = gz(&vec![0u8; 1 << 20]);
    for (kind, name) in [
        (b'x', "././@PaxHeader"),
        (b'L', "././@LongLink"),
        (b'K', "././@LongLink"),
    ] {
        let mut h = tar::Header::new_ustar();
        h.set_path(name).unwrap();
        h.set_size(1 << 30);
        h.set_entry_type(tar::EntryType::new(kind));
        h.set_cksum();
        let mut bytes = gz(h.as_bytes());
        for _ in 0..200 {
            bytes.extend_from_slice(&zeros);
        }
        let input = tmp.path().join(format!("{}.tar.gz", kind as char));
        fs::write(&input, &bytes).unwrap();
        let out = tmp.path().join(format!("{}.barecat", kind as char));
        let (o, rss) = run_rss(
            bin("barecat-from-tar"),
            [input.as_os_str(), out.as_os_str()],
        );
        println!(
            "from-tar {}: {rss:.1} MiB: {}",
            kind as char,
            stderr(&o).trim()
        );
        no_panic("from-tar", &o);
        assert_eq!(code(&o), 1, "{}", stderr(&o));
        assert_clean_error(&o);
        assert!(stderr(&o).contains("exceed 16 MiB"), "{}", stderr(&o));
        assert!(rss < 80.0, "{}: {rss:.0} MiB", kind as char);
    }
}

/// Patch the uncompressed size of the only entry of a zip, in its local header and
/// in the central directory.
fn patch_zip_size(bytes: &mut [u8], size: u32) {
    assert_eq!(&bytes[..4], b"PK\x03\x04");
    bytes[22..26].copy_from_slice(&size.to_le_bytes());
    let cd = bytes
        .windows(4)
        .position(|w| w == b"PK\x01\x02")
        .expect("central directory");
    bytes[cd + 24..cd + 28].copy_from_slice(&size.to_le_bytes());
}

/// Zip entries whose headers understate what they inflate to (a deflate bomb
/// behind a small declared size, on both the buffered and the streamed path) are
/// refused without inflating the rest into memory; one whose header claims 4 GiB
/// for a few bytes is reported as short.
#[test]
fn zip_entries_lying_about_their_size_allocate_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let bomb = 256usize << 20;
    let make = |name: &str, deflated: bool, data: &[u8], claim: u32| {
        let p = tmp.path().join(name);
        let mut b = single_entry_zip(deflated, data);
        patch_zip_size(&mut b, claim);
        fs::write(&p, b).unwrap();
        p
    };
    let zeros = deflate_zeros(bomb);
    let cases = [
        ("small.zip", make("small.zip", true, &zeros, 100)),
        ("streamed.zip", make("streamed.zip", true, &zeros, 8 << 20)),
        (
            "claims4g.zip",
            make("claims4g.zip", false, b"tiny", 0xffff_fffe),
        ),
    ];
    for (name, input) in cases {
        let out = tmp.path().join(format!("{name}.barecat"));
        let (o, rss) = run_rss(
            bin("barecat-from-zip"),
            [input.as_os_str(), out.as_os_str()],
        );
        no_panic(name, &o);
        assert_eq!(code(&o), 1, "{name}: {}", stderr(&o));
        assert!(stderr(&o).contains("ok.txt"), "{name}: {}", stderr(&o));
        println!("from-zip {name}: {rss:.1} MiB: {}", stderr(&o).trim());
        assert!(rss < 150.0, "{name}: from-zip peaked at {rss:.0} MiB");
        let a = Archive::open(&out).unwrap();
        assert_eq!(
            a.count_files().unwrap(),
            0,
            "{name}: a lying entry was stored"
        );
    }
}

/// Raw deflate of `n` zero bytes, cheaply: one sync-flushed block of 1 MiB (its
/// back-references stay inside it) repeated, then an empty final block.
fn deflate_zeros(n: usize) -> Vec<u8> {
    let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(&vec![0u8; 1 << 20]).unwrap();
    e.flush().unwrap();
    let chunk = e.get_ref().clone();
    let mut out = Vec::new();
    for _ in 0..n >> 20 {
        out.extend_from_slice(&chunk);
    }
    out.extend_from_slice(&[0x03, 0x00]);
    // It does inflate to n zeros.
    let mut d = flate2::read::DeflateDecoder::new(&out[..]);
    let got = std::io::copy(&mut d, &mut std::io::sink()).unwrap();
    assert_eq!(got, n as u64);
    out
}

/// A zip with one entry `ok.txt` holding `data` (stored, or already deflated),
/// whose header claims the CRC-32 and size of "fine" (the size is patched after).
fn single_entry_zip(deflated: bool, data: &[u8]) -> Vec<u8> {
    let m: u16 = if deflated { 8 } else { 0 };
    let crc = crc32fast::hash(b"fine");
    let name = b"ok.txt";
    let mut out = Vec::new();
    let local = |out: &mut Vec<u8>| {
        out.extend_from_slice(b"PK\x03\x04");
        out.extend_from_slice(&20u16.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(&m.to_le_bytes());
        out.extend_from_slice(&[0, 0, 0x21, 0]); // time, date
        out.extend_from_slice(&crc.to_le_bytes());
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.extend_from_slice(&4u32.to_le_bytes());
        out.extend_from_slice(&(name.len() as u16).to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(name);
    };
    local(&mut out);
    out.extend_from_slice(data);
    let cd_at = out.len();
    out.extend_from_slice(b"PK\x01\x02");
    out.extend_from_slice(&20u16.to_le_bytes());
    out.extend_from_slice(&20u16.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&m.to_le_bytes());
    out.extend_from_slice(&[0, 0, 0x21, 0]);
    out.extend_from_slice(&crc.to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out.extend_from_slice(&4u32.to_le_bytes());
    out.extend_from_slice(&(name.len() as u16).to_le_bytes());
    out.extend_from_slice(&[0u8; 12]); // extra, comment, disk, attrs
    out.extend_from_slice(&0u32.to_le_bytes()); // local header offset
    out.extend_from_slice(name);
    let cd_len = out.len() - cd_at;
    out.extend_from_slice(b"PK\x05\x06");
    out.extend_from_slice(&[0u8; 4]);
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&(cd_len as u32).to_le_bytes());
    out.extend_from_slice(&(cd_at as u32).to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out
}

/// A row claiming a terabyte: every reader refuses it by its extent, before
/// allocating anything.
#[test]
fn a_row_claiming_a_terabyte_allocates_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("tb.barecat");
    let mut w = ArchiveWriter::open(&p, WriterOptions::default()).unwrap();
    w.add_file("big.bin", Meta::default(), &[1u8; 4096], None)
        .unwrap();
    w.finish().unwrap();
    raw_sql(&p, "UPDATE files SET size = 1099511627776");
    let dest = tmp.path().join("x");
    let z = tmp.path().join("o.zip");
    let t = tmp.path().join("o.tar");
    let m = tmp.path().join("m.barecat");
    for args in [
        vec![
            OsString::from("barecat-cat"),
            p.clone().into(),
            "big.bin".into(),
        ],
        vec![
            "barecat-extract".into(),
            p.clone().into(),
            "-C".into(),
            dest.into(),
        ],
        vec!["barecat-to-zip".into(), p.clone().into(), z.into()],
        vec!["barecat-to-tar".into(), p.clone().into(), t.into()],
        vec!["barecat-verify".into(), p.clone().into()],
        vec![
            "barecat-merge".into(),
            "-o".into(),
            m.into(),
            p.clone().into(),
        ],
        vec!["barecat-defrag".into(), p.clone().into()],
    ] {
        let (o, rss) = run_rss(bin(args[0].to_str().unwrap()), &args[1..]);
        no_panic(args[0].to_str().unwrap(), &o);
        assert_eq!(code(&o), 1, "{args:?}: {}", stderr(&o));
        println!(
            "1 TB row {:?}: {rss:.1} MiB: {}",
            args[0],
            stderr(&o).trim()
        );
        assert!(rss < 100.0, "{args:?}: {rss:.0} MiB");
    }
}

// ----------------------------------------------------------------- deep nesting

/// A file 3,000 directories deep, every command run with a 1 MiB main stack and
/// 256 KiB thread stacks: a recursion over path components would overflow them.
#[test]
fn three_thousand_levels_deep_on_small_stacks() {
    deep_case(3_000, true);
}

/// The same, 10,000 levels deep with the default stacks (the index alone holds
/// ~100 MB of directory paths, so this takes minutes in a debug build):
/// `cargo test --release --test it -- --ignored reliability::hostile::ten_thousand --nocapture`.
#[test]
#[ignore = "slow: 10,000 levels make a ~200 MB index"]
fn ten_thousand_levels_deep() {
    deep_case(10_000, false);
}

fn deep_case(depth: usize, small_stacks: bool) {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("deep.barecat");
    let deep = format!("{}f", "d/".repeat(depth));
    let t0 = std::time::Instant::now();
    let mut w = ArchiveWriter::open(&p, WriterOptions::default()).unwrap();
    w.add_file(&deep, Meta::default(), b"bottom", None).unwrap();
    w.add_file("top.txt", Meta::default(), b"top", None)
        .unwrap();
    w.finish().unwrap();
    println!("depth {depth}: built in {:?}", t0.elapsed());
    let dest = tmp.path().join("x");
    let z = tmp.path().join("o.zip");
    let t = tmp.path().join("o.tar");
    for args in [
        vec![OsString::from("barecat-ls"), "-R".into(), p.clone().into()],
        vec![
            "barecat-ls".into(),
            "-lR".into(),
            "--json".into(),
            p.clone().into(),
        ],
        vec!["barecat-ls".into(), p.clone().into(), "**/f".into()],
        vec!["barecat-du".into(), "-a".into(), p.clone().into()],
        vec!["barecat-to-ncdu-json".into(), p.clone().into()],
        vec!["barecat-index-to-csv".into(), p.clone().into()],
        vec!["barecat-verify".into(), p.clone().into()],
        vec!["barecat-cat".into(), p.clone().into(), deep.clone().into()],
        vec!["barecat-to-tar".into(), p.clone().into(), t.clone().into()],
        vec!["barecat-to-zip".into(), p.clone().into(), z.clone().into()],
        vec![
            "barecat-extract".into(),
            p.clone().into(),
            "-C".into(),
            dest.clone().into(),
        ],
    ] {
        let t0 = std::time::Instant::now();
        let program = bin(args[0].to_str().unwrap());
        let o = if small_stacks {
            let mut all: Vec<OsString> = vec![
                "-c".into(),
                "ulimit -s 1024 && RUST_MIN_STACK=262144 exec \"$@\"".into(),
                "sh".into(),
                program.into(),
            ];
            all.extend(args[1..].iter().cloned());
            run_t("sh", all)
        } else {
            run_t(program, &args[1..])
        };
        println!(
            "depth {depth}: {:?}: {:?}, {} bytes out",
            args[0],
            t0.elapsed(),
            o.stdout.len()
        );
        no_panic(args[0].to_str().unwrap(), &o);
        assert_eq!(code(&o), 0, "{args:?}: {}", stderr(&o));
    }
    // The extracted file, reached one directory at a time (the path is longer
    // than PATH_MAX).
    let mut dir = fs::File::open(&dest).unwrap();
    for _ in 0..depth {
        dir = openat_dir(&dir, "d");
    }
    let f = rustix::fs::openat(
        &dir,
        "f",
        rustix::fs::OFlags::RDONLY,
        rustix::fs::Mode::empty(),
    )
    .unwrap();
    let mut s = String::new();
    std::io::Read::read_to_string(&mut fs::File::from(f), &mut s).unwrap();
    assert_eq!(s, "bottom");
    // The tar holds the full name.
    let mut ar = tar::Archive::new(fs::File::open(&t).unwrap());
    let names: Vec<String> = ar
        .entries()
        .unwrap()
        .filter_map(|e| {
            let e = e.unwrap();
            e.header()
                .entry_type()
                .is_file()
                .then(|| e.path().unwrap().to_string_lossy().into_owned())
        })
        .collect();
    assert!(names.contains(&deep), "deep member missing from the tar");
    // Removing the extracted tree needs no deep recursion either.
    let t0 = std::time::Instant::now();
    remove_deep(&dest);
    println!("depth {depth}: removed in {:?}", t0.elapsed());
}

fn openat_dir(dir: &fs::File, name: &str) -> fs::File {
    let fd = rustix::fs::openat(
        dir,
        name,
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY,
        rustix::fs::Mode::empty(),
    )
    .unwrap();
    fs::File::from(fd)
}

/// Remove an extracted `d/d/.../f` chain too deep for path-based removal: pull
/// the chain up one level at a time, then remove what is left.
fn remove_deep(root: &Path) {
    let (d, dd, t) = (root.join("d"), root.join("d/d"), root.join("t"));
    while dd.is_dir() {
        fs::rename(&dd, &t).unwrap();
        fs::remove_dir(&d).unwrap();
        fs::rename(&t, &d).unwrap();
    }
    fs::remove_dir_all(root).unwrap();
}

// ----------------------------------------------------------------- many entries

/// An archive of `n` empty files in `n / 1000` directories, built fast.
fn empty_entries(p: &Path, n: usize) {
    let mut w = ArchiveWriter::open(p, WriterOptions::default()).unwrap();
    for i in 0..n {
        w.add_file(
            &format!("d{:03}/e{i:07}", i / 1000),
            Meta::default(),
            b"",
            None,
        )
        .unwrap();
    }
    w.finish().unwrap();
}

/// 100,000 empty entries: every reading command stays within a memory bound that
/// does not grow with the entry count.
#[test]
fn a_hundred_thousand_empty_entries_in_bounded_memory() {
    many_entries(100_000, 100.0);
}

/// The figures of RELIABILITY.md:
/// `cargo test --release --test it -- --ignored reliability::hostile::a_million --nocapture`.
#[test]
#[ignore = "slow: builds and extracts a million entries"]
fn a_million_empty_entries_in_bounded_memory() {
    many_entries(1_000_000, 250.0);
}

fn many_entries(n: usize, bound_mib: f64) {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("many.barecat");
    let t0 = std::time::Instant::now();
    empty_entries(&p, n);
    println!("{n} empty entries: built in {:?}", t0.elapsed());
    let dest = tmp.path().join("x");
    let z = tmp.path().join("o.zip");
    let t = tmp.path().join("o.tar");
    let m = tmp.path().join("m.barecat");
    let a = OsString::from(&p);
    for args in [
        vec![OsString::from("barecat-verify"), "-q".into(), a.clone()],
        vec!["barecat-ls".into(), "-R".into(), a.clone()],
        vec!["barecat-ls".into(), "-lR".into(), a.clone()],
        vec!["barecat-du".into(), "-a".into(), a.clone()],
        vec!["barecat-index-to-csv".into(), a.clone()],
        vec!["barecat-to-ncdu-json".into(), a.clone()],
        vec![
            "barecat-to-zip".into(),
            "-q".into(),
            a.clone(),
            z.clone().into(),
        ],
        vec![
            "barecat-to-tar".into(),
            "-q".into(),
            a.clone(),
            t.clone().into(),
        ],
        vec![
            "barecat-extract".into(),
            "-q".into(),
            a.clone(),
            "-C".into(),
            dest.clone().into(),
        ],
        vec![
            "barecat-merge".into(),
            "-q".into(),
            "-o".into(),
            m.clone().into(),
            a.clone(),
        ],
    ] {
        let t0 = std::time::Instant::now();
        let (o, rss) = run_rss(bin(args[0].to_str().unwrap()), &args[1..]);
        no_panic(args[0].to_str().unwrap(), &o);
        assert_eq!(code(&o), 0, "{args:?}: {}", stderr(&o));
        println!(
            "{n} empty entries: {} {}: peak RSS {rss:.1} MiB, {:.1} s",
            args[0].to_string_lossy(),
            args[1].to_string_lossy(),
            t0.elapsed().as_secs_f64()
        );
        assert!(
            rss < bound_mib,
            "{args:?}: {rss:.0} MiB for {n} empty entries"
        );
    }
    assert_eq!(walk(&dest).len(), n + n / 1000);
}

// ----------------------------------------------------------------- triggers and views

/// Every read-only command on an index whose tables carry triggers that would
/// write (on every table, for every kind of change) leaves the index byte for
/// byte as it was; a view standing in for a table is refused with a clear error.
#[test]
fn malicious_triggers_and_views_run_nothing_in_any_read_command() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("t.barecat");
    let mut w = ArchiveWriter::open(&p, WriterOptions::default()).unwrap();
    w.add_file("a/x.txt", Meta::default(), b"hello", None)
        .unwrap();
    w.add_file("b.bin", Meta::default(), &[5u8; 3000], None)
        .unwrap();
    w.add_dir("empty", Meta::default()).unwrap();
    w.finish().unwrap();
    let c = rusqlite::Connection::open(&p).unwrap();
    c.execute_batch("CREATE TABLE pwned (what TEXT);").unwrap();
    for table in ["files", "dirs", "config"] {
        for (when, ev) in [
            ("BEFORE", "INSERT"),
            ("AFTER", "INSERT"),
            ("BEFORE", "UPDATE"),
            ("AFTER", "UPDATE"),
            ("BEFORE", "DELETE"),
            ("AFTER", "DELETE"),
        ] {
            c.execute_batch(&format!(
                "CREATE TRIGGER evil_{table}_{when}_{ev} {when} {ev} ON {table}
                 BEGIN INSERT INTO pwned VALUES ('{table} {when} {ev}');
                       DELETE FROM files; DELETE FROM dirs; END;"
            ))
            .unwrap();
        }
    }
    drop(c);
    let before = fs::read(&p).unwrap();
    let dest = tmp.path().join("x");
    let out = |n: &str| OsString::from(tmp.path().join(n));
    let read_commands = |p: &Path| -> Vec<Vec<OsString>> {
        let a = OsString::from(p);
        vec![
            vec!["barecat-cat".into(), a.clone(), "a/x.txt".into()],
            vec!["barecat-ls".into(), "-lR".into(), a.clone()],
            vec!["barecat-du".into(), "-a".into(), a.clone()],
            vec!["barecat-verify".into(), a.clone()],
            vec!["barecat-verify".into(), "--quick".into(), a.clone()],
            vec!["barecat-index-to-csv".into(), a.clone()],
            vec!["barecat-to-ncdu-json".into(), a.clone()],
            vec![
                "barecat-extract".into(),
                a.clone(),
                "-C".into(),
                dest.clone().into(),
            ],
            vec!["barecat-to-zip".into(), a.clone(), out("o.zip")],
            vec!["barecat-to-tar".into(), a.clone(), out("o.tar")],
            vec![
                "barecat-merge".into(),
                "-f".into(),
                "-o".into(),
                out("m.barecat"),
                a.clone(),
            ],
            vec!["barecat-defrag".into(), "--dry-run".into(), a.clone()],
            vec![
                "barecat-extract-single".into(),
                "--barecat-file".into(),
                a.clone(),
                "--path".into(),
                "a/x.txt".into(),
            ],
        ]
    };
    for args in read_commands(&p) {
        let o = run_t(bin(args[0].to_str().unwrap()), &args[1..]);
        no_panic(args[0].to_str().unwrap(), &o);
        assert_eq!(code(&o), 0, "{args:?}: {}", stderr(&o));
        assert!(
            fs::read(&p).unwrap() == before,
            "{args:?} changed the index"
        );
    }
    // The merged copy carries no trigger of ours to run either: it holds the data.
    assert_eq!(
        Archive::open(tmp.path().join("m.barecat"))
            .unwrap()
            .read("a/x.txt")
            .unwrap(),
        b"hello"
    );
    let n: i64 = rusqlite::Connection::open(&p)
        .unwrap()
        .query_row("SELECT count(*) FROM pwned", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 0);

    // A view named like each table, over the renamed real one.
    for table in ["files", "dirs", "config"] {
        let q = tmp.path().join(format!("view-{table}.barecat"));
        fs::copy(&p, &q).unwrap();
        fs::copy(
            barecat::Layout::current(&p).shard_path(0),
            barecat::Layout::current(&q).shard_path(0),
        )
        .unwrap();
        raw_sql(
            &q,
            &format!(
                "PRAGMA legacy_alter_table = ON; PRAGMA foreign_keys = OFF;
                 ALTER TABLE {table} RENAME TO {table}_real;
                 CREATE VIEW {table} AS SELECT * FROM {table}_real;"
            ),
        );
        let before = fs::read(&q).unwrap();
        for args in read_commands(&q) {
            let o = run_t(bin(args[0].to_str().unwrap()), &args[1..]);
            no_panic(args[0].to_str().unwrap(), &o);
            assert_eq!(
                code(&o),
                if args[0] == "barecat-verify" { 2 } else { 1 },
                "{table} {args:?}: {}",
                stderr(&o)
            );
            assert_eq!(
                stderr(&o).trim().lines().count(),
                1,
                "{table} {args:?}: {}",
                stderr(&o)
            );
            assert!(
                stderr(&o).contains(&format!("'{table}' is a view")),
                "{table} {args:?}: {}",
                stderr(&o)
            );
            assert!(
                fs::read(&q).unwrap() == before,
                "{args:?} changed the index"
            );
        }
    }
}

/// Read connections leave temporary storage to SQLite's default, so that a sort
/// bigger than the page cache (`du -a` of millions of rows) spills to a temporary
/// file instead of growing in memory (96 MiB for a million entries when it was
/// kept in memory).
#[test]
fn sorts_can_spill_out_of_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("s.barecat");
    empty_entries(&p, 10);
    let a = Archive::open(&p).unwrap();
    let store: i64 = a
        .with_index(|i| {
            i.conn()
                .query_row("PRAGMA temp_store", [], |r| r.get(0))
                .map_err(|e| barecat::Error::sqlite(&p, e))
        })
        .unwrap();
    assert_eq!(store, 0, "temp_store is not the default (file)");
}
