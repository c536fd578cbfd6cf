//! `barecat-defrag`: full, quick and dry-run on archives with holes from deletions,
//! files larger than the shard limit, and interruption at many points.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::maint::*;
use crate::support::*;
use barecat::{Archive, Layout};

/// An archive of `n` files over several shards, with every third file and a few
/// others deleted (holes in every shard, the tail of the last one cut).
fn holey(dir: &Path, name: &str, n: usize, max: usize, limit: u64) -> PathBuf {
    let p = dir.join(name);
    let files = sample_files("data", n, max, 11);
    build(&p, Some(limit), &files);
    let mut w = open_append(&p);
    for (i, (path, _)) in files.iter().enumerate() {
        if i % 3 == 1 || i == 2 || i == n / 2 {
            w.remove_file(path).unwrap();
        }
    }
    w.finish().unwrap();
    p
}

fn copy_archive(from: &Path, to: &Path) {
    let _ = Layout::remove(to);
    fs::copy(from, to).unwrap();
    for s in Layout::current(from).shard_files().unwrap() {
        fs::copy(&s.path, Layout::current(to).shard_path(s.number)).unwrap();
    }
}

/// Files packed back to back in every shard, in the old address order.
fn assert_packed(p: &Path, before: &[(String, u64, u64, u64)], limit: u64) {
    let after = placement(p);
    let order_before: Vec<&String> = before.iter().map(|x| &x.0).collect();
    let order_after: Vec<&String> = after.iter().map(|x| &x.0).collect();
    assert_eq!(order_before, order_after, "address order changed");
    let mut expect = (0u64, 0u64);
    for (path, shard, offset, size) in &after {
        if *size > 0 && expect.1 > 0 && expect.1 + size > limit {
            expect = (expect.0 + 1, 0);
        }
        if *size > 0 {
            assert_eq!((*shard, *offset), expect, "{path} not packed");
        }
        expect.1 += size;
    }
    assert_eq!(physical(p), after.iter().map(|x| x.3).sum::<u64>());
}

fn defrag(args: &[&str], p: &Path) -> std::process::Output {
    let mut all: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
    all.push(p.as_os_str());
    run_t(bin("barecat-defrag"), all)
}

#[test]
fn full_defrag_packs_every_shard_and_keeps_every_file() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let limit = 40_000;
    let p = holey(dir.path(), "h.barecat", 90, 6000, limit);
    let want = contents(&p);
    let before = placement(&p);
    let shards_before = shard_count(&p);
    let (_, v) = verify_json(&p, false);
    let reclaimable = v["space"]["reclaimable_bytes"].as_u64().unwrap();
    assert!(reclaimable > 0);
    for tuning in [&[][..], &["--small-steps"][..]] {
        let q = dir.path().join("copy.barecat");
        copy_archive(&p, &q);
        let o = defrag(tuning, &q);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        assert!(stdout(&o).contains("freed"), "{}", stdout(&o));
        assert_eq!(contents(&q), want);
        assert_packed(&q, &before, limit);
        assert!(shard_count(&q) < shards_before);
        let (c, v) = verify_json(&q, false);
        assert_eq!(c, 0, "{v:#}");
        assert_eq!(v["space"]["reclaimable_bytes"], 0);
        assert_eq!(v["warnings"].as_array().unwrap().len(), 0);
        py_verify(&q);
        // Again: nothing to do.
        let o = defrag(&[], &q);
        assert_eq!(code(&o), 0);
        assert!(stdout(&o).contains("nothing to free"), "{}", stdout(&o));
    }
}

#[test]
fn full_defrag_matches_the_spec_example() {
    // docs/FORMAT.md §8.5 with limit 20: shard 0 = f0 (3) hole (4) f2 (5) f3 (3), plus the
    // deleted f4 at 15..20; shard 1 = f5 f6 f7 f8 and 3 bytes of trailing garbage.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("spec.barecat");
    let sizes = [3usize, 4, 5, 3, 5, 5, 3, 4, 5];
    let files: Vec<(String, Vec<u8>)> = sizes
        .iter()
        .enumerate()
        .map(|(i, &n)| (format!("f{i}"), vec![b'a' + i as u8; n]))
        .collect();
    build(&p, Some(20), &files);
    let mut w = open_append(&p);
    w.remove_file("f1").unwrap();
    w.remove_file("f4").unwrap();
    w.finish().unwrap();
    let s1 = Layout::current(&p).shard_path(1);
    let mut data = fs::read(&s1).unwrap();
    data.extend_from_slice(b"xyz");
    fs::write(&s1, data).unwrap();
    assert_eq!(physical(&p), 20 + 20);
    let o = defrag(&["-n"], &p);
    assert_eq!(code(&o), 0);
    let out = stdout(&o);
    assert!(out.contains("Physical size:       40"), "{out}");
    assert!(out.contains("Logical size:        28"), "{out}");
    assert!(
        out.contains("Freeable space:      12 (4 in holes, 8 trailing)"),
        "{out}"
    );
    assert!(
        out.contains("Shards:              2 now, 2 after a full defrag"),
        "{out}"
    );
    let o = defrag(&[], &p);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let got: Vec<(String, u64, u64)> = placement(&p)
        .into_iter()
        .map(|(path, s, o, _)| (path, s, o))
        .collect();
    let want: Vec<(String, u64, u64)> = [
        ("f0", 0, 0),
        ("f2", 0, 3),
        ("f3", 0, 8),
        ("f5", 0, 11),
        ("f6", 0, 16),
        ("f7", 1, 0),
        ("f8", 1, 4),
    ]
    .iter()
    .map(|(p, s, o)| (p.to_string(), *s, *o))
    .collect();
    assert_eq!(got, want);
    let l = Layout::current(&p);
    assert_eq!(fs::metadata(l.shard_path(0)).unwrap().len(), 19);
    assert_eq!(fs::metadata(l.shard_path(1)).unwrap().len(), 9);
    for (i, &n) in sizes.iter().enumerate() {
        if i != 1 && i != 4 {
            assert_eq!(
                Archive::open(&p).unwrap().read(&format!("f{i}")).unwrap(),
                vec![b'a' + i as u8; n]
            );
        }
    }
}

#[test]
fn quick_defrag_fills_holes_from_the_end() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let p = holey(dir.path(), "q.barecat", 90, 6000, 40_000);
    let want = contents(&p);
    let phys = physical(&p);
    let shards = shard_count(&p);
    let o = defrag(&["--quick"], &p);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(contents(&p), want);
    assert!(physical(&p) < phys);
    assert!(shard_count(&p) <= shards);
    let (c, v) = verify_json(&p, false);
    assert_eq!(c, 0, "{v:#}");
    assert_eq!(v["space"]["trailing_bytes"], 0);
    py_verify(&p);
    // The moved files came from the end and went into holes before them.
    let again = physical(&p);
    let o = defrag(&["--quick", "--time-limit", "10"], &p);
    assert_eq!(code(&o), 0);
    assert!(physical(&p) <= again);
    assert_eq!(contents(&p), want);
}

/// Quick defrag goes through the files from the end in pages of the reverse
/// address-ordered scan; files it moved earlier come up again in later pages and
/// must be left where they went. Pages of 5 files (`--small-steps`) and the default
/// pages must give the same places, the same moves and the same dry-run analysis.
#[test]
fn quick_defrag_in_pages_of_five_places_every_file_as_in_one_page() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let a = holey(dir.path(), "a.barecat", 120, 6000, 40_000);
    let b = dir.path().join("b.barecat");
    copy_archive(&a, &b);
    let dry = |p: &Path| {
        let o = defrag(&["--dry-run"], p);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        stdout(&o).replace(&p.display().to_string(), "ARCHIVE")
    };
    assert_eq!(dry(&a), dry(&b));
    let want = contents(&a);
    // A time limit no run reaches, even on a loaded machine: both must finish.
    let oa = defrag(&["--quick", "--time-limit", "3600", "--json"], &a);
    let ob = defrag(
        &["--quick", "--time-limit", "3600", "--json", "--small-steps"],
        &b,
    );
    assert_eq!(code(&oa), 0, "{}", stderr(&oa));
    assert_eq!(code(&ob), 0, "{}", stderr(&ob));
    let ja: serde_json::Value = serde_json::from_str(&stdout(&oa)).unwrap();
    let jb: serde_json::Value = serde_json::from_str(&stdout(&ob)).unwrap();
    assert!(ja["moved_files"].as_u64().unwrap() > 0, "{ja}");
    for k in [
        "moved_files",
        "moved_bytes",
        "freed_bytes",
        "physical_after",
    ] {
        assert_eq!(ja[k], jb[k], "{k}: {ja} vs {jb}");
    }
    assert_eq!(placement(&a), placement(&b));
    assert_eq!(contents(&b), want);
    let (c, v) = verify_json(&b, false);
    assert_eq!(c, 0, "{v:#}");
}

/// The case the paged scan must get right: the five files after the big hole go
/// into it (one page of `--small-steps`), the next page meets them again at their
/// new places, where they must be passed over (not taken for files that cannot
/// move, which would stop the shard), so that `z` still goes into the 1-byte hole.
#[test]
fn quick_defrag_passes_over_files_it_moved_when_it_meets_them_again() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    for steps in [
        &["--quick", "--time-limit", "3600", "--json"][..],
        &["--quick", "--time-limit", "3600", "--json", "--small-steps"][..],
    ] {
        let p = dir.path().join("m.barecat");
        let _ = Layout::remove(&p);
        let mut files: Vec<(String, Vec<u8>)> = vec![
            ("a".into(), vec![b'a'; 1]),
            ("h1".into(), vec![b'h'; 1]),
            ("z".into(), vec![b'z'; 1]),
            ("h2".into(), vec![b'H'; 10]),
        ];
        for i in 1..=5 {
            files.push((format!("p{i}"), vec![b'0' + i as u8; 2]));
        }
        build(&p, None, &files);
        let mut w = open_append(&p);
        w.remove_file("h1").unwrap();
        w.remove_file("h2").unwrap();
        w.finish().unwrap();
        let o = defrag(steps, &p);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(j["moved_files"], 6, "{steps:?}: {j}");
        let got: Vec<(String, u64)> = placement(&p)
            .into_iter()
            .map(|(path, _, o, _)| (path, o))
            .collect();
        let want: Vec<(String, u64)> = [
            ("a", 0),
            ("z", 1),
            ("p5", 3),
            ("p4", 5),
            ("p3", 7),
            ("p2", 9),
            ("p1", 11),
        ]
        .iter()
        .map(|(p, o)| (p.to_string(), *o))
        .collect();
        assert_eq!(got, want, "{steps:?}");
        assert_eq!(physical(&p), 13);
        for (name, data) in files.iter().filter(|f| !f.0.starts_with('h')) {
            assert_eq!(&Archive::open(&p).unwrap().read(name).unwrap(), data);
        }
    }
}

#[test]
fn quick_defrag_with_no_time_only_cuts_trailing_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let p = holey(dir.path(), "t.barecat", 40, 3000, 30_000);
    let want = contents(&p);
    let n = shard_count(&p) as u64;
    let l = Layout::current(&p);
    let last = l.shard_path(n - 1);
    let mut data = fs::read(&last).unwrap();
    data.extend_from_slice(&[1u8; 777]);
    fs::write(&last, data).unwrap();
    fs::write(l.shard_path(n), b"garbage").unwrap();
    let before = placement(&p);
    let phys = physical(&p);
    let (_, v) = verify_json(&p, false);
    let trailing = v["space"]["trailing_bytes"].as_u64().unwrap();
    assert!(trailing >= 777 + 7);
    let o = defrag(&["--quick", "--max-seconds", "0"], &p);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stdout(&o).contains("time limit reached"), "{}", stdout(&o));
    assert_eq!(placement(&p), before);
    assert_eq!(physical(&p), phys - trailing);
    assert_eq!(shard_count(&p) as u64, n);
    assert_eq!(contents(&p), want);
}

#[test]
fn dry_run_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let p = holey(dir.path(), "d.barecat", 60, 4000, 30_000);
    let snapshot = |p: &Path| -> Vec<Vec<u8>> {
        let mut v = vec![fs::read(p).unwrap()];
        for s in Layout::current(p).shard_files().unwrap() {
            v.push(fs::read(&s.path).unwrap());
        }
        v
    };
    let before = snapshot(&p);
    let o = defrag(&["--dry-run"], &p);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = stdout(&o);
    for key in [
        "Physical size:",
        "Logical size:",
        "Freeable space:",
        "Number of gaps:",
        "Fragmentation ratio:",
        "Utilization:",
        "Gap size distribution:",
        "Gaps by shard:",
    ] {
        assert!(out.contains(key), "{key} missing: {out}");
    }
    assert_eq!(snapshot(&p), before);
    // With --quick or --smart too, --dry-run wins, as in Python barecat.
    for mode in ["--quick", "--smart"] {
        let o = defrag(&["--dry-run", mode], &p);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        assert!(stdout(&o).contains("Freeable space:"));
        assert_eq!(snapshot(&p), before);
    }
}

#[test]
fn nothing_to_do_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("n.barecat");
    build(&p, Some(10_000), &sample_files("x", 20, 2000, 3));
    let mtime = fs::metadata(&p).unwrap().modified().unwrap();
    for args in [&[][..], &["--quick"][..], &["-q"][..]] {
        let o = defrag(args, &p);
        assert_eq!(code(&o), 0);
        if args == ["-q"] {
            assert_eq!(stdout(&o), "");
        } else {
            assert!(stdout(&o).contains("nothing to free"));
        }
    }
    assert_eq!(fs::metadata(&p).unwrap().modified().unwrap(), mtime);
}

#[test]
fn files_larger_than_the_limit_keep_a_shard_of_their_own() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("o.barecat");
    let limit = 10_000u64;
    let mut files = sample_files("s", 12, 3000, 5);
    files.insert(4, ("big/one".into(), pseudo_random(9, 30_000)));
    files.insert(9, ("big/two".into(), pseudo_random(10, 25_000)));
    build(&p, Some(limit), &files);
    let mut w = open_append(&p);
    for (path, _) in files.iter().step_by(3) {
        if !path.starts_with("big") {
            w.remove_file(path).unwrap();
        }
    }
    w.finish().unwrap();
    let want = contents(&p);
    for args in [&[][..], &["--small-steps"][..], &["--quick"][..]] {
        let q = dir.path().join("c.barecat");
        copy_archive(&p, &q);
        let o = defrag(args, &q);
        assert_eq!(code(&o), 0, "{args:?}: {}", stderr(&o));
        assert_eq!(contents(&q), want);
        let after = placement(&q);
        for big in ["big/one", "big/two"] {
            let (_, shard, offset, _) = after.iter().find(|x| x.0 == big).unwrap();
            assert_eq!(*offset, 0);
            assert_eq!(
                after.iter().filter(|x| x.1 == *shard && x.3 > 0).count(),
                1,
                "{big} shares its shard: {after:?}"
            );
        }
        let (c, v) = verify_json(&q, false);
        assert_eq!(c, 0, "{v:#}");
        py_verify(&q);
    }
}

#[test]
fn refuses_damaged_and_symlinked_archives() {
    let dir = tempfile::tempdir().unwrap();
    let p = holey(dir.path(), "bad.barecat", 30, 2000, 20_000);
    let r = placement(&p);
    raw_sql(
        &p,
        &format!(
            "UPDATE files SET offset = {} WHERE path = '{}'",
            r[0].2 + 1,
            r[1].0
        ),
    );
    let o = defrag(&[], &p);
    assert_eq!(code(&o), 1);
    assert_clean_error(&o);
    assert!(stderr(&o).contains("overlap"), "{}", stderr(&o));
    // A symlink-merged archive writes through its links: refused.
    let a = holey(dir.path(), "a.barecat", 20, 2000, 20_000);
    let m = dir.path().join("m.barecat");
    run_ok(
        bin("barecat-merge-symlink"),
        ["-o".as_ref(), m.as_os_str(), a.as_os_str()],
    );
    let before = contents(&a);
    let o = defrag(&[], &m);
    assert_eq!(code(&o), 1);
    assert_clean_error(&o);
    assert!(stderr(&o).contains("symbolic link"), "{}", stderr(&o));
    assert_eq!(contents(&a), before);
    let o = defrag(&[], &dir.path().join("none.barecat"));
    assert_eq!(code(&o), 1);
    assert_clean_error(&o);
}

#[test]
fn python_deletions_then_defrag_then_python_verify() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    let mut tree: Vec<(String, Vec<u8>)> = Vec::new();
    for i in 0..40 {
        tree.push((
            format!("d{}/f{i}.bin", i % 4),
            pseudo_random(i, 500 + 97 * i as usize),
        ));
    }
    let refs: Vec<(&str, &[u8])> = tree
        .iter()
        .map(|(p, d)| (p.as_str(), d.as_slice()))
        .collect();
    write_tree(&src, &refs);
    let p = dir.path().join("py.barecat");
    run_ok_in(
        dir.path(),
        py_barecat(),
        [
            "create".as_ref(),
            "-s".as_ref(),
            "8K".as_ref(),
            p.as_os_str(),
            "src".as_ref(),
        ],
    );
    let victims: Vec<String> = (0..40)
        .filter(|i| i % 4 == 1)
        .map(|i| format!("src/d{}/f{i}.bin", i % 4))
        .collect();
    let mut args = vec!["delete".to_string(), p.display().to_string()];
    args.extend(victims);
    py("pyfs.py", &args);
    let want = contents(&p);
    let o = defrag(&[], &p);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(contents(&p), want);
    py_verify(&p);
    let dump = py_dump(&p);
    assert_eq!(dump["integrity_ok"], true);
    assert_eq!(dump["files"].as_object().unwrap().len(), want.len());
}

/// Run defrag with `args`, kill it after `delay`, and return whether it had
/// finished by itself.
fn run_and_kill(args: &[&str], p: &Path, delay: Duration) -> bool {
    let mut child = Command::new(bin("barecat-defrag"))
        .args(args)
        .arg("-q")
        .arg(p)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while start.elapsed() < delay {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "defrag failed: {status}");
            return true;
        }
        std::thread::sleep(Duration::from_micros(300));
    }
    let _ = child.kill(); // SIGKILL
    let status = child.wait_bounded().unwrap();
    status.success()
}

/// Interrupt defrag at many instants; after each kill every file reads back with
/// the right content, verify finds no problem, and a new run completes the work.
fn kill_loop(mode: &[&str], tuning: &[&str], iterations: u32) {
    let dir = tempfile::tempdir().unwrap();
    let template = holey(dir.path(), "template.barecat", 120, 12_000, 120_000);
    let want: BTreeMap<String, Vec<u8>> = contents(&template);
    let p = dir.path().join("k.barecat");
    let mut args: Vec<&str> = mode.to_vec();
    args.extend_from_slice(tuning);
    args.extend_from_slice(&["--step-delay-ms", "1"]);
    // How long an uninterrupted run takes.
    copy_archive(&template, &p);
    let t0 = Instant::now();
    assert!(run_and_kill(&args, &p, Duration::from_secs(100)));
    let full = t0.elapsed();
    assert_eq!(contents(&p), want);
    let mut killed = 0;
    // The calibration run may have been slowed down by a busy machine: when runs
    // finish before their kill, the later kills come earlier (a scale that shrinks),
    // and a few more rounds are made, so that at least half the rounds interrupt a
    // run however the machine's speed varies.
    let mut scale = 1.0;
    let mut rounds = 0;
    for k in 0..iterations * 3 {
        if k >= iterations && killed >= iterations / 2 {
            break;
        }
        rounds += 1;
        copy_archive(&template, &p);
        // Spread the kills over the whole run, with a pseudo-random jitter.
        let jitter = pseudo_random(k as u64, 1)[0] as f64 / 255.0;
        let frac = ((k % iterations) as f64 + jitter) / iterations as f64;
        let delay = full.mul_f64(frac * 1.05 * scale);
        let finished = run_and_kill(&args, &p, delay);
        killed += !finished as u32;
        if finished {
            scale *= 0.7;
        }
        assert_eq!(
            contents(&p),
            want,
            "after a kill at {delay:?} ({mode:?} {tuning:?})"
        );
        let (c, v) = verify_json(&p, false);
        assert_eq!(c, 0, "after a kill at {delay:?}: {v:#}");
        // A new run finishes the job.
        let o = run_t(
            bin("barecat-defrag"),
            mode.iter()
                .map(|a| a.as_ref())
                .chain([p.as_os_str()])
                .collect::<Vec<&std::ffi::OsStr>>(),
        );
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        assert_eq!(contents(&p), want);
        if mode.is_empty() {
            let (_, v) = verify_json(&p, false);
            assert_eq!(v["space"]["reclaimable_bytes"], 0, "{v:#}");
        }
    }
    eprintln!("{mode:?} {tuning:?}: a run takes {full:?}; {killed}/{rounds} interrupted");
    assert!(
        killed >= iterations / 2,
        "only {killed} runs were interrupted"
    );
    py_verify(&p);
}

/// End defrag abruptly after step 1, 1 + stride, … (every copy, sync, commit,
/// truncation and removal is a step) until a run completes; check the archive
/// after each.
fn crash_at_every_step(mode: &[&str], stride: usize) {
    let dir = tempfile::tempdir().unwrap();
    let template = holey(dir.path(), "template.barecat", 60, 8_000, 50_000);
    let want = contents(&template);
    let p = dir.path().join("c.barecat");
    let mut crashes = 0;
    for n in (1..).step_by(stride) {
        copy_archive(&template, &p);
        let steps = n.to_string();
        let mut args: Vec<&str> = mode.to_vec();
        args.extend_from_slice(&["--small-steps", "--crash-after-steps", &steps]);
        let o = defrag(&args, &p);
        assert_eq!(contents(&p), want, "after a crash at step {n} ({mode:?})");
        let (c, v) = verify_json(&p, false);
        assert_eq!(c, 0, "after a crash at step {n}: {v:#}");
        if code(&o) == 0 {
            break;
        }
        assert_eq!(code(&o), 86, "{}", stderr(&o));
        crashes += 1;
        let o = defrag(mode, &p);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        assert_eq!(contents(&p), want);
        assert!(crashes < 1000);
    }
    eprintln!("{mode:?}: {crashes} crash points checked");
    assert!(crashes > 20, "only {crashes} steps");
}

#[test]
fn full_defrag_survives_a_crash_at_every_step() {
    crash_at_every_step(&[], 2);
}

#[test]
fn quick_defrag_survives_a_crash_at_every_step() {
    crash_at_every_step(&["--quick"], 1);
}

#[test]
fn full_defrag_survives_kills_at_any_point() {
    need!("barecat");
    kill_loop(&[], &["--small-steps"], 14);
    kill_loop(&[], &[], 6);
}

#[test]
fn quick_defrag_survives_kills_at_any_point() {
    need!("barecat");
    kill_loop(&["--quick"], &["--small-steps"], 12);
}
