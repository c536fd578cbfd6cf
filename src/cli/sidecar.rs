//! `barecat-sidecar`: build, check or remove an archive's B-tree sidecar.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use super::common::Quiet;
use crate::core::format::layout::Layout;
use crate::core::sidecar::{self, Status};
use crate::core::size::human;

const EXAMPLES: &str = "\
Examples:
  barecat-sidecar data.barecat            # write (or rewrite) data.barecat-btreemeta
  barecat-sidecar --check data.barecat    # exit 0 valid, 1 missing, stale or corrupt
  barecat-sidecar --check --json data.barecat
  barecat-sidecar --remove data.barecat

The sidecar ARCHIVE-btreemeta (SFBTM v3) bundles page 1, the schema b-tree and
every interior b-tree page of the index, zstd-compressed, so that a reader of a
remote index fetches them in one request. The commands that finish an archive
(create, from-tar, from-zip, merge, merge-symlink, defrag, repair) write it
unless --no-sidecar; this command writes it for archives that lack one (written
by Python barecat, say). An index in WAL journal mode gets none.

--check validates the format, checks that page 1 matches the index (SQLite's
change counter and size: any change to the index since makes it stale) and that
every page equals the index's page, and prints the verdict in one line.

Exit status: 0 success (with --check: valid), 1 failure (with --check: missing,
stale, corrupt or another format), 2 usage error.";

/// Build, check or remove the B-tree sidecar of an archive.
#[derive(Debug, Parser)]
#[command(name = "barecat-sidecar", version, after_help = EXAMPLES)]
pub struct Args {
    /// The archive
    pub archive: PathBuf,
    /// Check the sidecar against the index instead of writing it
    #[arg(long, conflicts_with = "remove")]
    pub check: bool,
    /// Remove the sidecar
    #[arg(long)]
    pub remove: bool,
    /// zstd compression level (1 to 22)
    #[arg(long, value_name = "N", default_value_t = sidecar::DEFAULT_LEVEL,
          value_parser = clap::value_parser!(i32).range(1..=22),
          conflicts_with_all = ["check", "remove"])]
    pub level: i32,
    /// Print one JSON document
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub quiet: Quiet,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let layout = Layout::resolve(&args.archive);
    let path = layout.sidecar();
    if args.check {
        let r = sidecar::check(&args.archive)?;
        if args.json {
            writeln!(out, "{}", serde_json::to_string_pretty(&r)?)?;
        } else if !(args.quiet.quiet && r.is_valid()) {
            writeln!(out, "{}: {}", path.display(), r.message)?;
        }
        out.flush()?;
        return Ok(if r.status == Status::Valid {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(super::FAILURE)
        });
    }
    if args.remove {
        let removed = sidecar::remove(&layout)?;
        if args.json {
            let doc = serde_json::json!({
                "archive": args.archive,
                "sidecar": path,
                "removed": removed,
            });
            writeln!(out, "{doc:#}")?;
        } else if !args.quiet.quiet {
            let what = if removed { "removed" } else { "no sidecar" };
            writeln!(out, "{}: {what}", path.display())?;
        }
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    let w = sidecar::rebuild(&args.archive, args.level).map_err(|r| match r {
        sidecar::Refusal::Failed(e) => anyhow::anyhow!("{e}"),
        other => anyhow::anyhow!(
            "{}: not written ({}): {other}",
            path.display(),
            other.reason()
        ),
    })?;
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&w)?)?;
    } else if !args.quiet.quiet {
        writeln!(
            out,
            "{}: {} pages of {} bytes, {} ({:.2}% of the {} index)",
            w.path.display(),
            w.pages,
            w.page_size,
            human(w.bytes),
            100.0 * w.bytes as f64 / w.index_bytes.max(1) as f64,
            human(w.index_bytes)
        )?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
