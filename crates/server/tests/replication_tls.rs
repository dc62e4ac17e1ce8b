//! Replication over TLS (`tls-replication yes`, issue 26): a replica
//! dials its master's TLS port with its client certificate and checks
//! the master's against its CA; a master serves replicas on its TLS
//! port. Petrel ↔ Petrel, redis-server 7.0 (TLS build) master → Petrel,
//! and Petrel master → redis-server replica, compared by `DEBUG DIGEST`
//! and offsets, with a partial resync over TLS. A replica that does not
//! trust the master's CA never gets a link up. The redis-server cases
//! are skipped without redis-server unless `PETREL_REQUIRE_REDIS=1`.
//!
//! Certificates are made at test time with the `openssl` command. No
//! timing assertions: everything waits by polling with generous limits.

#[path = "common/aof_workload.rs"]
mod aof_workload;
mod common;
#[path = "common/repl_links.rs"]
mod repl_links;
#[path = "common/tls_certs.rs"]
mod tls_certs;

use common::*;
use repl_links::*;
use std::sync::OnceLock;
use tls_certs::*;

/// Two CAs; a node certificate of the first (server and client use, as
/// Redis nodes use one certificate for both sides of a link).
fn certs() -> &'static Certs {
    static CERTS: OnceLock<Certs> = OnceLock::new();
    CERTS.get_or_init(|| {
        let dir = TempDir::new("repl-tls-certs");
        let d = dir.path().to_path_buf();
        std::fs::write(
            d.join("node.ext"),
            "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n\
             extendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n",
        )
        .unwrap();
        for ca in ["ca", "other-ca"] {
            make_ca(&d, ca, &format!("Petrel repl test {ca}"));
        }
        issue_cert(&d, "node", "ca", "node.ext", "node");
        Certs { _dir: dir, path: d }
    })
}

/// TLS settings of a node: its TLS port, the node certificate, `ca` as
/// the trusted CA, replication over TLS.
fn tls_opts(tls_port: u16, ca: &str) -> Opts {
    let c = certs();
    Opts::new(&[
        ("enable-debug-command", "yes"),
        ("repl-diskless-sync-delay", "0"),
        ("repl-ping-replica-period", "1"),
        ("tls-port", &tls_port.to_string()),
        ("tls-cert-file", &c.file("node.crt")),
        ("tls-key-file", &c.file("node.key")),
        ("tls-ca-cert-file", &c.file(ca)),
        ("tls-replication", "yes"),
    ])
}

fn petrel_tls(ca: &str) -> (Server, u16) {
    let port = free_port();
    (Server::start_with(tls_opts(port, ca)), port)
}

fn redis_tls() -> Option<(Server, u16)> {
    let port = free_port();
    RefRedis::start_with(tls_opts(port, "ca.crt")).map(|s| (s, port))
}

/// `REPLICAOF 127.0.0.1 <tls_port>`.
fn replicaof_tls(replica: &Server, tls_port: u16) {
    assert_eq!(
        replica
            .raw()
            .cmd(&["REPLICAOF", "127.0.0.1", &tls_port.to_string()]),
        Value::simple("OK")
    );
}

/// Sync, stream, a partial resync after the link is killed, all over TLS.
fn follows_over_tls(master: &Server, replica: &Server, master_tls: u16) {
    workload(master, 2, 1000, 51);
    replicaof_tls(replica, master_tls);
    link_up(replica);
    let mut r = replica.raw();
    assert_eq!(
        info_num(&mut r, "replication", "master_port"),
        master_tls as i64
    );
    workload(master, 3, 1000, 52);
    assert_all_in_sync(master, &[replica], "after the workload over TLS");
    let mut m = master.raw();
    assert_eq!(m.cmd(&["WAIT", "1", "60000"]), Value::Int(1));
    let (full, partial) = sync_counts(master);
    assert_eq!(m.cmd(&["CLIENT", "KILL", "TYPE", "replica"]), Value::Int(1));
    m.cmd(&["SET", "while", "down"]);
    wait_for("the partial resync over TLS", || {
        sync_counts(master).1 > partial
    });
    link_up(replica);
    workload(master, 2, 500, 53);
    assert_all_in_sync(master, &[replica], "after the partial resync over TLS");
    assert_eq!(sync_counts(master).0, full, "a full sync happened");
}

#[test]
fn petrel_replica_of_petrel_over_tls() {
    let (master, master_tls) = petrel_tls("ca.crt");
    let (replica, _) = petrel_tls("ca.crt");
    follows_over_tls(&master, &replica, master_tls);
    assert!(!master.log().contains("not supported"), "{}", master.log());
}

#[test]
fn petrel_replica_of_redis_over_tls() {
    let Some((master, master_tls)) = redis_tls() else {
        return;
    };
    let (replica, _) = petrel_tls("ca.crt");
    follows_over_tls(&master, &replica, master_tls);
}

#[test]
fn redis_replica_of_petrel_over_tls() {
    let (master, master_tls) = petrel_tls("ca.crt");
    let Some((replica, replica_tls)) = redis_tls() else {
        return;
    };
    follows_over_tls(&master, &replica, master_tls);
    // The replica announced its TLS port, as Redis does over TLS.
    let text = master.raw().cmd(&["INFO", "replication"]);
    let text = String::from_utf8_lossy(text.as_bytes().unwrap()).into_owned();
    assert!(
        text.contains(&format!("port={replica_tls},state=online")),
        "{text}"
    );
}

/// A replica that does not trust the master's certificate never syncs.
#[test]
fn replica_refuses_a_master_of_another_ca() {
    let (master, master_tls) = petrel_tls("ca.crt");
    let (replica, _) = petrel_tls("other-ca.crt");
    master.raw().cmd(&["SET", "k", "v"]);
    replicaof_tls(&replica, master_tls);
    assert!(
        replica.wait_log("TLS handshake with the master failed", PATIENCE),
        "{}",
        replica.log()
    );
    let mut r = replica.raw();
    assert_eq!(
        info_field(&mut r, "replication", "master_link_status").as_deref(),
        Some("down")
    );
    assert_eq!(r.cmd(&["DBSIZE"]), Value::Int(0));
}
