//! The same model checks with the production segment geometry (unit tests
//! use tiny segments). Sizes are moderate so the suite stays quick.
use dash::DashTable;
use std::collections::{HashMap, HashSet};

type E = (u64, u64);

fn mix(k: u64) -> u64 {
    let mut z = k.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn n() -> u64 {
    if cfg!(miri) {
        400
    } else {
        200_000
    }
}

#[test]
fn grow_scan_shrink() {
    let mut t: DashTable<E, _> = DashTable::with_hasher(|e: &E| mix(e.0));
    let mut m = HashMap::new();
    let n = n();
    for k in 0..n {
        assert!(t.insert(mix(k), (k, k), |e| e.0 == k).is_none());
        m.insert(k, k);
    }
    t.check_invariants();
    assert!(t.load_factor() > 0.7, "load {}", t.load_factor());
    // A scan with inserts and removals between calls still sees every key
    // that stays present for the whole scan (keys < n/2 are never touched).
    let mut seen = HashSet::new();
    let mut c = 0;
    let mut extra = n;
    loop {
        c = t.scan(c, |e| {
            seen.insert(e.0);
        });
        for _ in 0..3 {
            t.insert(mix(extra), (extra, 0), |e| e.0 == extra);
            let victim = n / 2 + mix(extra) % (n / 2);
            t.remove(mix(victim), |e| e.0 == victim);
            m.remove(&victim);
            m.insert(extra, 0);
            extra += 1;
        }
        if c == 0 {
            break;
        }
    }
    for k in 0..n / 2 {
        assert!(seen.contains(&k), "scan missed {k}");
    }
    t.check_invariants();
    assert_eq!(t.len(), m.len());
    for (&k, &v) in &m {
        assert_eq!(t.get(mix(k), |e| e.0 == k), Some(&(k, v)));
    }
    // Mass delete returns memory.
    let peak = t.allocated_bytes();
    let keys: Vec<u64> = m.keys().copied().collect();
    for k in keys {
        assert!(t.remove(mix(k), |e| e.0 == k).is_some());
    }
    t.check_invariants();
    assert!(t.is_empty());
    assert_eq!(t.segment_count(), 1);
    assert_eq!(t.capacity(), 0, "all rows freed");
    if !cfg!(miri) {
        let now = t.allocated_bytes();
        assert!(now * 20 < peak, "{now} vs {peak}");
    }
}

#[test]
fn scan_retain_expires() {
    let mut t: DashTable<E, _> = DashTable::with_hasher(|e: &E| mix(e.0));
    let n = n();
    for k in 0..n {
        t.insert_unique(mix(k), (k, k % 4));
    }
    let mut c = 0;
    loop {
        c = t.scan_retain(c, |e| e.1 != 0);
        if c == 0 {
            break;
        }
    }
    t.check_invariants();
    assert_eq!(t.len() as u64, n - n.div_ceil(4));
    assert!(t.iter().all(|e| e.1 != 0));
}
