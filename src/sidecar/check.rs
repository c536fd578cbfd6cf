//! Checking a sidecar against its local index: every rule of the format's
//! validation list, freshness, and every page equal to the index's page. Used by
//! `barecat-sidecar --check` and by `barecat-verify` (which reports anything but a
//! valid sidecar as a warning, never as a problem of the archive).

use std::io;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::format::{page_range, parse, PageMap, Rejection, RejectionKind};
use super::raw::RawFile;
use crate::error::{Error, IoContext, Result, SqlContext};
use crate::index::Index;
use crate::layout::Layout;

/// The verdict on a sidecar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Fresh, well-formed, every page equal to the index's.
    Valid,
    /// No sidecar file.
    Missing,
    /// Another format or a newer version: treated as absent.
    Absent,
    /// Describes another state of the index.
    Stale,
    /// Damaged or malformed.
    Corrupt,
}

/// The result of [`check`].
#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    pub archive: PathBuf,
    pub sidecar: PathBuf,
    pub status: Status,
    /// The reason's code ([`Rejection::code`]) unless valid or missing.
    pub reason: Option<&'static str>,
    /// One line: what is wrong, or a summary of a valid sidecar.
    pub message: String,
    /// Of a sidecar that parsed.
    pub page_size: Option<u32>,
    pub pages: Option<u32>,
    /// Size of the sidecar file (when there is one) and of the index.
    pub bytes: Option<u64>,
    pub index_bytes: u64,
    #[serde(skip)]
    pub rejection: Option<Rejection>,
}

impl CheckReport {
    pub fn is_valid(&self) -> bool {
        self.status == Status::Valid
    }
}

/// Compare every page of `map` with the index file (freshness first, from page 1).
fn compare(map: &PageMap, index: &RawFile<'_>, index_path: &Path) -> Result<Result<(), Rejection>> {
    let ps = map.page_size() as usize;
    let mut buf = vec![0u8; ps];
    let got = index.read_at(&mut buf, 0).at(index_path)?;
    if let Err(r) = map.check_fresh(&buf[..got]) {
        return Ok(Err(r));
    }
    for (pageno, page) in map.pages() {
        let got = index
            .read_at(&mut buf, page_range(pageno, map.page_size()).start)
            .at(index_path)?;
        if got != ps || buf != *page {
            return Ok(Err(Rejection::PageDiffers { pageno }));
        }
    }
    Ok(Ok(()))
}

/// Check the sidecar of the archive at `archive` against its index. `Err` only
/// when the index itself cannot be read; a missing or bad sidecar is a report.
pub fn check(archive: &Path) -> Result<CheckReport> {
    let layout = Layout::resolve(archive);
    let index_path = layout.index().to_path_buf();
    if !index_path.is_file() {
        return Err(Error::ArchiveNotFound {
            path: archive.to_path_buf(),
        });
    }
    let sidecar = layout.sidecar();
    // The index is read through SQLite's own file handle (see `raw`), in a read
    // transaction that keeps writers out while the pages are compared (SQLite
    // rolls back a hot journal first, so the file is committed state).
    let idx = Index::open_read(&index_path)?;
    let conn = idx.conn();
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .at(&index_path)?;
    let wal = mode.eq_ignore_ascii_case("wal");
    let index_bytes = std::fs::metadata(&index_path).at(&index_path)?.len();
    let mut report = CheckReport {
        archive: archive.to_path_buf(),
        sidecar: sidecar.clone(),
        status: Status::Missing,
        reason: None,
        message: if wal {
            "no sidecar (the index is in WAL journal mode, which a sidecar cannot describe)".into()
        } else {
            "no sidecar (`barecat-sidecar ARCHIVE` writes one)".into()
        },
        page_size: None,
        pages: None,
        bytes: None,
        index_bytes,
        rejection: None,
    };
    if sidecar.is_dir() {
        report.message = "no sidecar (a directory is in the way)".into();
        return Ok(report);
    }
    let bytes = match std::fs::read(&sidecar) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(report),
        Err(e) => return Err(Error::io(&sidecar, e)),
    };
    report.bytes = Some(bytes.len() as u64);
    let parsed = parse(&bytes, index_bytes);
    // The compressed file is not needed past the parse (the pages are decompressed).
    let file_bytes = bytes.len();
    drop(bytes);
    let verdict = match parsed {
        Err(r) => Err(r),
        Ok(map) => {
            report.page_size = Some(map.page_size());
            report.pages = Some(map.len() as u32);
            conn.execute_batch("BEGIN").at(&index_path)?;
            let r = conn
                .query_row("SELECT count(*) FROM sqlite_schema", [], |_| Ok(()))
                .at(&index_path)
                .and_then(|()| RawFile::of(conn).at(&index_path))
                .and_then(|file| compare(&map, &file, &index_path));
            let _ = conn.execute_batch("COMMIT");
            let r = r?;
            r.map(|()| map)
        }
    };
    match verdict {
        Ok(map) => {
            report.status = Status::Valid;
            report.message = format!(
                "valid: {} pages of {} bytes, {} bytes ({:.2}% of the index)",
                map.len(),
                map.page_size(),
                file_bytes,
                100.0 * file_bytes as f64 / index_bytes.max(1) as f64
            );
        }
        Err(r) => {
            report.status = match r.kind() {
                RejectionKind::Absent => Status::Absent,
                RejectionKind::Stale => Status::Stale,
                RejectionKind::Corrupt => Status::Corrupt,
            };
            report.reason = Some(r.code());
            report.message = r.to_string();
            report.rejection = Some(r);
        }
    }
    Ok(report)
}
