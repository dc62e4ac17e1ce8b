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

/// What a client could read of the whole keyspace.
fn dump(ks: &Keyspace) -> BTreeMap<(usize, Vec<u8>), (String, Option<u64>)> {
    let mut out = BTreeMap::new();
    for p in 0..ks.partitions() {
        let g = ks.lock_partition(p);
        for db in 0..ks.databases() {
            let Some(d) = g.db(db) else { continue };
            for e in d.table.iter() {
                let v = e.value();
                let text = if let Some(s) = v.string() {
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
                };
                out.insert((db, e.key().to_vec()), (text, e.expire_at()));
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
    let keys = pass(&ks, &mut d);
    assert_eq!(dump(&ks), before, "a defrag pass changed a value");
    let visited = keys.hits + keys.misses;
    assert!(
        visited >= before.len() as u64,
        "{visited} < {}",
        before.len()
    );
    if !half && !before.is_empty() {
        assert!(d.hits > 0 && keys.hits > 0);
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
