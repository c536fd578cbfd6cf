//! Fork safety: a child forked at any instant, whatever our threads are doing, works.
//!
//! Why: PyTorch's `DataLoader` forks its workers from a process that holds open
//! archives and often runs other threads; Rust programs fork too. After `fork` the
//! child has one thread, and every lock another thread of the parent held at that
//! instant stays locked forever in the child. A child that then needs such a lock
//! hangs. Three kinds of state can be caught that way, and each has one answer:
//!
//! 1. **SQLite's process-wide mutexes** (its allocator's, its VFS's file table, its
//!    random generator, its page caches). We install SQLite's mutex methods
//!    ourselves (`SQLITE_CONFIG_MUTEX`, before SQLite is initialised): plain pthread
//!    mutexes behind a *gate*. Every enter counts the mutexes held process-wide; a
//!    `pthread_atfork` prepare handler closes the gate (a thread that holds no
//!    SQLite mutex waits at its next enter; one that holds some goes on, so it can
//!    finish) and waits until the count is zero. So at the instant of `fork` no
//!    thread holds any SQLite mutex, every structure they guard is consistent, and
//!    the child finds all of them free. The parent and child handlers open the gate
//!    again. This covers every SQLite call of every thread, ours or the user's,
//!    whatever it is doing, because SQLite cannot touch shared state without one of
//!    these mutexes. Memory statistics are turned off (`SQLITE_CONFIG_MEMSTATUS`),
//!    which takes a mutex out of every SQLite allocation.
//! 2. **Our own locks and threads** (connection pools, shard and map tables, page
//!    caches, the remote I/O runtime and its clients, thread pools, release and
//!    prefetch threads). Every one lives in a [`ForkLocal`]: a value that belongs to
//!    the process *generation* that made it. The child handler bumps the generation,
//!    so in the child every such value is absent: it is built afresh on first use
//!    (new connections, new runtime, new threads), without touching the parent's,
//!    which is leaked (its locks may be held, its threads do not exist). Objects
//!    that cannot be rebuilt (a writer in the middle of a transaction) live in a
//!    [`ForkOwned`]: in the child they refuse to work and are never dropped, so a
//!    child never commits, rolls back or closes what its parent is using.
//! 3. **The memory allocator**: glibc's `malloc` is fork-safe by itself (`fork`
//!    takes its arena locks around the system call).
//!
//! A child's connections are new ones; the ones it inherited are never used, closed
//! or finalised. One piece of SQLite's state is still shared between them: the unix
//! VFS's table of POSIX locks per file. If a parent thread was inside a read
//! transaction of an index at the instant of `fork`, the child's own connections to
//! that file read under that (inherited, kernel-less) shared lock instead of taking
//! one: reads work; a concurrent writer in another process is then not held off
//! for the child's reads. If a parent thread was in the middle of committing a write
//! to that very index, the child's reads of it fail with "database is locked" after
//! the busy timeout (never a hang).
//!
//! Registered when the library is loaded (an `.init_array` constructor, before
//! `main` or when the Python module is loaded), and again, idempotently, before the
//! first SQLite connection and the first [`ForkLocal`] use.

use std::cell::Cell;
use std::ffi::c_int;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rusqlite::ffi;

use crate::core::error::{Error, Result};

// ------------------------------------------------------------------ generations

static GENERATION: AtomicU64 = AtomicU64::new(0);

/// The generation of this process: 0 where the library was loaded, one more in each
/// forked child than in its parent.
pub fn generation() -> u64 {
    GENERATION.load(Ordering::Acquire)
}

// ------------------------------------------------------------------ the SQLite gate

/// SQLite mutexes held right now, by all threads together.
static HELD: AtomicUsize = AtomicUsize::new(0);
/// A fork is under way: threads that hold no SQLite mutex wait before taking one.
static FORKING: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// SQLite mutexes this thread holds.
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

fn depth() -> usize {
    DEPTH.try_with(Cell::get).unwrap_or(0)
}

fn set_depth(d: usize) {
    let _ = DEPTH.try_with(|c| c.set(d));
}

fn wait_while_forking() {
    let mut spins = 0u32;
    while FORKING.load(Ordering::SeqCst) {
        if spins < 64 {
            std::hint::spin_loop();
            spins += 1;
        } else {
            std::thread::yield_now();
        }
    }
}

/// Count one more mutex held by this thread; wait first while a fork is under way
/// if this thread holds none (Dekker-style with [`prepare`]: either the forking
/// thread sees the count, or this thread sees the flag and backs out).
fn gate_enter() {
    let d = depth();
    if d > 0 {
        HELD.fetch_add(1, Ordering::SeqCst);
        set_depth(d + 1);
        return;
    }
    loop {
        wait_while_forking();
        HELD.fetch_add(1, Ordering::SeqCst);
        if !FORKING.load(Ordering::SeqCst) {
            set_depth(1);
            return;
        }
        HELD.fetch_sub(1, Ordering::SeqCst);
    }
}

fn gate_leave() {
    set_depth(depth().saturating_sub(1));
    HELD.fetch_sub(1, Ordering::SeqCst);
}

/// One SQLite mutex: a pthread mutex (recursive for `SQLITE_MUTEX_RECURSIVE`).
#[repr(C)]
struct SqlMutex {
    m: std::cell::UnsafeCell<libc::pthread_mutex_t>,
}

// SAFETY: a pthread mutex is made to be shared between threads.
unsafe impl Sync for SqlMutex {}

const STATIC_FIRST: c_int = ffi::SQLITE_MUTEX_STATIC_MAIN;
const STATIC_LAST: c_int = ffi::SQLITE_MUTEX_STATIC_VFS3;

#[allow(clippy::declare_interior_mutable_const)]
const STATIC_INIT: SqlMutex = SqlMutex {
    m: std::cell::UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER),
};

/// SQLite's static mutexes, ids 2 to 13.
static STATICS: [SqlMutex; (STATIC_LAST - STATIC_FIRST + 1) as usize] =
    [STATIC_INIT; (STATIC_LAST - STATIC_FIRST + 1) as usize];

fn is_static(p: *mut ffi::sqlite3_mutex) -> bool {
    let first = STATICS.as_ptr() as usize;
    let end = first + std::mem::size_of_val(&STATICS);
    (first..end).contains(&(p as usize))
}

unsafe extern "C" fn m_init() -> c_int {
    ffi::SQLITE_OK
}

unsafe extern "C" fn m_end() -> c_int {
    ffi::SQLITE_OK
}

unsafe extern "C" fn m_alloc(kind: c_int) -> *mut ffi::sqlite3_mutex {
    match kind {
        ffi::SQLITE_MUTEX_FAST | ffi::SQLITE_MUTEX_RECURSIVE => {
            let m = Box::new(SqlMutex {
                m: std::cell::UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER),
            });
            if kind == ffi::SQLITE_MUTEX_RECURSIVE {
                // SAFETY: a fresh, unlocked mutex initialised with a recursive
                // attribute (the attribute object lives on this stack frame).
                unsafe {
                    let mut attr: libc::pthread_mutexattr_t = std::mem::zeroed();
                    libc::pthread_mutexattr_init(&mut attr);
                    libc::pthread_mutexattr_settype(&mut attr, libc::PTHREAD_MUTEX_RECURSIVE);
                    libc::pthread_mutex_init(m.m.get(), &attr);
                    libc::pthread_mutexattr_destroy(&mut attr);
                }
            }
            Box::into_raw(m).cast()
        }
        STATIC_FIRST..=STATIC_LAST => ptr::from_ref(&STATICS[(kind - STATIC_FIRST) as usize])
            .cast_mut()
            .cast(),
        _ => ptr::null_mut(),
    }
}

unsafe extern "C" fn m_free(p: *mut ffi::sqlite3_mutex) {
    if p.is_null() || is_static(p) {
        return;
    }
    // SAFETY: a dynamic mutex made by `m_alloc`, which SQLite frees once, unlocked.
    unsafe {
        let m = Box::from_raw(p.cast::<SqlMutex>());
        libc::pthread_mutex_destroy(m.m.get());
    }
}

unsafe extern "C" fn m_enter(p: *mut ffi::sqlite3_mutex) {
    gate_enter();
    // SAFETY: `p` was made by `m_alloc` and is alive (SQLite's contract).
    unsafe { libc::pthread_mutex_lock((*p.cast::<SqlMutex>()).m.get()) };
}

unsafe extern "C" fn m_try(p: *mut ffi::sqlite3_mutex) -> c_int {
    gate_enter();
    // SAFETY: as in `m_enter`.
    if unsafe { libc::pthread_mutex_trylock((*p.cast::<SqlMutex>()).m.get()) } == 0 {
        ffi::SQLITE_OK
    } else {
        gate_leave();
        ffi::SQLITE_BUSY
    }
}

unsafe extern "C" fn m_leave(p: *mut ffi::sqlite3_mutex) {
    // SAFETY: as in `m_enter`; SQLite leaves only what this thread entered.
    unsafe { libc::pthread_mutex_unlock((*p.cast::<SqlMutex>()).m.get()) };
    gate_leave();
}

/// Only SQLite's debug assertions ask; a release build never does.
unsafe extern "C" fn m_held(_: *mut ffi::sqlite3_mutex) -> c_int {
    1
}

static METHODS: ffi::sqlite3_mutex_methods = ffi::sqlite3_mutex_methods {
    xMutexInit: Some(m_init),
    xMutexEnd: Some(m_end),
    xMutexAlloc: Some(m_alloc),
    xMutexFree: Some(m_free),
    xMutexEnter: Some(m_enter),
    xMutexTry: Some(m_try),
    xMutexLeave: Some(m_leave),
    xMutexHeld: Some(m_held),
    xMutexNotheld: Some(m_held),
};

// ------------------------------------------------------------------ fork handlers

/// Things that must not be half-done at the instant of a fork: one-time
/// initialisations that a child could otherwise find "in progress" forever. Each is
/// completed (by this thread, or by waiting for the thread doing it) in `prepare`.
/// Lock-free, so that no thread can hold it at the instant of a fork.
static PREPARE_HOOKS: [AtomicUsize; 8] = [const { AtomicUsize::new(0) }; 8];

/// Run `hook` in every later fork's prepare handler (once per distinct function).
pub(crate) fn on_prepare(hook: fn()) {
    let h = hook as usize;
    for slot in &PREPARE_HOOKS {
        match slot.compare_exchange(0, h, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return,
            Err(v) if v == h => return,
            Err(_) => {}
        }
    }
    debug_assert!(false, "more than {} fork hooks", PREPARE_HOOKS.len());
}

extern "C" fn prepare() {
    for slot in &PREPARE_HOOKS {
        let h = slot.load(Ordering::Acquire);
        if h != 0 {
            // SAFETY: only `fn()` pointers are stored (by `on_prepare`).
            let f: fn() = unsafe { std::mem::transmute::<usize, fn()>(h) };
            f();
        }
    }
    FORKING.store(true, Ordering::SeqCst);
    let mine = depth();
    let mut spins = 0u32;
    while HELD.load(Ordering::SeqCst) > mine {
        if spins < 64 {
            std::hint::spin_loop();
            spins += 1;
        } else {
            std::thread::yield_now();
        }
    }
}

extern "C" fn parent() {
    FORKING.store(false, Ordering::SeqCst);
}

extern "C" fn child() {
    // Only this thread exists: what it holds is all that is held.
    HELD.store(depth(), Ordering::SeqCst);
    GENERATION.fetch_add(1, Ordering::AcqRel);
    FORKING.store(false, Ordering::SeqCst);
}

/// 0: not installed, 1: being installed, 2: done.
static INSTALLED: AtomicU8 = AtomicU8::new(0);
/// Did SQLite take our mutex methods? (Not if it was initialised by other code of
/// the program before this library was loaded.)
static GATED: AtomicBool = AtomicBool::new(false);

/// Install the fork handlers and SQLite's gated mutexes (once per process; cheap
/// afterwards). Called when the library is loaded and before every first use.
pub fn install() {
    if INSTALLED.load(Ordering::Acquire) == 2 {
        return;
    }
    if INSTALLED
        .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire)
        .is_err()
    {
        // Another thread installs: wait for it (a few system calls).
        while INSTALLED.load(Ordering::Acquire) != 2 {
            std::thread::yield_now();
        }
        return;
    }
    // SAFETY: sqlite3_config is called before SQLite is initialised by us; if other
    // code initialised it already it returns SQLITE_MISUSE and changes nothing.
    // The handlers only touch atomics, thread-locals and the hook list.
    unsafe {
        let rc = ffi::sqlite3_config(ffi::SQLITE_CONFIG_MUTEX, ptr::from_ref(&METHODS));
        GATED.store(rc == ffi::SQLITE_OK, Ordering::Release);
        if rc == ffi::SQLITE_OK {
            ffi::sqlite3_config(ffi::SQLITE_CONFIG_MEMSTATUS, 0 as c_int);
        }
        ffi::sqlite3_initialize();
        libc::pthread_atfork(Some(prepare), Some(parent), Some(child));
    }
    INSTALLED.store(2, Ordering::Release);
}

/// Is SQLite using our gated mutexes? False only when other code of this program
/// initialised the bundled SQLite before this library was loaded: forks are then
/// only as safe as SQLite's default mutexes make them.
pub fn sqlite_gated() -> bool {
    install();
    GATED.load(Ordering::Acquire)
}

#[used]
#[link_section = ".init_array"]
static INSTALL_AT_LOAD: extern "C" fn() = {
    extern "C" fn at_load() {
        install();
    }
    at_load
};

// ------------------------------------------------------------------ ForkLocal

struct Slot<T> {
    generation: u64,
    value: T,
}

/// A value that belongs to the process generation that made it (see the module
/// docs): in a forked child it is absent, and [`get_or_init`](Self::get_or_init)
/// builds a fresh one; the parent's is leaked, never touched.
pub struct ForkLocal<T> {
    slot: AtomicPtr<Slot<T>>,
    _owns: PhantomData<Box<Slot<T>>>,
}

// SAFETY: shared access hands out `&T` to any thread (needs `T: Sync`) and a value
// may be dropped by whichever thread drops the cell (needs `T: Send`).
unsafe impl<T: Send + Sync> Sync for ForkLocal<T> {}
unsafe impl<T: Send> Send for ForkLocal<T> {}

impl<T> Default for ForkLocal<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> ForkLocal<T> {
    /// An empty cell.
    pub const fn new() -> ForkLocal<T> {
        ForkLocal {
            slot: AtomicPtr::new(ptr::null_mut()),
            _owns: PhantomData,
        }
    }

    /// A cell holding `value` for this process generation.
    pub fn with(value: T) -> ForkLocal<T> {
        install();
        let slot = Box::into_raw(Box::new(Slot {
            generation: generation(),
            value,
        }));
        ForkLocal {
            slot: AtomicPtr::new(slot),
            _owns: PhantomData,
        }
    }

    /// This generation's value, if it was made.
    pub fn get(&self) -> Option<&T> {
        let p = self.slot.load(Ordering::Acquire);
        // SAFETY: a non-null slot is a leaked box that lives at least as long as
        // `self` (a slot is freed only by `Drop`, and one of an older generation is
        // never freed).
        let s = unsafe { p.as_ref()? };
        (s.generation == generation()).then_some(&s.value)
    }

    /// This generation's value, made by `init` if there is none yet (two threads
    /// racing both run `init`; one value wins, the other is dropped).
    pub fn get_or_init(&self, init: impl FnOnce() -> T) -> &T {
        match self.get_or_try_init(|| Ok::<T, std::convert::Infallible>(init())) {
            Ok(v) => v,
            Err(never) => match never {},
        }
    }

    /// Like [`get_or_init`](Self::get_or_init), with an `init` that may fail.
    pub fn get_or_try_init<E>(
        &self,
        init: impl FnOnce() -> std::result::Result<T, E>,
    ) -> std::result::Result<&T, E> {
        if let Some(v) = self.get() {
            return Ok(v);
        }
        install();
        let fresh = Box::into_raw(Box::new(Slot {
            generation: generation(),
            value: init()?,
        }));
        let mut current = self.slot.load(Ordering::Acquire);
        loop {
            // SAFETY: as in `get`.
            if let Some(s) = unsafe { current.as_ref() } {
                if s.generation == generation() {
                    // Another thread won: ours was never shared.
                    // SAFETY: `fresh` came from Box::into_raw just above.
                    drop(unsafe { Box::from_raw(fresh) });
                    return Ok(&s.value);
                }
            }
            match self
                .slot
                .compare_exchange(current, fresh, Ordering::AcqRel, Ordering::Acquire)
            {
                // The slot replaced, if any, was the parent's: leaked on purpose.
                // SAFETY: `fresh` is now the cell's, alive as long as the cell.
                Ok(_) => return Ok(unsafe { &(*fresh).value }),
                Err(now) => current = now,
            }
        }
    }
}

impl<T> ForkLocal<T> {
    /// This generation's value, taken out of the cell (`None` if there is none; a
    /// value of an older generation stays leaked).
    pub fn into_inner(self) -> Option<T> {
        let me = ManuallyDrop::new(self);
        let p = me.slot.load(Ordering::Acquire);
        // SAFETY: as in `get`; `me` is never dropped, so the slot is taken once.
        if p.is_null() || unsafe { (*p).generation } != generation() {
            return None;
        }
        // SAFETY: made by Box::into_raw in this generation; the cell is consumed.
        Some(unsafe { Box::from_raw(p) }.value)
    }
}

impl<T> Drop for ForkLocal<T> {
    fn drop(&mut self) {
        let p = *self.slot.get_mut();
        if p.is_null() {
            return;
        }
        // SAFETY: the slot is ours (see `get`).
        if unsafe { (*p).generation } == generation() {
            // SAFETY: made by Box::into_raw in this generation, not shared any more.
            drop(unsafe { Box::from_raw(p) });
        }
        // Otherwise it is the parent's: its locks may be held by threads that do not
        // exist here, and dropping it could touch them. Leaked.
    }
}

impl<T> std::fmt::Debug for ForkLocal<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ForkLocal")
    }
}

// ------------------------------------------------------------------ ForkOwned

/// A value that only the process generation that made it may use or drop (a writer
/// in the middle of a transaction). In a forked child, [`get`](Self::get) fails
/// with a message naming `what`, and the value is leaked, never dropped.
pub struct ForkOwned<T> {
    generation: u64,
    value: ManuallyDrop<T>,
}

impl<T> ForkOwned<T> {
    /// Hold `value` for the current process generation.
    pub fn new(value: T) -> ForkOwned<T> {
        install();
        ForkOwned {
            generation: generation(),
            value: ManuallyDrop::new(value),
        }
    }

    /// Is this the process that made the value?
    pub fn is_ours(&self) -> bool {
        self.generation == generation()
    }

    /// The value; in a forked child an error naming `what`.
    pub fn get(&self, what: &dyn std::fmt::Display) -> Result<&T> {
        if self.is_ours() {
            Ok(&self.value)
        } else {
            Err(inherited(what))
        }
    }

    /// The value, mutably; in a forked child an error naming `what`.
    pub fn get_mut(&mut self, what: &dyn std::fmt::Display) -> Result<&mut T> {
        if self.is_ours() {
            Ok(&mut self.value)
        } else {
            Err(inherited(what))
        }
    }

    /// The value, if this is the process that made it (for `Drop` paths and
    /// `finish`, which consume it).
    pub fn into_inner(self) -> Option<T> {
        let mut me = ManuallyDrop::new(self);
        if me.is_ours() {
            // SAFETY: `me` is never dropped, so the value is taken exactly once.
            Some(unsafe { ManuallyDrop::take(&mut me.value) })
        } else {
            None
        }
    }
}

fn inherited(what: &dyn std::fmt::Display) -> Error {
    Error::InvalidOperation(format!(
        "{what}: opened for writing in a parent process; a forked child cannot use it \
         (open the archive again in the child)"
    ))
}

impl<T> Drop for ForkOwned<T> {
    fn drop(&mut self) {
        if self.is_ours() {
            // SAFETY: dropped once, here.
            unsafe { ManuallyDrop::drop(&mut self.value) };
        }
    }
}

// ------------------------------------------------------------------ threads

/// A thread of ours whose result is collected later (a background flush). Only the
/// process that started it waits for it: in a forked child the thread does not
/// exist, and waiting for it would never end.
pub struct Worker<T>(ForkOwned<std::thread::JoinHandle<T>>);

impl<T: Send + 'static> Worker<T> {
    /// Start a thread running `f`; its result is collected by the process that started it.
    pub fn spawn(f: impl FnOnce() -> T + Send + 'static) -> Worker<T> {
        Worker(ForkOwned::new(std::thread::spawn(f)))
    }

    /// The thread's result; `None` if it panicked, or in a forked child.
    pub fn join(self) -> Option<T> {
        self.0.into_inner()?.join().ok()
    }
}

// ------------------------------------------------------------------ thread pools

/// The thread pool of `threads` threads of this process, made on first use. Our
/// code never uses rayon's global pool: in a forked child its threads would not
/// exist and any parallel call would wait for them forever.
/// `threads` 0 means one per CPU.
pub fn pool(threads: usize) -> Result<Arc<rayon::ThreadPool>> {
    type Pools = Mutex<Vec<(usize, Arc<rayon::ThreadPool>)>>;
    static POOLS: ForkLocal<Pools> = ForkLocal::new();
    let threads = if threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        threads
    };
    let pools = POOLS.get_or_init(|| Mutex::new(Vec::new()));
    let mut pools = pools.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, p)) = pools.iter().find(|(n, _)| *n == threads) {
        return Ok(p.clone());
    }
    let p = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("barecat-{i}"))
        .build()
        .map_err(|e| Error::InvalidOperation(format!("cannot start {threads} threads: {e}")))?;
    let p = Arc::new(p);
    pools.push((threads, p.clone()));
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_takes_our_mutexes() {
        assert!(sqlite_gated());
        let c = rusqlite::Connection::open_in_memory().unwrap();
        let n: i64 = c.query_row("SELECT 41 + 1", [], |r| r.get(0)).unwrap();
        assert_eq!(n, 42);
        assert_eq!(depth(), 0);
    }

    #[test]
    fn a_fork_local_is_made_once_per_generation() {
        let cell: ForkLocal<Vec<u8>> = ForkLocal::new();
        assert!(cell.get().is_none());
        let a = cell.get_or_init(|| vec![1]) as *const Vec<u8>;
        let b = cell.get_or_init(|| vec![2]) as *const Vec<u8>;
        assert_eq!(a, b);
        assert_eq!(cell.get(), Some(&vec![1]));
    }
}
