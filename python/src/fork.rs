//! Objects created before `fork` (a DataLoader's workers) keep working in the child.
//!
//! The mechanism is the library's ([`barecat::core::fork`]): SQLite's mutexes are free at
//! every fork, and every lock, connection, thread and client of the library belongs
//! to the process generation that made it. Here the objects of this module
//! remember the generation they were opened in: in a later one a reader is opened
//! anew (the inherited one leaked, untouched) and a writer refuses to work.

use std::sync::Arc;

use pyo3::exceptions::PyRuntimeError;
use pyo3::PyResult;
use rayon::ThreadPool;

pub use barecat::core::fork::{generation, install};

/// The read pool of `threads` threads of this process (created on first use).
pub fn pool(threads: usize) -> PyResult<Arc<ThreadPool>> {
    barecat::core::fork::pool(threads).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}
