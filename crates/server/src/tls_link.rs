//! TLS for replication links (`tls-replication`, issue 26): a blocking
//! TLS session the two threads of a link share ([`TlsLink`], the
//! replication service's `LinkIo`), made either from a replica's
//! connection on the TLS port (the master side, [`from_handoff`]) or by
//! dialing a master ([`dial`], installed as the service's TLS dialer).
//!
//! Invariants:
//! * The rustls session is behind one lock; a socket read happens outside
//!   it (so a reader waiting for bytes never blocks the writer), every
//!   socket write happens under it (so records leave in the order rustls
//!   made them, whichever thread made them).
//! * Plain bytes decrypted but not yet asked for wait in `plain`.
//! * The replica checks the master's certificate chain against
//!   `tls-ca-cert-file`/`-dir` but not the host name, as Redis (OpenSSL
//!   without a host check); it presents `tls-client-cert-file`/`-key-file`
//!   when set, else `tls-cert-file`/`-key-file`, and offers the protocols
//!   and suites of `tls-protocols`/`tls-ciphers`/`tls-ciphersuites`
//!   ([`client_config`], which the cluster bus's links use too).

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::fd::{FromRawFd, IntoRawFd};
use std::sync::Arc;
use std::time::Duration;

use commands::kernel::config::{Settings, TlsSettings};
use commands::services::replication::socket::LinkIo;
use parking_lot::Mutex;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, ClientConnection, Connection, DigitallySignedStruct};

/// A TLS session over a blocking TCP socket (see the module doc).
pub struct TlsLink {
    tcp: TcpStream,
    inner: Mutex<Inner>,
}

struct Inner {
    conn: Connection,
    plain: Vec<u8>,
    eof: bool,
}

impl std::fmt::Debug for TlsLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsLink").field("tcp", &self.tcp).finish()
    }
}

impl TlsLink {
    fn new(tcp: TcpStream, conn: Connection) -> TlsLink {
        TlsLink {
            tcp,
            inner: Mutex::new(Inner {
                conn,
                plain: Vec::new(),
                eof: false,
            }),
        }
    }

    /// Sends what rustls has queued (the caller holds the lock).
    fn flush_locked(&self, g: &mut Inner) -> io::Result<()> {
        let mut tcp = &self.tcp;
        while g.conn.wants_write() {
            match g.conn.write_tls(&mut tcp) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Takes the decrypted bytes rustls holds into `plain`.
    fn drain_plain(g: &mut Inner) -> io::Result<()> {
        let mut chunk = [0u8; 16 * 1024];
        loop {
            match g.conn.reader().read(&mut chunk) {
                Ok(0) => {
                    g.eof = true;
                    return Ok(());
                }
                Ok(n) => g.plain.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) => return Err(e),
            }
        }
    }

    fn take_plain(g: &mut Inner, buf: &mut [u8]) -> usize {
        let n = g.plain.len().min(buf.len());
        buf[..n].copy_from_slice(&g.plain[..n]);
        g.plain.drain(..n);
        n
    }

    /// Runs the handshake to its end (blocking, bounded by the socket's
    /// timeouts).
    fn handshake(&self) -> io::Result<()> {
        let mut g = self.inner.lock();
        let mut tcp = &self.tcp;
        while g.conn.is_handshaking() {
            g.conn.complete_io(&mut tcp)?;
        }
        self.flush_locked(&mut g)?;
        Self::drain_plain(&mut g)
    }
}

impl LinkIo for TlsLink {
    fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        {
            let mut g = self.inner.lock();
            if !g.plain.is_empty() {
                return Ok(Self::take_plain(&mut g, buf));
            }
            if g.eof {
                return Ok(0);
            }
        }
        let mut raw = [0u8; 16 * 1024];
        let n = (&self.tcp).read(&mut raw)?;
        let mut g = self.inner.lock();
        if n == 0 {
            g.eof = true;
            return Ok(0);
        }
        let mut rest = &raw[..n];
        while !rest.is_empty() {
            g.conn.read_tls(&mut rest)?;
            if let Err(e) = g.conn.process_new_packets() {
                let _ = self.flush_locked(&mut g);
                return Err(io::Error::new(io::ErrorKind::InvalidData, e));
            }
            Self::drain_plain(&mut g)?;
        }
        // Answers the peer may need (key updates, alerts) go out at once.
        self.flush_locked(&mut g)?;
        if g.plain.is_empty() {
            if g.eof {
                return Ok(0);
            }
            return Err(io::ErrorKind::WouldBlock.into());
        }
        Ok(Self::take_plain(&mut g, buf))
    }

    fn write(&self, buf: &[u8]) -> io::Result<usize> {
        let mut g = self.inner.lock();
        let n = g.conn.writer().write(buf)?;
        self.flush_locked(&mut g)?;
        if n == 0 && !buf.is_empty() {
            return Err(io::ErrorKind::WriteZero.into());
        }
        Ok(n)
    }

    fn shutdown(&self) {
        if let Some(mut g) = self.inner.try_lock() {
            g.conn.send_close_notify();
            let _ = self.flush_locked(&mut g);
        }
        let _ = self.tcp.shutdown(Shutdown::Both);
    }

    fn prepare(&self, read: Option<Duration>, write: Option<Duration>) -> io::Result<()> {
        self.tcp.set_nonblocking(false)?;
        let _ = self.tcp.set_nodelay(true);
        self.tcp.set_read_timeout(read)?;
        self.tcp.set_write_timeout(write)
    }

    fn set_nodelay(&self, on: bool) -> io::Result<()> {
        self.tcp.set_nodelay(on)
    }
}

/// A replica's connection on the TLS port, handed over after SYNC/PSYNC:
/// the same session, now blocking.
pub fn from_handoff(tls: Box<crate::tls::TlsStream>) -> io::Result<Arc<dyn LinkIo>> {
    let (tcp, conn) = tls.into_parts();
    let fd = tcp.into_raw_fd();
    // SAFETY: `into_raw_fd` gave up the mio stream's ownership of the
    // descriptor; the std stream takes it over alone.
    let tcp = unsafe { TcpStream::from_raw_fd(fd) };
    tcp.set_nonblocking(false)?;
    let link = TlsLink::new(tcp, Connection::Server(conn));
    {
        // Plain bytes rustls decrypted already (sent after PSYNC).
        let mut g = link.inner.lock();
        TlsLink::drain_plain(&mut g)?;
    }
    Ok(Arc::new(link))
}

/// The replication service's TLS dialer (`tls-replication yes`).
pub fn dial(tcp: TcpStream, host: &str, s: &Settings) -> Result<Arc<dyn LinkIo>, String> {
    let cfg = client_config(&s.tls)?;
    let name = match host.parse::<std::net::IpAddr>() {
        Ok(ip) => ServerName::IpAddress(ip.into()),
        Err(_) => ServerName::try_from(host.to_string())
            .map_err(|e| format!("bad master host name for TLS: {e}"))?,
    };
    let conn = ClientConnection::new(cfg, name).map_err(|e| e.to_string())?;
    let link = TlsLink::new(tcp, Connection::Client(conn));
    link.handshake()
        .map_err(|e| format!("TLS handshake with the master failed: {e}"))?;
    Ok(Arc::new(link))
}

/// The client side of outgoing TLS links (replication and cluster bus):
/// `tls-client-cert-file`/`-key-file` when set, else
/// `tls-cert-file`/`-key-file`, presented to the peer; the peer's chain
/// checked against `tls-ca-cert-file`/`-dir` (not its name); the
/// protocols and cipher suites of `tls-protocols`, `tls-ciphers` and
/// `tls-ciphersuites`, as the listener's.
pub(crate) fn client_config(t: &TlsSettings) -> Result<Arc<ClientConfig>, String> {
    let (cert, key, pass) = if !t.client_cert_file.is_empty() {
        (
            &t.client_cert_file,
            &t.client_key_file,
            &t.client_key_file_pass,
        )
    } else {
        (&t.cert_file, &t.key_file, &t.key_file_pass)
    };
    let roots = Arc::new(crate::tls::load_roots(t)?);
    let (provider, versions) = crate::tls::suites(t)?;
    let verifier = WebPkiServerVerifier::builder_with_provider(roots, provider.clone())
        .build()
        .map_err(|e| format!("Failed to configure CA certificate(s) file/directory: {e}"))?;
    let builder = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&versions)
        .map_err(|e| format!("Failed to configure TLS protocols: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(ChainOnly(verifier)));
    let cfg = if cert.is_empty() {
        builder.with_no_client_auth()
    } else {
        let certs = crate::tls::load_certs(cert)?;
        let key_der = crate::tls::load_key(key, pass)?;
        builder
            .with_client_auth_cert(certs, key_der)
            .map_err(|e| format!("Failed to load certificate/private key {cert} {key}: {e}"))?
    };
    Ok(Arc::new(cfg))
}

/// The chain check of webpki without the host-name check (see the
/// module doc).
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            r => r,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}
