//! Pacing of background sweeps that run outside the worker threads.
//!
//! Active expiry and the LRU clamp / LFU decay sweep run on the cron thread
//! in chunks that each hold one partition lock briefly. Holding no lock is
//! not enough for flat latency: when the server shares a core with its cron
//! thread (one worker pinned with `taskset`, or as many workers as cores),
//! the scheduler lets a thread that just woke run for a whole time slice
//! (about 3 ms on Linux's EEVDF), and a 25 ms expiry budget became ~20 ms
//! stalls of the worker on that core (docs/BENCHMARKS.md).
//!
//! Offering the CPU means sleeping, not `sched_yield`: under EEVDF a yield
//! only pushes the yielding thread's deadline back, and when the worker has
//! run more than its share (it is not "eligible") the scheduler picks the
//! cron thread again at once. Measured with the yield: 3-7.6 ms stretches of
//! the sweep with the worker runnable and waiting, a dozen in a 20M-key fill.
//! A sleep takes the sweep off the run queue, so the worker runs.
//!
//! Invariant: a sweep that uses a [`Pacer`] between its chunks never runs
//! for more than [`SLICE`] (plus one chunk) without leaving the run queue.
//! Its budget stays wall-clock time, so under load the background work gets
//! less done per call rather than delaying clients.

use std::time::{Duration, Instant};

/// Longest stretch of background work between two offers of the CPU.
pub const SLICE: Duration = Duration::from_micros(200);

/// How long a sweep sleeps when it offers the CPU (the kernel's timer slack
/// adds about 50 µs to it).
pub const PAUSE: Duration = Duration::from_micros(20);

/// Leaves the CPU every [`SLICE`] of work; call [`Pacer::between_chunks`]
/// with no lock held.
pub struct Pacer {
    since: Instant,
}

impl Pacer {
    pub fn new() -> Self {
        Pacer {
            since: Instant::now(),
        }
    }

    /// Offers the CPU if this sweep has worked for [`SLICE`] since the last
    /// offer. Returns whether it did.
    pub fn between_chunks(&mut self) -> bool {
        if self.since.elapsed() < SLICE {
            return false;
        }
        std::thread::sleep(PAUSE);
        self.since = Instant::now();
        true
    }
}

impl Default for Pacer {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offers_the_cpu_after_a_slice_of_work() {
        let mut p = Pacer::new();
        std::thread::sleep(SLICE * 2);
        assert!(p.between_chunks());
    }
}
