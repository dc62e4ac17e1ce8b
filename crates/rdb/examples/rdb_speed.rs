//! Encode and decode speed of a mixed data set: MB/s of file and keys/s.
//!
//! ```text
//! cargo run --release -p rdb --example rdb_speed -- [KEYS] [--no-compression] [--out FILE]
//! cargo run --release -p rdb --example rdb_speed -- --in FILE
//! ```
//!
//! The data set (deterministic): 70% strings (integers, short text, 100 to
//! 1000 byte values), 10% lists (5 to 2000 elements), 8% hashes (small
//! listpacks and 1000-field tables), 6% sets (intsets, small string sets,
//! 500-member tables), 6% sorted sets (listpacks and 300-member
//! skiplists), a third of the keys with a TTL. Each phase runs three times
//! and the best is printed. `--out FILE` also writes the file, so the same
//! data can be loaded by redis-server for a side-by-side figure (e.g.
//! `DEBUG RELOAD` timing, or `SAVE` after loading). `--in FILE` only
//! decodes an existing file (one saved by redis-server, say).

use std::time::Instant;

use collections::value::list::End;
use collections::{HashValue, Limits, ListValue, SetValue, ZsetValue};
use rdb::{EntryMeta, Item, ReadOptions, Reader, WriteOptions, Writer};
use store::CompactValue;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Text of `min + below(span)` bytes.
fn text(r: &mut Rng, min: usize, span: u64) -> Vec<u8> {
    let n = min + r.below(span) as usize;
    const WORDS: [&str; 8] = [
        "petrel ", "redis ", "value ", "cache ", "data ", "node ", "slot ", "key ",
    ];
    let mut v = Vec::with_capacity(n + 8);
    while v.len() < n {
        v.extend_from_slice(WORDS[r.below(8) as usize].as_bytes());
        if r.below(4) == 0 {
            v.extend_from_slice(r.below(100000).to_string().as_bytes());
        }
    }
    v.truncate(n);
    v
}

fn value(r: &mut Rng, lim: &Limits) -> CompactValue {
    match r.below(100) {
        0..=24 => CompactValue::from_int(r.below(1 << 40) as i64 - (1 << 39)),
        25..=49 => CompactValue::from_bytes(&text(r, 10, 30)),
        50..=69 => CompactValue::from_bytes(&text(r, 100, 900)),
        70..=79 => {
            let mut l = ListValue::new(lim);
            let n = if r.below(5) == 0 {
                2000
            } else {
                5 + r.below(60)
            };
            for i in 0..n {
                if i % 3 == 0 {
                    l.push(End::Tail, r.below(100000).to_string().as_bytes());
                } else {
                    l.push(End::Tail, &text(r, 8, 24));
                }
            }
            CompactValue::from_list(l)
        }
        80..=87 => {
            let mut h = HashValue::new();
            let n = if r.below(8) == 0 {
                1000
            } else {
                3 + r.below(30)
            };
            for i in 0..n {
                h.insert(lim, format!("field:{i}").as_bytes(), &text(r, 4, 20));
            }
            CompactValue::from_hash(h)
        }
        88..=93 => {
            let mut s = SetValue::new();
            match r.below(3) {
                0 => {
                    for _ in 0..(5 + r.below(100)) {
                        s.insert(r.below(1_000_000).to_string().as_bytes(), lim);
                    }
                }
                1 => {
                    for _ in 0..(3 + r.below(40)) {
                        s.insert(&text(r, 5, 10), lim);
                    }
                }
                _ => {
                    for i in 0..500 {
                        s.insert(format!("member:{i}:{}", r.below(1000)).as_bytes(), lim);
                    }
                }
            }
            CompactValue::from_set(s)
        }
        _ => {
            let n = if r.below(4) == 0 {
                300
            } else {
                3 + r.below(60)
            };
            let mut z = ZsetValue::new_for(8, lim);
            for i in 0..n {
                let score = if i % 2 == 0 {
                    r.below(1000) as f64
                } else {
                    r.below(1 << 20) as f64 / 7.0
                };
                z.insert(format!("m:{i}").as_bytes(), score, lim);
            }
            CompactValue::from_zset(z)
        }
    }
}

/// Decodes `file` three times; prints the best.
fn decode(file: &[u8], lim: Limits) -> usize {
    let mb = file.len() as f64 / 1e6;
    let mut best_dec = f64::MAX;
    let mut keys = 0;
    for _ in 0..3 {
        let t = Instant::now();
        let mut rd = Reader::new(
            file,
            ReadOptions {
                limits: lim,
                input_len: Some(file.len() as u64),
                ..ReadOptions::default()
            },
        )
        .unwrap();
        keys = 0;
        loop {
            match rd.read_item().unwrap() {
                Item::Entry(e) => {
                    keys += 1;
                    drop(e);
                }
                Item::Eof { .. } => break,
                _ => {}
            }
        }
        best_dec = best_dec.min(t.elapsed().as_secs_f64());
    }
    println!(
        "decode: {:.1} MB in {:.3} s = {:.0} MB/s, {:.0} keys/s (full validation, values built and dropped)",
        mb,
        best_dec,
        mb / best_dec,
        keys as f64 / best_dec
    );
    keys
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(i) = args.iter().position(|a| a == "--in") {
        let file = std::fs::read(&args[i + 1]).unwrap();
        let n = decode(&file, Limits::default());
        eprintln!("{n} keys");
        return;
    }
    let keys: usize = args
        .iter()
        .find(|a| !a.starts_with("--") && a.parse::<usize>().is_ok())
        .map(|a| a.parse().unwrap())
        .unwrap_or(200_000);
    let compression = !args.iter().any(|a| a == "--no-compression");
    let out_path = args
        .iter()
        .position(|a| a == "--out")
        .map(|i| args[i + 1].clone());
    let lim = Limits::default();

    let mut r = Rng(0x2545F4914F6CDD1D);
    let t = Instant::now();
    let data: Vec<(Vec<u8>, CompactValue, Option<i64>)> = (0..keys)
        .map(|i| {
            let key = format!("key:{i:010}").into_bytes();
            let v = value(&mut r, &lim);
            let ttl = (i % 3 == 0).then(|| 4_102_444_800_000 + i as i64);
            (key, v, ttl)
        })
        .collect();
    eprintln!("built {keys} keys in {:.2?}", t.elapsed());
    let expires = data.iter().filter(|d| d.2.is_some()).count() as u64;

    let opts = WriteOptions {
        compression,
        ..WriteOptions::default()
    };
    let encode = || {
        let mut w = Writer::new(Vec::with_capacity(64 << 20), opts).unwrap();
        w.aux(b"redis-ver", b"7.0.15").unwrap();
        w.aux_int(b"redis-bits", 64).unwrap();
        w.select_db(0).unwrap();
        w.resize_db(keys as u64, expires).unwrap();
        for (k, v, ttl) in &data {
            w.entry(
                k,
                v,
                EntryMeta {
                    expire_ms: *ttl,
                    ..EntryMeta::default()
                },
            )
            .unwrap();
        }
        w.finish().unwrap().0
    };
    let mut file = Vec::new();
    let mut best_enc = f64::MAX;
    for _ in 0..3 {
        let t = Instant::now();
        file = encode();
        best_enc = best_enc.min(t.elapsed().as_secs_f64());
    }
    let mb = file.len() as f64 / 1e6;
    println!(
        "encode: {:.1} MB in {:.3} s = {:.0} MB/s, {:.0} keys/s (rdbcompression {})",
        mb,
        best_enc,
        mb / best_enc,
        keys as f64 / best_enc,
        if compression { "yes" } else { "no" }
    );

    assert_eq!(decode(&file, lim), keys);
    if let Some(p) = out_path {
        std::fs::write(&p, &file).unwrap();
        eprintln!("wrote {p}");
    }
}
