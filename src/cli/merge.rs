//! `barecat-merge`: combine archives into one, copying their live bytes.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use std::sync::Arc;

use super::common::{NoSidecar, Quiet, ShardLimit, WithRules};
use super::ingest::DuplicatesArg;
use crate::core::glob::PathFilter;
use crate::core::progress::Progress;
use crate::core::size::human;
use crate::ingest::Duplicates;
use crate::maint::merge::{merge, MergeOptions, OutputMode};

const EXAMPLES: &str = "\
Examples:
  barecat-merge -o all.barecat part1.barecat part2.barecat
  barecat-merge -f -s 10G -o all.barecat parts/*.barecat   # replace all.barecat
  barecat-merge -a -o all.barecat part3.barecat            # add to all.barecat
  barecat-merge --ignore-duplicates -o all.barecat a.barecat b.barecat
  barecat-merge --symlink -o all.barecat part1.barecat part2.barecat   # no copying
  barecat-merge -o all.barecat part1.barecat extra.tar.gz more.zip      # tar, zip inputs
  barecat merge --as-subdirs -o all.barecat train.barecat val.tar  # train/…, val/…
  barecat merge --prefix data/v2 -o all.barecat part1.barecat      # data/v2/…
  barecat merge --pattern '**/*.jpg' -o jpgs.barecat part1.barecat
  barecat merge -x '**/*.tmp' -i 'train/**' -x '**' -o train.barecat all.barecat
  barecat-merge -o local.barecat s3://bucket/datasets/data.barecat     # copy a remote archive

Only the bytes of the files that end up in the output are copied: never the holes
of an input, never a duplicate left out. A file path stored in two inputs is an
error (found before anything is written) unless --duplicates first (or
--ignore-duplicates) or --duplicates last says which copy to keep; with -a, files
already in the output win. The output is built under a temporary name and appears
only when complete; with -f the old one is replaced then. Into a new or empty
output, a first barecat input without holes is copied whole (its shards and its
index as they are, each file's checksum checked), at the speed of a file copy.
Directory metadata is carried over (the first input with a directory gives it).
Inputs may also be tar
files (plain or compressed) and zip files: their entries are added as
barecat-from-tar and barecat-from-zip add them; a path found there that an earlier
input has (or found twice there) is kept or skipped as --duplicates says, each one
noted, and fails the merge otherwise (again leaving the output as it was); with
--duplicates last a replaced copy stays in the output as a hole (barecat-defrag
reclaims it). An input may be a remote archive (s3://…, http(s)://…): it is read
by ranged requests in address order. --symlink takes local barecat inputs only. Legacy form: barecat-merge
INPUT... --output OUT [--overwrite].

--prefix DIR puts every input's files below DIR; --as-subdirs below a directory
named after each input (its file name without .barecat, .tar, .tar.gz, .tgz,
.tar.bz2, .tbz2, .tar.xz, .txz or .zip; Python barecat also lower-cases it),
below DIR when both are given. --pattern GLOB takes only the files whose path
in their input matches GLOB (Python glob syntax, hidden names included; a
trailing '/' means everything below); -i GLOB and -x GLOB are rules tried in
command-line order, the first that matches deciding, and a file that matches
none is taken. With --pattern or rules, directories are copied only as the
parents of the files taken.

Exit status: 0 success, 1 failure (nothing is left half-written) or entries of a
tar or zip input skipped because of problems (each reported), 2 usage error.";

/// Merge archives into one.
#[derive(Debug, Parser)]
#[command(name = "barecat-merge", version, after_help = EXAMPLES)]
pub struct Args {
    /// The input archives
    #[arg(required = true, value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    /// The output archive
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
    /// Replace the output if it exists
    #[arg(short = 'f', long = "force", visible_alias = "overwrite")]
    pub force: bool,
    /// Add to the output if it exists (files already in it win)
    #[arg(short, long, conflicts_with = "force")]
    pub append: bool,
    /// Keep the first of several files with the same path instead of failing (the
    /// same as --duplicates first)
    #[arg(long, conflicts_with = "duplicates")]
    pub ignore_duplicates: bool,
    /// Several files with the same path (in two inputs, or twice in a tar input):
    /// keep the first, the last, or fail (the default, checked before anything is
    /// written where the inputs are barecat archives)
    #[arg(long, value_enum, value_name = "WHICH")]
    pub duplicates: Option<DuplicatesArg>,
    /// Link the inputs' shards instead of copying (see barecat-merge-symlink)
    #[arg(long, conflicts_with_all = ["append", "shard_size_limit"])]
    pub symlink: bool,
    #[command(flatten)]
    pub limit: ShardLimit,
    #[command(flatten)]
    pub quiet: Quiet,
    #[command(flatten)]
    pub sidecar: NoSidecar,
    /// Put each input's files below a directory named after the input
    #[arg(long)]
    pub as_subdirs: bool,
    /// Put every input's files below the directory PATH
    #[arg(long, value_name = "PATH")]
    pub prefix: Option<String>,
    /// Only take the files matching GLOB (their path in the input)
    #[arg(long, value_name = "GLOB", conflicts_with_all = ["include", "exclude", "symlink"])]
    pub pattern: Option<String>,
    /// Rule: take the files matching GLOB (rules are tried in command-line order;
    /// the first that matches decides; repeatable)
    #[arg(short = 'i', long, value_name = "GLOB", conflicts_with = "symlink")]
    pub include: Vec<String>,
    /// Rule: leave out the files matching GLOB (see -i; repeatable)
    #[arg(short = 'x', long, value_name = "GLOB", conflicts_with = "symlink")]
    pub exclude: Vec<String>,
    /// End abruptly after N steps of putting the output in place (for tests)
    #[arg(long, hide = true, value_name = "N")]
    pub crash_after_steps: Option<u64>,
    #[command(flatten)]
    pub remote: super::common::Remote,
}

pub fn run(cli: WithRules<Args>) -> anyhow::Result<ExitCode> {
    let WithRules { args, rules } = cli;
    let filter = match (&args.pattern, rules.is_empty()) {
        (Some(p), _) => Some(Arc::new(PathFilter::pattern(p, true)?)),
        (None, false) => Some(Arc::new(PathFilter::rules(&rules)?)),
        (None, true) => None,
    };
    let duplicates = match (args.duplicates, args.ignore_duplicates) {
        (Some(d), _) => d.into(),
        (None, true) => Duplicates::First,
        (None, false) => Duplicates::Error,
    };
    if args.symlink {
        if duplicates == Duplicates::Last {
            crate::usage!(
                "--symlink keeps the first of several files with the same path, not the last"
            );
        }
        return super::merge_symlink::run(super::merge_symlink::Args {
            inputs: args.inputs,
            output: args.output,
            force: args.force,
            ignore_duplicates: duplicates == Duplicates::First,
            as_subdirs: args.as_subdirs,
            prefix: args.prefix,
            quiet: args.quiet,
            sidecar: args.sidecar,
        });
    }
    let opts = MergeOptions {
        output_mode: if args.force {
            OutputMode::Overwrite
        } else if args.append {
            OutputMode::Append
        } else {
            OutputMode::New
        },
        shard_size_limit: args.limit.shard_size_limit,
        duplicates,
        crash_after_steps: args.crash_after_steps,
        sidecar: args.sidecar.enabled(),
        prefix: args.prefix.clone(),
        as_subdirs: args.as_subdirs,
        filter,
        index_mode: args.remote.index_mode,
    };
    let _stats = args.remote.stats_guard("barecat-merge");
    let progress = Progress::new(super::show_progress(args.quiet.quiet), "merging", None);
    let r = merge(&args.output, &args.inputs, &opts, &progress)
        .map_err(|e| super::common::explain(e, true))?;
    progress.finish();
    if !args.quiet.quiet {
        println!(
            "{}: merged {} files ({}) from {} input(s){}{}",
            args.output.display(),
            r.files,
            human(r.bytes),
            r.inputs,
            if r.duplicates_skipped > 0 {
                format!(", {} duplicate(s) left out", r.duplicates_skipped)
            } else {
                String::new()
            },
            if r.problems > 0 {
                format!(
                    ", {} entries skipped because of problems reported above",
                    r.problems
                )
            } else {
                String::new()
            }
        );
        super::records::print_table_action(&args.output, r.records_table);
    }
    Ok(if r.problems > 0 {
        ExitCode::from(super::FAILURE)
    } else {
        ExitCode::SUCCESS
    })
}
