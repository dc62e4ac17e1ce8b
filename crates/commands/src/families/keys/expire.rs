//! Expiry commands: EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT (NX, XX, GT, LT),
//! TTL, PTTL, EXPIRETIME, PEXPIRETIME, PERSIST.
//!
//! TTLs are stored inside the compact entries (see `store::object`); expired
//! keys are dropped lazily on access and by the keyspace's active cycle.

use store::Key;

use crate::base::errors;
use crate::base::parse::eq_ic;
use crate::kernel::ctx::Ctx;
use crate::kernel::notify;
use crate::kernel::spec::{flag, CommandSpec, Docs, KeyPos};

macro_rules! cmd {
    ($name:expr, $arity:expr, $flags:expr, $acl:expr, $sum:expr, $h:expr) => {
        CommandSpec {
            acl: $acl,
            keys: KeyPos::ONE,
            docs: Docs::new("O(1)", $sum),
            ..CommandSpec::new($name, $arity, $flags, $h)
        }
    };
}

const WF: u32 = flag::WRITE | flag::FAST;
const RF: u32 = flag::READONLY | flag::FAST;
const WACL: &[&str] = &["keyspace", "write", "fast"];
const RACL: &[&str] = &["keyspace", "read", "fast"];

pub const COMMANDS: &[CommandSpec] = &[
    cmd!(
        "expire",
        -3,
        WF,
        WACL,
        "Sets the expiration time of a key in seconds.",
        expire
    ),
    cmd!(
        "pexpire",
        -3,
        WF,
        WACL,
        "Sets the expiration time of a key in milliseconds.",
        pexpire
    ),
    cmd!(
        "expireat",
        -3,
        WF,
        WACL,
        "Sets the expiration time of a key to a Unix timestamp.",
        expireat
    ),
    cmd!(
        "pexpireat",
        -3,
        WF,
        WACL,
        "Sets the expiration time of a key to a Unix milliseconds timestamp.",
        pexpireat
    ),
    cmd!(
        "ttl",
        2,
        RF,
        RACL,
        "Returns the expiration time in seconds of a key.",
        ttl
    ),
    cmd!(
        "pttl",
        2,
        RF,
        RACL,
        "Returns the expiration time in milliseconds of a key.",
        pttl
    ),
    cmd!(
        "expiretime",
        2,
        RF,
        RACL,
        "Returns the expiration time of a key as a Unix timestamp.",
        expiretime
    ),
    cmd!(
        "pexpiretime",
        2,
        RF,
        RACL,
        "Returns the expiration time of a key as a Unix milliseconds timestamp.",
        pexpiretime
    ),
    cmd!(
        "persist",
        2,
        WF,
        WACL,
        "Removes the expiration time of a key.",
        persist
    ),
];

const NX: u8 = 1;
const XX: u8 = 2;
const GT: u8 = 4;
const LT: u8 = 8;

fn parse_flags(ctx: &mut Ctx, args: &[&[u8]]) -> Option<u8> {
    let mut f = 0u8;
    for a in &args[3..] {
        if eq_ic(a, "nx") {
            f |= NX;
        } else if eq_ic(a, "xx") {
            f |= XX;
        } else if eq_ic(a, "gt") {
            f |= GT;
        } else if eq_ic(a, "lt") {
            f |= LT;
        } else {
            // The option's bytes as sent, as Redis writes them.
            ctx.error_with_arg("ERR Unsupported option ", a, "");
            return None;
        }
    }
    if f & NX != 0 && f & (XX | GT | LT) != 0 {
        ctx.error(errors::ERR_NX_AND_XX_GT_LT);
        return None;
    }
    if f & GT != 0 && f & LT != 0 {
        ctx.error(errors::ERR_GT_AND_LT);
        return None;
    }
    Some(f)
}

/// Redis's `expireGenericCommand`.
fn expire_generic(ctx: &mut Ctx, args: &[&[u8]], relative: bool, secs: bool) {
    let Some(f) = parse_flags(ctx, args) else {
        return;
    };
    let Some(mut when) = ctx.parse_i64(args[2]) else {
        return;
    };
    let name = ctx.srv.table.get(ctx.cmd_index).full_name.clone();
    let bad = |ctx: &mut Ctx| ctx.error(&crate::base::errors::invalid_expire_time(&name));
    if secs {
        if !(i64::MIN / 1000..=i64::MAX / 1000).contains(&when) {
            return bad(ctx);
        }
        when *= 1000;
    }
    let base = if relative { ctx.now_ms as i64 } else { 0 };
    if when > i64::MAX - base {
        return bad(ctx);
    }
    when += base;
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let Some(e) = p.get(db, &k, now) else {
        drop(p);
        return ctx.out.int(0);
    };
    if f != 0 {
        let cur = e.expire_at().map(|t| t as i64);
        let fail = (f & NX != 0 && cur.is_some())
            || (f & XX != 0 && cur.is_none())
            || (f & GT != 0 && cur.is_none_or(|c| when <= c))
            || (f & LT != 0 && cur.is_some_and(|c| when >= c));
        if fail {
            drop(p);
            return ctx.out.int(0);
        }
    }
    // A time already past deletes the key, except on a replica (Redis's
    // `checkAlreadyExpired`): its master's PEXPIREAT sets the TTL, and the
    // key goes when the master's DEL comes.
    let on_replica = srv
        .replication
        .replica
        .is_replica
        .load(std::sync::atomic::Ordering::Relaxed);
    if when <= now as i64 && !on_replica {
        let old = p.remove(db, &k, now);
        drop(p);
        drop(old);
        // Journaled as DEL (UNLINK with lazyfree-lazy-expire), as Redis.
        let lazy = ctx.settings.lazyfree_lazy_expire;
        ctx.propagate_as(|| {
            let name: &[u8] = if lazy { b"UNLINK" } else { b"DEL" };
            vec![vec![name.to_vec(), args[1].to_vec()]]
        });
        ctx.notify(notify::GENERIC, "del", args[1]);
    } else {
        p.set_expire(db, &k, Some(when as u64), now);
        drop(p);
        // Journaled as PEXPIREAT with the absolute time and the flags given.
        if relative || secs {
            ctx.propagate_as(|| {
                let mut c = vec![
                    b"PEXPIREAT".to_vec(),
                    args[1].to_vec(),
                    when.to_string().into_bytes(),
                ];
                c.extend(args[3..].iter().map(|a| a.to_vec()));
                vec![c]
            });
        }
        ctx.notify(notify::GENERIC, "expire", args[1]);
    }
    ctx.out.int(1);
}

fn expire(ctx: &mut Ctx, args: &[&[u8]]) {
    expire_generic(ctx, args, true, true)
}

fn pexpire(ctx: &mut Ctx, args: &[&[u8]]) {
    expire_generic(ctx, args, true, false)
}

fn expireat(ctx: &mut Ctx, args: &[&[u8]]) {
    expire_generic(ctx, args, false, true)
}

fn pexpireat(ctx: &mut Ctx, args: &[&[u8]]) {
    expire_generic(ctx, args, false, false)
}

/// None: no key; Some(None): no TTL; Some(Some(t)): absolute ms.
fn lookup_ttl(ctx: &mut Ctx, key: &[u8]) -> Option<Option<u64>> {
    let k = Key::new(key);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    p.get_read_notouch(db, &k, now).map(|e| e.expire_at())
}

fn ttl_generic(ctx: &mut Ctx, key: &[u8], ms: bool) {
    let r = match lookup_ttl(ctx, key) {
        None => -2,
        Some(None) => -1,
        Some(Some(t)) => {
            let left = (t as i64 - ctx.now_ms as i64).max(0);
            if ms {
                left
            } else {
                (left + 500) / 1000
            }
        }
    };
    ctx.out.int(r);
}

fn ttl(ctx: &mut Ctx, args: &[&[u8]]) {
    ttl_generic(ctx, args[1], false)
}

fn pttl(ctx: &mut Ctx, args: &[&[u8]]) {
    ttl_generic(ctx, args[1], true)
}

fn expiretime_generic(ctx: &mut Ctx, key: &[u8], ms: bool) {
    let r = match lookup_ttl(ctx, key) {
        None => -2,
        Some(None) => -1,
        Some(Some(t)) => {
            if ms {
                t as i64
            } else {
                t as i64 / 1000
            }
        }
    };
    ctx.out.int(r);
}

fn expiretime(ctx: &mut Ctx, args: &[&[u8]]) {
    expiretime_generic(ctx, args[1], false)
}

fn pexpiretime(ctx: &mut Ctx, args: &[&[u8]]) {
    expiretime_generic(ctx, args[1], true)
}

fn persist(ctx: &mut Ctx, args: &[&[u8]]) {
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let had = p.get(db, &k, now).is_some_and(|e| e.has_expire());
    if had {
        p.set_expire(db, &k, None, now);
    }
    drop(p);
    if had {
        ctx.notify(notify::GENERIC, "persist", args[1]);
    }
    ctx.out.int(had as i64);
}
