//! The global allocator: jemalloc, with an exact count of the bytes handed
//! out (INFO `used_memory`).
//!
//! Every block is counted by its real allocated size, jemalloc's size class
//! for the request ([`usable_size`]), so `used_memory` equals the sum of the
//! sizes of the live blocks the program asked for — the figure Redis's
//! `zmalloc_used_memory` gives, and the figure MEMORY USAGE adds up.
//!
//! Invariants:
//! * Each thread adds and subtracts on its own counter, which sits alone on
//!   a 128-byte line (no false sharing; the update is a plain load and store,
//!   no locked instruction). A counter may go negative: memory allocated by
//!   one thread and freed by another is added on the first and subtracted on
//!   the second. The sum over all counters is exact.
//! * A thread claims its counter on its first allocation; counters are never
//!   released (a dead thread's net count stays where it is, which keeps the
//!   sum right). After [`SLOTS`]` - 1` threads, later threads share the last
//!   counter with atomic adds.
//! * Reading ([`allocated`]) sums the claimed counters: O(threads), no lock.
//!   It is a snapshot only in the sense that concurrent allocations on other
//!   threads may or may not be included.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering::Relaxed};

use tikv_jemallocator::Jemalloc;

/// Counters available to threads (the last one is shared).
pub const SLOTS: usize = 256;

#[repr(align(128))]
struct Slot(AtomicI64);

#[allow(clippy::declare_interior_mutable_const)]
const ZERO: Slot = Slot(AtomicI64::new(0));
static COUNTS: [Slot; SLOTS] = [ZERO; SLOTS];
static CLAIMED: AtomicUsize = AtomicUsize::new(0);
const SHARED: usize = SLOTS - 1;

thread_local! {
    /// This thread's counter index, `usize::MAX` until claimed. Const
    /// initialised and without destructor, so reading it never allocates.
    static MINE: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// jemalloc's size class for a request of `n` bytes with alignment <= 16:
/// the store's formula (the one MEMORY USAGE counts with), checked against
/// jemalloc's own `nallocx` by this module's tests.
pub use store::heap::size_class;

/// Bytes jemalloc really hands out for `layout` (its usable size).
#[inline]
pub fn usable_size(layout: Layout) -> usize {
    let (size, align) = (layout.size(), layout.align());
    if align <= 16 && size <= 1 << 40 {
        size_class(size)
    } else {
        // SAFETY: nallocx only computes a size; the flags are valid.
        unsafe { tikv_jemalloc_sys::nallocx(size, tikv_jemalloc_sys::MALLOCX_ALIGN(align)) }
    }
}

#[inline]
fn add(delta: i64) {
    let i = MINE.try_with(|m| {
        let i = m.get();
        if i != usize::MAX {
            return i;
        }
        let i = CLAIMED.fetch_add(1, Relaxed).min(SHARED);
        m.set(i);
        i
    });
    match i {
        Ok(i) if i != SHARED => {
            let c = &COUNTS[i].0;
            // Only this thread writes counter `i`.
            c.store(c.load(Relaxed) + delta, Relaxed);
        }
        _ => {
            COUNTS[SHARED].0.fetch_add(delta, Relaxed);
        }
    }
}

/// Counters claimed so far (threads that allocated, capped at [`SLOTS`]).
pub fn claimed() -> usize {
    CLAIMED.load(Relaxed).min(SLOTS)
}

/// Bytes currently allocated through the global allocator, exact.
pub fn allocated() -> u64 {
    let n = CLAIMED.load(Relaxed).min(SLOTS);
    let mut sum = COUNTS[SHARED].0.load(Relaxed);
    for s in &COUNTS[..n.min(SHARED)] {
        sum += s.0.load(Relaxed);
    }
    sum.max(0) as u64
}

/// jemalloc, counting.
pub struct Counting;

// SAFETY: every call forwards to jemalloc unchanged; counting has no effect
// on the blocks.
unsafe impl GlobalAlloc for Counting {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let p = unsafe { Jemalloc.alloc(layout) };
        if !p.is_null() {
            add(usable_size(layout) as i64);
        }
        p
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as above.
        let p = unsafe { Jemalloc.alloc_zeroed(layout) };
        if !p.is_null() {
            add(usable_size(layout) as i64);
        }
        p
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        add(-(usable_size(layout) as i64));
        // SAFETY: as above.
        unsafe { Jemalloc.dealloc(ptr, layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as above.
        let p = unsafe { Jemalloc.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            // SAFETY: the caller guarantees new_size with this alignment is a
            // valid layout.
            let new = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
            add(usable_size(new) as i64 - usable_size(layout) as i64);
        }
        p
    }
}

/// jemalloc's statistics (refreshed: they are cached per epoch).
fn jemalloc_stats() -> commands::kernel::memprobe::AllocStats {
    use tikv_jemalloc_ctl::{epoch, stats};
    let _ = epoch::advance();
    let r = |x: tikv_jemalloc_ctl::Result<usize>| x.unwrap_or(0) as u64;
    commands::kernel::memprobe::AllocStats {
        allocated: r(stats::allocated::read()),
        active: r(stats::active::read()),
        resident: r(stats::resident::read()),
    }
}

/// `arena.<MALLCTL_ARENAS_ALL>.purge`: returns every arena's dirty pages to
/// the OS (MEMORY PURGE). The calling thread's cache is flushed first so
/// its cached blocks can be purged too.
fn jemalloc_purge() -> bool {
    const MALLCTL_ARENAS_ALL: u32 = 4096;
    let name = format!("arena.{MALLCTL_ARENAS_ALL}.purge\0");
    // SAFETY: both are void mallctls: no old or new value pointers.
    unsafe {
        tikv_jemalloc_sys::mallctl(
            c"thread.tcache.flush".as_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
        );
        tikv_jemalloc_sys::mallctl(
            name.as_ptr().cast(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
        ) == 0
    }
}

/// jemalloc's `malloc_stats_print` text (MEMORY MALLOC-STATS).
fn jemalloc_malloc_stats() -> String {
    unsafe extern "C" fn write(opaque: *mut std::ffi::c_void, text: *const std::ffi::c_char) {
        // SAFETY: `opaque` is the String passed below; jemalloc hands a
        // NUL-terminated string.
        let out = unsafe { &mut *(opaque as *mut String) };
        // SAFETY: as above.
        let text = unsafe { std::ffi::CStr::from_ptr(text) };
        out.push_str(&text.to_string_lossy());
    }
    let mut out = String::new();
    // SAFETY: the callback only appends to `out`, which outlives the call.
    unsafe {
        tikv_jemalloc_sys::malloc_stats_print(
            Some(write),
            (&mut out as *mut String).cast(),
            std::ptr::null(),
        )
    };
    out
}

/// Hands the counting allocator and jemalloc's statistics to INFO and
/// MEMORY (call once at startup, in the binary that installs [`Counting`]).
pub fn install_memory_probe() {
    commands::kernel::memprobe::set_mem_probe(commands::kernel::memprobe::MemProbe {
        name: "jemalloc-5.3.0",
        used: allocated,
        stats: jemalloc_stats,
        purge: jemalloc_purge,
        malloc_stats: jemalloc_malloc_stats,
        background_thread: |on| tikv_jemalloc_ctl::background_thread::write(on).is_ok(),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nallocx(size: usize, align: usize) -> usize {
        let flags = if align <= 16 && align <= size {
            0
        } else {
            tikv_jemalloc_sys::MALLOCX_ALIGN(align)
        };
        // SAFETY: pure size computation.
        unsafe { tikv_jemalloc_sys::nallocx(size, flags) }
    }

    /// The size-class formula is jemalloc's, for every size a program asks
    /// for in practice (exhaustive to 1 MiB, then sampled to 1 TiB).
    #[test]
    fn size_class_matches_jemalloc() {
        for n in 1..=(1 << 20) {
            assert_eq!(size_class(n), nallocx(n, 1), "{n}");
        }
        let mut n = 1usize << 20;
        while n < 1 << 40 {
            for m in [n - 1, n, n + 1, n + n / 3, n + n / 2 + 7] {
                assert_eq!(size_class(m), nallocx(m, 1), "{m}");
            }
            n <<= 1;
        }
        for align in [1, 2, 4, 8, 16, 32, 64, 4096] {
            for size in (align..100_000).step_by(align) {
                let l = Layout::from_size_align(size, align).unwrap();
                assert_eq!(usable_size(l), nallocx(size, align), "{size}/{align}");
            }
        }
    }

    #[test]
    fn counters_sum_across_threads() {
        let before = allocated() as i64;
        let mut own = 0i64;
        // Blocks allocated here and freed on other threads, and back.
        let blocks: Vec<(usize, usize)> = (1..200).map(|i| (i * 37, 8)).collect();
        let mut ptrs = Vec::new();
        for &(s, a) in &blocks {
            let l = Layout::from_size_align(s, a).unwrap();
            // SAFETY: non-zero layout; freed below with the same layout.
            ptrs.push((unsafe { Counting.alloc(l) } as usize, l));
            own += usable_size(l) as i64;
        }
        let mid = allocated() as i64;
        assert!(mid - before >= own);
        std::thread::spawn(move || {
            for (p, l) in ptrs {
                // SAFETY: allocated above with this layout.
                unsafe { Counting.dealloc(p as *mut u8, l) };
            }
        })
        .join()
        .unwrap();
        // Only this test's blocks moved the counters, other tests may run
        // concurrently on the system allocator (not counted).
        assert_eq!(allocated() as i64, mid - own);
    }
}
