//! Model-based and behavioural tests of the keyspace.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use proptest::prelude::*;

use crate::keyspace::{Config, Keyspace, Ttl};
use crate::object::{CompactValue, Key};

const T0: u64 = 1_800_000_000_000;

#[derive(Debug, Clone)]
enum Op {
    Set(usize, Vec<u8>, Option<u64>),
    SetKeep(usize, Vec<u8>),
    Get(usize),
    Del(usize),
    Expire(usize, Option<u64>),
    Append(usize, Vec<u8>),
    Advance(u64),
    ActiveExpire,
    Move(usize),
}

fn keys() -> Vec<Vec<u8>> {
    vec![
        b"a".to_vec(),
        b"key:1".to_vec(),
        b"key:12345678".to_vec(),
        b"user:1000:profile:name".to_vec(),
        b"\x00\xff binary key".to_vec(),
        b"{tag}x".to_vec(),
        b"{tag}y".to_vec(),
        vec![b'z'; 100],
    ]
}

fn value() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        "[a-z]{0,20}".prop_map(|s| s.into_bytes()),
        (-1000i64..1000).prop_map(|i| i.to_string().into_bytes()),
        proptest::collection::vec(any::<u8>(), 0..80),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    let k = 0usize..8;
    let ttl = proptest::option::of(prop_oneof![0u64..50, Just(u64::MAX / 4)]);
    prop_oneof![
        (k.clone(), value(), ttl.clone()).prop_map(|(k, v, t)| Op::Set(k, v, t)),
        (k.clone(), value()).prop_map(|(k, v)| Op::SetKeep(k, v)),
        k.clone().prop_map(Op::Get),
        k.clone().prop_map(Op::Del),
        (k.clone(), ttl).prop_map(|(k, t)| Op::Expire(k, t)),
        (k.clone(), value()).prop_map(|(k, v)| Op::Append(k, v)),
        (0u64..30).prop_map(Op::Advance),
        Just(Op::ActiveExpire),
        k.prop_map(Op::Move),
    ]
}

type Model = HashMap<(usize, Vec<u8>), (Vec<u8>, Option<u64>)>;

fn live(m: &mut Model, db: usize, k: &[u8], now: u64) -> Option<(Vec<u8>, Option<u64>)> {
    let key = (db, k.to_vec());
    if let Some((_, Some(t))) = m.get(&key) {
        if *t <= now {
            m.remove(&key);
        }
    }
    m.get(&key).cloned()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]
    #[test]
    fn keyspace_matches_model(ops in proptest::collection::vec(op(), 1..120), parts in prop_oneof![Just(1usize), Just(4), Just(16)]) {
        let ks = Keyspace::new(Config { partitions: parts, databases: 2 });
        let ks_keys = keys();
        let mut m: Model = HashMap::new();
        let mut now = T0;
        for op in ops {
            match op {
                Op::Set(k, v, t) => {
                    let t = t.map(|d| if d == u64::MAX / 4 { d } else { now + d });
                    let key = Key::new(&ks_keys[k]);
                    let mut g = ks.lock(&key);
                    let old = g.set(0, &key, CompactValue::from_bytes(&v), Ttl::Set(t), now);
                    let mold = live(&mut m, 0, &ks_keys[k], now);
                    prop_assert_eq!(old.map(|o| o.string().unwrap().to_vec()), mold.map(|x| x.0));
                    // Redis deletes keys set with a past time; keep them in both (expired).
                    m.insert((0, ks_keys[k].clone()), (v, t));
                }
                Op::SetKeep(k, v) => {
                    let key = Key::new(&ks_keys[k]);
                    let mut g = ks.lock(&key);
                    g.set(0, &key, CompactValue::from_bytes(&v), Ttl::Keep, now);
                    let t = live(&mut m, 0, &ks_keys[k], now).and_then(|x| x.1);
                    m.insert((0, ks_keys[k].clone()), (v, t));
                }
                Op::Get(k) => {
                    let key = Key::new(&ks_keys[k]);
                    let mut g = ks.lock(&key);
                    let got = g.get_read(0, &key, now).map(|e| (e.value().string().unwrap().to_vec(), e.expire_at()));
                    let want = live(&mut m, 0, &ks_keys[k], now).map(|(v, t)| (v, t.map(|t| t.min(crate::object::MAX_EXPIRE_MS))));
                    prop_assert_eq!(got, want);
                }
                Op::Del(k) => {
                    let key = Key::new(&ks_keys[k]);
                    let mut g = ks.lock(&key);
                    let got = g.remove(0, &key, now).is_some();
                    let want = live(&mut m, 0, &ks_keys[k], now).is_some();
                    m.remove(&(0, ks_keys[k].clone()));
                    prop_assert_eq!(got, want);
                }
                Op::Expire(k, t) => {
                    let t = t.map(|d| if d == u64::MAX / 4 { d } else { now + d });
                    let key = Key::new(&ks_keys[k]);
                    let mut g = ks.lock(&key);
                    let got = g.set_expire(0, &key, t, now);
                    let want = live(&mut m, 0, &ks_keys[k], now).is_some();
                    if want {
                        m.get_mut(&(0, ks_keys[k].clone())).unwrap().1 = t;
                    }
                    prop_assert_eq!(got, want);
                }
                Op::Append(k, v) => {
                    let key = Key::new(&ks_keys[k]);
                    let mut g = ks.lock(&key);
                    match g.get(0, &key, now) {
                        Some(e) => { e.modify_string(|h| h.extend_from_slice(&v)).unwrap(); }
                        None => { g.insert(0, &key, CompactValue::from_bytes(&v), None, now); }
                    }
                    match live(&mut m, 0, &ks_keys[k], now) {
                        Some((mut old, t)) => { old.extend_from_slice(&v); m.insert((0, ks_keys[k].clone()), (old, t)); }
                        None => { m.insert((0, ks_keys[k].clone()), (v, None)); }
                    }
                }
                Op::Advance(d) => now += d,
                Op::ActiveExpire => {
                    ks.active_expire_cycle(Duration::from_millis(50), now);
                }
                Op::Move(k) => {
                    let key = Key::new(&ks_keys[k]);
                    let mut g = ks.lock(&key);
                    let dst_has = g.exists(1, &key, now);
                    let src = live(&mut m, 0, &ks_keys[k], now);
                    let dst = live(&mut m, 1, &ks_keys[k], now);
                    prop_assert_eq!(dst_has, dst.is_some());
                    if !dst_has {
                        let moved = g.move_entry(0, 1, &key, now);
                        prop_assert_eq!(moved, src.is_some());
                        if let Some(x) = src {
                            m.remove(&(0, ks_keys[k].clone()));
                            m.insert((1, ks_keys[k].clone()), x);
                        }
                    }
                }
            }
        }
        // Final comparison of both databases, and of the expires counters.
        for db in 0..2 {
            let mut got = Vec::new();
            ks.for_each_key(db, now, |e| got.push((e.key().to_vec(), e.value().string().unwrap().to_vec())));
            got.sort();
            let mut want: Vec<_> = m.iter().filter(|((d, _), (_, t))| *d == db && t.is_none_or(|t| t > now)).map(|((_, k), (v, _))| (k.clone(), v.clone())).collect();
            want.sort();
            prop_assert_eq!(got, want);
            // counters: expires equals entries with TTL (including not-yet-collected)
            let mut with_ttl = 0;
            ks.for_each_key(db, 0, |e| if e.has_expire() { with_ttl += 1 });
            prop_assert_eq!(ks.db_info(db).expires, with_ttl);
        }
    }
}

#[test]
fn scan_guarantee_with_concurrent_changes() {
    let ks = Keyspace::new(Config {
        partitions: 16,
        databases: 1,
    });
    let now = T0;
    let n = 20_000usize;
    for i in 0..n {
        let k = format!("stable:{i}");
        let key = Key::new(k.as_bytes());
        ks.lock(&key)
            .insert(0, &key, CompactValue::from_bytes(b"v"), None, now);
    }
    let mut seen = HashSet::new();
    let mut cursor = 0;
    let mut round = 0;
    loop {
        cursor = ks.scan(0, cursor, 10, now, |e| {
            seen.insert(e.key().to_vec());
        });
        // churn: add and remove other keys (forces splits/merges)
        for j in 0..50 {
            let k = format!("churn:{round}:{j}");
            let key = Key::new(k.as_bytes());
            ks.lock(&key)
                .insert(0, &key, CompactValue::from_bytes(b"x"), None, now);
            if round > 2 {
                let k = format!("churn:{}:{j}", round - 2);
                let key = Key::new(k.as_bytes());
                ks.lock(&key).remove(0, &key, now);
            }
        }
        round += 1;
        if cursor == 0 {
            break;
        }
        assert!(round < 1_000_000);
    }
    for i in 0..n {
        assert!(
            seen.contains(format!("stable:{i}").as_bytes()),
            "stable:{i} missed"
        );
    }
}

#[test]
fn scan_empty_and_count() {
    let ks = Keyspace::default();
    assert_eq!(ks.scan(0, 0, 10, T0, |_| panic!()), 0);
    for i in 0..1000 {
        let k = format!("k{i}");
        let key = Key::new(k.as_bytes());
        ks.lock(&key)
            .insert(3, &key, CompactValue::from_bytes(b"v"), None, T0);
    }
    let mut all = Vec::new();
    let mut c = 0;
    let mut calls = 0;
    loop {
        c = ks.scan(3, c, 100, T0, |e| all.push(e.key().to_vec()));
        calls += 1;
        if c == 0 {
            break;
        }
    }
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 1000);
    assert!(calls > 3, "{calls}");
}

/// SCAN deletes the expired keys it meets (Redis's SCAN runs
/// expireIfNeeded on each), so DBSIZE and DEBUG DIGEST agree with Redis
/// right after it; the live keys are all returned.
#[test]
fn scan_deletes_the_expired_keys_it_meets() {
    let ks = Keyspace::default();
    for i in 0..200 {
        let k = format!("k{i}");
        let key = Key::new(k.as_bytes());
        let ttl = (i % 2 == 0).then_some(T0 + 5);
        ks.lock(&key)
            .insert(0, &key, CompactValue::from_bytes(b"v"), ttl, T0);
    }
    assert_eq!(ks.dbsize(0), 200);
    let (mut c, mut live) = (0, Vec::new());
    loop {
        c = ks.scan(0, c, 10, T0 + 10, |e| live.push(e.key().to_vec()));
        if c == 0 {
            break;
        }
    }
    live.sort();
    live.dedup();
    assert_eq!(live.len(), 100);
    assert_eq!(ks.dbsize(0), 100, "the expired half was deleted");
}

#[test]
fn slot_enumeration() {
    let ks = Keyspace::new(Config {
        partitions: 8,
        databases: 1,
    });
    let mut by_slot: HashMap<u16, Vec<Vec<u8>>> = HashMap::new();
    for i in 0..5000 {
        let k = if i % 10 == 0 {
            format!("{{user7}}:{i}")
        } else {
            format!("key:{i}")
        };
        let key = Key::new(k.as_bytes());
        by_slot
            .entry(key.slot())
            .or_default()
            .push(k.clone().into_bytes());
        ks.lock(&key)
            .insert(0, &key, CompactValue::from_bytes(b"v"), None, T0);
    }
    let tag_slot = crate::slot::key_slot(b"user7");
    for (slot, mut want) in by_slot {
        let mut got = ks.keys_in_slot(0, slot, T0, usize::MAX);
        got.sort();
        want.sort();
        assert_eq!(got, want, "slot {slot}");
    }
    assert_eq!(
        ks.keys_in_slot(0, tag_slot, T0, usize::MAX).len(),
        500 + usize::from(false)
    );
}

#[test]
fn active_expiry_reclaims_without_traffic() {
    let ks = Keyspace::new(Config {
        partitions: 16,
        databases: 16,
    });
    let n = 200_000u64;
    for i in 0..n {
        let k = format!("key:{i}");
        let key = Key::new(k.as_bytes());
        let ttl = T0 + 1000 + (i % 2000);
        ks.lock(&key).insert(
            0,
            &key,
            CompactValue::from_bytes(format!("value:{i}").as_bytes()),
            Some(ttl),
            T0,
        );
    }
    // a non-volatile population in another db
    ks.populate(1, 10_000, b"key", 0, T0);
    assert_eq!(ks.db_info(0).expires, n as usize);
    assert!(ks.db_info(0).avg_ttl == 0);
    // before expiry: cycles find nothing but estimate avg_ttl
    for _ in 0..100 {
        ks.active_expire_cycle(Duration::from_millis(2), T0);
    }
    let avg = ks.db_info(0).avg_ttl;
    assert!((1000..3000).contains(&avg), "{avg}");
    // simulate 10 s at 10 Hz with a small budget
    let mut now = T0 + 3000;
    let mut cycles = 0;
    while ks.dbsize(0) > 0 && cycles < 100 {
        ks.active_expire_cycle(Duration::from_millis(25), now);
        now += 100;
        cycles += 1;
    }
    assert_eq!(ks.dbsize(0), 0, "after {cycles} cycles");
    assert_eq!(ks.db_info(0).expires, 0);
    assert_eq!(ks.dbsize(1), 10_000);
    assert_eq!(ks.stats().expired_keys, n);
}

#[test]
fn populate_like_redis() {
    let ks = Keyspace::default();
    let key = Key::new(b"key:5");
    ks.lock(&key)
        .insert(0, &key, CompactValue::from_bytes(b"mine"), None, T0);
    assert_eq!(ks.populate(0, 100, b"key", 0, T0), 99);
    assert_eq!(ks.dbsize(0), 100);
    let key = Key::new(b"key:42");
    let v = ks
        .lock(&key)
        .get(0, &key, T0)
        .unwrap()
        .value()
        .string()
        .unwrap()
        .to_vec();
    assert_eq!(v, b"value:42");
    ks.populate(0, 3, b"p", 10, T0);
    let key = Key::new(b"p:1");
    let v = ks
        .lock(&key)
        .get(0, &key, T0)
        .unwrap()
        .value()
        .string()
        .unwrap()
        .to_vec();
    assert_eq!(v, b"value:1\0\0\0");
    ks.populate(0, 3, b"q", 3, T0);
    let key = Key::new(b"q:2");
    let v = ks
        .lock(&key)
        .get(0, &key, T0)
        .unwrap()
        .value()
        .string()
        .unwrap()
        .to_vec();
    assert_eq!(v, b"val");
}

#[test]
fn multi_lock_and_swap_flush() {
    let ks = Keyspace::new(Config {
        partitions: 16,
        databases: 4,
    });
    let a = Key::new(b"a");
    let b = Key::new(b"b");
    {
        let mut g = ks.lock_keys(&[Key::new(b"b"), Key::new(b"a"), Key::new(b"a")]);
        g.part(&a)
            .insert(0, &a, CompactValue::from_bytes(b"1"), None, T0);
        let (pa, pb) = g.pair(&a, &b);
        let v = pa.remove(0, &a, T0).unwrap().into_value();
        match pb {
            Some(pb) => pb.insert(0, &b, v, None, T0),
            None => pa.insert(0, &b, v, None, T0),
        };
    }
    assert_eq!(ks.dbsize(0), 1);
    ks.swap_db(0, 2);
    assert_eq!(ks.dbsize(0), 0);
    assert_eq!(ks.dbsize(2), 1);
    assert!(ks.lock(&b).exists(2, &b, T0));
    let dropped = ks.flush_all();
    assert!(!dropped.is_empty());
    assert_eq!(ks.dbsize(2), 0);
    assert_eq!(ks.random_key(2, T0), None);
    ks.populate(0, 10, b"key", 0, T0);
    assert!(ks.random_key(0, T0).unwrap().starts_with(b"key:"));
}

#[test]
fn memory_usage_is_slot_share_plus_heap() {
    let ks = Keyspace::default();
    ks.populate(0, 10_000, b"key", 0, T0);
    let k = Key::new(b"key:77");
    let u = ks.lock(&k).memory_usage(0, &k, T0).unwrap();
    assert!((32..=64).contains(&u), "{u}");
    let big = Key::new(b"big");
    ks.lock(&big)
        .insert(0, &big, CompactValue::from_bytes(&[7u8; 1000]), None, T0);
    let u2 = ks.lock(&big).memory_usage(0, &big, T0).unwrap();
    assert!((1024..1224).contains(&u2), "{u2}");
}

/// A key alone in its database's table is charged what its slot costs at
/// the fill tables grow at, not the table's whole first segment (~4 KB).
#[test]
fn lone_key_slot_share_is_its_slot() {
    let ks = Keyspace::default();
    let k = Key::new(b"k");
    ks.lock(&k)
        .insert(0, &k, CompactValue::from_bytes(b"1"), None, T0);
    let u = ks.lock(&k).memory_usage(0, &k, T0).unwrap();
    assert!((32..=100).contains(&u), "{u}");
    // Filled as tables run (a segment that just got a row is a little
    // under 90% full), the shares add up to about the table's bytes.
    ks.populate(0, 100_000, b"key", 0, T0);
    let mut all = ks.lock_all();
    for p in all.partitions() {
        let d = p.settled_db(0).unwrap();
        let (bytes, n, share) = (d.table.allocated_bytes(), d.table.len(), d.slot_share());
        assert!(share * n >= bytes * 85 / 100, "{share} x {n} vs {bytes}");
        assert!(share * n < bytes + n, "{share} x {n} vs {bytes}");
    }
}

#[test]
fn expired_keys_are_logged_when_tracking() {
    let ks = Keyspace::new(Config {
        partitions: 4,
        databases: 2,
    });
    ks.set_track_expired(true);
    for (i, k) in [&b"a"[..], b"b", b"c"].iter().enumerate() {
        let key = Key::new(k);
        ks.lock(&key).insert(
            1,
            &key,
            CompactValue::from_bytes(b"v"),
            Some(T0 + 10 * i as u64),
            T0 - 1,
        );
    }
    let a = Key::new(b"a");
    assert!(ks.lock(&a).get(1, &a, T0 + 5).is_none()); // lazy
    ks.active_expire_cycle(Duration::from_millis(10), T0 + 100); // active
    let mut got = ks.drain_expired();
    got.sort();
    assert_eq!(
        got,
        vec![(1, b"a".to_vec()), (1, b"b".to_vec()), (1, b"c".to_vec())]
    );
    assert!(ks.drain_expired().is_empty());
    ks.set_track_expired(false);
}

#[test]
fn collection_values_clone_drop_and_size() {
    use crate::object::{Entry, Kind, EXPIRE_EPOCH_MS};
    use collections::{HashValue, Limits, ListValue, SetValue, ZsetValue};
    let mut h = HashValue::new();
    h.insert(&Limits::default(), b"f", b"v");
    let hv = CompactValue::from_hash(h);
    assert_eq!(hv.kind(), Kind::Hash);
    assert_eq!(hv.encoding_name(), "listpack");
    assert_eq!(hv.collection_len(), 1);
    // A small hash is its block alone: no box around it.
    assert_eq!(hv.heap_size(), hv.as_hash().unwrap().heap_bytes());
    let mut big = HashValue::new();
    for i in 0..20 {
        big.insert(&Limits::default(), format!("f{i}").as_bytes(), b"v");
    }
    let bv = CompactValue::from_hash(big);
    assert_eq!(bv.encoding_name(), "listpack");
    assert!(bv.heap_size() > bv.as_hash().unwrap().heap_bytes());
    let c = hv.clone();
    assert_eq!(c.as_hash().unwrap().len(), 1);
    assert!(c.string().is_none());
    let lv = CompactValue::from_list(ListValue::new(&Limits::default()));
    assert_eq!((lv.kind(), lv.encoding_name()), (Kind::List, "quicklist"));
    let sv = CompactValue::from_set(SetValue::default());
    assert_eq!((sv.kind(), sv.encoding_name()), (Kind::Set, "intset"));
    let zv = CompactValue::from_zset(ZsetValue::default());
    assert_eq!((zv.kind(), zv.encoding_name()), (Kind::ZSet, "listpack"));
    // An entry keeps its TTL while the collection inside changes.
    let k = Key::new(b"coll");
    let mut e = Entry::new(&k, zv);
    e.set_expire(Some(EXPIRE_EPOCH_MS + 5000));
    if let Some(ZsetValue::Listpack(z)) = e.zset_mut() {
        z.insert(b"m", 1.5);
    }
    assert_eq!(e.expire_at(), Some(EXPIRE_EPOCH_MS + 5000));
    assert_eq!(e.value().collection_len(), 1);
    assert!(e.list_mut().is_none());
}

/// Short-TTL keys written faster than active expiry visits them (it never
/// runs here): inserts drop the expired keys of a segment before it splits,
/// so the table stays near the live set, and every dropped key is counted,
/// logged for "expired" events and for the journal exactly once. With
/// active expiry off (DEBUG SET-ACTIVE-EXPIRE 0) nothing is dropped.
#[test]
fn expired_keys_never_grow_the_table() {
    let ttl_ms = 1_000u64;
    let n = 200_000u64;
    for active in [true, false] {
        let ks = Keyspace::new(Config {
            partitions: 1,
            databases: 1,
        });
        ks.set_active_expire(active);
        ks.set_track_expired(true);
        ks.set_journal_expired(true);
        let mut events: HashSet<Vec<u8>> = HashSet::new();
        let mut journal: HashSet<Vec<u8>> = HashSet::new();
        for i in 0..n {
            // 100 keys per ms: ~100k keys live at any time.
            let now = T0 + i / 100;
            let key = format!("ttl:{i}").into_bytes();
            let k = Key::new(&key);
            let v = CompactValue::from_bytes(format!("value:{i}").as_bytes());
            let old = ks
                .lock_partition(0)
                .insert(0, &k, v, Some(now + ttl_ms), now);
            assert!(old.is_none());
            if i % 10_000 == 0 {
                events.extend(ks.drain_expired().into_iter().map(|(_, k)| k));
                journal.extend(ks.drain_journal_expired().into_iter().map(|(_, k)| k));
            }
        }
        events.extend(ks.drain_expired().into_iter().map(|(_, k)| k));
        journal.extend(ks.drain_journal_expired().into_iter().map(|(_, k)| k));
        let live = 100 * ttl_ms;
        let st = ks.table_stats(0);
        let expired = ks.stats().expired_keys;
        assert_eq!(st.keys as u64 + expired, n, "every key is live or expired");
        assert_eq!(events.len() as u64, expired);
        assert_eq!(journal, events);
        for k in &events {
            // Only keys whose TTL had passed were dropped.
            let i: u64 = std::str::from_utf8(&k[4..]).unwrap().parse().unwrap();
            assert!(
                T0 + i / 100 + ttl_ms <= T0 + (n - 1) / 100,
                "key {i} was live"
            );
        }
        let now = T0 + (n - 1) / 100;
        let mut g = ks.lock_partition(0);
        for i in n - live + 100..n {
            let key = format!("ttl:{i}").into_bytes();
            assert!(
                g.get(0, &Key::new(&key), now).is_some(),
                "live key {i} kept"
            );
        }
        drop(g);
        if active {
            // 32-byte entries at ~90% fill, twice the live set at most.
            assert!(
                (st.bytes as u64) < 2 * live * 36,
                "table {} B for {live} live keys",
                st.bytes
            );
            assert!(expired > 0);
        } else {
            assert_eq!(expired, 0);
            assert_eq!(st.keys as u64, n);
        }
    }
}

/// `(db, key) -> value` of every live entry.
fn contents(ks: &Keyspace) -> HashMap<(usize, Vec<u8>), Vec<u8>> {
    let mut m = HashMap::new();
    for db in 0..ks.databases() {
        ks.for_each_key(db, T0, |e| {
            m.insert((db, e.key().to_vec()), e.value().string().unwrap().to_vec());
        });
    }
    m
}

fn fill(ks: &Keyspace, items: &[(usize, u16, Vec<u8>)]) -> HashMap<(usize, Vec<u8>), Vec<u8>> {
    let mut model = HashMap::new();
    for (db, k, v) in items {
        let name = format!("k:{k}").into_bytes();
        let key = Key::new(&name);
        ks.lock(&key)
            .set(*db, &key, CompactValue::from_bytes(v), Ttl::Set(None), T0);
        model.insert((*db, name), v.clone());
    }
    model
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// `swap_all_with` moves every table of the loaded keyspace in and
    /// hands back exactly the old entries; the loaded one is left empty.
    #[test]
    fn swap_all_with_matches_a_model(
        old in proptest::collection::vec((0usize..4, 0u16..300, proptest::collection::vec(any::<u8>(), 0..20)), 0..200),
        new in proptest::collection::vec((0usize..4, 0u16..300, proptest::collection::vec(any::<u8>(), 0..20)), 0..200),
    ) {
        let ks = Keyspace::new(Config { partitions: 8, databases: 4 });
        let old_model = fill(&ks, &old);
        let tmp = ks.empty_like();
        prop_assert_eq!(tmp.partitions(), ks.partitions());
        prop_assert_eq!(tmp.databases(), ks.databases());
        let new_model = fill(&tmp, &new);
        // Loading into the copy leaves the served keyspace as it was.
        prop_assert_eq!(contents(&ks), old_model.clone());
        let replaced = ks.swap_all_with(&tmp).unwrap();
        prop_assert_eq!(contents(&ks), new_model);
        prop_assert_eq!(contents(&tmp), HashMap::new());
        let freed: usize = replaced.iter().map(|d| d.table.len()).sum();
        prop_assert_eq!(freed, old_model.len());
        for db in 0..4 {
            prop_assert_eq!(
                ks.dbsize(db),
                contents(&ks).keys().filter(|(d, _)| *d == db).count()
            );
        }
    }
}

#[test]
fn swap_all_with_refuses_another_shape() {
    let ks = Keyspace::new(Config {
        partitions: 8,
        databases: 4,
    });
    fill(&ks, &[(0, 1, b"a".to_vec())]);
    let other = Keyspace::new(Config {
        partitions: 16,
        databases: 4,
    });
    fill(&other, &[(1, 2, b"b".to_vec())]);
    assert!(ks.swap_all_with(&other).is_err());
    assert!(ks.swap_all_with(&ks).is_err());
    assert_eq!(contents(&ks).len(), 1);
    assert_eq!(contents(&other).len(), 1);
}

/// A writable replica: expiry is frozen, keys its clients gave a TTL
/// (inside `with_local_ttls_tracked`) are deleted by the replica sweep
/// once expired, logged as expired; keys set outside it (the master's)
/// stay until the master deletes them.
#[test]
fn replica_sweep_deletes_only_the_clients_expired_keys() {
    let ks = Keyspace::new(Config {
        partitions: 4,
        databases: 4,
    });
    ks.set_expiry_frozen(true);
    ks.set_track_expired(true);
    let set = |db: usize, k: &str, ttl: Option<u64>| {
        let key = Key::new(k.as_bytes());
        drop(
            ks.lock(&key)
                .insert(db, &key, CompactValue::from_bytes(b"v"), ttl, T0),
        );
    };
    // the master's keys
    set(0, "m1", Some(T0 + 10));
    set(0, "shared", None);
    Keyspace::with_local_ttls_tracked(|| {
        set(0, "c1", Some(T0 + 10));
        set(2, "c1", Some(T0 + 5000));
        set(1, "c2", None);
        let k = Key::new(b"c2");
        assert!(ks.lock(&k).set_expire(1, &k, Some(T0 + 20), T0));
        set(0, "c3", Some(T0 + 10));
        // MOVE of a key with a TTL: remembered in the target database
        set(0, "c4", Some(T0 + 10));
        let k = Key::new(b"c4");
        assert!(ks.lock(&k).move_entry(0, 3, &k, T0));
        set(0, "shared", Some(T0 + 10));
    });
    // the master persists "c3" and overwrites "shared" without a TTL
    let k = Key::new(b"c3");
    assert!(ks.lock(&k).set_expire(0, &k, None, T0));
    set(0, "shared", None);
    assert_eq!(ks.replica_local_ttl_keys(), 5);
    let mut around = |step: &mut dyn FnMut()| step();
    assert_eq!(
        ks.expire_replica_local_keys(Duration::from_secs(1), T0 + 5, &mut around),
        0
    );
    assert_eq!(
        ks.expire_replica_local_keys(Duration::from_secs(1), T0 + 100, &mut around),
        3
    );
    let mut got = ks.drain_expired();
    got.sort();
    assert_eq!(
        got,
        vec![
            (0, b"c1".to_vec()),
            (1, b"c2".to_vec()),
            (3, b"c4".to_vec())
        ]
    );
    // left: c1 in db 2 (TTL ahead); "c3" and "shared" forgotten
    assert_eq!(ks.replica_local_ttl_keys(), 1);
    assert_eq!(ks.dbsize(0), 3); // m1 (expired, the master's), shared, c3
    assert_eq!(ks.dbsize(2), 1);
    assert_eq!(ks.db_info(0).expires, 1);
    assert_eq!(ks.stats().expired_keys, 3);
    assert_eq!(
        ks.expire_replica_local_keys(Duration::from_secs(1), T0 + 6000, &mut around),
        1
    );
    assert_eq!(ks.replica_local_ttl_keys(), 0);
    ks.set_track_expired(false);
}

/// `active-expire-effort`: at 1 a cycle stops after its quota once under
/// 10% of the volatile keys it saw were expired; at 10 its quota is 13/4
/// as large and it sweeps on while more than 1% were, so with one key in
/// twelve expired it reclaims them all (a chunk of 256 keys with at most
/// 1% expired is then ~1e-7 likely).
#[test]
fn active_expire_effort_sets_quota_and_stale_threshold() {
    let run = |effort: u8, every: u64| {
        let ks = Keyspace::new(Config {
            partitions: 1,
            databases: 1,
        });
        ks.set_active_expire_effort(effort);
        for i in 0..60_000u64 {
            let k = format!("key:{i}");
            let key = Key::new(k.as_bytes());
            let ttl = if every > 0 && i % every == 0 {
                T0 + 5
            } else {
                T0 + 3_600_000
            };
            drop(
                ks.lock(&key)
                    .insert(0, &key, CompactValue::from_bytes(b"v"), Some(ttl), T0),
            );
        }
        ks.active_expire_cycle(Duration::from_secs(60), T0 + 10)
    };
    // No key expired: a cycle visits its quota (60,000 / 64 keys at
    // effort 1, 13/4 of that at 10), in chunks of about 256.
    let (low, high) = (run(1, 0).visited, run(10, 0).visited);
    assert!((937..1500).contains(&low), "effort 1 visited {low}");
    assert!((3045..3600).contains(&high), "effort 10 visited {high}");
    let all = (0..60_000u64).filter(|i| i % 12 == 0).count();
    let low = run(1, 12).expired;
    assert!(
        low > 0 && low < all / 4,
        "effort 1 reclaimed {low} of {all}"
    );
    assert_eq!(run(10, 12).expired, all, "effort 10");
}
