//! Checking an archive: every stored byte against its CRC32C, the index against its
//! own invariants (docs/FORMAT.md §3), and the shards against the index. Every problem is
//! reported, not only the first ones; a missing or corrupt part never stops the
//! checks of the other parts.
//!
//! The data pass reads the shards in address order with large positioned reads
//! (several files per read, holes of up to [`MAX_HOLE_READ`] read through) and
//! spreads the CRC32C computations over worker threads. Quick mode runs every index
//! and shard-length check but reads only the file that ends last.

use std::collections::BTreeMap;
use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use rusqlite::types::{Value, ValueRef};
use serde::Serialize;

use crate::core::archive::{Archive, OpenOptions};
use crate::core::crc::{self, Crc32c};
use crate::core::entry::FileInfo;
use crate::core::error::{Error, Result};
use crate::core::format::layout::Layout;
use crate::core::index::{self, Index, DIR_COLS, FILE_COLS};
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
const PAGE: i64 = 8192;

/// The trigger names Python barecat relies on (docs/FORMAT.md §4.2).
const TRIGGERS: [&str; 10] = [
    "add_file",
    "del_file",
    "move_file",
    "resize_file",
    "add_subdir",
    "del_subdir",
    "move_subdir",
    "resize_dir",
    "prevent_file_as_dir",
    "prevent_dir_as_file",
];
/// The index names of the schema (docs/FORMAT.md §2).
const INDEXES: [&str; 5] = [
    "idx_files_path",
    "idx_dirs_path",
    "idx_files_parent",
    "idx_dirs_parent",
    "idx_files_shard_offset",
];

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
pub enum Kind {
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
}

/// One problem or warning.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    pub kind: Kind,
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
    Full,
    Quick,
}

/// The outcome of a verification.
#[derive(Debug, Clone, Serialize)]
pub struct VerifyReport {
    /// The archive path as given.
    pub archive: String,
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
    pub checked_bytes: u64,
    /// Files stored without a CRC32C (NULL): readable, not checkable.
    pub files_without_crc: u64,
    pub problems: Vec<Finding>,
    pub warnings: Vec<Finding>,
    pub space: SpaceSummary,
    pub shards: Vec<ShardSpace>,
}

#[derive(Default)]
struct Findings {
    problems: Vec<Finding>,
    warnings: Vec<Finding>,
}

fn finding(kind: Kind, path: Option<&str>, message: String) -> Finding {
    Finding {
        kind,
        path: path.map(str::to_owned),
        shard: None,
        offset: None,
        message,
    }
}

impl Findings {
    fn problem(&mut self, kind: Kind, path: Option<&str>, message: String) {
        self.problems.push(finding(kind, path, message));
    }

    fn problem_at(&mut self, kind: Kind, fi: &FileInfo, message: String) {
        self.problems.push(Finding {
            kind,
            path: Some(fi.path.clone()),
            shard: Some(fi.shard),
            offset: Some(fi.offset),
            message,
        });
    }

    fn warn(&mut self, kind: Kind, path: Option<&str>, message: String) {
        self.warnings.push(finding(kind, path, message));
    }

    /// Record a failed query as a problem of the index.
    fn query<T>(&mut self, what: &str, r: Result<T>) -> Option<T> {
        match r {
            Ok(v) => Some(v),
            Err(e) => {
                self.problem(
                    Kind::IndexError,
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
        f.warn(Kind::SchemaVersion, None, w.clone());
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
                Ok(count(i, "dirs", &mut g))
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
                Kind::Sidecar,
                None,
                format!("{}: {}{hint}", r.sidecar.display(), r.message),
            );
        }
        Err(e) => f.warn(
            Kind::Sidecar,
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
    f.warn(Kind::Sidecar, None, msg);
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
                kind: Kind::MissingShard,
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
                    kind: Kind::MissingShard,
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

fn count(i: &Index, table: &str, f: &mut Findings) -> u64 {
    let r = i
        .conn()
        .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| {
            r.get::<_, i64>(0)
        })
        .map_err(|e| Error::sqlite(i.path(), e));
    f.query(&format!("counting {table}"), r).unwrap_or(0).max(0) as u64
}

fn strings(i: &Index, sql: &str) -> Result<Vec<String>> {
    let mut stmt = i
        .conn()
        .prepare(sql)
        .map_err(|e| Error::sqlite(i.path(), e))?;
    let mut rows = stmt.query([]).map_err(|e| Error::sqlite(i.path(), e))?;
    let mut out = Vec::new();
    while let Some(r) = rows.next().map_err(|e| Error::sqlite(i.path(), e))? {
        out.push(
            match r.get_ref(0).map_err(|e| Error::sqlite(i.path(), e))? {
                ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                ValueRef::Integer(v) => v.to_string(),
                ValueRef::Real(v) => v.to_string(),
                ValueRef::Null => "NULL".into(),
                ValueRef::Blob(b) => format!("<{} byte blob>", b.len()),
            },
        );
    }
    Ok(out)
}

/// The checks that only need the index.
fn check_index(i: &Index, f: &mut Findings) {
    // SQLite's own consistency check, every message.
    match strings(i, "PRAGMA integrity_check(1000000)") {
        Ok(lines) if lines == ["ok"] => {}
        Ok(lines) => {
            for l in lines {
                f.problem(
                    Kind::IntegrityCheck,
                    None,
                    format!("integrity check: {}", one_line(&l)),
                );
            }
        }
        Err(e) => f.problem(
            Kind::IntegrityCheck,
            None,
            format!("integrity check: {}", one_line(&e.to_string())),
        ),
    }

    // Schema objects Python barecat relies on.
    if let Some(names) = f.query(
        "listing triggers",
        strings(i, "SELECT name FROM sqlite_schema WHERE type = 'trigger'"),
    ) {
        for t in TRIGGERS {
            if !names.iter().any(|n| n == t) {
                f.problem(
                    Kind::Schema,
                    None,
                    format!("trigger {t} is missing: directory statistics will go wrong on writes"),
                );
            }
        }
        for n in names.iter().filter(|n| !TRIGGERS.contains(&n.as_str())) {
            f.warn(
                Kind::UnknownTrigger,
                None,
                format!("trigger {n} is not part of the barecat schema"),
            );
        }
    }
    let indexes = f.query(
        "listing indexes",
        strings(i, "SELECT name FROM sqlite_schema WHERE type = 'index'"),
    );
    let mut unique_path_index = true;
    if let Some(names) = indexes {
        for x in INDEXES {
            if !names.iter().any(|n| n == x) {
                unique_path_index &= x != "idx_files_path";
                f.problem(Kind::Schema, None, format!("index {x} is missing"));
            }
        }
    }
    match i.use_triggers() {
        Ok(true) => {}
        Ok(false) => f.problem(
            Kind::Schema,
            None,
            "config use_triggers is not 1: directory statistics are not maintained".into(),
        ),
        Err(e) => f.problem(Kind::Schema, None, one_line(&e.to_string())),
    }
    if let Err(e) = i.shard_size_limit() {
        f.problem(Kind::Schema, None, one_line(&e.to_string()));
    }

    // Every directory row decodes, and the root exists.
    check_dir_rows(i, f);

    if !unique_path_index {
        if let Some(dups) = f.query(
            "looking for duplicate paths",
            strings(
                i,
                "SELECT path FROM files GROUP BY path HAVING count(*) > 1 ORDER BY path",
            ),
        ) {
            for p in dups {
                f.problem(
                    Kind::DuplicatePath,
                    Some(&p),
                    format!("{p}: stored more than once in files"),
                );
            }
        }
    }

    // Paths that are a file and a directory at once.
    if let Some(both) = f.query(
        "looking for paths in both tables",
        strings(
            i,
            "SELECT path FROM files WHERE path IN (SELECT path FROM dirs) ORDER BY path",
        ),
    ) {
        for p in both {
            f.problem(
                Kind::FileAndDir,
                Some(&p),
                format!("{p:?}: is both a file and a directory"),
            );
        }
    }

    // Rows whose parent directory row is missing.
    check_foreign_keys(i, f);

    // Directory counters against recomputed ones.
    if let Some(mismatches) = f.query("recomputing directory statistics", i.stats_mismatches()) {
        for m in mismatches {
            f.problem(Kind::DirStats, Some(&m.path), m.to_string());
        }
    }
}

/// A dirs row that is wrong: its path if readable, and the decoding error (or
/// `Ok` for a path that is not normalized).
type BadDir = (Option<String>, std::result::Result<(), String>);

fn check_dir_rows(i: &Index, f: &mut Findings) {
    let r = (|| -> Result<(bool, Vec<BadDir>)> {
        let p = i.path();
        let sql = format!("SELECT {DIR_COLS} FROM dirs");
        let mut stmt = i.conn().prepare(&sql).map_err(|e| Error::sqlite(p, e))?;
        let mut rows = stmt.query([]).map_err(|e| Error::sqlite(p, e))?;
        let mut root = false;
        let mut bad = Vec::new();
        while let Some(row) = rows.next().map_err(|e| Error::sqlite(p, e))? {
            match index::decode_dir(row) {
                Ok(d) => {
                    root |= d.path.is_empty();
                    if mpath::normalize(&d.path) != d.path || d.path.contains('\0') {
                        bad.push((Some(d.path.clone()), Ok(())));
                    }
                }
                Err(detail) => {
                    let path = row.get::<_, String>(0).ok();
                    bad.push((path, Err(detail)));
                }
            }
        }
        Ok((root, bad))
    })();
    if let Some((root, bad)) = f.query("reading dirs", r) {
        if !root {
            f.problem(Kind::BadRow, None, "dirs has no root row (path '')".into());
        }
        for (path, e) in bad {
            match e {
                Ok(()) => {
                    let p = path.unwrap_or_default();
                    f.problem(
                        Kind::BadPath,
                        Some(&p),
                        format!("directory {p:?}: {}", path_fault(&p)),
                    );
                }
                Err(detail) => f.problem(Kind::BadRow, path.as_deref(), format!("dirs {detail}")),
            }
        }
    }
}

fn check_foreign_keys(i: &Index, f: &mut Findings) {
    let r = (|| -> Result<Vec<(String, i64, String)>> {
        let p = i.path();
        let mut stmt = i
            .conn()
            .prepare("PRAGMA foreign_key_check")
            .map_err(|e| Error::sqlite(p, e))?;
        let mut rows = stmt.query([]).map_err(|e| Error::sqlite(p, e))?;
        let mut out = Vec::new();
        while let Some(r) = rows.next().map_err(|e| Error::sqlite(p, e))? {
            let table: String = r.get(0).map_err(|e| Error::sqlite(p, e))?;
            let rowid: i64 = r.get::<_, Option<i64>>(1).ok().flatten().unwrap_or(-1);
            let parent: String = r.get(2).unwrap_or_default();
            out.push((table, rowid, parent));
        }
        Ok(out)
    })();
    let Some(rows) = f.query("PRAGMA foreign_key_check", r) else {
        return;
    };
    for (table, rowid, _) in rows {
        let sql = format!("SELECT path, parent FROM {table} WHERE rowid = ?1");
        let row: Option<(String, Option<String>)> = i
            .conn()
            .query_row(&sql, [rowid], |r| {
                Ok((
                    r.get::<_, String>(0).unwrap_or_default(),
                    r.get::<_, Option<String>>(1).unwrap_or_default(),
                ))
            })
            .ok();
        match row {
            Some((path, parent)) => {
                let what = if table == "files" {
                    "file"
                } else {
                    "directory"
                };
                let parent = parent.unwrap_or_default();
                f.problem(
                    Kind::ForeignKey,
                    Some(&path),
                    format!("{what} {path:?}: its parent directory {parent:?} has no dirs row"),
                );
            }
            None => f.problem(
                Kind::ForeignKey,
                None,
                format!("{table} row {rowid}: its parent directory has no dirs row"),
            ),
        }
    }
}

// ------------------------------------------------------------------ the row scan

/// What the scan of the file rows found.
#[derive(Default)]
struct Scan {
    files: u64,
    bytes: u64,
    checked_files: u64,
    checked_bytes: u64,
    without_crc: u64,
    /// Highest shard number any decodable row refers to.
    last_used: Option<u64>,
    /// Shards referred to but absent: files and bytes affected.
    missing: BTreeMap<u64, (u64, u64)>,
    summary: SpaceSummary,
    shards: Vec<ShardSpace>,
}

/// Files whose bytes one worker reads at once: a contiguous range of a shard.
struct Job {
    span: Span,
    files: Vec<JobFile>,
}

struct JobFile {
    path: String,
    offset: u64,
    size: u64,
    crc: u32,
}

/// Groups files into jobs and hands them to the workers.
struct Planner<'a> {
    job: Option<Job>,
    tx: Option<&'a crossbeam_channel::Sender<Job>>,
}

impl Planner<'_> {
    fn add(&mut self, fi: &FileInfo, crc: u32) {
        let Some(tx) = self.tx else {
            return;
        };
        let file = JobFile {
            path: fi.path.clone(),
            offset: fi.offset,
            size: fi.size,
            crc,
        };
        if let Some(job) = &mut self.job {
            if job.span.add(fi, &JOB) {
                job.files.push(file);
                return;
            }
            let done = self.job.take().expect("checked above");
            let _ = tx.send(done);
        }
        self.job = Some(Job {
            span: Span::of(fi),
            files: vec![file],
        });
    }

    fn flush(&mut self) {
        if let (Some(job), Some(tx)) = (self.job.take(), self.tx) {
            let _ = tx.send(job);
        }
    }
}

/// Shared state of the checksum workers.
struct Checker<'a> {
    disk: &'a BTreeMap<u64, DiskShard>,
    shards: &'a crate::core::shards::ShardSet,
    problems: Mutex<Vec<Finding>>,
    files: AtomicU64,
    bytes: AtomicU64,
    progress: &'a Progress,
}

impl Checker<'_> {
    fn report(&self, shard: u64, jf: &JobFile, kind: Kind, message: String) {
        self.problems
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Finding {
                kind,
                path: Some(jf.path.clone()),
                shard: Some(shard),
                offset: Some(jf.offset),
                message,
            });
    }

    fn compare(&self, shard: u64, jf: &JobFile, actual: u32) {
        if actual != jf.crc {
            let e = Error::CrcMismatch {
                member: jf.path.clone(),
                expected: jf.crc,
                actual,
            };
            self.report(shard, jf, Kind::CrcMismatch, e.to_string());
        }
    }

    /// The open file of shard `n`, reusing the worker's last one.
    fn open<'c>(&self, n: u64, cache: &'c mut Option<(u64, File)>) -> std::io::Result<&'c File> {
        if cache.as_ref().is_none_or(|(m, _)| *m != n) {
            *cache = None;
            let path = self
                .disk
                .get(&n)
                .map(|d| d.path.as_path())
                .unwrap_or(Path::new(""));
            let file = File::open(path)?;
            #[cfg(target_os = "linux")]
            unsafe {
                libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_SEQUENTIAL);
            }
            *cache = Some((n, file));
        }
        Ok(&cache.as_ref().expect("just opened").1)
    }

    /// Read the job's range in pieces small enough to stay in the CPU cache, feeding
    /// each piece to the checksums of the files it holds.
    fn run(&self, job: Job, buf: &mut Vec<u8>, cache: &mut Option<(u64, File)>) {
        let total: u64 = job.files.iter().map(|f| f.size).sum();
        let Some(ds) = self.disk.get(&job.span.shard) else {
            return;
        };
        // A remote shard: the whole span in one request.
        let span = self.shards.fetch_span(
            job.span.shard,
            job.span.start,
            job.span.end - job.span.start,
        );
        let opened = match span {
            Some(_) => None,
            None => Some(self.open(job.span.shard, cache)),
        };
        let file = match opened {
            None => None,
            Some(Ok(f)) => Some(f),
            Some(Err(e)) => {
                for jf in &job.files {
                    let msg = format!("{}: cannot open {}: {e}", jf.path, ds.path.display());
                    self.report(job.span.shard, jf, Kind::ReadError, msg);
                }
                return;
            }
        };
        let n = job.files.len();
        let mut crcs = vec![Crc32c::new(); n];
        let mut failed: Option<(u64, String)> = None;
        let mut lo = 0; // files before this one are complete
        let mut pos = job.span.start;
        buf.resize(PIECE, 0);
        while pos < job.span.end {
            let len = (job.span.end - pos).min(PIECE as u64) as usize;
            let piece = &mut buf[..len];
            let read = match (&span, file) {
                (Some(Ok(data)), _) => {
                    let at = (pos - job.span.start) as usize;
                    match data.get(at..at + len) {
                        Some(bytes) => {
                            piece.copy_from_slice(bytes);
                            Ok(())
                        }
                        None => Err(format!(
                            "{}: ends at byte {}, before {}",
                            ds.path.display(),
                            job.span.start + data.len() as u64,
                            pos + len as u64
                        )),
                    }
                }
                (Some(Err(e)), _) => Err(one_line(&e.to_string())),
                (None, Some(file)) => {
                    read_exact_at(file, &ds.path, piece, pos).map_err(|e| one_line(&e.to_string()))
                }
                (None, None) => Err("no shard".to_string()),
            };
            if let Err(e) = read {
                failed = Some((pos, e));
                break;
            }
            let piece_end = pos + len as u64;
            let mut k = lo;
            while k < n && job.files[k].offset < piece_end {
                let jf = &job.files[k];
                let (a, b) = (jf.offset.max(pos), (jf.offset + jf.size).min(piece_end));
                if a < b {
                    crcs[k].update(&piece[(a - pos) as usize..(b - pos) as usize]);
                }
                k += 1;
            }
            while lo < n && job.files[lo].offset + job.files[lo].size <= piece_end {
                lo += 1;
            }
            pos = piece_end;
        }
        for (jf, c) in job.files.iter().zip(&crcs) {
            match &failed {
                Some((at, e)) if jf.offset + jf.size > *at => {
                    let msg = format!("{}: cannot read: {e}", jf.path);
                    self.report(job.span.shard, jf, Kind::ReadError, msg);
                }
                _ => self.compare(job.span.shard, jf, c.value()),
            }
        }
        self.files.fetch_add(n as u64, Ordering::Relaxed);
        self.bytes.fetch_add(total, Ordering::Relaxed);
        self.progress.add(n as u64, total);
    }
}

/// A page of rows in address order: decoded, or the decoding error with the path
/// if there is one.
type RowResult = (std::result::Result<FileInfo, String>, Option<String>);

/// Key of the last row of a page, for the next page.
struct Key {
    shard: Value,
    offset: Value,
    rowid: i64,
}

fn file_page(i: &Index, after: Option<&Key>) -> Result<(Vec<RowResult>, Option<Key>)> {
    let p = i.path();
    let numeric = "typeof(shard) IN ('integer', 'real') AND typeof(offset) IN ('integer', 'real')";
    let sql = match after {
        None => format!(
            "SELECT {FILE_COLS}, rowid FROM files WHERE {numeric} \
             ORDER BY shard, offset, rowid LIMIT ?1"
        ),
        Some(_) => format!(
            "SELECT {FILE_COLS}, rowid FROM files WHERE {numeric} \
             AND (shard, offset, rowid) > (?2, ?3, ?4) ORDER BY shard, offset, rowid LIMIT ?1"
        ),
    };
    let mut stmt = i
        .conn()
        .prepare_cached(&sql)
        .map_err(|e| Error::sqlite(p, e))?;
    let mut rows = match after {
        None => stmt.query(rusqlite::params![PAGE]),
        Some(k) => stmt.query(rusqlite::params![PAGE, k.shard, k.offset, k.rowid]),
    }
    .map_err(|e| Error::sqlite(p, e))?;
    let mut out = Vec::new();
    let mut key = None;
    while let Some(row) = rows.next().map_err(|e| Error::sqlite(p, e))? {
        let decoded = index::decode_file(row);
        let path = match &decoded {
            Ok(_) => None,
            Err(_) => row.get::<_, String>(0).ok(),
        };
        key = Some(Key {
            shard: row.get(1).map_err(|e| Error::sqlite(p, e))?,
            offset: row.get(2).map_err(|e| Error::sqlite(p, e))?,
            rowid: row.get(9).map_err(|e| Error::sqlite(p, e))?,
        });
        out.push((decoded, path));
    }
    Ok((out, key))
}

/// Rows whose shard or offset is not a number at all (NULL, text, blob).
fn non_numeric_rows(i: &Index) -> Result<Vec<RowResult>> {
    let p = i.path();
    let sql = format!(
        "SELECT {FILE_COLS}, rowid FROM files WHERE typeof(shard) NOT IN ('integer', 'real') \
         OR typeof(offset) NOT IN ('integer', 'real')"
    );
    let mut stmt = i.conn().prepare(&sql).map_err(|e| Error::sqlite(p, e))?;
    let mut rows = stmt.query([]).map_err(|e| Error::sqlite(p, e))?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(|e| Error::sqlite(p, e))? {
        let decoded = index::decode_file(row);
        let path = row.get::<_, String>(0).ok();
        out.push((decoded, path));
    }
    Ok(out)
}

/// State of the walk over one shard.
struct ShardWalk {
    shard: u64,
    /// Largest end of a non-empty file so far, and that file.
    covered: Option<(u64, String)>,
}

fn scan_files(
    archive: &Archive,
    disk: &BTreeMap<u64, DiskShard>,
    opts: &VerifyOptions,
    f: &mut Findings,
    progress: &Progress,
) -> Scan {
    let mut scan = Scan::default();
    let mut space = SpaceScanner::new(disk.iter().map(|(n, d)| (*n, d.length, d.symlink)));
    // The file that ends last, for quick mode.
    let mut last: Option<FileInfo> = None;

    let bad = archive.with_index(non_numeric_rows);
    if let Some(rows) = f.query("reading files", bad) {
        for (decoded, path) in rows {
            scan.files += 1;
            let detail = match decoded {
                Err(d) => d,
                Ok(fi) => format!("row {:?}: shard or offset is not an integer", fi.path),
            };
            f.problem(Kind::BadRow, path.as_deref(), format!("files {detail}"));
        }
    }

    let Some(shards) = f.query("opening the shards", archive.shards()) else {
        return scan;
    };
    let (tx, rx) = crossbeam_channel::bounded::<Job>(opts.workers.max(1) * 2);
    let checker = Checker {
        disk,
        shards,
        problems: Mutex::new(Vec::new()),
        files: AtomicU64::new(0),
        bytes: AtomicU64::new(0),
        progress,
    };
    std::thread::scope(|scope| {
        if !opts.quick {
            let workers = if archive.is_remote() {
                opts.workers.max(4)
            } else {
                opts.workers.max(1)
            };
            for _ in 0..workers {
                let rx = rx.clone();
                let checker = &checker;
                scope.spawn(move || {
                    let mut buf = Vec::new();
                    let mut cache = None;
                    for job in rx {
                        checker.run(job, &mut buf, &mut cache);
                    }
                });
            }
        }
        drop(rx);
        let mut planner = Planner {
            job: None,
            tx: (!opts.quick).then_some(&tx),
        };
        let mut walk: Option<ShardWalk> = None;
        let mut key: Option<Key> = None;
        loop {
            let page = archive.with_index(|i| file_page(i, key.as_ref()));
            let Some((rows, next)) = f.query("reading files", page) else {
                break;
            };
            let full = rows.len() as i64 == PAGE;
            for (decoded, path) in rows {
                scan.files += 1;
                let fi = match decoded {
                    Ok(fi) => fi,
                    Err(detail) => {
                        f.problem(Kind::BadRow, path.as_deref(), format!("files {detail}"));
                        continue;
                    }
                };
                scan.bytes += fi.size;
                check_row(&fi, disk, &mut scan, &mut space, &mut walk, f);
                let readable = disk
                    .get(&fi.shard)
                    .is_some_and(|d| d.readable && fi.end() <= d.length);
                if !readable {
                    continue;
                }
                match fi.crc32c {
                    None => scan.without_crc += 1,
                    Some(crc) if fi.size == 0 => {
                        scan.checked_files += 1;
                        if crc != 0 {
                            let e = Error::CrcMismatch {
                                member: fi.path.clone(),
                                expected: crc,
                                actual: 0,
                            };
                            f.problem_at(Kind::CrcMismatch, &fi, e.to_string());
                        }
                    }
                    Some(crc) => {
                        planner.add(&fi, crc);
                        if last
                            .as_ref()
                            .is_none_or(|l| (fi.shard, fi.end()) >= (l.shard, l.end()))
                        {
                            last = Some(fi);
                        }
                    }
                }
            }
            key = next;
            if !full {
                break;
            }
        }
        planner.flush();
        drop(tx);
    });
    if opts.quick {
        if let Some(fi) = last {
            scan.checked_files += 1;
            scan.checked_bytes += fi.size;
            let crc = fi.crc32c.unwrap_or(0);
            match archive.shards().and_then(|s| s.read(&fi)) {
                Ok(data) => {
                    let actual = crc::crc32c(&data);
                    if actual != crc {
                        let e = Error::CrcMismatch {
                            member: fi.path.clone(),
                            expected: crc,
                            actual,
                        };
                        f.problem_at(Kind::CrcMismatch, &fi, e.to_string());
                    }
                }
                Err(e) => f.problem_at(Kind::ReadError, &fi, one_line(&e.to_string())),
            }
        }
    } else {
        scan.checked_files += checker.files.load(Ordering::Relaxed);
        scan.checked_bytes = checker.bytes.load(Ordering::Relaxed);
        let found = checker
            .problems
            .into_inner()
            .unwrap_or_else(|e| e.into_inner());
        f.problems
            .extend(found.into_iter().filter(|p| !moved_and_fine(archive, p)));
    }
    let (shards, summary, _) = space.finish();
    scan.shards = shards;
    scan.summary = summary;
    scan
}

/// A checksum or read failure of a file that a concurrent writer (defragmentation)
/// moved while it was being checked is not a problem if the file reads back right at
/// its new place.
fn moved_and_fine(archive: &Archive, p: &Finding) -> bool {
    if !matches!(p.kind, Kind::CrcMismatch | Kind::ReadError) {
        return false;
    }
    let Some(path) = &p.path else { return false };
    match archive.with_index(|i| i.file(path)) {
        Ok(Some(now)) if Some(now.shard) != p.shard || Some(now.offset) != p.offset => {
            archive.read_file(&now).is_ok()
        }
        _ => false,
    }
}

/// What is wrong with a stored path that failed the form check. A NUL byte also
/// breaks SQLite's string functions (the generated `parent` column).
fn path_fault(p: &str) -> &'static str {
    if p.contains('\0') {
        "path contains a NUL character"
    } else {
        "path is not normalized"
    }
}

/// The per-row checks: path form, shard present, extent inside it, no overlap.
fn check_row(
    fi: &FileInfo,
    disk: &BTreeMap<u64, DiskShard>,
    scan: &mut Scan,
    space: &mut SpaceScanner,
    walk: &mut Option<ShardWalk>,
    f: &mut Findings,
) {
    if fi.path.is_empty() || mpath::normalize(&fi.path) != fi.path || fi.path.contains('\0') {
        f.problem_at(
            Kind::BadPath,
            fi,
            format!("file {:?}: {}", fi.path, path_fault(&fi.path)),
        );
    } else if !mpath::is_safe_stored(&fi.path) {
        f.warn(
            Kind::UnsafePath,
            Some(&fi.path),
            format!(
                "file {:?}: path has '..' components; it is never extracted",
                fi.path
            ),
        );
    }
    scan.last_used = Some(scan.last_used.map_or(fi.shard, |l| l.max(fi.shard)));
    let overlaps = space.push(fi.shard, fi.offset, fi.size);

    if walk.as_ref().is_none_or(|w| w.shard != fi.shard) {
        *walk = Some(ShardWalk {
            shard: fi.shard,
            covered: None,
        });
    }
    let w = walk.as_mut().expect("just set");
    if fi.size > 0 {
        if overlaps {
            if let Some((end, other)) = &w.covered {
                f.problem_at(
                    Kind::Overlap,
                    fi,
                    format!(
                        "{}: bytes {}..{} of shard {} overlap {other:?} (which ends at {end})",
                        fi.path,
                        fi.offset,
                        fi.end(),
                        fi.shard
                    ),
                );
            }
        }
        if w.covered.as_ref().is_none_or(|(end, _)| fi.end() > *end) {
            w.covered = Some((fi.end(), fi.path.clone()));
        }
    }

    match disk.get(&fi.shard) {
        Some(d) if d.readable => {
            if fi.end() > d.length {
                f.problem_at(
                    Kind::ExtentPastEnd,
                    fi,
                    format!(
                        "{}: bytes {}..{} are past the end of {} ({} bytes)",
                        fi.path,
                        fi.offset,
                        fi.end(),
                        d.path.display(),
                        d.length
                    ),
                );
            }
        }
        Some(_) => {} // reported when opening the shard
        None => {
            let m = scan.missing.entry(fi.shard).or_default();
            m.0 += 1;
            m.1 += fi.size;
        }
    }
}

/// Shard-level checks: numbering, referenced shards present, nothing after the
/// last used one.
fn check_shards(layout: &Layout, disk: &BTreeMap<u64, DiskShard>, scan: &Scan, f: &mut Findings) {
    for (&n, &(files, bytes)) in &scan.missing {
        f.problems.push(Finding {
            kind: Kind::MissingShard,
            path: None,
            shard: Some(n),
            offset: None,
            message: format!(
                "{}: missing: {files} file(s) ({bytes} bytes) are stored in it",
                layout.shard_path(n).display()
            ),
        });
    }
    let max_present = disk.keys().next_back().copied();
    if let Some(max) = max_present {
        for n in 0..max {
            if !disk.contains_key(&n) && !scan.missing.contains_key(&n) {
                f.problems.push(Finding {
                    kind: Kind::MissingShard,
                    path: None,
                    shard: Some(n),
                    offset: None,
                    message: format!(
                        "{}: missing: the numbering has a gap (shard {max} exists)",
                        layout.shard_path(n).display()
                    ),
                });
            }
        }
    }
    if disk.is_empty() && scan.missing.is_empty() {
        f.warn(
            Kind::NoShard,
            None,
            format!(
                "{}: no shard file; Python barecat expects one",
                layout.shard_path(0).display()
            ),
        );
    }
    for (&n, d) in disk {
        let extra = match scan.last_used {
            Some(last) => n > last,
            None => n > 0,
        };
        if !extra {
            continue;
        }
        f.warnings.push(Finding {
            kind: Kind::ExtraShard,
            path: None,
            shard: Some(n),
            offset: None,
            message: format!(
                "{}: shard after the last one any file is stored in ({} bytes, reclaimable)",
                d.path.display(),
                d.length
            ),
        });
    }
}

/// Write `report` for humans: one line per problem and warning, then a summary.
pub fn write_human(
    report: &VerifyReport,
    quiet: bool,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    use crate::core::size::human;
    for p in &report.problems {
        writeln!(out, "{}", p.message)?;
    }
    if quiet {
        return Ok(());
    }
    for w in &report.warnings {
        writeln!(out, "warning: {}", w.message)?;
    }
    let s = &report.space;
    if report.ok {
        match report.mode {
            Mode::Full => writeln!(
                out,
                "Verified {} files ({}), all checksums OK.",
                report.files,
                human(report.bytes)
            )?,
            Mode::Quick => writeln!(
                out,
                "Verified {} files (quick check), all OK.",
                report.files
            )?,
        }
    } else {
        writeln!(
            out,
            "{}: {} problem(s) found in {} files ({}).",
            report.archive,
            report.problems.len(),
            report.files,
            human(report.bytes)
        )?;
    }
    writeln!(
        out,
        "Space: {} shard(s), {} on disk, {} live ({:.1}% used), {} reclaimable \
         ({} in {} hole(s), {} trailing).",
        s.shards,
        human(s.physical_bytes),
        human(s.live_bytes),
        s.utilization * 100.0,
        human(s.reclaimable_bytes),
        human(s.hole_bytes),
        s.holes,
        human(s.trailing_bytes)
    )?;
    if s.linked_unused_bytes > 0 {
        writeln!(
            out,
            "Linked shards: {} of their bytes belong to no file here (the headers of a \
             wrapped tar or zip, or another archive's holes); not reclaimable here.",
            human(s.linked_unused_bytes)
        )?;
    }
    if report.files_without_crc > 0 {
        writeln!(
            out,
            "{} file(s) have no stored CRC32C (as Python barecat's --wrap leaves them): \
             their bytes were read but could not be checked.",
            report.files_without_crc
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_of_empty_files_are_bounded() {
        let (tx, rx) = crossbeam_channel::unbounded();
        let mut p = Planner {
            job: None,
            tx: Some(&tx),
        };
        for i in 0..10_000u64 {
            let fi = FileInfo::empty_for_test(i);
            p.add(&fi, 0);
        }
        p.flush();
        drop(tx);
        let sizes: Vec<usize> = rx.iter().map(|j| j.files.len()).collect();
        assert_eq!(sizes.iter().sum::<usize>(), 10_000);
        assert!(sizes.iter().all(|&n| n <= JOB.files), "{sizes:?}");
    }
}
