//! Serving blocked clients (the registry and the [`BlockedOp`] contract are
//! in [`crate::kernel::blocking`]).
//!
//! A blocking command calls [`block_or_serve`]: it tries its keys in order
//! like its non-blocking form and, when all are empty, registers a
//! [`Waiter`] and the client stops reading input. Every successful write
//! command records the keys it named in `Client::ready_keys` (only while
//! some waiter exists); after the command (after EXEC for a transaction, as
//! in Redis) the writing thread calls [`serve_ready`], which visits the
//! waiters of each key in registration order (first come, first served),
//! runs each waiter's operation under the key's partition lock, and sends
//! the reply to the waiter's worker ([`WorkerMsg::Unblock`]); the worker
//! appends it and resumes the client's pipeline. The invariants of the
//! waiter state machine are stated in `kernel::blocking`.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use collections::Limits;
use resp::{Protocol, ReplyBuf};
use store::Key;

use crate::base::errors;
use crate::base::errors::ERR_WRONGTYPE;
use crate::kernel::blocking::{BlockedOp, Readiness, Served, Waiter};
use crate::kernel::coll::WrongType;
use crate::kernel::ctx::Ctx;
use crate::kernel::hub::WorkerMsg;
use crate::kernel::notify;
use crate::kernel::server::Server;

/// Result of trying a blocking operation on one key.
enum Attempt {
    /// Served: the reply was written.
    Served,
    /// Refused with this error (written to the reply when a waiter was
    /// claimed); nothing changed.
    Refused(&'static str),
    /// Nothing to pop (the key is missing or empty).
    Empty,
    /// Nothing for this waiter; the key may serve others.
    NotYet,
    /// The waiter was claimed by another party first (served through
    /// another key, timed out, unblocked): nothing was done.
    Lost,
}

/// Runs `op` on `key` (in `db`) and writes its reply when the key has data.
/// Takes the partitions it needs itself. When `claim` is a waiter, it is
/// claimed after the checks and before any change, and marked served.
#[allow(clippy::too_many_arguments)]
fn attempt(
    srv: &Server,
    limits: &Limits,
    db: usize,
    key: &[u8],
    op: &dyn BlockedOp,
    now_ms: u64,
    out: &mut ReplyBuf,
    effects: &mut Served,
    claim: Option<&Waiter>,
) -> Result<Attempt, WrongType> {
    let k = Key::new(key);
    let mut keys = vec![Key::new(key)];
    keys.extend(op.extra_keys().iter().map(|d| Key::new(d)));
    let mut g = srv.keyspace.lock_keys(&keys);
    // Type and emptiness checks first, so a failed attempt changes nothing.
    let refused = match op.ready(&mut g, db, &k, now_ms)? {
        Readiness::Empty => return Ok(Attempt::Empty),
        Readiness::NotYet => return Ok(Attempt::NotYet),
        Readiness::Ready => None,
        Readiness::Refused(e) => Some(e),
    };
    let claimed = match claim {
        Some(w) => match w.claim() {
            Some(c) => Some(c),
            // Served elsewhere, timed out or unblocked meanwhile: leave the
            // data and the waiter's state alone.
            None => return Ok(Attempt::Lost),
        },
        None => None,
    };
    if let Some(e) = refused {
        drop(g);
        if let Some(c) = claimed {
            out.error(e);
            c.complete();
        }
        return Ok(Attempt::Refused(e));
    }
    op.serve(&mut g, db, key, now_ms, limits, out, effects);
    drop(g);
    if let Some(c) = claimed {
        c.complete();
    }
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
    effects: &Served,
) {
    if flags != 0 {
        for e in &effects.events {
            srv.notify_keyspace_event(
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
    for k in &effects.touched {
        if srv.watches.any() {
            srv.watches.touch(Some(db), k);
        }
    }
    srv.stats
        .dirty
        .fetch_add(effects.touched.len() as u64, Ordering::Relaxed);
}

/// The immediate (non-blocking) try of a blocking command by its own client,
/// over `keys` in order. Returns the key index served, None if all empty,
/// or the error to answer (a key of another type, or a refusal such as
/// BLMOVE's destination of another type); nothing changed then. Keys the
/// serve wrote that may feed other waiters (BLMOVE's destination) go to
/// `feed`: the caller serves them with [`serve_ready`] once it has released
/// the partitions it holds, since serving locks other waiters' keys and
/// must take partitions in order like every other path.
#[allow(clippy::too_many_arguments)]
pub fn try_now(
    srv: &Server,
    limits: &Limits,
    notify_flags: u32,
    client_id: u64,
    db: usize,
    keys: &[&[u8]],
    op: &dyn BlockedOp,
    now_ms: u64,
    out: &mut ReplyBuf,
    feed: &mut Vec<Vec<u8>>,
) -> Result<Option<usize>, &'static str> {
    for (i, key) in keys.iter().enumerate() {
        let mut effects = Served::default();
        let mut reply = ReplyBuf::new(out.protocol());
        match attempt(
            srv,
            limits,
            db,
            key,
            op,
            now_ms,
            &mut reply,
            &mut effects,
            None,
        )
        .map_err(|WrongType| ERR_WRONGTYPE)?
        {
            Attempt::Empty | Attempt::NotYet | Attempt::Lost => continue,
            Attempt::Refused(e) => return Err(e),
            Attempt::Served => {
                out.raw(reply.as_bytes());
                for c in std::mem::take(&mut effects.propagate) {
                    crate::services::journal::record(db, c);
                }
                after_write(srv, notify_flags, db, client_id, out, &effects);
                // BLMOVE's destination may now feed other waiters.
                if srv.blocking.any() && effects.touched.len() > 1 {
                    feed.extend_from_slice(&effects.touched[1..]);
                }
                return Ok(Some(i));
            }
        }
    }
    Ok(None)
}

/// The common path of every blocking command: try `keys` now (under their
/// partitions, together with the keys `op` writes), else register a waiter
/// while still holding them, or, inside EXEC, reply what the non-blocking
/// form answers when it finds nothing.
pub fn block_or_serve(ctx: &mut Ctx, keys: &[&[u8]], timeout: &[u8], op: Box<dyn BlockedOp>) {
    let deadline = match parse_timeout(timeout, ctx.now_ms) {
        Ok(d) => d,
        Err(e) => return ctx.error(e),
    };
    let srv = ctx.srv;
    let limits = ctx.settings.limits;
    let flags = ctx.settings.notify_keyspace_events;
    let db = ctx.client.db;
    // Journaled as the non-blocking form the operation records when served.
    ctx.propagate_none();
    // The registration must happen while the keys' partitions are held (see
    // crate::kernel::blocking); take them for the whole check.
    let mut lock_keys: Vec<Key> = keys.iter().map(|k| Key::new(k)).collect();
    lock_keys.extend(op.extra_keys().iter().map(|k| Key::new(k)));
    let hold = srv.keyspace.hold_keys(&lock_keys);
    let mut feed = Vec::new();
    match try_now(
        srv,
        &limits,
        flags,
        ctx.client.id,
        db,
        keys,
        op.as_ref(),
        ctx.now_ms,
        ctx.out,
        &mut feed,
    ) {
        Err(e) => return ctx.error(e),
        Ok(Some(_)) => {
            // Other waiters are served with this command's partitions
            // released (lock order: see `try_now`).
            drop(hold);
            if !feed.is_empty() {
                serve_ready(srv, &limits, flags, feed);
            }
            return;
        }
        Ok(None) => {}
    }
    park(ctx, keys, deadline, op);
    drop(hold);
}

/// Blocks the client on `keys` until `deadline` (None = forever), for a
/// command that made its own first try (XREAD serves several keys at
/// once). Must be called while the caller holds the keys' partitions
/// (`Keyspace::hold_keys`), so no write can slip between the try and the
/// registration. Inside EXEC, or off a worker thread, the client gets what
/// the non-blocking form answers instead.
pub fn park(ctx: &mut Ctx, keys: &[&[u8]], deadline: Option<u64>, op: Box<dyn BlockedOp>) {
    if ctx.client.in_exec {
        op.empty_reply(ctx.out);
        return;
    }
    let Some(worker) = crate::kernel::hub::current_worker() else {
        op.timeout_reply(ctx.out);
        return;
    };
    let w = Arc::new(Waiter::new(
        ctx.client.id,
        worker,
        ctx.client.db,
        keys.iter().map(|k| k.to_vec()).collect(),
        op,
        ctx.client.protocol,
        deadline,
    ));
    ctx.srv.blocking.register(w.clone());
    ctx.client.blocked = Some(w);
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
    // The writer's clock, not a fresh reading: a key the write left alive
    // is alive for the waiters it wakes, however late this thread gets here
    // (Redis serves them in the same event-loop pass, well inside a ms).
    let now_ms = crate::base::clock::cached_time_ms();
    let mut scratch = ReplyBuf::new(Protocol::Resp2);
    while let Some(key) = queue.pop_front() {
        if !srv.blocking.any() {
            return;
        }
        // (database, awaited type) pairs for which this key turned out
        // empty or of another type.
        let mut dead: Vec<(usize, store::Kind)> = Vec::new();
        for w in srv.blocking.waiters_of(&key) {
            let class = (w.db, w.op.awaits());
            if dead.contains(&class) || !w.is_waiting() {
                continue;
            }
            let mut effects = Served::default();
            let mut reply = ReplyBuf::new(w.protocol);
            let r = attempt(
                srv,
                limits,
                w.db,
                &key,
                w.op.as_ref(),
                now_ms,
                &mut reply,
                &mut effects,
                Some(&w),
            );
            match r {
                Ok(Attempt::Served) => {
                    srv.blocking.unregister(&w);
                    for c in std::mem::take(&mut effects.propagate) {
                        crate::services::journal::record(w.db, c);
                    }
                    // Each served waiter is a unit of its own.
                    crate::services::journal::unit_boundary(srv);
                    after_write(srv, notify_flags, w.db, w.client_id, &mut scratch, &effects);
                    scratch.clear();
                    srv.hub.send(
                        w.worker,
                        WorkerMsg::Unblock {
                            client_id: w.client_id,
                            bytes: reply.take(),
                        },
                    );
                    for t in effects.touched.into_iter().skip(1) {
                        if !queue.contains(&t) {
                            queue.push_back(t);
                        }
                    }
                }
                // Answered with an error (the data stayed): unblocked, and
                // the key may still feed the next waiter.
                Ok(Attempt::Refused(e)) => {
                    srv.blocking.unregister(&w);
                    srv.stats.count_error(e.as_bytes());
                    srv.hub.send(
                        w.worker,
                        WorkerMsg::Unblock {
                            client_id: w.client_id,
                            bytes: reply.take(),
                        },
                    );
                }
                // Claimed by someone else, or not for this waiter: the key
                // may still feed the next.
                Ok(Attempt::Lost) | Ok(Attempt::NotYet) => {}
                // Empty or of another type in this database.
                Ok(Attempt::Empty) | Err(_) => dead.push(class),
            }
        }
    }
}

/// Ends a blocked client's wait from outside (timeout by its worker, CLIENT
/// UNBLOCK): returns the reply the client must get, or None if the waiter
/// was already served or is being served.
pub fn unblock_with(srv: &Server, w: &Arc<Waiter>, error: bool) -> Option<Vec<u8>> {
    if !w.finish() {
        return None;
    }
    srv.blocking.unregister(w);
    let mut out = ReplyBuf::new(w.protocol);
    if error {
        out.error(errors::UNBLOCKED_BY_CLIENT_UNBLOCK);
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
        .ok_or(errors::ERR_TIMEOUT_NOT_FLOAT_OUT_OF_RANGE)?
        .to_f64();
    let ms = (v * 1000.0).ceil();
    // C's (long long) cast of an out-of-range value gives LLONG_MIN on x86.
    let tval = if (-9.223_372_036_854_775e18..9.223_372_036_854_775e18).contains(&ms) {
        ms as i64
    } else {
        i64::MIN
    };
    if tval < 0 {
        return Err(errors::ERR_TIMEOUT_NEGATIVE);
    }
    if tval == 0 {
        return Ok(None);
    }
    Ok((now_ms as i64).checked_add(tval).map(|t| t as u64))
}

/// The arguments of BLMPOP and BZMPOP after the timeout: `numkeys key...
/// <dir0|dir1> [COUNT n]`, checked in Redis's order (numkeys, then the
/// direction and options, then COUNT's value). Returns the argument range
/// of the keys, whether the first direction was given, and the count.
pub fn parse_mpop(
    args: &[&[u8]],
    dirs: (&str, &str),
) -> Result<(std::ops::Range<usize>, bool, usize), &'static str> {
    use crate::base::parse::{eq_ic, parse_i64};
    let numkeys = match parse_i64(args[2]) {
        Some(n) if n > 0 => n as u64,
        _ => return Err(errors::ERR_NUMKEYS_SHOULD_GREATER_THAN_0),
    };
    if numkeys >= (args.len() - 3) as u64 {
        return Err(crate::base::errors::ERR_SYNTAX);
    }
    let where_i = 3 + numkeys as usize;
    let first = if eq_ic(args[where_i], dirs.0) {
        true
    } else if eq_ic(args[where_i], dirs.1) {
        false
    } else {
        return Err(crate::base::errors::ERR_SYNTAX);
    };
    let mut count: Option<usize> = None;
    let mut j = where_i + 1;
    while j < args.len() {
        if eq_ic(args[j], "count") && j + 1 < args.len() && count.is_none() {
            match parse_i64(args[j + 1]) {
                Some(c) if c > 0 => count = Some(c as usize),
                _ => return Err(errors::ERR_COUNT_SHOULD_GREATER_THAN_0),
            }
            j += 2;
        } else {
            return Err(crate::base::errors::ERR_SYNTAX);
        }
    }
    Ok((3..where_i, first, count.unwrap_or(1)))
}

/// Keys of BLMPOP/BZMPOP: `numkeys` at index 2, keys after it.
pub fn mpop_keys(args: &[&[u8]]) -> Option<Vec<usize>> {
    let n = crate::base::parse::parse_i64(args.get(2)?)?;
    if n <= 0 || 3 + n as usize > args.len() {
        return None;
    }
    Some((3..3 + n as usize).collect())
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
