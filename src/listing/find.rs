//! `barecat find`: Python barecat's `find` (docs/FORMAT.md §8.4), streamed.
//!
//! Files are printed first, then directories (the root as `.`), each in the order
//! Python's queries yield them: by path when the start path or the `-path` pattern
//! gives SQLite an index range to read, else in row order (a table scan).
//!
//! * `-path`/`-wholename PAT`: SQLite GLOB on the whole path (`*` crosses `/`), a
//!   trailing `/` standing for `/**`;
//! * `-name PAT`: shell pattern on the last component (`*` matches a leading dot);
//! * `-type f|d`; `-size [+|-]N[KMGT]` (greater, less, equal; 1024-based suffixes,
//!   fractions allowed with a suffix), on a file's size or a directory's total;
//! * `-maxdepth N`: at most N levels below the start (the root is at depth 0).
//!
//! Unlike Python barecat, the start path is an archive path like any other: it is
//! normalized (`./a` is `a`) and taken literally (Python passes it into a GLOB
//! pattern, so `[`, `*` and `?` in it are wildcards), and a start path that does not
//! exist is an error (Python prints nothing and exits 0).

use std::io::Write;

use crate::core::archive::{Archive, Scan};
use crate::core::error::{Error, Result};
use crate::core::glob::{Glob, GlobOptions};
use crate::core::index::{Cmp, Cond, ScanOrder, ScanSpec, Table};
use crate::core::path as mpath;

use super::pyglob::{sql_glob_prefix, uses_path_index, Plan};
use super::python::trailing_slash_rule;

/// Which entries `-type` keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// Files (`-type f`).
    File,
    /// Directories (`-type d`).
    Dir,
}

/// The tests of a `find` (all must hold).
#[derive(Debug, Clone, Default)]
pub struct FindOptions {
    /// `-name`: shell pattern on the last path component.
    pub name: Option<String>,
    /// `-path`/`-wholename`: SQLite GLOB pattern on the whole path.
    pub path: Option<String>,
    /// `-type`.
    pub kind: Option<EntryKind>,
    /// `-size`: comparison with the size (a directory's total for directories).
    pub size: Option<(Cmp, i64)>,
    /// `-maxdepth`.
    pub max_depth: Option<i64>,
    /// `-print0`: end each path with NUL instead of a newline.
    pub print0: bool,
}

/// Parse a `-size` argument: `[+|-]N[KMGT]`, N an integer, or a number with a
/// fraction when a suffix follows (Python barecat's rules). `None` when empty (no
/// test), an error message when invalid.
pub fn parse_size(arg: &str) -> std::result::Result<Option<(Cmp, i64)>, String> {
    if arg.is_empty() {
        return Ok(None);
    }
    let (cmp, rest) = match arg.as_bytes()[0] {
        b'+' => (Cmp::Greater, &arg[1..]),
        b'-' => (Cmp::Less, &arg[1..]),
        _ => (Cmp::Equal, arg),
    };
    let bad = || format!("invalid size {arg:?} (examples: 100, +10K, -1.5M)");
    let s = rest.trim().to_ascii_uppercase();
    let mult: Option<f64> = match s.chars().last() {
        Some('K') => Some(1024.0),
        Some('M') => Some(1024.0 * 1024.0),
        Some('G') => Some(1024.0 * 1024.0 * 1024.0),
        Some('T') => Some(1024.0 * 1024.0 * 1024.0 * 1024.0),
        _ => None,
    };
    let n = match mult {
        Some(m) => {
            let v: f64 = s[..s.len() - 1].trim().parse().map_err(|_| bad())?;
            let v = (v * m).trunc();
            if !v.is_finite() || v.abs() >= 9.2e18 {
                return Err(bad());
            }
            v as i64
        }
        None => s.parse::<i64>().map_err(|_| bad())?,
    };
    Ok(Some((cmp, n)))
}

/// Write the paths below `start` that pass every test of `opts` to `out`.
pub fn find(archive: &Archive, start: &str, opts: &FindOptions, out: &mut dyn Write) -> Result<()> {
    let root = mpath::normalize(start.trim_end_matches('/'));
    if !root.is_empty() && archive.lookup(&root)?.is_none() {
        return Err(Error::NotFound(root));
    }
    let root_depth = if root.is_empty() {
        0
    } else {
        root.matches('/').count() as i64 + 1
    };
    let pattern = opts.path.as_deref().map(trailing_slash_rule);
    // SQLite reads a range of the path index (path order) for the `-path` pattern's
    // literal prefix, or for the start path and the range below it; else it scans
    // the table (row order).
    let plan = if pattern
        .as_deref()
        .is_some_and(|p| !sql_glob_prefix(p).is_empty())
    {
        Some(Plan::Range)
    } else if !root.is_empty() {
        Some(Plan::PathOrRange)
    } else {
        None
    };
    let order = |table| -> Result<ScanOrder> {
        Ok(match plan {
            Some(plan) if uses_path_index(archive, table, plan)? => ScanOrder::Path,
            _ => ScanOrder::Rowid,
        })
    };
    let name = match &opts.name {
        Some(n) => Some(Glob::new(
            n,
            GlobOptions {
                recursive: false,
                include_hidden: true,
            },
        )?),
        None => None,
    };
    let spec = |table| -> Result<ScanSpec> {
        let mut s = ScanSpec::new(table, order(table)?).paths_only(true);
        if !root.is_empty() {
            s = s.with(Cond::Subtree(root.clone()));
        }
        if let Some(p) = &pattern {
            s = s
                .with(Cond::Prefix(sql_glob_prefix(p).as_bytes().to_vec()))
                .with(Cond::Glob(vec![p.clone()]));
        }
        if let Some((cmp, n)) = opts.size {
            s = s.with(Cond::Size(cmp, n));
        }
        if let Some(d) = opts.max_depth {
            s = s.with(Cond::MaxDepth(root_depth.saturating_add(d)));
        }
        Ok(s)
    };
    let end: &[u8] = if opts.print0 { b"\0" } else { b"\n" };
    let mut page: Vec<u8> = Vec::with_capacity(1 << 16);
    for (table, kind) in [
        (Table::Files, EntryKind::File),
        (Table::Dirs, EntryKind::Dir),
    ] {
        if opts.kind.is_some_and(|k| k != kind) {
            continue;
        }
        let mut scan = Scan::new(archive, spec(table)?);
        loop {
            // Each page is formatted into a buffer while it is read and written out
            // after (a slow reader of our output never holds up the index).
            let more = scan.next_page_paths(&mut |path| {
                let shown = if path.is_empty() { "." } else { path };
                if let Some(g) = &name {
                    let base = if shown == "." {
                        "."
                    } else {
                        mpath::basename(shown)
                    };
                    if !g.is_match(base) {
                        return Ok(());
                    }
                }
                page.extend_from_slice(shown.as_bytes());
                page.extend_from_slice(end);
                Ok(())
            })?;
            out.write_all(&page).map_err(Error::output)?;
            page.clear();
            if !more {
                break;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size(""), Ok(None));
        assert_eq!(parse_size("100"), Ok(Some((Cmp::Equal, 100))));
        assert_eq!(parse_size("+10k"), Ok(Some((Cmp::Greater, 10240))));
        assert_eq!(parse_size("-1.5M"), Ok(Some((Cmp::Less, 1572864))));
        assert_eq!(parse_size("2G"), Ok(Some((Cmp::Equal, 2 << 30))));
        assert_eq!(parse_size("1T"), Ok(Some((Cmp::Equal, 1 << 40))));
        assert!(parse_size("1.5").is_err());
        assert!(parse_size("x").is_err());
        assert!(parse_size("+").is_err());
        assert!(parse_size("infK").is_err());
    }
}
