//! Crash consistency of the commands that rewrite an archive in place or put a new
//! one in its place: `barecat-reshard` (smaller and larger limits), `barecat-upgrade`
//! (schema 0.2 to 0.3) and `barecat-from-tar --wrap` (a new output, and `-f` over an
//! old one), killed with SIGKILL at random instants by the harness of
//! `tests/it/support/harness.rs`. After every kill the archive opens and every file
//! reads back with its content, `barecat-verify` and Python barecat's verify pass;
//! after the documented fix (running the command again) the archive is exactly
//! what an uninterrupted run gives.
//!
//! `BARECAT_CRASH_TRIALS=200` runs 200 instants per command instead of 20;
//! `BARECAT_CRASH_SEED=N` replays the instants of a failure.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::harness::*;
use barecat::{Archive, ArchiveWriter, CreateMode, FileOrder, Layout, WriterOptions};

fn s(p: impl AsRef<std::ffi::OsStr>) -> OsString {
    p.as_ref().to_owned()
}

/// Every file's place: (path, shard, offset), sorted by path.
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

fn shard_lengths(p: &Path) -> Vec<u64> {
    Layout::current(p)
        .shard_files()
        .unwrap()
        .iter()
        .map(|s| fs::metadata(&s.path).unwrap().len())
        .collect()
}

/// Names in the directory of `p` that start with a dot (temporaries).
fn temporaries(p: &Path) -> Vec<String> {
    names(p.parent().unwrap())
        .into_iter()
        .filter(|n| n.starts_with('.'))
        .collect()
}

// ---------------------------------------------------------------------- reshard

/// reshard, to a smaller limit (new shards written, then renumbered) or a larger
/// one (files moved to earlier places): killed, every file still reads with its
/// metadata; running it again gives the uninterrupted result, byte for byte.
struct Reshard {
    files: Files,
    template: PathBuf,
    template_snap: Snapshot,
    /// Per variant: the places and shard bytes of an uninterrupted run.
    expected: Vec<Uninterrupted>,
    out: PathBuf,
}

/// What an uninterrupted run gives: the files' places and the shards' bytes.
type Uninterrupted = (Vec<(String, u64, u64)>, Vec<Vec<u8>>);

/// The variants: (limit, tiny steps).
const RESHARD: [(&str, bool); 3] = [("300K", false), ("300K", true), ("4M", false)];

impl Reshard {
    fn argv(&self, k: usize) -> Vec<OsString> {
        let (limit, small) = RESHARD[k % RESHARD.len()];
        let mut a = args!["-q", "-s", limit];
        if small {
            a.push("--small-steps".into());
        }
        a.push(s(&self.out));
        a
    }
}

impl Scenario for Reshard {
    fn name(&self) -> String {
        "barecat-reshard".into()
    }

    fn output(&self) -> PathBuf {
        self.out.clone()
    }

    fn variants(&self) -> usize {
        RESHARD.len()
    }

    fn prepare(&mut self, _k: usize) {
        copy_archive(&self.template, &self.out);
        let _ = fs::remove_file(self.out.with_file_name(".out.barecat.reshard-link"));
    }

    fn command(&self, k: usize) -> (Command, Stdin) {
        (cmd("barecat-reshard", self.argv(k)), Stdin::Null)
    }

    fn after_kill(&mut self, k: usize, _e: &Ended, py: &mut PyVerifier) -> Result<String, String> {
        ensure!(state(&self.out) == State::Archive, "the archive is gone");
        let snap = read_all(&self.out, &self.files)?;
        if let Some(d) = snap.diff(&self.template_snap) {
            return Err(format!("the files changed: {d}"));
        }
        verify_clean(&self.out, &["extra_shard"])?;
        py.verify(&self.out)?;
        let now = places(&self.out);
        let (done, _) = &self.expected[k % RESHARD.len()];
        let template = places(&self.template);
        let lengths = shard_lengths(&self.out);
        Ok(
            if now == template && lengths == shard_lengths(&self.template) {
                "before the first move".into()
            } else if now == *done {
                "files in place: cutting or removing shards, storing the limit".into()
            } else {
                "moving files or renumbering shards".into()
            },
        )
    }

    fn fix_and_compare(&mut self, k: usize, py: &mut PyVerifier) -> Check {
        let e = run_to_end(cmd("barecat-reshard", self.argv(k)), &Stdin::Null);
        ensure!(e.status.success(), "reshard failed: {}", e.stderr.trim());
        let snap = read_all(&self.out, &self.files)?;
        if let Some(d) = snap.diff(&self.template_snap) {
            return Err(format!("the files changed: {d}"));
        }
        // The files are packed within the limit, nothing reclaimable. Where they are
        // depends on their order, which a kill in the middle of a move through
        // the scratch area (a file that moves left by less than its size) changes:
        // then the packing may differ from an uninterrupted run's.
        let (want_places, want_shards) = &self.expected[k % RESHARD.len()];
        if places(&self.out) == *want_places {
            ensure!(
                crate::support::ingest::shard_bytes(&self.out) == *want_shards,
                "the shards differ from an uninterrupted run's"
            );
        }
        let limit = barecat::core::size::parse_size(RESHARD[k % RESHARD.len()].0).unwrap();
        let a = Archive::open(&self.out).map_err(|e| e.to_string())?;
        for u in a
            .with_index(|i| i.shard_usage())
            .map_err(|e| e.to_string())?
        {
            ensure!(
                u.logical_end <= limit,
                "shard {} holds {} bytes",
                u.shard,
                u.logical_end
            );
        }
        ensure!(
            a.shard_size_limit().unwrap() == limit,
            "the limit is not stored"
        );
        let v = verify_clean(&self.out, &[])?;
        ensure!(
            v["space"]["reclaimable_bytes"] == 0,
            "holes left: {}",
            v["space"]
        );
        ensure!(
            temporaries(&self.out).is_empty(),
            "left: {:?}",
            temporaries(&self.out)
        );
        py.verify(&self.out)?;
        Ok(())
    }
}

#[test]
fn reshard_killed_at_random_instants_keeps_every_file() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    let mut files = make_tree(&d.join("src"), "tree", 500, 200_000, 11);
    fs::remove_dir_all(d.join("src")).unwrap();
    let template = d.join("template.barecat");
    build(&template, Some(1 << 20), &files);
    let mut w =
        ArchiveWriter::open(&template, WriterOptions::with_mode(CreateMode::Append)).unwrap();
    let gone: Vec<String> = files.keys().step_by(5).cloned().collect();
    for p in gone {
        w.remove_file(&p).unwrap();
        files.remove(&p);
    }
    w.finish().unwrap();
    let template_snap = read_all(&template, &files).unwrap();
    let mut expected = Vec::new();
    let out = d.join("out.barecat");
    for (limit, _) in RESHARD {
        copy_archive(&template, &out);
        let e = run_to_end(
            cmd("barecat-reshard", args!["-q", "-s", limit, &out]),
            &Stdin::Null,
        );
        assert!(e.status.success(), "{}", e.stderr);
        expected.push((places(&out), crate::support::ingest::shard_bytes(&out)));
    }
    let mut sc = Reshard {
        files,
        template,
        template_snap,
        expected,
        out,
    };
    kill_trials(&mut sc, config());
}

// ---------------------------------------------------------------------- upgrade

/// upgrade of a 0.2 archive: killed, the index is the old one, unchanged, or the
/// new one, whole; running it again gives the uninterrupted result.
struct Upgrade {
    files: Files,
    template: PathBuf,
    template_index: Vec<u8>,
    /// Every row of an uninterrupted run's index.
    rows: Vec<String>,
    out: PathBuf,
}

impl Upgrade {
    fn argv(&self, k: usize) -> Vec<OsString> {
        let mut a = args!["-q"];
        if k % 2 == 1 {
            a.push("--no-preserve-backup".into());
        }
        a.push(s(&self.out));
        a
    }

    fn backup(&self) -> PathBuf {
        self.out.with_file_name("out.barecat.old")
    }
}

impl Scenario for Upgrade {
    fn name(&self) -> String {
        "barecat-upgrade".into()
    }

    fn output(&self) -> PathBuf {
        self.out.clone()
    }

    /// Even trials keep the backup, odd ones do not.
    fn variants(&self) -> usize {
        2
    }

    fn prepare(&mut self, _k: usize) {
        Layout::remove(&self.out).unwrap();
        let _ = fs::remove_file(self.backup());
        for t in temporaries(&self.out) {
            Layout::remove(self.out.with_file_name(t)).unwrap();
        }
        fs::copy(&self.template, &self.out).unwrap();
        fs::copy(
            Layout::current(&self.template).shard_path(0),
            Layout::current(&self.out).shard_path(0),
        )
        .unwrap();
    }

    fn command(&self, k: usize) -> (Command, Stdin) {
        (cmd("barecat-upgrade", self.argv(k)), Stdin::Null)
    }

    fn after_kill(&mut self, k: usize, _e: &Ended, py: &mut PyVerifier) -> Result<String, String> {
        let index = fs::read(&self.out).map_err(|e| format!("no index: {e}"))?;
        if let Ok(b) = fs::read(self.backup()) {
            ensure!(b == self.template_index, "the backup is not the old index");
        }
        if index == self.template_index {
            return Ok(if temporaries(&self.out).is_empty() {
                "old index, nothing started".into()
            } else {
                "old index, the new one being built".into()
            });
        }
        ensure!(
            crate::support::ingest::rows(&self.out) == self.rows,
            "neither the old index nor the whole new one"
        );
        read_all(&self.out, &self.files)?;
        verify_clean(&self.out, &[])?;
        py.verify(&self.out)?;
        ensure!(
            k % 2 == 1 || self.backup().is_file(),
            "upgraded, but the backup is missing"
        );
        Ok("new index in place".into())
    }

    fn fix_and_compare(&mut self, k: usize, py: &mut PyVerifier) -> Check {
        let e = run_to_end(cmd("barecat-upgrade", self.argv(k)), &Stdin::Null);
        ensure!(e.status.success(), "upgrade failed: {}", e.stderr.trim());
        ensure!(
            crate::support::ingest::rows(&self.out) == self.rows,
            "the index differs"
        );
        read_all(&self.out, &self.files)?;
        verify_clean(&self.out, &[])?;
        py.verify(&self.out)?;
        ensure!(
            temporaries(&self.out).is_empty(),
            "left: {:?}",
            temporaries(&self.out)
        );
        if k.is_multiple_of(2) {
            ensure!(
                fs::read(self.backup()).ok() == Some(self.template_index.clone()),
                "the backup is not the old index"
            );
        }
        Ok(())
    }
}

#[test]
fn upgrade_killed_at_random_instants_leaves_the_old_or_the_new_index() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    let mut files: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    let sizes = crate::support::pseudo_random(5, 4000);
    for (i, &n) in sizes.iter().enumerate() {
        let top = if i % 3 == 0 { "a/sub" } else { "b" };
        files.insert(
            format!("{top}/d{}/f{i:05}.bin", i % 40),
            crate::support::pseudo_random(i as u64, n as usize),
        );
    }
    let template = d.join("template.barecat");
    let files = crate::support::v02::make(&template, false, &files, Some(("a/sub", "b/moved")));
    let template_index = fs::read(&template).unwrap();
    let out = d.join("out.barecat");
    let mut sc = Upgrade {
        files,
        template,
        template_index,
        rows: Vec::new(),
        out: out.clone(),
    };
    sc.prepare(0);
    let e = run_to_end(cmd("barecat-upgrade", args!["-q", &out]), &Stdin::Null);
    assert!(e.status.success(), "{}", e.stderr);
    sc.rows = crate::support::ingest::rows(&out);
    kill_trials(&mut sc, config());
}

// ---------------------------------------------------------------------- wrap

/// from-tar --wrap: the index is built under a temporary name and put in place
/// whole: killed, there is no output (new), the old one (-f), or the new one; the
/// tar never changes.
struct Wrap {
    tar: PathBuf,
    tar_bytes: Vec<u8>,
    files: Files,
    old: PathBuf,
    old_rows: Vec<String>,
    new_rows: Vec<String>,
    out: PathBuf,
}

impl Scenario for Wrap {
    fn name(&self) -> String {
        "barecat-from-tar --wrap".into()
    }

    fn output(&self) -> PathBuf {
        self.out.clone()
    }

    /// Even trials make a new output, odd ones replace an old one with -f.
    fn variants(&self) -> usize {
        2
    }

    fn prepare(&mut self, k: usize) {
        Layout::remove(&self.out).unwrap();
        if k % 2 == 1 {
            copy_archive(&self.old, &self.out);
        }
    }

    fn command(&self, _k: usize) -> (Command, Stdin) {
        (
            cmd(
                "barecat-from-tar",
                args![
                    "-q",
                    "-f",
                    "--wrap",
                    "--commit-interval-ms",
                    "5",
                    &self.tar,
                    &self.out
                ],
            ),
            Stdin::Null,
        )
    }

    fn after_kill(&mut self, k: usize, _e: &Ended, py: &mut PyVerifier) -> Result<String, String> {
        ensure!(
            fs::read(&self.tar).unwrap() == self.tar_bytes,
            "the tar changed"
        );
        match state(&self.out) {
            State::NoArchive => {
                ensure!(
                    Layout::current(&self.out).shard_files().unwrap().is_empty() || k % 2 == 1,
                    "shards without an index"
                );
                return Ok("no output yet".into());
            }
            State::NoSchema => return Err("an index without tables".into()),
            State::Archive => {}
        }
        let rows = crate::support::ingest::rows(&self.out);
        if k % 2 == 1 && rows == self.old_rows {
            verify_clean(&self.out, &[])?;
            return Ok("the old output, not replaced yet".into());
        }
        ensure!(
            rows == self.new_rows,
            "neither the old output nor the whole new one"
        );
        read_all(&self.out, &self.files)?;
        verify_clean(&self.out, &[])?;
        py.verify(&self.out)?;
        Ok("the new output in place".into())
    }

    fn fix_and_compare(&mut self, k: usize, py: &mut PyVerifier) -> Check {
        let e = run_to_end(self.command(k).0, &Stdin::Null);
        ensure!(e.status.success(), "wrap failed: {}", e.stderr.trim());
        ensure!(
            crate::support::ingest::rows(&self.out) == self.new_rows,
            "the index differs"
        );
        read_all(&self.out, &self.files)?;
        verify_clean(&self.out, &[])?;
        py.verify(&self.out)?;
        ensure!(
            temporaries(&self.out).is_empty(),
            "left: {:?}",
            temporaries(&self.out)
        );
        Ok(())
    }
}

#[test]
fn wrap_killed_at_random_instants_leaves_no_output_the_old_or_the_new_one() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    let files = make_tree(&d.join("src"), "tree", 3000, 100_000, 12);
    fs::remove_dir_all(d.join("src")).unwrap();
    let tar = d.join("in.tar");
    fs::write(&tar, make_tar(&files)).unwrap();
    let old = d.join("old.barecat");
    let old_files: Files = files
        .iter()
        .take(50)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    build(&old, None, &old_files);
    let out = d.join("out.barecat");
    let e = run_to_end(
        cmd("barecat-from-tar", args!["-q", "--wrap", &tar, &out]),
        &Stdin::Null,
    );
    assert!(e.status.success(), "{}", e.stderr);
    let new_rows = crate::support::ingest::rows(&out);
    let mut sc = Wrap {
        tar_bytes: fs::read(&tar).unwrap(),
        tar,
        files,
        old_rows: crate::support::ingest::rows(&old),
        old,
        new_rows,
        out,
    };
    kill_trials(&mut sc, config());
}
