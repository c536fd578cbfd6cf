//! Compressed input streams, recognized by their magic bytes (never by file name).

use std::io::{self, Cursor, Read};

/// A compression format of an input stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Bzip2,
    Xz,
    Zstd,
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
        } else {
            Compression::None
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "uncompressed",
            Compression::Gzip => "gzip",
            Compression::Bzip2 => "bzip2",
            Compression::Xz => "xz",
            Compression::Zstd => "zstd",
        }
    }
}

/// Bytes needed to recognize every supported format.
const MAGIC_LEN: usize = 6;

/// Read the first bytes of `input`, recognize its compression, and return a reader
/// of the decompressed stream (concatenated members and frames included).
pub fn open<'a, R: Read + Send + 'a>(
    mut input: R,
) -> io::Result<(Compression, Box<dyn Read + Send + 'a>)> {
    let mut head = Vec::with_capacity(MAGIC_LEN);
    while head.len() < MAGIC_LEN {
        let mut b = [0u8; MAGIC_LEN];
        let want = MAGIC_LEN - head.len();
        match input.read(&mut b[..want]) {
            Ok(0) => break,
            Ok(n) => head.extend_from_slice(&b[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let kind = Compression::detect(&head);
    let stream = Cursor::new(head).chain(input);
    let reader: Box<dyn Read + Send + 'a> = match kind {
        Compression::None => Box::new(stream),
        Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(stream)),
        Compression::Bzip2 => Box::new(bzip2::read::MultiBzDecoder::new(stream)),
        Compression::Xz => Box::new(liblzma::read::XzDecoder::new_multi_decoder(stream)),
        Compression::Zstd => Box::new(zstd::stream::read::Decoder::new(stream)?),
    };
    Ok((kind, reader))
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
