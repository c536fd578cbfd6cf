//! Tar streams: plain or compressed (gzip, bzip2, xz, zstd: recognized by magic
//! bytes), ustar, GNU and PAX headers.
//!
//! * Regular files (also contiguous files and GNU sparse files, stored with their
//!   logical content) become files; PAX sparse files (formats 0.0, 0.1 and 1.0, as
//!   GNU tar writes them) are decoded the same way and stored under their real name.
//! * Directories become directory rows with their metadata, in whatever order they
//!   come: a directory listed after its contents, or twice, updates the metadata of
//!   the existing row and keeps its counters.
//! * Hard links become files holding a copy of their target's content (the target
//!   must be an earlier member).
//! * Symbolic links are skipped and counted, or reported ([`SymlinkPolicy`]);
//!   device files and FIFOs are skipped and counted.
//! * Metadata: `mode` is the header's permission bits with the file-type bits added
//!   (`S_IFREG`/`S_IFDIR`, as for file-system imports), `uid`/`gid` from the header
//!   (or PAX), `mtime_ns` from the PAX `mtime` record when present, parsed exactly
//!   as a decimal (nanoseconds kept), else the header's seconds.
//! * Absolute member names and names that keep a `..` after normalization are
//!   reported and not stored; so are names that are not UTF-8.
//!
//! A stream that is corrupt or ends early stops the import with a clear error;
//! every member before it has been added and is committed.

use std::cell::Cell;
use std::io::{self, Read};
use std::rc::Rc;

use crossbeam_channel::{bounded, Receiver};

use super::decompress::{self, Compression};
use super::pipeline::{self, Chunk, Item, Outlet, Skip, CHUNK};
use super::{Event, IngestOptions, Problem, Summary, SymlinkPolicy};
use crate::crc;
use crate::entry::{Meta, S_IFDIR, S_IFREG};
use crate::error::{Error, Result};
use crate::index::Index;
use crate::path as mpath;
use crate::writer::ArchiveWriter;

pub(crate) fn run(
    w: &mut ArchiveWriter,
    input: impl Read + Send,
    name: &str,
    opts: &IngestOptions,
    sink: &mut dyn FnMut(Event),
) -> Result<Summary> {
    // The producer's own read connection sees the committed rows; files added in
    // the open batch are caught by the writer (see `Apply::writer_error`).
    let existing = if opts.skip_existing {
        Some(w.layout().index().to_path_buf())
    } else {
        None
    };
    pipeline::run_sequential(w, opts, sink, move |out: &Outlet| {
        let index = match existing.as_deref().map(Index::open_read).transpose() {
            Ok(i) => i,
            Err(e) => {
                out.send_small(0, Item::Fatal(e));
                return;
            }
        };
        let (kind, stream) = match decompress::open(input) {
            Ok(x) => x,
            Err(e) => {
                out.send_small(
                    0,
                    Item::Fatal(input_error(name, format!("cannot read: {e}"))),
                );
                return;
            }
        };
        let mut p = Parser {
            name,
            opts,
            out,
            index,
            seq: 0,
            threshold: opts.stream_threshold(),
        };
        if kind == Compression::None {
            p.parse(stream, kind);
        } else {
            // Decompress on a thread of its own, so that inflating overlaps with
            // parsing, checksumming and writing.
            std::thread::scope(|s| {
                let (tx, rx) = bounded::<io::Result<Vec<u8>>>(4);
                pipeline::spawn(s, "bc-decompress", move || pump(stream, tx));
                p.parse(ChannelReader::new(rx), kind);
            });
        }
    })
}

fn input_error(name: &str, detail: impl Into<String>) -> Error {
    Error::Input {
        path: name.to_string(),
        detail: detail.into(),
    }
}

/// Read `src` in blocks into `tx` until the end, an error, or the receiver leaving.
fn pump(mut src: impl Read, tx: crossbeam_channel::Sender<io::Result<Vec<u8>>>) {
    loop {
        let mut buf = vec![0u8; 1 << 20];
        let mut n = 0;
        while n < buf.len() {
            match src.read(&mut buf[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            }
        }
        if n == 0 {
            return;
        }
        buf.truncate(n);
        if tx.send(Ok(buf)).is_err() {
            return;
        }
    }
}

struct ChannelReader {
    rx: Receiver<io::Result<Vec<u8>>>,
    cur: Vec<u8>,
    pos: usize,
}

impl ChannelReader {
    fn new(rx: Receiver<io::Result<Vec<u8>>>) -> ChannelReader {
        ChannelReader {
            rx,
            cur: Vec::new(),
            pos: 0,
        }
    }
}

impl Read for ChannelReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.cur.len() {
            match self.rx.recv() {
                Ok(Ok(b)) => {
                    self.cur = b;
                    self.pos = 0;
                }
                Ok(Err(e)) => return Err(e),
                Err(_) => return Ok(0),
            }
        }
        let n = buf.len().min(self.cur.len() - self.pos);
        buf[..n].copy_from_slice(&self.cur[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// The most the tar parser may read while looking for the next member: its header
/// and the metadata members before it (PAX extended headers, GNU long names and
/// links), which the `tar` crate holds in memory whole. Real ones are a few KB; a
/// compressed stream could otherwise make a few KB of input claim gigabytes.
const MAX_HEADER_BYTES: u64 = 16 << 20;

/// Where the tar parser stands in the stream.
#[derive(Clone, Copy, Default)]
struct Track {
    /// Bytes consumed.
    pos: u64,
    /// The stream ended.
    eof: bool,
    /// Inside the parser's search for the next member, and the bytes read in it.
    in_header: bool,
    header_bytes: u64,
}

/// Counts the bytes the tar parser consumed, notes whether the stream ended, and
/// bounds what one member's headers may take.
struct Tracked<R> {
    inner: R,
    state: Rc<Cell<Track>>,
}

impl<R: Read> Read for Tracked<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut t = self.state.get();
        if t.in_header && t.header_bytes >= MAX_HEADER_BYTES {
            return Err(io::Error::other(format!(
                "a member's headers (PAX extended header or GNU long name) exceed {} MiB",
                MAX_HEADER_BYTES >> 20
            )));
        }
        let n = self.inner.read(buf)?;
        t.pos += n as u64;
        t.eof |= n == 0 && !buf.is_empty();
        if t.in_header {
            t.header_bytes += n as u64;
        }
        self.state.set(t);
        Ok(n)
    }
}

struct Parser<'a, 'o> {
    name: &'a str,
    opts: &'a IngestOptions,
    out: &'a Outlet<'o>,
    index: Option<Index>,
    seq: u64,
    threshold: u64,
}

/// PAX records of one member, owned, in order (format 0.0 sparse maps repeat keys).
#[derive(Debug, Default)]
struct Pax(Vec<(String, Vec<u8>)>);

impl Pax {
    /// The last value of `key`.
    fn get(&self, key: &str) -> Option<&Vec<u8>> {
        self.0.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

/// How a member's content is laid out.
enum Layout {
    Plain,
    /// PAX sparse: (offset, length) segments of the logical file, and its size.
    Sparse {
        segments: Vec<(u64, u64)>,
        real_size: u64,
        /// Format 1.0 keeps the map at the start of the data.
        map_in_data: bool,
    },
}

impl Parser<'_, '_> {
    /// Send an item under the next sequence number; false once the writer is gone.
    fn send(&mut self, item: Item) -> bool {
        let ok = self.out.send_small(self.seq, item);
        self.seq += 1;
        ok
    }

    fn problem(&mut self, path: &str, detail: impl Into<String>) -> bool {
        self.send(Item::Problem(Problem::new(path, detail)))
    }

    fn fatal(&mut self, detail: String) {
        self.send(Item::Fatal(input_error(self.name, detail)));
    }

    fn parse<R: Read>(&mut self, stream: R, kind: Compression) {
        let state = Rc::new(Cell::new(Track::default()));
        let mut archive = tar::Archive::new(Tracked {
            inner: stream,
            state: state.clone(),
        });
        let mut members = 0u64;
        let mut entries = match archive.entries() {
            Ok(e) => e,
            Err(e) => return self.fatal(format!("cannot read: {e}")),
        };
        let set_in_header = |on: bool| {
            let mut t = state.get();
            t.in_header = on;
            t.header_bytes = 0;
            state.set(t);
        };
        loop {
            set_in_header(true);
            let next = entries.next();
            set_in_header(false);
            let Some(entry) = next else { break };
            let mut entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    let at = state.get().pos;
                    let what = if members == 0 && kind == Compression::None {
                        format!("not a tar archive, or an unsupported compression ({e})")
                    } else {
                        format!("corrupt or truncated {} tar at byte {at}: {e}", kind.name())
                    };
                    return self.fatal(what);
                }
            };
            members += 1;
            if !self.member(&mut entry) {
                return;
            }
            // Skip what was not read of the member here, so that the parser's
            // search for the next one reads nothing but headers. An error shows
            // again, and is reported, at the next member.
            let _ = io::copy(&mut entry, &mut io::sink());
        }
        let Track { pos: at, eof, .. } = state.get();
        if eof {
            let detail = if members == 0 && at == 0 {
                "empty input: not a tar archive".to_string()
            } else {
                format!(
                    "input ends at byte {at} without an end-of-archive marker: \
                     the tar is probably truncated"
                )
            };
            self.fatal(detail);
        }
    }

    /// Handle one member. False when the run is over (fatal error or writer gone).
    fn member<R: Read>(&mut self, entry: &mut tar::Entry<'_, R>) -> bool {
        let pax: Pax = match entry.pax_extensions() {
            Ok(Some(exts)) => Pax(exts
                .filter_map(|e| e.ok())
                .filter_map(|e| Some((e.key().ok()?.to_string(), e.value_bytes().to_vec())))
                .collect()),
            Ok(None) => Pax::default(),
            Err(e) => {
                self.fatal(format!("corrupt PAX header: {e}"));
                return false;
            }
        };
        let header = entry.header();
        let etype = header.entry_type();
        let raw_name = match pax.get("GNU.sparse.name") {
            Some(n) => n.clone(),
            None => entry.path_bytes().into_owned(),
        };
        let shown = String::from_utf8_lossy(&raw_name).into_owned();
        let mode = header.mode().ok().map(|m| m & 0o7777);
        let meta = Meta {
            mode,
            uid: header.uid().ok().and_then(|u| u32::try_from(u).ok()),
            gid: header.gid().ok().and_then(|g| u32::try_from(g).ok()),
            mtime_ns: mtime_ns(&pax, header),
        };
        use tar::EntryType as T;
        let is_dir = matches!(etype, T::Directory)
            || etype.as_byte() == b'D'
            || (matches!(etype, T::Regular | T::Continuous) && raw_name.ends_with(b"/"));
        let kind = if is_dir {
            Kind::Dir
        } else {
            match etype {
                T::Regular | T::Continuous | T::GNUSparse => Kind::File,
                T::Link => Kind::HardLink,
                T::Symlink => Kind::Symlink,
                T::Char | T::Block | T::Fifo => Kind::Special,
                T::XGlobalHeader => return self.send(Item::Skipped(Skip::Quiet)),
                other if other.as_byte() == b'V' => return self.send(Item::Skipped(Skip::Quiet)),
                other => {
                    let c = other.as_byte();
                    let detail = if c.is_ascii_graphic() {
                        format!("unsupported tar entry type '{}'; skipped", c as char)
                    } else {
                        format!("unsupported tar entry type {c}; skipped")
                    };
                    return self.problem(&shown, detail);
                }
            }
        };
        match kind {
            Kind::Symlink => {
                return match self.opts.symlinks {
                    SymlinkPolicy::Skip => self.send(Item::Skipped(Skip::Symlink)),
                    SymlinkPolicy::Error => {
                        let target = entry
                            .link_name_bytes()
                            .map(|t| String::from_utf8_lossy(&t).into_owned())
                            .unwrap_or_default();
                        self.problem(&shown, format!("symbolic link to {target:?}; skipped"))
                    }
                };
            }
            Kind::Special => return self.send(Item::Skipped(Skip::Special)),
            _ => {}
        }
        let Some(path) = self.member_path(&raw_name, &shown) else {
            return !self.out.aborted();
        };
        let Some(path) = path else {
            return self.send(Item::Skipped(Skip::Quiet));
        };
        match kind {
            Kind::Dir => {
                let meta = Meta {
                    mode: mode.map(|m| m | S_IFDIR),
                    ..meta
                };
                if self.exists(&path, true) {
                    return self.send(Item::Skipped(Skip::Quiet));
                }
                self.send(Item::Dir { path, meta })
            }
            Kind::HardLink => {
                let target = entry.link_name_bytes().map(|t| t.into_owned());
                let target = target.as_deref().map(std::str::from_utf8);
                let meta = Meta {
                    mode: mode.map(|m| m | S_IFREG),
                    ..meta
                };
                let target = match target {
                    Some(Ok(t)) if mpath::unsafe_reason(t).is_none() => {
                        let t = mpath::normalize(t);
                        mpath::strip_components(&t, self.opts.strip_components).map(str::to_string)
                    }
                    Some(Ok(t)) => {
                        return self.problem(
                            &shown,
                            format!("hard link to {t:?}, outside the archive root; skipped"),
                        )
                    }
                    _ => None,
                };
                let Some(target) = target else {
                    return self.problem(&shown, "hard link without a usable target; skipped");
                };
                if self.exists(&path, false) {
                    return self.send(Item::Skipped(Skip::Existing));
                }
                self.send(Item::HardLink {
                    path,
                    target,
                    meta,
                    shown,
                })
            }
            Kind::File => {
                let meta = Meta {
                    mode: mode.map(|m| m | S_IFREG),
                    ..meta
                };
                if path.is_empty() {
                    return self.problem(
                        &shown,
                        "a file cannot be stored at the archive root; skipped",
                    );
                }
                if self.exists(&path, false) {
                    return self.send(Item::Skipped(Skip::Existing));
                }
                let layout = match sparse_layout(&pax) {
                    Ok(l) => l,
                    Err(detail) => return self.problem(&shown, format!("{detail}; skipped")),
                };
                self.file(entry, path, meta, layout, &shown)
            }
            Kind::Symlink | Kind::Special => unreachable!("handled above"),
        }
    }

    /// The stored path of a member: `None` after reporting a problem, `Some(None)`
    /// when it is filtered or stripped away.
    fn member_path(&mut self, raw: &[u8], shown: &str) -> Option<Option<String>> {
        let Ok(text) = std::str::from_utf8(raw) else {
            self.problem(shown, "member name is not valid UTF-8; skipped");
            return None;
        };
        if let Some(reason) = mpath::unsafe_reason(text) {
            self.problem(shown, format!("{reason}; not stored"));
            return None;
        }
        let norm = mpath::normalize(text);
        if !norm.is_empty() && !self.opts.filter.selects(&norm) {
            return Some(None);
        }
        if norm.is_empty() {
            return Some((self.opts.strip_components == 0).then(String::new));
        }
        Some(mpath::strip_components(&norm, self.opts.strip_components).map(str::to_string))
    }

    fn exists(&self, path: &str, dir: bool) -> bool {
        match &self.index {
            Some(i) if dir => i.is_dir(path).unwrap_or(false),
            Some(i) => i.is_file(path).unwrap_or(false),
            None => false,
        }
    }

    fn file<R: Read>(
        &mut self,
        entry: &mut tar::Entry<'_, R>,
        path: String,
        meta: Meta,
        layout: Layout,
        shown: &str,
    ) -> bool {
        let stored_size = entry.size();
        let mut sparse;
        let (src, size): (&mut dyn Read, u64) = match layout {
            Layout::Plain => (entry, stored_size),
            Layout::Sparse {
                segments,
                real_size,
                map_in_data,
            } => {
                sparse =
                    match SparseReader::new(entry, stored_size, segments, real_size, map_in_data) {
                        Ok(r) => r,
                        Err(SparseError::Map(d)) => {
                            return self.problem(shown, format!("{d}; skipped"))
                        }
                        Err(SparseError::Io(e)) => {
                            self.fatal(format!("error inside member {shown:?}: {e}"));
                            return false;
                        }
                    };
                (&mut sparse, real_size)
            }
        };
        let seq = self.seq;
        self.seq += 1;
        if size <= self.threshold {
            let Some(ticket) = self.out.reserve(seq, size) else {
                return false;
            };
            let mut data = Vec::with_capacity(size as usize);
            match (&mut *src).take(size).read_to_end(&mut data) {
                Ok(n) if n as u64 == size => {
                    let crc = crc::crc32c(&data);
                    self.out.send(
                        seq,
                        Item::File {
                            path,
                            meta,
                            data,
                            crc,
                        },
                        ticket,
                    )
                }
                Ok(n) => {
                    self.out.send(seq, Item::Skipped(Skip::Quiet), ticket);
                    self.fatal(format!(
                        "input ends inside member {shown:?} ({n} of {size} bytes): \
                         the tar is truncated"
                    ));
                    false
                }
                Err(e) => {
                    self.out.send(seq, Item::Skipped(Skip::Quiet), ticket);
                    self.fatal(format!("error inside member {shown:?}: {e}"));
                    false
                }
            }
        } else {
            let Some(ticket) = self.out.reserve(seq, 0) else {
                return false;
            };
            let (tx, rx) = bounded::<Chunk>(2);
            let item = Item::Stream {
                path,
                meta,
                size,
                chunks: rx,
            };
            if !self.out.send(seq, item, ticket) {
                return false;
            }
            let mut left = size;
            while left > 0 {
                let n = left.min(CHUNK as u64);
                let mut chunk = Vec::with_capacity(n as usize);
                let detail = match (&mut *src).take(n).read_to_end(&mut chunk) {
                    Ok(k) if k as u64 == n => None,
                    Ok(_) => Some(format!(
                        "input ends inside member {shown:?}: the tar is truncated"
                    )),
                    Err(e) => Some(format!("error inside member {shown:?}: {e}")),
                };
                if let Some(detail) = detail {
                    let _ = tx.send(Chunk::Failed(Problem::new(
                        shown,
                        "input ends or fails inside this member; not stored",
                    )));
                    drop(tx);
                    self.fatal(detail);
                    return false;
                }
                left -= n;
                if tx.send(Chunk::Data(chunk)).is_err() {
                    // The writer refused the file (a duplicate, …): skip its data.
                    return !self.out.aborted();
                }
            }
            true
        }
    }
}

enum Kind {
    Dir,
    File,
    HardLink,
    Symlink,
    Special,
}

/// Modification time: the PAX `mtime` record (decimal seconds, parsed exactly) when
/// present, else the header's whole seconds.
fn mtime_ns(pax: &Pax, header: &tar::Header) -> Option<i64> {
    if let Some(v) = pax.get("mtime").and_then(|v| std::str::from_utf8(v).ok()) {
        if let Some(ns) = parse_decimal_ns(v) {
            return Some(ns);
        }
    }
    header.mtime().ok().map(|s| {
        i64::try_from(s)
            .unwrap_or(i64::MAX / 1_000_000_000)
            .saturating_mul(1_000_000_000)
    })
}

/// `"1700000000.123456789"` → nanoseconds, without going through a float. Digits
/// beyond nanoseconds are cut; a negative value (before 1970) is allowed.
pub(crate) fn parse_decimal_ns(text: &str) -> Option<i64> {
    let t = text.trim();
    let (neg, t) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t),
    };
    let (int, frac) = t.split_once('.').unwrap_or((t, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    if !int.bytes().all(|b| b.is_ascii_digit()) || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let secs: i64 = if int.is_empty() { 0 } else { int.parse().ok()? };
    let mut ns: i64 = 0;
    for (i, b) in frac.bytes().take(9).enumerate() {
        ns += (b - b'0') as i64 * 10i64.pow(8 - i as u32);
    }
    let total = secs.checked_mul(1_000_000_000)?.checked_add(ns)?;
    Some(if neg { -total } else { total })
}

fn pax_str<'p>(pax: &'p Pax, key: &str) -> Option<&'p str> {
    pax.get(key).and_then(|v| std::str::from_utf8(v).ok())
}

fn pax_u64(pax: &Pax, key: &str) -> Result<Option<u64>, String> {
    match pax_str(pax, key) {
        None => Ok(None),
        Some(v) => v
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| format!("bad PAX record {key}={v:?}")),
    }
}

/// Recognize the PAX sparse formats of GNU tar (0.0, 0.1, 1.0).
fn sparse_layout(pax: &Pax) -> Result<Layout, String> {
    if !pax.0.iter().any(|(k, _)| k.starts_with("GNU.sparse.")) {
        return Ok(Layout::Plain);
    }
    let major = pax_str(pax, "GNU.sparse.major").map(str::trim);
    let minor = pax_str(pax, "GNU.sparse.minor").map(str::trim);
    if major == Some("1") && minor == Some("0") {
        let real_size = pax_u64(pax, "GNU.sparse.realsize")?
            .ok_or("PAX sparse file (format 1.0) without GNU.sparse.realsize")?;
        return Ok(Layout::Sparse {
            segments: Vec::new(),
            real_size,
            map_in_data: true,
        });
    }
    if major.is_some() || minor.is_some() {
        return Err(format!(
            "PAX sparse format {}.{} is not supported",
            major.unwrap_or("?"),
            minor.unwrap_or("?")
        ));
    }
    let real_size = pax_u64(pax, "GNU.sparse.size")?
        .or(pax_u64(pax, "GNU.sparse.realsize")?)
        .ok_or("PAX sparse file without its real size")?;
    let numbers: Vec<u64> = if let Some(map) = pax_str(pax, "GNU.sparse.map") {
        // Format 0.1: "offset,size,offset,size,…".
        if map.trim().is_empty() {
            Vec::new()
        } else {
            map.split(',')
                .map(|n| n.trim().parse::<u64>())
                .collect::<Result<_, _>>()
                .map_err(|_| "bad GNU.sparse.map".to_string())?
        }
    } else {
        // Format 0.0: GNU.sparse.offset / GNU.sparse.numbytes records, in pairs.
        let mut v = Vec::new();
        for (k, val) in &pax.0 {
            let key = k.as_str();
            if key == "GNU.sparse.offset" || key == "GNU.sparse.numbytes" {
                let n: u64 = std::str::from_utf8(val)
                    .ok()
                    .and_then(|t| t.trim().parse().ok())
                    .ok_or_else(|| format!("bad PAX record {key}"))?;
                let expect_offset = v.len() % 2 == 0;
                if expect_offset != (key == "GNU.sparse.offset") {
                    return Err("GNU.sparse.offset and numbytes records out of order".into());
                }
                v.push(n);
            }
        }
        v
    };
    if !numbers.len().is_multiple_of(2) {
        return Err("GNU.sparse.map has an odd number of values".into());
    }
    Ok(Layout::Sparse {
        segments: numbers.chunks(2).map(|c| (c[0], c[1])).collect(),
        real_size,
        map_in_data: false,
    })
}

enum SparseError {
    /// The sparse map is unusable (the member is skipped).
    Map(String),
    /// Reading the input failed.
    Io(io::Error),
}

/// The logical content of a PAX sparse member: zeros for holes, the stored data for
/// the segments.
struct SparseReader<'r> {
    inner: &'r mut dyn Read,
    segments: std::vec::IntoIter<(u64, u64)>,
    /// Current segment, as (start, end) in the logical file.
    cur: Option<(u64, u64)>,
    pos: u64,
    size: u64,
}

impl<'r> SparseReader<'r> {
    fn new(
        inner: &'r mut dyn Read,
        stored: u64,
        mut segments: Vec<(u64, u64)>,
        size: u64,
        map_in_data: bool,
    ) -> Result<SparseReader<'r>, SparseError> {
        let mut map_bytes = 0u64;
        if map_in_data {
            let (s, used) = read_sparse_map(inner).map_err(|e| match e.kind() {
                io::ErrorKind::InvalidData => SparseError::Map(e.to_string()),
                _ => SparseError::Io(e),
            })?;
            segments = s;
            map_bytes = used;
        }
        let mut end = 0u64;
        let mut data = 0u64;
        for &(off, len) in &segments {
            let stop = off.checked_add(len);
            match stop {
                Some(stop) if off >= end && stop <= size => end = stop,
                _ => return Err(SparseError::Map("invalid sparse map".into())),
            }
            data += len;
        }
        if map_bytes + data > stored {
            return Err(SparseError::Map(
                "sparse map lists more data than the member holds".into(),
            ));
        }
        Ok(SparseReader {
            inner,
            segments: segments.into_iter(),
            cur: None,
            pos: 0,
            size,
        })
    }
}

/// Read the decimal map at the start of a format 1.0 sparse member: the number of
/// segments, then offset and size of each, one per line, padded to 512 bytes.
/// Returns the segments and the bytes consumed.
fn read_sparse_map(r: &mut dyn Read) -> io::Result<(Vec<(u64, u64)>, u64)> {
    let bad = |m: &str| io::Error::new(io::ErrorKind::InvalidData, m.to_string());
    let mut block = [0u8; 512];
    let mut used = 0u64;
    let mut numbers: Vec<u64> = Vec::new();
    let mut want: Option<usize> = None;
    let mut cur = String::new();
    loop {
        r.read_exact(&mut block).map_err(|e| {
            if e.kind() == io::ErrorKind::UnexpectedEof {
                bad("sparse map cut short")
            } else {
                e
            }
        })?;
        used += 512;
        for &b in block.iter() {
            if b == b'\n' {
                let n: u64 = cur.parse().map_err(|_| bad("bad number in sparse map"))?;
                cur.clear();
                match want {
                    None => {
                        if n > 1 << 24 {
                            return Err(bad("sparse map too large"));
                        }
                        want = Some(2 * n as usize);
                    }
                    Some(_) => numbers.push(n),
                }
                if want == Some(numbers.len()) {
                    let segs = numbers.chunks(2).map(|c| (c[0], c[1])).collect();
                    return Ok((segs, used));
                }
            } else if b.is_ascii_digit() && cur.len() < 20 {
                cur.push(b as char);
            } else {
                return Err(bad("bad sparse map"));
            }
        }
    }
}

impl Read for SparseReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pos >= self.size || buf.is_empty() {
            return Ok(0);
        }
        loop {
            match self.cur {
                Some((_, end)) if self.pos >= end => self.cur = None,
                Some((start, end)) if self.pos >= start => {
                    let n = (buf.len() as u64).min(end - self.pos) as usize;
                    let k = self.inner.read(&mut buf[..n])?;
                    if k == 0 {
                        return Err(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            "sparse data cut short",
                        ));
                    }
                    self.pos += k as u64;
                    return Ok(k);
                }
                Some((start, _)) => {
                    let n = (buf.len() as u64).min(start - self.pos) as usize;
                    buf[..n].fill(0);
                    self.pos += n as u64;
                    return Ok(n);
                }
                None => match self.segments.next() {
                    Some((off, len)) if len > 0 => self.cur = Some((off, off + len)),
                    Some(_) => {}
                    None => {
                        // A hole up to the end of the file.
                        self.cur = Some((self.size, self.size));
                        let n = (buf.len() as u64).min(self.size - self.pos) as usize;
                        buf[..n].fill(0);
                        self.pos += n as u64;
                        return Ok(n);
                    }
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_times_keep_nanoseconds() {
        assert_eq!(
            parse_decimal_ns("1700000000.123456789"),
            Some(1_700_000_000_123_456_789)
        );
        assert_eq!(
            parse_decimal_ns("1700000000.5"),
            Some(1_700_000_000_500_000_000)
        );
        assert_eq!(
            parse_decimal_ns("1700000000"),
            Some(1_700_000_000_000_000_000)
        );
        assert_eq!(parse_decimal_ns("1.0000000019"), Some(1_000_000_001));
        assert_eq!(parse_decimal_ns("-1.5"), Some(-1_500_000_000));
        assert_eq!(parse_decimal_ns("x"), None);
        assert_eq!(parse_decimal_ns("."), None);
        assert_eq!(parse_decimal_ns("99999999999999999999"), None);
    }

    #[test]
    fn sparse_reader_fills_holes() {
        let data = b"AAAABB";
        let mut src: &[u8] = data;
        let mut r = SparseReader::new(&mut src, 6, vec![(2, 4), (8, 2)], 12, false)
            .ok()
            .unwrap();
        let mut out = Vec::new();
        r.read_to_end(&mut out).unwrap();
        assert_eq!(out, b"\0\0AAAA\0\0BB\0\0");
    }

    #[test]
    fn sparse_map_of_format_1_0() {
        let mut block = b"2\n0\n3\n10\n2\n".to_vec();
        block.resize(512, 0);
        // Padding is NUL bytes after the map: they are outside the parsed lines.
        let (segs, used) = read_sparse_map(&mut &block[..]).unwrap();
        assert_eq!(segs, vec![(0, 3), (10, 2)]);
        assert_eq!(used, 512);
    }
}
