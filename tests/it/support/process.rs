//! Every wait of the tests is bounded: for a child process to end, for its output
//! to reach end of file, for a line from a server or a helper. When a bound passes,
//! the report names the command, prints the stacks of its threads (with `gdb` when
//! it is on PATH, a `diag` peer of tests/peers.txt; the kernel's view otherwise) and
//! of its own children, and what it wrote so far; then the processes are killed and
//! the test fails with that report.
//!
//! The bounds are generous ([`BOUND`] by default): they catch hangs, not slowness.

use std::io::{BufRead, Read};
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The default bound of a wait: long enough for the slowest command of the suite
/// on a loaded 2-core machine, short enough that a hang fails before CI's limit.
pub const BOUND: Duration = Duration::from_secs(600);

/// Bytes of a child's stdout and stderr shown in a timeout report (the tail).
const SHOWN: usize = 8 << 10;

/// Bounded versions of [`Command`]'s waits.
pub trait CommandExt {
    /// [`Command::output`] that gives up after `bound`: stdin is `/dev/null`, stdout
    /// and stderr are captured (whatever the command set before: see
    /// [`CommandExt::output_with_stdin`]). Spawn errors are returned; a timeout
    /// fails the test.
    fn output_within(&mut self, bound: Duration) -> std::io::Result<Output>;

    /// [`Command::output`] within [`BOUND`].
    fn output_bounded(&mut self) -> std::io::Result<Output> {
        self.output_within(BOUND)
    }

    /// [`Command::output_bounded`] with `stdin` on the standard input (a file, a
    /// pipe end) instead of `/dev/null`.
    fn output_with_stdin(&mut self, stdin: impl Into<Stdio>) -> std::io::Result<Output>;

    /// [`Command::status`] (stdio as configured, inherited by default) within `bound`.
    fn status_within(&mut self, bound: Duration) -> std::io::Result<ExitStatus>;

    /// [`Command::status`] within [`BOUND`].
    fn status_bounded(&mut self) -> std::io::Result<ExitStatus> {
        self.status_within(BOUND)
    }
}

impl CommandExt for Command {
    fn output_within(&mut self, bound: Duration) -> std::io::Result<Output> {
        self.stdin(Stdio::null());
        captured(self, bound)
    }

    fn output_with_stdin(&mut self, stdin: impl Into<Stdio>) -> std::io::Result<Output> {
        self.stdin(stdin);
        captured(self, BOUND)
    }

    fn status_within(&mut self, bound: Duration) -> std::io::Result<ExitStatus> {
        let what = describe(self);
        let child = self.spawn()?;
        Ok(Watched::new(child, what)
            .finish(bound)
            .unwrap_or_else(fail)
            .status)
    }
}

fn captured(cmd: &mut Command, bound: Duration) -> std::io::Result<Output> {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let what = describe(cmd);
    let child = cmd.spawn()?;
    Ok(Watched::new(child, what).finish(bound).unwrap_or_else(fail))
}

/// Bounded versions of [`Child`]'s waits.
pub trait ChildExt {
    /// [`Child::wait`] that gives up after `bound` (the test fails).
    fn wait_within(&mut self, bound: Duration) -> std::io::Result<ExitStatus>;

    /// [`Child::wait`] within [`BOUND`].
    fn wait_bounded(&mut self) -> std::io::Result<ExitStatus> {
        self.wait_within(BOUND)
    }

    /// [`Child::wait_with_output`] that gives up after `bound`: the end of the child
    /// and the end of file on its piped stdout and stderr (a descendant holding a
    /// pipe open counts as a hang too).
    fn output_within(self, bound: Duration) -> std::io::Result<Output>;

    /// [`Child::wait_with_output`] within [`BOUND`].
    fn output_bounded(self) -> std::io::Result<Output>
    where
        Self: Sized,
    {
        self.output_within(BOUND)
    }
}

impl ChildExt for Child {
    fn wait_within(&mut self, bound: Duration) -> std::io::Result<ExitStatus> {
        let deadline = Instant::now() + bound;
        loop {
            if let Some(status) = self.try_wait()? {
                return Ok(status);
            }
            if Instant::now() >= deadline {
                let what = cmdline(self.id());
                let report = timed_out(self.id(), &what, bound, &[]);
                let _ = self.kill();
                let _ = self.wait();
                panic!("{report}");
            }
            pause(deadline);
        }
    }

    fn output_within(self, bound: Duration) -> std::io::Result<Output> {
        let what = cmdline(self.id());
        Ok(Watched::new(self, what).finish(bound).unwrap_or_else(fail))
    }
}

/// A wait that passed its bound: the report, the processes already killed.
#[derive(Debug)]
pub struct TimedOut(pub String);

impl std::fmt::Display for TimedOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn fail<T>(t: TimedOut) -> T {
    panic!("{t}")
}

/// A running child whose piped stdout and stderr are read on threads as they come,
/// so that neither a large output nor a hang blocks the test: the output so far is
/// there for a timeout report.
pub struct Watched {
    child: Child,
    what: String,
    readers: Vec<(Captured, JoinHandle<()>)>,
    stdout: Option<Captured>,
    stderr: Option<Captured>,
}

type Captured = Arc<Mutex<Vec<u8>>>;

fn drain(mut r: impl Read + Send + 'static) -> (Captured, JoinHandle<()>) {
    let buf: Captured = Arc::default();
    let b = buf.clone();
    let h = std::thread::spawn(move || {
        let mut chunk = [0u8; 16 << 10];
        loop {
            match r.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => b.lock().unwrap().extend_from_slice(&chunk[..n]),
            }
        }
    });
    (buf, h)
}

impl Watched {
    /// Watch `child` (`what` names it in reports); its piped stdout and stderr, if
    /// any, are taken and read from now on.
    pub fn new(mut child: Child, what: String) -> Watched {
        let mut readers = Vec::new();
        let stdout = child.stdout.take().map(|p| {
            let (buf, h) = drain(p);
            readers.push((buf.clone(), h));
            buf
        });
        let stderr = child.stderr.take().map(|p| {
            let (buf, h) = drain(p);
            readers.push((buf.clone(), h));
            buf
        });
        Watched {
            child,
            what,
            readers,
            stdout,
            stderr,
        }
    }

    /// Spawn `cmd` (stdio as configured) and watch it.
    pub fn spawn(cmd: &mut Command) -> std::io::Result<Watched> {
        let what = describe(cmd);
        Ok(Watched::new(cmd.spawn()?, what))
    }

    /// The child's stdin, when piped.
    pub fn stdin(&mut self) -> Option<std::process::ChildStdin> {
        self.child.stdin.take()
    }

    /// Has it exited? (Does not wait.)
    pub fn try_status(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().expect("waitpid")
    }

    /// SIGKILL the child (not its descendants).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
    }

    /// Wait at most `bound` for the child to exit and for end of file on its
    /// pipes. On timeout, the report; the child and its descendants are killed.
    pub fn finish(mut self, bound: Duration) -> Result<Output, TimedOut> {
        let deadline = Instant::now() + bound;
        let status = loop {
            if let Some(s) = self.try_status() {
                break s;
            }
            if Instant::now() >= deadline {
                return Err(self.give_up(bound, "did not end"));
            }
            pause(deadline);
        };
        while self.readers.iter().any(|(_, h)| !h.is_finished()) {
            if Instant::now() >= deadline {
                return Err(self.give_up(
                    bound,
                    &format!("ended ({status}) but its output stayed open (held by a descendant)"),
                ));
            }
            pause(deadline);
        }
        for (_, h) in self.readers.drain(..) {
            h.join().unwrap();
        }
        let take = |c: Option<Captured>| c.map(|b| std::mem::take(&mut *b.lock().unwrap()));
        Ok(Output {
            status,
            stdout: take(self.stdout.take()).unwrap_or_default(),
            stderr: take(self.stderr.take()).unwrap_or_default(),
        })
    }

    fn give_up(&mut self, bound: Duration, how: &str) -> TimedOut {
        let pid = self.child.id();
        let shown: Vec<(&str, Vec<u8>)> = [("stdout", &self.stdout), ("stderr", &self.stderr)]
            .into_iter()
            .filter_map(|(n, c)| c.as_ref().map(|b| (n, b.lock().unwrap().clone())))
            .collect();
        let shown: Vec<(&str, &[u8])> = shown.iter().map(|(n, b)| (*n, &b[..])).collect();
        let mut report = timed_out(pid, &self.what, bound, &shown);
        report = report.replacen("did not end", how, 1);
        for p in descendants(pid) {
            // SAFETY: plain kill(2) of a process of this test.
            unsafe { libc::kill(p as i32, libc::SIGKILL) };
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        TimedOut(report)
    }
}

/// Wait at most `bound` for the forked child `pid` (not a [`Child`]): its exit
/// code; or, when it was ended by a signal or passed the bound, the reason (after a
/// timeout with its stacks, the child killed).
pub fn wait_pid_within(pid: libc::pid_t, bound: Duration) -> Result<i32, String> {
    let deadline = Instant::now() + bound;
    loop {
        let mut status = 0;
        // SAFETY: waiting for our own child.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r == pid {
            let st = ExitStatus::from_raw(status);
            return st
                .code()
                .ok_or_else(|| format!("child {pid} ended by signal, status {st}"));
        }
        if r < 0 {
            return Err(format!(
                "waitpid({pid}): {}",
                std::io::Error::last_os_error()
            ));
        }
        if Instant::now() >= deadline {
            let report = timed_out(pid as u32, &format!("forked child {pid}"), bound, &[]);
            // SAFETY: our own child.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            return Err(report);
        }
        pause(deadline);
    }
}

/// Read one line from a child's pipe (`reader`), at most `bound`: `None` at end of
/// file. On timeout the child `pid` (named `what`) is reported, killed, and the
/// test fails. The reader moves to a thread that keeps reading lines into the
/// returned [`Lines`], so later lines are bounded the same way.
pub fn lines<R: Read + Send + 'static>(reader: R, pid: u32, what: &str) -> Lines {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut r = std::io::BufReader::new(reader);
        loop {
            let mut line = String::new();
            match r.read_line(&mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            }
        }
    });
    Lines {
        rx,
        pid,
        what: what.to_string(),
    }
}

/// The lines a child writes to a pipe, each awaited within a bound (see [`lines`]).
pub struct Lines {
    rx: mpsc::Receiver<String>,
    pid: u32,
    what: String,
}

impl Lines {
    /// The next line (with its newline), `None` at end of file; the test fails
    /// with a report after `bound`.
    pub fn next_within(&self, bound: Duration) -> Option<String> {
        match self.rx.recv_timeout(bound) {
            Ok(l) => Some(l),
            Err(mpsc::RecvTimeoutError::Disconnected) => None,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let report = timed_out(
                    self.pid,
                    &format!("{} (waiting for a line of its output)", self.what),
                    bound,
                    &[],
                );
                // SAFETY: plain kill(2) of the test's own child.
                unsafe { libc::kill(self.pid as i32, libc::SIGKILL) };
                fail(TimedOut(report))
            }
        }
    }
}

/// Wait for a child being torn down (a guard's `Drop`): at most `bound`, then kill
/// it. Never panics (a panic in a drop while unwinding aborts the test binary):
/// a hang is reported on stderr.
pub fn reap(child: &mut Child, bound: Duration) {
    let deadline = Instant::now() + bound;
    loop {
        match child.try_wait() {
            Ok(Some(_)) | Err(_) => return,
            Ok(None) => {}
        }
        if Instant::now() >= deadline {
            let what = cmdline(child.id());
            eprintln!("{}", timed_out(child.id(), &what, bound, &[]));
            let _ = child.kill();
            let _ = child.wait();
            return;
        }
        pause(deadline);
    }
}

/// Sleep a little before polling again, never past `deadline`.
fn pause(deadline: Instant) {
    let left = deadline.saturating_duration_since(Instant::now());
    std::thread::sleep(left.min(Duration::from_micros(500)));
}

/// The program and arguments of `cmd`, for messages.
fn describe(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

/// The command line of a running process, for messages.
fn cmdline(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| {
            String::from_utf8_lossy(&b)
                .trim_end_matches('\0')
                .replace('\0', " ")
        })
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| format!("process {pid}"))
}

/// The living descendants of `pid` (children first).
fn descendants(pid: u32) -> Vec<u32> {
    let mut parent_of = Vec::new();
    if let Ok(d) = std::fs::read_dir("/proc") {
        for e in d.flatten() {
            let Ok(p) = e.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
                continue;
            };
            // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
            let ppid = stat
                .rsplit_once(") ")
                .and_then(|(_, r)| r.split(' ').nth(1))
                .and_then(|s| s.parse::<u32>().ok());
            if let Some(pp) = ppid {
                parent_of.push((p, pp));
            }
        }
    }
    let mut out = Vec::new();
    let mut frontier = vec![pid];
    while let Some(p) = frontier.pop() {
        for &(c, pp) in &parent_of {
            if pp == p && !out.contains(&c) {
                out.push(c);
                frontier.push(c);
            }
        }
    }
    out
}

/// The report of a wait that passed its bound: the command, the stacks of the
/// process and of its descendants, and the tail of what it wrote.
fn timed_out(pid: u32, what: &str, bound: Duration, output: &[(&str, &[u8])]) -> String {
    let mut r =
        format!("TIMEOUT: `{what}` (pid {pid}) did not end within {bound:?}; it is killed.\n");
    for p in std::iter::once(pid).chain(descendants(pid).into_iter().take(7)) {
        r.push_str(&format!("--- stacks of {} (pid {p}):\n", cmdline(p)));
        r.push_str(&stacks(p));
        r.push('\n');
    }
    for (name, bytes) in output {
        let tail = &bytes[bytes.len().saturating_sub(SHOWN)..];
        r.push_str(&format!(
            "--- its {name} ({} bytes{}):\n{}\n",
            bytes.len(),
            if tail.len() < bytes.len() {
                ", the end"
            } else {
                ""
            },
            String::from_utf8_lossy(tail)
        ));
    }
    r
}

/// The stacks of every thread of `pid`: `gdb -batch -p PID -ex 'thread apply all
/// bt'` (itself bounded) when gdb is on PATH, else the kernel's view (each
/// thread's wait channel and, as root, its kernel stack).
pub fn stacks(pid: u32) -> String {
    if crate::support::on_path("gdb") {
        let child = Command::new("gdb")
            .args(["-batch", "-nx", "-p", &pid.to_string()])
            .args(["-ex", "thread apply all bt"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn();
        if let Ok(child) = child {
            let what = format!("gdb -p {pid}");
            match Watched::new(child, what).finish(Duration::from_secs(60)) {
                Ok(o) => return String::from_utf8_lossy(&o.stdout).into_owned(),
                Err(t) => return format!("(gdb hung: {})", t.0.lines().next().unwrap_or("")),
            }
        }
    }
    let mut s = String::from("(gdb is not on PATH: the kernel's view)\n");
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task"));
    for t in tasks.into_iter().flatten().flatten() {
        let p = t.path();
        let name = std::fs::read_to_string(p.join("comm")).unwrap_or_default();
        let wchan = std::fs::read_to_string(p.join("wchan")).unwrap_or_default();
        let stack = std::fs::read_to_string(p.join("stack")).unwrap_or_default();
        s.push_str(&format!(
            "thread {} {}: waiting in {wchan}\n{stack}",
            t.file_name().to_string_lossy(),
            name.trim()
        ));
    }
    s
}

#[test]
fn a_wait_past_its_bound_reports_kills_and_fails() {
    let start = Instant::now();
    let mut cmd = Command::new("sh");
    cmd.args(["-c", "echo started; echo oops >&2; exec sleep 30"]);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        cmd.output_within(Duration::from_secs(1))
    }));
    let msg = *r
        .expect_err("a 30 s command finished within 1 s")
        .downcast::<String>()
        .unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(25),
        "not killed in time"
    );
    assert!(msg.starts_with("TIMEOUT: `sh -c echo started;"), "{msg}");
    assert!(msg.contains("did not end within 1s"), "{msg}");
    assert!(msg.contains("--- stacks of sleep 30"), "{msg}");
    assert!(msg.contains("--- its stdout (8 bytes):\nstarted"), "{msg}");
    assert!(msg.contains("--- its stderr (5 bytes):\noops"), "{msg}");

    // A child that ends but leaves its output open (a descendant holds it).
    let mut cmd = Command::new("sh");
    cmd.args(["-c", "sleep 30 & echo parent done"]);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        cmd.output_within(Duration::from_secs(1))
    }));
    let msg = *r.unwrap_err().downcast::<String>().unwrap();
    assert!(msg.contains("but its output stayed open"), "{msg}");
    assert!(msg.contains("parent done"), "{msg}");

    // Forked children and `Child::wait` are bounded the same way.
    let mut child = Command::new("sleep").arg("30").spawn().unwrap();
    let pid = child.id();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        child.wait_within(Duration::from_millis(300))
    }));
    let msg = *r.unwrap_err().downcast::<String>().unwrap();
    assert!(
        msg.contains(&format!("`sleep 30` (pid {pid}) did not end")),
        "{msg}"
    );
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "not reaped"
    );

    // A command that ends in time gives its output as `Command::output` does.
    let o = Command::new("sh")
        .args(["-c", "echo out; echo err >&2; exit 3"])
        .output_bounded()
        .unwrap();
    assert_eq!(
        (o.status.code(), &o.stdout[..], &o.stderr[..]),
        (Some(3), &b"out\n"[..], &b"err\n"[..])
    );
}
