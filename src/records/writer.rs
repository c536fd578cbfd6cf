//! Writing record datasets: append, modify, delete, commit.
//!
//! Why it is built this way (writer threads and the online operations):
//!
//! * One writing process at a time: [`RecordWriter`] holds an exclusive `flock` on
//!   `DIR/lock`; a second writer gets [`Error::RecordsLocked`]. Readers take no lock
//!   that a writer waits for.
//! * 1 to 4 writer slots, each bound to its own chunk, as the design has it: records
//!   are buffered, and a flush hands each slot a contiguous share of them to
//!   compress, checksum and append to its chunk on a thread of its own, while the
//!   caller fills a second buffer (the flush's entries are set when it lands: at
//!   the next flush, a delete or a commit). Chunks are appended with direct I/O
//!   where the file system has it (`core::shards::direct`), past the page cache.
//! * Chunks are append-only; modify appends the new bytes and repoints the entry;
//!   delete moves the last entry into the hole (indices are not stable under delete).
//!
//! # Durability order (see docs/FORMAT.md §10.2)
//!
//! A commit (1) writes and `fdatasync`s the chunk bytes; (2) writes the entries and
//! CRCs of new records past the committed length and syncs the table files; (3)
//! replaces `meta.json` atomically (temporary file, sync, rename, directory sync):
//! this is the commit point, and it carries as `redo` every entry change *below* the
//! committed length (modify, delete); (4) writes those changes into the table files
//! and syncs them. A kill before (3) leaves the old dataset (new bytes past the
//! committed write positions are ignored and overwritten later); after (3) the new
//! one, since readers apply `redo` over the table files and the next writer writes it.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use crate::core::error::{Error, IoContext, Result};
use crate::core::output::sync_dir;
use crate::core::output::write_file;
use crate::core::shards::truncate_unless_mapped;
use crate::records::appender::{lock_dataset, ChunkAppender, ChunkLimits};
use crate::records::format::{
    parse_chunk_name, Compress, DatasetPaths, Dtype, Entry, Meta, Redo, Unfull, CHUNK_BYTES,
    CHUNK_GROW, CHUNK_RECORDS, CRC_SIZE, ENTRY_SIZE, TABLE_GROW,
};

/// Options of a new dataset ([`RecordWriter::create`]) and of a writer.
#[derive(Debug, Clone)]
pub struct DatasetOptions {
    /// The element type of the records (fixed when the dataset is created).
    pub dtype: Dtype,
    /// How record bytes are compressed in the chunks (fixed when the dataset is created).
    pub compress: Compress,
    /// Records per chunk.
    pub chunk_records: u64,
    /// Byte limit of a chunk.
    pub chunk_bytes: u64,
    /// Chunk files grow by this many bytes at a time.
    pub chunk_grow: u64,
    /// The table files grow by this many entries at a time.
    pub table_grow: u64,
    /// Writer threads, each bound to its own chunk (1 to 4).
    pub writers: usize,
    /// Commit after this many bytes of new records.
    pub commit_bytes: u64,
}

impl Default for DatasetOptions {
    fn default() -> Self {
        DatasetOptions {
            dtype: Dtype::Bytes,
            compress: Compress::None,
            chunk_records: CHUNK_RECORDS,
            chunk_bytes: CHUNK_BYTES,
            chunk_grow: CHUNK_GROW,
            table_grow: TABLE_GROW,
            writers: 1,
            commit_bytes: 256 << 20,
        }
    }
}

/// The largest number of writer slots.
pub const MAX_WRITERS: usize = 4;
/// Pending record bytes handed to the slots at once…
const FLUSH_BYTES: usize = 32 << 20;
/// …after a first flush of this many, doubling.
const FIRST_FLUSH_BYTES: usize = 2 << 20;
/// A commit is made when this many entry changes below the committed length wait
/// (they travel in `meta.json`).
const REDO_LIMIT: usize = 16384;

/// What a writer did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct WriteSummary {
    /// Records in the dataset after the last commit.
    pub length: u64,
    /// Records appended.
    pub appended: u64,
    /// Records replaced in place.
    pub modified: u64,
    /// Records deleted.
    pub deleted: u64,
    /// Bytes of new record data written to chunks.
    pub bytes: u64,
}

struct Item {
    target: u64,
    start: usize,
    len: usize,
}

/// The single writer of a dataset.
pub struct RecordWriter {
    pub(super) paths: DatasetPaths,
    /// The last committed `meta.json`.
    pub(super) meta: Meta,
    pub(super) offset: File,
    pub(super) crc: File,
    /// Entries the table files have room for.
    pub(super) table_cap: u64,
    /// The writer slots; empty while a flush runs (`in_flight` has them).
    pub(super) slots: Vec<ChunkAppender>,
    pub(super) next_id: Arc<AtomicU32>,
    /// Unfull chunks no slot is appending to.
    pub(super) idle_unfull: Vec<Unfull>,
    len: u64,
    tail_start: u64,
    tail: Vec<(Entry, u32)>,
    overrides: BTreeMap<u64, (Entry, u32)>,
    buf: Vec<u8>,
    items: Vec<Item>,
    /// The records handed to the slots by the last `flush_data`, being written on
    /// a thread of their own while the caller fills `buf` again.
    in_flight: Option<crate::core::fork::Worker<Flushed>>,
    /// The buffer of the last landed flush, for the next one.
    spare: Vec<u8>,
    /// Bytes buffered before the next flush: growing to `FLUSH_BYTES`.
    flush_at: usize,
    uncommitted_bytes: u64,
    commit_bytes: u64,
    summary: WriteSummary,
    poisoned: bool,
    /// The process generation that opened the writer ([`crate::core::fork`]).
    generation: u64,
    _lock: File,
}

fn open_rw(path: &Path, create: bool) -> Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(create)
        .truncate(false)
        .open(path)
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                Error::CorruptRecords {
                    path: path.to_path_buf(),
                    detail: "missing (every dataset has one)".into(),
                }
            } else {
                Error::io(path, e)
            }
        })
}

/// Is `dir` a dataset (has a `meta.json`)?
pub fn is_dataset(dir: &Path) -> bool {
    dir.join("meta.json").is_file()
}

/// Remove the files of the dataset at `dir` (only the names a dataset has), and
/// `dir` itself when that leaves it empty. Anything else in it is left alone.
pub fn remove_dataset(dir: &Path) -> Result<()> {
    let p = DatasetPaths::new(dir);
    for f in [p.meta(), p.meta_tmp(), p.offset(), p.crc(), p.lock()] {
        match std::fs::remove_file(&f) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(&f, e)),
        }
    }
    if let Ok(entries) = std::fs::read_dir(p.chunk_dir()) {
        for e in entries.flatten() {
            let name = e.file_name();
            if name.to_str().and_then(parse_chunk_name).is_some() {
                std::fs::remove_file(e.path()).at(e.path())?;
            }
        }
        let _ = std::fs::remove_dir(p.chunk_dir());
    }
    let _ = std::fs::remove_dir(dir);
    Ok(())
}

impl RecordWriter {
    /// Create a new, empty dataset at `dir` (a missing or empty directory; with
    /// `overwrite`, an existing dataset is removed first).
    pub fn create(dir: impl AsRef<Path>, opts: &DatasetOptions, overwrite: bool) -> Result<Self> {
        let dir = dir.as_ref();
        if is_dataset(dir) {
            if !overwrite {
                return Err(Error::Refused {
                    path: dir.to_path_buf(),
                    detail: "a dataset exists here (use -f to replace it)".into(),
                });
            }
            // Hold its lock while removing it, so a running writer is not pulled
            // from under its feet.
            let lock = lock_dataset(&DatasetPaths::new(dir))?;
            remove_dataset(dir)?;
            drop(lock);
        }
        match std::fs::read_dir(dir) {
            Ok(mut entries) => {
                if entries.next().is_some() {
                    return Err(Error::Refused {
                        path: dir.to_path_buf(),
                        detail: "exists and is not an empty directory or a dataset".into(),
                    });
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::create_dir_all(dir).at(dir)?;
            }
            Err(e) => return Err(Error::io(dir, e)),
        }
        let paths = DatasetPaths::new(dir);
        std::fs::create_dir(paths.chunk_dir()).at(paths.chunk_dir())?;
        open_rw(&paths.offset(), true)?
            .sync_all()
            .at(paths.offset())?;
        open_rw(&paths.crc(), true)?.sync_all().at(paths.crc())?;
        let mut meta = Meta::new(
            opts.dtype,
            opts.compress,
            opts.chunk_records,
            opts.chunk_bytes,
        );
        meta.chunks.grow = opts.chunk_grow.max(1);
        meta.table_grow = opts.table_grow.max(1);
        sync_dir(&paths.chunk(0))?;
        write_file(&paths.meta(), &paths.meta_tmp(), &meta.to_json())?;
        Self::open(dir, opts.writers)
    }

    /// Open the dataset at `dir` for writing with `writers` slots (1 to 4). What a
    /// killed writer left is finished or cleaned first: `redo` written into the
    /// table files, retired chunks and chunks past `chunks.num` removed.
    pub fn open(dir: impl AsRef<Path>, writers: usize) -> Result<Self> {
        let dir = dir.as_ref();
        let paths = DatasetPaths::new(dir);
        if !paths.meta().is_file() {
            return Err(Error::CorruptRecords {
                path: dir.to_path_buf(),
                detail: "not a record dataset (no meta.json)".into(),
            });
        }
        let lock = lock_dataset(&paths)?;
        let text = std::fs::read(paths.meta()).at(paths.meta())?;
        let meta = Meta::parse(&text, &paths.meta())?;
        let offset = open_rw(&paths.offset(), false)?;
        let crc = open_rw(&paths.crc(), false)?;
        let off_len = offset.metadata().at(paths.offset())?.len();
        let crc_len = crc.metadata().at(paths.crc())?.len();
        let table_cap = (off_len / ENTRY_SIZE as u64).min(crc_len / CRC_SIZE as u64);
        if table_cap < meta.length {
            let (p, have) = if off_len / (ENTRY_SIZE as u64) < meta.length {
                (paths.offset(), off_len)
            } else {
                (paths.crc(), crc_len)
            };
            return Err(Error::CorruptRecords {
                path: p,
                detail: format!(
                    "too short for the {} records of meta.json ({have} bytes)",
                    meta.length
                ),
            });
        }
        let writers = writers.clamp(1, MAX_WRITERS);
        let limits = ChunkLimits {
            records: meta.chunks.size,
            bytes: meta.chunks.max_bytes,
            grow: meta.chunks.grow,
            align: meta.dtype.size() as u64,
        };
        let mut w = RecordWriter {
            slots: (0..writers)
                .map(|_| ChunkAppender::new(paths.clone(), limits, meta.compress))
                .collect(),
            next_id: Arc::new(AtomicU32::new(meta.chunks.num)),
            idle_unfull: Vec::new(),
            len: meta.length,
            tail_start: meta.length,
            tail: Vec::new(),
            overrides: BTreeMap::new(),
            buf: Vec::new(),
            items: Vec::new(),
            in_flight: None,
            spare: Vec::new(),
            flush_at: FIRST_FLUSH_BYTES,
            uncommitted_bytes: 0,
            commit_bytes: DatasetOptions::default().commit_bytes,
            summary: WriteSummary {
                length: meta.length,
                ..Default::default()
            },
            poisoned: false,
            generation: crate::core::fork::generation(),
            paths,
            meta,
            offset,
            crc,
            table_cap,
            _lock: lock,
        };
        w.recover()?;
        // Slots continue the appendable unfull chunks, the most recent first.
        let mut unfull = w.meta.chunks.unfull.clone();
        unfull.sort_by_key(|u| std::cmp::Reverse(u.0));
        let mut k = 0;
        for u in unfull {
            let appendable = u.2 < w.meta.chunks.size && u.1 < w.meta.chunks.max_bytes;
            if appendable && k < w.slots.len() {
                w.slots[k].resume(u.0, u.1, u.2)?;
                k += 1;
            } else {
                w.idle_unfull.push(u);
            }
        }
        Ok(w)
    }

    /// Finish what a killed writer left.
    fn recover(&mut self) -> Result<()> {
        let mut changed = false;
        if !self.meta.redo.is_empty() {
            let redo = std::mem::take(&mut self.meta.redo);
            self.write_redo(&redo)?;
            changed = true;
        }
        if !self.meta.retire.is_empty() {
            remove_chunks(&self.paths, &std::mem::take(&mut self.meta.retire))?;
            changed = true;
        }
        // Chunks at or past `num` were started by a writer killed before its commit.
        if let Ok(entries) = std::fs::read_dir(self.paths.chunk_dir()) {
            for e in entries.flatten() {
                if let Some(id) = e.file_name().to_str().and_then(parse_chunk_name) {
                    if id >= self.meta.chunks.num {
                        std::fs::remove_file(e.path()).at(e.path())?;
                    }
                }
            }
        }
        let _ = std::fs::remove_file(self.paths.meta_tmp());
        if changed {
            write_file(
                &self.paths.meta(),
                &self.paths.meta_tmp(),
                &self.meta.to_json(),
            )?;
        }
        Ok(())
    }

    /// Write entry changes into the table files and sync them.
    fn write_redo(&mut self, redo: &[Redo]) -> Result<()> {
        if redo.is_empty() {
            return Ok(());
        }
        for r in redo {
            self.offset
                .write_all_at(&r.entry().encode(), r.0 * ENTRY_SIZE as u64)
                .at(self.paths.offset())?;
            self.crc
                .write_all_at(&r.4.to_le_bytes(), r.0 * CRC_SIZE as u64)
                .at(self.paths.crc())?;
        }
        self.offset.sync_data().at(self.paths.offset())?;
        self.crc.sync_data().at(self.paths.crc())?;
        Ok(())
    }

    /// The files of the dataset.
    pub fn paths(&self) -> &DatasetPaths {
        &self.paths
    }

    /// The number of records, counting uncommitted changes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True when there are no records (uncommitted changes counted).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The last committed `meta.json`.
    pub fn meta(&self) -> &Meta {
        &self.meta
    }

    /// Commit after this many bytes of new records (default 256 MiB).
    pub fn set_commit_bytes(&mut self, bytes: u64) {
        self.commit_bytes = bytes.max(1);
    }

    fn check_usable(&self) -> Result<()> {
        if self.generation != crate::core::fork::generation() {
            return Err(Error::InvalidOperation(format!(
                "{}: opened for writing in a parent process; a forked child cannot write \
                 through it (open the dataset again in the child)",
                self.paths.dir.display()
            )));
        }
        if self.poisoned {
            return Err(Error::InvalidOperation(format!(
                "{}: an earlier write failed; the uncommitted changes were abandoned",
                self.paths.dir.display()
            )));
        }
        Ok(())
    }

    fn poison<T>(&mut self, e: Error) -> Result<T> {
        self.poisoned = true;
        Err(e)
    }

    fn out_of_range(&self, i: u64) -> Error {
        Error::RecordOutOfRange {
            path: self.paths.dir.clone(),
            index: i,
            len: self.len,
        }
    }

    /// Append one record; returns its index. Durable after the next commit.
    pub fn append(&mut self, data: &[u8]) -> Result<u64> {
        self.append_with(data.len(), |v: &mut Vec<u8>| -> Result<()> {
            v.extend_from_slice(data);
            Ok(())
        })
    }

    /// Append one record of `len` bytes that `fill` puts straight into the writer's
    /// buffer (appending exactly `len` bytes to the vector it is given), so that a
    /// record read from a stream is not copied through a buffer of the caller's.
    /// When `fill` fails, or appends another number of bytes, nothing is appended
    /// and its error (or `InvalidOperation`) is returned.
    pub fn append_with<E: From<Error>>(
        &mut self,
        len: usize,
        fill: impl FnOnce(&mut Vec<u8>) -> std::result::Result<(), E>,
    ) -> std::result::Result<u64, E> {
        self.check_usable()?;
        let start = self.buf.len();
        self.buf.reserve(len);
        if let Err(e) = fill(&mut self.buf) {
            self.buf.truncate(start);
            return Err(e);
        }
        if self.buf.len() != start + len {
            let got = self.buf.len() - start;
            self.buf.truncate(start);
            return Err(Error::InvalidOperation(format!(
                "a record of {len} bytes was given {got} bytes"
            ))
            .into());
        }
        let i = self.len;
        self.tail.push((Entry::default(), 0));
        self.len += 1;
        self.pushed(i, start)?;
        self.summary.appended += 1;
        Ok(i)
    }

    /// Append records in order; returns the index of the first.
    pub fn append_batch<T: AsRef<[u8]>>(&mut self, records: &[T]) -> Result<u64> {
        let first = self.len;
        for r in records {
            self.append(r.as_ref())?;
        }
        Ok(first)
    }

    /// Replace record `i`: the new bytes are appended and entry `i` repointed (the
    /// old bytes become garbage until a rebalance).
    pub fn modify(&mut self, i: u64, data: &[u8]) -> Result<()> {
        self.check_usable()?;
        if i >= self.len {
            return Err(self.out_of_range(i));
        }
        self.push_item(i, data)?;
        self.summary.modified += 1;
        Ok(())
    }

    /// Delete the records at `indices` (any order, duplicates allowed), each index
    /// naming the record it named before the call: they are deleted from the highest
    /// down, so the record moved into a hole is never one still to be deleted. An
    /// index out of range is an error before anything is deleted. `after_each` runs
    /// after each deletion with the number done so far (for periodic commits).
    pub fn delete_many(
        &mut self,
        indices: &[u64],
        after_each: &mut dyn FnMut(&mut RecordWriter, u64) -> Result<()>,
    ) -> Result<()> {
        let mut idx = indices.to_vec();
        idx.sort_unstable();
        idx.dedup();
        if let Some(&max) = idx.last() {
            if max >= self.len() {
                return Err(Error::RecordOutOfRange {
                    path: self.paths.dir.clone(),
                    index: max,
                    len: self.len(),
                });
            }
        }
        for (k, &i) in idx.iter().rev().enumerate() {
            self.delete(i)?;
            after_each(self, k as u64 + 1)?;
        }
        Ok(())
    }

    /// Delete record `i`: the last record takes its index and the length shrinks by
    /// one (docs/FORMAT.md §10.2: indices are not stable under delete).
    pub fn delete(&mut self, i: u64) -> Result<()> {
        self.check_usable()?;
        if i >= self.len {
            return Err(self.out_of_range(i));
        }
        if let Err(e) = self.drain() {
            return self.poison(e);
        }
        let last = self.len - 1;
        let moved = self.entry(last)?;
        if i != last {
            self.set(i, moved);
        }
        if last >= self.tail_start {
            self.tail.pop();
        } else {
            self.tail_start = last;
            self.overrides.remove(&last);
        }
        self.len -= 1;
        self.summary.deleted += 1;
        self.maybe_commit()
    }

    fn push_item(&mut self, target: u64, data: &[u8]) -> Result<()> {
        let start = self.buf.len();
        self.buf.extend_from_slice(data);
        self.pushed(target, start)
    }

    /// Account for the record just put at `buf[start..]`.
    fn pushed(&mut self, target: u64, start: usize) -> Result<()> {
        let len = self.buf.len() - start;
        self.items.push(Item { target, start, len });
        self.uncommitted_bytes += len as u64;
        self.summary.bytes += len as u64;
        if self.buf.len() >= self.flush_at {
            // Small first flushes, so that the disk starts early.
            self.flush_at = (self.flush_at * 2).min(FLUSH_BYTES);
            if let Err(e) = self.flush_data() {
                return self.poison(e);
            }
        }
        self.maybe_commit()
    }

    fn maybe_commit(&mut self) -> Result<()> {
        if self.uncommitted_bytes >= self.commit_bytes || self.overrides.len() >= REDO_LIMIT {
            self.commit()?;
        }
        Ok(())
    }

    /// The entry and CRC of record `i` as this writer sees it.
    fn entry(&self, i: u64) -> Result<(Entry, u32)> {
        if i >= self.tail_start {
            return Ok(self.tail[(i - self.tail_start) as usize]);
        }
        if let Some(e) = self.overrides.get(&i) {
            return Ok(*e);
        }
        let mut b = [0u8; ENTRY_SIZE];
        self.offset
            .read_exact_at(&mut b, i * ENTRY_SIZE as u64)
            .at(self.paths.offset())?;
        let mut c = [0u8; CRC_SIZE];
        self.crc
            .read_exact_at(&mut c, i * CRC_SIZE as u64)
            .at(self.paths.crc())?;
        Ok((Entry::decode(&b), u32::from_le_bytes(c)))
    }

    fn set(&mut self, i: u64, e: (Entry, u32)) {
        if i >= self.tail_start {
            self.tail[(i - self.tail_start) as usize] = e;
        } else {
            self.overrides.insert(i, e);
        }
    }

    /// Hand the buffered records to the writer slots, which write them on a thread
    /// of their own while the caller goes on filling the buffer (its reading and
    /// the slots' CRCs and writes overlap). The entries are set when the flush lands
    /// (`land`): at the next flush, a delete, or a commit.
    fn flush_data(&mut self) -> Result<()> {
        self.land()?;
        if self.items.is_empty() {
            return Ok(());
        }
        let items = std::mem::take(&mut self.items);
        let buf = std::mem::replace(&mut self.buf, std::mem::take(&mut self.spare));
        let mut slots = std::mem::take(&mut self.slots);
        let next_id = self.next_id.clone();
        self.in_flight = Some(crate::core::fork::Worker::spawn(move || {
            let entries = write_shares(&mut slots, &items, &buf, &next_id);
            Flushed {
                slots,
                items,
                buf,
                entries,
            }
        }));
        Ok(())
    }

    /// Flush the buffered records and wait for them: every entry set.
    fn drain(&mut self) -> Result<()> {
        self.flush_data()?;
        self.land()
    }

    /// Wait for the flush in flight and set the entries of its records.
    fn land(&mut self) -> Result<()> {
        let Some(h) = self.in_flight.take() else {
            return Ok(());
        };
        // A panicked flush takes the slots with it: the error poisons the writer.
        let f = h.join().ok_or(Error::Interrupted)?;
        self.slots = f.slots;
        let mut buf = f.buf;
        buf.clear();
        self.spare = buf;
        for (it, e) in f.items.iter().zip(f.entries?) {
            self.set(it.target, e);
        }
        Ok(())
    }

    fn grow_table(&mut self, need: u64) -> Result<()> {
        if need <= self.table_cap {
            return Ok(());
        }
        let step = self.meta.table_grow.max(1);
        let cap = need.div_ceil(step) * step;
        self.offset
            .set_len(cap * ENTRY_SIZE as u64)
            .at(self.paths.offset())?;
        self.crc
            .set_len(cap * CRC_SIZE as u64)
            .at(self.paths.crc())?;
        self.table_cap = cap;
        Ok(())
    }

    /// Make every change so far durable (see the module documentation for the order).
    pub fn commit(&mut self) -> Result<()> {
        self.check_usable()?;
        match self.commit_inner() {
            Ok(()) => Ok(()),
            Err(e) => self.poison(e),
        }
    }

    /// The unfull list for `meta.json`.
    pub(super) fn unfull_now(&self) -> Vec<Unfull> {
        let mut out = self.idle_unfull.clone();
        for s in &self.slots {
            out.extend(
                s.sealed
                    .iter()
                    .filter(|x| !x.trimmed)
                    .map(|x| Unfull(x.id, x.pos, x.count)),
            );
            if let Some((id, pos, count)) = s.state() {
                out.push(Unfull(id, pos, count));
            }
        }
        out.sort_by_key(|u| u.0);
        out
    }

    /// After a commit: untrimmed sealed chunks stay unfull but idle.
    pub(super) fn settle_sealed(&mut self) {
        for s in &mut self.slots {
            for x in s.sealed.drain(..) {
                if !x.trimmed {
                    self.idle_unfull.push(Unfull(x.id, x.pos, x.count));
                }
            }
            s.created = false;
        }
    }

    fn commit_inner(&mut self) -> Result<()> {
        self.drain()?;
        let mut created = false;
        for s in &mut self.slots {
            s.sync()?;
            created |= s.created;
        }
        if created {
            sync_dir(&self.paths.chunk(0))?;
        }
        let committed = self.meta.length;
        // New entries past the committed length are written in place: invisible
        // until meta.json says so.
        let direct_from = self.tail_start.max(committed);
        let mut wrote = false;
        if self.len > direct_from {
            self.grow_table(self.len)?;
            let skip = (direct_from - self.tail_start) as usize;
            let mut eb = Vec::with_capacity((self.len - direct_from) as usize * ENTRY_SIZE);
            let mut cb = Vec::with_capacity((self.len - direct_from) as usize * CRC_SIZE);
            for (e, c) in &self.tail[skip..] {
                eb.extend_from_slice(&e.encode());
                cb.extend_from_slice(&c.to_le_bytes());
            }
            self.offset
                .write_all_at(&eb, direct_from * ENTRY_SIZE as u64)
                .at(self.paths.offset())?;
            self.crc
                .write_all_at(&cb, direct_from * CRC_SIZE as u64)
                .at(self.paths.crc())?;
            wrote = true;
        }
        if wrote {
            self.offset.sync_data().at(self.paths.offset())?;
            self.crc.sync_data().at(self.paths.crc())?;
        }
        // Changes below the committed length travel in meta.json.
        let mut redo: Vec<Redo> = self
            .overrides
            .iter()
            .filter(|(i, _)| **i < self.len)
            .map(|(i, (e, c))| Redo(*i, e.chunk, e.offset, e.length, *c))
            .collect();
        let redo_end = committed.min(self.len);
        for i in self.tail_start..redo_end {
            let (e, c) = self.tail[(i - self.tail_start) as usize];
            redo.push(Redo(i, e.chunk, e.offset, e.length, c));
        }
        let mut meta = self.meta.clone();
        meta.length = self.len;
        meta.chunks.num = self.next_id.load(Ordering::SeqCst);
        meta.chunks.unfull = self.unfull_now();
        meta.redo = redo.clone();
        if meta != self.meta {
            write_file(&self.paths.meta(), &self.paths.meta_tmp(), &meta.to_json())?;
            self.meta = meta;
        }
        self.write_redo(&redo)?;
        self.settle_sealed();
        self.tail_start = self.len;
        self.tail.clear();
        self.overrides.clear();
        self.uncommitted_bytes = 0;
        self.summary.length = self.len;
        Ok(())
    }

    /// Commit, cut the table files and the appendable chunks to their written parts
    /// (those no reader maps), and drop the `redo` list from `meta.json`.
    pub fn finish(mut self) -> Result<WriteSummary> {
        self.commit()?;
        self.trim()?;
        if !self.meta.redo.is_empty() {
            self.meta.redo.clear();
            write_file(
                &self.paths.meta(),
                &self.paths.meta_tmp(),
                &self.meta.to_json(),
            )?;
        }
        Ok(self.summary)
    }

    /// Cut the table files to the logical length and the chunks to their written
    /// parts, where no reader maps them.
    pub(super) fn trim(&mut self) -> Result<()> {
        let n = self.meta.length;
        if self.table_cap > n
            && truncate_unless_mapped(&self.offset, &self.paths.offset(), n * ENTRY_SIZE as u64)?
        {
            if !truncate_unless_mapped(&self.crc, &self.paths.crc(), n * CRC_SIZE as u64)? {
                // A reader maps crc but not offset: keep offset long enough too.
                self.offset
                    .set_len(self.table_cap * ENTRY_SIZE as u64)
                    .at(self.paths.offset())?;
            } else {
                self.table_cap = n;
            }
            self.offset.sync_all().at(self.paths.offset())?;
            self.crc.sync_all().at(self.paths.crc())?;
        }
        for s in &mut self.slots {
            s.trim()?;
        }
        Ok(())
    }

    /// What this writer did so far.
    pub fn summary(&self) -> WriteSummary {
        self.summary
    }
}

/// Remove the chunk files `ids` (those already gone are fine).
pub(super) fn remove_chunks(paths: &DatasetPaths, ids: &[u32]) -> Result<()> {
    for &id in ids {
        let p = paths.chunk(id);
        match std::fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(&p, e)),
        }
    }
    Ok(())
}

/// What a flush hands back when it lands (see `RecordWriter::flush_data`).
struct Flushed {
    slots: Vec<ChunkAppender>,
    items: Vec<Item>,
    buf: Vec<u8>,
    /// The entries and CRCs of `items`, in order.
    entries: Result<Vec<(Entry, u32)>>,
}

impl Drop for RecordWriter {
    /// A flush still running finishes before the writer (and its lock) goes.
    fn drop(&mut self) {
        if let Some(h) = self.in_flight.take() {
            let _ = h.join();
        }
    }
}

/// Write `items` (back to back in `buf`) through `slots`: contiguous shares of about
/// equal bytes, one per slot, on threads of their own. Returns the entries and
/// CRCs in item order.
fn write_shares(
    slots: &mut [ChunkAppender],
    items: &[Item],
    buf: &[u8],
    next_id: &AtomicU32,
) -> Result<Vec<(Entry, u32)>> {
    let total: usize = items.iter().map(|it| it.len).sum();
    let n = if total < (1 << 20) { 1 } else { slots.len() };
    let mut groups: Vec<&[Item]> = Vec::new();
    let mut rest: &[Item] = items;
    for k in 0..n {
        let want = total.div_ceil(n);
        let mut take = 0;
        let mut bytes = 0;
        while take < rest.len() && (bytes < want || k == n - 1) {
            bytes += rest[take].len;
            take += 1;
        }
        let (g, r) = rest.split_at(take);
        groups.push(g);
        rest = r;
    }
    if n == 1 {
        return write_group(&mut slots[0], groups[0], buf, next_id);
    }
    let results: Vec<Result<Vec<(Entry, u32)>>> = std::thread::scope(|s| {
        let handles: Vec<_> = slots
            .iter_mut()
            .zip(&groups)
            .map(|(slot, g)| s.spawn(move || write_group(slot, g, buf, next_id)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(Error::Interrupted)))
            .collect()
    });
    let mut out = Vec::with_capacity(items.len());
    for r in results {
        out.extend(r?);
    }
    Ok(out)
}

fn write_group(
    slot: &mut ChunkAppender,
    items: &[Item],
    buf: &[u8],
    next_id: &AtomicU32,
) -> Result<Vec<(Entry, u32)>> {
    // The items of a group lie back to back in `buf`, in order.
    let (Some(first), Some(last)) = (items.first(), items.last()) else {
        return Ok(Vec::new());
    };
    let lens: Vec<usize> = items.iter().map(|it| it.len).collect();
    let out = slot.write_run(&buf[first.start..last.start + last.len], &lens, next_id)?;
    slot.flush()?;
    Ok(out)
}
