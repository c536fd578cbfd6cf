//! `barecat-verify`: check every checksum, the index and the shards.

use std::io::{self, Write};
use std::process::ExitCode;

use clap::Parser;

use super::common::{Quiet, Workers};
use crate::core::progress::Progress;
use crate::maint::verify::{verify, write_human, VerifyOptions};

const EXAMPLES: &str = "\
Examples:
  barecat-verify data.barecat              # everything: every byte, the index, the shards
  barecat-verify --quick data.barecat      # index and shard checks, last file's checksum
  barecat-verify --json data.barecat > report.json   # for CI
  barecat-verify https://example.org/data/data.barecat   # a remote archive

Full mode reads every file in address order and checks its CRC32C, runs SQLite's
integrity check, compares the directory statistics with recomputed ones, checks
foreign keys and that no path is both a file and a directory, that every file lies
inside its shard, that no two files overlap, and that the shards are numbered
without gaps and all present. Holes, trailing bytes and shards after the last used
one are reported as information (reclaimable space, see barecat-defrag and
barecat-repair), and so is a missing, stale or corrupt B-tree sidecar (see
barecat-sidecar). Every problem is listed.

Exit status: 0 no problem found, 1 problems found, 2 the check could not run
(no archive, not an archive, bad usage).";

/// Check an archive: checksums, index consistency, shards.
#[derive(Debug, Parser)]
#[command(name = "barecat-verify", version, after_help = EXAMPLES)]
pub struct Args {
    /// The archive
    pub archive: std::path::PathBuf,
    /// Check the index and the shard lengths, and only the checksum of the last file
    #[arg(long)]
    pub quick: bool,
    /// Print one JSON document instead of text
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub workers: Workers,
    #[command(flatten)]
    pub quiet: Quiet,
    #[command(flatten)]
    pub remote: super::common::Remote,
}

/// Exit status when the check could not run.
const CANNOT_RUN: u8 = 2;

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let opts = VerifyOptions {
        quick: args.quick,
        workers: args.workers.get(),
        index_mode: args.remote.index_mode,
    };
    let _stats = args.remote.stats_guard("barecat-verify");
    let progress = Progress::new(
        super::show_progress(args.quiet.quiet) && !args.json,
        "verifying",
        None,
    );
    let result = verify(&args.archive, &opts, &progress);
    progress.finish();
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let report = match result {
        Ok(r) => r,
        Err(e) => {
            let msg = e.to_string().replace('\n', " ");
            if args.json {
                let doc = serde_json::json!({
                    "archive": args.archive.display().to_string(),
                    "ok": false,
                    "error": msg,
                });
                writeln!(out, "{doc:#}")?;
                out.flush()?;
            }
            eprintln!("barecat-verify: {msg}");
            return Ok(ExitCode::from(CANNOT_RUN));
        }
    };
    if args.json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
    } else {
        write_human(&report, args.quiet.quiet, &mut out)?;
    }
    out.flush()?;
    Ok(if report.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(super::FAILURE)
    })
}
