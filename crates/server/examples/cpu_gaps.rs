//! Measures how long a thread that never sleeps is kept off its core:
//! spins reading the monotonic clock and reports the gaps between
//! consecutive reads (issue 27: the stalls that both servers and the
//! load generator show). Pin it with `taskset`; to see who took the core,
//! run it under `perf record -a -e sched:sched_switch`.
//!
//! ```text
//! taskset -c 0 cpu_gaps [SECONDS]
//! ```

use std::time::{Duration, Instant};

fn main() {
    let secs: f64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(10.0);
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let limits = [100u128, 500, 2_000]; // microseconds
    let mut over = [0u64; 3];
    let mut max = Duration::ZERO;
    let mut prev = Instant::now();
    loop {
        let now = Instant::now();
        let gap = now - prev;
        prev = now;
        if gap > max {
            max = gap;
        }
        let us = gap.as_micros();
        for (count, &limit) in over.iter_mut().zip(&limits) {
            if us > limit {
                *count += 1;
            }
        }
        if now >= end {
            break;
        }
    }
    println!(
        "{secs:.0} s: longest gap {:.1} us; gaps over 100 us: {}, over 500 us: {}, over 2 ms: {}",
        max.as_secs_f64() * 1e6,
        over[0],
        over[1],
        over[2]
    );
}
