//! Queries that only Python barecat's `Index` API asks (the binding's `bc.index`):
//! SQLite `GLOB` filters over whole paths and the last file by address.

use super::{Cond, Index, ScanKey, ScanOrder, ScanSpec, Table, DIR_COLS, FILE_COLS};
use crate::core::entry::{Entry, FileInfo};
use crate::core::error::Result;
use crate::core::glob::{has_wildcards, Glob, GlobOptions};

/// Rows per query of the path scans here.
const PATH_PAGE: usize = 65_536;

/// Rows a filtered path scan reads unfiltered first, to learn whether SQLite's
/// filter pays ([`Index::each_path_with_prefix`]).
const PROBE_ROWS: usize = 4096;

/// Paths packed into one buffer, each with whether it is a directory: what the
/// scans of many paths return, without an allocation per path (a million paths
/// are a million `malloc`s and `free`s otherwise).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PathList {
    text: String,
    /// Where each path ends in `text` (it starts where the one before ends), and
    /// whether it is a directory.
    items: Vec<(usize, bool)>,
}

impl PathList {
    /// Number of paths.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// No path at all.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The paths in order, each with whether it is a directory.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, bool)> + '_ {
        let mut start = 0;
        self.items.iter().map(move |&(end, is_dir)| {
            let p = &self.text[start..end];
            start = end;
            (p, is_dir)
        })
    }

    /// Add `path` at the end.
    pub fn push(&mut self, path: &str, is_dir: bool) {
        self.text.push_str(path);
        self.items.push((self.text.len(), is_dir));
    }

    /// Remove every path, keeping the memory for the next ones.
    pub fn clear(&mut self) {
        self.text.clear();
        self.items.clear();
    }
}

/// The `WHERE` condition of `rules` (sign, SQLite `GLOB` pattern), joined as Python
/// barecat joins them: the first rule as it is, then `OR path GLOB p` for each
/// further include and `AND path NOT GLOB p` for each further exclude, with SQL's
/// precedence (`AND` before `OR`). Patterns are bound as parameters `?1`, `?2`, ...
fn rule_condition(rules: &[(bool, String)]) -> String {
    let mut cond = String::new();
    for (i, (include, _)) in rules.iter().enumerate() {
        let n = i + 1;
        cond.push_str(match (i, include) {
            (0, true) => "path GLOB ?",
            (0, false) => "path NOT GLOB ?",
            (_, true) => " OR path GLOB ?",
            (_, false) => " AND path NOT GLOB ?",
        });
        cond.push_str(&n.to_string());
    }
    cond
}

/// A SQLite `GLOB` pattern that every path matching the Python glob `pattern`
/// matches too (it may match more), or `None` where one is not known for sure.
/// `*` and `?` cross `/` in a `GLOB`; a `**` segment becomes `*` and absorbs the
/// `/` after it, so that it can match no segment; `[!...]` becomes `[^...]`.
fn sqlite_prefilter(pattern: &str) -> Option<String> {
    let mut out = String::with_capacity(pattern.len());
    let parts: Vec<&str> = pattern.split('/').collect();
    if parts.iter().any(|p| p.is_empty()) {
        // `a/`, `/a`, `a//b`: how an empty segment matches is the glob's business.
        return None;
    }
    for (k, part) in parts.iter().enumerate() {
        if *part == "**" {
            out.push('*');
            continue;
        }
        let chars: Vec<char> = part.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            match chars[i] {
                '[' => {
                    let mut j = i + 1;
                    let negate = chars.get(j) == Some(&'!');
                    if negate {
                        j += 1;
                    }
                    let start = j;
                    if chars.get(j) == Some(&']') {
                        j += 1;
                    }
                    let end = j + chars[j..].iter().position(|&c| c == ']')?;
                    let members = &chars[start..end];
                    // A range only between two letters or digits, in the same
                    // order: the rules of both agree there.
                    let odd_range = |k: usize| {
                        k == 0
                            || k + 1 == members.len()
                            || !members[k - 1].is_ascii_alphanumeric()
                            || !members[k + 1].is_ascii_alphanumeric()
                            || members[k - 1] > members[k + 1]
                    };
                    if members.is_empty()
                        || members.iter().enumerate().any(|(k, &c)| {
                            matches!(c, '\\' | '^' | '[') || (c == '-' && odd_range(k))
                        })
                    {
                        return None;
                    }
                    out.push('[');
                    if negate {
                        out.push('^');
                    }
                    out.extend(members);
                    out.push(']');
                    i = end + 1;
                }
                c => {
                    out.push(c);
                    i += 1;
                }
            }
        }
        if k + 1 < parts.len() {
            out.push('/');
        }
    }
    Some(out)
}

impl Index {
    /// Files, then directories (unless `only_files`), whose path passes `rules`
    /// (joined as Python barecat joins them: the first rule, then `OR` for each
    /// further include and `AND NOT` for each exclude; `*` crosses `/` in a `GLOB` and the root `''` can
    /// match), each table in row order. No rule matches nothing.
    pub fn raw_glob(&self, rules: &[(bool, String)], only_files: bool) -> Result<Vec<Entry>> {
        let mut out = Vec::new();
        if rules.is_empty() {
            return Ok(out);
        }
        let cond = rule_condition(rules);
        let params = rusqlite::params_from_iter(rules.iter().map(|(_, p)| p.as_str()));
        let sql = format!("SELECT {FILE_COLS} FROM files WHERE {cond}");
        out.extend(self.query_files(&sql, params)?.into_iter().map(Entry::File));
        if !only_files {
            let params = rusqlite::params_from_iter(rules.iter().map(|(_, p)| p.as_str()));
            let sql = format!("SELECT {DIR_COLS} FROM dirs WHERE {cond}");
            out.extend(self.query_dirs(&sql, params)?.into_iter().map(Entry::Dir));
        }
        Ok(out)
    }

    /// The file with the highest offset in the highest-numbered shard, if any.
    pub fn last_file(&self) -> Result<Option<FileInfo>> {
        Ok(self
            .query_files(
                &format!("SELECT {FILE_COLS} FROM files ORDER BY shard DESC, offset DESC LIMIT 1"),
                [],
            )?
            .pop())
    }

    /// Paths of `table` that start with `prefix` (the root left out) and pass
    /// `keep`, sorted ([`Self::each_path_with_prefix`]).
    pub(super) fn paths_with_prefix(
        &self,
        table: Table,
        prefix: &str,
        filter: Option<&str>,
        keep: &dyn Fn(&str) -> bool,
    ) -> Result<Vec<String>> {
        let mut out = Vec::new();
        self.each_path_with_prefix(table, prefix, filter, None, keep, &mut |p| {
            out.push(p.to_owned());
            Ok(())
        })?;
        Ok(out)
    }

    /// Every path of `table` below `prefix` (the root left out) that passes
    /// `keep`, in path order, to `visit`: a paged path-order scan ([`ScanSpec`])
    /// of the path index alone (no table row is visited), the one scan behind the
    /// functions here. `filter`, a `GLOB` pattern that every kept path matches,
    /// lets SQLite leave out rows before they are handed over; it costs about a
    /// third of what handing a row over costs, so it is used only when the first
    /// [`PROBE_ROWS`] rows show that `keep` passes fewer than three in four.
    /// With `start`, the scan begins after that key.
    fn each_path_with_prefix(
        &self,
        table: Table,
        prefix: &str,
        filter: Option<&str>,
        start: Option<ScanKey>,
        keep: &dyn Fn(&str) -> bool,
        visit: &mut dyn FnMut(&str) -> Result<()>,
    ) -> Result<()> {
        let plain = ScanSpec::new(table, ScanOrder::Path)
            .paths_only(true)
            .with(Cond::Prefix(prefix.as_bytes().to_vec()));
        let kept = std::cell::Cell::new(0usize);
        let mut each = |row: &rusqlite::Row<'_>| {
            let p = self.path_of(row)?;
            if p.is_empty() || !keep(p) {
                return Ok(());
            }
            kept.set(kept.get() + 1);
            visit(p)
        };
        let mut spec = plain.clone();
        let mut after = start;
        if let Some(f) = filter {
            let (n, next) = self.scan_rows(&plain, after.as_ref(), PROBE_ROWS, &mut each)?;
            let Some(next) = next else {
                return Ok(());
            };
            after = Some(next);
            if kept.get() * 4 < n * 3 {
                spec = plain.with(Cond::Glob(vec![f.to_owned()]));
            }
        }
        loop {
            match self
                .scan_rows(&spec, after.as_ref(), PATH_PAGE, &mut each)?
                .1
            {
                Some(k) => after = Some(k),
                None => return Ok(()),
            }
        }
    }

    /// Paths of the directories and of the files below `dir` (the whole tree for
    /// `''`, the root left out), each sorted by path, from the path indexes alone.
    pub fn subtree_paths(&self, dir: &str) -> Result<(Vec<String>, Vec<String>)> {
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        let all = &|_: &str| true;
        Ok((
            self.paths_with_prefix(Table::Dirs, &prefix, None, all)?,
            self.paths_with_prefix(Table::Files, &prefix, None, all)?,
        ))
    }

    /// Paths matching `glob` (the root never), each with whether it is a
    /// directory, sorted by path: [`Self::each_glob_path`] collected.
    pub fn glob_paths(&self, glob: &Glob, only_files: bool) -> Result<PathList> {
        let mut out = PathList::default();
        self.each_glob_path(glob, only_files, &mut |p, is_dir| {
            out.push(p, is_dir);
            Ok(())
        })?;
        Ok(out)
    }

    /// Each path matching `glob` (the root never) to `visit`, with whether it is
    /// a directory, in path order, from the path indexes alone, holding no more
    /// than the matching directories of one range at a time. Read are the ranges
    /// of the directories that can hold a match (found in the directory table when
    /// only directory names have wildcards), else the range of the pattern's
    /// literal prefix, where SQLite leaves out what cannot match (an overmatching
    /// `GLOB`) before the exact match here. An error of `visit` ends the scan.
    pub fn each_glob_path(
        &self,
        glob: &Glob,
        only_files: bool,
        visit: &mut dyn FnMut(&str, bool) -> Result<()>,
    ) -> Result<()> {
        self.each_glob_path_after(glob, only_files, None, visit)
    }

    /// [`Self::each_glob_path`] from the first match after `after` (in path
    /// order) on: how a glob is read a page at a time.
    pub fn each_glob_path_after(
        &self,
        glob: &Glob,
        only_files: bool,
        after: Option<&str>,
        visit: &mut dyn FnMut(&str, bool) -> Result<()>,
    ) -> Result<()> {
        let mut ranges: Vec<(String, Option<String>)> = match self.glob_parents(glob)? {
            Some(parents) => parents
                .into_iter()
                .map(|d| (format!("{d}/"), None))
                .collect(),
            None => {
                let prefix = glob.literal_prefix().to_owned();
                // `prefix*` leaves out nothing the range of `prefix` holds.
                let pre = sqlite_prefilter(glob.as_str()).filter(|f| {
                    f.strip_prefix(prefix.as_str())
                        .is_none_or(|rest| rest.chars().any(|c| c != '*'))
                });
                vec![(prefix, pre)]
            }
        };
        // Several ranges are the directories of one depth (`a/`, `a-b/`): none
        // holds another, so the order of their prefixes is the order of the paths
        // in them (`a-b/...` before `a/...`, unlike the directories' own order).
        ranges.sort_unstable();
        let is_match = |p: &str| glob.is_match(p);
        for (prefix, pre) in &ranges {
            // A range whose paths all sort before `after` is done: its prefix sorts
            // before it and is not a prefix of it.
            let start = match after {
                Some(a) if a.starts_with(prefix.as_str()) => Some(ScanKey::after_path(a)),
                Some(a) if prefix.as_str() < a => continue,
                _ => None,
            };
            let mut dirs = if only_files {
                Vec::new()
            } else {
                self.paths_with_prefix(Table::Dirs, prefix, pre.as_deref(), &is_match)?
            };
            if let Some(a) = after {
                dirs.retain(|d| d.as_str() > a);
            }
            // The directories are few next to the files: each file is compared
            // with the next directory only.
            let mut dirs = dirs.iter().map(String::as_str).peekable();
            self.each_path_with_prefix(
                Table::Files,
                prefix,
                pre.as_deref(),
                start,
                &is_match,
                &mut |p| {
                    while let Some(d) = dirs.next_if(|d| *d < p) {
                        visit(d, true)?;
                    }
                    visit(p, false)
                },
            )?;
            for d in dirs {
                visit(d, true)?;
            }
        }
        Ok(())
    }
}

impl Index {
    /// For a pattern with wildcards in its directory part but no `**` there
    /// (`part_0[1-3]/class_0?5/*.txt`): the directories that can hold a match,
    /// read from the directory table (small next to the files). Each match lies
    /// directly in one of them, so reading their ranges of the path index replaces
    /// the scan of everything below the literal prefix. `None` for other patterns.
    fn glob_parents(&self, glob: &Glob) -> Result<Option<Vec<String>>> {
        let Some((dir_pat, name)) = glob.as_str().rsplit_once('/') else {
            return Ok(None);
        };
        if name.is_empty() || !has_wildcards(dir_pat) || dir_pat.contains("**") {
            return Ok(None);
        }
        // Hidden names allowed here: a superset of the parents; every path found
        // below is matched against the whole pattern.
        let opts = GlobOptions {
            recursive: false,
            include_hidden: true,
        };
        let Ok(dirs) = Glob::new(dir_pat, opts) else {
            return Ok(None);
        };
        let pre = sqlite_prefilter(dir_pat);
        let found =
            self.paths_with_prefix(Table::Dirs, dirs.literal_prefix(), pre.as_deref(), &|d| {
                dirs.is_match(d)
            })?;
        Ok(Some(found))
    }
}

#[cfg(test)]
mod tests {
    use super::sqlite_prefilter;

    #[test]
    fn prefilters_overmatch_python_globs() {
        assert_eq!(sqlite_prefilter("**/x*.txt").as_deref(), Some("*x*.txt"));
        assert_eq!(sqlite_prefilter("a/**/b").as_deref(), Some("a/*b"));
        assert_eq!(sqlite_prefilter("a/**").as_deref(), Some("a/*"));
        assert_eq!(
            sqlite_prefilter("p[!a]/c?5/*.t").as_deref(),
            Some("p[^a]/c?5/*.t")
        );
        assert_eq!(sqlite_prefilter("[]]x").as_deref(), Some("[]]x"));
        assert_eq!(sqlite_prefilter("x[1-3]").as_deref(), Some("x[1-3]"));
        assert_eq!(sqlite_prefilter("x[3-1]"), None);
        assert_eq!(sqlite_prefilter("x[-a]"), None);
        assert_eq!(sqlite_prefilter("x[ab"), None);
        assert_eq!(sqlite_prefilter("a/"), None);
    }
}
