//! Upgrading an index of schema 0.0–0.2 to 0.3, in place (docs/FORMAT.md §5).
//!
//! Schema 0.2 keeps the same columns in `WITHOUT ROWID` tables keyed by `path`,
//! lacks the two `prevent_*` triggers and has `del_subdir`/`move_subdir` triggers
//! that also subtract the moved directory's `num_files` from its parent, so its
//! statistics may be wrong. The upgrade builds a fresh 0.3 index next to the old
//! one (this crate's schema: the exact DDL and the ten triggers), copies every
//! directory, file and config row into it, recomputes all directory statistics
//! from the files (creating missing ancestors), and renames it over the old index.
//! The shards are not touched. Python barecat 0.3.1's own `upgrade` cannot run (it
//! imports a module that is not installed, docs/FORMAT.md §11.6); this one does what its
//! code would do, and also repairs the statistics the old triggers broke.
//!
//! # Crash safety
//!
//! The old index is locked against writers (SQLite's reserved lock, and this
//! crate's writer lock) for the whole run, and never written. The backup
//! `INDEX.old` is a hard link to the old index (a copy where the file system has
//! no hard links), made before the new index is renamed over it: at every instant
//! the archive's index is the old one or the new one, whole. The new sidecar is
//! put in place before the new index (until then readers take it for a stale one
//! and ignore it). A kill before the rename leaves the old archive as it was (plus
//! a temporary index that the next run removes); after it, the upgrade is done.
//! Running the command again finishes an interrupted upgrade.

use std::fs;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags, OptionalExtension};
use serde::Serialize;

use crate::core::error::{Error, IoContext, Result, SqlContext};
use crate::core::format::layout::Layout;
use crate::core::format::schema::{self, Version};
use crate::core::index::Index;
use crate::core::output::{remove_stale_temps, temp_name};
use crate::maint::inputs::same_file;

/// Options of [`upgrade`].
#[derive(Debug, Clone, Copy)]
pub struct UpgradeOptions {
    /// Keep the old index as `INDEX.old`.
    pub preserve_backup: bool,
    /// Write the B-tree sidecar of the new index.
    pub sidecar: bool,
    /// End the process abruptly after this many steps, as a crash would (tests).
    pub crash_after_steps: Option<u64>,
}

impl Default for UpgradeOptions {
    fn default() -> Self {
        UpgradeOptions {
            preserve_backup: true,
            sidecar: true,
            crash_after_steps: None,
        }
    }
}

/// What [`upgrade`] did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UpgradeReport {
    /// The index file.
    pub index: PathBuf,
    /// The schema version found.
    pub from: String,
    /// Nothing to do: the index is at schema 0.3 already.
    pub already_current: bool,
    pub files: u64,
    pub dirs: u64,
    /// Directory rows whose statistics were wrong (or missing) and were corrected.
    pub dirs_corrected: u64,
    /// The old index, kept.
    pub backup: Option<PathBuf>,
}

/// The backup name of `index`: `INDEX.old` (Python barecat's name).
pub fn backup_path(index: &Path) -> PathBuf {
    let mut s = index.as_os_str().to_owned();
    s.push(".old");
    PathBuf::from(s)
}

struct Steps {
    crash_after: Option<u64>,
    done: u64,
}

impl Steps {
    fn step(&mut self) {
        self.done += 1;
        if self.crash_after == Some(self.done) {
            // SAFETY: _exit ends the process at once, like a crash.
            unsafe { libc::_exit(86) };
        }
    }
}

/// The columns copied from each table, as (table, columns).
const FILE_COLS: &str = "path, shard, offset, size, crc32c, mode, uid, gid, mtime_ns";
const DIR_COLS: &str =
    "path, num_subdirs, num_files, num_files_tree, size_tree, mode, uid, gid, mtime_ns";

/// Check that `table` of the old index is a table with every column of `cols`.
fn check_table(conn: &Connection, index: &Path, table: &str, cols: &str) -> Result<()> {
    let kind: Option<String> = conn
        .query_row(
            "SELECT type FROM sqlite_schema WHERE name = ?1",
            [table],
            |r| r.get(0),
        )
        .optional()
        .at(index)?;
    if kind.as_deref() != Some("table") {
        return Err(Error::NotAnArchive {
            path: index.to_path_buf(),
            detail: format!("'{table}' is not a table"),
        });
    }
    let mut st = conn
        .prepare("SELECT name FROM pragma_table_xinfo(?1)")
        .at(index)?;
    let have: Vec<String> = st
        .query_map([table], |r| r.get(0))
        .at(index)?
        .collect::<rusqlite::Result<_>>()
        .at(index)?;
    for c in cols.split(", ") {
        if !have.iter().any(|h| h == c) {
            return Err(Error::UnsupportedSchema {
                path: index.to_path_buf(),
                detail: format!("table '{table}' has no column '{c}'; it cannot be upgraded"),
            });
        }
    }
    Ok(())
}

/// Upgrade the index of the archive at `path` to schema 0.3, in place.
pub fn upgrade(path: &Path, opts: &UpgradeOptions) -> Result<UpgradeReport> {
    let layout = Layout::resolve(path);
    let index = layout.index().to_path_buf();
    if !index.is_file() {
        return Err(Error::ArchiveNotFound {
            path: path.to_path_buf(),
        });
    }
    let mut steps = Steps {
        crash_after: opts.crash_after_steps,
        done: 0,
    };
    // No writer of ours may change the index from here (taken before the
    // connection, so that it is released after it: closing a descriptor of the
    // index drops the process's SQLite locks on it).
    let _lock = crate::core::index::lock_exclusive(&index)?;
    // Read-write, so that SQLite rolls back a hot journal a killed writer left; the
    // old index is never written.
    let old = crate::core::index::connect(
        &index,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .at(&index)?;
    old.busy_timeout(std::time::Duration::from_secs(5))
        .at(&index)?;
    let version: Version = schema::read_version(&old).map_err(|e| match e {
        rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::NotADatabase => {
            Error::NotAnArchive {
                path: index.clone(),
                detail: "not an SQLite database".into(),
            }
        }
        e => Error::sqlite(&index, e),
    })?;
    let mut report = UpgradeReport {
        index: index.clone(),
        from: version.to_string(),
        already_current: false,
        files: 0,
        dirs: 0,
        dirs_corrected: 0,
        backup: None,
    };
    if version.major > schema::MAJOR
        || (version.major == schema::MAJOR && version.minor > schema::MINOR)
    {
        return Err(Error::UnsupportedSchema {
            path: index.clone(),
            detail: format!("schema version {version} is newer than 0.3; upgrade barecat"),
        });
    }
    if version.major < 0 {
        return Err(Error::UnsupportedSchema {
            path: index.clone(),
            detail: "a pre-versioned (2023) index without a config table; only schemas \
                     0.0 to 0.2 are upgraded"
                .into(),
        });
    }
    if version.minor >= schema::MINOR {
        report.already_current = true;
        return Ok(report);
    }
    check_table(&old, &index, "files", FILE_COLS)?;
    check_table(&old, &index, "dirs", DIR_COLS)?;
    check_table(&old, &index, "config", "key, value_text, value_int")?;
    let backup = backup_path(&index);
    if opts.preserve_backup && fs::symlink_metadata(&backup).is_ok() && !same_file(&backup, &index)
    {
        return Err(Error::InvalidOperation(format!(
            "{}: exists and is not a backup of this index; move it away first (the \
             upgrade keeps the old index under this name)",
            backup.display()
        )));
    }
    let wal: String = old
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .at(&index)?;
    if wal.eq_ignore_ascii_case("wal") {
        // A WAL file beside the new index would belong to the old one.
        old.query_row("PRAGMA journal_mode = DELETE", [], |_| Ok(()))
            .at(&index)?;
    }
    old.execute_batch("BEGIN IMMEDIATE; SELECT count(*) FROM sqlite_schema;")
        .at(&index)?;
    steps.step();

    remove_stale_temps(&index, "upgrading")?;
    let temp = temp_name(&index, "upgrading");
    Layout::remove(&temp)?;
    let built = build(&index, &temp, &mut report, &mut steps);
    if let Err(e) = built {
        let _ = Layout::remove(&temp);
        let _ = old.execute_batch("ROLLBACK");
        return Err(e);
    }
    steps.step();
    // The new sidecar first: beside the old index a reader takes it for a stale one.
    let sidecar = Layout::current(&temp).sidecar();
    if opts.sidecar && sidecar.is_file() {
        fs::rename(&sidecar, layout.sidecar()).at(layout.sidecar())?;
    } else {
        crate::core::sidecar::remove(&layout)?;
    }
    steps.step();
    if opts.preserve_backup {
        keep_backup(&index, &backup)?;
        report.backup = Some(backup);
        steps.step();
    }
    fs::rename(&temp, &index).at(&index)?;
    crate::core::shards::sync_dir(&index)?;
    steps.step();
    let _ = old.execute_batch("ROLLBACK");
    drop(old);
    crate::records::table::after_change(path)?;
    Ok(report)
}

/// Build the new index at `temp` from the old one at `index`.
fn build(index: &Path, temp: &Path, report: &mut UpgradeReport, steps: &mut Steps) -> Result<()> {
    let new = Index::open_write(temp, true)?;
    let conn = new.conn();
    let old_name = index.to_str().ok_or_else(|| {
        Error::InvalidOperation(format!(
            "{}: the path is not UTF-8, which SQLite cannot attach",
            index.display()
        ))
    })?;
    conn.execute("ATTACH DATABASE ?1 AS old", [old_name])
        .at(temp)?;
    steps.step();
    // Deferred: the old index is only read (another connection holds its reserved
    // lock), the first write takes the new one's.
    conn.execute_batch("PRAGMA foreign_keys = OFF; BEGIN;")
        .at(temp)?;
    let copied = (|| -> Result<()> {
        conn.execute_batch("UPDATE main.config SET value_int = 0 WHERE key = 'use_triggers'")
            .at(temp)?;
        conn.execute(
            &format!(
                "INSERT INTO main.dirs ({DIR_COLS}) SELECT {DIR_COLS} FROM old.dirs \
                 WHERE path != '' ORDER BY path"
            ),
            [],
        )
        .at(temp)?;
        conn.execute(
            "UPDATE main.dirs SET (mode, uid, gid, mtime_ns) = \
             (SELECT mode, uid, gid, mtime_ns FROM old.dirs WHERE path = '') \
             WHERE path = '' AND EXISTS (SELECT 1 FROM old.dirs WHERE path = '')",
            [],
        )
        .at(temp)?;
        report.files = conn
            .execute(
                &format!(
                    "INSERT INTO main.files ({FILE_COLS}) SELECT {FILE_COLS} FROM old.files \
                     ORDER BY path"
                ),
                [],
            )
            .at(temp)? as u64;
        conn.execute(
            "INSERT OR REPLACE INTO main.config (key, value_text, value_int) \
             SELECT key, value_text, value_int FROM old.config \
             WHERE key NOT LIKE 'schema_version%' AND key != 'use_triggers'",
            [],
        )
        .at(temp)?;
        report.dirs_corrected = new.rebuild_statistics()? as u64;
        report.dirs = conn
            .query_row("SELECT count(*) FROM main.dirs", [], |r| r.get::<_, i64>(0))
            .at(temp)? as u64;
        conn.execute_batch("COMMIT").at(temp)
    })();
    if let Err(e) = copied {
        let _ = conn.execute_batch("ROLLBACK");
        return Err(e);
    }
    conn.execute_batch("DETACH DATABASE old; PRAGMA foreign_keys = ON;")
        .at(temp)?;
    let orphans: i64 = conn
        .query_row("SELECT count(*) FROM pragma_foreign_key_check", [], |r| {
            r.get(0)
        })
        .at(temp)?;
    if orphans > 0 {
        return Err(Error::corrupt(
            index,
            format!("{orphans} row(s) whose parent directory is missing after the upgrade"),
        ));
    }
    let _ = conn.execute_batch("PRAGMA optimize");
    crate::core::sidecar::emit_best_effort(&Layout::current(temp), conn);
    drop(new);
    crate::core::shards::sync_dir(temp)
}

/// Keep the old index as `backup`: a hard link (or, where there are none, a synced
/// copy renamed into place). An existing `backup` is the same file already.
fn keep_backup(index: &Path, backup: &Path) -> Result<()> {
    if same_file(index, backup) {
        return Ok(());
    }
    if fs::hard_link(index, backup).is_err() {
        let mut tmp = backup.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        fs::copy(index, &tmp).at(&tmp)?;
        fs::File::open(&tmp).and_then(|f| f.sync_all()).at(&tmp)?;
        fs::rename(&tmp, backup).at(backup)?;
    }
    crate::core::shards::sync_dir(backup)
}
