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

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use crate::core::archive::Archive;
use crate::core::crc::Crc32c;
use crate::core::entry::{FileInfo, Meta, Order};
use crate::core::error::{Error, IoContext, Result};
use crate::core::format::layout::Layout;
use crate::core::glob::{Glob, GlobOptions};
use crate::core::index::{Cond, ScanOrder, ScanSpec, Table};
use crate::core::path as mpath;
use crate::core::progress::Progress;
use crate::core::writer::{ArchiveWriter, CreateMode, WriterOptions};
use crate::export::{extract, ExtractOptions, Selection};

/// Where one side of a sync is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A local file or directory.
    Local(PathBuf),
    /// A path inside a barecat archive (`""`: its root).
    Archive { archive: PathBuf, inner: String },
}

/// A source or destination argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub location: Location,
    /// The argument ended in `/`: the contents of the directory, not the directory.
    pub contents: bool,
    /// The argument as given.
    pub text: String,
}

/// The position of the first `needle` not escaped by an odd number of backslashes.
fn find_unescaped(s: &str, needle: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = s[from..].find(needle).map(|i| i + from) {
        let backslashes = s[..i].bytes().rev().take_while(|&b| b == b'\\').count();
        if backslashes % 2 == 0 {
            return Some(i);
        }
        from = i + 1;
    }
    None
}

/// Undo the escapes: `\\` is `\`, `\::` is `::`.
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        if let Some(r) = rest.strip_prefix("\\\\") {
            out.push('\\');
            rest = r;
        } else if let Some(r) = rest.strip_prefix("\\::") {
            out.push_str("::");
            rest = r;
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// `[user@]host:/path`: Python barecat's SSH form.
fn is_remote(s: &str) -> bool {
    let (head, tail) = match s.split_once(':') {
        Some(p) => p,
        None => return false,
    };
    let host = head.rsplit_once('@').map_or(head, |(_, h)| h);
    !host.is_empty() && !host.contains('/') && tail.starts_with('/')
}

/// Parse a source or destination argument.
pub fn parse_endpoint(arg: &str) -> Result<Endpoint> {
    let contents = arg.ends_with('/');
    let trimmed = arg.trim_end_matches('/');
    let unsupported =
        |what: &str| Error::InvalidOperation(format!("{arg}: {what} are not supported"));
    if arg.starts_with("barecat://") {
        return Err(unsupported("remote archives (barecat://HOST/…)"));
    }
    if is_remote(trimmed) {
        return Err(unsupported("remote paths (HOST:/PATH)"));
    }
    let location = match find_unescaped(trimmed, "::") {
        Some(i) => {
            let archive = unescape(&trimmed[..i]);
            if archive.is_empty() {
                return Err(Error::InvalidOperation(format!(
                    "{arg}: no archive before '::'"
                )));
            }
            let lower = archive.to_lowercase();
            if [
                ".tar", ".tgz", ".tbz2", ".txz", ".zip", ".tar.gz", ".tar.bz2", ".tar.xz",
            ]
            .iter()
            .any(|e| lower.ends_with(e))
            {
                return Err(unsupported(
                    "tar and zip files as rsync locations (barecat convert or barecat-from-tar \
                     and barecat-from-zip import them)",
                ));
            }
            let inner = mpath::normalize(&unescape(&trimmed[i + 2..]));
            if !inner.is_empty() {
                mpath::check_member(&inner)?;
            }
            Location::Archive {
                archive: PathBuf::from(archive),
                inner,
            }
        }
        // "/" alone is the root directory, not the empty path.
        None if trimmed.is_empty() && contents => Location::Local(PathBuf::from("/")),
        None => Location::Local(PathBuf::from(unescape(trimmed))),
    };
    Ok(Endpoint {
        location,
        contents,
        text: arg.to_string(),
    })
}

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
    /// Name patterns (`--include`, `--exclude`).
    pub include: Vec<String>,
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
        .filter(|s| matches!(s.location, Location::Local(_)))
        .count();
    if matches!(dest.location, Location::Local(_)) && local_sources > 0 {
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
    let dest_prefix = match &dest.location {
        Location::Archive { inner, .. } => inner.clone(),
        Location::Local(p) => lossy(p),
    };
    let to_archive = matches!(dest.location, Location::Archive { .. });
    let place = |name: &str| -> String {
        if to_archive {
            mpath::join(&dest_prefix, &mpath::normalize(name))
        } else {
            join_local(&dest_prefix, name)
        }
    };
    for ep in sources {
        let source = match &ep.location {
            Location::Local(p) => {
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
            Location::Archive { archive, inner } => {
                if let Location::Archive { archive: d, .. } = &dest.location {
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
    match &dest.location {
        Location::Archive { archive, .. } => run.sync_into_archive(archive, &resolved)?,
        Location::Local(dir) => run.sync_into_local(dir, &resolved)?,
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

/// Reads a stored file in chunks (its CRC was checked in a first pass).
struct StoredReader<'a> {
    archive: &'a Archive,
    fi: &'a FileInfo,
    at: u64,
}

impl Read for StoredReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.at >= self.fi.size {
            return Ok(0);
        }
        let n = self
            .archive
            .read_range_into(self.fi, self.at, buf)
            .map_err(io::Error::other)?;
        self.at += n as u64;
        Ok(n)
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

    // ---------------------------------------------------------------- to an archive

    fn sync_into_archive(&mut self, archive: &Path, sources: &[Source]) -> Result<()> {
        let exists = Layout::exists(archive)?;
        if self.opts.dry_run {
            let dest = if exists {
                Some(Archive::open(archive)?)
            } else {
                None
            };
            for s in sources {
                self.source_to_archive(s, Dest::View(dest.as_ref()))?;
            }
            if self.opts.delete {
                if let Some(d) = &dest {
                    let doomed = d.with_index(|i| self.extraneous_in_archive(i, sources))?;
                    for p in doomed {
                        self.line(&format!("would delete: {p}"));
                        self.report.deleted += 1;
                    }
                }
            }
            return Ok(());
        }
        let mut wopts = WriterOptions::with_mode(CreateMode::AppendOrCreate);
        if let Some(t) = self.opts.commit_interval {
            wopts.commit_interval = t;
        }
        wopts.sidecar = self.opts.sidecar;
        let mut w = ArchiveWriter::open(archive, wopts)?;
        // Bytes after the last file are what an interrupted run left behind.
        w.trim_garbage()?;
        for s in sources {
            self.source_to_archive(s, Dest::Writer(&mut w))?;
        }
        if self.opts.delete {
            let doomed = self.extraneous_in_archive(w.index(), sources)?;
            for p in doomed {
                if self.opts.verbose {
                    self.line(&format!("delete: {p}"));
                }
                match w.remove_file(&p) {
                    Ok(_) => self.report.deleted += 1,
                    Err(e) => self.problem(e)?,
                }
            }
        }
        w.trim_garbage()?;
        w.finish()?;
        Ok(())
    }

    fn source_to_archive(&mut self, s: &Source, mut dest: Dest) -> Result<()> {
        match &s.kind {
            SourceKind::LocalFile(p) => self.local_file_to_archive(p, &s.target, &mut dest),
            SourceKind::LocalDir(root) => {
                let mut walk = walkdir::WalkDir::new(root)
                    .follow_links(false)
                    .sort_by_file_name()
                    .min_depth(1)
                    .into_iter();
                while let Some(entry) = walk.next() {
                    let entry = match entry {
                        Ok(e) => e,
                        Err(e) => {
                            let path = e.path().map(Path::to_path_buf).unwrap_or(root.clone());
                            let err = e
                                .into_io_error()
                                .unwrap_or_else(|| io::Error::other("file system loop"));
                            self.problem(Error::io(path, err))?;
                            continue;
                        }
                    };
                    let name = entry.file_name().to_string_lossy();
                    if self.names.excluded(&name) {
                        if entry.file_type().is_dir() {
                            walk.skip_current_dir();
                        }
                        continue;
                    }
                    if entry.file_type().is_dir() {
                        continue;
                    }
                    let rel = entry.path().strip_prefix(root).unwrap_or(entry.path());
                    let Some(rel) = rel.to_str() else {
                        self.problem(Error::Input {
                            path: mpath::printable(rel.as_os_str().as_encoded_bytes()).into_owned(),
                            detail: "a name that is not UTF-8; skipped".into(),
                        })?;
                        continue;
                    };
                    let to = mpath::join(&s.target, rel);
                    self.local_file_to_archive(entry.path(), &to, &mut dest)?;
                }
                Ok(())
            }
            SourceKind::ArchiveFile { archive, fi } => {
                let src = &self.archives[*archive].1;
                self.stored_file_to_archive(src, fi, &s.target, &mut dest)
            }
            SourceKind::ArchiveDir { archive, dir } => {
                let src = &self.archives[*archive].1;
                for fi in src.files(Order::Address, dir) {
                    let fi = fi?;
                    if self.names.excluded(mpath::basename(&fi.path)) {
                        continue;
                    }
                    let rel = strip_dir(&fi.path, dir);
                    let to = mpath::join(&s.target, rel);
                    self.stored_file_to_archive(src, &fi, &to, &mut dest)?;
                }
                Ok(())
            }
        }
    }

    fn local_file_to_archive(&mut self, path: &Path, to: &str, dest: &mut Dest) -> Result<()> {
        let to = match mpath::check_member(to) {
            Ok(t) if !t.is_empty() => t,
            Ok(_) => return self.problem(Error::IsADirectory(String::new())),
            Err(e) => return self.problem(e),
        };
        let md = match fs::metadata(path) {
            Ok(m) => m,
            Err(e) => return self.problem(Error::io(path, e)),
        };
        if md.is_dir() {
            // A symbolic link to a directory: not followed (as Python's os.walk).
            return Ok(());
        }
        if !md.is_file() {
            return self.problem(Error::Input {
                path: lossy(path),
                detail: "not a regular file; skipped".into(),
            });
        }
        let meta = Meta::from_fs(&md);
        let existing = dest.file(&to)?;
        let crc = || local_crc(path);
        let verdict = {
            let stored_crc = || Ok(existing.as_ref().and_then(|f| f.crc32c));
            let there = existing.as_ref().map(|f| There {
                size: f.size,
                mtime_ns: f.meta.mtime_ns,
                crc: &stored_crc,
            });
            let seen = Seen {
                size: md.len(),
                mtime_ns: meta.mtime_ns,
                crc: &crc,
            };
            match decide(self.opts, &seen, there.as_ref()) {
                Ok(v) => v,
                Err(e) => return self.problem(e),
            }
        };
        let replace = match verdict {
            Verdict::Skip(why) => {
                self.report.skipped += 1;
                if self.opts.verbose {
                    self.line(&format!("skip ({why}): {to}"));
                }
                return Ok(());
            }
            Verdict::Copy(r) => r,
        };
        let verb = if replace { "update" } else { "add" };
        if self.opts.dry_run {
            self.line(&format!("would {verb}: {to}"));
            self.count(replace, md.len());
            return Ok(());
        }
        if self.opts.verbose {
            self.line(&format!("{verb}: {to}"));
        }
        let Dest::Writer(w) = dest else {
            unreachable!("a writer unless dry-run")
        };
        let mut file = match File::open(path) {
            Ok(f) => f,
            Err(e) => return self.problem(Error::io(path, e)),
        };
        let r = match w.index().file_with_id(&to)? {
            Some((id, _)) => w.replace_file_from_reader(id, meta, md.len(), &mut file),
            None => w.add_file_from_reader(&to, meta, md.len(), &mut file),
        };
        match r {
            Ok(fi) => {
                self.count(replace, fi.size);
                Ok(())
            }
            Err(Error::SourceChanged { detail, .. }) => self.problem(Error::SourceChanged {
                path: lossy(path),
                detail,
            }),
            Err(e) => self.problem(e),
        }
    }

    fn stored_file_to_archive(
        &mut self,
        src: &Archive,
        fi: &FileInfo,
        to: &str,
        dest: &mut Dest,
    ) -> Result<()> {
        let to = match mpath::check_member(to) {
            Ok(t) if !t.is_empty() => t,
            Ok(_) => return self.problem(Error::IsADirectory(String::new())),
            Err(e) => return self.problem(e),
        };
        let existing = dest.file(&to)?;
        let src_crc = || Ok(fi.crc32c);
        let stored_crc = || Ok(existing.as_ref().and_then(|f| f.crc32c));
        let there = existing.as_ref().map(|f| There {
            size: f.size,
            mtime_ns: f.meta.mtime_ns,
            crc: &stored_crc,
        });
        let seen = Seen {
            size: fi.size,
            mtime_ns: fi.meta.mtime_ns,
            crc: &src_crc,
        };
        let replace = match decide(self.opts, &seen, there.as_ref())? {
            Verdict::Skip(why) => {
                self.report.skipped += 1;
                if self.opts.verbose {
                    self.line(&format!("skip ({why}): {to}"));
                }
                return Ok(());
            }
            Verdict::Copy(r) => r,
        };
        if self.opts.dry_run {
            let verb = if replace { "update" } else { "copy" };
            self.line(&format!("would {verb}: {} -> {to}", fi.path));
            self.count(replace, fi.size);
            return Ok(());
        }
        if self.opts.verbose {
            self.line(&format!(
                "{}: {to}",
                if replace { "update" } else { "copy" }
            ));
        }
        let Dest::Writer(w) = dest else {
            unreachable!("a writer unless dry-run")
        };
        let id = w.index().file_with_id(&to)?.map(|(id, _)| id);
        let r = if fi.size <= crate::core::archive::WHOLE_READ_LIMIT {
            match src.read_file(fi) {
                Ok(data) => match id {
                    Some(id) => w.replace_file_from_reader(id, fi.meta, fi.size, &mut &data[..]),
                    None => w.add_file_owned(&to, fi.meta, data, fi.crc32c),
                },
                Err(e) => Err(e),
            }
        } else {
            // Checked whole first, then copied in chunks.
            match src.write_to(fi, &mut io::sink()) {
                Ok(()) => {
                    let mut reader = StoredReader {
                        archive: src,
                        fi,
                        at: 0,
                    };
                    match id {
                        Some(id) => w.replace_file_from_reader(id, fi.meta, fi.size, &mut reader),
                        None => w.add_file_from_reader(&to, fi.meta, fi.size, &mut reader),
                    }
                }
                Err(e) => Err(e),
            }
        };
        match r {
            Ok(_) => {
                self.count(replace, fi.size);
                Ok(())
            }
            Err(e) => self.problem(e),
        }
    }

    fn count(&mut self, replace: bool, bytes: u64) {
        if replace {
            self.report.updated += 1;
        } else {
            self.report.added += 1;
        }
        self.report.bytes += bytes;
        self.progress.add(1, bytes);
    }

    /// Files of the destination archive, within the directories the sources are
    /// synced into, that no source has (excluded names are kept).
    fn extraneous_in_archive(
        &self,
        index: &crate::core::index::Index,
        sources: &[Source],
    ) -> Result<Vec<String>> {
        let mut scopes: Vec<&str> = sources.iter().filter_map(Source::scope).collect();
        scopes.sort();
        scopes.dedup();
        let mut kept: Vec<&str> = Vec::new();
        for s in scopes {
            if !kept.iter().any(|k| mpath::is_within(s, k)) {
                kept.push(s);
            }
        }
        let mut out = Vec::new();
        for scope in kept {
            let mut spec = ScanSpec::new(Table::Files, ScanOrder::Path);
            if !scope.is_empty() {
                spec = spec.with(Cond::Below(scope.to_string()));
            }
            index.scan_each(&spec, 1024, &mut |e| {
                let path = e.path();
                if !self.names.excluded(mpath::basename(path))
                    && !self.held_by_a_source(path, sources, true)?
                {
                    out.push(path.to_string());
                }
                Ok(())
            })?;
        }
        Ok(out)
    }

    /// Does a source have the file that is synced to `target` (an archive path, or a
    /// local path string)?
    fn held_by_a_source(&self, target: &str, sources: &[Source], to_archive: bool) -> Result<bool> {
        for s in sources {
            let rel = if target == s.target {
                Some("")
            } else if to_archive && mpath::is_within(target, &s.target) {
                Some(strip_dir(target, &s.target))
            } else if !to_archive {
                target.strip_prefix(&s.target).and_then(|r| {
                    r.strip_prefix('/')
                        .or((s.target.ends_with('/')).then_some(r))
                })
            } else {
                None
            };
            let Some(rel) = rel else { continue };
            let held = match &s.kind {
                SourceKind::LocalFile(_) => rel.is_empty(),
                SourceKind::LocalDir(root) => {
                    let p = root.join(rel);
                    match fs::metadata(&p) {
                        Ok(m) => !m.is_dir(),
                        Err(_) => fs::symlink_metadata(&p).is_ok(),
                    }
                }
                SourceKind::ArchiveFile { .. } => rel.is_empty(),
                SourceKind::ArchiveDir { archive, dir } => self.archives[*archive]
                    .1
                    .with_index(|i| i.is_file(&mpath::join(dir, rel)))?,
            };
            if held {
                return Ok(true);
            }
        }
        Ok(false)
    }

    // ---------------------------------------------------------------- to local

    fn sync_into_local(&mut self, dir: &Path, sources: &[Source]) -> Result<()> {
        if !self.opts.dry_run {
            fs::create_dir_all(dir).at(dir)?;
        }
        for s in sources {
            let (archive, files): (usize, Box<dyn Iterator<Item = Result<FileInfo>>>) =
                match &s.kind {
                    SourceKind::ArchiveFile { archive, fi } => {
                        (*archive, Box::new(std::iter::once(Ok(fi.clone()))))
                    }
                    SourceKind::ArchiveDir { archive, dir } => (
                        *archive,
                        Box::new(self.archives[*archive].1.files(Order::Address, dir)),
                    ),
                    _ => unreachable!("local sources were refused"),
                };
            let src = &self.archives[archive].1;
            // Files are extracted in chunks, by the safe extractor, into the
            // directory their source maps to.
            let (into, strip) = match &s.kind {
                SourceKind::ArchiveFile { fi, .. } => (lossy(dir), fi.path.split('/').count() - 1),
                SourceKind::ArchiveDir { dir, .. } if dir.is_empty() => (s.target.clone(), 0),
                SourceKind::ArchiveDir { dir, .. } => (s.target.clone(), dir.split('/').count()),
                _ => unreachable!("local sources were refused"),
            };
            let mut chunk: Vec<FileInfo> = Vec::new();
            for fi in files {
                let fi = fi?;
                if self.names.excluded(mpath::basename(&fi.path)) {
                    continue;
                }
                let rel = match &s.kind {
                    SourceKind::ArchiveDir { dir, .. } => strip_dir(&fi.path, dir).to_string(),
                    _ => String::new(),
                };
                let local = if rel.is_empty() {
                    s.target.clone()
                } else {
                    join_local(&s.target, &rel)
                };
                if self.local_verdict(&fi, &local)? {
                    chunk.push(fi);
                    if chunk.len() >= 4096 {
                        self.extract_chunk(src, &mut chunk, Path::new(&into), strip)?;
                    }
                }
            }
            self.extract_chunk(src, &mut chunk, Path::new(&into), strip)?;
        }
        if self.opts.delete {
            self.delete_local(sources)?;
        }
        Ok(())
    }

    /// Print the line for `fi` going to `local`; true when it is to be extracted.
    fn local_verdict(&mut self, fi: &FileInfo, local: &str) -> Result<bool> {
        let path = Path::new(local);
        let there = fs::symlink_metadata(path).ok();
        let local_crc = || local_crc(path);
        let src_crc = || Ok(fi.crc32c);
        let info = there.as_ref().map(|m| There {
            size: m.len(),
            mtime_ns: Meta::from_fs(m).mtime_ns,
            crc: &local_crc,
        });
        let seen = Seen {
            size: fi.size,
            mtime_ns: fi.meta.mtime_ns,
            crc: &src_crc,
        };
        let verdict = match decide(self.opts, &seen, info.as_ref()) {
            Ok(v) => v,
            Err(e) => {
                self.problem(e)?;
                return Ok(false);
            }
        };
        match verdict {
            Verdict::Skip(why) => {
                self.report.skipped += 1;
                if self.opts.verbose {
                    self.line(&format!("skip ({why}): {local}"));
                }
                Ok(false)
            }
            Verdict::Copy(replace) => {
                if self.opts.dry_run {
                    self.line(&format!("would extract: {local}"));
                    self.count(replace, fi.size);
                    return Ok(false);
                }
                if self.opts.verbose {
                    self.line(&format!("extract: {local}"));
                }
                if replace {
                    self.report.updated += 1;
                } else {
                    self.report.added += 1;
                }
                Ok(true)
            }
        }
    }

    fn extract_chunk(
        &mut self,
        src: &Archive,
        chunk: &mut Vec<FileInfo>,
        into: &Path,
        strip: usize,
    ) -> Result<()> {
        if chunk.is_empty() {
            return Ok(());
        }
        let selection = Selection {
            dirs: Vec::new(),
            files: std::mem::take(chunk),
            filter: None,
        };
        let opts = ExtractOptions {
            workers: self.opts.workers.max(1),
            strip_components: strip,
            overwrite: true,
            same_permissions: false,
        };
        let problems: Mutex<Vec<String>> = Mutex::new(Vec::new());
        let report = |e: &Error| problems.lock().expect("not poisoned").push(e.to_string());
        let r = extract(src, &selection, into, &opts, self.progress, &report)?;
        self.report.bytes += r.bytes;
        for p in problems.into_inner().expect("not poisoned") {
            self.report.problems += 1;
            (self.note)(Note::Problem(&Error::InvalidOperation(p)));
        }
        Ok(())
    }

    /// Delete the local files, within the directories the sources are synced into,
    /// that no source has (excluded names are kept).
    fn delete_local(&mut self, sources: &[Source]) -> Result<()> {
        let mut scopes: Vec<&str> = sources.iter().filter_map(Source::scope).collect();
        scopes.sort();
        scopes.dedup();
        let mut doomed = Vec::new();
        for scope in scopes {
            let root = Path::new(scope);
            if !root.is_dir() {
                continue;
            }
            for entry in walkdir::WalkDir::new(root)
                .follow_links(false)
                .sort_by_file_name()
                .min_depth(1)
            {
                let entry = match entry {
                    Ok(e) => e,
                    Err(e) => {
                        let path = e
                            .path()
                            .map(Path::to_path_buf)
                            .unwrap_or(root.to_path_buf());
                        let err = e
                            .into_io_error()
                            .unwrap_or_else(|| io::Error::other("file system loop"));
                        self.problem(Error::io(path, err))?;
                        continue;
                    }
                };
                if entry.file_type().is_dir() {
                    continue;
                }
                let name = entry.file_name().to_string_lossy();
                if self.names.excluded(&name) {
                    continue;
                }
                let rel = entry.path().strip_prefix(root).unwrap_or(entry.path());
                let local = join_local(scope, &rel.to_string_lossy());
                if doomed.contains(&local) {
                    continue;
                }
                if !self.held_by_a_source(&local, sources, false)? {
                    doomed.push(local);
                }
            }
        }
        for local in doomed {
            if self.opts.dry_run {
                self.line(&format!("would delete: {local}"));
                self.report.deleted += 1;
                continue;
            }
            if self.opts.verbose {
                self.line(&format!("delete: {local}"));
            }
            match fs::remove_file(&local) {
                Ok(()) => self.report.deleted += 1,
                Err(e) => self.problem(Error::io(&local, e))?,
            }
        }
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
    use super::*;

    fn arch(a: &str, inner: &str, contents: bool, text: &str) -> Endpoint {
        Endpoint {
            location: Location::Archive {
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
        assert_eq!(l.location, Location::Local("photos".into()));
        assert!(l.contents);
        assert!(parse_endpoint("host:/data/x").is_err());
        assert!(parse_endpoint("barecat://h:1/a::").is_err());
        assert!(parse_endpoint("x.tar.gz::").is_err());
        assert!(parse_endpoint("d.barecat::../x").is_err());
        assert_eq!(
            parse_endpoint("a:b").unwrap().location,
            Location::Local("a:b".into())
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
