//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The Python interpreter of the venv that holds barecat 0.3.1 from PyPI.
///
/// `scripts/test.sh` creates it and exports `BARECAT_PYTHON`; without it, the repo's
/// `.venv` is used. A missing interpreter fails the test: interop tests never skip.
pub fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("BARECAT_PYTHON") {
        return PathBuf::from(p);
    }
    let local = Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    assert!(
        local.exists(),
        "Python barecat 0.3.1 is needed for the interop tests: run ./scripts/test.sh \
         (it creates .venv), or set BARECAT_PYTHON"
    );
    local
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
        .output()
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
        .output()
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
