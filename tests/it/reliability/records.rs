//! Crash consistency of record datasets: `barecat-records append`, `modify`,
//! `delete` and `rebalance` are killed with SIGKILL at random instants. After every
//! kill the dataset opens, verify finds no problem, and its content is exactly the
//! state after one of the commits the command made, never older than the last
//! commit it reported (so every write that returned before the kill is there, with
//! its bytes); a writer opened afterwards finishes what the kill left, and the
//! content stays the same.
//!
//! `BARECAT_CRASH_TRIALS` and `BARECAT_CRASH_SEED` work as in reliability_crash.rs.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::support::harness::*;
use barecat::core::progress::Progress;
use barecat::records::{RecordWriter, Records};

use crate::support::pseudo_random;

fn rec(seed: u64) -> Vec<u8> {
    let len = 100 + (seed * 7919 % 1900) as usize;
    pseudo_random(seed, len)
}

fn framed(records: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for r in records {
        out.extend_from_slice(&(r.len() as u64).to_le_bytes());
        out.extend_from_slice(r);
    }
    out
}

fn copy_dir(from: &Path, to: &Path) {
    let _ = std::fs::remove_dir_all(to);
    std::fs::create_dir_all(to.join("chunk")).unwrap();
    for sub in ["", "chunk"] {
        for e in std::fs::read_dir(from.join(sub)).unwrap().flatten() {
            if e.file_type().unwrap().is_file() {
                std::fs::copy(e.path(), to.join(sub).join(e.file_name())).unwrap();
            }
        }
    }
}

fn contents(dir: &Path) -> Result<Vec<Vec<u8>>, String> {
    let r = Records::open(dir).map_err(|e| e.to_string())?;
    (0..r.len())
        .map(|i| {
            r.get_checked(i)
                .map(|x| x.to_vec())
                .map_err(|e| e.to_string())
        })
        .collect()
}

/// One command under test: the states after each of its commits (index k is the
/// state after k commits) and how to run it.
struct Case {
    name: &'static str,
    args: Vec<OsString>,
    stdin: Stdin,
    states: Vec<Vec<Vec<u8>>>,
    /// Operations per commit (the `committed K` lines count operations).
    per_commit: u64,
}

fn template(dir: &Path, n: u64) -> Vec<Vec<u8>> {
    let recs: Vec<Vec<u8>> = (0..n).map(rec).collect();
    let f = dir.with_extension("framed");
    std::fs::write(&f, framed(&recs)).unwrap();
    let out = run_to_end(
        cmd(
            "barecat-records",
            args!["create", dir, "--framed", &f, "--chunk-size", "150", "-q"],
        ),
        &Stdin::Null,
    );
    assert!(out.status.success(), "{}", out.stderr);
    recs
}

fn check_after_kill(case: &Case, dir: &Path, e: &Ended, trial: &str) {
    let printed = String::from_utf8_lossy(&e.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("committed ")?.parse::<u64>().ok())
        .max()
        .unwrap_or(0);
    let at_least = (printed / case.per_commit) as usize;
    let got = contents(dir).unwrap_or_else(|err| panic!("{trial}: does not read: {err}"));
    let k = case
        .states
        .iter()
        .position(|s| *s == got)
        .unwrap_or_else(|| {
            panic!(
                "{trial}: the content ({} records) is not the state after any commit",
                got.len()
            )
        });
    assert!(
        k >= at_least || e.finished && k + 1 == case.states.len(),
        "{trial}: state after {k} commits, but {at_least} were reported"
    );
    let rep = barecat::records::verify::verify(dir, &Progress::hidden()).unwrap();
    assert!(rep.ok, "{trial}: verify: {:?}", rep.problems);
    // The next writer finishes what the kill left; nothing changes.
    RecordWriter::open(dir, 1).unwrap().finish().unwrap();
    assert_eq!(
        contents(dir).unwrap(),
        got,
        "{trial}: changed by the next writer"
    );
    let rep = barecat::records::verify::verify(dir, &Progress::hidden()).unwrap();
    assert!(rep.ok && rep.warnings.is_empty(), "{trial}: {rep:?}");
}

fn trials(case: Case, template_dir: &Path, work: &Path) {
    let cfg = config();
    let mut rng = Rng::new(cfg.seed);
    let mut full = cmd("barecat-records", &case.args);
    copy_dir(template_dir, work);
    let run = run_to_end(
        std::mem::replace(&mut full, Command::new("true")),
        &case.stdin,
    );
    assert!(run.status.success(), "{}: {}", case.name, run.stderr);
    assert_eq!(
        contents(work).unwrap(),
        *case.states.last().unwrap(),
        "{}: an uninterrupted run",
        case.name
    );
    let total = run.elapsed;
    let mut killed = 0;
    for t in 0..cfg.trials {
        copy_dir(template_dir, work);
        let delay = total.mul_f64(rng.unit() * 1.1);
        let e = run_and_kill(cmd("barecat-records", &case.args), &case.stdin, delay);
        killed += !e.finished as usize;
        let trial = format!(
            "{} trial {t} (kill after {delay:?} of {total:?}; BARECAT_CRASH_SEED={})",
            case.name, cfg.seed
        );
        check_after_kill(&case, work, &e, &trial);
    }
    eprintln!(
        "{}: {} trials, {killed} killed before the end, run {total:?}",
        case.name, cfg.trials
    );
}

use std::process::Command;

fn setup() -> (tempfile::TempDir, PathBuf, Vec<Vec<u8>>) {
    let t = tempfile::tempdir().unwrap();
    let tpl = t.path().join("template");
    let recs = template(&tpl, 3000);
    (t, tpl, recs)
}

#[test]
fn append_killed_at_random_instants_keeps_every_commit() {
    let (t, tpl, base) = setup();
    let new: Vec<Vec<u8>> = (0..6000).map(|i| rec(100_000 + i)).collect();
    let input = t.path().join("new.framed");
    std::fs::write(&input, framed(&new)).unwrap();
    let per = 400u64;
    let mut states = Vec::new();
    for k in 0..=(new.len() as u64).div_ceil(per) {
        let n = ((k * per) as usize).min(new.len());
        let mut s = base.clone();
        s.extend_from_slice(&new[..n]);
        states.push(s);
    }
    let work = t.path().join("work");
    let case = Case {
        name: "append",
        args: args![
            "append",
            &work,
            "--framed",
            &input,
            "-j",
            "2",
            "--commit-every",
            per.to_string(),
            "--print-commits"
        ],
        stdin: Stdin::Null,
        states,
        per_commit: per,
    };
    trials(case, &tpl, &work);
}

#[test]
fn modify_killed_at_random_instants_keeps_every_commit() {
    let (t, tpl, base) = setup();
    let per = 25u64;
    let mut args = args!["modify", t.path().join("work")];
    let mut states = vec![base.clone()];
    let mut cur = base.clone();
    for k in 0..400u64 {
        let i = (k * 2654435761) % base.len() as u64;
        let data = rec(500_000 + k);
        let f = t.path().join(format!("m{k}"));
        std::fs::write(&f, &data).unwrap();
        args.push(i.to_string().into());
        args.push(f.into());
        cur[i as usize] = data;
        if (k + 1).is_multiple_of(per) {
            states.push(cur.clone());
        }
    }
    args.extend(args!["--commit-every", per.to_string(), "--print-commits"]);
    let work = t.path().join("work");
    let case = Case {
        name: "modify",
        args,
        stdin: Stdin::Null,
        states,
        per_commit: per,
    };
    trials(case, &tpl, &work);
}

#[test]
fn delete_killed_at_random_instants_keeps_every_commit() {
    let (t, tpl, base) = setup();
    let per = 40u64;
    let mut idx: Vec<u64> = (0..1500u64).map(|k| (k * 2654435761) % 3000).collect();
    idx.sort_unstable();
    idx.dedup();
    let mut states = vec![base.clone()];
    let mut cur = base.clone();
    for (k, &i) in idx.iter().rev().enumerate() {
        cur.swap_remove(i as usize);
        if (k as u64 + 1).is_multiple_of(per) || k + 1 == idx.len() {
            states.push(cur.clone());
        }
    }
    let work = t.path().join("work");
    let mut args = args!["delete", &work];
    args.extend(idx.iter().map(|i| OsString::from(i.to_string())));
    args.extend(args![
        "--commit-every",
        per.to_string(),
        "--print-commits",
        "-q"
    ]);
    let case = Case {
        name: "delete",
        args,
        stdin: Stdin::Null,
        states,
        per_commit: per,
    };
    trials(case, &tpl, &work);
}

#[test]
fn rebalance_killed_at_random_instants_loses_nothing() {
    let (t, tpl, mut base) = setup();
    // Garbage to reclaim: modified and deleted records.
    let mut w = RecordWriter::open(&tpl, 1).unwrap();
    for i in (0..3000u64).step_by(4) {
        let d = rec(900_000 + i);
        w.modify(i, &d).unwrap();
        base[i as usize] = d;
    }
    for i in (0..900u64).rev().step_by(3) {
        w.delete(i).unwrap();
        base.swap_remove(i as usize);
    }
    w.finish().unwrap();
    assert_eq!(contents(&tpl).unwrap(), base);
    let work = t.path().join("work");
    let case = Case {
        name: "rebalance",
        args: args!["rebalance", &work, "-q"],
        stdin: Stdin::Null,
        states: vec![base],
        per_commit: 1,
    };
    trials(case, &tpl, &work);
    let _ = Duration::ZERO;
}
