//! Sockets: binding the configured TCP addresses and unix socket, and the
//! [`Stream`] type that lets a connection be plain TCP, a unix socket or
//! TLS over TCP ([`crate::tls`]). The plain variants are matched first and
//! call the socket directly: TLS costs them one match arm.

use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr};

use mio::event::Source;
use mio::net::{TcpListener, TcpStream, UnixListener, UnixStream};
use mio::{Interest, Registry, Token};

pub enum Listener {
    Tcp(TcpListener),
    Unix(UnixListener),
    /// The `tls-port` listener: its connections speak TLS.
    Tls(TcpListener),
}

pub enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    Tls(Box<crate::tls::TlsStream>),
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }
    /// Sends what a TLS stream has queued (`WouldBlock` if the socket is
    /// full); plain streams queue nothing.
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tls(s) => s.write_pending(),
            _ => Ok(()),
        }
    }
}

impl Source for Stream {
    fn register(&mut self, r: &Registry, t: Token, i: Interest) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.register(r, t, i),
            Stream::Unix(s) => s.register(r, t, i),
            Stream::Tls(s) => s.tcp.register(r, t, i),
        }
    }
    fn reregister(&mut self, r: &Registry, t: Token, i: Interest) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.reregister(r, t, i),
            Stream::Unix(s) => s.reregister(r, t, i),
            Stream::Tls(s) => s.tcp.reregister(r, t, i),
        }
    }
    fn deregister(&mut self, r: &Registry) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.deregister(r),
            Stream::Unix(s) => s.deregister(r),
            Stream::Tls(s) => s.tcp.deregister(r),
        }
    }
}

impl Stream {
    pub fn fd(&self) -> i32 {
        use std::os::fd::AsRawFd;
        match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
            Stream::Tls(s) => s.tcp.as_raw_fd(),
        }
    }

    pub fn is_tls(&self) -> bool {
        matches!(self, Stream::Tls(_))
    }

    /// A TLS stream has encrypted bytes queued for the socket.
    #[inline]
    pub fn tls_pending(&self) -> bool {
        match self {
            Stream::Tls(s) => s.wants_write(),
            _ => false,
        }
    }
}

/// Binds every address of `bind` on `port`. A leading '-' marks an address
/// that may be unavailable (e.g. "-::1" without IPv6), as in Redis.
pub fn bind_tcp(
    bind: &[String],
    port: u16,
    backlog: i32,
) -> Result<Vec<(TcpListener, SocketAddr)>, String> {
    let mut out = Vec::new();
    for b in bind {
        let (optional, addr) = match b.strip_prefix('-') {
            Some(a) => (true, a),
            None => (false, b.as_str()),
        };
        let ips: Vec<IpAddr> = if addr == "*" {
            vec![IpAddr::from([0u8, 0, 0, 0])]
        } else if addr == "::*" {
            vec![IpAddr::from([0u16; 8])]
        } else {
            match addr.parse::<IpAddr>() {
                Ok(ip) => vec![ip],
                Err(_) => return Err(format!("Invalid bind address '{addr}'")),
            }
        };
        for ip in ips {
            let sa = SocketAddr::new(ip, port);
            match listen(sa, backlog) {
                Ok(l) => {
                    let local = l.local_addr().unwrap_or(sa);
                    out.push((l, local));
                }
                Err(e) if optional => {
                    crate::verbose!("Skipping optional bind address {sa}: {e}");
                }
                Err(e) => {
                    return Err(format!(
                        "Could not create server TCP listening socket {sa}: {e}"
                    ))
                }
            }
        }
    }
    if out.is_empty() && !bind.is_empty() {
        return Err("Failed listening on any configured address".into());
    }
    Ok(out)
}

fn listen(sa: SocketAddr, backlog: i32) -> io::Result<TcpListener> {
    use socket2::{Domain, Socket, Type};
    let domain = if sa.is_ipv6() {
        Domain::IPV6
    } else {
        Domain::IPV4
    };
    let s = Socket::new(domain, Type::STREAM, None)?;
    if sa.is_ipv6() {
        s.set_only_v6(true)?;
    }
    s.set_reuse_address(true)?;
    s.set_nonblocking(true)?;
    s.bind(&sa.into())?;
    s.listen(backlog)?;
    Ok(TcpListener::from_std(s.into()))
}

pub fn bind_unix(path: &str, perm: u32) -> Result<UnixListener, String> {
    let _ = std::fs::remove_file(path);
    let l =
        UnixListener::bind(path).map_err(|e| format!("Failed opening Unix socket {path}: {e}"))?;
    if perm != 0 {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(perm));
    }
    Ok(l)
}

/// Applies TCP_NODELAY and keepalive to an accepted connection.
pub fn tune_tcp(s: &TcpStream, keepalive_secs: u64) {
    let _ = s.set_nodelay(true);
    if keepalive_secs > 0 {
        let sock = socket2::SockRef::from(s);
        let ka = socket2::TcpKeepalive::new()
            .with_time(std::time::Duration::from_secs(keepalive_secs))
            .with_interval(std::time::Duration::from_secs((keepalive_secs / 3).max(1)));
        let _ = sock.set_tcp_keepalive(&ka);
    }
}

pub fn is_loopback(addr: &SocketAddr) -> bool {
    match addr.ip() {
        IpAddr::V4(v) => v.is_loopback(),
        IpAddr::V6(v) => v.is_loopback() || v.to_ipv4_mapped().is_some_and(|m| m.is_loopback()),
    }
}
