//! Library errors as Python exceptions.
//!
//! The message is always the library's one-line message (what the commands print).
//! The class follows Python barecat's exceptions (`barecat_rs.exceptions` defines
//! them, each also deriving from the matching built-in: `FileNotFoundError`,
//! `ValueError`, ...), so code written against Python barecat catches them
//! unchanged. File-system errors become `OSError`s with their errno.

use barecat::Error;
use pyo3::exceptions::{PyKeyError, PyKeyboardInterrupt, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

/// The Python exception class of `barecat_rs.exceptions` named `name`.
fn class<'py>(py: Python<'py>, name: &'static str) -> PyResult<Bound<'py, PyType>> {
    static MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    let m = MODULE.get_or_try_init(py, || {
        Ok::<_, PyErr>(py.import("barecat_rs.exceptions")?.unbind())
    })?;
    Ok(m.bind(py).getattr(name)?.cast_into::<PyType>()?)
}

fn class_name(e: &Error) -> &'static str {
    match e {
        Error::NotFound(_) | Error::ArchiveNotFound { .. } => "FileNotFoundBarecatError",
        Error::FileExists(_) | Error::ArchiveExists { .. } => "FileExistsBarecatError",
        Error::IsADirectory(_) => "IsADirectoryBarecatError",
        Error::NotADirectory(_) => "NotADirectoryBarecatError",
        Error::DirectoryNotEmpty(_) => "DirectoryNotEmptyBarecatError",
        Error::CrcMismatch { .. }
        | Error::BadExtent { .. }
        | Error::MissingShard { .. }
        | Error::CorruptIndex { .. } => "BarecatIntegrityError",
        Error::InvalidPath { .. }
        | Error::InvalidOperation(_)
        | Error::InvalidSize(_)
        | Error::InvalidPattern { .. }
        | Error::NotAnArchive { .. }
        | Error::UnsupportedSchema { .. }
        | Error::UnsupportedInput { .. }
        | Error::DuplicatePath { .. } => "BarecatValueError",
        Error::ReadOnly { .. } | Error::SymlinkedShard { .. } | Error::Refused { .. } => {
            "BarecatPermissionError"
        }
        Error::Locked { .. } => "BarecatLockedError",
        _ => "BarecatError",
    }
}

/// The Python exception for a library error.
pub fn to_py(py: Python<'_>, e: Error) -> PyErr {
    let msg = e.to_string();
    match &e {
        Error::Interrupted => return PyKeyboardInterrupt::new_err(msg),
        Error::Io { source, .. } | Error::Output { source } => {
            return match source.raw_os_error() {
                // OSError(errno, text) becomes the matching subclass (FileNotFoundError, ...).
                Some(errno) => PyOSError::new_err((errno, msg)),
                None => PyOSError::new_err(msg),
            };
        }
        _ => {}
    }
    match class(py, class_name(&e)) {
        Ok(cls) => PyErr::from_type(cls, msg),
        Err(err) => err,
    }
}

/// `?` for library results inside functions that return `PyResult`.
pub trait PyResultExt<T> {
    fn py(self) -> PyResult<T>;
}

impl<T> PyResultExt<T> for Result<T, Error> {
    fn py(self) -> PyResult<T> {
        self.map_err(|e| Python::attach(|py| to_py(py, e)))
    }
}

/// The error of the dict interface for a path that is not a file: `KeyError(path)`,
/// as Python barecat raises it; other errors as [`to_py`].
pub fn key_error(py: Python<'_>, e: Error) -> PyErr {
    match e {
        Error::NotFound(p) | Error::IsADirectory(p) => PyKeyError::new_err(p),
        e => to_py(py, e),
    }
}

/// Any use of an archive after `close()`.
pub fn closed() -> PyErr {
    PyValueError::new_err("I/O operation on a closed barecat archive")
}

/// An exception of class `name` of `barecat_rs.exceptions` with message `msg`.
pub fn new_err(py: Python<'_>, name: &'static str, msg: String) -> PyErr {
    match class(py, name) {
        Ok(cls) => PyErr::from_type(cls, msg),
        Err(err) => err,
    }
}
