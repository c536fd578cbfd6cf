//! Zip files: every compression method the `zip` crate reads (stored, deflate,
//! deflate64, bzip2, lzma, xz, zstd, PPMd), zip64, directories, unix modes and
//! times, data before the zip (self-extracting archives) and padding around its
//! central directory.
//!
//! Entries are read in central-directory order and decompressed on the reader
//! threads, each with its own handle on the file.
//!
//! * Names ending in `/` are directories (a trailing backslash does not make one,
//!   as in unzip and Python's zipfile). Names are UTF-8 when they are valid UTF-8,
//!   else decoded as CP437 (the zip default) or from `--name-encoding`.
//! * A name written on a file system where a backslash cannot be part of a name
//!   (the entry's host is MS-DOS/FAT, NTFS or OS/2 HPFS) that holds backslashes and
//!   no slash uses them as path separators (as some Windows tools write): they
//!   become `/`, with a note, as Info-ZIP's unzip and bsdtar extract such names.
//!   Python's zipfile keeps the backslashes (`d\e\` is a 0-byte file there); a
//!   name from any other host keeps its backslashes as part of the name.
//! * Several entries of one name: the zip reader keeps the last of each (as unzip
//!   and zipfile extract them); this is reported, as [`Duplicates`] asks.
//! * `mode` is the unix mode stored by the creator (Info-ZIP, Python) with its
//!   file-type bits, or NULL when the zip holds none; `uid`/`gid` come from Info-ZIP's
//!   "ux" extra field, else NULL.
//! * `mtime_ns` is the extended-timestamp extra field (UTC seconds) when present;
//!   otherwise the DOS date and time, which carry no time zone and are read in the
//!   local time zone (`TZ`), as Info-ZIP's unzip and Python's zipfile do.
//! * Deflated entries larger than the streaming threshold, and any whose data
//!   runs past its declared size, are inflated to the end of their deflate
//!   stream: a member over 4 GiB written without zip64 (its size declared
//!   modulo 4 GiB) is stored whole, as bsdtar extracts it; the CRC-32 decides.
//! * Symbolic links are skipped and counted, or reported ([`SymlinkPolicy`]);
//!   encrypted entries, unsupported methods and CRC errors are reported and skipped.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

use crossbeam_channel::bounded;
use zip::read::ZipFile;
use zip::ZipArchive;

use super::pipeline::{self, Chunk, Item, Outlet, Skip, CHUNK};
use super::{Duplicates, Event, IngestOptions, Problem, Summary, SymlinkPolicy};
use crate::core::crc;
use crate::core::entry::{Meta, S_IFDIR, S_IFMT, S_IFREG};
use crate::core::error::{Error, IoContext, Result};
use crate::core::index::Index;
use crate::core::path::{self as mpath, printable};
use crate::core::writer::ArchiveWriter;

/// A file handle that reads with `pread`, so clones share nothing but the file.
#[derive(Clone)]
struct PRead {
    file: Arc<File>,
    pos: u64,
    len: u64,
}

impl Read for PRead {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read_at(buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for PRead {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let pos = match to {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::End(d) => self.len.checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        match pos {
            Some(p) => {
                self.pos = p;
                Ok(p)
            }
            None => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "seek before the start of the file",
            )),
        }
    }
}

enum What {
    Dir,
    File,
}

/// What the producer hands to the readers.
enum Task {
    Load {
        index: usize,
        path: String,
        shown: String,
        what: What,
    },
    Item(Item),
}

/// An opened zip file whose central directory was read.
pub struct ZipSource {
    name: String,
    archive: ZipArchive<PRead>,
    reader: PRead,
}

impl ZipSource {
    /// Open the zip file at `path` and read its central directory: an input that
    /// is not a zip file, or a damaged one, is an error here, before anything is
    /// written.
    pub fn open(path: &Path) -> Result<ZipSource> {
        let name = path.display().to_string();
        let file = File::open(path).at(path)?;
        let len = file.metadata().at(path)?.len();
        let reader = PRead {
            file: Arc::new(file),
            pos: 0,
            len,
        };
        let archive = ZipArchive::new(reader.clone()).map_err(|e| Error::Input {
            path: name.clone(),
            detail: format!("not a zip file, or a damaged one: {e}"),
        })?;
        Ok(ZipSource {
            name,
            archive,
            reader,
        })
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.archive.len()
    }

    /// True when the zip file has no entries.
    pub fn is_empty(&self) -> bool {
        self.archive.len() == 0
    }
}

pub(crate) fn run(
    w: &mut ArchiveWriter,
    src: &ZipSource,
    opts: &IngestOptions,
    sink: &mut dyn FnMut(Event),
) -> Result<Summary> {
    let archive = &src.archive;
    let name = &src.name;
    let total: u64 = (0..archive.len())
        .filter_map(|i| archive.by_index_data(i).ok().map(|e| e.size()))
        .sum();
    sink(Event::Total { bytes: total });
    // The producer's own read connection sees the committed rows; files added in
    // the open batch are caught by the writer (see `Apply::writer_error`).
    let existing = if opts.skip_existing {
        Some(w.layout().index().to_path_buf())
    } else {
        None
    };
    let threshold = opts.stream_threshold();
    let name_ref = name;
    pipeline::run_parallel(
        w,
        opts,
        sink,
        move |emit: &mut dyn FnMut(Task) -> bool| {
            let index = match existing.as_deref().map(Index::open_read).transpose() {
                Ok(i) => i,
                Err(e) => {
                    emit(Task::Item(Item::Fatal(e)));
                    return;
                }
            };
            produce(archive, &src.reader, name_ref, opts, index.as_ref(), emit);
        },
        || {
            let mut archive = archive.clone();
            move |seq, task, out: &Outlet| match task {
                Task::Item(item) => {
                    out.send_small(seq, item);
                }
                Task::Load {
                    index,
                    path,
                    shown,
                    what,
                } => load(&mut archive, seq, index, path, shown, what, out, threshold),
            }
        },
    )
}

/// Why the entries of `src` cannot be indexed where they lie in the zip
/// (`--wrap`): a non-empty entry that is compressed, or an encrypted one. The texts
/// are Python barecat's, with the first such entry named.
pub(crate) fn check_in_place(src: &ZipSource) -> Result<()> {
    let refuse = |detail: String| {
        Err(Error::Input {
            path: src.name.clone(),
            detail,
        })
    };
    for i in 0..src.archive.len() {
        let Ok(e) = src.archive.by_index_data(i) else {
            continue; // reported by the import
        };
        let shown = String::from_utf8_lossy(e.name_raw()).into_owned();
        if e.encrypted() {
            return refuse(format!(
                "ZIP has encrypted entries (\"{}\"). Cannot wrap encrypted ZIP files.",
                printable(&shown)
            ));
        }
        if e.size() > 0
            && (e.compression() != zip::CompressionMethod::Stored
                || e.compressed_size() != e.size())
        {
            return refuse(format!(
                "ZIP has compressed entries (\"{}\", {}). Use 'zip -0' to create \
                 uncompressed ZIP, or convert without --wrap.",
                printable(&shown),
                e.compression()
            ));
        }
    }
    Ok(())
}

/// Index the entries of the zip `src` where they lie (`--wrap`): each file
/// becomes a row pointing at its stored bytes in shard 0, which the caller makes
/// a link to the zip, with the CRC32C of those bytes (checked against the zip's
/// own CRC-32 on the way). Names, directories, links and duplicates follow the
/// rules of [`run`]. The caller runs [`check_in_place`] first.
pub(crate) fn run_in_place(
    w: &mut ArchiveWriter,
    src: &ZipSource,
    opts: &IngestOptions,
    sink: &mut dyn FnMut(Event),
) -> Result<Summary> {
    let archive = &src.archive;
    let name = &src.name;
    let total: u64 = (0..archive.len())
        .filter_map(|i| archive.by_index_data(i).ok().map(|e| e.size()))
        .sum();
    sink(Event::Total { bytes: total });
    pipeline::run_parallel(
        w,
        opts,
        sink,
        move |emit: &mut dyn FnMut(Task) -> bool| {
            produce(archive, &src.reader, name, opts, None, emit);
        },
        || {
            let mut archive = archive.clone();
            let file = src.reader.file.clone();
            let mut buf = vec![0u8; 1 << 20];
            move |seq, task, out: &Outlet| {
                let item = match task {
                    Task::Item(item) => item,
                    Task::Load {
                        index,
                        path,
                        shown,
                        what,
                    } => in_place(&mut archive, &file, &mut buf, index, path, shown, what),
                };
                out.send_small(seq, item);
            }
        },
    )
}

/// The row of one entry indexed in place.
#[allow(clippy::too_many_arguments)]
fn in_place(
    archive: &mut ZipArchive<PRead>,
    file: &File,
    buf: &mut [u8],
    index: usize,
    path: String,
    shown: String,
    what: What,
) -> Item {
    let problem = |detail: String| Item::Problem(Problem::new(shown.clone(), detail));
    let entry = match archive.by_index_raw(index) {
        Ok(e) => e,
        Err(e) => return problem(format!("cannot read: {e}; skipped")),
    };
    let mut meta = entry_meta(&entry);
    if let What::Dir = what {
        meta.mode = meta.mode.map(|m| (m & !S_IFMT) | S_IFDIR);
        return Item::Dir { path, meta };
    }
    meta.mode = meta.mode.map(|m| (m & !S_IFMT) | S_IFREG);
    let size = entry.size();
    let Some(start) = entry.data_start() else {
        return problem("cannot find its data in the zip; skipped".into());
    };
    let expected = entry.crc32();
    drop(entry);
    let mut crc = crc::Crc32c::new();
    let mut zip_crc = crc32fast::Hasher::new();
    let mut done = 0u64;
    while done < size {
        let n = (size - done).min(buf.len() as u64) as usize;
        match file.read_at(&mut buf[..n], start + done) {
            Ok(0) => {
                return problem(format!(
                    "the zip ends inside its data ({done} of {size} bytes); skipped"
                ))
            }
            Ok(k) => {
                crc.update(&buf[..k]);
                zip_crc.update(&buf[..k]);
                done += k as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return problem(format!("cannot read: {}; skipped", super::io_reason(&e))),
        }
    }
    if zip_crc.finalize() != expected {
        return problem(
            "its bytes in the zip do not match the zip's CRC-32 for it; skipped".into(),
        );
    }
    Item::Extent {
        path,
        meta,
        shard: 0,
        offset: start,
        size,
        crc: crc.value(),
    }
}

fn produce(
    archive: &ZipArchive<PRead>,
    reader: &PRead,
    name: &str,
    opts: &IngestOptions,
    existing: Option<&Index>,
    emit: &mut dyn FnMut(Task) -> bool,
) {
    let problem =
        |shown: &str, detail: String| Task::Item(Item::Problem(Problem::new(shown, detail)));
    if archive.has_duplicate_names() {
        // The zip reader keeps the last entry of each name (what unzip and Python's
        // zipfile extract); the earlier ones cannot be read. Each name is reported.
        let start = archive.central_directory_start();
        for (raw, count) in repeated_names(reader.clone(), start) {
            let detail = format!(
                "{count} entries of this name: the last is stored (as unzip and Python's \
                 zipfile extract it), the earlier ones are not"
            );
            let item = match opts.duplicates {
                Duplicates::Error => Item::Fatal(
                    Problem::new(
                        &raw,
                        format!(
                            "duplicate name: {count} entries of this name (--duplicates last \
                             stores the last)"
                        ),
                    )
                    .into_error(),
                ),
                Duplicates::Last if opts.duplicates_chosen => {
                    Item::Notice(format!("{}: {detail}", printable(&raw)))
                }
                Duplicates::First if opts.duplicates_chosen => Item::Problem(Problem::new(
                    &raw,
                    format!("{detail} (--duplicates first cannot be honoured for these)"),
                )),
                _ => Item::Problem(Problem::new(&raw, detail)),
            };
            let fatal = matches!(item, Item::Fatal(_));
            if !emit(Task::Item(item)) || fatal {
                return;
            }
        }
    }
    let mut cp437_names = 0u64;
    for i in 0..archive.len() {
        let entry = match archive.by_index_data(i) {
            Ok(e) => e,
            Err(e) => {
                let detail = format!("damaged central directory entry {i}: {e}");
                emit(Task::Item(Item::Fatal(Error::Input {
                    path: name.to_string(),
                    detail,
                })));
                return;
            }
        };
        let raw_name = entry.name_raw();
        let shown = if std::str::from_utf8(raw_name).is_ok() {
            String::from_utf8_lossy(raw_name).into_owned()
        } else if let Some(enc) = opts.name_encoding {
            match enc.decode(raw_name) {
                Some(n) => n,
                None => {
                    let detail = format!(
                        "member name is neither UTF-8 nor valid {} (--name-encoding); skipped",
                        enc.name()
                    );
                    if !emit(Task::Item(Item::Problem(Problem::new(raw_name, detail)))) {
                        return;
                    }
                    continue;
                }
            }
        } else {
            // The zip standard's encoding for names without the UTF-8 flag.
            cp437_names += 1;
            super::formats::names::decode_cp437(raw_name)
        };
        // Written on a file system where '\' cannot be part of a name (FAT, NTFS,
        // HPFS) and without any '/': the backslashes are path separators.
        let windows = matches!(
            entry.system(),
            zip::System::Dos | zip::System::Os2 | zip::System::WindowsNTFS
        );
        let name_used = if windows && shown.contains('\\') && !shown.contains('/') {
            let used = shown.replace('\\', "/");
            let note = format!(
                "{}: written on Windows with '\\' as the path separator: stored as \
                 \"{}\", as unzip and bsdtar extract it (Python's zipfile keeps the \
                 backslashes in the name)",
                printable(&shown),
                printable(&used)
            );
            if !emit(Task::Item(Item::Notice(note))) {
                return;
            }
            used
        } else {
            shown.clone()
        };
        let task = if entry.is_symlink() {
            match opts.symlinks {
                SymlinkPolicy::Skip => Task::Item(Item::Skipped(Skip::Symlink)),
                SymlinkPolicy::Error => problem(&shown, "symbolic link; skipped".into()),
            }
        } else if entry
            .unix_mode()
            .is_some_and(|m| m & S_IFMT != 0 && m & S_IFMT != S_IFREG && m & S_IFMT != S_IFDIR)
        {
            Task::Item(Item::Skipped(Skip::Special))
        } else if entry.encrypted() {
            problem(&shown, "encrypted; skipped".into())
        } else if name_used.contains('\0') {
            problem(&shown, "name holds a NUL character; not stored".into())
        } else if let Some(reason) = mpath::unsafe_reason(&name_used) {
            problem(&shown, format!("{reason}; not stored"))
        } else {
            let norm = mpath::normalize(&name_used);
            // A name ending in '/' is a directory, as in unzip and Python's zipfile
            // (a trailing backslash is not: see above).
            let what = if name_used.ends_with('/') {
                What::Dir
            } else {
                What::File
            };
            let stripped = if norm.is_empty() {
                (opts.strip_components == 0).then(String::new)
            } else {
                mpath::strip_components(&norm, opts.strip_components).map(str::to_string)
            };
            let stripped = stripped.and_then(|p| opts.place(&norm, p));
            match stripped {
                _ if !norm.is_empty() && !opts.filter.selects(&norm) => {
                    Task::Item(Item::Skipped(Skip::Quiet))
                }
                None => Task::Item(Item::Skipped(Skip::Quiet)),
                Some(p) if matches!(what, What::File) && p.is_empty() => problem(
                    &shown,
                    "a file cannot be stored at the archive root; skipped".into(),
                ),
                Some(p) => {
                    let present = existing.is_some_and(|ix| match what {
                        What::Dir => ix.is_dir(&p).unwrap_or(false),
                        What::File => ix.is_file(&p).unwrap_or(false),
                    });
                    match (present, &what) {
                        (true, What::File) => Task::Item(Item::Skipped(Skip::Existing)),
                        (true, What::Dir) => Task::Item(Item::Skipped(Skip::Quiet)),
                        _ => Task::Load {
                            index: i,
                            path: p,
                            shown,
                            what,
                        },
                    }
                }
            }
        };
        if !emit(task) {
            return;
        }
    }
    if cp437_names > 0 {
        let note = format!(
            "{name}: {cp437_names} member name{} without the UTF-8 flag and not UTF-8 read \
             as CP437 (the zip standard's encoding); if the zip was made on a system with \
             another encoding, --name-encoding ENC decodes them (e.g. cp866, cp1251, \
             shift_jis)",
            if cp437_names == 1 { "" } else { "s" }
        );
        emit(Task::Item(Item::Notice(note)));
    }
}

#[allow(clippy::too_many_arguments)]
fn load(
    archive: &mut ZipArchive<PRead>,
    seq: u64,
    index: usize,
    path: String,
    shown: String,
    what: What,
    out: &Outlet,
    threshold: u64,
) {
    let problem = |detail: String| Item::Problem(Problem::new(shown.clone(), detail));
    let mut entry = match archive.by_index(index) {
        Ok(e) => e,
        Err(e) => {
            out.send_small(seq, problem(format!("cannot read: {e}; skipped")));
            return;
        }
    };
    let mut meta = entry_meta(&entry);
    if let What::Dir = what {
        meta.mode = meta.mode.map(|m| (m & !S_IFMT) | S_IFDIR);
        out.send_small(seq, Item::Dir { path, meta });
        return;
    }
    meta.mode = meta.mode.map(|m| (m & !S_IFMT) | S_IFREG);
    let size = entry.size();
    let deflated = entry.compression() == zip::CompressionMethod::Deflated;
    if deflated && size > threshold {
        drop(entry);
        let ticket = out.reserve(seq, 0);
        return inflate_to_end(archive, seq, index, path, meta, &shown, out, ticket);
    }
    if size <= threshold {
        let Some(ticket) = out.reserve(seq, size) else {
            return;
        };
        let mut data = Vec::with_capacity(size as usize);
        let read = entry.read_to_end(&mut data);
        if deflated && read.as_ref().is_err_and(larger_than_declared) {
            drop(entry);
            return inflate_to_end(archive, seq, index, path, meta, &shown, out, Some(ticket));
        }
        let item = match read {
            Ok(n) if n as u64 == size => {
                let crc = crc::crc32c(&data);
                Item::File {
                    path,
                    meta,
                    data,
                    crc,
                }
            }
            Ok(n) => problem(format!(
                "holds {n} bytes instead of the {size} its header says; skipped"
            )),
            Err(e) => problem(format!("cannot read: {e}; skipped")),
        };
        out.send(seq, item, ticket);
        return;
    }
    let Some(ticket) = out.reserve(seq, 0) else {
        return;
    };
    let (tx, rx) = bounded::<Chunk>(2);
    if !out.send(
        seq,
        Item::Stream {
            path,
            meta,
            size,
            chunks: rx,
        },
        ticket,
    ) {
        return;
    }
    let fail = |detail: String| {
        let _ = tx.send(Chunk::Failed(Problem::new(shown.clone(), detail)));
    };
    let mut left = size;
    while left > 0 {
        let n = left.min(CHUNK as u64);
        let mut chunk = Vec::with_capacity(n as usize);
        match (&mut entry).take(n).read_to_end(&mut chunk) {
            Ok(k) if k as u64 == n => {}
            Ok(_) => {
                return fail(format!(
                    "holds fewer bytes than the {size} its header says; skipped"
                ))
            }
            Err(e) => return fail(format!("cannot read: {e}; skipped")),
        }
        left -= n;
        if tx.send(Chunk::Data(chunk)).is_err() {
            return;
        }
    }
    // Reading to the end lets the zip crate check the CRC-32.
    let mut rest = Vec::new();
    match entry.read_to_end(&mut rest) {
        Ok(0) => {}
        Ok(_) => fail(format!(
            "holds more than the {size} bytes its header says; skipped"
        )),
        Err(e) => fail(format!("cannot read: {e}; skipped")),
    }
}

/// The zip crate's error for an entry whose data goes on past its declared size.
fn larger_than_declared(e: &io::Error) -> bool {
    e.to_string()
        .contains("larger than its declared uncompressed size")
}

/// The data of a deflated entry, inflated to the end of its deflate stream
/// whatever size its headers declare, checked against its CRC-32, and sent as a
/// file of the length found. A member over 4 GiB written without zip64 declares
/// its size modulo 4 GiB: such a size is accepted (as bsdtar accepts it, comparing
/// the low 32 bits), any other difference is reported. Large deflated entries go
/// this way, so that the file's length need not be trusted before it is read.
#[allow(clippy::too_many_arguments)]
fn inflate_to_end(
    archive: &mut ZipArchive<PRead>,
    seq: u64,
    index: usize,
    path: String,
    meta: Meta,
    shown: &str,
    out: &Outlet,
    ticket: Option<pipeline::Ticket>,
) {
    let Some(ticket) = ticket else {
        return;
    };
    let problem = |detail: String| Problem::new(shown, detail);
    let raw = match archive.by_index_raw(index) {
        Ok(e) => e,
        Err(e) => {
            out.send(
                seq,
                Item::Problem(problem(format!("cannot read: {e}; skipped"))),
                ticket,
            );
            return;
        }
    };
    let (declared, expected) = (raw.size(), raw.crc32());
    let (tx, rx) = bounded::<Chunk>(2);
    if !out.send(
        seq,
        Item::OpenStream {
            path,
            meta,
            chunks: rx,
        },
        ticket,
    ) {
        return;
    }
    let mut inflater = flate2::read::DeflateDecoder::new(raw);
    let mut crc = crc32fast::Hasher::new();
    let mut total = 0u64;
    loop {
        let mut chunk = vec![0u8; CHUNK];
        let mut n = 0;
        while n < chunk.len() {
            match inflater.read(&mut chunk[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let _ = tx.send(Chunk::Failed(problem(format!("cannot read: {e}; skipped"))));
                    return;
                }
            }
        }
        if n == 0 {
            break;
        }
        chunk.truncate(n);
        crc.update(&chunk);
        total += n as u64;
        if tx.send(Chunk::Data(chunk)).is_err() {
            return;
        }
    }
    let detail = if crc.finalize() != expected {
        Some("its data does not match its CRC-32 (corrupt); skipped".to_string())
    } else if total != declared && total & 0xffff_ffff != declared & 0xffff_ffff {
        Some(format!(
            "holds {total} bytes instead of the {declared} its header says; skipped"
        ))
    } else {
        None
    };
    if let Some(d) = detail {
        let _ = tx.send(Chunk::Failed(problem(d)));
    }
}

/// The raw names that the central directory starting at `start` lists more than
/// once, in order of first appearance, with their counts.
fn repeated_names(reader: PRead, start: u64) -> Vec<(Vec<u8>, usize)> {
    let mut r = io::BufReader::new(reader);
    if r.seek(SeekFrom::Start(start)).is_err() {
        return Vec::new();
    }
    let mut counts: std::collections::HashMap<Vec<u8>, usize> = Default::default();
    let mut order = Vec::new();
    let mut fixed = [0u8; 46];
    while r.read_exact(&mut fixed).is_ok() && fixed[..4] == *b"PK\x01\x02" {
        let le = |at: usize| u16::from_le_bytes([fixed[at], fixed[at + 1]]) as usize;
        let (n, extra, comment) = (le(28), le(30), le(32));
        let mut name = vec![0u8; n];
        if r.read_exact(&mut name).is_err() || r.seek_relative((extra + comment) as i64).is_err() {
            break;
        }
        let c = counts.entry(name.clone()).or_insert(0);
        *c += 1;
        if *c == 2 {
            order.push(name);
        }
    }
    order
        .into_iter()
        .map(|n| {
            let c = counts[&n];
            (n, c)
        })
        .collect()
}

fn entry_meta<R: Read>(entry: &ZipFile<'_, R>) -> Meta {
    let mut meta = Meta {
        mode: entry.unix_mode(),
        ..Meta::default()
    };
    let mut utc = None;
    for field in entry.extra_data_fields() {
        match field {
            zip::extra_fields::ExtraField::ExtendedTimestamp(ts) => {
                utc = ts.mod_time().or(utc);
            }
            zip::extra_fields::ExtraField::Custom(c) if c.header_id == 0x7875 => {
                if let Some((uid, gid)) = parse_unix_ids(&c.data) {
                    meta.uid = Some(uid);
                    meta.gid = Some(gid);
                }
            }
            _ => {}
        }
    }
    meta.mtime_ns = match utc {
        Some(s) => Some(s as i64 * 1_000_000_000),
        None => entry.last_modified().and_then(dos_local_ns),
    };
    meta
}

/// Info-ZIP's "ux" extra field: version 1, then size-prefixed little-endian uid, gid.
fn parse_unix_ids(d: &[u8]) -> Option<(u32, u32)> {
    if d.first() != Some(&1) {
        return None;
    }
    let read = |at: usize| -> Option<(u64, usize)> {
        let n = *d.get(at)? as usize;
        if n == 0 || n > 8 {
            return None;
        }
        let bytes = d.get(at + 1..at + 1 + n)?;
        let v = bytes
            .iter()
            .rev()
            .fold(0u64, |acc, &b| (acc << 8) | b as u64);
        Some((v, at + 1 + n))
    };
    let (uid, next) = read(1)?;
    let (gid, _) = read(next)?;
    Some((u32::try_from(uid).ok()?, u32::try_from(gid).ok()?))
}

/// A DOS date and time, read in the local time zone.
fn dos_local_ns(t: zip::DateTime) -> Option<i64> {
    // SAFETY: a zeroed tm is a valid argument; mktime only reads and normalizes it.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    tm.tm_year = t.year() as i32 - 1900;
    tm.tm_mon = t.month() as i32 - 1;
    tm.tm_mday = t.day() as i32;
    tm.tm_hour = t.hour() as i32;
    tm.tm_min = t.minute() as i32;
    tm.tm_sec = t.second() as i32;
    tm.tm_isdst = -1;
    let secs = unsafe { libc::mktime(&mut tm) };
    (secs != -1).then(|| secs as i64 * 1_000_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unix_ids() {
        assert_eq!(
            parse_unix_ids(&[1, 4, 0xe8, 3, 0, 0, 4, 0xe9, 3, 0, 0]),
            Some((1000, 1001))
        );
        assert_eq!(parse_unix_ids(&[1, 2, 1, 0, 2, 2, 0]), Some((1, 2)));
        assert_eq!(parse_unix_ids(&[2, 4, 0, 0, 0, 0]), None);
        assert_eq!(parse_unix_ids(&[1, 4, 0]), None);
    }
}
