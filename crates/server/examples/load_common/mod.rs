//! What the load generators `ping_load`, `latency_load` and
//! `fullsync_load` share: exiting with a usage error, reading numeric
//! `--name value` options, and opening many non-blocking connections
//! registered with one `mio::Poll`.
//!
//! Invariant: connection `i` of a `connect_all` call is registered under
//! `Token(i)`, readable and (if asked) writable, edge-triggered, with
//! `TCP_NODELAY` set, so a batch of requests leaves in one segment.

// Each example compiles this module on its own and uses part of it.
#![allow(dead_code)]

use mio::net::TcpStream;
use mio::{Interest, Poll, Token};

/// Prints `prog: msg` and exits with status 2 (a usage or run error).
pub fn die(prog: &str, msg: &str) -> ! {
    eprintln!("{prog}: {msg}");
    std::process::exit(2)
}

/// The command line as `--name number` pairs, in order: every option
/// takes one numeric value; anything else exits through [`die`].
pub fn numeric_options(prog: &str) -> Vec<(String, f64)> {
    let v: Vec<String> = std::env::args().skip(1).collect();
    if !v.len().is_multiple_of(2) {
        die(prog, &format!("options take a value: {v:?}"));
    }
    v.chunks(2)
        .map(|pair| {
            let n = pair[1].parse().unwrap_or_else(|_| {
                die(
                    prog,
                    &format!("{} needs a number, got {}", pair[0], pair[1]),
                )
            });
            (pair[0].clone(), n)
        })
        .collect()
}

/// Opens `n` connections to `addr` (blocking connects, then non-blocking
/// sockets) and registers connection `i` with `poll` as `Token(i)`.
pub fn connect_all(
    prog: &str,
    poll: &Poll,
    addr: std::net::SocketAddr,
    n: usize,
    writable: bool,
) -> Vec<TcpStream> {
    let interest = if writable {
        Interest::READABLE | Interest::WRITABLE
    } else {
        Interest::READABLE
    };
    (0..n)
        .map(|i| {
            let s = std::net::TcpStream::connect(addr)
                .unwrap_or_else(|e| die(prog, &format!("connect #{i} to {addr}: {e}")));
            s.set_nodelay(true).unwrap();
            s.set_nonblocking(true).unwrap();
            let mut stream = TcpStream::from_std(s);
            poll.registry()
                .register(&mut stream, Token(i), interest)
                .unwrap_or_else(|e| die(prog, &format!("register #{i}: {e}")));
            stream
        })
        .collect()
}
