//! `barecat-ls`: list archive contents.

use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

use crate::listing::{self, ListOptions};
use crate::Archive;

const EXAMPLES: &str = "\
Examples:
  barecat-ls data.barecat                  # the top level
  barecat-ls -l data.barecat train         # long format
  barecat-ls -R data.barecat train         # every file below train, full paths
  barecat-ls data.barecat 'train/**/*.jpg' # glob (** crosses directories)
  barecat-ls --json -R data.barecat        # JSON lines with every column, for scripts
  barecat-ls -l s3://bucket/datasets/data.barecat train   # a remote archive

Directories are listed by name, `-R` and globs by path; several directories get a
`DIR:` header each, as in GNU ls. A path that is not there is an error (on stderr,
exit status 1); the others are still listed. `--jsonl` writes Python barecat's JSON
lines. For Python barecat's `list`/`ls` output, line for line, use `barecat list`.

Exit status: 0 success, 1 some path not found or failure, 2 usage error.";

/// List files and directories in an archive.
#[derive(Debug, Parser)]
#[command(name = "barecat-ls", version, after_help = EXAMPLES)]
pub struct Args {
    /// The archive
    pub archive: std::path::PathBuf,
    /// Directories, files or glob patterns inside the archive (default: the root)
    pub paths: Vec<String>,
    /// Long format: mode, links, owner, group, size, modification time, name
    #[arg(short, long)]
    pub long: bool,
    /// List every file below the directories, with full paths
    #[arg(short = 'R', long)]
    pub recursive: bool,
    /// One JSON object per line, with every column (shard, offset, counters)
    #[arg(long, conflicts_with = "jsonl")]
    pub json: bool,
    /// One JSON object per line, as Python barecat writes them
    #[arg(long)]
    pub jsonl: bool,
    #[command(flatten)]
    pub remote: super::common::Remote,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let _stats = args.remote.stats_guard("barecat-ls");
    let archive = Archive::open_with(&args.archive, args.remote.open_options(false))
        .with_context(|| format!("cannot open {}", args.archive.display()))?;
    super::print_warnings("barecat-ls", archive.warnings());
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let opts = ListOptions {
        long: args.long,
        recursive: args.recursive,
        json: args.json,
        jsonl: args.jsonl,
    };
    let problems = listing::list(&archive, &args.paths, opts, &mut out)?;
    out.flush()?;
    for p in &problems {
        eprintln!("barecat-ls: {p}");
    }
    Ok(if problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(super::FAILURE)
    })
}
