//! The Rust library through its public API.

mod api;
mod scale_walks;
