//! The index schema, version 0.3: its DDL, its triggers, and reading an index's
//! schema version and shape.
//!
//! The table and index DDL is the file format and is reproduced exactly. The ten
//! triggers carry the names and the semantics Python barecat relies on, so that it
//! can keep adding, deleting and moving entries in an archive we wrote and its
//! directory statistics stay right.

use rusqlite::{Connection, OptionalExtension};

/// Highest schema version this implementation reads and writes.
pub const MAJOR: i64 = 0;
/// Minor version written into new archives.
pub const MINOR: i64 = 3;

/// `shard_size_limit` meaning "unlimited" (i64::MAX), written as a literal because
/// the bundled SQLite has no `power()`.
pub const UNLIMITED: i64 = i64::MAX;

/// Tables and the four config rows.
pub const TABLES: &str = r#"
CREATE TABLE dirs
(
    path           TEXT NOT NULL,
    parent         TEXT GENERATED ALWAYS AS (
        CASE
            WHEN path = '' THEN NULL
            ELSE rtrim(rtrim(path, replace(path, '/', '')), '/')
            END
        ) VIRTUAL REFERENCES dirs (path) ON DELETE RESTRICT,

    num_subdirs    INTEGER DEFAULT 0, -- These are maintained by triggers
    num_files      INTEGER DEFAULT 0,
    num_files_tree INTEGER DEFAULT 0,
    size_tree      INTEGER DEFAULT 0,

    mode           INTEGER DEFAULT NULL,
    uid            INTEGER DEFAULT NULL,
    gid            INTEGER DEFAULT NULL,
    mtime_ns       INTEGER DEFAULT NULL
);

CREATE TABLE files
(
    path     TEXT NOT NULL,
    parent   TEXT GENERATED ALWAYS AS ( -- Parent directory is computed automatically
        rtrim(rtrim(path, replace(path, '/', '')), '/')
        ) VIRTUAL             NOT NULL REFERENCES dirs (path) ON DELETE RESTRICT,

    shard    INTEGER          NOT NULL,
    offset   INTEGER          NOT NULL,
    size     INTEGER DEFAULT 0,
    crc32c   INTEGER DEFAULT NULL,

    mode     INTEGER DEFAULT NULL,
    uid      INTEGER DEFAULT NULL,
    gid      INTEGER DEFAULT NULL,
    mtime_ns INTEGER DEFAULT NULL
);

CREATE TABLE config
(
    key        TEXT PRIMARY KEY,
    value_text TEXT    DEFAULT NULL,
    value_int  INTEGER DEFAULT NULL
) WITHOUT ROWID;

INSERT INTO config (key, value_int)
VALUES ('use_triggers', 1),
       ('shard_size_limit', 9223372036854775807),
       ('schema_version_major', 0),
       ('schema_version_minor', 3);
"#;

/// The five indexes, with the names Python refers to.
pub const INDEXES: &str = r#"
CREATE UNIQUE INDEX idx_files_path ON files (path);
CREATE UNIQUE INDEX idx_dirs_path ON dirs (path);
CREATE INDEX idx_files_parent ON files (parent);
CREATE INDEX idx_dirs_parent ON dirs (parent);
CREATE INDEX idx_files_shard_offset ON files (shard, offset);
"#;

/// The ten triggers. Each one is active only while `config.use_triggers` is 1.
/// "now" is wall-clock nanoseconds since the epoch, as Python's triggers compute it.
pub const TRIGGERS: &str = r#"
-- A new file counts in its parent, which is created when missing.
CREATE TRIGGER add_file AFTER INSERT ON files
WHEN (SELECT value_int FROM config WHERE key = 'use_triggers') = 1
BEGIN
    INSERT INTO dirs (path, num_files, num_files_tree, size_tree, mtime_ns)
    VALUES (NEW.parent, 1, 1, NEW.size,
            CAST((julianday('now') - 2440587.5) * 86400.0 * 1e9 AS INTEGER))
    ON CONFLICT (path) DO UPDATE SET
        num_files = num_files + 1,
        num_files_tree = num_files_tree + 1,
        size_tree = size_tree + excluded.size_tree,
        mtime_ns = excluded.mtime_ns;
END;

-- A deleted file no longer counts in its parent.
CREATE TRIGGER del_file AFTER DELETE ON files
WHEN (SELECT value_int FROM config WHERE key = 'use_triggers') = 1
BEGIN
    UPDATE dirs SET
        num_files = num_files - 1,
        num_files_tree = num_files_tree - 1,
        size_tree = size_tree - OLD.size,
        mtime_ns = CAST((julianday('now') - 2440587.5) * 86400.0 * 1e9 AS INTEGER)
    WHERE path = OLD.parent;
END;

-- A file moved to another directory counts there instead.
CREATE TRIGGER move_file AFTER UPDATE OF path ON files
WHEN NEW.parent != OLD.parent
    AND (SELECT value_int FROM config WHERE key = 'use_triggers') = 1
BEGIN
    UPDATE dirs SET
        num_files = num_files + 1,
        num_files_tree = num_files_tree + 1,
        size_tree = size_tree + NEW.size,
        mtime_ns = CAST((julianday('now') - 2440587.5) * 86400.0 * 1e9 AS INTEGER)
    WHERE path = NEW.parent;
    UPDATE dirs SET
        num_files = num_files - 1,
        num_files_tree = num_files_tree - 1,
        size_tree = size_tree - OLD.size,
        mtime_ns = CAST((julianday('now') - 2440587.5) * 86400.0 * 1e9 AS INTEGER)
    WHERE path = OLD.parent;
END;

-- A file whose size changes in place changes its parent's total.
CREATE TRIGGER resize_file AFTER UPDATE OF size ON files
WHEN NEW.parent == OLD.parent
    AND (SELECT value_int FROM config WHERE key = 'use_triggers') = 1
BEGIN
    UPDATE dirs SET size_tree = size_tree + NEW.size - OLD.size
    WHERE path = OLD.parent;
END;

-- A new directory counts in its parent, which is created when missing; this
-- chains upwards through recursive triggers.
CREATE TRIGGER add_subdir AFTER INSERT ON dirs
WHEN (SELECT value_int FROM config WHERE key = 'use_triggers') = 1
BEGIN
    INSERT INTO dirs (path, num_subdirs, size_tree, num_files_tree, mtime_ns)
    VALUES (NEW.parent, 1, NEW.size_tree, NEW.num_files_tree,
            CAST((julianday('now') - 2440587.5) * 86400.0 * 1e9 AS INTEGER))
    ON CONFLICT (path) DO UPDATE SET
        num_subdirs = num_subdirs + 1,
        size_tree = size_tree + excluded.size_tree,
        num_files_tree = num_files_tree + excluded.num_files_tree,
        mtime_ns = excluded.mtime_ns;
END;

-- A deleted directory takes its totals out of its parent.
CREATE TRIGGER del_subdir AFTER DELETE ON dirs
WHEN (SELECT value_int FROM config WHERE key = 'use_triggers') = 1
BEGIN
    UPDATE dirs SET
        num_subdirs = num_subdirs - 1,
        size_tree = size_tree - OLD.size_tree,
        num_files_tree = num_files_tree - OLD.num_files_tree,
        mtime_ns = CAST((julianday('now') - 2440587.5) * 86400.0 * 1e9 AS INTEGER)
    WHERE path = OLD.parent;
END;

-- A moved directory takes its totals from the old parent to the new one.
CREATE TRIGGER move_subdir AFTER UPDATE OF path ON dirs
WHEN NEW.parent != OLD.parent
    AND (SELECT value_int FROM config WHERE key = 'use_triggers') = 1
BEGIN
    UPDATE dirs SET
        num_subdirs = num_subdirs - 1,
        size_tree = size_tree - OLD.size_tree,
        num_files_tree = num_files_tree - OLD.num_files_tree,
        mtime_ns = CAST((julianday('now') - 2440587.5) * 86400.0 * 1e9 AS INTEGER)
    WHERE path = OLD.parent;
    UPDATE dirs SET
        num_subdirs = num_subdirs + 1,
        size_tree = size_tree + NEW.size_tree,
        num_files_tree = num_files_tree + NEW.num_files_tree,
        mtime_ns = CAST((julianday('now') - 2440587.5) * 86400.0 * 1e9 AS INTEGER)
    WHERE path = NEW.parent;
END;

-- A change of a directory's totals propagates to its parent, and so on upwards.
CREATE TRIGGER resize_dir AFTER UPDATE OF size_tree, num_files_tree ON dirs
WHEN NEW.parent = OLD.parent
    AND (NEW.size_tree != OLD.size_tree OR NEW.num_files_tree != OLD.num_files_tree)
    AND (SELECT value_int FROM config WHERE key = 'use_triggers') = 1
BEGIN
    UPDATE dirs SET
        size_tree = size_tree + (NEW.size_tree - OLD.size_tree),
        num_files_tree = num_files_tree + (NEW.num_files_tree - OLD.num_files_tree)
    WHERE path = OLD.parent;
END;

-- A file may not take the path of a directory.
CREATE TRIGGER prevent_file_as_dir BEFORE INSERT ON files
WHEN (SELECT value_int FROM config WHERE key = 'use_triggers') = 1
BEGIN
    SELECT RAISE(ABORT, 'Path already exists as directory')
    WHERE EXISTS (SELECT 1 FROM dirs WHERE path = NEW.path);
END;

-- A directory may not take the path of a file.
CREATE TRIGGER prevent_dir_as_file BEFORE INSERT ON dirs
WHEN (SELECT value_int FROM config WHERE key = 'use_triggers') = 1
BEGIN
    SELECT RAISE(ABORT, 'Path already exists as file')
    WHERE EXISTS (SELECT 1 FROM files WHERE path = NEW.path);
END;
"#;

/// Names of the five indexes.
pub const INDEX_NAMES: [&str; 5] = [
    "idx_files_path",
    "idx_dirs_path",
    "idx_files_parent",
    "idx_dirs_parent",
    "idx_files_shard_offset",
];

/// Names of the ten triggers.
pub const TRIGGER_NAMES: [&str; 10] = [
    "add_file",
    "del_file",
    "move_file",
    "resize_file",
    "add_subdir",
    "del_subdir",
    "move_subdir",
    "resize_dir",
    "prevent_file_as_dir",
    "prevent_dir_as_file",
];

/// Schema version of an index, as read from its config table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Version {
    /// The major version (0).
    pub major: i64,
    /// The minor version (3 for the current schema, 2 for the legacy one).
    pub minor: i64,
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// Read the schema version the way Python does: no config table, or no major row,
/// means -1.0; a missing minor row means 0.
pub fn read_version(conn: &Connection) -> rusqlite::Result<Version> {
    let has_config: bool = conn
        .query_row(
            "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'config'",
            [],
            |_| Ok(true),
        )
        .optional()?
        .unwrap_or(false);
    if !has_config {
        return Ok(Version {
            major: -1,
            minor: 0,
        });
    }
    let get = |key: &str| -> rusqlite::Result<Option<i64>> {
        conn.query_row("SELECT value_int FROM config WHERE key = ?1", [key], |r| {
            r.get::<_, Option<i64>>(0)
        })
        .optional()
        .map(Option::flatten)
    };
    match get("schema_version_major")? {
        None => Ok(Version {
            major: -1,
            minor: 0,
        }),
        Some(major) => Ok(Version {
            major,
            minor: get("schema_version_minor")?.unwrap_or(0),
        }),
    }
}

/// The type (`table`, `view`, `index`, `trigger`) of the schema object `name`,
/// if there is one.
pub fn object_type(conn: &Connection, name: &str) -> rusqlite::Result<Option<String>> {
    conn.query_row(
        "SELECT type FROM sqlite_schema WHERE name = ?1",
        [name],
        |r| r.get(0),
    )
    .optional()
}

/// The columns of `table` (generated ones included).
pub fn table_columns(conn: &Connection, table: &str) -> rusqlite::Result<Vec<String>> {
    let mut st = conn.prepare("SELECT name FROM pragma_table_xinfo(?1)")?;
    let cols = st.query_map([table], |r| r.get(0))?.collect();
    cols
}

/// Create the schema in an empty database and insert the root directory with
/// triggers off (with them on, `add_subdir` would try to insert the root's parent).
/// Run it inside a transaction: the flag is never seen at 0 from outside.
pub fn create(conn: &Connection, uid: u32, gid: u32, now_ns: i64) -> rusqlite::Result<()> {
    conn.execute_batch(TABLES)?;
    conn.execute_batch(INDEXES)?;
    conn.execute_batch(TRIGGERS)?;
    conn.execute_batch("UPDATE config SET value_int = 0 WHERE key = 'use_triggers'")?;
    conn.execute(
        "INSERT INTO dirs (path, uid, gid, mtime_ns) VALUES ('', ?1, ?2, ?3)",
        rusqlite::params![uid, gid, now_ns],
    )?;
    conn.execute_batch("UPDATE config SET value_int = 1 WHERE key = 'use_triggers'")?;
    Ok(())
}
