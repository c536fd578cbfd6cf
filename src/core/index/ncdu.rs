//! Queries of the interactive programs (`barecat ncdu`, `barecat browse`,
//! `barecat shell`).
//!
//! The browsers show one directory at a time, sorted by size, file count or name,
//! and must open a directory of a ten-million-file archive at once: its children
//! are read a page at a time with the `parent` indexes (`idx_dirs_parent`,
//! `idx_files_parent`), each page continuing after the last row of the one before
//! (a keyset, never an OFFSET), and the sizes and counts come from the `dirs`
//! statistics, so no file below the directory is visited. The shell's `sql`
//! command runs a statement of the user's and hands back its rows as text.

use rusqlite::types::ValueRef;

use super::Index;
use crate::core::error::{Result, SqlContext};

/// What the children of a directory are sorted by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildSort {
    /// A directory's total size (`size_tree`), a file's size.
    Size,
    /// Files in the subtree (`num_files_tree`); 1 for a file.
    Count,
    /// The path (the name, within one directory).
    Name,
}

/// One child of a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Child {
    /// Full path in the archive.
    pub path: String,
    /// A directory (else a file).
    pub is_dir: bool,
    /// Total size of a directory's subtree, size of a file.
    pub size: i64,
    /// Files in a directory's subtree, 1 for a file.
    pub count: i64,
}

impl Child {
    /// The value the children are sorted by first (the path for [`ChildSort::Name`]).
    pub fn key(&self, sort: ChildSort) -> i64 {
        match sort {
            ChildSort::Size => self.size,
            ChildSort::Count => self.count,
            ChildSort::Name => 0,
        }
    }
}

/// Which children of one table a page takes, relative to a row of the order.
#[derive(Debug, Clone, Copy)]
pub enum Bound<'a> {
    /// No bound: from the first (or, backwards, the last) child on.
    Open,
    /// The children after (or, backwards, before) this one.
    After(&'a Child),
}

/// A page request: the sort, its direction, which way to read and how many rows.
#[derive(Debug, Clone, Copy)]
pub struct PageSpec<'a> {
    /// By size, file count or name.
    pub sort: ChildSort,
    /// Largest (or, by name, last) first.
    pub descending: bool,
    /// Read against the order (the page before `bound`), nearest row first.
    pub backwards: bool,
    /// Where the page starts.
    pub bound: Bound<'a>,
    /// The most rows to return.
    pub limit: usize,
}

impl Index {
    /// A page of the subdirectories (`dirs`) or files of `dir`, in the order of
    /// `spec` (ties broken by path, ascending), read with the parent index.
    pub fn children_page(&self, dir: &str, dirs: bool, spec: &PageSpec<'_>) -> Result<Vec<Child>> {
        let (table, size, count) = if dirs {
            (
                "dirs",
                "coalesce(size_tree, 0)",
                "coalesce(num_files_tree, 0)",
            )
        } else {
            ("files", "coalesce(size, 0)", "(0 + 1)")
        };
        let key = match spec.sort {
            ChildSort::Size => size,
            ChildSort::Count => count,
            ChildSort::Name => "",
        };
        // The direction rows are read in for the key and for the path.
        let key_up = spec.descending == spec.backwards;
        let path_up = match spec.sort {
            ChildSort::Name => key_up,
            _ => !spec.backwards,
        };
        let (kc, pc) = (
            if key_up { ">" } else { "<" },
            if path_up { ">" } else { "<" },
        );
        let order = |up: bool| if up { "ASC" } else { "DESC" };
        let (cond, order_by) = if spec.sort == ChildSort::Name {
            (format!("path {pc} ?2"), format!("path {}", order(path_up)))
        } else {
            (
                format!("({key} {kc} ?3 OR ({key} = ?3 AND path {pc} ?2))"),
                format!("{key} {}, path {}", order(key_up), order(path_up)),
            )
        };
        let sql = match spec.bound {
            Bound::Open => format!(
                "SELECT path, {size}, {count} FROM {table} WHERE parent = ?1 \
                 ORDER BY {order_by} LIMIT ?4"
            ),
            Bound::After(_) => format!(
                "SELECT path, {size}, {count} FROM {table} WHERE parent = ?1 AND {cond} \
                 ORDER BY {order_by} LIMIT ?4"
            ),
        };
        let (p, k) = match spec.bound {
            Bound::Open => ("", 0),
            Bound::After(c) => (c.path.as_str(), c.key(spec.sort)),
        };
        let mut stmt = self.conn.prepare_cached(&sql).at(&self.path)?;
        // ?4 is the highest parameter of every form: all four are bound.
        let mut rows = stmt
            .query(rusqlite::params![dir, p, k, spec.limit as i64])
            .at(&self.path)?;
        let mut out = Vec::with_capacity(spec.limit.min(4096));
        while let Some(r) = rows.next().at(&self.path)? {
            let path = match r.get_ref(0).at(&self.path)? {
                ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                _ => continue,
            };
            let int = |i: usize| -> Result<i64> {
                Ok(match r.get_ref(i).at(&self.path)? {
                    ValueRef::Integer(v) => v,
                    ValueRef::Real(v) => v as i64,
                    _ => 0,
                })
            };
            out.push(Child {
                path,
                is_dir: dirs,
                size: int(1)?,
                count: int(2)?,
            });
        }
        Ok(out)
    }

    /// How many children of `dir` in `dirs` or `files` come before `child` in the
    /// order (`descending` as in [`PageSpec`]): its position among them.
    pub fn children_before(
        &self,
        dir: &str,
        dirs: bool,
        sort: ChildSort,
        descending: bool,
        child: &Child,
    ) -> Result<u64> {
        let (table, size, count) = if dirs {
            (
                "dirs",
                "coalesce(size_tree, 0)",
                "coalesce(num_files_tree, 0)",
            )
        } else {
            ("files", "coalesce(size, 0)", "(0 + 1)")
        };
        let key = match sort {
            ChildSort::Size => size,
            ChildSort::Count => count,
            ChildSort::Name => "",
        };
        let kc = if descending { ">" } else { "<" };
        let cond = if sort == ChildSort::Name {
            // ?3 is bound all the same (rusqlite wants every parameter used).
            format!("path {kc} ?2 AND ?3 = ?3")
        } else {
            format!("({key} {kc} ?3 OR ({key} = ?3 AND path < ?2))")
        };
        let sql = format!("SELECT count(*) FROM {table} WHERE parent = ?1 AND {cond}");
        let n: i64 = self
            .conn
            .prepare_cached(&sql)
            .at(&self.path)?
            .query_row(rusqlite::params![dir, child.path, child.key(sort)], |r| {
                r.get(0)
            })
            .at(&self.path)?;
        Ok(n.max(0) as u64)
    }

    /// Up to `limit` children of `dir` whose name starts with `prefix` (directories
    /// first, each by path), for completing a path the user types.
    pub fn children_with_prefix(
        &self,
        dir: &str,
        prefix: &str,
        limit: usize,
    ) -> Result<Vec<(String, bool)>> {
        let start = if dir.is_empty() {
            prefix.to_string()
        } else {
            format!("{dir}/{prefix}")
        };
        let mut out = Vec::new();
        for (table, is_dir) in [("dirs", true), ("files", false)] {
            if out.len() >= limit {
                break;
            }
            // By path range when a prefix narrows it, else through the parent index.
            let sql = if prefix.is_empty() {
                format!("SELECT path FROM {table} WHERE parent = ?1 ORDER BY path LIMIT ?3")
            } else {
                format!(
                    "SELECT path FROM {table} WHERE path >= ?2 AND parent = ?1 \
                     AND substr(path, 1, length(?2)) = ?2 ORDER BY path LIMIT ?3"
                )
            };
            let mut stmt = self.conn.prepare_cached(&sql).at(&self.path)?;
            let mut rows = stmt
                .query(rusqlite::params![dir, start, (limit - out.len()) as i64])
                .at(&self.path)?;
            while let Some(r) = rows.next().at(&self.path)? {
                if let ValueRef::Text(t) = r.get_ref(0).at(&self.path)? {
                    out.push((String::from_utf8_lossy(t).into_owned(), is_dir));
                }
            }
        }
        Ok(out)
    }

    /// Run one SQL statement of the user's; returns the column names and the rows,
    /// each value as Python's `str()` shows it (`None` for NULL). On a read-only
    /// index a statement that writes fails.
    pub fn run_sql(&self, sql: &str) -> Result<(Vec<String>, Vec<Vec<String>>)> {
        let mut stmt = self.conn.prepare(sql).at(&self.path)?;
        let cols: Vec<String> = stmt.column_names().map(|c| c.to_string()).collect();
        let n = cols.len();
        let mut rows = stmt.query([]).at(&self.path)?;
        let mut out = Vec::new();
        while let Some(r) = rows.next().at(&self.path)? {
            let mut row = Vec::with_capacity(n);
            for i in 0..n {
                row.push(match r.get_ref(i).at(&self.path)? {
                    ValueRef::Null => "None".to_string(),
                    ValueRef::Integer(v) => v.to_string(),
                    ValueRef::Real(v) => python_float(v),
                    ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                    ValueRef::Blob(b) => python_bytes(b),
                });
            }
            out.push(row);
        }
        Ok((cols, out))
    }
}

/// A float as Python's `str()` writes it (`1.0`, `0.1`, `1e+20`).
fn python_float(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let a = v.abs();
    if a != 0.0 && !(1e-4..1e16).contains(&a) {
        // Python: shortest repr in exponent form, at least two exponent digits.
        let s = format!("{v:e}");
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let e: i32 = e.parse().unwrap_or(0);
        let sign = if e < 0 { '-' } else { '+' };
        return format!("{m}e{sign}{:02}", e.abs());
    }
    let s = format!("{v}");
    if s.contains('.') {
        s
    } else {
        format!("{s}.0")
    }
}

/// Bytes as Python's `str(bytes)` writes them: `b'...'` with escapes.
fn python_bytes(b: &[u8]) -> String {
    let quote = if b.contains(&b'\'') && !b.contains(&b'"') {
        '"'
    } else {
        '\''
    };
    let mut s = String::from("b");
    s.push(quote);
    for &c in b {
        match c {
            b'\\' => s.push_str("\\\\"),
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            b'\t' => s.push_str("\\t"),
            c if c as char == quote => {
                s.push('\\');
                s.push(quote);
            }
            0x20..=0x7e => s.push(c as char),
            c => s.push_str(&format!("\\x{c:02x}")),
        }
    }
    s.push(quote);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_and_bytes_print_as_python_does() {
        assert_eq!(python_float(1.0), "1.0");
        assert_eq!(python_float(0.5), "0.5");
        assert_eq!(python_float(1e20), "1e+20");
        assert_eq!(python_float(1.5e-7), "1.5e-07");
        assert_eq!(python_float(-2.0), "-2.0");
        assert_eq!(python_bytes(b"a\x00'"), "b\"a\\x00'\"");
        assert_eq!(python_bytes(b"ab\n"), "b'ab\\n'");
    }
}
