//! A GET/SET latency load generator that records every request in an HDR
//! histogram, in closed loop or open loop (issue 27).
//!
//! Each request is `SET key:<12 digits> <value>` or `GET key:<12 digits>`
//! (the key format of `redis-benchmark -r`), the key drawn uniformly from
//! `--keys`, SET with probability S/(S+G) for `--ratio S:G`. Before the
//! run every key is SET once (`--prefill 0` skips that), so GETs hit.
//!
//! Two ways of sending:
//!
//! * **closed** (default, what redis-benchmark and memtier do): each
//!   connection sends a batch of `--pipeline` requests, waits for all of
//!   its replies, then sends the next. A request's latency runs from the
//!   batch's `write` to the read that completed its reply. A server stall
//!   holds back the senders, so it is seen by one request per connection
//!   only (coordinated omission): use this mode for throughput.
//! * **open** (`--rate R`): batches of `--pipeline` requests arrive on a
//!   fixed schedule, R requests/s in total (evenly spaced, or Poisson with
//!   `--arrivals poisson`), round-robin over the connections, whether or
//!   not earlier replies are in. A request's latency runs from its
//!   *scheduled* send time, so a stall counts against every request it
//!   delays, including ones the generator itself sent late. How late the
//!   generator sent is printed (`send_lag`): if that is large the
//!   generator, not the server, was the bottleneck.
//!
//! Requests scheduled (open) or sent (closed) in the `--warmup` seconds
//! are not recorded; the measured window is the next `--seconds`. After
//! it, outstanding replies get `--drain` seconds; any still missing then
//! are recorded with the time they had waited and counted as `unanswered`.
//! Throughput counts the replies that arrived within the window.
//!
//! Connections are non-blocking sockets driven by `--threads` threads
//! (default 1), each with one `epoll` and its share of the connections,
//! so 5,000 connections need no 5,000 threads. An error reply or a closed
//! connection stops the run with the server's message.
//!
//! Prints a human summary and one machine-readable line starting with
//! `RESULT ` (space-separated `name=value`, latencies in microseconds).
//!
//! ```sh
//! cargo build --release -p server --example latency_load
//! taskset -c 1 target/release/examples/latency_load --port 6379 \
//!     --connections 50 --pipeline 1 --ratio 1:10 --keys 100000 \
//!     --value-size 32 --seconds 10 --warmup 2
//! taskset -c 1 target/release/examples/latency_load --port 6379 --rate 50000
//! ```
//! `scripts/bench-latency` runs it against petrel and redis-server
//! side by side.

mod load_common;

use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use mio::net::TcpStream;
use mio::{Events, Poll};

const PROG: &str = "latency_load";
/// Latencies are recorded in nanoseconds, up to one minute, 3 digits.
const HIST_MAX_NS: u64 = 60_000_000_000;

fn die(msg: &str) -> ! {
    load_common::die(PROG, msg)
}

const USAGE: &str = "usage: latency_load [--host 127.0.0.1] [--port 6379] [--connections 50]
    [--pipeline 1] [--ratio 1:10 (SET:GET)] [--keys 100000] [--value-size 32]
    [--seconds 10] [--warmup 1] [--drain 2] [--threads 1] [--prefill 1]
    [--rate R (open loop, requests/s; 0 = closed loop)] [--arrivals uniform|poisson]
    [--seed N]";

#[derive(Clone)]
struct Args {
    host: String,
    port: u16,
    connections: usize,
    pipeline: usize,
    set_weight: u64,
    get_weight: u64,
    keys: u64,
    value_size: usize,
    seconds: f64,
    warmup: f64,
    drain: f64,
    threads: usize,
    prefill: bool,
    rate: f64,
    poisson: bool,
    seed: u64,
}

fn parse_args() -> Args {
    let mut a = Args {
        host: "127.0.0.1".into(),
        port: 6379,
        connections: 50,
        pipeline: 1,
        set_weight: 1,
        get_weight: 10,
        keys: 100_000,
        value_size: 32,
        seconds: 10.0,
        warmup: 1.0,
        drain: 2.0,
        threads: 1,
        prefill: true,
        rate: 0.0,
        poisson: false,
        seed: 27,
    };
    let v: Vec<String> = std::env::args().skip(1).collect();
    if v.iter().any(|s| s == "-h" || s == "--help") {
        println!("{USAGE}");
        std::process::exit(0);
    }
    if !v.len().is_multiple_of(2) {
        die(&format!("options take a value: {v:?}\n{USAGE}"));
    }
    for pair in v.chunks(2) {
        let (name, val) = (pair[0].as_str(), pair[1].as_str());
        let num = || -> f64 {
            match val.parse::<f64>() {
                Ok(n) if n.is_finite() && n >= 0.0 => n,
                _ => die(&format!("{name} needs a non-negative number, got {val}")),
            }
        };
        let int = || -> u64 {
            val.parse::<u64>()
                .unwrap_or_else(|_| die(&format!("{name} needs a whole number, got {val}")))
        };
        match name {
            "--host" => a.host = val.to_string(),
            "--port" => {
                a.port = u16::try_from(int()).unwrap_or_else(|_| die("--port out of range"))
            }
            "--connections" | "--clients" => a.connections = int() as usize,
            "--pipeline" => a.pipeline = int() as usize,
            "--ratio" => {
                let (s, g) = val
                    .split_once(':')
                    .and_then(|(s, g)| Some((s.parse().ok()?, g.parse().ok()?)))
                    .unwrap_or_else(|| die(&format!("--ratio needs SET:GET, got {val}")));
                a.set_weight = s;
                a.get_weight = g;
            }
            "--keys" => a.keys = int(),
            "--value-size" => a.value_size = int() as usize,
            "--seconds" => a.seconds = num(),
            "--warmup" => a.warmup = num(),
            "--drain" => a.drain = num(),
            "--threads" => a.threads = int() as usize,
            "--prefill" => a.prefill = int() != 0,
            "--rate" => a.rate = num(),
            "--arrivals" => {
                a.poisson = match val {
                    "uniform" => false,
                    "poisson" => true,
                    _ => die(&format!("--arrivals is uniform or poisson, got {val}")),
                }
            }
            "--seed" => a.seed = int(),
            other => die(&format!("unknown option {other}\n{USAGE}")),
        }
    }
    if a.connections == 0 || a.pipeline == 0 || a.keys == 0 || a.threads == 0 {
        die("--connections, --pipeline, --keys and --threads must be at least 1");
    }
    if a.set_weight + a.get_weight == 0 {
        die("--ratio needs at least one non-zero side");
    }
    if a.seconds <= 0.0 {
        die("--seconds must be positive");
    }
    a.threads = a.threads.min(a.connections);
    a
}

/// xorshift64*: fast, and reproducible from `--seed`.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        ((self.next() as u128 * n as u128) >> 64) as u64
    }
    /// Uniform in (0, 1].
    fn unit(&mut self) -> f64 {
        ((self.next() >> 11) as f64 + 1.0) / (1u64 << 53) as f64
    }
}

/// Builds the RESP of one request into `out`.
struct Encoder {
    set_weight: u64,
    total_weight: u64,
    keys: u64,
    /// `$<n>\r\n<n x's>\r\n`, the value argument of SET.
    value_arg: Vec<u8>,
}

impl Encoder {
    fn new(a: &Args) -> Encoder {
        let mut value_arg = format!("${}\r\n", a.value_size).into_bytes();
        value_arg.resize(value_arg.len() + a.value_size, b'x');
        value_arg.extend_from_slice(b"\r\n");
        Encoder {
            set_weight: a.set_weight,
            total_weight: a.set_weight + a.get_weight,
            keys: a.keys,
            value_arg,
        }
    }

    fn push_key(out: &mut Vec<u8>, k: u64) {
        out.extend_from_slice(b"$16\r\nkey:");
        let mut digits = [b'0'; 12];
        let mut k = k;
        for d in digits.iter_mut().rev() {
            *d = b'0' + (k % 10) as u8;
            k /= 10;
        }
        out.extend_from_slice(&digits);
        out.extend_from_slice(b"\r\n");
    }

    fn push_set(&self, out: &mut Vec<u8>, k: u64) {
        out.extend_from_slice(b"*3\r\n$3\r\nSET\r\n");
        Self::push_key(out, k);
        out.extend_from_slice(&self.value_arg);
    }

    fn push_random(&self, out: &mut Vec<u8>, rng: &mut Rng) {
        let k = rng.below(self.keys);
        if rng.below(self.total_weight) < self.set_weight {
            self.push_set(out, k);
        } else {
            out.extend_from_slice(b"*2\r\n$3\r\nGET\r\n");
            Self::push_key(out, k);
        }
    }
}

/// The length of the first complete RESP2 reply in `b`, `Ok(None)` if it
/// is incomplete, `Err` with the text of an error reply or of bytes that
/// are not a reply to GET or SET.
fn reply_len(b: &[u8]) -> Result<Option<usize>, String> {
    let Some(first) = b.first() else {
        return Ok(None);
    };
    let Some(eol) = b.windows(2).position(|w| w == b"\r\n") else {
        return Ok(None);
    };
    match first {
        b'+' | b':' => Ok(Some(eol + 2)),
        b'-' => Err(String::from_utf8_lossy(&b[1..eol]).into_owned()),
        b'$' => {
            let n: i64 = std::str::from_utf8(&b[1..eol])
                .ok()
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| {
                    format!("bad bulk length {:?}", String::from_utf8_lossy(&b[..eol]))
                })?;
            if n < 0 {
                return Ok(Some(eol + 2));
            }
            let total = eol + 2 + n as usize + 2;
            Ok((b.len() >= total).then_some(total))
        }
        _ => Err(format!(
            "unexpected reply {:?}",
            String::from_utf8_lossy(&b[..b.len().min(64)])
        )),
    }
}

/// One connection's state.
struct Conn {
    stream: TcpStream,
    /// Scheduled (open) or sent (closed) time of every request whose reply
    /// has not arrived, oldest first.
    pending: VecDeque<Instant>,
    /// Bytes of an incomplete reply carried over to the next read.
    partial: Vec<u8>,
    /// Request bytes not yet accepted by the socket (open loop only; a
    /// closed-loop batch always fits the empty send buffer).
    out: Vec<u8>,
    out_pos: usize,
    /// Whether the connection is in the worker's `dirty` list.
    dirty: bool,
}

/// What one thread measured.
struct Stats {
    hist: Histogram<u64>,
    /// How late the open-loop generator sent, per batch.
    lag: Histogram<u64>,
    replies_in_window: u64,
    unanswered: u64,
}

fn new_hist() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIST_MAX_NS, 3).expect("histogram bounds are valid")
}

struct Clock {
    measure_from: Instant,
    end: Instant,
    drain_until: Instant,
}

impl Clock {
    fn measured(&self, t: Instant) -> bool {
        t >= self.measure_from && t < self.end
    }
}

fn record(hist: &mut Histogram<u64>, d: Duration) {
    hist.saturating_record((d.as_nanos() as u64).clamp(1, HIST_MAX_NS));
}

struct Worker {
    conns: Vec<Conn>,
    poll: Poll,
    enc: Encoder,
    rng: Rng,
    pipeline: usize,
    clock: Clock,
    stats: Stats,
    buf: Vec<u8>,
    /// Connections with bytes in `out` to write (open loop).
    dirty: Vec<usize>,
}

impl Worker {
    /// Reads what connection `i` has, matches replies to pending requests
    /// and records them. Returns the number of replies consumed.
    fn on_readable(&mut self, i: usize) -> usize {
        let mut done = 0;
        loop {
            let c = &mut self.conns[i];
            let n = match c.stream.read(&mut self.buf) {
                Ok(0) => die("server closed the connection"),
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => die(&format!("read: {e}")),
            };
            let now = Instant::now();
            let data: &[u8] = if c.partial.is_empty() {
                &self.buf[..n]
            } else {
                c.partial.extend_from_slice(&self.buf[..n]);
                &c.partial
            };
            let mut pos = 0;
            let mut got = 0;
            loop {
                match reply_len(&data[pos..]) {
                    Ok(Some(len)) => {
                        pos += len;
                        got += 1;
                    }
                    Ok(None) => break,
                    Err(msg) => die(&format!("server replied with an error: {msg}")),
                }
            }
            let rest = data[pos..].to_vec();
            c.partial = rest;
            for _ in 0..got {
                let Some(t) = c.pending.pop_front() else {
                    die("a reply arrived for no request")
                };
                if self.clock.measured(t) {
                    record(&mut self.stats.hist, now - t);
                }
            }
            if self.clock.measured(now) {
                self.stats.replies_in_window += got as u64;
            }
            done += got;
            if n < self.buf.len() {
                break;
            }
        }
        done
    }

    /// Appends a batch of `pipeline` requests stamped `t` to connection
    /// `i`'s output.
    fn enqueue_batch(&mut self, i: usize, t: Instant) {
        let c = &mut self.conns[i];
        if c.out_pos == c.out.len() {
            c.out.clear();
            c.out_pos = 0;
        }
        for _ in 0..self.pipeline {
            self.enc.push_random(&mut c.out, &mut self.rng);
            c.pending.push_back(t);
        }
    }

    fn mark_dirty(&mut self, i: usize) {
        if !self.conns[i].dirty {
            self.conns[i].dirty = true;
            self.dirty.push(i);
        }
    }

    /// Writes as much of connection `i`'s output as the socket takes.
    /// Returns whether all of it went.
    fn flush(&mut self, i: usize) -> bool {
        let c = &mut self.conns[i];
        while c.out_pos < c.out.len() {
            match c.stream.write(&c.out[c.out_pos..]) {
                Ok(n) => c.out_pos += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return false,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => die(&format!("write: {e}")),
            }
        }
        true
    }

    fn outstanding(&self) -> usize {
        self.conns.iter().map(|c| c.pending.len()).sum()
    }

    /// Records every request still unanswered at the drain deadline with
    /// the time it had waited.
    fn give_up(&mut self) {
        let now = Instant::now();
        for c in &mut self.conns {
            for t in c.pending.drain(..) {
                if t >= self.clock.measure_from && t < self.clock.end {
                    record(&mut self.stats.hist, now - t);
                    self.stats.unanswered += 1;
                }
            }
        }
    }

    fn run_closed(mut self) -> Stats {
        let mut events = Events::with_capacity(1024);
        for i in 0..self.conns.len() {
            self.send_closed_batch(i);
        }
        loop {
            let now = Instant::now();
            if now >= self.clock.end && self.outstanding() == 0 {
                break;
            }
            if now >= self.clock.drain_until {
                self.give_up();
                break;
            }
            self.poll
                .poll(&mut events, Some(Duration::from_millis(10)))
                .unwrap_or_else(|e| die(&format!("poll: {e}")));
            for ev in events.iter() {
                let i = ev.token().0;
                if self.on_readable(i) > 0
                    && self.conns[i].pending.is_empty()
                    && Instant::now() < self.clock.end
                {
                    self.send_closed_batch(i);
                }
            }
        }
        self.stats
    }

    fn send_closed_batch(&mut self, i: usize) {
        let now = Instant::now();
        self.enqueue_batch(i, now);
        if !self.flush(i) {
            // The send buffer of a connection with nothing outstanding
            // holds far more than one batch; this is not expected.
            die("a closed-loop batch did not fit the socket's send buffer");
        }
    }

    fn run_open(mut self, rate: f64, poisson: bool, start: Instant) -> Stats {
        let mut events = Events::with_capacity(1024);
        // Seconds between batches on this thread.
        let mean_gap = self.pipeline as f64 / rate;
        let mut next = start;
        let mut offset = 0.0f64;
        let mut batch_no: u64 = 0;
        let mut rr = 0usize;
        let mut sending = true;
        loop {
            let now = Instant::now();
            if sending {
                while next <= now {
                    self.enqueue_batch(rr, next);
                    self.mark_dirty(rr);
                    if self.clock.measured(next) {
                        record(&mut self.stats.lag, now - next);
                    }
                    rr = (rr + 1) % self.conns.len();
                    batch_no += 1;
                    offset = if poisson {
                        offset - self.rng.unit().ln() * mean_gap
                    } else {
                        batch_no as f64 * mean_gap
                    };
                    next = start + Duration::from_secs_f64(offset);
                    if next >= self.clock.end {
                        sending = false;
                        break;
                    }
                }
                // What the socket does not take now waits for WRITABLE.
                for i in std::mem::take(&mut self.dirty) {
                    self.conns[i].dirty = false;
                    if !self.flush(i) {
                        self.mark_dirty(i);
                    }
                }
            }
            if !sending {
                if self.outstanding() == 0 {
                    break;
                }
                if now >= self.clock.drain_until {
                    self.give_up();
                    break;
                }
            }
            // epoll waits whole milliseconds (mio rounds up): poll
            // without sleeping when the next batch is due sooner.
            let timeout = if sending {
                let wait = next.saturating_duration_since(Instant::now());
                if wait < Duration::from_millis(2) {
                    Duration::ZERO
                } else {
                    wait - Duration::from_millis(1)
                }
            } else {
                Duration::from_millis(10)
            };
            self.poll
                .poll(&mut events, Some(timeout))
                .unwrap_or_else(|e| die(&format!("poll: {e}")));
            for ev in events.iter() {
                let i = ev.token().0;
                if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                    self.on_readable(i);
                }
                if ev.is_writable() {
                    let c = &self.conns[i];
                    if c.out_pos < c.out.len() && !self.flush(i) {
                        self.mark_dirty(i);
                    }
                }
            }
        }
        self.stats
    }
}

/// SETs every key once over one blocking connection, in pipelined batches.
fn prefill(addr: std::net::SocketAddr, a: &Args, enc: &Encoder) {
    let mut s = std::net::TcpStream::connect(addr)
        .unwrap_or_else(|e| die(&format!("connect to {addr}: {e}")));
    const BATCH: u64 = 1000;
    let mut out = Vec::new();
    let mut inbuf = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    let mut k = 0;
    while k < a.keys {
        let n = BATCH.min(a.keys - k);
        out.clear();
        for j in k..k + n {
            enc.push_set(&mut out, j);
        }
        s.write_all(&out)
            .unwrap_or_else(|e| die(&format!("prefill write: {e}")));
        let mut got = 0;
        inbuf.clear();
        let mut pos = 0;
        while got < n {
            match reply_len(&inbuf[pos..]) {
                Ok(Some(len)) => {
                    pos += len;
                    got += 1;
                }
                Ok(None) => {
                    let r = s
                        .read(&mut chunk)
                        .unwrap_or_else(|e| die(&format!("prefill read: {e}")));
                    if r == 0 {
                        die("server closed the connection during prefill");
                    }
                    inbuf.extend_from_slice(&chunk[..r]);
                }
                Err(msg) => die(&format!("prefill: server replied with an error: {msg}")),
            }
        }
        k += n;
    }
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

fn main() {
    let a = parse_args();
    let addr: std::net::SocketAddr =
        std::net::ToSocketAddrs::to_socket_addrs(&(a.host.as_str(), a.port))
            .ok()
            .and_then(|mut it| it.next())
            .unwrap_or_else(|| die(&format!("cannot resolve {}:{}", a.host, a.port)));
    let enc = Encoder::new(&a);
    if a.prefill {
        prefill(addr, &a, &enc);
    }
    // Connect every connection before the clock starts.
    let open = a.rate > 0.0;
    let workers: Vec<Worker> = (0..a.threads)
        .map(|t| {
            let n = a.connections / a.threads + usize::from(t < a.connections % a.threads);
            let poll = Poll::new().unwrap_or_else(|e| die(&format!("epoll: {e}")));
            let conns = load_common::connect_all(PROG, &poll, addr, n, open)
                .into_iter()
                .map(|stream| Conn {
                    stream,
                    pending: VecDeque::new(),
                    partial: Vec::new(),
                    out: Vec::new(),
                    out_pos: 0,
                    dirty: false,
                })
                .collect();
            Worker {
                conns,
                poll,
                enc: Encoder::new(&a),
                rng: Rng::new(a.seed.wrapping_add(t as u64 * 7919)),
                pipeline: a.pipeline,
                // Replaced when the run starts.
                clock: Clock {
                    measure_from: Instant::now(),
                    end: Instant::now(),
                    drain_until: Instant::now(),
                },
                stats: Stats {
                    hist: new_hist(),
                    lag: new_hist(),
                    replies_in_window: 0,
                    unanswered: 0,
                },
                buf: vec![0u8; 256 * 1024],
                dirty: Vec::new(),
            }
        })
        .collect();
    let start = Instant::now();
    let measure_from = start + Duration::from_secs_f64(a.warmup);
    let end = measure_from + Duration::from_secs_f64(a.seconds);
    let drain_until = end + Duration::from_secs_f64(a.drain);
    let per_thread_rate = a.rate / a.threads as f64;
    let handles: Vec<_> = workers
        .into_iter()
        .map(|mut w| {
            w.clock = Clock {
                measure_from,
                end,
                drain_until,
            };
            let poisson = a.poisson;
            std::thread::spawn(move || {
                if open {
                    w.run_open(per_thread_rate, poisson, start)
                } else {
                    w.run_closed()
                }
            })
        })
        .collect();
    let mut hist = new_hist();
    let mut lag = new_hist();
    let mut replies = 0u64;
    let mut unanswered = 0u64;
    for h in handles {
        let s = h
            .join()
            .unwrap_or_else(|_| die("a generator thread panicked"));
        hist.add(&s.hist).expect("same bounds");
        lag.add(&s.lag).expect("same bounds");
        replies += s.replies_in_window;
        unanswered += s.unanswered;
    }
    let rps = replies as f64 / a.seconds;
    let mode = if open { "open" } else { "closed" };
    let q = |p: f64| us(hist.value_at_quantile(p));
    println!(
        "{mode} loop, {} connections, pipeline {}, SET:GET {}:{}, {} keys, {}-byte values, {} thread(s){}",
        a.connections,
        a.pipeline,
        a.set_weight,
        a.get_weight,
        a.keys,
        a.value_size,
        a.threads,
        if open {
            format!(
                ", target {:.0} requests/s ({})",
                a.rate,
                if a.poisson { "poisson" } else { "uniform" }
            )
        } else {
            String::new()
        }
    );
    println!(
        "throughput: {rps:.0} requests/s ({replies} replies in {:.1} s); recorded {} requests, {unanswered} unanswered",
        a.seconds,
        hist.len()
    );
    println!(
        "latency us: p50 {:.1}  p99 {:.1}  p99.9 {:.1}  p99.99 {:.1}  max {:.1}  (mean {:.1})",
        q(0.5),
        q(0.99),
        q(0.999),
        q(0.9999),
        us(hist.max()),
        hist.mean() / 1000.0
    );
    if open {
        println!(
            "send lag us (generator behind schedule): p99 {:.1}  max {:.1}",
            us(lag.value_at_quantile(0.99)),
            us(lag.max())
        );
    }
    println!(
        "RESULT mode={mode} connections={} pipeline={} ratio={}:{} keys={} value_size={} threads={} target_rps={:.0} rps={rps:.0} requests={} unanswered={unanswered} p50_us={:.1} p99_us={:.1} p999_us={:.1} p9999_us={:.1} max_us={:.1} mean_us={:.1} lag_p99_us={:.1} lag_max_us={:.1}",
        a.connections,
        a.pipeline,
        a.set_weight,
        a.get_weight,
        a.keys,
        a.value_size,
        a.threads,
        a.rate,
        hist.len(),
        q(0.5),
        q(0.99),
        q(0.999),
        q(0.9999),
        us(hist.max()),
        hist.mean() / 1000.0,
        us(lag.value_at_quantile(0.99)),
        us(lag.max())
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reply_len_splits_complete_replies_and_waits_for_partial_ones() {
        assert_eq!(reply_len(b"+OK\r\n$3\r\nabc\r\n"), Ok(Some(5)));
        assert_eq!(reply_len(b"$3\r\nabc\r\n+OK"), Ok(Some(9)));
        assert_eq!(reply_len(b"$-1\r\n"), Ok(Some(5)));
        assert_eq!(reply_len(b":12\r\n"), Ok(Some(5)));
        assert_eq!(reply_len(b"$3\r\nab"), Ok(None));
        assert_eq!(reply_len(b"$3\r\nabc\r"), Ok(None));
        assert_eq!(reply_len(b"+O"), Ok(None));
        assert_eq!(reply_len(b""), Ok(None));
        assert_eq!(
            reply_len(b"-ERR max number of clients reached\r\n"),
            Err("ERR max number of clients reached".to_string())
        );
        assert!(reply_len(b"*1\r\n+OK\r\n").is_err());
        assert!(reply_len(b"$x\r\n").is_err());
    }

    fn args() -> Args {
        Args {
            host: "127.0.0.1".into(),
            port: 0,
            connections: 1,
            pipeline: 1,
            set_weight: 1,
            get_weight: 3,
            keys: 1000,
            value_size: 5,
            seconds: 1.0,
            warmup: 0.0,
            drain: 0.0,
            threads: 1,
            prefill: false,
            rate: 0.0,
            poisson: false,
            seed: 1,
        }
    }

    #[test]
    fn encoder_writes_redis_benchmark_style_keys_and_values() {
        let enc = Encoder::new(&args());
        let mut out = Vec::new();
        enc.push_set(&mut out, 42);
        assert_eq!(
            out,
            b"*3\r\n$3\r\nSET\r\n$16\r\nkey:000000000042\r\n$5\r\nxxxxx\r\n"
        );
    }

    #[test]
    fn encoder_mix_follows_the_ratio_and_stays_in_the_key_space() {
        let enc = Encoder::new(&args());
        let mut rng = Rng::new(7);
        let (mut sets, mut gets) = (0, 0);
        for _ in 0..40_000 {
            let mut out = Vec::new();
            enc.push_random(&mut out, &mut rng);
            let key_at = out.windows(4).position(|w| w == b"key:").unwrap() + 4;
            let k: u64 = std::str::from_utf8(&out[key_at..key_at + 12])
                .unwrap()
                .parse()
                .unwrap();
            assert!(k < 1000);
            if out.starts_with(b"*3\r\n$3\r\nSET\r\n") {
                sets += 1;
            } else {
                assert!(out.starts_with(b"*2\r\n$3\r\nGET\r\n"));
                gets += 1;
            }
        }
        // 1:3 gives 10,000 SETs expected; 5 standard deviations is ~430.
        assert!((9_500..10_500).contains(&sets), "{sets} SETs, {gets} GETs");
    }
}
