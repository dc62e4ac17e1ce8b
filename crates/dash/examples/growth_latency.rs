//! Latency of single inserts while a table grows from empty to N entries
//! (default 20M), for dash and for hashbrown (not pre-sized).
//!
//! cargo run --release -p dash --example growth_latency [-- MILLIONS]
mod common;
use common::*;
use std::time::Instant;

fn report(name: &str, mut ns: Vec<u32>, total: f64) {
    ns.sort_unstable();
    let n = ns.len();
    let q = |p: f64| ns[((n as f64 * p) as usize).min(n - 1)];
    println!(
        "{name}: inserts={n} total_s={total:.2} mean_ns={:.0} p50_ns={} p99_ns={} p99.99_ns={} max_us={:.1}",
        ns.iter().map(|&x| x as f64).sum::<f64>() / n as f64,
        q(0.5),
        q(0.99),
        q(0.9999),
        ns[n - 1] as f64 / 1000.0
    );
}

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(20)
        * 1_000_000;
    let mut ns: Vec<u32> = vec![0; n as usize];
    {
        let mut t = new_dash();
        let start = Instant::now();
        for i in 0..n {
            let k = key(i);
            let h = hash_key(&k);
            let t0 = Instant::now();
            t.insert(h, (k, [i, i]), |e| e.0 == k);
            ns[i as usize] = t0.elapsed().as_nanos().min(u32::MAX as u128) as u32;
        }
        let total = start.elapsed().as_secs_f64();
        report("dash", ns.clone(), total);
    }
    {
        let mut t: hashbrown::HashMap<Key, [u64; 2], BuildPass> = hashbrown::HashMap::default();
        let start = Instant::now();
        for i in 0..n {
            let k = key(i);
            let t0 = Instant::now();
            t.insert(k, [i, i]);
            ns[i as usize] = t0.elapsed().as_nanos().min(u32::MAX as u128) as u32;
        }
        let total = start.elapsed().as_secs_f64();
        report("hashbrown", ns, total);
    }
}
