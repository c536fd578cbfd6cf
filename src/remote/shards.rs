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

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, RwLock};

use bytes::Bytes;
use object_store::ObjectStore;

use super::client::{spawn, Fail, Object};
use super::config::Settings;
use super::location::RemoteUrl;
use super::stats::Kind;
use crate::error::Error;

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
/// Runs that end this far behind the reader are dropped.
pub const BEHIND: u64 = 8 << 20;

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
    start: u64,
    end: u64,
    slot: Arc<Slot>,
}

/// Where recent reads ended, with how many reads in a row led there: a read
/// starting at (or a little after) one of these continues it, even when several
/// threads read neighbouring files at once.
const RECENT: usize = 16;

#[derive(Default)]
struct Stream {
    runs: VecDeque<Run>,
    recent: VecDeque<(u64, u32)>,
    /// The size of the next run.
    window: u64,
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

    /// Does a read at `at` continue a stream (inside the runs fetched, or after a
    /// streak of reads that continued one another)?
    fn continues(&self, at: u64) -> bool {
        if self.streak_at(at) >= STREAK {
            return true;
        }
        match (self.runs.front(), self.runs.back()) {
            (Some(a), Some(b)) => at >= a.start && at <= b.end + GAP,
            _ => false,
        }
    }

    /// Drop finished runs that end well behind `at`.
    fn drop_behind(&mut self, at: u64) {
        while let Some(r) = self.runs.front() {
            if r.end + BEHIND <= at && r.slot.is_done() {
                self.runs.pop_front();
            } else {
                break;
            }
        }
    }

    /// Drop every finished run (the readers moved to another shard).
    fn release(&mut self) {
        self.runs.retain(|r| !r.slot.is_done());
    }
}

/// One shard object and its read-ahead state.
pub(crate) struct RemoteShard {
    object: Arc<Object>,
    stream: Mutex<Stream>,
    budget: u64,
}

impl RemoteShard {
    fn lock(&self) -> std::sync::MutexGuard<'_, Stream> {
        self.stream.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn held(s: &Stream) -> u64 {
        s.runs.iter().map(|r| r.end - r.start).sum()
    }

    /// Start fetching `[start, end)` as a run.
    fn start_run(&self, s: &mut Stream, start: u64, end: u64) {
        let slot = Arc::new(Slot {
            done: Mutex::new(None),
            cv: Condvar::new(),
        });
        s.runs.push_back(Run {
            start,
            end,
            slot: slot.clone(),
        });
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

    /// Keep [`AHEAD`] runs beyond `at`, within the budget and the object.
    fn top_up(&self, s: &mut Stream, at: u64) {
        let size = self.object.size();
        loop {
            let ahead = s.runs.iter().filter(|r| r.start > at).count();
            if ahead >= AHEAD {
                return;
            }
            let Some(next) = s.runs.back().map(|r| r.end) else {
                return;
            };
            if size.is_some_and(|n| next >= n) {
                return;
            }
            let len = s.window.clamp(MIN_RUN, MAX_RUN);
            // Drop runs already read past, oldest first, to make room.
            while Self::held(s) + len > self.budget {
                match s.runs.front() {
                    Some(r) if r.end <= at && r.slot.is_done() => {
                        s.runs.pop_front();
                    }
                    _ => return,
                }
            }
            let end = size.map_or(next + len, |n| (next + len).min(n));
            self.start_run(s, next, end);
            s.window = (len * 2).min(MAX_RUN);
        }
    }

    /// Read `buf.len()` bytes at `pos`.
    pub(crate) fn read(&self, pos: u64, buf: &mut [u8]) -> std::result::Result<(), Fail> {
        let mut done = 0usize;
        while done < buf.len() {
            let at = pos + done as u64;
            let need = (buf.len() - done) as u64;
            let hit = {
                let mut s = self.lock();
                let hit = s
                    .runs
                    .iter()
                    .find(|r| r.start <= at && at < r.end)
                    .map(|r| (r.start, r.slot.clone()));
                match hit {
                    Some(h) => {
                        s.drop_behind(at);
                        self.top_up(&mut s, at);
                        Some(h)
                    }
                    None => {
                        if s.continues(at) && need < MAX_RUN {
                            // A stream: fetch from here in runs.
                            s.runs.retain(|r| !r.slot.is_done() || r.end > at);
                            let len = s.window.clamp(MIN_RUN, MAX_RUN).max(need);
                            let end = match self.object.size() {
                                Some(n) => (at + len).min(n.max(at + need)),
                                None => at + len,
                            };
                            self.start_run(&mut s, at, end);
                            s.window = (len * 2).min(MAX_RUN);
                            self.top_up(&mut s, at);
                            continue;
                        }
                        s.window = MIN_RUN;
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
                        return Err(self.past_end(at));
                    }
                    let n = (data.len() - from).min(need as usize);
                    buf[done..done + n].copy_from_slice(&data[from..from + n]);
                    done += n;
                    self.lock().ended_at(at, at + n as u64);
                }
                None => {
                    // One request for exactly this read.
                    let data = self.object.get(Some(at..at + need))?;
                    if (data.len() as u64) < need {
                        return Err(self.past_end(at + data.len() as u64));
                    }
                    buf[done..].copy_from_slice(&data[..need as usize]);
                    done = buf.len();
                }
            }
        }
        Ok(())
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
    /// The shard read last: when readers move on, the runs of the one they left
    /// are dropped (memory stays bounded however many shards a reader goes through).
    last: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for RemoteShards {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteShards")
            .field("url", &self.url.url())
            .finish()
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
            last: std::sync::atomic::AtomicU64::new(u64::MAX),
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
                Kind::Shards,
            )),
            stream: Mutex::new(Stream::default()),
            budget: Settings::get().readahead_bytes,
        });
        let mut w = self.shards.write().unwrap_or_else(|e| e.into_inner());
        if w.len() <= idx {
            w.resize(idx + 1, None);
        }
        w[idx].get_or_insert(s).clone()
    }

    /// Read `buf.len()` bytes of shard `n` at `pos`.
    pub(crate) fn read(&self, n: u64, pos: u64, buf: &mut [u8]) -> std::result::Result<(), Fail> {
        let prev = self.last.swap(n, std::sync::atomic::Ordering::Relaxed);
        if prev != n && prev != u64::MAX {
            let old = self
                .shards
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .get(prev as usize)
                .cloned()
                .flatten();
            if let Some(old) = old {
                old.lock().release();
            }
        }
        self.shard(n).read(pos, buf)
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
