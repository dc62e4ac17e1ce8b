//! The background save's sink: entries handed over by the keyspace's walk
//! and write hooks (`store::keyspace::snapshot`) are encoded as RDB records
//! on the thread that meets them, queued in order, and written to the file
//! by one writer thread ([`RdbSink::run_writer`]).
//!
//! Invariants:
//! * Records reach the file in queue order, and the pieces of one batch
//!   (a bucket or a few, possibly one huge value cut into [`PIECE`]s) are
//!   consecutive: every push happens under the `order` lock, which a batch
//!   keeps from its first piece to its last.
//! * Each queued piece names its database (the index at the cut); the
//!   writer emits `SELECTDB` (and, the first time, `RESIZEDB`) whenever
//!   the database changes between pieces, never inside a batch.
//! * Back-pressure: a push waits while [`MAX_QUEUED`] bytes are queued, so
//!   the save holds at most that much plus one piece per producing thread;
//!   the walk waits for half of it to drain before taking a lock. After an
//!   abort or a write error nothing waits and pushes are dropped.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};

use parking_lot::{Condvar, Mutex};
use rdb::{EntryMeta, WriteOptions};
use store::keyspace::snapshot::{Snapshot, SnapshotSink};
use store::keyspace::Keyspace;
use store::Entry;

use crate::kernel::persistence::SaveControl;

/// Most bytes queued for the writer before producers wait.
pub const MAX_QUEUED: u64 = 16 << 20;
/// A batch is pushed in pieces of at most about this many bytes.
pub const PIECE: usize = 1 << 20;

/// Which eviction metadata the records carry (Redis writes `IDLE` under
/// LRU policies and `FREQ` under LFU ones, nothing otherwise).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetaMode {
    None,
    Idle,
    Freq,
}

struct Piece {
    db: u32,
    bytes: Vec<u8>,
}

#[derive(Default)]
struct Queue {
    pieces: VecDeque<Piece>,
    bytes: u64,
    /// The walk is over: drain and finish the file.
    closed: bool,
}

/// Encodes entries and carries them to the writer thread.
pub struct RdbSink {
    opts: WriteOptions,
    meta: MetaMode,
    /// For `IDLE`: the keyspace's LRU clock.
    keyspace: Arc<Keyspace>,
    /// Unix ms used for `IDLE` (the cut).
    now_ms: u64,
    queue: Mutex<Queue>,
    /// Signalled when bytes leave the queue (or on abort/failure).
    space: Condvar,
    /// Signalled when a piece arrives or the queue closes.
    data: Condvar,
    order: Mutex<()>,
    aborted: AtomicBool,
    failed: AtomicBool,
    peak: AtomicU64,
    snap: OnceLock<Arc<Snapshot>>,
}

impl RdbSink {
    pub fn new(
        opts: WriteOptions,
        meta: MetaMode,
        keyspace: Arc<Keyspace>,
        now_ms: u64,
    ) -> RdbSink {
        RdbSink {
            opts,
            meta,
            keyspace,
            now_ms,
            queue: Mutex::new(Queue::default()),
            space: Condvar::new(),
            data: Condvar::new(),
            order: Mutex::new(()),
            aborted: AtomicBool::new(false),
            failed: AtomicBool::new(false),
            peak: AtomicU64::new(0),
            snap: OnceLock::new(),
        }
    }

    /// Ties the sink to its snapshot (for the progress figures).
    pub fn set_snapshot(&self, s: Arc<Snapshot>) {
        let _ = self.snap.set(s);
    }

    fn stopped(&self) -> bool {
        self.aborted.load(Relaxed) || self.failed.load(Relaxed)
    }

    /// Queues one piece, waiting for room (caller holds `order`).
    fn push(&self, db: u32, bytes: Vec<u8>) {
        let mut q = self.queue.lock();
        while q.bytes >= MAX_QUEUED && !self.stopped() {
            self.space.wait(&mut q);
        }
        if self.stopped() {
            return;
        }
        q.bytes += bytes.len() as u64;
        self.peak.fetch_max(q.bytes, Relaxed);
        q.pieces.push_back(Piece { db, bytes });
        self.data.notify_one();
    }

    /// The walk is over (successfully or not): the writer drains what is
    /// queued and finishes the file, unless the save was aborted.
    pub fn close(&self) {
        self.queue.lock().closed = true;
        self.data.notify_all();
    }

    /// Marks the save failed before the first piece (the file could not be
    /// created): producers stop waiting, the walk stops.
    pub fn fail_with(&self, _why: &str) {
        self.fail();
    }

    /// Marks the save failed (disk error): producers stop waiting.
    fn fail(&self) {
        self.failed.store(true, Relaxed);
        let mut q = self.queue.lock();
        q.pieces.clear();
        q.bytes = 0;
        drop(q);
        self.space.notify_all();
        self.data.notify_all();
    }

    pub fn was_aborted(&self) -> bool {
        self.aborted.load(Relaxed)
    }

    /// The writer thread's loop: takes pieces in order and hands them to
    /// `out` (`(db, bytes)`), until the queue is closed and empty (returns
    /// true) or the save is aborted or `out` fails (returns false).
    pub fn run_writer(&self, mut out: impl FnMut(u32, &[u8]) -> std::io::Result<()>) -> bool {
        loop {
            let piece = {
                let mut q = self.queue.lock();
                loop {
                    if self.stopped() {
                        return false;
                    }
                    if let Some(p) = q.pieces.pop_front() {
                        break p;
                    }
                    if q.closed {
                        return true;
                    }
                    self.data.wait(&mut q);
                }
            };
            let r = out(piece.db, &piece.bytes);
            {
                let mut q = self.queue.lock();
                q.bytes -= piece.bytes.len() as u64;
            }
            self.space.notify_all();
            if let Err(e) = r {
                crate::base::log::log(
                    crate::base::log::LogLevel::Warning,
                    &format!("Write error saving DB on disk: {e}"),
                );
                self.fail();
                return false;
            }
        }
    }

    fn meta_of(&self, e: &Entry) -> EntryMeta {
        let b = e.value().evict_byte();
        EntryMeta {
            expire_ms: e.expire_at().map(|t| t as i64),
            idle_secs: (self.meta == MetaMode::Idle)
                .then(|| self.keyspace.idle_ms(b, self.now_ms) / 1000),
            freq: (self.meta == MetaMode::Freq).then_some(b),
        }
    }
}

/// Encodes into a local buffer and pushes it in pieces.
struct Batch<'a> {
    sink: &'a RdbSink,
    db: u32,
    buf: Vec<u8>,
    order: Option<parking_lot::MutexGuard<'a, ()>>,
}

impl Batch<'_> {
    fn flush(&mut self) {
        if self.buf.is_empty() {
            return;
        }
        if self.order.is_none() {
            self.order = Some(self.sink.order.lock());
        }
        let bytes = std::mem::replace(&mut self.buf, Vec::with_capacity(PIECE.min(64 << 10)));
        self.sink.push(self.db, bytes);
    }
}

impl rdb::Sink for Batch<'_> {
    #[inline]
    fn put(&mut self, b: &[u8]) -> std::io::Result<()> {
        self.buf.extend_from_slice(b);
        if self.buf.len() >= PIECE {
            // A huge value: push what is encoded so far (in order) and go
            // on; the disk writer's pace holds this thread back.
            self.flush();
        }
        Ok(())
    }
}

impl SnapshotSink for RdbSink {
    fn write(&self, db: u32, entries: &[&Entry]) {
        if self.stopped() {
            return;
        }
        let mut batch = Batch {
            sink: self,
            db,
            buf: Vec::with_capacity(4096),
            order: None,
        };
        let mut scratch = Vec::new();
        for e in entries {
            let meta = self.meta_of(e);
            // Writing to memory cannot fail.
            let _ = rdb::write_entry(
                &mut batch,
                &e.key(),
                e.value(),
                meta,
                &self.opts,
                &mut scratch,
            );
        }
        batch.flush();
    }

    fn wait_ready(&self) {
        let mut q = self.queue.lock();
        while q.bytes >= MAX_QUEUED / 2 && !self.stopped() {
            self.space.wait(&mut q);
        }
    }

    fn failed(&self) -> bool {
        self.failed.load(Relaxed)
    }
}

impl SaveControl for RdbSink {
    fn abort(&self) {
        self.aborted.store(true, Relaxed);
        if let Some(s) = self.snap.get() {
            s.abort();
        }
        self.space.notify_all();
        self.data.notify_all();
    }

    fn aborted(&self) -> bool {
        self.aborted.load(Relaxed)
    }

    fn held_bytes(&self) -> u64 {
        self.queue.lock().bytes
    }

    fn peak_bytes(&self) -> u64 {
        self.peak.load(Relaxed)
    }

    fn keys_done(&self) -> u64 {
        self.snap.get().map_or(0, |s| s.keys_written())
    }

    fn keys_total(&self) -> u64 {
        self.snap.get().map_or(0, |s| s.keys_total())
    }
}
