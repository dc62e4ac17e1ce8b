//! The cron makes no heap allocation while the server is idle.
//!
//! The cron thread runs beside the workers, and INFO `used_memory` is the
//! exact total of every thread's live blocks. A block the cron held for a
//! moment was therefore part of whatever a client read at that moment: the
//! exact MEMORY USAGE test (crates/server/tests/memory.rs) failed about once
//! in ten runs on a loaded machine, off by 40-200 bytes, while the cron read
//! `/proc` with `std::fs::read_dir`.
//!
//! This binary counts allocations per thread and drives the cron's tick on
//! an idle server across two second boundaries, so the once-a-second work
//! (the allocator-thread scan, the release of empty databases) runs too.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::time::{Duration, Instant};

use commands::kernel::config::Settings;

struct CountingPerThread;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

// SAFETY: forwards to the system allocator unchanged; counting touches only
// a const-initialised thread-local without destructor.
unsafe impl GlobalAlloc for CountingPerThread {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: the caller's guarantees, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static COUNTING: CountingPerThread = CountingPerThread;

#[test]
fn an_idle_cron_tick_allocates_nothing() {
    let srv = commands::registry::build_server(Settings::default(), None);
    // The first ticks set up state kept for the server's life (the metrics,
    // the startup memory figure); they may allocate.
    for _ in 0..3 {
        commands::runtime::cron::tick(&srv);
    }
    let start = Instant::now();
    let mut ticks = 0;
    let mut allocated = 0;
    while start.elapsed() < Duration::from_millis(2200) {
        let before = allocations();
        commands::runtime::cron::tick(&srv);
        allocated += allocations() - before;
        ticks += 1;
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(ticks > 20, "{ticks} ticks");
    assert_eq!(allocated, 0, "allocations in {ticks} idle cron ticks");
}
