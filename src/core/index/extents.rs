//! File extents as stored, for the record tables ([`crate::records`]): every
//! file's place in path or address order in one statement, a file's place by its
//! path, and whether a place still holds a file with a given CRC. The values are
//! handed over as stored (only their type is checked), since a record table judges
//! the ranges itself.

use rusqlite::types::ValueRef;

use super::Index;
use crate::core::error::{Error, Result, SqlContext};

/// A file's place and CRC as stored: integers, not range-checked (a NULL shard or
/// offset is -1, a NULL size 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawExtent {
    /// The shard number (-1 for NULL).
    pub shard: i64,
    /// The offset in the shard (-1 for NULL).
    pub offset: i64,
    /// The size (0 for NULL).
    pub size: i64,
    /// The stored CRC32C, if any.
    pub crc32c: Option<i64>,
}

fn raw_extent(r: &rusqlite::Row<'_>, path: &std::path::Path) -> Result<RawExtent> {
    let int = |k: usize| -> Result<Option<i64>> {
        match r.get_ref(k).at(path)? {
            ValueRef::Integer(v) => Ok(Some(v)),
            ValueRef::Null => Ok(None),
            _ => Err(Error::corrupt(path, "a file row has a non-integer column")),
        }
    };
    Ok(RawExtent {
        shard: int(0)?.unwrap_or(-1),
        offset: int(1)?.unwrap_or(-1),
        size: int(2)?.unwrap_or(0),
        crc32c: int(3)?,
    })
}

impl Index {
    /// The place of the file at `path` (normalized), if there is one.
    pub fn raw_extent(&self, path: &str) -> Result<Option<RawExtent>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT shard, offset, size, crc32c FROM files WHERE path = ?1")
            .at(&self.path)?;
        let mut rows = stmt.query([path]).at(&self.path)?;
        match rows.next().at(&self.path)? {
            Some(r) => raw_extent(r, &self.path).map(Some),
            None => Ok(None),
        }
    }

    /// Visit the place of every file and its path as stored (bytes), in path
    /// order or in address order (shard, offset), until `visit` returns false.
    pub fn each_raw_extent(
        &self,
        by_address: bool,
        visit: &mut dyn FnMut(RawExtent, &[u8]) -> Result<bool>,
    ) -> Result<()> {
        let sql = if by_address {
            "SELECT shard, offset, size, crc32c, path FROM files ORDER BY shard, offset"
        } else {
            "SELECT shard, offset, size, crc32c, path FROM files ORDER BY path"
        };
        let mut stmt = self.conn.prepare(sql).at(&self.path)?;
        let mut rows = stmt.query([]).at(&self.path)?;
        while let Some(r) = rows.next().at(&self.path)? {
            let e = raw_extent(r, &self.path)?;
            let name: &[u8] = match r.get_ref(4) {
                Ok(ValueRef::Text(t)) => t,
                _ => b"?",
            };
            if !visit(e, name)? {
                break;
            }
        }
        Ok(())
    }

    /// Is there a file at `shard`, `offset` of `size` bytes whose stored CRC is
    /// `crc` (`None`: no CRC, or one that is not an integer)?
    pub fn has_extent(&self, shard: i64, offset: i64, size: i64, crc: Option<u32>) -> Result<bool> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT crc32c FROM files WHERE shard = ?1 AND offset = ?2 AND size = ?3",
            )
            .at(&self.path)?;
        let mut rows = stmt.query((shard, offset, size)).at(&self.path)?;
        while let Some(r) = rows.next().at(&self.path)? {
            let c = match r.get_ref(0).at(&self.path)? {
                ValueRef::Integer(v) => Some(v as u32),
                _ => None,
            };
            if c == crc {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The root's `num_files_tree` and `size_tree` (0 for NULL).
    pub fn root_totals(&self) -> Result<(i64, i64)> {
        self.conn
            .prepare_cached(
                "SELECT coalesce(num_files_tree, 0), coalesce(size_tree, 0) FROM dirs \
                 WHERE path = ''",
            )
            .and_then(|mut st| st.query_row([], |r| Ok((r.get(0)?, r.get(1)?))))
            .at(&self.path)
    }
}
