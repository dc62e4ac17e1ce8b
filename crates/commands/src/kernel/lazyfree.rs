//! Lazy freeing: dropping large values on a background thread.
//!
//! UNLINK, FLUSHDB/FLUSHALL ASYNC and the `lazyfree-lazy-user-del` /
//! `lazyfree-lazy-user-flush` / `lazyfree-lazy-eviction` settings hand what
//! they removed to one background thread (`lazyfree-lazy-expire` and
//! `lazyfree-lazy-server-del` reach it through the keyspace's free hook,
//! [`LazyFree::install_store_hook`]), so freeing a 10M-member set costs the client O(1).
//! Like Redis, only values whose freeing takes many allocations go there
//! ([`LAZYFREE_THRESHOLD`] elements); small ones are freed in place, which is
//! cheaper than a hand-off.
//!
//! Invariants: `pending` counts objects handed over and not yet dropped
//! (INFO `lazyfree_pending_objects`); `freed` counts objects the thread has
//! dropped (`lazyfreed_objects`). An object is one key with its value; a
//! flushed database counts its keys, as in Redis.

use std::sync::atomic::{AtomicU64, Ordering};

use crossbeam_channel::{unbounded, Sender};
use parking_lot::Mutex;
use store::Entry;

/// Values with more elements than this are freed in the background
/// (Redis's `LAZYFREE_THRESHOLD`, counted in allocations).
pub const LAZYFREE_THRESHOLD: usize = store::keyspace::evict::LAZYFREE_THRESHOLD;

enum Garbage {
    Entries(Vec<Entry>),
    Value(store::CompactValue),
    #[allow(clippy::vec_box)]
    Dbs(Vec<Box<store::Db>>),
}

impl Garbage {
    fn objects(&self) -> u64 {
        match self {
            Garbage::Entries(v) => v.len() as u64,
            Garbage::Value(_) => 1,
            // As Redis counts a flushed database: by its keys.
            Garbage::Dbs(v) => v.iter().map(|d| d.len() as u64).sum(),
        }
    }
}

#[derive(Default, Clone)]
pub struct LazyFree {
    tx: std::sync::Arc<Mutex<Option<Sender<Garbage>>>>,
    pending: std::sync::Arc<AtomicU64>,
    freed: std::sync::Arc<AtomicU64>,
}

impl std::fmt::Debug for LazyFree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LazyFree(pending={})", self.pending())
    }
}

/// Logged before the process exits when the thread panicked.
const THREAD_DIED: &str = "The lazy-free thread panicked (logged above): exiting, as values handed to it would never be freed";

/// Is freeing this entry's value worth a hand-off?
pub fn worth_lazy(e: &Entry) -> bool {
    e.value().collection_len() > LAZYFREE_THRESHOLD
}

impl LazyFree {
    pub fn pending(&self) -> u64 {
        self.pending.load(Ordering::Relaxed)
    }

    pub fn freed(&self) -> u64 {
        self.freed.load(Ordering::Relaxed)
    }

    fn send(&self, g: Garbage) {
        let n = g.objects();
        if n == 0 {
            return;
        }
        let mut tx = self.tx.lock();
        let sender = tx.get_or_insert_with(|| {
            let (tx, rx) = unbounded::<Garbage>();
            let pending = self.pending.clone();
            let freed = self.freed.clone();
            std::thread::Builder::new()
                .name("petrel-lazyfree".into())
                .spawn(move || {
                    // Freeing runs on idle CPU time only (SCHED_IDLE): a
                    // worker that becomes runnable always preempts it, so a
                    // 10M-member free does not delay commands even when the
                    // whole process is pinned to one core.
                    crate::base::sched::set_idle_policy(0);
                    // SCHED_IDLE alone is not enough under EEVDF: once
                    // picked, the thread may finish its slice (3-4 ms
                    // measured) while the worker waits. Big arrays give their
                    // pages back in steps with sleeps between (see
                    // collections::release).
                    collections::release::set_paced(true);
                    // Freeing a 10M-key database is ~80 ms of work; it
                    // sleeps briefly after every 200 µs of it (store::pace).
                    let mut pacer = store::pace::Pacer::new();
                    // A panic here would leave values handed over never
                    // freed and `lazyfree_pending_objects` stuck: it is
                    // logged (by the panic hook) and ends the process, as a
                    // dead cron thread does (server::faults).
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        for g in rx {
                            if crate::base::fault_hooks::take(&crate::base::fault_hooks::LAZYFREE) {
                                panic!("DEBUG PANIC-THREAD lazyfree");
                            }
                            let n = g.objects();
                            match g {
                                Garbage::Entries(v) => {
                                    for e in v {
                                        drop(e);
                                        pacer.between_chunks();
                                    }
                                }
                                Garbage::Value(v) => drop(v),
                                Garbage::Dbs(dbs) => {
                                    for db in dbs {
                                        db.drop_with(|| {
                                            pacer.between_chunks();
                                        });
                                    }
                                }
                            }
                            pending.fetch_sub(n, Ordering::Relaxed);
                            freed.fetch_add(n, Ordering::Relaxed);
                        }
                    }));
                    if r.is_err() {
                        crate::base::log::log(crate::base::log::LogLevel::Warning, THREAD_DIED);
                        std::process::exit(1);
                    }
                })
                .expect("spawn the lazyfree thread");
            tx
        });
        self.pending.fetch_add(n, Ordering::Relaxed);
        if let Err(e) = sender.send(g) {
            // The thread is gone (cannot happen while the server runs):
            // free here.
            self.pending.fetch_sub(n, Ordering::Relaxed);
            drop(e.into_inner());
        }
    }

    /// Frees removed entries: the large ones in the background when `lazy`,
    /// everything else right here.
    pub fn free_entries(&self, entries: Vec<Entry>, lazy: bool) {
        if !lazy {
            drop(entries);
            return;
        }
        let (big, small): (Vec<Entry>, Vec<Entry>) = entries.into_iter().partition(worth_lazy);
        drop(small);
        self.send(Garbage::Entries(big));
    }

    /// Frees one value in the background (expiry and overwrite hand-offs).
    pub fn free_value(&self, v: store::CompactValue) {
        self.send(Garbage::Value(v));
    }

    /// Lets the keyspace hand large expired or overwritten values to this
    /// thread (it does so only while `lazyfree-lazy-expire` /
    /// `lazyfree-lazy-server-del` are on).
    pub fn install_store_hook(&self, ks: &store::Keyspace) {
        let me = self.clone();
        ks.set_free_hook(Box::new(move |v| me.free_value(v)));
    }

    /// Frees flushed databases, in the background when `lazy`.
    #[allow(clippy::vec_box)]
    pub fn free_dbs(&self, dbs: Vec<Box<store::Db>>, lazy: bool) {
        if lazy {
            self.send(Garbage::Dbs(dbs));
        } else {
            drop(dbs);
        }
    }
}
