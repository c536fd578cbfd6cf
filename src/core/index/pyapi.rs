//! Queries that only Python barecat's `Index` API asks (the binding's `bc.index`):
//! SQLite `GLOB` filters over whole paths and the last file by address.

use super::{Index, DIR_COLS, FILE_COLS};
use crate::core::entry::{Entry, FileInfo};
use crate::core::error::Result;

/// The `WHERE` condition of `rules` (sign, SQLite `GLOB` pattern), joined as Python
/// barecat joins them: the first rule as it is, then `OR path GLOB p` for each
/// further include and `AND path NOT GLOB p` for each further exclude, with SQL's
/// precedence (`AND` before `OR`). Patterns are bound as parameters `?1`, `?2`, ...
fn rule_condition(rules: &[(bool, String)]) -> String {
    let mut cond = String::new();
    for (i, (include, _)) in rules.iter().enumerate() {
        let n = i + 1;
        cond.push_str(match (i, include) {
            (0, true) => "path GLOB ?",
            (0, false) => "path NOT GLOB ?",
            (_, true) => " OR path GLOB ?",
            (_, false) => " AND path NOT GLOB ?",
        });
        cond.push_str(&n.to_string());
    }
    cond
}

impl Index {
    /// Files, then directories (unless `only_files`), whose path passes `rules`
    /// (see [`rule_condition`]; `*` crosses `/` in a `GLOB` and the root `''` can
    /// match), each table in row order. No rule matches nothing.
    pub fn raw_glob(&self, rules: &[(bool, String)], only_files: bool) -> Result<Vec<Entry>> {
        let mut out = Vec::new();
        if rules.is_empty() {
            return Ok(out);
        }
        let cond = rule_condition(rules);
        let params = rusqlite::params_from_iter(rules.iter().map(|(_, p)| p.as_str()));
        let sql = format!("SELECT {FILE_COLS} FROM files WHERE {cond}");
        out.extend(self.query_files(&sql, params)?.into_iter().map(Entry::File));
        if !only_files {
            let params = rusqlite::params_from_iter(rules.iter().map(|(_, p)| p.as_str()));
            let sql = format!("SELECT {DIR_COLS} FROM dirs WHERE {cond}");
            out.extend(self.query_dirs(&sql, params)?.into_iter().map(Entry::Dir));
        }
        Ok(out)
    }

    /// The file with the highest offset in the highest-numbered shard, if any.
    pub fn last_file(&self) -> Result<Option<FileInfo>> {
        Ok(self
            .query_files(
                &format!("SELECT {FILE_COLS} FROM files ORDER BY shard DESC, offset DESC LIMIT 1"),
                [],
            )?
            .pop())
    }
}
