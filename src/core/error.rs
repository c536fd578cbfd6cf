//! The library's error type.
//!
//! Every variant renders as one line that names the path (archive file, shard, or
//! member path) and the problem, so that command-line tools can print it as is.
//! Member paths are shown through [`printable`] (control characters and bytes
//! that are not UTF-8 escaped, as `ls -b` shows names).

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

/// Result alias used throughout the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong while reading or writing a barecat archive.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An I/O error on a file of the file system.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file the failed operation was on.
        path: PathBuf,
        /// What the operating system reported.
        #[source]
        source: io::Error,
    },

    /// Writing the output of a command or listing (standard output, a stream handed
    /// to an exporter) failed: a full disk, a closed pipe. Unlike [`Error::Io`] it
    /// concerns no file of the archive or of the file system being read, so a
    /// command ends on it instead of going on with the next file.
    #[error("<output>: {source}")]
    Output {
        /// What the operating system reported.
        #[source]
        source: io::Error,
    },

    /// An error reported by SQLite for the index at `path`.
    #[error("{}: {}", path.display(), sqlite_message(source))]
    Sqlite {
        /// The index file.
        path: PathBuf,
        /// What SQLite reported.
        #[source]
        source: rusqlite::Error,
    },

    /// The index holds something that breaks the format: a wrong column type, a
    /// negative size, a missing config row, and so on.
    #[error("{}: corrupt index: {detail}", path.display())]
    CorruptIndex {
        /// The index file.
        path: PathBuf,
        /// What breaks the format, for the message.
        detail: String,
    },

    /// The file at `path` is not a barecat index.
    #[error("{}: not a barecat archive ({detail})", path.display())]
    NotAnArchive {
        /// The file that was opened.
        path: PathBuf,
        /// Why it is not an index (SQLite's message, a missing table).
        detail: String,
    },

    /// No archive at the given path.
    #[error("{}: no such archive", path.display())]
    ArchiveNotFound {
        /// The path that was looked up.
        path: PathBuf,
    },

    /// An archive exists where a new one was to be created.
    #[error("{}: archive already exists", path.display())]
    ArchiveExists {
        /// The archive that is in the way.
        path: PathBuf,
    },

    /// The schema version of the index is not one we can handle in this mode.
    #[error("{}: {detail}", path.display())]
    UnsupportedSchema {
        /// The index file.
        path: PathBuf,
        /// The version found and what this mode needs.
        detail: String,
    },

    /// A shard the index needs is missing, or the shard numbering has a gap.
    #[error("{}: missing shard {shard} ({detail})", path.display())]
    MissingShard {
        /// The archive (its index path).
        path: PathBuf,
        /// The number of the missing shard.
        shard: u64,
        /// What is missing: the shard file or the gap in the numbering.
        detail: String,
    },

    /// A file row points at bytes that its shard does not hold, or at an impossible
    /// place (negative or absurd offset or size).
    #[error(
        "{}: bad extent (shard {shard}, offset {offset}, size {size}): {detail}",
        printable(member)
    )]
    BadExtent {
        /// The member whose row it is.
        member: String,
        /// The shard number stored in the row.
        shard: i64,
        /// The offset stored in the row.
        offset: i64,
        /// The size stored in the row.
        size: i64,
        /// What is wrong with the extent.
        detail: String,
    },

    /// The CRC32C of the bytes read differs from the stored one.
    #[error(
        "{}: CRC32C mismatch (stored {expected}, computed {actual})",
        printable(member)
    )]
    CrcMismatch {
        /// The member that was read.
        member: String,
        /// The CRC32C stored in the index.
        expected: u32,
        /// The CRC32C of the bytes read.
        actual: u32,
    },

    /// A member path that may not be stored (`..`, absolute, NUL, empty).
    #[error("\"{}\": invalid archive path: {reason}", printable(path))]
    InvalidPath {
        /// The path as given.
        path: String,
        /// Why it may not be stored (`..`, absolute, NUL, empty).
        reason: &'static str,
    },

    /// A member path that is not in the archive.
    #[error("{}: no such file or directory in archive", printable(member_name(.0)))]
    NotFound(String),

    /// The path exists as a file.
    #[error("{}: already exists in archive as a file", printable(.0))]
    FileExists(String),

    /// The path exists as a directory.
    #[error("{}: is a directory in archive", printable(.0))]
    IsADirectory(String),

    /// A parent of the path exists as a file, or the path is a file where a
    /// directory is needed.
    #[error("{}: a parent is a file in archive, not a directory", printable(.0))]
    NotADirectory(String),

    /// A directory that must be empty is not.
    #[error("{}: directory not empty", printable(.0))]
    DirectoryNotEmpty(String),

    /// A request that makes no sense for the archive (renaming the root into itself, …).
    #[error("{0}")]
    InvalidOperation(String),

    /// Another process holds the writer lock.
    #[error("{}: archive is being written by another process", path.display())]
    Locked {
        /// The archive whose lock is held.
        path: PathBuf,
    },

    /// A shard is a symbolic link (an archive merged with `--symlink`, or wrapped
    /// around a tar or zip with `--wrap`) and the operation would write through it.
    #[error(
        "{}: shard is a symbolic link to {} (an archive merged with --symlink, or \
         wrapped around a tar or zip with --wrap); refusing to write through it \
         (barecat-merge copies the archive into one of its own)",
        path.display(),
        target.display()
    )]
    SymlinkedShard {
        /// The shard that is a link.
        path: PathBuf,
        /// Where the link points.
        target: PathBuf,
    },

    /// The archive can only be read (for example schema 0.2, or opened read-only).
    #[error("{}: archive is read-only: {reason}", path.display())]
    ReadOnly {
        /// The archive.
        path: PathBuf,
        /// Why it cannot be written.
        reason: String,
    },

    /// A size string such as `10G` that could not be parsed.
    #[error("invalid size {0:?} (expected a number with an optional K, M, G, T or P suffix)")]
    InvalidSize(String),

    /// A permission mode (`644`, `u+x,go-w`) that could not be parsed.
    #[error("{0:?} is not a mode (octal like 644, or symbolic like u+x,go-w)")]
    InvalidMode(String),

    /// A date (`@SECONDS`, `YYYY-MM-DD[ HH:MM[:SS[.FRACTION]]]`) that could not be
    /// parsed.
    #[error("{0:?} is not a date (@SECONDS, or YYYY-MM-DD[ HH:MM[:SS[.FRACTION]]])")]
    InvalidDate(String),

    /// A glob pattern that could not be compiled.
    #[error("invalid pattern {pattern:?}: {detail}")]
    InvalidPattern {
        /// The pattern as given.
        pattern: String,
        /// The compiler's complaint.
        detail: String,
    },

    /// A source changed while it was being read.
    #[error("{path}: {detail}")]
    SourceChanged {
        /// The source file or entry.
        path: String,
        /// What changed (size, time).
        detail: String,
    },

    /// The operation was interrupted (Ctrl-C).
    #[error("interrupted")]
    Interrupted,

    /// Writing to a destination path outside the archive was refused: a symbolic
    /// link or a non-directory in the way, an existing file, a duplicated member.
    #[error("{}: {detail}", path.display())]
    Refused {
        /// The destination path that was refused.
        path: PathBuf,
        /// Why writing there was refused.
        detail: String,
    },

    /// An input of a kind this operation cannot take.
    #[error("{}: {detail}", path.display())]
    UnsupportedInput {
        /// The input.
        path: PathBuf,
        /// What kind of input it is and why it cannot be taken.
        detail: String,
    },

    /// The same file path in two inputs of a merge.
    #[error(
        "{}: stored in both {} and {} (use --ignore-duplicates to keep the first)",
        printable(path),
        first.display(),
        second.display()
    )]
    DuplicatePath {
        /// The member path stored twice.
        path: String,
        /// The input that has it first.
        first: PathBuf,
        /// The input that has it again.
        second: PathBuf,
    },
    /// A record dataset or record table that breaks its format: a corrupt
    /// `meta.json`, a short offset table, an entry outside its chunk, …
    #[error("{}: {detail}", path.display())]
    CorruptRecords {
        /// The dataset or table file.
        path: PathBuf,
        /// What breaks the format.
        detail: String,
    },

    /// A record table over a barecat archive that no longer matches the archive's
    /// index (files added, deleted or moved since it was built).
    #[error(
        "{}: record table is out of date: {detail}; rebuild it with `barecat-records build {}`",
        table.display(),
        archive.display()
    )]
    StaleRecords {
        /// The record table file.
        table: PathBuf,
        /// The archive it was built over.
        archive: PathBuf,
        /// What no longer matches.
        detail: String,
    },

    /// Another process holds the writer lock of a record dataset.
    #[error("{}: dataset is being written by another process", path.display())]
    RecordsLocked {
        /// The dataset directory.
        path: PathBuf,
    },

    /// A record index outside `[0, length)`.
    #[error("{}: record {index} out of range (the dataset has {len} records)", path.display())]
    RecordOutOfRange {
        /// The dataset or table.
        path: PathBuf,
        /// The index asked for.
        index: u64,
        /// The number of records.
        len: u64,
    },

    /// An input being imported cannot be read on: a corrupt or truncated tar or zip,
    /// or (in strict mode) the first entry that had to be skipped. `path` names the
    /// input or the entry.
    #[error("{path}: {detail}")]
    Input {
        /// The input or the entry within it.
        path: String,
        /// Why it cannot be read on.
        detail: String,
    },

    /// A file system could not be mounted or unmounted at `path`.
    #[error("{}: {detail}", path.display())]
    Mount {
        /// The mount point.
        path: PathBuf,
        /// What the mount or unmount reported.
        detail: String,
    },

    /// A remote archive or object could not be read: a bad URL, a request that
    /// failed for good (with its status), an object replaced while it was read.
    #[error("{url}: {detail}")]
    Remote {
        /// The URL of the archive or object.
        url: String,
        /// What failed (with the status of the request).
        detail: String,
    },
}

/// An I/O error as a short phrase, without Rust's "(os error N)" suffix.
pub fn io_reason(e: &io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// A member path as messages show it: the root, stored as "", is shown as `/`.
fn member_name(path: &str) -> &str {
    if path.is_empty() {
        "/ (the archive root)"
    } else {
        path
    }
}

fn sqlite_message(e: &rusqlite::Error) -> String {
    // rusqlite's Display for SqliteFailure with a message is already one line.
    e.to_string().replace('\n', " ")
}

impl Error {
    /// Wrap an I/O error with the path it concerns.
    pub fn io(path: impl AsRef<Path>, source: io::Error) -> Self {
        Error::Io {
            path: path.as_ref().to_path_buf(),
            source,
        }
    }

    /// Wrap an I/O error of writing the output ([`Error::Output`]).
    pub fn output(source: io::Error) -> Self {
        Error::Output { source }
    }

    /// Wrap an SQLite error with the index path it concerns. An I/O error of a
    /// remote index is the request's own error (its URL and status), which the
    /// VFS left for this thread (`stash_io_cause`).
    pub fn sqlite(path: impl AsRef<Path>, source: rusqlite::Error) -> Self {
        if let rusqlite::Error::SqliteFailure(f, _) = &source {
            if f.code == rusqlite::ErrorCode::SystemIoFailure {
                if let Some(e) = IO_CAUSE.with(|c| c.borrow_mut().take()) {
                    return e;
                }
            }
        }
        Error::Sqlite {
            path: path.as_ref().to_path_buf(),
            source,
        }
    }

    /// A path of the archive (a shard, a chunk) that holds something else than a
    /// regular file.
    pub fn not_a_file(path: &Path, is_dir: bool) -> Self {
        let what = if is_dir {
            "is a directory, not a regular file"
        } else {
            "not a regular file"
        };
        Error::io(path, io::Error::new(io::ErrorKind::InvalidInput, what))
    }

    /// A corrupt-index error.
    pub fn corrupt(path: impl AsRef<Path>, detail: impl Into<String>) -> Self {
        Error::CorruptIndex {
            path: path.as_ref().to_path_buf(),
            detail: detail.into(),
        }
    }

    /// True when this error is about one member and processing may go on with the
    /// next one (as opposed to an error of the archive or the file system as a whole).
    pub fn is_per_member(&self) -> bool {
        matches!(
            self,
            Error::InvalidPath { .. }
                | Error::NotFound(_)
                | Error::FileExists(_)
                | Error::IsADirectory(_)
                | Error::NotADirectory(_)
                | Error::SourceChanged { .. }
                | Error::CrcMismatch { .. }
                | Error::BadExtent { .. }
                | Error::Refused { .. }
        )
    }
}

/// Extension to attach a path to `io::Result`s.
pub(crate) trait IoContext<T> {
    fn at(self, path: impl AsRef<Path>) -> Result<T>;
}

impl<T> IoContext<T> for io::Result<T> {
    fn at(self, path: impl AsRef<Path>) -> Result<T> {
        self.map_err(|e| Error::io(path, e))
    }
}

/// Extension to attach an index path to `rusqlite::Result`s.
pub(crate) trait SqlContext<T> {
    fn at(self, path: impl AsRef<Path>) -> Result<T>;
}

impl<T> SqlContext<T> for rusqlite::Result<T> {
    fn at(self, path: impl AsRef<Path>) -> Result<T> {
        self.map_err(|e| Error::sqlite(path, e))
    }
}

/// A name (a member path, a file name) as every message shows it: on one line and
/// unambiguous, as `ls -b` shows file names. Printable UTF-8 stays as it is; a
/// backslash is doubled; control characters become `\n`, `\t`, `\r` or `\xNN` (each
/// byte of their UTF-8); bytes that are not UTF-8 become `\xNN` (`\xc4`), so the user
/// can tell which member it was and find it again.
pub fn printable<T: AsRef<[u8]> + ?Sized>(name: &T) -> Cow<'_, str> {
    let bytes = name.as_ref();
    if let Ok(s) = std::str::from_utf8(bytes) {
        if !s.chars().any(|c| c.is_control() || c == '\\') {
            return Cow::Borrowed(s);
        }
    }
    let mut out = String::with_capacity(bytes.len() + 8);
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                c if c.is_control() => {
                    let mut buf = [0u8; 4];
                    for b in c.encode_utf8(&mut buf).bytes() {
                        let _ = write!(out, "\\x{b:02x}");
                    }
                }
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    Cow::Owned(out)
}

thread_local! {
    /// The real error behind the last `SQLITE_IOERR` of this thread, if a VFS of
    /// ours left one (a remote read's URL and status).
    static IO_CAUSE: std::cell::RefCell<Option<Error>> = const { std::cell::RefCell::new(None) };
}

/// Leave `e` as the cause of the I/O error a VFS is about to return to SQLite on
/// this thread: [`Error::sqlite`] shows it instead of SQLite's "disk I/O error".
pub(crate) fn stash_io_cause(e: Error) {
    IO_CAUSE.with(|c| *c.borrow_mut() = Some(e));
}
