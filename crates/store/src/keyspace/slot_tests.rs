//! Per-slot key counts (`Sizes::slot_keys`, CLUSTER COUNTKEYSINSLOT) and
//! the bounded slot walk (`keys_in_slot`), against a model: the table's
//! own entries grouped by slot, and the live keys of a map.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use proptest::prelude::*;

use crate::keyspace::{Config, Keyspace};
use crate::object::{CompactValue, Key};
use crate::slot::key_slot;

const T0: u64 = 1_800_000_000_000;

#[derive(Debug, Clone)]
enum Op {
    Insert(usize, usize, Option<u64>),
    Remove(usize, usize),
    Expire(usize, usize, Option<u64>),
    Get(usize, usize),
    Move(usize),
    Advance(u64),
    ActiveExpire,
    Flush(usize),
    FlushAll,
    Populate(u64),
}

/// Keys crowding a few slots (hash tags) and spread over others.
fn key(i: usize) -> Vec<u8> {
    match i % 3 {
        0 => format!("{{a}}{i}").into_bytes(),
        1 => format!("{{b}}{i}").into_bytes(),
        _ => format!("k{i}").into_bytes(),
    }
}

fn op() -> impl Strategy<Value = Op> {
    let k = 0usize..40;
    let db = 0usize..2;
    let ttl = proptest::option::of(0u64..40);
    prop_oneof![
        4 => (db.clone(), k.clone(), ttl.clone()).prop_map(|(d, k, t)| Op::Insert(d, k, t)),
        2 => (db.clone(), k.clone()).prop_map(|(d, k)| Op::Remove(d, k)),
        1 => (db.clone(), k.clone(), ttl).prop_map(|(d, k, t)| Op::Expire(d, k, t)),
        1 => (db.clone(), k.clone()).prop_map(|(d, k)| Op::Get(d, k)),
        1 => k.prop_map(Op::Move),
        1 => (0u64..30).prop_map(Op::Advance),
        1 => Just(Op::ActiveExpire),
        1 => db.prop_map(Op::Flush),
        1 => Just(Op::FlushAll),
        1 => (0u64..50).prop_map(Op::Populate),
    ]
}

/// (db, key) -> expiry of the live keys.
type Model = HashMap<(usize, Vec<u8>), Option<u64>>;

fn is_live(m: &Model, db: usize, k: &[u8], now: u64) -> bool {
    matches!(m.get(&(db, k.to_vec())), Some(t) if t.is_none_or(|t| t > now))
}

fn check(ks: &Keyspace, m: &Model, now: u64) -> Result<(), TestCaseError> {
    for db in 0..2 {
        // Every entry in the table, expired or not, grouped by slot.
        let mut stored: BTreeMap<u16, usize> = BTreeMap::new();
        ks.for_each_key(db, 0, |e| {
            *stored.entry(key_slot(&e.key())).or_default() += 1
        });
        for s in 0..crate::slot::SLOTS as u16 {
            prop_assert_eq!(
                ks.count_in_slot(db, s),
                stored.get(&s).copied().unwrap_or(0),
                "db {} slot {}",
                db,
                s
            );
        }
        // The live keys of each populated slot, through the bounded walk.
        let mut live: BTreeMap<u16, Vec<Vec<u8>>> = BTreeMap::new();
        for ((d, k), t) in m {
            if *d == db && t.is_none_or(|t| t > now) {
                live.entry(key_slot(k)).or_default().push(k.clone());
            }
        }
        for (s, mut want) in live {
            want.sort();
            let mut got = ks.keys_in_slot(db, s, now, usize::MAX);
            got.sort();
            prop_assert_eq!(&got, &want);
            let some = ks.keys_in_slot(db, s, now, 2);
            prop_assert_eq!(some.len(), want.len().min(2));
            prop_assert!(some.iter().all(|k| want.contains(k)));
            prop_assert!(ks.keys_in_slot(db, s, now, 0).is_empty());
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 120, ..ProptestConfig::default() })]
    #[test]
    fn slot_counts_follow_every_change(ops in proptest::collection::vec(op(), 1..80), parts in prop_oneof![Just(1usize), Just(4), Just(16)]) {
        let ks = Keyspace::new(Config { partitions: parts, databases: 2 });
        let mut m: Model = HashMap::new();
        let mut now = T0;
        for op in ops {
            match op {
                Op::Insert(db, k, t) => {
                    let kb = key(k);
                    let key = Key::new(&kb);
                    let t = t.map(|d| now + d);
                    ks.lock(&key).insert(db, &key, CompactValue::from_bytes(b"v"), t, now);
                    m.insert((db, kb), t);
                }
                Op::Remove(db, k) => {
                    let kb = key(k);
                    let key = Key::new(&kb);
                    ks.lock(&key).remove(db, &key, now);
                    m.remove(&(db, kb));
                }
                Op::Expire(db, k, t) => {
                    let kb = key(k);
                    let key = Key::new(&kb);
                    let t = t.map(|d| now + d);
                    if ks.lock(&key).set_expire(db, &key, t, now) {
                        m.insert((db, kb), t);
                    }
                }
                Op::Get(db, k) => {
                    let kb = key(k);
                    let key = Key::new(&kb);
                    let got = ks.lock(&key).get(db, &key, now).is_some();
                    prop_assert_eq!(got, is_live(&m, db, &kb, now));
                }
                Op::Move(k) => {
                    let kb = key(k);
                    let key = Key::new(&kb);
                    let mut g = ks.lock(&key);
                    if is_live(&m, 0, &kb, now) && !g.exists(1, &key, now) {
                        prop_assert!(g.move_entry(0, 1, &key, now));
                        let t = m.remove(&(0, kb.clone())).unwrap();
                        m.insert((1, kb), t);
                    }
                }
                Op::Advance(d) => now += d,
                Op::ActiveExpire => {
                    ks.active_expire_cycle(Duration::from_millis(50), now);
                }
                Op::Flush(db) => {
                    drop(ks.flush_db(db));
                    m.retain(|(d, _), _| *d != db);
                }
                Op::FlushAll => {
                    drop(ks.flush_all());
                    m.clear();
                }
                Op::Populate(n) => {
                    ks.populate(0, n, b"p", 0, now);
                    for i in 0..n {
                        let kb = format!("p:{i}").into_bytes();
                        if !is_live(&m, 0, &kb, now) {
                            m.insert((0, kb), None);
                        }
                    }
                }
            }
            check(&ks, &m, now)?;
        }
    }
}
