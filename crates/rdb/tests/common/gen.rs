//! Random Petrel values of every type and encoding (proptest strategies)
//! and a fixed mixed data set, for the round-trip and corruption tests.
#![allow(dead_code)]

use collections::value::list::End;
use collections::{HashValue, Limits, ListValue, SetValue, ZsetValue};
use proptest::prelude::*;
use store::CompactValue;

/// A value as plain data, built into a `CompactValue` under some limits.
#[derive(Clone, Debug)]
pub enum Spec {
    Str(Vec<u8>),
    List(Vec<Vec<u8>>),
    Set(Vec<Vec<u8>>),
    Hash(Vec<(Vec<u8>, Vec<u8>)>),
    Zset(Vec<(Vec<u8>, f64)>),
}

/// Builds the value the way commands would (pushes, SADD, HSET, ZADD);
/// `None` for an empty collection (the keyspace never holds one).
pub fn build(spec: &Spec, lim: &Limits) -> Option<CompactValue> {
    match spec {
        Spec::Str(s) => Some(CompactValue::from_bytes(s)),
        Spec::List(v) => {
            let mut l = ListValue::new(lim);
            for e in v {
                l.push(End::Tail, e);
            }
            (!l.is_empty()).then(|| CompactValue::from_list(l))
        }
        Spec::Set(v) => {
            let mut s = SetValue::new();
            for m in v {
                s.insert(m, lim);
            }
            (!s.is_empty()).then(|| CompactValue::from_set(s))
        }
        Spec::Hash(v) => {
            // A field set twice keeps its first position and its last value,
            // as HSET leaves it; built from that final content, so a large
            // value that was later replaced does not leave the hash in the
            // table encoding (a loader picks the encoding from the content,
            // as Redis does).
            let mut fields: Vec<(&[u8], &[u8])> = Vec::new();
            for (f, x) in v {
                match fields.iter_mut().find(|(g, _)| *g == f.as_slice()) {
                    Some(e) => e.1 = x,
                    None => fields.push((f, x)),
                }
            }
            let mut h = HashValue::new();
            for (f, x) in fields {
                h.insert(lim, f, x);
            }
            (!h.is_empty()).then(|| CompactValue::from_hash(h))
        }
        Spec::Zset(v) => {
            let mut z: Option<ZsetValue> = None;
            for (m, s) in v {
                z.get_or_insert_with(|| ZsetValue::new_for(m.len(), lim))
                    .insert(m, *s, lim);
            }
            z.map(CompactValue::from_zset)
        }
    }
}

pub fn elem() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => (-300i64..300).prop_map(|i| i.to_string().into_bytes()),
        2 => any::<i64>().prop_map(|i| i.to_string().into_bytes()),
        1 => prop_oneof![Just(b"007".to_vec()), Just(b"-0".to_vec()), Just(b"".to_vec()), Just(b"+5".to_vec())],
        4 => proptest::collection::vec(b'a'..b'h', 1..6),
        2 => proptest::collection::vec(any::<u8>(), 0..30),
        2 => (0u8..8, 20usize..400).prop_map(|(c, n)| format!("rep{c}-").repeat(n / 5).into_bytes()),
        1 => (0usize..3).prop_map(|k| vec![b'L'; [70, 2000, 9000][k]]),
    ]
}

pub fn score() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => (-50i64..50).prop_map(|i| i as f64),
        3 => -1e6f64..1e6,
        1 => prop_oneof![
            Just(f64::INFINITY),
            Just(f64::NEG_INFINITY),
            Just(-0.0),
            Just(1e308),
            Just(5e-324),
            Just(4611686018427387904.0),
            Just(0.1),
        ],
    ]
}

pub fn spec() -> impl Strategy<Value = Spec> {
    prop_oneof![
        3 => elem().prop_map(Spec::Str),
        1 => proptest::collection::vec(any::<u8>(), 0..3000).prop_map(Spec::Str),
        3 => proptest::collection::vec(elem(), 1..200).prop_map(Spec::List),
        3 => proptest::collection::vec(elem(), 1..150).prop_map(Spec::Set),
        2 => proptest::collection::vec(-2000i64..2000, 1..700)
            .prop_map(|v| Spec::Set(v.into_iter().map(|i| i.to_string().into_bytes()).collect())),
        3 => proptest::collection::vec((elem(), elem()), 1..150).prop_map(Spec::Hash),
        3 => proptest::collection::vec((elem(), score()), 1..180).prop_map(Spec::Zset),
    ]
}

/// Default limits, or small ones so the large encodings show up with few
/// elements (intset entries kept >= listpack entries, as in Redis's
/// defaults, so a reload picks the same set encoding).
pub fn limits() -> impl Strategy<Value = Limits> {
    (
        any::<bool>(),
        prop_oneof![Just(-2i32), Just(-1), Just(2), Just(5), Just(16)],
        0u32..3,
    )
        .prop_map(|(small, fill, depth)| {
            let mut l = if small {
                Limits {
                    hash_max_listpack_entries: 6,
                    hash_max_listpack_value: 10,
                    set_max_intset_entries: 12,
                    set_max_listpack_entries: 6,
                    set_max_listpack_value: 10,
                    zset_max_listpack_entries: 6,
                    zset_max_listpack_value: 10,
                    ..Limits::default()
                }
            } else {
                Limits::default()
            };
            l.list_max_listpack_size = fill;
            l.list_compress_depth = depth;
            l
        })
}

/// A fixed data set with every type and encoding (compressed and
/// one-element list nodes, LZF strings, intsets of each width, listpacks
/// and tables), under default limits with `list-compress-depth 1`.
pub fn mixed_dataset() -> Vec<(u32, Vec<u8>, CompactValue, Option<i64>)> {
    let lim = Limits {
        list_compress_depth: 1,
        ..Limits::default()
    };
    let mut out = Vec::new();
    let mut add = |db: u32, k: &str, spec: Spec, ttl: Option<i64>| {
        out.push((db, k.as_bytes().to_vec(), build(&spec, &lim).unwrap(), ttl));
    };
    add(0, "s:int", Spec::Str(b"-12345".to_vec()), None);
    add(
        0,
        "s:big",
        Spec::Str(b"9223372036854775807".to_vec()),
        Some(1_900_000_000_000),
    );
    add(0, "s:lzf", Spec::Str(b"abcabcabc".repeat(20)), None);
    add(0, "s:bin", Spec::Str((0..=255u8).collect()), None);
    add(0, "s:empty", Spec::Str(Vec::new()), None);
    add(
        0,
        "l:comp",
        Spec::List(
            (0..900)
                .map(|i| format!("item-{}", i % 30).into_bytes())
                .collect(),
        ),
        None,
    );
    add(
        0,
        "l:mixed",
        Spec::List(vec![
            b"1".to_vec(),
            vec![b'B'; 9000],
            b"-70000".to_vec(),
            b"x".to_vec(),
        ]),
        Some(1_800_000_000_000),
    );
    add(
        1,
        "set:i16",
        Spec::Set(vec![b"1".to_vec(), b"-3".to_vec()]),
        None,
    );
    add(
        1,
        "set:i32",
        Spec::Set(vec![b"100000".to_vec(), b"7".to_vec()]),
        None,
    );
    add(
        1,
        "set:i64",
        Spec::Set(vec![b"-9223372036854775808".to_vec()]),
        None,
    );
    add(
        1,
        "set:lp",
        Spec::Set(vec![b"a".to_vec(), b"7".to_vec(), b"b".to_vec()]),
        None,
    );
    add(
        1,
        "set:table",
        Spec::Set((0..200).map(|i| format!("m{i}").into_bytes()).collect()),
        None,
    );
    add(
        2,
        "h:lp",
        Spec::Hash(vec![
            (b"f".to_vec(), b"1".to_vec()),
            (b"g".to_vec(), b"text".to_vec()),
        ]),
        None,
    );
    add(
        2,
        "h:lp20",
        Spec::Hash(
            (0..20)
                .map(|i| (format!("f{i}").into_bytes(), format!("{i}").into_bytes()))
                .collect(),
        ),
        None,
    );
    add(
        2,
        "h:table",
        Spec::Hash(vec![(b"f".to_vec(), vec![b'v'; 100])]),
        None,
    );
    add(
        3,
        "z:lp",
        Spec::Zset(vec![
            (b"a".to_vec(), 1.5),
            (b"b".to_vec(), f64::INFINITY),
            (b"c".to_vec(), -0.0),
        ]),
        None,
    );
    add(
        3,
        "z:tree",
        Spec::Zset(
            (0..200)
                .map(|i| (format!("m{i}").into_bytes(), i as f64 / 3.0))
                .collect(),
        ),
        Some(1_700_000_000_000),
    );
    out
}
