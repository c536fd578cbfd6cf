//! Maintenance of existing archives: checking them ([`verify`]), compacting their
//! shards ([`defrag`]), combining several into one ([`merge`], [`merge_symlink`]),
//! and reports about them ([`du`], [`ncdu`], [`csv`]).
//!
//! [`space`] is the shared accounting of where the bytes of an archive are (live
//! extents, holes, trailing bytes) used by `verify` and `defrag`.

pub mod csv;
pub mod defrag;
pub mod du;
pub mod inputs;
pub mod merge;
pub mod merge_symlink;
pub mod ncdu;
pub mod repair;
pub mod reshard;
pub mod space;
pub mod upgrade;
pub mod verify;

mod copy;
mod fds;
mod span;
