//! Set commands (Redis 7.0 semantics): SADD, SREM, SCARD, SISMEMBER,
//! SMISMEMBER, SMEMBERS, SMOVE, SPOP, SRANDMEMBER, SSCAN, and the algebra
//! SINTER/SUNION/SDIFF (+STORE), SINTERCARD.
//!
//! Values are [`SetValue`]s (intset / listpack / hashtable, converted at the
//! points documented in `collections::value::set`, under
//! `ctx.settings.limits`). Invariants kept here:
//! * a command that takes several keys locks all their partitions at once
//!   (`lock_keys`), so SMOVE, SINTERSTORE etc. are atomic;
//! * a set that becomes empty is deleted before its partition is unlocked,
//!   with Redis's "del" event after the command's own event;
//! * read lookups (statistics, eviction byte) where Redis uses
//!   `lookupKeyRead`, write lookups where it uses `lookupKeyWrite`;
//! * values removed from the keyspace are dropped after the locks are
//!   released.

use collections::value::set::{thread_rng, Member};
use collections::SetValue;
use resp::ReplyBuf;
use store::{Key, MultiGuard};

use crate::base::errors;
use crate::base::errors::{ERR_NOT_INT, ERR_SYNTAX, ERR_WRONGTYPE};
use crate::base::parse::{eq_ic, parse_i64};
use crate::kernel::coll::{self, WrongType};
use crate::kernel::ctx::Ctx;
use crate::kernel::notify;
use crate::kernel::spec::{flag, CommandSpec, Docs, KeyPos};
use crate::services::scan::{self, ScanArgs};

const CX_N_ALL: &str = "O(N) where N is the total number of elements in all given sets.";
const CX_INTER: &str =
    "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets.";

macro_rules! cmd {
    ($name:expr, $arity:expr, $flags:expr, $acl:expr, $keys:expr, $docs:expr, $h:expr) => {
        CommandSpec {
            acl: $acl,
            keys: $keys,
            docs: $docs,
            ..CommandSpec::new($name, $arity, $flags, $h)
        }
    };
}

const W: u32 = flag::WRITE;
const R: u32 = flag::READONLY;
const F: u32 = flag::FAST;
const D: u32 = flag::DENYOOM;

pub const COMMANDS: &[CommandSpec] = &[
    cmd!("sadd", -3, W | D | F, &["write", "set", "fast"], KeyPos::ONE,
        Docs::new("O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.", "Add one or more members to a set"),
        sadd),
    cmd!("scard", 2, R | F, &["read", "set", "fast"], KeyPos::ONE,
        Docs::new("O(1)", "Get the number of members in a set"),
        scard),
    cmd!("sdiff", -2, R, &["read", "set", "slow"], KeyPos::ALL,
        Docs::new(CX_N_ALL, "Subtract multiple sets"),
        sdiff),
    cmd!("sdiffstore", -3, W | D, &["write", "set", "slow"], KeyPos::ALL,
        Docs::new(CX_N_ALL, "Subtract multiple sets and store the resulting set in a key"),
        sdiffstore),
    cmd!("sinter", -2, R, &["read", "set", "slow"], KeyPos::ALL,
        Docs::new(CX_INTER, "Intersect multiple sets"),
        sinter),
    CommandSpec {
        getkeys: Some(sintercard_keys),
        ..cmd!("sintercard", -3, R | flag::MOVABLEKEYS, &["read", "set", "slow"], KeyPos::NONE,
            Docs::new(CX_INTER, "Intersect multiple sets and return the cardinality of the result"),
            sintercard)
    },
    cmd!("sinterstore", -3, W | D, &["write", "set", "slow"], KeyPos::ALL,
        Docs::new(CX_INTER, "Intersect multiple sets and store the resulting set in a key"),
        sinterstore),
    cmd!("sismember", 3, R | F, &["read", "set", "fast"], KeyPos::ONE,
        Docs::new("O(1)", "Determine if a given value is a member of a set"),
        sismember),
    cmd!("smembers", 2, R, &["read", "set", "slow"], KeyPos::ONE,
        Docs::new("O(N) where N is the set cardinality.", "Get all the members in a set"),
        smembers),
    cmd!("smismember", -3, R | F, &["read", "set", "fast"], KeyPos::ONE,
        Docs::new("O(N) where N is the number of elements being checked for membership", "Returns the membership associated with the given elements for a set"),
        smismember),
    cmd!("smove", 4, W | F, &["write", "set", "fast"], KeyPos::range(1, 2, 1),
        Docs::new("O(1)", "Move a member from one set to another"),
        smove),
    cmd!("spop", -2, W | F, &["write", "set", "fast"], KeyPos::ONE,
        Docs::new("Without the count argument O(1), otherwise O(N) where N is the value of the passed count.", "Remove and return one or multiple random members from a set"),
        spop),
    cmd!("srandmember", -2, R, &["read", "set", "slow"], KeyPos::ONE,
        Docs::new("Without the count argument O(1), otherwise O(N) where N is the absolute value of the passed count.", "Get one or multiple random members from a set"),
        srandmember),
    cmd!("srem", -3, W | F, &["write", "set", "fast"], KeyPos::ONE,
        Docs::new("O(N) where N is the number of members to be removed.", "Remove one or more members from a set"),
        srem),
    cmd!("sscan", -3, R, &["read", "set", "slow"], KeyPos::ONE,
        Docs::new("O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection..", "Incrementally iterate Set elements"),
        sscan),
    cmd!("sunion", -2, R, &["read", "set", "slow"], KeyPos::ALL,
        Docs::new(CX_N_ALL, "Add multiple sets"),
        sunion),
    cmd!("sunionstore", -3, W | D, &["write", "set", "slow"], KeyPos::ALL,
        Docs::new(CX_N_ALL, "Add multiple sets and store the resulting set in a key"),
        sunionstore),
];

// ------------------------------------------------------------ helpers

fn reply_member(out: &mut ReplyBuf, m: Member<'_>) {
    match m {
        Member::Int(v) => out.bulk_from_int(v),
        Member::Str(b) => out.bulk(b),
    }
}

fn reply_set(out: &mut ReplyBuf, s: &SetValue) {
    out.set_len(s.len());
    for m in s.iter() {
        reply_member(out, m);
    }
}

/// SINTERCARD's key positions: `numkeys` keys after the count.
fn sintercard_keys(args: &[&[u8]]) -> Option<Vec<usize>> {
    let n = parse_i64(args.get(1)?)?;
    if n <= 0 || n as u64 > (args.len() - 2) as u64 {
        return None;
    }
    Some((2..2 + n as usize).collect())
}

/// Read-looks-up every key of `srcs` (statistics, expiry, type check) and
/// returns shared references to the sets (None = missing key). All keys
/// must be locked by `g`.
fn load_sets<'g>(
    ks: &store::Keyspace,
    g: &'g mut MultiGuard<'_>,
    db: usize,
    srcs: &[Key],
    now: u64,
) -> Result<Vec<Option<&'g SetValue>>, WrongType> {
    for k in srcs {
        coll::read::<SetValue>(g.part(k), db, k, now)?;
    }
    let parts: Vec<&store::Partition> = g.partitions().map(|p| &*p).collect();
    Ok(srcs
        .iter()
        .map(|k| {
            let pi = ks.partition_of_slot(k.slot());
            let p = parts.iter().find(|p| p.index() == pi)?;
            p.db(db)?.find(k)?.value().as_set()
        })
        .collect())
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Inter,
    Union,
    Diff,
}

/// The result of `op` over `sets` (SINTER/SUNION/SDIFF and their STORE
/// forms), built under `lim` so a stored result has the right encoding.
fn compute(op: Op, sets: &[Option<&SetValue>], lim: &collections::Limits) -> SetValue {
    let mut out = SetValue::new();
    match op {
        Op::Inter => {
            if sets.iter().any(|s| s.is_none()) {
                return out;
            }
            let mut v: Vec<&SetValue> = sets.iter().map(|s| s.unwrap()).collect();
            v.sort_by_key(|s| s.len());
            for m in v[0].iter() {
                if v[1..].iter().all(|s| s.contains_member(m)) {
                    out.insert_member(m, lim);
                }
            }
        }
        Op::Union => {
            for s in sets.iter().flatten() {
                for m in s.iter() {
                    out.insert_member(m, lim);
                }
            }
        }
        Op::Diff => {
            let Some(first) = sets[0] else {
                return out;
            };
            for m in first.iter() {
                if !sets[1..].iter().flatten().any(|s| s.contains_member(m)) {
                    out.insert_member(m, lim);
                }
            }
        }
    }
    out
}

/// SINTER / SUNION / SDIFF: reply the result as a set.
fn algebra(ctx: &mut Ctx, args: &[&[u8]], op: Op) {
    let keys: Vec<Key> = args[1..].iter().map(|a| Key::new(a)).collect();
    let (db, now, srv, lim) = (ctx.client.db, ctx.now_ms, ctx.srv, ctx.settings.limits);
    let mut g = srv.keyspace.lock_keys(&keys);
    let sets = match load_sets(&srv.keyspace, &mut g, db, &keys, now) {
        Ok(s) => s,
        Err(WrongType) => {
            drop(g);
            return ctx.error(ERR_WRONGTYPE);
        }
    };
    if sets.len() == 1 || (op == Op::Inter && sets.iter().any(|s| s.is_none())) {
        // One key (or an empty intersection): reply straight from the value.
        match sets
            .iter()
            .find(|s| s.is_none())
            .copied()
            .unwrap_or(sets[0])
        {
            Some(s) => reply_set(ctx.out, s),
            None => ctx.out.set_len(0),
        }
        return;
    }
    let r = compute(op, &sets, &lim);
    drop(g);
    reply_set(ctx.out, &r);
}

/// SINTERSTORE / SUNIONSTORE / SDIFFSTORE.
fn algebra_store(ctx: &mut Ctx, args: &[&[u8]], op: Op, event: &str) {
    let keys: Vec<Key> = args[1..].iter().map(|a| Key::new(a)).collect();
    let (db, now, srv, lim) = (ctx.client.db, ctx.now_ms, ctx.srv, ctx.settings.limits);
    let mut g = srv.keyspace.lock_keys(&keys);
    let r = match load_sets(&srv.keyspace, &mut g, db, &keys[1..], now) {
        Ok(sets) => compute(op, &sets, &lim),
        Err(WrongType) => {
            drop(g);
            return ctx.error(ERR_WRONGTYPE);
        }
    };
    let n = r.len();
    let dst = &keys[0];
    let p = g.part(dst);
    let old = if n == 0 {
        p.remove(db, dst, now)
    } else {
        p.insert(db, dst, store::CompactValue::from_set(r), None, now)
    };
    drop(g);
    let existed = old.is_some();
    drop(old);
    if n > 0 {
        ctx.notify(notify::SET, event, args[1]);
    } else if existed {
        ctx.notify(notify::GENERIC, "del", args[1]);
    }
    ctx.out.int(n as i64);
}

// ------------------------------------------------------------ commands

fn sadd(ctx: &mut Ctx, args: &[&[u8]]) {
    let k = Key::new(args[1]);
    let (db, now, srv, lim) = (ctx.client.db, ctx.now_ms, ctx.srv, ctx.settings.limits);
    let mut p = srv.keyspace.lock(&k);
    let s = match coll::write_or_create::<SetValue>(&mut p, db, &k, now, SetValue::new) {
        Ok((s, _)) => s,
        Err(WrongType) => {
            drop(p);
            return ctx.error(ERR_WRONGTYPE);
        }
    };
    let added = args[2..].iter().filter(|m| s.insert(m, &lim)).count();
    drop(p);
    if added > 0 {
        ctx.notify(notify::SET, "sadd", args[1]);
    }
    ctx.out.int(added as i64);
}

fn srem(ctx: &mut Ctx, args: &[&[u8]]) {
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let s = match coll::write::<SetValue>(&mut p, db, &k, now) {
        Ok(Some(s)) => s,
        Ok(None) => {
            drop(p);
            return ctx.out.int(0);
        }
        Err(WrongType) => {
            drop(p);
            return ctx.error(ERR_WRONGTYPE);
        }
    };
    let mut removed = 0;
    for m in &args[2..] {
        if s.remove(m) {
            removed += 1;
            if s.is_empty() {
                break;
            }
        }
    }
    let old = if s.is_empty() {
        p.remove(db, &k, now)
    } else {
        None
    };
    drop(p);
    let emptied = old.is_some();
    drop(old);
    if removed > 0 {
        ctx.notify(notify::SET, "srem", args[1]);
    }
    if emptied {
        ctx.notify(notify::GENERIC, "del", args[1]);
    }
    ctx.out.int(removed);
}

/// Runs `f` on the set at `args[1]` with a read lookup; missing keys reply
/// with `missing`.
fn with_read(
    ctx: &mut Ctx,
    args: &[&[u8]],
    missing: fn(&mut ReplyBuf),
    f: impl FnOnce(&mut ReplyBuf, &SetValue),
) {
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    match coll::read::<SetValue>(&mut p, db, &k, now) {
        Ok(Some(s)) => f(ctx.out, s),
        Ok(None) => missing(ctx.out),
        Err(WrongType) => {
            drop(p);
            ctx.error(ERR_WRONGTYPE)
        }
    }
}

fn scard(ctx: &mut Ctx, args: &[&[u8]]) {
    with_read(ctx, args, |o| o.int(0), |o, s| o.int(s.len() as i64));
}

fn sismember(ctx: &mut Ctx, args: &[&[u8]]) {
    let m = args[2];
    with_read(ctx, args, |o| o.int(0), |o, s| o.int(s.contains(m) as i64));
}

fn smismember(ctx: &mut Ctx, args: &[&[u8]]) {
    let ms = &args[2..];
    let reply = |o: &mut ReplyBuf, s: Option<&SetValue>| {
        o.array_len(ms.len());
        for m in ms {
            o.int(s.is_some_and(|s| s.contains(m)) as i64);
        }
    };
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    match coll::read::<SetValue>(&mut p, db, &k, now) {
        Ok(s) => reply(ctx.out, s),
        Err(WrongType) => {
            drop(p);
            ctx.error(ERR_WRONGTYPE)
        }
    }
}

fn smembers(ctx: &mut Ctx, args: &[&[u8]]) {
    with_read(ctx, args, |o| o.set_len(0), reply_set);
}

fn sinter(ctx: &mut Ctx, args: &[&[u8]]) {
    algebra(ctx, args, Op::Inter)
}

fn sunion(ctx: &mut Ctx, args: &[&[u8]]) {
    algebra(ctx, args, Op::Union)
}

fn sdiff(ctx: &mut Ctx, args: &[&[u8]]) {
    algebra(ctx, args, Op::Diff)
}

fn sinterstore(ctx: &mut Ctx, args: &[&[u8]]) {
    algebra_store(ctx, args, Op::Inter, "sinterstore")
}

fn sunionstore(ctx: &mut Ctx, args: &[&[u8]]) {
    algebra_store(ctx, args, Op::Union, "sunionstore")
}

fn sdiffstore(ctx: &mut Ctx, args: &[&[u8]]) {
    algebra_store(ctx, args, Op::Diff, "sdiffstore")
}

fn sintercard(ctx: &mut Ctx, args: &[&[u8]]) {
    let numkeys = match parse_i64(args[1]) {
        Some(n) if n > 0 => n as u64,
        _ => return ctx.error(errors::ERR_NUMKEYS_SHOULD_GREATER_THAN_0),
    };
    if numkeys > (args.len() - 2) as u64 {
        return ctx.error(errors::ERR_NUMKEYS_OVER_ARGS);
    }
    let end = 2 + numkeys as usize;
    let mut limit = 0usize;
    let mut j = end;
    while j < args.len() {
        if eq_ic(args[j], "limit") && j + 1 < args.len() {
            match parse_i64(args[j + 1]) {
                Some(l) if l >= 0 => limit = l as usize,
                _ => return ctx.error(errors::ERR_LIMIT_CANNOT_NEGATIVE),
            }
            j += 2;
        } else {
            return ctx.error(ERR_SYNTAX);
        }
    }
    let keys: Vec<Key> = args[2..end].iter().map(|a| Key::new(a)).collect();
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut g = srv.keyspace.lock_keys(&keys);
    let sets = match load_sets(&srv.keyspace, &mut g, db, &keys, now) {
        Ok(s) => s,
        Err(WrongType) => {
            drop(g);
            return ctx.error(ERR_WRONGTYPE);
        }
    };
    let mut n = 0usize;
    if sets.iter().all(|s| s.is_some()) {
        let mut v: Vec<&SetValue> = sets.iter().map(|s| s.unwrap()).collect();
        v.sort_by_key(|s| s.len());
        for m in v[0].iter() {
            if v[1..].iter().all(|s| s.contains_member(m)) {
                n += 1;
                if n == limit {
                    break;
                }
            }
        }
    }
    drop(g);
    ctx.out.int(n as i64);
}

fn smove(ctx: &mut Ctx, args: &[&[u8]]) {
    let keys = [Key::new(args[1]), Key::new(args[2])];
    let (db, now, srv, lim) = (ctx.client.db, ctx.now_ms, ctx.srv, ctx.settings.limits);
    let member = args[3];
    let mut g = srv.keyspace.lock_keys(&keys);
    let (src, dst) = (&keys[0], &keys[1]);
    let src_state = coll::check::<SetValue>(g.part(src), db, src, now);
    let dst_state = coll::check::<SetValue>(g.part(dst), db, dst, now);
    if src_state == Ok(false) {
        drop(g);
        return ctx.out.int(0);
    }
    if src_state.is_err() || dst_state.is_err() {
        drop(g);
        return ctx.error(ERR_WRONGTYPE);
    }
    let s = coll::write::<SetValue>(g.part(src), db, src, now)
        .ok()
        .flatten()
        .expect("checked above");
    if args[1] == args[2] {
        let r = s.contains(member);
        drop(g);
        return ctx.out.int(r as i64);
    }
    if !s.remove(member) {
        drop(g);
        return ctx.out.int(0);
    }
    let old = if s.is_empty() {
        g.part(src).remove(db, src, now)
    } else {
        None
    };
    let added = match coll::write_or_create::<SetValue>(g.part(dst), db, dst, now, SetValue::new) {
        Ok((d, _)) => d.insert(member, &lim),
        Err(WrongType) => unreachable!("destination type checked above"),
    };
    drop(g);
    let emptied = old.is_some();
    drop(old);
    ctx.notify(notify::SET, "srem", args[1]);
    if emptied {
        ctx.notify(notify::GENERIC, "del", args[1]);
    }
    if added {
        ctx.notify(notify::SET, "sadd", args[2]);
    }
    ctx.out.int(1);
}

fn spop(ctx: &mut Ctx, args: &[&[u8]]) {
    if args.len() > 3 {
        return ctx.error(ERR_SYNTAX);
    }
    let count = if args.len() == 3 {
        match parse_i64(args[2]) {
            Some(c) if c >= 0 => Some(c as u64),
            _ => return ctx.error(errors::ERR_VALUE_OUT_OF_RANGE_MUST_POSITIVE),
        }
    } else {
        None
    };
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let s = match coll::write::<SetValue>(&mut p, db, &k, now) {
        Ok(Some(s)) => s,
        Ok(None) => {
            drop(p);
            return match count {
                None => ctx.out.null_bulk(),
                Some(_) => ctx.out.set_len(0),
            };
        }
        Err(WrongType) => {
            drop(p);
            return ctx.error(ERR_WRONGTYPE);
        }
    };
    let mut rng = thread_rng();
    let whole = count.is_some_and(|c| c >= s.len() as u64);
    // Journaled as one SREM per popped member (DEL for the whole set), as
    // Redis 7.0 does: the choice was random.
    let journaling = ctx.journaling();
    let mut popped: Vec<Vec<u8>> = Vec::new();
    match count {
        None => {
            let m = s.pop_random(&mut rng).expect("sets are never empty");
            ctx.out.bulk(&m);
            if journaling {
                popped.push(m.to_vec());
            }
        }
        Some(0) => {
            drop(p);
            return ctx.out.set_len(0);
        }
        Some(_) if whole => reply_set(ctx.out, s),
        Some(c) => {
            ctx.out.set_len(c as usize);
            for _ in 0..c {
                let m = s.pop_random(&mut rng).expect("count < len");
                ctx.out.bulk(&m);
                if journaling {
                    popped.push(m.to_vec());
                }
            }
        }
    }
    if journaling {
        ctx.propagate_as(|| {
            if whole {
                return vec![vec![b"DEL".to_vec(), args[1].to_vec()]];
            }
            popped
                .into_iter()
                .map(|m| vec![b"SREM".to_vec(), args[1].to_vec(), m])
                .collect()
        });
    }
    let old = if whole || s.is_empty() {
        p.remove(db, &k, now)
    } else {
        None
    };
    drop(p);
    let emptied = old.is_some();
    drop(old);
    ctx.notify(notify::SET, "spop", args[1]);
    if emptied {
        ctx.notify(notify::GENERIC, "del", args[1]);
    }
}

fn srandmember(ctx: &mut Ctx, args: &[&[u8]]) {
    if args.len() > 3 {
        return ctx.error(ERR_SYNTAX);
    }
    if args.len() == 2 {
        let mut rng = thread_rng();
        return with_read(
            ctx,
            args,
            |o| o.null_bulk(),
            |o, s| reply_member(o, s.random(&mut rng).expect("sets are never empty")),
        );
    }
    let count = match parse_i64(args[2]) {
        None => return ctx.error(ERR_NOT_INT),
        Some(i64::MIN) => return ctx.error(errors::ERR_OUT_OF_RANGE_I64),
        Some(c) => c,
    };
    let mut rng = thread_rng();
    with_read(
        ctx,
        args,
        |o| o.array_len(0),
        |o, s| {
            if count < 0 {
                let n = count.unsigned_abs();
                o.array_len(n as usize);
                for _ in 0..n {
                    reply_member(o, s.random(&mut rng).expect("sets are never empty"));
                }
            } else if count as u64 >= s.len() as u64 {
                o.array_len(s.len());
                s.iter().for_each(|m| reply_member(o, m));
            } else {
                let v = s.sample_distinct(count as usize, &mut rng);
                o.array_len(v.len());
                v.into_iter().for_each(|m| reply_member(o, m));
            }
        },
    );
}

fn sscan(ctx: &mut Ctx, args: &[&[u8]]) {
    let cursor = match scan::parse_cursor(args[2]) {
        Ok(c) => c,
        Err(e) => return ctx.error(e),
    };
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let s = match coll::read::<SetValue>(&mut p, db, &k, now) {
        Ok(Some(s)) => s,
        Ok(None) => {
            drop(p);
            return scan::reply_empty(ctx.out);
        }
        Err(WrongType) => {
            drop(p);
            return ctx.error(ERR_WRONGTYPE);
        }
    };
    let opts = match ScanArgs::parse(args, 3, false) {
        Ok(o) => o,
        Err(e) => {
            drop(p);
            return ctx.error(e);
        }
    };
    let mut out: Vec<Vec<u8>> = Vec::new();
    let next = s.scan(cursor, opts.count, |m| {
        let b = m.to_vec();
        if opts.matches(&b) {
            out.push(b);
        }
    });
    drop(p);
    scan::reply_cursor(ctx.out, next);
    ctx.bulk_array(&out);
}
