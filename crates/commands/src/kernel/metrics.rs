//! The instantaneous metrics of `INFO stats` (ops/s, network KB/s) sampled
//! by the cron, and the `used_memory` peak of `INFO memory`.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use parking_lot::Mutex;

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
    /// Takes one sample of each rate (at most every 100 ms, as Redis's
    /// `run_with_period`): `ops` commands processed, network bytes in and out,
    /// all counters that only grow; and records `used_memory` for the peak.
    pub fn sample(&self, now_ms: u64, ops: u64, net_in: u64, net_out: u64, used: u64) {
        let last = self.last_sample_ms.load(Relaxed);
        if now_ms < last + SAMPLE_PERIOD_MS {
            return;
        }
        self.last_sample_ms.store(now_ms, Relaxed);
        let mut r = self.rates.lock();
        r.ops.sample(now_ms, ops);
        r.net_in.sample(now_ms, net_in);
        r.net_out.sample(now_ms, net_out);
        drop(r);
        self.note_memory(used);
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
