//! The bytes of a remote index, as SQLite reads them through [`super::vfs`].
//!
//! A read is served, in this order, from the sidecar's pinned pages (page 1, the
//! schema and every interior b-tree page: a lookup then misses at most its leaf
//! pages), from an LRU cache of pages fetched before (`BARECAT_REMOTE_CACHE`), and
//! else by one ranged request for a window of pages around the one asked for. A
//! miss right after the last window (a scan: `ls -R`, `du`, `index-to-csv`) doubles
//! the window, up to [`MAX_WINDOW`], so that a whole index is read in a few large
//! requests; any other miss fetches [`LOOKUP_WINDOW`] bytes around the page. That
//! window also holds the neighbouring pages of the other b-trees: an index written
//! in path order (every archive our writers and Python barecat build from a sorted
//! walk) interleaves the pages of `files` and of its path index as they grew, so
//! the table leaf a path lookup needs after its index leaf usually comes with the
//! same request.
//!
//! A downloaded index ([`super::IndexMode::Download`]) is served from memory.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use bytes::Bytes;

use super::client::Object;
use crate::core::error::Result;
use crate::core::format::sidecar::PageMap;

/// Bytes fetched around a page on a miss that is not part of a scan.
pub const LOOKUP_WINDOW: u64 = 64 << 10;
/// The largest window of a scan.
pub const MAX_WINDOW: u64 = 8 << 20;

/// Where the bytes are.
pub(crate) enum Backing {
    Remote(Arc<Object>),
    Memory(Bytes),
}

struct Cache {
    pages: HashMap<u64, (Arc<[u8]>, u64)>,
    lru: BTreeMap<u64, u64>,
    tick: u64,
}

/// The read pattern of one reader (one SQLite connection's file handle): each
/// connection scans on its own, so two at once (verify's index checks beside its
/// file walk) do not break each other's scans.
#[derive(Debug, Clone, Copy)]
pub struct ScanState {
    /// Where this reader's scan has fetched up to (a page number): a miss at or
    /// just after it continues the scan.
    front: Option<u64>,
    /// The window size of the scan, in bytes.
    window: u64,
}

impl Default for ScanState {
    fn default() -> Self {
        ScanState {
            front: None,
            window: LOOKUP_WINDOW,
        }
    }
}

/// The bytes of an index for SQLite.
pub struct PageSource {
    pub(crate) url: String,
    backing: Backing,
    size: u64,
    page_size: u64,
    pinned: Option<PageMap>,
    cap_pages: usize,
    cache: Mutex<Cache>,
}

impl std::fmt::Debug for PageSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageSource")
            .field("url", &self.url)
            .field("size", &self.size)
            .finish()
    }
}

impl PageSource {
    /// An index held in memory whole.
    pub(crate) fn memory(url: String, data: Bytes) -> PageSource {
        let size = data.len() as u64;
        PageSource::new(url, Backing::Memory(data), size, 4096, None, 0, &[])
    }

    /// An index read by ranged requests of `object` (`size` bytes, pages of
    /// `page_size`), with the pinned pages of a sidecar and the bytes `head`
    /// already fetched from its start.
    pub(crate) fn remote(
        object: Arc<Object>,
        size: u64,
        page_size: u64,
        pinned: Option<PageMap>,
        cache_bytes: u64,
        head: &[u8],
    ) -> PageSource {
        let url = object.url().to_string();
        PageSource::new(
            url,
            Backing::Remote(object),
            size,
            page_size,
            pinned,
            cache_bytes,
            head,
        )
    }

    fn new(
        url: String,
        backing: Backing,
        size: u64,
        page_size: u64,
        pinned: Option<PageMap>,
        cache_bytes: u64,
        head: &[u8],
    ) -> PageSource {
        let page_size = page_size.max(512);
        let s = PageSource {
            url,
            backing,
            size,
            page_size,
            pinned,
            cap_pages: (cache_bytes / page_size).max(16) as usize,
            cache: Mutex::new(Cache {
                pages: HashMap::new(),
                lru: BTreeMap::new(),
                tick: 0,
            }),
        };
        if !head.is_empty() {
            let mut c = s.lock();
            s.insert(&mut c, 0, head);
        }
        s
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The index's size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Is a sidecar's set of pages pinned?
    pub fn has_sidecar(&self) -> bool {
        self.pinned.is_some()
    }

    /// Insert the whole pages of `data`, which starts at page `first`.
    fn insert(&self, c: &mut Cache, first: u64, data: &[u8]) {
        let ps = self.page_size as usize;
        for (i, chunk) in data.chunks_exact(ps).enumerate() {
            let pg = first + i as u64;
            if self.pinned_page(pg).is_some() || c.pages.contains_key(&pg) {
                continue;
            }
            c.tick += 1;
            let t = c.tick;
            c.pages.insert(pg, (Arc::from(chunk), t));
            c.lru.insert(t, pg);
        }
        while c.pages.len() > self.cap_pages {
            let Some((_, pg)) = c.lru.pop_first() else {
                break;
            };
            c.pages.remove(&pg);
        }
    }

    fn pinned_page(&self, pg: u64) -> Option<&[u8]> {
        let n = u32::try_from(pg + 1).ok()?;
        self.pinned.as_ref()?.get(n)
    }

    /// Page `pg` (0-based) from the cache, touching it.
    fn cached(&self, pg: u64) -> Option<Arc<[u8]>> {
        let mut c = self.lock();
        c.tick += 1;
        let t = c.tick;
        let (data, old) = {
            let e = c.pages.get_mut(&pg)?;
            let old = e.1;
            e.1 = t;
            (e.0.clone(), old)
        };
        c.lru.remove(&old);
        c.lru.insert(t, pg);
        Some(data)
    }

    /// Fetch the window of pages for a miss on `pg`; returns that page.
    fn fetch(&self, object: &Arc<Object>, pg: u64, c: &mut ScanState) -> Result<Arc<[u8]>> {
        let ps = self.page_size;
        let pages = self.size.div_ceil(ps);
        let (start, end) = {
            let span = (c.window / ps).max(1);
            let around = |pg: u64| {
                let s = pg.saturating_sub((LOOKUP_WINDOW / ps / 2).max(1));
                (s, s + (LOOKUP_WINDOW / ps).max(1))
            };
            let (start, end) = match c.front {
                // The scan goes on: the next window, right after the last one (no
                // page between them is skipped), twice as large.
                Some(f) if pg >= f && pg < f + span => {
                    c.window = (c.window * 2).min(MAX_WINDOW);
                    let end = (f + c.window / ps).max(pg + 1);
                    c.front = Some(end.min(pages));
                    (f, end)
                }
                // A page a little behind the scan (another b-tree's, read as the
                // scan goes): fetched around, the scan left as it is.
                Some(f) if pg < f && pg + 2 * span >= f => around(pg),
                // Anything else: a lookup.
                _ => {
                    c.window = LOOKUP_WINDOW;
                    let (s, e) = around(pg);
                    c.front = Some(e.min(pages));
                    (s, e)
                }
            };
            (start, end.min(pages).max(pg + 1))
        };
        let data = object.get(Some(start * ps..(end * ps).min(self.size)))?;
        let mut c = self.lock();
        self.insert(&mut c, start, &data);
        let at = ((pg - start) * ps) as usize;
        let page: Arc<[u8]> = match data.get(at..at + ps as usize) {
            Some(p) => Arc::from(p),
            // A short last page (a truncated file): what there is.
            None => Arc::from(data.get(at.min(data.len())..).unwrap_or(&[])),
        };
        Ok(page)
    }

    /// Read up to `buf.len()` bytes at `offset`; returns how many the index holds
    /// there (fewer at its end).
    pub fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        self.read_with(offset, buf, &mut ScanState::default())
    }

    /// [`read_at`](Self::read_at) for a reader with a scan of its own.
    pub fn read_with(&self, offset: u64, buf: &mut [u8], scan: &mut ScanState) -> Result<usize> {
        if offset >= self.size {
            return Ok(0);
        }
        let n = (buf.len() as u64).min(self.size - offset) as usize;
        let object = match &self.backing {
            Backing::Memory(b) => {
                let at = offset as usize;
                buf[..n].copy_from_slice(&b[at..at + n]);
                return Ok(n);
            }
            Backing::Remote(o) => o,
        };
        let ps = self.page_size;
        let mut done = 0usize;
        while done < n {
            let pos = offset + done as u64;
            let pg = pos / ps;
            let within = (pos % ps) as usize;
            let take = (ps as usize - within).min(n - done);
            let copy = |src: &[u8], dst: &mut [u8]| -> usize {
                let avail = src.len().saturating_sub(within).min(take);
                dst[..avail].copy_from_slice(&src[within..within + avail]);
                avail
            };
            let got = if let Some(p) = self.pinned_page(pg) {
                copy(p, &mut buf[done..])
            } else if let Some(p) = self.cached(pg) {
                copy(&p, &mut buf[done..])
            } else {
                let p = self.fetch(object, pg, scan)?;
                copy(&p, &mut buf[done..])
            };
            if got == 0 {
                break;
            }
            done += got;
        }
        Ok(done)
    }
}
