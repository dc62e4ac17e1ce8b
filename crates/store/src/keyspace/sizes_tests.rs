//! Model-based tests of key size tracking: random operation sequences through
//! the partition API; after every step the incrementally kept statistics must
//! equal a recount from the tables, and at the end the histograms and the
//! largest keys must equal what a model of (type, length) per key gives.

use std::collections::HashMap;

use collections::value::list::End;
use collections::{Limits, ListValue, SetValue};
use proptest::prelude::*;

use crate::keyspace::sizes::{bin, kind_index, BigKey, Sizes, BINS, TOPKEYS_MIN_BYTES};
use crate::keyspace::{Config, Keyspace, Ttl};
use crate::object::{CompactValue, Key, Kind};

const T0: u64 = 1_800_000_000_000;
const DBS: usize = 2;

#[derive(Debug, Clone)]
enum Op {
    SetStr(usize, usize, usize, Option<u64>),
    Append(usize, usize, usize),
    Push(usize, usize, usize, usize),
    Pop(usize, usize, usize),
    SAdd(usize, usize, usize),
    Del(usize, usize),
    Expire(usize, usize, Option<u64>),
    Get(usize, usize),
    Advance(u64),
    ActiveExpire,
    Move(usize),
    Rename(usize, usize),
    Copy(usize, usize),
    SwapDb,
    FlushDb(usize),
    FlushAll,
}

fn keys() -> Vec<Vec<u8>> {
    vec![
        b"a".to_vec(),
        b"key:1".to_vec(),
        b"user:1000:profile:name".to_vec(),
        b"{tag}x".to_vec(),
        b"{tag}y".to_vec(),
        vec![b'z'; 60],
    ]
}

fn op() -> impl Strategy<Value = Op> {
    let k = 0usize..6;
    let db = 0usize..DBS;
    let len = prop_oneof![
        Just(0usize),
        1usize..40,
        Just(4000),
        Just(5000),
        Just(9000),
        Just(20000)
    ];
    let ttl = proptest::option::of(prop_oneof![0u64..50, Just(u64::MAX / 4)]);
    prop_oneof![
        (db.clone(), k.clone(), len.clone(), ttl.clone())
            .prop_map(|(d, k, n, t)| Op::SetStr(d, k, n, t)),
        (db.clone(), k.clone(), len).prop_map(|(d, k, n)| Op::Append(d, k, n)),
        (db.clone(), k.clone(), 1usize..60, 0usize..300)
            .prop_map(|(d, k, n, e)| Op::Push(d, k, n, e)),
        (db.clone(), k.clone(), 1usize..30).prop_map(|(d, k, n)| Op::Pop(d, k, n)),
        (db.clone(), k.clone(), 1usize..200).prop_map(|(d, k, n)| Op::SAdd(d, k, n)),
        (db.clone(), k.clone()).prop_map(|(d, k)| Op::Del(d, k)),
        (db.clone(), k.clone(), ttl).prop_map(|(d, k, t)| Op::Expire(d, k, t)),
        (db, k.clone()).prop_map(|(d, k)| Op::Get(d, k)),
        (0u64..30).prop_map(Op::Advance),
        Just(Op::ActiveExpire),
        k.clone().prop_map(Op::Move),
        (k.clone(), k.clone()).prop_map(|(a, b)| Op::Rename(a, b)),
        (k.clone(), k).prop_map(|(a, b)| Op::Copy(a, b)),
        Just(Op::SwapDb),
        (0usize..DBS).prop_map(Op::FlushDb),
        Just(Op::FlushAll),
    ]
}

/// Every database of every partition: kept statistics == recount.
fn check_recount(ks: &Keyspace) -> Result<(), TestCaseError> {
    for p in 0..ks.partitions() {
        let mut g = ks.lock_partition(p);
        for db in 0..DBS {
            if let Some(d) = g.settled_db(db) {
                // Per-slot counts included: a partition of 2^k holds slots
                // that differ in their low 14 - k bits.
                let bits = crate::slot::SLOT_BITS - ks.partitions().trailing_zeros();
                let mut fresh = Sizes::with_slot_bits(bits);
                for e in d.table.iter() {
                    fresh.add(e);
                }
                prop_assert_eq!(d.sizes(), &fresh, "partition {} db {}", p, db);
            }
        }
    }
    Ok(())
}

/// (type, length, expiry) per live key of the model.
type Model = HashMap<(usize, Vec<u8>), (Kind, u64, Option<u64>)>;

fn live(m: &mut Model, db: usize, k: &[u8], now: u64) -> Option<(Kind, u64, Option<u64>)> {
    let key = (db, k.to_vec());
    if let Some((_, _, Some(t))) = m.get(&key) {
        if *t <= now {
            m.remove(&key);
        }
    }
    m.get(&key).copied()
}

fn abs_ttl(t: Option<u64>, now: u64) -> Option<u64> {
    t.map(|d| if d == u64::MAX / 4 { d } else { now + d })
}

fn run(ops: Vec<Op>, parts: usize) -> Result<(), TestCaseError> {
    let ks = Keyspace::new(Config {
        partitions: parts,
        databases: DBS,
    });
    let lim = Limits::default();
    let names = keys();
    let mut m: Model = HashMap::new();
    let mut now = T0;
    for op in ops {
        match op {
            Op::SetStr(db, k, n, t) => {
                let t = abs_ttl(t, now);
                let key = Key::new(&names[k]);
                let mut g = ks.lock(&key);
                g.set(
                    db,
                    &key,
                    CompactValue::from_bytes(&vec![b'v'; n]),
                    Ttl::Set(t),
                    now,
                );
                m.insert((db, names[k].clone()), (Kind::String, n as u64, t));
            }
            Op::Append(db, k, n) => {
                let key = Key::new(&names[k]);
                let mut g = ks.lock(&key);
                let add = vec![b'x'; n];
                match live(&mut m, db, &names[k], now) {
                    Some((Kind::String, len, t)) => {
                        let e = g.get(db, &key, now).unwrap();
                        e.modify_string(|h| h.extend_from_slice(&add)).unwrap();
                        m.insert((db, names[k].clone()), (Kind::String, len + n as u64, t));
                    }
                    Some(_) => {}
                    None => {
                        g.insert(db, &key, CompactValue::from_bytes(&add), None, now);
                        m.insert((db, names[k].clone()), (Kind::String, n as u64, None));
                    }
                }
            }
            Op::Push(db, k, n, elen) => {
                let key = Key::new(&names[k]);
                let mut g = ks.lock(&key);
                let (len, t) = match live(&mut m, db, &names[k], now) {
                    Some((Kind::List, len, t)) => (len, t),
                    Some(_) => continue,
                    None => {
                        let v = CompactValue::from_list(ListValue::new(&lim));
                        g.insert(db, &key, v, None, now);
                        (0, None)
                    }
                };
                let l = g.get(db, &key, now).unwrap().list_mut().unwrap();
                for i in 0..n {
                    l.push(End::Tail, &vec![b'0' + (i % 10) as u8; elen]);
                }
                m.insert((db, names[k].clone()), (Kind::List, len + n as u64, t));
            }
            Op::Pop(db, k, n) => {
                let key = Key::new(&names[k]);
                let mut g = ks.lock(&key);
                if let Some((Kind::List, len, t)) = live(&mut m, db, &names[k], now) {
                    let l = g.get(db, &key, now).unwrap().list_mut().unwrap();
                    l.pop_n(End::Head, n);
                    let left = len.saturating_sub(n as u64);
                    if left == 0 {
                        g.remove(db, &key, now);
                        m.remove(&(db, names[k].clone()));
                    } else {
                        m.insert((db, names[k].clone()), (Kind::List, left, t));
                    }
                }
            }
            Op::SAdd(db, k, n) => {
                let key = Key::new(&names[k]);
                let mut g = ks.lock(&key);
                let t = match live(&mut m, db, &names[k], now) {
                    Some((Kind::Set, _, t)) => t,
                    Some(_) => continue,
                    None => {
                        let v = CompactValue::from_set(SetValue::new());
                        g.insert(db, &key, v, None, now);
                        None
                    }
                };
                let s = g.get(db, &key, now).unwrap().set_mut().unwrap();
                for i in 0..n {
                    s.insert(format!("member:{i}").as_bytes(), &lim);
                }
                let len = s.len() as u64;
                m.insert((db, names[k].clone()), (Kind::Set, len, t));
            }
            Op::Del(db, k) => {
                let key = Key::new(&names[k]);
                ks.lock(&key).remove(db, &key, now);
                m.remove(&(db, names[k].clone()));
            }
            Op::Expire(db, k, t) => {
                let t = abs_ttl(t, now);
                let key = Key::new(&names[k]);
                if ks.lock(&key).set_expire(db, &key, t, now) {
                    m.get_mut(&(db, names[k].clone())).unwrap().2 = t;
                }
                live(&mut m, db, &names[k], now);
            }
            Op::Get(db, k) => {
                let key = Key::new(&names[k]);
                let got = ks.lock(&key).get_read(db, &key, now).is_some();
                prop_assert_eq!(got, live(&mut m, db, &names[k], now).is_some());
            }
            Op::Advance(d) => now += d,
            Op::ActiveExpire => {
                ks.active_expire_cycle(std::time::Duration::from_secs(1), now);
            }
            Op::Move(k) => {
                let key = Key::new(&names[k]);
                let mut g = ks.lock(&key);
                if live(&mut m, 1, &names[k], now).is_none() && g.get(1, &key, now).is_none() {
                    if let Some(v) = live(&mut m, 0, &names[k], now) {
                        prop_assert!(g.move_entry(0, 1, &key, now));
                        m.remove(&(0, names[k].clone()));
                        m.insert((1, names[k].clone()), v);
                    }
                }
            }
            Op::Rename(a, b) | Op::Copy(a, b) if a != b => {
                let copy = matches!(op, Op::Copy(..));
                let pair = [Key::new(&names[a]), Key::new(&names[b])];
                let mut g = ks.lock_keys(&pair);
                let [ka, kb] = pair;
                let Some(v) = live(&mut m, 0, &names[a], now) else {
                    continue;
                };
                let (pa, pb) = g.pair(&ka, &kb);
                let (val, ttl) = if copy {
                    let e = pa.get(0, &ka, now).unwrap();
                    (e.clone_value(), None)
                } else {
                    let e = pa.remove(0, &ka, now).unwrap();
                    let t = e.expire_at();
                    (e.into_value(), t)
                };
                let dst = pb.unwrap_or(pa);
                dst.insert_value_with_ttl(0, &kb, val, ttl, now);
                if !copy {
                    m.remove(&(0, names[a].clone()));
                }
                let t = if copy { None } else { v.2 };
                m.insert((0, names[b].clone()), (v.0, v.1, t));
            }
            Op::Rename(..) | Op::Copy(..) => {}
            Op::SwapDb => {
                ks.swap_db(0, 1);
                m = m.into_iter().map(|((d, k), v)| ((1 - d, k), v)).collect();
            }
            Op::FlushDb(db) => {
                drop(ks.flush_db(db));
                m.retain(|(d, _), _| *d != db);
            }
            Op::FlushAll => {
                drop(ks.flush_all());
                m.clear();
            }
        }
        check_recount(&ks)?;
    }
    // Collect what has expired, then compare with the model.
    let all: Vec<(usize, Vec<u8>)> = (0..DBS)
        .flat_map(|db| names.iter().map(move |k| (db, k.clone())))
        .collect();
    for (db, k) in &all {
        let key = Key::new(k);
        ks.lock(&key).get(*db, &key, now);
        live(&mut m, *db, k, now);
    }
    check_recount(&ks)?;
    for db in 0..DBS {
        let s = ks.size_stats(db);
        let mut want = [[0u64; BINS]; 5];
        let mut keys = [0u64; 6];
        for ((d, _), (kind, len, _)) in &m {
            if *d == db {
                want[kind_index(*kind)][bin(*len)] += 1;
                keys[kind_index(*kind)] += 1;
            }
        }
        for (t, w) in want.iter().enumerate() {
            prop_assert_eq!(s.hist(t), w, "db {} type {}", db, t);
            prop_assert_eq!(s.keys(t), keys[t]);
        }
        // The largest keys, from scratch: every live key's MEMORY USAGE.
        let mut rows: Vec<BigKey> = Vec::new();
        for ((d, k), (kind, _, _)) in &m {
            if *d != db {
                continue;
            }
            let key = Key::new(k);
            let mut g = ks.lock(&key);
            let heap = g.get(db, &key, now).unwrap().heap_size();
            if heap >= TOPKEYS_MIN_BYTES {
                let bytes = g.memory_usage(db, &key, now).unwrap();
                rows.push(BigKey {
                    key: k.clone(),
                    bytes,
                    kind: *kind,
                });
            }
        }
        rows.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.key.cmp(&b.key)));
        for count in [1, 3, 100] {
            let mut want = rows.clone();
            want.truncate(count);
            prop_assert_eq!(ks.largest_keys(db, None, count, now), want);
        }
        for kind in [Kind::String, Kind::List, Kind::Set] {
            let want: Vec<BigKey> = rows.iter().filter(|r| r.kind == kind).cloned().collect();
            prop_assert_eq!(ks.largest_keys(db, Some(kind), 100, now), want);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
    #[test]
    fn sizes_match_model(
        ops in proptest::collection::vec(op(), 1..80),
        parts in prop_oneof![Just(1usize), Just(4), Just(16)],
    ) {
        run(ops, parts)?;
    }
}

/// Expired keys are dropped from the answer (and the table) by the query.
#[test]
fn largest_keys_skip_expired() {
    let ks = Keyspace::default();
    let big = vec![b'x'; 10_000];
    for (k, ttl) in [(&b"old"[..], Some(T0 + 5)), (&b"new"[..], None)] {
        let key = Key::new(k);
        ks.lock(&key)
            .insert(0, &key, CompactValue::from_bytes(&big), ttl, T0);
    }
    assert_eq!(ks.largest_keys(0, None, 10, T0).len(), 2);
    let rows = ks.largest_keys(0, None, 10, T0 + 10);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].key, b"new");
    assert_eq!(ks.dbsize(0), 1);
}
