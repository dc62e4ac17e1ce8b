//! Test hooks that make a background thread panic (`DEBUG PANIC-THREAD`,
//! behind `enable-debug-command`): each flag is taken (reset) by the
//! thread it names at the top of its loop, which then panics, so tests can
//! show that the death of that thread is noticed (`server::faults`).

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// The cron thread panics at its next tick.
pub static CRON: AtomicBool = AtomicBool::new(false);
/// The next worker thread to wake panics outside any client's command.
pub static WORKER: AtomicBool = AtomicBool::new(false);
/// The acceptor thread panics at its next wake-up (at most 200 ms).
pub static ACCEPTOR: AtomicBool = AtomicBool::new(false);
/// The lazy-free thread panics when it is next handed something to free.
pub static LAZYFREE: AtomicBool = AtomicBool::new(false);
/// The next BGSAVE's file-writer thread panics as it starts.
pub static BGSAVE_WRITER: AtomicBool = AtomicBool::new(false);

/// Takes a flag: true once after it was set.
#[inline]
pub fn take(flag: &AtomicBool) -> bool {
    flag.load(Relaxed) && flag.swap(false, Relaxed)
}
