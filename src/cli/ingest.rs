//! Options and reporting shared by the ingest commands (`barecat-create`,
//! `barecat-from-tar`, `barecat-from-zip`, `archive2barecat`).

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use crate::core::progress::Progress;
use crate::core::size::human;
use crate::core::writer::{ArchiveWriter, CreateMode, WriterOptions};
use crate::ingest::{
    Duplicates, Event, Filter, IngestOptions, Summary, SymlinkPolicy, DEFAULT_BUFFER_SIZE,
};
use crate::Error;

use super::common::parse_size_arg;

/// `-f`, `-a`, `--resume`: what to do with an existing archive.
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct ModeArgs {
    /// Overwrite an existing archive (all its shards are removed first)
    #[arg(short, long, conflicts_with_all = ["append", "resume"])]
    pub force: bool,
    /// Add to an existing archive (created when missing)
    #[arg(short, long, conflicts_with = "resume")]
    pub append: bool,
    /// Finish an interrupted run: keep what was committed, remove the bytes the
    /// interrupted writer left behind, and skip every path already in the archive
    #[arg(long)]
    pub resume: bool,
}

impl ModeArgs {
    pub fn mode(&self) -> CreateMode {
        if self.force {
            CreateMode::Overwrite
        } else if self.append || self.resume {
            CreateMode::AppendOrCreate
        } else {
            CreateMode::New
        }
    }
}

/// Selection and robustness options.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct SelectArgs {
    /// Only take paths matching GLOB, or lying below a directory that matches
    /// (repeatable). A GLOB without '/' matches names at any depth
    #[arg(short, long, value_name = "GLOB")]
    pub include: Vec<String>,
    /// Skip paths matching GLOB, and everything below a directory that matches
    /// (repeatable). A GLOB without '/' matches names at any depth
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// Remove N leading components from stored paths (entries left empty are
    /// skipped)
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub strip_components: usize,
    /// Stop at the first entry that cannot be added, instead of skipping it
    #[arg(long)]
    pub strict: bool,
    /// Memory for file contents in flight between readers and the writer; files
    /// above a quarter of it are streamed [default: 16M]
    #[arg(long, value_name = "SIZE", value_parser = parse_size_arg,
          default_value_t = DEFAULT_BUFFER_SIZE, hide_default_value = true)]
    pub buffer_size: u64,
    /// Commit at least every MS milliseconds (testing aid)
    #[arg(long, value_name = "MS", hide = true)]
    pub commit_interval_ms: Option<u64>,
}

/// clap value enum for `--symlinks`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Symlinks {
    /// Skip them and count them in the summary
    #[default]
    Skip,
    /// Report each one (exit status 1)
    Error,
}

impl SelectArgs {
    pub fn options(&self, workers: usize, resume: bool) -> anyhow::Result<IngestOptions> {
        Ok(IngestOptions {
            workers,
            buffer_size: self.buffer_size,
            strip_components: self.strip_components,
            strict: self.strict,
            skip_existing: resume,
            commit_on_error: true,
            symlinks: SymlinkPolicy::Skip,
            duplicates: Duplicates::default(),
            duplicates_chosen: false,
            filter: Filter::new(&self.include, &self.exclude).map_err(plain)?,
            select: None,
            prefix: String::new(),
            name_encoding: None,
        })
    }

    pub fn writer_options(&self, mode: CreateMode, limit: Option<u64>) -> WriterOptions {
        let mut o = WriterOptions {
            mode,
            shard_size_limit: limit,
            ..WriterOptions::default()
        };
        if let Some(ms) = self.commit_interval_ms {
            o.commit_interval = Duration::from_millis(ms);
        }
        o
    }
}

/// clap value enum for `--duplicates` (from-tar, from-zip, merge).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DuplicatesArg {
    /// Keep the first copy; each later one is skipped, with a note
    First,
    /// Keep the last copy, as tar -x leaves it; each replacement is noted
    Last,
    /// Stop at the first duplicate
    Error,
}

impl From<DuplicatesArg> for Duplicates {
    fn from(d: DuplicatesArg) -> Duplicates {
        match d {
            DuplicatesArg::First => Duplicates::First,
            DuplicatesArg::Last => Duplicates::Last,
            DuplicatesArg::Error => Duplicates::Error,
        }
    }
}

/// `--duplicates` of the tar and zip importers. Without it the last copy is kept
/// and each duplicate is a problem (exit status 1).
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct DuplicateArgs {
    /// Several members of one name (a tar appended to with tar -r): keep the last
    /// (what tar -x leaves), the first, or stop. Without this option the last is
    /// kept and each duplicate is reported as a problem (exit status 1)
    #[arg(long, value_enum, value_name = "WHICH")]
    pub duplicates: Option<DuplicatesArg>,
}

impl DuplicateArgs {
    pub fn apply(&self, opts: &mut IngestOptions) {
        if let Some(d) = self.duplicates {
            opts.duplicates = d.into();
            opts.duplicates_chosen = true;
        }
    }
}

impl From<Symlinks> for SymlinkPolicy {
    fn from(s: Symlinks) -> SymlinkPolicy {
        match s {
            Symlinks::Skip => SymlinkPolicy::Skip,
            Symlinks::Error => SymlinkPolicy::Error,
        }
    }
}

/// A library error as a one-line message (its text already names the path and the
/// cause; the error chain would repeat the cause).
pub fn plain(e: Error) -> anyhow::Error {
    anyhow::anyhow!("{e}")
}

/// Open the output archive, with a helpful message when it exists already.
pub fn open_output(path: &Path, opts: WriterOptions) -> anyhow::Result<ArchiveWriter> {
    match ArchiveWriter::open(path, opts) {
        Ok(w) => Ok(w),
        Err(Error::ArchiveExists { path: p }) => Err(anyhow::anyhow!(
            "{}: archive already exists (use -f to overwrite it, -a to add to it, \
             --resume to finish an interrupted run)",
            p.display()
        )),
        Err(e) => Err(anyhow::anyhow!("{e}")),
    }
}

/// Prints problems and notices as they come, drives the progress bar, and prints
/// the summary at the end.
pub struct Reporter<'a> {
    pub prog: &'a str,
    pub quiet: bool,
    pub progress: &'a Progress,
    /// Called on every progress event instead of counting content bytes (e.g. to
    /// show the position in a compressed input).
    pub position: Option<&'a dyn Fn() -> u64>,
    last_position: u64,
    pub problems: u64,
}

impl<'a> Reporter<'a> {
    pub fn new(prog: &'a str, quiet: bool, progress: &'a Progress) -> Reporter<'a> {
        Reporter {
            prog,
            quiet,
            progress,
            position: None,
            last_position: 0,
            problems: 0,
        }
    }

    pub fn event(&mut self, e: Event) {
        match e {
            Event::Problem(p) => {
                self.problems += 1;
                self.progress.println(&format!("{}: {p}", self.prog));
            }
            Event::Notice(n) => {
                // Warnings are shown even with -q.
                if !self.quiet || n.contains(": warning: ") || n.starts_with("warning: ") {
                    self.progress.println(&format!("{}: {n}", self.prog));
                }
            }
            Event::Progress { files, bytes } => match self.position {
                Some(pos) => {
                    let now = pos();
                    self.progress
                        .add(files, now.saturating_sub(self.last_position));
                    self.last_position = now;
                }
                None => self.progress.add(files, bytes),
            },
            Event::Total { bytes } => self.progress.set_total(bytes),
        }
    }

    /// Print the summary (unless quiet) and return the exit status.
    pub fn finish(&self, summary: &Summary, shards: u64) -> ExitCode {
        self.progress.finish();
        if !self.quiet {
            eprintln!("{}: {}", self.prog, summary_line(summary, shards));
        }
        if summary.problems > 0 {
            ExitCode::from(super::FAILURE)
        } else {
            ExitCode::SUCCESS
        }
    }
}

/// `1000 files, 48.8M, 12 new directories, 2 shards; skipped: …; 1.2 s (39.7M/s)`.
pub fn summary_line(s: &Summary, shards: u64) -> String {
    let plural = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut line = format!(
        "{}, {}, {}, {}",
        plural(s.files, "file", "files"),
        human(s.bytes),
        plural(s.dirs, "new directory", "new directories"),
        plural(shards, "shard", "shards"),
    );
    if s.hardlinks > 0 {
        line += &format!(
            " ({} stored as copies)",
            plural(s.hardlinks, "hard link", "hard links")
        );
    }
    if s.replaced > 0 {
        line += &format!(
            "; {} replaced by a later member of the same name ({}{} left as holes, \
             barecat-defrag reclaims them)",
            plural(s.replaced, "file", "files"),
            if s.replaced_reported > 0 {
                "see above; "
            } else {
                ""
            },
            human(s.replaced_bytes)
        );
    }
    let mut skipped = Vec::new();
    let errors = s.problems.saturating_sub(s.replaced_reported);
    if errors > 0 {
        skipped.push(format!("{errors} with errors (see above)"));
    }
    if s.existing > 0 {
        skipped.push(format!("{} already in the archive", s.existing));
    }
    if s.duplicates_skipped > 0 {
        skipped.push(format!(
            "{} (the first copy kept)",
            plural(s.duplicates_skipped, "duplicate", "duplicates")
        ));
    }
    if s.symlinks > 0 {
        skipped.push(plural(s.symlinks, "symbolic link", "symbolic links"));
    }
    if s.special > 0 {
        skipped.push(plural(s.special, "special file", "special files"));
    }
    if !skipped.is_empty() {
        line += &format!("; skipped: {}", skipped.join(", "));
    }
    let secs = s.elapsed.as_secs_f64();
    line += &format!("; {secs:.2} s");
    if secs > 0.0 && s.bytes > 0 {
        line += &format!(" ({}/s)", human((s.bytes as f64 / secs) as u64));
    }
    line
}

/// After an import: commit, print the summary, pick the exit status. An import
/// error is returned after the archive was committed (everything before the error
/// stays); a new archive that got nothing before the error is removed again.
pub fn conclude(
    w: ArchiveWriter,
    result: crate::Result<Summary>,
    reporter: &Reporter,
    mode: CreateMode,
) -> anyhow::Result<ExitCode> {
    let shards = w.position().0 + 1;
    let stats_before_finish = w.stats();
    let base = w.layout().base().to_path_buf();
    let finished = w.finish();
    if result.is_err()
        && finished.is_ok()
        && matches!(mode, CreateMode::New | CreateMode::Overwrite)
        && stats_before_finish == crate::WriteStats::default()
    {
        let _ = crate::Layout::remove(&base);
    }
    match result {
        Ok(summary) => {
            finished.map_err(|e| anyhow::anyhow!("{e}"))?;
            Ok(reporter.finish(&summary, shards))
        }
        Err(e) => {
            reporter.progress.finish();
            // The library's messages already name the path and the cause: print them
            // as they are (one line), without repeating the underlying error.
            let n = stats_before_finish.files;
            if finished.is_ok() && n > 0 {
                return Err(anyhow::anyhow!(
                    "{e} ({n} {} before it were added and committed)",
                    if n == 1 { "file" } else { "files" }
                ));
            }
            Err(anyhow::anyhow!("{e}"))
        }
    }
}
