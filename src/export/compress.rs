//! Compression of tar output: gzip, zstd, xz or bzip2, chosen by a flag or by the
//! output file name.

use std::io::{self, Write};
use std::path::Path;

/// A compression format for a tar stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Compression {
    /// A plain tar.
    #[default]
    None,
    /// gzip (`.tar.gz`, `.tgz`).
    Gzip,
    /// Zstandard (`.tar.zst`).
    Zstd,
    /// xz (`.tar.xz`, `.txz`).
    Xz,
    /// bzip2 (`.tar.bz2`, `.tbz2`).
    Bzip2,
}

/// What an output file name says about the archive it should hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArchiveFormat {
    /// A zip file.
    Zip,
    /// A tar stream, compressed or not.
    Tar(Compression),
}

impl Compression {
    /// The default level of each format (what its command-line tool uses).
    pub fn default_level(self) -> u32 {
        match self {
            Compression::None => 0,
            Compression::Gzip => 6,
            Compression::Zstd => 3,
            Compression::Xz => 6,
            Compression::Bzip2 => 9,
        }
    }

    /// Valid levels of each format.
    pub fn level_range(self) -> (u32, u32) {
        match self {
            Compression::None => (0, 0),
            Compression::Gzip | Compression::Xz | Compression::Bzip2 => (1, 9),
            Compression::Zstd => (1, 22),
        }
    }

    /// The format's name (`none`, `gzip`, `zstd`, `xz`, `bzip2`).
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
            Compression::Xz => "xz",
            Compression::Bzip2 => "bzip2",
        }
    }
}

/// The archive kind an output name asks for, by its extension (case-insensitive):
/// `.zip`; `.tar`; `.tar.gz .tgz`; `.tar.zst .tar.zstd .tzst`; `.tar.xz .txz`;
/// `.tar.bz2 .tbz2 .tbz`. `None` for anything else.
pub fn format_from_name(path: &Path) -> Option<ArchiveFormat> {
    let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
    const TABLE: &[(&str, ArchiveFormat)] = &[
        (".zip", ArchiveFormat::Zip),
        (".tar", ArchiveFormat::Tar(Compression::None)),
        (".tar.gz", ArchiveFormat::Tar(Compression::Gzip)),
        (".tgz", ArchiveFormat::Tar(Compression::Gzip)),
        (".tar.zst", ArchiveFormat::Tar(Compression::Zstd)),
        (".tar.zstd", ArchiveFormat::Tar(Compression::Zstd)),
        (".tzst", ArchiveFormat::Tar(Compression::Zstd)),
        (".tar.xz", ArchiveFormat::Tar(Compression::Xz)),
        (".txz", ArchiveFormat::Tar(Compression::Xz)),
        (".tar.bz2", ArchiveFormat::Tar(Compression::Bzip2)),
        (".tbz2", ArchiveFormat::Tar(Compression::Bzip2)),
        (".tbz", ArchiveFormat::Tar(Compression::Bzip2)),
    ];
    TABLE
        .iter()
        .find(|(ext, _)| name.ends_with(ext) && name.len() > ext.len())
        .map(|(_, k)| *k)
}

/// A writer that compresses into `W`; [`Encoder::finish`] ends the stream and
/// gives `W` back.
pub enum Encoder<W: Write> {
    /// No compression: bytes go straight to `W`.
    None(W),
    /// A gzip stream.
    Gzip(flate2::write::GzEncoder<W>),
    /// A Zstandard stream.
    Zstd(zstd::stream::write::Encoder<'static, W>),
    /// An xz stream.
    Xz(liblzma::write::XzEncoder<W>),
    /// A bzip2 stream.
    Bzip2(bzip2::write::BzEncoder<W>),
}

impl<W: Write> Encoder<W> {
    /// Compress with `c` at `level` (`None`: the format's default).
    pub fn new(inner: W, c: Compression, level: Option<u32>) -> io::Result<Encoder<W>> {
        let level = level.unwrap_or_else(|| c.default_level());
        Ok(match c {
            Compression::None => Encoder::None(inner),
            Compression::Gzip => Encoder::Gzip(flate2::write::GzEncoder::new(
                inner,
                flate2::Compression::new(level),
            )),
            Compression::Zstd => {
                Encoder::Zstd(zstd::stream::write::Encoder::new(inner, level as i32)?)
            }
            Compression::Xz => Encoder::Xz(liblzma::write::XzEncoder::new(inner, level)),
            Compression::Bzip2 => Encoder::Bzip2(bzip2::write::BzEncoder::new(
                inner,
                bzip2::Compression::new(level),
            )),
        })
    }

    /// Write the end of the compressed stream and return the inner writer.
    pub fn finish(self) -> io::Result<W> {
        match self {
            Encoder::None(w) => Ok(w),
            Encoder::Gzip(e) => e.finish(),
            Encoder::Zstd(e) => e.finish(),
            Encoder::Xz(e) => e.finish(),
            Encoder::Bzip2(e) => e.finish(),
        }
    }
}

impl<W: Write> Write for Encoder<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Encoder::None(w) => w.write(buf),
            Encoder::Gzip(e) => e.write(buf),
            Encoder::Zstd(e) => e.write(buf),
            Encoder::Xz(e) => e.write(buf),
            Encoder::Bzip2(e) => e.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Encoder::None(w) => w.write_all(buf),
            Encoder::Gzip(e) => e.write_all(buf),
            Encoder::Zstd(e) => e.write_all(buf),
            Encoder::Xz(e) => e.write_all(buf),
            Encoder::Bzip2(e) => e.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Encoder::None(w) => w.flush(),
            Encoder::Gzip(e) => e.flush(),
            Encoder::Zstd(e) => e.flush(),
            Encoder::Xz(e) => e.flush(),
            Encoder::Bzip2(e) => e.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn names() {
        let k = |s: &str| format_from_name(Path::new(s));
        assert_eq!(k("a.zip"), Some(ArchiveFormat::Zip));
        assert_eq!(k("A.ZIP"), Some(ArchiveFormat::Zip));
        assert_eq!(k("x/a.tar"), Some(ArchiveFormat::Tar(Compression::None)));
        assert_eq!(k("a.TGZ"), Some(ArchiveFormat::Tar(Compression::Gzip)));
        assert_eq!(k("a.tar.gz"), Some(ArchiveFormat::Tar(Compression::Gzip)));
        assert_eq!(k("a.tzst"), Some(ArchiveFormat::Tar(Compression::Zstd)));
        assert_eq!(k("a.tar.zst"), Some(ArchiveFormat::Tar(Compression::Zstd)));
        assert_eq!(k("a.txz"), Some(ArchiveFormat::Tar(Compression::Xz)));
        assert_eq!(k("a.Tar.Xz"), Some(ArchiveFormat::Tar(Compression::Xz)));
        assert_eq!(k("a.tbz2"), Some(ArchiveFormat::Tar(Compression::Bzip2)));
        assert_eq!(k("a.tar.bz2"), Some(ArchiveFormat::Tar(Compression::Bzip2)));
        assert_eq!(k("a.gz"), None);
        assert_eq!(k(".tar"), None);
        assert_eq!(k("a.barecat"), None);
    }

    #[test]
    fn every_encoder_round_trips() {
        let data = b"hello hello hello hello".repeat(100);
        for c in [
            Compression::None,
            Compression::Gzip,
            Compression::Zstd,
            Compression::Xz,
            Compression::Bzip2,
        ] {
            let mut e = Encoder::new(Vec::new(), c, None).unwrap();
            e.write_all(&data).unwrap();
            let out = e.finish().unwrap();
            let mut back = Vec::new();
            match c {
                Compression::None => back = out,
                Compression::Gzip => {
                    flate2::read::GzDecoder::new(&out[..])
                        .read_to_end(&mut back)
                        .unwrap();
                }
                Compression::Zstd => back = zstd::decode_all(&out[..]).unwrap(),
                Compression::Xz => {
                    liblzma::read::XzDecoder::new(&out[..])
                        .read_to_end(&mut back)
                        .unwrap();
                }
                Compression::Bzip2 => {
                    bzip2::read::BzDecoder::new(&out[..])
                        .read_to_end(&mut back)
                        .unwrap();
                }
            }
            assert_eq!(back, data, "{c:?}");
        }
    }
}
