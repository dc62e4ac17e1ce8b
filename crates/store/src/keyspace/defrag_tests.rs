//! Defragmentation changes no value: a pass that moves every block (or
//! every other one) over random data of every type and encoding leaves
//! every key, value and TTL reading back the same.

use std::collections::BTreeMap;
use std::time::Duration;

use collections::defrag::{testing, Defrag};
use collections::value::list::End;
use collections::{HashValue, Limits, ListValue, SetValue, ZsetValue};
use proptest::prelude::*;

use super::defrag::{DefragCursor, KeyCounts};
use super::{Config, Keyspace};
use crate::object::{CompactValue, Key};

const NOW: u64 = 1_800_000_000_000;

#[derive(Debug, Clone)]
enum V {
    Str(Vec<u8>),
    Int(i64),
    List(Vec<Vec<u8>>),
    Set(Vec<Vec<u8>>),
    Zset(Vec<(Vec<u8>, f64)>),
    Hash(Vec<(Vec<u8>, Vec<u8>)>),
}

fn bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..max),
        (0u64..100_000).prop_map(|i| i.to_string().into_bytes()),
        "[a-z0-9:]{0,70}".prop_map(|s| s.into_bytes()),
    ]
}

fn value() -> impl Strategy<Value = V> {
    prop_oneof![
        bytes(700).prop_map(V::Str),
        any::<i64>().prop_map(V::Int),
        proptest::collection::vec(bytes(200), 1..300).prop_map(V::List),
        proptest::collection::vec(bytes(80), 1..200).prop_map(V::Set),
        proptest::collection::vec(
            (0u32..1000).prop_map(|i| i.to_string().into_bytes()),
            1..600
        )
        .prop_map(V::Set),
        proptest::collection::vec((bytes(80), -1e6f64..1e6), 1..200).prop_map(V::Zset),
        proptest::collection::vec((bytes(40), bytes(100)), 1..200).prop_map(V::Hash),
        proptest::collection::vec((bytes(8), bytes(8)), 1..10).prop_map(V::Hash),
    ]
}

fn key() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        "k:[0-9]{1,8}".prop_map(|s| s.into_bytes()),
        proptest::collection::vec(any::<u8>(), 1..60),
    ]
}

fn build(v: &V, lim: &Limits) -> CompactValue {
    match v {
        V::Str(b) => CompactValue::from_bytes(b),
        V::Int(i) => CompactValue::from_int(*i),
        V::List(items) => {
            let mut l = ListValue::new(lim);
            for it in items {
                l.push(End::Tail, it);
            }
            CompactValue::from_list(l)
        }
        V::Set(items) => {
            let mut s = SetValue::new();
            for it in items {
                s.insert(it, lim);
            }
            CompactValue::from_set(s)
        }
        V::Zset(items) => {
            let mut z = ZsetValue::default();
            for (m, sc) in items {
                z.insert(m, *sc, lim);
            }
            CompactValue::from_zset(z)
        }
        V::Hash(items) => {
            let mut h = HashValue::new();
            for (f, x) in items {
                h.insert(lim, f, x);
            }
            CompactValue::from_hash(h)
        }
    }
}

/// What a client could read of one value.
fn text(v: &CompactValue) -> String {
    if let Some(s) = v.string() {
        format!("str {:?}", s.to_vec())
    } else if let Some(l) = v.as_list() {
        format!("list {:?}", l.to_vecs())
    } else if let Some(s) = v.as_set() {
        let mut m: Vec<String> = s.iter().map(|m| m.to_string()).collect();
        m.sort();
        format!("set {m:?}")
    } else if let Some(z) = v.as_zset() {
        format!("zset {:?}", z.to_pairs())
    } else if let Some(h) = v.as_hash() {
        let mut m: Vec<(String, String)> = h
            .iter()
            .map(|(f, x)| (f.to_string(), x.to_string()))
            .collect();
        m.sort();
        format!("hash {m:?}")
    } else {
        panic!("unknown value type")
    }
}

/// What a client could read of the whole keyspace.
fn dump(ks: &Keyspace) -> BTreeMap<(usize, Vec<u8>), (String, Option<u64>)> {
    let mut out = BTreeMap::new();
    for p in 0..ks.partitions() {
        let g = ks.lock_partition(p);
        for db in 0..ks.databases() {
            let Some(d) = g.db(db) else { continue };
            for e in d.table.iter() {
                out.insert((db, e.key().to_vec()), (text(e.value()), e.expire_at()));
            }
        }
    }
    out
}

fn pass(ks: &Keyspace, d: &mut Defrag) -> KeyCounts {
    let mut cur = DefragCursor::default();
    let mut keys = KeyCounts::default();
    // Tiny slices: the pass is resumed many times.
    while !ks.defrag_slice(&mut cur, Duration::from_micros(1), d, &mut keys) {}
    assert!(cur.at_start());
    keys
}

fn run(data: Vec<(Vec<u8>, V, bool)>, half: bool) {
    let lim = Limits::default();
    let ks = Keyspace::new(Config {
        partitions: 4,
        databases: 2,
    });
    for (i, (k, v, ttl)) in data.iter().enumerate() {
        let key = Key::new(k);
        let ttl = ttl.then_some(NOW + 1_000_000 + i as u64);
        let p = ks.partition_of_slot(key.slot());
        ks.lock_partition(p)
            .insert(i % 2, &key, build(v, &lim), ttl, NOW);
    }
    let before = dump(&ks);
    let mut d = if half {
        testing::half()
    } else {
        testing::all()
    };
    let moves = testing::moves_on_this_thread();
    let keys = pass(&ks, &mut d);
    assert_eq!(dump(&ks), before, "a defrag pass changed a value");
    // Every hit went through the mover (whose replacement bypasses the
    // thread cache), the table's segment headers and rows included.
    assert_eq!(testing::moves_on_this_thread() - moves, d.hits);
    let visited = keys.hits + keys.misses;
    assert!(
        visited >= before.len() as u64,
        "{visited} < {}",
        before.len()
    );
    if !half && !before.is_empty() {
        // The table's blocks always move; a key counts a hit only when its
        // value has a block of its own (not when every value is inline,
        // as proptest found with one key of value "0").
        assert!(d.hits > 0);
        if data.iter().any(|(_, v, _)| build(v, &lim).heap_size() > 0) {
            assert!(keys.hits > 0);
        }
    }
    // A second pass over moved blocks, then normal use, still reads back.
    pass(&ks, &mut d);
    assert_eq!(dump(&ks), before);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    #[test]
    fn defrag_changes_no_value(
        data in proptest::collection::vec((key(), value(), any::<bool>()), 0..120),
        half in any::<bool>(),
    ) {
        run(data, half);
    }
}

/// Enough keys that tables have many segments and rows to move.
#[test]
fn defrag_moves_table_blocks_too() {
    let data: Vec<(Vec<u8>, V, bool)> = (0..20_000)
        .map(|i| {
            (
                format!("key:{i}").into_bytes(),
                V::Str(vec![b'x'; 20 + i % 90]),
                i % 3 == 0,
            )
        })
        .collect();
    run(data, false);
}

/// A value of every type and encoding (lists of up to 2,400 elements,
/// more nodes than one defrag step), from a seed (the concurrent test runs
/// outside proptest).
fn gen_value(r: &mut u64) -> V {
    let mut next = || {
        *r ^= *r << 13;
        *r ^= *r >> 7;
        *r ^= *r << 17;
        *r
    };
    let n = (next() % 300) as usize + 1;
    let item = |i: usize, x: u64| format!("e{i}:{}", "y".repeat((x % 90) as usize)).into_bytes();
    match next() % 8 {
        0 => V::Str(vec![b's'; (next() % 700) as usize]),
        7 => V::List((0..n * 8).map(|i| item(i, next())).collect()),
        1 => V::Int(next() as i64),
        2 => V::List((0..n).map(|i| item(i, next())).collect()),
        3 => V::Set((0..n).map(|i| item(i, next())).collect()),
        4 => V::Set((0..n).map(|i| i.to_string().into_bytes()).collect()),
        5 => V::Zset((0..n).map(|i| (item(i, next()), i as f64 / 3.0)).collect()),
        _ => V::Hash(
            (0..n % 20 + 1)
                .map(|i| (item(i, next()), item(i + 1, next())))
                .collect(),
        ),
    }
}

/// Defrag passes (moving every block, in slices long enough that a slice
/// holds a partition for several stretches and hands it over between
/// them) while three threads write, overwrite, delete and read their own
/// keys of every type: every read matches the writer's model, and so does
/// the whole keyspace at the end.
#[test]
fn defrag_under_concurrent_writers_changes_no_value() {
    use std::collections::HashMap;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
    use std::sync::Arc;

    let lim = Limits::default();
    let ks = Arc::new(Keyspace::new(Config {
        partitions: 4,
        databases: 1,
    }));
    // Background data, so a pass takes many stretches.
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut fixed = HashMap::new();
    for i in 0..3_000 {
        let k = format!("bg:{i}").into_bytes();
        let v = gen_value(&mut seed);
        let key = Key::new(&k);
        ks.lock(&key).insert(0, &key, build(&v, &lim), None, NOW);
        fixed.insert(k, text(&build(&v, &lim)));
    }
    let stop = Arc::new(AtomicBool::new(false));
    let passes = Arc::new(AtomicU64::new(0));
    let defragger = {
        let (ks, stop, passes) = (ks.clone(), stop.clone(), passes.clone());
        std::thread::spawn(move || {
            let mut d = testing::all();
            let mut cur = DefragCursor::default();
            let mut keys = KeyCounts::default();
            while !stop.load(Relaxed) {
                if ks.defrag_slice(&mut cur, Duration::from_millis(2), &mut d, &mut keys) {
                    passes.fetch_add(1, Relaxed);
                }
            }
            d.hits
        })
    };
    let writers: Vec<_> = (0..3u64)
        .map(|t| {
            let (ks, passes) = (ks.clone(), passes.clone());
            std::thread::spawn(move || {
                let lim = Limits::default();
                let mut r = 0x2545_f491_4f6c_dd1du64 ^ (t + 1);
                let mut model: HashMap<Vec<u8>, String> = HashMap::new();
                let mut ops = 0u64;
                while ops < 3_000 || passes.load(Relaxed) < 3 {
                    ops += 1;
                    r = r.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    let k = format!("w{t}:{}", (r >> 33) % 200).into_bytes();
                    let key = Key::new(&k);
                    match (r >> 20) % 4 {
                        0 | 1 => {
                            let v = build(&gen_value(&mut r), &lim);
                            model.insert(k.clone(), text(&v));
                            ks.lock(&key).insert(0, &key, v, None, NOW);
                        }
                        2 => {
                            let gone = ks.lock(&key).remove(0, &key, NOW).is_some();
                            assert_eq!(gone, model.remove(&k).is_some());
                        }
                        _ => {
                            let mut g = ks.lock(&key);
                            let got = g.get_read_notouch(0, &key, NOW).map(|e| text(e.value()));
                            assert_eq!(got.as_ref(), model.get(&k), "read of {k:?}");
                        }
                    }
                }
                model
            })
        })
        .collect();
    let mut want: BTreeMap<Vec<u8>, String> = fixed.into_iter().collect();
    for w in writers {
        want.extend(w.join().unwrap());
    }
    stop.store(true, Relaxed);
    assert!(defragger.join().unwrap() > 0, "blocks were moved");
    let got: BTreeMap<Vec<u8>, String> = dump(&ks)
        .into_iter()
        .map(|((_, k), (v, _))| (k, v))
        .collect();
    assert_eq!(got, want);
}

/// Long lists are moved a step of nodes at a time, over many slices (1 us
/// slices: one step each); between slices their keys are deleted,
/// replaced by strings or written again as other long lists, and every
/// key still reads back as last written.
#[test]
fn long_lists_move_in_steps_across_changes() {
    let lim = Limits::default();
    let ks = Keyspace::new(Config {
        partitions: 2,
        databases: 1,
    });
    let long = |i: usize| {
        V::List(
            (0..3_000)
                .map(|j| format!("{i}:{j}:{}", "x".repeat(90)).into_bytes())
                .collect(),
        )
    };
    let mut model: BTreeMap<Vec<u8>, String> = BTreeMap::new();
    let put = |model: &mut BTreeMap<Vec<u8>, String>, k: String, v: &V| {
        let key = Key::new(k.as_bytes());
        let cv = build(v, &lim);
        model.insert(k.clone().into_bytes(), text(&cv));
        ks.lock(&key).insert(0, &key, cv, None, NOW);
    };
    for i in 0..12 {
        put(&mut model, format!("long:{i}"), &long(i));
    }
    for i in 0..200 {
        put(&mut model, format!("s:{i}"), &V::Str(vec![b'v'; 30 + i]));
    }
    let mut d = testing::all();
    let mut cur = DefragCursor::default();
    let mut keys = KeyCounts::default();
    let mut slices = 0usize;
    while !ks.defrag_slice(&mut cur, Duration::from_micros(1), &mut d, &mut keys) {
        slices += 1;
        if slices.is_multiple_of(5) {
            let i = (slices / 5) % 12;
            let k = format!("long:{i}");
            match (slices / 60) % 3 {
                0 => put(&mut model, k, &V::Str(b"now a string".to_vec())),
                1 => {
                    let key = Key::new(k.as_bytes());
                    ks.lock(&key).remove(0, &key, NOW);
                    model.remove(k.as_bytes());
                }
                _ => put(&mut model, k, &long(i + 100)),
            }
        }
    }
    // Each step of a long list ends a 1 us slice; how many steps the scan
    // itself fits into a slice depends on the clock, so only a floor well
    // below the 35-37 slices seen is asserted (that every node moved is
    // checked by the whole pass below).
    assert!(
        slices > 12,
        "the lists took several steps each ({slices} slices)"
    );
    let got: BTreeMap<Vec<u8>, String> = dump(&ks)
        .into_iter()
        .map(|((_, k), (v, _))| (k, v))
        .collect();
    assert_eq!(got, model);
    // A whole pass with no changes reads back the same too, and moves
    // every node of every long list (3,000 elements of ~95 bytes: at
    // least 35 nodes of 8 KB), not only the first step's.
    let lists = model.values().filter(|v| v.starts_with("list")).count();
    assert!(lists > 0);
    let before = d.hits;
    pass(&ks, &mut d);
    assert!(
        d.hits - before >= (200 + 35 * lists) as u64,
        "{} blocks moved for {lists} lists",
        d.hits - before
    );
    let again: BTreeMap<Vec<u8>, String> = dump(&ks)
        .into_iter()
        .map(|((_, k), (v, _))| (k, v))
        .collect();
    assert_eq!(again, model);
}

/// What a client reads of a value, structured (the big-collection test's
/// model).
#[derive(Clone, Debug, PartialEq)]
enum M {
    Str(Vec<u8>),
    Set(std::collections::BTreeSet<Vec<u8>>),
    Zset(BTreeMap<Vec<u8>, f64>),
    Hash(BTreeMap<Vec<u8>, Vec<u8>>),
}

fn read_m(v: &CompactValue) -> M {
    if let Some(s) = v.string() {
        M::Str(s.to_vec())
    } else if let Some(s) = v.as_set() {
        M::Set(s.iter().map(|m| m.to_vec()).collect())
    } else if let Some(z) = v.as_zset() {
        let pairs = z.to_pairs();
        assert!(
            pairs
                .windows(2)
                .all(|w| (w[0].1, &w[0].0) < (w[1].1, &w[1].0)),
            "sorted set out of order"
        );
        M::Zset(pairs.into_iter().collect())
    } else if let Some(h) = v.as_hash() {
        M::Hash(h.iter().map(|(f, x)| (f.to_vec(), x.to_vec())).collect())
    } else {
        panic!("unexpected value type")
    }
}

fn big_member(i: u64, j: u64) -> Vec<u8> {
    format!("{i}:{j}:{}", "x".repeat(20 + (j % 60) as usize)).into_bytes()
}

/// A big collection of `kind` (0 set, 1 sorted set, 2 hash), `n`
/// elements of over 15 bytes (each its own block in a set or sorted set).
fn big_m(kind: u64, i: u64, n: u64) -> M {
    let ms = (0..n).map(|j| big_member(i, j));
    match kind % 3 {
        0 => M::Set(ms.collect()),
        1 => M::Zset(ms.zip(0..).map(|(m, j)| (m, j as f64 * 0.5)).collect()),
        _ => M::Hash(
            ms.zip(0..)
                .map(|(m, j)| (m, format!("v{j}").into_bytes()))
                .collect(),
        ),
    }
}

fn build_m(m: &M, lim: &Limits) -> CompactValue {
    match m {
        M::Str(s) => CompactValue::from_bytes(s),
        M::Set(s) => build(&V::Set(s.iter().cloned().collect()), lim),
        M::Zset(z) => build(
            &V::Zset(z.iter().map(|(m, s)| (m.clone(), *s)).collect()),
            lim,
        ),
        M::Hash(h) => build(
            &V::Hash(h.iter().map(|(f, x)| (f.clone(), x.clone())).collect()),
            lim,
        ),
    }
}

/// The blocks one step of a big collection moves, at most: a step visits
/// `FIELDS_PER_STEP` (64) elements (fewer when the setting is lower; a sorted
/// set up to one tree leaf more), each owning one block here, plus the
/// collection's own arrays and tree nodes; with a zero slice every slice
/// is one step. So the partition is never held for the setting's 1,000
/// elements at once (with 1,000-element steps one slice moved 1,123).
#[test]
fn a_big_collection_step_moves_at_most_a_bounded_number_of_blocks() {
    let lim = Limits::default();
    // The default setting is 1,000: a step still visits 64 elements.
    for (setting, per_step) in [(None, 64), (Some(16), 16)] {
        let ks = Keyspace::new(Config {
            partitions: 1,
            databases: 1,
        });
        for kind in 0..3u64 {
            let key = format!("big:{kind}");
            let key = Key::new(key.as_bytes());
            ks.lock(&key)
                .insert(0, &key, build_m(&big_m(kind, kind, 3_000), &lim), None, NOW);
        }
        let mut d = testing::all();
        let mut cur = DefragCursor::default();
        if let Some(n) = setting {
            cur.set_max_fields(n);
        }
        let mut keys = KeyCounts::default();
        let (mut slices, mut most) = (0u64, 0u64);
        loop {
            let before = d.hits;
            let done = ks.defrag_slice(&mut cur, Duration::ZERO, &mut d, &mut keys);
            most = most.max(d.hits - before);
            slices += 1;
            if done {
                break;
            }
        }
        // The sets' and sorted sets' 3,000 members are each a block, so
        // a pass moves more than 6,000 blocks, in many steps.
        assert!(d.hits > 6_000, "{} blocks moved", d.hits);
        // A sorted set's step ends at a leaf boundary, so it visits up to
        // one leaf (CAP entries) more; each entry is a member block and
        // its share of the leaf and member-table moves.
        let bound = 2 * (per_step + collections::zset::CAP) as u64 + 16;
        assert!(
            most <= bound,
            "one slice moved {most} blocks, more than {bound} (setting {setting:?}, {slices} slices)"
        );
        assert!(slices >= d.hits / bound);
    }
}

/// Big hashes, sets and sorted sets (table and tree encodings) are moved
/// a step of 50 elements (`max_fields`) at a time, over 1 us slices (one
/// step each), while two threads add and remove their elements in place,
/// delete them, replace them by strings or by big collections of another
/// type, and read them back: every read matches the writer's model, and
/// so does the whole keyspace at the end. A last pass with no changes
/// moves at least every member block of every big set and sorted set.
#[test]
fn big_collections_move_in_steps_under_concurrent_writers() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
    use std::sync::Arc;

    let lim = Limits::default();
    let ks = Arc::new(Keyspace::new(Config {
        partitions: 2,
        databases: 1,
    }));
    let put = |ks: &Keyspace, k: &[u8], m: &M| {
        let key = Key::new(k);
        ks.lock(&key).insert(0, &key, build_m(m, &lim), None, NOW);
    };
    let mut start: Vec<BTreeMap<Vec<u8>, M>> = Vec::new();
    for t in 0..2u64 {
        let mut model = BTreeMap::new();
        for i in 0..6u64 {
            let k = format!("big{t}:{i}").into_bytes();
            let m = big_m(i, t * 100 + i, 2_500);
            put(&ks, &k, &m);
            model.insert(k, m);
        }
        start.push(model);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let passes = Arc::new(AtomicU64::new(0));
    let defragger = {
        let (ks, stop, passes) = (ks.clone(), stop.clone(), passes.clone());
        std::thread::spawn(move || {
            let mut d = testing::all();
            let mut cur = DefragCursor::default();
            cur.set_max_fields(50);
            let mut keys = KeyCounts::default();
            let mut slices = 0u64;
            while !stop.load(Relaxed) {
                slices += 1;
                if ks.defrag_slice(&mut cur, Duration::from_micros(1), &mut d, &mut keys) {
                    passes.fetch_add(1, Relaxed);
                }
            }
            (d.hits, slices)
        })
    };
    let writers: Vec<_> = start
        .into_iter()
        .enumerate()
        .map(|(t, mut model)| {
            let (ks, passes) = (ks.clone(), passes.clone());
            std::thread::spawn(move || {
                let lim = Limits::default();
                let mut r = 0x2545_f491_4f6c_dd1du64 ^ (t as u64 + 7);
                let mut ops = 0u64;
                while ops < 3_000 || passes.load(Relaxed) < 3 {
                    ops += 1;
                    r = r.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    let i = (r >> 33) % 6;
                    let k = format!("big{t}:{i}").into_bytes();
                    let key = Key::new(&k);
                    let j = (r >> 13) % 3_000;
                    let m = big_member(t as u64 * 100 + i, j);
                    let mut g = ks.lock(&key);
                    match (r >> 45) % 16 {
                        0..=10 => {
                            // Add or remove one element in place.
                            let add = (r >> 50).is_multiple_of(2);
                            let Some(e) = g.get(0, &key, NOW) else {
                                continue;
                            };
                            match model.get_mut(&k) {
                                Some(M::Set(s)) => {
                                    let set = e.set_mut().unwrap();
                                    if add {
                                        assert_eq!(set.insert(&m, &lim), s.insert(m));
                                    } else {
                                        assert_eq!(set.remove(&m), s.remove(&m));
                                    }
                                }
                                Some(M::Zset(z)) => {
                                    let zs = e.zset_mut().unwrap();
                                    if add {
                                        assert_eq!(zs.insert(&m, 7.0, &lim), z.insert(m, 7.0));
                                    } else {
                                        assert_eq!(zs.remove(&m), z.remove(&m));
                                    }
                                }
                                Some(M::Hash(h)) => {
                                    let mut hs = e.hash_mut().unwrap();
                                    if add {
                                        let v = format!("new{j}").into_bytes();
                                        assert_eq!(
                                            hs.insert(&lim, &m, &v),
                                            h.insert(m, v).is_none()
                                        );
                                    } else {
                                        assert_eq!(hs.remove(&m), h.remove(&m).is_some());
                                    }
                                }
                                _ => {}
                            }
                        }
                        11 => {
                            let gone = g.remove(0, &key, NOW).is_some();
                            assert_eq!(gone, model.remove(&k).is_some());
                        }
                        12 => {
                            let v = M::Str(b"now a string".to_vec());
                            g.insert(0, &key, build_m(&v, &lim), None, NOW);
                            model.insert(k, v);
                        }
                        13 => {
                            let v = big_m(i + 1 + (r >> 52) % 2, t as u64 * 100 + i, 500 + j);
                            g.insert(0, &key, build_m(&v, &lim), None, NOW);
                            model.insert(k, v);
                        }
                        _ => {
                            let got = g.get_read_notouch(0, &key, NOW).map(|e| read_m(e.value()));
                            assert_eq!(got.as_ref(), model.get(&k), "read of {k:?}");
                        }
                    }
                }
                model
            })
        })
        .collect();
    let mut want: BTreeMap<Vec<u8>, M> = BTreeMap::new();
    for w in writers {
        want.extend(w.join().unwrap());
    }
    stop.store(true, Relaxed);
    let (hits, slices) = defragger.join().unwrap();
    assert!(hits > 0 && slices > 100, "{hits} hits in {slices} slices");
    let got = || -> BTreeMap<Vec<u8>, M> {
        let mut out = BTreeMap::new();
        for p in 0..ks.partitions() {
            let g = ks.lock_partition(p);
            if let Some(d) = g.db(0) {
                for e in d.table.iter() {
                    out.insert(e.key().to_vec(), read_m(e.value()));
                }
            }
        }
        out
    };
    assert_eq!(got(), want);
    // A pass with no changes moves every member block of the big sets
    // and sorted sets (over 15 bytes each), not only their boxes.
    let members: usize = want
        .values()
        .map(|m| match m {
            M::Set(s) if s.len() > 128 => s.len(),
            M::Zset(z) if z.len() > 128 => z.len(),
            _ => 0,
        })
        .sum();
    assert!(members > 0);
    let mut d = testing::all();
    pass(&ks, &mut d);
    assert!(
        d.hits >= members as u64,
        "{} hits, {members} members",
        d.hits
    );
    assert_eq!(got(), want);
}

#[path = "defrag_stream_tests.rs"]
mod streams;
