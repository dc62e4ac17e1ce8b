//! Returning the pages of large buffers to the kernel in steps, on
//! background threads, before the buffer is freed.
//!
//! Freeing a 270 MB slot array (a 10M-member set) unmaps ~66,000 pages in
//! one system call: ~5 ms of kernel time on the lazyfree thread. Even at
//! `SCHED_IDLE` that thread kept the worker sharing its core waiting for
//! 3-4 ms (Linux's EEVDF lets it finish its slice once picked), which a
//! client pinging every millisecond saw (docs/BENCHMARKS.md). Releasing the
//! pages with `madvise(MADV_DONTNEED)` [`STEP`] bytes at a time, sleeping
//! [`PAUSE`] between steps, bounds each stretch to one step; the free that
//! follows finds no pages left to unmap.
//!
//! Invariant: only a thread that called [`set_paced`]`(true)` ever releases
//! pages or sleeps here. On every other thread [`release_pages`] does
//! nothing, so a free on a worker costs what it always did.

use std::cell::Cell;
use std::time::Duration;

/// Bytes whose pages are released per step.
pub const STEP: usize = 1 << 20;

/// Sleep between two steps (the kernel's timer slack adds ~50 µs).
pub const PAUSE: Duration = Duration::from_micros(20);

const PAGE: usize = 4096;

thread_local! {
    static PACED: Cell<bool> = const { Cell::new(false) };
}

/// Marks this thread as one whose large frees may be paced (the lazyfree
/// thread).
pub fn set_paced(on: bool) {
    PACED.with(|p| p.set(on));
}

/// Whether this thread's large frees are paced.
pub fn paced() -> bool {
    PACED.with(|p| p.get())
}

/// On a paced thread, returns the whole pages of `bytes` bytes at `ptr` to
/// the kernel, [`STEP`] bytes at a time with a sleep between steps, when
/// the buffer spans at least two steps. Returns the number of steps taken.
///
/// # Safety
/// `ptr..ptr + bytes` must be memory the caller owns and is about to free;
/// its contents read as zeros afterwards, so nothing may read them (drop
/// no element that lives there).
pub unsafe fn release_pages(ptr: *mut u8, bytes: usize) -> usize {
    if bytes < 2 * STEP || !paced() {
        return 0;
    }
    let start = (ptr as usize).next_multiple_of(PAGE);
    let end = (ptr as usize + bytes) & !(PAGE - 1);
    let mut at = start;
    let mut steps = 0;
    while at < end {
        let n = STEP.min(end - at);
        // SAFETY: [at, at + n) is page-aligned and inside the caller's
        // buffer, whose contents nobody reads again (the contract above).
        // DONTNEED only drops the pages; the mapping stays for the
        // allocator.
        unsafe { libc::madvise(at as *mut libc::c_void, n, libc::MADV_DONTNEED) };
        at += n;
        steps += 1;
        if at < end {
            std::thread::sleep(PAUSE);
        }
    }
    steps
}

/// [`release_pages`] over a vector's whole allocation. Its elements must
/// need no drop (the caller has forgotten them or they are `Copy`).
///
/// # Safety
/// As for [`release_pages`]: `v` is about to be dropped and its contents
/// are not read again.
pub unsafe fn release_vec<T>(v: &mut Vec<T>) -> usize {
    let bytes = v.capacity() * std::mem::size_of::<T>();
    // SAFETY: forwarded from the caller.
    unsafe { release_pages(v.as_mut_ptr().cast::<u8>(), bytes) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unpaced_threads_never_release() {
        let mut v = vec![7u8; 4 * STEP];
        // SAFETY: not a paced thread, so nothing is released.
        assert_eq!(unsafe { release_vec(&mut v) }, 0);
        assert!(v.iter().all(|&b| b == 7));
    }

    #[test]
    #[cfg_attr(miri, ignore = "madvise is a foreign call")]
    fn paced_threads_release_in_steps() {
        std::thread::spawn(|| {
            set_paced(true);
            let mut v = vec![7u8; 4 * STEP];
            // SAFETY: u8 needs no drop; the read below checks the release.
            let steps = unsafe { release_vec(&mut v) };
            assert!((4..=5).contains(&steps), "{steps} steps");
            // Released pages read as zeros: the contents are gone.
            assert!(v[2 * STEP] == 0);
            let mut small = vec![7u8; STEP];
            // SAFETY: below two steps nothing is released.
            assert_eq!(unsafe { release_vec(&mut small) }, 0);
        })
        .join()
        .unwrap();
    }
}
