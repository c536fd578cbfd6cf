//! Member paths: the paths of files and directories inside an archive.
//!
//! Stored paths are normalized exactly as Python barecat does it (docs/FORMAT.md §6): POSIX
//! `normpath`, then leading slashes stripped, and `.` becomes the root `""`.
//! On top of that, paths that would escape an extraction directory are refused
//! before anything is stored: absolute paths, `..` components that survive
//! normalization, and NUL characters. Archives written by other tools that hold
//! such paths still open and read; they are refused only where they would be
//! written out to the file system.

use crate::core::error::{Error, Result};

pub use crate::core::error::printable;

/// Normalize a member path the way Python barecat 0.3.1 does.
///
/// `""`, `"."`, `"/"`, `"a/.."` all become the root `""`; `"./a//b/"` becomes `"a/b"`;
/// `"../a"` stays `"../a"` (use [`check_member`] to refuse it).
pub fn normalize(path: &str) -> String {
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for comp in path.split('/') {
        match comp {
            "" | "." => {}
            ".." => {
                if !absolute && (parts.is_empty() || parts.last() == Some(&"..")) {
                    parts.push("..");
                } else if !parts.is_empty() {
                    parts.pop();
                }
            }
            other => parts.push(other),
        }
    }
    parts.join("/")
}

/// Why a raw path may not be stored, or `None` when it may.
pub fn unsafe_reason(raw: &str) -> Option<&'static str> {
    if raw.contains('\0') {
        return Some("contains a NUL character");
    }
    if raw.starts_with('/') {
        return Some("absolute paths are not stored");
    }
    if normalize(raw).split('/').any(|c| c == "..") {
        return Some("'..' would point outside the archive root");
    }
    None
}

/// Normalize `raw` and refuse it if it is absolute, contains NUL, or keeps a `..`
/// component after normalization. The root (`""`) is allowed; callers adding files
/// refuse it themselves.
pub fn check_member(raw: &str) -> Result<String> {
    // Fast path: a path that is already normalized and safe stays as it is.
    if is_safe_stored(raw) {
        return Ok(raw.to_string());
    }
    match unsafe_reason(raw) {
        Some(reason) => Err(Error::InvalidPath {
            path: raw.to_string(),
            reason,
        }),
        None => Ok(normalize(raw)),
    }
}

/// True if a stored (already normalized) path is safe to write below a target
/// directory: not absolute, no empty, `.` or `..` components, no NUL.
pub fn is_safe_stored(path: &str) -> bool {
    !path.is_empty()
        && !path.contains('\0')
        && !path.starts_with('/')
        && path
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != "..")
}

/// The parent of a normalized path, as the index's generated `parent` column
/// computes it: everything before the last `/`, or `""` at top level. The root has
/// no parent.
pub fn parent(path: &str) -> Option<&str> {
    if path.is_empty() {
        return None;
    }
    Some(match path.rfind('/') {
        Some(i) => path[..i].trim_end_matches('/'),
        None => "",
    })
}

/// The last component of a normalized path (`""` for the root).
pub fn basename(path: &str) -> &str {
    match path.rfind('/') {
        Some(i) => &path[i + 1..],
        None => path,
    }
}

/// The ancestors of a normalized path, from its parent up to and including the root.
pub fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    let mut cur = Some(path);
    std::iter::from_fn(move || {
        let p = parent(cur?);
        cur = p;
        p
    })
}

/// Join a directory path and a name (`join("", "a") == "a"`).
pub fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else if name.is_empty() {
        dir.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// True if `path` equals `dir` or lies below it. Every path is below the root `""`.
pub fn is_within(path: &str, dir: &str) -> bool {
    dir.is_empty()
        || path == dir
        || (path.len() > dir.len() && path.starts_with(dir) && path.as_bytes()[dir.len()] == b'/')
}

/// Half-open range `[lo, hi)` of strings (in SQLite's BINARY collation, i.e. byte
/// order) that holds exactly the paths strictly below `dir`. For the root it is
/// `None`: everything is below it.
pub fn subtree_range(dir: &str) -> Option<(String, String)> {
    if dir.is_empty() {
        None
    } else {
        // Every path starting with "dir/" sorts between "dir/" and "dir0" ('0' = '/' + 1).
        Some((format!("{dir}/"), format!("{dir}0")))
    }
}

/// Strip the first `n` components of a relative path (like tar's
/// `--strip-components`). Returns `None` when nothing is left.
pub fn strip_components(path: &str, n: usize) -> Option<&str> {
    if n == 0 {
        return Some(path);
    }
    let mut rest = path;
    for _ in 0..n {
        let i = rest.find('/')?;
        rest = rest[i + 1..].trim_start_matches('/');
    }
    if rest.is_empty() {
        None
    } else {
        Some(rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_matches_python() {
        // The observed mapping of docs/FORMAT.md §6.
        let cases = [
            ("", ""),
            (".", ""),
            ("/", ""),
            ("//", ""),
            ("a/..", ""),
            ("///a", "a"),
            ("./a", "a"),
            ("/../a", "a"),
            ("a/", "a"),
            ("a//b", "a/b"),
            ("a/./b", "a/b"),
            ("a/../b", "b"),
            ("../a", "../a"),
            ("..", ".."),
            ("a/b/../../..", ".."),
            ("ä/ö", "ä/ö"),
            (" a ", " a "),
            ("a\\b", "a\\b"),
            ("with[brackets]*?.txt", "with[brackets]*?.txt"),
            ("../../x/../y", "../../y"),
        ];
        for (input, want) in cases {
            assert_eq!(normalize(input), want, "normalize({input:?})");
        }
    }

    #[test]
    fn check_member_refuses_escapes() {
        assert_eq!(check_member("a/./b/").unwrap(), "a/b");
        assert_eq!(check_member("a/../b").unwrap(), "b");
        for bad in ["../a", "..", "a/../../b", "/etc/passwd", "a\0b", "/"] {
            assert!(check_member(bad).is_err(), "{bad:?} must be refused");
        }
    }

    #[test]
    fn stored_path_safety() {
        assert!(is_safe_stored("a/b.txt"));
        for bad in ["", "../a", "a/../b", "/a", "a//b", "a/./b", "a\0"] {
            assert!(!is_safe_stored(bad), "{bad:?}");
        }
    }

    #[test]
    fn parent_and_ancestors() {
        assert_eq!(parent(""), None);
        assert_eq!(parent("a"), Some(""));
        assert_eq!(parent("a/b/c"), Some("a/b"));
        assert_eq!(ancestors("a/b/c").collect::<Vec<_>>(), vec!["a/b", "a", ""]);
        assert_eq!(ancestors("").count(), 0);
        assert_eq!(basename("a/b/c"), "c");
        assert_eq!(basename("c"), "c");
    }

    #[test]
    fn within_and_ranges() {
        assert!(is_within("a/b", "a"));
        assert!(is_within("a", "a"));
        assert!(!is_within("ab", "a"));
        assert!(is_within("x", ""));
        let (lo, hi) = subtree_range("a").unwrap();
        for p in ["a/b", "a/b/c", "a/\u{10ffff}"] {
            assert!(p >= lo.as_str() && p < hi.as_str(), "{p}");
        }
        for p in ["a", "a.b", "ab", "a0"] {
            assert!(!(p >= lo.as_str() && p < hi.as_str()), "{p}");
        }
    }

    #[test]
    fn strip() {
        assert_eq!(strip_components("a/b/c", 1), Some("b/c"));
        assert_eq!(strip_components("a/b/c", 2), Some("c"));
        assert_eq!(strip_components("a/b/c", 3), None);
        assert_eq!(strip_components("a", 0), Some("a"));
    }

    #[test]
    fn printable_names_escape_what_is_not_printable_utf8() {
        assert!(matches!(
            printable("a/b ü.txt"),
            std::borrow::Cow::Borrowed("a/b ü.txt")
        ));
        assert_eq!(
            printable(b"umlauts-\xc4\xd6\xdc"),
            "umlauts-\\xc4\\xd6\\xdc"
        );
        assert_eq!(printable("a\nb\tc\r\0d"), "a\\nb\\tc\\r\\x00d");
        assert_eq!(printable("d\\e\\"), "d\\\\e\\\\");
        // C1 control characters are escaped byte by byte.
        assert_eq!(printable("x\u{85}y"), "x\\xc2\\x85y");
        // A truncated UTF-8 sequence at the end.
        assert_eq!(printable(b"ok\xe2\x82"), "ok\\xe2\\x82");
    }
}
