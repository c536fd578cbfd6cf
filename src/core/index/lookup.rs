//! Point lookups and small queries: an entry by path or by row id, a directory's
//! children, a glob's matches, counts and per-shard usage. Walks over many rows
//! are scans ([`super::scan`]).

use rusqlite::types::ValueRef;
use rusqlite::{params, OptionalExtension};

use super::{Cond, Index, ScanOrder, ScanSpec, Table, DIR_COLS, FILE_COLS};
use crate::core::entry::{DirInfo, Entry, FileInfo, Listing};
use crate::core::error::{Error, Result, SqlContext};
use crate::core::glob::Glob;

/// Rows per query of [`Index::glob`]'s scans.
const GLOB_PAGE: usize = 4096;

impl Index {
    /// The file at `path` (already normalized), if any.
    pub fn file(&self, path: &str) -> Result<Option<FileInfo>> {
        Ok(self
            .query_files(
                concat!("SELECT ", file_cols!(), " FROM files WHERE path = ?1"),
                [path],
            )?
            .pop())
    }

    /// The non-empty file whose bytes start at `offset` of shard `shard`, if any
    /// (the first one, should several share the place).
    pub fn file_at(&self, shard: u64, offset: u64) -> Result<Option<FileInfo>> {
        Ok(self
            .query_files(
                concat!(
                    "SELECT ",
                    file_cols!(),
                    " FROM files WHERE shard = ?1 AND offset = ?2 AND size > 0 LIMIT 1"
                ),
                params![shard as i64, offset as i64],
            )?
            .pop())
    }

    /// The directory at `path` (already normalized), if any.
    pub fn dir(&self, path: &str) -> Result<Option<DirInfo>> {
        Ok(self
            .query_dirs(
                concat!("SELECT ", dir_cols!(), " FROM dirs WHERE path = ?1"),
                [path],
            )?
            .pop())
    }

    /// Does a file row exist at `path`?
    pub fn is_file(&self, path: &str) -> Result<bool> {
        self.exists_in("SELECT 1 FROM files WHERE path = ?1", path)
    }

    /// Does a dir row exist at `path`?
    pub fn is_dir(&self, path: &str) -> Result<bool> {
        self.exists_in("SELECT 1 FROM dirs WHERE path = ?1", path)
    }

    fn exists_in(&self, sql: &'static str, path: &str) -> Result<bool> {
        let mut stmt = self.conn.prepare_cached(sql).at(&self.path)?;
        stmt.exists([path]).at(&self.path)
    }

    /// Subdirectories directly in `dir`, sorted by path.
    pub fn child_dirs(&self, dir: &str) -> Result<Vec<DirInfo>> {
        self.query_dirs(
            &format!("SELECT {DIR_COLS} FROM dirs WHERE parent = ?1 ORDER BY path"),
            [dir],
        )
    }

    /// Files directly in `dir`, sorted by path.
    pub fn child_files(&self, dir: &str) -> Result<Vec<FileInfo>> {
        self.query_files(
            &format!("SELECT {FILE_COLS} FROM files WHERE parent = ?1 ORDER BY path"),
            [dir],
        )
    }

    /// The subdirectories and files directly in the (normalized) directory `dir`,
    /// each sorted by path. A file or a missing path is an error.
    pub fn listing(&self, dir: &str) -> Result<Listing> {
        self.check_listable(dir)?;
        Ok(Listing {
            dirs: self.child_dirs(dir)?,
            files: self.child_files(dir)?,
        })
    }

    /// The names of the subdirectories, then of the files, directly in the
    /// (normalized) directory `dir`, each sorted by path: [`listing`](Self::listing)
    /// without decoding the rows. A file or a missing path is an error.
    pub fn child_names(&self, dir: &str) -> Result<Vec<String>> {
        self.check_listable(dir)?;
        let mut out = Vec::new();
        for sql in [
            "SELECT path FROM dirs WHERE parent = ?1 ORDER BY path",
            "SELECT path FROM files WHERE parent = ?1 ORDER BY path",
        ] {
            let mut st = self.conn.prepare_cached(sql).at(&self.path)?;
            let mut rows = st.query([dir]).at(&self.path)?;
            while let Some(r) = rows.next().at(&self.path)? {
                out.push(crate::core::path::basename(self.path_of(r)?).to_string());
            }
        }
        Ok(out)
    }

    fn check_listable(&self, dir: &str) -> Result<()> {
        if self.is_dir(dir)? {
            return Ok(());
        }
        Err(if self.is_file(dir)? {
            Error::NotADirectory(dir.to_string())
        } else {
            Error::NotFound(dir.to_string())
        })
    }

    /// The number of rows of `table` that `sqlite_stat1` records (what SQLite's
    /// query planner believes), `None` without statistics for it.
    pub fn stat1_rows(&self, table: &str) -> Result<Option<i64>> {
        let exists: bool = self
            .conn
            .prepare_cached("SELECT count(*) FROM sqlite_schema WHERE name = 'sqlite_stat1'")
            .and_then(|mut s| s.query_row([], |r| r.get::<_, i64>(0)))
            .at(&self.path)?
            > 0;
        if !exists {
            return Ok(None);
        }
        let stat: Option<String> = self
            .conn
            .prepare_cached("SELECT CAST(stat AS TEXT) FROM sqlite_stat1 WHERE tbl = ?1 LIMIT 1")
            .and_then(|mut s| {
                s.query_row([table], |r| r.get::<_, Option<String>>(0))
                    .optional()
            })
            .at(&self.path)?
            .flatten();
        Ok(stat.and_then(|s| s.split_whitespace().next()?.parse().ok()))
    }

    /// The sizes of the entries directly in `dir` added up: each file's size and
    /// each subdirectory's total (the `total` line of `ls -l`).
    pub fn children_size(&self, dir: &str) -> Result<i64> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT (SELECT coalesce(sum(size_tree), 0) FROM dirs WHERE parent = ?1) \
                 + (SELECT coalesce(sum(size), 0) FROM files WHERE parent = ?1)",
            )
            .at(&self.path)?;
        let v = stmt
            .query_row([dir], |r| {
                Ok(match r.get_ref(0)? {
                    ValueRef::Integer(i) => i,
                    ValueRef::Real(f) => f as i64,
                    _ => 0,
                })
            })
            .at(&self.path)?;
        Ok(v)
    }

    /// Files and directories whose whole path matches `glob`, sorted by path. The
    /// root is never matched. Only the range of paths that start with the pattern's
    /// literal prefix is scanned.
    pub fn glob(&self, glob: &Glob) -> Result<Vec<Entry>> {
        let mut out = Vec::new();
        for table in [Table::Files, Table::Dirs] {
            let spec = ScanSpec::new(table, ScanOrder::Path)
                .with(Cond::Prefix(glob.literal_prefix().as_bytes().to_vec()))
                .with(Cond::NotRoot);
            self.scan_each_row(&spec, GLOB_PAGE, &mut |row| {
                // Matched on the path first: only matches are decoded.
                let path = match row.get_ref(0).at(&self.path)? {
                    ValueRef::Text(t) => std::str::from_utf8(t).unwrap_or(""),
                    _ => "",
                };
                if glob.is_match(path) {
                    out.push(match table {
                        Table::Files => Entry::File(self.decode_file(row)?),
                        Table::Dirs => Entry::Dir(self.decode_dir(row)?),
                    });
                }
                Ok(())
            })?;
        }
        out.sort_by(|a, b| a.path().cmp(b.path()));
        Ok(out)
    }

    // ----------------------------------------------------------------- row ids
    //
    // A row id names an entry for as long as its row lives: renames keep it, and a
    // file whose content is replaced in place keeps it too
    // ([`crate::ArchiveWriter::finish_file`] of a rewrite). The mount uses row ids as
    // inode numbers.

    /// The file whose row id is `id`.
    pub fn file_by_id(&self, id: i64) -> Result<Option<FileInfo>> {
        Ok(self
            .query_files(
                &format!("SELECT {FILE_COLS} FROM files WHERE rowid = ?1"),
                [id],
            )?
            .pop())
    }

    /// The directory whose row id is `id`.
    pub fn dir_by_id(&self, id: i64) -> Result<Option<DirInfo>> {
        Ok(self
            .query_dirs(
                &format!("SELECT {DIR_COLS} FROM dirs WHERE rowid = ?1"),
                [id],
            )?
            .pop())
    }

    /// The file at `path` (already normalized) and its row id.
    pub fn file_with_id(&self, path: &str) -> Result<Option<(i64, FileInfo)>> {
        Ok(self
            .files_with_ids(
                &format!("SELECT {FILE_COLS}, rowid FROM files WHERE path = ?1"),
                params![path],
            )?
            .pop())
    }

    /// Whether a file other than the one with row id `id` has bytes inside `fi`'s
    /// extent: one starting inside it, or one of the eight starting last before it
    /// reaching into it. (A file starting further back and reaching over several
    /// others is not looked for: no writer makes one.) Empty files share nothing.
    pub fn shares_bytes(&self, id: i64, fi: &FileInfo) -> Result<bool> {
        if fi.size == 0 {
            return Ok(false);
        }
        let (shard, start, end) = (fi.shard as i64, fi.offset as i64, fi.end() as i64);
        // The parameters are written `+?N`: SQLite's planner looks at the values of
        // bare parameters compared with an index, and a statement whose plan
        // depends on a value is prepared again each time it comes out of
        // rusqlite's statement cache (which clears its bindings): that cost more
        // than the query. From the file's own place on, in address order: the
        // first other non-empty file must start at or after its end.
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT offset, size, rowid FROM files WHERE shard = +?1 AND offset >= +?2 \
                 ORDER BY shard, offset LIMIT 8",
            )
            .at(&self.path)?;
        let mut rows = st.query(params![shard, start]).at(&self.path)?;
        while let Some(r) = rows.next().at(&self.path)? {
            let (offset, size, rowid): (i64, i64, i64) = (
                r.get(0).at(&self.path)?,
                r.get(1).at(&self.path)?,
                r.get(2).at(&self.path)?,
            );
            if offset >= end {
                break;
            }
            if rowid != id && size > 0 {
                return Ok(true);
            }
        }
        drop(rows);
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT offset + size FROM files WHERE shard = +?1 AND offset < +?2 \
                 ORDER BY shard DESC, offset DESC LIMIT 8",
            )
            .at(&self.path)?;
        let mut rows = st.query(params![shard, start]).at(&self.path)?;
        while let Some(r) = rows.next().at(&self.path)? {
            let reach: i64 = r.get(0).at(&self.path)?;
            if reach > start {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The directory at `path` (already normalized) and its row id.
    pub fn dir_with_id(&self, path: &str) -> Result<Option<(i64, DirInfo)>> {
        Ok(self
            .dirs_with_ids(
                &format!("SELECT {DIR_COLS}, rowid FROM dirs WHERE path = ?1"),
                params![path],
            )?
            .pop())
    }

    fn files_with_ids(&self, sql: &str, p: impl rusqlite::Params) -> Result<Vec<(i64, FileInfo)>> {
        let mut stmt = self.conn.prepare_cached(sql).at(&self.path)?;
        let mut rows = stmt.query(p).at(&self.path)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().at(&self.path)? {
            let fi = self.decode_file(row)?;
            out.push((row.get(9).at(&self.path)?, fi));
        }
        Ok(out)
    }

    fn dirs_with_ids(&self, sql: &str, p: impl rusqlite::Params) -> Result<Vec<(i64, DirInfo)>> {
        let mut stmt = self.conn.prepare_cached(sql).at(&self.path)?;
        let mut rows = stmt.query(p).at(&self.path)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().at(&self.path)? {
            let d = self.decode_dir(row)?;
            out.push((row.get(9).at(&self.path)?, d));
        }
        Ok(out)
    }

    /// Number of rows in `files`.
    pub fn count_files(&self) -> Result<u64> {
        let n: i64 = self
            .conn
            .query_row("SELECT count(*) FROM files", [], |r| r.get(0))
            .at(&self.path)?;
        Ok(n as u64)
    }

    /// Number of rows in `dirs` (the root included), counting at most `limit`.
    pub fn count_dirs_up_to(&self, limit: u64) -> Result<u64> {
        let n: i64 = self
            .conn
            .query_row(
                "SELECT count(*) FROM (SELECT 1 FROM dirs LIMIT ?1)",
                [limit.min(i64::MAX as u64) as i64],
                |r| r.get(0),
            )
            .at(&self.path)?;
        Ok(n.max(0) as u64)
    }

    /// Every directory path but the root's, in path order, from the path index.
    pub fn dir_paths(&self) -> Result<Vec<String>> {
        self.paths_with_prefix(super::Table::Dirs, "", None, &|_| true)
    }

    /// No file row and no directory row but the root's: a fresh index (two
    /// existence checks, not counts: a count reads a whole index).
    pub fn is_fresh(&self) -> Result<bool> {
        self.conn
            .query_row(
                "SELECT NOT EXISTS (SELECT 1 FROM files) \
                 AND (SELECT count(*) FROM (SELECT 1 FROM dirs LIMIT 2)) <= 1",
                [],
                |r| r.get(0),
            )
            .at(&self.path)
    }

    /// Number of rows in `dirs` (the root included).
    pub fn count_dirs(&self) -> Result<u64> {
        let n: i64 = self
            .conn
            .query_row("SELECT count(*) FROM dirs", [], |r| r.get(0))
            .at(&self.path)?;
        Ok(n.max(0) as u64)
    }

    /// The logical end of shard `shard`: the largest offset + size of its files
    /// (0 without files), through the shard/offset index.
    pub fn shard_end(&self, shard: u64) -> Result<u64> {
        let v = self
            .conn
            .prepare_cached("SELECT max(offset + size) FROM files WHERE shard = ?1")
            .and_then(|mut st| {
                st.query_row([shard as i64], |r| {
                    Ok(match r.get_ref(0)? {
                        ValueRef::Integer(i) => Ok(i.max(0) as u64),
                        ValueRef::Null => Ok(0),
                        other => Err(other.data_type()),
                    })
                })
            })
            .at(&self.path)?;
        v.map_err(|t| Error::corrupt(&self.path, format!("files.offset holds a {t:?} value")))
    }

    /// Number of files in shard `shard` (through the shard/offset index).
    pub fn count_in_shard(&self, shard: u64) -> Result<u64> {
        let n: i64 = self
            .conn
            .prepare_cached("SELECT count(*) FROM files WHERE shard = ?1")
            .and_then(|mut st| st.query_row([shard as i64], |r| r.get(0)))
            .at(&self.path)?;
        Ok(n.max(0) as u64)
    }

    /// Total of `size` over all files.
    pub fn total_size(&self) -> Result<u64> {
        let n: Option<i64> = self
            .conn
            .query_row("SELECT sum(size) FROM files", [], |r| r.get(0))
            .at(&self.path)?;
        Ok(n.unwrap_or(0).max(0) as u64)
    }

    /// Highest shard number any file refers to (answered from the shard/offset index).
    pub fn max_shard(&self) -> Result<Option<i64>> {
        let v = self
            .conn
            .query_row("SELECT max(shard) FROM files", [], |r| {
                Ok(match r.get_ref(0)? {
                    ValueRef::Integer(i) => Ok(Some(i)),
                    ValueRef::Null => Ok(None),
                    other => Err(other.data_type()),
                })
            })
            .at(&self.path)?;
        v.map_err(|t| Error::corrupt(&self.path, format!("files.shard holds a {t:?} value")))
    }

    /// Per shard: logical end (max offset+size), number of files and live bytes.
    pub fn shard_usage(&self) -> Result<Vec<ShardUsage>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT shard, max(offset + size), count(*), sum(size) FROM files \
                 GROUP BY shard ORDER BY shard",
            )
            .at(&self.path)?;
        let mut rows = stmt.query([]).at(&self.path)?;
        let mut out = Vec::new();
        while let Some(r) = rows.next().at(&self.path)? {
            let get = |i: usize| -> Result<i64> {
                match r.get_ref(i).at(&self.path)? {
                    ValueRef::Integer(v) if v >= 0 => Ok(v),
                    ValueRef::Null => Ok(0),
                    other => Err(Error::corrupt(
                        &self.path,
                        format!("bad shard, offset or size value {:?}", other.data_type()),
                    )),
                }
            };
            out.push(ShardUsage {
                shard: get(0)? as u64,
                logical_end: get(1)? as u64,
                files: get(2)? as u64,
                live_bytes: get(3)? as u64,
            });
        }
        Ok(out)
    }
}

/// The smallest byte string greater than every string that starts with `prefix`,
/// or `None` when there is none (empty prefix or all 0xFF).
pub(crate) fn prefix_upper_bound(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut hi = prefix.to_vec();
    while let Some(last) = hi.pop() {
        if last < 0xFF {
            hi.push(last + 1);
            return Some(hi);
        }
    }
    None
}

/// Use of one shard according to the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardUsage {
    /// The shard number.
    pub shard: u64,
    /// The largest offset + size of its files.
    pub logical_end: u64,
    /// The number of files in it.
    pub files: u64,
    /// The sum of their sizes.
    pub live_bytes: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upper_bounds() {
        assert_eq!(prefix_upper_bound(b"ab"), Some(b"ac".to_vec()));
        assert_eq!(prefix_upper_bound(b"a\xff"), Some(b"b".to_vec()));
        assert_eq!(prefix_upper_bound(b""), None);
        assert_eq!(prefix_upper_bound(b"\xff"), None);
    }
}
