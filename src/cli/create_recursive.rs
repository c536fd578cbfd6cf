//! `barecat-create-recursive`: Python barecat's legacy program that packs the
//! contents of directories, each stored relative to its own root
//! (`barecat-create-recursive --file OUT DIR…`: `DIR/a/b.jpg` is stored as
//! `a/b.jpg`, the roots themselves are not stored).
//!
//! It is `barecat create -C DIR OUT .` for every DIR in turn, into one archive.
//! Unlike Python barecat it stores the shard size limit it was given, needs no
//! limit to run, and uses as many readers as `--workers` says (docs/FORMAT.md §11.5).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use super::common::{NoSidecar, Quiet, ShardLimit};
use super::ingest::{conclude, open_output, Reporter};
use crate::core::progress::Progress;
use crate::core::writer::{CreateMode, WriterOptions};
use crate::ingest::{self, Duplicates, FsInput, Summary};
use crate::usage;

const EXAMPLES: &str = "\
Examples:
  barecat-create-recursive --file data.barecat images/     # images/a/b.jpg -> a/b.jpg
  barecat-create-recursive --file data.barecat --shard-size-limit 10G train/ val/
  barecat-create-recursive --file data.barecat --overwrite images/

Each DIR is walked recursively in name order and its contents are stored relative
to it, so the contents of several DIRs end up side by side at the top of the
archive; a path found under two of them is reported and skipped. --strip-root and
--physical-order are accepted for compatibility (the root is always stripped, as in
Python barecat). The same as `barecat create -C DIR OUT .` for each DIR.

Exit status: 0 all added, 1 some entries skipped or an error, 2 usage error.";

/// Pack the contents of directories, stored relative to each directory
/// (Python barecat's legacy program).
#[derive(Debug, Parser)]
#[command(name = "barecat-create-recursive", version, after_help = EXAMPLES)]
pub struct Args {
    /// The archive to create
    #[arg(long, value_name = "OUT")]
    pub file: PathBuf,
    /// Directories whose contents to pack
    #[arg(value_name = "DIR", required = true)]
    pub paths: Vec<PathBuf>,
    /// Reader threads (0: the default, 16 or the number of cores if larger)
    #[arg(short = 'j', long, value_name = "N", value_parser = parse_workers)]
    pub workers: Option<usize>,
    #[command(flatten)]
    pub limit: ShardLimit,
    /// Replace an existing archive
    #[arg(long, visible_alias = "force")]
    pub overwrite: bool,
    /// Accepted for compatibility; no effect
    #[arg(long)]
    pub physical_order: bool,
    /// Accepted for compatibility; the roots are always stripped
    #[arg(long)]
    pub strip_root: bool,
    #[command(flatten)]
    pub quiet: Quiet,
    #[command(flatten)]
    pub sidecar: NoSidecar,
}

fn parse_workers(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n <= 1024 => Ok(n),
        _ => Err(format!(
            "{s:?} is not a number of threads between 0 and 1024"
        )),
    }
}

/// Add `b`'s counts to `a`.
fn add_up(a: &mut Summary, b: &Summary) {
    a.files += b.files;
    a.bytes += b.bytes;
    a.dirs += b.dirs;
    a.problems += b.problems;
    a.symlinks += b.symlinks;
    a.special += b.special;
    a.hardlinks += b.hardlinks;
    a.existing += b.existing;
    a.replaced += b.replaced;
    a.replaced_bytes += b.replaced_bytes;
    a.replaced_reported += b.replaced_reported;
    a.duplicates_skipped += b.duplicates_skipped;
    a.elapsed += b.elapsed;
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    const PROG: &str = "barecat-create-recursive";
    for root in &args.paths {
        if !root.is_dir() {
            usage!("{}: not a directory", root.display());
        }
    }
    let workers = match args.workers {
        Some(n) if n > 0 => n,
        _ => super::common::default_workers().max(super::common::IO_WORKERS),
    };
    let mode = if args.overwrite {
        CreateMode::Overwrite
    } else {
        CreateMode::New
    };
    let mut opts = super::ingest::SelectArgs::default().options(workers, false)?;
    opts.buffer_size = crate::ingest::DEFAULT_BUFFER_SIZE;
    opts.duplicates = Duplicates::First;
    let wopts = WriterOptions {
        mode,
        shard_size_limit: args.limit.shard_size_limit,
        ..WriterOptions::default()
    };
    let mut w = open_output(&args.file, args.sidecar.apply(wopts))?;
    let quiet = args.quiet.quiet;
    let progress = Progress::new(!quiet, "adding", None);
    let mut reporter = Reporter::new(PROG, quiet, &progress);
    let mut total = Summary::default();
    let mut result = Ok(());
    for root in &args.paths {
        let input = FsInput {
            paths: vec![PathBuf::from(".")],
            lists: Vec::new(),
            null: false,
            base: Some(root.clone()),
        };
        match ingest::add_paths(&mut w, &input, &opts, &mut |e| reporter.event(e)) {
            Ok(s) => add_up(&mut total, &s),
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    conclude(w, result.map(|()| total), &reporter, mode)
}
