//! The part of libarchive's C API (3.x, a stable ABI since 3.0) that the importer
//! of other archive formats uses: a reader, its formats and filters, entries and
//! their data. Declared here rather than through a `-sys` crate: the maintained
//! ones bind the whole API through bindgen (a libclang build dependency) and the
//! others have not been updated for years; these few declarations follow
//! `archive.h` and `archive_entry.h` one to one. Linked by `build.rs`.

#![allow(non_camel_case_types)]

use libc::{c_char, c_int, c_long, c_uint, c_void, size_t, ssize_t, time_t};

#[repr(C)]
pub struct archive {
    _private: [u8; 0],
}

#[repr(C)]
pub struct archive_entry {
    _private: [u8; 0],
}

pub const ARCHIVE_EOF: c_int = 1;
pub const ARCHIVE_OK: c_int = 0;
pub const ARCHIVE_RETRY: c_int = -10;
pub const ARCHIVE_WARN: c_int = -20;
pub const ARCHIVE_FAILED: c_int = -25;
pub const ARCHIVE_FATAL: c_int = -30;

pub const AE_IFMT: c_uint = 0o170000;
pub const AE_IFREG: c_uint = 0o100000;
pub const AE_IFLNK: c_uint = 0o120000;
pub const AE_IFDIR: c_uint = 0o040000;

pub type mode_t = c_uint;

extern "C" {
    pub fn archive_read_new() -> *mut archive;
    pub fn archive_read_free(a: *mut archive) -> c_int;
    pub fn archive_read_support_filter_all(a: *mut archive) -> c_int;
    pub fn archive_read_support_format_7zip(a: *mut archive) -> c_int;
    pub fn archive_read_support_format_ar(a: *mut archive) -> c_int;
    pub fn archive_read_support_format_cab(a: *mut archive) -> c_int;
    pub fn archive_read_support_format_cpio(a: *mut archive) -> c_int;
    pub fn archive_read_support_format_iso9660(a: *mut archive) -> c_int;
    pub fn archive_read_support_format_lha(a: *mut archive) -> c_int;
    pub fn archive_read_support_format_rar(a: *mut archive) -> c_int;
    pub fn archive_read_support_format_rar5(a: *mut archive) -> c_int;
    pub fn archive_read_support_format_xar(a: *mut archive) -> c_int;
    pub fn archive_read_open_filename(
        a: *mut archive,
        filename: *const c_char,
        block_size: size_t,
    ) -> c_int;
    pub fn archive_read_next_header(a: *mut archive, entry: *mut *mut archive_entry) -> c_int;
    pub fn archive_read_data(a: *mut archive, buf: *mut c_void, size: size_t) -> ssize_t;
    pub fn archive_error_string(a: *mut archive) -> *const c_char;
    pub fn archive_format_name(a: *mut archive) -> *const c_char;
    pub fn archive_version_number() -> c_int;

    pub fn archive_entry_pathname(e: *mut archive_entry) -> *const c_char;
    pub fn archive_entry_pathname_utf8(e: *mut archive_entry) -> *const c_char;
    pub fn archive_entry_hardlink(e: *mut archive_entry) -> *const c_char;
    pub fn archive_entry_hardlink_utf8(e: *mut archive_entry) -> *const c_char;
    pub fn archive_entry_filetype(e: *mut archive_entry) -> mode_t;
    pub fn archive_entry_perm(e: *mut archive_entry) -> mode_t;
    pub fn archive_entry_size(e: *mut archive_entry) -> i64;
    pub fn archive_entry_size_is_set(e: *mut archive_entry) -> c_int;
    pub fn archive_entry_mtime(e: *mut archive_entry) -> time_t;
    pub fn archive_entry_mtime_nsec(e: *mut archive_entry) -> c_long;
    pub fn archive_entry_mtime_is_set(e: *mut archive_entry) -> c_int;
    pub fn archive_entry_uid(e: *mut archive_entry) -> i64;
    pub fn archive_entry_gid(e: *mut archive_entry) -> i64;
    pub fn archive_entry_nlink(e: *mut archive_entry) -> c_uint;
    pub fn archive_entry_is_encrypted(e: *mut archive_entry) -> c_int;
}
