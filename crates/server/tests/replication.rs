//! Replication with petrel as the master: redis-server 7.0 replicas (disk
//! and diskless full sync, the stream, partial resync after a killed
//! link) compared by `DEBUG DIGEST`, and a hand-written replica speaking
//! the protocol on a raw socket (exact handshake replies, WAIT with acks,
//! timeouts and a replica that goes away). Skipped without redis-server
//! unless `PETREL_REQUIRE_REDIS=1` (the raw-socket tests always run).
//!
//! No timing assertions: everything waits by polling with generous limits.

#[path = "common/aof_workload.rs"]
mod aof_workload;
mod common;
#[path = "common/repl_links.rs"]
mod repl_links;

use common::*;
use repl_links::*;

fn petrel_master(diskless: bool) -> Server {
    Server::start(&[
        ("enable-debug-command", "yes"),
        ("repl-diskless-sync", if diskless { "yes" } else { "no" }),
        ("repl-diskless-sync-delay", "0"),
        ("repl-ping-replica-period", "1"),
    ])
}

fn redis_replica_of(master: &Server) -> Option<Server> {
    let r = RefRedis::start_with(Opts::new(&[("enable-debug-command", "yes")]))?;
    let mut c = r.raw();
    let port = master.port().to_string();
    assert_eq!(
        c.cmd(&["REPLICAOF", "127.0.0.1", &port]),
        Value::simple("OK")
    );
    Some(r)
}

/// Waits until the replica processed the master's whole stream, then
/// compares the datasets.
fn assert_in_sync(master: &Server, replica: &Server, what: &str) {
    collect_expired(master);
    let mut m = master.raw();
    let mut r = replica.raw();
    wait_for(&format!("the replica to catch up ({what})"), || {
        let mo = info_num(&mut m, "replication", "master_repl_offset");
        let ro = info_num(&mut r, "replication", "slave_repl_offset");
        ro == mo
    });
    let dm = m.cmd(&["DEBUG", "DIGEST"]);
    let dr = r.cmd(&["DEBUG", "DIGEST"]);
    assert_eq!(dm, dr, "DEBUG DIGEST differs ({what})");
    for db in 0..16 {
        let db = db.to_string();
        m.cmd(&["SELECT", &db]);
        r.cmd(&["SELECT", &db]);
        assert_eq!(m.cmd(&["DBSIZE"]), r.cmd(&["DBSIZE"]), "db {db} ({what})");
    }
}

fn redis_replica_follows(diskless: bool) {
    let master = petrel_master(diskless);
    // Data before the sync, in several databases and with TTLs.
    workload(&master, 2, 1500, 11);
    {
        let mut c = master.raw();
        c.cmd(&["SELECT", "7"]);
        c.cmd(&["SET", "ttl", "v", "EX", "1000"]);
        c.cmd(&["HSET", "h7", "a", "1", "b", "2"]);
    }
    let Some(replica) = redis_replica_of(&master) else {
        return;
    };
    link_up(&replica);
    assert_in_sync(&master, &replica, "after the full sync");
    assert_eq!(sync_counts(&master).0, 1);

    // The stream: writes of every type from several clients, MULTI/EXEC,
    // scripts, blocking pops served by pushes, FLUSHDB/SWAPDB.
    workload(&master, 3, 1500, 12);
    {
        let mut c = master.raw();
        c.cmd(&["MULTI"]);
        c.cmd(&["SET", "tx1", "a"]);
        c.cmd(&["SELECT", "5"]);
        c.cmd(&["INCR", "tx2"]);
        assert!(matches!(c.cmd(&["EXEC"]), Value::Array(_)));
    }
    assert_in_sync(&master, &replica, "after the workload");
    let mut c = master.raw();
    assert_eq!(c.cmd(&["WAIT", "1", "10000"]), Value::Int(1));

    // FLUSHALL is replicated too.
    c.cmd(&["FLUSHALL"]);
    c.cmd(&["SET", "after", "flushall"]);
    assert_in_sync(&master, &replica, "after FLUSHALL");

    // ROLE and INFO show the replica.
    let role = c.cmd(&["ROLE"]);
    let Value::Array(parts) = &role else {
        panic!("ROLE: {role:?}")
    };
    assert_eq!(parts[0], Value::Bulk(b"master".to_vec()));
    let text = c.cmd(&["INFO", "replication"]);
    let text = String::from_utf8_lossy(text.as_bytes().unwrap()).into_owned();
    assert!(text.contains("connected_slaves:1"), "{text}");
    assert!(
        text.contains(&format!(
            "slave0:ip=127.0.0.1,port={},state=online",
            replica.port()
        )),
        "{text}"
    );
    let list = c.cmd(&["CLIENT", "LIST", "TYPE", "replica"]);
    let list = String::from_utf8_lossy(list.as_bytes().unwrap()).into_owned();
    assert!(list.contains("flags=S"), "{list}");

    // A killed link comes back with a partial resync.
    let (full, partial) = sync_counts(&master);
    assert_eq!(c.cmd(&["CLIENT", "KILL", "TYPE", "replica"]), Value::Int(1));
    c.cmd(&["SET", "while", "down"]);
    wait_for("the partial resync", || sync_counts(&master).1 > partial);
    assert_eq!(sync_counts(&master).0, full, "a full sync happened");
    link_up(&replica);
    workload(&master, 2, 500, 13);
    assert_in_sync(&master, &replica, "after the partial resync");
    assert_eq!(sync_counts(&master).0, full, "a full sync happened");
}

#[test]
fn redis_replica_diskless_sync() {
    redis_replica_follows(true);
}

#[test]
fn redis_replica_disk_sync() {
    redis_replica_follows(false);
}

// ---- a replica on a raw socket ----

/// Reads a line ending in CRLF, skipping the newline keepalives.
fn line(c: &mut RawConn) -> String {
    loop {
        let l = c.read_line().expect("connection closed");
        if !l.is_empty() {
            return l;
        }
    }
}

/// Runs the replica handshake and reads the full sync payload, then (for
/// a diskless payload) checks the master waits for the first ACK and sends
/// it; returns (replid, offset).
fn raw_replica(master: &Server, capa_eof: bool) -> (RawConn, String, u64) {
    let (mut c, replid, offset, diskless) = raw_replica_payload(master, capa_eof);
    if diskless {
        // Until the replica's first ACK the master sends nothing after the
        // mark (a replica finds the end of the payload by the mark being
        // the last bytes read) and the replica is not online; then the
        // stream starts.
        assert_eq!(
            c.read_reply_within(Duration::from_millis(1500)),
            Reply::Timeout,
            "bytes right after the payload's mark: {:?}",
            String::from_utf8_lossy(c.pending())
        );
        let mut cl = master.raw();
        let slave0 = info_field(&mut cl, "replication", "slave0").unwrap_or_default();
        assert!(!slave0.contains("state=online"), "{slave0}");
        c.send_cmd(&["REPLCONF", "ACK", &offset.to_string()]);
    }
    (c, replid, offset)
}

/// The handshake and the payload only: (conn, replid, offset, diskless).
fn raw_replica_payload(master: &Server, capa_eof: bool) -> (RawConn, String, u64, bool) {
    let mut c = master.raw();
    assert_eq!(c.cmd(&["PING"]), Value::simple("PONG"));
    assert_eq!(
        c.cmd(&["REPLCONF", "listening-port", "4242"]),
        Value::simple("OK")
    );
    if capa_eof {
        assert_eq!(
            c.cmd(&["REPLCONF", "capa", "eof", "capa", "psync2"]),
            Value::simple("OK")
        );
    }
    c.send_cmd(&["PSYNC", "?", "-1"]);
    let l = line(&mut c);
    let parts: Vec<&str> = l.split(' ').collect();
    assert_eq!(parts[0], "+FULLRESYNC", "{l}");
    let replid = parts[1].to_string();
    let offset: u64 = parts[2].parse().unwrap();
    let head = line(&mut c);
    if let Some(mark) = head.strip_prefix("$EOF:") {
        assert!(capa_eof);
        // The payload ends with the mark.
        let mut got = Vec::new();
        while !got.ends_with(mark.as_bytes()) {
            got.extend(c.read_bytes(1));
        }
        assert!(got.starts_with(b"REDIS0010"));
        return (c, replid, offset, true);
    } else {
        let len: usize = head.strip_prefix('$').expect(&head).parse().unwrap();
        let payload = c.read_bytes(len);
        assert!(payload.starts_with(b"REDIS0010"));
    }
    (c, replid, offset, false)
}

/// The stream held for a replica (here: one that has its diskless payload
/// but has not acknowledged it yet) shows in INFO `mem_clients_slaves`,
/// `mem_total_replication_buffers` and MEMORY STATS `clients.slaves`.
#[test]
fn memory_held_for_replicas_is_reported() {
    let master = petrel_master(true);
    let mut c = master.raw();
    let (_r, _, _, diskless) = raw_replica_payload(&master, true);
    assert!(diskless);
    assert_eq!(info_num(&mut c, "memory", "mem_clients_slaves"), 0);
    let value = "x".repeat(1000);
    for i in 0..1000 {
        c.cmd(&["SET", &format!("k{i}"), &value]);
    }
    let held = info_num(&mut c, "memory", "mem_clients_slaves");
    assert!(held >= 1_000_000, "{held}");
    let backlog = info_num(&mut c, "memory", "mem_replication_backlog");
    assert_eq!(
        info_num(&mut c, "memory", "mem_total_replication_buffers"),
        backlog + held
    );
    let Value::Array(flat) = c.cmd(&["MEMORY", "STATS"]) else {
        panic!("MEMORY STATS is a flat array in RESP2");
    };
    let slaves = flat
        .chunks(2)
        .find(|kv| kv[0].as_bytes() == Some(&b"clients.slaves"[..]))
        .map(|kv| kv[1].clone());
    assert_eq!(slaves, Some(Value::Int(held)));
}

/// The next `n` bytes of the stream, after the master's PINGs (sent every
/// `repl-ping-replica-period`, so some may come first).
fn stream_after_pings(r: &mut RawConn, n: usize) -> Vec<u8> {
    let mut got = Vec::new();
    while got.len() < n {
        got.extend(r.read_bytes(1));
        if got.starts_with(b"*1\r\n$4\r\nPING\r\n") {
            got.drain(..14);
        }
    }
    got
}

#[test]
fn raw_replica_full_sync_stream_and_wait() {
    for diskless in [true, false] {
        let master = petrel_master(diskless);
        let mut w = master.raw();
        w.cmd(&["SET", "k", "v"]);
        // No replica: WAIT times out with 0, WAIT 0 answers at once.
        assert_eq!(w.cmd(&["WAIT", "1", "50"]), Value::Int(0));
        assert_eq!(w.cmd(&["WAIT", "0", "0"]), Value::Int(0));
        assert_eq!(
            w.cmd(&["WAIT", "1", "-1"]),
            Value::Error(b"ERR timeout is negative".to_vec())
        );
        let (mut r, replid, offset) = raw_replica(&master, diskless);
        let mut cl = master.raw();
        wait_for("the replica to be online", || {
            info_field(&mut cl, "replication", "slave0")
                .is_some_and(|s| s.contains("state=online") && s.contains("port=4242"))
        });
        // The stream: SELECT first, then the write, as Redis sends it.
        w.cmd(&["SET", "a", "1"]);
        let expect = b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\n";
        assert_eq!(stream_after_pings(&mut r, expect.len()), expect.to_vec());
        let now = info_num(&mut cl, "replication", "master_repl_offset") as u64;
        assert!(now >= offset + expect.len() as u64);

        // WAIT blocks until the replica acknowledges; GETACK asks it to.
        w.send_cmd(&["WAIT", "1", "0"]);
        std::thread::sleep(Duration::from_millis(100));
        r.send_cmd(&["REPLCONF", "ACK", &now.to_string()]);
        assert_eq!(w.read_reply(), Value::Int(1));

        // A WAIT for an offset never acknowledged times out with 0.
        w.cmd(&["SET", "b", "2"]);
        assert_eq!(w.cmd(&["WAIT", "1", "200"]), Value::Int(0));

        // The replica goes away while a WAIT blocks: it times out with 0,
        // and the replica is gone from INFO.
        w.send_cmd(&["WAIT", "1", "1500"]);
        std::thread::sleep(Duration::from_millis(100));
        drop(r);
        assert_eq!(w.read_reply(), Value::Int(0));
        wait_for("the replica to be gone", || {
            info_field(&mut cl, "replication", "connected_slaves").as_deref() == Some("0")
        });

        // PSYNC with the master's ID and a covered offset continues.
        let mut p = master.raw();
        p.cmd(&["REPLCONF", "capa", "psync2"]);
        p.send_cmd(&["PSYNC", &replid, &(offset + 1).to_string()]);
        assert_eq!(line(&mut p), format!("+CONTINUE {replid}"));
        // ...and gets the backlog from that offset: the SELECT and SET a 1.
        assert_eq!(stream_after_pings(&mut p, expect.len()), expect.to_vec());
        // A wrong ID means a full sync.
        let mut q = master.raw();
        q.send_cmd(&["PSYNC", "0123456789012345678901234567890123456789", "5"]);
        assert!(line(&mut q).starts_with("+FULLRESYNC "));
        let mut cl = master.raw();
        assert_eq!(info_num(&mut cl, "stats", "sync_partial_ok"), 1);
        assert_eq!(info_num(&mut cl, "stats", "sync_partial_err"), 1);
    }
}

#[test]
fn replconf_errors_match_redis() {
    let Some(redis) = RefRedis::start() else {
        return;
    };
    let petrel = Server::start(&[]);
    for args in [
        vec!["REPLCONF", "listening-port"],
        vec!["REPLCONF", "foo", "bar"],
        vec!["REPLCONF", "listening-port", "x"],
        vec!["REPLCONF", "capa", "eof"],
        vec!["REPLCONF"],
        vec!["WAIT", "x", "0"],
        vec!["WAIT", "0", "x"],
        vec!["WAIT", "0", "-5"],
        vec!["WAIT", "0", "0"],
        vec!["PSYNC", "?"],
        vec!["PSYNC", "?", "x"],
        vec!["REPLCONF", "rdb-only", "2"],
        vec!["REPLCONF", "rdb-only", "1"],
        vec!["REPLCONF", "rdb-filter-only", ""],
        vec!["REPLCONF", "rdb-filter-only", "foo"],
        vec!["REPLICAOF", "127.0.0.1", "x"],
        vec!["REPLICAOF", "127.0.0.1", "70000"],
        vec!["SLAVEOF", "127.0.0.1", "-1"],
        vec!["SLAVEOF", "NO", "ONE"],
        vec!["REPLICAOF", "no", "one"],
        vec!["ROLE"],
    ] {
        let a = petrel.raw().cmd(&args);
        let b = redis.raw().cmd(&args);
        assert_eq!(a, b, "{args:?}");
    }
    // min-replicas-to-write with no replica: writes are refused, reads
    // and PING are not.
    for args in [
        vec!["CONFIG", "SET", "min-replicas-to-write", "1"],
        vec!["SET", "x", "1"],
        vec!["GET", "x"],
        vec!["PING"],
        vec!["CONFIG", "GET", "min-slaves-max-lag"],
        vec!["CONFIG", "GET", "min-replicas-to-write"],
        vec!["CONFIG", "SET", "min-replicas-to-write", "0"],
        vec!["SET", "x", "1"],
    ] {
        let a = petrel.raw().cmd(&args);
        let b = redis.raw().cmd(&args);
        assert_eq!(a, b, "{args:?}");
    }
    let mut p = petrel.raw();
    let mut r = redis.raw();
    p.cmd(&["MULTI"]);
    r.cmd(&["MULTI"]);
    assert_eq!(p.cmd(&["SYNC"]), r.cmd(&["SYNC"]));
    assert_eq!(p.cmd(&["WAIT", "0", "0"]), r.cmd(&["WAIT", "0", "0"]));
}

// ---- petrel as the replica ----

fn petrel_replica() -> Server {
    Server::start(&[("enable-debug-command", "yes")])
}

/// Lets the master's stream reach the replica, then compares digests.
fn assert_replica_in_sync(master: &Server, replica: &Server, what: &str) {
    collect_expired(master);
    let mut m = master.raw();
    let mut r = replica.raw();
    wait_for(&format!("the petrel replica to catch up ({what})"), || {
        let mo = info_num(&mut m, "replication", "master_repl_offset");
        let ro = info_num(&mut r, "replication", "slave_repl_offset");
        ro == mo
    });
    assert_eq!(
        m.cmd(&["DEBUG", "DIGEST"]),
        r.cmd(&["DEBUG", "DIGEST"]),
        "DEBUG DIGEST differs ({what})"
    );
    for db in 0..16 {
        let db = db.to_string();
        m.cmd(&["SELECT", &db]);
        r.cmd(&["SELECT", &db]);
        assert_eq!(m.cmd(&["DBSIZE"]), r.cmd(&["DBSIZE"]), "db {db} ({what})");
    }
}

fn petrel_follows(master: &Server) {
    workload(master, 2, 1500, 21);
    let replica = petrel_replica();
    replicaof(&replica, master);
    link_up(&replica);
    assert_replica_in_sync(master, &replica, "after the full sync");
    workload(master, 3, 1500, 22);
    assert_replica_in_sync(master, &replica, "after the workload");
    let mut m = master.raw();
    assert_eq!(m.cmd(&["WAIT", "1", "10000"]), Value::Int(1));

    // The replica refuses writes from its clients, reads work.
    let mut r = replica.raw();
    assert_eq!(
        r.cmd(&["SET", "x", "1"]),
        Value::Error(b"READONLY You can't write against a read only replica.".to_vec())
    );
    let role = r.cmd(&["ROLE"]);
    let Value::Array(parts) = &role else {
        panic!("ROLE: {role:?}")
    };
    assert_eq!(parts[0], Value::Bulk(b"slave".to_vec()));
    assert!(
        matches!(r.cmd(&["WAIT", "0", "0"]), Value::Error(e) if e.starts_with(b"ERR WAIT cannot be used with replica instances"))
    );
    assert_eq!(parts[2], Value::Int(master.port() as i64));

    // A killed link comes back with a partial resync.
    let full = info_num(&mut m, "stats", "sync_full");
    let partial = info_num(&mut m, "stats", "sync_partial_ok");
    assert_eq!(m.cmd(&["CLIENT", "KILL", "TYPE", "replica"]), Value::Int(1));
    m.cmd(&["SET", "while", "down"]);
    wait_for("the partial resync", || {
        info_num(&mut m, "stats", "sync_partial_ok") > partial
    });
    link_up(&replica);
    workload(master, 2, 500, 23);
    assert_replica_in_sync(master, &replica, "after the partial resync");
    assert_eq!(info_num(&mut m, "stats", "sync_full"), full);

    // Promotion: the master's ID becomes the previous one, writes work.
    let before = info_field(&mut m, "replication", "master_replid").unwrap();
    let offset = info_num(&mut r, "replication", "slave_repl_offset");
    assert_eq!(r.cmd(&["REPLICAOF", "NO", "ONE"]), Value::simple("OK"));
    assert_eq!(
        info_field(&mut r, "replication", "role").as_deref(),
        Some("master")
    );
    assert_eq!(
        info_field(&mut r, "replication", "master_replid2").as_deref(),
        Some(before.as_str())
    );
    assert_eq!(
        info_num(&mut r, "replication", "second_repl_offset"),
        offset + 1
    );
    assert_eq!(r.cmd(&["SET", "x", "1"]), Value::simple("OK"));
}

#[test]
fn petrel_replica_of_redis_diskless() {
    let Some(master) = RefRedis::start_with(Opts::new(&[
        ("enable-debug-command", "yes"),
        ("repl-diskless-sync", "yes"),
        ("repl-diskless-sync-delay", "0"),
    ])) else {
        return;
    };
    petrel_follows(&master);
}

#[test]
fn petrel_replica_of_redis_disk() {
    let Some(master) = RefRedis::start_with(Opts::new(&[
        ("enable-debug-command", "yes"),
        ("repl-diskless-sync", "no"),
    ])) else {
        return;
    };
    petrel_follows(&master);
}

#[test]
fn petrel_replica_of_petrel() {
    for diskless in [true, false] {
        let master = petrel_master(diskless);
        petrel_follows(&master);
    }
}

#[test]
fn replicaof_in_the_config_file() {
    let master = petrel_master(true);
    master.raw().cmd(&["SET", "k", "v"]);
    let replica = Server::start_with(
        Opts::new(&[("enable-debug-command", "yes")])
            .config(&format!("replicaof 127.0.0.1 {}\n", master.port())),
    );
    link_up(&replica);
    assert_replica_in_sync(&master, &replica, "configured replica");
    assert_eq!(
        replica.raw().cmd(&["CONFIG", "GET", "replicaof"]),
        Value::Array(vec![
            Value::bulk("replicaof"),
            Value::bulk(format!("127.0.0.1 {}", master.port()))
        ])
    );
}

#[test]
fn replica_over_its_output_limit_is_dropped() {
    let master = Server::start(&[
        ("repl-diskless-sync-delay", "0"),
        ("client-output-buffer-limit", "replica 1mb 0 0"),
    ]);
    // A replica that never reads after the payload.
    let (r, _, _) = raw_replica(&master, true);
    let mut c = master.raw();
    wait_for("the replica to be online", || {
        info_field(&mut c, "replication", "connected_slaves").as_deref() == Some("1")
    });
    let value = "x".repeat(64 * 1024);
    let mut i = 0;
    wait_for("the replica to be dropped", || {
        for _ in 0..32 {
            i += 1;
            c.cmd(&["SET", &format!("k{i}"), &value]);
        }
        info_field(&mut c, "replication", "connected_slaves").as_deref() == Some("0")
    });
    assert!(info_num(&mut c, "stats", "client_output_buffer_limit_disconnections") >= 1);
    assert!(master.wait_log(
        "scheduled to be closed ASAP for overcoming of output buffer limits",
        PATIENCE
    ));
    drop(r);
}

#[test]
fn redis_cli_rdb_and_replica_work_against_petrel() {
    if !redis_available() {
        return;
    }
    let master = petrel_master(true);
    let mut c = master.raw();
    c.cmd(&["SET", "a", "1"]);
    c.cmd(&["RPUSH", "l", "x", "y"]);
    let out = master.dir().join("cli.rdb");
    let st = std::process::Command::new("redis-cli")
        .args(["-p", &master.port().to_string(), "--rdb"])
        .arg(&out)
        .output()
        .expect("redis-cli");
    assert!(st.status.success(), "{st:?}");
    let bytes = std::fs::read(&out).unwrap();
    assert!(bytes.starts_with(b"REDIS0010"));
    // The rdb-only link closed after the payload.
    wait_for("the rdb-only link to close", || {
        info_field(&mut c, "replication", "connected_slaves").as_deref() == Some("0")
    });
    // redis-cli --replica prints the stream.
    let child = std::process::Command::new("timeout")
        .args([
            "5",
            "redis-cli",
            "-p",
            &master.port().to_string(),
            "--replica",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("redis-cli");
    wait_for("redis-cli --replica to attach", || {
        info_field(&mut c, "replication", "connected_slaves").as_deref() == Some("1")
            && info_field(&mut c, "replication", "slave0")
                .is_some_and(|s| s.contains("state=online"))
    });
    c.cmd(&["SET", "seen", "by-the-cli"]);
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("\"SET\",\"seen\",\"by-the-cli\""), "{text}");
}

/// `masterauth` / `masteruser`: a Petrel replica of a redis-server master
/// that requires a password authenticates in its handshake; a wrong
/// password keeps the link down with Redis's log line, and the link comes
/// up once the setting is fixed (the replica retries every second); an ACL
/// user with only the replication commands works too.
#[test]
fn replica_authenticates_with_masterauth_and_masteruser() {
    let Some(master) = RefRedis::start_with(Opts::new(&[
        ("requirepass", "sekret"),
        ("repl-diskless-sync-delay", "0"),
    ])) else {
        return;
    };
    let mut m = master.raw();
    assert_eq!(m.cmd(&["AUTH", "sekret"]), Value::simple("OK"));
    assert_eq!(m.cmd(&["SET", "k", "v1"]), Value::simple("OK"));
    let replica = petrel_replica();
    let mut r = replica.raw();
    assert_eq!(
        r.cmd(&["CONFIG", "SET", "masterauth", "wrong"]),
        Value::simple("OK")
    );
    replicaof(&replica, &master);
    assert!(
        replica.wait_log("Unable to AUTH to MASTER: -WRONGPASS", PATIENCE),
        "{}",
        replica.log()
    );
    assert_eq!(
        info_field(&mut r, "replication", "master_link_status").as_deref(),
        Some("down")
    );
    assert_eq!(
        r.cmd(&["CONFIG", "SET", "masterauth", "sekret"]),
        Value::simple("OK")
    );
    link_up(&replica);
    assert_eq!(r.cmd(&["GET", "k"]), Value::bulk("v1"));
    // A user allowed only what a replica sends.
    assert_eq!(
        m.cmd(&[
            "ACL",
            "SETUSER",
            "repl",
            "on",
            ">pw",
            "-@all",
            "+psync",
            "+replconf",
            "+ping"
        ]),
        Value::simple("OK")
    );
    assert_eq!(
        r.cmd(&["CONFIG", "SET", "masteruser", "repl", "masterauth", "pw"]),
        Value::simple("OK")
    );
    assert_eq!(
        r.cmd(&["CONFIG", "GET", "masteruser"]),
        Value::Array(vec![Value::bulk("masteruser"), Value::bulk("repl")])
    );
    assert_eq!(m.cmd(&["CLIENT", "KILL", "TYPE", "replica"]), Value::Int(1));
    assert_eq!(m.cmd(&["SET", "k", "v2"]), Value::simple("OK"));
    wait_for("the replica to follow as user repl", || {
        r.cmd(&["GET", "k"]) == Value::bulk("v2")
    });
    let mut clients = String::new();
    wait_for("the replica's connection as user repl", || {
        clients = match m.cmd(&["CLIENT", "LIST", "TYPE", "replica"]) {
            Value::Bulk(b) => String::from_utf8_lossy(&b).into_owned(),
            other => format!("{other:?}"),
        };
        clients.contains("user=repl")
    });
}

/// Issue 21, point 3 with REPLICAOF NO ONE: after a master with two
/// replicas is given up, one replica is promoted and the other pointed at
/// it; the other continues by partial resync (`sync_partial_ok` on the
/// new master, no full sync), and every write WAIT had confirmed on the
/// old master is on both. A replica keeps a backlog of what it applied,
/// as Redis's do, which is what makes this possible.
#[test]
fn promoted_replica_continues_its_sibling_by_partial_resync() {
    let master = petrel_master(true);
    let a = petrel_replica();
    let b = petrel_replica();
    replicaof(&a, &master);
    replicaof(&b, &master);
    link_up(&a);
    link_up(&b);
    workload(&master, 2, 2000, 0x5eed_f00d);
    let mut m = master.raw();
    assert_eq!(m.cmd(&["SET", "confirmed", "yes"]), Value::simple("OK"));
    assert_eq!(m.cmd(&["WAIT", "2", "60000"]), Value::Int(2));
    assert_replica_in_sync(&master, &a, "a before the failover");
    assert_replica_in_sync(&master, &b, "b before the failover");
    let digest = m.cmd(&["DEBUG", "DIGEST"]);
    drop(m);
    drop(master);
    let mut ra = a.raw();
    assert_eq!(ra.cmd(&["REPLICAOF", "NO", "ONE"]), Value::simple("OK"));
    replicaof(&b, &a);
    link_up(&b);
    assert_eq!(info_num(&mut ra, "stats", "sync_partial_ok"), 1);
    assert_eq!(info_num(&mut ra, "stats", "sync_full"), 0);
    assert!(
        b.wait_log("Successful partial resynchronization with master", PATIENCE),
        "{}",
        b.log()
    );
    // Nothing confirmed was lost, and the new master's writes flow.
    assert_eq!(ra.cmd(&["DEBUG", "DIGEST"]), digest);
    assert_eq!(b.raw().cmd(&["GET", "confirmed"]), Value::bulk("yes"));
    assert_eq!(ra.cmd(&["SET", "after", "1"]), Value::simple("OK"));
    assert_eq!(ra.cmd(&["WAIT", "1", "60000"]), Value::Int(1));
    assert_replica_in_sync(&a, &b, "b after the failover");
}

/// Drops the master's PINGs (and keepalive newlines) from received stream
/// bytes, so two servers' streams compare whatever their PING timing.
fn without_pings(mut got: &[u8]) -> Vec<u8> {
    let ping = b"*1\r\n$4\r\nPING\r\n";
    let mut out = Vec::new();
    while !got.is_empty() {
        if got.starts_with(ping) {
            got = &got[ping.len()..];
        } else if got[0] == b'\n' && out.is_empty() {
            got = &got[1..];
        } else {
            out.push(got[0]);
            got = &got[1..];
        }
    }
    out
}

/// What a raw replica killed inside MULTI/EXEC receives after the kill
/// (until its connection closes), and the stream it then gets by PSYNC
/// from the offset it had processed. `by_id`: CLIENT KILL ID, else TYPE.
fn killed_inside_exec(master: &Server, by_id: bool) -> (Value, Vec<u8>, Vec<u8>) {
    let (mut r, replid, offset) = raw_replica(master, false);
    let mut w = master.raw();
    let mut id = String::new();
    wait_for("the raw replica to be online", || {
        let list = match w.cmd(&["CLIENT", "LIST", "TYPE", "replica"]) {
            Value::Bulk(b) => String::from_utf8_lossy(&b).into_owned(),
            _ => String::new(),
        };
        id = list
            .split(' ')
            .find_map(|f| f.strip_prefix("id="))
            .unwrap_or_default()
            .to_string();
        info_field(&mut w, "replication", "slave0").is_some_and(|s| s.contains("state=online"))
    });
    w.cmd(&["SET", "a", "1"]);
    let first = b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\n";
    assert_eq!(stream_after_pings(&mut r, first.len()), first.to_vec());
    let processed = offset + first.len() as u64;
    assert_eq!(w.cmd(&["MULTI"]), Value::simple("OK"));
    w.cmd(&["SET", "b", "2"]);
    if by_id {
        w.cmd(&["CLIENT", "KILL", "ID", &id]);
    } else {
        w.cmd(&["CLIENT", "KILL", "TYPE", "replica"]);
    }
    w.cmd(&["INCR", "c"]);
    let exec = w.cmd(&["EXEC"]);
    r.assert_closed();
    let after_kill = without_pings(r.pending());
    wait_for("the killed replica to be gone", || {
        info_field(&mut w, "replication", "connected_slaves").as_deref() == Some("0")
    });
    // It continues from what it processed: the whole transaction comes
    // from the backlog.
    let mut p = master.raw();
    p.cmd(&["REPLCONF", "capa", "psync2"]);
    p.send_cmd(&["PSYNC", &replid, &(processed + 1).to_string()]);
    assert_eq!(line(&mut p), format!("+CONTINUE {replid}"));
    let tx = b"*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$1\r\n2\r\n*2\r\n$4\r\nINCR\r\n$1\r\nc\r\n*1\r\n$4\r\nEXEC\r\n";
    let resumed = stream_after_pings(&mut p, tx.len());
    (exec, after_kill, resumed)
}

/// Issue 21: a replica killed (CLIENT KILL TYPE replica / ID) inside
/// MULTI/EXEC gets nothing more, not the rest of that transaction (Redis
/// frees it at once; the transaction is propagated at EXEC's end), and
/// continues by PSYNC with the whole transaction from the backlog. Checked
/// byte for byte against redis-server 7.0 in the same situation.
#[test]
fn replica_killed_inside_exec_gets_nothing_more() {
    let opts = || {
        Opts::new(&[
            ("repl-diskless-sync", "no"),
            ("repl-ping-replica-period", "1"),
        ])
    };
    for by_id in [false, true] {
        let petrel = Server::start_with(opts());
        let got = killed_inside_exec(&petrel, by_id);
        assert_eq!(
            got.0,
            Value::Array(vec![Value::simple("OK"), Value::Int(1), Value::Int(1)])
        );
        assert_eq!(
            String::from_utf8_lossy(&got.1),
            "",
            "stream sent to the replica after it was killed"
        );
        let Some(redis) = RefRedis::start_with(opts()) else {
            continue;
        };
        let want = killed_inside_exec(&redis, by_id);
        assert_eq!(got.0, want.0, "EXEC's reply");
        assert_eq!(
            String::from_utf8_lossy(&got.1),
            String::from_utf8_lossy(&want.1),
            "what the killed replica got"
        );
        assert_eq!(
            String::from_utf8_lossy(&got.2),
            String::from_utf8_lossy(&want.2),
            "the stream resumed by PSYNC"
        );
    }
}

/// A real replica killed inside MULTI/EXEC reconnects, continues by
/// partial resync and ends with the master's data (petrel and redis-server
/// as master and replica alike).
#[test]
fn replica_killed_inside_exec_resyncs_partially() {
    let run = |master: &Server, replica: &Server| {
        let mut m = master.raw();
        workload(master, 2, 500, 31);
        let mut r = replica.raw();
        let port = master.port().to_string();
        assert_eq!(
            r.cmd(&["REPLICAOF", "127.0.0.1", &port]),
            Value::simple("OK")
        );
        link_up(replica);
        let (full, partial) = sync_counts(master);
        let list = match m.cmd(&["CLIENT", "LIST", "TYPE", "replica"]) {
            Value::Bulk(b) => String::from_utf8_lossy(&b).into_owned(),
            other => panic!("{other:?}"),
        };
        let id = list
            .split(' ')
            .find_map(|f| f.strip_prefix("id="))
            .unwrap()
            .to_string();
        assert_eq!(m.cmd(&["MULTI"]), Value::simple("OK"));
        m.cmd(&["SET", "before", "kill"]);
        m.cmd(&["CLIENT", "KILL", "ID", &id]);
        m.cmd(&["RPUSH", "after", "a", "b", "c"]);
        m.cmd(&["INCRBY", "counter", "5"]);
        assert_eq!(
            m.cmd(&["EXEC"]),
            Value::Array(vec![
                Value::simple("OK"),
                Value::Int(1),
                Value::Int(3),
                Value::Int(5)
            ])
        );
        wait_for("the partial resync", || sync_counts(master).1 > partial);
        link_up(replica);
        workload(master, 2, 300, 32);
        assert_replica_in_sync(master, replica, "after the kill inside EXEC");
        assert_eq!(sync_counts(master).0, full, "no full sync");
        assert_eq!(
            r.cmd(&["LRANGE", "after", "0", "-1"]).to_string(),
            m.cmd(&["LRANGE", "after", "0", "-1"]).to_string()
        );
    };
    let petrel_opts = || {
        Opts::new(&[
            ("enable-debug-command", "yes"),
            ("repl-diskless-sync-delay", "0"),
        ])
    };
    let master = Server::start_with(petrel_opts());
    let replica = Server::start_with(petrel_opts());
    run(&master, &replica);
    let Some(rmaster) = RefRedis::start_with(petrel_opts()) else {
        return;
    };
    let Some(rreplica) = RefRedis::start_with(petrel_opts()) else {
        return;
    };
    run(&rmaster, &rreplica);
}
