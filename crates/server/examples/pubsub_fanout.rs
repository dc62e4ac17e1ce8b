//! Pub/Sub fan-out load generator: N subscribers on one channel, one
//! publisher pipelining PUBLISH, for a fixed time. Prints messages delivered
//! per second (summed over subscribers) and the server's output backlog
//! behaviour. Works against any Redis-compatible server.
//!
//! ```sh
//! cargo run --release -p server --example pubsub_fanout -- --port 6379 --subscribers 1000 --seconds 10
//! ```
//! `scripts/bench-vs-redis --pubsub` runs it against petrel and redis-server
//! side by side, pinned to separate cores.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use mio::net::TcpStream as MioStream;
use mio::{Events, Interest, Poll, Token};

struct Args {
    port: u16,
    subscribers: usize,
    seconds: u64,
    pipeline: usize,
    payload: usize,
}

fn parse_args() -> Args {
    let mut a = Args {
        port: 6379,
        subscribers: 1000,
        seconds: 10,
        pipeline: 16,
        payload: 16,
    };
    let v: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i + 1 < v.len() {
        let n: u64 = v[i + 1].parse().expect("numeric argument");
        match v[i].as_str() {
            "--port" => a.port = n as u16,
            "--subscribers" => a.subscribers = n as usize,
            "--seconds" => a.seconds = n,
            "--pipeline" => a.pipeline = n as usize,
            "--payload" => a.payload = n as usize,
            other => panic!("unknown option {other}"),
        }
        i += 2;
    }
    a
}

fn main() {
    let a = parse_args();
    let channel = b"fanout";
    let payload = vec![b'x'; a.payload];
    // Every delivered message has exactly this RESP2 encoding.
    let message = format!(
        "*3\r\n$7\r\nmessage\r\n${}\r\n{}\r\n${}\r\n{}\r\n",
        channel.len(),
        std::str::from_utf8(channel).unwrap(),
        payload.len(),
        std::str::from_utf8(&payload).unwrap()
    );
    let confirm_len = format!(
        "*3\r\n$9\r\nsubscribe\r\n${}\r\nfanout\r\n:1\r\n",
        channel.len()
    )
    .len();

    let mut poll = Poll::new().unwrap();
    let mut subs = Vec::with_capacity(a.subscribers);
    for i in 0..a.subscribers {
        let mut s = TcpStream::connect(("127.0.0.1", a.port)).expect("connect subscriber");
        s.write_all(b"SUBSCRIBE fanout\r\n").unwrap();
        let mut buf = vec![0u8; confirm_len];
        s.read_exact(&mut buf).expect("subscribe confirmation");
        s.set_nonblocking(true).unwrap();
        let mut m = MioStream::from_std(s);
        poll.registry()
            .register(&mut m, Token(i), Interest::READABLE)
            .unwrap();
        subs.push(m);
    }

    let publisher = std::thread::spawn({
        let port = a.port;
        let pipeline = a.pipeline;
        let secs = a.seconds;
        let payload = payload.clone();
        move || {
            let mut p = TcpStream::connect(("127.0.0.1", port)).expect("connect publisher");
            let mut cmd = Vec::new();
            for _ in 0..pipeline {
                cmd.extend_from_slice(
                    format!(
                        "*3\r\n$7\r\nPUBLISH\r\n$6\r\nfanout\r\n${}\r\n",
                        payload.len()
                    )
                    .as_bytes(),
                );
                cmd.extend_from_slice(&payload);
                cmd.extend_from_slice(b"\r\n");
            }
            let start = Instant::now();
            let mut published = 0u64;
            let mut rbuf = vec![0u8; 64 * 1024];
            while start.elapsed() < Duration::from_secs(secs) {
                p.write_all(&cmd).unwrap();
                // Wait for the PUBLISH replies so the publisher is paced by the server.
                let mut lines = 0;
                while lines < pipeline {
                    let n = p.read(&mut rbuf).unwrap();
                    lines += rbuf[..n].iter().filter(|&&b| b == b'\n').count();
                }
                published += pipeline as u64;
            }
            (published, start.elapsed())
        }
    });

    let mut events = Events::with_capacity(1024);
    let mut buf = vec![0u8; 256 * 1024];
    let mut bytes = 0u64;
    let start = Instant::now();
    let deadline = Duration::from_secs(a.seconds);
    while start.elapsed() < deadline {
        poll.poll(&mut events, Some(Duration::from_millis(50)))
            .unwrap();
        for ev in events.iter() {
            let s = &mut subs[ev.token().0];
            loop {
                match s.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => bytes += n as u64,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(e) => panic!("subscriber read: {e}"),
                }
            }
        }
    }
    let elapsed = start.elapsed().as_secs_f64();
    let (published, _) = publisher.join().unwrap();
    let delivered = bytes / message.len() as u64;
    println!(
        "subscribers={} seconds={:.1} published={} delivered={} delivered_per_sec={:.0}",
        a.subscribers,
        elapsed,
        published,
        delivered,
        delivered as f64 / elapsed
    );
}
