//! Memory per entry of the Dashtable holding 32-byte entries, for every N
//! from 1M to 20M in steps of 1M.
//!
//! cargo run --release -p dash --example memory [-- MAX_MILLIONS]
mod common;
use common::*;

fn main() {
    let max: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let mut t = new_dash();
    let (mut sum, mut maxb, mut count) = (0.0f64, 0.0f64, 0);
    for i in 0..max * 1_000_000 {
        let k = key(i);
        t.insert(hash_key(&k), (k, [i, !i]), |e| e.0 == k);
        if (i + 1) % 1_000_000 == 0 {
            let n = t.len();
            let b = t.allocated_bytes();
            let bpe = b as f64 / n as f64;
            println!(
                "entries={n} table_bytes={b} bytes_per_entry={bpe:.2} load={:.3} segments={} global_depth={}",
                t.load_factor(),
                t.segment_count(),
                t.global_depth()
            );
            sum += bpe;
            maxb = maxb.max(bpe);
            count += 1;
        }
    }
    println!(
        "mean_bytes_per_entry={:.2} max_bytes_per_entry={:.2}",
        sum / count as f64,
        maxb
    );
}
