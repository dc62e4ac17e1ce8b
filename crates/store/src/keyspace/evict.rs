//! Eviction metadata and candidate selection: one byte per key serves both
//! LRU and LFU, and per-partition candidate pools pick what `maxmemory`
//! evicts.
//!
//! # The evict byte
//!
//! Every entry has one byte (`Entry::set_evict_byte`). Its meaning depends on
//! the keyspace's mode ([`EvictShared::set_lfu`]), which follows
//! `maxmemory-policy` (LFU for the `*-lfu` policies, LRU otherwise):
//!
//! * **LRU**: the low byte of a keyspace-wide logical clock, the *tick*, at
//!   the key's last access. The tick is advanced by the server's cron
//!   ([`crate::Keyspace::lru_advance`]) at most once per cron period, when a
//!   second has passed since the last tick or when the evictor has removed
//!   enough keys (a fraction of the keyspace) since: so under eviction
//!   pressure the clock's resolution follows the cache's turnover instead of
//!   wall time, which is what ranks candidates well, and an idle server does
//!   not burn ticks. The wall-clock start of the last 256 ticks is kept in a
//!   ring, so `OBJECT IDLETIME` is `now - start(tick)`, exact to within one
//!   tick (at most one second).
//!
//!   A byte wraps after 256 ticks, so old keys would look fresh. A
//!   background sweep ([`crate::Keyspace::evict_sweep`], in short
//!   time-budgeted chunks from the cron) clamps every key older than
//!   [`CLAMP_AGE`] ticks to exactly that age. Invariant (LRU mode): every
//!   key's age `clock - byte (mod 256)` is its true age in ticks if that is
//!   at most `CLAMP_AGE`, and otherwise lies in `CLAMP_AGE..=255`. It holds
//!   because the clock may only advance while it is less than
//!   `255 - CLAMP_AGE` ticks ahead of the start of the last complete sweep
//!   pass (a key visited by that pass had age at most `CLAMP_AGE` then).
//!   If the sweep falls behind, the clock waits for it. Consequence: idle
//!   times beyond `CLAMP_AGE` ticks saturate (`OBJECT IDLETIME` reports at
//!   least `CLAMP_AGE` seconds for such keys, never a too-small value).
//!
//! * **LFU**: Redis's logarithmic access counter (0..=255): a new key starts
//!   at [`LFU_INIT_VAL`]; an access increments it with probability
//!   `1 / ((counter - LFU_INIT_VAL) * lfu-log-factor + 1)`. Decay
//!   (`lfu-decay-time` minutes per step) is done by the same sweep: when a
//!   decay period has passed, a pass subtracts the number of elapsed periods
//!   from every counter (floored at 0), as Redis subtracts them at access.
//!   Difference from Redis: a key created during a pass may be decremented
//!   by that pass before a full period has passed.
//!
//! Switching between LRU and LFU reinterprets the bytes; as in Redis, the
//! values take a while to become meaningful again.
//!
//! # Candidate selection
//!
//! Each partition keeps a pool of up to [`POOL_SIZE`] candidates (key copy,
//! database, *priority*: lower is evicted first — absolute tick of last
//! access for LRU, counter for LFU, expiry time for volatile-ttl). One
//! eviction round on a partition samples `maxmemory-samples` random entries
//! per database (one `DashTable::random_run`: neighbouring slots of one
//! random segment row, a few cache lines for all samples), merges them into the pool,
//! then pops the best candidate, re-reading it first: a candidate that was
//! deleted is dropped, one that was accessed since it was sampled is put
//! back with its new priority. Each partition publishes the priority of its
//! best pooled candidate in an atomic; the evictor picks the partition with
//! the lowest published priority, so the effective pool spans all
//! partitions (16 pools of 16) without holding more than one lock.
//!
//! A published figure is refreshed only by a round on its partition, so it
//! can go stale in one direction that matters: under LFU a key created
//! after the round starts at [`LFU_INIT_VAL`], below a pool of frequently
//! read keys. Unseen, such keys pile up in partitions whose figure says
//! "only hot keys here", while the evictor drains every other partition of
//! new keys and then takes hot ones (the bug behind a flaky test: about 1
//! run in 10 lost 14-24% of 200 hot keys). So a created key whose priority
//! beats its partition's figure is pooled at once and lowers the figure
//! ([`Partition::note_created`]); in the steady state (pools already full of
//! new keys) that costs one atomic load per created key. LRU needs no such
//! rule: a created key is the most recent, never a better candidate.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};

use crate::object::{CompactValue, Entry, Key};

/// Counter of a new key under LFU (Redis's `LFU_INIT_VAL`).
pub const LFU_INIT_VAL: u8 = 5;
/// LRU ages beyond this many ticks are clamped to it by the sweep.
pub const CLAMP_AGE: u8 = 192;
/// The clock may run at most this many ticks ahead of the start of the last
/// complete sweep pass (so no age ever exceeds 255).
pub const MAX_LEAD: u64 = (255 - CLAMP_AGE) as u64;
/// Candidates kept per partition.
pub const POOL_SIZE: usize = 16;

/// Published priority: nothing known yet, sample this partition first.
pub const PRIO_UNKNOWN: u64 = 0;
/// Published priority: the partition had no candidate keys.
pub const PRIO_NONE: u64 = u64::MAX;

/// Which keys a policy may evict and how it ranks them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rank {
    Lru,
    Lfu,
    Random,
    Ttl,
}

/// An eviction policy as the store sees it (noeviction never gets here).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    pub rank: Rank,
    /// Only keys with a TTL (`volatile-*`).
    pub volatile: bool,
}

/// Values with more elements than this are worth freeing on a background
/// thread (Redis's `LAZYFREE_THRESHOLD`).
pub const LAZYFREE_THRESHOLD: usize = 64;

/// Receives values the store removed implicitly (expiry, overwrite) when
/// the matching lazyfree setting is on; it frees them in the background.
pub type FreeHook = Box<dyn Fn(CompactValue) + Send + Sync>;

/// State shared by every partition of one keyspace.
pub struct EvictShared {
    lazy_expire: AtomicBool,
    lazy_server_del: AtomicBool,
    free_hook: std::sync::OnceLock<FreeHook>,
    lfu: AtomicBool,
    /// The policy considers only keys with a TTL (`volatile-*`).
    volatile: AtomicBool,
    /// LRU tick (the entries hold its low byte).
    clock: AtomicU64,
    /// Wall-clock ms at which each of the last 256 ticks began.
    tick_start: Box<[AtomicU64]>,
    log_factor: AtomicU32,
    /// Minutes per LFU decay step (0 = no decay).
    decay_minutes: AtomicU64,
    /// Best pooled priority per partition (see module docs).
    best: Box<[AtomicU64]>,
    /// Some partition logged an expired key since the last
    /// `Keyspace::drain_expired` (lets callers skip the drain cheaply).
    pub(crate) expired_logged: AtomicBool,
    /// The same for the journal's log (`Keyspace::drain_journal_expired`).
    pub(crate) journal_logged: AtomicBool,
}

impl EvictShared {
    pub(crate) fn new(partitions: usize, now_ms: u64) -> EvictShared {
        EvictShared {
            lazy_expire: AtomicBool::new(false),
            lazy_server_del: AtomicBool::new(false),
            free_hook: std::sync::OnceLock::new(),
            lfu: AtomicBool::new(false),
            volatile: AtomicBool::new(false),
            clock: AtomicU64::new(0),
            // Tick 0 starts now; the bytes behind it stand for the seconds
            // before (byte 256 - k began k seconds ago), so a key loaded or
            // restored with an idle time gets its age right away
            // (`lru_byte_for_idle`) instead of at most the uptime.
            tick_start: (0..256u64)
                .map(|b| AtomicU64::new(now_ms.saturating_sub((256 - b) % 256 * 1000)))
                .collect(),
            log_factor: AtomicU32::new(10),
            decay_minutes: AtomicU64::new(1),
            best: (0..partitions)
                .map(|_| AtomicU64::new(PRIO_UNKNOWN))
                .collect(),
            expired_logged: AtomicBool::new(false),
            journal_logged: AtomicBool::new(false),
        }
    }

    /// Hands a value removed by expiry to the free hook when
    /// `lazyfree-lazy-expire` is on and the value is large; else drops it.
    #[inline]
    pub(crate) fn dispose_expired(&self, v: CompactValue) {
        self.dispose(v, &self.lazy_expire)
    }

    /// Same for a value replaced by a write (`lazyfree-lazy-server-del`).
    #[inline]
    pub(crate) fn dispose_overwritten(&self, e: &mut Entry) {
        if self.lazy_server_del.load(Relaxed) && e.value().collection_len() > LAZYFREE_THRESHOLD {
            if let Some(h) = self.free_hook.get() {
                h(e.set_value(CompactValue::from_int(0)));
            }
        }
    }

    fn dispose(&self, v: CompactValue, flag: &AtomicBool) {
        if flag.load(Relaxed) && v.collection_len() > LAZYFREE_THRESHOLD {
            if let Some(h) = self.free_hook.get() {
                return h(v);
            }
        }
        drop(v)
    }

    pub fn is_lfu(&self) -> bool {
        self.lfu.load(Relaxed)
    }

    pub fn clock(&self) -> u64 {
        self.clock.load(Relaxed)
    }

    pub(crate) fn set_lfu(&self, on: bool) {
        self.lfu.store(on, Relaxed);
    }

    pub(crate) fn set_lfu_params(&self, log_factor: u32, decay_minutes: u64) {
        self.log_factor.store(log_factor, Relaxed);
        self.decay_minutes.store(decay_minutes, Relaxed);
    }

    pub(crate) fn decay_minutes(&self) -> u64 {
        self.decay_minutes.load(Relaxed)
    }

    /// Starts a new tick at `now_ms`.
    pub(crate) fn tick(&self, now_ms: u64) {
        let next = self.clock() + 1;
        self.tick_start[(next & 255) as usize].store(now_ms, Relaxed);
        self.clock.store(next, Relaxed);
    }

    /// Milliseconds since the tick whose low byte is `b` began (LRU mode).
    pub fn idle_ms(&self, b: u8, now_ms: u64) -> u64 {
        now_ms.saturating_sub(self.tick_start[b as usize].load(Relaxed))
    }

    /// The LRU byte of a key last accessed `idle_ms` ago (an RDB file's
    /// `IDLE`, RESTORE's IDLETIME): the most recent tick that began at
    /// least that long ago. Ages beyond [`CLAMP_AGE`] ticks saturate there,
    /// as the sweep would clamp them (module docs).
    pub fn lru_byte_for_idle(&self, idle_ms: u64, now_ms: u64) -> u8 {
        let clock = self.clock();
        let target = now_ms.saturating_sub(idle_ms);
        for age in 0..=CLAMP_AGE as u64 {
            let b = clock.wrapping_sub(age) as u8;
            if self.tick_start[b as usize].load(Relaxed) <= target {
                return b;
            }
        }
        clock.wrapping_sub(CLAMP_AGE as u64) as u8
    }

    /// What touching a key does right now (read once per access).
    #[inline]
    pub(crate) fn toucher(&self) -> Toucher {
        if self.lfu.load(Relaxed) {
            Toucher::Lfu(self.log_factor.load(Relaxed))
        } else {
            Toucher::Lru(self.clock.load(Relaxed) as u8)
        }
    }

    pub(crate) fn publish(&self, part: usize, prio: u64) {
        self.best[part].store(prio, Relaxed);
    }

    /// Lowers `part`'s published figure to `prio` if that is lower.
    fn lower_published(&self, part: usize, prio: u64) {
        self.best[part].fetch_min(prio, Relaxed);
    }

    pub(crate) fn set_volatile(&self, on: bool) {
        self.volatile.store(on, Relaxed);
    }

    /// The partition whose best candidate should go first, scanning from
    /// `start` so ties rotate, and the lowest priority any *other*
    /// partition has published as known (PRIO_NONE if none): the bar that
    /// partition's round must meet (see [`Partition::evict_round`]). None if
    /// no partition has candidates. One pass over the published figures.
    pub fn pick_partition(&self, start: usize) -> Option<(usize, u64)> {
        let n = self.best.len();
        let mut pick = None;
        let mut lowest = PRIO_NONE;
        // The two lowest known figures and the partition of the lowest.
        let (mut k1, mut k1_part, mut k2) = (PRIO_NONE, usize::MAX, PRIO_NONE);
        for k in 0..n {
            let p = (start + k) % n;
            let v = self.best[p].load(Relaxed);
            // Strict: the first unknown partition from `start` wins.
            if v < lowest {
                lowest = v;
                pick = Some(p);
            }
            if v != PRIO_UNKNOWN {
                if v < k1 {
                    (k2, k1, k1_part) = (k1, v, p);
                } else if v < k2 {
                    k2 = v;
                }
            }
        }
        pick.map(|p| (p, if p == k1_part { k2 } else { k1 }))
    }

    /// Forgets every published priority (policy change, flush).
    pub fn reset_published(&self) {
        for b in self.best.iter() {
            b.store(PRIO_UNKNOWN, Relaxed);
        }
    }
}

/// The touch rule in effect for one access.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Toucher {
    Lru(u8),
    Lfu(u32),
}

impl Toucher {
    /// The byte of a key created now.
    #[inline]
    pub(crate) fn fresh(self) -> u8 {
        match self {
            Toucher::Lru(c) => c,
            Toucher::Lfu(_) => LFU_INIT_VAL,
        }
    }

    /// The byte after an access; `rand` is a uniform u32 (LFU only).
    #[inline]
    pub(crate) fn touched(self, old: u8, rand: u32) -> u8 {
        match self {
            Toucher::Lru(c) => c,
            Toucher::Lfu(f) => lfu_log_incr(old, f, rand),
        }
    }

    pub(crate) fn is_lfu(self) -> bool {
        matches!(self, Toucher::Lfu(_))
    }
}

/// Redis's logarithmic increment: +1 with probability
/// `1 / ((c - LFU_INIT_VAL) * factor + 1)`, `rand` uniform over u32.
#[inline]
pub fn lfu_log_incr(c: u8, factor: u32, rand: u32) -> u8 {
    if c == 255 {
        return 255;
    }
    // In u128: rand (< 2^32) times a denominator up to 255 * (2^32 - 1)
    // + 1 passes u64 (the fuzzer found it with a large lfu-log-factor).
    let base = c.saturating_sub(LFU_INIT_VAL) as u128;
    let denom = base * factor as u128 + 1;
    if (rand as u128) * denom < (1u128 << 32) {
        c + 1
    } else {
        c
    }
}

/// A small fast generator for sampling and LFU coin flips (per partition).
#[derive(Clone, Debug)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }
    #[inline]
    pub(crate) fn next(&mut self) -> u64 {
        // xorshift64*
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// One pooled candidate.
#[derive(Clone, Debug)]
struct Candidate {
    prio: u64,
    db: usize,
    key: Vec<u8>,
}

/// Per-partition eviction state (lives inside the partition, under its lock).
#[derive(Debug)]
pub(crate) struct PartEvict {
    pool: Vec<Candidate>,
    /// Buffers of dropped candidates, reused for new key copies.
    spare: Vec<Vec<u8>>,
    pub(crate) rng: Rng,
    /// Scan position for volatile sampling in sparse-TTL databases.
    volatile_cursor: u64,
}

impl PartEvict {
    pub(crate) fn new(seed: u64) -> PartEvict {
        PartEvict {
            pool: Vec::with_capacity(POOL_SIZE + 1),
            spare: Vec::new(),
            rng: Rng::new(seed),
            volatile_cursor: 0,
        }
    }

    pub(crate) fn clear(&mut self) {
        for c in self.pool.drain(..) {
            self.spare.push(c.key);
        }
    }

    pub(crate) fn best(&self) -> Option<u64> {
        self.pool.first().map(|c| c.prio)
    }

    /// Adds or updates a candidate, keeping the pool sorted (lowest first)
    /// and at most `POOL_SIZE` long.
    fn offer(&mut self, prio: u64, db: usize, key: &[u8]) {
        if let Some(i) = self.pool.iter().position(|c| c.db == db && c.key == key) {
            let mut c = self.pool.remove(i);
            c.prio = prio;
            let at = self.pool.partition_point(|x| x.prio <= prio);
            self.pool.insert(at, c);
            return;
        }
        if self.pool.len() == POOL_SIZE && self.pool[POOL_SIZE - 1].prio <= prio {
            return;
        }
        let mut buf = self.spare.pop().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(key);
        let at = self.pool.partition_point(|x| x.prio <= prio);
        self.pool.insert(at, Candidate { prio, db, key: buf });
        if self.pool.len() > POOL_SIZE {
            let c = self.pool.pop().unwrap();
            self.spare.push(c.key);
        }
    }
}

/// Priority of an entry under `rank` (lower = evict first). `clock` is the
/// current LRU tick.
#[inline]
pub(crate) fn priority(rank: Rank, e: &Entry, clock: u64) -> u64 {
    match rank {
        Rank::Lru => {
            let age = (clock as u8).wrapping_sub(e.value().evict_byte()) as u64;
            // +1 keeps real priorities above PRIO_UNKNOWN.
            clock.saturating_sub(age) + 1
        }
        Rank::Lfu => e.value().evict_byte() as u64 + 1,
        Rank::Ttl => e.expire_at().unwrap_or(u64::MAX - 1).max(1),
        Rank::Random => 1,
    }
}

/// What one eviction round on a partition did.
#[derive(Debug)]
pub enum Evicted {
    /// A key was removed: (database, entry).
    Key(usize, Entry),
    /// The chosen key had already expired and was removed as expired.
    Expired,
    /// The partition has no candidate for this policy.
    Nothing,
    /// The partition's best candidate ranks worse than another partition's
    /// (see [`Partition::evict_round`]); nothing was removed.
    Deferred,
}

impl crate::keyspace::Partition {
    /// A key was just created in `db` (LFU mode only; see the module docs):
    /// if its priority beats this partition's published figure, it becomes
    /// a pooled candidate and the figure drops to its priority.
    #[inline]
    pub(crate) fn note_created(&mut self, db: usize, key: &[u8], has_ttl: bool) {
        const PRIO: u64 = LFU_INIT_VAL as u64 + 1;
        let (part, shared, pool) = self.evict_parts();
        if shared.best[part].load(Relaxed) <= PRIO || (!has_ttl && shared.volatile.load(Relaxed)) {
            return;
        }
        pool.offer(PRIO, db, key);
        shared.lower_published(part, PRIO);
    }

    /// Samples up to `n` candidate entries of `db` and calls `f` on each.
    fn sample(
        &mut self,
        db: usize,
        volatile: bool,
        n: usize,
        mut f: impl FnMut(&mut PartEvict, &Entry),
    ) {
        let (d, ev) = self.db_and_evict(db);
        let Some(d) = d else { return };
        if d.is_empty() || (volatile && d.expires() == 0) {
            return;
        }
        if !volatile {
            // Every key is a candidate: one run of neighbouring slots
            // (`DashTable::random_run`) instead of n independent probes.
            let seed = ev.rng.next();
            d.table.random_run(seed, n, |e| f(ev, e));
            return;
        }
        if d.expires() * 8 >= d.len() {
            // Many keys have a TTL: random probes find them quickly.
            let mut got = 0;
            for _ in 0..n * 16 {
                let seed = ev.rng.next();
                if let Some(e) = d.table.random(seed) {
                    if !e.has_expire() {
                        continue;
                    }
                    f(ev, e);
                    got += 1;
                    if got == n {
                        break;
                    }
                }
            }
            if got > 0 {
                return;
            }
        }
        // Few keys have a TTL: walk the table from a resumable cursor and
        // take the volatile ones met, visiting a bounded number of buckets.
        let mut got = 0;
        let mut c = ev.volatile_cursor;
        let mut wrapped = false;
        for _ in 0..4096 {
            c = d.table.scan(c, |e| {
                if e.has_expire() {
                    f(ev, e);
                    got += 1;
                }
            });
            if c == 0 {
                if wrapped {
                    break;
                }
                wrapped = true;
            }
            if got >= n {
                break;
            }
        }
        ev.volatile_cursor = c;
    }

    /// One eviction round (see module docs). `now_ms` decides expiry.
    ///
    /// `bar`: the best priority another partition has published. When this
    /// partition's best candidate (after sampling) ranks worse, nothing is
    /// evicted ([`Evicted::Deferred`]): a partition whose published figure
    /// was unknown is sampled first, and must not evict a hot key of its own
    /// while another partition holds a colder one.
    pub fn evict_round(
        &mut self,
        policy: Policy,
        samples: usize,
        clock: u64,
        now_ms: u64,
        bar: u64,
    ) -> Evicted {
        let ndb = self.databases();
        let samples = samples.max(1);
        if policy.rank == Rank::Random {
            let dbs: Vec<usize> = (0..ndb)
                .filter(|&db| {
                    self.db(db).is_some_and(|d| {
                        if policy.volatile {
                            d.expires() > 0
                        } else {
                            !d.is_empty()
                        }
                    })
                })
                .collect();
            if dbs.is_empty() {
                return Evicted::Nothing;
            }
            let db = dbs[(self.evict_rng_next() % dbs.len() as u64) as usize];
            let mut key = None;
            self.sample(db, policy.volatile, 1, |_, e| key = Some(e.key().to_vec()));
            let Some(key) = key else {
                return Evicted::Nothing;
            };
            return match self.remove(db, &Key::new(&key), now_ms) {
                Some(e) => Evicted::Key(db, e),
                None => Evicted::Expired,
            };
        }
        for db in 0..ndb {
            self.sample(db, policy.volatile, samples, |ev, e| {
                let p = priority(policy.rank, e, clock);
                ev.offer(p, db, &e.key());
            });
        }
        if self.evict_state_ref().best().is_some_and(|b| b > bar) {
            return Evicted::Deferred;
        }
        // Pop the best still-valid candidate.
        for _ in 0..POOL_SIZE * 2 {
            if self.evict_state().pool.is_empty() {
                break;
            }
            let c = self.evict_state().pool.remove(0);
            let key = Key::new(&c.key);
            let current = self
                .get_raw(c.db, &key)
                .filter(|e| !policy.volatile || e.has_expire())
                .map(|e| priority(policy.rank, e, clock));
            match current {
                Some(p) if p <= c.prio => {
                    let out = match self.remove(c.db, &key, now_ms) {
                        Some(e) => Evicted::Key(c.db, e),
                        None => Evicted::Expired,
                    };
                    self.evict_state().spare.push(c.key);
                    return out;
                }
                // Accessed since it was sampled: back in with its new rank.
                Some(p) => {
                    let ev = self.evict_state();
                    ev.offer(p, c.db, &c.key);
                    ev.spare.push(c.key);
                }
                // Deleted meanwhile.
                None => self.evict_state().spare.push(c.key),
            }
        }
        Evicted::Nothing
    }

    /// Best pooled priority to publish after a round.
    pub fn evict_published(&self, had_candidates: bool) -> u64 {
        match self.evict_state_ref().best() {
            Some(p) => p,
            None if had_candidates => PRIO_UNKNOWN,
            None => PRIO_NONE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_incr_probability() {
        // counter at init: always increments.
        assert_eq!(lfu_log_incr(LFU_INIT_VAL, 10, u32::MAX), LFU_INIT_VAL + 1);
        assert_eq!(lfu_log_incr(255, 10, 0), 255);
        // The largest factor and counter with the largest draw: no overflow.
        assert_eq!(lfu_log_incr(254, u32::MAX, u32::MAX), 254);
        assert_eq!(lfu_log_incr(254, u32::MAX, 0), 255);
        // base 1, factor 10: p = 1/11.
        let mut rng = Rng::new(7);
        let n = 200_000;
        let hits = (0..n)
            .filter(|_| lfu_log_incr(LFU_INIT_VAL + 1, 10, rng.next() as u32) > LFU_INIT_VAL + 1)
            .count();
        let p = hits as f64 / n as f64;
        assert!((p - 1.0 / 11.0).abs() < 0.005, "{p}");
    }

    /// A key created after its partition last published (LFU) is seen by
    /// the next round: it goes before any frequently read key, whichever
    /// partition it lands in.
    #[test]
    fn lfu_new_key_is_evicted_before_frequent_keys() {
        use crate::keyspace::{Config, Keyspace};
        use crate::object::{CompactValue, Key};
        const NOW: u64 = 1_800_000_000_000;
        let ks = Keyspace::new(Config {
            partitions: 2,
            databases: 1,
        });
        ks.set_evict_mode(true, false, 10, 0);
        let part_of = |k: &[u8]| ks.partition_of_slot(crate::slot::key_slot(k));
        let put = |k: &[u8]| {
            ks.lock_partition(part_of(k)).insert(
                0,
                &Key::new(k),
                CompactValue::from_bytes(b"v"),
                None,
                NOW,
            )
        };
        let hot: Vec<Vec<u8>> = (0..80).map(|i| format!("hot:{i}").into_bytes()).collect();
        for k in &hot {
            put(k);
            for _ in 0..50 {
                ks.lock_partition(part_of(k)).get_read(0, &Key::new(k), NOW);
            }
        }
        assert!((0..2).all(|p| (0..80).any(|i| part_of(&hot[i]) == p)));
        let policy = Policy {
            rank: Rank::Lfu,
            volatile: false,
        };
        // Both partitions sample and publish (evicting a frequent key each:
        // there is nothing colder yet).
        for start in 0..2 {
            assert!(matches!(
                ks.evict_one(policy, 5, start, NOW),
                Evicted::Key(..)
            ));
        }
        for i in 0..20 {
            let cold = format!("cold:{i}").into_bytes();
            put(&cold);
            match ks.evict_one(policy, 5, i % 2, NOW) {
                Evicted::Key(_, e) => assert_eq!(&*e.key(), &cold[..], "round {i}"),
                other => panic!("round {i}: {other:?}"),
            }
        }
    }

    #[test]
    fn pool_keeps_lowest_sorted_and_unique() {
        let mut ev = PartEvict::new(1);
        for i in (0..40u64).rev() {
            ev.offer(i + 1, 0, format!("k{i}").as_bytes());
        }
        assert_eq!(ev.pool.len(), POOL_SIZE);
        let prios: Vec<u64> = ev.pool.iter().map(|c| c.prio).collect();
        assert_eq!(prios, (1..=POOL_SIZE as u64).collect::<Vec<_>>());
        // Updating an existing key moves it, no duplicate.
        ev.offer(100, 0, b"k0");
        assert_eq!(ev.pool.len(), POOL_SIZE);
        assert_eq!(ev.pool.iter().filter(|c| c.key == b"k0").count(), 1);
        assert_eq!(ev.pool.last().unwrap().key, b"k0");
    }
}

/// Resume point of the background sweep (clamp for LRU, decay for LFU).
#[derive(Debug, Default)]
pub struct SweepState {
    in_pass: bool,
    /// The pass being run is an LFU decay pass (else an LRU clamp pass).
    lfu_pass: bool,
    part: usize,
    db: usize,
    cursor: u64,
    /// Clock when the current pass began.
    pass_start: u64,
    /// Clock when the last complete LRU pass began (the tick gate).
    last_complete_start: u64,
    /// Counter decrement of the current LFU pass.
    decrement: u8,
    /// Last LFU decay epoch applied (minutes / decay time); 0 = not yet set.
    lfu_epoch: u64,
}

/// What [`crate::Keyspace::evict_sweep`] did.
#[derive(Clone, Copy, Debug, Default)]
pub struct SweepReport {
    pub visited: usize,
    pub adjusted: usize,
    /// A pass finished in this call.
    pub completed_pass: bool,
}

impl crate::keyspace::Keyspace {
    /// The shared eviction state (mode, clock, published candidates).
    pub fn evict_shared(&self) -> &EvictShared {
        &self.evict
    }

    /// Sets the metadata mode and LFU parameters (`maxmemory-policy`: LFU or
    /// not, volatile or not; `lfu-log-factor`, `lfu-decay-time`). A mode
    /// change restarts the sweep and the tick gate, and empties the
    /// candidate pools.
    pub fn set_evict_mode(&self, lfu: bool, volatile: bool, log_factor: u32, decay_minutes: u64) {
        self.evict.set_lfu_params(log_factor, decay_minutes);
        self.evict.set_volatile(volatile);
        if self.evict.is_lfu() == lfu {
            return;
        }
        let mut st = self.sweep.lock();
        self.evict.set_lfu(lfu);
        st.in_pass = false;
        st.last_complete_start = self.evict.clock();
        st.lfu_epoch = 0;
        drop(st);
        for p in 0..self.partitions() {
            self.lock_partition(p).evict_state().clear();
        }
        self.evict.reset_published();
    }

    /// Installs the background free hook (once; later calls are ignored).
    pub fn set_free_hook(&self, f: FreeHook) {
        let _ = self.evict.free_hook.set(f);
    }

    /// `lazyfree-lazy-expire` and `lazyfree-lazy-server-del`.
    pub fn set_lazy_free(&self, expire: bool, server_del: bool) {
        self.evict.lazy_expire.store(expire, Relaxed);
        self.evict.lazy_server_del.store(server_del, Relaxed);
    }

    /// Keys in all databases (one lock per partition).
    pub fn total_keys(&self) -> usize {
        (0..self.partitions())
            .map(|p| {
                let g = self.lock_partition(p);
                (0..self.databases()).map(|db| g.len(db)).sum::<usize>()
            })
            .sum()
    }

    /// OBJECT IDLETIME in milliseconds for an evict byte (LRU mode).
    pub fn idle_ms(&self, b: u8, now_ms: u64) -> u64 {
        self.evict.idle_ms(b, now_ms)
    }

    /// Advances the LRU clock by one tick unless that would break the
    /// no-wrap invariant (the sweep has not caught up). Returns whether it
    /// ticked.
    pub fn lru_try_tick(&self, now_ms: u64) -> bool {
        let st = self.sweep.lock();
        let clock = self.evict.clock();
        if !self.evict.is_lfu() && clock + 1 > st.last_complete_start + MAX_LEAD {
            return false;
        }
        self.evict.tick(now_ms);
        true
    }

    /// Ticks the clock is ahead of the last complete sweep pass (LRU).
    pub fn lru_lead(&self) -> u64 {
        let st = self.sweep.lock();
        self.evict.clock().saturating_sub(st.last_complete_start)
    }

    /// One eviction round: picks the partition with the best published
    /// candidate (rotating from `start` among ties), evicts from it and
    /// republishes. Returns the outcome and the partition used; `Nothing`
    /// only when no partition had a candidate.
    pub fn evict_one(&self, policy: Policy, samples: usize, start: usize, now_ms: u64) -> Evicted {
        let np = self.partitions();
        for attempt in 0..2 {
            let mut tried = 0;
            while let Some((p, colder)) = self.evict.pick_partition(start) {
                let clock = self.evict.clock();
                // Defer to a colder partition only in the first attempt and
                // while partitions are left to try, so eviction always ends.
                let bar = if attempt == 0 && tried < np {
                    colder
                } else {
                    PRIO_NONE
                };
                if self.is_stopped(p) {
                    // A stopped partition keeps its memory; evict elsewhere.
                    self.evict.publish(p, PRIO_NONE);
                    tried += 1;
                    if tried > np {
                        break;
                    }
                    continue;
                }
                let mut g = self.lock_partition(p);
                let r = g.evict_round(policy, samples, clock, now_ms, bar);
                let had = !matches!(r, Evicted::Nothing);
                self.evict.publish(p, g.evict_published(had));
                drop(g);
                if had && !matches!(r, Evicted::Deferred) {
                    return r;
                }
                tried += 1;
                if tried > np {
                    break;
                }
            }
            if attempt == 0 {
                // Every partition said "nothing": keys may have arrived since.
                self.evict.reset_published();
            }
        }
        Evicted::Nothing
    }

    /// One slice of the background sweep (module docs): clamps LRU ages or
    /// applies LFU decay, in chunks that hold one partition lock briefly,
    /// until `budget` runs out, offering the CPU every
    /// [`crate::pace::SLICE`] between chunks. Starts a pass only when one
    /// is due.
    pub fn evict_sweep(&self, budget: std::time::Duration, now_ms: u64) -> SweepReport {
        let mut rep = SweepReport::default();
        let Some(mut st) = self.sweep.try_lock() else {
            return rep;
        };
        let lfu = self.evict.is_lfu();
        if st.in_pass && st.lfu_pass != lfu {
            st.in_pass = false;
        }
        if !st.in_pass {
            if lfu {
                let dm = self.evict.decay_minutes();
                if dm == 0 {
                    return rep;
                }
                let epoch = now_ms / 60_000 / dm;
                if st.lfu_epoch == 0 || epoch < st.lfu_epoch {
                    st.lfu_epoch = epoch;
                    return rep;
                }
                if epoch == st.lfu_epoch {
                    return rep;
                }
                st.decrement = (epoch - st.lfu_epoch).min(255) as u8;
                st.lfu_epoch = epoch;
            } else if self.evict.clock() < st.last_complete_start + MAX_LEAD / 2 {
                return rep;
            }
            st.in_pass = true;
            st.lfu_pass = lfu;
            st.part = 0;
            st.db = 0;
            st.cursor = 0;
            st.pass_start = self.evict.clock();
        }
        let start = std::time::Instant::now();
        const CHUNK: usize = 1024;
        let np = self.partitions();
        let ndb = self.databases();
        let mut pacer = crate::pace::Pacer::new();
        while st.part < np {
            pacer.between_chunks();
            let clock = self.evict.clock() as u8;
            let dec = st.decrement;
            if self.is_stopped(st.part) {
                st.part += 1;
                st.db = 0;
                st.cursor = 0;
                continue;
            }
            let mut g = self.lock_partition(st.part);
            let mut cursor = st.cursor;
            let mut visited = 0;
            let mut adjusted = 0;
            if let Some((_, d)) = g.dbs_mut().find(|(i, _)| *i == st.db) {
                while visited < CHUNK {
                    cursor = d.table.scan_retain(cursor, |e| {
                        visited += 1;
                        let b = e.value().evict_byte();
                        let nb = if lfu {
                            b.saturating_sub(dec)
                        } else if clock.wrapping_sub(b) > CLAMP_AGE {
                            clock.wrapping_sub(CLAMP_AGE)
                        } else {
                            b
                        };
                        if nb != b {
                            e.set_evict_byte(nb);
                            adjusted += 1;
                        }
                        true
                    });
                    if cursor == 0 {
                        break;
                    }
                }
            } else {
                cursor = 0;
            }
            drop(g);
            rep.visited += visited;
            rep.adjusted += adjusted;
            st.cursor = cursor;
            if cursor == 0 {
                st.db += 1;
                if st.db == ndb {
                    st.db = 0;
                    st.part += 1;
                }
            }
            if st.part < np && start.elapsed() >= budget {
                return rep;
            }
        }
        st.in_pass = false;
        if !lfu {
            st.last_complete_start = st.pass_start;
        }
        rep.completed_pass = true;
        rep
    }
}
