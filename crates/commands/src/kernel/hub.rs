//! Cross-thread delivery to connections owned by other worker threads.
//!
//! Each worker registers a [`WorkerHandle`]: a channel of [`WorkerMsg`] and a
//! wake function that interrupts its event loop. Anything that must reach a
//! client on another thread (MONITOR feeds, CLIENT KILL, later pub/sub messages
//! and blocked-client wakeups) goes through here, so connection buffers are
//! only ever touched by their owning thread.

use std::sync::Arc;

use crossbeam_channel::Sender;
use parking_lot::RwLock;

/// A message for a worker thread.
#[derive(Debug)]
pub enum WorkerMsg {
    /// Append these bytes to the output of client `id` (if it still exists).
    Deliver { client_id: u64, bytes: Arc<[u8]> },
    /// A Pub/Sub message for these clients of the worker.
    Publish {
        msg: Arc<crate::kernel::message::Published>,
        client_ids: Vec<u64>,
    },
    /// A blocked client's wait is over: append `bytes` (its reply) and let
    /// it run its next commands.
    Unblock { client_id: u64, bytes: Vec<u8> },
    /// Re-check the client: it may have been killed or unblocked.
    Poke { client_id: u64 },
    /// The server is shutting down.
    Shutdown,
}

pub type WakeFn = Arc<dyn Fn() + Send + Sync>;

pub struct WorkerHandle {
    pub tx: Sender<WorkerMsg>,
    pub wake: WakeFn,
}

thread_local! {
    static CURRENT_WORKER: std::cell::Cell<usize> = const { std::cell::Cell::new(usize::MAX) };
}

/// Marks the calling thread as worker `index` (called once by each worker thread).
pub fn set_current_worker(index: usize) {
    CURRENT_WORKER.with(|c| c.set(index));
}

/// The worker index of the calling thread, if it is a worker.
pub fn current_worker() -> Option<usize> {
    let i = CURRENT_WORKER.with(|c| c.get());
    (i != usize::MAX).then_some(i)
}

#[derive(Default)]
pub struct Hub {
    workers: RwLock<Vec<WorkerHandle>>,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Hub({} workers)", self.workers.read().len())
    }
}

impl Hub {
    pub fn register(&self, h: WorkerHandle) -> usize {
        let mut w = self.workers.write();
        w.push(h);
        w.len() - 1
    }

    /// Sends a message to worker `worker` and wakes it. Returns false if the
    /// worker is gone. A worker sending to itself skips the wake: it drains its
    /// inbox at the end of every loop iteration anyway.
    pub fn send(&self, worker: usize, msg: WorkerMsg) -> bool {
        let w = self.workers.read();
        match w.get(worker) {
            Some(h) => {
                let ok = h.tx.send(msg).is_ok();
                if current_worker() != Some(worker) {
                    (h.wake)();
                }
                ok
            }
            None => false,
        }
    }

    pub fn broadcast_shutdown(&self) {
        for h in self.workers.read().iter() {
            let _ = h.tx.send(WorkerMsg::Shutdown);
            (h.wake)();
        }
    }

    pub fn worker_count(&self) -> usize {
        self.workers.read().len()
    }
}
