//! Stream commands (Redis 7.0 X* family) over `collections::stream`.
//!
//! * [`write`]: XADD, XTRIM, XDEL, XSETID and the trimming options;
//! * [`read`]: XLEN, XRANGE, XREVRANGE, XREAD, XREADGROUP;
//! * [`blocking`]: the [`blocking::StreamOp`] the blocking service runs
//!   for a blocked XREAD/XREADGROUP;
//! * [`groups`]: XGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM;
//! * [`info`]: XINFO (all subcommands).
//!
//! Invariants: arguments are parsed (with Redis's checks in Redis's order)
//! before anything changes; an empty stream stays in the keyspace, as in
//! Redis (it keeps its last ID and groups); every change fires Redis's
//! keyspace event (`xadd`, `xtrim`, `xdel`, `xsetid`, `xgroup-*`). The
//! stream value, its IDs' parsing and its error texts are in
//! `collections::stream`.

pub mod blocking;
mod groups;
mod info;
mod journal;
mod read;
mod write;

use collections::listpack::LpValue;
use collections::stream::{EntryRef, StreamError, StreamId};
use resp::ReplyBuf;

use crate::kernel::ctx::Ctx;
use crate::kernel::spec::{flag, CommandSpec, Docs, KeyPos};

use groups::*;
use info::*;
use read::*;
use write::*;

/// The time consumer groups record (delivery and seen times): the clock,
/// also while the AOF loads (its loader runs at time 0 so that no key
/// expires, but Redis stamps the pending entries it loads with the time of
/// loading, and an XCLAIM TIME past "now" would become 0).
fn group_now(ctx: &Ctx) -> i64 {
    if ctx.client.replay_now_ms.is_some() {
        crate::base::clock::unix_time_ms() as i64
    } else {
        ctx.now_ms as i64
    }
}

macro_rules! spec {
    ($name:expr, $arity:expr, $flags:expr, $acl:expr, $keys:expr, $cx:expr, $sum:expr, $h:expr) => {
        CommandSpec {
            acl: $acl,
            keys: $keys,
            docs: Docs::new($cx, $sum),
            ..CommandSpec::new($name, $arity, $flags, $h)
        }
    };
}

const XGROUP_SUBS: &[CommandSpec] = &[
    spec!(
        "xgroup|create",
        -5,
        flag::WRITE | flag::DENYOOM,
        &["write", "stream", "slow"],
        KeyPos::range(2, 2, 1),
        "O(1)",
        "Create a consumer group.",
        xgroup_create
    ),
    spec!(
        "xgroup|createconsumer",
        5,
        flag::WRITE | flag::DENYOOM,
        &["write", "stream", "slow"],
        KeyPos::range(2, 2, 1),
        "O(1)",
        "Create a consumer in a consumer group.",
        xgroup_createconsumer
    ),
    spec!(
        "xgroup|delconsumer",
        5,
        flag::WRITE,
        &["write", "stream", "slow"],
        KeyPos::range(2, 2, 1),
        "O(1)",
        "Delete a consumer from a consumer group.",
        xgroup_delconsumer
    ),
    spec!(
        "xgroup|destroy",
        4,
        flag::WRITE,
        &["write", "stream", "slow"],
        KeyPos::range(2, 2, 1),
        "O(N) where N is the number of entries in the group's pending entries list (PEL).",
        "Destroy a consumer group.",
        xgroup_destroy
    ),
    spec!(
        "xgroup|help",
        2,
        flag::LOADING | flag::STALE,
        &["stream", "slow"],
        KeyPos::NONE,
        "O(1)",
        "Show helpful text about the different subcommands",
        xgroup_help
    ),
    spec!(
        "xgroup|setid",
        -5,
        flag::WRITE,
        &["write", "stream", "slow"],
        KeyPos::range(2, 2, 1),
        "O(1)",
        "Set a consumer group to an arbitrary last delivered ID value.",
        xgroup_setid
    ),
];

const XINFO_SUBS: &[CommandSpec] = &[
    spec!(
        "xinfo|consumers",
        4,
        flag::READONLY,
        &["read", "stream", "slow"],
        KeyPos::range(2, 2, 1),
        "O(1)",
        "List the consumers in a consumer group",
        xinfo_consumers
    ),
    spec!(
        "xinfo|groups",
        3,
        flag::READONLY,
        &["read", "stream", "slow"],
        KeyPos::range(2, 2, 1),
        "O(1)",
        "List the consumer groups of a stream",
        xinfo_groups
    ),
    spec!(
        "xinfo|help",
        2,
        flag::LOADING | flag::STALE,
        &["stream", "slow"],
        KeyPos::NONE,
        "O(1)",
        "Show helpful text about the different subcommands",
        xinfo_help
    ),
    spec!(
        "xinfo|stream",
        -3,
        flag::READONLY,
        &["read", "stream", "slow"],
        KeyPos::range(2, 2, 1),
        "O(1)",
        "Get information about a stream",
        xinfo_stream
    ),
];

pub const COMMANDS: &[CommandSpec] = &[
    spec!("xadd", -5, flag::WRITE | flag::DENYOOM | flag::FAST, &["write", "stream", "fast"], KeyPos::ONE,
        "O(1) when adding a new entry, O(N) when trimming where N being the number of entries evicted.",
        "Appends a new entry to a stream",
        xadd),
    spec!("xtrim", -4, flag::WRITE, &["write", "stream", "slow"], KeyPos::ONE,
        "O(N), with N being the number of evicted entries. Constant times are very small however, since entries are organized in macro nodes containing multiple entries that can be released with a single deallocation.",
        "Trims the stream to (approximately if '~' is passed) a certain size",
        xtrim),
    spec!("xdel", -3, flag::WRITE | flag::FAST, &["write", "stream", "fast"], KeyPos::ONE,
        "O(1) for each single item to delete in the stream, regardless of the stream size.",
        "Removes the specified entries from the stream. Returns the number of items actually deleted, that may be different from the number of IDs passed in case certain IDs do not exist.",
        xdel),
    spec!("xlen", 2, flag::READONLY | flag::FAST, &["read", "stream", "fast"], KeyPos::ONE,
        "O(1)",
        "Return the number of entries in a stream",
        xlen),
    spec!("xrange", -4, flag::READONLY, &["read", "stream", "slow"], KeyPos::ONE,
        "O(N) with N being the number of elements being returned. If N is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1).",
        "Return a range of elements in a stream, with IDs matching the specified IDs interval",
        xrange),
    spec!("xrevrange", -4, flag::READONLY, &["read", "stream", "slow"], KeyPos::ONE,
        "O(N) with N being the number of elements returned. If N is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1).",
        "Return a range of elements in a stream, with IDs matching the specified IDs interval, in reverse order (from greater to smaller IDs) compared to XRANGE",
        xrevrange),
    CommandSpec {
        getkeys: Some(streams_keys),
        ..spec!("xread", -4, flag::READONLY | flag::BLOCKING | flag::MOVABLEKEYS, &["read", "stream", "slow", "blocking"], KeyPos::NONE,
            "For each stream mentioned: O(N) with N being the number of elements being returned, it means that XREAD-ing with a fixed COUNT is O(1). Note that when the BLOCK option is used, XADD will pay O(M) time in order to serve the M clients blocked on the stream getting new data.",
            "Return never seen elements in multiple streams, with IDs greater than the ones reported by the caller for each stream. Can block.",
            xread)
    },
    CommandSpec {
        getkeys: Some(streams_keys),
        ..spec!("xreadgroup", -7, flag::WRITE | flag::BLOCKING | flag::MOVABLEKEYS, &["write", "stream", "slow", "blocking"], KeyPos::NONE,
            "For each stream mentioned: O(M) with M being the number of elements returned. If M is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1). On the other side when XREADGROUP blocks, XADD will pay the O(N) time in order to serve the N clients blocked on the stream getting new data.",
            "Return new entries from a stream using a consumer group, or access the history of the pending entries for a given consumer. Can block.",
            xreadgroup)
    },
    spec!("xack", -4, flag::WRITE | flag::FAST, &["write", "stream", "fast"], KeyPos::ONE,
        "O(1) for each message ID processed.",
        "Marks a pending message as correctly processed, effectively removing it from the pending entries list of the consumer group. Return value of the command is the number of messages successfully acknowledged, that is, the IDs we were actually able to resolve in the PEL.",
        xack),
    spec!("xpending", -3, flag::READONLY, &["read", "stream", "slow"], KeyPos::ONE,
        "O(N) with N being the number of elements returned, so asking for a small fixed number of entries per call is O(1). O(M), where M is the total number of entries scanned when used with the IDLE filter. When the command returns just the summary and the list of consumers is small, it runs in O(1) time; otherwise, an additional O(N) time for iterating every consumer.",
        "Return information and entries from a stream consumer group pending entries list, that are messages fetched but never acknowledged.",
        xpending),
    spec!("xclaim", -6, flag::WRITE | flag::FAST, &["write", "stream", "fast"], KeyPos::ONE,
        "O(log N) with N being the number of messages in the PEL of the consumer group.",
        "Changes (or acquires) ownership of a message in a consumer group, as if the message was delivered to the specified consumer.",
        xclaim),
    spec!("xautoclaim", -6, flag::WRITE | flag::FAST, &["write", "stream", "fast"], KeyPos::ONE,
        "O(1) if COUNT is small.",
        "Changes (or acquires) ownership of messages in a consumer group, as if the messages were delivered to the specified consumer.",
        xautoclaim),
    spec!("xsetid", -3, flag::WRITE | flag::DENYOOM | flag::FAST, &["write", "stream", "fast"], KeyPos::ONE,
        "O(1)",
        "An internal command for replicating stream values",
        xsetid),
    CommandSpec {
        handler: None,
        subcommands: XGROUP_SUBS,
        ..spec!("xgroup", -2, 0, &["slow"], KeyPos::NONE,
            "Depends on subcommand.",
            "A container for consumer groups commands",
            xgroup_help)
    },
    CommandSpec {
        handler: None,
        subcommands: XINFO_SUBS,
        ..spec!("xinfo", -2, 0, &["slow"], KeyPos::NONE,
            "Depends on subcommand.",
            "A container for stream introspection commands",
            xinfo_help)
    },
];

/// Keys of XREAD/XREADGROUP: the first half of the arguments after
/// `STREAMS`, skipping the options' values before it (as Redis's
/// `xreadGetKeys`: a group or consumer named `streams` is not the keyword).
fn streams_keys(args: &[&[u8]]) -> Option<Vec<usize>> {
    let mut i = 1;
    while i < args.len() {
        let a = args[i];
        if a.eq_ignore_ascii_case(b"streams") {
            let rest = args.len() - i - 1;
            if rest == 0 || !rest.is_multiple_of(2) {
                return None;
            }
            return Some((i + 1..i + 1 + rest / 2).collect());
        }
        if a.eq_ignore_ascii_case(b"group") {
            i += 3;
        } else if a.eq_ignore_ascii_case(b"count") || a.eq_ignore_ascii_case(b"block") {
            i += 2;
        } else {
            i += 1;
        }
    }
    None
}

/// Replies with a stream error (its text is Redis's).
fn stream_error(ctx: &mut Ctx, e: StreamError) {
    ctx.error(e.message());
}

/// An ID as Redis writes it (`<ms>-<seq>`), formatted on the stack.
pub(crate) fn id_bytes(id: StreamId, buf: &mut [u8; 41]) -> &[u8] {
    fn put(mut v: u64, out: &mut [u8], end: usize) -> usize {
        let mut i = end;
        loop {
            i -= 1;
            out[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                return i;
            }
        }
    }
    let mut tmp = [0u8; 20];
    let s = put(id.seq, &mut tmp, 20);
    let seq_len = 20 - s;
    let start = put(id.ms, buf, 41 - seq_len - 1);
    buf[41 - seq_len - 1] = b'-';
    buf[41 - seq_len..].copy_from_slice(&tmp[s..]);
    &buf[start..]
}

/// Replies with an ID as a bulk string.
pub(crate) fn bulk_id(out: &mut ReplyBuf, id: StreamId) {
    let mut b = [0u8; 41];
    out.bulk(id_bytes(id, &mut b));
}

fn bulk_lp(out: &mut ReplyBuf, v: LpValue<'_>) {
    match v {
        LpValue::Str(s) => out.bulk(s),
        LpValue::Int(i) => out.bulk_from_int(i),
    }
}

/// One entry as Redis replies it: `[id, [field, value, ...]]`.
pub(crate) fn reply_entry(out: &mut ReplyBuf, e: &EntryRef<'_>) {
    out.array_len(2);
    bulk_id(out, e.id);
    out.array_len(e.len() * 2);
    for (f, v) in e.fields() {
        bulk_lp(out, f);
        bulk_lp(out, v);
    }
}

/// Entries as an array (XRANGE and the per-stream part of XREAD).
pub(crate) fn reply_entries<'a>(out: &mut ReplyBuf, it: impl Iterator<Item = EntryRef<'a>>) {
    let d = out.deferred_len();
    let mut n = 0;
    for e in it {
        reply_entry(out, &e);
        n += 1;
    }
    out.set_array_len(d, n);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_format_like_redis() {
        let mut b = [0u8; 41];
        for id in [
            StreamId::MIN,
            StreamId::MAX,
            StreamId::new(1, 2),
            StreamId::new(1_700_000_000_000, 0),
            StreamId::new(0, u64::MAX),
        ] {
            assert_eq!(id_bytes(id, &mut b), id.to_string().as_bytes());
        }
    }

    #[test]
    fn keys_after_streams() {
        let a: Vec<&[u8]> = vec![b"xread", b"count", b"1", b"STREAMS", b"a", b"b", b"0", b"0"];
        assert_eq!(streams_keys(&a), Some(vec![4, 5]));
        let a: Vec<&[u8]> = vec![b"xread", b"streams", b"a", b"0", b"1"];
        assert_eq!(streams_keys(&a), None);
        let a: Vec<&[u8]> = vec![b"xread", b"count", b"1"];
        assert_eq!(streams_keys(&a), None);
        let a: Vec<&[u8]> = vec![
            b"xreadgroup",
            b"GROUP",
            b"streams",
            b"streams",
            b"STREAMS",
            b"k",
            b">",
        ];
        assert_eq!(streams_keys(&a), Some(vec![5]));
    }
}
