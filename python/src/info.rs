//! File and directory info objects, with the attribute names of Python barecat's
//! `BarecatFileInfo` and `BarecatDirInfo`. They are plain values: creating one
//! (to pass metadata to `add`) touches no archive, and they pickle.

use barecat::{DirInfo as LibDir, FileInfo as LibFile, Meta};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

fn mtime_dt<'py>(py: Python<'py>, ns: Option<i64>) -> PyResult<Option<Bound<'py, PyAny>>> {
    let Some(ns) = ns else { return Ok(None) };
    let dt = py.import("datetime")?;
    let tz = dt.getattr("timezone")?.getattr("utc")?;
    let t = dt
        .getattr("datetime")?
        .call_method1("fromtimestamp", (ns as f64 / 1e9, tz))?;
    Ok(Some(t))
}

/// Field names and values of an info object, in constructor order.
type Fields<'py> = Vec<(&'static str, Bound<'py, PyAny>)>;

fn asdict<'py>(py: Python<'py>, fields: Fields<'py>) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in fields {
        d.set_item(k, v)?;
    }
    Ok(d)
}

fn repr(class: &str, fields: Fields<'_>) -> PyResult<String> {
    let parts = fields
        .iter()
        .map(|(k, v)| Ok(format!("{k}={}", v.repr()?)))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(format!("{class}({})", parts.join(", ")))
}

/// `__reduce__`: the class and its constructor arguments.
fn reduce<'py>(
    obj: &Bound<'py, PyAny>,
    fields: Fields<'py>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
    let args = PyTuple::new(obj.py(), fields.into_iter().map(|(_, v)| v))?;
    Ok((obj.get_type().into_any(), args))
}

/// `(name, value)` pairs of fields, for [`Fields`].
macro_rules! fields {
    ($py:expr, $self:expr, $($f:ident),+) => {
        Ok(vec![$((stringify!($f), $self.$f.clone().into_pyobject($py)?.into_any())),+])
    };
}

/// A file of an archive: where its bytes are and its metadata. Fields are `None`
/// where unknown (a file not added yet, a NULL column).
#[pyclass(
    name = "BarecatFileInfo",
    module = "barecat_rs",
    get_all,
    set_all,
    eq,
    from_py_object
)]
#[derive(Clone, Debug, PartialEq, Default)]
pub struct FileInfo {
    pub path: String,
    pub shard: Option<u64>,
    pub offset: Option<u64>,
    pub size: Option<u64>,
    pub crc32c: Option<u32>,
    pub mode: Option<u32>,
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    pub mtime_ns: Option<i64>,
}

impl From<LibFile> for FileInfo {
    fn from(f: LibFile) -> FileInfo {
        FileInfo {
            path: f.path,
            shard: Some(f.shard),
            offset: Some(f.offset),
            size: Some(f.size),
            crc32c: f.crc32c,
            mode: f.meta.mode,
            uid: f.meta.uid,
            gid: f.meta.gid,
            mtime_ns: f.meta.mtime_ns,
        }
    }
}

impl FileInfo {
    fn fields<'py>(&self, py: Python<'py>) -> PyResult<Fields<'py>> {
        fields!(py, self, path, shard, offset, size, crc32c, mode, uid, gid, mtime_ns)
    }

    pub fn meta(&self) -> Meta {
        Meta {
            mode: self.mode,
            uid: self.uid,
            gid: self.gid,
            mtime_ns: self.mtime_ns,
        }
    }

    /// The row this object describes, when it has a full address.
    pub fn to_lib(&self) -> Option<LibFile> {
        Some(LibFile {
            path: self.path.clone(),
            shard: self.shard?,
            offset: self.offset?,
            size: self.size?,
            crc32c: self.crc32c,
            meta: self.meta(),
        })
    }
}

#[pymethods]
impl FileInfo {
    #[new]
    #[pyo3(signature = (path=String::new(), shard=None, offset=None, size=None, crc32c=None,
                        mode=None, uid=None, gid=None, mtime_ns=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        path: String,
        shard: Option<u64>,
        offset: Option<u64>,
        size: Option<u64>,
        crc32c: Option<u32>,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        mtime_ns: Option<i64>,
    ) -> FileInfo {
        FileInfo {
            path,
            shard,
            offset,
            size,
            crc32c,
            mode,
            uid,
            gid,
            mtime_ns,
        }
    }

    /// One past the last byte of the file in its shard.
    #[getter]
    fn end(&self) -> Option<u64> {
        Some(self.offset? + self.size?)
    }

    #[getter]
    fn mtime_dt<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        mtime_dt(py, self.mtime_ns)
    }

    fn isfile(&self) -> bool {
        true
    }

    fn isdir(&self) -> bool {
        false
    }

    fn asdict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        asdict(py, self.fields(py)?)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        repr("BarecatFileInfo", self.fields(py)?)
    }

    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        reduce(slf.as_any(), slf.borrow().fields(slf.py())?)
    }
}

/// A directory of an archive, with its subtree statistics.
#[pyclass(
    name = "BarecatDirInfo",
    module = "barecat_rs",
    get_all,
    set_all,
    eq,
    from_py_object
)]
#[derive(Clone, Debug, PartialEq, Default)]
pub struct DirInfo {
    pub path: String,
    pub num_subdirs: Option<i64>,
    pub num_files: Option<i64>,
    pub num_files_tree: Option<i64>,
    pub size_tree: Option<i64>,
    pub mode: Option<u32>,
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    pub mtime_ns: Option<i64>,
}

impl From<LibDir> for DirInfo {
    fn from(d: LibDir) -> DirInfo {
        DirInfo {
            path: d.path,
            num_subdirs: Some(d.num_subdirs),
            num_files: Some(d.num_files),
            num_files_tree: Some(d.num_files_tree),
            size_tree: Some(d.size_tree),
            mode: d.meta.mode,
            uid: d.meta.uid,
            gid: d.meta.gid,
            mtime_ns: d.meta.mtime_ns,
        }
    }
}

impl DirInfo {
    fn fields<'py>(&self, py: Python<'py>) -> PyResult<Fields<'py>> {
        fields!(
            py,
            self,
            path,
            num_subdirs,
            num_files,
            num_files_tree,
            size_tree,
            mode,
            uid,
            gid,
            mtime_ns
        )
    }

    pub fn meta(&self) -> Meta {
        Meta {
            mode: self.mode,
            uid: self.uid,
            gid: self.gid,
            mtime_ns: self.mtime_ns,
        }
    }
}

#[pymethods]
impl DirInfo {
    #[new]
    #[pyo3(signature = (path=String::new(), num_subdirs=None, num_files=None,
                        num_files_tree=None, size_tree=None, mode=None, uid=None, gid=None,
                        mtime_ns=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        path: String,
        num_subdirs: Option<i64>,
        num_files: Option<i64>,
        num_files_tree: Option<i64>,
        size_tree: Option<i64>,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        mtime_ns: Option<i64>,
    ) -> DirInfo {
        DirInfo {
            path,
            num_subdirs,
            num_files,
            num_files_tree,
            size_tree,
            mode,
            uid,
            gid,
            mtime_ns,
        }
    }

    /// Entries directly inside: subdirectories plus files.
    #[getter]
    fn num_entries(&self) -> i64 {
        self.num_subdirs.unwrap_or(0) + self.num_files.unwrap_or(0)
    }

    #[getter]
    fn mtime_dt<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        mtime_dt(py, self.mtime_ns)
    }

    fn isfile(&self) -> bool {
        false
    }

    fn isdir(&self) -> bool {
        true
    }

    fn asdict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        asdict(py, self.fields(py)?)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        repr("BarecatDirInfo", self.fields(py)?)
    }

    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        reduce(slf.as_any(), slf.borrow().fields(slf.py())?)
    }
}
