//! The ingest pipeline: producers and readers feeding one writer, in order.
//!
//! ```text
//!   producer ──tasks (bounded)──▶ N loaders ──items──▶ reorder ──▶ ArchiveWriter
//!   (enumerates, in order)        (open, read, CRC)               (this thread)
//! ```
//!
//! Every task carries a sequence number. Loaders finish in any order; the writer
//! takes items strictly by sequence number, so the shards and rows come out the
//! same whatever the number of loaders. A sequential source (a tar stream) is its
//! own loader and sends items directly.
//!
//! Memory is bounded by a byte budget ([`Flow`]): a loader reserves the size of the
//! content it is about to read (plus a fixed overhead per item, which also bounds the
//! number of items in flight) before reading, and the writer releases it once the
//! item is written. Out-of-order items can use up the whole budget while the item
//! the writer needs next still waits for budget; so the item whose sequence number
//! is the writer's next one may always go ahead. That item is always held by a
//! loader or already waiting in the reorder buffer (tasks are taken in order), so
//! the pipeline cannot deadlock. Large files travel as a stream of chunks through a
//! small channel of their own, paced by the writer.
//!
//! When the writer stops early (an error, strict mode), it marks the flow aborted
//! and drops its receivers: blocked loaders and the producer wake up and return.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, unbounded, Receiver, Sender};

use super::{Duplicates, Event, IngestOptions, Problem, Summary};
use crate::core::entry::Meta;
use crate::core::error::{Error, Result};
use crate::core::path::printable;
use crate::core::writer::ArchiveWriter;

/// Budget charged for every item on top of its content (paths, bookkeeping).
pub(crate) const ITEM_OVERHEAD: u64 = 512;
/// Size of the chunks of a streamed file.
pub(crate) const CHUNK: usize = 1 << 20;

/// Why an entry was skipped without being an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Skip {
    Symlink,
    Special,
    Existing,
    /// Filtered out or stripped away: not counted.
    Quiet,
}

/// One piece of a streamed file.
pub(crate) enum Chunk {
    Data(Vec<u8>),
    /// The source failed; the file is abandoned and the problem reported.
    Failed(Problem),
}

/// What the writer is asked to do, in sequence order.
pub(crate) enum Item {
    Dir {
        path: String,
        meta: Meta,
    },
    File {
        path: String,
        meta: Meta,
        data: Vec<u8>,
        crc: u32,
    },
    /// A file too large to hold in memory: `size` bytes arrive through `chunks`.
    Stream {
        path: String,
        meta: Meta,
        size: u64,
        chunks: Receiver<Chunk>,
    },
    /// A file whose length is not known in advance: its content is whatever
    /// arrives through `chunks` (a member whose header tells a wrong size).
    OpenStream {
        path: String,
        meta: Meta,
        chunks: Receiver<Chunk>,
    },
    /// A file whose `size` bytes are already in shard `shard` at `offset` (an
    /// archive wrapped around a tar or zip file): only its row is written.
    Extent {
        path: String,
        meta: Meta,
        shard: u64,
        offset: u64,
        size: u64,
        crc: u32,
    },
    /// A file holding a copy of an earlier member's content.
    HardLink {
        path: String,
        target: String,
        meta: Meta,
        /// The member name as the user knows it, for messages.
        shown: String,
    },
    Problem(Problem),
    Skipped(Skip),
    Notice(String),
    /// The input cannot be read further: stop after everything before it.
    Fatal(Error),
}

struct Sent {
    seq: u64,
    item: Item,
    cost: u64,
}

#[derive(Debug, Default)]
struct FlowState {
    used: u64,
    next: u64,
    waiting: usize,
    aborted: bool,
}

/// The byte budget shared by loaders and the writer.
pub(crate) struct Flow {
    budget: u64,
    state: Mutex<FlowState>,
    cv: Condvar,
}

impl Flow {
    fn new(budget: u64) -> Flow {
        Flow {
            budget: budget.max(1),
            state: Mutex::new(FlowState::default()),
            cv: Condvar::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, FlowState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Wait until `bytes` fit in the budget, or `seq` is the item the writer needs
    /// next. False when the run was aborted.
    fn acquire(&self, seq: u64, bytes: u64) -> bool {
        let mut st = self.lock();
        loop {
            if st.aborted {
                return false;
            }
            if seq == st.next || st.used + bytes <= self.budget {
                st.used += bytes;
                return true;
            }
            st.waiting += 1;
            st = self.cv.wait(st).unwrap_or_else(|e| e.into_inner());
            st.waiting -= 1;
        }
    }

    /// Like [`acquire`](Self::acquire), but never waits: false when the bytes do not
    /// fit now (or the run was aborted).
    fn try_acquire(&self, seq: u64, bytes: u64) -> bool {
        let mut st = self.lock();
        if !st.aborted && (seq == st.next || st.used + bytes <= self.budget) {
            st.used += bytes;
            return true;
        }
        false
    }

    fn release(&self, next: u64, bytes: u64) {
        let mut st = self.lock();
        st.used = st.used.saturating_sub(bytes);
        st.next = next;
        if st.waiting > 0 {
            self.cv.notify_all();
        }
    }

    fn abort(&self) {
        self.lock().aborted = true;
        self.cv.notify_all();
    }

    fn aborted(&self) -> bool {
        self.lock().aborted
    }
}

/// Budget reserved for one item.
#[must_use]
pub(crate) struct Ticket(u64);

/// Items are handed to the writer in batches of at most this many…
const BATCH_ITEMS: usize = 64;
/// …or this many bytes of content.
const BATCH_BYTES: u64 = 1 << 20;
/// Tasks go to the readers in batches of at most this many, sent early when the
/// producer is slow (a `find` feeding paths through a pipe).
const TASK_BATCH: usize = 64;
const TASK_BATCH_AGE: Duration = Duration::from_millis(20);

/// Where loaders and sequential producers send their items. Items are collected
/// into batches (one channel message, one wake-up of the writer, per batch instead of
/// per item). A batch is sent when full, when it holds a streamed file (whose chunks
/// the writer waits for), before the outlet waits for budget, and by [`flush`]
/// (after each batch of tasks): so an item the writer needs is never held back while
/// its sender waits.
///
/// [`flush`]: Outlet::flush
pub(crate) struct Outlet<'a> {
    tx: Sender<Vec<Sent>>,
    flow: &'a Flow,
    batch: RefCell<Vec<Sent>>,
    batch_bytes: Cell<u64>,
    gone: Cell<bool>,
}

impl<'a> Outlet<'a> {
    fn new(tx: Sender<Vec<Sent>>, flow: &'a Flow) -> Outlet<'a> {
        Outlet {
            tx,
            flow,
            batch: RefCell::new(Vec::with_capacity(BATCH_ITEMS)),
            batch_bytes: Cell::new(0),
            gone: Cell::new(false),
        }
    }

    /// Reserve budget for item `seq` with `content` bytes; waits (after sending what
    /// is batched). None when the run was aborted.
    pub fn reserve(&self, seq: u64, content: u64) -> Option<Ticket> {
        let cost = content.saturating_add(ITEM_OVERHEAD);
        if self.flow.try_acquire(seq, cost) {
            return Some(Ticket(cost));
        }
        // The batch may hold the item the writer needs next: send it before waiting.
        self.flush();
        self.flow.acquire(seq, cost).then_some(Ticket(cost))
    }

    /// Send item `seq` with the budget reserved for it. False when the writer is gone.
    pub fn send(&self, seq: u64, item: Item, ticket: Ticket) -> bool {
        let stream = matches!(item, Item::Stream { .. } | Item::OpenStream { .. });
        let cost = ticket.0;
        let full = {
            let mut batch = self.batch.borrow_mut();
            batch.push(Sent { seq, item, cost });
            self.batch_bytes.set(self.batch_bytes.get() + cost);
            batch.len() >= BATCH_ITEMS || self.batch_bytes.get() >= BATCH_BYTES
        };
        if stream || full {
            self.flush();
        }
        !self.gone.get()
    }

    /// Reserve the fixed overhead and send an item without content.
    pub fn send_small(&self, seq: u64, item: Item) -> bool {
        match self.reserve(seq, 0) {
            Some(t) => self.send(seq, item, t),
            None => false,
        }
    }

    /// Hand what is batched to the writer. False when the writer is gone.
    pub fn flush(&self) -> bool {
        let batch = std::mem::take(&mut *self.batch.borrow_mut());
        self.batch_bytes.set(0);
        if !batch.is_empty() && self.tx.send(batch).is_err() {
            self.gone.set(true);
        }
        !self.gone.get()
    }

    pub fn aborted(&self) -> bool {
        self.flow.aborted()
    }
}

impl Drop for Outlet<'_> {
    fn drop(&mut self) {
        self.flush();
    }
}

/// Start a named scoped thread (names show in `top -H` and profilers).
pub(crate) fn spawn<'scope, 'env, F>(s: &'scope std::thread::Scope<'scope, 'env>, name: &str, f: F)
where
    F: FnOnce() + Send + 'scope,
{
    std::thread::Builder::new()
        .name(name.to_string())
        .spawn_scoped(s, f)
        .expect("cannot start a thread");
}

/// Run a parallel pipeline: `produce` enumerates tasks on a thread of its own,
/// calling its argument for each one (which returns false when the run is over);
/// `workers` loaders, each made by `make_loader`, turn every task into exactly one
/// item sent through the outlet under the task's sequence number.
pub(crate) fn run_parallel<T, P, M, L>(
    w: &mut ArchiveWriter,
    opts: &IngestOptions,
    sink: &mut dyn FnMut(Event),
    produce: P,
    make_loader: M,
) -> Result<Summary>
where
    T: Send,
    P: FnOnce(&mut dyn FnMut(T) -> bool) + Send,
    M: Fn() -> L + Sync,
    L: FnMut(u64, T, &Outlet),
{
    let flow = Flow::new(opts.buffer_size);
    let workers = opts.workers.max(1);
    std::thread::scope(|s| {
        let (task_tx, task_rx) = bounded::<Vec<(u64, T)>>(1024 / TASK_BATCH);
        let (item_tx, item_rx) = unbounded::<Vec<Sent>>();
        let flow = &flow;
        spawn(s, "bc-producer", move || {
            let mut seq = 0u64;
            let mut batch: Vec<(u64, T)> = Vec::with_capacity(TASK_BATCH);
            let mut started = Instant::now();
            let mut emit = |task: T| -> bool {
                if flow.aborted() {
                    return false;
                }
                if batch.is_empty() {
                    started = Instant::now();
                }
                batch.push((seq, task));
                seq += 1;
                if batch.len() >= TASK_BATCH || started.elapsed() >= TASK_BATCH_AGE {
                    let full = std::mem::replace(&mut batch, Vec::with_capacity(TASK_BATCH));
                    return task_tx.send(full).is_ok();
                }
                true
            };
            produce(&mut emit);
            if !batch.is_empty() {
                let _ = task_tx.send(batch);
            }
        });
        for _ in 0..workers {
            let task_rx = task_rx.clone();
            let item_tx = item_tx.clone();
            let make_loader = &make_loader;
            spawn(s, "bc-reader", move || {
                let outlet = Outlet::new(item_tx, flow);
                let mut load = make_loader();
                'tasks: while let Ok(batch) = task_rx.recv() {
                    for (seq, task) in batch {
                        if outlet.aborted() {
                            break 'tasks;
                        }
                        load(seq, task, &outlet);
                    }
                    // Nothing stays batched while this reader waits for tasks.
                    outlet.flush();
                }
            });
        }
        drop(task_rx);
        drop(item_tx);
        consume(w, item_rx, flow, opts, sink)
    })
}

/// Run a sequential pipeline: `produce` runs on a thread of its own and sends items
/// with consecutive sequence numbers from 0 through the outlet.
pub(crate) fn run_sequential<P>(
    w: &mut ArchiveWriter,
    opts: &IngestOptions,
    sink: &mut dyn FnMut(Event),
    produce: P,
) -> Result<Summary>
where
    P: FnOnce(&Outlet) + Send,
{
    let flow = Flow::new(opts.buffer_size);
    std::thread::scope(|s| {
        let (item_tx, item_rx) = unbounded::<Vec<Sent>>();
        let flow = &flow;
        spawn(s, "bc-producer", move || {
            let outlet = Outlet::new(item_tx, flow);
            produce(&outlet);
        });
        consume(w, item_rx, flow, opts, sink)
    })
}

/// The writer side: take items in sequence order and apply them.
fn consume(
    w: &mut ArchiveWriter,
    rx: Receiver<Vec<Sent>>,
    flow: &Flow,
    opts: &IngestOptions,
    sink: &mut dyn FnMut(Event),
) -> Result<Summary> {
    let start = Instant::now();
    let before = w.stats();
    // Files this import adds start at or after this position: a later entry of
    // the same path is a duplicate (anything before was in the archive already).
    let from = w.position();
    // A caller (a merge) may have asked for more: files of its earlier inputs.
    let outer = w.replacing_since();
    if opts.duplicates == Duplicates::Last {
        w.replace_since(Some(outer.map_or(from, |o| o.min(from))));
    }
    let mut apply = Apply {
        summary: Summary::default(),
        opts,
        from,
        progress: (0, 0),
        last_progress: start,
    };
    // Items that arrived ahead of their turn; slot i holds item `next + i`.
    let mut pending: VecDeque<Option<Sent>> = VecDeque::new();
    let mut next = 0u64;
    // Budget of written items, given back in bulk: before the writer waits for
    // anything (so that the item it waits for can always get budget) and every
    // `BATCH_ITEMS` items.
    let mut unreleased = (0u64, 0usize);
    let release = |next: u64, unreleased: &mut (u64, usize)| {
        flow.release(next, unreleased.0);
        *unreleased = (0, 0);
    };
    let result = loop {
        let sent = match pending.front_mut().and_then(Option::take) {
            Some(s) => {
                pending.pop_front();
                s
            }
            None => {
                let batch = match rx.try_recv() {
                    Ok(b) => Ok(b),
                    Err(_) => {
                        release(next, &mut unreleased);
                        rx.recv()
                    }
                };
                let Ok(batch) = batch else {
                    break Ok(());
                };
                for s in batch {
                    let i = (s.seq - next) as usize;
                    if pending.len() <= i {
                        pending.resize_with(i + 1, || None);
                    }
                    pending[i] = Some(s);
                }
                continue;
            }
        };
        if matches!(sent.item, Item::Stream { .. } | Item::OpenStream { .. }) {
            // The writer is about to wait for the chunks of this file.
            release(next, &mut unreleased);
        }
        let r = apply.item(w, sent.item, sink);
        next += 1;
        unreleased.0 += sent.cost;
        unreleased.1 += 1;
        if unreleased.1 >= BATCH_ITEMS {
            release(next, &mut unreleased);
        }
        if let Err(e) = r {
            break Err(e);
        }
    };
    release(next, &mut unreleased);
    w.replace_since(outer);
    apply.flush_progress(sink, true);
    let stats = w.stats();
    let mut summary = apply.summary;
    summary.files = stats.files.saturating_sub(before.files);
    summary.bytes = stats.bytes.saturating_sub(before.bytes);
    summary.dirs = stats.dirs.saturating_sub(before.dirs);
    summary.elapsed = start.elapsed();
    match result {
        Ok(()) if pending.iter().all(Option::is_none) => Ok(summary),
        Ok(()) => Err(Error::InvalidOperation(format!(
            "ingest pipeline lost item {next} ({} items left unwritten)",
            pending.iter().flatten().count()
        ))),
        Err(e) => {
            flow.abort();
            drop(pending);
            drop(rx);
            // Everything before the failing entry stays: make it durable now.
            if opts.commit_on_error && matches!(e, Error::Input { .. }) {
                w.commit()?;
            }
            Err(e)
        }
    }
}

struct Apply<'a> {
    summary: Summary,
    opts: &'a IngestOptions,
    /// Where this import's files start (see [`consume`]).
    from: (u64, u64),
    progress: (u64, u64),
    last_progress: Instant,
}

impl Apply<'_> {
    fn problem(&mut self, p: Problem, sink: &mut dyn FnMut(Event)) -> Result<()> {
        if self.opts.strict {
            // The run stops here: the entry is not "skipped".
            let detail = p.detail.strip_suffix("; skipped").unwrap_or(&p.detail);
            return Err(Error::Input {
                path: p.path.clone(),
                detail: detail.to_string(),
            });
        }
        self.summary.problems += 1;
        sink(Event::Problem(&p));
        Ok(())
    }

    /// Report the files a later entry of their path replaced.
    fn replaced(
        &mut self,
        w: &mut ArchiveWriter,
        shown: &str,
        sink: &mut dyn FnMut(Event),
    ) -> Result<()> {
        for old in w.take_replaced() {
            self.summary.replaced += 1;
            self.summary.replaced_bytes += old.size;
            let detail = format!(
                "duplicate name: replaces an earlier copy ({} byte{}), as extracting the \
                 archive would",
                old.size,
                if old.size == 1 { "" } else { "s" }
            );
            if self.opts.duplicates_chosen {
                sink(Event::Notice(&format!("{}: {detail}", printable(shown))));
            } else {
                let detail = format!(
                    "{detail} (--duplicates last accepts this, --duplicates first keeps \
                     the first copy)"
                );
                self.problem(Problem::new(shown, detail), sink)?;
                self.summary.replaced_reported += 1;
            }
        }
        Ok(())
    }

    /// Was the file at `path` added by this import (a duplicate entry), rather than
    /// in the archive before it?
    fn added_here(&self, w: &ArchiveWriter, path: &str) -> bool {
        matches!(w.index().file(path), Ok(Some(fi)) if (fi.shard, fi.offset) >= self.from)
    }

    /// A writer error about one entry becomes a problem; anything else stops the run.
    fn writer_error(
        &mut self,
        w: &ArchiveWriter,
        shown: &str,
        is_dir: bool,
        e: Error,
        sink: &mut dyn FnMut(Event),
    ) -> Result<()> {
        if !e.is_per_member() {
            return Err(e);
        }
        if let Error::FileExists(p) = &e {
            // A file where this import stored a file already (a directory there is a
            // conflict of kinds, reported as such below).
            if !is_dir && self.added_here(w, p) {
                return self.duplicate(shown, sink);
            }
        }
        if self.opts.skip_existing && matches!(e, Error::FileExists(_)) {
            // Added earlier in a batch not yet committed, which the producer's
            // check of the committed index cannot see.
            self.summary.existing += 1;
            return Ok(());
        }
        let detail = match &e {
            Error::FileExists(_) => "already in the archive (duplicate path); skipped".into(),
            Error::IsADirectory(_) => {
                "a directory of that name is already in the archive; skipped".into()
            }
            Error::NotADirectory(_) => "a parent is a file in the archive; skipped".into(),
            Error::InvalidPath { reason, .. } => format!("{reason}; skipped"),
            Error::NotFound(p) => {
                format!("hard link to {p:?}, which is not in the archive; skipped")
            }
            other => format!("{other}; skipped"),
        };
        self.problem(Problem::new(shown, detail), sink)
    }

    /// A later entry of a path this import stored already (not replaced).
    fn duplicate(&mut self, shown: &str, sink: &mut dyn FnMut(Event)) -> Result<()> {
        match self.opts.duplicates {
            Duplicates::Error => Err(Problem::new(
                shown,
                "duplicate name: an earlier entry has it (--duplicates first or last \
                 chooses a copy)",
            )
            .into_error()),
            _ if self.opts.duplicates_chosen => {
                self.summary.duplicates_skipped += 1;
                let note = format!(
                    "{}: duplicate name: an earlier copy is kept, this one is skipped",
                    printable(shown)
                );
                sink(Event::Notice(&note));
                Ok(())
            }
            _ => self.problem(
                Problem::new(shown, "already in the archive (duplicate path); skipped"),
                sink,
            ),
        }
    }

    fn added(&mut self, bytes: u64, sink: &mut dyn FnMut(Event)) {
        self.progress.0 += 1;
        self.progress.1 += bytes;
        if self.progress.0.is_multiple_of(64) || bytes > (1 << 20) {
            self.flush_progress(sink, false);
        }
    }

    fn flush_progress(&mut self, sink: &mut dyn FnMut(Event), force: bool) {
        if self.progress == (0, 0) {
            return;
        }
        let now = Instant::now();
        if force || now.duration_since(self.last_progress) >= Duration::from_millis(100) {
            sink(Event::Progress {
                files: self.progress.0,
                bytes: self.progress.1,
            });
            self.progress = (0, 0);
            self.last_progress = now;
        }
    }

    fn item(
        &mut self,
        w: &mut ArchiveWriter,
        item: Item,
        sink: &mut dyn FnMut(Event),
    ) -> Result<()> {
        match item {
            Item::Dir { path, meta } => {
                if let Err(e) = w.add_dir(&path, meta) {
                    return self.writer_error(w, &path, true, e, sink);
                }
            }
            Item::File {
                path,
                meta,
                data,
                crc,
            } => {
                let size = data.len() as u64;
                match w.add_file_owned(&path, meta, data, Some(crc)) {
                    Ok(_) => {
                        self.added(size, sink);
                        self.replaced(w, &path, sink)?;
                    }
                    Err(e) => return self.writer_error(w, &path, false, e, sink),
                }
            }
            Item::Stream {
                path,
                meta,
                size,
                chunks,
            } => {
                let mut pf = match w.begin_file(&path, meta, size) {
                    Ok(pf) => pf,
                    Err(e) => return self.writer_error(w, &path, false, e, sink),
                };
                for chunk in chunks.iter() {
                    match chunk {
                        Chunk::Data(d) => {
                            if let Err(e) = w.write_chunk(&mut pf, &d) {
                                w.abort_file(pf)?;
                                return self.writer_error(w, &path, false, e, sink);
                            }
                            self.progress.1 += d.len() as u64;
                            self.flush_progress(sink, false);
                        }
                        Chunk::Failed(p) => {
                            w.abort_file(pf)?;
                            return self.problem(p, sink);
                        }
                    }
                }
                match w.finish_file(pf) {
                    Ok(_) => {
                        self.added(0, sink);
                        self.replaced(w, &path, sink)?;
                    }
                    Err(e) => return self.writer_error(w, &path, false, e, sink),
                }
            }
            Item::OpenStream { path, meta, chunks } => {
                let mut pf = match w.begin_file_open_ended(&path, meta) {
                    Ok(pf) => pf,
                    Err(e) => return self.writer_error(w, &path, false, e, sink),
                };
                for chunk in chunks.iter() {
                    match chunk {
                        Chunk::Data(d) => {
                            if let Err(e) = w.write_chunk(&mut pf, &d) {
                                w.abort_file(pf)?;
                                return self.writer_error(w, &path, false, e, sink);
                            }
                            self.progress.1 += d.len() as u64;
                            self.flush_progress(sink, false);
                        }
                        Chunk::Failed(p) => {
                            w.abort_file(pf)?;
                            return self.problem(p, sink);
                        }
                    }
                }
                match w.finish_file(pf) {
                    Ok(_) => {
                        self.added(0, sink);
                        self.replaced(w, &path, sink)?;
                    }
                    Err(e) => return self.writer_error(w, &path, false, e, sink),
                }
            }
            Item::Extent {
                path,
                meta,
                shard,
                offset,
                size,
                crc,
            } => match w.add_extent(&path, meta, (shard, offset, size), Some(crc)) {
                Ok(_) => {
                    self.added(size, sink);
                    self.replaced(w, &path, sink)?;
                }
                Err(e) => return self.writer_error(w, &path, false, e, sink),
            },
            Item::HardLink {
                path,
                target,
                meta,
                shown,
            } => match w.copy_file(&target, &path, meta) {
                Ok(fi) => {
                    self.summary.hardlinks += 1;
                    self.added(fi.size, sink);
                    self.replaced(w, &shown, sink)?;
                }
                Err(e) => return self.writer_error(w, &shown, false, e, sink),
            },
            Item::Problem(p) => return self.problem(p, sink),
            Item::Skipped(kind) => match kind {
                Skip::Symlink => self.summary.symlinks += 1,
                Skip::Special => self.summary.special += 1,
                Skip::Existing => self.summary.existing += 1,
                Skip::Quiet => {}
            },
            Item::Notice(n) => sink(Event::Notice(&n)),
            Item::Fatal(e) => return Err(e),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn next_in_order_item_always_gets_budget() {
        let flow = Arc::new(Flow::new(100));
        // Item 5 takes the whole budget; item 0 (the writer's next) still proceeds.
        assert!(flow.acquire(5, 100));
        assert!(flow.acquire(0, 50));
        // Item 3 must wait until budget is released.
        let f2 = flow.clone();
        let h = std::thread::spawn(move || f2.acquire(3, 60));
        std::thread::sleep(Duration::from_millis(20));
        assert!(!h.is_finished());
        flow.release(1, 50);
        flow.release(2, 100);
        assert!(h.join().unwrap());
    }

    #[test]
    fn abort_wakes_waiters() {
        let flow = Arc::new(Flow::new(10));
        assert!(flow.acquire(0, 10));
        let f2 = flow.clone();
        let h = std::thread::spawn(move || f2.acquire(7, 10));
        std::thread::sleep(Duration::from_millis(20));
        flow.abort();
        assert!(!h.join().unwrap());
    }
}
