//! The native half of the Python package `barecat_rs` (the pure-Python half is
//! `python/barecat_rs`): the barecat library's reader and writer behind an API that
//! mirrors Python barecat's, for data loaders that read by path in a tight loop.
//!
//! Why native: every lookup, read and CRC check runs in Rust with the GIL released,
//! so reader threads run in parallel; `read_many` runs a whole batch on a pool of our
//! own threads, and its zero-copy form hands out views of the shards' memory maps.
//!
//! Module map: [`archive`] is the archive object (reading and writing), [`source`]
//! the one place that turns what the user passed into an open archive, [`fork`] what
//! keeps objects usable after `fork`, [`errors`] the mapping of library errors to
//! Python exceptions, [`info`] the file and directory info objects, [`mapped`] the
//! zero-copy buffers, [`records`] records by integer index, [`tools`] the archive-level functions (merge).

use pyo3::prelude::*;

mod archive;
mod errors;
mod fork;
mod info;
mod mapped;
mod records;
mod source;
mod tools;

/// A Rust panic, for the tests that check it becomes a Python exception (on the
/// calling thread, or on a thread of the read pool) instead of an abort.
#[pyfunction]
#[pyo3(signature = (in_pool=false))]
fn _panic_for_tests(py: Python<'_>, in_pool: bool) -> PyResult<()> {
    if in_pool {
        let pool = fork::pool(2)?;
        py.detach(|| pool.install(|| panic!("deliberate panic in the read pool")));
    }
    panic!("deliberate panic")
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    fork::install();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<archive::Archive>()?;
    m.add_class::<archive::PageCursor>()?;
    m.add_class::<info::FileInfo>()?;
    m.add_class::<info::DirInfo>()?;
    m.add_class::<mapped::MappedBytes>()?;
    m.add_class::<records::Records>()?;
    m.add_function(wrap_pyfunction!(tools::merge, m)?)?;
    m.add_function(wrap_pyfunction!(tools::merge_symlink, m)?)?;
    m.add_function(wrap_pyfunction!(tools::crc32c, m)?)?;
    m.add_function(wrap_pyfunction!(tools::completion_script, m)?)?;
    m.add_function(wrap_pyfunction!(tools::remote_stats, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_tests, m)?)?;
    archive::pyindex::register(m)?;
    Ok(())
}
