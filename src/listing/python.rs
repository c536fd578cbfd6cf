//! `barecat list` (aliases `l`, `t`): Python barecat's `list`/`ls`, line for line
//! (docs/FORMAT.md §8.4), for the scripts written against it.
//!
//! * A path ending in `/` (not `**/`) becomes `PATH/**`. A path with `*`, `?` or `[`
//!   is a glob: the matches with full paths (directories with a trailing `/` in
//!   short format), in the order Python prints them ([`super::pyglob`]), hidden
//!   entries excluded.
//! * `-R` on a directory: every file below it, full paths, in the order of Python's
//!   walk: a directory's files (row order), then its subdirectories one after the
//!   other (row order), each with its own subtree. Directories are not printed.
//! * A directory: its children's names sorted by code point, directories with a
//!   trailing `/`; `-l` adds a `total N` line first (the children's sizes added up,
//!   a directory counting its whole subtree).
//! * A file: that one entry, with its full path.
//! * Several paths: one listing after the other, nothing between them.
//!
//! Where Python barecat is wrong we are not: a missing path prints Python's line
//! `ls: PATH: No such file or directory` on stdout as it does, but the exit status
//! is then 1, not 0 (docs/FORMAT.md §11.20), also with `-R` (where Python prints nothing);
//! user and group names are looked up in separate tables (Python shares one, so a
//! group can show a user's name).

use std::io::Write;

use super::format::{long_line, py_json_line, Flavor, Names};
use super::pyglob;
use crate::core::archive::walk::{
    children, entries_by_name, ChildOrder, Walk, WalkEvent, WalkOptions,
};
use crate::core::archive::Archive;
use crate::core::entry::{DirInfo, Entry};
use crate::core::error::{Error, Result};
use crate::core::glob::has_wildcards;
use crate::core::index::Table;
use crate::core::path as mpath;

/// What to print (Python's `-l`, `-R`, `--jsonl`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// One line per entry with mode, size and time (`-l`).
    pub long: bool,
    /// Descend into subdirectories (`-R`).
    pub recursive: bool,
    /// One JSON object per line (`--jsonl`).
    pub jsonl: bool,
}

struct Printer<'a> {
    opts: Options,
    names: Names,
    out: &'a mut dyn Write,
}

impl Printer<'_> {
    fn entry(&mut self, entry: &Entry, name: &str) -> Result<()> {
        let out_err = Error::output;
        if self.opts.jsonl {
            return writeln!(self.out, "{}", py_json_line(entry)).map_err(out_err);
        }
        if self.opts.long {
            let line = long_line(&mut self.names, entry, name, Flavor::Python);
            return writeln!(self.out, "{line}").map_err(out_err);
        }
        let end: &[u8] = if entry.is_dir() && !name.is_empty() {
            b"/\n"
        } else {
            b"\n"
        };
        self.out
            .write_all(name.as_bytes())
            .and_then(|_| self.out.write_all(end))
            .map_err(out_err)
    }

    fn line(&mut self, text: &str) -> Result<()> {
        writeln!(self.out, "{text}").map_err(Error::output)
    }
}

/// Python's rule for a listing path: a trailing `/` (but not `**/`) means
/// everything below, `PATH/**`.
pub fn trailing_slash_rule(path: &str) -> String {
    if path.ends_with('/') && !path.ends_with("**/") {
        format!("{path}**")
    } else {
        path.to_string()
    }
}

/// What a listing path names: a directory is looked up first, as Python does.
fn lookup(archive: &Archive, path: &str) -> Result<Option<Entry>> {
    let p = mpath::normalize(path);
    archive.with_index(|i| {
        if let Some(d) = i.dir(&p)? {
            return Ok(Some(Entry::Dir(d)));
        }
        Ok(i.file(&p)?.map(Entry::File))
    })
}

/// List `paths` (the root when empty) to `out` as Python barecat's `list` does.
/// Returns the paths that were not found (their line has been printed).
pub fn list(
    archive: &Archive,
    paths: &[String],
    opts: Options,
    out: &mut dyn Write,
) -> Result<Vec<String>> {
    let mut p = Printer {
        opts,
        names: Names::default(),
        out,
    };
    let paths: Vec<String> = if paths.is_empty() {
        vec![String::new()]
    } else {
        paths.to_vec()
    };
    let mut missing = Vec::new();
    for raw in &paths {
        let path = trailing_slash_rule(raw);
        if has_wildcards(&path) {
            for e in pyglob::matches(archive, &path)? {
                let e = e?;
                p.entry(&e, e.path())?;
            }
            continue;
        }
        match lookup(archive, &path)? {
            Some(Entry::Dir(d)) if opts.recursive && !opts.long && !opts.jsonl => {
                walk_file_paths(archive, d, p.out)?;
            }
            Some(Entry::Dir(d)) if opts.recursive => {
                let walk = Walk::new(
                    archive,
                    d,
                    WalkOptions {
                        order: ChildOrder::Rowid,
                        files_first: true,
                        files: true,
                        max_depth: None,
                        file_paths_only: !opts.long && !opts.jsonl,
                    },
                );
                for ev in walk {
                    if let WalkEvent::File { info, .. } = ev? {
                        let e = Entry::File(info);
                        p.entry(&e, e.path())?;
                    }
                }
            }
            Some(Entry::Dir(d)) => {
                if opts.long && !opts.jsonl {
                    let total = archive.with_index(|i| i.children_size(&d.path))?;
                    p.line(&format!("total {total}"))?;
                }
                for c in entries_by_name(archive, &d) {
                    let c = c?;
                    p.entry(&c, mpath::basename(c.path()))?;
                }
            }
            Some(e @ Entry::File(_)) => p.entry(&e, e.path())?,
            None => {
                p.line(&format!("ls: {path}: No such file or directory"))?;
                missing.push(path);
            }
        }
    }
    Ok(missing)
}

/// `-R` in the short format: the paths of the files below `start` in the order of
/// Python's walk (a directory's files in row order, then each subdirectory in row
/// order with its subtree), each page of paths formatted as it is read.
fn walk_file_paths(archive: &Archive, start: DirInfo, out: &mut dyn Write) -> Result<()> {
    let mut page: Vec<u8> = Vec::with_capacity(1 << 16);
    let mut stack = Vec::new();
    let mut next = Some(start);
    loop {
        if let Some(dir) = next.take() {
            let mut files = children(archive, &dir, Table::Files, ChildOrder::Rowid, true);
            loop {
                let more = files.next_page_paths(&mut |path| {
                    page.extend_from_slice(path.as_bytes());
                    page.push(b'\n');
                    Ok(())
                })?;
                out.write_all(&page).map_err(Error::output)?;
                page.clear();
                if !more {
                    break;
                }
            }
            stack.push(children(
                archive,
                &dir,
                Table::Dirs,
                ChildOrder::Rowid,
                false,
            ));
        }
        let Some(top) = stack.last_mut() else {
            return Ok(());
        };
        match top.next() {
            Some(Ok(Entry::Dir(d))) => next = Some(d),
            Some(Ok(Entry::File(_))) => {}
            Some(Err(e)) => return Err(e),
            None => {
                stack.pop();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailing_slash() {
        assert_eq!(trailing_slash_rule("a/"), "a/**");
        assert_eq!(trailing_slash_rule("a/**/"), "a/**/");
        assert_eq!(trailing_slash_rule("a"), "a");
        assert_eq!(trailing_slash_rule("/"), "/**");
    }
}
