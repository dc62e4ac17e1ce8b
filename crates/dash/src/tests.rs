//! Unit and model tests with tiny segments (see `segment::geometry`).
use super::*;
use proptest::prelude::*;
use std::collections::{HashMap, HashSet};

type E = (u64, u64);

fn mix(k: u64) -> u64 {
    let mut z = k.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Test size, reduced under Miri.
fn sz(n: u64) -> u64 {
    if cfg!(miri) {
        n / 5
    } else {
        n
    }
}

fn table() -> DashTable<E, fn(&E) -> u64> {
    DashTable::with_hasher(|e: &E| mix(e.0))
}

fn ins(t: &mut DashTable<E, fn(&E) -> u64>, k: u64, v: u64) -> Option<u64> {
    t.insert(mix(k), (k, v), |e| e.0 == k).map(|e| e.1)
}

#[test]
fn basic_grow_and_shrink() {
    let mut t = table();
    let n = if cfg!(miri) { 300 } else { 5000 };
    for k in 0..n {
        assert_eq!(ins(&mut t, k, k * 2), None);
    }
    t.check_invariants();
    assert_eq!(t.len(), n as usize);
    assert!(t.segment_count() > 1);
    for k in 0..n {
        assert_eq!(t.get(mix(k), |e| e.0 == k), Some(&(k, k * 2)));
    }
    assert!(t.get(mix(n), |e| e.0 == n).is_none());
    let peak = t.allocated_bytes();
    for k in 0..n {
        assert_eq!(t.remove(mix(k), |e| e.0 == k), Some((k, k * 2)));
    }
    t.check_invariants();
    assert!(t.is_empty());
    assert_eq!(t.segment_count(), 1, "segments merge back");
    assert!(t.allocated_bytes() * 10 < peak);
}

#[test]
fn entry_api() {
    let mut t = table();
    match t.entry(mix(1), |e| e.0 == 1) {
        Entry::Vacant(v) => {
            v.insert((1, 10));
        }
        Entry::Occupied(_) => panic!(),
    }
    match t.entry(mix(1), |e| e.0 == 1) {
        Entry::Occupied(mut o) => {
            o.get_mut().1 += 1;
            assert_eq!(o.get(), &(1, 11));
        }
        Entry::Vacant(_) => panic!(),
    }
    *t.entry(mix(2), |e| e.0 == 2).or_insert_with(|| (2, 0)) = (2, 5);
    assert_eq!(t.get(mix(2), |e| e.0 == 2), Some(&(2, 5)));
    match t.entry(mix(1), |e| e.0 == 1) {
        Entry::Occupied(o) => assert_eq!(o.remove(), (1, 11)),
        Entry::Vacant(_) => panic!(),
    }
    assert_eq!(t.len(), 1);
}

#[test]
fn drop_with_frees_every_entry_a_segment_at_a_time() {
    use std::rc::Rc;
    let token = Rc::new(());
    let mut t: DashTable<(u64, Rc<()>), _> = DashTable::with_hasher(|e: &(u64, Rc<()>)| mix(e.0));
    for k in 0..if cfg!(miri) { 100 } else { 400u64 } {
        t.insert_unique(mix(k), (k, token.clone()));
    }
    let segments = t.segment_count();
    assert!(segments > 1, "the test needs several segments");
    let mut calls = 0;
    let mut seen = Vec::new();
    t.drop_with(|| {
        calls += 1;
        seen.push(Rc::strong_count(&token));
    });
    assert_eq!(calls, segments);
    // Each call comes after one more segment's entries were dropped.
    assert!(seen.windows(2).all(|w| w[1] < w[0]), "{seen:?}");
    assert_eq!(Rc::strong_count(&token), 1);
}

#[test]
fn drops_everything() {
    use std::rc::Rc;
    let token = Rc::new(());
    {
        let mut t: DashTable<(u64, Rc<()>), _> =
            DashTable::with_hasher(|e: &(u64, Rc<()>)| mix(e.0));
        for k in 0..if cfg!(miri) { 100 } else { 400u64 } {
            t.insert_unique(mix(k), (k, token.clone()));
        }
        for k in 0..if cfg!(miri) { 50 } else { 200u64 } {
            t.remove(mix(k), |e| e.0 == k);
        }
        let mut c = 0;
        while {
            c = t.scan_retain(c, |e| e.0 % 3 != 0);
            c != 0
        } {}
        assert_eq!(Rc::strong_count(&token), 1 + t.len());
    }
    assert_eq!(Rc::strong_count(&token), 1);
}

#[test]
fn random_run_samples_live_entries_and_covers_the_table() {
    let mut t = table();
    assert_eq!(t.random_run(1, 5, |_| panic!("empty table")), 0);
    let n = sz(1000);
    for k in 0..n {
        ins(&mut t, k, 0);
    }
    let mut seen = HashSet::new();
    for s in 0..n {
        let mut batch = Vec::new();
        let got = t.random_run(mix(s), 5, |e| batch.push(e.0));
        assert_eq!(got, 5);
        assert_eq!(batch.len(), 5);
        for k in batch {
            assert!(k < n, "a live key");
            seen.insert(k);
        }
    }
    assert!(
        seen.len() as u64 > n * 9 / 10,
        "random_run covers the table: {}",
        seen.len()
    );
    // Fewer entries than asked: at most len visits.
    let mut small = table();
    ins(&mut small, 1, 0);
    ins(&mut small, 2, 0);
    let mut v = Vec::new();
    assert_eq!(small.random_run(3, 10, |e| v.push(e.0)), 2);
    assert!(v.iter().all(|k| *k == 1 || *k == 2));
}

#[test]
fn random_and_prefix() {
    let mut t = table();
    assert!(t.random(1).is_none());
    let n = sz(1000);
    for k in 0..n {
        ins(&mut t, k, 0);
    }
    let mut seen = HashSet::new();
    for s in 0..5 * n {
        seen.insert(t.random(mix(s)).unwrap().0);
    }
    assert!(
        seen.len() as u64 > n * 9 / 10,
        "random covers the table: {}",
        seen.len()
    );
    for bits in [0u32, 1, 3, t.global_depth(), t.global_depth() + 2, 64] {
        let prefix = if bits == 0 { 0 } else { mix(7) >> (64 - bits) };
        let mut got = Vec::new();
        t.for_each_with_prefix(prefix, bits, |e| got.push(e.0));
        got.sort();
        let mut want: Vec<u64> = (0..n)
            .filter(|&k| bits == 0 || mix(k) >> (64 - bits) == prefix)
            .collect();
        want.sort();
        assert_eq!(got, want, "bits={bits}");
    }
}

#[test]
fn degenerate_hashes_split() {
    // All hashes share their top 12 bits (one "slot"): the first splits are
    // degenerate (one child empty) and must still work. (The directory grows
    // to 2^(12 + depth needed): see the crate docs on skew.)
    let mut t: DashTable<E, _> =
        DashTable::with_hasher(|e: &E| mix(e.0) >> 12 | 0xABC0_0000_0000_0000);
    let h = |k: u64| mix(k) >> 12 | 0xABC0_0000_0000_0000;
    let n = if cfg!(miri) { 100 } else { 600 };
    for k in 0..n {
        t.insert(h(k), (k, k), |e| e.0 == k);
    }
    t.check_invariants();
    for k in 0..n {
        assert_eq!(t.get(h(k), |e| e.0 == k).map(|e| e.1), Some(k));
    }
    let mut got = Vec::new();
    t.for_each_with_prefix(0xABC, 12, |e| got.push(e.0));
    assert_eq!(got.len() as u64, n);
}

#[test]
fn snapshot_versions() {
    let mut t = table();
    let n = sz(500);
    for k in 0..n {
        ins(&mut t, k, k);
    }
    // Snapshot 1 while writing: every entry present at the start is
    // serialised exactly once with its value at the start.
    let v = 1;
    t.set_restructure_barrier(v);
    let mut out: Vec<E> = Vec::new();
    let mut c = 0;
    let mut k = n;
    loop {
        c = t.snapshot_step(c, v, |e| out.push(*e));
        // some writes between steps: inserts (with splits), updates, removes
        for w in [k, k % n, (k * 7) % n] {
            t.snapshot_before_write(mix(w), v, |e| out.push(*e));
            if w >= n {
                ins(&mut t, w, w);
            } else if w % 2 == 0 {
                if let Some(e) = t.get_mut(mix(w), |e| e.0 == w) {
                    e.1 += 1000;
                }
            } else {
                t.remove(mix(w), |e| e.0 == w);
            }
        }
        k += 1;
        if c == 0 {
            break;
        }
    }
    t.set_restructure_barrier(0);
    t.check_invariants();
    out.sort();
    let want: Vec<E> = (0..n).map(|k| (k, k)).collect();
    assert_eq!(out, want);
}

/// The protocol `store::keyspace::snapshot` follows: the walk goes segment
/// by segment (`snapshot_walk`), an in-place change or removal serialises
/// only the entry's bucket (`bucket_of`), an insert every bucket it may
/// touch, active expiry the buckets of its logical bucket
/// (`buckets_for_scan`). Model: every entry present at the start is
/// serialised exactly once, with its value at the start, and nothing
/// inserted later is.
fn snapshot_walk_model(seed: u64, n: u64, writes_per_step: usize) {
    let mut t = table();
    for k in 0..n {
        ins(&mut t, k, k);
    }
    let v = 7;
    t.set_restructure_barrier(v);
    let mut out: Vec<E> = Vec::new();
    let serialise = |t: &mut DashTable<E, fn(&E) -> u64>, ids: &[BucketId], out: &mut Vec<E>| {
        for &id in ids {
            if t.bucket_version(id) < v {
                t.for_each_in_bucket(id, |e| out.push(*e));
                t.raise_bucket_version(id, v);
            }
        }
    };
    let mut rng = seed | 1;
    let mut rnd = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut c = 0;
    let mut next_new = n;
    let mut scan_c = 0;
    loop {
        let mut ids = Vec::new();
        c = t.snapshot_walk(c, v, |id| {
            ids.push(id);
            ids.len() < 5
        });
        serialise(&mut t, &ids, &mut out);
        for _ in 0..writes_per_step {
            match rnd() % 5 {
                0 => {
                    // insert a new key (may split)
                    let k = next_new;
                    next_new += 1;
                    t.snapshot_before_write(mix(k), v, |e| out.push(*e));
                    ins(&mut t, k, k);
                }
                1 | 2 => {
                    let k = rnd() % next_new;
                    if let Some(id) = t.bucket_of(mix(k), |e| e.0 == k) {
                        serialise(&mut t, &[id], &mut out);
                        t.get_mut(mix(k), |e| e.0 == k).unwrap().1 += 1_000_000;
                    }
                }
                3 => {
                    let k = rnd() % next_new;
                    if let Some(id) = t.bucket_of(mix(k), |e| e.0 == k) {
                        serialise(&mut t, &[id], &mut out);
                        t.remove(mix(k), |e| e.0 == k);
                    }
                }
                _ => {
                    // active expiry of one logical bucket: drop odd values
                    let mut ids = Vec::new();
                    t.buckets_for_scan(scan_c, |id| ids.push(id));
                    serialise(&mut t, &ids, &mut out);
                    scan_c = t.scan_retain(scan_c, |e| e.1 % 3 != 1);
                }
            }
        }
        if c == 0 {
            break;
        }
    }
    t.set_restructure_barrier(0);
    t.check_invariants();
    out.sort();
    let want: Vec<E> = (0..n).map(|k| (k, k)).collect();
    assert_eq!(out, want);
}

#[test]
fn snapshot_walk_serialises_each_entry_once() {
    for (seed, writes) in [(1, 0), (2, 1), (3, 4), (4, 20)] {
        snapshot_walk_model(seed, sz(3000), writes);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 2 } else { 24 }))]
    #[test]
    fn snapshot_walk_model_prop(seed in any::<u64>(), n in 0u64..2000, writes in 0usize..12) {
        snapshot_walk_model(seed, n, writes);
    }
}

#[test]
fn defrag_moves_everything() {
    let mut t = table();
    let n = sz(800);
    for k in 0..n {
        ins(&mut t, k, k);
    }
    let bytes = t.allocated_bytes();
    let mut c = 0;
    let mut moved = 0;
    loop {
        // SAFETY: the closure returns a bit copy in a new block of the
        // same layout and frees the old one.
        c = unsafe {
            t.defrag_step(c, |p, layout| {
                moved += layout.size();
                let new = std::alloc::alloc(layout);
                std::ptr::copy_nonoverlapping(p, new, layout.size());
                std::alloc::dealloc(p, layout);
                new
            })
        };
        if c == 0 {
            break;
        }
    }
    assert!(moved > 0);
    assert_eq!(t.allocated_bytes(), bytes);
    t.check_invariants();
    for k in 0..n {
        assert_eq!(t.get(mix(k), |e| e.0 == k), Some(&(k, k)));
    }
}

#[derive(Debug, Clone)]
enum Op {
    Insert(u64, u64),
    Upsert(u64),
    Remove(u64),
    Get(u64),
    RemoveRange(u64, u64),
    ScanStep,
    ScanRetainOdd,
}

fn op(keys: u64) -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..keys, any::<u64>()).prop_map(|(k, v)| Op::Insert(k, v)),
        1 => (0..keys).prop_map(Op::Upsert),
        2 => (0..keys).prop_map(Op::Remove),
        1 => (0..keys).prop_map(Op::Get),
        1 => (0..keys, 1..200u64).prop_map(|(a, n)| Op::RemoveRange(a, n)),
        2 => Just(Op::ScanStep),
        1 => Just(Op::ScanRetainOdd),
    ]
}

fn run_model(ops: Vec<Op>) {
    let mut t = table();
    let mut m: HashMap<u64, u64> = HashMap::new();
    // One scan in progress: keys present since it started and never removed
    // must all be seen by the time the cursor returns to 0.
    let mut cursor = 0u64;
    let mut seen: HashSet<u64> = HashSet::new();
    let mut stable: HashSet<u64> = m.keys().copied().collect();
    for op in ops {
        match op {
            Op::Insert(k, v) => assert_eq!(ins(&mut t, k, v), m.insert(k, v)),
            Op::Upsert(k) => {
                match t.entry(mix(k), |e| e.0 == k) {
                    Entry::Occupied(mut o) => o.get_mut().1 += 1,
                    Entry::Vacant(v) => {
                        v.insert((k, 0));
                    }
                }
                m.entry(k).and_modify(|v| *v += 1).or_insert(0);
            }
            Op::Remove(k) => {
                assert_eq!(t.remove(mix(k), |e| e.0 == k).map(|e| e.1), m.remove(&k));
                stable.remove(&k);
            }
            Op::Get(k) => assert_eq!(t.get(mix(k), |e| e.0 == k).map(|e| e.1), m.get(&k).copied()),
            Op::RemoveRange(a, n) => {
                for k in a..a + n {
                    assert_eq!(t.remove(mix(k), |e| e.0 == k).map(|e| e.1), m.remove(&k));
                    stable.remove(&k);
                }
            }
            Op::ScanStep | Op::ScanRetainOdd => {
                if matches!(op, Op::ScanStep) {
                    cursor = t.scan(cursor, |e| {
                        seen.insert(e.0);
                    });
                } else {
                    cursor = t.scan_retain(cursor, |e| {
                        seen.insert(e.0);
                        if e.1 % 2 == 1 {
                            m.remove(&e.0);
                            stable.remove(&e.0);
                            false
                        } else {
                            e.1 = e.1.wrapping_add(2);
                            m.insert(e.0, e.1);
                            true
                        }
                    });
                }
                if cursor == 0 {
                    let missed: Vec<_> = stable.difference(&seen).collect();
                    assert!(missed.is_empty(), "scan missed {missed:?}");
                    seen.clear();
                    stable = m.keys().copied().collect();
                }
            }
        }
    }
    t.check_invariants();
    assert_eq!(t.len(), m.len());
    let mut all: Vec<E> = t.iter().copied().collect();
    all.sort();
    let mut want: Vec<E> = m.into_iter().collect();
    want.sort();
    assert_eq!(all, want);
    // A full scan with no mutation returns everything.
    let mut c = 0;
    let mut got = HashSet::new();
    loop {
        c = t.scan(c, |e| {
            got.insert(e.0);
        });
        if c == 0 {
            break;
        }
    }
    assert_eq!(got.len(), t.len());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: if cfg!(miri) { 2 } else { 64 }, ..ProptestConfig::default() })]
    #[test]
    fn model_small_keys(ops in proptest::collection::vec(op(300), 1..if cfg!(miri) { 200 } else { 2000 })) {
        run_model(ops);
    }

    #[test]
    fn model_many_keys(ops in proptest::collection::vec(op(5000), 1..if cfg!(miri) { 200 } else { 3000 })) {
        run_model(ops);
    }
}

/// Scan guarantee with heavy structural churn between scan calls: each
/// step inserts a batch (splits) or deletes one (merges).
#[test]
fn scan_guarantee_under_splits_and_merges() {
    let mut t = table();
    let rounds = if cfg!(miri) { 1 } else { 30 };
    let churn = sz(50);
    for round in 0..rounds {
        let base: u64 = 1_000_000 * (round + 1);
        let stable: Vec<u64> = (0..sz(300)).map(|i| base + i).collect();
        for &k in &stable {
            ins(&mut t, k, 0);
        }
        let mut seen = HashSet::new();
        let mut c = 0;
        let mut step = 0u64;
        loop {
            c = t.scan(c, |e| {
                seen.insert(e.0);
            });
            // churn: grow by 50 then shrink by 50, alternating in waves
            let wave = (step / 8).is_multiple_of(2);
            for i in 0..churn {
                let k = base + 500_000 + (step % 8) * churn + i;
                if wave {
                    ins(&mut t, k, 0);
                } else {
                    t.remove(mix(k), |e| e.0 == k);
                }
            }
            step += 1;
            if c == 0 {
                break;
            }
        }
        for k in &stable {
            assert!(seen.contains(k), "round {round}: missed {k}");
        }
        t.check_invariants();
    }
}

/// Steady churn at a fixed size (a cache at maxmemory): removals pull
/// stash entries back into the freed bucket slots. Every entry stays
/// reachable, the metadata stays consistent, and the load stays near a
/// fresh table's instead of drifting down as the stashes fill.
#[test]
fn churn_refills_buckets_from_the_stash() {
    let mut t = table();
    // Under Miri: a few segments, enough to exercise the stash refill.
    let n = if cfg!(miri) { 1_500 } else { 40_000 };
    let mut live: Vec<u64> = (0..n).collect();
    let mut model = std::collections::HashMap::new();
    for &k in &live {
        ins(&mut t, k, k);
        model.insert(k, k);
    }
    let fresh = t.len() as f64 / t.capacity() as f64;
    let mut r = 7u64;
    for (step, next) in (0..4 * n).zip(n..) {
        r = mix(r);
        let at = (r % live.len() as u64) as usize;
        let k = live.swap_remove(at);
        assert_eq!(
            t.remove(mix(k), |e| e.0 == k).map(|e| e.1),
            model.remove(&k)
        );
        ins(&mut t, next, next);
        model.insert(next, next);
        live.push(next);
        if step % (n / 4) == 0 {
            t.check_invariants();
        }
    }
    t.check_invariants();
    assert_eq!(t.len(), model.len());
    for (&k, &v) in &model {
        assert_eq!(t.get(mix(k), |e| e.0 == k).map(|e| e.1), Some(v));
    }
    let churned = t.len() as f64 / t.capacity() as f64;
    assert!(
        cfg!(miri) || churned > fresh - 0.03,
        "load under churn {churned:.3} fell from {fresh:.3}"
    );
}

#[test]
fn emptied_table_returns_to_its_starting_size() {
    let mut t = table();
    let fresh = t.allocated_bytes();
    let n = sz(20_000);
    for k in 0..n {
        ins(&mut t, k, k);
    }
    assert!(t.segment_count() > 8);
    for k in 0..n {
        assert_eq!(t.remove(mix(k), |e| e.0 == k), Some((k, k)));
    }
    t.check_invariants();
    assert_eq!(t.len(), 0);
    assert_eq!(t.allocated_bytes(), fresh);
    // Still a working table.
    ins(&mut t, 7, 70);
    assert_eq!(t.get(mix(7), |e| e.0 == 7), Some(&(7, 70)));
    t.check_invariants();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: if cfg!(miri) { 8 } else { 2000 }, ..ProptestConfig::default() })]
    /// The one-word stash filter agrees with the plain rule it replaces:
    /// probe the stash iff the count overflowed or a recorded fingerprint
    /// matches (bytes past the count are ignored whatever they hold).
    #[test]
    fn stash_filter_matches_plain_rule(
        sfp in proptest::array::uniform7(any::<u8>()),
        n in prop_oneof![0u8..=7, Just(u8::MAX)],
        fp in any::<u8>(),
    ) {
        let m = segment::Meta { sfp, nsfp: n, ..Default::default() };
        let plain = n == u8::MAX || sfp[..n as usize].contains(&fp);
        prop_assert_eq!(segment::stash_may_hold(&m, fp), plain);
    }
}

// ------------------------------------------- eviction before a split

#[derive(Clone, Debug)]
enum EvOp {
    Insert(u64, u64),
    InsertEvicting(u64, u64),
    InsertUniqueEvicting(u64, u64),
    Remove(u64),
    Get(u64),
}

fn ev_op(keys: u64) -> impl Strategy<Value = EvOp> {
    prop_oneof![
        2 => (0..keys, any::<u64>()).prop_map(|(k, v)| EvOp::Insert(k, v)),
        4 => (0..keys, any::<u64>()).prop_map(|(k, v)| EvOp::InsertEvicting(k, v)),
        2 => (0..keys, any::<u64>()).prop_map(|(k, v)| EvOp::InsertUniqueEvicting(k, v)),
        2 => (0..keys).prop_map(EvOp::Remove),
        1 => (0..keys).prop_map(EvOp::Get),
    ]
}

/// "Evictable" in the model tests: a value divisible by 3 (an expired key).
fn evictable(v: u64) -> bool {
    v.is_multiple_of(3)
}

/// The table against a HashMap when inserts may evict: only selected
/// entries leave, only when a segment would split, each reported once,
/// never the key being inserted, and everything else stays.
fn run_evict_model(ops: Vec<EvOp>) {
    let mut t = table();
    let mut m: HashMap<u64, u64> = HashMap::new();
    for op in ops {
        match op {
            EvOp::Insert(k, v) => assert_eq!(ins(&mut t, k, v), m.insert(k, v)),
            EvOp::InsertEvicting(k, v) | EvOp::InsertUniqueEvicting(k, v) => {
                let mut gone: Vec<E> = Vec::new();
                let segs = t.segment_count();
                let mut f = |e: &mut E| {
                    if evictable(e.1) {
                        gone.push(*e);
                        true
                    } else {
                        false
                    }
                };
                if matches!(op, EvOp::InsertEvicting(..)) {
                    let when = if v % 2 == 0 {
                        EvictBefore::Split
                    } else {
                        EvictBefore::Grow
                    };
                    let old = t.insert_evicting(mix(k), (k, v), |e| e.0 == k, &mut f, when);
                    assert_eq!(old.map(|e| e.1), m.get(&k).copied());
                } else if m.contains_key(&k) {
                    continue;
                } else {
                    let when = if v % 4 < 2 {
                        EvictBefore::Split
                    } else {
                        EvictBefore::Grow
                    };
                    assert_eq!(
                        *t.insert_unique_evicting(mix(k), (k, v), &mut f, when),
                        (k, v)
                    );
                }
                if !gone.is_empty() {
                    // Eviction happens instead of a split, not beside one
                    // (the retry may still split if the segment is full).
                    assert!(t.segment_count() <= segs + 1);
                }
                let mut seen = HashSet::new();
                for (gk, gv) in gone {
                    assert_ne!(gk, k, "the inserted key is never offered");
                    assert!(seen.insert(gk), "evicted twice: {gk}");
                    assert_eq!(m.remove(&gk), Some(gv));
                }
                m.insert(k, v);
            }
            EvOp::Remove(k) => {
                assert_eq!(t.remove(mix(k), |e| e.0 == k).map(|e| e.1), m.remove(&k))
            }
            EvOp::Get(k) => {
                assert_eq!(t.get(mix(k), |e| e.0 == k).map(|e| e.1), m.get(&k).copied())
            }
        }
    }
    t.check_invariants();
    assert_eq!(t.len(), m.len());
    let mut all: Vec<E> = t.iter().copied().collect();
    all.sort();
    let mut want: Vec<E> = m.into_iter().collect();
    want.sort();
    assert_eq!(all, want);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: if cfg!(miri) { 2 } else { 64 }, ..ProptestConfig::default() })]
    #[test]
    fn evict_before_split_model(ops in proptest::collection::vec(ev_op(3000), 1..if cfg!(miri) { 200 } else { 3000 })) {
        run_evict_model(ops);
    }
}

/// A stream of inserts where every entry older than a window counts as
/// expired: with the hook the table stays near the size of the window;
/// without it, it holds every entry ever inserted.
#[test]
fn expired_entries_never_grow_the_table() {
    let n = sz(60_000);
    let window = 1_000u64;
    for when in [EvictBefore::Split, EvictBefore::Grow] {
        let mut t = table();
        let mut plain = table();
        for i in 0..n {
            let mut f = |e: &mut E| e.1 + window < i;
            t.insert_unique_evicting(mix(i), (i, i), &mut f, when);
            if i < 4 * window {
                plain.insert_unique(mix(i), (i, i));
            }
        }
        t.check_invariants();
        // A table holding 4x the live window is the bound.
        assert!(
            t.allocated_bytes() <= plain.allocated_bytes(),
            "{} > {}",
            t.allocated_bytes(),
            plain.allocated_bytes()
        );
        assert!((t.len() as u64) < 4 * window);
        for i in n - window..n {
            assert_eq!(t.get(mix(i), |e| e.0 == i), Some(&(i, i)));
        }
        if when == EvictBefore::Grow {
            // Rows are not added for expired entries either.
            assert!((t.len() as u64) < 2 * window, "{}", t.len());
        }
    }
}
