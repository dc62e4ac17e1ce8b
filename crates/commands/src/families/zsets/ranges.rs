//! Range reads: ZRANGE (BYSCORE/BYLEX/REV/LIMIT) and the legacy
//! ZRANGEBYSCORE/ZRANGEBYLEX/ZREV* forms, ZRANGESTORE, ZCOUNT, ZLEXCOUNT,
//! ZRANDMEMBER and ZSCAN. Every range becomes an ascending rank interval
//! of the value (O(log n) on the tree) before it is walked.

use collections::value::zset::{LexRange, ScoreRange};
use collections::ZsetValue;
use store::Key;

use super::{int_arg, parse_lex_range, parse_score_range, rank_span, reply_pairs};
use crate::base::errors;
use crate::base::errors::{ERR_NOT_INT, ERR_SYNTAX, ERR_WRONGTYPE};
use crate::base::parse::eq_ic;
use crate::kernel::coll;
use crate::kernel::ctx::Ctx;
use crate::kernel::notify;
use crate::services::scan::{self, ScanArgs};

#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    Rank,
    Score,
    Lex,
}

enum Range {
    Rank(i64, i64),
    Score(ScoreRange),
    Lex(LexRange),
}

/// The elements of `z` selected by `range`, in reply order.
fn select(z: &ZsetValue, range: &Range, rev: bool, offset: i64, limit: i64) -> Vec<(Vec<u8>, f64)> {
    let len = z.len();
    match range {
        Range::Rank(a, b) => {
            let (s, e) = rank_span(*a, *b, len);
            if s >= e {
                return Vec::new();
            }
            if rev {
                z.collect_range(len - e, len - s, true)
            } else {
                z.collect_range(s, e, false)
            }
        }
        Range::Score(_) | Range::Lex(_) => {
            let (s, e) = match range {
                Range::Score(r) => z.score_range(r),
                Range::Lex(r) if rev => z.lex_range_rev(r),
                Range::Lex(r) => z.lex_range(r),
                Range::Rank(..) => unreachable!(),
            };
            if offset < 0 || s >= e {
                return Vec::new();
            }
            let avail = e - s;
            let off = (offset as u64).min(avail as u64) as usize;
            let take = if limit < 0 {
                avail - off
            } else {
                (limit as u64).min((avail - off) as u64) as usize
            };
            if rev {
                z.collect_range(e - off - take, e - off, true)
            } else {
                z.collect_range(s + off, s + off + take, false)
            }
        }
    }
}

/// Redis's `zrangeGenericCommand`. `key_idx` is the source key; `store` the
/// destination of ZRANGESTORE; `kind`/`rev` are fixed by the legacy forms.
fn zrange_generic(
    ctx: &mut Ctx,
    args: &[&[u8]],
    key_idx: usize,
    store: Option<&[u8]>,
    fixed_kind: Option<Kind>,
    fixed_rev: Option<bool>,
) {
    let mut withscores = false;
    let (mut offset, mut limit) = (0i64, -1i64);
    let mut rev = fixed_rev;
    let mut kind = fixed_kind;
    let mut j = key_idx + 3;
    while j < args.len() {
        let left = args.len() - j - 1;
        let a = args[j];
        if store.is_none() && eq_ic(a, "withscores") {
            withscores = true;
        } else if eq_ic(a, "limit") && left >= 2 {
            let Some(o) = int_arg(ctx, args[j + 1]) else {
                return;
            };
            let Some(l) = int_arg(ctx, args[j + 2]) else {
                return;
            };
            offset = o;
            limit = l;
            j += 2;
        } else if fixed_rev.is_none() && rev.is_none() && eq_ic(a, "rev") {
            // A second REV is a syntax error in Redis 7.0.
            rev = Some(true);
        } else if fixed_kind.is_none() && kind.is_none() && eq_ic(a, "bylex") {
            kind = Some(Kind::Lex);
        } else if fixed_kind.is_none() && kind.is_none() && eq_ic(a, "byscore") {
            kind = Some(Kind::Score);
        } else {
            return ctx.error(ERR_SYNTAX);
        }
        j += 1;
    }
    let rev = rev.unwrap_or(false);
    let kind = kind.unwrap_or(Kind::Rank);
    if limit != -1 && kind == Kind::Rank {
        return ctx.error(errors::ERR_SYNTAX_LIMIT_NEEDS_BYSCORE_OR_BYLEX);
    }
    if withscores && kind == Kind::Lex {
        return ctx.error(errors::ERR_SYNTAX_WITHSCORES_WITH_BYLEX);
    }
    let (mut lo, mut hi) = (args[key_idx + 1], args[key_idx + 2]);
    if rev && kind != Kind::Rank {
        std::mem::swap(&mut lo, &mut hi);
    }
    let range = match kind {
        Kind::Rank => {
            let Some(a) = int_arg(ctx, lo) else { return };
            let Some(b) = int_arg(ctx, hi) else { return };
            Range::Rank(a, b)
        }
        Kind::Score => match parse_score_range(lo, hi) {
            Some(r) => Range::Score(r),
            None => return ctx.error(errors::ERR_MIN_MAX_NOT_FLOAT),
        },
        Kind::Lex => match parse_lex_range(lo, hi) {
            Some(r) => Range::Lex(r),
            None => return ctx.error(errors::ERR_MIN_MAX_NOT_VALID_STRING_RANGE_ITEM),
        },
    };
    let src = Key::new(args[key_idx]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let limits = ctx.settings.limits;
    match store {
        None => {
            let mut p = srv.keyspace.lock(&src);
            let items = match coll::read::<ZsetValue>(&mut p, db, &src, now) {
                Ok(Some(z)) => select(z, &range, rev, offset, limit),
                Ok(None) => Vec::new(),
                Err(_) => return ctx.error(ERR_WRONGTYPE),
            };
            drop(p);
            reply_pairs(ctx, &items, withscores);
        }
        Some(dst) => {
            let dk = Key::new(dst);
            let mut g = srv
                .keyspace
                .lock_keys(&[Key::new(dst), Key::new(args[key_idx])]);
            let items = match coll::read::<ZsetValue>(g.part(&src), db, &src, now) {
                Ok(Some(z)) => select(z, &range, rev, offset, limit),
                Ok(None) => Vec::new(),
                Err(_) => return ctx.error(ERR_WRONGTYPE),
            };
            let n = items.len();
            // In the range's order (descending with REV), as Redis inserts.
            let v = ZsetValue::from_inserts(&items, &limits);
            let existed = coll::store_value(g.part(&dk), db, &dk, now, v);
            drop(g);
            ctx.out.int(n as i64);
            if n > 0 {
                ctx.notify(notify::ZSET, "zrangestore", dst);
            } else if existed {
                ctx.notify(notify::GENERIC, "del", dst);
            }
        }
    }
}

pub(super) fn zrange(ctx: &mut Ctx, args: &[&[u8]]) {
    zrange_generic(ctx, args, 1, None, None, None)
}

pub(super) fn zrangestore(ctx: &mut Ctx, args: &[&[u8]]) {
    zrange_generic(ctx, args, 2, Some(args[1]), None, None)
}

pub(super) fn zrevrange(ctx: &mut Ctx, args: &[&[u8]]) {
    zrange_generic(ctx, args, 1, None, Some(Kind::Rank), Some(true))
}

pub(super) fn zrangebyscore(ctx: &mut Ctx, args: &[&[u8]]) {
    zrange_generic(ctx, args, 1, None, Some(Kind::Score), Some(false))
}

pub(super) fn zrevrangebyscore(ctx: &mut Ctx, args: &[&[u8]]) {
    zrange_generic(ctx, args, 1, None, Some(Kind::Score), Some(true))
}

pub(super) fn zrangebylex(ctx: &mut Ctx, args: &[&[u8]]) {
    zrange_generic(ctx, args, 1, None, Some(Kind::Lex), Some(false))
}

pub(super) fn zrevrangebylex(ctx: &mut Ctx, args: &[&[u8]]) {
    zrange_generic(ctx, args, 1, None, Some(Kind::Lex), Some(true))
}

fn count_generic(ctx: &mut Ctx, args: &[&[u8]], lex: bool) {
    let range = if lex {
        match parse_lex_range(args[2], args[3]) {
            Some(r) => Range::Lex(r),
            None => return ctx.error(errors::ERR_MIN_MAX_NOT_VALID_STRING_RANGE_ITEM),
        }
    } else {
        match parse_score_range(args[2], args[3]) {
            Some(r) => Range::Score(r),
            None => return ctx.error(errors::ERR_MIN_MAX_NOT_FLOAT),
        }
    };
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let n = match coll::read::<ZsetValue>(&mut p, db, &k, now) {
        Ok(Some(z)) => {
            let (s, e) = match &range {
                Range::Lex(r) => z.lex_range(r),
                Range::Score(r) => z.score_range(r),
                Range::Rank(..) => unreachable!(),
            };
            e.saturating_sub(s)
        }
        Ok(None) => 0,
        Err(_) => return ctx.error(ERR_WRONGTYPE),
    };
    ctx.out.int(n as i64);
}

pub(super) fn zcount(ctx: &mut Ctx, args: &[&[u8]]) {
    count_generic(ctx, args, false)
}

pub(super) fn zlexcount(ctx: &mut Ctx, args: &[&[u8]]) {
    count_generic(ctx, args, true)
}

pub(super) fn zrandmember(ctx: &mut Ctx, args: &[&[u8]]) {
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    if args.len() == 2 {
        let mut p = srv.keyspace.lock(&k);
        return match coll::read::<ZsetValue>(&mut p, db, &k, now) {
            Ok(Some(z)) => {
                let m = z.random_member().map(|x| x.0);
                drop(p);
                ctx.out.bulk(m.unwrap_or_default());
            }
            Ok(None) => ctx.out.null_bulk(),
            Err(_) => ctx.error(ERR_WRONGTYPE),
        };
    }
    let l = match crate::base::parse::parse_i64(args[2]) {
        Some(i64::MIN) => return ctx.error(errors::ERR_OUT_OF_RANGE_I64),
        Some(l) => l,
        None => return ctx.error(ERR_NOT_INT),
    };
    if args.len() > 4 || (args.len() == 4 && !eq_ic(args[3], "withscores")) {
        return ctx.error(ERR_SYNTAX);
    }
    let withscores = args.len() == 4;
    if withscores && !(-(i64::MAX / 2)..=i64::MAX / 2).contains(&l) {
        return ctx.error(errors::ERR_VALUE_OUT_OF_RANGE);
    }
    let mut p = srv.keyspace.lock(&k);
    let z = match coll::read::<ZsetValue>(&mut p, db, &k, now) {
        Ok(Some(z)) => z,
        Ok(None) => {
            drop(p);
            return ctx.out.array_len(0);
        }
        Err(_) => return ctx.error(ERR_WRONGTYPE),
    };
    let items: Vec<(Vec<u8>, f64)> = if l == 0 {
        Vec::new()
    } else if l < 0 {
        let n = l.unsigned_abs() as usize;
        let mut v = Vec::with_capacity(n.min(1 << 20));
        for _ in 0..n {
            if let Some(x) = z.random_member() {
                v.push(x);
            }
        }
        v
    } else if l as u64 >= z.len() as u64 {
        z.to_pairs()
    } else {
        z.random_sample(l as usize)
    };
    drop(p);
    reply_pairs(ctx, &items, withscores);
}

pub(super) fn zscan(ctx: &mut Ctx, args: &[&[u8]]) {
    let cursor = match scan::parse_cursor(args[2]) {
        Ok(c) => c,
        Err(e) => return ctx.error(e),
    };
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    {
        let mut p = srv.keyspace.lock(&k);
        match coll::read::<ZsetValue>(&mut p, db, &k, now) {
            Ok(Some(_)) => {}
            Ok(None) => {
                drop(p);
                return scan::reply_empty(ctx.out);
            }
            Err(_) => return ctx.error(ERR_WRONGTYPE),
        }
    }
    let opts = match ScanArgs::parse(args, 3, false) {
        Ok(o) => o,
        Err(e) => return ctx.error(e),
    };
    let mut p = srv.keyspace.lock(&k);
    let mut out: Vec<(Vec<u8>, f64)> = Vec::new();
    let next = match coll::read::<ZsetValue>(&mut p, db, &k, now) {
        Ok(Some(z)) => z.scan(cursor, opts.count, |m, s| {
            if opts.matches(m) {
                out.push((m.to_vec(), s));
            }
        }),
        _ => 0,
    };
    drop(p);
    scan::reply_cursor(ctx.out, next);
    ctx.out.array_len(out.len() * 2);
    for (m, s) in &out {
        ctx.out.bulk(m);
        ctx.out.bulk(resp::format_double_like_redis(*s));
    }
}
