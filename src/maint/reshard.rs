//! Resharding: repack an archive to a new shard size limit, in place.
//!
//! The files are packed in address order with the writer's rule (a file starts a
//! new shard when it would cross the limit), which is where Python barecat's
//! `reshard` puts them too. Files that are already where the packing puts them are
//! not copied. A file larger than the new limit is refused before anything is done.
//!
//! Memory is flat in the number of files: the plan and the moves go page by page of
//! the address-ordered scan (as a full defragmentation does), keeping per page
//! only its first row, length and packing state, and per destination shard a few
//! counters.
//!
//! # Crash safety
//!
//! The moves are the defragmenter's ([`crate::maint::defrag`]): bytes are copied and
//! `fdatasync`ed before the rows that point at them are committed, and no byte a
//! committed row points at is overwritten. That needs every file's destination to
//! be at or before its place, or in space no file uses. So a destination shard that
//! some file would reach by moving *later* (a smaller limit spreads the files over
//! more shards) is written as a new shard file after all existing ones; once every
//! file is in place, such a shard gets its final number by a hard link over the
//! (by then unused) shard of that number, renamed into place, and one transaction
//! that renumbers its rows; the shards after the last destination are removed last,
//! from the highest number down. At every instant the shards are numbered from 0
//! without a gap and every row points at its bytes: a kill leaves a readable
//! archive, and running `reshard` again finishes the job, with the same result.
//!
//! An archive with a shard that is a symbolic link (merged with `--symlink`,
//! wrapped around a tar or zip) is refused: its bytes are not this archive's to
//! rewrite.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::core::error::{Error, IoContext, Result};
use crate::core::format::layout::Layout;
use crate::core::output::sync_dir;
use crate::core::progress::Progress;
use crate::core::shards::truncate_unless_mapped;
use crate::core::writer::{ArchiveWriter, CreateMode, WriterOptions};
use crate::maint::defrag::{
    each_extent_page, extents_page, Direction, Ext, ExtentCheck, Mover, Steps, Tuning,
};

/// Options of [`reshard`].
#[derive(Debug, Clone)]
pub struct ReshardOptions {
    /// The new shard size limit (at least 1).
    pub limit: u64,
    /// Sleep this long after each step (for tests that interrupt it).
    pub step_delay: Option<Duration>,
    /// End the process abruptly after this many steps, as a crash would (tests).
    pub crash_after_steps: Option<u64>,
    /// Step sizes of the moves (those of defrag).
    pub tuning: Tuning,
    /// Write the B-tree sidecar when done.
    pub sidecar: bool,
}

impl ReshardOptions {
    /// Options for the limit `limit` with the defaults: no delays, no crash, sidecar
    /// written.
    pub fn new(limit: u64) -> ReshardOptions {
        ReshardOptions {
            limit,
            step_delay: None,
            crash_after_steps: None,
            tuning: Tuning::default(),
            sidecar: true,
        }
    }
}

/// What [`reshard`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ReshardReport {
    /// Files in the archive.
    pub files: u64,
    /// Their total size.
    pub bytes: u64,
    /// The shard size limit before.
    pub limit_before: u64,
    /// The shard size limit after.
    pub limit_after: u64,
    /// Shards before.
    pub shards_before: u64,
    /// Shards after.
    pub shards_after: u64,
    /// Bytes the shards took before.
    pub physical_before: u64,
    /// Bytes the shards take after.
    pub physical_after: u64,
    /// Files copied to a new place (the others stayed where they were).
    pub moved_files: u64,
    /// Bytes copied to a new place.
    pub moved_bytes: u64,
    /// The archive's record table, which the moves made stale: rebuilt or removed.
    pub records_table: Option<crate::records::table::TableAction>,
}

/// Where the packing puts every file (same order as `exts`, which is in address
/// order): the writer's rule, a new shard when a non-empty file would cross the
/// limit.
#[cfg(test)]
fn pack(exts: &[Ext], limit: u64) -> Vec<(u64, u64)> {
    pack_from(exts, limit, &mut (0, 0))
}

/// `pack` of files that follow those already packed, from `at` (destination,
/// write position), which moves on past them: the packing of a page of the
/// address-ordered scan.
fn pack_from(exts: &[Ext], limit: u64, at: &mut (u64, u64)) -> Vec<(u64, u64)> {
    exts.iter()
        .map(|e| {
            if e.size > 0 && at.1 > 0 && at.1.saturating_add(e.size) > limit {
                at.0 += 1;
                at.1 = 0;
            }
            let place = *at;
            at.1 += e.size;
            place
        })
        .collect()
}

/// A page of the address-ordered scan as step 1 of the moves left it: the key of
/// its first row, its number of rows, and the packing state before it.
type PageMark = ((u64, u64, i64), usize, (u64, u64));

/// The name of the hard link made while a new shard takes its final number.
fn link_temp(layout: &Layout) -> PathBuf {
    let base = layout.base();
    let name = base
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "archive".into());
    base.with_file_name(format!(".{name}.reshard-link"))
}

/// Repack the archive at `path` to shards of at most `opts.limit` bytes.
pub fn reshard(path: &Path, opts: &ReshardOptions, progress: &Progress) -> Result<ReshardReport> {
    if opts.limit == 0 {
        return Err(Error::InvalidOperation(
            "the shard size limit must be at least 1 byte".into(),
        ));
    }
    let mut writer = ArchiveWriter::open(
        path,
        WriterOptions {
            sidecar: opts.sidecar,
            ..WriterOptions::with_mode(CreateMode::Append)
        },
    )?;
    let layout = writer.layout().clone();
    let temp = link_temp(&layout);
    if std::fs::symlink_metadata(&temp).is_ok() {
        std::fs::remove_file(&temp).at(&temp)?;
    }
    let limit = opts.limit;
    let mut report = ReshardReport {
        limit_before: writer.shard_size_limit(),
        limit_after: limit,
        ..ReshardReport::default()
    };
    let index = writer.index();
    // Everything goes page by page of the address-ordered scan (memory flat in the
    // number of files): first the largest file and the last shard in use…
    let window = opts.tuning.window_files.max(1);
    let mut big: Option<Ext> = None;
    let mut last_used: Option<u64> = None;
    each_extent_page(index, window, |page| {
        for e in &page {
            if e.size > limit && big.is_none_or(|b| e.size >= b.size) {
                big = Some(*e);
            }
            last_used = last_used.max(Some(e.shard));
        }
        Ok(())
    })?;
    if let Some(big) = big {
        let name = index
            .file_by_id(big.rowid)?
            .map(|f| f.path)
            .unwrap_or_default();
        // Nothing changed: the sidecar removed when the writer opened goes back.
        writer.restore_sidecar();
        return Err(Error::InvalidOperation(format!(
            "{}: {} ({} bytes) is larger than the new shard size limit of {limit} bytes \
             (a file cannot span shards); nothing was changed",
            path.display(),
            crate::core::path::printable(&name),
            big.size
        )));
    }
    // Shards after the last used one hold nothing (an interrupted run leaves
    // them): removed first, from the top.
    for sh in layout.contiguous_shards()?.iter().rev() {
        if last_used.is_some_and(|l| sh.number <= l) || sh.number == 0 {
            break;
        }
        std::fs::remove_file(&sh.path).at(&sh.path)?;
    }
    // …then the plan: the files checked and packed, and per destination shard
    // whether bytes are written into it, its bytes, and those of its files that
    // are not already where the packing puts them.
    let mut check = ExtentCheck::new(&layout)?;
    let mut at = (0u64, 0u64);
    let mut writes: Vec<bool> = Vec::new();
    let mut dest_bytes: Vec<u64> = Vec::new();
    let mut misplaced_bytes: Vec<u64> = Vec::new();
    let mut later = false;
    each_extent_page(index, window, |page| {
        for e in &page {
            check.check(&layout, e)?;
        }
        let targets = pack_from(&page, limit, &mut at);
        for (e, t) in page.iter().zip(&targets) {
            let d = t.0 as usize;
            if writes.len() <= d {
                writes.resize(d + 1, false);
                dest_bytes.resize(d + 1, 0);
                misplaced_bytes.resize(d + 1, 0);
            }
            if *t != e.at() && e.size > 0 {
                writes[d] = true;
            }
            if *t != e.at() {
                misplaced_bytes[d] += e.size;
            }
            dest_bytes[d] += e.size;
            later |= *t > e.at();
            report.files += 1;
            report.bytes += e.size;
        }
        Ok(())
    })?;
    let shards = check.shards;
    report.shards_before = shards.len() as u64;
    report.physical_before = shards.iter().map(|s| s.1).sum();
    let ndest = at.0 as usize + 1;
    writes.resize(ndest, false);
    dest_bytes.resize(ndest, 0);
    misplaced_bytes.resize(ndest, 0);
    // Which destination shards get bytes written into them, and whether one of
    // them cannot be written in place: a file would move later than where it is
    // (a smaller limit), the shard file has another name too (a hard link left by
    // an interrupted run), or it does not exist yet.
    let shared = |d: usize| {
        shards.get(d).is_none_or(|sh| {
            std::fs::metadata(&sh.0).is_ok_and(|m| std::os::unix::fs::MetadataExt::nlink(&m) > 1)
        })
    };
    let must_fresh = later || (0..ndest).any(|d| writes[d] && shared(d));
    // Without new shards, every destination is written in place, the files moving
    // only to earlier places (the defragmenter's pass). With them, every
    // destination that gets bytes becomes a new shard, except shard 0 when it can be
    // compacted in place: its files come first, so its new places never cover the
    // bytes of a file of another destination.
    let fresh: Vec<bool> = (0..ndest)
        .map(|d| must_fresh && writes[d] && (d > 0 || shared(0)))
        .collect();
    let mut physical: Vec<u64> = Vec::with_capacity(ndest);
    let mut next = shards.len() as u64;
    for (d, is_fresh) in fresh.iter().enumerate() {
        if *is_fresh {
            physical.push(next);
            next += 1;
        } else {
            physical.push(d as u64);
        }
    }
    let steps = Steps {
        delay: opts.step_delay,
        crash_after: opts.crash_after_steps,
        done: std::cell::Cell::new(0),
    };
    crate::maint::fds::ensure_open_files(next as usize)?;
    let mut files = Vec::with_capacity(next as usize);
    let mut paths = Vec::with_capacity(next as usize);
    for (p, _, _) in &shards {
        files.push(OpenOptions::new().read(true).write(true).open(p).at(p)?);
        paths.push(p.clone());
    }
    for n in shards.len() as u64..next {
        let p = layout.shard_path(n);
        files.push(
            OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&p)
                .at(&p)?,
        );
        paths.push(p);
    }
    if next > shards.len() as u64 {
        // The new shards must outlive a crash before any row points into them.
        sync_dir(&layout.shard_path(0))?;
        steps.step();
    }
    // A file of a new shard moves (all its bytes); another one where it is not
    // already at its place.
    progress.set_total(
        (0..ndest)
            .map(|d| {
                if fresh[d] {
                    dest_bytes[d]
                } else {
                    misplaced_bytes[d]
                }
            })
            .sum(),
    );
    let place = |t: (u64, u64)| (physical[t.0 as usize], t.1);
    let mut mover = Mover::new(index, files, paths, &steps, opts.tuning, progress);
    // 1. In place, in address order (a file only ever moves to an earlier place,
    // so the pages after the current one are untouched). Each page's first row
    // (where it is now), length and packing state are kept for step 2.
    let mut pages: Vec<PageMark> = Vec::new();
    let mut at = (0u64, 0u64);
    each_extent_page(index, window, |mut page| {
        let from = at;
        let targets = pack_from(&page, limit, &mut at);
        let in_place: Vec<(u64, u64)> = page
            .iter()
            .zip(&targets)
            .map(|(e, t)| {
                if fresh[t.0 as usize] {
                    e.at()
                } else {
                    place(*t)
                }
            })
            .collect();
        mover.full(&mut page, &in_place)?;
        mover.flush()?;
        pages.push((page[0].key(), page.len(), from));
        Ok(())
    })?;
    // 2. Into the new shards, from the last file back: at every commit the files
    // already moved are the last ones in address order, so that the order of the
    // files (which decides the packing) is the same after a kill, and running the
    // command again gives the same result. The pages of step 1 are read again from
    // their first rows: the files moved into new shards lie after all of them.
    for &(first, len, from) in pages.iter().rev() {
        let mut page = extents_page(index, Some(first), len, Direction::UpFrom)?;
        let targets = pack_from(&page, limit, &mut from.clone());
        for (e, t) in page.iter_mut().zip(&targets).rev() {
            if fresh[t.0 as usize] {
                mover.add_move(e, place(*t));
                if mover.batch_due() {
                    mover.flush()?;
                }
            }
        }
        // A commit per page at least: a batch holds at most a page of rows.
        mover.flush()?;
    }
    mover.flush()?;
    (report.moved_files, report.moved_bytes) = mover.moved();
    drop(mover);
    // The new shards take their final numbers.
    for (d, &p) in physical.iter().enumerate() {
        if p != d as u64 {
            renumber(&layout, index, p, d as u64, &temp, &steps)?;
        }
    }
    // Cut every destination shard to its last file; remove the shards after them.
    let (after, count) = finish_shards(&layout, index, ndest as u64, &steps)?;
    report.physical_after = after;
    report.shards_after = count;
    writer.set_shard_size_limit(limit)?;
    writer.finish()?;
    if report.moved_files > 0 {
        report.records_table = crate::records::table::after_change(path)?;
    }
    Ok(report)
}

/// Give shard `from`, which holds every file of destination `to`, the number `to`:
/// a hard link to it replaces the unused shard `to` (or one is made by copying,
/// where the file system has no hard links), then its rows are renumbered in one
/// transaction. Shard `from` itself is removed later, with the other shards after
/// the last destination.
fn renumber(
    layout: &Layout,
    index: &crate::core::index::Index,
    from: u64,
    to: u64,
    temp: &Path,
    steps: &Steps,
) -> Result<()> {
    let busy = index.count_in_shard(to)?;
    if busy != 0 {
        return Err(Error::InvalidOperation(format!(
            "{}: cannot renumber shard {from} to {to}: {busy} file(s) still in shard {to}",
            layout.base().display()
        )));
    }
    let (src, dst) = (layout.shard_path(from), layout.shard_path(to));
    if std::fs::hard_link(&src, temp).is_err() {
        let _ = std::fs::remove_file(temp);
        std::fs::copy(&src, temp).at(temp)?;
        File::open(temp).and_then(|f| f.sync_all()).at(temp)?;
    }
    crate::core::output::rename_into_place(temp, &dst)?;
    steps.step();
    index.begin_immediate()?;
    let r = index.renumber_shard(from, to).and_then(|_| index.commit());
    if let Err(e) = r {
        let _ = index.rollback();
        return Err(e);
    }
    steps.step();
    Ok(())
}

/// Remove the shards numbered `count` and above (from the highest down, so that
/// the numbering never has a gap) and cut the others to their last file. Returns
/// the bytes and the number of the shards left.
fn finish_shards(
    layout: &Layout,
    index: &crate::core::index::Index,
    count: u64,
    steps: &Steps,
) -> Result<(u64, u64)> {
    let usage = index.shard_usage()?;
    if let Some(u) = usage.iter().find(|u| u.shard >= count) {
        return Err(Error::InvalidOperation(format!(
            "{}: shard {} still holds files after resharding",
            layout.base().display(),
            u.shard
        )));
    }
    let present = layout.contiguous_shards()?;
    let mut removed = false;
    for s in present.iter().rev().filter(|s| s.number >= count) {
        std::fs::remove_file(&s.path).at(&s.path)?;
        removed = true;
        steps.step();
    }
    if removed {
        sync_dir(&layout.shard_path(0))?;
    }
    let mut total = 0;
    for s in present.iter().filter(|s| s.number < count) {
        let end = usage
            .iter()
            .find(|u| u.shard == s.number)
            .map_or(0, |u| u.logical_end);
        let f = OpenOptions::new().write(true).open(&s.path).at(&s.path)?;
        let len = f.metadata().at(&s.path)?.len();
        // A shard a reader has memory-mapped is not cut under it (that would kill
        // the reader): its tail stays as trailing bytes for a later defrag.
        if len > end && truncate_unless_mapped(&f, &s.path, end)? {
            f.sync_all().at(&s.path)?;
            steps.step();
            total += end;
        } else {
            total += len;
        }
    }
    Ok((total, present.len().min(count as usize) as u64))
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
    fn packing_follows_the_spec_example() {
        // Limit 12 on the example of the defrag tests gives shards of 11, 12 and 5
        // bytes.
        let exts = [
            ext(0, 0, 3),
            ext(0, 7, 5),
            ext(0, 12, 3),
            ext(1, 0, 5),
            ext(1, 5, 3),
            ext(1, 8, 4),
            ext(1, 12, 5),
        ];
        let t = pack(&exts, 12);
        assert_eq!(
            t,
            vec![(0, 0), (0, 3), (0, 8), (1, 0), (1, 5), (1, 8), (2, 0)]
        );
        // An empty file at the limit stays in its shard; a file ending exactly at
        // the limit too.
        let t = pack(
            &[ext(0, 0, 6), ext(0, 6, 6), ext(0, 12, 0), ext(0, 12, 1)],
            12,
        );
        assert_eq!(t, vec![(0, 0), (0, 6), (0, 12), (1, 0)]);
    }
}
