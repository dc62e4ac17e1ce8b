//! `SLOWLOG`: a bounded log of commands slower than `slowlog-log-slower-than`
//! microseconds. Arguments are stored truncated as Redis does (at most 32
//! arguments, each at most 128 bytes), so an entry's memory is bounded.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use parking_lot::Mutex;

pub const SLOWLOG_ENTRY_MAX_ARGC: usize = 32;
pub const SLOWLOG_ENTRY_MAX_STRING: usize = 128;

#[derive(Clone, Debug)]
pub struct SlowEntry {
    pub id: u64,
    pub unix_time: i64,
    pub duration_us: u64,
    pub args: Vec<Vec<u8>>,
    pub peer: String,
    pub name: Vec<u8>,
}

#[derive(Default, Debug)]
pub struct SlowLog {
    next_id: AtomicU64,
    entries: Mutex<VecDeque<SlowEntry>>,
}

impl SlowLog {
    pub fn push(&self, args: &[&[u8]], duration_us: u64, peer: &str, name: &[u8], max_len: usize) {
        let mut stored = Vec::with_capacity(args.len().min(SLOWLOG_ENTRY_MAX_ARGC));
        for (i, a) in args.iter().enumerate() {
            if i == SLOWLOG_ENTRY_MAX_ARGC - 1 && args.len() > SLOWLOG_ENTRY_MAX_ARGC {
                stored.push(format!("... ({} more arguments)", args.len() - i).into_bytes());
                break;
            }
            if a.len() > SLOWLOG_ENTRY_MAX_STRING {
                let mut v = a[..SLOWLOG_ENTRY_MAX_STRING].to_vec();
                v.extend_from_slice(
                    format!("... ({} more bytes)", a.len() - SLOWLOG_ENTRY_MAX_STRING).as_bytes(),
                );
                stored.push(v);
            } else {
                stored.push(a.to_vec());
            }
        }
        let e = SlowEntry {
            id: self.next_id.fetch_add(1, Relaxed),
            unix_time: (crate::base::clock::unix_time_ms() / 1000) as i64,
            duration_us,
            args: stored,
            peer: peer.to_string(),
            name: name.to_vec(),
        };
        let mut q = self.entries.lock();
        q.push_front(e);
        while q.len() > max_len {
            q.pop_back();
        }
    }

    /// Newest first, at most `count`.
    pub fn get(&self, count: usize) -> Vec<SlowEntry> {
        self.entries.lock().iter().take(count).cloned().collect()
    }

    pub fn len(&self) -> usize {
        self.entries.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn reset(&self) {
        self.entries.lock().clear();
    }

    pub fn trim(&self, max_len: usize) {
        let mut q = self.entries.lock();
        while q.len() > max_len {
            q.pop_back();
        }
    }
}

/// `LATENCY LATEST/HISTORY/RESET`: per-event samples of operations that took at
/// least `latency-monitor-threshold` ms, 160 samples per event like Redis.
#[derive(Default, Debug)]
pub struct LatencyMonitor {
    events: Mutex<std::collections::BTreeMap<String, LatencyEvent>>,
}

#[derive(Default, Debug, Clone)]
pub struct LatencyEvent {
    /// (unix seconds, latency ms), oldest first.
    pub samples: VecDeque<(i64, u64)>,
    pub max: u64,
}

pub const LATENCY_HISTORY_LEN: usize = 160;

impl LatencyMonitor {
    pub fn add(&self, event: &str, ms: u64) {
        let now = (crate::base::clock::unix_time_ms() / 1000) as i64;
        let mut m = self.events.lock();
        let e = m.entry(event.to_string()).or_default();
        e.max = e.max.max(ms);
        if let Some(last) = e.samples.back_mut() {
            if last.0 == now {
                last.1 = last.1.max(ms);
                return;
            }
        }
        e.samples.push_back((now, ms));
        while e.samples.len() > LATENCY_HISTORY_LEN {
            e.samples.pop_front();
        }
    }

    pub fn snapshot(&self) -> Vec<(String, LatencyEvent)> {
        self.events
            .lock()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    pub fn get(&self, event: &str) -> Option<LatencyEvent> {
        self.events.lock().get(event).cloned()
    }

    /// Resets the given events (all when empty); returns how many were reset.
    pub fn reset(&self, events: &[String]) -> usize {
        let mut m = self.events.lock();
        if events.is_empty() {
            let n = m.len();
            m.clear();
            n
        } else {
            events
                .iter()
                .filter(|e| m.remove(e.as_str()).is_some())
                .count()
        }
    }
}
