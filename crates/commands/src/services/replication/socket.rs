//! A blocking socket a replication link runs on: the connection the
//! server's worker handed over (TCP, unix, or TLS), or the one a replica
//! dialed to its master.
//!
//! TLS lives in the server crate (rustls); it reaches replication through
//! [`LinkIo`] (a TLS connection both halves of a link share) and the
//! dialer [`set_tls_dialer`] installs (`tls-replication yes`).

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crate::kernel::config::Settings;

/// A blocking connection whose reading and writing halves may run on two
/// threads at once (a TLS session behind a lock).
pub trait LinkIo: Send + Sync + std::fmt::Debug {
    /// Plain bytes read; `WouldBlock`/`TimedOut` after the read timeout
    /// with nothing, Ok(0) at the end.
    fn read(&self, buf: &mut [u8]) -> io::Result<usize>;
    fn write(&self, buf: &[u8]) -> io::Result<usize>;
    fn shutdown(&self);
    /// Blocking mode with these timeouts (None: wait forever).
    fn prepare(&self, read: Option<Duration>, write: Option<Duration>) -> io::Result<()>;
    /// TCP_NODELAY on the underlying TCP socket.
    fn set_nodelay(&self, on: bool) -> io::Result<()>;
}

/// Dials a TLS session over a connected TCP socket to `host`, with the
/// settings' client certificate and CAs.
pub type TlsDialer =
    dyn Fn(TcpStream, &str, &Settings) -> Result<Arc<dyn LinkIo>, String> + Send + Sync;

static TLS_DIALER: OnceLock<Box<TlsDialer>> = OnceLock::new();

/// Installs the TLS dialer (the server, at startup).
pub fn set_tls_dialer(d: Box<TlsDialer>) {
    let _ = TLS_DIALER.set(d);
}

/// The TLS dialer, if the server installed one.
pub fn tls_dialer() -> Option<&'static TlsDialer> {
    TLS_DIALER.get().map(|b| b.as_ref())
}

/// A blocking stream socket.
#[derive(Debug)]
pub enum Socket {
    Tcp(TcpStream),
    Unix(UnixStream),
    /// A TLS session (both halves share it).
    Shared(Arc<dyn LinkIo>),
}

impl Socket {
    pub fn try_clone(&self) -> io::Result<Socket> {
        Ok(match self {
            Socket::Tcp(s) => Socket::Tcp(s.try_clone()?),
            Socket::Unix(s) => Socket::Unix(s.try_clone()?),
            Socket::Shared(s) => Socket::Shared(s.clone()),
        })
    }

    pub fn shutdown(&self) {
        let _ = match self {
            Socket::Tcp(s) => s.shutdown(Shutdown::Both),
            Socket::Unix(s) => s.shutdown(Shutdown::Both),
            Socket::Shared(s) => {
                s.shutdown();
                Ok(())
            }
        };
    }

    /// TCP_NODELAY (`prepare` turns it on; `repl-disable-tcp-nodelay`
    /// turns it off for a replica's full sync and the stream after it).
    /// A Unix socket has no such option.
    pub fn set_nodelay(&self, on: bool) -> io::Result<()> {
        match self {
            Socket::Tcp(s) => s.set_nodelay(on),
            Socket::Unix(_) => Ok(()),
            Socket::Shared(s) => s.set_nodelay(on),
        }
    }

    /// Blocking mode with these timeouts (None: wait forever).
    pub fn prepare(&self, read: Option<Duration>, write: Option<Duration>) -> io::Result<()> {
        match self {
            Socket::Tcp(s) => {
                s.set_nonblocking(false)?;
                let _ = s.set_nodelay(true);
                s.set_read_timeout(read)?;
                s.set_write_timeout(write)
            }
            Socket::Unix(s) => {
                s.set_nonblocking(false)?;
                s.set_read_timeout(read)?;
                s.set_write_timeout(write)
            }
            Socket::Shared(s) => s.prepare(read, write),
        }
    }
}

impl Read for Socket {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Socket::Tcp(s) => s.read(buf),
            Socket::Unix(s) => s.read(buf),
            Socket::Shared(s) => s.read(buf),
        }
    }
}

impl Write for Socket {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Socket::Tcp(s) => s.write(buf),
            Socket::Unix(s) => s.write(buf),
            Socket::Shared(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Writes, counting the bytes as replication output.
pub(super) fn send(
    srv: &crate::kernel::server::Server,
    link: &crate::kernel::replication::ReplicaLink,
    socket: &mut Socket,
    bytes: &[u8],
) -> bool {
    if socket.write_all(bytes).is_err() {
        return false;
    }
    srv.replication
        .master
        .stats
        .net_repl_output_bytes
        .fetch_add(bytes.len() as u64, std::sync::atomic::Ordering::Relaxed);
    link.shared
        .tot_net_out
        .fetch_add(bytes.len() as u64, std::sync::atomic::Ordering::Relaxed);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `prepare` turns TCP_NODELAY on; `repl-disable-tcp-nodelay`'s
    /// `set_nodelay(false)` turns it off on the same socket.
    #[test]
    fn nodelay_follows_prepare_and_set_nodelay() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (server, _) = l.accept().unwrap();
        let s = Socket::Tcp(server);
        s.prepare(None, None).unwrap();
        let Socket::Tcp(raw) = &s else { unreachable!() };
        assert!(raw.nodelay().unwrap());
        s.set_nodelay(false).unwrap();
        assert!(!raw.nodelay().unwrap());
        drop(client);
    }
}
