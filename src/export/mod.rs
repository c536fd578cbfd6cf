//! Getting data out of an archive: into a directory ([`extract()`]), or as a zip or
//! tar stream ([`zip`], [`tar`]) for tools that do not read barecat.
//!
//! All three take the same [`Selection`] of members (files, directories with their
//! subtrees, Python-style globs) and share the same rules:
//!
//! * a stored path that is absolute, has `..`, `.` or empty components, or a NUL is
//!   refused and reported, never rewritten into something else;
//! * every file's CRC32C is checked before its bytes leave the archive (files up to
//!   [`WHOLE_READ_LIMIT`] are checked before anything is written; see each writer for
//!   larger ones), and a file that fails is reported and left out;
//! * a corrupt index row (negative size, extent past the shard end, wrong types) is an
//!   error naming the row, and the others go on.
//!
//! Problems with single members are handed to a reporter callback and counted; only
//! errors that make going on pointless (the destination cannot be written, the index
//! cannot be read) end the operation.

pub mod compress;
pub mod extract;
pub mod select;
pub mod stream;
pub mod tar;
pub mod zip;

mod beneath;

pub use crate::core::archive::WHOLE_READ_LIMIT;
pub use extract::{extract, ExtractOptions, ExtractReport};
pub use select::{Row, Selection};
pub use stream::{export, export_to_file, ExportFormat, ExportOptions, ExportReport};

use crate::core::entry::Meta;
use crate::core::error::Error;

/// Receives the problems found with single members (reported, counted, skipped).
pub type Reporter<'a> = &'a (dyn Fn(&Error) + Sync);

/// Permission bits to restore from stored metadata: `0o777`, or `0o7777` (setuid,
/// setgid, sticky included) with `keep_special`. `None` when no mode is stored.
pub fn permissions(meta: &Meta, keep_special: bool) -> Option<u32> {
    let mask = if keep_special { 0o7777 } else { 0o777 };
    meta.mode.map(|m| m & mask)
}

/// Split nanoseconds since the epoch into whole seconds (rounded down) and the
/// remaining nanoseconds (0..1e9), also for times before 1970.
pub fn split_ns(ns: i64) -> (i64, u32) {
    (
        ns.div_euclid(1_000_000_000),
        ns.rem_euclid(1_000_000_000) as u32,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_split() {
        assert_eq!(split_ns(1_500_000_000_123), (1500, 123));
        assert_eq!(split_ns(-1), (-1, 999_999_999));
        assert_eq!(split_ns(0), (0, 0));
    }

    #[test]
    fn permission_masks() {
        let m = Meta {
            mode: Some(0o104755),
            ..Meta::default()
        };
        assert_eq!(permissions(&m, false), Some(0o755));
        assert_eq!(permissions(&m, true), Some(0o4755));
        assert_eq!(permissions(&Meta::default(), true), None);
    }
}
