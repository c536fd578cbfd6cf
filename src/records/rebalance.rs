//! Rebalance (docs/FORMAT.md §10.2, an offline task): rewrite the live records in offset-table
//! order into new chunks and switch the table over, giving back the space of
//! modified and deleted records. Only run when asked; reports the utilization
//! (live record bytes / chunk bytes in use) before and after.
//!
//! Why this order of steps (crash safety, readers running meanwhile):
//!
//! 1. The live records are copied, as stored, into chunks with new ids (at and past
//!    `chunks.num`, never reused), which are synced; then `meta.json` is committed
//!    with the larger `num`. A kill before that leaves files past `num`, which the
//!    next writer removes.
//! 2. The entries are rewritten in place and synced. An entry switches from the
//!    old copy of a record to the new copy of the same bytes (same CRC), so at every
//!    instant every record reads correctly, before, during and after this step.
//! 3. `meta.json` is committed with the old chunks in `retire`; they are removed and
//!    `meta.json` committed once more without them. A kill in between leaves
//!    `retire` for the next writer to finish.

use serde::Serialize;

use crate::core::error::{IoContext, Result};
use crate::core::output::sync_dir;
use crate::core::output::write_file;
use crate::core::progress::Progress;
use crate::core::readahead::with_read_ahead;
use crate::records::appender::{ChunkAppender, ChunkLimits};
use crate::records::chunks::{ChunkNames, MapCache};
use crate::records::format::{Entry, ENTRY_SIZE};
use crate::records::writer::RecordWriter;
use std::os::unix::fs::FileExt;
use std::sync::atomic::Ordering;

/// Live bytes against bytes the chunks take.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Utilization {
    /// Sum of the stored lengths of the records.
    pub live_bytes: u64,
    /// Sum of the written parts of the chunks.
    pub chunk_bytes: u64,
    /// Number of chunk files.
    pub chunks: u64,
    /// `live_bytes / chunk_bytes` (1 for an empty dataset).
    pub ratio: f64,
}

impl Utilization {
    /// Utilization from the live bytes, the written chunk bytes and the number of chunks.
    pub fn new(live: u64, chunk_bytes: u64, chunks: u64) -> Utilization {
        Utilization {
            live_bytes: live,
            chunk_bytes,
            chunks,
            ratio: if chunk_bytes == 0 {
                1.0
            } else {
                live as f64 / chunk_bytes as f64
            },
        }
    }
}

/// What [`RecordWriter::rebalance`] did.
#[derive(Debug, Clone, Serialize)]
pub struct RebalanceReport {
    /// Records in the dataset.
    pub records: u64,
    /// Before the rebalance.
    pub before: Utilization,
    /// After it.
    pub after: Utilization,
    /// Bytes of records copied to new chunks.
    pub copied_bytes: u64,
}

impl RecordWriter {
    /// Sum of the written parts of the chunks below `num` that exist.
    fn chunk_usage(&self) -> Result<(u64, u64)> {
        let mut bytes = 0;
        let mut n = 0;
        for id in 0..self.meta.chunks.num {
            let p = self.paths.chunk(id);
            let Ok(md) = std::fs::metadata(&p) else {
                continue;
            };
            n += 1;
            bytes += match self.meta.unfull(id) {
                Some(u) => u.1,
                None => md.len(),
            };
        }
        Ok((bytes, n))
    }

    fn read_entries(&self) -> Result<Vec<Entry>> {
        let n = self.meta.length as usize;
        let mut b = vec![0u8; n * ENTRY_SIZE];
        self.offset
            .read_exact_at(&mut b, 0)
            .at(self.paths.offset())?;
        Ok(b.chunks_exact(ENTRY_SIZE).map(Entry::decode).collect())
    }

    /// Rewrite the live records in table order into new chunks (see the module
    /// documentation). Commits pending changes first.
    pub fn rebalance(mut self, progress: &Progress) -> Result<RebalanceReport> {
        self.commit()?;
        let entries = self.read_entries()?;
        let live: u64 = entries.iter().map(|e| e.length as u64).sum();
        let (used, nchunks) = self.chunk_usage()?;
        let before = Utilization::new(live, used, nchunks);
        progress.set_total(live);
        let old_num = self.meta.chunks.num;
        let limits = ChunkLimits {
            records: self.meta.chunks.size,
            bytes: self.meta.chunks.max_bytes,
            grow: self.meta.chunks.grow,
            align: self.meta.dtype.size() as u64,
        };
        let maps = MapCache::new(ChunkNames::Dataset(self.paths.clone()));
        let mut app = ChunkAppender::new(self.paths.clone(), limits, self.meta.compress);
        let mut crcs = vec![0u8; entries.len() * 4];
        self.crc.read_exact_at(&mut crcs, 0).at(self.paths.crc())?;
        let mut fresh = Vec::with_capacity(entries.len());
        // The records are read in table order, which after deletions (the last
        // record moves into each hole) jumps about the chunks, and through the tail
        // backwards. A helper thread reads the bytes of each window of entries into
        // the page cache as sequential runs, at most two windows ahead of the copy.
        with_read_ahead(
            entries.chunks(WINDOW).enumerate(),
            |(_, w)| maps.read_ahead(w),
            |(k, w)| -> Result<()> {
                for (j, e) in w.iter().enumerate() {
                    let i = k * WINDOW + j;
                    if e.length == 0 {
                        fresh.push(Entry::default());
                        continue;
                    }
                    let (map, start, len) = maps.slice(e)?;
                    let crc = u32::from_le_bytes(crcs[i * 4..i * 4 + 4].try_into().expect("4"));
                    let (ne, _) =
                        app.write_stored(&map[start..start + len], Some(crc), &self.next_id)?;
                    fresh.push(ne);
                    progress.add(1, len as u64);
                }
                Ok(())
            },
        )?;
        app.trim()?;
        app.sync()?;
        drop(maps);
        sync_dir(&self.paths.chunk(0))?;
        // 1. The new chunks exist and are durable: commit their ids.
        let mut meta = self.meta.clone();
        meta.chunks.num = self.next_id.load(Ordering::SeqCst);
        let mut unfull = self.unfull_now();
        unfull.extend(
            app.state()
                .map(|(id, pos, count)| crate::records::format::Unfull(id, pos, count)),
        );
        meta.chunks.unfull = unfull;
        write_file(&self.paths.meta(), &self.paths.meta_tmp(), &meta.to_json())?;
        self.meta = meta;
        // 2. Switch every entry to its new copy.
        let mut b = Vec::with_capacity(fresh.len() * ENTRY_SIZE);
        for e in &fresh {
            b.extend_from_slice(&e.encode());
        }
        self.offset.write_all_at(&b, 0).at(self.paths.offset())?;
        self.offset.sync_data().at(self.paths.offset())?;
        // 3. Retire the old chunks.
        let mut meta = self.meta.clone();
        meta.chunks.unfull = app
            .state()
            .map(|(id, pos, count)| crate::records::format::Unfull(id, pos, count))
            .into_iter()
            .collect();
        meta.retire = (0..old_num)
            .filter(|id| self.paths.chunk(*id).exists())
            .collect();
        write_file(&self.paths.meta(), &self.paths.meta_tmp(), &meta.to_json())?;
        super::writer::remove_chunks(&self.paths, &meta.retire)?;
        sync_dir(&self.paths.chunk(0))?;
        meta.retire.clear();
        write_file(&self.paths.meta(), &self.paths.meta_tmp(), &meta.to_json())?;
        self.meta = meta;
        // The writer continues with the last new chunk.
        self.idle_unfull.clear();
        let paths = self.paths.clone();
        let compress = self.meta.compress;
        for s in &mut self.slots {
            *s = ChunkAppender::new(paths.clone(), limits, compress);
        }
        if let Some((id, pos, count)) = app.state() {
            self.slots[0].resume(id, pos, count)?;
        }
        let (used, nchunks) = self.chunk_usage()?;
        let after = Utilization::new(live, used, nchunks);
        let records = self.meta.length;
        self.finish()?;
        Ok(RebalanceReport {
            records,
            before,
            after,
            copied_bytes: live,
        })
    }
}

/// Entries a rebalance reads ahead at a time.
const WINDOW: usize = 65536;
