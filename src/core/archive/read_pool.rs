//! Read connections that keep their read transaction open for a few milliseconds.
//!
//! Why: a path lookup in SQLite's autocommit mode is its own read transaction, and
//! each one costs about nine system calls besides the data read (four `fcntl` locks,
//! `stat`s of the `-journal` and `-wal` files, a read of the header's change
//! counter) — more than the B-tree search and the data read together. Random reads
//! by path from a data loader, `cat -T` or the mount do little else.
//!
//! So a pooled connection keeps the read transaction it started for up to
//! [`HOLD`]: lookups within that window cost no system call at all. Correctness
//! is SQLite's own: in rollback-journal mode (every barecat index) a reader's shared
//! lock keeps writers from committing, so a snapshot held this way is always the
//! last committed state. Writers wait at most [`HOLD`] for it: a connection is
//! restarted when it is borrowed after [`HOLD`], and a small thread per pool ends the
//! transactions of connections that sit idle in the pool (a reader that stops
//! reading never blocks a writer; writers wait up to five seconds for a lock). The
//! thread starts with the second transaction handed back; the first is ended at
//! once, so that opening an archive for one lookup starts no thread.
//!
//! A pool is never used across `fork`: [`crate::Archive`] keeps it per process
//! generation ([`crate::core::fork`]), so a child opens connections of its own.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::core::error::Result;
use crate::core::index::Index;

/// The longest a pooled connection keeps one read transaction open.
pub const HOLD: Duration = Duration::from_millis(20);

/// A connection and the start of the read transaction it holds, if any.
struct Pooled {
    index: Index,
    since: Option<Instant>,
}

impl Pooled {
    fn begin(&mut self) {
        if self.index.begin().is_ok() {
            self.since = Some(Instant::now());
        }
    }

    /// End the read transaction (a read-only one has nothing to commit).
    fn end(&mut self) {
        self.index.end_read();
        self.since = None;
    }

    fn expired(&self, now: Instant) -> bool {
        self.since
            .is_some_and(|s| now.saturating_duration_since(s) >= HOLD)
    }
}

#[derive(Default)]
struct State {
    idle: Vec<Pooled>,
    /// The releasing thread runs.
    releaser: bool,
    /// A transaction was handed back before: the first one is ended at once
    /// instead (one lookup after opening, `len(bc)`, needs no thread; starting
    /// one cost more than the lookup).
    held_before: bool,
    /// It waits without a deadline: wake it when a transaction is handed back.
    releaser_asleep: bool,
    closed: bool,
}

/// Opens another connection of a pool (for indexes that are not local files).
pub type Opener = Box<dyn Fn() -> Result<Index> + Send + Sync>;

struct Shared {
    path: PathBuf,
    opener: Option<Opener>,
    state: Mutex<State>,
    wake: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A pool of read-only connections to one index. Dropping it ends every held
/// transaction and stops its thread.
pub struct ReadPool {
    shared: Arc<Shared>,
}

impl ReadPool {
    /// A pool that starts with `first` (the connection the archive was opened with).
    pub fn new(path: &Path, first: Index) -> ReadPool {
        let state = State {
            idle: vec![Pooled {
                index: first,
                since: None,
            }],
            ..State::default()
        };
        ReadPool {
            shared: Arc::new(Shared {
                path: path.to_path_buf(),
                opener: None,
                state: Mutex::new(state),
                wake: Condvar::new(),
            }),
        }
    }

    /// A pool that starts with `first` and opens further connections with
    /// `opener` (a remote index, [`crate::core::remote`]).
    pub fn with_opener(first: Index, opener: Opener) -> ReadPool {
        let state = State {
            idle: vec![Pooled {
                index: first,
                since: None,
            }],
            ..State::default()
        };
        ReadPool {
            shared: Arc::new(Shared {
                path: PathBuf::new(),
                opener: Some(opener),
                state: Mutex::new(state),
                wake: Condvar::new(),
            }),
        }
    }

    /// Run `f` with a connection of this thread's own, inside a read transaction
    /// that may have started up to [`HOLD`] ago.
    pub fn with<T>(&self, f: impl FnOnce(&Index) -> Result<T>) -> Result<T> {
        self.run(f, true)
    }

    /// Run `f`, which runs one statement, in the connection's held read
    /// transaction when it has one, else as SQLite's own autocommit statement
    /// (no `BEGIN` and `COMMIT` for a single lookup: `len(bc)` after opening).
    pub fn with_one_statement<T>(&self, f: impl FnOnce(&Index) -> Result<T>) -> Result<T> {
        self.run(f, false)
    }

    /// [`with`](Self::with) (`begin`: a transaction is started when none is held)
    /// and [`with_one_statement`](Self::with_one_statement).
    fn run<T>(&self, f: impl FnOnce(&Index) -> Result<T>, begin: bool) -> Result<T> {
        let mut p = self.take()?;
        if p.expired(Instant::now()) {
            p.end();
        }
        if begin && p.since.is_none() {
            p.begin();
        }
        let r = f(&p.index);
        if r.is_err() {
            // Whatever went wrong, the next use starts from a clean state.
            p.end();
        }
        self.give_back(p);
        r
    }

    /// Like [`with`](Self::with), but in a transaction that starts now: for
    /// re-checking a row after a failed read, whatever the journal mode.
    pub fn with_fresh<T>(&self, f: impl FnOnce(&Index) -> Result<T>) -> Result<T> {
        let mut p = self.take()?;
        p.end();
        p.begin();
        let r = f(&p.index);
        if r.is_err() {
            p.end();
        }
        self.give_back(p);
        r
    }

    fn take(&self) -> Result<Pooled> {
        let pooled = self.shared.lock().idle.pop();
        match pooled {
            Some(p) => Ok(p),
            None => Ok(Pooled {
                index: match &self.shared.opener {
                    Some(open) => open()?,
                    None => Index::open_read(&self.shared.path)?,
                },
                since: None,
            }),
        }
    }

    fn give_back(&self, mut p: Pooled) {
        if p.expired(Instant::now()) {
            p.end(); // a long query: its transaction is old already
        }
        let mut st = self.shared.lock();
        if st.closed {
            p.end();
            return;
        }
        if p.since.is_some() {
            if !st.releaser && !st.held_before {
                st.held_before = true;
                p.end();
            } else if !st.releaser {
                let shared = Arc::clone(&self.shared);
                let spawned = std::thread::Builder::new()
                    .name("barecat-release".into())
                    .spawn(move || release_loop(&shared))
                    .is_ok();
                if !spawned {
                    // No thread to end it later: no transaction outlives its use.
                    p.end();
                }
                st.releaser = spawned;
            } else if st.releaser_asleep {
                st.releaser_asleep = false;
                self.shared.wake.notify_one();
            }
        }
        st.idle.push(p);
    }
}

impl Drop for ReadPool {
    fn drop(&mut self) {
        let mut st = self.shared.lock();
        st.closed = true;
        for p in &mut st.idle {
            p.end();
        }
        self.shared.wake.notify_one();
    }
}

/// End the transactions of idle connections once they are [`HOLD`] old; sleep until
/// the next one is due, or until one is handed back when none is held.
fn release_loop(shared: &Shared) {
    let mut st = shared.lock();
    loop {
        if st.closed {
            return;
        }
        let now = Instant::now();
        let mut next: Option<Instant> = None;
        for p in &mut st.idle {
            if p.expired(now) {
                p.end();
            } else if let Some(s) = p.since {
                let due = s + HOLD;
                next = Some(next.map_or(due, |n: Instant| n.min(due)));
            }
        }
        st = match next {
            Some(due) => {
                let wait = due.saturating_duration_since(now);
                shared
                    .wake
                    .wait_timeout(st, wait)
                    .unwrap_or_else(|e| e.into_inner())
                    .0
            }
            None => {
                st.releaser_asleep = true;
                shared.wake.wait(st).unwrap_or_else(|e| e.into_inner())
            }
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One lookup after opening (`len(bc)`) ends its transaction at once: a
    /// writer that does not wait at all can commit right after it.
    #[test]
    fn a_first_lookup_holds_no_transaction() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.barecat");
        drop(Index::open_write(&path, true).unwrap());
        let pool = ReadPool::new(&path, Index::open_read(&path).unwrap());
        assert_eq!(pool.with(|i| i.count_files()).unwrap(), 0);
        let c = rusqlite::Connection::open(&path).unwrap();
        c.busy_timeout(Duration::ZERO).unwrap();
        c.execute_batch("BEGIN EXCLUSIVE; COMMIT").unwrap();
        // A single statement outside any held transaction holds none either.
        assert_eq!(pool.with_one_statement(|i| i.count_files()).unwrap(), 0);
        c.execute_batch("BEGIN EXCLUSIVE; COMMIT").unwrap();
    }
}
