//! Ingest: filling an archive from a directory tree, a list of paths, a tar stream or
//! a zip file.
//!
//! Every source runs through one pipeline (`pipeline.rs`): entries are enumerated in a
//! deterministic order, loaded (opened, read, checksummed) on reader threads, and
//! handed to the single [`ArchiveWriter`] strictly in enumeration order. The output
//! is therefore the same, byte for byte, whatever the number of threads. The data in
//! flight is bounded by a byte budget ([`IngestOptions::buffer_size`]); files larger
//! than a fraction of it are streamed in chunks and never held whole in memory.
//!
//! Bad entries (a file that vanishes, cannot be read, changes while being read, has a
//! name that is not UTF-8, would escape the archive root, or duplicates a path) are
//! reported through the event sink as one-line [`Problem`]s and skipped; the rest
//! goes on ([`IngestOptions::strict`] stops at the first one instead). A corrupt or
//! truncated tar or zip stops the import with [`Error::Input`] after everything
//! before the damage has been added and committed (unless
//! [`IngestOptions::commit_on_error`] is off: then the caller decides).
//!
//! * [`add_paths`]: files and directories of the file system ([`FsInput`]).
//! * [`import_tar`]: a tar stream, plain or compressed (detected by magic bytes).
//! * [`import_zip`]: a zip file.
//! * [`import_archive`]: an archive in any format this crate reads (tar, zip, 7z,
//!   rar, cpio, rpm, ISO 9660, ar, xar, cab, lha), told by its content
//!   ([`formats`]).
//!
//! All of them work on an already open writer, so that other operations (merging
//! tar and zip inputs into an archive) can reuse them. They do not call
//! [`ArchiveWriter::finish`]; the caller does.

use std::fmt;
use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::core::error::{Error, IoContext, Result};
use crate::core::glob::PathFilter;
use crate::core::writer::ArchiveWriter;

pub mod decompress;
pub mod filter;
pub mod formats;
pub mod fs;
pub(crate) mod pipeline;
pub mod tar;
pub mod tar_reader;
pub mod wrap;
pub mod zip;

pub use filter::Filter;
pub use fs::{FsInput, ListInput};
pub use zip::ZipSource;

/// What to do with symbolic links found in a tar or zip input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SymlinkPolicy {
    /// Skip them and count them in the summary.
    #[default]
    Skip,
    /// Report each one as a problem (skipped, exit status 1; stops with `strict`).
    Error,
}

/// What to do with a file whose path an earlier entry of the same import already
/// stored (a tar appended to with `tar -r`, the same path listed twice).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Duplicates {
    /// The last copy wins, as `tar -x` and Python's `tarfile` leave it: the earlier
    /// copy's row is replaced by the later one (its bytes stay in the shard as a
    /// hole, which `barecat-defrag` reclaims). Hard links take the copy their
    /// target had when they came, as they do on extraction.
    #[default]
    Last,
    /// The first copy stays; later ones are skipped.
    First,
    /// The first duplicate stops the import.
    Error,
}

/// Default byte budget of the data in flight between the readers and the writer.
pub const DEFAULT_BUFFER_SIZE: u64 = 16 << 20;

/// Options shared by every source.
#[derive(Debug, Clone)]
pub struct IngestOptions {
    /// Reader threads (file systems and zip files; a tar stream is read by one).
    pub workers: usize,
    /// Bytes of file content that may be in flight at once (read but not yet
    /// written). Files larger than a quarter of it (at most 16 MiB) are streamed.
    pub buffer_size: u64,
    /// Drop this many leading components of every stored path (as tar does);
    /// entries left with nothing are skipped.
    pub strip_components: usize,
    /// Stop at the first problem instead of skipping the entry.
    pub strict: bool,
    /// Skip, silently, entries whose path is already in the archive (resuming an
    /// interrupted run). Without it such an entry is a duplicate, reported.
    pub skip_existing: bool,
    /// When an error stops the import, commit what was added before it (the
    /// default). Off, nothing is committed by the import itself: the caller commits
    /// or drops the writer (rolling back), so that adding to an archive can be all
    /// or nothing.
    pub commit_on_error: bool,
    /// Symbolic links in tar and zip inputs.
    pub symlinks: SymlinkPolicy,
    /// Several entries of one path in the same input.
    pub duplicates: Duplicates,
    /// The caller chose `duplicates` (a command-line option): each duplicate is
    /// noted on one line. Otherwise each one is a problem (the exit status is 1:
    /// a copy that was not stored is never dropped silently), and with
    /// [`Duplicates::First`] it reads "already in the archive (duplicate path)".
    pub duplicates_chosen: bool,
    /// Include and exclude patterns.
    pub filter: Filter,
    /// Tar and zip inputs: only the members this selects (matched against the
    /// member's normalized path, before `strip_components` and `prefix`), as
    /// Python barecat's `merge --pattern` and `-i/-x` select them.
    pub select: Option<Arc<PathFilter>>,
    /// Tar and zip inputs: store every member below this directory (`merge
    /// --prefix`, `--as-subdirs`); `""` for none.
    pub prefix: String,
    /// Member names that are not valid UTF-8 are decoded from this encoding
    /// (`--name-encoding`); without it they are reported. Zip names without the
    /// UTF-8 flag default to CP437.
    pub name_encoding: Option<formats::names::NameEncoding>,
}

impl Default for IngestOptions {
    fn default() -> Self {
        IngestOptions {
            workers: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            buffer_size: DEFAULT_BUFFER_SIZE,
            strip_components: 0,
            strict: false,
            skip_existing: false,
            commit_on_error: true,
            symlinks: SymlinkPolicy::Skip,
            duplicates: Duplicates::default(),
            duplicates_chosen: false,
            filter: Filter::default(),
            select: None,
            prefix: String::new(),
            name_encoding: None,
        }
    }
}

impl IngestOptions {
    /// The last steps of placing a tar or zip member whose normalized path is
    /// `norm` and whose stored path would be `stored`: `None` when [`select`]
    /// leaves it out, else `stored` below [`prefix`].
    ///
    /// [`select`]: Self::select
    /// [`prefix`]: Self::prefix
    pub(crate) fn place(&self, norm: &str, stored: String) -> Option<String> {
        if let Some(sel) = &self.select {
            if !norm.is_empty() && !sel.selects(norm) {
                return None;
            }
        }
        Some(crate::core::path::join(&self.prefix, &stored))
    }

    /// Files above this size are streamed in chunks.
    pub(crate) fn stream_threshold(&self) -> u64 {
        (self.buffer_size / 4).clamp(64 << 10, 16 << 20)
    }
}

/// An entry that was skipped because of an error: one line naming it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The entry as the user knows it (a file-system path or a member name), as
    /// messages show it: escaped by [`printable`].
    pub path: String,
    /// What went wrong.
    pub detail: String,
}

impl Problem {
    /// A problem with the entry named `name` (raw bytes or text; escaped here).
    pub fn new(name: impl AsRef<[u8]>, detail: impl Into<String>) -> Problem {
        Problem {
            path: printable(name.as_ref()).into_owned(),
            detail: detail.into(),
        }
    }

    pub(crate) fn into_error(self) -> Error {
        Error::Input {
            path: self.path,
            detail: self.detail,
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.detail)
    }
}

pub use crate::core::path::printable;

/// What an import reports while it runs, in input order.
#[derive(Debug)]
pub enum Event<'a> {
    /// An entry was skipped because of an error (the run exits with status 1).
    Problem(&'a Problem),
    /// Something worth telling that is not an error (`removing leading '/'`, …).
    Notice(&'a str),
    /// More files and bytes were added (sent a few times per second, and at the end).
    Progress {
        /// Files added since the last progress event.
        files: u64,
        /// Bytes added since the last progress event.
        bytes: u64,
    },
    /// The total content size, when the input tells it up front (zip files).
    Total {
        /// The total content size.
        bytes: u64,
    },
}

/// What an import did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    /// Files added (including hard links stored as copies).
    pub files: u64,
    /// Bytes of file content added.
    pub bytes: u64,
    /// Directory rows created (explicit directories and missing ancestors).
    pub dirs: u64,
    /// Entries skipped because of an error (each one was reported as a problem).
    pub problems: u64,
    /// Symbolic links skipped (tar and zip inputs).
    pub symlinks: u64,
    /// Device files, FIFOs and sockets skipped.
    pub special: u64,
    /// Hard links stored as files with a copy of their target's content.
    pub hardlinks: u64,
    /// Entries already in the archive and skipped (resuming).
    pub existing: u64,
    /// Files replaced by a later entry of the same path ([`Duplicates::Last`]).
    pub replaced: u64,
    /// Bytes of the replaced files, left in the shards as holes.
    pub replaced_bytes: u64,
    /// Of `replaced`, those reported as problems (counted in `problems` too: the
    /// policy was not chosen).
    pub replaced_reported: u64,
    /// Later entries of a path already stored, skipped ([`Duplicates::First`],
    /// when chosen).
    pub duplicates_skipped: u64,
    /// Wall time.
    pub elapsed: Duration,
}

impl Summary {
    /// Everything went well: nothing was skipped because of an error.
    pub fn is_clean(&self) -> bool {
        self.problems == 0
    }
}

/// Add files and directories of the file system (see [`FsInput`]) to an open
/// archive.
pub fn add_paths(
    w: &mut ArchiveWriter,
    input: &FsInput,
    opts: &IngestOptions,
    sink: &mut dyn FnMut(Event),
) -> Result<Summary> {
    fs::run(w, input, opts, sink)
}

/// Add the members of a tar stream (plain, gzip, bzip2, xz or zstd, detected by
/// magic bytes) to an open archive. `name` names the input in messages.
pub fn import_tar(
    w: &mut ArchiveWriter,
    input: impl Read + Send,
    name: &str,
    opts: &IngestOptions,
    sink: &mut dyn FnMut(Event),
) -> Result<Summary> {
    tar::run(w, input, name, opts, sink)
}

/// Add the entries of the zip file at `path` to an open archive.
pub fn import_zip(
    w: &mut ArchiveWriter,
    path: &Path,
    opts: &IngestOptions,
    sink: &mut dyn FnMut(Event),
) -> Result<Summary> {
    zip::run(w, &ZipSource::open(path)?, opts, sink)
}

/// Add the entries of an already opened zip file (see [`ZipSource::open`], which
/// rejects a damaged zip before anything is written).
pub fn import_zip_source(
    w: &mut ArchiveWriter,
    src: &ZipSource,
    opts: &IngestOptions,
    sink: &mut dyn FnMut(Event),
) -> Result<Summary> {
    zip::run(w, src, opts, sink)
}

/// The kind of an archive file to import.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArchiveKind {
    /// A zip file.
    Zip,
    /// A tar stream, possibly compressed.
    Tar,
}

/// Tell a zip file from a (possibly compressed) tar by its first bytes.
pub fn detect_kind(path: &Path) -> Result<ArchiveKind> {
    let mut head = [0u8; 4];
    let mut f = File::open(path).at(path)?;
    let mut n = 0;
    while n < head.len() {
        match f.read(&mut head[n..]).at(path)? {
            0 => break,
            k => n += k,
        }
    }
    Ok(
        if n == 4 && (head == *b"PK\x03\x04" || head == *b"PK\x05\x06") {
            ArchiveKind::Zip
        } else {
            ArchiveKind::Tar
        },
    )
}

/// Import an archive file whatever its format (tar, plain or compressed, zip,
/// and the formats of [`formats`]), told by its content.
pub fn import_archive(
    w: &mut ArchiveWriter,
    path: &Path,
    opts: &IngestOptions,
    sink: &mut dyn FnMut(Event),
) -> Result<Summary> {
    formats::import_path(w, path, opts, sink)
}

pub(crate) use crate::core::error::io_reason;
