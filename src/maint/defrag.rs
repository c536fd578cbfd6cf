//! Defragmentation: giving back the space of holes and trailing bytes.
//!
//! * **Full** compaction packs the files back to back in address order, starting a
//!   new shard when the next file would cross the shard size limit (a file larger
//!   than the limit gets a shard of its own), then truncates the shards and removes
//!   the emptied ones. It plans and moves one page of the address-ordered scan at a
//!   time (`Tuning::window_files`), committing at the end of each: each target
//!   depends only on the files before it, and a file only ever moves to an earlier
//!   place, so the rows after the page are untouched. Memory is flat in the number
//!   of files.
//! * **Quick** compaction, for cron, moves files from the end into earlier holes
//!   that fit them, for at most a time budget, then truncates what it freed. It
//!   finds the holes in one address-ordered scan and goes through the files from
//!   the end in pages of the reverse scan: its memory is the holes (40 bytes
//!   each), not the files.
//!
//! # Crash safety
//!
//! A file's bytes are copied and `fdatasync`ed before its row is updated and
//! committed, and no byte that a committed row points at is ever overwritten. So a
//! kill at any instant leaves an archive whose every file reads back correctly (at
//! worst with unreferenced bytes, which a later run or `barecat-repair` removes).
//!
//! Moves are batched (one sync and one transaction per batch). A move may join a
//! batch only if its destination lies before every byte still referenced in that
//! shard by a row not yet committed at its new place (the *frontier*): the
//! destination is then dead space. When a file must move left by less than its own
//! size (its destination overlaps its old bytes), or by only a little, a run of
//! files of the shard is moved through a scratch area after the end of the shard:
//! copy to the scratch, sync, commit the rows there; copy to the destinations, which
//! now hold no live byte, sync, commit; cut the scratch off again.

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::types::ValueRef;
use serde::Serialize;

use crate::core::archive::Archive;
use crate::core::error::{Error, Result};
use crate::core::format::layout::Layout;
use crate::core::index::Index;
use crate::core::progress::Progress;
use crate::core::shards::{sync_dir, truncate_unless_mapped};
use crate::core::writer::{ArchiveWriter, CreateMode, WriterOptions};
use crate::maint::copy::Copier;
use crate::maint::space::{utilization, ShardSpace, SpaceScanner, SpaceSummary};

/// Sizes of the steps of the work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tuning {
    /// A move within a shard goes straight to its destination (rather than through
    /// the scratch area) when the shard has at least this much free space before
    /// the file: with less, batches would be tiny.
    pub direct_min_gap: u64,
    /// Bytes moved through the scratch area at a time.
    pub window_bytes: u64,
    /// A batch is committed after this many bytes…
    pub batch_bytes: u64,
    /// …or after this long.
    pub batch_time: Duration,
    /// Files a full compaction plans at a time (pages of the address-ordered scan;
    /// its memory: 48 bytes a file of a page).
    pub window_files: usize,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            direct_min_gap: 8 << 20,
            window_bytes: 64 << 20,
            batch_bytes: 256 << 20,
            batch_time: Duration::from_secs(2),
            window_files: WINDOW,
        }
    }
}

impl Tuning {
    /// Tiny steps: every way of moving files is used even on a small archive, and
    /// there are many commits (for tests).
    pub fn small() -> Tuning {
        Tuning {
            direct_min_gap: 0,
            window_bytes: 4 << 10,
            batch_bytes: 16 << 10,
            batch_time: Duration::from_millis(50),
            window_files: 5,
        }
    }
}

/// Which compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DefragMode {
    /// Pack every file back to back.
    Full,
    /// Move files from the end into earlier holes for at most `time_limit`.
    Quick { time_limit: Duration },
}

/// Options of [`defrag`].
#[derive(Debug, Clone)]
pub struct DefragOptions {
    pub mode: DefragMode,
    /// Sleep this long after each step of the work (each copy, sync, commit,
    /// truncation and removal), so that tests can interrupt it anywhere.
    pub step_delay: Option<Duration>,
    /// End the process abruptly after this many steps, as a crash would (for tests
    /// of crash safety).
    pub crash_after_steps: Option<u64>,
    pub tuning: Tuning,
    /// Write the B-tree sidecar when done ([`crate::core::sidecar`]).
    pub sidecar: bool,
}

impl DefragOptions {
    pub fn new(mode: DefragMode) -> DefragOptions {
        DefragOptions {
            mode,
            step_delay: None,
            crash_after_steps: None,
            tuning: Tuning::default(),
            sidecar: true,
        }
    }
}

/// Counts the steps of the work; see [`DefragOptions::step_delay`].
pub(crate) struct Steps {
    pub(crate) delay: Option<Duration>,
    pub(crate) crash_after: Option<u64>,
    pub(crate) done: std::cell::Cell<u64>,
}

impl Steps {
    pub(crate) fn step(&self) {
        let n = self.done.get() + 1;
        self.done.set(n);
        if self.crash_after == Some(n) {
            // SAFETY: _exit ends the process at once, like a crash: no destructor,
            // no flush, no rollback.
            unsafe { libc::_exit(86) };
        }
        if let Some(d) = self.delay {
            std::thread::sleep(d);
        }
    }
}

/// What [`defrag`] did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DefragReport {
    /// There was nothing to give back; nothing was changed.
    pub nothing_to_do: bool,
    pub physical_before: u64,
    pub physical_after: u64,
    pub freed_bytes: u64,
    pub moved_files: u64,
    pub moved_bytes: u64,
    pub shards_before: u64,
    pub shards_after: u64,
    /// Quick mode stopped because its time ran out.
    pub out_of_time: bool,
    /// The archive's record table, which the moves made stale: rebuilt or removed.
    pub records_table: Option<crate::records::table::TableAction>,
}

/// The space of an archive and what a full defragmentation would give back
/// (`barecat-defrag --dry-run`).
#[derive(Debug, Clone, Serialize)]
pub struct Analysis {
    pub summary: SpaceSummary,
    pub shards: Vec<ShardSpace>,
    /// The size of every hole, sorted.
    pub hole_sizes: Vec<u64>,
    /// Bytes and shards after a full defragmentation.
    pub full_after_bytes: u64,
    pub full_after_shards: u64,
    /// Shards that are symbolic links (an archive merged with `--symlink`, or
    /// wrapped around a tar or zip): defragmentation refuses to write through them.
    pub linked_shards: u64,
}

impl Analysis {
    /// Bytes a full defragmentation frees (none when it refuses to run).
    pub fn full_freeable(&self) -> u64 {
        if self.linked_shards > 0 {
            return 0;
        }
        self.summary
            .physical_bytes
            .saturating_sub(self.full_after_bytes)
    }
}

/// The place of one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ext {
    pub(crate) rowid: i64,
    pub(crate) shard: u64,
    pub(crate) offset: u64,
    pub(crate) size: u64,
}

impl Ext {
    pub(crate) fn end(&self) -> u64 {
        self.offset + self.size
    }
    pub(crate) fn at(&self) -> (u64, u64) {
        (self.shard, self.offset)
    }
    /// Its place in the address-ordered scan.
    pub(crate) fn key(&self) -> (u64, u64, i64) {
        (self.shard, self.offset, self.rowid)
    }
}

/// Hand `f` the file rows in address order, `window` at a time (see
/// `extents_page`). The scan goes on after each page's last row as it was read, so
/// `f` may move the files of its page to earlier places.
pub(crate) fn each_extent_page(
    i: &Index,
    window: usize,
    mut f: impl FnMut(Vec<Ext>) -> Result<()>,
) -> Result<()> {
    let mut after = None;
    loop {
        let page = extents_page(i, after, window, Direction::Up)?;
        let full = page.len() == window;
        after = page.last().map(Ext::key);
        if !page.is_empty() {
            f(page)?;
        }
        if !full {
            return Ok(());
        }
    }
}

/// Files per page of the address-ordered scan; a full defragmentation holds one
/// page of places and targets at a time (48 bytes a file).
const WINDOW: usize = 65536;

/// Which way a page of the address-ordered scan goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    /// Address order, after the key.
    Up,
    /// Address order, from the key on (the key's own row first).
    UpFrom,
    /// Reverse address order, before the key.
    Down,
}

/// Up to `limit` file rows in address order after the key `after` (shard, offset,
/// rowid) or from it on, or in reverse address order before it, with strict
/// checks: a row without a sound place (NULL, negative, past 2^63) is refused, for
/// a defragmentation only runs on a sound index.
pub(crate) fn extents_page(
    i: &Index,
    after: Option<(u64, u64, i64)>,
    limit: usize,
    dir: Direction,
) -> Result<Vec<Ext>> {
    let p = i.path();
    // The first page has no bound, so that rows with a NULL place (which sort
    // first and compare with nothing) are seen and refused.
    const COLS: &str = "SELECT rowid, shard, offset, size, path FROM files";
    let (cmp, order) = match dir {
        Direction::Up => (">", "ORDER BY shard, offset, rowid LIMIT ?1"),
        Direction::UpFrom => (">=", "ORDER BY shard, offset, rowid LIMIT ?1"),
        Direction::Down => ("<", "ORDER BY shard DESC, offset DESC, rowid DESC LIMIT ?1"),
    };
    let sql = match after {
        Some(_) => format!("{COLS} WHERE (shard, offset, rowid) {cmp} (?2, ?3, ?4) {order}"),
        None => format!("{COLS} {order}"),
    };
    let mut stmt = i
        .conn()
        .prepare_cached(&sql)
        .map_err(|e| Error::sqlite(p, e))?;
    let rows = match after {
        Some((s, o, r)) => stmt.query(rusqlite::params![limit as i64, s as i64, o as i64, r]),
        None => stmt.query(rusqlite::params![limit as i64]),
    };
    let mut rows = rows.map_err(|e| Error::sqlite(p, e))?;
    let mut out = Vec::new();
    while let Some(r) = rows.next().map_err(|e| Error::sqlite(p, e))? {
        let int = |k: usize| -> Option<u64> {
            match r.get_ref(k) {
                Ok(ValueRef::Integer(v)) if v >= 0 => Some(v as u64),
                Ok(ValueRef::Null) if k == 3 => Some(0),
                _ => None,
            }
        };
        let rowid: i64 = r.get(0).map_err(|e| Error::sqlite(p, e))?;
        match (int(1), int(2), int(3)) {
            (Some(shard), Some(offset), Some(size))
                if offset
                    .checked_add(size)
                    .is_some_and(|e| e <= i64::MAX as u64) =>
            {
                out.push(Ext {
                    rowid,
                    shard,
                    offset,
                    size,
                })
            }
            _ => {
                let path = r.get::<_, String>(4).unwrap_or_default();
                return Err(Error::corrupt(
                    p,
                    format!("row {path:?} has a bad shard, offset or size; run barecat-verify"),
                ));
            }
        }
    }
    Ok(out)
}

/// The shard files (contiguous from 0) and their lengths, checked against the file
/// rows one at a time in address order: every extent must lie inside its shard and
/// no two non-empty files may overlap (a defragmentation only runs on a sound index).
pub(crate) struct ExtentCheck {
    /// The shard files (contiguous from 0), their lengths and whether each is a
    /// symbolic link.
    pub(crate) shards: Vec<(PathBuf, u64, bool)>,
    covered: Option<(u64, u64)>,
}

impl ExtentCheck {
    pub(crate) fn new(layout: &Layout) -> Result<ExtentCheck> {
        let mut shards = Vec::new();
        for s in &layout.contiguous_shards()? {
            let len = crate::core::shards::shard_len(&s.path)?;
            shards.push((s.path.clone(), len, s.is_symlink));
        }
        Ok(ExtentCheck {
            shards,
            covered: None,
        })
    }

    pub(crate) fn check(&mut self, layout: &Layout, e: &Ext) -> Result<()> {
        let Some((path, len, _)) = self.shards.get(e.shard as usize) else {
            return Err(Error::MissingShard {
                path: layout.shard_path(e.shard),
                shard: e.shard,
                detail: format!(
                    "the index refers to it but only {} shard file(s) exist",
                    self.shards.len()
                ),
            });
        };
        if e.end() > *len {
            return Err(Error::corrupt(
                layout.index(),
                format!(
                    "a file extends past the end of {} ({len} bytes); run barecat-verify",
                    path.display()
                ),
            ));
        }
        if e.size > 0 {
            if let Some((shard, end)) = self.covered {
                if shard == e.shard && e.offset < end {
                    return Err(Error::corrupt(
                        layout.index(),
                        format!(
                            "files overlap in {} at byte {}; run barecat-verify",
                            path.display(),
                            e.offset
                        ),
                    ));
                }
            }
            self.covered = Some((e.shard, e.end()));
        }
        Ok(())
    }
}

/// Where a full compaction puts every file (same order as `exts`). A file never
/// moves to a later place than where it is: when packing would put it later (only
/// possible after a shard that holds more than the limit), it stays and packing
/// goes on after it.
#[cfg(test)]
fn full_targets(exts: &[Ext], limit: u64) -> Vec<(u64, u64)> {
    full_targets_from(exts, limit, &mut (0, 0))
}

/// `full_targets` of the files that follow those already placed, packing from
/// `at` (shard, write position), which moves on past them.
fn full_targets_from(exts: &[Ext], limit: u64, at: &mut (u64, u64)) -> Vec<(u64, u64)> {
    let (mut d, mut w) = *at;
    let mut out = Vec::with_capacity(exts.len());
    for e in exts {
        let (mut td, mut tw) = (d, w);
        if e.size > 0 && tw > 0 && tw.saturating_add(e.size) > limit {
            td += 1;
            tw = 0;
        }
        if (td, tw) > e.at() {
            (td, tw) = e.at();
        }
        out.push((td, tw));
        d = td;
        w = tw + e.size;
    }
    *at = (d, w);
    out
}

/// The logical end of every shard and the last shard that stores a file, for files
/// added one at a time (`add`), page after page.
struct LogicalEnds {
    ends: Vec<u64>,
    last: Option<u64>,
}

impl LogicalEnds {
    /// Ends for `nshards` shards at least.
    fn new(nshards: usize) -> LogicalEnds {
        LogicalEnds {
            ends: vec![0; nshards],
            last: None,
        }
    }

    /// A file of `size` bytes at `offset` of `shard`.
    fn add(&mut self, shard: u64, offset: u64, size: u64) {
        let s = shard as usize;
        if s >= self.ends.len() {
            self.ends.resize(s + 1, 0);
        }
        self.ends[s] = self.ends[s].max(offset + size);
        self.last = self.last.max(Some(shard));
    }
}

/// Space use of the archive and what a full defragmentation would free. Changes
/// nothing.
pub fn analyze(path: &Path) -> Result<Analysis> {
    let archive = Archive::open(path)?;
    let layout = archive.layout().clone();
    // Page by page in address order (memory flat in the number of files, but for
    // the hole sizes the report lists).
    let mut check = ExtentCheck::new(&layout)?;
    let nshards = check.shards.len();
    let mut scan = SpaceScanner::new(
        check
            .shards
            .iter()
            .enumerate()
            .map(|(n, (_, len, link))| (n as u64, *len, *link)),
    )
    .collect_holes();
    let mut after = LogicalEnds::new(nshards);
    archive.with_index(|i| {
        let limit = i.shard_size_limit()?;
        let mut at = (0, 0);
        each_extent_page(i, WINDOW, |page| {
            for e in &page {
                check.check(&layout, e)?;
                scan.push(e.shard, e.offset, e.size);
            }
            let targets = full_targets_from(&page, limit, &mut at);
            for (t, e) in targets.iter().zip(&page) {
                after.add(t.0, t.1, e.size);
            }
            Ok(())
        })
    })?;
    let shards = check.shards;
    let (per_shard, summary, mut hole_sizes) = scan.finish();
    hole_sizes.sort_unstable();
    let kept = after
        .last
        .map_or(1, |l| l + 1)
        .min(shards.len().max(1) as u64);
    Ok(Analysis {
        summary,
        shards: per_shard,
        hole_sizes,
        full_after_bytes: after.ends.iter().take(kept as usize).sum(),
        full_after_shards: kept.min(shards.len() as u64),
        linked_shards: shards.iter().filter(|s| s.2).count() as u64,
    })
}

/// Defragment the archive at `path` in place.
pub fn defrag(path: &Path, opts: &DefragOptions, progress: &Progress) -> Result<DefragReport> {
    let wopts = WriterOptions {
        sidecar: opts.sidecar,
        ..WriterOptions::with_mode(CreateMode::Append)
    };
    let mut writer = ArchiveWriter::open(path, wopts)?;
    let layout = writer.layout().clone();
    let limit = writer.shard_size_limit();
    let index = writer.index();
    // Both modes go through the files page by page in address order (memory flat
    // in the number of files): first to check them (and for a quick one, to find
    // the holes), then to move them.
    let window = opts.tuning.window_files.max(1);
    let quick = matches!(opts.mode, DefragMode::Quick { .. });
    let mut check = ExtentCheck::new(&layout)?;
    let mut live = 0u64;
    let mut holes = HoleFinder::default();
    each_extent_page(index, window, |page| {
        for e in &page {
            check.check(&layout, e)?;
            live += e.size;
            if quick {
                holes.push(e);
            }
        }
        Ok(())
    })?;
    let shards = check.shards;
    let physical: u64 = shards.iter().map(|s| s.1).sum();
    let mut report = DefragReport {
        physical_before: physical,
        physical_after: physical,
        shards_before: shards.len() as u64,
        shards_after: shards.len() as u64,
        ..DefragReport::default()
    };
    // No holes and no trailing bytes anywhere: nothing can be given back.
    if physical == live {
        report.nothing_to_do = true;
        writer.write_sidecar();
        return Ok(report);
    }
    let steps = Steps {
        delay: opts.step_delay,
        crash_after: opts.crash_after_steps,
        done: std::cell::Cell::new(0),
    };
    crate::maint::fds::ensure_open_files(shards.len())?;
    let mut files = Vec::with_capacity(shards.len());
    for (p, _, _) in &shards {
        files.push(
            OpenOptions::new()
                .read(true)
                .write(true)
                .open(p)
                .map_err(|e| Error::io(p, e))?,
        );
    }
    let mut mover = Mover::new(
        index,
        files,
        shards.iter().map(|s| s.0.clone()).collect(),
        &steps,
        opts.tuning,
        progress,
    );
    // Where the files are in the end: the logical end of each shard and the last
    // shard in use.
    let mut ends = LogicalEnds::new(shards.len());
    let mut reach = |page: &[Ext]| {
        for e in page {
            ends.add(e.shard, e.offset, e.size);
        }
    };
    match opts.mode {
        DefragMode::Quick { time_limit } => {
            let deadline = Instant::now() + time_limit;
            report.out_of_time = mover.quick(index, window, holes.holes, deadline)?;
            mover.flush()?;
            // Where the files are now, from the committed rows.
            each_extent_page(index, window, |page| {
                reach(&page);
                Ok(())
            })?;
        }
        DefragMode::Full => {
            progress.set_total(live);
            let mut at = (0, 0);
            // The rows after a page are untouched by its moves: a file only ever
            // moves to an earlier place.
            each_extent_page(index, window, |mut page| {
                let targets = full_targets_from(&page, limit, &mut at);
                mover.full(&mut page, &targets)?;
                mover.flush()?;
                reach(&page);
                Ok(())
            })?;
        }
    }
    mover.flush()?;
    report.moved_files = mover.moved_files;
    report.moved_bytes = mover.moved_bytes;
    let files = std::mem::take(&mut mover.files);
    drop(mover);
    let (after, nshards) = truncate(&layout, &shards, files, &ends, &steps)?;
    report.physical_after = after;
    report.shards_after = nshards;
    report.freed_bytes = physical.saturating_sub(after);
    writer.commit()?;
    writer.finish()?;
    if report.moved_files > 0 {
        report.records_table = crate::records::table::after_change(path)?;
    }
    Ok(report)
}

/// Cut every shard to its logical end and remove the shards after the last used
/// one (from the highest number down, so the numbering stays contiguous). Runs
/// after the last commit: no committed row refers to anything removed. Returns the
/// new physical size and number of shards.
fn truncate(
    layout: &Layout,
    shards: &[(PathBuf, u64, bool)],
    files: Vec<File>,
    logical: &LogicalEnds,
    steps: &Steps,
) -> Result<(u64, u64)> {
    let (ends, last) = (&logical.ends, logical.last);
    let keep = last.map_or(1, |l| l as usize + 1).min(shards.len());
    let mut removed = false;
    for n in (keep..shards.len()).rev() {
        let p = &shards[n].0;
        std::fs::remove_file(p).map_err(|e| Error::io(p, e))?;
        removed = true;
        steps.step();
    }
    let mut total = 0;
    for (n, f) in files.iter().enumerate().take(keep) {
        let p = &shards[n].0;
        let end = ends[n];
        let now = f.metadata().map_err(|e| Error::io(p, e))?.len();
        // A shard a reader has memory-mapped is not cut (that would kill the reader
        // with SIGBUS): its tail stays as trailing bytes for a later run.
        if now > end && truncate_unless_mapped(f, p, end)? {
            f.sync_all().map_err(|e| Error::io(p, e))?;
            steps.step();
            total += end;
        } else {
            total += now;
        }
    }
    if removed {
        sync_dir(&layout.shard_path(0))?;
    }
    Ok((total, keep as u64))
}

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
    files: Vec<File>,
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
    moved_files: u64,
    moved_bytes: u64,
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
        let conn = self.index.conn();
        let p = self.index.path();
        conn.execute_batch("BEGIN IMMEDIATE")
            .map_err(|e| Error::sqlite(p, e))?;
        let r = (|| -> rusqlite::Result<()> {
            let mut stmt =
                conn.prepare_cached("UPDATE files SET shard = ?2, offset = ?3 WHERE rowid = ?1")?;
            for &(rowid, shard, offset) in &self.rows {
                stmt.execute(rusqlite::params![rowid, shard as i64, offset as i64])?;
            }
            // A crash here leaves the rows uncommitted (rolled back on next open).
            self.pause();
            Ok(())
        })()
        .and_then(|()| conn.execute_batch("COMMIT"));
        if let Err(e) = r {
            let _ = conn.execute_batch("ROLLBACK");
            return Err(Error::sqlite(p, e));
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
    fn quick(
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

/// A range of a shard that no file refers to, before or between files.
#[derive(Debug, Clone, Copy)]
struct Hole {
    shard: u64,
    start: u64,
    len: u64,
}

#[cfg(test)]
fn holes(exts: &[Ext]) -> Vec<Hole> {
    let mut f = HoleFinder::default();
    for e in exts {
        f.push(e);
    }
    f.holes
}

/// The holes before and between the files, fed in address order.
#[derive(Default)]
struct HoleFinder {
    /// Shard and covered end of the files so far.
    cur: Option<(u64, u64)>,
    holes: Vec<Hole>,
}

impl HoleFinder {
    fn push(&mut self, e: &Ext) {
        if e.size == 0 {
            return;
        }
        let covered = match self.cur {
            Some((s, end)) if s == e.shard => end,
            _ => 0,
        };
        if e.offset > covered {
            self.holes.push(Hole {
                shard: e.shard,
                start: covered,
                len: e.offset - covered,
            });
        }
        self.cur = Some((e.shard, covered.max(e.end())));
    }
}

/// A segment tree of maxima: the leftmost element of a prefix that is at least `x`.
struct MaxTree {
    n: usize,
    t: Vec<u64>,
}

impl MaxTree {
    fn new(values: impl ExactSizeIterator<Item = u64>) -> MaxTree {
        let n = values.len().next_power_of_two().max(1);
        let mut t = vec![0u64; 2 * n];
        for (i, v) in values.enumerate() {
            t[n + i] = v;
        }
        for i in (1..n).rev() {
            t[i] = t[2 * i].max(t[2 * i + 1]);
        }
        MaxTree { n, t }
    }

    fn set(&mut self, i: usize, v: u64) {
        let mut k = self.n + i;
        self.t[k] = v;
        while k > 1 {
            k /= 2;
            self.t[k] = self.t[2 * k].max(self.t[2 * k + 1]);
        }
    }

    /// Leftmost index below `end` whose value is at least `x`.
    fn leftmost(&self, end: usize, x: u64) -> Option<usize> {
        self.find(1, 0, self.n, end, x)
    }

    fn find(&self, node: usize, lo: usize, hi: usize, end: usize, x: u64) -> Option<usize> {
        if lo >= end || self.t[node] < x {
            return None;
        }
        if hi - lo == 1 {
            return Some(lo);
        }
        let mid = (lo + hi) / 2;
        self.find(2 * node, lo, mid, end, x)
            .or_else(|| self.find(2 * node + 1, mid, hi, end, x))
    }
}

/// Human report of `analysis`, in the layout of `barecat defrag --dry-run`.
pub fn write_analysis(a: &Analysis, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    use crate::core::size::human;
    let s = &a.summary;
    let ratio = if s.live_bytes == 0 {
        1.0
    } else {
        s.physical_bytes as f64 / s.live_bytes as f64
    };
    writeln!(out, "Physical size:       {}", human(s.physical_bytes))?;
    writeln!(out, "Logical size:        {}", human(s.live_bytes))?;
    writeln!(
        out,
        "Freeable space:      {} ({} in holes, {} trailing)",
        human(a.full_freeable()),
        human(s.hole_bytes),
        human(s.trailing_bytes)
    )?;
    writeln!(out, "Number of gaps:      {}", s.holes)?;
    writeln!(out, "Fragmentation ratio: {ratio:.3}")?;
    writeln!(
        out,
        "Utilization:         {:.1}%",
        utilization(s.live_bytes, s.physical_bytes) * 100.0
    )?;
    if a.linked_shards > 0 {
        writeln!(
            out,
            "Shards:              {} now, {} of them links to files of others (a tar or zip \
             wrapped with --wrap, or archives merged with --symlink): defrag does not write \
             through them",
            s.shards, a.linked_shards
        )?;
    } else {
        writeln!(
            out,
            "Shards:              {} now, {} after a full defrag",
            s.shards, a.full_after_shards
        )?;
    }
    let h = &a.hole_sizes;
    if !h.is_empty() {
        let n = h.len();
        writeln!(out, "\nGap size distribution:")?;
        writeln!(out, "  Min:    {}", human(h[0]))?;
        for (name, i) in [
            ("p25", n / 4),
            ("p50", n / 2),
            ("p75", 3 * n / 4),
            ("p90", n * 9 / 10),
            ("p99", n * 99 / 100),
        ] {
            writeln!(out, "  {name}:    {}", human(h[i.min(n - 1)]))?;
        }
        writeln!(out, "  Max:    {}", human(h[n - 1]))?;
        writeln!(out, "  Mean:   {}", human(h.iter().sum::<u64>() / n as u64))?;
        writeln!(out, "\nGaps by shard:")?;
        for sh in a
            .shards
            .iter()
            .filter(|x| x.holes > 0 || x.trailing_bytes > 0)
        {
            writeln!(
                out,
                "  Shard {}: {} gaps, {} total, {} trailing",
                sh.shard,
                sh.holes,
                human(sh.hole_bytes),
                human(sh.trailing_bytes)
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ext(shard: u64, offset: u64, size: u64) -> Ext {
        Ext {
            rowid: 0,
            shard,
            offset,
            size,
        }
    }

    #[test]
    fn full_targets_follow_the_spec_example() {
        // docs/FORMAT.md §8.5, limit 20: f0 f2 f3 f5 f6 packed into shard 0, f7 f8 into shard 1.
        let exts = [
            ext(0, 0, 3),
            ext(0, 7, 5),
            ext(0, 12, 3),
            ext(1, 0, 5),
            ext(1, 5, 3),
            ext(1, 8, 4),
            ext(1, 12, 5),
        ];
        let t = full_targets(&exts, 20);
        assert_eq!(
            t,
            vec![(0, 0), (0, 3), (0, 8), (0, 11), (0, 16), (1, 0), (1, 4)]
        );
    }

    #[test]
    fn oversize_files_get_their_own_shard_and_never_move_later() {
        // limit 10; shard 1 holds a 15-byte file, shard 2 a small one.
        let exts = [ext(0, 0, 4), ext(1, 0, 15), ext(2, 0, 3)];
        assert_eq!(full_targets(&exts, 10), vec![(0, 0), (1, 0), (2, 0)]);
        // After a hole in shard 0, the small file of shard 2 still cannot join the
        // oversize one.
        let exts = [ext(0, 5, 4), ext(1, 0, 15), ext(2, 0, 3)];
        assert_eq!(full_targets(&exts, 10), vec![(0, 0), (1, 0), (2, 0)]);
        // A shard holding more than the limit: the packed place of the second file
        // would be shard 1, after it; it stays.
        let exts = [ext(0, 0, 8), ext(0, 8, 8)];
        assert_eq!(full_targets(&exts, 10), vec![(0, 0), (0, 8)]);
    }

    #[test]
    fn max_tree_finds_leftmost_fit() {
        let mut t = MaxTree::new([3u64, 9, 2, 7, 9].into_iter());
        assert_eq!(t.leftmost(5, 8), Some(1));
        assert_eq!(t.leftmost(1, 8), None);
        assert_eq!(t.leftmost(5, 10), None);
        t.set(1, 0);
        assert_eq!(t.leftmost(5, 8), Some(4));
        assert_eq!(t.leftmost(4, 7), Some(3));
        assert_eq!(t.leftmost(5, 0), Some(0));
    }

    #[test]
    fn holes_are_found_between_files() {
        let h = holes(&[
            ext(0, 2, 3),
            ext(0, 5, 0),
            ext(0, 9, 1),
            ext(1, 0, 4),
            ext(1, 6, 1),
        ]);
        let got: Vec<_> = h.iter().map(|h| (h.shard, h.start, h.len)).collect();
        assert_eq!(got, vec![(0, 0, 2), (0, 5, 4), (1, 4, 2)]);
    }
}
