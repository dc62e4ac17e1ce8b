//! Periodic server work, called `hz` times a second from the cron thread:
//! ending expired CLIENT PAUSE, sampling the instantaneous metrics of
//! `INFO stats` and the memory peak of `INFO memory`, and (as the keyspace
//! lands) active expiry in short time-budgeted steps.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::kernel::server::Server;

fn sample_metrics(srv: &Server, now_ms: u64) {
    // The first tick runs before any client could add data: that is the
    // baseline INFO reports as used_memory_startup.
    crate::kernel::memprobe::note_startup_memory();
    crate::kernel::metrics::metrics().sample(
        now_ms,
        srv.table.total_calls(),
        srv.stats.net_input_bytes.load(Relaxed),
        srv.stats.net_output_bytes.load(Relaxed),
        crate::kernel::memprobe::used_memory(),
    );
}

pub fn tick(srv: &Server) {
    if srv.cron_paused.load(Relaxed) {
        return;
    }
    let now = crate::base::clock::unix_time_ms();
    static LAST_SECOND_S: AtomicU64 = AtomicU64::new(0);
    if LAST_SECOND_S.swap(now / 1000, Relaxed) != now / 1000 {
        crate::base::sched::idle_allocator_threads();
        srv.keyspace.release_empty_dbs();
        crate::services::migrate::close_idle();
    }
    srv.end_passed_pauses(now);
    sample_metrics(srv, now);
    // While the dataset loads (clients get -LOADING), nothing may change
    // it but the loader, as in Redis: no active expiry (an AOF replays at
    // time 0 and may touch keys whose TTL passed), no eviction, no save.
    if srv.persistence.is_loading() {
        return;
    }
    active_expire(srv);
    crate::services::replication::expire_local_keys(srv);
    crate::services::eviction::cron(srv);
    crate::services::defrag::cron(srv);
    crate::services::snapshot::cron(srv);
    crate::services::aof::cron_sync(srv);
    crate::services::aof::cron(srv);
    crate::services::tracking::expired(srv, None);
    crate::services::expiry::publish_expired(srv);
    crate::services::tracking::end_of_loop(srv, srv.settings().tracking_table_max_keys);
}

/// Redis's slow cycle spends at most 25% of each `1/hz` period on expiry,
/// 2% more per step of `active-expire-effort` above 1.
fn active_expire_cpu_percent(effort: u8) -> u64 {
    25 + 2 * (effort.clamp(1, 10) as u64 - 1)
}

/// Reclaims expired keys no client touches. The keyspace works in chunks
/// that hold one partition lock for a few microseconds, so clients never wait
/// for the whole cycle.
fn active_expire(srv: &Server) {
    let s = srv.settings();
    let hz = s.hz.max(1);
    let percent = active_expire_cpu_percent(s.active_expire_effort);
    let budget = std::time::Duration::from_micros(1_000_000 / hz * percent / 100);
    // Each chunk holds the journal's order lock (shared) and journals its
    // deletions before letting go (services::journal).
    srv.keyspace.active_expire_cycle_with(
        budget,
        crate::base::clock::unix_time_ms(),
        &mut |step| crate::services::journal::shared_section(srv, step),
    );
}
