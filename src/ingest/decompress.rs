//! Compressed input streams, recognized by their magic bytes (never by file name):
//! gzip, bzip2, xz, zstd, and (decoders in the submodules) lz4, lzip and
//! `compress` (`.Z`). Skippable frames (zstd's and lz4's) before the first frame
//! are looked past to tell which of the two follows.

use std::io::{self, Cursor, Read};
use std::sync::{Arc, Mutex};

pub mod gzip;
pub mod lz4;
pub mod lzw;

/// Notes a decoder leaves while it reads (bytes it ignored after the end of the
/// compressed stream, …), for the importer to pass on once the input is read.
pub type Notes = Arc<Mutex<Vec<String>>>;

/// A compression format of an input stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// Not compressed.
    None,
    /// gzip (several members are read one after the other).
    Gzip,
    /// bzip2.
    Bzip2,
    /// xz (and legacy `.lzma`).
    Xz,
    /// Zstandard.
    Zstd,
    /// The LZ4 frame format.
    Lz4,
    /// lzip.
    Lzip,
    /// Unix `compress` (LZW, `.Z`).
    Compress,
    /// `lzop`: recognized, not decoded (see [`open`]).
    Lzop,
}

impl Compression {
    /// The format whose magic bytes start `head` (`None` when no known one does).
    pub fn detect(head: &[u8]) -> Compression {
        if head.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if head.starts_with(b"BZh") {
            Compression::Bzip2
        } else if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
            Compression::Xz
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else if head.starts_with(&lz4::FRAME_MAGIC.to_le_bytes())
            || head.starts_with(&lz4::LEGACY_MAGIC.to_le_bytes())
        {
            Compression::Lz4
        } else if head.starts_with(b"LZIP") {
            Compression::Lzip
        } else if head.starts_with(&lzw::MAGIC) {
            Compression::Compress
        } else if head.starts_with(&LZOP_MAGIC) {
            Compression::Lzop
        } else {
            Compression::None
        }
    }

    /// The format's name for messages (`uncompressed`, `gzip`, …).
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "uncompressed",
            Compression::Gzip => "gzip",
            Compression::Bzip2 => "bzip2",
            Compression::Xz => "xz",
            Compression::Zstd => "zstd",
            Compression::Lz4 => "lz4",
            Compression::Lzip => "lzip",
            Compression::Compress => "compress (.Z)",
            Compression::Lzop => "lzop",
        }
    }
}

/// Magic bytes of an `lzop` file.
pub const LZOP_MAGIC: [u8; 9] = [0x89, b'L', b'Z', b'O', 0, 0x0d, 0x0a, 0x1a, 0x0a];

/// Bytes needed to recognize every supported format.
const MAGIC_LEN: usize = 9;

/// At most this many skippable frames are looked past at the start of a stream.
const MAX_SKIPPABLE: usize = 64;

/// Is this the magic number of a skippable frame (zstd and lz4 share them)?
fn skippable(head: &[u8]) -> Option<()> {
    let m = u32::from_le_bytes(head.get(..4)?.try_into().ok()?);
    lz4::SKIPPABLE.contains(&m).then_some(())
}

/// Read up to `n` bytes of `input` into `head` (fewer only at its end).
fn fill_head(input: &mut impl Read, head: &mut Vec<u8>, n: usize) -> io::Result<()> {
    while head.len() < n {
        let mut b = [0u8; MAGIC_LEN];
        let want = (n - head.len()).min(MAGIC_LEN);
        match input.read(&mut b[..want]) {
            Ok(0) => break,
            Ok(k) => head.extend_from_slice(&b[..k]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Read the first bytes of `input`, recognize its compression, and return a reader
/// of the decompressed stream (concatenated members and frames included).
pub fn open<'a, R: Read + Send + 'a>(
    input: R,
) -> io::Result<(Compression, Box<dyn Read + Send + 'a>)> {
    let (kind, reader, _) = open_noted(input)?;
    Ok((kind, reader))
}

/// [`open`], with the notes the decoder leaves while reading (read them once the
/// stream is read to its end).
pub fn open_noted<'a, R: Read + Send + 'a>(
    mut input: R,
) -> io::Result<(Compression, Box<dyn Read + Send + 'a>, Notes)> {
    let notes = Notes::default();
    let mut head = Vec::with_capacity(MAGIC_LEN);
    fill_head(&mut input, &mut head, MAGIC_LEN)?;
    // Skippable frames (zstd and lz4 alike) first: what follows them tells which.
    let mut skipped = 0u64;
    let mut frames = 0;
    while skippable(&head).is_some() {
        frames += 1;
        if frames > MAX_SKIPPABLE {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("more than {MAX_SKIPPABLE} skippable frames at the start of the stream"),
            ));
        }
        fill_head(&mut input, &mut head, 8)?;
        if head.len() < 8 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the stream ends inside a skippable frame",
            ));
        }
        let len = u32::from_le_bytes(head[4..8].try_into().expect("4 bytes")) as u64;
        let rest = (head.len() - 8) as u64;
        if rest >= len {
            head.drain(..8 + len as usize);
        } else {
            head.clear();
            let n = io::copy(&mut (&mut input).take(len - rest), &mut io::sink())?;
            if n < len - rest {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the stream ends inside a skippable frame",
                ));
            }
        }
        skipped += 8 + len;
        fill_head(&mut input, &mut head, MAGIC_LEN)?;
    }
    let kind = Compression::detect(&head);
    if skipped > 0 && !matches!(kind, Compression::Zstd | Compression::Lz4) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{skipped} bytes of skippable frames are followed by neither a zstd nor an \
                 lz4 frame"
            ),
        ));
    }
    let stream = Cursor::new(head).chain(input);
    let reader: Box<dyn Read + Send + 'a> = match kind {
        Compression::None => Box::new(stream),
        Compression::Gzip => Box::new(gzip::GzipDecoder::new(stream, notes.clone())),
        Compression::Bzip2 => Box::new(bzip2::read::MultiBzDecoder::new(stream)),
        Compression::Xz => Box::new(liblzma::read::XzDecoder::new_multi_decoder(stream)),
        Compression::Zstd => Box::new(zstd::stream::read::Decoder::new(stream)?),
        Compression::Lz4 => Box::new(lz4::Lz4Decoder::new(stream)),
        Compression::Lzip => {
            let dec =
                liblzma::stream::Stream::new_lzip_decoder(u64::MAX, liblzma::stream::CONCATENATED)
                    .map_err(io::Error::other)?;
            Box::new(liblzma::read::XzDecoder::new_stream(stream, dec))
        }
        Compression::Compress => Box::new(lzw::LzwDecoder::new(stream)),
        Compression::Lzop => {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "lzop compression is not supported: decompress it first (lzop -dc FILE | \
                 barecat-from-tar - OUT)",
            ))
        }
    };
    Ok((kind, reader, notes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn detects_and_decodes_every_format() {
        let data = b"hello tar world".repeat(100);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&data).unwrap();
        let gz = gz.finish().unwrap();
        let mut bz = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::default());
        bz.write_all(&data).unwrap();
        let bz = bz.finish().unwrap();
        let mut xz = liblzma::write::XzEncoder::new(Vec::new(), 6);
        xz.write_all(&data).unwrap();
        let xz = xz.finish().unwrap();
        let zs = zstd::encode_all(&data[..], 3).unwrap();
        for (bytes, kind) in [
            (data.clone(), Compression::None),
            (gz, Compression::Gzip),
            (bz, Compression::Bzip2),
            (xz, Compression::Xz),
            (zs, Compression::Zstd),
        ] {
            let (k, mut r) = open(&bytes[..]).unwrap();
            assert_eq!(k, kind);
            let mut out = Vec::new();
            r.read_to_end(&mut out).unwrap();
            assert_eq!(out, data, "{kind:?}");
        }
        let (k, mut r) = open(&b"ab"[..]).unwrap();
        assert_eq!(k, Compression::None);
        let mut out = Vec::new();
        r.read_to_end(&mut out).unwrap();
        assert_eq!(out, b"ab");
    }
}
