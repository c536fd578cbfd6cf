//! The B-tree sidecar (`ARCHIVE-btreemeta`): the index pages every lookup walks
//! through, bundled so that a reader of a remote index fetches them once.
//!
//! # Why
//!
//! Read from object storage, every path lookup in the SQLite index walks root →
//! interior → leaf pages, one round trip each. The sidecar (docs/FORMAT.md §9, the SFBTM v3
//! format) holds page 1, every page of the schema b-tree and every interior page of
//! every b-tree, zstd-compressed, typically a fraction of a percent of the index.
//! A reader fetches it once at open and pins its pages in memory; a cold lookup
//! then costs at most one index request (the leaf).
//!
//! # Trust
//!
//! The sidecar is an optional cache, never a source of truth. A reader checks the
//! format ([`parse`]) and freshness against the index's page 1 ([`load`],
//! [`PageMap::check_fresh`]), and treats any [`Rejection`] as "no sidecar".
//! Python barecat and other SQLite clients change indexes without knowing about
//! sidecars; SQLite's file change counter in page 1 catches that at no extra cost.
//! Our own writers remove the sidecar before they change an index and write a
//! fresh one when they finish ([`emit_best_effort`]), so a killed writer never
//! leaves one that describes another index. Page 1 cannot tell apart two
//! different indexes with byte-identical page 1 (say, one removed by Python barecat
//! without its sidecar and rebuilt to the same change counter and size); a reader
//! misled that way finds wrong interior pages, which SQLite reports as corruption
//! or a missing row, and file contents stay CRC-checked. `barecat-sidecar --check`
//! and `barecat-verify` compare every page and catch it.
//!
//! # Layout
//!
//! * [`crate::core::format::sidecar`]: the byte format, parsing with bounded
//!   decompression, the page map, freshness, the generic producer.
//! * [`emit`]: writing and removing the file.
//! * `select`: the pages it holds, walked down from each b-tree's root (SQLite's
//!   `dbstat` when the walk meets something unexpected).
//! * [`check`](mod@check): the full check against a local index.
//! * `raw`: reading the index's bytes through SQLite's own file handle.

pub mod check;
pub mod emit;
mod raw;
mod select;

pub use crate::core::format::sidecar::{
    encode, load, max_body_len, parse, PageMap, Rejection, RejectionKind, DEFAULT_LEVEL,
    FORMAT_VERSION, MAGIC, WRITER_LEVEL,
};
pub use check::{check, CheckReport, Status};
pub use emit::{build, emit_best_effort, rebuild, remove, write, Built, Refusal, Written};
