//! Cost of the counting allocator: ns per alloc+free pair through
//! `server::alloc::Counting` against plain jemalloc, and ns per
//! `server::alloc::allocated()` (INFO used_memory) with 8 threads that have
//! claimed counters.
//!
//! ```sh
//! taskset -c 0 cargo run --release -p server --example alloc_cost
//! ```

use std::alloc::{GlobalAlloc, Layout};
use std::hint::black_box;
use std::time::Instant;

use server::alloc::Counting;
use tikv_jemallocator::Jemalloc;

#[global_allocator]
static GLOBAL: Counting = Counting;

fn pairs<A: GlobalAlloc>(a: &A, n: usize) -> f64 {
    let sizes = [16usize, 24, 48, 64, 100, 200, 1000, 40];
    let t = Instant::now();
    for i in 0..n {
        let l = Layout::from_size_align(sizes[i & 7], 8).unwrap();
        // SAFETY: non-zero layout, freed right away with the same layout.
        unsafe {
            let p = black_box(a.alloc(l));
            a.dealloc(p, l);
        }
    }
    t.elapsed().as_nanos() as f64 / n as f64
}

fn main() {
    let n = 50_000_000;
    for round in 0..3 {
        let j = pairs(&Jemalloc, n);
        let c = pairs(&Counting, n);
        println!(
            "round {round}: alloc+free pair: jemalloc {j:.2} ns, counting {c:.2} ns (+{:.2} ns)",
            c - j
        );
    }
    // Threads that claim a counter each and stay alive while we read.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let hs: Vec<_> = (0..8)
        .map(|_| {
            let s = stop.clone();
            std::thread::spawn(move || {
                let v = black_box(vec![0u8; 100]);
                while !s.load(std::sync::atomic::Ordering::Relaxed) {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                drop(v);
            })
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(50));
    let m = 10_000_000;
    let t = Instant::now();
    let mut x = 0u64;
    for _ in 0..m {
        x = x.wrapping_add(black_box(server::alloc::allocated()));
    }
    println!(
        "used_memory read: {:.2} ns with {} counters claimed (sum {x})",
        t.elapsed().as_nanos() as f64 / m as f64,
        server::alloc::claimed()
    );
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for h in hs {
        h.join().unwrap();
    }
}
