//! `maxmemory`: evicting keys before a command that may grow memory runs.
//!
//! The settings (`maxmemory`, `maxmemory-policy`, `maxmemory-samples`,
//! `maxmemory-eviction-tenacity`, `lfu-*`, `lazyfree-lazy-eviction`,
//! `-expire`, `-server-del`) are mirrored into atomics here and into the
//! keyspace by [`Eviction::apply`], which runs at startup and right after
//! every successful CONFIG SET, so a change takes effect for the very next
//! command on every thread (worker settings snapshots refresh later).
//!
//! Flow, as in Redis 7.0: before a command with the `denyoom` flag (and
//! before queuing any command inside MULTI; EXEC counts as denyoom when a
//! queued command is), [`perform`] runs if `maxmemory > 0`. If `used_memory`
//! is over the limit it evicts keys chosen by the policy (see
//! `store::keyspace::evict` for the metadata byte and the candidate pools) until the
//! estimated bytes freed cover the excess, re-reading `used_memory` every 16
//! keys; it gives up with [`Outcome::Fail`] (the caller replies
//! `-OOM command not allowed when used memory > 'maxmemory'.`) under
//! `noeviction` or when no key qualifies (volatile policies without keys
//! with a TTL). A time limit from `maxmemory-eviction-tenacity` bounds one
//! call; the cron continues what is left ([`cron`]), as Redis's eviction
//! time proc does.
//! `used_memory` is not read at all when `maxmemory` is 0.
//!
//! `used_memory` is the counting allocator's exact sum (O(threads)), so
//! [`perform`] reads it fresh at every check.
//!
//! Every evicted key counts in `evicted_keys`, fires the `evicted` keyspace
//! event (class `e`) and invalidates WATCHes on it; its value is freed on the
//! lazyfree thread when `lazyfree-lazy-eviction` is on and it is large.
//!
//! The cron also drives the LRU clock ([`cron`]): a tick when a second has
//! passed, or sooner when the evictor has removed 1/64 of the keyspace since
//! the last tick (so the clock's resolution follows cache turnover); and it
//! runs the keyspace's clamp/decay sweep in short slices.

use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use store::keyspace::evict::Evicted;

use crate::kernel::eviction::store_policy;
use crate::kernel::server::Server;

/// What [`perform`] concluded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Under the limit (or no limit).
    Ok,
    /// Still over after the time limit, but progress was made: the command
    /// may run; the cron keeps evicting.
    Running,
    /// Over the limit and nothing can be evicted: reject denyoom commands.
    Fail,
}

/// Bytes an evicted entry gives back, as far as the store knows: its heap
/// blocks plus its table slot.
fn freed_estimate(e: &store::Entry) -> u64 {
    (e.heap_size() + std::mem::size_of::<store::Entry>()) as u64
}

/// Does this replica evict (`replica-ignore-maxmemory no`, and nothing
/// else holds the dataset still: no client pause, failover or shutdown
/// wait)? Its evictions reach its AOF, never the stream it proxies to its
/// own replicas.
fn replica_evicts(srv: &Server) -> bool {
    crate::services::replication::is_replica(srv)
        && srv.pause_state().until_ms == 0
        && !srv.replication.handover_active()
        && !srv.settings().repl.ignore_maxmemory
}

/// Evicts until `used_memory` is estimated under `maxmemory` (module docs).
/// `client_id`/`out` receive the client's own keyspace notifications.
pub fn perform(
    srv: &Server,
    notify_flags: u32,
    client_id: u64,
    out: &mut resp::ReplyBuf,
) -> Outcome {
    // Evicted keys are journaled (`DEL`/`UNLINK`) in order with writes.
    crate::services::journal::shared_section(srv, || {
        perform_inner(srv, notify_flags, client_id, out)
    })
}

fn perform_inner(
    srv: &Server,
    notify_flags: u32,
    client_id: u64,
    out: &mut resp::ReplyBuf,
) -> Outcome {
    let ev = &srv.eviction;
    let max = ev.maxmemory();
    if max == 0 {
        return Outcome::Ok;
    }
    // Clients are paused: the dataset must stay as it is (Redis 7.0 lets
    // commands run instead of evicting). A replica is its master's copy
    // and evicts nothing, unless `replica-ignore-maxmemory no`.
    if srv.keyspace.expiry_frozen() && !replica_evicts(srv) {
        return Outcome::Ok;
    }
    let used = ev.used();
    if used <= max {
        return Outcome::Ok;
    }
    let Some(policy) = store_policy(ev.policy.load(Relaxed)) else {
        // noeviction: over the limit, refuse.
        return Outcome::Fail;
    };
    let to_free = used - max;
    let samples = ev.samples.load(Relaxed) as usize;
    let lazy = ev.lazy.load(Relaxed);
    let limit = ev.time_limit();
    let start = Instant::now();
    let np = srv.keyspace.partitions();
    let mut freed = 0u64;
    let mut keys = 0u64;
    while freed < to_free {
        let rot = ev.rotor.fetch_add(1, Relaxed) % np;
        let now = crate::base::clock::unix_time_ms();
        match srv.keyspace.evict_one(policy, samples, rot, now) {
            Evicted::Key(db, e) => {
                let f = freed_estimate(&e);
                freed += f;
                keys += 1;
                evicted(srv, db, e, lazy, notify_flags, client_id, out);
            }
            // Memory came back through expiry (published by the cron).
            Evicted::Expired => keys += 1,
            // evict_one retries other partitions itself and never returns
            // Deferred; treated as "nothing" should that change.
            Evicted::Nothing | Evicted::Deferred => {
                // Nothing qualifies (e.g. volatile-* without TTL keys).
                return if ev.used() > max {
                    Outcome::Fail
                } else {
                    Outcome::Ok
                };
            }
        }
        if keys.is_multiple_of(16) {
            if ev.used() <= max {
                break;
            }
            if limit.is_some_and(|l| start.elapsed() >= l) {
                return Outcome::Running;
            }
        }
    }
    Outcome::Ok
}

/// Accounts for, announces and frees one evicted key.
fn evicted(
    srv: &Server,
    db: usize,
    e: store::Entry,
    lazy: bool,
    flags: u32,
    client_id: u64,
    out: &mut resp::ReplyBuf,
) {
    srv.stats.evicted_keys.fetch_add(1, Relaxed);
    srv.eviction.since_tick.fetch_add(1, Relaxed);
    let key = e.key();
    crate::services::journal::deleted(srv, db, &key, lazy);
    if srv.watches.any() {
        srv.watches.touch(Some(db), &key);
    }
    crate::services::tracking::evicted(srv, &key, client_id, out);
    srv.notify_keyspace_event(
        flags,
        crate::kernel::notify::Event {
            class: crate::kernel::notify::EVICTED,
            name: "evicted",
            key: &key,
            db,
        },
        client_id,
        out,
    );
    if lazy && crate::kernel::lazyfree::worth_lazy(&e) {
        srv.lazyfree.free_entries(vec![e], true);
    } else {
        drop(e);
    }
}

/// Cron work: the LRU clock, the clamp/decay sweep, and eviction left over
/// from a time-limited [`perform`] or a lowered `maxmemory`.
pub fn cron(srv: &Server) {
    let now = crate::base::clock::unix_time_ms();
    let ev = &srv.eviction;
    let ks = &srv.keyspace;
    // LRU clock.
    let since = ev.since_tick.load(Relaxed);
    let mut due = now >= ev.last_tick_ms.load(Relaxed) + 1000;
    if !due && since >= 256 {
        due = since >= (ks.total_keys() as u64 / 64).max(256);
    }
    if due && ks.lru_try_tick(now) {
        ev.last_tick_ms.store(now, Relaxed);
        ev.since_tick.store(0, Relaxed);
    }
    // Sweep: a short slice normally, more when the clock waits for it.
    let hz = srv.settings().hz.max(1);
    let period_us = 1_000_000 / hz;
    let lead = ks.lru_lead();
    let budget = if lead + 8 >= store::keyspace::evict::MAX_LEAD {
        period_us / 4
    } else {
        (period_us / 100).max(200)
    };
    ks.evict_sweep(Duration::from_micros(budget), now);
    // Leftover eviction.
    if ev.maxmemory() > 0 {
        let flags = srv.settings().notify_keyspace_events;
        let mut sink = resp::ReplyBuf::new(resp::Protocol::Resp2);
        perform(srv, flags, 0, &mut sink);
    }
}
