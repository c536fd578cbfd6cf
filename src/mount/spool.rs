//! The content of a file open for writing on a writable mount.
//!
//! Why: programs write files in any order (seek back to patch a header, truncate,
//! write through two descriptors), but an archive stores a file as one extent with
//! one CRC. So the content is gathered here while the file is open and appended to
//! the archive in one piece when it is closed. Small files stay in memory; past
//! [`MEMORY_LIMIT`] the content moves to an unlinked temporary file, so a large file
//! written through the mount costs disk, not memory.

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::FileExt;

/// Content larger than this goes to a temporary file.
pub const MEMORY_LIMIT: u64 = 8 << 20;

/// Largest file a spool accepts (the size a file offset can reach).
const MAX_SIZE: u64 = i64::MAX as u64;

pub(crate) enum Spool {
    Memory(Vec<u8>),
    Disk { file: File, len: u64 },
}

impl Spool {
    pub fn new() -> Spool {
        Spool::Memory(Vec::new())
    }

    pub fn len(&self) -> u64 {
        match self {
            Spool::Memory(v) => v.len() as u64,
            Spool::Disk { len, .. } => *len,
        }
    }

    /// Move to a temporary file when the content would grow past the memory limit.
    fn make_room(&mut self, end: u64) -> io::Result<()> {
        if end > MAX_SIZE {
            return Err(io::Error::from_raw_os_error(libc::EFBIG));
        }
        if let Spool::Memory(v) = self {
            if end > MEMORY_LIMIT {
                let file = temp_file()?;
                file.write_all_at(v, 0)?;
                *self = Spool::Disk {
                    file,
                    len: v.len() as u64,
                };
            }
        }
        Ok(())
    }

    /// Write `data` at `offset`; a gap before it reads as zeros.
    pub fn write_at(&mut self, offset: u64, data: &[u8]) -> io::Result<()> {
        let end = offset
            .checked_add(data.len() as u64)
            .ok_or_else(|| io::Error::from_raw_os_error(libc::EFBIG))?;
        self.make_room(end)?;
        match self {
            Spool::Memory(v) => {
                let (start, end) = (offset as usize, end as usize);
                if v.len() < end {
                    v.resize(end, 0);
                }
                v[start..end].copy_from_slice(data);
            }
            Spool::Disk { file, len } => {
                file.write_all_at(data, offset)?;
                *len = (*len).max(end);
            }
        }
        Ok(())
    }

    /// Cut or extend (with zeros) to `size` bytes.
    pub fn set_len(&mut self, size: u64) -> io::Result<()> {
        self.make_room(size)?;
        match self {
            Spool::Memory(v) => v.resize(size as usize, 0),
            Spool::Disk { file, len } => {
                file.set_len(size)?;
                *len = size;
            }
        }
        Ok(())
    }

    /// Up to `buf.len()` bytes from `offset`; returns how many.
    pub fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let len = self.len();
        if offset >= len {
            return Ok(0);
        }
        let n = (buf.len() as u64).min(len - offset) as usize;
        match self {
            Spool::Memory(v) => {
                let start = offset as usize;
                buf[..n].copy_from_slice(&v[start..start + n]);
            }
            Spool::Disk { file, .. } => file.read_exact_at(&mut buf[..n], offset)?,
        }
        Ok(n)
    }

    /// A reader over the whole content, from the start.
    pub fn reader(&self) -> SpoolReader<'_> {
        SpoolReader { spool: self, at: 0 }
    }
}

pub(crate) struct SpoolReader<'a> {
    spool: &'a Spool,
    at: u64,
}

impl Read for SpoolReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.spool.read_at(self.at, buf)?;
        self.at += n as u64;
        Ok(n)
    }
}

/// An unlinked temporary file in the system's temporary directory.
fn temp_file() -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = std::env::temp_dir();
    let tmpfile = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_TMPFILE)
        .open(&dir);
    match tmpfile {
        Ok(f) => Ok(f),
        // A file system without O_TMPFILE: a named file, removed at once.
        Err(_) => {
            for i in 0..100u32 {
                let path = dir.join(format!(
                    ".barecat-mount-{}-{}-{i}",
                    std::process::id(),
                    crate::core::index::now_ns()
                ));
                match std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create_new(true)
                    .mode(0o600)
                    .open(&path)
                {
                    Ok(f) => {
                        let _ = std::fs::remove_file(&path);
                        return Ok(f);
                    }
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                    Err(e) => return Err(e),
                }
            }
            Err(io::Error::from(io::ErrorKind::AlreadyExists))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_anywhere_and_spills_to_disk() {
        let mut s = Spool::new();
        s.write_at(0, b"hello").unwrap();
        s.write_at(10, b"world").unwrap();
        assert_eq!(s.len(), 15);
        let mut all = Vec::new();
        s.reader().read_to_end(&mut all).unwrap();
        assert_eq!(all, b"hello\0\0\0\0\0world");
        s.set_len(3).unwrap();
        let big = vec![7u8; MEMORY_LIMIT as usize];
        s.write_at(3, &big).unwrap();
        assert!(matches!(s, Spool::Disk { .. }));
        assert_eq!(s.len(), 3 + MEMORY_LIMIT);
        let mut head = [0u8; 5];
        assert_eq!(s.read_at(0, &mut head).unwrap(), 5);
        assert_eq!(&head, b"hel\x07\x07");
        s.set_len(4).unwrap();
        let mut all = Vec::new();
        s.reader().read_to_end(&mut all).unwrap();
        assert_eq!(all, b"hel\x07");
        assert!(s.write_at(u64::MAX - 1, b"xx").is_err());
    }
}
