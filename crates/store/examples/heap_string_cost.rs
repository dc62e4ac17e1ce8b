//! What the compact heap-string forms cost on the SET and GET paths,
//! without the network: creating a value cell from 36-44 bytes (SET) and
//! reading its bytes back (GET). 40 digits, 36 ASCII chars and 40 binary
//! bytes are stored split (8 bytes in the cell, the rest in a 32-byte
//! block); 41 digits 6-bit packed (31 bytes); 44 letters plain (no form
//! gains a size class). The printed encoding is the one really used.
//!
//! `cargo run --release -p store --example heap_string_cost [rounds]`

use std::hint::black_box;
use std::time::Instant;

use store::CompactValue;

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(5);
    let n = 2_000_000;
    let cases: [(&str, Vec<u8>); 5] = [
        ("40 digits", b"1234567890".repeat(4)),
        ("36 ASCII", b"hello world, this is 36 chars long!!".to_vec()),
        ("40 binary", vec![0xe9; 40]),
        ("41 digits", vec![b'7'; 41]),
        ("44 letters", vec![b'a'; 44]),
    ];
    for (name, v) in &cases {
        let cell = CompactValue::from_bytes(v);
        assert_eq!(&*cell.string().unwrap(), &v[..]);
        let (mut set_best, mut get_best) = (f64::MAX, f64::MAX);
        for _ in 0..rounds {
            let t = Instant::now();
            for _ in 0..n {
                black_box(CompactValue::from_bytes(black_box(v)));
            }
            set_best = set_best.min(t.elapsed().as_nanos() as f64 / n as f64);
            let t = Instant::now();
            for _ in 0..n {
                let c = black_box(&cell);
                black_box(c.string().unwrap().len());
            }
            get_best = get_best.min(t.elapsed().as_nanos() as f64 / n as f64);
        }
        println!(
            "{name:<24} {}  create {set_best:6.1} ns  read {get_best:5.1} ns  (best of {rounds})",
            cell.internal_encoding()
        );
    }
}
