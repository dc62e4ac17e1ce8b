//! TLS (issue 26): the `tls-port` listener next to the plain port, client
//! certificates as `tls-auth-clients` says, refused connections (wrong CA,
//! expired certificate, plaintext on the TLS port), CONFIG SET reloading
//! the certificate, and startup refusing unusable settings.
//!
//! Certificates are made at test time with the `openssl` command (a CA, a
//! server certificate, a client certificate, an expired client
//! certificate, a second CA with its own client certificate). Clients are
//! the real ones users run: `redis-cli --tls`, `openssl s_client`, and
//! redis-py with `ssl=True` (skipped with a notice when python3 has no
//! `redis` module).

mod common;
#[path = "common/tls_certs.rs"]
mod tls_certs;
use common::*;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use tls_certs::*;

const CA_CONF: &str = "[ ca ]\ndefault_ca = CA_default\n[ CA_default ]\ndir = .\n\
database = ./index.txt\nnew_certs_dir = .\nserial = ./serial\ndefault_md = sha256\n\
policy = policy_any\nunique_subject = no\n[ policy_any ]\ncommonName = supplied\n\
[ client_ext ]\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n\
extendedKeyUsage=clientAuth\n";

fn certs() -> &'static Certs {
    static CERTS: OnceLock<Certs> = OnceLock::new();
    CERTS.get_or_init(|| {
        let dir = TempDir::new("tls-certs");
        let d = dir.path().to_path_buf();
        std::fs::write(
            d.join("server.ext"),
            "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n\
             extendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n",
        )
        .unwrap();
        std::fs::write(
            d.join("client.ext"),
            "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n\
             extendedKeyUsage=clientAuth\n",
        )
        .unwrap();
        std::fs::write(d.join("ca.cnf"), CA_CONF).unwrap();
        std::fs::write(d.join("index.txt"), "").unwrap();
        std::fs::write(d.join("serial"), "1000\n").unwrap();
        for ca in ["ca", "other-ca"] {
            make_ca(&d, ca, &format!("Petrel test {ca}"));
        }
        // (name, signing CA, extensions, CN)
        for (name, ca, ext, cn) in [
            ("server", "ca", "server.ext", "localhost"),
            ("server2", "ca", "server.ext", "petrel-reloaded"),
            ("client", "ca", "client.ext", "client"),
            ("stranger", "other-ca", "client.ext", "stranger"),
        ] {
            issue_cert(&d, name, ca, ext, cn);
        }
        // A client certificate of the right CA that expired in 2020.
        openssl(
            &d,
            &[
                "req",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-keyout",
                "expired.key",
                "-out",
                "expired.csr",
                "-subj",
                "/CN=expired",
            ],
        );
        openssl(
            &d,
            &[
                "ca",
                "-batch",
                "-config",
                "ca.cnf",
                "-cert",
                "ca.crt",
                "-keyfile",
                "ca.key",
                "-in",
                "expired.csr",
                "-out",
                "expired.crt",
                "-startdate",
                "20200101000000Z",
                "-enddate",
                "20200201000000Z",
                "-extensions",
                "client_ext",
                "-notext",
            ],
        );
        // The server key, encrypted with a passphrase.
        openssl(
            &d,
            &[
                "pkey",
                "-in",
                "server.key",
                "-out",
                "server-enc.key",
                "-aes256",
                "-passout",
                "pass:secret",
            ],
        );
        // The same key in OpenSSL's legacy encrypted PEM form.
        openssl(
            &d,
            &[
                "pkey",
                "-in",
                "server.key",
                "-traditional",
                "-out",
                "server-legacy.key",
                "-aes256",
                "-passout",
                "pass:secret",
            ],
        );
        Certs { _dir: dir, path: d }
    })
}

/// Starts petrel with its plain port and a TLS port using the test
/// certificates; `extra` adds or overrides settings. Returns the server
/// and its TLS port.
fn start_tls(extra: &[(&str, &str)]) -> (Server, u16) {
    let (opts, tls_port) = tls_opts(extra);
    (Server::start_with(opts), tls_port)
}

/// The settings of [`start_tls`] (for petrel or redis-server) and the TLS
/// port they name.
fn tls_opts(extra: &[(&str, &str)]) -> (Opts, u16) {
    let c = certs();
    let tls_port = free_port();
    let mut opts = Opts::new(&[
        ("tls-port", &tls_port.to_string()),
        ("tls-cert-file", &c.file("server.crt")),
        ("tls-key-file", &c.file("server.key")),
        ("tls-ca-cert-file", &c.file("ca.crt")),
    ]);
    for (n, v) in extra {
        opts = opts.arg(n, v);
    }
    (opts, tls_port)
}

/// `redis-cli --tls` with the CA (`cacert`) and, if given, a client
/// certificate and key (by base name: "client" -> client.crt/client.key).
/// Returns stdout and stderr together.
fn cli(port: u16, cacert: &str, cert: Option<&str>, args: &[&str]) -> String {
    let c = certs();
    let mut cmd = Command::new("redis-cli");
    cmd.args([
        "-h",
        "127.0.0.1",
        "-p",
        &port.to_string(),
        "--tls",
        "--cacert",
    ])
    .arg(c.file(&format!("{cacert}.crt")));
    if let Some(name) = cert {
        cmd.arg("--cert")
            .arg(c.file(&format!("{name}.crt")))
            .arg("--key")
            .arg(c.file(&format!("{name}.key")));
    }
    let out = cmd
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("redis-cli");
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn ping_ok(port: u16, cert: Option<&str>) -> bool {
    cli(port, "ca", cert, &["PING"]) == "PONG\n"
}

/// The subject the server's certificate shows to `openssl s_client`, and
/// the negotiated protocol and cipher line.
fn s_client(port: u16, extra: &[&str]) -> String {
    let c = certs();
    let out = Command::new("openssl")
        .args([
            "s_client",
            "-connect",
            &format!("127.0.0.1:{port}"),
            "-CAfile",
        ])
        .arg(c.file("ca.crt"))
        .arg("-cert")
        .arg(c.file("client.crt"))
        .arg("-key")
        .arg(c.file("client.key"))
        .args(extra)
        .stdin(Stdio::null())
        .output()
        .expect("openssl s_client");
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn redis_cli_over_tls_shares_the_dataset_with_the_plain_port() {
    let (s, tls) = start_tls(&[]);
    assert_eq!(
        cli(tls, "ca", Some("client"), &["SET", "k", "over-tls"]),
        "OK\n"
    );
    let mut plain = s.client();
    let v: String = redis::cmd("GET").arg("k").query(&mut plain).unwrap();
    assert_eq!(v, "over-tls");
    // A reply far bigger than a TLS record and the socket buffer.
    let big = "x".repeat(3 * 1024 * 1024);
    let _: () = redis::cmd("SET")
        .arg("big")
        .arg(&big)
        .query(&mut plain)
        .unwrap();
    let out = cli(tls, "ca", Some("client"), &["STRLEN", "big"]);
    assert_eq!(out, format!("{}\n", big.len()));
    let out = cli(tls, "ca", Some("client"), &["GET", "big"]);
    assert_eq!(out.trim_end().len(), big.len());
    // CLIENT INFO looks as for a plain connection.
    let info = cli(tls, "ca", Some("client"), &["CLIENT", "INFO"]);
    assert!(info.starts_with("id="), "{info}");
    assert!(info.contains(&format!("laddr=127.0.0.1:{tls} ")), "{info}");
    assert!(info.contains(" flags=N "), "{info}");
}

#[test]
fn tls_only_server_with_port_zero() {
    let c = certs();
    let tls_port = free_port();
    let dir = TempDir::new("tls-only");
    let sock = dir.join("petrel.sock").display().to_string();
    let mut opts = Opts::new(&[
        ("port", "0"),
        ("unixsocket", &sock),
        ("tls-port", &tls_port.to_string()),
        ("tls-cert-file", &c.file("server.crt")),
        ("tls-key-file", &c.file("server.key")),
        ("tls-ca-cert-file", &c.file("ca.crt")),
    ]);
    opts.no_tcp = true;
    let _s = Server::start_with(opts);
    assert_eq!(
        cli(tls_port, "ca", Some("client"), &["CONFIG", "GET", "port"]),
        "port\n0\n"
    );
    assert_eq!(
        cli(
            tls_port,
            "ca",
            Some("client"),
            &["CONFIG", "GET", "tls-port"]
        ),
        format!("tls-port\n{tls_port}\n")
    );
}

#[test]
fn auth_clients_yes_no_optional() {
    let (s, tls) = start_tls(&[]);
    // Default `yes`: a certificate is required.
    assert!(ping_ok(tls, Some("client")));
    let out = cli(tls, "ca", None, &["PING"]);
    assert!(!out.contains("PONG"), "{out}");
    let mut plain = s.client();
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("tls-auth-clients")
        .arg("optional")
        .query(&mut plain)
        .unwrap();
    assert!(ping_ok(tls, None));
    assert!(ping_ok(tls, Some("client")));
    // `optional` still checks a certificate that is given.
    assert!(!ping_ok(tls, Some("stranger")));
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("tls-auth-clients")
        .arg("no")
        .query(&mut plain)
        .unwrap();
    assert!(ping_ok(tls, None));
    let v: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg("tls-auth-clients")
        .query(&mut plain)
        .unwrap();
    assert_eq!(v, vec!["tls-auth-clients", "no"]);
    let e = redis::cmd("CONFIG")
        .arg("SET")
        .arg("tls-auth-clients")
        .arg("maybe")
        .query::<()>(&mut plain)
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("argument(s) must be one of the following"),
        "{e}"
    );
}

#[test]
fn wrong_ca_and_expired_certificates_are_refused() {
    let (mut s, tls) = start_tls(&[("loglevel", "verbose")]);
    // A client certificate from another CA.
    let out = cli(tls, "ca", Some("stranger"), &["PING"]);
    assert!(!out.contains("PONG"), "{out}");
    // A client certificate of the right CA, expired.
    let out = cli(tls, "ca", Some("expired"), &["PING"]);
    assert!(!out.contains("PONG"), "{out}");
    // The client checking the server against the wrong CA refuses it.
    let out = cli(tls, "other-ca", Some("client"), &["PING"]);
    assert!(!out.contains("PONG"), "{out}");
    assert!(
        s.wait_log("UnknownIssuer", std::time::Duration::from_secs(5)),
        "{}",
        s.log()
    );
    assert!(
        s.wait_log("certificate expired", std::time::Duration::from_secs(5)),
        "{}",
        s.log()
    );
    // The server goes on serving, over TLS and in plain.
    assert!(ping_ok(tls, Some("client")));
    let mut plain = s.client();
    let pong: String = redis::cmd("PING").query(&mut plain).unwrap();
    assert_eq!(pong, "PONG");
    s.assert_alive();
}

#[test]
fn plaintext_client_on_the_tls_port_is_refused_cleanly() {
    use std::io::{Read, Write};
    let (mut s, tls) = start_tls(&[("loglevel", "verbose")]);
    let mut plain = s.client();
    let before: String = redis::cmd("INFO").arg("clients").query(&mut plain).unwrap();
    let mut t = std::net::TcpStream::connect(("127.0.0.1", tls)).unwrap();
    t.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    t.write_all(b"*1\r\n$4\r\nPING\r\n").unwrap();
    let mut got = Vec::new();
    // The server answers with a TLS alert (or nothing) and closes.
    let _ = t.read_to_end(&mut got);
    assert!(!got.starts_with(b"+PONG"), "{got:?}");
    if let Some(&first) = got.first() {
        assert_eq!(first, 0x15, "a TLS alert record: {got:?}");
    }
    assert!(s.wait_log(
        "Error accepting a client connection",
        std::time::Duration::from_secs(5)
    ));
    // Nothing of that connection remains, and the server serves on.
    let count = |v: &str| {
        v.lines()
            .find_map(|l| l.strip_prefix("connected_clients:"))
            .map(|n| n.trim().to_string())
    };
    assert!(wait_until(std::time::Duration::from_secs(5), || {
        let now: String = redis::cmd("INFO").arg("clients").query(&mut plain).unwrap();
        count(&now) == count(&before)
    }));
    assert!(ping_ok(tls, Some("client")));
    s.assert_alive();
}

/// With `maxclients` reached, a TLS client is closed without a reply, as
/// redis-server 7.0 does (its `-ERR max number of clients reached` is
/// written before the handshake, so a TLS client never reads it); the
/// server serves on, and the client is served once a slot frees.
#[test]
fn a_full_server_closes_tls_clients_as_redis_does() {
    let settings = [("maxclients", "1"), ("tls-auth-clients", "no")];
    let (opts, tls) = tls_opts(&settings);
    check_full_server_over_tls("petrel", Server::start_with(opts), tls);
    let (opts, tls) = tls_opts(&settings);
    if let Some(r) = RefRedis::start_with(opts) {
        check_full_server_over_tls("redis-server", r, tls);
    }
}

fn check_full_server_over_tls(name: &str, s: Server, tls: u16) {
    // The one client slot. The start-up check's connection may still
    // hold it for a moment (the server sees its close later): retry.
    let url = s.url(false);
    let mut held = None;
    assert!(
        wait_until(std::time::Duration::from_secs(10), || {
            held = redis::Client::open(url.as_str())
                .and_then(|c| c.get_connection_with_timeout(std::time::Duration::from_secs(2)))
                .ok();
            held.is_some()
        }),
        "{name}: no client slot"
    );
    let out = cli(tls, "ca", None, &["PING"]);
    assert!(!out.contains("PONG"), "{name}: {out:?}");
    drop(held);
    assert!(
        wait_until(std::time::Duration::from_secs(5), || ping_ok(tls, None)),
        "{name} serves again once a slot frees"
    );
}

#[test]
fn config_set_reloads_the_certificate_for_new_connections() {
    let c = certs();
    let (s, tls) = start_tls(&[]);
    assert!(s_client(tls, &[]).contains("subject=CN = localhost"));
    let mut plain = s.client();
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("tls-cert-file")
        .arg(c.file("server2.crt"))
        .arg("tls-key-file")
        .arg(c.file("server2.key"))
        .query(&mut plain)
        .unwrap();
    let out = s_client(tls, &[]);
    assert!(out.contains("subject=CN = petrel-reloaded"), "{out}");
    assert!(ping_ok(tls, Some("client")));
    // A file that cannot be used fails CONFIG SET and keeps the context.
    for (name, value) in [
        ("tls-cert-file", c.file("missing.crt")),
        ("tls-cert-file", c.file("server.crt")), // does not match server2.key
        ("tls-ca-cert-file", c.file("server.ext")),
    ] {
        let e = redis::cmd("CONFIG")
            .arg("SET")
            .arg(name)
            .arg(&value)
            .query::<()>(&mut plain)
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("Unable to update TLS configuration. Check server logs."),
            "{name} {value}: {e}"
        );
        assert!(e.to_string().contains(&format!("'{name}'")), "{e}");
    }
    let v: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg("tls-cert-file")
        .query(&mut plain)
        .unwrap();
    assert_eq!(v[1], c.file("server2.crt"));
    assert!(s_client(tls, &[]).contains("subject=CN = petrel-reloaded"));
    assert!(ping_ok(tls, Some("client")));
}

#[test]
fn protocols_and_cipher_suites() {
    let (s, tls) = start_tls(&[]);
    let out = s_client(tls, &[]);
    assert!(out.contains("TLSv1.3"), "{out}");
    let mut plain = s.client();
    let set = |plain: &mut redis::Connection, n: &str, v: &str| {
        redis::cmd("CONFIG")
            .arg("SET")
            .arg(n)
            .arg(v)
            .query::<()>(plain)
    };
    set(
        &mut plain,
        "tls-ciphersuites",
        "TLS_CHACHA20_POLY1305_SHA256",
    )
    .unwrap();
    let out = s_client(tls, &[]);
    assert!(out.contains("TLS_CHACHA20_POLY1305_SHA256"), "{out}");
    set(&mut plain, "tls-protocols", "TLSv1.2").unwrap();
    set(&mut plain, "tls-ciphers", "ECDHE-RSA-AES128-GCM-SHA256").unwrap();
    let out = s_client(tls, &[]);
    assert!(out.contains("ECDHE-RSA-AES128-GCM-SHA256"), "{out}");
    let out = s_client(tls, &["-tls1_3"]);
    assert!(out.contains("Cipher is (NONE)"), "{out}");
    assert!(ping_ok(tls, Some("client")));
    // Names rustls does not implement are refused and change nothing.
    let e = set(&mut plain, "tls-ciphers", "AES128-SHA").unwrap_err();
    assert!(e.to_string().contains("'AES128-SHA'"), "{e}");
    let e = set(&mut plain, "tls-protocols", "TLSv1.1").unwrap_err();
    assert!(e.to_string().contains("TLSv1.1 is not supported"), "{e}");
    let v: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg("tls-protocols")
        .query(&mut plain)
        .unwrap();
    assert_eq!(v, vec!["tls-protocols", "TLSv1.2"]);
}

#[test]
fn redis_py_with_ssl() {
    let has_py = Command::new("python3")
        .args(["-c", "import redis"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !has_py {
        eprintln!(
            "!!! python3 has no `redis` module (pip install redis): redis-py TLS test skipped"
        );
        return;
    }
    let c = certs();
    let (_s, tls) = start_tls(&[]);
    let script = format!(
        r#"
import redis, ssl
r = redis.Redis(host="127.0.0.1", port={tls}, ssl=True, ssl_ca_certs="{ca}",
                ssl_certfile="{crt}", ssl_keyfile="{key}")
assert r.ping()
r.set("py", "x" * 1000000)
assert len(r.get("py")) == 1000000
p = r.pipeline(transaction=False)
for i in range(2000):
    p.incr("n")
assert p.execute()[-1] == 2000
try:
    redis.Redis(host="127.0.0.1", port={tls}, ssl=True, ssl_ca_certs="{ca}").ping()
    print("no-cert accepted")
except (redis.exceptions.ConnectionError, ssl.SSLError, OSError):
    pass
print("ok")
"#,
        ca = c.file("ca.crt"),
        crt = c.file("client.crt"),
        key = c.file("client.key"),
    );
    let out = Command::new("python3")
        .args(["-c", &script])
        .output()
        .expect("python3");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(text, "ok\n");
}

#[test]
fn startup_refuses_unusable_tls_settings() {
    let c = certs();
    let port = free_port().to_string();
    let (code, log) = petrel_startup_failure(None, &["--tls-port", &port]);
    assert_ne!(code, Some(0));
    assert!(log.contains("No tls-cert-file configured!"), "{log}");
    assert!(log.contains("Failed to configure TLS"), "{log}");
    let (crt, key, enc, ca) = (
        c.file("server.crt"),
        c.file("server.key"),
        c.file("server-enc.key"),
        c.file("ca.crt"),
    );
    // tls-auth-clients yes (the default) needs a CA.
    let (_, log) = petrel_startup_failure(
        None,
        &[
            "--tls-port",
            &port,
            "--tls-cert-file",
            &crt,
            "--tls-key-file",
            &key,
        ],
    );
    assert!(
        log.contains("Either tls-ca-cert-file or tls-ca-cert-dir"),
        "{log}"
    );
    // An encrypted key with a wrong or missing passphrase is refused with
    // the reason.
    for (pass, why) in [
        ("wrong", "cannot decrypt the key"),
        ("", "tls-key-file-pass is not set"),
    ] {
        let (_, log) = petrel_startup_failure(
            None,
            &[
                "--tls-port",
                &port,
                "--tls-cert-file",
                &crt,
                "--tls-key-file",
                &enc,
                "--tls-key-file-pass",
                pass,
                "--tls-ca-cert-file",
                &ca,
            ],
        );
        assert!(log.contains(why), "{log}");
    }
    // OpenSSL's legacy PEM encryption is refused with the conversion.
    let legacy = c.file("server-legacy.key");
    let (_, log) = petrel_startup_failure(
        None,
        &[
            "--tls-port",
            &port,
            "--tls-cert-file",
            &crt,
            "--tls-key-file",
            &legacy,
            "--tls-key-file-pass",
            "secret",
            "--tls-ca-cert-file",
            &ca,
        ],
    );
    assert!(log.contains("openssl pkcs8 -topk8"), "{log}");
}

/// `tls-key-file-pass` decrypts an encrypted PKCS#8 server key, at startup
/// and on CONFIG SET.
#[test]
fn encrypted_key_with_its_passphrase() {
    let c = certs();
    let (s, tls) = start_tls(&[
        ("tls-key-file", &c.file("server-enc.key")),
        ("tls-key-file-pass", "secret"),
    ]);
    assert!(ping_ok(tls, Some("client")));
    // A wrong passphrase fails the CONFIG SET and keeps the context.
    let mut plain = s.client();
    let r: redis::RedisResult<()> = redis::cmd("CONFIG")
        .arg("SET")
        .arg("tls-key-file-pass")
        .arg("nope")
        .query(&mut plain);
    assert!(r.is_err(), "{r:?}");
    assert!(ping_ok(tls, Some("client")));
    // The plain key with an empty passphrase works again.
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("tls-key-file")
        .arg(c.file("server.key"))
        .arg("tls-key-file-pass")
        .arg("")
        .query(&mut plain)
        .unwrap();
    assert!(ping_ok(tls, Some("client")));
}

#[test]
fn ca_cert_dir_is_used() {
    let c = certs();
    let dir = TempDir::new("tls-ca-dir");
    std::fs::copy(c.file("ca.crt"), dir.join("ca.pem")).unwrap();
    std::fs::write(dir.join("README"), "not a certificate").unwrap();
    let tls_port = free_port();
    let _s = Server::start_with(Opts::new(&[
        ("tls-port", &tls_port.to_string()),
        ("tls-cert-file", &c.file("server.crt")),
        ("tls-key-file", &c.file("server.key")),
        ("tls-ca-cert-dir", &dir.path().display().to_string()),
    ]));
    assert!(ping_ok(tls_port, Some("client")));
    assert!(!ping_ok(tls_port, Some("stranger")));
}

#[test]
fn a_stalled_handshake_does_not_hold_the_worker() {
    use std::io::Write;
    // One worker: every connection shares its event loop.
    let (s, tls) = start_tls(&[("threads", "1")]);
    let mut stalled = std::net::TcpStream::connect(("127.0.0.1", tls)).unwrap();
    // The first bytes of a TLS record header (a ClientHello), then nothing.
    stalled.write_all(&[0x16, 0x03, 0x01]).unwrap();
    let silent = std::net::TcpStream::connect(("127.0.0.1", tls)).unwrap();
    let mut plain = s.client();
    for i in 0..50 {
        let _: () = redis::cmd("SET").arg("k").arg(i).query(&mut plain).unwrap();
    }
    assert!(ping_ok(tls, Some("client")));
    // The two stalled connections are clients like any other (as in
    // Redis, a TLS client exists from accept); redis-cli's is gone.
    assert!(wait_until(std::time::Duration::from_secs(5), || {
        let clients: String = redis::cmd("CLIENT").arg("LIST").query(&mut plain).unwrap();
        clients.lines().count() == 3
    }));
    drop((stalled, silent));
}

#[test]
fn config_set_tls_port_opens_and_closes_the_listener() {
    let c = certs();
    let s = Server::start_with(Opts::new(&[
        ("tls-cert-file", &c.file("server.crt")),
        ("tls-key-file", &c.file("server.key")),
        ("tls-ca-cert-file", &c.file("ca.crt")),
    ]));
    let mut plain = s.client();
    let tls = free_port();
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("tls-port")
        .arg(tls)
        .query(&mut plain)
        .unwrap();
    assert!(ping_ok(tls, Some("client")));
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("tls-port")
        .arg(0)
        .query(&mut plain)
        .unwrap();
    assert!(std::net::TcpStream::connect(("127.0.0.1", tls)).is_err());
    // Turning TLS on with a certificate that cannot be loaded fails whole.
    let e = redis::cmd("CONFIG")
        .arg("SET")
        .arg("tls-port")
        .arg(tls)
        .arg("tls-cert-file")
        .arg(c.file("missing.crt"))
        .query::<()>(&mut plain)
        .unwrap_err();
    assert!(
        e.to_string().contains("Unable to update TLS configuration"),
        "{e}"
    );
    let v: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg("tls-port")
        .query(&mut plain)
        .unwrap();
    assert_eq!(v, vec!["tls-port", "0"]);
}

/// `openssl s_client` sending PING, saving or reusing a session; returns
/// its "New, ..." or "Reused, ..." line.
fn session_line(port: u16, sess: &Path, reuse: bool, extra: &[&str]) -> String {
    use std::io::Write;
    let c = certs();
    let mut child = Command::new("openssl")
        .args([
            "s_client",
            "-connect",
            &format!("127.0.0.1:{port}"),
            "-CAfile",
        ])
        .arg(c.file("ca.crt"))
        .arg("-cert")
        .arg(c.file("client.crt"))
        .arg("-key")
        .arg(c.file("client.key"))
        .arg(if reuse { "-sess_in" } else { "-sess_out" })
        .arg(sess)
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("openssl s_client");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"PING\r\n").unwrap();
    // Stdin stays open until the reply arrived: a TLSv1.3 session ticket
    // comes right after the handshake, so by then s_client has it (closing
    // stdin at once could end the connection before it).
    let mut found = String::new();
    let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    for line in std::io::BufRead::lines(stdout) {
        let Ok(line) = line else { break };
        if line.starts_with("New, ") || line.starts_with("Reused, ") {
            found = line.clone();
        }
        if line.contains("PONG") {
            break;
        }
    }
    drop(stdin);
    let _ = child.wait();
    found
}

#[test]
fn session_caching_resumes_sessions_when_on() {
    let (s, tls) = start_tls(&[]);
    let dir = TempDir::new("tls-sess");
    for extra in [&[][..], &["-tls1_2"][..]] {
        let sess = dir.join("sess");
        let first = session_line(tls, &sess, false, extra);
        assert!(first.starts_with("New, "), "{first}");
        let again = session_line(tls, &sess, true, extra);
        assert!(again.starts_with("Reused, "), "{extra:?}: {again}");
    }
    let mut plain = s.client();
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("tls-session-caching")
        .arg("no")
        .query(&mut plain)
        .unwrap();
    for extra in [&[][..], &["-tls1_2"][..]] {
        let sess = dir.join("sess-off");
        let _ = std::fs::remove_file(&sess);
        let _ = session_line(tls, &sess, false, extra);
        if !sess.exists() {
            // TLSv1.3 without caching sends no ticket: nothing to resume.
            continue;
        }
        let again = session_line(tls, &sess, true, extra);
        assert!(again.starts_with("New, "), "{extra:?}: {again}");
    }
}
