//! TLS with rustls (ring provider): the server context built from the
//! `tls-*` settings, the context new connections use, and [`TlsStream`],
//! the non-blocking TLS connection a [`crate::net::Stream`] can be.
//!
//! Invariants:
//! * [`current`] is the context the acceptor gives every new TLS
//!   connection; [`install`] replaces it (startup, and CONFIG SET through
//!   the hook `commands::kernel::config::ConfigStore::set_tls_hook`). A
//!   connection keeps the context it started with.
//! * A [`TlsStream`] never blocks: the handshake advances as bytes arrive
//!   on the worker's readiness events, like any other input, so a slow or
//!   silent client costs the worker nothing.
//! * `TlsStream::read` returns `WouldBlock` only after the socket itself
//!   returned `WouldBlock` (edge-triggered polling needs the socket drained).
//! * Encrypted bytes rustls has queued (`wants_write`) count as pending
//!   output of the connection, so the worker keeps WRITABLE interest until
//!   they are sent.

use std::collections::{HashMap, VecDeque};
use std::io::{self, Read, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

use commands::kernel::config::params::tls as names;
use commands::kernel::config::{TlsAuthClients, TlsSettings};
use mio::net::TcpStream;
use parking_lot::{Mutex, RwLock};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{StoresServerSessions, WebPkiClientVerifier};
use rustls::{RootCertStore, ServerConfig, ServerConnection};

static CURRENT: RwLock<Option<Arc<ServerConfig>>> = RwLock::new(None);

/// The context for new TLS connections, if TLS is configured.
pub fn current() -> Option<Arc<ServerConfig>> {
    CURRENT.read().clone()
}

/// Makes `c` the context of new TLS connections.
pub fn install(c: Option<Arc<ServerConfig>>) {
    *CURRENT.write() = c;
}

/// Whether the settings need a TLS context (Redis's rule: a TLS port, or
/// TLS for replication or cluster links).
pub fn in_use(t: &TlsSettings) -> bool {
    t.port != 0 || t.replication || t.cluster
}

/// The hook CONFIG SET calls when a TLS setting changes: builds the new
/// context (or none when TLS is off) and returns what installs it.
pub fn config_hook(
    s: &commands::kernel::config::Settings,
) -> Result<Option<commands::kernel::config::TlsCommit>, String> {
    let ctx = if in_use(&s.tls) {
        Some(build(&s.tls)?)
    } else {
        None
    };
    let bus = crate::tls_bus::build(&s.tls)?;
    Ok(Some(Box::new(move || {
        install(ctx);
        crate::tls_bus::install(bus);
    })))
}

pub(crate) fn load_certs(path: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| format!("Failed to load certificate: {path}: {e}"))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("Failed to load certificate: {path}: {e}"))?;
    if certs.is_empty() {
        return Err(format!(
            "Failed to load certificate: {path}: no PEM certificate in the file"
        ));
    }
    Ok(certs)
}

/// The private key of `path`: plain PEM (PKCS#8, PKCS#1 or SEC1), or an
/// encrypted PKCS#8 key (`ENCRYPTED PRIVATE KEY`, PBES2 with PBKDF2 or
/// scrypt and AES-CBC, what OpenSSL 3 writes) decrypted with `pass`
/// (`tls-key-file-pass`). The legacy OpenSSL encryption (`Proc-Type:
/// 4,ENCRYPTED` headers) is refused with the command that converts it.
pub(crate) fn load_key(path: &str, pass: &str) -> Result<PrivateKeyDer<'static>, String> {
    let fail = |why: String| format!("Failed to load private key: {path}: {why}");
    let pem = std::fs::read(path).map_err(|e| fail(e.to_string()))?;
    let text = String::from_utf8_lossy(&pem);
    if text.contains("Proc-Type: 4,ENCRYPTED") {
        return Err(fail(format!(
            "the key uses OpenSSL's legacy PEM encryption, which Petrel cannot \
             decrypt; convert it to encrypted PKCS#8 with 'openssl pkcs8 -topk8 -in {path} \
             -out <new-key.pem>' (or decrypt it with 'openssl pkey')"
        )));
    }
    if let Some(start) = text.find("-----BEGIN ENCRYPTED PRIVATE KEY-----") {
        use pkcs8::der::pem::PemLabel;
        let (label, der) = pkcs8::der::pem::decode_vec(text[start..].as_bytes())
            .map_err(|e| fail(format!("bad PEM: {e}")))?;
        pkcs8::EncryptedPrivateKeyInfo::validate_pem_label(label)
            .map_err(|e| fail(format!("bad PEM: {e}")))?;
        let info = pkcs8::EncryptedPrivateKeyInfo::try_from(der.as_slice())
            .map_err(|e| fail(format!("bad encrypted key: {e}")))?;
        if pass.is_empty() {
            return Err(fail(
                "the key is encrypted and tls-key-file-pass is not set".into(),
            ));
        }
        let doc = info.decrypt(pass.as_bytes()).map_err(|e| {
            fail(format!(
                "cannot decrypt the key (wrong tls-key-file-pass?): {e}"
            ))
        })?;
        return Ok(PrivateKeyDer::Pkcs8(doc.as_bytes().to_vec().into()));
    }
    PrivateKeyDer::from_pem_slice(&pem).map_err(|e| fail(e.to_string()))
}

/// The CA certificates of `tls-ca-cert-file` and every PEM file of
/// `tls-ca-cert-dir` (files that are not PEM certificates are skipped, as
/// OpenSSL skips what it cannot use in a CA directory).
pub(crate) fn load_roots(t: &TlsSettings) -> Result<RootCertStore, String> {
    let mut roots = RootCertStore::empty();
    if !t.ca_cert_file.is_empty() {
        for c in load_certs(&t.ca_cert_file)? {
            roots.add(c).map_err(|e| {
                format!("Failed to configure CA certificate(s) file/directory: {e}")
            })?;
        }
    }
    if !t.ca_cert_dir.is_empty() {
        let dir = std::fs::read_dir(&t.ca_cert_dir).map_err(|e| {
            format!(
                "Failed to configure CA certificate(s) file/directory: {}: {e}",
                t.ca_cert_dir
            )
        })?;
        for entry in dir.flatten() {
            let path = entry.path();
            if !path.is_file() {
                continue;
            }
            let Ok(iter) = CertificateDer::pem_file_iter(&path) else {
                continue;
            };
            for c in iter.flatten() {
                let _ = roots.add(c);
            }
        }
    }
    Ok(roots)
}

/// Builds the server context of the settings (client certificates as
/// `tls-auth-clients` says). Errors say what is wrong (for the log), in
/// Redis's words where Redis has them.
pub fn build(t: &TlsSettings) -> Result<Arc<ServerConfig>, String> {
    build_with(t, t.auth_clients)
}

/// The crypto provider holding the cipher suites `tls-ciphers` and
/// `tls-ciphersuites` select (in their order) and the protocol versions
/// `tls-protocols` allows that have a suite left: what every TLS context
/// of the server uses, listener and outgoing links alike.
pub(crate) fn suites(
    t: &TlsSettings,
) -> Result<
    (
        Arc<rustls::crypto::CryptoProvider>,
        Vec<&'static rustls::SupportedProtocolVersion>,
    ),
    String,
> {
    let (v12, v13) = names::protocols(&t.protocols)?;
    let want12 = if v12 {
        names::tls12_suites(&t.ciphers)?
    } else {
        Vec::new()
    };
    let want13 = if v13 {
        names::tls13_suites(&t.ciphersuites)?
    } else {
        Vec::new()
    };
    let mut provider = rustls::crypto::ring::default_provider();
    let all = std::mem::take(&mut provider.cipher_suites);
    // The configured order (it decides when tls-prefer-server-ciphers is on).
    for name in want13.iter().chain(want12.iter()) {
        if let Some(s) = all.iter().find(|s| s.suite().as_str() == Some(*name)) {
            provider.cipher_suites.push(*s);
        }
    }
    if v12 && want12.is_empty() && !v13 {
        return Err("No TLSv1.2 cipher left by tls-ciphers".into());
    }
    if v13 && want13.is_empty() && !v12 {
        return Err("No TLSv1.3 cipher suite left by tls-ciphersuites".into());
    }
    let mut versions: Vec<&'static rustls::SupportedProtocolVersion> = Vec::new();
    if v13 && !want13.is_empty() {
        versions.push(&rustls::version::TLS13);
    }
    if v12 && !want12.is_empty() {
        versions.push(&rustls::version::TLS12);
    }
    if versions.is_empty() {
        return Err("No usable protocol version and cipher left by tls-protocols, tls-ciphers and tls-ciphersuites".into());
    }
    Ok((Arc::new(provider), versions))
}

/// [`build`] with client certificates asked as `auth` says (the cluster
/// bus always requires one, as Redis does).
pub(crate) fn build_with(
    t: &TlsSettings,
    auth: TlsAuthClients,
) -> Result<Arc<ServerConfig>, String> {
    if t.cert_file.is_empty() {
        return Err("No tls-cert-file configured!".into());
    }
    if t.key_file.is_empty() {
        return Err("No tls-key-file configured!".into());
    }
    let needs_ca = t.auth_clients != TlsAuthClients::No || t.cluster || t.replication;
    if needs_ca && t.ca_cert_file.is_empty() && t.ca_cert_dir.is_empty() {
        return Err("Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, tls-replication or tls-auth-clients are enabled!".into());
    }
    let certs = load_certs(&t.cert_file)?;
    let key = load_key(&t.key_file, &t.key_file_pass)?;
    let (provider, versions) = suites(t)?;
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&versions)
        .map_err(|e| format!("Failed to configure TLS protocols: {e}"))?;
    let builder = match auth {
        TlsAuthClients::No if t.ca_cert_file.is_empty() && t.ca_cert_dir.is_empty() => {
            builder.with_no_client_auth()
        }
        auth => {
            let roots = Arc::new(load_roots(t)?);
            if auth == TlsAuthClients::No {
                // CA files are still checked (replication and cluster
                // links use them), but clients are not asked for a
                // certificate.
                builder.with_no_client_auth()
            } else {
                let v = WebPkiClientVerifier::builder_with_provider(roots, provider);
                let v = if auth == TlsAuthClients::Optional {
                    v.allow_unauthenticated()
                } else {
                    v
                };
                let v = v
                    .build()
                    .map_err(|e| format!("Failed to configure client verification: {e}"))?;
                builder.with_client_cert_verifier(v)
            }
        }
    };
    let mut cfg = builder.with_single_cert(certs, key).map_err(|e| {
        format!(
            "Failed to load certificate/private key {} {}: {e}",
            t.cert_file, t.key_file
        )
    })?;
    cfg.ignore_client_order = t.prefer_server_ciphers;
    if t.session_caching {
        cfg.session_storage = Arc::new(SessionCache::new(
            t.session_cache_size as usize,
            Duration::from_secs(t.session_cache_timeout),
        ));
    } else {
        cfg.session_storage = Arc::new(rustls::server::NoServerSessionStorage {});
        cfg.send_tls13_tickets = 0;
    }
    Ok(Arc::new(cfg))
}

/// The server-side session cache (`tls-session-caching`): at most
/// `size` sessions (0: no limit, as OpenSSL), each kept `timeout`
/// (`tls-session-cache-timeout`). Used for TLSv1.2 session ids and
/// TLSv1.3 stateful tickets; the oldest session goes first when full.
#[derive(Debug)]
struct SessionCache {
    size: usize,
    timeout: Duration,
    inner: Mutex<SessionMap>,
}

#[derive(Debug, Default)]
struct SessionMap {
    map: HashMap<Vec<u8>, (Vec<u8>, Instant)>,
    order: VecDeque<(Vec<u8>, Instant)>,
}

impl SessionCache {
    fn new(size: usize, timeout: Duration) -> SessionCache {
        SessionCache {
            size,
            timeout,
            inner: Mutex::new(SessionMap::default()),
        }
    }
}

impl SessionMap {
    /// Drops expired sessions, and the oldest while more than `keep`.
    fn trim(&mut self, now: Instant, timeout: Duration, keep: Option<usize>) {
        while let Some((k, at)) = self.order.front() {
            let expired = now.duration_since(*at) >= timeout;
            let over = keep.is_some_and(|n| self.map.len() > n);
            if !expired && !over {
                break;
            }
            // The key's entry is this one only if it was not put again later.
            if self.map.get(k).is_some_and(|(_, t)| t == at) {
                self.map.remove(k);
            }
            self.order.pop_front();
        }
    }
}

impl StoresServerSessions for SessionCache {
    fn put(&self, key: Vec<u8>, value: Vec<u8>) -> bool {
        let now = Instant::now();
        let mut m = self.inner.lock();
        let keep = (self.size > 0).then(|| self.size - 1);
        m.trim(now, self.timeout, keep);
        m.order.push_back((key.clone(), now));
        m.map.insert(key, (value, now));
        true
    }

    fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        let m = self.inner.lock();
        let (v, at) = m.map.get(key)?;
        (at.elapsed() < self.timeout).then(|| v.clone())
    }

    fn take(&self, key: &[u8]) -> Option<Vec<u8>> {
        let mut m = self.inner.lock();
        let (v, at) = m.map.remove(key)?;
        (at.elapsed() < self.timeout).then_some(v)
    }

    fn can_cache(&self) -> bool {
        true
    }
}

/// A TLS connection over a non-blocking TCP socket.
pub struct TlsStream {
    pub tcp: TcpStream,
    tls: ServerConnection,
}

impl TlsStream {
    pub fn new(tcp: TcpStream, config: Arc<ServerConfig>) -> io::Result<TlsStream> {
        let tls = ServerConnection::new(config).map_err(io::Error::other)?;
        Ok(TlsStream { tcp, tls })
    }

    /// The socket and the session (a replica's link takes them over).
    pub fn into_parts(self) -> (TcpStream, ServerConnection) {
        (self.tcp, self.tls)
    }

    /// Encrypted bytes are waiting for the socket.
    pub fn wants_write(&self) -> bool {
        self.tls.wants_write()
    }

    /// Writes queued encrypted bytes; `WouldBlock` if the socket is full.
    pub fn write_pending(&mut self) -> io::Result<()> {
        while self.tls.wants_write() {
            match self.tls.write_tls(&mut self.tcp) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Sends close_notify, as far as the socket takes it now.
    pub fn close(&mut self) {
        self.tls.send_close_notify();
        let _ = self.write_pending();
    }
}

impl Read for TlsStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.tls.reader().read(buf) {
                // 0: the peer sent close_notify.
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
            match self.tls.read_tls(&mut self.tcp) {
                Ok(0) => return Ok(0),
                Ok(_) => {
                    if let Err(e) = self.tls.process_new_packets() {
                        // Tell the peer why (the alert rustls queued).
                        let _ = self.write_pending();
                        return Err(io::Error::new(io::ErrorKind::InvalidData, e));
                    }
                    // Handshake messages go out at once.
                    match self.write_pending() {
                        Ok(()) => {}
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                        Err(e) => return Err(e),
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }
}

impl Write for TlsStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_pending()?;
        let n = self.tls.writer().write(buf)?;
        match self.write_pending() {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
        if n == 0 && !buf.is_empty() {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.write_pending()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_cache_limits_size_and_age() {
        let c = SessionCache::new(2, Duration::from_secs(3600));
        c.put(b"a".to_vec(), b"1".to_vec());
        c.put(b"b".to_vec(), b"2".to_vec());
        c.put(b"c".to_vec(), b"3".to_vec());
        assert_eq!(c.get(b"a"), None);
        assert_eq!(c.get(b"b"), Some(b"2".to_vec()));
        assert_eq!(c.take(b"c"), Some(b"3".to_vec()));
        assert_eq!(c.get(b"c"), None);
        let c = SessionCache::new(0, Duration::ZERO);
        c.put(b"a".to_vec(), b"1".to_vec());
        assert_eq!(c.get(b"a"), None);
    }
}
