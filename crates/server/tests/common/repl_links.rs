//! Helpers of the replication link tests (chains, TLS, diskless load,
//! shared snapshots): INFO fields, polling, a random workload, and the
//! check that two nodes hold the same data at the same offset.

#![allow(dead_code)]

use super::aof_workload::{KEYS, KINDS};
use super::*;
use std::time::Instant;

pub const PATIENCE: Duration = Duration::from_secs(60);

/// The value of `field` in `INFO <section>`.
pub fn info_field(c: &mut RawConn, section: &str, field: &str) -> Option<String> {
    let v = c.cmd(&["INFO", section]);
    let text = String::from_utf8_lossy(v.as_bytes().unwrap_or_default()).into_owned();
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")).map(|s| s.to_string()))
}

pub fn info_num(c: &mut RawConn, section: &str, field: &str) -> i64 {
    info_field(c, section, field)
        .unwrap_or_else(|| panic!("no {field} in INFO {section}"))
        .parse()
        .unwrap()
}

/// Polls `cond` until it holds; panics with `what` after [`PATIENCE`].
pub fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let end = Instant::now() + PATIENCE;
    while !cond() {
        if Instant::now() > end {
            panic!("timed out waiting for {what}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `REPLICAOF 127.0.0.1 <master's port>` on `replica`.
pub fn replicaof(replica: &Server, master: &Server) {
    let port = master.port().to_string();
    assert_eq!(
        replica.raw().cmd(&["REPLICAOF", "127.0.0.1", &port]),
        Value::simple("OK")
    );
}

/// Waits until the replica's link is up and no sync is in progress.
pub fn link_up(replica: &Server) {
    let mut c = replica.raw();
    wait_for("the replica's link to come up", || {
        info_field(&mut c, "replication", "master_link_status").as_deref() == Some("up")
            && info_field(&mut c, "replication", "master_sync_in_progress").as_deref() == Some("0")
    });
}

/// (sync_full, sync_partial_ok) of `INFO stats`.
pub fn sync_counts(srv: &Server) -> (i64, i64) {
    let mut c = srv.raw();
    (
        info_num(&mut c, "stats", "sync_full"),
        info_num(&mut c, "stats", "sync_partial_ok"),
    )
}

/// `clients` generators, `ops` steps each, on the master.
pub fn workload(master: &Server, clients: u64, ops: usize, seed: u64) {
    super::aof_workload::run_clients(master.port(), clients, ops, seed);
}

/// Lets short TTLs pass and touches every key of the workload on the
/// master, so each expired key is deleted there and its DEL replicated.
pub fn collect_expired(master: &Server) {
    std::thread::sleep(Duration::from_millis(100));
    let mut c = master.raw();
    for db in ["0", "3"] {
        c.cmd(&["SELECT", db]);
        for kind in KINDS {
            for i in 0..KEYS {
                c.cmd(&["EXISTS", &format!("{kind}:{i}")]);
            }
        }
    }
}

/// Waits until every replica processed the top master's whole stream
/// (`slave_repl_offset` equal to its `master_repl_offset`), then checks
/// each has the master's replication ID, `DEBUG DIGEST` and database
/// sizes.
pub fn assert_all_in_sync(master: &Server, replicas: &[&Server], what: &str) {
    collect_expired(master);
    let mut m = master.raw();
    let replid = info_field(&mut m, "replication", "master_replid").unwrap();
    for (i, replica) in replicas.iter().enumerate() {
        let mut r = replica.raw();
        wait_for(&format!("replica {i} to catch up ({what})"), || {
            let mo = info_num(&mut m, "replication", "master_repl_offset");
            let ro = info_num(&mut r, "replication", "slave_repl_offset");
            ro == mo
        });
        assert_eq!(
            info_field(&mut r, "replication", "master_replid").as_deref(),
            Some(replid.as_str()),
            "replica {i}'s replication ID ({what})"
        );
        assert_eq!(
            info_num(&mut r, "replication", "master_repl_offset"),
            info_num(&mut m, "replication", "master_repl_offset"),
            "replica {i}'s master_repl_offset ({what})"
        );
        assert_eq!(
            m.cmd(&["DEBUG", "DIGEST"]),
            r.cmd(&["DEBUG", "DIGEST"]),
            "DEBUG DIGEST of replica {i} differs ({what})"
        );
        for db in 0..16 {
            let db = db.to_string();
            m.cmd(&["SELECT", &db]);
            r.cmd(&["SELECT", &db]);
            assert_eq!(
                m.cmd(&["DBSIZE"]),
                r.cmd(&["DBSIZE"]),
                "db {db} of replica {i} ({what})"
            );
        }
        m.cmd(&["SELECT", "0"]);
    }
}
