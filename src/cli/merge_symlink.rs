//! `barecat-merge-symlink`: combine archives by linking their shards.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use super::common::{NoSidecar, Quiet};
use crate::maint::merge_symlink::{merge_symlink, SymlinkMergeOptions};

const EXAMPLES: &str = "\
Examples:
  barecat-merge-symlink -o all.barecat part1.barecat part2.barecat
  barecat-merge-symlink -f --ignore-duplicates -o all.barecat parts/*.barecat

The output's shards are relative symbolic links to the inputs' shards, numbered
one after the other; only a new index is written, with the rows renumbered and the
directory statistics recomputed. Keep the inputs where they are. Writing into the
merged archive is refused (it would write into the inputs' shards); use
barecat-merge to make an independent copy. Legacy form:
barecat-merge-symlink INPUT... --output OUT [--overwrite].

Exit status: 0 success, 1 failure (nothing is left half-written), 2 usage error.";

/// Merge archives into one whose shards are links to theirs.
#[derive(Debug, Parser)]
#[command(name = "barecat-merge-symlink", version, after_help = EXAMPLES)]
pub struct Args {
    /// The input archives
    #[arg(required = true, value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    /// The output archive
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
    /// Replace the output if it exists (its old links are removed)
    #[arg(short = 'f', long = "force", visible_alias = "overwrite")]
    pub force: bool,
    /// Keep the first of several files with the same path instead of failing
    #[arg(long)]
    pub ignore_duplicates: bool,
    /// Put each input's files below a directory named after the input (see
    /// barecat-merge)
    #[arg(long)]
    pub as_subdirs: bool,
    /// Put every input's files below the directory PATH
    #[arg(long, value_name = "PATH")]
    pub prefix: Option<String>,
    #[command(flatten)]
    pub quiet: Quiet,
    #[command(flatten)]
    pub sidecar: NoSidecar,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let opts = SymlinkMergeOptions {
        overwrite: args.force,
        ignore_duplicates: args.ignore_duplicates,
        sidecar: args.sidecar.enabled(),
        prefix: args.prefix,
        as_subdirs: args.as_subdirs,
    };
    let r = merge_symlink(&args.output, &args.inputs, &opts)
        .map_err(|e| super::common::explain(e, false))?;
    if !args.quiet.quiet {
        println!(
            "{}: linked {} shard(s) of {} input(s), {} files{}",
            args.output.display(),
            r.shards,
            r.inputs,
            r.files,
            if r.duplicates_skipped > 0 {
                format!(", {} duplicate(s) left out", r.duplicates_skipped)
            } else {
                String::new()
            }
        );
    }
    Ok(ExitCode::SUCCESS)
}
