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
use crate::core::index::{Columns, Index, ScanKey, ScanOrder, ScanSpec, Table};
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
    Quick {
        /// Stop moving after this long; what was moved stays moved.
        time_limit: Duration,
    },
    /// Give back what a full one gives back, moving fewer bytes
    /// ([`smart`]).
    Smart,
}

/// Options of [`defrag`].
#[derive(Debug, Clone)]
pub struct DefragOptions {
    /// Full, quick or smart.
    pub mode: DefragMode,
    /// Sleep this long after each step of the work (each copy, sync, commit,
    /// truncation and removal), so that tests can interrupt it anywhere.
    pub step_delay: Option<Duration>,
    /// End the process abruptly after this many steps, as a crash would (for tests
    /// of crash safety).
    pub crash_after_steps: Option<u64>,
    /// Step sizes; the defaults suit every archive, tests make them small.
    pub tuning: Tuning,
    /// Write the B-tree sidecar when done ([`crate::core::sidecar`]).
    pub sidecar: bool,
}

impl DefragOptions {
    /// Options for `mode` with the defaults: no delays, no crash, sidecar written.
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
    /// Bytes the shards took before.
    pub physical_before: u64,
    /// Bytes the shards take after.
    pub physical_after: u64,
    /// `physical_before - physical_after`.
    pub freed_bytes: u64,
    /// Files whose bytes were moved.
    pub moved_files: u64,
    /// Bytes moved.
    pub moved_bytes: u64,
    /// Shards before.
    pub shards_before: u64,
    /// Shards after (trailing empty ones are removed).
    pub shards_after: u64,
    /// Quick mode stopped because its time ran out.
    pub out_of_time: bool,
    /// The archive's record table, which the moves made stale: rebuilt or removed.
    pub records_table: Option<crate::records::table::TableAction>,
    /// What a smart defragmentation planned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub smart: Option<smart::SmartPlan>,
}

/// The space of an archive and what a full defragmentation would give back
/// (`barecat-defrag --dry-run`).
#[derive(Debug, Clone, Serialize)]
pub struct Analysis {
    /// Live bytes, holes and trailing garbage of the whole archive.
    pub summary: SpaceSummary,
    /// The same per shard.
    pub shards: Vec<ShardSpace>,
    /// The size of every hole, sorted.
    pub hole_sizes: Vec<u64>,
    /// Bytes after a full defragmentation.
    pub full_after_bytes: u64,
    /// Shards after a full defragmentation.
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

mod extents;
mod mover;
mod plan;
pub mod smart;

use extents::WINDOW;
pub(crate) use extents::{each_extent_page, extents_page, Direction, Ext, ExtentCheck};
pub(crate) use mover::Mover;
use plan::{full_targets_from, Hole, HoleFinder, LogicalEnds, MaxTree};

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
    let quick = matches!(opts.mode, DefragMode::Quick { .. } | DefragMode::Smart);
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
        DefragMode::Smart => {
            progress.set_total(live);
            report.smart = Some(smart::run(&mut mover, index, window, holes.holes, limit)?);
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
