//! CPU cost of the keyspace paths that key size tracking hooks (issue 7):
//! SET (insert replacing), GET (read lookup), LPUSH, SADD and HSET-like
//! in-place edits, through the partition API, without network or parsing.
//! Prints the best of several rounds in ns per operation, so other load on
//! the machine inflates figures less than a throughput run.
//!
//!     cargo run --release -p store --example tracking_cost
//!
//! Uses only APIs that predate tracking, so the same file measures a build
//! without it.

use std::hint::black_box;
use std::time::Instant;

use collections::value::list::End;
use collections::{HashValue, Limits, ListValue, SetValue};
use store::{CompactValue, Key, Keyspace};

const NOW: u64 = 1_800_000_000_000;
const KEYS: usize = 100_000;
const OPS: usize = 2_000_000;
const ROUNDS: usize = 7;

fn best(name: &str, mut f: impl FnMut()) {
    let mut ns = f64::MAX;
    for _ in 0..ROUNDS {
        let t = Instant::now();
        f();
        ns = ns.min(t.elapsed().as_nanos() as f64 / OPS as f64);
    }
    println!("{name:<28} {ns:>7.1} ns/op");
}

fn main() {
    let ks = Keyspace::default();
    let lim = Limits::default();
    let names: Vec<Vec<u8>> = (0..KEYS)
        .map(|i| format!("key:{i:08}").into_bytes())
        .collect();
    let keys: Vec<Key> = names.iter().map(|n| Key::new(n)).collect();
    best("SET 3-byte value", || {
        for i in 0..OPS {
            let k = &keys[i % KEYS];
            ks.lock(k)
                .insert(0, k, CompactValue::from_bytes(b"xyz"), None, NOW);
        }
    });
    best("GET", || {
        for i in 0..OPS {
            let k = &keys[i % KEYS];
            let mut g = ks.lock(k);
            black_box(g.get_read(0, k, NOW).map(|e| e.value().str_len()));
        }
    });
    let lk: Vec<Vec<u8>> = (0..KEYS)
        .map(|i| format!("list:{i}").into_bytes())
        .collect();
    let lkeys: Vec<Key> = lk.iter().map(|n| Key::new(n)).collect();
    for k in &lkeys {
        ks.lock(k).insert(
            0,
            k,
            CompactValue::from_list(ListValue::new(&lim)),
            None,
            NOW,
        );
    }
    best("LPUSH on 100k small lists", || {
        for i in 0..OPS {
            let k = &lkeys[i % KEYS];
            let mut g = ks.lock(k);
            let l = g.get(0, k, NOW).unwrap().list_mut().unwrap();
            l.push(End::Head, b"element");
            if l.len() > 20 {
                l.pop_n(End::Tail, 10);
            }
        }
    });
    let one = Key::new(b"biglist");
    ks.lock(&one).insert(
        0,
        &one,
        CompactValue::from_list(ListValue::new(&lim)),
        None,
        NOW,
    );
    best("LPUSH on one growing list", || {
        for _ in 0..OPS {
            let mut g = ks.lock(&one);
            let l = g.get(0, &one, NOW).unwrap().list_mut().unwrap();
            l.push(End::Head, b"element");
        }
    });
    let sk = Key::new(b"set");
    ks.lock(&sk)
        .insert(0, &sk, CompactValue::from_set(SetValue::new()), None, NOW);
    best("SADD existing member", || {
        for i in 0..OPS {
            let mut g = ks.lock(&sk);
            let s = g.get(0, &sk, NOW).unwrap().set_mut().unwrap();
            black_box(s.insert(&names[i % 64], &lim));
        }
    });
    let hk = Key::new(b"hash");
    ks.lock(&hk)
        .insert(0, &hk, CompactValue::from_hash(HashValue::new()), None, NOW);
    best("HSET existing field", || {
        for i in 0..OPS {
            let mut g = ks.lock(&hk);
            let mut h = g.get(0, &hk, NOW).unwrap().hash_mut().unwrap();
            black_box(h.insert(&lim, &names[i % 64], b"value"));
        }
    });
}
