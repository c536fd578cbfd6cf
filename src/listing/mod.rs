//! Listing archive contents for people and scripts.
//!
//! * [`list`]: `barecat ls`, our own `ls`: GNU `ls`-like (headers when several
//!   directories are listed, problems on stderr and exit status 1), `-R` in path
//!   order, globs in path order, `--json` with every column.
//! * [`python::list`]: `barecat list` (`l`, `t`), the output of Python barecat's
//!   `list`/`ls` byte for byte (docs/FORMAT.md §8.4).
//! * [`find`] and [`tree`]: `barecat find` and `barecat tree`, Python barecat's.
//!
//! All of them stream: entries are written as the paged scans and walks of
//! [`crate::core::archive::walk`] produce them, in the order SQLite hands them out, so
//! that memory does not grow with the archive and the work grows with the entries
//! listed.

use std::io::Write;

use crate::core::archive::walk::{entries_by_name, files_below};
use crate::core::archive::Archive;
use crate::core::entry::Entry;
use crate::core::error::{Error, Result};
use crate::core::glob::{has_wildcards, GlobOptions};
use crate::core::index::ScanOrder;
use crate::core::path as mpath;

pub mod find;
pub mod format;
pub mod pyglob;
pub mod python;
pub mod tree;

pub use format::{
    format_time, json_line, long_line, mode_string, py_json_line, py_mode_string, py_time, Flavor,
    Names,
};

/// What to print.
#[derive(Debug, Clone, Copy, Default)]
pub struct ListOptions {
    /// Long format: mode, links, owner, group, size, time, name.
    pub long: bool,
    /// All files below each directory, by full path.
    pub recursive: bool,
    /// One JSON object per line with every column, instead of text.
    pub json: bool,
    /// One JSON object per line as Python barecat's `--jsonl` writes them.
    pub jsonl: bool,
}

fn out_err(e: std::io::Error) -> Error {
    Error::output(e)
}

struct Printer<'a> {
    opts: ListOptions,
    names: Names,
    out: &'a mut dyn Write,
}

impl Printer<'_> {
    fn entry(&mut self, entry: &Entry, name: &str) -> Result<()> {
        if !self.opts.jsonl && !self.opts.json && !self.opts.long {
            let end: &[u8] = if entry.is_dir() { b"/\n" } else { b"\n" };
            return self
                .out
                .write_all(name.as_bytes())
                .and_then(|_| self.out.write_all(end))
                .map_err(out_err);
        }
        let line = if self.opts.jsonl {
            py_json_line(entry)
        } else if self.opts.json {
            json_line(entry)
        } else if self.opts.long {
            long_line(&mut self.names, entry, name, Flavor::Ours)
        } else if entry.is_dir() {
            format!("{name}/")
        } else {
            name.to_string()
        };
        writeln!(self.out, "{line}").map_err(out_err)
    }

    fn line(&mut self, text: &str) -> Result<()> {
        writeln!(self.out, "{text}").map_err(out_err)
    }

    fn json(&self) -> bool {
        self.opts.json || self.opts.jsonl
    }
}

/// List `paths` (the root when empty) to `out`, as `barecat ls` does. Errors about
/// single paths (not found, …) are returned in the list and do not stop the listing
/// of the others.
pub fn list(
    archive: &Archive,
    paths: &[String],
    opts: ListOptions,
    out: &mut dyn Write,
) -> Result<Vec<Error>> {
    let mut p = Printer {
        opts,
        names: Names::default(),
        out,
    };
    let roots: Vec<String> = if paths.is_empty() {
        vec![String::new()]
    } else {
        paths.to_vec()
    };
    let headers = roots.len() > 1;
    let mut problems = Vec::new();
    for (n, raw) in roots.iter().enumerate() {
        if has_wildcards(raw) {
            let opts = GlobOptions {
                recursive: raw.contains("**"),
                include_hidden: false,
            };
            let pattern = mpath::normalize(raw);
            let mut any = false;
            for e in archive.glob(&pattern, opts)? {
                let e = e?;
                any = true;
                p.entry(&e, e.path())?;
            }
            if !any {
                problems.push(Error::NotFound(raw.clone()));
            }
            continue;
        }
        let entry = match archive.lookup(raw)? {
            Some(e) => e,
            None => {
                problems.push(Error::NotFound(mpath::normalize(raw)));
                continue;
            }
        };
        match entry {
            Entry::File(_) => p.entry(&entry, entry.path())?,
            Entry::Dir(ref d) if opts.recursive => {
                let short = !opts.long && !p.json();
                for f in files_below(archive, &d.path, ScanOrder::Path, short) {
                    let f = f?;
                    p.entry(&f, f.path())?;
                }
            }
            Entry::Dir(ref d) => {
                if headers {
                    if n > 0 {
                        p.line("")?;
                    }
                    let shown = if d.path.is_empty() { "." } else { &d.path };
                    p.line(&format!("{shown}:"))?;
                }
                if opts.long && !p.json() {
                    let total = archive.with_index(|i| i.children_size(&d.path))?;
                    p.line(&format!("total {total}"))?;
                }
                for c in entries_by_name(archive, d) {
                    let c = c?;
                    let name = if p.json() {
                        c.path()
                    } else {
                        mpath::basename(c.path())
                    };
                    p.entry(&c, name)?;
                }
            }
        }
    }
    Ok(problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_default_to_short() {
        let o = ListOptions::default();
        assert!(!o.long && !o.recursive && !o.json && !o.jsonl);
    }
}
