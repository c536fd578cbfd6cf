//! Repairing an archive after an interrupted or foreign writer.
//!
//! A killed writer leaves bytes past the last committed file, and a foreign
//! writer (one that left `use_triggers` at 0, or skipped ancestors) can leave
//! directory statistics wrong; both are fixed through [`ArchiveWriter`], so a
//! repair is as crash-safe as any other write.

use std::path::Path;

use crate::core::error::Result;
use crate::core::writer::{ArchiveWriter, CreateMode, WriterOptions};

/// What [`repair`] changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RepairReport {
    /// Directory rows created or whose statistics were corrected.
    pub dir_rows_fixed: usize,
    /// Bytes of trailing garbage removed from the shards.
    pub garbage_bytes: u64,
}

/// Recompute the directory tree and its statistics from the files (creating missing
/// ancestors), make sure `use_triggers` is 1, and, with `trim`, cut the bytes an
/// interrupted writer left after the last file. Every file stays readable
/// throughout; the index changes in one transaction. The B-tree sidecar is
/// rewritten at the end when `sidecar` (removed at the start in any case).
pub fn repair(path: &Path, trim: bool, sidecar: bool) -> Result<RepairReport> {
    let opts = WriterOptions {
        sidecar,
        ..WriterOptions::with_mode(CreateMode::Append)
    };
    let mut w = ArchiveWriter::open(path, opts)?;
    let dir_rows_fixed = w.index().rebuild_statistics()?;
    let garbage_bytes = if trim { w.trim_garbage()? } else { 0 };
    w.finish()?;
    Ok(RepairReport {
        dir_rows_fixed,
        garbage_bytes,
    })
}
