//! TLS for the cluster bus (`tls-cluster yes`, issue 26): the two
//! contexts bus links use and [`BusStream`], the non-blocking stream a
//! bus link reads and writes, plain TCP or TLS over TCP.
//!
//! As in Redis 7.0, the bus speaks plain TLS on the bus port: the node
//! that accepts a link is the TLS server and always requires the peer's
//! certificate (whatever `tls-auth-clients` says), checked against
//! `tls-ca-cert-file`/`-dir`; the node that opens a link is the TLS
//! client, presenting `tls-client-cert-file`/`-key-file` when set, else
//! `tls-cert-file`/`-key-file`, and checking the peer's chain (not its
//! name) against the same CAs. Both use the protocols and suites of
//! `tls-protocols`, `tls-ciphers` and `tls-ciphersuites`.
//!
//! Invariants:
//! * [`current`] holds contexts exactly when `tls-cluster` is on and TLS
//!   could be configured; [`install`] replaces them (startup and CONFIG
//!   SET, with the listener's context). A link keeps the context it
//!   started with, and whether it is TLS is decided when it is made.
//! * A [`BusStream`] never blocks; `read` returns `WouldBlock` only after
//!   the socket did (the bus polls edge-triggered); encrypted bytes rustls
//!   queued go out on the next `read`, `write` or [`BusStream::flush_tls`].

use std::io::{self, Read, Write};
use std::sync::Arc;

use commands::kernel::config::{TlsAuthClients, TlsSettings};
use mio::net::TcpStream;
use parking_lot::RwLock;
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, Connection, ServerConfig, ServerConnection};

/// The bus's contexts: accepting (TLS server) and connecting (TLS client).
#[derive(Clone)]
pub struct BusContexts {
    pub accept: Arc<ServerConfig>,
    pub connect: Arc<ClientConfig>,
}

static CURRENT: RwLock<Option<BusContexts>> = RwLock::new(None);

/// The contexts for new bus links, when `tls-cluster` is on.
pub fn current() -> Option<BusContexts> {
    CURRENT.read().clone()
}

/// Makes `c` the contexts of new bus links.
pub fn install(c: Option<BusContexts>) {
    *CURRENT.write() = c;
}

/// The bus's contexts for the settings: none without `tls-cluster`.
pub fn build(t: &TlsSettings) -> Result<Option<BusContexts>, String> {
    if !t.cluster {
        return Ok(None);
    }
    Ok(Some(BusContexts {
        accept: crate::tls::build_with(t, TlsAuthClients::Yes)?,
        connect: crate::tls_link::client_config(t)?,
    }))
}

/// One bus connection's byte stream.
pub enum BusStream {
    Plain(TcpStream),
    Tls(Box<TlsPart>),
}

/// A TLS session over a non-blocking socket.
pub struct TlsPart {
    tcp: TcpStream,
    conn: Connection,
}

impl BusStream {
    /// The server side of a link accepted on the bus port.
    pub fn accepted(tcp: TcpStream, ctx: &BusContexts) -> io::Result<BusStream> {
        let conn = ServerConnection::new(ctx.accept.clone()).map_err(io::Error::other)?;
        Ok(BusStream::Tls(Box::new(TlsPart {
            tcp,
            conn: Connection::Server(conn),
        })))
    }

    /// The client side of a link this node opens to `ip` (the name is
    /// not checked, see the module doc).
    pub fn connecting(
        tcp: TcpStream,
        ip: std::net::IpAddr,
        ctx: &BusContexts,
    ) -> io::Result<BusStream> {
        let conn = ClientConnection::new(ctx.connect.clone(), ServerName::IpAddress(ip.into()))
            .map_err(io::Error::other)?;
        Ok(BusStream::Tls(Box::new(TlsPart {
            tcp,
            conn: Connection::Client(conn),
        })))
    }

    pub fn tcp(&self) -> &TcpStream {
        match self {
            BusStream::Plain(t) => t,
            BusStream::Tls(p) => &p.tcp,
        }
    }

    pub fn tcp_mut(&mut self) -> &mut TcpStream {
        match self {
            BusStream::Plain(t) => t,
            BusStream::Tls(p) => &mut p.tcp,
        }
    }

    pub fn peer_addr(&self) -> io::Result<std::net::SocketAddr> {
        self.tcp().peer_addr()
    }

    pub fn local_addr(&self) -> io::Result<std::net::SocketAddr> {
        self.tcp().local_addr()
    }

    pub fn is_tls(&self) -> bool {
        matches!(self, BusStream::Tls(_))
    }

    /// A TLS stream still in its handshake.
    pub fn handshaking(&self) -> bool {
        matches!(self, BusStream::Tls(p) if p.conn.is_handshaking())
    }

    /// Sends the encrypted bytes rustls has queued; `WouldBlock` if the
    /// socket is full. Plain streams queue nothing.
    pub fn flush_tls(&mut self) -> io::Result<()> {
        match self {
            BusStream::Plain(_) => Ok(()),
            BusStream::Tls(p) => p.flush_tls(),
        }
    }

    /// Encrypted bytes wait for the socket.
    pub fn tls_pending(&self) -> bool {
        matches!(self, BusStream::Tls(p) if p.conn.wants_write())
    }
}

impl TlsPart {
    fn flush_tls(&mut self) -> io::Result<()> {
        while self.conn.wants_write() {
            match self.conn.write_tls(&mut self.tcp) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// [`TlsPart::flush_tls`], a full socket not being an error.
    fn flush_some(&mut self) -> io::Result<()> {
        match self.flush_tls() {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(()),
            r => r,
        }
    }
}

impl Read for TlsPart {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.conn.reader().read(buf) {
                // 0: the peer sent close_notify.
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
            match self.conn.read_tls(&mut self.tcp) {
                Ok(0) => return Ok(0),
                Ok(_) => {
                    if let Err(e) = self.conn.process_new_packets() {
                        // Tell the peer why (the alert rustls queued).
                        let _ = self.flush_tls();
                        return Err(io::Error::new(io::ErrorKind::InvalidData, e));
                    }
                    // Handshake messages, and what was written during
                    // the handshake, go out at once.
                    self.flush_some()?;
                }
                Err(e) => return Err(e),
            }
        }
    }
}

impl Write for TlsPart {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.flush_tls()?;
        let n = self.conn.writer().write(buf)?;
        self.flush_some()?;
        if n == 0 && !buf.is_empty() {
            // rustls's buffer is full (a handshake still going on).
            return Err(io::ErrorKind::WouldBlock.into());
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.flush_tls()
    }
}

impl Read for BusStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            BusStream::Plain(t) => t.read(buf),
            BusStream::Tls(p) => p.read(buf),
        }
    }
}

impl Write for BusStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            BusStream::Plain(t) => t.write(buf),
            BusStream::Tls(p) => p.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.flush_tls()
    }
}
