//! `barecat-repair`: rebuild directory statistics and clean up after a killed writer.

use std::process::ExitCode;

use clap::Parser;

use crate::core::size::human;
use crate::maint::repair::repair;

const EXAMPLES: &str = "\
Examples:
  barecat-repair data.barecat             # statistics, triggers flag, trailing garbage
  barecat-repair --no-trim data.barecat   # leave the shards alone

Use it after a writer was killed, or after another tool changed the index with its
triggers off: `barecat-verify` then reports a clean archive.";

/// Rebuild directory statistics and remove what an interrupted writer left behind.
#[derive(Debug, Parser)]
#[command(name = "barecat-repair", version, after_help = EXAMPLES)]
pub struct Args {
    /// The archive
    pub archive: std::path::PathBuf,
    /// Do not cut trailing bytes that no file refers to
    #[arg(long)]
    pub no_trim: bool,
    /// Print nothing on success
    #[arg(short, long)]
    pub quiet: bool,
    #[command(flatten)]
    pub sidecar: super::common::NoSidecar,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let r = repair(&args.archive, !args.no_trim, args.sidecar.enabled())?;
    if !args.quiet {
        println!(
            "{}: {} directory rows fixed, {} of trailing garbage removed",
            args.archive.display(),
            r.dir_rows_fixed,
            human(r.garbage_bytes)
        );
    }
    Ok(ExitCode::SUCCESS)
}
