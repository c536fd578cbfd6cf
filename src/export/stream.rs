//! Export to a zip or tar stream.
//!
//! Entries are written in path order (each directory before its contents), like
//! Python barecat's converter. Three stages run at once: one thread reads the index,
//! worker threads check each file's CRC32C (and compute the CRC-32 and, with
//! `--deflate`, the compressed bytes for zip) straight from the shards' memory maps,
//! and the calling thread writes the entries in order. A file whose content does not
//! match its CRC32C, whose row is corrupt or whose path is unsafe is reported and left
//! out; every file is checked before its first byte is written.

use std::collections::HashSet;
use std::io::Write;

use crossbeam_channel::{bounded, Receiver, Sender};

use super::compress::{Compression, Encoder};
use super::select::{duplicate_paths, Row, Selection};
use super::{permissions, tar, zip, Reporter, WHOLE_READ_LIMIT};
use crate::core::entry::{DirInfo, FileInfo, FileOrder};
use crate::core::error::{Error, Result};
use crate::core::output::AtomicFile;
use crate::core::path::is_safe_stored;
use crate::core::progress::Progress;
use crate::core::shards::MappedFile;
use crate::Archive;

/// What to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    /// Zip; `deflate`: compression level 1..9, or stored entries.
    Zip {
        /// Deflate level 1..9, or `None` for stored entries.
        deflate: Option<u32>,
    },
    /// Tar, optionally compressed (`level`: `None` = the format's default).
    Tar {
        /// The compression of the tar stream.
        compression: Compression,
        /// Its level; `None` for the format's default.
        level: Option<u32>,
    },
}

/// How to export.
#[derive(Debug, Clone)]
pub struct ExportOptions {
    /// Zip or (compressed) tar.
    pub format: ExportFormat,
    /// Threads that check (and compress) file contents.
    pub workers: usize,
    /// Put every member under this directory (`NAME/path`); checked like a stored
    /// path (no `..`, not absolute).
    pub root_dir: Option<String>,
}

/// What an export did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExportReport {
    /// File members written.
    pub files: u64,
    /// Directory members written.
    pub dirs: u64,
    /// Bytes of file content written (before compression).
    pub bytes: u64,
    /// Members reported as problems and left out.
    pub failed: u64,
}

/// One entry on its way to the output.
enum Item {
    Dir(DirInfo),
    File(FileInfo),
    Bad(Error),
}

/// One entry ready to be written.
enum Ready {
    Dir(DirInfo),
    File {
        fi: FileInfo,
        data: Data,
        crc32: u32,
        deflated: Option<Vec<u8>>,
    },
    Bad(Error),
}

/// The content of a file on its way to the output.
enum Data {
    /// Read into memory of our own and checked there: what is written is exactly
    /// what was checked.
    Owned(Vec<u8>),
    /// A file over [`WHOLE_READ_LIMIT`], written from the shard's memory map; its
    /// CRC is checked again after it was written (a concurrent defragmentation could
    /// rewrite the bytes in between).
    Mapped(MappedFile),
}

impl Data {
    fn bytes(&self) -> &[u8] {
        match self {
            Data::Owned(v) => v,
            Data::Mapped(m) => m,
        }
    }
}

const BATCH_ITEMS: usize = 512;
const BATCH_BYTES: u64 = 4 << 20;

/// Write the selected members of `archive` as a zip or tar into `file`, the file
/// of `out` (see [`AtomicFile::create`]), and commit it: the output appears at its
/// path only when it is complete and synced. Problems with single members go to
/// `report`; an `Err` means nothing was written under the output's name.
pub fn export_to_file(
    archive: &Archive,
    selection: &Selection,
    out: AtomicFile,
    file: std::fs::File,
    opts: &ExportOptions,
    progress: &Progress,
    report: Reporter<'_>,
) -> Result<ExportReport> {
    // Small: headers and small files are gathered, larger contents go from the
    // memory map to the output without a copy.
    let writer = std::io::BufWriter::with_capacity(16 << 10, file);
    let (writer, r) = export(archive, selection, writer, opts, progress, report)?;
    let file = writer
        .into_inner()
        .map_err(|e| Error::io(out.path(), e.into_error()))?;
    out.commit(file)?;
    Ok(r)
}

/// Write the selected members of `archive` to `out` as a zip or tar; returns `out`
/// (after the end of the archive and of the compression) for the caller to close.
/// Problems with single members go to `report`; an `Err` means the output is not
/// usable.
pub fn export<W: Write + Send>(
    archive: &Archive,
    selection: &Selection,
    out: W,
    opts: &ExportOptions,
    progress: &Progress,
    report: Reporter<'_>,
) -> Result<(W, ExportReport)> {
    let dups = duplicate_paths(archive)?;
    let dirs = selection.dir_entries(archive)?;
    let workers = opts.workers.max(1);
    let deflate = match opts.format {
        ExportFormat::Zip { deflate } => deflate,
        _ => None,
    };
    let need_crc32 = matches!(opts.format, ExportFormat::Zip { .. });
    let mut sink = match opts.format {
        ExportFormat::Zip { .. } => Sink::Zip(zip::ZipWriter::new(out), deflate),
        ExportFormat::Tar { compression, level } => {
            let enc = Encoder::new(out, compression, level).map_err(Error::output)?;
            Sink::Tar(tar::TarWriter::new(enc))
        }
    };
    let mut rep = ExportReport::default();
    let root = match &opts.root_dir {
        Some(r) => {
            let norm = crate::core::path::normalize(r);
            if let Some(reason) = crate::core::path::unsafe_reason(r).or_else(|| {
                norm.is_empty()
                    .then_some("an empty name (or only '.') is not a directory")
            }) {
                return Err(Error::InvalidPath {
                    path: r.clone(),
                    reason,
                });
            }
            Some(norm)
        }
        None => None,
    };
    let root = root.as_deref();

    std::thread::scope(|s| -> Result<()> {
        let (work_tx, work_rx) = bounded::<(Vec<Item>, Sender<Vec<Ready>>)>(workers * 2);
        let (order_tx, order_rx) = bounded::<Receiver<Vec<Ready>>>(workers * 2 + 2);
        // Reader of the index.
        let producer = s.spawn(move || -> Result<()> {
            let items = Entries::new(archive, selection, dirs);
            let mut batch = Vec::with_capacity(BATCH_ITEMS);
            let mut bytes = 0u64;
            let send = |batch: Vec<Item>| -> bool {
                let (tx, rx) = bounded(1);
                order_tx.send(rx).is_ok() && work_tx.send((batch, tx)).is_ok()
            };
            for item in items {
                let item = item?;
                if let Item::File(f) = &item {
                    bytes += f.size;
                }
                batch.push(item);
                if batch.len() >= BATCH_ITEMS || bytes >= BATCH_BYTES {
                    if !send(std::mem::take(&mut batch)) {
                        return Ok(());
                    }
                    bytes = 0;
                }
            }
            if !batch.is_empty() {
                send(batch);
            }
            Ok(())
        });
        // Checkers.
        for _ in 0..workers {
            let work_rx = work_rx.clone();
            let dups = &dups;
            s.spawn(move || {
                for (batch, tx) in work_rx {
                    let ready = batch
                        .into_iter()
                        .map(|item| prepare(archive, item, dups, need_crc32, deflate))
                        .collect();
                    let _ = tx.send(ready);
                }
            });
        }
        drop(work_rx);
        // Writer, in order.
        let mut result = Ok(());
        for rx in order_rx.iter() {
            let Ok(batch) = rx.recv() else { break };
            let mut files = 0;
            let mut bytes = 0;
            for r in batch {
                match r {
                    Ready::Bad(e) => {
                        rep.failed += 1;
                        report(&e);
                    }
                    Ready::Dir(d) => {
                        if let Err(e) = sink.dir(&d, root) {
                            result = Err(e);
                            break;
                        }
                        rep.dirs += 1;
                    }
                    Ready::File {
                        fi,
                        data,
                        crc32,
                        deflated,
                    } => {
                        let content = data.bytes();
                        if let Err(e) = sink.file(&fi, root, content, crc32, deflated.as_deref()) {
                            result = Err(e);
                            break;
                        }
                        if let (Data::Mapped(m), Some(expected)) = (&data, fi.crc32c) {
                            let actual = crc32c::crc32c(m);
                            if actual != expected {
                                // The member is in the output already: the output is
                                // not usable.
                                result = Err(Error::CrcMismatch {
                                    member: fi.path.clone(),
                                    expected,
                                    actual,
                                });
                                break;
                            }
                        }
                        files += 1;
                        bytes += fi.size;
                    }
                }
            }
            rep.files += files;
            rep.bytes += bytes;
            progress.add(files, bytes);
            if result.is_err() {
                break;
            }
        }
        // Stop the other stages (if the writer failed) and collect the reader's error.
        drop(order_rx);
        let produced = producer
            .join()
            .unwrap_or_else(|_| Err(Error::InvalidOperation("index reader thread failed".into())));
        result.and(produced)
    })?;
    let out = sink.finish()?;
    Ok((out, rep))
}

/// Check one entry (in a worker thread).
fn prepare(
    archive: &Archive,
    item: Item,
    dups: &HashSet<String>,
    need_crc32: bool,
    deflate: Option<u32>,
) -> Ready {
    let fi = match item {
        Item::Bad(e) => return Ready::Bad(e),
        Item::Dir(d) => {
            return match refuse(&d.path, dups) {
                Some(e) => Ready::Bad(e),
                None => Ready::Dir(d),
            }
        }
        Item::File(fi) => fi,
    };
    if let Some(e) = refuse(&fi.path, dups) {
        return Ready::Bad(e);
    }
    let data = if fi.size > WHOLE_READ_LIMIT {
        match archive.map(&fi) {
            Ok(m) => Data::Mapped(m),
            Err(e) => return Ready::Bad(e),
        }
    } else if fi.size == 0 {
        Data::Owned(Vec::new())
    } else {
        // CRC-checked, and following a file moved by a concurrent defragmentation.
        match archive.read_file(&fi) {
            Ok(v) => Data::Owned(v),
            Err(e) => return Ready::Bad(e),
        }
    };
    let content = data.bytes();
    // `read_file` checked the CRC32C of what it read; a mapped file is checked here
    // (and its CRC-32 computed for zip) in one pass, a chunk at a time so that the
    // second checksum reads from the cache.
    let mut crc32 = crc32fast::Hasher::new();
    let check = matches!(data, Data::Mapped(_));
    if check || need_crc32 {
        let mut crc32c = 0u32;
        for chunk in content.chunks(256 << 10) {
            if check {
                crc32c = crc32c::crc32c_append(crc32c, chunk);
            }
            if need_crc32 {
                crc32.update(chunk);
            }
        }
        if let (true, Some(expected)) = (check, fi.crc32c) {
            if expected != crc32c {
                return Ready::Bad(Error::CrcMismatch {
                    member: fi.path.clone(),
                    expected,
                    actual: crc32c,
                });
            }
        }
    }
    debug_assert!(fi.check_crc(content).is_ok());
    let deflated = match deflate {
        Some(level) if fi.size > 0 && fi.size <= WHOLE_READ_LIMIT => {
            let mut enc = flate2::write::DeflateEncoder::new(
                Vec::with_capacity(content.len() / 2),
                flate2::Compression::new(level),
            );
            let out = enc.write_all(content).and_then(|()| enc.finish());
            match out {
                // Stored when compression does not pay.
                Ok(v) if (v.len() as u64) < fi.size => Some(v),
                _ => None,
            }
        }
        _ => None,
    };
    Ready::File {
        fi,
        data,
        crc32: crc32.finalize(),
        deflated,
    }
}

/// Why a member may not be exported, if it may not.
fn refuse(path: &str, dups: &HashSet<String>) -> Option<Error> {
    if !is_safe_stored(path) {
        return Some(Error::InvalidPath {
            path: path.to_string(),
            reason: unsafe_reason(path),
        });
    }
    if dups.contains(path) {
        return Some(Error::Refused {
            path: path.into(),
            detail: "stored more than once in the index; left out".into(),
        });
    }
    None
}

/// Why a stored path is unsafe to write out (for messages).
pub(crate) fn unsafe_reason(path: &str) -> &'static str {
    crate::core::path::unsafe_reason(path).unwrap_or("empty or '.' path components are not allowed")
}

/// A member's name in the output: its path, under `root` when given.
fn member_name<'p>(root: Option<&str>, path: &'p str) -> std::borrow::Cow<'p, str> {
    match root {
        Some(r) => format!("{r}/{path}").into(),
        None => path.into(),
    }
}

enum Sink<W: Write> {
    Zip(zip::ZipWriter<W>, Option<u32>),
    Tar(tar::TarWriter<Encoder<W>>),
}

impl<W: Write> Sink<W> {
    fn dir(&mut self, d: &DirInfo, root: Option<&str>) -> Result<()> {
        let perms = permissions(&d.meta, true).unwrap_or(0o755);
        let name = member_name(root, &d.path);
        match self {
            Sink::Zip(z, _) => z.add_dir(
                &name,
                zip::EntryMeta {
                    perms,
                    mtime_ns: d.meta.mtime_ns,
                },
            ),
            Sink::Tar(t) => t.add_dir(&name, tar_meta(&d.meta, perms)),
        }
        .map_err(Error::output)
    }

    fn file(
        &mut self,
        fi: &FileInfo,
        root: Option<&str>,
        data: &[u8],
        crc32: u32,
        deflated: Option<&[u8]>,
    ) -> Result<()> {
        let perms = permissions(&fi.meta, true).unwrap_or(0o644);
        let name = member_name(root, &fi.path);
        let name = name.as_ref();
        match self {
            Sink::Zip(z, level) => {
                let meta = zip::EntryMeta {
                    perms,
                    mtime_ns: fi.meta.mtime_ns,
                };
                match (deflated, *level) {
                    (Some(d), _) => z.add_deflated(name, meta, d, fi.size, crc32),
                    (None, Some(level)) if fi.size > WHOLE_READ_LIMIT => {
                        z.add_deflating(name, meta, data, crc32, level)
                    }
                    _ => z.add_stored(name, meta, data, crc32),
                }
            }
            Sink::Tar(t) => t.add_file(name, tar_meta(&fi.meta, perms), data),
        }
        .map_err(Error::output)
    }

    fn finish(self) -> Result<W> {
        match self {
            Sink::Zip(z, _) => z.finish(),
            Sink::Tar(t) => t.finish().and_then(|enc| enc.finish()),
        }
        .map_err(Error::output)
    }
}

fn tar_meta(meta: &crate::core::entry::Meta, perms: u32) -> tar::EntryMeta {
    tar::EntryMeta {
        perms,
        uid: meta.uid.unwrap_or(0),
        gid: meta.gid.unwrap_or(0),
        mtime_ns: meta.mtime_ns.unwrap_or(0),
    }
}

/// The selected directories and files merged in path order.
struct Entries<'a> {
    archive: &'a Archive,
    /// Single files and directory subtrees, in path order.
    scopes: std::vec::IntoIter<Scope>,
    dirs: std::iter::Peekable<std::vec::IntoIter<DirInfo>>,
    /// The files of the subtree being written, and its root.
    files: Option<std::iter::Peekable<super::select::FileRows<'a>>>,
    root: String,
    filter: Option<std::sync::Arc<crate::core::glob::PathFilter>>,
}

enum Scope {
    File(FileInfo),
    Dir(String),
}

impl<'a> Entries<'a> {
    fn new(archive: &'a Archive, sel: &Selection, dirs: Vec<DirInfo>) -> Entries<'a> {
        let mut scopes: Vec<Scope> = sel
            .files
            .iter()
            .cloned()
            .map(Scope::File)
            .chain(sel.dirs.iter().cloned().map(Scope::Dir))
            .collect();
        scopes.sort_by(|a, b| scope_path(a).cmp(scope_path(b)));
        Entries {
            archive,
            scopes: scopes.into_iter(),
            dirs: dirs.into_iter().peekable(),
            files: None,
            root: String::new(),
            filter: sel.filter.clone(),
        }
    }
}

fn scope_path(s: &Scope) -> &str {
    match s {
        Scope::File(f) => &f.path,
        Scope::Dir(d) => d,
    }
}

impl Iterator for Entries<'_> {
    type Item = Result<Item>;

    fn next(&mut self) -> Option<Result<Item>> {
        loop {
            if let Some(files) = &mut self.files {
                // Merge the subtree's directories and files by path.
                let next_file = match files.peek() {
                    None => None,
                    Some(Err(_)) | Some(Ok(Row::Bad(_))) => {
                        return files.next().map(|r| {
                            r.map(|row| match row {
                                Row::Bad(e) => Item::Bad(e),
                                Row::File(f) => Item::File(f),
                            })
                        })
                    }
                    Some(Ok(Row::File(f))) => Some(f.path.clone()),
                };
                let dir = self
                    .dirs
                    .peek()
                    .filter(|d| crate::core::path::is_within(&d.path, &self.root));
                let dir_first = match (dir, &next_file) {
                    (Some(d), Some(f)) => d.path.as_str() <= f.as_str(),
                    (Some(_), None) => true,
                    (None, Some(_)) => false,
                    (None, None) => {
                        self.files = None;
                        continue;
                    }
                };
                if dir_first {
                    return self.dirs.next().map(|d| Ok(Item::Dir(d)));
                }
                return files.next().map(|r| {
                    r.map(|row| match row {
                        Row::Bad(e) => Item::Bad(e),
                        Row::File(f) => Item::File(f),
                    })
                });
            }
            match self.scopes.next()? {
                Scope::File(f) if self.filter.as_ref().is_some_and(|x| !x.selects(&f.path)) => {}
                Scope::File(f) => return Some(Ok(Item::File(f))),
                Scope::Dir(d) => {
                    self.root = d.clone();
                    let sub = Selection {
                        dirs: vec![d],
                        files: Vec::new(),
                        filter: self.filter.clone(),
                    };
                    self.files = Some(sub.file_rows(self.archive, FileOrder::Path).peekable());
                }
            }
        }
    }
}
