//! XADD, XTRIM, XDEL, XSETID, and the trimming options XADD and XTRIM
//! share (Redis 7.0's `streamParseAddOrTrimArgsOrReply`, same checks in
//! the same order).

use collections::stream::id::texts;
use collections::stream::{
    parse_add_id, parse_strict_id, AddId, NodeLimits, Stream, StreamError, StreamId, Trim, TrimTo,
};
use store::{CompactValue, Key};

use super::{bulk_id, stream_error};
use crate::base::errors::{ERR_NOT_INT, ERR_WRONGTYPE};
use crate::base::parse::{eq_ic, parse_i64};
use crate::kernel::coll;
use crate::kernel::ctx::Ctx;
use crate::kernel::notify;

/// What the options of XADD / XTRIM asked for.
#[derive(Debug, Default)]
pub(super) struct AddTrimArgs {
    pub trim: Option<Trim>,
    pub no_mkstream: bool,
    /// XADD's ID (`None` = `*`).
    pub id: Option<AddId>,
    /// Index of the ID argument (XADD) or one past the options (XTRIM).
    pub end: usize,
}

/// The LIMIT used with `~` when none is given: `100 *
/// stream-node-max-entries`, 10000 when that is 0, at most 1000000.
fn default_approx_limit(limits: NodeLimits) -> u64 {
    let l = Trim::default_limit(true, limits);
    if l == 0 {
        10_000
    } else {
        l.min(1_000_000)
    }
}

/// Parses the options from `args[2]` on. Errors are reply texts.
/// `obey`: the AOF loader's client, whose trims were rewritten to exact
/// thresholds: a LIMIT is accepted without `~` and ignored (as Redis 7.0
/// does for its AOF and master clients).
pub(super) fn parse_add_or_trim(
    args: &[&[u8]],
    xadd: bool,
    limits: NodeLimits,
    obey: bool,
) -> Result<AddTrimArgs, String> {
    let mut out = AddTrimArgs::default();
    let mut to: Option<TrimTo> = None;
    let mut approx = false;
    let mut limit: i64 = 0;
    let mut limit_given = false;
    let mut i = 2;
    let argc = args.len();
    while i < argc {
        let more = argc - 1 - i;
        let opt = args[i];
        if xadd && opt == b"*" {
            break;
        } else if (eq_ic(opt, "maxlen") || eq_ic(opt, "minid")) && more > 0 {
            if to.is_some() {
                return Err(texts::MAXLEN_AND_MINID.into());
            }
            approx = false;
            let next = args[i + 1];
            if more >= 2 && next == b"~" {
                approx = true;
                i += 1;
            } else if more >= 2 && next == b"=" {
                i += 1;
            }
            if eq_ic(opt, "maxlen") {
                let n = parse_i64(args[i + 1]).ok_or(ERR_NOT_INT)?;
                if n < 0 {
                    return Err(texts::MAXLEN_NEGATIVE.into());
                }
                to = Some(TrimTo::MaxLen(n as u64));
            } else {
                let id = parse_strict_id(args[i + 1], 0).map_err(|e| e.message().to_string())?;
                to = Some(TrimTo::MinId(id));
            }
            i += 1;
        } else if eq_ic(opt, "limit") && more > 0 {
            limit = parse_i64(args[i + 1]).ok_or(ERR_NOT_INT)?;
            if limit < 0 {
                return Err(texts::LIMIT_NEGATIVE.into());
            }
            limit_given = true;
            i += 1;
        } else if xadd && eq_ic(opt, "nomkstream") {
            out.no_mkstream = true;
        } else if xadd {
            out.id = Some(parse_add_id(opt).map_err(|e| e.message().to_string())?);
            break;
        } else {
            return Err(crate::base::errors::ERR_SYNTAX.into());
        }
        i += 1;
    }
    if limit != 0 && to.is_none() {
        return Err(texts::LIMIT_WITHOUT_STRATEGY.into());
    }
    if !xadd && to.is_none() {
        return Err(texts::XTRIM_NO_STRATEGY.into());
    }
    let limit = if obey {
        0
    } else if limit_given {
        if !approx {
            return Err(texts::LIMIT_WITHOUT_TILDE.into());
        }
        limit as u64
    } else if approx {
        default_approx_limit(limits)
    } else {
        0
    };
    out.trim = to.map(|to| Trim { to, approx, limit });
    out.end = i;
    Ok(out)
}

/// Rewrites an approximate trim among `argv[2..end]` (`MAXLEN ~ n` /
/// `MINID ~ id`) into the exact threshold `s` now satisfies: its length,
/// or its first entry's ID (kept as given when the stream is empty: the
/// exact trim then empties it too). A LIMIT stays, as Redis leaves it;
/// the AOF loader ignores it.
fn exact_trim(argv: &mut [Vec<u8>], end: usize, s: &Stream) {
    let end = end.min(argv.len());
    for i in 3..end.saturating_sub(1) {
        if argv[i] != b"~" {
            continue;
        }
        if eq_ic(&argv[i - 1], "maxlen") {
            argv[i + 1] = s.len().to_string().into_bytes();
        } else if eq_ic(&argv[i - 1], "minid") {
            if let Some(e) = s.first_entry() {
                argv[i + 1] = e.id.to_bytes();
            }
        } else {
            continue;
        }
        argv[i] = b"=".to_vec();
        return;
    }
}

pub(super) fn xadd(ctx: &mut Ctx, args: &[&[u8]]) {
    let limits = ctx.settings.stream_node;
    let obey = ctx.client.replay_now_ms.is_some();
    let parsed = match parse_add_or_trim(args, true, limits, obey) {
        Ok(p) => p,
        Err(e) => return ctx.error(&e),
    };
    let field_pos = parsed.end + 1;
    if args.len() < field_pos + 2 || (args.len() - field_pos) % 2 == 1 {
        return ctx.wrong_arity();
    }
    // 0-0 is refused before a stream may be created.
    if parsed.id == Some(AddId::Explicit(StreamId::MIN)) {
        return stream_error(ctx, StreamError::XaddIdZero);
    }
    let key = args[1];
    let k = Key::new(key);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    match coll::check::<Stream>(&mut p, db, &k, now) {
        Err(_) => {
            drop(p);
            return ctx.error(ERR_WRONGTYPE);
        }
        Ok(false) if parsed.no_mkstream => {
            drop(p);
            return ctx.out.null_bulk();
        }
        Ok(false) => {
            p.insert(db, &k, CompactValue::from_stream(Stream::new()), None, now);
        }
        Ok(true) => {}
    }
    let s = coll::write::<Stream>(&mut p, db, &k, now)
        .ok()
        .flatten()
        .expect("stream checked or just created");
    let id = match s.add(
        parsed.id.unwrap_or(AddId::Auto),
        &args[field_pos..],
        now as i64,
        limits,
    ) {
        Ok(id) => id,
        Err(e) => {
            drop(p);
            return stream_error(ctx, e);
        }
    };
    let trimmed = parsed.trim.map_or(0, |t| s.trim(t));
    // Redis propagates the generated ID, and an approximate trim as the
    // exact threshold it reached (the node layout is not replayed).
    let journaled = ctx.journaling().then(|| {
        let mut argv: Vec<Vec<u8>> = args.iter().map(|a| a.to_vec()).collect();
        argv[parsed.end] = id.to_bytes();
        exact_trim(&mut argv, parsed.end, s);
        argv
    });
    drop(p);
    if let Some(argv) = journaled {
        ctx.propagate_as(|| vec![argv]);
    }
    bulk_id(ctx.out, id);
    ctx.notify(notify::STREAM, "xadd", key);
    if trimmed > 0 {
        ctx.notify(notify::STREAM, "xtrim", key);
    }
}

pub(super) fn xtrim(ctx: &mut Ctx, args: &[&[u8]]) {
    let obey = ctx.client.replay_now_ms.is_some();
    let parsed = match parse_add_or_trim(args, false, ctx.settings.stream_node, obey) {
        Ok(p) => p,
        Err(e) => return ctx.error(&e),
    };
    let trim = parsed.trim.expect("XTRIM parsing requires a strategy");
    let key = args[1];
    let k = Key::new(key);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let deleted = match coll::write::<Stream>(&mut p, db, &k, now) {
        Err(_) => {
            drop(p);
            return ctx.error(ERR_WRONGTYPE);
        }
        Ok(None) => 0,
        Ok(Some(s)) => {
            let deleted = s.trim(trim);
            if deleted > 0 && trim.approx && ctx.journaling() {
                let mut argv: Vec<Vec<u8>> = args.iter().map(|a| a.to_vec()).collect();
                exact_trim(&mut argv, parsed.end, s);
                ctx.propagate_as(|| vec![argv]);
            }
            deleted
        }
    };
    drop(p);
    if deleted > 0 {
        ctx.notify(notify::STREAM, "xtrim", key);
    }
    ctx.out.int(deleted as i64);
}

pub(super) fn xdel(ctx: &mut Ctx, args: &[&[u8]]) {
    let key = args[1];
    let k = Key::new(key);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let s = match coll::write::<Stream>(&mut p, db, &k, now) {
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
    let mut ids = Vec::with_capacity(args.len() - 2);
    for a in &args[2..] {
        match parse_strict_id(a, 0) {
            Ok(id) => ids.push(id),
            Err(e) => {
                drop(p);
                return stream_error(ctx, e);
            }
        }
    }
    let deleted = s.delete(&ids);
    drop(p);
    if deleted > 0 {
        ctx.notify(notify::STREAM, "xdel", key);
    }
    ctx.out.int(deleted as i64);
}

pub(super) fn xsetid(ctx: &mut Ctx, args: &[&[u8]]) {
    let id = match parse_strict_id(args[2], 0) {
        Ok(id) => id,
        Err(e) => return stream_error(ctx, e),
    };
    let mut entries_added: Option<u64> = None;
    let mut max_deleted: Option<StreamId> = None;
    let mut i = 3;
    while i < args.len() {
        let more = args.len() - 1 - i;
        if eq_ic(args[i], "entriesadded") && more > 0 {
            let Some(n) = ctx.parse_i64(args[i + 1]) else {
                return;
            };
            if n < 0 {
                return ctx.error(texts::ENTRIES_ADDED_NEGATIVE);
            }
            entries_added = Some(n as u64);
        } else if eq_ic(args[i], "maxdeletedid") && more > 0 {
            let md = match parse_strict_id(args[i + 1], 0) {
                Ok(v) => v,
                Err(e) => return stream_error(ctx, e),
            };
            if id < md {
                return stream_error(ctx, StreamError::SetIdBelowGivenMaxDeleted);
            }
            max_deleted = Some(md);
        } else {
            return ctx.syntax_error();
        }
        i += 2;
    }
    let key = args[1];
    let k = Key::new(key);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let r = match coll::write::<Stream>(&mut p, db, &k, now) {
        Err(_) => Err(ERR_WRONGTYPE),
        Ok(None) => Err(texts::NO_SUCH_KEY),
        Ok(Some(s)) => s
            .set_id(id, entries_added, max_deleted)
            .map_err(|e| e.message()),
    };
    drop(p);
    match r {
        Ok(()) => {
            ctx.ok();
            ctx.notify(notify::STREAM, "xsetid", key);
        }
        Err(e) => ctx.error(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(a: &[&str], xadd: bool) -> Result<AddTrimArgs, String> {
        let v: Vec<&[u8]> = a.iter().map(|s| s.as_bytes()).collect();
        parse_add_or_trim(&v, xadd, NodeLimits::default(), false)
    }

    #[test]
    fn options_like_redis() {
        let p = parse(&["xadd", "s", "MAXLEN", "~", "10", "*", "f", "v"], true).unwrap();
        assert_eq!(
            p.trim,
            Some(Trim {
                to: TrimTo::MaxLen(10),
                approx: true,
                limit: 10_000
            })
        );
        assert_eq!(p.end, 5);
        let p = parse(
            &[
                "xadd",
                "s",
                "nomkstream",
                "minid",
                "=",
                "5",
                "1-1",
                "f",
                "v",
            ],
            true,
        )
        .unwrap();
        assert!(p.no_mkstream);
        assert_eq!(p.id, Some(AddId::Explicit(StreamId::new(1, 1))));
        assert_eq!(p.trim.unwrap().to, TrimTo::MinId(StreamId::new(5, 0)));
        assert_eq!(
            parse(&["xtrim", "s", "maxlen", "1", "limit", "5"], false).err(),
            Some(texts::LIMIT_WITHOUT_TILDE.to_string())
        );
        assert_eq!(
            parse(&["xtrim", "s", "limit", "5"], false).err(),
            Some(texts::LIMIT_WITHOUT_STRATEGY.to_string())
        );
        assert_eq!(
            parse(&["xtrim", "s", "maxlen", "1", "minid", "2"], false).err(),
            Some(texts::MAXLEN_AND_MINID.to_string())
        );
        assert_eq!(
            parse(&["xtrim", "s", "maxlen", "~"], false).err(),
            Some(ERR_NOT_INT.to_string())
        );
        assert_eq!(
            parse(&["xtrim", "s"], false).err(),
            Some(texts::XTRIM_NO_STRATEGY.to_string())
        );
        let p = parse(&["xtrim", "s", "maxlen", "~", "0", "limit", "0"], false).unwrap();
        assert_eq!(p.trim.unwrap().limit, 0);
    }
}
