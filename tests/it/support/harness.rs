//! Harness for the crash and fault tests: runs a real command, kills it with SIGKILL
//! at a chosen instant, and checks what it left behind.
//!
//! A test describes one command (how to prepare its output, run it, fix what a kill
//! left, and what an uninterrupted run gives) as a [`Scenario`]; [`kill_trials`]
//! runs it to completion once to learn how long it takes, then kills it at
//! `BARECAT_CRASH_TRIALS` (default 20) instants spread over the whole run with a
//! random jitter. After each kill:
//!
//! * the archive opens (library and `barecat-verify`), every file the index lists
//!   reads back CRC-checked with the content of the source, `barecat-verify` finds
//!   no problem (warnings about shards an interrupted writer left are allowed), and
//!   Python barecat's verify passes;
//! * a B-tree sidecar left beside the archive that a reader would accept (format,
//!   freshness against the index's page 1) describes this very index: every one of
//!   its pages equals the index's page ([`check_sidecar`]);
//! * the documented fix is run; then the archive holds exactly the files (paths,
//!   contents, metadata) and directories of an uninterrupted run, `barecat-verify`
//!   is clean without any warning, its sidecar is valid, and Python barecat's
//!   verify passes.
//!
//! The instants come from a seed (`BARECAT_CRASH_SEED`, random by default) that
//! every failure message prints; setting it again replays the same instants,
//! expressed as fractions of the measured run time.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use barecat::{Archive, FileOrder, Layout, Meta};

use crate::support::process::{lines, reap, Lines, Watched};
use crate::support::{bin, pseudo_random, py_script, python, ChildExt};

// ---------------------------------------------------------------------- settings

/// Number of kill instants per command and the seed that places them.
#[derive(Debug, Clone, Copy)]
pub struct Config {
    pub trials: usize,
    pub seed: u64,
}

/// `BARECAT_CRASH_TRIALS` (default 20) and `BARECAT_CRASH_SEED` (default: random).
pub fn config() -> Config {
    let trials = std::env::var("BARECAT_CRASH_TRIALS")
        .ok()
        .map(|v| v.parse().expect("BARECAT_CRASH_TRIALS must be a number"))
        .unwrap_or(20);
    let seed = std::env::var("BARECAT_CRASH_SEED")
        .ok()
        .map(|v| v.parse().expect("BARECAT_CRASH_SEED must be a number"))
        .unwrap_or_else(|| {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap();
            (t.as_nanos() as u64 ^ (std::process::id() as u64) << 32) % 1_000_000_007
        });
    Config { trials, seed }
}

/// splitmix64: small, good enough to place kill instants.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

// ---------------------------------------------------------------------- processes

/// What to give a command on its standard input.
#[derive(Clone)]
pub enum Stdin {
    Null,
    Bytes(std::sync::Arc<Vec<u8>>),
}

/// How a run ended.
#[derive(Debug)]
pub struct Ended {
    /// The command exited by itself (before the kill).
    pub finished: bool,
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: String,
    pub elapsed: Duration,
}

fn spawn(cmd: &mut Command, stdin: &Stdin) -> (Watched, Option<std::thread::JoinHandle<()>>) {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd.stdin(match stdin {
        Stdin::Null => Stdio::null(),
        Stdin::Bytes(_) => Stdio::piped(),
    });
    let mut child = Watched::spawn(cmd).unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let feeder = match stdin {
        Stdin::Null => None,
        Stdin::Bytes(b) => {
            let mut pipe: ChildStdin = child.stdin().unwrap();
            let b = b.clone();
            // A killed reader makes the write fail (EPIPE): that is expected.
            Some(std::thread::spawn(move || {
                let _ = pipe.write_all(&b);
            }))
        }
    };
    (child, feeder)
}

/// How long a command may run (or take to end after its kill) before the test
/// fails as hung.
const RUN_BOUND: Duration = Duration::from_secs(120);

fn collect(
    child: Watched,
    feeder: Option<std::thread::JoinHandle<()>>,
    finished: bool,
    start: Instant,
) -> Ended {
    let out = child.finish(RUN_BOUND).unwrap_or_else(|t| panic!("{t}"));
    let elapsed = start.elapsed();
    if let Some(f) = feeder {
        f.join().unwrap();
    }
    Ended {
        finished,
        status: out.status,
        stdout: out.stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        elapsed,
    }
}

/// Run a command to completion (at most two minutes: a hang fails the test).
pub fn run_to_end(mut cmd: Command, stdin: &Stdin) -> Ended {
    let start = Instant::now();
    let (child, feeder) = spawn(&mut cmd, stdin);
    collect(child, feeder, true, start)
}

/// Run a command and SIGKILL it `delay` after it was started, unless it exits first.
pub fn run_and_kill(mut cmd: Command, stdin: &Stdin, delay: Duration) -> Ended {
    let start = Instant::now();
    let (mut child, feeder) = spawn(&mut cmd, stdin);
    loop {
        if child.try_status().is_some() {
            return collect(child, feeder, true, start);
        }
        let elapsed = start.elapsed();
        if elapsed >= delay {
            break;
        }
        std::thread::sleep((delay - elapsed).min(Duration::from_micros(200)));
    }
    child.kill(); // SIGKILL
    let e = collect(child, feeder, false, start);
    // It may have exited just before the kill arrived.
    let finished = std::os::unix::process::ExitStatusExt::signal(&e.status).is_none();
    Ended { finished, ..e }
}

pub fn cmd<S: AsRef<std::ffi::OsStr>>(name: &str, args: impl IntoIterator<Item = S>) -> Command {
    let mut c = Command::new(bin(name));
    c.args(args);
    c
}

/// `OsString` arguments from anything path-like.
#[macro_export]
macro_rules! args {
    ($($a:expr),* $(,)?) => {
        vec![$(std::ffi::OsString::from($a)),*]
    };
}

// ---------------------------------------------------------------------- inputs

/// A deterministic source tree under `root/top`: `n` files in nested directories
/// (empty, small, medium, and a few larger than `large` bytes), plus empty
/// directories. Returns stored path → content, paths starting with `top/`.
pub fn make_tree(root: &Path, top: &str, n: usize, large: usize, seed: u64) -> Files {
    let sizes = pseudo_random(seed, n);
    let mut out = BTreeMap::new();
    for (i, &r) in sizes.iter().enumerate() {
        let size = match r % 16 {
            0 => 0,
            1..=5 => 1 + r as usize * 3,
            6..=12 => 2_000 + r as usize * 60,
            13 | 14 => 20_000 + r as usize * 80,
            _ if i % 3 == 0 => large + r as usize * 100,
            _ => 8_000,
        };
        let rel = format!("{top}/c{}/s{}/f{i:04}.bin", i % 7, i % 3);
        let data = pseudo_random(seed ^ ((i as u64 + 1) * 7919), size);
        let full = root.join(&rel);
        fs::create_dir_all(full.parent().unwrap()).unwrap();
        fs::write(&full, &data).unwrap();
        out.insert(rel, data);
    }
    fs::create_dir_all(root.join(top).join("empty/nested")).unwrap();
    out
}

pub type Files = BTreeMap<String, Vec<u8>>;

/// An uncompressed tar of `files` (stored paths as member names, deterministic
/// metadata), with directory entries.
pub fn make_tar(files: &Files) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    let mut dirs = std::collections::BTreeSet::new();
    for path in files.keys() {
        let mut p = path.as_str();
        while let Some(i) = p.rfind('/') {
            p = &p[..i];
            dirs.insert(p.to_string());
        }
    }
    let mut entries: Vec<(&str, Option<&Vec<u8>>)> =
        dirs.iter().map(|d| (d.as_str(), None)).collect();
    entries.extend(files.iter().map(|(p, d)| (p.as_str(), Some(d))));
    entries.sort_by(|a, b| a.0.cmp(b.0));
    for (path, data) in entries {
        let mut h = tar::Header::new_gnu();
        h.set_mtime(1_700_000_000);
        h.set_uid(1000);
        h.set_gid(1000);
        match data {
            None => {
                h.set_entry_type(tar::EntryType::Directory);
                h.set_mode(0o755);
                h.set_size(0);
                b.append_data(&mut h, format!("{path}/"), std::io::empty())
                    .unwrap();
            }
            Some(d) => {
                h.set_entry_type(tar::EntryType::Regular);
                h.set_mode(0o644);
                h.set_size(d.len() as u64);
                b.append_data(&mut h, path, &d[..]).unwrap();
            }
        }
    }
    b.into_inner().unwrap()
}

/// Metadata for archives built through the library.
pub fn meta() -> Meta {
    Meta {
        mode: Some(0o100644),
        uid: Some(1000),
        gid: Some(1000),
        mtime_ns: Some(1_700_000_000_123_456_789),
    }
}

/// Build an archive from `files` through the library.
pub fn build(path: &Path, limit: Option<u64>, files: &Files) {
    let mut w = barecat::ArchiveWriter::open(
        path,
        barecat::WriterOptions {
            shard_size_limit: limit,
            ..barecat::WriterOptions::default()
        },
    )
    .unwrap();
    for (p, data) in files {
        w.add_file(p, meta(), data, None).unwrap();
    }
    w.finish().unwrap();
}

/// Copy every part of an archive (index, shards, companion files such as the
/// sidecar) to a new name.
pub fn copy_archive(from: &Path, to: &Path) {
    Layout::remove(to).unwrap();
    fs::copy(from, to).unwrap();
    for s in Layout::current(from).shard_files().unwrap() {
        fs::copy(&s.path, Layout::current(to).shard_path(s.number)).unwrap();
    }
    let (a, b) = (Layout::current(from), Layout::current(to));
    for (c, d) in a.companion_files().into_iter().zip(b.companion_files()) {
        if c.is_file() {
            fs::copy(&c, &d).unwrap();
        }
    }
}

/// Names in a directory, sorted.
pub fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

// ---------------------------------------------------------------------- checks

pub type Check = Result<(), String>;

macro_rules! ensure {
    ($cond:expr, $($fmt:tt)*) => {
        if !$cond {
            return Err(format!($($fmt)*));
        }
    };
}

/// Everything an archive holds, apart from where the bytes are: per file its size,
/// CRC and metadata (the content is compared separately), per directory its
/// metadata and statistics. The root's mtime (the creation time) is left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub files: BTreeMap<String, (u64, Option<u32>, Meta)>,
    pub dirs: BTreeMap<String, (i64, i64, i64, i64, Meta)>,
}

impl Snapshot {
    /// A one-line description of the first difference from `other`.
    pub fn diff(&self, other: &Snapshot) -> Option<String> {
        if self == other {
            return None;
        }
        for (a, b, what) in [
            (
                self.files.keys().collect::<Vec<_>>(),
                other.files.keys().collect::<Vec<_>>(),
                "file",
            ),
            (
                self.dirs.keys().collect::<Vec<_>>(),
                other.dirs.keys().collect::<Vec<_>>(),
                "directory",
            ),
        ] {
            if a != b {
                let missing: Vec<_> = b.iter().filter(|p| !a.contains(p)).take(3).collect();
                let extra: Vec<_> = a.iter().filter(|p| !b.contains(p)).take(3).collect();
                return Some(format!(
                    "{} vs {} {what} paths; missing {missing:?}, extra {extra:?}",
                    a.len(),
                    b.len()
                ));
            }
        }
        for (k, v) in &self.files {
            if other.files[k] != *v {
                return Some(format!("file {k}: {v:?} vs {:?}", other.files[k]));
            }
        }
        for (k, v) in &self.dirs {
            if other.dirs[k] != *v {
                return Some(format!("directory {k:?}: {v:?} vs {:?}", other.dirs[k]));
            }
        }
        None
    }
}

/// Open an archive with the library, read every file it lists (CRC-checked) and
/// compare it with `expected` (stored path → content); return its snapshot.
pub fn read_all(path: &Path, expected: &Files) -> Result<Snapshot, String> {
    let a = Archive::open(path).map_err(|e| format!("does not open: {e}"))?;
    let mut files = BTreeMap::new();
    for fi in a.files(FileOrder::Address, "") {
        let fi = fi.map_err(|e| format!("listing files: {e}"))?;
        let data = a
            .read_file(&fi)
            .map_err(|e| format!("{}: cannot be read back: {e}", fi.path))?;
        match expected.get(&fi.path) {
            None => return Err(format!("{}: listed but not in the source", fi.path)),
            Some(want) if *want != data => {
                return Err(format!(
                    "{}: content differs from the source ({} vs {} bytes)",
                    fi.path,
                    data.len(),
                    want.len()
                ))
            }
            Some(_) => {}
        }
        files.insert(fi.path.clone(), (fi.size, fi.crc32c, fi.meta));
    }
    let mut dirs = BTreeMap::new();
    for d in a
        .dirs("")
        .map_err(|e| format!("listing directories: {e}"))?
    {
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

/// `barecat-verify --json`: must exit 0 with no problem. Warnings are allowed only
/// if their kind is in `allowed`. Returns the report, without the warnings about
/// the B-tree sidecar (a killed writer leaves none; [`check_sidecar`] and
/// [`sidecar_valid`] check it).
pub fn verify_clean(path: &Path, allowed: &[&str]) -> Result<serde_json::Value, String> {
    let out = run_to_end(cmd("barecat-verify", args!["--json", path]), &Stdin::Null);
    let mut v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|err| format!("barecat-verify gave no report ({err}): {}", out.stderr))?;
    if let Some(w) = v["warnings"].as_array_mut() {
        w.retain(|w| w["kind"] != "sidecar");
    }
    ensure!(
        out.status.code() == Some(0) && v["problems"].as_array().is_some_and(|p| p.is_empty()),
        "barecat-verify found problems: {}",
        v["problems"]
    );
    for w in v["warnings"].as_array().into_iter().flatten() {
        let kind = w["kind"].as_str().unwrap_or("");
        ensure!(
            allowed.contains(&kind),
            "barecat-verify warns: {}",
            w["message"]
        );
    }
    Ok(v)
}

/// What a kill may leave of the B-tree sidecar: none, one that a reader rejects, or
/// one that a reader accepts (its format is valid and its page 1 equals the
/// index's); in the last case every page must equal the index's page, or a reader
/// would serve pages of another index. `Ok(true)` when a reader would use it.
pub fn check_sidecar(path: &Path) -> Result<bool, String> {
    let layout = Layout::resolve(path);
    let Ok(bytes) = fs::read(layout.sidecar()) else {
        return Ok(false);
    };
    // What a reader's SQLite sees: a hot journal is rolled back first.
    let _ = rusqlite::Connection::open(layout.index())
        .and_then(|c| c.query_row("SELECT count(*) FROM sqlite_schema", [], |_| Ok(())));
    let index =
        fs::read(layout.index()).map_err(|e| format!("a sidecar without its index ({e})"))?;
    let Ok(map) = barecat::core::sidecar::load(&bytes, index.len() as u64, &index) else {
        return Ok(false);
    };
    for (n, page) in map.pages() {
        let at = (n as usize - 1) * page.len();
        ensure!(
            index.get(at..at + page.len()) == Some(page),
            "a reader would accept the sidecar, but its page {n} is not the index's"
        );
    }
    Ok(true)
}

/// After a complete run (or the fix): the sidecar is there and valid.
pub fn sidecar_valid(path: &Path) -> Check {
    let r = barecat::core::sidecar::check(path).map_err(|e| e.to_string())?;
    ensure!(r.is_valid(), "{}: {}", r.sidecar.display(), r.message);
    Ok(())
}

/// Python barecat's full verify, many archives through one interpreter
/// (tests/py/verify_many.py).
pub struct PyVerifier {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Lines,
}

/// How long Python barecat may take to verify one archive.
const PY_VERIFY_BOUND: Duration = Duration::from_secs(300);

impl PyVerifier {
    pub fn start() -> PyVerifier {
        let mut child = Command::new(python())
            .arg(py_script("verify_many.py"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("cannot start Python for the interop checks");
        let stdin = child.stdin.take();
        let stdout = lines(child.stdout.take().unwrap(), child.id(), "verify_many.py");
        PyVerifier {
            child,
            stdin,
            stdout,
        }
    }

    /// Verify one archive; `Ok(number of files)` or the failure.
    pub fn verify(&mut self, path: &Path) -> Result<u64, String> {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{}", path.display()).unwrap();
        stdin.flush().unwrap();
        let line = self.stdout.next_within(PY_VERIFY_BOUND).unwrap_or_default();
        let line = line.trim();
        match line.strip_prefix("ok ") {
            Some(n) => Ok(n.parse().unwrap()),
            None => Err(format!("Python barecat's verify: {line}")),
        }
    }
}

impl Drop for PyVerifier {
    fn drop(&mut self) {
        drop(self.stdin.take());
        reap(&mut self.child, Duration::from_secs(60));
    }
}

// ---------------------------------------------------------------------- trials

/// What a kill left, as seen from the outside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// No index file at the output path.
    NoArchive,
    /// An index file without the barecat tables (killed while creating it).
    NoSchema,
    /// An archive that opens.
    Archive,
}

pub fn state(path: &Path) -> State {
    if !Layout::resolve(path).index().exists() {
        return State::NoArchive;
    }
    let tables: i64 =
        rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE)
            .and_then(|c| {
                c.query_row(
                    "SELECT count(*) FROM sqlite_schema WHERE name = 'files'",
                    [],
                    |r| r.get(0),
                )
            })
            .unwrap_or(1);
    if tables == 0 {
        State::NoSchema
    } else {
        State::Archive
    }
}

/// Bytes after the last file of the last used shard, plus shards after it: what a
/// writer killed in the middle of a batch leaves.
pub fn uncommitted_bytes(path: &Path) -> (u64, usize) {
    let Ok(a) = Archive::open(path) else {
        return (0, 0);
    };
    let usage = a.with_index(|i| i.shard_usage()).unwrap_or_default();
    let last = usage
        .last()
        .map(|u| (u.shard, u.logical_end))
        .unwrap_or((0, 0));
    let mut tail = 0;
    let mut extra = 0;
    for s in a.layout().shard_files().unwrap_or_default() {
        let len = fs::metadata(&s.path).map(|m| m.len()).unwrap_or(0);
        if s.number == last.0 {
            tail += len.saturating_sub(last.1);
        } else if s.number > last.0 {
            tail += len;
            extra += 1;
        }
    }
    (tail, extra)
}

/// Counts of where the kills landed.
#[derive(Debug, Default)]
pub struct Tally {
    pub phases: BTreeMap<String, usize>,
    pub trials: usize,
    pub interrupted: usize,
    /// Kills after which a reader would have used the sidecar left beside the
    /// output (and it described the output's index).
    pub sidecars_used: usize,
}

impl Tally {
    pub fn add(&mut self, phase: impl Into<String>, interrupted: bool) {
        *self.phases.entry(phase.into()).or_default() += 1;
        self.trials += 1;
        self.interrupted += interrupted as usize;
    }

    pub fn line(&self, name: &str, run: Duration) -> String {
        let phases: Vec<String> = self
            .phases
            .iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect();
        format!(
            "{name}: {} kill instants over a {:.0} ms run, {} interrupted; {}; \
             a fresh sidecar after {} of them",
            self.trials,
            run.as_secs_f64() * 1e3,
            self.interrupted,
            phases.join(", "),
            self.sidecars_used
        )
    }
}

/// One command under test.
pub trait Scenario {
    /// Name in messages.
    fn name(&self) -> String;
    /// The archive the command writes (its sidecar is checked after every kill and
    /// after every fix).
    fn output(&self) -> PathBuf;
    /// Number of variants; trial `k` runs variant `k % variants()`.
    fn variants(&self) -> usize {
        1
    }
    /// Put the output in its starting state for trial `k` (remove it, or copy a
    /// template into place).
    fn prepare(&mut self, k: usize);
    /// The command line of the run that gets killed.
    fn command(&self, k: usize) -> (Command, Stdin);
    /// Check the state a kill (or a normal end) left and name the phase it landed in.
    fn after_kill(
        &mut self,
        k: usize,
        ended: &Ended,
        py: &mut PyVerifier,
    ) -> Result<String, String>;
    /// Run the documented fix and check the result against an uninterrupted run.
    fn fix_and_compare(&mut self, k: usize, py: &mut PyVerifier) -> Check;
}

/// Run `s` once to completion to time it, then kill it at `cfg.trials` instants
/// spread over [0, 1.1 × run time) with a random jitter; check after each kill and
/// after each fix. Panics with the seed and the instant on the first failure.
pub fn kill_trials(s: &mut dyn Scenario, cfg: Config) -> Tally {
    let name = s.name();
    eprintln!(
        "{name}: seed {} (replay with BARECAT_CRASH_SEED={}), {} trials",
        cfg.seed, cfg.seed, cfg.trials
    );
    // Time uninterrupted runs of each variant (trial `k` runs variant
    // `k % variants`). The estimate is the median of every complete run seen,
    // including the trials that ended before their kill, so that it follows the
    // load of the machine.
    let nv = s.variants();
    let mut runs: Vec<Vec<Duration>> = vec![Vec::new(); nv];
    for round in 0..3 {
        for (v, samples) in runs.iter_mut().enumerate() {
            let k = (1usize << 40) * nv * (round + 1) + v;
            s.prepare(k);
            let (c, stdin) = s.command(k);
            let e = run_to_end(c, &stdin);
            assert!(
                e.status.success(),
                "{name}: uninterrupted run failed: {}",
                e.stderr
            );
            samples.push(e.elapsed);
        }
    }
    // The median of the last five runs: the kill instants follow the machine's
    // current speed (a run timed while the machine was busy would otherwise put
    // most kills after the end of the later, faster runs).
    let median = |v: &Vec<Duration>| {
        let mut v = v[v.len().saturating_sub(5)..].to_vec();
        v.sort();
        v[v.len() / 2]
    };
    let mut rng = Rng::new(cfg.seed ^ fxhash(&name));
    let mut py = PyVerifier::start();
    let mut tally = Tally::default();
    for k in 0..cfg.trials {
        let frac = (k as f64 + rng.unit()) / cfg.trials as f64 * 1.1;
        let run = median(&runs[k % nv]);
        let delay = run.mul_f64(frac);
        let context = || {
            format!(
                "{name}: kill {k} at {:.1} ms ({:.3} of a {:.1} ms run); seed {} \
                 (replay: BARECAT_CRASH_SEED={} BARECAT_CRASH_TRIALS={})",
                delay.as_secs_f64() * 1e3,
                frac,
                run.as_secs_f64() * 1e3,
                cfg.seed,
                cfg.seed,
                cfg.trials
            )
        };
        s.prepare(k);
        let (c, stdin) = s.command(k);
        let ended = run_and_kill(c, &stdin, delay);
        if ended.finished && !ended.status.success() {
            panic!("{}: the command failed: {}", context(), ended.stderr);
        }
        let phase = s
            .after_kill(k, &ended, &mut py)
            .unwrap_or_else(|e| panic!("{}: after the kill: {e}", context()));
        let used = check_sidecar(&s.output())
            .unwrap_or_else(|e| panic!("{}: after the kill: {e}", context()));
        tally.sidecars_used += used as usize;
        s.fix_and_compare(k, &mut py)
            .and_then(|()| sidecar_valid(&s.output()))
            .unwrap_or_else(|e| panic!("{}: after the fix: {e}", context()));
        if ended.finished {
            runs[k % nv].push(ended.elapsed);
        }
        tally.add(
            if ended.finished {
                "not interrupted".into()
            } else {
                phase
            },
            !ended.finished,
        );
    }
    let longest = runs.iter().map(median).max().unwrap();
    eprintln!(
        "{name}: run times (ms) per variant: {:?}",
        runs.iter()
            .map(|v| v.iter().map(|d| d.as_millis()).collect::<Vec<_>>())
            .collect::<Vec<_>>()
    );
    eprintln!("{}", tally.line(&name, longest));
    assert!(
        tally.interrupted * 2 >= tally.trials,
        "{name}: only {} of {} runs were interrupted: the runs are too short",
        tally.interrupted,
        tally.trials
    );
    tally
}

fn fxhash(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

// ---------------------------------------------------------------------- faults

/// Make the child's writes past `bytes` fail with EFBIG: SIGXFSZ ignored, then
/// `RLIMIT_FSIZE` set (both survive `exec`). Needs no privilege.
pub fn limit_file_size(cmd: &mut Command, bytes: u64) -> &mut Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let r = libc::rlimit {
                rlim_cur: bytes as libc::rlim_t,
                rlim_max: bytes as libc::rlim_t,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &r) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    }
}

/// A small tmpfs mounted at a directory in a private mount namespace, so that a
/// test can fill a file system, or make it read-only, without touching the
/// machine's mounts and without root when user namespaces are available.
///
/// A holder process keeps the namespace alive; commands run inside it through
/// `nsenter`. The test process itself cannot see the mount (and SQLite resolves
/// `/proc/PID/root` links), so archives are inspected through copies
/// ([`Sandbox::copy_out`]). Dropping the sandbox ends the holder and, with it,
/// the mount.
pub struct Sandbox {
    holder: Child,
    pid: u32,
    userns: bool,
    pub mnt: PathBuf,
}

impl Sandbox {
    /// Mount a tmpfs of `size` (e.g. "3m") at `mnt` (an existing empty directory).
    /// Tries `unshare -m` (root), then `unshare -rm` (a user namespace); fails the
    /// test with the reason when neither works: the fault tests never skip.
    pub fn tmpfs(mnt: &Path, size: &str) -> Sandbox {
        let script =
            r#"mount -t tmpfs -o "size=$2" tmpfs "$1" || exit 1; echo ready; exec cat >/dev/null"#;
        let root = unsafe { libc::geteuid() } == 0;
        let mut errors = Vec::new();
        for userns in [false, true] {
            if !userns && !root {
                continue;
            }
            let mut c = Command::new("unshare");
            if userns {
                c.arg("-r");
            }
            c.args(["-m", "--propagation", "private", "sh", "-c", script, "sh"])
                .arg(mnt)
                .arg(size)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            let mut child = match c.spawn() {
                Ok(c) => c,
                Err(e) => {
                    errors.push(format!("cannot run unshare: {e}"));
                    continue;
                }
            };
            let out = child.stdout.take().unwrap();
            let line = lines(out, child.id(), "the tmpfs holder (unshare)")
                .next_within(Duration::from_secs(60))
                .unwrap_or_default();
            if line.trim() == "ready" {
                let pid = child.id();
                return Sandbox {
                    holder: child,
                    pid,
                    userns,
                    mnt: mnt.to_path_buf(),
                };
            }
            drop(child.stdin.take());
            let o = child.output_bounded().unwrap();
            errors.push(format!(
                "unshare {}-m: {}",
                if userns { "-r " } else { "" },
                String::from_utf8_lossy(&o.stderr).trim()
            ));
        }
        panic!(
            "the ENOSPC and read-only tests mount a small tmpfs in a private mount \
             namespace, and that failed ({}). Run them as root, or where user \
             namespaces are allowed (sysctl kernel.unprivileged_userns_clone=1).",
            errors.join("; ")
        );
    }

    /// A command that runs `prog` inside the namespace.
    pub fn command(&self, prog: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new("nsenter");
        c.arg("-t").arg(self.pid.to_string());
        if self.userns {
            c.args(["-U", "--preserve-credentials"]);
        }
        c.arg("-m").arg("--").arg(prog);
        c
    }

    /// Run one of our binaries inside the namespace.
    pub fn run<S: AsRef<std::ffi::OsStr>>(
        &self,
        name: &str,
        args: impl IntoIterator<Item = S>,
    ) -> Ended {
        let mut c = self.command(bin(name));
        c.args(args);
        run_to_end(c, &Stdin::Null)
    }

    /// Run a shell command line inside the namespace; it must succeed.
    pub fn sh(&self, script: &str) {
        let mut c = self.command("sh");
        c.arg("-c").arg(script);
        let e = run_to_end(c, &Stdin::Null);
        assert!(e.status.success(), "{script}: {}", e.stderr);
    }

    /// Give the file system a new size (e.g. more space after a full disk).
    pub fn resize(&self, size: &str) {
        self.sh(&format!(
            "mount -o remount,size={size} '{}'",
            self.mnt.display()
        ));
    }

    pub fn set_read_only(&self, ro: bool) {
        let mode = if ro { "ro" } else { "rw" };
        self.sh(&format!("mount -o remount,{mode} '{}'", self.mnt.display()));
    }

    /// `p` (a path below the mount point) as the test process reaches it: through
    /// the holder's root. For plain file operations only, never for SQLite.
    pub fn outside(&self, p: &Path) -> PathBuf {
        let rel = p.strip_prefix("/").unwrap_or(p);
        PathBuf::from(format!("/proc/{}/root", self.pid)).join(rel)
    }

    /// Fill the file system: a file of zeros grown until the disk is full.
    pub fn fill(&self, name: &str) {
        let p = self.outside(&self.mnt.join(name));
        let mut f = fs::File::create(&p).unwrap();
        let block = vec![0u8; 64 << 10];
        loop {
            match f.write(&block) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => break,
                Err(e) => panic!("{}: {e}", p.display()),
            }
        }
        // The last blocks fill up to the byte.
        let small = [0u8; 512];
        while f.write(&small).map(|n| n > 0).unwrap_or(false) {}
        let _ = f.sync_all();
    }

    pub fn remove(&self, name: &str) {
        fs::remove_file(self.outside(&self.mnt.join(name))).unwrap();
    }

    /// Names in a directory inside the mount.
    pub fn names(&self, dir: &Path) -> Vec<String> {
        names(&self.outside(dir))
    }

    /// Copy the archive at `archive` (below the mount point), with its shards and
    /// SQLite side files, to `to` on the test's own file system.
    pub fn copy_out(&self, archive: &Path, to: &Path) {
        let _ = Layout::remove(to);
        let dir = archive.parent().unwrap();
        let name = archive.file_name().unwrap().to_string_lossy().into_owned();
        let to_name = to.file_name().unwrap().to_string_lossy().into_owned();
        for n in self.names(dir) {
            if let Some(rest) = n.strip_prefix(&name) {
                if rest.is_empty() || rest.starts_with('-') {
                    let dest = to.with_file_name(format!("{to_name}{rest}"));
                    fs::copy(self.outside(&dir.join(&n)), &dest).unwrap();
                }
            }
        }
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        drop(self.holder.stdin.take());
        reap(&mut self.holder, Duration::from_secs(60));
    }
}
