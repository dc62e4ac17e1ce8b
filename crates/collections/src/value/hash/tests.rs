//! Model tests of [`HashValue`]: command-level semantics and conversions
//! against a `HashMap`.

use super::*;
use proptest::prelude::*;
use rand::SeedableRng;
use std::collections::{HashMap, HashSet};

fn limits() -> Limits {
    Limits {
        hash_max_listpack_entries: 24,
        hash_max_listpack_value: 6,
        ..Limits::default()
    }
}

fn bytes(v: LpValue<'_>) -> Vec<u8> {
    v.to_vec()
}

#[derive(Clone, Debug)]
enum Op {
    Set(Vec<(Vec<u8>, Vec<u8>)>),
    SetNx(Vec<u8>, Vec<u8>),
    Del(Vec<u8>),
}

fn field() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => (0u32..40).prop_map(|i| format!("f{i}").into_bytes()),
        2 => (-20i64..20).prop_map(|i| i.to_string().into_bytes()),
        1 => Just(b"007".to_vec()),
        1 => (0u32..5).prop_map(|i| format!("long-field-{i}").into_bytes()),
    ]
}

fn value() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        3 => (0i64..1000).prop_map(|i| i.to_string().into_bytes()),
        3 => proptest::collection::vec(any::<u8>(), 0..7),
        1 => proptest::collection::vec(any::<u8>(), 7..20),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => proptest::collection::vec((field(), value()), 1..4).prop_map(Op::Set),
        1 => (field(), value()).prop_map(|(f, v)| Op::SetNx(f, v)),
        3 => field().prop_map(Op::Del),
    ]
}

fn check(h: &HashValue, m: &HashMap<Vec<u8>, Vec<u8>>, table: bool) {
    assert_eq!(h.len(), m.len());
    assert_eq!(
        h.encoding_name(),
        if table { "hashtable" } else { "listpack" }
    );
    for (f, v) in m {
        assert_eq!(h.get(f).map(bytes).as_ref(), Some(v));
        assert!(h.contains(f));
        assert_eq!(h.value_len(f), Some(v.len()));
    }
    let got: HashMap<Vec<u8>, Vec<u8>> = h.iter().map(|(f, v)| (bytes(f), bytes(v))).collect();
    assert_eq!(&got, m);
    assert!(!h.contains(b"absent"));
    assert_eq!(h.value_len(b"absent"), None);
    // The two listpack forms and their thresholds.
    match h {
        HashValue::Pack(p) => {
            assert!(p.len() < crate::small::INDEX_MIN);
            assert_eq!(p.heap_bytes(), p.block().heap_bytes());
            p.block().validate().unwrap();
        }
        HashValue::Listpack(lp) => {
            assert!(lp.len() >= crate::small::INDEX_DROP);
            assert!(lp.has_index());
        }
        HashValue::Table(_) => assert!(table),
    }
}

proptest! {
    /// Command-level semantics (HSET with the pre-write length check,
    /// HSETNX, HDEL) against a HashMap, including where the encoding
    /// converts and that it never converts back.
    #[test]
    fn model(ops in proptest::collection::vec(op(), 1..120)) {
        let lim = limits();
        let mut h = HashValue::new();
        let mut m: HashMap<Vec<u8>, Vec<u8>> = HashMap::new();
        let mut table = false;
        for op in ops {
            match op {
                Op::Set(pairs) => {
                    let args = pairs.iter().flat_map(|(f, v)| [&f[..], &v[..]]);
                    if pairs.iter().any(|(f, v)| f.len() > 6 || v.len() > 6) {
                        table = true;
                    }
                    h.convert_for_args(&lim, args);
                    for (f, v) in pairs {
                        let new = h.insert(&lim, &f, &v);
                        prop_assert_eq!(new, m.insert(f, v).is_none());
                    }
                }
                Op::SetNx(f, v) => {
                    if !h.contains(&f) {
                        if f.len() > 6 || v.len() > 6 {
                            table = true;
                        }
                        prop_assert!(h.insert(&lim, &f, &v));
                        m.insert(f, v);
                    }
                }
                Op::Del(f) => {
                    prop_assert_eq!(h.remove(&f), m.remove(&f).is_some());
                }
            }
            if m.len() > lim.hash_max_listpack_entries {
                table = true;
            }
            check(&h, &m, table);
        }
    }

    /// HSCAN visits every pair exactly once over a full iteration;
    /// HRANDFIELD samples are members, distinct when asked.
    #[test]
    fn scan_and_sample(n in 0usize..200, count in 0usize..250, seed in any::<u64>()) {
        let lim = Limits { hash_max_listpack_entries: 64, ..Limits::default() };
        let mut h = HashValue::new();
        let mut m = HashMap::new();
        for i in 0..n {
            let (f, v) = (format!("field:{i}").into_bytes(), format!("v{i}").into_bytes());
            h.insert(&lim, &f, &v);
            m.insert(f, v);
        }
        let mut seen = HashSet::new();
        let mut cursor = 0;
        loop {
            cursor = h.scan(cursor, 7, |f, v| {
                let f = bytes(f);
                assert_eq!(m.get(&f), Some(&bytes(v)));
                assert!(seen.insert(f));
            });
            if cursor == 0 {
                break;
            }
        }
        prop_assert_eq!(seen.len(), n);

        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let s = h.sample_unique(count, &mut rng);
        prop_assert_eq!(s.len(), count.min(n));
        let distinct: HashSet<Vec<u8>> = s.iter().map(|(f, _)| bytes(*f)).collect();
        prop_assert_eq!(distinct.len(), s.len());
        for (f, v) in &s {
            prop_assert_eq!(m.get(&bytes(*f)), Some(&bytes(*v)));
        }
        let mut k = 0;
        h.random_pairs(count as u64, &mut rng, |f, v| {
            assert_eq!(m.get(&bytes(f)), Some(&bytes(v)));
            k += 1;
        });
        prop_assert_eq!(k, if n == 0 { 0 } else { count });
    }
}

#[test]
fn lp_bytes_and_len() {
    let mut b = [0u8; 20];
    for i in [0i64, 7, -7, 10, -10, 12345, i64::MAX, i64::MIN] {
        let s = i.to_string();
        assert_eq!(lp_bytes(LpValue::Int(i), &mut b), s.as_bytes());
        assert_eq!(lp_len(LpValue::Int(i)), s.len());
    }
}

#[test]
fn conversion_points() {
    let lim = Limits::default();
    let mut h = HashValue::new();
    for i in 0..512 {
        h.insert(&lim, format!("f{i}").as_bytes(), b"v");
    }
    assert_eq!(h.encoding_name(), "listpack");
    h.insert(&lim, b"f0", b"w");
    assert_eq!(h.encoding_name(), "listpack");
    h.insert(&lim, b"f512", b"v");
    assert_eq!(h.encoding_name(), "hashtable");
    loop {
        let first = h.iter().next().map(|(f, _)| bytes(f));
        let Some(f) = first else { break };
        h.remove(&f);
    }
    assert!(h.is_empty());
    assert_eq!(h.encoding_name(), "hashtable");

    let mut h = HashValue::new();
    h.insert(&lim, b"a", &[b'x'; 64]);
    assert_eq!(h.encoding_name(), "listpack");
    h.convert_for_args(&lim, [&b"a"[..], &[b'x'; 65][..]]);
    assert_eq!(h.encoding_name(), "hashtable");
    assert_eq!(h.get(b"a").map(bytes), Some(vec![b'x'; 64]));
}

/// A 500-field listpack finds fields through the fingerprint index.
#[test]
fn big_listpack_is_indexed() {
    let lim = Limits::default();
    let mut h = HashValue::new();
    for i in 0..500 {
        h.insert(&lim, format!("field-{i}").as_bytes(), b"v");
    }
    match &h {
        HashValue::Listpack(lp) => assert!(lp.has_index()),
        _ => panic!("should be an indexed listpack"),
    }
}
