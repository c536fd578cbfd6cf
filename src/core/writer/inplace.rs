//! Rewriting a file where its bytes are, and undoing rewrites that a kill
//! interrupted (docs/FORMAT.md §7.4).
//!
//! Why: Python barecat writes a changed file over its old bytes when the new content
//! is no longer than the old (file objects, `update_file`), and its users expect an
//! archive not to grow with every edit. An overwrite is not atomic, so it is done in
//! the commit of the batch it belongs to: until then the new bytes wait in memory
//! ([`Patches`]; the writer's own reads see them), the row already has its new size
//! and CRC in the open transaction, and the shard is untouched. The commit saves
//! the bytes about to be overwritten in an undo journal (`P-undo`) and syncs it,
//! writes the new bytes and syncs the shards, commits the rows, then removes the
//! journal. [`recover`], run by every writer when it opens an archive, puts back the
//! saved bytes of a commit that never happened: of each file whose row still has
//! the size and CRC it had before.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::ArchiveWriter;
use crate::core::crc::Crc32c;
use crate::core::entry::FileInfo;
use crate::core::error::{Error, IoContext, Result};
use crate::core::format::layout::Layout;
use crate::core::index::Index;
use crate::core::path as mpath;
use crate::core::shards;

const MAGIC: &[u8; 8] = b"BCUNDO1\n";
/// Bytes read or written at a time.
const CHUNK: usize = 1 << 20;
/// A batch commits once this many bytes of rewrites in place wait in it.
const PATCH_LIMIT: u64 = 64 << 20;

/// The new bytes of a file rewritten in place
/// ([`ArchiveWriter::rewrite_in_place`]).
#[derive(Debug, Clone, Copy)]
pub enum NewContent<'a> {
    /// `pieces` at their offsets in the file (sorted, not overlapping, within the
    /// new size); the bytes from `zeros_from` to the new size that no piece covers
    /// become zeros, the others keep their value.
    Pieces {
        /// (offset in the file, bytes).
        pieces: &'a [(u64, &'a [u8])],
        /// Where the old bytes that no piece covers stop counting.
        zeros_from: u64,
    },
    /// The whole new content, read from this file from its offset 0 (which must
    /// not change until the batch commits).
    File(&'a File),
}

/// Where the new bytes of a range come from.
enum Src {
    Bytes(Vec<u8>),
    Zeros,
    /// A file (a duplicate of the caller's descriptor), from this offset.
    File(File, u64),
}

/// A range of a file that gets new bytes, as the writer keeps it until the
/// commit.
struct Patch {
    /// Offset in the file.
    at: u64,
    len: u64,
    src: Src,
}

impl Patch {
    /// The new bytes of `[at + from, at + from + buf.len())`.
    fn fill(&self, from: u64, buf: &mut [u8]) -> io::Result<()> {
        match &self.src {
            Src::Bytes(b) => buf.copy_from_slice(&b[from as usize..from as usize + buf.len()]),
            Src::Zeros => buf.fill(0),
            Src::File(f, base) => f.read_exact_at(buf, base + from)?,
        }
        Ok(())
    }

    fn end(&self) -> u64 {
        self.at + self.len
    }
}

/// The ranges that get new bytes, sorted, their bytes copied.
fn plan(path: &str, content: NewContent<'_>, new_size: u64) -> Result<Vec<Patch>> {
    let (pieces, zeros_from) = match content {
        NewContent::File(f) => {
            if new_size == 0 {
                return Ok(Vec::new());
            }
            let src = Src::File(f.try_clone().at(path)?, 0);
            return Ok(vec![Patch {
                at: 0,
                len: new_size,
                src,
            }]);
        }
        NewContent::Pieces { pieces, zeros_from } => (pieces, zeros_from.min(new_size)),
    };
    let mut out = Vec::with_capacity(pieces.len() + 1);
    let mut pos = 0u64;
    let zeros = |out: &mut Vec<Patch>, from: u64, to: u64| {
        let from = from.max(zeros_from);
        if from < to {
            out.push(Patch {
                at: from,
                len: to - from,
                src: Src::Zeros,
            });
        }
    };
    for &(at, bytes) in pieces {
        let end = at + bytes.len() as u64;
        if at < pos || end > new_size {
            return Err(Error::InvalidOperation(format!(
                "{path}: rewrite pieces out of order or past the new size {new_size} (at \
                 {at}, {} bytes)",
                bytes.len()
            )));
        }
        if bytes.is_empty() {
            continue;
        }
        zeros(&mut out, pos, at);
        out.push(Patch {
            at,
            len: bytes.len() as u64,
            src: Src::Bytes(bytes.to_vec()),
        });
        pos = end;
    }
    zeros(&mut out, pos, new_size);
    Ok(out)
}

/// Whether `patches` cover `[0, size)` without a gap.
fn covers_all(patches: &[Patch], size: u64) -> bool {
    let mut pos = 0;
    for p in patches {
        if p.at != pos {
            return false;
        }
        pos = p.end();
    }
    pos == size
}

/// The rewrites in place of the open batch, by the place of the file's bytes
/// (shard, offset).
#[derive(Default)]
pub(super) struct Patches {
    by_place: HashMap<(u64, u64), Place>,
    bytes: u64,
}

/// The rewrites of one file's bytes in the open batch.
struct Place {
    /// The file's path (for messages).
    path: String,
    /// Its size and CRC before the first of them.
    before: (u64, u32),
    /// In the order they were made.
    patches: Vec<Patch>,
}

impl Patches {
    /// Put the waiting new bytes over `buf`, which holds the stored bytes of `fi`
    /// from `at`.
    pub(super) fn overlay(&self, fi: &FileInfo, at: u64, buf: &mut [u8]) -> Result<()> {
        let Some(Place { patches, .. }) = self.by_place.get(&(fi.shard, fi.offset)) else {
            return Ok(());
        };
        let end = at + buf.len() as u64;
        for p in patches {
            let (a, b) = (p.at.max(at), (p.at + p.len).min(end));
            if a < b {
                p.fill(a - p.at, &mut buf[(a - at) as usize..(b - at) as usize])
                    .at(&fi.path)?;
            }
        }
        Ok(())
    }

    pub(super) fn is_empty(&self) -> bool {
        self.by_place.is_empty()
    }

    /// The places, by (shard, offset).
    fn in_address_order(&self) -> Vec<(&(u64, u64), &Place)> {
        let mut places: Vec<_> = self.by_place.iter().collect();
        places.sort_unstable_by_key(|(k, _)| **k);
        places
    }

    pub(super) fn clear(&mut self) {
        self.by_place.clear();
        self.bytes = 0;
    }
}

impl ArchiveWriter {
    /// Replace the content of the file at `path` by `content`, `new_size` bytes
    /// long, over its old bytes (docs/FORMAT.md §7.4): Python barecat's placement
    /// for a changed file that did not grow. The row keeps its id, place and
    /// metadata and gets its new size and CRC in the open batch; the new bytes reach
    /// the shard when the batch commits (the writer's own reads see them at once).
    ///
    /// `expect` is the (shard, offset, size) the caller read the file at: a row
    /// that changed since is an error. Returns `None`, changing nothing, when the
    /// file cannot be rewritten in place: the new content is longer, its shard is
    /// a symbolic link, or another row shares its bytes; the caller appends the new
    /// content instead ([`begin_rewrite`](Self::begin_rewrite)). A partial rewrite
    /// of a file whose old bytes fail their CRC check is refused with
    /// [`Error::CrcMismatch`].
    pub fn rewrite_in_place(
        &mut self,
        path: &str,
        expect: Option<(u64, u64, u64)>,
        content: NewContent<'_>,
        new_size: u64,
    ) -> Result<Option<FileInfo>> {
        self.check_usable()?;
        let path = mpath::normalize(path);
        let Some((id, old)) = self.index.file_with_id(&path)? else {
            return Err(Error::NotFound(path));
        };
        if expect.is_some_and(|e| e != (old.shard, old.offset, old.size)) {
            return Err(Error::InvalidOperation(format!(
                "{path}: changed in the archive since it was opened for writing"
            )));
        }
        if new_size > old.size {
            return Ok(None);
        }
        if old.size == 0 {
            return Ok(Some(old));
        }
        if self.shard_is_link(old.shard)? || self.index.shares_bytes(id, &old)? {
            return Ok(None);
        }
        let waiting = plan(&path, content, new_size)?;
        let new_crc = if covers_all(&waiting, new_size) {
            crc_of(&path, &waiting)?
        } else {
            self.merged_crc(&old, &waiting, new_size)?
        };
        if waiting.is_empty() && new_size == old.size && old.crc32c == Some(new_crc) {
            return Ok(Some(old));
        }
        let bytes: u64 = waiting.iter().map(|p| p.len).sum();
        self.begin_batch()?;
        if let Err(e) = self.index.set_size_crc(id, new_size, new_crc) {
            return self.poison(e);
        }
        let d = self.delta(mpath::parent(&old.path).unwrap_or(""));
        d.bytes += new_size as i64 - old.size as i64;
        let entry = self
            .patches
            .by_place
            .entry((old.shard, old.offset))
            .or_insert_with(|| Place {
                path: old.path.clone(),
                before: (old.size, old.crc32c.unwrap_or(0)),
                patches: Vec::new(),
            });
        entry.patches.extend(waiting);
        self.patches.bytes += bytes;
        if let Some(b) = self.batch.as_mut() {
            b.bytes += bytes;
        }
        if self.patches.bytes >= PATCH_LIMIT {
            self.commit()?;
        } else {
            self.maybe_commit()?;
        }
        let mut fi = old;
        fi.size = new_size;
        fi.crc32c = Some(new_crc);
        Ok(Some(fi))
    }

    /// The CRC of the new content of a partial rewrite, reading the old bytes (as
    /// the writer sees them) once; their CRC is checked against the row's first.
    fn merged_crc(&mut self, old: &FileInfo, ranges: &[Patch], new_size: u64) -> Result<u32> {
        let mut new = Crc32c::new();
        let mut was = Crc32c::new();
        let mut next = 0; // the first range that may still overlap the chunk
        let mut at = 0u64;
        let mut buf = vec![0u8; CHUNK.min(old.size as usize)];
        while at < old.size {
            let n = (old.size - at).min(CHUNK as u64);
            let chunk = &mut buf[..n as usize];
            self.read_into(old, at, chunk)?;
            was.update(chunk);
            let end = at + n;
            while next < ranges.len() && ranges[next].end() <= at {
                next += 1;
            }
            for r in &ranges[next..] {
                if r.at >= end {
                    break;
                }
                let (a, b) = (r.at.max(at), r.end().min(end));
                r.fill(a - r.at, &mut chunk[(a - at) as usize..(b - at) as usize])
                    .at(&old.path)?;
            }
            if at < new_size {
                new.update(&chunk[..(new_size.min(end) - at) as usize]);
            }
            at = end;
        }
        if let Some(stored) = old.crc32c {
            if stored != was.value() {
                return Err(Error::CrcMismatch {
                    member: old.path.clone(),
                    expected: stored,
                    actual: was.value(),
                });
            }
        }
        Ok(new.value())
    }

    /// The commit's part for the batch's rewrites in place, after the appended
    /// bytes are synced and before the rows commit: save the bytes about to be
    /// overwritten in the journal (synced), write the new bytes, sync the shards.
    /// Returns the journal to remove once the rows committed.
    pub(super) fn apply_patches(&mut self) -> Result<Option<PathBuf>> {
        if self.patches.is_empty() {
            return Ok(None);
        }
        let places = self.patches.in_address_order();
        let journal = self.layout.undo_journal();
        write_journal(&journal, &self.layout, &entries_of(&places))?;
        let mut touched: HashMap<u64, (File, PathBuf)> = HashMap::new();
        // Places close to each other are written together: their span is read,
        // their new bytes put over it, and it is written back in one piece (the
        // bytes between them, other files' or holes, are written as they were).
        let mut group: Vec<(u64, &Place)> = Vec::new();
        let mut group_shard = 0;
        let mut span = 0..0u64;
        let mut buf = Vec::new();
        for (&(shard, offset), place) in places {
            let Some(extent) = place.extent(offset) else {
                continue;
            };
            let joins = !group.is_empty()
                && shard == group_shard
                && extent.start <= span.end + GROUP_GAP
                && extent.end - span.start <= GROUP_SPAN;
            if !joins {
                self.write_group(&mut touched, group_shard, &span, &group, &mut buf)?;
                group.clear();
                group_shard = shard;
                span = extent.clone();
            }
            span = span.start.min(extent.start)..span.end.max(extent.end);
            group.push((offset, place));
        }
        self.write_group(&mut touched, group_shard, &span, &group, &mut buf)?;
        for (file, path) in touched.values() {
            file.sync_data().at(path)?;
        }
        self.patches.clear();
        Ok(Some(journal))
    }
}

/// Places whose new bytes are at most this far apart are written together...
const GROUP_GAP: u64 = 16 << 10;
/// ...in spans of at most this many bytes.
const GROUP_SPAN: u64 = 1 << 20;

impl Place {
    /// The bytes of the shard that the place's rewrites cover, from the first
    /// to the end of the last (`None` for none).
    fn extent(&self, offset: u64) -> Option<std::ops::Range<u64>> {
        let start = self.patches.iter().map(|p| p.at).min()?;
        let end = self.patches.iter().map(|p| p.at + p.len).max()?;
        Some(offset + start..offset + end)
    }
}

impl ArchiveWriter {
    /// Write the new bytes of a group of places of shard `shard` whose rewrites
    /// lie in `span`: a small span is read, patched and written in one piece;
    /// a large one (a single place's big rewrite) is written a chunk at a time.
    fn write_group(
        &self,
        touched: &mut HashMap<u64, (File, PathBuf)>,
        shard: u64,
        span: &std::ops::Range<u64>,
        group: &[(u64, &Place)],
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        if group.is_empty() {
            return Ok(());
        }
        let (file, path) = match touched.entry(shard) {
            std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
            std::collections::hash_map::Entry::Vacant(v) => {
                let p = self.layout.shard_path(shard);
                let f = OpenOptions::new().read(true).write(true).open(&p).at(&p)?;
                v.insert((f, p))
            }
        };
        let len = span.end - span.start;
        if len <= GROUP_SPAN {
            buf.resize(len as usize, 0);
            if group.len() > 1 || group[0].1.patches.len() > 1 {
                // Bytes not rewritten are written back as they are.
                file.read_exact_at(buf, span.start).at(&*path)?;
            }
            for (offset, place) in group {
                for p in &place.patches {
                    let at = (offset + p.at - span.start) as usize;
                    p.fill(0, &mut buf[at..at + p.len as usize]).at(&*path)?;
                }
            }
            return file.write_all_at(buf, span.start).at(&*path);
        }
        buf.resize(CHUNK, 0);
        for (offset, place) in group {
            for p in &place.patches {
                let mut from = 0;
                while from < p.len {
                    let n = (p.len - from).min(CHUNK as u64) as usize;
                    let data: &[u8] = match &p.src {
                        Src::Bytes(b) => &b[from as usize..from as usize + n],
                        _ => {
                            p.fill(from, &mut buf[..n]).at(&*path)?;
                            &buf[..n]
                        }
                    };
                    file.write_all_at(data, offset + p.at + from).at(&*path)?;
                    from += n as u64;
                }
            }
        }
        Ok(())
    }

    /// What the journal of the batch's rewrites in place says, in address order.
    #[cfg(test)]
    fn journal_entries(&self) -> Vec<Entry> {
        entries_of(&self.patches.in_address_order())
    }
}

/// The journal's entries for `places`, in their order.
fn entries_of(places: &[(&(u64, u64), &Place)]) -> Vec<Entry> {
    places
        .iter()
        .map(|&(&(shard, offset), p)| Entry {
            path: p.path.clone(),
            shard,
            offset,
            before: p.before,
            ranges: p.patches.iter().map(|p| (p.at, p.len)).collect(),
        })
        .collect()
}

/// The CRC of ranges that cover a whole new content.
fn crc_of(path: &str, ranges: &[Patch]) -> Result<u32> {
    let mut crc = Crc32c::new();
    let mut buf = Vec::new();
    for r in ranges {
        if let Src::Bytes(b) = &r.src {
            crc.update(b);
            continue;
        }
        buf.resize(CHUNK.min(r.len as usize), 0);
        let mut from = 0;
        while from < r.len {
            let n = (r.len - from).min(CHUNK as u64) as usize;
            r.fill(from, &mut buf[..n]).at(path)?;
            crc.update(&buf[..n]);
            from += n as u64;
        }
    }
    Ok(crc.value())
}

/// One file's part of a journal: its place, its size and CRC before the batch's
/// rewrites and the ranges (offset in the file, length) whose old bytes are saved.
struct Entry {
    path: String,
    shard: u64,
    offset: u64,
    before: (u64, u32),
    ranges: Vec<(u64, u64)>,
}

/// Save the bytes the entries' ranges are about to lose in the journal; synced.
fn write_journal(journal: &Path, layout: &Layout, entries: &[Entry]) -> Result<()> {
    let file = File::create(journal).at(journal)?;
    let mut out = CrcWriter {
        inner: BufWriter::with_capacity(CHUNK, file),
        crc: Crc32c::new(),
    };
    let mut buf = vec![0u8; CHUNK];
    let put = |out: &mut CrcWriter<_>, b: &[u8]| out.write_all(b).at(journal);
    put(&mut out, MAGIC)?;
    put(&mut out, &(entries.len() as u32).to_le_bytes())?;
    let mut reader = Window::default();
    for e in entries {
        put(&mut out, &(e.path.len() as u32).to_le_bytes())?;
        put(&mut out, e.path.as_bytes())?;
        put(&mut out, &e.shard.to_le_bytes())?;
        put(&mut out, &e.offset.to_le_bytes())?;
        put(&mut out, &e.before.0.to_le_bytes())?;
        put(&mut out, &e.before.1.to_le_bytes())?;
        put(&mut out, &(e.ranges.len() as u32).to_le_bytes())?;
        for &(at, len) in &e.ranges {
            put(&mut out, &at.to_le_bytes())?;
            put(&mut out, &len.to_le_bytes())?;
            let mut from = 0;
            while from < len {
                let n = (len - from).min(CHUNK as u64) as usize;
                reader.read(layout, e.shard, e.offset + at + from, &mut buf[..n])?;
                put(&mut out, &buf[..n])?;
                from += n as u64;
            }
        }
    }
    let sum = out.crc.value();
    let mut file = out
        .inner
        .into_inner()
        .map_err(|e| e.into_error())
        .at(journal)?;
    file.write_all(&sum.to_le_bytes()).at(journal)?;
    file.sync_all().at(journal)?;
    shards::sync_dir(journal)
}

/// Bytes of shards read a window at a time: the journal's small ranges, in
/// address order, cost one read per [`WINDOW`] bytes instead of one each.
#[derive(Default)]
struct Window {
    /// The shard open, its number and path.
    file: Option<(u64, File, PathBuf)>,
    /// Where the window's bytes start in the shard, and the bytes.
    start: u64,
    data: Vec<u8>,
}

/// Bytes read at a time by [`Window`]; larger requests are read as they are.
const WINDOW: usize = 256 << 10;

impl Window {
    /// Fill `out` with the bytes of shard `shard` at `at`.
    fn read(&mut self, layout: &Layout, shard: u64, at: u64, out: &mut [u8]) -> Result<()> {
        if self.file.as_ref().is_none_or(|f| f.0 != shard) {
            let p = layout.shard_path(shard);
            let f = File::open(&p).at(&p)?;
            self.file = Some((shard, f, p));
            self.data.clear();
        }
        let (_, file, path) = self.file.as_ref().expect("opened above");
        let end = at + out.len() as u64;
        if at >= self.start && end <= self.start + self.data.len() as u64 {
            let from = (at - self.start) as usize;
            out.copy_from_slice(&self.data[from..from + out.len()]);
            return Ok(());
        }
        if out.len() > WINDOW / 4 {
            return file.read_exact_at(out, at).at(path);
        }
        // A new window from `at`; it may end early at the end of the shard.
        self.data.resize(WINDOW, 0);
        let mut got = 0;
        while got < WINDOW {
            match file.read_at(&mut self.data[got..], at + got as u64) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::io(path, e)),
            }
        }
        self.data.truncate(got);
        self.start = at;
        if got < out.len() {
            return Err(Error::io(
                path,
                io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "shard shorter than a file in it",
                ),
            ));
        }
        out.copy_from_slice(&self.data[..out.len()]);
        Ok(())
    }
}

/// A writer that sums what goes through it.
struct CrcWriter<W> {
    inner: W,
    crc: Crc32c,
}

impl<W: Write> Write for CrcWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.crc.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Finish what an interrupted commit with rewrites in place left behind, if
/// anything: put back the saved bytes of every file whose row is still what it
/// was before the commit (the commit did not happen), then remove the journal
/// (docs/FORMAT.md §7.4). A row that is anything else is left alone: the commit
/// happened, or the row changed since, and the journal is an old one (its removal
/// is not synced). Run by every writer when it opens an archive (before anything
/// else changes it) and after a rollback.
pub(crate) fn recover(layout: &Layout, index: &Index) -> Result<()> {
    let journal = layout.undo_journal();
    let data = match std::fs::read(&journal) {
        Ok(d) => d,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(&journal, e)),
    };
    // A journal cut short was being written before any shard was touched: there is
    // nothing to undo.
    for e in parse(&data).unwrap_or_default() {
        let now = index.file_at(e.shard, e.offset)?;
        if now.is_none_or(|f| (f.size, f.crc32c.unwrap_or(0)) != e.before) {
            continue;
        }
        let shard_path = layout.shard_path(e.shard);
        if shards::is_link(&shard_path) {
            return Err(Error::InvalidOperation(format!(
                "{}: names shard {}, a symbolic link; not undone (remove the journal to go on)",
                journal.display(),
                shard_path.display()
            )));
        }
        let shard = OpenOptions::new()
            .write(true)
            .open(&shard_path)
            .at(&shard_path)?;
        for (at, bytes) in &e.ranges {
            shard.write_all_at(bytes, e.offset + at).at(&shard_path)?;
        }
        shard.sync_data().at(&shard_path)?;
        log::info!("{}: an interrupted rewrite in place was undone", e.path);
    }
    std::fs::remove_file(&journal).at(&journal)?;
    shards::sync_dir(&journal)
}

/// A journal entry as read back: the saved bytes are slices of the journal.
struct Saved<'a> {
    path: String,
    shard: u64,
    offset: u64,
    before: (u64, u32),
    ranges: Vec<(u64, &'a [u8])>,
}

/// The entries of the journal in `data`, or `None` when it is cut short or
/// damaged.
fn parse<'a>(data: &'a [u8]) -> Option<Vec<Saved<'a>>> {
    let (body, sum) = data.split_at_checked(data.len().checked_sub(4)?)?;
    if crate::core::crc::crc32c(body) != u32::from_le_bytes(sum.try_into().ok()?) {
        return None;
    }
    let mut r = body.strip_prefix(MAGIC)?;
    let mut take = |n: usize| -> Option<&'a [u8]> {
        let (a, b) = r.split_at_checked(n)?;
        r = b;
        Some(a)
    };
    let u32_ = |b: &[u8]| u32::from_le_bytes(b.try_into().expect("4 bytes"));
    let u64_ = |b: &[u8]| u64::from_le_bytes(b.try_into().expect("8 bytes"));
    let count = u32_(take(4)?);
    let mut out = Vec::new();
    for _ in 0..count {
        let n = u32_(take(4)?) as usize;
        let path = String::from_utf8_lossy(take(n)?).into_owned();
        let shard = u64_(take(8)?);
        let offset = u64_(take(8)?);
        let size = u64_(take(8)?);
        let crc = u32_(take(4)?);
        let k = u32_(take(4)?);
        let mut ranges = Vec::new();
        for _ in 0..k {
            let at = u64_(take(8)?);
            let len = usize::try_from(u64_(take(8)?)).ok()?;
            ranges.push((at, take(len)?));
        }
        out.push(Saved {
            path,
            shard,
            offset,
            before: (size, crc),
            ranges,
        });
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::entry::Meta;
    use crate::core::writer::{CreateMode, WriterOptions};
    use crate::Archive;

    fn pieces_plan(pieces: &[(u64, &[u8])], zeros_from: u64, size: u64) -> Vec<(u64, u64, u8)> {
        plan("f", NewContent::Pieces { pieces, zeros_from }, size)
            .unwrap()
            .iter()
            .map(|r| {
                let kind = match &r.src {
                    Src::Bytes(_) => b'b',
                    Src::Zeros => b'z',
                    Src::File(..) => b'f',
                };
                (r.at, r.len, kind)
            })
            .collect()
    }

    #[test]
    fn plans_fill_the_gaps_past_zeros_from_with_zeros() {
        assert_eq!(pieces_plan(&[(2, b"ab")], 10, 10), vec![(2, 2, b'b')]);
        assert_eq!(
            pieces_plan(&[(2, b"ab")], 3, 10),
            vec![(2, 2, b'b'), (4, 6, b'z')]
        );
        assert_eq!(
            pieces_plan(&[(2, b"ab"), (8, b"c")], 0, 10),
            vec![
                (0, 2, b'z'),
                (2, 2, b'b'),
                (4, 4, b'z'),
                (8, 1, b'b'),
                (9, 1, b'z')
            ]
        );
        for bad in [&[(4, &b"ab"[..]), (2, b"ab")][..], &[(9, b"ab")]] {
            let content = NewContent::Pieces {
                pieces: bad,
                zeros_from: 10,
            };
            assert!(plan("f", content, 10).is_err());
        }
    }

    const OLD: &[u8] = b"the old content of the file";
    /// `OLD` after [`patch`].
    const NEW: &[u8] = b"the NEW content of t\0\0";

    fn archive(dir: &Path) -> PathBuf {
        let p = dir.join("a.barecat");
        let mut w = ArchiveWriter::open(&p, WriterOptions::with_mode(CreateMode::New)).unwrap();
        w.add_file("x", Meta::default(), b"before", None).unwrap();
        w.add_file("f", Meta::default(), OLD, None).unwrap();
        w.add_file("y", Meta::default(), b"after", None).unwrap();
        w.finish().unwrap();
        p
    }

    fn append(p: &Path) -> ArchiveWriter {
        ArchiveWriter::open(p, WriterOptions::with_mode(CreateMode::Append)).unwrap()
    }

    fn content(p: &Path) -> Vec<u8> {
        let a = Archive::open(p).unwrap();
        assert_eq!(a.read("x").unwrap(), b"before");
        assert_eq!(a.read("y").unwrap(), b"after");
        a.read("f").unwrap()
    }

    /// Rewrite "f" in place into `NEW` (in the open batch).
    fn patch(w: &mut ArchiveWriter) -> Option<FileInfo> {
        let content = NewContent::Pieces {
            pieces: &[(4, b"NEW")],
            zeros_from: 20,
        };
        w.rewrite_in_place("f", None, content, 22).unwrap()
    }

    /// A commit with a rewrite in place, stopped as a kill would stop it:
    /// `steps` = 1 journal written, 2 shard written too, 3 rows committed too.
    fn interrupted(p: &Path, steps: u32) {
        let mut w = append(p);
        assert!(patch(&mut w).is_some());
        assert_eq!(
            w.read_file(&w.index.file("f").unwrap().unwrap()).unwrap(),
            NEW
        );
        w.shards.sync().unwrap();
        let journal = if steps == 1 {
            let entries = w.journal_entries();
            write_journal(&w.layout.undo_journal(), &w.layout, &entries).unwrap();
            w.patches.clear();
            None
        } else {
            w.apply_patches().unwrap()
        };
        if steps >= 3 {
            w.commit().unwrap();
        }
        assert!(journal.is_none_or(|j| j.exists()));
        // Dropped without removing the journal, as a kill leaves it.
    }

    #[test]
    fn a_writer_opening_the_archive_finishes_an_interrupted_commit() {
        for (steps, want) in [(1, OLD), (2, OLD), (3, NEW)] {
            let dir = tempfile::tempdir().unwrap();
            let p = archive(dir.path());
            interrupted(&p, steps);
            let journal = Layout::current(&p).undo_journal();
            assert!(journal.exists());
            drop(append(&p));
            assert!(!journal.exists(), "steps {steps}");
            assert_eq!(content(&p), want, "steps {steps}");
        }
    }

    #[test]
    fn rewrites_reach_the_shard_with_the_commit_and_never_without_it() {
        let dir = tempfile::tempdir().unwrap();
        let p = archive(dir.path());
        let mut w = append(&p);
        let fi = patch(&mut w).unwrap();
        assert_eq!(
            (fi.size, fi.crc32c),
            (22, Some(crate::core::crc::crc32c(NEW)))
        );
        // Twice in one batch: the second sees the first.
        let again = NewContent::Pieces {
            pieces: &[(0, b"T")],
            zeros_from: 100,
        };
        assert!(w.rewrite_in_place("f", None, again, 22).unwrap().is_some());
        assert_eq!(
            w.read_at(&w.index.file("f").unwrap().unwrap(), 0, 5)
                .unwrap(),
            b"The N"
        );
        assert_eq!(content(&p), OLD); // other readers: the committed state
        drop(w); // not committed: nothing happened
        assert_eq!(content(&p), OLD);
        assert!(!Layout::current(&p).undo_journal().exists());
        let mut w = append(&p);
        patch(&mut w).unwrap();
        w.finish().unwrap();
        assert_eq!(content(&p), NEW);
        assert!(!Layout::current(&p).undo_journal().exists());
    }

    #[test]
    fn many_rewrites_close_together_commit_as_they_were_made() {
        // Neighbouring files rewritten in one batch are written in groups (a span
        // read, patched and written back): every file ends with its own new bytes,
        // the files between them untouched, overlapping rewrites in their order.
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.barecat");
        let mut w = ArchiveWriter::open(&p, WriterOptions::with_mode(CreateMode::New)).unwrap();
        let body = |i: usize| vec![b'a' + (i % 26) as u8; 3000 + i];
        for i in 0..200 {
            w.add_file(&format!("f{i:03}"), Meta::default(), &body(i), None)
                .unwrap();
        }
        w.finish().unwrap();
        let mut w = append(&p);
        let mut want: Vec<Vec<u8>> = (0..200).map(body).collect();
        for i in (0..200).filter(|i| i % 3 != 1) {
            let at = (i * 7) % 2900;
            let patch = vec![b'#'; 50];
            let content = NewContent::Pieces {
                pieces: &[(at as u64, &patch)],
                zeros_from: u64::MAX,
            };
            let size = want[i].len() as u64;
            let fi = w.rewrite_in_place(&format!("f{i:03}"), None, content, size);
            assert!(fi.unwrap().is_some());
            want[i][at..at + 50].fill(b'#');
            if i % 10 == 0 {
                // Again, overlapping the first, and shorter.
                let content = NewContent::Pieces {
                    pieces: &[(at as u64 + 25, b"XYZ")],
                    zeros_from: u64::MAX,
                };
                let fi = w.rewrite_in_place(&format!("f{i:03}"), None, content, size - 1);
                assert!(fi.unwrap().is_some());
                want[i][at + 25..at + 28].copy_from_slice(b"XYZ");
                want[i].pop();
            }
        }
        w.finish().unwrap();
        assert!(!Layout::current(&p).undo_journal().exists());
        let a = Archive::open(&p).unwrap();
        for (i, want) in want.iter().enumerate() {
            assert_eq!(&a.read(&format!("f{i:03}")).unwrap(), want, "f{i:03}");
        }
    }

    #[test]
    fn an_old_journal_that_comes_back_changes_nothing() {
        // A committed rewrite whose journal removal was lost (a power loss), after
        // which the file changed again: the journal no longer applies.
        let dir = tempfile::tempdir().unwrap();
        let p = archive(dir.path());
        interrupted(&p, 3);
        let journal = Layout::current(&p).undo_journal();
        let kept = dir.path().join("kept");
        std::fs::rename(&journal, &kept).unwrap();
        let mut w = append(&p);
        let again = NewContent::Pieces {
            pieces: &[(0, b"T")],
            zeros_from: 100,
        };
        assert!(w.rewrite_in_place("f", None, again, 22).unwrap().is_some());
        w.finish().unwrap();
        let now = b"The NEW content of t\0\0";
        assert_eq!(content(&p), now);
        std::fs::rename(&kept, &journal).unwrap();
        drop(append(&p));
        assert!(!journal.exists());
        assert_eq!(content(&p), now);
    }

    #[test]
    fn a_journal_cut_short_is_dropped_and_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let p = archive(dir.path());
        interrupted(&p, 1);
        let journal = Layout::current(&p).undo_journal();
        let len = std::fs::metadata(&journal).unwrap().len();
        OpenOptions::new()
            .write(true)
            .open(&journal)
            .unwrap()
            .set_len(len - 3)
            .unwrap();
        drop(append(&p));
        assert!(!journal.exists());
        assert_eq!(content(&p), OLD);
    }

    #[test]
    fn rewrites_that_cannot_be_done_in_place_change_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let p = archive(dir.path());
        let mut w = append(&p);
        let grow = NewContent::Pieces {
            pieces: &[],
            zeros_from: 0,
        };
        assert!(w.rewrite_in_place("f", None, grow, 100).unwrap().is_none());
        let stale = w.rewrite_in_place("f", Some((0, 1, 2)), grow, 1);
        assert!(matches!(stale, Err(Error::InvalidOperation(_))));
        assert!(matches!(
            w.rewrite_in_place("nope", None, grow, 0),
            Err(Error::NotFound(_))
        ));
        // A second row over the same bytes (not something our writers make).
        let (_, f) = w.index.file_with_id("f").unwrap().unwrap();
        let mut twin = f.clone();
        twin.path = "twin".into();
        w.index.insert_file(&twin, None).unwrap();
        assert!(w.rewrite_in_place("f", None, grow, 1).unwrap().is_none());
        drop(w);
        assert!(!Layout::current(&p).undo_journal().exists());
        assert_eq!(content(&p), OLD);
    }

    #[test]
    fn journals_parse_back_and_damage_is_seen() {
        let mut body = MAGIC.to_vec();
        body.extend_from_slice(&1u32.to_le_bytes());
        body.extend_from_slice(&1u32.to_le_bytes());
        body.extend_from_slice(b"p");
        body.extend_from_slice(&1u64.to_le_bytes());
        body.extend_from_slice(&2u64.to_le_bytes());
        body.extend_from_slice(&5u64.to_le_bytes());
        body.extend_from_slice(&6u32.to_le_bytes());
        body.extend_from_slice(&1u32.to_le_bytes());
        body.extend_from_slice(&7u64.to_le_bytes());
        body.extend_from_slice(&2u64.to_le_bytes());
        body.extend_from_slice(b"xy");
        let mut data = body.clone();
        data.extend_from_slice(&crate::core::crc::crc32c(&body).to_le_bytes());
        let j = parse(&data).unwrap();
        assert_eq!(j.len(), 1);
        assert_eq!((j[0].path.as_str(), j[0].shard, j[0].offset), ("p", 1, 2));
        assert_eq!(j[0].before, (5, 6));
        assert_eq!(j[0].ranges, vec![(7, &b"xy"[..])]);
        for cut in 0..data.len() {
            assert!(parse(&data[..cut]).is_none(), "cut at {cut}");
        }
        let mut bad = data.clone();
        bad[20] ^= 1;
        assert!(parse(&bad).is_none());
    }
}
