//! The questions a verification asks of an index that no reader needs: SQLite's
//! own integrity check, the schema objects present, rows that break the format's
//! invariants (duplicate paths, a path that is a file and a directory, a parent
//! without its row). Every value comes back as text, whatever its type, so that a
//! damaged index is described rather than refused.

use rusqlite::types::ValueRef;

use super::Index;
use crate::core::error::{Result, SqlContext};

/// A row whose parent directory has no dirs row, as `PRAGMA foreign_key_check`
/// reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Orphan {
    /// `files` or `dirs`.
    pub table: String,
    /// The row id (-1 when not given).
    pub rowid: i64,
}

impl Index {
    /// The first column of every row of `sql` (one of ours), as text.
    fn strings(&self, sql: &'static str) -> Result<Vec<String>> {
        let mut stmt = self.conn.prepare(sql).at(&self.path)?;
        let mut rows = stmt.query([]).at(&self.path)?;
        let mut out = Vec::new();
        while let Some(r) = rows.next().at(&self.path)? {
            out.push(match r.get_ref(0).at(&self.path)? {
                ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                ValueRef::Integer(v) => v.to_string(),
                ValueRef::Real(v) => v.to_string(),
                ValueRef::Null => "NULL".into(),
                ValueRef::Blob(b) => format!("<{} byte blob>", b.len()),
            });
        }
        Ok(out)
    }

    /// What `PRAGMA integrity_check` says: `["ok"]`, or every problem it found.
    pub fn integrity_check(&self) -> Result<Vec<String>> {
        self.strings("PRAGMA integrity_check(1000000)")
    }

    /// The names of the triggers in the schema.
    pub fn trigger_names(&self) -> Result<Vec<String>> {
        self.strings("SELECT name FROM sqlite_schema WHERE type = 'trigger'")
    }

    /// The names of the indexes in the schema.
    pub fn index_names(&self) -> Result<Vec<String>> {
        self.strings("SELECT name FROM sqlite_schema WHERE type = 'index'")
    }

    /// Paths stored in more than one `files` row, sorted (a full scan: only
    /// possible, and worth asking, when the unique index on `files(path)` is
    /// missing).
    pub fn duplicate_file_paths(&self) -> Result<Vec<String>> {
        self.strings("SELECT path FROM files GROUP BY path HAVING count(*) > 1 ORDER BY path")
    }

    /// Paths that are a file and a directory at once, sorted.
    pub fn file_dir_clashes(&self) -> Result<Vec<String>> {
        self.strings("SELECT path FROM files WHERE path IN (SELECT path FROM dirs) ORDER BY path")
    }

    /// Does `files` have a unique, non-partial index on `path` alone?
    pub fn has_unique_path_index(&self) -> Result<bool> {
        let list: Vec<(String, bool, bool)> = {
            let mut stmt = self
                .conn
                .prepare("PRAGMA index_list('files')")
                .at(&self.path)?;
            let rows = stmt
                .query_map([], |r| Ok((r.get(1)?, r.get(2)?, r.get(4)?)))
                .at(&self.path)?;
            rows.collect::<rusqlite::Result<_>>().at(&self.path)?
        };
        for (name, is_unique, partial) in list {
            if !is_unique || partial {
                continue;
            }
            let mut info = self
                .conn
                .prepare("SELECT name FROM pragma_index_info(?1)")
                .at(&self.path)?;
            let cols: Vec<Option<String>> = info
                .query_map([&name], |r| r.get(0))
                .at(&self.path)?
                .collect::<rusqlite::Result<_>>()
                .at(&self.path)?;
            if cols == [Some("path".to_string())] {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The rows whose parent directory has no dirs row (`PRAGMA foreign_key_check`).
    pub fn orphans(&self) -> Result<Vec<Orphan>> {
        let mut stmt = self
            .conn
            .prepare("PRAGMA foreign_key_check")
            .at(&self.path)?;
        let mut rows = stmt.query([]).at(&self.path)?;
        let mut out = Vec::new();
        while let Some(r) = rows.next().at(&self.path)? {
            let table: String = r.get(0).at(&self.path)?;
            let rowid: i64 = r.get::<_, Option<i64>>(1).ok().flatten().unwrap_or(-1);
            out.push(Orphan { table, rowid });
        }
        Ok(out)
    }

    /// The path and parent of the row `rowid` of `table` (`files` or `dirs`), as
    /// far as they read; `None` when there is no such row (or another table).
    pub fn path_and_parent(&self, table: &str, rowid: i64) -> Option<(String, Option<String>)> {
        let sql = match table {
            "files" => "SELECT path, parent FROM files WHERE rowid = ?1",
            "dirs" => "SELECT path, parent FROM dirs WHERE rowid = ?1",
            _ => return None,
        };
        self.conn
            .query_row(sql, [rowid], |r| {
                Ok((
                    r.get::<_, String>(0).unwrap_or_default(),
                    r.get::<_, Option<String>>(1).unwrap_or_default(),
                ))
            })
            .ok()
    }
}
