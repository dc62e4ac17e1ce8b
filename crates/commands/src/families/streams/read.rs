//! XLEN, XRANGE, XREVRANGE, XREAD and XREADGROUP (their blocking side is
//! [`super::blocking`]).

use collections::stream::id::texts;
use collections::stream::{parse_interval, parse_strict_id, Bound, Stream, StreamId};
use store::Key;

use super::blocking::{GroupRead, StreamOp, BLOCKED_DEFAULT_COUNT};
use super::{group_now, journal, reply_entries, reply_entry, stream_error};
use crate::base::errors::{self, ERR_NOT_INT, ERR_WRONGTYPE};
use crate::base::parse::{eq_ic, parse_i64};
use crate::kernel::coll;
use crate::kernel::ctx::Ctx;
use crate::kernel::notify;
use crate::services::blocking::park;

pub(super) fn xlen(ctx: &mut Ctx, args: &[&[u8]]) {
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let r = coll::read::<Stream>(&mut p, db, &k, now).map(|s| s.map_or(0, |s| s.len()));
    drop(p);
    match r {
        Ok(n) => ctx.out.int(n as i64),
        Err(_) => ctx.error(ERR_WRONGTYPE),
    }
}

pub(super) fn xrange(ctx: &mut Ctx, args: &[&[u8]]) {
    range_generic(ctx, args, false)
}

pub(super) fn xrevrange(ctx: &mut Ctx, args: &[&[u8]]) {
    range_generic(ctx, args, true)
}

fn range_generic(ctx: &mut Ctx, args: &[&[u8]], rev: bool) {
    let (start_arg, end_arg) = if rev {
        (args[3], args[2])
    } else {
        (args[2], args[3])
    };
    let start = match parse_interval(start_arg, Bound::Start) {
        Ok(id) => id,
        Err(e) => return stream_error(ctx, e),
    };
    let end = match parse_interval(end_arg, Bound::End) {
        Ok(id) => id,
        Err(e) => return stream_error(ctx, e),
    };
    let mut count: i64 = -1;
    let mut j = 4;
    while j < args.len() {
        if eq_ic(args[j], "count") && j + 1 < args.len() {
            let Some(c) = ctx.parse_i64(args[j + 1]) else {
                return;
            };
            count = c.max(0);
            j += 2;
        } else {
            return ctx.syntax_error();
        }
    }
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    match coll::read::<Stream>(&mut p, db, &k, now) {
        Err(_) => {
            drop(p);
            ctx.error(ERR_WRONGTYPE)
        }
        Ok(None) => ctx.out.array_len(0),
        Ok(Some(_)) if count == 0 => ctx.out.null_array(),
        Ok(Some(s)) => {
            let take = if count < 0 {
                usize::MAX
            } else {
                count as usize
            };
            reply_entries(ctx.out, s.range(start, end, rev).take(take));
        }
    }
}

/// Where a read starts for one key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum From {
    /// Entries after this ID (XREAD; XREADGROUP history of the consumer).
    After(StreamId),
    /// XREADGROUP `>`: entries never delivered to the group.
    New,
}

/// Parsed options of XREAD / XREADGROUP.
struct ReadArgs<'a> {
    count: usize,
    /// `BLOCK`: Some(deadline), deadline None = forever.
    block: Option<Option<u64>>,
    noack: bool,
    group: Option<(&'a [u8], &'a [u8])>,
    /// Index of the first key.
    streams: usize,
    nkeys: usize,
}

/// Redis's `getTimeoutFromObjectOrReply` in milliseconds.
fn parse_block_ms(arg: &[u8], now: u64) -> Result<Option<u64>, &'static str> {
    let t = parse_i64(arg).ok_or(errors::ERR_TIMEOUT_NOT_INTEGER_OUT_OF_RANGE)?;
    if t < 0 {
        return Err(errors::ERR_TIMEOUT_NEGATIVE);
    }
    if t == 0 {
        return Ok(None);
    }
    // Redis 7.0 does not check the sum; a deadline past the clock's range
    // is never reached.
    Ok(Some(now.saturating_add(t as u64)))
}

fn parse_read_args<'a>(
    args: &[&'a [u8]],
    xreadgroup: bool,
    now: u64,
) -> Result<ReadArgs<'a>, String> {
    let mut r = ReadArgs {
        count: 0,
        block: None,
        noack: false,
        group: None,
        streams: 0,
        nkeys: 0,
    };
    let mut i = 1;
    while i < args.len() {
        let more = args.len() - i - 1;
        let o = args[i];
        if eq_ic(o, "block") && more > 0 {
            i += 1;
            r.block = Some(parse_block_ms(args[i], now)?);
        } else if eq_ic(o, "count") && more > 0 {
            i += 1;
            r.count = parse_i64(args[i]).ok_or(ERR_NOT_INT)?.max(0) as usize;
        } else if eq_ic(o, "streams") && more > 0 {
            r.streams = i + 1;
            let n = args.len() - r.streams;
            if !n.is_multiple_of(2) {
                // Redis 7.0 names XREAD and `$` for XREADGROUP too.
                return Err("ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.".into());
            }
            r.nkeys = n / 2;
            break;
        } else if eq_ic(o, "group") && more >= 2 {
            if !xreadgroup {
                return Err(
                    "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead."
                        .into(),
                );
            }
            r.group = Some((args[i + 1], args[i + 2]));
            i += 2;
        } else if eq_ic(o, "noack") {
            if !xreadgroup {
                return Err(
                    "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead."
                        .into(),
                );
            }
            r.noack = true;
        } else {
            return Err(errors::ERR_SYNTAX.into());
        }
        i += 1;
    }
    if r.streams == 0 {
        return Err(errors::ERR_SYNTAX.into());
    }
    if xreadgroup && r.group.is_none() {
        return Err("ERR Missing GROUP option for XREADGROUP".into());
    }
    Ok(r)
}

pub(super) fn xread(ctx: &mut Ctx, args: &[&[u8]]) {
    read_generic(ctx, args, false)
}

pub(super) fn xreadgroup(ctx: &mut Ctx, args: &[&[u8]]) {
    read_generic(ctx, args, true)
}

const DOLLAR_IN_XREADGROUP: &str = "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.";
const GT_IN_XREAD: &str = "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.";

fn read_generic(ctx: &mut Ctx, args: &[&[u8]], xreadgroup: bool) {
    let ra = match parse_read_args(args, xreadgroup, ctx.now_ms) {
        Ok(r) => r,
        Err(e) => return ctx.error(&e),
    };
    let keys = &args[ra.streams..ra.streams + ra.nkeys];
    let id_args = &args[ra.streams + ra.nkeys..];
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let lock: Vec<Key> = keys.iter().map(|k| Key::new(k)).collect();
    // Held until the waiter is registered (see kernel::blocking).
    let hold = srv.keyspace.hold_keys(&lock);
    let mut g = srv.keyspace.lock_keys(&lock);

    // Resolve every key's start, checking types and groups in key order.
    let mut from: Vec<From> = Vec::with_capacity(keys.len());
    for (i, key) in keys.iter().enumerate() {
        let k = &lock[i];
        let s = match g.part(k).get_read(db, k, now) {
            None => None,
            Some(e) => match e.stream_mut() {
                Some(s) => Some(&*s),
                None => {
                    drop(g);
                    return ctx.error(ERR_WRONGTYPE);
                }
            },
        };
        if let Some((group, _)) = ra.group {
            if s.and_then(|s| s.group(group)).is_none() {
                drop(g);
                let e = texts::nogroup_key_or_group(key, group, true);
                return ctx.error_bytes(&e);
            }
        }
        let a = id_args[i];
        let f = if a == b"$" {
            if xreadgroup {
                drop(g);
                return ctx.error(DOLLAR_IN_XREADGROUP);
            }
            From::After(s.map_or(StreamId::MIN, |s| s.last_id()))
        } else if a == b">" {
            if !xreadgroup {
                drop(g);
                return ctx.error(GT_IN_XREAD);
            }
            From::New
        } else {
            match parse_strict_id(a, 0) {
                Ok(id) => From::After(id),
                Err(e) => {
                    drop(g);
                    return stream_error(ctx, e);
                }
            }
        };
        from.push(f);
    }

    // Serve what can be served now.
    let resp3 = ctx.resp3();
    // The consumer-group forms to journal (see `super::journal`).
    let journaling = ra.group.is_some() && ctx.journaling();
    let gnow = group_now(ctx);
    let out = &mut *ctx.out;
    let mut header = None;
    let mut served = 0usize;
    let mut created: Vec<&[u8]> = Vec::new();
    let mut forms: Vec<Vec<Vec<u8>>> = Vec::new();
    for (i, key) in keys.iter().enumerate() {
        let k = &lock[i];
        let Some(s) = g.part(k).get(db, k, now).and_then(|e| e.stream_mut()) else {
            continue;
        };
        let serve = match (ra.group, from[i]) {
            (None, From::After(gt)) => !s.is_empty() && s.last_valid_id() > gt,
            (Some(_), From::After(_)) => true,
            (Some((group, _)), From::New) => {
                !s.is_empty()
                    && s.group(group)
                        .is_some_and(|g| s.last_valid_id() > g.last_id())
            }
            (None, From::New) => false,
        };
        if !serve {
            continue;
        }
        if header.is_none() {
            header = Some(out.deferred_len());
        }
        served += 1;
        if !resp3 {
            out.array_len(2);
        }
        out.bulk(key);
        match (ra.group, from[i]) {
            (None, From::After(gt)) => {
                let start = gt.next().unwrap_or(StreamId::MAX);
                let take = if ra.count == 0 { usize::MAX } else { ra.count };
                reply_entries(out, s.range(start, StreamId::MAX, false).take(take));
            }
            (Some((group, consumer)), f) => {
                if s.group(group)
                    .is_some_and(|g| g.consumer(consumer).is_none())
                {
                    created.push(key);
                }
                let d = out.deferred_len();
                let mut n = 0;
                match f {
                    From::New => {
                        let mut delivered = Vec::new();
                        s.read_group_new(group, consumer, ra.count, ra.noack, gnow, |e| {
                            reply_entry(out, &e);
                            if journaling {
                                delivered.push(e.id);
                            }
                            n += 1;
                        });
                        if journaling {
                            let g = s.group(group).expect("group checked");
                            let new = created.last() == Some(key);
                            forms.extend(journal::read_new_forms(
                                key, g, consumer, &delivered, ra.noack, new, gnow,
                            ));
                        }
                    }
                    From::After(after) => {
                        s.read_group_history(group, consumer, after, ra.count, gnow, |id, e| {
                            match e {
                                Some(e) => reply_entry(out, &e),
                                None => {
                                    out.array_len(2);
                                    super::bulk_id(out, id);
                                    out.null_array();
                                }
                            }
                            n += 1;
                        });
                        // A history read journals only the consumer NOACK
                        // created (without NOACK, Redis journals nothing).
                        if journaling && ra.noack && created.last() == Some(key) {
                            forms.push(journal::createconsumer_form(key, group, consumer));
                        }
                    }
                }
                out.set_array_len(d, n);
            }
            (None, From::New) => unreachable!("refused while parsing"),
        }
    }
    drop(g);
    if let Some(d) = header {
        drop(hold);
        if resp3 {
            ctx.out.set_map_len(d, served);
        } else {
            ctx.out.set_array_len(d, served);
        }
        if ra.group.is_some() {
            ctx.client.changes += served as u64;
            if journaling {
                ctx.propagate_as(|| forms);
            }
        }
        for key in created {
            ctx.notify(notify::STREAM, "xgroup-createconsumer", key);
        }
        return;
    }
    let Some(deadline) = ra.block else {
        drop(hold);
        return ctx.out.null_array();
    };
    let op = StreamOp {
        keys: keys
            .iter()
            .zip(&from)
            .map(|(k, f)| {
                let id = match f {
                    From::After(id) => *id,
                    From::New => StreamId::MAX,
                };
                (k.to_vec(), id)
            })
            .collect(),
        group: ra.group.map(|(g, c)| GroupRead {
            group: g.to_vec(),
            consumer: c.to_vec(),
            noack: ra.noack,
        }),
        count: if ra.count == 0 {
            BLOCKED_DEFAULT_COUNT
        } else {
            ra.count
        },
    };
    park(ctx, keys, deadline, Box::new(op));
    drop(hold);
}
