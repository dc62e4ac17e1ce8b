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
//! dropped (`lazyfreed_objects`). An object is one key with its value, or one
//! whole database of a flush.

use std::sync::atomic::{AtomicU64, Ordering};

use crossbeam_channel::{unbounded, Sender};
use parking_lot::Mutex;
use store::Entry;

/// Values with more elements than this are freed in the background
/// (Redis's `LAZYFREE_THRESHOLD`, counted in allocations).
pub const LAZYFREE_THRESHOLD: usize = store::evict::LAZYFREE_THRESHOLD;

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
            Garbage::Dbs(v) => v.len() as u64,
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

/// Is freeing this entry's value worth a hand-off?
pub fn worth_lazy(e: &Entry) -> bool {
    e.value().collection_len() > LAZYFREE_THRESHOLD
}

/// Puts thread `tid` (0: the calling thread) at `SCHED_IDLE`: it then runs
/// only on CPU time the workers leave idle. Returns whether it worked.
fn set_idle_policy(tid: libc::pid_t) -> bool {
    let p = libc::sched_param { sched_priority: 0 };
    // SAFETY: changes the scheduling policy of a thread of this process;
    // no memory is touched.
    unsafe { libc::sched_setscheduler(tid, libc::SCHED_IDLE, &p) == 0 }
}

/// Puts jemalloc's background purging threads at `SCHED_IDLE`, so they use
/// CPU time the workers leave idle. At normal priority such a thread got a
/// fair half of a core it shared with a worker while it returned the pages
/// of a flushed 10M-key database: the worker waited in stretches of ~4 ms,
/// several in a row (docs/BENCHMARKS.md). jemalloc starts these threads
/// when it needs them and names them itself, so the cron calls this once
/// a second. Returns how many threads it changed.
///
/// It makes no Rust heap allocation: the cron runs it beside the workers,
/// and a block it held for a moment would show in `used_memory` (the
/// counting allocator's exact figure) for whoever read it at that moment.
/// `std::fs::read_dir` allocates a handle and a name per entry, so the
/// directory is read with `opendir`/`readdir` and each name into a stack
/// buffer.
pub fn idle_allocator_threads() -> usize {
    // SAFETY: opens a directory stream on a constant NUL-terminated path;
    // null is handled.
    let dir = unsafe { libc::opendir(c"/proc/self/task".as_ptr()) };
    if dir.is_null() {
        return 0;
    }
    let mut changed = 0;
    loop {
        // SAFETY: `dir` is an open stream; the entry returned is valid
        // until the next readdir/closedir on it, and read before either.
        let ent = unsafe { libc::readdir(dir) };
        if ent.is_null() {
            break;
        }
        // SAFETY: d_name is NUL-terminated within the entry.
        let name = unsafe { std::ffi::CStr::from_ptr((*ent).d_name.as_ptr()) };
        let Some(tid) = std::str::from_utf8(name.to_bytes())
            .ok()
            .and_then(|s| s.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        if thread_name(tid, &mut [0; 32]) != Some(&b"jemalloc_bg_thd"[..]) {
            continue;
        }
        // SAFETY: reads the policy of one of this process's own threads.
        if unsafe { libc::sched_getscheduler(tid) } != libc::SCHED_IDLE && set_idle_policy(tid) {
            changed += 1;
        }
    }
    // SAFETY: `dir` is open and not used after this.
    unsafe { libc::closedir(dir) };
    changed
}

/// Thread `tid`'s name (`/proc/self/task/<tid>/comm` without the newline),
/// read into `buf` without allocating.
fn thread_name(tid: libc::pid_t, buf: &mut [u8; 32]) -> Option<&[u8]> {
    use std::io::{Read, Write};
    use std::os::unix::ffi::OsStrExt;
    let mut path = [0u8; 64];
    let len = {
        let mut w = &mut path[..];
        write!(w, "/proc/self/task/{tid}/comm").ok()?;
        64 - w.len()
    };
    // Paths this short are converted to C strings on the stack.
    let path = std::path::Path::new(std::ffi::OsStr::from_bytes(&path[..len]));
    let n = std::fs::File::open(path).ok()?.read(buf).ok()?;
    Some(buf[..n].strip_suffix(b"\n").unwrap_or(&buf[..n]))
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
                    set_idle_policy(0);
                    // SCHED_IDLE alone is not enough under EEVDF: once
                    // picked, the thread may finish its slice (3-4 ms
                    // measured) while the worker waits. Big arrays give their
                    // pages back in steps with sleeps between (see
                    // collections::release).
                    collections::release::set_paced(true);
                    // Freeing a 10M-key database is ~80 ms of work; it
                    // sleeps briefly after every 200 µs of it (store::pace).
                    let mut pacer = store::pace::Pacer::new();
                    for g in rx {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_name_reads_a_threads_comm() {
        let name = std::thread::Builder::new()
            .name("petrel-probe".into())
            .spawn(|| {
                // SAFETY: gettid has no preconditions.
                let tid = unsafe { libc::gettid() };
                thread_name(tid, &mut [0; 32]).map(<[u8]>::to_vec)
            })
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(name.as_deref(), Some(&b"petrel-probe"[..]));
        assert_eq!(thread_name(0, &mut [0; 32]), None);
    }
}
