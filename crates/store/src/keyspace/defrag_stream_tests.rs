//! Defragmentation of streams with big PELs across changes (split from
//! `defrag_tests`, whose helpers it uses).

use super::*;

/// A stream's entries, groups, pending entries and consumers as a client
/// reads them (XRANGE, XINFO, XPENDING).
fn stream_text(s: &collections::stream::Stream) -> String {
    use collections::stream::StreamId;
    let entries: Vec<_> = s
        .range(StreamId::MIN, StreamId::MAX, false)
        .map(|e| (e.id, e.to_vec()))
        .collect();
    let groups: Vec<_> = s
        .groups()
        .iter()
        .map(|g| {
            let pel: Vec<_> = g
                .pending()
                .map(|(id, n, c)| (id, n.delivery_time, n.delivery_count, c.to_vec()))
                .collect();
            let consumers: Vec<_> = g
                .consumers()
                .map(|c| {
                    let ids: Vec<_> = c.pending_ids().collect();
                    (c.name().to_vec(), c.seen_time(), ids)
                })
                .collect();
            (g.name().to_vec(), g.last_id(), pel, consumers)
        })
        .collect();
    format!("stream {entries:?} {groups:?}")
}

const STREAM_NODE: collections::stream::NodeLimits = collections::stream::NodeLimits {
    max_bytes: 4096,
    max_entries: 100,
};

/// A stream of `n` entries with three groups of four consumers, each
/// group with `pending` entries delivered (a quarter to each consumer).
fn stream_with_pels(n: u64, pending: usize) -> collections::stream::Stream {
    use collections::stream::{AddId, Stream, StreamId};
    let mut s = Stream::new();
    for i in 1..=n {
        let v = format!("value-{i}");
        s.add(
            AddId::Explicit(StreamId::new(i, 0)),
            &[&b"field"[..], v.as_bytes()],
            0,
            STREAM_NODE,
        )
        .unwrap();
    }
    for g in 0..3 {
        let name = format!("g{g}");
        s.create_group(name.as_bytes(), StreamId::MIN, None)
            .unwrap();
        for c in 0..4 {
            let who = format!("c{c}");
            s.read_group_new(
                name.as_bytes(),
                who.as_bytes(),
                pending / 4,
                false,
                10,
                |_| {},
            );
        }
    }
    s
}

/// One change to a stream's groups or entries, from the random word `r`
/// (the same on the keyspace's stream and on the model's).
fn change_stream(s: &mut collections::stream::Stream, r: u64, now: i64) {
    use collections::stream::{AddId, ClaimOptions, StreamId};
    let group = format!("g{}", (r >> 20) % 3).into_bytes();
    let consumer = format!("c{}", (r >> 24) % 5).into_bytes();
    match (r >> 28) % 6 {
        0 => {
            s.read_group_new(&group, &consumer, 40, false, now, |_| {});
        }
        1 => {
            let m = (r >> 32) % 5;
            let ids: Vec<StreamId> = s
                .group(&group)
                .map(|g| {
                    g.pending()
                        .map(|(id, _, _)| id)
                        .filter(|id| id.ms % 5 == m)
                        .take(300)
                        .collect()
                })
                .unwrap_or_default();
            s.ack(&group, &ids);
        }
        2 => {
            let from = (r >> 32) % 7_000;
            let ids: Vec<StreamId> = (from..from + 64).map(|i| StreamId::new(i, 0)).collect();
            let opts = ClaimOptions {
                force: true,
                ..ClaimOptions::default()
            };
            s.claim(&group, &consumer, 0, &ids, opts, now);
        }
        3 => {
            s.delete_consumer(&group, &consumer);
        }
        4 => {
            for _ in 0..20 {
                s.add(
                    AddId::Auto,
                    &[&b"field"[..], &b"added"[..]],
                    now,
                    STREAM_NODE,
                )
                .unwrap();
            }
        }
        _ => {
            if s.destroy_group(&group) {
                s.create_group(&group, StreamId::MIN, None).unwrap();
            }
        }
    }
}

/// Streams with big PELs (three groups of 4,800 pending entries each,
/// spread over four consumers) are moved a step at a time over 1 us
/// slices; between slices their groups read, acknowledge and claim
/// entries, lose consumers, are recreated, the streams grow, and now and
/// then a key is deleted, replaced by a string or written again: every key
/// reads back as the same changes made to copies never defragmented. A
/// last pass with no changes moves at least every PEL entry array (64
/// entries at most each) and every node (100 entries at most each).
#[test]
fn streams_with_big_pels_move_in_steps_across_changes() {
    let ks = Keyspace::new(Config {
        partitions: 2,
        databases: 1,
    });
    let keys = 4;
    let mut model: BTreeMap<Vec<u8>, collections::stream::Stream> = BTreeMap::new();
    let mut strings: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    for i in 0..keys {
        let k = format!("stream:{i}").into_bytes();
        let s = stream_with_pels(6_000, 4_800);
        let key = Key::new(&k);
        ks.lock(&key)
            .insert(0, &key, CompactValue::from_stream(s.clone()), None, NOW);
        model.insert(k, s);
    }
    let mut d = testing::half();
    let mut cur = DefragCursor::default();
    let mut counts = KeyCounts::default();
    let mut slices = 0u64;
    let mut r = 0x9e37_79b9_7f4a_7c15u64;
    while !ks.defrag_slice(&mut cur, Duration::from_micros(1), &mut d, &mut counts) {
        slices += 1;
        r = r.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        let i = (r >> 40) % keys;
        let k = format!("stream:{i}").into_bytes();
        let key = Key::new(&k);
        let mut g = ks.lock(&key);
        // stream:0 is only ever changed in place, so one stream is
        // always left for the last pass.
        if slices.is_multiple_of(13) && i != 0 {
            match (slices / 13) % 3 {
                0 => {
                    g.remove(0, &key, NOW);
                    model.remove(&k);
                    strings.remove(&k);
                }
                1 => {
                    g.insert(
                        0,
                        &key,
                        CompactValue::from_bytes(b"now a string"),
                        None,
                        NOW,
                    );
                    model.remove(&k);
                    strings.insert(k, b"now a string".to_vec());
                }
                _ => {
                    let s = stream_with_pels(2_000 + slices % 3_000, 1_600);
                    g.insert(0, &key, CompactValue::from_stream(s.clone()), None, NOW);
                    strings.remove(&k);
                    model.insert(k, s);
                }
            }
            continue;
        }
        let Some(m) = model.get_mut(&k) else {
            continue;
        };
        let s = g.get(0, &key, NOW).unwrap().stream_mut().unwrap();
        change_stream(s, r, slices as i64);
        change_stream(m, r, slices as i64);
    }
    // A stream's PELs take ~30 steps of 16 arrays; how many steps fit a
    // 1 us slice depends on the clock, so only a floor of a few slices a
    // stream is asserted (the last pass checks that every array moves).
    assert!(
        slices > 4 * keys,
        "the streams took several steps each ({slices} slices)"
    );
    let want: BTreeMap<Vec<u8>, String> = model
        .iter()
        .map(|(k, s)| (k.clone(), stream_text(s)))
        .chain(
            strings
                .iter()
                .map(|(k, v)| (k.clone(), format!("str {v:?}"))),
        )
        .collect();
    let got = || -> BTreeMap<Vec<u8>, String> {
        let mut out = BTreeMap::new();
        for p in 0..ks.partitions() {
            let g = ks.lock_partition(p);
            if let Some(db) = g.db(0) {
                for e in db.table.iter() {
                    let v = e.value();
                    let t = match v.as_stream() {
                        Some(s) => stream_text(s),
                        None => text(v),
                    };
                    out.insert(e.key().to_vec(), t);
                }
            }
        }
        out
    };
    assert_eq!(got(), want);
    // Every PEL holds at least len / 64 entry arrays, every stream at
    // least len / 100 nodes: a pass moves at least those.
    let mut floor = 0u64;
    for s in model.values() {
        floor += s.len().div_ceil(100);
        for g in s.groups() {
            floor += g.pending_len().div_ceil(64) as u64;
            floor += g
                .consumers()
                .map(|c| c.pending().div_ceil(64) as u64)
                .sum::<u64>();
        }
    }
    assert!(floor > 0);
    let mut d = testing::all();
    pass(&ks, &mut d);
    assert!(d.hits >= floor, "{} blocks moved, floor {floor}", d.hits);
    assert_eq!(got(), want);
}
