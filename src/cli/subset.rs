//! `barecat-subset`: a new archive holding the files of an archive that a glob or
//! include/exclude rules select (a filtered merge).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use std::sync::Arc;

use super::common::{NoSidecar, Quiet, ShardLimit, WithRules};
use crate::core::glob::PathFilter;
use crate::core::progress::Progress;
use crate::core::size::human;
use crate::ingest::Duplicates;
use crate::maint::merge::{merge, MergeOptions, OutputMode};

const EXAMPLES: &str = "\
Examples:
  barecat subset data.barecat -o train.barecat --pattern 'train/**'
  barecat subset data.barecat -o jpgs.barecat --pattern '**/*.jpg' -s 1G
  barecat subset data.barecat -o small.barecat -x 'raw/' -x '**/*.tif'
  barecat subset data.barecat -o some.barecat -i 'a/keep/**' -x 'a/**'
  barecat-subset -f data.barecat -o copy.barecat      # no filter: a full copy

--pattern takes the files that GLOB matches: '*' and '?' do not cross '/', '**'
matches any number of directories, names starting with '.' are matched too; a
trailing '/' stands for '/**'. -i and -x are rules applied in the order given: the
first one that matches a path decides, and paths that no rule matches are taken
(a trailing '/' stands for '/**', a rule is recursive when it contains '**').

The output holds the selected files with their metadata and the directories that
hold them, with theirs (Python barecat's subset leaves directories bare); without
a pattern or rules, everything (empty directories too). Only the selected files'
bytes are read and written, in address order, packed into shards of at most -s
SIZE (default: unlimited); holes of the input are never copied (Python barecat's
unfiltered subset copies them). It is barecat-merge with one input. The output is
built under a temporary name and appears only when complete (with -f, an old one
is replaced then); the input is only read.

Exit status: 0 success, 1 failure (no output is left), 2 usage error.";

/// Copy the files of an archive that a pattern or rules select into a new archive.
#[derive(Debug, Parser)]
#[command(name = "barecat-subset", version, after_help = EXAMPLES)]
pub struct Args {
    /// The source archive
    #[arg(value_name = "ARCHIVE")]
    pub archive: PathBuf,
    /// The archive to create
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
    /// Replace the output if it exists
    #[arg(short, long)]
    pub force: bool,
    /// Take the files matching GLOB (a trailing '/' stands for '/**'; '*' does not
    /// cross '/', '**' matches any number of directories; names starting with '.'
    /// are matched too)
    #[arg(long, value_name = "GLOB")]
    pub pattern: Option<String>,
    /// Rule: take the files matching GLOB (rules are tried in command-line order;
    /// the first that matches decides, a file matching none is taken; repeatable)
    #[arg(short = 'i', long, value_name = "GLOB")]
    pub include: Vec<String>,
    /// Rule: leave out the files matching GLOB (see -i; repeatable)
    #[arg(short = 'x', long, value_name = "GLOB")]
    pub exclude: Vec<String>,
    #[command(flatten)]
    pub limit: ShardLimit,
    #[command(flatten)]
    pub quiet: Quiet,
    #[command(flatten)]
    pub sidecar: NoSidecar,
    /// End abruptly after N steps of putting the output in place (for tests)
    #[arg(long, hide = true, value_name = "N")]
    pub crash_after_steps: Option<u64>,
}

pub fn run(cli: WithRules<Args>) -> anyhow::Result<ExitCode> {
    let WithRules { args, rules } = cli;
    if args.pattern.is_some() && !rules.is_empty() {
        crate::usage!("--pattern is incompatible with --include/--exclude");
    }
    // As in Python barecat's subset: hidden names are matched too.
    let filter = match (&args.pattern, rules.is_empty()) {
        (Some(p), _) => Some(Arc::new(PathFilter::pattern(p, true)?)),
        (None, false) => Some(Arc::new(PathFilter::rules(&rules)?)),
        (None, true) => None,
    };
    let opts = MergeOptions {
        output_mode: if args.force {
            OutputMode::Overwrite
        } else {
            OutputMode::New
        },
        shard_size_limit: args.limit.shard_size_limit,
        duplicates: Duplicates::Error,
        crash_after_steps: args.crash_after_steps,
        sidecar: args.sidecar.enabled(),
        filter,
        ..MergeOptions::default()
    };
    let progress = Progress::new(super::show_progress(args.quiet.quiet), "copying", None);
    let inputs = [args.archive.clone()];
    let r = merge(&args.output, &inputs, &opts, &progress)
        .map_err(|e| super::common::explain(e, false))?;
    progress.finish();
    if !args.quiet.quiet {
        println!(
            "{}: {} files ({}) and {} directories from {}",
            args.output.display(),
            r.files,
            human(r.bytes),
            r.dirs,
            args.archive.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}
