//! `barecat shell`: an interactive shell over an archive
//! ([`crate::interactive::shell`]).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

use crate::interactive::shell::{self, Io, Shell, Status};

const EXAMPLES: &str = "\
Examples:
  barecat shell data.barecat                       # interactive
  barecat shell data.barecat -c 'ls -l train'      # one command
  barecat shell data.barecat -c 'cd train; find . -name \"*.jpg\"'
  barecat shell -w data.barecat -c 'put notes.txt docs/notes.txt'

Commands (Python barecat's): cd, pwd, ls [-l] [-R], lss, tree [-L N] [-d], cat,
head [-n N], stat, find [-name P] [-path P] [-type f|d] [-size N] [-maxdepth N],
du [-a] [-s] [-H] [-d N], info, sql QUERY; on the local side lcd, lpwd, lls, get,
mget PATTERN; with -w also put, mput PATTERN, rm, mv. `help` lists them, `!CMD` runs
a shell command, `quit`, `exit` or Ctrl-D leaves. Tab completes commands and
archive paths; the history is kept in ~/.barecat_shell_history. Arguments with
wildcards are globs. `sql` is read-only unless -w. With -w each write is one
transaction, committed when the command ends.

With -c, the commands (separated by ';') run one after the other, and the exit
status is 1 if any of them failed. Messages about failures go to stderr.

Exit status: 0 success, 1 a command failed (with -c) or the archive cannot be
opened, 2 usage error.";

/// Interactive shell over an archive
#[derive(Debug, Parser)]
#[command(name = "barecat-shell", version, after_help = EXAMPLES)]
pub struct Args {
    /// The archive
    pub archive: PathBuf,
    /// Run these commands (separated by ';') and exit
    #[arg(short = 'c', long = "cmd", value_name = "COMMANDS")]
    pub cmd: Option<String>,
    /// Open the archive for writing (put, mput, rm, mv, writing SQL)
    #[arg(short, long)]
    pub write: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let sh = Shell::open(&args.archive, args.write)
        .with_context(|| format!("cannot open {}", args.archive.display()))?;
    let Some(cmds) = args.cmd else {
        shell::repl::run(sh)?;
        return Ok(ExitCode::SUCCESS);
    };
    let mut sh = sh;
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut err = stderr.lock();
    let mut failed = false;
    for c in shell::split_commands(&cmds) {
        let st = sh.run_line(
            &c,
            &mut Io {
                out: &mut out,
                err: &mut err,
            },
        )?;
        out.flush()?;
        match st {
            Status::Failed => failed = true,
            Status::Quit => break,
            Status::Ok => {}
        }
    }
    out.flush()?;
    Ok(if failed {
        ExitCode::from(super::FAILURE)
    } else {
        ExitCode::SUCCESS
    })
}
