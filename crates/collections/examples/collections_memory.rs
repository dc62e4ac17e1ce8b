//! Memory per element of the collection encodings.
//!
//! `cargo run --release -p collections --example collections_memory`
//!
//! Data sets (the same ones `examples/redis_memory.py` loads into
//! redis-server for comparison):
//! * hash: 1M fields `field:{i}` -> `value:{i}` (large encoding, CompactMap)
//! * set: 1M members `member:{i}` (CompactSet)
//! * zset: 1M members `member:{i}`, score `(i * 7919) % 1000003` (SortedSet)
//! * list: 10M elements `{i % 10000}` (Quicklist, fill -2)
//! * 1M small hashes of 10 fields `f{j}` -> `value:{i}:{j}` (ListpackHash)
//! * 1M small sets of 10 members `m:{i}:{j}` (ListpackSet)
//!
//! For each it prints the structure's own `heap_bytes()` and what a counting
//! global allocator saw (requested bytes, and those bytes rounded up to
//! jemalloc-like size classes, the figure comparable to Redis's
//! `used_memory`). Small-value rows also show the inline struct size, which
//! the keyspace stores per key.

use collections::{
    mem::grow_capacity, CompactMap, CompactSet, ListpackHash, ListpackSet, Quicklist, SortedSet,
};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

struct Counting;
static REQ: AtomicUsize = AtomicUsize::new(0);
static CLS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator unchanged; only counts sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        REQ.fetch_add(l.size(), Relaxed);
        CLS.fetch_add(grow_capacity(l.size()), Relaxed);
        // SAFETY: same contract as our caller's.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        REQ.fetch_sub(l.size(), Relaxed);
        CLS.fetch_sub(grow_capacity(l.size()), Relaxed);
        // SAFETY: same contract as our caller's.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        REQ.fetch_add(n, Relaxed);
        REQ.fetch_sub(l.size(), Relaxed);
        CLS.fetch_add(grow_capacity(n), Relaxed);
        CLS.fetch_sub(grow_capacity(l.size()), Relaxed);
        // SAFETY: same contract as our caller's.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static A: Counting = Counting;

fn snap() -> (usize, usize) {
    (REQ.load(Relaxed), CLS.load(Relaxed))
}

fn row(name: &str, n: usize, heap: usize, before: (usize, usize), extra: &str) {
    let after = snap();
    let (req, cls) = (after.0 - before.0, after.1 - before.1);
    println!(
        "| {name} | {n} | {:.1} | {:.1} | {:.1} | {extra} |",
        heap as f64 / n as f64,
        req as f64 / n as f64,
        cls as f64 / n as f64
    );
}

fn main() {
    println!(
        "| data set | elements | heap_bytes()/elem | allocated/elem | size-class/elem | note |"
    );
    println!("|---|---|---|---|---|---|");
    {
        let b = snap();
        let mut h = CompactMap::new();
        for i in 0..1_000_000u32 {
            h.insert(
                format!("field:{i}").as_bytes(),
                format!("value:{i}").as_bytes(),
            );
        }
        row(
            "hash 1M fields (CompactMap)",
            h.len(),
            h.heap_bytes(),
            b,
            "",
        );
    }
    {
        let b = snap();
        let mut h = CompactMap::new();
        for i in 0..1_000_000u32 {
            h.insert(format!("f{i:07}").as_bytes(), &[b'v'; 60]);
        }
        row(
            "hash 1M fields, 8 B field + 60 B value",
            h.len(),
            h.heap_bytes(),
            b,
            "values out of line",
        );
    }
    {
        let b = snap();
        let mut s = CompactSet::new();
        for i in 0..1_000_000u32 {
            s.insert(format!("member:{i}").as_bytes());
        }
        row(
            "set 1M members (CompactSet)",
            s.len(),
            s.heap_bytes(),
            b,
            "",
        );
    }
    {
        let b = snap();
        let mut z = SortedSet::new();
        for i in 0..1_000_000u64 {
            z.insert(
                format!("member:{i}").as_bytes(),
                ((i * 7919) % 1_000_003) as f64,
            );
        }
        row(
            "zset 1M members (SortedSet)",
            z.len(),
            z.heap_bytes(),
            b,
            "",
        );
    }
    {
        let b = snap();
        let mut q = Quicklist::new(-2);
        for i in 0..10_000_000u32 {
            q.push_back((i % 10000).to_string().as_bytes());
        }
        let nodes = q.node_count();
        row(
            "list 10M small elements (Quicklist -2)",
            q.len(),
            q.heap_bytes(),
            b,
            &format!("{nodes} nodes"),
        );
    }
    {
        let b = snap();
        let mut v: Vec<ListpackHash> = Vec::with_capacity(1_000_000);
        let vb = snap();
        for i in 0..1_000_000u32 {
            let mut h = ListpackHash::new();
            for j in 0..10 {
                h.insert(
                    format!("f{j}").as_bytes(),
                    format!("value:{i}:{j}").as_bytes(),
                );
            }
            v.push(h);
        }
        let heap: usize = v.iter().map(|h| h.heap_bytes()).sum();
        let _ = b;
        row(
            "1M small hashes x 10 fields (ListpackHash), per hash",
            v.len(),
            heap,
            vb,
            &format!("+{} B struct per hash", std::mem::size_of::<ListpackHash>()),
        );
    }
    {
        let mut v: Vec<ListpackSet> = Vec::with_capacity(1_000_000);
        let vb = snap();
        for i in 0..1_000_000u32 {
            let mut s = ListpackSet::new();
            for j in 0..10 {
                s.insert(format!("m:{i}:{j}").as_bytes());
            }
            v.push(s);
        }
        let heap: usize = v.iter().map(|h| h.heap_bytes()).sum();
        row(
            "1M small sets x 10 members (ListpackSet), per set",
            v.len(),
            heap,
            vb,
            &format!("+{} B struct per set", std::mem::size_of::<ListpackSet>()),
        );
    }
}
