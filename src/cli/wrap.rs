//! `--wrap` of `barecat-from-tar`, `barecat-from-zip` and `barecat convert`: an
//! archive whose shard 0 is a link to the tar or zip itself (see
//! [`crate::ingest::wrap`]).

use std::path::Path;
use std::process::ExitCode;

use super::ingest::{plain, Reporter};
use crate::core::progress::Progress;
use crate::ingest::wrap::{wrap, WrapOptions};
use crate::ingest::IngestOptions;
use crate::Error;

/// How many threads checksum member data: the cores, at most 4 (the checksum runs
/// at several GB/s per core; more threads only wait for the disk).
pub fn checksum_threads() -> usize {
    super::common::default_workers().min(4)
}

/// Options that make no sense with `--wrap`, as (given, name) pairs: a usage error
/// names the first one given.
pub fn refuse_options(given: &[(bool, &str)]) -> anyhow::Result<()> {
    if let Some((_, name)) = given.iter().find(|(on, _)| *on) {
        crate::usage!(
            "--wrap cannot be used with {name} (the archive is an index over the input \
             file as it is)"
        );
    }
    Ok(())
}

/// Wrap `input` as `archive`, report problems and the summary, pick the exit status.
pub fn run(
    prog: &str,
    input: &Path,
    archive: &Path,
    force: bool,
    sidecar: bool,
    ingest: IngestOptions,
    quiet: bool,
) -> anyhow::Result<ExitCode> {
    let total = std::fs::metadata(input).ok().map(|m| m.len());
    let progress = Progress::new(super::show_progress(quiet), "indexing", total);
    let mut reporter = Reporter::new(prog, quiet, &progress);
    let opts = WrapOptions {
        force,
        sidecar,
        ingest,
    };
    match wrap(input, archive, &opts, &mut |e| reporter.event(e)) {
        Ok(summary) => {
            let code = reporter.finish(&summary, 1);
            if !quiet {
                let target = std::path::absolute(input).unwrap_or_else(|_| input.to_path_buf());
                eprintln!(
                    "{prog}: {} indexes {} in place (its shard 0 is a link to it, and its \
                     files carry CRC32C checksums)",
                    archive.display(),
                    target.display()
                );
            }
            Ok(code)
        }
        Err(Error::ArchiveExists { path }) => {
            progress.finish();
            Err(anyhow::anyhow!(
                "{}: archive already exists (use -f to overwrite it)",
                path.display()
            ))
        }
        Err(e) => {
            progress.finish();
            Err(plain(e))
        }
    }
}
