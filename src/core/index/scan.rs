//! Paged scans of the `files` and `dirs` tables: the one mechanism behind every walk
//! over the index (listings, globs, `find`, `tree`, the ncdu export, file
//! iteration, the mount's directory listings, the Python module's pages,
//! verification's and defragmentation's walks in address order).
//!
//! A scan is a table, a key order and a set of conditions. It is read a page at a
//! time: each page is one query that seeks to just after the last row of the
//! previous page (`(path, rowid) > (?, ?)`, `rowid > ?` or `(shard, offset, rowid) >
//! (?, ?, ?)`) and stops after `limit` rows, so that
//!
//! * a walk costs a number of row visits proportional to the rows it yields (the
//!   key condition is a real seek, never `? IS NULL OR …`, which SQLite cannot use
//!   to seek and which makes every page scan from the start);
//! * memory is one page, however large the archive;
//! * no read transaction is held between pages, so writers are not kept waiting by
//!   a long listing (each page sees the last committed state).
//!
//! Keys are kept as the values stored, so a scan steps over rows that do not decode
//! (each such row is an error item, and the scan goes on). A scan may also run
//! backwards (from the end of its order), start at a key rather than after it, and
//! read the raw rows ([`Index::scan_rows`]) for callers that judge them themselves.

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::ToSql;

use super::{prefix_upper_bound, Index, DIR_COLS, FILE_COLS};
use crate::core::entry::{DirInfo, Entry, FileInfo, Meta};
use crate::core::error::{Error, Result, SqlContext};

/// The table a scan reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    /// The `files` table.
    Files,
    /// The `dirs` table.
    Dirs,
}

/// The order a scan yields rows in, which is also the key it pages on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanOrder {
    /// By path (byte order), then row id.
    Path,
    /// By row id: insertion order, and the order of SQLite's plain table scans.
    Rowid,
    /// By shard, offset, row id (files only): the order of the bytes in the shards.
    Address,
}

/// A comparison of [`Cond::Size`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    /// `<`
    Less,
    /// `=`
    Equal,
    /// `>`
    Greater,
}

/// The columns a scan reads, before the key columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Columns {
    /// Every column of a [`FileInfo`] or a [`DirInfo`], in decoding order.
    Entry,
    /// The path only: the other fields of the entries yielded are zero or NULL.
    Path,
    /// `path, shard, offset, size` (files only): a file's place, for walks over
    /// the shards' bytes that judge the raw rows ([`Index::scan_rows`]);
    /// [`Index::scan_page`] yields their paths only.
    Extent,
}

/// One condition of a scan; a scan yields the rows that meet all of its conditions.
/// Paths are normalized archive paths (`""` is the root).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cond {
    /// The path is the directory or lies below it (everything, for the root).
    Subtree(String),
    /// The path lies strictly below the directory.
    Below(String),
    /// The `parent` column is the directory: its children through the parent
    /// index, which hands them out in row-id order.
    Parent(String),
    /// Directly in the directory, found from the path alone: a range of the path
    /// index that also passes over the deeper rows of the subtree. The cheaper way
    /// to list a huge directory in path order.
    ChildOf(String),
    /// The path starts with these bytes.
    Prefix(Vec<u8>),
    /// The path matches at least one of these SQLite GLOB patterns.
    Glob(Vec<String>),
    /// The path matches none of these SQLite GLOB patterns.
    NotGlob(Vec<String>),
    /// `size` (files) or `size_tree` (dirs) compared with a number (NULL never
    /// compares).
    Size(Cmp, i64),
    /// At most this many path components (the root has 0).
    MaxDepth(i64),
    /// Not the root directory.
    NotRoot,
    /// `shard` and `offset` are numbers (files only; the rows an address order can
    /// place).
    NumericAddress,
    /// `shard` or `offset` is not a number (NULL, text, a blob).
    NotNumericAddress,
}

/// What to scan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanSpec {
    /// The table read.
    pub table: Table,
    /// The order rows come in (and the key pages continue from).
    pub order: ScanOrder,
    /// The conditions every row yielded meets.
    pub conds: Vec<Cond>,
    /// In row-id or address order: let the path conditions seek, and have each page
    /// sorted. Worth it for a small range of a large table (a page then costs the
    /// range, not the table); quadratic for a large range.
    pub sort_range: bool,
    /// The columns read. [`Columns::Path`] is much cheaper for listings that print
    /// names only (and in path order a range of the path index is then read
    /// without touching the table).
    pub columns: Columns,
    /// From the end of the order backwards.
    pub reverse: bool,
}

impl ScanSpec {
    /// A scan of every row of `table` in `order`, reading every column.
    pub fn new(table: Table, order: ScanOrder) -> ScanSpec {
        ScanSpec {
            table,
            order,
            conds: Vec::new(),
            sort_range: false,
            columns: Columns::Entry,
            reverse: false,
        }
    }

    /// Read the path only (on), or every column (off): see [`ScanSpec::columns`].
    pub fn paths_only(mut self, on: bool) -> ScanSpec {
        self.columns = if on { Columns::Path } else { Columns::Entry };
        self
    }

    /// Set [`ScanSpec::columns`].
    pub fn columns(mut self, columns: Columns) -> ScanSpec {
        self.columns = columns;
        self
    }

    /// Set [`ScanSpec::reverse`].
    pub fn reversed(mut self, on: bool) -> ScanSpec {
        self.reverse = on;
        self
    }

    /// The index of the first key column in a row of this scan.
    fn first_key(&self) -> usize {
        match (self.table, self.columns) {
            (_, Columns::Path) => 1,
            (_, Columns::Extent) => 4,
            (Table::Files, Columns::Entry) => FILE_COLS.split(',').count(),
            (Table::Dirs, Columns::Entry) => DIR_COLS.split(',').count(),
        }
    }

    /// The row id of a row of this scan (one of its key columns).
    pub fn rowid_of(&self, row: &rusqlite::Row<'_>) -> rusqlite::Result<i64> {
        row.get(self.first_key() + self.key_columns().len() - 1)
    }

    /// Set [`ScanSpec::sort_range`].
    pub fn sorting_range(mut self, on: bool) -> ScanSpec {
        self.sort_range = on;
        self
    }

    /// Add a condition.
    pub fn with(mut self, cond: Cond) -> ScanSpec {
        self.conds.push(cond);
        self
    }

    fn key_columns(&self) -> &'static [&'static str] {
        match self.order {
            ScanOrder::Path => &["path", "rowid"],
            ScanOrder::Rowid => &["rowid"],
            ScanOrder::Address => &["shard", "offset", "rowid"],
        }
    }

    /// The SQL of a page and its parameters (the key's come last, then the limit).
    ///
    /// What SQLite may seek on is chosen here, not left to the planner, because with
    /// two lower bounds on `path` (a condition's and the key's) it may seek on the
    /// condition's and so start every page from the same place:
    ///
    /// * in path order, a page after the first seeks on its key only: the lower
    ///   bounds of the conditions (and the ranges SQLite derives from GLOB patterns)
    ///   are written `+path …`, which only filters; upper bounds still end the range;
    /// * in row-id and address order, no condition on `path` seeks: the rows come
    ///   from the table (or the parent or shard index) in key order, filtered.
    fn sql(&self, after: Option<&ScanKey>) -> (String, Vec<Bind>) {
        let mut binds = Vec::new();
        let mut conds: Vec<String> = Vec::new();
        let bind = |v: Bind, binds: &mut Vec<Bind>| {
            binds.push(v);
            format!("?{}", binds.len())
        };
        let text = |s: &str| Bind::Text(s.as_bytes().to_vec());
        let path_order = self.order == ScanOrder::Path;
        // The column as written in lower bounds (and GLOB), and in upper bounds.
        let lo_col = if (path_order && after.is_none()) || (!path_order && self.sort_range) {
            "path"
        } else {
            "+path"
        };
        let hi_col = if path_order || self.sort_range {
            "path"
        } else {
            "+path"
        };
        for c in &self.conds {
            let sql = match c {
                Cond::Subtree(d) if d.is_empty() => continue,
                Cond::Subtree(d) => {
                    // [d, d0) holds d, everything below it and names like "d.x" (which
                    // sort before "d/"): the range seeks, the rest filters.
                    let a = bind(text(d), &mut binds);
                    let b = bind(text(&format!("{d}0")), &mut binds);
                    let c = bind(text(&format!("{d}/")), &mut binds);
                    format!("{lo_col} >= {a} AND {hi_col} < {b} AND (+path = {a} OR +path >= {c})")
                }
                Cond::Below(d) if d.is_empty() => format!("{lo_col} > ''"),
                Cond::Below(d) => {
                    let a = bind(text(&format!("{d}/")), &mut binds);
                    let b = bind(text(&format!("{d}0")), &mut binds);
                    format!("{lo_col} >= {a} AND {hi_col} < {b}")
                }
                Cond::Parent(d) => format!("parent = {}", bind(text(d), &mut binds)),
                Cond::ChildOf(d) if d.is_empty() => {
                    format!("{lo_col} > '' AND instr(path, '/') = 0")
                }
                Cond::ChildOf(d) => {
                    let a = bind(text(&format!("{d}/")), &mut binds);
                    let b = bind(text(&format!("{d}0")), &mut binds);
                    // substr counts characters; the name starts after "d/".
                    let from = bind(Bind::Int(d.chars().count() as i64 + 2), &mut binds);
                    format!(
                        "{lo_col} >= {a} AND {hi_col} < {b} \
                         AND instr(substr(path, {from}), '/') = 0"
                    )
                }
                Cond::Prefix(p) if p.is_empty() => continue,
                Cond::Prefix(p) => {
                    let a = bind(Bind::Text(p.clone()), &mut binds);
                    match prefix_upper_bound(p) {
                        Some(hi) => {
                            let b = bind(Bind::Text(hi), &mut binds);
                            format!("{lo_col} >= {a} AND {hi_col} < {b}")
                        }
                        None => format!("{lo_col} >= {a}"),
                    }
                }
                Cond::Glob(pats) | Cond::NotGlob(pats) => {
                    // GLOB seeks only where a lower bound may (SQLite derives a range
                    // from its literal prefix); where it may not, `+path` keeps it a
                    // filter. A NOT GLOB never seeks.
                    let col = if matches!(c, Cond::Glob(_)) {
                        lo_col
                    } else {
                        "+path"
                    };
                    let any: Vec<String> = pats
                        .iter()
                        .map(|p| format!("{col} GLOB {}", bind(text(p), &mut binds)))
                        .collect();
                    let any = if any.is_empty() {
                        "0".to_string()
                    } else {
                        any.join(" OR ")
                    };
                    if matches!(c, Cond::Glob(_)) {
                        format!("({any})")
                    } else {
                        format!("NOT ({any})")
                    }
                }
                Cond::Size(cmp, n) => {
                    let col = match self.table {
                        Table::Files => "size",
                        Table::Dirs => "size_tree",
                    };
                    let op = match cmp {
                        Cmp::Less => "<",
                        Cmp::Equal => "=",
                        Cmp::Greater => ">",
                    };
                    format!("{col} {op} {}", bind(Bind::Int(*n), &mut binds))
                }
                Cond::MaxDepth(n) => format!(
                    "length(path) - length(replace(path, '/', '')) + (path != '') <= {}",
                    bind(Bind::Int(*n), &mut binds)
                ),
                Cond::NotRoot => "+path != ''".to_string(),
                Cond::NumericAddress => "typeof(shard) IN ('integer', 'real') \
                     AND typeof(offset) IN ('integer', 'real')"
                    .to_string(),
                Cond::NotNumericAddress => "(typeof(shard) NOT IN ('integer', 'real') \
                     OR typeof(offset) NOT IN ('integer', 'real'))"
                    .to_string(),
            };
            conds.push(sql);
        }
        let keys = self.key_columns();
        if let Some(after) = after {
            let params: Vec<String> = after
                .values
                .iter()
                .map(|v| bind(v.clone(), &mut binds))
                .collect();
            // Children through the parent index are sorted a page at a time; a key
            // the path index could seek on would tempt SQLite to walk that index
            // from the key to the end of the table instead.
            let by_parent = self.conds.iter().any(|c| matches!(c, Cond::Parent(_)));
            let key_cols = if path_order && by_parent {
                "+path, rowid".to_string()
            } else {
                keys.join(", ")
            };
            let op = match (self.reverse, after.inclusive) {
                (false, false) => ">",
                (false, true) => ">=",
                (true, false) => "<",
                (true, true) => "<=",
            };
            conds.push(format!("({key_cols}) {op} ({})", params.join(", ")));
        }
        let table = match self.table {
            Table::Files => "files",
            Table::Dirs => "dirs",
        };
        let cols = match (self.table, self.columns) {
            (Table::Files, Columns::Entry) => FILE_COLS,
            (Table::Dirs, Columns::Entry) => DIR_COLS,
            (_, Columns::Path) => "path",
            (_, Columns::Extent) => "path, shard, offset, size",
        };
        let limit = bind(Bind::Int(0), &mut binds);
        let wher = if conds.is_empty() {
            "1".to_string()
        } else {
            conds.join(" AND ")
        };
        let order_by = if self.reverse {
            keys.iter()
                .map(|k| format!("{k} DESC"))
                .collect::<Vec<_>>()
                .join(", ")
        } else {
            keys.join(", ")
        };
        let sql = format!(
            "SELECT {cols}, {keys} FROM {table} WHERE {wher} ORDER BY {order_by} LIMIT {limit}",
            keys = keys.join(", ")
        );
        (sql, binds)
    }
}

/// Where a scan stands: the key columns of the last row read, as stored. A scan
/// continues after its key, or from it on when the key is
/// [`inclusive`](ScanKey::inclusive).
#[derive(Debug, Clone, PartialEq)]
pub struct ScanKey {
    values: Vec<Bind>,
    inclusive: bool,
}

impl ScanKey {
    fn of(values: Vec<Bind>) -> ScanKey {
        ScanKey {
            values,
            inclusive: false,
        }
    }

    /// After every row of path `path` (a key of a scan in path order).
    pub fn after_path(path: &str) -> ScanKey {
        ScanKey::of(vec![
            Bind::Text(path.as_bytes().to_vec()),
            Bind::Int(i64::MAX),
        ])
    }

    /// After the row `rowid` (a key of a scan in row-id order).
    pub fn after_rowid(rowid: i64) -> ScanKey {
        ScanKey::of(vec![Bind::Int(rowid)])
    }

    /// After the row `rowid` at `shard`, `offset` (a key of a scan in address
    /// order).
    pub fn after_address(shard: i64, offset: i64, rowid: i64) -> ScanKey {
        ScanKey::of(vec![Bind::Int(shard), Bind::Int(offset), Bind::Int(rowid)])
    }

    /// The same place, the row at it included.
    pub fn inclusive(mut self) -> ScanKey {
        self.inclusive = true;
        self
    }
}

/// One page of a scan.
#[derive(Debug)]
pub struct ScanPage {
    /// The rows in order; a row that does not decode is an error naming it.
    pub rows: Vec<Result<Entry>>,
    /// The key of the last row when the page is full (`None` when it is not: the
    /// scan has ended).
    pub last: Option<ScanKey>,
}

/// A value bound to a statement: text need not be valid UTF-8.
#[derive(Debug, Clone, PartialEq)]
pub enum Bind {
    /// NULL.
    Null,
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Real(f64),
    /// Text, as bytes (not necessarily UTF-8).
    Text(Vec<u8>),
    /// A blob.
    Blob(Vec<u8>),
}

impl ToSql for Bind {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self {
            Bind::Null => ValueRef::Null,
            Bind::Int(i) => ValueRef::Integer(*i),
            Bind::Real(f) => ValueRef::Real(*f),
            Bind::Text(t) => ValueRef::Text(t),
            Bind::Blob(b) => ValueRef::Blob(b),
        }))
    }
}

fn owned(v: ValueRef<'_>) -> Bind {
    match v {
        ValueRef::Null => Bind::Null,
        ValueRef::Integer(i) => Bind::Int(i),
        ValueRef::Real(f) => Bind::Real(f),
        ValueRef::Text(t) => Bind::Text(t.to_vec()),
        ValueRef::Blob(b) => Bind::Blob(b.to_vec()),
    }
}

/// Set `slot` to `v`, reusing its buffer.
fn assign(slot: &mut Bind, v: ValueRef<'_>) {
    match (slot, v) {
        (Bind::Text(buf), ValueRef::Text(t)) | (Bind::Blob(buf), ValueRef::Blob(t)) => {
            buf.clear();
            buf.extend_from_slice(t);
        }
        (slot, v) => *slot = owned(v),
    }
}

impl Index {
    /// Visit up to `limit` rows of `spec` after `after` (from the start when
    /// `None`), in order; returns how many there were and, when there were
    /// `limit`, the key of the last (to continue from).
    pub fn scan_rows(
        &self,
        spec: &ScanSpec,
        after: Option<&ScanKey>,
        limit: usize,
        visit: &mut dyn FnMut(&rusqlite::Row<'_>) -> Result<()>,
    ) -> Result<(usize, Option<ScanKey>)> {
        let (sql, mut binds) = spec.sql(after);
        if let Some(Bind::Int(l)) = binds.last_mut() {
            *l = limit.min(i64::MAX as usize) as i64;
        }
        let mut stmt = self.conn.prepare_cached(&sql).at(&self.path)?;
        for (n, b) in binds.iter().enumerate() {
            stmt.raw_bind_parameter(n + 1, b).at(&self.path)?;
        }
        let first_key = spec.first_key();
        let nkeys = spec.key_columns().len();
        let mut rows = stmt.raw_query();
        let mut key = vec![Bind::Null; nkeys];
        let mut n = 0;
        while let Some(row) = rows.next().at(&self.path)? {
            n += 1;
            // Only the key of a full page's last row is needed: a shorter page ends
            // the scan.
            if n == limit {
                for (k, slot) in key.iter_mut().enumerate() {
                    assign(slot, row.get_ref(first_key + k).at(&self.path)?);
                }
            }
            visit(row)?;
        }
        Ok((n, (n == limit && n > 0).then_some(ScanKey::of(key))))
    }

    /// Up to `limit` rows of `spec` after `after` (from the start when `None`),
    /// decoded.
    pub fn scan_page(
        &self,
        spec: &ScanSpec,
        after: Option<&ScanKey>,
        limit: usize,
    ) -> Result<ScanPage> {
        let mut out = Vec::new();
        let (_, last) = self.scan_rows(spec, after, limit, &mut |row| {
            let entry = if spec.columns != Columns::Entry {
                super::decode::text(row, 0, "path").map(|path| match spec.table {
                    Table::Files => Entry::File(FileInfo {
                        path,
                        shard: 0,
                        offset: 0,
                        size: 0,
                        crc32c: None,
                        meta: Meta::default(),
                    }),
                    Table::Dirs => Entry::Dir(DirInfo {
                        path,
                        ..DirInfo::default()
                    }),
                })
            } else {
                match spec.table {
                    Table::Files => super::decode_file(row).map(Entry::File),
                    Table::Dirs => super::decode_dir(row).map(Entry::Dir),
                }
            };
            out.push(entry.map_err(|d| Error::corrupt(&self.path, d)));
            Ok(())
        })?;
        Ok(ScanPage { rows: out, last })
    }

    /// Every entry of `spec` in order, read `page` rows per query; the first row
    /// that does not decode ends the scan with its error.
    pub fn scan_each(
        &self,
        spec: &ScanSpec,
        page: usize,
        visit: &mut dyn FnMut(Entry) -> Result<()>,
    ) -> Result<()> {
        let mut after = None;
        loop {
            let p = self.scan_page(spec, after.as_ref(), page)?;
            for r in p.rows {
                visit(r?)?;
            }
            match p.last {
                Some(k) => after = Some(k),
                None => return Ok(()),
            }
        }
    }

    /// Every raw row of `spec` in order, read `page` rows per query: for callers
    /// that look at a row (its path, say) before deciding to decode it.
    pub fn scan_each_row(
        &self,
        spec: &ScanSpec,
        page: usize,
        visit: &mut dyn FnMut(&rusqlite::Row<'_>) -> Result<()>,
    ) -> Result<()> {
        let mut after = None;
        loop {
            match self.scan_rows(spec, after.as_ref(), page, visit)?.1 {
                Some(k) => after = Some(k),
                None => return Ok(()),
            }
        }
    }

    /// Up to `limit` entries of `spec` after `after`, each with its row id, and
    /// the key to continue from (as [`scan_page`](Self::scan_page)); a row that
    /// does not decode is an error.
    #[allow(clippy::type_complexity)]
    pub fn scan_page_ids(
        &self,
        spec: &ScanSpec,
        after: Option<&ScanKey>,
        limit: usize,
    ) -> Result<(Vec<(i64, Entry)>, Option<ScanKey>)> {
        let mut out = Vec::new();
        let (_, last) = self.scan_rows(spec, after, limit, &mut |row| {
            let entry = match spec.table {
                Table::Files => self.decode_file(row).map(Entry::File)?,
                Table::Dirs => self.decode_dir(row).map(Entry::Dir)?,
            };
            out.push((spec.rowid_of(row).at(&self.path)?, entry));
            Ok(())
        })?;
        Ok((out, last))
    }

    /// The path in the first column of a scan row (a row of a
    /// [`paths_only`](ScanSpec::paths_only) scan), without copying it.
    pub fn path_of<'r>(&self, row: &'r rusqlite::Row<'_>) -> Result<&'r str> {
        match row.get_ref(0).at(&self.path)? {
            ValueRef::Text(t) => std::str::from_utf8(t)
                .map_err(|_| Error::corrupt(&self.path, "files.path is not valid UTF-8")),
            other => Err(Error::corrupt(
                &self.path,
                format!("path has type {:?}", other.data_type()),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_conditions_seek() {
        let spec = ScanSpec::new(Table::Files, ScanOrder::Path).with(Cond::Below("a".into()));
        let (first, _) = spec.sql(None);
        assert!(!first.contains("IS NULL"), "{first}");
        let (next, binds) = spec.sql(Some(&ScanKey::of(vec![
            Bind::Text(b"a/x".to_vec()),
            Bind::Int(3),
        ])));
        assert!(next.contains("(path, rowid) > (?3, ?4)"), "{next}");
        assert_eq!(binds.len(), 5);
    }

    #[test]
    fn backwards_and_from_a_key() {
        let spec = ScanSpec::new(Table::Files, ScanOrder::Address)
            .columns(Columns::Extent)
            .reversed(true);
        let (first, _) = spec.sql(None);
        assert!(
            first.contains("ORDER BY shard DESC, offset DESC, rowid DESC"),
            "{first}"
        );
        assert!(
            first.starts_with("SELECT path, shard, offset, size, shard"),
            "{first}"
        );
        let key = ScanKey::after_address(1, 2, 3);
        let (next, _) = spec.sql(Some(&key));
        assert!(
            next.contains("(shard, offset, rowid) < (?1, ?2, ?3)"),
            "{next}"
        );
        let (next, _) = spec.sql(Some(&key.clone().inclusive()));
        assert!(
            next.contains("(shard, offset, rowid) <= (?1, ?2, ?3)"),
            "{next}"
        );
        let up = ScanSpec::new(Table::Files, ScanOrder::Address);
        let (next, _) = up.sql(Some(&key.inclusive()));
        assert!(
            next.contains("(shard, offset, rowid) >= (?1, ?2, ?3)"),
            "{next}"
        );
    }
}
