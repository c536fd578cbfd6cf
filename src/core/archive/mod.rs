//! Reading archives: [`Archive`] is a read-only handle that any number of threads
//! can use at once.
//!
//! Each thread borrows its own SQLite connection from a small pool for the duration
//! of one query; a connection keeps its read transaction for a few milliseconds
//! across queries, so that lookups cost no locking system calls ([`crate::core::archive::read_pool`]).
//! Shard bytes are read with positioned reads or through memory maps. Full reads verify the stored CRC32C;
//! range reads and zero-copy views do not.

use std::io::Write;
use std::path::Path;

use crate::core::archive::read_pool::ReadPool;
use crate::core::crc;
use crate::core::entry::{DirInfo, Entry, FileInfo, FileOrder, Listing};
use crate::core::error::{Error, Result};
use crate::core::fork::ForkLocal;
use crate::core::format::layout::Layout;
use crate::core::glob::{Glob, GlobOptions};
use crate::core::index::schema::Version;
use crate::core::index::{Cond, Index, ScanOrder, ScanSpec, Table};
use crate::core::path as mpath;
use crate::core::remote::shards::RemoteShards;
use crate::core::remote::{IndexMode, Location, RemoteIndex, RemoteUrl};
use crate::core::shards::{MappedFile, ShardSet};

pub mod read_pool;
pub mod walk;

pub use walk::{ChildOrder, Globbed, MergeByPath, Scan, Walk, WalkEvent, WalkOptions};

/// Options for [`Archive::open_with`].
#[derive(Debug, Clone, Copy, Default)]
pub struct OpenOptions {
    /// Skip the shard checks done on open (contiguous numbering, every shard the
    /// index refers to present). Used by `verify`, which reports these itself.
    /// (A remote archive is never checked this way at open: listing is not what
    /// HTTP servers do, and a missing shard object is reported when it is read.)
    pub lenient: bool,
    /// How the index of a remote archive is read (ignored for local archives).
    pub index_mode: IndexMode,
}

impl OpenOptions {
    /// Lenient opening (see [`OpenOptions::lenient`]).
    pub fn lenient() -> OpenOptions {
        OpenOptions {
            lenient: true,
            ..OpenOptions::default()
        }
    }
}

/// Files of at most this size are read whole and checked before any byte is
/// written out by [`Archive::write_to`].
pub const WHOLE_READ_LIMIT: u64 = 64 << 20;

/// A read-only archive.
///
/// Fork-safe ([`crate::core::fork`]): in a forked child the connections, shard handles and
/// remote clients of the parent are left alone, and the archive is opened again from
/// where it was first opened, on first use.
pub struct Archive {
    /// What [`Archive::open_with`] was given (a path or a URL), to open it again in
    /// a forked child.
    origin: std::path::PathBuf,
    opts: OpenOptions,
    layout: Layout,
    version: Version,
    warnings: Vec<String>,
    backend: ForkLocal<Backend>,
}

/// What reads an archive in one process: index connections, shard handles and, for
/// a remote archive, its index and clients.
struct Backend {
    shards: ShardSet,
    pool: ReadPool,
    /// The index of a remote archive (kept for as long as the archive).
    remote: Option<RemoteIndex>,
}

impl Archive {
    /// Open the archive at `path` (index at `path`, or legacy `path-sqlite-index`).
    /// Fails clearly when a shard is missing: a gap in the shard numbering, or a file
    /// row that refers to a shard that does not exist.
    ///
    /// `path` may be a URL: `s3://bucket/prefix/name` or `http(s)://host/path/name`
    /// opens a remote archive ([`crate::core::remote`]), read by ranged requests.
    pub fn open(path: impl AsRef<Path>) -> Result<Archive> {
        Self::open_with(path, OpenOptions::default())
    }

    /// Open with options.
    pub fn open_with(path: impl AsRef<Path>, opts: OpenOptions) -> Result<Archive> {
        let mut a = match Location::parse(path.as_ref().as_os_str())? {
            Location::Local(p) if p.as_os_str() == path.as_ref().as_os_str() => {
                Self::open_local(path.as_ref(), opts)
            }
            Location::Local(p) => Self::open_local(&p, opts),
            Location::Remote(url) => Self::open_remote(&url, opts),
        }?;
        a.origin = path.as_ref().to_path_buf();
        Ok(a)
    }

    /// This process's backend: the one made at open, or in a forked child one made
    /// by opening the archive again.
    fn backend(&self) -> Result<&Backend> {
        self.backend.get_or_try_init(|| {
            let again = Self::open_with(&self.origin, self.opts)?;
            again.backend.into_inner().ok_or_else(|| {
                Error::InvalidOperation(format!(
                    "{}: could not open the archive again after fork",
                    self.origin.display()
                ))
            })
        })
    }

    fn open_remote(url: &RemoteUrl, opts: OpenOptions) -> Result<Archive> {
        let r = crate::core::remote::open_index(url, opts.index_mode)?;
        let layout = Layout::remote(url.url(), r.legacy);
        let index_path = std::path::PathBuf::from(&r.index_url);
        let index = Index::open_remote(&r.registration, &index_path)?;
        let version = index.version();
        let warnings = index.warnings();
        let reg = r.registration.clone();
        let opener: crate::core::archive::read_pool::Opener =
            Box::new(move || Index::open_remote(&reg, &index_path));
        Ok(Archive {
            origin: url.url().into(),
            opts,
            backend: ForkLocal::with(Backend {
                shards: ShardSet::remote(
                    layout.clone(),
                    RemoteShards::new(r.store.clone(), url.clone()),
                ),
                pool: ReadPool::with_opener(index, opener),
                remote: Some(r),
            }),
            layout,
            version,
            warnings,
        })
    }

    fn open_local(path: &Path, opts: OpenOptions) -> Result<Archive> {
        let layout = Layout::resolve(path);
        if !layout.index().is_file() {
            return Err(Error::ArchiveNotFound {
                path: path.to_path_buf(),
            });
        }
        let index = Index::open_read(layout.index())?;
        if !opts.lenient {
            let shards = layout.contiguous_shards()?;
            if let Some(max) = index.max_shard()? {
                if max < 0 || max as u64 >= shards.len() as u64 {
                    let n = max.max(0) as u64;
                    return Err(Error::MissingShard {
                        path: layout.shard_path(n),
                        shard: n,
                        detail: format!(
                            "the index refers to shard {max} but {} shard file(s) exist",
                            shards.len()
                        ),
                    });
                }
            }
        }
        let version = index.version();
        let warnings = index.warnings();
        Ok(Archive {
            origin: path.to_path_buf(),
            opts,
            backend: ForkLocal::with(Backend {
                shards: ShardSet::new(layout.clone()),
                pool: ReadPool::new(layout.index(), index),
                remote: None,
            }),
            layout,
            version,
            warnings,
        })
    }

    /// Is this a remote archive (opened from a URL)?
    pub fn is_remote(&self) -> bool {
        self.layout.is_remote()
    }

    /// The index of a remote archive: how it is read, what became of its sidecar.
    pub fn remote_index(&self) -> Result<Option<&RemoteIndex>> {
        Ok(self.backend()?.remote.as_ref())
    }

    /// Run `f` with an index connection of this thread's own (borrowed from the pool),
    /// in a read transaction that may have started a few milliseconds ago (what it
    /// sees is still the last committed state: writers cannot commit meanwhile).
    pub fn with_index<T>(&self, f: impl FnOnce(&Index) -> Result<T>) -> Result<T> {
        self.backend()?.pool.with(f)
    }

    /// The names of the archive's files.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The shard files of this process (in a forked child, opened again first).
    pub fn shards(&self) -> Result<&ShardSet> {
        Ok(&self.backend()?.shards)
    }

    /// The schema version of the index.
    pub fn version(&self) -> Version {
        self.version
    }

    /// Warnings about the archive (old schema, …), for the user.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The stored shard size limit.
    pub fn shard_size_limit(&self) -> Result<u64> {
        self.with_index(|i| i.shard_size_limit())
    }

    // ------------------------------------------------------------------ lookups

    /// The file or directory at `path` (normalized first), if any.
    pub fn lookup(&self, path: &str) -> Result<Option<Entry>> {
        let p = mpath::normalize(path);
        self.with_index(|i| {
            if let Some(f) = i.file(&p)? {
                return Ok(Some(Entry::File(f)));
            }
            Ok(i.dir(&p)?.map(Entry::Dir))
        })
    }

    /// Like [`lookup`](Self::lookup), but a missing path is an error.
    pub fn stat(&self, path: &str) -> Result<Entry> {
        self.lookup(path)?
            .ok_or_else(|| Error::NotFound(mpath::normalize(path)))
    }

    /// The file at `path`; a directory or a missing path is an error.
    pub fn file_info(&self, path: &str) -> Result<FileInfo> {
        match self.stat(path)? {
            Entry::File(f) => Ok(f),
            Entry::Dir(d) => Err(Error::IsADirectory(d.path)),
        }
    }

    /// Does anything exist at `path`?
    pub fn exists(&self, path: &str) -> Result<bool> {
        Ok(self.lookup(path)?.is_some())
    }

    /// The root directory row (its counters give the number of files and bytes).
    pub fn root(&self) -> Result<DirInfo> {
        self.backend()?
            .pool
            .with_one_statement(|i| i.dir(""))?
            .ok_or_else(|| Error::corrupt(self.layout.index(), "no root directory row"))
    }

    /// The root's statistics: the number of files and their total size, as the
    /// writers keep them (O(1); a lighter statement than [`root`](Self::root)).
    pub fn root_totals(&self) -> Result<(u64, u64)> {
        let (files, bytes) = self
            .backend()?
            .pool
            .with_one_statement(|i| i.root_totals())?;
        Ok((files.max(0) as u64, bytes.max(0) as u64))
    }

    /// Exact number of files (counted, not taken from the statistics).
    pub fn count_files(&self) -> Result<u64> {
        self.with_index(|i| i.count_files())
    }

    // ------------------------------------------------------------------ reading

    /// The whole content of the file at `path`, CRC-checked.
    pub fn read(&self, path: &str) -> Result<Vec<u8>> {
        let fi = self.file_info(path)?;
        self.read_file(&fi)
    }

    /// The whole content of `fi`, CRC-checked.
    ///
    /// Safe against a concurrent writer that moves files (defragmentation): a read
    /// that fails (CRC mismatch, bytes past the end, shard gone) looks the row up
    /// again and, if the file has moved, reads it at its new place. A file without a
    /// stored CRC has its row checked after the read instead. Wrong bytes are never
    /// returned without an error.
    pub fn read_file(&self, fi: &FileInfo) -> Result<Vec<u8>> {
        self.follow_moves(fi, |fi| {
            let data = self.shards()?.read(fi)?;
            fi.check_crc(&data)?;
            Ok(data)
        })
    }

    /// `len` bytes of `fi` from `offset` (clamped to the file). Not CRC-checked:
    /// instead the row is looked up again after the read, and the read is repeated
    /// at the file's new place if a concurrent writer moved it meanwhile (writers
    /// overwrite a file's old bytes only after committing its move), so the bytes
    /// returned are the file's.
    pub fn read_range(&self, fi: &FileInfo, offset: u64, len: u64) -> Result<Vec<u8>> {
        // The extent is checked before allocating, so an absurd size in a damaged
        // row never becomes a giant allocation. A row that no longer fits its shard
        // may be one the file has left (a defragmentation moved it and cut the
        // shard): the current row is checked instead.
        let now;
        let fi = match self.shards()?.check_extent(fi) {
            Ok(()) => fi,
            Err(e) => match self.moved(fi)? {
                Some(moved) => {
                    self.shards()?.check_extent(&moved)?;
                    now = moved;
                    &now
                }
                None => return Err(e),
            },
        };
        let start = offset.min(fi.size);
        let mut buf = vec![0u8; len.min(fi.size - start) as usize];
        let n = self.read_range_into(fi, offset, &mut buf)?;
        buf.truncate(n);
        Ok(buf)
    }

    /// [`read_range`](Self::read_range) into a caller's buffer: reads up to
    /// `buf.len()` bytes of `fi` from `offset` and returns how many were read (fewer
    /// at the end of the file).
    pub fn read_range_into(&self, fi: &FileInfo, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let mut cur = fi.clone();
        for _ in 0..MOVE_RETRIES {
            let r = self.read_range_once(&cur, offset, buf);
            if !self.shards()?.is_current(cur.shard) {
                continue; // the shard file was replaced: read again from the new one
            }
            match self.moved(&cur)? {
                None => return r,
                Some(now) => {
                    self.shards()?.forget(cur.shard);
                    cur = now;
                }
            }
        }
        Err(kept_moving(fi))
    }

    fn read_range_once(&self, fi: &FileInfo, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let start = offset.min(fi.size);
        let n = (buf.len() as u64).min(fi.size - start) as usize;
        self.shards()?.check_extent(fi)?;
        self.shards()?.read_into(fi, start, &mut buf[..n])?;
        Ok(n)
    }

    /// [`read_file`](Self::read_file) into a caller's buffer of exactly `fi.size`
    /// bytes (no allocation, no copy). A file that a concurrent writer replaced by
    /// one of another size is an error.
    pub fn read_file_into(&self, fi: &FileInfo, buf: &mut [u8]) -> Result<()> {
        self.follow_moves(fi, |fi| {
            if fi.size != buf.len() as u64 {
                return Err(Error::SourceChanged {
                    path: fi.path.clone(),
                    detail: format!("is {} bytes, not {}", fi.size, buf.len()),
                });
            }
            self.shards()?.read_into(fi, 0, buf)?;
            fi.check_crc(buf)
        })
    }

    /// The row of `fi`'s path if it differs from `fi` now (the file was moved,
    /// resized or replaced), `None` if it is unchanged; an error if it is gone.
    fn moved(&self, fi: &FileInfo) -> Result<Option<FileInfo>> {
        match self.backend()?.pool.with_fresh(|i| i.file(&fi.path))? {
            Some(now) if now == *fi => Ok(None),
            Some(now) => Ok(Some(now)),
            None => Err(Error::NotFound(fi.path.clone())),
        }
    }

    /// Run a CRC-checked read of `fi`, following the file if a concurrent writer
    /// moved it (see [`read_file`](Self::read_file)).
    fn follow_moves<T>(
        &self,
        fi: &FileInfo,
        mut read: impl FnMut(&FileInfo) -> Result<T>,
    ) -> Result<T> {
        let mut cur = std::borrow::Cow::Borrowed(fi);
        let mut reopened = false;
        for _ in 0..MOVE_RETRIES {
            let r = read(&cur);
            let suspicious = match &r {
                Ok(_) if cur.crc32c.is_none() => {
                    if !self.shards()?.is_current(cur.shard) {
                        continue; // read from a replaced shard file: read again
                    }
                    true
                }
                Ok(_) => false,
                Err(e) => may_be_concurrent(e),
            };
            if !suspicious {
                return r;
            }
            match self.moved(&cur)? {
                Some(now) => {
                    self.shards()?.forget(cur.shard);
                    cur = std::borrow::Cow::Owned(now);
                }
                None if r.is_ok() => return r,
                // Unchanged row, failed read: once more with the shard opened anew
                // (it may have been replaced by a new file of the same name).
                None if !reopened => {
                    reopened = true;
                    self.shards()?.forget(cur.shard);
                }
                None => return r,
            }
        }
        Err(kept_moving(fi))
    }

    /// Up to `buf.len()` bytes of `fi` from `offset` into `buf` (clamped to the file),
    /// with one positioned read of its shard; returns the number of bytes read. Not
    /// CRC-checked and not re-checked against the index: for readers of an archive
    /// that nobody moves files in meanwhile (a mounted archive), which check whole
    /// reads themselves.
    pub fn read_at(&self, fi: &FileInfo, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let start = offset.min(fi.size);
        let n = (buf.len() as u64).min(fi.size - start) as usize;
        self.shards()?.read_into(fi, start, &mut buf[..n])?;
        Ok(n)
    }

    /// Zero-copy view of `fi`'s bytes in the shard's memory map; not CRC-checked.
    ///
    /// While the map exists, writers do not cut the shard (they would kill this
    /// process with SIGBUS), but a concurrent defragmentation may rewrite the bytes
    /// of a file it moved: use [`read_file`](Self::read_file) or check the view with
    /// [`FileInfo::check_crc`] right where it is used when writers may be running.
    pub fn map(&self, fi: &FileInfo) -> Result<MappedFile> {
        self.shards()?.slice(fi)
    }

    /// Zero-copy view of `fi`'s bytes, CRC-checked (following a moved file as
    /// [`read_file`](Self::read_file) does).
    pub fn map_verified(&self, fi: &FileInfo) -> Result<MappedFile> {
        self.follow_moves(fi, |fi| {
            let m = self.shards()?.slice(fi)?;
            fi.check_crc(&m)?;
            Ok(m)
        })
    }

    /// Write `fi`'s content to `out`, CRC-checked. Files up to [`WHOLE_READ_LIMIT`]
    /// are checked before anything is written; larger ones are streamed and a
    /// mismatch is reported at the end.
    pub fn write_to(&self, fi: &FileInfo, out: &mut dyn Write) -> Result<()> {
        let stdout_err = Error::output;
        if fi.size <= WHOLE_READ_LIMIT {
            let data = self.read_file(fi)?;
            return out.write_all(&data).map_err(stdout_err);
        }
        self.stream_checked(fi, out, stdout_err)
    }

    /// Check `fi`'s CRC32C, reading it piece by piece (never the whole file in
    /// memory): `Err(CrcMismatch)` if its bytes do not match it.
    pub fn check_file(&self, fi: &FileInfo) -> Result<()> {
        self.stream_checked(fi, &mut std::io::sink(), |e| Error::io("<sink>", e))
    }

    /// Copy `fi`'s bytes to `out` in 1 MiB pieces, then compare their CRC32C.
    fn stream_checked(
        &self,
        fi: &FileInfo,
        out: &mut dyn Write,
        out_err: impl Fn(std::io::Error) -> Error,
    ) -> Result<()> {
        self.shards()?.check_extent(fi)?;
        let mut crc = crc::Crc32c::new();
        let mut buf = vec![0u8; (1 << 20).min(fi.size) as usize];
        let mut at = 0u64;
        while at < fi.size {
            let n = (fi.size - at).min(buf.len() as u64) as usize;
            self.shards()?.read_into(fi, at, &mut buf[..n])?;
            crc.update(&buf[..n]);
            out.write_all(&buf[..n]).map_err(&out_err)?;
            at += n as u64;
        }
        fi.check_computed_crc(crc.value())
    }

    // ------------------------------------------------------------------ listing

    /// The subdirectories and files directly in `dir`, each sorted by path.
    pub fn listdir(&self, dir: &str) -> Result<Listing> {
        let d = mpath::normalize(dir);
        self.with_index(|i| i.listing(&d))
    }

    /// Walk the tree below the directory `dir` top-down, streaming: the directory
    /// first, then its children in the order of `opts` (see [`Walk`]).
    pub fn walk(&self, dir: &str, opts: WalkOptions) -> Result<Walk<'_>> {
        let start = walk::dir_info(self, dir)?;
        Ok(Walk::new(self, start, opts))
    }

    /// A paged scan of the index (see [`crate::core::index::scan`]).
    pub fn scan(&self, spec: ScanSpec) -> Scan<'_> {
        Scan::new(self, spec)
    }

    /// Files in the given order, optionally only those below `within` (`""` = all).
    /// Rows are fetched in pages, so no read transaction is held across the walk
    /// (beyond the few milliseconds of [`crate::core::archive::read_pool::HOLD`]).
    pub fn files(&self, order: FileOrder, within: &str) -> FileIter<'_> {
        let order = match order {
            FileOrder::Path => ScanOrder::Path,
            FileOrder::Address => ScanOrder::Address,
            FileOrder::Insertion => ScanOrder::Rowid,
        };
        FileIter {
            scan: walk::files_below(self, &mpath::normalize(within), order, false),
        }
    }

    /// All directories below `within` and `within` itself, in path order.
    pub fn dirs(&self, within: &str) -> Result<Vec<DirInfo>> {
        self.dirs_iter(within)
            .map(|d| {
                d.map(|e| match e {
                    Entry::Dir(d) => d,
                    Entry::File(_) => unreachable!("a scan of dirs yields directories"),
                })
            })
            .collect()
    }

    /// [`dirs`](Self::dirs), streamed.
    pub fn dirs_iter(&self, within: &str) -> Scan<'_> {
        let within = mpath::normalize(within);
        Scan::new(
            self,
            ScanSpec::new(Table::Dirs, ScanOrder::Path).with(Cond::Subtree(within)),
        )
    }

    /// Files and directories whose whole path matches `pattern`, in path order,
    /// streamed. The root is never matched.
    pub fn glob(&self, pattern: &str, opts: GlobOptions) -> Result<Globbed<'_>> {
        Ok(Globbed::new(self, Glob::new(pattern, opts)?))
    }
}

/// How often a read follows a file that a concurrent writer keeps moving.
const MOVE_RETRIES: usize = 4;

/// Errors that a concurrent defragmentation can cause for a reader holding an old
/// row: the file's old bytes rewritten, cut off, or its shard removed.
fn may_be_concurrent(e: &Error) -> bool {
    matches!(
        e,
        Error::CrcMismatch { .. } | Error::BadExtent { .. } | Error::MissingShard { .. }
    )
}

fn kept_moving(fi: &FileInfo) -> Error {
    Error::SourceChanged {
        path: fi.path.clone(),
        detail: "moved by a concurrent writer during every attempt to read it".into(),
    }
}

/// Iterator over files, fetched page by page. See [`Archive::files`].
pub struct FileIter<'a> {
    scan: Scan<'a>,
}

impl Iterator for FileIter<'_> {
    type Item = Result<FileInfo>;

    fn next(&mut self) -> Option<Result<FileInfo>> {
        loop {
            return match self.scan.next()? {
                Ok(Entry::File(f)) => Some(Ok(f)),
                Ok(Entry::Dir(_)) => continue,
                Err(e) => Some(Err(e)),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn archive_is_shareable() {
        fn is_sync<T: Sync + Send>() {}
        is_sync::<Archive>();
    }
}
