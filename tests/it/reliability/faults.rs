//! I/O faults: shard and index writes failing with ENOSPC (a small tmpfs in a
//! private mount namespace), EFBIG (`RLIMIT_FSIZE`) and EROFS (the tmpfs remounted
//! read-only), and a shard replaced by a directory. For create, from-tar, merge,
//! defrag and extract: one clear line naming the path, exit status 1, the archive
//! still valid (every row readable with its CRC, verify clean apart from bytes an
//! interrupted writer left), and the same command succeeding once the space is
//! there again (`--resume` for the ingest commands).

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::harness::*;
use barecat::Layout;

const LIMIT: &str = "256K";

fn s(p: &Path) -> OsString {
    p.as_os_str().to_owned()
}

/// A failed command: exit status 1 and one line on stderr that names a path
/// starting with `place` and says one of `reasons`.
fn assert_fails(e: &Ended, place: &Path, reasons: &[&str], ctx: &str) {
    assert!(e.finished);
    assert_eq!(e.status.code(), Some(1), "{ctx}: {}", e.stderr);
    let err = e.stderr.trim();
    eprintln!("{ctx}: {err}");
    assert_eq!(err.lines().count(), 1, "{ctx}: not one line: {err}");
    assert!(!err.contains("panicked"), "{ctx}: {err}");
    assert!(
        err.contains(&*place.to_string_lossy()),
        "{ctx}: the message does not name {}: {err}",
        place.display()
    );
    assert!(
        reasons.iter().any(|r| err.contains(r)),
        "{ctx}: the message does not say {reasons:?}: {err}"
    );
}

const ENOSPC: &[&str] = &["No space left on device", "disk is full"];
const EFBIG: &[&str] = &["File too large"];
const EROFS: &[&str] = &["Read-only file system", "readonly database"];

/// A test directory: a source tree, a mount point, a Python verifier.
struct Env {
    _dir: tempfile::TempDir,
    d: PathBuf,
    src: PathBuf,
    files: Files,
    tar: PathBuf,
    mnt: PathBuf,
    py: PyVerifier,
}

impl Env {
    fn new(n: usize) -> Env {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_path_buf();
        let src = d.join("src");
        let files = make_tree(&src, "tree", n, 150_000, 21);
        let tar = d.join("in.tar");
        fs::write(&tar, make_tar(&files)).unwrap();
        let mnt = d.join("mnt");
        fs::create_dir(&mnt).unwrap();
        Env {
            _dir: dir,
            d,
            src,
            files,
            tar,
            mnt,
            py: PyVerifier::start(),
        }
    }

    /// The archive as a kill or a fault left it: it opens, every row reads back with
    /// the source's content, verify finds no problem (shards after the last file are
    /// allowed), Python's verify passes. Returns its snapshot.
    fn check_valid(&mut self, archive: &Path, ctx: &str) -> Snapshot {
        let snap = read_all(archive, &self.files).unwrap_or_else(|e| panic!("{ctx}: {e}"));
        verify_clean(archive, &["extra_shard", "no_shard"])
            .unwrap_or_else(|e| panic!("{ctx}: {e}"));
        self.py
            .verify(archive)
            .unwrap_or_else(|e| panic!("{ctx}: {e}"));
        snap
    }

    /// The archive after the fix: the same as `want`, verify clean without warnings
    /// and with nothing reclaimable, Python's verify passes.
    fn check_complete(&mut self, archive: &Path, want: &Snapshot, ctx: &str) {
        let snap = read_all(archive, &self.files).unwrap_or_else(|e| panic!("{ctx}: {e}"));
        if let Some(d) = snap.diff(want) {
            panic!("{ctx}: differs from an uninterrupted run: {d}");
        }
        let v = verify_clean(archive, &[]).unwrap_or_else(|e| panic!("{ctx}: {e}"));
        assert_eq!(v["space"]["reclaimable_bytes"], 0, "{ctx}: {}", v["space"]);
        self.py
            .verify(archive)
            .unwrap_or_else(|e| panic!("{ctx}: {e}"));
    }

    /// Command lines of the ingest commands, writing to `out`.
    fn ingest_argv(&self, prog: &str, out: &Path, extra: &[&str]) -> Vec<OsString> {
        let mut a: Vec<OsString> = extra.iter().map(OsString::from).collect();
        a.extend(args!["-q", "-s", LIMIT, "--commit-interval-ms", "5"]);
        if prog == "barecat-create" {
            a.extend(args!["-C", &self.src, out, "tree"]);
        } else {
            a.extend(args![&self.tar, out]);
        }
        a
    }

    /// What an uninterrupted run of `prog` gives (on the test's file system).
    fn ingest_reference(&mut self, prog: &str) -> Snapshot {
        let r = self.d.join(format!("{prog}.reference"));
        let e = run_to_end(cmd(prog, self.ingest_argv(prog, &r, &[])), &Stdin::Null);
        assert!(e.status.success(), "{}", e.stderr);
        read_all(&r, &self.files).unwrap()
    }

    /// An archive of the whole tree with a third of its files deleted, and the
    /// files left in it.
    fn holey(&self, name: &str, limit: u64) -> (PathBuf, Files) {
        let p = self.d.join(name);
        let mut w = barecat::ArchiveWriter::open(
            &p,
            barecat::WriterOptions {
                shard_size_limit: Some(limit),
                ..barecat::WriterOptions::default()
            },
        )
        .unwrap();
        for (path, data) in &self.files {
            w.add_file(path, meta(), data, None).unwrap();
        }
        let mut kept = Files::new();
        for (i, (path, data)) in self.files.iter().enumerate() {
            if i % 3 == 1 {
                w.remove_file(path).unwrap();
            } else {
                kept.insert(path.clone(), data.clone());
            }
        }
        w.finish().unwrap();
        (p, kept)
    }
}

/// Copy an archive into the sandbox's file system.
fn copy_in(sb: &Sandbox, from: &Path, to: &Path) {
    fs::copy(from, sb.outside(to)).unwrap();
    for s in Layout::current(from).shard_files().unwrap() {
        fs::copy(
            &s.path,
            sb.outside(&Layout::current(to).shard_path(s.number)),
        )
        .unwrap();
    }
}

// ---------------------------------------------------------------------- ENOSPC

#[test]
fn create_and_from_tar_on_a_full_disk_fail_cleanly_and_resume() {
    need!("barecat");
    let mut env = Env::new(240);
    for prog in ["barecat-create", "barecat-from-tar"] {
        let want = env.ingest_reference(prog);
        let sb = Sandbox::tmpfs(&env.mnt, "1500k");
        let out = env.mnt.join("out.barecat");
        let e = sb.run(prog, env.ingest_argv(prog, &out, &[]));
        assert_fails(&e, &env.mnt, ENOSPC, prog);
        let copy = env.d.join("copy.barecat");
        sb.copy_out(&out, &copy);
        let partial = env.check_valid(&copy, prog);
        assert!(partial.files.len() < env.files.len());
        // More space, then --resume finishes the archive.
        sb.resize("64m");
        let e = sb.run(prog, env.ingest_argv(prog, &out, &["--resume"]));
        assert!(e.status.success(), "{prog} --resume: {}", e.stderr);
        sb.copy_out(&out, &copy);
        env.check_complete(&copy, &want, prog);
        eprintln!(
            "{prog}: {} of {} files were committed before the disk was full",
            partial.files.len(),
            env.files.len()
        );
    }
}

#[test]
fn create_with_no_room_for_the_index_leaves_nothing_behind() {
    need!("barecat");
    let mut env = Env::new(40);
    let want = env.ingest_reference("barecat-create");
    let sb = Sandbox::tmpfs(&env.mnt, "256k");
    sb.fill("filler");
    let out = env.mnt.join("out.barecat");
    let argv = env.ingest_argv("barecat-create", &out, &[]);
    let e = sb.run("barecat-create", &argv);
    assert_fails(&e, &env.mnt, ENOSPC, "create");
    assert_eq!(sb.names(&env.mnt), ["filler"], "left behind");
    // Once there is space, the same command (no --resume needed) succeeds.
    sb.remove("filler");
    sb.resize("64m");
    let e = sb.run("barecat-create", &argv);
    assert!(e.status.success(), "{}", e.stderr);
    let copy = env.d.join("copy.barecat");
    sb.copy_out(&out, &copy);
    env.check_complete(&copy, &want, "create");
}

/// Merge inputs on the test's file system (a barecat archive and a tar), the old
/// output (a third of the files) and the references of each mode.
struct MergeSetup {
    inputs: Vec<PathBuf>,
    old: PathBuf,
    reference_new: Snapshot,
    reference_append: Snapshot,
}

impl MergeSetup {
    /// What a finished merge in `mode` (`-a`, `-f` or none) holds.
    fn reference(&self, mode: &str) -> &Snapshot {
        if mode == "-a" {
            &self.reference_append
        } else {
            &self.reference_new
        }
    }
}

fn merge_setup(env: &Env) -> MergeSetup {
    let mut part0 = Files::new();
    let mut part1 = Files::new();
    let mut old_files = Files::new();
    for (i, (k, v)) in env.files.iter().enumerate() {
        if i % 2 == 0 { &mut part0 } else { &mut part1 }.insert(k.clone(), v.clone());
        if i % 3 == 0 {
            old_files.insert(k.clone(), v.clone());
        }
    }
    let a = env.d.join("in0.barecat");
    build(&a, Some(256 << 10), &part0);
    let t = env.d.join("in1.tar");
    fs::write(&t, make_tar(&part1)).unwrap();
    let old = env.d.join("old.barecat");
    build(&old, Some(256 << 10), &old_files);
    let inputs = vec![a, t];
    let mut refs = Vec::new();
    for append in [false, true] {
        let r = env.d.join(format!("merge-reference-{append}"));
        let mut argv = args!["-q", "-s", LIMIT, "-o", &r];
        if append {
            copy_archive(&old, &r);
            argv.push("-a".into());
        }
        argv.extend(inputs.iter().map(|p| s(p)));
        let e = run_to_end(cmd("barecat-merge", argv), &Stdin::Null);
        assert!(e.status.success(), "{}", e.stderr);
        refs.push(read_all(&r, &env.files).unwrap());
    }
    let reference_append = refs.pop().unwrap();
    let reference_new = refs.pop().unwrap();
    MergeSetup {
        inputs,
        old,
        reference_new,
        reference_append,
    }
}

fn merge_argv(m: &MergeSetup, out: &Path, mode: &str) -> Vec<OsString> {
    let mut argv = args!["-q", "-s", LIMIT, "-o", out];
    if !mode.is_empty() {
        argv.push(mode.into());
    }
    argv.extend(m.inputs.iter().map(|p| s(p)));
    argv
}

#[test]
fn merge_on_a_full_disk_leaves_the_old_output_or_none() {
    need!("barecat");
    let mut env = Env::new(240);
    let m = merge_setup(&env);
    let old_snap = read_all(&m.old, &env.files).unwrap();
    for mode in ["", "-f", "-a"] {
        let ctx = format!("merge {mode}");
        let sb = Sandbox::tmpfs(&env.mnt, "2m");
        let out = env.mnt.join("out.barecat");
        if !mode.is_empty() {
            copy_in(&sb, &m.old, &out);
        }
        let before = sb.names(&env.mnt);
        let e = sb.run("barecat-merge", merge_argv(&m, &out, mode));
        assert_fails(&e, &env.mnt, ENOSPC, &ctx);
        // Nothing half-written: no temporary, the old output as it was (even its
        // shard lengths, for -a).
        assert_eq!(sb.names(&env.mnt), before, "{ctx}: left behind");
        let copy = env.d.join("copy.barecat");
        if !mode.is_empty() {
            sb.copy_out(&out, &copy);
            let snap = env.check_valid(&copy, &ctx);
            assert!(
                snap.diff(&old_snap).is_none(),
                "{ctx}: the old output changed"
            );
            let v = verify_clean(&copy, &[]).unwrap();
            assert_eq!(v["space"]["reclaimable_bytes"], 0, "{ctx}: {}", v["space"]);
        }
        sb.resize("64m");
        let e = sb.run("barecat-merge", merge_argv(&m, &out, mode));
        assert!(e.status.success(), "{ctx}: {}", e.stderr);
        sb.copy_out(&out, &copy);
        let want = m.reference(mode);
        env.check_complete(&copy, want, &ctx);
    }
}

#[test]
fn defrag_on_a_full_disk_fails_cleanly_and_finishes_later() {
    need!("barecat");
    let mut env = Env::new(240);
    let (template, kept) = env.holey("holey.barecat", 512 << 10);
    let want = read_all(&template, &kept).unwrap();
    env.files = kept;
    for quick in [false, true] {
        let ctx = if quick { "defrag --quick" } else { "defrag" };
        let sb = Sandbox::tmpfs(&env.mnt, "16m");
        let out = env.mnt.join("out.barecat");
        copy_in(&sb, &template, &out);
        sb.fill("filler");
        let mut argv = args!["-q", "--small-steps", &out];
        if quick {
            argv.insert(0, "--quick".into());
        }
        let e = sb.run("barecat-defrag", &argv);
        assert_fails(&e, &env.mnt, ENOSPC, ctx);
        let copy = env.d.join("copy.barecat");
        sb.copy_out(&out, &copy);
        let snap = env.check_valid(&copy, ctx);
        assert!(snap.diff(&want).is_none(), "{ctx}: the files changed");
        sb.remove("filler");
        let e = sb.run("barecat-defrag", &argv);
        assert!(e.status.success(), "{ctx}: {}", e.stderr);
        sb.copy_out(&out, &copy);
        let snap = env.check_valid(&copy, ctx);
        assert!(snap.diff(&want).is_none(), "{ctx}: the files changed");
        if !quick {
            env.check_complete(&copy, &want, ctx);
        }
    }
}

/// Every file under `dir` is complete and equal to its source.
fn assert_extracted(dir: &Path, files: &Files, all: bool, ctx: &str) {
    let mut n = 0;
    for e in walkdir::WalkDir::new(dir) {
        let e = e.unwrap();
        if e.file_type().is_file() {
            let rel = e.path().strip_prefix(dir).unwrap().to_str().unwrap();
            let want = files
                .get(rel)
                .unwrap_or_else(|| panic!("{ctx}: {rel} not in the archive"));
            assert!(
                fs::read(e.path()).unwrap() == *want,
                "{ctx}: {rel} differs (partial?)"
            );
            n += 1;
        }
    }
    if all {
        assert_eq!(n, files.len(), "{ctx}: files missing");
    }
}

#[test]
fn extract_to_a_full_disk_stops_with_one_error_and_leaves_no_partial_file() {
    need!("barecat");
    let env = Env::new(240);
    let archive = env.d.join("a.barecat");
    build(&archive, Some(256 << 10), &env.files);
    let sb = Sandbox::tmpfs(&env.mnt, "1500k");
    let out = env.mnt.join("x");
    let argv = args!["-q", "-C", &out, &archive];
    let e = sb.run("barecat-extract", &argv);
    assert_fails(&e, &out, ENOSPC, "extract");
    assert_extracted(&sb.outside(&out), &env.files, false, "extract");
    sb.resize("64m");
    let mut again = argv.clone();
    again.insert(0, "--overwrite".into());
    let e = sb.run("barecat-extract", &again);
    assert!(e.status.success(), "{}", e.stderr);
    assert_extracted(&sb.outside(&out), &env.files, true, "extract");
}

// ---------------------------------------------------------------------- EFBIG

/// Run a binary with writes past `limit` bytes of any file failing with EFBIG.
fn run_limited<S: AsRef<std::ffi::OsStr>>(
    name: &str,
    args: impl IntoIterator<Item = S>,
    limit: u64,
) -> Ended {
    let mut c: Command = cmd(name, args);
    limit_file_size(&mut c, limit);
    run_to_end(c, &Stdin::Null)
}

#[test]
fn create_and_from_tar_hitting_the_file_size_limit_fail_cleanly_and_resume() {
    need!("barecat");
    let mut env = Env::new(240);
    for prog in ["barecat-create", "barecat-from-tar"] {
        let want = env.ingest_reference(prog);
        let out = env.d.join(format!("{prog}.out"));
        // Shards of up to 256 KiB, files written past 200 KB fail.
        let e = run_limited(prog, env.ingest_argv(prog, &out, &[]), 200_000);
        assert_fails(&e, &env.d, EFBIG, prog);
        let partial = env.check_valid(&out, prog);
        assert!(partial.files.len() < env.files.len());
        let e = run_to_end(
            cmd(prog, env.ingest_argv(prog, &out, &["--resume"])),
            &Stdin::Null,
        );
        assert!(e.status.success(), "{prog} --resume: {}", e.stderr);
        env.check_complete(&out, &want, prog);
    }
}

/// The index, not a shard, hits the limit: SQLite's write fails in the middle of a
/// commit. The batch is lost, the committed rows stay readable, --resume finishes.
#[test]
fn create_whose_index_hits_the_file_size_limit_fails_cleanly_and_resumes() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut files = Files::new();
    for i in 0..3000 {
        let rel = format!(
            "tree/d{:02}/a_long_file_name_to_grow_the_index_{i:05}",
            i % 50
        );
        let data = vec![b'x'; i % 50];
        let full = d.join("src").join(&rel);
        fs::create_dir_all(full.parent().unwrap()).unwrap();
        fs::write(&full, &data).unwrap();
        files.insert(rel, data);
    }
    let argv = |out: &Path, resume: bool| {
        let mut a = args![
            "-q",
            "-s",
            "16K",
            "--commit-interval-ms",
            "5",
            "-C",
            d.join("src"),
            out,
            "tree"
        ];
        if resume {
            a.insert(0, "--resume".into());
        }
        a
    };
    let reference = d.join("ref.barecat");
    let e = run_to_end(cmd("barecat-create", argv(&reference, false)), &Stdin::Null);
    assert!(e.status.success(), "{}", e.stderr);
    let want = read_all(&reference, &files).unwrap();
    let out = d.join("out.barecat");
    // Shards stay below 16 KiB; the index grows past 100 KB.
    let e = run_limited("barecat-create", argv(&out, false), 100_000);
    assert_fails(&e, &out, &["disk I/O error", "File too large"], "create");
    let partial = read_all(&out, &files).unwrap();
    // How many commits got through depends on the timing.
    assert!(partial.files.len() < files.len());
    verify_clean(&out, &["extra_shard"]).unwrap();
    let e = run_to_end(cmd("barecat-create", argv(&out, true)), &Stdin::Null);
    assert!(e.status.success(), "{}", e.stderr);
    let snap = read_all(&out, &files).unwrap();
    assert!(snap.diff(&want).is_none(), "{:?}", snap.diff(&want));
    verify_clean(&out, &[]).unwrap();
}

#[test]
fn merge_hitting_the_file_size_limit_leaves_the_old_output_or_none() {
    need!("barecat");
    let mut env = Env::new(240);
    let m = merge_setup(&env);
    let old_snap = read_all(&m.old, &env.files).unwrap();
    for mode in ["", "-f", "-a"] {
        let ctx = format!("merge {mode}");
        let out = env.d.join("out.barecat");
        Layout::remove(&out).unwrap();
        if !mode.is_empty() {
            copy_archive(&m.old, &out);
        }
        let before = names(&env.d);
        let e = run_limited("barecat-merge", merge_argv(&m, &out, mode), 200_000);
        assert_fails(&e, &env.d, EFBIG, &ctx);
        assert_eq!(names(&env.d), before, "{ctx}: left behind");
        if !mode.is_empty() {
            let snap = env.check_valid(&out, &ctx);
            assert!(
                snap.diff(&old_snap).is_none(),
                "{ctx}: the old output changed"
            );
        }
        let e = run_to_end(
            cmd("barecat-merge", merge_argv(&m, &out, mode)),
            &Stdin::Null,
        );
        assert!(e.status.success(), "{ctx}: {}", e.stderr);
        let want = m.reference(mode);
        env.check_complete(&out, want, &ctx);
    }
}

#[test]
fn defrag_hitting_the_file_size_limit_fails_cleanly_and_finishes_later() {
    need!("barecat");
    let mut env = Env::new(240);
    // 1 MiB shards with holes; writes past 300 KB fail, so the packing stops half-way.
    let (template, kept) = env.holey("holey.barecat", 1 << 20);
    let want = read_all(&template, &kept).unwrap();
    env.files = kept;
    for quick in [false, true] {
        let ctx = if quick { "defrag --quick" } else { "defrag" };
        let out = env.d.join("out.barecat");
        copy_archive(&template, &out);
        let mut argv = args!["-q", "--small-steps", &out];
        if quick {
            argv.insert(0, "--quick".into());
        }
        let e = run_limited("barecat-defrag", &argv, 300_000);
        assert_fails(&e, &env.d, EFBIG, ctx);
        let snap = env.check_valid(&out, ctx);
        assert!(snap.diff(&want).is_none(), "{ctx}: the files changed");
        let e = run_to_end(cmd("barecat-defrag", &argv), &Stdin::Null);
        assert!(e.status.success(), "{ctx}: {}", e.stderr);
        let snap = env.check_valid(&out, ctx);
        assert!(snap.diff(&want).is_none(), "{ctx}: the files changed");
        if !quick {
            env.check_complete(&out, &want, ctx);
        }
    }
}

#[test]
fn extract_hitting_the_file_size_limit_reports_each_file_and_keeps_no_partial_one() {
    need!("barecat");
    let env = Env::new(240);
    let archive = env.d.join("a.barecat");
    build(&archive, Some(256 << 10), &env.files);
    let out = env.d.join("x");
    let argv = args!["-q", "-j", "2", "-C", &out, &archive];
    let e = run_limited("barecat-extract", &argv, 100_000);
    assert_eq!(e.status.code(), Some(1), "{}", e.stderr);
    let large = env.files.values().filter(|v| v.len() > 100_000).count();
    assert!(large > 0);
    // One line per file that did not fit, each naming it; every other file is there.
    assert_eq!(e.stderr.trim().lines().count(), large, "{}", e.stderr);
    for line in e.stderr.trim().lines() {
        assert!(
            line.contains(&*out.to_string_lossy()) && line.contains("File too large"),
            "{line}"
        );
    }
    let small: Files = env
        .files
        .iter()
        .filter(|(_, v)| v.len() <= 100_000)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    assert_extracted(&out, &small, true, "extract");
    let mut again = argv.clone();
    again.insert(0, "--overwrite".into());
    let e = run_to_end(cmd("barecat-extract", &again), &Stdin::Null);
    assert!(e.status.success(), "{}", e.stderr);
    assert_extracted(&out, &env.files, true, "extract");
}

// ---------------------------------------------------------------------- EROFS

#[test]
fn writers_on_a_read_only_file_system_fail_cleanly_and_change_nothing() {
    need!("barecat");
    let mut env = Env::new(60);
    let archive = env.d.join("a.barecat");
    let (holey, kept) = env.holey("holey.barecat", 64 << 10);
    copy_archive(&holey, &archive);
    let want = read_all(&archive, &kept).unwrap();
    let sb = Sandbox::tmpfs(&env.mnt, "16m");
    let out = env.mnt.join("a.barecat");
    copy_in(&sb, &archive, &out);
    let other = env.d.join("other.barecat");
    build(
        &other,
        None,
        &[("more/x".to_string(), b"x".to_vec())]
            .into_iter()
            .collect(),
    );
    sb.set_read_only(true);
    let runs: Vec<(&str, Vec<OsString>)> = vec![
        (
            "barecat-create",
            args!["-q", "-a", "-C", &env.src, &out, "tree"],
        ),
        (
            "barecat-create",
            args!["-q", "--resume", "-C", &env.src, &out, "tree"],
        ),
        ("barecat-from-tar", args!["-q", "-a", &env.tar, &out]),
        ("barecat-merge", args!["-q", "-a", "-o", &out, &other]),
        ("barecat-merge", args!["-q", "-f", "-o", &out, &other]),
        ("barecat-defrag", args!["-q", &out]),
        ("barecat-defrag", args!["-q", "--quick", &out]),
        ("barecat-repair", args!["-q", &out]),
    ];
    for (prog, argv) in &runs {
        let e = sb.run(prog, argv);
        assert_fails(&e, &env.mnt, EROFS, &format!("{prog} {argv:?}"));
    }
    // Reading works on a read-only file system.
    let e = sb.run("barecat-verify", args!["-q", &out]);
    assert!(e.status.success(), "verify: {}", e.stderr);
    let x = env.d.join("x");
    let e = sb.run("barecat-extract", args!["-q", "-C", &x, &out]);
    assert!(e.status.success(), "extract: {}", e.stderr);
    assert_extracted(&x, &kept, true, "extract");
    sb.set_read_only(false);
    let copy = env.d.join("copy.barecat");
    sb.copy_out(&out, &copy);
    env.files = kept;
    let snap = env.check_valid(&copy, "read-only");
    assert!(snap.diff(&want).is_none(), "the archive changed");
}

// ---------------------------------------------------------------------- a shard that is a directory

#[test]
fn a_shard_replaced_by_a_directory_gives_clear_errors() {
    need!("barecat");
    let env = Env::new(60);
    let archive = env.d.join("a.barecat");
    build(&archive, Some(64 << 10), &env.files);
    let layout = Layout::current(&archive);
    let shards = layout.shard_files().unwrap();
    assert!(shards.len() >= 4);
    let want = read_all(&archive, &env.files).unwrap();
    // What merge -a adds.
    let mut all = env.files.clone();
    all.insert("more/x".into(), b"x".to_vec());
    for victim in [shards.len() - 1, 1] {
        let shard = layout.shard_path(victim as u64);
        let aside = env.d.join("aside");
        fs::rename(&shard, &aside).unwrap();
        fs::create_dir(&shard).unwrap();
        let other = env.d.join("other.barecat");
        let _ = Layout::remove(&other);
        build(
            &other,
            None,
            &[("more/x".to_string(), b"x".to_vec())]
                .into_iter()
                .collect(),
        );
        let x = env.d.join("x");
        let _ = fs::remove_dir_all(&x);
        let merged = env.d.join("merged.barecat");
        let runs: Vec<(&str, Vec<OsString>)> = vec![
            (
                "barecat-create",
                args!["-q", "--resume", "-C", &env.src, &archive, "tree/c0"],
            ),
            (
                "barecat-from-tar",
                args!["-q", "--resume", &env.tar, &archive],
            ),
            ("barecat-merge", args!["-q", "-a", "-o", &archive, &other]),
            ("barecat-merge", args!["-q", "-o", &merged, &archive]),
            ("barecat-defrag", args!["-q", &archive]),
            ("barecat-extract", args!["-q", "-C", &x, &archive]),
            ("barecat-verify", args!["-q", &archive]),
        ];
        for (prog, argv) in &runs {
            let e = run_to_end(cmd(prog, argv), &Stdin::Null);
            let ctx = format!("shard {victim} is a directory: {prog} {argv:?}");
            if *prog == "barecat-verify" {
                // It cannot check an archive whose shards it cannot list: exit 2.
                assert_eq!(e.status.code(), Some(2), "{ctx}: {}", e.stderr);
                let err = e.stderr.trim();
                assert_eq!(err.lines().count(), 1, "{ctx}: {err}");
                assert!(
                    err.contains(&*shard.to_string_lossy()) && err.contains("is a directory"),
                    "{ctx}: {err}"
                );
                continue;
            }
            // Every other command refuses the archive in one line naming the shard
            // (appending and extracting too: the shards are listed first).
            assert_fails(&e, &shard, &["Is a directory", "is a directory"], &ctx);
            assert!(!merged.exists(), "{ctx}: a merge output was left");
        }
        fs::remove_dir(&shard).unwrap();
        fs::rename(&aside, &shard).unwrap();
        // Nothing the failed commands did damaged the archive (merge -a added a file
        // when the damaged shard was not the last).
        let snap = read_all(&archive, &all).unwrap();
        for (k, v) in &want.files {
            assert_eq!(snap.files.get(k), Some(v), "{k}");
        }
        verify_clean(&archive, &[]).unwrap();
    }
}

// ---------------------------------------------------------------------- regressions

/// `merge -a` is all or nothing, also with tar inputs: a damaged tar after a
/// barecat input leaves the output exactly as it was (before, the files of the
/// earlier input were committed and the shards then cut back under them).
#[test]
fn merge_append_with_a_damaged_tar_changes_nothing() {
    need!("barecat");
    let mut env = Env::new(60);
    let m = merge_setup(&env);
    let out = env.d.join("out.barecat");
    copy_archive(&m.old, &out);
    let before = read_all(&out, &env.files).unwrap();
    let shard_bytes = |p: &Path| -> Vec<u64> {
        Layout::current(p)
            .shard_files()
            .unwrap()
            .iter()
            .map(|s| fs::metadata(&s.path).unwrap().len())
            .collect()
    };
    let lengths = shard_bytes(&out);
    let tar = fs::read(&m.inputs[1]).unwrap();
    let bad = env.d.join("bad.tar");
    fs::write(&bad, &tar[..tar.len() / 2 + 700]).unwrap();
    let e = run_to_end(
        cmd(
            "barecat-merge",
            args!["-q", "-a", "-o", &out, &m.inputs[0], &bad],
        ),
        &Stdin::Null,
    );
    assert_fails(&e, &bad, &["truncated"], "merge -a with a truncated tar");
    let after = env.check_valid(&out, "merge -a");
    assert!(after.diff(&before).is_none(), "{:?}", after.diff(&before));
    assert_eq!(shard_bytes(&out), lengths);
}

/// With `-a`, a tar member whose path an earlier input of the same merge added (not
/// committed yet) is left out as a duplicate, not reported as a problem.
#[test]
fn merge_append_skips_tar_members_an_earlier_input_added() {
    need!("barecat");
    let env = Env::new(30);
    let out = env.d.join("out.barecat");
    let first: Files = env
        .files
        .iter()
        .take(10)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    build(&out, None, &first);
    let input = env.d.join("in.barecat");
    build(&input, None, &env.files);
    let e = run_to_end(
        cmd("barecat-merge", args!["-a", "-o", &out, &input, &env.tar]),
        &Stdin::Null,
    );
    assert!(e.status.success(), "{}", e.stderr);
    let o = String::from_utf8_lossy(&e.stdout);
    assert!(
        o.contains(&format!("{} duplicate(s) left out", 10 + env.files.len())),
        "{o}"
    );
    let snap = read_all(&out, &env.files).unwrap();
    assert_eq!(snap.files.len(), env.files.len());
    // The barecat input's copies won (library metadata, not the tar's).
    assert!(snap.files.values().all(|(_, _, m)| *m == meta()));
}

/// A writer of a new archive at `p` that commits only when asked to.
fn writer_committing_when_told(p: &Path, shard_size_limit: Option<u64>) -> barecat::ArchiveWriter {
    barecat::ArchiveWriter::open(
        p,
        barecat::WriterOptions {
            shard_size_limit,
            commit_interval: std::time::Duration::MAX,
            commit_bytes: u64::MAX,
            ..barecat::WriterOptions::default()
        },
    )
    .unwrap()
}

#[test]
fn rollback_leaves_no_bytes_behind_while_a_direct_write_is_running() {
    // With direct I/O the appender writes each full 8 MiB buffer on a thread of its
    // own; a rollback right after must not let that write land after the cut.
    for round in 0..5 {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.barecat");
        let mut w = writer_committing_when_told(&p, None);
        w.add_file("kept", meta(), &[1u8; 5000], None).unwrap();
        w.commit().unwrap();
        for i in 0..5 {
            w.add_file(&format!("gone/{i}"), meta(), &vec![2u8; 4 << 20], None)
                .unwrap();
        }
        w.rollback().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(50));
        let shard = dir.path().join("a.barecat-shard-00000");
        assert_eq!(
            std::fs::metadata(&shard).unwrap().len(),
            5000,
            "round {round}: bytes of the rolled-back files are left in the shard"
        );
        w.add_file("after", meta(), b"again", None).unwrap();
        w.finish().unwrap();
        assert_eq!(std::fs::read(&shard).unwrap().len(), 5005);
    }
}

/// `ArchiveWriter::rollback` (the undo of a failed `merge -a`): the rows and bytes
/// of the open batch go, the committed ones stay, and the writer goes on.
#[test]
fn writer_rollback_undoes_the_open_batch_only() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.barecat");
    let mut w = writer_committing_when_told(&p, Some(1000));
    w.add_file("kept/a", meta(), &[1u8; 600], None).unwrap();
    w.commit().unwrap();
    // Rotates into two new shards and creates directories.
    for i in 0..3 {
        w.add_file(&format!("gone/d{i}/f"), meta(), &[2u8; 700], None)
            .unwrap();
    }
    // The bytes that reached the shards (the last file may still be buffered).
    assert!(w.rollback().unwrap() >= 2 * 700);
    w.add_file("gone/d0/g", meta(), b"again", None).unwrap();
    w.finish().unwrap();
    let files: Files = [
        ("kept/a".to_string(), vec![1u8; 600]),
        ("gone/d0/g".to_string(), b"again".to_vec()),
    ]
    .into_iter()
    .collect();
    let snap = read_all(&p, &files).unwrap();
    assert_eq!(snap.files.len(), 2);
    assert_eq!(
        snap.dirs.keys().collect::<Vec<_>>(),
        ["", "gone", "gone/d0", "kept"]
    );
    let v = verify_clean(&p, &[]).unwrap();
    assert_eq!(v["space"]["reclaimable_bytes"], 0, "{}", v["space"]);
}
