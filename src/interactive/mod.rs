//! The interactive programs: `barecat shell` (a command interpreter over an
//! archive), `barecat ncdu` (a disk-usage browser) and `barecat browse` (a
//! ranger-like file browser).
//!
//! Each is a model that knows what to show and how the keys move through the
//! archive (testable without a terminal: it renders to rows of text, or writes
//! to any `Write`), plus a thin loop that drives it on the terminal
//! ([`term`] for the full-screen ones, rustyline for the shell). They read the
//! archive through the index only, a page of a directory at a time
//! ([`pager`]), so they open a directory of a ten-million-file archive at once.

pub mod browse;
pub mod ncdu;
pub mod pager;
pub mod shell;
pub mod term;

#[cfg(test)]
mod tests;
