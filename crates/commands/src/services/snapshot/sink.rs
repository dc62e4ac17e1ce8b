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
//!   the walk waits for half of it to drain before taking a lock; waiters
//!   are woken when the queue falls below the mark they wait on. After an
//!   abort or a write error nothing waits and pushes are dropped.
//! * The writer sleeps only on an empty queue and is woken once
//!   [`WAKE_BYTES`] are queued, or when the queue closes or the save stops.

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
/// The writer, once it has emptied the queue, sleeps until this many bytes
/// are queued (or the queue closes): woken for every bucket's few hundred
/// bytes, it ping-ponged with the walk and preempted the worker that had
/// just queued a bucket, two context switches per bucket on the worker's
/// core (docs/BENCHMARKS.md, "BGSAVE's writer woken per bucket").
pub const WAKE_BYTES: u64 = 256 << 10;
const _: () = assert!(WAKE_BYTES < MAX_QUEUED / 2);

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
        if q.bytes >= WAKE_BYTES {
            self.data.notify_one();
        }
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
    /// true) or the save is aborted or `out` fails (returns false). It
    /// sleeps only on an empty queue, and pushes wake it once
    /// [`WAKE_BYTES`] are queued: a push that fills the queue
    /// (`MAX_QUEUED` > `WAKE_BYTES`) always finds it awake or wakes it, and
    /// `close`, `abort` and `fail` wake it whatever is queued.
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
            let freed = {
                let mut q = self.queue.lock();
                let before = q.bytes;
                // (A failure raised meanwhile by the walk emptied the
                // queue and its count.)
                q.bytes = q.bytes.saturating_sub(piece.bytes.len() as u64);
                // Producers wait for the queue to fall below one of two
                // marks (`push`: MAX_QUEUED, `wait_ready`: half of it);
                // they are woken when it crosses one, not for every piece.
                [MAX_QUEUED, MAX_QUEUED / 2]
                    .iter()
                    .any(|&m| before >= m && q.bytes < m)
            };
            if freed {
                self.space.notify_all();
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn sink() -> Arc<RdbSink> {
        let ks = Arc::new(Keyspace::new(store::keyspace::Config::default()));
        Arc::new(RdbSink::new(WriteOptions::default(), MetaMode::None, ks, 0))
    }

    /// What the writer wrote: (database, bytes) per piece.
    type Written = Arc<Mutex<Vec<(u32, Vec<u8>)>>>;

    /// Runs the writer on its own thread, collecting what it writes
    /// (`delay` per piece stands for a slow disk).
    fn writer(s: &Arc<RdbSink>, delay: Duration) -> (Written, std::thread::JoinHandle<bool>) {
        let got = Arc::new(Mutex::new(Vec::new()));
        let (s, g) = (s.clone(), got.clone());
        let h = std::thread::spawn(move || {
            s.run_writer(|db, b| {
                std::thread::sleep(delay);
                g.lock().push((db, b.to_vec()));
                Ok(())
            })
        });
        (got, h)
    }

    fn piece(i: usize, len: usize) -> Vec<u8> {
        let mut v = vec![(i % 251) as u8; len];
        v[..8].copy_from_slice(&(i as u64).to_le_bytes());
        v
    }

    /// Less than WAKE_BYTES queued: the writer may sleep through the
    /// pushes, and closing the queue still gets every piece written, in
    /// order.
    #[test]
    fn a_small_save_is_written_whole_at_close() {
        let s = sink();
        let (got, h) = writer(&s, Duration::ZERO);
        let want: Vec<_> = (0..100).map(|i| ((i % 3) as u32, piece(i, 100))).collect();
        for (db, b) in &want {
            s.push(*db, b.clone());
        }
        s.close();
        assert!(h.join().unwrap());
        assert_eq!(*got.lock(), want);
    }

    /// Once WAKE_BYTES are queued the writer runs without waiting for the
    /// close (a save's data does not pile up until the walk ends).
    #[test]
    fn the_writer_wakes_once_enough_is_queued() {
        let s = sink();
        let (got, h) = writer(&s, Duration::ZERO);
        let n = (WAKE_BYTES as usize).div_ceil(4096);
        for i in 0..n {
            s.push(0, piece(i, 4096));
        }
        let until = Instant::now() + Duration::from_secs(20);
        while got.lock().len() < n {
            assert!(Instant::now() < until, "the writer did not wake");
            std::thread::sleep(Duration::from_millis(1));
        }
        s.close();
        assert!(h.join().unwrap());
    }

    /// More than MAX_QUEUED pushed against a slow writer: producers wait
    /// for room and are woken as it frees up; nothing is lost or reordered.
    #[test]
    fn back_pressure_wakes_the_producers() {
        let s = sink();
        let (got, h) = writer(&s, Duration::from_micros(200));
        let count = (MAX_QUEUED as usize / PIECE) * 2 + 3;
        let producer = {
            let s = s.clone();
            std::thread::spawn(move || {
                for i in 0..count {
                    let _order = s.order.lock();
                    s.push(0, piece(i, PIECE));
                    drop(_order);
                    if i % 4 == 0 {
                        s.wait_ready();
                    }
                }
            })
        };
        producer.join().unwrap();
        s.close();
        assert!(h.join().unwrap());
        let got = got.lock();
        assert_eq!(got.len(), count);
        assert!(got
            .iter()
            .enumerate()
            .all(|(i, (_, b))| b[..8] == (i as u64).to_le_bytes()));
        assert!(s.peak_bytes() <= MAX_QUEUED + PIECE as u64);
    }
}
