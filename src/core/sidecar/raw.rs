//! Reading raw bytes of an index through the file handle SQLite already holds.
//!
//! The sidecar's pages are the bytes of the database file at `(pageno - 1) *
//! page_size`. Opening a descriptor of our own on the index to read them would be
//! wrong in a process that also has SQLite connections on it (a reader, the read
//! pool, `barecat-verify`'s archive): closing any descriptor of a file drops every
//! POSIX lock the process holds on it, SQLite's included, and another process could
//! then write under a connection that believes it holds a lock. So the bytes are
//! read with the `xRead` method of the `sqlite3_file` SQLite opened
//! (`SQLITE_FCNTL_FILE_POINTER`), inside a read transaction of that connection.

use std::ffi::{c_int, c_void};
use std::io;

use rusqlite::{ffi, Connection};

/// The main database file of a connection, as SQLite opened it. Used inside a
/// read transaction of that connection, during which the file does not change:
/// its size is asked once.
pub(crate) struct RawFile<'c> {
    file: *mut ffi::sqlite3_file,
    size: std::cell::OnceCell<u64>,
    _conn: &'c Connection,
}

fn sqlite_io(rc: c_int, what: &str) -> io::Error {
    io::Error::other(format!("{what}: {}", ffi::Error::new(rc)))
}

impl<'c> RawFile<'c> {
    /// The file of the `main` database of `conn`.
    pub(crate) fn of(conn: &'c Connection) -> io::Result<RawFile<'c>> {
        let mut file: *mut ffi::sqlite3_file = std::ptr::null_mut();
        // SAFETY: the handle is valid while `conn` lives; the file control only
        // writes the file pointer into `file`.
        let rc = unsafe {
            ffi::sqlite3_file_control(
                conn.handle(),
                c"main".as_ptr(),
                ffi::SQLITE_FCNTL_FILE_POINTER,
                (&mut file as *mut *mut ffi::sqlite3_file).cast::<c_void>(),
            )
        };
        // SAFETY: a non-null file SQLite returned has its methods set once open.
        if rc != ffi::SQLITE_OK || file.is_null() || unsafe { (*file).pMethods.is_null() } {
            return Err(sqlite_io(rc, "the index file is not open"));
        }
        Ok(RawFile {
            file,
            size: std::cell::OnceCell::new(),
            _conn: conn,
        })
    }

    fn methods(&self) -> &ffi::sqlite3_io_methods {
        // SAFETY: checked non-null in `of`; valid while the connection is open.
        unsafe { &*(*self.file).pMethods }
    }

    /// The size of the file in bytes (asked once).
    pub(crate) fn size(&self) -> io::Result<u64> {
        if let Some(&s) = self.size.get() {
            return Ok(s);
        }
        let s = self.file_size()?;
        Ok(*self.size.get_or_init(|| s))
    }

    fn file_size(&self) -> io::Result<u64> {
        let f = self
            .methods()
            .xFileSize
            .ok_or_else(|| io::Error::other("no xFileSize"))?;
        let mut size: ffi::sqlite3_int64 = 0;
        // SAFETY: a valid open file and a valid output location.
        let rc = unsafe { f(self.file, &mut size) };
        if rc != ffi::SQLITE_OK {
            return Err(sqlite_io(rc, "cannot get the size of the index file"));
        }
        Ok(size.max(0) as u64)
    }

    /// Read `buf.len()` bytes at `offset`; returns how many the file holds there
    /// (fewer at its end).
    pub(crate) fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let size = self.size()?;
        let n = buf.len().min(size.saturating_sub(offset) as usize);
        if n == 0 {
            return Ok(0);
        }
        let f = self
            .methods()
            .xRead
            .ok_or_else(|| io::Error::other("no xRead"))?;
        let len = c_int::try_from(n).map_err(|_| io::Error::other("read too large"))?;
        // SAFETY: `buf` holds at least `n` bytes; a valid open file.
        let rc = unsafe {
            f(
                self.file,
                buf.as_mut_ptr().cast::<c_void>(),
                len,
                offset as ffi::sqlite3_int64,
            )
        };
        match rc {
            ffi::SQLITE_OK => Ok(n),
            // The file shrank between the size and the read: zero-filled by SQLite.
            ffi::SQLITE_IOERR_SHORT_READ => Ok(0),
            rc => Err(sqlite_io(rc, "cannot read the index file")),
        }
    }
}
