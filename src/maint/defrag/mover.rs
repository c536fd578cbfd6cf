//! Moving files: copying their bytes to their new place, syncing, and committing
//! their new rows, batch by batch, so that no committed row ever points at bytes
//! that were overwritten (see the crash safety notes of [`super`]).

use super::*;

/// A run of bytes to copy: contiguous in its source and in its destination.
#[derive(Debug, Clone, Copy)]
struct Run {
    src_shard: u64,
    src_off: u64,
    dst_shard: u64,
    dst_off: u64,
    len: u64,
}

/// Copies files, syncs and commits their new rows, batch by batch.
pub(crate) struct Mover<'a> {
    index: &'a Index,
    pub(super) files: Vec<File>,
    paths: Vec<PathBuf>,
    copier: Copier,
    /// Copies not yet done (coalesced).
    runs: Vec<Run>,
    /// Rows to update at the next commit: (rowid, shard, offset).
    rows: Vec<(i64, u64, u64)>,
    /// Shards written since the last sync.
    touched: BTreeSet<u64>,
    /// For each shard with files in the open batch, the lowest old offset among
    /// them (their bytes stay live until the commit).
    first_src: Vec<(u64, u64)>,
    batch_bytes: u64,
    batch_started: Instant,
    steps: &'a Steps,
    tuning: Tuning,
    progress: &'a Progress,
    pub(super) moved_files: u64,
    pub(super) moved_bytes: u64,
}

impl<'a> Mover<'a> {
    /// A mover over the open shard `files` (indexed by shard number, with their
    /// `paths`), committing through `index`.
    pub(crate) fn new(
        index: &'a Index,
        files: Vec<File>,
        paths: Vec<PathBuf>,
        steps: &'a Steps,
        tuning: Tuning,
        progress: &'a Progress,
    ) -> Mover<'a> {
        Mover {
            index,
            files,
            paths,
            copier: Copier::new(),
            runs: Vec::new(),
            rows: Vec::new(),
            touched: BTreeSet::new(),
            first_src: Vec::new(),
            batch_bytes: 0,
            batch_started: Instant::now(),
            steps,
            tuning,
            progress,
            moved_files: 0,
            moved_bytes: 0,
        }
    }

    /// Files and bytes moved so far.
    pub(crate) fn moved(&self) -> (u64, u64) {
        (self.moved_files, self.moved_bytes)
    }

    fn pause(&self) {
        self.steps.step();
    }

    /// Queue a copy of `len` bytes (nothing for empty files).
    fn copy(&mut self, src_shard: u64, src_off: u64, dst_shard: u64, dst_off: u64, len: u64) {
        if len == 0 {
            return;
        }
        if let Some(r) = self.runs.last_mut() {
            if r.src_shard == src_shard
                && r.dst_shard == dst_shard
                && r.src_off + r.len == src_off
                && r.dst_off + r.len == dst_off
            {
                r.len += len;
                return;
            }
            // Files taken from the end backwards into another shard (reshard): the
            // run grows at its front. (Not within one shard, where the joined
            // ranges could overlap.)
            if r.src_shard == src_shard
                && r.dst_shard == dst_shard
                && src_shard != dst_shard
                && src_off + len == r.src_off
                && dst_off + len == r.dst_off
            {
                r.src_off = src_off;
                r.dst_off = dst_off;
                r.len += len;
                return;
            }
        }
        self.runs.push(Run {
            src_shard,
            src_off,
            dst_shard,
            dst_off,
            len,
        });
    }

    /// Do the queued copies and make them durable.
    fn copy_and_sync(&mut self) -> Result<()> {
        for r in std::mem::take(&mut self.runs) {
            let (s, d) = (r.src_shard as usize, r.dst_shard as usize);
            self.copier.copy(
                &self.files[s],
                &self.paths[s],
                r.src_off,
                &self.files[d],
                &self.paths[d],
                r.dst_off,
                r.len,
            )?;
            self.touched.insert(r.dst_shard);
            self.progress.add(0, r.len);
            self.pause();
        }
        for n in std::mem::take(&mut self.touched) {
            let n = n as usize;
            self.files[n]
                .sync_data()
                .map_err(|e| Error::io(&self.paths[n], e))?;
        }
        self.pause();
        Ok(())
    }

    /// Update the queued rows in one transaction.
    fn commit_rows(&mut self) -> Result<()> {
        if self.rows.is_empty() {
            return Ok(());
        }
        self.index.begin_immediate()?;
        let r = (|| -> Result<()> {
            for &(rowid, shard, offset) in &self.rows {
                self.index.relocate_file(rowid, shard, offset)?;
            }
            // A crash here leaves the rows uncommitted (rolled back on next open).
            self.pause();
            Ok(())
        })()
        .and_then(|()| self.index.commit());
        if let Err(e) = r {
            let _ = self.index.rollback();
            return Err(e);
        }
        self.progress.add(self.rows.len() as u64, 0);
        self.rows.clear();
        self.pause();
        Ok(())
    }

    /// Copy, sync and commit the open batch.
    pub(crate) fn flush(&mut self) -> Result<()> {
        self.copy_and_sync()?;
        self.commit_rows()?;
        self.first_src.clear();
        self.batch_bytes = 0;
        self.batch_started = Instant::now();
        Ok(())
    }

    fn batch_is_empty(&self) -> bool {
        self.rows.is_empty() && self.runs.is_empty()
    }

    pub(crate) fn batch_due(&self) -> bool {
        self.batch_bytes >= self.tuning.batch_bytes
            || self.batch_started.elapsed() >= self.tuning.batch_time
    }

    /// Add the move of `exts[i]` to `to` to the open batch.
    pub(crate) fn add_move(&mut self, e: &mut Ext, to: (u64, u64)) {
        self.copy(e.shard, e.offset, to.0, to.1, e.size);
        self.rows.push((e.rowid, to.0, to.1));
        if e.size > 0 && !self.first_src.iter().any(|(s, _)| *s == e.shard) {
            self.first_src.push((e.shard, e.offset));
        }
        self.batch_bytes += e.size;
        self.moved_files += 1;
        self.moved_bytes += e.size;
        e.shard = to.0;
        e.offset = to.1;
    }

    /// The lowest offset in `shard` that a committed row of a file of the open batch
    /// still points at.
    fn frontier(&self, shard: u64) -> u64 {
        self.first_src
            .iter()
            .find(|(s, _)| *s == shard)
            .map_or(u64::MAX, |(_, o)| *o)
    }

    // ------------------------------------------------------------------ full

    /// Move every file to its target, in address order. A target is never after
    /// the file's place in the same shard's bytes that are still to be read: it
    /// is at or before the file's own place, or in a shard that holds no file.
    pub(crate) fn full(&mut self, exts: &mut [Ext], targets: &[(u64, u64)]) -> Result<()> {
        let mut i = 0;
        while i < exts.len() {
            let e = exts[i];
            let to = targets[i];
            if to == e.at() {
                i += 1;
                continue;
            }
            if e.size > 0 {
                let mut frontier = self.frontier(to.0);
                if to.0 == e.shard {
                    frontier = frontier.min(e.offset);
                }
                if to.1 + e.size > frontier {
                    if !self.batch_is_empty() {
                        self.flush()?;
                        continue;
                    }
                    i += self.through_scratch(exts, targets, i)?;
                    continue;
                }
                if to.0 == e.shard
                    && self.batch_is_empty()
                    && e.offset - to.1 < self.tuning.direct_min_gap
                {
                    i += self.through_scratch(exts, targets, i)?;
                    continue;
                }
            }
            self.add_move(&mut exts[i], to);
            i += 1;
            if self.batch_due() {
                self.flush()?;
            }
        }
        Ok(())
    }

    /// Move a run of files of one shard, starting at `exts[i]`, to their targets
    /// through a scratch area after the end of the shard. Returns how many files
    /// were moved. The batch must be empty.
    fn through_scratch(
        &mut self,
        exts: &mut [Ext],
        targets: &[(u64, u64)],
        i: usize,
    ) -> Result<usize> {
        let shard = exts[i].shard;
        let mut j = i;
        let mut bytes = 0u64;
        while j < exts.len() {
            let e = exts[j];
            let to = targets[j];
            if e.shard != shard || to.0 != shard || (e.size > 0 && to.1 >= e.offset) {
                break;
            }
            if j > i && bytes + e.size > self.tuning.window_bytes {
                break;
            }
            bytes += e.size;
            j += 1;
        }
        let n = shard as usize;
        let base = self.files[n]
            .metadata()
            .map_err(|e| Error::io(&self.paths[n], e))?
            .len();
        // 1. Copy to the scratch area and commit the rows there.
        let mut at = base;
        for e in &mut exts[i..j] {
            if e.size > 0 {
                self.copy(shard, e.offset, shard, at, e.size);
                self.rows.push((e.rowid, shard, at));
                e.offset = at;
                at += e.size;
            }
        }
        self.copy_and_sync()?;
        self.commit_rows()?;
        // 2. The old places are dead now: copy to the targets, commit.
        for (k, e) in exts[i..j].iter_mut().enumerate() {
            let to = targets[i + k];
            self.copy(shard, e.offset, to.0, to.1, e.size);
            self.rows.push((e.rowid, to.0, to.1));
            self.moved_files += 1;
            self.moved_bytes += e.size;
            e.shard = to.0;
            e.offset = to.1;
        }
        self.copy_and_sync()?;
        self.commit_rows()?;
        // 3. The scratch area is dead: cut it off (unless a reader has the shard
        // mapped: it then stays as trailing bytes, cut at the end if possible).
        truncate_unless_mapped(&self.files[n], &self.paths[n], base)?;
        self.pause();
        self.batch_started = Instant::now();
        Ok(j - i)
    }

    // ------------------------------------------------------------------ quick

    /// Move files from the end into the leftmost earlier hole that fits them,
    /// going through the files page by page in reverse address order (`window` at
    /// a time), until no file fits anywhere earlier or the time runs out. Memory:
    /// the holes (40 bytes each) and one page. Returns true when the time ran out.
    pub(super) fn quick(
        &mut self,
        index: &Index,
        window: usize,
        mut holes: Vec<Hole>,
        deadline: Instant,
    ) -> Result<bool> {
        let mut tree = MaxTree::new(holes.iter().map(|h| h.len));
        // Where each hole began: files found between that and the hole's start now
        // were put there by this run (committed, the scan meets them again).
        let began: Vec<(u64, u64)> = holes.iter().map(|h| (h.shard, h.start)).collect();
        let mut stuck_shard = None;
        let mut before = None;
        loop {
            let page = extents_page(index, before, window, Direction::Down)?;
            let full = page.len() == window;
            before = page.last().map(Ext::key);
            for mut e in page {
                if Instant::now() >= deadline {
                    return Ok(true);
                }
                if stuck_shard == Some(e.shard) {
                    continue;
                }
                let k = began.partition_point(|b| *b <= e.at());
                if k > 0 && holes[k - 1].shard == e.shard && e.offset < holes[k - 1].start {
                    continue;
                }
                if e.size == 0 {
                    // Empty files hold no bytes, but they count in the logical end.
                    if e.at() != (0, 0) {
                        self.add_move(&mut e, (0, 0));
                    }
                    continue;
                }
                let fits_before = holes.partition_point(|h| (h.shard, h.start) < e.at());
                if fits_before == 0 {
                    return Ok(false);
                }
                match tree.leftmost(fits_before, e.size) {
                    Some(k) => {
                        let to = (holes[k].shard, holes[k].start);
                        holes[k].start += e.size;
                        holes[k].len -= e.size;
                        tree.set(k, holes[k].len);
                        self.add_move(&mut e, to);
                    }
                    None => stuck_shard = Some(e.shard),
                }
                if self.batch_due() {
                    self.flush()?;
                }
            }
            // One commit per page at least, as for a full compaction: the next
            // pages meet the files moved here at their new places.
            self.flush()?;
            if !full {
                return Ok(false);
            }
        }
    }
}
