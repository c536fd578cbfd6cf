//! barecat-mount: real FUSE mounts of real archives, read through the kernel by
//! real programs (diff, find, cmp) and by this process, against the source tree
//! and the index. Every test skips with one line where /dev/fuse or fusermount3 is
//! missing; a guard unmounts whatever happens, and a watchdog kills a daemon that
//! would make a test hang.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{DirEntryExt, FileExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::mount::{fuse_available, is_mounted, mount, mount_foreground};
use crate::support::{bin, pseudo_random, run, run_ok, write_tree, ChildExt, CommandExt};
use barecat::{Archive, ArchiveWriter, CreateMode, Entry, Meta, WriterOptions};

/// A source tree with nested directories, an empty directory, an empty file, a
/// file of several MiB (read in many requests) and unicode names.
fn source_tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let names = [
        "top.txt",
        "a/b/c/deep.bin",
        "a/b/sibling.dat",
        "a/ünïcødé/日本語ファイル.txt",
        "a/ünïcødé/emoji 🐱 and spaces.bin",
        "empty-file",
        "big/large.bin",
        "many/x0",
    ];
    for (i, n) in names.iter().enumerate() {
        let len = match *n {
            "empty-file" => 0,
            "big/large.bin" => (3 << 20) + 12345,
            _ => 100 + i * 997,
        };
        files.insert(n.to_string(), pseudo_random(i as u64 + 1, len));
    }
    for i in 1..300 {
        files.insert(
            format!("many/x{i}"),
            pseudo_random(1000 + i, (i * 37) as usize % 5000),
        );
    }
    let list: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_slice()))
        .collect();
    write_tree(root, &list);
    fs::create_dir_all(root.join("empty/dir")).unwrap();
    fs::set_permissions(root.join("top.txt"), fs::Permissions::from_mode(0o600)).unwrap();
    files
}

/// A temporary directory with `src/` (the tree), `a.barecat` made from it by
/// barecat-create, and an empty mount point `mnt/`.
struct Setup {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    src: PathBuf,
    archive: PathBuf,
    mnt: PathBuf,
    files: BTreeMap<String, Vec<u8>>,
}

fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().to_path_buf();
    let src = root.join("src");
    let files = source_tree(&src);
    let archive = root.join("a.barecat");
    run_ok(
        bin("barecat-create"),
        [
            "-q".as_ref(),
            archive.as_os_str(),
            "-C".as_ref(),
            src.as_os_str(),
            ".".as_ref(),
        ],
    );
    let mnt = root.join("mnt");
    fs::create_dir(&mnt).unwrap();
    Setup {
        _tmp: tmp,
        root,
        src,
        archive,
        mnt,
        files,
    }
}

fn errno_of(r: std::io::Result<impl Sized>) -> i32 {
    match r {
        Ok(_) => 0,
        Err(e) => e.raw_os_error().unwrap_or(-1),
    }
}

#[test]
fn read_only_mount_shows_the_tree_with_its_metadata() {
    need!("fusermount3");
    if !fuse_available() {
        return;
    }
    let s = setup();
    let m = mount(&s.archive, &s.mnt, &[]);
    // The command returned once mounted: the tree is there on the next line.
    let out = run(
        "diff",
        ["-r".as_ref(), s.src.as_os_str(), s.mnt.as_os_str()],
    );
    assert!(
        out.status.success(),
        "diff -r: {}",
        String::from_utf8_lossy(&out.stdout)
    );

    // Every entry's metadata, as find sees it, against the index.
    let a = Archive::open(&s.archive).unwrap();
    let listing = run_ok(
        "find",
        [
            s.mnt.as_os_str(),
            "-mindepth".as_ref(),
            "1".as_ref(),
            "-printf".as_ref(),
            "%P\\t%y\\t%s\\t%m\\t%n\\t%U\\t%G\\t%T@\\n".as_ref(),
        ],
    );
    let mut seen = 0;
    for line in listing.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let (path, kind, size, mode, nlink, uid, gid, mtime) =
            (f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7]);
        let e = a.stat(path).unwrap();
        let meta = *e.meta();
        let ns = meta.mtime_ns.unwrap();
        let want_mtime = format!(
            "{}.{:09}0",
            ns.div_euclid(1_000_000_000),
            ns.rem_euclid(1_000_000_000)
        );
        assert_eq!(mtime, want_mtime, "{path}: mtime");
        assert_eq!(
            u32::from_str_radix(mode, 8).unwrap(),
            meta.mode.unwrap() & 0o7777,
            "{path}: mode"
        );
        assert_eq!(
            uid.parse::<u32>().unwrap(),
            meta.uid.unwrap(),
            "{path}: uid"
        );
        assert_eq!(
            gid.parse::<u32>().unwrap(),
            meta.gid.unwrap(),
            "{path}: gid"
        );
        match e {
            Entry::File(fi) => {
                assert_eq!(kind, "f", "{path}");
                assert_eq!(size.parse::<u64>().unwrap(), fi.size, "{path}: size");
                assert_eq!(nlink, "1", "{path}: links");
            }
            Entry::Dir(d) => {
                assert_eq!(kind, "d", "{path}");
                assert_eq!(
                    nlink.parse::<i64>().unwrap(),
                    d.num_subdirs + 2,
                    "{path}: links"
                );
            }
        }
        seen += 1;
    }
    let dirs = a.dirs("").unwrap().len() - 1; // without the root
    assert_eq!(seen, s.files.len() + dirs);

    // Random reads at random offsets, against the source bytes.
    let names: Vec<&String> = s.files.keys().collect();
    let mut x = 0x9e3779b97f4a7c15u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for _ in 0..400 {
        let name = names[(next() % names.len() as u64) as usize];
        let want = &s.files[name];
        let f = fs::File::open(m.path(name)).unwrap();
        let off = next() % (want.len() as u64 + 10);
        let len = (next() % (300 << 10)) as usize;
        let mut buf = vec![0u8; len];
        let mut got = 0;
        while got < len {
            let n = f.read_at(&mut buf[got..], off + got as u64).unwrap();
            if n == 0 {
                break;
            }
            got += n;
        }
        let start = (off as usize).min(want.len());
        let end = (start + len).min(want.len());
        assert_eq!(&buf[..got], &want[start..end], "{name} at {off}+{len}");
    }

    // Inode numbers: what readdir says is what stat says, all distinct.
    let mut inos = BTreeSet::new();
    for e in fs::read_dir(m.path("many")).unwrap() {
        let e = e.unwrap();
        assert_eq!(e.ino(), fs::metadata(e.path()).unwrap().ino());
        assert!(inos.insert(e.ino()));
    }
    assert_eq!(inos.len(), 300);
    assert_eq!(fs::metadata(&s.mnt).unwrap().ino(), 1);

    // statfs: the archive's totals.
    let st = run_ok(
        "stat",
        [
            "-f".as_ref(),
            "-c".as_ref(),
            "%b %S %c".as_ref(),
            s.mnt.as_os_str(),
        ],
    );
    let v: Vec<u64> = st.split_whitespace().map(|x| x.parse().unwrap()).collect();
    let total: u64 = s.files.values().map(|d| d.len() as u64).sum();
    assert!(v[0] * v[1] >= total && v[0] * v[1] < total + v[1] * (s.files.len() as u64 + 1));
    assert_eq!(v[2], s.files.len() as u64);

    // errno: ENOENT, ENOTDIR, EISDIR, EROFS.
    assert_eq!(errno_of(fs::metadata(m.path("nope"))), libc::ENOENT);
    assert_eq!(errno_of(fs::metadata(m.path("top.txt/x"))), libc::ENOTDIR);
    assert_eq!(errno_of(fs::read_dir(m.path("top.txt"))), libc::ENOTDIR);
    assert_eq!(errno_of(fs::read(m.path("a"))), libc::EISDIR);
    assert_eq!(
        errno_of(fs::OpenOptions::new().write(true).open(m.path("top.txt"))),
        libc::EROFS
    );
    assert_eq!(errno_of(fs::write(m.path("new"), b"x")), libc::EROFS);
    assert_eq!(errno_of(fs::create_dir(m.path("newdir"))), libc::EROFS);
    assert_eq!(errno_of(fs::remove_file(m.path("top.txt"))), libc::EROFS);
    assert_eq!(
        errno_of(fs::rename(m.path("top.txt"), m.path("t2"))),
        libc::EROFS
    );

    m.unmount();
    assert!(fs::read_dir(&s.mnt).unwrap().next().is_none());
}

#[test]
fn a_directory_of_100k_entries_lists_completely() {
    need!("fusermount3");
    if !fuse_available() {
        return;
    }
    const N: usize = 100_000;
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("big.barecat");
    let mut w = ArchiveWriter::open(&archive, WriterOptions::with_mode(CreateMode::New)).unwrap();
    for i in 0..N {
        w.add_file(
            &format!("flat/f{i:06}.txt"),
            Meta::default(),
            format!("{i}").as_bytes(),
            None,
        )
        .unwrap();
    }
    for i in 0..50 {
        w.add_dir(&format!("flat/sub{i:02}"), Meta::default())
            .unwrap();
    }
    w.finish().unwrap();
    let mnt = tmp.path().join("mnt");
    let m = mount(&archive, &mnt, &[]);
    let mut names = BTreeSet::new();
    for e in fs::read_dir(m.path("flat")).unwrap() {
        let e = e.unwrap();
        assert!(
            names.insert(e.file_name().into_string().unwrap()),
            "listed twice"
        );
    }
    assert_eq!(names.len(), N + 50);
    assert!(names.contains("f000000.txt") && names.contains(&format!("f{:06}.txt", N - 1)));
    assert!(names.contains("sub49"));
    // find walks it through the kernel: every entry once, plus the two dirs.
    let out = run_ok("sh", ["-c", &format!("find '{}' | wc -l", mnt.display())]);
    assert_eq!(out.trim().parse::<usize>().unwrap(), N + 50 + 2);
    assert_eq!(
        fs::read_to_string(m.path("flat/f099999.txt")).unwrap(),
        "99999"
    );
    assert_eq!(fs::metadata(m.path("flat")).unwrap().nlink(), 52);
    m.unmount();
}

#[test]
fn a_corrupt_file_fails_with_eio_and_a_log_line() {
    need!("fusermount3");
    if !fuse_available() {
        return;
    }
    let s = setup();
    let a = Archive::open(&s.archive).unwrap();
    let mut bad = Vec::new();
    for name in ["a/b/sibling.dat", "big/large.bin"] {
        let fi = a.file_info(name).unwrap();
        let shard = a.layout().shard_path(fi.shard);
        let f = fs::OpenOptions::new().write(true).open(&shard).unwrap();
        let at = fi.offset + fi.size - 7;
        let mut b = [0u8];
        fs::File::open(&shard)
            .unwrap()
            .read_exact_at(&mut b, at)
            .unwrap();
        f.write_all_at(&[b[0] ^ 0x20], at).unwrap();
        bad.push(name);
    }
    drop(a);
    let log = s.root.join("mount.log");
    let m = mount(&s.archive, &s.mnt, &["--log", log.to_str().unwrap()]);
    // Every file is checked whole at its first read, before any of its bytes is
    // served: a partial read of a damaged file fails too, wherever the damage is.
    for name in &bad {
        let mut f = fs::File::open(m.path(name)).unwrap();
        assert_eq!(errno_of(f.read_exact(&mut [0u8; 16])), libc::EIO, "{name}");
    }
    for name in &bad {
        assert_eq!(errno_of(fs::read(m.path(name))), libc::EIO, "{name}");
        assert_eq!(errno_of(fs::read(m.path(name))), libc::EIO, "{name}");
    }
    // Other files are fine.
    assert_eq!(fs::read(m.path("top.txt")).unwrap(), s.files["top.txt"]);
    m.unmount();
    let text = fs::read_to_string(&log).unwrap();
    for name in &bad {
        assert!(
            text.lines()
                .any(|l| l.contains(name) && l.contains("CRC32C mismatch")),
            "no log line for {name}: {text}"
        );
    }
}

#[test]
fn concurrent_readers_in_threads_and_processes_get_the_right_bytes() {
    need!("fusermount3");
    if !fuse_available() {
        return;
    }
    let s = setup();
    let m = mount(&s.archive, &s.mnt, &[]);
    let procs: Vec<_> = (0..3)
        .map(|_| {
            Command::new("diff")
                .arg("-r")
                .arg(&s.src)
                .arg(&s.mnt)
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    std::thread::scope(|sc| {
        for t in 0..6u64 {
            let files = &s.files;
            let m = &m;
            sc.spawn(move || {
                let names: Vec<&String> = files.keys().collect();
                for k in 0..150u64 {
                    let name = names[((k * 7919 + t * 104729) % names.len() as u64) as usize];
                    assert_eq!(&fs::read(m.path(name)).unwrap(), &files[name], "{name}");
                }
            });
        }
    });
    for mut p in procs {
        assert!(p.wait_bounded().unwrap().success(), "diff -r in a process");
    }
    m.unmount();
}

#[test]
fn sigterm_and_sigint_unmount_cleanly() {
    need!("fusermount3");
    if !fuse_available() {
        return;
    }
    let s = setup();
    for sig in ["-TERM", "-INT"] {
        let log = s.root.join("fg.log");
        let mut m = mount_foreground(&s.archive, &s.mnt, &[], &log);
        assert_eq!(fs::read(m.path("top.txt")).unwrap(), s.files["top.txt"]);
        let pid = m.child.as_ref().unwrap().id();
        run_ok("kill", [sig, &pid.to_string()]);
        let deadline = Instant::now() + Duration::from_secs(30);
        let status = loop {
            if let Some(st) = m.child.as_mut().unwrap().try_wait().unwrap() {
                break st;
            }
            assert!(
                Instant::now() < deadline,
                "daemon still running after {sig}"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(
            status.success(),
            "{sig}: {status}: {}",
            fs::read_to_string(&log).unwrap()
        );
        assert!(!is_mounted(&s.mnt), "still mounted after {sig}");
    }
}

#[test]
fn mount_errors_are_one_line_with_the_right_status() {
    need!("fusermount3");
    if !fuse_available() {
        return;
    }
    let s = setup();
    let mnt = s.mnt.to_str().unwrap();
    let missing = s.root.join("missing.barecat");
    for (args, code) in [
        (vec![missing.to_str().unwrap(), mnt], 1),
        (
            vec![
                s.archive.to_str().unwrap(),
                s.root.join("nodir").to_str().unwrap(),
            ],
            1,
        ),
        (
            vec![
                s.archive.to_str().unwrap(),
                s.src.join("top.txt").to_str().unwrap(),
            ],
            1,
        ),
        (vec!["-u", mnt], 1),
        (vec![s.archive.to_str().unwrap()], 2),
        (vec!["--umask", "99", s.archive.to_str().unwrap(), mnt], 2),
        // Options of a writable mount without --writable, a bad size.
        (vec!["--overwrite", s.archive.to_str().unwrap(), mnt], 2),
        (
            vec!["-o", "append_only", s.archive.to_str().unwrap(), mnt],
            2,
        ),
        (
            vec![
                "-o",
                "rw,shard_size_limit=lots",
                s.archive.to_str().unwrap(),
                mnt,
            ],
            2,
        ),
        (vec!["-w", "-o", "ro", s.archive.to_str().unwrap(), mnt], 2),
    ] {
        let out = run(bin("barecat-mount"), &args);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {out:?}");
        if code == 1 {
            crate::support::assert_clean_error(&out);
        }
        assert!(!is_mounted(&s.mnt));
    }
    // Overrides: owner, group and umask.
    let m = mount(
        &s.archive,
        &s.mnt,
        &["--uid", "1234", "--gid", "4321", "--umask", "027"],
    );
    let md = fs::metadata(m.path("a/b/sibling.dat")).unwrap();
    assert_eq!((md.uid(), md.gid()), (1234, 4321));
    assert_eq!(md.mode() & 0o7777, 0o640);
    // A busy mount: -u says so in one line, -u -z detaches it at once.
    let busy = fs::File::open(m.path("top.txt")).unwrap();
    let out = run(bin("barecat-mount"), ["-u", mnt]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    crate::support::assert_clean_error(&out);
    assert!(is_mounted(&s.mnt));
    run_ok(bin("barecat-mount"), ["-u", "-z", mnt]);
    assert!(!is_mounted(&s.mnt));
    let mut rest = Vec::new();
    (&busy).read_to_end(&mut rest).unwrap();
    assert_eq!(
        rest, s.files["top.txt"],
        "an open file reads on after a lazy unmount"
    );
    drop(busy);
    drop(m);
}

#[test]
fn writable_mount_keeps_the_archive_valid() {
    need!("fusermount3", "barecat");
    if !fuse_available() {
        return;
    }
    let s = setup();
    let m = mount(&s.archive, &s.mnt, &["--writable"]);
    let mut want = s.files.clone();
    // New files and directories, copied by cp.
    let extra = s.root.join("extra");
    let extra_files: Vec<(String, Vec<u8>)> = (0..40)
        .map(|i| {
            (
                format!("d{}/n{i}.bin", i % 4),
                pseudo_random(5000 + i, (i * 3001) as usize),
            )
        })
        .collect();
    let list: Vec<(&str, &[u8])> = extra_files
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_slice()))
        .collect();
    write_tree(&extra, &list);
    run_ok(
        "cp",
        [
            "-r".as_ref(),
            extra.as_os_str(),
            m.path("copied").as_os_str(),
        ],
    );
    for (k, v) in &extra_files {
        want.insert(format!("copied/{k}"), v.clone());
    }
    fs::create_dir_all(m.path("made/deeper")).unwrap();
    // Rewriting keeps the inode number and replaces the content.
    let ino = fs::metadata(m.path("top.txt")).unwrap().ino();
    fs::write(m.path("top.txt"), b"rewritten").unwrap();
    assert_eq!(fs::metadata(m.path("top.txt")).unwrap().ino(), ino);
    want.insert("top.txt".into(), b"rewritten".to_vec());
    // Appending.
    let mut f = fs::OpenOptions::new()
        .append(true)
        .open(m.path("a/b/sibling.dat"))
        .unwrap();
    f.write_all(b"+tail").unwrap();
    drop(f);
    want.get_mut("a/b/sibling.dat")
        .unwrap()
        .extend_from_slice(b"+tail");
    // Truncating a file being written, and writing past a seek.
    let mut f = fs::File::create(m.path("made/t.bin")).unwrap();
    f.write_all(&[b'x'; 1000]).unwrap();
    f.set_len(10).unwrap();
    f.seek(SeekFrom::Start(20)).unwrap();
    f.write_all(b"end").unwrap();
    drop(f);
    let mut t = vec![b'x'; 10];
    t.extend_from_slice(&[0; 10]);
    t.extend_from_slice(b"end");
    want.insert("made/t.bin".into(), t);
    // A large file (it goes through a temporary file while open).
    let large = pseudo_random(77, 9 << 20);
    fs::write(m.path("made/large.bin"), &large).unwrap();
    want.insert("made/large.bin".into(), large);
    // rename, chmod, utimes, unlink, rmdir.
    fs::rename(m.path("copied/d1"), m.path("made/deeper/moved")).unwrap();
    let moved: Vec<String> = want
        .keys()
        .filter(|k| k.starts_with("copied/d1/"))
        .cloned()
        .collect();
    for k in moved {
        let v = want.remove(&k).unwrap();
        want.insert(k.replace("copied/d1/", "made/deeper/moved/"), v);
    }
    fs::rename(m.path("empty-file"), m.path("made/renamed-empty")).unwrap();
    let empty = want.remove("empty-file").unwrap();
    want.insert("made/renamed-empty".into(), empty);
    fs::set_permissions(m.path("made/t.bin"), fs::Permissions::from_mode(0o640)).unwrap();
    run_ok(
        "touch",
        [
            "-d".as_ref(),
            "2001-02-03 04:05:06.789".as_ref(),
            m.path("made/t.bin").as_os_str(),
        ],
    );
    fs::remove_file(m.path("many/x7")).unwrap();
    want.remove("many/x7");
    fs::create_dir(m.path("gone")).unwrap();
    fs::remove_dir(m.path("gone")).unwrap();
    assert_eq!(errno_of(fs::remove_dir(m.path("a"))), libc::ENOTEMPTY);
    assert_eq!(errno_of(fs::create_dir(m.path("a"))), libc::EEXIST);
    assert_eq!(errno_of(fs::write(m.path("top.txt/x"), b"")), libc::ENOTDIR);
    // Two files written at once, 256 KiB at a time: one is appended to the
    // archive as it is written, the other gathered until closed; a write back into
    // the streamed one (after the other was saved) sends it back to a spool.
    let (d1, d2) = (pseudo_random(91, 3 << 20), pseudo_random(92, 3 << 20));
    let mut f1 = fs::File::create(m.path("made/il1")).unwrap();
    let mut f2 = fs::File::create(m.path("made/il2")).unwrap();
    for (c1, c2) in d1.chunks(256 << 10).zip(d2.chunks(256 << 10)) {
        f1.write_all(c1).unwrap();
        f2.write_all(c2).unwrap();
    }
    assert_eq!(fs::metadata(m.path("made/il1")).unwrap().len(), 3 << 20);
    drop(f2);
    f1.write_all_at(b"PATCH", 100).unwrap();
    drop(f1);
    let mut p1 = d1.clone();
    p1[100..105].copy_from_slice(b"PATCH");
    want.insert("made/il1".into(), p1);
    want.insert("made/il2".into(), d2);
    // What the mount shows is what was written.
    for (k, v) in &want {
        assert_eq!(&fs::read(m.path(k)).unwrap(), v, "{k} through the mount");
    }
    m.unmount();

    // The archive: every file as written, statistics right, Python agrees.
    let a = Archive::open(&s.archive).unwrap();
    let mut stored = BTreeMap::new();
    for fi in a.files(barecat::FileOrder::Path, "") {
        let fi = fi.unwrap();
        stored.insert(fi.path.clone(), a.read_file(&fi).unwrap());
    }
    assert_eq!(stored, want);
    let t = a.file_info("made/t.bin").unwrap();
    assert_eq!(t.meta.mode.unwrap() & 0o7777, 0o640);
    assert_eq!(t.meta.mtime_ns, Some(981_173_106_789_000_000));
    assert!(a.stat("gone").is_err() && a.stat("made/deeper").is_ok());
    drop(a);
    let out = run(bin("barecat-verify"), [s.archive.as_os_str()]);
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{report}");
    // Streams that had to make room for another file were cut off, not left behind.
    assert!(report.contains(" 0 trailing"), "{report}");
    crate::support::py_verify(&s.archive);
}

/// The kernel starts a FUSE mount with a 128 KiB read-ahead window; the daemon
/// widens its mount's to 1 MiB where it may (root), so that large reads reach it
/// in 1 MiB requests.
#[test]
fn a_mount_by_root_reads_ahead_one_mib() {
    need!("fusermount3");
    if !fuse_available() {
        return;
    }
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: only root may widen a mount's read-ahead");
        return;
    }
    let s = setup();
    let m = mount(&s.archive, &s.mnt, &[]);
    let dev = fs::metadata(&s.mnt).unwrap().dev();
    let knob = format!(
        "/sys/class/bdi/{}:{}/read_ahead_kb",
        libc::major(dev),
        libc::minor(dev)
    );
    let Ok(_) = fs::read_to_string(&knob) else {
        eprintln!("skipped: no {knob}");
        return;
    };
    // The daemon widens it from a thread of its own once it serves the mount.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut kb = String::new();
    while Instant::now() < deadline {
        kb = fs::read_to_string(&knob).unwrap().trim().to_string();
        if kb == "1024" {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(kb, "1024");
    assert_eq!(
        fs::read(m.path("big/large.bin")).unwrap(),
        s.files["big/large.bin"]
    );
    m.unmount();
}

/// Regression: a daemon ending after its mount was unmounted unmounted the mount
/// point once more, which could take away a mount made there right after.
#[test]
fn mounting_again_right_after_an_unmount_works() {
    need!("fusermount3");
    if !fuse_available() {
        return;
    }
    let s = setup();
    let mut m = mount(&s.archive, &s.mnt, &[]);
    // The guards of the earlier mounts stay alive until the end (dropping one
    // unmounts whatever is mounted there).
    let mut earlier = Vec::new();
    for round in 0..24 {
        // fusermount3 -u returns before the daemon has ended.
        crate::support::mount::fusermount_u(&s.mnt);
        let args: &[&str] = if round % 2 == 0 { &["--writable"] } else { &[] };
        earlier.push(std::mem::replace(&mut m, mount(&s.archive, &s.mnt, args)));
        let got = fs::read(m.path("top.txt"));
        assert!(got.is_ok_and(|d| d == s.files["top.txt"]), "round {round}");
    }
    std::thread::sleep(Duration::from_millis(500));
    assert!(is_mounted(&s.mnt), "the last mount was taken away");
    m.unmount();
    drop(earlier);
}

/// A writable mount waits a little for another writer to let go of the archive (a
/// writable mount's daemon still committing after `fusermount3 -u`), instead of
/// failing at once.
#[test]
fn a_writable_mount_waits_for_a_writer_that_is_ending() {
    need!("fusermount3");
    if !fuse_available() {
        return;
    }
    let s = setup();
    // Another writer: ArchiveWriter holds the index's exclusive lock while open.
    let w = ArchiveWriter::open(&s.archive, WriterOptions::with_mode(CreateMode::Append)).unwrap();
    fs::create_dir_all(&s.mnt).unwrap();
    let child = Command::new(bin("barecat-mount"))
        .args(["--writable"])
        .arg(&s.archive)
        .arg(&s.mnt)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    drop(w);
    let out = child.output_bounded().unwrap();
    let m = crate::support::mount::Mounted::guard(&s.mnt, None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    fs::write(s.mnt.join("new.txt"), b"written").unwrap();
    assert_eq!(fs::read(s.mnt.join("top.txt")).unwrap(), s.files["top.txt"]);
    m.unmount();
    assert_eq!(
        Archive::open(&s.archive).unwrap().read("new.txt").unwrap(),
        b"written"
    );
}

/// Python barecat's `barecat mount -o` options and `barecat-mount` 0.1.3's flags:
/// an append-only mount adds but refuses removals, renames and rewrites; an
/// overwriting one starts a new archive with the shard size limit given.
#[test]
fn python_barecat_mount_options_append_only_overwrite_and_shard_limit() {
    need!("fusermount3", "barecat");
    if !fuse_available() {
        return;
    }
    let s = setup();
    let m = mount(&s.archive, &s.mnt, &["-o", "rw,append_only", "--mmap"]);
    fs::create_dir(m.path("new")).unwrap();
    let added = pseudo_random(77, 200_000);
    fs::write(m.path("new/added.bin"), &added).unwrap();
    // The file it created can still be written while open (truncate included).
    let mut f = fs::File::create(m.path("new/grown.bin")).unwrap();
    f.write_all(b"0123456789").unwrap();
    f.set_len(4).unwrap();
    drop(f);
    fs::create_dir(m.path("empty-new")).unwrap();
    let eperm = libc::EPERM;
    assert_eq!(errno_of(fs::remove_file(m.path("top.txt"))), eperm);
    assert_eq!(errno_of(fs::remove_file(m.path("new/added.bin"))), eperm);
    assert_eq!(errno_of(fs::remove_dir(m.path("empty-new"))), eperm);
    assert_eq!(
        errno_of(fs::rename(m.path("top.txt"), m.path("moved.txt"))),
        eperm
    );
    let open = |o: &mut fs::OpenOptions| o.open(m.path("a/b/sibling.dat"));
    assert_eq!(errno_of(open(fs::OpenOptions::new().append(true))), eperm);
    assert_eq!(
        errno_of(open(fs::OpenOptions::new().write(true).truncate(true))),
        eperm
    );
    assert_eq!(
        errno_of(
            fs::OpenOptions::new()
                .write(true)
                .open(m.path("new/grown.bin"))
        ),
        eperm
    );
    m.unmount();
    let a = Archive::open(&s.archive).unwrap();
    assert_eq!(a.read("new/added.bin").unwrap(), added);
    assert_eq!(a.read("new/grown.bin").unwrap(), b"0123");
    for (name, data) in &s.files {
        assert_eq!(&a.read(name).unwrap(), data, "{name}");
    }
    drop(a);
    run_ok(bin("barecat-verify"), [&s.archive]);

    // The unified command, options after the operands as Python's takes them:
    // a new archive in place of the old one, shards of at most 64 KiB.
    let out = Command::new(bin("barecat"))
        .arg("mount")
        .arg(&s.archive)
        .arg(&s.mnt)
        .args(["-o", "rw,overwrite,shard_size_limit=64K"])
        .output_bounded()
        .unwrap();
    let m = crate::support::mount::Mounted::guard(&s.mnt, None);
    assert!(out.status.success(), "{out:?}");
    assert!(fs::read_dir(&s.mnt).unwrap().next().is_none(), "not empty");
    let fresh: Vec<Vec<u8>> = (0..3).map(|i| pseudo_random(90 + i, 40_000)).collect();
    for (i, data) in fresh.iter().enumerate() {
        fs::write(m.path(&format!("f{i}")), data).unwrap();
    }
    m.unmount();
    let a = Archive::open(&s.archive).unwrap();
    assert_eq!(a.count_files().unwrap(), 3);
    for (i, data) in fresh.iter().enumerate() {
        assert_eq!(&a.read(&format!("f{i}")).unwrap(), data);
    }
    assert_eq!(a.shard_size_limit().unwrap(), 64 << 10);
    assert!(a.layout().shard_path(1).exists(), "no second shard");
    drop(a);
    run_ok(bin("barecat-verify"), [&s.archive]);
    crate::support::py_verify(&s.archive);
}

/// `--enable-defrag`: once 100 MiB were removed and holes make up a tenth of the
/// shards, the mount defragments (quick) and goes on accepting writes.
#[test]
fn a_mount_with_defrag_enabled_gives_back_what_was_removed() {
    need!("fusermount3", "barecat");
    if !fuse_available() {
        return;
    }
    let s = setup();
    let log = s.root.join("mount.log");
    let m = mount(
        &s.archive,
        &s.mnt,
        &["-w", "--enable-defrag", "--log", log.to_str().unwrap()],
    );
    let big = pseudo_random(5, 60 << 20);
    fs::write(m.path("big1"), &big).unwrap();
    fs::write(m.path("big2"), &big).unwrap();
    let after = pseudo_random(6, 300_000);
    fs::write(m.path("after.bin"), &after).unwrap();
    // Open for reading across the defragmentation, which moves the file.
    let held = fs::File::open(m.path("after.bin")).unwrap();
    fs::remove_file(m.path("big1")).unwrap();
    fs::remove_file(m.path("big2")).unwrap();
    // It runs on the daemon's side once no file is open for writing.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !fs::read_to_string(&log)
        .unwrap_or_default()
        .contains("defragmented")
    {
        assert!(Instant::now() < deadline, "no defragmentation logged");
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut tail = vec![0u8; 1000];
    if let Err(e) = held.read_exact_at(&mut tail, 250_000) {
        panic!("{e}: {}", fs::read_to_string(&log).unwrap());
    }
    assert_eq!(tail, after[250_000..251_000]);
    drop(held);
    assert_eq!(fs::read(m.path("after.bin")).unwrap(), after);
    let later = pseudo_random(7, 100_000);
    fs::write(m.path("later.bin"), &later).unwrap();
    assert_eq!(fs::read(m.path("later.bin")).unwrap(), later);
    m.unmount();
    let a = Archive::open(&s.archive).unwrap();
    assert_eq!(a.read("after.bin").unwrap(), after);
    assert_eq!(a.read("later.bin").unwrap(), later);
    assert!(!a.exists("big1").unwrap());
    let physical: u64 = (a.layout().shard_files().unwrap().iter())
        .map(|s| fs::metadata(&s.path).unwrap().len())
        .sum();
    assert!(physical < 20 << 20, "{physical} bytes of shards left");
    drop(a);
    run_ok(bin("barecat-verify"), [&s.archive]);
    crate::support::py_verify(&s.archive);
}

/// `-o fg` (Python barecat's) keeps the daemon in the foreground, as `-f` does:
/// the command runs until the mount is unmounted, then exits 0.
#[test]
fn python_barecat_o_fg_stays_in_the_foreground() {
    need!("fusermount3");
    if !fuse_available() {
        return;
    }
    let s = setup();
    let child = Command::new(bin("barecat"))
        .arg("mount")
        .arg(&s.archive)
        .arg(&s.mnt)
        .args(["-o", "fg,mmap"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut m = crate::support::mount::Mounted::guard(&s.mnt, Some(child));
    let deadline = Instant::now() + Duration::from_secs(60);
    while !is_mounted(&s.mnt) {
        let exited = m.child.as_mut().unwrap().try_wait().unwrap();
        assert!(exited.is_none(), "barecat mount -o fg exited: {exited:?}");
        assert!(Instant::now() < deadline, "no mount after 60 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(fs::read(m.path("top.txt")).unwrap(), s.files["top.txt"]);
    // Still ours: the command has not returned.
    assert!(m.child.as_mut().unwrap().try_wait().unwrap().is_none());
    crate::support::mount::fusermount_u(&s.mnt);
    let status = m.child.take().unwrap().wait_bounded().unwrap();
    assert!(status.success(), "{status}");
}
