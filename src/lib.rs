//! # barecat
//!
//! Read and write [barecat](https://github.com/isarandi/barecat) archives: millions of
//! small files stored as an SQLite index (path → shard, offset, size, CRC32C, metadata,
//! plus a `dirs` table of subtree statistics) and raw shard files holding the bytes
//! back to back. Archives are interchangeable with Python barecat 0.3.1 in both
//! directions.
//!
//! * [`Archive`] opens an archive read-only; it is `Sync`, so any number of threads
//!   can read at once.
//! * [`ArchiveWriter`] appends files and directories in batched, crash-consistent
//!   transactions, and deletes and renames entries.
//! * [`records::Records`] reads records by integer index (seed 002's zrecord store),
//!   from a standalone dataset or from an archive's record table.
//! * [`remote`]: every reader also takes a URL (`s3://bucket/prefix/name`,
//!   `http(s)://host/path/name`) and reads the archive by ranged requests.
//!
//! ```no_run
//! use barecat::{Archive, ArchiveWriter, CreateMode, Meta, WriterOptions};
//!
//! let mut w = ArchiveWriter::open("data.barecat", WriterOptions::with_mode(CreateMode::New))?;
//! w.add_file("images/cat.jpg", Meta::default(), b"...", None)?;
//! w.finish()?;
//!
//! let a = Archive::open("data.barecat")?;
//! assert_eq!(a.read("images/cat.jpg")?, b"...");
//! # Ok::<(), barecat::Error>(())
//! ```

pub mod archive;
pub mod cli;
pub mod crc;
mod direct;
pub mod edit;
pub mod entry;
pub mod error;
pub mod export;
pub mod fork;
pub mod glob;
pub mod index;
pub mod ingest;
pub mod layout;
pub mod listing;
pub mod maint;
pub mod mount;
pub mod path;
pub mod progress;
pub mod read_pool;
pub mod records;
pub mod remote;
pub mod repair;
pub mod schema;
pub mod shard;
pub mod sidecar;
pub mod size;
pub mod sync;
pub mod writer;

pub use archive::{Archive, Listing, OpenOptions};
pub use entry::{DirInfo, Entry, FileInfo, Meta, Order};
pub use error::{Error, Result};
pub use layout::Layout;
pub use writer::{ArchiveWriter, CreateMode, Removed, WriteStats, WriterOptions};
