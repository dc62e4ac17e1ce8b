//! SORT and SORT_RO (Redis 7.0 semantics).
//!
//! The sorting core ([`sort_items`], [`parse_score`], [`limit_range`],
//! [`pattern_key`]) is independent of the keyspace and unit-tested here;
//! the handlers load the elements, look up BY/GET patterns and reply or
//! STORE.
//!
//! Rules kept from Redis 7.0:
//! * numeric sort scores parse like C `strtod` on the NUL-terminated text
//!   (leading blanks, hex, `inf`; trailing bytes, NaN, overflow and inexact
//!   underflow are conversion errors, reported as "One or more scores can't
//!   be converted into double" after loading, before anything is stored);
//!   equal scores order by the elements' bytes;
//! * ALPHA compares bytes up to the first NUL (`strcoll` in the C/C.UTF-8
//!   locale) when replying, and whole byte strings when storing; with a BY
//!   pattern, elements whose BY key is missing sort first;
//! * `BY` without `*` (e.g. `nosort`) keeps the native order (list order,
//!   zset rank order, reversed by DESC); a set is then sorted ALPHA anyway
//!   when storing, so the stored list is deterministic;
//! * a sorted set kept as a listpack becomes a skiplist for good (Redis
//!   "destructively" converts it before loading the elements);
//! * `GET #` is the element, `GET`/`BY` `prefix*suffix` read a string key,
//!   `prefix*->field` a hash field; anything missing or of another type is
//!   nil (an empty string in a stored list).
//!
//! Locking: with GET or a sorting BY pattern the keys read are derived from
//! the data, so the command holds every partition (atomic, like Redis);
//! otherwise only the source's and the destination's.

use collections::{ListValue, LpValue, SetValue, ZsetValue};
use store::{Key, Kind};

use crate::base::errors;
use crate::base::errors::{ERR_NOT_INT, ERR_SYNTAX, ERR_WRONGTYPE};
use crate::base::parse::{eq_ic, parse_i64};
use crate::kernel::coll;
use crate::kernel::ctx::Ctx;
use crate::kernel::notify;
use crate::kernel::spec::{flag, CommandSpec, Docs, KeyPos};

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        acl: &["write", "set", "sortedset", "list", "slow", "dangerous"],
        keys: KeyPos::ONE,
        getkeys: Some(sort_keys),
        docs: Docs::new("O(N+M*log(M)) where N is the number of elements in the list or set to sort, and M the number of returned elements. When the elements are not sorted, complexity is O(N).", "Sort the elements in a list, set or sorted set"),
        ..CommandSpec::new("sort", -2, flag::WRITE | flag::DENYOOM, sort)
    },
    CommandSpec {
        acl: &["read", "set", "sortedset", "list", "slow", "dangerous"],
        keys: KeyPos::ONE,
        getkeys: Some(sort_ro_keys),
        docs: Docs::new("O(N+M*log(M)) where N is the number of elements in the list or set to sort, and M the number of returned elements. When the elements are not sorted, complexity is O(N).", "Sort the elements in a list, set or sorted set. Read-only variant of SORT."),
        ..CommandSpec::new("sort_ro", -2, flag::READONLY, sort_ro)
    },
];

/// SORT's keys: the sorted key and the last STORE destination (LIMIT, GET
/// and BY skip their arguments, as Redis's key extraction does).
fn sort_keys(args: &[&[u8]]) -> Option<Vec<usize>> {
    if args.len() < 2 {
        return None;
    }
    let mut keys = vec![1];
    let mut store = None;
    let mut i = 2;
    while i < args.len() {
        let a = args[i];
        if eq_ic(a, "limit") {
            i += 2;
        } else if eq_ic(a, "get") || eq_ic(a, "by") {
            i += 1;
        } else if eq_ic(a, "store") && i + 1 < args.len() {
            store = Some(i + 1);
        }
        i += 1;
    }
    keys.extend(store);
    Some(keys)
}

fn sort_ro_keys(args: &[&[u8]]) -> Option<Vec<usize>> {
    (args.len() >= 2).then(|| vec![1])
}

// ------------------------------------------------------------ sorting core

/// One element to sort with its sort key.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Item {
    pub elem: Vec<u8>,
    /// Numeric sort key (0 when the BY key is missing).
    pub score: f64,
    /// ALPHA sort key read through a BY pattern (None = missing).
    pub by: Option<Vec<u8>>,
}

impl Item {
    pub fn new(elem: Vec<u8>) -> Item {
        Item {
            elem,
            score: 0.0,
            by: None,
        }
    }
}

/// How items compare (Redis's `sortCompare`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Order {
    pub desc: bool,
    pub alpha: bool,
    /// ALPHA keys come from a BY pattern (`Item::by`).
    pub by_pattern: bool,
    /// Storing: ALPHA compares whole byte strings instead of C strings.
    pub store: bool,
}

/// The bytes `strcoll` sees: up to the first NUL.
fn c_str(s: &[u8]) -> &[u8] {
    match s.iter().position(|&b| b == 0) {
        Some(i) => &s[..i],
        None => s,
    }
}

fn compare(a: &Item, b: &Item, o: Order) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let alpha_cmp = |x: &[u8], y: &[u8]| {
        if o.store {
            x.cmp(y)
        } else {
            c_str(x).cmp(c_str(y))
        }
    };
    let c = if !o.alpha {
        a.score
            .partial_cmp(&b.score)
            .unwrap_or(Ordering::Equal)
            .then_with(|| a.elem.cmp(&b.elem))
    } else if o.by_pattern {
        match (&a.by, &b.by) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some(x), Some(y)) => alpha_cmp(x, y),
        }
    } else {
        alpha_cmp(&a.elem, &b.elem)
    };
    if o.desc {
        c.reverse()
    } else {
        c
    }
}

pub(crate) fn sort_items(items: &mut [Item], o: Order) {
    items.sort_by(|a, b| compare(a, b, o));
}

/// Output positions for `LIMIT offset count` over `len` elements, clamped
/// as Redis does (negative offset = 0, negative count = all the rest).
pub(crate) fn limit_range(offset: i64, count: i64, len: usize) -> std::ops::Range<usize> {
    let len = len as i128;
    let start = (offset as i128).max(0);
    if start >= len {
        return 0..0;
    }
    let end = if count < 0 {
        len - 1
    } else {
        (start + count as i128 - 1).min(len - 1)
    };
    if end < start {
        return 0..0;
    }
    start as usize..end as usize + 1
}

fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// A sort score as Redis reads it: `strtod` over the text up to the first
/// NUL, which must be used up entirely, must not be NaN and must not
/// overflow or underflow inexactly (`ERANGE`). Text with nothing to
/// convert scores 0 only when it is empty. `None` = conversion error.
pub(crate) fn parse_score(s: &[u8]) -> Option<f64> {
    let s = c_str(s);
    if s.is_empty() {
        return Some(0.0);
    }
    let mut i = 0;
    while i < s.len() && is_c_space(s[i]) {
        i += 1;
    }
    let body = &s[i..];
    let (neg, rest) = match body.first() {
        Some(b'-') => (true, &body[1..]),
        Some(b'+') => (false, &body[1..]),
        _ => (false, body),
    };
    let sign = if neg { -1.0 } else { 1.0 };
    let lower: Vec<u8> = rest.iter().map(|b| b.to_ascii_lowercase()).collect();
    if lower == b"inf" || lower == b"infinity" {
        return Some(sign * f64::INFINITY);
    }
    if lower.starts_with(b"nan") {
        return None;
    }
    if lower.len() > 2
        && lower.starts_with(b"0x")
        && (lower[2].is_ascii_hexdigit()
            || (lower[2] == b'.' && lower.get(3).is_some_and(|c| c.is_ascii_hexdigit())))
    {
        return parse_hex(&lower[2..]).map(|v| sign * v);
    }
    // Decimal: digits [. digits] [e [sign] digits], all of the rest.
    let mut j = 0;
    let mut digits = 0;
    let mut nonzero = false;
    while j < rest.len() && rest[j].is_ascii_digit() {
        nonzero |= rest[j] != b'0';
        j += 1;
        digits += 1;
    }
    if j < rest.len() && rest[j] == b'.' {
        j += 1;
        while j < rest.len() && rest[j].is_ascii_digit() {
            nonzero |= rest[j] != b'0';
            j += 1;
            digits += 1;
        }
    }
    if digits == 0 {
        return None;
    }
    if j < rest.len() && (rest[j] == b'e' || rest[j] == b'E') {
        let mut k = j + 1;
        if k < rest.len() && (rest[k] == b'+' || rest[k] == b'-') {
            k += 1;
        }
        let d0 = k;
        while k < rest.len() && rest[k].is_ascii_digit() {
            k += 1;
        }
        if k > d0 {
            j = k;
        }
    }
    if j != rest.len() {
        return None;
    }
    let v: f64 = std::str::from_utf8(rest).ok()?.parse().ok()?;
    if v.is_infinite() || (nonzero && (v == 0.0 || v.is_subnormal())) {
        return None;
    }
    Some(sign * v)
}

/// Hex float digits after "0x": `h[.h][p[sign]d]`, all of the text.
fn parse_hex(s: &[u8]) -> Option<f64> {
    let mut mant: u64 = 0;
    let mut exp: i64 = 0;
    let mut sticky = false;
    let mut j = 0;
    let mut seen_point = false;
    while j < s.len() {
        let c = s[j];
        if c == b'.' && !seen_point {
            seen_point = true;
        } else if let Some(d) = (c as char).to_digit(16) {
            if mant >> 60 == 0 {
                mant = mant * 16 + d as u64;
                if seen_point {
                    exp -= 4;
                }
            } else {
                sticky |= d != 0;
                if !seen_point {
                    exp += 4;
                }
            }
        } else {
            break;
        }
        j += 1;
    }
    if j < s.len() && s[j] == b'p' {
        let mut k = j + 1;
        let neg = match s.get(k) {
            Some(b'-') => {
                k += 1;
                true
            }
            Some(b'+') => {
                k += 1;
                false
            }
            _ => false,
        };
        let d0 = k;
        let mut e: i64 = 0;
        while k < s.len() && s[k].is_ascii_digit() {
            e = (e * 10 + (s[k] - b'0') as i64).min(1 << 20);
            k += 1;
        }
        if k > d0 {
            exp += if neg { -e } else { e };
            j = k;
        }
    }
    if j != s.len() {
        return None;
    }
    if mant == 0 {
        return Some(0.0);
    }
    // Scale in steps that stay exact until the final result.
    let mut v = mant as f64;
    let inexact_mant = sticky || (v as u64) != mant;
    let mut e = exp;
    while e > 0 {
        let step = e.min(1000);
        v *= 2f64.powi(step as i32);
        e -= step;
    }
    while e < 0 {
        let step = (-e).min(1000);
        v /= 2f64.powi(step as i32);
        e += step;
    }
    if v.is_infinite() {
        return None;
    }
    if v == 0.0 || v.is_subnormal() {
        // Underflow is an error only when the result is inexact.
        let back = v * 2f64.powi(1074);
        let exact = !inexact_mant && exp >= -1074 - 64 && {
            let shift = -1074 - exp;
            shift <= 0 || (mant.trailing_zeros() as i64 >= shift && back != 0.0)
        };
        if !exact {
            return None;
        }
    }
    Some(v)
}

/// The key a BY/GET pattern names for `elem`: `(key, hash field)`, or None
/// when the pattern has no `*` (a constant, e.g. `nosort`). `#` is handled
/// by the caller.
pub(crate) fn pattern_key(pattern: &[u8], elem: &[u8]) -> Option<(Vec<u8>, Option<Vec<u8>>)> {
    let cp = c_str(pattern);
    let star = cp.iter().position(|&b| b == b'*')?;
    let field = cp[star + 1..]
        .windows(2)
        .position(|w| w == b"->")
        .map(|p| star + 1 + p)
        .filter(|&f| f + 2 < cp.len());
    let (key_end, field) = match field {
        Some(f) => (f, Some(pattern[f + 2..].to_vec())),
        None => (pattern.len(), None),
    };
    let mut key = Vec::with_capacity(key_end + elem.len());
    key.extend_from_slice(&pattern[..star]);
    key.extend_from_slice(elem);
    key.extend_from_slice(&pattern[star + 1..key_end]);
    Some((key, field))
}

// ---------------------------------------------------------------- command

struct Opts<'a> {
    order: Order,
    limit: (i64, i64),
    store: Option<&'a [u8]>,
    by: Option<&'a [u8]>,
    dontsort: bool,
    gets: Vec<&'a [u8]>,
}

fn parse_opts<'a>(ctx: &mut Ctx, args: &[&'a [u8]], readonly: bool) -> Option<Opts<'a>> {
    let mut o = Opts {
        order: Order::default(),
        limit: (0, -1),
        store: None,
        by: None,
        dontsort: false,
        gets: Vec::new(),
    };
    // Redis 7.0: BY with a pattern and GET read keys no key spec names, so
    // they need read access to every key.
    let full_access =
        crate::services::acl::full_key_read_access(ctx.srv, ctx.client, ctx.cmd_index, args);
    let mut j = 2;
    while j < args.len() {
        let left = args.len() - j - 1;
        let a = args[j];
        if eq_ic(a, "asc") {
            o.order.desc = false;
        } else if eq_ic(a, "desc") {
            o.order.desc = true;
        } else if eq_ic(a, "alpha") {
            o.order.alpha = true;
        } else if eq_ic(a, "limit") && left >= 2 {
            match (parse_i64(args[j + 1]), parse_i64(args[j + 2])) {
                (Some(s), Some(c)) => o.limit = (s, c),
                _ => {
                    ctx.error(ERR_NOT_INT);
                    return None;
                }
            }
            j += 2;
        } else if !readonly && eq_ic(a, "store") && left >= 1 {
            o.store = Some(args[j + 1]);
            j += 1;
        } else if eq_ic(a, "by") && left >= 1 {
            o.by = Some(args[j + 1]);
            o.dontsort = !c_str(args[j + 1]).contains(&b'*');
            if !o.dontsort && !full_access {
                ctx.error("ERR BY option of SORT denied due to insufficient ACL permissions.");
                return None;
            }
            j += 1;
        } else if eq_ic(a, "get") && left >= 1 {
            if !full_access {
                ctx.error("ERR GET option of SORT denied due to insufficient ACL permissions.");
                return None;
            }
            o.gets.push(args[j + 1]);
            j += 1;
        } else {
            ctx.error(ERR_SYNTAX);
            return None;
        }
        j += 1;
    }
    Some(o)
}

/// Reads a BY/GET pattern's value for `elem` (`#` = the element itself).
fn lookup(
    g: &mut store::keyspace::MultiGuard<'_>,
    db: usize,
    now: u64,
    pattern: &[u8],
    elem: &[u8],
) -> Option<Vec<u8>> {
    if c_str(pattern) == b"#" {
        return Some(elem.to_vec());
    }
    let (key, field) = pattern_key(pattern, elem)?;
    let k = Key::new(&key);
    let e = g.part(&k).get_read(db, &k, now)?;
    match field {
        Some(f) => {
            let h = e.value().as_hash()?;
            h.get(&f).map(|v| v.to_vec())
        }
        None => e.value().string().map(|s| s.to_vec()),
    }
}

fn lp_vec(v: LpValue<'_>) -> Vec<u8> {
    v.to_vec()
}

/// The elements of the sorted key: None = WRONGTYPE. `native` = the
/// type keeps an order (list, zset).
fn load(
    g: &mut store::keyspace::MultiGuard<'_>,
    db: usize,
    now: u64,
    key: &Key,
) -> Result<(Vec<Vec<u8>>, Kind), ()> {
    let Some(e) = g.part(key).get_read(db, key, now) else {
        return Ok((Vec::new(), Kind::List));
    };
    if matches!(e.value().as_zset(), Some(ZsetValue::Listpack(_))) {
        // Redis 7.0 converts a listpack zset to a skiplist for good before
        // sorting it (SORT_RO too; after the options parse, so a syntax
        // error leaves it alone): OBJECT ENCODING and DUMP show it after.
        if let Some(z) = e.zset_mut() {
            z.convert_to_tree();
        }
    }
    let v = e.value();
    if let Some(l) = v.as_list() {
        return Ok((l.to_vecs(), Kind::List));
    }
    if let Some(s) = v.as_set() {
        let elems = match s {
            SetValue::IntSet(s) => s.iter().map(|i| i.to_string().into_bytes()).collect(),
            SetValue::Listpack(s) => s.iter().map(lp_vec).collect(),
            SetValue::Table(s) => s.iter().map(|m| m.to_vec()).collect(),
        };
        return Ok((elems, Kind::Set));
    }
    if let Some(z) = v.as_zset() {
        let elems = match z {
            ZsetValue::Listpack(z) => z.iter().map(|(m, _)| lp_vec(m)).collect(),
            ZsetValue::Tree(z) => {
                let mut out = Vec::with_capacity(z.len());
                z.for_each_in(0, z.len(), false, |m, _| {
                    out.push(m.to_vec());
                    true
                });
                out
            }
        };
        return Ok((elems, Kind::ZSet));
    }
    Err(())
}

fn sort(ctx: &mut Ctx, args: &[&[u8]]) {
    sort_generic(ctx, args, false)
}

fn sort_ro(ctx: &mut Ctx, args: &[&[u8]]) {
    sort_generic(ctx, args, true)
}

fn sort_generic(ctx: &mut Ctx, args: &[&[u8]], readonly: bool) {
    let Some(mut o) = parse_opts(ctx, args, readonly) else {
        return;
    };
    let src = Key::new(args[1]);
    let dst = o.store.map(Key::new);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let patterns = !o.gets.is_empty() || (o.by.is_some() && !o.dontsort);
    let mut g = if patterns {
        srv.keyspace.lock_all()
    } else {
        let mut keys = vec![Key::new(args[1])];
        keys.extend(o.store.map(Key::new));
        srv.keyspace.lock_keys(&keys)
    };
    let Ok((elems, kind)) = load(&mut g, db, now, &src) else {
        return ctx.error(ERR_WRONGTYPE);
    };
    if o.dontsort && kind == Kind::Set && o.store.is_some() {
        // Storing a set: sort it so the stored list is deterministic.
        o.dontsort = false;
        o.order.alpha = true;
        o.by = None;
    }
    o.order.by_pattern = o.by.is_some();
    o.order.store = o.store.is_some();
    let range = limit_range(o.limit.0, o.limit.1, elems.len());
    let mut items: Vec<Item> = elems.into_iter().map(Item::new).collect();
    let mut conversion_error = false;
    if o.dontsort {
        if o.order.desc && kind != Kind::Set {
            items.reverse();
        }
    } else {
        for it in &mut items {
            let byval = match o.by {
                Some(p) => match lookup(&mut g, db, now, p, &it.elem) {
                    Some(v) => v,
                    None => continue,
                },
                None => {
                    if !o.order.alpha {
                        match parse_score(&it.elem) {
                            Some(s) => it.score = s,
                            None => conversion_error = true,
                        }
                    }
                    continue;
                }
            };
            if o.order.alpha {
                it.by = Some(byval);
            } else {
                match parse_score(&byval) {
                    Some(s) => it.score = s,
                    None => conversion_error = true,
                }
            }
        }
        sort_items(&mut items, o.order);
    }
    if conversion_error {
        return ctx.error(errors::ERR_ONE_MORE_SCORES_CANNOT_CONVERTED_INTO_DOUBLE);
    }
    let picked = &items[range];
    let Some(dst) = dst else {
        let per = o.gets.len().max(1);
        ctx.out.array_len(picked.len() * per);
        for it in picked {
            if o.gets.is_empty() {
                ctx.out.bulk(&it.elem);
            }
            for p in &o.gets {
                match lookup(&mut g, db, now, p, &it.elem) {
                    Some(v) => ctx.out.bulk(&v),
                    None => ctx.out.null_bulk(),
                }
            }
        }
        return;
    };
    let mut list = ListValue::new(&ctx.settings.limits);
    for it in picked {
        if o.gets.is_empty() {
            list.ql.push_back(&it.elem);
        }
        for p in &o.gets {
            let v = lookup(&mut g, db, now, p, &it.elem).unwrap_or_default();
            list.ql.push_back(&v);
        }
    }
    let n = list.len();
    let existed = coll::store_value(g.part(&dst), db, &dst, now, list);
    drop(g);
    if n > 0 {
        ctx.notify(notify::LIST, "sortstore", o.store.unwrap());
    } else if existed {
        ctx.notify(notify::GENERIC, "del", o.store.unwrap());
    }
    ctx.out.int(n as i64);
}

#[cfg(test)]
mod tests;
