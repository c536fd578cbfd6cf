//! Rows of the index: files, directories and their metadata.
//!
//! Every layer above the index speaks in these types, so a row is decoded (and
//! range-checked) once, in [`crate::core::index`], and never read column by column
//! elsewhere.

use std::fs;
use std::os::unix::fs::MetadataExt;

/// Unix metadata stored with files and directories. Every field may be NULL in the
/// index (archives from zip files, dict-style writes, trigger-created directories).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Meta {
    /// `st_mode` as stored: the full mode with file-type bits for file-system imports,
    /// permission bits only for tar imports. Not normalized.
    pub mode: Option<u32>,
    /// Owner user id.
    pub uid: Option<u32>,
    /// Owner group id.
    pub gid: Option<u32>,
    /// Modification time in nanoseconds since the Unix epoch.
    pub mtime_ns: Option<i64>,
}

impl Meta {
    /// Metadata of a file-system object, as Python's `os.stat` import stores it.
    pub fn from_fs(md: &fs::Metadata) -> Meta {
        Meta {
            mode: Some(md.mode()),
            uid: Some(md.uid()),
            gid: Some(md.gid()),
            mtime_ns: Some(
                md.mtime()
                    .saturating_mul(1_000_000_000)
                    .saturating_add(md.mtime_nsec()),
            ),
        }
    }

    /// Permission bits (including setuid, setgid, sticky) without the file-type bits.
    pub fn permissions(&self) -> Option<u32> {
        self.mode.map(|m| m & 0o7777)
    }
}

/// The file-type bits of a mode (`S_IFMT`): compare `mode & S_IFMT` with the types
/// below. Tar imports store modes without them.
pub const S_IFMT: u32 = 0o170000;
/// The file type of a directory.
pub const S_IFDIR: u32 = 0o040000;
/// The file type of a regular file.
pub const S_IFREG: u32 = 0o100000;
/// The file type of a symbolic link.
pub const S_IFLNK: u32 = 0o120000;

/// One row of the `files` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileInfo {
    /// The member path (normalized, no leading `/`).
    pub path: String,
    /// The shard number.
    pub shard: u64,
    /// Where the file's bytes start in its shard.
    pub offset: u64,
    /// The file's size in bytes.
    pub size: u64,
    /// CRC-32C of the content; `None` means "unknown, do not check".
    pub crc32c: Option<u32>,
    /// Mode, owner and time.
    pub meta: Meta,
}

impl FileInfo {
    /// One past the last byte of the file in its shard.
    pub fn end(&self) -> u64 {
        self.offset + self.size
    }

    /// An empty file row `e{i}` at offset 100 of shard 0 (for tests of grouping).
    #[cfg(test)]
    pub(crate) fn empty_for_test(i: u64) -> FileInfo {
        FileInfo {
            path: format!("e{i}"),
            shard: 0,
            offset: 100,
            size: 0,
            crc32c: Some(0),
            meta: Default::default(),
        }
    }
}

/// One row of the `dirs` table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DirInfo {
    /// The directory's path (`""` is the root).
    pub path: String,
    /// Number of direct subdirectories.
    pub num_subdirs: i64,
    /// Number of files directly in it.
    pub num_files: i64,
    /// Number of files in its whole subtree.
    pub num_files_tree: i64,
    /// Total size of the files in its whole subtree.
    pub size_tree: i64,
    /// Mode, owner and time.
    pub meta: Meta,
}

/// A file or a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A row of `files`.
    File(FileInfo),
    /// A row of `dirs`.
    Dir(DirInfo),
}

impl Entry {
    /// The member path.
    pub fn path(&self) -> &str {
        match self {
            Entry::File(f) => &f.path,
            Entry::Dir(d) => &d.path,
        }
    }

    /// The stored metadata.
    pub fn meta(&self) -> &Meta {
        match self {
            Entry::File(f) => &f.meta,
            Entry::Dir(d) => &d.meta,
        }
    }

    /// True for a directory.
    pub fn is_dir(&self) -> bool {
        matches!(self, Entry::Dir(_))
    }

    /// Size of a file, or the total size below a directory.
    pub fn size(&self) -> u64 {
        match self {
            Entry::File(f) => f.size,
            Entry::Dir(d) => d.size_tree.max(0) as u64,
        }
    }
}

/// The order in which files are listed or read: by path, by address (shard and
/// offset) or by insertion. (The index's paging scan has its own
/// [`ScanOrder`](crate::core::index::scan::ScanOrder), the same three orders.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileOrder {
    /// By path, bytewise.
    Path,
    /// By (shard, offset): the order of the bytes on disk.
    Address,
    /// By row id: the order of insertion.
    Insertion,
}

/// The entries directly inside a directory.
#[derive(Debug, Clone, Default)]
pub struct Listing {
    /// The subdirectories.
    pub dirs: Vec<DirInfo>,
    /// The files.
    pub files: Vec<FileInfo>,
}

impl FileInfo {
    /// Error unless `data` has this file's stored CRC32C (a NULL CRC always passes).
    pub fn check_crc(&self, data: &[u8]) -> crate::Result<()> {
        match self.crc32c {
            Some(_) => self.check_computed_crc(crate::core::crc::crc32c(data)),
            None => Ok(()),
        }
    }

    /// Error unless `actual`, the CRC32C computed over the file's bytes, is the
    /// stored one (a NULL CRC always passes).
    pub fn check_computed_crc(&self, actual: u32) -> crate::Result<()> {
        match self.crc32c {
            Some(expected) if expected != actual => Err(crate::Error::CrcMismatch {
                member: self.path.clone(),
                expected,
                actual,
            }),
            _ => Ok(()),
        }
    }
}
