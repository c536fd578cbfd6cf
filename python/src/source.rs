//! What `Barecat(path_or_url)` opens: the one place that turns the user's argument
//! into an archive to read.
//!
//! Today that is a local path (a `str` or an `os.PathLike`). This is the seam for
//! remote archives (`s3://`, `http(s)://`) and record stores: a new [`Source`]
//! variant and its opener here, and every method of the archive object (which only
//! sees a [`barecat::Archive`]) works unchanged.

use std::path::PathBuf;

use barecat::{Archive, Result};
use pyo3::prelude::*;

/// Where an archive lives.
#[derive(Debug, Clone)]
pub enum Source {
    Local(PathBuf),
}

impl Source {
    /// Parse the first argument of `Barecat(...)`.
    pub fn from_py(obj: &Bound<'_, PyAny>) -> PyResult<Source> {
        let path: PathBuf = obj.extract()?;
        if let Some(s) = path.to_str() {
            if let Some((scheme, _)) = s.split_once("://") {
                if !scheme.is_empty() && scheme.chars().all(|c| c.is_ascii_alphanumeric()) {
                    return Err(pyo3::exceptions::PyValueError::new_err(format!(
                        "{s}: {scheme}:// archives are not supported by this version of barecat_rs \
                         (local paths only)"
                    )));
                }
            }
        }
        Ok(Source::Local(path))
    }

    /// The path as the user gave it (for `repr`, pickling and messages).
    pub fn path(&self) -> &PathBuf {
        match self {
            Source::Local(p) => p,
        }
    }

    /// Open the archive for reading.
    pub fn open(&self) -> Result<Archive> {
        match self {
            Source::Local(p) => Archive::open(p),
        }
    }

    /// The local path to open for writing.
    pub fn local_for_writing(&self) -> Result<&PathBuf> {
        match self {
            Source::Local(p) => Ok(p),
        }
    }
}
