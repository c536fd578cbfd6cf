//! `barecat-index-to-csv`: the file rows of the index as CSV.

use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

use crate::maint::csv::write_csv;
use crate::Archive;

const EXAMPLES: &str = "\
Examples:
  barecat-index-to-csv data.barecat > files.csv
  barecat-index-to-csv old-sqlite-index > files.csv    # a legacy index file

Writes a header and one line per file, ordered by path, with the columns path,
shard, offset, size, crc32c. Text is quoted, numbers are bare, a missing CRC is
\"\", and lines end in CRLF (the format of Python barecat's index-to-csv).

Exit status: 0 success, 1 failure, 2 usage error.";

/// Dump the file rows of an index as CSV.
#[derive(Debug, Parser)]
#[command(name = "barecat-index-to-csv", version, after_help = EXAMPLES)]
pub struct Args {
    /// The archive (or its index file)
    pub archive: std::path::PathBuf,
    #[command(flatten)]
    pub remote: super::common::Remote,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let _stats = args.remote.stats_guard("barecat-index-to-csv");
    let archive = Archive::open_with(&args.archive, args.remote.open_options(true))
        .with_context(|| format!("cannot open {}", args.archive.display()))?;
    super::print_warnings("barecat-index-to-csv", archive.warnings());
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(1 << 20, stdout.lock());
    write_csv(&archive, &mut out)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
