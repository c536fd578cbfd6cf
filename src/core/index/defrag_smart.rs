//! The query of the smart defragmentation's planner ([`crate::maint::defrag::smart`]).
//! It lives here because every SQL statement lives with the index.

use super::Index;
use crate::core::error::{Result, SqlContext};

impl Index {
    /// Bytes of the files of `shard` at `from` or after it, up to and including the
    /// file at `upto` (shard, offset) in address order (the shard/offset index).
    pub(crate) fn bytes_in_shard_from(
        &self,
        shard: u64,
        from: u64,
        upto: (u64, u64),
    ) -> Result<u64> {
        let n: i64 = self
            .conn
            .prepare_cached(
                "SELECT coalesce(sum(size), 0) FROM files WHERE shard = ?1 AND offset >= ?2 \
                 AND (shard < ?3 OR (shard = ?3 AND offset <= ?4))",
            )
            .at(&self.path)?
            .query_row(
                rusqlite::params![shard as i64, from as i64, upto.0 as i64, upto.1 as i64],
                |r| r.get(0),
            )
            .at(&self.path)?;
        Ok(n.max(0) as u64)
    }
}
