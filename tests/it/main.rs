//! The integration tests: one test binary (`cargo test --test it`), one module per
//! area, the helpers they share in `support`. Run one area or one file of it with a
//! filter, e.g. `cargo test --test it ingest::` or `cargo test --test it
//! reliability::crash::`.

#[macro_use]
mod support;

mod cli;
mod docs;
mod export;
mod fork;
mod ingest;
mod interop;
mod library;
mod maint;
mod mount;
mod records;
mod reliability;
mod remote;
mod sidecar;
