//! Outputs that appear whole or not at all.
//!
//! Why one module: a killed or failed run must never leave a truncated file or half
//! an archive under the name a reader opens, and every writer of a new file (an
//! export, a record store's `meta.json` and table, a sidecar) or of a new archive
//! (merge, wrap, upgrade) gets that the same way: build it aside, make it durable,
//! rename it into place, sync the directory.
//!
//! * File level ([`mod@file`]): [`replace_file`] and [`write_file`] write a small file
//!   under a temporary name beside its target and rename it over the target;
//!   [`AtomicFile`] is a streamed output (a zip or tar) written to an unnamed file
//!   (or a hidden one) and linked under its name when complete; [`rename_into_place`]
//!   renames a finished file and syncs the directory; [`sync_dir`] syncs the
//!   directory a path is in.
//! * Archive level ([`archive`]): [`temp_name`] names the archive built aside,
//!   [`install_archive`] renames its shards and then its index into place, and
//!   [`remove_stale_temps`] removes what killed runs left behind.

pub mod archive;
pub mod file;

pub use archive::{install_archive, remove_stale_temps, temp_name};
pub use file::{rename_into_place, replace_file, sync_dir, write_file, AtomicFile};
