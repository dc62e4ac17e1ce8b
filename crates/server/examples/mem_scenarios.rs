//! Memory scenarios of issue 23, against any Redis-compatible server.
//!
//! **`ttl`**: a writer adds keys with a short TTL (`--rate` keys/s, PX
//! `--ttl-ms`, pipelined) for `--secs` seconds while the server's active
//! expiry is slowed (`CONFIG SET hz 1`). Each second it prints used_memory
//! and DBSIZE. Then it measures the live set: FLUSHALL, and the number of
//! keys alive at any time (`rate * ttl`) written without TTL, same shapes.
//! The summary gives the steady used_memory (max over the second half of
//! the run, and after the first minute) against that live-set size.
//!
//! **`frag`**: fills `--keys` string keys with values of mixed sizes
//! (16..=600 bytes) plus large hashes, sets and sorted sets, then deletes
//! or overwrites keys at random until `allocator_frag_ratio` > `--ratio`
//! (1.4). It then measures GET latency back to back on another connection
//! for `--probe-secs` with `activedefrag no`, turns `activedefrag yes` on
//! (defaults otherwise) and prints the ratio, RSS and defrag counters
//! each second for `--secs` (and how long those two INFO calls took), with
//! the same latency probe running; the percentiles of both windows are
//! printed at the end, whole and second by second (with the number of
//! GETs over 0.5 and 2 ms), so a tail can be placed in time.
//!
//! **`frag --big-collections`**: the fragmented data is big collections
//! instead: `--keys` elements in hashes, sets and sorted sets of 2,000
//! elements each (a third of each type, all in their big encodings), set
//! and sorted-set members of 16..=300 bytes (each its own block), hash
//! values of 16..=600 bytes; then elements are removed at random (HDEL,
//! SREM, ZREM, 9 in 10) or added short (1 in 10) until the ratio passes
//! `--ratio`; the windows that follow are the same.
//!
//! ```sh
//! cargo run --release -p server --example mem_scenarios -- ttl --port 7000 --secs 90
//! cargo run --release -p server --example mem_scenarios -- frag --port 7000 --keys 2000000
//! ```

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

struct Conn {
    w: TcpStream,
    r: BufReader<TcpStream>,
}

#[derive(Debug)]
enum Reply {
    Ok,
    Err(String),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    /// An array's elements (read and dropped).
    Array,
}

impl Conn {
    fn new(port: u16) -> Conn {
        let w = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        w.set_nodelay(true).unwrap();
        let r = BufReader::with_capacity(1 << 16, w.try_clone().unwrap());
        Conn { w, r }
    }

    fn encode(out: &mut Vec<u8>, args: &[&[u8]]) {
        out.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
        for a in args {
            out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            out.extend_from_slice(a);
            out.extend_from_slice(b"\r\n");
        }
    }

    fn read(&mut self) -> Reply {
        let mut line = String::new();
        self.r.read_line(&mut line).expect("read");
        let body = line[1..].trim_end().to_string();
        match line.as_bytes()[0] {
            b'+' => Reply::Ok,
            b'-' => Reply::Err(body),
            b':' => Reply::Int(body.parse().unwrap()),
            b'$' => {
                let n: i64 = body.parse().unwrap();
                if n < 0 {
                    return Reply::Bulk(None);
                }
                let mut b = vec![0; n as usize + 2];
                self.r.read_exact(&mut b).unwrap();
                b.truncate(n as usize);
                Reply::Bulk(Some(b))
            }
            b'*' => {
                let n: i64 = body.parse().unwrap();
                for _ in 0..n.max(0) {
                    self.read();
                }
                Reply::Array
            }
            c => panic!("unexpected reply type {}", c as char),
        }
    }

    fn cmd(&mut self, args: &[&[u8]]) -> Reply {
        let mut out = Vec::new();
        Conn::encode(&mut out, args);
        self.w.write_all(&out).unwrap();
        self.read()
    }

    /// Sends a batch of encoded commands and reads `n` replies.
    fn pipeline(&mut self, buf: &[u8], n: usize) {
        self.w.write_all(buf).unwrap();
        for _ in 0..n {
            if let Reply::Err(e) = self.read() {
                panic!("server error: {e}");
            }
        }
    }

    fn info(&mut self, section: &str) -> String {
        match self.cmd(&[b"INFO", section.as_bytes()]) {
            Reply::Bulk(Some(b)) => String::from_utf8_lossy(&b).into_owned(),
            r => panic!("INFO: {r:?}"),
        }
    }

    fn field(&mut self, section: &str, name: &str) -> f64 {
        let text = self.info(section);
        field_of(&text, name)
    }

    fn int(&mut self, args: &[&[u8]]) -> i64 {
        match self.cmd(args) {
            Reply::Int(i) => i,
            r => panic!("{r:?}"),
        }
    }
}

fn field_of(info: &str, name: &str) -> f64 {
    info.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(':')))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(f64::NAN)
}

fn arg(args: &[String], name: &str, default: &str) -> String {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
        .unwrap_or_else(|| default.to_string())
}

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

fn mb(b: f64) -> f64 {
    b / 1048576.0
}

// ------------------------------------------------------------------ ttl

fn ttl(args: &[String]) {
    let port: u16 = arg(args, "--port", "6379").parse().unwrap();
    let secs: u64 = arg(args, "--secs", "90").parse().unwrap();
    let rate: u64 = arg(args, "--rate", "100000").parse().unwrap();
    let ttl_ms: u64 = arg(args, "--ttl-ms", "1000").parse().unwrap();
    let vsize: usize = arg(args, "--value-size", "16").parse().unwrap();
    let mut c = Conn::new(port);
    let mut mon = Conn::new(port);
    c.cmd(&[b"FLUSHALL"]);
    c.cmd(&[b"CONFIG", b"SET", b"hz", b"1"]);
    let base = mon.field("memory", "used_memory");
    let value = vec![b'v'; vsize];
    let ttl_s = ttl_ms.to_string();
    let batch = 1000u64;
    let start = Instant::now();
    let mut written = 0u64;
    let mut skipped = 0u64;
    let mut next_report = 1u64;
    let mut samples: Vec<(u64, f64, i64)> = Vec::new();
    let mut buf = Vec::with_capacity(64 * batch as usize);
    println!("t_s used_memory_mb dbsize expired_keys");
    loop {
        let el = start.elapsed();
        if el.as_secs() >= secs {
            break;
        }
        let due = (el.as_secs_f64() * rate as f64) as u64;
        // A writer that fell behind (the machine did not run it) skips
        // the missed writes instead of sending them in a burst: a burst
        // would make that many more keys truly alive at once.
        if due > written + 2 * batch {
            skipped += due - batch - written;
            written = due - batch;
        }
        if written + batch <= due {
            buf.clear();
            for i in written..written + batch {
                let k = format!("ttl:{i}");
                Conn::encode(
                    &mut buf,
                    &[b"SET", k.as_bytes(), &value, b"PX", ttl_s.as_bytes()],
                );
            }
            c.pipeline(&buf, batch as usize);
            written += batch;
        } else {
            std::thread::sleep(Duration::from_micros(500));
        }
        if el.as_secs() >= next_report {
            let used = mon.field("memory", "used_memory") - base;
            let n = mon.int(&[b"DBSIZE"]);
            let exp = mon.field("stats", "expired_keys");
            println!("{next_report} {:.1} {n} {exp}", mb(used));
            samples.push((next_report, used, n));
            next_report += 1;
        }
    }
    let sent = written - skipped;
    let wrote_rate = sent as f64 / start.elapsed().as_secs_f64();
    // The live set: the keys alive at any time, without TTL.
    c.cmd(&[b"FLUSHALL"]);
    std::thread::sleep(Duration::from_millis(500));
    let base2 = mon.field("memory", "used_memory");
    let live = (wrote_rate * ttl_ms as f64 / 1000.0) as u64;
    let mut i = 0;
    while i < live {
        buf.clear();
        let n = batch.min(live - i);
        for j in i..i + n {
            let k = format!("ttl:{j}");
            Conn::encode(&mut buf, &[b"SET", k.as_bytes(), &value]);
        }
        c.pipeline(&buf, n as usize);
        i += n;
    }
    let live_mem = mon.field("memory", "used_memory") - base2;
    c.cmd(&[b"FLUSHALL"]);
    let half = samples.len() / 2;
    let max_after = |from: usize| {
        samples[from.min(samples.len())..]
            .iter()
            .map(|s| s.1)
            .fold(0.0, f64::max)
    };
    let max_half = max_after(half);
    let max_after_60 = max_after(60);
    let at_60 = samples.get(59).map(|s| s.1).unwrap_or(f64::NAN);
    let last = samples.last().map(|s| s.1).unwrap_or(f64::NAN);
    println!(
        "wrote {sent} keys ({wrote_rate:.0}/s; {skipped} skipped while the writer lagged), live set {live} keys = {:.1} MB",
        mb(live_mem)
    );
    println!(
        "used_memory: max over 2nd half {:.1} MB ({:.2}x live), at 60 s {:.1} MB, max after 60 s {:.1} MB, last {:.1} MB ({:.2}x live)",
        mb(max_half),
        max_half / live_mem,
        mb(at_60),
        mb(max_after_60),
        mb(last),
        last / live_mem
    );
}

// ----------------------------------------------------------------- frag

/// One GET of the probe: when it started (ms into the window) and how
/// long it took (microseconds).
#[derive(Clone, Copy)]
struct Sample {
    at_ms: u32,
    us: u32,
}

/// GET latencies on its own connection until `stop`.
fn probe(port: u16, key: Vec<u8>, stop: Arc<AtomicBool>, out: Arc<Mutex<Vec<Sample>>>) {
    let mut c = Conn::new(port);
    let mut local = Vec::with_capacity(1 << 20);
    let start = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        let t = Instant::now();
        c.cmd(&[b"GET", &key]);
        local.push(Sample {
            at_ms: t.duration_since(start).as_millis() as u32,
            us: t.elapsed().as_micros().min(u32::MAX as u128) as u32,
        });
    }
    out.lock().unwrap().extend(local);
}

fn percentiles(samples: &[Sample]) -> String {
    let mut v: Vec<u32> = samples.iter().map(|s| s.us).collect();
    if v.is_empty() {
        return "no samples".into();
    }
    v.sort_unstable();
    let p = |q: f64| v[((v.len() as f64 * q) as usize).min(v.len() - 1)];
    format!(
        "n={} p50={}us p99={}us p99.9={}us p99.99={}us max={}us",
        v.len(),
        p(0.5),
        p(0.99),
        p(0.999),
        p(0.9999),
        v[v.len() - 1]
    )
}

/// The probe's figures second by second (where the tail comes from).
fn per_second(samples: &[Sample]) {
    let secs = samples.last().map_or(0, |s| s.at_ms / 1000 + 1);
    for s in 0..secs {
        let w: Vec<Sample> = samples
            .iter()
            .filter(|x| x.at_ms / 1000 == s)
            .copied()
            .collect();
        let over = |t: u32| w.iter().filter(|x| x.us > t).count();
        println!(
            "  second {}: {} (>0.5ms: {}, >2ms: {})",
            s + 1,
            percentiles(&w),
            over(500),
            over(2000)
        );
    }
}

fn probe_window(port: u16, secs: u64, mut each_second: impl FnMut(u64)) -> Vec<Sample> {
    let stop = Arc::new(AtomicBool::new(false));
    let out = Arc::new(Mutex::new(Vec::new()));
    let h = {
        let (stop, out) = (stop.clone(), out.clone());
        std::thread::spawn(move || probe(port, b"probe:key".to_vec(), stop, out))
    };
    for s in 1..=secs {
        std::thread::sleep(Duration::from_secs(1));
        each_second(s);
    }
    stop.store(true, Ordering::Relaxed);
    h.join().unwrap();
    let v = std::mem::take(&mut *out.lock().unwrap());
    v
}

/// Member `e` of big collection `k` in the `--big-collections` variant:
/// 16..=300 bytes, its length a function of (k, e) so a deleter can name
/// it again.
fn big_member(k: u64, e: u64) -> Vec<u8> {
    let mut x = (k << 32 | e).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^= x >> 29;
    let n = 16 + (x % 285) as usize;
    let mut m = format!("m:{e}:").into_bytes();
    m.resize(n, b'a' + (x >> 40) as u8 % 26);
    m
}

/// The `--big-collections` fill: `elems` elements in collections of
/// 2,000, hash / set / sorted set in turn. Returns the collections.
fn fill_big(c: &mut Conn, elems: u64, rng: &mut Rng, val: impl Fn(&mut Rng) -> Vec<u8>) -> u64 {
    let colls = (elems / 2000).max(3);
    let mut buf = Vec::new();
    for k in 0..colls {
        buf.clear();
        let name = format!("big:{k}");
        for e in 0..2000u64 {
            let m = big_member(k, e);
            match k % 3 {
                0 => Conn::encode(&mut buf, &[b"HSET", name.as_bytes(), &m[..16], &val(rng)]),
                1 => Conn::encode(&mut buf, &[b"SADD", name.as_bytes(), &m]),
                _ => Conn::encode(
                    &mut buf,
                    &[b"ZADD", name.as_bytes(), e.to_string().as_bytes(), &m],
                ),
            }
        }
        c.pipeline(&buf, 2000);
    }
    colls
}

/// One `--big-collections` round: 10k removals (9 in 10) or short adds.
fn churn_big(buf: &mut Vec<u8>, colls: u64, rng: &mut Rng) {
    for _ in 0..10_000 {
        let k = rng.below(colls);
        let e = rng.below(2000);
        let name = format!("big:{k}");
        let m = big_member(k, e);
        let short = format!("n:{}", rng.below(1_000_000)).into_bytes();
        let del = rng.below(10) < 9;
        match (k % 3, del) {
            (0, true) => Conn::encode(buf, &[b"HDEL", name.as_bytes(), &m[..16]]),
            (0, false) => Conn::encode(buf, &[b"HSET", name.as_bytes(), &short, b"v"]),
            (1, true) => Conn::encode(buf, &[b"SREM", name.as_bytes(), &m]),
            (1, false) => Conn::encode(buf, &[b"SADD", name.as_bytes(), &short]),
            (_, true) => Conn::encode(buf, &[b"ZREM", name.as_bytes(), &m]),
            (_, false) => Conn::encode(buf, &[b"ZADD", name.as_bytes(), b"1", &short]),
        }
    }
}

fn frag(args: &[String]) {
    let port: u16 = arg(args, "--port", "6379").parse().unwrap();
    let big = args.iter().any(|a| a == "--big-collections");
    let keys: u64 = arg(args, "--keys", "2000000").parse().unwrap();
    let secs: u64 = arg(args, "--secs", "60").parse().unwrap();
    let probe_secs: u64 = arg(args, "--probe-secs", "10").parse().unwrap();
    let target: f64 = arg(args, "--ratio", "1.4").parse().unwrap();
    let mut c = Conn::new(port);
    let mut mon = Conn::new(port);
    c.cmd(&[b"FLUSHALL"]);
    c.cmd(&[b"CONFIG", b"SET", b"activedefrag", b"no"]);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let batch = 1000u64;
    let mut buf = Vec::new();
    let val = |rng: &mut Rng| {
        let n = 16 + rng.below(585) as usize;
        let mut v = vec![0u8; n];
        for b in v.iter_mut() {
            *b = b'a' + (rng.next() % 26) as u8;
        }
        v
    };
    // Strings.
    let t0 = Instant::now();
    let mut i = 0;
    let bigs = if big {
        fill_big(&mut c, keys, &mut rng, val)
    } else {
        0
    };
    while i < keys && !big {
        buf.clear();
        for j in i..i + batch {
            let v = val(&mut rng);
            Conn::encode(&mut buf, &[b"SET", format!("s:{j}").as_bytes(), &v]);
        }
        c.pipeline(&buf, batch as usize);
        i += batch;
    }
    // Large collections: 1 per 10k string keys, 2,000 elements each.
    let colls = if big { 0 } else { (keys / 10_000).max(3) };
    for k in 0..colls {
        buf.clear();
        for e in 0..2000u64 {
            let m = format!("member:{e}");
            let name = format!("c:{k}");
            match k % 3 {
                0 => Conn::encode(
                    &mut buf,
                    &[b"HSET", name.as_bytes(), m.as_bytes(), &val(&mut rng)],
                ),
                1 => Conn::encode(&mut buf, &[b"SADD", name.as_bytes(), m.as_bytes()]),
                _ => Conn::encode(
                    &mut buf,
                    &[
                        b"ZADD",
                        name.as_bytes(),
                        e.to_string().as_bytes(),
                        m.as_bytes(),
                    ],
                ),
            }
        }
        c.pipeline(&buf, 2000);
    }
    c.cmd(&[b"SET", b"probe:key", b"probe-value"]);
    let info = mon.info("memory");
    println!(
        "filled {} keys + {} collections in {:.1}s: used {:.1} MB rss {:.1} MB frag {}",
        if big { 0 } else { keys },
        colls + bigs,
        t0.elapsed().as_secs_f64(),
        mb(field_of(&info, "used_memory")),
        mb(field_of(&info, "used_memory_rss")),
        field_of(&info, "allocator_frag_ratio")
    );
    // Delete or overwrite at random until fragmented.
    let mut rounds = 0;
    loop {
        let ratio = mon.field("memory", "allocator_frag_ratio");
        if ratio > target || rounds >= 400 {
            println!("after {rounds} rounds of deletes: allocator_frag_ratio {ratio}");
            break;
        }
        buf.clear();
        if big {
            churn_big(&mut buf, bigs, &mut rng);
            c.pipeline(&buf, 10_000);
            rounds += 1;
            continue;
        }
        for _ in 0..10_000 {
            let j = rng.below(keys);
            let k = format!("s:{j}");
            if rng.below(10) < 9 {
                Conn::encode(&mut buf, &[b"DEL", k.as_bytes()]);
            } else {
                // Overwrite with a small value (a different size class).
                Conn::encode(
                    &mut buf,
                    &[
                        b"SET",
                        k.as_bytes(),
                        &val(&mut rng)[..8 + rng.below(8) as usize],
                    ],
                );
            }
        }
        for k in 0..colls {
            // Remove a few elements of each collection.
            let name = format!("c:{k}");
            let m = format!("member:{}", rng.below(2000));
            let cmd: &[u8] = match k % 3 {
                0 => b"HDEL",
                1 => b"SREM",
                _ => b"ZREM",
            };
            Conn::encode(&mut buf, &[cmd, name.as_bytes(), m.as_bytes()]);
        }
        c.pipeline(&buf, 10_000 + colls as usize);
        rounds += 1;
    }
    let line = |m: &mut Conn, s: u64| {
        let t = Instant::now();
        let mem = m.info("memory");
        let st = m.info("stats");
        let info_us = t.elapsed().as_micros();
        println!(
            "{s} frag_ratio={} rss={:.1}MB used={:.1}MB running={} hits={} misses={} key_hits={} info_us={info_us}",
            field_of(&mem, "allocator_frag_ratio"),
            mb(field_of(&mem, "used_memory_rss")),
            mb(field_of(&mem, "used_memory")),
            field_of(&mem, "active_defrag_running"),
            field_of(&st, "active_defrag_hits"),
            field_of(&st, "active_defrag_misses"),
            field_of(&st, "active_defrag_key_hits"),
        );
    };
    println!("-- defrag off, GET probe for {probe_secs}s");
    let off = probe_window(port, probe_secs, |s| line(&mut mon, s));
    let r = c.cmd(&[b"CONFIG", b"SET", b"activedefrag", b"yes"]);
    println!("-- CONFIG SET activedefrag yes: {r:?}");
    let on = probe_window(port, secs, |s| line(&mut mon, s));
    println!("GET latency by second, defrag off:");
    per_second(&off);
    println!("GET latency by second, defrag on:");
    per_second(&on);
    println!("GET latency, defrag off: {}", percentiles(&off));
    println!("GET latency, defrag on:  {}", percentiles(&on));
    c.cmd(&[b"CONFIG", b"SET", b"activedefrag", b"no"]);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("ttl") => ttl(&args),
        Some("frag") => frag(&args),
        _ => eprintln!("usage: mem_scenarios ttl|frag [--port N] ..."),
    }
}
