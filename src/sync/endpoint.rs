//! `barecat-rsync`'s source and destination arguments: a local path, or
//! `ARCHIVE::INNER` for a directory inside an archive, parsed into a [`Side`].
//!
//! Why apart: the argument syntax (escapes, the forms refused) is one concern; the
//! sync itself ([`super::sync`]) only sees parsed endpoints.

use std::path::PathBuf;

use crate::core::error::{Error, Result};
use crate::core::path as mpath;

/// What one side of a sync is: a tree of the local file system, or a directory
/// inside a local barecat archive. (Not an archive's location: that is
/// [`crate::core::location::Location`].)
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Side {
    /// A local file or directory.
    Local(PathBuf),
    /// A path inside a barecat archive (`""`: its root).
    Archive {
        /// The archive (its index path).
        archive: PathBuf,
        /// The directory inside it.
        inner: String,
    },
}

/// A source or destination argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// What the argument names.
    pub side: Side,
    /// The argument ended in `/`: the contents of the directory, not the directory.
    pub contents: bool,
    /// The argument as given.
    pub text: String,
}

/// The position of the first `needle` not escaped by an odd number of backslashes.
pub(super) fn find_unescaped(s: &str, needle: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = s[from..].find(needle).map(|i| i + from) {
        let backslashes = s[..i].bytes().rev().take_while(|&b| b == b'\\').count();
        if backslashes % 2 == 0 {
            return Some(i);
        }
        from = i + 1;
    }
    None
}

/// Undo the escapes: `\\` is `\`, `\::` is `::`.
pub(super) fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        if let Some(r) = rest.strip_prefix("\\\\") {
            out.push('\\');
            rest = r;
        } else if let Some(r) = rest.strip_prefix("\\::") {
            out.push_str("::");
            rest = r;
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// `[user@]host:/path`: Python barecat's SSH form.
fn is_ssh_form(s: &str) -> bool {
    let (head, tail) = match s.split_once(':') {
        Some(p) => p,
        None => return false,
    };
    let host = head.rsplit_once('@').map_or(head, |(_, h)| h);
    !host.is_empty() && !host.contains('/') && tail.starts_with('/')
}

/// Parse a source or destination argument.
pub fn parse_endpoint(arg: &str) -> Result<Endpoint> {
    let contents = arg.ends_with('/');
    let trimmed = arg.trim_end_matches('/');
    let unsupported =
        |what: &str| Error::InvalidOperation(format!("{arg}: {what} are not supported"));
    if arg.starts_with("barecat://") {
        return Err(unsupported("remote archives (barecat://HOST/…)"));
    }
    if is_ssh_form(trimmed) {
        return Err(unsupported("remote paths (HOST:/PATH)"));
    }
    let side = match find_unescaped(trimmed, "::") {
        Some(i) => {
            let archive = unescape(&trimmed[..i]);
            if archive.is_empty() {
                return Err(Error::InvalidOperation(format!(
                    "{arg}: no archive before '::'"
                )));
            }
            let lower = archive.to_lowercase();
            if [
                ".tar", ".tgz", ".tbz2", ".txz", ".zip", ".tar.gz", ".tar.bz2", ".tar.xz",
            ]
            .iter()
            .any(|e| lower.ends_with(e))
            {
                return Err(unsupported(
                    "tar and zip files as rsync locations (barecat convert or barecat-from-tar \
                     and barecat-from-zip import them)",
                ));
            }
            let inner = mpath::normalize(&unescape(&trimmed[i + 2..]));
            if !inner.is_empty() {
                mpath::check_member(&inner)?;
            }
            Side::Archive {
                archive: PathBuf::from(archive),
                inner,
            }
        }
        // "/" alone is the root directory, not the empty path.
        None if trimmed.is_empty() && contents => Side::Local(PathBuf::from("/")),
        None => Side::Local(PathBuf::from(unescape(trimmed))),
    };
    Ok(Endpoint {
        side,
        contents,
        text: arg.to_string(),
    })
}
