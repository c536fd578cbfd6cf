//! `barecat-touch`: set the modification time stored for files and directories,
//! creating empty files for paths that do not exist.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

use super::common::{NoSidecar, Quiet};
use crate::core::entry::{Entry, Meta, S_IFREG};
use crate::core::glob::has_wildcards;
use crate::core::index::Index;
use crate::core::path as mpath;
use crate::edit::{self, MetaChange};
use crate::Layout;

const EXAMPLES: &str = "\
Examples:
  barecat touch data.barecat labels.csv              # mtime = now
  barecat touch data.barecat train/.done             # a new empty file
  barecat touch -d 2024-01-31 -R data.barecat train  # a date (local time)
  barecat touch -d @1700000000.5 data.barecat a.txt  # seconds since the epoch
  barecat touch -r ref.jpg data.barecat 'img/*.jpg'  # the mtime of a local file

PATH: a file or directory, or a glob (as barecat-rm takes them). A path that does
not exist (and has no wildcard) becomes an empty file, with mode 0666 less the
umask and your user and group, unless -c. Only the index changes, in one
transaction. Python barecat has this only in its API (Index.update_mtime).

Exit status: 0 success, 1 if a PATH could not be changed (each one is reported),
2 usage error.";

/// Set the modification time of files and directories (or create empty files).
#[derive(Debug, Parser)]
#[command(
    name = "barecat-touch",
    version,
    after_help = EXAMPLES,
    override_usage = "barecat-touch [OPTIONS] ARCHIVE PATH..."
)]
pub struct Args {
    /// The archive (its index file, e.g. data.barecat)
    #[arg(value_name = "ARCHIVE")]
    pub archive: PathBuf,
    /// Files, directories or globs
    #[arg(value_name = "PATH|GLOB", required = true)]
    pub paths: Vec<String>,
    /// Use DATE instead of now: @SECONDS[.FRACTION] since the epoch, or
    /// YYYY-MM-DD[ HH:MM[:SS[.FRACTION]]] in local time ('T' may separate them)
    #[arg(short = 'd', long, value_name = "DATE", value_parser = parse_date, conflicts_with = "reference")]
    pub date: Option<i64>,
    /// Use the modification time of the local file FILE instead of now
    #[arg(short = 'r', long, value_name = "FILE")]
    pub reference: Option<PathBuf>,
    /// Do not create files for paths that do not exist
    #[arg(short = 'c', long)]
    pub no_create: bool,
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

/// Parse a `-d` DATE into nanoseconds since the epoch.
pub fn parse_date(s: &str) -> Result<i64, String> {
    let bad = || format!("{s:?} is not a date (@SECONDS, or YYYY-MM-DD[ HH:MM[:SS[.FRACTION]]])");
    let frac_ns = |f: &str| -> Result<i64, String> {
        if f.is_empty() || f.len() > 9 || !f.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        Ok(f.parse::<i64>().map_err(|_| bad())? * 10i64.pow(9 - f.len() as u32))
    };
    if let Some(rest) = s.strip_prefix('@') {
        let (secs, frac) = rest.split_once('.').unwrap_or((rest, ""));
        let secs: i64 = secs.parse().map_err(|_| bad())?;
        let ns = if frac.is_empty() { 0 } else { frac_ns(frac)? };
        let ns = if secs < 0 { -ns } else { ns };
        return secs
            .checked_mul(1_000_000_000)
            .and_then(|v| v.checked_add(ns))
            .ok_or_else(bad);
    }
    let (date, time) = s
        .split_once(['T', ' '])
        .map_or((s, None), |(d, t)| (d, Some(t)));
    let num = |t: &str, lo: i64, hi: i64| -> Result<i64, String> {
        match t.parse::<i64>() {
            Ok(v) if (lo..=hi).contains(&v) && t.bytes().all(|b| b.is_ascii_digit()) => Ok(v),
            _ => Err(bad()),
        }
    };
    let d: Vec<&str> = date.split('-').collect();
    let [y, mo, da] = d[..] else {
        return Err(bad());
    };
    let (y, mo, da) = (num(y, 1, 9999)?, num(mo, 1, 12)?, num(da, 1, 31)?);
    let (mut h, mut mi, mut se, mut ns) = (0, 0, 0, 0);
    if let Some(t) = time {
        let (hms, frac) = t.split_once('.').unwrap_or((t, ""));
        let parts: Vec<&str> = hms.split(':').collect();
        match parts[..] {
            [a, b] => (h, mi) = (num(a, 0, 23)?, num(b, 0, 59)?),
            [a, b, c] => (h, mi, se) = (num(a, 0, 23)?, num(b, 0, 59)?, num(c, 0, 60)?),
            _ => return Err(bad()),
        }
        if !frac.is_empty() {
            ns = frac_ns(frac)?;
        }
    }
    // SAFETY: a zeroed tm is a valid value; mktime reads and normalizes it.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    tm.tm_year = (y - 1900) as i32;
    tm.tm_mon = (mo - 1) as i32;
    tm.tm_mday = da as i32;
    tm.tm_hour = h as i32;
    tm.tm_min = mi as i32;
    tm.tm_sec = se as i32;
    tm.tm_isdst = -1;
    // SAFETY: tm is a valid, initialized struct.
    let secs = unsafe { libc::mktime(&mut tm) };
    if secs == -1 && !(y == 1969 && mo == 12 && da == 31) {
        return Err(bad());
    }
    Ok(secs as i64 * 1_000_000_000 + ns)
}

/// The metadata of a file that touch creates: 0666 less the umask, our ids.
fn new_file_meta(mtime_ns: i64) -> Meta {
    // SAFETY: umask only reads and sets the process's file mode mask (restored at
    // once); getuid and getgid cannot fail.
    let (mask, uid, gid) = unsafe {
        let m = libc::umask(0o022);
        libc::umask(m);
        (m as u32, libc::getuid(), libc::getgid())
    };
    Meta {
        mode: Some(S_IFREG | (0o666 & !mask)),
        uid: Some(uid),
        gid: Some(gid),
        mtime_ns: Some(mtime_ns),
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    const PROG: &str = "barecat-touch";
    let mtime = match (&args.date, &args.reference) {
        (Some(ns), _) => *ns,
        (None, Some(r)) => {
            let md =
                std::fs::metadata(r).map_err(|e| anyhow::Error::new(crate::Error::io(r, e)))?;
            Meta::from_fs(&md).mtime_ns.unwrap_or(0)
        }
        (None, None) => crate::core::index::now_ns(),
    };
    let new_meta = move |e: &Entry| Meta {
        mtime_ns: Some(mtime),
        ..*e.meta()
    };
    let mut failed = 0usize;
    let mut report = |e: &crate::Error| {
        eprintln!("{PROG}: {e}");
        failed += 1;
    };
    let when = |ns: Option<i64>| match ns {
        Some(ns) => format!(
            "@{}.{:09}",
            ns.div_euclid(1_000_000_000),
            ns.rem_euclid(1_000_000_000)
        ),
        None => "(none)".into(),
    };
    let line = |c: &MetaChange| {
        format!(
            "{} {} -> {}",
            mpath::printable(c.entry.path()),
            when(c.entry.meta().mtime_ns),
            when(c.meta.mtime_ns)
        )
    };
    // Missing paths without wildcards become new files (unless -c): they are taken
    // out of the operands before the plan, which reports the others.
    let split = |index: &Index| -> anyhow::Result<(Vec<String>, Vec<String>)> {
        let mut existing = Vec::new();
        let mut create = Vec::new();
        for p in &args.paths {
            let norm = mpath::normalize(p);
            let exists = index.file(&norm)?.is_some() || index.dir(&norm)?.is_some();
            if !exists && !has_wildcards(p) && !args.no_create {
                create.push(norm);
            } else if !exists && !has_wildcards(p) {
                // -c: a missing path is silently left alone, as touch -c does.
            } else {
                existing.push(p.clone());
            }
        }
        Ok((existing, create))
    };
    let (changed, created) = if args.dry_run {
        if !Layout::exists(&args.archive)? {
            anyhow::bail!("{}: no such archive", args.archive.display());
        }
        let index = Index::open_read(Layout::resolve(&args.archive).index())
            .with_context(|| format!("cannot open {}", args.archive.display()))?;
        let (existing, create) = split(&index)?;
        let plan = edit::plan_meta(&index, &existing, args.recursive, &new_meta)?;
        plan.problems.iter().for_each(&mut report);
        for c in &plan.items {
            println!("would change: {}", line(c));
        }
        for p in &create {
            if let Err(e) = mpath::check_member(p) {
                report(&e);
                continue;
            }
            println!("would create: {}", mpath::printable(p));
        }
        (plan.items.len(), create.len())
    } else {
        let mut w = edit::open_writer(&args.archive, args.sidecar.enabled())
            .with_context(|| format!("cannot write to {}", args.archive.display()))?;
        let (existing, create) = split(w.index())?;
        let plan = edit::plan_meta(w.index(), &existing, args.recursive, &new_meta)?;
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
        let mut made = 0usize;
        for p in &create {
            match w.add_file(p, new_file_meta(mtime), b"", None) {
                Ok(_) => {
                    made += 1;
                    if verbose {
                        println!("created: {}", mpath::printable(p));
                    }
                }
                Err(e) => report(&e),
            }
        }
        w.finish()?;
        (n, made)
    };
    if !args.quiet.quiet {
        let verb = if args.dry_run { "would set" } else { "set" };
        let mut line = format!(
            "{PROG}: {verb} the modification time of {changed} {} in {}",
            if changed == 1 { "entry" } else { "entries" },
            args.archive.display()
        );
        if created > 0 {
            line += &format!(
                "; {} {created} empty {}",
                if args.dry_run {
                    "would create"
                } else {
                    "created"
                },
                if created == 1 { "file" } else { "files" }
            );
        }
        eprintln!("{line}");
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
    fn dates() {
        assert_eq!(parse_date("@0").unwrap(), 0);
        assert_eq!(
            parse_date("@1700000000.5").unwrap(),
            1_700_000_000_500_000_000
        );
        assert_eq!(parse_date("@-1.5").unwrap(), -1_500_000_000);
        assert!(parse_date("@x").is_err());
        assert!(parse_date("2024-13-01").is_err());
        assert!(parse_date("2024-01-01 25:00").is_err());
        assert!(parse_date("yesterday").is_err());
        let a = parse_date("2024-01-31").unwrap();
        let b = parse_date("2024-01-31T12:30:15.25").unwrap();
        assert_eq!(
            b - a,
            (12 * 3600 + 30 * 60 + 15) * 1_000_000_000 + 250_000_000
        );
    }
}
