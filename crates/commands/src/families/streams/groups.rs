//! Consumer groups: XGROUP (CREATE, CREATECONSUMER, DELCONSUMER, DESTROY,
//! SETID, HELP), XACK, XPENDING, XCLAIM, XAUTOCLAIM, with Redis 7.0's
//! argument checks in its order and its replies.

use collections::stream::id::texts;
use collections::stream::{
    parse_id, parse_interval, parse_strict_id, AutoClaimOptions, Bound, ClaimOptions, PendingQuery,
    Stream, StreamId,
};
use store::keyspace::Partition;
use store::{CompactValue, Key};

use super::{bulk_id, group_now, journal, reply_entry, stream_error};
use crate::base::errors::{self, ERR_WRONGTYPE};
use crate::base::parse::{eq_ic, parse_i64};
use crate::kernel::coll;
use crate::kernel::ctx::Ctx;
use crate::kernel::notify;

fn error_bytes(ctx: &mut Ctx, e: Vec<u8>) {
    ctx.error_bytes(&e);
}

/// `ERR unknown subcommand or wrong number of arguments for '<sub>'. Try
/// XGROUP HELP.` (the subcommand as the client spelled it).
fn subcommand_syntax(ctx: &mut Ctx, args: &[&[u8]]) {
    let sub = String::from_utf8_lossy(args[1]).into_owned();
    let cmd = String::from_utf8_lossy(args[0]).to_uppercase();
    ctx.error(&errors::unknown_subcommand_or_arity(&sub, &cmd));
}

/// ENTRIESREAD options of CREATE (with MKSTREAM) and SETID, from `args[5]`.
/// Returns (mkstream, entries_read) or None after replying.
fn parse_group_opts(ctx: &mut Ctx, args: &[&[u8]], create: bool) -> Option<(bool, Option<u64>)> {
    let mut mkstream = false;
    let mut entries_read: Option<u64> = None;
    let mut i = 5;
    while i < args.len() {
        if create && eq_ic(args[i], "mkstream") {
            mkstream = true;
            i += 1;
        } else if eq_ic(args[i], "entriesread") && i + 1 < args.len() {
            let n = ctx.parse_i64(args[i + 1])?;
            if n < 0 && n != -1 {
                ctx.error(texts::ENTRIESREAD_RANGE);
                return None;
            }
            entries_read = (n >= 0).then_some(n as u64);
            i += 2;
        } else {
            subcommand_syntax(ctx, args);
            return None;
        }
    }
    Some((mkstream, entries_read))
}

/// The checks every keyed XGROUP subcommand makes under the key's lock, in
/// Redis's order: WRONGTYPE; a missing key is an error unless MKSTREAM;
/// SETID / CREATECONSUMER / DELCONSUMER need the group. Ok(key exists).
#[allow(clippy::too_many_arguments)]
fn check_group_key(
    p: &mut Partition,
    db: usize,
    k: &Key,
    now: u64,
    args: &[&[u8]],
    mkstream: bool,
    needs_group: bool,
) -> Result<bool, Vec<u8>> {
    let exists =
        coll::check::<Stream>(p, db, k, now).map_err(|_| ERR_WRONGTYPE.as_bytes().to_vec())?;
    if !exists {
        return if mkstream {
            Ok(false)
        } else {
            Err(texts::XGROUP_NEEDS_KEY.as_bytes().to_vec())
        };
    }
    if needs_group {
        let s = coll::write::<Stream>(p, db, k, now)
            .ok()
            .flatten()
            .expect("checked");
        if s.group(args[3]).is_none() {
            return Err(texts::nogroup_for_key(args[3], args[2]));
        }
    }
    Ok(true)
}

fn stream_in<'a>(p: &'a mut Partition, db: usize, k: &Key, now: u64) -> &'a mut Stream {
    coll::write::<Stream>(p, db, k, now)
        .ok()
        .flatten()
        .expect("stream checked under the same lock")
}

pub(super) fn xgroup_create(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some((mkstream, entries_read)) = parse_group_opts(ctx, args, true) else {
        return;
    };
    let key = args[2];
    let k = Key::new(key);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let exists = match check_group_key(&mut p, db, &k, now, args, mkstream, false) {
        Ok(e) => e,
        Err(e) => {
            drop(p);
            return error_bytes(ctx, e);
        }
    };
    if args.len() > 8 {
        drop(p);
        return subcommand_syntax(ctx, args);
    }
    let id = if args[4] == b"$" {
        if exists {
            stream_in(&mut p, db, &k, now).last_id()
        } else {
            StreamId::MIN
        }
    } else {
        match parse_strict_id(args[4], 0) {
            Ok(id) => id,
            Err(e) => {
                drop(p);
                return stream_error(ctx, e);
            }
        }
    };
    if !exists {
        p.insert(db, &k, CompactValue::from_stream(Stream::new()), None, now);
    }
    let r = stream_in(&mut p, db, &k, now).create_group(args[3], id, entries_read);
    drop(p);
    if !exists {
        ctx.modified(db, key);
    }
    match r {
        Ok(()) => {
            ctx.ok();
            ctx.notify(notify::STREAM, "xgroup-create", key);
        }
        Err(e) => stream_error(ctx, e),
    }
}

pub(super) fn xgroup_setid(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some((_, entries_read)) = parse_group_opts(ctx, args, false) else {
        return;
    };
    let key = args[2];
    let k = Key::new(key);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    if let Err(e) = check_group_key(&mut p, db, &k, now, args, false, true) {
        drop(p);
        return error_bytes(ctx, e);
    }
    if args.len() != 5 && args.len() != 7 {
        drop(p);
        return subcommand_syntax(ctx, args);
    }
    let s = stream_in(&mut p, db, &k, now);
    let id = if args[4] == b"$" {
        s.last_id()
    } else {
        match parse_id(args[4], 0) {
            Ok(id) => id,
            Err(e) => {
                drop(p);
                return stream_error(ctx, e);
            }
        }
    };
    s.set_group_id(args[3], id, entries_read);
    drop(p);
    ctx.ok();
    ctx.notify(notify::STREAM, "xgroup-setid", key);
}

pub(super) fn xgroup_destroy(ctx: &mut Ctx, args: &[&[u8]]) {
    let key = args[2];
    let k = Key::new(key);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    if let Err(e) = check_group_key(&mut p, db, &k, now, args, false, false) {
        drop(p);
        return error_bytes(ctx, e);
    }
    let gone = stream_in(&mut p, db, &k, now).destroy_group(args[3]);
    drop(p);
    if gone {
        ctx.out.int(1);
        // Blocked XREADGROUP clients of the group are answered -NOGROUP
        // by the blocking service (dispatch wakes the key's waiters).
        ctx.notify(notify::STREAM, "xgroup-destroy", key);
    } else {
        ctx.out.int(0);
    }
}

pub(super) fn xgroup_createconsumer(ctx: &mut Ctx, args: &[&[u8]]) {
    let key = args[2];
    let k = Key::new(key);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    if let Err(e) = check_group_key(&mut p, db, &k, now, args, false, true) {
        drop(p);
        return error_bytes(ctx, e);
    }
    let created = stream_in(&mut p, db, &k, now)
        .create_consumer(args[3], args[4], group_now(ctx))
        .unwrap_or(false);
    drop(p);
    ctx.out.int(created as i64);
    if created {
        ctx.notify(notify::STREAM, "xgroup-createconsumer", key);
    }
}

pub(super) fn xgroup_delconsumer(ctx: &mut Ctx, args: &[&[u8]]) {
    let key = args[2];
    let k = Key::new(key);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    if let Err(e) = check_group_key(&mut p, db, &k, now, args, false, true) {
        drop(p);
        return error_bytes(ctx, e);
    }
    let s = stream_in(&mut p, db, &k, now);
    let existed = s
        .group(args[3])
        .is_some_and(|g| g.consumer(args[4]).is_some());
    let pending = s.delete_consumer(args[3], args[4]).unwrap_or(0);
    drop(p);
    ctx.out.int(pending as i64);
    if existed {
        ctx.notify(notify::STREAM, "xgroup-delconsumer", key);
    }
}

pub(super) fn xgroup_help(ctx: &mut Ctx, _args: &[&[u8]]) {
    ctx.reply_help(&[
        "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CREATE <key> <groupname> <id|$> [option]",
        "    Create a new consumer group. Options are:",
        "    * MKSTREAM",
        "      Create the empty stream if it does not exist.",
        "    * ENTRIESREAD entries_read",
        "      Set the group's entries_read counter (internal use).",
        "CREATECONSUMER <key> <groupname> <consumer>",
        "    Create a new consumer in the specified group.",
        "DELCONSUMER <key> <groupname> <consumer>",
        "    Remove the specified consumer.",
        "DESTROY <key> <groupname>",
        "    Remove the specified group.",
        "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
        "    Set the current group ID and entries_read counter.",
        "HELP",
        "    Prints this help.",
    ]);
}

pub(super) fn xack(ctx: &mut Ctx, args: &[&[u8]]) {
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let s = match coll::read::<Stream>(&mut p, db, &k, now) {
        Err(_) => {
            drop(p);
            return ctx.error(ERR_WRONGTYPE);
        }
        Ok(None) => {
            drop(p);
            return ctx.out.int(0);
        }
        Ok(Some(s)) => s,
    };
    if s.group(args[2]).is_none() {
        drop(p);
        return ctx.out.int(0);
    }
    let mut ids = Vec::with_capacity(args.len() - 3);
    for a in &args[3..] {
        match parse_strict_id(a, 0) {
            Ok(id) => ids.push(id),
            Err(e) => {
                drop(p);
                return stream_error(ctx, e);
            }
        }
    }
    let s = stream_in(&mut p, db, &k, now);
    let acked = s.ack(args[2], &ids).unwrap_or(0);
    drop(p);
    ctx.client.changes += acked;
    ctx.out.int(acked as i64);
}

pub(super) fn xpending(ctx: &mut Ctx, args: &[&[u8]]) {
    let argc = args.len();
    if argc != 3 && !(6..=9).contains(&argc) {
        return ctx.syntax_error();
    }
    let mut query: Option<PendingQuery> = None;
    if argc >= 6 {
        let mut start_idx = 3;
        let mut min_idle = 0i64;
        if eq_ic(args[3], "idle") {
            let Some(v) = ctx.parse_i64(args[4]) else {
                return;
            };
            min_idle = v;
            if argc < 8 {
                return ctx.syntax_error();
            }
            start_idx += 2;
        }
        // Redis reads COUNT before the bounds.
        let Some(count) = args.get(start_idx + 2) else {
            return ctx.syntax_error();
        };
        let Some(count) = ctx.parse_i64(count) else {
            return;
        };
        let start = match parse_interval(args[start_idx], Bound::Start) {
            Ok(id) => id,
            Err(e) => return stream_error(ctx, e),
        };
        let end = match parse_interval(args[start_idx + 1], Bound::End) {
            Ok(id) => id,
            Err(e) => return stream_error(ctx, e),
        };
        // As in Redis, arguments after the consumer are ignored.
        let consumer = args.get(start_idx + 3).copied();
        query = Some(PendingQuery {
            start,
            end,
            count: count.max(0) as usize,
            consumer,
            min_idle,
        });
    }
    let (key, group) = (args[1], args[2]);
    let k = Key::new(key);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let s = match coll::read::<Stream>(&mut p, db, &k, now) {
        Err(_) => {
            drop(p);
            return ctx.error(ERR_WRONGTYPE);
        }
        Ok(s) => s,
    };
    let Some(s) = s.filter(|s| s.group(group).is_some()) else {
        drop(p);
        return error_bytes(ctx, texts::nogroup_key_or_group(key, group, false));
    };
    let out = &mut *ctx.out;
    match query {
        None => {
            let sum = s.pending_summary(group).expect("group checked");
            out.array_len(4);
            out.int(sum.count as i64);
            match sum.bounds {
                None => {
                    out.null_bulk();
                    out.null_bulk();
                    out.null_array();
                }
                Some((lo, hi)) => {
                    bulk_id(out, lo);
                    bulk_id(out, hi);
                    out.array_len(sum.consumers.len());
                    for (name, n) in &sum.consumers {
                        out.array_len(2);
                        out.bulk(name);
                        out.bulk_from_int(*n as i64);
                    }
                }
            }
        }
        Some(q) => {
            let rows = s
                .pending_range(group, &q, now as i64)
                .expect("group checked");
            out.array_len(rows.len());
            for r in &rows {
                out.array_len(4);
                bulk_id(out, r.id);
                out.bulk(&r.consumer);
                out.int(r.idle);
                out.int(r.delivery_count as i64);
            }
        }
    }
}

/// Looks up the key and group of XCLAIM / XAUTOCLAIM under `p`: None
/// after replying WRONGTYPE or NOGROUP.
fn claim_target(ctx: &mut Ctx, p: &mut Partition, k: &Key, args: &[&[u8]]) -> Option<()> {
    let (db, now) = (ctx.client.db, ctx.now_ms);
    match coll::read::<Stream>(p, db, k, now) {
        Err(_) => {
            ctx.error(ERR_WRONGTYPE);
            None
        }
        Ok(Some(s)) if s.group(args[2]).is_some() => Some(()),
        Ok(_) => {
            error_bytes(ctx, texts::nogroup_key_or_group(args[1], args[2], false));
            None
        }
    }
}

/// A claimed entry as XCLAIM / XAUTOCLAIM reply it (`[id, fields]`, or
/// nil when it is gone).
fn reply_claimed(out: &mut resp::ReplyBuf, s: &Stream, id: StreamId, justid: bool) {
    if justid {
        return bulk_id(out, id);
    }
    match s.get(id) {
        Some(e) => reply_entry(out, &e),
        None => out.null_bulk(),
    }
}

pub(super) fn xclaim(ctx: &mut Ctx, args: &[&[u8]]) {
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    if claim_target(ctx, &mut p, &k, args).is_none() {
        return;
    }
    let Some(min_idle) = parse_i64(args[4]) else {
        drop(p);
        return ctx.error("ERR Invalid min-idle-time argument for XCLAIM");
    };
    let min_idle = min_idle.max(0);
    let mut j = 5;
    let mut ids = Vec::new();
    while j < args.len() {
        match parse_strict_id(args[j], 0) {
            Ok(id) => ids.push(id),
            Err(_) => break,
        }
        j += 1;
    }
    let mut opts = ClaimOptions::default();
    while j < args.len() {
        let more = args.len() - 1 - j;
        let o = args[j];
        let num = |a: &[u8], what: &str| -> Result<i64, String> {
            parse_i64(a).ok_or_else(|| format!("ERR Invalid {what} option argument for XCLAIM"))
        };
        let r: Result<(), String> = if eq_ic(o, "force") {
            opts.force = true;
            Ok(())
        } else if eq_ic(o, "justid") {
            opts.justid = true;
            Ok(())
        } else if eq_ic(o, "idle") && more > 0 {
            j += 1;
            num(args[j], "IDLE").map(|v| {
                opts.idle = Some(v);
                opts.time = None;
            })
        } else if eq_ic(o, "time") && more > 0 {
            j += 1;
            num(args[j], "TIME").map(|v| {
                opts.time = Some(v);
                opts.idle = None;
            })
        } else if eq_ic(o, "retrycount") && more > 0 {
            j += 1;
            num(args[j], "RETRYCOUNT").map(|v| opts.retry_count = Some(v as u64))
        } else if eq_ic(o, "lastid") && more > 0 {
            j += 1;
            parse_strict_id(args[j], 0)
                .map(|id| opts.last_id = Some(id))
                .map_err(|e| e.message().to_string())
        } else {
            Err(format!(
                "ERR Unrecognized XCLAIM option '{}'",
                String::from_utf8_lossy(o)
            ))
        };
        if let Err(e) = r {
            drop(p);
            return ctx.error(&e);
        }
        j += 1;
    }
    // RETRYCOUNT below 0 means "not given" in Redis.
    if opts.retry_count.is_some_and(|c| (c as i64) < 0) {
        opts.retry_count = None;
    }
    let journaling = ctx.journaling();
    let gnow = group_now(ctx);
    let s = stream_in(&mut p, db, &k, now);
    let g = s.group(args[2]).expect("group checked");
    let had_consumer = g.consumer(args[3]).is_some();
    let last_before = g.last_id();
    // What a deleted entry's dropped PEL entry looked like (its form).
    let before: Vec<Option<Vec<Vec<u8>>>> = if journaling {
        ids.iter()
            .map(|&id| {
                (!s.contains(id))
                    .then(|| journal::pending_form(args[1], g, id))
                    .flatten()
            })
            .collect()
    } else {
        Vec::new()
    };
    let c = s
        .claim(args[2], args[3], min_idle, &ids, opts, gnow)
        .expect("group checked");
    let g = s.group(args[2]).expect("group checked");
    let created = !had_consumer && g.consumer(args[3]).is_some();
    let forms = journaling.then(|| claim_forms(args[1], g, &ids, &before, &c.claimed, last_before));
    let out = &mut *ctx.out;
    out.array_len(c.claimed.len());
    for id in &c.claimed {
        reply_claimed(out, s, *id, opts.justid);
    }
    drop(p);
    ctx.client.changes += 1;
    if let Some(forms) = forms {
        ctx.propagate_as(|| forms);
    }
    if created {
        ctx.notify(notify::STREAM, "xgroup-createconsumer", args[1]);
    }
}

pub(super) fn xautoclaim(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(min_idle) = parse_i64(args[4]) else {
        return ctx.error("ERR Invalid min-idle-time argument for XAUTOCLAIM");
    };
    let min_idle = min_idle.max(0);
    let start = match parse_interval(args[5], Bound::Start) {
        Ok(id) => id,
        Err(e) => return stream_error(ctx, e),
    };
    let mut count = 100usize;
    let mut justid = false;
    let mut j = 6;
    let max_count = i64::MAX / 16;
    while j < args.len() {
        let more = args.len() - 1 - j;
        if eq_ic(args[j], "count") && more > 0 {
            match parse_i64(args[j + 1]) {
                Some(c) if (1..=max_count).contains(&c) => count = c as usize,
                _ => return ctx.error("ERR COUNT must be > 0"),
            }
            j += 1;
        } else if eq_ic(args[j], "justid") {
            justid = true;
        } else {
            return ctx.syntax_error();
        }
        j += 1;
    }
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    if claim_target(ctx, &mut p, &k, args).is_none() {
        return;
    }
    // Redis allocates `count` IDs up front and refuses a COUNT its
    // allocator cannot give; petrel allocates as it goes and refuses
    // above 1 TiB worth of IDs.
    if count > (1usize << 40) / 16 {
        drop(p);
        return ctx
            .error("ERR Insufficient memory, failed allocating transient memory, COUNT too high.");
    }
    let journaling = ctx.journaling();
    let s = stream_in(&mut p, db, &k, now);
    let g = s.group(args[2]).expect("group checked");
    let had_consumer = g.consumer(args[3]).is_some();
    // The PEL entries of deleted stream entries the scan can reach (at
    // most `count * 10`, its attempts), as they are before it drops them.
    let before: Vec<(StreamId, Vec<Vec<u8>>)> = if journaling {
        g.pending_from(start)
            .take(count.saturating_mul(10))
            .filter(|(id, _, _)| !s.contains(*id))
            .filter_map(|(id, _, _)| journal::pending_form(args[1], g, id).map(|f| (id, f)))
            .collect()
    } else {
        Vec::new()
    };
    let opts = AutoClaimOptions {
        min_idle,
        start,
        count,
        justid,
    };
    let r = s
        .autoclaim(args[2], args[3], opts, group_now(ctx))
        .expect("group checked");
    let g = s.group(args[2]).expect("group checked");
    let created = !had_consumer && g.consumer(args[3]).is_some();
    // In PEL order, claimed and dropped entries interleaved, as scanned.
    let forms = journaling.then(|| {
        let mut all: Vec<(StreamId, Vec<Vec<u8>>)> = r
            .claimed
            .iter()
            .filter_map(|&id| journal::pending_form(args[1], g, id).map(|f| (id, f)))
            .collect();
        all.extend(
            before
                .into_iter()
                .filter(|(id, _)| r.deleted.binary_search(id).is_ok()),
        );
        all.sort_by_key(|(id, _)| *id);
        all.into_iter().map(|(_, f)| f).collect::<Vec<_>>()
    });
    let out = &mut *ctx.out;
    out.array_len(3);
    bulk_id(out, r.next);
    out.array_len(r.claimed.len());
    for id in &r.claimed {
        reply_claimed(out, s, *id, justid);
    }
    out.array_len(r.deleted.len());
    for id in &r.deleted {
        bulk_id(out, *id);
    }
    drop(p);
    ctx.client.changes += 1;
    if let Some(forms) = forms {
        ctx.propagate_as(|| forms);
    }
    if created {
        ctx.notify(notify::STREAM, "xgroup-createconsumer", args[1]);
    }
}

/// XCLAIM's journal forms, in argument order: each claimed entry as it is
/// now, each PEL entry dropped because its entry was deleted as it was
/// (`before`, by argument); a LASTID that moved the group with nothing
/// else journaled is `XGROUP SETID`.
fn claim_forms(
    key: &[u8],
    g: &collections::stream::group::Group,
    ids: &[StreamId],
    before: &[Option<Vec<Vec<u8>>>],
    claimed: &[StreamId],
    last_before: StreamId,
) -> Vec<Vec<Vec<u8>>> {
    let mut forms = Vec::new();
    let mut next = claimed.iter().peekable();
    let mut dropped: Vec<StreamId> = Vec::new();
    for (i, &id) in ids.iter().enumerate() {
        if let Some(f) = &before[i] {
            // A repeated ID was dropped the first time only.
            if !dropped.contains(&id) {
                dropped.push(id);
                let mut f = f.clone();
                // LASTID as the group is after the command (Redis moves
                // it before claiming).
                if let Some(last) = f.last_mut() {
                    *last = g.last_id().to_bytes();
                }
                forms.push(f);
            }
        } else if next.peek() == Some(&&id) {
            next.next();
            if let Some(f) = journal::pending_form(key, g, id) {
                forms.push(f);
            }
        }
    }
    if forms.is_empty() && g.last_id() != last_before {
        forms.push(journal::setid_form(key, g));
    }
    forms
}
