//! Prints bytes per key for DEBUG POPULATE-shaped data.
//! `cargo run --release -p store --example populate_mem -- 20000000 [ttl]`

use store::{Config, Key, Keyspace};

#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn rss() -> usize {
    let s = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: usize = s.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: u64 = args.get(1).map_or(1_000_000, |s| s.parse().unwrap());
    let ttl = args.get(2).is_some();
    let ks = Keyspace::new(Config::default());
    let base = rss();
    let now = 1_800_000_000_000;
    let t = std::time::Instant::now();
    ks.populate(0, n, b"key", 0, now);
    let el = t.elapsed();
    if ttl {
        for i in 0..n {
            let k = format!("key:{i}");
            let key = Key::new(k.as_bytes());
            ks.lock(&key)
                .set_expire(0, &key, Some(now + 3_600_000), now);
        }
    }
    let after = rss();
    println!(
        "keys={} populate={:.2}s rss_delta={} bytes/key={:.1} table_bytes/key={:.1} ttl={}",
        ks.dbsize(0),
        el.as_secs_f64(),
        after - base,
        (after - base) as f64 / n as f64,
        ks.table_bytes() as f64 / n as f64,
        ttl
    );
}
