//! Tar import: the members of a tar stream (plain or compressed: gzip, bzip2, xz,
//! zstd, recognized by magic bytes) become files and directories, as read by
//! [`super::tar_reader::TarReader`] (every header format, and the rules
//! for the archives other tools wrote over the years, are described there).
//!
//! * Regular files (also contiguous files, sparse files with their logical
//!   content, and members of unknown types, which GNU tar, bsdtar and `tarfile`
//!   extract as files: with a note) become files.
//! * Directories become directory rows with their metadata, in whatever order they
//!   come: a directory listed after its contents, or twice, updates the metadata of
//!   the existing row and keeps its counters.
//! * Hard links become files holding a copy of their target's content (the target
//!   must be an earlier member).
//! * Symbolic links are skipped and counted, or reported ([`SymlinkPolicy`]);
//!   device files and FIFOs are skipped and counted; volume labels are ignored.
//! * Several members of one name: see [`Duplicates`](super::Duplicates).
//! * Metadata: `mode` is the header's permission bits with the file-type bits added
//!   (`S_IFREG`/`S_IFDIR`, as for file-system imports), `uid`/`gid` from the header
//!   (or PAX), `mtime_ns` from the PAX `mtime` record when present, parsed exactly
//!   as a decimal (nanoseconds kept), else the header's seconds.
//! * Absolute member names and names that keep a `..` after normalization are
//!   reported and not stored; so are names that are not UTF-8 (shown with their
//!   bytes escaped, see [`crate::core::path::printable`]).
//!
//! A damaged header is reported and reading goes on at the next valid header. A
//! stream that ends early or cannot be decompressed stops the import with a clear
//! error; every member before it has been added and is committed.

use std::fs::File;
use std::io::{self, Read};

use crossbeam_channel::{bounded, Receiver};

use super::decompress::{self, Compression};
use super::formats::names;
use super::pipeline::{self, Chunk, Item, Outlet, Skip, CHUNK};
use super::tar_reader::{ends_inside, Member, MemberKind, Record, TarError, TarReader};
use super::{Event, IngestOptions, Problem, Summary, SymlinkPolicy};
use crate::core::crc;
use crate::core::entry::{Meta, S_IFDIR, S_IFREG};
use crate::core::error::{Error, Result};
use crate::core::index::Index;
use crate::core::path::{self as mpath, printable};
use crate::core::readahead;
use crate::core::writer::ArchiveWriter;

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
        let (kind, stream, notes) = match decompress::open_noted(input) {
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
            out: Out::Pipe(out),
            index,
            seq: 0,
            threshold: opts.stream_threshold(),
            in_place: false,
            bad_names: 0,
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
            let notes = std::mem::take(&mut *notes.lock().unwrap_or_else(|e| e.into_inner()));
            for note in notes {
                if !p.notice(name.as_bytes(), &note) {
                    break;
                }
            }
        }
    })
}

/// Index the members of the uncompressed tar `file` where they lie (`--wrap`): each
/// regular file becomes a row pointing at its data in shard 0, which the caller
/// makes a link to `file`, with the CRC32C of those bytes. The rules of
/// [`TarReader`] and of this module apply, and so do the duplicate, filter and
/// strip options; members whose bytes in the tar are not their content (sparse
/// files) and hard links (which have no bytes of their own) are reported and
/// skipped. The caller checks that `file` is not compressed.
///
/// The headers are read on one thread, seeking over member data; the data is
/// read and checksummed by `opts.workers` threads, member by member (at most two
/// are useful: the checksum runs at several GB/s).
pub(crate) fn run_in_place(
    w: &mut ArchiveWriter,
    file: &File,
    name: &str,
    opts: &IngestOptions,
    sink: &mut dyn FnMut(Event),
) -> Result<Summary> {
    readahead::advise_sequential(file);
    pipeline::run_parallel(
        w,
        opts,
        sink,
        move |emit: &mut dyn FnMut(Task) -> bool| {
            let headers = match file.try_clone() {
                Ok(f) => f,
                Err(e) => {
                    let e = input_error(name, format!("cannot read: {}", super::io_reason(&e)));
                    emit(Task::Item(Item::Fatal(e)));
                    return;
                }
            };
            let mut p = Parser {
                name,
                opts,
                out: Out::Tasks {
                    emit,
                    file,
                    ahead: readahead::Window::new(0, IN_PLACE_AHEAD, IN_PLACE_AHEAD / 4),
                },
                index: None,
                seq: 0,
                threshold: opts.stream_threshold(),
                in_place: true,
                bad_names: 0,
            };
            // A small buffer: every seek over member data drops it, and what it holds beyond
            // the header would be read twice.
            let tar = TarReader::new_seekable(io::BufReader::with_capacity(2048, headers));
            p.parse_tar(tar, Compression::None);
        },
        || {
            let mut buf = vec![0u8; IN_PLACE_READ];
            move |seq, task, out: &Outlet| {
                let item = match task {
                    Task::Item(item) => item,
                    Task::Data {
                        path,
                        meta,
                        offset,
                        size,
                        shown,
                    } => match crc_at(file, &mut buf, offset, size) {
                        Ok(Ok(crc)) => Item::Extent {
                            path,
                            meta,
                            shard: 0,
                            offset,
                            size,
                            crc,
                        },
                        Ok(Err(n)) => Item::Fatal(input_error(
                            name,
                            format!(
                                "input ends inside member \"{}\" ({n} of {size} bytes): the \
                                 tar is truncated",
                                printable(&shown)
                            ),
                        )),
                        Err(e) => Item::Fatal(input_error(
                            name,
                            format!(
                                "cannot read member \"{}\": {}",
                                printable(&shown),
                                super::io_reason(&e)
                            ),
                        )),
                    },
                };
                out.send_small(seq, item);
            }
        },
    )
}

/// Member data is checksummed in reads of this size…
const IN_PLACE_READ: usize = 1 << 20;
/// …with the kernel asked to read this far ahead, in steps of a quarter of it.
const IN_PLACE_AHEAD: u64 = 64 << 20;

/// What the header reader of a tar indexed in place hands to the checksumming
/// threads.
enum Task {
    /// Nothing to read: passed on as it is.
    Item(Item),
    /// A member whose `size` bytes at `offset` are its content.
    Data {
        path: String,
        meta: Meta,
        offset: u64,
        size: u64,
        shown: String,
    },
}

/// CRC32C of `len` bytes of `file` at `offset`; `Ok(Err(n))` when the file ends
/// after `n` of them.
fn crc_at(
    file: &File,
    buf: &mut [u8],
    offset: u64,
    len: u64,
) -> io::Result<std::result::Result<u32, u64>> {
    let mut crc = crc::Crc32c::new();
    let mut done = 0u64;
    while done < len {
        let n = (len - done).min(buf.len() as u64) as usize;
        let got = loop {
            match std::os::unix::fs::FileExt::read_at(file, &mut buf[..n], offset + done) {
                Ok(k) => break k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        };
        if got == 0 {
            return Ok(Err(done));
        }
        crc.update(&buf[..got]);
        done += got as u64;
    }
    Ok(Ok(crc.value()))
}

/// Where the parser's items go.
enum Out<'a, 'o> {
    /// Straight to the writer (the member data travels with them).
    Pipe(&'a Outlet<'o>),
    /// To the threads that checksum member data in place (`--wrap`); the parser
    /// asks the kernel to read ahead of them.
    Tasks {
        emit: &'a mut dyn FnMut(Task) -> bool,
        file: &'a File,
        /// What the kernel was asked to read ahead.
        ahead: readahead::Window,
    },
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

struct Parser<'a, 'o> {
    name: &'a str,
    opts: &'a IngestOptions,
    out: Out<'a, 'o>,
    index: Option<Index>,
    seq: u64,
    threshold: u64,
    /// Indexing the tar in place (`--wrap`) instead of copying member data.
    in_place: bool,
    /// Member names that are not UTF-8 (and not decoded by `--name-encoding`).
    bad_names: u64,
}

impl<'a, 'o> Parser<'a, 'o> {
    /// Send an item under the next sequence number; false once the writer is gone.
    fn send(&mut self, item: Item) -> bool {
        let ok = match &mut self.out {
            Out::Pipe(out) => out.send_small(self.seq, item),
            Out::Tasks { emit, .. } => emit(Task::Item(item)),
        };
        self.seq += 1;
        ok
    }

    /// The writer stopped (an error, or strict mode).
    fn aborted(&self) -> bool {
        match &self.out {
            Out::Pipe(out) => out.aborted(),
            // Known at the next task sent.
            Out::Tasks { .. } => false,
        }
    }

    /// The outlet of the (sequential) pipeline.
    fn outlet(&self) -> &'a Outlet<'o> {
        match self.out {
            Out::Pipe(out) => out,
            Out::Tasks { .. } => unreachable!("member data is copied only through the pipe"),
        }
    }

    fn problem(&mut self, name: &[u8], detail: impl Into<String>) -> bool {
        self.send(Item::Problem(Problem::new(name, detail)))
    }

    fn notice(&mut self, name: &[u8], detail: &str) -> bool {
        self.send(Item::Notice(format!("{}: {detail}", printable(name))))
    }

    fn fatal(&mut self, detail: String) {
        self.send(Item::Fatal(input_error(self.name, detail)));
    }

    fn parse<R: Read>(&mut self, stream: R, kind: Compression) {
        self.parse_tar(TarReader::new(stream), kind);
    }

    fn parse_tar<R: Read>(&mut self, mut tar: TarReader<R>, kind: Compression) {
        loop {
            let record = match tar.next() {
                Ok(Some(r)) => r,
                Ok(None) => break,
                Err(e) => return self.fatal(describe(e, kind, tar.position())),
            };
            let go_on = match record {
                Record::Member(m) => self.member(&mut tar, *m),
                Record::Damaged(d) => {
                    let detail = format!(
                        "damaged header at byte {} ({}; its name field reads \"{}\"): the member \
                         it starts is lost; reading goes on at byte {}",
                        d.at,
                        d.detail,
                        printable(&d.name_guess),
                        d.resumed_at
                    );
                    let name = self.name.to_string();
                    self.problem(name.as_bytes(), detail)
                }
            };
            if !go_on {
                return;
            }
        }
        let name = self.name.to_string();
        for note in tar.take_notes() {
            if !self.notice(name.as_bytes(), &note) {
                return;
            }
        }
        if self.bad_names > 0 {
            let hint = names::hint(self.bad_names);
            if !self.notice(name.as_bytes(), &hint) {
                return;
            }
        }
        if let Some(at) = tar.missing_end() {
            let detail = format!(
                "the tar ends at byte {at} after a complete member, without its \
                 end-of-archive blocks (GNU tar, bsdtar and Python's tarfile read it so; \
                 it may also be cut short at a member boundary)"
            );
            if self.opts.strict {
                return self.fatal(format!("{detail}; --strict refuses it"));
            }
            self.notice(name.as_bytes(), &format!("warning: {detail}"));
        }
    }

    /// Handle one member. False when the run is over (fatal error or writer gone).
    fn member<R: Read>(&mut self, tar: &mut TarReader<R>, m: Member) -> bool {
        let raw = &m.name;
        for note in &m.notes {
            if !self.notice(raw, note) {
                return false;
            }
        }
        for d in &m.disputed {
            if !self.problem(raw, d.as_str()) {
                return false;
            }
        }
        if let Some(p) = &m.problem {
            return self.problem(raw, format!("{p}; skipped"));
        }
        let meta = Meta {
            mode: m.mode,
            uid: m.uid.and_then(|u| u32::try_from(u).ok()),
            gid: m.gid.and_then(|g| u32::try_from(g).ok()),
            mtime_ns: m.mtime_ns,
        };
        match m.kind {
            MemberKind::Symlink => {
                return match self.opts.symlinks {
                    SymlinkPolicy::Skip => self.send(Item::Skipped(Skip::Symlink)),
                    SymlinkPolicy::Error => {
                        let target = printable(m.link.as_deref().unwrap_or_default());
                        let detail = format!("symbolic link to \"{target}\"; skipped");
                        self.problem(raw, detail)
                    }
                };
            }
            MemberKind::CharDevice | MemberKind::BlockDevice | MemberKind::Fifo => {
                return self.send(Item::Skipped(Skip::Special))
            }
            MemberKind::VolumeLabel => return self.send(Item::Skipped(Skip::Quiet)),
            MemberKind::Continuation => {
                return self.problem(
                    raw,
                    "continues a file from an earlier volume of a multi-volume archive; skipped",
                )
            }
            MemberKind::Unknown(c) => {
                let shown = if c.is_ascii_graphic() {
                    format!("'{}'", c as char)
                } else {
                    format!("{c}")
                };
                let note = format!(
                    "unknown tar entry type {shown}: stored as a regular file, as GNU tar, \
                     bsdtar and Python's tarfile extract it"
                );
                if !self.notice(raw, &note) {
                    return false;
                }
            }
            _ => {}
        }
        let Some(path) = self.member_path(raw) else {
            return !self.aborted();
        };
        let Some(path) = path else {
            return self.send(Item::Skipped(Skip::Quiet));
        };
        // Valid UTF-8: checked by `member_path`.
        let shown = String::from_utf8_lossy(raw).into_owned();
        match m.kind {
            MemberKind::Dir => {
                let meta = Meta {
                    mode: meta.mode.map(|m| m | S_IFDIR),
                    ..meta
                };
                if self.exists(&path, true) {
                    return self.send(Item::Skipped(Skip::Quiet));
                }
                self.send(Item::Dir { path, meta })
            }
            MemberKind::HardLink => {
                let target = m
                    .link
                    .as_deref()
                    .map(|l| names::decode_name(l, self.opts.name_encoding));
                let meta = Meta {
                    mode: meta.mode.map(|m| m | S_IFREG),
                    ..meta
                };
                let target = match target {
                    Some(Ok(t)) if mpath::unsafe_reason(&t).is_none() => {
                        let t = mpath::normalize(&t);
                        mpath::strip_components(&t, self.opts.strip_components)
                            .map(|p| mpath::join(&self.opts.prefix, p))
                    }
                    Some(Ok(t)) => {
                        let detail = format!(
                            "hard link to \"{}\", outside the archive root; skipped",
                            printable(&t)
                        );
                        return self.problem(raw, detail);
                    }
                    Some(Err(_)) => {
                        let detail = format!(
                            "hard link to \"{}\", a name that is not UTF-8; skipped",
                            printable(m.link.as_deref().unwrap_or_default())
                        );
                        return self.problem(raw, detail);
                    }
                    None => return self.problem(raw, "hard link without a target; skipped"),
                };
                let Some(target) = target else {
                    return self.problem(
                        raw,
                        "hard link to a member removed by --strip-components; skipped",
                    );
                };
                if self.in_place {
                    let detail = format!(
                        "hard link to \"{}\": it has no bytes of its own in the tar, so it \
                         cannot be indexed in place (convert without --wrap to store a copy); \
                         skipped",
                        printable(&target)
                    );
                    return self.problem(raw, detail);
                }
                if path.is_empty() {
                    return self
                        .problem(raw, "a file cannot be stored at the archive root; skipped");
                }
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
            _ => {
                let meta = Meta {
                    mode: meta.mode.map(|m| m | S_IFREG),
                    ..meta
                };
                if path.is_empty() {
                    return self
                        .problem(raw, "a file cannot be stored at the archive root; skipped");
                }
                if self.exists(&path, false) {
                    return self.send(Item::Skipped(Skip::Existing));
                }
                if self.in_place {
                    return self.in_place(&m, path, meta, shown);
                }
                self.file(tar, path, meta, m.size, &shown)
            }
        }
    }

    /// The stored path of a member: `None` after reporting a problem, `Some(None)`
    /// when it is filtered or stripped away.
    fn member_path(&mut self, raw: &[u8]) -> Option<Option<String>> {
        let text = match names::decode_name(raw, self.opts.name_encoding) {
            Ok(t) => t,
            Err(detail) => {
                self.bad_names += 1;
                self.problem(raw, detail);
                return None;
            }
        };
        let text = text.as_str();
        if let Some(reason) = mpath::unsafe_reason(text) {
            self.problem(raw, format!("{reason}; not stored"));
            return None;
        }
        let norm = mpath::normalize(text);
        if !norm.is_empty() && !self.opts.filter.selects(&norm) {
            return Some(None);
        }
        let stored = if norm.is_empty() {
            (self.opts.strip_components == 0).then(String::new)
        } else {
            mpath::strip_components(&norm, self.opts.strip_components).map(str::to_string)
        };
        Some(stored.and_then(|p| self.opts.place(&norm, p)))
    }

    fn exists(&self, path: &str, dir: bool) -> bool {
        match &self.index {
            Some(i) if dir => i.is_dir(path).unwrap_or(false),
            Some(i) => i.is_file(path).unwrap_or(false),
            None => false,
        }
    }

    /// Index the current member's data where it lies in the tar (`--wrap`): hand
    /// it to the checksumming threads.
    fn in_place(&mut self, m: &Member, path: String, meta: Meta, shown: String) -> bool {
        // The bytes in the tar are the content only when they are all of it, in
        // one piece: not for a sparse file with holes.
        let whole = m.data_len == m.size
            && m.sparse.as_ref().is_none_or(|map| {
                map.iter()
                    .filter(|(_, len)| *len > 0)
                    .all(|&(off, len)| off == 0 && len == m.size)
            });
        if !whole {
            return self.problem(
                &m.name,
                "sparse file: the tar holds its data segments, not its whole content, so \
                 it cannot be indexed in place (convert without --wrap to store it); skipped",
            );
        }
        let Out::Tasks { emit, file, ahead } = &mut self.out else {
            unreachable!("indexing in place goes through tasks");
        };
        // Ask the kernel to read ahead of the checksumming threads.
        let (at, end) = (m.data_offset, m.data_offset + m.data_len);
        ahead.advance(file, at, end);
        self.seq += 1;
        emit(Task::Data {
            path,
            meta,
            offset: m.data_offset,
            size: m.size,
            shown,
        })
    }

    /// Send the content (`size` bytes) of the current member as a file.
    fn file<R: Read>(
        &mut self,
        tar: &mut TarReader<R>,
        path: String,
        meta: Meta,
        size: u64,
        shown: &str,
    ) -> bool {
        let out = self.outlet();
        let mut src = tar.content();
        let seq = self.seq;
        self.seq += 1;
        let cut = |e: io::Error| {
            if ends_inside(&e) {
                format!(
                    "input ends inside member \"{}\": the tar is truncated",
                    printable(shown)
                )
            } else {
                format!("error inside member \"{}\": {e}", printable(shown))
            }
        };
        if size <= self.threshold {
            let Some(ticket) = out.reserve(seq, size) else {
                return false;
            };
            let mut data = Vec::with_capacity(size as usize);
            match (&mut src).take(size).read_to_end(&mut data) {
                Ok(n) if n as u64 == size => {
                    let crc = crc::crc32c(&data);
                    out.send(
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
                    out.send(seq, Item::Skipped(Skip::Quiet), ticket);
                    self.fatal(format!(
                        "input ends inside member \"{}\" ({n} of {size} bytes): \
                         the tar is truncated",
                        printable(shown)
                    ));
                    false
                }
                Err(e) => {
                    out.send(seq, Item::Skipped(Skip::Quiet), ticket);
                    self.fatal(cut(e));
                    false
                }
            }
        } else {
            let Some(ticket) = out.reserve(seq, 0) else {
                return false;
            };
            let (tx, rx) = bounded::<Chunk>(2);
            let item = Item::Stream {
                path,
                meta,
                size,
                chunks: rx,
            };
            if !out.send(seq, item, ticket) {
                return false;
            }
            let mut left = size;
            while left > 0 {
                let n = left.min(CHUNK as u64);
                let mut chunk = Vec::with_capacity(n as usize);
                let detail = match (&mut src).take(n).read_to_end(&mut chunk) {
                    Ok(k) if k as u64 == n => None,
                    Ok(_) => Some(format!(
                        "input ends inside member \"{}\": the tar is truncated",
                        printable(shown)
                    )),
                    Err(e) => Some(cut(e)),
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
                    return !self.aborted();
                }
            }
            true
        }
    }
}

/// A reader error as the one-line detail of the input's error.
fn describe(e: TarError, kind: Compression, at: u64) -> String {
    match e {
        TarError::Empty => e.to_string(),
        TarError::NotTar(d) if kind == Compression::None => {
            format!("not a tar archive, or an unsupported compression ({d})")
        }
        TarError::NotTar(d) => format!("not a tar archive inside the {} stream ({d})", kind.name()),
        TarError::Truncated { detail, .. } | TarError::Corrupt { detail, .. } => {
            format!("corrupt or truncated {} tar: {detail}", kind.name())
        }
        TarError::Io(e) => format!("corrupt or truncated {} tar at byte {at}: {e}", kind.name()),
    }
}
