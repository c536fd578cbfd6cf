//! What is on disk, below every other part of the core: the names of an
//! archive's files ([`layout`]: the index, its shards, the sidecar, the record
//! table) and the byte format of the B-tree sidecar ([`sidecar`]). The index
//! schema and its versions live with the index
//! ([`crate::core::index::schema`]). docs/FORMAT.md describes the format itself.

pub mod layout;
pub mod sidecar;
