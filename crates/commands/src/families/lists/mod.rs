//! List commands (Redis 7.0): LPUSH/RPUSH(X), LPOP/RPOP (with count), LMPOP,
//! LMOVE/RPOPLPUSH, LINDEX, LSET, LINSERT, LLEN, LRANGE, LTRIM, LREM, LPOS.
//!
//! Values are [`ListValue`]s (a quicklist; OBJECT ENCODING is always
//! `quicklist`). The keyspace never holds an empty list: every removal that
//! empties one deletes the key before the partition lock is released and
//! fires `del` after the command's own event, as Redis does.
//!
//! The cores of pop and move ([`pop_elems`], [`mpop_locked`],
//! [`move_elem`]) and LMPOP's argument parsing ([`parse_mpop`]) are
//! `pub(crate)` so the blocking variants (BLPOP, BRPOP, BLMOVE,
//! BRPOPLPUSH, BLMPOP) can share them; [`notify_pop`] fires the events.
//!
//! DEBUG QUICKLIST-PACKED-THRESHOLD and DEBUG QUICKLIST are this family's
//! ([`debug`]).
//!
//! Argument checks happen in Redis's order (e.g. LRANGE parses its indexes
//! before the lookup, LINDEX after it), so a bad argument on a missing key
//! answers as Redis does.

pub mod blocking;
pub mod debug;

pub use debug::DEBUG;

use collections::value::list::{range_window, End};
use collections::{ListValue, LpValue};
use store::keyspace::{MultiGuard, Partition};
use store::{CompactValue, Key};

use crate::base::errors;
use crate::base::errors::{ERR_NOT_INT, ERR_SYNTAX, ERR_WRONGTYPE};
use crate::base::parse::{eq_ic, parse_i64};
use crate::kernel::coll::{self, WrongType};
use crate::kernel::ctx::Ctx;
use crate::kernel::notify;
use crate::kernel::spec::{flag, BeginSearch, CommandSpec, Docs, FindKeys, KeyPos, KeySpec};

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        acl: &["read", "list", "slow"],
        keys: KeyPos::range(1, 1, 1),
        docs: Docs::new("O(N) where N is the number of elements to traverse to get to the element at index. This makes asking for the first or the last element of the list O(1).", "Get an element from a list by its index"),
        ..CommandSpec::new("lindex", 3, flag::READONLY, lindex)
    },
    CommandSpec {
        acl: &["write", "list", "slow"],
        keys: KeyPos::range(1, 1, 1),
        docs: Docs::new("O(N) where N is the number of elements to traverse before seeing the value pivot. This means that inserting somewhere on the left end on the list (head) can be considered O(1) and inserting somewhere on the right end (tail) is O(N).", "Insert an element before or after another element in a list"),
        ..CommandSpec::new("linsert", 5, flag::WRITE | flag::DENYOOM, linsert)
    },
    CommandSpec {
        acl: &["read", "list", "fast"],
        keys: KeyPos::range(1, 1, 1),
        docs: Docs::new("O(1)", "Get the length of a list"),
        ..CommandSpec::new("llen", 2, flag::READONLY | flag::FAST, llen)
    },
    CommandSpec {
        acl: &["write", "list", "slow"],
        keys: KeyPos::range(1, 2, 1),
        docs: Docs::new("O(1)", "Pop an element from a list, push it to another list and return it"),
        ..CommandSpec::new("lmove", 5, flag::WRITE | flag::DENYOOM, lmove)
    },
    CommandSpec {
        acl: &["write", "list", "slow"],
        keys: KeyPos::range(0, 0, 0),
        getkeys: Some(lmpop_keys),
        docs: Docs::new("O(N+M) where N is the number of provided keys and M is the number of elements returned.", "Pop elements from a list"),
        ..CommandSpec::new("lmpop", -4, flag::WRITE | flag::MOVABLEKEYS, lmpop)
    },
    CommandSpec {
        acl: &["write", "list", "fast"],
        keys: KeyPos::range(1, 1, 1),
        docs: Docs::new("O(N) where N is the number of elements returned", "Remove and get the first elements in a list"),
        ..CommandSpec::new("lpop", -2, flag::WRITE | flag::FAST, lpop)
    },
    CommandSpec {
        acl: &["read", "list", "slow"],
        keys: KeyPos::range(1, 1, 1),
        docs: Docs::new("O(N) where N is the number of elements in the list, for the average case. When searching for elements near the head or the tail of the list, or when the MAXLEN option is provided, the command may run in constant time.", "Return the index of matching elements on a list"),
        ..CommandSpec::new("lpos", -3, flag::READONLY, lpos)
    },
    CommandSpec {
        acl: &["write", "list", "fast"],
        keys: KeyPos::range(1, 1, 1),
        docs: Docs::new("O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.", "Prepend one or multiple elements to a list"),
        ..CommandSpec::new("lpush", -3, flag::WRITE | flag::DENYOOM | flag::FAST, lpush)
    },
    CommandSpec {
        acl: &["write", "list", "fast"],
        keys: KeyPos::range(1, 1, 1),
        docs: Docs::new("O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.", "Prepend an element to a list, only if the list exists"),
        ..CommandSpec::new("lpushx", -3, flag::WRITE | flag::DENYOOM | flag::FAST, lpushx)
    },
    CommandSpec {
        acl: &["read", "list", "slow"],
        keys: KeyPos::range(1, 1, 1),
        docs: Docs::new("O(S+N) where S is the distance of start offset from HEAD for small lists, from nearest end (HEAD or TAIL) for large lists; and N is the number of elements in the specified range.", "Get a range of elements from a list"),
        ..CommandSpec::new("lrange", 4, flag::READONLY, lrange)
    },
    CommandSpec {
        acl: &["write", "list", "slow"],
        keys: KeyPos::range(1, 1, 1),
        docs: Docs::new("O(N+M) where N is the length of the list and M is the number of elements removed.", "Remove elements from a list"),
        ..CommandSpec::new("lrem", 4, flag::WRITE, lrem)
    },
    CommandSpec {
        acl: &["write", "list", "slow"],
        keys: KeyPos::range(1, 1, 1),
        docs: Docs::new("O(N) where N is the length of the list. Setting either the first or the last element of the list is O(1).", "Set the value of an element in a list by its index"),
        ..CommandSpec::new("lset", 4, flag::WRITE | flag::DENYOOM, lset)
    },
    CommandSpec {
        acl: &["write", "list", "slow"],
        keys: KeyPos::range(1, 1, 1),
        docs: Docs::new("O(N) where N is the number of elements to be removed by the operation.", "Trim a list to the specified range"),
        ..CommandSpec::new("ltrim", 4, flag::WRITE, ltrim)
    },
    CommandSpec {
        acl: &["write", "list", "fast"],
        keys: KeyPos::range(1, 1, 1),
        docs: Docs::new("O(N) where N is the number of elements returned", "Remove and get the last elements in a list"),
        ..CommandSpec::new("rpop", -2, flag::WRITE | flag::FAST, rpop)
    },
    CommandSpec {
        acl: &["write", "list", "slow"],
        keys: KeyPos::range(1, 2, 1),
        docs: Docs::new("O(1)", "Remove the last element in a list, prepend it to another list and return it"),
        ..CommandSpec::new("rpoplpush", 3, flag::WRITE | flag::DENYOOM, rpoplpush)
    },
    CommandSpec {
        acl: &["write", "list", "fast"],
        keys: KeyPos::range(1, 1, 1),
        docs: Docs::new("O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.", "Append one or multiple elements to a list"),
        ..CommandSpec::new("rpush", -3, flag::WRITE | flag::DENYOOM | flag::FAST, rpush)
    },
    CommandSpec {
        acl: &["write", "list", "fast"],
        keys: KeyPos::range(1, 1, 1),
        docs: Docs::new("O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.", "Append an element to a list, only if the list exists"),
        ..CommandSpec::new("rpushx", -3, flag::WRITE | flag::DENYOOM | flag::FAST, rpushx)
    },
];

/// Key positions of LMPOP (`numkeys` then the keys).
fn lmpop_keys(args: &[&[u8]]) -> Option<Vec<usize>> {
    COMMANDS_LMPOP_SPEC.find(args)
}

const COMMANDS_LMPOP_SPEC: KeySpec = KeySpec {
    notes: "",
    flags: &["RW", "access", "delete"],
    begin: BeginSearch::Index(1),
    find: FindKeys::Keynum {
        keynumidx: 0,
        firstkey: 1,
        keystep: 1,
    },
};

/// `LEFT`/`RIGHT` (any case).
fn parse_end(a: &[u8]) -> Option<End> {
    if eq_ic(a, "left") {
        Some(End::Head)
    } else if eq_ic(a, "right") {
        Some(End::Tail)
    } else {
        None
    }
}

fn reply_value(ctx: &mut Ctx, v: LpValue<'_>) {
    match v {
        LpValue::Str(s) => ctx.out.bulk(s),
        LpValue::Int(i) => ctx.out.bulk_from_int(i),
    }
}

/// Elements popped by [`pop_elems`] / [`mpop_locked`].
#[derive(Debug)]
pub(crate) struct Popped {
    /// In pop order (LPOP: head first; RPOP: tail first).
    pub elems: Vec<Vec<u8>>,
    /// The list became empty and its key was deleted (fire `del`).
    pub deleted: bool,
}

/// Core of LPOP/RPOP/LMPOP (and their blocking forms): pops up to `count`
/// (>= 1) elements from `end` of the list at `key`, deleting the key when it
/// becomes empty. `Ok(None)` when the key does not exist; `Err(WrongType)`
/// when it is not a list (nothing changed). Events are the caller's
/// ([`notify_pop`]).
pub(crate) fn pop_elems(
    p: &mut Partition,
    db: usize,
    key: &Key,
    now_ms: u64,
    end: End,
    count: usize,
) -> Result<Option<Popped>, WrongType> {
    let Some(l) = coll::write::<ListValue>(p, db, key, now_ms)? else {
        return Ok(None);
    };
    let elems = l.pop_n(end, count);
    let deleted = l.is_empty();
    if deleted {
        p.remove(db, key, now_ms);
    }
    Ok(Some(Popped { elems, deleted }))
}

/// Fires `lpop`/`rpop` for `key`, then `del` when the pop emptied it.
pub(crate) fn notify_pop(ctx: &mut Ctx, key: &[u8], end: End, deleted: bool) {
    let ev = if end == End::Head { "lpop" } else { "rpop" };
    ctx.notify(notify::LIST, ev, key);
    if deleted {
        ctx.notify(notify::GENERIC, "del", key);
    }
}

/// Parsed LMPOP/BLMPOP arguments.
#[derive(Debug, Clone)]
pub(crate) struct MpopArgs {
    /// Argument indexes of the keys.
    pub keys: std::ops::Range<usize>,
    pub end: End,
    pub count: usize,
}

/// Parses `numkeys key... LEFT|RIGHT [COUNT count]` starting with `numkeys`
/// at `args[numkeys_idx]` (1 for LMPOP, 2 for BLMPOP), replying with
/// Redis's error and returning `None` when malformed.
pub(crate) fn parse_mpop(ctx: &mut Ctx, args: &[&[u8]], numkeys_idx: usize) -> Option<MpopArgs> {
    let numkeys = match parse_i64(args[numkeys_idx]) {
        Some(n) if n >= 1 => n as u64,
        _ => {
            ctx.error(errors::ERR_NUMKEYS_SHOULD_GREATER_THAN_0);
            return None;
        }
    };
    let where_idx = (numkeys_idx as u64 + 1).saturating_add(numkeys);
    if where_idx >= args.len() as u64 {
        ctx.error(ERR_SYNTAX);
        return None;
    }
    let where_idx = where_idx as usize;
    let Some(end) = parse_end(args[where_idx]) else {
        ctx.error(ERR_SYNTAX);
        return None;
    };
    let mut count = None;
    let mut j = where_idx + 1;
    while j < args.len() {
        if count.is_none() && eq_ic(args[j], "count") && j + 1 < args.len() {
            j += 1;
            match parse_i64(args[j]) {
                Some(n) if n >= 1 => count = Some(n as usize),
                _ => {
                    ctx.error(errors::ERR_COUNT_SHOULD_GREATER_THAN_0);
                    return None;
                }
            }
        } else {
            ctx.error(ERR_SYNTAX);
            return None;
        }
        j += 1;
    }
    Some(MpopArgs {
        keys: numkeys_idx + 1..where_idx,
        end,
        count: count.unwrap_or(1),
    })
}

/// Core of LMPOP/BLMPOP: pops from the first non-empty list among `keys`
/// (all locked in `g`). Returns the index in `keys` of the key popped from,
/// `Ok(None)` when none exists, `Err` at the first key of another type met
/// before a list (as Redis).
pub(crate) fn mpop_locked(
    g: &mut MultiGuard<'_>,
    db: usize,
    keys: &[Key],
    now_ms: u64,
    end: End,
    count: usize,
) -> Result<Option<(usize, Popped)>, WrongType> {
    for (i, k) in keys.iter().enumerate() {
        if let Some(p) = pop_elems(g.part(k), db, k, now_ms, end, count)? {
            return Ok(Some((i, p)));
        }
    }
    Ok(None)
}

/// Result of [`move_elem`].
#[derive(Debug)]
pub(crate) struct Moved {
    pub elem: Vec<u8>,
    /// The source became empty and was deleted (fire `del` on it).
    pub src_deleted: bool,
}

/// Core of LMOVE/RPOPLPUSH (and BLMOVE/BRPOPLPUSH): pops from `from` of
/// `src` and pushes to `to` of `dst` (created with `limits` if missing).
/// `Ok(None)` when `src` does not exist (the destination is not looked at);
/// `Err(WrongType)` when either key holds another type (nothing changed).
/// Both keys' partitions must be locked in `g`. Events are the caller's
/// ([`notify_move`]).
#[allow(clippy::too_many_arguments)]
pub(crate) fn move_elem(
    g: &mut MultiGuard<'_>,
    db: usize,
    src: &Key,
    dst: &Key,
    now_ms: u64,
    from: End,
    to: End,
    limits: &collections::Limits,
) -> Result<Option<Moved>, WrongType> {
    if !coll::check::<ListValue>(g.part(src), db, src, now_ms)? {
        return Ok(None);
    }
    if src.bytes == dst.bytes {
        let l = coll::write::<ListValue>(g.part(src), db, src, now_ms)?.expect("checked");
        let elem = l.pop(from).expect("lists are never empty");
        l.push(to, &elem);
        return Ok(Some(Moved {
            elem,
            src_deleted: false,
        }));
    }
    coll::check::<ListValue>(g.part(dst), db, dst, now_ms)?;
    let p = pop_elems(g.part(src), db, src, now_ms, from, 1)?.expect("checked");
    let elem = p.elems.into_iter().next().expect("lists are never empty");
    let (l, _) = coll::write_or_create(g.part(dst), db, dst, now_ms, || ListValue::new(limits))?;
    l.push(to, &elem);
    Ok(Some(Moved {
        elem,
        src_deleted: p.deleted,
    }))
}

/// LMOVE's events as Redis fires them: push on the destination, pop on the
/// source, then `del` when the source was emptied.
pub(crate) fn notify_move(
    ctx: &mut Ctx,
    src: &[u8],
    dst: &[u8],
    from: End,
    to: End,
    deleted: bool,
) {
    let ev = if to == End::Head { "lpush" } else { "rpush" };
    ctx.notify(notify::LIST, ev, dst);
    notify_pop(ctx, src, from, deleted);
}

enum Pushed {
    Len(usize),
    WrongType,
    Missing,
}

fn push_generic(ctx: &mut Ctx, args: &[&[u8]], end: End, xx: bool) {
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    // One lookup when the key exists: push straight into the entry.
    let r = match p.get(db, &k, now) {
        Some(e) => match e.list_mut() {
            Some(l) => {
                for a in &args[2..] {
                    l.push(end, a);
                }
                Pushed::Len(l.len())
            }
            None => Pushed::WrongType,
        },
        None => Pushed::Missing,
    };
    let len = match r {
        Pushed::Len(n) => n,
        Pushed::WrongType => {
            drop(p);
            return ctx.error(ERR_WRONGTYPE);
        }
        Pushed::Missing if xx => {
            drop(p);
            return ctx.out.int(0);
        }
        Pushed::Missing => {
            let mut l = ListValue::new(&ctx.settings.limits);
            for a in &args[2..] {
                l.push(end, a);
            }
            let n = l.len();
            p.insert(db, &k, CompactValue::from_list(l), None, now);
            n
        }
    };
    drop(p);
    ctx.out.int(len as i64);
    let ev = if end == End::Head { "lpush" } else { "rpush" };
    ctx.notify(notify::LIST, ev, args[1]);
}

fn lpush(ctx: &mut Ctx, args: &[&[u8]]) {
    push_generic(ctx, args, End::Head, false)
}

fn rpush(ctx: &mut Ctx, args: &[&[u8]]) {
    push_generic(ctx, args, End::Tail, false)
}

fn lpushx(ctx: &mut Ctx, args: &[&[u8]]) {
    push_generic(ctx, args, End::Head, true)
}

fn rpushx(ctx: &mut Ctx, args: &[&[u8]]) {
    push_generic(ctx, args, End::Tail, true)
}

fn pop_generic(ctx: &mut Ctx, args: &[&[u8]], end: End) {
    if args.len() > 3 {
        return ctx.wrong_arity();
    }
    let count = if args.len() == 3 {
        match parse_i64(args[2]) {
            Some(n) if n >= 0 => Some(n as usize),
            _ => return ctx.error(errors::ERR_VALUE_OUT_OF_RANGE_MUST_POSITIVE),
        }
    } else {
        None
    };
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    if count == Some(0) {
        // Redis answers before popping: a null array for a missing key,
        // an empty array for a list.
        let r = coll::check::<ListValue>(&mut p, db, &k, now);
        drop(p);
        return match r {
            Err(WrongType) => ctx.error(ERR_WRONGTYPE),
            Ok(false) => ctx.out.null_array(),
            Ok(true) => ctx.out.array_len(0),
        };
    }
    let r = pop_elems(&mut p, db, &k, now, end, count.unwrap_or(1));
    drop(p);
    match r {
        Err(WrongType) => ctx.error(ERR_WRONGTYPE),
        Ok(None) if count.is_some() => ctx.out.null_array(),
        Ok(None) => ctx.out.null_bulk(),
        Ok(Some(popped)) => {
            if count.is_some() {
                ctx.bulk_array(&popped.elems);
            } else {
                ctx.out.bulk(&popped.elems[0]);
            }
            notify_pop(ctx, args[1], end, popped.deleted);
        }
    }
}

fn lpop(ctx: &mut Ctx, args: &[&[u8]]) {
    pop_generic(ctx, args, End::Head)
}

fn rpop(ctx: &mut Ctx, args: &[&[u8]]) {
    pop_generic(ctx, args, End::Tail)
}

fn lmpop(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(m) = parse_mpop(ctx, args, 1) else {
        return;
    };
    let keys: Vec<Key> = args[m.keys.clone()].iter().map(|a| Key::new(a)).collect();
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut g = srv.keyspace.lock_keys(&keys);
    let r = mpop_locked(&mut g, db, &keys, now, m.end, m.count);
    drop(g);
    match r {
        Err(WrongType) => ctx.error(ERR_WRONGTYPE),
        Ok(None) => ctx.out.null_array(),
        Ok(Some((i, popped))) => {
            let key = args[m.keys.start + i];
            ctx.out.array_len(2);
            ctx.out.bulk(key);
            ctx.bulk_array(&popped.elems);
            notify_pop(ctx, key, m.end, popped.deleted);
        }
    }
}

fn lmove_generic(ctx: &mut Ctx, args: &[&[u8]], from: End, to: End) {
    let keys = [Key::new(args[1]), Key::new(args[2])];
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut g = srv.keyspace.lock_keys(&keys);
    let r = move_elem(
        &mut g,
        db,
        &keys[0],
        &keys[1],
        now,
        from,
        to,
        &ctx.settings.limits,
    );
    drop(g);
    match r {
        Err(WrongType) => ctx.error(ERR_WRONGTYPE),
        Ok(None) => ctx.out.null_bulk(),
        Ok(Some(m)) => {
            ctx.out.bulk(&m.elem);
            notify_move(ctx, args[1], args[2], from, to, m.src_deleted);
        }
    }
}

fn lmove(ctx: &mut Ctx, args: &[&[u8]]) {
    let (Some(from), Some(to)) = (parse_end(args[3]), parse_end(args[4])) else {
        return ctx.syntax_error();
    };
    lmove_generic(ctx, args, from, to)
}

fn rpoplpush(ctx: &mut Ctx, args: &[&[u8]]) {
    lmove_generic(ctx, args, End::Tail, End::Head)
}

fn llen(ctx: &mut Ctx, args: &[&[u8]]) {
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let r = coll::read::<ListValue>(&mut p, db, &k, now).map(|l| l.map_or(0, |l| l.len()));
    drop(p);
    match r {
        Ok(n) => ctx.out.int(n as i64),
        Err(WrongType) => ctx.error(ERR_WRONGTYPE),
    }
}

fn lindex(ctx: &mut Ctx, args: &[&[u8]]) {
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    match coll::read::<ListValue>(&mut p, db, &k, now) {
        Err(WrongType) => ctx.error(ERR_WRONGTYPE),
        Ok(None) => ctx.out.null_bulk(),
        Ok(Some(l)) => match parse_i64(args[2]) {
            None => ctx.error(ERR_NOT_INT),
            Some(i) => {
                if l.index_with(i, |v| reply_value(ctx, v)).is_none() {
                    ctx.out.null_bulk();
                }
            }
        },
    }
}

fn lset(ctx: &mut Ctx, args: &[&[u8]]) {
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let err = match coll::write::<ListValue>(&mut p, db, &k, now) {
        Err(WrongType) => Some(ERR_WRONGTYPE),
        Ok(None) => Some(errors::ERR_NO_SUCH_KEY),
        Ok(Some(l)) => match parse_i64(args[2]) {
            None => Some(ERR_NOT_INT),
            Some(i) if !l.set(i, args[3]) => Some(errors::ERR_INDEX_OUT_OF_RANGE),
            Some(_) => None,
        },
    };
    drop(p);
    if let Some(e) = err {
        return ctx.error(e);
    }
    ctx.notify(notify::LIST, "lset", args[1]);
    ctx.ok();
}

fn linsert(ctx: &mut Ctx, args: &[&[u8]]) {
    let after = if eq_ic(args[2], "after") {
        true
    } else if eq_ic(args[2], "before") {
        false
    } else {
        return ctx.syntax_error();
    };
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let r = coll::write::<ListValue>(&mut p, db, &k, now)
        .map(|l| l.map(|l| l.insert(args[3], args[4], after).then(|| l.len())));
    drop(p);
    match r {
        Err(WrongType) => ctx.error(ERR_WRONGTYPE),
        Ok(None) => ctx.out.int(0),
        Ok(Some(None)) => ctx.out.int(-1),
        Ok(Some(Some(n))) => {
            ctx.notify(notify::LIST, "linsert", args[1]);
            ctx.out.int(n as i64);
        }
    }
}

/// Parses two index arguments (LRANGE, LTRIM) before the lookup, as Redis.
fn parse_two(ctx: &mut Ctx, a: &[u8], b: &[u8]) -> Option<(i64, i64)> {
    let a = ctx.parse_i64(a)?;
    let b = ctx.parse_i64(b)?;
    Some((a, b))
}

fn lrange(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some((start, end)) = parse_two(ctx, args[2], args[3]) else {
        return;
    };
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    match coll::read::<ListValue>(&mut p, db, &k, now) {
        Err(WrongType) => ctx.error(ERR_WRONGTYPE),
        Ok(None) => ctx.out.array_len(0),
        Ok(Some(l)) => {
            let n = range_window(l.len(), start, end).map_or(0, |w| w.1);
            ctx.out.array_len(n);
            l.for_each_in_range(start, end, |v| reply_value(ctx, v));
        }
    }
}

fn ltrim(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some((start, end)) = parse_two(ctx, args[2], args[3]) else {
        return;
    };
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let r = match coll::write::<ListValue>(&mut p, db, &k, now) {
        Err(e) => Err(e),
        Ok(None) => Ok(None),
        Ok(Some(l)) => {
            l.trim(start, end);
            Ok(Some(coll::remove_if_empty::<ListValue>(
                &mut p, db, &k, now,
            )))
        }
    };
    drop(p);
    match r {
        Err(WrongType) => ctx.error(ERR_WRONGTYPE),
        Ok(None) => ctx.ok(),
        Ok(Some(deleted)) => {
            ctx.notify(notify::LIST, "ltrim", args[1]);
            if deleted {
                ctx.notify(notify::GENERIC, "del", args[1]);
            }
            ctx.ok();
        }
    }
}

fn lrem(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(count) = ctx.parse_i64(args[2]) else {
        return;
    };
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let r = match coll::write::<ListValue>(&mut p, db, &k, now) {
        Err(e) => Err(e),
        Ok(None) => Ok((0, false)),
        Ok(Some(l)) => {
            let n = l.remove(count, args[3]);
            Ok((n, coll::remove_if_empty::<ListValue>(&mut p, db, &k, now)))
        }
    };
    drop(p);
    match r {
        Err(WrongType) => ctx.error(ERR_WRONGTYPE),
        Ok((n, deleted)) => {
            if n > 0 {
                ctx.notify(notify::LIST, "lrem", args[1]);
            }
            if deleted {
                ctx.notify(notify::GENERIC, "del", args[1]);
            }
            ctx.out.int(n as i64);
        }
    }
}

fn lpos(ctx: &mut Ctx, args: &[&[u8]]) {
    let (mut rank, mut count, mut maxlen) = (1i64, None::<usize>, 0usize);
    let mut j = 3;
    while j < args.len() {
        let more = j + 1 < args.len();
        if eq_ic(args[j], "rank") && more {
            j += 1;
            let Some(r) = ctx.parse_i64(args[j]) else {
                return;
            };
            if r == 0 {
                return ctx.error(errors::ERR_RANK_ZERO);
            }
            rank = r;
        } else if eq_ic(args[j], "count") && more {
            j += 1;
            match parse_i64(args[j]) {
                Some(n) if n >= 0 => count = Some(n as usize),
                _ => return ctx.error(errors::ERR_COUNT_CANNOT_NEGATIVE),
            }
        } else if eq_ic(args[j], "maxlen") && more {
            j += 1;
            match parse_i64(args[j]) {
                Some(n) if n >= 0 => maxlen = n as usize,
                _ => return ctx.error(errors::ERR_MAXLEN_CANNOT_NEGATIVE),
            }
        } else {
            return ctx.syntax_error();
        }
        j += 1;
    }
    if rank == i64::MIN {
        // Redis negates the rank in a long: LONG_MIN stays negative, so
        // every match from the tail qualifies, as with rank -1.
        rank = -1;
    }
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let r = coll::read::<ListValue>(&mut p, db, &k, now)
        .map(|l| l.map(|l| l.positions(args[2], rank, count.unwrap_or(1), maxlen)));
    drop(p);
    match (r, count) {
        (Err(WrongType), _) => ctx.error(ERR_WRONGTYPE),
        (Ok(None), Some(_)) => ctx.out.array_len(0),
        (Ok(None), None) => ctx.out.null_bulk(),
        (Ok(Some(v)), Some(_)) => {
            ctx.out.array_len(v.len());
            for i in v {
                ctx.out.int(i as i64);
            }
        }
        (Ok(Some(v)), None) => match v.first() {
            Some(&i) => ctx.out.int(i as i64),
            None => ctx.out.null_bulk(),
        },
    }
}
