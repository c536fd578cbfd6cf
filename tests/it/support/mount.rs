//! Real FUSE mounts for the tests: a guard that never leaves a mount behind and a
//! watchdog that never lets a test hang on one.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::support::process::{reap, Watched};
use crate::support::{bin, CommandExt};

/// How long a test may use one mount before the watchdog kills its daemon (which
/// makes every pending request on it fail instead of hanging).
pub const WATCHDOG: Duration = Duration::from_secs(600);

/// Can this machine mount? `/dev/fuse` must exist (callers check `fusermount3`
/// with `need!`). Prints one skip line otherwise; fails under `CI=true`.
pub fn fuse_available() -> bool {
    if Path::new("/dev/fuse").exists() {
        return true;
    }
    if std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0") {
        panic!("/dev/fuse is missing: CI must be able to mount FUSE file systems");
    }
    let test = std::thread::current()
        .name()
        .unwrap_or("this test")
        .to_string();
    eprintln!("skipped {test}: /dev/fuse is missing (no FUSE on this machine)");
    false
}

/// Is `dir` a mount point now (per /proc/self/mountinfo)?
pub fn is_mounted(dir: &Path) -> bool {
    let dir = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let text = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let want = dir.to_string_lossy().replace(' ', "\\040");
    text.lines()
        .any(|l| l.split(' ').nth(4) == Some(want.as_str()))
}

/// The pid of the `barecat-mount` daemon serving `dir`.
pub fn daemon_pid(dir: &Path) -> Option<u32> {
    use std::os::unix::ffi::OsStrExt;
    let dir = fs::canonicalize(dir).ok()?;
    let me = std::process::id();
    for e in fs::read_dir("/proc").ok()?.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(cmd) = fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let args: Vec<&[u8]> = cmd.split(|b| *b == 0).collect();
        let is_mount = args
            .first()
            .is_some_and(|a| a.ends_with(b"barecat-mount") || a.ends_with(b"barecat"));
        let names_dir = args.iter().any(|a| {
            fs::canonicalize(Path::new(std::ffi::OsStr::from_bytes(a))).is_ok_and(|p| p == dir)
        });
        if is_mount && names_dir && !args.iter().any(|a| *a == b"-u") {
            return Some(pid);
        }
    }
    None
}

fn kill(pid: u32) {
    // SAFETY: plain kill(2) of a daemon this test started.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
}

fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
        && !fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|s| s.split(") ").nth(1).is_some_and(|r| r.starts_with('Z')))
}

/// Unmount `dir` if it is mounted: normally, else detached at once (`-u -z`).
fn force_unmount(dir: &Path) {
    for args in [["-u"].as_slice(), ["-u", "-z"].as_slice()] {
        if !is_mounted(dir) {
            return;
        }
        // Called from drops and the watchdog: a hang is reported, never a panic.
        let mut c = Command::new(bin("barecat-mount"));
        c.args(args)
            .arg(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        match Watched::spawn(&mut c).map(|w| w.finish(Duration::from_secs(60))) {
            Ok(Err(timeout)) => eprintln!("{timeout}"),
            Err(e) => eprintln!("cannot run barecat-mount: {e}"),
            Ok(Ok(_)) => {}
        }
    }
}

/// A mounted archive. Dropping it unmounts (lazily if busy) and waits for the
/// daemon to end (killing it after 20 s), whatever the test did.
pub struct Mounted {
    pub dir: PathBuf,
    /// The daemon when it runs in the foreground as our child.
    pub child: Option<Child>,
    pub pid: Option<u32>,
    stop: Option<mpsc::Sender<()>>,
}

impl Mounted {
    pub fn guard(dir: &Path, child: Option<Child>) -> Mounted {
        let pid = child.as_ref().map(|c| c.id()).or_else(|| daemon_pid(dir));
        let (tx, rx) = mpsc::channel::<()>();
        let d = dir.to_path_buf();
        std::thread::spawn(move || {
            if let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(WATCHDOG) {
                eprintln!(
                    "watchdog: killing the daemon of {} after {WATCHDOG:?}",
                    d.display()
                );
                if let Some(pid) = pid {
                    kill(pid);
                }
                force_unmount(&d);
            }
        });
        Mounted {
            dir: dir.to_path_buf(),
            child,
            pid,
            stop: Some(tx),
        }
    }

    /// `dir/rel`.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    /// Unmount with `barecat-mount -u` and check that it worked.
    pub fn unmount(mut self) {
        let out = retry_busy(|| {
            Command::new(bin("barecat-mount"))
                .arg("-u")
                .arg(&self.dir)
                .output_bounded()
                .unwrap()
        });
        assert!(
            out.status.success(),
            "barecat-mount -u failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!is_mounted(&self.dir), "still mounted after -u");
        self.wait_daemon();
    }

    fn wait_daemon(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        if let Some(c) = self.child.as_mut() {
            while Instant::now() < deadline {
                if c.try_wait().ok().flatten().is_some() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = c.kill();
            reap(c, Duration::from_secs(60));
        } else if let Some(pid) = self.pid {
            while alive(pid) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            if alive(pid) {
                kill(pid);
            }
        }
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        force_unmount(&self.dir);
        self.wait_daemon();
    }
}

/// Mount `archive` on `dir` (created if missing) with `barecat-mount`, detached;
/// the command must succeed and the mount must be usable at once.
pub fn mount(archive: &Path, dir: &Path, args: &[&str]) -> Mounted {
    fs::create_dir_all(dir).unwrap();
    let out = Command::new(bin("barecat-mount"))
        .args(args)
        .arg(archive)
        .arg(dir)
        .output_bounded()
        .unwrap();
    let m = Mounted::guard(dir, None);
    assert!(
        out.status.success(),
        "barecat-mount failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        is_mounted(dir),
        "barecat-mount returned before the mount was ready"
    );
    m
}

/// Mount in the foreground (`-f`) as a child process whose stderr goes to
/// `stderr_to`; returns once the mount is there.
pub fn mount_foreground(archive: &Path, dir: &Path, args: &[&str], stderr_to: &Path) -> Mounted {
    fs::create_dir_all(dir).unwrap();
    let child = Command::new(bin("barecat-mount"))
        .arg("-f")
        .args(args)
        .arg(archive)
        .arg(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(fs::File::create(stderr_to).unwrap())
        .spawn()
        .unwrap();
    let mut m = Mounted::guard(dir, Some(child));
    let deadline = Instant::now() + Duration::from_secs(60);
    while !is_mounted(dir) {
        if let Some(st) = m.child.as_mut().unwrap().try_wait().unwrap() {
            panic!(
                "barecat-mount -f exited ({st}): {}",
                fs::read_to_string(stderr_to).unwrap_or_default()
            );
        }
        assert!(Instant::now() < deadline, "no mount after 60 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    m
}

/// Run an unmount command again while it fails with "busy", for up to 10 s: in a
/// test process, another test thread's fork holds a copy of our open descriptors
/// until its child execs.
pub fn retry_busy(mut unmount: impl FnMut() -> std::process::Output) -> std::process::Output {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let out = unmount();
        let busy = String::from_utf8_lossy(&out.stderr).contains("busy");
        if out.status.success() || !busy || Instant::now() > deadline {
            return out;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `fusermount3 -u DIR`, which must succeed (see [`retry_busy`]).
pub fn fusermount_u(dir: &Path) {
    let out = retry_busy(|| {
        Command::new("fusermount3")
            .arg("-u")
            .arg(dir)
            .output_bounded()
            .unwrap()
    });
    assert!(
        out.status.success(),
        "fusermount3 -u failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
