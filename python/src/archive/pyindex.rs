//! The native half of Python barecat's `Index` API and of the archive-level
//! maintenance methods of `Barecat` (`python/barecat_rs/_index.py` is the Python
//! half): module functions that take the archive object, so that they can reach
//! its reader or writer.
//!
//! Maintenance that rewrites shards (defrag, merge, truncation) runs on the closed
//! archive: the writer is finished (committed, lock released), the library
//! function runs on the path, and the archive is opened again as it was.

use std::path::Path;
use std::sync::Arc;

use barecat::core::path as bpath;
use barecat::core::progress::Progress;
use barecat::ingest::Duplicates;
use barecat::maint::defrag::{DefragMode, DefragOptions};
use barecat::maint::merge::{MergeOptions, OutputMode};
use barecat::maint::verify::VerifyOptions;
use barecat::{ArchiveWriter, CreateMode, Entry, Error, Meta, WriterOptions};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};

use super::{closed, fork, py_entry, writer, Access, Archive, State};
use crate::errors::PyResultExt;
use crate::info::FileInfo;

fn entries<'py>(py: Python<'py>, found: Vec<Entry>, infos: bool) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for e in found {
        if infos {
            list.append(py_entry(py, e)?)?;
        } else {
            list.append(PyString::new(py, e.path()))?;
        }
    }
    Ok(list)
}

/// One page of a glob's paths (or, with `infos`, their infos): up to `limit`
/// matches after `after` (in path order; None: from the first), and the path to
/// resume after (None once the glob has no more). `iterglob_paths` and
/// `iterglob_infos` read a glob this way, so that the objects of a page are freed
/// while the next is made.
#[pyfunction]
#[pyo3(signature = (bc, pattern, recursive, include_hidden, only_files, after=None, limit=4096, infos=false))]
#[allow(clippy::too_many_arguments)]
pub fn _ix_glob_page<'py>(
    py: Python<'py>,
    bc: &Bound<'py, Archive>,
    pattern: &str,
    recursive: bool,
    include_hidden: bool,
    only_files: bool,
    after: Option<String>,
    limit: usize,
    infos: bool,
) -> PyResult<(Bound<'py, PyList>, Option<String>)> {
    let glob = super::python_glob(pattern, recursive, include_hidden)?;
    let limit = limit.max(1);
    let (page, found) = bc.get().lookup(py, move |i| {
        let mut out = barecat::core::index::PathList::default();
        let r = i.each_glob_path_after(&glob, only_files, after.as_deref(), &mut |p, d| {
            out.push(p, d);
            if out.len() >= limit {
                // A full page: the scan stops here.
                return Err(Error::Interrupted);
            }
            Ok(())
        });
        if let Err(e) = r {
            if !matches!(e, Error::Interrupted) {
                return Err(e);
            }
        }
        let mut found = Vec::new();
        if infos {
            for (p, is_dir) in out.iter() {
                let e = if is_dir {
                    i.dir(p)?.map(Entry::Dir)
                } else {
                    i.file(p)?.map(Entry::File)
                };
                found.extend(e);
            }
        }
        Ok((out, found))
    })?;
    let next = (page.len() >= limit)
        .then(|| page.iter().last().map(|(p, _)| p.to_string()))
        .flatten();
    let list = if infos {
        entries(py, found, true)?
    } else {
        PyList::new(py, page.iter().map(|(p, _)| PyString::new(py, p)))?
    };
    Ok((list, next))
}

/// Entries whose path passes SQLite `GLOB` rules ((include, pattern) pairs):
/// files then directories.
#[pyfunction]
#[pyo3(signature = (bc, rules, only_files=false, infos=true))]
pub fn _ix_raw_glob<'py>(
    py: Python<'py>,
    bc: &Bound<'py, Archive>,
    rules: Vec<(bool, String)>,
    only_files: bool,
    infos: bool,
) -> PyResult<Bound<'py, PyList>> {
    let found = bc
        .get()
        .lookup(py, move |i| i.raw_glob(&rules, only_files))?;
    entries(py, found, infos)
}

type Level = (Entry, Vec<Entry>, Vec<Entry>);

/// The whole walk below `root`, top-down, depth first, children sorted by path:
/// `(dirpath, subdir names, file names)` (the root as `'.'`), or with `infos`
/// `(DirInfo, [DirInfo], [FileInfo])`. A missing root is `FileNotFoundBarecatError`.
#[pyfunction]
#[pyo3(signature = (bc, root="", infos=false))]
pub fn _ix_walk<'py>(
    py: Python<'py>,
    bc: &Bound<'py, Archive>,
    root: &str,
    infos: bool,
) -> PyResult<Bound<'py, PyList>> {
    let root = bpath::normalize(root);
    if !infos {
        return walk_names(py, bc, root);
    }
    let levels: Vec<Level> = bc.get().query(py, move |i| {
        let Some(top) = i.dir(&root)? else {
            return Err(Error::NotFound(root));
        };
        let mut out = Vec::new();
        let mut stack = vec![top];
        while let Some(d) = stack.pop() {
            let l = i.listing(&d.path)?;
            stack.extend(l.dirs.iter().rev().cloned());
            out.push((
                Entry::Dir(d),
                l.dirs.into_iter().map(Entry::Dir).collect(),
                l.files.into_iter().map(Entry::File).collect(),
            ));
        }
        Ok(out)
    })?;
    let out = PyList::empty(py);
    for (d, dirs, files) in levels {
        let t = if infos {
            PyTuple::new(
                py,
                [
                    py_entry(py, d)?,
                    entries(py, dirs, true)?.into_any(),
                    entries(py, files, true)?.into_any(),
                ],
            )?
        } else {
            let p = if d.path().is_empty() { "." } else { d.path() };
            let names = |v: Vec<Entry>| {
                PyList::new(py, v.iter().map(|e| bpath::basename(e.path()).to_string()))
            };
            PyTuple::new(
                py,
                [
                    PyString::new(py, p).into_any(),
                    names(dirs)?.into_any(),
                    names(files)?.into_any(),
                ],
            )?
        };
        out.append(t)?;
    }
    Ok(out)
}

/// The names form of [`_ix_walk`]: two scans of the path indexes (directories,
/// files) below `root`, grouped by parent here.
fn walk_names<'py>(
    py: Python<'py>,
    bc: &Bound<'py, Archive>,
    root: String,
) -> PyResult<Bound<'py, PyList>> {
    let r = root.clone();
    let (dirs, files) = bc.get().query(py, move |i| {
        if !i.is_dir(&r)? {
            return Err(Error::NotFound(r));
        }
        i.subtree_paths(&r)
    })?;
    // Directory number by path: the root is 0, then `dirs` in path order.
    let mut number = std::collections::HashMap::with_capacity(dirs.len() + 1);
    number.insert(root.as_str(), 0usize);
    for (n, d) in dirs.iter().enumerate() {
        number.insert(d.as_str(), n + 1);
    }
    let parent_of = |p: &str| -> Option<usize> {
        let parent = p.rfind('/').map_or("", |k| &p[..k]);
        number.get(parent).copied()
    };
    let mut subdirs: Vec<Vec<usize>> = vec![Vec::new(); dirs.len() + 1];
    let mut names: Vec<Vec<&str>> = vec![Vec::new(); dirs.len() + 1];
    for (n, d) in dirs.iter().enumerate() {
        if let Some(p) = parent_of(d) {
            subdirs[p].push(n + 1);
        }
    }
    for f in &files {
        if let Some(p) = parent_of(f) {
            names[p].push(bpath::basename(f));
        }
    }
    let path_of = |n: usize| {
        if n == 0 {
            root.as_str()
        } else {
            dirs[n - 1].as_str()
        }
    };
    let out = PyList::empty(py);
    let mut stack = vec![0usize];
    while let Some(n) = stack.pop() {
        let p = path_of(n);
        let sub = PyList::new(py, subdirs[n].iter().map(|&c| bpath::basename(path_of(c))))?;
        let fs = PyList::new(py, names[n].iter())?;
        let shown = if p.is_empty() { "." } else { p };
        out.append(PyTuple::new(
            py,
            [
                PyString::new(py, shown).into_any(),
                sub.into_any(),
                fs.into_any(),
            ],
        )?)?;
        stack.extend(subdirs[n].iter().rev());
    }
    Ok(out)
}

/// The file with the highest offset in the highest shard, or None.
#[pyfunction]
pub fn _ix_last_file(py: Python<'_>, bc: &Bound<'_, Archive>) -> PyResult<Option<FileInfo>> {
    Ok(bc.get().query(py, |i| i.last_file())?.map(FileInfo::from))
}

/// The logical end of `shard` (0 for a shard without files).
#[pyfunction]
pub fn _ix_shard_end(py: Python<'_>, bc: &Bound<'_, Archive>, shard: i64) -> PyResult<u64> {
    if shard < 0 {
        return Ok(0);
    }
    bc.get().query(py, move |i| i.shard_end(shard as u64))
}

/// The highest shard number any file uses, plus one.
#[pyfunction]
pub fn _ix_num_used_shards(py: Python<'_>, bc: &Bound<'_, Archive>) -> PyResult<i64> {
    Ok(bc.get().query(py, |i| i.max_shard())?.map_or(0, |m| m + 1))
}

/// The files at `paths`, in order; the first missing one is
/// `FileNotFoundBarecatError`.
#[pyfunction]
pub fn _ix_lookup_files(
    py: Python<'_>,
    bc: &Bound<'_, Archive>,
    paths: Vec<String>,
) -> PyResult<Vec<FileInfo>> {
    let found = bc.get().lookup(py, move |i| {
        paths
            .iter()
            .map(|p| {
                let p = bpath::normalize(p);
                i.file(&p)?.ok_or(Error::NotFound(p))
            })
            .collect::<Result<Vec<_>, Error>>()
    })?;
    Ok(found.into_iter().map(FileInfo::from).collect())
}

/// Change the metadata of the file or directory at `path` (a file first): each
/// field given replaces the stored one, None keeps it.
#[pyfunction]
#[pyo3(signature = (bc, path, mode=None, uid=None, gid=None, mtime_ns=None))]
pub fn _ix_set_meta(
    bc: &Bound<'_, Archive>,
    path: &str,
    mode: Option<u32>,
    uid: Option<u32>,
    gid: Option<u32>,
    mtime_ns: Option<i64>,
) -> PyResult<()> {
    let a = bc.get();
    let mut g = a.write_access("changing metadata")?;
    let w = writer(&mut g);
    let meta = Meta {
        mode,
        uid,
        gid,
        mtime_ns,
    };
    w.patch_meta(path, meta).py()
}

/// Index a file whose bytes are already in a shard (Python's `Index.add_file`):
/// `info` must carry shard, offset and size.
#[pyfunction]
pub fn _ix_add_extent(bc: &Bound<'_, Archive>, info: PyRef<'_, FileInfo>) -> PyResult<()> {
    let Some(f) = info.to_lib() else {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "{}: a file info needs shard, offset and size to be indexed",
            info.path
        )));
    };
    let a = bc.get();
    let mut g = a.write_access("adding files")?;
    let w = writer(&mut g);
    w.add_extent(&f.path, f.meta, (f.shard, f.offset, f.size), f.crc32c)
        .py()?;
    Ok(())
}

/// Lengths of the shard files on disk, shard 0 first.
#[pyfunction]
pub fn _ix_physical_shard_ends(py: Python<'_>, bc: &Bound<'_, Archive>) -> PyResult<Vec<u64>> {
    let a = bc.get();
    let layout = match a.access()? {
        Access::Read(r) => r.layout().clone(),
        Access::Write(mut g) => {
            let w = writer(&mut g);
            w.commit().py()?;
            w.layout().clone()
        }
    };
    py.detach(|| {
        let files = layout.shard_files()?;
        let mut ends = Vec::new();
        for f in files {
            let n = f.number as usize;
            if ends.len() <= n {
                ends.resize(n + 1, 0);
            }
            ends[n] = std::fs::metadata(&f.path)
                .map_err(|e| Error::io(&f.path, e))?
                .len();
        }
        Ok(ends)
    })
    .py()
}

/// Run `f` on the archive's path while it is closed, then open it again as it
/// was (a writer appending, a reader afresh).
fn while_closed<T>(
    _py: Python<'_>,
    bc: &Bound<'_, Archive>,
    f: impl FnOnce(&Path) -> Result<T, Error>,
) -> PyResult<T> {
    let a = bc.get();
    let path = a.source.path().clone();
    let mut st = a.lock();
    if matches!(*st, State::Closed) {
        return Err(closed());
    }
    match std::mem::replace(&mut *st, State::Closed) {
        State::Writer { generation, writer } => {
            let limit = writer.shard_size_limit();
            let done = writer.finish().map(drop);
            let r = done.and_then(|()| f(&path));
            let opts = WriterOptions {
                mode: CreateMode::AppendOrCreate,
                shard_size_limit: Some(limit),
                ..WriterOptions::default()
            };
            let w = ArchiveWriter::open(&path, opts).py()?;
            *st = State::Writer {
                generation,
                writer: Box::new(w),
            };
            r.py()
        }
        State::Reader { .. } => {
            let r = f(&path);
            let fresh = a.source.open().py()?;
            *st = State::Reader {
                generation: fork::generation(),
                archive: Arc::new(fresh),
            };
            r.py()
        }
        State::Closed => Err(closed()),
    }
}

/// Verify the archive (the index, the shards and, unless `quick`, every CRC):
/// whether it is sound, and one line per problem.
#[pyfunction]
#[pyo3(signature = (bc, quick=false))]
pub fn _ix_verify(
    py: Python<'_>,
    bc: &Bound<'_, Archive>,
    quick: bool,
) -> PyResult<(bool, Vec<String>)> {
    let report = while_closed(py, bc, |p| {
        let opts = VerifyOptions {
            quick,
            workers: 2,
            index_mode: Default::default(),
        };
        barecat::maint::verify::verify(p, &opts, &Progress::hidden())
    })?;
    let lines = report.problems.iter().map(|f| f.message.clone()).collect();
    Ok((report.ok, lines))
}

/// Defragment (full, or `quick`: fill holes from the end for a while); returns the
/// bytes given back.
#[pyfunction]
#[pyo3(signature = (bc, quick=false))]
pub fn _ix_defrag(py: Python<'_>, bc: &Bound<'_, Archive>, quick: bool) -> PyResult<u64> {
    let mode = if quick {
        DefragMode::Quick {
            time_limit: std::time::Duration::from_secs(5),
        }
    } else {
        DefragMode::Full
    };
    let r = while_closed(py, bc, |p| {
        barecat::maint::defrag::defrag(p, &DefragOptions::new(mode), &Progress::hidden())
    })?;
    Ok(r.freed_bytes)
}

/// Copy the files of the archive `source` into this one (below `prefix`; only
/// those at `paths` when given). A path both have is `FileExistsBarecatError`
/// (nothing copied) unless `ignore_duplicates` (then this archive's file stays).
#[pyfunction]
#[pyo3(signature = (bc, source, ignore_duplicates=false, prefix=None, paths=None))]
pub fn _ix_merge_from(
    py: Python<'_>,
    bc: &Bound<'_, Archive>,
    source: std::path::PathBuf,
    ignore_duplicates: bool,
    prefix: Option<String>,
    paths: Option<Vec<String>>,
) -> PyResult<u64> {
    let prefix = prefix
        .map(|p| bpath::normalize(&p))
        .filter(|p| !p.is_empty());
    let filter = paths.map(|p| {
        std::sync::Arc::new(barecat::core::glob::PathFilter::Paths(
            p.into_iter().collect(),
        ))
    });
    let r = while_closed(py, bc, |p| {
        if !ignore_duplicates {
            // Refuse before anything is copied.
            let here = barecat::core::index::Index::open_read(barecat::Layout::resolve(p).index())?;
            here.attach(barecat::Layout::resolve(&source).index(), "mergesrc")?;
            let pre = prefix.as_deref().unwrap_or("");
            let dup = match &filter {
                None => here
                    .first_attached_duplicate("mergesrc", pre)
                    .map(|(d, _)| d),
                Some(f) => {
                    let mut found = None;
                    here.attached_duplicates("mergesrc", pre, &mut |src, dst| {
                        let hit = f.selects(src);
                        if hit {
                            found = Some(dst.to_owned());
                        }
                        !hit
                    })?;
                    found
                }
            };
            here.detach("mergesrc")?;
            if let Some(path) = dup {
                return Err(Error::FileExists(path));
            }
        }
        let opts = MergeOptions {
            output_mode: OutputMode::Append,
            duplicates: if ignore_duplicates {
                Duplicates::First
            } else {
                Duplicates::Error
            },
            prefix,
            filter: filter.clone(),
            ..MergeOptions::default()
        };
        barecat::maint::merge::merge(p, &[source], &opts, &Progress::hidden())
    })?;
    Ok(r.files)
}

/// Cut every shard file back to its logical end (the end of its last file).
#[pyfunction]
pub fn _ix_truncate_to_logical(py: Python<'_>, bc: &Bound<'_, Archive>) -> PyResult<()> {
    while_closed(py, bc, |p| {
        let layout = barecat::Layout::resolve(p);
        let index = barecat::core::index::Index::open_read(layout.index())?;
        for f in layout.shard_files()? {
            let end = index.shard_end(f.number)?;
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(&f.path)
                .map_err(|e| Error::io(&f.path, e))?;
            let len = file.metadata().map_err(|e| Error::io(&f.path, e))?.len();
            if len > end {
                file.set_len(end).map_err(|e| Error::io(&f.path, e))?;
            }
        }
        Ok(())
    })
}

/// Whether an archive exists at `path` (its index, a legacy index, or shards).
#[pyfunction]
pub fn _api_exists(path: std::path::PathBuf) -> PyResult<bool> {
    barecat::Layout::exists(&path).py()
}

/// Remove the archive at `path`: index, shards, side files.
#[pyfunction]
pub fn _api_remove(py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
    py.detach(|| barecat::Layout::remove(&path)).py()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_ix_glob_page, m)?)?;
    m.add_function(wrap_pyfunction!(_api_exists, m)?)?;
    m.add_function(wrap_pyfunction!(_api_remove, m)?)?;
    m.add_function(wrap_pyfunction!(_ix_raw_glob, m)?)?;
    m.add_function(wrap_pyfunction!(_ix_walk, m)?)?;
    m.add_function(wrap_pyfunction!(_ix_last_file, m)?)?;
    m.add_function(wrap_pyfunction!(_ix_shard_end, m)?)?;
    m.add_function(wrap_pyfunction!(_ix_num_used_shards, m)?)?;
    m.add_function(wrap_pyfunction!(_ix_lookup_files, m)?)?;
    m.add_function(wrap_pyfunction!(_ix_set_meta, m)?)?;
    m.add_function(wrap_pyfunction!(_ix_add_extent, m)?)?;
    m.add_function(wrap_pyfunction!(_ix_physical_shard_ends, m)?)?;
    m.add_function(wrap_pyfunction!(_ix_verify, m)?)?;
    m.add_function(wrap_pyfunction!(_ix_defrag, m)?)?;
    m.add_function(wrap_pyfunction!(_ix_merge_from, m)?)?;
    m.add_function(wrap_pyfunction!(_ix_truncate_to_logical, m)?)?;
    Ok(())
}
