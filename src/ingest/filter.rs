//! `--include` / `--exclude` patterns of the ingest commands.
//!
//! Patterns use Python glob syntax (docs/FORMAT.md §8.2: `*` and `?` stay within one path
//! component, `[…]` classes, `**` for any number of components) and match hidden
//! names too. They are matched against the stored path before
//! `--strip-components`:
//!
//! * a pattern with a `/` must match the whole path (`data/*/x.jpg`, `**/*.txt`);
//! * a pattern without a `/` matches the name of an entry at any depth (`*.tmp`,
//!   `__pycache__`), as in tar and rsync. A trailing `/` is ignored.
//!
//! An entry is taken when it matches no exclude pattern, none of its directories
//! matches one either, and, if include patterns are given, the entry or one of its
//! directories matches an include pattern. Includes never prune a walk: every
//! directory is looked into, and a directory is stored when it matches or holds
//! something that is stored.

use crate::core::error::Result;
use crate::core::glob::{Glob, GlobOptions};
use crate::core::path as mpath;

#[derive(Debug, Clone)]
struct Pattern {
    glob: Glob,
    /// Match against the last component only.
    name_only: bool,
}

impl Pattern {
    fn new(text: &str) -> Result<Pattern> {
        let text = match text.strip_suffix('/') {
            Some(t) if !t.is_empty() => t,
            _ => text,
        };
        let name_only = !text.contains('/');
        let glob = Glob::new(
            text,
            GlobOptions {
                recursive: text.contains("**"),
                include_hidden: true,
            },
        )?;
        Ok(Pattern { glob, name_only })
    }

    fn is_match(&self, path: &str) -> bool {
        if self.name_only {
            self.glob.is_match(mpath::basename(path))
        } else {
            self.glob.is_match(path)
        }
    }
}

/// Compiled include and exclude patterns.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    include: Vec<Pattern>,
    exclude: Vec<Pattern>,
}

impl Filter {
    /// Compile the patterns; an invalid one is an error naming it.
    pub fn new<S: AsRef<str>>(include: &[S], exclude: &[S]) -> Result<Filter> {
        Ok(Filter {
            include: include
                .iter()
                .map(|p| Pattern::new(p.as_ref()))
                .collect::<Result<_>>()?,
            exclude: exclude
                .iter()
                .map(|p| Pattern::new(p.as_ref()))
                .collect::<Result<_>>()?,
        })
    }

    /// No patterns at all.
    pub fn is_empty(&self) -> bool {
        self.include.is_empty() && self.exclude.is_empty()
    }

    /// Are there include patterns?
    pub fn has_includes(&self) -> bool {
        !self.include.is_empty()
    }

    /// Does `path` itself match an exclude pattern?
    pub fn excludes(&self, path: &str) -> bool {
        self.exclude.iter().any(|p| p.is_match(path))
    }

    /// Does `path` itself match an include pattern?
    pub fn includes(&self, path: &str) -> bool {
        self.include.iter().any(|p| p.is_match(path))
    }

    /// The full decision for a path seen on its own (a list entry or an archive
    /// member): not excluded, nor any of its directories; and, with includes, it or
    /// one of its directories is included.
    pub fn selects(&self, path: &str) -> bool {
        if self.is_empty() {
            return true;
        }
        let mut included = !self.has_includes();
        for p in std::iter::once(path).chain(mpath::ancestors(path)) {
            if p.is_empty() {
                break;
            }
            if self.excludes(p) {
                return false;
            }
            included = included || self.includes(p);
        }
        included
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_paths() {
        let f = Filter::new::<&str>(&[], &["*.tmp", "cache/", "data/skip/*"]).unwrap();
        assert!(!f.selects("a/b/x.tmp"));
        assert!(!f.selects("x.tmp"));
        assert!(f.selects("a/b/x.tmpl"));
        assert!(!f.selects("a/cache/y"));
        assert!(!f.selects("data/skip/z"));
        assert!(f.selects("data/skip"));
        assert!(f.selects("other/data/skip/z"));
    }

    #[test]
    fn includes_select_subtrees_and_nested_files() {
        let f = Filter::new::<&str>(&["**/*.txt", "data/keep"], &["**/secret.txt"]).unwrap();
        assert!(f.selects("a/b/c/x.txt"));
        assert!(f.selects("x.txt"));
        assert!(!f.selects("a/b/c/x.jpg"));
        assert!(f.selects("data/keep/any/thing.jpg"));
        assert!(!f.selects("a/secret.txt"));
        let f = Filter::new::<&str>(&["*.jpg"], &[]).unwrap();
        assert!(f.selects("deep/down/a.jpg"));
        assert!(!f.selects("deep/down/a.png"));
    }
}
