//! Hash commands: HSET, HGET and friends, counters, HRANDFIELD, HSCAN.
//!
//! Values are [`HashValue`]s (`listpack` while small, `hashtable` past
//! `hash-max-listpack-entries` / `hash-max-listpack-value`; the conversion
//! points are in `collections::value::hash`). Replies, error texts and
//! keyspace events follow Redis 7.0.
//!
//! Invariants: a write looks the key up once (`coll::write`) and inserts a
//! new key only when it ends up non-empty; a write that removes the last
//! field deletes the key before the partition lock is released.

use collections::value::hash::{self as hv, lp_bytes};
use collections::{HashValue, Limits, LpValue};
use resp::LongDouble;
use store::keyspace::Partition;
use store::{CompactValue, Key};

use crate::base::errors;
use crate::base::errors::{ERR_SYNTAX, ERR_WRONGTYPE};
use crate::base::parse::eq_ic;
use crate::kernel::coll::{self, WrongType};
use crate::kernel::ctx::Ctx;
use crate::kernel::notify;
use crate::kernel::spec::{flag, CommandSpec, Docs, KeyPos};
use crate::services::scan::{self, ScanArgs};

const R: u32 = flag::READONLY;
const RF: u32 = flag::READONLY | flag::FAST;
const WF: u32 = flag::WRITE | flag::DENYOOM | flag::FAST;

const READ_FAST: &[&str] = &["read", "hash", "fast"];
const READ_SLOW: &[&str] = &["read", "hash", "slow"];
const WRITE_FAST: &[&str] = &["write", "hash", "fast"];

macro_rules! cmd {
    ($name:expr, $arity:expr, $flags:expr, $acl:expr, $docs:expr, $h:expr) => {
        CommandSpec {
            acl: $acl,
            keys: KeyPos::ONE,
            docs: $docs,
            ..CommandSpec::new($name, $arity, $flags, $h)
        }
    };
}

pub const COMMANDS: &[CommandSpec] = &[
    cmd!("hdel", -3, flag::WRITE | flag::FAST, WRITE_FAST, Docs::new("O(N) where N is the number of fields to be removed.", "Delete one or more hash fields"), hdel),
    cmd!("hexists", 3, RF, READ_FAST, Docs::new("O(1)", "Determine if a hash field exists"), hexists),
    cmd!("hget", 3, RF, READ_FAST, Docs::new("O(1)", "Get the value of a hash field"), hget),
    cmd!("hgetall", 2, R, READ_SLOW, Docs::new("O(N) where N is the size of the hash.", "Get all the fields and values in a hash"), hgetall),
    cmd!("hincrby", 4, WF, WRITE_FAST, Docs::new("O(1)", "Increment the integer value of a hash field by the given number"), hincrby),
    cmd!("hincrbyfloat", 4, WF, WRITE_FAST, Docs::new("O(1)", "Increment the float value of a hash field by the given amount"), hincrbyfloat),
    cmd!("hkeys", 2, R, READ_SLOW, Docs::new("O(N) where N is the size of the hash.", "Get all the fields in a hash"), hkeys),
    cmd!("hlen", 2, RF, READ_FAST, Docs::new("O(1)", "Get the number of fields in a hash"), hlen),
    cmd!("hmget", -3, RF, READ_FAST, Docs::new("O(N) where N is the number of fields being requested.", "Get the values of all the given hash fields"), hmget),
    cmd!("hmset", -4, WF, WRITE_FAST, Docs::new("O(N) where N is the number of fields being set.", "Set multiple hash fields to multiple values"), hmset),
    cmd!("hrandfield", -2, R, READ_SLOW, Docs::new("O(N) where N is the number of fields returned", "Get one or multiple random fields from a hash"), hrandfield),
    cmd!("hscan", -3, R, READ_SLOW, Docs::new("O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection..", "Incrementally iterate hash fields and associated values"), hscan),
    cmd!("hset", -4, WF, WRITE_FAST, Docs::new("O(1) for each field/value pair added, so O(N) to add N field/value pairs when the command is called with multiple field/value pairs.", "Set the string value of a hash field"), hset),
    cmd!("hsetnx", 4, WF, WRITE_FAST, Docs::new("O(1)", "Set the value of a hash field, only if the field does not exist"), hsetnx),
    cmd!("hstrlen", 3, RF, READ_FAST, Docs::new("O(1)", "Get the length of the value of a hash field"), hstrlen),
    cmd!("hvals", 2, R, READ_SLOW, Docs::new("O(N) where N is the size of the hash.", "Get all the values in a hash"), hvals),
];

// ------------------------------------------------------------------ helpers

#[inline]
fn reply_lp(ctx: &mut Ctx, v: LpValue<'_>) {
    match v {
        LpValue::Str(s) => ctx.out.bulk(s),
        LpValue::Int(i) => ctx.out.bulk_from_int(i),
    }
}

/// Runs `f` on the hash under `key` (one keyspace lookup). A missing key
/// gets a fresh hash, inserted only if `f` leaves it non-empty.
fn modify<T>(
    p: &mut Partition,
    db: usize,
    key: &Key,
    now: u64,
    f: impl FnOnce(&mut HashValue) -> T,
) -> Result<T, WrongType> {
    if let Some(mut h) = coll::write::<HashValue>(p, db, key, now)? {
        return Ok(f(&mut h));
    }
    let mut h = HashValue::new();
    let r = f(&mut h);
    if !h.is_empty() {
        p.insert(db, key, CompactValue::from_hash(h), None, now);
    }
    Ok(r)
}

/// Calls `f` with the hash under `args[1]` (a read lookup), `None` when the
/// key is missing; replies WRONGTYPE itself.
fn with_read(ctx: &mut Ctx, key: &[u8], f: impl FnOnce(&mut Ctx, Option<&HashValue>)) {
    let k = Key::new(key);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    match coll::read::<HashValue>(&mut p, db, &k, now) {
        Err(WrongType) => ctx.error(ERR_WRONGTYPE),
        Ok(h) => f(ctx, h.as_deref()),
    }
}

/// HSET/HMSET body: the pre-write length check, then the pairs; returns
/// the number of new fields.
fn set_pairs(h: &mut HashValue, lim: &Limits, pairs: &[&[u8]]) -> usize {
    h.convert_for_args(lim, pairs.iter().copied());
    pairs
        .chunks_exact(2)
        .filter(|fv| h.insert(lim, fv[0], fv[1]))
        .count()
}

// ----------------------------------------------------------------- writes

fn hset_generic(ctx: &mut Ctx, args: &[&[u8]], hmset: bool) {
    if !args.len().is_multiple_of(2) {
        return ctx.wrong_arity();
    }
    let k = Key::new(args[1]);
    let (db, now, srv, lim) = (ctx.client.db, ctx.now_ms, ctx.srv, ctx.settings.limits);
    let mut p = srv.keyspace.lock(&k);
    let added = match modify(&mut p, db, &k, now, |h| set_pairs(h, &lim, &args[2..])) {
        Ok(n) => n,
        Err(WrongType) => return ctx.error(ERR_WRONGTYPE),
    };
    drop(p);
    ctx.notify(notify::HASH, "hset", args[1]);
    if hmset {
        ctx.ok();
    } else {
        ctx.out.int(added as i64);
    }
}

fn hset(ctx: &mut Ctx, args: &[&[u8]]) {
    hset_generic(ctx, args, false)
}

fn hmset(ctx: &mut Ctx, args: &[&[u8]]) {
    hset_generic(ctx, args, true)
}

fn hsetnx(ctx: &mut Ctx, args: &[&[u8]]) {
    let k = Key::new(args[1]);
    let (db, now, srv, lim) = (ctx.client.db, ctx.now_ms, ctx.srv, ctx.settings.limits);
    let mut p = srv.keyspace.lock(&k);
    let set = modify(&mut p, db, &k, now, |h| {
        if h.contains(args[2]) {
            return false;
        }
        h.convert_for_args(&lim, [args[2], args[3]]);
        h.insert(&lim, args[2], args[3])
    });
    drop(p);
    match set {
        Err(WrongType) => ctx.error(ERR_WRONGTYPE),
        Ok(false) => ctx.out.int(0),
        Ok(true) => {
            ctx.notify(notify::HASH, "hset", args[1]);
            ctx.out.int(1);
        }
    }
}

fn hdel(ctx: &mut Ctx, args: &[&[u8]]) {
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let deleted = match coll::write::<HashValue>(&mut p, db, &k, now) {
        Err(WrongType) => return ctx.error(ERR_WRONGTYPE),
        Ok(None) => 0,
        Ok(Some(mut h)) => {
            let mut n = 0;
            for f in &args[2..] {
                n += h.remove(f) as i64;
                if h.is_empty() {
                    break;
                }
            }
            n
        }
    };
    let gone = deleted > 0 && coll::remove_if_empty::<HashValue>(&mut p, db, &k, now);
    drop(p);
    if deleted > 0 {
        ctx.notify(notify::HASH, "hdel", args[1]);
        if gone {
            ctx.notify(notify::GENERIC, "del", args[1]);
        }
    }
    ctx.out.int(deleted);
}

enum IncrError {
    NotInt,
    Overflow,
}

fn hincrby(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(incr) = ctx.parse_i64(args[3]) else {
        return;
    };
    let k = Key::new(args[1]);
    let (db, now, srv, lim) = (ctx.client.db, ctx.now_ms, ctx.srv, ctx.settings.limits);
    let mut p = srv.keyspace.lock(&k);
    let r = modify(&mut p, db, &k, now, |h| {
        let cur = match h.get(args[2]) {
            None => 0,
            Some(LpValue::Int(i)) => i,
            Some(LpValue::Str(s)) => crate::base::parse::parse_i64(s).ok_or(IncrError::NotInt)?,
        };
        let v = cur.checked_add(incr).ok_or(IncrError::Overflow)?;
        let mut buf = [0u8; 20];
        h.insert(&lim, args[2], lp_bytes(LpValue::Int(v), &mut buf));
        Ok(v)
    });
    drop(p);
    match r {
        Err(WrongType) => ctx.error(ERR_WRONGTYPE),
        Ok(Err(IncrError::NotInt)) => ctx.error(errors::ERR_HASH_VALUE_NOT_INTEGER),
        Ok(Err(IncrError::Overflow)) => ctx.error(errors::ERR_INCREMENT_DECREMENT_WOULD_OVERFLOW),
        Ok(Ok(v)) => {
            ctx.notify(notify::HASH, "hincrby", args[1]);
            ctx.out.int(v);
        }
    }
}

fn hincrbyfloat(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(incr) = LongDouble::parse(args[3]) else {
        return ctx.error(crate::base::errors::ERR_NOT_FLOAT);
    };
    if incr.is_nan_or_inf() {
        return ctx.error(errors::ERR_VALUE_NAN_INFINITY);
    }
    let k = Key::new(args[1]);
    let (db, now, srv, lim) = (ctx.client.db, ctx.now_ms, ctx.srv, ctx.settings.limits);
    let mut p = srv.keyspace.lock(&k);
    let r = modify(&mut p, db, &k, now, |h| {
        let cur = match h.get(args[2]) {
            None => None,
            Some(v) => {
                let mut buf = [0u8; 20];
                Some(
                    LongDouble::parse(lp_bytes(v, &mut buf))
                        .ok_or(errors::ERR_HASH_VALUE_NOT_FLOAT)?,
                )
            }
        };
        let v = match cur {
            Some(c) => c + incr,
            None => incr,
        };
        const NAN_INF: &str = errors::ERR_INCREMENT_WOULD_PRODUCE_NAN_INFINITY;
        if v.is_nan_or_inf() {
            return Err(NAN_INF);
        }
        let text = v.format_human().ok_or(NAN_INF)?;
        h.insert(&lim, args[2], &text);
        Ok(text)
    });
    drop(p);
    match r {
        Err(WrongType) => ctx.error(ERR_WRONGTYPE),
        Ok(Err(e)) => ctx.error(e),
        Ok(Ok(text)) => {
            // Journaled as the value it produced, as Redis 7.0 does.
            ctx.propagate_as(|| {
                vec![vec![
                    b"HSET".to_vec(),
                    args[1].to_vec(),
                    args[2].to_vec(),
                    text.to_vec(),
                ]]
            });
            ctx.notify(notify::HASH, "hincrbyfloat", args[1]);
            ctx.out.bulk(&text);
        }
    }
}

// ------------------------------------------------------------------ reads

fn hget(ctx: &mut Ctx, args: &[&[u8]]) {
    with_read(ctx, args[1], |ctx, h| {
        match h.and_then(|h| h.get(args[2])) {
            Some(v) => reply_lp(ctx, v),
            None => ctx.out.null_bulk(),
        }
    })
}

fn hmget(ctx: &mut Ctx, args: &[&[u8]]) {
    with_read(ctx, args[1], |ctx, h| {
        ctx.out.array_len(args.len() - 2);
        for f in &args[2..] {
            match h.and_then(|h| h.get(f)) {
                Some(v) => reply_lp(ctx, v),
                None => ctx.out.null_bulk(),
            }
        }
    })
}

fn hexists(ctx: &mut Ctx, args: &[&[u8]]) {
    with_read(ctx, args[1], |ctx, h| {
        ctx.out.int(h.is_some_and(|h| h.contains(args[2])) as i64)
    })
}

fn hstrlen(ctx: &mut Ctx, args: &[&[u8]]) {
    with_read(ctx, args[1], |ctx, h| {
        ctx.out
            .int(h.and_then(|h| h.value_len(args[2])).unwrap_or(0) as i64)
    })
}

fn hlen(ctx: &mut Ctx, args: &[&[u8]]) {
    with_read(ctx, args[1], |ctx, h| {
        ctx.out.int(h.map_or(0, |h| h.len()) as i64)
    })
}

/// HGETALL (map), HKEYS, HVALS (arrays).
fn hgetall_generic(ctx: &mut Ctx, key: &[u8], keys: bool, vals: bool) {
    with_read(ctx, key, |ctx, h| {
        let n = h.map_or(0, |h| h.len());
        if keys && vals {
            ctx.out.map_len(n);
        } else {
            ctx.out.array_len(n);
        }
        let Some(h) = h else { return };
        for (f, v) in h.iter() {
            if keys {
                reply_lp(ctx, f);
            }
            if vals {
                reply_lp(ctx, v);
            }
        }
    })
}

fn hgetall(ctx: &mut Ctx, args: &[&[u8]]) {
    hgetall_generic(ctx, args[1], true, true)
}

fn hkeys(ctx: &mut Ctx, args: &[&[u8]]) {
    hgetall_generic(ctx, args[1], true, false)
}

fn hvals(ctx: &mut Ctx, args: &[&[u8]]) {
    hgetall_generic(ctx, args[1], false, true)
}

fn hrandfield(ctx: &mut Ctx, args: &[&[u8]]) {
    if args.len() == 2 {
        return with_read(ctx, args[1], |ctx, h| {
            match h.and_then(|h| h.random_pair(&mut hv::rng())) {
                Some((f, _)) => reply_lp(ctx, f),
                None => ctx.out.null_bulk(),
            }
        });
    }
    let Some(count) = ctx.parse_i64(args[2]) else {
        return;
    };
    if count == i64::MIN {
        return ctx.error(errors::ERR_OUT_OF_RANGE_I64);
    }
    if args.len() > 4 || (args.len() == 4 && !eq_ic(args[3], "withvalues")) {
        return ctx.error(ERR_SYNTAX);
    }
    let withvalues = args.len() == 4;
    if withvalues && !(-(i64::MAX / 2)..=i64::MAX / 2).contains(&count) {
        return ctx.error(errors::ERR_VALUE_OUT_OF_RANGE);
    }
    with_read(ctx, args[1], |ctx, h| {
        let Some(h) = h.filter(|_| count != 0) else {
            return ctx.out.array_len(0);
        };
        let resp3 = ctx.resp3();
        let reply = |ctx: &mut Ctx, f: LpValue<'_>, v: LpValue<'_>| {
            if withvalues && resp3 {
                ctx.out.array_len(2);
            }
            reply_lp(ctx, f);
            if withvalues {
                reply_lp(ctx, v);
            }
        };
        let mut rng = hv::rng();
        let header = |ctx: &mut Ctx, n: usize| {
            ctx.out
                .array_len(if withvalues && !resp3 { 2 * n } else { n })
        };
        if count < 0 {
            let n = count.unsigned_abs();
            header(ctx, n as usize);
            h.random_pairs(n, &mut rng, |f, v| reply(ctx, f, v));
        } else {
            let picks = h.sample_unique(count as usize, &mut rng);
            header(ctx, picks.len());
            for (f, v) in picks {
                reply(ctx, f, v);
            }
        }
    })
}

fn hscan(ctx: &mut Ctx, args: &[&[u8]]) {
    let cursor = match scan::parse_cursor(args[2]) {
        Ok(c) => c,
        Err(e) => return ctx.error(e),
    };
    with_read(ctx, args[1], |ctx, h| {
        let Some(h) = h else {
            return scan::reply_empty(ctx.out);
        };
        let opts = match ScanArgs::parse(args, 3, false) {
            Ok(o) => o,
            Err(e) => return ctx.error(e),
        };
        let mut items: Vec<u8> = Vec::new();
        let mut n = 0usize;
        let next = h.scan(cursor, opts.count, |f, v| {
            let mut buf = [0u8; 20];
            let fb = lp_bytes(f, &mut buf);
            if opts.matches(fb) {
                push_bulk(&mut items, fb);
                let mut buf = [0u8; 20];
                push_bulk(&mut items, lp_bytes(v, &mut buf));
                n += 2;
            }
        });
        scan::reply_cursor(ctx.out, next);
        ctx.out.array_len(n);
        ctx.out.raw(&items);
    })
}

/// Appends a RESP bulk string to `buf` (identical in RESP2 and RESP3).
fn push_bulk(buf: &mut Vec<u8>, s: &[u8]) {
    buf.push(b'$');
    buf.extend_from_slice(s.len().to_string().as_bytes());
    buf.extend_from_slice(b"\r\n");
    buf.extend_from_slice(s);
    buf.extend_from_slice(b"\r\n");
}
