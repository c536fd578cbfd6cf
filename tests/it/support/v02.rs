//! Archives of schema 0.2, as Python barecat 0.2.5–0.2.7 wrote them (docs/FORMAT.md §5):
//! the 0.3 columns in `WITHOUT ROWID` tables keyed by `path`, three of the five
//! indexes, no `prevent_*` triggers, and `del_subdir`/`move_subdir` triggers that
//! also take the moved or deleted directory's `num_files` from its parent (the bug
//! that makes their statistics wrong).

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use rusqlite::{params, Connection};

/// The 0.2 tables, indexes, config rows and triggers.
pub const DDL: &str = r#"
CREATE TABLE files
(
    path     TEXT PRIMARY KEY NOT NULL,
    parent   TEXT GENERATED ALWAYS AS (rtrim(rtrim(path, replace(path, '/', '')), '/'))
             VIRTUAL NOT NULL REFERENCES dirs (path) ON DELETE RESTRICT,
    shard    INTEGER NOT NULL,
    offset   INTEGER NOT NULL,
    size     INTEGER DEFAULT 0,
    crc32c   INTEGER DEFAULT NULL,
    mode     INTEGER DEFAULT NULL,
    uid      INTEGER DEFAULT NULL,
    gid      INTEGER DEFAULT NULL,
    mtime_ns INTEGER DEFAULT NULL
) WITHOUT ROWID;

CREATE TABLE dirs
(
    path           TEXT PRIMARY KEY,
    parent         TEXT GENERATED ALWAYS AS (
        CASE WHEN path = '' THEN NULL
             ELSE rtrim(rtrim(path, replace(path, '/', '')), '/') END
        ) VIRTUAL REFERENCES dirs (path) ON DELETE RESTRICT,
    num_subdirs    INTEGER DEFAULT 0,
    num_files      INTEGER DEFAULT 0,
    num_files_tree INTEGER DEFAULT 0,
    size_tree      INTEGER DEFAULT 0,
    mode           INTEGER DEFAULT NULL,
    uid            INTEGER DEFAULT NULL,
    gid            INTEGER DEFAULT NULL,
    mtime_ns       INTEGER DEFAULT NULL
) WITHOUT ROWID;

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
       ('schema_version_minor', 2);

CREATE INDEX idx_files_parent ON files (parent);
CREATE INDEX idx_dirs_parent ON dirs (parent);
CREATE INDEX idx_files_shard_offset ON files (shard, offset);

CREATE TRIGGER add_file AFTER INSERT ON files
WHEN (SELECT value_int FROM config WHERE key = 'use_triggers') = 1
BEGIN
    INSERT INTO dirs (path, num_files, num_files_tree, size_tree, mtime_ns)
    VALUES (NEW.parent, 1, 1, NEW.size,
            CAST((julianday('now') - 2440587.5) * 86400.0 * 1e9 AS INTEGER))
    ON CONFLICT(path) DO UPDATE SET num_files = num_files + 1,
        num_files_tree = num_files_tree + 1, size_tree = size_tree + excluded.size_tree,
        mtime_ns = excluded.mtime_ns;
END;

CREATE TRIGGER del_file AFTER DELETE ON files
WHEN (SELECT value_int FROM config WHERE key = 'use_triggers') = 1
BEGIN
    UPDATE dirs SET num_files = num_files - 1, num_files_tree = num_files_tree - 1,
        size_tree = size_tree - OLD.size,
        mtime_ns = CAST((julianday('now') - 2440587.5) * 86400.0 * 1e9 AS INTEGER)
    WHERE path = OLD.parent;
END;

CREATE TRIGGER move_file AFTER UPDATE OF path ON files
WHEN NEW.parent != OLD.parent
    AND (SELECT value_int FROM config WHERE key = 'use_triggers') = 1
BEGIN
    UPDATE dirs SET num_files = num_files + 1, num_files_tree = num_files_tree + 1,
        size_tree = size_tree + NEW.size,
        mtime_ns = CAST((julianday('now') - 2440587.5) * 86400.0 * 1e9 AS INTEGER)
    WHERE path = NEW.parent;
    UPDATE dirs SET num_files = num_files - 1, num_files_tree = num_files_tree - 1,
        size_tree = size_tree - OLD.size,
        mtime_ns = CAST((julianday('now') - 2440587.5) * 86400.0 * 1e9 AS INTEGER)
    WHERE path = OLD.parent;
END;

CREATE TRIGGER resize_file AFTER UPDATE OF size ON files
WHEN NEW.parent == OLD.parent
    AND (SELECT value_int FROM config WHERE key = 'use_triggers') = 1
BEGIN
    UPDATE dirs SET size_tree = size_tree + NEW.size - OLD.size WHERE path = OLD.parent;
END;

CREATE TRIGGER add_subdir AFTER INSERT ON dirs
WHEN (SELECT value_int FROM config WHERE key = 'use_triggers') = 1
BEGIN
    INSERT INTO dirs (path, num_subdirs, size_tree, num_files_tree, mtime_ns)
    VALUES (NEW.parent, 1, NEW.size_tree, NEW.num_files_tree,
            CAST((julianday('now') - 2440587.5) * 86400.0 * 1e9 AS INTEGER))
    ON CONFLICT(path) DO UPDATE SET num_subdirs = num_subdirs + 1,
        size_tree = size_tree + excluded.size_tree,
        num_files_tree = num_files_tree + excluded.num_files_tree,
        mtime_ns = excluded.mtime_ns;
END;

CREATE TRIGGER del_subdir AFTER DELETE ON dirs
WHEN (SELECT value_int FROM config WHERE key = 'use_triggers') = 1
BEGIN
    UPDATE dirs SET num_subdirs = num_subdirs - 1, num_files = num_files - OLD.num_files,
        size_tree = size_tree - OLD.size_tree,
        num_files_tree = num_files_tree - OLD.num_files_tree,
        mtime_ns = CAST((julianday('now') - 2440587.5) * 86400.0 * 1e9 AS INTEGER)
    WHERE path = OLD.parent;
END;

CREATE TRIGGER move_subdir AFTER UPDATE OF path ON dirs
WHEN NEW.parent != OLD.parent
    AND (SELECT value_int FROM config WHERE key = 'use_triggers') = 1
BEGIN
    UPDATE dirs SET num_subdirs = num_subdirs - 1, num_files = num_files - OLD.num_files,
        size_tree = size_tree - OLD.size_tree,
        num_files_tree = num_files_tree - OLD.num_files_tree,
        mtime_ns = CAST((julianday('now') - 2440587.5) * 86400.0 * 1e9 AS INTEGER)
    WHERE path = OLD.parent;
    UPDATE dirs SET num_subdirs = num_subdirs + 1, num_files = num_files + NEW.num_files,
        size_tree = size_tree + NEW.size_tree,
        num_files_tree = num_files_tree + NEW.num_files_tree,
        mtime_ns = CAST((julianday('now') - 2440587.5) * 86400.0 * 1e9 AS INTEGER)
    WHERE path = NEW.parent;
END;

CREATE TRIGGER resize_dir AFTER UPDATE OF size_tree, num_files_tree ON dirs
WHEN NEW.parent = OLD.parent
    AND (NEW.size_tree != OLD.size_tree OR NEW.num_files_tree != OLD.num_files_tree)
    AND (SELECT value_int FROM config WHERE key = 'use_triggers') = 1
BEGIN
    UPDATE dirs SET size_tree = size_tree + (NEW.size_tree - OLD.size_tree),
        num_files_tree = num_files_tree + (NEW.num_files_tree - OLD.num_files_tree)
    WHERE path = OLD.parent;
END;
"#;

/// Write a 0.2 archive at `path` (index `path`, shard `path-shard-00000`, or the
/// legacy naming `path-sqlite-index` with `legacy`) holding `files` (path →
/// content, with CRC32C and metadata), then move the directory `from` to `to` the
/// way Python barecat 0.2 renames a directory, through its buggy trigger: the
/// parents' `num_files` go wrong. Returns the files after the move.
pub fn make(
    path: &Path,
    legacy: bool,
    files: &BTreeMap<String, Vec<u8>>,
    rename: Option<(&str, &str)>,
) -> BTreeMap<String, Vec<u8>> {
    let index = if legacy {
        path.with_file_name(format!(
            "{}-sqlite-index",
            path.file_name().unwrap().to_str().unwrap()
        ))
    } else {
        path.to_path_buf()
    };
    let c = Connection::open(&index).unwrap();
    c.execute_batch(DDL).unwrap();
    c.execute_batch("PRAGMA recursive_triggers = ON; PRAGMA foreign_keys = ON;")
        .unwrap();
    c.execute_batch("UPDATE config SET value_int = 0 WHERE key = 'use_triggers'")
        .unwrap();
    c.execute(
        "INSERT INTO dirs (path, mode, uid, gid, mtime_ns) VALUES ('', 16877, 1000, 1000, 1600000000000000000)",
        [],
    )
    .unwrap();
    c.execute_batch("UPDATE config SET value_int = 1 WHERE key = 'use_triggers'")
        .unwrap();
    let mut shard = Vec::new();
    c.execute_batch("BEGIN").unwrap();
    for (p, data) in files {
        let mut dir = String::new();
        for part in p.split('/').collect::<Vec<_>>().split_last().unwrap().1 {
            if !dir.is_empty() {
                dir.push('/');
            }
            dir.push_str(part);
            c.execute(
                "INSERT OR IGNORE INTO dirs (path, mode, uid, gid, mtime_ns) VALUES (?1, 16877, 1000, 1000, 1600000000000000001)",
                [&dir],
            )
            .unwrap();
        }
        c.execute(
            "INSERT INTO files (path, shard, offset, size, crc32c, mode, uid, gid, mtime_ns) \
             VALUES (?1, 0, ?2, ?3, ?4, 33188, 1000, 1000, 1600000000123456789)",
            params![
                p,
                shard.len() as i64,
                data.len() as i64,
                barecat::core::crc::crc32c(data)
            ],
        )
        .unwrap();
        shard.extend_from_slice(data);
    }
    c.execute_batch("COMMIT").unwrap();
    fs::write(format!("{}-shard-00000", path.display()), &shard).unwrap();
    let mut out = files.clone();
    if let Some((from, to)) = rename {
        // Python barecat 0.2's rename_dir: the row itself with triggers on (and
        // foreign keys off), its descendants with triggers off.
        c.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
        c.execute("UPDATE dirs SET path = ?2 WHERE path = ?1", [from, to])
            .unwrap();
        c.execute_batch("UPDATE config SET value_int = 0 WHERE key = 'use_triggers'")
            .unwrap();
        let n = from.len() as i64 + 1;
        for table in ["files", "dirs"] {
            c.execute(
                &format!("UPDATE {table} SET path = ?2 || substr(path, ?3) WHERE path GLOB ?1"),
                params![format!("{from}/*"), to, n],
            )
            .unwrap();
        }
        c.execute_batch("UPDATE config SET value_int = 1 WHERE key = 'use_triggers'")
            .unwrap();
        c.execute_batch("PRAGMA foreign_keys = ON").unwrap();
        out = files
            .iter()
            .map(|(k, v)| match k.strip_prefix(&format!("{from}/")) {
                Some(rest) => (format!("{to}/{rest}"), v.clone()),
                None => (k.clone(), v.clone()),
            })
            .collect();
    }
    out
}
