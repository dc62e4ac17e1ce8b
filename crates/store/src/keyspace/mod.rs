//! The keyspace: `P` partitions, each owning a contiguous range of the 16384
//! hash slots and one Dashtable per database (created on first write).
//!
//! Locking: each partition sits behind its own mutex. A command locks the
//! partition(s) of its keys for its whole duration; several partitions are
//! always taken in ascending index order ([`Keyspace::lock_keys`],
//! [`Keyspace::lock_all`]), so multi-key commands are atomic and deadlock-free.
//!
//! Expiry: every read or write lookup through [`Partition`] drops a key whose
//! time has passed (lazy expiry, `now_ms` from the caller), and
//! [`Keyspace::active_expire_cycle`] sweeps the tables in short resumable
//! steps. Invariant: `Db::expires` equals the number of entries with a TTL;
//! only `Partition` methods change TTLs or add/remove entries.
//!
//! Size tracking (`self::sizes`): each `Db` keeps [`Sizes`] equal to the
//! sum over its entries. Every entry put into or taken out of a table goes
//! through `Sizes::add`/`Sizes::sub` here. Values change in place through the
//! `&mut Entry` that [`Partition::get`] (and the lookups built on it) hand
//! out, so `get` also records that entry and its [`Size`] as the partition's
//! *pending* lookup; the next `&mut self` method of the partition (every one
//! starts with `settle`) re-measures it and applies the difference. The
//! pointer stays valid until then: the table only changes through `&mut
//! self` methods of the partition, which settle first, and readers of the
//! statistics ([`Partition::sizes`]) settle too. Invariant: outside a
//! partition method, `Sizes` is exact for every entry except the pending one,
//! whose recorded `Size` is what `Sizes` counts for it.
//!
//! SCAN cursors are Dashtable cursors: the table cursor carries the hash
//! position, whose top bits are the slot, whose top bits are the partition.
//! So a cursor names its partition, and Redis's SCAN guarantee carries over
//! from the table.

use std::time::{Duration, Instant};

use parking_lot::Mutex;

use self::evict::EvictShared;
use crate::partlock::{Hold, PartitionGuard, PartitionLock};
use std::sync::Arc;

use crate::object::{CompactValue, Entry, Key};
use crate::slot::{SLOTS, SLOT_BITS};

mod db;
pub mod defrag;
#[cfg(test)]
mod defrag_tests;
pub mod evict;
mod partition;
mod replica_ttl;
pub mod sizes;
#[cfg(test)]
mod sizes_tests;
#[cfg(test)]
mod slot_tests;
pub mod snapshot;
#[cfg(test)]
mod tests;

pub use db::{Db, DbInfo, Hasher, Stats, Table, TableStats};
pub use partition::{Partition, Ttl};

/// Keyspace shape.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// Number of partitions (power of two, 1..=16384).
    pub partitions: usize,
    /// Number of databases (SELECT 0..n-1).
    pub databases: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            partitions: 16,
            databases: 16,
        }
    }
}

/// Several partitions locked in ascending order.
pub struct MultiGuard<'a> {
    shift: u32,
    guards: Vec<(usize, PartitionGuard<'a, Partition>)>,
}

impl<'a> MultiGuard<'a> {
    /// The locked partition owning `key`.
    pub fn part(&mut self, key: &Key) -> &mut Partition {
        let p = (key.slot() >> self.shift) as usize;
        let i = self
            .guards
            .iter()
            .position(|(i, _)| *i == p)
            .expect("key not locked");
        &mut self.guards[i].1
    }

    /// Two distinct keys' partitions at once (RENAME, COPY, SMOVE...); the
    /// second is None when both keys share a partition.
    pub fn pair(&mut self, a: &Key, b: &Key) -> (&mut Partition, Option<&mut Partition>) {
        let pa = (a.slot() >> self.shift) as usize;
        let pb = (b.slot() >> self.shift) as usize;
        if pa == pb {
            return (self.part(a), None);
        }
        let ia = self
            .guards
            .iter()
            .position(|(i, _)| *i == pa)
            .expect("key not locked");
        let ib = self
            .guards
            .iter()
            .position(|(i, _)| *i == pb)
            .expect("key not locked");
        if ia < ib {
            let (l, r) = self.guards.split_at_mut(ib);
            (&mut l[ia].1, Some(&mut r[0].1))
        } else {
            let (l, r) = self.guards.split_at_mut(ia);
            (&mut r[0].1, Some(&mut l[ib].1))
        }
    }

    pub fn partitions(&mut self) -> impl Iterator<Item = &mut Partition> + use<'_, 'a> {
        self.guards.iter_mut().map(|(_, g)| &mut **g)
    }
}

#[repr(align(128))]
struct Padded(PartitionLock<Partition>);

/// Active-expiry resume point.
#[derive(Default)]
struct ExpireState {
    part: usize,
    db: usize,
}

/// Result of one [`Keyspace::active_expire_cycle`] call.
#[derive(Clone, Copy, Debug, Default)]
pub struct ExpireReport {
    pub visited: usize,
    pub expired: usize,
    pub elapsed: Duration,
    /// Stopped on the time budget with work left (call again soon).
    pub timed_out: bool,
}

thread_local! {
    /// Set by [`Keyspace::with_expired_visible`].
    static EXPIRED_VISIBLE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Does this thread see expired keys as present (see
/// [`Keyspace::with_expired_visible`]; only consulted while expiry is
/// frozen)?
#[inline]
pub(crate) fn expired_visible() -> bool {
    EXPIRED_VISIBLE.with(|v| v.get())
}

/// The whole keyspace.
pub struct Keyspace {
    parts: Box<[Padded]>,
    /// slot >> shift = partition index.
    shift: u32,
    pbits: u32,
    ndb: usize,
    expire_state: Mutex<ExpireState>,
    /// `active-expire-effort` - 1 (0..=9): see
    /// [`Keyspace::set_active_expire_effort`]. An atomic, not part of
    /// `expire_state`: a cycle holds that lock while it waits for
    /// partitions, which a CONFIG SET inside EXEC holds.
    expire_effort: std::sync::atomic::AtomicUsize,
    /// Shared with every partition (inserts drop expired keys before a
    /// table segment splits only while active expiry is on).
    active_expire: Arc<std::sync::atomic::AtomicBool>,
    /// Shared with every partition: see [`Keyspace::set_expiry_frozen`].
    expiry_frozen: Arc<std::sync::atomic::AtomicBool>,
    tracking_expired: std::sync::atomic::AtomicBool,
    /// Eviction mode, LRU clock and published candidates (see `evict`).
    pub(crate) evict: Arc<EvictShared>,
    pub(crate) sweep: Mutex<self::evict::SweepState>,
    /// Version of the last snapshot taken (see `snapshot`).
    snap_version: std::sync::atomic::AtomicU32,
}

impl Keyspace {
    pub fn new(cfg: Config) -> Keyspace {
        assert!(
            cfg.partitions.is_power_of_two() && cfg.partitions <= SLOTS,
            "partitions must be a power of two <= 16384"
        );
        assert!(cfg.databases >= 1);
        let pbits = cfg.partitions.trailing_zeros();
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let evict = Arc::new(EvictShared::new(cfg.partitions, now_ms));
        let expiry_frozen = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let active_expire = Arc::new(std::sync::atomic::AtomicBool::new(true));
        let parts = (0..cfg.partitions)
            .map(|index| {
                Padded(PartitionLock::with_id(
                    Partition::new(
                        index,
                        pbits,
                        cfg.databases,
                        evict.clone(),
                        expiry_frozen.clone(),
                        active_expire.clone(),
                    ),
                    index,
                ))
            })
            .collect();
        Keyspace {
            parts,
            shift: SLOT_BITS - pbits,
            pbits,
            ndb: cfg.databases,
            expire_state: Mutex::new(ExpireState::default()),
            expire_effort: std::sync::atomic::AtomicUsize::new(0),
            active_expire,
            expiry_frozen,
            tracking_expired: std::sync::atomic::AtomicBool::new(false),
            evict,
            sweep: Mutex::new(Default::default()),
            snap_version: std::sync::atomic::AtomicU32::new(0),
        }
    }

    pub fn partitions(&self) -> usize {
        self.parts.len()
    }

    pub fn databases(&self) -> usize {
        self.ndb
    }

    #[inline]
    pub fn partition_of_slot(&self, slot: u16) -> usize {
        (slot >> self.shift) as usize
    }

    /// Slot range [first, last] owned by a partition.
    pub fn slot_range(&self, part: usize) -> (u16, u16) {
        let n = 1usize << self.shift;
        ((part * n) as u16, (part * n + n - 1) as u16)
    }

    /// Locks the partition owning `key`.
    #[inline]
    pub fn lock(&self, key: &Key) -> PartitionGuard<'_, Partition> {
        self.parts[self.partition_of_slot(key.slot())].0.lock()
    }

    pub fn lock_partition(&self, p: usize) -> PartitionGuard<'_, Partition> {
        self.parts[p].0.lock()
    }

    /// Whether partition `p` is stopped: a command panicked while changing
    /// it, and every lock of it is refused from then on (see
    /// [`crate::partlock`]).
    pub fn is_stopped(&self, p: usize) -> bool {
        self.parts[p].0.is_stopped()
    }

    /// The stopped partitions, ascending.
    pub fn stopped_partitions(&self) -> Vec<usize> {
        (0..self.parts.len())
            .filter(|&p| self.is_stopped(p))
            .collect()
    }

    /// Holds every partition, in ascending order, without borrowing them: for
    /// EXEC, whose queued commands then lock partitions as usual (re-entering).
    pub fn hold_all(&self) -> Vec<Hold<'_, Partition>> {
        self.parts.iter().map(|p| p.0.hold()).collect()
    }

    /// Holds the partitions of `keys` (ascending order) without borrowing
    /// them, so this thread can still lock them one by one (a blocking
    /// command checks its keys and registers its waiter under this hold).
    pub fn hold_keys(&self, keys: &[Key]) -> Vec<Hold<'_, Partition>> {
        let mut ps: Vec<usize> = keys
            .iter()
            .map(|k| self.partition_of_slot(k.slot()))
            .collect();
        ps.sort_unstable();
        ps.dedup();
        ps.into_iter().map(|p| self.parts[p].0.hold()).collect()
    }

    /// Locks the partitions of all `keys`, in ascending order.
    pub fn lock_keys(&self, keys: &[Key]) -> MultiGuard<'_> {
        let mut ps: Vec<usize> = keys
            .iter()
            .map(|k| self.partition_of_slot(k.slot()))
            .collect();
        ps.sort_unstable();
        ps.dedup();
        MultiGuard {
            shift: self.shift,
            guards: ps
                .into_iter()
                .map(|p| (p, self.parts[p].0.lock()))
                .collect(),
        }
    }

    /// Locks every partition, in ascending order.
    pub fn lock_all(&self) -> MultiGuard<'_> {
        MultiGuard {
            shift: self.shift,
            guards: (0..self.parts.len())
                .map(|p| (p, self.parts[p].0.lock()))
                .collect(),
        }
    }

    /// Keys in a database (DBSIZE); expired-but-uncollected keys included, as Redis.
    pub fn dbsize(&self, db: usize) -> usize {
        (0..self.parts.len())
            .map(|p| self.lock_partition(p).len(db))
            .sum()
    }

    /// The partitions that are not stopped: reports (INFO, MEMORY) count
    /// these and name the stopped ones apart, so they keep working after a
    /// fault (see [`crate::partlock`]).
    fn served(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.parts.len()).filter(|&p| !self.is_stopped(p))
    }

    /// INFO keyspace line data (stopped partitions left out).
    pub fn db_info(&self, db: usize) -> DbInfo {
        let (mut keys, mut expires, mut ttl_w) = (0usize, 0usize, 0f64);
        for p in self.served() {
            let g = self.lock_partition(p);
            if let Some(d) = g.db(db) {
                keys += d.len();
                expires += d.expires;
                ttl_w += d.avg_ttl * d.expires as f64;
            }
        }
        let avg_ttl = if expires > 0 {
            (ttl_w / expires as f64) as u64
        } else {
            0
        };
        DbInfo {
            keys,
            expires,
            avg_ttl,
        }
    }

    /// Summed counters (stopped partitions left out).
    pub fn stats(&self) -> Stats {
        let mut s = Stats::default();
        for p in self.served() {
            s += self.lock_partition(p).stats;
        }
        s
    }

    pub fn reset_stats(&self) {
        for p in 0..self.parts.len() {
            self.lock_partition(p).stats = Stats::default();
        }
    }

    /// Frees every database that holds no keys, one partition lock at a
    /// time. A partition's database (its table and size statistics, ~5.7
    /// KB) exists from its first write; without this, a server whose keys
    /// all expired or were deleted kept 16 of them, 91 KB above an empty
    /// server (docs/BENCHMARKS.md). Returns how many it freed.
    pub fn release_empty_dbs(&self) -> usize {
        (0..self.parts.len())
            .filter(|&p| !self.is_stopped(p))
            .map(|p| self.lock_partition(p).release_empty_dbs())
            .sum()
    }

    /// Bytes of all tables (the keyspace's fixed overhead; values excluded).
    pub fn table_bytes(&self) -> usize {
        let mut n = 0;
        for p in 0..self.parts.len() {
            let g = self.lock_partition(p);
            n += g
                .dbs
                .iter()
                .flatten()
                .map(|d| d.table.allocated_bytes())
                .sum::<usize>();
        }
        n
    }

    /// Table figures of database `db` summed over partitions (MEMORY
    /// STATS), O(partitions).
    pub fn table_stats(&self, db: usize) -> TableStats {
        let mut t = TableStats::default();
        for p in self.served() {
            let g = self.lock_partition(p);
            if let Some(d) = g.db(db) {
                t.keys += d.len();
                t.expires += d.expires;
                t.bytes += d.table.allocated_bytes();
                t.directory_bytes += d.table.directory_bytes();
                t.slots += d.table.slot_capacity();
                t.segments += d.table.segment_count();
                t.max_global_depth = t.max_global_depth.max(d.table.global_depth());
            }
        }
        t
    }

    /// Empties one database atomically; returns the old tables so the caller
    /// can drop them where it likes (FLUSHDB ASYNC). A table a running
    /// snapshot has not finished goes to the snapshot instead
    /// (`snapshot::Snapshot::detach`), which frees it once serialised.
    pub fn flush_db(&self, db: usize) -> Vec<Box<Db>> {
        let mut all = self.lock_all();
        all.partitions()
            .filter_map(|p| {
                p.settle();
                let d = p.dbs[db].take()?;
                match &p.snap {
                    Some(s) => s.detach(d),
                    None => Some(d),
                }
            })
            .collect()
    }

    /// Empties every database atomically (FLUSHALL); tables a running
    /// snapshot has not finished go to it, as in [`Keyspace::flush_db`].
    pub fn flush_all(&self) -> Vec<Box<Db>> {
        let mut all = self.lock_all();
        all.partitions()
            .flat_map(|p| {
                p.settle();
                p.local_ttls.clear();
                let snap = p.snap.clone();
                p.dbs
                    .iter_mut()
                    .filter_map(Option::take)
                    .filter_map(|d| match &snap {
                        Some(s) => s.detach(d),
                        None => Some(d),
                    })
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// A new, empty keyspace shaped like this one (same partitions and
    /// databases, so tables move between the two as they are) and sharing
    /// its eviction clock and mode, its expiry switches: a replica's
    /// `repl-diskless-load swapdb` loads into it while clients keep using
    /// this one, then [`Keyspace::swap_all_with`] moves the tables in.
    pub fn empty_like(&self) -> Keyspace {
        let pbits = self.pbits;
        let parts = (0..self.parts.len())
            .map(|index| {
                Padded(PartitionLock::with_id(
                    Partition::new(
                        index,
                        pbits,
                        self.ndb,
                        self.evict.clone(),
                        self.expiry_frozen.clone(),
                        self.active_expire.clone(),
                    ),
                    index,
                ))
            })
            .collect();
        Keyspace {
            parts,
            shift: self.shift,
            pbits,
            ndb: self.ndb,
            expire_state: Mutex::new(ExpireState::default()),
            expire_effort: std::sync::atomic::AtomicUsize::new(
                self.expire_effort
                    .load(std::sync::atomic::Ordering::Relaxed),
            ),
            active_expire: self.active_expire.clone(),
            expiry_frozen: self.expiry_frozen.clone(),
            tracking_expired: std::sync::atomic::AtomicBool::new(false),
            evict: self.evict.clone(),
            sweep: Mutex::new(Default::default()),
            snap_version: std::sync::atomic::AtomicU32::new(0),
        }
    }

    /// Replaces every database of this keyspace by `other`'s, atomically
    /// (all partitions locked, ascending, then `other`'s), leaving `other`
    /// empty; returns the replaced tables for the caller to free (a table
    /// a running snapshot has not finished goes to it instead, as in
    /// [`Keyspace::flush_all`]). `Err(())`, nothing changed, when `other`
    /// is not shaped like this keyspace (see [`Keyspace::empty_like`]).
    #[allow(clippy::result_unit_err)]
    pub fn swap_all_with(&self, other: &Keyspace) -> Result<Vec<Box<Db>>, ()> {
        if std::ptr::eq(self, other)
            || other.parts.len() != self.parts.len()
            || other.ndb != self.ndb
            || other.pbits != self.pbits
        {
            return Err(());
        }
        let mut mine = self.lock_all();
        let mut theirs = other.lock_all();
        let mut replaced = Vec::new();
        for (p, q) in mine.partitions().zip(theirs.partitions()) {
            p.settle();
            q.settle();
            let snap = p.snap.clone();
            for (slot, new) in p.dbs.iter_mut().zip(q.dbs.iter_mut()) {
                let old = std::mem::replace(slot, new.take());
                replaced.extend(old.and_then(|d| match &snap {
                    Some(s) => s.detach(d),
                    None => Some(d),
                }));
            }
        }
        Ok(replaced)
    }

    /// SWAPDB.
    pub fn swap_db(&self, a: usize, b: usize) {
        let mut all = self.lock_all();
        for p in all.partitions() {
            p.settle();
            p.dbs.swap(a, b);
        }
    }

    /// One SCAN step over `db`: calls `f` for live entries, returns the next
    /// cursor (0 = done). `count` is a hint of entries to return. Expired
    /// keys met on the way are deleted, as Redis's SCAN does.
    pub fn scan(
        &self,
        db: usize,
        cursor: u64,
        count: usize,
        now_ms: u64,
        mut f: impl FnMut(&Entry),
    ) -> u64 {
        // Cursor layout: the partition in the top `pbits` bits, then the
        // partition table's own cursor (bucket, position) shifted right by
        // `pbits`. The table cursor's low bits are zero (positions are
        // segment boundaries, multiples of 2^(64 - depth) >> 8, and depth
        // stays far below 56 - pbits), so nothing is lost; were they not,
        // the shift would round the position down, which can only repeat
        // entries, never skip them.
        let np = self.parts.len();
        let pbits = self.pbits;
        let split = |c: u64| -> (usize, u64) {
            if pbits == 0 {
                (0, c)
            } else {
                ((c >> (64 - pbits)) as usize, c << pbits)
            }
        };
        let join = |p: usize, t: u64| -> u64 {
            if pbits == 0 {
                t
            } else {
                ((p as u64) << (64 - pbits)) | (t >> pbits)
            }
        };
        let (mut p, mut t) = split(cursor);
        let mut emitted = 0usize;
        let mut steps = 0usize;
        let max_steps = count.saturating_mul(10).max(100);
        // Expired keys met, deleted after the step as a lookup would
        // (Redis's SCAN runs expireIfNeeded on each key it meets).
        let mut expired: Vec<Vec<u8>> = Vec::new();
        loop {
            {
                let mut g = self.lock_partition(p);
                let mut stop = None;
                if let Some(d) = g.db(db) {
                    loop {
                        t = d.table.scan(t, |e| {
                            if self.shown(e, now_ms) {
                                f(e);
                                emitted += 1;
                            } else if e.is_expired(now_ms) {
                                expired.push(e.key().to_vec());
                            }
                        });
                        steps += 1;
                        if t == 0 {
                            break;
                        }
                        if emitted >= count || steps >= max_steps {
                            stop = Some(join(p, t));
                            break;
                        }
                    }
                }
                // `get` deletes an expired key (counted, logged, its value
                // disposed) unless expiry is frozen (a replica, a pause).
                for k in expired.drain(..) {
                    g.get(db, &Key::new(&k), now_ms);
                }
                if let Some(c) = stop {
                    return c;
                }
            }
            // partition done
            if p + 1 >= np {
                return 0;
            }
            p += 1;
            t = 0;
            if emitted >= count || steps >= max_steps {
                return join(p, t);
            }
        }
    }

    /// Does a listing (SCAN, KEYS) show `e`: live, or expired while this
    /// thread sees expired keys as present (see
    /// [`Keyspace::with_expired_visible`]).
    #[inline]
    fn shown(&self, e: &Entry, now_ms: u64) -> bool {
        !e.is_expired(now_ms) || (self.expiry_frozen() && expired_visible())
    }

    /// Visits every live key of `db`, one partition at a time (KEYS).
    pub fn for_each_key(&self, db: usize, now_ms: u64, mut f: impl FnMut(&Entry)) {
        for p in 0..self.parts.len() {
            let g = self.lock_partition(p);
            if let Some(d) = g.db(db) {
                for e in d.table.iter() {
                    if self.shown(e, now_ms) {
                        f(e);
                    }
                }
            }
        }
    }

    /// RANDOMKEY: a uniformly chosen live key.
    /// While expiry is frozen (a replica) an expired key is skipped but
    /// kept (its master's `DEL` will come); when every key of `db` has a
    /// TTL they may all have passed, so the 100th expired key drawn is the
    /// answer (Redis's `dbRandomKey`).
    pub fn random_key(&self, db: usize, now_ms: u64) -> Option<Vec<u8>> {
        let mut frozen_draws = 0;
        for _ in 0..1000 {
            let mut volatile = 0;
            let sizes: Vec<usize> = (0..self.parts.len())
                .map(|p| {
                    let g = self.lock_partition(p);
                    volatile += g.db(db).map_or(0, |d| d.expires);
                    g.len(db)
                })
                .collect();
            let total: usize = sizes.iter().sum();
            if total == 0 {
                return None;
            }
            let mut r = (rand::random::<u64>() % total as u64) as usize;
            let p = sizes.iter().position(|&s| {
                if r < s {
                    true
                } else {
                    r -= s;
                    false
                }
            })?;
            let mut g = self.lock_partition(p);
            let Some(d) = g.db(db) else { continue };
            let Some(e) = d.table.random(rand::random()) else {
                continue;
            };
            let k = e.key().to_vec();
            // An expired key is a candidate where listings show it (a
            // replica's async load, Redis 7.0's suspended expiry).
            if self.shown(e, now_ms) {
                return Some(k);
            }
            if self.expiry_frozen() {
                frozen_draws += 1;
                if volatile == total && frozen_draws >= 100 {
                    return Some(k);
                }
                continue;
            }
            g.remove(db, &Key::new(&k), now_ms);
        }
        None
    }

    /// Up to `max` keys of one slot in `db`, at a cost in the keys returned
    /// (the walk stops at `max`).
    pub fn keys_in_slot(&self, db: usize, slot: u16, now_ms: u64, max: usize) -> Vec<Vec<u8>> {
        let g = self.lock_partition(self.partition_of_slot(slot));
        let mut out = Vec::new();
        if max == 0 {
            return out;
        }
        g.for_each_in_slot_while(db, slot, now_ms, |e| {
            out.push(e.key().to_vec());
            out.len() < max
        });
        out
    }

    /// Keys of one slot in `db`, in O(1) (expired ones not yet collected
    /// included).
    pub fn count_in_slot(&self, db: usize, slot: u16) -> usize {
        self.lock_partition(self.partition_of_slot(slot))
            .count_in_slot(db, slot)
    }

    /// DEBUG POPULATE: adds `prefix:N` => `value:N` (zero-padded/truncated to
    /// `size` if non-zero) for N in 0..count, skipping existing keys. Returns
    /// the number of keys added.
    pub fn populate(&self, db: usize, count: u64, prefix: &[u8], size: usize, now_ms: u64) -> u64 {
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(8) as u64;
        if count < 100_000 || threads == 1 {
            return self.populate_range(db, 0, count, prefix, size, now_ms);
        }
        let per = count.div_ceil(threads);
        std::thread::scope(|sc| {
            let hs: Vec<_> = (0..threads)
                .map(|t| {
                    let (lo, hi) = (t * per, ((t + 1) * per).min(count));
                    sc.spawn(move || self.populate_range(db, lo, hi, prefix, size, now_ms))
                })
                .collect();
            hs.into_iter()
                .map(|h| h.join().expect("populate thread"))
                .sum()
        })
    }

    fn populate_range(
        &self,
        db: usize,
        lo: u64,
        count: u64,
        prefix: &[u8],
        size: usize,
        now_ms: u64,
    ) -> u64 {
        const BATCH: u64 = 16384;
        fn fmt_key(buf: &mut Vec<u8>, prefix: &[u8], sep: u8, n: u64) {
            buf.clear();
            buf.extend_from_slice(prefix);
            buf.push(sep);
            let mut tmp = [0u8; 20];
            let mut i = tmp.len();
            let mut x = n;
            loop {
                i -= 1;
                tmp[i] = b'0' + (x % 10) as u8;
                x /= 10;
                if x == 0 {
                    break;
                }
            }
            buf.extend_from_slice(&tmp[i..]);
        }
        let np = self.parts.len();
        let mut added = 0u64;
        let mut buckets: Vec<Vec<(u64, u16)>> = (0..np).map(|_| Vec::new()).collect();
        let mut kbuf = Vec::with_capacity(prefix.len() + 21);
        let mut vbuf = Vec::with_capacity(size.max(26));
        let fresh = self.evict.toucher().fresh();
        let lfu = self.evict.is_lfu();
        let mut j = lo;
        while j < count {
            let end = (j + BATCH).min(count);
            for n in j..end {
                fmt_key(&mut kbuf, prefix, b':', n);
                let slot = crate::slot::key_slot(&kbuf);
                buckets[self.partition_of_slot(slot)].push((n, slot));
            }
            for (p, b) in buckets.iter_mut().enumerate() {
                if b.is_empty() {
                    continue;
                }
                let mut g = self.lock_partition(p);
                for &(n, slot) in b.iter() {
                    fmt_key(&mut kbuf, prefix, b':', n);
                    let key = Key::with_slot(&kbuf, slot);
                    let d = g.db_mut(db);
                    let expired = match d.table.entry(d.table_hash(key.hash), |e| e.matches(&key)) {
                        dash::Entry::Occupied(o) => {
                            if !o.get().is_expired(now_ms) {
                                continue;
                            }
                            true
                        }
                        dash::Entry::Vacant(_) => false,
                    };
                    if expired {
                        g.remove(db, &key, now_ms);
                    }
                    fmt_key(&mut vbuf, b"value", b':', n);
                    if size > 0 {
                        vbuf.resize(size, 0);
                    }
                    let mut e = Entry::new(&key, CompactValue::from_bytes(&vbuf));
                    e.set_evict_byte(fresh);
                    let (snap, d) = g.db_and_snapshot(db);
                    snapshot::before_insert(snap, d, &key, false);
                    d.sizes.add(&e);
                    d.table.insert_unique(d.table_hash(key.hash), e);
                    if lfu {
                        g.note_created(db, &kbuf, false);
                    }
                    added += 1;
                }
                drop(g);
                b.clear();
            }
            j = end;
        }
        added
    }

    /// Turns logging of expired keys on or off (for "expired" keyspace
    /// notifications); off drops what was logged.
    pub fn set_track_expired(&self, on: bool) {
        use std::sync::atomic::Ordering::Relaxed;
        if self.tracking_expired.swap(on, Relaxed) == on {
            return;
        }
        for p in 0..self.parts.len() {
            let mut g = self.lock_partition(p);
            g.track_expired = on;
            if !on {
                g.expired_log = Vec::new();
            }
        }
    }

    /// Were keys logged by expiry since the last [`Keyspace::drain_expired`]?
    /// One atomic load: lets a caller skip the drain, which visits every
    /// partition.
    pub fn expired_pending(&self) -> bool {
        self.evict
            .expired_logged
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Takes the keys removed by expiry since the last call: (db, key).
    pub fn drain_expired(&self) -> Vec<(usize, Vec<u8>)> {
        self.evict
            .expired_logged
            .store(false, std::sync::atomic::Ordering::Relaxed);
        let mut out = Vec::new();
        for p in 0..self.parts.len() {
            let mut g = self.lock_partition(p);
            if !g.expired_log.is_empty() {
                out.append(&mut g.expired_log);
            }
        }
        out
    }

    /// Turns the write journal's log of expired keys on or off (see
    /// [`Keyspace::drain_journal_expired`]); off drops what was logged.
    /// Independent of [`Keyspace::set_track_expired`].
    pub fn set_journal_expired(&self, on: bool) {
        for p in 0..self.parts.len() {
            let mut g = self.lock_partition(p);
            g.journal_expired = on;
            if !on {
                g.journal_log = Vec::new();
            }
        }
    }

    /// Were keys logged for the journal since the last
    /// [`Keyspace::drain_journal_expired`]? One atomic load.
    pub fn journal_expired_pending(&self) -> bool {
        self.evict
            .journal_logged
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Takes the keys removed by expiry since the last call, for the write
    /// journal: (db, key), in each partition's order of removal.
    pub fn drain_journal_expired(&self) -> Vec<(usize, Vec<u8>)> {
        self.evict
            .journal_logged
            .store(false, std::sync::atomic::Ordering::Relaxed);
        let mut out = Vec::new();
        for p in 0..self.parts.len() {
            let mut g = self.lock_partition(p);
            if !g.journal_log.is_empty() {
                out.append(&mut g.journal_log);
            }
        }
        out
    }

    /// DEBUG SET-ACTIVE-EXPIRE.
    /// Freezes expiry while clients are paused (CLIENT PAUSE), as Redis 7.0
    /// does: expired keys read as missing but are neither deleted nor
    /// counted (lazily or by the active cycle) until expiry thaws.
    pub fn set_expiry_frozen(&self, frozen: bool) {
        self.expiry_frozen
            .store(frozen, std::sync::atomic::Ordering::Relaxed);
    }

    /// Runs `f` with keys whose TTL passed seen as present by this
    /// thread's lookups, writes and deletes while expiry is frozen: a
    /// replica's master client (Redis 7.0's `expireIfNeeded` leaves keys
    /// alone for the master, whose own `DEL` will remove them; other
    /// clients see them as missing). No effect while expiry runs: expired
    /// keys are then deleted on access as always.
    pub fn with_expired_visible<R>(f: impl FnOnce() -> R) -> R {
        struct Restore(bool);
        impl Drop for Restore {
            fn drop(&mut self) {
                EXPIRED_VISIBLE.with(|v| v.set(self.0));
            }
        }
        let _restore = Restore(EXPIRED_VISIBLE.with(|v| v.replace(true)));
        f()
    }

    /// Runs `f` with the keys it gives a TTL remembered, so that
    /// [`Keyspace::expire_replica_local_keys`] deletes them once expired
    /// although expiry is frozen: a writable replica's client commands
    /// (module `replica_ttl`).
    pub fn with_local_ttls_tracked<R>(f: impl FnOnce() -> R) -> R {
        replica_ttl::with_tracked(f)
    }

    /// How many keys [`Keyspace::with_local_ttls_tracked`] remembered and
    /// no sweep has forgotten yet.
    pub fn replica_local_ttl_keys(&self) -> usize {
        (0..self.parts.len())
            .map(|p| self.lock_partition(p).local_ttls.len())
            .sum()
    }

    /// A writable replica's cron: deletes the remembered keys (see
    /// [`Keyspace::with_local_ttls_tracked`]) whose TTL passed, in chunks
    /// of one partition-lock hold each run inside `around` (as in
    /// [`Keyspace::active_expire_cycle_with`]), until every partition's
    /// list was swept once or `budget` is spent. Returns the deletions.
    pub fn expire_replica_local_keys(
        &self,
        budget: Duration,
        now_ms: u64,
        around: &mut dyn FnMut(&mut dyn FnMut()),
    ) -> usize {
        const CHUNK: usize = 64;
        let start = Instant::now();
        let mut pacer = crate::pace::Pacer::new();
        let mut deleted = 0;
        // A random first partition: a long list cannot starve the others.
        let first = rand::random::<u64>() as usize;
        for i in 0..self.parts.len() {
            let p = (first + i) % self.parts.len();
            if self.is_stopped(p) || self.lock_partition(p).local_ttls.len() == 0 {
                continue;
            }
            loop {
                pacer.between_chunks();
                let mut res = (0, 0, true);
                around(&mut || res = self.lock_partition(p).expire_local_ttls(now_ms, CHUNK));
                deleted += res.1;
                if res.2 {
                    break;
                }
                if start.elapsed() >= budget {
                    return deleted;
                }
            }
        }
        deleted
    }

    /// `active-expire-effort` (1..=10, Redis's scale): each cycle visits
    /// a quarter more keys per step above 1, and keeps sweeping a
    /// database while more than (11 - effort)% of its volatile keys seen
    /// were expired (10% at 1, 1% at 10). The caller scales the cycle's
    /// CPU budget (Redis: 25% + 2% per step).
    pub fn set_active_expire_effort(&self, effort: u8) {
        self.expire_effort.store(
            effort.clamp(1, 10) as usize - 1,
            std::sync::atomic::Ordering::Relaxed,
        );
    }

    /// Is expiry frozen (see [`Keyspace::set_expiry_frozen`])?
    pub fn expiry_frozen(&self) -> bool {
        self.expiry_frozen
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    pub fn set_active_expire(&self, on: bool) {
        self.active_expire
            .store(on, std::sync::atomic::Ordering::Relaxed);
    }

    pub fn active_expire_enabled(&self) -> bool {
        self.active_expire
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// One active-expiry cycle, called periodically by the server (e.g. every
    /// 100 ms with a budget of a few ms). Sweeps the tables with resumable
    /// cursors, in chunks that hold a partition lock only briefly. Each
    /// database gets a base effort (1/64 of its keys, at least 256) and keeps
    /// being swept while more than 10% of the volatile keys seen in a chunk
    /// were expired (Redis's adaptive rule), until the budget runs out.
    /// Between chunks it offers the CPU every [`crate::pace::SLICE`], so a
    /// worker sharing the core waits at most that long.
    pub fn active_expire_cycle(&self, budget: Duration, now_ms: u64) -> ExpireReport {
        self.active_expire_cycle_with(budget, now_ms, &mut |step| step())
    }

    /// [`Keyspace::active_expire_cycle`], running each chunk (one
    /// partition-lock hold) inside `around`, which must call the step it
    /// is given exactly once: the write journal holds its order lock around
    /// a chunk and records the chunk's deletions before letting go.
    pub fn active_expire_cycle_with(
        &self,
        budget: Duration,
        now_ms: u64,
        around: &mut dyn FnMut(&mut dyn FnMut()),
    ) -> ExpireReport {
        let mut rep = ExpireReport::default();
        if !self.active_expire_enabled() || self.expiry_frozen() {
            return rep;
        }
        let start = Instant::now();
        let Some(mut st) = self.expire_state.try_lock() else {
            return rep;
        };
        let pairs = self.parts.len() * self.ndb;
        let mut pacer = crate::pace::Pacer::new();
        const CHUNK: usize = 256;
        // Redis's active-expire-effort scaling: a quarter more keys per
        // step of effort, and a database is swept on while more than
        // (10 - effort)% of the volatile keys seen were expired.
        let effort = self
            .expire_effort
            .load(std::sync::atomic::Ordering::Relaxed);
        let stale_percent = 10 - effort;
        'outer: for _ in 0..pairs {
            let (p, db) = (st.part, st.db);
            // advance the resume point for next time
            st.db += 1;
            if st.db == self.ndb {
                st.db = 0;
                st.part = (st.part + 1) % self.parts.len();
            }
            if self.is_stopped(p) {
                continue;
            }
            let quota = {
                let g = self.lock_partition(p);
                match g.db(db) {
                    Some(d) if d.expires > 0 => (d.len() / 64).max(CHUNK) * (4 + effort) / 4,
                    _ => continue,
                }
            };
            let mut done = 0usize;
            loop {
                pacer.between_chunks();
                let mut res = (0, 0, 0, 0, true);
                around(&mut || res = self.lock_partition(p).expire_step(db, now_ms, CHUNK));
                let (visited, expired, _, live, complete) = res;
                rep.visited += visited;
                rep.expired += expired;
                done += visited;
                let volatile = expired + live;
                let hot = volatile > 0 && expired * 100 > volatile * stale_percent;
                if start.elapsed() >= budget {
                    rep.timed_out = hot || done < quota;
                    if rep.timed_out {
                        // resume this same database next time
                        st.part = p;
                        st.db = db;
                    }
                    break 'outer;
                }
                if complete && !hot {
                    break;
                }
                if done >= quota && !hot {
                    break;
                }
                if complete && done >= self.lock_partition(p).len(db) {
                    break;
                }
            }
        }
        rep.elapsed = start.elapsed();
        drop(st);
        // The cycle's statistics live in the first partition still served.
        let Some(first) = (0..self.parts.len()).find(|&p| !self.is_stopped(p)) else {
            return rep;
        };
        let mut g = self.lock_partition(first);
        g.stats.expire_cycle_us += rep.elapsed.as_micros() as u64;
        if rep.timed_out {
            g.stats.expire_time_cap_reached += 1;
        }
        rep
    }
}

impl Default for Keyspace {
    fn default() -> Self {
        Keyspace::new(Config::default())
    }
}
