//! `barecat list` (`l`, `t`): Python barecat's `list`, line for line.

use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

use crate::listing::{format::use_time_locale, python};
use crate::Archive;

const EXAMPLES: &str = "\
Examples:
  barecat list data.barecat                  # the top level, names sorted
  barecat list -l data.barecat train         # long format, with a total line
  barecat list -R data.barecat train         # every file below train
  barecat list data.barecat 'train/**/*.jpg' # glob (hidden entries excluded)
  barecat list data.barecat train/           # everything below train (= train/**)
  barecat l --jsonl data.barecat train       # JSON lines

Prints exactly what Python barecat's `barecat list` (also `ls`, `l`, `t`) prints for
the same archive: the same lines in the same order, for scripts that read them. The
lines of several paths follow each other. A path that is not there prints Python's
`ls: PATH: No such file or directory` on standard output, and the exit status is then
1 (Python exits 0). Our own `barecat ls` (GNU ls-like) keeps the name `ls`.

Exit status: 0 success, 1 some path not found or failure, 2 usage error.";

/// List archive contents as Python barecat's `list` does.
#[derive(Debug, Parser)]
#[command(name = "barecat-list", version, after_help = EXAMPLES)]
pub struct Args {
    /// The archive
    pub archive: std::path::PathBuf,
    /// Paths or glob patterns to list (default: the root)
    pub paths: Vec<String>,
    /// Long listing with sizes
    #[arg(short, long)]
    pub long: bool,
    /// List recursively: every file below each directory
    #[arg(short = 'R', long)]
    pub recursive: bool,
    /// Output as JSON lines (one JSON object per line)
    #[arg(long)]
    pub jsonl: bool,
    #[command(flatten)]
    pub remote: super::common::Remote,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    use_time_locale();
    let _stats = args.remote.stats_guard("barecat list");
    let archive = Archive::open_with(&args.archive, args.remote.open_options(false))
        .with_context(|| format!("cannot open {}", args.archive.display()))?;
    super::print_warnings("barecat list", archive.warnings());
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let opts = python::Options {
        long: args.long,
        recursive: args.recursive,
        jsonl: args.jsonl,
    };
    let missing = python::list(&archive, &args.paths, opts, &mut out)?;
    out.flush()?;
    Ok(if missing.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(super::FAILURE)
    })
}
