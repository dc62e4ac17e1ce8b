//! Active defragmentation: moving live heap blocks out of sparse allocator
//! pages, one owner at a time.
//!
//! The allocator decides *whether* a block should move ([`Mover::should_move`],
//! for jemalloc: is the block's slab less used than the average slab of its
//! size class?) and *how* (allocate the replacement outside the thread
//! cache, so it lands in the fullest slab, copy, free the old block). Those
//! two functions are installed once by the binary that owns the global
//! allocator ([`install`]); this crate and the keyspace know nothing of
//! jemalloc. Without an installed mover nothing moves.
//!
//! Every structure fixes its own pointers: a type that owns heap blocks has
//! a `defrag(&mut self, d: &mut Defrag)` method that offers each block it
//! owns to [`Defrag::relocate`] and stores the pointer it gets back.
//! A big structure offers its blocks in bounded steps instead:
//! `defrag(&mut self, from: u64, max_fields, d) -> Option<u64>` (table
//! sets and hashes, tree sorted sets; streams and a quicklist's
//! `defrag_nodes` take a fixed amount per step instead of `max_fields`)
//! starts at `from` 0, visits about `max_fields` elements
//! (`active-defrag-max-scan-fields`) and returns where to go on. The
//! structure may change between steps: the cursor is then only a place to
//! resume, checked against the current bounds, so a block may be offered
//! twice or not at all in that pass, never a stale one.
//!
//! Every heap block of every collection is offered, the small ones last
//! to be added being a stream's PEL entry arrays (group and consumer PELs,
//! offered in the stream's last steps) and a quicklist's node array (its
//! `VecDeque` buffer, offered in the list's first step; a ring buffer is
//! known only by its start, so [`Defrag::vec_deque`] rotates it there
//! first, and does so only when it is no bigger than the mover's
//! [`Mover::max_size`], keeping that step bounded).
//!
//! Invariants:
//! * A block handed to [`Defrag::relocate`] was allocated by the global
//!   allocator with exactly the given layout and is owned by the caller;
//!   after a move the old pointer is dangling and the caller holds only the
//!   returned one. The bytes are copied unchanged, so a move changes no
//!   observable value.
//! * The moved block has the same layout, so its size class (and every
//!   memory figure the program keeps) is unchanged.
//! * A block bigger than [`Mover::max_size`] is never moved (nor is the
//!   allocator asked about it): it counts as a miss.

use std::alloc::Layout;
use std::ptr::NonNull;
use std::sync::OnceLock;

/// The allocator's side of defragmentation.
#[derive(Clone, Copy)]
pub struct Mover {
    /// Should the block at this address move? (May be asked of any live
    /// block of the global allocator.)
    pub should_move: fn(*const u8) -> bool,
    /// Allocates a block of `layout` outside the thread cache, copies
    /// `layout.size()` bytes from `old` into it and frees `old` (also
    /// outside the cache). Returns the new block, or null when the
    /// allocation failed (then `old` is untouched).
    ///
    /// # Safety
    /// `old` is a live block of the global allocator with exactly `layout`.
    pub move_block: unsafe fn(old: *mut u8, layout: Layout) -> *mut u8,
    /// Allocates a block of `layout` outside the thread cache, in the
    /// arena of the live block `near` (the block it replaces): for a
    /// structure that cannot move its block bit for bit and rebuilds
    /// itself into a new one instead ([`crate::defrag_table`]). Null when
    /// the allocation failed.
    ///
    /// # Safety
    /// `layout` has a non-zero size; `near` is a live block of the global
    /// allocator. The result is freed like any block of `layout`.
    pub alloc: unsafe fn(near: *const u8, layout: Layout) -> *mut u8,
    /// Frees a block of `layout` outside the thread cache, so its slab can
    /// empty (the block a rebuilt structure left).
    ///
    /// # Safety
    /// `p` is a live block of the global allocator with exactly `layout`.
    pub free: unsafe fn(p: *mut u8, layout: Layout),
    /// The largest block the allocator ever moves (jemalloc: its largest
    /// small size class; larger blocks have no slab). A bigger block is
    /// left where it is without asking `should_move`, and a structure
    /// that must do work before it can offer a block (a ring buffer
    /// rotated to its start, [`Defrag::vec_deque`]) skips that work.
    pub max_size: usize,
}

static MOVER: OnceLock<Mover> = OnceLock::new();

/// Installs the allocator's mover (once, at startup; later calls are
/// ignored).
pub fn install(m: Mover) {
    let _ = MOVER.set(m);
}

/// Is a mover installed (can this process defragment at all)?
pub fn available() -> bool {
    MOVER.get().is_some()
}

/// One defragmentation pass's context: the mover and its counters.
pub struct Defrag {
    mover: Mover,
    /// Blocks moved.
    pub hits: u64,
    /// Blocks looked at and left where they were.
    pub misses: u64,
}

impl Defrag {
    /// A context with the installed mover, `None` when there is none.
    pub fn new() -> Option<Defrag> {
        MOVER.get().map(|&m| Defrag::with_mover(m))
    }

    /// A context with a given mover (tests).
    pub fn with_mover(mover: Mover) -> Defrag {
        Defrag {
            mover,
            hits: 0,
            misses: 0,
        }
    }

    /// Offers the block at `p` (of `layout`): returns the address it now
    /// lives at (`p` itself when it stayed).
    ///
    /// # Safety
    /// `p` is a live block of the global allocator allocated with exactly
    /// `layout` and owned by the caller; if the result differs from `p`,
    /// `p` has been freed and must not be used again.
    pub unsafe fn relocate(&mut self, p: NonNull<u8>, layout: Layout) -> NonNull<u8> {
        if layout.size() == 0
            || layout.size() > self.mover.max_size
            || !(self.mover.should_move)(p.as_ptr())
        {
            self.misses += 1;
            return p;
        }
        // SAFETY: forwarded from the caller's guarantee.
        match NonNull::new(unsafe { (self.mover.move_block)(p.as_ptr(), layout) }) {
            Some(n) => {
                self.hits += 1;
                n
            }
            None => {
                self.misses += 1;
                p
            }
        }
    }

    /// For a block its owner cannot move bit for bit (it rebuilds itself
    /// into a block from [`Defrag::mover`]'s `alloc` instead): should it
    /// move? A block that stays counts as a miss here; one that moves is
    /// counted by the owner ([`Defrag::count`]) once the rebuild is done.
    pub fn advises_move(&mut self, p: NonNull<u8>, layout: Layout) -> bool {
        let go = layout.size() != 0
            && layout.size() <= self.mover.max_size
            && (self.mover.should_move)(p.as_ptr());
        if !go {
            self.misses += 1;
        }
        go
    }

    /// Would [`Defrag::vec`] move this vector's buffer now? Asks the
    /// allocator without moving or counting anything: for owners that can
    /// reach a vector only by taking it out of its container, so they do
    /// that only when a move will follow.
    pub fn would_move_vec<T>(&self, v: &Vec<T>) -> bool {
        let Ok(layout) = Layout::array::<T>(v.capacity()) else {
            return false;
        };
        layout.size() != 0
            && layout.size() <= self.mover.max_size
            && (self.mover.should_move)(v.as_ptr().cast::<u8>().cast_mut())
    }

    /// Counts a block its owner moved (`true`) or left (`false`) itself.
    pub fn count(&mut self, moved: bool) {
        if moved {
            self.hits += 1;
        } else {
            self.misses += 1;
        }
    }

    /// The mover this pass uses.
    pub fn mover(&self) -> Mover {
        self.mover
    }

    /// Moves a vector's buffer if the allocator advises it.
    pub fn vec<T>(&mut self, v: &mut Vec<T>) {
        let cap = v.capacity();
        if cap == 0 || std::mem::size_of::<T>() == 0 {
            return;
        }
        let layout = Layout::array::<T>(cap).expect("a live vector's layout");
        let len = v.len();
        let old = NonNull::new(v.as_mut_ptr().cast::<u8>()).expect("allocated vector");
        // SAFETY: a vector with capacity > 0 owns a block of exactly
        // `Layout::array::<T>(cap)` from the global allocator.
        let new = unsafe { self.relocate(old, layout) };
        if new != old {
            // SAFETY: the elements were copied bit for bit into a block of
            // the same layout; the old buffer is freed, so the old vector
            // must not drop it: it is forgotten and rebuilt over the new one.
            unsafe {
                let stale = std::mem::take(v);
                std::mem::forget(stale);
                *v = Vec::from_raw_parts(new.as_ptr().cast::<T>(), len, cap);
            }
        }
    }

    /// Moves a ring buffer's block if the allocator advises it. A ring
    /// whose elements do not start at the start of its buffer is rotated
    /// there first (O(len) `memmove`s, within the buffer), because the
    /// block is known only through that start: this is done only for a
    /// buffer no bigger than [`Mover::max_size`], so the rotation is
    /// bounded by that size and never paid for a block that cannot move.
    /// Order, length and capacity are unchanged.
    pub fn vec_deque<T>(&mut self, q: &mut std::collections::VecDeque<T>) {
        let cap = q.capacity();
        if cap == 0 || std::mem::size_of::<T>() == 0 {
            return;
        }
        let bytes = Layout::array::<T>(cap).map_or(usize::MAX, |l| l.size());
        if bytes > self.mover.max_size {
            self.misses += 1;
            return;
        }
        // Both conversions keep the buffer: to a vector rotates the
        // elements to its start, back to a ring is O(1).
        let mut v = Vec::from(std::mem::take(q));
        self.vec(&mut v);
        *q = std::collections::VecDeque::from(v);
    }

    /// Moves a box's block if the allocator advises it.
    pub fn boxed<T>(&mut self, b: &mut Box<T>) {
        let layout = Layout::new::<T>();
        if layout.size() == 0 {
            return;
        }
        let old = NonNull::from(&mut **b).cast::<u8>();
        // SAFETY: a box of a sized, non-zero-size T owns a block of
        // `Layout::new::<T>()`.
        let new = unsafe { self.relocate(old, layout) };
        if new != old {
            // SAFETY: the value was copied bit for bit; the old block is
            // freed, so the old box is forgotten, not dropped.
            unsafe {
                let stale = std::ptr::replace(b, Box::from_raw(new.as_ptr().cast::<T>()));
                std::mem::forget(stale);
            }
        }
    }

    /// Moves a boxed slice's block if the allocator advises it.
    pub fn boxed_slice<T>(&mut self, b: &mut Box<[T]>) {
        let len = b.len();
        if len == 0 || std::mem::size_of::<T>() == 0 {
            return;
        }
        let layout = Layout::array::<T>(len).expect("a live slice's layout");
        let old = NonNull::new(b.as_mut_ptr().cast::<u8>()).expect("allocated slice");
        // SAFETY: a non-empty boxed slice owns a block of
        // `Layout::array::<T>(len)`.
        let new = unsafe { self.relocate(old, layout) };
        if new != old {
            // SAFETY: as in `boxed`.
            unsafe {
                let fresh = std::ptr::slice_from_raw_parts_mut(new.as_ptr().cast::<T>(), len);
                let stale = std::ptr::replace(b, Box::from_raw(fresh));
                std::mem::forget(stale);
            }
        }
    }
}

#[cfg(test)]
#[path = "defrag_tests.rs"]
mod tests;

#[doc(hidden)]
pub mod testing {
    //! A mover for tests: moves every block (or every other one), through
    //! the global allocator, so tests see every pointer change.
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

    static ASKED: AtomicU64 = AtomicU64::new(0);

    std::thread_local! {
        static MOVES: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    }

    /// Blocks this thread has moved through the testing mover: a structure
    /// that counts a hit must have moved the block through the mover (not
    /// through the global allocator behind its back).
    pub fn moves_on_this_thread() -> u64 {
        MOVES.with(|m| m.get())
    }

    fn always(_: *const u8) -> bool {
        true
    }
    fn every_other(_: *const u8) -> bool {
        ASKED.fetch_add(1, Relaxed).is_multiple_of(2)
    }
    unsafe fn move_block(old: *mut u8, layout: Layout) -> *mut u8 {
        MOVES.with(|m| m.set(m.get() + 1));
        // SAFETY: caller's contract: `old` is a live block of `layout`.
        unsafe {
            let new = std::alloc::alloc(layout);
            if new.is_null() {
                return new;
            }
            std::ptr::copy_nonoverlapping(old, new, layout.size());
            // Poison the old block before freeing it, so a stale pointer
            // reads garbage in the tests rather than the right bytes.
            std::ptr::write_bytes(old, 0xA5, layout.size());
            std::alloc::dealloc(old, layout);
            new
        }
    }

    /// The replacement block of a structure that rebuilds itself; counted
    /// with the moves (a rebuild that counts a hit went through here).
    unsafe fn alloc(_near: *const u8, layout: Layout) -> *mut u8 {
        MOVES.with(|m| m.set(m.get() + 1));
        // SAFETY: the caller's contract: a non-zero size.
        unsafe { std::alloc::alloc(layout) }
    }
    unsafe fn free(p: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract: a live block of `layout`; it is
        // poisoned first, as in `move_block`.
        unsafe {
            std::ptr::write_bytes(p, 0xA5, layout.size());
            std::alloc::dealloc(p, layout);
        }
    }

    fn mover(should_move: fn(*const u8) -> bool, max_size: usize) -> Mover {
        Mover {
            should_move,
            move_block,
            alloc,
            free,
            max_size,
        }
    }

    pub fn all() -> Defrag {
        Defrag::with_mover(mover(always, usize::MAX))
    }
    /// Moves every block of at most `max_size` bytes.
    pub fn all_up_to(max_size: usize) -> Defrag {
        Defrag::with_mover(mover(always, max_size))
    }
    pub fn half() -> Defrag {
        Defrag::with_mover(mover(every_other, usize::MAX))
    }
}
