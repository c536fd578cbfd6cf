//! Planning where files go: the targets of a full compaction (back to back in
//! address order), and the holes a quick compaction fills, found with a max-tree
//! over the hole sizes.

use super::*;

/// Where a full compaction puts every file (same order as `exts`). A file never
/// moves to a later place than where it is: when packing would put it later (only
/// possible after a shard that holds more than the limit), it stays and packing
/// goes on after it.
#[cfg(test)]
pub(super) fn full_targets(exts: &[Ext], limit: u64) -> Vec<(u64, u64)> {
    full_targets_from(exts, limit, &mut (0, 0))
}

/// `full_targets` of the files that follow those already placed, packing from
/// `at` (shard, write position), which moves on past them.
pub(super) fn full_targets_from(exts: &[Ext], limit: u64, at: &mut (u64, u64)) -> Vec<(u64, u64)> {
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
pub(super) struct LogicalEnds {
    pub(super) ends: Vec<u64>,
    pub(super) last: Option<u64>,
}

impl LogicalEnds {
    /// Ends for `nshards` shards at least.
    pub(super) fn new(nshards: usize) -> LogicalEnds {
        LogicalEnds {
            ends: vec![0; nshards],
            last: None,
        }
    }

    /// A file of `size` bytes at `offset` of `shard`.
    pub(super) fn add(&mut self, shard: u64, offset: u64, size: u64) {
        let s = shard as usize;
        if s >= self.ends.len() {
            self.ends.resize(s + 1, 0);
        }
        self.ends[s] = self.ends[s].max(offset + size);
        self.last = self.last.max(Some(shard));
    }
}

/// A range of a shard that no file refers to, before or between files.
#[derive(Debug, Clone, Copy)]
pub(super) struct Hole {
    pub(super) shard: u64,
    pub(super) start: u64,
    pub(super) len: u64,
}

#[cfg(test)]
pub(super) fn holes(exts: &[Ext]) -> Vec<Hole> {
    let mut f = HoleFinder::default();
    for e in exts {
        f.push(e);
    }
    f.holes
}

/// The holes before and between the files, fed in address order.
#[derive(Default)]
pub(super) struct HoleFinder {
    /// Shard and covered end of the files so far.
    pub(super) cur: Option<(u64, u64)>,
    pub(super) holes: Vec<Hole>,
}

impl HoleFinder {
    pub(super) fn push(&mut self, e: &Ext) {
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
pub(super) struct MaxTree {
    pub(super) n: usize,
    pub(super) t: Vec<u64>,
}

impl MaxTree {
    pub(super) fn new(values: impl ExactSizeIterator<Item = u64>) -> MaxTree {
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

    pub(super) fn set(&mut self, i: usize, v: u64) {
        let mut k = self.n + i;
        self.t[k] = v;
        while k > 1 {
            k /= 2;
            self.t[k] = self.t[2 * k].max(self.t[2 * k + 1]);
        }
    }

    /// Leftmost index below `end` whose value is at least `x`.
    pub(super) fn leftmost(&self, end: usize, x: u64) -> Option<usize> {
        self.find(1, 0, self.n, end, x)
    }

    pub(super) fn find(
        &self,
        node: usize,
        lo: usize,
        hi: usize,
        end: usize,
        x: u64,
    ) -> Option<usize> {
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
        // Limit 20: f0 f2 f3 f5 f6 packed into shard 0, f7 f8 into shard 1.
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
