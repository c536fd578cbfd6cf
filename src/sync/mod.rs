//! rsync-style synchronisation between local directories and archives (`barecat
//! rsync`, Python barecat's `barecat rsync`): local → archive, archive
//! → local, archive → archive.
//!
//! Archive locations are written `ARCHIVE::INNER` (`\::` and `\\` escape a literal
//! `::` and `\`). A source with a trailing `/` stands for its contents; without it,
//! its last name (an archive's root: the archive's name without `.barecat`) is
//! made below the destination. Files are compared by size and modification time
//! (equal: skipped), by CRC32C with `-c`; with `-u` a destination that is as new or
//! newer is kept. Only files are synced; directories are made as their parents.
//! `--delete` removes the destination files that no source has, within the
//! directories the sources are synced into. `--include`/`--exclude` are shell
//! patterns matched against names (an include overrides an exclude); excluded
//! names are neither copied nor deleted.
//!
//! Files of an archive are taken in the order of their bytes in the shards (for an
//! archive that was only added to, the order they were added in, which is also
//! Python's order); local directories are walked in name order.
//!
//! The lines printed for each file are Python barecat's (`add: p`, `update: p`,
//! `skip (unchanged): p`, `would add: p`, `extract: LOCAL`, `would delete: p`,
//! …). Where Python barecat 0.3.1 goes wrong, this does not follow it:
//!
//! * `--delete` in Python deletes every destination file that no source has, also
//!   outside the directory a source without a trailing `/` is synced into
//!   (`rsync --delete photos arch::` empties the rest of the archive); here only
//!   files within the synced directories can be deleted, as rsync does;
//! * `-c` in Python compares checksums only between archives and otherwise always
//!   copies; here a local file's CRC32C is computed and compared with the stored
//!   one; and two files without a stored CRC are not taken for equal;
//! * an updated file's new bytes are appended and the row switched in one
//!   transaction (Python overwrites a file in place when the new content is not
//!   longer, which a crash can leave half old, half new);
//! * a file that cannot be read (vanished, a special file, a broken link) is
//!   reported and the rest goes on, instead of a traceback (or, for a FIFO, a
//!   hang). Symbolic links to files are followed, links to directories are not.
//!
//! Writes to an archive go through [`ArchiveWriter`] batches: a killed run leaves
//! an archive that reads back, every file with its old or its new content, and
//! running the same command again finishes the job.
//!
//! The parts: `endpoint.rs` parses the arguments into [`Endpoint`]s; this file
//! resolves the sources, decides what to copy and holds the run's shared state;
//! `to_archive.rs` and `to_local.rs` are the two directions.

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use crate::core::archive::Archive;
use crate::core::crc::Crc32c;
use crate::core::entry::{FileInfo, FileOrder, Meta};
use crate::core::error::{Error, IoContext, Result};
use crate::core::format::layout::Layout;
use crate::core::glob::{Glob, GlobOptions};
use crate::core::index::{Cond, ScanOrder, ScanSpec, Table};
use crate::core::path as mpath;
use crate::core::progress::Progress;
use crate::core::writer::{ArchiveWriter, CreateMode, WriterOptions};
use crate::export::{extract, ExtractOptions, Selection};

mod endpoint;
mod to_archive;
mod to_local;

pub use endpoint::{parse_endpoint, Endpoint, Side};

/// Options of [`sync`].
#[derive(Debug, Clone, Default)]
pub struct SyncOptions {
    /// Print what would be done, change nothing (`-n`).
    pub dry_run: bool,
    /// Print a line for every file handled (`-v`).
    pub verbose: bool,
    /// Delete destination files that no source has (`--delete`).
    pub delete: bool,
    /// Compare by CRC32C instead of size and time (`-c`).
    pub checksum: bool,
    /// Keep destination files that are as new or newer (`-u`).
    pub update: bool,
    /// Patterns of names to take (`--include`).
    pub include: Vec<String>,
    /// Patterns of names to leave out (`--exclude`).
    pub exclude: Vec<String>,
    /// Commit the destination archive at least this often (default: the writer's).
    pub commit_interval: Option<Duration>,
    /// Write the destination archive's sidecar at the end.
    pub sidecar: bool,
    /// Threads writing local files (archive → local).
    pub workers: usize,
}

/// What [`sync`] did (or, with `dry_run`, would do).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SyncReport {
    /// Files new at the destination.
    pub added: u64,
    /// Files whose destination copy was replaced.
    pub updated: u64,
    /// Files left as they were (unchanged, newer, same checksum).
    pub skipped: u64,
    /// Files removed from the destination because the source has none (`--delete`).
    pub deleted: u64,
    /// Bytes copied.
    pub bytes: u64,
    /// Files that could not be synced (each one reported).
    pub problems: u64,
}

/// What [`sync`] tells while it runs.
#[derive(Debug)]
pub enum Note<'a> {
    /// A line of Python barecat's rsync output (for standard output).
    Line(&'a str),
    /// A file that could not be synced (the rest goes on).
    Problem(&'a Error),
}

/// `--include` / `--exclude` on names: excluded when an exclude pattern matches
/// and no include pattern does.
struct Names {
    include: Vec<Glob>,
    exclude: Vec<Glob>,
}

impl Names {
    fn new(opts: &SyncOptions) -> Result<Names> {
        let compile = |v: &[String]| -> Result<Vec<Glob>> {
            v.iter()
                .map(|p| {
                    Glob::new(
                        p,
                        GlobOptions {
                            recursive: false,
                            include_hidden: true,
                        },
                    )
                })
                .collect()
        };
        Ok(Names {
            include: compile(&opts.include)?,
            exclude: compile(&opts.exclude)?,
        })
    }

    fn excluded(&self, name: &str) -> bool {
        self.exclude.iter().any(|g| g.is_match(name))
            && !self.include.iter().any(|g| g.is_match(name))
    }
}

/// The last name of an archive path, without `-sqlite-index` and `.barecat`.
fn archive_basename(archive: &Path) -> String {
    let name = archive
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = name.strip_suffix("-sqlite-index").unwrap_or(&name);
    name.strip_suffix(".barecat").unwrap_or(name).to_string()
}

/// A source, resolved: what it holds and where it goes.
struct Source {
    kind: SourceKind,
    /// Where its files go: an archive path (to an archive) or a local path (to a
    /// local directory), as a string (Python's `os.path.join` of the parts).
    target: String,
}

enum SourceKind {
    LocalFile(PathBuf),
    LocalDir(PathBuf),
    ArchiveFile { archive: usize, fi: FileInfo },
    ArchiveDir { archive: usize, dir: String },
}

impl Source {
    /// The destination subtree that `--delete` may clean: a directory source's.
    fn scope(&self) -> Option<&str> {
        match self.kind {
            SourceKind::LocalDir(_) | SourceKind::ArchiveDir { .. } => Some(&self.target),
            _ => None,
        }
    }
}

/// Local paths are joined as strings, as Python's `os.path.join` does, so that the
/// printed paths are the same.
fn join_local(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else if dir.ends_with('/') {
        format!("{dir}{name}")
    } else {
        format!("{dir}/{name}")
    }
}

fn lossy(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// Synchronise `sources` into `dest`.
pub fn sync(
    sources: &[Endpoint],
    dest: &Endpoint,
    opts: &SyncOptions,
    progress: &Progress,
    note: &mut dyn FnMut(Note),
) -> Result<SyncReport> {
    let names = Names::new(opts)?;
    let local_sources = sources
        .iter()
        .filter(|s| matches!(s.side, Side::Local(_)))
        .count();
    if matches!(dest.side, Side::Local(_)) && local_sources > 0 {
        return Err(Error::InvalidOperation(
            "a local source needs an archive destination (ARCHIVE::PATH); copy between \
             local directories with rsync itself"
                .into(),
        ));
    }
    // Open every source archive, and check every source exists, before anything
    // is written.
    let mut archives: Vec<(PathBuf, Archive)> = Vec::new();
    let mut resolved = Vec::with_capacity(sources.len());
    let dest_prefix = match &dest.side {
        Side::Archive { inner, .. } => inner.clone(),
        Side::Local(p) => lossy(p),
    };
    let to_archive = matches!(dest.side, Side::Archive { .. });
    let place = |name: &str| -> String {
        if to_archive {
            mpath::join(&dest_prefix, &mpath::normalize(name))
        } else {
            join_local(&dest_prefix, name)
        }
    };
    for ep in sources {
        let source = match &ep.side {
            Side::Local(p) => {
                let md = fs::metadata(p).at(p)?;
                let base = p
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                if md.is_dir() {
                    Source {
                        kind: SourceKind::LocalDir(p.clone()),
                        target: if ep.contents {
                            dest_prefix.clone()
                        } else {
                            place(&base)
                        },
                    }
                } else {
                    Source {
                        kind: SourceKind::LocalFile(p.clone()),
                        target: place(&base),
                    }
                }
            }
            Side::Archive { archive, inner } => {
                if let Side::Archive { archive: d, .. } = &dest.side {
                    if crate::maint::inputs::same_file(
                        Layout::resolve(archive).index(),
                        Layout::resolve(d).index(),
                    ) {
                        return Err(Error::InvalidOperation(format!(
                            "{}: source and destination are the same archive",
                            archive.display()
                        )));
                    }
                }
                let k = match archives.iter().position(|(p, _)| p == archive) {
                    Some(k) => k,
                    None => {
                        archives.push((archive.clone(), Archive::open(archive)?));
                        archives.len() - 1
                    }
                };
                let a = &archives[k].1;
                let base = if inner.is_empty() {
                    archive_basename(archive)
                } else {
                    mpath::basename(inner).to_string()
                };
                match a.lookup(inner)? {
                    Some(crate::Entry::File(fi)) => Source {
                        kind: SourceKind::ArchiveFile { archive: k, fi },
                        target: place(&base),
                    },
                    Some(crate::Entry::Dir(_)) => Source {
                        kind: SourceKind::ArchiveDir {
                            archive: k,
                            dir: inner.clone(),
                        },
                        target: if ep.contents {
                            dest_prefix.clone()
                        } else {
                            place(&base)
                        },
                    },
                    None => {
                        return Err(Error::Input {
                            path: ep.text.clone(),
                            detail: "no such file or directory in archive".into(),
                        })
                    }
                }
            }
        };
        resolved.push(source);
    }
    let mut report = SyncReport::default();
    let mut run = Run {
        opts,
        names: &names,
        archives: &archives,
        report: &mut report,
        note,
        progress,
    };
    match &dest.side {
        Side::Archive { archive, .. } => run.sync_into_archive(archive, &resolved)?,
        Side::Local(dir) => run.sync_into_local(dir, &resolved)?,
    }
    Ok(report)
}

struct Run<'a, 'n> {
    opts: &'a SyncOptions,
    names: &'a Names,
    archives: &'a [(PathBuf, Archive)],
    report: &'a mut SyncReport,
    note: &'a mut (dyn FnMut(Note) + 'n),
    progress: &'a Progress,
}

/// How a file compares with its copy at the destination.
enum Verdict {
    /// Copy it (`true`: a copy exists and is replaced).
    Copy(bool),
    /// Leave it; the reason, as Python barecat words it (`unchanged`, `newer`, …).
    Skip(&'static str),
}

/// What is known of the source file when deciding.
struct Seen<'s> {
    size: u64,
    mtime_ns: Option<i64>,
    crc: &'s dyn Fn() -> Result<Option<u32>>,
}

/// What is known of the destination copy.
struct There<'s> {
    size: u64,
    mtime_ns: Option<i64>,
    crc: &'s dyn Fn() -> Result<Option<u32>>,
}

fn decide(opts: &SyncOptions, src: &Seen, dst: Option<&There>) -> Result<Verdict> {
    let Some(dst) = dst else {
        return Ok(Verdict::Copy(false));
    };
    if opts.update {
        if let (Some(d), Some(s)) = (dst.mtime_ns, src.mtime_ns) {
            if d != 0 && d >= s {
                return Ok(Verdict::Skip("newer"));
            }
        }
    }
    if opts.checksum {
        if src.size == dst.size {
            if let (Some(a), Some(b)) = ((src.crc)()?, (dst.crc)()?) {
                if a == b {
                    return Ok(Verdict::Skip("checksum match"));
                }
            }
        }
    } else if src.size == dst.size && src.mtime_ns == dst.mtime_ns {
        return Ok(Verdict::Skip("unchanged"));
    }
    Ok(Verdict::Copy(true))
}

/// CRC32C of a local file, read through.
fn local_crc(path: &Path) -> Result<Option<u32>> {
    let mut f = File::open(path).at(path)?;
    let mut crc = Crc32c::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).at(path)?;
        if n == 0 {
            return Ok(Some(crc.value()));
        }
        crc.update(&buf[..n]);
    }
}

/// Errors that concern one file: reported, and the sync goes on.
fn is_file_error(e: &Error) -> bool {
    matches!(
        e,
        Error::Io { .. }
            | Error::SourceChanged { .. }
            | Error::CrcMismatch { .. }
            | Error::BadExtent { .. }
            | Error::MissingShard { .. }
            | Error::IsADirectory(_)
            | Error::NotADirectory(_)
            | Error::FileExists(_)
            | Error::InvalidPath { .. }
            | Error::Input { .. }
    )
}

impl Run<'_, '_> {
    fn line(&mut self, s: &str) {
        (self.note)(Note::Line(s));
    }

    fn problem(&mut self, e: Error) -> Result<()> {
        if !is_file_error(&e) {
            return Err(e);
        }
        self.report.problems += 1;
        (self.note)(Note::Problem(&e));
        Ok(())
    }
}

/// `path` relative to the directory `dir` (`""` is the root).
fn strip_dir<'p>(path: &'p str, dir: &str) -> &'p str {
    if dir.is_empty() {
        path
    } else {
        path.strip_prefix(dir)
            .and_then(|r| r.strip_prefix('/'))
            .unwrap_or("")
    }
}

/// The destination archive: read-only for a dry run (absent when it does not exist
/// yet), or the writer.
enum Dest<'w> {
    View(Option<&'w Archive>),
    Writer(&'w mut ArchiveWriter),
}

impl Dest<'_> {
    fn file(&self, path: &str) -> Result<Option<FileInfo>> {
        match self {
            Dest::View(None) => Ok(None),
            Dest::View(Some(a)) => a.with_index(|i| i.file(path)),
            Dest::Writer(w) => w.index().file(path),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::endpoint::{find_unescaped, unescape};
    use super::*;

    fn arch(a: &str, inner: &str, contents: bool, text: &str) -> Endpoint {
        Endpoint {
            side: Side::Archive {
                archive: a.into(),
                inner: inner.into(),
            },
            contents,
            text: text.into(),
        }
    }

    #[test]
    fn endpoints() {
        assert_eq!(
            parse_endpoint("d.barecat::").unwrap(),
            arch("d.barecat", "", false, "d.barecat::")
        );
        assert_eq!(
            parse_endpoint("d.barecat::/img/").unwrap(),
            arch("d.barecat", "img", true, "d.barecat::/img/")
        );
        assert_eq!(
            parse_endpoint(r"my\::odd.barecat::a\\b").unwrap(),
            arch("my::odd.barecat", r"a\b", false, r"my\::odd.barecat::a\\b")
        );
        let l = parse_endpoint("photos/").unwrap();
        assert_eq!(l.side, Side::Local("photos".into()));
        assert!(l.contents);
        assert!(parse_endpoint("host:/data/x").is_err());
        assert!(parse_endpoint("barecat://h:1/a::").is_err());
        assert!(parse_endpoint("x.tar.gz::").is_err());
        assert!(parse_endpoint("d.barecat::../x").is_err());
        assert_eq!(
            parse_endpoint("a:b").unwrap().side,
            Side::Local("a:b".into())
        );
        assert_eq!(archive_basename(Path::new("x/ds.barecat")), "ds");
        assert_eq!(archive_basename(Path::new("x/ds-sqlite-index")), "ds");
    }

    #[test]
    fn names_and_escapes() {
        assert_eq!(find_unescaped(r"a\::b::c", "::"), Some(5));
        assert_eq!(find_unescaped(r"a\\::b", "::"), Some(3));
        assert_eq!(unescape(r"a\\\::b"), r"a\::b");
        let n = Names::new(&SyncOptions {
            exclude: vec!["*.tmp".into(), ".*".into()],
            include: vec!["keep.tmp".into()],
            ..Default::default()
        })
        .unwrap();
        assert!(n.excluded("a.tmp"));
        assert!(!n.excluded("keep.tmp"));
        assert!(n.excluded(".git"));
        assert!(!n.excluded("a.txt"));
    }
}
