//! Zero-copy buffers: the bytes of one stored file inside its shard's memory map,
//! or of one record inside its chunk's map (or its decompressed buffer), exposed to Python through the buffer protocol (wrap in `memoryview`, pass to
//! `numpy.frombuffer`, `PIL.Image.open(io.BytesIO(...))`, `torch.frombuffer`).
//!
//! The object owns a reference to the map, and every buffer exported from it keeps
//! the object alive, so a view stays valid however long Python keeps it, after the
//! archive is closed or garbage-collected too. Views are read-only.

use std::ffi::c_int;

use barecat::core::shards::MappedFile;
use barecat::records::Record;
use pyo3::exceptions::PyBufferError;
use pyo3::ffi;
use pyo3::prelude::*;

#[pyclass(frozen, module = "barecat_rs")]
pub struct MappedBytes {
    bytes: Backing,
}

enum Backing {
    File(MappedFile),
    Record(Record),
}

impl MappedBytes {
    pub fn new(file: MappedFile) -> MappedBytes {
        MappedBytes {
            bytes: Backing::File(file),
        }
    }

    pub fn record(record: Record) -> MappedBytes {
        MappedBytes {
            bytes: Backing::Record(record),
        }
    }

    fn data(&self) -> &[u8] {
        match &self.bytes {
            Backing::File(f) => f,
            Backing::Record(r) => r,
        }
    }
}

#[pymethods]
impl MappedBytes {
    fn __len__(&self) -> usize {
        self.data().len()
    }

    /// # Safety
    /// Called by Python with a valid `view` to fill.
    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut ffi::Py_buffer,
        flags: c_int,
    ) -> PyResult<()> {
        if view.is_null() {
            return Err(PyBufferError::new_err("no view to fill"));
        }
        if (flags & ffi::PyBUF_WRITABLE) == ffi::PyBUF_WRITABLE {
            return Err(PyBufferError::new_err("archive contents are read-only"));
        }
        let data: &[u8] = slf.get().data();
        let (ptr, len) = (data.as_ptr(), data.len());
        // SAFETY: `view` is valid (checked above); the memory stays mapped while the
        // object lives, and `obj` takes a reference to it for the view's lifetime.
        unsafe {
            (*view).obj = slf.into_any().into_ptr();
            (*view).buf = ptr as *mut std::ffi::c_void;
            (*view).len = len as ffi::Py_ssize_t;
            (*view).readonly = 1;
            (*view).itemsize = 1;
            (*view).format = if (flags & ffi::PyBUF_FORMAT) == ffi::PyBUF_FORMAT {
                c"B".as_ptr() as *mut std::ffi::c_char
            } else {
                std::ptr::null_mut()
            };
            (*view).ndim = 1;
            (*view).shape = if (flags & ffi::PyBUF_ND) == ffi::PyBUF_ND {
                &mut (*view).len
            } else {
                std::ptr::null_mut()
            };
            (*view).strides = if (flags & ffi::PyBUF_STRIDES) == ffi::PyBUF_STRIDES {
                &mut (*view).itemsize
            } else {
                std::ptr::null_mut()
            };
            (*view).suboffsets = std::ptr::null_mut();
            (*view).internal = std::ptr::null_mut();
        }
        Ok(())
    }

    /// # Safety
    /// Called by Python when a view is released; nothing was allocated for it.
    unsafe fn __releasebuffer__(&self, _view: *mut ffi::Py_buffer) {}
}
