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
//!
//! Faults: a panic that unwinds through a `PartitionGuard` (a command
//! panicked while it had the data borrowed, so a change may be half made)
//! *stops* the partition for good: every later [`PartitionLock::lock`]
//! panics with a [`PartitionStopped`] payload instead of handing out data
//! nobody can vouch for. Callers that can answer an error catch that
//! payload (`commands::runtime::dispatch::call`); background work asks
//! [`PartitionLock::is_stopped`] first and skips the partition. Unwinding
//! from a `PartitionStopped` refusal itself stops nothing (no data was
//! changed by the refused `lock`); this thread-local exception is why
//! [`REFUSING`] exists.

use std::cell::{Cell, UnsafeCell};
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};

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
    /// Set when a panic unwound through a guard of this partition.
    stopped: AtomicBool,
    /// The partition's index, carried by [`PartitionStopped`].
    id: usize,
}

/// The panic payload of a `lock` refused because the partition is stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartitionStopped(pub usize);

thread_local! {
    /// True while this thread unwinds from a [`PartitionStopped`] refusal:
    /// guards dropped by that unwinding do not stop their partitions.
    static REFUSING: Cell<bool> = const { Cell::new(false) };
}

/// Proof that this thread holds the partition (no access to the data).
pub struct Hold<'a, T> {
    _guard: ReentrantMutexGuard<'a, Cellar<T>>,
}

/// Exclusive access to a partition's data.
pub struct PartitionGuard<'a, T> {
    guard: ReentrantMutexGuard<'a, Cellar<T>>,
    stopped: &'a AtomicBool,
}

impl<T> PartitionLock<T> {
    pub fn new(v: T) -> Self {
        Self::with_id(v, 0)
    }

    /// A lock whose refusals name partition `id`.
    pub fn with_id(v: T, id: usize) -> Self {
        PartitionLock {
            inner: ReentrantMutex::new(Cellar {
                borrowed: Cell::new(false),
                data: UnsafeCell::new(v),
            }),
            stopped: AtomicBool::new(false),
            id,
        }
    }

    /// Whether a panic stopped this partition (see the module docs).
    pub fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::Acquire)
    }

    pub fn hold(&self) -> Hold<'_, T> {
        Hold {
            _guard: self.inner.lock(),
        }
    }

    /// Borrows the data. Panics with [`PartitionStopped`] when the
    /// partition is stopped.
    pub fn lock(&self) -> PartitionGuard<'_, T> {
        if !std::thread::panicking() {
            REFUSING.with(|r| r.set(false));
        }
        if self.is_stopped() {
            REFUSING.with(|r| r.set(true));
            std::panic::panic_any(PartitionStopped(self.id));
        }
        let guard = self.inner.lock();
        assert!(
            !guard.borrowed.replace(true),
            "partition locked twice by one thread (would deadlock with a plain mutex)"
        );
        PartitionGuard {
            guard,
            stopped: &self.stopped,
        }
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

impl<T> PartitionGuard<'_, T> {
    /// Hands the partition to a thread waiting for it, if one is parked,
    /// and takes it back after that thread is done (parking_lot's fair
    /// `bump`); does nothing when nobody waits. For background work that
    /// holds a partition in short stretches (active defrag): a waiting
    /// command gets in between two stretches instead of losing the race
    /// to this thread locking again.
    pub fn bump(&mut self) {
        // The waiter borrows the data while we are out.
        self.guard.borrowed.set(false);
        ReentrantMutexGuard::bump(&mut self.guard);
        assert!(
            !self.guard.borrowed.replace(true),
            "a guard outlived its bump"
        );
    }
}

impl<T> Drop for PartitionGuard<'_, T> {
    fn drop(&mut self) {
        if std::thread::panicking() && !REFUSING.with(|r| r.get()) {
            self.stopped.store(true, Ordering::Release);
        }
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
    fn bump_lets_a_waiting_thread_in() {
        let l = Arc::new(PartitionLock::new(0u32));
        let mut g = l.lock();
        g.bump(); // nobody waits: keeps the lock
        *g += 1;
        let l2 = l.clone();
        let waiter = std::thread::spawn(move || *l2.lock() += 10);
        // Bump until the waiter has been in (it parks first).
        while *g == 1 {
            g.bump();
            std::thread::yield_now();
        }
        assert_eq!(*g, 11, "the waiter changed the data while we were out");
        *g += 100;
        drop(g);
        waiter.join().unwrap();
        assert_eq!(*l.lock(), 111);
    }

    #[test]
    fn a_panic_under_a_guard_stops_the_partition() {
        let l = PartitionLock::with_id(1u32, 3);
        // A panic with no guard held stops nothing.
        let r = std::panic::catch_unwind(|| panic!("no guard"));
        assert!(r.is_err());
        assert!(!l.is_stopped());
        // Half a change, then a panic: the partition is stopped.
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut g = l.lock();
            *g += 1;
            panic!("half done");
        }));
        assert!(r.is_err());
        assert!(l.is_stopped());
        // Every later lock is refused with the partition's index.
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| *l.lock()));
        let payload = r.unwrap_err();
        assert_eq!(
            payload.downcast_ref::<PartitionStopped>(),
            Some(&PartitionStopped(3))
        );
        // Holding (EXEC) still works: it does not touch the data.
        drop(l.hold());
    }

    #[test]
    fn a_refusal_does_not_stop_the_partitions_already_locked() {
        let a = PartitionLock::with_id(0u32, 0);
        let b = PartitionLock::with_id(0u32, 1);
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _g = b.lock();
            panic!("stop b");
        }));
        assert!(b.is_stopped());
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ga = a.lock();
            let _gb = b.lock();
        }));
        assert!(r.is_err());
        assert!(!a.is_stopped(), "a refusal stopped a healthy partition");
        *a.lock() += 1;
        assert_eq!(*a.lock(), 1);
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
