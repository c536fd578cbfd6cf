//! Writable mounts: file-system mutations through [`ArchiveWriter`].
//!
//! Why this shape: the archive stores a file as one extent with one CRC. A file
//! written front to back (the usual case: `cp`, `tar -x`, a data writer) is
//! appended to the archive as it is written, once it passes [`STREAM_AT`] bytes, as
//! the one file the writer streams at a time; a small file, a file written in any
//! other order or one written while another file streams gathers its content in a
//! [`Spool`] (memory, then a temporary file) and is appended in one piece. A streamed
//! file that stops being written front to back, or that must make room for another
//! file, is read back into a spool and its bytes are cut off. Either way the file is
//! finished and committed when it is closed (`flush`, i.e. every `close`), before
//! `close` returns: a killed daemon leaves every file closed before the kill. Rewriting a
//! file appends a new copy and drops the old row in the same transaction; the copy
//! keeps the row id, hence the inode number. A file is created as an empty row (so
//! that it has an inode number at once) and gets its content at its first close.
//! Directory operations run through the writer's own transactions, which keep the
//! directory statistics right.
//!
//! Options of Python's `barecat-mount`: an append-only mount refuses removals,
//! renames and changes to the bytes of files it did not create; a mount with
//! defragmentation enabled runs a quick [`defrag`](crate::maint::defrag) when at
//! least [`DEFRAG_AFTER`] bytes were removed or replaced since the last one, holes
//! make up at least a tenth of the shards and no file is open for writing (the
//! writer is closed for it and opened again).

use std::collections::HashMap;
use std::ffi::OsStr;
use std::ops::{Deref, DerefMut};
use std::path::PathBuf;
use std::time::Duration;

use fuser::Errno;

use super::fs::{child_path, errno, Fs};
use super::inode::{self, Node};
use super::spool::Spool;
use crate::core::entry::{DirInfo, FileInfo, Meta};
use crate::core::error::Error;
use crate::core::writer::{ArchiveWriter, CreateMode, PendingFile, WriterOptions};
use crate::maint::defrag::{defrag, DefragMode, DefragOptions};

type Res<T> = std::result::Result<T, Errno>;

/// A file written front to back is appended to the archive as it is written once
/// it is larger than this.
pub const STREAM_AT: u64 = 1 << 20;
/// Bytes removed or replaced before a mount with defragmentation enabled considers
/// a defragmentation (as Python's `barecat-mount`).
pub const DEFRAG_AFTER: u64 = 100 << 20;
/// How long one of those quick defragmentations may move files.
const DEFRAG_TIME: Duration = Duration::from_secs(5);

/// Where the content of a file open for writing is.
enum Content {
    /// Gathered here, appended when the file is closed.
    Spool(Spool),
    /// Being appended to the archive as it is written.
    Stream(PendingFile),
    /// Saved: the file's stored content (loaded again if written to).
    Saved,
}

/// A file open for writing.
struct Handle {
    id: i64,
    content: Content,
    /// Changed since it was last saved.
    dirty: bool,
    /// Every write so far went to the end of the content.
    appending: bool,
    /// An explicit modification time set while open (kept at the next save).
    mtime_ns: Option<i64>,
}

fn io_errno(e: std::io::Error) -> Errno {
    e.raw_os_error().map(Errno::from_i32).unwrap_or(Errno::EIO)
}

/// Attribute changes of a `setattr`.
pub(crate) struct Change {
    pub mode: Option<u32>,
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    pub mtime_ns: Option<i64>,
    pub size: Option<u64>,
    pub fh: Option<u64>,
}

/// The writer of a writable mount. Empty only while a defragmentation runs (with
/// the mount's lock held) or when the writer could not be opened again after one;
/// [`Writable::usable`] says which, and the file system answers `EIO` to every
/// change (and reads rows from the archive's reader) while it is empty.
pub(crate) struct Slot(Option<ArchiveWriter>);

impl Deref for Slot {
    type Target = ArchiveWriter;
    fn deref(&self) -> &ArchiveWriter {
        self.0
            .as_ref()
            .expect("the file system checks Writable::usable first")
    }
}

impl DerefMut for Slot {
    fn deref_mut(&mut self) -> &mut ArchiveWriter {
        self.0
            .as_mut()
            .expect("the file system checks Writable::usable first")
    }
}

/// How a writable mount may change the archive.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Policy {
    /// Only additions: no removal, rename or change to the bytes of an existing file.
    pub append_only: bool,
    /// Defragment now and then (see the module's doc).
    pub defrag: bool,
}

pub(crate) struct Writable {
    pub writer: Slot,
    open: HashMap<u64, Handle>,
    /// The handle whose content is [`Content::Stream`], if any.
    streaming: Option<u64>,
    policy: Policy,
    /// The index, to open the writer again after a defragmentation.
    index_path: PathBuf,
    /// Bytes of files removed or replaced since the last defragmentation.
    removed: u64,
}

impl Writable {
    pub fn new(writer: ArchiveWriter, policy: Policy) -> Writable {
        Writable {
            index_path: writer.layout().index().to_path_buf(),
            writer: Slot(Some(writer)),
            open: HashMap::new(),
            streaming: None,
            policy,
            removed: 0,
        }
    }

    /// The writer is there (see [`Slot`]).
    pub fn usable(&self) -> bool {
        self.writer.0.is_some()
    }

    fn refuse_in_append_only(&self) -> Res<()> {
        if self.policy.append_only {
            return Err(Errno::EPERM);
        }
        Ok(())
    }

    /// Count `bytes` removed or replaced, and defragment if it is time.
    fn removed(&mut self, fs: &Fs, bytes: u64) {
        if !self.policy.defrag {
            return;
        }
        self.removed += bytes;
        if self.removed < DEFRAG_AFTER || !self.open.is_empty() {
            return;
        }
        // Holes (and trailing bytes): the shards' bytes that no file holds.
        let live = match self.writer.index().dir("") {
            Ok(Some(root)) => root.size_tree.max(0) as u64,
            _ => return,
        };
        let Ok(shards) = self.writer.layout().shard_files() else {
            return;
        };
        let physical: u64 = shards
            .iter()
            .filter_map(|s| std::fs::metadata(&s.path).ok())
            .map(|m| m.len())
            .sum();
        if physical.saturating_sub(live) * 10 < physical {
            return;
        }
        self.defragment(fs);
    }

    /// Close the writer, run a quick defragmentation, open the writer again.
    fn defragment(&mut self, fs: &Fs) {
        let path = self.index_path.clone();
        if let Some(w) = self.writer.0.take() {
            if let Err(e) = w.finish() {
                fs.log.line(&format!("{}: {e}", path.display()));
            }
        }
        let opts = DefragOptions::new(DefragMode::Quick {
            time_limit: DEFRAG_TIME,
        });
        match defrag(&path, &opts, &crate::core::progress::Progress::hidden()) {
            Ok(r) => fs.log.line(&format!(
                "{}: defragmented: {} files moved, {} bytes given back",
                path.display(),
                r.moved_files,
                r.freed_bytes
            )),
            Err(e) => fs
                .log
                .line(&format!("{}: defragmenting: {e}", path.display())),
        }
        match ArchiveWriter::open(&path, WriterOptions::with_mode(CreateMode::Append)) {
            Ok(w) => self.writer.0 = Some(w),
            Err(e) => fs.log.line(&format!(
                "{}: cannot open for writing again after defragmenting: {e}; \
                 changes to the mount fail with EIO from now on",
                path.display()
            )),
        }
        self.removed = 0;
    }

    fn fail(&self, fs: &Fs, what: &str, e: Error) -> Errno {
        let n = errno(&e);
        if n == Errno::EIO {
            fs.log.line(&format!("{what}: {e}"));
        }
        n
    }

    /// Make everything done so far durable.
    fn commit(&mut self, fs: &Fs) -> Res<()> {
        self.writer.commit().map_err(|e| self.fail(fs, "commit", e))
    }

    /// The size of `id` as the writer of an open handle sees it.
    pub fn open_size(&self, id: i64) -> Option<u64> {
        self.open
            .values()
            .filter(|h| h.id == id && h.dirty)
            .filter_map(|h| match &h.content {
                Content::Spool(s) => Some(s.len()),
                Content::Stream(pf) => Some(pf.written()),
                Content::Saved => None,
            })
            .max()
    }

    /// The path of `name` in the directory `parent`.
    fn child(&self, fs: &Fs, parent: u64, name: &OsStr) -> Res<String> {
        let dir = fs
            .dir_path(self.writer.index(), parent)
            .map_err(|e| self.fail(fs, "lookup", e))??;
        child_path(&dir, name).ok_or(Errno::EINVAL)
    }

    fn exists(&self, fs: &Fs, path: &str) -> Res<bool> {
        let i = self.writer.index();
        let r = i.is_file(path).and_then(|f| Ok(f || i.is_dir(path)?));
        r.map_err(|e| self.fail(fs, path, e))
    }

    fn file(&self, fs: &Fs, id: i64) -> Res<FileInfo> {
        match self.writer.index().file_by_id(id) {
            Ok(Some(fi)) => Ok(fi),
            Ok(None) => Err(Errno::ENOENT),
            Err(e) => Err(self.fail(fs, "open", e)),
        }
    }

    fn add_handle(&mut self, fs: &Fs, id: i64, content: Spool, dirty: bool) -> u64 {
        let fh = fs.new_fh();
        self.open.insert(
            fh,
            Handle {
                id,
                appending: true,
                content: Content::Spool(content),
                dirty,
                mtime_ns: None,
            },
        );
        fh
    }

    /// Turn the streamed content of `fh` back into a spool: read it back, cut it
    /// off the archive.
    fn demote(&mut self, fs: &Fs, fh: u64) -> Res<()> {
        let Some(h) = self.open.get_mut(&fh) else {
            return Ok(());
        };
        if !matches!(h.content, Content::Stream(_)) {
            return Ok(());
        }
        let Content::Stream(pf) = std::mem::replace(&mut h.content, Content::Saved) else {
            return Ok(());
        };
        if self.streaming == Some(fh) {
            self.streaming = None;
        }
        let mut spool = Spool::new();
        let mut buf = vec![0u8; (1 << 20).min(pf.written().max(1)) as usize];
        let mut at = 0;
        let mut r = Ok(());
        while at < pf.written() && r.is_ok() {
            let n = (buf.len() as u64).min(pf.written() - at) as usize;
            r = self
                .writer
                .read_pending(&pf, at, &mut buf[..n])
                .map_err(|e| self.fail(fs, pf.path(), e))
                .and_then(|()| spool.write_at(at, &buf[..n]).map_err(io_errno));
            at += n as u64;
        }
        let aborted = self.writer.abort_file(pf);
        if let Some(h) = self.open.get_mut(&fh) {
            h.content = Content::Spool(spool);
            h.appending = false;
        }
        r?;
        aborted.map_err(|e| self.fail(fs, "write", e))
    }

    /// Make room for another file: the stream of any other handle goes back to a
    /// spool.
    fn stop_other_stream(&mut self, fs: &Fs, fh: Option<u64>) -> Res<()> {
        match self.streaming {
            Some(s) if Some(s) != fh => self.demote(fs, s),
            _ => Ok(()),
        }
    }

    /// The content of a saved handle, loaded again to be changed.
    fn materialize(&mut self, fs: &Fs, fh: u64) -> Res<()> {
        let Some(h) = self.open.get(&fh) else {
            return Err(Errno::EBADF);
        };
        if !matches!(h.content, Content::Saved) {
            return Ok(());
        }
        let fi = self.file(fs, h.id)?;
        let mut spool = Spool::new();
        self.load(fs, &fi, &mut spool, fi.size)?;
        let h = self.open.get_mut(&fh).expect("checked above");
        h.content = Content::Spool(spool);
        h.appending = true;
        Ok(())
    }

    /// Start streaming `fh` (a spool written front to back that grew past
    /// [`STREAM_AT`]) when no other file streams. Failing to is not an error: the
    /// content stays in the spool.
    fn maybe_stream(&mut self, fh: u64) {
        if self.streaming.is_some() {
            return;
        }
        let Some(h) = self.open.get(&fh) else { return };
        let Content::Spool(s) = &h.content else {
            return;
        };
        if !h.appending || s.len() <= STREAM_AT {
            return;
        }
        let Ok(mut pf) = self.writer.begin_rewrite(h.id) else {
            return;
        };
        let mut buf = vec![0u8; 1 << 20];
        let mut at = 0u64;
        let mut ok = true;
        while ok && at < s.len() {
            let n = match s.read_at(at, &mut buf) {
                Ok(n) => n,
                Err(_) => break,
            };
            ok = self.writer.write_chunk(&mut pf, &buf[..n]).is_ok();
            at += n as u64;
        }
        if !ok || at < s.len() {
            let _ = self.writer.abort_file(pf);
            return;
        }
        let h = self.open.get_mut(&fh).expect("present");
        h.content = Content::Stream(pf);
        self.streaming = Some(fh);
    }

    /// Create an empty file and open it for writing.
    pub fn create(
        &mut self,
        fs: &Fs,
        parent: u64,
        name: &OsStr,
        meta: Meta,
        _flags: i32,
    ) -> Res<(i64, FileInfo, u64)> {
        let path = self.child(fs, parent, name)?;
        if self.exists(fs, &path)? {
            return Err(Errno::EEXIST);
        }
        let fi = self
            .writer
            .add_file(&path, meta, b"", None)
            .map_err(|e| self.fail(fs, &path, e))?;
        let id = match self.writer.index().file_with_id(&path) {
            Ok(Some((id, _))) => id,
            Ok(None) => return Err(Errno::EIO),
            Err(e) => return Err(self.fail(fs, &path, e)),
        };
        let fh = self.add_handle(fs, id, Spool::new(), true);
        Ok((id, fi, fh))
    }

    /// Open an existing file for writing: its content is copied into the handle
    /// (none of it with `O_TRUNC`).
    pub fn open(&mut self, fs: &Fs, id: i64, truncate: bool) -> Res<u64> {
        // Files created by this mount are open already when they are written.
        self.refuse_in_append_only()?;
        let fi = self.file(fs, id)?;
        let mut content = Spool::new();
        if !truncate {
            self.load(fs, &fi, &mut content, fi.size)?;
        }
        Ok(self.add_handle(fs, id, content, truncate))
    }

    /// Copy the first `len` bytes of `fi` into `content`, CRC-checked when whole.
    fn load(&self, fs: &Fs, fi: &FileInfo, content: &mut Spool, len: u64) -> Res<()> {
        let mut buf = vec![0u8; (1 << 20).min(len.max(1)) as usize];
        let mut crc = crate::core::crc::Crc32c::new();
        let mut at = 0u64;
        while at < len {
            let n = (buf.len() as u64).min(len - at) as usize;
            let got = fs
                .archive
                .read_at(fi, at, &mut buf[..n])
                .map_err(|e| self.fail(fs, &fi.path, e))?;
            if got < n {
                return Err(Errno::EIO);
            }
            crc.update(&buf[..n]);
            content
                .write_at(at, &buf[..n])
                .map_err(|e| self.fail(fs, &fi.path, Error::io("<temporary file>", e)))?;
            at += n as u64;
        }
        match fi.crc32c {
            Some(expected) if len == fi.size && expected != crc.value() => {
                let e = Error::CrcMismatch {
                    member: fi.path.clone(),
                    expected,
                    actual: crc.value(),
                };
                Err(self.fail(fs, &fi.path, e))
            }
            _ => Ok(()),
        }
    }

    pub fn write(&mut self, fs: &Fs, fh: u64, offset: u64, data: &[u8]) -> Res<()> {
        self.materialize(fs, fh)?;
        let h = self.open.get_mut(&fh).ok_or(Errno::EBADF)?;
        h.mtime_ns = None;
        h.dirty = true;
        if let Content::Stream(pf) = &mut h.content {
            if offset == pf.written() {
                return self
                    .writer
                    .write_chunk(pf, data)
                    .map_err(|e| self.fail(fs, "write", e));
            }
            self.demote(fs, fh)?;
        }
        let h = self.open.get_mut(&fh).expect("present");
        let Content::Spool(s) = &mut h.content else {
            return Err(Errno::EIO);
        };
        h.appending &= offset == s.len();
        s.write_at(offset, data).map_err(io_errno)?;
        self.maybe_stream(fh);
        Ok(())
    }

    pub fn read(&mut self, fs: &Fs, fh: u64, offset: u64, size: u32) -> Res<Vec<u8>> {
        let h = self.open.get(&fh).ok_or(Errno::EBADF)?;
        let mut buf = vec![0u8; size as usize];
        let n = match &h.content {
            Content::Spool(s) => s.read_at(offset, &mut buf).map_err(io_errno)?,
            Content::Stream(pf) => {
                let n = (size as u64).min(pf.written().saturating_sub(offset)) as usize;
                if n > 0 {
                    let r = self.writer.read_pending(pf, offset, &mut buf[..n]);
                    r.map_err(|e| self.fail(fs, "read", e))?;
                }
                n
            }
            Content::Saved => {
                let fi = self.file(fs, h.id)?;
                fs.archive
                    .read_at(&fi, offset, &mut buf)
                    .map_err(|e| self.fail(fs, &fi.path, e))?
            }
        };
        buf.truncate(n);
        Ok(buf)
    }

    /// Make the content of handle `fh` the new content of its file (appending it
    /// if it is not in the archive yet) and commit. A file removed meanwhile is not
    /// brought back.
    pub fn save(&mut self, fs: &Fs, fh: u64) -> Res<()> {
        let Some(h) = self.open.get(&fh) else {
            return Err(Errno::EBADF);
        };
        if !h.dirty {
            return Ok(());
        }
        let (id, mtime_ns) = (h.id, h.mtime_ns);
        let old = match self.writer.index().file_by_id(id) {
            Ok(found) => found,
            Err(e) => return Err(self.fail(fs, "save", e)),
        };
        let Some(old) = old else {
            // Unlinked while open: the content goes with it.
            self.demote(fs, fh)?;
            if let Some(h) = self.open.get_mut(&fh) {
                h.dirty = false;
            }
            return Ok(());
        };
        let meta = Meta {
            mtime_ns: Some(mtime_ns.unwrap_or_else(crate::core::index::now_ns)),
            ..old.meta
        };
        let r = if self.streaming == Some(fh) {
            let h = self.open.get_mut(&fh).expect("checked above");
            let Content::Stream(mut pf) = std::mem::replace(&mut h.content, Content::Saved) else {
                return Err(Errno::EIO);
            };
            self.streaming = None;
            pf.set_meta(meta);
            self.writer.finish_file(pf).map(drop)
        } else {
            self.stop_other_stream(fs, Some(fh))?;
            let h = self.open.get(&fh).expect("checked above");
            let Content::Spool(s) = &h.content else {
                return Err(Errno::EIO);
            };
            self.writer
                .replace_file_from_reader(id, meta, s.len(), &mut s.reader())
                .map(drop)
        };
        if let Err(e) = r {
            let n = self.fail(fs, &old.path, e);
            // A failed write leaves the open batch in an unknown state: abandon it.
            let _ = self.writer.rollback();
            return Err(n);
        }
        self.commit(fs)?;
        if let Some(h) = self.open.get_mut(&fh) {
            h.dirty = false;
        }
        // The old bytes count once no file is open (see `release`).
        self.removed += old.size;
        Ok(())
    }

    pub fn release(&mut self, fs: &Fs, fh: u64) -> Res<()> {
        let r = self.save(fs, fh);
        if r.is_err() {
            let _ = self.demote(fs, fh);
        }
        self.open.remove(&fh);
        if self.streaming == Some(fh) {
            self.streaming = None;
        }
        self.removed(fs, 0);
        r
    }

    pub fn mkdir(&mut self, fs: &Fs, parent: u64, name: &OsStr, meta: Meta) -> Res<(i64, DirInfo)> {
        let path = self.child(fs, parent, name)?;
        if self.exists(fs, &path)? {
            return Err(Errno::EEXIST);
        }
        self.writer
            .add_dir(&path, meta)
            .map_err(|e| self.fail(fs, &path, e))?;
        self.commit(fs)?;
        match self.writer.index().dir_with_id(&path) {
            Ok(Some(found)) => Ok(found),
            Ok(None) => Err(Errno::EIO),
            Err(e) => Err(self.fail(fs, &path, e)),
        }
    }

    pub fn unlink(&mut self, fs: &Fs, parent: u64, name: &OsStr) -> Res<()> {
        self.refuse_in_append_only()?;
        let path = self.child(fs, parent, name)?;
        let fi = self
            .writer
            .remove_file(&path)
            .map_err(|e| self.fail(fs, &path, e))?;
        self.commit(fs)?;
        self.removed(fs, fi.size);
        Ok(())
    }

    pub fn rmdir(&mut self, fs: &Fs, parent: u64, name: &OsStr) -> Res<()> {
        self.refuse_in_append_only()?;
        let path = self.child(fs, parent, name)?;
        self.writer
            .remove_empty_dir(&path)
            .map_err(|e| self.fail(fs, &path, e))?;
        self.commit(fs)
    }

    pub fn rename(
        &mut self,
        fs: &Fs,
        from: (u64, &OsStr),
        to: (u64, &OsStr),
        overwrite: bool,
    ) -> Res<()> {
        self.refuse_in_append_only()?;
        let old = self.child(fs, from.0, from.1)?;
        let new = self.child(fs, to.0, to.1)?;
        match self.writer.rename(&old, &new, overwrite) {
            Ok(()) => self.commit(fs),
            // The writer reports an existing target without `overwrite` like this.
            Err(Error::InvalidOperation(m)) if m.ends_with("directory already exists") => {
                Err(Errno::EEXIST)
            }
            Err(Error::InvalidOperation(_)) => Err(Errno::EINVAL),
            Err(e) => Err(self.fail(fs, &old, e)),
        }
    }

    pub fn setattr(&mut self, fs: &Fs, ino: u64, c: Change) -> Res<()> {
        match inode::node(ino) {
            Some(Node::File(id)) => self.setattr_file(fs, id, c),
            Some(Node::Root) | Some(Node::Dir(_)) => {
                if c.size.is_some() {
                    return Err(Errno::EISDIR);
                }
                let i = self.writer.index();
                let d = match inode::node(ino) {
                    Some(Node::Dir(id)) => i.dir_by_id(id),
                    _ => i.dir(""),
                };
                let d = match d {
                    Ok(Some(d)) => d,
                    Ok(None) => return Err(Errno::ENOENT),
                    Err(e) => return Err(self.fail(fs, "setattr", e)),
                };
                let meta = changed(d.meta, &c);
                self.writer
                    .add_dir(&d.path, meta)
                    .map_err(|e| self.fail(fs, &d.path, e))?;
                self.commit(fs)
            }
            None => Err(Errno::ENOENT),
        }
    }

    fn setattr_file(&mut self, fs: &Fs, id: i64, c: Change) -> Res<()> {
        let fi = self.file(fs, id)?;
        if let Some(size) = c.size {
            // The handle it was given with, or any handle of the file, or a
            // handle made for the purpose and saved at once.
            let fh = c.fh.filter(|fh| self.open.contains_key(fh)).or_else(|| {
                self.open
                    .iter()
                    .find(|(_, h)| h.id == id)
                    .map(|(fh, _)| *fh)
            });
            // Append-only: only files being written (which it created) change size.
            if fh.is_none() {
                self.refuse_in_append_only()?;
            }
            let (fh, temporary) = match fh {
                Some(fh) => (fh, false),
                None => {
                    let mut content = Spool::new();
                    self.load(fs, &fi, &mut content, size.min(fi.size))?;
                    (self.add_handle(fs, id, content, true), true)
                }
            };
            self.materialize(fs, fh)?;
            let unchanged = matches!(&self.open[&fh].content,
                Content::Stream(pf) if pf.written() == size);
            if !unchanged {
                self.demote(fs, fh)?;
                let h = self.open.get_mut(&fh).expect("present");
                let Content::Spool(s) = &mut h.content else {
                    return Err(Errno::EIO);
                };
                s.set_len(size).map_err(io_errno)?;
                h.appending = false;
            }
            let h = self.open.get_mut(&fh).expect("present");
            h.dirty = true;
            if temporary {
                self.release(fs, fh)?;
            }
        }
        if c.mode.is_none() && c.uid.is_none() && c.gid.is_none() && c.mtime_ns.is_none() {
            return Ok(());
        }
        let fi = self.file(fs, id)?;
        if let Some(t) = c.mtime_ns {
            for h in self.open.values_mut().filter(|h| h.id == id) {
                h.mtime_ns = Some(t);
            }
        }
        self.writer
            .set_meta(&fi.path, changed(fi.meta, &c))
            .map_err(|e| self.fail(fs, &fi.path, e))?;
        self.commit(fs)
    }

    /// Free blocks of `bsize` bytes on the file system holding the archive.
    pub fn free_blocks(&self, bsize: u64) -> u64 {
        rustix::fs::statvfs(&self.index_path)
            .map(|s| s.f_bavail.saturating_mul(s.f_frsize) / bsize)
            .unwrap_or(0)
    }

    /// Commit what is pending (at unmount).
    pub fn finish(&mut self) -> crate::Result<()> {
        match &mut self.writer.0 {
            Some(w) => w.commit(),
            None => Ok(()),
        }
    }
}

/// `meta` with the changes of `c` applied (the file-type bits of the mode kept).
fn changed(meta: Meta, c: &Change) -> Meta {
    Meta {
        mode: match (c.mode, meta.mode) {
            (Some(m), Some(old)) => Some((old & crate::core::entry::S_IFMT) | (m & 0o7777)),
            (Some(m), None) => Some(m & 0o7777),
            (None, old) => old,
        },
        uid: c.uid.or(meta.uid),
        gid: c.gid.or(meta.gid),
        mtime_ns: c.mtime_ns.or(meta.mtime_ns),
    }
}
