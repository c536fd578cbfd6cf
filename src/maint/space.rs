//! Where the bytes of an archive are: per shard, the live bytes (referenced by file
//! rows), the holes between and before files, and the trailing bytes after the last
//! file. Holes and trailing bytes are what a defragmentation can give back.
//!
//! [`SpaceScanner`] takes the extents of the files in address order (shard, offset)
//! and the shard lengths on disk, and adds it all up in one pass.

use serde::Serialize;

/// The space use of one shard.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ShardSpace {
    /// Shard number.
    pub shard: u64,
    /// Does the shard file exist (and can its length be read)?
    pub present: bool,
    /// Is the shard a symbolic link (an archive merged with `--symlink`, or
    /// wrapped around a tar or zip)? Its holes and trailing bytes belong to the
    /// linked file and are not counted as reclaimable.
    pub symlink: bool,
    /// Length of the shard file on disk (0 when missing).
    pub length: u64,
    /// Number of files stored in it.
    pub files: u64,
    /// Sum of the sizes of its files.
    pub live_bytes: u64,
    /// One past the last byte any file of the shard refers to (0 without files).
    pub logical_end: u64,
    /// Unreferenced ranges before or between files.
    pub holes: u64,
    /// Bytes in those ranges.
    pub hole_bytes: u64,
    /// Bytes after the logical end.
    pub trailing_bytes: u64,
}

/// Totals over all shards.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SpaceSummary {
    /// Number of shard files.
    pub shards: u64,
    /// Sum of the shard lengths on disk.
    pub physical_bytes: u64,
    /// Sum of the file sizes.
    pub live_bytes: u64,
    /// Number of holes in the archive's own shards (not in linked ones).
    pub holes: u64,
    /// Their total size.
    pub hole_bytes: u64,
    /// Bytes after the logical end of the archive's own shards.
    pub trailing_bytes: u64,
    /// Holes plus trailing bytes: what a full defragmentation frees at most.
    pub reclaimable_bytes: u64,
    /// Bytes of linked shards that no file refers to (the headers of a wrapped
    /// tar, the holes of another archive): not this archive's to give back.
    pub linked_unused_bytes: u64,
    /// live bytes / physical bytes (1 for an empty archive).
    pub utilization: f64,
}

/// Accumulates the space use of the shards from the extents of the files, visited in
/// address order.
#[derive(Debug)]
pub struct SpaceScanner {
    shards: Vec<ShardSpace>,
    /// Index into `shards` of the shard being scanned.
    cur: Option<usize>,
    /// End of the bytes covered by non-empty files of the current shard.
    covered_end: u64,
    /// Sizes of all holes, when asked for.
    hole_sizes: Option<Vec<u64>>,
}

impl SpaceScanner {
    /// `shards`: every shard file on disk as (number, length, is_symlink).
    pub fn new(shards: impl IntoIterator<Item = (u64, u64, bool)>) -> SpaceScanner {
        let mut v: Vec<ShardSpace> = shards
            .into_iter()
            .map(|(shard, length, symlink)| ShardSpace {
                shard,
                present: true,
                symlink,
                length,
                ..ShardSpace::default()
            })
            .collect();
        v.sort_by_key(|s| s.shard);
        SpaceScanner {
            shards: v,
            cur: None,
            covered_end: 0,
            hole_sizes: None,
        }
    }

    /// Also keep the size of every hole (for a size distribution).
    pub fn collect_holes(mut self) -> SpaceScanner {
        self.hole_sizes = Some(Vec::new());
        self
    }

    fn close_current(&mut self) {
        if let Some(i) = self.cur.take() {
            let s = &mut self.shards[i];
            if s.logical_end > self.covered_end {
                // Empty files placed after the last byte of data.
                add_hole(s, &mut self.hole_sizes, s.logical_end - self.covered_end);
            }
        }
        self.covered_end = 0;
    }

    fn enter(&mut self, shard: u64) -> usize {
        if let Some(i) = self.cur {
            if self.shards[i].shard == shard {
                return i;
            }
        }
        self.close_current();
        let i = match self.shards.binary_search_by_key(&shard, |s| s.shard) {
            Ok(i) => i,
            Err(i) => {
                self.shards.insert(
                    i,
                    ShardSpace {
                        shard,
                        ..ShardSpace::default()
                    },
                );
                i
            }
        };
        self.cur = Some(i);
        i
    }

    /// Account one file. Files must come in address order. Returns true when the
    /// (non-empty) file overlaps bytes of an earlier non-empty file of the shard.
    pub fn push(&mut self, shard: u64, offset: u64, size: u64) -> bool {
        let i = self.enter(shard);
        let s = &mut self.shards[i];
        s.files += 1;
        s.live_bytes += size;
        let end = offset.saturating_add(size);
        s.logical_end = s.logical_end.max(end);
        if size == 0 {
            return false;
        }
        let overlaps = offset < self.covered_end;
        if offset > self.covered_end {
            add_hole(s, &mut self.hole_sizes, offset - self.covered_end);
        }
        self.covered_end = self.covered_end.max(end);
        overlaps
    }

    /// Finish: the per-shard figures (including shards that files refer to but that
    /// do not exist, with `present == false`), the totals and, when collected, the
    /// hole sizes.
    pub fn finish(mut self) -> (Vec<ShardSpace>, SpaceSummary, Vec<u64>) {
        self.close_current();
        let mut sum = SpaceSummary::default();
        for s in &mut self.shards {
            if s.present {
                s.trailing_bytes = s.length.saturating_sub(s.logical_end);
                sum.shards += 1;
                sum.physical_bytes += s.length;
            }
            sum.live_bytes += s.live_bytes;
            if s.symlink {
                sum.linked_unused_bytes += s.hole_bytes + s.trailing_bytes;
                continue;
            }
            sum.holes += s.holes;
            sum.hole_bytes += s.hole_bytes;
            sum.trailing_bytes += s.trailing_bytes;
        }
        sum.reclaimable_bytes = sum.hole_bytes + sum.trailing_bytes;
        sum.utilization = utilization(sum.live_bytes, sum.physical_bytes);
        (self.shards, sum, self.hole_sizes.unwrap_or_default())
    }
}

fn add_hole(s: &mut ShardSpace, sizes: &mut Option<Vec<u64>>, n: u64) {
    s.holes += 1;
    s.hole_bytes += n;
    if let Some(v) = sizes {
        v.push(n);
    }
}

/// live / physical, 1 when nothing is stored.
pub fn utilization(live: u64, physical: u64) -> f64 {
    if physical == 0 {
        1.0
    } else {
        live as f64 / physical as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_example() {
        // docs/FORMAT.md §8.5: shard 0 (15 bytes) f0@0+3, hole 3..7, f2@7+5, f3@12+3; shard 1
        // (20 bytes) f5@0+5 f6@5+3 f7@8+4 f8@12+5, 3 trailing bytes.
        let mut s = SpaceScanner::new([(0, 15, false), (1, 20, false)]).collect_holes();
        for (sh, off, size) in [
            (0, 0, 3),
            (0, 7, 5),
            (0, 12, 3),
            (1, 0, 5),
            (1, 5, 3),
            (1, 8, 4),
            (1, 12, 5),
        ] {
            assert!(!s.push(sh, off, size));
        }
        let (shards, sum, holes) = s.finish();
        assert_eq!(holes, vec![4]);
        assert_eq!(shards[0].hole_bytes, 4);
        assert_eq!(shards[1].trailing_bytes, 3);
        assert_eq!(sum.physical_bytes, 35);
        assert_eq!(sum.live_bytes, 28);
        assert_eq!(sum.reclaimable_bytes, 7);
        assert!((sum.utilization - 0.8).abs() < 1e-9);
    }

    #[test]
    fn overlaps_and_empty_files() {
        let mut s = SpaceScanner::new([(0, 10, false)]);
        assert!(!s.push(0, 0, 4));
        assert!(!s.push(0, 2, 0)); // an empty file inside another one is fine
        assert!(s.push(0, 3, 2)); // overlaps 0..4
        assert!(!s.push(0, 10, 0)); // empty file after the data
        assert!(!s.push(2, 0, 1)); // a shard that does not exist
        let (shards, sum, _) = s.finish();
        assert_eq!(shards[0].logical_end, 10);
        assert_eq!(shards[0].hole_bytes, 5);
        assert_eq!(shards[0].trailing_bytes, 0);
        assert!(!shards[1].present);
        assert_eq!(sum.shards, 1);
    }
}
