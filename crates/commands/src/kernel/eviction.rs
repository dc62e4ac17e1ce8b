//! `maxmemory` state: the live eviction settings mirrored into atomics (and
//! into the keyspace) by [`Eviction::apply`], the policy names, and the
//! counters the eviction service and its cron sweep keep. The eviction
//! itself is `crate::services::eviction`.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::time::Duration;

use store::keyspace::evict::{Policy, Rank};

use crate::kernel::config::POLICY_NAMES;

pub const NOEVICTION: usize = 7;

/// The store's view of a policy (None for noeviction).
pub fn store_policy(index: usize) -> Option<Policy> {
    let (rank, volatile) = match *POLICY_NAMES.get(index)? {
        "volatile-lru" => (Rank::Lru, true),
        "volatile-lfu" => (Rank::Lfu, true),
        "volatile-random" => (Rank::Random, true),
        "volatile-ttl" => (Rank::Ttl, true),
        "allkeys-lru" => (Rank::Lru, false),
        "allkeys-lfu" => (Rank::Lfu, false),
        "allkeys-random" => (Rank::Random, false),
        _ => return None,
    };
    Some(Policy { rank, volatile })
}

/// Is `index` one of the LFU policies (OBJECT FREQ works, IDLETIME errors)?
pub fn is_lfu(index: usize) -> bool {
    matches!(
        store_policy(index),
        Some(Policy {
            rank: Rank::Lfu,
            ..
        })
    )
}

/// Live eviction settings and counters.
#[derive(Debug)]
pub struct Eviction {
    pub maxmemory: AtomicU64,
    pub policy: AtomicUsize,
    pub samples: AtomicU32,
    pub tenacity: AtomicU32,
    pub lazy: AtomicBool,
    /// Keys evicted since the last LRU tick.
    pub since_tick: AtomicU64,
    pub last_tick_ms: AtomicU64,
    /// Rotating start for partition ties.
    pub rotor: AtomicUsize,
}

impl Default for Eviction {
    fn default() -> Self {
        Eviction {
            maxmemory: AtomicU64::new(0),
            policy: AtomicUsize::new(NOEVICTION),
            samples: AtomicU32::new(5),
            tenacity: AtomicU32::new(10),
            lazy: AtomicBool::new(false),
            since_tick: AtomicU64::new(0),
            last_tick_ms: AtomicU64::new(0),
            rotor: AtomicUsize::new(0),
        }
    }
}

impl Eviction {
    /// Mirrors the settings into this struct and the keyspace.
    pub fn apply(&self, s: &crate::kernel::config::Settings, ks: &store::Keyspace) {
        self.maxmemory.store(s.maxmemory, Relaxed);
        self.policy.store(s.maxmemory_policy, Relaxed);
        self.samples.store(s.maxmemory_samples.max(1), Relaxed);
        self.tenacity.store(s.maxmemory_eviction_tenacity, Relaxed);
        self.lazy.store(s.lazyfree_lazy_eviction, Relaxed);
        ks.set_evict_mode(
            is_lfu(s.maxmemory_policy),
            store_policy(s.maxmemory_policy).is_some_and(|p| p.volatile),
            s.lfu_log_factor,
            s.lfu_decay_time,
        );
        ks.set_lazy_free(s.lazyfree_lazy_expire, s.lazyfree_lazy_server_del);
    }

    /// `used_memory`, exact.
    pub fn used(&self) -> u64 {
        crate::kernel::memprobe::used_memory()
    }

    pub fn maxmemory(&self) -> u64 {
        self.maxmemory.load(Relaxed)
    }

    pub fn policy_name(&self) -> &'static str {
        POLICY_NAMES[self.policy.load(Relaxed)]
    }

    pub fn is_lfu(&self) -> bool {
        is_lfu(self.policy.load(Relaxed))
    }

    /// May a new integer value be one of the shared integers? Redis does
    /// not share them while `maxmemory` is set with an LRU or LFU policy
    /// (each key then needs its own access clock): such values are made
    /// integers of their own ([`store::CompactValue::unshare_int`]).
    pub fn shares_integers(&self) -> bool {
        self.maxmemory() == 0
            || !matches!(
                store_policy(self.policy.load(Relaxed)),
                Some(Policy {
                    rank: Rank::Lru | Rank::Lfu,
                    ..
                })
            )
    }

    /// `v` as a newly created string value: an integer of its own when
    /// integers are not shared now (see [`Eviction::shares_integers`]).
    pub fn new_value(&self, mut v: store::CompactValue) -> store::CompactValue {
        if v.is_int() && !self.shares_integers() {
            v.unshare_int();
        }
        v
    }

    /// Redis's `evictionTimeLimitUs`: 50 µs per tenacity step up to 10,
    /// then growing 15% per step; 100 means no limit.
    pub fn time_limit(&self) -> Option<Duration> {
        let t = self.tenacity.load(Relaxed);
        if t >= 100 {
            return None;
        }
        let us = if t <= 10 {
            50.0 * t as f64
        } else {
            500.0 * 1.15f64.powi(t as i32 - 10)
        };
        Some(Duration::from_micros(us as u64))
    }
}
