//! A merge into an output that holds no file yet starts by taking its first input
//! over whole: the input's shards are copied byte for byte (each file checked
//! against its CRC32C on the way) and its index is copied page by page
//! (`VACUUM INTO`), instead of one row insert per file through the output's path,
//! parent and address indexes, which is what a merge otherwise spends most of its
//! time on. The result is the archive the row-by-row copy would build (same
//! offsets, same rows, same directory rows and statistics).
//!
//! Only an input that the row-by-row copy would reproduce exactly is taken over: a
//! local archive of the current schema with nothing but barecat's own tables, no
//! hole in any shard, no shard longer than the output's limit (unless it holds a
//! single file), statistics that no
//! interrupted bulk operation left stale; and when appending to an existing output,
//! only a merge of that one input (an append is one transaction: the first of
//! several inputs would become visible on its own). Anything else goes the
//! ordinary way.
//!
//! Crash safety: the shard bytes are written first, past the output's logical end
//! (0: the output has no file), where no row points, and synced; the new index is
//! built and synced under a temporary name beside the output and renamed over the
//! output's index in one step. A kill leaves the empty output as it was (plus bytes
//! after its logical end that the next writer cuts) or the complete result.

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::core::archive::Archive;
use crate::core::crc;
use crate::core::entry::Meta;
use crate::core::error::{Error, Result, SqlContext};
use crate::core::format::layout::Layout;
use crate::core::index::{self, schema, Index};
use crate::core::output::{sync_dir, temp_name};

/// What was taken over.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Adopted {
    pub files: u64,
    pub bytes: u64,
    /// Directories besides the root.
    pub dirs: u64,
}

/// Tables an index may hold to be copied whole: barecat's own and SQLite's
/// statistics. Another table (a record table, an application's) is not the
/// merge's to copy.
const TABLES: [&str; 5] = ["files", "dirs", "config", "sqlite_stat1", "sqlite_stat4"];

/// Take `src` (the merge input at `input`) over into `target`, an existing output
/// that holds no file; `output` is the path the merge finally writes (temporary
/// files are named after it). `Ok(None)` when either side does not qualify (then
/// nothing was changed).
pub(super) fn adopt(
    target: &Path,
    output: &Path,
    input: &Path,
    src: &Archive,
    limit: Option<u64>,
) -> Result<Option<Adopted>> {
    if src.is_remote() || src.layout().is_legacy() || !current(src.version()) {
        return Ok(None);
    }
    let layout = Layout::current(target);
    if !layout.index().is_file() {
        return Ok(None);
    }
    // The writer lock of the output, for the whole take-over.
    let _lock = index::lock_exclusive(layout.index())?;
    let out_shards = layout.shard_files()?;
    // Shards with bytes (garbage an interrupted writer left) would have to be cut
    // first, which waits for readers that map them: the ordinary copy handles it.
    for s in &out_shards {
        if s.is_symlink || crate::core::shards::shard_len(&s.path)? != 0 {
            return Ok(None);
        }
    }
    let (out_limit, root) = {
        let out = Index::open_read(layout.index())?;
        if !current(out.version()) || !out.is_fresh()? {
            return Ok(None);
        }
        let root = out.dir("")?.map(|d| d.meta).unwrap_or_default();
        (out.shard_size_limit()?, root)
    };
    if limit.is_some_and(|l| l != out_limit) {
        return Ok(None);
    }
    let usage = src.with_index(|i| {
        if !i.use_triggers()? || !only_barecat_tables(i)? {
            return Ok(None);
        }
        i.shard_usage().map(Some)
    })?;
    let Some(usage) = usage else { return Ok(None) };
    let whole = !usage.is_empty()
        && usage.iter().enumerate().all(|(k, u)| {
            // A file larger than the limit has a shard of its own, as the writer
            // would give it.
            u.shard == k as u64
                && u.live_bytes == u.logical_end
                && (u.logical_end <= out_limit || u.files == 1)
        });
    if !whole {
        return Ok(None);
    }
    for u in &usage {
        if crate::core::shards::shard_len(&src.layout().shard_path(u.shard))? < u.logical_end {
            // Damage the ordinary copy reports, naming the file.
            return Ok(None);
        }
    }

    let temp = temp_name(output, "adopting");
    let lengths: Vec<(PathBuf, Option<u64>)> = (0..usage.len() as u64)
        .map(|k| {
            let p = layout.shard_path(k);
            let len = std::fs::metadata(&p).ok().map(|m| m.len());
            (p, len)
        })
        .collect();
    // Everything up to the rename can be undone; nothing after it may be (the new
    // index points at the copied shards from then on).
    let result = (|| -> Result<Adopted> {
        let copied = copy_shards(&layout, input, src, &usage)?;
        copy_index(src, &temp, out_limit, root)?;
        let dirs = src.with_index(|i| i.count_dirs())?.saturating_sub(1);
        Layout::remove_companions(target)?;
        std::fs::rename(&temp, layout.index()).map_err(|e| Error::io(layout.index(), e))?;
        Ok(Adopted {
            files: copied.0,
            bytes: copied.1,
            dirs,
        })
    })();
    if result.is_err() {
        // The output's index still says it is empty: give its shards back their
        // lengths (0; bytes past the end are harmless, but not ours to leave).
        let _ = std::fs::remove_file(&temp);
        for (p, len) in lengths.iter().rev() {
            match len {
                Some(n) => {
                    if let Ok(f) = OpenOptions::new().write(true).open(p) {
                        let _ = f.set_len(*n);
                    }
                }
                None => {
                    let _ = std::fs::remove_file(p);
                }
            }
        }
    }
    let adopted = result?;
    sync_dir(layout.index())?;
    Ok(Some(adopted))
}

fn current(v: schema::Version) -> bool {
    v.major == schema::MAJOR && v.minor == schema::MINOR
}

fn only_barecat_tables(i: &Index) -> Result<bool> {
    let mut st = i
        .conn()
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .at(i.path())?;
    let names = st
        .query_map([], |r| r.get::<_, String>(0))
        .at(i.path())?
        .collect::<std::result::Result<Vec<String>, _>>()
        .at(i.path())?;
    Ok(names.iter().all(|n| TABLES.contains(&n.as_str())))
}

/// Copy the first `usage.len()` shards of `src` into the output's shard files of
/// the same numbers, from their start (by the kernel, without passing the bytes
/// through here), synced; then check every file's CRC32C in the copies. Returns
/// (files, bytes).
fn copy_shards(
    layout: &Layout,
    input: &Path,
    src: &Archive,
    usage: &[index::ShardUsage],
) -> Result<(u64, u64)> {
    let mut copies = Vec::with_capacity(usage.len());
    for u in usage {
        let from = src.layout().shard_path(u.shard);
        let to = layout.shard_path(u.shard);
        let mut reader = File::open(&from)
            .map_err(|e| Error::io(&from, e))?
            .take(u.logical_end);
        let mut out = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&to)
            .map_err(|e| Error::io(&to, e))?;
        let n = std::io::copy(&mut reader, &mut out).map_err(|e| Error::io(&to, e))?;
        if n != u.logical_end {
            return Err(Error::io(
                &from,
                std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "shard shorter than its files",
                ),
            ));
        }
        out.sync_data().map_err(|e| Error::io(&to, e))?;
        // SAFETY: a read-only map of a file only this function writes, under the
        // output's writer lock; nothing cuts it while the map lives.
        copies.push(unsafe { memmap2::Mmap::map(&out) }.map_err(|e| Error::io(&to, e))?);
    }
    sync_dir(&layout.shard_path(0))?;
    // In row order: a plain scan of the table, and the bytes are in memory now.
    let mut files = 0u64;
    let mut bytes = 0u64;
    src.with_index(|i| {
        let mut st = i
            .conn()
            .prepare("SELECT shard, offset, size, crc32c, path FROM files")
            .at(i.path())?;
        let mut rows = st.query([]).at(i.path())?;
        while let Some(r) = rows.next().at(i.path())? {
            let (shard, offset, size, crc): (i64, i64, Option<i64>, Option<i64>) = (
                r.get(0).at(i.path())?,
                r.get(1).at(i.path())?,
                r.get(2).at(i.path())?,
                r.get(3).at(i.path())?,
            );
            let map = usize::try_from(shard).ok().and_then(|k| copies.get(k));
            let (Some(map), Ok(at), Ok(len)) = (
                map,
                usize::try_from(offset),
                usize::try_from(size.unwrap_or(0)),
            ) else {
                return Err(Error::corrupt(
                    i.path(),
                    format!("row at shard {shard} offset {offset} size {size:?}"),
                ));
            };
            let Some(data) = at.checked_add(len).and_then(|end| map.get(at..end)) else {
                return Err(Error::corrupt(
                    i.path(),
                    format!("row at shard {shard} offset {offset} size {size:?}"),
                ));
            };
            let actual = crc::crc32c(data);
            if let Some(expected) = crc {
                if expected != i64::from(actual) {
                    let path: String = r.get(4).at(i.path())?;
                    return Err(Error::CrcMismatch {
                        member: format!("{}: {path}", input.display()),
                        expected: expected as u32,
                        actual,
                    });
                }
            }
            files += 1;
            bytes += len as u64;
        }
        Ok(())
    })?;
    Ok((files, bytes))
}

/// The input's index, copied page by page to `temp`, with the output's shard size
/// limit and root directory metadata; synced.
fn copy_index(src: &Archive, temp: &Path, limit: u64, root: Meta) -> Result<()> {
    let _ = std::fs::remove_file(temp);
    let target = temp.to_string_lossy().into_owned();
    // A connection of its own: the archive's reads run inside a transaction, and
    // VACUUM cannot.
    let index = src.layout().index();
    rusqlite::Connection::open_with_flags(index, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .and_then(|c| c.execute("VACUUM INTO ?1", [&target]))
        .at(index)?;
    let conn = rusqlite::Connection::open(temp).at(temp)?;
    // An archive is written with the rollback journal: an input in WAL mode
    // (Python barecat's `wal=True`) must not make the output one. (SQLite writes
    // the copy of `VACUUM INTO` that way today; this keeps it so.)
    conn.execute_batch("PRAGMA journal_mode = DELETE; PRAGMA synchronous = FULL; BEGIN IMMEDIATE;")
        .at(temp)?;
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    conn.execute(
        "UPDATE config SET value_int = ?1 WHERE key = 'shard_size_limit'",
        [limit],
    )
    .at(temp)?;
    conn.execute(
        "UPDATE dirs SET mode = ?1, uid = ?2, gid = ?3, mtime_ns = ?4 WHERE path = ''",
        rusqlite::params![root.mode, root.uid, root.gid, root.mtime_ns],
    )
    .at(temp)?;
    conn.execute_batch("COMMIT").at(temp)?;
    drop(conn);
    File::open(temp)
        .and_then(|f| f.sync_all())
        .map_err(|e| Error::io(temp, e))
}
