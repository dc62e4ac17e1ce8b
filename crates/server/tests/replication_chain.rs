//! Chained replication: a Petrel replica serves replicas of its own from
//! its forkless snapshot under its master's replication ID and offset,
//! then proxies its master's stream verbatim, so a sub-replica's data,
//! ID and offset are the top master's, and it continues by partial
//! resync after its link drops, after the middle node's master changes
//! (the new ID reaches it through `+CONTINUE <id>`), and after the middle
//! node is promoted (its replid2). Chains with redis-server 7.0 at the
//! top and at the bottom. Skipped without redis-server unless
//! `PETREL_REQUIRE_REDIS=1`.
//!
//! No timing assertions: everything waits by polling with generous limits.

#[path = "common/aof_workload.rs"]
mod aof_workload;
mod common;
#[path = "common/repl_links.rs"]
mod repl_links;

use common::*;
use repl_links::*;

/// A Petrel replica that serves its own replicas at once.
fn petrel_node() -> Server {
    Server::start(&[
        ("enable-debug-command", "yes"),
        ("repl-diskless-sync-delay", "0"),
        ("repl-ping-replica-period", "1"),
    ])
}

fn role_of(srv: &Server) -> String {
    info_field(&mut srv.raw(), "replication", "role").unwrap()
}

/// Kills the middle node's link to its replica and waits for it to come
/// back by partial resync (no full sync on the middle node).
fn sub_replica_continues(middle: &Server, sub: &Server, what: &str) {
    let (full, partial) = sync_counts(middle);
    let mut c = middle.raw();
    assert_eq!(
        c.cmd(&["CLIENT", "KILL", "TYPE", "replica"]),
        Value::Int(1),
        "{what}"
    );
    wait_for(
        &format!("the sub-replica's partial resync ({what})"),
        || sync_counts(middle).1 > partial,
    );
    link_up(sub);
    assert_eq!(sync_counts(middle).0, full, "a full sync happened ({what})");
}

#[test]
fn redis_master_petrel_middle_petrel_sub() {
    let Some(top) = RefRedis::start_with(Opts::new(&[
        ("enable-debug-command", "yes"),
        ("repl-diskless-sync", "yes"),
        ("repl-diskless-sync-delay", "0"),
        ("repl-ping-replica-period", "1"),
    ])) else {
        return;
    };
    workload(&top, 2, 1000, 31);
    let middle = petrel_node();
    replicaof(&middle, &top);
    link_up(&middle);
    // Writes in another database just before the sub-replica syncs: its
    // payload must carry the database the stream had selected.
    {
        let mut c = top.raw();
        c.cmd(&["SELECT", "5"]);
        c.cmd(&["SET", "in5", "a"]);
    }
    assert_all_in_sync(&top, &[&middle], "middle after its full sync");
    let sub = petrel_node();
    replicaof(&sub, &middle);
    link_up(&sub);
    assert_eq!(
        sync_counts(&middle).0,
        1,
        "the middle node served a full sync"
    );
    {
        // The stream goes on in database 5 without a new SELECT.
        let mut c = top.raw();
        c.cmd(&["SELECT", "5"]);
        c.cmd(&["SET", "in5-after", "b"]);
    }
    assert_all_in_sync(&top, &[&middle, &sub], "after the chained full sync");
    assert_eq!(sub.raw().cmd(&["SELECT", "5"]), Value::simple("OK"));
    workload(&top, 3, 1500, 32);
    assert_all_in_sync(&top, &[&middle, &sub], "after the workload");

    // The sub-replica's link drops: +CONTINUE from the middle node.
    sub_replica_continues(&middle, &sub, "killed sub link");
    workload(&top, 2, 500, 33);
    assert_all_in_sync(&top, &[&middle, &sub], "after the sub's partial resync");

    // The middle node's own link drops: it continues with the top, the
    // sub-replica is not disturbed.
    let sub_full = sync_counts(&middle).0;
    let top_partial = sync_counts(&top).1;
    assert_eq!(
        top.raw().cmd(&["CLIENT", "KILL", "TYPE", "replica"]),
        Value::Int(1)
    );
    top.raw().cmd(&["SET", "while", "down"]);
    wait_for("the middle's partial resync", || {
        sync_counts(&top).1 > top_partial
    });
    link_up(&middle);
    workload(&top, 2, 500, 34);
    assert_all_in_sync(&top, &[&middle, &sub], "after the middle's partial resync");
    assert_eq!(sync_counts(&middle).0, sub_full);

    // The middle node is promoted: the sub-replica continues with it by
    // partial resync (the top's ID is the middle's replid2).
    let top_id = info_field(&mut top.raw(), "replication", "master_replid").unwrap();
    let mut m = middle.raw();
    assert_eq!(m.cmd(&["REPLICAOF", "NO", "ONE"]), Value::simple("OK"));
    assert_eq!(
        info_field(&mut m, "replication", "master_replid2").as_deref(),
        Some(top_id.as_str())
    );
    let (full, partial) = sync_counts(&middle);
    assert_eq!(m.cmd(&["SET", "promoted", "yes"]), Value::simple("OK"));
    wait_for("the sub's partial resync with the promoted node", || {
        sync_counts(&middle).1 > partial
    });
    link_up(&sub);
    // The write made before the sub-replica reconnected reaches it.
    assert_all_in_sync(&middle, &[&sub], "just after the promotion");
    assert_eq!(sub.raw().cmd(&["GET", "promoted"]), Value::bulk("yes"));
    workload(&middle, 2, 500, 35);
    assert_all_in_sync(&middle, &[&sub], "after the promotion");
    assert_eq!(sync_counts(&middle).0, full, "a full sync happened");
}

#[test]
fn petrel_master_petrel_middle_redis_sub() {
    let top = petrel_node();
    let middle = petrel_node();
    let sibling = petrel_node();
    workload(&top, 2, 1000, 41);
    replicaof(&middle, &top);
    replicaof(&sibling, &top);
    link_up(&middle);
    link_up(&sibling);
    let Some(sub) = RefRedis::start_with(Opts::new(&[
        ("enable-debug-command", "yes"),
        ("repl-diskless-load", "disabled"),
    ])) else {
        return;
    };
    replicaof(&sub, &middle);
    link_up(&sub);
    workload(&top, 3, 1500, 42);
    assert_all_in_sync(&top, &[&middle, &sibling, &sub], "after the workload");
    assert!(
        sub.log()
            .contains("MASTER <-> REPLICA sync: Finished with success"),
        "{}",
        sub.log()
    );
    sub_replica_continues(&middle, &sub, "killed sub link");
    assert!(
        sub.wait_log(
            "MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization",
            PATIENCE
        ),
        "{}",
        sub.log()
    );
    workload(&top, 2, 500, 43);
    assert_all_in_sync(&top, &[&middle, &sibling, &sub], "after the partial resync");

    // The middle node's master changes: the sibling is promoted and the
    // middle node follows it; the new ID reaches the sub-replica, which
    // continues by partial resync.
    let mut s = sibling.raw();
    assert_eq!(s.cmd(&["REPLICAOF", "NO", "ONE"]), Value::simple("OK"));
    let (full, partial) = sync_counts(&middle);
    replicaof(&middle, &sibling);
    link_up(&middle);
    assert_eq!(sync_counts(&sibling).0, 0, "the middle node synced in full");
    wait_for("the sub's partial resync after the master change", || {
        sync_counts(&middle).1 > partial
    });
    link_up(&sub);
    workload(&sibling, 2, 800, 44);
    assert_all_in_sync(&sibling, &[&middle, &sub], "after the master change");
    assert_eq!(sync_counts(&middle).0, full, "a full sync happened");

    // The middle node is promoted.
    let (full, partial) = sync_counts(&middle);
    assert_eq!(
        middle.raw().cmd(&["REPLICAOF", "NO", "ONE"]),
        Value::simple("OK")
    );
    assert_eq!(role_of(&middle), "master");
    wait_for("the sub's partial resync with the promoted node", || {
        sync_counts(&middle).1 > partial
    });
    link_up(&sub);
    workload(&middle, 2, 500, 45);
    assert_all_in_sync(&middle, &[&sub], "after the promotion");
    assert_eq!(sync_counts(&middle).0, full, "a full sync happened");
}

/// A replica whose link with its master is down refuses SYNC as Redis.
#[test]
fn replica_without_its_master_refuses_sync() {
    let node = petrel_node();
    let port = free_port().to_string();
    assert_eq!(
        node.raw().cmd(&["REPLICAOF", "127.0.0.1", &port]),
        Value::simple("OK")
    );
    let mut c = node.raw();
    assert_eq!(
        c.cmd(&["PSYNC", "?", "-1"]),
        err("NOMASTERLINK Can't SYNC while not connected with my master")
    );
    assert_eq!(
        c.cmd(&["SYNC"]),
        err("NOMASTERLINK Can't SYNC while not connected with my master")
    );
}

/// Issue 21 point 1's chain: redis-server -> petrel -> redis-server, with
/// disk and with diskless full syncs on both links, after the random
/// workload (every type, TTLs, MULTI/EXEC, scripts, blocking pops, several
/// databases, FLUSHALL): data, digests and offsets equal on all three, and
/// WAIT on the top counts the petrel replica.
#[test]
fn redis_petrel_redis_chain_disk_and_diskless() {
    for diskless in ["yes", "no"] {
        let args = [
            ("enable-debug-command", "yes"),
            ("repl-diskless-sync", diskless),
            ("repl-diskless-sync-delay", "0"),
            ("repl-ping-replica-period", "1"),
        ];
        let Some(top) = RefRedis::start_with(Opts::new(&args)) else {
            return;
        };
        workload(&top, 2, 1000, 41);
        let middle = Server::start(&args);
        replicaof(&middle, &top);
        link_up(&middle);
        let sub = RefRedis::start_with(Opts::new(&args)).expect("redis-server");
        replicaof(&sub, &middle);
        link_up(&sub);
        assert_all_in_sync(&top, &[&middle, &sub], "after the full syncs");
        workload(&top, 3, 1500, 42);
        assert_all_in_sync(&top, &[&middle, &sub], "after the workload");
        assert_eq!(
            top.raw().cmd(&["WAIT", "1", "5000"]),
            Value::Int(1),
            "diskless {diskless}"
        );
    }
}
