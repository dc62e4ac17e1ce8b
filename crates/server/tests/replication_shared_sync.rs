//! One snapshot shared by replicas that start a full sync together
//! (issue 21): a diskless group formed during `repl-diskless-sync-delay`,
//! started early by `repl-diskless-sync-max-replicas`, and a disk RDB
//! being written joined by a replica arriving meanwhile. Petrel and
//! redis-server replicas side by side; every one ends with the master's
//! data (`DEBUG DIGEST`). Each case counts the master's "Starting BGSAVE
//! for SYNC" lines, as Redis logs one per child.
//!
//! No timing assertions: everything waits by polling with generous limits.

#[path = "common/aof_workload.rs"]
mod aof_workload;
mod common;
#[path = "common/repl_links.rs"]
mod repl_links;

use common::*;
use repl_links::*;

fn petrel_replica() -> Server {
    Server::start(&[("enable-debug-command", "yes")])
}

/// Up to three replicas: two petrel ones and a redis-server one when it
/// is installed.
fn replicas() -> Vec<Server> {
    let mut v = vec![petrel_replica(), petrel_replica()];
    if let Some(r) = RefRedis::start_with(Opts::new(&[("enable-debug-command", "yes")])) {
        v.push(r);
    }
    v
}

fn bgsaves_for_sync(master: &Server) -> usize {
    master.log().matches("Starting BGSAVE for SYNC").count()
}

/// Replicas attaching within the diskless delay share one transfer.
#[test]
fn replicas_within_the_diskless_delay_share_one_snapshot() {
    let master = Server::start(&[
        ("enable-debug-command", "yes"),
        ("repl-diskless-sync", "yes"),
        ("repl-diskless-sync-delay", "3"),
        ("repl-ping-replica-period", "1"),
    ]);
    workload(&master, 2, 1500, 41);
    let reps = replicas();
    for r in &reps {
        replicaof(r, &master);
    }
    // Writes while the group waits and while the payload goes out.
    workload(&master, 2, 500, 42);
    for r in &reps {
        link_up(r);
    }
    workload(&master, 2, 500, 43);
    let refs: Vec<&Server> = reps.iter().collect();
    assert_all_in_sync(&master, &refs, "after the shared diskless sync");
    assert_eq!(bgsaves_for_sync(&master), 1, "{}", master.log());
    assert_eq!(
        master
            .log()
            .matches("Starting BGSAVE for SYNC with target: replicas sockets")
            .count(),
        1
    );
    assert_eq!(sync_counts(&master).0, reps.len() as i64);
}

/// `repl-diskless-sync-max-replicas`: the transfer starts as soon as that
/// many replicas wait, long before the delay (an hour) ends.
#[test]
fn max_replicas_starts_the_diskless_transfer_early() {
    let master = Server::start(&[
        ("enable-debug-command", "yes"),
        ("repl-diskless-sync", "yes"),
        ("repl-diskless-sync-delay", "3600"),
        ("repl-diskless-sync-max-replicas", "2"),
        ("repl-ping-replica-period", "1"),
    ]);
    {
        let mut c = master.raw();
        assert_eq!(
            c.cmd(&["CONFIG", "GET", "repl-diskless-sync-max-replicas"]),
            Value::Array(vec![
                Value::bulk("repl-diskless-sync-max-replicas"),
                Value::bulk("2")
            ])
        );
    }
    workload(&master, 2, 1000, 51);
    let a = petrel_replica();
    let b = RefRedis::start_with(Opts::new(&[("enable-debug-command", "yes")]))
        .unwrap_or_else(petrel_replica);
    replicaof(&a, &master);
    replicaof(&b, &master);
    link_up(&a);
    link_up(&b);
    workload(&master, 2, 300, 52);
    assert_all_in_sync(&master, &[&a, &b], "after the early transfer");
    assert_eq!(bgsaves_for_sync(&master), 1, "{}", master.log());
}

/// A replica arriving while the RDB for another one is written to disk
/// joins it: one BGSAVE, "Waiting for end of BGSAVE for SYNC", both in
/// sync (the backlog is large enough to cover the stream since the cut).
#[test]
fn a_replica_joins_the_disk_rdb_being_written() {
    let master = Server::start(&[
        ("enable-debug-command", "yes"),
        ("repl-diskless-sync", "no"),
        ("repl-backlog-size", "64mb"),
        ("repl-ping-replica-period", "1"),
    ]);
    // (The workload's FLUSHALLs first, then the bulk.)
    workload(&master, 2, 300, 61);
    {
        // Enough data that writing the RDB takes a while.
        let mut c = master.raw();
        c.timeout = Duration::from_secs(120);
        assert_eq!(
            c.cmd(&["DEBUG", "POPULATE", "1500000", "key", "64"]),
            Value::simple("OK")
        );
    }
    let a = petrel_replica();
    let b = RefRedis::start_with(Opts::new(&[("enable-debug-command", "yes")]))
        .unwrap_or_else(petrel_replica);
    replicaof(&a, &master);
    assert!(master.wait_log("Starting BGSAVE for SYNC with target: disk", PATIENCE));
    replicaof(&b, &master);
    // Light writes meanwhile (no FLUSHALL: the stream must stay in the
    // backlog while the RDB is written).
    {
        let mut c = master.raw();
        for i in 0..200 {
            c.cmd(&["SET", &format!("during:{i}"), "v"]);
        }
    }
    link_up(&a);
    link_up(&b);
    assert!(
        master.log().contains("Waiting for end of BGSAVE for SYNC"),
        "the second replica did not join (the RDB was done before it came?)\n{}",
        master.log()
    );
    assert_eq!(bgsaves_for_sync(&master), 1, "{}", master.log());
    assert_all_in_sync(&master, &[&a, &b], "after the shared disk sync");
}
