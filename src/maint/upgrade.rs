//! Upgrading an index of schema 0.0–0.2 to 0.3, in place.
//!
//! Schema 0.2 keeps the same columns in `WITHOUT ROWID` tables keyed by `path`,
//! lacks the two `prevent_*` triggers and has `del_subdir`/`move_subdir` triggers
//! that also subtract the moved directory's `num_files` from its parent, so its
//! statistics may be wrong. The upgrade builds a fresh 0.3 index next to the old
//! one (this crate's schema: the exact DDL and the ten triggers), copies every
//! directory, file and config row into it, recomputes all directory statistics
//! from the files (creating missing ancestors), and renames it over the old index.
//! The shards are not touched. Python barecat 0.3.1's own `upgrade` cannot run (it
//! imports a module that is not installed); this one does what its
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

use rusqlite::{Connection, OpenFlags};
use serde::Serialize;

use crate::core::error::{Error, IoContext, Result, SqlContext};
use crate::core::format::layout::Layout;
use crate::core::index::schema::{self, Version};
use crate::core::index::{copy, Index};
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
    /// File rows in the upgraded index.
    pub files: u64,
    /// Directory rows in the upgraded index.
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

/// Check that `table` of the old index is a table with every column of `cols`.
fn check_table(conn: &Connection, index: &Path, table: &str, cols: &str) -> Result<()> {
    let kind = schema::object_type(conn, table).at(index)?;
    if kind.as_deref() != Some("table") {
        return Err(Error::NotAnArchive {
            path: index.to_path_buf(),
            detail: format!("'{table}' is not a table"),
        });
    }
    let have = schema::table_columns(conn, table).at(index)?;
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
    check_table(&old, &index, "files", copy::OLD_FILE_COLS)?;
    check_table(&old, &index, "dirs", copy::OLD_DIR_COLS)?;
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
    // A WAL file beside the new index would belong to the old one.
    copy::leave_wal(&old).at(&index)?;
    copy::hold(&old).at(&index)?;
    steps.step();

    remove_stale_temps(&index, "upgrading")?;
    let temp = temp_name(&index, "upgrading");
    Layout::remove(&temp)?;
    let built = build(&index, &temp, &mut report, &mut steps);
    if let Err(e) = built {
        let _ = Layout::remove(&temp);
        copy::release(&old);
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
    crate::core::output::rename_into_place(&temp, &index)?;
    steps.step();
    copy::release(&old);
    drop(old);
    crate::records::table::after_change(path)?;
    Ok(report)
}

/// Build the new index at `temp` from the old one at `index`.
fn build(index: &Path, temp: &Path, report: &mut UpgradeReport, steps: &mut Steps) -> Result<()> {
    let new = Index::open_write(temp, true)?;
    if index.to_str().is_none() {
        return Err(Error::InvalidOperation(format!(
            "{}: the path is not UTF-8, which SQLite cannot attach",
            index.display()
        )));
    }
    new.attach(index, "old")?;
    steps.step();
    // Deferred: the old index is only read (another connection holds its reserved
    // lock), the first write takes the new one's.
    new.set_foreign_keys(false)?;
    new.begin()?;
    let copied = (|| -> Result<()> {
        new.set_use_triggers(false)?;
        report.files = new.copy_old_schema("old")?;
        report.dirs_corrected = new.rebuild_statistics()? as u64;
        report.dirs = new.count_dirs()?;
        new.commit()
    })();
    if let Err(e) = copied {
        let _ = new.rollback();
        return Err(e);
    }
    new.detach("old")?;
    new.set_foreign_keys(true)?;
    let orphans = new.foreign_key_violations()?;
    if orphans > 0 {
        return Err(Error::corrupt(
            index,
            format!("{orphans} row(s) whose parent directory is missing after the upgrade"),
        ));
    }
    new.optimize();
    crate::core::sidecar::emit_best_effort(&Layout::current(temp), new.conn());
    drop(new);
    crate::core::output::sync_dir(temp)
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
        return crate::core::output::rename_into_place(&tmp, backup);
    }
    crate::core::output::sync_dir(backup)
}
