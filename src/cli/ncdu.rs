//! `barecat ncdu`: the disk-usage browser ([`crate::interactive::ncdu`]).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

use crate::Archive;

const EXAMPLES: &str = "\
Examples:
  barecat ncdu data.barecat            # the whole archive
  barecat ncdu data.barecat train      # start in a directory

Sizes and file counts come from the index's directory statistics, so even a
directory of millions of files opens at once. Keys: up/down or j/k move, Enter,
right or l opens a directory, left, h or Backspace goes back, Page Up/Down, Home/g,
End/G, s sorts by size, C by file count, n by name (again: the other way round),
? shows the keys, q or Ctrl-C quits. Needs a terminal: with stdout not a terminal
it refuses (exit status 2); `barecat du` prints the same sizes for scripts.

Exit status: 0 success, 1 failure (a damaged archive), 2 usage error.";

/// Browse the disk usage of an archive, like ncdu
#[derive(Debug, Parser)]
#[command(name = "barecat-ncdu", version, after_help = EXAMPLES)]
pub struct Args {
    /// The archive
    pub archive: PathBuf,
    /// Directory to start in (default: the root)
    pub path: Option<String>,
    /// Print the first screen (80x24) as text and exit, without a terminal (for
    /// benchmarks and scripts)
    #[arg(long, hide = true)]
    pub print_screen: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.print_screen {
        let archive = Archive::open(&args.archive)
            .with_context(|| format!("cannot open {}", args.archive.display()))?;
        let name = args.archive.display().to_string();
        let mut m = crate::interactive::ncdu::Ncdu::new(
            archive,
            &name,
            args.path.as_deref().unwrap_or(""),
        )?;
        let mut out = std::io::stdout().lock();
        for row in m.render(80, 24)? {
            writeln!(out, "{}", row.text().trim_end())?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(why) = crate::interactive::term::not_a_terminal() {
        crate::usage!("{why}: barecat ncdu needs a terminal (barecat du prints sizes)");
    }
    let archive = Archive::open(&args.archive)
        .with_context(|| format!("cannot open {}", args.archive.display()))?;
    let name = args.archive.display().to_string();
    crate::interactive::ncdu::run(archive, &name, args.path.as_deref().unwrap_or(""))?;
    Ok(ExitCode::SUCCESS)
}
