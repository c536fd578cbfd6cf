//! Appending to a shard with direct I/O (`O_DIRECT`), past the page cache.
//!
//! Writing gigabytes through the page cache costs a copy into freshly allocated
//! cache pages for every byte, and the kernel's writeback of them later; on a busy or
//! virtualised machine that copy is the most expensive part of a conversion (a 5 GB
//! `dd` into a file: 18 s of system time buffered, 1.3 s direct). [`DirectStage`]
//! gathers the appended bytes in an aligned 8 MiB buffer and writes its whole aligned
//! blocks with `O_DIRECT`, straight to the device, on a thread of its own while the
//! next bytes are gathered in a second buffer (a direct write returns only when the
//! device has the data; the writer does not wait for that). A commit waits for it.
//!
//! Only blocks that lie wholly past the end of what the file held before are written
//! directly. The partial block at the end of the file (left by the previous writer, or
//! by the last [`DirectStage::spill`] with `all`) is completed with an ordinary
//! buffered write, as is the partial block at the end when everything must reach the
//! file. So a direct write never covers a page that is in the page cache (or mapped by
//! a reader), and the file never holds bytes past the logical end: the shard looks
//! exactly as if it had been written with `write`.
//!
//! Direct I/O is used only where the file system reports its alignment
//! (`statx(STATX_DIOALIGN)`, Linux 6.1 and later); if a direct write is refused
//! (`EINVAL`), that write and all later ones go through the page cache.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::sync::Arc;

/// Bytes gathered before a direct write.
const STAGE: usize = 8 << 20;

/// A writer appends its first 256 MiB through the page cache and switches to direct
/// I/O after that. Direct I/O pays for itself over gigabytes (see above), but a
/// direct write returns only when the device has the bytes, and below a few hundred
/// megabytes the page cache takes them faster than that: four 32 MiB files written
/// through Python file objects took 0.126 s direct and 0.060 s buffered, sync at the
/// commit included (`bench/python_fileobj.py large`).
pub const WARM_UP: u64 = 256 << 20;
/// Largest alignment we accept from `statx`.
const MAX_ALIGN: usize = 1 << 20;

/// The direct-I/O side of an appending shard writer.
pub(crate) struct DirectStage {
    /// The shard opened with `O_DIRECT`; `None` after a direct write was refused.
    file: Option<Arc<File>>,
    align: usize,
    /// `STAGE + align` bytes; the stage is `mem[at..at + STAGE]`, aligned.
    mem: Vec<u8>,
    at: usize,
    /// File offset of the stage's first byte, a multiple of `align`.
    base: u64,
    /// `stage[..done]` is already in the file.
    done: usize,
    /// `stage[..len]` are the shard's bytes from `base` on.
    len: usize,
    /// The previous stage, being written on a thread of its own: appending goes on
    /// into a second buffer meanwhile, so the device's latency is not the writer's.
    in_flight: Option<crate::core::fork::Worker<Written>>,
    /// A buffer back from a finished write, for the next stage.
    spare: Option<Vec<u8>>,
}

/// What a background direct write did.
struct Written {
    mem: Vec<u8>,
    at: usize,
    base: u64,
    /// The range of the stage to write, and how far direct writes got.
    from: usize,
    to: usize,
    reached: usize,
    result: io::Result<()>,
    /// The file system refused direct I/O (`EINVAL`).
    refused: bool,
}

impl DirectStage {
    /// A stage for appending to `path` (already open as `normal`) at `pos`, or `None`
    /// when the file system does not do direct I/O.
    pub(crate) fn open(path: &Path, pos: u64) -> Option<DirectStage> {
        let (file, align) = open_direct(path)?;
        Some(DirectStage::new(Some(file), align, pos))
    }

    /// Like [`open`](Self::open), reusing the buffers of `old` (a stage whose bytes
    /// are all in its file: after a [`spill`](Self::spill) with `all`), so that a
    /// writer moving from file to file does not fault in fresh buffers each time.
    pub(crate) fn reopen(path: &Path, pos: u64, old: Option<DirectStage>) -> Option<DirectStage> {
        let Some(mut old) = old else {
            return DirectStage::open(path, pos);
        };
        old.abandon();
        let (file, align) = open_direct(path)?;
        if align != old.align {
            return Some(DirectStage::new(Some(file), align, pos));
        }
        let (mem, at, spare) = (std::mem::take(&mut old.mem), old.at, old.spare.take());
        Some(DirectStage::with_buffers(
            Some(file),
            align,
            pos,
            (mem, at),
            spare,
        ))
    }

    /// A stage that writes whole blocks through `file` (buffered when `None`).
    fn new(file: Option<File>, align: usize, pos: u64) -> DirectStage {
        DirectStage::with_buffers(file, align, pos, aligned_buffer(align), None)
    }

    /// [`new`](Self::new) with the stage buffer `(mem, at)` (aligned at `at` for
    /// `align`) and a spare one given.
    fn with_buffers(
        file: Option<File>,
        align: usize,
        pos: u64,
        (mem, at): (Vec<u8>, usize),
        spare: Option<Vec<u8>>,
    ) -> DirectStage {
        let base = pos - pos % align as u64;
        let done = (pos - base) as usize;
        DirectStage {
            file: file.map(Arc::new),
            align,
            mem,
            at,
            base,
            done,
            len: done,
            in_flight: None,
            spare,
        }
    }

    /// File offset just past the last byte appended.
    pub(crate) fn end(&self) -> u64 {
        self.base + self.len as u64
    }

    /// Whether writes still go past the page cache.
    pub(crate) fn is_direct(&self) -> bool {
        self.file.is_some()
    }

    /// Append `data`; `normal` is the shard opened without `O_DIRECT`.
    pub(crate) fn push(&mut self, normal: &File, mut data: &[u8]) -> io::Result<()> {
        while !data.is_empty() {
            let n = (STAGE - self.len).min(data.len());
            let (at, len) = (self.at, self.len);
            self.mem[at + len..at + len + n].copy_from_slice(&data[..n]);
            self.len += n;
            data = &data[n..];
            if self.len == STAGE {
                self.spill(normal, false)?;
            }
        }
        Ok(())
    }

    /// Write the gathered bytes: the whole blocks (in the background), and with `all`
    /// also the partial block at the end, waiting until the file holds every byte
    /// appended.
    pub(crate) fn spill(&mut self, normal: &File, all: bool) -> io::Result<()> {
        let a = self.align;
        let head_end = self.done.next_multiple_of(a).min(self.len);
        if self.done < head_end {
            self.write_buffered(normal, self.done, head_end)?;
        }
        let full_end = self.len - self.len % a;
        if full_end > self.done {
            match self.file.clone() {
                Some(file) => self.start_direct(normal, file, full_end)?,
                None => self.write_buffered(normal, self.done, full_end)?,
            }
        }
        if all {
            self.settle(normal)?;
            if self.done < self.len {
                self.write_buffered(normal, self.done, self.len)?;
            }
        }
        // Keep only the partial block at the end (written or not).
        let keep = self.done - self.done % a;
        if keep > 0 {
            let (at, len) = (self.at, self.len);
            self.mem.copy_within(at + keep..at + len, at);
            self.base += keep as u64;
            self.done -= keep;
            self.len -= keep;
        }
        Ok(())
    }

    /// Forget everything and go on appending at `pos` (after the file was cut there,
    /// following a [`spill`](Self::spill) with `all`).
    pub(crate) fn reset(&mut self, pos: u64) {
        debug_assert!(self.in_flight.is_none());
        self.base = pos - pos % self.align as u64;
        self.done = (pos - self.base) as usize;
        self.len = self.done;
    }

    /// Wait for a background write without writing anything more, ignoring its
    /// outcome: for bytes that are about to be cut off anyway (a rollback).
    pub(crate) fn abandon(&mut self) {
        if let Some(h) = self.in_flight.take() {
            if let Some(w) = h.join() {
                self.spare = Some(w.mem);
            }
        }
    }

    /// Hand `stage[done..full_end]` to a thread that writes it directly, and go on
    /// with the partial block after it in the other buffer.
    fn start_direct(&mut self, normal: &File, file: Arc<File>, full_end: usize) -> io::Result<()> {
        self.settle(normal)?;
        let (mut next, next_at) = match self.spare.take() {
            Some(m) => {
                let at = m.as_ptr().align_offset(self.align);
                (m, at)
            }
            None => aligned_buffer(self.align),
        };
        let tail = self.len - full_end;
        next[next_at..next_at + tail]
            .copy_from_slice(&self.mem[self.at + full_end..self.at + self.len]);
        let mem = std::mem::replace(&mut self.mem, next);
        let at = std::mem::replace(&mut self.at, next_at);
        let (base, from, align) = (self.base, self.done, self.align);
        self.base += full_end as u64;
        self.done = 0;
        self.len = tail;
        self.in_flight = Some(crate::core::fork::Worker::spawn(move || {
            let (reached, result, refused) =
                write_direct(&file, &mem[at..], base, from, full_end, align);
            Written {
                mem,
                at,
                base,
                from,
                to: full_end,
                reached,
                result,
                refused,
            }
        }));
        Ok(())
    }

    /// Wait for the background write; what it could not write directly is written
    /// through the page cache.
    fn settle(&mut self, normal: &File) -> io::Result<()> {
        let Some(h) = self.in_flight.take() else {
            return Ok(());
        };
        let w = h
            .join()
            .ok_or_else(|| io::Error::other("the direct-I/O thread failed"))?;
        if w.refused {
            self.file = None;
        }
        let done = w.result.and_then(|()| {
            debug_assert!(w.from <= w.reached && w.reached <= w.to);
            normal.write_all_at(
                &w.mem[w.at + w.reached..w.at + w.to],
                w.base + w.reached as u64,
            )
        });
        self.spare = Some(w.mem);
        done
    }

    fn write_buffered(&mut self, normal: &File, from: usize, to: usize) -> io::Result<()> {
        let at = self.at;
        normal.write_all_at(&self.mem[at + from..at + to], self.base + from as u64)?;
        self.done = to;
        Ok(())
    }
}

impl Drop for DirectStage {
    fn drop(&mut self) {
        if let Some(h) = self.in_flight.take() {
            let _ = h.join();
        }
    }
}

/// `path` opened for writing with `O_DIRECT`, and the alignment that needs, where the
/// file system does direct I/O.
fn open_direct(path: &Path) -> Option<(File, usize)> {
    let file = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_DIRECT | libc::O_CLOEXEC)
        .open(path)
        .ok()?;
    let align = alignment(&file)?;
    Some((file, align))
}

/// Whether writers use direct I/O: yes unless `BARECAT_DIRECT_IO` is `0`.
pub fn wanted() -> bool {
    std::env::var_os("BARECAT_DIRECT_IO").is_none_or(|v| v != "0")
}

/// A zeroed buffer of `STAGE + align` bytes and the offset of its aligned start.
fn aligned_buffer(align: usize) -> (Vec<u8>, usize) {
    let mem = vec![0u8; STAGE + align];
    let at = mem.as_ptr().align_offset(align);
    (mem, at)
}

/// Write `stage[from..to]` (whole aligned blocks; `stage` starts at file offset
/// `base`) with direct I/O. Returns how far it got, the error that stopped it, and
/// whether the file system refused direct I/O: the caller writes the rest buffered.
fn write_direct(
    file: &File,
    stage: &[u8],
    base: u64,
    mut from: usize,
    to: usize,
    align: usize,
) -> (usize, io::Result<()>, bool) {
    while from < to {
        match file.write_at(&stage[from..to], base + from as u64) {
            Ok(0) => return (from, Err(io::Error::from(io::ErrorKind::WriteZero)), false),
            // A short write that ends inside a block: the rest goes buffered.
            Ok(n) if n % align != 0 => return (from + n, Ok(()), false),
            Ok(n) => from += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => return (from, Ok(()), true),
            Err(e) => return (from, Err(e), false),
        }
    }
    (from, Ok(()), false)
}

/// The alignment direct I/O on `file` needs (memory and file offsets), if the
/// file system tells and it is sane.
fn alignment(file: &File) -> Option<usize> {
    use rustix::fs::{statx, AtFlags, StatxFlags};
    let st = statx(file, "", AtFlags::EMPTY_PATH, StatxFlags::DIOALIGN).ok()?;
    if st.stx_mask & StatxFlags::DIOALIGN.bits() == 0 {
        return None;
    }
    let (mem, off) = (
        st.stx_dio_mem_align as usize,
        st.stx_dio_offset_align as usize,
    );
    if mem == 0 || off == 0 || !mem.is_power_of_two() || !off.is_power_of_two() {
        return None;
    }
    let align = mem.max(off).max(4096);
    (align <= MAX_ALIGN).then_some(align)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Stages over a file holding `initial`: one writing directly where the file
    /// system allows it, one with the same logic through the page cache.
    fn stages(dir: &Path, initial: &[u8]) -> Vec<(File, DirectStage)> {
        let mut out = Vec::new();
        for direct in [true, false] {
            let path = dir.join(format!("s{}", out.len()));
            std::fs::write(&path, initial).unwrap();
            let normal = OpenOptions::new()
                .read(true)
                .write(true)
                .open(&path)
                .unwrap();
            let pos = initial.len() as u64;
            let stage = if direct {
                match DirectStage::open(&path, pos) {
                    Some(s) => s,
                    None => {
                        eprintln!("{}: no direct I/O on this file system", path.display());
                        continue;
                    }
                }
            } else {
                DirectStage::new(None, 4096, pos)
            };
            out.push((normal, stage));
        }
        out
    }

    /// On a disk file system, not the tmpfs that /tmp may be.
    pub(crate) fn disk_dir() -> tempfile::TempDir {
        tempfile::Builder::new()
            .prefix(".direct-test")
            .tempdir_in(env!("CARGO_MANIFEST_DIR"))
            .unwrap()
    }

    fn pattern(n: usize, seed: u8) -> Vec<u8> {
        (0..n).map(|i| (i as u8).wrapping_mul(31) ^ seed).collect()
    }

    #[test]
    fn appends_land_exactly_with_unaligned_starts_and_spills() {
        let dir = disk_dir();
        for initial_len in [0usize, 1, 4095, 4096, 4097, 10_000] {
            let initial = pattern(initial_len, 7);
            for (k, (normal, mut st)) in stages(dir.path(), &initial).into_iter().enumerate() {
                let path = dir.path().join(format!("s{k}"));
                let mut want = initial.clone();
                // Pieces of all sizes, with spills of everything in between (commits),
                // and enough bytes to fill the stage more than once.
                let sizes = [1usize, 100, 4096, 5000, 3 << 20, 7 << 20, 13, 9 << 20, 4096];
                for (i, size) in sizes.iter().enumerate() {
                    let piece = pattern(*size, i as u8);
                    st.push(&normal, &piece).unwrap();
                    want.extend_from_slice(&piece);
                    if i % 3 == 2 {
                        st.spill(&normal, true).unwrap();
                        assert!(std::fs::read(&path).unwrap() == want, "after piece {i}");
                    }
                }
                st.spill(&normal, true).unwrap();
                let got = std::fs::read(&path).unwrap();
                assert_eq!(got.len(), want.len(), "initial length {initial_len}");
                assert!(got == want, "content differs, initial length {initial_len}");
            }
        }
    }

    #[test]
    fn direct_io_is_used_where_the_file_system_has_it() {
        let dir = disk_dir();
        let path = dir.path().join("s");
        std::fs::write(&path, b"").unwrap();
        let supported = OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_DIRECT)
            .open(&path)
            .ok()
            .and_then(|f| alignment(&f))
            .is_some();
        let normal = OpenOptions::new().write(true).open(&path).unwrap();
        let Some(mut st) = DirectStage::open(&path, 0) else {
            assert!(!supported);
            return;
        };
        st.push(&normal, &pattern(3 * STAGE + 5, 3)).unwrap();
        st.spill(&normal, true).unwrap();
        assert!(st.is_direct(), "a direct write was refused");
        assert_eq!(std::fs::read(&path).unwrap(), pattern(3 * STAGE + 5, 3));
    }

    #[test]
    fn reset_after_cutting_the_file() {
        let dir = disk_dir();
        for (k, (normal, mut st)) in stages(dir.path(), b"").into_iter().enumerate() {
            st.push(&normal, &pattern(10_000, 1)).unwrap();
            st.spill(&normal, true).unwrap();
            normal.set_len(5_000).unwrap();
            st.reset(5_000);
            st.push(&normal, b"tail").unwrap();
            st.spill(&normal, true).unwrap();
            let mut want = pattern(10_000, 1);
            want.truncate(5_000);
            want.extend_from_slice(b"tail");
            assert_eq!(
                std::fs::read(dir.path().join(format!("s{k}"))).unwrap(),
                want
            );
        }
    }
}
