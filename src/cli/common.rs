//! Options shared by several commands, so that the same flag means the same thing
//! everywhere: `-q/--quiet`, `-j/--workers N`, `-s/--shard-size-limit SIZE`,
//! `--no-sidecar`, and `--index-mode`/`--stats` of the commands that read remote
//! archives.
//!
//! Commands embed them with `#[command(flatten)]`.
//!
//! Also the one run shared by the zip and tar exports ([`run_export`]).

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;

use crate::core::output::AtomicFile;
use crate::core::progress::Progress;
use crate::core::size::{human, parse_size};
use crate::export::{export_to_file, ExportFormat, ExportOptions, Selection};
use crate::Archive;

/// `-q/--quiet`: no progress bar and no summary; errors are still printed.
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct Quiet {
    /// Print nothing but errors (no progress bar, no summary)
    #[arg(short, long)]
    pub quiet: bool,
}

/// `-j/--workers N`: threads for the parallel part of the work.
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct Workers {
    /// Worker threads [default: the number of cores]
    #[arg(short = 'j', long = "workers", value_name = "N", value_parser = parse_workers)]
    pub workers: Option<usize>,
}

impl Workers {
    /// The number of threads to use: `-j N`, or the number of cores.
    pub fn get(&self) -> usize {
        self.workers.unwrap_or_else(default_workers)
    }
}

/// `-j/--workers N` for work that waits on storage more than on the CPU (reading
/// many small files): the default is larger than the number of cores, so that many
/// reads are in flight at once (on a cold cache, 16 readers read a tree of small
/// files several times faster than 2).
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct IoWorkers {
    /// Reader threads [default: 16, or the number of cores if larger]
    #[arg(short = 'j', long = "workers", value_name = "N", value_parser = parse_workers)]
    pub workers: Option<usize>,
}

/// Default number of reader threads of [`IoWorkers`].
pub const IO_WORKERS: usize = 16;

impl IoWorkers {
    /// The number of threads to use: `-j N`, or the default.
    pub fn get(&self) -> usize {
        self.workers
            .unwrap_or_else(|| default_workers().max(IO_WORKERS))
    }
}

/// The number of cores available to this process (at least 1).
pub fn default_workers() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

fn parse_workers(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if (1..=1024).contains(&n) => Ok(n),
        _ => Err(format!(
            "{s:?} is not a number of threads between 1 and 1024"
        )),
    }
}

/// `-s/--shard-size-limit SIZE`: the shard size limit (`10G`, `500M`, `4096`).
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct ShardLimit {
    /// Start a new shard before one would exceed SIZE (like 10G, 500M, 1.5G, 4096);
    /// stored in the archive. Without it an existing archive keeps its limit, and a
    /// new one is unlimited
    #[arg(short = 's', long = "shard-size-limit", value_name = "SIZE", value_parser = parse_size_arg)]
    pub shard_size_limit: Option<u64>,
}

/// `--no-sidecar`: commands that finish an archive write its B-tree sidecar
/// (`ARCHIVE-btreemeta`, see `barecat-sidecar`) unless told not to.
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct NoSidecar {
    /// Do not write the B-tree sidecar ARCHIVE-btreemeta at the end (an old one is
    /// removed all the same)
    #[arg(long = "no-sidecar")]
    pub no_sidecar: bool,
}

impl NoSidecar {
    /// Should the sidecar be written?
    pub fn enabled(&self) -> bool {
        !self.no_sidecar
    }

    /// `o` with the sidecar switched as asked.
    pub fn apply(&self, o: crate::WriterOptions) -> crate::WriterOptions {
        crate::WriterOptions {
            sidecar: self.enabled(),
            ..o
        }
    }
}

/// A command's arguments `A` together with its `-i/--include` and `-x/--exclude`
/// rules in command-line order, which first-match-wins rules depend on (clap keeps
/// each option's values apart). Commands register `WithRules<Args>`; the rules are
/// read from the arguments with the ids `include` and `exclude`.
#[derive(Debug)]
pub struct WithRules<A> {
    pub args: A,
    /// `(true, pattern)` for an include rule, `(false, pattern)` for an exclude.
    pub rules: Vec<(bool, String)>,
}

/// The include and exclude values of `m`, in the order they were given.
pub fn ordered_rules(m: &clap::ArgMatches) -> Vec<(bool, String)> {
    let mut all: Vec<(usize, bool, String)> = Vec::new();
    for (id, include) in [("include", true), ("exclude", false)] {
        let (Ok(Some(values)), Some(indices)) = (m.try_get_many::<String>(id), m.indices_of(id))
        else {
            continue;
        };
        for (v, i) in values.zip(indices) {
            all.push((i, include, v.clone()));
        }
    }
    all.sort_by_key(|(i, _, _)| *i);
    all.into_iter().map(|(_, inc, v)| (inc, v)).collect()
}

impl<A: clap::FromArgMatches> clap::FromArgMatches for WithRules<A> {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        Ok(WithRules {
            args: A::from_arg_matches(m)?,
            rules: ordered_rules(m),
        })
    }

    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        self.args.update_from_arg_matches(m)?;
        self.rules = ordered_rules(m);
        Ok(())
    }
}

impl<A: clap::CommandFactory> clap::CommandFactory for WithRules<A> {
    fn command() -> clap::Command {
        A::command()
    }

    fn command_for_update() -> clap::Command {
        A::command_for_update()
    }
}

impl<A: clap::Parser> clap::Parser for WithRules<A> {}

/// `--index-mode MODE` and `--stats`: for commands that read archives, which may
/// be URLs (`s3://bucket/prefix/name`, `http(s)://host/path/name`).
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct Remote {
    /// How the index of a remote archive is read: auto (downloaded whole up to
    /// BARECAT_REMOTE_DOWNLOAD_LIMIT, 32M by default, else by ranged requests),
    /// range (ranged requests of its pages, with the B-tree sidecar) or download
    #[arg(long = "index-mode", value_name = "MODE", default_value = "auto",
          value_parser = parse_index_mode)]
    pub index_mode: crate::core::remote::IndexMode,
    /// Print the requests and bytes of remote reads (sidecar, index, shards) on
    /// stderr at the end
    #[arg(long)]
    pub stats: bool,
}

impl Remote {
    /// The options to open an archive with (`lenient` as in [`crate::OpenOptions`]).
    pub fn open_options(&self, lenient: bool) -> crate::OpenOptions {
        crate::OpenOptions {
            lenient,
            index_mode: self.index_mode,
        }
    }

    /// With `--stats`, a guard that prints the counters of remote reads when it is
    /// dropped (at the end of the command, whether it failed or not).
    pub fn stats_guard(&self, prog: &str) -> StatsGuard {
        StatsGuard {
            prog: self.stats.then(|| prog.to_string()),
        }
    }
}

fn parse_index_mode(s: &str) -> Result<crate::core::remote::IndexMode, String> {
    s.parse()
}

/// Prints the remote read counters on drop (see [`Remote::stats_guard`]).
pub struct StatsGuard {
    prog: Option<String>,
}

impl Drop for StatsGuard {
    fn drop(&mut self) {
        if let Some(prog) = &self.prog {
            for line in crate::core::remote::stats().to_string().lines() {
                eprintln!("{prog}: {line}");
            }
        }
    }
}

/// clap value parser for sizes such as `10G`.
pub fn parse_size_arg(s: &str) -> Result<u64, String> {
    match parse_size(s) {
        Ok(0) => Err("the size must be at least 1 byte".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// Turn "archive already exists" into advice.
pub(crate) fn explain(e: crate::Error, append_hint: bool) -> anyhow::Error {
    match e {
        crate::Error::ArchiveExists { path } => anyhow::anyhow!(
            "{}: already exists; use -f to overwrite{}",
            path.display(),
            if append_hint { " or -a to append" } else { "" }
        ),
        other => other.into(),
    }
}

/// One export, as the zip and tar commands describe it.
pub struct ExportJob<'a> {
    /// The archive read.
    pub archive: &'a Path,
    /// The file written, or `-` for standard output.
    pub output: &'a Path,
    /// Members selected (files, directories, globs); none = everything.
    pub paths: &'a [String],
    /// Zip or tar, and how compressed.
    pub format: ExportFormat,
    /// Replace an existing output.
    pub force: bool,
    /// Worker threads.
    pub workers: usize,
    /// No progress bar and no summary.
    pub quiet: bool,
    /// How a remote archive is read.
    pub remote: Remote,
    /// Every member under this directory in the output.
    pub root_dir: Option<String>,
}

/// Run an export to a file or standard output and report it.
pub fn run_export(prog: &str, job: &ExportJob<'_>) -> anyhow::Result<ExitCode> {
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
    let shown = out.path().display().to_string();
    let r = export_to_file(&archive, &selection, out, file, &opts, &progress, &report)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsers() {
        assert_eq!(parse_size_arg("10G").unwrap(), 10 << 30);
        assert!(parse_size_arg("0").is_err());
        assert!(parse_size_arg("x").is_err());
        assert_eq!(parse_workers("4").unwrap(), 4);
        assert!(parse_workers("0").is_err());
        assert!(parse_workers("-1").is_err());
        assert!(default_workers() >= 1);
    }
}
