//! Command-line front ends.
//!
//! One module per command: a clap `Args` struct and a `run` function that turns the
//! arguments into library options and calls the library. The `barecat` binary runs
//! any command, as a subcommand (`barecat create …`) or by the name it was invoked
//! under (a `barecat-create` link to `barecat`); each `src/bin/barecat-<name>.rs`
//! runs one command directly.
//!
//! Exit codes: 0 success, 1 failure (including "done, but some entries were
//! skipped"), 2 usage error.

use std::ffi::OsString;
use std::fmt;
use std::io::{self, IsTerminal};
use std::path::Path;
use std::process::ExitCode;

use clap::{ArgMatches, CommandFactory, FromArgMatches};

pub mod abbrev;
pub mod browse;
pub mod cat;
pub mod chmod;
pub mod common;
pub mod completion;
pub mod convert;
pub mod create;
pub mod create_recursive;
pub mod defrag;
pub mod docs;
pub mod du;
pub mod extract;
pub mod find;
pub mod from_archive;
pub mod from_tar;
pub mod from_zip;
pub mod index_to_csv;
pub mod ingest;
pub mod list;
pub mod ls;
pub mod merge;
pub mod merge_symlink;
pub mod mount;
pub mod mv;
pub mod ncdu;
pub mod records;
pub mod repair;
pub mod reshard;
pub mod rm;
pub mod rsync;
pub mod shell;
pub mod sidecar;
pub mod subset;
pub mod to_archive;
pub mod to_ncdu_json;
pub mod to_tar;
pub mod to_zip;
pub mod touch;
pub mod tree;
pub mod upgrade;
pub mod verify;
pub mod wrap;

/// Exit status for "done, but something failed along the way".
pub const FAILURE: u8 = 1;
/// Exit status for usage errors.
pub const USAGE: u8 = 2;

/// A usage error found after parsing (an invalid combination of options, …).
#[derive(Debug)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Return a usage error (exit status 2) from a command's `run`.
#[macro_export]
macro_rules! usage {
    ($($t:tt)*) => { return Err(anyhow::Error::new($crate::cli::UsageError(format!($($t)*)))) };
}

/// A command of the suite.
pub struct Command {
    /// Subcommand name: `barecat <name>`.
    pub name: &'static str,
    /// Name of its own binary (`barecat-<name>`, or a legacy name).
    pub binary: &'static str,
    /// Legacy entry points are reachable by their binary name but not listed.
    pub legacy: bool,
    /// Other names of the subcommand (`barecat c` for `barecat create`, Python
    /// barecat's spellings); shown in `barecat --help`.
    pub aliases: &'static [&'static str],
    /// The clap definition.
    pub command: fn() -> clap::Command,
    run: fn(&ArgMatches) -> anyhow::Result<ExitCode>,
}

macro_rules! register {
    ($name:literal, $bin:literal, $legacy:literal, [$($alias:literal),*], $args:ty, $run:path) => {
        Command {
            name: $name,
            binary: $bin,
            legacy: $legacy,
            aliases: &[$($alias),*],
            command: || <$args as CommandFactory>::command(),
            run: |m| {
                let args = <$args as FromArgMatches>::from_arg_matches(m)?;
                $run(args)
            },
        }
    };
    ($name:literal, $bin:literal, $legacy:literal, $args:ty, $run:path) => {
        register!($name, $bin, $legacy, [], $args, $run)
    };
}

/// Every command, in the order `barecat --list` shows them.
pub fn commands() -> &'static [Command] {
    static COMMANDS: &[Command] = &[
        // Getting data in.
        register!(
            "create",
            "barecat-create",
            false,
            ["c"],
            create::Args,
            create::run
        ),
        register!(
            "add",
            "barecat-add",
            false,
            ["a"],
            create::AddArgs,
            create::run_add
        ),
        register!(
            "from-tar",
            "barecat-from-tar",
            false,
            from_tar::Args,
            from_tar::run
        ),
        register!(
            "from-zip",
            "barecat-from-zip",
            false,
            from_zip::Args,
            from_zip::run
        ),
        register!(
            "from-archive",
            "barecat-from-archive",
            false,
            from_archive::Args,
            from_archive::run
        ),
        register!(
            "convert",
            "barecat-convert",
            false,
            convert::Args,
            convert::run
        ),
        // Getting data out.
        register!(
            "extract",
            "barecat-extract",
            false,
            ["x"],
            common::WithRules<extract::Args>,
            extract::run
        ),
        register!("to-zip", "barecat-to-zip", false, to_zip::Args, to_zip::run),
        register!("to-tar", "barecat-to-tar", false, to_tar::Args, to_tar::run),
        register!("cat", "barecat-cat", false, cat::Args, cat::run),
        register!("mount", "barecat-mount", false, mount::Args, mount::run),
        // Looking inside.
        register!("ls", "barecat-ls", false, ls::Args, ls::run),
        register!("du", "barecat-du", false, du::Args, du::run),
        // Python barecat's listing commands, line for line.
        register!(
            "list",
            "barecat-list",
            false,
            ["l", "t"],
            list::Args,
            list::run
        ),
        register!("find", "barecat-find", false, find::Args, find::run),
        register!("tree", "barecat-tree", false, tree::Args, tree::run),
        // Interactive: a shell over the archive, ncdu, a ranger-like browser.
        register!("shell", "barecat-shell", false, shell::Args, shell::run),
        register!("ncdu", "barecat-ncdu", false, ncdu::Args, ncdu::run),
        register!("browse", "barecat-browse", false, browse::Args, browse::run),
        register!(
            "to-ncdu-json",
            "barecat-to-ncdu-json",
            false,
            to_ncdu_json::Args,
            to_ncdu_json::run
        ),
        register!(
            "index-to-csv",
            "barecat-index-to-csv",
            false,
            index_to_csv::Args,
            index_to_csv::run
        ),
        // Maintenance.
        register!("verify", "barecat-verify", false, verify::Args, verify::run),
        register!("defrag", "barecat-defrag", false, defrag::Args, defrag::run),
        register!(
            "merge",
            "barecat-merge",
            false,
            common::WithRules<merge::Args>,
            merge::run
        ),
        register!(
            "merge-symlink",
            "barecat-merge-symlink",
            false,
            merge_symlink::Args,
            merge_symlink::run
        ),
        register!(
            "subset",
            "barecat-subset",
            false,
            common::WithRules<subset::Args>,
            subset::run
        ),
        register!(
            "upgrade",
            "barecat-upgrade",
            false,
            upgrade::Args,
            upgrade::run
        ),
        register!("repair", "barecat-repair", false, repair::Args, repair::run),
        register!(
            "reshard",
            "barecat-reshard",
            false,
            reshard::Args,
            reshard::run
        ),
        // Syncing, and editing in place.
        register!("rsync", "barecat-rsync", false, rsync::Args, rsync::run),
        register!("rm", "barecat-rm", false, rm::Args, rm::run),
        register!("mv", "barecat-mv", false, mv::Args, mv::run),
        register!("chmod", "barecat-chmod", false, chmod::Args, chmod::run),
        register!("touch", "barecat-touch", false, touch::Args, touch::run),
        // Records by integer index.
        register!(
            "records",
            "barecat-records",
            false,
            records::Args,
            records::run
        ),
        register!(
            "sidecar",
            "barecat-sidecar",
            false,
            sidecar::Args,
            sidecar::run
        ),
        register!(
            "completion-script",
            "barecat-completion-script",
            false,
            completion::Args,
            completion::run
        ),
        // Legacy entry points of Python barecat, reachable by their program names.
        register!(
            "extract-single",
            "barecat-extract-single",
            true,
            cat::LegacyArgs,
            cat::run_legacy
        ),
        register!(
            "barecat2archive",
            "barecat2archive",
            true,
            to_archive::Args,
            to_archive::run
        ),
        register!(
            "archive2barecat",
            "archive2barecat",
            true,
            from_tar::LegacyArgs,
            from_tar::run_legacy
        ),
        register!(
            "create-recursive",
            "barecat-create-recursive",
            true,
            create_recursive::Args,
            create_recursive::run
        ),
        register!(
            "upgrade-database",
            "barecat-upgrade-database",
            true,
            upgrade::Args,
            upgrade::run
        ),
    ];
    COMMANDS
}

/// Commands whose options do not follow clap's conventions get their arguments
/// rewritten first: `find`'s single-dash options (`-name`).
fn rewrite_argv(command: &str, argv: Vec<OsString>) -> Vec<OsString> {
    match command {
        "find" | "barecat-find" => find::dash_options(argv),
        _ => argv,
    }
}

/// The clap definition of a command, as every program parses it: long options may
/// be abbreviated to any prefix no other option shares (Python's argparse takes
/// them; see [`abbrev`] for Python's own abbreviations).
pub fn clap_command(c: &Command) -> clap::Command {
    infer_long_args((c.command)())
}

fn infer_long_args(cmd: clap::Command) -> clap::Command {
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    let mut cmd = cmd.infer_long_args(true);
    for n in names {
        cmd = cmd.mut_subcommand(n, infer_long_args);
    }
    cmd
}

/// With `BARECAT_DEBUG_ARGS=1` in the environment, a program prints the long name
/// of every option given on its command line (the name a prefix was taken for)
/// and exits without running: how the command line was understood.
fn debug_args(cmd: &clap::Command, m: &ArgMatches) -> bool {
    if std::env::var_os("BARECAT_DEBUG_ARGS").is_none_or(|v| v != "1") {
        return false;
    }
    for a in cmd.get_arguments() {
        let id = a.get_id().as_str();
        if m.try_contains_id(id).unwrap_or(false)
            && m.value_source(id) == Some(clap::parser::ValueSource::CommandLine)
        {
            match a.get_long() {
                Some(l) => {
                    let mut names = vec![format!("--{l}")];
                    names.extend(
                        a.get_all_aliases()
                            .unwrap_or_default()
                            .iter()
                            .map(|x| format!("--{x}")),
                    );
                    println!("{}", names.join(" "));
                }
                None => println!("{id}"),
            }
        }
    }
    true
}

fn program_name(argv0: &OsString) -> String {
    Path::new(argv0)
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "barecat".into())
}

/// glibc hands freed memory back to the kernel as soon as 128 KiB are free at the
/// top of a heap; commands that read millions of files into short-lived buffers on
/// several threads then take a page fault for every page of nearly every new buffer
/// (a third of `barecat-to-tar`'s time from page cache). Keeping up to 64 MiB spare
/// removes that for a few MB of resident memory.
fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters; called before any thread starts.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 20);
        libc::mallopt(libc::M_TOP_PAD, 64 << 20);
    }
}

/// Prints the library's log records (`log` facade) on stderr as one line each,
/// `PROG: warning: …` for warnings. Warnings and errors always; info and debug
/// lines with `BARECAT_LOG=info` or `BARECAT_LOG=debug`.
struct StderrLog;

static LOG_PROG: std::sync::OnceLock<String> = std::sync::OnceLock::new();

impl log::Log for StderrLog {
    fn enabled(&self, meta: &log::Metadata<'_>) -> bool {
        meta.level() <= log::max_level()
    }

    fn log(&self, record: &log::Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let prog = LOG_PROG.get().map_or("barecat", String::as_str);
        let msg = record.args().to_string().replace('\n', " ");
        match record.level() {
            log::Level::Error => eprintln!("{prog}: error: {msg}"),
            log::Level::Warn => eprintln!("{prog}: warning: {msg}"),
            _ => eprintln!("{prog}: {msg}"),
        }
    }

    fn flush(&self) {}
}

fn install_logger(prog: &str) {
    static LOGGER: StderrLog = StderrLog;
    let _ = LOG_PROG.set(prog.to_string());
    if log::set_logger(&LOGGER).is_ok() {
        let level = match std::env::var("BARECAT_LOG").as_deref() {
            Ok("debug") => log::LevelFilter::Debug,
            Ok("info") => log::LevelFilter::Info,
            Ok("off") => log::LevelFilter::Off,
            _ => log::LevelFilter::Warn,
        };
        log::set_max_level(level);
    }
}

fn install_panic_hook(prog: &str) {
    let prog = prog.to_string();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!("{prog}: internal error: {msg}{at} (please report this bug)");
    }));
}

/// An error and its causes as one line, `context: error: cause`. A cause that the
/// message before it already quotes (the library's errors name their source) is not
/// repeated, nor is one that only adds a code to it (SQLite's `Error code 13: …`).
pub fn one_line(err: &anyhow::Error) -> String {
    let mut msg = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        let part = text.as_str();
        // `Error code 13: database or disk is full` → `database or disk is full`.
        let gist = part
            .strip_prefix("Error code ")
            .and_then(|r| r.split_once(": "))
            .filter(|(code, _)| code.bytes().all(|b| b.is_ascii_digit()))
            .map_or(part, |(_, g)| g);
        if msg.contains(part) || msg.contains(gist) {
            continue;
        }
        // `cannot open /a` + `/a: no such archive` → `cannot open /a: no such archive`.
        let part = match part.split_once(": ") {
            Some((head, rest)) if !msg.is_empty() && msg.ends_with(head) => rest,
            _ => part,
        };
        if !msg.is_empty() {
            msg.push_str(": ");
        }
        msg.push_str(part);
    }
    msg.replace('\n', " ")
}

/// Print an error as one line and pick the exit status.
fn report(prog: &str, err: anyhow::Error) -> ExitCode {
    for cause in err.chain() {
        if let Some(e) = cause.downcast_ref::<io::Error>() {
            if e.kind() == io::ErrorKind::BrokenPipe {
                // The reader of our output went away (`… | head`): not an error.
                return ExitCode::SUCCESS;
            }
        }
        if let Some(crate::Error::Io { source, .. } | crate::Error::Output { source }) =
            cause.downcast_ref::<crate::Error>()
        {
            if source.kind() == io::ErrorKind::BrokenPipe {
                return ExitCode::SUCCESS;
            }
        }
        if let Some(e) = cause.downcast_ref::<clap::Error>() {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { USAGE } else { 0 });
        }
    }
    let usage = err.downcast_ref::<UsageError>().is_some();
    let msg = one_line(&err);
    eprintln!("{prog}: {msg}");
    if usage {
        eprintln!("Try '{prog} --help' for more information.");
        ExitCode::from(USAGE)
    } else {
        ExitCode::from(FAILURE)
    }
}

fn run_matches(prog: &str, cmd: &Command, matches: &ArgMatches) -> ExitCode {
    if debug_args(&clap_command(cmd), matches) {
        return ExitCode::SUCCESS;
    }
    match (cmd.run)(matches) {
        Ok(code) => code,
        Err(e) => report(prog, e),
    }
}

/// The `barecat` command with every command as a subcommand.
pub fn barecat_command() -> clap::Command {
    let top = clap::Command::new("barecat")
        .version(env!("CARGO_PKG_VERSION"))
        .about("Fast, safe tools for barecat archives")
        .long_about(
            "Fast, safe tools for barecat archives: millions of small files in an SQLite \
             index plus raw shard files, compatible with Python barecat 0.3.\n\n\
             Every command is also installed as its own program: `barecat create` is \
             `barecat-create`.",
        )
        .subcommand_required(false)
        .arg_required_else_help(true)
        .arg(
            clap::Arg::new("list")
                .long("list")
                .action(clap::ArgAction::SetTrue)
                .help("List the commands"),
        )
        .arg(
            clap::Arg::new("generate-docs")
                .long("generate-docs")
                .value_name("DIR")
                .value_parser(clap::value_parser!(std::path::PathBuf))
                .hide(true)
                .help("Write man pages and shell completions below DIR"),
        )
        .after_help(
            "Examples:\n  \
             barecat --list                          # every command\n  \
             barecat ls -l data.barecat train        # the same as barecat-ls -l …\n  \
             barecat cat data.barecat train/a.jpg > a.jpg\n\n\
             Exit status: 0 success, 1 failure (some entries failed or problems found), \
             2 usage error.",
        );
    let mut top = infer_long_args(top);
    for c in commands().iter().filter(|c| !c.legacy) {
        top = top.subcommand(
            clap_command(c)
                .name(c.name)
                .visible_aliases(c.aliases)
                .bin_name(format!("barecat {}", c.name)),
        );
    }
    top
}

/// The clap definition of the command a program name or `barecat` subcommand
/// (name or alias) runs, for [`abbrev::expand_argv`].
fn command_named(name: &str) -> Option<clap::Command> {
    commands()
        .iter()
        .find(|c| c.binary == name || (!c.legacy && (c.name == name || c.aliases.contains(&name))))
        .map(clap_command)
}

/// Entry point of every binary: `program` is the binary's own name. The `barecat`
/// binary also runs a command when it is invoked through a link named after one.
pub(crate) fn main(program: &str) -> ExitCode {
    let argv: Vec<OsString> = std::env::args_os().collect();
    let prog = match argv.first().map(program_name) {
        Some(p) if program == "barecat" && commands().iter().any(|c| c.binary == p) => p,
        _ => program.to_string(),
    };
    install_panic_hook(&prog);
    install_logger(&prog);
    tune_allocator();
    // Invoked through a link named after a command: run that command.
    if let Some(cmd) = commands().iter().find(|c| c.binary == prog) {
        let argv = abbrev::expand_argv(&prog, rewrite_argv(&prog, argv), &command_named);
        return match clap_command(cmd).try_get_matches_from(&argv) {
            Ok(m) => run_matches(&prog, cmd, &m),
            Err(e) => {
                let _ = e.print();
                ExitCode::from(if e.use_stderr() { USAGE } else { 0 })
            }
        };
    }
    let sub = argv
        .get(1)
        .and_then(|a| a.to_str())
        .unwrap_or("")
        .to_string();
    let argv = abbrev::expand_argv("barecat", rewrite_argv(&sub, argv), &command_named);
    let matches = match barecat_command().try_get_matches_from(&argv) {
        Ok(m) => m,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { USAGE } else { 0 });
        }
    };
    if let Some(dir) = matches.get_one::<std::path::PathBuf>("generate-docs") {
        return match docs::generate_docs(dir) {
            Ok(files) => {
                println!("{} files written below {}", files.len(), dir.display());
                ExitCode::SUCCESS
            }
            Err(e) => report(
                &prog,
                anyhow::Error::new(e).context(dir.display().to_string()),
            ),
        };
    }
    if matches.get_flag("list") {
        for c in commands().iter().filter(|c| !c.legacy) {
            let about = (c.command)()
                .get_about()
                .map(|a| a.to_string())
                .unwrap_or_default();
            println!("{:<17} {}", c.name, about);
        }
        return ExitCode::SUCCESS;
    }
    match matches.subcommand() {
        Some((name, sub)) => {
            let cmd = commands()
                .iter()
                .find(|c| c.name == name)
                .expect("clap only accepts registered subcommands");
            run_matches(&format!("barecat {name}"), cmd, sub)
        }
        None => {
            let _ = barecat_command().print_help();
            ExitCode::from(USAGE)
        }
    }
}

/// True when progress bars should be drawn: stderr is a terminal and not `-q`.
pub fn show_progress(quiet: bool) -> bool {
    !quiet && io::stderr().is_terminal()
}

/// Print the library's warnings about an archive (old schema, …) to stderr.
pub fn print_warnings(prog: &str, warnings: &[String]) {
    for w in warnings {
        eprintln!("{prog}: warning: {w}");
    }
}

#[cfg(test)]
mod tests {
    use super::one_line;

    #[test]
    fn causes_are_not_repeated() {
        let io = std::io::Error::from_raw_os_error(28);
        let e = anyhow::Error::new(crate::Error::io("/x/f", io)).context("cannot extract");
        assert_eq!(
            one_line(&e),
            "cannot extract: /x/f: No space left on device (os error 28)"
        );
        let e = anyhow::Error::new(crate::Error::ArchiveNotFound {
            path: "/x/a.barecat".into(),
        })
        .context("cannot open /x/a.barecat");
        assert_eq!(
            one_line(&e),
            "cannot open /x/a.barecat: no such archive",
            "the path is not repeated"
        );
        let e = anyhow::anyhow!("outer").context("ctx\nwith newline");
        assert_eq!(one_line(&e), "ctx with newline: outer");
        let full = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_FULL),
            Some("database or disk is full".into()),
        );
        let e = anyhow::Error::new(crate::Error::sqlite("/x/a.barecat", full));
        assert_eq!(one_line(&e), "/x/a.barecat: database or disk is full");
    }
}
