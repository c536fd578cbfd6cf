//! What is on disk: the index schema with its versions ([`schema`]) and the names
//! of an archive's files ([`layout`]: the index, its shards, the sidecar, the
//! record table) and the byte format of the B-tree sidecar ([`sidecar`]). docs/FORMAT.md describes the format itself.

pub mod layout;
/// The index schema lives with the index; this path is kept for callers.
pub use crate::core::index::schema;
pub mod sidecar;
