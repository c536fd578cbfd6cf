//! Records by integer index from Python: `barecat_rs.Records(path)`.
//!
//! Why: training code asks for `dataset[i]`. The library's [`barecat::records`]
//! answers from a memory-mapped offset table with no SQLite on the read path; this
//! object hands the records to Python as `bytes` (`r[i]`) or, without copying, as
//! read-only buffers over the mapped chunks (`r.view(i)`, `r.gather(indices)`),
//! which keep their chunk mapped for as long as Python holds them.
//!
//! One object reads a dataset directory or the record table of a barecat archive
//! (`P-records`, written by `barecat-records build`). Opened with `readonly=False`
//! it is the dataset's single writer (append, modify, delete); reads through a
//! writer see what it committed, and commit first when something is pending.
//! Like the archive object, a reader survives `fork` (the child maps the dataset
//! anew) and pickles as its path; a writer refuses to be used in a forked child.

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

use barecat::records::{
    Compress, DatasetOptions, Dtype, GatherOptions, Record, RecordWriter, Records as LibRecords,
};
use barecat::Error;
use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use crate::errors::{self, to_py, PyResultExt};
use crate::fork;
use crate::mapped::MappedBytes;

enum State {
    Reader {
        generation: u64,
        records: LibRecords,
    },
    Writer {
        generation: u64,
        writer: Box<RecordWriter>,
        /// A reader of what the writer committed; `None` after a commit.
        reader: Option<LibRecords>,
        /// Changes not yet committed.
        dirty: bool,
    },
    Closed,
}

#[pyclass(name = "_Records", module = "barecat_rs._native", subclass, frozen)]
pub struct Records {
    path: PathBuf,
    readonly: bool,
    check_crc: bool,
    state: Mutex<State>,
}

fn dtype_arg(s: &str) -> PyResult<Dtype> {
    Dtype::parse(s).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown dtype {s:?} (one of {})",
            Dtype::names().join(", ")
        ))
    })
}

fn compress_arg(s: &str) -> PyResult<Compress> {
    Compress::parse(s).ok_or_else(|| {
        PyValueError::new_err(format!("unknown compression {s:?} (none, zstd or flate)"))
    })
}

/// Indices as `u64`, negative ones counted from the end, every one checked.
fn resolve_index(i: i64, len: u64) -> PyResult<u64> {
    let j = if i < 0 { i + len as i64 } else { i };
    if j < 0 || j as u64 >= len {
        return Err(PyIndexError::new_err(format!(
            "record index {i} out of range (the dataset holds {len} records)"
        )));
    }
    Ok(j as u64)
}

fn closed() -> PyErr {
    PyValueError::new_err("I/O operation on a closed Records object")
}

impl Records {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    // The state lock is never held across a release of the GIL (`py.detach`):
    // another thread waiting for it while holding the GIL would deadlock us. So
    // writes run with the GIL held, as in the archive object; reads detach after
    // taking their own handle out of the lock.

    /// The reader for this process: a writer's pending changes are committed first;
    /// after a fork a reader is opened anew (the inherited one is leaked, untouched).
    fn reader(&self, py: Python<'_>) -> PyResult<LibRecords> {
        let mut st = self.lock();
        let now = fork::generation();
        match &mut *st {
            State::Closed => Err(closed()),
            State::Reader {
                generation,
                records,
            } => {
                if *generation != now {
                    let fresh = LibRecords::open(&self.path).py()?;
                    std::mem::forget(std::mem::replace(records, fresh));
                    *generation = now;
                }
                Ok(records.clone())
            }
            State::Writer {
                generation,
                writer,
                reader,
                dirty,
            } => {
                if *generation != now {
                    return Err(self.stale_writer(py));
                }
                if *dirty {
                    writer.commit().py()?;
                    *dirty = false;
                    *reader = None;
                }
                if reader.is_none() {
                    *reader = Some(LibRecords::open(&self.path).py()?);
                }
                Ok(reader.clone().expect("opened above"))
            }
        }
    }

    fn stale_writer(&self, py: Python<'_>) -> PyErr {
        errors::new_err(
            py,
            "BarecatError",
            format!(
                "{}: opened for writing in a parent process; a forked child cannot write \
                 through it (open the dataset again in the child)",
                self.path.display()
            ),
        )
    }

    /// Run `f` on the writer of this process.
    fn with_writer<T>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut RecordWriter) -> Result<T, Error>,
    ) -> PyResult<T> {
        let mut st = self.lock();
        match &mut *st {
            State::Closed => Err(closed()),
            State::Reader { .. } => Err(to_py(
                py,
                Error::ReadOnly {
                    path: self.path.clone(),
                    reason: "opened with readonly=True".into(),
                },
            )),
            State::Writer {
                generation,
                writer,
                reader,
                dirty,
            } => {
                if *generation != fork::generation() {
                    return Err(self.stale_writer(py));
                }
                let r = f(writer).py()?;
                *dirty = true;
                *reader = None;
                Ok(r)
            }
        }
    }

    fn len_now(&self) -> PyResult<u64> {
        match &*self.lock() {
            State::Closed => Err(closed()),
            State::Reader { records, .. } => Ok(records.len()),
            State::Writer { writer, .. } => Ok(writer.len()),
        }
    }

    fn record(&self, py: Python<'_>, r: &LibRecords, i: u64) -> PyResult<Record> {
        let check = self.check_crc;
        py.detach(|| if check { r.get_checked(i) } else { r.get(i) })
            .py()
    }
}

/// Bytes-like arguments (`bytes`, `bytearray`, `memoryview`, NumPy arrays of any
/// numeric type, ...): their bytes, as stored.
fn data_arg(data: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(b) = data.cast::<PyBytes>() {
        return Ok(b.as_bytes().to_vec());
    }
    let not_bytes = || {
        PyTypeError::new_err(format!(
            "a record must be bytes-like, not {}",
            data.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    };
    if let Ok(buf) = pyo3::buffer::PyBuffer::<u8>::get(data) {
        return buf.to_vec(data.py());
    }
    // Typed buffers (an array of float32, ...): their bytes, through a cast view.
    let view = pyo3::types::PyMemoryView::from(data).map_err(|_| not_bytes())?;
    let bytes = view.call_method1("cast", ("B",)).map_err(|_| not_bytes())?;
    pyo3::buffer::PyBuffer::<u8>::get(&bytes)
        .map_err(|_| not_bytes())?
        .to_vec(data.py())
}

#[pymethods]
impl Records {
    #[new]
    #[pyo3(signature = (path, readonly=true, *, create=false, overwrite=false, compress="none",
                        dtype="bytes", chunk_records=None, chunk_bytes=None, writers=1,
                        check_crc=false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        readonly: bool,
        create: bool,
        overwrite: bool,
        compress: &str,
        dtype: &str,
        chunk_records: Option<u64>,
        chunk_bytes: Option<&Bound<'_, PyAny>>,
        writers: usize,
        check_crc: bool,
    ) -> PyResult<Records> {
        fork::install();
        if let Some(s) = path.to_str() {
            if s.contains("://") {
                return Err(PyValueError::new_err(format!(
                    "{s}: Records reads local datasets and archives"
                )));
            }
        }
        let state = if readonly {
            if create || overwrite {
                return Err(PyValueError::new_err(
                    "create and overwrite need readonly=False",
                ));
            }
            State::Reader {
                generation: fork::generation(),
                records: py.detach(|| LibRecords::open(&path)).py()?,
            }
        } else {
            let exists = barecat::records::is_dataset(&path);
            let writer = if create && (overwrite || !exists) {
                let mut opts = DatasetOptions {
                    dtype: dtype_arg(dtype)?,
                    compress: compress_arg(compress)?,
                    writers,
                    ..DatasetOptions::default()
                };
                if let Some(n) = chunk_records {
                    opts.chunk_records = n;
                }
                if let Some(b) = crate::archive::size_arg(chunk_bytes)? {
                    opts.chunk_bytes = b;
                }
                py.detach(|| RecordWriter::create(&path, &opts, overwrite))
                    .py()?
            } else if exists {
                py.detach(|| RecordWriter::open(&path, writers)).py()?
            } else if barecat::Layout::exists(&path).unwrap_or(false) {
                return Err(to_py(
                    py,
                    Error::ReadOnly {
                        path: path.clone(),
                        reason: "the record table of an archive is read-only (write the \
                                 archive, then `barecat-records build` it again)"
                            .into(),
                    },
                ));
            } else {
                return Err(pyo3::exceptions::PyFileNotFoundError::new_err(format!(
                    "{}: no such dataset (pass create=True to make one)",
                    path.display()
                )));
            };
            State::Writer {
                generation: fork::generation(),
                writer: Box::new(writer),
                reader: None,
                dirty: false,
            }
        };
        Ok(Records {
            path,
            readonly,
            check_crc,
            state: Mutex::new(state),
        })
    }

    /// The path the dataset (or archive) was opened with.
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    #[getter]
    fn readonly(&self) -> bool {
        self.readonly
    }

    #[getter]
    fn closed(&self) -> bool {
        matches!(*self.lock(), State::Closed)
    }

    /// The element type label of the records (`bytes`, `u8`, `f32`, ...).
    #[getter]
    fn dtype(&self) -> PyResult<&'static str> {
        Ok(match &*self.lock() {
            State::Closed => return Err(closed()),
            State::Writer { writer, .. } => writer.meta().dtype.name(),
            State::Reader { records, .. } => records.dtype().name(),
        })
    }

    /// The per-record compression (`none`, `zstd` or `flate`).
    #[getter]
    fn compress(&self) -> PyResult<&'static str> {
        Ok(match &*self.lock() {
            State::Closed => return Err(closed()),
            State::Writer { writer, .. } => writer.meta().compress.name(),
            State::Reader { records, .. } => records.compress().name(),
        })
    }

    fn __len__(&self) -> PyResult<usize> {
        Ok(self.len_now()? as usize)
    }

    /// Record `i` as `bytes` (a copy; negative indices count from the end).
    fn __getitem__<'py>(&self, py: Python<'py>, i: i64) -> PyResult<Bound<'py, PyBytes>> {
        let r = self.reader(py)?;
        let i = resolve_index(i, r.len())?;
        let rec = self.record(py, &r, i)?;
        Ok(PyBytes::new(py, &rec))
    }

    /// Record `i` as a read-only buffer over the mapped chunk (no copy when the
    /// dataset is uncompressed); wrap it in `memoryview` or `numpy.frombuffer`.
    fn view(&self, py: Python<'_>, i: i64) -> PyResult<MappedBytes> {
        let r = self.reader(py)?;
        let i = resolve_index(i, r.len())?;
        Ok(MappedBytes::record(self.record(py, &r, i)?))
    }

    /// The records at `indices`, in request order (duplicates allowed), as a list of
    /// memoryviews: slices of the mapped chunks when uncompressed (zero copy),
    /// buffers of their own when compressed. The work runs on `threads` threads
    /// (0: one per core) with the GIL released.
    #[pyo3(signature = (indices, *, threads=0, check_crc=None))]
    fn gather<'py>(
        &self,
        py: Python<'py>,
        indices: &Bound<'py, PyAny>,
        threads: usize,
        check_crc: Option<bool>,
    ) -> PyResult<Bound<'py, PyList>> {
        let r = self.reader(py)?;
        let len = r.len();
        let raw: Vec<i64> = match indices.extract::<Vec<i64>>() {
            Ok(v) => v,
            Err(_) => indices
                .try_iter()?
                .map(|x| x?.extract::<i64>())
                .collect::<PyResult<_>>()?,
        };
        let idx: Vec<u64> = raw
            .into_iter()
            .map(|i| resolve_index(i, len))
            .collect::<PyResult<_>>()?;
        let opts = GatherOptions {
            threads,
            prefetch: true,
            verify_crc: check_crc.unwrap_or(self.check_crc),
        };
        let pool = fork::pool(if threads == 0 {
            std::thread::available_parallelism().map_or(2, |n| n.get())
        } else {
            threads
        })?;
        let batch = py
            .detach(|| pool.install(|| r.gather_with(&idx, &opts)))
            .py()?;
        // One memoryview per backing (a chunk map or a decompressed buffer), and
        // each record a slice of it: a slice shares its base's buffer, so a record
        // costs one small object, not an exporter and a buffer request of its own.
        let backings = batch.backings();
        let mut bases: Vec<Option<Bound<'py, PyAny>>> = vec![None; backings.len()];
        let empty = pyo3::types::PyMemoryView::from(&PyBytes::new(py, b"").into_any())?;
        let views = PyList::empty(py);
        for k in 0..batch.len() {
            let Some((b, start, len)) = batch.location(k) else {
                views.append(&empty)?;
                continue;
            };
            let base = match &bases[b] {
                Some(v) => v.clone(),
                None => {
                    let exporter = Bound::new(py, MappedBytes::record(backings[b].clone()))?;
                    let v = pyo3::types::PyMemoryView::from(&exporter.into_any())?.into_any();
                    bases[b] = Some(v.clone());
                    v
                }
            };
            // SAFETY: `base` is a valid memoryview; the bounds lie inside it (the
            // batch computed them from the same backing).
            let view = unsafe {
                Bound::from_owned_ptr_or_err(
                    py,
                    pyo3::ffi::PySequence_GetSlice(
                        base.as_ptr(),
                        start as pyo3::ffi::Py_ssize_t,
                        (start + len) as pyo3::ffi::Py_ssize_t,
                    ),
                )?
            };
            views.append(view)?;
        }
        Ok(views)
    }

    /// Append one record; returns its index.
    fn append(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<u64> {
        let data = data_arg(data)?;
        self.with_writer(py, move |w| w.append(&data))
    }

    /// Append every record of an iterable; returns the index of the first.
    fn extend(&self, py: Python<'_>, records: &Bound<'_, PyAny>) -> PyResult<u64> {
        let all: Vec<Vec<u8>> = records
            .try_iter()?
            .map(|x| data_arg(&x?))
            .collect::<PyResult<_>>()?;
        self.with_writer(py, move |w| {
            let first = w.len();
            w.append_batch(&all)?;
            Ok(first)
        })
    }

    /// Replace record `i` (the new bytes are appended; the old become garbage
    /// until `barecat-records rebalance`).
    fn modify(&self, py: Python<'_>, i: i64, data: &Bound<'_, PyAny>) -> PyResult<()> {
        let i = resolve_index(i, self.len_now()?)?;
        let data = data_arg(data)?;
        self.with_writer(py, move |w| w.modify(i, &data))
    }

    fn __setitem__(&self, py: Python<'_>, i: i64, data: &Bound<'_, PyAny>) -> PyResult<()> {
        self.modify(py, i, data)
    }

    /// Delete record `i`: the last record takes its place and the length shrinks by
    /// one (indices are not stable under delete).
    fn delete(&self, py: Python<'_>, i: i64) -> PyResult<()> {
        let i = resolve_index(i, self.len_now()?)?;
        self.with_writer(py, move |w| w.delete(i))
    }

    fn __delitem__(&self, py: Python<'_>, i: i64) -> PyResult<()> {
        self.delete(py, i)
    }

    /// Make every change so far durable.
    fn commit(&self, py: Python<'_>) -> PyResult<()> {
        let mut st = self.lock();
        match &mut *st {
            State::Closed => Err(closed()),
            State::Reader { .. } => Ok(()),
            State::Writer {
                generation,
                writer,
                reader,
                dirty,
            } => {
                if *generation != fork::generation() {
                    return Err(self.stale_writer(py));
                }
                writer.commit().py()?;
                *dirty = false;
                *reader = None;
                Ok(())
            }
        }
    }

    /// Commit (for a writer) and release the dataset. Buffers handed out stay valid.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let old = std::mem::replace(&mut *self.lock(), State::Closed);
        match old {
            State::Writer {
                generation, writer, ..
            } => {
                if generation != fork::generation() {
                    std::mem::forget(writer);
                    return Ok(());
                }
                let _ = py;
                writer.finish().py()?;
                Ok(())
            }
            State::Reader {
                generation,
                records,
            } => {
                if generation != fork::generation() {
                    std::mem::forget(records);
                }
                Ok(())
            }
            State::Closed => Ok(()),
        }
    }

    fn _reopen_args(&self) -> PyResult<(PathBuf, bool)> {
        if !self.readonly {
            return Err(PyTypeError::new_err(
                "a Records writer cannot be pickled (open it read-only in the workers)",
            ));
        }
        Ok((self.path.clone(), self.check_crc))
    }

    fn __repr__(&self) -> String {
        let what = match &*self.lock() {
            State::Closed => "closed".to_string(),
            State::Reader { records, .. } => format!("{} records", records.len()),
            State::Writer { writer, .. } => format!("{} records, writable", writer.len()),
        };
        format!(
            "barecat_rs.Records({:?}, {what})",
            self.path.display().to_string()
        )
    }
}

impl Drop for Records {
    fn drop(&mut self) {
        let st = std::mem::replace(
            self.state.get_mut().unwrap_or_else(|e| e.into_inner()),
            State::Closed,
        );
        match st {
            // Not closed: commit what was written, as `close` would.
            State::Writer {
                generation, writer, ..
            } if generation == fork::generation() => {
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
