//! Appending to an archive: files whose content is in memory, streamed in chunks
//! or already in a shard, copies, replacements of a file's content, and
//! directories. Every conflict (the path exists as a file or a directory, a parent
//! is a file) is found before a byte is written.

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::time::Duration;

use super::ArchiveWriter;
use crate::core::crc::{self, Crc32c};
use crate::core::entry::{FileInfo, Meta};
use crate::core::error::{Error, IoContext, Result};
use crate::core::path as mpath;
use crate::core::shards;

/// File content handed to the writer.
enum Data<'a> {
    Borrowed(&'a [u8]),
    Owned(Vec<u8>),
}

impl Data<'_> {
    fn bytes(&self) -> &[u8] {
        match self {
            Data::Borrowed(d) => d,
            Data::Owned(v) => v,
        }
    }
}

/// A file whose bytes are being streamed in; see [`ArchiveWriter::begin_file`].
#[derive(Debug)]
pub struct PendingFile {
    path: String,
    meta: Meta,
    size: u64,
    shard: u64,
    offset: u64,
    written: u64,
    crc: Crc32c,
    /// The row id of the file whose content this one replaces.
    replaces: Option<i64>,
    /// The length is not known in advance: whatever is written is the file.
    open_ended: bool,
}

impl PendingFile {
    /// The path the file is stored at.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Bytes written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Set the metadata the file's row gets when it is finished.
    pub fn set_meta(&mut self, meta: Meta) {
        self.meta = meta;
    }

    /// The row of the finished file, stored at `path`.
    fn row(&self, path: String) -> FileInfo {
        FileInfo {
            path,
            shard: self.shard,
            offset: self.offset,
            size: self.size,
            crc32c: Some(self.crc.value()),
            meta: self.meta,
        }
    }
}

impl ArchiveWriter {
    /// Add a file whose content is in memory. `crc32c` may be passed when already
    /// computed (by a reader thread); otherwise it is computed here.
    pub fn add_file(
        &mut self,
        path: &str,
        meta: Meta,
        data: &[u8],
        crc32c: Option<u32>,
    ) -> Result<FileInfo> {
        self.add_file_data(path, meta, Data::Borrowed(data), crc32c)
    }

    /// [`add_file`](Self::add_file) for content in a buffer the writer may keep: it
    /// is written without being copied (gathered with its neighbours), then freed.
    pub fn add_file_owned(
        &mut self,
        path: &str,
        meta: Meta,
        data: Vec<u8>,
        crc32c: Option<u32>,
    ) -> Result<FileInfo> {
        self.add_file_data(path, meta, Data::Owned(data), crc32c)
    }

    fn add_file_data(
        &mut self,
        path: &str,
        meta: Meta,
        data: Data<'_>,
        crc32c: Option<u32>,
    ) -> Result<FileInfo> {
        self.check_usable()?;
        let path = self.file_path(path)?;
        let missing = self.missing_ancestors(&path)?;
        self.begin_batch()?;
        let bytes = data.bytes();
        let size = bytes.len() as u64;
        let placed = match self.pending {
            // Inside a file being written in chunks, an empty file takes no room
            // and stays valid whether that file is finished or cut off.
            Some(at) if size == 0 => Ok(at),
            _ => self.shards.place(size),
        };
        let (shard, offset) = match placed {
            Ok(pos) => pos,
            Err(e) => return self.poison(e),
        };
        let crc = crc32c.unwrap_or_else(|| crc::crc32c(bytes));
        let fi = FileInfo {
            path,
            shard,
            offset,
            size,
            crc32c: Some(crc),
            meta,
        };
        self.insert_new_file(&fi, missing)?;
        let written = match data {
            Data::Borrowed(d) => self.shards.write(d),
            Data::Owned(v) => self.shards.write_owned(v),
        };
        if let Err(e) = written {
            return self.poison(e);
        }
        self.account(&fi);
        self.maybe_commit()?;
        Ok(fi)
    }

    /// Insert the row of a new file (its missing ancestors first), replacing a file
    /// of that path when [`replace_since`](Self::replace_since) allows it.
    fn insert_new_file(&mut self, fi: &FileInfo, missing: Vec<String>) -> Result<()> {
        if missing.is_empty() {
            // The only possible conflict left is an existing file: the UNIQUE index
            // reports it before a byte is written.
            match self.index.insert_file(fi, None) {
                Ok(true) => {}
                Ok(false) => match self.replaceable(&fi.path)? {
                    Some(old) => {
                        self.drop_replaced(old)?;
                        match self.index.insert_file(fi, None) {
                            Ok(true) => {}
                            Ok(false) => return self.poison(Error::FileExists(fi.path.clone())),
                            Err(e) => return self.poison(e),
                        }
                    }
                    None => return Err(Error::FileExists(fi.path.clone())),
                },
                Err(e) => return self.poison(e),
            }
        } else {
            // A new parent: the file cannot exist yet.
            let r = self
                .insert_missing_dirs(missing)
                .and_then(|()| self.insert_new_row(fi));
            if let Err(e) = r {
                return self.poison(e);
            }
        }
        Ok(())
    }

    /// Index a file whose `size` bytes are already in shard `shard` at `offset`:
    /// nothing is written to the shards. For an archive wrapped around a tar or zip
    /// file (`--wrap`), whose shard is that file. Conflicts and replacements are
    /// those of [`add_file`](Self::add_file).
    pub fn add_extent(
        &mut self,
        path: &str,
        meta: Meta,
        (shard, offset, size): (u64, u64, u64),
        crc32c: Option<u32>,
    ) -> Result<FileInfo> {
        self.check_usable()?;
        let path = self.file_path(path)?;
        let missing = self.missing_ancestors(&path)?;
        self.begin_batch()?;
        let fi = FileInfo {
            path,
            shard,
            offset,
            size,
            crc32c,
            meta,
        };
        self.insert_new_file(&fi, missing)?;
        self.account(&fi);
        self.maybe_commit()?;
        Ok(fi)
    }

    /// Insert the row of a file whose path is known to be free.
    fn insert_new_row(&self, fi: &FileInfo) -> Result<()> {
        if self.index.insert_file(fi, None)? {
            Ok(())
        } else {
            Err(Error::FileExists(fi.path.clone()))
        }
    }

    fn account(&mut self, fi: &FileInfo) {
        let parent = mpath::parent(&fi.path).unwrap_or("");
        let d = self.delta(parent);
        d.files += 1;
        d.bytes += fi.size as i64;
        let batch = self.batch.as_mut().expect("batch is open");
        batch.bytes += fi.size;
        self.stats.files += 1;
        self.stats.bytes += fi.size;
    }

    /// Start a file whose `size` bytes will arrive in chunks ([`write_chunk`]), for
    /// content too large to hold in memory. All conflicts are checked here, before any
    /// byte is written; nothing else may be added until [`finish_file`] or
    /// [`abort_file`].
    ///
    /// [`write_chunk`]: Self::write_chunk
    /// [`finish_file`]: Self::finish_file
    /// [`abort_file`]: Self::abort_file
    pub fn begin_file(&mut self, path: &str, meta: Meta, size: u64) -> Result<PendingFile> {
        self.check_usable()?;
        let path = self.file_path(path)?;
        self.missing_ancestors(&path)?;
        if self.index.is_file(&path)? && self.replaceable(&path)?.is_none() {
            return Err(Error::FileExists(path));
        }
        self.begin_batch()?;
        let (shard, offset) = match self.shards.place(size) {
            Ok(pos) => pos,
            Err(e) => return self.poison(e),
        };
        self.pending = Some((shard, offset));
        Ok(PendingFile {
            path,
            meta,
            size,
            shard,
            offset,
            written: 0,
            crc: Crc32c::new(),
            replaces: None,
            open_ended: false,
        })
    }

    /// [`begin_file`](Self::begin_file) for content whose length is not known in
    /// advance (a compressed member whose header tells a wrong size): it is
    /// whatever arrives before [`finish_file`](Self::finish_file), which moves
    /// the file to a new shard if it crossed the shard size limit.
    pub fn begin_file_open_ended(&mut self, path: &str, meta: Meta) -> Result<PendingFile> {
        let mut pf = self.begin_file(path, meta, 0)?;
        pf.open_ended = true;
        Ok(pf)
    }

    /// Append a chunk of a pending file. More bytes than announced is an error.
    pub fn write_chunk(&mut self, pf: &mut PendingFile, data: &[u8]) -> Result<()> {
        self.check_usable()?;
        if self.shards.position() != (pf.shard, pf.offset + pf.written) {
            return Err(Error::InvalidOperation(format!(
                "{}: another write came between the chunks of this file",
                pf.path
            )));
        }
        if !pf.open_ended && pf.written + data.len() as u64 > pf.size {
            return Err(Error::SourceChanged {
                path: pf.path.clone(),
                detail: format!("grew while being read (expected {} bytes)", pf.size),
            });
        }
        if let Err(e) = self.shards.write(data) {
            return self.poison(e);
        }
        pf.crc.update(data);
        pf.written += data.len() as u64;
        if let Some(b) = self.batch.as_mut() {
            b.bytes += data.len() as u64;
        }
        Ok(())
    }

    /// Complete a pending file: check its length and insert its row.
    pub fn finish_file(&mut self, mut pf: PendingFile) -> Result<FileInfo> {
        self.check_usable()?;
        if pf.open_ended {
            pf.size = pf.written;
            self.pending = None;
            self.relocate_if_over_limit(&mut pf)?;
        }
        self.pending = None;
        if pf.written != pf.size {
            let detail = format!(
                "size changed while being read (expected {} bytes, got {})",
                pf.size, pf.written
            );
            let path = pf.path.clone();
            self.abort_file(pf)?;
            return Err(Error::SourceChanged { path, detail });
        }
        // The batch may have been committed in between; it is reopened here.
        self.begin_batch()?;
        if let Some(id) = pf.replaces {
            return self.finish_replacement(pf, id);
        }
        if let Some(old) = self.replaceable(&pf.path)? {
            self.drop_replaced(old)?;
        }
        let missing = self.missing_ancestors(&pf.path)?;
        let fi = pf.row(pf.path.clone());
        let r = self
            .insert_missing_dirs(missing)
            .and_then(|()| self.insert_new_row(&fi));
        if let Err(e) = r {
            return self.poison(e);
        }
        // `account` adds the size to the batch again; the chunks already counted it.
        if let Some(b) = self.batch.as_mut() {
            b.bytes = b.bytes.saturating_sub(fi.size);
        }
        self.account(&fi);
        self.maybe_commit()?;
        Ok(fi)
    }

    /// Abandon a pending file: its bytes are cut off the shard.
    pub fn abort_file(&mut self, pf: PendingFile) -> Result<()> {
        self.pending = None;
        if self.shards.position().0 == pf.shard {
            if let Err(e) = self.shards.truncate_to(pf.offset) {
                return self.poison(e);
            }
        }
        Ok(())
    }

    /// Add a file of `size` bytes read from `src`, streaming it in chunks.
    pub fn add_file_from_reader(
        &mut self,
        path: &str,
        meta: Meta,
        size: u64,
        src: &mut dyn Read,
    ) -> Result<FileInfo> {
        let pf = self.begin_file(path, meta, size)?;
        self.fill_file(pf, src)
    }

    /// Replace the content of the file whose row id is `id` by `size` bytes read from
    /// `src`, and its metadata by `meta`: the new bytes are appended like a new
    /// file's, then, in the same transaction, the old row is deleted and the new one
    /// inserted under the same row id and the path the file has then. The old bytes
    /// become a hole for `defrag`. A file rewritten through a mount keeps its inode
    /// number this way.
    pub fn replace_file_from_reader(
        &mut self,
        id: i64,
        meta: Meta,
        size: u64,
        src: &mut dyn Read,
    ) -> Result<FileInfo> {
        self.check_usable()?;
        let Some(old) = self.index.file_by_id(id)? else {
            return Err(Error::NotFound(format!("#{id}")));
        };
        self.begin_batch()?;
        let (shard, offset) = match self.shards.place(size) {
            Ok(pos) => pos,
            Err(e) => return self.poison(e),
        };
        let pf = PendingFile {
            path: old.path,
            meta,
            size,
            shard,
            offset,
            written: 0,
            crc: Crc32c::new(),
            replaces: Some(id),
            open_ended: false,
        };
        self.fill_file(pf, src)
    }

    /// Start replacing the content of the file whose row id is `id` by bytes that
    /// arrive in chunks ([`write_chunk`]) and whose length is not known in advance:
    /// they are appended as they come, and [`finish_file`] makes them the file's
    /// content in place of the old one (as [`replace_file_from_reader`] does), with
    /// the metadata set by [`PendingFile::set_meta`] (the old row's by default).
    /// A file that ends up crossing the shard size limit is moved to a new shard
    /// when it is finished (as Python does for streams). Nothing else but empty files may be
    /// added until the file is finished or aborted.
    ///
    /// [`write_chunk`]: Self::write_chunk
    /// [`finish_file`]: Self::finish_file
    /// [`replace_file_from_reader`]: Self::replace_file_from_reader
    pub fn begin_rewrite(&mut self, id: i64) -> Result<PendingFile> {
        self.check_usable()?;
        let Some(old) = self.index.file_by_id(id)? else {
            return Err(Error::NotFound(format!("#{id}")));
        };
        self.begin_batch()?;
        let (shard, offset) = match self.shards.place(0) {
            Ok(pos) => pos,
            Err(e) => return self.poison(e),
        };
        self.pending = Some((shard, offset));
        Ok(PendingFile {
            path: old.path,
            meta: old.meta,
            size: 0,
            shard,
            offset,
            written: 0,
            crc: Crc32c::new(),
            replaces: Some(id),
            open_ended: true,
        })
    }

    /// Read back `buf.len()` bytes of a pending file from `at` (bytes already
    /// written).
    pub fn read_pending(&mut self, pf: &PendingFile, at: u64, buf: &mut [u8]) -> Result<()> {
        if at + buf.len() as u64 > pf.written {
            return Err(Error::InvalidOperation(format!(
                "{}: read past the {} bytes written",
                pf.path, pf.written
            )));
        }
        if let Err(e) = self.shards.flush() {
            return self.poison(e);
        }
        let path = self.layout.shard_path(pf.shard);
        let f = File::open(&path).at(&path)?;
        std::os::unix::fs::FileExt::read_exact_at(&f, buf, pf.offset + at).at(&path)
    }

    /// Move an open-ended file that crosses the shard size limit from the middle of
    /// a shard to a new shard of its own (as Python does for streams): copy its bytes
    /// there, then cut them off the old shard.
    fn relocate_if_over_limit(&mut self, pf: &mut PendingFile) -> Result<()> {
        let limit = self.shards.limit();
        if pf.offset == 0 || pf.offset.saturating_add(pf.written) <= limit {
            return Ok(());
        }
        let old = self.layout.shard_path(pf.shard);
        let (shard, offset) = match self.shards.place(pf.written) {
            Ok(pos) => pos,
            Err(e) => return self.poison(e),
        };
        let src = File::open(&old).at(&old)?;
        let mut buf = vec![0u8; (1 << 20).min(pf.written) as usize];
        let mut at = 0u64;
        while at < pf.written {
            let n = (pf.written - at).min(buf.len() as u64) as usize;
            std::os::unix::fs::FileExt::read_exact_at(&src, &mut buf[..n], pf.offset + at)
                .at(&old)?;
            if let Err(e) = self.shards.write(&buf[..n]) {
                return self.poison(e);
            }
            at += n as u64;
        }
        let f = OpenOptions::new().write(true).open(&old).at(&old)?;
        // Left as trailing bytes while a reader has the shard mapped.
        shards::truncate_unless_mapped(&f, &old, pf.offset)?;
        pf.shard = shard;
        pf.offset = offset;
        Ok(())
    }

    /// Delete the row a pending file replaces and insert the pending file under its
    /// id, within the open batch (whose counters it corrects by hand).
    fn finish_replacement(&mut self, pf: PendingFile, id: i64) -> Result<FileInfo> {
        let Some(old) = self.index.file_by_id(id)? else {
            let path = pf.path.clone();
            self.abort_file(pf)?;
            return Err(Error::NotFound(path));
        };
        let fi = pf.row(old.path.clone());
        let r = self.index.delete_file_by_id(id).and_then(|_| {
            match self.index.insert_file(&fi, Some(id))? {
                true => Ok(()),
                false => Err(Error::FileExists(fi.path.clone())),
            }
        });
        if let Err(e) = r {
            return self.poison(e);
        }
        let d = self.delta(mpath::parent(&old.path).unwrap_or(""));
        d.files -= 1;
        d.bytes -= old.size as i64;
        if let Some(b) = self.batch.as_mut() {
            b.bytes = b.bytes.saturating_sub(fi.size);
        }
        self.account(&fi);
        self.maybe_commit()?;
        Ok(fi)
    }

    /// Write `pf`'s bytes from `src` and finish it (or abort it on a failure).
    fn fill_file(&mut self, mut pf: PendingFile, src: &mut dyn Read) -> Result<FileInfo> {
        let size = pf.size;
        let mut buf = vec![0u8; (1 << 20).min(size.max(1) as usize)];
        loop {
            let n = match src.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let path = pf.path.clone();
                    self.abort_file(pf)?;
                    return Err(Error::SourceChanged {
                        path,
                        detail: format!("read failed: {e}"),
                    });
                }
            };
            if let Err(e) = self.write_chunk(&mut pf, &buf[..n]) {
                self.abort_file(pf)?;
                return Err(e);
            }
        }
        self.finish_file(pf)
    }

    /// The whole content of `fi` (a row of this writer's index, perhaps added in the
    /// open batch), CRC-checked. Bytes still buffered are handed to the kernel first,
    /// so that files added a moment ago read back.
    pub fn read_file(&mut self, fi: &FileInfo) -> Result<Vec<u8>> {
        let data = self.read_at(fi, 0, fi.size)?;
        fi.check_crc(&data)?;
        Ok(data)
    }

    /// Up to `len` bytes of `fi` from `offset` (clamped to the file), not CRC-checked;
    /// see [`read_file`](Self::read_file).
    pub fn read_at(&mut self, fi: &FileInfo, offset: u64, len: u64) -> Result<Vec<u8>> {
        let start = offset.min(fi.size);
        let mut buf = vec![0u8; len.min(fi.size - start) as usize];
        self.read_into(fi, start, &mut buf)?;
        Ok(buf)
    }

    /// Fill `buf` with the bytes of `fi` from `at` (which must lie within the
    /// file), as [`read_at`](Self::read_at) reads them.
    pub(super) fn read_into(&mut self, fi: &FileInfo, at: u64, buf: &mut [u8]) -> Result<()> {
        self.check_usable()?;
        // Bytes already in the shard file (a file committed a while ago) are read
        // without a flush, which would cost a device round trip with direct I/O.
        if !self.shards.is_in_file(fi.shard, fi.end()) {
            if let Err(e) = self.shards.flush() {
                return self.poison(e);
            }
        }
        let (file, path) = self.shard_reader(fi.shard)?;
        match std::os::unix::fs::FileExt::read_exact_at(file, buf, fi.offset + at) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                let shard_len = file.metadata().at(path)?.len();
                return Err(Error::BadExtent {
                    member: fi.path.clone(),
                    shard: fi.shard as i64,
                    offset: fi.offset as i64,
                    size: fi.size as i64,
                    detail: format!(
                        "extends past the end of {} ({shard_len} bytes)",
                        path.display()
                    ),
                });
            }
            Err(e) => return Err(Error::io(path, e)),
        }
        self.patches.overlay(fi, at, buf)
    }

    /// Commit at most this often and every this many bytes from now on (see
    /// [`WriterOptions::commit_interval`](super::WriterOptions::commit_interval)); `Duration::MAX` and `u64::MAX` commit only
    /// when told ([`commit`](Self::commit), [`finish`](Self::finish)): one
    /// transaction for a whole bulk import.
    pub fn set_commit_policy(&mut self, interval: Duration, bytes: u64) {
        self.opts.commit_interval = interval;
        self.opts.commit_bytes = bytes;
    }

    /// Add a file at `to` holding a copy of the content of the file at `from`, which
    /// may still be in the open batch (a tar hard link to an earlier member). The
    /// bytes are copied, so the two rows never share an extent. The copy is checked
    /// against the source's stored CRC32C.
    pub fn copy_file(&mut self, from: &str, to: &str, meta: Meta) -> Result<FileInfo> {
        self.check_usable()?;
        let from = mpath::normalize(from);
        let src = match self.index.file(&from)? {
            Some(fi) => fi,
            None if self.index.is_dir(&from)? => return Err(Error::IsADirectory(from)),
            None => return Err(Error::NotFound(from)),
        };
        // The source's bytes may still sit in the appender's buffer.
        if let Err(e) = self.shards.flush() {
            return self.poison(e);
        }
        let shard_path = self.layout.shard_path(src.shard);
        let file = File::open(&shard_path).at(&shard_path)?;
        let mut pf = self.begin_file(to, meta, src.size)?;
        let mut buf = vec![0u8; (1 << 20).min(src.size.max(1) as usize)];
        let mut done = 0u64;
        while done < src.size {
            let n = buf.len().min((src.size - done) as usize);
            let r =
                std::os::unix::fs::FileExt::read_exact_at(&file, &mut buf[..n], src.offset + done);
            if let Err(e) = r {
                self.abort_file(pf)?;
                return Err(Error::BadExtent {
                    member: src.path.clone(),
                    shard: src.shard as i64,
                    offset: src.offset as i64,
                    size: src.size as i64,
                    detail: format!("cannot read it back from {}: {e}", shard_path.display()),
                });
            }
            // A rewrite in place of the source waiting for the commit is part of it.
            let r = self
                .patches
                .overlay(&src, done, &mut buf[..n])
                .and_then(|()| self.write_chunk(&mut pf, &buf[..n]));
            if let Err(e) = r {
                self.abort_file(pf)?;
                return Err(e);
            }
            done += n as u64;
        }
        if let Some(expected) = src.crc32c {
            let actual = pf.crc.value();
            if actual != expected {
                self.abort_file(pf)?;
                return Err(Error::CrcMismatch {
                    member: src.path,
                    expected,
                    actual,
                });
            }
        }
        self.finish_file(pf)
    }

    /// From now on, a file added at the path of a file whose bytes start at or after
    /// `since` (a position as [`position`](Self::position) gives it: a file this
    /// writer added since then) replaces it instead of failing with
    /// [`Error::FileExists`]: the old row is removed in the open batch, its bytes
    /// stay in the shard as a hole, and it is listed by
    /// [`take_replaced`](Self::take_replaced). `None` (the default) turns this off.
    /// Imports use it for the last of several members of one name to win, as
    /// `tar -x` leaves it.
    pub fn replace_since(&mut self, since: Option<(u64, u64)>) {
        self.replace_since = since;
    }

    /// The position set by [`replace_since`](Self::replace_since).
    pub fn replacing_since(&self) -> Option<(u64, u64)> {
        self.replace_since
    }

    /// The files replaced since the last call (see [`replace_since`](Self::replace_since)).
    pub fn take_replaced(&mut self) -> Vec<FileInfo> {
        std::mem::take(&mut self.replaced)
    }

    /// The file at `path`, when a new file may replace it.
    fn replaceable(&self, path: &str) -> Result<Option<FileInfo>> {
        let Some(since) = self.replace_since else {
            return Ok(None);
        };
        Ok(self
            .index
            .file(path)?
            .filter(|fi| (fi.shard, fi.offset) >= since))
    }

    /// Remove a file's row inside the open batch (triggers are off: the directory
    /// counters follow with the batch's deltas).
    fn drop_replaced(&mut self, fi: FileInfo) -> Result<()> {
        self.begin_batch()?;
        if let Err(e) = self.index.delete_file_row(&fi.path) {
            return self.poison(e);
        }
        let parent = mpath::parent(&fi.path).unwrap_or("").to_string();
        let d = self.delta(&parent);
        d.files -= 1;
        d.bytes -= fi.size as i64;
        self.stats.files = self.stats.files.saturating_sub(1);
        self.stats.bytes = self.stats.bytes.saturating_sub(fi.size);
        self.replaced.push(fi);
        Ok(())
    }

    /// Add a directory with its metadata. An existing directory gets the metadata
    /// (its counters are kept); missing ancestors are created.
    pub fn add_dir(&mut self, path: &str, meta: Meta) -> Result<()> {
        self.check_usable()?;
        let path = mpath::check_member(path)?;
        if !path.is_empty() && self.index.is_file(&path)? {
            return Err(Error::FileExists(path));
        }
        let missing = if self.dir_exists(&path)? {
            None
        } else {
            Some(self.missing_ancestors(&path)?)
        };
        self.begin_batch()?;
        let r = match missing {
            None => self.index.set_dir_meta(&path, &meta).map(drop),
            Some(missing) => self.insert_missing_dirs(missing).and_then(|()| {
                self.index.insert_dir(&path, &meta)?;
                let parent = mpath::parent(&path).unwrap_or("").to_string();
                self.delta(&parent).subdirs += 1;
                self.stats.dirs += 1;
                self.dirs.known.insert(path);
                Ok(())
            }),
        };
        if let Err(e) = r {
            return self.poison(e);
        }
        self.maybe_commit()
    }
}
