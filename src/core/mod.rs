//! The core layer: the barecat format and the one way to read and write it.
//!
//! Everything above (import, export, maintenance, records, mount, sync, the
//! command line) goes through these modules; nothing here knows about them.
//!
//! * [`format`](mod@format): what is on disk: where an archive's files live
//!   ([`format::layout`]) and the sidecar's format ([`format::sidecar`]).
//! * [`index`]: the SQLite index: its schema and versions ([`index::schema`]),
//!   every query and every statement (no SQL lives anywhere else).
//! * [`shards`]: the shard files: positioned reads, maps, the single appender.
//! * [`writer`]: [`ArchiveWriter`](writer::ArchiveWriter), the only writer: data
//!   before the rows that point at it, in batched transactions.
//! * [`archive`]: [`Archive`](archive::Archive), the reader any number of threads
//!   share.
//! * [`remote`]: the same reads from S3 and HTTP(S) by ranged requests.
//! * [`sidecar`]: the index's B-tree pages in one object, kept true by the writer,
//!   read by remote readers.
//! * [`location`]: where an archive lives (a path or a URL).
//! * [`list`]: lists of paths or indices given to commands (`-T FILE`).
//! * [`output`]: outputs that appear whole (built aside, renamed into place).
//! * [`readahead`]: local bytes brought off the disk before a reader asks for them.
//! * [`fork`]: what keeps all of the above working in a forked child.
//! * Shared vocabulary: [`entry`] (file and directory rows), [`path`] (archive
//!   paths), [`glob`], [`crc`], [`size`], [`progress`], [`error`].

pub mod archive;
pub mod crc;
pub mod entry;
pub mod error;
pub mod fork;
pub mod format;
pub mod glob;
pub mod index;
pub mod list;
pub mod location;
pub mod output;
pub mod path;
pub mod progress;
pub mod readahead;
pub mod remote;
pub mod shards;
pub mod sidecar;
pub mod size;
pub mod writer;
