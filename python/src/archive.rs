//! The archive object behind `barecat_rs.Barecat`: one archive opened for reading
//! (shared by any number of threads, the GIL released during every lookup, read and
//! CRC check) or for writing (one writer, batched commits).
//!
//! State lives behind a mutex that is only taken with the GIL held and never across
//! a release of it: it is never contended, and a `fork` (done by a thread holding
//! the GIL) never leaves it locked. Reads clone the shared reader out of it and
//! release the GIL; writes keep the GIL (one writer at a time anyway).

use std::fs::File;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use barecat::core::glob::{Glob, GlobOptions};
use barecat::core::index::{Index, ScanKey, ScanOrder, ScanSpec, Table};
use barecat::core::path as bpath;
use barecat::{
    Archive as LibArchive, ArchiveWriter, CreateMode, Entry, Error, FileInfo as LibFile, FileOrder,
    Meta, NewContent, WriterOptions,
};
use pyo3::buffer::PyUntypedBuffer;
use pyo3::exceptions::{PyBufferError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyMemoryView, PyString, PyTuple};

use crate::errors::{self, closed, key_error, to_py, PyResultExt};
use crate::fork;
use crate::info::{DirInfo, FileInfo};
use crate::mapped::MappedBytes;
use crate::source::Source;

pub(crate) mod pyindex;

/// Files up to this size are read into a buffer and copied into the `bytes`
/// object; larger ones are read straight into it.
const COPY_LIMIT: u64 = 64 << 10;

enum State {
    Reader {
        generation: u64,
        archive: Arc<LibArchive>,
    },
    Writer {
        generation: u64,
        writer: Box<ArchiveWriter>,
    },
    Closed,
}

/// What a method works on: the shared reader (used with the GIL released), or the
/// writer (used with the GIL held, under the state lock).
enum Access<'a> {
    Read(Arc<LibArchive>),
    Write(MutexGuard<'a, State>),
}

fn writer<'a>(g: &'a mut MutexGuard<'_, State>) -> &'a mut ArchiveWriter {
    match &mut **g {
        State::Writer { writer, .. } => writer,
        _ => unreachable!("Access::Write holds a writer"),
    }
}

/// The native archive object; `barecat_rs.Barecat` derives from it.
#[pyclass(name = "_Archive", module = "barecat_rs._native", subclass, frozen)]
pub struct Archive {
    source: Source,
    readonly: bool,
    append_only: bool,
    state: Mutex<State>,
}

/// A position in a paged iteration over files or directories (opaque to Python).
#[pyclass(frozen, module = "barecat_rs._native")]
pub struct PageCursor(ScanKey);

/// One page of the scan `spec` after `cursor`, decoded (a row that does not decode
/// is an error), and the cursor to go on from: `None` when the scan has ended.
fn page_of(
    i: &Index,
    spec: &ScanSpec,
    cursor: Option<&ScanKey>,
    limit: usize,
) -> Result<(Vec<Entry>, Option<ScanKey>), Error> {
    let page = i.scan_page(spec, cursor, limit)?;
    let rows = page.rows.into_iter().collect::<Result<Vec<_>, Error>>()?;
    Ok((rows, page.last))
}

/// A shard size limit given as an int or a string such as `"10G"`.
pub fn size_arg(v: Option<&Bound<'_, PyAny>>) -> PyResult<Option<u64>> {
    let Some(v) = v else { return Ok(None) };
    if v.is_none() {
        return Ok(None);
    }
    if let Ok(s) = v.cast::<PyString>() {
        return barecat::core::size::parse_size(s.to_str()?).py().map(Some);
    }
    let n: i64 = v.extract()?;
    if n <= 0 {
        return Err(PyValueError::new_err(format!(
            "shard_size_limit must be positive, not {n}"
        )));
    }
    Ok(Some(n as u64))
}

/// Run `f` on the bytes of a bytes-like object: `bytes` and C-contiguous buffers
/// (bytearray, memoryview, numpy arrays) without a copy.
pub fn with_bytes<T>(data: &Bound<'_, PyAny>, f: impl FnOnce(&[u8]) -> PyResult<T>) -> PyResult<T> {
    let held = Held::new(data)?;
    f(held.bytes())
}

/// Run `f` on the bytes of several bytes-like objects at once (as [`with_bytes`]).
pub fn with_many_bytes<T>(
    data: &[Bound<'_, PyAny>],
    f: impl FnOnce(&[&[u8]]) -> PyResult<T>,
) -> PyResult<T> {
    let held = data.iter().map(Held::new).collect::<PyResult<Vec<_>>>()?;
    let slices: Vec<&[u8]> = held.iter().map(Held::bytes).collect();
    f(&slices)
}

/// The bytes of a bytes-like object, held readable.
enum Held<'py> {
    /// A `bytes` object (or a contiguous copy of a non-contiguous buffer).
    Bytes(Bound<'py, PyBytes>),
    /// A C-contiguous buffer.
    Buffer(PyUntypedBuffer),
}

impl<'py> Held<'py> {
    fn new(data: &Bound<'py, PyAny>) -> PyResult<Held<'py>> {
        if let Ok(b) = data.cast::<PyBytes>() {
            return Ok(Held::Bytes(b.clone()));
        }
        let not_bytes = || {
            let kind = data
                .get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_else(|_| "?".into());
            crate::errors::new_err(
                data.py(),
                "BarecatTypeError",
                format!("a bytes-like object is required, not '{kind}'"),
            )
        };
        if data.is_instance_of::<PyString>() {
            return Err(not_bytes());
        }
        let buf = PyUntypedBuffer::get(data).map_err(|_| not_bytes())?;
        if !buf.is_c_contiguous() {
            let copy = data
                .py()
                .import("builtins")?
                .getattr("bytes")?
                .call1((PyMemoryView::from(data)?.call_method1("cast", ("B",))?,))?;
            return Ok(Held::Bytes(copy.cast_into::<PyBytes>()?));
        }
        Ok(Held::Buffer(buf))
    }

    fn bytes(&self) -> &[u8] {
        match self {
            Held::Bytes(b) => b.as_bytes(),
            // SAFETY: the buffer is C-contiguous and held (so its memory stays
            // valid) as long as `self`, and `len_bytes` is its size.
            Held::Buffer(buf) => unsafe {
                std::slice::from_raw_parts(buf.buf_ptr() as *const u8, buf.len_bytes())
            },
        }
    }
}

/// Normalize a path for writing as Python barecat does: leading `/` are dropped.
fn write_path(path: &str) -> &str {
    path.trim_start_matches('/')
}

/// The file at `path` in an index (a writer's: rows of its open batch included).
fn file_in(index: &Index, path: &str) -> Result<LibFile, Error> {
    let p = bpath::normalize(path);
    match index.file(&p)? {
        Some(f) => Ok(f),
        None if index.is_dir(&p)? => Err(Error::IsADirectory(p)),
        None => Err(Error::NotFound(p)),
    }
}

/// The file at `path` in a writer's index.
fn writer_file(w: &ArchiveWriter, path: &str) -> Result<LibFile, Error> {
    file_in(w.index(), path)
}

/// Lookups of `read_many` go in chunks of this many paths through one borrowed
/// connection.
const LOOKUP_CHUNK: usize = 256;

fn order_arg(order: &str) -> PyResult<FileOrder> {
    match order {
        "path" => Ok(FileOrder::Path),
        "address" => Ok(FileOrder::Address),
        "insertion" => Ok(FileOrder::Insertion),
        o => Err(PyValueError::new_err(format!("unknown order {o:?}"))),
    }
}

fn py_entry<'py>(py: Python<'py>, e: Entry) -> PyResult<Bound<'py, PyAny>> {
    Ok(match e {
        Entry::File(f) => Bound::new(py, FileInfo::from(f))?.into_any(),
        Entry::Dir(d) => Bound::new(py, DirInfo::from(d))?.into_any(),
    })
}

impl Archive {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The reader or the writer, for this process: after a fork, a reader is opened
    /// anew (the inherited one is leaked, untouched); a writer cannot be used.
    fn access(&self) -> PyResult<Access<'_>> {
        let mut st = self.lock();
        let now = fork::generation();
        let stale_writer = match &mut *st {
            State::Closed => return Err(closed()),
            State::Reader {
                generation,
                archive,
            } => {
                if *generation != now {
                    let fresh = Arc::new(self.source.open().py()?);
                    std::mem::forget(std::mem::replace(archive, fresh));
                    *generation = now;
                }
                return Ok(Access::Read(archive.clone()));
            }
            State::Writer { generation, .. } => *generation != now,
        };
        if stale_writer {
            return Err(Python::attach(|py| {
                errors::new_err(
                    py,
                    "BarecatError",
                    format!(
                        "{}: opened for writing in a parent process; a forked child cannot write \
                         through it (open the archive again in the child)",
                        self.source.path().display()
                    ),
                )
            }));
        }
        Ok(Access::Write(st))
    }

    /// The writer, or an error on a read-only archive.
    fn write_access(&self, what: &str) -> PyResult<MutexGuard<'_, State>> {
        match self.access()? {
            Access::Write(g) => Ok(g),
            Access::Read(_) => Err(to_py_attached(Error::ReadOnly {
                path: self.source.path().clone(),
                reason: format!("{what} needs an archive opened with readonly=False"),
            })),
        }
    }

    fn no_append_only(&self, what: &str) -> PyResult<()> {
        if self.append_only {
            return Err(to_py_attached(Error::ReadOnly {
                path: self.source.path().clone(),
                reason: format!("{what} is not allowed with append_only=True"),
            }));
        }
        Ok(())
    }

    /// The row for `item` (a path or a `BarecatFileInfo`): an info object with a
    /// full address is used as it is, otherwise the path is looked up.
    fn resolve(&self, py: Python<'_>, item: &Bound<'_, PyAny>) -> PyResult<(Access<'_>, LibFile)> {
        let access = self.access()?;
        if let Ok(fi) = item.cast::<FileInfo>() {
            if let Some(f) = fi.borrow().to_lib() {
                return Ok((access, f));
            }
        }
        let path: String = match item.cast::<FileInfo>() {
            Ok(fi) => fi.borrow().path.clone(),
            Err(_) => item.extract()?,
        };
        match access {
            Access::Read(a) => {
                let f = py.detach(|| a.file_info(&path)).py()?;
                Ok((Access::Read(a), f))
            }
            Access::Write(mut g) => {
                let f = writer_file(writer(&mut g), &path).py()?;
                Ok((Access::Write(g), f))
            }
        }
    }

    /// Run an index query: on the reader's pool with the GIL released, or on the
    /// writer's connection after committing (so that directory statistics are
    /// current).
    fn query<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&Index) -> Result<T, Error> + Send,
    ) -> PyResult<T> {
        match self.access()? {
            Access::Read(a) => py.detach(|| a.with_index(f)).py(),
            Access::Write(mut g) => {
                let w = writer(&mut g);
                w.commit().py()?;
                f(w.index()).py()
            }
        }
    }

    /// Run a file lookup: like [`query`](Self::query), but a writer answers from its
    /// open batch without committing.
    fn lookup<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&Index) -> Result<T, Error> + Send,
    ) -> PyResult<T> {
        match self.access()? {
            Access::Read(a) => py.detach(|| a.with_index(f)).py(),
            Access::Write(mut g) => f(writer(&mut g).index()).py(),
        }
    }
}

/// Paths per batch of [`Archive::path_list`]: small enough to stay in the CPU's
/// cache, large enough that taking the GIL back costs nothing.
const PATH_BATCH: usize = 4096;

impl Archive {
    /// A Python list of the paths that `scan` (a [`lookup`](Self::lookup)) gives
    /// to its visitor, made a batch at a time: the scan runs without the GIL and
    /// takes it back for each batch of strings, so that no buffer ever holds every
    /// path (a million paths in one buffer were a tenth of a glob, in page faults).
    fn path_list<'py>(
        &self,
        py: Python<'py>,
        scan: impl FnOnce(&Index, &mut dyn FnMut(&str, bool) -> Result<(), Error>) -> Result<(), Error>
            + Send,
    ) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py).unbind();
        let out = list.clone_ref(py);
        let mut failed = None::<PyErr>;
        let r = self.lookup(py, |i| {
            let mut batch = barecat::core::index::PathList::default();
            let mut flush = |batch: &mut barecat::core::index::PathList| {
                let r = Python::attach(|py| {
                    let l = out.bind(py);
                    batch
                        .iter()
                        .try_for_each(|(p, _)| l.append(PyString::new(py, p)))
                });
                batch.clear();
                r.map_err(|e| {
                    failed = Some(e);
                    Error::Interrupted
                })
            };
            scan(i, &mut |p, is_dir| {
                batch.push(p, is_dir);
                if batch.len() >= PATH_BATCH {
                    flush(&mut batch)?;
                }
                Ok(())
            })?;
            flush(&mut batch)
        });
        if let Some(e) = failed {
            return Err(e);
        }
        r?;
        Ok(list.into_bound(py))
    }
}

fn to_py_attached(e: Error) -> PyErr {
    Python::attach(|py| to_py(py, e))
}

/// A Python glob pattern with Python barecat's options.
pub(crate) fn python_glob(pattern: &str, recursive: bool, include_hidden: bool) -> PyResult<Glob> {
    Glob::new(
        pattern,
        GlobOptions {
            recursive,
            include_hidden,
        },
    )
    .py()
}

/// An open file of our own for the descriptor `fd` of a Python file object (a
/// spill file) that `path` is written from.
fn dup_fd(fd: i32, path: &str) -> PyResult<File> {
    // SAFETY: the caller keeps `fd` open for the duration of the call; it is
    // duplicated, and only the duplicate is used.
    unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) }
        .try_clone_to_owned()
        .map(File::from)
        .map_err(|e| to_py_attached(Error::io(path, e)))
}

/// `fi`'s content as a new `bytes`, CRC-checked, read with the GIL released.
fn read_whole<'py>(py: Python<'py>, a: &LibArchive, fi: &LibFile) -> PyResult<Bound<'py, PyBytes>> {
    if fi.size <= COPY_LIMIT {
        let data = py.detach(|| a.read_file(fi)).py()?;
        return Ok(PyBytes::new(py, &data));
    }
    PyBytes::new_with(py, fi.size as usize, |buf| {
        py.detach(|| a.read_file_into(fi, buf)).py()
    })
}

/// A new `bytes` object of `len` bytes whose content is still to be written, and
/// the address of its buffer.
fn uninit_bytes(py: Python<'_>, len: usize) -> PyResult<(Bound<'_, PyBytes>, usize)> {
    // SAFETY: a NULL source asks CPython for an uninitialised buffer of `len` bytes,
    // which the caller fills before the object is shared.
    unsafe {
        let obj =
            pyo3::ffi::PyBytes_FromStringAndSize(std::ptr::null(), len as pyo3::ffi::Py_ssize_t);
        let obj = Bound::from_owned_ptr_or_err(py, obj)?.cast_into_unchecked::<PyBytes>();
        let ptr = pyo3::ffi::PyBytes_AsString(obj.as_ptr()) as usize;
        Ok((obj, ptr))
    }
}

#[pymethods]
impl Archive {
    #[new]
    #[pyo3(signature = (path, shard_size_limit=None, readonly=true, overwrite=false,
                        auto_codec=false, exist_ok=true, append_only=false, threadsafe=true,
                        allow_writing_symlinked_shard=false, **_ignored))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        path: &Bound<'_, PyAny>,
        shard_size_limit: Option<&Bound<'_, PyAny>>,
        readonly: bool,
        overwrite: bool,
        auto_codec: bool,
        exist_ok: bool,
        append_only: bool,
        threadsafe: bool,
        allow_writing_symlinked_shard: bool,
        _ignored: Option<&Bound<'_, pyo3::types::PyDict>>,
    ) -> PyResult<Archive> {
        let _ = threadsafe; // readers are always thread-safe; one writer per archive
        if auto_codec {
            return Err(PyValueError::new_err(
                "auto_codec is not supported: wrap the archive in barecat_rs.DecodedView",
            ));
        }
        fork::install();
        let source = Source::from_py(path)?;
        let limit = size_arg(shard_size_limit)?;
        let state = if readonly {
            let a = py.detach(|| source.open()).py()?;
            State::Reader {
                generation: fork::generation(),
                archive: Arc::new(a),
            }
        } else {
            let mode = if overwrite {
                CreateMode::Overwrite
            } else if !exist_ok {
                CreateMode::New
            } else {
                CreateMode::AppendOrCreate
            };
            let opts = WriterOptions {
                mode,
                shard_size_limit: limit,
                allow_symlinked_shards: allow_writing_symlinked_shard,
                ..WriterOptions::default()
            };
            let p = source.local_for_writing().py()?.clone();
            let w = py.detach(|| ArchiveWriter::open(&p, opts)).py()?;
            State::Writer {
                generation: fork::generation(),
                writer: Box::new(w),
            }
        };
        Ok(Archive {
            source,
            readonly,
            append_only,
            state: Mutex::new(state),
        })
    }

    /// The path the archive was opened with (a `str` for a URL: a `Path` would
    /// fold its `//`).
    #[getter]
    fn path<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.source.to_py(py)
    }

    #[getter]
    fn readonly(&self) -> bool {
        self.readonly
    }

    #[getter]
    fn append_only(&self) -> bool {
        self.append_only
    }

    #[getter]
    fn closed(&self) -> bool {
        matches!(*self.lock(), State::Closed)
    }

    // ------------------------------------------------------------------ reading

    /// The content of the file at `path`, CRC-checked (`KeyError` when there is no
    /// such file, `ValueError` on a checksum mismatch).
    fn __getitem__<'py>(&self, py: Python<'py>, path: &str) -> PyResult<Bound<'py, PyBytes>> {
        match self.access()? {
            Access::Read(a) => {
                let r = py.detach(|| -> Result<(LibFile, Option<Vec<u8>>), Error> {
                    let fi = a.file_info(path)?;
                    if fi.size <= COPY_LIMIT {
                        let data = a.read_file(&fi)?;
                        return Ok((fi, Some(data)));
                    }
                    Ok((fi, None))
                });
                match r {
                    Ok((_, Some(data))) => Ok(PyBytes::new(py, &data)),
                    Ok((fi, None)) => read_whole(py, &a, &fi),
                    Err(e) => Err(key_error(py, e)),
                }
            }
            Access::Write(mut g) => {
                let w = writer(&mut g);
                let fi = writer_file(w, path).map_err(|e| key_error(py, e))?;
                let data = w.read_file(&fi).py()?;
                Ok(PyBytes::new(py, &data))
            }
        }
    }

    /// Read `size` bytes (all: -1) of a file from `offset`. The CRC is checked when
    /// the whole file is read.
    #[pyo3(signature = (item, offset=0, size=-1))]
    fn read<'py>(
        &self,
        py: Python<'py>,
        item: &Bound<'py, PyAny>,
        offset: i64,
        size: i64,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let (access, fi) = self.resolve(py, item)?;
        let offset = offset.max(0) as u64;
        let whole = offset == 0 && (size < 0 || size as u64 >= fi.size);
        let len = if size < 0 { u64::MAX } else { size as u64 };
        match access {
            Access::Read(a) if whole => read_whole(py, &a, &fi),
            Access::Read(a) => {
                let data = py.detach(|| a.read_range(&fi, offset, len)).py()?;
                Ok(PyBytes::new(py, &data))
            }
            Access::Write(mut g) => {
                let w = writer(&mut g);
                let data = if whole {
                    w.read_file(&fi)
                } else {
                    w.read_at(&fi, offset, len)
                }
                .py()?;
                Ok(PyBytes::new(py, &data))
            }
        }
    }

    /// Read a file from `offset` into a writable buffer, as much as fits; returns
    /// the number of bytes read. The CRC is checked when the whole file is read.
    #[pyo3(signature = (item, buffer, offset=0))]
    fn readinto(
        &self,
        py: Python<'_>,
        item: &Bound<'_, PyAny>,
        buffer: &Bound<'_, PyAny>,
        offset: i64,
    ) -> PyResult<usize> {
        let buf = PyUntypedBuffer::get(buffer)?;
        if buf.readonly() {
            return Err(PyTypeError::new_err("readinto() needs a writable buffer"));
        }
        if !buf.is_c_contiguous() {
            return Err(PyBufferError::new_err(
                "readinto() needs a contiguous buffer",
            ));
        }
        let (access, fi) = self.resolve(py, item)?;
        let start = (offset.max(0) as u64).min(fi.size);
        let n = (buf.len_bytes() as u64).min(fi.size - start) as usize;
        let ptr = buf.buf_ptr() as usize;
        let whole = start == 0 && n as u64 == fi.size;
        match access {
            Access::Read(a) => py
                .detach(|| {
                    // SAFETY: the buffer is writable, contiguous, at least `n` bytes,
                    // and held (its memory stays valid) until `buf` drops below.
                    let dst = unsafe { std::slice::from_raw_parts_mut(ptr as *mut u8, n) };
                    if whole {
                        a.read_file_into(&fi, dst).map(|()| n)
                    } else {
                        a.read_range_into(&fi, start, dst)
                    }
                })
                .py(),
            Access::Write(mut g) => {
                let w = writer(&mut g);
                let data = if whole {
                    w.read_file(&fi)
                } else {
                    w.read_at(&fi, start, n as u64)
                }
                .py()?;
                // SAFETY: as above; `data.len() <= n`.
                let dst = unsafe { std::slice::from_raw_parts_mut(ptr as *mut u8, data.len()) };
                dst.copy_from_slice(&data);
                Ok(data.len())
            }
        }
    }

    /// A read-only `memoryview` of a file's bytes inside the shard's memory map (no
    /// copy), CRC-checked. It stays valid after the archive is closed.
    fn view<'py>(
        &self,
        py: Python<'py>,
        item: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyMemoryView>> {
        let (access, fi) = self.resolve(py, item)?;
        match access {
            Access::Read(a) => {
                let m = py.detach(|| a.map_verified(&fi)).py()?;
                PyMemoryView::from(Bound::new(py, MappedBytes::new(m))?.as_any())
            }
            Access::Write(mut g) => {
                let data = writer(&mut g).read_file(&fi).py()?;
                PyMemoryView::from(PyBytes::new(py, &data).as_any())
            }
        }
    }

    /// The contents of many files, in order, CRC-checked: `bytes` objects, or with
    /// `zero_copy=True` read-only `memoryview`s of the shards' memory maps. Runs with
    /// the GIL released on `threads` threads of a pool of this process (default: one
    /// per CPU; 1 reads on the calling thread). A missing path raises `KeyError`.
    #[pyo3(signature = (paths, threads=None, zero_copy=false))]
    fn read_many<'py>(
        &self,
        py: Python<'py>,
        paths: &Bound<'py, PyAny>,
        threads: Option<usize>,
        zero_copy: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let mut list: Vec<String> = Vec::new();
        for p in paths.try_iter()? {
            list.push(p?.extract()?);
        }
        let threads = threads.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        });
        let a = match self.access()? {
            Access::Read(a) => a,
            Access::Write(mut g) => {
                let w = writer(&mut g);
                let mut out = Vec::with_capacity(list.len());
                for p in &list {
                    let fi = writer_file(w, p).map_err(|e| key_error(py, e))?;
                    let data = w.read_file(&fi).py()?;
                    out.push(PyBytes::new(py, &data).into_any());
                }
                return PyList::new(py, out);
            }
        };
        let pool = if threads > 1 && list.len() > 1 {
            Some(fork::pool(threads)?)
        } else {
            None
        };
        // Runs `f` over `items`, on the pool when there is one.
        fn each<T: Sync, R: Send>(
            pool: Option<&rayon::ThreadPool>,
            items: &[T],
            f: impl Fn(&T) -> R + Sync + Send,
        ) -> Vec<R> {
            match pool {
                Some(p) => p.install(|| {
                    use rayon::prelude::*;
                    items.par_iter().map(f).collect()
                }),
                None => items.iter().map(f).collect(),
            }
        }
        let pool = pool.as_deref();
        // 1. Look every path up (GIL released), a chunk per borrowed connection.
        let chunks: Vec<&[String]> = list.chunks(LOOKUP_CHUNK).collect();
        type Found = Result<Vec<Result<LibFile, Error>>, Error>;
        let found: Vec<Found> = py.detach(|| {
            each(pool, &chunks, |chunk| {
                a.with_index(|i| Ok(chunk.iter().map(|p| file_in(i, p)).collect()))
            })
        });
        let mut infos = Vec::with_capacity(list.len());
        for chunk in found {
            for r in chunk.py()? {
                infos.push(r.map_err(|e| key_error(py, e))?);
            }
        }
        if zero_copy {
            // 2. Map and check every file (GIL released); wrap the views.
            let maps = py.detach(|| each(pool, &infos, |fi| a.map_verified(fi)));
            let mut out = Vec::with_capacity(maps.len());
            for m in maps {
                let m = Bound::new(py, MappedBytes::new(m.py()?))?;
                out.push(PyMemoryView::from(m.as_any())?);
            }
            return PyList::new(py, out);
        }
        // 2. One `bytes` object per file, of its final size (GIL held, no copy).
        let mut objs = Vec::with_capacity(infos.len());
        let mut targets = Vec::with_capacity(infos.len());
        for fi in &infos {
            let (obj, ptr) = uninit_bytes(py, fi.size as usize)?;
            objs.push(obj);
            targets.push((fi, ptr));
        }
        // 3. Read every file straight into its object and check it (GIL released).
        let read = py.detach(|| {
            each(pool, &targets, |(fi, ptr)| {
                // SAFETY: `ptr` is the buffer of a new `bytes` object of `fi.size`
                // bytes that nothing else sees yet (it is kept alive in `objs`).
                let buf =
                    unsafe { std::slice::from_raw_parts_mut(*ptr as *mut u8, fi.size as usize) };
                a.read_file_into(fi, buf)
            })
        });
        for r in read {
            r.py()?;
        }
        PyList::new(py, objs)
    }

    // ------------------------------------------------------------------ lookups

    /// Is there a file at `path`? (Directories do not count, as in Python barecat.)
    fn __contains__(&self, py: Python<'_>, path: &str) -> PyResult<bool> {
        self.isfile(py, path)
    }

    /// Number of files.
    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        self.num_files(py).map(|n| n as usize)
    }

    #[getter]
    fn num_files(&self, py: Python<'_>) -> PyResult<u64> {
        match self.access()? {
            // The root's statistics: O(1), kept by every writer.
            Access::Read(a) => py.detach(|| a.root_totals()).py().map(|t| t.0),
            Access::Write(mut g) => writer(&mut g).index().count_files().py(),
        }
    }

    #[getter]
    fn num_dirs(&self, py: Python<'_>) -> PyResult<u64> {
        self.query(py, Index::count_dirs)
    }

    /// Total size of all files in bytes.
    #[getter]
    fn total_size(&self, py: Python<'_>) -> PyResult<u64> {
        match self.access()? {
            Access::Read(a) => py.detach(|| a.root_totals()).py().map(|t| t.1),
            Access::Write(mut g) => writer(&mut g).index().total_size().py(),
        }
    }

    fn exists(&self, py: Python<'_>, path: &str) -> PyResult<bool> {
        let p = bpath::normalize(path);
        self.lookup(py, move |i| Ok(i.is_file(&p)? || i.is_dir(&p)?))
    }

    fn isfile(&self, py: Python<'_>, path: &str) -> PyResult<bool> {
        let p = bpath::normalize(path);
        self.lookup(py, move |i| i.is_file(&p))
    }

    fn isdir(&self, py: Python<'_>, path: &str) -> PyResult<bool> {
        let p = bpath::normalize(path);
        self.lookup(py, move |i| i.is_dir(&p))
    }

    /// The file or directory info at `path`, or None.
    fn _info<'py>(&self, py: Python<'py>, path: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
        let p = bpath::normalize(path);
        let e = self.query(py, move |i| {
            if let Some(f) = i.file(&p)? {
                return Ok(Some(Entry::File(f)));
            }
            Ok(i.dir(&p)?.map(Entry::Dir))
        })?;
        e.map(|e| py_entry(py, e)).transpose()
    }

    /// Names of the subdirectories and files directly in `path`.
    #[pyo3(signature = (path=""))]
    fn listdir(&self, py: Python<'_>, path: &str) -> PyResult<Vec<String>> {
        let d = bpath::normalize(path);
        self.query(py, move |i| i.child_names(&d))
    }

    /// The normalized `path` and the subdirectory and file infos directly in it, each
    /// sorted by path.
    #[pyo3(signature = (path=""))]
    fn _listing<'py>(
        &self,
        py: Python<'py>,
        path: &str,
    ) -> PyResult<(String, Bound<'py, PyList>, Bound<'py, PyList>)> {
        let d = bpath::normalize(path);
        let q = d.clone();
        let l = self.query(py, move |i| i.listing(&q))?;
        let dirs = PyList::new(py, l.dirs.into_iter().map(DirInfo::from))?;
        let files = PyList::new(py, l.files.into_iter().map(FileInfo::from))?;
        Ok((d, dirs, files))
    }

    /// Paths (files and directories; files only with `only_files`) matching a glob
    /// pattern, sorted.
    #[pyo3(signature = (pattern, recursive=false, include_hidden=false, only_files=false))]
    fn _glob<'py>(
        &self,
        py: Python<'py>,
        pattern: &str,
        recursive: bool,
        include_hidden: bool,
        only_files: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let glob = python_glob(pattern, recursive, include_hidden)?;
        self.path_list(py, move |i, visit| {
            i.each_glob_path(&glob, only_files, visit)
        })
    }

    /// One page of file infos in `order` ("path", "address", "insertion") after
    /// `cursor` (None: from the start); returns the page and the next cursor (None
    /// once the files have all been read).
    #[pyo3(signature = (order, cursor=None, limit=4096))]
    fn _files_page<'py>(
        &self,
        py: Python<'py>,
        order: &str,
        cursor: Option<PyRef<'py, PageCursor>>,
        limit: usize,
    ) -> PyResult<(Bound<'py, PyList>, Option<PageCursor>)> {
        let order = match order_arg(order)? {
            FileOrder::Path => ScanOrder::Path,
            FileOrder::Address => ScanOrder::Address,
            FileOrder::Insertion => ScanOrder::Rowid,
        };
        let spec = ScanSpec::new(Table::Files, order);
        let cur = cursor.map(|c| c.0.clone());
        let (rows, next) = self.lookup(py, move |i| page_of(i, &spec, cur.as_ref(), limit))?;
        let files = rows.into_iter().filter_map(|e| match e {
            Entry::File(f) => Some(FileInfo::from(f)),
            Entry::Dir(_) => None,
        });
        Ok((PyList::new(py, files)?, next.map(PageCursor)))
    }

    /// One page of paths of `table` ("files" in `order`: "path", "address" or
    /// "insertion"; "dirs" in path order, the root `''` first) after `cursor`
    /// (None: from the start); returns the paths and the next cursor (None once
    /// all have been read). Reads the paths only: no info is decoded or made.
    #[pyo3(signature = (table, order="path", cursor=None, limit=4096))]
    fn _paths_page<'py>(
        &self,
        py: Python<'py>,
        table: &str,
        order: &str,
        cursor: Option<PyRef<'py, PageCursor>>,
        limit: usize,
    ) -> PyResult<(Bound<'py, PyList>, Option<PageCursor>)> {
        let spec = match table {
            "files" => ScanSpec::new(
                Table::Files,
                match order_arg(order)? {
                    FileOrder::Path => ScanOrder::Path,
                    FileOrder::Address => ScanOrder::Address,
                    FileOrder::Insertion => ScanOrder::Rowid,
                },
            ),
            "dirs" => ScanSpec::new(Table::Dirs, ScanOrder::Path),
            other => {
                return Err(PyValueError::new_err(format!(
                    "table must be 'files' or 'dirs', not {other:?}"
                )))
            }
        }
        .paths_only(true);
        let cur = cursor.map(|c| c.0.clone());
        let (paths, next) = self.lookup(py, move |i| {
            let mut out = barecat::core::index::PathList::default();
            let (_, next) = i.scan_rows(&spec, cur.as_ref(), limit, &mut |row| {
                out.push(i.path_of(row)?, false);
                Ok(())
            })?;
            Ok((out, next))
        })?;
        Ok((
            PyList::new(py, paths.iter().map(|(p, _)| p))?,
            next.map(PageCursor),
        ))
    }

    /// One page of directory infos in path order after `cursor` (None: from the
    /// root); returns the page and the next cursor (None once the directories have
    /// all been read).
    #[pyo3(signature = (cursor=None, limit=4096))]
    fn _dirs_page<'py>(
        &self,
        py: Python<'py>,
        cursor: Option<PyRef<'py, PageCursor>>,
        limit: usize,
    ) -> PyResult<(Bound<'py, PyList>, Option<PageCursor>)> {
        let spec = ScanSpec::new(Table::Dirs, ScanOrder::Path);
        let cur = cursor.map(|c| c.0.clone());
        let (rows, next) = self.query(py, move |i| page_of(i, &spec, cur.as_ref(), limit))?;
        let dirs = rows.into_iter().filter_map(|e| match e {
            Entry::Dir(d) => Some(DirInfo::from(d)),
            Entry::File(_) => None,
        });
        Ok((PyList::new(py, dirs)?, next.map(PageCursor)))
    }

    /// The shard size limit in bytes (settable on a writable archive).
    #[getter]
    fn get_shard_size_limit(&self, py: Python<'_>) -> PyResult<u64> {
        match self.access()? {
            Access::Read(a) => py.detach(|| a.shard_size_limit()).py(),
            Access::Write(mut g) => Ok(writer(&mut g).shard_size_limit()),
        }
    }

    #[setter]
    fn set_shard_size_limit(&self, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let limit = size_arg(Some(value))?
            .ok_or_else(|| PyValueError::new_err("shard_size_limit cannot be None"))?;
        let mut g = self.write_access("setting the shard size limit")?;
        writer(&mut g).set_shard_size_limit(limit).py()
    }

    // ------------------------------------------------------------------ writing

    /// Add a file with the given content (`bc[path] = data`).
    fn __setitem__(&self, path: &str, data: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut g = self.write_access("adding files")?;
        let w = writer(&mut g);
        with_bytes(data, |b| {
            w.add_file(write_path(path), Meta::default(), b, None)
                .map(drop)
                .py()
        })
    }

    /// Remove a file (`del bc[path]`); `KeyError` when there is no such file.
    fn __delitem__(&self, py: Python<'_>, path: &str) -> PyResult<()> {
        self.no_append_only("removing files")?;
        let mut g = self.write_access("removing files")?;
        let w = writer(&mut g);
        w.remove_file(path).map_err(|e| key_error(py, e))?;
        Ok(())
    }

    /// Add a file; returns its info. Metadata may be None (NULL in the index).
    #[pyo3(signature = (path, data, mode=None, uid=None, gid=None, mtime_ns=None,
                        file_exist_ok=false))]
    #[allow(clippy::too_many_arguments)]
    fn _add_file(
        &self,
        path: &str,
        data: &Bound<'_, PyAny>,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        mtime_ns: Option<i64>,
        file_exist_ok: bool,
    ) -> PyResult<Option<FileInfo>> {
        let mut g = self.write_access("adding files")?;
        let w = writer(&mut g);
        let path = write_path(path);
        if file_exist_ok && w.index().is_file(&bpath::normalize(path)).py()? {
            return Ok(None);
        }
        let meta = Meta {
            mode,
            uid,
            gid,
            mtime_ns,
        };
        with_bytes(data, |b| w.add_file(path, meta, b, None).py()).map(|f| Some(FileInfo::from(f)))
    }

    /// Add a directory (missing ancestors too). An existing directory is an error
    /// unless `dir_exist_ok` (then its metadata is updated).
    #[pyo3(signature = (path, mode=None, uid=None, gid=None, mtime_ns=None, dir_exist_ok=false))]
    fn _add_dir(
        &self,
        path: &str,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        mtime_ns: Option<i64>,
        dir_exist_ok: bool,
    ) -> PyResult<()> {
        let mut g = self.write_access("adding directories")?;
        let w = writer(&mut g);
        let path = write_path(path);
        let p = bpath::normalize(path);
        if !dir_exist_ok && w.index().is_dir(&p).py()? {
            return Err(to_py_attached(Error::FileExists(p)));
        }
        let meta = Meta {
            mode,
            uid,
            gid,
            mtime_ns,
        };
        w.add_dir(path, meta).py()
    }

    /// Add a file or directory of the file system (following symbolic links), with
    /// its mode, owner and mtime; a file's content is streamed.
    #[pyo3(signature = (filesys_path, store_path=None, dir_exist_ok=false))]
    fn add_by_path(
        &self,
        filesys_path: PathBuf,
        store_path: Option<String>,
        dir_exist_ok: bool,
    ) -> PyResult<()> {
        let store = match store_path {
            Some(s) => s,
            None => filesys_path.to_string_lossy().into_owned(),
        };
        let md = std::fs::metadata(&filesys_path)
            .map_err(|e| to_py_attached(Error::io(&filesys_path, e)))?;
        let meta = Meta::from_fs(&md);
        if md.is_dir() {
            return self._add_dir(
                &store,
                meta.mode,
                meta.uid,
                meta.gid,
                meta.mtime_ns,
                dir_exist_ok,
            );
        }
        let mut f =
            File::open(&filesys_path).map_err(|e| to_py_attached(Error::io(&filesys_path, e)))?;
        let mut g = self.write_access("adding files")?;
        writer(&mut g)
            .add_file_from_reader(write_path(&store), meta, md.len(), &mut f)
            .map(drop)
            .py()
    }

    /// Remove a file.
    fn remove(&self, path: &str) -> PyResult<()> {
        self.no_append_only("removing files")?;
        let mut g = self.write_access("removing files")?;
        let w = writer(&mut g);
        w.remove_file(path).py()?;
        Ok(())
    }

    /// Remove an empty directory.
    fn rmdir(&self, path: &str) -> PyResult<()> {
        self.no_append_only("removing directories")?;
        let mut g = self.write_access("removing directories")?;
        let w = writer(&mut g);
        w.remove_empty_dir(path).py()?;
        Ok(())
    }

    /// Remove a directory and everything below it; returns the number of files removed.
    fn rmtree(&self, path: &str) -> PyResult<u64> {
        self.no_append_only("removing directories")?;
        let mut g = self.write_access("removing directories")?;
        let w = writer(&mut g);
        let removed = w.remove_tree(path).py()?;
        Ok(removed.files)
    }

    /// Rename a file or a directory (with everything below it).
    #[pyo3(signature = (old_path, new_path, overwrite=false))]
    fn rename(&self, old_path: &str, new_path: &str, overwrite: bool) -> PyResult<()> {
        self.no_append_only("renaming")?;
        let mut g = self.write_access("renaming")?;
        let w = writer(&mut g);
        w.rename(old_path, write_path(new_path), overwrite).py()?;
        Ok(())
    }

    /// Check that a file object may write `path`: the archive is writable, the path
    /// may be stored, it is not a directory and no ancestor is a file. Returns the
    /// normalized path and the file there, if any. Nothing is changed.
    fn _fileobj_target(&self, path: &str) -> PyResult<(String, Option<FileInfo>)> {
        let mut g = self.write_access("writing through a file object")?;
        let w = writer(&mut g);
        let p = bpath::check_member(write_path(path)).py()?;
        let index = w.index();
        // A file first: a path is never a file and a directory at once (the
        // schema's triggers), so an existing file needs no second lookup.
        let file = if p.is_empty() {
            None
        } else {
            index.file(&p).py()?
        };
        if file.is_none() && (p.is_empty() || index.is_dir(&p).py()?) {
            return Err(to_py_attached(Error::IsADirectory(p)));
        }
        if file.is_none() {
            for a in bpath::ancestors(&p) {
                if index.is_dir(a).py()? {
                    break;
                }
                if index.is_file(a).py()? {
                    return Err(to_py_attached(Error::NotADirectory(p.clone())));
                }
            }
        }
        Ok((p, file.map(FileInfo::from)))
    }

    /// Store the content of a closed file object at `path`: `data` (bytes-like, or
    /// a list of bytes-like pieces to be joined), or the whole file open as
    /// descriptor `fd` (a spill file). A new file is added
    /// like `bc[path] = data`; an existing one (unless `exclusive`, then
    /// `FileExistsBarecatError`) gets the new bytes appended and its row repointed
    /// at them in the same transaction (its row id and metadata are kept), so the
    /// old content stays readable until the index commits the new one.
    #[pyo3(signature = (path, data=None, fd=None, exclusive=false))]
    fn _fileobj_store(
        &self,
        path: &str,
        data: Option<&Bound<'_, PyAny>>,
        fd: Option<i32>,
        exclusive: bool,
    ) -> PyResult<FileInfo> {
        let mut g = self.write_access("writing through a file object")?;
        let w = writer(&mut g);
        let p = bpath::check_member(write_path(path)).py()?;
        let spill = fd.map(|fd| dup_fd(fd, &p)).transpose()?;
        let chunks = match data {
            Some(d) if d.is_instance_of::<PyList>() => Some(d.cast::<PyList>()?.clone()),
            _ => None,
        };
        let existing = w.index().file_with_id(&p).py()?;
        let mut pf = match existing {
            None => {
                let size = match (data, &chunks, &spill) {
                    (_, Some(list), _) => {
                        let mut total = 0u64;
                        for item in list.iter() {
                            total += with_bytes(&item, |b| Ok(b.len() as u64))?;
                        }
                        total
                    }
                    // One buffer: added whole, gathered with its neighbours.
                    (Some(d), None, _) => {
                        return with_bytes(d, |b| w.add_file(&p, Meta::default(), b, None).py())
                            .map(FileInfo::from);
                    }
                    (None, None, Some(f)) => f
                        .metadata()
                        .map_err(|e| to_py_attached(Error::io(&p, e)))?
                        .len(),
                    (None, None, None) => 0,
                };
                w.begin_file(&p, Meta::default(), size).py()?
            }
            Some(_) if exclusive => return Err(to_py_attached(Error::FileExists(p))),
            Some((id, _)) => {
                self.no_append_only("rewriting a file")?;
                w.begin_rewrite(id).py()?
            }
        };
        let fed = match (data, &chunks, &spill) {
            (_, Some(list), _) => list
                .iter()
                .try_for_each(|item| with_bytes(&item, |b| w.write_chunk(&mut pf, b).py())),
            (Some(d), None, _) => with_bytes(d, |b| w.write_chunk(&mut pf, b).py()),
            (None, None, Some(f)) => {
                let mut buf = vec![0u8; 1 << 20];
                let mut at = 0u64;
                loop {
                    match std::os::unix::fs::FileExt::read_at(f, &mut buf, at) {
                        Ok(0) => break Ok(()),
                        Ok(n) => {
                            if let Err(e) = w.write_chunk(&mut pf, &buf[..n]) {
                                break Err(to_py_attached(e));
                            }
                            at += n as u64;
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => break Err(to_py_attached(Error::io(&p, e))),
                    }
                }
            }
            (None, None, None) => Ok(()),
        };
        if let Err(e) = fed {
            w.abort_file(pf).py()?;
            return Err(e);
        }
        w.finish_file(pf).py().map(FileInfo::from)
    }

    /// Rewrite the existing file at `path` where its bytes are (Python barecat's
    /// placement of a changed file that did not grow; docs/FORMAT.md §7.4): the
    /// new content is `new_size` bytes long, made of `pieces` (a list of
    /// `(offset, bytes-like)`, sorted, not overlapping) over the old bytes, with
    /// zeros from `zeros_from` where no piece is; or the whole of the file open as
    /// descriptor `fd` (a spill file). `expect` is the (shard, offset, size) the
    /// file object started from. Returns the new info, or `None` when the file
    /// cannot be rewritten in place (it grew, its shard is a link, its bytes are
    /// shared): nothing changed then, and the caller stores the whole content.
    #[pyo3(signature = (path, expect, new_size, zeros_from, pieces=None, fd=None))]
    fn _fileobj_patch(
        &self,
        path: &str,
        expect: (u64, u64, u64),
        new_size: u64,
        zeros_from: u64,
        pieces: Option<Vec<(u64, Bound<'_, PyAny>)>>,
        fd: Option<i32>,
    ) -> PyResult<Option<FileInfo>> {
        self.no_append_only("rewriting a file")?;
        let mut g = self.write_access("writing through a file object")?;
        let w = writer(&mut g);
        let p = bpath::check_member(write_path(path)).py()?;
        let done = match fd {
            Some(fd) => {
                let f = dup_fd(fd, &p)?;
                w.rewrite_in_place(&p, Some(expect), NewContent::File(&f), new_size)
                    .py()?
            }
            None => {
                let (offsets, objs): (Vec<u64>, Vec<Bound<'_, PyAny>>) =
                    pieces.unwrap_or_default().into_iter().unzip();
                with_many_bytes(&objs, |bytes| {
                    let pieces: Vec<(u64, &[u8])> =
                        offsets.iter().copied().zip(bytes.iter().copied()).collect();
                    let content = NewContent::Pieces {
                        pieces: &pieces,
                        zeros_from,
                    };
                    w.rewrite_in_place(&p, Some(expect), content, new_size).py()
                })?
            }
        };
        Ok(done.map(FileInfo::from))
    }

    /// Make everything added so far durable (shard bytes first, then the index).
    fn commit(&self) -> PyResult<()> {
        match self.access()? {
            Access::Read(_) => Ok(()),
            Access::Write(mut g) => writer(&mut g).commit().py(),
        }
    }

    /// Bulk mode on: commit only when told (`commit`, `close`, or leaving bulk mode),
    /// one transaction for a whole import. Off: commit every few seconds again.
    fn _set_bulk(&self, on: bool) -> PyResult<()> {
        let mut g = self.write_access("bulk mode")?;
        let w = writer(&mut g);
        if on {
            w.set_commit_policy(Duration::MAX, u64::MAX);
        } else {
            let d = WriterOptions::default();
            w.set_commit_policy(d.commit_interval, d.commit_bytes);
            w.commit().py()?;
        }
        Ok(())
    }

    /// Recompute every directory's statistics from the files (Python barecat's
    /// `index.update_treestats()`; this writer keeps them current anyway).
    fn update_treestats(&self) -> PyResult<usize> {
        let mut g = self.write_access("rebuilding statistics")?;
        let w = writer(&mut g);
        w.commit().py()?;
        w.index().rebuild_statistics().py()
    }

    /// Commit and close; later use raises `ValueError`. Closing twice is allowed.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let mut st = self.lock();
        let old = std::mem::replace(&mut *st, State::Closed);
        drop(st);
        match old {
            State::Writer { generation, writer } if generation == fork::generation() => {
                py.detach(|| writer.finish()).py().map(drop)
            }
            State::Reader {
                generation,
                archive,
            } if generation == fork::generation() => {
                drop(archive);
                Ok(())
            }
            State::Closed => Ok(()),
            inherited => {
                std::mem::forget(inherited);
                Ok(())
            }
        }
    }

    fn __repr__(&self) -> String {
        let mode = if self.readonly { "r" } else { "w" };
        let closed = if self.closed() { ", closed" } else { "" };
        format!(
            "Barecat({:?}, mode={mode:?}{closed})",
            self.source.path().display().to_string()
        )
    }

    /// Arguments that reopen the archive for reading elsewhere (pickling).
    fn _reopen_args<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        if !self.readonly {
            return Err(PyValueError::new_err(
                "Cannot pickle a non-readonly Barecat",
            ));
        }
        (self.source.to_py(py)?,).into_pyobject(py)
    }
}

impl Drop for Archive {
    fn drop(&mut self) {
        let st = std::mem::replace(
            self.state.get_mut().unwrap_or_else(|e| e.into_inner()),
            State::Closed,
        );
        match st {
            // Not closed: commit what was added, as `close` would.
            State::Writer { generation, writer } if generation == fork::generation() => {
                if let Err(e) = writer.finish() {
                    eprintln!("barecat_rs: {e}");
                }
            }
            State::Reader { generation, .. } | State::Writer { generation, .. }
                if generation != fork::generation() =>
            {
                // Inherited across fork: leave it untouched.
                std::mem::forget(st);
            }
            _ => {}
        }
    }
}
