//! A read-only SQLite VFS whose main database files are [`PageSource`]s.
//!
//! SQLite opens a remote index through this VFS (`barecat-remote`) by a name of
//! ours (`/barecat-remote/N`) registered for the archive's [`PageSource`]; every
//! other file it opens (temporary files of large sorts) and every other service
//! (time, randomness, sleeping) goes to the default VFS, which this one wraps.
//! Connections are opened with `immutable=1`: the index is pinned to one version
//! ([`super::client`]), so SQLite takes no locks and looks for no journal.
//!
//! A failed read returns `SQLITE_IOERR_READ` to SQLite and leaves the real error
//! (the URL and the status) for this thread: `crate::core::error::stash_io_cause` hands it to the
//! error conversion of [`crate::core::error::Error::sqlite`], so the user sees that line
//! instead of SQLite's "disk I/O error".

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use rusqlite::{ffi, Connection, OpenFlags};

use crate::core::fork::ForkLocal;

use super::pages::{PageSource, ScanState};

/// The name the VFS is registered under.
pub const VFS_NAME: &CStr = c"barecat-remote";

/// The page sources registered in this process (a forked child starts with none:
/// its archives open their indexes again, [`crate::core::fork`]).
fn sources() -> &'static Mutex<HashMap<String, Arc<PageSource>>> {
    static S: ForkLocal<Mutex<HashMap<String, Arc<PageSource>>>> = ForkLocal::new();
    S.get_or_init(|| Mutex::new(HashMap::new()))
}

/// A page source registered under a file name of the VFS, for as long as this
/// value lives (connections already open keep their own reference).
#[derive(Debug)]
pub struct Registration {
    name: String,
}

impl Registration {
    /// Register `source` under a new file name of the VFS, for connections to open.
    pub fn new(source: Arc<PageSource>) -> Registration {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let name = format!("/barecat-remote/{}", NEXT.fetch_add(1, Ordering::Relaxed));
        sources()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name.clone(), source);
        Registration { name }
    }

    /// Open a read-only connection on the registered source.
    pub fn connect(&self) -> rusqlite::Result<Connection> {
        register()?;
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        Connection::open_with_flags_and_vfs(
            format!("file:{}?immutable=1", self.name),
            flags,
            VFS_NAME,
        )
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        sources()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.name);
    }
}

/// Our file: SQLite's base struct first, then the source.
#[repr(C)]
struct RemoteFile {
    base: ffi::sqlite3_file,
    source: *const PageSource,
    /// This connection's read pattern (for read-ahead of scans).
    scan: ScanState,
}

/// The default VFS, which ours wraps.
fn parent(vfs: *mut ffi::sqlite3_vfs) -> *mut ffi::sqlite3_vfs {
    // SAFETY: pAppData was set to the default VFS at registration.
    unsafe { (*vfs).pAppData.cast() }
}

unsafe extern "C" fn x_open(
    vfs: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let ours = if name.is_null() || flags & ffi::SQLITE_OPEN_MAIN_DB == 0 {
        None
    } else {
        // SAFETY: SQLite passes a NUL-terminated name.
        let n = unsafe { CStr::from_ptr(name) }.to_string_lossy();
        sources()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(n.as_ref())
            .cloned()
    };
    let Some(source) = ours else {
        let p = parent(vfs);
        // SAFETY: the default VFS's own open, with the file of its size (ours is
        // at least as large).
        return match unsafe { (*p).xOpen } {
            Some(open) => unsafe { open(p, name, file, flags, out_flags) },
            None => ffi::SQLITE_CANTOPEN,
        };
    };
    if flags & ffi::SQLITE_OPEN_READWRITE != 0 {
        return ffi::SQLITE_READONLY;
    }
    let f = file.cast::<RemoteFile>();
    // SAFETY: SQLite allocated szOsFile bytes for the file.
    unsafe {
        (*f).base.pMethods = &METHODS;
        (*f).source = Arc::into_raw(source);
        std::ptr::addr_of_mut!((*f).scan).write(ScanState::default());
        if !out_flags.is_null() {
            *out_flags = ffi::SQLITE_OPEN_READONLY;
        }
    }
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_delete(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    sync: c_int,
) -> c_int {
    let p = parent(vfs);
    match unsafe { (*p).xDelete } {
        Some(f) => unsafe { f(p, name, sync) },
        None => ffi::SQLITE_IOERR_DELETE,
    }
}

fn is_ours(name: *const c_char) -> bool {
    // SAFETY: SQLite passes NUL-terminated names.
    !name.is_null()
        && unsafe { CStr::from_ptr(name) }
            .to_bytes()
            .starts_with(b"/barecat-remote/")
}

unsafe extern "C" fn x_access(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    flags: c_int,
    out: *mut c_int,
) -> c_int {
    if is_ours(name) {
        // No journal, WAL or anything else exists beside a remote index.
        unsafe { *out = 0 };
        return ffi::SQLITE_OK;
    }
    let p = parent(vfs);
    match unsafe { (*p).xAccess } {
        Some(f) => unsafe { f(p, name, flags, out) },
        None => ffi::SQLITE_IOERR_ACCESS,
    }
}

unsafe extern "C" fn x_full_pathname(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    n_out: c_int,
    out: *mut c_char,
) -> c_int {
    if is_ours(name) {
        // SAFETY: `out` holds n_out bytes.
        let bytes = unsafe { CStr::from_ptr(name) }.to_bytes_with_nul();
        if bytes.len() > n_out.max(0) as usize {
            return ffi::SQLITE_CANTOPEN;
        }
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr().cast(), out, bytes.len()) };
        return ffi::SQLITE_OK;
    }
    let p = parent(vfs);
    match unsafe { (*p).xFullPathname } {
        Some(f) => unsafe { f(p, name, n_out, out) },
        None => ffi::SQLITE_CANTOPEN,
    }
}

unsafe extern "C" fn x_randomness(vfs: *mut ffi::sqlite3_vfs, n: c_int, out: *mut c_char) -> c_int {
    let p = parent(vfs);
    match unsafe { (*p).xRandomness } {
        Some(f) => unsafe { f(p, n, out) },
        None => 0,
    }
}

unsafe extern "C" fn x_sleep(vfs: *mut ffi::sqlite3_vfs, us: c_int) -> c_int {
    let p = parent(vfs);
    match unsafe { (*p).xSleep } {
        Some(f) => unsafe { f(p, us) },
        None => 0,
    }
}

unsafe extern "C" fn x_current_time(vfs: *mut ffi::sqlite3_vfs, t: *mut f64) -> c_int {
    let p = parent(vfs);
    match unsafe { (*p).xCurrentTime } {
        Some(f) => unsafe { f(p, t) },
        None => ffi::SQLITE_ERROR,
    }
}

unsafe extern "C" fn x_get_last_error(
    vfs: *mut ffi::sqlite3_vfs,
    n: c_int,
    out: *mut c_char,
) -> c_int {
    let p = parent(vfs);
    match unsafe { (*p).xGetLastError } {
        Some(f) => unsafe { f(p, n, out) },
        None => 0,
    }
}

unsafe extern "C" fn x_current_time_int64(
    vfs: *mut ffi::sqlite3_vfs,
    t: *mut ffi::sqlite3_int64,
) -> c_int {
    let p = parent(vfs);
    match unsafe { (*p).xCurrentTimeInt64 } {
        Some(f) => unsafe { f(p, t) },
        None => ffi::SQLITE_ERROR,
    }
}

// ------------------------------------------------------------------- file methods

fn source<'a>(file: *mut ffi::sqlite3_file) -> &'a PageSource {
    // SAFETY: set in x_open and valid until x_close.
    unsafe { &*(*file.cast::<RemoteFile>()).source }
}

unsafe extern "C" fn f_close(file: *mut ffi::sqlite3_file) -> c_int {
    let f = file.cast::<RemoteFile>();
    // SAFETY: the reference taken in x_open, given back once.
    unsafe {
        if !(*f).source.is_null() {
            drop(Arc::from_raw((*f).source));
            (*f).source = std::ptr::null();
        }
    }
    ffi::SQLITE_OK
}

unsafe extern "C" fn f_read(
    file: *mut ffi::sqlite3_file,
    buf: *mut c_void,
    amt: c_int,
    off: ffi::sqlite3_int64,
) -> c_int {
    if amt < 0 || off < 0 {
        return ffi::SQLITE_IOERR_READ;
    }
    // SAFETY: SQLite hands a buffer of `amt` bytes.
    let out = unsafe { std::slice::from_raw_parts_mut(buf.cast::<u8>(), amt as usize) };
    let src = source(file);
    // SAFETY: set in x_open; SQLite calls the methods of one file from one thread
    // at a time (every connection here is opened SQLITE_OPEN_NO_MUTEX and used by
    // one thread at a time).
    let scan = unsafe { &mut (*file.cast::<RemoteFile>()).scan };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        src.read_with(off as u64, out, scan)
    })) {
        Ok(Ok(n)) if n == out.len() => ffi::SQLITE_OK,
        Ok(Ok(n)) => {
            out[n..].fill(0);
            ffi::SQLITE_IOERR_SHORT_READ
        }
        Ok(Err(e)) => {
            crate::core::error::stash_io_cause(e);
            ffi::SQLITE_IOERR_READ
        }
        Err(_) => ffi::SQLITE_IOERR_READ,
    }
}

unsafe extern "C" fn f_write(
    _: *mut ffi::sqlite3_file,
    _: *const c_void,
    _: c_int,
    _: ffi::sqlite3_int64,
) -> c_int {
    ffi::SQLITE_READONLY
}

unsafe extern "C" fn f_truncate(_: *mut ffi::sqlite3_file, _: ffi::sqlite3_int64) -> c_int {
    ffi::SQLITE_READONLY
}

unsafe extern "C" fn f_sync(_: *mut ffi::sqlite3_file, _: c_int) -> c_int {
    ffi::SQLITE_OK
}

unsafe extern "C" fn f_file_size(
    file: *mut ffi::sqlite3_file,
    size: *mut ffi::sqlite3_int64,
) -> c_int {
    unsafe { *size = source(file).size() as ffi::sqlite3_int64 };
    ffi::SQLITE_OK
}

unsafe extern "C" fn f_lock(_: *mut ffi::sqlite3_file, _: c_int) -> c_int {
    ffi::SQLITE_OK
}

unsafe extern "C" fn f_check_reserved_lock(_: *mut ffi::sqlite3_file, out: *mut c_int) -> c_int {
    unsafe { *out = 0 };
    ffi::SQLITE_OK
}

unsafe extern "C" fn f_file_control(_: *mut ffi::sqlite3_file, _: c_int, _: *mut c_void) -> c_int {
    ffi::SQLITE_NOTFOUND
}

unsafe extern "C" fn f_sector_size(_: *mut ffi::sqlite3_file) -> c_int {
    4096
}

unsafe extern "C" fn f_device_characteristics(_: *mut ffi::sqlite3_file) -> c_int {
    ffi::SQLITE_IOCAP_IMMUTABLE
}

static METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 1,
    xClose: Some(f_close),
    xRead: Some(f_read),
    xWrite: Some(f_write),
    xTruncate: Some(f_truncate),
    xSync: Some(f_sync),
    xFileSize: Some(f_file_size),
    xLock: Some(f_lock),
    xUnlock: Some(f_lock),
    xCheckReservedLock: Some(f_check_reserved_lock),
    xFileControl: Some(f_file_control),
    xSectorSize: Some(f_sector_size),
    xDeviceCharacteristics: Some(f_device_characteristics),
    xShmMap: None,
    xShmLock: None,
    xShmBarrier: None,
    xShmUnmap: None,
    xFetch: None,
    xUnfetch: None,
};

/// Register the VFS once per process (not as the default).
fn register() -> rusqlite::Result<()> {
    static DONE: OnceLock<std::result::Result<(), c_int>> = OnceLock::new();
    if DONE.get().is_none() {
        // Never half-done at a fork ([`crate::core::fork`]).
        crate::core::fork::on_prepare(|| {
            let _ = register();
        });
        crate::core::fork::install();
    }
    let r = DONE.get_or_init(|| {
        // SAFETY: sqlite3_vfs_find(NULL) returns the default VFS, which lives for
        // the process; the VFS struct is leaked, so it outlives every connection.
        unsafe {
            let rc = ffi::sqlite3_initialize();
            if rc != ffi::SQLITE_OK {
                return Err(rc);
            }
            let default = ffi::sqlite3_vfs_find(std::ptr::null());
            if default.is_null() {
                return Err(ffi::SQLITE_ERROR);
            }
            let size = (*default)
                .szOsFile
                .max(std::mem::size_of::<RemoteFile>() as c_int);
            let vfs = Box::new(ffi::sqlite3_vfs {
                iVersion: 2,
                szOsFile: size,
                mxPathname: (*default).mxPathname.max(512),
                pNext: std::ptr::null_mut(),
                zName: VFS_NAME.as_ptr(),
                pAppData: default.cast(),
                xOpen: Some(x_open),
                xDelete: Some(x_delete),
                xAccess: Some(x_access),
                xFullPathname: Some(x_full_pathname),
                xDlOpen: None,
                xDlError: None,
                xDlSym: None,
                xDlClose: None,
                xRandomness: Some(x_randomness),
                xSleep: Some(x_sleep),
                xCurrentTime: Some(x_current_time),
                xGetLastError: Some(x_get_last_error),
                xCurrentTimeInt64: Some(x_current_time_int64),
                xSetSystemCall: None,
                xGetSystemCall: None,
                xNextSystemCall: None,
            });
            let rc = ffi::sqlite3_vfs_register(Box::into_raw(vfs), 0);
            if rc != ffi::SQLITE_OK {
                return Err(rc);
            }
        }
        Ok(())
    });
    r.map_err(|rc| {
        rusqlite::Error::SqliteFailure(
            ffi::Error::new(rc),
            Some("cannot register the remote VFS".into()),
        )
    })
}
