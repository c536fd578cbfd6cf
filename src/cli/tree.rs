//! `barecat tree` / `barecat-tree`: the directory tree, as Python barecat draws it.

use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

use crate::listing::tree::{self, TreeOptions};
use crate::Archive;

const EXAMPLES: &str = "\
Examples:
  barecat tree data.barecat                 # the whole tree
  barecat tree -L 2 data.barecat train      # two levels below train
  barecat tree -d data.barecat              # directories only

Draws what Python barecat's `tree` draws: at each level the subdirectories, then the
files, each sorted by name, then a line `D directories, F files` counting the start
directory too (counts of one are singular here: `1 directory, 1 file`). PATH must be
a directory of the archive.

Exit status: 0 success, 1 failure (PATH is not a directory), 2 usage error.";

/// Display the directory tree of an archive.
#[derive(Debug, Parser)]
#[command(name = "barecat-tree", version, after_help = EXAMPLES)]
pub struct Args {
    /// The archive
    pub archive: std::path::PathBuf,
    /// Directory inside the archive to start from (default: the root)
    pub path: Option<String>,
    /// Show at most N levels below PATH
    #[arg(short = 'L', long, value_name = "N")]
    pub level: Option<usize>,
    /// List directories only
    #[arg(short, long)]
    pub dirs_only: bool,
    #[command(flatten)]
    pub remote: super::common::Remote,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let _stats = args.remote.stats_guard("barecat tree");
    let archive = Archive::open_with(&args.archive, args.remote.open_options(false))
        .with_context(|| format!("cannot open {}", args.archive.display()))?;
    super::print_warnings("barecat tree", archive.warnings());
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let opts = TreeOptions {
        level: args.level,
        dirs_only: args.dirs_only,
    };
    tree::tree(&archive, args.path.as_deref().unwrap_or(""), opts, &mut out)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
