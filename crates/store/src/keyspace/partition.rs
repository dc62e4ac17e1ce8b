//! One partition ([`Partition`]): a slot range, its databases and
//! counters, and every lookup and change of an entry (the module docs of
//! `keyspace` state the expiry and size-tracking invariants these methods
//! keep).

use std::sync::Arc;

use super::db::{Db, Stats};
use super::evict::{EvictShared, PartEvict};
use super::replica_ttl::{self, LocalTtls};
use super::sizes::{Measured, Size};
use super::snapshot::{self, Snapshot};
use crate::object::{CompactValue, Entry, Key};
use crate::slot::SLOT_BITS;

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
    pub(super) index: usize,
    /// log2 of the number of partitions (see [`rotated`]).
    pub(super) pbits: u32,
    pub(super) dbs: Vec<Option<Box<Db>>>,
    pub stats: Stats,
    /// When set, keys removed by expiry are logged in `expired_log` for
    /// keyspace notifications ("expired" events).
    pub(super) track_expired: bool,
    pub(super) expired_log: Vec<(usize, Vec<u8>)>,
    /// When set, keys removed by expiry are also logged in `journal_log`
    /// for the write journal (their `DEL`), drained apart from
    /// `expired_log` so neither consumer steals the other's keys.
    pub(super) journal_expired: bool,
    pub(super) journal_log: Vec<(usize, Vec<u8>)>,
    /// Set while clients are paused (CLIENT PAUSE): expired keys read as
    /// missing but stay in the table, uncounted, as Redis 7.0 keeps the
    /// dataset static during a pause. Shared by every partition.
    pub(super) expiry_frozen: Arc<std::sync::atomic::AtomicBool>,
    /// Active expiry is on (`DEBUG SET-ACTIVE-EXPIRE`); shared by every
    /// partition. Inserts drop expired keys before a segment splits only
    /// while it is set.
    pub(super) active_expire: Arc<std::sync::atomic::AtomicBool>,
    /// Eviction mode and clock shared by all partitions (see `evict`).
    pub(super) evict_shared: Arc<EvictShared>,
    /// This partition's candidate pool and generator.
    pub(super) evict: PartEvict,
    pending: Option<Pending>,
    /// The running snapshot this partition takes part in (see `snapshot`):
    /// every change to a table it marked serialises the bucket first.
    pub(super) snap: Option<Arc<Snapshot>>,
    /// Keys a writable replica's clients gave a TTL (`replica_ttl`).
    pub(super) local_ttls: LocalTtls,
}

/// Pushes an expired key to the logs whose flag is set, and raises the
/// matching "something logged" flag.
fn log_expired_into(
    track: (bool, &mut Vec<(usize, Vec<u8>)>),
    journal: (bool, &mut Vec<(usize, Vec<u8>)>),
    shared: &EvictShared,
    db: usize,
    key: &[u8],
) {
    use std::sync::atomic::Ordering::Relaxed;
    if track.0 {
        track.1.push((db, key.to_vec()));
        shared.expired_logged.store(true, Relaxed);
    }
    if journal.0 {
        journal.1.push((db, key.to_vec()));
        shared.journal_logged.store(true, Relaxed);
    }
}

/// What active expiry does to an expired entry it is about to drop from a
/// table (the sweep in `expire_step`, and an insert's eviction pass before
/// a segment grows): its sizes leave the statistics, the key goes to the
/// logs that asked for it, and a large value is handed to the lazy-free
/// thread (an int left in its place).
fn retire_expired(
    e: &mut Entry,
    sizes: &mut super::sizes::Sizes,
    track: (bool, &mut Vec<(usize, Vec<u8>)>),
    journal: (bool, &mut Vec<(usize, Vec<u8>)>),
    shared: &EvictShared,
    db: usize,
) {
    sizes.sub(e);
    if track.0 || journal.0 {
        log_expired_into(track, journal, shared, db, &e.key());
    }
    if e.value().collection_len() > crate::keyspace::evict::LAZYFREE_THRESHOLD {
        shared.dispose_expired(e.set_value(CompactValue::from_int(0)));
    }
}

impl Partition {
    /// Logs a key removed by expiry (only while `track_expired` or
    /// `journal_expired`), in the log of each consumer that asked.
    fn log_expired(&mut self, db: usize, key: &[u8]) {
        log_expired_into(
            (self.track_expired, &mut self.expired_log),
            (self.journal_expired, &mut self.journal_log),
            &self.evict_shared,
            db,
            key,
        );
    }

    /// Partition `index` of `2^pbits`, with `databases` empty databases.
    pub(super) fn new(
        index: usize,
        pbits: u32,
        databases: usize,
        evict_shared: Arc<EvictShared>,
        expiry_frozen: Arc<std::sync::atomic::AtomicBool>,
        active_expire: Arc<std::sync::atomic::AtomicBool>,
    ) -> Partition {
        Partition {
            expiry_frozen,
            active_expire,
            index,
            pbits,
            dbs: (0..databases).map(|_| None).collect(),
            stats: Stats::default(),
            track_expired: false,
            expired_log: Vec::new(),
            journal_expired: false,
            journal_log: Vec::new(),
            evict_shared,
            evict: PartEvict::new(rand::random::<u64>() ^ index as u64),
            pending: None,
            snap: None,
            local_ttls: LocalTtls::default(),
        }
    }

    /// Applies the size change of the pending lookup, if any. Every `&mut
    /// self` method that may change a table or read `Sizes` calls this first.
    #[inline]
    pub(super) fn settle(&mut self) {
        self.settle_measured();
    }

    /// [`settle`](Self::settle), returning the entry it measured and its
    /// size now (so a lookup of that same entry need not measure it again).
    #[inline]
    pub(super) fn settle_measured(&mut self) -> Option<(*mut Entry, Size)> {
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
        self.db_and_snapshot(db).1
    }

    /// The database (created on demand) with the running snapshot, for a
    /// change that must call a snapshot hook first.
    pub(crate) fn db_and_snapshot(&mut self, db: usize) -> (Option<&Snapshot>, &mut Db) {
        self.settle();
        let pbits = self.pbits;
        let d = self.dbs[db].get_or_insert_with(|| Box::new(Db::new(pbits)));
        (self.snap.as_deref(), d)
    }

    /// Is expiry frozen by a client pause (see `expiry_frozen`)?
    #[inline]
    fn frozen(&self) -> bool {
        self.expiry_frozen
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Is `e` expired for the caller: its TTL passed, unless expiry is
    /// frozen and this thread sees expired keys as present (a replica's
    /// master client, `Keyspace::with_expired_visible`).
    #[inline]
    fn expired_for_caller(&self, e: &Entry, now_ms: u64) -> bool {
        e.is_expired(now_ms) && !(self.frozen() && super::expired_visible())
    }

    /// Looks a key up, dropping it if expired. No statistics, no touch
    /// (write lookups, TTL, TYPE, EXISTS).
    /// The entry becomes the pending lookup (module docs): changes made
    /// through the returned reference are counted at the next settle.
    pub fn get(&mut self, db: usize, key: &Key, now_ms: u64) -> Option<&mut Entry> {
        let last = self.settle_measured();
        let d = self.dbs[db].as_deref_mut()?;
        // The caller may change the entry, or expiry may remove it.
        snapshot::before_entry(self.snap.as_deref(), d, key);
        let e: *mut Entry = d
            .table
            .get_mut(d.table_hash(key.hash), |e| e.matches(key))?;
        // SAFETY: `e` points into `d.table`, which is not touched between the
        // lookup and this read; the returned borrow is tied to `&mut self`.
        if unsafe { (*e).is_expired(now_ms) } {
            if self
                .expiry_frozen
                .load(std::sync::atomic::Ordering::Relaxed)
            {
                if !super::expired_visible() {
                    return None;
                }
                // The master client of a replica: the key is present
                // until the master's DEL (`expired_for_caller`).
            } else {
                let old = d
                    .table
                    .remove(d.table_hash(key.hash), |e| e.matches(key))
                    .unwrap();
                d.sizes.sub(&old);
                d.expires -= 1;
                self.stats.expired_keys += 1;
                if self.track_expired || self.journal_expired {
                    self.log_expired(db, key.bytes);
                }
                self.evict_shared.dispose_expired(old.into_value());
                return None;
            }
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
                Some(o) if !self.expired_for_caller(o, now_ms) => {
                    byte = t.touched(o.value().evict_byte(), rand);
                }
                _ => self.note_created(db, key.bytes, ttl.is_some()),
            }
        }
        e.set_evict_byte(byte);
        if ttl.is_some() {
            e.set_expire(ttl);
            if replica_ttl::tracked() {
                self.local_ttls.remember(db, key.bytes);
            }
        }
        let prunes = self.prunes_before_split();
        let (snap, d) = self.db_and_snapshot(db);
        if ttl.is_some() {
            d.expires += 1;
        }
        let evicting = prunes && d.expires > 0;
        snapshot::before_insert(snap, d, key, evicting);
        let m = Measured::of(&e);
        let h = d.table_hash(key.hash);
        let mut old = if evicting {
            self.insert_evicting_expired(db, h, e, key, now_ms)
        } else {
            let d = self.dbs[db].as_deref_mut().expect("created above");
            d.table.insert(h, e, |e| e.matches(key))
        };
        let d = self.dbs[db].as_deref_mut().expect("created above");
        if let Some(o) = &old {
            d.sizes.sub(o);
        }
        d.sizes.add_measured(m);
        if let Some(o) = &mut old {
            if o.has_expire() {
                d.expires -= 1;
            }
            if self.expired_for_caller(o, now_ms) {
                if !self.frozen() {
                    self.stats.expired_keys += 1;
                    if self.track_expired || self.journal_expired {
                        self.log_expired(db, key.bytes);
                    }
                }
                self.evict_shared
                    .dispose_expired(old.take().unwrap().into_value());
                return None;
            }
            self.evict_shared.dispose_overwritten(o);
        }
        old
    }

    /// May an insert drop expired keys instead of splitting a segment?
    /// Only while active expiry runs and clients are not paused: it is
    /// active expiry, done where it saves memory.
    #[inline]
    fn prunes_before_split(&self) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        self.active_expire.load(Relaxed) && !self.expiry_frozen.load(Relaxed)
    }

    /// Inserts `e` (hash `h`) into database `db`, letting the table drop the
    /// expired keys of a segment that would otherwise split ("expired keys
    /// never make the table grow", Dragonfly's rule). Each dropped key is
    /// counted and logged exactly as active expiry does (`expire_step`):
    /// `expired_keys`, the "expired" event log, the journal's `DEL`, the
    /// size statistics, and large values handed to the lazy-free thread.
    /// The snapshot hook ran before with `evicting`: whenever the eviction
    /// pass may run, the whole segment is serialised first
    /// (`DashTable::buckets_for_evicting_write`), so keys it drops are in a
    /// running snapshot as they were at its cut.
    fn insert_evicting_expired(
        &mut self,
        db: usize,
        h: u64,
        e: Entry,
        key: &Key,
        now_ms: u64,
    ) -> Option<Entry> {
        let track = self.track_expired;
        let journal = self.journal_expired;
        let log = &mut self.expired_log;
        let jlog = &mut self.journal_log;
        let shared = &self.evict_shared;
        let d = self.dbs[db].as_deref_mut().expect("created by the caller");
        let sizes = &mut d.sizes;
        let mut expired = 0usize;
        let mut evict = |x: &mut Entry| -> bool {
            match x.expire_at() {
                Some(t) if t <= now_ms => {
                    expired += 1;
                    retire_expired(
                        x,
                        sizes,
                        (track, &mut *log),
                        (journal, &mut *jlog),
                        shared,
                        db,
                    );
                    true
                }
                _ => false,
            }
        };
        // A database that is mostly volatile keys also drops them before a
        // segment adds a row (its table otherwise grows in rows for keys
        // that are dead); elsewhere only before a split, so tables with
        // few TTLs do not pay a pass over the segment per growth step.
        let when = if d.expires * 4 >= d.table.len() {
            dash::EvictBefore::Grow
        } else {
            dash::EvictBefore::Split
        };
        let old = d
            .table
            .insert_evicting(h, e, |x| x.matches(key), &mut evict, when);
        d.expires -= expired;
        self.stats.expired_keys += expired as u64;
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

    /// Adds an entry read from an RDB file (a load, DEBUG RELOAD) with its
    /// expiry and eviction byte (None: a fresh key's). Returns false, and
    /// changes nothing, when the key exists already (a duplicate in the
    /// file). Expiry is the caller's business: it skips expired keys.
    pub fn insert_loaded(
        &mut self,
        db: usize,
        key: &Key,
        v: CompactValue,
        expire_ms: Option<u64>,
        evict_byte: Option<u8>,
    ) -> bool {
        let t = self.evict_shared.toucher();
        let mut e = Entry::new(key, v);
        e.set_evict_byte(evict_byte.unwrap_or_else(|| t.fresh()));
        if expire_ms.is_some() {
            e.set_expire(expire_ms);
        }
        let (snap, d) = self.db_and_snapshot(db);
        snapshot::before_insert(snap, d, key, false);
        let h = d.table_hash(key.hash);
        match d.table.entry(h, |x| x.matches(key)) {
            dash::Entry::Occupied(_) => return false,
            dash::Entry::Vacant(slot) => {
                let m = Measured::of(&e);
                slot.insert(e);
                d.sizes.add_measured(m);
            }
        }
        if expire_ms.is_some() {
            d.expires += 1;
        }
        if t.is_lfu() {
            self.note_created(db, key.bytes, expire_ms.is_some());
        }
        true
    }

    /// Removes a key; returns it if it was live (expired ones count as expired).
    pub fn remove(&mut self, db: usize, key: &Key, now_ms: u64) -> Option<Entry> {
        self.settle();
        let d = self.dbs[db].as_deref_mut()?;
        snapshot::before_entry(self.snap.as_deref(), d, key);
        let old = d.table.remove(d.table_hash(key.hash), |e| e.matches(key))?;
        d.sizes.sub(&old);
        if old.has_expire() {
            d.expires -= 1;
        }
        if self.expired_for_caller(&old, now_ms) {
            if !self.frozen() {
                self.stats.expired_keys += 1;
                if self.track_expired || self.journal_expired {
                    self.log_expired(db, key.bytes);
                }
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
        if has && replica_ttl::tracked() {
            self.local_ttls.remember(db, key.bytes);
        }
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
        if e.has_expire() && replica_ttl::tracked() {
            self.local_ttls.remember(dst, key.bytes);
        }
        let (snap, d) = self.db_and_snapshot(dst);
        snapshot::before_insert(snap, d, key, false);
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
        let own = crate::keyspace::sizes::usage_bytes(heap, key.bytes.len());
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
        self.for_each_in_slot_while(db, slot, now_ms, |e| {
            f(e);
            true
        });
    }

    /// [`for_each_in_slot`](Self::for_each_in_slot) until `f` answers
    /// false (CLUSTER GETKEYSINSLOT: a cost in the keys returned).
    pub fn for_each_in_slot_while(
        &self,
        db: usize,
        slot: u16,
        now_ms: u64,
        mut f: impl FnMut(&Entry) -> bool,
    ) {
        if let Some(d) = self.dbs[db].as_deref() {
            // The slot's bits below the partition's are the table hash's top.
            let bits = SLOT_BITS - self.pbits;
            let prefix = slot as u64 & ((1u64 << bits) - 1);
            d.table
                .for_each_with_prefix_while(prefix, bits, |e| e.is_expired(now_ms) || f(e));
        }
    }

    /// Keys of one hash slot in `db`, in O(1): expired keys not yet
    /// collected included, as Redis's CLUSTER COUNTKEYSINSLOT counts them.
    pub fn count_in_slot(&self, db: usize, slot: u16) -> usize {
        self.dbs[db]
            .as_deref()
            .map_or(0, |d| d.sizes.slot_keys(slot) as usize)
    }

    /// Sweeps one step of active expiry on `db`: returns (visited, expired,
    /// ttl_sum_ms of live volatile keys, live volatile count, pass complete).
    pub(super) fn expire_step(
        &mut self,
        db: usize,
        now_ms: u64,
        max_visit: usize,
    ) -> (usize, usize, u64, usize, bool) {
        self.settle();
        let snap = self.snap.as_deref();
        let Some(d) = self.dbs[db].as_deref_mut() else {
            return (0, 0, 0, 0, true);
        };
        let track = self.track_expired;
        let journal = self.journal_expired;
        let log = &mut self.expired_log;
        let jlog = &mut self.journal_log;
        let shared = &self.evict_shared;
        let (mut visited, mut expired, mut ttl_sum, mut live) = (0usize, 0usize, 0u64, 0usize);
        let mut complete = false;
        while visited < max_visit {
            snapshot::before_scan(snap, d, d.expire_cursor);
            let sizes = &mut d.sizes;
            d.expire_cursor = d.table.scan_retain(d.expire_cursor, |e| {
                visited += 1;
                if let Some(t) = e.expire_at() {
                    if t <= now_ms {
                        expired += 1;
                        retire_expired(
                            e,
                            sizes,
                            (track, &mut *log),
                            (journal, &mut *jlog),
                            shared,
                            db,
                        );
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

    /// One step of the sweep over the keys a writable replica's clients
    /// gave a TTL (`replica_ttl`): deletes those whose TTL passed, even
    /// though expiry is frozen, counting and logging them as expired.
    /// Returns (keys visited, deleted, whether the sweep reached the end).
    pub(super) fn expire_local_ttls(&mut self, now_ms: u64, max: usize) -> (usize, usize, bool) {
        self.settle();
        let mut set = std::mem::take(&mut self.local_ttls);
        let res = set.sweep(max, |db, name| {
            self.drop_if_expired(db, &Key::new(name), now_ms)
        });
        self.local_ttls = set;
        self.stats.expired_keys += res.1 as u64;
        res
    }

    /// [`Self::expire_local_ttls`]'s verdict on one key (settled).
    fn drop_if_expired(&mut self, db: usize, key: &Key, now_ms: u64) -> replica_ttl::Found {
        use replica_ttl::Found;
        let Some(d) = self.dbs.get_mut(db).and_then(|d| d.as_deref_mut()) else {
            return Found::Gone;
        };
        match d.find(key).and_then(Entry::expire_at) {
            None => return Found::Gone,
            Some(t) if t > now_ms => return Found::Live,
            Some(_) => {}
        }
        snapshot::before_entry(self.snap.as_deref(), d, key);
        let Some(mut old) = d.table.remove(d.table_hash(key.hash), |e| e.matches(key)) else {
            return Found::Gone;
        };
        d.expires -= 1;
        retire_expired(
            &mut old,
            &mut d.sizes,
            (self.track_expired, &mut self.expired_log),
            (self.journal_expired, &mut self.journal_log),
            &self.evict_shared,
            db,
        );
        drop(old);
        Found::Expired
    }
}
