//! Decoding rows into entries, with explicit type and range checks: a corrupt row
//! is an error naming the row (a `String` here, an [`Error::CorruptIndex`] once
//! the index it came from is known), never a panic.

use rusqlite::types::ValueRef;
use rusqlite::Row;

use super::Index;
use crate::core::entry::{DirInfo, FileInfo, Meta};
use crate::core::error::{Error, Result, SqlContext};

impl Index {
    pub(crate) fn decode_file(&self, row: &Row<'_>) -> Result<FileInfo> {
        decode_file(row).map_err(|d| Error::corrupt(&self.path, d))
    }

    pub(crate) fn decode_dir(&self, row: &Row<'_>) -> Result<DirInfo> {
        decode_dir(row).map_err(|d| Error::corrupt(&self.path, d))
    }

    pub(super) fn query_files<P: rusqlite::Params>(
        &self,
        sql: &str,
        p: P,
    ) -> Result<Vec<FileInfo>> {
        let mut stmt = self.conn.prepare_cached(sql).at(&self.path)?;
        let mut rows = stmt.query(p).at(&self.path)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().at(&self.path)? {
            out.push(self.decode_file(row)?);
        }
        Ok(out)
    }

    pub(super) fn query_dirs<P: rusqlite::Params>(&self, sql: &str, p: P) -> Result<Vec<DirInfo>> {
        let mut stmt = self.conn.prepare_cached(sql).at(&self.path)?;
        let mut rows = stmt.query(p).at(&self.path)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().at(&self.path)? {
            out.push(self.decode_dir(row)?);
        }
        Ok(out)
    }
}

pub(super) fn text(row: &Row<'_>, i: usize, what: &str) -> std::result::Result<String, String> {
    match row.get_ref(i).map_err(|e| e.to_string())? {
        ValueRef::Text(t) => std::str::from_utf8(t)
            .map(str::to_owned)
            .map_err(|_| format!("{what} is not valid UTF-8")),
        other => Err(format!("{what} has type {:?}", other.data_type())),
    }
}

fn opt_int(row: &Row<'_>, i: usize) -> std::result::Result<Option<i64>, String> {
    match row.get_ref(i).map_err(|e| e.to_string())? {
        ValueRef::Integer(v) => Ok(Some(v)),
        ValueRef::Null => Ok(None),
        // Python's float-noised values are stored as integers; a REAL that holds an
        // exact integer is accepted too.
        ValueRef::Real(f) if f.fract() == 0.0 && f.abs() < 9.0e18 => Ok(Some(f as i64)),
        other => Err(format!("has type {:?}", other.data_type())),
    }
}

fn field<T>(
    path: &str,
    name: &str,
    v: std::result::Result<Option<i64>, String>,
    conv: impl FnOnce(Option<i64>) -> Option<T>,
) -> std::result::Result<T, String> {
    let v = v.map_err(|e| format!("row {path:?}: {name} {e}"))?;
    conv(v).ok_or_else(|| match v {
        Some(x) => format!("row {path:?}: {name} is out of range ({x})"),
        None => format!("row {path:?}: {name} is NULL"),
    })
}

fn opt_u32(
    path: &str,
    name: &str,
    row: &Row<'_>,
    i: usize,
) -> std::result::Result<Option<u32>, String> {
    field(path, name, opt_int(row, i), |v| match v {
        None => Some(None),
        Some(x) => u32::try_from(x).ok().map(Some),
    })
}

fn meta(path: &str, row: &Row<'_>, first: usize) -> std::result::Result<Meta, String> {
    Ok(Meta {
        mode: opt_u32(path, "mode", row, first)?,
        uid: opt_u32(path, "uid", row, first + 1)?,
        gid: opt_u32(path, "gid", row, first + 2)?,
        mtime_ns: field(path, "mtime_ns", opt_int(row, first + 3), Some)?,
    })
}

pub(crate) fn decode_file(row: &Row<'_>) -> std::result::Result<FileInfo, String> {
    let path = text(row, 0, "files.path")?;
    let nonneg = |v: Option<i64>| v.and_then(|x| u64::try_from(x).ok());
    let shard = field(&path, "shard", opt_int(row, 1), nonneg)?;
    let offset = field(&path, "offset", opt_int(row, 2), nonneg)?;
    let size = field(&path, "size", opt_int(row, 3), |v| match v {
        None => Some(0), // DEFAULT 0; NULL treated as empty
        Some(x) => u64::try_from(x).ok(),
    })?;
    let crc32c = field(&path, "crc32c", opt_int(row, 4), |v| match v {
        None => Some(None),
        Some(x) => u32::try_from(x).ok().map(Some),
    })?;
    if offset.checked_add(size).is_none_or(|e| e > i64::MAX as u64) {
        return Err(format!(
            "row {path:?}: offset {offset} + size {size} overflows"
        ));
    }
    let meta = meta(&path, row, 5)?;
    Ok(FileInfo {
        path,
        shard,
        offset,
        size,
        crc32c,
        meta,
    })
}

pub(crate) fn decode_dir(row: &Row<'_>) -> std::result::Result<DirInfo, String> {
    let path = text(row, 0, "dirs.path")?;
    let count =
        |i: usize, name: &str| field(&path, name, opt_int(row, i), |v| Some(v.unwrap_or(0)));
    Ok(DirInfo {
        num_subdirs: count(1, "num_subdirs")?,
        num_files: count(2, "num_files")?,
        num_files_tree: count(3, "num_files_tree")?,
        size_tree: count(4, "size_tree")?,
        meta: meta(&path, row, 5)?,
        path,
    })
}
