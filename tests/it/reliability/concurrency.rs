//! Readers running while writers append, delete and defragment: a read returns the
//! file's bytes or an error, never wrong bytes; a reader with shards memory-mapped
//! is never killed by a truncation (SIGBUS).
//!
//! One writer thread loops over appends (`barecat-create -a`), deletions (the
//! library) and defragmentations (`barecat-defrag --quick` and full), while reader
//! threads read random files of every generation through the library (`read`,
//! `read_range`, `map_verified`) and through the commands (`barecat-cat`,
//! `barecat-extract`), comparing every byte with what was stored.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::*;
use barecat::{Archive, ArchiveWriter, CreateMode, Error, Meta, WriterOptions};

/// Content of the file with key `k` (a pure function: every generation of the
/// archive stores the same bytes under the same path).
fn content(k: u64) -> Vec<u8> {
    let size = (k.wrapping_mul(2654435761) % 9000) as usize;
    pseudo_random(k, size)
}

fn path_of(k: u64) -> String {
    format!("g{}/d{}/f{k:06}.bin", k / 1000, k % 7)
}

/// A small deterministic generator for the readers' choices.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[derive(Default)]
struct Tally {
    ok: AtomicU64,
    errors: AtomicU64,
    wrong: AtomicU64,
}

impl Tally {
    fn check(&self, what: &str, k: u64, got: Result<Vec<u8>, String>, want: &[u8]) {
        match got {
            Ok(d) if d == want => {
                self.ok.fetch_add(1, Ordering::Relaxed);
            }
            Ok(d) => {
                self.wrong.fetch_add(1, Ordering::Relaxed);
                eprintln!(
                    "WRONG BYTES from {what} for {}: {} bytes, expected {}",
                    path_of(k),
                    d.len(),
                    want.len()
                );
            }
            Err(e) => {
                if self.errors.fetch_add(1, Ordering::Relaxed) < 5 {
                    eprintln!("error from {what} for {}: {}", path_of(k), e.trim());
                }
            }
        }
    }
}

/// Write generation `gen` (keys gen*1000 .. gen*1000+n) as a tree below `root`.
fn write_generation(root: &Path, gen: u64, n: u64) -> PathBuf {
    let dir = root.join(format!("src{gen}"));
    for k in gen * 1000..gen * 1000 + n {
        let p = dir.join(path_of(k));
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, content(k)).unwrap();
    }
    dir
}

fn run_quiet(program: PathBuf, args: &[&std::ffi::OsStr]) -> std::process::Output {
    Command::new(&program)
        .args(args)
        .output_bounded()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()))
}

#[test]
fn readers_never_get_wrong_bytes_while_writers_append_delete_and_defrag() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let arch = dir.path().join("c.barecat");
    let gens = 6u64;
    let per_gen = 300u64;
    let srcs: Vec<PathBuf> = (0..gens)
        .map(|g| write_generation(dir.path(), g, per_gen))
        .collect();
    // Generation 0 to start with, in many small shards.
    let o = run_quiet(
        bin("barecat-create"),
        &[
            "-q".as_ref(),
            "-s".as_ref(),
            "64K".as_ref(),
            "-C".as_ref(),
            srcs[0].as_os_str(),
            arch.as_os_str(),
            "g0".as_ref(),
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    let stop = Arc::new(AtomicBool::new(false));
    let tally = Arc::new(Tally::default());
    let archive = Arc::new(Archive::open(&arch).unwrap());

    std::thread::scope(|s| {
        // The writer: per generation, append it, delete a third of the previous
        // one, then defragment (quick, then full every other round).
        let writer = s.spawn(|| {
            let mut rounds = 0;
            for g in 1..gens {
                let o = run_quiet(
                    bin("barecat-create"),
                    &[
                        "-q".as_ref(),
                        "-a".as_ref(),
                        "-C".as_ref(),
                        srcs[g as usize].as_os_str(),
                        arch.as_os_str(),
                        format!("g{g}").as_ref(),
                    ],
                );
                assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
                let mut w =
                    ArchiveWriter::open(&arch, WriterOptions::with_mode(CreateMode::Append))
                        .unwrap();
                for k in ((g - 1) * 1000..(g - 1) * 1000 + per_gen).step_by(3) {
                    match w.remove_file(&path_of(k)) {
                        Ok(_) | Err(Error::NotFound(_)) => {}
                        Err(e) => panic!("{e}"),
                    }
                }
                w.finish().unwrap();
                let mut args: Vec<&std::ffi::OsStr> = vec!["-q".as_ref()];
                if g % 2 == 1 {
                    for a in ["--quick", "--time-limit", "2"] {
                        args.push(std::ffi::OsStr::new(a));
                    }
                }
                args.push(arch.as_os_str());
                let o = run_quiet(bin("barecat-defrag"), &args);
                assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
                rounds += 1;
            }
            rounds
        });

        // Library readers: whole files, ranges, and memory-mapped views.
        for t in 0..2u64 {
            let (archive, tally, stop) = (archive.clone(), tally.clone(), stop.clone());
            s.spawn(move || {
                let mut rng = Rng(0x9E3779B97F4A7C15 ^ (t + 1));
                while !stop.load(Ordering::Relaxed) {
                    let k = (rng.next() % gens) * 1000 + rng.next() % per_gen;
                    let want = content(k);
                    let fi = match archive.file_info(&path_of(k)) {
                        Ok(fi) => fi,
                        Err(_) => continue, // not added yet, or deleted
                    };
                    match rng.next() % 3 {
                        0 => {
                            let got = archive.read_file(&fi).map_err(|e| e.to_string());
                            tally.check("read_file", k, got, &want);
                        }
                        1 => {
                            let off = rng.next() % (want.len() as u64 + 1);
                            let len = rng.next() % 3000;
                            let got = archive.read_range(&fi, off, len).map_err(|e| e.to_string());
                            let end = (off + len).min(want.len() as u64) as usize;
                            tally.check("read_range", k, got, &want[off as usize..end]);
                        }
                        _ => {
                            let got = archive
                                .map_verified(&fi)
                                .map(|m| m.to_vec())
                                .map_err(|e| e.to_string());
                            tally.check("map_verified", k, got, &want);
                        }
                    }
                }
            });
        }

        // Command readers: barecat-cat of single files, barecat-extract of a directory.
        {
            let (tally, stop, arch) = (tally.clone(), stop.clone(), arch.clone());
            let out_root = dir.path().join("extracted");
            s.spawn(move || {
                let mut rng = Rng(77);
                let mut round = 0;
                while !stop.load(Ordering::Relaxed) {
                    let k = (rng.next() % gens) * 1000 + rng.next() % per_gen;
                    let o = run_quiet(bin("barecat-cat"), &[arch.as_os_str(), path_of(k).as_ref()]);
                    let got = if o.status.success() {
                        Ok(o.stdout)
                    } else {
                        Err(String::from_utf8_lossy(&o.stderr).into_owned())
                    };
                    tally.check("barecat-cat", k, got, &content(k));
                    // Every extracted file must be right; a failed one is reported and
                    // not left in place.
                    round += 1;
                    let dest = out_root.join(format!("r{round}"));
                    let g = rng.next() % gens;
                    let _ = run_quiet(
                        bin("barecat-extract"),
                        &[
                            "-q".as_ref(),
                            arch.as_os_str(),
                            format!("g{g}").as_ref(),
                            "-C".as_ref(),
                            dest.as_os_str(),
                        ],
                    );
                    for k in g * 1000..g * 1000 + per_gen {
                        if let Ok(data) = fs::read(dest.join(path_of(k))) {
                            tally.check("barecat-extract", k, Ok(data), &content(k));
                        }
                    }
                    let _ = fs::remove_dir_all(&dest);
                }
            });
        }

        let started = Instant::now();
        let rounds = writer.join().unwrap();
        // Let the readers see the final state for a moment too.
        std::thread::sleep(Duration::from_millis(200));
        stop.store(true, Ordering::Relaxed);
        assert_eq!(rounds, gens - 1);
        eprintln!(
            "{rounds} writer rounds in {:.1} s: {} reads right, {} errors, {} wrong",
            started.elapsed().as_secs_f64(),
            tally.ok.load(Ordering::Relaxed),
            tally.errors.load(Ordering::Relaxed),
            tally.wrong.load(Ordering::Relaxed)
        );
    });
    assert_eq!(
        tally.wrong.load(Ordering::Relaxed),
        0,
        "wrong bytes were returned"
    );
    assert!(
        tally.ok.load(Ordering::Relaxed) > 500,
        "too few reads overlapped the writers"
    );

    // With the readers gone, a defragmentation can cut what they kept it from cutting;
    // every file still in the archive reads back right.
    drop(archive);
    let o = run_quiet(bin("barecat-defrag"), &["-q".as_ref(), arch.as_os_str()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let a = Archive::open(&arch).unwrap();
    let mut seen = BTreeMap::new();
    for fi in a.files(barecat::FileOrder::Path, "") {
        let fi = fi.unwrap();
        let data = a.read_file(&fi).unwrap();
        seen.insert(fi.path, data);
    }
    let want: BTreeMap<String, Vec<u8>> = (0..gens)
        .flat_map(|g| g * 1000..g * 1000 + per_gen)
        .filter(|k| k / 1000 == gens - 1 || (k % 1000) % 3 != 0)
        .map(|k| (path_of(k), content(k)))
        .collect();
    assert!(seen == want, "the archive does not hold what was written");
    let v = run_quiet(bin("barecat-verify"), &["-q".as_ref(), arch.as_os_str()]);
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stderr));
    py_verify(&arch);
    let _ = Meta::default();
}

/// A reader holding a shard memory-mapped keeps writers from cutting that shard (a
/// truncation would kill it with SIGBUS when it touches the lost pages); the bytes
/// stay as trailing garbage until the reader is gone.
#[test]
fn mapped_shards_are_not_cut_under_a_reader() {
    let dir = tempfile::tempdir().unwrap();
    let arch = dir.path().join("m.barecat");
    let mut w = ArchiveWriter::open(&arch, WriterOptions::default()).unwrap();
    w.add_file("a", Meta::default(), &vec![1u8; 10_000], None)
        .unwrap();
    w.add_file("b", Meta::default(), &vec![2u8; 10_000], None)
        .unwrap();
    w.finish().unwrap();
    let shard = dir.path().join("m.barecat-shard-00000");
    let reader = Archive::open(&arch).unwrap();
    let fi_b = reader.file_info("b").unwrap();
    let view = reader.map_verified(&fi_b).unwrap();
    // Deleting the last file would cut the shard back: not while it is mapped.
    let mut w = ArchiveWriter::open(&arch, WriterOptions::with_mode(CreateMode::Append)).unwrap();
    w.remove_file("b").unwrap();
    w.finish().unwrap();
    assert_eq!(fs::metadata(&shard).unwrap().len(), 20_000);
    // The old view still reads (the pages are still there).
    assert!(view.iter().all(|&b| b == 2));
    // Defragmentation leaves the tail too, and says the space is still reclaimable.
    let o = run_quiet(bin("barecat-defrag"), &["-q".as_ref(), arch.as_os_str()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(fs::metadata(&shard).unwrap().len(), 20_000);
    drop(view);
    drop(reader);
    // Without the reader, the tail goes.
    let o = run_quiet(bin("barecat-defrag"), &["-q".as_ref(), arch.as_os_str()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(fs::metadata(&shard).unwrap().len(), 10_000);
    let a = Archive::open(&arch).unwrap();
    assert_eq!(a.read("a").unwrap(), vec![1u8; 10_000]);
}
