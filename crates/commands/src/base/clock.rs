//! Wall-clock time in Unix milliseconds and microseconds, and the per-thread
//! cached clock that worker threads refresh once per event-loop pass (Redis's
//! cached `mstime`): every command of one batch sees the same "now".

use std::time::{SystemTime, UNIX_EPOCH};

pub fn unix_time_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

thread_local! {
    /// Unix ms cached by the event loop (0 = not set on this thread).
    static CLOCK_MS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Refreshes this thread's cached clock (worker threads call it once per
/// event-loop iteration, so commands share one clock read per batch, like
/// Redis's cached `mstime`).
pub fn refresh_cached_clock() -> u64 {
    let now = unix_time_ms();
    CLOCK_MS.with(|c| c.set(now));
    now
}

/// The cached clock where the thread keeps one, the real clock otherwise.
pub fn cached_time_ms() -> u64 {
    let c = CLOCK_MS.with(|c| c.get());
    if c == 0 {
        unix_time_ms()
    } else {
        c
    }
}

pub fn unix_time_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0)
}
