//! Sorted-set commands (Redis 7.0 Z* family, without the blocking
//! BZPOPMIN/BZPOPMAX/BZMPOP, plus ZRANK/ZREVRANK WITHSCORE from 7.2).
//!
//! * [`write`]: ZADD, ZINCRBY, ZREM, ZREMRANGEBY*, ZPOPMIN/ZPOPMAX, ZMPOP and
//!   the pop core the blocking variants reuse ([`write::pop_key`],
//!   [`write::parse_mpop`]);
//! * [`ranges`]: ZRANGE and its legacy forms, ZRANGESTORE, ZCOUNT,
//!   ZLEXCOUNT, ZRANDMEMBER, ZSCAN;
//! * [`setops`]: ZUNION/ZINTER/ZDIFF(+STORE), ZINTERCARD.
//!
//! Invariants: arguments are fully parsed before anything changes (bad
//! input changes nothing); a write that empties a zset deletes the key
//! under the same partition lock; multi-key commands lock every key's
//! partition (`lock_keys`) so they are atomic. Values and encodings live
//! in `collections::ZsetValue`.

pub mod blocking;
pub(crate) mod ranges;
pub(crate) mod setops;
pub(crate) mod write;

use collections::value::zset::{LexBound, LexRange, ScoreRange};
use collections::ZsetValue;
use store::Key;

use crate::base::errors::{ERR_NOT_INT, ERR_WRONGTYPE};
use crate::kernel::coll;
use crate::kernel::ctx::Ctx;
use crate::kernel::spec::{flag, CommandSpec, Docs, KeyPos};

use ranges::*;
use setops::*;
use write::*;

/// Keys of `CMD numkeys key...` (ZUNION, ZINTER, ZDIFF, ZINTERCARD, ZMPOP).
fn keys_numkeys(args: &[&[u8]]) -> Option<Vec<usize>> {
    let n = crate::base::parse::parse_i64(args.get(1)?)?;
    if n < 1 || n as usize > args.len().saturating_sub(2) {
        return None;
    }
    Some((2..2 + n as usize).collect())
}

/// Keys of `CMD dst numkeys key...` (ZUNIONSTORE, ZINTERSTORE, ZDIFFSTORE).
fn keys_store(args: &[&[u8]]) -> Option<Vec<usize>> {
    let n = crate::base::parse::parse_i64(args.get(2)?)?;
    if n < 1 || n as usize > args.len().saturating_sub(3) {
        return None;
    }
    let mut v = vec![1];
    v.extend(3..3 + n as usize);
    Some(v)
}

/// Replies with elements (and their scores): RESP2 a flat array, RESP3
/// with scores an array of [member, score] pairs.
pub(crate) fn reply_pairs(ctx: &mut Ctx, pairs: &[(Vec<u8>, f64)], withscores: bool) {
    if !withscores {
        ctx.out.array_len(pairs.len());
        for (m, _) in pairs {
            ctx.out.bulk(m);
        }
    } else if ctx.resp3() {
        ctx.out.array_len(pairs.len());
        for (m, s) in pairs {
            ctx.out.array_len(2);
            ctx.out.bulk(m);
            ctx.out.double(*s);
        }
    } else {
        ctx.out.array_len(pairs.len() * 2);
        for (m, s) in pairs {
            ctx.out.bulk(m);
            ctx.out.double(*s);
        }
    }
}

/// Replies with (member, score) pairs, nested `[[m, s], ...]` or flat
/// `[m, s, ...]` (scores as doubles: bulk strings in RESP2).
pub(crate) fn reply_pairs_flat_or_nested(ctx: &mut Ctx, pairs: &[(Vec<u8>, f64)], nested: bool) {
    if nested {
        ctx.out.array_len(pairs.len());
    } else {
        ctx.out.array_len(pairs.len() * 2);
    }
    for (m, s) in pairs {
        if nested {
            ctx.out.array_len(2);
        }
        ctx.out.bulk(m);
        ctx.out.double(*s);
    }
}

// `strtod_full` and `get_double` (this family's score parsing) live in
// `base::parse`: the geo family parses coordinates the same way.
use crate::base::parse::{get_double as parse_score_impl, strtod_full};

/// A score or weight argument as Redis's `getDoubleFromObject`.
pub(crate) fn parse_score(b: &[u8]) -> Option<f64> {
    parse_score_impl(b)
}

/// Redis's `strtod`-based bound parsing for score ranges: leading blanks
/// allowed, nothing after the number, NaN refused, empty text is 0.
fn parse_score_bound(b: &[u8]) -> Option<(f64, bool)> {
    let (ex, t) = match b.first() {
        Some(b'(') => (true, &b[1..]),
        _ => (false, b),
    };
    let t = match t.iter().position(|c| !c.is_ascii_whitespace()) {
        Some(i) => &t[i..],
        None => return Some((0.0, ex)),
    };
    strtod_full(t).map(|(v, _)| (v, ex))
}

pub(crate) fn parse_score_range(min: &[u8], max: &[u8]) -> Option<ScoreRange> {
    let (min, minex) = parse_score_bound(min)?;
    let (max, maxex) = parse_score_bound(max)?;
    Some(ScoreRange {
        min,
        max,
        minex,
        maxex,
    })
}

fn parse_lex_bound(b: &[u8]) -> Option<LexBound> {
    match b {
        b"+" => Some(LexBound::PosInf),
        b"-" => Some(LexBound::NegInf),
        [b'(', rest @ ..] => Some(LexBound::Excl(rest.to_vec())),
        [b'[', rest @ ..] => Some(LexBound::Incl(rest.to_vec())),
        _ => None,
    }
}

pub(crate) fn parse_lex_range(min: &[u8], max: &[u8]) -> Option<LexRange> {
    Some(LexRange {
        min: parse_lex_bound(min)?,
        max: parse_lex_bound(max)?,
    })
}

/// Redis's rank normalisation (ZRANGE, ZREMRANGEBYRANK): the inclusive
/// `start..=end` (negative from the end) as an ascending `start..end`.
pub(crate) fn rank_span(start: i64, end: i64, len: usize) -> (usize, usize) {
    let n = len as i64;
    let mut s = if start < 0 { start + n } else { start };
    let mut e = if end < 0 { end + n } else { end };
    if s < 0 {
        s = 0;
    }
    if s > e || s >= n {
        return (0, 0);
    }
    if e >= n {
        e = n - 1;
    }
    (s as usize, e as usize + 1)
}

fn zcard(ctx: &mut Ctx, args: &[&[u8]]) {
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    match coll::read::<ZsetValue>(&mut p, db, &k, now) {
        Ok(z) => ctx.out.int(z.map_or(0, |z| z.len() as i64)),
        Err(_) => ctx.error(ERR_WRONGTYPE),
    }
}

fn zscore(ctx: &mut Ctx, args: &[&[u8]]) {
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    match coll::read::<ZsetValue>(&mut p, db, &k, now) {
        Ok(z) => match z.and_then(|z| z.score(args[2])) {
            Some(s) => ctx.out.double(s),
            None => ctx.out.null_bulk(),
        },
        Err(_) => ctx.error(ERR_WRONGTYPE),
    }
}

fn zmscore(ctx: &mut Ctx, args: &[&[u8]]) {
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let z = match coll::read::<ZsetValue>(&mut p, db, &k, now) {
        Ok(z) => z,
        Err(_) => return ctx.error(ERR_WRONGTYPE),
    };
    ctx.out.array_len(args.len() - 2);
    for m in &args[2..] {
        match z.and_then(|z| z.score(m)) {
            Some(s) => ctx.out.double(s),
            None => ctx.out.null_bulk(),
        }
    }
}

fn zrank_generic(ctx: &mut Ctx, args: &[&[u8]], rev: bool) {
    if args.len() > 4 {
        return ctx.wrong_arity();
    }
    let withscore = args.len() == 4;
    if withscore && !crate::base::parse::eq_ic(args[3], "withscore") {
        return ctx.syntax_error();
    }
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let z = match coll::read::<ZsetValue>(&mut p, db, &k, now) {
        Ok(z) => z,
        Err(_) => return ctx.error(ERR_WRONGTYPE),
    };
    let found = z.and_then(|z| {
        let r = z.rank(args[2])?;
        let s = z.score(args[2])?;
        Some((if rev { z.len() - 1 - r } else { r }, s))
    });
    match found {
        Some((r, s)) => {
            if withscore {
                ctx.out.array_len(2);
                ctx.out.int(r as i64);
                ctx.out.double(s);
            } else {
                ctx.out.int(r as i64);
            }
        }
        None if withscore => ctx.out.null_array(),
        None => ctx.out.null_bulk(),
    }
}

fn zrank(ctx: &mut Ctx, args: &[&[u8]]) {
    zrank_generic(ctx, args, false)
}

fn zrevrank(ctx: &mut Ctx, args: &[&[u8]]) {
    zrank_generic(ctx, args, true)
}

/// Parses an integer argument (ERR_NOT_INT on failure).
pub(crate) fn int_arg(ctx: &mut Ctx, a: &[u8]) -> Option<i64> {
    let v = crate::base::parse::parse_i64(a);
    if v.is_none() {
        ctx.error(ERR_NOT_INT);
    }
    v
}

#[rustfmt::skip]
pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        acl: &["write", "sortedset", "fast"],
        keys: KeyPos::range(1, 1, 1),
        getkeys: None,
        docs: Docs::new("O(log(N)) for each item added, where N is the number of elements in the sorted set.", "Add one or more members to a sorted set, or update its score if it already exists"),
        ..CommandSpec::new("zadd", -4, flag::WRITE | flag::DENYOOM | flag::FAST, zadd)
    },
    CommandSpec {
        acl: &["read", "sortedset", "fast"],
        keys: KeyPos::range(1, 1, 1),
        getkeys: None,
        docs: Docs::new("O(1)", "Get the number of members in a sorted set"),
        ..CommandSpec::new("zcard", 2, flag::READONLY | flag::FAST, zcard)
    },
    CommandSpec {
        acl: &["read", "sortedset", "fast"],
        keys: KeyPos::range(1, 1, 1),
        getkeys: None,
        docs: Docs::new("O(log(N)) with N being the number of elements in the sorted set.", "Count the members in a sorted set with scores within the given values"),
        ..CommandSpec::new("zcount", 4, flag::READONLY | flag::FAST, zcount)
    },
    CommandSpec {
        acl: &["read", "sortedset", "slow"],
        keys: KeyPos::range(0, 0, 0),
        getkeys: Some(keys_numkeys),
        docs: Docs::new("O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, N is the size of the first set, and K is the size of the result set.", "Subtract multiple sorted sets"),
        ..CommandSpec::new("zdiff", -3, flag::READONLY | flag::MOVABLEKEYS, zdiff)
    },
    CommandSpec {
        acl: &["write", "sortedset", "slow"],
        keys: KeyPos::range(1, 1, 1),
        getkeys: Some(keys_store),
        docs: Docs::new("O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, N is the size of the first set, and K is the size of the result set.", "Subtract multiple sorted sets and store the resulting sorted set in a new key"),
        ..CommandSpec::new("zdiffstore", -4, flag::WRITE | flag::DENYOOM | flag::MOVABLEKEYS, zdiffstore)
    },
    CommandSpec {
        acl: &["write", "sortedset", "fast"],
        keys: KeyPos::range(1, 1, 1),
        getkeys: None,
        docs: Docs::new("O(log(N)) where N is the number of elements in the sorted set.", "Increment the score of a member in a sorted set"),
        ..CommandSpec::new("zincrby", 4, flag::WRITE | flag::DENYOOM | flag::FAST, zincrby)
    },
    CommandSpec {
        acl: &["read", "sortedset", "slow"],
        keys: KeyPos::range(0, 0, 0),
        getkeys: Some(keys_numkeys),
        docs: Docs::new("O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the number of input sorted sets and M being the number of elements in the resulting sorted set.", "Intersect multiple sorted sets"),
        ..CommandSpec::new("zinter", -3, flag::READONLY | flag::MOVABLEKEYS, zinter)
    },
    CommandSpec {
        acl: &["read", "sortedset", "slow"],
        keys: KeyPos::range(0, 0, 0),
        getkeys: Some(keys_numkeys),
        docs: Docs::new("O(N*K) worst case with N being the smallest input sorted set, K being the number of input sorted sets.", "Intersect multiple sorted sets and return the cardinality of the result"),
        ..CommandSpec::new("zintercard", -3, flag::READONLY | flag::MOVABLEKEYS, zintercard)
    },
    CommandSpec {
        acl: &["write", "sortedset", "slow"],
        keys: KeyPos::range(1, 1, 1),
        getkeys: Some(keys_store),
        docs: Docs::new("O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the number of input sorted sets and M being the number of elements in the resulting sorted set.", "Intersect multiple sorted sets and store the resulting sorted set in a new key"),
        ..CommandSpec::new("zinterstore", -4, flag::WRITE | flag::DENYOOM | flag::MOVABLEKEYS, zinterstore)
    },
    CommandSpec {
        acl: &["read", "sortedset", "fast"],
        keys: KeyPos::range(1, 1, 1),
        getkeys: None,
        docs: Docs::new("O(log(N)) with N being the number of elements in the sorted set.", "Count the number of members in a sorted set between a given lexicographical range"),
        ..CommandSpec::new("zlexcount", 4, flag::READONLY | flag::FAST, zlexcount)
    },
    CommandSpec {
        acl: &["write", "sortedset", "slow"],
        keys: KeyPos::range(0, 0, 0),
        getkeys: Some(keys_numkeys),
        docs: Docs::new("O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements in the sorted set, and M being the number of elements popped.", "Remove and return members with scores in a sorted set"),
        ..CommandSpec::new("zmpop", -4, flag::WRITE | flag::MOVABLEKEYS, zmpop)
    },
    CommandSpec {
        acl: &["read", "sortedset", "fast"],
        keys: KeyPos::range(1, 1, 1),
        getkeys: None,
        docs: Docs::new("O(N) where N is the number of members being requested.", "Get the score associated with the given members in a sorted set"),
        ..CommandSpec::new("zmscore", -3, flag::READONLY | flag::FAST, zmscore)
    },
    CommandSpec {
        acl: &["write", "sortedset", "fast"],
        keys: KeyPos::range(1, 1, 1),
        getkeys: None,
        docs: Docs::new("O(log(N)*M) with N being the number of elements in the sorted set, and M being the number of elements popped.", "Remove and return members with the highest scores in a sorted set"),
        ..CommandSpec::new("zpopmax", -2, flag::WRITE | flag::FAST, zpopmax)
    },
    CommandSpec {
        acl: &["write", "sortedset", "fast"],
        keys: KeyPos::range(1, 1, 1),
        getkeys: None,
        docs: Docs::new("O(log(N)*M) with N being the number of elements in the sorted set, and M being the number of elements popped.", "Remove and return members with the lowest scores in a sorted set"),
        ..CommandSpec::new("zpopmin", -2, flag::WRITE | flag::FAST, zpopmin)
    },
    CommandSpec {
        acl: &["read", "sortedset", "slow"],
        keys: KeyPos::range(1, 1, 1),
        getkeys: None,
        docs: Docs::new("O(N) where N is the number of elements returned", "Get one or multiple random elements from a sorted set"),
        ..CommandSpec::new("zrandmember", -2, flag::READONLY, zrandmember)
    },
    CommandSpec {
        acl: &["read", "sortedset", "slow"],
        keys: KeyPos::range(1, 1, 1),
        getkeys: None,
        docs: Docs::new("O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements returned.", "Return a range of members in a sorted set"),
        ..CommandSpec::new("zrange", -4, flag::READONLY, zrange)
    },
    CommandSpec {
        acl: &["read", "sortedset", "slow"],
        keys: KeyPos::range(1, 1, 1),
        getkeys: None,
        docs: Docs::new("O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).", "Return a range of members in a sorted set, by lexicographical range"),
        ..CommandSpec::new("zrangebylex", -4, flag::READONLY, zrangebylex)
    },
    CommandSpec {
        acl: &["read", "sortedset", "slow"],
        keys: KeyPos::range(1, 1, 1),
        getkeys: None,
        docs: Docs::new("O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).", "Return a range of members in a sorted set, by score"),
        ..CommandSpec::new("zrangebyscore", -4, flag::READONLY, zrangebyscore)
    },
    CommandSpec {
        acl: &["write", "sortedset", "slow"],
        keys: KeyPos::range(1, 2, 1),
        getkeys: None,
        docs: Docs::new("O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements stored into the destination key.", "Store a range of members from sorted set into another key"),
        ..CommandSpec::new("zrangestore", -5, flag::WRITE | flag::DENYOOM, zrangestore)
    },
    CommandSpec {
        acl: &["read", "sortedset", "fast"],
        keys: KeyPos::range(1, 1, 1),
        getkeys: None,
        docs: Docs::new("O(log(N))", "Determine the index of a member in a sorted set"),
        ..CommandSpec::new("zrank", -3, flag::READONLY | flag::FAST, zrank)
    },
    CommandSpec {
        acl: &["write", "sortedset", "fast"],
        keys: KeyPos::range(1, 1, 1),
        getkeys: None,
        docs: Docs::new("O(M*log(N)) with N being the number of elements in the sorted set and M the number of elements to be removed.", "Remove one or more members from a sorted set"),
        ..CommandSpec::new("zrem", -3, flag::WRITE | flag::FAST, zrem)
    },
    CommandSpec {
        acl: &["write", "sortedset", "slow"],
        keys: KeyPos::range(1, 1, 1),
        getkeys: None,
        docs: Docs::new("O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation.", "Remove all members in a sorted set between the given lexicographical range"),
        ..CommandSpec::new("zremrangebylex", 4, flag::WRITE, zremrangebylex)
    },
    CommandSpec {
        acl: &["write", "sortedset", "slow"],
        keys: KeyPos::range(1, 1, 1),
        getkeys: None,
        docs: Docs::new("O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation.", "Remove all members in a sorted set within the given indexes"),
        ..CommandSpec::new("zremrangebyrank", 4, flag::WRITE, zremrangebyrank)
    },
    CommandSpec {
        acl: &["write", "sortedset", "slow"],
        keys: KeyPos::range(1, 1, 1),
        getkeys: None,
        docs: Docs::new("O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation.", "Remove all members in a sorted set within the given scores"),
        ..CommandSpec::new("zremrangebyscore", 4, flag::WRITE, zremrangebyscore)
    },
    CommandSpec {
        acl: &["read", "sortedset", "slow"],
        keys: KeyPos::range(1, 1, 1),
        getkeys: None,
        docs: Docs::new("O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements returned.", "Return a range of members in a sorted set, by index, with scores ordered from high to low"),
        ..CommandSpec::new("zrevrange", -4, flag::READONLY, zrevrange)
    },
    CommandSpec {
        acl: &["read", "sortedset", "slow"],
        keys: KeyPos::range(1, 1, 1),
        getkeys: None,
        docs: Docs::new("O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).", "Return a range of members in a sorted set, by lexicographical range, ordered from higher to lower strings."),
        ..CommandSpec::new("zrevrangebylex", -4, flag::READONLY, zrevrangebylex)
    },
    CommandSpec {
        acl: &["read", "sortedset", "slow"],
        keys: KeyPos::range(1, 1, 1),
        getkeys: None,
        docs: Docs::new("O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).", "Return a range of members in a sorted set, by score, with scores ordered from high to low"),
        ..CommandSpec::new("zrevrangebyscore", -4, flag::READONLY, zrevrangebyscore)
    },
    CommandSpec {
        acl: &["read", "sortedset", "fast"],
        keys: KeyPos::range(1, 1, 1),
        getkeys: None,
        docs: Docs::new("O(log(N))", "Determine the index of a member in a sorted set, with scores ordered from high to low"),
        ..CommandSpec::new("zrevrank", -3, flag::READONLY | flag::FAST, zrevrank)
    },
    CommandSpec {
        acl: &["read", "sortedset", "slow"],
        keys: KeyPos::range(1, 1, 1),
        getkeys: None,
        docs: Docs::new("O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection..", "Incrementally iterate sorted sets elements and associated scores"),
        ..CommandSpec::new("zscan", -3, flag::READONLY, zscan)
    },
    CommandSpec {
        acl: &["read", "sortedset", "fast"],
        keys: KeyPos::range(1, 1, 1),
        getkeys: None,
        docs: Docs::new("O(1)", "Get the score associated with the given member in a sorted set"),
        ..CommandSpec::new("zscore", 3, flag::READONLY | flag::FAST, zscore)
    },
    CommandSpec {
        acl: &["read", "sortedset", "slow"],
        keys: KeyPos::range(0, 0, 0),
        getkeys: Some(keys_numkeys),
        docs: Docs::new("O(N)+O(M*log(M)) with N being the sum of the sizes of the input sorted sets, and M being the number of elements in the resulting sorted set.", "Add multiple sorted sets"),
        ..CommandSpec::new("zunion", -3, flag::READONLY | flag::MOVABLEKEYS, zunion)
    },
    CommandSpec {
        acl: &["write", "sortedset", "slow"],
        keys: KeyPos::range(1, 1, 1),
        getkeys: Some(keys_store),
        docs: Docs::new("O(N)+O(M log(M)) with N being the sum of the sizes of the input sorted sets, and M being the number of elements in the resulting sorted set.", "Add multiple sorted sets and store the resulting sorted set in a new key"),
        ..CommandSpec::new("zunionstore", -4, flag::WRITE | flag::DENYOOM | flag::MOVABLEKEYS, zunionstore)
    },];

#[cfg(test)]
mod hex_float_tests {
    use super::parse_score;

    #[test]
    fn hexadecimal_floats_as_strtod() {
        assert_eq!(parse_score(b"0x1p3"), Some(8.0));
        assert_eq!(parse_score(b"-0x1P-1"), Some(-0.5));
        assert_eq!(parse_score(b"0x.8"), Some(0.5));
        assert_eq!(parse_score(b"0x10"), Some(16.0));
        assert_eq!(parse_score(b"0x1.8p+1"), Some(3.0));
        assert_eq!(parse_score(b".5"), Some(0.5));
        for bad in [&b"0x"[..], b"0x.", b"0x1p", b"0x1p+", b"0xg", b"0x1q3"] {
            assert_eq!(parse_score(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }
}
