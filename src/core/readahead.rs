//! Read-ahead: getting a local file's bytes off the disk before a reader asks for
//! them, so that the device stays busy while the reader works.
//!
//! Why one module: a tar imported front to back, a tar indexed in place, record
//! gathers and rebalances that jump about their chunks, merges that copy shards run
//! by run and verification that reads shards whole all want the same thing, and each
//! used to do it its own way. The ways, from the lightest:
//!
//! * hints to the kernel: [`advise_sequential`] (`POSIX_FADV_SEQUENTIAL`: a wider
//!   read-ahead window) and [`will_need`] (`POSIX_FADV_WILLNEED`: start reading a
//!   range in the background);
//! * [`Window`]: keep the kernel asked for the next bytes ahead of a reader's
//!   position, in steps, so that many requests are in flight where the kernel's own
//!   read-ahead keeps one or two; [`SequentialFile`] (from [`sequential`] and
//!   [`open_sequential`]) is a file read from start to end with one;
//! * [`load`]: read a range into the page cache with plain `pread`s, for a helper
//!   thread (`MADV_WILLNEED` is capped at one read-ahead window per call);
//!   [`coalesce`] and [`worth_loading`] decide which runs of requested bytes are
//!   dense enough for that to pay;
//! * [`with_read_ahead`]: run such a helper on a thread of its own, at most two
//!   items ahead of the worker.
//!
//! Not here: the prefetch of remote archives
//! ([`Prefetch`](crate::core::remote::shards::Prefetch)). A remote reader has no page
//! cache to fill and no kernel to hint: it fetches coalesced byte ranges over the
//! network into memory, under a budget of bytes held, and hands them to the readers
//! that wait for them. The functions here are hints about local files and are
//! no-ops for remote ones (their callers check).

use std::fs::File;
use std::io::{self, Read};
use std::num::NonZeroU64;
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::core::error::{IoContext, Result};

/// Requested byte ranges closer than this are read (or prefetched) as one run.
pub const RUN_GAP: usize = 64 << 10;
/// Read ahead (or prefetch) only when there are at least this many requests per run.
pub const PREFETCH_DENSITY: usize = 8;

/// Bytes of one `pread` of [`load`].
const LOAD_PIECE: usize = 1 << 20;

/// How far ahead a [`SequentialFile`] keeps the kernel asked.
const SEQUENTIAL_AHEAD: u64 = 64 << 20;
/// In pieces of this many bytes.
const SEQUENTIAL_STEP: u64 = 16 << 20;

/// Tell the kernel that `file` is read from start to end (a wider read-ahead
/// window). Only a hint: errors are ignored.
pub fn advise_sequential(file: &File) {
    let _ = rustix::fs::fadvise(file, 0, None, rustix::fs::Advice::Sequential);
}

/// Ask the kernel to start reading `len` bytes of `file` at `offset` into the page
/// cache in the background. Only a hint: errors are ignored.
pub fn will_need(file: &File, offset: u64, len: u64) {
    if let Some(len) = NonZeroU64::new(len) {
        let _ = rustix::fs::fadvise(file, offset, Some(len), rustix::fs::Advice::WillNeed);
    }
}

/// Bring bytes `start..end` of `file` into the page cache by reading them
/// (sequential `pread`s into a scratch buffer, so that the kernel's read-ahead keeps
/// the device busy as for `cat`), for a caller that reads ahead on a thread of its
/// own. Not `madvise(MADV_WILLNEED)`: the kernel caps that at one read-ahead window
/// (a few hundred KiB) per call. Stops at the end of the file or at an error: those
/// are left to the readers to report.
pub fn load(file: &File, start: u64, end: u64) {
    if end <= start {
        return;
    }
    let mut buf = vec![0u8; LOAD_PIECE.min((end - start) as usize)];
    let mut at = start;
    while at < end {
        let want = (end - at).min(buf.len() as u64) as usize;
        match file.read_at(&mut buf[..want], at) {
            Ok(0) | Err(_) => return,
            Ok(n) => at += n as u64,
        }
    }
}

/// Keeps the kernel asked ([`will_need`]) for the bytes up to `ahead` past a
/// reader's position, `step` bytes per request.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    /// Bytes before this offset have been asked for.
    asked: u64,
    ahead: u64,
    step: u64,
}

impl Window {
    /// A window over a file whose reader starts at `pos`.
    pub fn new(pos: u64, ahead: u64, step: u64) -> Window {
        Window {
            asked: pos,
            ahead,
            step: step.max(1),
        }
    }

    /// The reader is about to read the bytes from `from` up to `upto`: ask for what
    /// is not asked yet up to `ahead` bytes past `upto` (nothing before `from`, which
    /// the reader skips).
    pub fn advance(&mut self, file: &File, from: u64, upto: u64) {
        while self.asked < upto.saturating_add(self.ahead) {
            let at = self.asked.max(from);
            will_need(file, at, self.step);
            self.asked = at + self.step;
        }
    }
}

/// A file read once from its position to the end, which keeps the kernel asked for
/// the next 64 MiB ([`Window`]).
pub struct SequentialFile {
    file: File,
    pos: u64,
    window: Window,
}

impl SequentialFile {
    /// The file read.
    pub fn file(&self) -> &File {
        &self.file
    }
}

impl Read for SequentialFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.window.advance(&self.file, self.pos, self.pos);
        let n = self.file.read(buf)?;
        self.pos += n as u64;
        Ok(n)
    }
}

/// Read `file` from its current offset to the end, through an 8 KiB buffer (a tar's
/// 512-byte headers cost no system call each; larger reads go straight to the
/// caller), with the kernel told it is read in order and asked to load ahead
/// ([`SequentialFile`]).
pub fn sequential(file: File) -> io::BufReader<SequentialFile> {
    advise_sequential(&file);
    let pos = rustix::fs::seek(&file, rustix::fs::SeekFrom::Current(0)).unwrap_or(0);
    io::BufReader::with_capacity(
        8 << 10,
        SequentialFile {
            file,
            pos,
            window: Window::new(pos, SEQUENTIAL_AHEAD, SEQUENTIAL_STEP),
        },
    )
}

/// Open `path` to read it once from start to end ([`sequential`]).
pub fn open_sequential(path: &Path) -> Result<io::BufReader<SequentialFile>> {
    let f = File::open(path).at(path)?;
    Ok(sequential(f))
}

/// Merge extents `(file, start, end)`, sorted, into runs of nearby bytes: an extent
/// that starts at most [`RUN_GAP`] past the end of the run before it in the same
/// file joins that run.
pub fn coalesce<K: PartialEq + Copy>(
    sorted: impl IntoIterator<Item = (K, u64, u64)>,
) -> Vec<(K, u64, u64)> {
    let mut runs: Vec<(K, u64, u64)> = Vec::new();
    for (k, s, e) in sorted {
        match runs.last_mut() {
            Some((rk, _, re)) if *rk == k && s <= *re + RUN_GAP as u64 => *re = (*re).max(e),
            _ => runs.push((k, s, e)),
        }
    }
    runs
}

/// True when `requests` requests that lie in `runs` runs ([`coalesce`]) are dense
/// enough to load run by run: at least [`PREFETCH_DENSITY`] per run. For scattered
/// requests, reading whole runs costs more than the requests themselves.
pub fn worth_loading(runs: usize, requests: usize) -> bool {
    runs * PREFETCH_DENSITY <= requests
}

/// Run `f` on each of `items` in order while a helper thread runs `ahead` (a
/// read-ahead into the page cache, such as [`load`]) on them, at most two items
/// ahead of `f`: `f` gets an item once the helper is through with it, so the disk
/// sees one reader going ahead and keeps reading while `f` works. The first error of
/// `f` ends it (and the helper with it).
pub fn with_read_ahead<T: Copy + Send, E>(
    items: impl Iterator<Item = T> + Send,
    ahead: impl Fn(T) + Sync,
    mut f: impl FnMut(T) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
    std::thread::scope(|s| {
        let (tx, rx) = crossbeam_channel::bounded::<T>(2);
        let ahead = &ahead;
        s.spawn(move || {
            for item in items {
                ahead(item);
                // The consumer gone (an error): stop.
                if tx.send(item).is_err() {
                    return;
                }
            }
        });
        for item in rx {
            f(item)?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn sequential_reads_everything_from_the_position() {
        let mut f = tempfile::tempfile().unwrap();
        let data: Vec<u8> = (0..100_000u32).map(|i| i as u8).collect();
        f.write_all(&data).unwrap();
        use std::io::Seek;
        f.seek(io::SeekFrom::Start(10)).unwrap();
        let mut r = sequential(f);
        let mut got = Vec::new();
        r.read_to_end(&mut got).unwrap();
        assert_eq!(got, &data[10..]);
        load(r.get_ref().file(), 0, 1 << 30);
    }

    #[test]
    fn runs_join_nearby_extents_of_one_file() {
        let g = RUN_GAP as u64;
        let runs = coalesce([
            (0u32, 0, 10),
            (0, 10 + g, 20 + g),
            (0, 30 + 3 * g, 40 + 3 * g),
            (1, 0, 5),
        ]);
        assert_eq!(
            runs,
            vec![(0, 0, 20 + g), (0, 30 + 3 * g, 40 + 3 * g), (1, 0, 5)]
        );
        assert!(worth_loading(2, 16));
        assert!(!worth_loading(3, 16));
    }

    #[test]
    fn read_ahead_stops_at_the_first_error() {
        let mut seen = Vec::new();
        let r: std::result::Result<(), u32> = with_read_ahead(
            0..10u32,
            |_| {},
            |i| {
                seen.push(i);
                if i == 3 {
                    Err(i)
                } else {
                    Ok(())
                }
            },
        );
        assert_eq!(r, Err(3));
        assert_eq!(seen, vec![0, 1, 2, 3]);
    }
}
