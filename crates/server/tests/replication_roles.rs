//! Replication roles (issue 21): what a replica refuses and how a master
//! hands its role over. WAIT on a replica, `replica-serve-stale-data no`
//! (`-MASTERDOWN`), scripts writing on a read-only replica, expired keys
//! on a replica, and FAILOVER between petrel and redis-server 7.0 nodes.
//! Replies are compared with redis-server in the same situation when it
//! is installed (skipped otherwise unless `PETREL_REQUIRE_REDIS=1`); the
//! petrel-only assertions always run.
//!
//! No timing assertions: everything waits by polling with generous limits.

#[path = "common/aof_workload.rs"]
mod aof_workload;
mod common;
#[path = "common/repl_links.rs"]
mod repl_links;

use common::*;
use repl_links::*;

fn is_err(v: &Value) -> bool {
    matches!(v, Value::Error(_))
}

fn err_text(v: &Value) -> String {
    match v {
        Value::Error(e) => String::from_utf8_lossy(e).into_owned(),
        other => panic!("expected an error, got {other:?}"),
    }
}

/// A port nothing listens on (a master that is down): port 1, since an
/// ephemeral port picked as free may be taken by a parallel test's server.
fn dead_port() -> String {
    "1".to_string()
}

/// Petrel, and redis-server when installed, each started with `args`.
fn both(args: &[(&str, &str)]) -> Vec<Server> {
    let mut v = vec![Server::start(args)];
    if let Some(r) = RefRedis::start_with(Opts::new(args)) {
        v.push(r);
    }
    v
}

fn caught_up(master: &Server, replica: &Server) {
    let mut m = master.raw();
    let mut r = replica.raw();
    wait_for("the replica to catch up", || {
        info_num(&mut m, "replication", "master_repl_offset")
            == info_num(&mut r, "replication", "slave_repl_offset")
    });
}

const WAIT_ON_REPLICA: &str = "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.";

#[test]
fn wait_on_a_replica_is_refused_before_its_arguments_are_read() {
    for s in both(&[]) {
        let mut c = s.raw();
        // A master reads the arguments.
        assert_eq!(c.cmd(&["WAIT", "x", "0"]), err(WAIT_NOT_INT));
        assert_eq!(
            c.cmd(&["REPLICAOF", "127.0.0.1", &dead_port()]),
            Value::simple("OK")
        );
        for args in [["WAIT", "1", "0"], ["WAIT", "x", "y"], ["WAIT", "0", "-1"]] {
            assert_eq!(c.cmd(&args), err(WAIT_ON_REPLICA), "{args:?}");
        }
    }
}

const WAIT_NOT_INT: &str = "ERR value is not an integer or out of range";

const MASTERDOWN: &str =
    "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.";

/// Commands tried on a stale replica; replies with a varying value (ids,
/// times) are compared by kind only (error text or not an error).
const STALE_PROBES: &[&[&str]] = &[
    &["GET", "k"],
    &["SET", "k", "1"],
    &["PING"],
    &["ECHO", "a"],
    &["INFO", "server"],
    &["DBSIZE"],
    &["CONFIG", "GET", "port"],
    &["CLIENT", "ID"],
    &["SELECT", "1"],
    &["SELECT", "0"],
    &["COMMAND", "COUNT"],
    &["EVAL", "return 1", "0"],
    &["EVAL", "return redis.call('get','k')", "0"],
    &["FCALL", "r", "1", "k"],
    &["FCALL_RO", "r", "1", "k"],
    &["ROLE"],
    &["WAIT", "0", "0"],
    &["TIME"],
    &["MEMORY", "USAGE", "k"],
    &["PUBLISH", "a", "b"],
    &["TYPE", "k"],
    &["KEYS", "*"],
    &["SCAN", "0"],
    &["FAILOVER"],
    &["LASTSAVE"],
    &["SLOWLOG", "LEN"],
    &["ACL", "WHOAMI"],
    &["SCRIPT", "EXISTS", "a"],
    &["FUNCTION", "LIST"],
    &["OBJECT", "FREQ", "k"],
    &["EXISTS", "k"],
    &["TTL", "k"],
    &["HELLO", "2"],
    &[
        "EVAL",
        "#!lua flags=allow-stale,no-writes\nreturn redis.call('get','k')",
        "0",
    ],
    &[
        "EVAL",
        "#!lua flags=allow-stale,no-writes\nreturn redis.call('echo','k')",
        "0",
    ],
    &["EVAL", "#!lua flags=no-writes\nreturn 1", "0"],
];

const LIB: &str = "#!lua name=lib\n\
redis.register_function('w', function(k,a) return redis.call('set',k[1],'x') end)\n\
redis.register_function{function_name='r', callback=function(k,a) return redis.call('get',k[1]) end, flags={'no-writes'}}\n\
redis.register_function{function_name='r2', callback=function(k,a) return redis.call('set',k[1], 1) end, flags={'no-writes'}}";

fn stale_replies(s: &Server) -> Vec<Value> {
    let mut c = s.raw();
    c.cmd(&["SET", "k", "v"]);
    assert_eq!(
        c.cmd(&["FUNCTION", "LOAD", LIB]),
        Value::Bulk(b"lib".to_vec())
    );
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "replica-serve-stale-data", "no"]),
        Value::simple("OK")
    );
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "slave-serve-stale-data"]),
        Value::Array(vec![
            Value::Bulk(b"slave-serve-stale-data".to_vec()),
            Value::Bulk(b"no".to_vec())
        ])
    );
    assert_eq!(
        c.cmd(&["REPLICAOF", "127.0.0.1", &dead_port()]),
        Value::simple("OK")
    );
    let mut out: Vec<Value> = STALE_PROBES.iter().map(|a| c.cmd(a)).collect();
    // A transaction: queuing a stale-refused command aborts it.
    out.push(c.cmd(&["MULTI"]));
    out.push(c.cmd(&["GET", "k"]));
    out.push(c.cmd(&["EXEC"]));
    // Serving stale data again.
    out.push(c.cmd(&["CONFIG", "SET", "replica-serve-stale-data", "yes"]));
    out.push(c.cmd(&["GET", "k"]));
    out
}

#[test]
fn a_stale_replica_answers_only_stale_commands() {
    let servers = both(&[]);
    let petrel = stale_replies(&servers[0]);
    let at = |cmd: &[&str]| STALE_PROBES.iter().position(|p| *p == cmd).unwrap();
    assert_eq!(petrel[at(&["GET", "k"])], err(MASTERDOWN));
    assert_eq!(petrel[at(&["DBSIZE"])], err(MASTERDOWN));
    assert_eq!(
        petrel[at(&["SET", "k", "1"])],
        err("READONLY You can't write against a read only replica.")
    );
    assert!(!is_err(&petrel[at(&["INFO", "server"])]));
    assert!(!is_err(&petrel[at(&["ROLE"])]));
    assert_eq!(
        petrel[STALE_PROBES.len() + 2],
        err("EXECABORT Transaction discarded because of previous errors.")
    );
    assert_eq!(*petrel.last().unwrap(), Value::Bulk(b"v".to_vec()));
    if let Some(redis) = servers.get(1) {
        let redis = stale_replies(redis);
        for (i, (p, r)) in petrel.iter().zip(&redis).enumerate() {
            let what = STALE_PROBES
                .get(i)
                .map_or(format!("step {i}"), |a| format!("{a:?}"));
            if is_err(p) || is_err(r) {
                assert_eq!(p, r, "{what}");
            }
        }
    }
}

#[test]
fn a_stale_replica_serves_again_once_its_link_is_up() {
    let master = Server::start(&[("repl-diskless-sync-delay", "0")]);
    let replica = Server::start(&[("replica-serve-stale-data", "no")]);
    let mut m = master.raw();
    m.cmd(&["SET", "k", "v"]);
    let mut r = replica.raw();
    r.cmd(&["REPLICAOF", "127.0.0.1", &master.port().to_string()]);
    link_up(&replica);
    assert_eq!(r.cmd(&["GET", "k"]), Value::Bulk(b"v".to_vec()));
    // The master goes away: stale again.
    drop(m);
    drop(master);
    wait_for("the link to go down", || {
        info_field(&mut r, "replication", "master_link_status").as_deref() == Some("down")
    });
    assert_eq!(r.cmd(&["GET", "k"]), err(MASTERDOWN));
    assert_eq!(r.cmd(&["REPLICAOF", "NO", "ONE"]), Value::simple("OK"));
    assert_eq!(r.cmd(&["GET", "k"]), Value::Bulk(b"v".to_vec()));
}

/// Script runs that write, on a read-only replica (its master is down and
/// stale data is served: only `-READONLY` is in play).
const SCRIPT_PROBES: &[&[&str]] = &[
    &["EVAL", "return redis.call('set','a','b')", "0"],
    &["EVAL", "return redis.call('get','k')", "0"],
    &["EVAL", "#!lua\nreturn redis.call('get','k')", "0"],
    &[
        "EVAL",
        "#!lua flags=no-writes\nreturn redis.call('get','k')",
        "0",
    ],
    &[
        "EVAL",
        "#!lua flags=no-writes\nreturn redis.call('set','k', 1)",
        "0",
    ],
    &["EVAL", "return redis.pcall('set','a','b')", "0"],
    &[
        "EVAL",
        "local r = redis.pcall('set','a','b') return r['err']",
        "0",
    ],
    &["EVAL_RO", "return redis.call('set','a','b')", "0"],
    &["EVAL", "return redis.call('incr','counter')", "0"],
    &["FCALL", "w", "1", "k"],
    &["FCALL", "r", "1", "k"],
    &["FCALL_RO", "w", "1", "k"],
    &["FCALL", "r2", "1", "k"],
    &["GET", "a"],
    &["GET", "k"],
];

fn script_replies(s: &Server) -> Vec<Value> {
    let mut c = s.raw();
    c.cmd(&["SET", "k", "v"]);
    assert_eq!(
        c.cmd(&["FUNCTION", "LOAD", LIB]),
        Value::Bulk(b"lib".to_vec())
    );
    assert_eq!(
        c.cmd(&["REPLICAOF", "127.0.0.1", &dead_port()]),
        Value::simple("OK")
    );
    SCRIPT_PROBES.iter().map(|a| c.cmd(a)).collect()
}

#[test]
fn scripts_cannot_write_on_a_read_only_replica() {
    let servers = both(&[]);
    let petrel = script_replies(&servers[0]);
    let readonly = "READONLY You can't write against a read only replica.";
    assert!(err_text(&petrel[0]).starts_with(&format!("{readonly} script: ")));
    assert_eq!(petrel[1], Value::Bulk(b"v".to_vec()));
    assert_eq!(petrel[2], err(readonly));
    assert_eq!(petrel[6], Value::Bulk(readonly.as_bytes().to_vec()));
    assert_eq!(petrel[9], err(readonly));
    assert_eq!(petrel[10], Value::Bulk(b"v".to_vec()));
    assert_eq!(petrel[11], err(readonly));
    assert_eq!(petrel[13], Value::NullBulk, "nothing was written");
    assert_eq!(petrel[14], Value::Bulk(b"v".to_vec()));
    if let Some(redis) = servers.get(1) {
        let redis = script_replies(redis);
        for (i, (p, r)) in petrel.iter().zip(&redis).enumerate() {
            assert_eq!(p, r, "{:?}", SCRIPT_PROBES[i]);
        }
    }
}

// ---------------------------------------------------------------- FAILOVER

/// FAILOVER's argument errors, on a master without replicas.
const FAILOVER_ARG_PROBES: &[&[&str]] = &[
    &["FAILOVER"],
    &["FAILOVER", "TO"],
    &["FAILOVER", "ABORT"],
    &["FAILOVER", "TO", "127.0.0.1", "1"],
    &["FAILOVER", "FORCE"],
    &["FAILOVER", "TO", "127.0.0.1", "1", "FORCE"],
    &["FAILOVER", "TO", "127.0.0.1", "1", "FORCE", "TIMEOUT", "10"],
    &["FAILOVER", "TIMEOUT", "-1"],
    &["FAILOVER", "TIMEOUT", "x"],
    &["FAILOVER", "TIMEOUT", "0"],
    &["FAILOVER", "TIMEOUT"],
    &["FAILOVER", "foo"],
    &["FAILOVER", "TO", "127.0.0.1", "x"],
    &["FAILOVER", "TO", "127.0.0.1", "1", "TIMEOUT", "10", "ABORT"],
    &["FAILOVER", "ABORT", "ABORT"],
    &["FAILOVER", "ABORT", "FORCE"],
    &["FAILOVER", "TIMEOUT", "5", "TIMEOUT", "6"],
    &["FAILOVER", "TO", "a", "1", "TO", "a", "1"],
    &["FAILOVER", "FORCE", "FORCE"],
    &["FAILOVER", "to", "127.0.0.1", "-1"],
    &["FAILOVER", "to", "127.0.0.1", "70000"],
];

#[test]
fn failover_argument_errors_match_redis() {
    let servers = both(&[]);
    let replies: Vec<Vec<Value>> = servers
        .iter()
        .map(|s| {
            let mut c = s.raw();
            FAILOVER_ARG_PROBES.iter().map(|a| c.cmd(a)).collect()
        })
        .collect();
    let p = &replies[0];
    let no_replicas = err("ERR FAILOVER requires connected replicas.");
    assert_eq!(p[0], no_replicas);
    assert_eq!(p[1], err("ERR syntax error"));
    assert_eq!(p[2], err("ERR No failover in progress."));
    assert_eq!(p[4], no_replicas);
    assert_eq!(p[7], err("ERR FAILOVER timeout must be greater than 0"));
    assert_eq!(p[8], err(WAIT_NOT_INT));
    assert_eq!(p[13], err("ERR syntax error"));
    if let Some(r) = replies.get(1) {
        for (i, (a, b)) in p.iter().zip(r).enumerate() {
            assert_eq!(a, b, "{:?}", FAILOVER_ARG_PROBES[i]);
        }
    }
    // A replica refuses it.
    let mut c = servers[0].raw();
    c.cmd(&["REPLICAOF", "127.0.0.1", &dead_port()]);
    assert_eq!(
        c.cmd(&["FAILOVER"]),
        err("ERR FAILOVER is not valid when server is a replica.")
    );
}

fn start_node(redis: bool) -> Option<Server> {
    let args = [
        ("repl-diskless-sync-delay", "0"),
        ("repl-ping-replica-period", "1"),
        ("enable-debug-command", "yes"),
    ];
    if redis {
        RefRedis::start_with(Opts::new(&args))
    } else {
        Some(Server::start(&args))
    }
}

fn role_of(s: &Server) -> String {
    let mut c = s.raw();
    info_field(&mut c, "replication", "role").unwrap_or_default()
}

/// `master` with `replica` attached and in sync, some data written.
fn pair(master: &Server, replica: &Server) {
    let mut m = master.raw();
    for i in 0..50 {
        m.cmd(&["SET", &format!("k{i}"), &i.to_string()]);
    }
    let mut r = replica.raw();
    assert_eq!(
        r.cmd(&["REPLICAOF", "127.0.0.1", &master.port().to_string()]),
        Value::simple("OK")
    );
    link_up(replica);
    m.cmd(&["RPUSH", "list", "a", "b"]);
    caught_up(master, replica);
}

/// FAILOVER on `master` (plain or `TO` its replica): the roles swap, the
/// new master continued by partial resync, writes flow the other way.
fn failover_swaps_roles(master: &Server, replica: &Server, to: bool) {
    pair(master, replica);
    let mut m = master.raw();
    let rport = replica.port().to_string();
    let reply = if to {
        m.cmd(&["FAILOVER", "TO", "127.0.0.1", &rport])
    } else {
        m.cmd(&["FAILOVER"])
    };
    assert_eq!(reply, Value::simple("OK"));
    wait_for("the replica to become the master", || {
        role_of(replica) == "master" && role_of(master) == "slave"
    });
    link_up(master);
    assert_eq!(
        info_field(&mut m, "replication", "master_failover_state").as_deref(),
        Some("no-failover")
    );
    assert_eq!(
        info_field(&mut m, "replication", "master_port").as_deref(),
        Some(rport.as_str())
    );
    let mut r = replica.raw();
    // The new master let its former master continue: no full sync.
    assert_eq!(info_num(&mut r, "stats", "sync_full"), 0);
    assert_eq!(info_num(&mut r, "stats", "sync_partial_ok"), 1);
    // Writes now go through the new master.
    assert_eq!(
        m.cmd(&["SET", "x", "1"]),
        err("READONLY You can't write against a read only replica.")
    );
    assert_eq!(r.cmd(&["SET", "after", "yes"]), Value::simple("OK"));
    caught_up(replica, master);
    assert_eq!(m.cmd(&["GET", "after"]), Value::Bulk(b"yes".to_vec()));
    assert_eq!(m.cmd(&["GET", "k49"]), Value::Bulk(b"49".to_vec()));
    assert_eq!(m.cmd(&["DEBUG", "DIGEST"]), r.cmd(&["DEBUG", "DIGEST"]));
}

/// Issue 21 point 3 with FAILOVER: a master with two petrel replicas
/// hands its role to one (`FAILOVER TO`); the other, pointed at the new
/// master, continues by partial resync, and no write that WAIT confirmed
/// on the old master is lost.
#[test]
fn failover_then_a_sibling_continues_by_partial_resync() {
    let master = start_node(false).unwrap();
    let a = start_node(false).unwrap();
    let b = start_node(false).unwrap();
    pair(&master, &a);
    let mut rb = b.raw();
    assert_eq!(
        rb.cmd(&["REPLICAOF", "127.0.0.1", &master.port().to_string()]),
        Value::simple("OK")
    );
    link_up(&b);
    let mut m = master.raw();
    for i in 0..200 {
        m.cmd(&["SET", &format!("confirmed:{i}"), &i.to_string()]);
    }
    assert_eq!(m.cmd(&["WAIT", "2", "5000"]), Value::Int(2));
    let aport = a.port().to_string();
    assert_eq!(
        m.cmd(&["FAILOVER", "TO", "127.0.0.1", &aport]),
        Value::simple("OK")
    );
    wait_for("the target to become the master", || {
        role_of(&a) == "master" && role_of(&master) == "slave"
    });
    link_up(&master);
    // The sibling follows the new master and continues from its offset.
    let mut ra = a.raw();
    let full_before = info_num(&mut ra, "stats", "sync_full");
    assert_eq!(
        rb.cmd(&["REPLICAOF", "127.0.0.1", &aport]),
        Value::simple("OK")
    );
    link_up(&b);
    assert_eq!(info_num(&mut ra, "stats", "sync_full"), full_before);
    assert_eq!(info_num(&mut ra, "stats", "sync_partial_ok"), 2);
    assert_eq!(ra.cmd(&["SET", "after", "failover"]), Value::simple("OK"));
    assert_eq!(ra.cmd(&["WAIT", "2", "5000"]), Value::Int(2));
    for s in [&master, &b] {
        let mut c = s.raw();
        assert_eq!(
            c.cmd(&["GET", "confirmed:199"]),
            Value::Bulk(b"199".to_vec())
        );
        assert_eq!(c.cmd(&["GET", "after"]), Value::Bulk(b"failover".to_vec()));
        assert_eq!(c.cmd(&["DEBUG", "DIGEST"]), ra.cmd(&["DEBUG", "DIGEST"]));
    }
}

#[test]
fn failover_petrel_master_to_petrel_replica() {
    let master = start_node(false).unwrap();
    let replica = start_node(false).unwrap();
    failover_swaps_roles(&master, &replica, false);
    assert!(master.wait_log("FAILOVER requested to any replica.", PATIENCE));
    assert!(replica.wait_log("MASTER MODE enabled (failover request from", PATIENCE));
}

#[test]
fn failover_petrel_master_to_redis_replica() {
    let Some(replica) = start_node(true) else {
        return;
    };
    let master = start_node(false).unwrap();
    failover_swaps_roles(&master, &replica, true);
}

#[test]
fn failover_redis_master_to_petrel_replica() {
    let Some(master) = start_node(true) else {
        return;
    };
    let replica = start_node(false).unwrap();
    failover_swaps_roles(&master, &replica, true);
}

/// A hand-written replica that syncs and then never acknowledges: a
/// FAILOVER to it waits for ever (or its TIMEOUT).
fn silent_replica(master: &Server) -> (RawConn, u16) {
    let port = free_port();
    let mut c = master.raw();
    assert_eq!(c.cmd(&["PING"]), Value::simple("PONG"));
    assert_eq!(
        c.cmd(&["REPLCONF", "listening-port", &port.to_string()]),
        Value::simple("OK")
    );
    c.send_cmd(&["PSYNC", "?", "-1"]);
    let line = c.read_line().unwrap();
    assert!(line.starts_with("+FULLRESYNC"), "{line}");
    let mut m = master.raw();
    wait_for("the silent replica to be online", || {
        info_field(&mut m, "replication", "slave0").is_some_and(|v| v.contains("state=online"))
    });
    (c, port)
}

#[test]
fn failover_waits_pauses_writes_and_can_be_aborted() {
    let master = start_node(false).unwrap();
    let (_replica, port) = silent_replica(&master);
    let mut m = master.raw();
    m.cmd(&["SET", "k", "v"]);
    let port = port.to_string();
    assert_eq!(
        m.cmd(&["FAILOVER", "TO", "127.0.0.1", "1"]),
        err("ERR FAILOVER target HOST and PORT is not a replica.")
    );
    assert_eq!(
        m.cmd(&["FAILOVER", "TO", "localhost", &port]),
        err("ERR FAILOVER target HOST and PORT is not a replica.")
    );
    assert_eq!(
        m.cmd(&["FAILOVER", "TO", "127.0.0.1", &port]),
        Value::simple("OK")
    );
    assert_eq!(
        info_field(&mut m, "replication", "master_failover_state").as_deref(),
        Some("waiting-for-sync")
    );
    assert_eq!(
        m.cmd(&["FAILOVER"]),
        err("ERR FAILOVER already in progress.")
    );
    assert_eq!(
        m.cmd(&["FAILOVER", "FORCE"]),
        err("ERR FAILOVER already in progress.")
    );
    assert_eq!(
        m.cmd(&["REPLICAOF", "NO", "ONE"]),
        err("ERR REPLICAOF not allowed while failing over.")
    );
    // Reads are served, writes wait (CLIENT UNPAUSE does not end it).
    assert_eq!(m.cmd(&["GET", "k"]), Value::Bulk(b"v".to_vec()));
    assert_eq!(m.cmd(&["CLIENT", "UNPAUSE"]), Value::simple("OK"));
    let mut w = master.raw();
    w.send_cmd(&["SET", "k", "w"]);
    assert_eq!(m.cmd(&["GET", "k"]), Value::Bulk(b"v".to_vec()));
    assert_eq!(m.cmd(&["FAILOVER", "ABORT"]), Value::simple("OK"));
    assert_eq!(w.read_reply(), Value::simple("OK"));
    assert_eq!(
        info_field(&mut m, "replication", "master_failover_state").as_deref(),
        Some("no-failover")
    );
    assert_eq!(
        info_field(&mut m, "replication", "role").as_deref(),
        Some("master")
    );
    assert_eq!(
        m.cmd(&["FAILOVER", "ABORT"]),
        err("ERR No failover in progress.")
    );
    // The log is read from the server's output by another thread.
    assert!(master.wait_log(
        &format!("FAILOVER to 127.0.0.1:{port} aborted: Failover manually aborted"),
        PATIENCE
    ));

    // A TIMEOUT without FORCE goes back to normal.
    assert_eq!(m.cmd(&["FAILOVER", "TIMEOUT", "300"]), Value::simple("OK"));
    wait_for("the failover to time out", || {
        info_field(&mut m, "replication", "master_failover_state").as_deref() == Some("no-failover")
    });
    // Read by another thread too: the state may change before the line
    // is read (a CI run saw the line missing right after).
    assert!(master.wait_log("Replica never caught up before timeout", PATIENCE));
    assert_eq!(m.cmd(&["SET", "k", "x"]), Value::simple("OK"));
    assert_eq!(
        info_field(&mut m, "replication", "role").as_deref(),
        Some("master")
    );
}

#[test]
fn failover_force_to_an_unreachable_target_rolls_back() {
    let master = start_node(false).unwrap();
    let (_replica, port) = silent_replica(&master);
    let mut m = master.raw();
    m.cmd(&["SET", "k", "v"]);
    let port = port.to_string();
    assert_eq!(
        m.cmd(&["FAILOVER", "FORCE"]),
        err("ERR FAILOVER with force option requires both a timeout and target HOST and IP.")
    );
    assert_eq!(
        m.cmd(&[
            "FAILOVER",
            "TO",
            "127.0.0.1",
            &port,
            "FORCE",
            "TIMEOUT",
            "200"
        ]),
        Value::simple("OK")
    );
    // At the timeout it fails over anyway; the target is no server, so
    // the PSYNC never happens and the master takes its role back.
    wait_for("the forced failover to end", || {
        master.log().contains("time out exceeded, failing over.")
            && info_field(&mut m, "replication", "master_failover_state").as_deref()
                == Some("no-failover")
    });
    assert_eq!(
        info_field(&mut m, "replication", "role").as_deref(),
        Some("master")
    );
    assert_eq!(m.cmd(&["SET", "k", "x"]), Value::simple("OK"));
}

// ------------------------------------------------- expired keys on a replica

/// On a replica of `master` (active expiry off there, so only a lookup on
/// the master deletes): what the replica answers about keys whose TTL
/// passed, before and after the master's DEL.
fn expired_key_replies(master: &Server, replica: &Server) -> Vec<Value> {
    let mut m = master.raw();
    assert_eq!(
        m.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]),
        Value::simple("OK")
    );
    let mut r = replica.raw();
    assert_eq!(
        r.cmd(&["REPLICAOF", "127.0.0.1", &master.port().to_string()]),
        Value::simple("OK")
    );
    link_up(replica);
    m.cmd(&["SET", "a", "1", "PX", "150"]);
    m.cmd(&["SET", "b", "2"]);
    m.cmd(&["SET", "c", "3", "PX", "150"]);
    m.cmd(&["HSET", "h", "f", "v"]);
    m.cmd(&["PEXPIRE", "h", "150"]);
    caught_up(master, replica);
    std::thread::sleep(Duration::from_millis(400));
    let mut out = vec![
        r.cmd(&["GET", "a"]),
        r.cmd(&["EXISTS", "a", "b", "c", "h"]),
        r.cmd(&["TTL", "a"]),
        r.cmd(&["TYPE", "c"]),
        r.cmd(&["HGET", "h", "f"]),
        r.cmd(&["DBSIZE"]),
        r.cmd(&["KEYS", "*"]),
        r.cmd(&["SCAN", "0", "COUNT", "100"]),
    ];
    // Lookups on the replica deleted nothing, nor does time.
    std::thread::sleep(Duration::from_millis(300));
    out.push(r.cmd(&["DBSIZE"]));
    // The master's lookup deletes `a` and sends its DEL.
    assert_eq!(m.cmd(&["GET", "a"]), Value::NullBulk);
    caught_up(master, replica);
    out.push(r.cmd(&["DBSIZE"]));
    out.push(r.cmd(&["KEYS", "*"]));
    out
}

fn sorted_keys(v: &Value) -> Vec<Vec<u8>> {
    let Value::Array(items) = v else {
        panic!("not an array: {v:?}");
    };
    let mut keys: Vec<Vec<u8>> = items
        .iter()
        .map(|i| i.as_bytes().unwrap().to_vec())
        .collect();
    keys.sort();
    keys
}

#[test]
fn expired_keys_on_a_replica_go_only_by_the_masters_del() {
    let master = start_node(false).unwrap();
    let replica = start_node(false).unwrap();
    let p = expired_key_replies(&master, &replica);
    assert_eq!(p[0], Value::NullBulk);
    assert_eq!(p[1], Value::Int(1));
    assert_eq!(p[2], Value::Int(-2));
    assert_eq!(p[3], Value::simple("none"));
    assert_eq!(p[4], Value::NullBulk);
    assert_eq!(p[5], Value::Int(4), "DBSIZE counts keys not deleted yet");
    assert_eq!(sorted_keys(&p[6]), vec![b"b".to_vec()]);
    assert_eq!(p[8], Value::Int(4), "the replica deleted nothing itself");
    assert_eq!(p[9], Value::Int(3), "the master's DEL deleted one");
    assert_eq!(sorted_keys(&p[10]), vec![b"b".to_vec()]);
    let Some(rm) = start_node(true) else {
        return;
    };
    let rr = start_node(true).unwrap();
    let r = expired_key_replies(&rm, &rr);
    for (i, (a, b)) in p.iter().zip(&r).enumerate() {
        match i {
            6 | 10 => assert_eq!(sorted_keys(a), sorted_keys(b), "step {i}"),
            7 => {
                let (Value::Array(a), Value::Array(b)) = (a, b) else {
                    panic!("SCAN replies {a:?} {b:?}");
                };
                assert_eq!(sorted_keys(&a[1]), sorted_keys(&b[1]), "SCAN");
            }
            _ => assert_eq!(a, b, "step {i}"),
        }
    }
}

/// A chain master -> replica -> sub-replica (all petrel, or all
/// redis-server), the replica made writable; what each node answers.
fn writable_replica_replies(redis: bool) -> Option<Vec<Value>> {
    let master = start_node(redis)?;
    let replica = start_node(redis)?;
    let sub = start_node(redis)?;
    let (mut m, mut r, mut s) = (master.raw(), replica.raw(), sub.raw());
    m.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]);
    r.cmd(&["REPLICAOF", "127.0.0.1", &master.port().to_string()]);
    link_up(&replica);
    s.cmd(&["REPLICAOF", "127.0.0.1", &replica.port().to_string()]);
    link_up(&sub);
    let mut out = vec![
        r.cmd(&["SET", "local", "1"]),
        r.cmd(&["CONFIG", "SET", "replica-read-only", "no"]),
        r.cmd(&["CONFIG", "GET", "slave-read-only"]),
        r.cmd(&["SET", "local", "1"]),
        r.cmd(&["SET", "short", "v", "PX", "100"]),
        r.cmd(&["SET", "long", "v", "EX", "1000"]),
        r.cmd(&[
            "EVAL",
            "redis.call('set', KEYS[1], '1') return redis.call('pexpire', KEYS[1], 100)",
            "1",
            "bylua",
        ]),
        r.cmd(&["MOVE", "long", "3"]),
    ];
    m.cmd(&["SET", "fromm", "1"]);
    m.cmd(&["SET", "mshort", "v", "PX", "100"]);
    caught_up(&master, &replica);
    caught_up(&replica, &sub);
    // The replica's own writes stay on the replica.
    out.push(s.cmd(&["EXISTS", "local", "short", "long", "bylua"]));
    out.push(s.cmd(&["MGET", "fromm", "mshort"]));
    out.push(r.cmd(&["MGET", "local", "fromm"]));
    out.push(r.cmd(&["DBSIZE"]));
    // The keys its clients gave a TTL go by the replica's own expiry;
    // the master's (its active expiry off) wait for the master's DEL.
    wait_for("the replica to expire its own keys", || {
        r.cmd(&["DBSIZE"]) == Value::Int(3)
    });
    out.push(r.cmd(&["EXISTS", "mshort", "short", "bylua"]));
    out.push(r.cmd(&["SELECT", "3"]));
    out.push(r.cmd(&["DBSIZE"]));
    out.push(r.cmd(&["SELECT", "0"]));
    out.push(s.cmd(&["DBSIZE"]));
    out.push(Value::Int(info_num(&mut r, "stats", "expired_keys")));
    out.push(r.cmd(&["CONFIG", "SET", "replica-read-only", "yes"]));
    out.push(r.cmd(&["SET", "local", "2"]));
    out.push(r.cmd(&[
        "EVAL",
        "return redis.call('set', KEYS[1], '2')",
        "1",
        "local",
    ]));
    out.push(r.cmd(&["GET", "local"]));
    Some(out)
}

/// `replica-read-only no`: a replica takes its clients' writes (plain
/// and from scripts), keeps them out of the stream it proxies to its own
/// replicas, and deletes the keys they gave a TTL once it passes, while
/// the master's keys still wait for the master's DEL. The same replies
/// as a redis-server chain.
#[test]
fn a_writable_replica_keeps_its_writes_local() {
    let readonly = "READONLY You can't write against a read only replica.";
    let p = writable_replica_replies(false).unwrap();
    assert_eq!(p[0], err(readonly));
    assert_eq!(p[1], Value::simple("OK"));
    assert_eq!(p[3], Value::simple("OK"));
    assert_eq!(p[6], Value::Int(1));
    assert_eq!(p[7], Value::Int(1), "MOVE");
    assert_eq!(p[8], Value::Int(0), "the sub-replica has none of them");
    assert_eq!(p[11], Value::Int(5), "local short bylua fromm mshort");
    assert_eq!(p[12], Value::Int(0), "expired keys read as missing");
    assert_eq!(p[14], Value::Int(1), "long, moved to db 3");
    assert_eq!(p[16], Value::Int(2), "fromm mshort");
    assert_eq!(p[17], Value::Int(2), "short and bylua");
    assert_eq!(p[19], err(readonly));
    assert_eq!(p[21], Value::Bulk(b"1".to_vec()));
    if let Some(r) = writable_replica_replies(true) {
        for (i, (a, b)) in p.iter().zip(&r).enumerate() {
            assert_eq!(a, b, "step {i}");
        }
    }
}

/// Two replicas holding 1,000 keys of their own sync with a master, one
/// with `replica-lazy-flush yes`: what INFO says of the flushed data.
fn lazy_flush_replies(redis: bool) -> Option<Vec<Value>> {
    let master = start_node(redis)?;
    let mut out = Vec::new();
    for lazy in ["yes", "no"] {
        let replica = start_node(redis)?;
        let mut r = replica.raw();
        r.cmd(&["DEBUG", "POPULATE", "1000"]);
        out.push(r.cmd(&["CONFIG", "SET", "replica-lazy-flush", lazy]));
        out.push(r.cmd(&["CONFIG", "GET", "slave-lazy-flush"]));
        r.cmd(&["REPLICAOF", "127.0.0.1", &master.port().to_string()]);
        link_up(&replica);
        if lazy == "yes" {
            wait_for("the old dataset to be freed in the background", || {
                info_num(&mut r, "memory", "lazyfree_pending_objects") == 0
                    && info_num(&mut r, "memory", "lazyfreed_objects") > 0
            });
        }
        out.push(Value::Int(info_num(&mut r, "memory", "lazyfreed_objects")));
        out.push(r.cmd(&["DBSIZE"]));
    }
    Some(out)
}

/// `replica-lazy-flush yes`: a full sync frees the replica's old data on
/// the lazy-free thread (INFO counts its keys as lazily freed, as
/// redis-server does); with `no` it is freed in place.
#[test]
fn replica_lazy_flush_frees_the_old_dataset_in_the_background() {
    let p = lazy_flush_replies(false).unwrap();
    assert_eq!(p[2], Value::Int(1000));
    assert_eq!(p[3], Value::Int(0));
    assert_eq!(p[6], Value::Int(0));
    if let Some(r) = lazy_flush_replies(true) {
        assert_eq!(p, r);
    }
}

/// Does a replica (petrel or redis-server, disk-based load) keep the RDB
/// of its full sync as its dump.rdb, for each (rdb-del-sync-files, save)?
fn sync_file_kept(master: &Server, redis: bool) -> Option<Vec<bool>> {
    let mut kept = Vec::new();
    for (del, save) in [("no", ""), ("yes", ""), ("yes", "3600 1")] {
        let args = [
            ("repl-diskless-load", "disabled"),
            ("rdb-del-sync-files", del),
            ("save", save),
        ];
        let replica = if redis {
            RefRedis::start_with(Opts::new(&args))?
        } else {
            Server::start(&args)
        };
        let mut r = replica.raw();
        assert_eq!(
            r.cmd(&["CONFIG", "GET", "rdb-del-sync-files"]),
            Value::Array(vec![
                Value::Bulk(b"rdb-del-sync-files".to_vec()),
                Value::Bulk(del.as_bytes().to_vec())
            ])
        );
        r.cmd(&["REPLICAOF", "127.0.0.1", &master.port().to_string()]);
        link_up(&replica);
        assert_eq!(r.cmd(&["GET", "k"]), Value::Bulk(b"v".to_vec()));
        let dump = replica.dir().join("dump.rdb");
        // Redis unlinks in the background: give it a moment.
        if del == "yes" && save.is_empty() {
            wait_for("the sync file to go", || !dump.exists());
        }
        kept.push(dump.exists());
    }
    Some(kept)
}

/// A replica keeps the RDB its disk-based full sync received as its
/// dump.rdb (a restart loads it), except with `rdb-del-sync-files yes`
/// and no persistence, as redis-server does.
#[test]
fn a_replica_keeps_its_sync_file_unless_rdb_del_sync_files() {
    let master = Server::start(&[("repl-diskless-sync-delay", "0")]);
    master.raw().cmd(&["SET", "k", "v"]);
    let p = sync_file_kept(&master, false).unwrap();
    assert_eq!(p, vec![true, false, true]);
    if let Some(r) = sync_file_kept(&master, true) {
        assert_eq!(p, r);
    }
}

/// A replica (petrel or redis-server) of a petrel master, its
/// `maxmemory` 1 MB under what it uses: (its keys, the master's keys,
/// evicted_keys) with `replica-ignore-maxmemory` yes, then no.
fn replica_eviction(redis: bool) -> Option<Vec<(i64, i64, i64)>> {
    let master = start_node(false)?;
    let replica = start_node(redis)?;
    let (mut m, mut r) = (master.raw(), replica.raw());
    r.cmd(&["REPLICAOF", "127.0.0.1", &master.port().to_string()]);
    link_up(&replica);
    let value = "v".repeat(1000);
    for i in 0..3000 {
        m.cmd(&["SET", &format!("key:{i}"), &value]);
    }
    caught_up(&master, &replica);
    let used = info_num(&mut r, "memory", "used_memory");
    let limit = (used - 1_000_000).to_string();
    r.cmd(&["CONFIG", "SET", "maxmemory-policy", "allkeys-random"]);
    assert_eq!(
        r.cmd(&["CONFIG", "SET", "maxmemory", &limit]),
        Value::simple("OK")
    );
    let state = |m: &mut RawConn, r: &mut RawConn| {
        let keys = |c: &mut RawConn| match c.cmd(&["DBSIZE"]) {
            Value::Int(n) => n,
            v => panic!("DBSIZE: {v:?}"),
        };
        (keys(r), keys(m), info_num(r, "stats", "evicted_keys"))
    };
    m.cmd(&["SET", "one-more", "1"]);
    caught_up(&master, &replica);
    let mut out = vec![state(&mut m, &mut r)];
    assert_eq!(
        r.cmd(&["CONFIG", "SET", "replica-ignore-maxmemory", "no"]),
        Value::simple("OK")
    );
    m.cmd(&["SET", "two-more", "2"]);
    caught_up(&master, &replica);
    wait_for("the replica to evict", || {
        info_num(&mut r, "memory", "used_memory") <= used - 1_000_000
    });
    out.push(state(&mut m, &mut r));
    Some(out)
}

/// `replica-ignore-maxmemory no`: a replica over its `maxmemory` evicts
/// by its own policy (it holds fewer keys than its master afterwards);
/// with the default it keeps every key of its master. As a redis-server
/// replica of the same master does.
#[test]
fn a_replica_evicts_only_without_replica_ignore_maxmemory() {
    let mut runs = vec![replica_eviction(false).unwrap()];
    runs.extend(replica_eviction(true));
    for run in runs {
        let (keys, master_keys, evicted) = run[0];
        assert_eq!((keys, master_keys, evicted), (3001, 3001, 0), "{run:?}");
        let (keys, master_keys, evicted) = run[1];
        assert_eq!(master_keys, 3002, "{run:?}");
        assert!(
            keys < 3002 && evicted > 0 && keys + evicted == 3002,
            "{run:?}"
        );
    }
}

/// A replica (petrel or redis-server) of a master (either) saves at
/// SHUTDOWN, misses two writes, and starts again from its RDB: the
/// master's (sync_full, sync_partial_ok, sync_partial_err) and what the
/// replica then holds.
fn restart_from_rdb(
    master_redis: bool,
    replica_redis: bool,
) -> Option<(i64, i64, i64, Vec<Value>)> {
    let master = start_node(master_redis)?;
    let dir = TempDir::new("replica-restart");
    let d = dir.path().display().to_string();
    let replicaof = format!("127.0.0.1 {}", master.port());
    let args = [("dir", d.as_str()), ("replicaof", replicaof.as_str())];
    let start = || {
        if replica_redis {
            RefRedis::start_with(Opts::new(&args))
        } else {
            Some(Server::start(&args))
        }
    };
    let mut m = master.raw();
    m.cmd(&["SET", "a", "1"]);
    m.cmd(&["SELECT", "3"]);
    m.cmd(&["SET", "b", "2"]);
    let mut replica = start()?;
    link_up(&replica);
    caught_up(&master, &replica);
    replica.raw().send_cmd(&["SHUTDOWN", "SAVE"]);
    assert!(replica.wait_exit(Duration::from_secs(30)).is_some());
    if !replica_redis {
        // The file is one redis-server accepts, with the stream's place.
        common::rdbdata::check_rdb(&dir.path().join("dump.rdb"));
    }
    // The stream goes on without the replica (in db 3, selected before).
    m.cmd(&["SET", "c", "3"]);
    m.cmd(&["INCR", "b"]);
    let replica = start()?;
    link_up(&replica);
    caught_up(&master, &replica);
    let mut r = replica.raw();
    let held = vec![
        r.cmd(&["GET", "a"]),
        r.cmd(&["SELECT", "3"]),
        r.cmd(&["MGET", "b", "c"]),
    ];
    let (full, partial) = sync_counts(&master);
    Some((
        full,
        partial,
        info_num(&mut m, "stats", "sync_partial_err"),
        held,
    ))
}

/// A replica restarted from the RDB it saved continues by partial
/// resync (the file records its master's ID, offset and the stream's
/// database): petrel replicas of petrel and redis-server masters, and a
/// redis-server replica of a petrel master.
#[test]
fn a_restarted_replica_continues_by_partial_resync() {
    let want = vec![
        Value::Bulk(b"1".to_vec()),
        Value::simple("OK"),
        Value::Array(vec![Value::Bulk(b"3".to_vec()), Value::Bulk(b"3".to_vec())]),
    ];
    for (master_redis, replica_redis) in [(false, false), (true, false), (false, true)] {
        let Some((full, partial, err, held)) = restart_from_rdb(master_redis, replica_redis) else {
            continue;
        };
        let case = format!("redis master {master_redis}, redis replica {replica_redis}");
        // The first start (replicaof, no RDB) asked `PSYNC ? -1`: not a
        // failed partial resync.
        assert_eq!((full, partial, err), (1, 1, 0), "{case}");
        assert_eq!(held, want, "{case}");
    }
}

/// A master (petrel or redis-server) with a replica (either) saves at
/// SHUTDOWN and starts again from its RDB on the same port: the new
/// master's (sync_full, sync_partial_ok, sync_partial_err) once the
/// replica has its next write, and what the replica then holds.
fn master_restart(master_redis: bool, replica_redis: bool) -> Option<(i64, i64, i64, Vec<Value>)> {
    let dir = TempDir::new("master-restart");
    let d = dir.path().display().to_string();
    let start = |redis: bool, args: &[(&str, &str)]| {
        if redis {
            RefRedis::start_with(Opts::new(args))
        } else {
            Some(Server::start(args))
        }
    };
    let mut master = start(master_redis, &[("dir", d.as_str())])?;
    let port = master.port().to_string();
    let replicaof = format!("127.0.0.1 {port}");
    let replica = start(replica_redis, &[("replicaof", replicaof.as_str())])?;
    link_up(&replica);
    let mut m = master.raw();
    m.cmd(&["SET", "a", "1"]);
    m.cmd(&["SELECT", "2"]);
    m.cmd(&["SET", "b", "2"]);
    caught_up(&master, &replica);
    m.send_cmd(&["SHUTDOWN", "SAVE"]);
    assert!(master.wait_exit(Duration::from_secs(30)).is_some());
    drop(master);
    let master = start(
        master_redis,
        &[("dir", d.as_str()), ("port", port.as_str())],
    )?;
    let mut m = master.raw();
    m.cmd(&["SELECT", "2"]);
    m.cmd(&["SET", "c", "3"]);
    let mut r = replica.raw();
    wait_for("the replica to have the new master's write", || {
        r.cmd(&["SELECT", "2"]);
        r.cmd(&["GET", "c"]) == Value::Bulk(b"3".to_vec())
    });
    let held = vec![
        r.cmd(&["MGET", "b", "c"]),
        r.cmd(&["SELECT", "0"]),
        r.cmd(&["GET", "a"]),
    ];
    let (full, partial) = sync_counts(&master);
    Some((
        full,
        partial,
        info_num(&mut m, "stats", "sync_partial_err"),
        held,
    ))
}

/// A master restarted from the RDB it saved keeps its replicas by
/// partial resync, as Redis 7.0 does (the file's ID stays valid as the
/// previous one up to its offset): petrel masters with petrel and
/// redis-server replicas, and a redis-server master with a petrel replica.
#[test]
fn a_restarted_master_continues_its_replicas_by_partial_resync() {
    let want = vec![
        Value::Array(vec![Value::Bulk(b"2".to_vec()), Value::Bulk(b"3".to_vec())]),
        Value::simple("OK"),
        Value::Bulk(b"1".to_vec()),
    ];
    for (master_redis, replica_redis) in [(false, false), (false, true), (true, false)] {
        let Some((full, partial, err, held)) = master_restart(master_redis, replica_redis) else {
            continue;
        };
        let case = format!("redis master {master_redis}, redis replica {replica_redis}");
        assert_eq!((full, partial, err), (0, 1, 0), "{case}");
        assert_eq!(held, want, "{case}");
    }
}

/// `replica-announce-ip` and `replica-announce-port` reach the master
/// (petrel's and redis-server's) through the handshake and show in its
/// INFO and ROLE; `replica-priority` and `replica-announced` show in the
/// replica's INFO as Redis prints them (Sentinel reads both).
#[test]
fn a_replica_announces_its_address_and_priority() {
    let mut masters = vec![Server::start(&[])];
    if let Some(r) = RefRedis::start_with(Opts::default()) {
        masters.push(r);
    }
    for master in masters {
        let replica = Server::start(&[
            ("replica-announce-ip", "10.1.2.3"),
            ("replica-announce-port", "7777"),
            ("replica-priority", "42"),
        ]);
        let mut r = replica.raw();
        assert_eq!(
            r.cmd(&["CONFIG", "SET", "replica-announced", "no"]),
            Value::simple("OK")
        );
        r.cmd(&["REPLICAOF", "127.0.0.1", &master.port().to_string()]);
        link_up(&replica);
        let mut m = master.raw();
        wait_for("the master to list the replica", || {
            info_field(&mut m, "replication", "slave0")
                .is_some_and(|s| s.starts_with("ip=10.1.2.3,port=7777,"))
        });
        let role = m.cmd(&["ROLE"]);
        let first = match &role {
            Value::Array(v) => match v.get(2) {
                Some(Value::Array(list)) => list.first().cloned(),
                _ => None,
            },
            _ => None,
        };
        match first {
            Some(Value::Array(e)) => {
                assert_eq!(e[0], Value::Bulk(b"10.1.2.3".to_vec()), "{role:?}");
                assert_eq!(e[1], Value::Bulk(b"7777".to_vec()), "{role:?}");
            }
            other => panic!("ROLE lists no replica: {other:?}"),
        }
        assert_eq!(
            info_field(&mut r, "replication", "slave_priority").as_deref(),
            Some("42")
        );
        assert_eq!(
            info_field(&mut r, "replication", "replica_announced").as_deref(),
            Some("0")
        );
        assert_eq!(
            r.cmd(&["CONFIG", "GET", "slave-announce-port"]),
            Value::Array(vec![
                Value::Bulk(b"slave-announce-port".to_vec()),
                Value::Bulk(b"7777".to_vec())
            ])
        );
    }
}

const SHUTDOWN_FAILED: &str = "ERR Errors trying to SHUTDOWN. Check logs.";

/// Waits until the client that sent SHUTDOWN is parked on `srv`.
fn shutdown_parked(srv: &Server) {
    let mut c = srv.raw();
    wait_for("SHUTDOWN to wait for the replica", || {
        match c.cmd(&["CLIENT", "LIST"]) {
            Value::Bulk(b) => String::from_utf8_lossy(&b)
                .lines()
                .any(|l| l.contains("cmd=shutdown") && l.contains("flags=b")),
            _ => false,
        }
    });
}

/// A petrel master, and a redis-server one when installed (shutdown-timeout
/// 60, no save points), each with a petrel replica that caught up.
fn masters_with_a_replica() -> Vec<(Server, Server)> {
    let args = [("shutdown-timeout", "60"), ("save", "")];
    let mut masters = vec![Server::start(&args)];
    if let Some(r) = RefRedis::start_with(Opts::new(&args)) {
        masters.push(r);
    }
    masters
        .into_iter()
        .map(|master| {
            let replica = Server::start(&[]);
            let mut r = replica.raw();
            r.cmd(&["REPLICAOF", "127.0.0.1", &master.port().to_string()]);
            link_up(&replica);
            caught_up(&master, &replica);
            (master, replica)
        })
        .collect()
}

/// SHUTDOWN on a master whose replica is behind waits for it (up to
/// shutdown-timeout) with client writes paused: SHUTDOWN ABORT ends the
/// wait (the waiting caller gets an error, writes resume), and once the
/// replica catches up the master exits with every write on the replica.
/// The same with a redis-server master.
#[test]
fn shutdown_waits_for_lagging_replicas() {
    for (mut master, replica) in masters_with_a_replica() {
        let mut r = replica.raw();
        let mut m = master.raw();
        // The replica neither reads the stream nor acknowledges.
        replica.signal(libc::SIGSTOP);
        assert_eq!(m.cmd(&["SET", "k1", "v1"]), Value::simple("OK"));
        let mut a = master.raw();
        a.send_cmd(&["SHUTDOWN"]);
        shutdown_parked(&master);
        // A write waits while the shutdown does.
        let mut w = master.raw();
        w.send_cmd(&["SET", "k2", "v2"]);
        assert_eq!(m.cmd(&["SHUTDOWN", "ABORT"]), Value::simple("OK"));
        assert_eq!(a.read_reply(), err(SHUTDOWN_FAILED));
        assert_eq!(w.read_reply(), Value::simple("OK"));
        assert_eq!(
            m.cmd(&["SHUTDOWN", "ABORT"]),
            err("ERR No shutdown in progress.")
        );
        // Again, and this time the replica comes back: the master exits
        // once it has every write.
        assert_eq!(m.cmd(&["SET", "last", "1"]), Value::simple("OK"));
        // A new connection: redis-server 7.0.15 trips an assertion
        // (networking.c, 'c->argc == 0') when the caller whose SHUTDOWN was
        // aborted sends another command.
        let mut a = master.raw();
        a.send_cmd(&["SHUTDOWN", "NOSAVE"]);
        shutdown_parked(&master);
        replica.signal(libc::SIGCONT);
        assert!(
            master.wait_exit(Duration::from_secs(30)).is_some(),
            "the master did not exit"
        );
        assert!(
            matches!(a.try_read_reply(), Reply::Closed),
            "no reply on success"
        );
        for k in ["k1", "k2", "last"] {
            assert!(
                matches!(r.cmd(&["GET", k]), Value::Bulk(_)),
                "{k} missing on the replica"
            );
        }
    }
}

/// SIGTERM waits for a lagging replica as SHUTDOWN does, then exits once
/// the replica has every write (petrel and redis-server).
#[test]
fn sigterm_waits_for_lagging_replicas() {
    for (mut master, replica) in masters_with_a_replica() {
        let mut r = replica.raw();
        let mut m = master.raw();
        replica.signal(libc::SIGSTOP);
        assert_eq!(m.cmd(&["SET", "last", "1"]), Value::simple("OK"));
        master.signal(libc::SIGTERM);
        wait_for("the master to wait for its replica", || {
            master
                .log()
                .contains("Waiting for replicas before shutting down.")
        });
        assert_eq!(m.cmd(&["PING"]), Value::simple("PONG"));
        replica.signal(libc::SIGCONT);
        assert!(
            master.wait_exit(Duration::from_secs(30)).is_some(),
            "the master did not exit"
        );
        assert_eq!(r.cmd(&["GET", "last"]), Value::Bulk(b"1".to_vec()));
    }
}
