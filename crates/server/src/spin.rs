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
//! and slices, `/proc/thread-self/schedstat`, and the count of involuntary
//! context switches from `getrusage(RUSAGE_THREAD)`) at most once every
//! [`READ_EVERY`]. Another thread wanting the core shows as the worker
//! being *preempted* (an involuntary switch) and then waiting a long time
//! for its turn, again and again: a read window is *long* when it has an
//! involuntary switch and its wait per slice reaches [`LONG_WAIT`]
//! (without schedstat: any involuntary switch), and [`BURST`] long windows
//! within [`BURST_WINDOW`] mean contention. Then spinning stops for a
//! hold-off that starts at [`MIN_HOLD`] and doubles, up to [`MAX_HOLD`],
//! while contention keeps coming back within [`CALM`] of the last hold; a
//! calm stretch resets it. Short waits (the server's own cron thread
//! waking on the same core) do not stop spinning, nor do the kernel's own
//! threads taking the core now and then: measured on this VM during a
//! -P 1 run (`perf record -e sched:sched_switch`), rcu_preempt, kworkers,
//! ksoftirqd and the VM agent preempted the worker ~180 times a second,
//! ~5 times a second for 250 us to 8 ms, never three times within 20 ms;
//! a busy thread sharing the core preempts it every scheduler slice
//! (0.75-3 ms).
//!
//! Two kinds of wait are *not* contention and are never judged: the wait
//! of a worker woken from `epoll_wait` (no involuntary switch: on a VM a
//! halted vCPU takes tens of microseconds to run again, 85 us per slice on
//! average measured with `busy-poll 0`), and anything during a hold-off
//! (the worker sleeps there by the gate's own choice, so its wake-up waits
//! would otherwise prolong the hold-off they came from: measured before
//! this rule, one 272 us wait at start-up kept the gate refusing 87% of
//! spins for the rest of a -P 1 run). After a hold-off the first read only
//! sets the baseline.
//!
//! The active-defrag thread is the exception the worker makes itself
//! (`Worker::may_spin`): while a pass runs the gate is not asked, and is
//! [`SpinGate::forget`]-ed, because that thread takes the core in short
//! slices at a bounded duty cycle, which a spinning worker absorbs better
//! than a sleeping one (docs/BENCHMARKS.md, "The busy-poll gate during a
//! defrag pass").
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
/// Contention seen again this long after the previous hold ended starts
/// again at [`MIN_HOLD`].
pub const CALM: Duration = Duration::from_secs(1);
/// This many long read windows ...
pub const BURST: usize = 3;
/// ... within this long mean another thread keeps wanting the core.
pub const BURST_WINDOW: Duration = Duration::from_millis(20);

/// Where the thread's run-queue figures come from (the involuntary
/// switches always come from `getrusage(RUSAGE_THREAD)`).
enum Probe {
    /// `/proc/thread-self/schedstat`: time on the CPU, time waiting for
    /// it, slices (ns, ns, count).
    Schedstat(File),
    /// No schedstat: involuntary switches only.
    Rusage,
}

/// One reading of the thread's figures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reading {
    /// Run-queue wait so far, ns (0 with the rusage probe).
    pub wait_ns: u64,
    /// Slices so far (0 with the rusage probe).
    pub count: u64,
    /// Involuntary context switches so far.
    pub preempted: u64,
}

/// Decides, on a worker's thread, whether it may spin now.
pub struct SpinGate {
    probe: Probe,
    last: Reading,
    last_read: Option<Instant>,
    hold_until: Option<Instant>,
    hold: Duration,
    /// The next read only sets the baseline (set when a hold-off starts).
    rebase: bool,
    /// When the last `BURST - 1` long windows were read, newest last.
    longs: [Option<Instant>; BURST - 1],
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
            rebase: false,
            longs: [None; BURST - 1],
        };
        if let Some(r) = g.read() {
            g.last = r;
        }
        g
    }

    fn read(&mut self) -> Option<Reading> {
        // SAFETY: `ru` is a plain C struct getrusage fills; an all-zero
        // value is a valid one.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `ru` is a valid, writable rusage for the call.
        if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) } != 0 {
            return None;
        }
        let preempted = ru.ru_nivcsw as u64;
        match &self.probe {
            Probe::Schedstat(f) => {
                let mut buf = [0u8; 96];
                let n = f.read_at(&mut buf, 0).ok()?;
                let text = std::str::from_utf8(&buf[..n]).ok()?;
                let mut it = text.split_ascii_whitespace().skip(1);
                let wait_ns = it.next()?.parse().ok()?;
                let count = it.next()?.parse().ok()?;
                Some(Reading {
                    wait_ns,
                    count,
                    preempted,
                })
            }
            Probe::Rusage => Some(Reading {
                wait_ns: 0,
                count: 0,
                preempted,
            }),
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
        let long = !std::mem::take(&mut self.rebase)
            && match self.probe {
                Probe::Schedstat(_) => long_wait(self.last, r),
                Probe::Rusage => r.preempted > self.last.preempted,
            };
        self.last = r;
        self.judge(long, now)
    }

    /// Drops what the gate has judged so far (a hold-off, recent long
    /// windows); the next read only sets the baseline. For a worker that
    /// spins without asking the gate for a while (during an active-defrag
    /// pass, `Worker::may_spin`), so the waits of that stretch are not
    /// judged afterwards.
    pub fn forget(&mut self) {
        self.hold_until = None;
        self.hold = Duration::ZERO;
        self.rebase = true;
        self.longs = [None; BURST - 1];
    }

    /// Records whether the window read at `now` was long; false (and a
    /// hold-off) when it completes a burst.
    fn judge(&mut self, long: bool, now: Instant) -> bool {
        if !long {
            return true;
        }
        let burst = contended(&self.longs, now);
        self.longs.rotate_left(1);
        self.longs[BURST - 2] = Some(now);
        if burst {
            self.hold_off(now);
            return false;
        }
        true
    }

    /// Starts a hold-off at `now` after a long wait.
    fn hold_off(&mut self, now: Instant) {
        self.hold = next_hold(self.hold, self.hold_until, now);
        self.hold_until = Some(now + self.hold);
        self.rebase = true;
        self.longs = [None; BURST - 1];
    }
}

/// Whether a long window read at `now`, after the earlier ones in
/// `longs` (newest last), makes [`BURST`] within [`BURST_WINDOW`].
pub fn contended(longs: &[Option<Instant>; BURST - 1], now: Instant) -> bool {
    longs[0].is_some_and(|oldest| now.saturating_duration_since(oldest) <= BURST_WINDOW)
}

/// Whether the thread was preempted and waited [`LONG_WAIT`] or more per
/// slice between schedstat readings `a` and `b`.
pub fn long_wait(a: Reading, b: Reading) -> bool {
    if b.preempted <= a.preempted {
        return false;
    }
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
            preempted: count,
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
        let still_waiting = Reading {
            preempted: 6,
            ..r(600, 5)
        };
        assert!(long_wait(r(100, 5), still_waiting));
        // Nothing happened.
        assert!(!long_wait(r(100, 5), r(100, 5)));
        // A long wait without a preemption is a wake-up's latency.
        let woken = Reading {
            preempted: 10,
            ..r(1000, 11)
        };
        assert!(!long_wait(r(0, 10), woken));
    }

    #[test]
    fn contention_is_a_burst_of_long_windows() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        // One or two long windows: the kernel's own threads, not contention.
        assert!(!contended(&[None, None], t0));
        assert!(!contended(&[None, Some(t0)], t0 + ms(1)));
        // Three within the window: contention.
        assert!(contended(&[Some(t0), Some(t0 + ms(5))], t0 + ms(12)));
        assert!(contended(&[Some(t0), Some(t0 + ms(5))], t0 + BURST_WINDOW));
        // Three spread wider than the window: sporadic.
        assert!(!contended(&[Some(t0), Some(t0 + ms(15))], t0 + ms(21)));
    }

    #[test]
    fn a_gate_holds_off_only_after_a_burst() {
        let mut g = SpinGate::new();
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        // Sporadic long windows (the kernel's threads): always spinning.
        for i in 0..10 {
            assert!(g.judge(true, t0 + ms(30 * i)));
        }
        assert!(g.hold_until.is_none());
        // Short windows in between change nothing.
        assert!(g.judge(false, t0 + ms(301)));
        // Three within 20 ms: a hold-off, which forgets the burst and
        // makes the first read after it a baseline.
        assert!(g.judge(true, t0 + ms(400)));
        assert!(g.judge(true, t0 + ms(405)));
        assert!(!g.judge(true, t0 + ms(410)));
        assert_eq!(g.hold_until, Some(t0 + ms(410) + MIN_HOLD));
        assert!(!g.may_spin(t0 + ms(411)));
        assert_eq!(g.longs, [None; BURST - 1]);
        assert!(g.rebase);
    }

    #[test]
    fn a_forgotten_gate_spins_and_judges_nothing_from_before() {
        let mut g = SpinGate::new();
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        // In a hold-off, with long windows on record.
        assert!(g.judge(true, t0));
        assert!(g.judge(true, t0 + ms(5)));
        assert!(!g.judge(true, t0 + ms(10)));
        assert!(!g.may_spin(t0 + ms(11)));
        assert!(g.judge(true, t0 + ms(100)));
        g.forget();
        // The hold-off is gone and the next read is a baseline.
        assert!(g.may_spin(t0 + ms(12)));
        assert_eq!(g.longs, [None; BURST - 1]);
        assert!(!g.rebase, "the read after forget was the baseline");
        // A later burst starts from the shortest hold again.
        assert!(g.judge(true, t0 + ms(200)));
        assert!(g.judge(true, t0 + ms(205)));
        assert!(!g.judge(true, t0 + ms(210)));
        assert_eq!(g.hold_until, Some(t0 + ms(210) + MIN_HOLD));
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
        // After the hold the first read only sets the baseline, whatever
        // the hold-off period held.
        g.last = Reading::default();
        assert!(g.may_spin(now + MIN_HOLD));
    }
}
