//! Files and directories of the file system.
//!
//! Inputs are enumerated in a fixed order: each positional path, walked depth first
//! with the entries of every directory sorted by name (bytewise), a directory before
//! its contents; then each list (`-T`), in list order. Walks do not follow symbolic
//! links to directories (a positional path that is one is walked). As in Python
//! barecat, a symbolic link to a file is stored as a file holding its target's
//! content, and a link to a directory as a directory (its target's metadata, not
//! descended into). Listed directories are stored as directories, not walked.
//!
//! Stored paths are the paths as given, normalized (docs/FORMAT.md §6); a leading `/` is
//! removed (with a notice), and a path that still holds `..` is refused. With a
//! base directory (`-C`), paths are opened relative to it.
//!
//! Each file costs one `open`, two `fstat`s, usually one `read` and one `close` on a
//! reader thread: a read of one byte more than the size seen by the first `fstat`
//! tells a file that grew; the second `fstat` one that changed otherwise.

use std::ffi::{CStr, CString, OsStr, OsString};
use std::fs::{self, File, Metadata};
use std::io::{BufRead, BufReader, Read};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crossbeam_channel::bounded;
use rustix::fs::{self as rfs, AtFlags, Mode, OFlags};

use super::pipeline::{self, Chunk, Item, Outlet, Skip, CHUNK};
use super::{io_reason, Event, IngestOptions, Problem, Summary};
use crate::core::crc;
use crate::core::entry::Meta;
use crate::core::error::Result;
use crate::core::index::Index;
use crate::core::list::ListReader;
use crate::core::path as mpath;
use crate::core::writer::ArchiveWriter;

/// A list of paths, one per line (or NUL-terminated).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListInput {
    /// Read the list from standard input.
    Stdin,
    /// Read the list from this file.
    File(PathBuf),
}

/// What to add from the file system.
#[derive(Debug, Clone, Default)]
pub struct FsInput {
    /// Files and directories; directories are walked.
    pub paths: Vec<PathBuf>,
    /// Lists of paths (not walked).
    pub lists: Vec<ListInput>,
    /// Lists are NUL-separated instead of newline-separated.
    pub null: bool,
    /// Open the paths relative to this directory (lists are read before it applies).
    pub base: Option<PathBuf>,
}

/// A directory open for the walk: its entries are opened relative to it (`openat`),
/// so the kernel resolves one name per file instead of a whole path.
pub(crate) struct DirHandle {
    file: File,
    fs: PathBuf,
}

/// Where a file-system object to open is.
pub(crate) enum Source {
    /// A path as given (positional file, list entry), resolved from the base.
    Path(PathBuf),
    /// A name inside a directory of the walk.
    At(Arc<DirHandle>, CString),
}

impl Source {
    /// The path for messages, raw (escaped where it is shown).
    fn shown(&self) -> Vec<u8> {
        match self {
            Source::Path(p) => raw(p),
            Source::At(d, name) => raw(&d.fs.join(OsStr::from_bytes(name.to_bytes()))),
        }
    }

    /// Open for reading, following a symbolic link; `O_NONBLOCK` so that a FIFO that
    /// slipped through cannot hang the reader.
    fn open(&self) -> std::io::Result<File> {
        let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
        let fd = match self {
            Source::Path(p) => rfs::open(p.as_path(), flags, Mode::empty()),
            Source::At(d, name) => rfs::openat(&d.file, name.as_c_str(), flags, Mode::empty()),
        };
        fd.map(File::from).map_err(std::io::Error::from)
    }

    /// Does the name itself exist (a dangling symbolic link does)?
    fn exists_nofollow(&self) -> bool {
        match self {
            Source::Path(p) => fs::symlink_metadata(p).is_ok(),
            Source::At(d, name) => {
                rfs::statat(&d.file, name.as_c_str(), AtFlags::SYMLINK_NOFOLLOW).is_ok()
            }
        }
    }
}

/// What the producer hands to the readers.
pub(crate) enum Task {
    /// A directory whose metadata is known.
    Dir { path: String, meta: Meta },
    /// A file system object to open; what it is shows after `fstat`.
    Open { src: Source, path: String },
    /// Something to pass on as it is (a problem, a notice, a skip).
    Item(Item),
}

/// The archive being written, so that a walk does not add it to itself.
struct OwnFiles {
    dir: Option<(u64, u64)>,
    name: OsString,
}

impl OwnFiles {
    fn new(w: &ArchiveWriter) -> OwnFiles {
        let base = w.layout().base();
        let dir = match base.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        OwnFiles {
            dir: fs::metadata(dir).ok().map(|m| (m.dev(), m.ino())),
            name: base.file_name().map(OsStr::to_owned).unwrap_or_default(),
        }
    }

    /// Is `name`, in a directory with this identity, a part of the archive?
    fn is_own(&self, dir: (u64, u64), name: &[u8]) -> bool {
        if self.dir != Some(dir) || self.name.is_empty() {
            return false;
        }
        match name.strip_prefix(self.name.as_bytes()) {
            Some(rest) => {
                rest.is_empty()
                    || rest.starts_with(b"-shard-")
                    || [&b"-journal"[..], b"-wal", b"-shm", b"-sqlite-index"].contains(&rest)
            }
            None => false,
        }
    }

    /// Same question for a path given on its own.
    fn is_own_path(&self, p: &Path) -> bool {
        let Some(name) = p.file_name() else {
            return false;
        };
        if !name.as_bytes().starts_with(self.name.as_bytes()) {
            return false;
        }
        let parent = match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        fs::metadata(parent)
            .map(|m| self.is_own((m.dev(), m.ino()), name.as_bytes()))
            .unwrap_or(false)
    }
}

/// Let a deep walk keep one descriptor per directory level.
fn raise_fd_limit() {
    // SAFETY: plain getrlimit/setrlimit calls on a local struct.
    unsafe {
        let mut lim: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < lim.rlim_max {
            lim.rlim_cur = lim.rlim_max.min(1 << 20);
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}

pub(crate) fn run(
    w: &mut ArchiveWriter,
    input: &FsInput,
    opts: &IngestOptions,
    sink: &mut dyn FnMut(Event),
) -> Result<Summary> {
    let own = OwnFiles::new(w);
    raise_fd_limit();
    // Resuming: a read connection of the producer's own answers "already there?"
    // from the committed rows; files added in the open batch are caught by the
    // writer (see `Apply::writer_error`).
    let existing = if opts.skip_existing {
        Some(w.layout().index().to_path_buf())
    } else {
        None
    };
    let threshold = opts.stream_threshold();
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
            let mut p = Producer {
                input,
                opts,
                own,
                index,
                emit,
                told_leading_slash: false,
                stop: false,
            };
            p.run();
        },
        || move |seq, task, out: &Outlet| load(seq, task, out, threshold),
    )
}

/// Cheap totals for a progress bar: the number and total size of the regular files
/// the positional paths hold (lists are not read). Stops early, returning `None`,
/// when `stop` is set.
pub fn scan_totals(input: &FsInput, stop: &AtomicBool) -> Option<(u64, u64)> {
    let (mut files, mut bytes) = (0u64, 0u64);
    let mut stack: Vec<PathBuf> = Vec::new();
    for root in &input.paths {
        let full = resolve(input.base.as_deref(), root);
        match fs::metadata(&full) {
            Ok(m) if m.is_dir() => stack.push(full),
            Ok(m) => {
                files += 1;
                bytes += m.len();
            }
            Err(_) => {}
        }
        while let Some(dir) = stack.pop() {
            if stop.load(Ordering::Relaxed) {
                return None;
            }
            let Ok(rd) = fs::read_dir(&dir) else { continue };
            for e in rd.flatten() {
                match e.file_type() {
                    Ok(t) if t.is_dir() => stack.push(e.path()),
                    Ok(t) if t.is_file() => {
                        files += 1;
                        bytes += e.metadata().map(|m| m.len()).unwrap_or(0);
                    }
                    _ => {}
                }
            }
        }
    }
    Some((files, bytes))
}

fn resolve(base: Option<&Path>, p: &Path) -> PathBuf {
    match base {
        Some(b) => b.join(p),
        None => p.to_path_buf(),
    }
}

/// A path's bytes, for messages (see [`printable`](crate::core::path::printable)).
fn raw(p: &Path) -> Vec<u8> {
    p.as_os_str().as_bytes().to_vec()
}

/// A path as messages show it.
fn shown_path(p: &Path) -> String {
    crate::core::path::printable(p.as_os_str().as_bytes()).into_owned()
}

/// A directory being walked.
struct Frame {
    dir: Arc<DirHandle>,
    /// Normalized path (before stripping).
    path: String,
    id: (u64, u64),
    meta: Meta,
    entries: std::vec::IntoIter<(CString, rfs::FileType)>,
    /// This directory or one above it matched an include pattern.
    selected: bool,
    /// Its Dir task was sent (or needs none).
    emitted: bool,
}

struct Producer<'a, 'e> {
    input: &'a FsInput,
    opts: &'a IngestOptions,
    own: OwnFiles,
    index: Option<Index>,
    emit: &'e mut dyn FnMut(Task) -> bool,
    told_leading_slash: bool,
    stop: bool,
}

impl Producer<'_, '_> {
    fn send(&mut self, t: Task) {
        if !self.stop && !(self.emit)(t) {
            self.stop = true;
        }
    }

    fn problem(&mut self, path: impl AsRef<[u8]>, detail: impl Into<String>) {
        self.send(Task::Item(Item::Problem(Problem::new(path, detail))));
    }

    fn run(&mut self) {
        let input = self.input;
        for root in &input.paths {
            if self.stop {
                return;
            }
            self.root(root);
        }
        for list in &input.lists {
            if self.stop {
                return;
            }
            self.list(list);
        }
    }

    /// Normalize a path as given; None (after reporting) when it cannot be stored.
    fn store_path(&mut self, given: &Path) -> Option<String> {
        let Some(text) = given.to_str() else {
            self.problem(raw(given), "file name is not valid UTF-8; skipped");
            return None;
        };
        if text.contains('\0') {
            self.problem(text, "file name holds a NUL character; skipped");
            return None;
        }
        if text.starts_with('/') && !self.told_leading_slash {
            self.told_leading_slash = true;
            self.send(Task::Item(Item::Notice(
                "removing leading '/' from member names".into(),
            )));
        }
        let norm = mpath::normalize(text);
        if mpath::unsafe_reason(&norm).is_some() {
            self.problem(
                text,
                "'..' would point outside the archive root (use -C to change directory); skipped",
            );
            return None;
        }
        Some(norm)
    }

    /// The stored path after `--strip-components`; None when nothing is left.
    fn stripped<'p>(&self, path: &'p str) -> Option<&'p str> {
        if path.is_empty() {
            return (self.opts.strip_components == 0).then_some(path);
        }
        mpath::strip_components(path, self.opts.strip_components)
    }

    fn exists(&self, path: &str, dir: bool) -> bool {
        match &self.index {
            Some(i) if dir => i.is_dir(path).unwrap_or(false),
            Some(i) => i.is_file(path).unwrap_or(false),
            None => false,
        }
    }

    fn emit_dir(&mut self, path: &str, meta: Meta) {
        let Some(p) = self.stripped(path) else { return };
        if self.exists(p, true) {
            return;
        }
        let p = p.to_string();
        self.send(Task::Dir { path: p, meta });
    }

    fn emit_open(&mut self, src: Source, path: &str) {
        let Some(p) = self.stripped(path) else { return };
        if p.is_empty() {
            // "." listed, or a path that normalizes to the root: it is the root dir.
            self.send(Task::Open {
                src,
                path: String::new(),
            });
            return;
        }
        if self.exists(p, false) {
            self.send(Task::Item(Item::Skipped(Skip::Existing)));
            return;
        }
        let p = p.to_string();
        self.send(Task::Open { src, path: p });
    }

    fn root(&mut self, given: &Path) {
        let Some(path) = self.store_path(given) else {
            return;
        };
        let full = resolve(self.input.base.as_deref(), given);
        let md = match fs::metadata(&full) {
            Ok(m) => m,
            Err(e) => {
                let detail = match fs::symlink_metadata(&full) {
                    Ok(_) => format!("dangling symbolic link ({}); skipped", io_reason(&e)),
                    Err(_) => format!("{}; skipped", io_reason(&e)),
                };
                self.problem(raw(given), detail);
                return;
            }
        };
        if !path.is_empty() && self.opts.filter.excludes(&path) {
            return;
        }
        if !md.is_dir() {
            if self.own.is_own_path(&full) {
                self.send(Task::Item(Item::Notice(format!(
                    "{}: is the archive being written; skipped",
                    given.display()
                ))));
                return;
            }
            if !path.is_empty() && !self.opts.filter.selects(&path) {
                return;
            }
            self.emit_open(Source::Path(full), &path);
            return;
        }
        let dir = fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY)
            .open(&full)
            .and_then(|f| Ok((f.metadata()?, f)));
        let (md, file) = match dir {
            Ok(x) => x,
            Err(e) => {
                self.problem(
                    raw(given),
                    format!("cannot open directory: {}; skipped", io_reason(&e)),
                );
                return;
            }
        };
        let selected = !self.opts.filter.has_includes() || self.opts.filter.selects(&path);
        let handle = Arc::new(DirHandle { file, fs: full });
        self.walk(handle, path, &md, selected);
    }

    /// The entries of a directory, sorted by name (bytewise).
    fn read_entries(&mut self, dir: &DirHandle) -> Vec<(CString, rfs::FileType)> {
        let fail = |me: &mut Self, e: rustix::io::Errno, what: &str| {
            let e = std::io::Error::from(e);
            me.problem(raw(&dir.fs), format!("{what}: {}", io_reason(&e)));
        };
        let mut rd = match rfs::Dir::read_from(&dir.file) {
            Ok(rd) => rd,
            Err(e) => {
                fail(self, e, "cannot list directory; its contents are skipped");
                return Vec::new();
            }
        };
        let mut out = Vec::new();
        while let Some(e) = rd.read() {
            let e = match e {
                Ok(e) => e,
                Err(e) => {
                    fail(self, e, "error while listing directory");
                    break;
                }
            };
            let name = e.file_name();
            if name == c"." || name == c".." {
                continue;
            }
            let mut ft = e.file_type();
            if ft == rfs::FileType::Unknown {
                ft = rfs::statat(&dir.file, name, AtFlags::SYMLINK_NOFOLLOW)
                    .map(|st| rfs::FileType::from_raw_mode(st.st_mode))
                    .unwrap_or(rfs::FileType::Unknown);
            }
            out.push((name.to_owned(), ft));
        }
        out.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        out
    }

    fn push_frame(
        &mut self,
        stack: &mut Vec<Frame>,
        dir: Arc<DirHandle>,
        path: String,
        md: &Metadata,
        selected: bool,
    ) {
        let meta = Meta::from_fs(md);
        // Without includes (or inside an included subtree) a directory is stored as it
        // is reached; otherwise only once something below it is stored.
        let store_now = !self.opts.filter.has_includes() || selected;
        if store_now {
            self.emit_pending(stack);
            self.emit_dir(&path, meta);
        }
        let entries = self.read_entries(&dir).into_iter();
        stack.push(Frame {
            entries,
            dir,
            path,
            id: (md.dev(), md.ino()),
            meta,
            selected,
            emitted: store_now,
        });
    }

    /// Send the Dir tasks of directories above an included entry that were held back.
    fn emit_pending(&mut self, stack: &mut [Frame]) {
        for frame in stack.iter_mut() {
            if !frame.emitted {
                frame.emitted = true;
                let (p, m) = (frame.path.clone(), frame.meta);
                self.emit_dir(&p, m);
            }
        }
    }

    /// Open a subdirectory of the walk (not following a symbolic link).
    fn open_subdir(parent: &DirHandle, name: &CStr) -> std::io::Result<(Metadata, File)> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rfs::openat(&parent.file, name, flags, Mode::empty())?;
        let file = File::from(fd);
        Ok((file.metadata()?, file))
    }

    fn walk(&mut self, root: Arc<DirHandle>, path: String, md: &Metadata, selected: bool) {
        let mut stack: Vec<Frame> = Vec::new();
        self.push_frame(&mut stack, root, path, md, selected);
        let includes = self.opts.filter.has_includes();
        while let Some(top) = stack.last_mut() {
            if self.stop {
                return;
            }
            let Some((name, ft)) = top.entries.next() else {
                stack.pop();
                continue;
            };
            let Ok(name_str) = name.to_str() else {
                let shown = raw(&top.dir.fs.join(OsStr::from_bytes(name.to_bytes())));
                self.problem(shown, "file name is not valid UTF-8; skipped");
                continue;
            };
            if self.own.is_own(top.id, name.to_bytes()) {
                let shown = top.dir.fs.join(name_str);
                let msg = format!("{}: is the archive being written; skipped", shown.display());
                self.send(Task::Item(Item::Notice(msg)));
                continue;
            }
            let child = mpath::join(&top.path, name_str);
            if self.opts.filter.excludes(&child) {
                continue;
            }
            let selected = top.selected || (includes && self.opts.filter.includes(&child));
            let parent = top.dir.clone();
            match ft {
                rfs::FileType::Directory => match Self::open_subdir(&parent, &name) {
                    Ok((md, file)) => {
                        let fs = parent.fs.join(name_str);
                        let handle = Arc::new(DirHandle { file, fs });
                        self.push_frame(&mut stack, handle, child, &md, selected);
                    }
                    // Replaced by something else since it was listed: open it as is.
                    Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR)) => {
                        self.emit_open(Source::At(parent, name), &child)
                    }
                    Err(e) => {
                        let shown = raw(&parent.fs.join(name_str));
                        self.problem(
                            shown,
                            format!("cannot open directory: {}; skipped", io_reason(&e)),
                        );
                    }
                },
                rfs::FileType::RegularFile | rfs::FileType::Symlink => {
                    if includes && !selected {
                        continue;
                    }
                    self.emit_pending(&mut stack);
                    self.emit_open(Source::At(parent, name), &child);
                }
                rfs::FileType::Unknown => {
                    let shown = raw(&parent.fs.join(name_str));
                    self.problem(shown, "vanished while the directory was listed; skipped");
                }
                _ => self.send(Task::Item(Item::Skipped(Skip::Special))),
            }
        }
    }

    fn list(&mut self, list: &ListInput) {
        let reader: Box<dyn BufRead> = match list {
            ListInput::Stdin => Box::new(BufReader::new(std::io::stdin().lock())),
            ListInput::File(p) => match File::open(p) {
                Ok(f) => Box::new(BufReader::new(f)),
                Err(e) => {
                    let e = crate::core::list::read_error(&shown_path(p), &e);
                    self.send(Task::Item(Item::Fatal(e)));
                    return;
                }
            },
        };
        let name = match list {
            ListInput::Stdin => crate::core::list::STDIN_NAME.to_string(),
            ListInput::File(p) => shown_path(p),
        };
        self.read_list(ListReader::new(reader, self.input.null, name));
    }

    fn read_list(&mut self, mut list: ListReader) {
        while !self.stop {
            let given = match list.next_entry() {
                Ok(None) => return,
                Ok(Some(entry)) => PathBuf::from(OsStr::from_bytes(entry)),
                Err(e) => {
                    let e = crate::core::list::read_error(list.name(), &e);
                    self.send(Task::Item(Item::Fatal(e)));
                    return;
                }
            };
            self.listed(&given);
        }
    }

    fn listed(&mut self, given: &Path) {
        let Some(path) = self.store_path(given) else {
            return;
        };
        if !path.is_empty() && !self.opts.filter.selects(&path) {
            return;
        }
        let full = resolve(self.input.base.as_deref(), given);
        if self.own.is_own_path(&full) {
            self.send(Task::Item(Item::Notice(format!(
                "{}: is the archive being written; skipped",
                given.display()
            ))));
            return;
        }
        self.emit_open(Source::Path(full), &path);
    }
}

// ---------------------------------------------------------------------- loading

fn load(seq: u64, task: Task, out: &Outlet, threshold: u64) {
    match task {
        Task::Dir { path, meta } => {
            out.send_small(seq, Item::Dir { path, meta });
        }
        Task::Item(item) => {
            out.send_small(seq, item);
        }
        Task::Open { src, path } => load_file(seq, src, path, out, threshold),
    }
}

fn stat_meta(st: &rfs::Stat) -> Meta {
    Meta {
        mode: Some(st.st_mode),
        uid: Some(st.st_uid),
        gid: Some(st.st_gid),
        mtime_ns: Some(
            st.st_mtime
                .saturating_mul(1_000_000_000)
                .saturating_add(st.st_mtime_nsec as i64),
        ),
    }
}

fn changed(a: &rfs::Stat, b: &rfs::Stat) -> bool {
    a.st_size != b.st_size || a.st_mtime != b.st_mtime || a.st_mtime_nsec != b.st_mtime_nsec
}

fn load_file(seq: u64, src: Source, path: String, out: &Outlet, threshold: u64) {
    let problem = |detail: String| Item::Problem(Problem::new(src.shown(), detail));
    let file = match src.open() {
        Ok(f) => f,
        Err(e) => {
            let detail = match e.kind() {
                std::io::ErrorKind::NotFound if src.exists_nofollow() => {
                    "dangling symbolic link; skipped".to_string()
                }
                std::io::ErrorKind::NotFound => "vanished before it could be read; skipped".into(),
                _ => format!("cannot open: {}; skipped", io_reason(&e)),
            };
            out.send_small(seq, problem(detail));
            return;
        }
    };
    let st = match rfs::fstat(&file) {
        Ok(st) => st,
        Err(e) => {
            let e = std::io::Error::from(e);
            out.send_small(
                seq,
                problem(format!("cannot stat: {}; skipped", io_reason(&e))),
            );
            return;
        }
    };
    let meta = stat_meta(&st);
    match rfs::FileType::from_raw_mode(st.st_mode) {
        rfs::FileType::Directory => {
            out.send_small(seq, Item::Dir { path, meta });
            return;
        }
        rfs::FileType::RegularFile => {}
        _ => {
            out.send_small(seq, Item::Skipped(Skip::Special));
            return;
        }
    }
    if path.is_empty() {
        out.send_small(
            seq,
            problem("a file cannot be stored at the archive root; skipped".into()),
        );
        return;
    }
    let size = st.st_size.max(0) as u64;
    if size > threshold {
        stream_file(seq, file, st, src.shown(), path, meta, out);
        return;
    }
    let Some(ticket) = out.reserve(seq, size) else {
        return;
    };
    let item = match read_small(&file, size as usize) {
        Ok(data) if data.len() as u64 != size => problem(format!(
            "changed size while being read ({size} bytes expected, {} read); skipped",
            data.len()
        )),
        Ok(data) => match rfs::fstat(&file) {
            Ok(after) if changed(&st, &after) => {
                problem("changed while being read; skipped".to_string())
            }
            Ok(_) => {
                let crc = crc::crc32c(&data);
                Item::File {
                    path,
                    meta,
                    data,
                    crc,
                }
            }
            Err(e) => {
                let e = std::io::Error::from(e);
                problem(format!("cannot stat: {}; skipped", io_reason(&e)))
            }
        },
        Err(e) => problem(format!("read error: {}; skipped", io_reason(&e))),
    };
    out.send(seq, item, ticket);
}

/// Read a file expected to hold `size` bytes: returns what it holds, up to `size + 1`
/// bytes (one more than expected means it grew). Reads into uninitialized capacity.
fn read_small(file: &File, size: usize) -> std::io::Result<Vec<u8>> {
    let want = size + 1;
    let mut buf: Vec<u8> = Vec::with_capacity(want);
    let fd = file.as_raw_fd();
    while buf.len() < want {
        let spare = buf.spare_capacity_mut();
        // SAFETY: the kernel writes at most `spare.len()` bytes into the spare
        // capacity; exactly the `n` bytes it reports are marked initialized.
        let n = unsafe { libc::read(fd, spare.as_mut_ptr().cast(), spare.len()) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            break;
        }
        unsafe { buf.set_len(buf.len() + n as usize) };
        // A short read of a regular file means its end (or a file that shrank,
        // which the size check and the second fstat report).
        if buf.len() == size {
            break;
        }
    }
    Ok(buf)
}

fn stream_file(
    seq: u64,
    file: File,
    st: rfs::Stat,
    shown: Vec<u8>,
    path: String,
    meta: Meta,
    out: &Outlet,
) {
    let size = st.st_size.max(0) as u64;
    let (tx, rx) = bounded::<Chunk>(2);
    let Some(ticket) = out.reserve(seq, 0) else {
        return;
    };
    let item = Item::Stream {
        path,
        meta,
        size,
        chunks: rx,
    };
    if !out.send(seq, item, ticket) {
        return;
    }
    let fail = |detail: String| {
        let _ = tx.send(Chunk::Failed(Problem::new(shown.clone(), detail)));
    };
    let mut total = 0u64;
    loop {
        let mut chunk = Vec::with_capacity(CHUNK);
        match (&file).take(CHUNK as u64).read_to_end(&mut chunk) {
            Ok(0) => break,
            Ok(n) => {
                total += n as u64;
                if total > size {
                    fail(format!(
                        "grew while being read ({size} bytes expected); skipped"
                    ));
                    return;
                }
                if tx.send(Chunk::Data(chunk)).is_err() {
                    return;
                }
            }
            Err(e) => {
                fail(format!("read error: {}; skipped", io_reason(&e)));
                return;
            }
        }
    }
    if total != size {
        fail(format!(
            "changed size while being read ({size} bytes expected, {total} read); skipped"
        ));
        return;
    }
    match rfs::fstat(&file) {
        Ok(after) if changed(&st, &after) => fail("changed while being read; skipped".into()),
        Ok(_) => {}
        Err(e) => fail(format!(
            "cannot stat: {}; skipped",
            io_reason(&std::io::Error::from(e))
        )),
    }
}
