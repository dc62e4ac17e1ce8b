//! Hot-small-hash load generator: many clients querying random fields of one
//! hash with HGET and HEXISTS (alternating), for a fixed time. Prints the
//! replies received per second. Works against any Redis-compatible server.
//!
//! ```sh
//! cargo run --release -p server --example hot_hash -- --port 6379 --clients 50 --seconds 10
//! ```
//! The hash must exist: fields are `f:000000` .. (8 bytes), `--fields` of
//! them. `scripts/bench-vs-redis --hot-hash` creates it and runs this
//! against petrel and redis-server in both encodings, side by side.

use std::io::{ErrorKind, Read, Write};
use std::time::{Duration, Instant};

use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};

struct Args {
    port: u16,
    clients: usize,
    seconds: u64,
    pipeline: usize,
    fields: usize,
}

fn parse_args() -> Args {
    let mut a = Args {
        port: 6379,
        clients: 50,
        seconds: 10,
        pipeline: 1,
        fields: 500,
    };
    let v: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i + 1 < v.len() {
        let n: u64 = v[i + 1].parse().expect("numeric argument");
        match v[i].as_str() {
            "--port" => a.port = n as u16,
            "--clients" => a.clients = n as usize,
            "--seconds" => a.seconds = n,
            "--pipeline" => a.pipeline = n as usize,
            "--fields" => a.fields = n as usize,
            other => panic!("unknown option {other}"),
        }
        i += 2;
    }
    a
}

/// The 8-byte name of field `i`.
pub fn field(i: usize) -> String {
    format!("f:{i:06}")
}

struct Client {
    stream: TcpStream,
    inbuf: Vec<u8>,
    outbuf: Vec<u8>,
    in_flight: usize,
    rng: u64,
    sent: u64,
}

impl Client {
    fn next_rand(&mut self) -> u64 {
        // xorshift64*
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn queue(&mut self, fields: usize) {
        let f = field((self.next_rand() % fields as u64) as usize);
        let cmd = if self.sent.is_multiple_of(2) {
            "HGET"
        } else {
            "HEXISTS"
        };
        self.sent += 1;
        let _ = write!(
            self.outbuf,
            "*3\r\n${}\r\n{cmd}\r\n$1\r\nh\r\n${}\r\n{f}\r\n",
            cmd.len(),
            f.len()
        );
        self.in_flight += 1;
    }

    /// Consumes complete replies from `inbuf`; returns how many.
    fn take_replies(&mut self) -> u64 {
        let mut n = 0;
        let mut pos = 0;
        let buf = &self.inbuf;
        while let Some(eol) = buf[pos..].windows(2).position(|w| w == b"\r\n") {
            let line = &buf[pos..pos + eol];
            let mut end = pos + eol + 2;
            match line.first() {
                Some(b'$') => {
                    let len: i64 = std::str::from_utf8(&line[1..]).unwrap().parse().unwrap();
                    if len >= 0 {
                        end += len as usize + 2;
                        if end > buf.len() {
                            break;
                        }
                    }
                }
                Some(b':') | Some(b'_') => {}
                other => panic!("unexpected reply {:?}", other.map(|b| *b as char)),
            }
            pos = end;
            n += 1;
        }
        self.inbuf.drain(..pos);
        self.in_flight -= n as usize;
        n
    }
}

fn main() {
    let a = parse_args();
    let mut poll = Poll::new().unwrap();
    let addr: std::net::SocketAddr = format!("127.0.0.1:{}", a.port).parse().unwrap();
    let mut clients: Vec<Client> = (0..a.clients)
        .map(|i| {
            let s = std::net::TcpStream::connect(addr).expect("connect");
            s.set_nodelay(true).unwrap();
            s.set_nonblocking(true).unwrap();
            let mut stream = TcpStream::from_std(s);
            poll.registry()
                .register(
                    &mut stream,
                    Token(i),
                    Interest::READABLE | Interest::WRITABLE,
                )
                .unwrap();
            Client {
                stream,
                inbuf: Vec::with_capacity(64 * 1024),
                outbuf: Vec::new(),
                in_flight: 0,
                rng: 0x9e37_79b9_7f4a_7c15 ^ (i as u64 + 1).wrapping_mul(0x1234_5678_9abc_def1),
                sent: i as u64,
            }
        })
        .collect();
    for c in clients.iter_mut() {
        for _ in 0..a.pipeline {
            c.queue(a.fields);
        }
    }
    let mut events = Events::with_capacity(1024);
    let start = Instant::now();
    let end = start + Duration::from_secs(a.seconds);
    let mut total = 0u64;
    let mut buf = vec![0u8; 64 * 1024];
    while Instant::now() < end {
        poll.poll(&mut events, Some(Duration::from_millis(50)))
            .unwrap();
        for ev in events.iter() {
            let c = &mut clients[ev.token().0];
            if ev.is_readable() {
                loop {
                    match c.stream.read(&mut buf) {
                        Ok(0) => panic!("server closed the connection"),
                        Ok(n) => c.inbuf.extend_from_slice(&buf[..n]),
                        Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                        Err(e) => panic!("read: {e}"),
                    }
                }
                let got = c.take_replies();
                total += got;
                for _ in 0..got {
                    c.queue(a.fields);
                }
            }
            while !c.outbuf.is_empty() {
                match c.stream.write(&c.outbuf) {
                    Ok(n) => {
                        c.outbuf.drain(..n);
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) => panic!("write: {e}"),
                }
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "ops={total} seconds={secs:.2} ops_per_sec={:.0}",
        total as f64 / secs
    );
}
