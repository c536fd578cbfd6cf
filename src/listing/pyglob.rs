//! Glob listings in the order Python barecat's `list` prints them (docs/FORMAT.md §8.4,
//! §8.2).
//!
//! Python barecat matches a pattern in two steps: a query finds candidates, then
//! the exact glob (Python `glob` semantics, hidden entries excluded) filters them.
//! Which query depends on the shape of the pattern, and no query has an `ORDER BY`:
//! the order of the output is the order SQLite's plan happens to produce. To print
//! the same lines in the same order, the same candidate sets are read here with the
//! order that plan gives made explicit, page by page:
//!
//! * `**`: every directory, then every file, each in row order (table scans);
//! * recursive patterns whose `**` parts reduce to a single `*` (`**/*.jpg`,
//!   `a/**/*.jpg`): files then directories matching that SQLite GLOB (`*` crosses
//!   `/`), in path order when it has a literal prefix (an index range), else in row
//!   order (a table scan);
//! * `DIR/**`: files then directories matching `DIR/*` (the directory itself is a
//!   candidate but never a match);
//! * one wildcard segment and no `**`: the subdirectories then the files of the
//!   literal directory in row order (the parent index), or, when the wildcard
//!   segment is not the last one, each subdirectory (row order) with the rest of the
//!   pattern appended, looked up;
//! * anything else: files then directories matching any of the SQLite GLOB
//!   patterns the pattern expands to (brackets translated, `**` spelled out). With
//!   one common literal prefix that is one index range (path order); with several
//!   prefixes SQLite reads one range per pattern in turn (each row once); without a
//!   prefix, a table scan (row order).
//!
//! The exact filter is [`crate::core::glob::Glob`], the same language as Python's.

use crate::core::archive::{Archive, Scan};
use crate::core::entry::Entry;
use crate::core::error::Result;
use crate::core::glob::{Glob, GlobOptions};
use crate::core::index::{Cond, ScanOrder, ScanSpec, Table};
use crate::core::path as mpath;

/// The entries Python barecat's `list PATTERN` prints, in its order.
pub fn matches<'a>(
    archive: &'a Archive,
    pattern: &str,
) -> Result<Box<dyn Iterator<Item = Result<Entry>> + 'a>> {
    let recursive = pattern.contains("**");
    let exact = Glob::new(
        pattern,
        GlobOptions {
            recursive,
            include_hidden: false,
        },
    )?;
    let candidates = candidates(archive, pattern, recursive)?;
    Ok(Box::new(candidates.filter(move |r| match r {
        Ok(e) => exact.is_match(e.path()),
        Err(_) => true,
    })))
}

type Candidates<'a> = Box<dyn Iterator<Item = Result<Entry>> + 'a>;

fn candidates<'a>(archive: &'a Archive, pattern: &str, recursive: bool) -> Result<Candidates<'a>> {
    if recursive && pattern == "**" {
        let all = |t| Scan::new(archive, ScanSpec::new(t, ScanOrder::Rowid));
        return Ok(Box::new(all(Table::Dirs).chain(all(Table::Files))));
    }
    let parts: Vec<&str> = pattern.split('/').collect();
    let wild_parts = parts.iter().filter(|p| p.contains(['*', '?'])).count();
    let no_brackets = !pattern.contains(['[', ']']);
    let no_question = !pattern.contains('?');
    let stars = pattern.matches('*').count();

    if recursive && no_brackets && no_question && stars == 3 {
        let temp = if pattern.starts_with("**/") {
            format!("/{pattern}")
        } else {
            pattern.to_string()
        };
        let simplified = temp.replacen("/**/*", "/*", usize::MAX);
        let simplified = simplified.strip_prefix('/').unwrap_or(&simplified);
        if simplified.matches('*').count() <= 1 {
            return raw_glob(archive, &[mpath::normalize(simplified)]);
        }
    }
    if recursive && no_brackets && no_question && stars == 2 && pattern.ends_with("/**") {
        let dir = &pattern[..pattern.len() - 3];
        let is_dir = archive.with_index(|i| i.is_dir(&mpath::normalize(dir)))?;
        if !is_dir {
            return Ok(Box::new(std::iter::empty()));
        }
        // The directory itself is a candidate too, but `DIR/**` never matches it.
        let below = mpath::normalize(&pattern[..pattern.len() - 1]);
        return raw_glob(archive, &[below]);
    }
    if !recursive && wild_parts == 1 && no_brackets {
        let i = parts
            .iter()
            .position(|p| p.contains(['*', '?']))
            .unwrap_or(0);
        let prefix = mpath::normalize(&parts[..i].join("/"));
        let Some(dir) = archive.with_index(|x| x.dir(&prefix))? else {
            return Ok(Box::new(std::iter::empty()));
        };
        let kids = |t| {
            Scan::new(
                archive,
                ScanSpec::new(t, ScanOrder::Rowid).with(Cond::Parent(dir.path.clone())),
            )
        };
        if i + 1 == parts.len() {
            return Ok(Box::new(kids(Table::Dirs).chain(kids(Table::Files))));
        }
        let suffix = parts[i + 1..].join("/");
        let loose = Glob::new(
            pattern,
            GlobOptions {
                recursive: false,
                include_hidden: true,
            },
        )?;
        return Ok(Box::new(kids(Table::Dirs).filter_map(move |r| {
            let sub = match r {
                Ok(Entry::Dir(d)) => d,
                Ok(Entry::File(_)) => return None,
                Err(e) => return Some(Err(e)),
            };
            let candidate = format!("{}/{suffix}", sub.path);
            if !loose.is_match(&candidate) {
                return None;
            }
            archive.lookup(&candidate).transpose()
        })));
    }
    let variants = expand_doublestar(&glob_to_sqlite(pattern), recursive);
    let variants: Vec<String> = variants.iter().map(|v| mpath::normalize(v)).collect();
    raw_glob(archive, &variants)
}

/// The shapes of query plan whose choice depends on the size of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    /// One range of the path index (a GLOB with a literal prefix, or several with
    /// the same prefix).
    Range,
    /// A path or the range below it (`path = ? OR path GLOB 'P/*'`).
    PathOrRange,
    /// One range per GLOB pattern, the prefixes differing.
    Ranges,
}

/// Would the SQLite of Python barecat read `table` through the path index for a
/// query of this shape (its rows then come in path order), rather than scan the
/// table (row order)? SQLite 3.40 (Debian 12's, which Python barecat uses here)
/// scans tables that `sqlite_stat1` says have fewer than 5 rows (one range), 8
/// (`=` or range) or 9 (several ranges); without statistics it assumes a large
/// table.
pub fn uses_path_index(archive: &Archive, table: Table, plan: Plan) -> Result<bool> {
    let min = match plan {
        Plan::Range => 5,
        Plan::PathOrRange => 8,
        Plan::Ranges => 9,
    };
    let name = match table {
        Table::Files => "files",
        Table::Dirs => "dirs",
    };
    let rows = archive.with_index(|i| i.stat1_rows(name))?;
    Ok(rows.is_none_or(|n| n >= min))
}

/// Files, then directories, matching any of the SQLite GLOB `patterns`, in the
/// order SQLite's plan for `WHERE path GLOB ?1 OR path GLOB ?2 …` yields them.
fn raw_glob<'a>(archive: &'a Archive, patterns: &[String]) -> Result<Candidates<'a>> {
    let prefixes: Vec<&str> = patterns.iter().map(|p| sql_glob_prefix(p)).collect();
    let same = prefixes.iter().all(|p| *p == prefixes[0]);
    let plan = if same { Plan::Range } else { Plan::Ranges };
    let indexed = [
        uses_path_index(archive, Table::Files, plan)?,
        uses_path_index(archive, Table::Dirs, plan)?,
    ];
    let scans = move |table: Table| -> Vec<Scan<'a>> {
        let spec = |order| ScanSpec::new(table, order);
        let indexed = indexed[usize::from(table == Table::Dirs)];
        if !indexed || prefixes.iter().any(|p| p.is_empty()) {
            // No range to seek: a scan of the table, in row order.
            vec![Scan::new(
                archive,
                spec(ScanOrder::Rowid).with(Cond::Glob(patterns.to_vec())),
            )]
        } else if same {
            // The ranges of all patterns are the same one: a single range scan.
            vec![Scan::new(
                archive,
                spec(ScanOrder::Path)
                    .with(Cond::Prefix(prefixes[0].as_bytes().to_vec()))
                    .with(Cond::Glob(patterns.to_vec())),
            )]
        } else {
            // One range per pattern, in turn; a row matched by an earlier pattern
            // was yielded there.
            (0..patterns.len())
                .map(|k| {
                    Scan::new(
                        archive,
                        spec(ScanOrder::Path)
                            .with(Cond::Prefix(prefixes[k].as_bytes().to_vec()))
                            .with(Cond::Glob(vec![patterns[k].clone()]))
                            .with(Cond::NotGlob(patterns[..k].to_vec())),
                    )
                })
                .collect()
        }
    };
    let files = scans(Table::Files);
    let dirs = scans(Table::Dirs);
    Ok(Box::new(files.into_iter().chain(dirs).flatten()))
}

/// The literal text before the first SQLite GLOB wildcard (`*`, `?` or `[`): the
/// range of the path index SQLite reads for `path GLOB pattern`.
pub fn sql_glob_prefix(pattern: &str) -> &str {
    &pattern[..pattern.find(['*', '?', '[']).unwrap_or(pattern.len())]
}

/// A Python glob pattern as an SQLite GLOB pattern that matches at least the same
/// paths (docs/FORMAT.md §8.2): `[!…]` becomes `[^…]`, a class of carets only becomes a
/// literal `^`, leading carets of a class move to its end, an unclosed `[` and an
/// empty negated class `[!]` become literal.
pub fn glob_to_sqlite(pat: &str) -> String {
    if !pat.contains('[') {
        return pat.to_string();
    }
    let chars: Vec<char> = pat.chars().collect();
    let mut out = String::with_capacity(pat.len() + 4);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        if c != '[' {
            out.push(c);
            continue;
        }
        let mut j = i;
        let negate = j < chars.len() && chars[j] == '!';
        if negate {
            j += 1;
        }
        let content_start = j;
        if j < chars.len() && chars[j] == ']' {
            j += 1;
        }
        while j < chars.len() && chars[j] != ']' {
            j += 1;
        }
        if j >= chars.len() {
            out.push_str("[[]");
            continue;
        }
        let content: String = chars[content_start..j].iter().collect();
        if negate {
            if content.is_empty() {
                out.push_str("[[]!]");
            } else {
                out.push_str(&format!("[^{content}]"));
            }
        } else {
            let carets = content.chars().take_while(|&c| c == '^').count();
            if carets == content.chars().count() {
                out.push('^');
            } else if carets > 0 {
                out.push_str(&format!("[{}{}]", &content[carets..], "^".repeat(carets)));
            } else {
                out.push_str(&format!("[{content}]"));
            }
        }
        i = j + 1;
    }
    out
}

/// Spell out the `**` segments of an SQLite GLOB pattern (whose `*` crosses `/`)
/// for the case where they match no segment at all: `**/x` → `x`, `*/x`;
/// `a/**/b` → `a/b`, `a/*/b`; `a/**` → `a`, `a/*`. More than two `**` segments
/// collapse into single `*`s. Duplicates, and patterns another one already covers,
/// are dropped.
pub fn expand_doublestar(pattern: &str, recursive: bool) -> Vec<String> {
    if !recursive {
        return vec![pattern.to_string()];
    }
    let mut count = usize::from(pattern.starts_with("**/"))
        + usize::from(pattern.ends_with("/**"))
        + pattern.matches("/**/").count();
    if pattern == "**" {
        count = 1;
    }
    if count == 0 {
        return vec![pattern.to_string()];
    }
    if count > 2 {
        let mut r = pattern.replace("/**/", "*");
        if let Some(rest) = r.strip_prefix("**/") {
            r = format!("*{rest}");
        }
        if let Some(rest) = r.strip_suffix("/**") {
            r = format!("{rest}*");
        }
        if r == "**" {
            r = "*".into();
        }
        return vec![r];
    }
    let mut variants = vec![pattern.to_string()];
    let expand = |variants: Vec<String>,
                  applies: &dyn Fn(&str) -> bool,
                  split: &dyn Fn(&str) -> [String; 2]| {
        let mut v = variants;
        while v.iter().any(|x| applies(x)) {
            v = v
                .into_iter()
                .flat_map(|x| {
                    if applies(&x) {
                        split(&x).to_vec()
                    } else {
                        vec![x]
                    }
                })
                .collect();
        }
        v
    };
    variants = expand(variants, &|v| v.starts_with("**/"), &|v| {
        [v[3..].to_string(), format!("*/{}", &v[3..])]
    });
    variants = expand(variants, &|v| v.contains("/**/"), &|v| {
        [v.replacen("/**/", "/", 1), v.replacen("/**/", "/*/", 1)]
    });
    variants = expand(variants, &|v| v.ends_with("/**"), &|v| {
        let base = &v[..v.len() - 3];
        [base.to_string(), format!("{base}/*")]
    });
    let mut unique: Vec<String> = Vec::new();
    for v in variants {
        let v = if v == "**" { "*".to_string() } else { v };
        if !unique.contains(&v) {
            unique.push(v);
        }
    }
    if unique.iter().any(|v| v == "*") {
        return vec!["*".into()];
    }
    let covered = |v: &String| {
        unique.iter().any(|o| {
            o != v && o.ends_with('*') && v.starts_with(o.as_str()) && v[o.len()..].starts_with('/')
        })
    };
    unique.iter().filter(|v| !covered(v)).cloned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_brackets() {
        assert_eq!(glob_to_sqlite("a*b"), "a*b");
        assert_eq!(glob_to_sqlite("[!a]x"), "[^a]x");
        assert_eq!(glob_to_sqlite("[!]x"), "[[]!]x");
        assert_eq!(glob_to_sqlite("[^]"), "^");
        assert_eq!(glob_to_sqlite("[^^a]"), "[a^^]");
        assert_eq!(glob_to_sqlite("x[ab"), "x[[]ab");
        assert_eq!(glob_to_sqlite("[]a]"), "[]a]");
        assert_eq!(glob_to_sqlite("[!]]"), "[^]]");
        assert_eq!(glob_to_sqlite("a[b-c]d["), "a[b-c]d[[]");
    }

    #[test]
    fn doublestar_variants() {
        assert_eq!(
            expand_doublestar("**/foo.txt", true),
            ["foo.txt", "*/foo.txt"]
        );
        assert_eq!(expand_doublestar("a/**/b", true), ["a/b", "a/*/b"]);
        assert_eq!(expand_doublestar("a/**", true), ["a", "a/*"]);
        assert_eq!(expand_doublestar("**", true), ["*"]);
        assert_eq!(expand_doublestar("a/**", false), ["a/**"]);
        assert_eq!(expand_doublestar("**/a/**/b/**/c/**", true), ["*a*b*c*"]);
        assert_eq!(
            expand_doublestar("**/x/**", true),
            ["x", "x/*", "*/x", "*/x/*"]
        );
        assert_eq!(
            expand_doublestar("a/**/b/**", true),
            ["a/b", "a/b/*", "a/*/b", "a/*/b/*"]
        );
        assert_eq!(
            expand_doublestar("x/**/y/**/z", true),
            ["x/y/z", "x/y/*/z", "x/*/y/z", "x/*/y/*/z"]
        );
        assert_eq!(expand_doublestar("**/**", true), ["*"]);
        assert_eq!(expand_doublestar("**/*.jpg", true), ["*.jpg", "*/*.jpg"]);
    }

    #[test]
    fn prefixes() {
        assert_eq!(sql_glob_prefix("a/b*.c"), "a/b");
        assert_eq!(sql_glob_prefix("*"), "");
        assert_eq!(sql_glob_prefix("ab"), "ab");
        assert_eq!(sql_glob_prefix("x[y]"), "x");
    }
}
