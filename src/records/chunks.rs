//! Chunk files: lazily memory-mapped for readers, appended by writers.
//!
//! Why here and not in [`crate::core::shards`]: a record reader maps files by a 32-bit
//! chunk id that names either a dataset chunk (`chunk/<id>.zr`) or an archive shard
//! (`P-shard-NNNNN`), and a record writer needs growth in fixed steps, compression,
//! alignment and several appenders at once. What is shared with shards is the rule
//! that keeps readers safe: a reader holds a shared `flock` on every file it maps,
//! and writers cut a file only when nobody holds one ([`crate::core::shards::truncate_unless_mapped`]),
//! because touching a page past the end of a mapped file kills the process (SIGBUS).

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, RwLock};

use memmap2::Mmap;

use crate::core::crc;
use crate::core::error::{Error, IoContext, Result};
use crate::core::fork::ForkLocal;
use crate::core::format::layout::Layout;
use crate::core::readahead;
use crate::core::shards::direct::DirectStage;
use crate::core::shards::{lock_shared, truncate_unless_mapped};
use crate::records::format::{Compress, DatasetPaths, Entry, MAX_RECORD};

/// Where chunk `id` lives.
#[derive(Debug, Clone)]
pub enum ChunkNames {
    /// `DIR/chunk/<id>.zr`.
    Dataset(DatasetPaths),
    /// Shard `id` of a barecat archive.
    Archive(Layout),
}

impl ChunkNames {
    pub fn path(&self, id: u32) -> PathBuf {
        match self {
            ChunkNames::Dataset(p) => p.chunk(id),
            ChunkNames::Archive(l) => l.shard_path(id as u64),
        }
    }
}

struct Mapped {
    file: File,
    path: PathBuf,
    map: RwLock<Arc<Blob>>,
}

/// Bytes a reader borrows from: a chunk's memory map, or (for a remote archive,
/// which has no map) bytes read into memory.
pub enum Blob {
    Map(Mmap),
    Bytes(bytes::Bytes),
}

impl std::ops::Deref for Blob {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Blob::Map(m) => m,
            Blob::Bytes(b) => b,
        }
    }
}

impl Blob {
    /// `madvise` a range of a map; nothing to do for bytes in memory.
    pub fn advise_range(
        &self,
        advice: memmap2::Advice,
        start: usize,
        len: usize,
    ) -> io::Result<()> {
        match self {
            Blob::Map(m) => m.advise_range(advice, start, len),
            Blob::Bytes(_) => Ok(()),
        }
    }

    /// True for a memory map (zero-copy views).
    pub fn is_map(&self) -> bool {
        matches!(self, Blob::Map(_))
    }
}

/// Read-only maps of chunk files, opened on first use and renewed when a file grew.
/// For a remote archive there are no maps: each slice is read from its shard.
pub struct MapCache {
    names: ChunkNames,
    /// Per process generation: a forked child maps the chunks again ([`crate::core::fork`]).
    open: ForkLocal<RwLock<Vec<Option<Arc<Mapped>>>>>,
    remote: Option<Arc<crate::Archive>>,
}

/// Open `path` read-only for mapping: a regular file (a FIFO cannot block the
/// open), with the shared lock that keeps writers from cutting it.
pub(crate) fn open_for_map(path: &Path, missing: impl FnOnce() -> Error) -> Result<File> {
    let file = match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(missing()),
        Err(e) => return Err(Error::io(path, e)),
    };
    let md = file.metadata().at(path)?;
    if !md.is_file() {
        return Err(Error::not_a_file(path, md.is_dir()));
    }
    lock_shared(&file).at(path)?;
    Ok(file)
}

/// Map all of `file`.
pub(crate) fn map_file(file: &File, path: &Path) -> Result<Mmap> {
    // SAFETY: read-only map. Writers append to these files, grow them, write bytes
    // no committed entry points at yet, and cut them only while no reader holds
    // the shared lock taken by `open_for_map`.
    unsafe { Mmap::map(file) }.at(path)
}

impl MapCache {
    pub fn new(names: ChunkNames) -> MapCache {
        MapCache {
            names,
            open: ForkLocal::new(),
            remote: None,
        }
    }

    /// The shards of a remote archive, read by ranged requests (a gather in
    /// address order is coalesced by [`crate::core::remote::shards`]).
    pub fn remote(names: ChunkNames, archive: Arc<crate::Archive>) -> MapCache {
        MapCache {
            names,
            open: ForkLocal::new(),
            remote: Some(archive),
        }
    }

    fn table(&self) -> &RwLock<Vec<Option<Arc<Mapped>>>> {
        self.open.get_or_init(|| RwLock::new(Vec::new()))
    }

    pub fn names(&self) -> &ChunkNames {
        &self.names
    }

    /// For a remote archive, the length of chunk (shard) `id`; `None` when local.
    pub fn remote_len(&self, id: u32) -> Option<Result<u64>> {
        Some(
            self.remote
                .as_ref()?
                .shards()
                .and_then(|s| s.len(id as u64)),
        )
    }

    fn mapped(&self, id: u32) -> Result<Arc<Mapped>> {
        let idx = id as usize;
        if let Some(Some(m)) = self
            .table()
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(idx)
        {
            return Ok(m.clone());
        }
        let path = self.names.path(id);
        let file = open_for_map(&path, || Error::CorruptRecords {
            path: path.clone(),
            detail: format!("chunk {id} is missing (an entry refers to it)"),
        })?;
        let map = map_file(&file, &path)?;
        let m = Arc::new(Mapped {
            file,
            path,
            map: RwLock::new(Arc::new(Blob::Map(map))),
        });
        let mut open = self.table().write().unwrap_or_else(|e| e.into_inner());
        if open.len() <= idx {
            open.resize(idx + 1, None);
        }
        Ok(open[idx].get_or_insert(m).clone())
    }

    /// A map of chunk `id` covering at least `end` bytes (renewed once if the file
    /// grew since it was mapped); an error naming the chunk when it is shorter.
    pub fn map(&self, id: u32, end: u64) -> Result<Arc<Blob>> {
        let m = self.mapped(id)?;
        let cur = m.map.read().unwrap_or_else(|e| e.into_inner()).clone();
        if cur.len() as u64 >= end {
            return Ok(cur);
        }
        let mut slot = m.map.write().unwrap_or_else(|e| e.into_inner());
        if slot.len() as u64 >= end {
            return Ok(slot.clone());
        }
        let len = m.file.metadata().at(&m.path)?.len();
        if len < end {
            return Err(Error::CorruptRecords {
                path: m.path.clone(),
                detail: format!("an entry ends at byte {end} but the chunk has {len} bytes"),
            });
        }
        let fresh = Arc::new(Blob::Map(map_file(&m.file, &m.path)?));
        *slot = fresh.clone();
        Ok(fresh)
    }

    /// Drop the maps (files stay open and locked; the next access maps again). The
    /// pages stay in the page cache but leave this process's resident set once no
    /// batch holds them: long gathers call this between blocks.
    pub fn release(&self) {
        let open = self.table().read().unwrap_or_else(|e| e.into_inner());
        for m in open.iter().flatten() {
            *m.map.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(Blob::Map(empty_map()));
        }
    }

    /// Bytes of chunk maps held at the moment (their lengths, not what is resident).
    pub fn mapped_len(&self) -> u64 {
        let open = self.table().read().unwrap_or_else(|e| e.into_inner());
        open.iter()
            .flatten()
            .map(|m| m.map.read().unwrap_or_else(|e| e.into_inner()).len() as u64)
            .sum()
    }

    /// Read the bytes of `entries` into the page cache, as runs of nearby bytes
    /// (closer than [`readahead::RUN_GAP`]) in address order, where they lie dense enough for
    /// that to pay (at least [`readahead::PREFETCH_DENSITY`] entries per run; a scattered
    /// request would read whole spans it does not need); return at once otherwise.
    /// See `will_need`.
    pub fn read_ahead(&self, entries: &[Entry]) {
        // First, without sorting: a request whose bytes are far fewer than the
        // spans they lie in (a random one) is left alone at once.
        let mut reach: std::collections::HashMap<u32, (u64, u64)> = Default::default();
        let mut wanted = 0u64;
        for e in entries {
            if let (true, Some(end)) = (e.length > 0, e.end()) {
                wanted += e.length as u64;
                let r = reach.entry(e.chunk).or_insert((e.offset, end));
                r.0 = r.0.min(e.offset);
                r.1 = r.1.max(end);
            }
        }
        let span: u64 = reach.values().map(|(s, e)| e - s).sum();
        if wanted == 0 || span / 4 > wanted {
            return;
        }
        let mut spans: Vec<(u32, u64, u64)> = entries
            .iter()
            .filter(|e| e.length > 0)
            .filter_map(|e| Some((e.chunk, e.offset, e.end()?)))
            .collect();
        spans.sort_unstable();
        let runs = readahead::coalesce(spans);
        if runs.is_empty() || !readahead::worth_loading(runs.len(), entries.len()) {
            return;
        }
        for (c, s, e) in runs {
            self.will_need(c, s, e);
        }
    }

    /// Bring bytes `start..end` of chunk `id` into the page cache
    /// ([`readahead::load`]), for a caller that reads ahead on a thread of its own.
    /// Nothing for a remote archive, whose bytes are read per record; errors are left
    /// to the readers to report.
    pub fn will_need(&self, id: u32, start: u64, end: u64) {
        if self.remote.is_some() || end <= start {
            return;
        }
        let Ok(m) = self.mapped(id) else {
            return;
        };
        readahead::load(&m.file, start, end);
    }

    /// The bytes of `e`, borrowed from the chunk's map (kept alive by the Arc).
    pub fn slice(&self, e: &Entry) -> Result<(Arc<Blob>, usize, usize)> {
        let end = e.end().ok_or_else(|| Error::CorruptRecords {
            path: self.names.path(e.chunk),
            detail: format!(
                "impossible entry (offset {}, length {})",
                e.offset, e.length
            ),
        })?;
        if let Some(a) = &self.remote {
            let fi = crate::core::entry::FileInfo {
                path: format!("record at shard {} offset {}", e.chunk, e.offset),
                shard: e.chunk as u64,
                offset: e.offset,
                size: e.length as u64,
                crc32c: None,
                meta: Default::default(),
            };
            let mut buf = vec![0u8; e.length as usize];
            a.shards()?.read_into(&fi, 0, &mut buf)?;
            let _ = end;
            return Ok((Arc::new(Blob::Bytes(buf.into())), 0, e.length as usize));
        }
        let map = self.map(e.chunk, end)?;
        Ok((map, e.offset as usize, e.length as usize))
    }
}

fn empty_map() -> Mmap {
    memmap2::MmapOptions::new()
        .len(0)
        .map_anon()
        .map(|m| {
            m.make_read_only()
                .expect("an empty map can be made read-only")
        })
        .expect("an empty anonymous map")
}

/// Bytes staged before one `pwrite`.
const STAGE: usize = 8 << 20;

/// What a writer slot did to a chunk it left: `(id, written bytes, records,
/// trimmed)`. An untrimmed chunk stays in `meta.json`'s `unfull` list.
#[derive(Debug, Clone, Copy)]
pub struct Sealed {
    pub id: u32,
    pub pos: u64,
    pub count: u64,
    pub trimmed: bool,
}

/// Limits of a chunk.
#[derive(Debug, Clone, Copy)]
pub struct ChunkLimits {
    pub records: u64,
    pub bytes: u64,
    pub grow: u64,
    pub align: u64,
}

/// One writer slot: appends records to its own chunk, starting a new chunk (with
/// an id from the shared counter) when the chunk is full.
pub struct ChunkAppender {
    paths: DatasetPaths,
    limits: ChunkLimits,
    compress: Compress,
    current: Option<Current>,
    stage: Vec<u8>,
    scratch: Vec<u8>,
    zstd: Option<zstd::bulk::Compressor<'static>>,
    /// Append with direct I/O where the file system has it ([`crate::core::shards::direct`]).
    direct_io: bool,
    /// The direct-I/O stage of the last chunk left, for its buffers.
    spare_stage: Option<DirectStage>,
    /// Chunks left since the last commit.
    pub sealed: Vec<Sealed>,
    /// A chunk file was created since the last commit.
    pub created: bool,
}

struct Current {
    id: u32,
    file: File,
    path: PathBuf,
    pos: u64,
    count: u64,
    file_len: u64,
    /// File offset of `stage[0]`.
    stage_at: u64,
    /// Start of the written bytes whose writeback has not been started yet.
    kicked: u64,
    dirty: bool,
    /// Appends past the page cache ([`crate::core::shards::direct`]); `None` where the file system
    /// has no direct I/O, when it is turned off, or after a write behind its end.
    direct: Option<DirectStage>,
}

impl Current {
    /// Write bytes at `at`: into the direct-I/O stage when there is one and `at` is
    /// at or past its end (padding the gap with zeros), else with `pwrite`, and
    /// then every `WRITEBACK_STEP` bytes ask the kernel to start writing them back
    /// without waiting (`sync_file_range`), so that the disk works while the
    /// writer goes on and the commit's `fdatasync` finds little left to do.
    fn write_at(&mut self, data: &[u8], at: u64) -> Result<()> {
        if let Some(d) = &mut self.direct {
            let end = d.end();
            if at >= end {
                // The dtype's alignment padding, then the bytes.
                let mut gap = at - end;
                while gap > 0 {
                    let n = gap.min(ZEROS.len() as u64) as usize;
                    d.push(&self.file, &ZEROS[..n]).at(&self.path)?;
                    gap -= n as u64;
                }
                return d.push(&self.file, data).at(&self.path);
            }
            // A write behind the appended end: from here on through the page cache.
            d.spill(&self.file, true).at(&self.path)?;
            self.direct = None;
        }
        self.file.write_all_at(data, at).at(&self.path)?;
        let end = at + data.len() as u64;
        if at < self.kicked {
            self.kicked = at;
        }
        if end >= self.kicked + WRITEBACK_STEP {
            crate::core::shards::start_writeback(&self.file, self.kicked, end - self.kicked);
            self.kicked = end;
        }
        Ok(())
    }

    /// Put every appended byte into the file (direct writes waited for).
    fn settle(&mut self) -> Result<()> {
        match &mut self.direct {
            Some(d) => d.spill(&self.file, true).at(&self.path),
            None => Ok(()),
        }
    }

    fn new(
        id: u32,
        file: File,
        path: PathBuf,
        pos: u64,
        file_len: u64,
        direct: Option<DirectStage>,
    ) -> Current {
        Current {
            id,
            file,
            path,
            pos,
            count: 0,
            file_len,
            stage_at: pos,
            kicked: pos,
            dirty: false,
            direct,
        }
    }
}

/// Zeros for alignment padding.
static ZEROS: [u8; 256] = [0; 256];

/// Bytes written between two starts of writeback (see `Current::write_at`).
const WRITEBACK_STEP: u64 = 8 << 20;

fn round_up(x: u64, step: u64) -> u64 {
    x.div_ceil(step).saturating_mul(step)
}

impl ChunkAppender {
    pub fn new(paths: DatasetPaths, limits: ChunkLimits, compress: Compress) -> ChunkAppender {
        ChunkAppender {
            paths,
            limits,
            compress,
            current: None,
            stage: Vec::new(),
            scratch: Vec::new(),
            zstd: None,
            direct_io: crate::core::shards::direct::wanted(),
            spare_stage: None,
            sealed: Vec::new(),
            created: false,
        }
    }

    /// Continue an unfull chunk at `pos` (bytes after it are overwritten).
    pub fn resume(&mut self, id: u32, pos: u64, count: u64) -> Result<()> {
        let path = self.paths.chunk(id);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| {
                if e.kind() == io::ErrorKind::NotFound {
                    Error::CorruptRecords {
                        path: path.clone(),
                        detail: format!("unfull chunk {id} of meta.json is missing"),
                    }
                } else {
                    Error::io(&path, e)
                }
            })?;
        let md = file.metadata().at(&path)?;
        if !md.is_file() {
            return Err(Error::not_a_file(&path, md.is_dir()));
        }
        if md.len() < pos {
            return Err(Error::CorruptRecords {
                path,
                detail: format!(
                    "meta.json says {pos} bytes are written but the chunk has {}",
                    md.len()
                ),
            });
        }
        let direct = self.direct_stage(&path, pos);
        let mut c = Current::new(id, file, path, pos, md.len(), direct);
        c.count = count;
        self.current = Some(c);
        Ok(())
    }

    /// The direct-I/O stage for appending to `path` at `pos`, with the buffers of the
    /// last chunk left; `None` when direct I/O is off or the file system has none.
    fn direct_stage(&mut self, path: &Path, pos: u64) -> Option<DirectStage> {
        let old = self.spare_stage.take();
        self.direct_io
            .then(|| DirectStage::reopen(path, pos, old))
            .flatten()
    }

    /// `(id, pos, count)` of the current chunk.
    pub fn state(&self) -> Option<(u32, u64, u64)> {
        self.current.as_ref().map(|c| (c.id, c.pos, c.count))
    }

    fn start_chunk(&mut self, next_id: &AtomicU32) -> Result<()> {
        let id = next_id.fetch_add(1, Ordering::SeqCst);
        if id == u32::MAX {
            return Err(Error::InvalidOperation(format!(
                "{}: no chunk ids left",
                self.paths.dir.display()
            )));
        }
        let path = self.paths.chunk(id);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .at(&path)?;
        self.created = true;
        let direct = self.direct_stage(&path, 0);
        self.current = Some(Current::new(id, file, path, 0, 0, direct));
        Ok(())
    }

    /// Write the staged bytes.
    pub fn flush(&mut self) -> Result<()> {
        if let Some(c) = &mut self.current {
            if !self.stage.is_empty() {
                c.write_at(&self.stage, c.stage_at)?;
                c.stage_at += self.stage.len() as u64;
                self.stage.clear();
            }
        }
        Ok(())
    }

    /// Make every byte appended so far durable.
    pub fn sync(&mut self) -> Result<()> {
        self.flush()?;
        if let Some(c) = &mut self.current {
            c.settle()?;
            if c.dirty {
                c.file.sync_data().at(&c.path)?;
                c.dirty = false;
            }
        }
        Ok(())
    }

    /// Leave the current chunk: sync it and cut it to its written part (unless a
    /// reader maps it).
    pub fn seal(&mut self) -> Result<()> {
        self.sync()?;
        if let Some(mut c) = self.current.take() {
            self.spare_stage = c.direct.take();
            let trimmed = c.file_len == c.pos || truncate_unless_mapped(&c.file, &c.path, c.pos)?;
            if trimmed && c.file_len != c.pos {
                c.file.sync_all().at(&c.path)?;
            }
            self.sealed.push(Sealed {
                id: c.id,
                pos: c.pos,
                count: c.count,
                trimmed,
            });
        }
        Ok(())
    }

    /// Cut the current chunk's file to its written part (a finished dataset),
    /// keeping it appendable. Returns false when a reader maps it.
    pub fn trim(&mut self) -> Result<bool> {
        self.sync()?;
        if let Some(c) = &mut self.current {
            if c.file_len != c.pos {
                if !truncate_unless_mapped(&c.file, &c.path, c.pos)? {
                    return Ok(false);
                }
                c.file.sync_all().at(&c.path)?;
                c.file_len = c.pos;
            }
        }
        Ok(true)
    }

    fn compress_into_scratch(&mut self, data: &[u8]) -> Result<()> {
        self.scratch.clear();
        match self.compress {
            Compress::None => {}
            Compress::Zstd => {
                if self.zstd.is_none() {
                    self.zstd = Some(
                        zstd::bulk::Compressor::new(3)
                            .map_err(|e| Error::io(&self.paths.dir, e))?,
                    );
                }
                let z = self.zstd.as_mut().expect("set above");
                let _ = z.include_contentsize(true);
                let bound = zstd::zstd_safe::compress_bound(data.len());
                self.scratch.reserve(bound);
                z.compress_to_buffer(data, &mut self.scratch)
                    .map_err(|e| Error::io(&self.paths.dir, e))?;
            }
            Compress::Flate => {
                let mut enc = flate2::write::DeflateEncoder::new(
                    std::mem::take(&mut self.scratch),
                    flate2::Compression::new(6),
                );
                enc.write_all(data).at(&self.paths.dir)?;
                self.scratch = enc.finish().at(&self.paths.dir)?;
            }
        }
        Ok(())
    }

    /// Append one record: compressed as the dataset says, placed in the current
    /// chunk (or a new one). Returns its entry and the CRC32C of its stored bytes.
    pub fn write_record(&mut self, data: &[u8], next_id: &AtomicU32) -> Result<(Entry, u32)> {
        if data.is_empty() {
            return Ok((Entry::default(), 0));
        }
        let compressed = self.compress != Compress::None;
        if compressed {
            self.compress_into_scratch(data)?;
        }
        if compressed {
            let scratch = std::mem::take(&mut self.scratch);
            let r = self.write_stored(&scratch, None, next_id);
            self.scratch = scratch;
            r
        } else {
            self.write_stored(data, None, next_id)
        }
    }

    /// True when a record of `len` stored bytes does not go into the current chunk.
    fn needs_new(&self, len: u64) -> bool {
        match &self.current {
            None => true,
            Some(c) => {
                let start = round_up(c.pos, self.limits.align);
                c.count >= self.limits.records || (c.pos > 0 && start + len > self.limits.bytes)
            }
        }
    }

    /// Make room for a record of `len` stored bytes: a new chunk when the current
    /// one is full (sealing it), the file grown by the growth step when needed.
    /// Returns the record's offset in the current chunk (aligned for the dtype).
    fn place(&mut self, len: u64, next_id: &AtomicU32) -> Result<u64> {
        if len > MAX_RECORD {
            return Err(Error::InvalidOperation(format!(
                "{}: a record of {len} stored bytes is larger than the limit of {MAX_RECORD}",
                self.paths.dir.display()
            )));
        }
        if self.needs_new(len) {
            self.seal()?;
            self.start_chunk(next_id)?;
        }
        let limits = self.limits;
        let c = self.current.as_mut().expect("a chunk is open");
        let start = round_up(c.pos, limits.align);
        let end = start + len;
        if end > c.file_len {
            let want = round_up(end, limits.grow).max(end);
            c.file.set_len(want).at(&c.path)?;
            c.file_len = want;
        }
        Ok(start)
    }

    /// Append records that lie back to back in `bytes` (`lens`: their lengths, in
    /// order), as `write_record` would one by one; for an uncompressed dataset the
    /// records that follow each other in the chunk go to the file straight from
    /// `bytes`, one `pwrite` per run, without the staging copy.
    pub fn write_run(
        &mut self,
        bytes: &[u8],
        lens: &[usize],
        next_id: &AtomicU32,
    ) -> Result<Vec<(Entry, u32)>> {
        let mut out = Vec::with_capacity(lens.len());
        if self.compress != Compress::None {
            let mut at = 0;
            for &len in lens {
                out.push(self.write_record(&bytes[at..at + len], next_id)?);
                at += len;
            }
            return Ok(out);
        }
        self.flush()?;
        // The pending run: bytes[from..to] go to the current chunk at `file_at`.
        let (mut from, mut to, mut file_at) = (0usize, 0usize, 0u64);
        let mut at = 0usize;
        for &len in lens {
            let rec = &bytes[at..at + len];
            if len == 0 {
                out.push((Entry::default(), 0));
                continue;
            }
            if to > from && self.needs_new(len as u64) {
                // The run is written before its chunk is sealed.
                let c = self.current.as_mut().expect("a chunk is open");
                c.write_at(&bytes[from..to], file_at)?;
                from = to;
            }
            let start = self.place(len as u64, next_id)?;
            let c = self.current.as_mut().expect("a chunk is open");
            if to > from
                && (to != at || file_at + (to - from) as u64 != start || to - from >= STAGE)
            {
                c.write_at(&bytes[from..to], file_at)?;
                from = to;
            }
            if to == from {
                (from, file_at) = (at, start);
            }
            to = at + len;
            c.pos = start + len as u64;
            c.stage_at = c.pos;
            c.count += 1;
            c.dirty = true;
            out.push((
                Entry {
                    chunk: c.id,
                    offset: start,
                    length: len as u32,
                },
                crc::crc32c(rec),
            ));
            at += len;
        }
        if to > from {
            let c = self.current.as_mut().expect("a chunk is open");
            c.write_at(&bytes[from..to], file_at)?;
        }
        Ok(out)
    }

    /// Append bytes as they are stored (already compressed, if the dataset is):
    /// for copies between chunks. `crc` is their CRC32C when known.
    pub fn write_stored(
        &mut self,
        bytes: &[u8],
        crc: Option<u32>,
        next_id: &AtomicU32,
    ) -> Result<(Entry, u32)> {
        if bytes.is_empty() {
            return Ok((Entry::default(), 0));
        }
        let stored_len = bytes.len() as u64;
        let start = self.place(stored_len, next_id)?;
        let c = self.current.as_mut().expect("a chunk is open");
        let end = start + stored_len;
        // Padding to the alignment of the dtype's elements.
        let pad = (start - c.pos) as usize;
        let crc = crc.unwrap_or_else(|| crc::crc32c(bytes));
        if self.stage.len() + pad + bytes.len() > STAGE && !self.stage.is_empty() {
            c.write_at(&self.stage, c.stage_at)?;
            c.stage_at += self.stage.len() as u64;
            self.stage.clear();
        }
        if self.stage.is_empty() {
            c.stage_at = c.pos;
        }
        if self.stage.is_empty() && c.direct.is_some() {
            // The direct-I/O stage gathers the bytes (and the padding) itself.
            c.write_at(bytes, start)?;
            c.stage_at = end;
        } else if bytes.len() >= STAGE {
            // Large records go straight to the file.
            self.stage.resize(pad, 0);
            c.write_at(&self.stage, c.stage_at)?;
            self.stage.clear();
            c.write_at(bytes, start)?;
            c.stage_at = end;
        } else {
            self.stage.resize(self.stage.len() + pad, 0);
            self.stage.extend_from_slice(bytes);
        }
        c.pos = end;
        c.count += 1;
        c.dirty = true;
        Ok((
            Entry {
                chunk: c.id,
                offset: start,
                length: stored_len as u32,
            },
            crc,
        ))
    }
}

/// Take the writer lock of a dataset: an exclusive `flock` on `DIR/lock`.
pub fn lock_dataset(paths: &DatasetPaths) -> Result<File> {
    let path = paths.lock();
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .at(&path)?;
    match crate::core::shards::flock(&f, libc::LOCK_EX | libc::LOCK_NB) {
        Ok(true) => Ok(f),
        Ok(false) => Err(Error::RecordsLocked {
            path: paths.dir.clone(),
        }),
        Err(e) => Err(Error::io(&path, e)),
    }
}
