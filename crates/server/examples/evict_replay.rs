//! Eviction quality and memory-limit overshoot, petrel against redis-server
//! in the same run.
//!
//! For each server and each policy (allkeys-lru, allkeys-lfu) it replays
//! the same Zipf(0.99) trace of GET-then-SET-on-miss over `--keys` keys with
//! `maxmemory` at 20% of the data, and prints the hit ratio of the measured
//! part (after `--warmup` requests). Requests go in pipelined batches: a
//! batch of GETs, then the SETs for the keys that missed, in order, so every
//! key's GET→SET dependency holds (a key repeated inside one batch may miss
//! twice there; both servers see the same batches).
//!
//! maxmemory (`--method data`, the default): each server first loads every
//! key once without a limit; `data = used_memory(loaded) -
//! used_memory(empty)` and `maxmemory = used_memory(empty) + 20% of data`,
//! measured on that server. The number of keys that fits then depends on
//! each server's memory per key at that size. `--method keys` instead sets
//! `maxmemory = used_memory` with the first 20% of the keys loaded, so both
//! servers hold about the same number of keys and only eviction quality
//! differs. `--method raw` gives both servers the same budget, independent
//! of either: `maxmemory = used_memory(empty) + 20% of the raw bytes of the
//! data` (the sum of every key's and value's length), which is what an
//! operator sizing a cache for "20% of the data" sets; how many keys fit
//! then depends on each server's memory per key.
//!
//! Overshoot: a second connection polls `INFO memory` every 20 ms during
//! the trace and during a write flood (SETs of fresh keys) and reports the
//! largest `used_memory / maxmemory - 1` seen.
//!
//! ```sh
//! cargo build --release -p server --bin petrel --example evict_replay
//! target/release/examples/evict_replay --petrel target/release/petrel \
//!     --keys 10000000 --requests 30000000 --warmup 10000000
//! ```
//! Servers are started on ports 17100 (petrel, `--threads 1`) and 17101
//! (redis-server), pinned to core 0 with taskset when `--pin` is given (the
//! replay itself should then run on core 1: `taskset -c 1 ...`).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

struct Args {
    petrel: String,
    redis: String,
    keys: u64,
    requests: u64,
    warmup: u64,
    batch: usize,
    value: usize,
    flood: u64,
    pin: bool,
    /// "data": maxmemory = empty + 20% of the full data; "keys": maxmemory
    /// = used_memory with the first 20% of the keys loaded (equal key
    /// capacity on both servers, isolating eviction quality); "raw":
    /// maxmemory = empty + 20% of the raw key+value bytes (same budget).
    method: String,
    servers: Vec<String>,
    policies: Vec<String>,
}

fn parse_args() -> Args {
    let mut a = Args {
        petrel: "target/release/petrel".into(),
        redis: "redis-server".into(),
        keys: 10_000_000,
        requests: 30_000_000,
        warmup: 10_000_000,
        batch: 2000,
        value: 32,
        flood: 3_000_000,
        pin: false,
        method: "data".into(),
        servers: vec!["petrel".into(), "redis".into()],
        policies: vec!["allkeys-lru".into(), "allkeys-lfu".into()],
    };
    let v: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < v.len() {
        let val = || v.get(i + 1).cloned().expect("option value");
        match v[i].as_str() {
            "--petrel" => a.petrel = val(),
            "--redis" => a.redis = val(),
            "--keys" => a.keys = val().parse().unwrap(),
            "--requests" => a.requests = val().parse().unwrap(),
            "--warmup" => a.warmup = val().parse().unwrap(),
            "--batch" => a.batch = val().parse().unwrap(),
            "--value" => a.value = val().parse().unwrap(),
            "--flood" => a.flood = val().parse().unwrap(),
            "--servers" => a.servers = val().split(',').map(String::from).collect(),
            "--method" => a.method = val(),
            "--policies" => a.policies = val().split(',').map(String::from).collect(),
            "--pin" => {
                a.pin = true;
                i += 1;
                continue;
            }
            o => panic!("unknown option {o}"),
        }
        i += 2;
    }
    a
}

/// xorshift64* — deterministic, so both servers get the same trace.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Zipf sampler over 1..=n with exponent s (rejection-inversion, Hörmann
/// and Derflinger 1996), O(1) per sample.
struct Zipf {
    n: f64,
    s: f64,
    h_x1: f64,
    h_n: f64,
    sdiv: f64,
}

impl Zipf {
    fn new(n: u64, s: f64) -> Zipf {
        let mut z = Zipf {
            n: n as f64,
            s,
            h_x1: 0.0,
            h_n: 0.0,
            sdiv: 0.0,
        };
        z.h_x1 = z.h_int(1.5) - 1.0;
        z.h_n = z.h_int(n as f64 + 0.5);
        z.sdiv = 2.0 - z.h_int_inv(z.h_int(2.5) - z.h(2.0));
        z
    }
    fn h(&self, x: f64) -> f64 {
        (-self.s * x.ln()).exp()
    }
    fn h_int(&self, x: f64) -> f64 {
        let lx = x.ln();
        helper2((1.0 - self.s) * lx) * lx
    }
    fn h_int_inv(&self, x: f64) -> f64 {
        let mut t = x * (1.0 - self.s);
        if t < -1.0 {
            t = -1.0;
        }
        (helper1(t) * x).exp()
    }
    fn sample(&self, r: &mut Rng) -> u64 {
        loop {
            let u = self.h_n + r.unit() * (self.h_x1 - self.h_n);
            let x = self.h_int_inv(u);
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.sdiv || u >= self.h_int(k + 0.5) - self.h(k) {
                return k as u64;
            }
        }
    }
}

fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x))
    }
}

/// Minimal RESP connection.
struct Conn {
    w: TcpStream,
    r: BufReader<TcpStream>,
    out: Vec<u8>,
}

#[derive(Debug, PartialEq)]
enum Reply {
    Nil,
    Bulk(Vec<u8>),
    Status(String),
    Error(String),
    Int(i64),
    Array(Vec<Reply>),
}

impl Conn {
    fn connect(port: u16) -> Conn {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            match TcpStream::connect(("127.0.0.1", port)) {
                Ok(s) => {
                    s.set_nodelay(true).unwrap();
                    let r = BufReader::with_capacity(1 << 16, s.try_clone().unwrap());
                    return Conn {
                        w: s,
                        r,
                        out: Vec::new(),
                    };
                }
                Err(e) if Instant::now() < deadline => {
                    let _ = e;
                    std::thread::sleep(Duration::from_millis(50))
                }
                Err(e) => panic!("connect {port}: {e}"),
            }
        }
    }
    fn push(&mut self, args: &[&[u8]]) {
        self.out
            .extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
        for a in args {
            self.out
                .extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            self.out.extend_from_slice(a);
            self.out.extend_from_slice(b"\r\n");
        }
    }
    fn flush(&mut self) {
        self.w.write_all(&self.out).unwrap();
        self.out.clear();
    }
    fn read(&mut self) -> Reply {
        let mut line = Vec::new();
        self.r.read_until(b'\n', &mut line).unwrap();
        let body = String::from_utf8_lossy(&line[1..line.len() - 2]).into_owned();
        match line[0] {
            b'+' => Reply::Status(body),
            b'-' => Reply::Error(body),
            b':' => Reply::Int(body.parse().unwrap()),
            b'$' => {
                let n: i64 = body.parse().unwrap();
                if n < 0 {
                    return Reply::Nil;
                }
                let mut b = vec![0u8; n as usize + 2];
                self.r.read_exact(&mut b).unwrap();
                b.truncate(n as usize);
                Reply::Bulk(b)
            }
            b'*' => {
                let n: i64 = body.parse().unwrap();
                Reply::Array((0..n.max(0)).map(|_| self.read()).collect())
            }
            c => panic!("bad reply byte {c}"),
        }
    }
    fn cmd(&mut self, args: &[&str]) -> Reply {
        let a: Vec<&[u8]> = args.iter().map(|s| s.as_bytes()).collect();
        self.push(&a);
        self.flush();
        self.read()
    }
    fn info_field(&mut self, section: &str, field: &str) -> u64 {
        let Reply::Bulk(b) = self.cmd(&["INFO", section]) else {
            panic!("INFO")
        };
        let t = String::from_utf8_lossy(&b);
        t.lines()
            .find_map(|l| l.strip_prefix(&format!("{field}:")))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {field}"))
    }
}

struct Srv {
    child: Child,
    port: u16,
}

impl Drop for Srv {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(a: &Args, which: &str) -> Srv {
    let (port, mut cmd) = match which {
        "petrel" => {
            let mut c = Command::new(if a.pin { "taskset" } else { &a.petrel });
            if a.pin {
                c.args(["-c", "0", &a.petrel]);
            }
            c.args(["--port", "17100", "--threads", "1"]);
            (17100, c)
        }
        _ => {
            let mut c = Command::new(if a.pin { "taskset" } else { &a.redis });
            if a.pin {
                c.args(["-c", "0", &a.redis]);
            }
            c.args(["--port", "17101", "--save", "", "--appendonly", "no"]);
            (17101, c)
        }
    };
    let child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start server");
    let s = Srv { child, port };
    let mut c = Conn::connect(port);
    assert_eq!(c.cmd(&["PING"]), Reply::Status("PONG".into()));
    s
}

fn key(i: u64) -> String {
    format!("key:{i:010}")
}

fn value(i: u64, size: usize) -> Vec<u8> {
    let mut v = format!("v{i}").into_bytes();
    v.resize(size, b'x');
    v
}

fn settle(c: &mut Conn) -> u64 {
    std::thread::sleep(Duration::from_millis(300));
    c.info_field("memory", "used_memory")
}

/// Loads the first `n` keys without a limit; returns (empty, loaded)
/// used_memory.
/// Sum of the lengths of every key and value of the data set.
fn raw_bytes(a: &Args) -> u64 {
    (0..a.keys).map(|j| (key(j).len() + a.value) as u64).sum()
}

fn measure_data(c: &mut Conn, a: &Args, n: u64) -> (u64, u64) {
    c.cmd(&["FLUSHALL"]);
    let empty = settle(c);
    let mut i = 0;
    while i < n {
        let end = (i + a.batch as u64).min(n);
        for j in i..end {
            let k = key(j);
            let v = value(j, a.value);
            c.push(&[b"SET", k.as_bytes(), &v]);
        }
        c.flush();
        for _ in i..end {
            c.read();
        }
        i = end;
    }
    let loaded = settle(c);
    c.cmd(&["FLUSHALL"]);
    (empty, loaded)
}

/// Polls used_memory until stopped; returns the max ratio used/maxmemory.
fn poller(port: u16, max: u64, stop: Arc<AtomicBool>, worst: Arc<AtomicU64>) {
    let mut c = Conn::connect(port);
    while !stop.load(Relaxed) {
        let used = c.info_field("memory", "used_memory");
        let ppm = used * 1_000_000 / max;
        worst.fetch_max(ppm, Relaxed);
        std::thread::sleep(Duration::from_millis(20));
    }
}

struct TraceResult {
    hits: u64,
    gets: u64,
    secs: f64,
    worst_ppm: u64,
    evicted: u64,
    keys: u64,
}

fn run_trace(port: u16, a: &Args, max: u64) -> TraceResult {
    let mut c = Conn::connect(port);
    let stop = Arc::new(AtomicBool::new(false));
    let worst = Arc::new(AtomicU64::new(0));
    let h = {
        let (s, w) = (stop.clone(), worst.clone());
        std::thread::spawn(move || poller(port, max, s, w))
    };
    let zipf = Zipf::new(a.keys, 0.99);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let t0 = Instant::now();
    let (mut hits, mut gets) = (0u64, 0u64);
    let mut done = 0u64;
    let mut ids = Vec::with_capacity(a.batch);
    let mut misses = Vec::with_capacity(a.batch);
    while done < a.requests {
        let n = (a.batch as u64).min(a.requests - done);
        ids.clear();
        for _ in 0..n {
            let id = zipf.sample(&mut rng) - 1;
            ids.push(id);
            c.push(&[b"GET", key(id).as_bytes()]);
        }
        c.flush();
        misses.clear();
        for &id in &ids {
            match c.read() {
                Reply::Bulk(_) => {
                    if done >= a.warmup {
                        hits += 1;
                    }
                }
                Reply::Nil => misses.push(id),
                r => panic!("GET: {r:?}"),
            }
            if done >= a.warmup {
                gets += 1;
            }
            done += 1;
        }
        for &id in &misses {
            let k = key(id);
            let v = value(id, a.value);
            c.push(&[b"SET", k.as_bytes(), &v]);
        }
        c.flush();
        for _ in &misses {
            if let Reply::Error(e) = c.read() {
                panic!("SET: {e}");
            }
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    stop.store(true, Relaxed);
    h.join().unwrap();
    let evicted = c.info_field("stats", "evicted_keys");
    let Reply::Int(keys) = c.cmd(&["DBSIZE"]) else {
        panic!("DBSIZE")
    };
    TraceResult {
        keys: keys as u64,
        hits,
        gets,
        secs,
        worst_ppm: worst.load(Relaxed),
        evicted,
    }
}

/// SETs `n` fresh keys as fast as possible; returns the worst ratio seen.
fn flood(port: u16, a: &Args, max: u64) -> (u64, f64) {
    let mut c = Conn::connect(port);
    let stop = Arc::new(AtomicBool::new(false));
    let worst = Arc::new(AtomicU64::new(0));
    let h = {
        let (s, w) = (stop.clone(), worst.clone());
        std::thread::spawn(move || poller(port, max, s, w))
    };
    let t0 = Instant::now();
    let mut i = 0;
    while i < a.flood {
        let end = (i + a.batch as u64).min(a.flood);
        for j in i..end {
            let k = format!("flood:{j:010}");
            let v = value(j, a.value);
            c.push(&[b"SET", k.as_bytes(), &v]);
        }
        c.flush();
        for _ in i..end {
            if let Reply::Error(e) = c.read() {
                panic!("SET: {e}");
            }
        }
        i = end;
    }
    let secs = t0.elapsed().as_secs_f64();
    stop.store(true, Relaxed);
    h.join().unwrap();
    let w = worst.load(Relaxed);
    // A last look after the flood.
    let used = c.info_field("memory", "used_memory");
    (w.max(used * 1_000_000 / max), secs)
}

fn main() {
    let a = parse_args();
    println!(
        "keys={} requests={} warmup={} batch={} value={}B zipf=0.99 maxmemory=20% of data",
        a.keys, a.requests, a.warmup, a.batch, a.value
    );
    let mut table = Vec::new();
    for which in &a.servers {
        let srv = start(&a, which);
        let mut c = Conn::connect(srv.port);
        let n = if a.method == "keys" {
            a.keys / 5
        } else {
            a.keys
        };
        let (empty, loaded) = if a.method == "raw" {
            c.cmd(&["FLUSHALL"]);
            let empty = settle(&mut c);
            (empty, empty + raw_bytes(&a))
        } else {
            measure_data(&mut c, &a, n)
        };
        let data = loaded - empty;
        let max = match a.method.as_str() {
            "keys" => loaded,
            "data" | "raw" => empty + data / 5,
            m => panic!("unknown --method {m} (data, keys, raw)"),
        };
        println!(
            "{which}: used_memory empty={empty} with {n} keys={loaded} ({:.1} B/key) -> maxmemory={max} (method {})",
            data as f64 / n as f64,
            a.method
        );
        for pol in &a.policies {
            c.cmd(&["FLUSHALL"]);
            c.cmd(&["CONFIG", "RESETSTAT"]);
            c.cmd(&["CONFIG", "SET", "maxmemory-policy", pol]);
            c.cmd(&["CONFIG", "SET", "maxmemory", &max.to_string()]);
            let r = run_trace(srv.port, &a, max);
            let ratio = r.hits as f64 / r.gets.max(1) as f64;
            println!(
                "{which} {pol}: hit ratio {:.4} ({} / {}), {:.1}s, evicted {}, keys held {}, max used/maxmemory {:+.2}%",
                ratio,
                r.hits,
                r.gets,
                r.secs,
                r.evicted,
                r.keys,
                r.worst_ppm as f64 / 10_000.0 - 100.0
            );
            table.push((which.clone(), pol.clone(), ratio, r.worst_ppm));
            if a.flood > 0 && pol == &a.policies[0] {
                let (w, secs) = flood(srv.port, &a, max);
                println!(
                    "{which} {pol}: write flood of {} SETs in {:.1}s, max used/maxmemory {:+.2}%",
                    a.flood,
                    secs,
                    w as f64 / 10_000.0 - 100.0
                );
            }
            c.cmd(&["CONFIG", "SET", "maxmemory", "0"]);
        }
        drop(c);
        drop(srv);
    }
    println!("summary:");
    for (s, p, r, w) in &table {
        println!(
            "  {s:7} {p:12} hit {r:.4}  max overshoot {:+.2}%",
            *w as f64 / 10_000.0 - 100.0
        );
    }
}
