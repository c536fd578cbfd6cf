//! # barecat
//!
//! Read and write barecat archives (docs/FORMAT.md): millions of
//! small files stored as an SQLite index (path → shard, offset, size, CRC32C, metadata,
//! plus a `dirs` table of subtree statistics) and raw shard files holding the bytes
//! back to back. Archives are interchangeable with Python barecat 0.3.1 in both
//! directions.
//!
//! * [`Archive`] opens an archive read-only; it is `Sync`, so any number of threads
//!   can read at once.
//! * [`ArchiveWriter`] appends files and directories in batched, crash-consistent
//!   transactions, and deletes and renames entries.
//! * [`records::Records`] reads records by integer index (the zrecord store of docs/FORMAT.md §10),
//!   from a standalone dataset or from an archive's record table.
//! * [`core::remote`]: every reader also takes a URL (`s3://bucket/prefix/name`,
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

#![warn(missing_docs)]

pub mod core;

pub mod edit;
pub mod export;
pub mod ingest;
pub mod interactive;
pub mod listing;
pub mod maint;
pub mod mount;
pub mod records;
pub mod sync;

mod cli;

pub use crate::core::archive::{Archive, OpenOptions};
pub use crate::core::entry::{DirInfo, Entry, FileInfo, FileOrder, Listing, Meta};
pub use crate::core::error::{Error, Result};
pub use crate::core::format::layout::Layout;
pub use crate::core::writer::{
    ArchiveWriter, CreateMode, NewContent, Removed, WriteStats, WriterOptions,
};

/// The shell completion script of the command-line program `program` (`barecat` or
/// one of the `barecat-<command>` programs) for `shell` (`bash`, `zsh` or `fish`),
/// generated from the command definitions: what `barecat completion-script SHELL
/// PROGRAM` prints. `None` for an unknown shell or program.
pub fn completion_script(shell: &str, program: &str) -> Option<Vec<u8>> {
    let shell = match shell {
        "bash" => clap_complete::Shell::Bash,
        "zsh" => clap_complete::Shell::Zsh,
        "fish" => clap_complete::Shell::Fish,
        _ => return None,
    };
    cli::docs::completion(shell, program)
}

/// Run the command-line program `program` (`barecat`, `barecat-create`, …) with this
/// process's arguments: what each of the crate's binaries does. Exit status 0 on
/// success, 1 on failure, 2 on a usage error.
pub fn main(program: &str) -> std::process::ExitCode {
    cli::main(program)
}
