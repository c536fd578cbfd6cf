//! `barecat completion-script SHELL`: print a shell completion script, the same
//! one that is committed under completions/ (generated from the clap definitions).

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use clap_complete::Shell;

const EXAMPLES: &str = "\
Examples:
  source <(barecat completion-script bash)          # this bash session
  barecat completion-script bash > ~/.local/share/bash-completion/completions/barecat
  barecat completion-script zsh > ~/.zfunc/_barecat  # a directory on $fpath
  barecat completion-script fish > ~/.config/fish/completions/barecat.fish
  barecat completion-script bash barecat-ls          # the script of barecat-ls

The script is printed, not its path: Python barecat's `source $(barecat
completion-script bash)` becomes `source <(barecat completion-script bash)`.";

/// clap value enum of the shells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ShellArg {
    Bash,
    Zsh,
    Fish,
}

/// Print the shell completion script of barecat (or of one barecat-<command>).
#[derive(Debug, Parser)]
#[command(name = "barecat-completion-script", version, after_help = EXAMPLES)]
pub struct Args {
    /// The shell
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: ShellArg,
    /// The program to complete: barecat, or one of the barecat-<command> programs
    #[arg(value_name = "PROGRAM", default_value = "barecat")]
    pub program: String,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let shell = match args.shell {
        ShellArg::Bash => Shell::Bash,
        ShellArg::Zsh => Shell::Zsh,
        ShellArg::Fish => Shell::Fish,
    };
    let Some(script) = super::docs::completion(shell, &args.program) else {
        crate::usage!(
            "{}: not a barecat program (barecat --list shows the commands)",
            args.program
        );
    };
    let mut out = std::io::stdout().lock();
    out.write_all(&script)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
