//! DUMP and RESTORE with Redis 7.0's payload (type, value as in an RDB
//! file, RDB version 10, CRC64) and its checks in its order: options
//! (syntax, IDLETIME, FREQ), the existing key (BUSYKEY), the TTL, the
//! payload's footer, then the value.

use std::sync::atomic::Ordering::Relaxed;

use rdb::RestoreError;
use store::Key;

use crate::base::errors;
use crate::base::parse::{eq_ic, parse_i64};
use crate::kernel::ctx::Ctx;
use crate::kernel::notify;

pub(super) fn dump(ctx: &mut Ctx, args: &[&[u8]]) {
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let opts = crate::services::snapshot::write_options(ctx.settings);
    let mut p = srv.keyspace.lock(&k);
    let payload = p.get_read(db, &k, now).map(|e| rdb::dump(e.value(), &opts));
    drop(p);
    match payload {
        Some(b) => ctx.out.bulk(&b),
        None => ctx.out.null_bulk(),
    }
}

pub(super) fn restore(ctx: &mut Ctx, args: &[&[u8]]) {
    let (mut replace, mut absttl) = (false, false);
    let (mut idle, mut freq): (Option<i64>, Option<i64>) = (None, None);
    let mut j = 4;
    while j < args.len() {
        let more = j + 1 < args.len();
        if eq_ic(args[j], "replace") {
            replace = true;
        } else if eq_ic(args[j], "absttl") {
            absttl = true;
        } else if eq_ic(args[j], "idletime") && more && freq.is_none() {
            let Some(v) = ctx.parse_i64(args[j + 1]) else {
                return;
            };
            if v < 0 {
                return ctx.error("ERR Invalid IDLETIME value, must be >= 0");
            }
            idle = Some(v);
            j += 1;
        } else if eq_ic(args[j], "freq") && more && idle.is_none() {
            let Some(v) = ctx.parse_i64(args[j + 1]) else {
                return;
            };
            if !(0..=255).contains(&v) {
                return ctx.error("ERR Invalid FREQ value, must be >= 0 and <= 255");
            }
            freq = Some(v);
            j += 1;
        } else {
            return ctx.syntax_error();
        }
        j += 1;
    }
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    if !replace && srv.keyspace.lock(&k).exists(db, &k, now) {
        return ctx.error("BUSYKEY Target key name already exists.");
    }
    let Some(ttl) = parse_i64(args[2]) else {
        return ctx.error(errors::ERR_NOT_INT);
    };
    if ttl < 0 {
        return ctx.error("ERR Invalid TTL value, must be >= 0");
    }
    let verify_crc = !srv.persistence.skip_checksum.load(Relaxed);
    let value = match rdb::restore_with(args[3], &ctx.settings.limits, verify_crc) {
        Ok(v) => srv.eviction.new_value(v),
        Err(e @ RestoreError::VersionOrChecksum) => return ctx.error(e.redis_message()),
        Err(e @ RestoreError::BadData(_)) => return ctx.error(e.redis_message()),
    };
    let expire = match (ttl, absttl) {
        (0, _) => None,
        (t, true) => Some(t as u64),
        (t, false) => Some(now.saturating_add(t as u64)),
    };
    let mut p = srv.keyspace.lock(&k);
    // RESTORE REPLACE deletes the old key and adds a new one (a fresh
    // eviction byte, as Redis's new object).
    let deleted = replace && p.remove(db, &k, now).is_some();
    if expire.is_some_and(|t| t <= now) {
        // Already expired: the key is gone (and the old one deleted).
        drop(p);
        if deleted {
            ctx.notify(notify::GENERIC, "del", args[1]);
        }
        return ctx.ok();
    }
    p.insert(db, &k, value, expire, now);
    let shared = srv.keyspace.evict_shared();
    let byte = if shared.is_lfu() {
        freq.map(|f| f as u8)
    } else {
        idle.map(|s| shared.lru_byte_for_idle((s as u64).saturating_mul(1000), now))
    };
    if let Some(b) = byte {
        if let Some(e) = p.get(db, &k, now) {
            e.set_evict_byte(b);
        }
    }
    drop(p);
    ctx.notify(notify::GENERIC, "restore", args[1]);
    ctx.ok();
}
