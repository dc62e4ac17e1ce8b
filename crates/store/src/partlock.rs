//! The partition lock: a mutex that the thread holding it may take again,
//! so EXEC can hold every partition while the queued commands lock the ones
//! they need as usual.
//!
//! Two levels:
//! * [`PartitionLock::hold`] takes the (re-entrant) mutex without touching the
//!   data: EXEC holds all partitions this way, in ascending order.
//! * [`PartitionLock::lock`] takes the mutex (re-entering if this thread holds
//!   it) and borrows the data mutably, returning a [`PartitionGuard`].
//!
//! Invariant: at most one `PartitionGuard` per partition exists at a time.
//! Other threads are excluded by the mutex; on the holding thread the
//! `borrowed` flag is checked and set on every `lock`, so a second borrow
//! panics (where a plain mutex would deadlock) instead of aliasing.

use std::cell::{Cell, UnsafeCell};
use std::ops::{Deref, DerefMut};

use parking_lot::{ReentrantMutex, ReentrantMutexGuard};

struct Cellar<T> {
    borrowed: Cell<bool>,
    data: UnsafeCell<T>,
}

// SAFETY: a `Cellar` is only reached through the `ReentrantMutex`, which lets a
// single thread at a time in; moving the value between threads is fine when T
// is Send. The mutex requires `T: Send` to be Sync, which this provides.
unsafe impl<T: Send> Send for Cellar<T> {}

pub struct PartitionLock<T> {
    inner: ReentrantMutex<Cellar<T>>,
}

/// Proof that this thread holds the partition (no access to the data).
pub struct Hold<'a, T> {
    _guard: ReentrantMutexGuard<'a, Cellar<T>>,
}

/// Exclusive access to a partition's data.
pub struct PartitionGuard<'a, T> {
    guard: ReentrantMutexGuard<'a, Cellar<T>>,
}

impl<T> PartitionLock<T> {
    pub fn new(v: T) -> Self {
        PartitionLock {
            inner: ReentrantMutex::new(Cellar {
                borrowed: Cell::new(false),
                data: UnsafeCell::new(v),
            }),
        }
    }

    pub fn hold(&self) -> Hold<'_, T> {
        Hold {
            _guard: self.inner.lock(),
        }
    }

    pub fn lock(&self) -> PartitionGuard<'_, T> {
        let guard = self.inner.lock();
        assert!(
            !guard.borrowed.replace(true),
            "partition locked twice by one thread (would deadlock with a plain mutex)"
        );
        PartitionGuard { guard }
    }
}

impl<T> Deref for PartitionGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: this guard set `borrowed` and is the only guard of this
        // partition on the only thread inside the mutex (module invariant).
        unsafe { &*self.guard.data.get() }
    }
}

impl<T> DerefMut for PartitionGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`; `&mut self` makes this borrow unique.
        unsafe { &mut *self.guard.data.get() }
    }
}

impl<T> Drop for PartitionGuard<'_, T> {
    fn drop(&mut self) {
        self.guard.borrowed.set(false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn reentrant_under_hold() {
        let l = PartitionLock::new(5);
        let _h = l.hold();
        {
            let mut g = l.lock();
            *g += 1;
        }
        assert_eq!(*l.lock(), 6);
    }

    #[test]
    #[should_panic(expected = "locked twice")]
    fn double_borrow_panics() {
        let l = PartitionLock::new(0);
        let _a = l.lock();
        let _b = l.lock();
    }

    #[test]
    fn excludes_other_threads() {
        let l = Arc::new(PartitionLock::new(0u64));
        let hs: Vec<_> = (0..4)
            .map(|_| {
                let l = l.clone();
                std::thread::spawn(move || {
                    for _ in 0..10_000 {
                        *l.lock() += 1;
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(*l.lock(), 40_000);
    }
}
