//! When a worker may busy-poll (setting `busy-poll`).
//!
//! Busy-polling wins when the worker has its core to itself: the next
//! request often arrives within the spin, and the worker skips a sleep and
//! a wake-up (so does the sender). On a core shared with another busy
//! thread it costs the tail instead: a thread that keeps spinning is never
//! the one the scheduler favours at a wake-up, so it runs until its slice
//! is used up and then waits out the other thread's whole slice, while the
//! requests that arrive meanwhile wait with it. Measured with
//! `scripts/bench-latency --sched` (issue 27): a spinning worker was put
//! off the CPU rarely but for 0.6-1.2 ms each time, a worker that sleeps in
//! `epoll_wait` often but for 46-91 us each time (redis-server: 73-145 us).
//!
//! So the worker spins only while it is not being made to wait: a
//! [`SpinGate`] reads the thread's own scheduler figures (run-queue wait
//! and slices, `/proc/thread-self/schedstat`; if the kernel has none, the
//! count of involuntary context switches from `getrusage(RUSAGE_THREAD)`)
//! at most once every [`READ_EVERY`]. When the wait per slice since the
//! last read reaches [`LONG_WAIT`] (without schedstat: any involuntary
//! switch), something else wants this core: spinning stops for a hold-off
//! that starts at [`MIN_HOLD`] and doubles, up to [`MAX_HOLD`], while
//! long waits keep coming back within [`CALM`] of the last hold; a calm
//! stretch resets it. Short waits (the server's own cron thread waking on
//! the same core) do not stop spinning.
//!
//! Invariants: the gate is owned by one worker and only read on its
//! thread (the figures are that thread's); while a hold-off runs nothing is
//! read, so a worker that does not spin pays nothing for the gate.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::time::{Duration, Instant};

/// A wait per slice this long means another thread held the core for a
/// good part of a scheduler slice (0.75 ms base slice on current kernels):
/// well above the 46-145 us of a sleeping event loop, well below the
/// 0.6-1.2 ms a spinning one saw.
pub const LONG_WAIT: Duration = Duration::from_micros(250);
/// Figures are read at most this often.
pub const READ_EVERY: Duration = Duration::from_millis(1);
/// First hold-off after a long wait.
pub const MIN_HOLD: Duration = Duration::from_millis(10);
/// Longest hold-off.
pub const MAX_HOLD: Duration = Duration::from_secs(1);
/// A long wait this long after the previous hold ended starts again at
/// [`MIN_HOLD`].
pub const CALM: Duration = Duration::from_secs(1);

/// Where the thread's scheduler figures come from.
enum Probe {
    /// `/proc/thread-self/schedstat`: time on the CPU, time waiting for
    /// it, slices (ns, ns, count).
    Schedstat(File),
    /// `getrusage(RUSAGE_THREAD)`'s involuntary context switches.
    Rusage,
}

/// One reading of the thread's figures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reading {
    /// Run-queue wait so far, ns (0 with the rusage probe).
    pub wait_ns: u64,
    /// Slices so far (schedstat) or involuntary switches (rusage).
    pub count: u64,
}

/// Decides, on a worker's thread, whether it may spin now.
pub struct SpinGate {
    probe: Probe,
    last: Reading,
    last_read: Option<Instant>,
    hold_until: Option<Instant>,
    hold: Duration,
}

impl Default for SpinGate {
    fn default() -> Self {
        Self::new()
    }
}

impl SpinGate {
    /// A gate for the calling thread (create it on the thread it serves).
    pub fn new() -> SpinGate {
        let probe = match File::open("/proc/thread-self/schedstat") {
            Ok(f) => Probe::Schedstat(f),
            Err(_) => Probe::Rusage,
        };
        let mut g = SpinGate {
            probe,
            last: Reading::default(),
            last_read: None,
            hold_until: None,
            hold: Duration::ZERO,
        };
        if let Some(r) = g.read() {
            g.last = r;
        }
        g
    }

    fn read(&mut self) -> Option<Reading> {
        match &self.probe {
            Probe::Schedstat(f) => {
                let mut buf = [0u8; 96];
                let n = f.read_at(&mut buf, 0).ok()?;
                let text = std::str::from_utf8(&buf[..n]).ok()?;
                let mut it = text.split_ascii_whitespace().skip(1);
                let wait_ns = it.next()?.parse().ok()?;
                let count = it.next()?.parse().ok()?;
                Some(Reading { wait_ns, count })
            }
            Probe::Rusage => {
                // SAFETY: `ru` is a plain C struct getrusage fills; an
                // all-zero value is a valid one.
                let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
                // SAFETY: `ru` is a valid, writable rusage for the call.
                if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) } != 0 {
                    return None;
                }
                Some(Reading {
                    wait_ns: 0,
                    count: ru.ru_nivcsw as u64,
                })
            }
        }
    }

    /// Whether the worker may spin at `now`.
    pub fn may_spin(&mut self, now: Instant) -> bool {
        if let Some(t) = self.hold_until {
            if now < t {
                return false;
            }
        }
        if self
            .last_read
            .is_some_and(|t| now.duration_since(t) < READ_EVERY)
        {
            return true;
        }
        self.last_read = Some(now);
        let Some(r) = self.read() else {
            return true;
        };
        let long = match self.probe {
            Probe::Schedstat(_) => long_wait(self.last, r),
            Probe::Rusage => r.count > self.last.count,
        };
        self.last = r;
        if long {
            self.hold_off(now);
            return false;
        }
        true
    }

    /// Starts a hold-off at `now` after a long wait.
    fn hold_off(&mut self, now: Instant) {
        self.hold = next_hold(self.hold, self.hold_until, now);
        self.hold_until = Some(now + self.hold);
    }
}

/// Whether the thread waited [`LONG_WAIT`] or more per slice between
/// schedstat readings `a` and `b`.
pub fn long_wait(a: Reading, b: Reading) -> bool {
    let wait = b.wait_ns.saturating_sub(a.wait_ns);
    let slices = b.count.saturating_sub(a.count).max(1);
    wait / slices >= LONG_WAIT.as_nanos() as u64
}

/// The hold-off after a long wait at `now`, given the previous one (`prev`,
/// ending at `prev_end`): doubled (at most [`MAX_HOLD`]) when the long wait
/// came within [`CALM`] of the previous hold's end, else [`MIN_HOLD`].
pub fn next_hold(prev: Duration, prev_end: Option<Instant>, now: Instant) -> Duration {
    match prev_end {
        Some(end) if now.saturating_duration_since(end) <= CALM && !prev.is_zero() => {
            (prev * 2).min(MAX_HOLD)
        }
        _ => MIN_HOLD,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(wait_us: u64, count: u64) -> Reading {
        Reading {
            wait_ns: wait_us * 1000,
            count,
        }
    }

    #[test]
    fn long_wait_is_per_slice() {
        // One preemption of a millisecond: long.
        assert!(long_wait(r(0, 10), r(1000, 11)));
        // The same millisecond spread over twenty wake-ups: short.
        assert!(!long_wait(r(0, 10), r(1000, 30)));
        // Exactly the threshold counts.
        assert!(long_wait(r(0, 0), r(250, 1)));
        assert!(!long_wait(r(0, 0), r(249, 1)));
        // A wait with no new slice (still waiting at the read) counts once.
        assert!(long_wait(r(100, 5), r(600, 5)));
        // Nothing happened.
        assert!(!long_wait(r(100, 5), r(100, 5)));
    }

    #[test]
    fn hold_doubles_while_long_waits_return_and_resets_after_calm() {
        let t0 = Instant::now();
        let h1 = next_hold(Duration::ZERO, None, t0);
        assert_eq!(h1, MIN_HOLD);
        let end1 = t0 + h1;
        let h2 = next_hold(h1, Some(end1), end1 + Duration::from_millis(1));
        assert_eq!(h2, MIN_HOLD * 2);
        let mut h = h2;
        let mut end = end1 + h2;
        for _ in 0..20 {
            h = next_hold(h, Some(end), end);
            end += h;
        }
        assert_eq!(h, MAX_HOLD);
        assert_eq!(
            next_hold(h, Some(end), end + CALM + Duration::from_millis(1)),
            MIN_HOLD
        );
    }

    #[test]
    fn a_gate_reads_this_thread() {
        let mut g = SpinGate::new();
        assert!(g.read().is_some(), "no scheduler figures for this thread");
        // Holding off refuses to spin until the hold ends.
        let now = Instant::now();
        g.hold_off(now);
        assert!(!g.may_spin(now));
        assert!(!g.may_spin(now + MIN_HOLD - Duration::from_micros(1)));
    }
}
