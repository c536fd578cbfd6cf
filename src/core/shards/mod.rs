//! Shard files: raw file bytes back to back (docs/FORMAT.md §1.2, §7.1).
//!
//! [`ShardSet`] reads shards from any number of threads at once: positioned reads
//! (`pread`) need no shared cursor, and memory maps are created lazily and renewed
//! when a shard has grown. [`ShardAppender`] is the single appending writer: it
//! places each file at the physical end of the last shard, rotates to a new shard at
//! the size limit, and makes the bytes durable (`fdatasync`) on request, before the
//! index rows that point at them are committed.

pub(crate) mod direct;

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use memmap2::Mmap;

use crate::core::entry::FileInfo;
use crate::core::error::{Error, IoContext, Result};
use crate::core::format::layout::Layout;
use crate::core::remote::client::Fail;
use crate::core::remote::shards::RemoteShards;
use crate::core::shards::direct::DirectStage;

struct OpenShard {
    path: PathBuf,
    file: File,
    /// Device and inode of the file when it was opened.
    id: (u64, u64),
    map: RwLock<Option<Arc<Mmap>>>,
}

/// Read access to the shards of an archive, shareable between threads.
pub struct ShardSet {
    layout: Layout,
    open: RwLock<Vec<Option<Arc<OpenShard>>>>,
    /// The shards of a remote archive ([`crate::core::remote::shards`]); `None` for a
    /// local one, whose reads take the paths below unchanged.
    remote: Option<Arc<RemoteShards>>,
}

impl ShardSet {
    /// Shards are opened lazily, by number, on first use.
    pub fn new(layout: Layout) -> ShardSet {
        ShardSet {
            layout,
            open: RwLock::new(Vec::new()),
            remote: None,
        }
    }

    /// The shards of a remote archive.
    pub fn remote(layout: Layout, shards: RemoteShards) -> ShardSet {
        ShardSet {
            layout,
            open: RwLock::new(Vec::new()),
            remote: Some(Arc::new(shards)),
        }
    }

    /// Are these the shards of a remote archive?
    pub fn is_remote(&self) -> bool {
        self.remote.is_some()
    }

    /// A remote read's failure as the errors local reads give: a missing object is
    /// a missing shard, bytes past its end a bad extent of `fi`.
    fn remote_error(&self, f: Fail, n: u64, fi: Option<&FileInfo>) -> Error {
        match (f, fi) {
            (Fail::NotFound(_), _) => {
                self.missing(n, "the index refers to it but the object does not exist")
            }
            (Fail::Unsatisfiable(e), Some(fi)) => Self::bad_extent(fi, e.to_string()),
            (f, _) => f.into_error(),
        }
    }

    /// The names of the archive's files.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    fn shard(&self, n: u64) -> Result<Arc<OpenShard>> {
        let idx = usize::try_from(n).map_err(|_| self.missing(n, "shard number too large"))?;
        if let Some(Some(s)) = self.open.read().unwrap_or_else(|e| e.into_inner()).get(idx) {
            return Ok(s.clone());
        }
        let path = self.layout.shard_path(n);
        // Non-blocking, so that a FIFO in a shard's place cannot block the open; it
        // is refused just below, as anything but a regular file is.
        let file = match OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&path)
        {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(self.missing(n, "the index refers to it but the file does not exist"))
            }
            Err(e) => return Err(Error::io(&path, e)),
        };
        let md = file.metadata().at(&path)?;
        if !md.is_file() {
            return Err(Error::not_a_file(&path, md.is_dir()));
        }
        let id = (md.dev(), md.ino());
        let shard = Arc::new(OpenShard {
            path,
            file,
            id,
            map: RwLock::new(None),
        });
        let mut open = self.open.write().unwrap_or_else(|e| e.into_inner());
        if open.len() <= idx {
            open.resize(idx + 1, None);
        }
        Ok(open[idx].get_or_insert(shard).clone())
    }

    /// Close shard `n` (and its map), so that the next access opens the file again:
    /// after a concurrent defragmentation removed it, or removed it and a writer
    /// created a new one with the same number.
    pub fn forget(&self, n: u64) {
        if self.remote.is_some() {
            return; // pinned objects: nothing is replaced under a reader
        }
        if let Ok(idx) = usize::try_from(n) {
            if let Some(slot) = self
                .open
                .write()
                .unwrap_or_else(|e| e.into_inner())
                .get_mut(idx)
            {
                *slot = None;
            }
        }
    }

    /// Is the open file of shard `n` still the one at its path? False after a
    /// concurrent writer removed the shard (and perhaps made a new one of the same
    /// name); the next access then opens the file anew.
    pub fn is_current(&self, n: u64) -> bool {
        if self.remote.is_some() {
            return true;
        }
        let open = {
            let list = self.open.read().unwrap_or_else(|e| e.into_inner());
            usize::try_from(n)
                .ok()
                .and_then(|i| list.get(i).cloned().flatten())
        };
        let Some(s) = open else { return true };
        let now = fs::metadata(&s.path).map(|m| (m.dev(), m.ino())).ok();
        if now == Some(s.id) {
            return true;
        }
        self.forget(n);
        false
    }

    fn missing(&self, n: u64, detail: &str) -> Error {
        Error::MissingShard {
            path: self.layout.shard_path(n),
            shard: n,
            detail: detail.into(),
        }
    }

    /// Current length of shard `n` on disk.
    pub fn len(&self, n: u64) -> Result<u64> {
        if let Some(r) = &self.remote {
            return r.len(n).map_err(|f| self.remote_error(f, n, None));
        }
        let s = self.shard(n)?;
        Ok(s.file.metadata().at(&s.path)?.len())
    }

    /// The path of shard `n`.
    pub fn path(&self, n: u64) -> PathBuf {
        self.layout.shard_path(n)
    }

    fn bad_extent(fi: &FileInfo, detail: String) -> Error {
        Error::BadExtent {
            member: fi.path.clone(),
            shard: fi.shard as i64,
            offset: fi.offset as i64,
            size: fi.size as i64,
            detail,
        }
    }

    /// Read `buf.len()` bytes of `fi`'s content starting `at` bytes into the file.
    /// Reading past the end of the shard is an error naming the member.
    pub fn read_into(&self, fi: &FileInfo, at: u64, buf: &mut [u8]) -> Result<()> {
        if let Some(r) = &self.remote {
            if buf.is_empty() {
                return Ok(());
            }
            return r
                .read(fi.shard, fi.offset + at, buf)
                .map_err(|f| self.remote_error(f, fi.shard, Some(fi)));
        }
        let s = self.shard(fi.shard)?;
        let start = fi.offset + at;
        let mut done = 0usize;
        while done < buf.len() {
            match s.file.read_at(&mut buf[done..], start + done as u64) {
                Ok(0) => {
                    let len = s.file.metadata().map(|m| m.len()).unwrap_or(0);
                    return Err(Self::past_end(fi, &s.path, len));
                }
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::io(&s.path, e)),
            }
        }
        Ok(())
    }

    /// For a remote archive, announce that `files` (in address order) are read
    /// next: their bytes are fetched now in a few large requests and kept until
    /// the returned guard drops (`RemoteShards::prefetch`). Nothing to do for a
    /// local archive (`None`).
    pub fn prefetch(&self, files: &[FileInfo]) -> Option<crate::core::remote::shards::Prefetch> {
        Some(self.remote.as_ref()?.prefetch(files))
    }

    /// For a remote archive: `len` bytes of shard `n` at `offset` in one request
    /// (fewer at the end of the shard); `None` for a local one. For readers that
    /// group neighbouring files into large spans themselves (`verify`).
    pub fn fetch_span(&self, n: u64, offset: u64, len: u64) -> Option<Result<bytes::Bytes>> {
        let r = self.remote.as_ref()?;
        Some(
            r.fetch(n, offset..offset + len)
                .map_err(|f| self.remote_error(f, n, None)),
        )
    }

    /// Ask the kernel to start reading `len` bytes of shard `n` from `offset` in the
    /// background (`POSIX_FADV_WILLNEED`), for a reader that will get there soon.
    /// Only a hint: errors are ignored.
    pub fn will_need(&self, n: u64, offset: u64, len: u64) {
        if self.remote.is_some() {
            return; // remote reads in address order fetch ahead by themselves
        }
        if let Ok(s) = self.shard(n) {
            crate::core::readahead::will_need(&s.file, offset, len);
        }
    }

    /// Read the whole content of `fi` into a new buffer. The length is checked
    /// against the shard first, so an absurd size never becomes a giant allocation.
    pub fn read(&self, fi: &FileInfo) -> Result<Vec<u8>> {
        // Small sizes are read at once (a short read is an error); only a large
        // claimed size is checked against the shard before anything is allocated.
        if fi.size > SMALL_READ {
            self.check_extent(fi)?;
        }
        let n = fi.size as usize;
        if self.remote.is_some() {
            let mut buf = vec![0u8; n];
            self.read_into(fi, 0, &mut buf)?;
            return Ok(buf);
        }
        let s = self.shard(fi.shard)?;
        // Read into the vector's spare capacity: no pass zeroing it first. Bytes
        // read past `n` (when the allocator gave more room) are cut off below.
        let mut buf = Vec::with_capacity(n);
        while buf.len() < n {
            let at = fi.offset + buf.len() as u64;
            match rustix::io::pread(&s.file, rustix::buffer::spare_capacity(&mut buf), at) {
                Ok(0) => {
                    let len = s.file.metadata().map(|m| m.len()).unwrap_or(0);
                    return Err(Self::past_end(fi, &s.path, len));
                }
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(Error::io(&s.path, e.into())),
            }
        }
        buf.truncate(n);
        Ok(buf)
    }

    /// `fi` reaches past the end of its shard `path` of `len` bytes.
    fn past_end(fi: &FileInfo, path: &Path, len: u64) -> Error {
        Self::bad_extent(
            fi,
            format!("extends past the end of {} ({len} bytes)", path.display()),
        )
    }

    /// Error unless `fi`'s extent lies inside its shard as the shard is now.
    pub fn check_extent(&self, fi: &FileInfo) -> Result<()> {
        let len = self.len(fi.shard)?;
        if fi.end() > len {
            return Err(Self::past_end(fi, &self.path(fi.shard), len));
        }
        Ok(())
    }

    /// A memory map of shard `n` that covers at least `min_len` bytes (renewed when the
    /// shard grew since it was last mapped).
    pub fn map(&self, n: u64, min_len: u64) -> Result<Arc<Mmap>> {
        if self.remote.is_some() {
            return Err(Error::UnsupportedInput {
                path: self.path(n),
                detail: "a remote shard cannot be memory-mapped".into(),
            });
        }
        let s = self.shard(n)?;
        if let Some(m) = s.map.read().unwrap_or_else(|e| e.into_inner()).as_ref() {
            if m.len() as u64 >= min_len {
                return Ok(m.clone());
            }
        }
        let mut slot = s.map.write().unwrap_or_else(|e| e.into_inner());
        if let Some(m) = slot.as_ref() {
            if m.len() as u64 >= min_len {
                return Ok(m.clone());
            }
        }
        if slot.is_none() {
            // Writers cut a shard only when nobody holds this lock (see
            // `truncate_unless_mapped`): a truncation under a memory map would kill the
            // reader with SIGBUS when it touches the lost pages.
            lock_shared(&s.file).at(&s.path)?;
        }
        // SAFETY: the map is read-only. Bytes are only appended to a shard, or (by
        // defragmentation) rewritten where no committed row points; a shard is cut
        // only while no reader holds its shared lock, taken above.
        let map = Arc::new(unsafe { Mmap::map(&s.file) }.at(&s.path)?);
        *slot = Some(map.clone());
        Ok(map)
    }

    /// Zero-copy view of `fi`'s content inside the shard's memory map.
    pub fn slice(&self, fi: &FileInfo) -> Result<MappedFile> {
        if self.remote.is_some() {
            // No map of a remote object: the bytes, read into memory.
            let data = self.read(fi)?;
            return Ok(MappedFile {
                inner: Mapped::Owned(bytes::Bytes::from(data)),
            });
        }
        let map = self.map(fi.shard, fi.end())?;
        if fi.end() > map.len() as u64 {
            return Err(Self::bad_extent(
                fi,
                format!(
                    "extends past the end of {} ({} bytes)",
                    self.path(fi.shard).display(),
                    map.len()
                ),
            ));
        }
        Ok(MappedFile {
            inner: Mapped::Map {
                map,
                start: fi.offset as usize,
                len: fi.size as usize,
            },
        })
    }
}

/// The bytes of one stored file, borrowed from a shard's memory map (or, for a
/// remote archive, which has no map, held in memory).
#[derive(Clone)]
pub struct MappedFile {
    inner: Mapped,
}

#[derive(Clone)]
enum Mapped {
    Map {
        map: Arc<Mmap>,
        start: usize,
        len: usize,
    },
    Owned(bytes::Bytes),
}

impl MappedFile {
    /// Is this a view of a memory map (zero-copy), rather than bytes read?
    pub fn is_mapped(&self) -> bool {
        matches!(self.inner, Mapped::Map { .. })
    }
}

impl std::ops::Deref for MappedFile {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &self.inner {
            Mapped::Map { map, start, len } => &map[*start..*start + *len],
            Mapped::Owned(b) => b,
        }
    }
}

impl AsRef<[u8]> for MappedFile {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

/// Files up to this size are read without checking the shard's length first.
const SMALL_READ: u64 = 4 << 20;

pub(crate) fn flock(file: &File, op: libc::c_int) -> io::Result<bool> {
    loop {
        // SAFETY: flock on a descriptor we own.
        if unsafe { libc::flock(file.as_raw_fd(), op) } == 0 {
            return Ok(true);
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::Interrupted => continue,
            io::ErrorKind::WouldBlock => return Ok(false),
            _ => return Err(e),
        }
    }
}

/// Take the shared lock that marks a shard as memory-mapped by a reader (waits
/// while a writer is cutting it).
pub(crate) fn lock_shared(file: &File) -> io::Result<()> {
    flock(file, libc::LOCK_SH).map(drop)
}

/// Cut a shard to `len` bytes, unless a reader has it memory-mapped (holds its
/// shared lock): a mapped reader that touched the lost pages would be killed by
/// SIGBUS. Returns false, leaving the bytes in place (as trailing bytes that a later
/// run can reclaim), when the shard is in use.
pub fn truncate_unless_mapped(file: &File, path: &Path, len: u64) -> Result<bool> {
    if !flock(file, libc::LOCK_EX | libc::LOCK_NB).at(path)? {
        return Ok(false);
    }
    let r = file.set_len(len).at(path);
    let _ = flock(file, libc::LOCK_UN);
    r.map(|()| true)
}

/// The length of the shard file at `path` (following a symbolic link). Anything but
/// a regular file is an error naming it.
pub(crate) fn shard_len(path: &Path) -> Result<u64> {
    let md = fs::metadata(path).at(path)?;
    if md.is_file() {
        return Ok(md.len());
    }
    Err(Error::not_a_file(path, md.is_dir()))
}

pub(crate) use crate::core::output::sync_dir;

/// Ask the kernel to start writing back a range now, without waiting, so that the
/// `fdatasync` at the next commit finds little left to do.
pub(crate) fn start_writeback(file: &File, offset: u64, len: u64) {
    #[cfg(target_os = "linux")]
    unsafe {
        libc::sync_file_range(
            file.as_raw_fd(),
            offset as libc::off64_t,
            len as libc::off64_t,
            libc::SYNC_FILE_RANGE_WRITE,
        );
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (file, offset, len);
}

const BUF_CAPACITY: usize = 4 << 20;
const WRITEBACK_STEP: u64 = 32 << 20;
/// At most this many buffers go into one `pwritev`.
const MAX_SEGMENTS: usize = 512;

/// A piece of the bytes waiting to be written.
enum Pending {
    /// `buf[start..end]`.
    Buf(usize, usize),
    Owned(Vec<u8>),
}

/// The single appending writer of an archive's shards.
pub struct ShardAppender {
    layout: Layout,
    limit: u64,
    number: u64,
    file: File,
    path: PathBuf,
    buf: Vec<u8>,
    /// Bytes waiting to be written, in order: ranges of `buf` (copies of borrowed
    /// data) and buffers handed over whole ([`ShardAppender::write_owned`]).
    pending: Vec<Pending>,
    /// Total bytes in `pending`.
    pending_len: usize,
    /// Physical end of the current shard, including buffered bytes.
    pos: u64,
    /// The bytes of the current shard before this offset are in the file (none of
    /// them waits in a buffer): readable through another handle without a flush.
    in_file: u64,
    /// Bytes before this position have been handed to the kernel for writeback.
    writeback_from: u64,
    /// The current shard has bytes that were not yet `fdatasync`ed.
    dirty: bool,
    /// A shard file was created since the last sync: its directory entry must be synced.
    dir_dirty: bool,
    /// Write whole blocks past the page cache where the file system allows it…
    want_direct: bool,
    /// …once this many bytes were appended through this appender.
    direct_after: u64,
    /// Bytes appended through this appender.
    appended: u64,
    /// The direct-I/O stage of the current shard; when set, every appended byte
    /// goes through it and `buf`/`pending` stay empty.
    direct: Option<DirectStage>,
}

impl ShardAppender {
    /// Open the last shard for appending (creating shard 0 when there is none).
    /// Shards that are symbolic links are refused unless `allow_symlinks`; even
    /// then nothing is ever written through a link (its target belongs to another
    /// archive, or is the user's own tar or zip file): when the last shard is one,
    /// appending starts a new shard of this archive's own.
    pub fn open(layout: &Layout, limit: u64, allow_symlinks: bool) -> Result<ShardAppender> {
        let shards = layout.contiguous_shards()?;
        if !allow_symlinks {
            if let Some(s) = shards.iter().find(|s| s.is_symlink) {
                return Err(symlinked(&s.path));
            }
        }
        let (number, created) = match shards.last() {
            Some(s) if s.is_symlink => (s.number + 1, true),
            Some(s) => (s.number, false),
            None => (0, true),
        };
        let path = layout.shard_path(number);
        let file = if created {
            OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&path)
        } else {
            OpenOptions::new().read(true).write(true).open(&path)
        }
        .at(&path)?;
        let pos = file.metadata().at(&path)?.len();
        Ok(ShardAppender {
            layout: layout.clone(),
            limit: limit.max(1),
            number,
            file,
            path,
            buf: Vec::with_capacity(BUF_CAPACITY),
            pending: Vec::new(),
            pending_len: 0,
            pos,
            in_file: pos,
            writeback_from: pos,
            dirty: false,
            dir_dirty: created,
            want_direct: false,
            direct_after: 0,
            appended: 0,
            direct: None,
        })
    }

    /// Append with direct I/O (`crate::core::shards::direct`) where the file system does it:
    /// large appends then cost no copy into the page cache. Off by default.
    pub fn set_direct_io(&mut self, on: bool) -> Result<()> {
        self.set_direct_io_after(on, 0)
    }

    /// Append with direct I/O, as [`ShardAppender::set_direct_io`], once `after`
    /// bytes were appended through this appender (the bytes before go through the
    /// page cache; the writer's choice is `direct::WARM_UP`).
    pub fn set_direct_io_after(&mut self, on: bool, after: u64) -> Result<()> {
        self.flush()?;
        self.want_direct = on;
        self.direct_after = after;
        self.direct = if self.direct_due() {
            DirectStage::open(&self.path, self.pos)
        } else {
            None
        };
        Ok(())
    }

    fn direct_due(&self) -> bool {
        self.want_direct && self.appended >= self.direct_after
    }

    /// Count `n` appended bytes; switch to direct I/O when they reach the point set.
    fn count_appended(&mut self, n: usize) -> Result<()> {
        let before = self.appended;
        self.appended = self.appended.saturating_add(n as u64);
        if self.want_direct && before < self.direct_after && self.direct_due() {
            // Everything buffered reaches the file first: a direct write never
            // covers a page of the page cache.
            self.flush()?;
            self.direct = DirectStage::open(&self.path, self.pos);
        }
        Ok(())
    }

    /// Stop writing: wait for a direct write still running and forget the bytes not
    /// yet written. For a writer whose unsynced bytes are being cut off (a rollback);
    /// the appender must be reopened afterwards.
    pub fn abandon(&mut self) {
        if let Some(d) = &mut self.direct {
            d.abandon();
        }
        self.direct = None;
        self.buf.clear();
        self.pending.clear();
        self.pending_len = 0;
    }

    /// Whether appends currently bypass the page cache.
    pub fn is_direct(&self) -> bool {
        self.direct.as_ref().is_some_and(|d| d.is_direct())
    }

    /// The shard size limit new files are placed under.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Change the shard size limit (at least 1) for the files placed from now on.
    pub fn set_limit(&mut self, limit: u64) {
        self.limit = limit.max(1);
    }

    /// Current shard number and physical end.
    pub fn position(&self) -> (u64, u64) {
        (self.number, self.pos)
    }

    /// Where a file of `size` bytes goes: at the end of the current shard, or at the
    /// start of a new one when it would cross the limit. A file larger than the limit
    /// gets a shard of its own. An empty file never starts a new shard.
    pub fn place(&mut self, size: u64) -> Result<(u64, u64)> {
        if size > 0 && self.pos > 0 && self.pos.saturating_add(size) > self.limit {
            self.rotate()?;
        }
        Ok((self.number, self.pos))
    }

    fn rotate(&mut self) -> Result<()> {
        self.sync()?;
        let number = self.number + 1;
        let path = self.layout.shard_path(number);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .at(&path)?;
        self.direct = if self.direct_due() {
            DirectStage::open(&path, 0)
        } else {
            None
        };
        self.number = number;
        self.file = file;
        self.path = path;
        self.pos = 0;
        self.in_file = 0;
        self.writeback_from = 0;
        self.dir_dirty = true;
        Ok(())
    }

    /// Append bytes at the current position.
    pub fn write(&mut self, data: &[u8]) -> Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        self.dirty = true;
        if let Some(d) = &mut self.direct {
            d.push(&self.file, data).at(&self.path)?;
            self.pos += data.len() as u64;
            return Ok(());
        }
        self.count_appended(data.len())?;
        if self.direct.is_some() {
            return self.write(data);
        }
        if self.pending_len + data.len() > BUF_CAPACITY || self.pending.len() >= MAX_SEGMENTS {
            self.flush()?;
        }
        if data.len() >= BUF_CAPACITY {
            let start = self.pos;
            self.file.write_all_at(data, start).at(&self.path)?;
            self.pos += data.len() as u64;
        } else {
            let start = self.buf.len();
            self.buf.extend_from_slice(data);
            match self.pending.last_mut() {
                Some(Pending::Buf(_, end)) if *end == start => *end = self.buf.len(),
                _ => self.pending.push(Pending::Buf(start, self.buf.len())),
            }
            self.pending_len += data.len();
            self.pos += data.len() as u64;
        }
        if self.pos - self.writeback_from >= WRITEBACK_STEP {
            self.flush()?;
        }
        Ok(())
    }

    /// Append a buffer without copying it: it is written (gathered with its
    /// neighbours by `pwritev`) at the next flush, then freed.
    pub fn write_owned(&mut self, data: Vec<u8>) -> Result<()> {
        if self.direct.is_some() {
            return self.write(&data);
        }
        if data.is_empty() {
            return Ok(());
        }
        self.count_appended(data.len())?;
        if self.direct.is_some() {
            return self.write(&data);
        }
        self.dirty = true;
        if self.pending_len + data.len() > BUF_CAPACITY || self.pending.len() >= MAX_SEGMENTS {
            self.flush()?;
        }
        self.pending_len += data.len();
        self.pos += data.len() as u64;
        self.pending.push(Pending::Owned(data));
        if self.pending_len >= BUF_CAPACITY || self.pos - self.writeback_from >= WRITEBACK_STEP {
            self.flush()?;
        }
        Ok(())
    }

    /// Hand buffered bytes to the kernel.
    pub fn flush(&mut self) -> Result<()> {
        if let Some(d) = &mut self.direct {
            d.spill(&self.file, true).at(&self.path)?;
            self.in_file = self.pos;
            return Ok(());
        }
        if !self.pending.is_empty() {
            let start = self.pos - self.pending_len as u64;
            let r = {
                let buf = &self.buf;
                let mut slices: Vec<io::IoSlice<'_>> = self
                    .pending
                    .iter()
                    .map(|p| match p {
                        Pending::Buf(a, b) => io::IoSlice::new(&buf[*a..*b]),
                        Pending::Owned(v) => io::IoSlice::new(v),
                    })
                    .collect();
                write_all_vectored_at(&self.file, &mut slices, start)
            };
            r.at(&self.path)?;
            self.buf.clear();
            self.pending_len = 0;
            self.pending.clear();
        }
        self.in_file = self.pos;
        if self.pos - self.writeback_from >= WRITEBACK_STEP {
            start_writeback(
                &self.file,
                self.writeback_from,
                self.pos - self.writeback_from,
            );
            self.writeback_from = self.pos;
        }
        Ok(())
    }

    /// Whether the bytes of shard `shard` before `end` are all in its file already,
    /// so that another handle reads them without a [`flush`](Self::flush) first.
    pub fn is_in_file(&self, shard: u64, end: u64) -> bool {
        shard < self.number || (shard == self.number && end <= self.in_file)
    }

    /// Drop everything written at or after `offset` in the current shard (used when a
    /// streamed source fails half-way, so its bytes do not linger as garbage).
    pub fn truncate_to(&mut self, offset: u64) -> Result<()> {
        self.flush()?;
        if offset < self.pos {
            self.file.set_len(offset).at(&self.path)?;
            self.cut_at(offset);
        }
        Ok(())
    }

    /// Drop everything at or after `offset` in the current shard, unless a reader has
    /// the shard memory-mapped (see [`truncate_unless_mapped`]); for bytes that
    /// committed rows pointed at before (a deleted last file). Returns whether the
    /// shard was cut; if not, the bytes stay as trailing garbage and new files go
    /// after them.
    pub fn truncate_to_unless_mapped(&mut self, offset: u64) -> Result<bool> {
        self.flush()?;
        if offset >= self.pos {
            return Ok(true);
        }
        if !truncate_unless_mapped(&self.file, &self.path, offset)? {
            return Ok(false);
        }
        self.cut_at(offset);
        Ok(true)
    }

    /// Go on appending at `offset`, after the file was cut there.
    fn cut_at(&mut self, offset: u64) {
        self.pos = offset;
        self.in_file = self.in_file.min(offset);
        self.writeback_from = self.writeback_from.min(offset);
        if let Some(d) = &mut self.direct {
            d.reset(offset);
        }
    }

    /// Make every byte written so far durable: flush, `fdatasync`, and `fsync` the
    /// directory if a shard was created.
    pub fn sync(&mut self) -> Result<()> {
        self.flush()?;
        if self.dirty || self.dir_dirty {
            self.file.sync_data().at(&self.path)?;
            self.dirty = false;
        }
        if self.dir_dirty {
            sync_dir(&self.path)?;
            self.dir_dirty = false;
        }
        Ok(())
    }
}

/// Write all of `slices` at `offset` with `pwritev`, resuming after short writes.
fn write_all_vectored_at(
    file: &File,
    mut slices: &mut [io::IoSlice<'_>],
    mut offset: u64,
) -> io::Result<()> {
    while !slices.is_empty() {
        match rustix::io::pwritev(file, slices, offset) {
            Ok(0) => return Err(io::Error::from(io::ErrorKind::WriteZero)),
            Ok(n) => {
                offset += n as u64;
                io::IoSlice::advance_slices(&mut slices, n);
            }
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// The error for a shard at `path` that is a symbolic link, naming its target.
pub(crate) fn symlinked(path: &Path) -> Error {
    Error::SymlinkedShard {
        path: path.to_path_buf(),
        target: fs::read_link(path).unwrap_or_else(|_| PathBuf::from("?")),
    }
}

/// Is the shard file at `path` a symbolic link?
pub(crate) fn is_link(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// Create shard 0 when an archive has no shard at all (Python expects one).
pub(crate) fn ensure_first_shard(layout: &Layout) -> Result<()> {
    let path = layout.shard_path(0);
    if fs::symlink_metadata(&path).is_err() {
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(_) => sync_dir(&path)?,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(Error::io(&path, e)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_set_is_shareable() {
        fn is_sync<T: Sync + Send>() {}
        is_sync::<ShardSet>();
    }

    /// Appenders to try every test with: through the page cache, and with direct
    /// I/O (in a directory on disk, where the file system has it).
    fn appenders(limit: u64) -> Vec<(tempfile::TempDir, Layout, ShardAppender)> {
        let mut out = Vec::new();
        for direct in [false, true] {
            let dir = if direct {
                crate::core::shards::direct::tests::disk_dir()
            } else {
                tempfile::tempdir().unwrap()
            };
            let layout = Layout::current(dir.path().join("a"));
            let mut w = ShardAppender::open(&layout, limit, false).unwrap();
            w.set_direct_io(direct).unwrap();
            if direct && !w.is_direct() {
                eprintln!("no direct I/O in {}", dir.path().display());
                continue;
            }
            out.push((dir, layout, w));
        }
        out
    }

    #[test]
    fn rotation_and_oversize_files() {
        for (_dir, layout, mut w) in appenders(10) {
            assert_eq!(w.place(5).unwrap(), (0, 0));
            w.write(b"12345").unwrap();
            assert_eq!(w.place(5).unwrap(), (0, 5)); // ends exactly at the limit
            w.write(b"67890").unwrap();
            assert_eq!(w.place(1).unwrap(), (1, 0));
            w.write(b"x").unwrap();
            assert_eq!(w.place(15).unwrap(), (2, 0)); // larger than the limit: own shard
            w.write(&[7u8; 15]).unwrap();
            assert_eq!(w.place(0).unwrap(), (2, 15));
            assert_eq!(w.place(1).unwrap(), (3, 0));
            w.sync().unwrap();
            let lens: Vec<u64> = (0..4)
                .map(|n| fs::metadata(layout.shard_path(n)).unwrap().len())
                .collect();
            assert_eq!(lens, vec![10, 1, 15, 0]);
            assert_eq!(fs::read(layout.shard_path(0)).unwrap(), b"1234567890");
        }
    }

    #[test]
    fn large_appends_rotate_and_read_back_in_both_modes() {
        let piece = |i: usize| -> Vec<u8> {
            (0..(3 << 20) + i * 777)
                .map(|k| (k % 251) as u8 ^ i as u8)
                .collect()
        };
        for (_dir, layout, mut w) in appenders(20 << 20) {
            let mut want: Vec<Vec<u8>> = vec![Vec::new()];
            for i in 0..16 {
                let data = piece(i);
                let (shard, _) = w.place(data.len() as u64).unwrap();
                if shard as usize == want.len() {
                    want.push(Vec::new());
                }
                if i % 2 == 0 {
                    w.write(&data).unwrap();
                } else {
                    w.write_owned(data.clone()).unwrap();
                }
                want[shard as usize].extend_from_slice(&data);
                if i % 5 == 4 {
                    w.sync().unwrap(); // a commit in between
                }
            }
            w.sync().unwrap();
            assert!(want.len() > 2, "no rotation");
            for (n, bytes) in want.iter().enumerate() {
                assert!(
                    fs::read(layout.shard_path(n as u64)).unwrap() == *bytes,
                    "shard {n}"
                );
            }
        }
    }

    /// With a warm-up, the first bytes go through the page cache and direct I/O
    /// takes over past the point set (also in the shards after a rotation); the
    /// shards hold every byte in order.
    #[test]
    fn direct_io_takes_over_after_its_warm_up() {
        let dir = crate::core::shards::direct::tests::disk_dir();
        let layout = Layout::current(dir.path().join("a"));
        let mut w = ShardAppender::open(&layout, 24 << 20, false).unwrap();
        w.set_direct_io_after(true, 5 << 20).unwrap();
        let mut want = vec![Vec::new()];
        for i in 0..12u8 {
            let data = vec![i; (1 << 20) + 333 * i as usize];
            let (shard, _) = w.place(data.len() as u64).unwrap();
            if shard as usize == want.len() {
                want.push(Vec::new());
            }
            if i % 2 == 0 {
                w.write(&data).unwrap();
            } else {
                w.write_owned(data.clone()).unwrap();
            }
            want[shard as usize].extend_from_slice(&data);
            if i < 4 {
                assert!(!w.is_direct(), "direct after {} pieces", i + 1);
            }
        }
        let direct = w.is_direct();
        w.sync().unwrap();
        for (n, bytes) in want.iter().enumerate() {
            assert!(
                fs::read(layout.shard_path(n as u64)).unwrap() == *bytes,
                "shard {n}"
            );
        }
        let mut probe =
            ShardAppender::open(&Layout::current(dir.path().join("p")), 1, false).unwrap();
        probe.set_direct_io(true).unwrap();
        if probe.is_direct() {
            assert!(direct, "direct I/O never took over");
        } else {
            eprintln!("no direct I/O in {}", dir.path().display());
        }
    }

    #[test]
    fn reopening_appends_after_an_unaligned_end() {
        for (_dir, layout, mut w) in appenders(u64::MAX) {
            let direct = w.is_direct();
            w.write(&[1u8; 5000]).unwrap();
            w.sync().unwrap();
            drop(w);
            let mut w = ShardAppender::open(&layout, u64::MAX, false).unwrap();
            w.set_direct_io(direct).unwrap();
            assert_eq!(w.position(), (0, 5000));
            w.write(&vec![2u8; 9 << 20]).unwrap();
            w.sync().unwrap();
            let got = fs::read(layout.shard_path(0)).unwrap();
            assert_eq!(got.len(), 5000 + (9 << 20));
            assert!(got[..5000].iter().all(|&b| b == 1) && got[5000..].iter().all(|&b| b == 2));
        }
    }

    #[test]
    fn owned_and_borrowed_writes_keep_their_order() {
        for (_dir, layout, mut w) in appenders(u64::MAX) {
            w.write(b"ab").unwrap();
            w.write_owned(b"cd".to_vec()).unwrap();
            w.write(b"e").unwrap();
            w.write(b"f").unwrap();
            w.write_owned(b"gh".to_vec()).unwrap();
            w.write_owned(Vec::new()).unwrap();
            let n = MAX_SEGMENTS + 10;
            for i in 0..n {
                w.write_owned(vec![i as u8]).unwrap();
            }
            assert_eq!(w.position(), (0, 8 + n as u64));
            w.sync().unwrap();
            let mut want = b"abcdefgh".to_vec();
            want.extend((0..n).map(|i| i as u8));
            assert_eq!(fs::read(layout.shard_path(0)).unwrap(), want);
        }
    }

    #[test]
    fn truncate_drops_unflushed_and_flushed_bytes() {
        for (_dir, layout, mut w) in appenders(u64::MAX) {
            w.write(b"keep").unwrap();
            w.write(&vec![9u8; 10 << 20]).unwrap();
            w.truncate_to(4).unwrap();
            w.write(b"!").unwrap();
            w.sync().unwrap();
            assert_eq!(fs::read(layout.shard_path(0)).unwrap(), b"keep!");
        }
    }
}
