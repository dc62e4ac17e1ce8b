//! Blocked clients: the waiter registry, and the [`BlockedOp`] trait through
//! which the blocking service runs a family's blocking command without
//! knowing its data type.
//!
//! A client running BLPOP (or another blocking command) on keys that are all
//! empty registers one [`Waiter`] under each key and stops processing input;
//! its worker keeps its deadline. `crate::services::blocking` serves waiters
//! when a write may have given one of their keys data.
//!
//! Invariants:
//! * A waiter's state moves WAITING -> SERVING -> (DONE | WAITING) only
//!   under the partition lock of the key being served, and WAITING -> DONE
//!   for timeouts, CLIENT UNBLOCK and disconnects. Exactly one party wins the
//!   transition out of WAITING, so a waiter gets exactly one reply and an
//!   element is never popped for a waiter that timed out. Only the party
//!   that moved a waiter to SERVING may move it back (when its pop fails);
//!   a party that lost the race leaves the state alone.
//! * Registration happens while the blocking command still holds its keys'
//!   partitions, and serving reads the registry after the writer released
//!   them; so a push racing with a registration either is seen by the
//!   blocking command's own check or sees the waiter (no lost wake-up).
//! * Lock order: partition locks, then the registry mutex; the registry is
//!   never held while taking a partition lock.
//! * `blocked_clients` (INFO) is counted by the waiter's own worker: +1 when
//!   it blocks, -1 when it is unblocked, times out or disconnects.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;

use collections::Limits;
use parking_lot::Mutex;
use resp::{Protocol, ReplyBuf};
use store::keyspace::MultiGuard;
use store::Key;

use crate::kernel::coll::WrongType;

const WAITING: u8 = 0;
const SERVING: u8 = 1;
const DONE: u8 = 2;

/// A keyspace event produced while serving; the service fires it after the
/// partition locks are released.
#[derive(Debug)]
pub struct ServedEvent {
    /// One of the `kernel::notify` class bits.
    pub class: u32,
    pub name: &'static str,
    pub key: Vec<u8>,
}

/// What serving a waiter changed: the events to fire and the keys written
/// (WATCH invalidation, the dirty counter, and further wake-ups: a key
/// after the first — BLMOVE's destination — may feed other waiters).
#[derive(Debug, Default)]
pub struct Served {
    pub events: Vec<ServedEvent>,
    pub touched: Vec<Vec<u8>>,
    /// The operation's non-blocking form for the write journal (`LPOP key`,
    /// `LMOVE src dst left right`, `ZPOPMIN key 2`...), as Redis 7.0
    /// propagates a served blocking command; `serve` always fills it.
    pub propagate: Vec<Vec<Vec<u8>>>,
}

impl Served {
    pub fn event(&mut self, class: u32, name: &'static str, key: &[u8]) {
        self.events.push(ServedEvent {
            class,
            name,
            key: key.to_vec(),
        });
    }
}

/// What [`BlockedOp::ready`] found under the locks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readiness {
    /// The key is missing or empty: nothing to do (a waiter keeps waiting),
    /// and no other waiter for the same type in this database can be
    /// served from it either.
    Empty,
    /// Nothing for this waiter (it keeps waiting), but the key may serve
    /// other waiters: stream readers each wait for entries after their own
    /// ID.
    NotYet,
    /// The key holds data the operation can take.
    Ready,
    /// The key has data but the operation cannot be done: the client is
    /// answered with this error and the data stays where it is (BLMOVE whose
    /// destination holds another type; a waiter is then unblocked, as in
    /// Redis; XREADGROUP whose group or key is gone).
    Refused(&'static str),
}

/// What a blocked command does once one of its keys may have data. Each
/// family implements it for its own blocking commands; the blocking service
/// locks the keys, calls [`BlockedOp::ready`], claims the waiter, then calls
/// [`BlockedOp::serve`] under the same locks.
pub trait BlockedOp: Send + Sync + std::fmt::Debug {
    /// The type the operation waits for. When a waiter finds its key
    /// [`Readiness::Empty`] or of another type, the service skips the
    /// other waiters of that type on the key in that database, and only
    /// those (a BLPOP waiter on a key holding a stream says nothing about
    /// XREAD waiters).
    fn awaits(&self) -> store::Kind;

    /// Keys written besides the served one (BLMOVE's destination); the
    /// service locks them together with the served key.
    fn extra_keys(&self) -> &[Vec<u8>] {
        &[]
    }

    /// Read-only check under the locks (see [`Readiness`]). `Err(WrongType)`
    /// when `key` itself holds another type: the command's own first try
    /// answers WRONGTYPE, while a waiter keeps waiting (Redis 7.0 serves
    /// only keys of the awaited type).
    fn ready(
        &self,
        g: &mut MultiGuard<'_>,
        db: usize,
        key: &Key<'_>,
        now_ms: u64,
    ) -> Result<Readiness, WrongType>;

    /// Performs the operation after a successful [`BlockedOp::ready`] under
    /// the same locks, writes the waiter's reply to `out` and records its
    /// effects. Must not fail where `ready` succeeded.
    #[allow(clippy::too_many_arguments)]
    fn serve(
        &self,
        g: &mut MultiGuard<'_>,
        db: usize,
        key: &[u8],
        now_ms: u64,
        limits: &Limits,
        out: &mut ReplyBuf,
        effects: &mut Served,
    );

    /// The reply of a waiter that timed out (also CLIENT UNBLOCK TIMEOUT).
    fn timeout_reply(&self, out: &mut ReplyBuf);

    /// The reply when the command runs inside EXEC and finds nothing: what
    /// its non-blocking form answers.
    fn empty_reply(&self, out: &mut ReplyBuf);
}

/// One blocked client.
#[derive(Debug)]
pub struct Waiter {
    pub client_id: u64,
    /// Worker thread owning the client's connection.
    pub worker: usize,
    pub db: usize,
    pub keys: Vec<Vec<u8>>,
    pub op: Box<dyn BlockedOp>,
    pub protocol: Protocol,
    /// Unix ms after which the client times out; None = forever.
    pub deadline_ms: Option<u64>,
    state: AtomicU8,
}

impl Waiter {
    pub fn new(
        client_id: u64,
        worker: usize,
        db: usize,
        keys: Vec<Vec<u8>>,
        op: Box<dyn BlockedOp>,
        protocol: Protocol,
        deadline_ms: Option<u64>,
    ) -> Waiter {
        Waiter {
            client_id,
            worker,
            db,
            keys,
            op,
            protocol,
            deadline_ms,
            state: AtomicU8::new(WAITING),
        }
    }

    /// Claims the waiter for a final outcome other than being served
    /// (timeout, CLIENT UNBLOCK, disconnect). False if it was already served
    /// or is being served right now.
    pub fn finish(&self) -> bool {
        self.state
            .compare_exchange(WAITING, DONE, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    pub fn is_done(&self) -> bool {
        self.state.load(Ordering::Acquire) == DONE
    }

    pub fn is_waiting(&self) -> bool {
        self.state.load(Ordering::Acquire) == WAITING
    }

    /// Claims the waiter for serving (WAITING -> SERVING). The returned
    /// guard puts it back to WAITING when dropped unless
    /// [`Claim::complete`] marked it served.
    pub fn claim(&self) -> Option<Claim<'_>> {
        self.state
            .compare_exchange(WAITING, SERVING, Ordering::AcqRel, Ordering::Acquire)
            .ok()
            .map(|_| Claim(Some(self)))
    }
}

/// A claim on a waiter being served. Dropping it unfinished puts the waiter
/// back to WAITING: a claim whose operation then fails must not leave the
/// waiter stuck in SERVING. Only the claimer holds one, so a party that
/// lost the claim never touches the state (it would undo the winner's claim
/// and let a timeout or a second server take the waiter too).
pub struct Claim<'a>(Option<&'a Waiter>);

impl Claim<'_> {
    /// The waiter was served (or answered): SERVING -> DONE.
    pub fn complete(mut self) {
        if let Some(w) = self.0.take() {
            w.state.store(DONE, Ordering::Release);
        }
    }
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        if let Some(w) = self.0 {
            let _ = w
                .state
                .compare_exchange(SERVING, WAITING, Ordering::AcqRel, Ordering::Acquire);
        }
    }
}

/// The registry of waiters, by key name (all databases together: a write to
/// `k` in any database wakes the check of `k`'s waiters, which filter by db).
#[derive(Default)]
pub struct Blocking {
    by_key: Mutex<HashMap<Vec<u8>, VecDeque<Arc<Waiter>>>>,
    by_client: Mutex<HashMap<u64, Arc<Waiter>>>,
    count: AtomicUsize,
}

impl std::fmt::Debug for Blocking {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Blocking({} waiters)",
            self.count.load(Ordering::Relaxed)
        )
    }
}

impl Blocking {
    /// Is any client blocked? (One atomic load on every write command.)
    #[inline]
    pub fn any(&self) -> bool {
        self.count.load(Ordering::Acquire) > 0
    }

    /// Registers a waiter under each of its keys. Call while holding the
    /// partitions of those keys.
    pub fn register(&self, w: Arc<Waiter>) {
        {
            let mut m = self.by_key.lock();
            for k in &w.keys {
                let q = m.entry(k.clone()).or_default();
                // BLPOP k k: one registration per key.
                if !q.iter().any(|x| Arc::ptr_eq(x, &w)) {
                    q.push_back(w.clone());
                }
            }
        }
        self.by_client.lock().insert(w.client_id, w);
        self.count.fetch_add(1, Ordering::AcqRel);
    }

    /// Removes a waiter from the registry (after it reached DONE).
    pub fn unregister(&self, w: &Arc<Waiter>) {
        {
            let mut m = self.by_key.lock();
            for k in &w.keys {
                if let Some(q) = m.get_mut(k) {
                    q.retain(|x| !Arc::ptr_eq(x, w));
                    if q.is_empty() {
                        m.remove(k);
                    }
                }
            }
        }
        let mut c = self.by_client.lock();
        if c.get(&w.client_id).is_some_and(|x| Arc::ptr_eq(x, w)) {
            c.remove(&w.client_id);
            self.count.fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// The waiter of a client, if it is blocked (CLIENT UNBLOCK).
    pub fn of_client(&self, id: u64) -> Option<Arc<Waiter>> {
        self.by_client.lock().get(&id).cloned()
    }

    /// The waiters of `key` (every database), in registration order.
    pub fn waiters_of(&self, key: &[u8]) -> Vec<Arc<Waiter>> {
        self.by_key
            .lock()
            .get(key)
            .map(|q| q.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Keys with waiters in database `db` (SWAPDB wakes them all).
    pub fn keys_in_db(&self, db: usize) -> Vec<Vec<u8>> {
        self.by_key
            .lock()
            .iter()
            .filter(|(_, q)| q.iter().any(|w| w.db == db))
            .map(|(k, _)| k.clone())
            .collect()
    }
}
