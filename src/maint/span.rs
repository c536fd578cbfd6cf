//! Grouping files that sit close together in one shard, so that they are read with
//! one positioned read (holes between them read through). Used by `verify` (a
//! checksum job per span) and `merge` (a copy per span).

use crate::core::entry::FileInfo;

/// How large a span may grow.
pub(crate) struct SpanLimits {
    /// Most files in one span: empty and tiny files add no bytes to it, and a span of
    /// a million of them would hold a million rows in memory.
    pub files: usize,
    /// Largest hole between two files that is read through.
    pub hole: u64,
    /// Most bytes from the start of the first file to the end of the last.
    pub bytes: u64,
}

/// A contiguous byte range of one shard holding some files.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    pub shard: u64,
    pub start: u64,
    pub end: u64,
    pub files: usize,
}

impl Span {
    /// The span of `fi` alone.
    pub fn of(fi: &FileInfo) -> Span {
        Span {
            shard: fi.shard,
            start: fi.offset,
            end: fi.end(),
            files: 1,
        }
    }

    /// Take `fi` in if it comes at or after the span's start, in the same shard,
    /// within the limits; false (and the span unchanged) otherwise.
    pub fn add(&mut self, fi: &FileInfo, lim: &SpanLimits) -> bool {
        let fits = fi.shard == self.shard
            && self.files < lim.files
            && fi.offset >= self.start
            && fi.offset <= self.end.saturating_add(lim.hole)
            && fi.end().max(self.end) - self.start <= lim.bytes;
        if fits {
            self.end = self.end.max(fi.end());
            self.files += 1;
        }
        fits
    }

    pub fn bytes(&self) -> u64 {
        self.end - self.start
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(shard: u64, offset: u64, size: u64) -> FileInfo {
        FileInfo {
            path: format!("f{offset}"),
            shard,
            offset,
            size,
            crc32c: Some(0),
            meta: Default::default(),
        }
    }

    const LIM: SpanLimits = SpanLimits {
        files: 3,
        hole: 10,
        bytes: 100,
    };

    #[test]
    fn grows_within_its_limits_only() {
        let mut s = Span::of(&file(0, 0, 10));
        assert!(
            s.add(&file(0, 20, 10), &LIM),
            "a hole of 10 is read through"
        );
        assert!(!s.add(&file(0, 41, 5), &LIM), "a hole of 11 is not");
        assert!(!s.add(&file(1, 30, 5), &LIM), "another shard");
        assert!(!s.add(&file(0, 30, 71), &LIM), "101 bytes");
        assert!(s.add(&file(0, 30, 70), &LIM));
        assert_eq!((s.start, s.end, s.files, s.bytes()), (0, 100, 3, 100));
        assert!(!s.add(&file(0, 100, 0), &LIM), "a fourth file");
        let mut s = Span::of(&file(0, 50, 10));
        assert!(!s.add(&file(0, 40, 5), &LIM), "before the start");
    }
}
