//! XINFO STREAM [FULL [COUNT n]], XINFO GROUPS, XINFO CONSUMERS, XINFO
//! HELP, with Redis 7.0's fields in its order (maps in RESP3).
//!
//! `radix-tree-nodes` is Redis's rax node count, which petrel has no rax
//! to read: it is computed from the node keys (master IDs) as the node
//! count of Redis's compressed radix tree over them ([`rax_nodes`]); it
//! equals Redis's for streams built by appends (checked in
//! `diff_streams.rs`), and may differ after deletions, where Redis's tree
//! keeps shapes its history left.

use collections::stream::id::texts;
use collections::stream::{Stream, StreamId};
use resp::ReplyBuf;
use store::Key;

use super::{bulk_id, reply_entries};
use crate::base::errors::{self, ERR_WRONGTYPE};
use crate::base::parse::eq_ic;
use crate::kernel::coll;
use crate::kernel::ctx::Ctx;

pub(super) fn xinfo_help(ctx: &mut Ctx, _args: &[&[u8]]) {
    ctx.reply_help(&[
        "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CONSUMERS <key> <groupname>",
        "    Show consumers of <groupname>.",
        "GROUPS <key>",
        "    Show the stream consumer groups.",
        "STREAM <key> [FULL [COUNT <count>]",
        "    Show information about the stream.",
        "HELP",
        "    Prints this help.",
    ]);
}

/// Node count of Redis's radix tree holding these sorted, distinct 16-byte
/// keys from byte `d` on: a compressed node for a run shared by all keys,
/// a branching node where they part, and an (empty) node where a key ends.
pub(crate) fn rax_nodes(keys: &[[u8; 16]], d: usize) -> u64 {
    if d == 16 {
        return 1;
    }
    match keys.len() {
        0 => 1,
        1 => 2,
        _ => {
            let (first, last) = (&keys[0], &keys[keys.len() - 1]);
            let mut l = d;
            while l < 16 && first[l] == last[l] {
                l += 1;
            }
            let compressed = (l > d) as u64;
            // A branching node at depth l, one child per distinct byte.
            let mut n = 1;
            let mut i = 0;
            while i < keys.len() {
                let b = keys[i][l];
                let mut j = i + 1;
                while j < keys.len() && keys[j][l] == b {
                    j += 1;
                }
                n += rax_nodes(&keys[i..j], l + 1);
                i = j;
            }
            compressed + n
        }
    }
}

/// Looks up the stream of `args[2]` for XINFO: None after replying.
fn lookup<'a>(ctx: &mut Ctx, p: &'a mut store::keyspace::Partition, k: &Key) -> Option<&'a Stream> {
    let (db, now) = (ctx.client.db, ctx.now_ms);
    match coll::read::<Stream>(p, db, k, now) {
        Err(_) => {
            ctx.error(ERR_WRONGTYPE);
            None
        }
        Ok(None) => {
            ctx.error(texts::NO_SUCH_KEY);
            None
        }
        Ok(Some(s)) => Some(s),
    }
}

fn field(out: &mut ReplyBuf, name: &str) {
    out.bulk(name.as_bytes());
}

fn opt_int(out: &mut ReplyBuf, v: Option<i64>) {
    match v {
        Some(v) => out.int(v),
        None => out.null_bulk(),
    }
}

/// XINFO STREAM's options: (full, count).
fn stream_opts(args: &[&[u8]]) -> Result<(bool, i64), String> {
    let opts = &args[3..];
    if opts.is_empty() {
        return Ok((false, 10));
    }
    let syntax = (opts.len() != 1 && opts.len() != 3)
        || !eq_ic(opts[0], "full")
        || (opts.len() == 3 && !eq_ic(opts[1], "count"));
    if syntax {
        let sub = String::from_utf8_lossy(args[1]).into_owned();
        return Err(errors::unknown_subcommand_or_arity(&sub, "XINFO"));
    }
    if opts.len() == 3 {
        let c = crate::base::parse::parse_i64(opts[2]).ok_or(errors::ERR_NOT_INT)?;
        return Ok((true, if c < 0 { 10 } else { c }));
    }
    Ok((true, 10))
}

pub(super) fn xinfo_stream(ctx: &mut Ctx, args: &[&[u8]]) {
    let k = Key::new(args[2]);
    let srv = ctx.srv;
    let mut p = srv.keyspace.lock(&k);
    // Redis looks the key up before reading the options.
    let Some(s) = lookup(ctx, &mut p, &k) else {
        return;
    };
    let (full, count) = match stream_opts(args) {
        Ok(v) => v,
        Err(e) => return ctx.error(&e),
    };
    let out = &mut *ctx.out;
    out.map_len(if full { 9 } else { 10 });
    field(out, "length");
    out.int(s.len() as i64);
    field(out, "radix-tree-keys");
    out.int(s.node_count() as i64);
    field(out, "radix-tree-nodes");
    let keys: Vec<[u8; 16]> = s.nodes().map(|(id, _)| id.to_be_bytes()).collect();
    out.int(rax_nodes(&keys, 0) as i64);
    field(out, "last-generated-id");
    bulk_id(out, s.last_id());
    field(out, "max-deleted-entry-id");
    bulk_id(out, s.max_deleted_id());
    field(out, "entries-added");
    out.int(s.entries_added() as i64);
    field(out, "recorded-first-entry-id");
    bulk_id(out, s.first_id());
    if !full {
        field(out, "groups");
        out.int(s.groups().len() as i64);
        field(out, "first-entry");
        match s.first_entry() {
            Some(e) => super::reply_entry(out, &e),
            None => out.null_bulk(),
        }
        field(out, "last-entry");
        match s.last_entry() {
            Some(e) => super::reply_entry(out, &e),
            None => out.null_bulk(),
        }
        return;
    }
    let take = if count == 0 {
        usize::MAX
    } else {
        count as usize
    };
    field(out, "entries");
    reply_entries(out, s.range(StreamId::MIN, StreamId::MAX, false).take(take));
    field(out, "groups");
    out.array_len(s.groups().len());
    for g in s.groups() {
        out.map_len(7);
        field(out, "name");
        out.bulk(g.name());
        field(out, "last-delivered-id");
        bulk_id(out, g.last_id());
        field(out, "entries-read");
        opt_int(out, g.entries_read().map(|v| v as i64));
        field(out, "lag");
        opt_int(out, s.group_lag(g));
        field(out, "pel-count");
        out.int(g.pending_len() as i64);
        field(out, "pending");
        let pel: Vec<_> = g.pending().take(take).collect();
        out.array_len(pel.len());
        for (id, nack, consumer) in pel {
            out.array_len(4);
            bulk_id(out, id);
            out.bulk(consumer);
            out.int(nack.delivery_time);
            out.int(nack.delivery_count as i64);
        }
        field(out, "consumers");
        out.array_len(g.consumer_count());
        for c in g.consumers() {
            out.map_len(4);
            field(out, "name");
            out.bulk(c.name());
            field(out, "seen-time");
            out.int(c.seen_time());
            field(out, "pel-count");
            out.int(c.pending() as i64);
            field(out, "pending");
            let ids: Vec<StreamId> = c.pending_ids().take(take).collect();
            out.array_len(ids.len());
            for id in ids {
                let n = g
                    .nack(id)
                    .expect("a consumer's pending entry is in the group PEL");
                out.array_len(3);
                bulk_id(out, id);
                out.int(n.delivery_time);
                out.int(n.delivery_count as i64);
            }
        }
    }
}

pub(super) fn xinfo_groups(ctx: &mut Ctx, args: &[&[u8]]) {
    let k = Key::new(args[2]);
    let srv = ctx.srv;
    let mut p = srv.keyspace.lock(&k);
    let Some(s) = lookup(ctx, &mut p, &k) else {
        return;
    };
    let rows = s.groups_info();
    let out = &mut *ctx.out;
    out.array_len(rows.len());
    for g in &rows {
        out.map_len(6);
        field(out, "name");
        out.bulk(&g.name);
        field(out, "consumers");
        out.int(g.consumers as i64);
        field(out, "pending");
        out.int(g.pending as i64);
        field(out, "last-delivered-id");
        bulk_id(out, g.last_delivered_id);
        field(out, "entries-read");
        opt_int(out, g.entries_read.map(|v| v as i64));
        field(out, "lag");
        opt_int(out, g.lag);
    }
}

pub(super) fn xinfo_consumers(ctx: &mut Ctx, args: &[&[u8]]) {
    let k = Key::new(args[2]);
    let (srv, now) = (ctx.srv, ctx.now_ms);
    let mut p = srv.keyspace.lock(&k);
    let Some(s) = lookup(ctx, &mut p, &k) else {
        return;
    };
    let Some(rows) = s.consumers_info(args[3], now as i64) else {
        drop(p);
        let e = texts::nogroup_for_key(args[3], args[2]);
        return ctx.error_bytes(&e);
    };
    let out = &mut *ctx.out;
    out.array_len(rows.len());
    for c in &rows {
        out.map_len(3);
        field(out, "name");
        out.bulk(&c.name);
        field(out, "pending");
        out.int(c.pending as i64);
        field(out, "idle");
        out.int(c.idle);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(ids: &[(u64, u64)]) -> Vec<[u8; 16]> {
        ids.iter()
            .map(|&(ms, seq)| StreamId::new(ms, seq).to_be_bytes())
            .collect()
    }

    #[test]
    fn rax_shapes() {
        assert_eq!(rax_nodes(&[], 0), 1);
        assert_eq!(rax_nodes(&keys(&[(1, 0)]), 0), 2);
        // Two keys parting at the last byte: compressed run, branch, and
        // one leaf per key.
        assert_eq!(rax_nodes(&keys(&[(1, 0), (1, 1)]), 0), 4);
        // Parting at the first byte of the sequence: branch, then each
        // key's compressed rest and its leaf.
        assert_eq!(rax_nodes(&keys(&[(1, 0), (1, 1 << 56)]), 0), 6);
    }
}
