//! Chunk files as writers see them: [`ChunkAppender`] appends records to a chunk of
//! its own (staged, compressed, aligned, grown in fixed steps, with direct I/O where
//! the file system has it) and starts a new chunk when one is full; [`lock_dataset`]
//! takes a dataset's writer lock.
//!
//! Why apart from [`crate::records::chunks`]: readers map chunks and writers append
//! to them; the two share only the rule that a writer cuts a chunk only while no
//! reader maps it ([`crate::core::shards::truncate_unless_mapped`]).

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::core::crc;
use crate::core::error::{Error, IoContext, Result};
use crate::core::shards::direct::DirectStage;
use crate::core::shards::truncate_unless_mapped;
use crate::records::format::{Compress, DatasetPaths, Entry, MAX_RECORD};

/// Bytes staged before one `pwrite`.
const STAGE: usize = 8 << 20;

/// What a writer slot did to a chunk it left: `(id, written bytes, records,
/// trimmed)`. An untrimmed chunk stays in `meta.json`'s `unfull` list.
#[derive(Debug, Clone, Copy)]
pub struct Sealed {
    /// The chunk id.
    pub id: u32,
    /// Bytes written to it (its write position).
    pub pos: u64,
    /// Records it holds.
    pub count: u64,
    /// The file was cut to `pos` (no growth slack left at its end).
    pub trimmed: bool,
}

/// Limits of a chunk.
#[derive(Debug, Clone, Copy)]
pub struct ChunkLimits {
    /// Records per chunk.
    pub records: u64,
    /// Bytes per chunk (a larger record gets a chunk of its own).
    pub bytes: u64,
    /// Chunk files grow by this many bytes at a time.
    pub grow: u64,
    /// Records start at multiples of this (the element size of the dtype, 1 for bytes).
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
    /// A slot writing chunks of the dataset at `paths` within `limits`; it holds no chunk
    /// until the first append or [`resume`](Self::resume).
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
