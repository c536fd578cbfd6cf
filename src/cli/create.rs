//! `barecat-create`: build an archive from files and directories, or from a list of
//! paths (`find … | barecat-create out.barecat`).
//!
//! The same program accepts the legacy form of Python barecat's `barecat-create`:
//! `barecat-create --file OUT [--null] [--workers N] [--shard-size-limit S]
//! [--overwrite] < paths`.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::Parser;

use super::common::{IoWorkers, NoSidecar, Quiet, ShardLimit};
use super::ingest::{conclude, open_output, plain, ModeArgs, Reporter, SelectArgs};
use crate::core::progress::Progress;
use crate::core::writer::CreateMode;
use crate::ingest::{self, FsInput, ListInput};
use crate::usage;

const EXAMPLES: &str = "\
Examples:
  barecat-create data.barecat images/ labels.csv   # walk directories, add files
  find images -name '*.jpg' | barecat-create data.barecat
  find images -type f -print0 | barecat-create -0 data.barecat
  barecat-create -C /datasets/coco data.barecat train2017 val2017
  barecat-create -s 10G -j 64 data.barecat images/  # 10 GiB shards, 64 readers (NFS)
  barecat-create --exclude '*.tmp' -i '**/*.jpg' data.barecat images/
  barecat-create --resume data.barecat images/     # after an interruption
  barecat-create -a data.barecat more_images/      # add to an existing archive

Paths are stored as given, normalized: 'images/./a.jpg' is stored as
'images/a.jpg', a leading '/' is removed, and paths with '..' are refused (use -C).
Directories are walked recursively in name order without following symbolic links
to directories; a symbolic link to a file is stored as a file with its content.
Listed paths (stdin, -T) are not walked. The result is the same whatever -j is.

Files that vanish, cannot be read, change while being read, have a name that is
not UTF-8, or duplicate a stored path are reported, skipped, and make the exit
status 1 (--strict stops at the first one). A killed run leaves a readable
archive of what was committed; --resume finishes it.

Legacy form (Python barecat): barecat-create --file OUT [--null] [--workers N]
[--shard-size-limit S] [--overwrite] < paths

Exit status: 0 all added, 1 some entries skipped or an error, 2 usage error.";

/// Create an archive from files and directories, or from a list of paths on stdin.
#[derive(Debug, Parser)]
#[command(
    name = "barecat-create",
    version,
    after_help = EXAMPLES,
    override_usage = "barecat-create [OPTIONS] ARCHIVE [PATH]...\n       find DIR | barecat-create [OPTIONS] ARCHIVE"
)]
pub struct Args {
    /// The archive to create (its index file; shards are ARCHIVE-shard-NNNNN)
    #[arg(required_unless_present = "file", value_name = "ARCHIVE")]
    pub archive: Option<PathBuf>,
    /// Files and directories to add; without any (and without -T) the list of
    /// paths is read from stdin
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Read the list of paths to add from FILE ('-' for stdin), one per line;
    /// repeatable
    #[arg(short = 'T', long, value_name = "FILE")]
    pub files_from: Vec<PathBuf>,
    /// Paths in lists are terminated by NUL characters (find -print0)
    #[arg(short = '0', long)]
    pub null: bool,
    /// Read the paths relative to DIR (ARCHIVE and -T lists are not affected)
    #[arg(short = 'C', long, value_name = "DIR")]
    pub directory: Option<PathBuf>,
    #[command(flatten)]
    pub mode: ModeArgs,
    #[command(flatten)]
    pub select: SelectArgs,
    #[command(flatten)]
    pub limit: ShardLimit,
    #[command(flatten)]
    pub workers: IoWorkers,
    #[command(flatten)]
    pub quiet: Quiet,
    #[command(flatten)]
    pub sidecar: NoSidecar,
    /// Legacy: the archive to create (paths come from stdin)
    #[arg(long, value_name = "OUT", hide = true)]
    pub file: Option<PathBuf>,
    /// Legacy: overwrite an existing archive (same as -f)
    #[arg(long, hide = true)]
    pub overwrite: bool,
    /// Accepted for compatibility with Python barecat (which sorts the files by
    /// their place on disk first); no effect: many readers already run at once
    #[arg(long)]
    pub physical_order: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    run_as(args, "barecat-create")
}

const ADD_EXAMPLES: &str = "\
Examples:
  barecat add data.barecat more_images/          # add to an existing archive
  barecat a -c data.barecat images/              # create it if missing
  find new -name '*.jpg' | barecat add data.barecat
  barecat add -C /datasets/coco data.barecat test2017
  barecat add --resume data.barecat more_images/ # after an interruption

The same as barecat-create -a, except that a missing archive is an error unless
-c is given. Paths are stored as barecat-create stores them; a path already in
the archive is reported and skipped (exit status 1). Without -s the archive keeps
its shard size limit (Python barecat's add resets it to unlimited).

Exit status: 0 all added, 1 some entries skipped or an error, 2 usage error.";

/// Add files and directories to an existing archive (Python barecat's `add`).
#[derive(Debug, Parser)]
#[command(
    name = "barecat-add",
    version,
    after_help = ADD_EXAMPLES,
    override_usage = "barecat-add [OPTIONS] ARCHIVE [PATH]...\n       find DIR | barecat-add [OPTIONS] ARCHIVE"
)]
pub struct AddArgs {
    /// The archive to add to
    #[arg(value_name = "ARCHIVE")]
    pub archive: PathBuf,
    /// Files and directories to add; without any (and without -T) the list of
    /// paths is read from stdin
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Read the list of paths to add from FILE ('-' for stdin), one per line;
    /// repeatable
    #[arg(short = 'T', long, value_name = "FILE")]
    pub files_from: Vec<PathBuf>,
    /// Paths in lists are terminated by NUL characters (find -print0)
    #[arg(short = '0', long)]
    pub null: bool,
    /// Read the paths relative to DIR (ARCHIVE and -T lists are not affected)
    #[arg(short = 'C', long, value_name = "DIR")]
    pub directory: Option<PathBuf>,
    /// Create the archive if it does not exist
    #[arg(short = 'c', long)]
    pub create: bool,
    /// Finish an interrupted run: remove the bytes the interrupted writer left
    /// behind and skip every path already in the archive
    #[arg(long)]
    pub resume: bool,
    #[command(flatten)]
    pub select: SelectArgs,
    #[command(flatten)]
    pub limit: ShardLimit,
    #[command(flatten)]
    pub workers: IoWorkers,
    #[command(flatten)]
    pub quiet: Quiet,
    #[command(flatten)]
    pub sidecar: NoSidecar,
    /// Accepted for compatibility with Python barecat; no effect (see barecat-create)
    #[arg(long)]
    pub physical_order: bool,
}

/// `barecat add` (`barecat a`, `barecat-add`).
pub fn run_add(args: AddArgs) -> anyhow::Result<ExitCode> {
    if !args.create && !args.resume && !crate::Layout::exists(&args.archive).map_err(plain)? {
        anyhow::bail!(
            "Archive '{}' does not exist. Use 'barecat create' or 'barecat add -c'.",
            args.archive.display()
        );
    }
    run_as(
        Args {
            archive: Some(args.archive),
            paths: args.paths,
            files_from: args.files_from,
            null: args.null,
            directory: args.directory,
            mode: ModeArgs {
                force: false,
                append: !args.resume,
                resume: args.resume,
            },
            select: args.select,
            limit: args.limit,
            workers: args.workers,
            quiet: args.quiet,
            sidecar: args.sidecar,
            file: None,
            overwrite: false,
            physical_order: args.physical_order,
        },
        "barecat-add",
    )
}

fn run_as(args: Args, prog: &'static str) -> anyhow::Result<ExitCode> {
    let mut paths = args.paths.clone();
    let (archive, mode) = match &args.file {
        // Legacy form: every positional argument is a path to add.
        Some(out) => {
            if let Some(a) = &args.archive {
                paths.insert(0, a.clone());
            }
            let mode = if args.overwrite || args.mode.force {
                CreateMode::Overwrite
            } else {
                args.mode.mode()
            };
            (out.clone(), mode)
        }
        None => {
            let Some(a) = args.archive.clone() else {
                usage!("the ARCHIVE argument is missing");
            };
            let mode = if args.overwrite {
                CreateMode::Overwrite
            } else {
                args.mode.mode()
            };
            (a, mode)
        }
    };
    let mut lists: Vec<ListInput> = args
        .files_from
        .iter()
        .map(|f| {
            if f.as_os_str() == "-" {
                ListInput::Stdin
            } else {
                ListInput::File(f.clone())
            }
        })
        .collect();
    if paths.is_empty() && lists.is_empty() {
        if std::io::stdin().is_terminal() {
            usage!("no PATH given: give files or directories, or pipe a list of paths to stdin");
        }
        lists.push(ListInput::Stdin);
    }
    if lists.iter().filter(|l| **l == ListInput::Stdin).count() > 1 {
        usage!("standard input can be read only once");
    }
    if let Some(dir) = &args.directory {
        if !dir.is_dir() {
            usage!("-C {}: not a directory", dir.display());
        }
    }
    let resume = args.mode.resume;
    let mut opts = args.select.options(args.workers.get(), resume)?;
    // A path given twice is the same file: the second is reported and skipped.
    opts.duplicates = crate::ingest::Duplicates::First;
    let input = FsInput {
        paths,
        lists,
        null: args.null,
        base: args.directory.clone(),
    };

    let mut w = open_output(
        &archive,
        args.sidecar.apply(
            args.select
                .writer_options(mode, args.limit.shard_size_limit),
        ),
    )?;
    let quiet = args.quiet.quiet;
    let progress = Progress::new(!quiet, "adding", None);
    let mut reporter = Reporter::new(prog, quiet, &progress);
    if resume {
        let trimmed = w.trim_garbage().map_err(plain)?;
        if trimmed > 0 {
            reporter.event(ingest::Event::Notice(&format!(
                "resuming: removed {} left behind by the interrupted run",
                crate::core::size::human(trimmed)
            )));
        }
    }
    let stop = AtomicBool::new(false);
    let result = std::thread::scope(|s| {
        if super::show_progress(quiet) && !input.paths.is_empty() {
            let (input, stop, progress) = (&input, &stop, &progress);
            s.spawn(move || {
                if let Some((_, bytes)) = ingest::fs::scan_totals(input, stop) {
                    progress.set_total(bytes);
                }
            });
        }
        let r = ingest::add_paths(&mut w, &input, &opts, &mut |e| reporter.event(e));
        stop.store(true, Ordering::Relaxed);
        r
    });
    conclude(w, result, &reporter, mode)
}
