//! Server-wide counters reported by `INFO stats`, `INFO commandstats` and
//! `INFO errorstats`. Counters are relaxed atomics: exact totals, no ordering
//! between different counters. `CONFIG RESETSTAT` zeroes them.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use parking_lot::Mutex;

#[derive(Default, Debug)]
pub struct Stats {
    pub total_connections_received: AtomicU64,
    pub total_commands_processed: AtomicU64,
    pub rejected_connections: AtomicU64,
    pub net_input_bytes: AtomicU64,
    pub net_output_bytes: AtomicU64,
    pub total_error_replies: AtomicU64,
    pub unexpected_error_replies: AtomicU64,
    pub client_qbuf_limit_disconnections: AtomicU64,
    pub client_output_buffer_limit_disconnections: AtomicU64,
    /// Clients closed by `maxmemory-clients` (`evicted_clients`).
    pub evicted_clients: AtomicU64,
    pub total_reads_processed: AtomicU64,
    pub total_writes_processed: AtomicU64,
    /// Reply buffers the workers' periodic resize made smaller.
    pub reply_buffer_shrinks: AtomicU64,
    pub connected_clients: AtomicU64,
    pub blocked_clients: AtomicU64,
    pub pubsub_clients: AtomicU64,
    pub watching_clients: AtomicU64,
    /// Keyspace changes since the last save (INFO `rdb_changes_since_last_save`);
    /// the keyspace increments it for every modified key.
    pub dirty: AtomicU64,
    pub expired_keys: AtomicU64,
    pub evicted_keys: AtomicU64,
    pub keyspace_hits: AtomicU64,
    pub keyspace_misses: AtomicU64,
    /// Errors by prefix ("ERR", "WRONGTYPE", ...).
    pub errors: Mutex<BTreeMap<String, u64>>,
}

impl Stats {
    pub fn add(c: &AtomicU64, n: u64) {
        c.fetch_add(n, Relaxed);
    }

    pub fn count_error(&self, msg: &[u8]) {
        self.total_error_replies.fetch_add(1, Relaxed);
        let end = msg
            .iter()
            .position(|&b| b == b' ')
            .unwrap_or(msg.len())
            .min(128);
        let prefix = String::from_utf8_lossy(&msg[..end]).into_owned();
        let mut m = self.errors.lock();
        // Redis caps the error table at 128 distinct prefixes.
        if m.len() >= 128 && !m.contains_key(&prefix) {
            return;
        }
        *m.entry(prefix).or_insert(0) += 1;
    }

    pub fn reset(&self) {
        for c in [
            &self.total_connections_received,
            &self.total_commands_processed,
            &self.rejected_connections,
            &self.net_input_bytes,
            &self.net_output_bytes,
            &self.total_error_replies,
            &self.unexpected_error_replies,
            &self.client_qbuf_limit_disconnections,
            &self.client_output_buffer_limit_disconnections,
            &self.evicted_clients,
            &self.total_reads_processed,
            &self.total_writes_processed,
            &self.reply_buffer_shrinks,
            &self.expired_keys,
            &self.evicted_keys,
            &self.keyspace_hits,
            &self.keyspace_misses,
        ] {
            c.store(0, Relaxed);
        }
        self.errors.lock().clear();
    }
}

/// Per-command counters (`INFO commandstats`) and latency histogram
/// (`LATENCY HISTOGRAM`, `INFO latencystats`): bucket i counts calls that
/// took < 2^i microseconds... precisely, call duration in ns falls in
/// [2^i, 2^(i+1)).
#[derive(Debug)]
pub struct CommandStats {
    pub calls: AtomicU64,
    pub usec: AtomicU64,
    pub rejected_calls: AtomicU64,
    pub failed_calls: AtomicU64,
    pub histogram_ns: [AtomicU64; 64],
}

impl Default for CommandStats {
    fn default() -> Self {
        CommandStats {
            calls: AtomicU64::new(0),
            usec: AtomicU64::new(0),
            rejected_calls: AtomicU64::new(0),
            failed_calls: AtomicU64::new(0),
            histogram_ns: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }
}

impl CommandStats {
    pub fn record(&self, ns: u64, track_latency: bool) {
        self.calls.fetch_add(1, Relaxed);
        self.usec.fetch_add(ns / 1000, Relaxed);
        if track_latency {
            let b = 63 - ns.max(1).leading_zeros() as usize;
            self.histogram_ns[b].fetch_add(1, Relaxed);
        }
    }

    /// Like [`record`](Self::record) for a shard only this thread writes:
    /// plain loads and stores, no locked read-modify-write instructions.
    pub fn record_local(&self, ns: u64, track_latency: bool) {
        let bump = |c: &AtomicU64, n: u64| c.store(c.load(Relaxed).wrapping_add(n), Relaxed);
        bump(&self.calls, 1);
        bump(&self.usec, ns / 1000);
        if track_latency {
            let b = 63 - ns.max(1).leading_zeros() as usize;
            bump(&self.histogram_ns[b], 1);
        }
    }

    /// Adds another set of counters into this one (aggregating shards).
    pub fn add_from(&self, o: &CommandStats) {
        self.calls.fetch_add(o.calls.load(Relaxed), Relaxed);
        self.usec.fetch_add(o.usec.load(Relaxed), Relaxed);
        self.rejected_calls
            .fetch_add(o.rejected_calls.load(Relaxed), Relaxed);
        self.failed_calls
            .fetch_add(o.failed_calls.load(Relaxed), Relaxed);
        for (a, b) in self.histogram_ns.iter().zip(&o.histogram_ns) {
            a.fetch_add(b.load(Relaxed), Relaxed);
        }
    }

    pub fn reset(&self) {
        self.calls.store(0, Relaxed);
        self.usec.store(0, Relaxed);
        self.rejected_calls.store(0, Relaxed);
        self.failed_calls.store(0, Relaxed);
        for b in &self.histogram_ns {
            b.store(0, Relaxed);
        }
    }

    /// Latency at percentile `p` (0..=100) in microseconds, from the histogram
    /// (upper bound of the bucket it falls in).
    pub fn percentile_usec(&self, p: f64) -> f64 {
        let counts: Vec<u64> = self.histogram_ns.iter().map(|b| b.load(Relaxed)).collect();
        let total: u64 = counts.iter().sum();
        if total == 0 {
            return 0.0;
        }
        let want = ((p / 100.0) * total as f64).ceil().max(1.0) as u64;
        let mut acc = 0;
        for (i, c) in counts.iter().enumerate() {
            acc += c;
            if acc >= want {
                return (1u128 << (i + 1)) as f64 / 1000.0;
            }
        }
        0.0
    }
}
