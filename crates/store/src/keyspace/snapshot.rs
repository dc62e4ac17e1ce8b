//! Forkless point-in-time snapshots of the whole keyspace (BGSAVE).
//!
//! # The cut
//!
//! [`Keyspace::begin_snapshot`] takes every partition lock in ascending
//! order (as EXEC holds them), so no command is half-done, and then, for
//! each partition, marks every database that exists at that moment as part
//! of the snapshot ([`DbSnap`]: its index at the cut, a walk cursor) and
//! sets its table's restructure barrier to the snapshot's version `V` (a
//! keyspace-wide counter, one step per snapshot). All bucket versions are
//! below `V` at the cut, so "bucket below `V`" means "not serialised yet".
//! The locks are released before anything is serialised: the cut costs a
//! pass over the partitions, not over the data.
//!
//! # Who serialises what
//!
//! * **The walk** ([`Keyspace::walk_snapshot`], on the snapshot's own
//!   thread) visits each marked table in hash order
//!   (`DashTable::snapshot_walk`) in chunks of about [`CHUNK_TIME`] under
//!   the partition lock, with the CPU offered between chunks
//!   ([`crate::pace::Pacer`]) and no lock held while the sink is full
//!   ([`SnapshotSink::wait_ready`]); each bucket below `V` is handed to the
//!   sink and raised to `V`.
//! * **Every write path** serialises before it changes a bucket below `V`
//!   (the hooks below, called by `Partition` and `Keyspace` only):
//!   - an in-place change or a removal of an existing entry (`get` and the
//!     lookups built on it hand out `&mut Entry`, lazy expiry, `remove`,
//!     eviction, `set_expire`, RENAME/MOVE sources) serialises the entry's
//!     own bucket ([`before_entry`]); a removal only moves the bucket's
//!     last entry into the hole, and the barrier stops stash refills,
//!     merges and shrinks in segments that still hold buckets below `V`;
//!   - an insert of a new key (RENAME/COPY/MOVE destinations, loads,
//!     DEBUG POPULATE) serialises every bucket it may touch, the whole
//!     segment when it may split ([`before_insert`],
//!     `DashTable::buckets_for_write`); an overwrite of an existing key is
//!     an in-place change;
//!   - active expiry serialises the buckets of the logical bucket it sweeps
//!     ([`before_scan`]).
//! * **Detached tables**: FLUSHDB (and FLUSHALL, when it does not abort the
//!   snapshot) takes tables out of their partition; a table that is part of
//!   the snapshot and not fully walked goes to the snapshot
//!   ([`Snapshot::detach`]) instead of being freed, and the walk serialises
//!   what is left of it once the partitions are done, then frees it. So the
//!   memory it holds is at most what it held at the cut.
//! * SWAPDB moves tables between database indexes; each carries its index
//!   at the cut ([`DbSnap::db`]), which is what the file records.
//! * A database created after the cut (first write to an index of a
//!   partition) is not part of the snapshot: nothing in it is serialised.
//!
//! Hence the file holds exactly the entries that existed at the cut, each
//! once, with its value at the cut: a key deleted after the cut was
//! serialised before its bucket changed, a key created after the cut went
//! into a bucket already at `V` (serialised before the insert if it was
//! not). Entries whose TTL had passed at the cut are skipped (they were
//! not part of the dataset). The eviction byte (IDLE/FREQ) is read when the
//! entry is serialised, which may be after the cut.
//!
//! # Large values and memory
//!
//! A write that first touches a bucket during a snapshot serialises that
//! bucket on the writing thread, under the partition lock, into the sink.
//! For a very large value (a collection of millions of elements) that is
//! done in the writer's command, as the walk would have done it: the sink
//! streams it in bounded pieces and, when its buffer is full, makes the
//! writer wait for the disk (back-pressure). Nothing is copied: the
//! buffered bytes are bounded by the sink, detached tables by their size
//! at the cut, so the snapshot's own memory is the sink's bound plus what
//! FLUSHDB would have freed.
//!
//! # Invariants
//! * While a snapshot runs, a partition's `snap` names it until the walk
//!   has finished every marked table of that partition; then the walk
//!   clears `snap`, each table's `DbSnap` and its barrier under the lock.
//! * A marked, unfinished table never merges or shrinks a segment that has
//!   a bucket below `V` (the barrier), and every change to one of its
//!   buckets below `V` is preceded by that bucket's serialisation.
//! * At most one snapshot runs at a time (the caller's rule;
//!   [`Keyspace::begin_snapshot`] refuses a second).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use dash::BucketId;
use parking_lot::Mutex;

use super::db::{Db, DbSnap};
use super::{Keyspace, Partition};
use crate::object::{Entry, Key};

/// Longest time the walk holds one partition lock (plus one step of four
/// buckets).
pub const CHUNK_TIME: Duration = Duration::from_micros(100);

/// Receives the serialised entries. Implemented by the command runtime
/// (the RDB encoder and its disk writer).
pub trait SnapshotSink: Send + Sync {
    /// Serialises `entries`, all of database `db` (its index at the cut).
    /// Called with a partition lock held, by the walk and by any writing
    /// thread; may block while the sink's buffer is full. Entries handed
    /// over once are never handed over again.
    fn write(&self, db: u32, entries: &[&Entry]);
    /// Blocks until the sink could take more without blocking (the walk
    /// calls it with no lock held), or it failed.
    fn wait_ready(&self);
    /// The sink failed (e.g. a disk error): the walk stops.
    fn failed(&self) -> bool;
}

/// Key and TTL counts of one database at the cut (for `RESIZEDB`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DbCounts {
    pub keys: u64,
    pub expires: u64,
}

/// One running snapshot, shared by the partitions and the walk.
pub struct Snapshot {
    version: u32,
    sink: Arc<dyn SnapshotSink>,
    /// Unix ms of the cut: entries expired by then are not written.
    cut_ms: u64,
    counts: Vec<DbCounts>,
    /// Tables taken out by FLUSHDB/FLUSHALL before the walk finished them
    /// (boxed as the partitions hold them: moving one is a pointer copy).
    #[allow(clippy::vec_box)]
    detached: Mutex<Vec<Box<Db>>>,
    aborted: AtomicBool,
    /// Entries handed to the sink so far.
    written: AtomicU64,
}

impl Snapshot {
    /// Unix ms of the cut.
    pub fn cut_ms(&self) -> u64 {
        self.cut_ms
    }

    /// Key counts per database at the cut (expired-but-uncollected keys
    /// included, like DBSIZE).
    pub fn counts(&self) -> &[DbCounts] {
        &self.counts
    }

    /// Keys of every database at the cut.
    pub fn keys_total(&self) -> u64 {
        self.counts.iter().map(|c| c.keys).sum()
    }

    /// Entries serialised so far.
    pub fn keys_written(&self) -> u64 {
        self.written.load(Relaxed)
    }

    /// Asks the walk to stop; the file will not be completed.
    pub fn abort(&self) {
        self.aborted.store(true, Relaxed);
    }

    pub fn is_aborted(&self) -> bool {
        self.aborted.load(Relaxed)
    }

    /// Keeps a detached table for the walk if it still holds entries not
    /// serialised; otherwise gives it back to be freed.
    pub(crate) fn detach(&self, d: Box<Db>) -> Option<Box<Db>> {
        match d.snap {
            Some(s) if !s.done && !d.is_empty() => {
                self.detached.lock().push(d);
                None
            }
            _ => Some(d),
        }
    }

    /// Hands the live entries of `ids` (buckets below the version) to the
    /// sink, then raises the buckets.
    fn serialise(&self, d: &mut Db, ids: &[BucketId]) {
        let Some(ds) = d.snap else { return };
        let v = self.version;
        let mut refs: Vec<&Entry> = Vec::new();
        for &id in ids {
            if d.table.bucket_version(id) < v {
                d.table.for_each_in_bucket(id, |e| {
                    if !e.is_expired(self.cut_ms) {
                        refs.push(e)
                    }
                });
            }
        }
        if !refs.is_empty() && !self.is_aborted() {
            self.sink.write(ds.db, &refs);
            self.written.fetch_add(refs.len() as u64, Relaxed);
        }
        drop(refs);
        for &id in ids {
            d.table.raise_bucket_version(id, v);
        }
    }
}

/// Is `d` part of `snap` and not fully walked?
#[inline]
fn pending<'a>(snap: Option<&'a Snapshot>, d: &Db) -> Option<&'a Snapshot> {
    let s = snap?;
    match d.snap {
        Some(ds) if !ds.done => Some(s),
        _ => None,
    }
}

/// Before the entry of `key` changes in place or is removed: serialises
/// its bucket if the snapshot has not yet.
#[inline]
pub(crate) fn before_entry(snap: Option<&Snapshot>, d: &mut Db, key: &Key) {
    if let Some(s) = pending(snap, d) {
        if let Some(id) = d
            .table
            .bucket_of(d.table_hash(key.hash), |e| e.matches(key))
        {
            s.serialise(d, &[id]);
        }
    }
}

/// Before `key` is inserted or overwritten: serialises every bucket the
/// insert may touch (the entry's own when it exists). `evicting`: the
/// insert may drop expired entries of the segment first (the table's
/// eviction pass visits every bucket of it), so the whole segment is
/// serialised whenever that pass can run.
#[inline]
pub(crate) fn before_insert(snap: Option<&Snapshot>, d: &mut Db, key: &Key, evicting: bool) {
    if let Some(s) = pending(snap, d) {
        let h = d.table_hash(key.hash);
        if let Some(id) = d.table.bucket_of(h, |e| e.matches(key)) {
            return s.serialise(d, &[id]);
        }
        let mut ids = Vec::with_capacity(8);
        if evicting {
            d.table.buckets_for_evicting_write(h, |id| ids.push(id));
        } else {
            d.table.buckets_for_write(h, |id| ids.push(id));
        }
        s.serialise(d, &ids);
    }
}

/// Before active expiry sweeps the logical bucket at `cursor`.
#[inline]
pub(crate) fn before_scan(snap: Option<&Snapshot>, d: &mut Db, cursor: u64) {
    if let Some(s) = pending(snap, d) {
        let mut ids = Vec::with_capacity(8);
        d.table.buckets_for_scan(cursor, |id| ids.push(id));
        s.serialise(d, &ids);
    }
}

/// Walks one marked table for about `budget`: returns true when the table
/// is done.
fn walk_table(s: &Snapshot, d: &mut Db, budget: Duration) -> bool {
    let Some(mut ds) = d.snap else { return true };
    if ds.done {
        return true;
    }
    let start = Instant::now();
    let mut ids = Vec::with_capacity(8);
    loop {
        ids.clear();
        ds.cursor = d.table.snapshot_walk(ds.cursor, s.version, |id| {
            ids.push(id);
            ids.len() < 4
        });
        s.serialise(d, &ids);
        if ds.cursor == 0 {
            ds.done = true;
            break;
        }
        if start.elapsed() >= budget || s.is_aborted() {
            break;
        }
    }
    d.snap = Some(ds);
    ds.done
}

impl Partition {
    /// One chunk of the walk on this partition: returns true when every
    /// marked table here is done (then the partition leaves the snapshot).
    fn snapshot_chunk(&mut self, budget: Duration) -> bool {
        self.settle();
        let Some(s) = self.snap.clone() else {
            return true;
        };
        let start = Instant::now();
        for slot in self.dbs.iter_mut() {
            let Some(d) = slot.as_deref_mut() else {
                continue;
            };
            if !walk_table(&s, d, budget.saturating_sub(start.elapsed())) {
                return false;
            }
        }
        self.leave_snapshot();
        true
    }

    /// Clears this partition's snapshot state (finished or aborted).
    fn leave_snapshot(&mut self) {
        self.snap = None;
        for d in self.dbs.iter_mut().flatten() {
            if d.snap.take().is_some() {
                d.table.set_restructure_barrier(0);
            }
        }
    }
}

/// Why a walk did not complete.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WalkError {
    /// [`Snapshot::abort`] was called.
    Aborted,
    /// The sink failed.
    SinkFailed,
    /// A partition was stopped by a fault (`crate::partlock`) before the
    /// walk reached its end: the file would miss its keys.
    PartitionStopped(usize),
}

impl Keyspace {
    /// Takes the cut (see the module docs) and returns the snapshot, or
    /// None when one is already running. `now_ms` is the cut's time.
    pub fn begin_snapshot(
        &self,
        sink: Arc<dyn SnapshotSink>,
        now_ms: u64,
    ) -> Option<Arc<Snapshot>> {
        let mut all = self.lock_all();
        let mut parts: Vec<&mut Partition> = all.partitions().collect();
        if parts.iter().any(|p| p.snap.is_some()) {
            return None;
        }
        let version = self.snap_version.fetch_add(1, Relaxed) + 1;
        let mut counts = vec![DbCounts::default(); self.ndb];
        for p in parts.iter_mut() {
            p.settle();
            for (i, d) in p.dbs.iter().enumerate() {
                if let Some(d) = d {
                    counts[i].keys += d.len() as u64;
                    counts[i].expires += d.expires as u64;
                }
            }
        }
        let snap = Arc::new(Snapshot {
            version,
            sink,
            cut_ms: now_ms,
            counts,
            detached: Mutex::new(Vec::new()),
            aborted: AtomicBool::new(false),
            written: AtomicU64::new(0),
        });
        for p in parts {
            p.snap = Some(snap.clone());
            for (i, d) in p.dbs.iter_mut().enumerate() {
                if let Some(d) = d.as_deref_mut() {
                    d.snap = Some(DbSnap {
                        db: i as u32,
                        cursor: 0,
                        done: d.is_empty(),
                    });
                    d.table.set_restructure_barrier(version);
                }
            }
        }
        Some(snap)
    }

    /// Is a snapshot running (cut taken, walk not finished)?
    pub fn snapshot_running(&self) -> bool {
        (0..self.parts.len()).any(|p| self.lock_partition(p).snap.is_some())
    }

    /// Runs the walk of `snap` to its end on the calling thread (the
    /// snapshot's own), then frees the detached tables. On return, no
    /// partition refers to the snapshot any more, whatever the outcome,
    /// and the sink will not be called again.
    pub fn walk_snapshot(&self, snap: &Snapshot) -> Result<(), WalkError> {
        let mut pacer = crate::pace::Pacer::new();
        let mut result = Ok(());
        'parts: for p in 0..self.parts.len() {
            loop {
                if self.is_stopped(p) {
                    result = Err(WalkError::PartitionStopped(p));
                    break 'parts;
                }
                if snap.is_aborted() {
                    result = Err(WalkError::Aborted);
                    break 'parts;
                }
                if snap.sink.failed() {
                    result = Err(WalkError::SinkFailed);
                    break 'parts;
                }
                snap.sink.wait_ready();
                pacer.between_chunks();
                if self.lock_partition(p).snapshot_chunk(CHUNK_TIME) {
                    break;
                }
            }
        }
        if result.is_err() {
            // A stopped partition is never locked again: it may keep its
            // reference to the snapshot.
            for p in (0..self.parts.len()).filter(|&p| !self.is_stopped(p)) {
                let mut g = self.lock_partition(p);
                if g.snap.as_ref().is_some_and(|s| std::ptr::eq(&**s, snap)) {
                    g.leave_snapshot();
                }
            }
        }
        // No partition names the snapshot now: nothing more is detached.
        let detached = std::mem::take(&mut *snap.detached.lock());
        for mut d in detached {
            while result.is_ok() {
                if snap.is_aborted() {
                    result = Err(WalkError::Aborted);
                } else if snap.sink.failed() {
                    result = Err(WalkError::SinkFailed);
                } else {
                    snap.sink.wait_ready();
                    pacer.between_chunks();
                    if walk_table(snap, &mut d, CHUNK_TIME) {
                        break;
                    }
                }
            }
            d.drop_with(|| {
                pacer.between_chunks();
            });
        }
        result
    }
}

#[cfg(test)]
mod tests;
