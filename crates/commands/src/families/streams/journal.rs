//! The forms in which consumer-group changes reach the write journal, as
//! redis-server 7.0.15 propagates them (checked against its AOF):
//!
//! * every entry XREADGROUP delivers (without NOACK), XCLAIM or XAUTOCLAIM
//!   claims, or XCLAIM / XAUTOCLAIM drops from the PEL because the entry
//!   was deleted, becomes `XCLAIM key group consumer 0 id TIME <ms>
//!   RETRYCOUNT <n> FORCE JUSTID LASTID <group last id>`, with the pending
//!   entry's state after the change (before it, for a dropped one, whose
//!   consumer is its former owner);
//! * XREADGROUP NOACK moves the group with `XGROUP SETID key group id
//!   ENTRIESREAD n` (`-1` when entries-read is unknown), and a consumer it
//!   creates is `XGROUP CREATECONSUMER key group consumer` ahead of it
//!   (without NOACK the XCLAIMs create the consumer on replay);
//! * XCLAIM's LASTID, when it moved the group and nothing else was
//!   journaled, is `XGROUP SETID ... ENTRIESREAD n`;
//! * reading a consumer's history (XREADGROUP with an ID) journals
//!   nothing, nor does a claim that claimed nothing.
//!
//! Replaying these forms gives the same entries, groups, last IDs and
//! PELs; like Redis 7.0, entries-read after XREADGROUP without NOACK and
//! consumers created by a history read without NOACK are not carried.

use collections::stream::group::Group;
use collections::stream::StreamId;

/// `XCLAIM key group consumer 0 id TIME ms RETRYCOUNT n FORCE JUSTID
/// LASTID last`.
pub(super) fn xclaim_form(
    key: &[u8],
    group: &[u8],
    consumer: &[u8],
    id: StreamId,
    time: i64,
    count: u64,
    last_id: StreamId,
) -> Vec<Vec<u8>> {
    vec![
        b"XCLAIM".to_vec(),
        key.to_vec(),
        group.to_vec(),
        consumer.to_vec(),
        b"0".to_vec(),
        id.to_bytes(),
        b"TIME".to_vec(),
        time.to_string().into_bytes(),
        b"RETRYCOUNT".to_vec(),
        count.to_string().into_bytes(),
        b"FORCE".to_vec(),
        b"JUSTID".to_vec(),
        b"LASTID".to_vec(),
        last_id.to_bytes(),
    ]
}

/// The XCLAIM form of pending entry `id` of `g` as it is now (None when
/// it is not pending).
pub(super) fn pending_form(key: &[u8], g: &Group, id: StreamId) -> Option<Vec<Vec<u8>>> {
    let (n, consumer) = g.pending_entry(id)?;
    Some(xclaim_form(
        key,
        g.name(),
        consumer,
        id,
        n.delivery_time,
        n.delivery_count,
        g.last_id(),
    ))
}

/// `XGROUP SETID key group id ENTRIESREAD n` for the group's position.
pub(super) fn setid_form(key: &[u8], g: &Group) -> Vec<Vec<u8>> {
    let read = g.entries_read().map_or(-1, |n| n as i64);
    vec![
        b"XGROUP".to_vec(),
        b"SETID".to_vec(),
        key.to_vec(),
        g.name().to_vec(),
        g.last_id().to_bytes(),
        b"ENTRIESREAD".to_vec(),
        read.to_string().into_bytes(),
    ]
}

/// `XGROUP CREATECONSUMER key group consumer`.
pub(super) fn createconsumer_form(key: &[u8], group: &[u8], consumer: &[u8]) -> Vec<Vec<u8>> {
    vec![
        b"XGROUP".to_vec(),
        b"CREATECONSUMER".to_vec(),
        key.to_vec(),
        group.to_vec(),
        consumer.to_vec(),
    ]
}

/// The forms of what XREADGROUP `>` changed for one key: `delivered` are
/// the IDs it delivered, in order, `created` whether it created the
/// consumer. Without NOACK each delivered entry is pending with this
/// consumer; the LASTID of each is the entry itself (the group moves
/// entry by entry, as Redis propagates it).
pub(super) fn read_new_forms(
    key: &[u8],
    g: &Group,
    consumer: &[u8],
    delivered: &[StreamId],
    noack: bool,
    created: bool,
    now: i64,
) -> Vec<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    if noack {
        if created {
            out.push(createconsumer_form(key, g.name(), consumer));
        }
        if !delivered.is_empty() {
            out.push(setid_form(key, g));
        }
        return out;
    }
    for &id in delivered {
        out.push(xclaim_form(key, g.name(), consumer, id, now, 1, id));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(v: &[Vec<u8>]) -> String {
        v.iter()
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn xclaim_form_matches_redis_layout() {
        let f = xclaim_form(
            b"s",
            b"g",
            b"alice",
            StreamId { ms: 1, seq: 1 },
            1795661109619,
            3,
            StreamId { ms: 2, seq: 0 },
        );
        assert_eq!(
            show(&f),
            "XCLAIM s g alice 0 1-1 TIME 1795661109619 RETRYCOUNT 3 FORCE JUSTID LASTID 2-0"
        );
    }

    #[test]
    fn createconsumer_form_layout() {
        assert_eq!(
            show(&createconsumer_form(b"k", b"g", b"c")),
            "XGROUP CREATECONSUMER k g c"
        );
    }
}
