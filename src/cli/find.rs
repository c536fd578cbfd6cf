//! `barecat find` / `barecat-find`: Python barecat's `find`, with find's own
//! single-dash options (`-name`, `-path`, `-type`, …).

use std::ffi::OsString;
use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

use crate::listing::find::{self, EntryKind, FindOptions};
use crate::Archive;

const EXAMPLES: &str = "\
Examples:
  barecat find data.barecat -name '*.jpg'              # every JPEG, at any depth
  barecat find data.barecat train -type d -maxdepth 1  # train and its subdirectories
  barecat find data.barecat -path 'train/*/x*'         # * crosses '/' in -path
  barecat find data.barecat -size +1M -type f          # files over 1 MiB
  barecat find data.barecat -print0 | xargs -0 …

Prints what Python barecat's `find` prints: files first, then directories (the root
as '.'). -name matches the last component with a shell pattern; -path/-wholename
matches the whole path with SQLite's GLOB, where '*' crosses '/'; -size takes
[+|-]N[KMGT] (greater, less, equal; 1024-based); -maxdepth counts levels below PATH.
The options are also accepted with two dashes (--name …). PATH is an archive path:
one that does not exist is an error.

Exit status: 0 success, 1 failure (PATH not found), 2 usage error.";

/// Search for files and directories in an archive, like find(1).
#[derive(Debug, Parser)]
#[command(name = "barecat-find", version, after_help = EXAMPLES)]
pub struct Args {
    /// The archive
    pub archive: std::path::PathBuf,
    /// Starting path inside the archive (default: the root)
    pub path: Option<String>,
    /// Last path component matches this shell pattern
    #[arg(long = "name", value_name = "PATTERN", allow_hyphen_values = true)]
    pub name: Option<String>,
    /// Whole path matches this pattern (SQLite GLOB: '*' crosses '/')
    #[arg(
        long = "path",
        visible_alias = "wholename",
        value_name = "PATTERN",
        allow_hyphen_values = true
    )]
    pub path_pattern: Option<String>,
    /// f: files only, d: directories only
    #[arg(long = "type", value_name = "f|d", value_parser = ["f", "d"])]
    pub kind: Option<String>,
    /// Size greater (+N), less (-N) or equal (N), with K, M, G, T suffixes
    #[arg(long, value_name = "[+|-]N[KMGT]", allow_hyphen_values = true)]
    pub size: Option<String>,
    /// At most N levels below PATH
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub maxdepth: Option<i64>,
    /// End each path with a NUL byte instead of a newline
    #[arg(long)]
    pub print0: bool,
    #[command(flatten)]
    pub remote: super::common::Remote,
}

/// find's options take one dash (`-name`); clap's long options two. The options of
/// `find` are rewritten before parsing (not their values, and nothing after `--`).
pub fn dash_options(argv: Vec<OsString>) -> Vec<OsString> {
    const WITH_VALUE: [&str; 5] = ["name", "path", "wholename", "type", "size"];
    const ALL: [&str; 7] = [
        "name",
        "path",
        "wholename",
        "type",
        "size",
        "maxdepth",
        "print0",
    ];
    let mut out = Vec::with_capacity(argv.len());
    let mut it = argv.into_iter();
    out.extend(it.next());
    while let Some(a) = it.next() {
        let Some(s) = a.to_str() else {
            out.push(a);
            continue;
        };
        if s == "--" {
            out.push(a);
            out.extend(it.by_ref());
            break;
        }
        let word = s.strip_prefix('-').filter(|w| !w.starts_with('-'));
        // Like argparse, an option may be abbreviated to a prefix that no other
        // option shares (`-n` for `-name`, `-max` for `-maxdepth`).
        let resolve = |o: &str| -> Option<&'static str> {
            if o.is_empty() {
                return None;
            }
            if let Some(full) = ALL.iter().find(|f| **f == o) {
                return Some(full);
            }
            let mut hits = ALL.iter().filter(|f| f.starts_with(o));
            match (hits.next(), hits.next()) {
                (Some(full), None) => Some(full),
                _ => None,
            }
        };
        let (opt, inline) =
            match word.map(|w| w.split_once('=').map_or((w, None), |(o, v)| (o, Some(v)))) {
                Some((o, v)) if resolve(o).is_some() => (resolve(o).unwrap_or(o), v),
                _ => {
                    out.push(a);
                    continue;
                }
            };
        match inline {
            Some(v) => out.push(format!("--{opt}={v}").into()),
            None => {
                out.push(format!("--{opt}").into());
                if WITH_VALUE.contains(&opt) || opt == "maxdepth" {
                    out.extend(it.next());
                }
            }
        }
    }
    out
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let size = match args.size.as_deref().map(find::parse_size).transpose() {
        Ok(s) => s.flatten(),
        Err(msg) => crate::usage!("-size: {msg}"),
    };
    let opts = FindOptions {
        name: args.name,
        path: args.path_pattern,
        kind: args.kind.as_deref().map(|k| {
            if k == "d" {
                EntryKind::Dir
            } else {
                EntryKind::File
            }
        }),
        size,
        max_depth: args.maxdepth,
        print0: args.print0,
    };
    let _stats = args.remote.stats_guard("barecat find");
    let archive = Archive::open_with(&args.archive, args.remote.open_options(false))
        .with_context(|| format!("cannot open {}", args.archive.display()))?;
    super::print_warnings("barecat find", archive.warnings());
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    find::find(
        &archive,
        args.path.as_deref().unwrap_or(""),
        &opts,
        &mut out,
    )?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rw(args: &[&str]) -> Vec<String> {
        dash_options(args.iter().map(OsString::from).collect())
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect()
    }

    #[test]
    fn single_dash_options() {
        assert_eq!(
            rw(&["find", "a.bc", "-name", "-type", "-type", "f", "-print0"]),
            ["find", "a.bc", "--name", "-type", "--type", "f", "--print0"]
        );
        assert_eq!(
            rw(&[
                "find",
                "a.bc",
                "-size",
                "-10k",
                "-maxdepth",
                "-1",
                "-path=x/*"
            ]),
            [
                "find",
                "a.bc",
                "--size",
                "-10k",
                "--maxdepth",
                "-1",
                "--path=x/*"
            ]
        );
        assert_eq!(
            rw(&["find", "--", "-name", "--name", "-x"]),
            ["find", "--", "-name", "--name", "-x"]
        );
        assert_eq!(rw(&["find", "-h", "--help"]), ["find", "-h", "--help"]);
        // Prefixes that argparse takes: `-p` could be -path or -print0.
        assert_eq!(
            rw(&["find", "-n", "x", "-max", "1", "-pr", "-pa=a", "-p"]),
            [
                "find",
                "--name",
                "x",
                "--maxdepth",
                "1",
                "--print0",
                "--path=a",
                "-p"
            ]
        );
    }
}
