//! The on-disk format of record datasets and record tables, as plain data.
//!
//! Why a module of its own: another reader (a remote-archive layer that fetches the
//! table over HTTP, a Python binding, a program in another language following
//! docs/FORMAT.md §10) needs exactly these encodings and checks and none of
//! our file handling. Everything here works on byte slices and strings.
//!
//! * A **dataset** is a directory: `meta.json` ([`Meta`]), `offset` (N entries of
//!   16 bytes, [`Entry`]), `crc` (N CRC32C values, u32 little-endian) and
//!   `chunk/<id>.zr`.
//! * A **record table** over a barecat archive `P` is one file `P-records`: a
//!   4096-byte header ([`TableHeader`]), N entries, N CRC32C values and a sorted list
//!   of the records whose index row has no CRC.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::core::error::{Error, Result};

/// Bytes per offset-table entry.
pub const ENTRY_SIZE: usize = 16;
/// Bytes per stored CRC32C.
pub const CRC_SIZE: usize = 4;
/// The format version written into `meta.json` and table headers.
pub const FORMAT_VERSION: u32 = 1;
/// `meta.json`'s `format` value.
pub const FORMAT_NAME: &str = "zrecord";
/// The offset table grows by this many entries at a time (16 MiB of table).
pub const TABLE_GROW: u64 = 1 << 20;
/// Chunk files grow by this many bytes at a time.
pub const CHUNK_GROW: u64 = 1 << 30;
/// Default records per chunk.
pub const CHUNK_RECORDS: u64 = 65536;
/// Default byte limit of a chunk (a larger record gets a chunk of its own).
pub const CHUNK_BYTES: u64 = 1 << 30;
/// The largest record that fits an entry (`physical_length` is a u32).
pub const MAX_RECORD: u64 = u32::MAX as u64;
/// Suffix of the record table beside a barecat archive: `P-records`.
pub use crate::core::format::layout::TABLE_SUFFIX;
/// Size of the header of a record table file.
pub const TABLE_HEADER_SIZE: u64 = 4096;
/// First bytes of a record table file.
pub const TABLE_MAGIC: &[u8; 8] = b"BCRECTBL";

/// Where one record's stored bytes are: `chunk[offset .. offset + length)`.
/// `length == 0` is an empty record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Entry {
    /// The chunk file holding the bytes (`chunk/<id>.zr`).
    pub chunk: u32,
    /// Where the bytes start in that chunk.
    pub offset: u64,
    /// How many bytes are stored (after compression, if any).
    pub length: u32,
}

impl Entry {
    /// Decode the 16 bytes `[chunk u32][offset u64][length u32]`, little-endian.
    pub fn decode(b: &[u8]) -> Entry {
        Entry {
            chunk: u32::from_le_bytes(b[0..4].try_into().expect("4 bytes")),
            offset: u64::from_le_bytes(b[4..12].try_into().expect("8 bytes")),
            length: u32::from_le_bytes(b[12..16].try_into().expect("4 bytes")),
        }
    }

    /// The entry as the 16 bytes of the `offset` file (little-endian chunk, offset,
    /// length).
    pub fn encode(&self) -> [u8; ENTRY_SIZE] {
        let mut b = [0u8; ENTRY_SIZE];
        b[0..4].copy_from_slice(&self.chunk.to_le_bytes());
        b[4..12].copy_from_slice(&self.offset.to_le_bytes());
        b[12..16].copy_from_slice(&self.length.to_le_bytes());
        b
    }

    /// One past the last byte, or `None` when it overflows.
    pub fn end(&self) -> Option<u64> {
        self.offset.checked_add(self.length as u64)
    }
}

/// Entry `i` of a table held in `table` (entries from byte 0).
pub fn entry_at(table: &[u8], i: u64) -> Option<Entry> {
    let at = usize::try_from(i).ok()?.checked_mul(ENTRY_SIZE)?;
    table.get(at..at + ENTRY_SIZE).map(Entry::decode)
}

/// CRC `i` of a CRC array held in `crcs`.
pub fn crc_at(crcs: &[u8], i: u64) -> Option<u32> {
    let at = usize::try_from(i).ok()?.checked_mul(CRC_SIZE)?;
    crcs.get(at..at + CRC_SIZE)
        .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
}

/// How each record's bytes are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Compress {
    /// As given; gathers hand out slices of the mapped chunks.
    #[default]
    None,
    /// One zstd frame per record.
    Zstd,
    /// One raw DEFLATE stream (RFC 1951) per record.
    Flate,
}

impl Compress {
    /// The name `meta.json` stores (`none`, `zstd`, `flate`).
    pub fn name(self) -> &'static str {
        match self {
            Compress::None => "none",
            Compress::Zstd => "zstd",
            Compress::Flate => "flate",
        }
    }

    /// The codec of a `meta.json` name, or `None` for an unknown one.
    pub fn parse(s: &str) -> Option<Compress> {
        match s {
            "none" => Some(Compress::None),
            "zstd" => Some(Compress::Zstd),
            "flate" => Some(Compress::Flate),
            _ => None,
        }
    }
}

/// The element type of the records: a label, plus the element size of the fixed-size
/// numeric ones (records of those are stored aligned to their element size).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dtype {
    /// Opaque bytes of any length.
    #[default]
    Bytes,
    /// Unsigned 8-bit integers.
    U8,
    /// Signed 8-bit integers.
    I8,
    /// Unsigned 16-bit integers.
    U16,
    /// Signed 16-bit integers.
    I16,
    /// Unsigned 32-bit integers.
    U32,
    /// Signed 32-bit integers.
    I32,
    /// Unsigned 64-bit integers.
    U64,
    /// Signed 64-bit integers.
    I64,
    /// IEEE 754 half-precision floats.
    F16,
    /// bfloat16 floats (the upper half of an `f32`).
    Bf16,
    /// IEEE 754 single-precision floats.
    F32,
    /// IEEE 754 double-precision floats.
    F64,
}

const DTYPES: [(Dtype, &str, usize); 13] = [
    (Dtype::Bytes, "bytes", 1),
    (Dtype::U8, "u8", 1),
    (Dtype::I8, "i8", 1),
    (Dtype::U16, "u16", 2),
    (Dtype::I16, "i16", 2),
    (Dtype::U32, "u32", 4),
    (Dtype::I32, "i32", 4),
    (Dtype::U64, "u64", 8),
    (Dtype::I64, "i64", 8),
    (Dtype::F16, "f16", 2),
    (Dtype::Bf16, "bf16", 2),
    (Dtype::F32, "f32", 4),
    (Dtype::F64, "f64", 8),
];

impl Dtype {
    /// The name `meta.json` stores (`bytes`, `u8`, …, `f64`).
    pub fn name(self) -> &'static str {
        DTYPES.iter().find(|d| d.0 == self).map_or("bytes", |d| d.1)
    }

    /// The dtype of a `meta.json` name, or `None` for an unknown one.
    pub fn parse(s: &str) -> Option<Dtype> {
        DTYPES.iter().find(|d| d.1 == s).map(|d| d.0)
    }

    /// Bytes per element (1 for `bytes`).
    pub fn size(self) -> usize {
        DTYPES.iter().find(|d| d.0 == self).map_or(1, |d| d.2)
    }

    /// Every label, for help texts.
    pub fn names() -> Vec<&'static str> {
        DTYPES.iter().map(|d| d.1).collect()
    }
}

impl Serialize for Dtype {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Dtype {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Dtype, D::Error> {
        let s = String::deserialize(d)?;
        Dtype::parse(&s).ok_or_else(|| serde::de::Error::custom(format!("unknown dtype {s:?}")))
    }
}

/// One chunk that may still be appended to: `[id, write_pos, record_count]`.
/// Bytes of its file at and after `write_pos` are not part of the dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unfull(pub u32, pub u64, pub u64);

/// An entry override that readers apply over the `offset` and `crc` files:
/// `[index, chunk, offset, length, crc32c]`. See docs/FORMAT.md §10.2, "redo".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Redo(pub u64, pub u32, pub u64, pub u32, pub u32);

impl Redo {
    /// The overriding entry (without its index and CRC).
    pub fn entry(&self) -> Entry {
        Entry {
            chunk: self.1,
            offset: self.2,
            length: self.3,
        }
    }
}

/// The `chunks` object of `meta.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChunksMeta {
    /// Chunk ids in use are below `num`; the next new chunk is `num`.
    pub num: u32,
    /// Records per chunk: a writer starts a new chunk when one holds this many.
    pub size: u64,
    /// Bytes per chunk: a writer starts a new chunk before one would exceed this
    /// (a larger record gets a chunk of its own).
    pub max_bytes: u64,
    /// Chunk files grow by this many bytes at a time.
    pub grow: u64,
    /// Chunks whose written part may be shorter than their file.
    pub unfull: Vec<Unfull>,
}

/// `meta.json` of a dataset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Meta {
    /// The format's name, checked on open so another JSON file is not taken for a dataset.
    pub format: String,
    /// The format version; a reader refuses versions it does not know.
    pub version: u32,
    /// The number of records.
    pub length: u64,
    /// The element type of every record.
    pub dtype: Dtype,
    /// How the records' bytes are compressed in the chunks.
    pub compress: Compress,
    /// How records are spread over chunk files.
    pub chunks: ChunksMeta,
    /// The offset and crc files grow by this many entries at a time.
    pub table_grow: u64,
    /// Entry overrides committed but maybe not yet written into `offset`/`crc`.
    #[serde(default)]
    pub redo: Vec<Redo>,
    /// Chunk ids no entry refers to any more, to be removed by the next writer.
    #[serde(default)]
    pub retire: Vec<u32>,
}

impl Meta {
    /// A new, empty dataset's meta.
    pub fn new(dtype: Dtype, compress: Compress, chunk_records: u64, chunk_bytes: u64) -> Meta {
        Meta {
            format: FORMAT_NAME.into(),
            version: FORMAT_VERSION,
            length: 0,
            dtype,
            compress,
            chunks: ChunksMeta {
                num: 0,
                size: chunk_records.max(1),
                max_bytes: chunk_bytes.max(1),
                grow: CHUNK_GROW,
                unfull: Vec::new(),
            },
            table_grow: TABLE_GROW,
            redo: Vec::new(),
            retire: Vec::new(),
        }
    }

    /// Parse and check `meta.json` (named `path` in errors).
    pub fn parse(text: &[u8], path: &Path) -> Result<Meta> {
        let corrupt = |d: String| Error::CorruptRecords {
            path: path.to_path_buf(),
            detail: d,
        };
        let m: Meta = serde_json::from_slice(text)
            .map_err(|e| corrupt(format!("not a valid meta.json: {e}")))?;
        if m.format != FORMAT_NAME {
            return Err(corrupt(format!(
                "format is {:?}, not {FORMAT_NAME:?}",
                m.format
            )));
        }
        if m.version != FORMAT_VERSION {
            return Err(corrupt(format!(
                "format version {} is not supported (this program reads version {FORMAT_VERSION})",
                m.version
            )));
        }
        if m.chunks.size == 0 || m.chunks.max_bytes == 0 || m.chunks.grow == 0 || m.table_grow == 0
        {
            return Err(corrupt(
                "chunks.size, chunks.max_bytes, chunks.grow and table_grow must be positive".into(),
            ));
        }
        if m.length > (u64::MAX / ENTRY_SIZE as u64) {
            return Err(corrupt(format!("length {} is impossible", m.length)));
        }
        for u in &m.chunks.unfull {
            if u.0 >= m.chunks.num {
                return Err(corrupt(format!(
                    "unfull chunk {} is not below chunks.num {}",
                    u.0, m.chunks.num
                )));
            }
        }
        for r in &m.redo {
            if r.0 >= m.length {
                return Err(corrupt(format!(
                    "redo entry for record {} is past the length {}",
                    r.0, m.length
                )));
            }
        }
        Ok(m)
    }

    /// The file's bytes: pretty-printed JSON ending in a newline.
    pub fn to_json(&self) -> Vec<u8> {
        let mut v = serde_json::to_vec_pretty(self).expect("meta serializes");
        v.push(b'\n');
        v
    }

    /// The unfull row of chunk `id`.
    pub fn unfull(&self, id: u32) -> Option<&Unfull> {
        self.chunks.unfull.iter().find(|u| u.0 == id)
    }
}

/// The files of a dataset directory.
#[derive(Debug, Clone)]
pub struct DatasetPaths {
    /// The dataset directory.
    pub dir: PathBuf,
}

impl DatasetPaths {
    /// The files of the dataset in `dir` (nothing is checked or created).
    pub fn new(dir: impl AsRef<Path>) -> DatasetPaths {
        DatasetPaths {
            dir: dir.as_ref().to_path_buf(),
        }
    }
    /// `meta.json`: the commit point of every change.
    pub fn meta(&self) -> PathBuf {
        self.dir.join("meta.json")
    }
    /// `meta.json.tmp`: the next `meta.json`, renamed over it to commit.
    pub fn meta_tmp(&self) -> PathBuf {
        self.dir.join("meta.json.tmp")
    }
    /// `offset`: one 16-byte [`Entry`] per record.
    pub fn offset(&self) -> PathBuf {
        self.dir.join("offset")
    }
    /// `crc`: the CRC32C of each record's stored bytes.
    pub fn crc(&self) -> PathBuf {
        self.dir.join("crc")
    }
    /// `lock`: held by the one writer of the dataset.
    pub fn lock(&self) -> PathBuf {
        self.dir.join("lock")
    }
    /// `chunk/`: the directory of chunk files.
    pub fn chunk_dir(&self) -> PathBuf {
        self.dir.join("chunk")
    }
    /// `chunk/<id>.zr`: the chunk file `id`.
    pub fn chunk(&self, id: u32) -> PathBuf {
        self.dir.join("chunk").join(format!("{id}.zr"))
    }
}

/// Parse a chunk file name `<id>.zr` (decimal, no leading zeros).
pub fn parse_chunk_name(name: &str) -> Option<u32> {
    let digits = name.strip_suffix(".zr")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let id: u32 = digits.parse().ok()?;
    (id.to_string() == digits).then_some(id)
}

/// The order of the records of a table over an archive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TableOrder {
    /// Record i is the i-th file by path (bytewise).
    Path,
    /// Record i is the i-th file by (shard, offset).
    Address,
    /// Record i is the i-th path of a list given when the table was built.
    List,
}

impl TableOrder {
    fn code(self) -> u8 {
        match self {
            TableOrder::Path => 0,
            TableOrder::Address => 1,
            TableOrder::List => 2,
        }
    }
    fn from_code(c: u8) -> Option<TableOrder> {
        [TableOrder::Path, TableOrder::Address, TableOrder::List]
            .into_iter()
            .find(|o| o.code() == c)
    }
    /// The name the command line and reports use (`path`, `address`, `list`).
    pub fn name(self) -> &'static str {
        match self {
            TableOrder::Path => "path",
            TableOrder::Address => "address",
            TableOrder::List => "list",
        }
    }
}

/// What the table remembers of the index it was built from (see
/// docs/FORMAT.md §10.3, "Staleness").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stamp {
    /// The index was in WAL mode: its change counter proves nothing.
    pub wal: bool,
    /// SQLite's file change counter (bytes 24..28 of the database header).
    pub change_counter: u32,
    /// SQLite's page count (bytes 28..32 of the database header).
    pub page_count: u32,
    /// The inode number of the index file.
    pub inode: u64,
    /// Number of files in the index.
    pub files: u64,
    /// Their total size.
    pub bytes: u64,
}

/// The header of a record table file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableHeader {
    /// The number of records.
    pub length: u64,
    /// Which file record i is.
    pub order: TableOrder,
    /// What the table remembers of the index, to notice when it goes stale.
    pub stamp: Stamp,
    /// Records whose index row has no CRC (listed after the CRC array).
    pub missing_crcs: u64,
}

impl TableHeader {
    /// Where the entries start (just after the header).
    pub fn entries_offset(&self) -> u64 {
        TABLE_HEADER_SIZE
    }
    /// Where the CRC array starts (after the entries).
    pub fn crcs_offset(&self) -> u64 {
        TABLE_HEADER_SIZE + self.length * ENTRY_SIZE as u64
    }
    /// Where the list of records without a CRC starts (after the CRCs).
    pub fn missing_offset(&self) -> u64 {
        self.crcs_offset() + self.length * CRC_SIZE as u64
    }
    /// The exact size of the file.
    pub fn file_size(&self) -> u64 {
        self.missing_offset() + self.missing_crcs * 8
    }

    /// The header as it is stored at the start of the file.
    pub fn encode(&self) -> Vec<u8> {
        let mut h = vec![0u8; TABLE_HEADER_SIZE as usize];
        h[0..8].copy_from_slice(TABLE_MAGIC);
        h[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        h[12..16].copy_from_slice(&(TABLE_HEADER_SIZE as u32).to_le_bytes());
        h[16..24].copy_from_slice(&self.length.to_le_bytes());
        h[24] = self.order.code();
        h[25] = self.stamp.wal as u8;
        h[28..32].copy_from_slice(&self.stamp.change_counter.to_le_bytes());
        h[32..36].copy_from_slice(&self.stamp.page_count.to_le_bytes());
        h[40..48].copy_from_slice(&self.stamp.inode.to_le_bytes());
        h[48..56].copy_from_slice(&self.stamp.files.to_le_bytes());
        h[56..64].copy_from_slice(&self.stamp.bytes.to_le_bytes());
        h[64..72].copy_from_slice(&self.missing_crcs.to_le_bytes());
        let crc = crate::core::crc::crc32c(&h[..HEADER_CRC_AT]);
        h[HEADER_CRC_AT..HEADER_CRC_AT + 4].copy_from_slice(&crc.to_le_bytes());
        h
    }

    /// Decode and check a header against the size of its file.
    pub fn decode(h: &[u8], file_size: u64, path: &Path) -> Result<TableHeader> {
        let corrupt = |d: &str| Error::CorruptRecords {
            path: path.to_path_buf(),
            detail: format!("not a valid record table: {d}"),
        };
        if h.len() < TABLE_HEADER_SIZE as usize || file_size < TABLE_HEADER_SIZE {
            return Err(corrupt("shorter than its 4096-byte header"));
        }
        if &h[0..8] != TABLE_MAGIC {
            return Err(corrupt("bad magic"));
        }
        let u32_at = |a: usize| u32::from_le_bytes(h[a..a + 4].try_into().expect("4"));
        let u64_at = |a: usize| u64::from_le_bytes(h[a..a + 8].try_into().expect("8"));
        if u32_at(HEADER_CRC_AT) != crate::core::crc::crc32c(&h[..HEADER_CRC_AT]) {
            return Err(corrupt("header checksum mismatch"));
        }
        if u32_at(8) != FORMAT_VERSION {
            return Err(corrupt(&format!("unsupported version {}", u32_at(8))));
        }
        if u32_at(12) as u64 != TABLE_HEADER_SIZE {
            return Err(corrupt("unexpected header size"));
        }
        let order = TableOrder::from_code(h[24]).ok_or_else(|| corrupt("unknown order"))?;
        let length = u64_at(16);
        let missing = u64_at(64);
        let expected = length
            .checked_mul((ENTRY_SIZE + CRC_SIZE) as u64)
            .and_then(|b| b.checked_add(TABLE_HEADER_SIZE))
            .and_then(|b| missing.checked_mul(8).and_then(|m| b.checked_add(m)));
        match expected {
            Some(e) if e == file_size => {}
            Some(e) => {
                return Err(corrupt(&format!(
                    "{length} records need {e} bytes but the file has {file_size}"
                )))
            }
            None => return Err(corrupt("impossible record count")),
        }
        if missing > length {
            return Err(corrupt("more records without CRC than records"));
        }
        Ok(TableHeader {
            length,
            order,
            stamp: Stamp {
                wal: h[25] != 0,
                change_counter: u32_at(28),
                page_count: u32_at(32),
                inode: u64_at(40),
                files: u64_at(48),
                bytes: u64_at(56),
            },
            missing_crcs: missing,
        })
    }
}

const HEADER_CRC_AT: usize = 72;

/// The record table path of the archive whose index is at `archive` (typed path
/// `P`, also for the legacy `P-sqlite-index` naming): `P-records`.
pub fn table_path(archive_base: &Path) -> PathBuf {
    let mut s = archive_base.as_os_str().to_owned();
    s.push(TABLE_SUFFIX);
    PathBuf::from(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip() {
        let e = Entry {
            chunk: 7,
            offset: 1 << 40,
            length: 12345,
        };
        assert_eq!(Entry::decode(&e.encode()), e);
        let mut t = vec![0u8; 32];
        t[16..].copy_from_slice(&e.encode());
        assert_eq!(entry_at(&t, 1), Some(e));
        assert_eq!(entry_at(&t, 2), None);
        assert_eq!(entry_at(&t, u64::MAX), None);
    }

    #[test]
    fn meta_round_trip_and_checks() {
        let m = Meta::new(Dtype::F32, Compress::Zstd, 10, 1000);
        let p = Path::new("d/meta.json");
        assert_eq!(Meta::parse(&m.to_json(), p).unwrap(), m);
        assert!(Meta::parse(b"{", p)
            .unwrap_err()
            .to_string()
            .contains("d/meta.json"));
        let mut bad = m.clone();
        bad.redo.push(Redo(0, 0, 0, 0, 0));
        assert!(Meta::parse(&bad.to_json(), p).is_err());
        let text = String::from_utf8(m.to_json()).unwrap();
        assert!(text.contains("\"dtype\": \"f32\"") && text.contains("\"compress\": \"zstd\""));
    }

    #[test]
    fn header_round_trip_and_checks() {
        let h = TableHeader {
            length: 3,
            order: TableOrder::Address,
            stamp: Stamp {
                wal: false,
                change_counter: 9,
                page_count: 4,
                inode: 77,
                files: 3,
                bytes: 100,
            },
            missing_crcs: 1,
        };
        let b = h.encode();
        let p = Path::new("t");
        assert_eq!(TableHeader::decode(&b, h.file_size(), p).unwrap(), h);
        assert!(TableHeader::decode(&b, h.file_size() + 1, p).is_err());
        let mut bad = b.clone();
        bad[16] = 0xff;
        assert!(TableHeader::decode(&bad, h.file_size(), p).is_err());
    }

    #[test]
    fn names() {
        assert_eq!(parse_chunk_name("12.zr"), Some(12));
        assert_eq!(parse_chunk_name("012.zr"), None);
        assert_eq!(parse_chunk_name("x.zr"), None);
        assert_eq!(Dtype::parse("f64").unwrap().size(), 8);
        assert_eq!(
            table_path(Path::new("a/b.barecat")),
            PathBuf::from("a/b.barecat-records")
        );
    }
}
