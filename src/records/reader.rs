//! Reading records: [`Records`] opens a dataset or an archive's record table behind
//! one type, and hands out records one at a time or gathered in request order.
//!
//! Why it looks like this (reads and the release of what they hand out): the offset table
//! is memory-mapped, so record `i` is one pointer computation away; uncompressed
//! records are slices of the mapped chunks (zero copy). A [`Batch`] owns `Arc`s of
//! the maps it points into and the buffers of decompressed records, so a slice it
//! hands out cannot outlive them: Rust's ownership is the release queue, and a use
//! after release does not compile. Dropping the batch releases everything.
//!
//! `Records` is `Send + Sync` and cheap to clone (an `Arc`), for thread pools and
//! for a Python binding that keeps batches alive from Python objects.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use memmap2::Mmap;
use rayon::prelude::*;

use crate::core::crc;
use crate::core::error::{Error, Result};
use crate::core::readahead::{self, with_read_ahead, RUN_GAP};
use crate::records::chunks::{map_file, open_for_map, Blob, ChunkNames, MapCache};
use crate::records::format::{
    crc_at, entry_at, table_path, Compress, DatasetPaths, Dtype, Entry, Meta, TableHeader,
    TableOrder, CRC_SIZE, ENTRY_SIZE,
};

/// Which kind of store a [`Records`] reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A dataset directory.
    Dataset {
        /// The dataset directory.
        dir: PathBuf,
    },
    /// The record table `table` of the barecat archive `archive`.
    Archive {
        /// The archive (its index path).
        archive: PathBuf,
        /// The record table file.
        table: PathBuf,
        /// Which file record i is.
        order: TableOrder,
    },
}

/// Options of [`Records::open_with`].
#[derive(Debug, Clone, Copy, Default)]
pub struct OpenOptions {
    /// For archive tables: compare every record with the index, not only the
    /// stamp (what verify does).
    pub full_check: bool,
    /// How the index of a remote archive is read.
    pub index_mode: crate::core::remote::IndexMode,
}

pub(super) struct Inner {
    pub source: Source,
    /// The file named in errors about entries: `DIR/offset` or `P-records`.
    pub table_path: PathBuf,
    pub len: u64,
    pub dtype: Dtype,
    pub compress: Compress,
    /// The table map and where entries and CRCs start in it.
    pub table: Blob,
    pub entries_at: usize,
    pub crcs: Option<(Blob, usize)>,
    /// Records without a stored CRC (sorted), for archive tables.
    pub missing_crcs: Vec<u64>,
    /// `meta.json`'s redo list.
    pub overrides: HashMap<u64, (Entry, u32)>,
    pub chunks: MapCache,
    pub meta: Option<Meta>,
    pub warnings: Vec<String>,
    _table_file: Option<File>,
    _crc_file: Option<File>,
}

/// A read-only handle on records: a dataset or an archive's record table.
#[derive(Clone)]
pub struct Records {
    pub(super) inner: Arc<Inner>,
}

impl std::fmt::Debug for Records {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Records")
            .field("source", &self.inner.source)
            .field("len", &self.inner.len)
            .finish()
    }
}

/// Options of [`Records::gather_with`].
#[derive(Debug, Clone, Copy, Default)]
pub struct GatherOptions {
    /// Threads for decompressing and prefetching; 0 = rayon's pool size.
    pub threads: usize,
    /// Make the requested bytes resident before returning, in address order, on the
    /// reader pool (each chunk is read front to back, many reads in flight).
    /// Otherwise uncompressed records are read by page faults when touched.
    pub prefetch: bool,
    /// Check every record against its stored CRC32C.
    pub verify_crc: bool,
}

/// [`Records::gather_blocks`] hands out at most this many records per batch…
pub const GATHER_BLOCK: usize = 65536;
/// …and at most this many stored bytes (a larger record is a batch of its own).
pub const GATHER_BLOCK_BYTES: u64 = 64 << 20;
/// [`Records::gather_blocks`] unmaps the chunks after a block once the maps it holds
/// exceed this many bytes, so its resident set stays bounded (the pages stay in the
/// page cache). Below it the maps stay: re-faulting a small dataset's pages block
/// after block would cost more than the whole gather.
const MAPPED_BUDGET: u64 = 1 << 30;

/// Gathers of at least this many records run on the reader pool.
const POOL_MIN: usize = 4096;

impl Records {
    pub(super) fn from_inner(inner: Inner) -> Records {
        Records {
            inner: Arc::new(inner),
        }
    }

    /// The number of records.
    pub fn len(&self) -> u64 {
        self.inner.len
    }

    /// True when there are no records.
    pub fn is_empty(&self) -> bool {
        self.inner.len == 0
    }

    /// Which store this reads, and where it is.
    pub fn source(&self) -> &Source {
        &self.inner.source
    }

    /// The element type of the records.
    pub fn dtype(&self) -> Dtype {
        self.inner.dtype
    }

    /// How the stored bytes are compressed.
    pub fn compress(&self) -> Compress {
        self.inner.compress
    }

    /// `meta.json` of a dataset (`None` for an archive table).
    pub fn meta(&self) -> Option<&Meta> {
        self.inner.meta.as_ref()
    }

    /// Notes for the user (a table whose stamp is out of date, …).
    pub fn warnings(&self) -> &[String] {
        &self.inner.warnings
    }

    /// The chunk maps (for maintenance code of this module).
    pub(super) fn chunks(&self) -> &MapCache {
        &self.inner.chunks
    }

    fn check_index(&self, i: u64) -> Result<()> {
        if i >= self.inner.len {
            return Err(Error::RecordOutOfRange {
                path: self.name().to_path_buf(),
                index: i,
                len: self.inner.len,
            });
        }
        Ok(())
    }

    /// The dataset directory or the archive, as the user named it.
    pub fn name(&self) -> &Path {
        match &self.inner.source {
            Source::Dataset { dir } => dir,
            Source::Archive { archive, .. } => archive,
        }
    }

    /// Entry `i` of the offset table (after `redo`).
    pub fn entry(&self, i: u64) -> Result<Entry> {
        self.check_index(i)?;
        Ok(self.entry_unchecked(i))
    }

    fn entry_unchecked(&self, i: u64) -> Entry {
        let inner = &*self.inner;
        if !inner.overrides.is_empty() {
            if let Some((e, _)) = inner.overrides.get(&i) {
                return *e;
            }
        }
        entry_at(&inner.table[inner.entries_at..], i).unwrap_or_default()
    }

    /// The stored CRC32C of record `i`'s stored bytes, if there is one.
    pub fn stored_crc(&self, i: u64) -> Result<Option<u32>> {
        self.check_index(i)?;
        Ok(self.crc_unchecked(i))
    }

    fn crc_unchecked(&self, i: u64) -> Option<u32> {
        let inner = &*self.inner;
        if let Some((_, c)) = inner.overrides.get(&i) {
            return Some(*c);
        }
        if !inner.missing_crcs.is_empty() && inner.missing_crcs.binary_search(&i).is_ok() {
            return None;
        }
        let (map, at) = inner.crcs.as_ref()?;
        crc_at(&map[*at..], i)
    }

    /// Record `i` (zero copy when uncompressed).
    pub fn get(&self, i: u64) -> Result<Record> {
        self.check_index(i)?;
        self.read_one(i, false)
    }

    /// Record `i`, checked against its stored CRC32C.
    pub fn get_checked(&self, i: u64) -> Result<Record> {
        self.check_index(i)?;
        self.read_one(i, true)
    }

    fn crc_error(&self, i: u64, expected: u32, actual: u32) -> Error {
        Error::CrcMismatch {
            member: format!("{}: record {i}", self.name().display()),
            expected,
            actual,
        }
    }

    fn read_one(&self, i: u64, check: bool) -> Result<Record> {
        let e = self.entry_unchecked(i);
        if e.length == 0 {
            // The CRC32C of no bytes is 0: anything else is a damaged crc file.
            match self.crc_unchecked(i) {
                Some(want) if check && want != 0 => return Err(self.crc_error(i, want, 0)),
                _ => {}
            }
            return Ok(Record {
                backing: Backing::Empty,
                start: 0,
                len: 0,
            });
        }
        let (map, start, len) = self.inner.chunks.slice(&e)?;
        let stored = &map[start..start + len];
        if check {
            if let Some(want) = self.crc_unchecked(i) {
                let got = crc::crc32c(stored);
                if got != want {
                    return Err(self.crc_error(i, want, got));
                }
            }
        }
        if self.inner.compress == Compress::None {
            return Ok(Record {
                backing: Backing::Map(map),
                start,
                len,
            });
        }
        let mut out = AlignedBuf::default();
        decompress_into(self.inner.compress, stored, &mut out)
            .map_err(|d| self.decompress_error(i, &e, d))?;
        let len = out.len;
        Ok(Record {
            backing: Backing::Owned(Arc::new(out)),
            start: 0,
            len,
        })
    }

    fn decompress_error(&self, i: u64, e: &Entry, detail: String) -> Error {
        Error::CorruptRecords {
            path: self.inner.chunks.names().path(e.chunk),
            detail: format!(
                "record {i} (offset {}, {} bytes) does not decompress: {detail}",
                e.offset, e.length
            ),
        }
    }

    /// Read the bytes of the records at `indices` into the page cache, where they lie
    /// dense enough on disk for that to pay (at least `PREFETCH_DENSITY` records per
    /// run of nearby bytes; a scattered request would read whole spans it does not
    /// need), and return at once otherwise. For a caller reading ahead on a thread
    /// of its own while it gathers block after block. Only a hint: indices out of
    /// range and unreadable chunks are left to the gather to report.
    pub fn read_ahead(&self, indices: &[u64]) {
        let len = self.len();
        let entries: Vec<Entry> = indices
            .iter()
            .filter(|&&i| i < len)
            .map(|&i| self.entry_unchecked(i))
            .collect();
        self.inner.chunks.read_ahead(&entries);
    }

    /// Gather `indices` block by block, in request order, in bounded memory whatever
    /// their number: `f` gets each block of at most [`GATHER_BLOCK`] indices and
    /// [`GATHER_BLOCK_BYTES`] stored bytes with its [`Batch`]. A helper thread reads
    /// ahead: it cuts the blocks and reads each block's bytes into the page cache
    /// (where they lie dense on disk: see [`Records::read_ahead`]), at most two
    /// blocks ahead of the one `f` has, and a block is gathered once the helper is
    /// through with it. So the disk sees one sequential reader, as for `cat`, and
    /// starts reading once the first block is cut, not after a pass over every
    /// index. The chunks are unmapped between blocks once the maps exceed 1 GiB.
    /// The first error (of the gather or of `f`) ends it.
    pub fn gather_blocks<E: From<Error>>(
        &self,
        indices: &[u64],
        opts: &GatherOptions,
        mut f: impl FnMut(&[u64], Batch) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        let mut blocks = Blocks {
            r: self,
            idx: indices,
            start: 0,
        };
        let Some(first) = blocks.next() else {
            return Ok(());
        };
        let mut one = |block: &[u64], opts: &GatherOptions| -> std::result::Result<(), E> {
            let batch = self.gather_with(block, opts)?;
            f(block, batch)?;
            if self.inner.chunks.mapped_len() > MAPPED_BUDGET {
                self.release_maps();
            }
            Ok(())
        };
        if first.len() == indices.len() {
            return one(first, opts);
        }
        // The helper reads what a prefetch would.
        let opts = GatherOptions {
            prefetch: false,
            ..*opts
        };
        with_read_ahead(
            std::iter::once(first).chain(blocks),
            |block| self.read_ahead(block),
            |block| one(block, &opts),
        )
    }

    /// The records at `indices`, in request order (duplicates allowed).
    pub fn gather(&self, indices: &[u64]) -> Result<Batch> {
        self.gather_with(indices, &GatherOptions::default())
    }

    /// [`gather`](Self::gather) with threads, prefetching and CRC checks as `opts` says.
    pub fn gather_with(&self, indices: &[u64], opts: &GatherOptions) -> Result<Batch> {
        for &i in indices {
            self.check_index(i)?;
        }
        let entries: Vec<Entry> = indices.iter().map(|&i| self.entry_unchecked(i)).collect();
        // Positions in address order: maps are taken and bytes read chunk by chunk,
        // front to back.
        let mut order: Vec<u32> = (0..indices.len() as u32).collect();
        order.sort_unstable_by_key(|&k| {
            let e = &entries[k as usize];
            (e.chunk, e.offset)
        });
        let mut maps: Vec<Arc<Blob>> = Vec::new();
        let mut map_of: HashMap<u32, u32> = HashMap::new();
        let mut slots = vec![Slot::default(); indices.len()];
        // The map of the chunk of the previous record, reused while it covers the
        // next one (records in address order mostly share one).
        let mut last: Option<(u32, u32)> = None;
        for &k in &order {
            let e = entries[k as usize];
            if e.length == 0 {
                continue;
            }
            if let (Some((chunk, m)), Some(end)) = (last, e.end()) {
                let map = &maps[m as usize];
                if chunk == e.chunk && map.is_map() && end <= map.len() as u64 {
                    slots[k as usize] = Slot {
                        src: m,
                        start: e.offset as usize,
                        len: e.length as usize,
                    };
                    continue;
                }
            }
            let (map, start, len) = self.inner.chunks.slice(&e)?;
            let m = match map_of.get(&e.chunk) {
                Some(&m) if Arc::ptr_eq(&maps[m as usize], &map) => m,
                _ => {
                    maps.push(map);
                    let m = (maps.len() - 1) as u32;
                    map_of.insert(e.chunk, m);
                    m
                }
            };
            slots[k as usize] = Slot { src: m, start, len };
            last = Some((e.chunk, m));
        }
        let run = |f: &mut (dyn FnMut() -> Result<()> + Send)| -> Result<()> {
            // Always on a pool of ours (never rayon's global one, which a forked
            // child has no threads for: [`crate::core::fork::pool`]); one thread for small
            // gathers.
            let threads = if indices.len() >= POOL_MIN && opts.threads != 1 {
                opts.threads
            } else {
                1
            };
            crate::core::fork::pool(threads)?.install(f)
        };
        let stored = |k: usize| -> &[u8] {
            let s = &slots[k];
            if s.len == 0 {
                &[]
            } else {
                &maps[s.src as usize][s.start..s.start + s.len]
            }
        };
        if opts.prefetch {
            // Runs of nearby requested bytes, in address order, each made resident
            // with one madvise(MADV_POPULATE_READ) on the reader pool: each chunk is
            // read front to back, many reads in flight at once.
            let mut runs: Vec<(u32, usize, usize)> = Vec::new();
            for &k in &order {
                let s = slots[k as usize];
                if s.len == 0 {
                    continue;
                }
                match runs.last_mut() {
                    Some((src, _, end)) if *src == s.src && s.start <= *end + RUN_GAP => {
                        *end = (*end).max(s.start + s.len);
                    }
                    _ => runs.push((s.src, s.start, s.start + s.len)),
                }
            }
            // Only dense requests are worth it: for records scattered far apart (a
            // few random ones per 64 KiB) page faults on touch cost less than one
            // system call per record.
            let dense = readahead::worth_loading(runs.len(), indices.len());
            run(&mut || {
                if !dense {
                    return Ok(());
                }
                runs.par_iter().for_each(|&(src, start, end)| {
                    let m = &maps[src as usize];
                    if m.advise_range(memmap2::Advice::PopulateRead, start, end - start)
                        .is_err()
                    {
                        // Kernels before 5.14: touch one byte per page.
                        let mut sink = 0u8;
                        for b in m[start..end].iter().step_by(4096) {
                            sink ^= *b;
                        }
                        std::hint::black_box(sink);
                    }
                });
                Ok(())
            })?;
        }
        if opts.verify_crc {
            run(&mut || {
                order.par_chunks(256).try_for_each(|ks| {
                    for &k in ks {
                        let k = k as usize;
                        if let Some(want) = self.crc_unchecked(indices[k]) {
                            let got = crc::crc32c(stored(k));
                            if got != want {
                                return Err(self.crc_error(indices[k], want, got));
                            }
                        }
                    }
                    Ok(())
                })
            })?;
        }
        if self.inner.compress == Compress::None {
            return Ok(Batch {
                maps,
                owned: Vec::new(),
                slots,
            });
        }
        // Decompress in address order on the pool, then lay the results out in one
        // buffer per worker share.
        let compress = self.inner.compress;
        let mut parts: Vec<Result<Vec<(u32, AlignedBuf)>>> = Vec::new();
        run(&mut || {
            parts = order
                .par_chunks(256)
                .map(|ks| {
                    ks.iter()
                        .map(|&k| {
                            let mut b = AlignedBuf::default();
                            let e = &entries[k as usize];
                            if e.length == 0 {
                                return Ok((k, b));
                            }
                            decompress_into(compress, stored(k as usize), &mut b)
                                .map_err(|d| self.decompress_error(indices[k as usize], e, d))?;
                            Ok((k, b))
                        })
                        .collect::<Result<Vec<_>>>()
                })
                .collect();
            Ok(())
        })?;
        let mut owned: Vec<Arc<AlignedBuf>> = Vec::new();
        let mut out_slots = vec![Slot::default(); indices.len()];
        for part in parts {
            for (k, b) in part? {
                let len = b.len;
                owned.push(Arc::new(b));
                out_slots[k as usize] = Slot {
                    src: OWNED | (owned.len() - 1) as u32,
                    start: 0,
                    len,
                };
            }
        }
        Ok(Batch {
            maps: Vec::new(),
            owned,
            slots: out_slots,
        })
    }
}

/// Marks a slot whose bytes are in `Batch::owned`.
const OWNED: u32 = 1 << 31;

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    src: u32,
    start: usize,
    len: usize,
}

/// The records of one gather, in request order. Owns what its slices point into.
pub struct Batch {
    maps: Vec<Arc<Blob>>,
    owned: Vec<Arc<AlignedBuf>>,
    slots: Vec<Slot>,
}

impl std::fmt::Debug for Batch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batch")
            .field("len", &self.slots.len())
            .finish()
    }
}

impl Batch {
    /// The number of records requested.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// True when no record was requested.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The bytes of the `k`-th requested record. Panics when `k >= len()`, like
    /// slice indexing.
    pub fn get(&self, k: usize) -> &[u8] {
        let s = &self.slots[k];
        if s.len == 0 {
            return &[];
        }
        if s.src & OWNED != 0 {
            self.owned[(s.src & !OWNED) as usize].as_bytes()
        } else {
            &self.maps[s.src as usize][s.start..s.start + s.len]
        }
    }

    /// True when the `k`-th record is a slice of a mapped chunk (not a copy).
    pub fn is_zero_copy(&self, k: usize) -> bool {
        let s = &self.slots[k];
        s.len > 0 && s.src & OWNED == 0
    }

    /// The `k`-th record as a slice of numbers.
    pub fn typed<T: Element>(&self, k: usize) -> Result<&[T]> {
        typed(self.get(k))
    }

    /// The records' bytes, in request order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        (0..self.len()).map(move |k| self.get(k))
    }

    /// What the records of this batch live in (the chunk maps, then the
    /// decompressed buffers), each as one [`Record`] covering all of it. With
    /// [`location`](Self::location), for callers that hand out many records as
    /// slices of a few shared objects (the Python module's gather).
    pub fn backings(&self) -> Vec<Record> {
        let maps = self.maps.iter().map(|m| Record {
            backing: Backing::Map(m.clone()),
            start: 0,
            len: m.len(),
        });
        let owned = self.owned.iter().map(|b| Record {
            backing: Backing::Owned(b.clone()),
            start: 0,
            len: b.len,
        });
        maps.chain(owned).collect()
    }

    /// Where the `k`-th record lies: `(backing, start, len)`, the backing numbered
    /// as in [`backings`](Self::backings); `None` for an empty record.
    pub fn location(&self, k: usize) -> Option<(usize, usize, usize)> {
        let s = self.slots[k];
        if s.len == 0 {
            return None;
        }
        if s.src & OWNED != 0 {
            Some((self.maps.len() + (s.src & !OWNED) as usize, 0, s.len))
        } else {
            Some((s.src as usize, s.start, s.len))
        }
    }

    /// Take the `k`-th record out as a [`Record`] that keeps its own backing alive.
    pub fn record(&self, k: usize) -> Record {
        let s = self.slots[k];
        if s.len == 0 {
            return Record {
                backing: Backing::Empty,
                start: 0,
                len: 0,
            };
        }
        if s.src & OWNED != 0 {
            Record {
                backing: Backing::Owned(self.owned[(s.src & !OWNED) as usize].clone()),
                start: 0,
                len: s.len,
            }
        } else {
            Record {
                backing: Backing::Map(self.maps[s.src as usize].clone()),
                start: s.start,
                len: s.len,
            }
        }
    }
}

/// Memory with 8-byte alignment, for decompressed records (so typed slices of
/// every numeric dtype work).
#[derive(Default)]
pub struct AlignedBuf {
    words: Vec<u64>,
    len: usize,
}

impl AlignedBuf {
    fn as_bytes(&self) -> &[u8] {
        // SAFETY: `words` holds at least `len` initialised bytes; u8 has no alignment
        // requirement and every bit pattern is valid.
        unsafe { std::slice::from_raw_parts(self.words.as_ptr().cast::<u8>(), self.len) }
    }

    fn set_from(&mut self, data: &[u8]) {
        self.words = vec![0u64; data.len().div_ceil(8)];
        // SAFETY: the vector has room for data.len() bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(
                data.as_ptr(),
                self.words.as_mut_ptr().cast::<u8>(),
                data.len(),
            )
        };
        self.len = data.len();
    }
}

/// Decompress one stored record.
fn decompress_into(c: Compress, stored: &[u8], out: &mut AlignedBuf) -> Result<(), String> {
    let mut v: Vec<u8> = Vec::new();
    match c {
        Compress::None => v.extend_from_slice(stored),
        Compress::Zstd => {
            let size = zstd::zstd_safe::get_frame_content_size(stored)
                .map_err(|e| format!("{e:?}"))?
                .ok_or("the zstd frame does not state its size")?;
            if size > crate::records::format::MAX_RECORD * 64 {
                return Err(format!("claims {size} bytes"));
            }
            v = zstd::bulk::decompress(stored, size as usize).map_err(|e| e.to_string())?;
            if v.len() as u64 != size {
                return Err("shorter than its frame says".into());
            }
        }
        Compress::Flate => {
            use std::io::Read;
            flate2::read::DeflateDecoder::new(stored)
                .take(crate::records::format::MAX_RECORD * 64)
                .read_to_end(&mut v)
                .map_err(|e| e.to_string())?;
        }
    }
    out.set_from(&v);
    Ok(())
}

#[derive(Clone)]
enum Backing {
    Empty,
    Map(Arc<Blob>),
    Owned(Arc<AlignedBuf>),
}

/// One record's bytes, keeping their backing (a chunk map or a decompressed buffer)
/// alive. Dereferences to `[u8]`.
#[derive(Clone)]
pub struct Record {
    backing: Backing,
    start: usize,
    len: usize,
}

impl Record {
    /// True when the bytes are a slice of a mapped chunk.
    pub fn is_zero_copy(&self) -> bool {
        matches!(self.backing, Backing::Map(_))
    }

    /// The bytes as a slice of numbers (fails when the dtype or the length does not fit
    /// `T`).
    pub fn typed<T: Element>(&self) -> Result<&[T]> {
        typed(self)
    }
}

impl std::ops::Deref for Record {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &self.backing {
            Backing::Empty => &[],
            Backing::Map(m) => &m[self.start..self.start + self.len],
            Backing::Owned(b) => b.as_bytes(),
        }
    }
}

impl AsRef<[u8]> for Record {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl std::fmt::Debug for Record {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Record({} bytes)", self.len)
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A fixed-size number that records can be viewed as (little-endian storage).
pub trait Element: sealed::Sealed + Copy + 'static {
    /// The record element type `T` corresponds to.
    const DTYPE: Dtype;
}

macro_rules! element {
    ($($t:ty => $d:expr),*) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t { const DTYPE: Dtype = $d; }
    )*};
}
element!(u8 => Dtype::U8, i8 => Dtype::I8, u16 => Dtype::U16, i16 => Dtype::I16,
         u32 => Dtype::U32, i32 => Dtype::I32, u64 => Dtype::U64, i64 => Dtype::I64,
         f32 => Dtype::F32, f64 => Dtype::F64);

/// View `bytes` as a slice of `T`: the length must be a multiple of the element
/// size and the bytes aligned (the writer aligns records of numeric dtypes).
pub fn typed<T: Element>(bytes: &[u8]) -> Result<&[T]> {
    let size = std::mem::size_of::<T>();
    if cfg!(target_endian = "big") && size > 1 {
        return Err(Error::InvalidOperation(
            "typed views need a little-endian machine".into(),
        ));
    }
    if !bytes.len().is_multiple_of(size) {
        return Err(Error::InvalidOperation(format!(
            "a record of {} bytes is not a whole number of {} elements",
            bytes.len(),
            T::DTYPE.name()
        )));
    }
    if bytes.is_empty() {
        return Ok(&[]);
    }
    if !(bytes.as_ptr() as usize).is_multiple_of(std::mem::align_of::<T>()) {
        return Err(Error::InvalidOperation(format!(
            "the record is not aligned for {} elements",
            T::DTYPE.name()
        )));
    }
    // SAFETY: length and alignment checked above; T is a primitive number type for
    // which every bit pattern is valid; the lifetime is that of `bytes`.
    Ok(unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<T>(), bytes.len() / size) })
}

/// Open a dataset directory.
pub(super) fn open_dataset(dir: &Path) -> Result<Records> {
    let paths = DatasetPaths::new(dir);
    let meta_path = paths.meta();
    let text = match std::fs::read(&meta_path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::CorruptRecords {
                path: dir.to_path_buf(),
                detail: "not a record dataset (no meta.json)".into(),
            })
        }
        Err(e) => return Err(Error::io(&meta_path, e)),
    };
    let meta = Meta::parse(&text, &meta_path)?;
    let n = meta.length;
    let missing = |p: PathBuf| {
        move || Error::CorruptRecords {
            path: p,
            detail: "missing (every dataset has one)".into(),
        }
    };
    let table_file = open_for_map(&paths.offset(), missing(paths.offset()))?;
    let crc_file = open_for_map(&paths.crc(), missing(paths.crc()))?;
    let table = map_file(&table_file, &paths.offset())?;
    let crcs = map_file(&crc_file, &paths.crc())?;
    let short = |p: PathBuf, have: usize, per: usize| Error::CorruptRecords {
        path: p,
        detail: format!(
            "too short for the {n} records of meta.json ({have} bytes, {} needed)",
            n.saturating_mul(per as u64)
        ),
    };
    if (table.len() as u64) < n.saturating_mul(ENTRY_SIZE as u64) {
        return Err(short(paths.offset(), table.len(), ENTRY_SIZE));
    }
    if (crcs.len() as u64) < n.saturating_mul(CRC_SIZE as u64) {
        return Err(short(paths.crc(), crcs.len(), CRC_SIZE));
    }
    let overrides = meta.redo.iter().map(|r| (r.0, (r.entry(), r.4))).collect();
    Ok(Records::from_inner(Inner {
        source: Source::Dataset {
            dir: dir.to_path_buf(),
        },
        table_path: paths.offset(),
        len: n,
        dtype: meta.dtype,
        compress: meta.compress,
        table: Blob::Map(table),
        entries_at: 0,
        crcs: Some((Blob::Map(crcs), 0)),
        missing_crcs: Vec::new(),
        overrides,
        chunks: MapCache::new(ChunkNames::Dataset(paths)),
        meta: Some(meta),
        warnings: Vec::new(),
        _table_file: Some(table_file),
        _crc_file: Some(crc_file),
    }))
}

/// Build an `Inner` for an archive table (used by [`crate::records::table`]).
#[allow(clippy::too_many_arguments)]
/// The table of an archive: mapped from a local file, or read whole (remote).
pub(super) struct TableBytes {
    pub file: Option<File>,
    pub map: Blob,
    /// The opened archive, for reading the records of a remote one.
    pub remote: Option<Arc<crate::Archive>>,
}

pub(super) fn archive_inner(
    archive: &Path,
    layout: crate::Layout,
    header: &TableHeader,
    bytes: TableBytes,
    missing_crcs: Vec<u64>,
    warnings: Vec<String>,
) -> Inner {
    let TableBytes { file, map, remote } = bytes;
    let crcs_at = header.crcs_offset() as usize;
    // The CRC array lives in the same map as the entries.
    let crc_map = match (&map, &file) {
        (Blob::Bytes(b), _) => Some(Blob::Bytes(b.clone())),
        // SAFETY: same file, read-only map; see `map_file`.
        (Blob::Map(_), Some(f)) => unsafe { Mmap::map(f) }.ok().map(Blob::Map),
        (Blob::Map(_), None) => None,
    };
    let chunks = match remote {
        Some(a) => MapCache::remote(ChunkNames::Archive(layout.clone()), a),
        None => MapCache::new(ChunkNames::Archive(layout.clone())),
    };
    Inner {
        source: Source::Archive {
            archive: archive.to_path_buf(),
            table: table_path(layout.base()),
            order: header.order,
        },
        table_path: table_path(layout.base()),
        len: header.length,
        dtype: Dtype::Bytes,
        compress: Compress::None,
        table: map,
        entries_at: header.entries_offset() as usize,
        crcs: crc_map.map(|m| (m, crcs_at)),
        missing_crcs,
        overrides: HashMap::new(),
        chunks,
        meta: None,
        warnings,
        _table_file: file,
        _crc_file: None,
    }
}

#[allow(dead_code)]
fn _assert_send_sync() {
    fn is<T: Send + Sync>() {}
    is::<Records>();
    is::<Batch>();
    is::<Record>();
}

impl Records {
    /// Unmap the chunks (see [`MapCache::release`]); batches keep what they hold.
    pub fn release_maps(&self) {
        self.inner.chunks.release();
    }

    /// The path of the table file named in errors.
    pub fn table_path(&self) -> &Path {
        &self.inner.table_path
    }
}

/// `indices` cut into the blocks of [`Records::gather_blocks`], one at a time.
struct Blocks<'a> {
    r: &'a Records,
    idx: &'a [u64],
    start: usize,
}

impl<'a> Iterator for Blocks<'a> {
    type Item = &'a [u64];

    fn next(&mut self) -> Option<&'a [u64]> {
        let rest = &self.idx[self.start..];
        if rest.is_empty() {
            return None;
        }
        let mut bytes = 0u64;
        let mut k = 0;
        for &i in rest.iter().take(GATHER_BLOCK) {
            let len = self.r.entry(i).map(|e| e.length as u64).unwrap_or(0);
            if k > 0 && bytes + len > GATHER_BLOCK_BYTES {
                break;
            }
            bytes += len;
            k += 1;
        }
        self.start += k;
        Some(&rest[..k])
    }
}
