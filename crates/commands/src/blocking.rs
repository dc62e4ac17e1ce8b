//! Blocked clients: the waiter registry and how waiters are served.
//!
//! A client running BLPOP (or another blocking command) on keys that are all
//! empty registers one [`Waiter`] under each key and stops processing input
//! (`Outcome::Blocked`); its worker keeps its deadline. The waiter is served
//! by whichever thread makes one of its keys non-empty:
//!
//! * every successful write command records the keys it named in
//!   `Client::ready_keys` (only while some waiter exists); after the command
//!   (after EXEC for a transaction, as in Redis) the writing thread calls
//!   [`serve_ready`], which visits the waiters of each key in registration
//!   order (first come, first served), runs each waiter's pop under the
//!   key's partition lock, and sends the reply to the waiter's worker
//!   ([`WorkerMsg::Unblock`]); the worker appends it and resumes the
//!   client's pipeline.
//!
//! Invariants:
//! * A waiter's `state` moves WAITING -> SERVING -> (DONE | WAITING) only
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

use collections::{Limits, ListValue, ZsetValue};
use parking_lot::Mutex;
use resp::{Protocol, ReplyBuf};
use store::Key;

use crate::coll::{self, WrongType};
use crate::hub::WorkerMsg;
use crate::notify;
use crate::server::Server;

const WAITING: u8 = 0;
const SERVING: u8 = 1;
const DONE: u8 = 2;

/// What a blocked command does once one of its keys has data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlockOp {
    /// BLPOP / BRPOP: reply `[key, element]`.
    ListPop { left: bool },
    /// BLMPOP: reply `[key, [elements]]`.
    ListMPop { left: bool, count: usize },
    /// BLMOVE / BRPOPLPUSH: reply the element.
    ListMove {
        dest: Vec<u8>,
        from_left: bool,
        to_left: bool,
    },
    /// BZPOPMIN / BZPOPMAX: reply `[key, member, score]`.
    ZPop { max: bool },
    /// BZMPOP: reply `[key, [[member, score], ...]]`.
    ZMPop { max: bool, count: usize },
}

impl BlockOp {
    /// The reply of a waiter that timed out (also CLIENT UNBLOCK TIMEOUT):
    /// a null array for every blocking command, BLMOVE included (Redis 7.0).
    pub fn timeout_reply(&self, out: &mut ReplyBuf) {
        out.null_array();
    }

    /// The reply when the command runs inside EXEC and finds nothing: what
    /// its non-blocking form answers (LMOVE: a null bulk).
    pub fn empty_reply(&self, out: &mut ReplyBuf) {
        match self {
            BlockOp::ListMove { .. } => out.null_bulk(),
            _ => out.null_array(),
        }
    }

    fn is_list(&self) -> bool {
        matches!(
            self,
            BlockOp::ListPop { .. } | BlockOp::ListMPop { .. } | BlockOp::ListMove { .. }
        )
    }
}

/// One blocked client.
#[derive(Debug)]
pub struct Waiter {
    pub client_id: u64,
    /// Worker thread owning the client's connection.
    pub worker: usize,
    pub db: usize,
    pub keys: Vec<Vec<u8>>,
    pub op: BlockOp,
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
        op: BlockOp,
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

    fn waiters_of(&self, key: &[u8]) -> Vec<Arc<Waiter>> {
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

/// A keyspace event produced while serving, fired after the locks are gone.
struct Event {
    class: u32,
    name: &'static str,
    key: Vec<u8>,
}

fn end(left: bool) -> collections::value::list::End {
    if left {
        collections::value::list::End::Head
    } else {
        collections::value::list::End::Tail
    }
}

/// Result of trying a blocking operation on one key.
pub enum Attempt {
    /// Served: the reply was written.
    Served,
    /// Nothing to pop (the key is missing or empty).
    Empty,
    /// The waiter was claimed by another party first (served through
    /// another key, timed out, unblocked): nothing was done.
    Lost,
}

/// Puts a claimed waiter back to WAITING unless disarmed: a claim whose
/// operation then fails must not leave the waiter stuck in SERVING. Only
/// the claimer may do this; a party that lost the claim never touches the
/// state (it would undo the winner's claim and let a timeout or a second
/// server take the waiter too, losing the popped element).
struct ClaimGuard<'a>(Option<&'a Waiter>);

impl Drop for ClaimGuard<'_> {
    fn drop(&mut self) {
        if let Some(w) = self.0 {
            let _ = w
                .state
                .compare_exchange(SERVING, WAITING, Ordering::AcqRel, Ordering::Acquire);
        }
    }
}

/// Runs `op` on `key` (in `db`) and writes its reply when the key has data.
/// Takes the partitions it needs itself. `events` receives the keyspace
/// events to fire; `touched` the keys written (WATCH, further wake-ups).
#[allow(clippy::too_many_arguments)]
fn attempt(
    srv: &Server,
    limits: &Limits,
    db: usize,
    key: &[u8],
    op: &BlockOp,
    now_ms: u64,
    out: &mut ReplyBuf,
    events: &mut Vec<Event>,
    touched: &mut Vec<Vec<u8>>,
    claim: Option<&Waiter>,
) -> Result<Attempt, WrongType> {
    let k = Key::new(key);
    let dest = match op {
        BlockOp::ListMove { dest, .. } => Some(dest.as_slice()),
        _ => None,
    };
    let dk = dest.map(Key::new);
    let mut keys = vec![Key::new(key)];
    if let Some(d) = dest {
        keys.push(Key::new(d));
    }
    let mut g = srv.keyspace.lock_keys(&keys);
    // Type and emptiness checks first, so a failed attempt changes nothing.
    let has_data = {
        let p = g.part(&k);
        if op.is_list() {
            coll::check::<ListValue>(p, db, &k, now_ms)?
        } else {
            coll::check::<ZsetValue>(p, db, &k, now_ms)?
        }
    };
    if !has_data {
        return Ok(Attempt::Empty);
    }
    if let Some(dk) = &dk {
        coll::check::<ListValue>(g.part(dk), db, dk, now_ms)?;
    }
    let mut claimed = ClaimGuard(None);
    if let Some(w) = claim {
        if w.state
            .compare_exchange(WAITING, SERVING, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            // Served elsewhere, timed out or unblocked meanwhile: leave the
            // data and the waiter's state alone.
            return Ok(Attempt::Lost);
        }
        claimed.0 = Some(w);
    }
    let ev = |class, name| Event {
        class,
        name,
        key: key.to_vec(),
    };
    match op {
        BlockOp::ListPop { left } | BlockOp::ListMPop { left, .. } => {
            let want = match op {
                BlockOp::ListMPop { count, .. } => *count,
                _ => 1,
            };
            let popped = crate::lists::pop_elems(g.part(&k), db, &k, now_ms, end(*left), want)?
                .expect("checked");
            drop(g);
            events.push(ev(notify::LIST, if *left { "lpop" } else { "rpop" }));
            if popped.deleted {
                events.push(ev(notify::GENERIC, "del"));
            }
            touched.push(key.to_vec());
            out.array_len(2);
            out.bulk(key);
            if matches!(op, BlockOp::ListMPop { .. }) {
                out.array_len(popped.elems.len());
                for i in &popped.elems {
                    out.bulk(i);
                }
            } else {
                out.bulk(&popped.elems[0]);
            }
        }
        BlockOp::ListMove {
            dest,
            from_left,
            to_left,
        } => {
            let dk = dk.as_ref().expect("dest key");
            let moved = crate::lists::move_elem(
                &mut g,
                db,
                &k,
                dk,
                now_ms,
                end(*from_left),
                end(*to_left),
                limits,
            )?
            .expect("checked");
            drop(g);
            events.push(ev(notify::LIST, if *from_left { "lpop" } else { "rpop" }));
            if moved.src_deleted {
                events.push(ev(notify::GENERIC, "del"));
            }
            events.push(Event {
                class: notify::LIST,
                name: if *to_left { "lpush" } else { "rpush" },
                key: dest.clone(),
            });
            touched.push(key.to_vec());
            touched.push(dest.clone());
            out.bulk(&moved.elem);
        }
        BlockOp::ZPop { max } | BlockOp::ZMPop { max, .. } => {
            let want = match op {
                BlockOp::ZMPop { count, .. } => *count,
                _ => 1,
            };
            let p = g.part(&k);
            let z = coll::write::<ZsetValue>(p, db, &k, now_ms)?.expect("checked");
            let items = crate::zsets::write::pop_value(z, *max, want);
            let emptied = coll::remove_if_empty::<ZsetValue>(p, db, &k, now_ms);
            drop(g);
            events.push(ev(notify::ZSET, if *max { "zpopmax" } else { "zpopmin" }));
            if emptied {
                events.push(ev(notify::GENERIC, "del"));
            }
            touched.push(key.to_vec());
            if matches!(op, BlockOp::ZMPop { .. }) {
                out.array_len(2);
                out.bulk(key);
                out.array_len(items.len());
                for (m, s) in &items {
                    out.array_len(2);
                    out.bulk(m);
                    out.double(*s);
                }
            } else {
                let (m, s) = &items[0];
                out.array_len(3);
                out.bulk(key);
                out.bulk(m);
                out.double(*s);
            }
        }
    }
    // Served: the caller moves the waiter to DONE.
    claimed.0 = None;
    Ok(Attempt::Served)
}

/// Fires events and bookkeeping of a served operation: keyspace
/// notifications, WATCH invalidation and the dirty counter.
fn after_write(
    srv: &Server,
    flags: u32,
    db: usize,
    me: u64,
    my_out: &mut ReplyBuf,
    events: Vec<Event>,
    touched: &[Vec<u8>],
) {
    for e in &events {
        if flags != 0 {
            notify::notify(
                srv,
                flags,
                notify::Event {
                    class: e.class,
                    name: e.name,
                    key: &e.key,
                    db,
                },
                me,
                my_out,
            );
        }
    }
    for k in touched {
        if srv.watches.any() {
            srv.watches.touch(Some(db), k);
        }
    }
    srv.stats
        .dirty
        .fetch_add(touched.len() as u64, Ordering::Relaxed);
}

/// The immediate (non-blocking) try of a blocking command by its own client,
/// over `keys` in order. Returns the key index served, None if all empty.
#[allow(clippy::too_many_arguments)]
pub fn try_now(
    srv: &Server,
    limits: &Limits,
    notify_flags: u32,
    client_id: u64,
    db: usize,
    keys: &[&[u8]],
    op: &BlockOp,
    now_ms: u64,
    out: &mut ReplyBuf,
) -> Result<Option<usize>, WrongType> {
    for (i, key) in keys.iter().enumerate() {
        let mut events = Vec::new();
        let mut touched = Vec::new();
        let mut reply = ReplyBuf::new(out.protocol());
        match attempt(
            srv,
            limits,
            db,
            key,
            op,
            now_ms,
            &mut reply,
            &mut events,
            &mut touched,
            None,
        )? {
            Attempt::Empty | Attempt::Lost => continue,
            Attempt::Served => {
                out.raw(reply.as_bytes());
                after_write(srv, notify_flags, db, client_id, out, events, &touched);
                // BLMOVE's destination may now feed other waiters.
                if srv.blocking.any() && touched.len() > 1 {
                    serve_ready(srv, limits, notify_flags, touched[1..].to_vec());
                }
                return Ok(Some(i));
            }
        }
    }
    Ok(None)
}

/// Serves the waiters of keys that may have become non-empty, first come
/// first served, following BLMOVE chains.
pub fn serve_ready(srv: &Server, limits: &Limits, notify_flags: u32, keys: Vec<Vec<u8>>) {
    let mut queue: VecDeque<Vec<u8>> = VecDeque::new();
    for k in keys {
        if !queue.contains(&k) {
            queue.push_back(k);
        }
    }
    let now_ms = crate::util::unix_time_ms();
    let mut scratch = ReplyBuf::new(Protocol::Resp2);
    while let Some(key) = queue.pop_front() {
        if !srv.blocking.any() {
            return;
        }
        // Databases where this key turned out empty (or of another type).
        let mut dead_dbs: Vec<usize> = Vec::new();
        for w in srv.blocking.waiters_of(&key) {
            if dead_dbs.contains(&w.db) || w.state.load(Ordering::Acquire) != WAITING {
                continue;
            }
            let mut events = Vec::new();
            let mut touched = Vec::new();
            let mut reply = ReplyBuf::new(w.protocol);
            let r = attempt(
                srv,
                limits,
                w.db,
                &key,
                &w.op,
                now_ms,
                &mut reply,
                &mut events,
                &mut touched,
                Some(&w),
            );
            match r {
                Ok(Attempt::Served) => {
                    w.state.store(DONE, Ordering::Release);
                    srv.blocking.unregister(&w);
                    after_write(
                        srv,
                        notify_flags,
                        w.db,
                        w.client_id,
                        &mut scratch,
                        events,
                        &touched,
                    );
                    scratch.clear();
                    srv.hub.send(
                        w.worker,
                        WorkerMsg::Unblock {
                            client_id: w.client_id,
                            bytes: reply.take(),
                        },
                    );
                    for t in touched.into_iter().skip(1) {
                        if !queue.contains(&t) {
                            queue.push_back(t);
                        }
                    }
                }
                // Claimed by someone else: the key may still feed the next.
                Ok(Attempt::Lost) => {}
                // Empty or of another type in this database (a claim made
                // before a failure was undone by the attempt itself).
                Ok(Attempt::Empty) | Err(_) => dead_dbs.push(w.db),
            }
        }
    }
}

/// Ends a blocked client's wait from outside (timeout by its worker, CLIENT
/// UNBLOCK): writes the reply the client must get. Returns false if the
/// waiter was already served or is being served.
pub fn unblock_with(srv: &Server, w: &Arc<Waiter>, error: bool) -> Option<Vec<u8>> {
    if !w.finish() {
        return None;
    }
    srv.blocking.unregister(w);
    let mut out = ReplyBuf::new(w.protocol);
    if error {
        out.error("UNBLOCKED client unblocked via CLIENT UNBLOCK");
        srv.stats.count_error(b"UNBLOCKED");
    } else {
        w.op.timeout_reply(&mut out);
    }
    Some(out.take())
}

/// Parses a blocking timeout in seconds like Redis 7.0: a long double, times
/// 1000, rounded up; returns the absolute deadline (None = forever).
pub fn parse_timeout(arg: &[u8], now_ms: u64) -> Result<Option<u64>, &'static str> {
    let v = resp::LongDouble::parse(arg)
        .ok_or("ERR timeout is not a float or out of range")?
        .to_f64();
    let ms = (v * 1000.0).ceil();
    // C's (long long) cast of an out-of-range value gives LLONG_MIN on x86.
    let tval = if (-9.223_372_036_854_775e18..9.223_372_036_854_775e18).contains(&ms) {
        ms as i64
    } else {
        i64::MIN
    };
    if tval < 0 {
        return Err("ERR timeout is negative");
    }
    if tval == 0 {
        return Ok(None);
    }
    Ok((now_ms as i64).checked_add(tval).map(|t| t as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_parse_like_redis() {
        let now = 1_000_000;
        assert_eq!(parse_timeout(b"0", now), Ok(None));
        assert_eq!(parse_timeout(b"-0.0001", now), Ok(None));
        assert_eq!(parse_timeout(b"0.001", now), Ok(Some(now + 1)));
        assert_eq!(parse_timeout(b"0.0001", now), Ok(Some(now + 1)));
        assert_eq!(parse_timeout(b"1.5", now), Ok(Some(now + 1500)));
        assert_eq!(parse_timeout(b"0x10", now), Ok(Some(now + 16000)));
        assert_eq!(parse_timeout(b"-1", now), Err("ERR timeout is negative"));
        assert_eq!(parse_timeout(b"inf", now), Err("ERR timeout is negative"));
        assert_eq!(parse_timeout(b"1e400", now), Err("ERR timeout is negative"));
        for bad in [&b"abc"[..], b"", b" 1", b"nan", b"1e5000"] {
            assert_eq!(
                parse_timeout(bad, now),
                Err("ERR timeout is not a float or out of range")
            );
        }
    }
}
