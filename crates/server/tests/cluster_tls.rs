//! The cluster bus over TLS (`tls-cluster yes`, issue 26): the bus port
//! accepts TLS only, links a node opens speak TLS with its client
//! certificate and check the peer against the CA, as Redis 7.0 does. A
//! Petrel cluster made by `redis-cli --tls --cluster create`, a mixed
//! cluster with redis-server 7.0, the ports clients are shown (the TLS
//! port to TLS clients, the plaintext port to plaintext ones: CLUSTER
//! NODES, SLOTS, SHARDS, MOVED), refused peers (plaintext, wrong CA,
//! cipher suites in common none), and the settings errors.
//!
//! Certificates are made at test time with the `openssl` command. Tests
//! that need redis-server skip without it unless PETREL_REQUIRE_REDIS=1;
//! those that need `redis-cli` skip without it. No timing assertions:
//! everything waits by polling with generous limits.

mod common;
#[path = "common/tls_certs.rs"]
mod tls_certs;

use common::cluster::{have_tool, wait_for};
use common::*;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use tls_certs::*;

/// Two CAs; `node` (signed by `ca`) and `stranger` (signed by
/// `other-ca`), each usable as server and client certificate.
fn certs() -> &'static Certs {
    static CERTS: OnceLock<Certs> = OnceLock::new();
    CERTS.get_or_init(|| {
        let dir = TempDir::new("cluster-tls-certs");
        let d = dir.path().to_path_buf();
        std::fs::write(
            d.join("node.ext"),
            "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n\
             extendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n",
        )
        .unwrap();
        for ca in ["ca", "other-ca"] {
            make_ca(&d, ca, &format!("Petrel cluster test {ca}"));
        }
        for (name, ca) in [("node", "ca"), ("stranger", "other-ca")] {
            issue_cert(&d, name, ca, "node.ext", name);
        }
        Certs { _dir: dir, path: d }
    })
}

/// A cluster node with its TLS port, running `tls-cluster yes`.
struct Node {
    s: Server,
    tls: u16,
    cport: u16,
}

/// Starts a `tls-cluster yes` node presenting `cert` and trusting `ca`,
/// with `extra` settings.
fn tls_node(kind: Kind, cert: &str, ca: &str, extra: &[(&str, &str)]) -> Node {
    let c = certs();
    let tls = free_port();
    let cport = free_port();
    let mut o = Opts::new(&[
        ("cluster-enabled", "yes"),
        ("cluster-port", &cport.to_string()),
        ("cluster-node-timeout", "3000"),
        ("loglevel", "verbose"),
        ("tls-port", &tls.to_string()),
        ("tls-cert-file", &c.file(&format!("{cert}.crt"))),
        ("tls-key-file", &c.file(&format!("{cert}.key"))),
        ("tls-ca-cert-file", &c.file(&format!("{ca}.crt"))),
        ("tls-cluster", "yes"),
        ("tls-replication", "yes"),
    ]);
    for (k, v) in extra {
        o = o.arg(k, v);
    }
    Node {
        s: Server::start_opts(kind, o),
        tls,
        cport,
    }
}

/// `redis-cli --tls` with the CA and the node certificate as client
/// certificate: (success, stdout and stderr).
fn cli_tls(args: &[String]) -> (bool, String) {
    let c = certs();
    let o = Command::new("redis-cli")
        .args(["--tls", "--cacert"])
        .arg(c.file("ca.crt"))
        .arg("--cert")
        .arg(c.file("node.crt"))
        .arg("--key")
        .arg(c.file("node.key"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("redis-cli");
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.success(), out)
}

/// A command over TLS to the node's TLS port (redis-cli's text).
fn tls_cmd(n: &Node, args: &[&str]) -> String {
    let mut a = vec![
        "-h".to_string(),
        "127.0.0.1".into(),
        "-p".into(),
        n.tls.to_string(),
    ];
    a.extend(args.iter().map(|s| s.to_string()));
    cli_tls(&a).1
}

fn text(v: Value) -> String {
    match v {
        Value::Bulk(b) | Value::Verbatim { data: b, .. } | Value::Simple(b) => {
            String::from_utf8_lossy(&b).into_owned()
        }
        Value::Error(b) => format!("-{}", String::from_utf8_lossy(&b)),
        other => format!("{other:?}"),
    }
}

fn plain_cmd(n: &Node, args: &[&str]) -> String {
    text(n.s.raw().cmd(args))
}

fn myid(n: &Node) -> String {
    plain_cmd(n, &["CLUSTER", "MYID"])
}

/// `redis-cli --tls --cluster create` of the nodes' TLS addresses, then
/// `--cluster check` of each and cluster_state:ok everywhere.
fn create_and_check(nodes: &[&Node]) {
    let mut args = vec!["--cluster".to_string(), "create".to_string()];
    args.extend(nodes.iter().map(|n| format!("127.0.0.1:{}", n.tls)));
    args.push("--cluster-yes".into());
    let (ok, out) = cli_tls(&args);
    assert!(ok, "create failed:\n{out}");
    assert!(
        out.contains("[OK] All nodes agree about slots configuration."),
        "{out}"
    );
    assert!(out.contains("[OK] All 16384 slots covered."), "{out}");
    for n in nodes {
        wait_for("redis-cli --cluster check over TLS", || {
            let (ok, out) = cli_tls(&[
                "--cluster".into(),
                "check".into(),
                format!("127.0.0.1:{}", n.tls),
            ]);
            if ok
                && out.contains("[OK] All nodes agree about slots configuration.")
                && out.contains("[OK] All 16384 slots covered.")
                && !out.contains("[ERR]")
                && !out.contains("[WARNING]")
            {
                Ok(())
            } else {
                Err(out)
            }
        });
    }
    wait_for("cluster_state:ok everywhere", || {
        for n in nodes {
            let info = plain_cmd(n, &["CLUSTER", "INFO"]);
            if !info.contains("cluster_state:ok") {
                return Err(info);
            }
        }
        Ok(())
    });
}

/// Every node knows every node, connected, at `127.0.0.1:<port>@<cport>`
/// where the port is the TLS port over TLS and the plaintext port over
/// a plaintext connection.
fn agreed(nodes: &[&Node]) -> Result<(), String> {
    let ids: Vec<String> = nodes.iter().map(|n| myid(n)).collect();
    for (i, n) in nodes.iter().enumerate() {
        for (over_tls, table) in [
            (true, tls_cmd(n, &["CLUSTER", "NODES"])),
            (false, plain_cmd(n, &["CLUSTER", "NODES"])),
        ] {
            let rows: Vec<Vec<&str>> = table
                .lines()
                .map(|l| l.split(' ').collect::<Vec<_>>())
                .collect();
            if rows.len() != nodes.len() {
                return Err(format!("node {i} knows {} nodes: {table}", rows.len()));
            }
            for (j, other) in nodes.iter().enumerate() {
                let row = rows
                    .iter()
                    .find(|r| r[0] == ids[j])
                    .ok_or_else(|| format!("node {i} does not know node {j}: {table}"))?;
                let port = if over_tls { other.tls } else { other.s.port() };
                let want = format!("127.0.0.1:{port}@{}", other.cport);
                if row[1] != want || row[7] != "connected" {
                    return Err(format!(
                        "node {i} (over TLS: {over_tls}) shows node {j} as {row:?}, \
                         not at {want}, connected"
                    ));
                }
            }
        }
    }
    Ok(())
}

/// A key whose slot `owner` serves, and a node that does not serve it.
fn key_of<'a>(nodes: &[&'a Node], owner: usize) -> (String, &'a Node) {
    for i in 0..100_000 {
        let key = format!("k{i}");
        let slot = match nodes[0].s.raw().cmd(&["CLUSTER", "KEYSLOT", &key]) {
            Value::Int(n) => n,
            v => panic!("{v:?}"),
        };
        let owner_id = myid(nodes[owner]);
        let slots = plain_cmd(nodes[owner], &["CLUSTER", "NODES"]);
        let line = slots.lines().find(|l| l.starts_with(&owner_id)).unwrap();
        let serves = line.split(' ').skip(8).any(|r| match r.split_once('-') {
            Some((a, b)) => (a.parse::<i64>().unwrap()..=b.parse::<i64>().unwrap()).contains(&slot),
            None => r.parse::<i64>().ok() == Some(slot),
        });
        if serves {
            return (key, nodes[(owner + 1) % nodes.len()]);
        }
    }
    panic!("no key found for node {owner}");
}

/// Redirections, CLUSTER SLOTS and CLUSTER SHARDS name the TLS port to a
/// TLS client and the plaintext port to a plaintext one.
fn ports_shown_by_connection_type(nodes: &[&Node]) {
    let (key, other) = key_of(nodes, 0);
    let owner = nodes[0];
    wait_for("MOVED with the plaintext port over plaintext", || {
        let got = plain_cmd(other, &["GET", &key]);
        if got.starts_with("-MOVED ") && got.ends_with(&format!(" 127.0.0.1:{}", owner.s.port())) {
            Ok(())
        } else {
            Err(got)
        }
    });
    let got = tls_cmd(other, &["GET", &key]);
    assert!(
        got.contains("MOVED ")
            && got
                .trim_end()
                .ends_with(&format!(" 127.0.0.1:{}", owner.tls)),
        "{got}"
    );
    let slots_tls = tls_cmd(other, &["CLUSTER", "SLOTS"]);
    let slots_plain = format!("{:?}", other.s.raw().cmd(&["CLUSTER", "SLOTS"]));
    for n in nodes {
        let id = myid(n);
        assert!(
            slots_tls.contains(&format!("127.0.0.1\n{}\n{id}\n", n.tls)),
            "{slots_tls}"
        );
        assert!(
            slots_plain.contains(&format!("Int({})", n.s.port())),
            "{slots_plain}"
        );
        assert!(
            !slots_plain.contains(&format!("Int({})", n.tls)),
            "{slots_plain}"
        );
    }
    // SHARDS: both ports, whoever asks.
    for shards in [
        tls_cmd(other, &["CLUSTER", "SHARDS"]),
        plain_cmd_lines(other, &["CLUSTER", "SHARDS"]),
    ] {
        for n in nodes {
            assert!(
                shards.contains(&format!(
                    "{}\nport\n{}\ntls-port\n{}\nip\n127.0.0.1\n",
                    myid(n),
                    n.s.port(),
                    n.tls
                )),
                "{shards}"
            );
        }
    }
    // A cluster client over TLS follows the redirection to the TLS port.
    let (ok, out) = cli_tls(&[
        "-c".into(),
        "-p".into(),
        other.tls.to_string(),
        "SET".into(),
        key.clone(),
        "over-tls".into(),
    ]);
    assert!(ok && out.trim_end().ends_with("OK"), "{out}");
    assert_eq!(plain_cmd(owner, &["GET", &key]), "over-tls");
}

/// redis-cli's text of a command over the plaintext port.
fn plain_cmd_lines(n: &Node, args: &[&str]) -> String {
    let o = Command::new("redis-cli")
        .args(["-p", &n.s.port().to_string()])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("redis-cli");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn redis_cli_creates_a_tls_cluster_of_petrel_nodes() {
    if !have_tool("redis-cli", &["--version"]) {
        return;
    }
    let nodes: Vec<Node> = (0..3)
        .map(|_| tls_node(Kind::Petrel, "node", "ca", &[]))
        .collect();
    let refs: Vec<&Node> = nodes.iter().collect();
    create_and_check(&refs);
    wait_for("CLUSTER NODES agreed", || agreed(&refs));
    ports_shown_by_connection_type(&refs);
    // The bus links are TLS: the bus port answers a TLS handshake.
    let bus = Command::new("openssl")
        .args(["s_client", "-connect"])
        .arg(format!("127.0.0.1:{}", nodes[0].cport))
        .args(["-CAfile", &certs().file("ca.crt"), "-brief"])
        .stdin(Stdio::null())
        .output()
        .expect("openssl");
    let out = String::from_utf8_lossy(&bus.stderr).into_owned();
    assert!(out.contains("Verification: OK"), "{out}");
    // A replica joins over the TLS bus and replicates from its master's
    // announced (TLS) port over TLS (`tls-replication yes`).
    let r = tls_node(Kind::Petrel, "node", "ca", &[]);
    meet(&r, &nodes[0]);
    let master = myid(&nodes[0]);
    wait_for("the new node is known", || {
        let t = plain_cmd(&r, &["CLUSTER", "NODES"]);
        if t.lines().count() == 4 && !t.contains("handshake") {
            Ok(())
        } else {
            Err(t)
        }
    });
    assert_eq!(plain_cmd(&r, &["CLUSTER", "REPLICATE", &master]), "OK");
    wait_for("the replica's link is up", || {
        let info = plain_cmd(&r, &["INFO", "replication"]);
        if info.contains("master_link_status:up")
            && info.contains(&format!("master_port:{}", nodes[0].tls))
        {
            Ok(())
        } else {
            Err(info)
        }
    });
    let (key, _) = key_of(&refs, 0);
    assert_eq!(plain_cmd(&nodes[0], &["SET", &key, "replicated"]), "OK");
    wait_for("the write reaches the replica", || {
        let mut c = r.s.raw();
        c.cmd(&["READONLY"]);
        match text(c.cmd(&["GET", &key])) {
            v if v == "replicated" => Ok(()),
            v => Err(v),
        }
    });
    wait_for("every node sees the replica", || {
        let id = myid(&r);
        for n in &nodes {
            let t = tls_cmd(n, &["CLUSTER", "NODES"]);
            let want = format!("{id} 127.0.0.1:{}@{} slave {master} ", r.tls, r.cport);
            if !t.contains(&want) {
                return Err(t);
            }
        }
        Ok(())
    });
}

#[test]
fn a_mixed_tls_cluster_of_redis_server_and_petrel() {
    if !redis_available() || !have_tool("redis-cli", &["--version"]) {
        return;
    }
    let a = tls_node(Kind::Petrel, "node", "ca", &[]);
    let r = tls_node(Kind::Redis, "node", "ca", &[]);
    let c = tls_node(Kind::Petrel, "node", "ca", &[]);
    let refs = [&a, &r, &c];
    create_and_check(&refs);
    wait_for("CLUSTER NODES agreed", || agreed(&refs));
    // Written through the Petrel node and through redis-server, each key
    // lands on its owner, whichever kind that is.
    for (entry, owner) in [(&a, 1), (&r, 0), (&r, 2), (&c, 1)] {
        let (key, _) = key_of(&refs, owner);
        let (ok, out) = cli_tls(&[
            "-c".into(),
            "-p".into(),
            entry.tls.to_string(),
            "SET".into(),
            key.clone(),
            format!("v{owner}"),
        ]);
        assert!(ok && out.trim_end().ends_with("OK"), "{out}");
        assert_eq!(plain_cmd(refs[owner], &["GET", &key]), format!("v{owner}"));
    }
    ports_shown_by_connection_type(&refs);
}

/// MEET `b` from `a` at its TLS port and bus port.
fn meet(a: &Node, b: &Node) {
    assert_eq!(
        plain_cmd(
            a,
            &[
                "CLUSTER",
                "MEET",
                "127.0.0.1",
                &b.tls.to_string(),
                &b.cport.to_string()
            ]
        ),
        "OK"
    );
}

/// True once `n`'s log has `needle` at least `times` times.
fn logged(n: &Node, needle: &str, times: usize) -> Result<(), String> {
    let log = n.s.log();
    if log.matches(needle).count() >= times {
        Ok(())
    } else {
        Err(log)
    }
}

/// Node `a` has not learned `b`'s id (it may still list `b` in handshake).
fn never_met(a: &Node, b: &Node) {
    let table = plain_cmd(a, &["CLUSTER", "NODES"]);
    assert!(!table.contains(&myid(b)), "{table}");
    for l in table.lines() {
        assert!(l.contains("myself") || l.contains("handshake"), "{table}");
    }
}

#[test]
fn a_plaintext_peer_is_refused_by_the_tls_bus() {
    let mut t = tls_node(Kind::Petrel, "node", "ca", &[]);
    // A plaintext cluster node meets the TLS node: its PINGs are refused.
    let cport = free_port();
    let p = Server::start_opts(
        Kind::Petrel,
        Opts::new(&[
            ("cluster-enabled", "yes"),
            ("cluster-port", &cport.to_string()),
        ]),
    );
    assert_eq!(
        text(p.raw().cmd(&[
            "CLUSTER",
            "MEET",
            "127.0.0.1",
            &t.tls.to_string(),
            &t.cport.to_string()
        ])),
        "OK"
    );
    wait_for("the TLS bus refuses the plaintext PINGs", || {
        logged(&t, "Error accepting cluster node connection", 3)
    });
    // Garbage and a bare close on the bus port: refused, nothing else.
    for bytes in [&b"PING\r\n"[..], b"", &[0x16, 3, 1, 0xff, 0xff, 0, 0][..]] {
        use std::io::Write;
        let mut s = std::net::TcpStream::connect(("127.0.0.1", t.cport)).unwrap();
        s.write_all(bytes).unwrap();
        s.shutdown(std::net::Shutdown::Write).unwrap();
        let mut rest = Vec::new();
        use std::io::Read;
        let _ = s.read_to_end(&mut rest);
        assert!(!rest.starts_with(b"RCmb"), "a bus message came back");
    }
    t.s.assert_alive();
    never_met(
        &t,
        &Node {
            s: p,
            tls: 0,
            cport,
        },
    );
}

#[test]
fn a_peer_of_another_ca_is_refused_both_ways() {
    let a = tls_node(Kind::Petrel, "node", "ca", &[]);
    // Presents a certificate of another CA, trusts `ca`: `a` refuses it as
    // a client and `a`'s links to it fail on its certificate.
    let b = tls_node(Kind::Petrel, "stranger", "ca", &[]);
    meet(&a, &b);
    wait_for("the outgoing link fails on the certificate", || {
        logged(&a, &format!("at 127.0.0.1:{} failed", b.cport), 2)
    });
    // `b` never hears a MEET; when `a` is met from `b`, `a` refuses `b`.
    meet(&b, &a);
    wait_for("the bus refuses the stranger's links", || {
        logged(&a, "Error accepting cluster node connection", 2)
    });
    never_met(&a, &b);
    never_met(&b, &a);
}

#[test]
fn cipher_suites_apply_to_outgoing_links() {
    // No TLSv1.3 suite in common: neither node's links to the other get
    // through, whichever side opens them (before, outgoing links offered
    // every suite).
    let a = tls_node(
        Kind::Petrel,
        "node",
        "ca",
        &[
            ("tls-ciphersuites", "TLS_AES_256_GCM_SHA384"),
            ("tls-protocols", "TLSv1.3"),
        ],
    );
    let b = tls_node(
        Kind::Petrel,
        "node",
        "ca",
        &[
            ("tls-ciphersuites", "TLS_AES_128_GCM_SHA256"),
            ("tls-protocols", "TLSv1.3"),
        ],
    );
    meet(&a, &b);
    wait_for("a's link to b fails", || {
        logged(&a, &format!("at 127.0.0.1:{} failed", b.cport), 2)
    });
    wait_for("b refuses a's links", || {
        logged(&b, "Error accepting cluster node connection", 2)
    });
    never_met(&b, &a);
    // With a suite in common (CONFIG SET for new links) they meet.
    assert_eq!(
        plain_cmd(
            &b,
            &[
                "CONFIG",
                "SET",
                "tls-ciphersuites",
                "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384"
            ]
        ),
        "OK"
    );
    meet(&a, &b);
    wait_for("a and b meet", || {
        let table = plain_cmd(&a, &["CLUSTER", "NODES"]);
        if table.contains(&myid(&b)) && !table.contains("handshake") {
            Ok(())
        } else {
            Err(table)
        }
    });
    // Replication: the replica's link to a master with no suite in common
    // fails too.
    let m = tls_node(
        Kind::Petrel,
        "node",
        "ca",
        &[
            ("cluster-enabled", "no"),
            ("tls-ciphersuites", "TLS_AES_256_GCM_SHA384"),
            ("tls-protocols", "TLSv1.3"),
        ],
    );
    let r = tls_node(
        Kind::Petrel,
        "node",
        "ca",
        &[
            ("cluster-enabled", "no"),
            ("tls-ciphersuites", "TLS_AES_128_GCM_SHA256"),
            ("tls-protocols", "TLSv1.3"),
        ],
    );
    assert_eq!(
        plain_cmd(&r, &["REPLICAOF", "127.0.0.1", &m.tls.to_string()]),
        "OK"
    );
    wait_for("the replica's TLS handshake fails", || {
        logged(&r, "TLS handshake with the master failed", 1)
    });
    assert!(plain_cmd(&r, &["INFO", "replication"]).contains("master_link_status:down"));
}

#[test]
fn tls_cluster_without_tls_settings_is_refused() {
    // At startup: Redis's messages.
    let (code, log) =
        petrel_startup_failure(None, &["--cluster-enabled", "yes", "--tls-cluster", "yes"]);
    assert_ne!(code, Some(0));
    assert!(log.contains("No tls-cert-file configured!"), "{log}");
    assert!(
        log.contains("Failed to configure TLS. Check logs for more info."),
        "{log}"
    );
    let c = certs();
    let (crt, key) = (c.file("node.crt"), c.file("node.key"));
    let (code, log) = petrel_startup_failure(
        None,
        &[
            "--cluster-enabled",
            "yes",
            "--tls-cluster",
            "yes",
            "--tls-cert-file",
            &crt,
            "--tls-key-file",
            &key,
            "--tls-auth-clients",
            "no",
        ],
    );
    assert_ne!(code, Some(0));
    assert!(
        log.contains("Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, tls-replication or tls-auth-clients are enabled!"),
        "{log}"
    );
    // CONFIG SET on a node without TLS settings: refused, nothing changed.
    let cport = free_port();
    let s = Server::start_opts(
        Kind::Petrel,
        Opts::new(&[
            ("cluster-enabled", "yes"),
            ("cluster-port", &cport.to_string()),
        ]),
    );
    assert_eq!(
        text(s.raw().cmd(&["CONFIG", "SET", "tls-cluster", "yes"])),
        "-ERR CONFIG SET failed (possibly related to argument 'tls-cluster') - Unable to update TLS configuration. Check server logs."
    );
    // The log line is written by the server while the reply goes out.
    assert!(s.wait_log(
        "No tls-cert-file configured!",
        std::time::Duration::from_secs(10)
    ));
    assert_eq!(
        format!("{:?}", s.raw().cmd(&["CONFIG", "GET", "tls-cluster"])),
        format!(
            "{:?}",
            Value::Array(vec![
                Value::Bulk(b"tls-cluster".to_vec()),
                Value::Bulk(b"no".to_vec())
            ])
        )
    );
}

/// With `tls-cluster yes` MIGRATE connects to its target over TLS (Redis
/// uses the cluster's connection type): to a TLS port the key moves, to a
/// plaintext port the handshake fails with an IOERR; petrel and
/// redis-server 7.0 move keys to each other that way.
#[test]
fn migrate_speaks_tls_with_tls_cluster() {
    let standalone = [("cluster-enabled", "no")];
    let a = tls_node(Kind::Petrel, "node", "ca", &standalone);
    let b = tls_node(Kind::Petrel, "node", "ca", &standalone);
    plain_cmd(&a, &["SET", "k", "v"]);
    let b_tls = b.tls.to_string();
    assert_eq!(
        plain_cmd(&a, &["MIGRATE", "127.0.0.1", &b_tls, "k", "0", "5000"]),
        "OK"
    );
    assert_eq!(plain_cmd(&b, &["GET", "k"]), "v");
    assert_eq!(plain_cmd(&a, &["EXISTS", "k"]), "Int(0)");
    plain_cmd(&a, &["SET", "k2", "v2"]);
    let b_plain = b.s.port().to_string();
    let r = plain_cmd(&a, &["MIGRATE", "127.0.0.1", &b_plain, "k2", "0", "1000"]);
    assert!(r.starts_with("-IOERR"), "{r}");
    assert_eq!(plain_cmd(&a, &["GET", "k2"]), "v2", "nothing moved");
    if !redis_available() {
        return;
    }
    let r = tls_node(Kind::Redis, "node", "ca", &standalone);
    let r_tls = r.tls.to_string();
    assert_eq!(
        plain_cmd(&a, &["MIGRATE", "127.0.0.1", &r_tls, "k2", "0", "5000"]),
        "OK"
    );
    assert_eq!(plain_cmd(&r, &["GET", "k2"]), "v2");
    let a_tls = a.tls.to_string();
    assert_eq!(
        plain_cmd(&r, &["MIGRATE", "127.0.0.1", &a_tls, "k2", "0", "5000"]),
        "OK"
    );
    assert_eq!(plain_cmd(&a, &["GET", "k2"]), "v2");
}
