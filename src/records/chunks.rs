//! Chunk files as readers see them: lazily memory-mapped, read ahead on request.
//! The writers' side is [`crate::records::appender`].
//!
//! Why here and not in [`crate::core::shards`]: a record reader maps files by a 32-bit
//! chunk id that names either a dataset chunk (`chunk/<id>.zr`) or an archive shard
//! (`P-shard-NNNNN`), and a record writer needs growth in fixed steps, compression,
//! alignment and several appenders at once. What is shared with shards is the rule
//! that keeps readers safe: a reader holds a shared `flock` on every file it maps,
//! and writers cut a file only when nobody holds one ([`crate::core::shards::truncate_unless_mapped`]),
//! because touching a page past the end of a mapped file kills the process (SIGBUS).

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use memmap2::Mmap;

use crate::core::error::{Error, IoContext, Result};
use crate::core::fork::ForkLocal;
use crate::core::format::layout::Layout;
use crate::core::readahead;
use crate::core::shards::lock_shared;
use crate::records::format::{DatasetPaths, Entry};

/// Where chunk `id` lives.
#[derive(Debug, Clone)]
pub enum ChunkNames {
    /// `DIR/chunk/<id>.zr`.
    Dataset(DatasetPaths),
    /// Shard `id` of a barecat archive.
    Archive(Layout),
}

impl ChunkNames {
    /// The file of chunk `id`.
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
    /// A memory map of a local chunk file.
    Map(Mmap),
    /// Bytes fetched from a remote archive.
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
    /// A cache of maps of the chunk files `names` gives, opened as readers need them.
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

    /// How chunk ids become file names.
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
