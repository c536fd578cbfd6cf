//! Which members an export covers: the `PATH|GLOB…` operands of extract, to-zip and
//! to-tar, with the same meaning in all three.
//!
//! * no operand: everything;
//! * a path naming a file: that file;
//! * a path naming a directory: the directory and its whole subtree;
//! * an operand with `*`, `?` or `[`: a glob with Python `glob` semantics (spec §12.4):
//!   `*` and `?` do not cross `/`, `**` matches any number of directories, and
//!   wildcards do not match names starting with `.`. Every file and directory it
//!   matches is selected as above (a matched directory brings its subtree).
//!
//! An operand that matches nothing is reported (and the rest goes on).
//!
//! Rows are read with a scan of our own instead of [`Archive::files`], so that one
//! corrupt row (a negative size, a text in an integer column) is reported as
//! [`Row::Bad`] and the scan goes on with the next row.

use std::collections::{HashSet, VecDeque};

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::ToSql;

use crate::entry::{DirInfo, Entry, FileInfo, Order};
use crate::error::{Error, Result, SqlContext};
use crate::glob::{has_wildcards, GlobOptions};
use crate::index::{decode_file, FILE_COLS};
use crate::path as mpath;
use crate::Archive;

/// A selection of members.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Directories selected with their subtrees (`""` = everything), sorted by path,
    /// none inside another.
    pub dirs: Vec<String>,
    /// Single files, sorted by path, none inside a selected directory.
    pub files: Vec<FileInfo>,
}

/// One file row of a scan.
#[derive(Debug)]
pub enum Row {
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
        Selection { dirs: kept, files }
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
        for d in &self.dirs {
            out.extend(archive.dirs(d)?.into_iter().filter(|d| !d.path.is_empty()));
        }
        Ok(out)
    }

    /// The selected files: the single files first, then each selected subtree, each
    /// part in `order`. `Order::Address` reads the shards front to back.
    pub fn file_rows<'a>(&self, archive: &'a Archive, order: Order) -> FileRows<'a> {
        let mut single = self.files.clone();
        if order == Order::Address {
            single.sort_by_key(|f| (f.shard, f.offset));
        }
        FileRows {
            archive,
            order,
            single: single.into(),
            scopes: self.dirs.iter().cloned().collect(),
            scan: None,
        }
    }
}

/// Iterator over the selected file rows. An `Err` is fatal (the index cannot be
/// read); a corrupt row is `Ok(Row::Bad)`.
pub struct FileRows<'a> {
    archive: &'a Archive,
    order: Order,
    single: VecDeque<FileInfo>,
    scopes: VecDeque<String>,
    scan: Option<Scan>,
}

impl Iterator for FileRows<'_> {
    type Item = Result<Row>;

    fn next(&mut self) -> Option<Result<Row>> {
        if let Some(f) = self.single.pop_front() {
            return Some(Ok(Row::File(f)));
        }
        loop {
            if let Some(scan) = &mut self.scan {
                match scan.next(self.archive) {
                    Some(r) => return Some(r),
                    None => self.scan = None,
                }
            }
            let within = self.scopes.pop_front()?;
            self.scan = Some(Scan::new(self.order, within));
        }
    }
}

const PAGE: i64 = 4096;

/// Paged scan of `files` below one directory, keyed on the raw column values so that
/// it can step over rows that do not decode.
struct Scan {
    order: Order,
    within: String,
    cursor: Option<Vec<Key>>,
    buf: VecDeque<Row>,
    done: bool,
}

impl Scan {
    fn new(order: Order, within: String) -> Scan {
        Scan {
            order,
            within,
            cursor: None,
            buf: VecDeque::new(),
            done: false,
        }
    }

    fn key_columns(&self) -> &'static str {
        match self.order {
            Order::Address => "shard, offset, rowid",
            Order::Path => "path, rowid",
            Order::Insertion => "rowid",
        }
    }

    fn next(&mut self, archive: &Archive) -> Option<Result<Row>> {
        if self.buf.is_empty() && !self.done {
            if let Err(e) = self.fill(archive) {
                self.done = true;
                return Some(Err(e));
            }
        }
        self.buf.pop_front().map(Ok)
    }

    fn fill(&mut self, archive: &Archive) -> Result<()> {
        let keys = self.key_columns();
        let nkeys = keys.split(',').count();
        let params: String = (1..=nkeys)
            .map(|i| format!("?{i}"))
            .collect::<Vec<_>>()
            .join(", ");
        let after = if self.cursor.is_some() {
            format!("({keys}) > ({params})")
        } else {
            "1".to_string()
        };
        let scope = if self.within.is_empty() {
            "1"
        } else {
            "path >= ?10 AND path < ?11"
        };
        let sql = format!(
            "SELECT {FILE_COLS}, {keys} FROM files WHERE {scope} AND {after} \
             ORDER BY {keys} LIMIT ?12"
        );
        let (lo, hi) = mpath::subtree_range(&self.within).unwrap_or_default();
        let cursor = self.cursor.clone();
        let (rows, next) = archive.with_index(|i| {
            let mut stmt = i.conn().prepare_cached(&sql).at(i.path())?;
            if let Some(c) = &cursor {
                for (n, v) in c.iter().enumerate() {
                    stmt.raw_bind_parameter(n + 1, v).at(i.path())?;
                }
            }
            if !self.within.is_empty() {
                stmt.raw_bind_parameter(10, &lo).at(i.path())?;
                stmt.raw_bind_parameter(11, &hi).at(i.path())?;
            }
            stmt.raw_bind_parameter(12, PAGE).at(i.path())?;
            let mut rows = stmt.raw_query();
            let mut out = Vec::new();
            let mut last = None;
            while let Some(row) = rows.next().at(i.path())? {
                let key: Vec<Key> = (0..nkeys)
                    .map(|k| row.get_ref(9 + k).map(owned))
                    .collect::<rusqlite::Result<_>>()
                    .at(i.path())?;
                last = Some(key);
                out.push(match decode_file(row) {
                    Ok(f) => Row::File(f),
                    Err(detail) => Row::Bad(Error::corrupt(i.path(), detail)),
                });
            }
            Ok((out, last))
        })?;
        self.done = (rows.len() as i64) < PAGE;
        if next.is_some() {
            self.cursor = next;
        }
        self.buf.extend(rows);
        Ok(())
    }
}

/// A column value kept as it was stored (text need not be valid UTF-8), to bind as
/// a scan key.
#[derive(Debug, Clone)]
enum Key {
    Null,
    Integer(i64),
    Real(f64),
    Text(Vec<u8>),
    Blob(Vec<u8>),
}

fn owned(v: ValueRef<'_>) -> Key {
    match v {
        ValueRef::Null => Key::Null,
        ValueRef::Integer(i) => Key::Integer(i),
        ValueRef::Real(f) => Key::Real(f),
        ValueRef::Text(t) => Key::Text(t.to_vec()),
        ValueRef::Blob(b) => Key::Blob(b.to_vec()),
    }
}

impl ToSql for Key {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self {
            Key::Null => ValueRef::Null,
            Key::Integer(i) => ValueRef::Integer(*i),
            Key::Real(f) => ValueRef::Real(*f),
            Key::Text(t) => ValueRef::Text(t),
            Key::Blob(b) => ValueRef::Blob(b),
        }))
    }
}

/// Paths stored in more than one `files` row. Only possible when the unique index on
/// `files(path)` is missing, so the (full-scan) search runs only then.
pub fn duplicate_paths(archive: &Archive) -> Result<HashSet<String>> {
    archive.with_index(|i| {
        let conn = i.conn();
        let mut unique = false;
        {
            let mut stmt = conn.prepare("PRAGMA index_list('files')").at(i.path())?;
            let list: Vec<(String, bool, bool)> = stmt
                .query_map([], |r| Ok((r.get(1)?, r.get(2)?, r.get(4)?)))
                .at(i.path())?
                .collect::<rusqlite::Result<_>>()
                .at(i.path())?;
            for (name, is_unique, partial) in list {
                if !is_unique || partial {
                    continue;
                }
                let mut info = conn
                    .prepare("SELECT name FROM pragma_index_info(?1)")
                    .at(i.path())?;
                let cols: Vec<Option<String>> = info
                    .query_map([&name], |r| r.get(0))
                    .at(i.path())?
                    .collect::<rusqlite::Result<_>>()
                    .at(i.path())?;
                if cols == [Some("path".to_string())] {
                    unique = true;
                }
            }
        }
        if unique {
            return Ok(HashSet::new());
        }
        let mut stmt = conn
            .prepare("SELECT path FROM files GROUP BY path HAVING count(*) > 1")
            .at(i.path())?;
        let dups = stmt
            .query_map([], |r| {
                Ok(match r.get_ref(0)? {
                    ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                    _ => String::new(),
                })
            })
            .at(i.path())?
            .collect::<rusqlite::Result<_>>()
            .at(i.path())?;
        Ok(dups)
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
