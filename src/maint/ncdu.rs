//! Export of the directory tree in ncdu's JSON export format (version 1.1), for
//! `ncdu -f FILE` (docs/FORMAT.md §8.4 `to-ncdu-json`).
//!
//! Each directory is an array: its own object, then its files, then its
//! subdirectories, each in row order as Python barecat writes them. Strings are
//! escaped to ASCII like Python's `json.dumps`, so the output is the same bytes as
//! Python barecat's apart from the version and the time stamp. The tree is
//! streamed by a walk ([`crate::core::archive::Walk`]): memory does not grow with the
//! archive, however large its directories.

use std::fmt::Write as _;
use std::io::Write;

use crate::core::archive::{Archive, ChildOrder, WalkEvent, WalkOptions};
use crate::core::error::{Error, Result};
use crate::core::path as mpath;

/// A JSON string literal with every non-ASCII character escaped.
pub fn json_ascii(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{u:04x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn out_err(e: std::io::Error) -> Error {
    Error::output(e)
}

/// Write the whole tree of `archive` to `out`.
pub fn write_ncdu(archive: &Archive, out: &mut dyn Write) -> Result<()> {
    let timestamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    writeln!(
        out,
        "[1,1,{{\"progname\":\"barecat\",\"progver\":\"{}\",\"timestamp\":{timestamp}}},",
        env!("CARGO_PKG_VERSION")
    )
    .map_err(out_err)?;
    let walk = archive.walk(
        "",
        WalkOptions {
            order: ChildOrder::Rowid,
            files_first: true,
            files: true,
            max_depth: None,
            file_paths_only: false,
        },
    )?;
    let mut text = String::new();
    for ev in walk {
        text.clear();
        match ev? {
            WalkEvent::Dir { info, depth, .. } => {
                let name = if depth == 0 {
                    "/"
                } else {
                    mpath::basename(&info.path)
                };
                let sep = if depth == 0 { "" } else { ",\n" };
                let _ = write!(
                    text,
                    "{sep}[ {{\"name\": {}, \"asize\": 4096, \"ino\": 0}}",
                    json_ascii(name)
                );
            }
            WalkEvent::File { info, .. } => {
                let _ = write!(
                    text,
                    ", {{\"name\": {}, \"asize\": {}, \"dsize\": {}, \"ino\": 0}}",
                    json_ascii(mpath::basename(&info.path)),
                    info.size,
                    info.size
                );
            }
            WalkEvent::End { .. } => text.push(']'),
        }
        out.write_all(text.as_bytes()).map_err(out_err)?;
    }
    out.write_all(b"]\n").map_err(out_err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_like_python() {
        assert_eq!(json_ascii("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(json_ascii("é\u{1}"), r#""\u00e9\u0001""#);
        assert_eq!(json_ascii("😀"), r#""\ud83d\ude00""#);
        assert_eq!(json_ascii("\u{7f}"), r#""\u007f""#);
    }
}
