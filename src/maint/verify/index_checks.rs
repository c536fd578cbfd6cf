//! The checks that need only the index: SQLite's integrity check, the schema
//! objects Python barecat relies on, rows that break the format's invariants, and
//! the directory counters against recomputed ones.

use super::*;
use crate::core::index::schema::{INDEX_NAMES as INDEXES, TRIGGER_NAMES as TRIGGERS};

pub(super) fn count(i: &Index, table: Table, f: &mut Findings) -> u64 {
    let (name, r) = match table {
        Table::Files => ("files", i.count_files()),
        Table::Dirs => ("dirs", i.count_dirs()),
    };
    f.query(&format!("counting {name}"), r).unwrap_or(0)
}

/// The checks that only need the index.
pub(super) fn check_index(i: &Index, f: &mut Findings) {
    // SQLite's own consistency check, every message.
    match i.integrity_check() {
        Ok(lines) if lines == ["ok"] => {}
        Ok(lines) => {
            for l in lines {
                f.problem(
                    FindingKind::IntegrityCheck,
                    None,
                    format!("integrity check: {}", one_line(&l)),
                );
            }
        }
        Err(e) => f.problem(
            FindingKind::IntegrityCheck,
            None,
            format!("integrity check: {}", one_line(&e.to_string())),
        ),
    }

    // Schema objects Python barecat relies on.
    if let Some(names) = f.query("listing triggers", i.trigger_names()) {
        for t in TRIGGERS {
            if !names.iter().any(|n| n == t) {
                f.problem(
                    FindingKind::Schema,
                    None,
                    format!("trigger {t} is missing: directory statistics will go wrong on writes"),
                );
            }
        }
        for n in names.iter().filter(|n| !TRIGGERS.contains(&n.as_str())) {
            f.warn(
                FindingKind::UnknownTrigger,
                None,
                format!("trigger {n} is not part of the barecat schema"),
            );
        }
    }
    let indexes = f.query("listing indexes", i.index_names());
    let mut unique_path_index = true;
    if let Some(names) = indexes {
        for x in INDEXES {
            if !names.iter().any(|n| n == x) {
                unique_path_index &= x != "idx_files_path";
                f.problem(FindingKind::Schema, None, format!("index {x} is missing"));
            }
        }
    }
    match i.use_triggers() {
        Ok(true) => {}
        Ok(false) => f.problem(
            FindingKind::Schema,
            None,
            "config use_triggers is not 1: directory statistics are not maintained".into(),
        ),
        Err(e) => f.problem(FindingKind::Schema, None, one_line(&e.to_string())),
    }
    if let Err(e) = i.shard_size_limit() {
        f.problem(FindingKind::Schema, None, one_line(&e.to_string()));
    }

    // Every directory row decodes, and the root exists.
    check_dir_rows(i, f);

    if !unique_path_index {
        if let Some(dups) = f.query("looking for duplicate paths", i.duplicate_file_paths()) {
            for p in dups {
                f.problem(
                    FindingKind::DuplicatePath,
                    Some(&p),
                    format!("{p}: stored more than once in files"),
                );
            }
        }
    }

    // Paths that are a file and a directory at once.
    if let Some(both) = f.query("looking for paths in both tables", i.file_dir_clashes()) {
        for p in both {
            f.problem(
                FindingKind::FileAndDir,
                Some(&p),
                format!("{p:?}: is both a file and a directory"),
            );
        }
    }

    // Rows whose parent directory row is missing.
    check_foreign_keys(i, f);

    // Directory counters against recomputed ones.
    if let Some(mismatches) = f.query("recomputing directory statistics", i.stats_mismatches()) {
        for m in mismatches {
            f.problem(FindingKind::DirStats, Some(&m.path), m.to_string());
        }
    }
}

/// A dirs row that is wrong: its path if readable, and the decoding error (or
/// `Ok` for a path that is not normalized).
type BadDir = (Option<String>, std::result::Result<(), String>);

fn check_dir_rows(i: &Index, f: &mut Findings) {
    let r = (|| -> Result<(bool, Vec<BadDir>)> {
        let spec = ScanSpec::new(Table::Dirs, ScanOrder::Rowid);
        let mut root = false;
        let mut bad = Vec::new();
        let mut after = None;
        loop {
            let (_, key) = i.scan_rows(&spec, after.as_ref(), PAGE, &mut |row| {
                check_dir_row(row, &mut root, &mut bad);
                Ok(())
            })?;
            match key {
                Some(k) => after = Some(k),
                None => break,
            }
        }
        Ok((root, bad))
    })();
    report_dir_rows(r, f);
}

/// Note the dirs row `row` in `bad` if it is wrong; `root` when it is the root.
fn check_dir_row(row: &rusqlite::Row<'_>, root: &mut bool, bad: &mut Vec<BadDir>) {
    match index::decode_dir(row) {
        Ok(d) => {
            *root |= d.path.is_empty();
            if mpath::normalize(&d.path) != d.path || d.path.contains('\0') {
                bad.push((Some(d.path.clone()), Ok(())));
            }
        }
        Err(detail) => {
            let path = row.get::<_, String>(0).ok();
            bad.push((path, Err(detail)));
        }
    }
}

fn report_dir_rows(r: Result<(bool, Vec<BadDir>)>, f: &mut Findings) {
    if let Some((root, bad)) = f.query("reading dirs", r) {
        if !root {
            f.problem(
                FindingKind::BadRow,
                None,
                "dirs has no root row (path '')".into(),
            );
        }
        for (path, e) in bad {
            match e {
                Ok(()) => {
                    let p = path.unwrap_or_default();
                    f.problem(
                        FindingKind::BadPath,
                        Some(&p),
                        format!("directory {p:?}: {}", path_fault(&p)),
                    );
                }
                Err(detail) => f.problem(
                    FindingKind::BadRow,
                    path.as_deref(),
                    format!("dirs {detail}"),
                ),
            }
        }
    }
}

fn check_foreign_keys(i: &Index, f: &mut Findings) {
    let Some(rows) = f.query("PRAGMA foreign_key_check", i.orphans()) else {
        return;
    };
    for Orphan { table, rowid } in rows {
        match i.path_and_parent(&table, rowid) {
            Some((path, parent)) => {
                let what = if table == "files" {
                    "file"
                } else {
                    "directory"
                };
                let parent = parent.unwrap_or_default();
                f.problem(
                    FindingKind::ForeignKey,
                    Some(&path),
                    format!("{what} {path:?}: its parent directory {parent:?} has no dirs row"),
                );
            }
            None => f.problem(
                FindingKind::ForeignKey,
                None,
                format!("{table} row {rowid}: its parent directory has no dirs row"),
            ),
        }
    }
}
