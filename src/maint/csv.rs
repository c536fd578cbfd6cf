//! The file rows of an index as CSV (docs/FORMAT.md §8.4 `index-to-csv`): a header, then
//! every file ordered by path; columns `path, shard, offset, size, crc32c`; text in
//! double quotes (inner quotes doubled), numbers bare, NULL as `""`, lines ending
//! in CRLF. Values are written as stored, so even a damaged row is shown.

use std::io::Write;

use rusqlite::types::ValueRef;

use crate::core::archive::walk::files_below;
use crate::core::archive::Archive;
use crate::core::error::{Error, Result};
use crate::core::index::ScanOrder;

fn quoted(bytes: &[u8]) -> String {
    format!(
        "\"{}\"",
        String::from_utf8_lossy(bytes).replace('"', "\"\"")
    )
}

fn field(v: ValueRef<'_>) -> String {
    match v {
        ValueRef::Null => "\"\"".into(),
        ValueRef::Integer(i) => i.to_string(),
        ValueRef::Real(f) => format!("{f:?}"),
        ValueRef::Text(t) | ValueRef::Blob(t) => quoted(t),
    }
}

/// Write the CSV of `archive`'s files to `out`, a page of rows at a time through the
/// shared paged scan (one statement over every row would hold SQLite's memory
/// growing with the index).
pub fn write_csv(archive: &Archive, out: &mut dyn Write) -> Result<()> {
    let oe = Error::output;
    out.write_all(b"\"path\",\"shard\",\"offset\",\"size\",\"crc32c\"\r\n")
        .map_err(oe)?;
    // The scan's columns start with path, shard, offset, size, crc32c: the CSV's.
    let mut scan = files_below(archive, "", ScanOrder::Path, false);
    let mut line = String::new();
    while scan.next_page_rows(&mut |i, r| {
        line.clear();
        for k in 0..5 {
            if k > 0 {
                line.push(',');
            }
            line.push_str(&field(
                r.get_ref(k).map_err(|e| Error::sqlite(i.path(), e))?,
            ));
        }
        line.push_str("\r\n");
        out.write_all(line.as_bytes()).map_err(oe)
    })? {}
    Ok(())
}
