//! The SQLite index: opening it safely, reading rows, and keeping the directory
//! statistics right.
//!
//! Connections are hardened for indexes from untrusted sources: defensive mode,
//! `trusted_schema` off, and on read-only connections triggers and views are
//! disabled outright, so that an index carrying malicious triggers or views executes
//! nothing when we only read it. Rows are decoded with explicit type and range
//! checks: a corrupt row is an error naming the row, never a panic.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::config::DbConfig;
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{params, Connection, ErrorCode, OpenFlags, OptionalExtension, Row, ToSql};

use crate::core::entry::Listing;
use crate::core::entry::{DirInfo, Entry, FileInfo, Meta, Order};
use crate::core::error::{Error, Result, SqlContext};
use crate::core::format::schema::{self, Version};
use crate::core::glob::Glob;
use crate::core::path as mpath;

pub mod scan;
pub mod work;

pub use scan::{Bind, Cmp, Cond, ScanKey, ScanOrder, ScanPage, ScanSpec, Table};

/// The columns selected for a `FileInfo`, in decoding order (a macro, so that the
/// point lookups below are string constants: a lookup by path then formats nothing).
macro_rules! file_cols {
    () => {
        "path, shard, offset, size, crc32c, mode, uid, gid, mtime_ns"
    };
}
/// The columns selected for a `DirInfo`, in decoding order.
macro_rules! dir_cols {
    () => {
        "path, num_subdirs, num_files, num_files_tree, size_tree, mode, uid, gid, mtime_ns"
    };
}
/// Columns selected for a `FileInfo`, in decoding order.
pub(crate) const FILE_COLS: &str = file_cols!();
/// Columns selected for a `DirInfo`, in decoding order.
pub(crate) const DIR_COLS: &str = dir_cols!();

/// SQL for the parent of the column `x`, identical to the generated column. SQLite's
/// string functions stop at a NUL byte, so in a damaged index a value holding one
/// can be its own parent: a recursion over parents must stop when nothing changes.
pub(crate) fn parent_sql(x: &str) -> String {
    format!("rtrim(rtrim({x}, replace({x}, '/', '')), '/')")
}

/// Wall-clock time in nanoseconds since the epoch.
pub fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

/// How an index is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    ReadOnly,
    ReadWrite,
}

/// An open SQLite index.
pub struct Index {
    conn: Connection,
    path: PathBuf,
    access: Access,
    version: Version,
}

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Index")
            .field("path", &self.path)
            .field("access", &self.access)
            .field("version", &self.version)
            .finish()
    }
}

fn harden(conn: &Connection, access: Access) -> rusqlite::Result<()> {
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA, false)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_ATTACH_CREATE, false)?;
    if access == Access::ReadOnly {
        // Reading never needs triggers or views; with them off, an index that carries
        // malicious ones cannot run anything, and a `files` view is refused.
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_TRIGGER, false)?;
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_VIEW, false)?;
    }
    conn.busy_timeout(Duration::from_secs(5))?;
    // 8 MB of page cache per connection, which a scan of 100k files already fills:
    // memory stays flat however large the index grows (the operating system's page
    // cache holds the rest). SQLite's sorter gets as much (its in-memory runs are
    // `cache_size` pages), and sorts and temporary tables beyond it spill to an
    // unlinked temporary file (SQLite's default temp store), so that sorting
    // millions of rows (`du -a`) needs bounded memory too.
    conn.execute_batch(
        "PRAGMA cell_size_check = ON;
         PRAGMA cache_size = -8000;",
    )?;
    work::install(conn);
    if access == Access::ReadWrite {
        conn.execute_batch("PRAGMA recursive_triggers = ON; PRAGMA foreign_keys = ON;")?;
    }
    conn.set_prepared_statement_cache_capacity(64);
    Ok(())
}

fn is_code(e: &rusqlite::Error, code: ErrorCode) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _) if f.code == code)
}

/// Every connection to a local index is made here, after the fork-safe mutexes
/// are installed ([`crate::core::fork`]).
pub(crate) fn connect(path: &Path, flags: OpenFlags) -> rusqlite::Result<Connection> {
    crate::core::fork::install();
    Connection::open_with_flags(path, flags)
}

fn not_an_archive(path: &Path, e: rusqlite::Error) -> Error {
    if is_code(&e, ErrorCode::NotADatabase) {
        Error::NotAnArchive {
            path: path.to_path_buf(),
            detail: "not an SQLite database".into(),
        }
    } else {
        Error::sqlite(path, e)
    }
}

/// The lock every writer of an index holds for as long as it writes: an exclusive
/// `flock` on the index file, taken without waiting ([`Error::Locked`] when another
/// writer has it). Only our writers take it; SQLite's own locks still guard
/// against every other client.
pub(crate) fn lock_exclusive(path: &Path) -> Result<std::fs::File> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    let rc = unsafe {
        libc::flock(
            std::os::fd::AsRawFd::as_raw_fd(&f),
            libc::LOCK_EX | libc::LOCK_NB,
        )
    };
    if rc != 0 {
        let e = std::io::Error::last_os_error();
        return Err(if e.kind() == std::io::ErrorKind::WouldBlock {
            Error::Locked {
                path: path.to_path_buf(),
            }
        } else {
            Error::io(path, e)
        });
    }
    Ok(f)
}

impl Index {
    /// Open an existing index read-only. A hot journal left by a killed writer is
    /// rolled back first (through a short-lived read-write connection) when the file
    /// system allows it.
    pub fn open_read(path: &Path) -> Result<Index> {
        if !path.is_file() {
            return Err(Error::ArchiveNotFound {
                path: path.to_path_buf(),
            });
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let open = || -> rusqlite::Result<Connection> {
            let conn = connect(path, flags)?;
            harden(&conn, Access::ReadOnly)?;
            conn.query_row("SELECT count(*) FROM sqlite_schema", [], |_| Ok(()))?;
            Ok(conn)
        };
        let conn = match open() {
            Ok(c) => c,
            Err(e) if is_code(&e, ErrorCode::ReadOnly) || is_code(&e, ErrorCode::CannotOpen) => {
                Self::recover_hot_journal(path).map_err(|_| Error::sqlite(path, e))?;
                open().map_err(|e| not_an_archive(path, e))?
            }
            Err(e) => return Err(not_an_archive(path, e)),
        };
        Self::finish_open(conn, path, Access::ReadOnly)
    }

    /// Open the index of a remote archive, read-only, through the remote VFS
    /// ([`crate::core::remote::vfs`]). `url` names it in messages.
    pub fn open_remote(reg: &crate::core::remote::vfs::Registration, url: &Path) -> Result<Index> {
        let open = || -> rusqlite::Result<Connection> {
            let conn = reg.connect()?;
            harden(&conn, Access::ReadOnly)?;
            conn.query_row("SELECT count(*) FROM sqlite_schema", [], |_| Ok(()))?;
            Ok(conn)
        };
        let conn = open().map_err(|e| not_an_archive(url, e))?;
        Self::finish_open(conn, url, Access::ReadOnly)
    }

    fn recover_hot_journal(path: &Path) -> rusqlite::Result<()> {
        let conn = connect(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(Duration::from_secs(5))?;
        conn.query_row("SELECT count(*) FROM sqlite_schema", [], |_| Ok(()))
    }

    /// Open an index for writing. With `create`, a missing index (or an empty
    /// database file) gets the schema and the root directory.
    pub fn open_write(path: &Path, create: bool) -> Result<Index> {
        let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        if create {
            // Created here rather than by SQLite, whose "unable to open database
            // file" would hide the reason (a read-only file system, a full disk, no
            // permission).
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
            {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(Error::io(path, e)),
            }
            flags |= OpenFlags::SQLITE_OPEN_CREATE;
        } else if !path.is_file() {
            return Err(Error::ArchiveNotFound {
                path: path.to_path_buf(),
            });
        }
        let conn = connect(path, flags).map_err(|e| not_an_archive(path, e))?;
        harden(&conn, Access::ReadWrite).map_err(|e| not_an_archive(path, e))?;
        let empty: bool = conn
            .query_row("SELECT count(*) = 0 FROM sqlite_schema", [], |r| r.get(0))
            .map_err(|e| not_an_archive(path, e))?;
        if empty {
            if !create {
                return Err(Error::NotAnArchive {
                    path: path.to_path_buf(),
                    detail: "empty database".into(),
                });
            }
            let uid = unsafe { libc::getuid() };
            let gid = unsafe { libc::getgid() };
            let tx = conn.unchecked_transaction().at(path)?;
            schema::create(&tx, uid, gid, now_ns()).at(path)?;
            tx.commit().at(path)?;
        }
        let index = Self::finish_open(conn, path, Access::ReadWrite)?;
        index.repair_interrupted_bulk()?;
        Ok(index)
    }

    /// True when `path` is an SQLite database without any table (or an empty file):
    /// what a writer killed while creating an index leaves. A hot journal is rolled
    /// back first. False when the file does not exist.
    pub fn is_empty_database(path: &Path) -> Result<bool> {
        let md = match std::fs::metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(Error::io(path, e)),
        };
        if !md.is_file() {
            return Ok(false);
        }
        if md.len() == 0 {
            return Ok(true);
        }
        let conn = connect(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| not_an_archive(path, e))?;
        harden(&conn, Access::ReadOnly).map_err(|e| not_an_archive(path, e))?;
        conn.query_row("SELECT count(*) = 0 FROM sqlite_schema", [], |r| r.get(0))
            .map_err(|e| not_an_archive(path, e))
    }

    fn finish_open(conn: Connection, path: &Path, access: Access) -> Result<Index> {
        for table in ["files", "dirs", "config"] {
            let kind: Option<String> = conn
                .query_row(
                    "SELECT type FROM sqlite_schema WHERE name = ?1",
                    [table],
                    |r| r.get(0),
                )
                .optional()
                .map_err(|e| not_an_archive(path, e))?;
            match kind.as_deref() {
                Some("table") => {}
                Some(other) => {
                    return Err(Error::NotAnArchive {
                        path: path.to_path_buf(),
                        detail: format!("'{table}' is a {other}, not a table"),
                    })
                }
                None if table == "config" => {}
                None => {
                    return Err(Error::NotAnArchive {
                        path: path.to_path_buf(),
                        detail: format!("no '{table}' table"),
                    })
                }
            }
        }
        let version = schema::read_version(&conn).map_err(|e| not_an_archive(path, e))?;
        let unsupported = |detail: String| Error::UnsupportedSchema {
            path: path.to_path_buf(),
            detail,
        };
        if version.major > schema::MAJOR {
            return Err(unsupported(format!(
                "schema version {version} is newer than the supported 0.3; upgrade barecat"
            )));
        }
        if version.major < 0 {
            return Err(unsupported(
                "pre-0.2 index without a schema version; it cannot be read".into(),
            ));
        }
        if access == Access::ReadWrite && version.minor < schema::MINOR {
            return Err(Error::ReadOnly {
                path: path.to_path_buf(),
                reason: format!("schema {version} archives are read-only here"),
            });
        }
        Ok(Index {
            conn,
            path: path.to_path_buf(),
            access,
            version,
        })
    }

    /// A committed `use_triggers = 0` means a bulk operation (of another tool; ours
    /// never commit it) was interrupted: the statistics may be stale. Rebuild them,
    /// then turn triggers back on.
    fn repair_interrupted_bulk(&self) -> Result<()> {
        if self.use_triggers()? {
            return Ok(());
        }
        self.rebuild_statistics().map(drop)
    }

    /// Warnings worth showing to a user who opened this index.
    pub fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if self.version.minor < schema::MINOR {
            w.push(format!(
                "{}: schema {} has a trigger bug that may leave directory statistics wrong; \
                 opened read-only (barecat upgrade converts it to 0.3)",
                self.path.display(),
                self.version
            ));
        } else if self.version.minor > schema::MINOR {
            w.push(format!(
                "{}: schema {} is newer than 0.3; some features may not work",
                self.path.display(),
                self.version
            ));
        }
        w
    }

    pub fn conn(&self) -> &Connection {
        &self.conn
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn access(&self) -> Access {
        self.access
    }

    pub fn version(&self) -> Version {
        self.version
    }

    fn config_int(&self, key: &str) -> Result<Option<i64>> {
        self.conn
            .query_row("SELECT value_int FROM config WHERE key = ?1", [key], |r| {
                Ok(match r.get_ref(0)? {
                    ValueRef::Integer(i) => Ok(Some(i)),
                    ValueRef::Null => Ok(None),
                    other => Err(format!("config {key} has type {:?}", other.data_type())),
                })
            })
            .optional()
            .at(&self.path)?
            .transpose()
            .map_err(|d| Error::corrupt(&self.path, d))
            .map(Option::flatten)
    }

    /// The stored shard size limit (`i64::MAX` = unlimited).
    pub fn shard_size_limit(&self) -> Result<u64> {
        match self.config_int("shard_size_limit")? {
            Some(v) if v > 0 => Ok(v as u64),
            Some(v) => Err(Error::corrupt(
                &self.path,
                format!("shard_size_limit is {v}"),
            )),
            None => Err(Error::corrupt(
                &self.path,
                "config row shard_size_limit missing",
            )),
        }
    }

    /// Store a new shard size limit.
    pub fn set_shard_size_limit(&self, limit: u64) -> Result<()> {
        let v = i64::try_from(limit).unwrap_or(i64::MAX);
        self.conn
            .execute(
                "UPDATE config SET value_int = ?1 WHERE key = 'shard_size_limit'",
                [v],
            )
            .at(&self.path)?;
        Ok(())
    }

    /// Switch this connection in or out of bulk mode, between transactions. In bulk
    /// mode the connection runs no triggers and checks no foreign keys, so inserts
    /// compile to plain row and index writes (no trigger programs, no statement
    /// journal); the bulk writer inserts parents before children itself. Other
    /// connections are unaffected.
    pub(crate) fn set_bulk_mode(&self, on: bool) -> Result<()> {
        let c = &self.conn;
        c.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_TRIGGER, !on)
            .at(&self.path)?;
        c.execute_batch(if on {
            "PRAGMA foreign_keys = OFF"
        } else {
            "PRAGMA foreign_keys = ON"
        })
        .at(&self.path)
    }

    /// Is `config.use_triggers` 1?
    pub fn use_triggers(&self) -> Result<bool> {
        Ok(self.config_int("use_triggers")? == Some(1))
    }

    pub(crate) fn set_use_triggers(&self, on: bool) -> Result<()> {
        self.conn
            .execute(
                "UPDATE config SET value_int = ?1 WHERE key = 'use_triggers'",
                [on as i64],
            )
            .at(&self.path)?;
        Ok(())
    }

    // ----------------------------------------------------------------- row decoding

    pub(crate) fn decode_file(&self, row: &Row<'_>) -> Result<FileInfo> {
        decode_file(row).map_err(|d| Error::corrupt(&self.path, d))
    }

    pub(crate) fn decode_dir(&self, row: &Row<'_>) -> Result<DirInfo> {
        decode_dir(row).map_err(|d| Error::corrupt(&self.path, d))
    }

    fn query_files<P: rusqlite::Params>(&self, sql: &str, p: P) -> Result<Vec<FileInfo>> {
        let mut stmt = self.conn.prepare_cached(sql).at(&self.path)?;
        let mut rows = stmt.query(p).at(&self.path)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().at(&self.path)? {
            out.push(self.decode_file(row)?);
        }
        Ok(out)
    }

    fn query_dirs<P: rusqlite::Params>(&self, sql: &str, p: P) -> Result<Vec<DirInfo>> {
        let mut stmt = self.conn.prepare_cached(sql).at(&self.path)?;
        let mut rows = stmt.query(p).at(&self.path)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().at(&self.path)? {
            out.push(self.decode_dir(row)?);
        }
        Ok(out)
    }

    // ----------------------------------------------------------------- lookups

    /// The file at `path` (already normalized), if any.
    pub fn file(&self, path: &str) -> Result<Option<FileInfo>> {
        Ok(self
            .query_files(
                concat!("SELECT ", file_cols!(), " FROM files WHERE path = ?1"),
                [path],
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
        if !self.is_dir(dir)? {
            return Err(if self.is_file(dir)? {
                Error::NotADirectory(dir.to_string())
            } else {
                Error::NotFound(dir.to_string())
            });
        }
        Ok(Listing {
            dirs: self.child_dirs(dir)?,
            files: self.child_files(dir)?,
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
        let prefix = glob.literal_prefix().as_bytes().to_vec();
        let upper = prefix_upper_bound(&prefix);
        let mut out = Vec::new();
        for (table, cols) in [("files", FILE_COLS), ("dirs", DIR_COLS)] {
            let sql = format!(
                "SELECT {cols} FROM {table} WHERE path >= ?1 AND (?2 IS NULL OR path < ?2) \
                 AND path != '' ORDER BY path"
            );
            let mut stmt = self.conn.prepare_cached(&sql).at(&self.path)?;
            let lo = RawText(&prefix);
            let hi = upper.as_deref().map(RawText);
            let mut rows = stmt.query((&lo, &hi)).at(&self.path)?;
            while let Some(row) = rows.next().at(&self.path)? {
                let path: &str = match row.get_ref(0).at(&self.path)? {
                    ValueRef::Text(t) => std::str::from_utf8(t).unwrap_or(""),
                    _ => "",
                };
                if !glob.is_match(path) {
                    continue;
                }
                out.push(if table == "files" {
                    Entry::File(self.decode_file(row)?)
                } else {
                    Entry::Dir(self.decode_dir(row)?)
                });
            }
        }
        out.sort_by(|a, b| a.path().cmp(b.path()));
        Ok(out)
    }

    /// One page of files in the given order, strictly after `cursor`, optionally
    /// restricted to the subtree below `within` (a directory path; `""` = all).
    pub fn files_page(
        &self,
        order: Order,
        cursor: &Cursor,
        within: &str,
        limit: usize,
    ) -> Result<(Vec<FileInfo>, Cursor)> {
        let (lo, hi) = mpath::subtree_range(within).unwrap_or_default();
        let scope = if within.is_empty() {
            "1"
        } else {
            "path >= :lo AND path < :hi"
        };
        let (k1, k2, k3, k4) = cursor.parts();
        // The first page has no key condition at all: a condition like
        // `(:k IS NULL OR path > :k)` cannot be used to seek, so every page would
        // scan the index from its start (a quadratic walk).
        let started = match order {
            Order::Path => k1.is_some(),
            Order::Address => k2.is_some() && k3.is_some() && k4.is_some(),
            Order::Insertion => k4.is_some(),
        };
        let (key_cond, order_by) = match order {
            Order::Path => ("path > :k1", "path"),
            Order::Address => (
                "(shard, offset, rowid) > (:k2, :k3, :k4)",
                "shard, offset, rowid",
            ),
            Order::Insertion => ("rowid > :k4", "rowid"),
        };
        let key_cond = if started { key_cond } else { "1" };
        let sql = format!(
            "SELECT {FILE_COLS}, rowid FROM files WHERE {scope} AND {key_cond} \
             ORDER BY {order_by} LIMIT :limit"
        );
        let limit = limit as i64;
        let mut stmt = self.conn.prepare_cached(&sql).at(&self.path)?;
        let mut named: Vec<(&str, &dyn rusqlite::ToSql)> = vec![(":limit", &limit)];
        if !within.is_empty() {
            named.push((":lo", &lo));
            named.push((":hi", &hi));
        }
        if started {
            match order {
                Order::Path => named.push((":k1", &k1)),
                Order::Address => {
                    named.push((":k2", &k2));
                    named.push((":k3", &k3));
                    named.push((":k4", &k4));
                }
                Order::Insertion => named.push((":k4", &k4)),
            }
        }
        let mut rows = stmt.query(named.as_slice()).at(&self.path)?;
        let mut out = Vec::new();
        let mut next = cursor.clone();
        while let Some(row) = rows.next().at(&self.path)? {
            let fi = self.decode_file(row)?;
            let rowid: i64 = row.get(9).at(&self.path)?;
            next = Cursor::after(order, &fi, rowid);
            out.push(fi);
        }
        Ok((out, next))
    }

    /// One page of directories by path, strictly after `after`, optionally restricted
    /// to `within` and its subtree (including `within` itself).
    pub fn dirs_page(
        &self,
        after: Option<&str>,
        within: &str,
        limit: usize,
    ) -> Result<Vec<DirInfo>> {
        let limit = limit as i64;
        // As in `files_page`: no `?1 IS NULL OR …` key condition, which cannot seek.
        let key = if after.is_some() {
            "path > ?1"
        } else {
            "?1 IS NULL"
        };
        match mpath::subtree_range(within) {
            None => self.query_dirs(
                &format!("SELECT {DIR_COLS} FROM dirs WHERE {key} ORDER BY path LIMIT ?2"),
                params![after, limit],
            ),
            Some((lo, hi)) => self.query_dirs(
                &format!(
                    "SELECT {DIR_COLS} FROM dirs WHERE path >= ?3 AND path < ?5 \
                     AND (path = ?3 OR path >= ?4) AND {key} ORDER BY path LIMIT ?2"
                ),
                params![after, limit, within, lo, hi],
            ),
        }
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

    /// The directory at `path` (already normalized) and its row id.
    pub fn dir_with_id(&self, path: &str) -> Result<Option<(i64, DirInfo)>> {
        Ok(self
            .dirs_with_ids(
                &format!("SELECT {DIR_COLS}, rowid FROM dirs WHERE path = ?1"),
                params![path],
            )?
            .pop())
    }

    /// Up to `limit` subdirectories directly in `dir` whose row id is greater than
    /// `after`, in row-id order. The `(parent, rowid)` index hands them out in that
    /// order, so each page costs `limit` index steps however large the directory,
    /// and a listing resumes from the last id without holding anything open.
    pub fn child_dirs_after(
        &self,
        dir: &str,
        after: i64,
        limit: usize,
    ) -> Result<Vec<(i64, DirInfo)>> {
        self.dirs_with_ids(
            &format!(
                "SELECT {DIR_COLS}, rowid FROM dirs \
                 WHERE parent = ?1 AND rowid > ?2 ORDER BY rowid LIMIT ?3"
            ),
            params![dir, after, limit as i64],
        )
    }

    /// Like [`child_dirs_after`](Self::child_dirs_after), for the files directly in `dir`.
    pub fn child_files_after(
        &self,
        dir: &str,
        after: i64,
        limit: usize,
    ) -> Result<Vec<(i64, FileInfo)>> {
        self.files_with_ids(
            &format!(
                "SELECT {FILE_COLS}, rowid FROM files \
                 WHERE parent = ?1 AND rowid > ?2 ORDER BY rowid LIMIT ?3"
            ),
            params![dir, after, limit as i64],
        )
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

    // ----------------------------------------------------------------- statistics

    /// Insert a bare dirs row for every missing ancestor of every file and directory,
    /// and for the root (docs/FORMAT.md §4.3). Run with triggers off. Returns the rows added.
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

    /// Recompute the four counters of every dirs row from `files` and `dirs` (spec
    /// docs/FORMAT.md §4.3) with a handful of set-based statements. Run with triggers off. Returns
    /// the rows changed.
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

    /// Create every missing ancestor directory (docs/FORMAT.md §4.3) and recompute every
    /// directory's counters (docs/FORMAT.md §4.3), atomically: the work runs in a savepoint with
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

/// Bind raw bytes as SQLite TEXT (for range bounds that need not be valid UTF-8).
struct RawText<'a>(&'a [u8]);

impl ToSql for RawText<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(ValueRef::Text(self.0)))
    }
}

/// The smallest byte string greater than every string that starts with `prefix`,
/// or `None` when there is none (empty prefix or all 0xFF).
fn prefix_upper_bound(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut hi = prefix.to_vec();
    while let Some(last) = hi.pop() {
        if last < 0xFF {
            hi.push(last + 1);
            return Some(hi);
        }
    }
    None
}

/// Where a paged iteration stands.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cursor {
    path: Option<String>,
    shard: Option<i64>,
    offset: Option<i64>,
    rowid: Option<i64>,
}

impl Cursor {
    /// Before the first row.
    pub fn start() -> Cursor {
        Cursor::default()
    }

    fn after(order: Order, fi: &FileInfo, rowid: i64) -> Cursor {
        match order {
            Order::Path => Cursor {
                path: Some(fi.path.clone()),
                ..Cursor::default()
            },
            Order::Address => Cursor {
                shard: Some(fi.shard as i64),
                offset: Some(fi.offset as i64),
                rowid: Some(rowid),
                ..Cursor::default()
            },
            Order::Insertion => Cursor {
                rowid: Some(rowid),
                ..Cursor::default()
            },
        }
    }

    #[allow(clippy::type_complexity)]
    fn parts(&self) -> (Option<String>, Option<i64>, Option<i64>, Option<i64>) {
        (self.path.clone(), self.shard, self.offset, self.rowid)
    }
}

/// Use of one shard according to the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardUsage {
    pub shard: u64,
    pub logical_end: u64,
    pub files: u64,
    pub live_bytes: u64,
}

/// A directory whose stored counters are wrong. Counters are in the order
/// num_files, num_subdirs, num_files_tree, size_tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatsMismatch {
    pub path: String,
    pub stored: [Option<i64>; 4],
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

// ------------------------------------------------------------------- decoding helpers

fn text(row: &Row<'_>, i: usize, what: &str) -> std::result::Result<String, String> {
    match row.get_ref(i).map_err(|e| e.to_string())? {
        ValueRef::Text(t) => std::str::from_utf8(t)
            .map(str::to_owned)
            .map_err(|_| format!("{what} is not valid UTF-8")),
        other => Err(format!("{what} has type {:?}", other.data_type())),
    }
}

fn opt_int(row: &Row<'_>, i: usize) -> std::result::Result<Option<i64>, String> {
    match row.get_ref(i).map_err(|e| e.to_string())? {
        ValueRef::Integer(v) => Ok(Some(v)),
        ValueRef::Null => Ok(None),
        // Python's float-noised values are stored as integers; a REAL that holds an
        // exact integer is accepted too.
        ValueRef::Real(f) if f.fract() == 0.0 && f.abs() < 9.0e18 => Ok(Some(f as i64)),
        other => Err(format!("has type {:?}", other.data_type())),
    }
}

fn field<T>(
    path: &str,
    name: &str,
    v: std::result::Result<Option<i64>, String>,
    conv: impl FnOnce(Option<i64>) -> Option<T>,
) -> std::result::Result<T, String> {
    let v = v.map_err(|e| format!("row {path:?}: {name} {e}"))?;
    conv(v).ok_or_else(|| match v {
        Some(x) => format!("row {path:?}: {name} is out of range ({x})"),
        None => format!("row {path:?}: {name} is NULL"),
    })
}

fn opt_u32(
    path: &str,
    name: &str,
    row: &Row<'_>,
    i: usize,
) -> std::result::Result<Option<u32>, String> {
    field(path, name, opt_int(row, i), |v| match v {
        None => Some(None),
        Some(x) => u32::try_from(x).ok().map(Some),
    })
}

fn meta(path: &str, row: &Row<'_>, first: usize) -> std::result::Result<Meta, String> {
    Ok(Meta {
        mode: opt_u32(path, "mode", row, first)?,
        uid: opt_u32(path, "uid", row, first + 1)?,
        gid: opt_u32(path, "gid", row, first + 2)?,
        mtime_ns: field(path, "mtime_ns", opt_int(row, first + 3), Some)?,
    })
}

pub(crate) fn decode_file(row: &Row<'_>) -> std::result::Result<FileInfo, String> {
    let path = text(row, 0, "files.path")?;
    let nonneg = |v: Option<i64>| v.and_then(|x| u64::try_from(x).ok());
    let shard = field(&path, "shard", opt_int(row, 1), nonneg)?;
    let offset = field(&path, "offset", opt_int(row, 2), nonneg)?;
    let size = field(&path, "size", opt_int(row, 3), |v| match v {
        None => Some(0), // DEFAULT 0; NULL treated as empty
        Some(x) => u64::try_from(x).ok(),
    })?;
    let crc32c = field(&path, "crc32c", opt_int(row, 4), |v| match v {
        None => Some(None),
        Some(x) => u32::try_from(x).ok().map(Some),
    })?;
    if offset.checked_add(size).is_none_or(|e| e > i64::MAX as u64) {
        return Err(format!(
            "row {path:?}: offset {offset} + size {size} overflows"
        ));
    }
    let meta = meta(&path, row, 5)?;
    Ok(FileInfo {
        path,
        shard,
        offset,
        size,
        crc32c,
        meta,
    })
}

pub(crate) fn decode_dir(row: &Row<'_>) -> std::result::Result<DirInfo, String> {
    let path = text(row, 0, "dirs.path")?;
    let count =
        |i: usize, name: &str| field(&path, name, opt_int(row, i), |v| Some(v.unwrap_or(0)));
    Ok(DirInfo {
        num_subdirs: count(1, "num_subdirs")?,
        num_files: count(2, "num_files")?,
        num_files_tree: count(3, "num_files_tree")?,
        size_tree: count(4, "size_tree")?,
        meta: meta(&path, row, 5)?,
        path,
    })
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
