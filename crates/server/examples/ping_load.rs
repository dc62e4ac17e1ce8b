//! A lean PING load generator, for when `redis-benchmark` is the bottleneck.
//!
//! `redis-benchmark -t ping_mbulk -P 16` on this 2-core machine saturates
//! its own core at about 1.2-1.5M requests/s, below what either server can
//! answer, so both servers measure the same and the ratio says nothing
//! about them (docs/BENCHMARKS.md). This program does the same work with
//! less client CPU per request: each of `--clients` connections sends a
//! batch of `--pipeline` `PING` commands in RESP multi-bulk form (what
//! redis-benchmark's PING_MBULK sends), waits for all of that batch's
//! replies, checks that each is `+PONG`, and sends the next batch. That is
//! the closed loop redis-benchmark runs; what is saved is its per-request
//! bookkeeping (reply objects, latency histograms, event-loop callbacks).
//! One thread, one `epoll`; one `write` and usually one `read` per batch.
//!
//! Prints `requests=N seconds=S requests_per_sec=R` for the measured part
//! (after `--warmup` seconds). Works against any RESP2 server.
//!
//! ```sh
//! cargo build --release -p server --example ping_load
//! taskset -c 1 target/release/examples/ping_load --port 6379 --clients 50 --pipeline 16 --seconds 10
//! ```
//! `scripts/bench-vs-redis --ping-load` runs it against petrel and
//! redis-server side by side. Its sibling `latency_load` runs GET/SET
//! mixes and records every request's latency (closed or open loop).

use std::io::{ErrorKind, Read, Write};
use std::time::{Duration, Instant};

mod load_common;

use mio::net::TcpStream;
use mio::{Events, Poll};

const REQUEST: &[u8] = b"*1\r\n$4\r\nPING\r\n";
const REPLY: &[u8] = b"+PONG\r\n";

struct Args {
    port: u16,
    clients: usize,
    pipeline: usize,
    seconds: f64,
    warmup: f64,
}

fn parse_args() -> Args {
    let mut a = Args {
        port: 6379,
        clients: 50,
        pipeline: 16,
        seconds: 10.0,
        warmup: 1.0,
    };
    for (name, n) in load_common::numeric_options("ping_load") {
        match name.as_str() {
            "--port" => a.port = n as u16,
            "--clients" => a.clients = (n as usize).max(1),
            "--pipeline" => a.pipeline = (n as usize).max(1),
            "--seconds" => a.seconds = n,
            "--warmup" => a.warmup = n,
            other => die(&format!("unknown option {other}")),
        }
    }
    a
}

fn die(msg: &str) -> ! {
    load_common::die("ping_load", msg)
}

/// One connection: how many reply bytes of its current batch have arrived.
struct Client {
    stream: TcpStream,
    received: usize,
}

fn main() {
    let a = parse_args();
    let batch: Vec<u8> = REQUEST.repeat(a.pipeline);
    let expected: Vec<u8> = REPLY.repeat(a.pipeline);
    let mut poll = Poll::new().unwrap();
    let addr: std::net::SocketAddr = format!("127.0.0.1:{}", a.port).parse().unwrap();
    let mut clients: Vec<Client> =
        load_common::connect_all("ping_load", &poll, addr, a.clients, false)
            .into_iter()
            .map(|stream| Client {
                stream,
                received: 0,
            })
            .collect();
    for c in clients.iter_mut() {
        send(&mut c.stream, &batch);
    }
    let mut events = Events::with_capacity(1024);
    let mut buf = vec![0u8; expected.len().max(64 * 1024)];
    let start = Instant::now();
    let measure_from = start + Duration::from_secs_f64(a.warmup);
    let end = measure_from + Duration::from_secs_f64(a.seconds);
    let mut batches_done = 0u64;
    let mut measured_since: Option<Instant> = None;
    loop {
        poll.poll(&mut events, Some(Duration::from_millis(50)))
            .unwrap();
        for ev in events.iter() {
            let c = &mut clients[ev.token().0];
            // Edge-triggered: a short read means the socket is drained, and
            // the next reply bytes raise a new event.
            loop {
                let n = match c.stream.read(&mut buf) {
                    Ok(0) => die("server closed the connection"),
                    Ok(n) => n,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) => die(&format!("read: {e}")),
                };
                let from = c.received;
                if from + n > expected.len() || buf[..n] != expected[from..from + n] {
                    die(&format!(
                        "unexpected reply: {:?}",
                        String::from_utf8_lossy(&buf[..n.min(64)])
                    ));
                }
                c.received += n;
                if c.received == expected.len() {
                    c.received = 0;
                    batches_done += 1;
                    send(&mut c.stream, &batch);
                    break;
                }
                if n < buf.len() {
                    break;
                }
            }
        }
        let now = Instant::now();
        if measured_since.is_none() && now >= measure_from {
            measured_since = Some(now);
            batches_done = 0;
        }
        if now >= end {
            break;
        }
    }
    let secs = measured_since.map_or(0.0, |t| t.elapsed().as_secs_f64());
    let requests = batches_done * a.pipeline as u64;
    println!(
        "requests={requests} seconds={secs:.2} requests_per_sec={:.0}",
        requests as f64 / secs
    );
}

fn send(stream: &mut TcpStream, bytes: &[u8]) {
    // A batch is far smaller than a socket's send buffer, and it is only
    // sent once the previous batch's replies are all in, so it never blocks.
    match stream.write(bytes) {
        Ok(n) if n == bytes.len() => {}
        Ok(n) => die(&format!("short write of {n} of {} bytes", bytes.len())),
        Err(e) => die(&format!("write: {e}")),
    }
}
