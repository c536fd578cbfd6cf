//! What remote reads cost: requests and bytes per kind of object, counted for the
//! whole process (`--stats` prints them at the end of a command; tests assert on
//! them).

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

/// The kinds of objects of an archive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestKind {
    /// The B-tree sidecar (`-btreemeta`).
    Sidecar = 0,
    /// The SQLite index.
    Index = 1,
    /// The shard files.
    Shards = 2,
    /// Record tables and datasets.
    Records = 3,
}

impl RequestKind {
    /// Every kind, in the order reports show them.
    pub const ALL: [RequestKind; 4] = [
        RequestKind::Sidecar,
        RequestKind::Index,
        RequestKind::Shards,
        RequestKind::Records,
    ];

    /// The name reports use (`sidecar`, `index`, `shards`, `records`).
    pub fn name(self) -> &'static str {
        match self {
            RequestKind::Sidecar => "sidecar",
            RequestKind::Index => "index",
            RequestKind::Shards => "shards",
            RequestKind::Records => "records",
        }
    }
}

struct Counters {
    requests: AtomicU64,
    bytes: AtomicU64,
    retries: AtomicU64,
}

impl Counters {
    const fn new() -> Counters {
        Counters {
            requests: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            retries: AtomicU64::new(0),
        }
    }
}

static COUNTERS: [Counters; 4] = [
    Counters::new(),
    Counters::new(),
    Counters::new(),
    Counters::new(),
];

/// One request sent (every attempt counts, retries included).
pub(crate) fn request(kind: RequestKind) {
    COUNTERS[kind as usize]
        .requests
        .fetch_add(1, Ordering::Relaxed);
}

/// `n` bytes of response bodies received.
pub(crate) fn bytes(kind: RequestKind, n: u64) {
    COUNTERS[kind as usize]
        .bytes
        .fetch_add(n, Ordering::Relaxed);
}

/// An attempt failed and is repeated.
pub(crate) fn retry(kind: RequestKind) {
    COUNTERS[kind as usize]
        .retries
        .fetch_add(1, Ordering::Relaxed);
}

/// Requests, bytes and retries of one kind of object.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct KindStats {
    /// Requests sent (retries not counted).
    pub requests: u64,
    /// Bytes received.
    pub bytes: u64,
    /// Requests sent again after a failure.
    pub retries: u64,
}

/// A snapshot of the counters of this process.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Stats {
    /// Reads of the sidecar.
    pub sidecar: KindStats,
    /// Reads of the index.
    pub index: KindStats,
    /// Reads of shards.
    pub shards: KindStats,
    /// Reads of record tables and datasets.
    pub records: KindStats,
}

impl Stats {
    /// The counters of one kind.
    pub fn get(&self, kind: RequestKind) -> KindStats {
        match kind {
            RequestKind::Sidecar => self.sidecar,
            RequestKind::Index => self.index,
            RequestKind::Shards => self.shards,
            RequestKind::Records => self.records,
        }
    }

    /// Requests of all kinds.
    pub fn requests(&self) -> u64 {
        RequestKind::ALL.iter().map(|&k| self.get(k).requests).sum()
    }

    /// Bytes of all kinds.
    pub fn bytes(&self) -> u64 {
        RequestKind::ALL.iter().map(|&k| self.get(k).bytes).sum()
    }

    /// The counts since `earlier`.
    pub fn since(&self, earlier: &Stats) -> Stats {
        let d = |a: KindStats, b: KindStats| KindStats {
            requests: a.requests - b.requests,
            bytes: a.bytes - b.bytes,
            retries: a.retries - b.retries,
        };
        Stats {
            sidecar: d(self.sidecar, earlier.sidecar),
            index: d(self.index, earlier.index),
            shards: d(self.shards, earlier.shards),
            records: d(self.records, earlier.records),
        }
    }
}

/// The counters of this process so far.
pub fn snapshot() -> Stats {
    let g = |k: RequestKind| {
        let c = &COUNTERS[k as usize];
        KindStats {
            requests: c.requests.load(Ordering::Relaxed),
            bytes: c.bytes.load(Ordering::Relaxed),
            retries: c.retries.load(Ordering::Relaxed),
        }
    };
    Stats {
        sidecar: g(RequestKind::Sidecar),
        index: g(RequestKind::Index),
        shards: g(RequestKind::Shards),
        records: g(RequestKind::Records),
    }
}

impl fmt::Display for Stats {
    /// One line per kind, then the total: `remote index: 2 requests, 65536 bytes,
    /// 0 retries`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for k in RequestKind::ALL {
            let s = self.get(k);
            writeln!(
                f,
                "remote {}: {} requests, {} bytes, {} retries",
                k.name(),
                s.requests,
                s.bytes,
                s.retries
            )?;
        }
        write!(
            f,
            "remote total: {} requests, {} bytes",
            self.requests(),
            self.bytes()
        )
    }
}
