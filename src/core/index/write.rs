//! Row writes and transactions: every statement that changes an index, for the
//! writer ([`crate::core::writer`]) and the maintenance commands, so that their
//! code says what changes and this module says how it is written in SQL.
//!
//! These are plain row writes: whether the statistics triggers run is the
//! caller's choice (the writer's batches turn them off and keep the directory
//! counters itself; [`Index::set_use_triggers`], [`Index::set_bulk_mode`]).

use rusqlite::{params, ErrorCode};

use super::Index;
use crate::core::entry::{FileInfo, Meta};
use crate::core::error::{Error, Result, SqlContext};
use crate::core::path as mpath;

/// Files, bytes and directories of a subtree: what removing it takes away.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// Files.
    pub files: u64,
    /// Bytes of those files.
    pub bytes: u64,
    /// Directories, the subtree's own included.
    pub dirs: u64,
}

fn is_unique_violation(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _)
        if f.code == ErrorCode::ConstraintViolation
            && f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE)
}

impl Index {
    // ------------------------------------------------------------- transactions

    /// `BEGIN IMMEDIATE`: a write transaction that takes the write lock at once.
    pub fn begin_immediate(&self) -> Result<()> {
        self.conn.execute_batch("BEGIN IMMEDIATE").at(&self.path)
    }

    /// `BEGIN`: a deferred transaction (it takes locks as it reads and writes),
    /// for a consistent view over several reads, or writes that need no lock yet.
    pub fn begin(&self) -> Result<()> {
        self.conn.execute_batch("BEGIN").at(&self.path)
    }

    /// Commit the open transaction.
    pub fn commit(&self) -> Result<()> {
        self.conn.execute_batch("COMMIT").at(&self.path)
    }

    /// Roll back the open transaction.
    pub fn rollback(&self) -> Result<()> {
        self.conn.execute_batch("ROLLBACK").at(&self.path)
    }

    /// End a read transaction opened by [`begin`](Self::begin), if one is
    /// open: committed, or rolled back when the commit fails.
    pub fn end_read(&self) {
        if !self.conn.is_autocommit() && self.conn.execute_batch("COMMIT").is_err() {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
    }

    /// Is no transaction open on this connection?
    pub fn is_autocommit(&self) -> bool {
        self.conn.is_autocommit()
    }

    /// Open the savepoint `name` (an identifier of ours, never user input).
    pub(crate) fn savepoint(&self, name: &'static str) -> Result<()> {
        self.conn
            .execute_batch(&format!("SAVEPOINT {name}"))
            .at(&self.path)
    }

    /// Release the savepoint `name`, keeping its changes.
    pub(crate) fn release(&self, name: &'static str) -> Result<()> {
        self.conn
            .execute_batch(&format!("RELEASE {name}"))
            .at(&self.path)
    }

    /// Undo the changes since the savepoint `name`, and release it.
    pub(crate) fn rollback_to(&self, name: &'static str) -> Result<()> {
        self.conn
            .execute_batch(&format!("ROLLBACK TO {name}; RELEASE {name}"))
            .at(&self.path)
    }

    /// `PRAGMA optimize`, best effort (what a writer does when it finishes).
    pub fn optimize(&self) {
        let _ = self.conn.execute_batch("PRAGMA optimize");
    }

    // ------------------------------------------------------------- file rows

    /// Insert `fi`'s row, with the row id `id` when given (a replaced file keeps its
    /// id), or the next free one. Returns false, inserting nothing, when a file of
    /// that path exists.
    pub fn insert_file(&self, fi: &FileInfo, id: Option<i64>) -> Result<bool> {
        let r = self
            .conn
            .prepare_cached(
                "INSERT INTO files (rowid, path, shard, offset, size, crc32c, mode, uid, gid, \
                 mtime_ns) VALUES (?10, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )
            .and_then(|mut stmt| {
                stmt.execute(params![
                    fi.path,
                    fi.shard as i64,
                    fi.offset as i64,
                    fi.size as i64,
                    fi.crc32c,
                    fi.meta.mode,
                    fi.meta.uid,
                    fi.meta.gid,
                    fi.meta.mtime_ns,
                    id
                ])
            });
        match r {
            Ok(_) => Ok(true),
            Err(e) if is_unique_violation(&e) => Ok(false),
            Err(e) => Err(Error::sqlite(&self.path, e)),
        }
    }

    /// Delete the file row at `path`; returns whether there was one.
    pub fn delete_file_row(&self, path: &str) -> Result<bool> {
        let n = self
            .conn
            .prepare_cached("DELETE FROM files WHERE path = ?1")
            .and_then(|mut st| st.execute([path]))
            .at(&self.path)?;
        Ok(n > 0)
    }

    /// Delete the file row whose row id is `id`; returns whether there was one.
    pub fn delete_file_by_id(&self, id: i64) -> Result<bool> {
        let n = self
            .conn
            .prepare_cached("DELETE FROM files WHERE rowid = ?1")
            .and_then(|mut st| st.execute([id]))
            .at(&self.path)?;
        Ok(n > 0)
    }

    /// Move the file row at `old` to `new` (its parent follows).
    pub fn move_file_row(&self, old: &str, new: &str) -> Result<()> {
        self.conn
            .prepare_cached("UPDATE files SET path = ?2 WHERE path = ?1")
            .and_then(|mut st| st.execute([old, new]))
            .at(&self.path)
            .map(drop)
    }

    /// Set the metadata of the file row at `path`; returns whether there was one.
    pub fn set_file_meta(&self, path: &str, meta: &Meta) -> Result<bool> {
        self.write_meta(
            "UPDATE files SET mode = ?2, uid = ?3, gid = ?4, mtime_ns = ?5 WHERE path = ?1",
            path,
            meta,
        )
    }

    /// Change the metadata fields of `meta` that are set, of the file at `path`, or
    /// else of the directory there (the others keep their values); returns whether
    /// either exists.
    pub fn patch_meta(&self, path: &str, meta: &Meta) -> Result<bool> {
        const SET: &str = "SET mode = coalesce(?2, mode), uid = coalesce(?3, uid), \
                           gid = coalesce(?4, gid), mtime_ns = coalesce(?5, mtime_ns) \
                           WHERE path = ?1";
        Ok(self.write_meta(&format!("UPDATE files {SET}"), path, meta)?
            || self.write_meta(&format!("UPDATE dirs {SET}"), path, meta)?)
    }

    fn write_meta(&self, sql: &str, path: &str, meta: &Meta) -> Result<bool> {
        self.conn
            .prepare_cached(sql)
            .and_then(|mut st| {
                st.execute(params![path, meta.mode, meta.uid, meta.gid, meta.mtime_ns])
            })
            .at(&self.path)
            .map(|n| n > 0)
    }

    /// Set the size and CRC of the file whose row id is `id` (its bytes were
    /// rewritten where they are).
    pub fn set_size_crc(&self, id: i64, size: u64, crc: u32) -> Result<()> {
        self.conn
            .prepare_cached("UPDATE files SET size = ?2, crc32c = ?3 WHERE rowid = ?1")
            .and_then(|mut st| st.execute(params![id, size as i64, crc as i64]))
            .at(&self.path)
            .map(drop)
    }

    /// Move the file whose row id is `id` to shard `shard` at `offset` (its bytes
    /// were copied there).
    pub fn relocate_file(&self, id: i64, shard: u64, offset: u64) -> Result<()> {
        self.conn
            .prepare_cached("UPDATE files SET shard = ?2, offset = ?3 WHERE rowid = ?1")
            .and_then(|mut st| st.execute(params![id, shard as i64, offset as i64]))
            .at(&self.path)
            .map(drop)
    }

    /// Renumber every file of shard `from` to shard `to`; returns the rows changed.
    pub fn renumber_shard(&self, from: u64, to: u64) -> Result<usize> {
        self.conn
            .execute(
                "UPDATE files SET shard = ?2 WHERE shard = ?1",
                params![from as i64, to as i64],
            )
            .at(&self.path)
    }

    // ------------------------------------------------------------- directory rows

    /// Insert a directory row at `path` with `meta` (and zero counters).
    pub fn insert_dir(&self, path: &str, meta: &Meta) -> Result<()> {
        self.conn
            .prepare_cached(
                "INSERT INTO dirs (path, mode, uid, gid, mtime_ns) VALUES (?1, ?2, ?3, ?4, ?5)",
            )
            .and_then(|mut s| {
                s.execute(params![path, meta.mode, meta.uid, meta.gid, meta.mtime_ns])
            })
            .at(&self.path)
            .map(drop)
    }

    /// Delete the directory row at `path` (only that row); returns whether there
    /// was one.
    pub fn delete_dir_row(&self, path: &str) -> Result<bool> {
        let n = self
            .conn
            .prepare_cached("DELETE FROM dirs WHERE path = ?1")
            .and_then(|mut st| st.execute([path]))
            .at(&self.path)?;
        Ok(n > 0)
    }

    /// Set the metadata of the directory row at `path`; returns whether there was
    /// one.
    pub fn set_dir_meta(&self, path: &str, meta: &Meta) -> Result<bool> {
        self.write_meta(
            "UPDATE dirs SET mode = ?2, uid = ?3, gid = ?4, mtime_ns = ?5 WHERE path = ?1",
            path,
            meta,
        )
    }

    /// Add to the direct counters (`num_files`, `num_subdirs`) of the directory at
    /// `path`.
    pub(crate) fn add_to_dir_counts(&self, path: &str, files: i64, subdirs: i64) -> Result<()> {
        self.conn
            .prepare_cached(
                "UPDATE dirs SET num_files = num_files + ?2, num_subdirs = num_subdirs + ?3 \
                 WHERE path = ?1",
            )
            .and_then(|mut st| st.execute(params![path, files, subdirs]))
            .at(&self.path)
            .map(drop)
    }

    /// Set the mtime of the directory at `path` (nanoseconds since the epoch).
    pub(crate) fn set_dir_mtime(&self, path: &str, mtime_ns: i64) -> Result<()> {
        self.conn
            .prepare_cached("UPDATE dirs SET mtime_ns = ?2 WHERE path = ?1")
            .and_then(|mut st| st.execute(params![path, mtime_ns]))
            .at(&self.path)
            .map(drop)
    }

    /// Add to the subtree totals (`num_files_tree`, `size_tree`) of the directory
    /// at `path`.
    pub(crate) fn add_to_dir_totals(&self, path: &str, files: i64, bytes: i64) -> Result<()> {
        self.conn
            .prepare_cached(
                "UPDATE dirs SET num_files_tree = num_files_tree + ?2, \
                 size_tree = size_tree + ?3 WHERE path = ?1",
            )
            .and_then(|mut st| st.execute(params![path, files, bytes]))
            .at(&self.path)
            .map(drop)
    }

    /// Does the directory at `path` hold any file or directory (by the rows, not by
    /// its counters)?
    pub fn has_children(&self, path: &str) -> Result<bool> {
        self.conn
            .prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM files WHERE parent = ?1) \
                 OR EXISTS (SELECT 1 FROM dirs WHERE parent = ?1)",
            )
            .and_then(|mut st| st.query_row([path], |r| r.get(0)))
            .at(&self.path)
    }

    /// The number of files and directories directly in `dir`, from the rows.
    pub fn count_children(&self, dir: &str) -> Result<u64> {
        let n: i64 = self
            .conn
            .prepare_cached(
                "SELECT (SELECT count(*) FROM files WHERE parent = ?1) \
                      + (SELECT count(*) FROM dirs WHERE parent = ?1)",
            )
            .and_then(|mut st| st.query_row([dir], |r| r.get(0)))
            .at(&self.path)?;
        Ok(n.max(0) as u64)
    }

    /// Files, bytes and directories at and below the directory `dir`, counted from
    /// the rows (the whole index for the root).
    pub fn subtree_totals(&self, dir: &str) -> Result<Totals> {
        let (files, bytes, dirs): (i64, i64, i64) = match mpath::subtree_range(dir) {
            Some((lo, hi)) => self
                .conn
                .prepare_cached(
                    "SELECT (SELECT count(*) FROM files WHERE path >= ?1 AND path < ?2), \
                        (SELECT coalesce(sum(size), 0) FROM files WHERE path >= ?1 AND path < ?2), \
                        (SELECT count(*) FROM dirs WHERE path >= ?1 AND path < ?2) + 1",
                )
                .and_then(|mut st| {
                    st.query_row([&lo, &hi], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                })
                .at(&self.path)?,
            None => self
                .conn
                .prepare_cached(
                    "SELECT (SELECT count(*) FROM files), \
                        (SELECT coalesce(sum(size), 0) FROM files), \
                        (SELECT count(*) FROM dirs)",
                )
                .and_then(|mut st| st.query_row([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))))
                .at(&self.path)?,
        };
        Ok(Totals {
            files: files.max(0) as u64,
            bytes: bytes.max(0) as u64,
            dirs: dirs.max(0) as u64,
        })
    }

    /// Delete the directory `dir` (not the root) and every row below it; returns
    /// what was removed, counted from the rows.
    pub fn delete_subtree(&self, dir: &str) -> Result<Totals> {
        let Some((lo, hi)) = mpath::subtree_range(dir) else {
            return Err(Error::InvalidOperation(
                "cannot remove the root directory".into(),
            ));
        };
        (|| -> rusqlite::Result<Totals> {
            let conn = &self.conn;
            let (files, bytes): (i64, i64) = conn
                .prepare_cached(
                    "SELECT count(*), coalesce(sum(size), 0) FROM files \
                     WHERE path >= ?1 AND path < ?2",
                )?
                .query_row([&lo, &hi], |r| Ok((r.get(0)?, r.get(1)?)))?;
            conn.prepare_cached("DELETE FROM files WHERE path >= ?1 AND path < ?2")?
                .execute([&lo, &hi])?;
            let dirs = conn
                .prepare_cached("DELETE FROM dirs WHERE path >= ?1 AND path < ?2")?
                .execute([&lo, &hi])?;
            conn.prepare_cached("DELETE FROM dirs WHERE path = ?1")?
                .execute([dir])?;
            Ok(Totals {
                files: files.max(0) as u64,
                bytes: bytes.max(0) as u64,
                dirs: dirs as u64 + 1,
            })
        })()
        .at(&self.path)
    }

    /// Move the directory row at `old` (not the root) to `new`, and every row
    /// below it along (their paths rewritten; the counters stay as stored).
    pub fn move_dir_rows(&self, old: &str, new: &str) -> Result<()> {
        let Some((lo, hi)) = mpath::subtree_range(old) else {
            return Err(Error::InvalidOperation(
                "cannot rename the root directory".into(),
            ));
        };
        let conn = &self.conn;
        conn.prepare_cached("UPDATE dirs SET path = ?2 WHERE path = ?1")
            .and_then(|mut st| st.execute([old, new]))
            .at(&self.path)?;
        let from = old.chars().count() as i64 + 1;
        for sql in [
            "UPDATE dirs SET path = ?3 || substr(path, ?4) WHERE path >= ?1 AND path < ?2",
            "UPDATE files SET path = ?3 || substr(path, ?4) WHERE path >= ?1 AND path < ?2",
        ] {
            conn.prepare_cached(sql)
                .and_then(|mut st| st.execute(params![lo, hi, new, from]))
                .at(&self.path)?;
        }
        Ok(())
    }
}
