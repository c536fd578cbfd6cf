//! `barecat-to-zip`: write archive contents as a zip file or stream.

use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use clap::Parser;

use super::common::{Quiet, Workers};
use crate::core::output::AtomicFile;
use crate::core::progress::Progress;
use crate::core::size::human;
use crate::export::{export, ExportFormat, ExportOptions, Selection};
use crate::Archive;

const EXAMPLES: &str = "\
Examples:
  barecat-to-zip data.barecat data.zip                 # stored (no compression)
  barecat-to-zip --deflate data.barecat data.zip       # deflate, level 6
  barecat-to-zip --deflate=9 data.barecat data.zip train
  barecat-to-zip data.barecat - | ssh host 'cat > data.zip'

PATH|GLOB select members as in barecat-extract (a file, a directory with its
subtree, or a Python-style glob); default: everything.

The zip is written front to back with complete local headers (no data
descriptors for stored entries), so the same bytes go to a file or a pipe. Zip64
records are used where needed (entries of 4 GiB or more, more than 65,534
entries). Entries carry their CRC-32, Unix mode and the modification time in UTC
(extended timestamp field; the DOS time is UTC too). Files are checked against
their CRC32C first; a file that fails, or has an unsafe path, is reported and
left out. A file OUTPUT appears only when complete (-f to replace one).

Exit status: 0 success, 1 if any member was left out or the zip could not be
written, 2 usage error.";

/// Write the contents of an archive as a zip file.
#[derive(Debug, Parser)]
#[command(name = "barecat-to-zip", version, after_help = EXAMPLES)]
pub struct Args {
    /// The archive
    pub archive: PathBuf,
    /// The zip file to write, or - for standard output
    #[arg(value_name = "OUTPUT|-")]
    pub output: PathBuf,
    /// Files, directories or globs to include [default: everything]
    #[arg(value_name = "PATH|GLOB")]
    pub paths: Vec<String>,
    /// Compress entries with deflate, at LEVEL 1-9 [default level: 6]; entries that
    /// do not shrink are stored
    #[arg(
        long,
        value_name = "LEVEL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "6",
        value_parser = clap::value_parser!(u32).range(1..=9)
    )]
    pub deflate: Option<u32>,
    /// Replace OUTPUT if it exists
    #[arg(short, long)]
    pub force: bool,
    /// Put every entry under the directory NAME/ in the zip
    #[arg(long, value_name = "NAME")]
    pub root_dir: Option<String>,
    #[command(flatten)]
    pub workers: Workers,
    #[command(flatten)]
    pub quiet: Quiet,
    #[command(flatten)]
    pub remote: super::common::Remote,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    run_as("barecat-to-zip", args)
}

/// [`run`], naming the command `prog` in messages.
pub fn run_as(prog: &str, args: Args) -> anyhow::Result<ExitCode> {
    run_export(
        prog,
        &Job {
            archive: &args.archive,
            output: &args.output,
            paths: &args.paths,
            format: ExportFormat::Zip {
                deflate: args.deflate,
            },
            force: args.force,
            workers: args.workers.get(),
            quiet: args.quiet.quiet,
            remote: args.remote,
            root_dir: args.root_dir,
        },
    )
}

/// One export, as the zip and tar commands describe it.
pub(super) struct Job<'a> {
    pub archive: &'a Path,
    pub output: &'a Path,
    pub paths: &'a [String],
    pub format: ExportFormat,
    pub force: bool,
    pub workers: usize,
    pub quiet: bool,
    pub remote: super::common::Remote,
    pub root_dir: Option<String>,
}

/// Run an export to a file or standard output and report it.
pub(super) fn run_export(prog: &str, job: &Job<'_>) -> anyhow::Result<ExitCode> {
    let _stats = job.remote.stats_guard(prog);
    let archive = Archive::open_with(job.archive, job.remote.open_options(false))
        .with_context(|| format!("cannot open {}", job.archive.display()))?;
    super::print_warnings(prog, archive.warnings());
    let (selection, missing) = Selection::resolve(&archive, job.paths)?;
    for e in &missing {
        eprintln!("{prog}: {e}");
    }
    let (out, file) = AtomicFile::create(job.output, job.force)?;
    if out.is_terminal() {
        crate::usage!("refusing to write archive data to a terminal (redirect standard output)");
    }
    let show = super::show_progress(job.quiet);
    let total = if show {
        Some(selection.totals(&archive)?.1)
    } else {
        None
    };
    let progress = Progress::new(show, "exporting", total);
    let opts = ExportOptions {
        format: job.format,
        workers: job.workers,
        root_dir: job.root_dir.clone(),
    };
    let started = Instant::now();
    let report = |e: &crate::Error| progress.println(&format!("{prog}: {e}"));
    // Small: headers and small files are gathered, larger contents go from the
    // memory map to the output without a copy.
    let writer = BufWriter::with_capacity(16 << 10, file);
    let (writer, r) = export(&archive, &selection, writer, &opts, &progress, &report)?;
    let file = writer
        .into_inner()
        .map_err(|e| crate::Error::io(out.path(), e.into_error()))?;
    let shown = out.path().display().to_string();
    out.commit(file)?;
    progress.finish();
    if !job.quiet {
        let mut line = format!(
            "{prog}: wrote {} files ({}) and {} directories to {} in {:.1} s",
            r.files,
            human(r.bytes),
            r.dirs,
            if shown == "-" {
                "standard output"
            } else {
                &shown
            },
            started.elapsed().as_secs_f64()
        );
        if r.failed > 0 {
            line += &format!("; {} left out, reported above", r.failed);
        }
        eprintln!("{line}");
    }
    Ok(if r.failed > 0 || !missing.is_empty() {
        ExitCode::from(super::FAILURE)
    } else {
        ExitCode::SUCCESS
    })
}
