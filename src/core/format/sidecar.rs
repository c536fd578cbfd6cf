//! The SFBTM v3 byte format: parsing and validating a sidecar from bytes (never
//! trusting them), the page map a reader pins in memory, the freshness check
//! against the index's page 1, and the generic producer.
//!
//! A sidecar is a 12-byte uncompressed header (magic `SFBTM\0\0\0`, `u32` LE
//! `format_version = 3`) and one zstd frame holding the body: `u32 page_size`,
//! `u32 n`, `n × (u32 pageno, u32 offset)` strictly ascending by page number, then
//! the pages. Every check of the format's validation list is made here, plus the
//! ones a reader of *barecat indexes* needs: the decompressed size is bounded by
//! the index's size (a zstd bomb is refused before anything is allocated), page 1
//! must be present (it carries the freshness fields), and page 1's own header must
//! agree with the body's page size and the page numbers.

use std::fmt;
use std::io::Read;
use std::ops::Range;

use zstd::zstd_safe;

/// The first 8 bytes of every v3 sidecar.
pub const MAGIC: [u8; 8] = *b"SFBTM\0\0\0";
/// The format version written and understood here.
pub const FORMAT_VERSION: u32 = 3;
/// Bytes before the zstd frame: magic and version.
pub const HEADER_LEN: usize = 12;
/// zstd level of the reference producer, and of `barecat-sidecar` by default.
pub const DEFAULT_LEVEL: i32 = 3;
/// zstd level of the sidecar a writer writes when it finishes: at level 1 the
/// sidecar of a 1M-file index is 1% larger (364 KB against 361 KB) and is
/// compressed in a third of the time, which was most of what opening an
/// archive for writing, adding one file and closing it cost.
pub const WRITER_LEVEL: i32 = 1;
/// The smallest SQLite page size.
pub const MIN_PAGE_SIZE: u32 = 512;
/// The largest SQLite page size (stored as 1 in the header).
pub const MAX_PAGE_SIZE: u32 = 65536;

/// Offsets in the SQLite file header (page 1), big-endian fields.
const HDR_PAGE_SIZE: usize = 16;
const HDR_CHANGE_COUNTER: usize = 24;
const HDR_DATABASE_PAGES: usize = 28;
/// Bytes of the SQLite file header.
pub const SQLITE_HEADER_LEN: usize = 100;

/// The largest body a sidecar of an index of `index_len` bytes can have: every
/// page of the index at the smallest page size, with its index entry. Readers pass
/// this bound (through [`parse`]) so that a tiny file claiming gigabytes is refused
/// before anything is allocated.
pub fn max_body_len(index_len: u64) -> u64 {
    8u64.saturating_add(index_len)
        .saturating_add(8u64.saturating_mul(index_len.div_ceil(MIN_PAGE_SIZE as u64)))
}

/// How a reader should take a [`Rejection`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RejectionKind {
    /// Not a sidecar of this format or version (another magic such as `SQPC`, a
    /// newer `format_version`): not ours to judge; treated as if there were none.
    Absent,
    /// A well-formed sidecar of another state of the index: the index changed
    /// since it was written.
    Stale,
    /// Damaged or malformed bytes.
    Corrupt,
}

/// Why a sidecar is not used. Readers treat every one as "no sidecar";
/// `barecat-sidecar --check` and `barecat-verify` report it; [`code`] names it in
/// JSON.
///
/// [`code`]: Rejection::code
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejection {
    /// Shorter than the 12-byte header.
    Truncated {
        /// Its length.
        len: usize,
    },
    /// A different magic: another format (a later `SQPC`, …).
    OtherMagic {
        /// The first 8 bytes.
        magic: [u8; 8],
    },
    /// A `format_version` above 3: a later format.
    NewerVersion {
        /// The version found.
        version: u32,
    },
    /// A `format_version` below 3 (development versions that never shipped).
    OldVersion {
        /// The version found.
        version: u32,
    },
    /// The zstd frame does not decode.
    Zstd {
        /// zstd's message.
        detail: String,
    },
    /// The body would decompress to more than a sidecar of this index can hold.
    TooLarge {
        /// The content size the frame declares, if it declares one.
        claimed: Option<u64>,
        /// The most this index's sidecar can hold.
        limit: u64,
    },
    /// Bytes after the zstd frame.
    TrailingData {
        /// How many bytes follow the frame.
        bytes: usize,
    },
    /// The body ends before its page table does.
    ShortBody {
        /// The body's length.
        len: usize,
        /// The length its page table needs.
        needed: u64,
    },
    /// A page size that is not a power of two in [512, 65536].
    BadPageSize {
        /// The page size found.
        page_size: u32,
    },
    /// Page numbers not strictly ascending (a duplicate, or out of order).
    NotAscending {
        /// The entry's position in the page table.
        position: u32,
        /// Its page number.
        pageno: u32,
        /// The page number before it.
        previous: u32,
    },
    /// Page number 0, or one past the database size recorded in page 1.
    PageOutOfRange {
        /// The page number.
        pageno: u32,
        /// The database size in pages that page 1 records.
        pages: u32,
    },
    /// A page whose bytes lie outside the page area (inside the page table, or
    /// past the end of the body).
    OffsetOutOfBounds {
        /// The page number.
        pageno: u32,
        /// Its offset in the body.
        offset: u32,
        /// The body's length.
        body_len: usize,
    },
    /// A page whose bytes overlap those of the page before it (pages are stored in
    /// table order, one after the other): without this, a small body could list
    /// the same bytes millions of times.
    OverlappingPages {
        /// The page number.
        pageno: u32,
        /// Its offset in the body.
        offset: u32,
    },
    /// Page 1 is missing: freshness cannot be checked.
    NoPage1,
    /// Page 1 in the sidecar is not an SQLite header for the body's page size.
    Inconsistent {
        /// What is wrong with it.
        detail: String,
    },
    /// The sidecar's page size differs from the index's.
    PageSizeMismatch {
        /// The sidecar's page size.
        sidecar: u32,
        /// The index's page size.
        index: u32,
    },
    /// SQLite's file change counter (header offset 24) differs: the index was
    /// written since.
    StaleCounter {
        /// The sidecar's counter.
        sidecar: u32,
        /// The index's counter.
        index: u32,
    },
    /// The database size in pages (header offset 28) differs.
    StalePageCount {
        /// The sidecar's page count.
        sidecar: u32,
        /// The index's page count.
        index: u32,
    },
    /// Page 1 differs from the index's page 1 (same counter and size).
    StalePage1,
    /// A page differs from the index's page (found by a full check).
    PageDiffers {
        /// The page number.
        pageno: u32,
    },
    /// The index's page 1, as given, is not an SQLite header.
    BadIndexHeader {
        /// How many bytes were given.
        len: usize,
    },
}

impl Rejection {
    /// A stable snake_case name (for `--json` and scripts).
    pub fn code(&self) -> &'static str {
        match self {
            Rejection::Truncated { .. } => "truncated",
            Rejection::OtherMagic { .. } => "other_magic",
            Rejection::NewerVersion { .. } => "newer_version",
            Rejection::OldVersion { .. } => "old_version",
            Rejection::Zstd { .. } => "zstd_error",
            Rejection::TooLarge { .. } => "too_large",
            Rejection::TrailingData { .. } => "trailing_data",
            Rejection::ShortBody { .. } => "short_body",
            Rejection::BadPageSize { .. } => "bad_page_size",
            Rejection::NotAscending { .. } => "not_ascending",
            Rejection::PageOutOfRange { .. } => "page_out_of_range",
            Rejection::OffsetOutOfBounds { .. } => "offset_out_of_bounds",
            Rejection::OverlappingPages { .. } => "overlapping_pages",
            Rejection::NoPage1 => "no_page_1",
            Rejection::Inconsistent { .. } => "inconsistent",
            Rejection::PageSizeMismatch { .. } => "page_size_mismatch",
            Rejection::StaleCounter { .. } => "stale_change_counter",
            Rejection::StalePageCount { .. } => "stale_page_count",
            Rejection::StalePage1 => "stale_page_1",
            Rejection::PageDiffers { .. } => "page_differs",
            Rejection::BadIndexHeader { .. } => "bad_index_header",
        }
    }

    /// Which of the three kinds this is: not ours to judge (absent), another state of the
    /// index (stale), or damaged (corrupt).
    pub fn kind(&self) -> RejectionKind {
        match self {
            Rejection::OtherMagic { .. } | Rejection::NewerVersion { .. } => RejectionKind::Absent,
            Rejection::StaleCounter { .. }
            | Rejection::StalePageCount { .. }
            | Rejection::StalePage1
            | Rejection::PageDiffers { .. } => RejectionKind::Stale,
            _ => RejectionKind::Corrupt,
        }
    }

    /// The level at which a reader that skips the sidecar notes it: nothing worth
    /// saying for another format (debug), a one-line note for a stale one (info),
    /// a warning for damage.
    pub fn log_level(&self) -> log::Level {
        match self.kind() {
            RejectionKind::Absent => log::Level::Debug,
            RejectionKind::Stale => log::Level::Info,
            RejectionKind::Corrupt => log::Level::Warn,
        }
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rejection::Truncated { len } => {
                write!(f, "truncated: {len} bytes, shorter than the 12-byte header")
            }
            Rejection::OtherMagic { magic } => write!(
                f,
                "not an SFBTM sidecar (magic {}); treated as absent",
                magic.escape_ascii()
            ),
            Rejection::NewerVersion { version } => write!(
                f,
                "format_version {version} is newer than 3; treated as absent"
            ),
            Rejection::OldVersion { version } => {
                write!(f, "unsupported format_version {version} (expected 3)")
            }
            Rejection::Zstd { detail } => write!(f, "the zstd body does not decode: {detail}"),
            Rejection::TooLarge {
                claimed: Some(c),
                limit,
            } => write!(
                f,
                "the body claims {c} bytes, more than a sidecar of this index can hold \
                 ({limit})"
            ),
            Rejection::TooLarge {
                claimed: None,
                limit,
            } => write!(
                f,
                "the body decompresses to more than a sidecar of this index can hold ({limit})"
            ),
            Rejection::TrailingData { bytes } => {
                write!(f, "{bytes} bytes after the zstd frame")
            }
            Rejection::ShortBody { len, needed } => write!(
                f,
                "the body is {len} bytes, shorter than its page table ({needed} bytes)"
            ),
            Rejection::BadPageSize { page_size } => write!(
                f,
                "page size {page_size} is not a power of two in [512, 65536]"
            ),
            Rejection::NotAscending {
                position,
                pageno,
                previous,
            } if pageno == previous => {
                write!(f, "page {pageno} listed twice (entry {position})")
            }
            Rejection::NotAscending {
                position,
                pageno,
                previous,
            } => write!(
                f,
                "page numbers not ascending: {pageno} after {previous} (entry {position})"
            ),
            Rejection::PageOutOfRange { pageno, pages } => write!(
                f,
                "page {pageno} is outside the database (pages 1 to {pages})"
            ),
            Rejection::OffsetOutOfBounds {
                pageno,
                offset,
                body_len,
            } => write!(
                f,
                "page {pageno} at offset {offset} lies outside the pages of the {body_len}-byte \
                 body"
            ),
            Rejection::OverlappingPages { pageno, offset } => write!(
                f,
                "page {pageno} at offset {offset} overlaps the page before it"
            ),
            Rejection::NoPage1 => write!(f, "page 1 is missing"),
            Rejection::Inconsistent { detail } => write!(f, "inconsistent: {detail}"),
            Rejection::PageSizeMismatch { sidecar, index } => write!(
                f,
                "page size {sidecar} differs from the index's page size {index}"
            ),
            Rejection::StaleCounter { sidecar, index } => write!(
                f,
                "stale: the index changed since it was written (change counter {sidecar}, \
                 index {index})"
            ),
            Rejection::StalePageCount { sidecar, index } => write!(
                f,
                "stale: the index changed since it was written ({sidecar} pages, index {index})"
            ),
            Rejection::StalePage1 => write!(
                f,
                "stale: page 1 differs from the index's (the index changed since it was written)"
            ),
            Rejection::PageDiffers { pageno } => write!(
                f,
                "stale: page {pageno} differs from the index's (the index changed since it \
                 was written)"
            ),
            Rejection::BadIndexHeader { len } => {
                write!(f, "the index's first {len} bytes are not an SQLite header")
            }
        }
    }
}

impl std::error::Error for Rejection {}

/// The pages of a validated sidecar, pinned in memory: page number → page bytes,
/// all of the sidecar's page size. Lookups are a binary search over the sorted
/// page table.
#[derive(Clone)]
pub struct PageMap {
    page_size: u32,
    body: Box<[u8]>,
    /// (page number, body offset), strictly ascending by page number.
    table: Box<[(u32, u32)]>,
}

impl fmt::Debug for PageMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PageMap")
            .field("page_size", &self.page_size)
            .field("pages", &self.table.len())
            .finish()
    }
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

/// The page size an SQLite header declares (`1` means 65536).
fn header_page_size(h: &[u8]) -> u32 {
    match u16::from_be_bytes([h[HDR_PAGE_SIZE], h[HDR_PAGE_SIZE + 1]]) {
        1 => 65536,
        n => n as u32,
    }
}

impl PageMap {
    /// The database page size; every page is this long.
    pub fn page_size(&self) -> u32 {
        self.page_size
    }

    /// Number of pages held.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// True when no page is held.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    fn slab(&self, offset: u32) -> &[u8] {
        let start = offset as usize;
        &self.body[start..start + self.page_size as usize]
    }

    /// The bytes of page `pageno` (1-based), if the sidecar holds it.
    pub fn get(&self, pageno: u32) -> Option<&[u8]> {
        self.table
            .binary_search_by_key(&pageno, |&(p, _)| p)
            .ok()
            .map(|i| self.slab(self.table[i].1))
    }

    /// Does the sidecar hold page `pageno`?
    pub fn contains(&self, pageno: u32) -> bool {
        self.table
            .binary_search_by_key(&pageno, |&(p, _)| p)
            .is_ok()
    }

    /// The page numbers held, ascending.
    pub fn page_numbers(&self) -> impl ExactSizeIterator<Item = u32> + '_ {
        self.table.iter().map(|&(p, _)| p)
    }

    /// Every page, ascending by page number.
    pub fn pages(&self) -> impl ExactSizeIterator<Item = (u32, &[u8])> + '_ {
        self.table.iter().map(|&(p, o)| (p, self.slab(o)))
    }

    /// Page 1 (always present in a validated sidecar).
    pub fn page1(&self) -> &[u8] {
        self.slab(self.table[0].1)
    }

    /// SQLite's file change counter when the sidecar was written.
    pub fn change_counter(&self) -> u32 {
        be32(self.page1(), HDR_CHANGE_COUNTER)
    }

    /// The database size in pages when the sidecar was written.
    pub fn database_pages(&self) -> u32 {
        be32(self.page1(), HDR_DATABASE_PAGES)
    }

    /// Bytes held in memory (the decompressed body and the page table).
    pub fn memory_bytes(&self) -> usize {
        self.body.len() + self.table.len() * 8
    }

    /// Is the sidecar fresh for an index whose page 1 starts with `index_page1`?
    ///
    /// `index_page1` is what a reader reads from the index anyway when SQLite opens
    /// it: at least its 100-byte header, ideally the whole of page 1. The page size
    /// (offset 16), the file change counter (offset 24) and the database size in
    /// pages (offset 28) must agree, then every byte given must equal the
    /// sidecar's page 1. SQLite bumps the change counter in every write
    /// transaction of a rollback-journal database, so an index changed since the
    /// sidecar was written (by Python barecat, by any SQLite client) fails here.
    pub fn check_fresh(&self, index_page1: &[u8]) -> Result<(), Rejection> {
        check_fresh(self.page_size, self.page1(), index_page1)
    }
}

/// [`PageMap::check_fresh`] of a sidecar whose page size is `page_size` and whose
/// page 1 is `ours`.
pub fn check_fresh(page_size: u32, ours: &[u8], index_page1: &[u8]) -> Result<(), Rejection> {
    if index_page1.len() < SQLITE_HEADER_LEN || !index_page1.starts_with(b"SQLite format 3\0") {
        return Err(Rejection::BadIndexHeader {
            len: index_page1.len(),
        });
    }
    let index_ps = header_page_size(index_page1);
    if index_ps != page_size {
        return Err(Rejection::PageSizeMismatch {
            sidecar: page_size,
            index: index_ps,
        });
    }
    let field = |at| (be32(ours, at), be32(index_page1, at));
    match field(HDR_CHANGE_COUNTER) {
        (sidecar, index) if sidecar != index => {
            return Err(Rejection::StaleCounter { sidecar, index })
        }
        _ => {}
    }
    match field(HDR_DATABASE_PAGES) {
        (sidecar, index) if sidecar != index => {
            return Err(Rejection::StalePageCount { sidecar, index })
        }
        _ => {}
    }
    let n = index_page1.len().min(ours.len());
    if ours[..n] != index_page1[..n] {
        return Err(Rejection::StalePage1);
    }
    Ok(())
}

/// Decompress the single zstd frame `frame` into at most `limit` bytes.
///
/// The output is reserved at the size the frame declares (within the limit; pages
/// not written cost nothing), else grows as the decoder produces it, and decoding
/// stops one byte past the limit, or past
/// the size the frame declares. The decoder's window is bounded too (a frame may
/// ask for gigabytes): by the limit, but never below 8 MiB, the largest window zstd
/// levels up to 19 use.
fn decompress(frame: &[u8], limit: u64) -> Result<Vec<u8>, Rejection> {
    let mut out = Vec::new();
    // The declared size, exactly: a vector grown by doubling would hold up to twice
    // that. (A hostile claim too large to reserve falls back to growing.)
    if let Ok(Some(n)) = zstd_safe::get_frame_content_size(frame) {
        if n <= limit {
            let _ = out.try_reserve_exact(n as usize);
        }
    }
    decode(frame, limit, |piece| {
        out.extend_from_slice(piece);
        true
    })?;
    Ok(out)
}

/// Decode the single zstd frame `frame` as [`decompress`] does (the same checks and
/// rejections), handing the bytes to `sink` piece by piece as they come instead of
/// keeping them; `sink` returns false to stop early (the rest is not decoded, nor
/// checked). Returns the number of bytes decoded: the body's length unless stopped.
fn decode(frame: &[u8], limit: u64, mut sink: impl FnMut(&[u8]) -> bool) -> Result<u64, Rejection> {
    let zerr = |detail: String| Rejection::Zstd { detail };
    let frame_len = zstd_safe::find_frame_compressed_size(frame)
        .map_err(|c| zerr(zstd_safe::get_error_name(c).to_string()))?;
    if frame_len < frame.len() {
        return Err(Rejection::TrailingData {
            bytes: frame.len() - frame_len,
        });
    }
    let declared =
        zstd_safe::get_frame_content_size(frame).map_err(|_| zerr("not a zstd frame".into()))?;
    if let Some(n) = declared.filter(|&n| n > limit) {
        return Err(Rejection::TooLarge {
            claimed: Some(n),
            limit,
        });
    }
    let cap = declared.unwrap_or(limit);
    let mut ctx = zstd_safe::DCtx::create();
    let window_log = (64 - limit.leading_zeros()).clamp(23, 27);
    ctx.set_parameter(zstd_safe::DParameter::WindowLogMax(window_log))
        .map_err(|c| zerr(zstd_safe::get_error_name(c).to_string()))?;
    let dec = zstd::stream::read::Decoder::with_context(frame, &mut ctx).single_frame();
    let mut r = dec.take(cap.saturating_add(1));
    let mut buf = vec![0u8; 128 << 10];
    let mut got = 0u64;
    loop {
        let k = match r.read(&mut buf) {
            Ok(0) => break,
            Ok(k) => k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(zerr(e.to_string())),
        };
        got += k as u64;
        if !sink(&buf[..k]) {
            return Ok(got);
        }
    }
    match declared {
        None if got > limit => Err(Rejection::TooLarge {
            claimed: None,
            limit,
        }),
        Some(n) if got != n => Err(zerr(format!(
            "the frame declares {n} bytes but holds {}",
            if got > n {
                "more".to_string()
            } else {
                got.to_string()
            }
        ))),
        _ => Ok(got),
    }
}

/// Parse and validate a sidecar of an index of `index_len` bytes.
///
/// Checks, in order: the header (length, magic, version), the zstd frame (one
/// frame, nothing after it, decompressing to at most [`max_body_len`]`(index_len)`
/// bytes), the page size, the page table (inside the body, page numbers from 1
/// strictly ascending, each page inside the body after the table and after the
/// page before it, so that the pages never hold more bytes than the body), and
/// page 1 (present, an SQLite
/// header for this page size, no page number beyond the database size it
/// records). Freshness against the index is [`PageMap::check_fresh`]; [`load`]
/// does both.
pub fn parse(bytes: &[u8], index_len: u64) -> Result<PageMap, Rejection> {
    let frame = frame_of(bytes)?;
    let body = decompress(frame, max_body_len(index_len))?;
    let (page_size, table) = table_of(&body, body.len() as u64)?;
    let map = PageMap {
        page_size,
        body: body.into_boxed_slice(),
        table: table.into_boxed_slice(),
    };
    page1_rules(page_size, map.page1(), &map.table)?;
    Ok(map)
}

/// The frame of a sidecar, after the header's rules (length, magic, version).
fn frame_of(bytes: &[u8]) -> Result<&[u8], Rejection> {
    if bytes.len() < HEADER_LEN {
        return Err(Rejection::Truncated { len: bytes.len() });
    }
    let magic: [u8; 8] = bytes[..8].try_into().expect("8 bytes");
    if magic != MAGIC {
        return Err(Rejection::OtherMagic { magic });
    }
    let version = le32(bytes, 8);
    if version > FORMAT_VERSION {
        return Err(Rejection::NewerVersion { version });
    }
    if version < FORMAT_VERSION {
        return Err(Rejection::OldVersion { version });
    }
    Ok(&bytes[HEADER_LEN..])
}

/// The page size and the page table of a body of `body_len` bytes that starts with
/// `head` (at least its table, when the body holds one), after the rules of the
/// page size and the table.
fn table_of(head: &[u8], body_len: u64) -> Result<(u32, Vec<(u32, u32)>), Rejection> {
    let short = |needed: u64| Rejection::ShortBody {
        len: body_len as usize,
        needed,
    };
    if body_len < 8 {
        return Err(short(8));
    }
    let page_size = le32(head, 0);
    if !page_size.is_power_of_two() || !(MIN_PAGE_SIZE..=MAX_PAGE_SIZE).contains(&page_size) {
        return Err(Rejection::BadPageSize { page_size });
    }
    let n = le32(head, 4);
    let table_end = 8 + 8 * n as u64;
    if body_len < table_end {
        return Err(short(table_end));
    }
    let mut table = Vec::with_capacity(n as usize);
    let mut previous = 0u32;
    // Where the next page may start: after the table, then after the page before.
    let mut free_from = table_end;
    for i in 0..n {
        let at = 8 + 8 * i as usize;
        let (pageno, offset) = (le32(head, at), le32(head, at + 4));
        if pageno == 0 {
            return Err(Rejection::PageOutOfRange { pageno, pages: 0 });
        }
        if i > 0 && pageno <= previous {
            return Err(Rejection::NotAscending {
                position: i,
                pageno,
                previous,
            });
        }
        if (offset as u64) < table_end || offset as u64 + page_size as u64 > body_len {
            return Err(Rejection::OffsetOutOfBounds {
                pageno,
                offset,
                body_len: body_len as usize,
            });
        }
        if (offset as u64) < free_from {
            return Err(Rejection::OverlappingPages { pageno, offset });
        }
        free_from = offset as u64 + page_size as u64;
        table.push((pageno, offset));
        previous = pageno;
    }
    if table.first().map(|&(p, _)| p) != Some(1) {
        return Err(Rejection::NoPage1);
    }
    Ok((page_size, table))
}

/// The rules of page 1 (`p1`), the first page of `table`: an SQLite header that
/// declares the body's page size and a database that holds every page of the table.
fn page1_rules(page_size: u32, p1: &[u8], table: &[(u32, u32)]) -> Result<(), Rejection> {
    if !p1.starts_with(b"SQLite format 3\0") {
        return Err(Rejection::Inconsistent {
            detail: "page 1 is not an SQLite header".into(),
        });
    }
    if header_page_size(p1) != page_size {
        return Err(Rejection::Inconsistent {
            detail: format!(
                "page 1 declares page size {}, the body {page_size}",
                header_page_size(p1)
            ),
        });
    }
    let pages = be32(p1, HDR_DATABASE_PAGES);
    if let Some(&(last, _)) = table.last() {
        if pages != 0 && last > pages {
            return Err(Rejection::PageOutOfRange {
                pageno: last,
                pages,
            });
        }
    }
    Ok(())
}

/// The page size and the page table of a sidecar checked by [`parse_each_page`].
#[derive(Debug, Clone)]
pub struct Outline {
    /// The database page size.
    pub page_size: u32,
    /// `(pageno, offset in the body)` of every page, ascending by page number.
    pub table: Vec<(u32, u32)>,
}

/// [`parse`] without holding the body: the same rules and rejections, in the same
/// order, in memory for the page table and one page. The frame is decoded twice:
/// once for the body's length and table (which the table's rules need), then again
/// handing every page in order to `on_page` (page 1 first, once every rule of
/// [`parse`] held); an error from `on_page` stops the decoding. Returns the outline
/// when every rule of [`parse`] held (even if `on_page` then failed) and the
/// verdict. For checking a sidecar against its index without holding it (`verify`).
pub fn parse_each_page(
    bytes: &[u8],
    index_len: u64,
    mut on_page: impl FnMut(u32, &[u8]) -> Result<(), Rejection>,
) -> (Option<Outline>, Result<(), Rejection>) {
    let (frame, limit, outline) = match outline_of(bytes, index_len) {
        Ok(x) => x,
        Err(e) => return (None, Err(e)),
    };
    // Second pass: the pages, in body order (the table's offsets ascend).
    let Outline { page_size, table } = &outline;
    let ps = *page_size as usize;
    let mut page = vec![0u8; ps];
    let (mut next, mut pos, mut fill) = (0usize, 0u64, 0usize);
    // What stopped the pass, and whether every rule of `parse` had held by then.
    let mut stopped: Option<(Rejection, bool)> = None;
    let decoded = decode(frame, limit, |mut piece| {
        while !piece.is_empty() && next < table.len() {
            let (pageno, offset) = table[next];
            let start = offset as u64 + fill as u64;
            if pos < start {
                let skip = ((start - pos) as usize).min(piece.len());
                piece = &piece[skip..];
                pos += skip as u64;
                continue;
            }
            let k = (ps - fill).min(piece.len());
            page[fill..fill + k].copy_from_slice(&piece[..k]);
            (fill, pos, piece) = (fill + k, pos + k as u64, &piece[k..]);
            if fill < ps {
                continue;
            }
            if next == 0 {
                if let Err(r) = page1_rules(*page_size, &page, table) {
                    stopped = Some((r, false));
                    return false;
                }
            }
            if let Err(r) = on_page(pageno, &page) {
                stopped = Some((r, true));
                return false;
            }
            (next, fill) = (next + 1, 0);
        }
        // Every page seen: the rest of the body is not needed.
        next < table.len()
    });
    match (decoded, stopped) {
        (Err(e), _) | (_, Some((e, false))) => (None, Err(e)),
        (Ok(_), Some((e, true))) => (Some(outline), Err(e)),
        (Ok(_), None) => (Some(outline), Ok(())),
    }
}

/// The first pass of [`parse_each_page`]: the frame after the header's rules, the
/// body's length limit, and the page size and table after their rules (the length
/// of the body, which those need, and its head up to the end of the table).
fn outline_of(bytes: &[u8], index_len: u64) -> Result<(&[u8], u64, Outline), Rejection> {
    let frame = frame_of(bytes)?;
    let limit = max_body_len(index_len);
    let mut head = Vec::new();
    let mut want = 8u64;
    let body_len = decode(frame, limit, |mut piece| {
        while (head.len() as u64) < want && !piece.is_empty() {
            let k = ((want - head.len() as u64) as usize).min(piece.len());
            head.extend_from_slice(&piece[..k]);
            piece = &piece[k..];
            if want == 8 && head.len() == 8 {
                want = 8 + 8 * le32(&head, 4) as u64;
            }
        }
        true
    })?;
    let (page_size, table) = table_of(&head, body_len)?;
    Ok((frame, limit, Outline { page_size, table }))
}

/// [`parse`], then [`PageMap::check_fresh`] against the index's page 1: what a
/// reader calls. Any `Err` means "use no sidecar".
pub fn load(bytes: &[u8], index_len: u64, index_page1: &[u8]) -> Result<PageMap, Rejection> {
    let map = parse(bytes, index_len)?;
    map.check_fresh(index_page1)?;
    Ok(map)
}

/// Build a v3 sidecar from `pages`, strictly ascending by page number, each
/// `page_size` bytes, compressed at zstd `level` as one frame with its content
/// size and no checksum (what the reference producer writes, byte for byte).
pub fn encode(page_size: u32, pages: &[(u32, &[u8])], level: i32) -> std::io::Result<Vec<u8>> {
    let pagenos: Vec<u32> = pages.iter().map(|p| p.0).collect();
    let mut k = 0;
    encode_pages(
        page_size,
        &pagenos,
        |pageno, buf| {
            let data = pages[k].1;
            k += 1;
            if data.len() != buf.len() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!("page {pageno} is {} bytes, not {page_size}", data.len()),
                ));
            }
            buf.copy_from_slice(data);
            Ok(())
        },
        level,
    )
}

/// [`encode`] with the pages `pagenos` (strictly ascending) read by
/// `read_page(pageno, buf)` straight into the body, which is compressed in one
/// shot. One shot, not streaming: zstd's streaming compression of
/// a body of more than one block gives other bytes than the reference producer's
/// one-shot compression, and the sidecar is byte-identical to the reference's. So
/// the body (every bundled page, about 0.2% of the index) is held while it is
/// compressed, once, without a copy per page.
pub fn encode_pages(
    page_size: u32,
    pagenos: &[u32],
    mut read_page: impl FnMut(u32, &mut [u8]) -> std::io::Result<()>,
    level: i32,
) -> std::io::Result<Vec<u8>> {
    let invalid = |m: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, m);
    let n = pagenos.len();
    let n32 = u32::try_from(n).map_err(|_| invalid(format!("{n} pages are too many")))?;
    let data_start = 8 + 8 * n;
    let body_len = data_start + n * page_size as usize;
    if u32::try_from(body_len).is_err() {
        return Err(invalid(format!(
            "a body of {body_len} bytes does not fit 32-bit offsets"
        )));
    }
    let mut previous = 0u32;
    for &pageno in pagenos {
        if pageno <= previous {
            return Err(invalid(format!(
                "page {pageno} after {previous}: pages must be strictly ascending from 1"
            )));
        }
        previous = pageno;
    }
    let mut body = Vec::with_capacity(body_len);
    body.extend_from_slice(&page_size.to_le_bytes());
    body.extend_from_slice(&n32.to_le_bytes());
    for (i, &pageno) in pagenos.iter().enumerate() {
        body.extend_from_slice(&pageno.to_le_bytes());
        body.extend_from_slice(&((data_start + i * page_size as usize) as u32).to_le_bytes());
    }
    body.resize(body_len, 0);
    for (i, &pageno) in pagenos.iter().enumerate() {
        let at = data_start + i * page_size as usize;
        read_page(pageno, &mut body[at..at + page_size as usize])?;
    }
    let frame = zstd::bulk::compress(&body, level)?;
    drop(body);
    let mut out = Vec::with_capacity(HEADER_LEN + frame.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&frame);
    Ok(out)
}

/// The byte range of page `pageno` in a database file of pages of `page_size`.
pub fn page_range(pageno: u32, page_size: u32) -> Range<u64> {
    let start = (pageno as u64 - 1) * page_size as u64;
    start..start + page_size as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    const PS: u32 = 512;

    /// A page 1 with an SQLite header: page size, change counter, size in pages.
    fn page1(ps: u32, counter: u32, pages: u32) -> Vec<u8> {
        let mut p = vec![0u8; ps as usize];
        p[..16].copy_from_slice(b"SQLite format 3\0");
        let code = if ps == 65536 { 1u16 } else { ps as u16 };
        p[16..18].copy_from_slice(&code.to_be_bytes());
        p[24..28].copy_from_slice(&counter.to_be_bytes());
        p[28..32].copy_from_slice(&pages.to_be_bytes());
        p[100] = 0x05; // an interior table page, for the look of it
        p
    }

    fn sample(counter: u32) -> (Vec<u8>, Vec<u8>) {
        let p1 = page1(PS, counter, 10);
        let p4 = vec![4u8; PS as usize];
        let p7 = vec![7u8; PS as usize];
        let bytes = encode(PS, &[(1, &p1), (4, &p4), (7, &p7)], DEFAULT_LEVEL).unwrap();
        (bytes, p1)
    }

    /// A sidecar around a hand-made body (compressed as the producer does).
    fn with_body(body: &[u8]) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&zstd::bulk::compress(body, 3).unwrap());
        out
    }

    fn body(ps: u32, table: &[(u32, u32)], pages: &[&[u8]]) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&ps.to_le_bytes());
        b.extend_from_slice(&(table.len() as u32).to_le_bytes());
        for (p, o) in table {
            b.extend_from_slice(&p.to_le_bytes());
            b.extend_from_slice(&o.to_le_bytes());
        }
        for p in pages {
            b.extend_from_slice(p);
        }
        b
    }

    const INDEX_LEN: u64 = 10 * PS as u64;

    /// `parse_each_page` must say what `parse` says, rejection for rejection, and
    /// hand out exactly the pages of the parsed map.
    fn same_verdicts(bytes: &[u8], index_len: u64) {
        let whole = parse(bytes, index_len);
        let mut seen: Vec<(u32, Vec<u8>)> = Vec::new();
        let (outline, verdict) = parse_each_page(bytes, index_len, |p, page| {
            seen.push((p, page.to_vec()));
            Ok(())
        });
        match whole {
            Ok(map) => {
                assert_eq!(verdict, Ok(()));
                let o = outline.expect("an outline");
                assert_eq!(o.page_size, map.page_size());
                assert_eq!(o.table, map.table.to_vec());
                let want: Vec<(u32, Vec<u8>)> = map.pages().map(|(p, b)| (p, b.to_vec())).collect();
                assert_eq!(seen, want);
            }
            Err(r) => {
                assert_eq!(verdict, Err(r));
                assert!(outline.is_none());
            }
        }
    }

    #[test]
    fn parsing_page_by_page_agrees_with_parsing_whole() {
        let (bytes, _) = sample(5);
        same_verdicts(&bytes, INDEX_LEN);
        // Every bit flip and every truncation of the file.
        for i in 0..bytes.len() * 8 {
            let mut b = bytes.clone();
            b[i / 8] ^= 1 << (i % 8);
            same_verdicts(&b, INDEX_LEN);
        }
        for n in 0..bytes.len() {
            same_verdicts(&bytes[..n], INDEX_LEN);
        }
        // Pages of 64 KiB: a body decoded in several pieces, pages across them.
        let ps = 65536u32;
        let p1 = page1(ps, 3, 40);
        let pages: Vec<Vec<u8>> = (0..5u8).map(|k| vec![k ^ 0x5a; ps as usize]).collect();
        let mut list: Vec<(u32, &[u8])> = vec![(1, &p1)];
        for (k, p) in pages.iter().enumerate() {
            list.push((3 + 7 * k as u32, p));
        }
        let big = encode(ps, &list, DEFAULT_LEVEL).unwrap();
        same_verdicts(&big, 40 * ps as u64);
        same_verdicts(&big, 4 * ps as u64);
        // Hand-made bodies breaking each rule of the table.
        let p1 = page1(PS, 1, 10);
        let x = vec![9u8; PS as usize];
        let t = 8 + 8 * 2;
        for (table, pages) in [
            (vec![(1, t), (2, t + PS)], vec![&p1[..], &x[..]]),
            (vec![(0, t), (2, t + PS)], vec![&p1[..], &x[..]]),
            (vec![(2, t), (1, t + PS)], vec![&x[..], &p1[..]]),
            (vec![(1, t), (2, t)], vec![&p1[..], &x[..]]),
            (vec![(1, t), (2, t + PS + 1)], vec![&p1[..], &x[..]]),
            (vec![(1, t), (20, t + PS)], vec![&p1[..], &x[..]]),
            (vec![(1, t), (2, t + PS)], vec![&x[..], &x[..]]),
            (
                vec![(1, t + 3), (2, t + PS + 3)],
                vec![&[1u8, 2, 3][..], &p1[..], &x[..]],
            ),
        ] {
            same_verdicts(&with_body(&body(PS, &table, &pages)), INDEX_LEN);
        }
        same_verdicts(&with_body(&[1, 2, 3]), INDEX_LEN);
        same_verdicts(&with_body(&body(300, &[], &[])), INDEX_LEN);
    }

    #[test]
    fn round_trip_and_lookups() {
        let (bytes, p1) = sample(5);
        let map = load(&bytes, INDEX_LEN, &p1).unwrap();
        assert_eq!(map.page_size(), PS);
        assert_eq!(map.len(), 3);
        assert_eq!(map.page_numbers().collect::<Vec<_>>(), [1, 4, 7]);
        assert_eq!(map.get(4).unwrap(), &[4u8; PS as usize][..]);
        assert_eq!(map.get(1).unwrap(), &p1[..]);
        assert!(map.get(2).is_none() && map.get(8).is_none() && map.get(0).is_none());
        assert_eq!(map.change_counter(), 5);
        assert_eq!(map.database_pages(), 10);
        // The uniform offsets of the format.
        let body = zstd::stream::decode_all(&bytes[HEADER_LEN..]).unwrap();
        assert_eq!(le32(&body, 12), 8 + 8 * 3);
        assert_eq!(le32(&body, 20), 8 + 8 * 3 + PS);
        // The header alone is enough for freshness.
        map.check_fresh(&p1[..100]).unwrap();
    }

    #[test]
    fn another_format_or_a_newer_version_is_absent() {
        let (mut bytes, _) = sample(1);
        let mut other = bytes.clone();
        other[..8].copy_from_slice(b"SQPC\0\0\0\0");
        let r = parse(&other, INDEX_LEN).unwrap_err();
        assert_eq!((r.code(), r.kind()), ("other_magic", RejectionKind::Absent));
        bytes[8..12].copy_from_slice(&4u32.to_le_bytes());
        let r = parse(&bytes, INDEX_LEN).unwrap_err();
        assert_eq!(
            (r.code(), r.kind()),
            ("newer_version", RejectionKind::Absent)
        );
        assert_eq!(r.log_level(), log::Level::Debug);
        bytes[8..12].copy_from_slice(&2u32.to_le_bytes());
        let r = parse(&bytes, INDEX_LEN).unwrap_err();
        assert_eq!(
            (r.code(), r.kind()),
            ("old_version", RejectionKind::Corrupt)
        );
    }

    #[test]
    fn truncated_and_garbage_are_corrupt() {
        let (bytes, _) = sample(1);
        for n in 0..bytes.len() {
            let r = parse(&bytes[..n], INDEX_LEN).unwrap_err();
            assert_eq!(r.kind(), RejectionKind::Corrupt, "{n}: {r}");
            if n < HEADER_LEN {
                assert_eq!(r.code(), "truncated");
            } else {
                assert_eq!(r.code(), "zstd_error", "{n}: {r}");
            }
        }
        let mut garbage = MAGIC.to_vec();
        garbage.extend_from_slice(&3u32.to_le_bytes());
        garbage.extend_from_slice(b"this is not zstd at all");
        assert_eq!(parse(&garbage, INDEX_LEN).unwrap_err().code(), "zstd_error");
        let mut trailing = bytes.clone();
        trailing.extend_from_slice(b"xx");
        let r = parse(&trailing, INDEX_LEN).unwrap_err();
        assert_eq!(r, Rejection::TrailingData { bytes: 2 });
        // Every single-bit flip in the frame is caught or yields a valid map; never
        // a panic.
        for i in HEADER_LEN * 8..bytes.len() * 8 {
            let mut b = bytes.clone();
            b[i / 8] ^= 1 << (i % 8);
            let _ = parse(&b, INDEX_LEN);
        }
    }

    #[test]
    fn zstd_bombs_are_refused_before_allocating() {
        // A real bomb: 64 MiB of zeros in a few KB, for a 5 KB index.
        let zeros = vec![0u8; 64 << 20];
        let mut bomb = MAGIC.to_vec();
        bomb.extend_from_slice(&3u32.to_le_bytes());
        bomb.extend_from_slice(&zstd::bulk::compress(&zeros, 19).unwrap());
        assert!(bomb.len() < 10_000);
        let r = parse(&bomb, INDEX_LEN).unwrap_err();
        assert_eq!(
            r,
            Rejection::TooLarge {
                claimed: Some(64 << 20),
                limit: max_body_len(INDEX_LEN)
            }
        );
        // A frame header claiming 2^60 bytes.
        let mut liar = bomb[..HEADER_LEN].to_vec();
        let mut frame = vec![0x28, 0xb5, 0x2f, 0xfd, 0xe0, 0x40];
        frame.extend_from_slice(&(1u64 << 60).to_le_bytes());
        frame.extend_from_slice(&[1, 0, 0]); // a last, empty raw block
        liar.extend_from_slice(&frame);
        let r = parse(&liar, INDEX_LEN).unwrap_err();
        assert!(
            matches!(r, Rejection::TooLarge { .. } | Rejection::Zstd { .. }),
            "{r}"
        );
        // Without a declared size: streamed, stopped one byte past the limit.
        let mut enc = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
        enc.include_contentsize(false).unwrap();
        std::io::Write::write_all(&mut enc, &zeros[..1 << 20]).unwrap();
        let mut unsized_bomb = bomb[..HEADER_LEN].to_vec();
        unsized_bomb.extend_from_slice(&enc.finish().unwrap());
        let r = parse(&unsized_bomb, INDEX_LEN).unwrap_err();
        assert_eq!(r.code(), "too_large", "{r}");
    }

    #[test]
    fn a_frame_without_content_size_parses() {
        let p1 = page1(PS, 1, 3);
        let b = body(PS, &[(1, 16)], &[&p1]);
        let mut enc = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
        enc.include_contentsize(false).unwrap();
        std::io::Write::write_all(&mut enc, &b).unwrap();
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&3u32.to_le_bytes());
        bytes.extend_from_slice(&enc.finish().unwrap());
        let map = load(&bytes, 3 * PS as u64, &p1).unwrap();
        assert_eq!(map.len(), 1);
    }

    #[test]
    fn page_tables_are_checked() {
        let p1 = page1(PS, 1, 10);
        let x = vec![9u8; PS as usize];
        let start = 8 + 8 * 2;
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (
                body(PS, &[(1, start), (1, start + PS)], &[&p1, &x]),
                "not_ascending",
            ),
            (
                body(
                    PS,
                    &[(1, 32), (3, 32 + PS), (2, 32 + 2 * PS)],
                    &[&p1, &x, &x],
                ),
                "not_ascending",
            ),
            (body(PS, &[(0, 16)], &[&p1]), "page_out_of_range"),
            (
                body(PS, &[(1, start), (11, start + PS)], &[&p1, &x]),
                "page_out_of_range",
            ),
            (
                body(PS, &[(1, start), (2, start + PS + 1)], &[&p1, &x]),
                "offset_out_of_bounds",
            ),
            (body(PS, &[(1, u32::MAX)], &[&p1]), "offset_out_of_bounds"),
            (body(PS, &[(1, 8)], &[&p1]), "offset_out_of_bounds"),
            (
                body(PS, &[(1, start), (2, start)], &[&p1, &x]),
                "overlapping_pages",
            ),
            (
                body(PS, &[(1, start + PS), (2, start)], &[&p1, &x]),
                "overlapping_pages",
            ),
            (body(PS, &[(2, 16)], &[&x]), "no_page_1"),
            (body(PS, &[], &[]), "no_page_1"),
            (body(300, &[(1, 16)], &[&p1]), "bad_page_size"),
            (body(1 << 17, &[(1, 16)], &[&p1]), "bad_page_size"),
            (body(PS, &[(1, 16)], &[&x]), "inconsistent"),
            (
                body(1024, &[(1, 16)], &[&page1(PS, 1, 1), &page1(PS, 1, 1)]),
                "inconsistent",
            ),
            (vec![0, 2, 0], "short_body"),
        ];
        for (b, code) in cases {
            let mut b = b;
            if code == "short_body" {
                b = body(PS, &[], &[]);
                b[4..8].copy_from_slice(&1000u32.to_le_bytes());
            }
            let r = parse(&with_body(&b), INDEX_LEN).unwrap_err();
            assert_eq!(r.code(), code, "{r}");
            assert_eq!(r.kind(), RejectionKind::Corrupt);
        }
        // n so large that 8 + 8n overflows 32 bits.
        let mut b = body(PS, &[], &[]);
        b[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(
            parse(&with_body(&b), INDEX_LEN).unwrap_err().code(),
            "short_body"
        );
    }

    #[test]
    fn freshness_uses_page_1() {
        let (bytes, p1) = sample(5);
        let map = parse(&bytes, INDEX_LEN).unwrap();
        let newer = page1(PS, 6, 10);
        assert_eq!(
            map.check_fresh(&newer).unwrap_err(),
            Rejection::StaleCounter {
                sidecar: 5,
                index: 6
            }
        );
        let grown = page1(PS, 5, 11);
        assert_eq!(
            map.check_fresh(&grown).unwrap_err().code(),
            "stale_page_count"
        );
        let mut other = p1.clone();
        other[300] = 1;
        let r = map.check_fresh(&other).unwrap_err();
        assert_eq!((r.code(), r.kind()), ("stale_page_1", RejectionKind::Stale));
        assert_eq!(r.log_level(), log::Level::Info);
        let r = map.check_fresh(&page1(1024, 5, 10)).unwrap_err();
        assert_eq!(
            r,
            Rejection::PageSizeMismatch {
                sidecar: PS,
                index: 1024
            }
        );
        assert_eq!(
            map.check_fresh(&p1[..50]).unwrap_err().code(),
            "bad_index_header"
        );
        assert_eq!(
            map.check_fresh(&vec![0u8; PS as usize]).unwrap_err().code(),
            "bad_index_header"
        );
        // 65536-byte pages are stored as 1 in the header.
        let big = page1(65536, 1, 1);
        let bytes = encode(65536, &[(1, &big)], 3).unwrap();
        load(&bytes, 65536, &big).unwrap();
    }

    #[test]
    fn encode_refuses_what_parse_would_reject() {
        let p = vec![0u8; PS as usize];
        assert!(encode(PS, &[(2, &p), (2, &p)], 3).is_err());
        assert!(encode(PS, &[(0, &p)], 3).is_err());
        assert!(encode(PS, &[(1, &p[..10])], 3).is_err());
    }
}
