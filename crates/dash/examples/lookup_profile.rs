//! Tight lookup loop for profiling: cargo run --release -p dash --example lookup_profile [-- MILLIONS]
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
    let mut d = new_dash();
    let mut h = hashbrown::HashMap::<Key, [u64; 2], BuildPass>::default();
    for i in 0..n {
        let k = key(i);
        d.insert(hash_key(&k), (k, [i, i]), |e| e.0 == k);
        h.insert(k, [i, i]);
    }
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
