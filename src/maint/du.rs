//! `du`-like sizes from the directory statistics: every directory's total comes
//! straight from its `dirs` row (no file is visited unless files are listed too).
//!
//! Output format (as Python barecat's `du`): `SIZE<TAB>PATH` lines sorted by descending
//! number of `/` in the path, then by path; the root is printed as `.`.

use std::io::Write;

use serde::Serialize;

use crate::core::archive::Archive;
use crate::core::entry::Entry;
use crate::core::error::{Error, Result};
use crate::core::path as mpath;
use crate::core::size::human_signed;

/// Options of [`du`].
#[derive(Debug, Clone, Copy, Default)]
pub struct DuOptions {
    /// List files too, not only directories.
    pub all: bool,
    /// Only the total of the path itself.
    pub summarize: bool,
    /// Only entries at most this many levels below the path.
    pub max_depth: Option<u32>,
    /// Sizes like `1.5K` instead of bytes.
    pub human: bool,
    /// One JSON object per line.
    pub json: bool,
}

#[derive(Serialize)]
struct JsonLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    path: &'a str,
    size: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    files: Option<i64>,
}

fn out_err(e: std::io::Error) -> Error {
    Error::output(e)
}

fn line(
    out: &mut dyn Write,
    opts: &DuOptions,
    path: &str,
    size: i64,
    files: Option<i64>,
) -> Result<()> {
    if opts.json {
        let j = JsonLine {
            kind: if files.is_some() { "dir" } else { "file" },
            path,
            size,
            files,
        };
        let text = serde_json::to_string(&j).map_err(|e| Error::output(e.into()))?;
        return writeln!(out, "{text}").map_err(out_err);
    }
    let shown = if path.is_empty() { "." } else { path };
    if opts.human {
        writeln!(out, "{}\t{shown}", human_signed(size)).map_err(out_err)
    } else {
        writeln!(out, "{size}\t{shown}").map_err(out_err)
    }
}

/// Depth of a normalized path: 0 for the root, else its number of components.
fn depth(path: &str) -> u32 {
    if path.is_empty() {
        0
    } else {
        path.bytes().filter(|&b| b == b'/').count() as u32 + 1
    }
}

/// Write the sizes below `path` (the root when empty) to `out`.
pub fn du(archive: &Archive, path: &str, opts: &DuOptions, out: &mut dyn Write) -> Result<()> {
    let path = mpath::normalize(path.trim_end_matches('/'));
    let entry = archive
        .lookup(&path)?
        .ok_or_else(|| Error::NotFound(path.clone()))?;
    let dir = match entry {
        Entry::File(f) => return line(out, opts, &f.path, f.size as i64, None),
        Entry::Dir(d) => d,
    };
    if opts.summarize || opts.max_depth == Some(0) {
        return line(
            out,
            opts,
            &dir.path,
            dir.size_tree,
            Some(dir.num_files_tree),
        );
    }
    let max_depth = opts.max_depth.map(|n| depth(&path) + n);
    archive.with_index(|i| {
        i.each_size_deepest_first(&path, opts.all, &mut |s| {
            if max_depth.is_some_and(|m| depth(&s.path) > m) {
                return Ok(());
            }
            line(out, opts, &s.path, s.size.unwrap_or(0), s.files)
        })
    })
}
