//! Which members an export covers: the `PATH|GLOB…` operands of extract, to-zip and
//! to-tar, with the same meaning in all three.
//!
//! * no operand: everything;
//! * a path naming a file: that file;
//! * a path naming a directory: the directory and its whole subtree;
//! * an operand with `*`, `?` or `[`: a glob with Python `glob` semantics (docs/FORMAT.md §8.2):
//!   `*` and `?` do not cross `/`, `**` matches any number of directories, and
//!   wildcards do not match names starting with `.`. Every file and directory it
//!   matches is selected as above (a matched directory brings its subtree).
//!
//! An operand that matches nothing is reported (and the rest goes on).
//!
//! Rows are read with the index's paged scans ([`crate::core::archive::Scan`]), so that one
//! corrupt row (a negative size, a text in an integer column) is reported as
//! [`Row::Bad`] and the scan goes on with the next row.

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;

use crate::core::archive::walk::files_below;
use crate::core::archive::Scan;
use crate::core::entry::{DirInfo, Entry, FileInfo, FileOrder};
use crate::core::error::{Error, Result};
use crate::core::glob::{has_wildcards, GlobOptions, PathFilter};
use crate::core::index::ScanOrder;
use crate::core::path as mpath;
use crate::Archive;

/// A selection of members.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Directories selected with their subtrees (`""` = everything), sorted by path,
    /// none inside another.
    pub dirs: Vec<String>,
    /// Single files, sorted by path, none inside a selected directory.
    pub files: Vec<FileInfo>,
    /// Only the files this selects (`--pattern`, `-i/-x`). With a filter, no
    /// directory is selected on its own: directories are made as the parents of
    /// the files.
    pub filter: Option<Arc<PathFilter>>,
}

/// One file row of a scan.
#[derive(Debug)]
pub enum Row {
    /// A usable file row.
    File(FileInfo),
    /// A row that cannot be used (corrupt values); the error names it.
    Bad(Error),
}

impl Selection {
    /// Everything in the archive.
    pub fn all() -> Selection {
        Selection {
            dirs: vec![String::new()],
            files: Vec::new(),
            filter: None,
        }
    }

    /// Resolve operands. Operands that match nothing are returned as errors next to
    /// the selection of the others. No operand selects everything.
    pub fn resolve(archive: &Archive, operands: &[String]) -> Result<(Selection, Vec<Error>)> {
        if operands.is_empty() {
            return Ok((Selection::all(), Vec::new()));
        }
        let mut dirs = Vec::new();
        let mut files = Vec::new();
        let mut problems = Vec::new();
        for raw in operands {
            let found = if has_wildcards(raw) {
                let opts = GlobOptions {
                    recursive: raw.contains("**"),
                    include_hidden: false,
                };
                archive
                    .glob(&mpath::normalize(raw), opts)?
                    .collect::<Result<Vec<_>>>()?
            } else {
                archive.lookup(raw)?.into_iter().collect()
            };
            if found.is_empty() {
                problems.push(Error::NotFound(raw.clone()));
            }
            for e in found {
                match e {
                    Entry::File(f) => files.push(f),
                    Entry::Dir(d) => dirs.push(d.path),
                }
            }
        }
        Ok((Selection::from_parts(dirs, files), problems))
    }

    /// Normalize: sort, drop duplicates and members inside a selected directory.
    fn from_parts(mut dirs: Vec<String>, mut files: Vec<FileInfo>) -> Selection {
        dirs.sort();
        dirs.dedup();
        let mut kept: Vec<String> = Vec::with_capacity(dirs.len());
        for d in dirs {
            if !kept.iter().any(|k| mpath::is_within(&d, k)) {
                kept.push(d);
            }
        }
        files.sort_by(|a, b| a.path.cmp(&b.path));
        files.dedup_by(|a, b| a.path == b.path);
        files.retain(|f| !kept.iter().any(|k| mpath::is_within(&f.path, k)));
        Selection {
            dirs: kept,
            files,
            filter: None,
        }
    }

    /// The same selection, narrowed to the files `filter` selects.
    pub fn filtered(self, filter: Option<PathFilter>) -> Selection {
        Selection {
            filter: filter.map(Arc::new),
            ..self
        }
    }

    /// True when nothing is selected.
    pub fn is_empty(&self) -> bool {
        self.dirs.is_empty() && self.files.is_empty()
    }

    /// Number of files and bytes selected, from the directory statistics (for a
    /// progress bar; not exact when the statistics are stale).
    pub fn totals(&self, archive: &Archive) -> Result<(u64, u64)> {
        let mut files = self.files.len() as u64;
        let mut bytes: u64 = self.files.iter().map(|f| f.size).sum();
        for d in &self.dirs {
            if let Some(Entry::Dir(info)) = archive.lookup(d)? {
                files += info.num_files_tree.max(0) as u64;
                bytes = bytes.saturating_add(info.size_tree.max(0) as u64);
            }
        }
        Ok((files, bytes))
    }

    /// Every selected directory (the selected ones and all directories below them),
    /// in path order. The root is left out: it stands for the destination itself.
    pub fn dir_entries(&self, archive: &Archive) -> Result<Vec<DirInfo>> {
        let mut out = Vec::new();
        if self.filter.is_some() {
            return Ok(out);
        }
        for d in &self.dirs {
            out.extend(archive.dirs(d)?.into_iter().filter(|d| !d.path.is_empty()));
        }
        Ok(out)
    }

    /// The selected files: the single files first, then each selected subtree, each
    /// part in `order`. `FileOrder::Address` reads the shards front to back.
    pub fn file_rows<'a>(&self, archive: &'a Archive, order: FileOrder) -> FileRows<'a> {
        let mut single = self.files.clone();
        if order == FileOrder::Address {
            single.sort_by_key(|f| (f.shard, f.offset));
        }
        FileRows {
            archive,
            order,
            single: single.into(),
            scopes: self.dirs.iter().cloned().collect(),
            scan: None,
            filter: self.filter.clone(),
        }
    }
}

/// Iterator over the selected file rows. An `Err` is fatal (the index cannot be
/// read); a corrupt row is `Ok(Row::Bad)`.
pub struct FileRows<'a> {
    archive: &'a Archive,
    order: FileOrder,
    single: VecDeque<FileInfo>,
    scopes: VecDeque<String>,
    scan: Option<Scan<'a>>,
    filter: Option<Arc<PathFilter>>,
}

impl FileRows<'_> {
    fn next_row(&mut self) -> Option<Result<Row>> {
        if let Some(f) = self.single.pop_front() {
            return Some(Ok(Row::File(f)));
        }
        loop {
            if let Some(scan) = &mut self.scan {
                match scan.next_row() {
                    Some(Ok(Ok(Entry::File(f)))) => return Some(Ok(Row::File(f))),
                    Some(Ok(Ok(Entry::Dir(_)))) => continue,
                    Some(Ok(Err(e))) => return Some(Ok(Row::Bad(e))),
                    Some(Err(e)) => return Some(Err(e)),
                    None => self.scan = None,
                }
            }
            let within = self.scopes.pop_front()?;
            let order = match self.order {
                FileOrder::Path => ScanOrder::Path,
                FileOrder::Address => ScanOrder::Address,
                FileOrder::Insertion => ScanOrder::Rowid,
            };
            self.scan = Some(files_below(self.archive, &within, order, false));
        }
    }
}

impl Iterator for FileRows<'_> {
    type Item = Result<Row>;

    fn next(&mut self) -> Option<Result<Row>> {
        loop {
            let r = self.next_row()?;
            match (&r, &self.filter) {
                (Ok(Row::File(f)), Some(filter)) if !filter.selects(&f.path) => continue,
                _ => return Some(r),
            }
        }
    }
}

/// Paths stored in more than one `files` row. Only possible when the unique index on
/// `files(path)` is missing, so the (full-scan) search runs only then.
pub fn duplicate_paths(archive: &Archive) -> Result<HashSet<String>> {
    archive.with_index(|i| {
        if i.has_unique_path_index()? {
            return Ok(HashSet::new());
        }
        Ok(i.duplicate_file_paths()?.into_iter().collect())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fi(path: &str) -> FileInfo {
        FileInfo {
            path: path.into(),
            shard: 0,
            offset: 0,
            size: 0,
            crc32c: None,
            meta: Default::default(),
        }
    }

    #[test]
    fn nested_members_collapse() {
        let s = Selection::from_parts(
            vec!["a/b".into(), "a".into(), "c".into(), "a".into()],
            vec![fi("a/x"), fi("d/y"), fi("d/y"), fi("cc")],
        );
        assert_eq!(s.dirs, vec!["a", "c"]);
        let names: Vec<&str> = s.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(names, vec!["cc", "d/y"]);
        let all = Selection::from_parts(vec!["".into(), "x".into()], vec![fi("y")]);
        assert_eq!(all.dirs, vec![""]);
        assert!(all.files.is_empty());
    }
}
