//! What the load generators `ping_load` and `latency_load` share: exiting
//! with a usage error, and opening many non-blocking connections
//! registered with one `mio::Poll`.
//!
//! Invariant: connection `i` of a `connect_all` call is registered under
//! `Token(i)`, readable and (if asked) writable, edge-triggered, with
//! `TCP_NODELAY` set, so a batch of requests leaves in one segment.

use mio::net::TcpStream;
use mio::{Interest, Poll, Token};

/// Prints `prog: msg` and exits with status 2 (a usage or run error).
pub fn die(prog: &str, msg: &str) -> ! {
    eprintln!("{prog}: {msg}");
    std::process::exit(2)
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
