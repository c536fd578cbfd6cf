//! Checking a sidecar against its local index: every rule of the format's
//! validation list, freshness, and every page equal to the index's page. Used by
//! `barecat-sidecar --check` and by `barecat-verify` (which reports anything but a
//! valid sidecar as a warning, never as a problem of the archive).

use std::io;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::raw::RawFile;
use crate::core::error::{Error, IoContext, Result, SqlContext};
use crate::core::format::layout::Layout;
use crate::core::format::sidecar::{
    check_fresh, page_range, parse_each_page, Outline, Rejection, RejectionKind,
};
use crate::core::index::{pages, Index};

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
    /// The archive (its index path).
    pub archive: PathBuf,
    /// The sidecar file checked.
    pub sidecar: PathBuf,
    /// Valid, missing, absent, stale or corrupt.
    pub status: Status,
    /// The reason's code ([`Rejection::code`]) unless valid or missing.
    pub reason: Option<&'static str>,
    /// One line: what is wrong, or a summary of a valid sidecar.
    pub message: String,
    /// Of a sidecar that parsed.
    pub page_size: Option<u32>,
    /// Number of pages, of a sidecar that parsed.
    pub pages: Option<u32>,
    /// Size of the sidecar file, when there is one.
    pub bytes: Option<u64>,
    /// Size of the index file.
    pub index_bytes: u64,
    /// Why it was not valid, for callers that want more than the code.
    #[serde(skip)]
    pub rejection: Option<Rejection>,
}

impl CheckReport {
    /// True when the sidecar can be used: fresh, well-formed, equal to the index.
    pub fn is_valid(&self) -> bool {
        self.status == Status::Valid
    }
}

/// Parse the sidecar `bytes` and compare every page with the index file as it comes
/// ([`parse_each_page`]: the body is never held whole; freshness first, against the
/// index's page 1). The outer `Err` is an error reading the index.
fn parse_and_compare(
    bytes: &[u8],
    index_len: u64,
    index: &RawFile<'_>,
    index_path: &Path,
) -> Result<(Option<Outline>, std::result::Result<(), Rejection>)> {
    let mut failed: Option<Error> = None;
    let mut buf = Vec::new();
    let verdict = parse_each_page(bytes, index_len, |pageno, page| {
        let ps = page.len();
        buf.resize(ps, 0);
        let mut read = |at: u64, buf: &mut [u8]| match index.read_at(buf, at) {
            Ok(n) => Ok(n),
            Err(e) => {
                failed = Some(Error::io(index_path, e));
                // Stops the parse; the I/O error is what is returned.
                Err(Rejection::StalePage1)
            }
        };
        if pageno == 1 {
            let got = read(0, &mut buf)?;
            check_fresh(ps as u32, page, &buf[..got])?;
        }
        let got = read(page_range(pageno, ps as u32).start, &mut buf)?;
        if got != ps || buf != page {
            return Err(Rejection::PageDiffers { pageno });
        }
        Ok(())
    });
    match failed {
        Some(e) => Err(e),
        None => Ok(verdict),
    }
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
    let mode: String = pages::journal_mode(conn).at(&index_path)?;
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
    let file_bytes = bytes.len();
    pages::begin_read(conn).at(&index_path)?;
    let r = pages::read_schema(conn)
        .at(&index_path)
        .and_then(|()| RawFile::of(conn).at(&index_path))
        .and_then(|file| parse_and_compare(&bytes, index_bytes, &file, &index_path));
    let _ = pages::end_read(conn);
    let (outline, verdict) = r?;
    if let Some(o) = &outline {
        report.page_size = Some(o.page_size);
        report.pages = Some(o.table.len() as u32);
    }
    match verdict {
        Ok(()) => {
            report.status = Status::Valid;
            report.message = format!(
                "valid: {} pages of {} bytes, {} bytes ({:.2}% of the index)",
                report.pages.unwrap_or(0),
                report.page_size.unwrap_or(0),
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
