//! Conversions that copy: a barecat archive, a directory tree or a list of files
//! into a standalone dataset, and a dataset (or an archive's record table) back
//! into a barecat archive.
//!
//! Why copies: the zero-copy way to read an archive by integer is its record table
//! ([`crate::records::table`]); these are for moving data between the two forms
//! (compressing records, shipping a dataset without SQLite, or packing a dataset
//! into an archive that Python barecat reads).

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::core::error::{Error, IoContext, Result};
use crate::core::progress::Progress;
use crate::core::writer::{ArchiveWriter, CreateMode, WriterOptions};
use crate::records::format::TableOrder;
use crate::records::reader::Records;
use crate::records::writer::{RecordWriter, WriteSummary};
use crate::{Archive, FileOrder, Meta};

/// Append the files of `archive` in `order` (or the paths of `list`, in its order)
/// to `w`, CRC-checked as they are read.
pub fn append_archive(
    w: &mut RecordWriter,
    archive: &Path,
    order: TableOrder,
    list: &[String],
    progress: &Progress,
) -> Result<u64> {
    let a = Archive::open(archive)?;
    let mut n = 0;
    if order == TableOrder::List {
        for p in list {
            let fi = a.file_info(p)?;
            let data = a.read_file(&fi)?;
            w.append(&data)?;
            progress.add(1, data.len() as u64);
            n += 1;
        }
        return Ok(n);
    }
    let o = if order == TableOrder::Path {
        FileOrder::Path
    } else {
        FileOrder::Address
    };
    for fi in a.files(o, "") {
        let fi = fi?;
        let data = a.read_file(&fi)?;
        w.append(&data)?;
        progress.add(1, data.len() as u64);
        n += 1;
    }
    Ok(n)
}

/// The files below `root` (or `root` itself when it is a file), sorted by path,
/// symbolic links to files followed.
pub fn files_of(root: &Path) -> Result<Vec<PathBuf>> {
    let md = std::fs::metadata(root).at(root)?;
    if !md.is_dir() {
        return Ok(vec![root.to_path_buf()]);
    }
    let mut out = Vec::new();
    for e in walkdir::WalkDir::new(root)
        .follow_links(false)
        .sort_by_file_name()
    {
        let e = e.map_err(|e| {
            let p = e.path().map(Path::to_path_buf).unwrap_or_default();
            Error::io(p, e.into())
        })?;
        let is_file = e.file_type().is_file()
            || (e.file_type().is_symlink()
                && std::fs::metadata(e.path()).is_ok_and(|m| m.is_file()));
        if is_file {
            out.push(e.into_path());
        }
    }
    Ok(out)
}

/// Append the content of each file of `paths` (files; directories expand to their
/// files in path order) to `w`.
pub fn append_files(w: &mut RecordWriter, paths: &[PathBuf], progress: &Progress) -> Result<u64> {
    let mut n = 0;
    for p in paths {
        for f in files_of(p)? {
            let data = std::fs::read(&f).at(&f)?;
            w.append(&data)?;
            progress.add(1, data.len() as u64);
            n += 1;
        }
    }
    Ok(n)
}

/// What [`to_archive`] wrote.
#[derive(Debug, Clone, Serialize)]
pub struct ToArchiveReport {
    /// The archive written.
    pub archive: PathBuf,
    /// Files written (one per record).
    pub files: u64,
    /// Their total size.
    pub bytes: u64,
    /// The number of digits of the zero-padded record names.
    pub width: usize,
}

/// The width of zero-padded record names for `n` records.
pub fn name_width(n: u64) -> usize {
    n.saturating_sub(1).max(1).to_string().len()
}

/// Copy every record of `r` into a new barecat archive: record `i` becomes the file
/// `{prefix}{i}` with `i` zero-padded to a common width (name order is index order).
pub fn to_archive(
    r: &Records,
    out: &Path,
    prefix: &str,
    overwrite: bool,
    progress: &Progress,
) -> Result<ToArchiveReport> {
    let mode = if overwrite {
        CreateMode::Overwrite
    } else {
        CreateMode::New
    };
    let mut w = ArchiveWriter::open(out, WriterOptions::with_mode(mode))?;
    let width = name_width(r.len());
    let mut bytes = 0;
    let step = 4096u64;
    let mut i = 0;
    while i < r.len() {
        let idx: Vec<u64> = (i..(i + step).min(r.len())).collect();
        let batch = r.gather(&idx)?;
        for (k, data) in batch.iter().enumerate() {
            let name = format!("{prefix}{:0width$}", idx[k]);
            w.add_file(&name, Meta::default(), data, None)?;
            bytes += data.len() as u64;
            progress.add(1, data.len() as u64);
        }
        i += step;
    }
    let stats = w.finish()?;
    Ok(ToArchiveReport {
        archive: out.to_path_buf(),
        files: stats.files,
        bytes,
        width,
    })
}

/// A summary line's numbers for a finished writer.
pub fn summary_line(s: &WriteSummary) -> String {
    format!(
        "{} records ({} appended, {} modified, {} deleted, {})",
        s.length,
        s.appended,
        s.modified,
        s.deleted,
        crate::core::size::human(s.bytes)
    )
}
