//! dash vs hashbrown::HashMap holding the same 32-byte entries.
//!
//! cargo bench -p dash --bench vs_hashbrown            (1M and 10M)
//! DASH_BENCH_SIZES=1 cargo bench -p dash --bench vs_hashbrown   (1M only)
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use std::hint::black_box;
use std::time::{Duration, Instant};

#[path = "../examples/common/mod.rs"]
mod common;
use common::*;

const BATCH: u64 = 10_000;

fn sizes() -> Vec<u64> {
    std::env::var("DASH_BENCH_SIZES")
        .unwrap_or_else(|_| "1,10".into())
        .split(',')
        .map(|s| s.trim().parse::<u64>().expect("sizes in millions") * 1_000_000)
        .collect()
}

/// Pseudo-random probe order over 0..n (different for each batch).
fn probes(n: u64, salt: u64) -> Vec<u64> {
    (0..BATCH)
        .map(|i| mix(i ^ salt.wrapping_mul(0x9E37_79B9)) % n)
        .collect()
}

fn bench(c: &mut Criterion) {
    for n in sizes() {
        let mut g = c.benchmark_group(format!("{}M", n / 1_000_000));
        g.sample_size(10)
            .measurement_time(Duration::from_secs(3))
            .warm_up_time(Duration::from_millis(500));

        // Insert n entries into an empty table (not pre-sized).
        g.throughput(Throughput::Elements(n));
        g.bench_function("insert/dash", |b| {
            b.iter_batched(
                new_dash,
                |mut t| {
                    for i in 0..n {
                        let k = key(i);
                        t.insert(hash_key(&k), (k, [i, i]), |e| e.0 == k);
                    }
                    t
                },
                BatchSize::PerIteration,
            )
        });
        g.bench_function("insert/hashbrown", |b| {
            b.iter_batched(
                hashbrown::HashMap::<Key, [u64; 2], BuildPass>::default,
                |mut t| {
                    for i in 0..n {
                        t.insert(key(i), [i, i]);
                    }
                    t
                },
                BatchSize::PerIteration,
            )
        });

        let (mut d, mut h) = populate(n);
        g.throughput(Throughput::Elements(BATCH));
        let mut salt = 0u64;
        g.bench_function("get_hit/dash", |b| {
            b.iter_batched(
                || {
                    salt += 1;
                    probes(n, salt)
                },
                |p| {
                    for i in p {
                        let k = key(i);
                        black_box(d.get(hash_key(&k), |e| e.0 == k));
                    }
                },
                BatchSize::SmallInput,
            )
        });
        g.bench_function("get_hit/hashbrown", |b| {
            b.iter_batched(
                || {
                    salt += 1;
                    probes(n, salt)
                },
                |p| {
                    for i in p {
                        black_box(h.get(&key(i)));
                    }
                },
                BatchSize::SmallInput,
            )
        });
        g.bench_function("get_miss/dash", |b| {
            b.iter_batched(
                || {
                    salt += 1;
                    probes(n, salt)
                },
                |p| {
                    for i in p {
                        let k = key(i + n);
                        black_box(d.get(hash_key(&k), |e| e.0 == k));
                    }
                },
                BatchSize::SmallInput,
            )
        });
        g.bench_function("get_miss/hashbrown", |b| {
            b.iter_batched(
                || {
                    salt += 1;
                    probes(n, salt)
                },
                |p| {
                    for i in p {
                        black_box(h.get(&key(i + n)));
                    }
                },
                BatchSize::SmallInput,
            )
        });
        // Remove a batch of distinct keys (timed), then put them back (untimed).
        let batch = |salt: u64| -> Vec<u64> {
            let mut v: Vec<u64> = (0..BATCH)
                .map(|i| (salt * BATCH * 7 + i * 97) % n)
                .collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        g.bench_function("remove/dash", |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for it in 0..iters {
                    let keys = batch(it);
                    let t0 = Instant::now();
                    for &i in &keys {
                        let k = key(i);
                        black_box(d.remove(hash_key(&k), |e| e.0 == k));
                    }
                    total += t0.elapsed().mul_f64(BATCH as f64 / keys.len() as f64);
                    for &i in &keys {
                        let k = key(i);
                        d.insert_unique(hash_key(&k), (k, [i, i]));
                    }
                }
                total
            })
        });
        g.bench_function("remove/hashbrown", |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for it in 0..iters {
                    let keys = batch(it);
                    let t0 = Instant::now();
                    for &i in &keys {
                        black_box(h.remove(&key(i)));
                    }
                    total += t0.elapsed().mul_f64(BATCH as f64 / keys.len() as f64);
                    for &i in &keys {
                        h.insert(key(i), [i, i]);
                    }
                }
                total
            })
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
