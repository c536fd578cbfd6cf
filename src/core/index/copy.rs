//! Building an index from other indexes attached to its connection: an upgrade
//! copies an old schema's rows into a new index, a symlink merge copies the rows
//! of every input with their shard numbers shifted. Set-based statements, one per
//! table, so that millions of rows copy at SQLite's speed.

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{params, Connection, ToSql};

use super::Index;
use crate::core::error::{Result, SqlContext};

/// The columns copied from an old schema's `files`, all of which it has.
pub const OLD_FILE_COLS: &str = "path, shard, offset, size, crc32c, mode, uid, gid, mtime_ns";
/// The columns copied from an old schema's `dirs`, all of which it has.
pub const OLD_DIR_COLS: &str =
    "path, num_subdirs, num_files, num_files_tree, size_tree, mode, uid, gid, mtime_ns";

/// A file name bound as SQL text, byte for byte (it need not be UTF-8).
struct FileName<'a>(&'a Path);

impl ToSql for FileName<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(ValueRef::Text(
            self.0.as_os_str().as_bytes(),
        )))
    }
}

/// Take the write lock of the database `conn` is open on and hold it (with its
/// schema read) until [`release`]: nobody else can change it while it is copied.
pub fn hold(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch("BEGIN IMMEDIATE; SELECT count(*) FROM sqlite_schema;")
}

/// Let go of what [`hold`] took (nothing was written).
pub fn release(conn: &Connection) {
    let _ = conn.execute_batch("ROLLBACK");
}

/// Switch a database in WAL journal mode to a rollback journal (a WAL file beside
/// a new index would belong to the old one).
pub fn leave_wal(conn: &Connection) -> rusqlite::Result<()> {
    let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0))?;
    if mode.eq_ignore_ascii_case("wal") {
        conn.query_row("PRAGMA journal_mode = DELETE", [], |_| Ok(()))?;
    }
    Ok(())
}

impl Index {
    /// Attach the database file `file` as `alias` (an identifier of ours).
    pub fn attach(&self, file: &Path, alias: &'static str) -> Result<()> {
        self.conn
            .execute(&format!("ATTACH DATABASE ?1 AS {alias}"), [FileName(file)])
            .at(&self.path)
            .map(drop)
    }

    /// Detach the database attached as `alias`.
    pub fn detach(&self, alias: &'static str) -> Result<()> {
        self.conn
            .execute_batch(&format!("DETACH DATABASE {alias}"))
            .at(&self.path)
    }

    /// Turn foreign key checks on or off (between transactions).
    pub fn set_foreign_keys(&self, on: bool) -> Result<()> {
        self.conn
            .execute_batch(if on {
                "PRAGMA foreign_keys = ON"
            } else {
                "PRAGMA foreign_keys = OFF"
            })
            .at(&self.path)
    }

    /// Do not sync the journal: for a private file until it is renamed into place.
    pub fn set_synchronous_off(&self) -> Result<()> {
        self.conn
            .execute_batch("PRAGMA synchronous = OFF")
            .at(&self.path)
    }

    /// The number of rows whose foreign key (the parent directory) is missing.
    pub fn foreign_key_violations(&self) -> Result<u64> {
        let n: i64 = self
            .conn
            .query_row("SELECT count(*) FROM pragma_foreign_key_check", [], |r| {
                r.get(0)
            })
            .at(&self.path)?;
        Ok(n.max(0) as u64)
    }

    /// Insert a bare directory row at `path` unless one exists.
    pub fn ensure_dir_row(&self, path: &str) -> Result<()> {
        self.conn
            .execute("INSERT OR IGNORE INTO main.dirs (path) VALUES (?1)", [path])
            .at(&self.path)
            .map(drop)
    }

    // ------------------------------------------------------------- upgrades

    /// Copy the rows of the old schema's tables attached as `alias` into this
    /// (new, empty) index, in path order: every directory but the root (whose
    /// metadata is taken over), every file, and the config rows other than the
    /// schema version and `use_triggers`. Returns the files copied.
    pub fn copy_old_schema(&self, alias: &'static str) -> Result<u64> {
        self.conn
            .execute(
                &format!(
                    "INSERT INTO main.dirs ({OLD_DIR_COLS}) SELECT {OLD_DIR_COLS} \
                     FROM {alias}.dirs WHERE path != '' ORDER BY path"
                ),
                [],
            )
            .at(&self.path)?;
        self.copy_root_meta(alias)?;
        let files = self
            .conn
            .execute(
                &format!(
                    "INSERT INTO main.files ({OLD_FILE_COLS}) SELECT {OLD_FILE_COLS} \
                     FROM {alias}.files ORDER BY path"
                ),
                [],
            )
            .at(&self.path)?;
        self.conn
            .execute(
                &format!(
                    "INSERT OR REPLACE INTO main.config (key, value_text, value_int) \
                     SELECT key, value_text, value_int FROM {alias}.config \
                     WHERE key NOT LIKE 'schema_version%' AND key != 'use_triggers'"
                ),
                [],
            )
            .at(&self.path)?;
        Ok(files as u64)
    }

    /// Give the root directory the metadata of the root of the index attached as
    /// `alias`, when that has a root row.
    pub fn copy_root_meta(&self, alias: &'static str) -> Result<()> {
        self.conn
            .execute(
                &format!(
                    "UPDATE main.dirs SET (mode, uid, gid, mtime_ns) = \
                     (SELECT mode, uid, gid, mtime_ns FROM {alias}.dirs WHERE path = '') \
                     WHERE path = '' AND EXISTS (SELECT 1 FROM {alias}.dirs WHERE path = '')"
                ),
                [],
            )
            .at(&self.path)
            .map(drop)
    }

    // ------------------------------------------------------------- merges

    /// A file of the index attached as `alias` whose path (below `prefix`) this
    /// index has already, with the shard of the one here; `None` when there is
    /// none (or it cannot be told).
    pub fn first_attached_duplicate(
        &self,
        alias: &'static str,
        prefix: &str,
    ) -> Option<(String, i64)> {
        self.conn
            .query_row(
                &format!(
                    "SELECT m.path, m.shard FROM {alias}.files s JOIN main.files m \
                     ON m.path = (CASE WHEN ?1 = '' THEN s.path ELSE ?1 || '/' || s.path END) \
                     LIMIT 1"
                ),
                [prefix],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .ok()
    }

    /// Each file of the index attached as `alias` whose path below `prefix` this
    /// index has too: `visit(source path, path here)` until it returns false.
    pub fn attached_duplicates(
        &self,
        alias: &'static str,
        prefix: &str,
        visit: &mut dyn FnMut(&str, &str) -> bool,
    ) -> Result<()> {
        let mut st = self
            .conn
            .prepare(&format!(
                "SELECT s.path, m.path FROM {alias}.files s JOIN main.files m \
                 ON m.path = (CASE WHEN ?1 = '' THEN s.path ELSE ?1 || '/' || s.path END)"
            ))
            .at(&self.path)?;
        let mut rows = st.query([prefix]).at(&self.path)?;
        while let Some(r) = rows.next().at(&self.path)? {
            let src: String = r.get(0).at(&self.path)?;
            let here: String = r.get(1).at(&self.path)?;
            if !visit(&src, &here) {
                break;
            }
        }
        Ok(())
    }

    /// Copy the files of the index attached as `alias`, in their row order, below
    /// `prefix` and with `shard_base` added to their shard numbers; a path this
    /// index has already is skipped. Returns the files copied.
    pub fn copy_attached_files(
        &self,
        alias: &'static str,
        shard_base: u64,
        prefix: &str,
    ) -> Result<u64> {
        let n = self
            .conn
            .execute(
                &format!(
                    "INSERT OR IGNORE INTO main.files \
                     (path, shard, offset, size, crc32c, mode, uid, gid, mtime_ns) \
                     SELECT CASE WHEN ?2 = '' THEN path ELSE ?2 || '/' || path END, \
                            shard + ?1, offset, size, crc32c, mode, uid, gid, mtime_ns \
                     FROM {alias}.files ORDER BY rowid"
                ),
                params![shard_base as i64, prefix],
            )
            .at(&self.path)?;
        Ok(n as u64)
    }

    /// Add the directories of the index attached as `alias`, below `prefix` (its
    /// root becomes `prefix`; with an empty prefix the root is left out): a
    /// directory this index has already keeps each metadata field it has, and
    /// takes the others from the attached one.
    pub fn merge_attached_dirs(&self, alias: &'static str, prefix: &str) -> Result<()> {
        self.conn
            .execute(
                &format!(
                    "INSERT INTO main.dirs (path, mode, uid, gid, mtime_ns) \
                     SELECT CASE WHEN ?1 = '' THEN path WHEN path = '' THEN ?1 \
                                 ELSE ?1 || '/' || path END, \
                            mode, uid, gid, mtime_ns FROM {alias}.dirs \
                     WHERE path != '' OR ?1 != '' \
                     ORDER BY rowid \
                     ON CONFLICT (path) DO UPDATE SET \
                         mode = coalesce(dirs.mode, excluded.mode), \
                         uid = coalesce(dirs.uid, excluded.uid), \
                         gid = coalesce(dirs.gid, excluded.gid), \
                         mtime_ns = coalesce(dirs.mtime_ns, excluded.mtime_ns)"
                ),
                [prefix],
            )
            .at(&self.path)
            .map(drop)
    }

    /// A path that is both a file and a directory, if any (or if it cannot be
    /// told).
    pub fn first_file_dir_clash(&self) -> Option<String> {
        self.conn
            .query_row(
                "SELECT path FROM files WHERE path IN (SELECT path FROM dirs) LIMIT 1",
                [],
                |r| r.get(0),
            )
            .ok()
    }
}
