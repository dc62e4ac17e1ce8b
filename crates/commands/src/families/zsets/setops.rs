//! ZUNION/ZINTER/ZDIFF, their STORE forms and ZINTERCARD (Redis's
//! `zunionInterDiffGenericCommand`). Plain sets are accepted as inputs with
//! score 1. Union and intersection visit the inputs from the smallest to the
//! largest (stable), so floating-point sums happen in Redis's order; a
//! weighted score that is NaN (0 * inf) counts as 0, and a SUM of +inf and
//! -inf gives 0, as Redis.

use std::collections::HashMap;

use collections::{LpValue, SetValue, ZsetValue};
use store::keyspace::Partition;
use store::Key;

use super::reply_pairs;
use crate::base::errors;
use crate::base::errors::{ERR_NOT_INT, ERR_SYNTAX, ERR_WRONGTYPE};
use crate::base::parse::eq_ic;
use crate::kernel::coll;
use crate::kernel::ctx::Ctx;
use crate::kernel::notify;

#[derive(Clone, Copy, PartialEq)]
enum Op {
    Union,
    Inter,
    Diff,
}

#[derive(Clone, Copy, PartialEq)]
enum Agg {
    Sum,
    Min,
    Max,
}

fn aggregate(target: &mut f64, val: f64, agg: Agg) {
    match agg {
        Agg::Sum => {
            *target += val;
            if target.is_nan() {
                *target = 0.0;
            }
        }
        Agg::Min => {
            if val < *target {
                *target = val;
            }
        }
        Agg::Max => {
            if val > *target {
                *target = val;
            }
        }
    }
}

/// The elements of a zset or set input, in its own order.
fn load(
    p: &mut Partition,
    db: usize,
    k: &Key,
    now: u64,
    write: bool,
) -> Result<Vec<(Vec<u8>, f64)>, ()> {
    let e = if write {
        p.get(db, k, now)
    } else {
        p.get_read(db, k, now)
    };
    let Some(e) = e else { return Ok(Vec::new()) };
    let v = e.value();
    if let Some(z) = v.as_zset() {
        return Ok(z.to_pairs());
    }
    let Some(s) = v.as_set() else { return Err(()) };
    Ok(match s {
        SetValue::IntSet(i) => i
            .iter()
            .map(|x| (x.to_string().into_bytes(), 1.0))
            .collect(),
        SetValue::Listpack(l) => l.iter().map(|m: LpValue<'_>| (m.to_vec(), 1.0)).collect(),
        SetValue::Table(t) => t.iter().map(|m| (m.to_vec(), 1.0)).collect(),
    })
}

fn sort_pairs(v: &mut [(Vec<u8>, f64)]) {
    v.sort_by(|a, b| {
        a.1.partial_cmp(&b.1)
            .expect("no NaN")
            .then_with(|| a.0.cmp(&b.0))
    });
}

fn generic(
    ctx: &mut Ctx,
    args: &[&[u8]],
    dst: Option<&[u8]>,
    numkeys_idx: usize,
    op: Op,
    card: bool,
) {
    let Some(numkeys) = crate::base::parse::parse_i64(args[numkeys_idx]) else {
        return ctx.error(ERR_NOT_INT);
    };
    if numkeys < 1 {
        let name = ctx.srv.table.get(ctx.cmd_index).full_name.clone();
        return ctx.error(&crate::base::errors::need_one_input_key(&name));
    }
    let first = numkeys_idx + 1;
    if numkeys as u64 > (args.len() - first) as u64 {
        return ctx.error(ERR_SYNTAX);
    }
    let n = numkeys as usize;
    let keys: Vec<Key> = args[first..first + n].iter().map(|k| Key::new(k)).collect();
    let mut all: Vec<Key> = args[first..first + n].iter().map(|k| Key::new(k)).collect();
    let dk = dst.map(Key::new);
    if let Some(d) = dst {
        all.push(Key::new(d));
    }
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let limits = ctx.settings.limits;
    let mut g = srv.keyspace.lock_keys(&all);
    let mut srcs = Vec::with_capacity(n);
    for k in &keys {
        match load(g.part(k), db, k, now, dst.is_some()) {
            Ok(v) => srcs.push(v),
            Err(()) => return ctx.error(ERR_WRONGTYPE),
        }
    }
    let mut weights = vec![1.0f64; n];
    let mut agg = Agg::Sum;
    let mut withscores = false;
    let mut limit = 0usize;
    let mut j = first + n;
    while j < args.len() {
        let remaining = args.len() - j;
        let a = args[j];
        if op != Op::Diff && !card && remaining > n && eq_ic(a, "weights") {
            for (i, w) in weights.iter_mut().enumerate() {
                match super::parse_score(args[j + 1 + i]) {
                    Some(x) => *w = x,
                    None => return ctx.error(errors::ERR_WEIGHT_VALUE_NOT_FLOAT),
                }
            }
            j += 1 + n;
        } else if op != Op::Diff && !card && remaining >= 2 && eq_ic(a, "aggregate") {
            let b = args[j + 1];
            agg = if eq_ic(b, "sum") {
                Agg::Sum
            } else if eq_ic(b, "min") {
                Agg::Min
            } else if eq_ic(b, "max") {
                Agg::Max
            } else {
                return ctx.error(ERR_SYNTAX);
            };
            j += 2;
        } else if dst.is_none() && !card && eq_ic(a, "withscores") {
            withscores = true;
            j += 1;
        } else if card && remaining >= 2 && eq_ic(a, "limit") {
            match crate::base::parse::parse_i64(args[j + 1]) {
                Some(l) if l >= 0 => limit = l as usize,
                _ => return ctx.error(errors::ERR_LIMIT_CANNOT_NEGATIVE),
            }
            j += 2;
        } else {
            return ctx.error(ERR_SYNTAX);
        }
    }
    // (index, weight) visiting order.
    let mut order: Vec<usize> = (0..n).collect();
    if op != Op::Diff {
        order.sort_by_key(|&i| srcs[i].len());
    }
    let mut result: Vec<(Vec<u8>, f64)> = Vec::new();
    let mut cardinality = 0usize;
    match op {
        Op::Union => {
            let mut acc: HashMap<Vec<u8>, f64> = HashMap::new();
            for &i in &order {
                for (m, s) in std::mem::take(&mut srcs[i]) {
                    let mut score = weights[i] * s;
                    if score.is_nan() {
                        score = 0.0;
                    }
                    match acc.get_mut(&m) {
                        Some(t) => aggregate(t, score, agg),
                        None => {
                            acc.insert(m, score);
                        }
                    }
                }
            }
            result = acc.into_iter().collect();
        }
        Op::Inter => {
            let base = order[0];
            let maps: Vec<HashMap<&[u8], f64>> = order[1..]
                .iter()
                .map(|&i| srcs[i].iter().map(|(m, s)| (m.as_slice(), *s)).collect())
                .collect();
            'outer: for (m, s) in &srcs[base] {
                let mut score = weights[base] * s;
                if score.is_nan() {
                    score = 0.0;
                }
                for (k, &i) in order[1..].iter().enumerate() {
                    match maps[k].get(m.as_slice()) {
                        Some(v) => aggregate(&mut score, v * weights[i], agg),
                        None => continue 'outer,
                    }
                }
                if card {
                    cardinality += 1;
                    if limit > 0 && cardinality >= limit {
                        break;
                    }
                } else {
                    result.push((m.clone(), score));
                }
            }
        }
        Op::Diff => {
            let others: Vec<HashMap<&[u8], ()>> = srcs[1..]
                .iter()
                .map(|v| v.iter().map(|(m, _)| (m.as_slice(), ())).collect())
                .collect();
            for (m, s) in &srcs[0] {
                if !others.iter().any(|o| o.contains_key(m.as_slice())) {
                    result.push((m.clone(), *s));
                }
            }
        }
    }
    if card {
        drop(g);
        return ctx.out.int(cardinality as i64);
    }
    sort_pairs(&mut result);
    match (dst, dk) {
        (Some(dst), Some(dk)) => {
            let len = result.len();
            let v = ZsetValue::from_sorted(&result, &limits);
            let existed = coll::store_value(g.part(&dk), db, &dk, now, v);
            drop(g);
            ctx.out.int(len as i64);
            if len > 0 {
                let ev = match op {
                    Op::Union => "zunionstore",
                    Op::Inter => "zinterstore",
                    Op::Diff => "zdiffstore",
                };
                ctx.notify(notify::ZSET, ev, dst);
            } else if existed {
                ctx.notify(notify::GENERIC, "del", dst);
            }
        }
        _ => {
            drop(g);
            reply_pairs(ctx, &result, withscores);
        }
    }
}

pub(super) fn zunion(ctx: &mut Ctx, args: &[&[u8]]) {
    generic(ctx, args, None, 1, Op::Union, false)
}

pub(super) fn zinter(ctx: &mut Ctx, args: &[&[u8]]) {
    generic(ctx, args, None, 1, Op::Inter, false)
}

pub(super) fn zdiff(ctx: &mut Ctx, args: &[&[u8]]) {
    generic(ctx, args, None, 1, Op::Diff, false)
}

pub(super) fn zintercard(ctx: &mut Ctx, args: &[&[u8]]) {
    generic(ctx, args, None, 1, Op::Inter, true)
}

pub(super) fn zunionstore(ctx: &mut Ctx, args: &[&[u8]]) {
    generic(ctx, args, Some(args[1]), 2, Op::Union, false)
}

pub(super) fn zinterstore(ctx: &mut Ctx, args: &[&[u8]]) {
    generic(ctx, args, Some(args[1]), 2, Op::Inter, false)
}

pub(super) fn zdiffstore(ctx: &mut Ctx, args: &[&[u8]]) {
    generic(ctx, args, Some(args[1]), 2, Op::Diff, false)
}
