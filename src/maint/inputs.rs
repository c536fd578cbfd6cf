//! The inputs of a merge: what kind of file each one is, opening barecat inputs with
//! their shards checked, telling whether an input is the output, and finding the
//! paths that occur in more than one input (before anything is written).

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::core::archive::Archive;
use crate::core::error::{Error, Result};
use crate::core::format::layout::Layout;

/// What an input file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// A barecat archive (its index).
    Barecat,
    /// A tar file, possibly compressed.
    Tar,
    /// A zip file.
    Zip,
}

const TAR_EXTENSIONS: [&str; 9] = [
    ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz", ".tar.zst", ".tzst",
];

/// Tell a barecat archive from a tar or zip file, by content first and by name when
/// the content says nothing. A path where nothing exists is an error.
pub fn classify(path: &Path) -> Result<InputKind> {
    if crate::core::location::is_remote(path) {
        // A remote input is read as an archive (tar and zip inputs are local).
        return Ok(InputKind::Barecat);
    }
    let layout = Layout::resolve(path);
    let index = layout.index();
    if index.is_file() {
        let mut head = Vec::with_capacity(512);
        File::open(index)
            .and_then(|f| f.take(512).read_to_end(&mut head))
            .map_err(|e| Error::io(index, e))?;
        if head.starts_with(b"SQLite format 3\0") {
            return Ok(InputKind::Barecat);
        }
        if head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06") {
            return Ok(InputKind::Zip);
        }
        let compressed: [&[u8]; 4] = [b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00", b"\x28\xb5\x2f\xfd"];
        if head.get(257..262) == Some(b"ustar") || compressed.iter().any(|m| head.starts_with(m)) {
            return Ok(InputKind::Tar);
        }
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_lowercase())
            .unwrap_or_default();
        if name.ends_with(".zip") {
            return Ok(InputKind::Zip);
        }
        if TAR_EXTENSIONS.iter().any(|x| name.ends_with(x)) {
            return Ok(InputKind::Tar);
        }
        return Ok(InputKind::Barecat);
    }
    if Layout::exists(path)? {
        return Ok(InputKind::Barecat);
    }
    Err(Error::ArchiveNotFound {
        path: path.to_path_buf(),
    })
}

/// Open a barecat input for reading its files: every shard present (contiguous
/// numbering, every referenced shard there) and long enough for the files stored in
/// it.
pub fn open_barecat(path: &Path) -> Result<Archive> {
    open_barecat_with(path, crate::OpenOptions::default())
}

/// [`open_barecat`] with options (the index mode of a remote input).
pub fn open_barecat_with(path: &Path, opts: crate::OpenOptions) -> Result<Archive> {
    let archive = Archive::open_with(path, opts)?;
    let usage = archive.with_index(|i| i.shard_usage())?;
    for u in usage {
        let path = archive.shards()?.path(u.shard);
        let len = if archive.is_remote() {
            archive.shards()?.len(u.shard)?
        } else {
            crate::core::shards::shard_len(&path)?
        };
        if len < u.logical_end {
            return Err(Error::io(
                archive.shards()?.path(u.shard),
                io::Error::other(format!(
                    "shard is {len} bytes long but its files need {} bytes; run barecat-verify",
                    u.logical_end
                )),
            ));
        }
    }
    Ok(archive)
}

/// True when `a` and `b` name the same file (after following links).
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

/// Error if `input` is the archive at `output` (the same index file, whatever
/// the names).
pub fn check_not_output(input: &Path, output: &Path) -> Result<()> {
    if crate::core::location::is_remote(input) {
        return Ok(()); // the output is local
    }
    let (i, o) = (Layout::resolve(input), Layout::resolve(output));
    if same_file(i.index(), o.index()) {
        return Err(Error::InvalidOperation(format!(
            "{}: this input is the output archive",
            input.display()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_by_content_and_name() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("a.zip"), b"PK\x03\x04rest").unwrap();
        std::fs::write(d.join("b.bin"), b"\x1f\x8b\x08\x00").unwrap();
        let mut tar = vec![0u8; 512];
        tar[257..262].copy_from_slice(b"ustar");
        std::fs::write(d.join("c"), &tar).unwrap();
        std::fs::write(d.join("e.tar"), b"").unwrap();
        assert_eq!(classify(&d.join("a.zip")).unwrap(), InputKind::Zip);
        assert_eq!(classify(&d.join("b.bin")).unwrap(), InputKind::Tar);
        assert_eq!(classify(&d.join("c")).unwrap(), InputKind::Tar);
        assert_eq!(classify(&d.join("e.tar")).unwrap(), InputKind::Tar);
        assert!(matches!(
            classify(&d.join("missing")),
            Err(Error::ArchiveNotFound { .. })
        ));
    }
}
