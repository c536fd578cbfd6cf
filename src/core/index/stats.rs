//! The directory statistics: creating missing ancestor directories and
//! recomputing every directory's four counters with a handful of set-based
//! statements (after bulk operations that insert rows without tracking them), and
//! telling which directories' stored counters are wrong (for `verify`).

use rusqlite::types::ValueRef;

use super::{parent_sql, Index};
use crate::core::error::{Result, SqlContext};
use crate::core::path as mpath;

impl Index {
    /// Insert a bare dirs row for every missing ancestor of every file and directory,
    /// and for the root. Run with triggers off. Returns the rows added.
    fn ensure_ancestors(&self) -> Result<usize> {
        let p = parent_sql("path");
        let sql = format!(
            "WITH RECURSIVE anc(path) AS (
                 SELECT ''
                 UNION SELECT parent FROM files
                 UNION SELECT parent FROM dirs WHERE parent IS NOT NULL
                 UNION SELECT {p} FROM anc WHERE path != ''
             )
             INSERT OR IGNORE INTO dirs (path) SELECT path FROM anc
             WHERE path NOT IN (SELECT path FROM dirs)"
        );
        self.conn.execute(&sql, []).at(&self.path)
    }

    fn build_stats_tables(&self) -> Result<()> {
        let p = parent_sql("path");
        self.conn
            .execute_batch(&format!(
                "DROP TABLE IF EXISTS temp.bc_direct;
                 DROP TABLE IF EXISTS temp.bc_tree;
                 DROP TABLE IF EXISTS temp.bc_subdirs;
                 CREATE TEMP TABLE bc_direct (path TEXT PRIMARY KEY, n INTEGER, s INTEGER)
                     WITHOUT ROWID;
                 INSERT INTO temp.bc_direct
                     SELECT parent, count(*), coalesce(sum(size), 0) FROM files GROUP BY parent;
                 CREATE TEMP TABLE bc_tree (path TEXT PRIMARY KEY, n INTEGER, s INTEGER)
                     WITHOUT ROWID;
                 WITH RECURSIVE up(path, n, s) AS (
                     SELECT path, n, s FROM temp.bc_direct
                     UNION ALL
                     SELECT {p}, n, s FROM up WHERE path != '' AND {p} != path
                 )
                 INSERT INTO temp.bc_tree SELECT path, sum(n), sum(s) FROM up GROUP BY path;
                 CREATE TEMP TABLE bc_subdirs (path TEXT PRIMARY KEY, n INTEGER) WITHOUT ROWID;
                 INSERT INTO temp.bc_subdirs
                     SELECT parent, count(*) FROM dirs WHERE parent IS NOT NULL GROUP BY parent;"
            ))
            .at(&self.path)
    }

    const STATS_VIEW: &'static str = "SELECT x.path AS path,
            coalesce(d.n, 0) AS nf, coalesce(s.n, 0) AS ns,
            coalesce(t.n, 0) AS nt, coalesce(t.s, 0) AS st
        FROM dirs x
        LEFT JOIN temp.bc_direct d ON d.path = x.path
        LEFT JOIN temp.bc_subdirs s ON s.path = x.path
        LEFT JOIN temp.bc_tree t ON t.path = x.path";

    fn drop_stats_tables(&self) -> Result<()> {
        self.conn
            .execute_batch(
                "DROP TABLE IF EXISTS temp.bc_direct;
                 DROP TABLE IF EXISTS temp.bc_tree;
                 DROP TABLE IF EXISTS temp.bc_subdirs;",
            )
            .at(&self.path)
    }

    /// Recompute the four counters of every dirs row from `files` and `dirs` with a
    /// handful of set-based statements. Run with triggers off. Returns the rows
    /// changed.
    fn rebuild_tree_stats(&self) -> Result<usize> {
        self.build_stats_tables()?;
        let changed = self
            .conn
            .execute(
                &format!(
                    "UPDATE dirs SET num_files = v.nf, num_subdirs = v.ns,
                         num_files_tree = v.nt, size_tree = v.st
                     FROM ({}) AS v
                     WHERE dirs.path = v.path AND (dirs.num_files IS NOT v.nf
                         OR dirs.num_subdirs IS NOT v.ns OR dirs.num_files_tree IS NOT v.nt
                         OR dirs.size_tree IS NOT v.st)",
                    Self::STATS_VIEW
                ),
                [],
            )
            .at(&self.path)?;
        self.drop_stats_tables()?;
        Ok(changed)
    }

    /// Create every missing ancestor directory and recompute every
    /// directory's counters, atomically: the work runs in a savepoint with
    /// triggers off and foreign keys deferred, inside or outside a transaction.
    /// Re-runnable; writes nothing to stdout. Returns the dirs rows added or changed.
    pub fn rebuild_statistics(&self) -> Result<usize> {
        let p = &self.path;
        self.conn.execute_batch("SAVEPOINT bc_rebuild").at(p)?;
        let work = || -> Result<usize> {
            self.conn
                .execute_batch("PRAGMA defer_foreign_keys = ON")
                .at(p)?;
            self.set_use_triggers(false)?;
            let added = self.ensure_ancestors()?;
            let changed = self.rebuild_tree_stats()?;
            self.set_use_triggers(true)?;
            Ok(added + changed)
        };
        match work() {
            Ok(n) => {
                self.conn.execute_batch("RELEASE bc_rebuild").at(p)?;
                Ok(n)
            }
            Err(e) => {
                let _ = self
                    .conn
                    .execute_batch("ROLLBACK TO bc_rebuild; RELEASE bc_rebuild");
                Err(e)
            }
        }
    }

    /// Directories whose stored counters differ from the recomputed ones (what
    /// `verify` reports). Works on read-only connections.
    pub fn stats_mismatches(&self) -> Result<Vec<StatsMismatch>> {
        self.build_stats_tables()?;
        let sql = format!(
            "SELECT v.path, x.num_files, v.nf, x.num_subdirs, v.ns, x.num_files_tree, v.nt,
                    x.size_tree, v.st
             FROM ({}) AS v JOIN dirs x ON x.path = v.path
             WHERE x.num_files IS NOT v.nf OR x.num_subdirs IS NOT v.ns
                OR x.num_files_tree IS NOT v.nt OR x.size_tree IS NOT v.st
             ORDER BY v.path",
            Self::STATS_VIEW
        );
        let mut out = Vec::new();
        {
            let mut stmt = self.conn.prepare(&sql).at(&self.path)?;
            let mut rows = stmt.query([]).at(&self.path)?;
            while let Some(r) = rows.next().at(&self.path)? {
                let g = |i: usize| -> Option<i64> {
                    match r.get_ref(i) {
                        Ok(ValueRef::Integer(v)) => Some(v),
                        _ => None,
                    }
                };
                out.push(StatsMismatch {
                    path: r.get::<_, String>(0).unwrap_or_default(),
                    stored: [g(1), g(3), g(5), g(7)],
                    actual: [
                        g(2).unwrap_or(0),
                        g(4).unwrap_or(0),
                        g(6).unwrap_or(0),
                        g(8).unwrap_or(0),
                    ],
                });
            }
        }
        self.drop_stats_tables()?;
        Ok(out)
    }
}

/// The size of a directory (its subtree) or a file, as `du` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SizeRow {
    /// The path (invalid UTF-8 replaced).
    pub path: String,
    /// `size_tree` of a directory, `size` of a file (`None`: not a number).
    pub size: Option<i64>,
    /// `num_files_tree` of a directory (0 when not a number); `None` for a file.
    pub files: Option<i64>,
}

impl Index {
    /// Visit the directory `dir` and every directory below it (and, with
    /// `files`, every file below it), deepest first, then by path: one sorted
    /// statement (SQLite's sorter spills to a temporary file, so memory stays
    /// bounded). Rows whose path is not text are skipped.
    pub fn each_size_deepest_first(
        &self,
        dir: &str,
        files: bool,
        visit: &mut dyn FnMut(SizeRow) -> Result<()>,
    ) -> Result<()> {
        let (lo, hi) = mpath::subtree_range(dir).unwrap_or_default();
        let scope = if dir.is_empty() {
            "1"
        } else {
            "(path = :p OR (path >= :lo AND path < :hi))"
        };
        let slashes = "length(path) - length(replace(path, '/', ''))";
        let mut sql = format!(
            "SELECT path, size_tree, num_files_tree, 1 AS is_dir, {slashes} AS slashes \
             FROM dirs WHERE {scope}"
        );
        if files {
            sql += &format!(
                " UNION ALL SELECT path, size, NULL, 0, {slashes} FROM files WHERE {scope}"
            );
        }
        sql += " ORDER BY slashes DESC, path";
        let p = &self.path;
        let mut stmt = self.conn.prepare(&sql).at(p)?;
        let mut named: Vec<(&str, &dyn rusqlite::ToSql)> = Vec::new();
        if !dir.is_empty() {
            named.push((":p", &dir));
            named.push((":lo", &lo));
            named.push((":hi", &hi));
        }
        let mut rows = stmt.query(named.as_slice()).at(p)?;
        while let Some(r) = rows.next().at(p)? {
            let path = match r.get_ref(0).at(p)? {
                ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                _ => continue,
            };
            let int = |k: usize| match r.get_ref(k) {
                Ok(ValueRef::Integer(v)) => Some(v),
                Ok(ValueRef::Real(f)) => Some(f as i64),
                _ => None,
            };
            let is_dir = int(3) == Some(1);
            visit(SizeRow {
                path,
                size: int(1),
                files: is_dir.then(|| int(2).unwrap_or(0)),
            })?;
        }
        Ok(())
    }
}

/// A directory whose stored counters are wrong. Counters are in the order
/// num_files, num_subdirs, num_files_tree, size_tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatsMismatch {
    /// The directory.
    pub path: String,
    /// Its stored counters (NULL as `None`).
    pub stored: [Option<i64>; 4],
    /// The counters recomputed from the rows.
    pub actual: [i64; 4],
}

impl std::fmt::Display for StatsMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names = ["num_files", "num_subdirs", "num_files_tree", "size_tree"];
        write!(f, "dir {:?}:", self.path)?;
        for ((name, stored), actual) in names.iter().zip(self.stored).zip(self.actual) {
            match stored {
                Some(v) if v == actual => {}
                Some(v) => write!(f, " {name}={v} (should be {actual})")?,
                None => write!(f, " {name}=NULL (should be {actual})")?,
            }
        }
        Ok(())
    }
}
