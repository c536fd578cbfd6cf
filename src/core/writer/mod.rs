//! Writing archives: [`ArchiveWriter`] appends files and directories, removes,
//! moves and changes them, all in batched transactions.
//!
//! # Bulk mode and durability
//!
//! Files and directories are inserted in batched transactions with the statistics
//! triggers off. Every batch starts with `BEGIN IMMEDIATE` and `use_triggers = 0`;
//! for the batch, the writer's own connection also runs without triggers and
//! foreign-key checks (the flag covers every other connection), which makes each
//! insert a plain row-plus-indexes write: about 3.5× faster at a million files.
//! Rows go in through cached prepared statements, missing ancestor directories are
//! inserted ahead of their children (so the foreign keys hold), and the batch keeps
//! per-directory deltas of the four counters in memory. To commit, the shard bytes are flushed and
//! `fdatasync`ed first, then the deltas are applied (one `UPDATE` per touched
//! directory), `use_triggers` is set back to 1, and the transaction commits.
//!
//! So `use_triggers = 0` is never visible outside a transaction and never left
//! behind, even by a failed or killed operation; every committed state has correct
//! statistics; and no committed row ever points at bytes that are not on disk. A
//! kill loses at most the last batch (a few seconds or a few hundred MB), whose
//! bytes stay in the shard as trailing garbage that [`ArchiveWriter::trim_garbage`]
//! (used by `--resume`) removes. [`crate::core::index::Index::rebuild_statistics`]
//! is the set-based rebuild for operations that insert rows without tracking
//! deltas.
//!
//! Removals, moves and metadata changes are row writes in the same batch, with
//! the same deltas (see `mutate`). A file rewritten where its bytes are has its row
//! changed in the batch too, and its new bytes written over the old ones by the
//! commit, behind an undo journal (see `inplace`). The module is split along those
//! lines: this file opens the writer and runs its batches, `append` adds, `mutate`
//! changes, `inplace` overwrites.

use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::mem::ManuallyDrop;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::core::entry::{FileInfo, Meta};
use crate::core::error::{Error, IoContext, Result};
use crate::core::format::layout::Layout;
use crate::core::index::{now_ns, Index};
use crate::core::path as mpath;
use crate::core::shards::{self, ShardAppender};

mod append;
mod inplace;
mod mutate;

pub use crate::core::index::Totals as Removed;
pub use append::PendingFile;
pub use inplace::NewContent;

/// How a writer treats an archive that exists, or does not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CreateMode {
    /// Create a new archive; an existing one is an error and is left untouched.
    New,
    /// Remove an existing archive first.
    Overwrite,
    /// Add to an existing archive; a missing one is an error.
    Append,
    /// Add to the archive, creating it when missing.
    AppendOrCreate,
}

/// Options of [`ArchiveWriter::open`].
#[derive(Debug, Clone)]
pub struct WriterOptions {
    /// What to do with an existing archive, or a missing one.
    pub mode: CreateMode,
    /// New shard size limit. `None` keeps the stored one (unlimited for a new archive).
    pub shard_size_limit: Option<u64>,
    /// Allow writing when a shard is a symbolic link (a symlink-merged archive).
    pub allow_symlinked_shards: bool,
    /// Commit at least this often while adding.
    pub commit_interval: Duration,
    /// Commit at least every this many bytes added.
    pub commit_bytes: u64,
    /// Append to shards with direct I/O (whole blocks past the page cache) where the
    /// file system does it, once a writer has appended 256 MiB (the bytes before go
    /// through the page cache, which takes them faster). Default: on, unless the
    /// environment variable `BARECAT_DIRECT_IO` is `0`.
    pub direct_io: bool,
    /// Write the archive's B-tree sidecar ([`crate::core::sidecar`]) when the writer
    /// finishes. Default: on. (Whatever this says, an old sidecar is removed when
    /// the writer opens, since the index is about to change.)
    pub sidecar: bool,
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions {
            mode: CreateMode::New,
            shard_size_limit: None,
            allow_symlinked_shards: false,
            commit_interval: Duration::from_secs(3),
            commit_bytes: 256 << 20,
            direct_io: crate::core::shards::direct::wanted(),
            sidecar: true,
        }
    }
}

fn open_shards(layout: &Layout, limit: u64, opts: &WriterOptions) -> Result<ShardAppender> {
    let mut shards = ShardAppender::open(layout, limit, opts.allow_symlinked_shards)?;
    shards.set_direct_io_after(opts.direct_io, crate::core::shards::direct::WARM_UP)?;
    Ok(shards)
}

impl WriterOptions {
    /// The default options with `mode`.
    pub fn with_mode(mode: CreateMode) -> Self {
        WriterOptions {
            mode,
            ..Default::default()
        }
    }
}

/// Changes to one directory's direct counters within a batch.
#[derive(Debug, Default, Clone, Copy)]
struct Delta {
    files: i64,
    subdirs: i64,
    bytes: i64,
    /// Changes to the subtree totals only (a whole subdirectory removed): applied to
    /// the directory and its ancestors, not to its direct `num_files`.
    tree_files: i64,
    tree_bytes: i64,
    /// An entry was removed from or moved out of or into the directory: its mtime
    /// becomes the time of the change, as Python barecat's triggers and POSIX
    /// directories have it.
    touched: bool,
}

/// The open batch: its start, its size and its directory deltas.
#[derive(Debug, Default)]
struct Batch {
    started: Option<Instant>,
    /// Where the appender stood when the batch began: bytes from here on belong
    /// to rows of this batch only (none of them committed).
    start: (u64, u64),
    bytes: u64,
    deltas: HashMap<String, Delta>,
    /// The current shard, when a file that ended it was removed: cut back to its
    /// logical end after the commit.
    cut_shard: Option<u64>,
}

/// Directories known to exist in the index (committed or in the open batch).
#[derive(Debug)]
struct DirCache {
    known: HashSet<String>,
    /// True when every directory of the index is in `known` (a new archive, or
    /// one whose directories were loaded), so a miss needs no query.
    complete: bool,
    /// Whether loading every directory of the index was done or given up (once
    /// per writer: after a rename or a rollback, misses are asked of the index).
    loaded: bool,
    /// Misses asked of the index so far.
    misses: u64,
    /// The number of directories of the index (at most [`DIR_LOAD_MAX`] + 2),
    /// counted at the [`DIR_COUNT_AFTER`]th miss.
    dir_count: Option<u64>,
}

/// The most directories a writer loads ([`DirCache`]): beyond it, each directory
/// is asked of the index.
const DIR_LOAD_MAX: usize = 1 << 18;

/// Misses before the directories are counted: a writer that adds a few files
/// asks the index a few times and loads nothing.
const DIR_COUNT_AFTER: u64 = 64;

/// What a writer added.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteStats {
    /// Files added.
    pub files: u64,
    /// Directories added.
    pub dirs: u64,
    /// Bytes of the files added.
    pub bytes: u64,
}

/// The single writer of an archive.
pub struct ArchiveWriter {
    // Field order matters: the index connection must close before the lock file
    // (closing any descriptor of the index file drops the process's POSIX locks).
    // Both are dropped by hand in `Drop`, and never in a forked child: closing the
    // connection there would roll back the parent's transaction on disk.
    index: ManuallyDrop<Index>,
    shards: ManuallyDrop<ShardAppender>,
    /// The process generation that opened the writer ([`crate::core::fork`]).
    generation: u64,
    layout: Layout,
    batch: Option<Batch>,
    dirs: DirCache,
    opts: WriterOptions,
    stats: WriteStats,
    poisoned: bool,
    /// Shard and offset of the file being written in chunks, if any: its bytes
    /// are not cut off the shard, and empty files added meanwhile go at its start.
    pending: Option<(u64, u64)>,
    /// Files whose bytes start at or after this position are replaced by a file
    /// added at their path (see [`ArchiveWriter::replace_since`]).
    replace_since: Option<(u64, u64)>,
    replaced: Vec<FileInfo>,
    /// A sidecar was there when the writer opened (and was removed).
    removed_sidecar: bool,
    /// Bytes cut off the end of shards after commits, in all.
    tail_cut: u64,
    /// Rewrites in place waiting for the commit (see `inplace`).
    patches: inplace::Patches,
    /// Shards opened for reading back, by number: the file, its path, and whether
    /// it is a symbolic link (see `shard_reader`).
    readers: HashMap<u64, (File, std::path::PathBuf, bool)>,
    _lock: File,
}

impl ArchiveWriter {
    /// Open (or create) the archive at `path` for writing.
    pub fn open(path: impl AsRef<Path>, opts: WriterOptions) -> Result<ArchiveWriter> {
        let path = path.as_ref();
        let exists = Layout::exists(path)?;
        let mut create = match opts.mode {
            CreateMode::New if exists => {
                return Err(Error::ArchiveExists {
                    path: path.to_path_buf(),
                })
            }
            CreateMode::Append if !exists => {
                return Err(Error::ArchiveNotFound {
                    path: path.to_path_buf(),
                })
            }
            CreateMode::Overwrite => {
                Layout::remove(path)?;
                true
            }
            _ => !exists,
        };
        // The sidecar describes the index as it is now: it goes before anything
        // below can change the index (rolling back a hot journal, creating the
        // schema, repairing an interrupted bulk operation, the writes themselves),
        // so that a killed writer never leaves one describing another index.
        let removed_sidecar = crate::core::sidecar::remove(&Layout::current(path))?;
        // A writer killed while creating the index leaves an empty database: adding
        // to it (resuming) starts the archive anew.
        if !create
            && opts.mode == CreateMode::AppendOrCreate
            && Index::is_empty_database(Layout::resolve(path).index())?
        {
            create = true;
        }
        let layout = if create {
            Layout::current(path)
        } else {
            Layout::resolve(path)
        };
        if !create && !layout.index().is_file() {
            return Err(Error::NotAnArchive {
                path: path.to_path_buf(),
                detail: "shard files exist but the index does not".into(),
            });
        }
        if create {
            if let Some(s) = layout.shard_files()?.first() {
                return Err(Error::ArchiveExists {
                    path: s.path.clone(),
                });
            }
        }
        let opened = (|| {
            let index = Index::open_write(layout.index(), create)?;
            let lock = crate::core::index::lock_exclusive(layout.index())?;
            // A rewrite in place that a kill interrupted is finished first.
            inplace::recover(&layout, &index)?;
            let stored = index.shard_size_limit()?;
            let limit = match opts.shard_size_limit {
                Some(l) if l != stored => {
                    Self::check_new_limit(&index, l)?;
                    index.set_shard_size_limit(l)?;
                    l
                }
                _ => stored,
            };
            let shards = open_shards(&layout, limit, &opts)?;
            Ok((index, lock, shards))
        })();
        let (index, lock, shards) = match opened {
            Ok(parts) => parts,
            Err(e) => {
                // A new archive that could not be set up (a full disk, a read-only
                // directory) is not left behind half-made; one that another writer
                // holds is not ours to remove.
                if create && !matches!(e, Error::Locked { .. }) {
                    let _ = Layout::remove(path);
                }
                return Err(e);
            }
        };
        let fresh = index.is_fresh()?;
        let mut known = HashSet::new();
        known.insert(String::new());
        Ok(ArchiveWriter {
            index: ManuallyDrop::new(index),
            shards: ManuallyDrop::new(shards),
            generation: crate::core::fork::generation(),
            layout,
            batch: None,
            dirs: DirCache {
                known,
                complete: fresh,
                loaded: fresh,
                misses: 0,
                dir_count: None,
            },
            opts,
            stats: WriteStats::default(),
            poisoned: false,
            pending: None,
            replace_since: None,
            replaced: Vec::new(),
            removed_sidecar,
            tail_cut: 0,
            patches: inplace::Patches::default(),
            readers: HashMap::new(),
            _lock: lock,
        })
    }

    /// Shard `n` open for reading (kept open for the next read), and its path.
    fn shard_reader(&mut self, n: u64) -> Result<(&File, &Path)> {
        let (file, path, _) = self.shard_entry(n)?;
        Ok((file, path))
    }

    /// Whether shard `n` is a symbolic link (never written through).
    fn shard_is_link(&mut self, n: u64) -> Result<bool> {
        Ok(self.shard_entry(n)?.2)
    }

    fn shard_entry(&mut self, n: u64) -> Result<&(File, std::path::PathBuf, bool)> {
        if !self.readers.contains_key(&n) {
            let path = self.layout.shard_path(n);
            let file = File::open(&path).at(&path)?;
            let link = shards::is_link(&path);
            self.readers.insert(n, (file, path, link));
        }
        Ok(&self.readers[&n])
    }

    /// A smaller limit must still hold every existing shard's logical end.
    fn check_new_limit(index: &Index, limit: u64) -> Result<()> {
        if limit == 0 {
            return Err(Error::InvalidOperation(
                "the shard size limit must be at least 1 byte".into(),
            ));
        }
        let largest = index
            .shard_usage()?
            .iter()
            .map(|u| u.logical_end)
            .max()
            .unwrap_or(0);
        if limit < largest {
            return Err(Error::InvalidOperation(format!(
                "{}: shard size limit {limit} is smaller than the largest existing shard \
                 ({largest} bytes); defragment or reshard first",
                index.path().display()
            )));
        }
        Ok(())
    }

    /// Where the archive's files are.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The writer's index connection (it sees the open batch).
    pub fn index(&self) -> &Index {
        &self.index
    }

    /// What was added so far.
    pub fn stats(&self) -> WriteStats {
        self.stats
    }

    /// The shard size limit in force.
    pub fn shard_size_limit(&self) -> u64 {
        self.shards.limit()
    }

    /// Current shard number and its physical end.
    pub fn position(&self) -> (u64, u64) {
        self.shards.position()
    }

    fn check_usable(&self) -> Result<()> {
        self.check_process()?;
        if self.poisoned {
            return Err(Error::InvalidOperation(format!(
                "{}: an earlier write failed; the uncommitted batch was abandoned",
                self.layout.base().display()
            )));
        }
        Ok(())
    }

    /// A writer is used by the process that opened it only: a forked child shares
    /// its files and its transaction with the parent ([`crate::core::fork`]).
    fn check_process(&self) -> Result<()> {
        if self.generation != crate::core::fork::generation() {
            return Err(Error::InvalidOperation(format!(
                "{}: opened for writing in a parent process; a forked child cannot write \
                 through it (open the archive again in the child)",
                self.layout.base().display()
            )));
        }
        Ok(())
    }

    /// Mark the writer unusable after a failure that leaves the open batch in an
    /// unknown state; the batch is rolled back when the writer is dropped.
    fn poison<T>(&mut self, e: Error) -> Result<T> {
        self.poisoned = true;
        Err(e)
    }

    // ------------------------------------------------------------------ batches

    fn begin_batch(&mut self) -> Result<()> {
        self.check_process()?;
        if self.batch.is_none() {
            self.index.set_bulk_mode(true)?;
            if let Err(e) = self.index.begin_immediate() {
                self.index.set_bulk_mode(false)?;
                return Err(e);
            }
            self.index.set_use_triggers(false)?;
            self.batch = Some(Batch {
                started: Some(Instant::now()),
                start: self.shards.position(),
                ..Batch::default()
            });
        }
        Ok(())
    }

    fn delta(&mut self, dir: &str) -> &mut Delta {
        let batch = self.batch.as_mut().expect("batch is open");
        if !batch.deltas.contains_key(dir) {
            batch.deltas.insert(dir.to_string(), Delta::default());
        }
        batch.deltas.get_mut(dir).expect("just inserted")
    }

    /// Make everything added, removed and changed so far durable: shard bytes
    /// first, then the rows; then the bytes of removed files at the end of the
    /// current shard are cut off (after the commit, so that no committed row ever
    /// points past the end of a shard).
    pub fn commit(&mut self) -> Result<()> {
        self.check_usable()?;
        let Some(mut batch) = self.batch.take() else {
            return Ok(());
        };
        let cut = batch.cut_shard.take();
        if let Err(e) = self.commit_batch(batch) {
            return self.poison(e);
        }
        if let Some(shard) = cut {
            self.cut_shard_tail(shard)?;
        }
        Ok(())
    }

    fn commit_batch(&mut self, batch: Batch) -> Result<()> {
        self.shards.sync()?;
        let journal = self.apply_patches()?;
        self.apply_deltas(&batch.deltas)?;
        self.index.set_use_triggers(true)?;
        self.index.commit()?;
        self.index.set_bulk_mode(false)?;
        match journal {
            Some(j) => std::fs::remove_file(&j).at(&j),
            None => Ok(()),
        }
    }

    /// Write the batch's directory deltas into the rows: one `UPDATE` per touched
    /// directory (direct counters), and one per directory whose subtree totals
    /// change (it and its ancestors).
    fn apply_deltas(&self, deltas: &HashMap<String, Delta>) -> Result<()> {
        let mut tree: HashMap<&str, (i64, i64)> = HashMap::new();
        for (dir, d) in deltas {
            let (files, bytes) = (d.files + d.tree_files, d.bytes + d.tree_bytes);
            if files != 0 || bytes != 0 {
                for a in std::iter::once(dir.as_str()).chain(mpath::ancestors(dir)) {
                    let t = tree.entry(a).or_default();
                    t.0 += files;
                    t.1 += bytes;
                }
            }
        }
        let now = now_ns();
        for (dir, d) in deltas {
            if d.files != 0 || d.subdirs != 0 {
                self.index.add_to_dir_counts(dir, d.files, d.subdirs)?;
            }
            if d.touched {
                self.index.set_dir_mtime(dir, now)?;
            }
        }
        for (dir, (n, s)) in &tree {
            self.index.add_to_dir_totals(dir, *n, *s)?;
        }
        Ok(())
    }

    /// Write the open batch's deltas into the rows now, so that the stored
    /// counters are current within the batch (a directory about to move takes
    /// its stored totals along).
    fn fold_deltas(&mut self) -> Result<()> {
        let Some(batch) = self.batch.as_mut() else {
            return Ok(());
        };
        let deltas = std::mem::take(&mut batch.deltas);
        self.apply_deltas(&deltas)
    }

    /// Commit if the batch is older than the commit interval or larger than the
    /// commit size. Called after every add.
    fn maybe_commit(&mut self) -> Result<()> {
        let due = match &self.batch {
            Some(b) => {
                b.bytes >= self.opts.commit_bytes
                    || b.started
                        .is_some_and(|t| t.elapsed() >= self.opts.commit_interval)
            }
            None => false,
        };
        if due {
            self.commit()?;
        }
        Ok(())
    }

    // ------------------------------------------------------------------ conflicts

    fn dir_exists(&mut self, path: &str) -> Result<bool> {
        if self.dirs.known.contains(path) {
            return Ok(true);
        }
        if self.dirs.complete {
            return Ok(false);
        }
        self.dirs.misses += 1;
        if !self.dirs.loaded && self.dirs.misses >= DIR_COUNT_AFTER && self.load_dirs()? {
            return Ok(self.dirs.known.contains(path));
        }
        let exists = self.index.is_dir(path)?;
        if exists {
            self.dirs.known.insert(path.to_string());
        }
        Ok(exists)
    }

    /// Load every directory of the index into the cache once the misses have
    /// cost about what loading costs (a miss is a lookup of about 0.6 µs, loading
    /// about 0.25 µs a directory), so that adding many files to an existing
    /// archive asks the index nothing per file (a query per file was a tenth of a
    /// merge onto an archive with files). Returns whether the cache is complete.
    /// Like the rest of this cache, it assumes that no other program changes
    /// directories while the writer holds the archive.
    fn load_dirs(&mut self) -> Result<bool> {
        let n = match self.dirs.dir_count {
            Some(n) => n,
            None => *self
                .dirs
                .dir_count
                .insert(self.index.count_dirs_up_to(DIR_LOAD_MAX as u64 + 2)?),
        };
        if n > DIR_LOAD_MAX as u64 + 1 {
            self.dirs.loaded = true;
            return Ok(false);
        }
        if self.dirs.misses * 2 < n {
            return Ok(false);
        }
        self.dirs.loaded = true;
        self.dirs.known.extend(self.index.dir_paths()?);
        self.dirs.complete = true;
        Ok(true)
    }

    /// Ancestors of `path` that have no dirs row yet, nearest first. Errors if one of
    /// them (or `path`'s would-be parent) is a file.
    fn missing_ancestors(&mut self, path: &str) -> Result<Vec<String>> {
        let mut missing = Vec::new();
        for a in mpath::ancestors(path) {
            if self.dir_exists(a)? {
                break;
            }
            if self.index.is_file(a)? {
                return Err(Error::NotADirectory(path.to_string()));
            }
            missing.push(a.to_string());
        }
        Ok(missing)
    }

    fn insert_missing_dirs(&mut self, missing: Vec<String>) -> Result<()> {
        for dir in missing.into_iter().rev() {
            self.index.insert_dir(&dir, &Meta::default())?;
            let parent = mpath::parent(&dir).unwrap_or("").to_string();
            self.delta(&parent).subdirs += 1;
            self.stats.dirs += 1;
            self.dirs.known.insert(dir);
        }
        Ok(())
    }

    /// Normalize and check a path for a new file.
    fn file_path(&mut self, raw: &str) -> Result<String> {
        let path = mpath::check_member(raw)?;
        if path.is_empty() {
            return Err(Error::IsADirectory(String::new()));
        }
        if self.dir_exists(&path)? {
            return Err(Error::IsADirectory(path));
        }
        Ok(path)
    }

    // ------------------------------------------------------------------ the end

    /// Commit, make sure shard 0 exists, write the sidecar (best effort, unless
    /// [`WriterOptions::sidecar`] is off), and return what was added.
    pub fn finish(mut self) -> Result<WriteStats> {
        self.commit()?;
        self.shards.sync()?;
        shards::ensure_first_shard(&self.layout)?;
        self.index.optimize();
        self.write_sidecar();
        Ok(self.stats)
    }

    /// Write the archive's sidecar (best effort) unless [`WriterOptions::sidecar`]
    /// is off: what [`finish`](Self::finish) does last, for callers that end
    /// without finishing because they changed nothing.
    pub fn write_sidecar(&self) {
        if self.opts.sidecar {
            self.emit_sidecar();
        }
    }

    /// After everything was rolled back ([`rollback`](Self::rollback)), the index
    /// is what it was when the writer opened: put back the sidecar that was there
    /// then (written again, best effort), so that the archive is left exactly as
    /// it was.
    pub fn restore_sidecar(&self) {
        if self.removed_sidecar {
            self.emit_sidecar();
        }
    }

    fn emit_sidecar(&self) {
        if self.index.is_autocommit() {
            // Still holding the writer lock: no writer of ours can run meanwhile.
            crate::core::sidecar::emit_best_effort(&self.layout, self.index.conn());
        }
    }

    // ------------------------------------------------------------------ recovery

    /// Remove what an interrupted writer leaves behind: bytes after the last file of
    /// the last used shard, and shards after it that no row refers to (a killed batch
    /// may have rotated into them). Returns the number of bytes removed. Used when
    /// resuming and by `repair`. A shard that is a symbolic link is never cut or
    /// removed: its bytes are another archive's, or a wrapped tar's own.
    pub fn trim_garbage(&mut self) -> Result<u64> {
        let cut_before = self.tail_cut;
        self.commit()?;
        self.pending = None;
        // Nothing of ours may land in a shard after it was cut: a direct write of
        // abandoned bytes may still be running (the appender is reopened below).
        self.shards.abandon();
        let usage = self.index.shard_usage()?;
        let last_used = usage.last().map(|u| u.shard).unwrap_or(0);
        let logical_end = usage
            .iter()
            .find(|u| u.shard == last_used)
            .map(|u| u.logical_end)
            .unwrap_or(0);
        // What the commit cut off counts as given back here too.
        let mut removed = self.tail_cut - cut_before;
        // Shards may be removed below: nothing is read through an old handle.
        self.readers.clear();
        // From the top down, so that the numbering never gets a gap.
        for s in self.layout.shard_files()?.into_iter().rev() {
            if s.number <= last_used || s.is_symlink {
                break;
            }
            removed += std::fs::metadata(&s.path).map(|m| m.len()).unwrap_or(0);
            std::fs::remove_file(&s.path).at(&s.path)?;
        }
        let last = self.layout.shard_path(last_used);
        let len = std::fs::metadata(&last).at(&last)?.len();
        if len > logical_end && !shards::is_link(&last) {
            let f = OpenOptions::new().write(true).open(&last).at(&last)?;
            // Left alone while a reader has the shard mapped (it may hold rows of
            // files deleted since): the next run removes them.
            if shards::truncate_unless_mapped(&f, &last, logical_end)? {
                f.sync_all().at(&last)?;
                removed += len - logical_end;
            }
        }
        if removed > 0 {
            shards::sync_dir(&last)?;
        }
        let fresh = open_shards(&self.layout, self.shards.limit(), &self.opts)?;
        // SAFETY: the old appender is dropped once, here, and replaced at once.
        unsafe { ManuallyDrop::drop(&mut self.shards) };
        self.shards = ManuallyDrop::new(fresh);
        Ok(removed)
    }

    /// Abandon everything added since the last commit: the rows are rolled back and
    /// the bytes they pointed at are cut off (see [`trim_garbage`]). Also after a
    /// failed write or commit; the writer is usable again afterwards. Returns the
    /// number of bytes removed.
    ///
    /// [`trim_garbage`]: Self::trim_garbage
    pub fn rollback(&mut self) -> Result<u64> {
        if self.batch.take().is_some() || !self.index.is_autocommit() {
            self.index.rollback()?;
        }
        self.index.set_bulk_mode(false)?;
        // Rewrites in place of the batch: those waiting are dropped, those a
        // failed commit wrote are undone.
        self.patches.clear();
        inplace::recover(&self.layout, &self.index)?;
        self.poisoned = false;
        // Directories inserted by the abandoned batch are gone again.
        self.dirs.known.clear();
        self.dirs.known.insert(String::new());
        self.dirs.complete = false;
        self.trim_garbage()
    }

    /// Commit, then store a new shard size limit for the files placed from now on; a limit
    /// below an existing shard's logical end is refused.
    pub fn set_shard_size_limit(&mut self, limit: u64) -> Result<()> {
        self.commit()?;
        Self::check_new_limit(&self.index, limit)?;
        self.index.set_shard_size_limit(limit)?;
        self.shards.set_limit(limit);
        Ok(())
    }
}

impl Drop for ArchiveWriter {
    fn drop(&mut self) {
        if self.generation != crate::core::fork::generation() {
            // A forked child: the connection, the shard files and any flush thread
            // are the parent's. Leaked untouched.
            return;
        }
        // An unfinished batch is rolled back: its rows disappear, use_triggers returns
        // to 1, and the bytes it wrote stay behind as unreferenced trailing garbage.
        if self.batch.is_some() || !self.index.is_autocommit() {
            let _ = self.index.rollback();
        }
        let _ = self.index.set_bulk_mode(false);
        // SAFETY: dropped once, here, in field order (the index before the shards
        // and the lock file).
        unsafe {
            ManuallyDrop::drop(&mut self.index);
            ManuallyDrop::drop(&mut self.shards);
        }
    }
}
