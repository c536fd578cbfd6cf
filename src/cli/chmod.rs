//! `barecat-chmod`: change the permission bits stored for files and directories.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

use super::common::{NoSidecar, Quiet};
use crate::core::entry::{Entry, Meta, S_IFMT};
use crate::core::index::Index;
use crate::edit::{self, MetaChange};
use crate::Layout;

const EXAMPLES: &str = "\
Examples:
  barecat chmod data.barecat 644 labels.csv
  barecat chmod -R data.barecat a+rX train          # directories searchable, files readable
  barecat chmod data.barecat go-w 'scripts/*.sh'
  barecat chmod -n -v -R data.barecat 750 bin

MODE: octal (644, 0755) or symbolic like chmod(1): [ugoa...][+-=][rwxXst...],
several separated by commas. The file-type bits stored with the mode are kept.
PATH: a file or directory, or a glob (as barecat-rm takes them).

Only the index rows change, in one transaction. barecat-extract restores these
bits; Python barecat's `ls -l` shows them. Python barecat has this only in its API
(Index.chmod).

Exit status: 0 success, 1 if a PATH could not be changed (each one is reported),
2 usage error.";

/// Change the permission bits stored for files and directories.
#[derive(Debug, Parser)]
#[command(
    name = "barecat-chmod",
    version,
    after_help = EXAMPLES,
    override_usage = "barecat-chmod [OPTIONS] ARCHIVE MODE PATH..."
)]
pub struct Args {
    /// The archive (its index file, e.g. data.barecat)
    #[arg(value_name = "ARCHIVE")]
    pub archive: PathBuf,
    /// The new mode: octal, or symbolic (u+x, go-w, a=rX)
    #[arg(value_name = "MODE", value_parser = parse_mode)]
    pub mode: ModeSpec,
    /// Files, directories or globs
    #[arg(value_name = "PATH|GLOB", required = true)]
    pub paths: Vec<String>,
    /// Also change everything below the directories named
    #[arg(short = 'R', long)]
    pub recursive: bool,
    /// Print what would change, and change nothing
    #[arg(short = 'n', long)]
    pub dry_run: bool,
    /// Print each change
    #[arg(short, long)]
    pub verbose: bool,
    #[command(flatten)]
    pub quiet: Quiet,
    #[command(flatten)]
    pub sidecar: NoSidecar,
}

/// A parsed MODE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModeSpec {
    Octal(u32),
    /// (who mask, operator, permission letters)
    Symbolic(Vec<(u32, char, String)>),
}

/// Parse a chmod MODE.
pub fn parse_mode(s: &str) -> Result<ModeSpec, String> {
    let bad = || format!("{s:?} is not a mode (octal like 644, or symbolic like u+x,go-w)");
    if !s.is_empty() && s.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
        return match u32::from_str_radix(s, 8) {
            Ok(m) if m <= 0o7777 => Ok(ModeSpec::Octal(m)),
            _ => Err(bad()),
        };
    }
    let mut clauses = Vec::new();
    for clause in s.split(',') {
        let op_at = clause.find(['+', '-', '=']).ok_or_else(bad)?;
        let mut who = 0u32;
        for c in clause[..op_at].chars() {
            who |= match c {
                'u' => 0o4700,
                'g' => 0o2070,
                'o' => 0o1007,
                'a' => 0o7777,
                _ => return Err(bad()),
            };
        }
        if who == 0 {
            who = 0o7777;
        }
        // Several operators in one clause (u+x-w) apply in turn.
        let mut rest = &clause[op_at..];
        while let Some(op) = rest.chars().next() {
            let end = rest[1..]
                .find(['+', '-', '='])
                .map_or(rest.len(), |i| i + 1);
            let perms = &rest[1..end];
            if !perms.chars().all(|c| "rwxXst".contains(c)) {
                return Err(bad());
            }
            clauses.push((who, op, perms.to_string()));
            rest = &rest[end..];
        }
    }
    Ok(ModeSpec::Symbolic(clauses))
}

impl ModeSpec {
    /// The new permission bits of an entry that has `old` (and is a directory or
    /// not).
    pub fn apply(&self, old: u32, is_dir: bool) -> u32 {
        match self {
            ModeSpec::Octal(m) => *m,
            ModeSpec::Symbolic(clauses) => {
                let mut mode = old & 0o7777;
                for (who, op, perms) in clauses {
                    let mut bits = 0u32;
                    for c in perms.chars() {
                        bits |= match c {
                            'r' => 0o444,
                            'w' => 0o222,
                            'x' => 0o111,
                            'X' if is_dir || mode & 0o111 != 0 => 0o111,
                            's' => 0o6000,
                            't' => 0o1000,
                            _ => 0,
                        };
                    }
                    bits &= who;
                    mode = match op {
                        '+' => mode | bits,
                        '-' => mode & !bits,
                        _ => (mode & !(who & 0o7777)) | bits,
                    };
                }
                mode
            }
        }
    }
}

/// `rw-r--r--` for messages.
fn rwx(mode: u32) -> String {
    crate::listing::mode_string(Some(mode & 0o7777), false)[1..].to_string()
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    const PROG: &str = "barecat-chmod";
    let spec = args.mode.clone();
    let new_meta = move |e: &Entry| {
        let meta = *e.meta();
        let old = meta.mode.unwrap_or(0);
        Meta {
            mode: Some((old & S_IFMT) | spec.apply(old, e.is_dir())),
            ..meta
        }
    };
    let mut failed = 0usize;
    let mut report = |e: &crate::Error| {
        eprintln!("{PROG}: {e}");
        failed += 1;
    };
    let line = |c: &MetaChange| {
        format!(
            "{} {} -> {}",
            crate::core::path::printable(c.entry.path()),
            c.entry.meta().mode.map_or("(none)".into(), rwx),
            rwx(c.meta.mode.unwrap_or(0))
        )
    };
    let changed = if args.dry_run {
        if !Layout::exists(&args.archive)? {
            anyhow::bail!("{}: no such archive", args.archive.display());
        }
        let index = Index::open_read(Layout::resolve(&args.archive).index())
            .with_context(|| format!("cannot open {}", args.archive.display()))?;
        let plan = edit::plan_meta(&index, &args.paths, args.recursive, &new_meta)?;
        plan.problems.iter().for_each(&mut report);
        for c in &plan.items {
            println!("would change: {}", line(c));
        }
        plan.items.len()
    } else {
        let mut w = edit::open_writer(&args.archive, args.sidecar.enabled())
            .with_context(|| format!("cannot write to {}", args.archive.display()))?;
        let plan = edit::plan_meta(w.index(), &args.paths, args.recursive, &new_meta)?;
        plan.problems.iter().for_each(&mut report);
        let mut n = 0usize;
        let verbose = args.verbose;
        let problems = edit::apply_meta(&mut w, &plan.items, &mut |c| {
            n += 1;
            if verbose {
                println!("changed: {}", line(c));
            }
        })?;
        problems.iter().for_each(&mut report);
        w.finish()?;
        n
    };
    if !args.quiet.quiet {
        eprintln!(
            "{PROG}: {} the mode of {} {} in {}",
            if args.dry_run {
                "would change"
            } else {
                "changed"
            },
            changed,
            if changed == 1 { "entry" } else { "entries" },
            args.archive.display()
        );
    }
    Ok(if failed > 0 {
        ExitCode::from(super::FAILURE)
    } else {
        ExitCode::SUCCESS
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes() {
        assert_eq!(parse_mode("644").unwrap(), ModeSpec::Octal(0o644));
        assert!(parse_mode("8").is_err());
        assert!(parse_mode("17777").is_err());
        assert!(parse_mode("u+q").is_err());
        assert!(parse_mode("x").is_err());
        let m = |s: &str, old: u32, dir: bool| parse_mode(s).unwrap().apply(old, dir);
        assert_eq!(m("u+x", 0o644, false), 0o744);
        assert_eq!(m("go-w", 0o666, false), 0o644);
        assert_eq!(m("a+rX", 0o600, false), 0o644);
        assert_eq!(m("a+rX", 0o700, true), 0o755);
        assert_eq!(m("a+rX", 0o700, false), 0o755);
        assert_eq!(m("u=rw,go=r", 0o777, false), 0o644);
        assert_eq!(m("+x", 0o600, false), 0o711);
        assert_eq!(m("u+x-w", 0o644, false), 0o544);
        assert_eq!(m("o+t", 0o777, true), 0o1777);
    }
}
