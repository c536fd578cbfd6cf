//! Where an archive lives: a local path, or a URL of an object in an S3-compatible
//! bucket or on an HTTP(S) server.
//!
//! Every command takes its archive argument as a path; a path that starts with a
//! URL scheme (`s3://`, `http://`, `https://`, `file://`) is parsed here. The
//! archive's parts are found by name as locally ([`crate::core::format::layout`]): the index
//! `NAME` (or the legacy `NAME-sqlite-index`), the shards `NAME-shard-NNNNN`, the
//! sidecar `NAME-btreemeta` and the record table `NAME-records`, all in the
//! directory (key prefix) of `NAME`.
//!
//! The questions asked about a location, and their names:
//!
//! * [`is_url`]: is the argument *written* as a URL (`scheme://…`, `file://`
//!   included)? Then it must be parsed ([`Location::parse`]) before it is used.
//! * [`is_remote`] and [`Location::is_remote`]: does it name an archive read over
//!   the network (S3 or HTTP(S)), which is read-only and has no local files? An
//!   opened archive answers the same question with
//!   [`Archive::is_remote`](crate::core::archive::Archive::is_remote), and so do its
//!   [`Layout`](crate::core::format::layout::Layout) and its shards.
//! * [`Location::local_path`]: the path to open locally, if it is local.
//!
//! (`barecat-rsync`'s endpoints are another thing: a file tree or a directory inside
//! a local archive, see [`crate::sync::Side`].)

use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::core::error::{Error, Result};

/// The protocols archives can be read over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// `s3://bucket/prefix/name`: an S3-compatible object store.
    S3,
    /// `http://host[:port]/path/name`.
    Http,
    /// `https://host[:port]/path/name`.
    Https,
}

/// An archive in object storage or on a web server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteUrl {
    /// S3, HTTP or HTTPS.
    pub scheme: Scheme,
    /// The bucket (S3), or `host[:port]` (HTTP).
    pub authority: String,
    /// The directory of the archive: decoded path segments, possibly none.
    pub dir: Vec<String>,
    /// The archive's name: the last path segment.
    pub name: String,
}

/// Where an archive lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A path of the local file system (a `file://` URL is decoded into one).
    Local(PathBuf),
    /// An object in a bucket or on a web server.
    Remote(RemoteUrl),
}

/// Does `s` start with `scheme://`?
fn url_scheme(s: &str) -> Option<&str> {
    let (scheme, _) = s.split_once("://")?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
    .then_some(scheme)
}

/// Is `path` written as a URL (`scheme://…`, `file://` included) rather than a
/// local path? See the module documentation for the other questions.
pub fn is_url(path: &Path) -> bool {
    path.to_str().and_then(url_scheme).is_some()
}

/// Does the archive argument `path` name a remote archive: a URL of any scheme but
/// `file://` (an unknown scheme or a malformed URL is an error when it is parsed
/// or opened, never a local path)?
pub fn is_remote(path: &Path) -> bool {
    path.to_str()
        .and_then(url_scheme)
        .is_some_and(|s| !s.eq_ignore_ascii_case("file"))
}

fn bad(url: &str, detail: impl Into<String>) -> Error {
    Error::Remote {
        url: url.to_string(),
        detail: detail.into(),
    }
}

impl Location {
    /// Parse an archive argument given as a path ([`Location::parse`]).
    pub fn parse_path(path: &Path) -> Result<Location> {
        Location::parse(path.as_os_str())
    }

    /// Is this a remote archive (read over the network, read-only)?
    pub fn is_remote(&self) -> bool {
        matches!(self, Location::Remote(_))
    }

    /// The local path of the archive; `None` when it is remote.
    pub fn local_path(&self) -> Option<&Path> {
        match self {
            Location::Local(p) => Some(p),
            Location::Remote(_) => None,
        }
    }

    /// Parse an archive argument. A path that starts with `scheme://` is a URL:
    /// `s3`, `http`, `https` are remote, `file` is a local path, any other scheme is
    /// an error. Everything else is a local path (write `./x://y` for a local path
    /// that looks like a URL).
    pub fn parse(arg: &OsStr) -> Result<Location> {
        let Some(s) = arg.to_str() else {
            return Ok(Location::Local(PathBuf::from(arg)));
        };
        let Some(scheme) = url_scheme(s) else {
            return Ok(Location::Local(PathBuf::from(arg)));
        };
        let scheme = match scheme.to_ascii_lowercase().as_str() {
            "s3" | "s3a" => Scheme::S3,
            "http" => Scheme::Http,
            "https" => Scheme::Https,
            "file" => {
                let u = url::Url::parse(s).map_err(|e| bad(s, format!("malformed URL: {e}")))?;
                return u
                    .to_file_path()
                    .map(Location::Local)
                    .map_err(|()| bad(s, "malformed file URL (expected file:///absolute/path)"));
            }
            other => {
                return Err(bad(
                    s,
                    format!(
                    "unknown URL scheme '{other}' (supported: s3://, http://, https://, file://)"
                ),
                ))
            }
        };
        let u = url::Url::parse(s).map_err(|e| bad(s, format!("malformed URL: {e}")))?;
        if u.query().is_some() || u.fragment().is_some() {
            return Err(bad(
                s,
                "a query string or fragment is not supported (the archive's parts are found by name)",
            ));
        }
        if !u.username().is_empty() || u.password().is_some() {
            return Err(bad(
                s,
                "credentials in the URL are not supported (use AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY for S3)",
            ));
        }
        let host = u.host_str().unwrap_or("");
        if host.is_empty() {
            return Err(bad(
                s,
                match scheme {
                    Scheme::S3 => "no bucket (expected s3://bucket/prefix/name)",
                    _ => "no host (expected http(s)://host/path/name)",
                },
            ));
        }
        let authority = match (scheme, u.port()) {
            (Scheme::S3, _) => host.to_string(),
            (_, Some(p)) => format!("{host}:{p}"),
            (_, None) => host.to_string(),
        };
        let mut segments: Vec<String> = Vec::new();
        for seg in u.path_segments().into_iter().flatten() {
            let decoded = percent_decode(seg)
                .ok_or_else(|| bad(s, "the path is not valid UTF-8 once percent-decoded"))?;
            segments.push(decoded);
        }
        // `s3://b/x/` or `http://h/` name no archive.
        let name =
            match segments.pop() {
                Some(n) if !n.is_empty() => n,
                _ => return Err(bad(
                    s,
                    "the URL names no archive (expected …/prefix/NAME, without a trailing slash)",
                )),
            };
        if segments
            .iter()
            .any(|p| p.is_empty() || p == "." || p == "..")
            || name == "."
            || name == ".."
        {
            return Err(bad(s, "the path has an empty, '.' or '..' segment"));
        }
        Ok(Location::Remote(RemoteUrl {
            scheme,
            authority,
            dir: segments,
            name,
        }))
    }
}

/// Percent-decode one URL path segment; `None` when the result is not UTF-8.
fn percent_decode(seg: &str) -> Option<String> {
    let b = seg.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = std::str::from_utf8(&b[i + 1..i + 3]).ok();
            if let Some(v) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8(out).ok()
}

/// Percent-encode one path segment for display in a URL.
fn percent_encode(seg: &str) -> String {
    let mut out = String::with_capacity(seg.len());
    for &c in seg.as_bytes() {
        if c.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@".contains(&c) {
            out.push(c as char);
        } else {
            out.push_str(&format!("%{c:02X}"));
        }
    }
    out
}

impl RemoteUrl {
    /// The URL of the object `name` in the archive's directory.
    pub fn url_of(&self, name: &str) -> String {
        let mut s = match self.scheme {
            Scheme::S3 => format!("s3://{}", self.authority),
            Scheme::Http => format!("http://{}", self.authority),
            Scheme::Https => format!("https://{}", self.authority),
        };
        for seg in self.dir.iter().map(String::as_str).chain([name]) {
            s.push('/');
            s.push_str(&percent_encode(seg));
        }
        s
    }

    /// The URL of the archive itself (its index under the current naming).
    pub fn url(&self) -> String {
        self.url_of(&self.name)
    }

    /// The key of the object `name` (S3: inside the bucket; HTTP: below the host).
    pub fn key_parts<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.dir.iter().map(String::as_str).chain([name])
    }

    /// The name of the object `NAME<suffix>`.
    pub fn with_suffix(&self, suffix: &str) -> String {
        format!("{}{suffix}", self.name)
    }
}

impl fmt::Display for RemoteUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.url())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Location> {
        Location::parse(OsStr::new(s))
    }

    fn remote(s: &str) -> RemoteUrl {
        match parse(s).unwrap() {
            Location::Remote(r) => r,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn locals() {
        for p in ["data.barecat", "/x/y", "./s3://b/k", "a:b", "x//y"] {
            assert_eq!(parse(p).unwrap(), Location::Local(PathBuf::from(p)), "{p}");
        }
        assert_eq!(
            parse("file:///tmp/a%20b").unwrap(),
            Location::Local(PathBuf::from("/tmp/a b"))
        );
    }

    #[test]
    fn remote_is_a_url_other_than_file() {
        for (p, url, remote) in [
            ("data.barecat", false, false),
            ("file:///tmp/x", true, false),
            ("FILE:///tmp/x", true, false),
            ("s3://b/x", true, true),
            ("https://h/x", true, true),
            ("ftp://h/x", true, true),
        ] {
            assert_eq!(is_url(Path::new(p)), url, "{p}");
            assert_eq!(is_remote(Path::new(p)), remote, "{p}");
        }
        assert!(parse("s3://b/x").unwrap().is_remote());
        let local = parse("file:///tmp/x").unwrap();
        assert_eq!(local.local_path(), Some(Path::new("/tmp/x")));
    }

    #[test]
    fn remotes() {
        let r = remote("s3://bucket/pre/fix/data.barecat");
        assert_eq!(r.scheme, Scheme::S3);
        assert_eq!(r.authority, "bucket");
        assert_eq!(r.dir, vec!["pre", "fix"]);
        assert_eq!(r.name, "data.barecat");
        assert_eq!(
            r.url_of("data.barecat-shard-00000"),
            "s3://bucket/pre/fix/data.barecat-shard-00000"
        );
        let r = remote("http://127.0.0.1:8080/a%20b/ds");
        assert_eq!(r.scheme, Scheme::Http);
        assert_eq!(r.authority, "127.0.0.1:8080");
        assert_eq!(r.dir, vec!["a b"]);
        assert_eq!(r.url(), "http://127.0.0.1:8080/a%20b/ds");
        let r = remote("HTTPS://Example.org/ds");
        assert_eq!((r.scheme, r.dir.len()), (Scheme::Https, 0));
    }

    #[test]
    fn bad_urls_are_one_line_errors() {
        for (s, want) in [
            ("ftp://h/x", "unknown URL scheme 'ftp'"),
            ("gopher://h/x", "unknown URL scheme"),
            ("s3://", "no bucket"),
            ("s3://bucket", "names no archive"),
            ("s3://bucket/dir/", "names no archive"),
            ("http://h/x?sig=1", "query string"),
            ("http://u:p@h/x", "credentials"),
            ("http://[::1/x", "malformed URL"),
            ("http://h:99999/x", "malformed URL"),
            ("http://h/a//b", "empty"),
        ] {
            let e = parse(s).unwrap_err().to_string();
            assert!(e.contains(want) && !e.contains('\n'), "{s}: {e}");
            assert!(e.starts_with(s), "{s}: {e}");
        }
    }
}
