//! Tight lookup loop for profiling:
//! cargo run --release -p dash --example lookup_profile [-- MILLIONS [dependent]]
//!
//! By default lookups are independent, so the CPU overlaps many of them and
//! the figure is throughput. With `dependent`, each probe's key depends on
//! the previous lookup's result (through a mask that is zero at run time),
//! so no two lookups overlap and the figure is the latency of one lookup.
mod common;
use common::*;
use std::hint::black_box;
use std::time::Instant;

fn main() {
    // Millions of entries; fractions allowed (0.01 = 10,000: cache-resident).
    let millions: f64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    let n = ((millions * 1e6) as u64).max(1);
    let dependent = std::env::args().nth(2).as_deref() == Some("dependent");
    if dependent {
        return latency(n);
    }
    let (d, h) = populate(n);
    let probes: Vec<u64> = (0..10_000_000u64).map(|i| mix(i) % n).collect();
    for _ in 0..2 {
        let t0 = Instant::now();
        for &i in &probes {
            let k = key(i);
            black_box(d.get(hash_key(&k), |e| e.0 == k));
        }
        let td = t0.elapsed().as_nanos() as f64 / probes.len() as f64;
        let t0 = Instant::now();
        for &i in &probes {
            black_box(h.get(&key(i)));
        }
        let th = t0.elapsed().as_nanos() as f64 / probes.len() as f64;
        let t0 = Instant::now();
        for &i in &probes {
            let k = key(i + n);
            black_box(d.get(hash_key(&k), |e| e.0 == k));
        }
        let tdm = t0.elapsed().as_nanos() as f64 / probes.len() as f64;
        let t0 = Instant::now();
        for &i in &probes {
            black_box(h.get(&key(i + n)));
        }
        let thm = t0.elapsed().as_nanos() as f64 / probes.len() as f64;
        println!(
            "get_hit ns: dash {td:.1} hashbrown {th:.1} ({:.2}x)  get_miss ns: dash {tdm:.1} hashbrown {thm:.1} ({:.2}x)",
            td / th,
            tdm / thm
        );
    }
}

/// One lookup at a time: the next key depends on the previous result.
fn latency(n: u64) {
    let (d, h) = populate(n);
    let probes: Vec<u64> = (0..5_000_000u64).map(|i| mix(i) % n).collect();
    // Zero, but the compiler cannot know it: `x & zero` keeps the data
    // dependency on `x` without changing the key.
    let zero = black_box(0u64);
    // Hits only: a miss returns nothing the next key could depend on (a
    // predicted branch on `None` breaks the chain), so misses stay in the
    // throughput mode.
    for _ in 0..2 {
        let mut prev = 0u64;
        let t0 = Instant::now();
        for &i in &probes {
            let k = key(i ^ (prev & zero));
            prev = d.get(hash_key(&k), |e| e.0 == k).map_or(1, |e| e.1[0] | 1);
        }
        let td = t0.elapsed().as_nanos() as f64 / probes.len() as f64;
        black_box(prev);
        let mut prev = 0u64;
        let t0 = Instant::now();
        for &i in &probes {
            prev = h.get(&key(i ^ (prev & zero))).map_or(1, |v| v[0] | 1);
        }
        let th = t0.elapsed().as_nanos() as f64 / probes.len() as f64;
        black_box(prev);
        println!(
            "dependent get_hit ns: dash {td:.1} hashbrown {th:.1} ({:.2}x)",
            td / th
        );
    }
}
