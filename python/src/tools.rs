//! Archive-level functions: joining part archives (`merge_symlink`, `merge`), as
//! the scale-out ingest recipe (examples/dask_ingest.py) does after each worker
//! wrote its own part, and the checksum the format uses.

use std::path::PathBuf;

use barecat::core::progress::Progress;
use barecat::ingest::Duplicates;
use barecat::maint::merge::{MergeOptions, OutputMode};
use barecat::maint::merge_symlink::SymlinkMergeOptions;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::errors::PyResultExt;

/// A report of counts (what the commands print with `--json`) as a dict.
fn report_dict<'py>(
    py: Python<'py>,
    report: &impl serde::Serialize,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    if let Ok(serde_json::Value::Object(fields)) = serde_json::to_value(report) {
        for (k, v) in fields {
            d.set_item(k, v.as_u64())?;
        }
    }
    Ok(d)
}

/// Join archives into `output` without copying data: the output's shards are
/// symbolic links to the inputs' shards (which must then stay where they are and
/// must not be modified). Each input's files go below `prefix` and, with
/// `as_subdirs`, a directory named after the input. Returns a dict of counts.
#[pyfunction]
#[pyo3(signature = (output, inputs, overwrite=false, ignore_duplicates=false, prefix=None,
                    as_subdirs=false))]
pub fn merge_symlink<'py>(
    py: Python<'py>,
    output: PathBuf,
    inputs: Vec<PathBuf>,
    overwrite: bool,
    ignore_duplicates: bool,
    prefix: Option<String>,
    as_subdirs: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let opts = SymlinkMergeOptions {
        overwrite,
        ignore_duplicates,
        sidecar: true,
        prefix: prefix.filter(|p| !p.is_empty()),
        as_subdirs,
    };
    let r = py
        .detach(|| barecat::maint::merge_symlink::merge_symlink(&output, &inputs, &opts))
        .py()?;
    report_dict(py, &r)
}

/// Copy archives (or tar and zip files) into `output`. `append=True` adds to an
/// existing output. Several files with one path fail the merge unless
/// `duplicates` is `'first'` or `'last'` (`ignore_duplicates=True` is `'first'`).
/// Returns a dict of counts.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (output, inputs, overwrite=false, append=false, ignore_duplicates=false,
                    shard_size_limit=None, duplicates=None))]
pub fn merge<'py>(
    py: Python<'py>,
    output: PathBuf,
    inputs: Vec<PathBuf>,
    overwrite: bool,
    append: bool,
    ignore_duplicates: bool,
    shard_size_limit: Option<&Bound<'py, PyAny>>,
    duplicates: Option<&str>,
) -> PyResult<Bound<'py, PyDict>> {
    let duplicates = match (duplicates, ignore_duplicates) {
        (Some("first"), _) | (None, true) => Duplicates::First,
        (Some("last"), _) => Duplicates::Last,
        (Some("error"), _) | (None, false) => Duplicates::Error,
        (Some(other), _) => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "duplicates must be 'first', 'last' or 'error', not {other:?}"
            )))
        }
    };
    let opts = MergeOptions {
        index_mode: Default::default(),
        output_mode: if append {
            OutputMode::Append
        } else if overwrite {
            OutputMode::Overwrite
        } else {
            OutputMode::New
        },
        shard_size_limit: crate::archive::size_arg(shard_size_limit)?,
        duplicates,
        crash_after_steps: None,
        sidecar: true,
        ..MergeOptions::default()
    };
    let r = py
        .detach(|| barecat::maint::merge::merge(&output, &inputs, &opts, &Progress::hidden()))
        .py()?;
    report_dict(py, &r)
}

/// The completion script of the `barecat` command for `shell` (`bash`, `zsh`,
/// `fish`), generated from its command definitions; `None` for another shell.
#[pyfunction]
pub fn completion_script<'py>(py: Python<'py>, shell: &str) -> Option<Bound<'py, PyBytes>> {
    barecat::completion_script(shell, "barecat").map(|s| PyBytes::new(py, &s))
}

/// CRC-32C (Castagnoli) of a bytes-like object, as stored in the index.
#[pyfunction]
pub fn crc32c(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<u32> {
    crate::archive::with_bytes(data, |b| Ok(py.detach(|| barecat::core::crc::crc32c(b))))
}

/// Requests, bytes and retries of remote reads made by this process so far, per
/// kind of object: `{"index": {"requests": 2, "bytes": 65536, "retries": 0}, ...}`
/// (what the commands print with `--stats`).
#[pyfunction]
pub fn remote_stats<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
    let s = barecat::core::remote::stats();
    let d = PyDict::new(py);
    for k in barecat::core::remote::RequestKind::ALL {
        d.set_item(k.name(), report_dict(py, &s.get(k))?)?;
    }
    Ok(d)
}
