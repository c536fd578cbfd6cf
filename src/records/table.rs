//! Record tables over barecat archives: `P-records` beside the archive `P`.
//!
//! Why: a barecat shard already is a zrecord chunk (file bytes back to back), so an
//! archive becomes an integer-indexed dataset by writing only the offset table:
//! record `i` is the `i`-th file in path order, address order or the order of a
//! list, read straight from the shards; the CRC32C of every file is copied from
//! the index beside the entries.
//!
//! # Staleness, cheaply and soundly
//!
//! The table is only right while the index is unchanged. The header keeps a stamp of
//! the index taken, under a read transaction, when the table was built: SQLite's
//! file change counter and page count (bytes 24..32 of the database header), the
//! index file's inode, and the root directory's file count and total size. Opening
//! reads the same values under a read transaction (one SQLite open, one row, one
//! 100-byte read) and checks 17 sampled entries against the index by address (17
//! lookups in `idx_files_shard_offset`):
//!
//! * In rollback-journal mode (barecat's default, Python's too) SQLite increments
//!   the change counter in every transaction that writes the file, whatever the
//!   program (our tools, Python barecat, the sqlite3 shell), before it releases its
//!   write lock; we read it while holding a shared lock, so no commit is half done.
//!   An unchanged counter therefore means no write since the build. Files added,
//!   deleted, renamed or moved by a defrag all go through such a transaction.
//! * Replacing the index file by another (a merge with `-f`, a copy) changes the
//!   inode, or recycles it for a file that would also need the same counter, page
//!   count, file count, total size and the 17 sampled rows to be taken for it.
//! * An index in WAL mode does not keep the counter current: it always gets the full
//!   comparison below.
//!
//! When the stamp differs (any write, even one that changed no file row, such as
//! Python's opening for writing), every record is compared with the index (one
//! scan in the table's order); if all match, the table is used and a warning says
//! that `barecat-records build --restamp` makes opening cheap again; otherwise
//! opening fails with [`Error::StaleRecords`].

use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::core::error::{Error, IoContext, Result};
use crate::core::format::layout::Layout;
use crate::core::index::{Index, RawExtent};
use crate::core::path as mpath;
use crate::core::progress::Progress;
use crate::records::chunks::Blob;
use crate::records::chunks::{map_file, open_for_map};
use crate::records::format::{
    table_path, Entry, Stamp, TableHeader, TableOrder, CRC_SIZE, ENTRY_SIZE, MAX_RECORD,
    TABLE_HEADER_SIZE,
};
use crate::records::reader::{archive_inner, OpenOptions, Records, TableBytes};

/// Options of [`build`].
#[derive(Debug, Clone)]
pub struct BuildOptions {
    /// Which file record i is.
    pub order: TableOrder,
    /// The paths in record order (with [`TableOrder::List`]).
    pub list: Vec<String>,
}

/// What [`build`] wrote.
#[derive(Debug, Clone, Serialize)]
pub struct BuildReport {
    /// The archive (its index path).
    pub archive: PathBuf,
    /// The record table file written.
    pub table: PathBuf,
    /// Which file record i is.
    pub order: TableOrder,
    /// Records in the table (files of the archive, or paths of the list).
    pub records: u64,
    /// Their total size.
    pub bytes: u64,
    /// Records whose file has no CRC in the index.
    pub records_without_crc: u64,
}

/// One file row as the table needs it.
struct Row {
    shard: i64,
    offset: i64,
    size: i64,
    crc: Option<i64>,
}

fn read_row(r: RawExtent) -> Row {
    Row {
        shard: r.shard,
        offset: r.offset,
        size: r.size,
        crc: r.crc32c,
    }
}

fn row_name(name: &[u8]) -> String {
    String::from_utf8_lossy(name).into_owned()
}

impl Row {
    fn entry(&self, what: &str) -> Result<(Entry, Option<u32>)> {
        let bad = |d: &str| Error::InvalidOperation(format!("{what}: cannot be a record: {d}"));
        if !(0..=u32::MAX as i64).contains(&self.shard) {
            return Err(bad(&format!("shard {} out of range", self.shard)));
        }
        if self.offset < 0 {
            return Err(bad(&format!("negative offset {}", self.offset)));
        }
        if self.size < 0 || self.size as u64 > MAX_RECORD {
            return Err(bad(&format!("size {} (at most {MAX_RECORD})", self.size)));
        }
        let e = if self.size == 0 {
            Entry::default()
        } else {
            Entry {
                chunk: self.shard as u32,
                offset: self.offset as u64,
                length: self.size as u32,
            }
        };
        Ok((e, self.crc.map(|c| c as u32)))
    }
}

/// Are the files of the table in address order (else path order)?
fn by_address(order: TableOrder) -> bool {
    order != TableOrder::Path
}

/// The stamp of the index, read inside the caller's read transaction.
fn read_stamp(index: &Index) -> Result<Stamp> {
    let path = index.path();
    let f = File::open(path).at(path)?;
    let mut h = [0u8; 100];
    f.read_exact_at(&mut h, 0).at(path)?;
    stamp_of(index, &h, f.metadata().at(path)?.ino())
}

/// The stamp of a remote archive's index: its header from the remote index, and
/// the inode recorded at build time (an object has none; its version is pinned by
/// the reader instead).
fn remote_stamp(a: &crate::Archive, index: &Index, built: &Stamp) -> Result<Stamp> {
    let mut h = [0u8; 100];
    if let Some(r) = a.remote_index()? {
        let n = r.source.read_at(0, &mut h)?;
        if n < h.len() {
            return Err(Error::corrupt(
                index.path(),
                "the index is shorter than its header",
            ));
        }
    }
    stamp_of(index, &h, built.inode)
}

fn stamp_of(index: &Index, h: &[u8; 100], inode: u64) -> Result<Stamp> {
    let (files, bytes) = index.root_totals()?;
    let be = |a: usize| u32::from_be_bytes(h[a..a + 4].try_into().expect("4"));
    Ok(Stamp {
        wal: h[18] == 2 || h[19] == 2,
        change_counter: be(24),
        page_count: be(28),
        inode,
        files: files as u64,
        bytes: bytes as u64,
    })
}

/// Run `f` inside a read transaction (a shared lock on the index for its duration).
fn in_read_tx<T>(index: &Index, f: impl FnOnce(&Index) -> Result<T>) -> Result<T> {
    index.begin()?;
    let r = f(index);
    index.end_read();
    r
}

fn open_index(archive: &Path) -> Result<(Layout, Index)> {
    let layout = Layout::resolve(archive);
    if !layout.index().is_file() {
        return Err(Error::ArchiveNotFound {
            path: archive.to_path_buf(),
        });
    }
    let index = Index::open_read(layout.index())?;
    Ok((layout, index))
}

/// Build (or replace) the record table of the archive at `archive`.
pub fn build(archive: &Path, opts: &BuildOptions, progress: &Progress) -> Result<BuildReport> {
    // Opening the archive checks its shards (numbering, presence).
    let a = crate::Archive::open(archive)?;
    let (layout, index) = open_index(archive)?;
    let mut entries: Vec<u8> = Vec::new();
    let mut crcs: Vec<u8> = Vec::new();
    let mut missing: Vec<u64> = Vec::new();
    let mut bytes = 0u64;
    let stamp = in_read_tx(&index, |index| {
        let stamp = read_stamp(index)?;
        let mut push = |e: Entry, c: Option<u32>, n: u64| {
            entries.extend_from_slice(&e.encode());
            crcs.extend_from_slice(&c.unwrap_or(0).to_le_bytes());
            if c.is_none() {
                missing.push(n);
            }
            bytes += e.length as u64;
        };
        let mut n = 0u64;
        if opts.order == TableOrder::List {
            for p in &opts.list {
                let norm = mpath::normalize(p);
                let Some(r) = index.raw_extent(&norm)? else {
                    return Err(Error::NotFound(norm));
                };
                let (e, c) = read_row(r).entry(&norm)?;
                push(e, c, n);
                n += 1;
                if n.is_multiple_of(65536) {
                    progress.add(65536, 0);
                }
            }
        } else {
            index.each_raw_extent(by_address(opts.order), &mut |r, name| {
                let (e, c) = read_row(r).entry(&row_name(name))?;
                push(e, c, n);
                n += 1;
                if n.is_multiple_of(65536) {
                    progress.add(65536, 0);
                }
                Ok(true)
            })?;
        }
        Ok(stamp)
    })?;
    drop(a);
    let header = TableHeader {
        length: (entries.len() / ENTRY_SIZE) as u64,
        order: opts.order,
        stamp,
        missing_crcs: missing.len() as u64,
    };
    let table = table_path(layout.base());
    write_table(&table, &header, &entries, &crcs, &missing)?;
    Ok(BuildReport {
        archive: archive.to_path_buf(),
        table,
        order: opts.order,
        records: header.length,
        bytes,
        records_without_crc: header.missing_crcs,
    })
}

fn write_table(
    table: &Path,
    header: &TableHeader,
    entries: &[u8],
    crcs: &[u8],
    missing: &[u64],
) -> Result<()> {
    let mut tmp = table.as_os_str().to_owned();
    tmp.push(format!(".tmp-{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    crate::core::output::replace_file(table, &tmp, |f| {
        let mut at = 0u64;
        let miss: Vec<u8> = missing.iter().flat_map(|m| m.to_le_bytes()).collect();
        for part in [&header.encode()[..], entries, crcs, &miss] {
            f.write_all_at(part, at).at(&tmp)?;
            at += part.len() as u64;
        }
        Ok(())
    })
}

/// Remove the record table of `archive`; true if there was one.
pub fn remove_table(archive: &Path) -> Result<bool> {
    let t = table_path(Layout::resolve(archive).base());
    match std::fs::remove_file(&t) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(Error::io(&t, e)),
    }
}

/// Does `archive` have a record table?
pub fn has_table(archive: &Path) -> bool {
    table_path(Layout::resolve(archive).base()).is_file()
}

/// The order of `archive`'s record table, if it has a readable one.
pub fn table_order(archive: &Path) -> Option<TableOrder> {
    let t = table_path(Layout::resolve(archive).base());
    let f = File::open(&t).ok()?;
    let len = f.metadata().ok()?.len();
    let mut h = vec![0u8; TABLE_HEADER_SIZE as usize];
    f.read_exact_at(&mut h, 0).ok()?;
    TableHeader::decode(&h, len, &t).ok().map(|h| h.order)
}

/// The table's view of the archive, for the checks.
struct TableView<'a> {
    entries: &'a [u8],
    crcs: &'a [u8],
    missing: &'a [u64],
    len: u64,
}

impl TableView<'_> {
    fn entry(&self, i: u64) -> Entry {
        crate::records::format::entry_at(self.entries, i).unwrap_or_default()
    }
    fn crc(&self, i: u64) -> Option<u32> {
        if self.missing.binary_search(&i).is_ok() {
            None
        } else {
            crate::records::format::crc_at(self.crcs, i)
        }
    }
}

/// Compare every record with the index; `Err(detail)` names the first difference.
fn full_check(index: &Index, order: TableOrder, t: &TableView<'_>) -> Result<Option<String>> {
    if order == TableOrder::List {
        for i in 0..t.len {
            let e = t.entry(i);
            if e.length == 0 {
                continue;
            }
            if !sample_matches(index, &e, t.crc(i))? {
                return Ok(Some(format!(
                    "record {i} (shard {}, offset {}, {} bytes) is no longer a file of the index",
                    e.chunk, e.offset, e.length
                )));
            }
        }
        return Ok(None);
    }
    let mut i = 0u64;
    let mut found = None;
    index.each_raw_extent(by_address(order), &mut |r, name| {
        if i >= t.len {
            found = Some(format!(
                "the index has more files than the table's {} records",
                t.len
            ));
            return Ok(false);
        }
        let same = match read_row(r).entry("") {
            Ok((e, c)) => e == t.entry(i) && c == t.crc(i),
            Err(_) => false,
        };
        if !same {
            found = Some(format!(
                "record {i} was built from another file than {} (the file at that place \
                 in {} order now)",
                row_name(name),
                order.name()
            ));
            return Ok(false);
        }
        i += 1;
        Ok(true)
    })?;
    if found.is_some() {
        return Ok(found);
    }
    if i < t.len {
        return Ok(Some(format!(
            "the index has {i} files, the table {} records",
            t.len
        )));
    }
    Ok(None)
}

fn sample_matches(index: &Index, e: &Entry, crc: Option<u32>) -> Result<bool> {
    index.has_extent(e.chunk as i64, e.offset as i64, e.length as i64, crc)
}

/// The cheap check: the stamp and 17 sampled records.
fn stamp_holds(index: &Index, stamp: &Stamp, built: &Stamp, t: &TableView<'_>) -> Result<bool> {
    if stamp.wal || built.wal || stamp != built {
        return Ok(false);
    }
    let n = t.len;
    for k in 0..=16u64 {
        if n == 0 {
            break;
        }
        let i = if k == 16 { n - 1 } else { k * n / 16 };
        let e = t.entry(i);
        if e.length > 0 && !sample_matches(index, &e, t.crc(i))? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// How `check_table` found the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Freshness {
    /// The stamp matched (cheap check).
    Stamped,
    /// The stamp differed but every record matched the index.
    Matching,
}

/// Check a mapped table against the index of `archive`.
fn check_table(
    archive: &Path,
    m: &Mapped,
    t: &TableView<'_>,
    full: bool,
) -> Result<(Freshness, Stamp)> {
    let (table, header) = (&m.table, &m.header);
    let check = |index: &Index, now: Stamp| {
        if !full && stamp_holds(index, &now, &header.stamp, t)? {
            return Ok((Freshness::Stamped, now));
        }
        match full_check(index, header.order, t)? {
            None => Ok((Freshness::Matching, now)),
            Some(detail) => Err(Error::StaleRecords {
                table: table.to_path_buf(),
                archive: archive.to_path_buf(),
                detail,
            }),
        }
    };
    match &m.remote {
        // A remote index is pinned to one version: no transaction needed.
        Some(a) => a.with_index(|index| check(index, remote_stamp(a, index, &header.stamp)?)),
        None => {
            let (_, index) = open_index(archive)?;
            in_read_tx(&index, |index| check(index, read_stamp(index)?))
        }
    }
}

struct Mapped {
    file: Option<File>,
    map: Blob,
    header: TableHeader,
    missing: Vec<u64>,
    table: PathBuf,
    layout: Layout,
    /// The archive, when it is remote (its table was read whole).
    remote: Option<std::sync::Arc<crate::Archive>>,
}

/// The record table of a remote archive, read whole (one request).
fn fetch_table(archive: &Path, index_mode: crate::core::remote::IndexMode) -> Result<Mapped> {
    let a = crate::Archive::open_with(
        archive,
        crate::OpenOptions {
            index_mode,
            ..Default::default()
        },
    )?;
    let r = a.remote_index()?.ok_or_else(|| {
        Error::InvalidOperation(format!("{}: not a remote archive", archive.display()))
    })?;
    let table = PathBuf::from(
        r.url
            .url_of(&r.url.with_suffix(crate::records::format::TABLE_SUFFIX)),
    );
    let bytes = r
        .fetch_part(
            crate::records::format::TABLE_SUFFIX,
            crate::core::remote::RequestKind::Records,
        )?
        .ok_or_else(|| Error::CorruptRecords {
            path: table.clone(),
            detail: format!(
                "no record table (build one with `barecat-records build` on a local copy of {})",
                archive.display()
            ),
        })?;
    let layout = a.layout().clone();
    let map = Blob::Bytes(bytes);
    let header = TableHeader::decode(&map, map.len() as u64, &table)?;
    let missing = missing_list(&map, &header, &table)?;
    Ok(Mapped {
        file: None,
        map,
        header,
        missing,
        table,
        layout,
        remote: Some(std::sync::Arc::new(a)),
    })
}

fn missing_list(map: &[u8], header: &TableHeader, table: &Path) -> Result<Vec<u64>> {
    let miss_at = header.missing_offset() as usize;
    let missing: Vec<u64> = map[miss_at..]
        .chunks_exact(8)
        .map(|b| u64::from_le_bytes(b.try_into().expect("8")))
        .collect();
    if missing.windows(2).any(|w| w[0] >= w[1])
        || missing.last().is_some_and(|&m| m >= header.length)
    {
        return Err(Error::CorruptRecords {
            path: table.to_path_buf(),
            detail: "not a valid record table: the list of records without CRC is not sorted"
                .into(),
        });
    }
    Ok(missing)
}

fn map_table(archive: &Path) -> Result<Mapped> {
    map_table_with(archive, Default::default())
}

fn map_table_with(archive: &Path, index_mode: crate::core::remote::IndexMode) -> Result<Mapped> {
    if crate::core::location::is_remote(archive) {
        return fetch_table(archive, index_mode);
    }
    let layout = Layout::resolve(archive);
    if !layout.index().is_file() {
        return Err(Error::ArchiveNotFound {
            path: archive.to_path_buf(),
        });
    }
    let table = table_path(layout.base());
    let file = open_for_map(&table, || Error::CorruptRecords {
        path: table.clone(),
        detail: format!(
            "no record table (build one with `barecat-records build {}`)",
            archive.display()
        ),
    })?;
    let map = Blob::Map(map_file(&file, &table)?);
    let header = TableHeader::decode(&map, map.len() as u64, &table)?;
    let missing = missing_list(&map, &header, &table)?;
    Ok(Mapped {
        file: Some(file),
        map,
        header,
        missing,
        table,
        layout,
        remote: None,
    })
}

impl Mapped {
    fn view(&self) -> TableView<'_> {
        let e0 = self.header.entries_offset() as usize;
        let c0 = self.header.crcs_offset() as usize;
        let n = self.header.length as usize;
        TableView {
            entries: &self.map[e0..e0 + n * ENTRY_SIZE],
            crcs: &self.map[c0..c0 + n * CRC_SIZE],
            missing: &self.missing,
            len: self.header.length,
        }
    }
}

/// Open the record table of `archive` (refused when stale).
pub(crate) fn open_table(archive: &Path, opts: OpenOptions) -> Result<Records> {
    let m = map_table_with(archive, opts.index_mode)?;
    let (fresh, _) = check_table(archive, &m, &m.view(), opts.full_check)?;
    let mut warnings = Vec::new();
    if fresh == Freshness::Matching && !opts.full_check {
        warnings.push(format!(
            "{}: the archive's index was written to since the record table was built, but \
             every record still matches; `barecat-records build --restamp {}` makes opening \
             cheap again",
            m.table.display(),
            archive.display()
        ));
    }
    let bytes = TableBytes {
        file: m.file,
        map: m.map,
        remote: m.remote,
    };
    Ok(Records::from_inner(archive_inner(
        archive, m.layout, &m.header, bytes, m.missing, warnings,
    )))
}

/// Compare every record with the index and, when all match, store the index's
/// current stamp in the table (so that opening is cheap again).
pub fn restamp(archive: &Path) -> Result<Freshness> {
    let m = map_table(archive)?;
    if m.remote.is_some() {
        return Err(Error::ReadOnly {
            path: archive.to_path_buf(),
            reason: "a remote archive's record table cannot be rewritten".into(),
        });
    }
    let (fresh, now) = check_table(archive, &m, &m.view(), true)?;
    if fresh == Freshness::Matching && now != m.header.stamp {
        let header = TableHeader {
            stamp: now,
            ..m.header
        };
        let v = m.view();
        write_table(&m.table, &header, v.entries, v.crcs, v.missing)?;
    }
    Ok(fresh)
}

/// Check the table of `archive` fully (for verify); the freshness or the stale error.
pub fn check_fully(archive: &Path) -> Result<Freshness> {
    let m = map_table(archive)?;
    check_table(archive, &m, &m.view(), true).map(|r| r.0)
}

/// What a command that changed an archive did with its record table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TableAction {
    /// Built anew in its order (path or address), so it stays usable.
    Rebuilt,
    /// Removed: a table in the order of a list cannot be rebuilt without the list.
    Removed,
}

/// Called by commands that changed the files of `archive` (defrag, merge into an
/// existing output): its record table, if any, would be stale, so it is rebuilt in
/// its order, or removed when that order was a list (or the table is unreadable).
pub fn after_change(archive: &Path) -> Result<Option<TableAction>> {
    if !has_table(archive) {
        return Ok(None);
    }
    match table_order(archive) {
        Some(order @ (TableOrder::Path | TableOrder::Address)) => {
            let opts = BuildOptions {
                order,
                list: Vec::new(),
            };
            build(archive, &opts, &Progress::hidden())?;
            Ok(Some(TableAction::Rebuilt))
        }
        _ => {
            remove_table(archive)?;
            Ok(Some(TableAction::Removed))
        }
    }
}
