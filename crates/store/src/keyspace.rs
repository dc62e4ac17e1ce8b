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
//! Size tracking (`crate::sizes`): each `Db` keeps [`Sizes`] equal to the
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

use dash::DashTable;
use parking_lot::Mutex;

use crate::evict::{EvictShared, PartEvict};
use crate::partlock::{Hold, PartitionGuard, PartitionLock};
use std::sync::Arc;

use crate::object::{CompactValue, Entry, Key};
use crate::sizes::{Measured, Size, Sizes};
use crate::slot::{SLOTS, SLOT_BITS};

pub type Hasher = fn(&Entry) -> u64;
pub type Table = DashTable<Entry, Hasher>;

/// A partition's table hash: the key hash (slot in the top 14 bits) rotated
/// left by the partition bits. The slot bits that name the partition are the
/// same for every key of the partition; left at the top they would be the
/// directory's first bits, so its directory would have `2^pbits` entries
/// for every segment it needs (16x with 16 partitions: 17 MB instead of
/// 1 MB at 20M keys). Rotated to the bottom they are out of the way (the
/// home bucket and fingerprint come from bits 0..40, where the low `pbits`
/// bits change nothing that matters), and the top bits are the slot's bits
/// within the partition, so one slot's keys still share a prefix.
fn rotated<const R: u32>(e: &Entry) -> u64 {
    e.hash().rotate_left(R)
}

/// `rotated::<R>` for every possible partition bit count (0..=14).
const HASHERS: [Hasher; SLOT_BITS as usize + 1] = [
    rotated::<0>,
    rotated::<1>,
    rotated::<2>,
    rotated::<3>,
    rotated::<4>,
    rotated::<5>,
    rotated::<6>,
    rotated::<7>,
    rotated::<8>,
    rotated::<9>,
    rotated::<10>,
    rotated::<11>,
    rotated::<12>,
    rotated::<13>,
    rotated::<14>,
];

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

/// One database inside one partition.
pub struct Db {
    /// Keyed by [`Db::table_hash`] of the key hash, never the key hash itself.
    pub table: Table,
    /// Partition bits: the table hash is the key hash rotated left by this.
    rot: u32,
    expires: usize,
    /// Running TTL estimate in ms (Redis's avg_ttl rule).
    avg_ttl: f64,
    /// Active-expiry sweep position.
    expire_cursor: u64,
    /// Size statistics of the entries (see the module docs).
    sizes: Sizes,
}

impl Db {
    fn new(pbits: u32) -> Db {
        Db {
            table: DashTable::with_hasher(HASHERS[pbits as usize]),
            rot: pbits,
            expires: 0,
            avg_ttl: 0.0,
            expire_cursor: 0,
            sizes: Sizes::default(),
        }
    }
    /// The table's hash for a key hash (see [`rotated`]).
    #[inline]
    pub fn table_hash(&self, key_hash: u64) -> u64 {
        key_hash.rotate_left(self.rot)
    }
    /// The key's entry, expired or not (no statistics, no touch).
    #[inline]
    pub fn find(&self, key: &Key) -> Option<&Entry> {
        self.table
            .get(self.table_hash(key.hash), |e| e.matches(key))
    }
    pub fn len(&self) -> usize {
        self.table.len()
    }
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }
    /// Keys with a TTL.
    pub fn expires(&self) -> usize {
        self.expires
    }
    /// Size statistics; exact once the partition has settled (get the `Db`
    /// from [`Partition::settled_db`]).
    pub fn sizes(&self) -> &Sizes {
        &self.sizes
    }
    /// Frees the database a table segment at a time, calling `between`
    /// after each (the lazyfree thread paces itself there).
    pub fn drop_with(self: Box<Self>, between: impl FnMut()) {
        self.table.drop_with(between);
    }
    /// Table bytes per entry (the slot share of MEMORY USAGE).
    pub fn slot_share(&self) -> usize {
        let n = self.table.len().max(1);
        self.table.allocated_bytes().div_ceil(n)
    }
}

/// Counters kept per partition (summed by [`Keyspace::stats`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    pub hits: u64,
    pub misses: u64,
    pub expired_keys: u64,
    /// Active-expiry cycles that stopped on their time budget.
    pub expire_time_cap_reached: u64,
    /// Time spent in active expiry, microseconds.
    pub expire_cycle_us: u64,
}

impl std::ops::AddAssign for Stats {
    fn add_assign(&mut self, o: Stats) {
        self.hits += o.hits;
        self.misses += o.misses;
        self.expired_keys += o.expired_keys;
        self.expire_time_cap_reached += o.expire_time_cap_reached;
        self.expire_cycle_us += o.expire_cycle_us;
    }
}

/// One database's tables (MEMORY STATS): `bytes` includes the directory;
/// `slots - keys` slots are empty.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TableStats {
    pub keys: usize,
    pub expires: usize,
    pub bytes: usize,
    pub directory_bytes: usize,
    pub slots: usize,
    /// Segments over all partitions' tables.
    pub segments: usize,
    /// The deepest global depth (directory bits) of any partition's table.
    pub max_global_depth: u32,
}

/// Per-database summary (INFO keyspace).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DbInfo {
    pub keys: usize,
    pub expires: usize,
    pub avg_ttl: u64,
}

/// How a write treats the key's TTL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ttl {
    /// Keep the existing TTL (KEEPTTL, INCR, APPEND...).
    Keep,
    /// Set this TTL (None = persist).
    Set(Option<u64>),
}

/// The entry last handed out as `&mut Entry`, with its size as counted.
struct Pending {
    entry: *mut Entry,
    db: usize,
    before: Size,
}

// SAFETY: the pointer is only dereferenced by the partition that recorded
// it, under the partition's lock, before any change to the table it points
// into (see the module docs); the partition moves between threads only with
// its lock.
unsafe impl Send for Pending {}

/// One partition: a slot range, its databases and counters.
pub struct Partition {
    index: usize,
    /// log2 of the number of partitions (see [`rotated`]).
    pbits: u32,
    dbs: Vec<Option<Box<Db>>>,
    pub stats: Stats,
    /// When set, keys removed by expiry are logged in `expired_log` for
    /// keyspace notifications ("expired" events).
    track_expired: bool,
    expired_log: Vec<(usize, Vec<u8>)>,
    /// Eviction mode and clock shared by all partitions (see `evict`).
    evict_shared: Arc<EvictShared>,
    /// This partition's candidate pool and generator.
    evict: PartEvict,
    pending: Option<Pending>,
}

impl Partition {
    /// Applies the size change of the pending lookup, if any. Every `&mut
    /// self` method that may change a table or read `Sizes` calls this first.
    #[inline]
    fn settle(&mut self) {
        self.settle_measured();
    }

    /// [`settle`](Self::settle), returning the entry it measured and its
    /// size now (so a lookup of that same entry need not measure it again).
    #[inline]
    fn settle_measured(&mut self) -> Option<(*mut Entry, Size)> {
        let p = self.pending.take()?;
        // SAFETY: `p.entry` points into `self.dbs[p.db]`'s table, which
        // has not changed since `get` recorded it (every table change
        // goes through a method that settles first).
        let e = unsafe { &*p.entry };
        let now = Size::of(e);
        if now != p.before {
            if let Some(d) = self.dbs[p.db].as_deref_mut() {
                d.sizes.change(e, p.before, now);
            }
        }
        Some((p.entry, now))
    }

    /// Frees the databases of this partition that hold no keys (they are
    /// created again by the next write). Returns how many it freed.
    pub fn release_empty_dbs(&mut self) -> usize {
        self.settle();
        let mut n = 0;
        for slot in self.dbs.iter_mut() {
            if slot
                .as_deref()
                .is_some_and(|d| d.is_empty() && d.expires == 0)
            {
                *slot = None;
                n += 1;
            }
        }
        n
    }

    /// A database with its size statistics settled (see the module docs),
    /// if it exists here.
    pub fn settled_db(&mut self, db: usize) -> Option<&Db> {
        self.settle();
        self.dbs[db].as_deref()
    }

    pub fn index(&self) -> usize {
        self.index
    }

    /// Number of databases.
    pub fn databases(&self) -> usize {
        self.dbs.len()
    }

    /// Looks an entry up without expiry handling, statistics or touch.
    pub(crate) fn get_raw(&self, db: usize, key: &Key) -> Option<&Entry> {
        self.dbs[db].as_deref()?.find(key)
    }

    pub(crate) fn db_and_evict(&mut self, db: usize) -> (Option<&Db>, &mut PartEvict) {
        (self.dbs[db].as_deref(), &mut self.evict)
    }

    pub(crate) fn evict_state(&mut self) -> &mut PartEvict {
        &mut self.evict
    }

    pub(crate) fn evict_state_ref(&self) -> &PartEvict {
        &self.evict
    }

    /// This partition's index, the shared eviction state and its own pool.
    pub(crate) fn evict_parts(&mut self) -> (usize, &EvictShared, &mut PartEvict) {
        (self.index, &self.evict_shared, &mut self.evict)
    }

    pub(crate) fn evict_rng_next(&mut self) -> u64 {
        self.evict.rng.next()
    }

    pub(crate) fn dbs_mut(&mut self) -> impl Iterator<Item = (usize, &mut Db)> {
        // The caller may change tables: apply the pending lookup first.
        self.settle();
        self.dbs
            .iter_mut()
            .enumerate()
            .filter_map(|(i, d)| Some((i, d.as_deref_mut()?)))
    }

    /// The database, if it has ever been written in this partition.
    pub fn db(&self, db: usize) -> Option<&Db> {
        self.dbs[db].as_deref()
    }

    /// The database, created on demand.
    pub(crate) fn db_mut(&mut self, db: usize) -> &mut Db {
        self.settle();
        let pbits = self.pbits;
        self.dbs[db].get_or_insert_with(|| Box::new(Db::new(pbits)))
    }

    /// Looks a key up, dropping it if expired. No statistics, no touch
    /// (write lookups, TTL, TYPE, EXISTS).
    /// The entry becomes the pending lookup (module docs): changes made
    /// through the returned reference are counted at the next settle.
    pub fn get(&mut self, db: usize, key: &Key, now_ms: u64) -> Option<&mut Entry> {
        let last = self.settle_measured();
        let d = self.dbs[db].as_deref_mut()?;
        let e: *mut Entry = d
            .table
            .get_mut(d.table_hash(key.hash), |e| e.matches(key))?;
        // SAFETY: `e` points into `d.table`, which is not touched between the
        // lookup and this read; the returned borrow is tied to `&mut self`.
        if unsafe { (*e).is_expired(now_ms) } {
            let old = d
                .table
                .remove(d.table_hash(key.hash), |e| e.matches(key))
                .unwrap();
            d.sizes.sub(&old);
            d.expires -= 1;
            self.stats.expired_keys += 1;
            if self.track_expired {
                self.expired_log.push((db, key.bytes.to_vec()));
            }
            self.evict_shared.dispose_expired(old.into_value());
            return None;
        }
        let before = match last {
            // The same entry as the settled lookup (a run of commands on
            // one key): its size was just measured and nothing changed since.
            Some((p, size)) if p == e => size,
            // SAFETY: as above; no mutation happened since the lookup.
            _ => Size::of(unsafe { &*e }),
        };
        self.pending = Some(Pending {
            entry: e,
            db,
            before,
        });
        // SAFETY: as above; no mutation happened since the lookup.
        Some(unsafe { &mut *e })
    }

    /// Read lookup: like [`get`](Self::get), counts a hit or miss and
    /// touches the eviction byte.
    pub fn get_read(&mut self, db: usize, key: &Key, now_ms: u64) -> Option<&mut Entry> {
        let t = self.evict_shared.toucher();
        let rand = if t.is_lfu() {
            self.evict.rng.next() as u32
        } else {
            0
        };
        let mut hit = false;
        let r = self.get(db, key, now_ms).map(|e| {
            e.set_evict_byte(t.touched(e.value().evict_byte(), rand));
            hit = true;
            e as *mut Entry
        });
        if hit {
            self.stats.hits += 1;
        } else {
            self.stats.misses += 1;
        }
        // SAFETY: the pointer comes from the borrow of self just above; only
        // the stats counters were written since.
        r.map(|p| unsafe { &mut *p })
    }

    /// Read lookup that counts a hit or miss but leaves the eviction byte
    /// alone (TTL, TYPE, EXISTS, OBJECT: Redis's LOOKUP_NOTOUCH).
    pub fn get_read_notouch(&mut self, db: usize, key: &Key, now_ms: u64) -> Option<&mut Entry> {
        let r = self.get(db, key, now_ms).map(|e| e as *mut Entry);
        if r.is_some() {
            self.stats.hits += 1;
        } else {
            self.stats.misses += 1;
        }
        // SAFETY: the pointer comes from the borrow of self just above; only
        // the stats counters were written since.
        r.map(|p| unsafe { &mut *p })
    }

    /// Does the key exist (not expired)?
    pub fn exists(&mut self, db: usize, key: &Key, now_ms: u64) -> bool {
        self.get(db, key, now_ms).is_some()
    }

    /// Inserts or replaces a key; returns the replaced (live) entry.
    pub fn insert(
        &mut self,
        db: usize,
        key: &Key,
        v: CompactValue,
        ttl: Option<u64>,
        now_ms: u64,
    ) -> Option<Entry> {
        let mut e = Entry::new(key, v);
        let t = self.evict_shared.toucher();
        let mut byte = t.fresh();
        if t.is_lfu() {
            // An overwrite keeps the access counter (and counts as an access).
            let rand = self.evict.rng.next() as u32;
            match self.dbs[db].as_deref().and_then(|d| d.find(key)) {
                Some(o) if !o.is_expired(now_ms) => {
                    byte = t.touched(o.value().evict_byte(), rand);
                }
                _ => self.note_created(db, key.bytes, ttl.is_some()),
            }
        }
        e.set_evict_byte(byte);
        if ttl.is_some() {
            e.set_expire(ttl);
        }
        let d = self.db_mut(db);
        if ttl.is_some() {
            d.expires += 1;
        }
        let m = Measured::of(&e);
        let mut old = d
            .table
            .insert(d.table_hash(key.hash), e, |e| e.matches(key));
        if let Some(o) = &old {
            d.sizes.sub(o);
        }
        d.sizes.add_measured(m);
        if let Some(o) = &mut old {
            if o.has_expire() {
                d.expires -= 1;
            }
            if o.is_expired(now_ms) {
                self.stats.expired_keys += 1;
                if self.track_expired {
                    self.expired_log.push((db, key.bytes.to_vec()));
                }
                self.evict_shared
                    .dispose_expired(old.take().unwrap().into_value());
                return None;
            }
            self.evict_shared.dispose_overwritten(o);
        }
        old
    }

    /// Writes a value with TTL handling; returns the previous live entry's
    /// value if the key existed (an Entry only if it was replaced whole).
    pub fn set(
        &mut self,
        db: usize,
        key: &Key,
        v: CompactValue,
        ttl: Ttl,
        now_ms: u64,
    ) -> Option<CompactValue> {
        match ttl {
            Ttl::Set(t) => self.insert(db, key, v, t, now_ms).map(Entry::into_value),
            Ttl::Keep => {
                let t = self.evict_shared.toucher();
                let rand = self.evict.rng.next() as u32;
                match self.get(db, key, now_ms) {
                    Some(e) => {
                        e.set_evict_byte(t.touched(e.value().evict_byte(), rand));
                        Some(e.set_value(v))
                    }
                    None => {
                        self.insert(db, key, v, None, now_ms);
                        None
                    }
                }
            }
        }
    }

    /// Removes a key; returns it if it was live (expired ones count as expired).
    pub fn remove(&mut self, db: usize, key: &Key, now_ms: u64) -> Option<Entry> {
        self.settle();
        let d = self.dbs[db].as_deref_mut()?;
        let old = d.table.remove(d.table_hash(key.hash), |e| e.matches(key))?;
        d.sizes.sub(&old);
        if old.has_expire() {
            d.expires -= 1;
        }
        if old.is_expired(now_ms) {
            self.stats.expired_keys += 1;
            if self.track_expired {
                self.expired_log.push((db, key.bytes.to_vec()));
            }
            self.evict_shared.dispose_expired(old.into_value());
            return None;
        }
        Some(old)
    }

    /// Sets or clears a live key's TTL; false if the key does not exist.
    pub fn set_expire(&mut self, db: usize, key: &Key, t: Option<u64>, now_ms: u64) -> bool {
        let Some(e) = self.get(db, key, now_ms) else {
            return false;
        };
        let had = e.has_expire();
        e.set_expire(t);
        let has = e.has_expire();
        let d = self.dbs[db].as_deref_mut().unwrap();
        match (had, has) {
            (false, true) => d.expires += 1,
            (true, false) => d.expires -= 1,
            _ => {}
        }
        true
    }

    /// Moves a live entry to another database of this partition under the
    /// same key (MOVE). The caller checks that `dst` has no such key.
    pub fn move_entry(&mut self, src: usize, dst: usize, key: &Key, now_ms: u64) -> bool {
        let Some(e) = self.remove(src, key, now_ms) else {
            return false;
        };
        let d = self.db_mut(dst);
        if e.has_expire() {
            d.expires += 1;
        }
        let m = Measured::of(&e);
        if let Some(old) = d
            .table
            .insert(d.table_hash(key.hash), e, |x| x.matches(key))
        {
            debug_assert!(false, "MOVE onto an existing key");
            d.sizes.sub(&old);
        }
        d.sizes.add_measured(m);
        true
    }

    /// Puts an existing entry under another key of this partition, keeping
    /// value and TTL (RENAME within a partition, COPY). Replaces any entry.
    pub fn insert_value_with_ttl(
        &mut self,
        db: usize,
        key: &Key,
        v: CompactValue,
        ttl: Option<u64>,
        now_ms: u64,
    ) {
        drop(self.insert(db, key, v, ttl, now_ms));
    }

    /// MEMORY USAGE: slot share plus heap bytes of a live key, plus its
    /// big-key index entry if it has one.
    pub fn memory_usage(&mut self, db: usize, key: &Key, now_ms: u64) -> Option<usize> {
        let heap = self.get(db, key, now_ms)?.heap_size();
        let own = crate::sizes::usage_bytes(heap, key.bytes.len());
        Some(own + self.dbs[db].as_deref().unwrap().slot_share())
    }

    /// Keys in `db` (expired ones included until collected).
    pub fn len(&self, db: usize) -> usize {
        self.dbs[db].as_ref().map_or(0, |d| d.len())
    }

    pub fn is_empty(&self, db: usize) -> bool {
        self.len(db) == 0
    }

    /// Visits the entries of one hash slot in `db` (cluster slot migration,
    /// CLUSTER GETKEYSINSLOT), expired ones skipped.
    pub fn for_each_in_slot(&self, db: usize, slot: u16, now_ms: u64, mut f: impl FnMut(&Entry)) {
        if let Some(d) = self.dbs[db].as_deref() {
            // The slot's bits below the partition's are the table hash's top.
            let bits = SLOT_BITS - self.pbits;
            let prefix = slot as u64 & ((1u64 << bits) - 1);
            d.table.for_each_with_prefix(prefix, bits, |e| {
                if !e.is_expired(now_ms) {
                    f(e)
                }
            });
        }
    }

    /// Sweeps one step of active expiry on `db`: returns (visited, expired,
    /// ttl_sum_ms of live volatile keys, live volatile count, pass complete).
    fn expire_step(
        &mut self,
        db: usize,
        now_ms: u64,
        max_visit: usize,
    ) -> (usize, usize, u64, usize, bool) {
        self.settle();
        let Some(d) = self.dbs[db].as_deref_mut() else {
            return (0, 0, 0, 0, true);
        };
        let track = self.track_expired;
        let log = &mut self.expired_log;
        let shared = &self.evict_shared;
        let (mut visited, mut expired, mut ttl_sum, mut live) = (0usize, 0usize, 0u64, 0usize);
        let mut complete = false;
        let sizes = &mut d.sizes;
        while visited < max_visit {
            d.expire_cursor = d.table.scan_retain(d.expire_cursor, |e| {
                visited += 1;
                if let Some(t) = e.expire_at() {
                    if t <= now_ms {
                        sizes.sub(e);
                        expired += 1;
                        if track {
                            log.push((db, e.key().to_vec()));
                        }
                        if e.value().collection_len() > crate::evict::LAZYFREE_THRESHOLD {
                            shared.dispose_expired(e.set_value(CompactValue::from_int(0)));
                        }
                        return false;
                    }
                    ttl_sum = ttl_sum.saturating_add(t - now_ms);
                    live += 1;
                }
                true
            });
            if d.expire_cursor == 0 {
                complete = true;
                break;
            }
        }
        d.expires -= expired;
        self.stats.expired_keys += expired as u64;
        if live > 0 {
            let avg = (ttl_sum / live as u64) as f64;
            d.avg_ttl = if d.avg_ttl == 0.0 {
                avg
            } else {
                d.avg_ttl / 50.0 * 49.0 + avg / 50.0
            };
        }
        if d.expires == 0 {
            d.avg_ttl = 0.0;
        }
        (visited, expired, ttl_sum, live, complete)
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

/// The whole keyspace.
pub struct Keyspace {
    parts: Box<[Padded]>,
    /// slot >> shift = partition index.
    shift: u32,
    pbits: u32,
    ndb: usize,
    expire_state: Mutex<ExpireState>,
    active_expire: std::sync::atomic::AtomicBool,
    tracking_expired: std::sync::atomic::AtomicBool,
    /// Eviction mode, LRU clock and published candidates (see `evict`).
    pub(crate) evict: Arc<EvictShared>,
    pub(crate) sweep: Mutex<crate::evict::SweepState>,
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
        let parts = (0..cfg.partitions)
            .map(|index| {
                Padded(PartitionLock::new(Partition {
                    index,
                    pbits,
                    dbs: (0..cfg.databases).map(|_| None).collect(),
                    stats: Stats::default(),
                    track_expired: false,
                    expired_log: Vec::new(),
                    evict_shared: evict.clone(),
                    evict: PartEvict::new(rand::random::<u64>() ^ index as u64),
                    pending: None,
                }))
            })
            .collect();
        Keyspace {
            parts,
            shift: SLOT_BITS - pbits,
            pbits,
            ndb: cfg.databases,
            expire_state: Mutex::new(ExpireState::default()),
            active_expire: std::sync::atomic::AtomicBool::new(true),
            tracking_expired: std::sync::atomic::AtomicBool::new(false),
            evict,
            sweep: Mutex::new(Default::default()),
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

    /// INFO keyspace line data.
    pub fn db_info(&self, db: usize) -> DbInfo {
        let (mut keys, mut expires, mut ttl_w) = (0usize, 0usize, 0f64);
        for p in 0..self.parts.len() {
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

    /// Summed counters.
    pub fn stats(&self) -> Stats {
        let mut s = Stats::default();
        for p in 0..self.parts.len() {
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
        for p in 0..self.parts.len() {
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
    /// can drop them where it likes (FLUSHDB ASYNC).
    pub fn flush_db(&self, db: usize) -> Vec<Box<Db>> {
        let mut all = self.lock_all();
        all.partitions()
            .filter_map(|p| {
                p.settle();
                p.dbs[db].take()
            })
            .collect()
    }

    /// Empties every database atomically (FLUSHALL).
    pub fn flush_all(&self) -> Vec<Box<Db>> {
        let mut all = self.lock_all();
        all.partitions()
            .flat_map(|p| {
                p.settle();
                p.dbs
                    .iter_mut()
                    .filter_map(Option::take)
                    .collect::<Vec<_>>()
            })
            .collect()
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
    /// cursor (0 = done). `count` is a hint of entries to return.
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
        loop {
            {
                let g = self.lock_partition(p);
                if let Some(d) = g.db(db) {
                    loop {
                        t = d.table.scan(t, |e| {
                            if !e.is_expired(now_ms) {
                                f(e);
                                emitted += 1;
                            }
                        });
                        steps += 1;
                        if t == 0 {
                            break;
                        }
                        if emitted >= count || steps >= max_steps {
                            return join(p, t);
                        }
                    }
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

    /// Visits every live key of `db`, one partition at a time (KEYS).
    pub fn for_each_key(&self, db: usize, now_ms: u64, mut f: impl FnMut(&Entry)) {
        for p in 0..self.parts.len() {
            let g = self.lock_partition(p);
            if let Some(d) = g.db(db) {
                for e in d.table.iter() {
                    if !e.is_expired(now_ms) {
                        f(e);
                    }
                }
            }
        }
    }

    /// RANDOMKEY: a uniformly chosen live key.
    pub fn random_key(&self, db: usize, now_ms: u64) -> Option<Vec<u8>> {
        for _ in 0..1000 {
            let sizes: Vec<usize> = (0..self.parts.len())
                .map(|p| self.lock_partition(p).len(db))
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
            if !e.is_expired(now_ms) {
                return Some(k);
            }
            g.remove(db, &Key::new(&k), now_ms);
        }
        None
    }

    /// Keys of one slot in `db`.
    pub fn keys_in_slot(&self, db: usize, slot: u16, now_ms: u64, max: usize) -> Vec<Vec<u8>> {
        let g = self.lock_partition(self.partition_of_slot(slot));
        let mut out = Vec::new();
        g.for_each_in_slot(db, slot, now_ms, |e| {
            if out.len() < max {
                out.push(e.key().to_vec())
            }
        });
        out
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
                    let d = g.db_mut(db);
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

    /// Takes the keys removed by expiry since the last call: (db, key).
    pub fn drain_expired(&self) -> Vec<(usize, Vec<u8>)> {
        let mut out = Vec::new();
        for p in 0..self.parts.len() {
            let mut g = self.lock_partition(p);
            if !g.expired_log.is_empty() {
                out.append(&mut g.expired_log);
            }
        }
        out
    }

    /// DEBUG SET-ACTIVE-EXPIRE.
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
        let mut rep = ExpireReport::default();
        if !self.active_expire_enabled() {
            return rep;
        }
        let start = Instant::now();
        let Some(mut st) = self.expire_state.try_lock() else {
            return rep;
        };
        let pairs = self.parts.len() * self.ndb;
        let mut pacer = crate::pace::Pacer::new();
        const CHUNK: usize = 256;
        'outer: for _ in 0..pairs {
            let (p, db) = (st.part, st.db);
            // advance the resume point for next time
            st.db += 1;
            if st.db == self.ndb {
                st.db = 0;
                st.part = (st.part + 1) % self.parts.len();
            }
            let quota = {
                let g = self.lock_partition(p);
                match g.db(db) {
                    Some(d) if d.expires > 0 => (d.len() / 64).max(CHUNK),
                    _ => continue,
                }
            };
            let mut done = 0usize;
            loop {
                pacer.between_chunks();
                let (visited, expired, _, live, complete) =
                    self.lock_partition(p).expire_step(db, now_ms, CHUNK);
                rep.visited += visited;
                rep.expired += expired;
                done += visited;
                let volatile = expired + live;
                let hot = volatile > 0 && expired * 10 > volatile;
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
        let mut g = self.lock_partition(0);
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
