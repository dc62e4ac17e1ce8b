//! Measures the distribution of slow inserts (splits) in dash alone.
//! cargo run --release -p dash --example split_cost [-- MILLIONS]
mod common;
use common::*;
use std::time::Instant;

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(5)
        * 1_000_000;
    let mut t = new_dash();
    let mut slow: Vec<(u32, u64, usize)> = Vec::new();
    let start = Instant::now();
    for i in 0..n {
        let k = key(i);
        let h = hash_key(&k);
        let segs = t.segment_count();
        let gd = t.global_depth();
        let t0 = Instant::now();
        t.insert(h, (k, [i, i]), |e| e.0 == k);
        let dt = t0.elapsed().as_nanos() as u32;
        if t.global_depth() != gd {
            println!(
                "directory doubling to {} entries: {:.1} us",
                1u64 << t.global_depth(),
                dt as f64 / 1000.0
            );
        }
        if t.segment_count() != segs || dt > 20_000 {
            slow.push((dt, i, t.segment_count() - segs));
        }
    }
    println!("total {:.2}s", start.elapsed().as_secs_f64());
    let mut splits: Vec<u32> = slow.iter().filter(|s| s.2 > 0).map(|s| s.0).collect();
    splits.sort_unstable();
    let nsp = splits.len();
    println!(
        "splits={} p50={}ns p90={}ns p99={}ns max={}ns",
        nsp,
        splits[nsp / 2],
        splits[nsp * 9 / 10],
        splits[nsp * 99 / 100],
        splits[nsp - 1]
    );
    let over = |v: &mut dyn Iterator<Item = u32>| v.filter(|&ns| ns > 100_000).count();
    let other: Vec<_> = slow.iter().filter(|s| s.2 == 0).collect();
    // Inserts that split nothing do no structural work, so how many of them
    // pass 100 us shows how often the machine alone stalls an insert.
    println!(
        "over 100us: {} splits, {} non-split inserts",
        over(&mut splits.iter().copied()),
        over(&mut other.iter().map(|s| s.0))
    );
    println!("non-split inserts >20us: {}", other.len());
    for s in other.iter().take(10) {
        println!("  {:?}", s);
    }
}
