//! Periodic server work, called `hz` times a second from the cron thread:
//! ending expired CLIENT PAUSE, sampling the instantaneous metrics of
//! `INFO stats` and the memory peak of `INFO memory`, and (as the keyspace
//! lands) active expiry in short time-budgeted steps.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use parking_lot::Mutex;

use crate::server::Server;

/// Samples kept per metric, as Redis's `STATS_METRIC_SAMPLES`.
pub const METRIC_SAMPLES: usize = 16;
/// Minimum spacing of samples, as Redis's 100 ms `run_with_period`.
const SAMPLE_PERIOD_MS: u64 = 100;

/// A rate tracked from periodic samples of a monotonically growing counter.
#[derive(Default, Debug)]
struct Rate {
    last_ms: u64,
    last_value: u64,
    samples: [f64; METRIC_SAMPLES],
    idx: usize,
}

impl Rate {
    fn sample(&mut self, now_ms: u64, value: u64) {
        if self.last_ms != 0 && now_ms > self.last_ms {
            let dt = (now_ms - self.last_ms) as f64;
            let dv = value.saturating_sub(self.last_value) as f64;
            self.samples[self.idx] = dv * 1000.0 / dt;
            self.idx = (self.idx + 1) % METRIC_SAMPLES;
        }
        self.last_ms = now_ms;
        self.last_value = value;
    }

    fn average(&self) -> f64 {
        self.samples.iter().sum::<f64>() / METRIC_SAMPLES as f64
    }
}

#[derive(Default, Debug)]
struct Rates {
    ops: Rate,
    net_in: Rate,
    net_out: Rate,
}

/// Sampled metrics reported by INFO.
#[derive(Default, Debug)]
pub struct Metrics {
    rates: Mutex<Rates>,
    last_sample_ms: AtomicU64,
    /// Highest `used_memory` seen by cron or INFO.
    pub peak_memory: AtomicU64,
}

impl Metrics {
    /// Operations per second over the last ~1.6 s.
    pub fn ops_per_sec(&self) -> u64 {
        self.rates.lock().ops.average() as u64
    }
    /// Network input in KB/s.
    pub fn input_kbps(&self) -> f64 {
        self.rates.lock().net_in.average() / 1024.0
    }
    /// Network output in KB/s.
    pub fn output_kbps(&self) -> f64 {
        self.rates.lock().net_out.average() / 1024.0
    }
    /// Records `used` as the peak if it is higher; returns the peak.
    pub fn note_memory(&self, used: u64) -> u64 {
        self.peak_memory.fetch_max(used, Relaxed).max(used)
    }
}

/// The process-wide metrics (one server per process).
pub fn metrics() -> &'static Metrics {
    static M: std::sync::OnceLock<Metrics> = std::sync::OnceLock::new();
    M.get_or_init(Metrics::default)
}

fn sample_metrics(srv: &Server, now_ms: u64) {
    // The first tick runs before any client could add data: that is the
    // baseline INFO reports as used_memory_startup.
    crate::info::note_startup_memory();
    let m = metrics();
    let last = m.last_sample_ms.load(Relaxed);
    if now_ms < last + SAMPLE_PERIOD_MS {
        return;
    }
    m.last_sample_ms.store(now_ms, Relaxed);
    let mut r = m.rates.lock();
    r.ops.sample(now_ms, srv.table.total_calls());
    r.net_in
        .sample(now_ms, srv.stats.net_input_bytes.load(Relaxed));
    r.net_out
        .sample(now_ms, srv.stats.net_output_bytes.load(Relaxed));
    drop(r);
    m.note_memory(crate::info::used_memory());
}

pub fn tick(srv: &Server) {
    let now = crate::util::unix_time_ms();
    static LAST_SECOND_S: AtomicU64 = AtomicU64::new(0);
    if LAST_SECOND_S.swap(now / 1000, Relaxed) != now / 1000 {
        crate::lazyfree::idle_allocator_threads();
        srv.keyspace.release_empty_dbs();
    }
    let p = srv.pause_state();
    if p.until_ms != 0 && p.until_ms <= now {
        srv.set_pause(crate::server::Pause::default());
    }
    sample_metrics(srv, now);
    active_expire(srv);
    crate::eviction::cron(srv);
    crate::keys::publish_expired(srv);
}

/// Redis's slow cycle spends at most 25% of each `1/hz` period on expiry.
const ACTIVE_EXPIRE_CPU_PERCENT: u64 = 25;

/// Reclaims expired keys no client touches. The keyspace works in chunks
/// that hold one partition lock for a few microseconds, so clients never wait
/// for the whole cycle.
fn active_expire(srv: &Server) {
    let hz = srv.settings().hz.max(1);
    let budget = std::time::Duration::from_micros(1_000_000 / hz * ACTIVE_EXPIRE_CPU_PERCENT / 100);
    srv.keyspace
        .active_expire_cycle(budget, crate::util::unix_time_ms());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_average() {
        let mut r = Rate::default();
        r.sample(1000, 0);
        for i in 1..=METRIC_SAMPLES as u64 {
            r.sample(1000 + i * 100, i * 50);
        }
        assert!((r.average() - 500.0).abs() < 1e-9);
    }
}
