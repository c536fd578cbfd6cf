//! Mounting an archive as a file system (FUSE), read-only or writable.
//!
//! Why: many training pipelines, viewers and shell tools only speak the file system.
//! A mount makes an archive look like a directory tree with no change to their code,
//! and it must not be the bottleneck of a data loader.
//!
//! How it stays fast and small at millions of entries:
//!
//! * inode numbers are row ids of the index ([`inode`]): stable for the life of
//!   the mount (renames and rewrites keep them), computed, never stored, so the
//!   daemon's memory does not grow with the number of entries looked up;
//! * `lookup` and `getattr` are single-row index queries; `readdir` pages through
//!   a directory in row-id order with the `(parent, rowid)` index, resuming from the
//!   last id encoded in the directory offset, so a 100k-entry directory is never
//!   materialized and `seekdir` needs no state;
//! * reads are positioned reads of the shard, as large as the kernel asks (up to
//!   1 MiB: the daemon widens the mount's read-ahead window from the kernel's
//!   128 KiB where it may), with the kernel's page cache kept across opens
//!   (read-only mounts: the archive does not change under the mount);
//! * read-only mounts answer the first `open` with `ENOSYS`, so the kernel opens
//!   and closes files without a round trip to the daemon (a warm read of a cached
//!   file costs what it costs on a local disk); each file is CRC32C-checked whole
//!   at the first read of it that reaches the daemon, before any of its bytes is
//!   served, so a corrupt file never has a page in the kernel's cache and every
//!   read of it fails with `EIO`;
//! * on writable mounts, where files are opened, a file read front to back is
//!   checked at its end (pieces that arrive out of order are combined), a read that
//!   reaches the end of a file of up to 64 MiB whose handle did not see all of it
//!   checks the file whole once, and a mismatch fails that read and every later
//!   read of the file. Reads that stop short of the end are not checked there.
//!
//! The file system reads only through the library's reading API ([`crate::Archive`]:
//! [`Archive::with_index`](crate::Archive::with_index) for rows,
//! [`Archive::read_at`](crate::Archive::read_at) and
//! [`Archive::read_file`](crate::Archive::read_file) for bytes), never the index or
//! shard files directly, so any archive that `Archive` can open mounts through the
//! same code. Writable mounts ([`write`]) add files through
//! [`crate::ArchiveWriter`]; every file is committed when it is closed, so a killed
//! daemon leaves a readable archive holding every file closed before the kill.
//! [`daemon`] runs the mount as a process: detaching once the mount is ready,
//! unmounting on SIGTERM/SIGINT.

pub mod daemon;
mod fs;
pub mod inode;
mod spool;
mod write;

pub use daemon::{mount, unmount, MountOptions};
