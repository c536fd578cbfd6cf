//! `barecat-create` run as a real binary on temporary trees.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::support::ingest::*;
use crate::support::*;
use barecat::{Archive, Layout};

fn create() -> PathBuf {
    bin("barecat-create")
}

/// A tree with the awkward cases: empty files and directories, unicode, spaces,
/// glob characters, a deep chain, larger files.
fn awkward_tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files: Vec<(String, Vec<u8>)> = vec![
        ("a/empty.txt".into(), vec![]),
        ("a/hello.txt".into(), b"hello\n".to_vec()),
        (
            "a/ünïcödé/ファイル.txt".into(),
            "日本語".as_bytes().to_vec(),
        ),
        (
            "a/emoji 🎉 dir/with space.bin".into(),
            pseudo_random(1, 3000),
        ),
        ("a/[glob]*?/back\\slash".into(), b"x".to_vec()),
        ("a/.hidden/.dotfile".into(), b"dot".to_vec()),
        ("b/big.bin".into(), pseudo_random(2, 300_000)),
        ("nfd/cafe\u{301}.txt".into(), b"nfd".to_vec()),
        ("nfd/caf\u{e9}.txt".into(), b"nfc".to_vec()),
    ];
    let deep: String = (0..60).map(|i| format!("d{i}/")).collect();
    files.push((format!("deep/{deep}leaf.txt"), b"deep".to_vec()));
    for (p, d) in &files {
        let full = root.join(p);
        fs::create_dir_all(full.parent().unwrap()).unwrap();
        fs::write(full, d).unwrap();
    }
    fs::create_dir_all(root.join("empty/nested/dirs")).unwrap();
    files.into_iter().collect()
}

#[test]
fn awkward_trees_round_trip_and_python_verifies() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    let want = prefixed("src", &awkward_tree(&src));
    let arch = dir.path().join("a.barecat");
    let o = run(
        create(),
        [
            "-C".as_ref(),
            dir.path().as_os_str(),
            arch.as_os_str(),
            "src".as_ref(),
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_same(&contents(&arch), &want, "awkward tree");
    let dirs = dir_paths(&arch);
    for d in [
        "src",
        "src/empty",
        "src/empty/nested",
        "src/empty/nested/dirs",
        "src/a/.hidden",
    ] {
        assert!(dirs.contains(d), "{d} missing from {dirs:?}");
    }
    // Metadata comes from the file system, directories included.
    let a = Archive::open(&arch).unwrap();
    let fi = a.file_info("src/a/hello.txt").unwrap();
    let md = fs::metadata(src.join("a/hello.txt")).unwrap();
    use std::os::unix::fs::MetadataExt;
    assert_eq!(fi.meta.mode, Some(md.mode()));
    assert_eq!(fi.meta.mtime_ns, Some(mtime_ns(&src.join("a/hello.txt"))));
    let Some(barecat::Entry::Dir(d)) = a.lookup("src/empty/nested").unwrap() else {
        panic!("no dir")
    };
    assert_eq!(d.meta.mtime_ns, Some(mtime_ns(&src.join("empty/nested"))));
    assert_eq!(d.meta.mode.map(|m| m & 0o170000), Some(0o040000));
    drop(a);
    check(&arch);
    // The summary line names files, bytes, shards.
    let err = stderr(&o);
    assert!(err.contains("10 files") && err.contains("1 shard"), "{err}");
}

#[test]
fn path_lists_from_stdin_newline_and_nul() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_tree(
        root,
        &[
            ("d/x.txt", b"x"),
            ("d/sub/y.txt", b"y"),
            ("d/name with\nnewline", b"nl"),
            ("other.txt", b"o"),
        ],
    );
    // Newline list as `find` prints it: directories are stored, not walked; paths
    // are relative to the working directory.
    let list = "d\n./d/x.txt\n\nother.txt\n";
    let arch = root.join("nl.barecat");
    let out = std::process::Command::new(create())
        .arg(&arch)
        .current_dir(root)
        .output_with_stdin(
            fs::File::open({
                let p = root.join("list.txt");
                fs::write(&p, list).unwrap();
                p
            })
            .unwrap(),
        )
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let c = contents(&arch);
    assert_eq!(c.keys().collect::<Vec<_>>(), ["d/x.txt", "other.txt"]);
    assert!(dir_paths(&arch).contains("d"));
    assert!(
        !dir_paths(&arch).contains("d/sub"),
        "listed directories are not walked"
    );
    check(&arch);

    // NUL-separated list (find -print0); the last entry has no trailing NUL.
    let arch = root.join("nul.barecat");
    let out = std::process::Command::new(create())
        .args(["-0".as_ref(), arch.as_os_str()])
        .current_dir(root)
        .output_with_stdin({
            let p = root.join("list0");
            fs::write(&p, b"d/name with\nnewline\0d/sub/y.txt\0other.txt").unwrap();
            fs::File::open(p).unwrap()
        })
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let c = contents(&arch);
    assert_eq!(
        c.keys().collect::<Vec<_>>(),
        ["d/name with\nnewline", "d/sub/y.txt", "other.txt"]
    );
    check(&arch);

    // -T FILE together with positional paths.
    let arch = root.join("t.barecat");
    fs::write(root.join("l.txt"), "other.txt\n").unwrap();
    let o = run(
        create(),
        [
            "-C".as_ref(),
            root.as_os_str(),
            "-T".as_ref(),
            root.join("l.txt").as_os_str(),
            arch.as_os_str(),
            "d/sub".as_ref(),
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(
        contents(&arch).keys().collect::<Vec<_>>(),
        ["d/sub/y.txt", "other.txt"]
    );
}

#[test]
fn legacy_form_reads_paths_from_stdin_and_stores_the_limit() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let files: Vec<(String, Vec<u8>)> = (0..20)
        .map(|i| (format!("f/{i:02}.bin"), pseudo_random(i, 700)))
        .collect();
    for (p, d) in &files {
        write_tree(root, &[(p, d)]);
    }
    let list: Vec<u8> = files
        .iter()
        .flat_map(|(p, _)| format!("{}/{p}\0", root.display()).into_bytes())
        .collect();
    let arch = root.join("legacy.barecat");
    let args = [
        "--file",
        arch.to_str().unwrap(),
        "--null",
        "--workers",
        "3",
        "--shard-size-limit",
        "4K",
    ];
    let o = run_stdin(&create(), args, &list);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(contents(&arch).len(), 20);
    let a = Archive::open(&arch).unwrap();
    assert_eq!(a.shard_size_limit().unwrap(), 4096, "the limit is stored");
    assert!(Layout::current(&arch).shard_files().unwrap().len() >= 4);
    drop(a);
    check(&arch);
    // Without --overwrite an existing target is refused, untouched.
    let before = shard_bytes(&arch);
    let o = run_stdin(&create(), args, &list);
    assert_eq!(code(&o), 1);
    assert_clean_error(&o);
    assert_eq!(shard_bytes(&arch), before);
    // With --overwrite, and without a shard limit (Python crashes there).
    let o = run_stdin(
        &create(),
        ["--file", arch.to_str().unwrap(), "--overwrite"],
        format!("{}/f/00.bin\n", root.display()).as_bytes(),
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(contents(&arch).len(), 1);
    check(&arch);
}

#[test]
fn include_and_exclude_patterns() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_tree(
        root,
        &[
            ("data/a.txt", b"1"),
            ("data/x/b.txt", b"2"),
            ("data/x/y/c.txt", b"3"),
            ("data/x/y/c.jpg", b"4"),
            ("data/x/tmp.tmp", b"5"),
            ("data/cache/d.txt", b"6"),
            ("data/keep/e.bin", b"7"),
            ("data/nothing/f.jpg", b"8"),
        ],
    );
    let arch = root.join("f.barecat");
    let o = run(
        create(),
        [
            "-C",
            root.to_str().unwrap(),
            "-i",
            "**/*.txt",
            "-i",
            "data/keep",
            "--exclude",
            "cache",
            "--exclude",
            "*.tmp",
            arch.to_str().unwrap(),
            "data",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(
        contents(&arch).keys().collect::<Vec<_>>(),
        [
            "data/a.txt",
            "data/keep/e.bin",
            "data/x/b.txt",
            "data/x/y/c.txt"
        ],
        "includes must not prune directories that hold matching files"
    );
    let dirs = dir_paths(&arch);
    assert!(!dirs.contains("data/nothing"), "{dirs:?}");
    assert!(!dirs.contains("data/cache"), "{dirs:?}");
    // Directories stored because they hold included files keep their metadata.
    let a = Archive::open(&arch).unwrap();
    let Some(barecat::Entry::Dir(d)) = a.lookup("data/x/y").unwrap() else {
        panic!()
    };
    assert_eq!(d.meta.mtime_ns, Some(mtime_ns(&root.join("data/x/y"))));
    drop(a);
    check(&arch);
}

#[test]
fn shards_rotate_at_the_limit_and_big_files_get_their_own() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for i in 0..30u64 {
        write_tree(root, &[(&format!("s/{i:02}"), &pseudo_random(i, 30_000))]);
    }
    write_tree(root, &[("s/zz_big", &pseudo_random(99, 250_000))]);
    let arch = root.join("r.barecat");
    let o = run(
        create(),
        [
            "-s",
            "100K",
            "-C",
            root.to_str().unwrap(),
            arch.to_str().unwrap(),
            "s",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let shards = Layout::current(&arch).shard_files().unwrap();
    assert!(shards.len() >= 10, "{} shards", shards.len());
    for s in &shards {
        let len = fs::metadata(&s.path).unwrap().len();
        assert!(
            len <= 100 * 1024 || len == 250_000,
            "{}: {len}",
            s.path.display()
        );
    }
    assert_same(
        &contents(&arch),
        &prefixed("s", &tree_files(&root.join("s"))),
        "contents",
    );
    check(&arch);
}

#[test]
fn output_is_identical_whatever_the_number_of_threads() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // Sizes from empty to several times the streaming threshold of a 256K budget.
    for i in 0..300u64 {
        let size = match i % 7 {
            0 => 0,
            1 => 200_000,
            2 => 70_000,
            _ => (i * 37 % 5000) as usize,
        };
        write_tree(
            root,
            &[(&format!("t/c{}/f{i:03}", i % 5), &pseudo_random(i, size))],
        );
    }
    fs::create_dir_all(root.join("t/empty")).unwrap();
    let mut outputs = Vec::new();
    // The last run has a budget of one byte: every item waits for the one before it
    // to be written, which exercises the batching of items and of budget releases
    // (a deadlock there would hang this test).
    for (j, budget) in [("1", "256K"), ("4", "256K"), ("3", "256K"), ("8", "1")] {
        let arch = root.join(format!("j{j}.barecat"));
        let o = run(
            create(),
            [
                "-j",
                j,
                "--buffer-size",
                budget,
                "-s",
                "1M",
                "-C",
                root.to_str().unwrap(),
                arch.to_str().unwrap(),
                "t",
            ],
        );
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        outputs.push((shard_bytes(&arch), rows(&arch)));
        if j == "4" {
            check(&arch);
            assert_same(
                &contents(&arch),
                &prefixed("t", &tree_files(&root.join("t"))),
                "contents",
            );
        }
    }
    assert!(outputs[0].0.len() > 1);
    for o in &outputs[1..] {
        assert!(o.0 == outputs[0].0, "shards differ between -j values");
        assert_eq!(o.1, outputs[0].1, "rows differ between -j values");
    }
}

#[test]
fn existing_archives_are_refused_unless_forced_or_appended() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_tree(root, &[("one/a", b"a"), ("two/b", b"b")]);
    let arch = root.join("e.barecat");
    let c = |args: &[&str]| {
        let mut all = vec!["-C", root.to_str().unwrap()];
        all.extend_from_slice(args);
        run(create(), all)
    };
    assert_eq!(code(&c(&[arch.to_str().unwrap(), "one"])), 0);
    let index_before = fs::read(&arch).unwrap();
    let shards_before = shard_bytes(&arch);
    let o = c(&[arch.to_str().unwrap(), "two"]);
    assert_eq!(code(&o), 1);
    assert_clean_error(&o);
    assert!(stderr(&o).contains("already exists"), "{}", stderr(&o));
    assert_eq!(fs::read(&arch).unwrap(), index_before, "index changed");
    assert_eq!(shard_bytes(&arch), shards_before);
    // -a adds; a path already there is a reported duplicate.
    let o = c(&["-a", arch.to_str().unwrap(), "two", "one/a"]);
    assert_eq!(code(&o), 1);
    assert!(
        stderr(&o).contains("one/a: already in the archive"),
        "{}",
        stderr(&o)
    );
    assert_eq!(contents(&arch).len(), 2);
    check(&arch);
    // -f replaces.
    let o = c(&["-f", arch.to_str().unwrap(), "two"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(contents(&arch).keys().collect::<Vec<_>>(), ["two/b"]);
    check(&arch);
    // Conflicting modes are a usage error.
    let o = c(&["-f", "-a", arch.to_str().unwrap(), "two"]);
    assert_eq!(code(&o), 2);
}

#[test]
fn bad_entries_are_reported_skipped_and_make_exit_status_1() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_tree(root, &[("in/ok.txt", b"fine"), ("in/z.txt", b"last")]);
    symlink("nowhere", root.join("in/dangling")).unwrap();
    symlink("ok.txt", root.join("in/link-to-file")).unwrap();
    fs::create_dir(root.join("in/realdir")).unwrap();
    symlink("realdir", root.join("in/link-to-dir")).unwrap();
    let bad = std::ffi::OsStr::from_bytes(b"in/bad-\xff-name");
    fs::write(root.join(bad), b"bad").unwrap();
    let fifo = root.join("in/fifo");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status_bounded()
        .unwrap();
    assert!(status.success());
    let arch = root.join("b.barecat");
    let list = "in\nin/ok.txt\nin/vanished.txt\n../escape\n/proc/self/status\n";
    let out = std::process::Command::new(create())
        .args(["-T", "-"])
        .arg(&arch)
        .arg("in")
        .current_dir(root)
        .output_with_stdin({
            fs::write(root.join("list"), list).unwrap();
            fs::File::open(root.join("list")).unwrap()
        })
        .unwrap();
    let err = stderr(&out);
    assert_eq!(code(&out), 1, "{err}");
    for needle in [
        "in/dangling: dangling symbolic link",
        "bad-\\xff-name: file name is not valid UTF-8",
        "in/ok.txt: already in the archive (duplicate path)",
        "in/vanished.txt: vanished before it could be read",
        "../escape: '..' would point outside the archive root",
        "/proc/self/status: changed size while being read",
        "removing leading '/'",
        "1 special file",
    ] {
        assert!(err.contains(needle), "missing {needle:?} in:\n{err}");
    }
    assert!(!err.contains("panicked"), "{err}");
    let c = contents(&arch);
    assert_eq!(
        c.keys().collect::<Vec<_>>(),
        ["in/link-to-file", "in/ok.txt", "in/z.txt"]
    );
    assert_eq!(
        c["in/link-to-file"], b"fine",
        "a link to a file stores the content"
    );
    let dirs = dir_paths(&arch);
    assert!(
        dirs.contains("in/link-to-dir") && dirs.contains("in/realdir"),
        "{dirs:?}"
    );
    check(&arch);

    // --strict stops at the first problem, after committing what came before it.
    let arch = root.join("strict.barecat");
    let o = run(
        create(),
        [
            "--strict",
            "-C",
            root.to_str().unwrap(),
            arch.to_str().unwrap(),
            "in",
        ],
    );
    assert_eq!(code(&o), 1);
    assert_clean_error(&o);
    assert!(stderr(&o).contains("not valid UTF-8"), "{}", stderr(&o));
    let c = contents(&arch);
    assert!(!c.contains_key("in/z.txt"), "stopped at the first problem");
    check(&arch);
}

#[test]
fn unreadable_files_are_reported() {
    // Permissions do not stop root; the test only means something for other users.
    if unsafe { libc::geteuid() } == 0 {
        eprintln!("running as root: permission checks do not apply");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_tree(root, &[("u/secret", b"s"), ("u/open", b"o")]);
    fs::set_permissions(root.join("u/secret"), fs::Permissions::from_mode(0o000)).unwrap();
    let arch = root.join("u.barecat");
    let o = run(
        create(),
        ["-C", root.to_str().unwrap(), arch.to_str().unwrap(), "u"],
    );
    assert_eq!(code(&o), 1);
    assert!(
        stderr(&o).contains("u/secret: cannot open"),
        "{}",
        stderr(&o)
    );
    assert_eq!(contents(&arch).len(), 1);
}

#[test]
fn strip_components_and_archive_inside_the_tree() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_tree(root, &[("top/mid/a.txt", b"a"), ("top/b.txt", b"b")]);
    // The archive is written inside the walked tree: it is not added to itself.
    let arch = root.join("top/self.barecat");
    let o = run(
        create(),
        [
            "--strip-components",
            "1",
            "-C",
            root.to_str().unwrap(),
            arch.to_str().unwrap(),
            "top",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("is the archive being written"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        contents(&arch).keys().collect::<Vec<_>>(),
        ["b.txt", "mid/a.txt"]
    );
    check(&arch);
}

#[test]
fn large_files_are_streamed_and_the_multicall_binary_works() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let big = pseudo_random(5, 3 << 20);
    write_tree(root, &[("big/one", &big), ("big/small", b"s")]);
    let arch = root.join("big.barecat");
    let o = run(
        bin("barecat"),
        [
            "create",
            "--buffer-size",
            "1M",
            "-q",
            "-C",
            root.to_str().unwrap(),
            arch.to_str().unwrap(),
            "big",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stderr(&o).is_empty(), "-q prints nothing: {}", stderr(&o));
    assert_eq!(contents(&arch)["big/one"], big);
    check(&arch);
}

#[test]
fn usage_errors_exit_2() {
    let o = run(create(), ["--no-such-option"]);
    assert_eq!(code(&o), 2);
    let o = run(
        create(),
        ["-C", "/nonexistent-dir-for-test", "x.barecat", "a"],
    );
    assert_eq!(code(&o), 2);
}

/// Kill a create that reads its list from a pipe, after some batches are
/// committed, then `--resume` it: the result equals an uninterrupted run.
#[test]
fn killed_create_is_finished_by_resume() {
    need!("barecat");
    use std::io::Write;
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let n = 3000u64;
    let mut list = Vec::new();
    for i in 0..n {
        let p = format!("k/d{:02}/f{i:04}", i % 37);
        write_tree(root, &[(&p, &pseudo_random(i, (i * 7919 % 6000) as usize))]);
        list.extend_from_slice(p.as_bytes());
        list.push(b'\n');
    }
    let half = list.len() / 2;
    let half = half + list[half..].iter().position(|&b| b == b'\n').unwrap() + 1;

    let reference = root.join("ref.barecat");
    let o = run(
        create(),
        [
            "-C",
            root.to_str().unwrap(),
            reference.to_str().unwrap(),
            "k",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));

    let arch = root.join("killed.barecat");
    let mut child = Command::new(create())
        .args([
            "--commit-interval-ms",
            "5",
            "-s",
            "2M",
            "-C",
            root.to_str().unwrap(),
        ])
        .arg(&arch)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&list[..half]).unwrap();
    stdin.flush().unwrap();
    // Wait until some rows are committed, then kill without closing stdin.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        std::thread::sleep(Duration::from_millis(20));
        let committed = rusqlite::Connection::open_with_flags(
            &arch,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .and_then(|c| c.query_row("SELECT count(*) FROM files", [], |r| r.get::<_, i64>(0)))
        .unwrap_or(0);
        if committed > 0 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "nothing was committed"
        );
    }
    std::thread::sleep(Duration::from_millis(100));
    child.kill().unwrap();
    child.wait_bounded().unwrap();
    drop(stdin);
    let partial = contents(&arch);
    assert!(
        !partial.is_empty() && (partial.len() as u64) < n,
        "{}",
        partial.len()
    );

    // A plain create onto it is refused; --resume finishes it.
    let o = run_stdin(
        &create(),
        ["-C", root.to_str().unwrap(), arch.to_str().unwrap()],
        &list,
    );
    assert_eq!(code(&o), 1);
    let o = run_stdin(
        &create(),
        [
            "--resume",
            "-s",
            "2M",
            "-C",
            root.to_str().unwrap(),
            arch.to_str().unwrap(),
        ],
        &list,
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("already in the archive"),
        "{}",
        stderr(&o)
    );
    assert_same(&contents(&arch), &contents(&reference), "contents");
    check(&arch);
    // Resuming a finished archive adds nothing.
    let before = shard_bytes(&arch);
    let o = run_stdin(
        &create(),
        [
            "--resume",
            "-C",
            root.to_str().unwrap(),
            arch.to_str().unwrap(),
        ],
        &list,
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(shard_bytes(&arch), before);
}
