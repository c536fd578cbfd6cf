//! Corrupt input, measured: random single-bit flips in the shards of a realistic
//! archive are all found by `barecat-verify` and by every CRC-checked read (the
//! library, `barecat-cat`, `barecat-extract`), while flips in holes and trailing
//! bytes are never reported as file errors; and a catalogue of index damage run
//! through every read command gives a clear error or a verify finding, never a
//! panic, a hang or wrong bytes.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::support::maint::*;
use crate::support::*;
use barecat::{Archive, FileOrder, Layout};

/// A small deterministic generator (xorshift64*), so every run flips the same bits.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Every stderr line is a one-line message from the program (`barecat-x: ...`), and
/// nothing panicked.
fn assert_clean_stderr(what: &str, o: &Output) {
    let err = stderr(o);
    assert!(
        !err.contains("panicked")
            && !err.contains("internal error")
            && !err.contains("RUST_BACKTRACE")
            && !err.contains("Error code"),
        "{what}: {err}"
    );
    for line in err.lines().filter(|l| !l.trim().is_empty()) {
        assert!(
            line.starts_with("barecat"),
            "{what}: stray line {line:?} in:\n{err}"
        );
    }
    if !o.status.success() {
        // verify prints its findings on stdout.
        let said = !err.trim().is_empty() || (what.contains("verify") && !o.stdout.is_empty());
        assert!(said, "{what}: failed without a message");
    }
}

// ----------------------------------------------------------------- bit flips

#[test]
fn random_bit_flips_in_shards_are_all_detected() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("flip.barecat");
    let files = sample_files("data", 300, 2500, 3);
    build(&p, Some(120_000), &files);
    let original: BTreeMap<String, Vec<u8>> = files.into_iter().collect();
    // Holes: every 29th file deleted; trailing bytes after the last file.
    let mut w = open_append(&p);
    for (i, name) in original.keys().enumerate() {
        if i % 29 == 5 {
            w.remove_file(name).unwrap();
        }
    }
    w.finish().unwrap();
    let layout = Layout::current(&p);
    let nshards = shard_count(&p) as u64;
    assert!(nshards >= 3, "the archive needs several shards");
    let last = layout.shard_path(nshards - 1);
    let mut tail = fs::read(&last).unwrap();
    tail.extend_from_slice(&pseudo_random(9, 300));
    fs::write(&last, tail).unwrap();

    let rows = placement(&p);
    assert!(rows.len() > 280);
    let shards: Vec<Vec<u8>> = (0..nshards)
        .map(|s| fs::read(layout.shard_path(s)).unwrap())
        .collect();
    let total: u64 = shards.iter().map(|s| s.len() as u64).sum();
    // Bytes no live file covers (holes, trailing bytes), as (shard, offset).
    let mut gaps = Vec::new();
    for (s, data) in shards.iter().enumerate() {
        let mut live = vec![false; data.len()];
        for r in rows.iter().filter(|r| r.1 == s as u64) {
            live[r.2 as usize..(r.2 + r.3) as usize].fill(true);
        }
        gaps.extend(
            (0..data.len())
                .filter(|&i| !live[i])
                .map(|i| (s as u64, i as u64)),
        );
    }
    assert!(gaps.len() > 1000, "holes and trailing bytes expected");

    let mut rng = Rng(0x5eed_b17f_11b5_0001);
    let (mut live_flips, mut gap_flips) = (0, 0);
    for trial in 0..100 {
        // 90 flips anywhere in the shards, 10 forced into gaps.
        let (shard, at) = if trial % 10 == 9 {
            gaps[rng.below(gaps.len() as u64) as usize]
        } else {
            let mut k = rng.below(total);
            let mut s = 0;
            while k >= shards[s].len() as u64 {
                k -= shards[s].len() as u64;
                s += 1;
            }
            (s as u64, k)
        };
        let bit = rng.below(8) as u8;
        let victim = rows
            .iter()
            .find(|r| r.1 == shard && r.2 <= at && at < r.2 + r.3)
            .map(|r| r.0.clone());
        let what = format!("trial {trial}: shard {shard} byte {at} bit {bit} ({victim:?})");
        let sp = layout.shard_path(shard);
        let mut data = shards[shard as usize].clone();
        data[at as usize] ^= 1 << bit;
        fs::write(&sp, &data).unwrap();

        let o = run_t(
            bin("barecat-verify"),
            [
                "--json".as_ref(),
                "-j".as_ref(),
                "1".as_ref(),
                p.as_os_str(),
            ],
        );
        let v: serde_json::Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {}", stderr(&o)));
        let problems: Vec<(String, String)> = v["problems"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["kind"].as_str().unwrap_or("").to_string(),
                    p["path"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect();
        let a = Archive::open(&p).unwrap();
        match &victim {
            Some(name) => {
                live_flips += 1;
                assert_eq!(code(&o), 1, "{what}: verify missed it");
                assert_eq!(
                    problems,
                    [("crc_mismatch".to_string(), name.clone())],
                    "{what}"
                );
                // The library refuses the file, whole or mapped.
                let err = a.read(name).unwrap_err().to_string();
                assert!(
                    err.contains(name.as_str()) && err.contains("CRC32C"),
                    "{what}: {err}"
                );
                let fi = a.file_info(name).unwrap();
                assert!(a.map_verified(&fi).is_err(), "{what}");
                // cat writes nothing and names the file.
                let o = run_t(bin("barecat-cat"), [p.as_os_str(), name.as_ref()]);
                assert_eq!(code(&o), 1, "{what}");
                assert!(o.stdout.is_empty(), "{what}: cat wrote bytes");
                assert_clean_error(&o);
                assert!(stderr(&o).contains(name.as_str()), "{what}: {}", stderr(&o));
                // extract reports it and leaves no file behind.
                let dest = dir.path().join(format!("x{trial}"));
                let o = run_t(
                    bin("barecat-extract"),
                    [
                        p.as_os_str(),
                        "-C".as_ref(),
                        dest.as_os_str(),
                        name.as_ref(),
                    ],
                );
                assert_eq!(code(&o), 1, "{what}: {}", stderr(&o));
                assert!(stderr(&o).contains(name.as_str()), "{what}: {}", stderr(&o));
                assert!(
                    !dest.join(name).exists(),
                    "{what}: corrupt file left in place"
                );
                fs::remove_dir_all(&dest).ok();
            }
            None => {
                gap_flips += 1;
                assert_eq!(code(&o), 0, "{what}: {v:#}");
                assert!(problems.is_empty(), "{what}: {problems:?}");
                // Every file still reads back exactly.
                for f in a.files(FileOrder::Address, "") {
                    let f = f.unwrap();
                    assert_eq!(a.read_file(&f).unwrap(), original[&f.path], "{what}");
                }
            }
        }
        fs::write(&sp, &shards[shard as usize]).unwrap();
    }
    println!(
        "{} files in {nshards} shards ({total} bytes, {} in gaps): {live_flips} flips in \
         live extents, all found by verify, the library, cat and extract; {gap_flips} in \
         gaps, none reported",
        rows.len(),
        gaps.len()
    );
    assert!(
        live_flips >= 80 && gap_flips >= 10,
        "{live_flips} live, {gap_flips} in gaps"
    );
    // Restored: clean again.
    let (c, v) = verify_json(&p, false);
    assert_eq!(c, 0, "{v:#}");
}

// ----------------------------------------------------------------- index damage

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    original: BTreeMap<String, Vec<u8>>,
    /// A non-empty file in shard 1: the one most cases damage.
    victim: String,
    /// Another non-empty file of shard 1 (for overlaps).
    neighbour: (String, u64),
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("orig");
    fs::create_dir(&root).unwrap();
    let p = root.join("c.barecat");
    let files = sample_files("data", 40, 3000, 11);
    build(&p, Some(25_000), &files);
    let mut w = open_append(&p);
    w.add_dir("empty", meta()).unwrap();
    w.finish().unwrap();
    assert!(shard_count(&p) >= 3);
    let in1: Vec<_> = placement(&p)
        .into_iter()
        .filter(|r| r.1 == 1 && r.3 > 100)
        .collect();
    Fixture {
        _dir: dir,
        root,
        original: files.into_iter().collect(),
        victim: in1[1].0.clone(),
        neighbour: (in1[2].0.clone(), in1[2].2),
    }
}

impl Fixture {
    /// A fresh copy of the archive in `name/`.
    fn copy(&self, name: &str) -> PathBuf {
        let to = self.root.parent().unwrap().join(name);
        fs::create_dir(&to).unwrap();
        for e in fs::read_dir(&self.root).unwrap() {
            let e = e.unwrap();
            fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
        to.join("c.barecat")
    }

    /// Files (path → content) below `dir` must each be one of the archive's files
    /// with its original content.
    fn same_bytes(&self, what: &str, dir: &Path) {
        for e in walkdir::WalkDir::new(dir).min_depth(1) {
            let e = e.unwrap();
            if !e.file_type().is_file() {
                continue;
            }
            let rel = e.path().strip_prefix(dir).unwrap().to_str().unwrap();
            let want = self
                .original
                .get(rel)
                .unwrap_or_else(|| panic!("{what}: unexpected file {rel}"));
            assert!(
                fs::read(e.path()).unwrap() == *want,
                "{what}: wrong bytes in {rel}"
            );
        }
    }

    /// Files of an archive that read back (CRC-checked) must have their original
    /// content; a file that fails to read is fine (it was reported).
    fn same_bytes_in_archive(&self, what: &str, p: &Path) {
        let Ok(a) = Archive::open(p) else { return };
        for f in a.files(FileOrder::Address, "") {
            let Ok(f) = f else { break };
            if let Ok(data) = a.read_file(&f) {
                if let Some(want) = self.original.get(&f.path) {
                    assert!(data == *want, "{what}: wrong bytes for {}", f.path);
                }
            }
        }
    }
}

/// What a case expects from `barecat-verify`.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Verdict {
    /// Exit 0 (warnings at most).
    Clean,
    /// Exit 1 with findings, or 2 when the index cannot be checked at all.
    Flagged,
}

type Damage = fn(&Path, &Fixture);

/// A damage, what verify must say, and a phrase every failing command's message
/// must hold ("" for no such check).
type Case = (&'static str, Verdict, &'static str, Damage);

fn sql(p: &Path, s: &str) {
    raw_sql(p, &format!("PRAGMA foreign_keys = OFF; {s}"));
}

fn on_victim(p: &Path, f: &Fixture, set: &str) {
    sql(
        p,
        &format!("UPDATE files SET {set} WHERE path = '{}'", f.victim),
    );
}

fn shard_file(p: &Path, n: u64) -> PathBuf {
    Layout::current(p).shard_path(n)
}

fn cases() -> Vec<Case> {
    use Verdict::*;
    vec![
        ("overlapping extents", Flagged, "", |p, f| {
            on_victim(p, f, &format!("offset = {}", f.neighbour.1))
        }),
        ("extent past the shard end", Flagged, "", |p, f| {
            on_victim(p, f, "offset = offset + 10000000")
        }),
        ("1 TB declared size", Flagged, "", |p, f| {
            on_victim(p, f, "size = 1099511627776")
        }),
        ("negative size", Flagged, "", |p, f| {
            on_victim(p, f, "size = -7")
        }),
        ("negative offset", Flagged, "", |p, f| {
            on_victim(p, f, "offset = -1")
        }),
        ("offset + size overflows", Flagged, "", |p, f| {
            on_victim(p, f, "offset = 9223372036854775800, size = 100")
        }),
        ("text shard", Flagged, "", |p, f| {
            on_victim(p, f, "shard = 'one'")
        }),
        ("real size", Flagged, "", |p, f| {
            on_victim(p, f, "size = 1.5")
        }),
        ("blob crc", Flagged, "", |p, f| {
            on_victim(p, f, "crc32c = x'0102'")
        }),
        ("text path", Flagged, "", |p, f| {
            on_victim(p, f, "path = x'ff00ff'")
        }),
        ("path holding NUL", Flagged, "", |p, f| {
            on_victim(p, f, "path = 'data/d1/x' || char(0) || 'y'")
        }),
        ("dir path holding NUL", Flagged, "", |p, _| {
            sql(p, "INSERT INTO dirs (path) VALUES ('empty/' || char(0))")
        }),
        ("huge shard number", Flagged, "", |p, f| {
            on_victim(p, f, "shard = 9223372036854775807")
        }),
        ("shard number past u32", Flagged, "", |p, f| {
            on_victim(p, f, "shard = 4294967296")
        }),
        ("missing shard", Flagged, "", |p, _| {
            fs::remove_file(shard_file(p, 1)).unwrap()
        }),
        (
            "shard is a directory",
            Flagged,
            "not a regular file",
            |p, _| {
                fs::remove_file(shard_file(p, 1)).unwrap();
                fs::create_dir(shard_file(p, 1)).unwrap();
            },
        ),
        ("shard is a FIFO", Flagged, "not a regular file", |p, _| {
            fs::remove_file(shard_file(p, 1)).unwrap();
            run_ok("mkfifo", [shard_file(p, 1)]);
        }),
        ("extra shard", Clean, "", |p, _| {
            let n = shard_count(p) as u64;
            fs::write(shard_file(p, n), b"stray bytes").unwrap()
        }),
        ("gap in shard numbering", Flagged, "", |p, _| {
            fs::write(shard_file(p, 9), b"stray bytes").unwrap()
        }),
        ("wrong statistics", Flagged, "", |p, _| {
            sql(
                p,
                "UPDATE dirs SET num_files = num_files + 5, size_tree = 1",
            )
        }),
        ("no dirs rows", Flagged, "", |p, _| {
            sql(p, "DELETE FROM dirs")
        }),
        ("missing shard_size_limit", Flagged, "", |p, _| {
            sql(p, "DELETE FROM config WHERE key = 'shard_size_limit'")
        }),
        ("empty config", Flagged, "", |p, _| {
            sql(p, "DELETE FROM config")
        }),
        ("truncated index", Flagged, "", |p, _| {
            let b = fs::read(p).unwrap();
            fs::write(p, &b[..b.len() / 3]).unwrap();
        }),
        ("garbage index", Flagged, "", |p, _| {
            fs::write(p, pseudo_random(5, 20_000)).unwrap()
        }),
        ("empty index", Flagged, "", |p, _| {
            fs::write(p, b"").unwrap()
        }),
        ("garbage in index pages", Flagged, "", |p, _| {
            let mut b = fs::read(p).unwrap();
            let n = b.len();
            b[n / 2..n / 2 + 3000].copy_from_slice(&pseudo_random(6, 3000));
            fs::write(p, b).unwrap();
        }),
    ]
}

/// Run every read command on a damaged copy; check for no panic or hang, clear
/// messages, and no wrong bytes in anything written.
fn run_commands(f: &Fixture, (name, verdict, expect, _): &Case, p: &Path) {
    let work = p.parent().unwrap();
    let a = p.as_os_str();
    let w = |s: &str| work.join(s);
    // The library, in process.
    if let Ok(arch) = Archive::open(p) {
        for fi in arch.files(FileOrder::Path, "") {
            let Ok(fi) = fi else { break };
            if let Ok(data) = arch.read_file(&fi) {
                if let Some(want) = f.original.get(&fi.path) {
                    assert!(
                        data == *want,
                        "{name}: library read wrong bytes for {}",
                        fi.path
                    );
                }
            }
        }
        let _ = arch.with_index(|i| i.stats_mismatches());
    }
    let commands: Vec<(&str, Vec<std::ffi::OsString>)> = vec![
        ("cat", vec![a.into(), f.victim.clone().into()]),
        ("ls", vec!["-lR".into(), a.into()]),
        ("ls", vec!["--json".into(), a.into(), "data/d1".into()]),
        ("du", vec![a.into()]),
        ("du", vec!["-a".into(), a.into(), "data".into()]),
        ("extract", vec![a.into(), "-C".into(), w("ex").into()]),
        ("to-zip", vec![a.into(), w("o.zip").into()]),
        ("to-tar", vec![a.into(), w("o.tar").into()]),
        ("verify", vec!["--json".into(), a.into()]),
        ("verify", vec!["--quick".into(), a.into()]),
        ("index-to-csv", vec![a.into()]),
        ("to-ncdu-json", vec![a.into()]),
        (
            "merge",
            vec!["-q".into(), "-o".into(), w("m.barecat").into(), a.into()],
        ),
        ("defrag", vec!["--dry-run".into(), a.into()]),
        ("defrag", vec!["--quick".into(), "-q".into(), a.into()]),
        ("defrag", vec!["-q".into(), a.into()]),
    ];
    for (cmd, args) in commands {
        let what = format!("{name}: {cmd} {args:?}");
        let o = run_t(bin(&format!("barecat-{cmd}")), &args);
        assert_clean_stderr(&what, &o);
        let c = code(&o);
        if c != 0 && !expect.is_empty() {
            assert!(stderr(&o).contains(expect), "{what}: {}", stderr(&o));
        }
        // The matrix, shown with --nocapture.
        let first = stderr(&o).lines().next().unwrap_or("").to_string();
        println!(
            "{name} | {cmd} {} | {c} | {first}",
            args[0].to_string_lossy()
        );
        assert!(
            c == 0 || c == 1 || (cmd == "verify" && c == 2),
            "{what}: exit {c}"
        );
        match cmd {
            "cat" if c == 0 => assert!(
                f.original.get(&f.victim) == Some(&o.stdout),
                "{what}: cat wrote wrong bytes"
            ),
            "extract" if w("ex").exists() => f.same_bytes(&what, &w("ex")),
            "to-zip" | "to-tar" => {
                let out = w(if cmd == "to-zip" { "o.zip" } else { "o.tar" });
                if out.exists() && fs::metadata(&out).unwrap().len() > 0 {
                    let x = w(&format!("x-{cmd}"));
                    fs::create_dir_all(&x).unwrap();
                    run_ok(
                        "bsdtar",
                        [
                            "-xf".as_ref(),
                            out.as_os_str(),
                            "-C".as_ref(),
                            x.as_os_str(),
                        ],
                    );
                    f.same_bytes(&what, &x);
                }
            }
            "verify" => {
                let expect_ok = *verdict == Verdict::Clean;
                assert_eq!(c == 0, expect_ok, "{what}: {}{}", stdout(&o), stderr(&o));
            }
            "merge" if w("m.barecat").exists() => f.same_bytes_in_archive(&what, &w("m.barecat")),
            "defrag" => f.same_bytes_in_archive(&what, p),
            _ => {}
        }
    }
}

fn damage_cases(select: impl Fn(usize) -> bool) {
    let f = fixture();
    for (i, case) in cases().into_iter().enumerate() {
        if !select(i) {
            continue;
        }
        let p = f.copy(&format!("case{i}"));
        (case.3)(&p, &f);
        run_commands(&f, &case, &p);
    }
}

// The catalogue in two halves, so that they run in parallel.
#[test]
fn index_damage_through_every_read_command_a() {
    need!("bsdtar");
    damage_cases(|i| i % 2 == 0);
}

#[test]
fn index_damage_through_every_read_command_b() {
    need!("bsdtar");
    damage_cases(|i| i % 2 == 1);
}

/// A path holding a NUL byte is its own parent for SQLite's string functions; the
/// statistics recursion once looped on it forever (found by fuzzing).
#[test]
fn statistics_of_a_path_holding_nul_terminate() {
    let f = fixture();
    let p = f.copy("nul");
    on_victim(&p, &f, "path = 'data/d1/x' || char(0) || 'y'");
    sql(&p, "INSERT INTO dirs (path) VALUES ('a' || char(0) || 'b')");
    // On a thread, so that a regression fails the test instead of hanging it.
    let (tx, rx) = std::sync::mpsc::channel();
    let q = p.clone();
    std::thread::spawn(move || {
        let a = Archive::open(&q).unwrap();
        tx.send(a.with_index(|i| i.stats_mismatches()).unwrap().len())
            .unwrap();
    });
    let bad = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("statistics did not finish within 60 s");
    assert!(bad > 0);
    // The writer's rebuild (repair) terminates too.
    let o = run_t(bin("barecat-repair"), [p.as_os_str()]);
    assert_clean_stderr("repair", &o);
}

/// With every `dirs` row gone, the root is named in words, not as an empty string.
#[test]
fn a_missing_root_row_is_named() {
    let f = fixture();
    let p = f.copy("noroot");
    sql(&p, "DELETE FROM dirs");
    for cmd in ["barecat-ls", "barecat-du"] {
        let o = run_t(bin(cmd), [p.as_os_str()]);
        assert_eq!(code(&o), 1);
        assert_clean_error(&o);
        assert!(
            stderr(&o).contains(": / (the archive root): no such file"),
            "{}",
            stderr(&o)
        );
    }
}
