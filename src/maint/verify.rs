//! Checking an archive: every stored byte against its CRC32C, the index against its
//! own invariants, and the shards against the index. Every problem is
//! reported, not only the first ones; a missing or corrupt part never stops the
//! checks of the other parts.
//!
//! The data pass reads the shards in address order with large positioned reads
//! (several files per read, holes of up to [`MAX_HOLE_READ`] read through) and
//! spreads the CRC32C computations over worker threads. Quick mode runs every index
//! and shard-length check but reads only the file that ends last.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use serde::Serialize;

use crate::core::archive::{Archive, OpenOptions};
use crate::core::crc::{self, Crc32c};
use crate::core::entry::FileInfo;
use crate::core::error::{Error, Result};
use crate::core::format::layout::Layout;
use crate::core::index::{self, Cond, Index, Orphan, ScanKey, ScanOrder, ScanSpec, Table};
use crate::core::path as mpath;
use crate::core::progress::Progress;
use crate::maint::copy::read_exact_at;
use crate::maint::space::{ShardSpace, SpaceScanner, SpaceSummary};
use crate::maint::span::{Span, SpanLimits};

/// Files are handed to the workers in groups spanning at most this many bytes.
pub const READ_CHUNK: u64 = 8 << 20;
/// A hole of at most this size between two files is read through rather than
/// starting a new read.
pub const MAX_HOLE_READ: u64 = 1 << 20;
/// What one checksum job may span (at most 4096 files: see [`SpanLimits::files`]).
const JOB: SpanLimits = SpanLimits {
    files: 4096,
    hole: MAX_HOLE_READ,
    bytes: READ_CHUNK,
};
/// Each read brings in this much: small enough for the bytes to be checksummed while
/// still in the CPU cache.
const PIECE: usize = 256 << 10;
const PAGE: usize = 8192;

mod index_checks;
mod report;
mod shard_scan;

use index_checks::{check_index, count};
pub use report::write_human;
use shard_scan::{check_shards, path_fault, scan_files};

/// How to verify.
#[derive(Debug, Clone, Copy)]
pub struct VerifyOptions {
    /// Index checks, shard lengths and the CRC of the last file only.
    pub quick: bool,
    /// Threads computing checksums (at least 1). For a remote archive, at least 4
    /// (each has one request of up to 8 MiB in flight).
    pub workers: usize,
    /// How the index of a remote archive is read.
    pub index_mode: crate::core::remote::IndexMode,
}

/// What kind of problem (or warning) a finding is. Serialized in snake case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// `PRAGMA integrity_check` reported something.
    IntegrityCheck,
    /// A query of the index failed (the index is damaged).
    IndexError,
    /// Missing trigger, index or config row, or a bad config value.
    Schema,
    /// A row with a value of the wrong type or out of range.
    BadRow,
    /// A stored path that is not normalized.
    BadPath,
    /// The same path twice in `files`.
    DuplicatePath,
    /// A row whose parent directory has no `dirs` row.
    ForeignKey,
    /// A path that is both a file and a directory.
    FileAndDir,
    /// Directory counters that differ from the recomputed ones.
    DirStats,
    /// A shard the index refers to is missing, or the numbering has a gap.
    MissingShard,
    /// A file extends past the end of its shard.
    ExtentPastEnd,
    /// Two non-empty files share bytes.
    Overlap,
    /// The bytes do not match the stored CRC32C.
    CrcMismatch,
    /// The bytes could not be read.
    ReadError,
    /// (warning) A path with `..` components: readable, but never extracted.
    UnsafePath,
    /// (warning) A shard after the last one any file is stored in: its bytes are
    /// reclaimable, as left behind by an interrupted writer.
    ExtraShard,
    /// (warning) No shard file at all.
    NoShard,
    /// (warning) An old or newer schema version.
    SchemaVersion,
    /// (warning) Triggers that are not part of the schema.
    UnknownTrigger,
    /// (warning) The B-tree sidecar is missing, stale, corrupt or of another
    /// format: readers go without it (see `barecat-sidecar`).
    Sidecar,
    /// (warning) An undo journal (`P-undo`) left by a rewrite in place that was
    /// interrupted: the file it names may fail its check until a writer opens the
    /// archive and puts its old bytes back (docs/FORMAT.md §7.4).
    InterruptedRewrite,
}

/// One problem or warning.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// What kind of problem it is; its name is stable in `--json` output.
    pub kind: FindingKind,
    /// The member path concerned, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The shard concerned, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<u64>,
    /// The offset in the shard, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// One line for humans.
    pub message: String,
}

/// Full or quick.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Every file's bytes are read and checked against its CRC32C.
    Full,
    /// The index and the extents only; no file's bytes are read.
    Quick,
}

/// The outcome of a verification.
#[derive(Debug, Clone, Serialize)]
pub struct VerifyReport {
    /// The archive path as given.
    pub archive: String,
    /// Full or quick.
    pub mode: Mode,
    /// No problem found (warnings do not count).
    pub ok: bool,
    /// Rows in `files`.
    pub files: u64,
    /// Sum of their sizes.
    pub bytes: u64,
    /// Rows in `dirs`.
    pub dirs: u64,
    /// Files whose bytes were read and checked.
    pub checked_files: u64,
    /// Their total size.
    pub checked_bytes: u64,
    /// Files stored without a CRC32C (NULL): readable, not checkable.
    pub files_without_crc: u64,
    /// Findings that make the archive not ok.
    pub problems: Vec<Finding>,
    /// Findings that are allowed but worth knowing.
    pub warnings: Vec<Finding>,
    /// Live bytes, holes and trailing garbage of the whole archive.
    pub space: SpaceSummary,
    /// The same per shard.
    pub shards: Vec<ShardSpace>,
}

#[derive(Default)]
struct Findings {
    problems: Vec<Finding>,
    warnings: Vec<Finding>,
}

fn finding(kind: FindingKind, path: Option<&str>, message: String) -> Finding {
    Finding {
        kind,
        path: path.map(str::to_owned),
        shard: None,
        offset: None,
        message,
    }
}

impl Findings {
    fn problem(&mut self, kind: FindingKind, path: Option<&str>, message: String) {
        self.problems.push(finding(kind, path, message));
    }

    fn problem_at(&mut self, kind: FindingKind, fi: &FileInfo, message: String) {
        self.problems.push(Finding {
            kind,
            path: Some(fi.path.clone()),
            shard: Some(fi.shard),
            offset: Some(fi.offset),
            message,
        });
    }

    fn warn(&mut self, kind: FindingKind, path: Option<&str>, message: String) {
        self.warnings.push(finding(kind, path, message));
    }

    /// Record a failed query as a problem of the index.
    fn query<T>(&mut self, what: &str, r: Result<T>) -> Option<T> {
        match r {
            Ok(v) => Some(v),
            Err(e) => {
                self.problem(
                    FindingKind::IndexError,
                    None,
                    format!("{what}: {}", one_line(&e.to_string())),
                );
                None
            }
        }
    }
}

fn one_line(s: &str) -> String {
    s.replace('\n', " ")
}

/// A shard file found on disk. Shards are opened by the workers as they get to
/// them, one at a time, so that any number of shards can be checked.
struct DiskShard {
    path: PathBuf,
    /// It could be opened and its length read.
    readable: bool,
    length: u64,
    symlink: bool,
}

/// Verify the archive at `path`. An `Err` means the verification could not run (no
/// archive there, not an archive, unreadable directory); everything found wrong in
/// an archive that could be opened is in the report.
pub fn verify(path: &Path, opts: &VerifyOptions, progress: &Progress) -> Result<VerifyReport> {
    let open = OpenOptions {
        index_mode: opts.index_mode,
        ..OpenOptions::lenient()
    };
    let archive = Archive::open_with(path, open)?;
    let layout = archive.layout().clone();
    let mut f = Findings::default();
    for w in archive.warnings() {
        f.warn(FindingKind::SchemaVersion, None, w.clone());
    }
    let disk = if archive.is_remote() {
        remote_shards(&archive, &mut f)?
    } else {
        open_shards(&layout, &mut f)?
    };
    if let Ok(Some(root)) = archive.with_index(|i| i.dir("")) {
        progress.set_total(root.size_tree.max(0) as u64);
    }
    // The index checks run on a connection of their own while the files are read.
    let (dirs, scan) = std::thread::scope(|scope| {
        let index_checks = scope.spawn(|| {
            let mut g = Findings::default();
            let dirs = archive.with_index(|i| {
                check_index(i, &mut g);
                Ok(count(i, Table::Dirs, &mut g))
            });
            (dirs, g)
        });
        let scan = scan_files(&archive, &disk, opts, &mut f, progress);
        let (dirs, g) = index_checks
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e));
        f.problems.extend(g.problems);
        f.warnings.splice(0..0, g.warnings);
        (dirs, scan)
    });
    let dirs = dirs?;
    check_shards(&layout, &disk, &scan, &mut f);
    match archive.remote_index()? {
        Some(r) => check_remote_sidecar(r, &mut f),
        None => check_sidecar(path, &mut f),
    }
    let journal = layout.undo_journal();
    if !archive.is_remote() && journal.exists() {
        f.warn(
            FindingKind::InterruptedRewrite,
            None,
            format!(
                "{}: a rewrite in place was interrupted; opening the archive for writing \
                 (e.g. `barecat-repair`) puts the file's old bytes back",
                journal.display()
            ),
        );
    }

    let mut problems = f.problems;
    problems.sort_by(|a, b| {
        (a.kind, a.shard, a.offset, &a.path).cmp(&(b.kind, b.shard, b.offset, &b.path))
    });
    Ok(VerifyReport {
        archive: path.display().to_string(),
        mode: if opts.quick { Mode::Quick } else { Mode::Full },
        ok: problems.is_empty(),
        files: scan.files,
        bytes: scan.bytes,
        dirs,
        checked_files: scan.checked_files,
        checked_bytes: scan.checked_bytes,
        files_without_crc: scan.without_crc,
        problems,
        warnings: f.warnings,
        space: scan.summary,
        shards: scan.shards,
    })
}

/// The B-tree sidecar is an optional cache: anything but a valid one is a warning,
/// never a problem of the archive.
fn check_sidecar(path: &Path, f: &mut Findings) {
    use crate::core::sidecar::{check, Status};
    match check(path) {
        Ok(r) => {
            let hint = match r.status {
                Status::Valid => return,
                Status::Missing => "",
                Status::Absent => "; readers ignore it",
                Status::Stale | Status::Corrupt => {
                    "; readers ignore it, `barecat-sidecar ARCHIVE` rewrites it"
                }
            };
            f.warn(
                FindingKind::Sidecar,
                None,
                format!("{}: {}{hint}", r.sidecar.display(), r.message),
            );
        }
        Err(e) => f.warn(
            FindingKind::Sidecar,
            None,
            format!(
                "the sidecar cannot be checked: {}",
                one_line(&e.to_string())
            ),
        ),
    }
}

/// The sidecar of a remote archive, as its opening found it (its pages were
/// compared with the index's page 1, not each with the index's own page).
fn check_remote_sidecar(r: &crate::core::remote::RemoteIndex, f: &mut Findings) {
    use crate::core::remote::SidecarUse;
    let url = r.url.url_of(
        &r.url
            .with_suffix(crate::core::format::layout::SIDECAR_SUFFIX),
    );
    let msg = match &r.sidecar {
        SidecarUse::Pinned { .. } | SidecarUse::NotNeeded => return,
        SidecarUse::Missing => format!("{url}: no sidecar; remote lookups cost more requests"),
        SidecarUse::Rejected(why) => format!(
            "{url}: {why}; readers ignore it, `barecat-sidecar ARCHIVE` on the local copy rewrites it"
        ),
        SidecarUse::Unreadable(e) => format!("the sidecar cannot be read: {}", one_line(e)),
    };
    f.warn(FindingKind::Sidecar, None, msg);
}

/// The shards of a remote archive: those the index refers to (an HTTP server
/// lists nothing), each asked for its length. Shard objects after the last one
/// the index uses are not seen.
fn remote_shards(archive: &Archive, f: &mut Findings) -> Result<BTreeMap<u64, DiskShard>> {
    let mut out = BTreeMap::new();
    let max = archive.with_index(|i| i.max_shard())?.unwrap_or(0).max(0) as u64;
    let shards = archive.shards()?;
    for n in 0..=max {
        match shards.len(n) {
            Ok(length) => {
                out.insert(
                    n,
                    DiskShard {
                        path: shards.path(n),
                        readable: true,
                        length,
                        symlink: false,
                    },
                );
            }
            // Not there: reported by check_shards, with the files stored in it.
            Err(Error::MissingShard { .. }) => {}
            Err(e) => f.problems.push(Finding {
                kind: FindingKind::MissingShard,
                path: None,
                shard: Some(n),
                offset: None,
                message: format!("cannot read shard {n}: {}", one_line(&e.to_string())),
            }),
        }
    }
    Ok(out)
}

fn open_shards(layout: &Layout, f: &mut Findings) -> Result<BTreeMap<u64, DiskShard>> {
    let mut out = BTreeMap::new();
    for s in layout.shard_files()? {
        let opened = File::open(&s.path).and_then(|file| file.metadata());
        let (readable, length) = match opened {
            Ok(md) => (true, md.len()),
            Err(e) => {
                let what = if s.is_symlink && e.kind() == std::io::ErrorKind::NotFound {
                    "a symbolic link to a file that does not exist".to_string()
                } else {
                    e.to_string()
                };
                f.problems.push(Finding {
                    kind: FindingKind::MissingShard,
                    path: None,
                    shard: Some(s.number),
                    offset: None,
                    message: format!("{}: cannot open shard: {what}", s.path.display()),
                });
                (false, 0)
            }
        };
        out.insert(
            s.number,
            DiskShard {
                path: s.path,
                readable,
                length,
                symlink: s.is_symlink,
            },
        );
    }
    Ok(out)
}
