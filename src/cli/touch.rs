//! `barecat-touch`: set the modification time stored for files and directories,
//! creating empty files for paths that do not exist.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

use super::common::{NoSidecar, Quiet};
use crate::core::entry::{Entry, Meta};
use crate::core::glob::has_wildcards;
use crate::core::index::Index;
use crate::core::path as mpath;
use crate::edit::{self, MetaChange};
use crate::Layout;

const EXAMPLES: &str = "\
Examples:
  barecat touch data.barecat labels.csv              # mtime = now
  barecat touch data.barecat train/.done             # a new empty file
  barecat touch -d 2024-01-31 -R data.barecat train  # a date (local time)
  barecat touch -d @1700000000.5 data.barecat a.txt  # seconds since the epoch
  barecat touch -r ref.jpg data.barecat 'img/*.jpg'  # the mtime of a local file

PATH: a file or directory, or a glob (as barecat-rm takes them). A path that does
not exist (and has no wildcard) becomes an empty file, with mode 0666 less the
umask and your user and group, unless -c. Only the index changes, in one
transaction. Python barecat has this only in its API (Index.update_mtime).

Exit status: 0 success, 1 if a PATH could not be changed (each one is reported),
2 usage error.";

/// Set the modification time of files and directories (or create empty files).
#[derive(Debug, Parser)]
#[command(
    name = "barecat-touch",
    version,
    after_help = EXAMPLES,
    override_usage = "barecat-touch [OPTIONS] ARCHIVE PATH..."
)]
pub struct Args {
    /// The archive (its index file, e.g. data.barecat)
    #[arg(value_name = "ARCHIVE")]
    pub archive: PathBuf,
    /// Files, directories or globs
    #[arg(value_name = "PATH|GLOB", required = true)]
    pub paths: Vec<String>,
    /// Use DATE instead of now: @SECONDS[.FRACTION] since the epoch, or
    /// YYYY-MM-DD[ HH:MM[:SS[.FRACTION]]] in local time ('T' may separate them)
    #[arg(short = 'd', long, value_name = "DATE", value_parser = parse_date, conflicts_with = "reference")]
    pub date: Option<i64>,
    /// Use the modification time of the local file FILE instead of now
    #[arg(short = 'r', long, value_name = "FILE")]
    pub reference: Option<PathBuf>,
    /// Do not create files for paths that do not exist
    #[arg(short = 'c', long)]
    pub no_create: bool,
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

/// A `-d` DATE as clap takes it (the library parses it).
fn parse_date(s: &str) -> Result<i64, String> {
    edit::parse_date(s).map_err(|e| e.to_string())
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    const PROG: &str = "barecat-touch";
    let mtime = match (&args.date, &args.reference) {
        (Some(ns), _) => *ns,
        (None, Some(r)) => {
            let md =
                std::fs::metadata(r).map_err(|e| anyhow::Error::new(crate::Error::io(r, e)))?;
            Meta::from_fs(&md).mtime_ns.unwrap_or(0)
        }
        (None, None) => crate::core::index::now_ns(),
    };
    let new_meta = move |e: &Entry| Meta {
        mtime_ns: Some(mtime),
        ..*e.meta()
    };
    let mut failed = 0usize;
    let mut report = |e: &crate::Error| {
        eprintln!("{PROG}: {e}");
        failed += 1;
    };
    let when = |ns: Option<i64>| match ns {
        Some(ns) => format!(
            "@{}.{:09}",
            ns.div_euclid(1_000_000_000),
            ns.rem_euclid(1_000_000_000)
        ),
        None => "(none)".into(),
    };
    let line = |c: &MetaChange| {
        format!(
            "{} {} -> {}",
            mpath::printable(c.entry.path()),
            when(c.entry.meta().mtime_ns),
            when(c.meta.mtime_ns)
        )
    };
    // Missing paths without wildcards become new files (unless -c): they are taken
    // out of the operands before the plan, which reports the others.
    let split = |index: &Index| -> anyhow::Result<(Vec<String>, Vec<String>)> {
        let mut existing = Vec::new();
        let mut create = Vec::new();
        for p in &args.paths {
            let norm = mpath::normalize(p);
            let exists = index.file(&norm)?.is_some() || index.dir(&norm)?.is_some();
            if !exists && !has_wildcards(p) && !args.no_create {
                create.push(norm);
            } else if !exists && !has_wildcards(p) {
                // -c: a missing path is silently left alone, as touch -c does.
            } else {
                existing.push(p.clone());
            }
        }
        Ok((existing, create))
    };
    let (changed, created) = if args.dry_run {
        if !Layout::exists(&args.archive)? {
            anyhow::bail!("{}: no such archive", args.archive.display());
        }
        let index = Index::open_read(Layout::resolve(&args.archive).index())
            .with_context(|| format!("cannot open {}", args.archive.display()))?;
        let (existing, create) = split(&index)?;
        let plan = edit::plan_meta(&index, &existing, args.recursive, &new_meta)?;
        plan.problems.iter().for_each(&mut report);
        for c in &plan.items {
            println!("would change: {}", line(c));
        }
        for p in &create {
            if let Err(e) = mpath::check_member(p) {
                report(&e);
                continue;
            }
            println!("would create: {}", mpath::printable(p));
        }
        (plan.items.len(), create.len())
    } else {
        let mut w = edit::open_writer(&args.archive, args.sidecar.enabled())
            .with_context(|| format!("cannot write to {}", args.archive.display()))?;
        let (existing, create) = split(w.index())?;
        let plan = edit::plan_meta(w.index(), &existing, args.recursive, &new_meta)?;
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
        let mut made = 0usize;
        for p in &create {
            match w.add_file(p, edit::new_file_meta(mtime), b"", None) {
                Ok(_) => {
                    made += 1;
                    if verbose {
                        println!("created: {}", mpath::printable(p));
                    }
                }
                Err(e) => report(&e),
            }
        }
        w.finish()?;
        (n, made)
    };
    if !args.quiet.quiet {
        let verb = if args.dry_run { "would set" } else { "set" };
        let mut line = format!(
            "{PROG}: {verb} the modification time of {changed} {} in {}",
            if changed == 1 { "entry" } else { "entries" },
            args.archive.display()
        );
        if created > 0 {
            line += &format!(
                "; {} {created} empty {}",
                if args.dry_run {
                    "would create"
                } else {
                    "created"
                },
                if created == 1 { "file" } else { "files" }
            );
        }
        eprintln!("{line}");
    }
    Ok(if failed > 0 {
        ExitCode::from(super::FAILURE)
    } else {
        ExitCode::SUCCESS
    })
}
