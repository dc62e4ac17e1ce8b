//! How busy the workers' event loops are, for background work that must
//! not make a slow moment slower (active defrag shrinks its slice).
//!
//! Each worker marks the start of a loop pass (its poll returned events)
//! and its end (it is about to poll again). A pass longer than
//! [`SLOW_PASS`] is a *slow moment*; its end time is remembered.
//!
//! Invariants:
//! * Only worker `i` writes slot `i`; readers see a slightly stale but
//!   never torn value (one atomic per field).
//! * A slot's `since_us` is 0 while its worker waits in poll (or has never
//!   run); otherwise it is the monotonic microsecond its pass began.
//! * Workers beyond [`MAX_WORKERS`] are not tracked (the `threads`
//!   setting stays far below it).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Slots for this many workers.
pub const MAX_WORKERS: usize = 256;

/// A loop pass at least this long is a slow moment.
pub const SLOW_PASS: Duration = Duration::from_millis(1);

/// How long after a slow moment the loops still count as busy.
pub const BUSY_AFTER_SLOW: Duration = Duration::from_millis(100);

struct Slot {
    since_us: AtomicU64,
}

static SLOTS: [Slot; MAX_WORKERS] = [const {
    Slot {
        since_us: AtomicU64::new(0),
    }
}; MAX_WORKERS];

/// When the last slow pass ended (monotonic microseconds, 0: never).
static LAST_SLOW_END_US: AtomicU64 = AtomicU64::new(0);

fn now_us() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    // +1 so that 0 keeps meaning "not in a pass".
    START.get_or_init(Instant::now).elapsed().as_micros() as u64 + 1
}

/// Worker `worker` starts a loop pass.
pub fn pass_begins(worker: usize) {
    pass_begins_at(worker, now_us());
}

/// Worker `worker` ends its loop pass (about to poll).
pub fn pass_ends(worker: usize) {
    pass_ends_at(worker, now_us());
}

/// Are the event loops having a slow moment: a pass running for at least
/// [`SLOW_PASS`] now, or one that ended less than [`BUSY_AFTER_SLOW`] ago?
pub fn busy() -> bool {
    busy_at(now_us())
}

fn pass_begins_at(worker: usize, now: u64) {
    if let Some(s) = SLOTS.get(worker) {
        s.since_us.store(now, Relaxed);
    }
}

fn pass_ends_at(worker: usize, now: u64) {
    let Some(s) = SLOTS.get(worker) else {
        return;
    };
    let since = s.since_us.swap(0, Relaxed);
    if since != 0 && now.saturating_sub(since) >= SLOW_PASS.as_micros() as u64 {
        LAST_SLOW_END_US.fetch_max(now, Relaxed);
    }
}

fn busy_at(now: u64) -> bool {
    let last = LAST_SLOW_END_US.load(Relaxed);
    if last != 0 && now.saturating_sub(last) < BUSY_AFTER_SLOW.as_micros() as u64 {
        return true;
    }
    let slow = SLOW_PASS.as_micros() as u64;
    SLOTS.iter().any(|s| {
        let since = s.since_us.load(Relaxed);
        since != 0 && now.saturating_sub(since) >= slow
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One test on made-up times (the state is process-wide and no worker
    /// loop runs in this binary): a short pass is not busy, a long running
    /// one is, and so is the time right after it ends.
    #[test]
    fn slow_passes_make_the_loops_busy_for_a_while() {
        let w = MAX_WORKERS - 1;
        let ms = 1000u64;
        let t0 = 10_000_000_000; // far past any real clock of this test
        pass_begins_at(w, t0);
        assert!(!busy_at(t0 + ms / 2), "a pass of 0.5 ms so far");
        pass_ends_at(w, t0 + ms / 2);
        assert!(!busy_at(t0 + ms), "a short pass ended");
        pass_begins_at(w, t0 + 2 * ms);
        assert!(busy_at(t0 + 4 * ms), "a pass running for 2 ms");
        pass_ends_at(w, t0 + 5 * ms);
        assert!(busy_at(t0 + 6 * ms), "1 ms after a slow pass");
        assert!(busy_at(t0 + 104 * ms), "99 ms after it");
        assert!(!busy_at(t0 + 106 * ms), "101 ms after it");
        pass_begins_at(MAX_WORKERS + 5, t0); // untracked: ignored
        pass_ends_at(MAX_WORKERS + 5, t0 + 50 * ms);
        assert!(!busy_at(t0 + 200 * ms));
    }
}
