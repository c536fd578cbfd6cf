//! Writing a sidecar for an index: the pages `select` chooses (with SQLite's
//! `dbstat` over every page as the fallback), read straight from the index file
//! inside one read transaction, written beside the index under a temporary name
//! and renamed into place.
//!
//! The page bytes are read from the file at `(pageno - 1) * page_size`, which is
//! what SQLite holds only when the committed state lives entirely in the main file:
//! a rollback-journal index (`off`, `delete`, `memory`, `truncate`, `persist`).
//! A WAL index may park committed pages in its `-wal` file, so it is refused
//! (`unsupported_journal_mode`) rather than described incompletely. The read
//! transaction holds SQLite's shared lock from the selection to the last page
//! read, so no writer (ours or anyone's) can commit in between; the pages are read
//! through SQLite's own file handle (`super::raw`).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use rusqlite::Connection;

use super::raw::RawFile;
use crate::core::error::{Error, IoContext, Result};
use crate::core::format::layout::Layout;
use crate::core::format::sidecar::{encode_pages, page_range, WRITER_LEVEL};

use crate::core::index::pages;
pub use crate::core::index::pages::SELECTION_SQL;

/// Journal modes in which every committed page is in the main file.
pub const SAFE_JOURNAL_MODES: [&str; 5] = ["off", "delete", "memory", "truncate", "persist"];

/// Why no sidecar was written. [`reason`](Refusal::reason) gives the stable
/// reason names (those of the reference producer `tests/py/btreemeta_ref.py`);
/// [`is_expected`](Refusal::is_expected) tells the refusals a writer stays
/// silent about from the failures worth a warning.
#[derive(Debug)]
pub enum Refusal {
    /// The index is in a WAL-family journal mode.
    UnsupportedJournalMode {
        /// The index's journal mode.
        mode: String,
    },
    /// This SQLite build has no `dbstat` virtual table.
    DbstatUnavailable {
        /// SQLite's message.
        detail: String,
    },
    /// `PRAGMA page_size` did not return a usable page size.
    InvalidPageSize {
        /// What the pragma returned.
        value: String,
    },
    /// The index file ends before a page `dbstat` listed.
    ShortPageRead {
        /// The page that was read.
        pageno: u32,
        /// How many bytes the read got.
        got: usize,
    },
    /// Anything else (I/O, SQLite busy, a full disk while writing the file, …).
    Failed(Error),
}

impl Refusal {
    /// The reason name (`unsupported_journal_mode`, `dbstat_unavailable`, …).
    pub fn reason(&self) -> &'static str {
        match self {
            Refusal::UnsupportedJournalMode { .. } => "unsupported_journal_mode",
            Refusal::DbstatUnavailable { .. } => "dbstat_unavailable",
            Refusal::InvalidPageSize { .. } => "invalid_page_size",
            Refusal::ShortPageRead { .. } => "short_page_read",
            Refusal::Failed(_) => "failed",
        }
    }

    /// Refusals logged at debug level only (docs/FORMAT.md §9.2): the index is
    /// simply not one a sidecar can describe. The others are failures (a warning).
    pub fn is_expected(&self) -> bool {
        matches!(
            self,
            Refusal::UnsupportedJournalMode { .. } | Refusal::DbstatUnavailable { .. }
        )
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::UnsupportedJournalMode { mode } => write!(
                f,
                "the index is in journal mode {mode}; a sidecar needs a rollback journal \
                 (off, delete, memory, truncate, persist)"
            ),
            Refusal::DbstatUnavailable { detail } => {
                write!(f, "SQLite's dbstat table is unavailable: {detail}")
            }
            Refusal::InvalidPageSize { value } => {
                write!(f, "the index reports an invalid page size {value:?}")
            }
            Refusal::ShortPageRead { pageno, got } => write!(
                f,
                "the index file ends inside page {pageno} ({got} bytes read)"
            ),
            Refusal::Failed(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Refusal {}

impl From<Error> for Refusal {
    fn from(e: Error) -> Self {
        Refusal::Failed(e)
    }
}

/// A sidecar built in memory.
#[derive(Debug, Clone)]
pub struct Built {
    /// The file's bytes.
    pub bytes: Vec<u8>,
    /// The index's page size.
    pub page_size: u32,
    /// Number of pages bundled.
    pub pages: u32,
    /// Size of the index file.
    pub index_bytes: u64,
}

/// A sidecar written beside its index.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Written {
    /// Where it was written (`<index>-btreemeta`).
    pub path: PathBuf,
    /// The index's page size.
    pub page_size: u32,
    /// Number of pages bundled.
    pub pages: u32,
    /// Size of the sidecar file.
    pub bytes: u64,
    /// Size of the index file.
    pub index_bytes: u64,
}

fn sql(index: &Path) -> impl Fn(rusqlite::Error) -> Refusal + '_ {
    move |e| Refusal::Failed(Error::sqlite(index, e))
}

/// `dbstat` missing from this SQLite, or another SQLite error.
fn dbstat_refusal(index: &Path, e: rusqlite::Error) -> Refusal {
    if e.to_string().contains("dbstat") {
        Refusal::DbstatUnavailable {
            detail: e.to_string(),
        }
    } else {
        sql(index)(e)
    }
}

/// The selection by `dbstat` over every page of the index, sorted, with page 1.
fn full_selection(conn: &Connection, index: &Path) -> Result<Vec<u32>, Refusal> {
    let mut stmt = pages::prepare_selection(conn).map_err(|e| dbstat_refusal(index, e))?;
    let mut pagenos: Vec<u32> = vec![1];
    let rows = stmt
        .query_map([], |r| r.get::<_, i64>(0))
        .map_err(sql(index))?;
    for p in rows {
        let p = p.map_err(sql(index))?;
        let p = u32::try_from(p).map_err(|_| {
            Refusal::Failed(Error::corrupt(index, format!("dbstat lists page {p}")))
        })?;
        pagenos.push(p);
    }
    pagenos.sort_unstable();
    pagenos.dedup();
    Ok(pagenos)
}

/// Select the pages (see `select`) and read them from the index file at `index`
/// (the database `conn` is open on) straight into the sidecar's body, compressed
/// at zstd `level`, inside one read transaction (see `encode_pages`). Returns the
/// sidecar's bytes, the page size and the number of pages.
fn read_and_encode(
    conn: &Connection,
    index: &Path,
    level: i32,
) -> Result<(Vec<u8>, u32, u32), Refusal> {
    let mode: String = pages::journal_mode(conn).map_err(sql(index))?;
    let mode = mode.to_ascii_lowercase();
    if !SAFE_JOURNAL_MODES.contains(&mode.as_str()) {
        return Err(Refusal::UnsupportedJournalMode { mode });
    }
    let page_size: i64 = pages::page_size(conn).map_err(|e| Refusal::InvalidPageSize {
        value: e.to_string(),
    })?;
    let page_size = u32::try_from(page_size)
        .ok()
        .filter(|p| p.is_power_of_two() && (512..=65536).contains(p))
        .ok_or(Refusal::InvalidPageSize {
            value: page_size.to_string(),
        })?;
    // The selection's reads hold the shared lock until the transaction ends; the
    // bytes are read through SQLite's own file handle (see `raw`).
    pages::begin_read(conn).map_err(sql(index))?;
    let result = (|| {
        let file = RawFile::of(conn).map_err(|e| Refusal::Failed(Error::io(index, e)))?;
        let (pagenos, read) = match super::select::walk(conn, &file, page_size) {
            Ok(Some(p)) => p,
            Ok(None) => (full_selection(conn, index)?, Default::default()),
            Err(e) => return Err(dbstat_refusal(index, e)),
        };
        let mut short = None;
        let written = encode_pages(
            page_size,
            &pagenos,
            |pageno, buf| {
                // The interior pages the walk read are not read again.
                if let Some(b) = read.get(&pageno).filter(|b| b.len() == buf.len()) {
                    buf.copy_from_slice(b);
                    return Ok(());
                }
                let got = file.read_at(buf, page_range(pageno, page_size).start)?;
                if got < buf.len() {
                    short = Some(Refusal::ShortPageRead { pageno, got });
                    return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "short page"));
                }
                Ok(())
            },
            level,
        );
        match (written, short) {
            (_, Some(r)) => Err(r),
            (Ok(out), None) => Ok((out, page_size, pagenos.len() as u32)),
            (Err(e), None) => Err(Refusal::Failed(Error::io(index, e))),
        }
    })();
    let end = pages::end_read(conn);
    let r = result?;
    end.map_err(sql(index))?;
    Ok(r)
}

/// Build the sidecar of the index at `index` that `conn` is open on, at zstd
/// `level`, in memory. Nothing is written.
pub fn build(conn: &Connection, index: &Path, level: i32) -> Result<Built, Refusal> {
    let (bytes, page_size, pages) = read_and_encode(conn, index, level)?;
    let index_bytes = fs::metadata(index)
        .map_err(|e| Refusal::Failed(Error::io(index, e)))?
        .len();
    Ok(Built {
        bytes,
        page_size,
        pages,
        index_bytes,
    })
}

/// The temporary name a sidecar is written under before it is renamed into place.
pub fn temp_path(layout: &Layout) -> PathBuf {
    let mut s = layout.sidecar().into_os_string();
    s.push(".tmp");
    PathBuf::from(s)
}

/// Write `built` as the sidecar of `layout`: to a temporary name, synced, then
/// renamed over any old one, so that a reader sees the old file, no file, or the
/// new one whole.
pub fn install(layout: &Layout, built: &Built) -> Result<Written> {
    let path = layout.sidecar();
    let temp = temp_path(layout);
    crate::core::output::write_file(&path, &temp, &built.bytes)?;
    Ok(Written {
        path,
        page_size: built.page_size,
        pages: built.pages,
        bytes: built.bytes.len() as u64,
        index_bytes: built.index_bytes,
    })
}

/// Build and write the sidecar of the archive `layout`, whose index `conn` is open
/// on. The caller makes sure no writer of ours runs (it holds the writer lock).
pub fn write(layout: &Layout, conn: &Connection, level: i32) -> Result<Written, Refusal> {
    let built = build(conn, layout.index(), level)?;
    install(layout, &built).map_err(Refusal::Failed)
}

/// Build (or rebuild) the sidecar of the archive at `archive` at zstd `level`,
/// holding the writer lock so that no writer of ours runs meanwhile (another one is
/// an error). When no sidecar can be written, an old one is removed: it would not
/// describe the index as it is.
pub fn rebuild(archive: &Path, level: i32) -> Result<Written, Refusal> {
    let layout = Layout::resolve(archive);
    if !layout.index().is_file() {
        return Err(Refusal::Failed(Error::ArchiveNotFound {
            path: archive.to_path_buf(),
        }));
    }
    // Dropped in reverse order: the connection closes before the lock's descriptor
    // (closing any descriptor of the index drops SQLite's locks on it).
    let _lock = crate::core::index::lock_exclusive(layout.index())?;
    let index = crate::core::index::Index::open_read(layout.index())?;
    let r = write(&layout, index.conn(), level);
    if r.is_err() {
        let _ = remove(&layout);
    }
    r
}

/// Remove the sidecar of `layout` (and a temporary one a killed writer left).
/// Returns whether there was one. The directory is synced after a removal, so that
/// the sidecar cannot come back after a crash while the index changes. A directory
/// under the sidecar's name is not a sidecar (no reader can take it for one): it is
/// left alone.
pub fn remove(layout: &Layout) -> Result<bool> {
    let path = layout.sidecar();
    let mut removed = false;
    for p in [path.clone(), temp_path(layout)] {
        match fs::symlink_metadata(&p) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                fs::remove_file(&p).at(&p)?;
                removed = true;
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(&p, e)),
        }
    }
    if removed {
        crate::core::output::sync_dir(&path)?;
    }
    Ok(removed)
}

/// What our writers do when they finish an archive: write its sidecar (at
/// [`WRITER_LEVEL`]), never failing. An expected refusal is a debug line,
/// anything else a one-line warning (through the `log` facade).
pub fn emit_best_effort(layout: &Layout, conn: &Connection) -> Option<Written> {
    match write(layout, conn, WRITER_LEVEL) {
        Ok(w) => {
            log::debug!("{}: {} pages, {} bytes", w.path.display(), w.pages, w.bytes);
            Some(w)
        }
        Err(r) => {
            let path = layout.sidecar();
            if r.is_expected() {
                log::debug!("{}: not written ({}): {r}", path.display(), r.reason());
            } else {
                log::warn!("{}: not written: {r}", path.display());
            }
            None
        }
    }
}
