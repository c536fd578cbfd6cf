//! The FUSE operations: index rows to attributes and listings, shard bytes to reads.
//!
//! Why here: this is the one place that turns kernel requests into library calls.
//! Every operation reads through the archive's reading API (row queries on an index
//! connection, positioned reads of a file's bytes); writable mounts route their
//! mutations to [`super::write::Writable`] and their row queries through the
//! writer's own connection, which sees its uncommitted rows.
//!
//! Read-only mounts serve files without opening them: the first `open` is answered
//! `ENOSYS`, after which the kernel opens and closes files by itself (no round trip
//! per open and per close; a warm read of a cached file never reaches the daemon),
//! and reads arrive by inode. With no handle to follow a read from front to back,
//! and pages kept in the kernel's cache across opens, a file is checked whole at the
//! first read of it that reaches the daemon, before any of its bytes is served: a
//! corrupt file never has a page in the cache, and every read of it fails. (Having
//! the kernel drop a file's cached pages once it is found corrupt, the alternative,
//! hung in the kernel's page invalidation in about one run in twenty here.)

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::OsStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fuser::{
    Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo, InitFlags,
    KernelConfig, LockOwner, OpenAccMode, OpenFlags, RenameFlags, ReplyAttr, ReplyCreate,
    ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request,
    TimeOrNow, WriteFlags,
};

use super::inode::{self, Cookie, Node};
use super::write::Writable;
use crate::core::crc;
use crate::core::entry::{DirInfo, FileInfo, Meta, S_IFDIR, S_IFMT, S_IFREG};
use crate::core::error::{Error, Result};
use crate::core::index::{Cond, Index, ScanKey, ScanOrder, ScanSpec, Table};
use crate::Archive;

/// Attribute and entry lifetime in the kernel's caches: long on read-only mounts
/// (the archive does not change under them), short on writable ones.
const TTL_READ_ONLY: Duration = Duration::from_secs(3600);
const TTL_WRITABLE: Duration = Duration::from_secs(1);
/// The read-ahead the mount asks for, in KiB: one read request of 1 MiB.
pub(crate) const READ_AHEAD_KB: u32 = 1024;
/// `st_blksize`: the buffer size that `cp`, `cat` and stdio use for reading.
const BLKSIZE: u32 = 128 << 10;
/// Rows fetched per index query while listing a directory.
const LIST_PAGE: usize = 128;
/// Out-of-order pieces of a front-to-back read remembered for its CRC check.
const MAX_PIECES: usize = 64;
/// Files up to this size are checked whole when a read reaches their end on a
/// handle that did not see all of their bytes.
const FULL_CHECK_LIMIT: u64 = crate::core::archive::WHOLE_READ_LIMIT;
/// On read-only mounts, files up to this size (one read request of the kernel) are
/// read whole at their first read and served from that; larger ones are checked
/// piece by piece first, then read as asked.
const WHOLE_AT_FIRST_READ: u64 = 1 << 20;

/// Where log lines of the daemon go.
pub(crate) enum Log {
    Stderr,
    File(Mutex<std::fs::File>),
    Syslog,
}

impl Log {
    pub fn line(&self, msg: &str) {
        use std::io::Write;
        match self {
            Log::Stderr => eprintln!("barecat-mount: {msg}"),
            Log::File(f) => {
                let mut f = f.lock().unwrap_or_else(|e| e.into_inner());
                let _ = writeln!(f, "barecat-mount: {msg}");
            }
            Log::Syslog => {
                if let Ok(c) = std::ffi::CString::new(format!("barecat-mount: {msg}")) {
                    // SAFETY: a constant format string and a NUL-terminated argument.
                    unsafe { libc::syslog(libc::LOG_ERR, c"%s".as_ptr(), c.as_ptr()) };
                }
            }
        }
    }
}

/// Settings of a mount that attributes depend on.
pub(crate) struct Settings {
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    pub umask: u32,
}

/// The CRC check of a file read front to back, possibly in pieces that arrive out of
/// order (the kernel reads ahead asynchronously, several threads serve it).
#[derive(Default)]
struct CrcCheck {
    /// Bytes `0..pos` have been read; `crc` is their CRC.
    pos: u64,
    crc: u32,
    /// Pieces past `pos`: start → (length, CRC).
    pieces: BTreeMap<u64, (u64, u32)>,
    done: bool,
}

impl CrcCheck {
    /// Account for `data` read at `offset`; the CRC of the whole file once every
    /// byte of it has been seen.
    fn add(&mut self, offset: u64, data: &[u8], size: u64) -> Option<u32> {
        if self.done || data.is_empty() {
            return None;
        }
        let len = data.len() as u64;
        if offset == self.pos {
            self.crc = crc32c::crc32c_append(self.crc, data);
            self.pos += len;
            while let Some((len, c)) = self.pieces.remove(&self.pos) {
                self.crc = crc32c::crc32c_combine(self.crc, c, len as usize);
                self.pos += len;
            }
        } else if offset > self.pos && self.pieces.len() < MAX_PIECES {
            self.pieces.insert(offset, (len, crc::crc32c(data)));
        }
        if self.pos >= size {
            self.done = true;
            return Some(self.crc);
        }
        None
    }
}

/// A set of row ids, as bits in pages of 4096 ids: a mount that has checked
/// millions of files keeps about a bit for each.
#[derive(Default)]
struct IdSet(HashMap<i64, Box<[u64; 64]>>);

impl IdSet {
    fn insert(&mut self, id: i64) {
        let bit = (id & 4095) as usize;
        let page = self.0.entry(id >> 12).or_insert_with(|| Box::new([0; 64]));
        page[bit / 64] |= 1 << (bit % 64);
    }

    fn contains(&self, id: i64) -> bool {
        let bit = (id & 4095) as usize;
        self.0
            .get(&(id >> 12))
            .is_some_and(|page| page[bit / 64] & (1 << (bit % 64)) != 0)
    }
}

/// A directory entry for `readdir`: inode, the cookie of the next entry, kind, name.
type DirEntry = (u64, u64, FileType, String);

/// A file of a writable mount open for reading.
struct ReadHandle {
    id: i64,
    /// The file's row when it was opened.
    fi: FileInfo,
    check: Mutex<CrcCheck>,
}

pub(crate) struct Fs {
    pub archive: Archive,
    pub writable: Option<Mutex<Writable>>,
    root_id: i64,
    settings: Settings,
    ttl: Duration,
    /// Owner of entries without a stored one.
    owner: (u32, u32),
    /// Time of entries without a stored one: when the mount started.
    started: SystemTime,
    handles: Mutex<HashMap<u64, Arc<ReadHandle>>>,
    next_fh: AtomicU64,
    /// Files whose CRC check failed: every later read of them fails too.
    bad: Mutex<HashSet<i64>>,
    /// Files checked whole by a read that had not seen all of them (writable
    /// mounts), or checked at all (read-only mounts).
    verified: Mutex<IdSet>,
    /// Read-only mounts: files larger than [`WHOLE_AT_FIRST_READ`] being checked,
    /// so that concurrent first reads of one file check it once.
    checking: Mutex<HashMap<i64, Arc<Mutex<()>>>>,
    pub log: Log,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The errno for a library error.
pub(crate) fn errno(e: &Error) -> Errno {
    match e {
        Error::NotFound(_) => Errno::ENOENT,
        Error::IsADirectory(_) => Errno::EISDIR,
        Error::NotADirectory(_) => Errno::ENOTDIR,
        Error::FileExists(_) => Errno::EEXIST,
        Error::DirectoryNotEmpty(_) => Errno::ENOTEMPTY,
        Error::InvalidPath { .. } | Error::InvalidOperation(_) => Errno::EINVAL,
        Error::ReadOnly { .. } => Errno::EROFS,
        Error::Locked { .. } => Errno::EBUSY,
        Error::Io { source, .. } | Error::Output { source } => source
            .raw_os_error()
            .map(Errno::from_i32)
            .unwrap_or(Errno::EIO),
        _ => Errno::EIO,
    }
}

/// A time from nanoseconds since the epoch.
fn time(ns: i64) -> SystemTime {
    if ns >= 0 {
        UNIX_EPOCH + Duration::from_nanos(ns as u64)
    } else {
        UNIX_EPOCH - Duration::from_nanos(ns.unsigned_abs())
    }
}

/// The path of `name` in the directory `dir`; `None` for names no entry can have.
pub(crate) fn child_path(dir: &str, name: &OsStr) -> Option<String> {
    let name = name.to_str()?;
    if name.is_empty() || name == "." || name == ".." || name.contains('/') {
        return None;
    }
    Some(if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    })
}

fn name_of(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

impl Fs {
    pub fn new(
        archive: Archive,
        writable: Option<Writable>,
        settings: Settings,
        log: Log,
    ) -> Result<Fs> {
        let fs = Fs {
            archive,
            writable: writable.map(Mutex::new),
            root_id: 0,
            ttl: TTL_READ_ONLY,
            settings,
            owner: unsafe { (libc::getuid(), libc::getgid()) },
            started: SystemTime::now(),
            handles: Mutex::new(HashMap::new()),
            next_fh: AtomicU64::new(1),
            bad: Mutex::new(HashSet::new()),
            verified: Mutex::new(IdSet::default()),
            checking: Mutex::new(HashMap::new()),
            log,
        };
        let root_id = fs
            .query(|i| i.dir_with_id(""))?
            .map(|(id, _)| id)
            .ok_or_else(|| Error::corrupt(fs.archive.layout().index(), "no root directory row"))?;
        let ttl = if fs.writable.is_some() {
            TTL_WRITABLE
        } else {
            TTL_READ_ONLY
        };
        Ok(Fs { root_id, ttl, ..fs })
    }

    /// Run `f` on an index connection: the archive's pool on read-only mounts, the
    /// writer's connection (which sees its own uncommitted rows) on writable ones.
    pub fn query<T>(&self, f: impl FnOnce(&Index) -> Result<T>) -> Result<T> {
        if let Some(w) = &self.writable {
            let w = lock(w);
            if w.usable() {
                return f(w.writer.index());
            }
        }
        self.archive.with_index(f)
    }

    fn fail(&self, what: &str, e: &Error) -> Errno {
        let n = errno(e);
        if n == Errno::EIO {
            self.log.line(&format!("{what}: {e}"));
        }
        n
    }

    pub fn dir_ino(&self, id: i64) -> Option<u64> {
        inode::dir(id, self.root_id)
    }

    fn perm(&self, meta: &Meta, default: u32) -> u16 {
        let m = meta.mode.map(|m| m & 0o7777).unwrap_or(default);
        (m & !self.settings.umask & 0o7777) as u16
    }

    fn attr(&self, ino: u64, kind: FileType, size: u64, nlink: u32, meta: &Meta) -> FileAttr {
        let t = meta.mtime_ns.map(time).unwrap_or(self.started);
        let default = if kind == FileType::Directory {
            0o755
        } else {
            0o644
        };
        FileAttr {
            ino: INodeNo(ino),
            size,
            blocks: size.div_ceil(512),
            atime: t,
            mtime: t,
            ctime: t,
            crtime: t,
            kind,
            perm: self.perm(meta, default),
            nlink,
            uid: self.settings.uid.or(meta.uid).unwrap_or(self.owner.0),
            gid: self.settings.gid.or(meta.gid).unwrap_or(self.owner.1),
            rdev: 0,
            blksize: BLKSIZE,
            flags: 0,
        }
    }

    pub fn file_attr(&self, id: i64, fi: &FileInfo) -> Option<FileAttr> {
        let size = match &self.writable {
            Some(w) => lock(w).open_size(id).unwrap_or(fi.size),
            None => fi.size,
        };
        Some(self.attr(inode::file(id)?, FileType::RegularFile, size, 1, &fi.meta))
    }

    /// Attributes of a file while the writer is locked (no size of an open handle).
    pub fn file_attr_locked(&self, w: &Writable, id: i64, fi: &FileInfo) -> Option<FileAttr> {
        let size = w.open_size(id).unwrap_or(fi.size);
        Some(self.attr(inode::file(id)?, FileType::RegularFile, size, 1, &fi.meta))
    }

    pub fn dir_attr(&self, ino: u64, d: &DirInfo) -> FileAttr {
        let nlink = (d.num_subdirs.max(0) as u64 + 2).min(u32::MAX as u64) as u32;
        self.attr(ino, FileType::Directory, 4096, nlink, &d.meta)
    }

    /// The path of the directory `ino`, or the errno for it.
    pub fn dir_path(&self, i: &Index, ino: u64) -> Result<std::result::Result<String, Errno>> {
        Ok(match inode::node(ino) {
            Some(Node::Root) => Ok(String::new()),
            Some(Node::Dir(id)) => match i.dir_by_id(id)? {
                Some(d) => Ok(d.path),
                None => Err(Errno::ENOENT),
            },
            Some(Node::File(_)) => Err(Errno::ENOTDIR),
            None => Err(Errno::ENOENT),
        })
    }

    /// Attributes of whatever `ino` names.
    fn getattr_ino(&self, ino: u64) -> Result<std::result::Result<FileAttr, Errno>> {
        let found = self.query(|i| {
            Ok(match inode::node(ino) {
                Some(Node::Root) => i.dir("")?.map(|d| (None, Some(d))),
                Some(Node::Dir(id)) => i.dir_by_id(id)?.map(|d| (None, Some(d))),
                Some(Node::File(id)) => i.file_by_id(id)?.map(|f| (Some((id, f)), None)),
                None => None,
            })
        })?;
        Ok(match found {
            Some((Some((id, fi)), _)) => self.file_attr(id, &fi).ok_or(Errno::ENOENT),
            Some((None, Some(d))) => Ok(self.dir_attr(ino, &d)),
            _ => Err(Errno::ENOENT),
        })
    }

    fn lookup_path(
        &self,
        parent: u64,
        name: &OsStr,
    ) -> Result<std::result::Result<FileAttr, Errno>> {
        enum Found {
            File(i64, FileInfo),
            Dir(i64, DirInfo),
        }
        let found = self.query(|i| {
            let dir = match self.dir_path(i, parent)? {
                Ok(d) => d,
                Err(e) => return Ok(Err(e)),
            };
            let Some(path) = child_path(&dir, name) else {
                return Ok(Err(Errno::ENOENT));
            };
            if let Some((id, fi)) = i.file_with_id(&path)? {
                return Ok(Ok(Found::File(id, fi)));
            }
            Ok(match i.dir_with_id(&path)? {
                Some((id, d)) => Ok(Found::Dir(id, d)),
                None => Err(Errno::ENOENT),
            })
        })?;
        Ok(match found {
            Ok(Found::File(id, fi)) => self.file_attr(id, &fi).ok_or(Errno::ENOENT),
            Ok(Found::Dir(id, d)) => match self.dir_ino(id) {
                Some(ino) => Ok(self.dir_attr(ino, &d)),
                None => Err(Errno::ENOENT),
            },
            Err(e) => Err(e),
        })
    }

    pub fn new_fh(&self) -> u64 {
        self.next_fh.fetch_add(1, Ordering::Relaxed)
    }

    /// One batch of directory entries after `cookie`.
    fn list(&self, ino: u64, cookie: Cookie) -> Result<std::result::Result<Vec<DirEntry>, Errno>> {
        self.query(|i| {
            let dir = match self.dir_path(i, ino)? {
                Ok(d) => d,
                Err(e) => return Ok(Err(e)),
            };
            let mut out = Vec::new();
            if cookie == Cookie::Start {
                out.push((
                    ino,
                    Cookie::AfterDot.encode(),
                    FileType::Directory,
                    ".".into(),
                ));
            }
            if matches!(cookie, Cookie::Start | Cookie::AfterDot) {
                let parent = match crate::core::path::parent(&dir) {
                    None | Some("") => inode::ROOT,
                    Some(p) => i
                        .dir_with_id(p)?
                        .and_then(|(id, _)| self.dir_ino(id))
                        .unwrap_or(inode::ROOT),
                };
                out.push((
                    parent,
                    Cookie::AfterDotDot.encode(),
                    FileType::Directory,
                    "..".into(),
                ));
            }
            let dirs_after = match cookie {
                Cookie::Start | Cookie::AfterDot | Cookie::AfterDotDot => Some(0),
                Cookie::AfterDir(id) => Some(id),
                _ => None,
            };
            if let Some(after) = dirs_after {
                let spec =
                    ScanSpec::new(Table::Dirs, ScanOrder::Rowid).with(Cond::Parent(dir.clone()));
                let (page, _) =
                    i.scan_page_ids(&spec, Some(&ScanKey::after_rowid(after)), LIST_PAGE)?;
                let full = page.len() == LIST_PAGE;
                for (id, d) in page {
                    if let Some(n) = self.dir_ino(id) {
                        let next = Cookie::AfterDir(id).encode();
                        out.push((n, next, FileType::Directory, name_of(d.path()).into()));
                    }
                }
                if full {
                    return Ok(Ok(out));
                }
            }
            let files_after = match cookie {
                Cookie::AfterFile(id) => id,
                Cookie::End => return Ok(Ok(out)),
                _ => 0,
            };
            let spec =
                ScanSpec::new(Table::Files, ScanOrder::Rowid).with(Cond::Parent(dir.clone()));
            let (page, _) =
                i.scan_page_ids(&spec, Some(&ScanKey::after_rowid(files_after)), LIST_PAGE)?;
            for (id, f) in page {
                if let Some(n) = inode::file(id) {
                    let next = Cookie::AfterFile(id).encode();
                    out.push((n, next, FileType::RegularFile, name_of(f.path()).into()));
                }
            }
            Ok(Ok(out))
        })
    }

    fn read_handle(&self, fh: u64) -> Option<Arc<ReadHandle>> {
        lock(&self.handles).get(&fh).cloned()
    }

    /// Serve a read of a file of a writable mount open for reading.
    fn read_file(
        &self,
        h: &ReadHandle,
        offset: u64,
        size: u32,
    ) -> std::result::Result<Vec<u8>, Errno> {
        if self.is_bad(h.id) {
            return Err(Errno::EIO);
        }
        let fi = &h.fi;
        let buf = self.read_range(fi, offset, size)?;
        let Some(expected) = fi.crc32c else {
            return Ok(buf);
        };
        let whole = lock(&h.check).add(offset, &buf, fi.size);
        let reaches_end = !buf.is_empty() && offset + buf.len() as u64 == fi.size;
        let actual = match whole {
            Some(actual) => actual,
            // This handle did not see the whole file (the kernel had part of it
            // cached, or the reader skipped): a read that reaches the end checks the
            // whole file once, where it is small enough to read again.
            None if reaches_end && fi.size <= FULL_CHECK_LIMIT && !self.is_verified(h.id) => {
                match self.archive.read_file(fi) {
                    Ok(_) => expected,
                    Err(Error::CrcMismatch { actual, .. }) => actual,
                    Err(e) => return Err(self.fail(&fi.path, &e)),
                }
            }
            None => return Ok(buf),
        };
        if actual != expected {
            let e = Error::CrcMismatch {
                member: fi.path.clone(),
                expected,
                actual,
            };
            return Err(self.mark_bad(h.id, &e));
        }
        if whole.is_none() {
            lock(&self.verified).insert(h.id);
        }
        Ok(buf)
    }

    fn is_bad(&self, id: i64) -> bool {
        lock(&self.bad).contains(&id)
    }

    fn is_verified(&self, id: i64) -> bool {
        lock(&self.verified).contains(id)
    }

    /// `size` bytes of `fi` from `offset`, not checked. On a writable mount files
    /// move (its defragmentation, a rewrite) while open for reading: the read
    /// follows the file to its current place ([`Archive::read_range`], one more
    /// row query); on a read-only one nothing moves and one positioned read does.
    fn read_range(
        &self,
        fi: &FileInfo,
        offset: u64,
        size: u32,
    ) -> std::result::Result<Vec<u8>, Errno> {
        if self.writable.is_some() {
            return self
                .archive
                .read_range(fi, offset, size as u64)
                .map_err(|e| self.fail(&fi.path, &e));
        }
        let n = (size as u64).min(fi.size.saturating_sub(offset)) as usize;
        let mut buf = vec![0u8; n];
        let got = self
            .archive
            .read_at(fi, offset, &mut buf)
            .map_err(|e| self.fail(&fi.path, &e))?;
        buf.truncate(got);
        Ok(buf)
    }

    /// Serve a read of file `id` on a read-only mount, where files are not opened:
    /// the first read of a file that reaches here checks it whole (see the module's
    /// doc).
    fn read_unopened(
        &self,
        id: i64,
        offset: u64,
        size: u32,
    ) -> std::result::Result<Vec<u8>, Errno> {
        if self.is_bad(id) {
            return Err(Errno::EIO);
        }
        let fi = match self.query(|i| i.file_by_id(id)) {
            Ok(Some(fi)) => fi,
            Ok(None) => return Err(Errno::ENOENT),
            Err(e) => return Err(self.fail("read", &e)),
        };
        if fi.crc32c.is_none() || self.is_verified(id) {
            return self.read_range(&fi, offset, size);
        }
        if fi.size <= WHOLE_AT_FIRST_READ {
            let mut data = match self.archive.read_file(&fi) {
                Ok(data) => data,
                Err(e @ Error::CrcMismatch { .. }) => return Err(self.mark_bad(id, &e)),
                Err(e) => return Err(self.fail(&fi.path, &e)),
            };
            lock(&self.verified).insert(id);
            data.truncate(offset.saturating_add(size as u64).min(fi.size) as usize);
            data.drain(..(offset.min(fi.size) as usize));
            return Ok(data);
        }
        let gate = lock(&self.checking).entry(id).or_default().clone();
        {
            let _checking = lock(&gate);
            if !self.is_verified(id) && !self.is_bad(id) {
                match self.archive.check_file(&fi) {
                    Ok(()) => lock(&self.verified).insert(id),
                    Err(e @ Error::CrcMismatch { .. }) => drop(self.mark_bad(id, &e)),
                    Err(e) => return Err(self.fail(&fi.path, &e)),
                }
            }
            lock(&self.checking).remove(&id);
        }
        if self.is_bad(id) {
            return Err(Errno::EIO);
        }
        self.read_range(&fi, offset, size)
    }

    /// Remember that file `id` is corrupt and log it; the errno for its reads.
    fn mark_bad(&self, id: i64, e: &Error) -> Errno {
        lock(&self.bad).insert(id);
        self.log.line(&format!("{e}; reads of it fail with EIO"));
        Errno::EIO
    }

    /// The writer of a writable mount (`EROFS` on a read-only one, `EIO` if it
    /// could not be opened again after a defragmentation).
    fn writable(&self) -> std::result::Result<MutexGuard<'_, Writable>, Errno> {
        let w = self.writable.as_ref().map(lock).ok_or(Errno::EROFS)?;
        if !w.usable() {
            return Err(Errno::EIO);
        }
        Ok(w)
    }
}

/// The FUSE face of [`Fs`] (shared with the daemon, which finishes the writer when
/// the mount ends).
pub(crate) struct FuseFs(pub Arc<Fs>);

impl Filesystem for FuseFs {
    fn init(&mut self, _req: &Request, config: &mut KernelConfig) -> std::io::Result<()> {
        // Reads of up to 1 MiB in one request, where the kernel allows it (the
        // kernel keeps its own read-ahead window if smaller: see
        // `daemon::widen_read_ahead`).
        if let Err(max) = config.set_max_readahead(READ_AHEAD_KB << 10) {
            let _ = config.set_max_readahead(max);
        }
        for flag in [
            InitFlags::FUSE_PARALLEL_DIROPS,
            InitFlags::FUSE_ATOMIC_O_TRUNC,
        ] {
            let _ = config.add_capabilities(flag);
        }
        Ok(())
    }

    /// The kernel ended the session (unmounted): commit what a writable mount has
    /// left, then end the process here. Returning would let the session unmount
    /// the mount point once more, which can hit a new mount made there meanwhile.
    fn destroy(&mut self) {
        let finished = match &self.0.writable {
            Some(w) => lock(w).finish(),
            None => Ok(()),
        };
        if let Err(e) = &finished {
            self.0.log.line(&e.to_string());
        }
        std::process::exit(if finished.is_ok() { 0 } else { 1 });
    }

    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        match self.0.lookup_path(parent.0, name) {
            Ok(Ok(attr)) => reply.entry(&self.0.ttl, &attr, Generation(0)),
            Ok(Err(e)) => reply.error(e),
            Err(e) => reply.error(self.0.fail(&format!("lookup {name:?}"), &e)),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.0.getattr_ino(ino.0) {
            Ok(Ok(attr)) => reply.attr(&self.0.ttl, &attr),
            Ok(Err(e)) => reply.error(e),
            Err(e) => reply.error(self.0.fail("getattr", &e)),
        }
    }

    fn opendir(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        match self.0.query(|i| self.0.dir_path(i, ino.0)) {
            Ok(Ok(_)) => {
                // The listing of a read-only archive never changes: the kernel may
                // keep it in its cache across opens.
                let flags = if self.0.writable.is_none() {
                    FopenFlags::FOPEN_KEEP_CACHE | FopenFlags::FOPEN_CACHE_DIR
                } else {
                    FopenFlags::empty()
                };
                reply.opened(FileHandle(0), flags)
            }
            Ok(Err(e)) => reply.error(e),
            Err(e) => reply.error(self.0.fail("opendir", &e)),
        }
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        let mut cookie = Cookie::decode(offset);
        loop {
            let batch = match self.0.list(ino.0, cookie) {
                Ok(Ok(b)) => b,
                Ok(Err(e)) => return reply.error(e),
                Err(e) => return reply.error(self.0.fail("readdir", &e)),
            };
            let Some(last) = batch.last().map(|e| e.1) else {
                return reply.ok();
            };
            for (ino, next, kind, name) in batch {
                if reply.add(INodeNo(ino), next, kind, &name) {
                    return reply.ok();
                }
            }
            cookie = Cookie::decode(last);
        }
    }

    fn open(&self, _req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        let fs = &self.0;
        if fs.writable.is_none() {
            // Files of a read-only mount need no opening: from this answer on, the
            // kernel opens and closes them without asking (see the module's doc).
            return reply.error(Errno::ENOSYS);
        }
        let Some(Node::File(id)) = inode::node(ino.0) else {
            return reply.error(Errno::EISDIR);
        };
        if flags.acc_mode() != OpenAccMode::O_RDONLY {
            let r = fs
                .writable()
                .and_then(|mut w| w.open(fs, id, flags.0 & libc::O_TRUNC != 0));
            return match r {
                Ok(fh) => reply.opened(FileHandle(fh), FopenFlags::empty()),
                Err(e) => reply.error(e),
            };
        }
        // Files come and go on a writable mount: look the row up now.
        let fi = match fs.query(|i| i.file_by_id(id)) {
            Ok(Some(fi)) => fi,
            Ok(None) => return reply.error(Errno::ENOENT),
            Err(e) => return reply.error(fs.fail("open", &e)),
        };
        let fh = fs.new_fh();
        lock(&fs.handles).insert(
            fh,
            Arc::new(ReadHandle {
                id,
                fi,
                check: Mutex::new(CrcCheck::default()),
            }),
        );
        // Nothing to do when a reader closes: no flush request per close.
        let flags = FopenFlags::FOPEN_NOFLUSH;
        reply.opened(FileHandle(fh), flags)
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        if self.0.writable.is_none() {
            let Some(Node::File(id)) = inode::node(ino.0) else {
                return reply.error(Errno::EISDIR);
            };
            return match self.0.read_unopened(id, offset, size) {
                Ok(data) => reply.data(&data),
                Err(e) => reply.error(e),
            };
        }
        if let Some(h) = self.0.read_handle(fh.0) {
            return match self.0.read_file(&h, offset, size) {
                Ok(data) => reply.data(&data),
                Err(e) => reply.error(e),
            };
        }
        match self
            .0
            .writable()
            .and_then(|mut w| w.read(&self.0, fh.0, offset, size))
        {
            Ok(data) => reply.data(&data),
            Err(e) => reply.error(if e == Errno::EROFS { Errno::EBADF } else { e }),
        }
    }

    fn release(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        if lock(&self.0.handles).remove(&fh.0).is_some() {
            return reply.ok();
        }
        match self.0.writable().and_then(|mut w| w.release(&self.0, fh.0)) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        if self.0.writable.is_none() {
            // Nothing to do when a file of a read-only mount is closed: the kernel
            // stops asking.
            return reply.error(Errno::ENOSYS);
        }
        if self.0.read_handle(fh.0).is_some() {
            return reply.ok();
        }
        match self.0.writable().and_then(|mut w| w.save(&self.0, fh.0)) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn fsync(&self, req: &Request, ino: INodeNo, fh: FileHandle, _ds: bool, reply: ReplyEmpty) {
        self.flush(req, ino, fh, LockOwner(0), reply)
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        const BSIZE: u64 = 4096;
        let root = match self.0.query(|i| i.dir("")) {
            Ok(Some(r)) => r,
            Ok(None) => return reply.error(Errno::EIO),
            Err(e) => return reply.error(self.0.fail("statfs", &e)),
        };
        let used = (root.size_tree.max(0) as u64).div_ceil(BSIZE);
        let free = match &self.0.writable {
            Some(w) => lock(w).free_blocks(BSIZE),
            None => 0,
        };
        let files = root.num_files_tree.max(0) as u64;
        reply.statfs(
            used + free,
            free,
            free,
            files,
            0,
            BSIZE as u32,
            255,
            BSIZE as u32,
        );
    }

    // ------------------------------------------------------------------ writing

    fn create(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        flags: i32,
        reply: ReplyCreate,
    ) {
        let fs = &self.0;
        let r = fs.writable().and_then(|mut w| {
            let meta = Meta {
                mode: Some(S_IFREG | (mode & !umask & 0o7777)),
                uid: Some(req.uid()),
                gid: Some(req.gid()),
                mtime_ns: Some(crate::core::index::now_ns()),
            };
            let (id, fi, fh) = w.create(fs, parent.0, name, meta, flags)?;
            let attr = fs.file_attr_locked(&w, id, &fi).ok_or(Errno::EIO)?;
            Ok((attr, fh))
        });
        match r {
            Ok((attr, fh)) => reply.created(
                &fs.ttl,
                &attr,
                Generation(0),
                FileHandle(fh),
                FopenFlags::empty(),
            ),
            Err(e) => reply.error(e),
        }
    }

    fn write(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        if self.0.read_handle(fh.0).is_some() {
            return reply.error(Errno::EBADF);
        }
        match self
            .0
            .writable()
            .and_then(|mut w| w.write(&self.0, fh.0, offset, data))
        {
            Ok(()) => reply.written(data.len() as u32),
            Err(e) => reply.error(e),
        }
    }

    fn mkdir(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        reply: ReplyEntry,
    ) {
        let fs = &self.0;
        let meta = Meta {
            mode: Some(S_IFDIR | (mode & !umask & 0o7777)),
            uid: Some(req.uid()),
            gid: Some(req.gid()),
            mtime_ns: Some(crate::core::index::now_ns()),
        };
        let r = fs
            .writable()
            .and_then(|mut w| w.mkdir(fs, parent.0, name, meta));
        match r {
            Ok((id, d)) => match fs.dir_ino(id) {
                Some(ino) => reply.entry(&fs.ttl, &fs.dir_attr(ino, &d), Generation(0)),
                None => reply.error(Errno::EIO),
            },
            Err(e) => reply.error(e),
        }
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let fs = &self.0;
        match fs.writable().and_then(|mut w| w.unlink(fs, parent.0, name)) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn rmdir(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let fs = &self.0;
        match fs.writable().and_then(|mut w| w.rmdir(fs, parent.0, name)) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn rename(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        newparent: INodeNo,
        newname: &OsStr,
        flags: RenameFlags,
        reply: ReplyEmpty,
    ) {
        let fs = &self.0;
        if flags.intersects(RenameFlags::RENAME_EXCHANGE | RenameFlags::RENAME_WHITEOUT) {
            return reply.error(Errno::EINVAL);
        }
        let overwrite = !flags.contains(RenameFlags::RENAME_NOREPLACE);
        let r = fs
            .writable()
            .and_then(|mut w| w.rename(fs, (parent.0, name), (newparent.0, newname), overwrite));
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<TimeOrNow>,
        mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let fs = &self.0;
        let changes = mode.is_some() || uid.is_some() || gid.is_some() || size.is_some();
        if !changes && mtime.is_none() {
            return self.getattr(_req, ino, fh, reply);
        }
        let mtime_ns = mtime.map(|t| match t {
            TimeOrNow::Now => crate::core::index::now_ns(),
            TimeOrNow::SpecificTime(t) => match t.duration_since(UNIX_EPOCH) {
                Ok(d) => d.as_nanos().min(i64::MAX as u128) as i64,
                Err(e) => -(e.duration().as_nanos().min(i64::MAX as u128) as i64),
            },
        });
        let change = super::write::Change {
            mode: mode.map(|m| m & !S_IFMT),
            uid,
            gid,
            mtime_ns,
            size,
            fh: fh.map(|f| f.0),
        };
        let r = fs.writable().and_then(|mut w| w.setattr(fs, ino.0, change));
        match r {
            Ok(()) => self.getattr(_req, ino, fh, reply),
            Err(e) => reply.error(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::IdSet;

    #[test]
    fn id_sets_hold_exactly_what_was_put_in() {
        let mut s = IdSet::default();
        let ids = [
            1,
            63,
            64,
            4095,
            4096,
            4097,
            1 << 40,
            -1,
            -4096,
            i64::MAX,
            i64::MIN,
        ];
        for &id in &ids {
            assert!(!s.contains(id));
            s.insert(id);
        }
        for &id in &ids {
            assert!(s.contains(id), "{id}");
        }
        for id in [0, 2, 62, 65, 4094, 8191, (1 << 40) + 1, -2, -4095] {
            assert!(!s.contains(id), "{id}");
        }
        // A million consecutive ids take 245 pages of 512 bytes.
        let mut s = IdSet::default();
        (1..=1_000_000).for_each(|id| s.insert(id));
        assert_eq!(s.0.len(), 245);
        assert!((1..=1_000_000).all(|id| s.contains(id)));
    }
}
