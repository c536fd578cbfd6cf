//! `barecat-defrag`: give back the space of holes and trailing bytes.

use std::io::{self, Write};
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

use super::common::{NoSidecar, Quiet};
use crate::core::progress::Progress;
use crate::core::size::human;
use crate::maint::defrag::{analyze, defrag, write_analysis, DefragMode, DefragOptions, Tuning};

const EXAMPLES: &str = "\
Examples:
  barecat-defrag data.barecat                 # pack every file back to back
  barecat-defrag --quick data.barecat         # at most 5 s: fill holes from the end
  barecat-defrag --quick --time-limit 60 data.barecat
  barecat-defrag --smart data.barecat         # as much as full, moving fewer bytes
  barecat-defrag --dry-run data.barecat       # what could be freed; changes nothing
  barecat-defrag --dry-run --json data.barecat   # the same, as JSON

From cron (quiet unless something fails):
  17 3 * * *  barecat-defrag --quick -q /data/train.barecat

Full mode packs the files in address order, starting a new shard where the next
file would cross the shard size limit, then truncates the shards and removes the
emptied ones. Quick mode moves files from the end of the archive into earlier
holes that fit them, then truncates what it freed. Smart mode gives back what
full mode gives back but moves fewer bytes: it works out two plans (shift the
files of each shard over its holes; or first fill holes with files from the end,
then shift) and carries out the cheaper; it never moves more than packing (Python
barecat's --smart) would. With several modes given, --dry-run wins, then --quick
(as in Python barecat). All are safe to interrupt at
any moment: a file's bytes are copied and synced before its row changes, and no
byte a committed row points at is overwritten, so every file stays readable.
An archive with nothing to free is left alone.

Exit status: 0 success (also when there is nothing to do), 1 failure, 2 usage error.";

/// Compact the shards of an archive.
#[derive(Debug, Parser)]
#[command(name = "barecat-defrag", version, after_help = EXAMPLES)]
pub struct Args {
    /// The archive
    pub archive: std::path::PathBuf,
    /// Only move files from the end into earlier holes, for a limited time
    #[arg(long)]
    pub quick: bool,
    /// Give back as much as a full defrag, moving as few bytes as a plan can tell
    #[arg(long)]
    pub smart: bool,
    /// Time budget of --quick, in seconds
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 5.0,
        visible_alias = "max-seconds",
        value_parser = parse_seconds
    )]
    pub time_limit: f64,
    /// Report the space that could be freed; change nothing
    #[arg(short = 'n', long)]
    pub dry_run: bool,
    /// Print the report (or, with --dry-run, the analysis) as one JSON document
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

fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.0..1e9).contains(&v) => Ok(v),
        _ => Err(format!("{s:?} is not a number of seconds")),
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    if args.dry_run {
        let a = analyze(&args.archive)?;
        if args.json {
            writeln!(out, "{}", serde_json::to_string_pretty(&a)?)?;
        } else {
            write_analysis(&a, &mut out)?;
        }
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    let opts = DefragOptions {
        mode: if args.quick {
            DefragMode::Quick {
                time_limit: Duration::from_secs_f64(args.time_limit),
            }
        } else if args.smart {
            DefragMode::Smart
        } else {
            DefragMode::Full
        },
        step_delay: args.step_delay_ms.map(Duration::from_millis),
        crash_after_steps: args.crash_after_steps,
        tuning: if args.small_steps {
            Tuning::small()
        } else {
            Tuning::default()
        },
        sidecar: args.sidecar.enabled(),
    };
    let progress = Progress::new(
        super::show_progress(args.quiet.quiet),
        "defragmenting",
        None,
    );
    let r = defrag(&args.archive, &opts, &progress)?;
    progress.finish();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&r)?)?;
    } else if !args.quiet.quiet {
        let name = args.archive.display();
        if r.nothing_to_do {
            writeln!(out, "{name}: nothing to free")?;
        } else {
            writeln!(
                out,
                "{name}: freed {} ({} -> {}), moved {} files ({}), {} -> {} shard(s){}{}",
                human(r.freed_bytes),
                human(r.physical_before),
                human(r.physical_after),
                r.moved_files,
                human(r.moved_bytes),
                r.shards_before,
                r.shards_after,
                if r.out_of_time {
                    "; time limit reached, run again to continue"
                } else {
                    ""
                },
                match &r.smart {
                    Some(p) if p.filled_files > 0 => format!(
                        "; {} files ({}) moved into holes from the end, the rest shifted \
                         (packing would move {})",
                        p.filled_files,
                        human(p.filled_bytes),
                        human(p.packing_bytes)
                    ),
                    Some(p) => format!(
                        "; files shifted within their shards (packing would move {})",
                        human(p.packing_bytes)
                    ),
                    None => String::new(),
                }
            )?;
        }
        super::records::print_table_action(&args.archive, r.records_table);
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
