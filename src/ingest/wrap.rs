//! Archives wrapped around a tar or zip file (`--wrap`): an index of the members
//! where they lie, nothing copied. Shard 0 of the archive is a symbolic link to the
//! tar or zip (its absolute path), as Python barecat's `convert --wrap` makes it, so
//! Python barecat reads these archives too.
//!
//! Unlike Python barecat, which stores no checksums here, every file's CRC32C is
//! computed from its bytes while indexing: `barecat-verify` (and every CRC-checked
//! read) then notices when the tar or zip was changed afterwards.
//!
//! * A tar must be uncompressed (compressed ones are refused by name and by magic
//!   bytes, with Python barecat's messages). Its members are read by the crate's
//!   tar reader with the rules of `from-tar` (duplicates, filters, links, damaged
//!   headers, ...); members whose bytes in the tar are not their content (sparse
//!   files) and hard links (no bytes of their own) are reported and skipped.
//! * A zip must hold no compressed and no encrypted entry (refused up front, with
//!   Python barecat's messages); each entry's bytes are checked against the zip's
//!   CRC-32 as they are checksummed.
//!
//! The index is built under a temporary name next to the output and put in place
//! when complete, so that a failure or a kill leaves no half-made archive (and `-f`
//! replaces an old one only then).
//!
//! The shard is the user's own file: no writer of this crate writes through it or
//! cuts it ([`crate::core::shards::ShardAppender::open`], [`ArchiveWriter::trim_garbage`]),
//! and `defrag`/`reshard` refuse such archives.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use super::{decompress::Compression, Event, IngestOptions, Summary, ZipSource};
use crate::core::error::{Error, IoContext, Result};
use crate::core::format::layout::Layout;
use crate::core::output::{install_archive, remove_stale_temps, temp_name};
use crate::core::writer::{ArchiveWriter, CreateMode, WriterOptions};

/// Tar names that say the tar is compressed (Python barecat's list, and zstd).
const COMPRESSED_NAMES: [&str; 8] = [
    ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz", ".tar.zst", ".tzst",
];

/// Options of [`wrap`].
#[derive(Debug, Clone)]
pub struct WrapOptions {
    /// Replace an existing output (once the new one is complete).
    pub force: bool,
    /// Write the B-tree sidecar of the new index.
    pub sidecar: bool,
    /// Duplicates, filters, strip, strictness, symlink policy, and the number of
    /// threads that checksum member data (at most the cores are useful).
    pub ingest: IngestOptions,
}

/// Is `input` a zip (by its first bytes or, for a zip behind a prefix, its name)?
fn is_zip(input: &Path, head: &[u8]) -> bool {
    head.starts_with(b"PK\x03\x04")
        || head.starts_with(b"PK\x05\x06")
        || lower_name(input).ends_with(".zip")
}

fn lower_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default()
}

fn refuse(input: &Path, detail: impl Into<String>) -> Error {
    Error::Input {
        path: input.display().to_string(),
        detail: detail.into(),
    }
}

/// Check that `input` can be wrapped (uncompressed tar or zip) and that it is not
/// a part of the archive at `output`.
fn check_input(input: &Path, output: &Path) -> Result<(File, bool)> {
    if COMPRESSED_NAMES
        .iter()
        .any(|x| lower_name(input).ends_with(x))
    {
        return Err(refuse(
            input,
            "--wrap only works with uncompressed .tar or .zip files",
        ));
    }
    let mut file = File::open(input).at(input)?;
    let md = file.metadata().at(input)?;
    if !md.is_file() {
        return Err(refuse(input, "not a regular file"));
    }
    let mut head = Vec::with_capacity(8);
    (&mut file).take(8).read_to_end(&mut head).at(input)?;
    file.seek(SeekFrom::Start(0)).at(input)?;
    let kind = Compression::detect(&head);
    if kind != Compression::None {
        return Err(refuse(
            input,
            format!(
                "Cannot wrap compressed file ({}). Wrap only works with uncompressed .tar \
                 or .zip files.",
                kind.name()
            ),
        ));
    }
    // Replacing the output removes its index and its shards, but only the links
    // among them, not what they point to (an old wrapped archive's shard 0 may
    // well be a link to this very input).
    let out = Layout::current(output);
    let is_input = |p: &Path| {
        let named = std::path::absolute(input).ok() == std::path::absolute(p).ok();
        let same = matches!(
            (md_dev_ino(std::fs::metadata(input)), md_dev_ino(std::fs::symlink_metadata(p))),
            (Ok(a), Ok(b)) if a == b
        );
        named || same
    };
    if is_input(out.index()) || is_input(&out.shard_path(0)) {
        return Err(Error::InvalidOperation(format!(
            "{}: the input is a part of the output archive {}",
            input.display(),
            output.display()
        )));
    }
    Ok((file, is_zip(input, &head)))
}

fn md_dev_ino(m: std::io::Result<std::fs::Metadata>) -> std::io::Result<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    m.map(|m| (m.dev(), m.ino()))
}

/// Index the tar or zip file `input` in place as the archive `output`. Entries
/// that cannot be indexed are reported through `sink` and counted in the summary's
/// problems (the archive is made all the same); an `Err` leaves no output (and an
/// old one with `force` as it was).
pub fn wrap(
    input: &Path,
    output: &Path,
    opts: &WrapOptions,
    sink: &mut dyn FnMut(Event),
) -> Result<Summary> {
    let (file, zip) = check_input(input, output)?;
    let zip = if zip {
        let src = ZipSource::open(input)?;
        super::zip::check_in_place(&src)?;
        Some(src)
    } else {
        None
    };
    if !opts.force && Layout::exists(output)? {
        return Err(Error::ArchiveExists {
            path: output.to_path_buf(),
        });
    }
    let target = std::path::absolute(input).at(input)?;
    remove_stale_temps(output, "wrapping")?;
    let temp = temp_name(output, "wrapping");
    Layout::remove(&temp)?;
    let built = (|| -> Result<Summary> {
        let mut w = ArchiveWriter::open(
            &temp,
            WriterOptions {
                sidecar: opts.sidecar,
                ..WriterOptions::with_mode(CreateMode::New)
            },
        )?;
        let summary = match &zip {
            Some(src) => super::zip::run_in_place(&mut w, src, &opts.ingest, sink)?,
            None => {
                let name = input.display().to_string();
                super::tar::run_in_place(&mut w, &file, &name, &opts.ingest, sink)?
            }
        };
        w.finish()?;
        link_shard(&temp, &target)?;
        Ok(summary)
    })();
    let summary = match built {
        Ok(s) => s,
        Err(e) => {
            let _ = Layout::remove(&temp);
            return Err(e);
        }
    };
    let installed = (|| {
        if Layout::exists(output)? {
            if !opts.force {
                return Err(Error::ArchiveExists {
                    path: output.to_path_buf(),
                });
            }
            Layout::remove(output)?;
        }
        install_archive(&temp, output, &mut || {})
    })();
    if let Err(e) = installed {
        let _ = Layout::remove(&temp);
        return Err(e);
    }
    Ok(summary)
}

/// Make shard 0 of the (finished, unused) archive at `archive` a link to `target`.
fn link_shard(archive: &Path, target: &PathBuf) -> Result<()> {
    let shard = Layout::current(archive).shard_path(0);
    let _ = std::fs::remove_file(&shard);
    std::os::unix::fs::symlink(target, &shard).at(&shard)?;
    crate::core::output::sync_dir(&shard)
}
