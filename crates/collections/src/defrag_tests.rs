//! A defrag pass over big hashes, sets, sorted sets, lists and streams,
//! stepped a few elements at a time (with changes between steps), reads
//! back as a model, and really moves the structures' inner blocks: with a
//! mover that moves every block offered, the hit count must reach the
//! blocks each structure is known to own (for lists and streams exactly
//! those, the node array and the PEL entry arrays included).

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;

use super::testing;
use crate::value::{HashValue, Limits, SetValue, ZsetValue};
use crate::zset::CAP;

fn elem() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        3 => (0u32..3_000).prop_map(|i| format!("e{i}").into_bytes()),
        2 => (0u32..500).prop_map(|i| format!("a-member-longer-than-sixteen-{i}").into_bytes()),
        1 => proptest::collection::vec(any::<u8>(), 0..120),
    ]
}

fn bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        3 => proptest::collection::vec(any::<u8>(), 0..12),
        1 => proptest::collection::vec(any::<u8>(), 0..400),
    ]
}

/// Changes made between defrag steps: (insert?, element, value bytes, score).
fn changes() -> impl Strategy<Value = Vec<(bool, Vec<u8>, Vec<u8>, f64)>> {
    proptest::collection::vec((any::<bool>(), elem(), bytes(), -1e3f64..1e3), 0..200)
}

/// Steps `step` from 0 until it says done, applying one change (if any
/// left) after every step; returns the steps taken.
fn stepped<T>(
    v: &mut T,
    mut step: impl FnMut(&mut T, u64) -> Option<u64>,
    mut change: impl FnMut(&mut T, usize),
    nchanges: usize,
) -> usize {
    let mut at = 0;
    let mut steps = 0;
    loop {
        let next = step(v, at);
        steps += 1;
        if steps <= nchanges {
            change(v, steps - 1);
        }
        match next {
            Some(n) => {
                assert_ne!(n, 0, "a step resumed at 0");
                at = n;
            }
            None => return steps,
        }
        assert!(steps < 10_000_000, "defrag does not end");
    }
}

fn set_of(s: &SetValue) -> BTreeSet<Vec<u8>> {
    s.iter().map(|m| m.to_vec()).collect()
}

fn hash_of(h: &HashValue) -> BTreeMap<Vec<u8>, Vec<u8>> {
    h.iter().map(|(f, v)| (f.to_vec(), v.to_vec())).collect()
}

fn zset_of(z: &ZsetValue) -> Vec<(Vec<u8>, f64)> {
    z.to_pairs()
}

fn zset_model(m: &BTreeMap<Vec<u8>, f64>) -> Vec<(Vec<u8>, f64)> {
    let mut v: Vec<(Vec<u8>, f64)> = m.iter().map(|(k, s)| (k.clone(), *s)).collect();
    v.sort_by(|a, b| a.1.partial_cmp(&b.1).unwrap().then_with(|| a.0.cmp(&b.0)));
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn set_table_moves_its_blocks_and_reads_back(
        members in proptest::collection::vec(elem(), 200..1_500),
        max_fields in 1usize..300,
        ch in changes(),
    ) {
        let lim = Limits::default();
        let mut s = SetValue::new();
        let mut model = BTreeSet::new();
        for m in &members {
            prop_assert_eq!(s.insert(m, &lim), model.insert(m.clone()));
        }
        prop_assume!(matches!(s, SetValue::Table(_)));
        // A pass with no changes: the box, the control and slot arrays and
        // every member over 15 bytes move.
        let mut d = testing::all();
        stepped(&mut s, |v, at| v.defrag(at, max_fields, &mut d), |_, _| {}, 0);
        let long = model.iter().filter(|m| m.len() > 15).count() as u64;
        prop_assert_eq!(d.hits, 3 + long);
        prop_assert_eq!(&set_of(&s), &model);
        // A pass with changes between its steps.
        let mut d = testing::half();
        stepped(
            &mut s,
            |v, at| v.defrag(at, max_fields, &mut d),
            |s, i| {
                let (ins, m, _, _) = &ch[i];
                if *ins {
                    prop_assert_eq_in(s.insert(m, &lim), model.insert(m.clone()));
                } else {
                    prop_assert_eq_in(s.remove(m), model.remove(m));
                }
            },
            ch.len(),
        );
        if let SetValue::Table(t) = &s {
            t.check();
        }
        prop_assert_eq!(&set_of(&s), &model);
    }

    #[test]
    fn hash_table_moves_its_blocks_and_reads_back(
        pairs in proptest::collection::vec((elem(), bytes()), 200..1_500),
        max_fields in 1usize..300,
        ch in changes(),
    ) {
        let lim = Limits::default();
        let mut h = HashValue::new();
        let mut model = BTreeMap::new();
        for (f, v) in &pairs {
            prop_assert_eq!(h.insert(&lim, f, v), model.insert(f.clone(), v.clone()).is_none());
        }
        prop_assume!(matches!(h, HashValue::Table(_)));
        let mut d = testing::all();
        stepped(&mut h, |v, at| v.defrag(at, max_fields, &mut d), |_, _| {}, 0);
        // The box, ctrl, refs, the chunk list and every chunk buffer
        // (at least the ones the live records need: 2 header bytes +
        // field + value each).
        let HashValue::Table(t) = &h else { unreachable!() };
        let chunks = t.live_chunks() as u64;
        let bytes: usize = model.iter().map(|(f, v)| 2 + f.len() + v.len()).sum();
        prop_assert!(chunks >= bytes.div_ceil(crate::arena::CHUNK) as u64);
        prop_assert!(d.hits >= 4 + chunks, "{} hits, {} chunks", d.hits, chunks);
        prop_assert_eq!(&hash_of(&h), &model);
        let mut d = testing::half();
        stepped(
            &mut h,
            |v, at| v.defrag(at, max_fields, &mut d),
            |h, i| {
                let (ins, f, v, _) = &ch[i];
                if *ins {
                    prop_assert_eq_in(h.insert(&lim, f, v), model.insert(f.clone(), v.clone()).is_none());
                } else {
                    prop_assert_eq_in(h.remove(f), model.remove(f).is_some());
                }
            },
            ch.len(),
        );
        if let HashValue::Table(t) = &h {
            t.check();
        }
        prop_assert_eq!(&hash_of(&h), &model);
    }

    #[test]
    fn zset_tree_moves_its_blocks_and_reads_back(
        entries in proptest::collection::vec((elem(), -1e3f64..1e3), 200..1_500),
        max_fields in 1usize..300,
        ch in changes(),
    ) {
        let lim = Limits::default();
        let mut z = ZsetValue::default();
        let mut model = BTreeMap::new();
        for (m, sc) in &entries {
            z.insert(m, *sc, &lim);
            model.insert(m.clone(), *sc);
        }
        prop_assume!(matches!(z, ZsetValue::Tree(_)));
        let mut d = testing::all();
        let steps = stepped(&mut z, |v, at| v.defrag(at, max_fields, &mut d), |_, _| {}, 0);
        // The box, at least one leaf per CAP entries (each, with its
        // members over 15 bytes), the member table's ctrl, refs, chunk
        // list and a chunk.
        let long = model.keys().filter(|m| m.len() > 15).count();
        let leaves = model.len().div_ceil(CAP);
        prop_assert!(
            d.hits >= (1 + leaves + long + 4) as u64,
            "{} hits, {} leaves, {} long", d.hits, leaves, long
        );
        // Each step visits at most `max_fields` entries plus one leaf.
        prop_assert!(steps >= model.len() / (max_fields + CAP), "{steps} steps");
        prop_assert_eq!(zset_of(&z), zset_model(&model));
        let mut d = testing::half();
        stepped(
            &mut z,
            |v, at| v.defrag(at, max_fields, &mut d),
            |z, i| {
                let (ins, m, _, sc) = &ch[i];
                if *ins {
                    z.insert(m, *sc, &lim);
                    model.insert(m.clone(), *sc);
                } else {
                    prop_assert_eq_in(z.remove(m), model.remove(m));
                }
            },
            ch.len(),
        );
        if let ZsetValue::Tree(t) = &z {
            t.check();
        }
        prop_assert_eq!(zset_of(&z), zset_model(&model));
        for (m, sc) in &model {
            prop_assert_eq!(z.score(m), Some(*sc));
        }
    }
}

/// `assert_eq!` inside the closures that apply changes (proptest's macros
/// return from the enclosing function, a closure here).
#[track_caller]
fn prop_assert_eq_in<T: PartialEq + std::fmt::Debug>(a: T, b: T) {
    assert_eq!(a, b);
}

type StreamView = (
    Vec<(crate::stream::StreamId, Vec<(Vec<u8>, Vec<u8>)>)>,
    Option<crate::stream::PendingSummary>,
);

fn stream_view(s: &crate::stream::Stream) -> StreamView {
    use crate::stream::StreamId;
    (
        s.range(StreamId::MIN, StreamId::MAX, false)
            .map(|e| (e.id, e.to_vec()))
            .collect(),
        s.pending_summary(b"g"),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// A stream (nodes, a group with two consumers and pending entries)
    /// defragmented a step at a time, with entries added and deleted
    /// between steps, reads back the same (XRANGE, XPENDING); every node's
    /// block is offered.
    #[test]
    fn stream_moves_its_nodes_and_reads_back(
        n in 300u64..3_000,
        vals in proptest::collection::vec(bytes(), 1..50),
        ch in proptest::collection::vec((any::<bool>(), 0u64..4_000), 0..100),
    ) {
        use crate::stream::{AddId, NodeLimits, Stream, StreamId};
        let lim = NodeLimits { max_bytes: 4096, max_entries: 100 };
        let mut s = Stream::new();
        for i in 1..=n {
            let v = &vals[i as usize % vals.len()];
            s.add(AddId::Explicit(StreamId::new(i, 0)), &[&b"f"[..], &v[..]], 0, lim).unwrap();
        }
        s.create_group(b"g", StreamId::MIN, None).unwrap();
        s.read_group_new(b"g", b"alice", 50, false, 1000, |_| {});
        s.read_group_new(b"g", b"bob", 20, false, 1000, |_| {});
        let before = stream_view(&s);
        let mut d = testing::all();
        stepped(&mut s, |v, at| v.defrag(at, &mut d), |_, _| {}, 0);
        // At least one node per 100 entries, plus the index arrays.
        prop_assert!(d.hits >= n / 100 + 2, "{} hits for {} entries", d.hits, n);
        prop_assert_eq!(&stream_view(&s), &before);
        let mut d = testing::half();
        let mut next = n + 1;
        let steps = stepped(
            &mut s,
            |v, at| v.defrag(at, &mut d),
            |s, i| {
                let (add, x) = ch[i];
                if add {
                    s.add(AddId::Explicit(StreamId::new(next, 0)), &[&b"f"[..], &b"added"[..]], 0, lim).unwrap();
                    next += 1;
                } else {
                    s.delete(&[StreamId::new(x, 0)]);
                }
            },
            ch.len(),
        );
        let after = stream_view(&s);
        // Replay the changes on a copy built without defrag.
        let mut m = Stream::new();
        for (id, f) in &before.0 {
            let flat: Vec<&[u8]> = f.iter().flat_map(|(a, b)| [&a[..], &b[..]]).collect();
            m.add(AddId::Explicit(*id), &flat, 0, lim).unwrap();
        }
        let mut next = n + 1;
        // Changes are applied after each step, as many as there were steps.
        for &(add, x) in ch.iter().take(steps) {
            if add {
                m.add(AddId::Explicit(StreamId::new(next, 0)), &[&b"f"[..], &b"added"[..]], 0, lim).unwrap();
                next += 1;
            } else {
                m.delete(&[StreamId::new(x, 0)]);
            }
        }
        prop_assert_eq!(after.0, stream_view(&m).0);
    }
}

/// A ring buffer is moved whole, rotated to its buffer's start first when
/// its elements wrap around; one bigger than what the allocator moves is
/// neither rotated nor moved.
#[test]
fn vec_deque_moves_in_order_and_big_ones_stay() {
    let mut q: std::collections::VecDeque<u64> = std::collections::VecDeque::with_capacity(40);
    for i in 0..30 {
        q.push_back(i);
    }
    for i in 0..10 {
        q.pop_front();
        q.push_back(100 + i);
        q.push_front(200 + i);
    }
    let want: Vec<u64> = q.iter().copied().collect();
    let cap = q.capacity();
    let at = q.as_slices().0.as_ptr();
    let mut d = testing::all();
    d.vec_deque(&mut q);
    assert_eq!((d.hits, d.misses), (1, 0));
    assert_eq!(q.iter().copied().collect::<Vec<_>>(), want);
    assert_eq!(q.capacity(), cap);
    assert_ne!(q.as_slices().0.as_ptr(), at);
    let at = q.as_slices().0.as_ptr();
    let mut d = testing::all_up_to(cap * 8 - 1);
    d.vec_deque(&mut q);
    assert_eq!((d.hits, d.misses), (0, 1));
    assert_eq!(q.as_slices().0.as_ptr(), at);
    assert_eq!(q.iter().copied().collect::<Vec<_>>(), want);
    let mut d = testing::all_up_to(cap * 8);
    d.vec_deque(&mut q);
    assert_eq!((d.hits, d.misses), (1, 0));
    assert_eq!(q.iter().copied().collect::<Vec<_>>(), want);
}

fn list_elem() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => (0u32..100_000).prop_map(|i| i.to_string().into_bytes()),
        3 => (0u32..3_000).prop_map(|i| format!("item-{i}-{}", "y".repeat((i % 90) as usize)).into_bytes()),
        1 => proptest::collection::vec(any::<u8>(), 0..300),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// A quicklist built by pushes and pops at both ends (so its node
    /// ring wraps), of several fills and compress depths, defragmented a
    /// random number of nodes per step: a pass moves the node array and
    /// every node's blocks (exactly those: the test mover moves every
    /// block offered); a pass with pushes and pops between its steps reads
    /// back as a `VecDeque` model.
    #[test]
    fn list_moves_its_node_array_and_nodes_and_reads_back(
        pushes in proptest::collection::vec((any::<bool>(), list_elem()), 1..4_000),
        pops in 0usize..400,
        fill in prop_oneof![Just(-2i32), Just(-1), Just(8), Just(128)],
        depth in 0u32..3,
        max_nodes in 1usize..40,
        ch in proptest::collection::vec((0u8..4, list_elem()), 0..200),
    ) {
        use crate::value::list::End;
        use crate::value::ListValue;
        use std::collections::VecDeque;
        let lim = Limits { list_max_listpack_size: fill, list_compress_depth: depth, ..Limits::default() };
        let mut l = ListValue::new(&lim);
        let mut model = VecDeque::new();
        for (head, e) in &pushes {
            if *head {
                l.push(End::Head, e);
                model.push_front(e.clone());
            } else {
                l.push(End::Tail, e);
                model.push_back(e.clone());
            }
        }
        for i in 0..pops.min(model.len() / 2) {
            let end = if i % 3 == 0 { End::Tail } else { End::Head };
            let want = if i % 3 == 0 { model.pop_back() } else { model.pop_front() };
            prop_assert_eq!(l.pop(end), want);
        }
        let owned = l.ql.defrag_blocks();
        let mut d = testing::all();
        let steps = stepped(
            &mut l,
            |v, at| v.defrag(at as usize, max_nodes, &mut d).map(|n| n as u64),
            |_, _| {},
            0,
        );
        prop_assert_eq!(d.hits, owned);
        prop_assert_eq!(steps, l.ql.stats().nodes.div_ceil(max_nodes).max(1));
        l.ql.check();
        prop_assert_eq!(l.to_vecs(), Vec::from(model.clone()));
        let mut d = testing::half();
        stepped(
            &mut l,
            |v, at| v.defrag(at as usize, max_nodes, &mut d).map(|n| n as u64),
            |l, i| {
                let (op, e) = &ch[i];
                match op {
                    0 => {
                        l.push(End::Head, e);
                        model.push_front(e.clone());
                    }
                    1 => {
                        l.push(End::Tail, e);
                        model.push_back(e.clone());
                    }
                    2 => prop_assert_eq_in(l.pop(End::Head), model.pop_front()),
                    _ => prop_assert_eq_in(l.pop(End::Tail), model.pop_back()),
                }
            },
            ch.len(),
        );
        l.ql.check();
        prop_assert_eq!(l.to_vecs(), Vec::from(model));
    }
}

/// What a client reads of a stream's groups: per group its name, last ID,
/// pending entries (ID, delivery time and count, consumer) and consumers
/// (name, seen time, pending IDs).
type GroupsView = Vec<(
    Vec<u8>,
    crate::stream::StreamId,
    Vec<(crate::stream::StreamId, i64, u64, Vec<u8>)>,
    Vec<(Vec<u8>, i64, Vec<crate::stream::StreamId>)>,
)>;

fn groups_view(s: &crate::stream::Stream) -> GroupsView {
    s.groups()
        .iter()
        .map(|g| {
            (
                g.name().to_vec(),
                g.last_id(),
                g.pending()
                    .map(|(id, n, c)| (id, n.delivery_time, n.delivery_count, c.to_vec()))
                    .collect(),
                g.consumers()
                    .map(|c| (c.name().to_vec(), c.seen_time(), c.pending_ids().collect()))
                    .collect(),
            )
        })
        .collect()
}

/// A change to a stream's groups between defrag steps.
#[derive(Debug, Clone)]
enum PelOp {
    /// XREADGROUP of new entries: group, consumer, count.
    Read(u8, u8, usize),
    /// XACK of every pending ID whose number is `x` modulo 7.
    Ack(u8, u64),
    /// XCLAIM (forced) of IDs `x..x+20` to a consumer.
    Claim(u8, u8, u64),
    /// XGROUP DELCONSUMER.
    DelConsumer(u8, u8),
    /// XADD of a new entry.
    Add,
    /// XGROUP DESTROY, then CREATE again from the start.
    Recreate(u8),
}

fn pel_op() -> impl Strategy<Value = PelOp> {
    prop_oneof![
        3 => (0u8..3, 0u8..6, 1usize..300).prop_map(|(g, c, n)| PelOp::Read(g, c, n)),
        2 => (0u8..3, 0u64..7).prop_map(|(g, x)| PelOp::Ack(g, x)),
        2 => (0u8..3, 0u8..6, 0u64..3_000).prop_map(|(g, c, x)| PelOp::Claim(g, c, x)),
        1 => (0u8..3, 0u8..6).prop_map(|(g, c)| PelOp::DelConsumer(g, c)),
        2 => Just(PelOp::Add),
        1 => (0u8..3).prop_map(PelOp::Recreate),
    ]
}

fn group_name(g: u8) -> Vec<u8> {
    format!("group-{g}").into_bytes()
}

fn consumer_name(c: u8) -> Vec<u8> {
    format!("consumer-{c}").into_bytes()
}

fn apply_pel_op(s: &mut crate::stream::Stream, op: &PelOp, now: i64) {
    use crate::stream::{AddId, ClaimOptions, NodeLimits, StreamId};
    let lim = NodeLimits {
        max_bytes: 4096,
        max_entries: 100,
    };
    match *op {
        PelOp::Read(g, c, n) => {
            s.read_group_new(&group_name(g), &consumer_name(c), n, false, now, |_| {});
        }
        PelOp::Ack(g, x) => {
            let ids: Vec<StreamId> = s
                .group(&group_name(g))
                .map(|gr| {
                    gr.pending()
                        .map(|(id, _, _)| id)
                        .filter(|id| id.ms % 7 == x)
                        .collect()
                })
                .unwrap_or_default();
            s.ack(&group_name(g), &ids);
        }
        PelOp::Claim(g, c, x) => {
            let ids: Vec<StreamId> = (x..x + 20).map(|i| StreamId::new(i, 0)).collect();
            let opts = ClaimOptions {
                force: true,
                ..ClaimOptions::default()
            };
            s.claim(&group_name(g), &consumer_name(c), 0, &ids, opts, now);
        }
        PelOp::DelConsumer(g, c) => {
            s.delete_consumer(&group_name(g), &consumer_name(c));
        }
        PelOp::Add => {
            s.add(AddId::Auto, &[&b"f"[..], &b"added"[..]], now, lim)
                .unwrap();
        }
        PelOp::Recreate(g) => {
            s.destroy_group(&group_name(g));
            s.create_group(&group_name(g), StreamId::MIN, None).unwrap();
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// A stream with up to three groups, each with consumers holding
    /// pending entries (some acknowledged, some claimed across consumers):
    /// a pass moves every block the stream owns, the PELs' entry arrays
    /// included (exactly those: the test mover moves every block
    /// offered); a pass with reads, acks, claims, consumer and group
    /// deletions and adds between its steps reads back as the same
    /// changes applied to a copy that was never defragmented.
    #[test]
    fn stream_moves_its_pel_arrays_and_reads_back(
        n in 1u64..3_000,
        groups in 1u8..4,
        setup in proptest::collection::vec(pel_op(), 1..40),
        ch in proptest::collection::vec(pel_op(), 0..150),
    ) {
        use crate::stream::{AddId, NodeLimits, Stream, StreamId};
        let lim = NodeLimits { max_bytes: 4096, max_entries: 100 };
        let mut s = Stream::new();
        for i in 1..=n {
            s.add(AddId::Explicit(StreamId::new(i, 0)), &[&b"f"[..], &b"v"[..]], 0, lim).unwrap();
        }
        for g in 0..groups {
            s.create_group(&group_name(g), StreamId::MIN, None).unwrap();
        }
        for (i, op) in setup.iter().enumerate() {
            apply_pel_op(&mut s, op, 1_000 + i as i64);
        }
        s.check();
        let before = (stream_view(&s).0, groups_view(&s));
        let (owned, pels) = s.defrag_blocks();
        let pending: usize = s.groups().iter().map(|g| g.pending_len()).sum();
        prop_assert_eq!(pels == 0, pending == 0);
        let mut d = testing::all();
        stepped(&mut s, |v, at| v.defrag(at, &mut d), |_, _| {}, 0);
        prop_assert_eq!(d.hits, owned, "{} PEL arrays", pels);
        s.check();
        prop_assert_eq!(&(stream_view(&s).0, groups_view(&s)), &before);
        let mut copy = s.clone();
        let mut d = testing::half();
        let steps = stepped(
            &mut s,
            |v, at| v.defrag(at, &mut d),
            |s, i| apply_pel_op(s, &ch[i], 5_000 + i as i64),
            ch.len(),
        );
        for (i, op) in ch.iter().take(steps).enumerate() {
            apply_pel_op(&mut copy, op, 5_000 + i as i64);
        }
        s.check();
        prop_assert_eq!(
            (stream_view(&s).0, groups_view(&s)),
            (stream_view(&copy).0, groups_view(&copy))
        );
    }
}

/// Big PELs move in bounded steps: a group PEL of 5,000 entries and its
/// three consumers' PELs take many steps of at most
/// `PEL_CHUNKS_PER_STEP` arrays, and every array moves.
#[test]
fn big_pels_move_in_bounded_steps() {
    use crate::stream::{AddId, NodeLimits, Stream, StreamId, PEL_CHUNKS_PER_STEP};
    let lim = NodeLimits {
        max_bytes: 4096,
        max_entries: 100,
    };
    let mut s = Stream::new();
    for i in 1..=6_000 {
        s.add(
            AddId::Explicit(StreamId::new(i, 0)),
            &[&b"f"[..], &b"v"[..]],
            0,
            lim,
        )
        .unwrap();
    }
    s.create_group(b"g", StreamId::MIN, None).unwrap();
    for c in 0..3u8 {
        s.read_group_new(b"g", &consumer_name(c), 5_000 / 3, false, 7, |_| {});
    }
    let (owned, pels) = s.defrag_blocks();
    // 4,998 pending: at least 79 arrays in the group PEL, 27 in each
    // consumer's.
    assert!(pels >= 79 + 3 * 27, "{pels} PEL arrays");
    let mut d = testing::all();
    let mut at = 0;
    let mut pel_steps = 0;
    let mut offered_before = 0;
    loop {
        let next = s.defrag(at, &mut d);
        if at & (1 << 63) != 0 {
            pel_steps += 1;
            // A PEL step offers at most PEL_CHUNKS_PER_STEP arrays.
            assert!(d.hits - offered_before <= PEL_CHUNKS_PER_STEP as u64);
        }
        offered_before = d.hits;
        match next {
            Some(n) => at = n,
            None => break,
        }
    }
    assert_eq!(d.hits, owned);
    assert!(pel_steps >= (pels as usize).div_ceil(PEL_CHUNKS_PER_STEP));
    s.check();
    assert_eq!(s.pending_summary(b"g").unwrap().count, 4_998);
}

/// The question without the move: true exactly when `vec` would move the
/// buffer (allocated, within the size limit, advised), and nothing is
/// moved or counted by asking.
#[test]
fn would_move_vec_asks_without_moving() {
    let mut v: Vec<u8> = Vec::with_capacity(64);
    v.extend_from_slice(b"channel");
    let at = v.as_ptr();
    let d = testing::all();
    assert!(d.would_move_vec(&v));
    assert!(!d.would_move_vec(&Vec::<u8>::new()));
    assert_eq!((d.hits, d.misses), (0, 0));
    assert_eq!(v.as_ptr(), at);
    assert!(!testing::all_up_to(63).would_move_vec(&v));
    assert!(testing::all_up_to(64).would_move_vec(&v));
}
