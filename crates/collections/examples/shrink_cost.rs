//! What keeping listpacks and intsets at the size class of their length
//! costs in time (they give room back at every class they go below, as
//! Redis reallocates a listpack to its exact size at every change):
//!
//! * a quicklist fed at the head and drained at the tail (3M elements);
//! * the worst case: one element added and removed in turn across a size
//!   class boundary of a 1 KiB and a 6 KiB listpack, and of an intset
//!   (every change crosses the boundary, so every change reallocates);
//! * draining a 500-element listpack one element at a time.
//!
//! `cargo run --release -p collections --example shrink_cost` (best of 5
//! rounds, ns per operation), under jemalloc as in the server (glibc's
//! malloc shrinks in place and would hide the copies).

use collections::{IntSet, Listpack, Quicklist};
use std::hint::black_box;
use std::time::Instant;

#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn best(rounds: usize, mut f: impl FnMut() -> (u64, f64)) -> f64 {
    (0..rounds)
        .map(|_| {
            let (n, secs) = f();
            secs * 1e9 / n as f64
        })
        .fold(f64::INFINITY, f64::min)
}

/// A listpack of exactly `bytes` bytes (a size class), so that adding
/// anything crosses into the next class.
fn listpack_at_boundary(bytes: usize) -> Listpack {
    let mut lp = Listpack::new();
    while lp.bytes_len() + 9 <= bytes {
        lp.push_back(b"abcdefg");
    }
    let mut r = bytes - lp.bytes_len();
    if r < 3 {
        lp.pop_back();
        r += 9;
    }
    lp.push_back(&b"abcdefghijk"[..r - 2]);
    assert_eq!(lp.bytes_len(), bytes);
    lp
}

fn main() {
    let ql = best(5, || {
        let mut q = Quicklist::new(-2);
        let t = Instant::now();
        for _ in 0..3_000_000 {
            q.push_front(b"xxx");
        }
        for _ in 0..3_000_000 {
            black_box(q.pop_back());
        }
        (6_000_000, t.elapsed().as_secs_f64())
    });
    println!("quicklist push_front + pop_back, 3M each: {ql:.1} ns/op");
    for size in [1024usize, 6144, 40960] {
        let ns = best(5, || {
            let mut lp = listpack_at_boundary(size);
            let t = Instant::now();
            for _ in 0..1_000_000 {
                lp.push_back(b"abcdefghijklmnop");
                black_box(lp.pop_back());
            }
            (2_000_000, t.elapsed().as_secs_f64())
        });
        println!("listpack of {size} B, push_back/pop_back across a class: {ns:.1} ns/op");
    }
    let ns = best(5, || {
        // 508 16-bit members: 8 + 1016 = 1024 bytes, a size class.
        let mut s = IntSet::new();
        for v in 0..508 {
            s.insert(2 * v);
        }
        let t = Instant::now();
        for _ in 0..1_000_000 {
            s.insert(1);
            s.remove(1);
        }
        (2_000_000, t.elapsed().as_secs_f64())
    });
    println!("intset of 1 KiB, insert/remove across a class: {ns:.1} ns/op");
    let ns = best(5, || {
        let mut total = 0;
        let mut secs = 0.0;
        for _ in 0..2000 {
            let mut lp = Listpack::new();
            for i in 0..500 {
                lp.push_back(format!("element:{i}").as_bytes());
            }
            let t = Instant::now();
            while lp.pop_front().is_some() {}
            secs += t.elapsed().as_secs_f64();
            total += 500;
        }
        (total, secs)
    });
    println!("listpack of 500 elements drained from the front: {ns:.1} ns/op");
}
