//! The state of active defragmentation, shared by the cron (which decides
//! how hard it should work), the defrag thread (which does the work, see
//! `services::defrag`) and INFO (which reports it).
//!
//! Invariants:
//! * `target_pct` is written only by the cron: 0 means "no cycle wanted",
//!   otherwise the CPU percentage the thread may use.
//! * `running_pct` is written only by the thread: the effort of the pass
//!   in progress, 0 between passes (INFO `active_defrag_running`).
//! * The counters only grow (until CONFIG RESETSTAT).

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};

#[derive(Default)]
pub struct DefragState {
    pub target_pct: AtomicU32,
    pub running_pct: AtomicU32,
    /// Blocks moved / looked at and left.
    pub hits: AtomicU64,
    pub misses: AtomicU64,
    /// Keys where some block moved / none did.
    pub key_hits: AtomicU64,
    pub key_misses: AtomicU64,
    /// Microseconds spent in finished passes, and when the running pass
    /// started (unix ms, 0 when none runs).
    pub total_us: AtomicU64,
    pub pass_started_ms: AtomicU64,
    /// Passes finished.
    pub passes: AtomicU64,
    /// The thread was started.
    pub started: AtomicBool,
    /// `active-defrag-max-scan-fields` as the cron last read it (0: not
    /// yet read): elements of a big collection per defrag step.
    pub max_scan_fields: AtomicU64,
    /// Passes that asked the workers to offer their connections' buffers
    /// (raised at the end of each pass, after the keyspace and the Pub/Sub
    /// registry). Each worker compares it with the last one it served and
    /// walks its connections in bounded steps between event-loop passes,
    /// adding its moves to `hits` and `misses`.
    pub clients_pass: AtomicU64,
}

impl DefragState {
    /// CONFIG RESETSTAT: the counters back to zero.
    pub fn reset_stats(&self) {
        for c in [
            &self.hits,
            &self.misses,
            &self.key_hits,
            &self.key_misses,
            &self.total_us,
        ] {
            c.store(0, Relaxed);
        }
    }
}
