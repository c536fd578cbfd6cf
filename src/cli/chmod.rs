//! `barecat-chmod`: change the permission bits stored for files and directories.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

use super::common::{NoSidecar, Quiet};
use crate::core::entry::{Entry, Meta, S_IFMT};
use crate::core::index::Index;
use crate::edit::{self, MetaChange, ModeSpec};
use crate::Layout;

const EXAMPLES: &str = "\
Examples:
  barecat chmod data.barecat 644 labels.csv
  barecat chmod -R data.barecat a+rX train          # directories searchable, files readable
  barecat chmod data.barecat go-w 'scripts/*.sh'
  barecat chmod -n -v -R data.barecat 750 bin

MODE: octal (644, 0755) or symbolic like chmod(1): [ugoa...][+-=][rwxXst...],
several separated by commas. The file-type bits stored with the mode are kept.
PATH: a file or directory, or a glob (as barecat-rm takes them).

Only the index rows change, in one transaction. barecat-extract restores these
bits; Python barecat's `ls -l` shows them. Python barecat has this only in its API
(Index.chmod).

Exit status: 0 success, 1 if a PATH could not be changed (each one is reported),
2 usage error.";

/// Change the permission bits stored for files and directories.
#[derive(Debug, Parser)]
#[command(
    name = "barecat-chmod",
    version,
    after_help = EXAMPLES,
    override_usage = "barecat-chmod [OPTIONS] ARCHIVE MODE PATH..."
)]
pub struct Args {
    /// The archive (its index file, e.g. data.barecat)
    #[arg(value_name = "ARCHIVE")]
    pub archive: PathBuf,
    /// The new mode: octal, or symbolic (u+x, go-w, a=rX)
    #[arg(value_name = "MODE", value_parser = parse_mode)]
    pub mode: ModeSpec,
    /// Files, directories or globs
    #[arg(value_name = "PATH|GLOB", required = true)]
    pub paths: Vec<String>,
    /// Also change everything below the directories named
    #[arg(short = 'R', long)]
    pub recursive: bool,
    /// Print what would change, and change nothing
    #[arg(short = 'n', long)]
    pub dry_run: bool,
    /// Print each change
    #[arg(short, long)]
    pub verbose: bool,
    #[command(flatten)]
    pub quiet: Quiet,
    #[command(flatten)]
    pub sidecar: NoSidecar,
}

/// MODE as clap takes it (the library parses it).
fn parse_mode(s: &str) -> Result<ModeSpec, String> {
    edit::parse_mode(s).map_err(|e| e.to_string())
}

/// `rw-r--r--` for messages.
fn rwx(mode: u32) -> String {
    crate::listing::mode_string(Some(mode & 0o7777), false)[1..].to_string()
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    const PROG: &str = "barecat-chmod";
    let spec = args.mode.clone();
    let new_meta = move |e: &Entry| {
        let meta = *e.meta();
        let old = meta.mode.unwrap_or(0);
        Meta {
            mode: Some((old & S_IFMT) | spec.apply(old, e.is_dir())),
            ..meta
        }
    };
    let mut failed = 0usize;
    let mut report = |e: &crate::Error| {
        eprintln!("{PROG}: {e}");
        failed += 1;
    };
    let line = |c: &MetaChange| {
        format!(
            "{} {} -> {}",
            crate::core::path::printable(c.entry.path()),
            c.entry.meta().mode.map_or("(none)".into(), rwx),
            rwx(c.meta.mode.unwrap_or(0))
        )
    };
    let changed = if args.dry_run {
        if !Layout::exists(&args.archive)? {
            anyhow::bail!("{}: no such archive", args.archive.display());
        }
        let index = Index::open_read(Layout::resolve(&args.archive).index())
            .with_context(|| format!("cannot open {}", args.archive.display()))?;
        let plan = edit::plan_meta(&index, &args.paths, args.recursive, &new_meta)?;
        plan.problems.iter().for_each(&mut report);
        for c in &plan.items {
            println!("would change: {}", line(c));
        }
        plan.items.len()
    } else {
        let mut w = edit::open_writer(&args.archive, args.sidecar.enabled())
            .with_context(|| format!("cannot write to {}", args.archive.display()))?;
        let plan = edit::plan_meta(w.index(), &args.paths, args.recursive, &new_meta)?;
        plan.problems.iter().for_each(&mut report);
        let mut n = 0usize;
        let verbose = args.verbose;
        let problems = edit::apply_meta(&mut w, &plan.items, &mut |c| {
            n += 1;
            if verbose {
                println!("changed: {}", line(c));
            }
        })?;
        problems.iter().for_each(&mut report);
        w.finish()?;
        n
    };
    if !args.quiet.quiet {
        eprintln!(
            "{PROG}: {} the mode of {} {} in {}",
            if args.dry_run {
                "would change"
            } else {
                "changed"
            },
            changed,
            if changed == 1 { "entry" } else { "entries" },
            args.archive.display()
        );
    }
    Ok(if failed > 0 {
        ExitCode::from(super::FAILURE)
    } else {
        ExitCode::SUCCESS
    })
}
