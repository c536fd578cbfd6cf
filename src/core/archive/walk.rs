//! Streaming walks over an archive's index: paged scans ([`Scan`]), the children of
//! a directory in name or row order, merged listings, globs and top-down tree walks
//! ([`Walk`]).
//!
//! Everything here holds at most one page of rows per open scan (a tree walk holds
//! one scan per level of the current path), asks SQLite for rows in the order they
//! are wanted (no sorting of results in memory), and costs a number of row visits
//! that grows with the rows yielded, not faster: the scans seek past the last row of
//! the previous page instead of starting over (see [`crate::core::index::scan`]).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use crate::core::archive::Archive;
use crate::core::entry::{DirInfo, Entry, FileInfo};
use crate::core::error::{Error, Result};
use crate::core::glob::Glob;
use crate::core::index::{Cond, Index, ScanKey, ScanOrder, ScanSpec, Table};

/// The largest page a scan asks for.
pub const PAGE: usize = 4096;
/// The first page of a scan: small, so that the many small directories of a tree
/// walk cost little memory while a walk holds one scan per level.
const FIRST_PAGE: usize = 64;

static MAX_PAGE: AtomicUsize = AtomicUsize::new(PAGE);

/// Test hook: make every scan read pages of at most `rows` rows (at least 1), so
/// that tests walk many pages over small archives.
#[doc(hidden)]
pub fn set_max_page(rows: usize) {
    MAX_PAGE.store(rows.max(1), Relaxed);
}

fn max_page() -> usize {
    MAX_PAGE.load(Relaxed)
}

/// A paged scan of the index. Yields `Err` for a row that does not decode (and goes
/// on) or when the index cannot be read (and stops); [`Scan::next_row`] tells the
/// two apart.
pub struct Scan<'a> {
    archive: &'a Archive,
    spec: ScanSpec,
    after: Option<ScanKey>,
    buf: VecDeque<Result<Entry>>,
    fatal: Option<Error>,
    page: usize,
    done: bool,
}

impl<'a> Scan<'a> {
    /// A scan of `archive` as `spec` says; nothing is read until the first `next`.
    pub fn new(archive: &'a Archive, spec: ScanSpec) -> Scan<'a> {
        Scan {
            archive,
            spec,
            after: None,
            buf: VecDeque::new(),
            fatal: None,
            page: FIRST_PAGE,
            done: false,
        }
    }

    /// Ask for `rows` rows in the first page (when the number of rows is known
    /// roughly, one query can fetch them all).
    pub fn first_page(mut self, rows: usize) -> Scan<'a> {
        self.page = rows.clamp(1, PAGE);
        self
    }

    fn fill(&mut self) {
        if !self.buf.is_empty() || self.done {
            return;
        }
        let limit = self.page.min(max_page());
        self.page = (self.page * 4).min(PAGE);
        match self
            .archive
            .with_index(|i| i.scan_page(&self.spec, self.after.as_ref(), limit))
        {
            Ok(page) => {
                self.done = page.rows.len() < limit;
                if page.last.is_some() {
                    self.after = page.last;
                }
                self.buf.extend(page.rows);
            }
            Err(e) => {
                self.done = true;
                self.fatal = Some(e);
            }
        }
    }

    /// The next row: `Err` when the index cannot be read (the scan ends), `Ok(Err)`
    /// for a row that does not decode (the scan goes on).
    pub fn next_row(&mut self) -> Option<Result<Result<Entry>>> {
        self.fill();
        match self.buf.pop_front() {
            Some(r) => Some(Ok(r)),
            None => self.fatal.take().map(Err),
        }
    }

    /// Call `f` with the path of each row of the next page, while the page is being
    /// read (no entry is built); `false` when the scan has ended. Only for scans
    /// nothing has been taken from otherwise, and `f` should only buffer: the read
    /// transaction is held while it runs.
    pub fn next_page_paths(&mut self, f: &mut dyn FnMut(&str) -> Result<()>) -> Result<bool> {
        self.next_page_rows(&mut |i, row| f(i.path_of(row)?))
    }

    /// Call `f` with each raw row of the next page (the columns of the scan's spec,
    /// as stored), while the page is being read; `false` when the scan has ended.
    /// The same rules as [`next_page_paths`](Self::next_page_paths).
    pub fn next_page_rows(
        &mut self,
        f: &mut dyn FnMut(&Index, &rusqlite::Row<'_>) -> Result<()>,
    ) -> Result<bool> {
        if self.done {
            return Ok(false);
        }
        let limit = self.page.min(max_page());
        self.page = (self.page * 4).min(PAGE);
        let (n, last) = self.archive.with_index(|i| {
            i.scan_rows(&self.spec, self.after.as_ref(), limit, &mut |row| f(i, row))
        })?;
        self.done = n < limit;
        if last.is_some() {
            self.after = last;
        }
        Ok(!self.done)
    }

    /// Is there a next item? (Reads the next page when needed.)
    pub fn peek(&mut self) -> Option<&Result<Entry>> {
        self.fill();
        self.buf.front()
    }

    /// Is there a next item, a failure to read included?
    fn has_next(&mut self) -> bool {
        self.fill();
        !self.buf.is_empty() || self.fatal.is_some()
    }
}

impl Iterator for Scan<'_> {
    type Item = Result<Entry>;

    fn next(&mut self) -> Option<Result<Entry>> {
        self.next_row().map(|r| r.and_then(|x| x))
    }
}

/// Two path-ordered streams merged into one, in path order (errors pass through
/// as they come).
pub struct MergeByPath<A: Iterator<Item = Result<Entry>>, B: Iterator<Item = Result<Entry>>> {
    a: std::iter::Peekable<A>,
    b: std::iter::Peekable<B>,
}

impl<A, B> MergeByPath<A, B>
where
    A: Iterator<Item = Result<Entry>>,
    B: Iterator<Item = Result<Entry>>,
{
    /// Merge two streams that are each in path order.
    pub fn new(a: A, b: B) -> Self {
        MergeByPath {
            a: a.peekable(),
            b: b.peekable(),
        }
    }
}

impl<A, B> Iterator for MergeByPath<A, B>
where
    A: Iterator<Item = Result<Entry>>,
    B: Iterator<Item = Result<Entry>>,
{
    type Item = Result<Entry>;

    fn next(&mut self) -> Option<Result<Entry>> {
        let take_a = match (self.a.peek(), self.b.peek()) {
            (None, None) => return None,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(Err(_)), _) => true,
            (_, Some(Err(_))) => false,
            (Some(Ok(x)), Some(Ok(y))) => x.path() <= y.path(),
        };
        if take_a {
            self.a.next()
        } else {
            self.b.next()
        }
    }
}

/// The order of the children of a directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildOrder {
    /// By name (byte order, which is code-point order).
    Name,
    /// By row id: insertion order, which is the order Python barecat's directory
    /// iteration (`walk`, `iterdir`) yields them in.
    Rowid,
}

/// The files (`table` = Files) or subdirectories directly in `dir`, in `order`
/// (paths only, if asked: see [`ScanSpec::paths_only`]).
///
/// In row order they come from the parent index, which holds them in that order.
/// In name order, either from a range of the path index (which holds them in that
/// order, but also the deeper rows of the subtree, passed over) or from the parent
/// index, sorted a page at a time; the directory's counters decide which costs less
/// (when they are wrong, only the speed suffers). The first page is sized after
/// the counters too, so that a directory usually costs one query.
pub fn children<'a>(
    archive: &'a Archive,
    dir: &DirInfo,
    table: Table,
    order: ChildOrder,
    paths_only: bool,
) -> Scan<'a> {
    let by_parent = Cond::Parent(dir.path.clone());
    let (direct, subtree) = match table {
        Table::Files => (dir.num_files, dir.num_files_tree),
        // The number of directories in a subtree is not stored: assume a few
        // levels of them.
        Table::Dirs => (dir.num_subdirs, dir.num_subdirs.saturating_mul(16)),
    };
    let (direct, subtree) = (direct.max(0) as u128, subtree.max(0) as u128);
    let spec = match order {
        ChildOrder::Rowid => ScanSpec::new(table, ScanOrder::Rowid).with(by_parent),
        ChildOrder::Name => {
            let page = max_page() as u128;
            let sort_cost = direct * direct.div_ceil(page);
            let mostly_direct = table == Table::Files && subtree <= 4 * direct + 64;
            let range = mostly_direct || (direct > page && subtree < sort_cost);
            let cond = if range {
                Cond::ChildOf(dir.path.clone())
            } else {
                by_parent
            };
            ScanSpec::new(table, ScanOrder::Path).with(cond)
        }
    };
    Scan::new(archive, spec.paths_only(paths_only))
        .first_page(direct.min(PAGE as u128) as usize + 1)
}

/// The files strictly below the directory `within` (all files for `""`), in
/// `order`. In row-id or address order a small subtree (by its counters) is read as
/// a range of the path index sorted a page at a time, a large one by passing over
/// the whole table in that order.
pub fn files_below<'a>(
    archive: &'a Archive,
    within: &str,
    order: ScanOrder,
    paths_only: bool,
) -> Scan<'a> {
    let small = order != ScanOrder::Path
        && !within.is_empty()
        && archive
            .with_index(|i| i.dir(within))
            .ok()
            .flatten()
            .is_some_and(|d| (d.num_files_tree.max(0) as u64) <= 16 * max_page() as u64);
    let spec = ScanSpec::new(Table::Files, order)
        .with(Cond::Below(within.to_string()))
        .sorting_range(small)
        .paths_only(paths_only);
    Scan::new(archive, spec)
}

/// The entries directly in `dir`, subdirectories and files together, by name.
pub fn entries_by_name<'a>(archive: &'a Archive, dir: &DirInfo) -> MergeByPath<Scan<'a>, Scan<'a>> {
    MergeByPath::new(
        children(archive, dir, Table::Dirs, ChildOrder::Name, false),
        children(archive, dir, Table::Files, ChildOrder::Name, false),
    )
}

/// Files and directories whose whole path matches a glob, in path order, streamed
/// (the root is never matched). Only the range of paths that start with the
/// pattern's literal prefix is read.
pub struct Globbed<'a> {
    glob: Glob,
    inner: MergeByPath<Scan<'a>, Scan<'a>>,
}

impl<'a> Globbed<'a> {
    /// The members of `archive` matching `glob`; nothing is read until the first `next`.
    pub fn new(archive: &'a Archive, glob: Glob) -> Globbed<'a> {
        let prefix = glob.literal_prefix().as_bytes().to_vec();
        let spec = |t| {
            ScanSpec::new(t, ScanOrder::Path)
                .with(Cond::Prefix(prefix.clone()))
                .with(Cond::NotRoot)
        };
        Globbed {
            inner: MergeByPath::new(
                Scan::new(archive, spec(Table::Files)),
                Scan::new(archive, spec(Table::Dirs)),
            ),
            glob,
        }
    }
}

impl Iterator for Globbed<'_> {
    type Item = Result<Entry>;

    fn next(&mut self) -> Option<Result<Entry>> {
        loop {
            match self.inner.next()? {
                Ok(e) if !self.glob.is_match(e.path()) => continue,
                other => return Some(other),
            }
        }
    }
}

/// How a [`Walk`] goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalkOptions {
    /// The order of each directory's children.
    pub order: ChildOrder,
    /// Each directory's files before its subdirectories (as `os.walk` visits them);
    /// otherwise subdirectories (each followed by its own subtree) first.
    pub files_first: bool,
    /// Yield files at all.
    pub files: bool,
    /// Do not go below directories at this depth (the start is at depth 0): their
    /// children are not yielded.
    pub max_depth: Option<usize>,
    /// Read the files' paths only (their other fields are zero or NULL).
    pub file_paths_only: bool,
}

impl Default for WalkOptions {
    fn default() -> Self {
        WalkOptions {
            order: ChildOrder::Name,
            files_first: true,
            files: true,
            max_depth: None,
            file_paths_only: false,
        }
    }
}

/// One step of a [`Walk`].
#[derive(Debug, Clone)]
pub enum WalkEvent {
    /// A directory; its children follow, then its [`WalkEvent::End`]. `last`: no
    /// sibling follows it.
    Dir {
        /// The directory's row.
        info: DirInfo,
        /// How deep it is below the walk's start (0 for the start).
        depth: usize,
        /// No sibling follows it.
        last: bool,
    },
    /// A file. `last`: no sibling follows it.
    File {
        /// The file's row.
        info: FileInfo,
        /// How deep it is below the walk's start.
        depth: usize,
        /// No sibling follows it.
        last: bool,
    },
    /// The end of the directory opened at `depth`.
    End {
        /// The depth at which that directory was opened.
        depth: usize,
    },
}

#[derive(PartialEq, Eq, Clone, Copy)]
enum Phase {
    Files,
    Dirs,
    Done,
}

struct Frame<'a> {
    dir: DirInfo,
    depth: usize,
    phase: Phase,
    files: Option<Scan<'a>>,
    dirs: Option<Scan<'a>>,
}

/// A top-down walk over a directory tree that streams: each directory is yielded
/// before its children, and only the scans of the directories on the current path
/// are open.
pub struct Walk<'a> {
    archive: &'a Archive,
    opts: WalkOptions,
    start: Option<DirInfo>,
    stack: Vec<Frame<'a>>,
}

impl<'a> Walk<'a> {
    /// Walk below `start` (which is yielded first, at depth 0).
    pub fn new(archive: &'a Archive, start: DirInfo, opts: WalkOptions) -> Walk<'a> {
        Walk {
            archive,
            opts,
            start: Some(start),
            stack: Vec::new(),
        }
    }

    fn frame(&self, dir: DirInfo, depth: usize) -> Frame<'a> {
        let descend = self.opts.max_depth.is_none_or(|m| depth < m);
        let phase = match (descend, self.opts.files_first && self.opts.files) {
            (false, _) => Phase::Done,
            (true, true) => Phase::Files,
            (true, false) => Phase::Dirs,
        };
        Frame {
            dir,
            depth,
            phase,
            files: None,
            dirs: None,
        }
    }

    /// Does the frame's directory have any (more) subdirectories?
    fn more_dirs(&self, f: &mut Frame<'a>) -> bool {
        let (archive, order) = (self.archive, self.opts.order);
        f.dirs
            .get_or_insert_with(|| children(archive, &f.dir, Table::Dirs, order, false))
            .has_next()
    }

    /// Does the frame's directory have any (more) files that will be yielded?
    fn more_files(&self, f: &mut Frame<'a>) -> bool {
        if !self.opts.files {
            return false;
        }
        match &mut f.files {
            Some(s) => s.has_next(),
            // Not started: one row is enough to know (no page of files is held
            // while the subdirectories are walked).
            None => self
                .archive
                .with_index(|i| {
                    let spec = ScanSpec::new(Table::Files, ScanOrder::Rowid)
                        .with(Cond::Parent(f.dir.path.clone()));
                    i.scan_page(&spec, None, 1)
                })
                .map(|p| !p.rows.is_empty())
                .unwrap_or(true),
        }
    }
}

impl Iterator for Walk<'_> {
    type Item = Result<WalkEvent>;

    fn next(&mut self) -> Option<Result<WalkEvent>> {
        if let Some(start) = self.start.take() {
            let f = self.frame(start.clone(), 0);
            self.stack.push(f);
            return Some(Ok(WalkEvent::Dir {
                info: start,
                depth: 0,
                last: true,
            }));
        }
        let mut f = self.stack.pop()?;
        loop {
            match f.phase {
                Phase::Files => {
                    let (archive, order) = (self.archive, self.opts.order);
                    let paths_only = self.opts.file_paths_only;
                    let files = f.files.get_or_insert_with(|| {
                        children(archive, &f.dir, Table::Files, order, paths_only)
                    });
                    match files.next() {
                        Some(Ok(Entry::File(info))) => {
                            let more = self.more_files(&mut f)
                                || (self.opts.files_first && self.more_dirs(&mut f));
                            let depth = f.depth + 1;
                            self.stack.push(f);
                            return Some(Ok(WalkEvent::File {
                                info,
                                depth,
                                last: !more,
                            }));
                        }
                        Some(Ok(Entry::Dir(_))) => continue,
                        Some(Err(e)) => {
                            self.stack.push(f);
                            return Some(Err(e));
                        }
                        None => {
                            f.files = None;
                            f.phase = if self.opts.files_first {
                                Phase::Dirs
                            } else {
                                Phase::Done
                            };
                        }
                    }
                }
                Phase::Dirs => {
                    let (archive, order) = (self.archive, self.opts.order);
                    let dirs = f.dirs.get_or_insert_with(|| {
                        children(archive, &f.dir, Table::Dirs, order, false)
                    });
                    match dirs.next() {
                        Some(Ok(Entry::Dir(info))) => {
                            let more = self.more_dirs(&mut f)
                                || (!self.opts.files_first && self.more_files(&mut f));
                            let depth = f.depth + 1;
                            self.stack.push(f);
                            let child = self.frame(info.clone(), depth);
                            self.stack.push(child);
                            return Some(Ok(WalkEvent::Dir {
                                info,
                                depth,
                                last: !more,
                            }));
                        }
                        Some(Ok(Entry::File(_))) => continue,
                        Some(Err(e)) => {
                            self.stack.push(f);
                            return Some(Err(e));
                        }
                        None => {
                            f.dirs = None;
                            f.phase = if !self.opts.files_first && self.opts.files {
                                Phase::Files
                            } else {
                                Phase::Done
                            };
                        }
                    }
                }
                Phase::Done => return Some(Ok(WalkEvent::End { depth: f.depth })),
            }
        }
    }
}

/// The directory row at `path` (normalized), or an error saying what is there
/// instead.
pub fn dir_info(archive: &Archive, path: &str) -> Result<DirInfo> {
    match archive.lookup(path)? {
        Some(Entry::Dir(d)) => Ok(d),
        Some(Entry::File(f)) => Err(Error::NotADirectory(f.path)),
        None => Err(Error::NotFound(crate::core::path::normalize(path))),
    }
}
