//! HGET/HEXISTS-style lookups on a 500-field hash (8-byte fields, 60-byte
//! values): the indexed listpack (small encoding) against the open-addressing
//! map (large encoding) and a plain linear listpack scan (what Redis does).
//!
//! `cargo bench -p collections --bench small_lookup`
//!
//! Each iteration looks up all 500 fields (hit) or 500 absent fields (miss);
//! criterion's throughput line gives lookups per second.

use collections::{CompactMap, Listpack, ListpackHash};
use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};

const N: usize = 500;

fn fields(prefix: char) -> Vec<Vec<u8>> {
    (0..N)
        .map(|i| format!("{prefix}{i:07}").into_bytes())
        .collect()
}

fn bench(c: &mut Criterion) {
    let hit = fields('f');
    let miss = fields('g');
    let value = [b'v'; 60];
    let mut small = ListpackHash::new();
    let mut large = CompactMap::new();
    let mut plain = Listpack::new();
    for f in &hit {
        small.insert(f, &value);
        large.insert(f, &value);
        plain.push_back(f);
        plain.push_back(&value);
    }
    assert!(small.has_index());
    eprintln!(
        "heap bytes: listpack+index {} (listpack {}), CompactMap {}, plain listpack {}",
        small.heap_bytes(),
        small.listpack().heap_bytes(),
        large.heap_bytes(),
        plain.heap_bytes()
    );
    for (name, keys) in [("hit", &hit), ("miss", &miss)] {
        let mut g = c.benchmark_group(format!("small_lookup/{name}"));
        g.throughput(Throughput::Elements(N as u64));
        g.bench_function("listpack_indexed", |b| {
            b.iter(|| {
                for k in keys.iter() {
                    black_box(small.get(black_box(k)));
                }
            })
        });
        g.bench_function("compact_map", |b| {
            b.iter(|| {
                for k in keys.iter() {
                    black_box(large.get(black_box(k)));
                }
            })
        });
        g.bench_function("listpack_linear", |b| {
            b.iter(|| {
                for k in keys.iter() {
                    let v = plain
                        .find(black_box(k), 0, 2)
                        .map(|i| plain.get(i as isize + 1));
                    black_box(v);
                }
            })
        });
        g.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).warm_up_time(std::time::Duration::from_millis(500)).measurement_time(std::time::Duration::from_secs(2));
    targets = bench
}
criterion_main!(benches);
