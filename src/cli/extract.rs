//! `barecat-extract`: extract files into a directory, safely.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use clap::Parser;

use super::common::{Quiet, WithRules, Workers};
use crate::core::glob::PathFilter;
use crate::core::progress::Progress;
use crate::core::size::human;
use crate::export::{extract, ExtractOptions, Selection};
use crate::Archive;

const EXAMPLES: &str = "\
Examples:
  barecat-extract data.barecat -C out                 # everything, into out/
  barecat-extract data.barecat -C out train/cls_001   # a directory and its subtree
  barecat-extract data.barecat 'train/**/*.jpg'       # a glob (quote it)
  barecat-extract --strip-components 1 data.barecat -C out train
  barecat x data.barecat -C out --pattern 'train/**/*.jpg'   # files matching a glob
  barecat x data.barecat -C out -x '**/*.tmp' -i 'train/**' -x '**'   # rules
  barecat-extract --file data.barecat --target-directory out   # legacy form
  barecat-extract s3://bucket/datasets/data.barecat -C out     # a remote archive

PATH|GLOB: a file, a directory (with everything below it), or a glob with Python
glob semantics: * and ? stay within a directory, ** spans directories, and
wildcards do not match names starting with '.'. A file named as PATH is
extracted into DIR (Python barecat's extract writes it to stdout instead; use
barecat-cat for that).

--pattern GLOB and -i/-x rules (Python barecat's options) narrow the files taken
from the PATHs (everything by default): --pattern keeps the files it matches
(a trailing '/' means everything below; names starting with '.' are matched
only by a pattern that spells the dot); -i GLOB and -x GLOB are rules tried in
command-line order, the first that matches a file's path deciding, and a file
that matches none is extracted (hidden names are matched; ** spans directories).
With either, only the parent directories of extracted files are made.

Safety: nothing is written outside DIR. Stored paths that are absolute or contain
'..' are refused, not rewritten; symbolic links found in DIR are never followed;
existing files are kept and reported unless --overwrite. Every file is checked
against its stored CRC32C and not left in place when it does not match.

Files get their stored permission bits (setuid/setgid/sticky only with -p) and
modification times; directories, empty ones included, get theirs at the end.
Ownership is not restored.

Exit status: 0 success, 1 if any member could not be extracted (each one is
reported on stderr; the others are extracted), 2 usage error.";

/// Extract files and directories from an archive into a directory.
#[derive(Debug, Parser)]
#[command(name = "barecat-extract", version, after_help = EXAMPLES)]
pub struct Args {
    /// The archive (its index file, e.g. data.barecat)
    #[arg(value_name = "ARCHIVE", required_unless_present = "file")]
    pub archive: Option<PathBuf>,
    /// Files, directories or globs to extract [default: everything]
    #[arg(value_name = "PATH|GLOB")]
    pub paths: Vec<String>,
    /// Extract into DIR (created if missing)
    #[arg(
        short = 'C',
        long = "directory",
        value_name = "DIR",
        default_value = ".",
        alias = "target-directory"
    )]
    pub directory: PathBuf,
    /// Remove N leading components from every path; members with nothing left are
    /// skipped
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub strip_components: usize,
    /// Replace existing files and symbolic links (never directories)
    #[arg(short = 'f', long, visible_alias = "force")]
    pub overwrite: bool,
    /// Also restore setuid, setgid and sticky bits
    #[arg(short = 'p', long)]
    pub same_permissions: bool,
    /// Only extract the files matching GLOB (Python glob semantics)
    #[arg(long, value_name = "GLOB", conflicts_with_all = ["include", "exclude"])]
    pub pattern: Option<String>,
    /// Rule: extract the files matching GLOB (rules are tried in command-line order;
    /// the first that matches decides; repeatable)
    #[arg(short = 'i', long, value_name = "GLOB")]
    pub include: Vec<String>,
    /// Rule: leave out the files matching GLOB (see -i; repeatable)
    #[arg(short = 'x', long, value_name = "GLOB")]
    pub exclude: Vec<String>,
    #[command(flatten)]
    pub workers: Workers,
    #[command(flatten)]
    pub quiet: Quiet,
    #[command(flatten)]
    pub remote: super::common::Remote,
    /// The archive, in the legacy form `--file ARCH --target-directory DIR`
    #[arg(long, value_name = "ARCHIVE", hide = true)]
    pub file: Option<PathBuf>,
}

pub fn run(cli: WithRules<Args>) -> anyhow::Result<ExitCode> {
    const PROG: &str = "barecat-extract";
    let WithRules { args, rules } = cli;
    let filter = match (&args.pattern, rules.is_empty()) {
        (Some(p), _) => Some(PathFilter::pattern(p, false)?),
        (None, false) => Some(PathFilter::rules(&rules)?),
        (None, true) => None,
    };
    let (archive_path, paths) = match args.file {
        Some(f) => (
            f,
            args.archive
                .map(|a| a.to_string_lossy().into_owned())
                .into_iter()
                .chain(args.paths)
                .collect(),
        ),
        None => (args.archive.expect("clap requires it"), args.paths),
    };
    let _stats = args.remote.stats_guard(PROG);
    let archive = Archive::open_with(&archive_path, args.remote.open_options(false))
        .with_context(|| format!("cannot open {}", archive_path.display()))?;
    super::print_warnings(PROG, archive.warnings());
    let (selection, missing) = Selection::resolve(&archive, &paths)?;
    let selection = selection.filtered(filter);
    for e in &missing {
        eprintln!("{PROG}: {e}");
    }
    let quiet = args.quiet.quiet;
    let show = super::show_progress(quiet);
    let total = if show {
        Some(selection.totals(&archive)?.1)
    } else {
        None
    };
    let progress = Progress::new(show, "extracting", total);
    let opts = ExtractOptions {
        workers: args.workers.get(),
        strip_components: args.strip_components,
        overwrite: args.overwrite,
        same_permissions: args.same_permissions,
    };
    let started = Instant::now();
    let report = |e: &crate::Error| progress.println(&format!("{PROG}: {e}"));
    let r = extract(
        &archive,
        &selection,
        &args.directory,
        &opts,
        &progress,
        &report,
    )?;
    progress.finish();
    if !quiet {
        let mut line = format!(
            "{PROG}: extracted {} files ({}) and {} directories into {} in {:.1} s",
            r.files,
            human(r.bytes),
            r.dirs,
            args.directory.display(),
            started.elapsed().as_secs_f64()
        );
        if r.skipped > 0 {
            line += &format!("; {} skipped by --strip-components", r.skipped);
        }
        if r.failed > 0 {
            line += &format!("; {} problems reported above", r.failed);
        }
        eprintln!("{line}");
    }
    Ok(if r.failed > 0 || !missing.is_empty() {
        ExitCode::from(super::FAILURE)
    } else {
        ExitCode::SUCCESS
    })
}
