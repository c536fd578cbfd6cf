//! The SQLite index: opening it safely, and every SQL statement of the crate.
//! This module opens connections and reads the config; its submodules read rows
//! ([`scan`], `lookup`), decode them (`decode`), keep the directory statistics
//! right (`stats`), write rows (`write`), copy between indexes ([`copy`]), hold the
//! schema ([`schema`]) and answer verification's and the sidecar's questions.
//!
//! Connections are hardened for indexes from untrusted sources: defensive mode,
//! `trusted_schema` off, and on read-only connections triggers and views are
//! disabled outright, so that an index carrying malicious triggers or views executes
//! nothing when we only read it. Rows are decoded with explicit type and range
//! checks: a corrupt row is an error naming the row, never a panic.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::config::DbConfig;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension};

use crate::core::error::{Error, Result, SqlContext};
use schema::Version;

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

mod checks;
pub mod copy;
mod decode;
mod defrag_smart;
mod extents;
mod lookup;
pub mod ncdu;
pub mod pages;
mod pyapi;
pub mod scan;
pub mod schema;
mod stats;
pub mod work;
mod write;

pub use checks::Orphan;
pub(crate) use decode::{decode_dir, decode_file};
pub use extents::RawExtent;
pub(crate) use lookup::prefix_upper_bound;
pub use lookup::ShardUsage;
pub use pyapi::PathList;
pub use scan::{Bind, Cmp, Columns, Cond, ScanKey, ScanOrder, ScanPage, ScanSpec, Table};
pub use stats::{SizeRow, StatsMismatch};
pub use write::Totals;

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
    /// Queries only; the connection is opened read-only.
    ReadOnly,
    /// Queries and statements that change the index.
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

    /// The SQLite connection, for the few callers that run their own statements.
    pub fn conn(&self) -> &Connection {
        &self.conn
    }

    /// The index file's path (or the URL of a remote index), as messages show it.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the index was opened for writing.
    pub fn access(&self) -> Access {
        self.access
    }

    /// The schema version of the index.
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
}
