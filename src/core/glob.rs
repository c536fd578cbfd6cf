//! Glob patterns with Python `glob` semantics (docs/FORMAT.md §8.2), matched against whole
//! normalized member paths.
//!
//! * `*` and `?` never cross `/`; `[…]` classes with `[!…]` negation; no escapes and
//!   no brace alternation (a backslash is an ordinary character, as in Python).
//! * When recursive, a `**` segment matches zero or more whole segments.
//! * When hidden entries are excluded, wildcards do not match a leading `.` of a
//!   segment, and `**` does not descend into hidden directories.
//!
//! Python compiles a pattern to one regular expression with a look-ahead for the
//! hidden-file rule. Rust's `regex` has no look-ahead, so patterns are matched
//! segment by segment here: `**` structurally, every other segment with an anchored
//! regex plus the leading-dot rule. The result is the same language.

use regex::Regex;

use crate::core::error::{Error, Result};

/// How a pattern is interpreted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GlobOptions {
    /// `**` matches any number of segments (otherwise it is the same as `*`).
    pub recursive: bool,
    /// Wildcards may match names that start with `.`.
    pub include_hidden: bool,
}

#[derive(Debug, Clone)]
enum Seg {
    /// `**` in recursive mode.
    AnySegments,
    /// A segment without wildcards.
    Literal(String),
    /// A segment with wildcards; `no_dot`: may not match a name starting with `.`.
    Wild { m: Wild, no_dot: bool },
}

/// How a segment with wildcards is matched against one name.
#[derive(Debug, Clone)]
enum Wild {
    /// Only `*` wildcards: the literal pieces between them (the first and last
    /// possibly empty), found in order; no regex needed (`*.jpg`, `item_1*`).
    Stars(Vec<String>),
    /// Anything else (`?`, classes): an anchored regex.
    Re(Regex),
}

impl Wild {
    fn is_match(&self, name: &str) -> bool {
        match self {
            Wild::Re(re) => re.is_match(name),
            Wild::Stars(pieces) => {
                let (Some((first, rest)), Some(last)) = (pieces.split_first(), pieces.last())
                else {
                    return false;
                };
                let mid = &rest[..rest.len().saturating_sub(1)];
                // (An empty piece is skipped rather than compared: a call to memcmp
                // per name was a tenth of a `**/*.txt` glob.)
                if name.len() < first.len() + last.len()
                    || (!first.is_empty() && !name.starts_with(first.as_str()))
                    || (!last.is_empty() && !name.ends_with(last.as_str()))
                {
                    return false;
                }
                let mut hay = &name[first.len()..name.len() - last.len()];
                for p in mid.iter().filter(|p| !p.is_empty()) {
                    match hay.find(p.as_str()) {
                        Some(i) => hay = &hay[i + p.len()..],
                        None => return false,
                    }
                }
                true
            }
        }
    }
}

/// A compiled pattern.
#[derive(Debug, Clone)]
pub struct Glob {
    pattern: String,
    segs: Vec<Seg>,
    include_hidden: bool,
    prefix: String,
}

/// True if the text contains a wildcard character (`*`, `?` or `[`).
pub fn has_wildcards(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

impl Glob {
    /// Compile `pattern`.
    pub fn new(pattern: &str, opts: GlobOptions) -> Result<Glob> {
        let parts: Vec<&str> = pattern.split('/').collect();
        let mut segs = Vec::with_capacity(parts.len());
        for part in &parts {
            if opts.recursive && *part == "**" {
                if !matches!(segs.last(), Some(Seg::AnySegments)) {
                    segs.push(Seg::AnySegments);
                }
            } else if !has_wildcards(part) {
                segs.push(Seg::Literal(part.to_string()));
            } else if !part.contains(['?', '[']) {
                let no_dot = !opts.include_hidden && part.starts_with('*');
                let pieces = part.split('*').map(str::to_string).collect();
                segs.push(Seg::Wild {
                    m: Wild::Stars(pieces),
                    no_dot,
                });
            } else {
                let no_dot = !opts.include_hidden && part.starts_with(['*', '?']);
                let body = translate_segment(part);
                let re =
                    Regex::new(&format!("^(?s:{body})$")).map_err(|e| Error::InvalidPattern {
                        pattern: pattern.to_string(),
                        detail: e
                            .to_string()
                            .lines()
                            .last()
                            .unwrap_or("")
                            .trim()
                            .to_string(),
                    })?;
                segs.push(Seg::Wild {
                    m: Wild::Re(re),
                    no_dot,
                });
            }
        }
        let end = pattern.find(['*', '?', '[']).unwrap_or(pattern.len());
        Ok(Glob {
            pattern: pattern.to_string(),
            segs,
            include_hidden: opts.include_hidden,
            prefix: pattern[..end].to_string(),
        })
    }

    /// The pattern as given.
    pub fn as_str(&self) -> &str {
        &self.pattern
    }

    /// The text before the first wildcard: every match starts with it, so a range
    /// scan of the path index can stand in for a full scan.
    pub fn literal_prefix(&self) -> &str {
        &self.prefix
    }

    /// Does the whole of `path` match?
    pub fn is_match(&self, path: &str) -> bool {
        if path.is_empty() {
            // The root has no segment at all: only `**` segments match it, and a
            // trailing `/` after them (Python's regex for `**/` matches "").
            let n = self.segs.len();
            return self.segs.iter().enumerate().all(|(i, s)| match s {
                Seg::AnySegments => true,
                Seg::Literal(l) => l.is_empty() && i + 1 == n && i > 0,
                Seg::Wild { .. } => false,
            });
        }
        if let [seg] = self.segs.as_slice() {
            // One segment against a path of one (a name): no bookkeeping needed.
            if path.contains('/') {
                return matches!(seg, Seg::AnySegments) && self.all_visible(path);
            }
            return match seg {
                Seg::AnySegments => self.visible(path),
                Seg::Literal(l) => l == path,
                Seg::Wild { .. } => self.seg_matches(seg, path),
            };
        }
        if let Some((Seg::AnySegments, tail)) = self.segs.split_first() {
            if !tail.is_empty() && !tail.iter().any(|s| matches!(s, Seg::AnySegments)) {
                // `**/a/b*`: the last names are the tail's, the ones before are what
                // `**` takes (zero or more, all visible).
                // (Split by hand: `rsplitn`'s searcher was a tenth of `**/*.txt`.)
                let mut rest = path;
                for (k, seg) in tail.iter().rev().enumerate() {
                    let (before, name) = match rest.as_bytes().iter().rposition(|&c| c == b'/') {
                        Some(i) => (Some(&rest[..i]), &rest[i + 1..]),
                        None => (None, rest),
                    };
                    if !self.seg_matches(seg, name) {
                        return false;
                    }
                    match before {
                        Some(b) => rest = b,
                        // Fewer names than the tail has segments.
                        None => return k + 1 == tail.len(),
                    }
                }
                return self.all_visible_names(rest);
            }
        }
        if let Some((Seg::AnySegments, head)) = self.segs.split_last() {
            if !head.is_empty() && !head.iter().any(|s| matches!(s, Seg::AnySegments)) {
                // `a/b*/**`: the first names are the head's, then at least one more,
                // all visible.
                let mut names = path.splitn(head.len() + 1, '/');
                for seg in head {
                    match names.next() {
                        Some(n) if self.seg_matches(seg, n) => {}
                        _ => return false,
                    }
                }
                return match names.next() {
                    None => false,
                    Some(rest) => self.all_visible_names(rest),
                };
            }
        }
        let names: Vec<&str> = path.split('/').collect();
        let mut failed = vec![false; (self.segs.len() + 1) * (names.len() + 1)];
        self.match_from(0, 0, &names, &mut failed)
    }

    /// Are all the `/`-separated names of `rest` (at least one) visible?
    fn all_visible_names(&self, rest: &str) -> bool {
        // One pass over the bytes: a name that starts with `.`, or is empty.
        let b = rest.as_bytes();
        self.include_hidden
            || !(b.is_empty()
                || b[0] == b'.'
                || b[b.len() - 1] == b'/'
                || b.windows(2)
                    .any(|w| w[0] == b'/' && matches!(w[1], b'.' | b'/')))
    }

    /// Does one name match one segment other than `**`?
    fn seg_matches(&self, seg: &Seg, name: &str) -> bool {
        match seg {
            Seg::Literal(l) => l == name,
            Seg::Wild { m, no_dot } => !(*no_dot && name.starts_with('.')) && m.is_match(name),
            Seg::AnySegments => false,
        }
    }

    fn all_visible(&self, path: &str) -> bool {
        path.split('/').all(|n| self.visible(n))
    }

    fn visible(&self, name: &str) -> bool {
        self.include_hidden || (!name.is_empty() && !name.starts_with('.'))
    }

    fn match_from(&self, i: usize, j: usize, names: &[&str], failed: &mut [bool]) -> bool {
        let key = i * (names.len() + 1) + j;
        if failed[key] {
            return false;
        }
        let ok = match self.segs.get(i) {
            None => j == names.len(),
            Some(Seg::AnySegments) => {
                let last = i + 1 == self.segs.len();
                // A trailing `**` after a separator needs at least one segment ("a/**"
                // matches "a/x" but not "a"); alone, it also matches the empty path.
                let min = usize::from(last && i > 0);
                let mut ok = false;
                let mut k = j;
                loop {
                    if k - j >= min && self.match_from(i + 1, k, names, failed) {
                        ok = true;
                        break;
                    }
                    if k == names.len() || !self.visible(names[k]) {
                        break;
                    }
                    k += 1;
                }
                ok
            }
            Some(seg) => {
                j < names.len()
                    && self.seg_matches(seg, names[j])
                    && self.match_from(i + 1, j + 1, names, failed)
            }
        };
        if !ok {
            failed[key] = true;
        }
        ok
    }
}

fn escape_char(out: &mut String, c: char) {
    if c.is_alphanumeric() || c == '_' || !c.is_ascii() {
        out.push(c);
    } else {
        out.push('\\');
        out.push(c);
    }
}

/// Translate one segment (no `/` inside) to a regex body, following CPython's
/// `glob.translate` for `*`, `?` and bracket expressions.
fn translate_segment(part: &str) -> String {
    let chars: Vec<char> = part.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        match c {
            '*' => {
                while i < chars.len() && chars[i] == '*' {
                    i += 1;
                }
                out.push_str("[^/]*");
            }
            '?' => out.push_str("[^/]"),
            '[' => {
                // Find the closing bracket; a `]` right after `[` or `[!` is content.
                let mut j = i;
                if j < chars.len() && chars[j] == '!' {
                    j += 1;
                }
                if j < chars.len() && chars[j] == ']' {
                    j += 1;
                }
                while j < chars.len() && chars[j] != ']' {
                    j += 1;
                }
                if j >= chars.len() {
                    out.push_str("\\[");
                    continue;
                }
                let mut content = &chars[i..j];
                i = j + 1;
                let negate = content.first() == Some(&'!');
                if negate {
                    content = &content[1..];
                }
                let mut class = String::new();
                let mut k = 0;
                while k < content.len() {
                    let lo = content[k];
                    if k + 2 < content.len() && content[k + 1] == '-' {
                        let hi = content[k + 2];
                        if lo <= hi {
                            escape_char(&mut class, lo);
                            class.push('-');
                            escape_char(&mut class, hi);
                        }
                        k += 3;
                    } else {
                        escape_char(&mut class, lo);
                        k += 1;
                    }
                }
                match (class.is_empty(), negate) {
                    (true, false) => out.push_str("[^\\x00-\\x{10FFFF}]"), // matches nothing
                    (true, true) => out.push('.'),
                    (false, false) => out.push_str(&format!("[{class}]")),
                    (false, true) => out.push_str(&format!("[^{class}]")),
                }
            }
            other => escape_char(&mut out, other),
        }
    }
    out
}

/// Ordered include/exclude rules where the first matching rule decides and paths that
/// match no rule are included (docs/FORMAT.md §8.2, used by extract, merge and subset).
#[derive(Debug, Clone, Default)]
pub struct Rules {
    rules: Vec<(bool, Glob)>,
}

impl Rules {
    /// Add a rule. Each pattern is recursive iff it contains `**`; hidden files are
    /// included; a trailing `/` stands for `/**`.
    pub fn push(&mut self, include: bool, pattern: &str) -> Result<()> {
        let pattern = match pattern.strip_suffix('/') {
            Some(p) if !p.ends_with("**") => format!("{p}/**"),
            _ => pattern.to_string(),
        };
        let glob = Glob::new(
            &pattern,
            GlobOptions {
                recursive: pattern.contains("**"),
                include_hidden: true,
            },
        )?;
        self.rules.push((include, glob));
        Ok(())
    }

    /// True when no rule was added (everything is kept).
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Is `path` selected?
    pub fn selects(&self, path: &str) -> bool {
        self.rules
            .iter()
            .find(|(_, g)| g.is_match(path))
            .map(|(inc, _)| *inc)
            .unwrap_or(true)
    }
}

/// A selection of member paths as Python barecat's extract, merge and subset take
/// it: one `--pattern` glob, or `-i/-x` rules in command-line order (first match
/// wins).
#[derive(Debug, Clone)]
pub enum PathFilter {
    /// `--pattern GLOB`: a trailing `/` stands for `/**`; recursive iff it holds `**`.
    Pattern(Glob),
    /// `-i/-x` rules ([`Rules`]).
    Rules(Rules),
    /// Exactly these paths (chosen by the caller, e.g. by Python barecat's own
    /// glob and rule functions).
    Paths(std::collections::HashSet<String>),
}

impl PathFilter {
    /// `--pattern GLOB`, with hidden names matched or not.
    pub fn pattern(pattern: &str, include_hidden: bool) -> Result<PathFilter> {
        let pattern = match pattern.strip_suffix('/') {
            Some(p) if !p.ends_with("**") => format!("{p}/**"),
            _ => pattern.to_string(),
        };
        let opts = GlobOptions {
            recursive: pattern.contains("**"),
            include_hidden,
        };
        Ok(PathFilter::Pattern(Glob::new(&pattern, opts)?))
    }

    /// Include (`true`) and exclude (`false`) rules, in the order given.
    pub fn rules<S: AsRef<str>>(rules: &[(bool, S)]) -> Result<PathFilter> {
        let mut r = Rules::default();
        for (include, pattern) in rules {
            r.push(*include, pattern.as_ref())?;
        }
        Ok(PathFilter::Rules(r))
    }

    /// Is `path` (a normalized member path) selected?
    pub fn selects(&self, path: &str) -> bool {
        match self {
            PathFilter::Pattern(g) => g.is_match(path),
            PathFilter::Rules(r) => r.selects(path),
            PathFilter::Paths(p) => p.contains(path),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pat: &str, recursive: bool, hidden: bool, path: &str) -> bool {
        Glob::new(
            pat,
            GlobOptions {
                recursive,
                include_hidden: hidden,
            },
        )
        .unwrap()
        .is_match(path)
    }

    #[test]
    fn star_does_not_cross_slash() {
        assert!(m("*.txt", true, false, "a.txt"));
        assert!(!m("*.txt", true, false, "d/a.txt"));
        assert!(m("d/*.txt", true, false, "d/a.txt"));
        assert!(m("a*/b", false, false, "ax/b"));
        assert!(!m("a?", false, false, "a/"));
    }

    #[test]
    fn double_star() {
        assert!(m("**/*.txt", true, false, "a.txt"));
        assert!(m("**/*.txt", true, false, "x/y/a.txt"));
        assert!(m("a/**", true, false, "a/b"));
        assert!(m("a/**", true, false, "a/b/c"));
        assert!(!m("a/**", true, false, "a"));
        assert!(m("a/**/b", true, false, "a/b"));
        assert!(m("a/**/b", true, false, "a/x/y/b"));
        assert!(m("**", true, false, "a/b"));
        // The root (as Python's regex for `**` matches the empty string).
        assert!(m("**", true, false, ""));
        assert!(!m("*", true, false, ""));
        assert!(!m("a/**", true, false, ""));
        assert!(m("**/", true, false, ""));
        assert!(m("**/**", true, false, ""));
        assert!(!m("/**", true, false, ""));
        assert!(!m("**/", false, false, ""));
        // Not recursive: ** is *.
        assert!(!m("**/*.txt", false, false, "a.txt"));
        assert!(m("**/*.txt", false, false, "x/a.txt"));
        assert!(!m("**/*.txt", false, false, "x/y/a.txt"));
    }

    #[test]
    fn hidden_rule() {
        assert!(!m("*", true, false, ".hidden"));
        assert!(m("*", true, true, ".hidden"));
        assert!(m(".*", true, false, ".hidden"));
        assert!(!m("*.txt", true, false, ".txt"));
        assert!(!m("**/*.txt", true, false, ".git/a.txt"));
        assert!(m("**/*.txt", true, true, ".git/a.txt"));
        assert!(m("a*", true, false, "a.b"));
        assert!(!m("?x", true, false, ".x"));
        assert!(m("[.]x", true, false, ".x"));
    }

    #[test]
    fn classes() {
        assert!(m("[!a]b", false, false, "cb"));
        assert!(!m("[!a]b", false, false, "ab"));
        assert!(m("[a-c]", false, false, "b"));
        assert!(!m("[a-c]", false, false, "d"));
        assert!(m("[]a]", false, false, "]"));
        assert!(m("[^]", false, false, "^"));
        assert!(m("x[", false, false, "x["));
        assert!(!m("[z-a]q", false, false, "q"));
        assert!(m("a\\b", false, false, "a\\b"));
        assert!(m("[&&]", false, false, "&"));
        assert!(m("{a,b}", false, false, "{a,b}"));
    }

    #[test]
    fn prefix() {
        let g = Glob::new("train/cls*/x.jpg", GlobOptions::default()).unwrap();
        assert_eq!(g.literal_prefix(), "train/cls");
    }

    #[test]
    fn rules_first_match_wins() {
        let mut r = Rules::default();
        r.push(false, "**/*.tmp").unwrap();
        r.push(true, "keep/").unwrap();
        assert!(!r.selects("keep/a.tmp"));
        assert!(r.selects("keep/a.txt"));
        assert!(r.selects("other"));
    }

    /// `*`-only segments are matched without a regex, and `**/…` patterns without
    /// the memo: both agree with the regex and the general matcher.
    #[test]
    fn fast_paths_agree_with_the_general_ones() {
        let names = [
            "",
            "a",
            ".a",
            "ab",
            "abc",
            "a.txt",
            ".txt",
            "txt",
            "x.txt.gz",
            "ba",
            "aba",
            "ää.txt",
            "item_00001.txt",
            "item_000012.txt",
            "*",
            "a*b",
        ];
        let patterns = [
            "*",
            "**",
            "*.txt",
            "a*",
            "*a",
            "a*a",
            "*b*",
            "item_00001*.txt",
            "*.*",
            "a**b",
            "ä*",
            "*t*x*t",
        ];
        for pat in patterns {
            let stars = Wild::Stars(pat.split('*').map(str::to_string).collect());
            let re = Wild::Re(Regex::new(&format!("^(?s:{})$", translate_segment(pat))).unwrap());
            for n in names {
                assert_eq!(stars.is_match(n), re.is_match(n), "{pat:?} on {n:?}");
            }
        }
        let paths = [
            "a.txt",
            "x/a.txt",
            "x/y/a.txt",
            ".x/a.txt",
            "x/.y/z.txt",
            "a/b",
            "a",
            "x/a.txt/b",
        ];
        for pat in [
            "**/*.txt",
            "**/y/*.txt",
            "**/a",
            "**/*/*.txt",
            "**/.y/*",
            "x/**",
            "*/**",
            "x/y/**",
            ".x/**",
            "x/.y/**",
            "a/**",
        ] {
            for hidden in [false, true] {
                let opts = GlobOptions {
                    recursive: true,
                    include_hidden: hidden,
                };
                let g = Glob::new(pat, opts).unwrap();
                for p in paths {
                    let names: Vec<&str> = p.split('/').collect();
                    let mut failed = vec![false; (g.segs.len() + 1) * (names.len() + 1)];
                    let general = g.match_from(0, 0, &names, &mut failed);
                    assert_eq!(g.is_match(p), general, "{pat:?} on {p:?}, hidden {hidden}");
                }
            }
        }
    }

    #[test]
    fn pathological_patterns_are_fast() {
        let g = Glob::new(
            "**/**/**/**/**/**/**/**/z",
            GlobOptions {
                recursive: true,
                include_hidden: true,
            },
        )
        .unwrap();
        let path = vec!["a"; 60].join("/");
        assert!(!g.is_match(&path));
    }
}
