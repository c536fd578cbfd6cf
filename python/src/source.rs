//! What `Barecat(path_or_url)` opens: the one place that turns the user's argument
//! into an archive to read.
//!
//! A local path (a `str` or an `os.PathLike`), or the URL of a remote archive
//! (`s3://bucket/prefix/name`, `http(s)://host/path/name`), which the library reads
//! by ranged requests (`barecat::core::remote`). Every method of the archive object
//! (which only sees a [`barecat::Archive`]) works unchanged on both; a remote
//! archive is read-only.

use std::path::PathBuf;

use barecat::{Archive, Error, Result};
use pyo3::prelude::*;

/// Where an archive lives.
#[derive(Debug, Clone)]
pub enum Source {
    Local(PathBuf),
    /// A URL, kept as given (as a path, for `repr`, pickling and messages).
    Remote(PathBuf),
}

impl Source {
    /// Parse the first argument of `Barecat(...)`. Malformed URLs and unknown
    /// schemes are refused here, before anything is opened.
    pub fn from_py(obj: &Bound<'_, PyAny>) -> PyResult<Source> {
        let path: PathBuf = obj.extract()?;
        if barecat::core::location::is_url(&path) {
            return match barecat::core::location::Location::parse(path.as_os_str()) {
                Ok(barecat::core::location::Location::Local(p)) => Ok(Source::Local(p)),
                Ok(barecat::core::location::Location::Remote(_)) => Ok(Source::Remote(path)),
                Err(e) => Err(pyo3::exceptions::PyValueError::new_err(e.to_string())),
            };
        }
        Ok(Source::Local(path))
    }

    /// The path or URL as the user gave it (for `repr`, pickling and messages).
    pub fn path(&self) -> &PathBuf {
        match self {
            Source::Local(p) | Source::Remote(p) => p,
        }
    }

    /// The path as a Python object: a `Path` for a local archive, a `str` for a URL.
    pub fn to_py<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self {
            Source::Local(p) => Ok(p.clone().into_pyobject(py)?.into_any()),
            Source::Remote(p) => Ok(p.to_string_lossy().into_pyobject(py)?.into_any()),
        }
    }

    /// Open the archive for reading.
    pub fn open(&self) -> Result<Archive> {
        Archive::open(self.path())
    }

    /// The local path to open for writing (a remote archive cannot be written).
    pub fn local_for_writing(&self) -> Result<&PathBuf> {
        match self {
            Source::Local(p) => Ok(p),
            Source::Remote(p) => Err(Error::ReadOnly {
                path: p.clone(),
                reason: "writing to remote storage is not supported (open it with readonly=True)"
                    .into(),
            }),
        }
    }
}
