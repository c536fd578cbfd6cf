//! Tar streams read block by block: headers, extended headers and member data, with
//! the exact offset of every member's data in the (decompressed) stream.
//!
//! This is the one tar reader of the crate: `from-tar`, `merge` with tar inputs and
//! anything that indexes a tar in place build on [`TarReader`]. It reads the
//! 512-byte header blocks itself and uses the `tar` crate only for the layout of a
//! header (the ustar prefix, the GNU sparse fields). The `tar` crate's `Entries`
//! iteration cannot be driven safely on archives written by other tools over the
//! years: it always skips as many data blocks as a header's size field says, also
//! for directories, hard links and the other types that carry no data (a directory
//! header with a size swallows the headers after it, and the members they start
//! are lost without a word), it accepts only unsigned header checksums, it ignores
//! Solaris `X` extended headers, and it stops at the first damaged header. Fixing
//! that from outside would mean re-parsing every header it already parsed; reading
//! the blocks here is shorter and lets every rule below be stated and tested once.
//!
//! What the reference readers do, and what this reader does (each rule has a
//! crafted fixture in `tests/it/ingest/tar_compat.rs`, checked against GNU tar 1.34, bsdtar
//! 3.6 and Python's `tarfile`):
//!
//! * **A size on a header whose type carries no data** (hard link `1`, symbolic link
//!   `2`, character and block devices `3`/`4`, directory `5`, FIFO `6`, volume
//!   label `V`, and a regular-file type whose name ends in `/`). The readers differ:
//!   all three ignore the size of a directory; GNU tar and `tarfile` ignore it for a
//!   hard link, but bsdtar reads that many data bytes in a PAX archive; GNU tar
//!   honours the size of symbolic links, devices and FIFOs (skipping that many
//!   bytes), bsdtar and `tarfile` do not; GNU tar and `tarfile` honour it for a
//!   volume label, bsdtar does not; for `0` with a trailing slash GNU tar and
//!   `tarfile` skip the data and bsdtar does not, and for NUL-type with a trailing
//!   slash GNU tar skips it and the other two do not. When there is data, the
//!   readers that ignore the size stumble on it instead (bsdtar and GNU tar skip
//!   ahead to the next header with an error, `tarfile` stops reading there).
//!   Whatever a reader decides wrongly costs the members after it. So this reader
//!   looks at the block after such a header: when it is a valid header, zeros (the
//!   end of the archive) or the end of the input, the member has no data (every
//!   member after it is read, as bsdtar and `tarfile` read them); otherwise data
//!   blocks follow and are skipped (as GNU tar does), with a note; where one
//!   reference reader would take those bytes for a file's content (bsdtar for a
//!   hard link in a PAX archive, `tarfile` for a regular-file type named like a
//!   directory) the member is read as the other two read it and the bytes are
//!   reported ([`Member::disputed`]).
//! * **Header checksums**: the unsigned sum of the header bytes, or the signed sum
//!   that old HP-UX and V7 tars wrote; both are accepted, as GNU tar, bsdtar and
//!   `tarfile` accept them.
//! * **Extended headers**: PAX `x` and Solaris `X` (the same format, as GNU tar and
//!   `tarfile` treat it) apply to the next member; PAX `g` records apply to every
//!   later member for the keys `mtime`, `uid` and `gid` (over the header's fields;
//!   a member's own records win over them); GNU `L`/`K` long names and links. PAX `path`, `linkpath`,
//!   `size`, `mtime` (exactly, to the nanosecond), `uid`, `gid` override the header.
//!   Solaris `A` entries hold the ACL of the next member: metadata, never a file
//!   (as bsdtar reads them; their text is not kept).
//!   At most [`MAX_METADATA`] bytes of extended headers per member are held.
//! * **Sparse files**: old GNU (`S`, with extension blocks) and PAX 0.0, 0.1, 1.0;
//!   [`Member::sparse`] holds the map and [`TarReader::content`] yields the logical
//!   content (holes as zeros).
//! * **Unknown types** carry the data their size says (all three readers agree).
//! * **A damaged header** (a bad checksum, an unreadable size) after the first
//!   member: the reader reports it as [`Record::Damaged`] and goes on with the next
//!   block that is a valid header, as GNU tar ("Skipping to next header") and
//!   bsdtar ("Retrying") do (`tarfile` stops there). A damaged first header means
//!   the input is not a tar.
//! * **The end**: the first zero block ends the archive (as in all three readers).
//!   An input that ends right after a complete member, without the zero blocks,
//!   ends it too (all three read such a tar; [`TarReader::missing_end`] tells).
//!   Up to [`TRAILER_SCAN`] bytes after it are read: a lone zero block followed by
//!   data, or non-zero bytes after the end-of-archive marker (another tar appended,
//!   which only `tar --ignore-zeros` reads), are noted ([`TarReader::take_notes`]).
//!   Reading on also lets a decompressor check its trailer.

use std::io::{self, Read, Seek, SeekFrom};

/// Size of a tar block.
pub const BLOCK: u64 = 512;
/// The most a member's extended headers (PAX, GNU long names, sparse extension
/// blocks) may take, headers included. Real ones are a few KB; a compressed stream
/// could otherwise make a few KB of input claim gigabytes of memory.
pub const MAX_METADATA: u64 = 16 << 20;
/// How far past the end-of-archive marker the reader looks for data that would
/// otherwise go unnoticed.
pub const TRAILER_SCAN: u64 = 1 << 20;

/// What a member is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberKind {
    /// A regular file (types `0`, NUL, `7`, old GNU sparse `S`, PAX sparse), or a
    /// hard link that carries its own data.
    File,
    /// A directory (type `5`, GNU dumpdir `D`, or a regular-file type whose name ends
    /// in `/`).
    Dir,
    /// A hard link (type `1`) to [`Member::link`].
    HardLink,
    /// A symbolic link (type `2`) to [`Member::link`].
    Symlink,
    /// A character device (type `3`).
    CharDevice,
    /// A block device (type `4`).
    BlockDevice,
    /// A named pipe (type `6`).
    Fifo,
    /// A GNU volume label (`V`).
    VolumeLabel,
    /// The rest of a file continued from a previous volume (GNU `M`).
    Continuation,
    /// A type this reader does not know; its data is read as the size says.
    Unknown(u8),
}

impl MemberKind {
    fn of(typeflag: u8) -> MemberKind {
        match typeflag {
            b'0' | 0 | b'7' | b'S' => MemberKind::File,
            b'1' => MemberKind::HardLink,
            b'2' => MemberKind::Symlink,
            b'3' => MemberKind::CharDevice,
            b'4' => MemberKind::BlockDevice,
            b'5' | b'D' => MemberKind::Dir,
            b'6' => MemberKind::Fifo,
            b'V' => MemberKind::VolumeLabel,
            b'M' => MemberKind::Continuation,
            c => MemberKind::Unknown(c),
        }
    }
}

/// One member of a tar stream.
#[derive(Debug, Clone)]
pub struct Member {
    /// The name, raw: `GNU.sparse.name`, else PAX `path`, else the GNU long name,
    /// else the header's name (with the ustar prefix). Not normalized.
    pub name: Vec<u8>,
    /// Link target of a hard or symbolic link, raw (PAX `linkpath`, GNU long link,
    /// or the header).
    pub link: Option<Vec<u8>>,
    /// What the member is.
    pub kind: MemberKind,
    /// The header's type flag byte.
    pub typeflag: u8,
    /// Permission bits (`mode & 0o7777`), when the field is readable.
    pub mode: Option<u32>,
    /// Owner user id (PAX `uid`, else the header), when readable.
    pub uid: Option<u64>,
    /// Owner group id (PAX `gid`, else the header), when readable.
    pub gid: Option<u64>,
    /// PAX `mtime` (exact), else the header's seconds.
    pub mtime_ns: Option<i64>,
    /// Size of the content: the logical size of a sparse file; 0 for members
    /// without data.
    pub size: u64,
    /// Offset in the stream of the member's first header block (extended headers
    /// included).
    pub header_offset: u64,
    /// Offset in the stream of the member's stored data (for a PAX 1.0 sparse file,
    /// after the map at its start).
    pub data_offset: u64,
    /// Bytes of stored data at `data_offset` (without the padding to a block). For
    /// a plain file this is `size`; for a sparse file, the segments back to back.
    pub data_len: u64,
    /// Sparse map of the logical content: (offset, length) segments, stored back to
    /// back at `data_offset`; the rest is zeros.
    pub sparse: Option<Vec<(u64, u64)>>,
    /// The member's own PAX records (`x`/`X`), in order.
    pub pax: Vec<(String, Vec<u8>)>,
    /// Things worth telling about this member that change nothing stored (data
    /// blocks skipped after a directory header, …).
    pub notes: Vec<String>,
    /// Bytes of this member that a reference reader takes for a file's content and
    /// this reader does not (data after a hard link header, …): the member is read
    /// as the other readers read it, and each of these is worth an error.
    pub disputed: Vec<String>,
    /// Why the member's content cannot be read (an unusable sparse map, a malformed
    /// extended header), when it cannot; its data is still skipped correctly.
    pub problem: Option<String>,
}

/// A damaged stretch of the stream that the reader skipped.
#[derive(Debug, Clone)]
pub struct Damage {
    /// Offset of the damaged header block.
    pub at: u64,
    /// Offset where reading went on: the next valid header or the end of the archive.
    pub resumed_at: u64,
    /// The name field of the damaged header, raw (it may be garbage).
    pub name_guess: Vec<u8>,
    /// What was wrong with it.
    pub detail: String,
}

/// What [`TarReader::next`] found.
#[derive(Debug)]
pub enum Record {
    /// The next member; its data is read (or skipped) before the one after.
    Member(Box<Member>),
    /// A stretch that could not be read as members; reading goes on after it.
    Damaged(Damage),
}

/// Why reading cannot go on.
#[derive(Debug, thiserror::Error)]
pub enum TarError {
    /// The underlying stream failed (an I/O error, a corrupt compressed stream).
    #[error("{0}")]
    Io(#[from] io::Error),
    /// The input holds no bytes at all.
    #[error("empty input: not a tar archive")]
    Empty,
    /// The first block is not a tar header.
    #[error("not a tar archive ({0})")]
    NotTar(String),
    /// The input ends inside a header, inside member data, or without an
    /// end-of-archive marker.
    #[error("{detail}")]
    Truncated {
        /// The offset where the input ends.
        at: u64,
        /// What was being read.
        detail: String,
    },
    /// The stream cannot be read on (extended headers over [`MAX_METADATA`]).
    #[error("{detail}")]
    Corrupt {
        /// The offset of the header at fault.
        at: u64,
        /// What is wrong.
        detail: String,
    },
}

/// Skips `n` bytes of the inner reader; returns the bytes skipped (fewer at the end).
type SkipFn<R> = fn(&mut R, u64) -> io::Result<u64>;

fn skip_by_reading<R: Read>(r: &mut R, n: u64) -> io::Result<u64> {
    io::copy(&mut r.take(n), &mut io::sink())
}

fn skip_by_seeking<R: Read + Seek>(r: &mut R, n: u64) -> io::Result<u64> {
    let delta = i64::try_from(n).map_err(|_| io::Error::other("skip too large"))?;
    r.seek(SeekFrom::Current(delta))?;
    Ok(n)
}

/// Reads a tar stream member by member. See the module documentation for the rules.
pub struct TarReader<R> {
    inner: R,
    /// Bytes taken from `inner`.
    taken: u64,
    /// A block pushed back (looked at but not consumed), and how much of it was
    /// consumed since.
    pending: Option<(Box<[u8; 512]>, usize)>,
    /// Unread bytes of the current member's stored data, and the padding after them.
    data_left: u64,
    pad_left: u64,
    /// The current member's sparse map, for [`content`](Self::content).
    sparse: Option<Vec<(u64, u64)>>,
    size: u64,
    global: Vec<(String, Vec<u8>)>,
    members: u64,
    finished: bool,
    notes: Vec<String>,
    skip: SkipFn<R>,
    missing_end: Option<u64>,
}

impl<R: Read> TarReader<R> {
    /// Read `inner` from its current position (offsets count from there); data that
    /// is not read is skipped by reading it.
    pub fn new(inner: R) -> TarReader<R> {
        TarReader::with_skip(inner, skip_by_reading::<R>)
    }

    fn with_skip(inner: R, skip: SkipFn<R>) -> TarReader<R> {
        TarReader {
            inner,
            taken: 0,
            pending: None,
            data_left: 0,
            pad_left: 0,
            sparse: None,
            size: 0,
            global: Vec::new(),
            members: 0,
            finished: false,
            notes: Vec::new(),
            skip,
            missing_end: None,
        }
    }

    /// The offset the reader stands at.
    pub fn position(&self) -> u64 {
        self.taken - self.pending.as_ref().map_or(0, |(_, k)| 512 - *k as u64)
    }

    /// Notes about the stream as a whole (what follows its end), once [`next`]
    /// returned `None`.
    ///
    /// [`next`]: Self::next
    pub fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }

    /// Where the input ended without an end-of-archive marker, right after a
    /// complete member (GNU tar, bsdtar and Python's tarfile read such a tar
    /// without a word; it may also be a tar cut at a member boundary), once
    /// [`next`](Self::next) returned `None`.
    pub fn missing_end(&self) -> Option<u64> {
        self.missing_end
    }

    /// The inner reader, positioned after what was read.
    pub fn into_inner(self) -> R {
        self.inner
    }

    // ------------------------------------------------------------------ raw input

    fn read_raw(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some((block, used)) = &mut self.pending {
            let n = buf.len().min(512 - *used);
            buf[..n].copy_from_slice(&block[*used..*used + n]);
            *used += n;
            if *used == 512 {
                self.pending = None;
            }
            return Ok(n);
        }
        loop {
            match self.inner.read(buf) {
                Ok(n) => {
                    self.taken += n as u64;
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Fill `buf`; returns the bytes read (fewer only at the end of the input).
    fn read_full(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut n = 0;
        while n < buf.len() {
            match self.read_raw(&mut buf[n..])? {
                0 => break,
                k => n += k,
            }
        }
        Ok(n)
    }

    /// The next block: `Ok(None)` at the end of the input, an error when the input
    /// ends inside it.
    fn read_block(&mut self, what: &str) -> Result<Option<Box<[u8; 512]>>, TarError> {
        if matches!(self.pending, Some((_, 0))) {
            return Ok(self.pending.take().map(|(block, _)| block));
        }
        let at = self.position();
        let mut block = Box::new([0u8; 512]);
        match self.read_full(&mut block[..])? {
            0 => Ok(None),
            512 => Ok(Some(block)),
            n => Err(TarError::Truncated {
                at: at + n as u64,
                detail: format!("input ends at byte {} inside {what}", at + n as u64),
            }),
        }
    }

    fn push_back(&mut self, block: Box<[u8; 512]>) {
        debug_assert!(self.pending.is_none());
        self.pending = Some((block, 0));
    }

    /// Skip `n` bytes; an error when the input ends first.
    fn skip_bytes(&mut self, mut n: u64, what: &str) -> Result<(), TarError> {
        let start = self.position();
        let total = n;
        if let Some((_, used)) = &self.pending {
            let k = n.min((512 - *used) as u64) as usize;
            let mut tmp = [0u8; 512];
            self.read_raw(&mut tmp[..k])?;
            n -= k as u64;
        }
        if n == 0 {
            return Ok(());
        }
        let done = (self.skip)(&mut self.inner, n)?;
        self.taken += done;
        if done < n {
            let at = start + (total - n) + done;
            return Err(TarError::Truncated {
                at,
                detail: format!("input ends at byte {at} inside {what}"),
            });
        }
        Ok(())
    }

    /// Read exactly `n` bytes (`n` ≤ [`MAX_METADATA`]).
    fn read_exact_vec(&mut self, n: u64, what: &str) -> Result<Vec<u8>, TarError> {
        let at = self.position();
        let mut v = vec![0u8; n as usize];
        let got = self.read_full(&mut v)?;
        if got as u64 != n {
            return Err(TarError::Truncated {
                at: at + got as u64,
                detail: format!("input ends at byte {} inside {what}", at + got as u64),
            });
        }
        Ok(v)
    }

    // ------------------------------------------------------------------ members

    /// The next member, a damaged stretch that was skipped, or `None` at the end of
    /// the archive. Whatever was not read of the previous member is skipped first.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<Record>, TarError> {
        if self.finished {
            return Ok(None);
        }
        let rest = self.data_left + self.pad_left;
        self.data_left = 0;
        self.pad_left = 0;
        self.sparse = None;
        self.size = 0;
        if rest > 0 {
            self.skip_bytes(rest, "member data")?;
        }
        let header_offset = self.position();
        let mut ext = Extensions::default();
        loop {
            let at = self.position();
            let Some(block) = self.read_block("a header")? else {
                if self.members == 0 && at == 0 {
                    return Err(TarError::Empty);
                }
                if self.members > 0 && at == header_offset {
                    // After a complete member: what GNU tar, bsdtar and tarfile
                    // read as the end (the importer warns, see `missing_end`).
                    self.finished = true;
                    self.missing_end = Some(at);
                    return Ok(None);
                }
                return Err(TarError::Truncated {
                    at,
                    detail: format!(
                        "input ends at byte {at} without an end-of-archive marker: \
                         the tar is probably truncated"
                    ),
                });
            };
            if is_zero(&block) {
                self.end(at)?;
                return Ok(None);
            }
            let typeflag = block[156];
            let size = match check_header(&block) {
                Ok(size) => size,
                Err(detail) => {
                    if self.members == 0 && at == 0 {
                        return Err(TarError::NotTar(detail));
                    }
                    return self.resync(block, at, detail).map(Some);
                }
            };
            if matches!(typeflag, b'x' | b'X' | b'g' | b'L' | b'K' | b'A') {
                ext.bytes = ext.bytes.saturating_add(BLOCK + padded(size));
                if ext.bytes > MAX_METADATA {
                    return Err(TarError::Corrupt {
                        at,
                        detail: format!(
                            "a member's extended headers (PAX, GNU long names) exceed \
                             {} MiB at byte {at}",
                            MAX_METADATA >> 20
                        ),
                    });
                }
                let data = self.read_exact_vec(size, "an extended header")?;
                self.skip_bytes(padded(size) - size, "an extended header")?;
                match typeflag {
                    b'x' | b'X' => match parse_pax(&data) {
                        Ok(recs) => ext.pax.extend(recs),
                        Err(e) => ext.bad_pax = Some(format!("{e} at byte {at}")),
                    },
                    b'g' => {
                        if let Ok(recs) = parse_pax(&data) {
                            for (k, v) in recs {
                                self.global.retain(|(g, _)| *g != k);
                                self.global.push((k, v));
                            }
                        }
                    }
                    b'L' => ext.long_name = Some(until_nul(&data).to_vec()),
                    b'K' => ext.long_link = Some(until_nul(&data).to_vec()),
                    // A Solaris ACL: metadata of the next member, as bsdtar reads it.
                    _ => {}
                }
                continue;
            }
            self.members += 1;
            return self
                .member(&block, size, header_offset, ext)
                .map(|m| Some(Record::Member(Box::new(m))));
        }
    }

    /// Decode a member whose header block is `block`, its extended headers read.
    fn member(
        &mut self,
        block: &[u8; 512],
        header_size: u64,
        header_offset: u64,
        ext: Extensions,
    ) -> Result<Member, TarError> {
        let header = tar::Header::from_byte_slice(&block[..]);
        let typeflag = block[156];
        let pax = ext.pax;
        let get = |key: &str| pax_get(&pax, key);
        let global = |key: &str| pax_get(&self.global, key);
        let mut notes = Vec::new();
        let mut disputed = Vec::new();
        let mut problem = ext
            .bad_pax
            .map(|e| format!("malformed PAX extended header ({e})"));
        let name = get("GNU.sparse.name")
            .or_else(|| get("path"))
            .map(|v| v.to_vec())
            .or(ext.long_name)
            .unwrap_or_else(|| header.path_bytes().into_owned());
        let link = get("linkpath")
            .map(|v| v.to_vec())
            .or(ext.long_link)
            .or_else(|| header.link_name_bytes().map(|l| l.into_owned()));
        let mut stored = match get("size") {
            Some(v) => match parse_pax_u64(v) {
                Some(n) => n,
                None => {
                    problem.get_or_insert_with(|| format!("bad PAX size {:?}", lossy(v)));
                    header_size
                }
            },
            None => header_size,
        };
        let num_or = |key: &str, field: &[u8]| -> Option<u64> {
            match get(key).or_else(|| global(key)) {
                Some(v) => parse_pax_u64(v),
                None => parse_num(field).and_then(|n| u64::try_from(n).ok()),
            }
        };
        let uid = num_or("uid", &block[108..116]);
        let gid = num_or("gid", &block[116..124]);
        let mtime_ns = get("mtime")
            .or_else(|| global("mtime"))
            .and_then(|v| std::str::from_utf8(v).ok())
            .and_then(parse_decimal_ns)
            .or_else(|| parse_num(&block[136..148]).map(|s| s.saturating_mul(1_000_000_000)));
        let mode = parse_num(&block[100..108]).and_then(|m| u32::try_from(m & 0o7777).ok());
        let mut kind = MemberKind::of(typeflag);
        if kind == MemberKind::File && typeflag != b'S' && name.ends_with(b"/") {
            kind = MemberKind::Dir;
        }
        // Old GNU sparse: the map is in the header and in extension blocks after it.
        let mut sparse = None;
        let mut size = stored;
        if typeflag == b'S' {
            match self.old_gnu_sparse(block)? {
                Ok((map, real)) => {
                    sparse = Some(map);
                    size = real;
                }
                Err(e) => {
                    problem.get_or_insert(e);
                }
            }
        }
        let no_data_type = match kind {
            MemberKind::Dir => typeflag != b'D',
            MemberKind::HardLink
            | MemberKind::Symlink
            | MemberKind::CharDevice
            | MemberKind::BlockDevice
            | MemberKind::Fifo
            | MemberKind::VolumeLabel => true,
            _ => false,
        };
        if no_data_type && stored > 0 {
            if self.data_follows()? {
                let what = match kind {
                    MemberKind::Dir if typeflag == b'5' => "directory",
                    MemberKind::Dir => {
                        "regular-file header with a name ending in '/' (a directory)"
                    }
                    MemberKind::HardLink => "hard link",
                    MemberKind::Symlink => "symbolic link",
                    MemberKind::CharDevice => "character device",
                    MemberKind::BlockDevice => "block device",
                    MemberKind::Fifo => "FIFO",
                    _ => "volume label",
                };
                let note = format!("{what} header followed by {stored} bytes of data, not stored");
                match kind {
                    // Some reference reader takes these bytes for a file's content.
                    MemberKind::HardLink => disputed.push(format!(
                        "{note} (the link is, as GNU tar and Python's tarfile read it; \
                         bsdtar reads the bytes as the file's content in a PAX archive)"
                    )),
                    MemberKind::Dir if matches!(typeflag, b'0' | b'7') => disputed.push(format!(
                        "{note} (the directory is, as GNU tar and bsdtar read it; Python's \
                         tarfile reads a file of that name holding the bytes)"
                    )),
                    _ => notes.push(note),
                }
            } else {
                stored = 0;
            }
        }
        // The content: none for directories (a GNU dumpdir's data is its listing) and
        // the types without data; the stored bytes for files (an old GNU sparse
        // file has its real size already) and unknown types.
        if no_data_type || kind == MemberKind::Dir {
            size = 0;
        } else if sparse.is_none() {
            size = stored;
        }
        self.data_left = stored;
        self.pad_left = padded(stored) - stored;
        let mut data_offset = self.position();
        if kind == MemberKind::File && typeflag != b'S' && problem.is_none() {
            match pax_sparse(&pax) {
                Ok(None) => {}
                Ok(Some(PaxSparse::Map(map, real))) => {
                    sparse = Some(map);
                    size = real;
                }
                Ok(Some(PaxSparse::InData(real))) => match self.read_sparse_map()? {
                    Ok(map) => {
                        sparse = Some(map);
                        size = real;
                        data_offset = self.position();
                    }
                    Err(e) => problem = Some(e),
                },
                Err(e) => problem = Some(e),
            }
        }
        let data_len = self.data_left;
        if let Some(map) = &sparse {
            if problem.is_none() {
                if let Err(e) = check_sparse(map, size, data_len) {
                    problem = Some(e);
                }
            }
        }
        if problem.is_some() {
            sparse = None;
        }
        self.sparse = sparse.clone();
        self.size = size;
        Ok(Member {
            name,
            link,
            kind,
            typeflag,
            mode,
            uid,
            gid,
            mtime_ns,
            size,
            header_offset,
            data_offset,
            data_len,
            sparse,
            pax,
            notes,
            disputed,
            problem,
        })
    }

    /// After a header of a type that carries no data but has a size: do data blocks
    /// follow? Not when the next block is a valid header, zeros, or the end.
    fn data_follows(&mut self) -> Result<bool, TarError> {
        let at = self.position();
        let mut block = Box::new([0u8; 512]);
        let n = self.read_full(&mut block[..])?;
        let follows = n == 512 && !is_zero(&block) && check_header(&block).is_err();
        if n == 512 {
            self.push_back(block);
        } else if n > 0 {
            return Err(TarError::Truncated {
                at: at + n as u64,
                detail: format!("input ends at byte {} inside a header", at + n as u64),
            });
        }
        Ok(follows)
    }

    /// Skip from a damaged header block to the next valid header (or the end).
    fn resync(
        &mut self,
        block: Box<[u8; 512]>,
        at: u64,
        detail: String,
    ) -> Result<Record, TarError> {
        let name_guess = until_nul(&block[..100]).to_vec();
        loop {
            let here = self.position();
            let Some(b) = self.read_block("a header")? else {
                return Err(TarError::Truncated {
                    at: here,
                    detail: format!(
                        "damaged header at byte {at} ({detail}), and the input ends at byte \
                         {here} before another header"
                    ),
                });
            };
            if is_zero(&b) || check_header(&b).is_ok() {
                self.push_back(b);
                return Ok(Record::Damaged(Damage {
                    at,
                    resumed_at: here,
                    name_guess,
                    detail,
                }));
            }
        }
    }

    /// The first zero block at `at` ends the archive: look at what follows.
    fn end(&mut self, at: u64) -> Result<(), TarError> {
        self.finished = true;
        let mut buf = vec![0u8; 64 << 10];
        let mut seen = 0u64;
        let mut first_nonzero = None;
        while seen < TRAILER_SCAN {
            let want = buf.len().min((TRAILER_SCAN - seen) as usize);
            let n = self.read_full(&mut buf[..want])?;
            if let Some(i) = buf[..n].iter().position(|&b| b != 0) {
                first_nonzero = Some(seen + i as u64);
                break;
            }
            seen += n as u64;
            if n < want {
                break;
            }
        }
        if let Some(off) = first_nonzero {
            let where_ = at + BLOCK + off;
            self.notes.push(if off < BLOCK {
                format!(
                    "a lone zero block at byte {at} ends the archive; the data after it \
                     (from byte {where_}) is not read (GNU tar stops there too; \
                     tar --ignore-zeros reads on)"
                )
            } else {
                format!(
                    "the archive ends at byte {at}, but data follows at byte {where_} and is \
                     not read (another tar appended? tar --ignore-zeros reads on)"
                )
            });
        }
        Ok(())
    }

    /// The map and real size of an old GNU sparse member (`Ok(Err)` when unusable).
    fn old_gnu_sparse(&mut self, block: &[u8; 512]) -> Result<Result<SparseMap, String>, TarError> {
        let mut map = Vec::new();
        let mut bad = None;
        let mut take = |entries: &[u8], count: usize, map: &mut Vec<(u64, u64)>| {
            for i in 0..count {
                let e = &entries[i * 24..i * 24 + 24];
                if e[0] == 0 {
                    break;
                }
                match (parse_num(&e[..12]), parse_num(&e[12..])) {
                    (Some(o), Some(n)) if o >= 0 && n >= 0 => map.push((o as u64, n as u64)),
                    _ => {
                        bad.get_or_insert_with(|| "bad old GNU sparse map".to_string());
                    }
                }
            }
        };
        take(&block[386..482], 4, &mut map);
        let real = parse_num(&block[483..495]).and_then(|n| u64::try_from(n).ok());
        let mut extended = block[482] != 0;
        let mut blocks = 0u64;
        while extended {
            blocks += 1;
            if blocks * BLOCK > MAX_METADATA {
                return Err(TarError::Corrupt {
                    at: self.position(),
                    detail: format!("an old GNU sparse map exceeds {} MiB", MAX_METADATA >> 20),
                });
            }
            let Some(ext) = self.read_block("a sparse header")? else {
                return Err(TarError::Truncated {
                    at: self.position(),
                    detail: format!(
                        "input ends at byte {} inside a sparse header",
                        self.position()
                    ),
                });
            };
            take(&ext[..504], 21, &mut map);
            extended = ext[504] != 0;
        }
        Ok(match (bad, real) {
            (Some(e), _) => Err(e),
            (None, None) => Err("bad old GNU sparse real size".into()),
            (None, Some(real)) => Ok((map, real)),
        })
    }

    /// Read the decimal map at the start of a PAX 1.0 sparse member's data: the
    /// number of segments, then offset and size of each, one per line, padded to a
    /// block. `Ok(Err)` when the map is unusable (the rest of the data is skipped).
    fn read_sparse_map(&mut self) -> Result<Result<Vec<(u64, u64)>, String>, TarError> {
        let mut numbers: Vec<u64> = Vec::new();
        let mut want: Option<usize> = None;
        let mut cur = String::new();
        // A line starting with '#' is a comment (bsdtar skips them).
        let mut comment = false;
        let mut line_start = true;
        loop {
            if self.data_left < BLOCK {
                return Ok(Err("sparse map cut short".into()));
            }
            let at = self.position();
            let mut block = [0u8; 512];
            if self.read_full(&mut block)? != 512 {
                return Err(TarError::Truncated {
                    at,
                    detail: format!("input ends inside the sparse map at byte {at}"),
                });
            }
            self.data_left -= BLOCK;
            for &b in block.iter() {
                if line_start && b == b'#' {
                    comment = true;
                }
                line_start = b == b'\n';
                if comment {
                    comment = b != b'\n';
                    continue;
                }
                if b == b'\n' {
                    let Ok(n) = cur.parse::<u64>() else {
                        return Ok(Err("bad number in sparse map".into()));
                    };
                    cur.clear();
                    match want {
                        None => {
                            if n > 1 << 24 {
                                return Ok(Err("sparse map too large".into()));
                            }
                            want = Some(2 * n as usize);
                        }
                        Some(_) => numbers.push(n),
                    }
                    if want == Some(numbers.len()) {
                        return Ok(Ok(numbers.chunks(2).map(|c| (c[0], c[1])).collect()));
                    }
                } else if b.is_ascii_digit() && cur.len() < 20 {
                    cur.push(b as char);
                } else {
                    return Ok(Err("bad sparse map".into()));
                }
            }
        }
    }

    // ------------------------------------------------------------------ content

    /// The stored data of the current member: [`Member::data_len`] bytes.
    pub fn data(&mut self) -> Data<'_, R> {
        Data { r: self }
    }

    /// The content of the current member: [`Member::size`] bytes, the holes of a
    /// sparse file as zeros.
    pub fn content(&mut self) -> Content<'_, R> {
        let segments = self.sparse.take().unwrap_or_else(|| vec![(0, self.size)]);
        Content {
            size: self.size,
            segments: segments.into_iter(),
            cur: None,
            pos: 0,
            data: Data { r: self },
        }
    }
}

impl<R: Read + Seek> TarReader<R> {
    /// Like [`new`](Self::new), but data that is not read is skipped by seeking.
    /// An input that ends inside skipped data is found at the next header.
    pub fn new_seekable(inner: R) -> TarReader<R> {
        TarReader::with_skip(inner, skip_by_seeking::<R>)
    }
}

/// The error of [`Data`] and [`Content`] reads when the input ends inside the
/// member's data (as opposed to an error of the input itself, such as a corrupt
/// compressed stream); see [`ends_inside`].
#[derive(Debug)]
pub struct InputEnds(pub u64);

impl std::fmt::Display for InputEnds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "input ends at byte {} inside member data", self.0)
    }
}

impl std::error::Error for InputEnds {}

/// True when `e` says that the input ended inside a member's data.
pub fn ends_inside(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|i| i.is::<InputEnds>())
}

/// The stored data of the current member.
pub struct Data<'a, R> {
    r: &'a mut TarReader<R>,
}

impl<R: Read> Read for Data<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = (buf.len() as u64).min(self.r.data_left) as usize;
        if n == 0 {
            return Ok(0);
        }
        let k = self.r.read_raw(&mut buf[..n])?;
        if k == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                InputEnds(self.r.position()),
            ));
        }
        self.r.data_left -= k as u64;
        Ok(k)
    }
}

/// The logical content of the current member.
pub struct Content<'a, R> {
    data: Data<'a, R>,
    segments: std::vec::IntoIter<(u64, u64)>,
    /// Current segment, as (start, end) in the logical file.
    cur: Option<(u64, u64)>,
    pos: u64,
    size: u64,
}

impl<R: Read> Read for Content<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pos >= self.size || buf.is_empty() {
            return Ok(0);
        }
        loop {
            match self.cur {
                Some((_, end)) if self.pos >= end => self.cur = None,
                Some((start, end)) if self.pos >= start => {
                    let n = (buf.len() as u64).min(end - self.pos) as usize;
                    let k = self.data.read(&mut buf[..n])?;
                    if k == 0 {
                        return Err(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            InputEnds(self.data.r.position()),
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

// ---------------------------------------------------------------------- headers

/// A sparse map (offset, length of each segment) and the file's real size.
type SparseMap = (Vec<(u64, u64)>, u64);

#[derive(Default)]
struct Extensions {
    pax: Vec<(String, Vec<u8>)>,
    bad_pax: Option<String>,
    long_name: Option<Vec<u8>>,
    long_link: Option<Vec<u8>>,
    bytes: u64,
}

fn is_zero(block: &[u8; 512]) -> bool {
    block.iter().all(|&b| b == 0)
}

fn padded(n: u64) -> u64 {
    n.div_ceil(BLOCK).saturating_mul(BLOCK)
}

fn until_nul(b: &[u8]) -> &[u8] {
    match b.iter().position(|&c| c == 0) {
        Some(i) => &b[..i],
        None => b,
    }
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The unsigned and the signed sum of a header's bytes, its checksum field counted
/// as spaces.
pub fn checksums(block: &[u8; 512]) -> (u64, i64) {
    let mut unsigned = 0u64;
    let mut signed = 0i64;
    for (i, &b) in block.iter().enumerate() {
        let b = if (148..156).contains(&i) { b' ' } else { b };
        unsigned += b as u64;
        signed += b as i8 as i64;
    }
    (unsigned, signed)
}

/// Check a header block: its checksum (unsigned or signed sum) and its size field.
/// Returns the size.
pub fn check_header(block: &[u8; 512]) -> Result<u64, String> {
    let stored = parse_num(&block[148..156]).ok_or("unreadable checksum field")?;
    let (unsigned, signed) = checksums(block);
    if stored != unsigned as i64 && stored != signed {
        return Err(format!(
            "header checksum mismatch (stored {stored:o}, computed {unsigned:o})"
        ));
    }
    match parse_num(&block[124..136]) {
        Some(n) if n >= 0 => Ok(n as u64),
        _ => Err("unreadable size field".into()),
    }
}

/// A numeric header field, as `tarfile` and GNU tar read them: octal digits between
/// optional spaces, ended by NUL or space (empty is 0), or base-256 when the first
/// byte has its high bit set (0x80: positive, 0xff: negative).
pub fn parse_num(field: &[u8]) -> Option<i64> {
    let first = *field.first()?;
    if first & 0x80 != 0 {
        let negative = first == 0xff;
        let mut v: i128 = (first & if negative { 0xff } else { 0x7f }) as i128;
        if negative {
            v -= 256;
        }
        for &b in &field[1..] {
            v = v.checked_mul(256)?.checked_add(b as i128)?;
            if v.abs() > i64::MAX as i128 {
                return None;
            }
        }
        return i64::try_from(v).ok();
    }
    let text = until_nul(field);
    let text = text.trim_ascii();
    let mut v: i64 = 0;
    for &b in text {
        if !(b'0'..=b'7').contains(&b) {
            return None;
        }
        v = v.checked_mul(8)?.checked_add((b - b'0') as i64)?;
    }
    Some(v)
}

/// PAX records: `"%d %s=%s\n"`, the length counting the whole record.
fn parse_pax(data: &[u8]) -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut out = Vec::new();
    let mut rest = data;
    while !rest.is_empty() && rest[0] != 0 {
        let space = rest
            .iter()
            .position(|&b| b == b' ')
            .ok_or("a record without a length")?;
        let len: usize = std::str::from_utf8(&rest[..space])
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or("a record with a bad length")?;
        if len <= space + 1 || len > rest.len() || rest[len - 1] != b'\n' {
            return Err("a record with a wrong length".into());
        }
        let rec = &rest[space + 1..len - 1];
        let eq = rec
            .iter()
            .position(|&b| b == b'=')
            .ok_or("a record without '='")?;
        let key = String::from_utf8_lossy(&rec[..eq]).into_owned();
        out.push((key, rec[eq + 1..].to_vec()));
        rest = &rest[len..];
    }
    Ok(out)
}

/// The last value of `key`.
fn pax_get<'p>(pax: &'p [(String, Vec<u8>)], key: &str) -> Option<&'p [u8]> {
    pax.iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_slice())
}

fn parse_pax_u64(v: &[u8]) -> Option<u64> {
    std::str::from_utf8(v).ok()?.trim().parse().ok()
}

/// `"1700000000.123456789"` → nanoseconds, without going through a float. Digits
/// beyond nanoseconds are cut; a negative value (before 1970) is allowed.
pub fn parse_decimal_ns(text: &str) -> Option<i64> {
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

enum PaxSparse {
    /// Formats 0.0 and 0.1: the map in the records, and the real size.
    Map(Vec<(u64, u64)>, u64),
    /// Format 1.0: the map at the start of the data, and the real size.
    InData(u64),
}

/// Recognize the PAX sparse formats of GNU tar (0.0, 0.1, 1.0).
fn pax_sparse(pax: &[(String, Vec<u8>)]) -> Result<Option<PaxSparse>, String> {
    if !pax.iter().any(|(k, _)| k.starts_with("GNU.sparse.")) {
        return Ok(None);
    }
    let text = |key: &str| pax_get(pax, key).and_then(|v| std::str::from_utf8(v).ok());
    let number = |key: &str| -> Result<Option<u64>, String> {
        match text(key) {
            None => Ok(None),
            Some(v) => v
                .trim()
                .parse()
                .map(Some)
                .map_err(|_| format!("bad PAX record {key}={v:?}")),
        }
    };
    let major = text("GNU.sparse.major").map(str::trim);
    let minor = text("GNU.sparse.minor").map(str::trim);
    if major == Some("1") && minor == Some("0") {
        // GNU tar writes `realsize`; bsdtar takes `size` as well (other writers).
        let real = number("GNU.sparse.realsize")?
            .or(number("GNU.sparse.size")?)
            .ok_or("PAX sparse file (format 1.0) without GNU.sparse.realsize")?;
        return Ok(Some(PaxSparse::InData(real)));
    }
    // Versions 0.0 and 0.1 carry their map in the records; some writers name the
    // version too (bsdtar reads them by the records).
    let zero = major.is_none_or(|m| m == "0") && minor.is_none_or(|m| m == "0" || m == "1");
    if !zero {
        return Err(format!(
            "PAX sparse format {}.{} is not supported",
            major.unwrap_or("?"),
            minor.unwrap_or("?")
        ));
    }
    let real = number("GNU.sparse.size")?
        .or(number("GNU.sparse.realsize")?)
        .ok_or("PAX sparse file without its real size")?;
    let numbers: Vec<u64> = if let Some(map) = text("GNU.sparse.map") {
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
        for (k, val) in pax {
            let key = k.as_str();
            if key == "GNU.sparse.offset" || key == "GNU.sparse.numbytes" {
                let n: u64 = parse_pax_u64(val).ok_or_else(|| format!("bad PAX record {key}"))?;
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
    Ok(Some(PaxSparse::Map(
        numbers.chunks(2).map(|c| (c[0], c[1])).collect(),
        real,
    )))
}

/// A sparse map must list segments in order, inside the file, and no more data
/// than the member stores.
fn check_sparse(map: &[(u64, u64)], size: u64, stored: u64) -> Result<(), String> {
    let mut end = 0u64;
    let mut data = 0u64;
    for &(off, len) in map {
        match off.checked_add(len) {
            Some(stop) if off >= end && stop <= size => end = stop,
            _ => return Err("invalid sparse map".into()),
        }
        data += len;
    }
    if data > stored {
        return Err("sparse map lists more data than the member holds".into());
    }
    Ok(())
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
    fn numeric_fields_as_tarfile_reads_them() {
        assert_eq!(parse_num(b"0000644\0"), Some(0o644));
        assert_eq!(parse_num(b"  644 \0\0"), Some(0o644));
        assert_eq!(parse_num(b"\0\0\0\0\0\0\0\0"), Some(0));
        assert_eq!(parse_num(b"        "), Some(0));
        assert_eq!(parse_num(b"0000689\0"), None);
        assert_eq!(
            parse_num(&[0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0]),
            Some(256)
        );
        assert_eq!(
            parse_num(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe]),
            Some(-2)
        );
        assert_eq!(
            parse_num(&[0x80, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
            None
        );
    }

    #[test]
    fn pax_records() {
        let recs = parse_pax(b"16 path=a/b.txt\n21 mtime=1.123456789\n").unwrap();
        assert_eq!(recs[0], ("path".to_string(), b"a/b.txt".to_vec()));
        assert_eq!(recs[1].0, "mtime");
        assert!(parse_pax(b"99 path=x\n").is_err());
        assert!(parse_pax(b"x path=x\n").is_err());
        assert!(parse_pax(b"9 pathx\n\n").is_err());
    }

    /// A tar of `d…d/a` (3 bytes, its directory in the ustar prefix) and `b` (600
    /// bytes) written by the `tar` crate, and the offsets of their data.
    fn small_tar() -> (Vec<u8>, u64, u64) {
        let mut b = tar::Builder::new(Vec::new());
        let long = format!("{}/a", "d".repeat(120));
        let mut h = tar::Header::new_ustar();
        h.set_size(3);
        h.set_mode(0o644);
        b.append_data(&mut h, &long, &b"abc"[..]).unwrap();
        let mut h = tar::Header::new_ustar();
        h.set_size(600);
        h.set_mode(0o600);
        b.append_data(&mut h, "b", &[7u8; 600][..]).unwrap();
        let bytes = b.into_inner().unwrap();
        let a_data = 512;
        let b_data = a_data + 512 + 512;
        (bytes, a_data, b_data)
    }

    #[test]
    fn members_keep_the_exact_offsets_of_their_data() {
        let (bytes, a_data, b_data) = small_tar();
        for seekable in [false, true] {
            let mut r = if seekable {
                TarReader::new_seekable(io::Cursor::new(bytes.clone()))
            } else {
                TarReader::with_skip(io::Cursor::new(bytes.clone()), skip_by_reading)
            };
            let Some(Record::Member(a)) = r.next().unwrap() else {
                panic!()
            };
            assert_eq!(a.name, format!("{}/a", "d".repeat(120)).into_bytes());
            assert_eq!((a.header_offset, a.data_offset), (0, a_data));
            assert_eq!((a.size, a.data_len, a.mode), (3, 3, Some(0o644)));
            // Not read: skipped (by reading or by seeking) on the next call.
            let Some(Record::Member(b)) = r.next().unwrap() else {
                panic!()
            };
            assert_eq!((b.data_offset, b.data_len), (b_data, 600));
            assert_eq!(
                &bytes[b.data_offset as usize..(b.data_offset + b.data_len) as usize],
                &[7u8; 600][..]
            );
            let mut d = Vec::new();
            r.data().read_to_end(&mut d).unwrap();
            assert_eq!(d, [7u8; 600]);
            assert!(r.next().unwrap().is_none());
            assert!(r.take_notes().is_empty());
        }
    }

    #[test]
    fn an_input_cut_inside_member_data_is_truncated() {
        let (bytes, _, b_data) = small_tar();
        let cut = &bytes[..b_data as usize + 100];
        let mut r = TarReader::new(cut);
        r.next().unwrap();
        r.next().unwrap();
        let mut d = Vec::new();
        let e = r.content().read_to_end(&mut d).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
        assert!(ends_inside(&e), "{e}");
        assert_eq!(d.len(), 100);
        let mut r = TarReader::new(cut);
        r.next().unwrap();
        r.next().unwrap();
        assert!(matches!(r.next(), Err(TarError::Truncated { .. })));
        assert!(matches!(
            TarReader::new(&[][..]).next(),
            Err(TarError::Empty)
        ));
    }

    #[test]
    fn sparse_content_fills_holes() {
        let mut r = TarReader::new(&b"AAAABB"[..]);
        r.data_left = 6;
        r.size = 12;
        r.sparse = Some(vec![(2, 4), (8, 2)]);
        let mut out = Vec::new();
        r.content().read_to_end(&mut out).unwrap();
        assert_eq!(out, b"\0\0AAAA\0\0BB\0\0");
    }

    #[test]
    fn sparse_map_of_format_1_0_with_a_comment() {
        let mut block = b"# written by some tool\n1\n0\n3\n".to_vec();
        block.resize(512, 0);
        block.extend_from_slice(b"abc");
        let mut r = TarReader::new(&block[..]);
        r.data_left = block.len() as u64;
        assert_eq!(r.read_sparse_map().unwrap().unwrap(), vec![(0, 3)]);
    }

    #[test]
    fn pax_sparse_versions_named_with_their_records() {
        let recs = |v: &[(&str, &str)]| -> Vec<(String, Vec<u8>)> {
            v.iter()
                .map(|(k, v)| (k.to_string(), v.as_bytes().to_vec()))
                .collect()
        };
        let r = recs(&[
            ("GNU.sparse.major", "0"),
            ("GNU.sparse.minor", "1"),
            ("GNU.sparse.size", "10"),
            ("GNU.sparse.map", "0,2,8,2"),
        ]);
        assert!(matches!(pax_sparse(&r), Ok(Some(PaxSparse::Map(m, 10))) if m.len() == 2));
        let r = recs(&[
            ("GNU.sparse.major", "1"),
            ("GNU.sparse.minor", "0"),
            ("GNU.sparse.size", "10"),
        ]);
        assert!(matches!(pax_sparse(&r), Ok(Some(PaxSparse::InData(10)))));
        let r = recs(&[("GNU.sparse.major", "2"), ("GNU.sparse.minor", "0")]);
        assert!(pax_sparse(&r).is_err());
    }

    #[test]
    fn sparse_map_of_format_1_0() {
        let mut block = b"2\n0\n3\n10\n2\n".to_vec();
        block.resize(512, 0);
        block.extend_from_slice(b"abcde");
        let mut r = TarReader::new(&block[..]);
        r.data_left = block.len() as u64;
        let segs = r.read_sparse_map().unwrap().unwrap();
        assert_eq!(segs, vec![(0, 3), (10, 2)]);
        assert_eq!(r.position(), 512);
        assert_eq!(r.data_left, 5);
    }
}
