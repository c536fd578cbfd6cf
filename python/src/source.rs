//! What `Barecat(path_or_url)` opens: the one place that turns the user's argument
//! into an archive to read.
//!
//! A local path (a `str` or an `os.PathLike`), or the URL of a remote archive
//! (`s3://bucket/prefix/name`, `http(s)://host/path/name`), which the library reads
//! by ranged requests (`barecat::core::remote`). Every method of the archive object
//! (which only sees a [`barecat::Archive`]) works unchanged on both; a remote
//! archive is read-only.

use std::path::PathBuf;

use barecat::core::location::{is_url, Location};
use barecat::{Archive, Error, Result};
use pyo3::prelude::*;

/// What `Barecat(...)` was given: the archive's [`Location`], and the path or URL
/// to show for it.
#[derive(Debug, Clone)]
pub struct Source {
    /// The path as given (a `file://` URL decoded into its path), or the URL of a
    /// remote archive as given.
    path: PathBuf,
    location: Location,
}

impl Source {
    /// Parse the first argument of `Barecat(...)`. Malformed URLs and unknown
    /// schemes are refused here, before anything is opened.
    pub fn from_py(obj: &Bound<'_, PyAny>) -> PyResult<Source> {
        let path: PathBuf = obj.extract()?;
        if !is_url(&path) {
            return Ok(Source {
                location: Location::Local(path.clone()),
                path,
            });
        }
        match Location::parse_path(&path) {
            Ok(Location::Local(p)) => Ok(Source {
                path: p.clone(),
                location: Location::Local(p),
            }),
            Ok(location) => Ok(Source { path, location }),
            Err(e) => Err(pyo3::exceptions::PyValueError::new_err(e.to_string())),
        }
    }

    /// The path or URL as the user gave it (for `repr`, pickling and messages).
    pub fn path(&self) -> &PathBuf {
        &self.path
    }

    /// The path as a Python object: a `Path` for a local archive, a `str` for a URL.
    pub fn to_py<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        if self.location.is_remote() {
            Ok(self.path.to_string_lossy().into_pyobject(py)?.into_any())
        } else {
            Ok(self.path.clone().into_pyobject(py)?.into_any())
        }
    }

    /// Open the archive for reading.
    pub fn open(&self) -> Result<Archive> {
        Archive::open(self.path())
    }

    /// The local path to open for writing (a remote archive cannot be written).
    pub fn local_for_writing(&self) -> Result<&PathBuf> {
        if self.location.is_remote() {
            return Err(Error::ReadOnly {
                path: self.path.clone(),
                reason: "writing to remote storage is not supported (open it with readonly=True)"
                    .into(),
            });
        }
        Ok(&self.path)
    }
}
