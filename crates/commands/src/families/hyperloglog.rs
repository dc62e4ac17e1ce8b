//! HyperLogLog commands: PFADD, PFCOUNT, PFMERGE, PFDEBUG, PFSELFTEST.
//!
//! A HyperLogLog is a string value in Redis's exact byte format, edited the
//! way Redis edits it (`store::hll_exact`), so `GET` returns redis-server's
//! bytes for the same commands and values copied from Redis work here.
//! `hll-sparse-max-bytes` decides when a sparse value turns dense.
//!
//! Redis 7.0 details kept: PFADD on a missing key creates it (and counts as
//! an update even without elements); PFCOUNT of one key stores the computed
//! cardinality in the header cache; PFMERGE includes the destination among
//! its sources and always fires `pfadd`; errors are
//! "WRONGTYPE Key is not a valid HyperLogLog string value." for strings
//! that are not HLLs and "INVALIDOBJ Corrupted HLL object detected" for bad
//! sparse data.

use store::heap::HeapStr;
use store::hll::{self, REGISTERS};
use store::hll_exact as hx;
use store::{CompactValue, Key};

use crate::base::errors;
use crate::base::errors::ERR_WRONGTYPE;
use crate::base::parse::eq_ic;
use crate::kernel::ctx::Ctx;
use crate::kernel::notify;
use crate::kernel::spec::{flag, CommandSpec, Docs, KeyPos};

const ERR_CORRUPT: &str = "INVALIDOBJ Corrupted HLL object detected";

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        acl: &["write", "hyperloglog", "fast"],
        keys: KeyPos::ONE,
        docs: Docs::new("O(1) to add every element.",
            "Adds the specified elements to the specified HyperLogLog.",
        ),
        ..CommandSpec::new(
            "pfadd",
            -2,
            flag::WRITE | flag::DENYOOM | flag::FAST,
            pfadd,
        )
    },
    CommandSpec {
        acl: &["read", "hyperloglog", "slow"],
        keys: KeyPos::ALL,
        docs: Docs::new("O(1) with a very small average constant time when called with a single key. O(N) with N being the number of keys, and much bigger constant times, when called with multiple keys.",
            "Return the approximated cardinality of the set(s) observed by the HyperLogLog at key(s).",
        ),
        ..CommandSpec::new(
            "pfcount",
            -2,
            flag::READONLY | flag::MAY_REPLICATE,
            pfcount,
        )
    },
    CommandSpec {
        acl: &["write", "hyperloglog", "slow"],
        keys: KeyPos::ALL,
        docs: Docs::new("O(N) to merge N HyperLogLogs, but with high constant times.",
            "Merge N different HyperLogLogs into a single one.",
        ),
        ..CommandSpec::new("pfmerge", -2, flag::WRITE | flag::DENYOOM, pfmerge)
    },
    CommandSpec {
        acl: &["write", "hyperloglog", "admin", "slow", "dangerous"],
        keys: KeyPos::range(2, 2, 1),
        docs: Docs::new("N/A",
            "Internal commands for debugging HyperLogLog values",
        ),
        ..CommandSpec::new(
            "pfdebug",
            3,
            flag::WRITE | flag::DENYOOM | flag::ADMIN,
            pfdebug,
        )
    },
    CommandSpec {
        acl: &["hyperloglog", "admin", "slow", "dangerous"],
        docs: Docs::new("N/A",
            "An internal command for testing HyperLogLog values",
        ),
        ..CommandSpec::new("pfselftest", 1, flag::ADMIN, pfselftest)
    },
];

/// PFSELFTEST: checks the register layout and the estimator (10M adds, a
/// second or so, like Redis).
fn pfselftest(ctx: &mut Ctx, _args: &[&[u8]]) {
    let seed = crate::base::clock::unix_time_us() ^ 0x9e37_79b9_7f4a_7c15;
    match hx::selftest(ctx.settings.hll_sparse_max_bytes, seed, 10_000_000) {
        Ok(()) => ctx.ok(),
        Err(e) => ctx.error(&e),
    }
}

/// Redis's `isHLLObjectOrReply`: replies the error and returns false when
/// `v` is not a HyperLogLog.
fn check_hll(ctx: &mut Ctx, v: &CompactValue) -> bool {
    if !v.is_string() {
        ctx.error(ERR_WRONGTYPE);
        return false;
    }
    if v.is_int() || hll::validate(&v.string().unwrap()).is_err() {
        ctx.error(errors::WRONGTYPE_HLL);
        return false;
    }
    true
}

/// Replaces the bytes of a heap string with `v`.
fn store_vec(h: &mut HeapStr, v: &[u8]) {
    h.resize(v.len());
    h.as_mut_slice().copy_from_slice(v);
}

fn new_value(v: &[u8]) -> CompactValue {
    CompactValue::from_heap(HeapStr::from_slice(v), true)
}

/// Adds `elems` to the HLL `h`: (registers changed, corrupt data found).
/// Dense values are edited in place.
fn add_elems(h: &mut HeapStr, elems: &[&[u8]], max: u64) -> (usize, bool) {
    let mut updated = 0;
    let mut corrupt = false;
    if hx::is_dense(h.as_slice()) {
        for e in elems {
            updated += hx::add_dense_in_place(h.as_mut_slice(), e) as usize;
        }
    } else {
        let mut v = h.as_slice().to_vec();
        for e in elems {
            match hx::add(&mut v, e, max) {
                Ok(c) => updated += c as usize,
                Err(_) => {
                    corrupt = true;
                    break;
                }
            }
        }
        store_vec(h, &v);
    }
    (updated, corrupt)
}

fn pfadd(ctx: &mut Ctx, args: &[&[u8]]) {
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let max = ctx.settings.hll_sparse_max_bytes;
    let elems = &args[2..];
    let mut p = srv.keyspace.lock(&k);
    let (updated, corrupt) = match p.get(db, &k, now) {
        None => {
            let mut h = HeapStr::from_slice(&hx::create());
            let (n, corrupt) = add_elems(&mut h, elems, max);
            // Creating the key counts as an update.
            hx::invalidate_cache(h.as_mut_slice());
            p.insert(db, &k, CompactValue::from_heap(h, true), None, now);
            (n + 1, corrupt)
        }
        Some(e) => {
            if !check_hll(ctx, e.value()) {
                return;
            }
            e.modify_string(|h| {
                let (n, corrupt) = add_elems(h, elems, max);
                if n > 0 && !corrupt {
                    hx::invalidate_cache(h.as_mut_slice());
                }
                (n, corrupt)
            })
            .unwrap()
        }
    };
    if corrupt {
        drop(p);
        return ctx.error(ERR_CORRUPT);
    }
    drop(p);
    if updated > 0 {
        ctx.notify(notify::STRING, "pfadd", args[1]);
    }
    ctx.out.int((updated > 0) as i64);
}

fn pfcount(ctx: &mut Ctx, args: &[&[u8]]) {
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    if args.len() > 2 {
        let keys: Vec<Key> = args[1..].iter().map(|a| Key::new(a)).collect();
        let mut g = srv.keyspace.lock_keys(&keys);
        let mut max = vec![0u8; REGISTERS];
        for k in &keys {
            let Some(e) = g.part(k).get_read(db, k, now) else {
                continue;
            };
            if !check_hll(ctx, e.value()) {
                return;
            }
            if hx::merge_into(&mut max, &e.value().string().unwrap()).is_err() {
                drop(g);
                return ctx.error(ERR_CORRUPT);
            }
        }
        drop(g);
        return ctx.out.int(hx::count_registers(&max) as i64);
    }
    let k = Key::new(args[1]);
    let mut p = srv.keyspace.lock(&k);
    let Some(e) = p.get_read(db, &k, now) else {
        drop(p);
        return ctx.out.int(0);
    };
    if !check_hll(ctx, e.value()) {
        return;
    }
    let r = e
        .modify_string(|h| match hx::cached(h.as_slice()) {
            Some(c) => Ok((c, false)),
            None => {
                let c = hx::count(h.as_slice())?;
                hx::set_cache(h.as_mut_slice(), c);
                Ok((c, true))
            }
        })
        .unwrap();
    drop(p);
    match r {
        Ok((c, recomputed)) => {
            if recomputed {
                // Storing the cache modifies the value (Redis's
                // signalModifiedKey): WATCHers of the key see a change.
                ctx.srv.watches.touch(Some(db), args[1]);
                // ... and Redis propagates the command (the cache is data).
                ctx.propagate_always();
            }
            ctx.out.int(c as i64)
        }
        Err(hll::HllError::Corrupt | hll::HllError::NotHll) => ctx.error(ERR_CORRUPT),
    }
}

/// Writes the merged registers `max` into the HLL `v` (PFMERGE's target).
fn write_registers(v: &mut Vec<u8>, max: &[u8], use_dense: bool, sparse_max: u64) -> bool {
    if use_dense && hx::to_dense(v).is_err() {
        return false;
    }
    for (j, &m) in max.iter().enumerate() {
        if m == 0 {
            continue;
        }
        if hx::is_dense(v) {
            hx::dense_raise(&mut v[hll::HDR..], j, m);
        } else {
            // Redis ignores a failure here (the sources were checked).
            let _ = hx::sparse_set(v, j, m, sparse_max);
        }
    }
    hx::invalidate_cache(v);
    true
}

fn pfmerge(ctx: &mut Ctx, args: &[&[u8]]) {
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let sparse_max = ctx.settings.hll_sparse_max_bytes;
    let keys: Vec<Key> = args[1..].iter().map(|a| Key::new(a)).collect();
    let mut g = srv.keyspace.lock_keys(&keys);
    let mut max = vec![0u8; REGISTERS];
    let mut use_dense = false;
    for k in &keys {
        let Some(e) = g.part(k).get_read(db, k, now) else {
            continue;
        };
        if !check_hll(ctx, e.value()) {
            return;
        }
        let s = e.value().string().unwrap();
        use_dense |= hx::is_dense(&s);
        if hx::merge_into(&mut max, &s).is_err() {
            drop(g);
            return ctx.error(ERR_CORRUPT);
        }
    }
    let dest = &keys[0];
    let p = g.part(dest);
    let ok = match p.get(db, dest, now) {
        None => {
            let mut v = hx::create();
            let ok = write_registers(&mut v, &max, use_dense, sparse_max);
            p.insert(db, dest, new_value(&v), None, now);
            ok
        }
        Some(e) => e
            .modify_string(|h| {
                let mut v = h.as_slice().to_vec();
                let ok = write_registers(&mut v, &max, use_dense, sparse_max);
                if ok {
                    store_vec(h, &v);
                }
                ok
            })
            .unwrap(),
    };
    drop(g);
    if !ok {
        return ctx.error(ERR_CORRUPT);
    }
    ctx.notify(notify::STRING, "pfadd", args[1]);
    ctx.ok();
}

fn pfdebug(ctx: &mut Ctx, args: &[&[u8]]) {
    let sub = args[1];
    let k = Key::new(args[2]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let Some(e) = p.get(db, &k, now) else {
        drop(p);
        return ctx.error(errors::ERR_KEY_DOES_NOT_EXIST);
    };
    if !check_hll(ctx, e.value()) {
        return;
    }
    enum Out {
        Regs(Vec<u8>),
        Text(String),
        Status(&'static str),
        Int(i64),
        Err(String),
        /// `ERR Unknown PFDEBUG subcommand '<sub>'`, the client's bytes.
        UnknownSub,
    }
    let mut converted = false;
    let out = e
        .modify_string(|h| {
            let mut v = h.as_slice().to_vec();
            let dense = hx::is_dense(&v);
            if eq_ic(sub, "getreg") || eq_ic(sub, "todense") {
                if !dense {
                    if hx::to_dense(&mut v).is_err() {
                        return Out::Err(ERR_CORRUPT.into());
                    }
                    store_vec(h, &v);
                    converted = true;
                }
                if eq_ic(sub, "todense") {
                    return Out::Int(!dense as i64);
                }
                return Out::Regs(
                    (0..REGISTERS)
                        .map(|i| hx::dense_get(&v[hll::HDR..], i))
                        .collect(),
                );
            }
            if eq_ic(sub, "encoding") {
                return Out::Status(if dense { "dense" } else { "sparse" });
            }
            if eq_ic(sub, "decode") {
                if dense {
                    return Out::Err(errors::ERR_HLL_ENCODING_NOT_SPARSE.into());
                }
                return Out::Text(decode_sparse(&v));
            }
            Out::UnknownSub
        })
        .unwrap();
    drop(p);
    if converted {
        // The encoding is data (the digest and DUMP see it): like Redis,
        // a conversion propagates the command, without a key-change signal.
        ctx.propagate_always();
    }
    match out {
        Out::Regs(r) => {
            ctx.out.array_len(r.len());
            for x in r {
                ctx.out.int(x as i64);
            }
        }
        Out::Text(t) => ctx.out.bulk(t.as_bytes()),
        Out::Status(s) => ctx.out.simple(s),
        Out::Int(n) => ctx.out.int(n),
        Out::Err(e) => ctx.error(&e),
        Out::UnknownSub => ctx.error_with_arg("ERR Unknown PFDEBUG subcommand '", sub, "'"),
    }
}

/// PFDEBUG DECODE: `z:<run>` / `Z:<run>` / `v:<value>,<run>` per opcode.
fn decode_sparse(s: &[u8]) -> String {
    let mut out = Vec::new();
    let mut p = hll::HDR;
    while p < s.len() {
        let b = s[p];
        if b & 0xc0 == 0 {
            out.push(format!("z:{}", (b & 0x3f) as usize + 1));
            p += 1;
        } else if b & 0xc0 == 0x40 {
            let b1 = s.get(p + 1).copied().unwrap_or(0) as usize;
            out.push(format!("Z:{}", (((b & 0x3f) as usize) << 8 | b1) + 1));
            p += 2;
        } else {
            out.push(format!("v:{},{}", ((b >> 2) & 0x1f) + 1, (b & 3) + 1));
            p += 1;
        }
    }
    out.join(" ")
}
