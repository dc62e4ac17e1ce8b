//! Model tests of the snapshot protocol: whatever writes run between the
//! walk's chunks, the sink receives exactly the dataset at the cut.

use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::Mutex;
use proptest::prelude::*;

use super::{Snapshot, SnapshotSink};
use crate::keyspace::{Config, Keyspace, Ttl};
use crate::object::{CompactValue, Entry, Key};

const T0: u64 = 1_800_000_000_000;

/// (db at the cut, key)
type Name = (u32, Vec<u8>);
/// (value, expiry)
type Val = (Vec<u8>, Option<u64>);
type Dataset = BTreeMap<Name, Val>;

#[derive(Default)]
struct Collect {
    got: Mutex<Vec<(Name, Val)>>,
}

impl SnapshotSink for Collect {
    fn write(&self, db: u32, entries: &[&Entry]) {
        let mut g = self.got.lock();
        for e in entries {
            let v = e.value().string().expect("string").to_vec();
            g.push(((db, e.key().to_vec()), (v, e.expire_at())));
        }
    }
    fn wait_ready(&self) {}
    fn failed(&self) -> bool {
        false
    }
}

impl Collect {
    /// The received entries as a dataset; panics on a duplicate.
    fn dataset(&self) -> Dataset {
        let mut out = Dataset::new();
        for (k, v) in self.got.lock().iter() {
            assert!(
                out.insert(k.clone(), v.clone()).is_none(),
                "{k:?} serialised twice"
            );
        }
        out
    }
}

/// The live dataset, read through the public API.
fn dataset(ks: &Keyspace, now: u64) -> Dataset {
    let mut out = Dataset::new();
    for db in 0..ks.databases() {
        ks.for_each_key(db, now, |e| {
            let v = e.value().string().expect("string").to_vec();
            out.insert((db as u32, e.key().to_vec()), (v, e.expire_at()));
        });
    }
    out
}

fn key(i: u64) -> Vec<u8> {
    format!("key:{i}").into_bytes()
}

#[derive(Clone, Debug)]
enum Op {
    /// SET (overwrite or create), with or without a TTL.
    Set(u64, u8, bool),
    /// In-place change through `get` (APPEND).
    Append(u64, u8),
    Del(u64),
    /// Set a TTL that has already passed (lazy expiry removes it).
    ExpireNow(u64),
    Rename(u64, u64),
    Move(u64),
    FlushDb(u8),
    SwapDb,
    ActiveExpire,
    /// Time passes beyond every TTL set so far: keys alive at the cut
    /// expire, and inserts may drop them from full segments.
    Advance,
    /// Walk chunks on a partition.
    Walk(usize),
}

fn op(n: u64) -> impl Strategy<Value = Op> {
    let k = 0..n * 2;
    prop_oneof![
        6 => (k.clone(), any::<u8>(), any::<bool>()).prop_map(|(k, v, t)| Op::Set(k, v, t)),
        4 => (k.clone(), any::<u8>()).prop_map(|(k, v)| Op::Append(k, v)),
        3 => k.clone().prop_map(Op::Del),
        2 => k.clone().prop_map(Op::ExpireNow),
        2 => (k.clone(), k.clone()).prop_map(|(a, b)| Op::Rename(a, b)),
        1 => k.prop_map(Op::Move),
        1 => (0u8..3).prop_map(Op::FlushDb),
        1 => Just(Op::SwapDb),
        1 => Just(Op::ActiveExpire),
        1 => Just(Op::Advance),
        12 => (0usize..4).prop_map(Op::Walk),
    ]
}

fn apply(ks: &Keyspace, op: &Op, now: &mut u64) {
    let db = |k: u64| (k % 2) as usize;
    match *op {
        Op::Set(k, v, ttl) => {
            let key = key(k);
            let t = ttl.then_some(*now + 1_000_000);
            ks.lock(&Key::new(&key)).set(
                db(k),
                &Key::new(&key),
                CompactValue::from_bytes(&[b'v', v]),
                Ttl::Set(t),
                *now,
            );
        }
        Op::Append(k, v) => {
            let key = key(k);
            let kk = Key::new(&key);
            let mut p = ks.lock(&kk);
            if let Some(e) = p.get(db(k), &kk, *now) {
                let mut s = e.value().string().unwrap().to_vec();
                s.push(v);
                e.set_value(CompactValue::from_bytes(&s));
            }
        }
        Op::Del(k) => {
            let key = key(k);
            ks.lock(&Key::new(&key))
                .remove(db(k), &Key::new(&key), *now);
        }
        Op::ExpireNow(k) => {
            let key = key(k);
            let kk = Key::new(&key);
            let mut p = ks.lock(&kk);
            p.set_expire(db(k), &kk, Some(*now + 1), *now);
            drop(p);
            *now += 2;
        }
        Op::Rename(a, b) => {
            if db(a) != db(b) || a == b {
                return;
            }
            let (ba, bb) = (key(a), key(b));
            let (ka, kb) = (Key::new(&ba), Key::new(&bb));
            let mut g = ks.lock_keys(&[Key::new(&ba), Key::new(&bb)]);
            let Some(e) = g.part(&ka).remove(db(a), &ka, *now) else {
                return;
            };
            let ttl = e.expire_at();
            let v = e.into_value();
            g.part(&kb).insert_value_with_ttl(db(b), &kb, v, ttl, *now);
        }
        Op::Move(k) => {
            let key = key(k);
            let kk = Key::new(&key);
            let mut p = ks.lock(&kk);
            let (src, dst) = (db(k), 2);
            if !p.exists(dst, &kk, *now) {
                p.move_entry(src, dst, &kk, *now);
            }
        }
        Op::FlushDb(d) => drop(ks.flush_db(d as usize)),
        Op::SwapDb => ks.swap_db(0, 2),
        Op::ActiveExpire => {
            ks.active_expire_cycle(std::time::Duration::from_millis(5), *now);
        }
        Op::Advance => *now += 2_000_000,
        Op::Walk(_) => {}
    }
}

/// Runs `ops` between walk chunks of a snapshot taken after `n` keys were
/// written, finishes the walk, and checks the sink got the cut exactly.
fn check(n: u64, parts: usize, ops: &[Op]) {
    let ks = Keyspace::new(Config {
        partitions: parts,
        databases: 3,
    });
    let mut now = T0;
    for i in 0..n {
        apply(&ks, &Op::Set(i, i as u8, i % 3 == 0), &mut now);
    }
    // Some keys already expired at the cut: not part of the dataset.
    for i in (0..n).step_by(17) {
        let key = key(i);
        let kk = Key::new(&key);
        ks.lock(&kk)
            .set_expire((i % 2) as usize, &kk, Some(now), now);
    }
    now += 1;
    let want = dataset(&ks, now);
    let sink = Arc::new(Collect::default());
    let snap: Arc<Snapshot> = ks.begin_snapshot(sink.clone(), now).expect("snapshot");
    assert!(
        ks.begin_snapshot(sink.clone(), now).is_none(),
        "one at a time"
    );
    for op in ops {
        if let Op::Walk(p) = op {
            let p = p % ks.partitions();
            ks.lock_partition(p)
                .snapshot_chunk(std::time::Duration::from_micros(1));
        } else {
            apply(&ks, op, &mut now);
        }
    }
    ks.walk_snapshot(&snap).expect("walk");
    assert!(!ks.snapshot_running());
    assert_eq!(snap.keys_written() as usize, want.len());
    let got = sink.dataset();
    assert_eq!(got.len(), want.len(), "entry count");
    for (k, v) in &want {
        assert_eq!(got.get(k), Some(v), "{k:?}");
    }
    // After the snapshot the tables behave as before: a second snapshot
    // sees the live dataset.
    let want2 = dataset(&ks, now);
    let sink2 = Arc::new(Collect::default());
    let snap2 = ks.begin_snapshot(sink2.clone(), now).unwrap();
    ks.walk_snapshot(&snap2).unwrap();
    assert_eq!(sink2.dataset(), want2);
}

#[test]
fn walk_alone_serialises_the_dataset() {
    check(5000, 4, &[]);
    check(0, 1, &[]);
}

#[test]
fn writes_during_the_walk() {
    let n = 4000;
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    let mut rnd = move |m: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % m
    };
    for parts in [1, 4, 16] {
        let mut ops = Vec::new();
        for _ in 0..6000 {
            ops.push(match rnd(20) {
                0..=4 => Op::Set(rnd(n * 2), rnd(256) as u8, rnd(2) == 0),
                5..=7 => Op::Append(rnd(n * 2), rnd(256) as u8),
                8..=9 => Op::Del(rnd(n * 2)),
                10 => Op::ExpireNow(rnd(n * 2)),
                11 => Op::Rename(rnd(n * 2), rnd(n * 2)),
                12 => Op::Move(rnd(n * 2)),
                13 if rnd(50) == 0 => Op::FlushDb(rnd(3) as u8),
                14 if rnd(20) == 0 => Op::SwapDb,
                15 if rnd(10) == 0 => Op::ActiveExpire,
                _ => Op::Walk(rnd(16) as usize),
            });
        }
        check(n, parts, &ops);
    }
}

/// Keys alive at the cut that expire during the walk stay in the snapshot
/// even when an insert drops them from a full segment before growing or
/// splitting it (the table's eviction pass visits the whole segment).
#[test]
fn keys_dropped_by_evicting_inserts_are_in_the_snapshot() {
    let n = 6000;
    for parts in [1, 4] {
        let mut ops = vec![Op::Advance];
        for i in 0..n * 2 {
            ops.push(Op::Set(n * 2 + i, 1, true));
            if i % 997 == 0 {
                ops.push(Op::Walk(i as usize));
            }
        }
        check(n, parts, &ops);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn snapshot_equals_the_cut(
        n in 0u64..3000,
        parts in prop_oneof![Just(1usize), Just(4), Just(16)],
        ops in proptest::collection::vec(op(1500), 0..400),
    ) {
        check(n, parts, &ops);
    }
}

/// Aborting leaves no partition in the snapshot and the tables usable.
#[test]
fn abort_clears_the_partitions() {
    let ks = Keyspace::new(Config {
        partitions: 4,
        databases: 2,
    });
    let mut now = T0;
    for i in 0..3000 {
        apply(&ks, &Op::Set(i, 1, false), &mut now);
    }
    let sink = Arc::new(Collect::default());
    let snap = ks.begin_snapshot(sink, now).unwrap();
    ks.lock_partition(0)
        .snapshot_chunk(std::time::Duration::from_micros(1));
    drop(ks.flush_db(0));
    snap.abort();
    assert_eq!(ks.walk_snapshot(&snap), Err(super::WalkError::Aborted));
    assert!(!ks.snapshot_running());
    for i in 3000..6000 {
        apply(&ks, &Op::Set(i, 1, false), &mut now);
    }
    for i in 0..6000 {
        apply(&ks, &Op::Del(i), &mut now);
    }
    assert_eq!(ks.dbsize(0) + ks.dbsize(1), 0);
}
