//! Fork safety of the Rust API: a process that forks while other threads read an
//! `Archive` (local and remote), list, glob and walk it, gather `Records` and open
//! and close archives, gets children that work. Every child reads through the
//! objects it inherited and through ones it opens itself, and must exit within a
//! bound; a child that does not is dumped (its threads' stacks, with gdb when
//! present) and killed, and the test fails.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use barecat::core::glob::GlobOptions;
use barecat::records::{DatasetOptions, RecordWriter, Records};
use barecat::{Archive, ArchiveWriter, CreateMode, Meta, WriterOptions};

use crate::support::process::wait_pid_within;
use crate::support::remote::Server;

/// How long a child may take before it counts as hung.
const CHILD_BOUND: Duration = Duration::from_secs(60);

fn content(i: u64) -> Vec<u8> {
    crate::support::pseudo_random(i, 64 + (i as usize * 37) % 3000)
}

fn make_archive(path: &Path, n: u64) {
    let mut w = ArchiveWriter::open(path, WriterOptions::with_mode(CreateMode::New)).unwrap();
    for i in 0..n {
        let p = format!("d{}/e{}/f{i:05}.bin", i % 7, i % 3);
        w.add_file(&p, Meta::default(), &content(i), None).unwrap();
    }
    w.finish().unwrap();
}

fn make_records(dir: &Path, n: u64) {
    let o = DatasetOptions {
        chunk_records: 100,
        ..Default::default()
    };
    let mut w = RecordWriter::create(dir, &o, false).unwrap();
    for i in 0..n {
        w.append(&content(i)).unwrap();
    }
    w.finish().unwrap();
}

fn path_of(i: u64) -> String {
    format!("d{}/e{}/f{i:05}.bin", i % 7, i % 3)
}

/// What a child does: read through the inherited objects and fresh ones. Returns
/// a description of the first thing that went wrong.
fn child_work(
    local: &Archive,
    remote: &Archive,
    records: &Records,
    archive_path: &Path,
    url: &str,
    n: u64,
    seed: u64,
) -> Result<(), String> {
    let check = |a: &Archive, i: u64, what: &str| -> Result<(), String> {
        let got = a
            .read(&path_of(i))
            .map_err(|e| format!("{what} read {i}: {e}"))?;
        if got != content(i) {
            return Err(format!("{what} read {i}: wrong bytes"));
        }
        Ok(())
    };
    for k in 0..5 {
        let i = (seed * 31 + k * 97) % n;
        check(local, i, "inherited local")?;
        check(remote, i, "inherited remote")?;
        let r = records
            .get(i)
            .map_err(|e| format!("inherited records get {i}: {e}"))?;
        if *r != content(i)[..] {
            return Err(format!("inherited records get {i}: wrong bytes"));
        }
    }
    let listed = local.listdir("d1").map_err(|e| format!("listdir: {e}"))?;
    if listed.dirs.len() != 3 {
        return Err(format!("listdir d1: {} dirs", listed.dirs.len()));
    }
    let fresh = Archive::open(archive_path).map_err(|e| format!("fresh open: {e}"))?;
    check(&fresh, seed % n, "fresh local")?;
    let fresh_remote = Archive::open(url).map_err(|e| format!("fresh remote open: {e}"))?;
    check(&fresh_remote, (seed + 1) % n, "fresh remote")?;
    let idx: Vec<u64> = (0..64).map(|k| (seed + k * 13) % n).collect();
    let b = records.gather(&idx).map_err(|e| format!("gather: {e}"))?;
    for (k, &i) in idx.iter().enumerate() {
        if b.get(k) != &content(i)[..] {
            return Err(format!("gather {i}: wrong bytes"));
        }
    }
    Ok(())
}

#[test]
fn children_forked_while_threads_use_archives_and_records_work() {
    if !crate::support::on_path("python3") {
        eprintln!("skipped: python3 (the tests' HTTP server) is not installed");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let n = 600;
    let served = tmp.path().join("served");
    std::fs::create_dir(&served).unwrap();
    let archive_path = served.join("data.barecat");
    make_archive(&archive_path, n);
    let rec_dir = tmp.path().join("records");
    make_records(&rec_dir, n);
    let server = Server::http(&served, &[]);
    let url = format!("http://127.0.0.1:{}/data.barecat", server.port);

    let local = Arc::new(Archive::open(&archive_path).unwrap());
    let remote = Arc::new(Archive::open(&url).unwrap());
    let records = Arc::new(Records::open(&rec_dir).unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let work = Arc::new(AtomicU64::new(0));

    let mut threads = Vec::new();
    for t in 0..4u64 {
        let (local, remote, records) = (local.clone(), remote.clone(), records.clone());
        let (stop, work) = (stop.clone(), work.clone());
        let archive_path = archive_path.clone();
        threads.push(std::thread::spawn(move || {
            let mut i = t;
            while !stop.load(Ordering::Relaxed) {
                i = i
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407)
                    % n;
                match t {
                    0 => {
                        assert_eq!(local.read(&path_of(i)).unwrap(), content(i));
                        let _ = local.listdir("d3").unwrap();
                    }
                    1 => {
                        let g = local.glob("d2/**/*.bin", GlobOptions::default()).unwrap();
                        assert!(g.count() > 0);
                        let idx: Vec<u64> = (0..200).map(|k| (i + k) % n).collect();
                        records.gather(&idx).unwrap();
                    }
                    2 => {
                        assert_eq!(remote.read(&path_of(i)).unwrap(), content(i));
                    }
                    _ => {
                        // Opening and closing archives: SQLite's VFS file table.
                        let a = Archive::open(&archive_path).unwrap();
                        assert_eq!(a.read(&path_of(i)).unwrap(), content(i));
                        let w = a.walk("", Default::default()).unwrap();
                        assert!(w.count() > 0);
                    }
                }
                work.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }

    // Wait until the threads are busy, then fork at pseudo-random instants.
    let start = Instant::now();
    while work.load(Ordering::Relaxed) < 20 {
        if let Some(t) = threads.iter().position(|t| t.is_finished()) {
            let r = threads.swap_remove(t).join();
            panic!("a reading thread of the parent ended: {r:?}");
        }
        assert!(
            start.elapsed() < CHILD_BOUND,
            "the reading threads made no progress"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let forks: u64 = std::env::var("BARECAT_FORKS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let mut failures = Vec::new();
    for k in 0..forks {
        std::thread::sleep(Duration::from_micros((k * 7919) % 3000));
        // SAFETY: the child only runs `child_work` and leaves with `_exit`; that it
        // can do so although other threads were running is what is tested.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                child_work(&local, &remote, &records, &archive_path, &url, n, k)
            }));
            let code = match r {
                Ok(Ok(())) => 0,
                Ok(Err(msg)) => {
                    let _ = std::fs::write(tmp.path().join(format!("child-{k}.err")), msg);
                    1
                }
                Err(_) => 2,
            };
            // SAFETY: leave without running the parent's destructors or the test
            // harness's exit code.
            unsafe { libc::_exit(code) };
        }
        assert!(pid > 0, "fork failed: {}", std::io::Error::last_os_error());
        match wait_pid_within(pid, CHILD_BOUND) {
            Ok(0) => {}
            Ok(code) => {
                let msg = std::fs::read_to_string(tmp.path().join(format!("child-{k}.err")))
                    .unwrap_or_else(|_| "a panic".into());
                failures.push(format!("fork {k}: child exited {code}: {msg}"));
            }
            Err(e) => failures.push(format!("fork {k}: {e}")),
        }
        if failures.len() >= 3 {
            break;
        }
    }
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_writer_inherited_by_a_child_refuses_and_is_left_to_the_parent() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("w.barecat");
    let mut w = ArchiveWriter::open(&path, WriterOptions::with_mode(CreateMode::New)).unwrap();
    w.add_file("kept.txt", Meta::default(), b"parent", None)
        .unwrap();
    // SAFETY: the child only tries the writer and leaves with `_exit` or by
    // dropping it (which must not touch the parent's transaction).
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let refused = w
            .add_file("child.txt", Meta::default(), b"x", None)
            .is_err()
            && w.commit().is_err();
        drop(w); // must leave the parent's open batch alone
        unsafe { libc::_exit(if refused { 0 } else { 1 }) };
    }
    assert_eq!(
        wait_pid_within(pid, CHILD_BOUND),
        Ok(0),
        "the child's writer did not refuse"
    );
    w.add_file("after.txt", Meta::default(), b"more", None)
        .unwrap();
    w.finish().unwrap();
    let a = Archive::open(&path).unwrap();
    assert_eq!(a.read("kept.txt").unwrap(), b"parent");
    assert_eq!(a.read("after.txt").unwrap(), b"more");
    assert!(a.read("child.txt").is_err());
}
