//! `barecat-rm`: remove files and directories from an archive.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

use super::common::{NoSidecar, Quiet};
use crate::core::index::Index;
use crate::core::size::human;
use crate::edit::{self, Removal, RemoveOptions};
use crate::{Layout, Removed};

const EXAMPLES: &str = "\
Examples:
  barecat rm data.barecat train/cls_001/img_17.jpg
  barecat rm -r data.barecat train/cls_002          # a directory and everything below
  barecat rm data.barecat 'val/**/*.tmp'            # a glob (quote it)
  barecat rm -n -r data.barecat 'train/cls_0*'      # show what would go, change nothing
  barecat rm -T doomed.txt data.barecat             # paths listed in a file
  find . -name '*.bak' -print0 | barecat rm -0 -T - data.barecat

PATH: a file or directory of the archive; one that does not exist but holds *, ?
or [ is a glob with Python glob semantics (* and ? stay within a directory, **
spans directories, names starting with '.' are matched only by a pattern that
spells the dot). A directory is removed only with -r (with everything below it)
or -d (when empty, or emptied by the same command).

Everything goes in one transaction: a killed run leaves the archive as it was or
as it is after, and the directory statistics stay right. The rows are removed; the
bytes at the end of the last shard are given back at once, the others stay as
holes that barecat-defrag reclaims. Python barecat has this only in its API
(Barecat.remove, rmtree).

Exit status: 0 success, 1 if a PATH could not be removed (each one is reported;
the others are removed), 2 usage error.";

/// Remove files and directories from an archive.
#[derive(Debug, Parser)]
#[command(name = "barecat-rm", version, after_help = EXAMPLES)]
pub struct Args {
    /// The archive (its index file, e.g. data.barecat)
    #[arg(value_name = "ARCHIVE")]
    pub archive: PathBuf,
    /// Files, directories or globs to remove
    #[arg(value_name = "PATH|GLOB", required_unless_present = "files_from")]
    pub paths: Vec<String>,
    /// Remove directories and everything below them
    #[arg(short = 'r', short_alias = 'R', long)]
    pub recursive: bool,
    /// Remove empty directories
    #[arg(short = 'd', long = "dir")]
    pub empty_dirs: bool,
    /// Do not complain about paths that do not exist
    #[arg(short, long)]
    pub force: bool,
    /// Read more paths from FILE ('-' for stdin), one per line
    #[arg(short = 'T', long, value_name = "FILE")]
    pub files_from: Option<PathBuf>,
    /// Paths in the -T list are terminated by NUL characters
    #[arg(short = '0', long)]
    pub null: bool,
    /// Print what would be removed, and remove nothing
    #[arg(short = 'n', long)]
    pub dry_run: bool,
    /// Print each path removed
    #[arg(short, long)]
    pub verbose: bool,
    #[command(flatten)]
    pub quiet: Quiet,
    #[command(flatten)]
    pub sidecar: NoSidecar,
}

/// One line for a removal: `removed: PATH` or `removed: DIR/ (N files, SIZE)`.
fn describe(r: &Removal, totals: &Removed) -> String {
    let path = crate::core::path::printable(r.path()).into_owned();
    match r {
        Removal::File(_) => path,
        Removal::Tree(..) => format!(
            "{path}/ ({} {}, {})",
            totals.files,
            if totals.files == 1 { "file" } else { "files" },
            human(totals.bytes)
        ),
        Removal::EmptyDir(_) => format!("{path}/"),
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    const PROG: &str = "barecat-rm";
    let mut operands = args.paths.clone();
    if let Some(list) = &args.files_from {
        operands.extend(crate::core::list::read_entries(list, args.null)?);
    }
    let opts = RemoveOptions {
        recursive: args.recursive,
        empty_dirs: args.empty_dirs,
        force: args.force,
    };
    let quiet = args.quiet.quiet;
    let mut failed = 0usize;
    let mut report = |e: &crate::Error| {
        eprintln!("{PROG}: {e}");
        failed += 1;
    };
    let (total, trimmed) = if args.dry_run {
        let layout = Layout::resolve(&args.archive);
        if !Layout::exists(&args.archive)? {
            anyhow::bail!("{}: no such archive", args.archive.display());
        }
        let index = Index::open_read(layout.index())
            .with_context(|| format!("cannot open {}", args.archive.display()))?;
        let plan = edit::plan_removal(&index, &operands, opts)?;
        plan.problems.iter().for_each(&mut report);
        let mut total = Removed::default();
        for item in &plan.items {
            let t = item.totals();
            println!("would remove: {}", describe(item, &t));
            total.files += t.files;
            total.bytes += t.bytes;
            total.dirs += t.dirs;
        }
        (total, None)
    } else {
        let mut w = edit::open_writer(&args.archive, args.sidecar.enabled())
            .with_context(|| format!("cannot write to {}", args.archive.display()))?;
        let plan = edit::plan_removal(w.index(), &operands, opts)?;
        plan.problems.iter().for_each(&mut report);
        let verbose = args.verbose;
        let (total, problems) = edit::remove(&mut w, &plan.items, &mut |item, r| {
            if verbose {
                println!("removed: {}", describe(item, r));
            }
        })?;
        problems.iter().for_each(&mut report);
        (total, Some(edit::finish_removal(w)?))
    };
    if !quiet {
        let mut line = format!(
            "{PROG}: {} {} {} ({}) and {} {} {} {}",
            if args.dry_run {
                "would remove"
            } else {
                "removed"
            },
            total.files,
            if total.files == 1 { "file" } else { "files" },
            human(total.bytes),
            total.dirs,
            if total.dirs == 1 {
                "directory"
            } else {
                "directories"
            },
            "from",
            args.archive.display()
        );
        if let Some(trimmed) = trimmed {
            let holes = total.bytes.saturating_sub(trimmed);
            if holes > 0 {
                line += &format!(
                    "; {} left as holes (barecat-defrag reclaims them)",
                    human(holes)
                );
            }
        }
        eprintln!("{line}");
    }
    Ok(if failed > 0 {
        ExitCode::from(super::FAILURE)
    } else {
        ExitCode::SUCCESS
    })
}
