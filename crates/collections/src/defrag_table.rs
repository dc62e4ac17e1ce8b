//! A hash table whose own block active defragmentation can move
//! ([`DefragTable`]), for long-lived global maps outside the keyspace (the
//! Pub/Sub registry).
//!
//! A hash table's bucket array cannot be moved bit for bit through
//! `std::collections::HashMap`: nothing outside it knows the block. This is
//! a `hashbrown::HashTable` over [`TableAlloc`], an allocator that
//! remembers the table's one block, so the table can be offered:
//! [`DefragTable::defrag_table`] asks the mover whether that block should
//! move and, if so, rebuilds the table into a new bucket array of the same
//! size allocated outside the thread cache (`Mover::alloc`); the elements
//! themselves are moved by value (no element allocates), and the old array
//! is freed outside the cache too (`Mover::free`). The elements' own blocks
//! are offered by the owner through [`DefragTable::defrag_buckets`], which
//! visits the buckets by index so a pass can stop and resume.
//!
//! Invariants:
//! * A table holds at most one block at a time, the bucket array, always
//!   allocated and freed through its own [`TableAlloc`]; the allocator
//!   knows it (address and layout) from its allocation to its release.
//! * A rebuild keeps the bucket count, hence the layout, so every memory
//!   figure is unchanged (the new array, from the mover, is not counted by
//!   a counting global allocator, nor is the old one's release: the count
//!   the old array added stays for the new one); it runs only for an array no bigger than the
//!   mover's `max_size` (about 14 KiB with jemalloc: at most 256 buckets),
//!   so it is bounded.
//! * A rebuild changes which bucket holds which element: a bucket cursor
//!   is only a place to resume, so an element may be visited twice or not
//!   at all in a pass in which the table was rebuilt or resized, never a
//!   stale one.

use std::alloc::Layout;
use std::cell::Cell;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use allocator_api2::alloc::{AllocError, Allocator};
use hashbrown17::HashTable;

use crate::defrag::{Defrag, Mover};

pub use hashbrown17::hash_table;

std::thread_local! {
    /// While a rebuild runs on this thread: the mover that allocates the
    /// new array and frees the old one, the block being replaced (for its
    /// arena), and whether the mover's allocation failed (then the global
    /// allocator gave the block instead).
    static ROUTE: Cell<Option<(Mover, *const u8)>> = const { Cell::new(None) };
    static ROUTE_FAILED: Cell<bool> = const { Cell::new(false) };
}

/// The allocator of a [`DefragTable`]: the global allocator, remembering
/// the table's block; during a rebuild on this thread, the mover's
/// outside-the-cache functions.
#[derive(Debug, Default)]
pub struct TableAlloc {
    /// Address, size and alignment of the live block (0 when none). Only
    /// written under `&mut` of the table (hashbrown allocates only when
    /// the table changes), read under `&` or `&mut`.
    block: AtomicUsize,
    size: AtomicUsize,
    align: AtomicUsize,
}

impl TableAlloc {
    /// The table's block and its layout, `None` while it has none.
    pub fn block(&self) -> Option<(NonNull<u8>, Layout)> {
        let p = NonNull::new(self.block.load(Relaxed) as *mut u8)?;
        let layout =
            Layout::from_size_align(self.size.load(Relaxed), self.align.load(Relaxed)).ok()?;
        Some((p, layout))
    }
}

// SAFETY: every block comes from the global allocator (directly, or through
// the mover, whose blocks are global-allocator blocks) with the layout
// asked for and is freed with the layout it was allocated with; the
// bookkeeping does not touch the blocks.
unsafe impl Allocator for TableAlloc {
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        if layout.size() == 0 {
            // A zero-size block is never remembered nor freed for real.
            let dangling = NonNull::new(layout.align() as *mut u8).ok_or(AllocError)?;
            return Ok(NonNull::slice_from_raw_parts(dangling, 0));
        }
        let routed = ROUTE.with(|r| r.get());
        let mut p = std::ptr::null_mut();
        if let Some((m, near)) = routed {
            // SAFETY: non-zero size; `near` is the live block being replaced.
            p = unsafe { (m.alloc)(near, layout) };
            if p.is_null() {
                ROUTE_FAILED.with(|f| f.set(true));
            }
        }
        if p.is_null() {
            // SAFETY: non-zero size.
            p = unsafe { std::alloc::alloc(layout) };
        }
        let p = NonNull::new(p).ok_or(AllocError)?;
        self.block.store(p.as_ptr() as usize, Relaxed);
        self.size.store(layout.size(), Relaxed);
        self.align.store(layout.align(), Relaxed);
        Ok(NonNull::slice_from_raw_parts(p, layout.size()))
    }

    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        if layout.size() == 0 {
            return;
        }
        if self.block.load(Relaxed) == ptr.as_ptr() as usize {
            self.block.store(0, Relaxed);
        }
        match ROUTE.with(|r| r.get()) {
            // SAFETY: the caller's contract: a live block of `layout`.
            Some((m, _)) => unsafe { (m.free)(ptr.as_ptr(), layout) },
            // SAFETY: as above; it came from the global allocator.
            None => unsafe { std::alloc::dealloc(ptr.as_ptr(), layout) },
        }
    }
}

/// Sets the route for the rebuild in scope, and clears it when dropped
/// (also when a hasher panics).
struct Route;

impl Route {
    fn through(m: Mover, near: *const u8) -> Route {
        ROUTE.with(|r| r.set(Some((m, near))));
        ROUTE_FAILED.with(|f| f.set(false));
        Route
    }
}

impl Drop for Route {
    fn drop(&mut self) {
        ROUTE.with(|r| r.set(None));
    }
}

/// A `hashbrown::HashTable` whose bucket array active defrag can move (see
/// the module docs). It dereferences to the table.
#[derive(Debug, Default)]
pub struct DefragTable<T> {
    table: HashTable<T, TableAlloc>,
}

impl<T> std::ops::Deref for DefragTable<T> {
    type Target = HashTable<T, TableAlloc>;
    fn deref(&self) -> &Self::Target {
        &self.table
    }
}

impl<T> std::ops::DerefMut for DefragTable<T> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.table
    }
}

impl<T> DefragTable<T> {
    pub fn new() -> Self {
        DefragTable {
            table: HashTable::new_in(TableAlloc::default()),
        }
    }

    /// Offers the bucket array to `d`: when the allocator advises moving
    /// it, the table is rebuilt into an array of the same size from the
    /// mover (`hasher` gives each element's hash, as for every insertion).
    /// Counts one hit or one miss; an empty table has no block and counts
    /// nothing. Returns whether it moved.
    pub fn defrag_table(&mut self, d: &mut Defrag, hasher: impl Fn(&T) -> u64) -> bool {
        let Some((old_ptr, layout)) = self.table.allocator().block() else {
            return false;
        };
        if !d.advises_move(old_ptr, layout) {
            return false;
        }
        let buckets = self.table.num_buckets();
        let cap = self.table.capacity();
        let route = Route::through(d.mover(), old_ptr.as_ptr());
        let mut fresh = HashTable::with_capacity_in(cap, TableAlloc::default());
        let moved = !ROUTE_FAILED.with(|f| f.get());
        let same = fresh.num_buckets() == buckets
            && fresh.allocator().block().map(|b| b.1) == Some(layout);
        if !moved || !same {
            // A failed allocation, or (never expected: the capacity of a
            // bucket count gives that count back) another size: keep the
            // old array. `fresh` is freed the way it came: a block of the
            // global allocator (the fallback) through it, one of the mover
            // through the route, so the program's count of allocated bytes
            // (which sees the global allocator only) stays exact.
            if moved {
                drop(fresh);
                drop(route);
            } else {
                drop(route);
                drop(fresh);
            }
            d.count(false);
            return false;
        }
        let old = std::mem::replace(&mut self.table, HashTable::new_in(TableAlloc::default()));
        for t in old {
            // No element is dropped or copied: each is moved by value into
            // an array with room for all of them (no growth).
            fresh.insert_unique(hasher(&t), t, &hasher);
        }
        // The old array was freed when its iterator ended, through the
        // route (outside the cache).
        drop(route);
        self.table = fresh;
        d.count(true);
        true
    }

    /// Visits up to `n` buckets from bucket `from`, giving each element to
    /// `f` (to offer the element's own blocks; `f` must not change what
    /// the element hashes to). Returns the bucket to resume at, or `None`
    /// when the last bucket was visited. `from` past the end (the table
    /// shrank meanwhile) ends at once.
    pub fn defrag_buckets(
        &mut self,
        from: usize,
        n: usize,
        mut f: impl FnMut(&mut T),
    ) -> Option<usize> {
        let end = self.table.num_buckets();
        let stop = from.saturating_add(n.max(1)).min(end);
        for i in from..stop {
            if let Some(t) = self.table.get_bucket_mut(i) {
                f(t);
            }
        }
        (stop < end).then_some(stop)
    }
}

#[cfg(test)]
#[path = "defrag_table_tests.rs"]
mod tests;
