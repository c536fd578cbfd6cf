//! `barecat-du`: sizes of directories (and files) from the directory statistics.

use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::Context;
use clap::{ArgAction, Parser};

use crate::maint::du::{du, DuOptions};
use crate::Archive;

const EXAMPLES: &str = "\
Examples:
  barecat-du data.barecat                 # every directory, deepest first
  barecat-du -s -H data.barecat train     # one line: the total of train
  barecat-du -a -d 1 data.barecat train   # train and what is directly in it
  barecat-du --json data.barecat          # one JSON object per line

Sizes come from the directory statistics of the index: one row per directory, no
file is read (-s reads one row). Lines are SIZE<TAB>PATH, sorted by descending
depth, then by path; the root is '.'.

Exit status: 0 success, 1 failure (no such path, not an archive), 2 usage error.";

/// Show the total size of directories.
#[derive(Debug, Parser)]
#[command(name = "barecat-du", version, after_help = EXAMPLES, disable_help_flag = true)]
pub struct Args {
    /// The archive
    pub archive: std::path::PathBuf,
    /// A directory or file inside the archive (default: the root)
    pub path: Option<String>,
    /// List files too, not only directories
    #[arg(short, long)]
    pub all: bool,
    /// Only the total of PATH
    #[arg(short, long)]
    pub summarize: bool,
    /// Sizes like 1.5K, 20M, 3.1G (-h works too)
    #[arg(short = 'H', short_alias = 'h', long = "human-readable")]
    pub human: bool,
    /// Only entries at most N levels below PATH
    #[arg(short = 'd', long, value_name = "N")]
    pub max_depth: Option<u32>,
    /// One JSON object per line: type, path, size (and files, for directories)
    #[arg(long, conflicts_with = "human")]
    pub json: bool,
    #[command(flatten)]
    pub remote: super::common::Remote,
    /// Print help
    #[arg(long, action = ArgAction::Help)]
    pub help: Option<bool>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let _stats = args.remote.stats_guard("barecat-du");
    let archive = Archive::open_with(&args.archive, args.remote.open_options(true))
        .with_context(|| format!("cannot open {}", args.archive.display()))?;
    super::print_warnings("barecat-du", archive.warnings());
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let opts = DuOptions {
        all: args.all,
        summarize: args.summarize,
        max_depth: args.max_depth,
        human: args.human,
        json: args.json,
    };
    du(
        &archive,
        args.path.as_deref().unwrap_or(""),
        &opts,
        &mut out,
    )?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
