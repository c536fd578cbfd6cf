//! Helpers shared by the integration tests: the peers of tests/peers.txt and
//! `need!`, running commands (every wait bounded: [`process`]), data and checks;
//! one submodule per family of helpers.

pub mod export;
#[macro_use]
pub mod harness;
pub mod ingest;
pub mod maint;
pub mod mount;
pub mod process;
pub mod reference;
pub mod remote;
pub mod v02;

pub use process::{ChildExt, CommandExt};

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The Python interpreter of the test venv (Python barecat 0.3.1 from PyPI and the
/// other `pip` peers of tests/peers.txt).
///
/// `scripts/test.sh` creates it and exports `BARECAT_PYTHON`; without it, the repo's
/// `.venv` is used. Tests that run it start with `need!("barecat")` (or the pip peer
/// they use), which skips them where the venv is missing.
pub fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("BARECAT_PYTHON") {
        return PathBuf::from(p);
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python")
}

/// Skip the calling test unless every named peer of tests/peers.txt is available:
/// prints one line naming the missing peer and how to install it, then returns from
/// the test. Under `CI=true` a missing peer fails the test instead.
#[macro_export]
macro_rules! need {
    ($($peer:expr),+ $(,)?) => {
        if !$crate::support::have_all(&[$($peer),+]) {
            return;
        }
    };
}

/// One row of tests/peers.txt.
#[derive(Clone, Debug)]
pub struct Peer {
    /// `apt` (a program on PATH) or `pip` (a module importable by [`python`]).
    pub kind: String,
    pub name: String,
    /// The Debian package or the pip requirement that provides it.
    pub install: String,
}

/// The peers of tests/peers.txt.
pub fn peers() -> &'static [Peer] {
    static PEERS: std::sync::OnceLock<Vec<Peer>> = std::sync::OnceLock::new();
    PEERS.get_or_init(|| {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers.txt");
        let text = fs::read_to_string(&manifest).expect("tests/peers.txt");
        text.lines()
            .map(|l| l.trim())
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(|l| {
                let mut f = l.split_whitespace();
                let (kind, name, install) = (f.next(), f.next(), f.next());
                Peer {
                    kind: kind.unwrap().to_string(),
                    name: name.expect("peer name").to_string(),
                    install: install.expect("peer install").to_string(),
                }
            })
            .collect()
    })
}

/// Is `program` an executable file on PATH (or a path to one)?
pub fn on_path(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let is_exe = |p: &Path| {
        fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        return is_exe(Path::new(program));
    }
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| is_exe(&d.join(program))))
}

/// Is the peer present? (Not cached: a check costs one `stat` or one Python start.)
fn present(peer: &Peer) -> bool {
    match peer.kind.as_str() {
        "apt" | "diag" => on_path(&peer.name),
        "pip" => Command::new(python())
            .args(["-c", &format!("import {}", peer.name)])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status_bounded()
            .is_ok_and(|s| s.success()),
        k => panic!("tests/peers.txt: unknown kind {k:?} for {}", peer.name),
    }
}

/// Are all these peers available? Prints one skip line per missing peer (written
/// to the real stderr, past the test harness's capture); panics under `CI=true`.
pub fn have_all(names: &[&str]) -> bool {
    use std::io::Write;
    static CHECKED: std::sync::Mutex<Vec<(String, bool)>> = std::sync::Mutex::new(Vec::new());
    let mut ok = true;
    for name in names {
        let peer = peers()
            .iter()
            .find(|p| p.name == *name)
            .unwrap_or_else(|| panic!("peer {name:?} is not listed in tests/peers.txt"));
        let cached = CHECKED
            .lock()
            .unwrap()
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v);
        let here = cached.unwrap_or_else(|| {
            let v = present(peer);
            CHECKED.lock().unwrap().push((name.to_string(), v));
            v
        });
        if here {
            continue;
        }
        ok = false;
        let how = match peer.kind.as_str() {
            "apt" => format!("apt-get install {}", peer.install),
            _ => format!("{} -m pip install '{}'", python().display(), peer.install),
        };
        let test = std::thread::current()
            .name()
            .unwrap_or("this test")
            .to_string();
        if std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0") {
            panic!("{name} is missing ({how}): CI must have every peer of tests/peers.txt");
        }
        let _ = writeln!(
            std::io::stderr(),
            "skipped {test}: {name} is not installed ({how}, or run ./scripts/test.sh)"
        );
    }
    ok
}

/// The `barecat` console script of the same venv.
pub fn py_barecat() -> PathBuf {
    python().with_file_name("barecat")
}

/// A Python helper script of tests/py.
pub fn py_script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/py")
        .join(name)
}

/// Run a command and return its output (not checked).
pub fn run<I, S>(program: impl AsRef<OsStr>, args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    Command::new(program.as_ref())
        .args(args)
        .output_bounded()
        .unwrap_or_else(|e| panic!("cannot run {:?}: {e}", program.as_ref()))
}

/// Run a command that must succeed; returns stdout.
pub fn run_ok<I, S>(program: impl AsRef<OsStr>, args: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let out = run(program.as_ref(), args);
    assert!(
        out.status.success(),
        "{:?} failed ({}):\nstdout: {}\nstderr: {}",
        program.as_ref(),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Run a command in `dir` that must succeed; returns stdout.
pub fn run_ok_in<I, S>(dir: &Path, program: impl AsRef<OsStr>, args: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let out = Command::new(program.as_ref())
        .args(args)
        .current_dir(dir)
        .output_bounded()
        .unwrap_or_else(|e| panic!("cannot run {:?}: {e}", program.as_ref()));
    assert!(
        out.status.success(),
        "{:?} failed ({}):\nstdout: {}\nstderr: {}",
        program.as_ref(),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Run a tests/py script with the venv's Python; it must succeed.
pub fn py<I, S>(script: &str, args: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut all: Vec<std::ffi::OsString> = vec![py_script(script).into()];
    all.extend(args.into_iter().map(|a| a.as_ref().to_owned()));
    run_ok(python(), all)
}

/// Python's view of an archive (tests/py/dump.py).
pub fn py_dump(archive: &Path) -> serde_json::Value {
    let out = archive.with_extension("dump.json");
    py("dump.py", [archive.as_os_str(), out.as_os_str()]);
    serde_json::from_slice(&fs::read(&out).unwrap()).unwrap()
}

/// Path of one of this package's binaries.
pub fn bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    let p = dir.join(name);
    assert!(p.exists(), "binary {} not built", p.display());
    p
}

/// Write files (path → content) below `root`, creating directories.
pub fn write_tree(root: &Path, files: &[(&str, &[u8])]) {
    for (p, data) in files {
        let full = root.join(p);
        fs::create_dir_all(full.parent().unwrap()).unwrap();
        fs::write(full, data).unwrap();
    }
}

/// Deterministic pseudo-random bytes.
pub fn pseudo_random(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407)
        | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// Assert that stderr is one clean line: no panic, no backtrace.
pub fn assert_clean_error(out: &Output) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "panic: {err}");
    assert!(!err.contains("stack backtrace"), "backtrace: {err}");
    assert!(!err.contains("internal error"), "internal error: {err}");
    assert!(!err.trim().is_empty(), "no error message");
    assert_eq!(err.trim().lines().count(), 1, "more than one line: {err}");
}

/// Python barecat's `verify` of an archive must pass; returns its stdout.
pub fn py_verify(archive: &Path) -> String {
    let out = run(
        py_barecat(),
        [std::ffi::OsStr::new("verify"), archive.as_os_str()],
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "python barecat verify failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Exit status of a finished command (-1 when a signal ended it).
pub fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

/// A finished command's stdout as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A finished command's stderr as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A file's modification time in nanoseconds (of the link itself for a symlink).
pub fn mtime_ns(p: &Path) -> i64 {
    use std::os::unix::fs::MetadataExt;
    let m = fs::symlink_metadata(p).unwrap();
    m.mtime() * 1_000_000_000 + m.mtime_nsec()
}

/// Run the `#[ignore]`d test `name` (its full path, e.g.
/// `library::scale_walks::walks_counted`) alone in a child process of this test
/// binary, and fail with its output if it fails. For tests that measure
/// process-wide counters, which the tests running beside them in this process
/// would disturb.
pub fn run_isolated(name: &str) {
    let exe = std::env::current_exe().unwrap();
    let o = Command::new(exe)
        .args([
            name,
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .output_bounded()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && out.contains("1 passed"),
        "{name} (alone in a child process) failed:\n{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
