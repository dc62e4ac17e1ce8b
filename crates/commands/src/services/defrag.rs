//! Active defragmentation (`activedefrag`): when the allocator holds many
//! more bytes in its pages than the program uses, live blocks are moved out
//! of sparse slabs so whole pages empty and go back to the OS.
//!
//! * **When and how hard** ([`cron`], every tick): fragmentation is
//!   jemalloc's `active / allocated` (INFO `allocator_frag_ratio`). A cycle
//!   is wanted while `activedefrag` is on, the excess is above
//!   `active-defrag-ignore-bytes` and the percentage above
//!   `active-defrag-threshold-lower`; its CPU share goes linearly from
//!   `active-defrag-cycle-min` at the lower threshold to
//!   `active-defrag-cycle-max` at `active-defrag-threshold-upper` (Redis's
//!   rule). A pass in progress only ever raises its effort.
//! * **The work** runs on its own thread, not in the cron or the workers:
//!   slices of about [`SLICE`] (the keyspace walk holds one partition lock
//!   at a time, for at most `store::keyspace::defrag::HOLD` in one go),
//!   each followed by a sleep that keeps the thread at its CPU share (at
//!   25%: 0.1 ms of work, 0.3 ms of sleep). Slices are short because a
//!   worker may share the thread's core, and a request that arrives during
//!   a slice waits for it: with 0.5 ms slices one GET per slice waited
//!   ~0.58 ms on a core shared with a busy-polling worker (BENCHMARKS.md,
//!   issue 23).
//!   The slice shrinks to [`SLICE_WHEN_BUSY`] while the workers' event
//!   loops have a slow moment (a loop pass of 1 ms or more running, or
//!   ended in the last 100 ms: `kernel::loop_busy`), so defrag never
//!   makes a slow moment slower; the CPU share stays the same.
//!   The walk resumes where the last slice stopped. At the end of a pass
//!   the thread publishes its time and waits for the cron's next decision:
//!   a new pass starts only while fragmentation is still above the
//!   threshold.
//! * **The move decision** is the allocator's (`collections::defrag`,
//!   installed by the binary); without it (a build on another allocator)
//!   nothing runs and INFO shows zeros.
//!
//! A pass has three stages. **The keyspace** (every value, key and table
//! block, below). **Other global structures** (as Redis 7 does after the
//! keyspace): the Pub/Sub registry's bucket arrays, channel-name buffers
//! and subscriber vectors (`kernel::pubsub`), one map's write lock at a
//! time for at most `pubsub::DEFRAG_BUCKETS` buckets, in the same slices.
//! **Client buffers**: connections belong to their worker threads, so the
//! pass only raises `DefragState::clients_pass`; each worker then offers
//! its connections' buffers (query and reply buffers, argument ranges,
//! watched keys, subscription names) a few connections per event-loop
//! pass, on its own thread, between commands (server's `worker/defrag.rs`).
//! All three count in `active_defrag_hits` / `misses`.
//!
//! Big collections move in steps (store's `object/defrag.rs`): a table
//! hash or set and a tree sorted set visit at most 64 elements per step
//! (`store::keyspace::defrag::FIELDS_PER_STEP`; fewer when
//! `active-defrag-max-scan-fields` is lower); a long list moves a fixed
//! 16 nodes per step (`LIST_NODES_PER_STEP`), not that many elements, its
//! node array in the first one; a stream one chunk of up to 64 nodes per
//! step, then the entry arrays of its groups' and consumers' PELs, 16
//! arrays (of up to 64 entries) per step. Every heap block a value owns is
//! offered; one above jemalloc's largest small class (14 KiB: e.g. the
//! node array of a list of more than ~450 nodes) has no slab and never
//! moves.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

use store::keyspace::defrag::{DefragCursor, KeyCounts};
use store::keyspace::Keyspace;

use crate::kernel::config::settings::DefragSettings;
use crate::kernel::defrag::DefragState;
use crate::kernel::pubsub::{PubSub, PubSubDefragCursor, DEFRAG_BUCKETS};
use crate::kernel::server::Server;

/// Work per slice.
pub const SLICE: Duration = Duration::from_micros(100);

/// Work per slice while the event loops are having a slow moment
/// (`kernel::loop_busy`): a worker that waits for the partition the slice
/// holds waits at most this long.
pub const SLICE_WHEN_BUSY: Duration = Duration::from_micros(50);

/// The slice for the loops' current state.
fn slice_now() -> Duration {
    if crate::kernel::loop_busy::busy() {
        SLICE_WHEN_BUSY
    } else {
        SLICE
    }
}

/// The CPU percentage a cycle should use for this fragmentation, 0 when no
/// cycle is wanted (see the module docs). `frag_pct` is
/// `(active / allocated - 1) * 100`, `frag_bytes` is `active - allocated`.
pub fn effort(s: &DefragSettings, frag_pct: f64, frag_bytes: i64) -> u32 {
    if !s.enabled || frag_bytes <= 0 || (frag_bytes as u64) < s.ignore_bytes {
        return 0;
    }
    if frag_pct < s.threshold_lower as f64 {
        return 0;
    }
    let (lo, hi) = (s.threshold_lower as f64, s.threshold_upper as f64);
    let (cmin, cmax) = (s.cycle_min as f64, s.cycle_max.max(s.cycle_min) as f64);
    let pct = if hi <= lo {
        cmax
    } else {
        cmin + (cmax - cmin) * ((frag_pct - lo) / (hi - lo))
    };
    pct.clamp(cmin, cmax).round() as u32
}

/// Cron step: decides the effort and starts the thread the first time a
/// cycle is wanted.
pub fn cron(srv: &Server) {
    let s = srv.settings().defrag;
    let st = &srv.defrag;
    st.max_scan_fields.store(s.max_scan_fields, Relaxed);
    if !s.enabled {
        st.target_pct.store(0, Relaxed);
        return;
    }
    if !collections::defrag::available() {
        return;
    }
    let a = (crate::kernel::memprobe::probe().stats)();
    let frag_bytes = a.active as i64 - a.allocated as i64;
    let frag_pct = if a.allocated == 0 {
        0.0
    } else {
        (a.active as f64 / a.allocated as f64 - 1.0) * 100.0
    };
    let want = effort(&s, frag_pct, frag_bytes);
    let running = st.running_pct.load(Relaxed);
    // A pass in progress only raises its effort; it ends on its own.
    let target = if running > 0 { want.max(running) } else { want };
    st.target_pct.store(target, Relaxed);
    if target > 0 && !st.started.swap(true, Relaxed) {
        let ks = srv.keyspace.clone();
        let ps = srv.pubsub.clone();
        let st = srv.defrag.clone();
        let spawned = std::thread::Builder::new()
            .name("defrag".into())
            .spawn(move || run(&ks, &ps, &st));
        if spawned.is_err() {
            srv.defrag.started.store(false, Relaxed);
        }
    }
}

/// Runs the registry stage from `cur` for about `slice`, one bounded step
/// (one map lock) at a time. True when the stage finished (and `cur` is
/// back at the start).
pub fn pubsub_slice(
    ps: &PubSub,
    cur: &mut PubSubDefragCursor,
    slice: Duration,
    d: &mut collections::defrag::Defrag,
) -> bool {
    let t0 = Instant::now();
    loop {
        if ps.defrag_step(cur, DEFRAG_BUCKETS, d) {
            return true;
        }
        if t0.elapsed() >= slice {
            return false;
        }
    }
}

/// The defrag thread: passes while the cron wants them (see the module
/// docs). Never returns.
fn run(ks: &Keyspace, ps: &PubSub, st: &DefragState) {
    let Some(mut d) = collections::defrag::Defrag::new() else {
        return;
    };
    let mut cur = DefragCursor::default();
    let mut ps_cur = PubSubDefragCursor::default();
    // The keyspace stage is done; the registry's is running.
    let mut in_registry = false;
    let mut pass_start: Option<Instant> = None;
    let (mut seen_hits, mut seen_misses) = (0u64, 0u64);
    loop {
        let pct = st.target_pct.load(Relaxed);
        if pct == 0 && pass_start.is_none() {
            std::thread::sleep(Duration::from_millis(50));
            continue;
        }
        if pass_start.is_none() {
            pass_start = Some(Instant::now());
            st.pass_started_ms
                .store(crate::base::clock::unix_time_ms(), Relaxed);
        }
        let pct = pct.clamp(1, 99);
        st.running_pct.store(pct, Relaxed);
        let t0 = Instant::now();
        let mut keys = KeyCounts::default();
        let fields = st.max_scan_fields.load(Relaxed);
        if fields > 0 {
            cur.set_max_fields(usize::try_from(fields).unwrap_or(usize::MAX));
        }
        let done = if in_registry {
            let done = pubsub_slice(ps, &mut ps_cur, slice_now(), &mut d);
            if done {
                in_registry = false;
                // The last stage is the workers': each offers its
                // connections' buffers when it sees the new number.
                st.clients_pass.fetch_add(1, Relaxed);
            }
            done
        } else {
            in_registry = ks.defrag_slice(&mut cur, slice_now(), &mut d, &mut keys);
            false
        };
        let spent = t0.elapsed();
        st.hits.fetch_add(d.hits - seen_hits, Relaxed);
        st.misses.fetch_add(d.misses - seen_misses, Relaxed);
        (seen_hits, seen_misses) = (d.hits, d.misses);
        st.key_hits.fetch_add(keys.hits, Relaxed);
        st.key_misses.fetch_add(keys.misses, Relaxed);
        if done {
            if let Some(t) = pass_start.take() {
                st.total_us
                    .fetch_add(t.elapsed().as_micros() as u64, Relaxed);
            }
            st.passes.fetch_add(1, Relaxed);
            st.pass_started_ms.store(0, Relaxed);
            st.running_pct.store(0, Relaxed);
            // The next pass waits for the cron to see the new figures.
            st.target_pct.store(0, Relaxed);
        }
        // Duty cycle: `spent` of work is pct% of the period.
        let sleep = spent.mul_f64((100 - pct) as f64 / pct as f64);
        std::thread::sleep(sleep.max(Duration::from_micros(50)));
    }
}

/// INFO stats fields of active defragmentation, Redis's names.
pub fn info_stats(st: &Arc<DefragState>) -> [(&'static str, u64); 6] {
    let started = st.pass_started_ms.load(Relaxed);
    let now = crate::base::clock::unix_time_ms();
    let current = if started == 0 {
        0
    } else {
        now.saturating_sub(started)
    };
    let running = current;
    [
        ("active_defrag_hits", st.hits.load(Relaxed)),
        ("active_defrag_misses", st.misses.load(Relaxed)),
        ("active_defrag_key_hits", st.key_hits.load(Relaxed)),
        ("active_defrag_key_misses", st.key_misses.load(Relaxed)),
        (
            "total_active_defrag_time",
            st.total_us.load(Relaxed) / 1000 + running,
        ),
        ("current_active_defrag_time", current),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn effort_follows_redis_rule() {
        let on = DefragSettings {
            enabled: true,
            ..DefragSettings::default()
        };
        let big = 200 << 20;
        assert_eq!(effort(&DefragSettings::default(), 50.0, big), 0, "off");
        assert_eq!(effort(&on, 50.0, 10 << 20), 0, "under ignore-bytes");
        assert_eq!(effort(&on, 9.0, big), 0, "under the lower threshold");
        assert_eq!(effort(&on, 10.0, big), 1);
        assert_eq!(effort(&on, 55.0, big), 13);
        assert_eq!(effort(&on, 100.0, big), 25);
        assert_eq!(effort(&on, 400.0, big), 25);
    }
}
