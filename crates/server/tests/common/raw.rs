//! A raw protocol connection: send exact bytes, read one RESP reply at a time
//! with `resp::parse_value`, detect when the server closed the connection.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use resp::Value;

/// What reading one reply produced.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// A complete reply.
    Value(Value),
    /// The server closed the connection (EOF or reset) before a reply.
    Closed,
    /// Nothing (complete) arrived in time.
    Timeout,
    /// Bytes that are not RESP (with what was received).
    Invalid(String),
    /// The command was sent without waiting for a reply (`# noreply`).
    NotRead,
}

impl std::fmt::Display for Reply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reply::Value(v) => write!(f, "{v}"),
            Reply::Closed => f.write_str("<connection closed>"),
            Reply::Timeout => f.write_str("<no reply: timeout>"),
            Reply::Invalid(s) => write!(f, "<invalid RESP: {s}>"),
            Reply::NotRead => f.write_str("<not read>"),
        }
    }
}

enum Sock {
    Tcp(TcpStream),
    Unix(UnixStream),
}

/// A raw client connection.
pub struct RawConn {
    sock: Sock,
    buf: Vec<u8>,
    /// How long [`RawConn::read_reply`] waits (default 10 s).
    pub timeout: Duration,
}

impl RawConn {
    pub fn tcp(port: u16) -> RawConn {
        let s = TcpStream::connect(("127.0.0.1", port))
            .unwrap_or_else(|e| panic!("connect 127.0.0.1:{port}: {e}"));
        let _ = s.set_nodelay(true);
        RawConn::new(Sock::Tcp(s))
    }

    pub fn try_tcp(port: u16) -> std::io::Result<RawConn> {
        let s = TcpStream::connect(("127.0.0.1", port))?;
        let _ = s.set_nodelay(true);
        Ok(RawConn::new(Sock::Tcp(s)))
    }

    pub fn unix(path: &str) -> RawConn {
        let s = UnixStream::connect(path).unwrap_or_else(|e| panic!("connect {path}: {e}"));
        RawConn::new(Sock::Unix(s))
    }

    fn new(sock: Sock) -> RawConn {
        RawConn {
            sock,
            buf: Vec::new(),
            timeout: Duration::from_secs(10),
        }
    }

    /// The underlying TCP stream (e.g. to shrink its receive buffer).
    pub fn tcp_stream(&self) -> Option<&TcpStream> {
        match &self.sock {
            Sock::Tcp(s) => Some(s),
            Sock::Unix(_) => None,
        }
    }

    fn set_read_timeout(&self, t: Duration) {
        let t = Some(t.max(Duration::from_millis(1)));
        let _ = match &self.sock {
            Sock::Tcp(s) => s.set_read_timeout(t),
            Sock::Unix(s) => s.set_read_timeout(t),
        };
    }

    /// Writes all of `bytes`; Err if the server closed the connection.
    pub fn try_send(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        match &mut self.sock {
            Sock::Tcp(s) => s.write_all(bytes),
            Sock::Unix(s) => s.write_all(bytes),
        }
    }

    /// Writes all of `bytes`, panicking on error.
    pub fn send(&mut self, bytes: &[u8]) {
        self.try_send(bytes).expect("send to server");
    }

    /// Sends one command as a RESP multibulk request (no read).
    pub fn send_cmd<A: AsRef<[u8]>>(&mut self, args: &[A]) {
        let b = resp::encode_command(args);
        self.send(&b);
    }

    /// Sends a command and reads its reply; panics if there is none.
    pub fn cmd<A: AsRef<[u8]>>(&mut self, args: &[A]) -> Value {
        self.send_cmd(args);
        self.read_reply()
    }

    /// Sends a command and reads what comes back, whatever it is.
    pub fn try_cmd<A: AsRef<[u8]>>(&mut self, args: &[A]) -> Reply {
        let b = resp::encode_command(args);
        if self.try_send(&b).is_err() {
            // The reply may already be buffered (e.g. an error before close).
            return self.read_reply_within(Duration::from_millis(500));
        }
        self.try_read_reply()
    }

    /// Reads one reply; panics on timeout, close or invalid bytes.
    pub fn read_reply(&mut self) -> Value {
        match self.try_read_reply() {
            Reply::Value(v) => v,
            other => panic!("expected a reply, got {other}"),
        }
    }

    /// Reads one reply within [`RawConn::timeout`].
    pub fn try_read_reply(&mut self) -> Reply {
        self.read_reply_within(self.timeout)
    }

    /// Reads one reply within `timeout`.
    pub fn read_reply_within(&mut self, timeout: Duration) -> Reply {
        self.read_reply_with(timeout, resp::parse_value)
    }

    /// Reads one reply within `timeout`, parsed by `parse` (same contract
    /// as `resp::parse_value`: a value and the bytes it took, or None
    /// while incomplete).
    pub fn read_reply_with(
        &mut self,
        timeout: Duration,
        parse: impl Fn(&[u8]) -> Result<Option<(Value, usize)>, resp::ValueError>,
    ) -> Reply {
        let end = Instant::now() + timeout;
        loop {
            match parse(&self.buf) {
                Ok(Some((v, n))) => {
                    self.buf.drain(..n);
                    return Reply::Value(v);
                }
                Ok(None) => {}
                Err(e) => {
                    return Reply::Invalid(format!("{e}: {:?}", String::from_utf8_lossy(&self.buf)))
                }
            }
            let now = Instant::now();
            if now >= end {
                return Reply::Timeout;
            }
            match self.read_some(end - now) {
                Ok(0) => return Reply::Closed,
                Ok(_) => {}
                Err(e)
                    if e.kind() == std::io::ErrorKind::WouldBlock
                        || e.kind() == std::io::ErrorKind::TimedOut =>
                {
                    return Reply::Timeout
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return Reply::Closed,
            }
        }
    }

    fn read_some(&mut self, timeout: Duration) -> std::io::Result<usize> {
        self.set_read_timeout(timeout);
        let mut chunk = [0u8; 64 * 1024];
        let n = match &mut self.sock {
            Sock::Tcp(s) => s.read(&mut chunk)?,
            Sock::Unix(s) => s.read(&mut chunk)?,
        };
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(n)
    }

    /// Reads raw bytes until `n` are buffered (or timeout); returns them.
    pub fn read_bytes(&mut self, n: usize) -> Vec<u8> {
        let end = Instant::now() + self.timeout;
        while self.buf.len() < n && Instant::now() < end {
            match self.read_some(end.saturating_duration_since(Instant::now())) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        let k = n.min(self.buf.len());
        self.buf.drain(..k).collect()
    }

    /// Reads one CRLF-terminated line (without CRLF), e.g. a MONITOR line.
    pub fn read_line(&mut self) -> Option<String> {
        let end = Instant::now() + self.timeout;
        loop {
            if let Some(i) = self.buf.windows(2).position(|w| w == b"\r\n") {
                let line: Vec<u8> = self.buf.drain(..i + 2).take(i).collect();
                return Some(String::from_utf8_lossy(&line).into_owned());
            }
            let now = Instant::now();
            if now >= end {
                return None;
            }
            match self.read_some(end - now) {
                Ok(0) => return None,
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return None,
            }
        }
    }

    /// True if the server closes the connection within `timeout` (bytes
    /// received before the close are kept for later reads).
    pub fn closed_within(&mut self, timeout: Duration) -> bool {
        let end = Instant::now() + timeout;
        loop {
            let now = Instant::now();
            if now >= end {
                return false;
            }
            match self.read_some(end - now) {
                Ok(0) => return true,
                Ok(_) => {}
                Err(e)
                    if e.kind() == std::io::ErrorKind::WouldBlock
                        || e.kind() == std::io::ErrorKind::TimedOut =>
                {
                    return false
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return true,
            }
        }
    }

    /// Asserts the server closes the connection within 5 s.
    pub fn assert_closed(&mut self) {
        assert!(
            self.closed_within(Duration::from_secs(5)),
            "connection still open; unread: {:?}",
            String::from_utf8_lossy(&self.buf)
        );
    }

    /// Sends `bytes`, expects exactly the error `-{err}` and then a close.
    pub fn expect_error_and_close(&mut self, bytes: &[u8], err: &str) {
        let _ = self.try_send(bytes);
        match self.try_read_reply() {
            Reply::Value(Value::Error(e)) => assert_eq!(
                String::from_utf8_lossy(&e),
                err,
                "for input {:?}",
                String::from_utf8_lossy(&bytes[..bytes.len().min(200)])
            ),
            other => panic!(
                "expected error {err:?} for input {:?}, got {other}",
                String::from_utf8_lossy(&bytes[..bytes.len().min(200)])
            ),
        }
        self.assert_closed();
    }

    /// Bytes received but not yet consumed.
    pub fn pending(&self) -> &[u8] {
        &self.buf
    }
}
