//! Crash consistency of the commands that change an existing archive: `barecat-rm`,
//! `barecat-mv`, `barecat-rsync` (local → archive with updates and --delete),
//! `barecat shell -w` (put, mput, rm, mv: one transaction each) and
//! `barecat-add`, killed with SIGKILL at random instants (harness:
//! `tests/it/support/harness.rs`, as in `tests/it/reliability/crash.rs`).
//!
//! After every kill the archive opens, every file reads back CRC-checked with one of
//! the contents it may have, nothing it had and keeps is lost, `barecat-verify`
//! finds no problem, and Python barecat's verify passes; rm and mv, one transaction
//! each, leave the archive exactly as before or as after. After the documented fix
//! (rm: run again with -f; mv: run again if it had not finished; rsync: run again;
//! add: run again with --resume) the archive holds exactly what an uninterrupted
//! run gives.
//!
//! `BARECAT_CRASH_TRIALS=200` runs 200 instants per command instead of 20;
//! `BARECAT_CRASH_SEED=N` replays the instants of a failure.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::harness::*;
use barecat::{Archive, FileOrder};

const LIMIT: u64 = 256 << 10;

/// A program and its arguments.
type Line = (String, Vec<OsString>);

/// The documented fix after a kill, if any.
type Fix = Box<dyn Fn(&Edit) -> Option<Line>>;

/// A command that edits a copy of a template archive.
struct Edit {
    name: &'static str,
    template: PathBuf,
    out: PathBuf,
    /// The command, with `{out}` for the archive.
    argv: Box<dyn Fn(&Path) -> Line>,
    /// The content every path may have after a kill (before, after, or both).
    allowed: BTreeMap<String, Vec<Vec<u8>>>,
    /// Files that are in the archive before and after: never lost.
    kept: BTreeSet<String>,
    /// One transaction: the archive is exactly as before or as after.
    atomic: bool,
    /// Directory mtimes are compared (a removal or rename stamps the directories
    /// it changes with the time of the change, as a file system does: not
    /// compared then).
    dir_mtimes: bool,
    before: Snapshot,
    after: Option<Snapshot>,
    /// The documented fix.
    fix: Fix,
}

impl Edit {
    fn command_for(&self, out: &Path) -> Command {
        let (prog, args) = (self.argv)(out);
        cmd(&prog, args)
    }

    fn snapshot(&self, path: &Path) -> Result<Snapshot, String> {
        let a = Archive::open(path).map_err(|e| format!("does not open: {e}"))?;
        let mut seen = BTreeSet::new();
        for fi in a.files(FileOrder::Address, "") {
            let fi = fi.map_err(|e| e.to_string())?;
            let data = a
                .read_file(&fi)
                .map_err(|e| format!("{}: cannot be read back: {e}", fi.path))?;
            ensure!(
                self.allowed
                    .get(&fi.path)
                    .is_some_and(|c| c.contains(&data)),
                "{}: holds a content it never had",
                fi.path
            );
            seen.insert(fi.path);
        }
        let lost: Vec<_> = self.kept.difference(&seen).take(3).collect();
        ensure!(lost.is_empty(), "files lost: {lost:?}");
        drop(a);
        let mut snap = read_all_any(path)?;
        if !self.dir_mtimes {
            for d in snap.dirs.values_mut() {
                d.4.mtime_ns = None;
            }
        }
        Ok(snap)
    }

    fn after(&mut self) -> Snapshot {
        if self.after.is_none() {
            let r = self.out.with_file_name("reference.barecat");
            copy_archive(&self.template, &r);
            let e = run_to_end(self.command_for(&r), &Stdin::Null);
            assert!(e.status.success(), "{}: {}", self.name, e.stderr);
            self.after = Some(self.snapshot(&r).unwrap());
        }
        self.after.clone().unwrap()
    }
}

/// The metadata and statistics of an archive whose contents were checked already.
fn read_all_any(path: &Path) -> Result<Snapshot, String> {
    let a = Archive::open(path).map_err(|e| format!("does not open: {e}"))?;
    let mut files = BTreeMap::new();
    for fi in a.files(FileOrder::Path, "") {
        let fi = fi.map_err(|e| e.to_string())?;
        files.insert(fi.path.clone(), (fi.size, fi.crc32c, fi.meta));
    }
    let mut dirs = BTreeMap::new();
    for d in a.dirs("").map_err(|e| e.to_string())? {
        let mut meta = d.meta;
        if d.path.is_empty() {
            meta.mtime_ns = None;
        }
        dirs.insert(
            d.path.clone(),
            (
                d.num_subdirs,
                d.num_files,
                d.num_files_tree,
                d.size_tree,
                meta,
            ),
        );
    }
    Ok(Snapshot { files, dirs })
}

impl Scenario for Edit {
    fn name(&self) -> String {
        self.name.into()
    }

    fn output(&self) -> PathBuf {
        self.out.clone()
    }

    fn prepare(&mut self, _k: usize) {
        self.after();
        copy_archive(&self.template, &self.out);
    }

    fn command(&self, _k: usize) -> (Command, Stdin) {
        (self.command_for(&self.out), Stdin::Null)
    }

    fn after_kill(
        &mut self,
        _k: usize,
        _ended: &Ended,
        py: &mut PyVerifier,
    ) -> Result<String, String> {
        ensure!(state(&self.out) == State::Archive, "the archive is gone");
        let snap = self.snapshot(&self.out)?;
        verify_clean(&self.out, &["extra_shard", "no_shard"])?;
        py.verify(&self.out)?;
        let after = self.after();
        Ok(if snap == self.before {
            "before the commit".into()
        } else if snap == after {
            "after the commit".into()
        } else {
            ensure!(
                !self.atomic,
                "neither as before nor as after: {:?}",
                snap.diff(&after)
            );
            "between commits".into()
        })
    }

    fn fix_and_compare(&mut self, _k: usize, py: &mut PyVerifier) -> Check {
        if let Some((prog, args)) = (self.fix)(self) {
            let e = run_to_end(cmd(&prog, args), &Stdin::Null);
            ensure!(e.status.success(), "the fix failed: {}", e.stderr.trim());
        }
        let snap = self.snapshot(&self.out)?;
        if let Some(d) = snap.diff(&self.after()) {
            return Err(format!("differs from an uninterrupted run: {d}"));
        }
        verify_clean(&self.out, &[])?;
        py.verify(&self.out)?;
        Ok(())
    }
}

/// A template archive of `files` over 256 KiB shards; its snapshot.
fn template(dir: &Path, files: &Files) -> (PathBuf, Snapshot) {
    let t = dir.join("template.barecat");
    build(&t, Some(LIMIT), files);
    let snap = read_all(&t, files).unwrap();
    (t, snap)
}

fn allowed_from(parts: &[&Files]) -> BTreeMap<String, Vec<Vec<u8>>> {
    let mut m: BTreeMap<String, Vec<Vec<u8>>> = BTreeMap::new();
    for files in parts {
        for (p, c) in files.iter() {
            let v = m.entry(p.clone()).or_default();
            if !v.contains(c) {
                v.push(c.clone());
            }
        }
    }
    m
}

#[test]
fn rm_killed_at_random_instants_leaves_before_or_after() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    let files = make_tree(&d.join("src"), "tree", 400, 300_000, 11);
    let (t, before) = template(&d, &files);
    let gone =
        |p: &str| p.starts_with("tree/c1/") || p.starts_with("tree/c2/s1/") || p.ends_with("5.bin");
    let kept = files.keys().filter(|p| !gone(p)).cloned().collect();
    let argv = |out: &Path| {
        (
            "barecat-rm".to_string(),
            args!["-q", "-r", out, "tree/c1", "tree/c2/s1", "tree/**/*5.bin"],
        )
    };
    let mut sc = Edit {
        name: "barecat-rm",
        template: t,
        out: d.join("out.barecat"),
        argv: Box::new(argv),
        allowed: allowed_from(&[&files]),
        kept,
        atomic: true,
        dir_mtimes: false,
        before,
        after: None,
        fix: Box::new(|e: &Edit| {
            let (prog, mut args) = (e.argv)(&e.out);
            args.insert(0, "-f".into());
            Some((prog, args))
        }),
    };
    kill_trials(&mut sc, config());
}

#[test]
fn mv_killed_at_random_instants_leaves_before_or_after() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    let files = make_tree(&d.join("src"), "tree", 400, 300_000, 12);
    let (t, _) = template(&d, &files);
    let mut allowed = allowed_from(&[&files]);
    let mut moved = Files::new();
    for (p, c) in &files {
        let to = if let Some(r) = p.strip_prefix("tree/c1/") {
            Some(format!("new/deeper/c1/{r}"))
        } else {
            p.strip_prefix("tree/c2/")
                .map(|r| format!("new/deeper/c2/{r}"))
        };
        if let Some(to) = to {
            moved.insert(to, c.clone());
        }
    }
    for (p, c) in &moved {
        allowed.insert(p.clone(), vec![c.clone()]);
    }
    let argv = |out: &Path| {
        (
            "barecat-mv".to_string(),
            args!["-q", out, "tree/c[12]", "tree/c3/s0", "new/deeper"],
        )
    };
    // new/deeper must exist for several sources: made by the template.
    let mut w = barecat::ArchiveWriter::open(
        &t,
        barecat::WriterOptions::with_mode(barecat::CreateMode::Append),
    )
    .unwrap();
    let dir_meta = barecat::Meta {
        mode: Some(0o40755),
        ..meta()
    };
    w.add_dir("new/deeper", dir_meta).unwrap();
    w.finish().unwrap();
    let mut before = read_all(&t, &files).unwrap();
    for d in before.dirs.values_mut() {
        d.4.mtime_ns = None;
    }
    for (p, c) in &files {
        if let Some(r) = p.strip_prefix("tree/c3/s0/") {
            allowed.insert(format!("new/deeper/s0/{r}"), vec![c.clone()]);
        }
    }
    let mut sc = Edit {
        name: "barecat-mv",
        template: t,
        out: d.join("out.barecat"),
        argv: Box::new(argv),
        allowed,
        kept: BTreeSet::new(),
        atomic: true,
        dir_mtimes: false,
        before,
        after: None,
        // Run again if it had not finished; after a commit that the kill cut short
        // of writing the sidecar, barecat-sidecar writes it.
        fix: Box::new(|e: &Edit| {
            let done = Archive::open(&e.out)
                .and_then(|a| a.exists("new/deeper/c1"))
                .unwrap_or(false);
            Some(if done {
                ("barecat-sidecar".to_string(), args!["-q", &e.out])
            } else {
                (e.argv)(&e.out)
            })
        }),
    };
    kill_trials(&mut sc, config());
}

#[test]
fn rsync_killed_at_random_instants_keeps_old_or_new_content() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    let old = make_tree(&d.join("old"), "tree", 200, 300_000, 13);
    let (t, before) = template(&d, &old);
    // The source: a third of the files changed, a tenth deleted, 40 new ones.
    let src = d.join("src");
    let mut new = Files::new();
    for (i, (p, c)) in old.iter().enumerate() {
        let rel = p.strip_prefix("tree/").unwrap();
        let data = match i % 10 {
            0 => continue,
            1..=3 => crate::support::pseudo_random(i as u64 * 31, c.len() / 2 + 100),
            _ => c.clone(),
        };
        let f = src.join(rel);
        fs::create_dir_all(f.parent().unwrap()).unwrap();
        fs::write(&f, &data).unwrap();
        new.insert(p.clone(), data);
    }
    for (p, c) in make_tree(&src, "added", 40, 300_000, 14) {
        new.insert(format!("tree/{p}"), c);
    }
    let kept = old
        .keys()
        .filter(|p| new.contains_key(*p))
        .cloned()
        .collect();
    let argv = move |out: &Path| {
        let mut dest = out.as_os_str().to_owned();
        dest.push("::tree");
        (
            "barecat-rsync".to_string(),
            args![
                "-q",
                "--delete",
                "--commit-interval-ms",
                "5",
                format!("{}/", src.display()),
                dest
            ],
        )
    };
    let mut sc = Edit {
        name: "barecat-rsync",
        template: t,
        out: d.join("out.barecat"),
        argv: Box::new(argv),
        allowed: allowed_from(&[&old, &new]),
        kept,
        atomic: false,
        dir_mtimes: false,
        before,
        after: None,
        fix: Box::new(|e: &Edit| Some((e.argv)(&e.out))),
    };
    kill_trials(&mut sc, config());
}

#[test]
fn add_killed_at_random_instants_is_finished_by_resume() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    let old = make_tree(&d.join("old"), "tree", 150, 300_000, 15);
    let (t, before) = template(&d, &old);
    let src = d.join("src");
    let added = make_tree(&src, "more", 150, 300_000, 16);
    let kept = old.keys().cloned().collect();
    let argv = move |out: &Path| {
        (
            "barecat-add".to_string(),
            args![
                "-q",
                "--buffer-size",
                "256K",
                "--commit-interval-ms",
                "5",
                "-j",
                "2",
                out,
                "-C",
                &src,
                "more"
            ],
        )
    };
    let mut sc = Edit {
        name: "barecat-add",
        template: t,
        out: d.join("out.barecat"),
        argv: Box::new(argv),
        allowed: allowed_from(&[&old, &added]),
        kept,
        atomic: false,
        dir_mtimes: true,
        before,
        after: None,
        fix: Box::new(|e: &Edit| {
            let (prog, mut args) = (e.argv)(&e.out);
            args.insert(0, "--resume".into());
            Some((prog, args))
        }),
    };
    kill_trials(&mut sc, config());
}

/// `barecat shell -w -c 'cmd; cmd; …'`: every writing command is one transaction,
/// so a kill leaves the archive as it was after some number of whole commands.
struct ShellRun {
    /// Snapshots, checks of content and lost files; its `argv` runs every command.
    edit: Edit,
    cmds: Vec<String>,
    /// `stages[i]`: the archive after the first `i` commands.
    stages: Vec<Snapshot>,
    /// The stage the last kill left.
    reached: usize,
}

fn shell_line(out: &Path, cmds: &[String]) -> Line {
    let script = cmds.join("; ");
    (
        "barecat".to_string(),
        args!["shell", "-w", out, "-c", &script],
    )
}

impl Scenario for ShellRun {
    fn name(&self) -> String {
        "barecat shell -w".into()
    }

    fn output(&self) -> PathBuf {
        self.edit.out.clone()
    }

    fn prepare(&mut self, _k: usize) {
        if self.stages.is_empty() {
            let r = self.edit.out.with_file_name("stage.barecat");
            for i in 0..=self.cmds.len() {
                copy_archive(&self.edit.template, &r);
                if i > 0 {
                    let (prog, args) = shell_line(&r, &self.cmds[..i]);
                    let e = run_to_end(cmd(&prog, args), &Stdin::Null);
                    assert!(e.status.success(), "shell stage {i}: {}", e.stderr);
                }
                self.stages.push(self.edit.snapshot(&r).unwrap());
            }
            for w in self.stages.windows(2) {
                assert!(w[0] != w[1], "a command that changes nothing tests nothing");
            }
        }
        copy_archive(&self.edit.template, &self.edit.out);
    }

    fn command(&self, _k: usize) -> (Command, Stdin) {
        (self.edit.command_for(&self.edit.out), Stdin::Null)
    }

    fn after_kill(
        &mut self,
        _k: usize,
        _ended: &Ended,
        py: &mut PyVerifier,
    ) -> Result<String, String> {
        ensure!(
            state(&self.edit.out) == State::Archive,
            "the archive is gone"
        );
        let snap = self.edit.snapshot(&self.edit.out)?;
        verify_clean(&self.edit.out, &["extra_shard", "no_shard"])?;
        py.verify(&self.edit.out)?;
        let Some(i) = self.stages.iter().position(|s| *s == snap) else {
            return Err(format!(
                "not the state after any number of whole commands; against the last: {:?}",
                snap.diff(self.stages.last().unwrap())
            ));
        };
        self.reached = i;
        Ok(format!("after {i} commands"))
    }

    fn fix_and_compare(&mut self, _k: usize, py: &mut PyVerifier) -> Check {
        // The fix: run the commands that had not run; after a kill that came
        // after the last commit but before its sidecar was written,
        // barecat-sidecar writes it (as after mv).
        let rest = &self.cmds[self.reached..];
        let (prog, args) = if rest.is_empty() {
            ("barecat-sidecar".to_string(), args!["-q", &self.edit.out])
        } else {
            shell_line(&self.edit.out, rest)
        };
        let e = run_to_end(cmd(&prog, args), &Stdin::Null);
        ensure!(e.status.success(), "the fix failed: {}", e.stderr.trim());
        let snap = self.edit.snapshot(&self.edit.out)?;
        if let Some(d) = snap.diff(self.stages.last().unwrap()) {
            return Err(format!("differs from an uninterrupted run: {d}"));
        }
        verify_clean(&self.edit.out, &[])?;
        py.verify(&self.edit.out)?;
        Ok(())
    }
}

#[test]
fn shell_writes_killed_at_random_instants_leave_each_command_whole() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    let old = make_tree(&d.join("old"), "tree", 200, 300_000, 17);
    let (t, before) = template(&d, &old);
    let src = d.join("src");
    let added = make_tree(&src, "more", 160, 300_000, 18);
    let mut allowed = allowed_from(&[&old]);
    // mput takes the files of more/c[0-3]/*/ into incoming/ by their names.
    for (p, c) in &added {
        if p.starts_with("more/c0/")
            || p.starts_with("more/c1/")
            || p.starts_with("more/c2/")
            || p.starts_with("more/c3/")
        {
            let name = p.rsplit('/').next().unwrap();
            allowed.insert(format!("incoming/{name}"), vec![c.clone()]);
        }
    }
    // mv tree/c2 → moved/c2: both places are allowed for its files.
    for (p, c) in &old {
        if let Some(r) = p.strip_prefix("tree/c2/") {
            allowed.insert(format!("moved/c2/{r}"), vec![c.clone()]);
        }
    }
    let removed = "tree/c1/s1/f0001.bin".to_string();
    assert!(old.contains_key(&removed));
    let kept = old
        .keys()
        .filter(|p| !p.starts_with("tree/c2/") && **p != removed)
        .cloned()
        .collect();
    let pattern = src.join("more/c[0-3]/*/*.bin");
    let cmds = vec![
        format!("mput {} incoming", pattern.display()),
        format!("rm /{removed}"),
        "mv /tree/c2 /moved/c2".to_string(),
        format!(
            "put {} /incoming/again.bin",
            src.join("more/c4/s0")
                .join(
                    added
                        .keys()
                        .find(|p| p.starts_with("more/c4/s0/"))
                        .unwrap()
                        .rsplit('/')
                        .next()
                        .unwrap()
                )
                .display()
        ),
    ];
    let again = added
        .iter()
        .find(|(p, _)| p.starts_with("more/c4/s0/"))
        .unwrap()
        .1
        .clone();
    allowed.insert("incoming/again.bin".into(), vec![again]);
    let all = cmds.clone();
    let edit = Edit {
        name: "barecat shell -w",
        template: t,
        out: d.join("out.barecat"),
        argv: Box::new(move |out: &Path| shell_line(out, &all)),
        allowed,
        kept,
        atomic: false,
        dir_mtimes: false,
        before,
        after: None,
        fix: Box::new(|_: &Edit| None),
    };
    let mut sc = ShellRun {
        edit,
        cmds,
        stages: Vec::new(),
        reached: 0,
    };
    kill_trials(&mut sc, config());
}
