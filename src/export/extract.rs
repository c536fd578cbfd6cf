//! Extraction into a directory, safe by construction.
//!
//! * Nothing is written outside the destination: every file and directory is
//!   created by one path component relative to a handle of its parent directory,
//!   with `O_NOFOLLOW` (and `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` where
//!   the kernel has it). A symbolic link already in the destination, or anything that
//!   is not a directory where one is needed, is reported and never followed.
//! * Stored paths that are absolute or have `..`, `.` or empty components or a NUL
//!   are refused and reported, never rewritten. A path stored more than once (only
//!   possible in an index that lost its unique index) is refused in every copy.
//! * Every file's CRC32C is checked. Files up to [`WHOLE_READ_LIMIT`] are checked
//!   before they are created; larger ones are written to a temporary name in the
//!   same directory and renamed into place only when the CRC matches. A file that
//!   fails is reported and not left behind.
//! * A file is created with `O_CREAT | O_EXCL`: an existing file (or symbolic link)
//!   is reported and kept, unless `overwrite`, which removes it (never following it)
//!   and creates the new file in its place. A directory is never replaced by a file.
//! * Files get their stored permission bits (setuid, setgid and sticky only with
//!   `same_permissions`) and modification time. Directories, empty ones included, get
//!   theirs after everything below them is written. Ownership is not restored.
//!
//! Speed: files are read in shard order from the shards' memory maps by one thread
//! and written by `workers` threads, each keeping its own cache of directory handles,
//! so a small file costs `openat`, `write`, `futimens` and `close`.

use std::collections::HashSet;
use std::fs::{self, File};
use std::io::Write;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use crossbeam_channel::{bounded, Receiver, Sender};
use rustix::fs::{AtFlags, FileType, Mode, OFlags, RenameFlags, Timespec, Timestamps};
use rustix::io::Errno;

use super::beneath::{kind_at, open_at, open_dir_for_meta, split, DirCache};
use super::select::{duplicate_paths, Row, Selection};
use super::{permissions, split_ns, Reporter, WHOLE_READ_LIMIT};
use crate::core::entry::{FileInfo, FileOrder};
use crate::core::error::{Error, IoContext, Result};
use crate::core::path::{is_safe_stored, strip_components};
use crate::core::progress::Progress;
use crate::Archive;

/// How to extract.
#[derive(Debug, Clone, Copy)]
pub struct ExtractOptions {
    /// Threads that create and write files.
    pub workers: usize,
    /// Leading path components to remove (like tar's `--strip-components`); members
    /// with nothing left are skipped.
    pub strip_components: usize,
    /// Replace existing files (and symbolic links) instead of reporting them.
    pub overwrite: bool,
    /// Also restore setuid, setgid and sticky bits.
    pub same_permissions: bool,
}

impl Default for ExtractOptions {
    fn default() -> Self {
        ExtractOptions {
            workers: 1,
            strip_components: 0,
            overwrite: false,
            same_permissions: false,
        }
    }
}

/// What an extraction did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExtractReport {
    /// Files extracted.
    pub files: u64,
    /// Directories created.
    pub dirs: u64,
    /// Bytes of file content written.
    pub bytes: u64,
    /// Members reported as problems (not extracted, or without their metadata).
    pub failed: u64,
    /// Members left out because `strip_components` left nothing of their path.
    pub skipped: u64,
}

struct Job {
    fi: FileInfo,
    /// Start of the destination path in `fi.path` (after stripped components).
    start: usize,
}

struct Ctx<'a> {
    archive: &'a Archive,
    root: BorrowedFd<'a>,
    dest: &'a Path,
    opts: ExtractOptions,
    umask: u32,
    dups: HashSet<String>,
    report: Reporter<'a>,
    progress: &'a Progress,
    failed: AtomicU64,
    files: AtomicU64,
    bytes: AtomicU64,
    stop: AtomicBool,
    fatal: Mutex<Option<Error>>,
}

const BATCH_ITEMS: usize = 256;
const BATCH_BYTES: u64 = 16 << 20;
/// Batches queued per writer: the reader runs this far ahead, so that a run of
/// files in one directory does not leave the other writers idle.
const QUEUE_BATCHES: usize = 64;

/// Extract the selected members of `archive` below `dest` (created if missing).
/// Problems with single members go to `report` and are counted in the result; an
/// `Err` means extraction stopped (destination unusable, disk full, index unreadable).
pub fn extract(
    archive: &Archive,
    selection: &Selection,
    dest: &Path,
    opts: &ExtractOptions,
    progress: &Progress,
    report: Reporter<'_>,
) -> Result<ExtractReport> {
    fs::create_dir_all(dest).at(dest)?;
    let root: OwnedFd = rustix::fs::open(
        dest,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| Error::io(dest, e.into()))?;
    let ctx = Ctx {
        archive,
        root: root.as_fd(),
        dest,
        opts: *opts,
        umask: current_umask(),
        dups: duplicate_paths(archive)?,
        report,
        progress,
        failed: AtomicU64::new(0),
        files: AtomicU64::new(0),
        bytes: AtomicU64::new(0),
        stop: AtomicBool::new(false),
        fatal: Mutex::new(None),
    };
    let workers = opts.workers.max(1);
    let skipped = std::thread::scope(|s| {
        let mut queues = Vec::with_capacity(workers);
        for _ in 0..workers {
            let (tx, rx) = bounded::<Vec<Job>>(QUEUE_BATCHES);
            let ctx = &ctx;
            s.spawn(move || worker(ctx, rx));
            queues.push(tx);
        }
        produce(&ctx, selection, queues)
    });
    let skipped = match skipped {
        Ok(n) => n,
        Err(e) => {
            ctx.stop.store(true, Ordering::Relaxed);
            return Err(e);
        }
    };
    if let Some(e) = ctx.fatal.lock().unwrap_or_else(|e| e.into_inner()).take() {
        return Err(e);
    }
    let dirs = finish_dirs(&ctx, selection)?;
    Ok(ExtractReport {
        files: ctx.files.load(Ordering::Relaxed),
        dirs,
        bytes: ctx.bytes.load(Ordering::Relaxed),
        failed: ctx.failed.load(Ordering::Relaxed),
        skipped,
    })
}

fn current_umask() -> u32 {
    // SAFETY: umask only swaps the process's mask; it is set back at once, before
    // any thread of ours creates files.
    unsafe {
        let m = libc::umask(0o022);
        libc::umask(m);
        m as u32
    }
}

impl Ctx<'_> {
    /// Report a problem with one member, or stop everything for errors that would
    /// only repeat (full disk, read-only file system, out of file descriptors).
    fn problem(&self, e: Error) {
        let fatal = matches!(&e, Error::Io { source, .. } if matches!(
            source.raw_os_error(),
            Some(libc::ENOSPC) | Some(libc::EDQUOT) | Some(libc::EROFS) | Some(libc::EMFILE) | Some(libc::ENFILE)
        ));
        if fatal {
            self.stop.store(true, Ordering::Relaxed);
            let mut slot = self.fatal.lock().unwrap_or_else(|e| e.into_inner());
            if slot.is_none() {
                *slot = Some(e);
            }
            return;
        }
        self.failed.fetch_add(1, Ordering::Relaxed);
        (self.report)(&e);
    }

    fn dest_of(&self, rel: &str) -> PathBuf {
        self.dest.join(rel)
    }
}

/// Read the selected rows in shard order and hand them to the writers in batches.
/// All files of one directory go to the same writer, so that writers do not queue
/// for the same directory's lock when they create files. Returns the number of
/// members skipped by `strip_components`.
fn produce(ctx: &Ctx<'_>, sel: &Selection, queues: Vec<Sender<Vec<Job>>>) -> Result<u64> {
    let n = queues.len();
    let mut skipped = 0;
    let mut batches: Vec<Vec<Job>> = (0..n).map(|_| Vec::with_capacity(BATCH_ITEMS)).collect();
    let mut bytes = vec![0u64; n];
    for row in sel.file_rows(ctx.archive, FileOrder::Address) {
        if ctx.stop.load(Ordering::Relaxed) {
            break;
        }
        let fi = match row? {
            Row::Bad(e) => {
                ctx.problem(e);
                continue;
            }
            Row::File(f) => f,
        };
        if !is_safe_stored(&fi.path) {
            ctx.problem(Error::InvalidPath {
                reason: super::stream::unsafe_reason(&fi.path),
                path: fi.path,
            });
            continue;
        }
        if ctx.dups.contains(&fi.path) {
            ctx.problem(Error::Refused {
                path: fi.path.into(),
                detail: "stored more than once in the index; not extracted".into(),
            });
            continue;
        }
        let Some(rel) = strip_components(&fi.path, ctx.opts.strip_components) else {
            skipped += 1;
            continue;
        };
        let start = fi.path.len() - rel.len();
        let k = if n == 1 {
            0
        } else {
            writer_of(split(rel).0, n)
        };
        bytes[k] += fi.size;
        batches[k].push(Job { fi, start });
        if batches[k].len() >= BATCH_ITEMS || bytes[k] >= BATCH_BYTES {
            let full = std::mem::replace(&mut batches[k], Vec::with_capacity(BATCH_ITEMS));
            if queues[k].send(full).is_err() {
                break;
            }
            bytes[k] = 0;
        }
    }
    for (k, batch) in batches.into_iter().enumerate() {
        if !batch.is_empty() {
            let _ = queues[k].send(batch);
        }
    }
    Ok(skipped)
}

/// The writer that handles the files of directory `dir`.
fn writer_of(dir: &str, n: usize) -> usize {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    dir.hash(&mut h);
    (h.finish() % n as u64) as usize
}

fn worker(ctx: &Ctx<'_>, rx: Receiver<Vec<Job>>) {
    let mut cache = DirCache::new(ctx.root, ctx.dest, true);
    for batch in rx {
        if ctx.stop.load(Ordering::Relaxed) {
            continue;
        }
        let (mut files, mut bytes) = (0, 0);
        // A remote archive fetches the batch's bytes at once, in a few large
        // requests (the batch is in address order); nothing happens locally.
        let _prefetched = if ctx.archive.is_remote() {
            let fis: Vec<FileInfo> = batch.iter().map(|j| j.fi.clone()).collect();
            ctx.archive.shards().ok().and_then(|s| s.prefetch(&fis))
        } else {
            None
        };
        for job in &batch {
            match write_file(ctx, &mut cache, job) {
                Ok(()) => {
                    files += 1;
                    bytes += job.fi.size;
                }
                Err(e) => ctx.problem(e),
            }
        }
        ctx.files.fetch_add(files, Ordering::Relaxed);
        ctx.bytes.fetch_add(bytes, Ordering::Relaxed);
        ctx.progress.add(files, bytes);
    }
}

fn write_file(ctx: &Ctx<'_>, cache: &mut DirCache<'_>, job: &Job) -> Result<()> {
    let fi = &job.fi;
    let rel = &fi.path[job.start..];
    if fi.size > WHOLE_READ_LIMIT {
        return write_large(ctx, cache, fi, rel);
    }
    // Read into memory of our own and checked before anything is created: what is
    // written is exactly what was checked, even if a concurrent defragmentation
    // rewrites the shard meanwhile (the read follows a moved file).
    let data = if fi.size == 0 {
        Vec::new()
    } else {
        ctx.archive.read_file(fi)?
    };
    let content: &[u8] = &data;
    let (dir, name) = split(rel);
    let dfd = cache.get(dir)?;
    let perms = permissions(&fi.meta, ctx.opts.same_permissions);
    let fd = create(ctx, dfd, name, perms.unwrap_or(0o666), rel)?;
    let mut file = File::from(fd);
    let written = file
        .write_all(content)
        .map_err(|e| Error::io(ctx.dest_of(rel), e))
        .and_then(|()| set_meta(ctx, &file, perms, fi.meta.mtime_ns, rel));
    if let Err(e) = written {
        drop(file);
        let _ = rustix::fs::unlinkat(dfd, name, AtFlags::empty());
        return Err(e);
    }
    Ok(())
}

/// Create `name` in `dfd` exclusively, replacing a non-directory with `overwrite`.
fn create(ctx: &Ctx<'_>, dfd: BorrowedFd<'_>, name: &str, mode: u32, rel: &str) -> Result<OwnedFd> {
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL;
    let mode = Mode::from_raw_mode(mode & 0o777);
    let mut replaced = false;
    loop {
        match open_at(dfd, name, flags, mode) {
            Ok(fd) => return Ok(fd),
            Err(e) if e.raw_os_error() == Some(libc::EEXIST) => {
                let kind = kind_at(dfd, name);
                if kind == Some(FileType::Directory) {
                    return Err(refused(ctx, rel, "is a directory; not replaced by a file"));
                }
                if !ctx.opts.overwrite {
                    return Err(refused(ctx, rel, exists_detail(kind)));
                }
                if replaced {
                    return Err(refused(ctx, rel, "was created again while being replaced"));
                }
                match rustix::fs::unlinkat(dfd, name, AtFlags::empty()) {
                    Ok(()) | Err(Errno::NOENT) => replaced = true,
                    Err(e) => return Err(Error::io(ctx.dest_of(rel), e.into())),
                }
            }
            Err(e) => return Err(Error::io(ctx.dest_of(rel), e)),
        }
    }
}

fn exists_detail(kind: Option<FileType>) -> &'static str {
    match kind {
        Some(FileType::Symlink) => "exists as a symbolic link; not overwritten (use --overwrite)",
        _ => "already exists; not overwritten (use --overwrite)",
    }
}

fn refused(ctx: &Ctx<'_>, rel: &str, detail: &str) -> Error {
    Error::Refused {
        path: ctx.dest_of(rel),
        detail: detail.into(),
    }
}

/// Give an open file its permission bits (when the umask took some away, or for
/// special bits) and its modification time.
fn set_meta(
    ctx: &Ctx<'_>,
    fd: &File,
    perms: Option<u32>,
    mtime_ns: Option<i64>,
    rel: &str,
) -> Result<()> {
    if let Some(p) = perms {
        if p & ctx.umask != 0 || p & !0o777 != 0 {
            rustix::fs::fchmod(fd, Mode::from_raw_mode(p))
                .map_err(|e| Error::io(ctx.dest_of(rel), e.into()))?;
        }
    }
    set_mtime(fd, mtime_ns).map_err(|e| Error::io(ctx.dest_of(rel), e.into()))
}

fn set_mtime(fd: impl AsFd, mtime_ns: Option<i64>) -> rustix::io::Result<()> {
    let Some(ns) = mtime_ns else { return Ok(()) };
    let (secs, nanos) = split_ns(ns);
    let times = Timestamps {
        last_access: Timespec {
            tv_sec: 0,
            tv_nsec: rustix::fs::UTIME_OMIT,
        },
        last_modification: Timespec {
            tv_sec: secs,
            tv_nsec: nanos.into(),
        },
    };
    rustix::fs::futimens(fd, &times)
}

/// A file over [`WHOLE_READ_LIMIT`]: written once to a temporary name while its CRC
/// is computed, renamed into place only when it matches.
fn write_large(ctx: &Ctx<'_>, cache: &mut DirCache<'_>, fi: &FileInfo, rel: &str) -> Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    ctx.archive.shards()?.check_extent(fi)?;
    let (dir, name) = split(rel);
    let dfd = cache.get(dir)?;
    let kind = kind_at(dfd, name);
    if kind == Some(FileType::Directory) {
        return Err(refused(ctx, rel, "is a directory; not replaced by a file"));
    }
    if kind.is_some() && !ctx.opts.overwrite {
        return Err(refused(ctx, rel, exists_detail(kind)));
    }
    let temp = format!(
        ".barecat-part-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    let fd = open_at(
        dfd,
        &temp,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL,
        Mode::from_raw_mode(0o600),
    )
    .map_err(|e| Error::io(ctx.dest_of(rel), e))?;
    let mut file = File::from(fd);
    let remove = || {
        let _ = rustix::fs::unlinkat(dfd, temp.as_str(), AtFlags::empty());
    };
    // Chunks are read into memory of our own, checksummed and written from there:
    // the CRC covers exactly the bytes written.
    let mut crc = 0u32;
    let mut buf = vec![0u8; (8 << 20).min(fi.size as usize)];
    let mut at = 0u64;
    while at < fi.size {
        let n = (fi.size - at).min(buf.len() as u64) as usize;
        if let Err(e) = ctx.archive.shards()?.read_into(fi, at, &mut buf[..n]) {
            remove();
            return Err(e);
        }
        crc = crc32c::crc32c_append(crc, &buf[..n]);
        if let Err(e) = file.write_all(&buf[..n]) {
            remove();
            return Err(Error::io(ctx.dest_of(rel), e));
        }
        at += n as u64;
    }
    if let Some(expected) = fi.crc32c {
        if expected != crc {
            remove();
            return Err(Error::CrcMismatch {
                member: fi.path.clone(),
                expected,
                actual: crc,
            });
        }
    }
    let perms = permissions(&fi.meta, ctx.opts.same_permissions).unwrap_or(0o666 & !ctx.umask);
    let meta = rustix::fs::fchmod(&file, Mode::from_raw_mode(perms))
        .and_then(|()| set_mtime(&file, fi.meta.mtime_ns));
    if let Err(e) = meta {
        remove();
        return Err(Error::io(ctx.dest_of(rel), e.into()));
    }
    drop(file);
    let flags = if ctx.opts.overwrite {
        RenameFlags::empty()
    } else {
        RenameFlags::NOREPLACE
    };
    let r = match rustix::fs::renameat_with(dfd, temp.as_str(), dfd, name, flags) {
        // No RENAME_NOREPLACE on this file system: check, then rename.
        Err(Errno::INVAL) if !ctx.opts.overwrite => match kind_at(dfd, name) {
            Some(_) => Err(Errno::EXIST),
            None => rustix::fs::renameat(dfd, temp.as_str(), dfd, name),
        },
        r => r,
    };
    match r {
        Ok(()) => Ok(()),
        Err(e) => {
            remove();
            Err(match e {
                Errno::EXIST | Errno::ISDIR | Errno::NOTEMPTY => {
                    let kind = kind_at(dfd, name);
                    if kind == Some(FileType::Directory) {
                        refused(ctx, rel, "is a directory; not replaced by a file")
                    } else {
                        refused(ctx, rel, exists_detail(kind))
                    }
                }
                e => Error::io(ctx.dest_of(rel), e.into()),
            })
        }
    }
}

/// Create the selected directories that are still missing (empty ones) and give
/// every selected directory its metadata, deepest first. Returns their number.
fn finish_dirs(ctx: &Ctx<'_>, sel: &Selection) -> Result<u64> {
    let dirs = sel.dir_entries(ctx.archive)?;
    let mut cache = DirCache::new(ctx.root, ctx.dest, true);
    let mut done = 0;
    for d in dirs.iter().rev() {
        if !is_safe_stored(&d.path) {
            ctx.problem(Error::InvalidPath {
                path: d.path.clone(),
                reason: super::stream::unsafe_reason(&d.path),
            });
            continue;
        }
        let Some(rel) = strip_components(&d.path, ctx.opts.strip_components) else {
            continue;
        };
        if let Err(e) = cache.get(rel) {
            ctx.problem(e);
            continue;
        }
        let perms = permissions(&d.meta, ctx.opts.same_permissions);
        if perms.is_some() || d.meta.mtime_ns.is_some() {
            let fd = match open_dir_for_meta(&mut cache, rel) {
                Ok(fd) => fd,
                Err(e) => {
                    ctx.problem(e);
                    continue;
                }
            };
            let r = match perms {
                Some(p) => rustix::fs::fchmod(&fd, Mode::from_raw_mode(p)),
                None => Ok(()),
            }
            .and_then(|()| set_mtime(&fd, d.meta.mtime_ns));
            if let Err(e) = r {
                ctx.problem(Error::io(ctx.dest_of(rel), e.into()));
                continue;
            }
        }
        done += 1;
        if ctx.stop.load(Ordering::Relaxed) {
            break;
        }
    }
    if let Some(e) = ctx.fatal.lock().unwrap_or_else(|e| e.into_inner()).take() {
        return Err(e);
    }
    Ok(done)
}
