//! Which pages a sidecar holds (docs/FORMAT.md §9.2), found without visiting every
//! page of the index.
//!
//! # Why
//!
//! The selection is every interior page of every b-tree and every page of the
//! schema b-tree. SQLite's `dbstat` answers it by reading every page of the index:
//! 90 ms at 1M files, paid by every writer when it finishes (a one-file change to a
//! large archive took 100 ms to close). Here each b-tree is walked down from its
//! root reading interior pages only: SQLite keeps all the leaves of a b-tree at one
//! depth, so once a tree's depth is known (down its first children) the children
//! of the level above the leaves are not read. At 1M files that is 300 pages
//! instead of 38,000. The schema b-tree, small, still comes from `dbstat`,
//! restricted to it.
//!
//! Anything unexpected (a page that is not the b-tree page its parent says, a child
//! number past the end of the file, a page reached twice, leaves at two depths)
//! gives `None`, and the caller falls back to the full `dbstat` selection, which is
//! also what `barecat-sidecar --check` compares with.

use std::collections::{HashMap, HashSet};

use rusqlite::Connection;

use super::raw::RawFile;

/// B-tree page types (the first byte of a page's header).
const INTERIOR_INDEX: u8 = 0x02;
const INTERIOR_TABLE: u8 = 0x05;
const LEAF_INDEX: u8 = 0x0a;
const LEAF_TABLE: u8 = 0x0d;

/// Deeper than any b-tree of an index that fits a file (SQLite's own bound).
const MAX_DEPTH: usize = 20;

/// The pages of the selection, sorted, with page 1; `None` when the walk met
/// something it does not expect. Runs inside the caller's read transaction.
/// The pages read on the way, by number: the interior pages the selection holds,
/// so that they need not be read again to be encoded.
pub(super) type Read = HashMap<u32, Vec<u8>>;

pub(super) fn walk(
    conn: &Connection,
    file: &RawFile<'_>,
    page_size: u32,
) -> rusqlite::Result<Option<(Vec<u32>, Read)>> {
    let page_count: i64 = conn.query_row("PRAGMA page_count", [], |r| r.get(0))?;
    let Ok(page_count) = u32::try_from(page_count) else {
        return Ok(None);
    };
    let mut out: Vec<u32> = vec![1];
    {
        let mut stmt = conn.prepare("SELECT pageno FROM dbstat WHERE name = 'sqlite_schema'")?;
        let rows = stmt.query_map([], |r| r.get::<_, i64>(0))?;
        for p in rows {
            match u32::try_from(p?) {
                Ok(p) => out.push(p),
                Err(_) => return Ok(None),
            }
        }
    }
    let mut roots: Vec<i64> = Vec::new();
    {
        let mut stmt = conn.prepare("SELECT rootpage FROM sqlite_schema WHERE rootpage > 1")?;
        for r in stmt.query_map([], |r| r.get::<_, Option<i64>>(0))? {
            roots.extend(r?);
        }
    }
    let mut walker = Walker {
        file,
        page_size,
        page_count,
        buf: vec![0; page_size as usize],
        seen: HashSet::new(),
        read: HashMap::new(),
    };
    for root in roots {
        let Ok(root) = u32::try_from(root) else {
            return Ok(None);
        };
        match walker.interior_pages(root) {
            Some(pages) => out.extend(pages),
            None => return Ok(None),
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(Some((out, walker.read)))
}

struct Walker<'a, 'c> {
    file: &'a RawFile<'c>,
    page_size: u32,
    page_count: u32,
    buf: Vec<u8>,
    /// Interior pages met so far, over all trees (a page in two trees, or twice
    /// in one, is a damaged index).
    seen: HashSet<u32>,
    /// The interior pages read, kept.
    read: Read,
}

enum Page {
    /// An interior page's children, the right-most last.
    Interior(Vec<u32>),
    Leaf,
}

impl Walker<'_, '_> {
    /// The interior pages of the b-tree rooted at `root`.
    fn interior_pages(&mut self, root: u32) -> Option<Vec<u32>> {
        // The depth of the leaves, down the first children.
        let mut depth = 0;
        let mut p = root;
        while let Page::Interior(children) = self.read(p)? {
            depth += 1;
            if depth > MAX_DEPTH {
                return None;
            }
            p = *children.first()?;
        }
        let mut out = Vec::new();
        let mut level = vec![root];
        // Levels 0 .. depth - 1 are interior; their children at the last of them are
        // the leaves, which are not read.
        for d in 0..depth {
            let mut next = Vec::new();
            for &p in &level {
                let Page::Interior(children) = self.read(p)? else {
                    return None;
                };
                if !self.seen.insert(p) {
                    return None;
                }
                out.push(p);
                if d + 1 < depth {
                    next.extend(children);
                }
            }
            level = next;
        }
        Some(out)
    }

    /// Read and parse page `p` (never page 1: the schema's).
    fn read(&mut self, p: u32) -> Option<Page> {
        if p < 2 || p > self.page_count {
            return None;
        }
        if !self.read.contains_key(&p) {
            let at = (u64::from(p) - 1) * u64::from(self.page_size);
            let got = self.file.read_at(&mut self.buf, at).ok()?;
            if got < self.buf.len() {
                return None;
            }
            match self.buf[0] {
                LEAF_INDEX | LEAF_TABLE => return Some(Page::Leaf),
                INTERIOR_INDEX | INTERIOR_TABLE => {}
                _ => return None,
            }
            self.read.insert(p, self.buf.clone());
        }
        let b = &self.read[&p];
        let u16_at = |i: usize| u16::from_be_bytes([b[i], b[i + 1]]) as usize;
        let u32_at = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let cells = u16_at(3);
        let array_end = 12 + 2 * cells;
        if array_end > b.len() {
            return None;
        }
        let mut children = Vec::with_capacity(cells + 1);
        for k in 0..cells {
            let cell = u16_at(12 + 2 * k);
            if cell < array_end || cell + 4 > b.len() {
                return None;
            }
            children.push(u32_at(cell));
        }
        children.push(u32_at(8));
        Some(Page::Interior(children))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::index::pages::SELECTION_SQL;

    fn dbstat_selection(conn: &Connection) -> Vec<u32> {
        let mut stmt = conn.prepare(SELECTION_SQL).unwrap();
        let mut out: Vec<u32> = vec![1];
        out.extend(
            stmt.query_map([], |r| r.get::<_, u32>(0))
                .unwrap()
                .map(Result::unwrap),
        );
        out.sort_unstable();
        out.dedup();
        out
    }

    fn walked(conn: &Connection) -> Option<Vec<u32>> {
        conn.execute_batch("BEGIN").unwrap();
        let file = RawFile::of(conn).unwrap();
        let page_size: u32 = conn
            .query_row("PRAGMA page_size", [], |r| r.get(0))
            .unwrap();
        let out = walk(conn, &file, page_size).unwrap();
        conn.execute_batch("COMMIT").unwrap();
        out.map(|(pages, _)| pages)
    }

    /// Tables and indexes three and more levels deep, keys that spill into
    /// overflow pages, a table without row ids, free pages after deletions, and
    /// a tree that is a single leaf: the walk finds exactly `dbstat`'s pages.
    #[test]
    fn the_walk_selects_what_dbstat_selects() {
        let dir = tempfile::tempdir().unwrap();
        let conn = Connection::open(dir.path().join("t.db")).unwrap();
        conn.execute_batch(
            "CREATE TABLE t (path TEXT NOT NULL, n INTEGER);
             CREATE UNIQUE INDEX t_path ON t (path);
             CREATE INDEX t_n ON t (n);
             CREATE TABLE w (k TEXT PRIMARY KEY, v BLOB) WITHOUT ROWID;
             CREATE TABLE tiny (x);
             INSERT INTO tiny VALUES (1);",
        )
        .unwrap();
        conn.execute_batch("BEGIN").unwrap();
        for i in 0..40_000 {
            // One key in 50 longer than an index cell holds on a 4 KiB page.
            let long = if i % 50 == 0 {
                "x".repeat(1500)
            } else {
                String::new()
            };
            conn.execute(
                "INSERT INTO t VALUES (?1, ?2)",
                rusqlite::params![format!("d{:03}/f{i:08}{long}", i % 997), i],
            )
            .unwrap();
            if i % 4 == 0 {
                conn.execute(
                    "INSERT INTO w VALUES (?1, zeroblob(100))",
                    [format!("k{i:08}{long}")],
                )
                .unwrap();
            }
        }
        conn.execute_batch("COMMIT; DELETE FROM t WHERE n % 3 = 0;")
            .unwrap();
        let want = dbstat_selection(&conn);
        // Some tree has interior pages two levels below its root.
        let deepest: i64 = conn
            .query_row(
                "SELECT max(length(path) - length(replace(path, '/', ''))) FROM dbstat \
                 WHERE pagetype = 'internal'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert!(deepest >= 3 && want.len() > 30, "{deepest} {}", want.len());
        assert_eq!(walked(&conn), Some(want));
    }

    /// A page that is not what its parent says makes the walk give up (the
    /// caller then asks `dbstat`).
    #[test]
    fn a_damaged_tree_gives_no_walk() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE t (v BLOB); BEGIN;")
            .unwrap();
        for _ in 0..2000 {
            conn.execute("INSERT INTO t VALUES (zeroblob(200))", [])
                .unwrap();
        }
        conn.execute_batch("COMMIT").unwrap();
        let root: u32 = conn
            .query_row(
                "SELECT rootpage FROM sqlite_schema WHERE name = 't'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert!(walked(&conn).is_some());
        drop(conn);
        // The root's first child: its type byte set to no b-tree type.
        let mut bytes = std::fs::read(&path).unwrap();
        let at = (root as usize - 1) * 4096;
        let cell = u16::from_be_bytes([bytes[at + 12], bytes[at + 13]]) as usize;
        let child = u32::from_be_bytes(bytes[at + cell..at + cell + 4].try_into().unwrap());
        bytes[(child as usize - 1) * 4096] = 0x42;
        std::fs::write(&path, bytes).unwrap();
        let conn = Connection::open(&path).unwrap();
        assert_eq!(walked(&conn), None);
    }
}
