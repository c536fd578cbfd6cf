//! The SQL behind sidecars ([`crate::core::sidecar`]): the journal mode and page
//! size of an index, the `dbstat` selection of the pages a sidecar holds, and the
//! read transaction that keeps writers out while those pages are read. On a bare
//! connection, since a sidecar is also written for indexes being built (an
//! upgrade, a merge) before any [`Index`](super::Index) is open on them.

use rusqlite::{Connection, Statement};

/// The page selection of docs/FORMAT.md §9.2: every interior b-tree page of every
/// b-tree, and every page of the schema b-tree (page 1 is its root).
pub const SELECTION_SQL: &str = "SELECT pageno FROM dbstat \
     WHERE pagetype = 'internal' OR name IN ('sqlite_master', 'sqlite_schema') \
     ORDER BY pageno";

/// The journal mode of the main database (`delete`, `wal`, …).
pub fn journal_mode(conn: &Connection) -> rusqlite::Result<String> {
    conn.query_row("PRAGMA journal_mode", [], |r| r.get(0))
}

/// The page size of the main database.
pub fn page_size(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA page_size", [], |r| r.get(0))
}

/// [`SELECTION_SQL`], prepared (an error names `dbstat` when this SQLite has no
/// such table).
pub fn prepare_selection(conn: &Connection) -> rusqlite::Result<Statement<'_>> {
    conn.prepare(SELECTION_SQL)
}

/// Open a read transaction.
pub fn begin_read(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch("BEGIN")
}

/// End the read transaction.
pub fn end_read(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch("COMMIT")
}

/// Read the schema, which takes SQLite's shared lock inside a read transaction
/// (and rolls back a hot journal first).
pub fn read_schema(conn: &Connection) -> rusqlite::Result<()> {
    conn.query_row("SELECT count(*) FROM sqlite_schema", [], |_| Ok(()))
}
