//! `barecat-rsync`: rsync-style sync between local paths and `ARCHIVE::PATH`.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

use super::common::{NoSidecar, Quiet, Workers};
use crate::core::progress::Progress;
use crate::core::size::human;
use crate::sync::{parse_endpoint, sync, Note, Side, SyncOptions};

const EXAMPLES: &str = "\
Examples:
  barecat rsync photos/ data.barecat::            # the contents of photos/ into the root
  barecat rsync photos data.barecat::              # as data.barecat::photos
  barecat rsync -v --delete photos/ data.barecat::photos
  barecat rsync data.barecat::train/ out/          # extract the contents of train
  barecat rsync data.barecat:: out/                # into out/data/
  barecat rsync -c a.barecat::/ b.barecat::        # archive to archive, by checksum
  barecat rsync -n -u --exclude '*.tmp' src/ data.barecat::src

ARCHIVE::PATH names a path inside an archive ('ARCHIVE::' its root; '\\::' and '\\\\'
escape a literal '::' and '\\'). A SOURCE ending in '/' stands for its contents;
without it, its last name is made below DEST (for an archive's root, the archive's
name without .barecat). Local to archive, archive to local, archive to archive; a
missing DEST archive is created.

A file whose copy at DEST has the same size and modification time is skipped;
with -c, the same CRC32C; with -u, a copy as new or newer is kept. Only files are
synced (their directories are made as needed), with their mode, owner and
modification time; a symbolic link to a file is synced as that file, links to
directories are not followed. --delete removes the files of DEST that no SOURCE has, within
the directories the SOURCEs are synced into (Python barecat's rsync also deletes
outside them). --include and --exclude are shell patterns matched against names
(an include overrides an exclude); excluded names are neither copied nor deleted.

Lines as Python barecat prints them: 'add: PATH', 'update: PATH', 'copy: PATH',
'extract: LOCAL', 'delete: PATH' with -v, also 'skip (unchanged): PATH', 'skip
(newer): PATH', 'skip (checksum match): PATH'; with -n, 'would add: PATH', 'would
update: PATH', 'would copy: SRC -> DEST', 'would extract: LOCAL', 'would delete:
PATH', and nothing changes. A killed run leaves an archive that reads back, each
file with its old or new content; running the same command again finishes it.

Exit status: 0 success, 1 if a file could not be synced (each one is reported; the
others are synced) or a SOURCE does not exist, 2 usage error.";

/// Sync files between local paths and archives, like rsync.
#[derive(Debug, Parser)]
#[command(
    name = "barecat-rsync",
    version,
    after_help = EXAMPLES,
    override_usage = "barecat-rsync [OPTIONS] SOURCE... DEST"
)]
pub struct Args {
    /// Sources, then the destination: local paths or ARCHIVE::PATH
    #[arg(value_name = "SOURCE|DEST", num_args = 2.., required = true)]
    pub paths: Vec<String>,
    /// Print what would be done, and change nothing
    #[arg(short = 'n', long)]
    pub dry_run: bool,
    /// Print a line for every file (and a summary on stderr)
    #[arg(short, long)]
    pub verbose: bool,
    /// Show a progress bar (on stderr, when it is a terminal)
    #[arg(long)]
    pub progress: bool,
    /// Delete the files of DEST that no SOURCE has
    #[arg(long)]
    pub delete: bool,
    /// Compare files by CRC32C, not by size and modification time
    #[arg(short = 'c', long)]
    pub checksum: bool,
    /// Keep files whose copy at DEST is as new or newer
    #[arg(short = 'u', long)]
    pub update: bool,
    /// Do not exclude names matching PATTERN (overrides --exclude; repeatable)
    #[arg(long, value_name = "PATTERN")]
    pub include: Vec<String>,
    /// Leave out names matching PATTERN (repeatable)
    #[arg(long, value_name = "PATTERN")]
    pub exclude: Vec<String>,
    #[command(flatten)]
    pub workers: Workers,
    #[command(flatten)]
    pub quiet: Quiet,
    #[command(flatten)]
    pub sidecar: NoSidecar,
    /// Commit at least every MS milliseconds (testing aid)
    #[arg(long, value_name = "MS", hide = true)]
    pub commit_interval_ms: Option<u64>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    const PROG: &str = "barecat-rsync";
    let mut endpoints = Vec::with_capacity(args.paths.len());
    for p in &args.paths {
        match parse_endpoint(p) {
            Ok(e) => endpoints.push(e),
            Err(e) => crate::usage!("{e}"),
        }
    }
    let dest = endpoints.pop().expect("clap requires two");
    if endpoints
        .iter()
        .chain([&dest])
        .all(|e| matches!(e.side, Side::Local(_)))
    {
        crate::usage!(
            "no ARCHIVE::PATH among the arguments: barecat rsync copies between local \
             paths and archives (for local to local, use rsync)"
        );
    }
    if matches!(dest.side, Side::Local(_))
        && endpoints.iter().any(|e| matches!(e.side, Side::Local(_)))
    {
        crate::usage!(
            "a local SOURCE needs an archive DEST (ARCHIVE::PATH); copy between local \
             directories with rsync itself"
        );
    }
    let opts = SyncOptions {
        dry_run: args.dry_run,
        verbose: args.verbose,
        delete: args.delete,
        checksum: args.checksum,
        update: args.update,
        include: args.include.clone(),
        exclude: args.exclude.clone(),
        commit_interval: args.commit_interval_ms.map(Duration::from_millis),
        sidecar: args.sidecar.enabled(),
        workers: args.workers.get(),
    };
    let progress = Progress::new(
        args.progress && super::show_progress(args.quiet.quiet),
        "syncing",
        None,
    );
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut write_err: Option<std::io::Error> = None;
    let report = sync(&endpoints, &dest, &opts, &progress, &mut |n| match n {
        Note::Line(l) => {
            if write_err.is_none() {
                if let Err(e) = writeln!(out, "{l}") {
                    write_err = Some(e);
                }
            }
        }
        Note::Problem(e) => progress.println(&format!("{PROG}: {e}")),
    });
    progress.finish();
    if let Some(e) = write_err {
        return Err(e.into());
    }
    out.flush()?;
    let report = report?;
    if args.verbose && !args.quiet.quiet {
        eprintln!(
            "{PROG}: {}{} added, {} updated, {} skipped, {} deleted; {} copied{}",
            if args.dry_run { "would be: " } else { "" },
            report.added,
            report.updated,
            report.skipped,
            report.deleted,
            human(report.bytes),
            if report.problems > 0 {
                format!("; {} problems reported above", report.problems)
            } else {
                String::new()
            }
        );
    }
    Ok(if report.problems > 0 {
        ExitCode::from(super::FAILURE)
    } else {
        ExitCode::SUCCESS
    })
}
