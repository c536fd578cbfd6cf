//! The mount as a process: detach once the mount is ready, unmount on a signal.
//!
//! Why: `barecat-mount A M && ls M` must work on the next line of a script, so the
//! command returns only when the kernel serves the mount, and returns its error
//! otherwise. The process forks before any thread exists (threads do not survive a
//! fork); the parent waits on a pipe for the child's "mounted" message or its error.
//! SIGTERM, SIGINT and SIGHUP are handled by a thread of their own (they are blocked
//! everywhere else), which unmounts; the session then ends and a writable mount
//! commits what is left before the process exits.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fuser::{Config, MountOption, Session, SessionACL};

use super::fs::{Fs, FuseFs, Log, Settings, READ_AHEAD_KB};
use super::write::{Policy, Writable};
use crate::core::error::{Error, Result};
use crate::core::writer::{ArchiveWriter, CreateMode, WriterOptions};
use crate::Archive;

/// How to mount.
#[derive(Debug, Clone, Default)]
pub struct MountOptions {
    /// Accept writes (through [`ArchiveWriter`]); otherwise the mount is read-only.
    pub writable: bool,
    /// Stay in the foreground instead of detaching once the mount is ready.
    pub foreground: bool,
    /// FUSE mount options (`-o`): `allow_other`, `allow_root`, `ro`, `default_permissions`, …
    pub options: Vec<String>,
    /// Owner shown for every entry instead of the stored one.
    pub uid: Option<u32>,
    /// Group shown for every entry instead of the stored one.
    pub gid: Option<u32>,
    /// Permission bits cleared from every entry's mode.
    pub umask: Option<u32>,
    /// Where the daemon logs (CRC mismatches, I/O errors): this file; otherwise
    /// stderr in the foreground and syslog once detached.
    pub log: Option<PathBuf>,
    /// Threads serving requests (0: one per core, at least 2).
    pub threads: usize,
    /// Writable mounts: start a new, empty archive in place of the one there.
    pub overwrite: bool,
    /// Writable mounts: only additions (no removal, rename or change to the bytes
    /// of an existing file: `EPERM`).
    pub append_only: bool,
    /// Writable mounts: defragment now and then (see `super::write`).
    pub defrag: bool,
    /// Writable mounts: the archive's shard size limit from now on.
    pub shard_size_limit: Option<u64>,
}

impl MountOptions {
    /// Take the options of Python barecat's `barecat mount -o` out of the FUSE
    /// options: `rw` (writable), `fg`/`foreground`, `mmap` (no effect: reads
    /// always go through the kernel's page cache), `overwrite`, `append_only`,
    /// `defrag`, `shard_size_limit=SIZE`. Then check that the options fit together
    /// (the message of the error is for the user).
    pub fn normalize(&mut self) -> std::result::Result<(), String> {
        let mut fuse = Vec::new();
        for o in self.options.iter().flat_map(|o| o.split(',')) {
            match o.trim() {
                "rw" => {
                    self.writable = true;
                    fuse.push("rw".to_string());
                }
                "fg" | "foreground" => self.foreground = true,
                "mmap" => {}
                "overwrite" => self.overwrite = true,
                "append_only" => self.append_only = true,
                "defrag" => self.defrag = true,
                o => match o.strip_prefix("shard_size_limit=") {
                    Some(size) => {
                        self.shard_size_limit = Some(
                            crate::core::size::parse_size(size)
                                .map_err(|e| format!("-o shard_size_limit: {e}"))?,
                        )
                    }
                    None if !o.is_empty() => fuse.push(o.to_string()),
                    None => {}
                },
            }
        }
        self.options = fuse;
        if !self.writable {
            for (set, what) in [
                (self.overwrite, "overwrite"),
                (self.append_only, "append-only"),
                (self.shard_size_limit.is_some(), "shard-size-limit"),
            ] {
                if set {
                    return Err(format!("--{what} needs --writable (or -o rw)"));
                }
            }
        }
        if self.writable && self.options.iter().any(|o| o == "ro") {
            return Err("-o ro and --writable (or -o rw) contradict each other".into());
        }
        Ok(())
    }
}

fn mount_error(path: &Path, detail: impl std::fmt::Display) -> Error {
    Error::Mount {
        path: path.to_path_buf(),
        detail: detail.to_string(),
    }
}

/// Mount `archive` at `mountpoint`. In the foreground, returns when the file system
/// has been unmounted; otherwise returns once the mount is ready, leaving a daemon
/// that serves it.
pub fn mount(archive: &Path, mountpoint: &Path, opts: &MountOptions) -> Result<()> {
    let mut opts = opts.clone();
    opts.normalize().map_err(Error::InvalidOperation)?;
    let opts = &opts;
    let remote = crate::core::location::is_remote(archive);
    if remote && opts.writable {
        return Err(mount_error(
            archive,
            "a remote archive is mounted read-only (writing to remote storage is not supported)",
        ));
    }
    let archive_abs = if remote {
        archive.to_path_buf()
    } else {
        std::path::absolute(archive).map_err(|e| Error::io(archive, e))?
    };
    let mountpoint = std::fs::canonicalize(mountpoint).map_err(|e| Error::io(mountpoint, e))?;
    if !mountpoint.is_dir() {
        return Err(mount_error(&mountpoint, "not a directory"));
    }
    if opts.foreground {
        return serve(&archive_abs, &mountpoint, opts, None);
    }
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two descriptors that we own from here on.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(Error::io("pipe", std::io::Error::last_os_error()));
    }
    // SAFETY: the descriptors were just created and are owned by nobody else.
    let (mut rx, tx) = unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) };
    // SAFETY: no thread has been started yet (the command forks first thing), so the
    // child is a complete copy of this process.
    match unsafe { libc::fork() } {
        -1 => Err(Error::io("fork", std::io::Error::last_os_error())),
        0 => {
            drop(rx);
            // A session of its own: the terminal's Ctrl-C and hang-up are not ours.
            unsafe { libc::setsid() };
            let code = match serve(&archive_abs, &mountpoint, opts, Some(tx)) {
                Ok(()) => 0,
                Err(_) => 1, // reported to the parent through the pipe
            };
            std::process::exit(code);
        }
        _child => {
            drop(tx);
            let mut msg = String::new();
            let _ = rx.read_to_string(&mut msg);
            match msg.strip_prefix("ok") {
                Some(_) => Ok(()),
                None if msg.is_empty() => Err(mount_error(
                    &mountpoint,
                    "the mount daemon ended before the mount was ready",
                )),
                None => Err(Error::Mount {
                    path: mountpoint,
                    detail: msg.trim().trim_start_matches("error ").to_string(),
                }),
            }
        }
    }
}

/// Block the signals the signal thread waits for, in this thread and in every
/// thread started after it.
fn block_signals() -> libc::sigset_t {
    // SAFETY: plain signal-set manipulation on a local set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            libc::sigaddset(&mut set, s);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    }
}

fn fuse_config(archive: &Path, opts: &MountOptions) -> Result<Config> {
    let mut config = Config::default();
    let mut mo = vec![
        MountOption::FSName(archive.display().to_string()),
        MountOption::Subtype("barecat".into()),
    ];
    let mut ro_or_rw = false;
    for o in opts.options.iter().flat_map(|o| o.split(',')) {
        let o = o.trim();
        match o {
            "" => {}
            "allow_other" => config.acl = SessionACL::All,
            "allow_root" => config.acl = SessionACL::RootAndOwner,
            "auto_unmount" => mo.push(MountOption::AutoUnmount),
            "default_permissions" => mo.push(MountOption::DefaultPermissions),
            "ro" => {
                ro_or_rw = true;
                mo.push(MountOption::RO)
            }
            "rw" => {
                ro_or_rw = true;
                mo.push(MountOption::RW)
            }
            "dev" => mo.push(MountOption::Dev),
            "nodev" => mo.push(MountOption::NoDev),
            "suid" => mo.push(MountOption::Suid),
            "nosuid" => mo.push(MountOption::NoSuid),
            "exec" => mo.push(MountOption::Exec),
            "noexec" => mo.push(MountOption::NoExec),
            "atime" => mo.push(MountOption::Atime),
            "noatime" => mo.push(MountOption::NoAtime),
            "sync" => mo.push(MountOption::Sync),
            "async" => mo.push(MountOption::Async),
            "dirsync" => mo.push(MountOption::DirSync),
            o if o.starts_with("fsname=") => mo[0] = MountOption::FSName(o[7..].into()),
            o if o.starts_with("subtype=") => mo[1] = MountOption::Subtype(o[8..].into()),
            o => mo.push(MountOption::CUSTOM(o.into())),
        }
    }
    if !ro_or_rw {
        mo.push(if opts.writable {
            MountOption::RW
        } else {
            MountOption::RO
        });
    }
    config.mount_options = mo;
    config.n_threads = Some(match opts.threads {
        0 => std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .clamp(2, 8),
        n => n,
    });
    config.clone_fd = true;
    Ok(config)
}

/// Widen the kernel's read-ahead window for the mount to [`READ_AHEAD_KB`] where it
/// is smaller and may be changed (by root): the kernel starts every FUSE mount at
/// its default (128 KiB) and takes the file system's `max_readahead` only as a
/// limit, so without this a large read reaches the daemon in 128 KiB requests.
/// With 1 MiB requests a sequential read of a large file was 30% faster here. The
/// window belongs to this mount alone (its own device number), which is read from
/// `/proc/self/mountinfo`, never by a `stat` of the mountpoint: that would be a
/// request to this very daemon, and a daemon killed while one of its own threads
/// waits for its own answer can never exit (the thread waits in the kernel for a
/// reply only the dying process could give; the mount then hangs every user).
fn widen_read_ahead(mountpoint: &Path) {
    let Some((major, minor)) = mount_device(mountpoint) else {
        return;
    };
    let knob = PathBuf::from(format!("/sys/class/bdi/{major}:{minor}/read_ahead_kb"));
    let now = std::fs::read_to_string(&knob)
        .ok()
        .and_then(|t| t.trim().parse::<u32>().ok());
    if now.is_some_and(|kb| kb < READ_AHEAD_KB) {
        let _ = std::fs::write(&knob, READ_AHEAD_KB.to_string());
    }
}

/// The device number (major, minor) of the last mount at `mountpoint` (an absolute
/// path) in `/proc/self/mountinfo`, whose fifth field is the mount point (spaces
/// and the like escaped as `\ooo`) and third the device.
fn mount_device(mountpoint: &Path) -> Option<(u32, u32)> {
    use std::os::unix::ffi::OsStrExt;
    let want = mountpoint.as_os_str().as_bytes();
    let info = std::fs::read("/proc/self/mountinfo").ok()?;
    let mut found = None;
    for line in info.split(|&b| b == b'\n') {
        let fields: Vec<&[u8]> = line.split(|&b| b == b' ').collect();
        let (Some(dev), Some(point)) = (fields.get(2), fields.get(4)) else {
            continue;
        };
        if unescape_mountinfo(point) != want {
            continue;
        }
        let dev = std::str::from_utf8(dev).ok()?;
        let (major, minor) = dev.split_once(':')?;
        found = Some((major.parse().ok()?, minor.parse().ok()?));
    }
    found
}

/// A mountinfo field with its `\ooo` octal escapes undone.
fn unescape_mountinfo(field: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(field.len());
    let mut i = 0;
    while i < field.len() {
        let b = field[i];
        let octal = field
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)))
            .and_then(|d| {
                let v = u32::from(d[0] - b'0') * 64
                    + u32::from(d[1] - b'0') * 8
                    + u32::from(d[2] - b'0');
                u8::try_from(v).ok()
            });
        if let (b'\\', Some(v)) = (b, octal) {
            out.push(v);
            i += 4;
        } else {
            out.push(b);
            i += 1;
        }
    }
    out
}

/// Report the outcome of setting up the mount to the waiting parent, if any.
fn report(tx: &mut Option<File>, outcome: &Result<()>) {
    if let Some(mut t) = tx.take() {
        let msg = match outcome {
            Ok(()) => "ok".to_string(),
            Err(e) => format!("error {e}"),
        };
        let _ = t.write_all(msg.as_bytes());
    }
}

/// How long a writable mount waits for another writer (a daemon still ending) to
/// release the archive.
const LOCK_WAIT: Duration = Duration::from_secs(10);
/// Open the archive, mount it and serve it until it is unmounted.
fn serve(archive: &Path, mountpoint: &Path, opts: &MountOptions, tx: Option<File>) -> Result<()> {
    let mut tx = tx;
    let detached = tx.is_some();
    let signals = block_signals();
    let setup = (|| -> Result<(Session<FuseFs>, Arc<Fs>)> {
        let config = fuse_config(archive, opts)?;
        let log = match &opts.log {
            Some(p) => Log::File(std::sync::Mutex::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(p)
                    .map_err(|e| Error::io(p, e))?,
            )),
            None if detached => Log::Syslog,
            None => Log::Stderr,
        };
        // The writer first: with --overwrite it makes the archive the reader opens.
        let writable = if opts.writable {
            // A writable mount unmounted a moment ago (`fusermount3 -u` returns before
            // its daemon has committed and ended) still holds the writer's lock: wait
            // for it a little; a writer still there then is reported by the open.
            wait_for_writer(
                &crate::core::format::layout::Layout::resolve(archive),
                LOCK_WAIT,
            );
            let mode = if opts.overwrite {
                CreateMode::Overwrite
            } else {
                CreateMode::Append
            };
            let wopts = WriterOptions {
                shard_size_limit: opts.shard_size_limit,
                ..WriterOptions::with_mode(mode)
            };
            let w = ArchiveWriter::open(archive, wopts)?;
            let policy = Policy {
                append_only: opts.append_only,
                // As in Python's barecat-mount: no defragmentation of an
                // append-only mount.
                defrag: opts.defrag && !opts.append_only,
            };
            Some(Writable::new(w, policy))
        } else {
            None
        };
        let reader = Archive::open(archive)?;
        for w in reader.warnings() {
            log.line(w);
        }
        let settings = Settings {
            uid: opts.uid,
            gid: opts.gid,
            umask: opts.umask.unwrap_or(0),
        };
        let fs = Arc::new(Fs::new(reader, writable, settings, log)?);
        let session = Session::new(FuseFs(fs.clone()), mountpoint, &config)
            .map_err(|e| mount_error(mountpoint, format!("cannot mount: {e}")))?;
        Ok((session, fs))
    })();
    let (mut session, fs) = match setup {
        Ok(s) => s,
        Err(e) => {
            let r = Err(e);
            report(&mut tx, &r);
            return r;
        }
    };
    report(&mut tx, &Ok(()));
    if detached {
        quiet_stdio();
    }
    let mut unmounter = session.unmount_callable();
    let mp = mountpoint.to_path_buf();
    let _ = std::thread::Builder::new()
        .name("barecat-signals".into())
        .spawn(move || {
            let mut sig = 0;
            // SAFETY: waits for one of the blocked signals.
            unsafe { libc::sigwait(&signals, &mut sig) };
            if unmounter.unmount().is_err() {
                // Busy (a file is open): detach it now, the daemon ends when the
                // last user lets go.
                let _ = lazy_unmount(&mp);
            }
        });
    // Canonical: resolved by the caller before the mount.
    let mp = mountpoint.to_path_buf();
    let _ = std::thread::Builder::new()
        .name("barecat-readahead".into())
        .spawn(move || widen_read_ahead(&mp));
    // Returns only if the session could not start: when it ends, the file
    // system's `destroy` commits and exits.
    let served = session
        .run()
        .map_err(|e| mount_error(mountpoint, format!("serving failed: {e}")));
    let finished = match &fs.writable {
        Some(w) => w.lock().unwrap_or_else(|e| e.into_inner()).finish(),
        None => Ok(()),
    };
    if let Err(e) = &finished {
        fs.log.line(&e.to_string());
    }
    served.and(finished)
}

/// Point standard input, output and error at /dev/null (a detached daemon must not
/// keep its parent's pipes open).
fn quiet_stdio() {
    if let Ok(null) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
    {
        for fd in 0..3 {
            // SAFETY: dup2 onto the standard descriptors.
            unsafe { libc::dup2(null.as_raw_fd(), fd) };
        }
    }
}

fn fusermount(args: &[&OsStr]) -> std::io::Result<std::process::Output> {
    std::process::Command::new("fusermount3")
        .args(args)
        .output()
}

/// Detach the mount now even if it is busy.
fn lazy_unmount(mountpoint: &Path) -> Result<()> {
    let out = fusermount(&[OsStr::new("-u"), OsStr::new("-z"), mountpoint.as_os_str()]);
    if out.as_ref().is_ok_and(|o| o.status.success()) {
        return Ok(());
    }
    sys_unmount(mountpoint, libc::MNT_DETACH).map_err(|e| Error::io(mountpoint, e))
}

/// `umount2(2)`.
fn sys_unmount(mountpoint: &Path, flags: libc::c_int) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(mountpoint.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: a NUL-terminated path.
    if unsafe { libc::umount2(c.as_ptr(), flags) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The source (`fsname`) and file-system type of the mount at `mountpoint`, from
/// /proc/self/mountinfo (the last one mounted there).
fn mount_source(mountpoint: &Path) -> Option<(String, String)> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let want = mountpoint.to_str()?;
    let mut found = None;
    for line in text.lines() {
        let (left, right) = line.split_once(" - ")?;
        let point = left.split(' ').nth(4).map(unescape)?;
        let mut r = right.split(' ');
        let (fstype, source) = (r.next()?, r.next().map(unescape)?);
        if point == want {
            found = Some((source, fstype.to_string()));
        }
    }
    found
}

/// Undo mountinfo's octal escapes (`\040` for a space, …).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Unmount the archive mounted at `mountpoint` (as `fusermount3 -u`; with `lazy`,
/// `-z`: detach it now even if it is busy, the daemon ends when the last user lets
/// go). For a writable mount, waits up to 30 s for the daemon to let go of the
/// archive (its writer lock), so that the next command of a script finds the
/// archive free.
pub fn unmount(mountpoint: &Path, lazy: bool) -> Result<()> {
    let mountpoint = std::fs::canonicalize(mountpoint).map_err(|e| Error::io(mountpoint, e))?;
    let Some((source, fstype)) = mount_source(&mountpoint) else {
        return Err(mount_error(&mountpoint, "not a mount point"));
    };
    let mut args = vec![OsStr::new("-u")];
    if lazy {
        args.push(OsStr::new("-z"));
    }
    args.push(mountpoint.as_os_str());
    match fusermount(&args) {
        Ok(o) if o.status.success() => {}
        Ok(o) => {
            let err = String::from_utf8_lossy(&o.stderr);
            let err = err.trim();
            let err = err.strip_prefix("fusermount3: ").unwrap_or(err);
            return Err(mount_error(&mountpoint, format!("cannot unmount: {err}")));
        }
        // No fusermount3: unmount directly (needs the privilege to).
        Err(_) => sys_unmount(&mountpoint, if lazy { libc::MNT_DETACH } else { 0 })
            .map_err(|e| mount_error(&mountpoint, format!("cannot unmount: {e}")))?,
    }
    // Mounted as root, the type is plain `fuse`; through fusermount3, `fuse.barecat`.
    if fstype == "fuse.barecat" || fstype == "fuse" {
        wait_for_writer(
            &crate::core::format::layout::Layout::resolve(Path::new(&source)),
            Duration::from_secs(30),
        );
    }
    Ok(())
}

/// Wait up to `timeout` until no writer holds the archive's index (its exclusive
/// lock): a mount's daemon commits and ends after the kernel has let go of it.
fn wait_for_writer(layout: &crate::core::format::layout::Layout, timeout: Duration) {
    let Ok(f) = File::open(layout.index()) else {
        return;
    };
    let deadline = Instant::now() + timeout;
    // SAFETY: flock on a descriptor we own; a shared lock is refused while a writer
    // holds its exclusive one, and is released when `f` is closed.
    while unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) } != 0
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[cfg(test)]
mod tests {
    use super::{mount_device, unescape_mountinfo};

    #[test]
    fn mountinfo_fields_are_unescaped() {
        assert_eq!(unescape_mountinfo(br"/a\040b\011c"), b"/a b\tc");
        assert_eq!(unescape_mountinfo(br"/x\777\04"), br"/x\777\04");
        assert_eq!(unescape_mountinfo(b"/plain"), b"/plain");
    }

    /// The root is always mounted: its device is found without a `stat`.
    #[test]
    fn the_device_of_a_mount_comes_from_mountinfo() {
        assert!(mount_device(std::path::Path::new("/")).is_some());
        assert!(mount_device(std::path::Path::new("/no/such/mount/point")).is_none());
    }
}
