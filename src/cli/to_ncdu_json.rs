//! `barecat-to-ncdu-json`: the directory tree in ncdu's export format.

use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

use crate::maint::ncdu::write_ncdu;
use crate::Archive;

const EXAMPLES: &str = "\
Examples:
  barecat-to-ncdu-json data.barecat > tree.json && ncdu -f tree.json
  barecat-to-ncdu-json data.barecat | ncdu -f -

Writes ncdu's JSON export format (version 1.1) to standard output: every directory
and file with its size, from the index alone.

Exit status: 0 success, 1 failure, 2 usage error.";

/// Export the directory tree for ncdu.
#[derive(Debug, Parser)]
#[command(name = "barecat-to-ncdu-json", version, after_help = EXAMPLES)]
pub struct Args {
    /// The archive (or its index file)
    pub archive: std::path::PathBuf,
    #[command(flatten)]
    pub remote: super::common::Remote,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let _stats = args.remote.stats_guard("barecat-to-ncdu-json");
    let archive = Archive::open_with(&args.archive, args.remote.open_options(true))
        .with_context(|| format!("cannot open {}", args.archive.display()))?;
    super::print_warnings("barecat-to-ncdu-json", archive.warnings());
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(1 << 20, stdout.lock());
    write_ncdu(&archive, &mut out)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
