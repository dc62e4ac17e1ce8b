//! Sorted-set writes: ZADD/ZINCRBY, ZREM, ZREMRANGEBY*, ZPOPMIN/ZPOPMAX,
//! ZMPOP, and the pop core shared with the blocking commands.

use collections::ZsetValue;
use store::keyspace::Partition;
use store::Key;

use super::{int_arg, parse_lex_range, parse_score_range, rank_span};
use crate::base::errors;
use crate::base::errors::{ERR_NOT_FLOAT, ERR_WRONGTYPE};
use crate::base::parse::eq_ic;
use crate::kernel::coll::{self, WrongType};
use crate::kernel::ctx::Ctx;
use crate::kernel::notify;

#[derive(Default, Clone, Copy)]
struct AddFlags {
    nx: bool,
    xx: bool,
    gt: bool,
    lt: bool,
    ch: bool,
    incr: bool,
}

pub(super) fn zadd(ctx: &mut Ctx, args: &[&[u8]]) {
    let mut f = AddFlags::default();
    let mut i = 2;
    while i < args.len() {
        let a = args[i];
        if eq_ic(a, "nx") {
            f.nx = true;
        } else if eq_ic(a, "xx") {
            f.xx = true;
        } else if eq_ic(a, "gt") {
            f.gt = true;
        } else if eq_ic(a, "lt") {
            f.lt = true;
        } else if eq_ic(a, "ch") {
            f.ch = true;
        } else if eq_ic(a, "incr") {
            f.incr = true;
        } else {
            break;
        }
        i += 1;
    }
    let elements = args.len() - i;
    if elements == 0 || elements % 2 == 1 {
        return ctx.syntax_error();
    }
    if f.nx && f.xx {
        return ctx.error(errors::ERR_XX_AND_NX);
    }
    if ((f.gt || f.lt) && f.nx) || (f.gt && f.lt) {
        return ctx.error(errors::ERR_GT_LT_NX);
    }
    if f.incr && elements > 2 {
        return ctx.error(errors::ERR_INCR_OPTION_SUPPORTS_SINGLE_INCREMENT_ELEMENT_PAIR);
    }
    let mut pairs = Vec::with_capacity(elements / 2);
    for c in args[i..].chunks_exact(2) {
        let Some(s) = super::parse_score(c[0]) else {
            return ctx.error(ERR_NOT_FLOAT);
        };
        pairs.push((s, c[1]));
    }
    zadd_apply(ctx, args[1], f, &pairs);
}

pub(super) fn zincrby(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(s) = super::parse_score(args[2]) else {
        return ctx.error(ERR_NOT_FLOAT);
    };
    let f = AddFlags {
        incr: true,
        ..AddFlags::default()
    };
    zadd_apply(ctx, args[1], f, &[(s, args[3])]);
}

/// Redis's `zsetAdd` loop over parsed pairs, with its replies and events.
fn zadd_apply(ctx: &mut Ctx, key: &[u8], f: AddFlags, pairs: &[(f64, &[u8])]) {
    let k = Key::new(key);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let limits = ctx.settings.limits;
    let mut p = srv.keyspace.lock(&k);
    let exists = match coll::check::<ZsetValue>(&mut p, db, &k, now) {
        Ok(e) => e,
        Err(_) => return ctx.error(ERR_WRONGTYPE),
    };
    if !exists && f.xx {
        drop(p);
        return if f.incr {
            ctx.out.null_bulk()
        } else {
            ctx.out.int(0)
        };
    }
    if !exists {
        let v = ZsetValue::new_for(pairs[0].1.len(), &limits);
        p.insert(db, &k, store::CompactValue::from_zset(v), None, now);
    }
    let z = coll::write::<ZsetValue>(&mut p, db, &k, now)
        .ok()
        .flatten()
        .expect("zset checked or just created");
    let (mut added, mut updated, mut processed) = (0i64, 0i64, 0i64);
    let mut last = 0.0;
    for &(score, m) in pairs {
        match z.score(m) {
            Some(cur) => {
                if f.nx {
                    continue;
                }
                let new = if f.incr { cur + score } else { score };
                if new.is_nan() {
                    drop(p);
                    return ctx.error(errors::ERR_RESULTING_SCORE_NOT_NUMBER_NAN);
                }
                if (f.lt && new >= cur) || (f.gt && new <= cur) {
                    continue;
                }
                if new != cur {
                    z.insert(m, new, &limits);
                    updated += 1;
                }
                last = new;
                processed += 1;
            }
            None => {
                if f.xx {
                    continue;
                }
                z.insert(m, score, &limits);
                added += 1;
                processed += 1;
                last = score;
            }
        }
    }
    drop(p);
    if f.incr {
        if processed > 0 {
            ctx.out.double(last);
        } else {
            ctx.out.null_bulk();
        }
    } else {
        ctx.out.int(added + if f.ch { updated } else { 0 });
    }
    if added + updated > 0 {
        ctx.notify(notify::ZSET, if f.incr { "zincr" } else { "zadd" }, key);
    }
}

/// Looks up a zset for writing, replying WRONGTYPE; `Ok(None)` if missing.
fn after_removal(ctx: &mut Ctx, key: &[u8], event: &str, removed: usize, emptied: bool) {
    if removed > 0 {
        ctx.notify(notify::ZSET, event, key);
    }
    if emptied {
        ctx.notify(notify::GENERIC, "del", key);
    }
}

pub(super) fn zrem(ctx: &mut Ctx, args: &[&[u8]]) {
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let z = match coll::write::<ZsetValue>(&mut p, db, &k, now) {
        Ok(Some(z)) => z,
        Ok(None) => return ctx.out.int(0),
        Err(_) => return ctx.error(ERR_WRONGTYPE),
    };
    let mut n = 0;
    for m in &args[2..] {
        if z.remove(m).is_some() {
            n += 1;
            if z.is_empty() {
                break;
            }
        }
    }
    let emptied = coll::remove_if_empty::<ZsetValue>(&mut p, db, &k, now);
    drop(p);
    ctx.out.int(n as i64);
    after_removal(ctx, args[1], "zrem", n, emptied);
}

#[derive(Clone, Copy, PartialEq)]
enum RemKind {
    Rank,
    Score,
    Lex,
}

fn zremrange_generic(ctx: &mut Ctx, args: &[&[u8]], kind: RemKind) {
    // Parse the range before looking at the key, as Redis.
    let mut ranks = (0, 0);
    let mut score = None;
    let mut lex = None;
    match kind {
        RemKind::Rank => {
            let Some(a) = int_arg(ctx, args[2]) else {
                return;
            };
            let Some(b) = int_arg(ctx, args[3]) else {
                return;
            };
            ranks = (a, b);
        }
        RemKind::Score => match parse_score_range(args[2], args[3]) {
            Some(r) => score = Some(r),
            None => return ctx.error(errors::ERR_MIN_MAX_NOT_FLOAT),
        },
        RemKind::Lex => match parse_lex_range(args[2], args[3]) {
            Some(r) => lex = Some(r),
            None => return ctx.error(errors::ERR_MIN_MAX_NOT_VALID_STRING_RANGE_ITEM),
        },
    }
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let z = match coll::write::<ZsetValue>(&mut p, db, &k, now) {
        Ok(Some(z)) => z,
        Ok(None) => return ctx.out.int(0),
        Err(_) => return ctx.error(ERR_WRONGTYPE),
    };
    let (s, e) = match kind {
        RemKind::Rank => rank_span(ranks.0, ranks.1, z.len()),
        RemKind::Score => z.score_range(score.as_ref().unwrap()),
        RemKind::Lex => z.lex_range(lex.as_ref().unwrap()),
    };
    let n = z.remove_rank_range(s, e);
    let emptied = coll::remove_if_empty::<ZsetValue>(&mut p, db, &k, now);
    drop(p);
    ctx.out.int(n as i64);
    let ev = match kind {
        RemKind::Rank => "zremrangebyrank",
        RemKind::Score => "zremrangebyscore",
        RemKind::Lex => "zremrangebylex",
    };
    after_removal(ctx, args[1], ev, n, emptied);
}

pub(super) fn zremrangebyrank(ctx: &mut Ctx, args: &[&[u8]]) {
    zremrange_generic(ctx, args, RemKind::Rank)
}

pub(super) fn zremrangebyscore(ctx: &mut Ctx, args: &[&[u8]]) {
    zremrange_generic(ctx, args, RemKind::Score)
}

pub(super) fn zremrangebylex(ctx: &mut Ctx, args: &[&[u8]]) {
    zremrange_generic(ctx, args, RemKind::Lex)
}

// ------------------------------------------------------------------ pops

/// What one pop from one key did.
#[derive(Debug, Default)]
pub(crate) struct Popped {
    /// (member, score) in pop order (lowest first for MIN, highest first
    /// for MAX).
    pub items: Vec<(Vec<u8>, f64)>,
    /// The key was deleted because the zset became empty.
    pub emptied: bool,
}

/// Pops up to `count` elements from the lowest (or highest when `max`)
/// end of `z`.
pub(crate) fn pop_value(z: &mut ZsetValue, max: bool, count: usize) -> Vec<(Vec<u8>, f64)> {
    let n = count.min(z.len());
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        match z.pop(max) {
            Some(x) => out.push(x),
            None => break,
        }
    }
    out
}

/// The pop core (ZPOPMIN/ZPOPMAX/ZMPOP and the blocking BZ* variants):
/// pops up to `count` elements of the zset at `key`, deleting the key when
/// it empties. `Ok(None)` when the key does not exist; `Err(WrongType)`
/// when it holds another type. `count == 0` pops nothing. The caller sends
/// the `zpopmin`/`zpopmax` (and `del` when `emptied`) notifications.
pub(crate) fn pop_key(
    p: &mut Partition,
    db: usize,
    key: &Key,
    now_ms: u64,
    max: bool,
    count: usize,
) -> Result<Option<Popped>, WrongType> {
    let Some(z) = coll::write::<ZsetValue>(p, db, key, now_ms)? else {
        return Ok(None);
    };
    let items = pop_value(z, max, count);
    let emptied = z.is_empty();
    if emptied {
        p.remove(db, key, now_ms);
    }
    Ok(Some(Popped { items, emptied }))
}

/// Sends the events of a pop from `key`.
pub(crate) fn notify_pop(ctx: &mut Ctx, key: &[u8], max: bool, popped: &Popped) {
    if !popped.items.is_empty() {
        ctx.notify(notify::ZSET, if max { "zpopmax" } else { "zpopmin" }, key);
    }
    if popped.emptied {
        ctx.notify(notify::GENERIC, "del", key);
    }
}

fn zpop_generic(ctx: &mut Ctx, args: &[&[u8]], max: bool) {
    if args.len() > 3 {
        return ctx.syntax_error();
    }
    let count_given = args.len() == 3;
    let count = if count_given {
        match crate::base::parse::parse_i64(args[2]) {
            Some(c) if c >= 0 => c as usize,
            _ => return ctx.error(errors::ERR_VALUE_OUT_OF_RANGE_MUST_POSITIVE),
        }
    } else {
        1
    };
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let popped = match pop_key(&mut p, db, &k, now, max, count) {
        Ok(Some(x)) => x,
        Ok(None) => {
            drop(p);
            return ctx.out.array_len(0);
        }
        Err(_) => return ctx.error(ERR_WRONGTYPE),
    };
    drop(p);
    // RESP3 with a count: [[member, score], ...]; otherwise flat.
    super::reply_pairs_flat_or_nested(ctx, &popped.items, count_given && ctx.resp3());
    notify_pop(ctx, args[1], max, &popped);
}

pub(super) fn zpopmin(ctx: &mut Ctx, args: &[&[u8]]) {
    zpop_generic(ctx, args, false)
}

pub(super) fn zpopmax(ctx: &mut Ctx, args: &[&[u8]]) {
    zpop_generic(ctx, args, true)
}

/// Parsed `numkeys key... MIN|MAX [COUNT count]` of ZMPOP/BZMPOP.
#[derive(Debug, Clone)]
pub(crate) struct MpopArgs<'a> {
    pub keys: Vec<&'a [u8]>,
    pub max: bool,
    pub count: usize,
}

/// Parses the ZMPOP tail starting at `args[numkeys_idx]` (1 for ZMPOP, 2
/// for BZMPOP whose timeout comes first), replying Redis's error on bad
/// input.
pub(crate) fn parse_mpop<'a>(
    ctx: &mut Ctx,
    args: &[&'a [u8]],
    numkeys_idx: usize,
) -> Option<MpopArgs<'a>> {
    let numkeys = match crate::base::parse::parse_i64(args[numkeys_idx]) {
        Some(n) if n >= 1 => n as usize,
        _ => {
            ctx.error(errors::ERR_NUMKEYS_SHOULD_GREATER_THAN_0);
            return None;
        }
    };
    let first = numkeys_idx + 1;
    let where_idx = first.checked_add(numkeys)?;
    if numkeys > args.len() - first || where_idx >= args.len() {
        ctx.syntax_error();
        return None;
    }
    let max = if eq_ic(args[where_idx], "min") {
        false
    } else if eq_ic(args[where_idx], "max") {
        true
    } else {
        ctx.syntax_error();
        return None;
    };
    let mut count = None;
    let mut j = where_idx + 1;
    while j < args.len() {
        if count.is_none() && eq_ic(args[j], "count") && j + 1 < args.len() {
            match crate::base::parse::parse_i64(args[j + 1]) {
                Some(c) if c >= 1 => count = Some(c as usize),
                _ => {
                    ctx.error(errors::ERR_COUNT_SHOULD_GREATER_THAN_0);
                    return None;
                }
            }
            j += 2;
        } else {
            ctx.syntax_error();
            return None;
        }
    }
    Some(MpopArgs {
        keys: args[first..where_idx].to_vec(),
        max,
        count: count.unwrap_or(1),
    })
}

/// Replies `[key, [[member, score], ...]]` (ZMPOP/BZMPOP).
pub(crate) fn reply_mpop(ctx: &mut Ctx, key: &[u8], items: &[(Vec<u8>, f64)]) {
    ctx.out.array_len(2);
    ctx.out.bulk(key);
    super::reply_pairs_flat_or_nested(ctx, items, true);
}

pub(super) fn zmpop(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(a) = parse_mpop(ctx, args, 1) else {
        return;
    };
    let keys: Vec<Key> = a.keys.iter().map(|k| Key::new(k)).collect();
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut g = srv.keyspace.lock_keys(&keys);
    for (i, k) in keys.iter().enumerate() {
        match pop_key(g.part(k), db, k, now, a.max, a.count) {
            Ok(Some(popped)) => {
                drop(g);
                reply_mpop(ctx, a.keys[i], &popped.items);
                // Journaled as ZPOPMIN/ZPOPMAX of the key it popped (Redis 7.0).
                let (key, max, count) = (a.keys[i], a.max, a.count);
                ctx.propagate_as(|| {
                    let name: &[u8] = if max { b"ZPOPMAX" } else { b"ZPOPMIN" };
                    vec![vec![
                        name.to_vec(),
                        key.to_vec(),
                        count.to_string().into_bytes(),
                    ]]
                });
                notify_pop(ctx, a.keys[i], a.max, &popped);
                return;
            }
            Ok(None) => continue,
            Err(_) => return ctx.error(ERR_WRONGTYPE),
        }
    }
    drop(g);
    ctx.out.null_array();
}
