//! Crash consistency: create, from-tar (file and stdin), merge (barecat and tar
//! inputs), defrag (full, quick and smart) and the daemon of a writable mount are killed
//! with SIGKILL at random instants.
//! After every kill the archive opens and reads back correctly, verify finds
//! nothing the documented fix does not repair, and after the fix the archive holds
//! exactly what an uninterrupted run gives. See `tests/it/support/harness.rs`.
//!
//! `BARECAT_CRASH_TRIALS=200` runs 200 instants per command instead of 20;
//! `BARECAT_CRASH_SEED=N` replays the instants of a failure.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use crate::support::harness::*;
use crate::support::{ChildExt, CommandExt};
use barecat::{Archive, FileOrder, Layout};

/// Shard size limit of every archive here: many rotations on small trees.
const LIMIT: &str = "256K";
const LIMIT_BYTES: u64 = 256 << 10;
/// Files above 64 KiB are streamed in chunks by the ingest commands.
const BUFFER: &str = "256K";

fn s(p: &Path) -> OsString {
    p.as_os_str().to_owned()
}

// ---------------------------------------------------------------------- ingest

/// The command line of a run writing to the given archive.
type Argv = Box<dyn Fn(&Path) -> Vec<OsString>>;

/// create, from-tar: killed, then finished with `--resume` (or rerun with `-f`).
struct Ingest {
    name: &'static str,
    dir: PathBuf,
    /// The content each path has at the end.
    files: Files,
    /// Earlier content a path may hold after a kill (a name a tar holds twice).
    earlier: BTreeMap<String, Vec<Vec<u8>>>,
    out: PathBuf,
    /// Arguments before the fix's option is added; ARCHIVE is `{out}`.
    argv: Argv,
    /// The documented fix: `--resume`, or `-f` (run again from the start).
    fix: &'static str,
    prog: &'static str,
    stdin: Stdin,
    reference: Option<(Snapshot, Vec<Vec<u8>>)>,
}

impl Ingest {
    fn command_for(&self, out: &Path, fix: bool) -> (Command, Stdin) {
        let mut argv = (self.argv)(out);
        if fix {
            argv.insert(0, self.fix.into());
        }
        (cmd(self.prog, argv), self.stdin.clone())
    }

    /// Every file reads back (CRC-checked) with its final content or an earlier one.
    fn read_back(&self) -> Result<usize, String> {
        if self.earlier.is_empty() {
            return read_all(&self.out, &self.files).map(|s| s.files.len());
        }
        let a = Archive::open(&self.out).map_err(|e| format!("does not open: {e}"))?;
        let mut n = 0;
        for fi in a.files(FileOrder::Address, "") {
            let fi = fi.map_err(|e| e.to_string())?;
            let data = a
                .read_file(&fi)
                .map_err(|e| format!("{}: cannot be read back: {e}", fi.path))?;
            let last = self.files.get(&fi.path);
            let earlier = self.earlier.get(&fi.path);
            ensure!(
                last == Some(&data) || earlier.is_some_and(|e| e.contains(&data)),
                "{}: holds none of its copies",
                fi.path
            );
            n += 1;
        }
        Ok(n)
    }

    fn shards(path: &Path) -> Vec<Vec<u8>> {
        Layout::current(path)
            .shard_files()
            .unwrap()
            .iter()
            .map(|s| fs::read(&s.path).unwrap())
            .collect()
    }

    fn reference(&mut self) -> &(Snapshot, Vec<Vec<u8>>) {
        if self.reference.is_none() {
            let r = self.dir.join("reference.barecat");
            Layout::remove(&r).unwrap();
            let (c, stdin) = self.command_for(&r, false);
            let e = run_to_end(c, &stdin);
            assert!(e.status.success(), "{}: {}", self.name, e.stderr);
            let snap = read_all(&r, &self.files).unwrap();
            assert_eq!(snap.files.len(), self.files.len());
            self.reference = Some((snap, Self::shards(&r)));
        }
        self.reference.as_ref().unwrap()
    }
}

impl Scenario for Ingest {
    fn name(&self) -> String {
        self.name.into()
    }

    fn output(&self) -> PathBuf {
        self.out.clone()
    }

    fn prepare(&mut self, _k: usize) {
        self.reference();
        Layout::remove(&self.out).unwrap();
    }

    fn command(&self, _k: usize) -> (Command, Stdin) {
        self.command_for(&self.out, false)
    }

    fn after_kill(
        &mut self,
        _k: usize,
        ended: &Ended,
        py: &mut PyVerifier,
    ) -> Result<String, String> {
        match state(&self.out) {
            State::NoArchive => {
                ensure!(!ended.finished, "finished without an archive");
                return Ok("before the index existed".into());
            }
            State::NoSchema => return Ok("while the index was created".into()),
            State::Archive => {}
        }
        let n = self.read_back()?;
        verify_clean(&self.out, &["extra_shard", "no_shard"])?;
        if Layout::current(&self.out).shard_path(0).exists() {
            py.verify(&self.out)?;
        }
        let (tail, extra) = uncommitted_bytes(&self.out);
        Ok(if n == 0 && tail == 0 {
            "setup, walking (no file written)".into()
        } else if n == self.files.len() {
            "after the last commit".into()
        } else if extra > 0 {
            "streaming into a new shard (rotation)".into()
        } else if tail > 0 {
            "streaming (bytes after the last commit)".into()
        } else {
            "between batches (no uncommitted bytes)".into()
        })
    }

    fn fix_and_compare(&mut self, _k: usize, py: &mut PyVerifier) -> Check {
        let (c, stdin) = self.command_for(&self.out, true);
        let e = run_to_end(c, &stdin);
        ensure!(
            e.status.success(),
            "{} failed: {}",
            self.fix,
            e.stderr.trim()
        );
        let snap = read_all(&self.out, &self.files)?;
        let (want, want_shards) = self.reference().clone();
        if let Some(d) = snap.diff(&want) {
            return Err(format!("differs from an uninterrupted run: {d}"));
        }
        ensure!(
            Self::shards(&self.out) == want_shards,
            "the shards are not byte-identical to those of an uninterrupted run"
        );
        let v = verify_clean(&self.out, &[])?;
        // Replaced copies are holes in an uninterrupted run too.
        ensure!(
            v["space"]["reclaimable_bytes"] == 0 || !self.earlier.is_empty(),
            "reclaimable bytes left: {}",
            v["space"]
        );
        py.verify(&self.out)?;
        Ok(())
    }
}

/// The options every ingest run here gets, then `rest`.
fn ingest_args(rest: Vec<OsString>) -> Vec<OsString> {
    let mut a = args![
        "-q",
        "-s",
        LIMIT,
        "--buffer-size",
        BUFFER,
        "--commit-interval-ms",
        "5"
    ];
    a.extend(rest);
    a
}

fn ingest_tree(dir: &Path) -> Files {
    make_tree(&dir.join("src"), "tree", 420, 300_000, 5)
}

#[test]
fn create_killed_at_random_instants_is_finished_by_resume() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    let files = ingest_tree(&d);
    let src = d.join("src");
    let mut sc = Ingest {
        name: "barecat-create",
        dir: d.clone(),
        files,
        out: d.join("out.barecat"),
        argv: Box::new(move |out| ingest_args(args!["-j", "2", "-C", &src, out, "tree"])),
        earlier: BTreeMap::new(),
        fix: "--resume",
        prog: "barecat-create",
        stdin: Stdin::Null,
        reference: None,
    };
    kill_trials(&mut sc, config());
}

fn from_tar(stdin: bool) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    let files = ingest_tree(&d);
    let tar = make_tar(&files);
    let tar_path = d.join("in.tar");
    fs::write(&tar_path, &tar).unwrap();
    let mut sc = Ingest {
        name: if stdin {
            "barecat-from-tar (stdin)"
        } else {
            "barecat-from-tar"
        },
        dir: d.clone(),
        files,
        out: d.join("out.barecat"),
        argv: Box::new(move |out| {
            let input = if stdin {
                OsString::from("-")
            } else {
                s(&tar_path)
            };
            ingest_args(args![input, out])
        }),
        earlier: BTreeMap::new(),
        fix: "--resume",
        prog: "barecat-from-tar",
        stdin: if stdin {
            Stdin::Bytes(Arc::new(tar))
        } else {
            Stdin::Null
        },
        reference: None,
    };
    kill_trials(&mut sc, config());
}

#[test]
fn from_tar_killed_at_random_instants_is_finished_by_resume() {
    need!("barecat");
    from_tar(false);
}

#[test]
fn from_tar_stdin_killed_at_random_instants_is_finished_by_resume() {
    need!("barecat");
    from_tar(true);
}

/// from-tar of a tar that holds names twice (appended with `tar -r`), with
/// `--duplicates last`: each later copy replaces the earlier one's row inside the
/// writer's open batch. After every kill each file holds one of the copies of its
/// name; rerunning with `-f` gives exactly an uninterrupted run (`--resume` keeps
/// the copies the interrupted run stored).
#[test]
fn from_tar_replacing_duplicates_killed_at_random_instants_reads_back() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    let first = ingest_tree(&d);
    // Every third file again, with other content: a tar appended to.
    let again: Files = first
        .iter()
        .step_by(3)
        .map(|(k, v)| {
            let mut v = v.clone();
            v.extend_from_slice(b" (updated)");
            (k.clone(), v)
        })
        .collect();
    let mut tar = make_tar(&first);
    tar.truncate(tar.len() - 1024);
    tar.extend(make_tar(&again));
    let tar_path = d.join("dup.tar");
    fs::write(&tar_path, &tar).unwrap();
    let earlier = again
        .keys()
        .map(|k| (k.clone(), vec![first[k].clone()]))
        .collect();
    let mut files = first;
    files.extend(again);
    let mut sc = Ingest {
        name: "barecat-from-tar --duplicates last",
        dir: d.clone(),
        files,
        earlier,
        out: d.join("out.barecat"),
        argv: Box::new(move |out| ingest_args(args!["--duplicates", "last", &tar_path, out])),
        fix: "-f",
        prog: "barecat-from-tar",
        stdin: Stdin::Null,
        reference: None,
    };
    kill_trials(&mut sc, config());
}

// ---------------------------------------------------------------------- merge

/// How a merge treats its output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Out {
    /// No output before the run.
    New,
    /// `-f` over an older output.
    Force,
    /// `-a` onto an older output.
    Append,
}

const OUTS: [Out; 3] = [Out::New, Out::Force, Out::Append];

/// merge: killed, the output is absent or the old one (a new or `-f` merge builds
/// under a temporary name and installs at the end; `-a` appends in one
/// transaction). Rerunning it (`-f`, or `-a` again) gives the output of an
/// uninterrupted run and leaves no temporary file behind.
struct Merge {
    name: &'static str,
    dir: PathBuf,
    inputs: Vec<PathBuf>,
    /// Union of the inputs' files (the old output's files are among them).
    files: Files,
    out: PathBuf,
    /// An older archive that `-f` replaces and `-a` adds to.
    old: PathBuf,
    old_snap: Snapshot,
    /// Uninterrupted merges into a new output and onto the old one (`-a`).
    reference: Snapshot,
    reference_append: Snapshot,
    /// The names the directory holds before a run (besides the output).
    baseline: BTreeSet<String>,
}

impl Merge {
    fn new(
        name: &'static str,
        dir: PathBuf,
        inputs: Vec<PathBuf>,
        files: Files,
        old_files: &Files,
    ) -> Merge {
        let old = dir.join("old.barecat");
        build(&old, Some(LIMIT_BYTES), old_files);
        let old_snap = read_all(&old, &files).unwrap();
        let mut sc = Merge {
            name,
            out: dir.join("out.barecat"),
            dir,
            inputs,
            files,
            old,
            old_snap,
            reference: Snapshot {
                files: Default::default(),
                dirs: Default::default(),
            },
            reference_append: Snapshot {
                files: Default::default(),
                dirs: Default::default(),
            },
            baseline: BTreeSet::new(),
        };
        for mode in [Out::New, Out::Append] {
            sc.prepare_mode(mode);
            let e = run_to_end(cmd("barecat-merge", sc.argv(mode)), &Stdin::Null);
            assert!(e.status.success(), "{}", e.stderr);
            let snap = read_all(&sc.out, &sc.files).unwrap();
            match mode {
                Out::New => sc.reference = snap,
                _ => sc.reference_append = snap,
            }
        }
        assert_eq!(sc.reference.files.len(), sc.files.len());
        assert_eq!(sc.reference_append.files.len(), sc.files.len());
        Layout::remove(&sc.out).unwrap();
        sc.baseline = names(&sc.dir).into_iter().collect();
        sc
    }

    fn mode(k: usize) -> Out {
        OUTS[k % OUTS.len()]
    }

    fn prepare_mode(&self, mode: Out) {
        Layout::remove(&self.out).unwrap();
        if mode != Out::New {
            copy_archive(&self.old, &self.out);
        }
    }

    fn argv(&self, mode: Out) -> Vec<OsString> {
        let mut a = args!["-q", "-s", LIMIT, "-o", &self.out];
        match mode {
            Out::New => {}
            Out::Force => a.push("-f".into()),
            Out::Append => a.push("-a".into()),
        }
        a.extend(self.inputs.iter().map(|p| s(p)));
        a
    }

    /// Names in the directory that are not the inputs, the templates or the output.
    fn strays(&self) -> Vec<String> {
        let outs: BTreeSet<String> = std::iter::once(self.out.clone())
            .chain(
                Layout::current(&self.out)
                    .shard_files()
                    .unwrap()
                    .into_iter()
                    .map(|s| s.path),
            )
            .chain(Layout::current(&self.out).companion_files())
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        names(&self.dir)
            .into_iter()
            .filter(|n| !self.baseline.contains(n) && !outs.contains(n))
            .collect()
    }

    /// Check the output after a kill or a crash; name the phase.
    fn check_killed(
        &self,
        mode: Out,
        finished: bool,
        py: &mut PyVerifier,
    ) -> Result<String, String> {
        let temps = !self.strays().is_empty();
        match state(&self.out) {
            State::NoArchive => {
                ensure!(!finished, "finished without an output");
                // Putting the output in place renames the shards first and the
                // index last: in between, the output path holds shard files and no
                // index while the temporary index is still there (a rerun with -f
                // repairs this; see the test of crashes after every install step).
                if !Layout::current(&self.out).shard_files().unwrap().is_empty() {
                    ensure!(
                        temps && mode != Out::Append,
                        "shard files without an index at the output path"
                    );
                    return Ok("installing the output (shards renamed, the index not yet)".into());
                }
                if mode == Out::Force && temps {
                    return Ok("installing the output (the old one removed)".into());
                }
                ensure!(mode == Out::New, "the old output disappeared");
                return Ok(if temps {
                    "building the output under a temporary name".into()
                } else {
                    "before the temporary output existed".into()
                });
            }
            State::NoSchema => return Err("an output without the barecat tables".into()),
            State::Archive => {}
        }
        let snap = read_all(&self.out, &self.files)?;
        let v = verify_clean(&self.out, &["extra_shard"])?;
        py.verify(&self.out)?;
        let want = if mode == Out::Append {
            &self.reference_append
        } else {
            &self.reference
        };
        if snap == *want {
            ensure!(
                v["warnings"].as_array().unwrap().is_empty(),
                "{}",
                v["warnings"]
            );
            Ok("after the output was complete".into())
        } else if mode != Out::New && snap == self.old_snap {
            Ok(if mode == Out::Append {
                "appending (the old output unchanged)".into()
            } else if temps {
                "building the output (the old one still in place)".into()
            } else {
                "before the temporary output existed (the old one in place)".into()
            })
        } else {
            Err(format!(
                "the output is neither the old nor the new one: {}",
                snap.diff(want).unwrap_or_default()
            ))
        }
    }

    /// Rerun (`-f`, or `-a` again) and compare with an uninterrupted run.
    fn rerun_and_compare(&self, mode: Out, py: &mut PyVerifier) -> Check {
        let again = if mode == Out::Append {
            Out::Append
        } else {
            Out::Force
        };
        let e = run_to_end(cmd("barecat-merge", self.argv(again)), &Stdin::Null);
        ensure!(
            e.status.success(),
            "merge {again:?} failed: {}",
            e.stderr.trim()
        );
        let snap = read_all(&self.out, &self.files)?;
        let want = if mode == Out::Append {
            &self.reference_append
        } else {
            &self.reference
        };
        if let Some(d) = snap.diff(want) {
            return Err(format!("differs from an uninterrupted merge: {d}"));
        }
        let v = verify_clean(&self.out, &[])?;
        ensure!(
            v["space"]["reclaimable_bytes"] == 0,
            "reclaimable bytes left: {}",
            v["space"]
        );
        py.verify(&self.out)?;
        let strays = self.strays();
        ensure!(strays.is_empty(), "left behind after the rerun: {strays:?}");
        Ok(())
    }
}

impl Scenario for Merge {
    fn name(&self) -> String {
        self.name.into()
    }

    fn output(&self) -> PathBuf {
        self.out.clone()
    }

    fn variants(&self) -> usize {
        OUTS.len()
    }

    fn prepare(&mut self, k: usize) {
        self.prepare_mode(Self::mode(k));
    }

    fn command(&self, k: usize) -> (Command, Stdin) {
        (cmd("barecat-merge", self.argv(Self::mode(k))), Stdin::Null)
    }

    fn after_kill(
        &mut self,
        k: usize,
        ended: &Ended,
        py: &mut PyVerifier,
    ) -> Result<String, String> {
        let phase = self.check_killed(Self::mode(k), ended.finished, py)?;
        Ok(format!("{:?}: {phase}", Self::mode(k)))
    }

    fn fix_and_compare(&mut self, k: usize, py: &mut PyVerifier) -> Check {
        self.rerun_and_compare(Self::mode(k), py)
    }
}

/// A merge ended abruptly after each step of putting its output in place
/// (removing the old output, renaming each shard, renaming the index): what is
/// left is the old output, no output, or the new one, and a rerun with -f gives
/// the right output and leaves nothing behind.
#[test]
fn merge_crashing_while_installing_its_output_is_repaired_by_a_rerun() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    let sc = merge_of_barecat_inputs(d, 120, 2, 9);
    let mut py = PyVerifier::start();
    for mode in [Out::New, Out::Force] {
        let mut crashes = 0;
        for n in 1.. {
            sc.prepare_mode(mode);
            let mut argv = sc.argv(mode);
            argv.extend(args!["--crash-after-steps", n.to_string()]);
            let e = run_to_end(cmd("barecat-merge", argv), &Stdin::Null);
            let code = e.status.code();
            let ctx = format!("{mode:?}, crash after step {n}");
            if code == Some(0) {
                break;
            }
            assert_eq!(code, Some(86), "{ctx}: {}", e.stderr);
            crashes += 1;
            // Between removing the old output and renaming the new index, the output
            // path holds no index; shard files may be there.
            let no_index = state(&sc.out) == State::NoArchive;
            if !no_index {
                sc.check_killed(mode, false, &mut py)
                    .unwrap_or_else(|e| panic!("{ctx}: {e}"));
            }
            let o = run_to_end(cmd("barecat-verify", args![&sc.out]), &Stdin::Null);
            if no_index {
                assert_eq!(o.status.code(), Some(2), "{ctx}: {}", o.stderr);
                assert!(o.stderr.lines().count() == 1, "{ctx}: {}", o.stderr);
            }
            sc.rerun_and_compare(mode, &mut py)
                .unwrap_or_else(|e| panic!("{ctx}: after the rerun: {e}"));
            assert!(crashes < 100);
        }
        eprintln!("{mode:?}: {crashes} crash points checked");
        assert!(crashes >= 3, "{mode:?}: only {crashes} steps");
    }
}

/// Split the tree's files into `n` parts (round robin).
fn parts(files: &Files, n: usize) -> Vec<Files> {
    let mut out = vec![Files::new(); n];
    for (i, (k, v)) in files.iter().enumerate() {
        out[i % n].insert(k.clone(), v.clone());
    }
    out
}

/// An input archive with holes (a third of its files deleted after writing).
fn holey_input(path: &Path, files: &Files) -> Files {
    // One writer for both steps: a second open could find the lock still held by a
    // child that another test thread is spawning (between its fork and its exec).
    let mut w = barecat::ArchiveWriter::open(
        path,
        barecat::WriterOptions {
            shard_size_limit: Some(LIMIT_BYTES),
            ..barecat::WriterOptions::default()
        },
    )
    .unwrap();
    for (p, data) in files {
        w.add_file(p, meta(), data, None).unwrap();
    }
    let mut kept = Files::new();
    for (i, (p, data)) in files.iter().enumerate() {
        if i % 3 == 1 {
            w.remove_file(p).unwrap();
        } else {
            kept.insert(p.clone(), data.clone());
        }
    }
    w.finish().unwrap();
    kept
}

/// A merge of `inputs` barecat archives with holes, made from a tree of `files`
/// files (seed `seed`) in `d`; the old output holds half of their files.
fn merge_of_barecat_inputs(d: PathBuf, files: usize, inputs: usize, seed: u64) -> Merge {
    let tree = make_tree(&d.join("src"), "tree", files, 300_000, seed);
    fs::remove_dir_all(d.join("src")).unwrap();
    let mut all = Files::new();
    let mut paths = Vec::new();
    for (i, part) in parts(&tree, inputs).iter().enumerate() {
        let p = d.join(format!("in{i}.barecat"));
        all.extend(holey_input(&p, part));
        paths.push(p);
    }
    let old = parts(&all, 2).remove(0);
    Merge::new("barecat-merge", d, paths, all, &old)
}

#[test]
fn merge_killed_at_random_instants_leaves_old_or_no_output() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    let mut sc = merge_of_barecat_inputs(d, 480, 3, 6);
    kill_trials(&mut sc, config());
}

/// Inputs without holes, merged into a new output, over an old one (`-f`) or onto
/// an empty one (`-a`, one input only): the first input is taken over whole (its
/// shards copied, then its index copied beside the output and renamed over it).
#[test]
fn merge_taking_its_first_input_over_whole_killed_at_random_instants() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    let tree = make_tree(&d.join("src"), "tree", 480, 300_000, 11);
    fs::remove_dir_all(d.join("src")).unwrap();
    let mut paths = Vec::new();
    for (i, part) in parts(&tree, 2).iter().enumerate() {
        let p = d.join(format!("in{i}.barecat"));
        build(&p, Some(LIMIT_BYTES), part);
        paths.push(p);
    }
    // The path under test is taken.
    let probe = d.join("probe.barecat");
    let opts = barecat::maint::merge::MergeOptions {
        shard_size_limit: Some(LIMIT_BYTES),
        ..Default::default()
    };
    let hidden = barecat::core::progress::Progress::hidden();
    let r = barecat::maint::merge::merge(&probe, &paths, &opts, &hidden).unwrap();
    assert!(r.copied_whole > 0);
    Layout::remove(&probe).unwrap();
    let first = read_all(&paths[0], &tree)
        .unwrap()
        .files
        .keys()
        .cloned()
        .collect::<BTreeSet<_>>();
    let mut sc = Merge::new(
        "barecat-merge (first input taken over whole)",
        d.clone(),
        paths.clone(),
        tree.clone(),
        &Files::new(),
    );
    kill_trials(&mut sc, config());
    drop(sc);
    Layout::remove(d.join("old.barecat")).unwrap();
    // One input: appending onto the empty output takes it over too.
    let one: Files = tree
        .into_iter()
        .filter(|(k, _)| first.contains(k))
        .collect();
    let mut sc = Merge::new(
        "barecat-merge (the one input taken over whole)",
        d,
        paths[..1].to_vec(),
        one,
        &Files::new(),
    );
    kill_trials(&mut sc, config());
}

#[test]
fn merge_with_a_tar_input_killed_at_random_instants_leaves_old_or_no_output() {
    need!("tar", "barecat");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    let files = make_tree(&d.join("src"), "tree", 420, 300_000, 7);
    fs::remove_dir_all(d.join("src")).unwrap();
    let p = parts(&files, 2);
    let a = d.join("in0.barecat");
    let mut all = holey_input(&a, &p[0]);
    let t = d.join("in1.tar");
    fs::write(&t, make_tar(&p[1])).unwrap();
    all.extend(p[1].clone());
    let old = parts(&all, 2).remove(0);
    let mut sc = Merge::new("barecat-merge (tar input)", d, vec![a, t], all, &old);
    kill_trials(&mut sc, config());
}

// ---------------------------------------------------------------------- defrag

/// defrag, full, quick or smart: killed, every file still reads; rerunning it
/// finishes.
struct Defrag {
    name: &'static str,
    /// `--quick`, `--smart` or nothing.
    mode: Option<&'static str>,
    files: Files,
    template: PathBuf,
    template_snap: Snapshot,
    template_places: Vec<(String, u64, u64)>,
    template_physical: u64,
    out: PathBuf,
}

fn places(p: &Path) -> Vec<(String, u64, u64)> {
    let a = Archive::open(p).unwrap();
    let mut v: Vec<_> = a
        .files(FileOrder::Path, "")
        .map(|f| {
            let f = f.unwrap();
            (f.path, f.shard, f.offset)
        })
        .collect();
    v.sort();
    v
}

fn physical(p: &Path) -> u64 {
    Layout::current(p)
        .shard_files()
        .unwrap()
        .iter()
        .map(|s| fs::metadata(&s.path).unwrap().len())
        .sum()
}

impl Defrag {
    fn argv(&self, k: usize) -> Vec<OsString> {
        let mut a = args!["-q"];
        if let Some(m) = self.mode {
            a.push(m.into());
        }
        if k % 2 == 1 {
            a.push("--small-steps".into());
        }
        a.push(s(&self.out));
        a
    }
}

impl Scenario for Defrag {
    fn name(&self) -> String {
        self.name.into()
    }

    fn output(&self) -> PathBuf {
        self.out.clone()
    }

    /// Odd trials work in tiny steps (`--small-steps`), even ones as usual.
    fn variants(&self) -> usize {
        2
    }

    fn prepare(&mut self, _k: usize) {
        copy_archive(&self.template, &self.out);
    }

    fn command(&self, k: usize) -> (Command, Stdin) {
        (cmd("barecat-defrag", self.argv(k)), Stdin::Null)
    }

    fn after_kill(
        &mut self,
        _k: usize,
        _ended: &Ended,
        py: &mut PyVerifier,
    ) -> Result<String, String> {
        ensure!(state(&self.out) == State::Archive, "the archive is gone");
        let snap = read_all(&self.out, &self.files)?;
        if let Some(d) = snap.diff(&self.template_snap) {
            return Err(format!("the files changed: {d}"));
        }
        verify_clean(&self.out, &["extra_shard"])?;
        py.verify(&self.out)?;
        let now = places(&self.out);
        let moved = now
            .iter()
            .zip(&self.template_places)
            .filter(|(a, b)| a != b)
            .count();
        let shrunk = physical(&self.out) < self.template_physical;
        Ok(match (moved, shrunk) {
            (0, false) => "before the first move".into(),
            (0, true) => "truncating (no file moved)".into(),
            (_, false) => "moving files (nothing truncated yet)".into(),
            (_, true) => "after moves, shards truncated".into(),
        })
    }

    fn fix_and_compare(&mut self, k: usize, py: &mut PyVerifier) -> Check {
        let e = run_to_end(cmd("barecat-defrag", self.argv(k)), &Stdin::Null);
        ensure!(e.status.success(), "defrag failed: {}", e.stderr.trim());
        let snap = read_all(&self.out, &self.files)?;
        if let Some(d) = snap.diff(&self.template_snap) {
            return Err(format!("the files changed: {d}"));
        }
        let v = verify_clean(&self.out, &[])?;
        if self.mode != Some("--quick") {
            ensure!(
                v["space"]["reclaimable_bytes"] == 0,
                "full or smart defrag left reclaimable bytes: {}",
                v["space"]
            );
        }
        py.verify(&self.out)?;
        Ok(())
    }
}

fn defrag(mode: Option<&'static str>) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    let files = make_tree(&d.join("src"), "tree", 700, 300_000, 8);
    fs::remove_dir_all(d.join("src")).unwrap();
    let template = d.join("template.barecat");
    let kept = holey_input(&template, &files);
    let template_snap = read_all(&template, &kept).unwrap();
    let mut sc = Defrag {
        name: match mode {
            Some("--quick") => "barecat-defrag --quick",
            Some(_) => "barecat-defrag --smart",
            None => "barecat-defrag",
        },
        mode,
        files: kept,
        template_places: places(&template),
        template_physical: physical(&template),
        template,
        template_snap,
        out: d.join("out.barecat"),
    };
    kill_trials(&mut sc, config());
}

#[test]
fn defrag_killed_at_random_instants_keeps_every_file() {
    need!("barecat");
    defrag(None);
}

#[test]
fn quick_defrag_killed_at_random_instants_keeps_every_file() {
    need!("barecat");
    defrag(Some("--quick"));
}

#[test]
fn smart_defrag_killed_at_random_instants_keeps_every_file() {
    need!("barecat");
    defrag(Some("--smart"));
}

// ---------------------------------------------------------------------- sidecar

/// barecat-sidecar rewriting the sidecar of an index that another tool changed
/// since it was written: killed at any instant, it leaves the stale sidecar (which
/// a reader rejects), none, or the new one whole; never one that a reader takes for
/// the index and that is not the index's. Rerunning it gives a valid sidecar.
struct SidecarRebuild {
    files: Files,
    template: PathBuf,
    out: PathBuf,
}

impl Scenario for SidecarRebuild {
    fn name(&self) -> String {
        "barecat-sidecar".into()
    }

    fn output(&self) -> PathBuf {
        self.out.clone()
    }

    fn prepare(&mut self, _k: usize) {
        copy_archive(&self.template, &self.out);
    }

    fn command(&self, _k: usize) -> (Command, Stdin) {
        (cmd("barecat-sidecar", args!["-q", &self.out]), Stdin::Null)
    }

    fn after_kill(
        &mut self,
        _k: usize,
        _ended: &Ended,
        py: &mut PyVerifier,
    ) -> Result<String, String> {
        let snap = read_all(&self.out, &self.files)?;
        ensure!(snap.files.len() == self.files.len(), "files went missing");
        verify_clean(&self.out, &[])?;
        py.verify(&self.out)?;
        let r = barecat::core::sidecar::check(&self.out).map_err(|e| e.to_string())?;
        let temp = barecat::core::sidecar::emit::temp_path(&Layout::current(&self.out));
        Ok(format!(
            "{:?}{}",
            r.status,
            if temp.exists() {
                " (a temporary file left)"
            } else {
                ""
            }
        ))
    }

    fn fix_and_compare(&mut self, _k: usize, _py: &mut PyVerifier) -> Check {
        let e = run_to_end(cmd("barecat-sidecar", args!["-q", &self.out]), &Stdin::Null);
        ensure!(e.status.success(), "rerun failed: {}", e.stderr.trim());
        Ok(())
    }
}

#[test]
fn sidecar_rebuild_killed_at_random_instants_never_leaves_a_wrong_sidecar() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    let mut files = Files::new();
    for i in 0..4000 {
        files.insert(
            format!("d{:02}/sub{:03}/file-{i:06}", i % 17, i % 101),
            vec![i as u8],
        );
    }
    let template = d.join("template.barecat");
    build(&template, None, &files);
    // Another SQLite client changes the index: the sidecar is stale.
    let conn = rusqlite::Connection::open(&template).unwrap();
    conn.execute(
        "INSERT INTO config (key, value_text) VALUES ('another_tool', 'was here')",
        [],
    )
    .unwrap();
    drop(conn);
    let r = barecat::core::sidecar::check(&template).unwrap();
    assert_eq!(
        r.status,
        barecat::core::sidecar::Status::Stale,
        "{}",
        r.message
    );
    let mut sc = SidecarRebuild {
        files,
        template,
        out: d.join("out.barecat"),
    };
    kill_trials(&mut sc, config());
}

// ---------------------------------------------------------------------- regressions

/// A create killed after SQLite created the index file but before the tables were
/// committed leaves an empty database; `--resume` (of create and of from-tar)
/// starts the archive anew instead of calling it "not a barecat archive", while a
/// plain create still refuses to touch the file.
#[test]
fn resume_starts_over_from_an_index_killed_before_its_tables_existed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let files = make_tree(&d.join("src"), "tree", 30, 100_000, 31);
    let tar = d.join("in.tar");
    fs::write(&tar, make_tar(&files)).unwrap();
    let reference = d.join("ref.barecat");
    let e = run_to_end(
        cmd(
            "barecat-create",
            args!["-q", "-C", d.join("src"), &reference, "tree"],
        ),
        &Stdin::Null,
    );
    assert!(e.status.success(), "{}", e.stderr);
    let want = read_all(&reference, &files).unwrap();
    let out = d.join("out.barecat");
    let runs: [(&str, Vec<OsString>); 2] = [
        (
            "barecat-create",
            args!["-q", "-C", d.join("src"), &out, "tree"],
        ),
        ("barecat-from-tar", args!["-q", &tar, &out]),
    ];
    for (prog, argv) in runs {
        fs::write(&out, b"").unwrap();
        let e = run_to_end(cmd(prog, &argv), &Stdin::Null);
        assert_eq!(e.status.code(), Some(1), "{prog}: {}", e.stderr);
        assert!(e.stderr.contains("already exists"), "{prog}: {}", e.stderr);
        assert_eq!(
            fs::metadata(&out).unwrap().len(),
            0,
            "{prog} changed the file"
        );
        let mut resume = argv.clone();
        resume.insert(0, "--resume".into());
        let e = run_to_end(cmd(prog, &resume), &Stdin::Null);
        assert!(e.status.success(), "{prog} --resume: {}", e.stderr);
        let snap = read_all(&out, &files).unwrap();
        if prog == "barecat-create" {
            assert!(snap.diff(&want).is_none(), "{:?}", snap.diff(&want));
        } else {
            assert_eq!(snap.files.len(), files.len());
        }
        verify_clean(&out, &[]).unwrap();
        Layout::remove(&out).unwrap();
    }
}

/// Temporary outputs of merges that were killed (their process is gone) are removed
/// by the next merge to the same output; those of a live process are left alone.
#[test]
fn merge_removes_the_temporaries_of_killed_merges() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let files: Files = [("a/x".to_string(), b"x".to_vec())].into_iter().collect();
    let input = d.join("in.barecat");
    build(&input, None, &files);
    // A pid that no process has any more.
    let mut child = Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait_bounded().unwrap();
    for tag in ["merging", "linking"] {
        let stale = d.join(format!(".out.barecat.{tag}-{dead}"));
        build(&stale, Some(1), &parts(&files, 1)[0]);
        fs::write(d.join(format!(".out.barecat.{tag}-{dead}-journal")), b"j").unwrap();
        // pid 1 always exists.
        let live = d.join(format!(".out.barecat.{tag}-1"));
        build(&live, None, &files);
        let mut argv = args!["-q", "-f", "-o", d.join("out.barecat"), &input];
        if tag == "linking" {
            argv.insert(0, "--symlink".into());
        }
        let e = run_to_end(cmd("barecat-merge", argv), &Stdin::Null);
        assert!(e.status.success(), "{}", e.stderr);
        let left: Vec<String> = names(d)
            .into_iter()
            .filter(|n| n.starts_with(&format!(".out.barecat.{tag}")))
            .collect();
        assert_eq!(
            left,
            [
                format!(".out.barecat.{tag}-1"),
                format!(".out.barecat.{tag}-1-btreemeta"),
                format!(".out.barecat.{tag}-1-shard-00000")
            ],
            "{tag}"
        );
        Layout::remove(&live).unwrap();
    }
}

/// A killed `merge -a` leaves the bytes it appended after the last file; the next
/// `merge -a` cuts them off before appending instead of leaving them as a hole.
#[test]
fn merge_append_removes_the_bytes_a_killed_merge_left() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let files = make_tree(&d.join("src"), "tree", 30, 100_000, 32);
    let p = parts(&files, 2);
    let out = d.join("out.barecat");
    build(&out, Some(LIMIT_BYTES), &p[0]);
    let input = d.join("in.barecat");
    build(&input, Some(LIMIT_BYTES), &p[1]);
    // What a killed append leaves: bytes after the last file, and a shard after it.
    let layout = Layout::current(&out);
    let last = layout.shard_files().unwrap().last().unwrap().clone();
    let mut f = fs::OpenOptions::new()
        .append(true)
        .open(&last.path)
        .unwrap();
    std::io::Write::write_all(&mut f, &[7u8; 5000]).unwrap();
    fs::write(layout.shard_path(last.number + 1), [7u8; 3000]).unwrap();
    let e = run_to_end(
        cmd("barecat-merge", args!["-q", "-a", "-o", &out, &input]),
        &Stdin::Null,
    );
    assert!(e.status.success(), "{}", e.stderr);
    let snap = read_all(&out, &files).unwrap();
    assert_eq!(snap.files.len(), files.len());
    let v = verify_clean(&out, &[]).unwrap();
    assert_eq!(v["space"]["reclaimable_bytes"], 0, "{}", v["space"]);
}

// ---------------------------------------------------------------------- mount

/// What a writer through the mount knows of one path: the content of its last
/// closed version, and the one being written when the daemon was killed.
/// After the kill the archive must hold the closed version, or a prefix of the one
/// being written (possibly empty).
#[derive(Default, Clone)]
struct Written {
    closed: Option<Vec<u8>>,
    in_flight: Option<Vec<u8>>,
}

/// Write, rewrite and rename files through a writable mount until the mount
/// fails (its daemon was killed), recording what was closed.
fn write_until_killed(mnt: &Path, log: &std::sync::Mutex<BTreeMap<String, Written>>) {
    let mut i = 0u64;
    loop {
        // Mostly new files, sometimes a rewrite of an earlier one.
        let path = if i % 5 == 4 {
            format!("w/d{}/f{}", (i / 7) % 3, i / 2)
        } else {
            format!("w/d{}/f{i}", i % 3)
        };
        // Some files large enough to be appended to the archive as they are written.
        let len = if i % 6 == 5 { 2 << 20 } else { 0 } + (i * 7919) % 200_000;
        let data = crate::support::pseudo_random(i, len as usize);
        let parent = mnt.join(&path).parent().unwrap().to_path_buf();
        if fs::create_dir_all(parent).is_err() {
            return;
        }
        log.lock()
            .unwrap()
            .entry(path.clone())
            .or_default()
            .in_flight = Some(data.clone());
        if write_and_close(&mnt.join(&path), &data).is_err() {
            return;
        }
        let mut l = log.lock().unwrap();
        let w = l.get_mut(&path).unwrap();
        w.closed = w.in_flight.take();
        i += 1;
    }
}

#[test]
fn writable_mount_killed_at_random_instants_keeps_every_closed_file() {
    need!("fusermount3", "barecat");
    if !crate::support::mount::fuse_available() {
        return;
    }
    let cfg = config();
    let mut rng = Rng::new(cfg.seed);
    let mut py = PyVerifier::start();
    let mut closed = 0;
    for trial in 0..cfg.trials {
        let tmp = tempfile::tempdir().unwrap();
        let archive = tmp.path().join("a.barecat");
        let src = tmp.path().join("src");
        let first = make_tree(&src, "old", 20, 1, 7);
        build(&archive, None, &first);
        let delay = Duration::from_millis((rng.unit() * 1500.0) as u64);
        let ctx = format!("trial {trial}, seed {}, kill after {delay:?}", cfg.seed);
        let mnt = tmp.path().join("mnt");
        let m = crate::support::mount::mount_foreground(
            &archive,
            &mnt,
            &["--writable"],
            &tmp.path().join("daemon.log"),
        );
        let log = std::sync::Mutex::new(BTreeMap::new());
        std::thread::scope(|sc| {
            sc.spawn(|| write_until_killed(&mnt, &log));
            std::thread::sleep(delay);
            let pid = m.child.as_ref().unwrap().id();
            run_ok_kill(pid);
        });
        drop(m); // unmounts the dead mount
        let a = Archive::open(&archive).unwrap_or_else(|e| panic!("{ctx}: {e}"));
        for (path, w) in log.lock().unwrap().iter() {
            closed += w.closed.is_some() as usize;
            let got = a
                .read(path)
                .map_err(|e| eprintln!("{ctx}: {path}: {e}"))
                .ok();
            // A file being written may also hold what had been written of it: every
            // close of a descriptor commits (a fork of this process, such as the
            // one that runs `kill`, closes copies of the descriptors open here).
            let ok = got == w.closed
                || matches!((&got, &w.in_flight), (Some(g), Some(new)) if new.starts_with(g));
            assert!(
                ok,
                "{ctx}: {path}: {:?} bytes in the archive, {:?} closed, {:?} being written; \
                 daemon: {}; files: {}",
                got.as_ref().map(Vec::len),
                w.closed.as_ref().map(Vec::len),
                w.in_flight.as_ref().map(Vec::len),
                fs::read_to_string(tmp.path().join("daemon.log")).unwrap_or_default(),
                crate::support::run_ok(bin_path("barecat-index-to-csv"), [archive.as_os_str()])
            );
        }
        for (path, data) in &first {
            assert_eq!(&a.read(path).unwrap(), data, "{ctx}: {path}");
        }
        drop(a);
        verify_clean(&archive, &[]).unwrap_or_else(|e| panic!("{ctx}: {e}"));
        py.verify(&archive).unwrap_or_else(|e| panic!("{ctx}: {e}"));
    }
    assert!(
        closed >= cfg.trials,
        "only {closed} files were closed before {} kills",
        cfg.trials
    );
}

/// `fs::write`, but a failing `close` is an error too (dropping a `File` ignores
/// it, and on a mount `close` is where a file is committed).
fn write_and_close(path: &Path, data: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::fd::IntoRawFd;
    let mut f = fs::File::create(path)?;
    f.write_all(data)?;
    // SAFETY: closes the descriptor the File gave up.
    if unsafe { libc::close(f.into_raw_fd()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

fn bin_path(name: &str) -> PathBuf {
    crate::support::bin(name)
}

fn run_ok_kill(pid: u32) {
    let st = Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status_bounded()
        .unwrap();
    assert!(st.success());
}
