//! Remote archives: reading archives at `s3://bucket/prefix/name` and
//! `http(s)://host/path/name` by ranged requests, without downloading them.
//!
//! # Why
//!
//! Datasets that outgrow one machine live in object storage, and many training
//! nodes read them at once. Object storage already is the distributed engine: the
//! reader only has to make few, well-shaped requests. A cold path lookup costs at
//! most one index request plus one data request, thanks to the B-tree sidecar
//! ([`crate::core::format::sidecar`]).
//!
//! # How
//!
//! * [`client`]: object_store's S3 and HTTP clients behind a synchronous API (an
//!   internal tokio runtime), with retries, timeouts and pinning of every object to
//!   the version first seen (ETag / `If-Match`).
//! * [`pages`] and [`vfs`]: the index, read by SQLite through a read-only VFS of
//!   ours, from the sidecar's pinned pages, an LRU page cache and page-aligned
//!   ranged requests with read-ahead for scans; or downloaded whole and served from
//!   memory when it is small ([`IndexMode`]).
//! * [`shards`]: shard reads, one request per random read, coalesced runs with
//!   several requests in flight for readers that go in address order.
//! * [`stats`](mod@stats): requests and bytes per kind of object, for `--stats`.
//!
//! The rest of the library sees none of this: [`crate::Archive`] opens a URL like
//! a path, its index connections come from the VFS and its [`crate::core::shards::ShardSet`]
//! reads through [`shards::RemoteShards`]. Only zero-copy memory maps are local:
//! for a remote archive [`crate::Archive::map`] returns the bytes read into memory.
//! Writing to remote storage is not supported.

pub mod client;
pub mod config;
pub mod pages;
pub mod shards;
pub mod stats;
pub mod vfs;

use std::sync::Arc;

use bytes::Bytes;
use object_store::ObjectStore;

use crate::core::error::{Error, Result};
use crate::core::format::sidecar::{self, PageMap, Rejection};
pub use crate::core::location::{is_remote, is_url, Location, RemoteUrl, Scheme};
use client::{Fail, Object};
pub use config::{IndexMode, Settings};
use pages::PageSource;
pub use stats::{snapshot as stats, RequestKind, Stats};
use vfs::Registration;

/// Bytes of the index fetched at open: page 1 and the pages just after it (the
/// config table and other small tables created with the schema live there).
pub const HEAD_BYTES: u64 = 64 << 10;
/// The most bytes of a sidecar fetched (a sidecar is a fraction of a percent of
/// its index: this covers indexes of many gigabytes).
pub const SIDECAR_MAX: u64 = 64 << 20;

/// What became of the sidecar of a remote archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SidecarUse {
    /// Fresh: its pages are pinned.
    Pinned {
        /// Number of pages it holds.
        pages: usize,
    },
    /// There is none.
    Missing,
    /// Not fetched: the index was downloaded whole.
    NotNeeded,
    /// Fetched and refused (stale, corrupt, another format).
    Rejected(Rejection),
    /// It could not be fetched (the error, as one line).
    Unreadable(String),
}

/// A remote archive's index, opened.
pub struct RemoteIndex {
    /// The archive's URL.
    pub url: RemoteUrl,
    /// The index object is `NAME-sqlite-index`.
    pub legacy: bool,
    /// The URL of the index object.
    pub index_url: String,
    pub(crate) store: Arc<dyn ObjectStore>,
    /// Where SQLite's page reads go: the sidecar's pages, the cache, ranged requests.
    pub source: Arc<PageSource>,
    /// The index registered with the remote VFS, for opening connections.
    pub registration: Arc<Registration>,
    /// What became of the sidecar.
    pub sidecar: SidecarUse,
    /// Downloaded whole (true) or read by ranged requests.
    pub downloaded: bool,
}

impl std::fmt::Debug for RemoteIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteIndex")
            .field("url", &self.index_url)
            .field("sidecar", &self.sidecar)
            .field("downloaded", &self.downloaded)
            .finish()
    }
}

fn not_an_archive(url: &str, detail: &str) -> Error {
    Error::NotAnArchive {
        path: url.into(),
        detail: detail.into(),
    }
}

impl RemoteIndex {
    /// The whole object `NAME<suffix>` beside the archive (a companion such as the
    /// record table), in one request; `None` when there is none.
    pub fn fetch_part(&self, suffix: &str, kind: RequestKind) -> Result<Option<Bytes>> {
        let o = Arc::new(Object::new(
            self.store.clone(),
            &self.url,
            &self.url.with_suffix(suffix),
            kind,
        ));
        match o.get(None) {
            Ok(b) => Ok(Some(b)),
            Err(Fail::NotFound(_)) => Ok(None),
            Err(e) => Err(e.into_error()),
        }
    }
}

/// The page size an SQLite header declares, if `head` is one.
fn sqlite_page_size(head: &[u8]) -> Option<u64> {
    if head.len() < 100 || !head.starts_with(b"SQLite format 3\0") {
        return None;
    }
    let ps = match u16::from_be_bytes([head[16], head[17]]) {
        1 => 65536,
        n => n as u64,
    };
    (ps.is_power_of_two() && (512..=65536).contains(&ps)).then_some(ps)
}

/// Open the index of the remote archive at `url`: at most three requests with a
/// sidecar (the head of the index and the sidecar at once, in parallel; the rest of
/// the index when `auto` downloads it), and one more for a legacy
/// `NAME-sqlite-index`.
pub fn open_index(url: &RemoteUrl, mode: IndexMode) -> Result<RemoteIndex> {
    let store = client::store_for(url)?;
    let s = Settings::get();
    let sidecar = Arc::new(Object::new(
        store.clone(),
        url,
        &url.with_suffix(crate::core::format::layout::SIDECAR_SUFFIX),
        RequestKind::Sidecar,
    ));
    let mut legacy = false;
    let mut index = Arc::new(Object::new(
        store.clone(),
        url,
        &url.name,
        RequestKind::Index,
    ));
    let head_range = (mode != IndexMode::Download).then_some(0..HEAD_BYTES);
    let want_sidecar = mode != IndexMode::Download;
    let (head, side) = {
        let (ix, sc) = (index.clone(), sidecar.clone());
        let hr = head_range.clone();
        client::block_on(async move {
            let side = if want_sidecar {
                let sc = sc.clone();
                Some(tokio::spawn(
                    async move { sc.fetch(Some(0..SIDECAR_MAX)).await },
                ))
            } else {
                None
            };
            let head = ix.fetch(hr).await;
            let side =
                match side {
                    Some(h) => Some(h.await.unwrap_or_else(|e| {
                        Err(Fail::Other(Error::InvalidOperation(e.to_string())))
                    })),
                    None => None,
                };
            Ok((head, side))
        })?
    };
    let head = match head {
        Ok(h) => h,
        Err(Fail::NotFound(e)) => {
            if e.to_string().contains("no such bucket") {
                return Err(e);
            }
            // The legacy naming: NAME-sqlite-index.
            legacy = true;
            index = Arc::new(Object::new(
                store.clone(),
                url,
                &url.with_suffix("-sqlite-index"),
                RequestKind::Index,
            ));
            match index.get(head_range.clone()) {
                Ok(h) => h,
                Err(Fail::NotFound(_)) => {
                    return Err(Error::ArchiveNotFound {
                        path: url.url().into(),
                    })
                }
                Err(e) => return Err(e.into_error()),
            }
        }
        Err(Fail::Unsatisfiable(_)) => {
            return Err(not_an_archive(index.url(), "empty object"));
        }
        Err(e) => return Err(e.into_error()),
    };
    let index_url = index.url().to_string();
    let size = index.size().unwrap_or(head.len() as u64);
    let Some(page_size) = sqlite_page_size(&head) else {
        return Err(not_an_archive(&index_url, "not an SQLite database"));
    };
    let download = match mode {
        IndexMode::Download => true,
        IndexMode::Range => false,
        IndexMode::Auto => size <= s.download_limit,
    };
    let make = |source: PageSource, sidecar: SidecarUse, downloaded: bool| {
        let source = Arc::new(source);
        RemoteIndex {
            url: url.clone(),
            legacy,
            index_url: index_url.clone(),
            store: store.clone(),
            registration: Arc::new(Registration::new(source.clone())),
            source,
            sidecar,
            downloaded,
        }
    };
    if download {
        let whole = if head.len() as u64 >= size {
            head
        } else {
            let rest = index.get(Some(head.len() as u64..size))?;
            let mut v = Vec::with_capacity(size as usize);
            v.extend_from_slice(&head);
            v.extend_from_slice(&rest);
            if v.len() as u64 != size {
                return Err(Error::Remote {
                    url: index_url.clone(),
                    detail: format!("got {} of {size} bytes", v.len()),
                });
            }
            Bytes::from(v)
        };
        return Ok(make(
            PageSource::memory(index_url.clone(), whole),
            SidecarUse::NotNeeded,
            true,
        ));
    }
    let (pinned, used) = load_sidecar(side, size, &head, page_size, sidecar.url());
    let pages = PageSource::remote(index, size, page_size, pinned, s.cache_bytes, &head);
    Ok(make(pages, used, false))
}

/// The sidecar's pages, if its fetch succeeded and it is valid and fresh.
fn load_sidecar(
    fetched: Option<std::result::Result<Bytes, Fail>>,
    index_len: u64,
    head: &[u8],
    page_size: u64,
    url: &str,
) -> (Option<PageMap>, SidecarUse) {
    let bytes = match fetched {
        None => return (None, SidecarUse::NotNeeded),
        Some(Ok(b)) => b,
        Some(Err(Fail::NotFound(_))) => {
            log::debug!("{url}: no sidecar; lookups cost more requests");
            return (None, SidecarUse::Missing);
        }
        Some(Err(e)) => {
            let e = e.into_error().to_string();
            log::warn!("{e}; going on without the sidecar");
            return (None, SidecarUse::Unreadable(e));
        }
    };
    let page1 = &head[..head.len().min(page_size as usize)];
    match sidecar::load(&bytes, index_len, page1) {
        Ok(map) => {
            let n = map.len();
            (Some(map), SidecarUse::Pinned { pages: n })
        }
        Err(r) => {
            log::log!(r.log_level(), "{url}: {r}; going on without the sidecar");
            (None, SidecarUse::Rejected(r))
        }
    }
}
