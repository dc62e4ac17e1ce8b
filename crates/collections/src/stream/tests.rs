//! Unit tests and model-based property tests of [`Stream`]. Behaviour
//! against redis-server itself (node bytes, lag, error texts) is in
//! `tests/stream_redis.rs`.

use super::*;
use proptest::prelude::*;
use std::collections::BTreeMap;

const L: NodeLimits = NodeLimits {
    max_bytes: 4096,
    max_entries: 100,
};

fn id(ms: u64, seq: u64) -> StreamId {
    StreamId::new(ms, seq)
}

fn add(s: &mut Stream, i: StreamId, f: &[&str]) -> Result<StreamId, StreamError> {
    s.add(AddId::Explicit(i), f, 0, L)
}

fn ids(s: &Stream, start: StreamId, end: StreamId, rev: bool) -> Vec<StreamId> {
    s.range(start, end, rev).map(|e| e.id).collect()
}

#[test]
fn add_id_rules() {
    let mut s = Stream::new();
    assert_eq!(
        add(&mut s, id(0, 0), &["f", "v"]),
        Err(StreamError::XaddIdZero)
    );
    assert_eq!(
        s.add(AddId::Partial(0), &["f", "v"], 0, L),
        Ok(id(0, 1)),
        "0-* on an empty stream is 0-1"
    );
    assert_eq!(s.add(AddId::Partial(0), &["f", "v"], 0, L), Ok(id(0, 2)));
    assert_eq!(
        add(&mut s, id(0, 1), &["f", "v"]),
        Err(StreamError::XaddIdNotGreater)
    );
    assert_eq!(
        add(&mut s, id(5, u64::MAX), &["f", "v"]),
        Ok(id(5, u64::MAX))
    );
    // Sequence overflow on ms-*: Redis 7.0.15's reply.
    assert_eq!(
        s.add(AddId::Partial(5), &["f", "v"], 0, L),
        Err(StreamError::ElementsTooLarge)
    );
    assert_eq!(
        s.add(AddId::Partial(4), &["f", "v"], 0, L),
        Err(StreamError::XaddIdNotGreater)
    );
    // `*` with the clock behind the last ID: last + 1, across ms.
    assert_eq!(s.add(AddId::Auto, &["f", "v"], 3, L), Ok(id(6, 0)));
    assert_eq!(s.add(AddId::Auto, &["f", "v"], 100, L), Ok(id(100, 0)));
    assert_eq!(s.add(AddId::Auto, &["f", "v"], 100, L), Ok(id(100, 1)));
    assert_eq!(s.add(AddId::Auto, &["f", "v"], -5, L), Ok(id(100, 2)));
    assert_eq!(add(&mut s, StreamId::MAX, &["f", "v"]), Ok(StreamId::MAX));
    for r in [
        AddId::Auto,
        AddId::Partial(u64::MAX),
        AddId::Explicit(StreamId::MAX),
    ] {
        assert_eq!(s.add(r, &["f", "v"], 0, L), Err(StreamError::Exhausted));
    }
    assert_eq!(
        add(&mut s, StreamId::MIN, &["f", "v"]),
        Err(StreamError::XaddIdZero),
        "the 0-0 check comes first"
    );
    assert_eq!(s.len(), 8);
    assert_eq!(s.entries_added(), 8);
    assert_eq!(s.last_id(), StreamId::MAX);
    assert_eq!(s.first_id(), id(0, 1));
    s.check();
    let all = ids(&s, StreamId::MIN, StreamId::MAX, false);
    assert_eq!(all.len(), 8);
    assert_eq!(*all.last().unwrap(), StreamId::MAX);
}

#[test]
fn seq_overflow_of_auto_moves_to_next_ms() {
    let mut s = Stream::new();
    add(&mut s, id(7, u64::MAX), &["a", "1"]).unwrap();
    assert_eq!(s.add(AddId::Auto, &["a", "1"], 7, L), Ok(id(8, 0)));
    let mut t = Stream::new();
    add(&mut t, id(u64::MAX, u64::MAX - 1), &["a", "1"]).unwrap();
    assert_eq!(t.add(AddId::Auto, &["a", "1"], 0, L), Ok(StreamId::MAX));
    assert_eq!(
        t.add(AddId::Auto, &["a", "1"], 0, L),
        Err(StreamError::Exhausted)
    );
}

#[test]
fn empty_stream_queries() {
    let s = Stream::new();
    assert!(s.is_empty());
    assert!(s.first_entry().is_none());
    assert!(s.last_entry().is_none());
    assert_eq!(ids(&s, StreamId::MIN, StreamId::MAX, true), vec![]);
    assert_eq!(s.heap_bytes(), 0);
    assert_eq!(s.estimate_entries_read(id(1, 1)), Some(0));
}

#[test]
fn fields_same_and_different() {
    let mut s = Stream::new();
    add(&mut s, id(1, 0), &["a", "1", "b", "x"]).unwrap();
    add(&mut s, id(1, 1), &["a", "2", "b", "y"]).unwrap();
    add(&mut s, id(2, 0), &["c", "3"]).unwrap();
    add(&mut s, id(2, 1), &["a", "4"]).unwrap();
    add(&mut s, id(3, 0), &["a", "-12", "b", ""]).unwrap();
    let got: Vec<_> = s
        .range(StreamId::MIN, StreamId::MAX, false)
        .map(|e| (e.id, e.to_vec()))
        .collect();
    let pairs = |v: &[(&str, &str)]| -> Vec<(Vec<u8>, Vec<u8>)> {
        v.iter()
            .map(|(a, b)| (a.as_bytes().to_vec(), b.as_bytes().to_vec()))
            .collect()
    };
    assert_eq!(
        got,
        vec![
            (id(1, 0), pairs(&[("a", "1"), ("b", "x")])),
            (id(1, 1), pairs(&[("a", "2"), ("b", "y")])),
            (id(2, 0), pairs(&[("c", "3")])),
            (id(2, 1), pairs(&[("a", "4")])),
            (id(3, 0), pairs(&[("a", "-12"), ("b", "")])),
        ]
    );
    let rev: Vec<_> = ids(&s, StreamId::MIN, StreamId::MAX, true);
    assert_eq!(rev, vec![id(3, 0), id(2, 1), id(2, 0), id(1, 1), id(1, 0)]);
    assert_eq!(ids(&s, id(1, 1), id(2, 0), false), vec![id(1, 1), id(2, 0)]);
    assert_eq!(ids(&s, id(1, 1), id(2, 0), true), vec![id(2, 0), id(1, 1)]);
    assert_eq!(ids(&s, id(2, 5), id(2, 0), false), vec![]);
    s.check();
}

#[test]
fn node_limits_split_as_redis() {
    let mut s = Stream::new();
    for i in 1..=250u64 {
        add(&mut s, id(i, 0), &["f", "v"]).unwrap();
    }
    assert_eq!(s.node_count(), 3, "100 entries per node");
    let mut t = Stream::new();
    let big = "x".repeat(1000);
    for i in 1..=10u64 {
        t.add(AddId::Explicit(id(i, 0)), &["f", big.as_str()], 0, L)
            .unwrap();
    }
    // Each entry adds ~1010 bytes; a node stops taking entries once
    // bytes + 1001 >= 4096: 4 + 4 + 2.
    assert_eq!(t.node_count(), 3);
    let mut u = Stream::new();
    let nolimit = NodeLimits {
        max_bytes: 0,
        max_entries: 0,
    };
    for i in 1..=1000u64 {
        u.add(AddId::Explicit(id(i, 0)), &["f", "v"], 0, nolimit)
            .unwrap();
    }
    assert_eq!(u.node_count(), 1);
    s.check();
    t.check();
    u.check();
}

#[test]
fn delete_and_first_id() {
    let mut s = Stream::new();
    for i in 1..=5u64 {
        add(&mut s, id(i, 0), &["f", "v"]).unwrap();
    }
    assert_eq!(s.delete(&[id(1, 0), id(9, 0), id(1, 0)]), 1);
    assert_eq!(s.first_id(), id(2, 0));
    assert_eq!(s.max_deleted_id(), id(1, 0));
    assert_eq!(s.delete(&[id(4, 0)]), 1);
    assert_eq!(s.max_deleted_id(), id(4, 0));
    assert_eq!(s.first_id(), id(2, 0));
    assert_eq!(s.delete(&[id(3, 0)]), 1);
    assert_eq!(s.max_deleted_id(), id(4, 0), "max only grows");
    assert_eq!(
        ids(&s, StreamId::MIN, StreamId::MAX, false),
        vec![id(2, 0), id(5, 0)]
    );
    assert_eq!(
        ids(&s, StreamId::MIN, StreamId::MAX, true),
        vec![id(5, 0), id(2, 0)]
    );
    s.check();
    assert_eq!(s.delete(&[id(2, 0), id(5, 0)]), 2);
    assert_eq!(s.node_count(), 0, "node freed with its last live entry");
    assert_eq!(s.first_id(), StreamId::MIN);
    assert_eq!(s.len(), 0);
    assert_eq!(s.last_id(), id(5, 0));
    s.check();
    // A new entry after emptying starts a new node.
    add(&mut s, id(6, 0), &["f", "v"]).unwrap();
    assert_eq!(s.first_id(), id(6, 0));
    s.check();
}

#[test]
fn trim_exact_and_approx() {
    let mk = || {
        let mut s = Stream::new();
        for i in 1..=250u64 {
            add(&mut s, id(i, 0), &["f", "v"]).unwrap();
        }
        s
    };
    let maxlen = |n, approx, limit| Trim {
        to: TrimTo::MaxLen(n),
        approx,
        limit,
    };
    let mut s = mk();
    assert_eq!(s.trim(maxlen(120, true, 0)), 100, "one whole node");
    assert_eq!(s.len(), 150);
    assert_eq!(s.first_id(), id(101, 0));
    assert_eq!(
        s.trim(maxlen(120, true, 0)),
        0,
        "the next node would go below"
    );
    assert_eq!(s.trim(maxlen(120, false, 0)), 30);
    assert_eq!(s.first_id(), id(131, 0));
    assert_eq!(s.node_count(), 2);
    s.check();
    let mut s = mk();
    assert_eq!(
        s.trim(maxlen(0, true, 150)),
        100,
        "LIMIT stops before node 2"
    );
    assert_eq!(s.trim(maxlen(0, false, 0)), 150);
    assert_eq!(s.first_id(), StreamId::MIN);
    assert_eq!(s.node_count(), 0);
    s.check();
    let mut s = mk();
    let minid = |m, approx| Trim {
        to: TrimTo::MinId(m),
        approx,
        limit: 0,
    };
    assert_eq!(s.trim(minid(id(150, 0), true)), 100);
    assert_eq!(s.trim(minid(id(150, 0), false)), 49);
    assert_eq!(s.first_id(), id(150, 0));
    assert_eq!(s.trim(minid(id(150, 0), false)), 0);
    s.check();
    assert_eq!(Trim::default_limit(true, L), 10_000);
    assert_eq!(Trim::default_limit(false, L), 0);
}

#[test]
fn set_id_rules() {
    let mut s = Stream::new();
    for i in 1..=3u64 {
        add(&mut s, id(i, 0), &["a", "1"]).unwrap();
    }
    s.delete(&[id(3, 0)]);
    // Below max-deleted but at the top live entry: accepted by 7.0.15.
    assert_eq!(s.set_id(id(2, 5), None, None), Ok(()));
    assert_eq!(
        s.set_id(id(1, 9), None, None),
        Err(StreamError::SetIdBelowTop)
    );
    assert_eq!(
        s.set_id(id(9, 0), None, Some(id(9, 1))),
        Err(StreamError::SetIdBelowGivenMaxDeleted)
    );
    assert_eq!(
        s.set_id(id(9, 0), Some(1), None),
        Err(StreamError::SetIdEntriesAddedBelowLength)
    );
    assert_eq!(s.set_id(id(9, 0), Some(2), Some(StreamId::MIN)), Ok(()));
    assert_eq!(s.max_deleted_id(), id(3, 0), "MAXDELETEDID 0-0 keeps it");
    assert_eq!(s.entries_added(), 2);
    assert_eq!(
        add(&mut s, id(9, 0), &["a", "1"]),
        Err(StreamError::XaddIdNotGreater)
    );
    s.delete(&[id(1, 0), id(2, 0)]);
    assert_eq!(
        s.set_id(id(0, 1), Some(0), None),
        Ok(()),
        "empty: no checks"
    );
    assert_eq!(s.last_id(), id(0, 1));
}

#[test]
fn groups_basic_flow() {
    let mut s = Stream::new();
    for i in 1..=5u64 {
        add(&mut s, id(i, 0), &["f", "v"]).unwrap();
    }
    s.create_group(b"g", StreamId::MIN, None).unwrap();
    assert_eq!(
        s.create_group(b"g", StreamId::MIN, None),
        Err(StreamError::BusyGroup)
    );
    let mut got = Vec::new();
    assert_eq!(
        s.read_group_new(b"g", b"alice", 2, false, 1000, |e| got.push(e.id)),
        Some(2)
    );
    assert_eq!(got, vec![id(1, 0), id(2, 0)]);
    let g = s.group(b"g").unwrap();
    assert_eq!(g.last_id(), id(2, 0));
    assert_eq!(g.entries_read(), Some(2));
    assert_eq!(s.group_lag(g), Some(3));
    got.clear();
    s.read_group_new(b"g", b"bob", 0, false, 2000, |e| got.push(e.id));
    assert_eq!(got, vec![id(3, 0), id(4, 0), id(5, 0)]);
    assert_eq!(s.group_lag(s.group(b"g").unwrap()), Some(0));
    let sum = s.pending_summary(b"g").unwrap();
    assert_eq!(sum.count, 5);
    assert_eq!(sum.bounds, Some((id(1, 0), id(5, 0))));
    assert_eq!(
        sum.consumers,
        vec![(b"alice".to_vec(), 2), (b"bob".to_vec(), 3)]
    );
    assert_eq!(s.ack(b"g", &[id(1, 0), id(1, 0), id(9, 0)]), Some(1));
    let q = PendingQuery {
        start: StreamId::MIN,
        end: StreamId::MAX,
        count: 10,
        consumer: None,
        min_idle: 0,
    };
    let rows = s.pending_range(b"g", &q, 2500).unwrap();
    assert_eq!(rows.len(), 4);
    assert_eq!(rows[0].id, id(2, 0));
    assert_eq!(rows[0].idle, 1500);
    assert_eq!(rows[1].consumer, b"bob");
    let idle = s
        .pending_range(
            b"g",
            &PendingQuery {
                min_idle: 1000,
                ..q
            },
            2500,
        )
        .unwrap();
    assert_eq!(idle.len(), 1);
    // History read counts a delivery.
    let mut hist = Vec::new();
    s.read_group_history(b"g", b"alice", StreamId::MIN, 0, 3000, |i, e| {
        hist.push((i, e.is_some()))
    });
    assert_eq!(hist, vec![(id(2, 0), true)]);
    let rows = s
        .pending_range(
            b"g",
            &PendingQuery {
                consumer: Some(b"alice"),
                ..q
            },
            3000,
        )
        .unwrap();
    assert_eq!(rows[0].delivery_count, 2);
    assert_eq!(rows[0].idle, 0);
    // A deleted entry shows as nil in history and is dropped by XCLAIM.
    s.delete(&[id(3, 0)]);
    hist.clear();
    s.read_group_history(b"g", b"bob", StreamId::MIN, 0, 3000, |i, e| {
        hist.push((i, e.is_some()))
    });
    assert_eq!(
        hist,
        vec![(id(3, 0), false), (id(4, 0), true), (id(5, 0), true)]
    );
    let c = s
        .claim(
            b"g",
            b"carol",
            0,
            &[id(3, 0), id(4, 0)],
            ClaimOptions::default(),
            4000,
        )
        .unwrap();
    assert_eq!(c.claimed, vec![id(4, 0)]);
    assert_eq!(s.pending_summary(b"g").unwrap().count, 3);
    assert_eq!(s.delete_consumer(b"g", b"bob"), Some(1));
    assert_eq!(s.delete_consumer(b"g", b"nobody"), Some(0));
    assert_eq!(s.create_consumer(b"g", b"dave", 5), Some(true));
    assert_eq!(s.create_consumer(b"g", b"dave", 5), Some(false));
    assert_eq!(s.create_consumer(b"nog", b"dave", 5), None);
    s.check();
    assert!(s.destroy_group(b"g"));
    assert!(!s.destroy_group(b"g"));
    s.check();
}

#[test]
fn autoclaim_cursor_deleted_and_attempts() {
    let mut s = Stream::new();
    for i in 1..=30u64 {
        add(&mut s, id(i, 0), &["f", "v"]).unwrap();
    }
    s.create_group(b"g", StreamId::MIN, None).unwrap();
    s.read_group_new(b"g", b"a", 0, false, 0, |_| {});
    s.delete(&[id(2, 0), id(3, 0)]);
    let opts = AutoClaimOptions {
        min_idle: 0,
        start: StreamId::MIN,
        count: 3,
        justid: true,
    };
    let r = s.autoclaim(b"g", b"b", opts, 10).unwrap();
    assert_eq!(r.claimed, vec![id(1, 0)]);
    assert_eq!(r.deleted, vec![id(2, 0), id(3, 0)]);
    assert_eq!(r.next, id(4, 0));
    // Idle filter with attempts = count * 10: 1 claimed entry needs 10
    // looks; entries 4.. were delivered at 0, entry 1 at 10.
    let r = s
        .autoclaim(
            b"g",
            b"c",
            AutoClaimOptions {
                min_idle: 100,
                start: StreamId::MIN,
                count: 1,
                justid: false,
            },
            50,
        )
        .unwrap();
    assert_eq!(r.claimed, vec![], "entries idle 50 < 100");
    assert_eq!(r.next, id(13, 0), "10 attempts from 1-0: 1, 4..=12");
    let r = s
        .autoclaim(
            b"g",
            b"c",
            AutoClaimOptions {
                min_idle: 0,
                start: id(30, 0),
                count: 5,
                justid: false,
            },
            50,
        )
        .unwrap();
    assert_eq!(r.claimed, vec![id(30, 0)]);
    assert_eq!(r.next, StreamId::MIN, "scan complete");
    s.check();
}

#[test]
fn claim_options() {
    let mut s = Stream::new();
    for i in 1..=3u64 {
        add(&mut s, id(i, 0), &["f", "v"]).unwrap();
    }
    s.create_group(b"g", StreamId::MIN, None).unwrap();
    s.read_group_new(b"g", b"a", 1, false, 100, |_| {});
    let q = PendingQuery {
        start: StreamId::MIN,
        end: StreamId::MAX,
        count: 10,
        consumer: None,
        min_idle: 0,
    };
    // Not idle enough: nothing, and the consumer is not created.
    let c = s
        .claim(b"g", b"b", 500, &[id(1, 0)], ClaimOptions::default(), 200)
        .unwrap();
    assert!(c.claimed.is_empty());
    assert!(s.group(b"g").unwrap().consumer(b"b").is_none());
    // FORCE creates a NACK for an existing entry; count ends at 2 as Redis.
    let opts = ClaimOptions {
        force: true,
        idle: Some(50),
        last_id: Some(id(2, 0)),
        ..Default::default()
    };
    let c = s
        .claim(b"g", b"b", 500, &[id(2, 0), id(7, 0)], opts, 200)
        .unwrap();
    assert_eq!(c.claimed, vec![id(2, 0)]);
    let rows = s.pending_range(b"g", &q, 200).unwrap();
    assert_eq!(rows[1].id, id(2, 0));
    assert_eq!(rows[1].delivery_count, 2);
    assert_eq!(rows[1].idle, 50);
    assert_eq!(s.group(b"g").unwrap().last_id(), id(2, 0));
    // RETRYCOUNT and TIME (in the future -> now); JUSTID keeps the count.
    let opts = ClaimOptions {
        retry_count: Some(7),
        time: Some(10_000),
        ..Default::default()
    };
    s.claim(b"g", b"c", 0, &[id(1, 0)], opts, 300).unwrap();
    let opts = ClaimOptions {
        justid: true,
        ..Default::default()
    };
    s.claim(b"g", b"c", 0, &[id(2, 0)], opts, 300).unwrap();
    let rows = s.pending_range(b"g", &q, 300).unwrap();
    assert_eq!(
        rows.iter()
            .map(|r| (r.id, r.consumer.clone(), r.idle, r.delivery_count))
            .collect::<Vec<_>>(),
        vec![
            (id(1, 0), b"c".to_vec(), 0, 7),
            (id(2, 0), b"c".to_vec(), 0, 2)
        ]
    );
    s.check();
}

#[test]
fn lag_and_entries_read_edges() {
    let mut s = Stream::new();
    s.create_group(b"g", StreamId::MIN, None).unwrap();
    assert_eq!(s.group_lag(s.group(b"g").unwrap()), Some(0));
    for i in 1..=4u64 {
        add(&mut s, id(i, 0), &["f", "v"]).unwrap();
    }
    assert_eq!(s.group_lag(s.group(b"g").unwrap()), Some(4));
    s.delete(&[id(2, 0)]);
    // Tombstone after the group's position: unknown.
    assert_eq!(s.group_lag(s.group(b"g").unwrap()), None);
    s.read_group_new(b"g", b"c", 1, true, 0, |_| {});
    let g = s.group(b"g").unwrap();
    assert_eq!(g.entries_read(), None, "a tombstone after the first entry");
    s.read_group_new(b"g", b"c", 1, true, 0, |_| {});
    let g = s.group(b"g").unwrap();
    assert_eq!(g.last_id(), id(3, 0));
    assert_eq!(g.entries_read(), None, "inside a fragmented range");
    s.read_group_new(b"g", b"c", 0, true, 0, |_| {});
    let g = s.group(b"g").unwrap();
    assert_eq!(g.entries_read(), Some(4), "the last entry's counter");
    assert_eq!(s.group_lag(g), Some(0));
    s.check();
}

#[test]
fn clone_is_deep_and_heap_is_tracked() {
    let mut s = Stream::new();
    for i in 1..=500u64 {
        add(&mut s, id(i, 0), &["field", "value", "n", &i.to_string()]).unwrap();
    }
    s.create_group(b"g", StreamId::MIN, None).unwrap();
    s.read_group_new(b"g", b"c", 0, false, 0, |_| {});
    let c = s.clone();
    s.delete(&[id(1, 0)]);
    s.ack(b"g", &[id(2, 0)]);
    assert_eq!(c.len(), 500);
    assert_eq!(c.pending_summary(b"g").unwrap().count, 500);
    assert_eq!(s.len(), 499);
    c.check();
    s.check();
    assert!(s.heap_bytes() > 0);
    let raw: Vec<_> = c.nodes().map(|(k, b)| (k, b.to_vec())).collect();
    let back = Stream::from_nodes(
        raw,
        c.len(),
        c.last_id(),
        c.first_id(),
        c.max_deleted_id(),
        c.entries_added(),
    )
    .unwrap();
    assert_eq!(
        back.range(StreamId::MIN, StreamId::MAX, false)
            .map(|e| (e.id, e.to_vec()))
            .collect::<Vec<_>>(),
        c.range(StreamId::MIN, StreamId::MAX, false)
            .map(|e| (e.id, e.to_vec()))
            .collect::<Vec<_>>()
    );
}

#[test]
fn from_nodes_rejects_corrupt_nodes() {
    let mut s = Stream::new();
    for i in 1..=3u64 {
        add(&mut s, id(i, 0), &["a", "1"]).unwrap();
    }
    let (k, b) = s.nodes().next().map(|(k, b)| (k, b.to_vec())).unwrap();
    let ok = |n: Vec<(StreamId, Vec<u8>)>, len| {
        Stream::from_nodes(n, len, id(3, 0), id(1, 0), StreamId::MIN, 3)
    };
    assert!(ok(vec![(k, b.clone())], 3).is_ok());
    assert!(ok(vec![(k, b.clone())], 4).is_err(), "length mismatch");
    assert!(
        ok(vec![(id(2, 0), b.clone())], 3).is_err(),
        "master above entry ids"
    );
    for cut in 0..b.len() {
        let mut bad = b.clone();
        bad[cut] ^= 0x5a;
        // Must not panic; most flips are rejected.
        let _ = ok(vec![(k, bad)], 3);
        let _ = ok(vec![(k, b[..cut].to_vec())], 3);
    }
}

// ---------------------------------------------------------------------
// Model-based property test.

#[derive(Clone, Debug)]
enum Op {
    AddExplicit(u8, u8, u8),
    AddPartial(u8, u8),
    AddAuto(u16, u8),
    Del(Vec<u8>),
    TrimLen(u8, bool, u8),
    TrimMin(u8, bool),
    Range(u8, u8, bool, u8),
    SetId(u8),
    ReadNew(u8, u8, bool),
    ReadHist(u8, u8, u8),
    Ack(Vec<u8>),
    Claim(u8, Vec<u8>, u16, bool),
    AutoClaim(u8, u8, u8, u16),
    DelConsumer(u8),
    Tick(u16),
}

fn op() -> impl Strategy<Value = Op> {
    let small = proptest::collection::vec(any::<u8>(), 0..4);
    prop_oneof![
        6 => (any::<u8>(), any::<u8>(), 0u8..4).prop_map(|(a, b, f)| Op::AddExplicit(a % 4, b % 3, f)),
        2 => (any::<u8>(), 0u8..4).prop_map(|(a, f)| Op::AddPartial(a % 4, f)),
        2 => (any::<u16>(), 0u8..4).prop_map(|(t, f)| Op::AddAuto(t % 8, f)),
        2 => small.clone().prop_map(Op::Del),
        1 => (any::<u8>(), any::<bool>(), any::<u8>()).prop_map(|(n, a, l)| Op::TrimLen(n % 40, a, l % 30)),
        1 => (any::<u8>(), any::<bool>()).prop_map(|(n, a)| Op::TrimMin(n, a)),
        3 => (any::<u8>(), any::<u8>(), any::<bool>(), any::<u8>()).prop_map(|(a, b, r, c)| Op::Range(a, b, r, c % 6)),
        1 => any::<u8>().prop_map(Op::SetId),
        3 => (0u8..3, 0u8..4, any::<bool>()).prop_map(|(c, n, na)| Op::ReadNew(c, n, na)),
        1 => (0u8..3, any::<u8>(), 0u8..3).prop_map(|(c, s, n)| Op::ReadHist(c, s, n)),
        2 => small.clone().prop_map(Op::Ack),
        1 => (0u8..3, small, any::<u16>(), any::<bool>()).prop_map(|(c, i, m, f)| Op::Claim(c, i, m % 40, f)),
        1 => (0u8..3, any::<u8>(), 1u8..4, any::<u16>()).prop_map(|(c, s, n, m)| Op::AutoClaim(c, s, n, m % 40)),
        1 => (0u8..3).prop_map(Op::DelConsumer),
        2 => any::<u16>().prop_map(|t| Op::Tick(t % 30)),
    ]
}

type Fields = Vec<(Vec<u8>, Vec<u8>)>;

#[derive(Clone, Debug, PartialEq)]
struct MNack {
    consumer: u8,
    time: i64,
    count: u64,
}

#[derive(Default)]
struct Model {
    entries: BTreeMap<StreamId, Fields>,
    last: StreamId,
    group_last: StreamId,
    pel: BTreeMap<StreamId, MNack>,
    consumers: BTreeMap<u8, i64>,
}

fn fields_for(f: u8, n: u64) -> Vec<Vec<u8>> {
    let names: &[&[u8]] = match f {
        0 => &[b"a", b"b"],
        1 => &[b"a"],
        2 => &[b"b", b"a"],
        _ => &[b"a", b"b", b"c"],
    };
    let mut v = Vec::new();
    for (k, name) in names.iter().enumerate() {
        v.push(name.to_vec());
        v.push(match (n + k as u64) % 3 {
            0 => (n * 7).to_string().into_bytes(),
            1 => format!("v{n}").into_bytes(),
            _ => Vec::new(),
        });
    }
    v
}

fn pairs(v: &[Vec<u8>]) -> Fields {
    v.chunks(2).map(|c| (c[0].clone(), c[1].clone())).collect()
}

fn cname(c: u8) -> Vec<u8> {
    format!("c{c}").into_bytes()
}

fn mid(b: u8) -> StreamId {
    StreamId::new((b / 4) as u64, (b % 4) as u64)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn stream_matches_model(ops in proptest::collection::vec(op(), 1..120), small in any::<bool>()) {
        let limits = if small {
            NodeLimits { max_bytes: 60, max_entries: 3 }
        } else {
            NodeLimits { max_bytes: 4096, max_entries: 5 }
        };
        let mut s = Stream::new();
        s.create_group(b"g", StreamId::MIN, None).unwrap();
        let mut m = Model::default();
        let mut now: i64 = 1000;
        let mut n = 0u64;
        for o in ops {
            n += 1;
            match o {
                Op::AddExplicit(dms, seq, f) => {
                    let want = StreamId::new(m.last.ms + dms as u64, seq as u64);
                    let fv = fields_for(f, n);
                    let got = s.add(AddId::Explicit(want), &fv, now, limits);
                    if want.is_zero() {
                        prop_assert_eq!(got, Err(StreamError::XaddIdZero));
                    } else if want <= m.last {
                        prop_assert_eq!(got, Err(StreamError::XaddIdNotGreater));
                    } else {
                        prop_assert_eq!(got, Ok(want));
                        m.entries.insert(want, pairs(&fv));
                        m.last = want;
                    }
                }
                Op::AddPartial(dms, f) => {
                    let ms = m.last.ms + dms as u64;
                    let want = if ms == m.last.ms { StreamId::new(ms, m.last.seq + 1) } else { StreamId::new(ms, 0) };
                    let fv = fields_for(f, n);
                    prop_assert_eq!(s.add(AddId::Partial(ms), &fv, now, limits), Ok(want));
                    m.entries.insert(want, pairs(&fv));
                    m.last = want;
                }
                Op::AddAuto(t, f) => {
                    let clock = t as i64;
                    let want = if clock as u64 > m.last.ms { StreamId::new(clock as u64, 0) } else { m.last.next().unwrap() };
                    let fv = fields_for(f, n);
                    prop_assert_eq!(s.add(AddId::Auto, &fv, clock, limits), Ok(want));
                    m.entries.insert(want, pairs(&fv));
                    m.last = want;
                }
                Op::Del(v) => {
                    let ids: Vec<StreamId> = v.iter().map(|&b| mid(b)).collect();
                    let mut want = 0;
                    for i in &ids {
                        if m.entries.remove(i).is_some() { want += 1; }
                    }
                    prop_assert_eq!(s.delete(&ids), want);
                }
                Op::TrimLen(len, approx, limit) => {
                    let limit = if approx { limit as u64 } else { 0 };
                    let before: Vec<StreamId> = m.entries.keys().copied().collect();
                    let got = s.trim(Trim { to: TrimTo::MaxLen(len as u64), approx, limit });
                    let exact = before.len().saturating_sub(len as usize) as u64;
                    if approx { prop_assert!(got <= exact); } else { prop_assert_eq!(got, exact); }
                    if limit != 0 { prop_assert!(got <= limit); }
                    for k in before.iter().take(got as usize) { m.entries.remove(k); }
                }
                Op::TrimMin(b, approx) => {
                    let min = mid(b);
                    let before: Vec<StreamId> = m.entries.keys().copied().collect();
                    let got = s.trim(Trim { to: TrimTo::MinId(min), approx, limit: 0 });
                    let exact = before.iter().filter(|&&k| k < min).count() as u64;
                    if approx { prop_assert!(got <= exact); } else { prop_assert_eq!(got, exact); }
                    for k in before.iter().take(got as usize) { m.entries.remove(k); }
                }
                Op::Range(a, b, rev, count) => {
                    let (lo, hi) = (mid(a), mid(b));
                    let mut want: Vec<(StreamId, Fields)> = m.entries.range(lo..=hi.max(lo)).filter(|e| *e.0 <= hi).map(|(k, v)| (*k, v.clone())).collect();
                    if rev { want.reverse(); }
                    if count > 0 { want.truncate(count as usize); }
                    let it = s.range(lo, hi, rev).map(|e| (e.id, e.to_vec()));
                    let got: Vec<_> = if count > 0 { it.take(count as usize).collect() } else { it.collect() };
                    prop_assert_eq!(got, want);
                }
                Op::SetId(b) => {
                    let to = StreamId::new(m.last.ms + (b % 3) as u64, b as u64);
                    let top = m.entries.keys().next_back().copied();
                    let r = s.set_id(to, None, None);
                    if top.is_some_and(|t| to < t) {
                        prop_assert_eq!(r, Err(StreamError::SetIdBelowTop));
                    } else {
                        prop_assert_eq!(r, Ok(()));
                        m.last = to;
                    }
                }
                Op::ReadNew(c, cnt, noack) => {
                    let mut got = Vec::new();
                    s.read_group_new(b"g", &cname(c), cnt as usize, noack, now, |e| got.push((e.id, e.to_vec())));
                    if m.entries.keys().next_back().is_some_and(|&k| k > m.group_last) {
                        m.consumers.insert(c, now);
                    }
                    let mut want: Vec<(StreamId, Fields)> = m.entries.range(m.group_last..).filter(|e| *e.0 > m.group_last).map(|(k, v)| (*k, v.clone())).collect();
                    if cnt > 0 { want.truncate(cnt as usize); }
                    for (k, _) in &want {
                        m.group_last = *k;
                        if !noack { m.pel.insert(*k, MNack { consumer: c, time: now, count: 1 }); }
                    }
                    prop_assert_eq!(got, want);
                }
                Op::ReadHist(c, start, cnt) => {
                    let after = mid(start);
                    let start = after.next().unwrap();
                    let mut got = Vec::new();
                    s.read_group_history(b"g", &cname(c), after, cnt as usize, now, |i, e| got.push((i, e.map(|e| e.to_vec()))));
                    m.consumers.insert(c, now);
                    let mut want = Vec::new();
                    for (k, nk) in m.pel.range_mut(start..) {
                        if nk.consumer != c { continue; }
                        if cnt > 0 && want.len() >= cnt as usize { break; }
                        let e = m.entries.get(k).cloned();
                        if e.is_some() { nk.time = now; nk.count += 1; }
                        want.push((*k, e));
                    }
                    prop_assert_eq!(got, want);
                }
                Op::Ack(v) => {
                    let ids: Vec<StreamId> = v.iter().map(|&b| mid(b)).collect();
                    let want = ids.iter().filter(|i| m.pel.remove(i).is_some()).count() as u64;
                    prop_assert_eq!(s.ack(b"g", &ids), Some(want));
                }
                Op::Claim(c, v, min_idle, force) => {
                    let ids: Vec<StreamId> = v.iter().map(|&b| mid(b)).collect();
                    let opts = ClaimOptions { force, ..Default::default() };
                    let got = s.claim(b"g", &cname(c), min_idle as i64, &ids, opts, now).unwrap();
                    let mut want = Vec::new();
                    for i in &ids {
                        if !m.entries.contains_key(i) { m.pel.remove(i); continue; }
                        let forced = force && !m.pel.contains_key(i);
                        if forced { m.pel.insert(*i, MNack { consumer: 255, time: now, count: 1 }); }
                        let Some(nk) = m.pel.get_mut(i) else { continue };
                        if !forced && min_idle != 0 && now - nk.time < min_idle as i64 { continue; }
                                                m.consumers.insert(c, now);
                        nk.consumer = c; nk.time = now; nk.count += 1;
                        want.push(*i);
                    }
                    prop_assert_eq!(got.claimed, want);
                }
                Op::AutoClaim(c, start, cnt, min_idle) => {
                    let opts = AutoClaimOptions { min_idle: min_idle as i64, start: mid(start), count: cnt as usize, justid: false };
                    let got = s.autoclaim(b"g", &cname(c), opts, now).unwrap();
                    let mut claimed = Vec::new();
                    let mut deleted = Vec::new();
                    let mut left = cnt as usize;
                    let mut attempts = left * 10;
                    let keys: Vec<StreamId> = m.pel.range(mid(start)..).map(|e| *e.0).collect();
                    let mut k = 0;
                    while attempts > 0 && left > 0 && k < keys.len() {
                        attempts -= 1;
                        let i = keys[k];
                        k += 1;
                        if !m.entries.contains_key(&i) { m.pel.remove(&i); deleted.push(i); left -= 1; continue; }
                        let nk = m.pel.get_mut(&i).unwrap();
                        if min_idle != 0 && now - nk.time < min_idle as i64 { continue; }
                        m.consumers.insert(c, now);
                        nk.consumer = c; nk.time = now; nk.count += 1;
                        claimed.push(i);
                        left -= 1;
                    }
                    let next = keys.get(k).copied().unwrap_or(StreamId::MIN);
                    prop_assert_eq!(got.claimed, claimed);
                    prop_assert_eq!(got.deleted, deleted);
                    prop_assert_eq!(got.next, next);
                }
                Op::DelConsumer(c) => {
                    let had = m.consumers.remove(&c).is_some();
                    let before = m.pel.len();
                    m.pel.retain(|_, nk| nk.consumer != c);
                    let want = if had { (before - m.pel.len()) as u64 } else { 0 };
                    prop_assert_eq!(s.delete_consumer(b"g", &cname(c)), Some(want));
                }
                Op::Tick(t) => now += t as i64,
            }
            s.check();
            prop_assert_eq!(s.len(), m.entries.len() as u64);
            prop_assert_eq!(s.last_id(), m.last);
            prop_assert_eq!(s.first_id(), m.entries.keys().next().copied().unwrap_or(StreamId::MIN));
            let g = s.group(b"g").unwrap();
            prop_assert_eq!(g.last_id(), m.group_last);
            let pel: Vec<(StreamId, Vec<u8>, i64, u64)> = g.pending().map(|(i, n, c)| (i, c.to_vec(), n.delivery_time, n.delivery_count)).collect();
            let want: Vec<(StreamId, Vec<u8>, i64, u64)> = m.pel.iter().map(|(i, n)| (*i, cname(n.consumer), n.time, n.count)).collect();
            prop_assert_eq!(pel, want);
            let cons: Vec<(Vec<u8>, i64)> = g.consumers().map(|c| (c.name().to_vec(), c.seen_time())).collect();
            let want: Vec<(Vec<u8>, i64)> = m.consumers.iter().map(|(c, t)| (cname(*c), *t)).collect();
            prop_assert_eq!(cons, want);
        }
    }
}
