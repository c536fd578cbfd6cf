//! Objects created before `fork` (a DataLoader's workers) keep working in the child.
//!
//! A child must not touch what the parent's threads may have held at the moment of
//! the fork (a connection pool's lock, an SQLite connection in a transaction, a
//! thread pool whose threads do not exist in the child). So every process has a
//! generation number, bumped in the child by a `pthread_atfork` handler (no system
//! call per access, unlike comparing process ids); an archive object remembers the
//! generation it was opened in and, in a later one, leaks the inherited handles
//! without touching them and opens the archive anew. The read pools below are kept
//! per generation the same way.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once};

use pyo3::exceptions::PyRuntimeError;
use pyo3::PyResult;
use rayon::ThreadPool;

static GENERATION: AtomicU64 = AtomicU64::new(0);

extern "C" fn after_fork_in_child() {
    GENERATION.fetch_add(1, Ordering::SeqCst);
}

/// Register the fork handler (once per process image).
pub fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: registers a handler that only increments an atomic, which is
        // async-signal-safe as a fork handler must be.
        unsafe {
            libc::pthread_atfork(None, None, Some(after_fork_in_child));
        }
    });
}

/// The generation of this process: 0 in the process that loaded the module, one
/// more in each forked child than in its parent.
pub fn generation() -> u64 {
    GENERATION.load(Ordering::SeqCst)
}

struct Pools {
    generation: u64,
    by_size: HashMap<usize, Arc<ThreadPool>>,
}

/// Only locked with the GIL held and never across a release of it: so the thread
/// that forks (which holds the GIL) never leaves it locked in the child.
static POOLS: Mutex<Option<Pools>> = Mutex::new(None);

/// The read pool of `threads` threads of this process (created on first use).
pub fn pool(threads: usize) -> PyResult<Arc<ThreadPool>> {
    let now = generation();
    let mut guard = POOLS.lock().unwrap_or_else(|e| e.into_inner());
    if guard.as_ref().is_some_and(|p| p.generation != now) {
        // The parent's pools: their threads do not exist here. Leak them.
        if let Some(old) = guard.take() {
            std::mem::forget(old);
        }
    }
    let pools = guard.get_or_insert_with(|| Pools {
        generation: now,
        by_size: HashMap::new(),
    });
    if let Some(p) = pools.by_size.get(&threads) {
        return Ok(p.clone());
    }
    let p = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("barecat-read-{i}"))
        .build()
        .map_err(|e| {
            PyRuntimeError::new_err(format!("cannot start {threads} read threads: {e}"))
        })?;
    let p = Arc::new(p);
    pools.by_size.insert(threads, p.clone());
    Ok(p)
}
