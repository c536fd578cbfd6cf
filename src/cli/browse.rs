//! `barecat browse`: the ranger-like browser ([`crate::interactive::browse`]).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

use crate::Archive;

const EXAMPLES: &str = "\
Examples:
  barecat browse data.barecat          # from the root
  barecat browse data.barecat train    # start in a directory

Three columns: the parent directory, the current one, and a preview of the
selected entry (a directory's contents; a file's size, mode, time and CRC, then its
first lines, or a hex dump when it is binary). Keys: j/k or up/down move, l, right
or Enter opens a directory (or focuses a file's preview), h, left or Backspace goes
back, g/G or Home/End, Page Up/Down, Tab moves the focus to the preview and back
(j/k then scroll it), q or Ctrl-C quits. Needs a terminal: with stdout not a
terminal it refuses (exit status 2).

Exit status: 0 success, 1 failure (a damaged archive), 2 usage error.";

/// Browse an archive in three columns, like ranger
#[derive(Debug, Parser)]
#[command(name = "barecat-browse", version, after_help = EXAMPLES)]
pub struct Args {
    /// The archive
    pub archive: PathBuf,
    /// Directory to start in (default: the root)
    pub path: Option<String>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if let Some(why) = crate::interactive::term::not_a_terminal() {
        crate::usage!("{why}: barecat browse needs a terminal");
    }
    let archive = Archive::open(&args.archive)
        .with_context(|| format!("cannot open {}", args.archive.display()))?;
    crate::interactive::browse::run(archive, args.path.as_deref().unwrap_or(""))?;
    Ok(ExitCode::SUCCESS)
}
