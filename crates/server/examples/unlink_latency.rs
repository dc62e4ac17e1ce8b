//! UNLINK of a big set under a pinging client: builds a set of `--members`
//! members (`m:0`, `m:1`, ...), then, while a second connection sends PING
//! every millisecond, UNLINKs it. Prints the UNLINK round trip, the largest
//! gap between two PONGs, the slowest PING, and used_memory before the load,
//! after it, and once the memory came back. Works against any
//! Redis-compatible server.
//!
//! With `--flush`, it loads `--members` string keys (`k:N` = `v:N`, by
//! MSET) instead and sends `FLUSHALL ASYNC` instead of the UNLINK.
//!
//! ```sh
//! cargo run --release -p server --example unlink_latency -- --port 6379 --members 10000000
//! cargo run --release -p server --example unlink_latency -- --port 6379 --members 10000000 --flush
//! ```
//! `scripts/bench-vs-redis --unlink` runs it against petrel and redis-server.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

struct Conn {
    w: TcpStream,
    r: BufReader<TcpStream>,
}

#[derive(Debug)]
enum Reply {
    Line,
    Int(i64),
    Bulk(Vec<u8>),
    Nil,
}

impl Conn {
    fn new(port: u16) -> Conn {
        let w = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        w.set_nodelay(true).unwrap();
        let r = BufReader::new(w.try_clone().unwrap());
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
            b'+' => Reply::Line,
            b'-' => panic!("server error: {body}"),
            b':' => Reply::Int(body.parse().unwrap()),
            b'$' => {
                let n: i64 = body.parse().unwrap();
                if n < 0 {
                    return Reply::Nil;
                }
                let mut b = vec![0; n as usize + 2];
                self.r.read_exact(&mut b).unwrap();
                b.truncate(n as usize);
                Reply::Bulk(b)
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

    fn used_memory(&mut self) -> u64 {
        let Reply::Bulk(b) = self.cmd(&[b"INFO", b"memory"]) else {
            panic!("INFO")
        };
        String::from_utf8_lossy(&b)
            .lines()
            .find_map(|l| l.strip_prefix("used_memory:"))
            .and_then(|v| v.trim().parse().ok())
            .expect("used_memory")
    }
}

fn main() {
    let (mut port, mut members, mut flush) = (6379u16, 10_000_000usize, false);
    let mut v = std::env::args().skip(1);
    while let Some(a) = v.next() {
        match a.as_str() {
            "--port" => port = v.next().and_then(|x| x.parse().ok()).expect("--port N"),
            "--members" => members = v.next().and_then(|x| x.parse().ok()).expect("--members N"),
            "--flush" => flush = true,
            _ => panic!("usage: unlink_latency [--port N] [--members N] [--flush]"),
        }
    }
    let mut c = Conn::new(port);
    c.cmd(&[b"DEL", b"bigset"]);
    let base = c.used_memory();
    // Load: SADD of 1000 members per command, 20 commands in flight.
    let t0 = Instant::now();
    let per = 1000;
    let mut sent = 0;
    let mut pending = 0;
    while sent < members || pending > 0 {
        let mut out = Vec::new();
        while sent < members && pending < 20 {
            let range = sent..(sent + per).min(members);
            let names: Vec<String> = if flush {
                range
                    .flat_map(|i| [format!("k:{i}"), format!("v:{i}")])
                    .collect()
            } else {
                range.map(|i| format!("m:{i}")).collect()
            };
            let mut args: Vec<&[u8]> = if flush {
                vec![b"MSET"]
            } else {
                vec![b"SADD", b"bigset"]
            };
            args.extend(names.iter().map(|s| s.as_bytes()));
            Conn::encode(&mut out, &args);
            sent = (sent + per).min(members);
            pending += 1;
        }
        c.w.write_all(&out).unwrap();
        c.read();
        pending -= 1;
    }
    let load_s = t0.elapsed().as_secs_f64();
    let card_cmd: &[&[u8]] = if flush {
        &[b"DBSIZE"]
    } else {
        &[b"SCARD", b"bigset"]
    };
    let Reply::Int(card) = c.cmd(card_cmd) else {
        panic!("SCARD/DBSIZE")
    };
    let loaded = c.used_memory();

    // The pinger: one PING per millisecond, the gap between PONGs recorded.
    let stop = Arc::new(AtomicBool::new(false));
    let stop2 = stop.clone();
    let pinger = std::thread::spawn(move || {
        let mut p = Conn::new(port);
        let mut pongs: Vec<(Instant, Duration)> = Vec::with_capacity(1 << 16);
        let mut next = Instant::now();
        while !stop2.load(Ordering::Relaxed) {
            // Spin to the next millisecond instead of sleeping: on this VM
            // a 1 ms sleep overshoots by up to ~3 ms (seen as gaps before
            // the UNLINK), which would be charged to the server.
            while Instant::now() < next {
                std::hint::spin_loop();
            }
            next += Duration::from_millis(1);
            let sent = Instant::now();
            p.cmd(&[b"PING"]);
            let got = Instant::now();
            pongs.push((got, got - sent));
        }
        pongs
    });
    // Max gap between PONGs and max PING round trip over a time window.
    let window = |pongs: &[(Instant, Duration)], from: Instant, to: Instant| {
        let w: Vec<_> = pongs.iter().filter(|p| p.0 >= from && p.0 <= to).collect();
        let gap = w
            .windows(2)
            .map(|x| x[1].0 - x[0].0)
            .max()
            .unwrap_or_default();
        let rtt = w.iter().map(|x| x.1).max().unwrap_or_default();
        (w.len(), gap, rtt)
    };
    let quiet_from = Instant::now() + Duration::from_millis(100);
    std::thread::sleep(Duration::from_millis(300));
    let unlink_at = Instant::now();
    let r = if flush {
        c.cmd(&[b"FLUSHALL", b"ASYNC"])
    } else {
        c.cmd(&[b"UNLINK", b"bigset"])
    };
    let unlink = unlink_at.elapsed();
    assert!(
        matches!(r, Reply::Int(1) | Reply::Line),
        "UNLINK/FLUSHALL: {r:?}"
    );
    // Keep pinging while the memory is freed, until it is back (or 60 s).
    let t = Instant::now();
    let mut after = c.used_memory();
    while after > base + (loaded - base) / 20 && t.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(20));
        after = c.used_memory();
    }
    let freed_in = t.elapsed();
    let done = Instant::now();
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::Relaxed);
    let pongs = pinger.join().unwrap();
    let (qn, qgap, qrtt) = window(&pongs, quiet_from, unlink_at);
    let (n, gap, rtt) = window(&pongs, unlink_at, done + Duration::from_millis(300));
    println!(
        "members={card} load={load_s:.1}s used_memory: before={base} loaded={loaded} (+{:.1} B/member) after={after} (back within {:.0} ms)",
        (loaded - base) as f64 / card as f64,
        freed_in.as_secs_f64() * 1000.0
    );
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "{}={:.3} ms; from it until 300 ms after the memory is back: pings={n} max_gap_between_pongs={:.3} ms max_ping_rtt={:.3} ms; idle 200 ms before: pings={qn} max_gap={:.3} ms max_rtt={:.3} ms",
        if flush { "FLUSHALL_ASYNC" } else { "UNLINK" },
        ms(unlink),
        ms(gap),
        ms(rtt),
        ms(qgap),
        ms(qrtt)
    );
}
