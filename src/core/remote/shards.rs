//! Shards of a remote archive: ranged reads, with read-ahead for readers that go
//! through a shard in address order.
//!
//! A random read (a `cat`, a lookup from a data loader) is one ranged request for
//! exactly its bytes. When reads continue one another ([`STREAK`] in a row, each
//! starting where a recent one ended, give or take a [`GAP`]: `extract`, `to-tar`,
//! `to-zip`, `records gather` and `merge` walk files in address order, a large file
//! is read in pieces), a stream starts: the shard is then fetched in runs that grow
//! from [`MIN_RUN`] to [`MAX_RUN`], up to [`AHEAD`] runs ahead of the reader and in
//! flight at once, so that neighbouring files travel in a few large requests. Runs
//! are shared by every thread reading the shard; runs far behind the readers, and
//! those of a shard the readers left, are dropped, and the bytes held (in flight or
//! waiting) stay within `BARECAT_REMOTE_READAHEAD`: memory is bounded whatever the
//! archive's size. (`verify` groups files into spans of up to 8 MiB itself and
//! fetches each span with one request.)

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, RwLock};

use bytes::Bytes;
use object_store::ObjectStore;

use super::client::{spawn, Fail, Object};
use super::config::Settings;
use super::stats::RequestKind;
use crate::core::error::Error;
use crate::core::location::RemoteUrl;

/// The first run of a stream.
pub const MIN_RUN: u64 = 1 << 20;
/// The largest run.
pub const MAX_RUN: u64 = 8 << 20;
/// Runs kept ahead of a sequential reader.
pub const AHEAD: usize = 3;
/// A read that starts at most this far after the end of a recent one continues it
/// (the gap is fetched and dropped).
pub const GAP: u64 = 256 << 10;
/// Reads that continue one another before a stream starts: random readers almost
/// never continue each other by chance twice in a row.
pub const STREAK: u32 = 2;

/// The outcome of a fetch, shared by the readers waiting for it.
#[derive(Clone)]
enum Outcome {
    Data(Bytes),
    Failed {
        not_found: bool,
        past_end: bool,
        url: String,
        detail: String,
    },
}

impl Outcome {
    fn of(r: std::result::Result<Bytes, Fail>) -> Outcome {
        match r {
            Ok(b) => Outcome::Data(b),
            Err(f) => {
                let (not_found, past_end) = match &f {
                    Fail::NotFound(_) => (true, false),
                    Fail::Unsatisfiable(_) => (false, true),
                    Fail::Other(_) => (false, false),
                };
                let (url, detail) = match f.into_error() {
                    Error::Remote { url, detail } => (url, detail),
                    e => (String::new(), e.to_string()),
                };
                Outcome::Failed {
                    not_found,
                    past_end,
                    url,
                    detail,
                }
            }
        }
    }

    fn fail(&self) -> Option<Fail> {
        match self {
            Outcome::Data(_) => None,
            Outcome::Failed {
                not_found,
                past_end,
                url,
                detail,
            } => {
                let e = Error::Remote {
                    url: url.clone(),
                    detail: detail.clone(),
                };
                Some(if *not_found {
                    Fail::NotFound(e)
                } else if *past_end {
                    Fail::Unsatisfiable(e)
                } else {
                    Fail::Other(e)
                })
            }
        }
    }
}

struct Slot {
    done: Mutex<Option<Outcome>>,
    cv: Condvar,
}

impl Slot {
    fn wait(&self) -> Outcome {
        let mut g = self.done.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(o) = g.as_ref() {
                return o.clone();
            }
            g = self.cv.wait(g).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn is_done(&self) -> bool {
        self.done
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
    }
}

struct Run {
    end: u64,
    slot: Arc<Slot>,
    /// When a reader last used it (a tick of [`RemoteShards`]).
    used: u64,
    /// Fetched for a batch of files announced by [`RemoteShards::prefetch`]: kept
    /// until that batch is done, never evicted before.
    pinned: bool,
}

/// Where recent reads ended, with how many reads in a row led there: a read
/// starting at (or a little after) one of these continues it, even when several
/// threads read neighbouring files at once.
const RECENT: usize = 16;

#[derive(Default)]
struct Stream {
    /// Runs by start offset; they never overlap.
    runs: BTreeMap<u64, Run>,
    recent: VecDeque<(u64, u32)>,
    /// When the shard was last read (a tick of [`RemoteShards`]).
    last_use: u64,
}

impl Stream {
    /// The streak a read at `at` continues (0 when it continues nothing).
    fn streak_at(&self, at: u64) -> u32 {
        self.recent
            .iter()
            .filter(|&&(e, _)| at >= e && at - e <= GAP)
            .map(|&(_, k)| k + 1)
            .max()
            .unwrap_or(0)
    }

    fn ended_at(&mut self, at: u64, end: u64) {
        let streak = self.streak_at(at);
        if self.recent.len() >= RECENT {
            self.recent.pop_front();
        }
        self.recent.push_back((end, streak));
    }

    /// The run holding byte `at`, if any: (start, slot), marked used at `tick`.
    fn find(&mut self, at: u64, tick: u64) -> Option<(u64, Arc<Slot>)> {
        let (&start, r) = self.runs.range_mut(..=at).next_back()?;
        if at >= r.end {
            return None;
        }
        r.used = tick;
        Some((start, r.slot.clone()))
    }

    /// The runs that follow the one holding `at` back to back: how many there
    /// are, and where the last one ends.
    fn chain(&self, at: u64) -> Option<(usize, u64)> {
        let (_, r) = self.runs.range(..=at).next_back()?;
        if at >= r.end {
            return None;
        }
        let (mut n, mut end) = (0, r.end);
        while let Some(next) = self.runs.get(&end) {
            n += 1;
            end = next.end;
        }
        Some((n, end))
    }

    /// The finished run used longest ago, other than the one holding `keep`:
    /// (its last use, its start).
    fn stalest(&self, keep: u64) -> Option<(u64, u64)> {
        self.runs
            .iter()
            .filter(|(&st, r)| r.slot.is_done() && !r.pinned && !(st <= keep && keep < r.end))
            .map(|(&st, r)| (r.used, st))
            .min()
    }

    fn first_start(&self) -> Option<u64> {
        self.runs.iter().find(|(_, r)| !r.pinned).map(|(&s, _)| s)
    }

    fn max_end(&self) -> Option<u64> {
        self.runs
            .values()
            .filter(|r| !r.pinned)
            .map(|r| r.end)
            .max()
    }

    fn is_pinned(&self, start: u64) -> bool {
        self.runs.get(&start).is_some_and(|r| r.pinned)
    }

    /// Does a read at `at` continue a stream (inside the runs fetched, or after a
    /// streak of reads that continued one another)?
    fn continues(&self, at: u64) -> bool {
        if self.streak_at(at) >= STREAK {
            return true;
        }
        match (self.first_start(), self.max_end()) {
            (Some(a), Some(b)) => at >= a && at <= b + GAP,
            _ => false,
        }
    }

    /// Drop every finished run; returns the bytes dropped.
    fn release(&mut self) -> u64 {
        let done: Vec<u64> = self
            .runs
            .iter()
            .filter(|(_, r)| r.slot.is_done() && !r.pinned)
            .map(|(&s, _)| s)
            .collect();
        done.iter()
            .filter_map(|s| self.runs.remove(s).map(|r| r.end - s))
            .sum()
    }
}

/// One shard object and its read-ahead state.
pub(crate) struct RemoteShard {
    object: Arc<Object>,
    stream: Mutex<Stream>,
}

impl RemoteShard {
    fn lock(&self) -> std::sync::MutexGuard<'_, Stream> {
        self.stream.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Start fetching `[start, end)` as a run.
    fn start_run(&self, s: &mut Stream, start: u64, end: u64) {
        let slot = Arc::new(Slot {
            done: Mutex::new(None),
            cv: Condvar::new(),
        });
        let used = s.last_use;
        s.runs.insert(
            start,
            Run {
                end,
                slot: slot.clone(),
                used,
                pinned: false,
            },
        );
        let object = self.object.clone();
        let task_slot = slot.clone();
        let started = spawn(async move {
            let r = object.fetch(Some(start..end)).await;
            *task_slot.done.lock().unwrap_or_else(|e| e.into_inner()) = Some(Outcome::of(r));
            task_slot.cv.notify_all();
        });
        if let Err(e) = started {
            *slot.done.lock().unwrap_or_else(|e| e.into_inner()) =
                Some(Outcome::of(Err(Fail::Other(e))));
        }
    }

    fn past_end(&self, at: u64) -> Fail {
        Fail::Unsatisfiable(Error::Remote {
            url: self.object.url().to_string(),
            detail: format!(
                "the object ends at byte {}, before {at}",
                self.object.size().unwrap_or(at)
            ),
        })
    }
}

/// The shards of one remote archive.
pub struct RemoteShards {
    store: Arc<dyn ObjectStore>,
    url: RemoteUrl,
    shards: RwLock<Vec<Option<Arc<RemoteShard>>>>,
    /// Counts reads, to tell the shards read longest ago (whose finished runs go
    /// first when the budget is spent).
    tick: AtomicU64,
    /// Bytes of runs (in flight or waiting) all shards together may hold, and
    /// hold now.
    budget: u64,
    held: AtomicU64,
    /// Signalled when a batch's runs are dropped (room for the next batch).
    room: (Mutex<()>, Condvar),
}

impl std::fmt::Debug for RemoteShards {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteShards")
            .field("url", &self.url.url())
            .finish()
    }
}

/// The runs of a batch announced with `RemoteShards::prefetch`, dropped with it.
pub struct Prefetch {
    shards: Arc<RemoteShards>,
    runs: Vec<(u64, u64, u64)>,
}

impl Drop for Prefetch {
    fn drop(&mut self) {
        for &(n, a, end) in &self.runs {
            let me = self.shards.shard(n);
            let mut st = me.lock();
            if st.runs.get(&a).is_some_and(|r| r.end == end && r.pinned) {
                st.runs.remove(&a);
                self.shards.held.fetch_sub(end - a, Ordering::Relaxed);
            }
        }
        let _g = self.shards.room.0.lock().unwrap_or_else(|e| e.into_inner());
        self.shards.room.1.notify_all();
    }
}

/// The name of shard `n` of the archive `name`.
pub fn shard_name(name: &str, n: u64) -> String {
    format!("{name}-shard-{n:05}")
}

impl RemoteShards {
    pub(crate) fn new(store: Arc<dyn ObjectStore>, url: RemoteUrl) -> RemoteShards {
        RemoteShards {
            store,
            url,
            shards: RwLock::new(Vec::new()),
            tick: AtomicU64::new(0),
            budget: Settings::get().readahead_bytes,
            held: AtomicU64::new(0),
            room: (Mutex::new(()), Condvar::new()),
        }
    }

    /// The URL of shard `n`.
    pub fn url(&self, n: u64) -> String {
        self.url.url_of(&shard_name(&self.url.name, n))
    }

    pub(crate) fn shard(&self, n: u64) -> Arc<RemoteShard> {
        let idx = n as usize;
        if let Some(Some(s)) = self
            .shards
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(idx)
        {
            return s.clone();
        }
        let s = Arc::new(RemoteShard {
            object: Arc::new(Object::new(
                self.store.clone(),
                &self.url,
                &shard_name(&self.url.name, n),
                RequestKind::Shards,
            )),
            stream: Mutex::new(Stream::default()),
        });
        let mut w = self.shards.write().unwrap_or_else(|e| e.into_inner());
        if w.len() <= idx {
            w.resize(idx + 1, None);
        }
        w[idx].get_or_insert(s).clone()
    }

    /// Drop the finished runs of the shard read longest ago, other than `me`
    /// (whose lock the caller holds: others are only tried, never waited for, so
    /// two readers never wait for each other's shard). False when there is none.
    fn release_oldest(&self, me: &Arc<RemoteShard>) -> bool {
        let all: Vec<Arc<RemoteShard>> = self
            .shards
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .flatten()
            .filter(|s| !Arc::ptr_eq(s, me))
            .cloned()
            .collect();
        let mut oldest: Option<(u64, &Arc<RemoteShard>)> = None;
        for sh in &all {
            if let Ok(g) = sh.stream.try_lock() {
                if !g.runs.is_empty() && oldest.is_none_or(|(t, _)| g.last_use < t) {
                    oldest = Some((g.last_use, sh));
                }
            }
        }
        let Some((_, o)) = oldest else { return false };
        let Ok(mut g) = o.stream.try_lock() else {
            return false;
        };
        let freed = g.release();
        self.held.fetch_sub(freed, Ordering::Relaxed);
        freed > 0
    }

    /// Room for `len` more bytes of runs in `me`: finished runs go, used longest
    /// ago first (the runs of shards the readers left, then this shard's own; the
    /// run holding `at` stays). False when the budget is spent by runs in flight.
    fn make_room(&self, me: &Arc<RemoteShard>, s: &mut Stream, at: u64, len: u64) -> bool {
        while self.held.load(Ordering::Relaxed) + len > self.budget {
            if self.release_oldest(me) {
                continue;
            }
            match s.stalest(at) {
                Some((_, start)) => {
                    log::debug!("{}: evict {start}", me.object.url());
                    if let Some(r) = s.runs.remove(&start) {
                        self.held.fetch_sub(r.end - start, Ordering::Relaxed);
                    }
                }
                None => return false,
            }
        }
        true
    }

    /// Start a run of `me` and count it.
    fn start_run(&self, me: &RemoteShard, s: &mut Stream, start: u64, end: u64) {
        log::debug!("{}: run {start}..{end}", me.object.url());
        self.held.fetch_add(end - start, Ordering::Relaxed);
        me.start_run(s, start, end);
    }

    /// Keep [`AHEAD`] runs back to back after the one holding `at` (several
    /// readers may stream through one shard at once, each with its own chain of
    /// runs), growing from [`MIN_RUN`] to [`MAX_RUN`], within the budget and the
    /// object.
    fn top_up(&self, me: &Arc<RemoteShard>, s: &mut Stream, at: u64) {
        let size = me.object.size();
        loop {
            let Some((ahead, next)) = s.chain(at) else {
                return;
            };
            if ahead >= AHEAD || size.is_some_and(|n| next >= n) {
                return;
            }
            let mut len = (MIN_RUN << (ahead + 1).min(8)).min(MAX_RUN);
            // Never over a run already there (another reader's chain).
            if let Some((&other, _)) = s.runs.range(next..).next() {
                len = len.min(other - next);
            }
            if len == 0 || !self.make_room(me, s, at, len) {
                return;
            }
            let end = size.map_or(next + len, |n| (next + len).min(n));
            self.start_run(me, s, next, end);
        }
    }

    /// Read `buf.len()` bytes of shard `n` at `pos`.
    pub(crate) fn read(&self, n: u64, pos: u64, buf: &mut [u8]) -> std::result::Result<(), Fail> {
        let me = self.shard(n);
        let mut done = 0usize;
        while done < buf.len() {
            let at = pos + done as u64;
            let need = (buf.len() - done) as u64;
            let hit = {
                let mut s = me.lock();
                let tick = self.tick.fetch_add(1, Ordering::Relaxed);
                s.last_use = tick;
                match s.find(at, tick) {
                    Some(h) => {
                        // A stream's run: keep its chain going (a batch's runs
                        // are what was announced, nothing more).
                        if !s.is_pinned(h.0) {
                            self.top_up(&me, &mut s, at);
                        }
                        Some(h)
                    }
                    None if s.continues(at) && need < MAX_RUN => {
                        // A stream: fetch from here in runs, never over a run
                        // already fetched or in flight.
                        let len = MIN_RUN.max(need);
                        let mut end = at + len;
                        if let Some((&next, _)) = s.runs.range(at + 1..).next() {
                            end = end.min(next).max(at + 1);
                        }
                        if let Some(size) = me.object.size() {
                            end = end.min(size.max(at + 1));
                        }
                        self.make_room(&me, &mut s, at, end - at);
                        self.start_run(&me, &mut s, at, end);
                        self.top_up(&me, &mut s, at);
                        continue;
                    }
                    None => {
                        s.ended_at(at, at + need);
                        None
                    }
                }
            };
            match hit {
                Some((start, slot)) => {
                    let data = match slot.wait() {
                        Outcome::Data(d) => d,
                        failed => return Err(failed.fail().expect("a failure")),
                    };
                    let from = (at - start) as usize;
                    if from >= data.len() {
                        return Err(me.past_end(at));
                    }
                    let k = (data.len() - from).min(need as usize);
                    buf[done..done + k].copy_from_slice(&data[from..from + k]);
                    done += k;
                    me.lock().ended_at(at, at + k as u64);
                }
                None => {
                    // One request for exactly this read.
                    log::debug!("{}: read {at}..{}", me.object.url(), at + need);
                    let data = me.object.get(Some(at..at + need))?;
                    if (data.len() as u64) < need {
                        return Err(me.past_end(at + data.len() as u64));
                    }
                    buf[done..].copy_from_slice(&data[..need as usize]);
                    done = buf.len();
                }
            }
        }
        Ok(())
    }

    /// Announce that `files` (in address order) are about to be read: their
    /// extents are fetched now, neighbours coalesced into spans of up to
    /// [`MAX_RUN`] bytes, every span in flight at once, and kept until the
    /// returned guard drops. Waits while the read-ahead budget is spent by other
    /// batches (never holding anything while it waits), so memory stays bounded
    /// however many threads announce batches.
    pub(crate) fn prefetch(self: &Arc<Self>, files: &[crate::core::entry::FileInfo]) -> Prefetch {
        let mut spans: Vec<(u64, u64, u64)> = Vec::new();
        for f in files.iter().filter(|f| f.size > 0 && f.size < MAX_RUN) {
            match spans.last_mut() {
                Some((n, a, b))
                    if *n == f.shard
                        && f.offset >= *a
                        && f.offset <= *b + GAP
                        && f.end().max(*b) - *a <= MAX_RUN =>
                {
                    *b = (*b).max(f.end());
                }
                _ => spans.push((f.shard, f.offset, f.end())),
            }
        }
        let total: u64 = spans.iter().map(|(_, a, b)| b - a).sum();
        let mut guard = Prefetch {
            shards: self.clone(),
            runs: Vec::new(),
        };
        if spans.is_empty() {
            return guard;
        }
        // Reserve the whole batch at once: a waiting thread holds nothing.
        {
            let mut g = self.room.0.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                let held = self.held.load(Ordering::Relaxed);
                if held == 0 || held + total <= self.budget {
                    self.held.fetch_add(total, Ordering::Relaxed);
                    break;
                }
                g = self
                    .room
                    .1
                    .wait_timeout(g, std::time::Duration::from_millis(20))
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
                // Finished runs of streams may go to make room.
                drop(g);
                for sh in self.all_shards() {
                    if let Ok(mut st) = sh.stream.try_lock() {
                        let freed = st.release();
                        self.held.fetch_sub(freed, Ordering::Relaxed);
                    }
                }
                g = self.room.0.lock().unwrap_or_else(|e| e.into_inner());
            }
        }
        for (n, a, reserved_end) in spans {
            let reserved = reserved_end - a;
            let me = self.shard(n);
            let mut st = me.lock();
            let b = me
                .object
                .size()
                .map_or(reserved_end, |len| reserved_end.min(len));
            let t = st.last_use;
            if b <= a || st.find(a, t).is_some() {
                // Already there (or past the end: the read reports it).
                self.held.fetch_sub(reserved, Ordering::Relaxed);
                continue;
            }
            // Never over a run already there.
            let end = match st.runs.range(a + 1..).next() {
                Some((&next, _)) => b.min(next),
                None => b,
            };
            self.held.fetch_sub(reserved - (end - a), Ordering::Relaxed);
            log::debug!("{}: batch run {a}..{end}", me.object.url());
            me.start_run(&mut st, a, end);
            if let Some(r) = st.runs.get_mut(&a) {
                r.pinned = true;
            }
            guard.runs.push((n, a, end));
        }
        guard
    }

    fn all_shards(&self) -> Vec<Arc<RemoteShard>> {
        self.shards
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .flatten()
            .cloned()
            .collect()
    }

    /// The bytes of shard `n` in `range`, in one request of their own (for readers
    /// that group files into large spans themselves, like `verify`); fewer at the
    /// end of the object.
    pub(crate) fn fetch(
        &self,
        n: u64,
        range: std::ops::Range<u64>,
    ) -> std::result::Result<Bytes, Fail> {
        self.shard(n).object.get(Some(range))
    }

    /// The length of shard `n` (one small request the first time).
    pub(crate) fn len(&self, n: u64) -> std::result::Result<u64, Fail> {
        self.shard(n).object.len()
    }
}
