//! `barecat-reshard`: repack an archive to a new shard size limit, in place.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

use super::common::{parse_size_arg, NoSidecar, Quiet};
use crate::core::progress::Progress;
use crate::core::size::human;
use crate::maint::defrag::Tuning;
use crate::maint::reshard::{reshard, ReshardOptions};

const EXAMPLES: &str = "\
Examples:
  barecat reshard -s 1G data.barecat        # shards of at most 1 GiB
  barecat-reshard -s 500M data.barecat
  barecat reshard -s 10G --json data.barecat

The files are packed in address order, a new shard starting where the next file
would cross SIZE (where Python barecat's reshard puts them), and the new limit is
stored. Files already at their place are not copied: with a larger limit only the
files after the first shard move; with a smaller one the first shard stays where
it is and the rest is written once. Holes and trailing bytes are given back on the
way. A file larger than SIZE is refused before anything changes.

Safe to interrupt at any moment: bytes are copied and synced before the rows that
point at them change, and nothing a committed row points at is overwritten, so
every file stays readable (by this suite and by Python barecat); run the command
again to finish. An archive with shards that are links to other files (merged with
--symlink, or wrapped around a tar or zip) is refused.

Exit status: 0 success, 1 failure (nothing lost), 2 usage error.";

/// Repack an archive to a new shard size limit.
#[derive(Debug, Parser)]
#[command(name = "barecat-reshard", version, after_help = EXAMPLES)]
pub struct Args {
    /// The archive
    pub archive: PathBuf,
    /// The new shard size limit (like 10G, 500M, 1.5G, 4096)
    #[arg(short = 's', long = "shard-size-limit", value_name = "SIZE", required = true,
          value_parser = parse_size_arg)]
    pub shard_size_limit: u64,
    /// Print the report as one JSON document
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub quiet: Quiet,
    #[command(flatten)]
    pub sidecar: NoSidecar,
    /// Pause this many milliseconds between steps (for interruption tests)
    #[arg(long, hide = true, value_name = "MS")]
    pub step_delay_ms: Option<u64>,
    /// Work in tiny steps (for tests)
    #[arg(long, hide = true)]
    pub small_steps: bool,
    /// End abruptly after N steps, as a crash would (for tests)
    #[arg(long, hide = true, value_name = "N")]
    pub crash_after_steps: Option<u64>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let opts = ReshardOptions {
        limit: args.shard_size_limit,
        step_delay: args.step_delay_ms.map(Duration::from_millis),
        crash_after_steps: args.crash_after_steps,
        tuning: if args.small_steps {
            Tuning::small()
        } else {
            Tuning::default()
        },
        sidecar: args.sidecar.enabled(),
    };
    let progress = Progress::new(super::show_progress(args.quiet.quiet), "resharding", None);
    let r = reshard(&args.archive, &opts, &progress)?;
    progress.finish();
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&r)?)?;
    } else if !args.quiet.quiet {
        writeln!(
            out,
            "{}: {} files ({}) in {} shard(s) of at most {} (was {} shard(s), limit {}); \
             moved {} files ({}), {} -> {} on disk",
            args.archive.display(),
            r.files,
            human(r.bytes),
            r.shards_after,
            human(r.limit_after),
            r.shards_before,
            if r.limit_before >= crate::core::index::schema::UNLIMITED as u64 {
                "unlimited".to_string()
            } else {
                human(r.limit_before)
            },
            r.moved_files,
            human(r.moved_bytes),
            human(r.physical_before),
            human(r.physical_after),
        )?;
        super::records::print_table_action(&args.archive, r.records_table);
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
