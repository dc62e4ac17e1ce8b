//! MIGRATE's connections to target instances: a cache of open sockets by
//! `host:port` (as Redis keeps them: at most [`CACHE_ITEMS`], each closed
//! after [`CACHE_TTL_S`] seconds unused, the database last selected on it
//! remembered so SELECT is only sent when it changes), and one blocking
//! request/reply exchange over such a socket.
//!
//! Invariants:
//! * A cached socket is used by one MIGRATE at a time: it is taken out of
//!   its slot ([`checkout`]) and put back ([`checkin`]) or dropped
//!   ([`discard`]) by that MIGRATE. A second MIGRATE to the same target
//!   meanwhile opens a socket of its own that is not cached.
//! * The number of entries (INFO's `migrate_cached_sockets`) never passes
//!   [`CACHE_ITEMS`]; a new target evicts a random idle one when full.
//! * `last_db` is `None` whenever the target's selected database is not
//!   known (new socket, or after an error reply).
//!
//! With `tls-cluster yes` the connection speaks TLS, as Redis's MIGRATE
//! uses the cluster's connection type: the server's TLS dialer
//! (`services::replication::socket`), with the client certificate and
//! CAs of the settings, handshake within the MIGRATE timeout.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};

use crate::kernel::config::Settings;
use crate::services::replication::socket::Socket;
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// Seconds an unused cached socket stays open (Redis's
/// MIGRATE_SOCKET_CACHE_TTL).
pub const CACHE_TTL_S: u64 = 10;
/// Most sockets cached at once (Redis's MIGRATE_SOCKET_CACHE_ITEMS).
pub const CACHE_ITEMS: usize = 64;

/// Longest reply line read (Redis reads replies into 1 KiB buffers).
const LINE_MAX: usize = 1023;

/// An open connection to a target instance.
#[derive(Debug)]
pub struct Target {
    stream: Socket,
    buf: Vec<u8>,
    /// The database selected on it, when known.
    pub last_db: Option<i64>,
    last_use: Instant,
}

/// The cache: `host:port` -> the idle socket, or `None` while a MIGRATE
/// holds it.
static CACHE: LazyLock<Mutex<HashMap<String, Option<Target>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// Sockets cached (INFO's `migrate_cached_sockets`), those in use included.
pub fn cached() -> usize {
    CACHE.lock().len()
}

/// Redis's `atoi` of a port argument: leading digits, 0 if none.
fn port_of(arg: &[u8]) -> u32 {
    let mut n: u32 = 0;
    for &b in arg.iter().skip_while(|b| b.is_ascii_whitespace()) {
        if !b.is_ascii_digit() {
            break;
        }
        n = n.saturating_mul(10).saturating_add((b - b'0') as u32);
    }
    n
}

/// Why no connection was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectFail {
    /// The address did not resolve, or the connection did not complete
    /// within the timeout: Redis's "error or timeout connecting".
    Connecting,
    /// The target refused (or reset) it. Redis connects without waiting
    /// for the outcome and learns this when it writes the request, so it
    /// is a write error (one retry, then "error or timeout writing").
    Refused,
}

/// Opens a TCP connection within `timeout` (every address the host
/// resolves to is tried).
fn connect(host: &str, port: &[u8], timeout: Duration) -> Result<TcpStream, ConnectFail> {
    let port = port_of(port);
    if port > 65535 {
        return Err(ConnectFail::Connecting);
    }
    if port == 0 {
        return Err(ConnectFail::Refused);
    }
    let addrs = (host, port as u16)
        .to_socket_addrs()
        .map_err(|_| ConnectFail::Connecting)?;
    let mut fail = ConnectFail::Connecting;
    for a in addrs {
        match TcpStream::connect_timeout(&a, timeout) {
            Ok(s) => {
                let _ = s.set_nodelay(true);
                return Ok(s);
            }
            Err(e) if timed_out(&e) => {}
            Err(_) => fail = ConnectFail::Refused,
        }
    }
    Err(fail)
}

/// A socket to `host`:`port` and whether it is the cache's: the cached
/// one if idle, else a new connection (cached when the target had none).
pub fn checkout(
    host: &[u8],
    port: &[u8],
    timeout: Duration,
    settings: &Settings,
) -> Result<(Target, bool), ConnectFail> {
    let name = cache_name(host, port);
    {
        let mut c = CACHE.lock();
        if let Some(slot) = c.get_mut(&name) {
            if let Some(mut t) = slot.take() {
                t.last_use = Instant::now();
                return Ok((t, true));
            }
        }
    }
    let host_text = String::from_utf8_lossy(host);
    let tcp = connect(&host_text, port, timeout)?;
    let stream = if settings.tls.cluster {
        tcp.set_read_timeout(Some(timeout))
            .and_then(|_| tcp.set_write_timeout(Some(timeout)))
            .map_err(|_| ConnectFail::Connecting)?;
        let dial =
            crate::services::replication::socket::tls_dialer().ok_or(ConnectFail::Connecting)?;
        Socket::Shared(dial(tcp, &host_text, settings).map_err(|_| ConnectFail::Connecting)?)
    } else {
        Socket::Tcp(tcp)
    };
    let t = Target {
        stream,
        buf: Vec::new(),
        last_db: None,
        last_use: Instant::now(),
    };
    let mut c = CACHE.lock();
    if c.contains_key(&name) {
        // Another MIGRATE holds the cached one: this socket is temporary.
        return Ok((t, false));
    }
    if c.len() >= CACHE_ITEMS {
        // Too many: drop an idle one (the map's order is arbitrary).
        let victim = c.iter().find(|(_, v)| v.is_some()).map(|(k, _)| k.clone());
        match victim {
            Some(k) => {
                c.remove(&k);
            }
            None => return Ok((t, false)),
        }
    }
    c.insert(name, None);
    Ok((t, true))
}

fn cache_name(host: &[u8], port: &[u8]) -> String {
    format!(
        "{}:{}",
        String::from_utf8_lossy(host),
        String::from_utf8_lossy(port)
    )
}

/// Puts a socket taken with [`checkout`] back (a temporary one closes).
pub fn checkin(host: &[u8], port: &[u8], mut t: Target, cached: bool) {
    if !cached {
        return;
    }
    t.last_use = Instant::now();
    if let Some(slot) = CACHE.lock().get_mut(&cache_name(host, port)) {
        if slot.is_none() {
            *slot = Some(t);
        }
    }
}

/// Closes a socket taken with [`checkout`] and forgets its cache entry
/// (after a socket error: the next MIGRATE connects again).
pub fn discard(host: &[u8], port: &[u8], t: Target, cached: bool) {
    drop(t);
    if cached {
        let mut c = CACHE.lock();
        let name = cache_name(host, port);
        if matches!(c.get(&name), Some(None)) {
            c.remove(&name);
        }
    }
}

/// Closes the cached sockets unused for [`CACHE_TTL_S`] seconds (the cron,
/// once a second).
pub fn close_idle() {
    let ttl = Duration::from_secs(CACHE_TTL_S);
    CACHE
        .lock()
        .retain(|_, v| v.as_ref().is_none_or(|t| t.last_use.elapsed() <= ttl));
}

/// Why an exchange stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoFail {
    /// While writing the request (else while reading replies).
    pub writing: bool,
    /// The timeout passed (a closed connection is not a timeout).
    pub timed_out: bool,
}

fn timed_out(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

impl Target {
    /// Sends `request` (whole, within `timeout` per 64 KiB piece).
    pub fn send(&mut self, request: &[u8], timeout: Duration) -> Result<(), IoFail> {
        let fail = |e: &std::io::Error| IoFail {
            writing: true,
            timed_out: timed_out(e),
        };
        self.stream
            .prepare(Some(timeout), Some(timeout))
            .map_err(|e| fail(&e))?;
        for piece in request.chunks(64 * 1024) {
            self.stream.write_all(piece).map_err(|e| fail(&e))?;
        }
        Ok(())
    }

    /// One reply line without its CRLF (at most [`LINE_MAX`] bytes kept),
    /// waiting up to `timeout` in all.
    pub fn line(&mut self, timeout: Duration) -> Result<Vec<u8>, IoFail> {
        let end = Instant::now() + timeout;
        let fail = |timed_out| IoFail {
            writing: false,
            timed_out,
        };
        loop {
            if let Some(i) = self.buf.iter().position(|&b| b == b'\n') {
                let mut l: Vec<u8> = self.buf.drain(..=i).collect();
                l.pop();
                if l.last() == Some(&b'\r') {
                    l.pop();
                }
                l.truncate(LINE_MAX);
                return Ok(l);
            }
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(fail(true));
            }
            self.stream
                .prepare(Some(left), Some(left))
                .map_err(|_| fail(false))?;
            let mut chunk = [0u8; 4096];
            match self.stream.read(&mut chunk) {
                Ok(0) => return Err(fail(false)),
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                // A TLS session may read a record that holds no reply
                // bytes (a TLS 1.3 session ticket) and report WouldBlock
                // before the time is up: wait on until it is.
                Err(e) if timed_out(&e) && Instant::now() < end => {}
                Err(e) => return Err(fail(timed_out(&e))),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_parse_like_atoi() {
        assert_eq!(port_of(b"6379"), 6379);
        assert_eq!(port_of(b"63x"), 63);
        assert_eq!(port_of(b"x"), 0);
        assert_eq!(port_of(b""), 0);
        assert_eq!(port_of(b"99999999999999"), u32::MAX);
    }

    #[test]
    fn lines_are_split_and_a_closed_peer_is_no_timeout() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port().to_string();
        let h = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            s.write_all(b"+OK\r\n-ERR bad\r\n+NO").unwrap();
        });
        let (mut t, cached) = checkout(
            b"127.0.0.1",
            port.as_bytes(),
            Duration::from_secs(5),
            &Settings::default(),
        )
        .expect("connects");
        h.join().unwrap();
        let d = Duration::from_secs(5);
        assert_eq!(t.line(d).unwrap(), b"+OK");
        assert_eq!(t.line(d).unwrap(), b"-ERR bad");
        assert_eq!(
            t.line(d),
            Err(IoFail {
                writing: false,
                timed_out: false
            })
        );
        discard(b"127.0.0.1", port.as_bytes(), t, cached);
        assert!(!CACHE.lock().contains_key(&format!("127.0.0.1:{port}")));
    }

    #[test]
    fn a_silent_peer_times_out() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port().to_string();
        let (mut t, cached) = checkout(
            b"127.0.0.1",
            port.as_bytes(),
            Duration::from_secs(5),
            &Settings::default(),
        )
        .unwrap();
        let r = t.line(Duration::from_millis(50));
        assert_eq!(
            r,
            Err(IoFail {
                writing: false,
                timed_out: true
            })
        );
        // Held while in use, then idle in the cache.
        assert!(matches!(
            CACHE.lock().get(&format!("127.0.0.1:{port}")),
            Some(None)
        ));
        checkin(b"127.0.0.1", port.as_bytes(), t, cached);
        assert!(matches!(
            CACHE.lock().get(&format!("127.0.0.1:{port}")),
            Some(Some(_))
        ));
        drop(l);
    }

    #[test]
    fn a_closed_port_does_not_connect() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port().to_string();
        drop(l);
        let refused = |port: &[u8]| {
            checkout(
                b"127.0.0.1",
                port,
                Duration::from_secs(1),
                &Settings::default(),
            )
            .expect_err("no connection")
        };
        assert_eq!(refused(port.as_bytes()), ConnectFail::Refused);
        assert_eq!(refused(b"x"), ConnectFail::Refused);
        assert_eq!(refused(b"70000"), ConnectFail::Connecting);
        assert_eq!(
            checkout(
                b"no.such.host.invalid",
                b"1",
                Duration::from_secs(1),
                &Settings::default()
            )
            .expect_err("no connection"),
            ConnectFail::Connecting
        );
    }
}
