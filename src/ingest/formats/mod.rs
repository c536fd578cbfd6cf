//! Archive formats other than tar and zip, and telling every importable format
//! apart by its content (never by its name).
//!
//! Why: datasets arrive in whatever their authors had at hand (a 7z from
//! Windows, a cpio from an initramfs, an ISO image, an rpm or deb), and one
//! command should turn any of them into a barecat archive, storing exactly the
//! files `bsdtar -x` extracts, or failing loudly. Tar streams (plain or
//! compressed) and zip files have readers of their own in this crate
//! ([`super::tar`], [`super::zip`]); the other formats are read through
//! libarchive, bsdtar's own library (the `libarchive` cargo feature, on by
//! default; see `docs/IMPORT-FORMATS.md` for the choice of each reader).
//!
//! * [`detect`] names the format of a file from its first bytes (and, for ISO
//!   9660, its volume descriptor at 32 KiB; for a zip with data before it, its
//!   end-of-central-directory record).
//! * [`import_path`] imports a file of any of these formats.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use super::decompress::{self, Compression};
use super::{Event, IngestOptions, Summary};
use crate::core::error::{Error, IoContext, Result};
use crate::core::writer::ArchiveWriter;

#[cfg(feature = "libarchive")]
mod ffi;
#[cfg(feature = "libarchive")]
pub mod libarchive;
pub mod names;

/// The container format of an input file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A tar stream, plain or compressed (read by [`super::tar`]).
    Tar(Compression),
    /// A zip file (read by [`super::zip`]), possibly with data before it.
    Zip,
    /// 7-Zip (through libarchive).
    SevenZip,
    /// RAR up to version 4 (through libarchive).
    Rar,
    /// RAR 5 (through libarchive).
    Rar5,
    /// cpio, any variant (odc, newc, crc, binary of either byte order),
    /// possibly compressed.
    Cpio(Compression),
    /// An rpm package (its cpio payload).
    Rpm,
    /// An ISO 9660 image, with Rock Ridge and Joliet names (through libarchive).
    Iso9660,
    /// A Unix `ar` archive (Debian packages are ones).
    Ar,
    /// A xar archive (through libarchive).
    Xar,
    /// A Microsoft cabinet (through libarchive).
    Cab,
    /// An LHA/LZH archive (through libarchive).
    Lha,
}

impl Format {
    /// A short name for messages.
    pub fn name(self) -> String {
        match self {
            Format::Tar(Compression::None) => "tar".into(),
            Format::Tar(c) => format!("tar ({})", c.name()),
            Format::Zip => "zip".into(),
            Format::SevenZip => "7z".into(),
            Format::Rar => "rar".into(),
            Format::Rar5 => "rar (v5)".into(),
            Format::Cpio(Compression::None) => "cpio".into(),
            Format::Cpio(c) => format!("cpio ({})", c.name()),
            Format::Rpm => "rpm".into(),
            Format::Iso9660 => "ISO 9660".into(),
            Format::Ar => "ar".into(),
            Format::Xar => "xar".into(),
            Format::Cab => "cab".into(),
            Format::Lha => "lha".into(),
        }
    }

    /// Read through libarchive (the `libarchive` feature).
    pub fn needs_libarchive(self) -> bool {
        !matches!(self, Format::Tar(_) | Format::Zip)
    }
}

/// Bytes read from the start of a file to recognize it.
const HEAD: usize = 4096;
/// Where the primary volume descriptor of an ISO 9660 image starts.
const ISO_PVD: u64 = 32768;

/// The container format that `head` (the first bytes of a stream, at least a
/// block of 512 when the stream has them) starts, when one does.
pub fn detect_head(head: &[u8]) -> Option<Format> {
    let at = |off: usize, magic: &[u8]| head.get(off..off + magic.len()) == Some(magic);
    if at(0, b"PK\x03\x04") || at(0, b"PK\x05\x06") || at(0, b"PK\x07\x08") {
        return Some(Format::Zip);
    }
    if at(0, b"7z\xbc\xaf\x27\x1c") {
        return Some(Format::SevenZip);
    }
    if at(0, b"Rar!\x1a\x07\x01\x00") {
        return Some(Format::Rar5);
    }
    if at(0, b"Rar!\x1a\x07\x00") {
        return Some(Format::Rar);
    }
    if at(0, b"070707")
        || at(0, b"070701")
        || at(0, b"070702")
        || at(0, &[0xc7, 0x71])
        || at(0, &[0x71, 0xc7])
    {
        return Some(Format::Cpio(Compression::None));
    }
    if at(0, &[0xed, 0xab, 0xee, 0xdb]) {
        return Some(Format::Rpm);
    }
    if at(0, b"!<arch>\n") {
        return Some(Format::Ar);
    }
    if at(0, b"xar!") {
        return Some(Format::Xar);
    }
    if at(0, b"MSCF\0\0\0\0") {
        return Some(Format::Cab);
    }
    // LHA: a header whose method ("-lh5-", "-lz4-", …) is at offset 2.
    if head.len() >= 21
        && head[2] == b'-'
        && head[3] == b'l'
        && matches!(head[4], b'h' | b'z')
        && head[6] == b'-'
        && head[20] <= 3
    {
        return Some(Format::Lha);
    }
    if head.len() >= 512 {
        let block: &[u8; 512] = head[..512].try_into().expect("512 bytes");
        if block.iter().any(|&b| b != 0) && super::tar_reader::check_header(block).is_ok() {
            return Some(Format::Tar(Compression::None));
        }
    }
    None
}

/// Recognize the format of the file at `path` by its content.
pub fn detect(path: &Path) -> Result<Option<Format>> {
    let mut f = File::open(path).at(path)?;
    let mut head = Vec::with_capacity(HEAD);
    (&mut f).take(HEAD as u64).read_to_end(&mut head).at(path)?;
    let comp = Compression::detect(&head);
    let skippable = head.len() >= 4
        && super::decompress::lz4::SKIPPABLE
            .contains(&u32::from_le_bytes(head[..4].try_into().expect("4 bytes")));
    if comp != Compression::None || skippable {
        return Ok(Some(detect_compressed(path, comp)?));
    }
    if let Some(fmt) = detect_head(&head) {
        return Ok(Some(fmt));
    }
    let mut pvd = [0u8; 6];
    if f.seek(SeekFrom::Start(ISO_PVD)).is_ok()
        && f.read_exact(&mut pvd).is_ok()
        && &pvd[1..6] == b"CD001"
    {
        return Ok(Some(Format::Iso9660));
    }
    // A zip with data before it (a self-extracting archive, a script): its
    // end-of-central-directory record is near the end.
    if has_end_record(&mut f).at(path)? {
        return Ok(Some(Format::Zip));
    }
    // An empty tar (zeros only) is a tar.
    if !head.is_empty() && head.len() % 512 == 0 && head.iter().all(|&b| b == 0) {
        return Ok(Some(Format::Tar(Compression::None)));
    }
    Ok(None)
}

/// Does the end of `f` hold a zip end-of-central-directory record (within the
/// 64 KiB a comment may take, and some padding after it)?
fn has_end_record(f: &mut File) -> std::io::Result<bool> {
    let len = f.metadata()?.len();
    let span = len.min(ZIP_TAIL);
    f.seek(SeekFrom::Start(len - span))?;
    let mut tail = Vec::with_capacity(span as usize);
    f.take(span).read_to_end(&mut tail)?;
    Ok(tail.windows(4).any(|w| w == b"PK\x05\x06"))
}

/// How far from the end a zip's end record is looked for.
const ZIP_TAIL: u64 = (64 << 10) + 22 + 4096;

/// What a compressed file holds: a tar, a cpio, or (when neither) a tar as far as
/// the messages go (the tar reader says what is wrong with it).
fn detect_compressed(path: &Path, comp: Compression) -> Result<Format> {
    let f = File::open(path).at(path)?;
    let head = match decompress::open(f) {
        Ok((_, r)) => {
            let mut head = Vec::with_capacity(512);
            // A stream that fails this early is the tar reader's to report.
            let _ = r.take(512).read_to_end(&mut head);
            head
        }
        Err(_) => Vec::new(),
    };
    Ok(match detect_head(&head) {
        Some(Format::Cpio(_)) => Format::Cpio(comp),
        _ => Format::Tar(comp),
    })
}

/// Import the archive file at `path`, whatever its format (told by its content):
/// tar streams and zip files through this crate's readers, the other formats
/// through libarchive. `name` names the input in messages.
pub fn import_path(
    w: &mut ArchiveWriter,
    path: &Path,
    opts: &IngestOptions,
    sink: &mut dyn FnMut(Event),
) -> Result<Summary> {
    let name = path.display().to_string();
    let format = detect(path)?.ok_or_else(|| unknown(&name))?;
    import_as(w, path, format, opts, sink)
}

/// Import the file at `path`, known to be in `format`.
pub fn import_as(
    w: &mut ArchiveWriter,
    path: &Path,
    format: Format,
    opts: &IngestOptions,
    sink: &mut dyn FnMut(Event),
) -> Result<Summary> {
    let name = path.display().to_string();
    match format {
        Format::Tar(_) => {
            let f = crate::core::readahead::open_sequential(path)?;
            super::tar::run(w, f, &name, opts, sink)
        }
        Format::Zip => super::zip::run(w, &super::ZipSource::open(path)?, opts, sink),
        other => import_libarchive(w, path, other, opts, sink),
    }
}

#[cfg(feature = "libarchive")]
fn import_libarchive(
    w: &mut ArchiveWriter,
    path: &Path,
    format: Format,
    opts: &IngestOptions,
    sink: &mut dyn FnMut(Event),
) -> Result<Summary> {
    libarchive::run(w, path, format, opts, sink)
}

#[cfg(not(feature = "libarchive"))]
fn import_libarchive(
    _w: &mut ArchiveWriter,
    path: &Path,
    format: Format,
    _opts: &IngestOptions,
    _sink: &mut dyn FnMut(Event),
) -> Result<Summary> {
    Err(Error::Input {
        path: path.display().to_string(),
        detail: format!(
            "a {} archive: this build reads it through libarchive, and was made without \
             the `libarchive` cargo feature (rebuild with the default features)",
            format.name()
        ),
    })
}

/// The error for a file in no format this crate knows.
pub fn unknown(name: &str) -> Error {
    Error::Input {
        path: name.to_string(),
        detail: "not an archive in a known format (tar, plain or compressed with gzip, \
                 bzip2, xz, zstd, lz4, lzip or compress; zip; 7z; rar; cpio; rpm; ISO 9660; \
                 ar/deb; xar; cab; lha)"
            .into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads() {
        assert_eq!(
            detect_head(b"7z\xbc\xaf\x27\x1c\0\x04"),
            Some(Format::SevenZip)
        );
        assert_eq!(detect_head(b"Rar!\x1a\x07\x01\x00"), Some(Format::Rar5));
        assert_eq!(detect_head(b"Rar!\x1a\x07\x00"), Some(Format::Rar));
        assert_eq!(
            detect_head(b"070701000"),
            Some(Format::Cpio(Compression::None))
        );
        assert_eq!(
            detect_head(&[0xc7, 0x71, 0]),
            Some(Format::Cpio(Compression::None))
        );
        assert_eq!(detect_head(b"!<arch>\ndebian"), Some(Format::Ar));
        assert_eq!(detect_head(b"MSCF\0\0\0\0"), Some(Format::Cab));
        let mut lha = b"\x2a\x00-lh5-".to_vec();
        lha.resize(21, 0);
        lha[20] = 1;
        assert_eq!(detect_head(&lha), Some(Format::Lha));
        assert_eq!(detect_head(b"hello"), None);
    }
}
