//! A defrag pass over big hashes, sets and sorted sets, stepped a few
//! elements at a time (with changes between steps), reads back as a
//! model, and really moves the structures' inner blocks: with a mover
//! that moves every block offered, the hit count must reach the blocks
//! each structure is known to own.

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
