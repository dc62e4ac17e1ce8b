//! The pseudo-random generator behind `math.random` / `math.randomseed`.
//!
//! Redis replaces Lua's `math.random` (which calls the C library's `rand`)
//! with the 48-bit linear congruential generator of `drand48`
//! (`x' = (0x5DEECE66D * x + 0xB) mod 2^48`, output = the top 31 bits),
//! reimplemented here from those published constants. Redis 7.0 keeps one
//! generator per process: it starts from drand48's default state
//! `0x1234ABCD330E`, is shared by EVAL scripts and functions, and is *not*
//! reseeded before each script (measured against redis-server 7.0.15:
//! `EVAL "return tostring(math.random())" 0` gives a new number every call).
//! `math.randomseed(n)` sets the state to `(n << 16) | 0x330E`.
//!
//! Invariant: the state always fits in 48 bits.

use std::sync::atomic::{AtomicU64, Ordering};

const A: u64 = 0x5_DEEC_E66D;
const C: u64 = 0xB;
const MASK: u64 = (1 << 48) - 1;
/// drand48's default state.
pub const INITIAL_STATE: u64 = 0x1234_ABCD_330E;
/// The largest value [`next`] can return, plus one (Redis's `REDIS_LRAND48_MAX`).
pub const LRAND48_MAX: u32 = i32::MAX as u32;

static STATE: AtomicU64 = AtomicU64::new(INITIAL_STATE);

/// Seeds the process-wide generator (`math.randomseed`).
pub fn seed(n: i32) {
    // drand48 keeps the low 32 bits of the seed in the top words.
    STATE.store(
        ((u64::from(n as u32)) << 16 | 0x330E) & MASK,
        Ordering::Relaxed,
    );
}

/// Resets the generator to its start-of-process state (tests, `DEBUG` tools).
pub fn reset() {
    STATE.store(INITIAL_STATE, Ordering::Relaxed);
}

/// The next 31-bit value (`lrand48`).
pub fn next() -> u32 {
    let mut cur = STATE.load(Ordering::Relaxed);
    loop {
        let nx = (A.wrapping_mul(cur).wrapping_add(C)) & MASK;
        match STATE.compare_exchange_weak(cur, nx, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return (nx >> 17) as u32,
            Err(v) => cur = v,
        }
    }
}

/// `math.random()` without arguments: a number in `[0, 1)`.
pub fn next_unit() -> f64 {
    f64::from(next() % LRAND48_MAX) / f64::from(LRAND48_MAX)
}
