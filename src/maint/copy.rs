//! Copying byte ranges between shard files, in the kernel when it can
//! (`copy_file_range`), else through a buffer with positioned reads and writes.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::path::Path;

use crate::core::error::{Error, Result};

const BUF: usize = 4 << 20;

/// Copies ranges; remembers when the kernel path is unavailable.
pub(crate) struct Copier {
    kernel: bool,
    buf: Vec<u8>,
}

impl Copier {
    pub(crate) fn new() -> Copier {
        Copier {
            kernel: true,
            buf: Vec::new(),
        }
    }

    /// Copy `len` bytes from `src` at `src_off` to `dst` at `dst_off`. The ranges
    /// must not overlap when `src` and `dst` are the same file. A source that ends
    /// early is an error naming it.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn copy(
        &mut self,
        src: &File,
        src_path: &Path,
        src_off: u64,
        dst: &File,
        dst_path: &Path,
        dst_off: u64,
        len: u64,
    ) -> Result<()> {
        let mut done = 0u64;
        if self.kernel {
            while done < len {
                let mut off_in = (src_off + done) as libc::loff_t;
                let mut off_out = (dst_off + done) as libc::loff_t;
                let want = (len - done).min(1 << 30) as usize;
                let n = unsafe {
                    libc::copy_file_range(
                        src.as_raw_fd(),
                        &mut off_in,
                        dst.as_raw_fd(),
                        &mut off_out,
                        want,
                        0,
                    )
                };
                if n > 0 {
                    done += n as u64;
                    continue;
                }
                if n == 0 {
                    return Err(short_source(src_path, src_off + done));
                }
                let e = io::Error::last_os_error();
                match e.raw_os_error() {
                    Some(libc::EINTR) => continue,
                    Some(
                        libc::EXDEV
                        | libc::ENOSYS
                        | libc::EOPNOTSUPP
                        | libc::EINVAL
                        | libc::EBADF
                        | libc::EPERM,
                    ) if done == 0 => {
                        self.kernel = false;
                        break;
                    }
                    _ => return Err(Error::io(dst_path, e)),
                }
            }
            if done == len {
                return Ok(());
            }
        }
        if self.buf.is_empty() {
            self.buf = vec![0u8; BUF];
        }
        while done < len {
            let n = (len - done).min(BUF as u64) as usize;
            let chunk = &mut self.buf[..n];
            read_exact_at(src, src_path, chunk, src_off + done)?;
            dst.write_all_at(chunk, dst_off + done)
                .map_err(|e| Error::io(dst_path, e))?;
            done += n as u64;
        }
        Ok(())
    }
}

fn short_source(path: &Path, at: u64) -> Error {
    Error::io(
        path,
        io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("the file ends at byte {at}, before the bytes the index refers to"),
        ),
    )
}

/// Read exactly `buf.len()` bytes at `offset`; a short file is an error naming it.
pub(crate) fn read_exact_at(file: &File, path: &Path, buf: &mut [u8], offset: u64) -> Result<()> {
    let mut done = 0usize;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => return Err(short_source(path, offset + done as u64)),
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io(path, e)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::OpenOptions;

    #[test]
    fn copies_within_and_between_files() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        std::fs::write(&a, b"0123456789").unwrap();
        std::fs::write(&b, b"").unwrap();
        let fa = OpenOptions::new().read(true).write(true).open(&a).unwrap();
        let fb = OpenOptions::new().read(true).write(true).open(&b).unwrap();
        for kernel in [true, false] {
            let mut c = Copier::new();
            c.kernel = kernel;
            c.copy(&fa, &a, 6, &fa, &a, 0, 3).unwrap();
            c.copy(&fa, &a, 0, &fb, &b, 2, 4).unwrap();
            assert!(c.copy(&fa, &a, 8, &fb, &b, 0, 5).is_err());
        }
        assert_eq!(std::fs::read(&a).unwrap(), b"6783456789");
        assert_eq!(&std::fs::read(&b).unwrap()[2..6], b"6783");
    }
}
