//! Counting the SQL work of index connections: a test hook, so that tests can prove
//! that a walk's cost grows with the number of entries it yields, and not faster
//! (a paged query that restarts its scan from the beginning on every page costs a
//! quadratic number of row visits, and no timing assert would catch it reliably).
//!
//! [`enable`] turns counting on for every index connection opened after it, in the
//! whole process. Each connection then gets an `sqlite3_trace_v2` callback that
//! counts statement runs and, when a statement finishes, adds its
//! `sqlite3_stmt_status` counters (virtual machine steps, full-scan steps, sorts)
//! and resets them. Connections opened without it cost nothing extra.

use std::os::raw::{c_int, c_uint, c_void};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

use rusqlite::{ffi, Connection};

static ENABLED: AtomicBool = AtomicBool::new(false);
static STATEMENTS: AtomicU64 = AtomicU64::new(0);
static VM_STEPS: AtomicU64 = AtomicU64::new(0);
static FULLSCAN_STEPS: AtomicU64 = AtomicU64::new(0);
static SORTS: AtomicU64 = AtomicU64::new(0);

/// The SQL work counted since [`enable`], as [`snapshot`] returns it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Work {
    /// Statements run (each `sqlite3_step` from a reset statement; trigger
    /// programs are not counted).
    pub statements: u64,
    /// Virtual machine instructions: every row visited, sorted or returned costs a
    /// few, so this grows with the rows a query touches.
    pub vm_steps: u64,
    /// Steps of full table or index scans (`SQLITE_STMTSTATUS_FULLSCAN_STEP`).
    pub fullscan_steps: u64,
    /// Sorts that could not use an index (`SQLITE_STMTSTATUS_SORT`).
    pub sorts: u64,
}

impl std::ops::Sub for Work {
    type Output = Work;
    fn sub(self, o: Work) -> Work {
        Work {
            statements: self.statements - o.statements,
            vm_steps: self.vm_steps - o.vm_steps,
            fullscan_steps: self.fullscan_steps - o.fullscan_steps,
            sorts: self.sorts - o.sorts,
        }
    }
}

/// Count the work of every index connection opened from now on.
pub fn enable() {
    ENABLED.store(true, Relaxed);
}

/// Is counting on?
pub fn enabled() -> bool {
    ENABLED.load(Relaxed)
}

/// The counters now.
pub fn snapshot() -> Work {
    Work {
        statements: STATEMENTS.load(Relaxed),
        vm_steps: VM_STEPS.load(Relaxed),
        fullscan_steps: FULLSCAN_STEPS.load(Relaxed),
        sorts: SORTS.load(Relaxed),
    }
}

unsafe extern "C" fn on_trace(
    event: c_uint,
    _ctx: *mut c_void,
    p: *mut c_void,
    x: *mut c_void,
) -> c_int {
    match event {
        ffi::SQLITE_TRACE_STMT => {
            // Trigger programs report their own start with a text beginning "--".
            let sql = x as *const u8;
            // SAFETY: for SQLITE_TRACE_STMT, X is the NUL-terminated SQL text.
            let is_trigger = !sql.is_null() && unsafe { *sql == b'-' && *sql.add(1) == b'-' };
            if !is_trigger {
                STATEMENTS.fetch_add(1, Relaxed);
            }
        }
        ffi::SQLITE_TRACE_PROFILE => {
            let stmt = p as *mut ffi::sqlite3_stmt;
            // SAFETY: for SQLITE_TRACE_PROFILE, P is the statement that finished; reading
            // (and resetting) its counters is what the callback is for.
            let get = |op| unsafe { ffi::sqlite3_stmt_status(stmt, op, 1) }.max(0) as u64;
            VM_STEPS.fetch_add(get(ffi::SQLITE_STMTSTATUS_VM_STEP), Relaxed);
            FULLSCAN_STEPS.fetch_add(get(ffi::SQLITE_STMTSTATUS_FULLSCAN_STEP), Relaxed);
            SORTS.fetch_add(get(ffi::SQLITE_STMTSTATUS_SORT), Relaxed);
        }
        _ => {}
    }
    0
}

/// Install the counting callback on `conn` if counting is on.
pub(crate) fn install(conn: &Connection) {
    if !enabled() {
        return;
    }
    // SAFETY: the handle is valid for the connection's lifetime, and the callback
    // keeps no pointer beyond the call (its context is null).
    unsafe {
        ffi::sqlite3_trace_v2(
            conn.handle(),
            (ffi::SQLITE_TRACE_STMT | ffi::SQLITE_TRACE_PROFILE) as c_uint,
            Some(on_trace),
            std::ptr::null_mut(),
        );
    }
}
