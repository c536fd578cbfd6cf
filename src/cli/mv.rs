//! `barecat-mv`: move or rename files and directories inside an archive.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

use super::common::{NoSidecar, Quiet};
use crate::core::index::Index;
use crate::core::path::printable;
use crate::edit::{self, Move, MoveOptions};
use crate::Layout;

const EXAMPLES: &str = "\
Examples:
  barecat mv data.barecat train/a.jpg train/b.jpg      # rename a file
  barecat mv data.barecat val test                     # rename a directory (all below it)
  barecat mv data.barecat 'train/*.jpg' images         # into an existing directory
  barecat mv -T data.barecat old/sub new               # new is the name, not a parent
  barecat mv -n -v data.barecat 'raw/**/*.png' png     # show the moves, change nothing

SOURCE: a file or directory of the archive, or a glob (as barecat-rm takes them).
When DEST is an existing directory the sources move into it, keeping their names;
otherwise the one SOURCE is renamed to DEST. Missing parent directories of the
new paths are made. An existing file at the new path is replaced only with -f,
and a directory only with -f when it is empty.

Only index rows change, in one transaction: a killed run leaves the archive as it
was or as it is after, with right directory statistics (Python barecat's rename
into a missing directory breaks them). Python barecat has this only in its API
(Barecat.rename).

Exit status: 0 success, 1 if a SOURCE could not be moved (each one is reported;
the others are moved), 2 usage error.";

/// Move or rename files and directories inside an archive.
#[derive(Debug, Parser)]
#[command(
    name = "barecat-mv",
    version,
    after_help = EXAMPLES,
    override_usage = "barecat-mv [OPTIONS] ARCHIVE SOURCE... DEST"
)]
pub struct Args {
    /// The archive (its index file, e.g. data.barecat)
    #[arg(value_name = "ARCHIVE")]
    pub archive: PathBuf,
    /// What to move, then where: SOURCE... DEST
    #[arg(value_name = "SOURCE|DEST", num_args = 2.., required = true)]
    pub paths: Vec<String>,
    /// Treat DEST as the new name even when it is an existing directory
    #[arg(short = 'T', long)]
    pub no_target_directory: bool,
    /// Replace an existing file, or an empty directory, at the new path
    #[arg(short, long)]
    pub force: bool,
    /// Print what would be moved, and move nothing
    #[arg(short = 'n', long)]
    pub dry_run: bool,
    /// Print each move
    #[arg(short, long)]
    pub verbose: bool,
    #[command(flatten)]
    pub quiet: Quiet,
    #[command(flatten)]
    pub sidecar: NoSidecar,
}

fn describe(m: &Move) -> String {
    format!(
        "{}{} -> {}",
        printable(m.from.path()),
        if m.from.is_dir() { "/" } else { "" },
        printable(&m.to)
    )
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    const PROG: &str = "barecat-mv";
    let (dest, sources) = args.paths.split_last().expect("clap requires two");
    let opts = MoveOptions {
        no_target_directory: args.no_target_directory,
        force: args.force,
    };
    let mut failed = 0usize;
    let mut report = |e: &crate::Error| {
        eprintln!("{PROG}: {e}");
        failed += 1;
    };
    let moved = if args.dry_run {
        if !Layout::exists(&args.archive)? {
            anyhow::bail!("{}: no such archive", args.archive.display());
        }
        let index = Index::open_read(Layout::resolve(&args.archive).index())
            .with_context(|| format!("cannot open {}", args.archive.display()))?;
        let plan = edit::plan_moves(&index, sources, dest, opts)?;
        plan.problems.iter().for_each(&mut report);
        for m in &plan.items {
            println!("would move: {}", describe(m));
        }
        plan.items.len()
    } else {
        let mut w = edit::open_writer(&args.archive, args.sidecar.enabled())
            .with_context(|| format!("cannot write to {}", args.archive.display()))?;
        let plan = edit::plan_moves(w.index(), sources, dest, opts)?;
        plan.problems.iter().for_each(&mut report);
        let verbose = args.verbose;
        let mut n = 0usize;
        let problems = edit::apply_moves(&mut w, &plan.items, args.force, &mut |m| {
            n += 1;
            if verbose {
                println!("moved: {}", describe(m));
            }
        })?;
        problems.iter().for_each(&mut report);
        w.finish()?;
        n
    };
    if !args.quiet.quiet {
        eprintln!(
            "{PROG}: {} {} {} in {}",
            if args.dry_run { "would move" } else { "moved" },
            moved,
            if moved == 1 { "entry" } else { "entries" },
            args.archive.display()
        );
    }
    Ok(if failed > 0 {
        ExitCode::from(super::FAILURE)
    } else {
        ExitCode::SUCCESS
    })
}
