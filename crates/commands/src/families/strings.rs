//! String commands: GET, SET and friends, counters, ranges, LCS.
//!
//! Values live in the keyspace's compact objects (`store::CompactValue`):
//! integers and short strings inline, longer ones in one heap block. Replies
//! and error texts follow Redis 7.0.

use resp::LongDouble;
use store::keyspace::Ttl;
use store::{CompactValue, Key};

use crate::base::errors;
use crate::base::errors::{ERR_NOT_INT, ERR_SYNTAX, ERR_WRONGTYPE};
use crate::base::parse::eq_ic;
use crate::kernel::ctx::Ctx;
use crate::kernel::notify;
use crate::kernel::server::Server;
use crate::kernel::spec::{flag, CommandSpec, Docs, KeyPos};

const W: u32 = flag::WRITE | flag::DENYOOM;

macro_rules! cmd {
    ($name:expr, $arity:expr, $flags:expr, $acl:expr, $keys:expr, $cx:expr, $sum:expr, $h:expr) => {
        CommandSpec {
            acl: $acl,
            keys: $keys,
            docs: Docs::new($cx, $sum),
            ..CommandSpec::new($name, $arity, $flags, $h)
        }
    };
}

pub const COMMANDS: &[CommandSpec] = &[
    cmd!("get", 2, flag::READONLY | flag::FAST, &["read", "string", "fast"], KeyPos::ONE, "O(1)", "Returns the string value of a key.", get),
    cmd!("set", -3, W, &["write", "string", "slow"], KeyPos::ONE, "O(1)", "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist.", set),
    cmd!("setnx", 3, W | flag::FAST, &["write", "string", "fast"], KeyPos::ONE, "O(1)", "Set the string value of a key only when the key doesn't exist.", setnx),
    cmd!("setex", 4, W, &["write", "string", "slow"], KeyPos::ONE, "O(1)", "Sets the string value and expiration time of a key. Creates the key if it doesn't exist.", setex),
    cmd!("psetex", 4, W, &["write", "string", "slow"], KeyPos::ONE, "O(1)", "Sets both string value and expiration time in milliseconds of a key. The key is created if it doesn't exist.", psetex),
    cmd!("getex", -2, flag::WRITE | flag::FAST, &["write", "string", "fast"], KeyPos::ONE, "O(1)", "Returns the string value of a key after setting its expiration time.", getex),
    cmd!("getdel", 2, flag::WRITE | flag::FAST, &["write", "string", "fast"], KeyPos::ONE, "O(1)", "Returns the string value of a key after deleting the key.", getdel),
    cmd!("getset", 3, W | flag::FAST, &["write", "string", "fast"], KeyPos::ONE, "O(1)", "Returns the previous string value of a key after setting it to a new value.", getset),
    cmd!("mget", -2, flag::READONLY | flag::FAST, &["read", "string", "fast"], KeyPos::ALL, "O(N) where N is the number of keys to retrieve.", "Atomically returns the string values of one or more keys.", mget),
    cmd!("mset", -3, W, &["write", "string", "slow"], KeyPos::range(1, -1, 2), "O(N) where N is the number of keys to set.", "Atomically creates or modifies the string values of one or more keys.", mset),
    cmd!("msetnx", -3, W, &["write", "string", "slow"], KeyPos::range(1, -1, 2), "O(N) where N is the number of keys to set.", "Atomically modifies the string values of one or more keys only when all keys don't exist.", msetnx),
    cmd!("append", 3, W | flag::FAST, &["write", "string", "fast"], KeyPos::ONE, "O(1). The amortized time complexity is O(1) assuming the appended value is small and the already present value is of any size, since the dynamic string library used by Redis will double the free space available on every reallocation.", "Appends a string to the value of a key. Creates the key if it doesn't exist.", append),
    cmd!("strlen", 2, flag::READONLY | flag::FAST, &["read", "string", "fast"], KeyPos::ONE, "O(1)", "Returns the length of a string value.", strlen),
    cmd!("getrange", 4, flag::READONLY, &["read", "string", "slow"], KeyPos::ONE, "O(N) where N is the length of the returned string. The complexity is ultimately determined by the returned length, but because creating a substring from an existing string is very cheap, it can be considered O(1) for small strings.", "Returns a substring of the string stored at a key.", getrange),
    cmd!("substr", 4, flag::READONLY, &["read", "string", "slow"], KeyPos::ONE, "O(N) where N is the length of the returned string. The complexity is ultimately determined by the returned length, but because creating a substring from an existing string is very cheap, it can be considered O(1) for small strings.", "Returns a substring from a string value.", getrange),
    cmd!("setrange", 4, W, &["write", "string", "slow"], KeyPos::ONE, "O(1), not counting the time taken to copy the new string in place. Usually, this string is very small so the amortized complexity is O(1). Otherwise, complexity is O(M) with M being the length of the value argument.", "Overwrites a part of a string value with another by an offset. Creates the key if it doesn't exist.", setrange),
    cmd!("incr", 2, W | flag::FAST, &["write", "string", "fast"], KeyPos::ONE, "O(1)", "Increments the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.", incr),
    cmd!("decr", 2, W | flag::FAST, &["write", "string", "fast"], KeyPos::ONE, "O(1)", "Decrements the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.", decr),
    cmd!("incrby", 3, W | flag::FAST, &["write", "string", "fast"], KeyPos::ONE, "O(1)", "Increments the integer value of a key by a number. Uses 0 as initial value if the key doesn't exist.", incrby),
    cmd!("decrby", 3, W | flag::FAST, &["write", "string", "fast"], KeyPos::ONE, "O(1)", "Decrements a number from the integer value of a key. Uses 0 as initial value if the key doesn't exist.", decrby),
    cmd!("incrbyfloat", 3, W | flag::FAST, &["write", "string", "fast"], KeyPos::ONE, "O(1)", "Increment the floating point value of a key by a number. Uses 0 as initial value if the key doesn't exist.", incrbyfloat),
    cmd!("lcs", -3, flag::READONLY, &["read", "string", "slow"], KeyPos::range(1, 2, 1), "O(N*M) where N and M are the lengths of s1 and s2, respectively", "Finds the longest common substring.", lcs),
];

/// Parsed SET/GETEX options.
#[derive(Default, Clone, Copy)]
struct SetOpts {
    nx: bool,
    xx: bool,
    get: bool,
    keepttl: bool,
    persist: bool,
    /// (unit is seconds, absolute, arg index)
    expire: Option<(bool, bool, usize)>,
}

/// Redis's `parseExtendedStringArgumentsOrReply`.
fn parse_set_opts(args: &[&[u8]], start: usize, is_set: bool) -> Option<SetOpts> {
    let mut o = SetOpts::default();
    let mut j = start;
    while j < args.len() {
        let a = args[j];
        let has_next = j + 1 < args.len();
        let no_exp = o.expire.is_none();
        if eq_ic(a, "nx") && !o.xx && is_set {
            o.nx = true;
        } else if eq_ic(a, "xx") && !o.nx && is_set {
            o.xx = true;
        } else if eq_ic(a, "get") && is_set {
            o.get = true;
        } else if eq_ic(a, "keepttl") && !o.persist && no_exp && is_set {
            o.keepttl = true;
        } else if eq_ic(a, "persist") && !is_set && no_exp && !o.keepttl {
            o.persist = true;
        } else if !o.keepttl
            && !o.persist
            && has_next
            && (eq_ic(a, "ex") || eq_ic(a, "px") || eq_ic(a, "exat") || eq_ic(a, "pxat"))
        {
            let secs = eq_ic(a, "ex") || eq_ic(a, "exat");
            let abs = eq_ic(a, "exat") || eq_ic(a, "pxat");
            if let Some((s, ab, _)) = o.expire {
                if s != secs || ab != abs {
                    return None;
                }
            }
            o.expire = Some((secs, abs, j + 1));
            j += 1;
        } else {
            return None;
        }
        j += 1;
    }
    Some(o)
}

/// Redis's `getExpireMillisecondsOrReply`: absolute unix ms.
pub(crate) fn expire_ms(
    ctx: &mut Ctx,
    arg: &[u8],
    secs: bool,
    abs: bool,
    cmd: &str,
) -> Option<i64> {
    let Some(v) = crate::base::parse::parse_i64(arg) else {
        ctx.error(ERR_NOT_INT);
        return None;
    };
    let bad = |ctx: &mut Ctx| ctx.error(&crate::base::errors::invalid_expire_time(cmd));
    if v <= 0 || (secs && v > i64::MAX / 1000) {
        bad(ctx);
        return None;
    }
    let mut ms = if secs { v * 1000 } else { v };
    if !abs {
        ms = match ms.checked_add(ctx.now_ms as i64) {
            Some(x) => x,
            None => {
                bad(ctx);
                return None;
            }
        };
    }
    Some(ms)
}

fn reply_value(ctx: &mut Ctx, v: &CompactValue) {
    match v.string() {
        Some(s) => ctx.out.bulk(&*s),
        None => ctx.error(ERR_WRONGTYPE),
    }
}

fn get(ctx: &mut Ctx, args: &[&[u8]]) {
    let k = Key::new(args[1]);
    let srv = ctx.srv;
    let mut p = srv.keyspace.lock(&k);
    match p.get_read(ctx.client.db, &k, ctx.now_ms) {
        None => ctx.out.null_bulk(),
        Some(e) => reply_value(ctx, e.value()),
    }
}

fn set(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(o) = parse_set_opts(args, 3, true) else {
        return ctx.syntax_error();
    };
    let mut when = None;
    if let Some((secs, abs, i)) = o.expire {
        match expire_ms(ctx, args[i], secs, abs, "set") {
            Some(t) => when = Some(t),
            None => return,
        }
    }
    // Journaled as `SET key value PXAT ms` unless the TTL was PXAT already.
    let absolute = matches!(o.expire, Some((false, true, _)));
    set_generic(ctx, args[1], args[2], o, when, !absolute);
}

/// SET and its older forms. With a TTL and `rewrite`, the change is
/// journaled as `SET key value PXAT <absolute ms>`, as Redis 7.0 does.
fn set_generic(
    ctx: &mut Ctx,
    key: &[u8],
    val: &[u8],
    o: SetOpts,
    when: Option<i64>,
    rewrite: bool,
) {
    let k = Key::new(key);
    let db = ctx.client.db;
    let now = ctx.now_ms;
    let srv = ctx.srv;
    let value = new_string(srv, val);
    let mut p = srv.keyspace.lock(&k);
    if o.get {
        match p.get_read(db, &k, now) {
            None => ctx.out.null_bulk(),
            Some(e) => match e.value().string() {
                Some(s) => ctx.out.bulk(&*s),
                None => return ctx.error(ERR_WRONGTYPE),
            },
        }
    }
    let found = (o.nx || o.xx) && p.exists(db, &k, now);
    if (o.nx && found) || (o.xx && !found) {
        if !o.get {
            ctx.out.null_bulk();
        }
        return;
    }
    let ttl = if o.keepttl {
        Ttl::Keep
    } else {
        Ttl::Set(when.map(|t| t.max(0) as u64))
    };
    drop(p.set(db, &k, value, ttl, now));
    drop(p);
    if let (Some(t), true) = (when, rewrite) {
        ctx.propagate_as(|| {
            vec![vec![
                b"SET".to_vec(),
                key.to_vec(),
                val.to_vec(),
                b"PXAT".to_vec(),
                t.to_string().into_bytes(),
            ]]
        });
    }
    ctx.notify(notify::STRING, "set", key);
    if when.is_some() {
        ctx.notify(notify::GENERIC, "expire", key);
    }
    if !o.get {
        ctx.ok();
    }
}

fn setnx(ctx: &mut Ctx, args: &[&[u8]]) {
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    if p.exists(db, &k, now) {
        drop(p);
        return ctx.out.int(0);
    }
    p.insert(db, &k, new_string(srv, args[2]), None, now);
    drop(p);
    ctx.notify(notify::STRING, "set", args[1]);
    ctx.out.int(1);
}

fn setex(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(t) = expire_ms(ctx, args[2], true, false, "setex") else {
        return;
    };
    set_generic(ctx, args[1], args[3], SetOpts::default(), Some(t), true);
}

fn psetex(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(t) = expire_ms(ctx, args[2], false, false, "psetex") else {
        return;
    };
    set_generic(ctx, args[1], args[3], SetOpts::default(), Some(t), true);
}

fn getex(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(o) = parse_set_opts(args, 2, false) else {
        return ctx.syntax_error();
    };
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let Some(e) = p.get_read(db, &k, now) else {
        return ctx.out.null_bulk();
    };
    let Some(s) = e.value().string() else {
        return ctx.error(ERR_WRONGTYPE);
    };
    // As Redis 7.0: the expire time is read once the key is known to be
    // a string (a missing key answers nil whatever the time).
    let mut when = None;
    if let Some((secs, abs, i)) = o.expire {
        match expire_ms(ctx, args[i], secs, abs, "getex") {
            Some(t) => when = Some(t),
            None => return,
        }
    }
    ctx.out.bulk(&*s);
    let mut event = None;
    // Journaled as DEL, PEXPIREAT or PERSIST (Redis 7.0's forms).
    let mut journal: Option<(&[u8], Option<i64>)> = None;
    // A time already past deletes the key, except on a replica (Redis
    // 7.0's `checkAlreadyExpired`, as PEXPIREAT): the master's GETEX
    // sets the TTL, and the key goes when the master's DEL comes.
    let on_replica = srv
        .replication
        .replica
        .is_replica
        .load(std::sync::atomic::Ordering::Relaxed);
    if let Some(t) = when {
        if t <= now as i64 && !on_replica {
            p.remove(db, &k, now);
            event = Some((notify::GENERIC, "del"));
            let lazy = ctx.settings.lazyfree_lazy_expire;
            journal = Some((if lazy { b"UNLINK" } else { b"DEL" }, None));
        } else {
            p.set_expire(db, &k, Some(t as u64), now);
            event = Some((notify::GENERIC, "expire"));
            journal = Some((b"PEXPIREAT", Some(t)));
        }
    } else if o.persist {
        let had = p.get(db, &k, now).is_some_and(|e| e.has_expire());
        if had {
            p.set_expire(db, &k, None, now);
            event = Some((notify::GENERIC, "persist"));
            journal = Some((b"PERSIST", None));
        }
    }
    drop(p);
    if let Some((name, t)) = journal {
        ctx.propagate_as(|| {
            let mut c = vec![name.to_vec(), args[1].to_vec()];
            c.extend(t.map(|t| t.to_string().into_bytes()));
            vec![c]
        });
    }
    if let Some((c, ev)) = event {
        ctx.notify(c, ev, args[1]);
    }
}

fn getdel(ctx: &mut Ctx, args: &[&[u8]]) {
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let Some(e) = p.get_read(db, &k, now) else {
        return ctx.out.null_bulk();
    };
    let Some(s) = e.value().string() else {
        return ctx.error(ERR_WRONGTYPE);
    };
    ctx.out.bulk(&*s);
    let old = p.remove(db, &k, now);
    drop(p);
    drop(old);
    ctx.propagate_as(|| vec![vec![b"DEL".to_vec(), args[1].to_vec()]]);
    ctx.notify(notify::GENERIC, "del", args[1]);
}

fn getset(ctx: &mut Ctx, args: &[&[u8]]) {
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    match p.get_read(db, &k, now) {
        None => ctx.out.null_bulk(),
        Some(e) => match e.value().string() {
            Some(s) => ctx.out.bulk(&*s),
            None => return ctx.error(ERR_WRONGTYPE),
        },
    }
    drop(p.insert(db, &k, new_string(srv, args[2]), None, now));
    drop(p);
    ctx.propagate_as(|| vec![vec![b"SET".to_vec(), args[1].to_vec(), args[2].to_vec()]]);
    ctx.notify(notify::STRING, "set", args[1]);
}

fn mget(ctx: &mut Ctx, args: &[&[u8]]) {
    let keys: Vec<Key> = args[1..].iter().map(|a| Key::new(a)).collect();
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut g = srv.keyspace.lock_keys(&keys);
    ctx.out.array_len(keys.len());
    for k in &keys {
        match g
            .part(k)
            .get_read(db, k, now)
            .and_then(|e| e.value().string())
        {
            Some(s) => ctx.out.bulk(&*s),
            None => ctx.out.null_bulk(),
        }
    }
}

fn mset_generic(ctx: &mut Ctx, args: &[&[u8]], nx: bool) {
    if args.len().is_multiple_of(2) {
        return ctx.wrong_arity();
    }
    let keys: Vec<Key> = args[1..].iter().step_by(2).map(|a| Key::new(a)).collect();
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut g = srv.keyspace.lock_keys(&keys);
    if nx && keys.iter().any(|k| g.part(k).exists(db, k, now)) {
        drop(g);
        return ctx.out.int(0);
    }
    for (i, k) in keys.iter().enumerate() {
        drop(
            g.part(k)
                .insert(db, k, new_string(srv, args[2 + 2 * i]), None, now),
        );
    }
    drop(g);
    for i in (1..args.len()).step_by(2) {
        ctx.notify(notify::STRING, "set", args[i]);
    }
    if nx {
        ctx.out.int(1);
    } else {
        ctx.ok();
    }
}

fn mset(ctx: &mut Ctx, args: &[&[u8]]) {
    mset_generic(ctx, args, false)
}

fn msetnx(ctx: &mut Ctx, args: &[&[u8]]) {
    mset_generic(ctx, args, true)
}

/// A string value created by a command (Redis's `tryObjectEncoding`):
/// its most compact form, an integer of its own when integers are not
/// shared now (`kernel::eviction::Eviction::new_value`).
fn new_string(srv: &Server, bytes: &[u8]) -> CompactValue {
    srv.eviction.new_value(CompactValue::from_bytes(bytes))
}

fn max_len(ctx: &Ctx) -> u64 {
    ctx.settings.proto_max_bulk_len
}

fn append(ctx: &mut Ctx, args: &[&[u8]]) {
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let limit = max_len(ctx);
    let mut p = srv.keyspace.lock(&k);
    let newlen = match p.get(db, &k, now) {
        None => {
            p.insert(db, &k, new_string(srv, args[2]), None, now);
            args[2].len()
        }
        Some(e) => {
            if !e.value().is_string() {
                return ctx.error(ERR_WRONGTYPE);
            }
            let total = e.value().str_len() as u64 + args[2].len() as u64;
            if total > limit {
                return ctx.error(errors::ERR_STRING_TOO_LONG);
            }
            e.modify_string(|h| {
                h.extend_from_slice(args[2]);
                h.len()
            })
            .unwrap()
        }
    };
    drop(p);
    ctx.notify(notify::STRING, "append", args[1]);
    ctx.out.int(newlen as i64);
}

fn strlen(ctx: &mut Ctx, args: &[&[u8]]) {
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    match p.get_read(db, &k, now) {
        None => ctx.out.int(0),
        Some(e) if !e.value().is_string() => ctx.error(ERR_WRONGTYPE),
        Some(e) => ctx.out.int(e.value().str_len() as i64),
    }
}

fn getrange(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(mut start) = ctx.parse_i64(args[2]) else {
        return;
    };
    let Some(mut end) = ctx.parse_i64(args[3]) else {
        return;
    };
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let Some(e) = p.get_read(db, &k, now) else {
        return ctx.out.bulk(b"");
    };
    let Some(s) = e.value().string() else {
        return ctx.error(ERR_WRONGTYPE);
    };
    let len = s.len() as i64;
    if start < 0 && end < 0 && start > end {
        return ctx.out.bulk(b"");
    }
    if start < 0 {
        start += len;
    }
    if end < 0 {
        end += len;
    }
    start = start.max(0);
    end = end.max(0);
    if end >= len {
        end = len - 1;
    }
    if start > end || len == 0 {
        return ctx.out.bulk(b"");
    }
    ctx.out.bulk(&s[start as usize..=end as usize]);
}

fn setrange(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(off) = ctx.parse_i64(args[2]) else {
        return;
    };
    if off < 0 {
        return ctx.error(errors::ERR_OFFSET_OUT_OF_RANGE);
    }
    let val = args[3];
    let limit = max_len(ctx);
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let too_big = |n: usize| (off as u64).saturating_add(n as u64) > limit;
    let newlen = match p.get(db, &k, now) {
        None => {
            if val.is_empty() {
                return ctx.out.int(0);
            }
            if too_big(val.len()) {
                return ctx.error(errors::ERR_STRING_TOO_LONG);
            }
            let mut h = store::heap::HeapStr::zeroed(off as usize + val.len());
            h.as_mut_slice()[off as usize..].copy_from_slice(val);
            let n = h.len();
            p.insert(db, &k, CompactValue::from_heap(h, true), None, now);
            n
        }
        Some(e) => {
            if !e.value().is_string() {
                return ctx.error(ERR_WRONGTYPE);
            }
            let olen = e.value().str_len();
            if val.is_empty() {
                return ctx.out.int(olen as i64);
            }
            if too_big(val.len()) {
                return ctx.error(errors::ERR_STRING_TOO_LONG);
            }
            e.modify_string(|h| {
                let end = off as usize + val.len();
                if end > h.len() {
                    h.resize(end);
                }
                h.as_mut_slice()[off as usize..end].copy_from_slice(val);
                h.len()
            })
            .unwrap()
        }
    };
    drop(p);
    ctx.notify(notify::STRING, "setrange", args[1]);
    ctx.out.int(newlen as i64);
}

fn incr_generic(ctx: &mut Ctx, key: &[u8], delta: i64) {
    let k = Key::new(key);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let new = match p.get(db, &k, now) {
        None => {
            p.insert(
                db,
                &k,
                srv.eviction.new_value(CompactValue::from_int(delta)),
                None,
                now,
            );
            delta
        }
        Some(e) => {
            if !e.value().is_string() {
                return ctx.error(ERR_WRONGTYPE);
            }
            let Some(cur) = e.value().as_int() else {
                return ctx.error(ERR_NOT_INT);
            };
            let Some(n) = cur.checked_add(delta) else {
                return ctx.error(errors::ERR_INCREMENT_DECREMENT_WOULD_OVERFLOW);
            };
            e.set_value(srv.eviction.new_value(CompactValue::from_int(n)));
            n
        }
    };
    drop(p);
    ctx.notify(notify::STRING, "incrby", key);
    ctx.out.int(new);
}

fn incr(ctx: &mut Ctx, args: &[&[u8]]) {
    incr_generic(ctx, args[1], 1)
}

fn decr(ctx: &mut Ctx, args: &[&[u8]]) {
    incr_generic(ctx, args[1], -1)
}

fn incrby(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(d) = ctx.parse_i64(args[2]) else {
        return;
    };
    incr_generic(ctx, args[1], d)
}

fn decrby(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(d) = ctx.parse_i64(args[2]) else {
        return;
    };
    if d == i64::MIN {
        return ctx.error(errors::ERR_DECREMENT_WOULD_OVERFLOW);
    }
    incr_generic(ctx, args[1], -d)
}

fn incrbyfloat(ctx: &mut Ctx, args: &[&[u8]]) {
    // Redis 7.0's order: the key's type, its value, then the increment.
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let cur = match p.get(db, &k, now) {
        None => None,
        Some(e) => {
            let Some(s) = e.value().string() else {
                return ctx.error(ERR_WRONGTYPE);
            };
            match LongDouble::parse(&s) {
                Some(v) => Some(v),
                None => return ctx.error(crate::base::errors::ERR_NOT_FLOAT),
            }
        }
    };
    let Some(incr) = LongDouble::parse(args[2]) else {
        return ctx.error(crate::base::errors::ERR_NOT_FLOAT);
    };
    let v = match cur {
        Some(c) => c + incr,
        None => incr,
    };
    if v.is_nan_or_inf() {
        return ctx.error(errors::ERR_INCREMENT_WOULD_PRODUCE_NAN_INFINITY);
    }
    let Some(text) = v.format_human() else {
        return ctx.error(errors::ERR_INCREMENT_WOULD_PRODUCE_NAN_INFINITY);
    };
    let nv = CompactValue::from_bytes_no_int(&text);
    match p.get(db, &k, now) {
        Some(e) => {
            e.set_value(nv);
        }
        None => {
            p.insert(db, &k, nv, None, now);
        }
    }
    drop(p);
    // Journaled as the value it produced (float formatting may differ).
    ctx.propagate_as(|| {
        vec![vec![
            b"SET".to_vec(),
            args[1].to_vec(),
            text.to_vec(),
            b"KEEPTTL".to_vec(),
        ]]
    });
    ctx.notify(notify::STRING, "incrbyfloat", args[1]);
    ctx.out.bulk(&text);
}

fn lcs(ctx: &mut Ctx, args: &[&[u8]]) {
    // Redis 7.0 checks the keys' types before it reads the options.
    let keys = [Key::new(args[1]), Key::new(args[2])];
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut vals: Vec<Vec<u8>> = Vec::with_capacity(2);
    {
        let mut g = srv.keyspace.lock_keys(&keys);
        for k in &keys {
            match g.part(k).get_read(db, k, now) {
                None => vals.push(Vec::new()),
                Some(e) => match e.value().string() {
                    Some(s) => vals.push(s.to_vec()),
                    None => {
                        drop(g);
                        return ctx.error(errors::ERR_KEYS_MUST_BE_STRINGS);
                    }
                },
            }
        }
    }
    let (mut getlen, mut getidx, mut withmatchlen) = (false, false, false);
    let mut minmatchlen: i64 = 0;
    let mut j = 3;
    while j < args.len() {
        let a = args[j];
        if eq_ic(a, "idx") {
            getidx = true;
        } else if eq_ic(a, "len") {
            getlen = true;
        } else if eq_ic(a, "withmatchlen") {
            withmatchlen = true;
        } else if eq_ic(a, "minmatchlen") && j + 1 < args.len() {
            let Some(v) = ctx.parse_i64(args[j + 1]) else {
                return;
            };
            minmatchlen = v.max(0);
            j += 1;
        } else {
            return ctx.error(ERR_SYNTAX);
        }
        j += 1;
    }
    if getidx && getlen {
        return ctx.error(errors::ERR_LCS_LEN_AND_IDX);
    }
    let (a, b) = (&vals[0], &vals[1]);
    let (alen, blen) = (a.len(), b.len());
    let cells = (alen as u128 + 1) * (blen as u128 + 1);
    if cells * 4 > ctx.settings.proto_max_bulk_len as u128 {
        return ctx.error(errors::ERR_LCS_MEMORY);
    }
    let w = blen + 1;
    let mut t = vec![0u32; (alen + 1) * w];
    for i in 1..=alen {
        for jj in 1..=blen {
            t[i * w + jj] = if a[i - 1] == b[jj - 1] {
                t[(i - 1) * w + jj - 1] + 1
            } else {
                t[(i - 1) * w + jj].max(t[i * w + jj - 1])
            };
        }
    }
    let total = t[alen * w + blen];
    let computelcs = getidx || !getlen;
    let mut result = vec![0u8; if getidx || getlen { 0 } else { total as usize }];
    let mut idx = total as usize;
    let mut ranges: Vec<(usize, usize, usize, usize, usize)> = Vec::new();
    let (mut i, mut jj) = (alen, blen);
    let (mut as_, mut ae, mut bs, mut be) = (alen, 0usize, 0usize, 0usize);
    while computelcs && i > 0 && jj > 0 {
        let mut emit = false;
        if a[i - 1] == b[jj - 1] {
            if !result.is_empty() {
                result[idx - 1] = a[i - 1];
            }
            if as_ == alen {
                as_ = i - 1;
                ae = i - 1;
                bs = jj - 1;
                be = jj - 1;
            } else if as_ == i && bs == jj {
                as_ -= 1;
                bs -= 1;
            } else {
                emit = true;
            }
            if as_ == 0 || bs == 0 {
                emit = true;
            }
            idx -= 1;
            i -= 1;
            jj -= 1;
        } else {
            let l1 = t[(i - 1) * w + jj];
            let l2 = t[i * w + jj - 1];
            if l1 > l2 {
                i -= 1;
            } else {
                jj -= 1;
            }
            if as_ != alen {
                emit = true;
            }
        }
        if emit {
            let mlen = ae - as_ + 1;
            if minmatchlen == 0 || mlen as i64 >= minmatchlen {
                ranges.push((as_, ae, bs, be, mlen));
            }
            as_ = alen;
        }
    }
    if getidx {
        ctx.out.map_len(2);
        ctx.out.bulk(b"matches");
        ctx.out.array_len(ranges.len());
        for (a0, a1, b0, b1, ml) in ranges {
            ctx.out.array_len(2 + withmatchlen as usize);
            ctx.out.array_len(2);
            ctx.out.int(a0 as i64);
            ctx.out.int(a1 as i64);
            ctx.out.array_len(2);
            ctx.out.int(b0 as i64);
            ctx.out.int(b1 as i64);
            if withmatchlen {
                ctx.out.int(ml as i64);
            }
        }
        ctx.out.bulk(b"len");
        ctx.out.int(total as i64);
    } else if getlen {
        ctx.out.int(total as i64);
    } else {
        ctx.out.bulk(&result);
    }
}
