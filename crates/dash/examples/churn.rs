//! Table load under steady churn (a cache at `maxmemory`): fill N entries,
//! then repeatedly remove a random live entry and insert a new one, and
//! print the load (entries / slots) and bytes per entry as it settles.
//! `cargo run --release -p dash --example churn -- [MILLIONS] [ROUNDS]`
mod common;
use common::*;

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(2) * 1_000_000;
    let rounds: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(10);
    let mut d = new_dash();
    // Live keys in a vector: a random one is removed with swap_remove.
    let mut live: Vec<u64> = (0..n).collect();
    for &i in &live {
        let k = key(i);
        d.insert(hash_key(&k), (k, [i, i]), |e| e.0 == k);
    }
    let show = |d: &Dash, label: &str| {
        println!(
            "{label}: entries={} load={:.3} bytes_per_entry={:.2} segments={}",
            d.len(),
            d.len() as f64 / d.capacity() as f64,
            d.allocated_bytes() as f64 / d.len() as f64,
            d.segment_count()
        );
    };
    show(&d, "fresh");
    let mut next = n;
    let mut rng = 0x1234_5678u64;
    for r in 1..=rounds {
        for _ in 0..n {
            rng = mix(rng);
            let at = (rng % live.len() as u64) as usize;
            let old = live.swap_remove(at);
            let k = key(old);
            d.remove(hash_key(&k), |e| e.0 == k).expect("live key");
            let k = key(next);
            d.insert(hash_key(&k), (k, [next, next]), |e| e.0 == k);
            live.push(next);
            next += 1;
        }
        show(&d, &format!("after {r} x N churn"));
    }
}
