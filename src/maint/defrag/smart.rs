//! Smart defragmentation (`barecat-defrag --smart`): give back all the space a full
//! compaction gives back, while moving as few bytes as a plan can tell.
//!
//! Python barecat's `--smart` packs every file in address order, like its full
//! defrag, copying runs of contiguous files at a time: every byte after the first
//! hole moves. A file need not move that far. Two plans end with no hole and no
//! trailing byte (so with every shard cut to its last file, the same space as a
//! full compaction):
//!
//! * **shift**: in each shard, close the holes by shifting the files after the
//!   shard's first hole towards its start; files stay in their shard;
//! * **fill, then shift**: first move files from the end of the archive into the
//!   leftmost earlier hole that holds them (as `--quick` does), until a file fits
//!   no hole before it; then shift as above what is left.
//!
//! Both are worked out first, without moving anything (the holes, one reverse scan
//! of the files, and a few sums over the shard/offset index), and the one that
//! moves fewer bytes is carried out. Neither moves more than packing would: a file
//! shifted lies after a hole of its shard, and packing moves every file after the
//! first hole. Moves go through the same `Mover` as the other modes, so the
//! crash safety is theirs: a file's bytes are copied and synced before its row is
//! committed, and nothing a committed row points at is overwritten.

use serde::Serialize;

use super::plan::{full_targets_from, Hole, MaxTree};
use super::{each_extent_page, extents_page, Direction, Ext, Mover};
use crate::core::error::Result;
use crate::core::index::Index;

/// What the smart defragmentation planned and did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SmartPlan {
    /// The plan carried out: `"shift"` or `"fill+shift"`.
    pub strategy: String,
    /// Bytes the shift plan would move.
    pub shift_bytes: u64,
    /// Bytes the fill-then-shift plan would move (filling, then shifting).
    pub fill_shift_bytes: u64,
    /// Bytes packing every file in address order (Python barecat's full and smart
    /// defrag) would move.
    pub packing_bytes: u64,
    /// Files moved into holes from the end (the fill plan).
    pub filled_files: u64,
    /// Bytes moved into holes from the end.
    pub filled_bytes: u64,
}

/// The fill simulated on the holes: which holes get how much, where it stops.
struct Fill {
    /// Bytes put into each hole.
    filled: Vec<u64>,
    files: u64,
    bytes: u64,
    /// The last file (in address order) that stays where it is.
    stop: Option<(u64, u64)>,
    /// Per shard, the lowest offset of a file moved out of it.
    vacated: Vec<(u64, u64)>,
}

/// Where the fill puts `e`: the leftmost hole before it that holds it.
fn fill_target(holes: &[Hole], tree: &MaxTree, e: &Ext) -> Option<usize> {
    let before = holes.partition_point(|h| (h.shard, h.start) < e.at());
    if before == 0 {
        return None;
    }
    tree.leftmost(before, e.size)
}

fn simulate_fill(index: &Index, window: usize, holes: &[Hole]) -> Result<Fill> {
    let mut holes = holes.to_vec();
    let mut tree = MaxTree::new(holes.iter().map(|h| h.len));
    let mut f = Fill {
        filled: vec![0; holes.len()],
        files: 0,
        bytes: 0,
        stop: None,
        vacated: Vec::new(),
    };
    let mut before = None;
    loop {
        let page = extents_page(index, before, window, Direction::Down)?;
        let full = page.len() == window;
        before = page.last().map(Ext::key);
        for e in page {
            if e.size == 0 {
                continue;
            }
            match fill_target(&holes, &tree, &e) {
                Some(k) => {
                    holes[k].start += e.size;
                    holes[k].len -= e.size;
                    tree.set(k, holes[k].len);
                    f.filled[k] += e.size;
                    f.files += 1;
                    f.bytes += e.size;
                    match f.vacated.iter_mut().find(|(s, _)| *s == e.shard) {
                        Some(v) => v.1 = v.1.min(e.offset),
                        None => f.vacated.push((e.shard, e.offset)),
                    }
                }
                None => {
                    f.stop = Some(e.at());
                    return Ok(f);
                }
            }
        }
        if !full {
            return Ok(f);
        }
    }
}

/// Bytes the shift plan moves, and packing, from one scan in address order.
fn shift_and_packing_bytes(index: &Index, window: usize, limit: u64) -> Result<(u64, u64)> {
    let mut shift = 0u64;
    let mut cur: Option<(u64, u64, bool)> = None; // shard, covered end, hole seen
    let mut at = (0, 0);
    let mut packing = 0u64;
    each_extent_page(index, window, |page| {
        for e in &page {
            if e.size == 0 {
                continue;
            }
            let (covered, mut hole) = match cur {
                Some((s, end, h)) if s == e.shard => (end, h),
                _ => (0, false),
            };
            if e.offset > covered {
                hole = true;
            }
            if hole {
                shift += e.size;
            }
            cur = Some((e.shard, covered.max(e.end()), hole));
        }
        let targets = full_targets_from(&page, limit, &mut at);
        for (t, e) in targets.iter().zip(&page) {
            if *t != e.at() {
                packing += e.size;
            }
        }
        Ok(())
    })?;
    Ok((shift, packing))
}

/// Bytes the shift after the fill moves.
fn shift_after_fill(index: &Index, holes: &[Hole], fill: &Fill) -> Result<u64> {
    let mut shards: Vec<u64> = holes.iter().map(|h| h.shard).collect();
    shards.extend(fill.vacated.iter().map(|v| v.0));
    shards.sort_unstable();
    shards.dedup();
    let mut total = 0u64;
    for s in shards {
        // The first byte of the shard that is free after the fill: the rest of a
        // hole not filled up, or the place of the first file moved out.
        let remnant = holes
            .iter()
            .zip(&fill.filled)
            .filter(|(h, f)| h.shard == s && **f < h.len)
            .map(|(h, f)| h.start + f)
            .next();
        let vacated = fill.vacated.iter().find(|v| v.0 == s).map(|v| v.1);
        let Some(free) = [remnant, vacated].into_iter().flatten().min() else {
            continue;
        };
        // Files moved into holes at or after it…
        total += holes
            .iter()
            .zip(&fill.filled)
            .filter(|(h, _)| h.shard == s && h.start >= free)
            .map(|(_, f)| *f)
            .sum::<u64>();
        // …and the files that stayed, after it.
        if let Some(stop) = fill.stop {
            if s <= stop.0 {
                total += index.bytes_in_shard_from(s, free, stop)?;
            }
        }
    }
    Ok(total)
}

/// Work out both plans without moving anything.
pub(super) fn plan(index: &Index, window: usize, holes: &[Hole], limit: u64) -> Result<SmartPlan> {
    let (shift, packing) = shift_and_packing_bytes(index, window, limit)?;
    let fill = simulate_fill(index, window, holes)?;
    let fill_shift = fill.bytes + shift_after_fill(index, holes, &fill)?;
    let use_fill = fill.files > 0 && fill_shift < shift;
    Ok(SmartPlan {
        strategy: if use_fill { "fill+shift" } else { "shift" }.into(),
        shift_bytes: shift,
        fill_shift_bytes: fill_shift,
        packing_bytes: packing,
        filled_files: if use_fill { fill.files } else { 0 },
        filled_bytes: if use_fill { fill.bytes } else { 0 },
    })
}

/// Move files from the end into the leftmost earlier hole that holds them, until
/// one fits none (the fill of [`plan`], for real).
fn fill(mover: &mut Mover<'_>, index: &Index, window: usize, mut holes: Vec<Hole>) -> Result<()> {
    let mut tree = MaxTree::new(holes.iter().map(|h| h.len));
    // Where each hole began: files found between that and the hole's start now
    // were put there by this fill (committed, the scan meets them again).
    let began: Vec<(u64, u64)> = holes.iter().map(|h| (h.shard, h.start)).collect();
    let mut before = None;
    loop {
        let page = extents_page(index, before, window, Direction::Down)?;
        let full = page.len() == window;
        before = page.last().map(Ext::key);
        for mut e in page {
            let k = began.partition_point(|b| *b <= e.at());
            if k > 0 && holes[k - 1].shard == e.shard && e.offset < holes[k - 1].start {
                continue;
            }
            if e.size == 0 {
                continue;
            }
            match fill_target(&holes, &tree, &e) {
                Some(k) => {
                    let to = (holes[k].shard, holes[k].start);
                    holes[k].start += e.size;
                    holes[k].len -= e.size;
                    tree.set(k, holes[k].len);
                    mover.add_move(&mut e, to);
                }
                None => {
                    mover.flush()?;
                    return Ok(());
                }
            }
            if mover.batch_due() {
                mover.flush()?;
            }
        }
        // A commit per page: the next pages meet the files moved here.
        mover.flush()?;
        if !full {
            return Ok(());
        }
    }
}

/// In each shard, shift the files to close its holes (files stay in their shard;
/// a file never moves later).
fn shift(mover: &mut Mover<'_>, index: &Index, window: usize) -> Result<()> {
    let mut at: (u64, u64) = (u64::MAX, 0);
    each_extent_page(index, window, |mut page| {
        let targets: Vec<(u64, u64)> = page
            .iter()
            .map(|e| {
                if e.shard != at.0 {
                    at = (e.shard, 0);
                }
                let t = (e.shard, at.1.min(e.offset));
                at.1 = t.1 + e.size;
                t
            })
            .collect();
        mover.full(&mut page, &targets)?;
        mover.flush()
    })
}

/// Plan, then carry out the cheaper plan with `mover`.
pub(super) fn run(
    mover: &mut Mover<'_>,
    index: &Index,
    window: usize,
    holes: Vec<Hole>,
    limit: u64,
) -> Result<SmartPlan> {
    let p = plan(index, window, &holes, limit)?;
    if p.strategy == "fill+shift" {
        fill(mover, index, window, holes)?;
    }
    shift(mover, index, window)?;
    Ok(p)
}
