//! Inode numbers from row ids.
//!
//! Why: a mount of a million-file archive must hand out stable inode numbers without
//! keeping a table of them. Row ids of `files` and `dirs` are stable while the row
//! lives (renames update the row in place; a rewritten file keeps its id), so the
//! inode number is computed from the row id and the table: files get odd numbers,
//! directories even ones, and 1 is the root (FUSE's fixed root inode), whatever the
//! root row's id. Row ids below 1 (only possible in a hand-made index) have no inode
//! and are left out of listings.

/// The root directory's inode number.
pub const ROOT: u64 = 1;

/// What an inode number names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Node {
    /// The archive root (inode 1).
    Root,
    /// The file with this row id.
    File(i64),
    /// The directory with this row id.
    Dir(i64),
}

/// The inode number of the file with row id `id` (`None` for ids below 1).
pub fn file(id: i64) -> Option<u64> {
    (1..i64::MAX / 2).contains(&id).then(|| id as u64 * 2 + 1)
}

/// The inode number of the directory with row id `id`; `root_id` is the root row's.
pub fn dir(id: i64, root_id: i64) -> Option<u64> {
    if id == root_id {
        return Some(ROOT);
    }
    (1..i64::MAX / 2).contains(&id).then(|| id as u64 * 2 + 2)
}

/// What inode number `ino` names (`None` for 0).
pub fn node(ino: u64) -> Option<Node> {
    match ino {
        0 => None,
        ROOT => Some(Node::Root),
        n if n % 2 == 1 => Some(Node::File(((n - 1) / 2) as i64)),
        n => Some(Node::Dir(((n - 2) / 2) as i64)),
    }
}

/// Directory offsets (`readdir` cookies): where a listing resumes. 0 is the start;
/// after `.` and `..` come the subdirectories, then the files, each in row-id order;
/// the cookie of an entry encodes its table and row id, so the next call resumes
/// with one index query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cookie {
    /// Nothing listed yet.
    Start,
    /// `.` was listed.
    AfterDot,
    /// `..` was listed.
    AfterDotDot,
    /// Subdirectories up to this row id were listed.
    AfterDir(i64),
    /// Files up to this row id were listed.
    AfterFile(i64),
    /// Everything was listed.
    End,
}

impl Cookie {
    /// The cookie as the `u64` offset FUSE hands back.
    pub fn encode(self) -> u64 {
        match self {
            Cookie::Start => 0,
            Cookie::AfterDot => 1,
            Cookie::AfterDotDot => 2,
            Cookie::AfterDir(id) => ((id as u64) << 2) | 1,
            Cookie::AfterFile(id) => ((id as u64) << 2) | 2,
            Cookie::End => u64::MAX,
        }
    }

    /// The cookie of a `u64` offset (an unknown one reads as the end of the listing).
    pub fn decode(v: u64) -> Cookie {
        match v {
            0 => Cookie::Start,
            1 => Cookie::AfterDot,
            2 => Cookie::AfterDotDot,
            u64::MAX => Cookie::End,
            v if v & 3 == 1 => Cookie::AfterDir((v >> 2) as i64),
            v if v & 3 == 2 => Cookie::AfterFile((v >> 2) as i64),
            _ => Cookie::End,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inode_numbers_round_trip() {
        for id in [1i64, 2, 3, 1000, 1 << 40] {
            assert_eq!(node(file(id).unwrap()), Some(Node::File(id)));
            assert_eq!(node(dir(id, 7).unwrap()), Some(Node::Dir(id)));
            assert_ne!(file(id), dir(id, 7));
        }
        assert_eq!(dir(7, 7), Some(ROOT));
        assert_eq!(node(ROOT), Some(Node::Root));
        assert_eq!(file(0), None);
        assert_eq!(file(-5), None);
        assert_eq!(dir(0, 1), None);
        assert_eq!(node(0), None);
    }

    #[test]
    fn cookies_round_trip() {
        for c in [
            Cookie::Start,
            Cookie::AfterDot,
            Cookie::AfterDotDot,
            Cookie::AfterDir(1),
            Cookie::AfterDir(123456),
            Cookie::AfterFile(1),
            Cookie::AfterFile(99),
            Cookie::End,
        ] {
            assert_eq!(Cookie::decode(c.encode()), c);
        }
    }
}
