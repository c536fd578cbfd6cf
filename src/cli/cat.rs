//! `barecat-cat`: write stored files to standard output, CRC-checked.

use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

use crate::Archive;

const EXAMPLES: &str = "\
Examples:
  barecat-cat data.barecat images/cat.jpg > cat.jpg
  barecat-cat data.barecat labels.txt | head
  barecat-cat --stats https://example.org/data.barecat images/cat.jpg > cat.jpg

Every file is checked against its stored CRC32C; files up to 64 MiB are checked
before any byte is written, so a corrupt file produces no output and exit status 1.";

/// Write the content of stored files to standard output.
#[derive(Debug, Parser)]
#[command(name = "barecat-cat", version, after_help = EXAMPLES)]
pub struct Args {
    /// The archive (its index file, e.g. data.barecat)
    pub archive: std::path::PathBuf,
    /// Paths inside the archive, written one after the other
    #[arg(required = true)]
    pub paths: Vec<String>,
    #[command(flatten)]
    pub remote: super::common::Remote,
}

/// Legacy `barecat-extract-single --barecat-file A --path P`.
#[derive(Debug, Parser)]
#[command(name = "barecat-extract-single", version, hide = true)]
pub struct LegacyArgs {
    /// The archive
    #[arg(long = "barecat-file")]
    pub barecat_file: std::path::PathBuf,
    /// Path inside the archive
    #[arg(long)]
    pub path: String,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let _stats = args.remote.stats_guard("barecat-cat");
    let archive = Archive::open_with(&args.archive, args.remote.open_options(false))
        .with_context(|| format!("cannot open {}", args.archive.display()))?;
    super::print_warnings("barecat-cat", archive.warnings());
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(1 << 20, stdout.lock());
    for p in &args.paths {
        let fi = archive.file_info(p)?;
        archive.write_to(&fi, &mut out)?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

pub fn run_legacy(args: LegacyArgs) -> anyhow::Result<ExitCode> {
    run(Args {
        archive: args.barecat_file,
        paths: vec![args.path],
        remote: Default::default(),
    })
}
