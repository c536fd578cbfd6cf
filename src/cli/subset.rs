//! `barecat-subset`: a new archive holding the files of an archive that a glob or
//! include/exclude rules select (a filtered merge).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use super::common::{NoSidecar, Quiet, ShardLimit};
use super::rules::FilterArgs;
use crate::glob::GlobOptions;
use crate::ingest::Duplicates;
use crate::maint::merge::{merge_filtered, MergeOptions, OutputMode};
use crate::progress::Progress;
use crate::size::human;

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

The output holds the selected files with their metadata, the directories that
hold them and the directories the filter selects itself, all with their metadata
(Python barecat's subset leaves directories bare). Only the selected files' bytes
are read and written, in address order, packed into shards of at most -s SIZE
(default: unlimited). The output is built under a temporary name and appears only
when complete (with -f, an old one is replaced then); the input is only read.

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
    #[command(flatten)]
    pub filter: FilterArgs,
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

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    // Python barecat's subset matches --pattern recursively, hidden names included.
    let filter = args.filter.filter(GlobOptions {
        recursive: true,
        include_hidden: true,
    })?;
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
    };
    let progress = Progress::new(super::show_progress(args.quiet.quiet), "copying", None);
    let inputs = [args.archive.clone()];
    let r = merge_filtered(&args.output, &inputs, &opts, &filter, &progress)
        .map_err(|e| super::merge::explain(e, false))?;
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
