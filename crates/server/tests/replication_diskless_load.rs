//! `repl-diskless-load disabled|on-empty-db|swapdb` (Redis 7.0) against a
//! scripted master on a raw socket that serves a real RDB (saved by a
//! Petrel server) either whole or cut off midway: `on-empty-db` loads
//! from the socket only into an empty dataset (a cut load leaves it
//! empty), otherwise goes through a file (a cut transfer leaves the old
//! data untouched); `swapdb` loads from the socket into a keyspace of its
//! own and drops it when the transfer is cut, the old data staying (async
//! loading, which serves the old data meanwhile, is in
//! `replication_async_load.rs`). The log says which path was taken, in
//! Redis's words ("to parser" / "to disk").
//!
//! No timing assertions: everything waits by polling with generous limits.

#[path = "common/aof_workload.rs"]
mod aof_workload;
mod common;
#[path = "common/repl_links.rs"]
mod repl_links;

use common::*;
use repl_links::*;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};

/// A dataset saved by a Petrel server: (RDB bytes, its DEBUG DIGEST).
fn source_rdb() -> (Vec<u8>, Value) {
    let src = Server::start(&[("enable-debug-command", "yes")]);
    let mut c = src.raw();
    for i in 0..2000 {
        c.cmd(&["SET", &format!("key:{i}"), &"v".repeat(100)]);
    }
    c.cmd(&["SELECT", "2"]);
    c.cmd(&["RPUSH", "list", "a", "b", "c"]);
    c.cmd(&["HSET", "hash", "f", "v"]);
    assert_eq!(c.cmd(&["SAVE"]), Value::simple("OK"));
    let rdb = std::fs::read(src.dir().join("dump.rdb")).unwrap();
    (rdb, c.cmd(&["DEBUG", "DIGEST"]))
}

/// What the scripted master does with one connection.
#[derive(Clone, Copy)]
enum Serve {
    /// `$EOF:<mark>` and half of the RDB, then it closes.
    CutEof,
    /// `$<len>` and half of the RDB, then it closes.
    CutLen,
    /// `$<len>` and the whole RDB, then keeps the link open.
    Whole,
    /// As `Whole`, then [`PAST_TTL_STREAM`] as the replication stream.
    WholeThenPastTtls,
}

/// A stream whose absolute expiry times have passed (a master's SET PXAT
/// or GETEX PXAT, propagated while its time was ahead, arriving late);
/// `marker` comes last, so the replica applied everything once it has it.
const PAST_TTL_STREAM: &[&[&str]] = &[
    &["SELECT", "0"],
    &["SET", "set-pxat", "v", "PXAT", "1"],
    &["SET", "set-exat", "v", "EXAT", "1"],
    &["SET", "getex-pxat", "v"],
    &["GETEX", "getex-pxat", "PXAT", "1"],
    &["SET", "getex-exat", "v"],
    &["GETEX", "getex-exat", "EXAT", "1"],
    &["SET", "pexpireat", "v"],
    &["PEXPIREAT", "pexpireat", "1"],
    &["SET", "marker", "done"],
];

fn resp_command(argv: &[&str]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", argv.len()).into_bytes();
    for a in argv {
        out.extend_from_slice(format!("${}\r\n{a}\r\n", a.len()).as_bytes());
    }
    out
}

fn read_command(r: &mut BufReader<TcpStream>) -> Option<Vec<String>> {
    let mut line = String::new();
    loop {
        line.clear();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        if !line.trim().is_empty() {
            break;
        }
    }
    let n: usize = line.trim().strip_prefix('*')?.parse().ok()?;
    let mut argv = Vec::new();
    for _ in 0..n {
        line.clear();
        r.read_line(&mut line).ok()?;
        let len: usize = line.trim().strip_prefix('$')?.parse().ok()?;
        let mut buf = vec![0u8; len + 2];
        r.read_exact(&mut buf).ok()?;
        argv.push(String::from_utf8_lossy(&buf[..len]).into_owned());
    }
    Some(argv)
}

/// A master on `listener` serving `plan`, one connection per step.
fn scripted_master(listener: TcpListener, rdb: Vec<u8>, plan: Vec<Serve>) {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        for step in plan {
            let Ok((sock, _)) = listener.accept() else {
                return;
            };
            let mut w = sock.try_clone().unwrap();
            let mut r = BufReader::new(sock);
            while let Some(argv) = read_command(&mut r) {
                let cmd = argv[0].to_ascii_uppercase();
                if cmd == "PING" {
                    w.write_all(b"+PONG\r\n").unwrap();
                } else if cmd == "REPLCONF" {
                    w.write_all(b"+OK\r\n").unwrap();
                } else if cmd == "PSYNC" || cmd == "SYNC" {
                    let id = "a".repeat(40);
                    w.write_all(format!("+FULLRESYNC {id} 0\r\n").as_bytes())
                        .unwrap();
                    let half = &rdb[..rdb.len() / 2];
                    match step {
                        Serve::CutEof => {
                            let mark = "m".repeat(40);
                            w.write_all(format!("$EOF:{mark}\r\n").as_bytes()).unwrap();
                            w.write_all(half).unwrap();
                        }
                        Serve::CutLen => {
                            w.write_all(format!("${}\r\n", rdb.len()).as_bytes())
                                .unwrap();
                            w.write_all(half).unwrap();
                        }
                        Serve::Whole | Serve::WholeThenPastTtls => {
                            w.write_all(format!("${}\r\n", rdb.len()).as_bytes())
                                .unwrap();
                            w.write_all(&rdb).unwrap();
                        }
                    }
                    break;
                }
            }
            if matches!(step, Serve::WholeThenPastTtls) {
                for c in PAST_TTL_STREAM {
                    w.write_all(&resp_command(c)).unwrap();
                }
            }
            if matches!(step, Serve::Whole | Serve::WholeThenPastTtls) {
                kept.push(w);
            } else {
                let _ = w.shutdown(std::net::Shutdown::Both);
            }
        }
        // The last link stays open until the test ends.
        std::thread::sleep(Duration::from_secs(600));
        drop(kept);
    });
}

fn replica_with(mode: &str, old_data: bool) -> (Server, Value) {
    let r = Server::start(&[
        ("enable-debug-command", "yes"),
        ("repl-diskless-load", mode),
    ]);
    let mut c = r.raw();
    if old_data {
        c.cmd(&["SET", "old", "data"]);
        c.cmd(&["SELECT", "4"]);
        c.cmd(&["SADD", "oldset", "x", "y"]);
    }
    let digest = c.cmd(&["DEBUG", "DIGEST"]);
    (r, digest)
}

/// Points `replica` at a scripted master serving `plan`; waits for
/// the failed load or transfer of the first step.
fn follow_scripted(replica: &Server, rdb: &[u8], plan: Vec<Serve>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    scripted_master(listener, rdb.to_vec(), plan);
    assert_eq!(
        replica
            .raw()
            .cmd(&["REPLICAOF", "127.0.0.1", &port.to_string()]),
        Value::simple("OK")
    );
}

fn wait_log(srv: &Server, needle: &str) {
    assert!(
        srv.wait_log(needle, PATIENCE),
        "no '{needle}' in\n{}",
        srv.log()
    );
}

const CUT_SOCKET: &str = "Failed trying to load the MASTER synchronization DB from socket";

#[test]
fn on_empty_db_loads_from_the_socket_only_when_empty() {
    let (rdb, digest) = source_rdb();

    // Empty: from the socket; a cut load leaves the dataset empty, the
    // next (whole) transfer loads it.
    let (replica, _) = replica_with("on-empty-db", false);
    follow_scripted(&replica, &rdb, vec![Serve::CutEof, Serve::Whole]);
    wait_log(
        &replica,
        "receiving streamed RDB from master with EOF to parser",
    );
    wait_log(&replica, CUT_SOCKET);
    link_up(&replica);
    assert_eq!(replica.raw().cmd(&["DEBUG", "DIGEST"]), digest);
    assert!(replica.wait_log("bytes from master to parser", PATIENCE));

    // Not empty: through a file; the cut transfer leaves the old data.
    let (replica, old) = replica_with("on-empty-db", true);
    follow_scripted(&replica, &rdb, vec![Serve::CutLen, Serve::Whole]);
    wait_log(&replica, "bytes from master to disk");
    link_up(&replica);
    assert!(!replica.log().contains("to parser"), "{}", replica.log());
    assert_ne!(old, digest);
    assert_eq!(replica.raw().cmd(&["DEBUG", "DIGEST"]), digest);
}

#[test]
fn on_empty_db_with_data_keeps_it_when_the_transfer_is_cut() {
    let (rdb, _) = source_rdb();
    let (replica, old) = replica_with("on-empty-db", true);
    follow_scripted(&replica, &rdb, vec![Serve::CutEof, Serve::CutEof]);
    wait_log(
        &replica,
        "receiving streamed RDB from master with EOF to disk",
    );
    wait_log(&replica, "Connecting to MASTER");
    // Both cut transfers went through a file and loaded nothing.
    wait_for("the second attempt", || {
        replica.log().matches("with EOF to disk").count() >= 2
    });
    assert_eq!(replica.raw().cmd(&["DEBUG", "DIGEST"]), old);
}

#[test]
fn swapdb_restores_the_old_data_when_the_transfer_is_cut() {
    let (rdb, digest) = source_rdb();
    let (replica, old) = replica_with("swapdb", true);
    follow_scripted(
        &replica,
        &rdb,
        vec![Serve::CutEof, Serve::CutLen, Serve::Whole],
    );
    wait_log(
        &replica,
        "receiving streamed RDB from master with EOF to parser",
    );
    wait_log(&replica, CUT_SOCKET);
    wait_log(&replica, "Discarding temporary DB in background");
    wait_for("the second cut load", || {
        replica.log().matches(CUT_SOCKET).count() >= 2
    });
    // Between attempts the old data is back; the whole transfer replaces it.
    link_up(&replica);
    assert_eq!(replica.raw().cmd(&["DEBUG", "DIGEST"]), digest);
    assert_eq!(
        replica
            .log()
            .matches("Discarding temporary DB in background")
            .count(),
        2
    );
    let _ = old;
}

#[test]
fn swapdb_old_data_is_readable_after_a_cut_transfer() {
    let (rdb, _) = source_rdb();
    let (replica, old) = replica_with("swapdb", true);
    follow_scripted(&replica, &rdb, vec![Serve::CutEof]);
    wait_log(&replica, "Discarding temporary DB in background");
    let mut c = replica.raw();
    assert_eq!(c.cmd(&["DEBUG", "DIGEST"]), old);
    assert_eq!(c.cmd(&["GET", "old"]), Value::bulk("data"));
}

#[test]
fn disabled_goes_through_a_file() {
    let (rdb, digest) = source_rdb();
    let (replica, _) = replica_with("disabled", false);
    follow_scripted(&replica, &rdb, vec![Serve::CutEof, Serve::Whole]);
    wait_log(
        &replica,
        "receiving streamed RDB from master with EOF to disk",
    );
    link_up(&replica);
    assert!(!replica.log().contains("to parser"), "{}", replica.log());
    assert_eq!(replica.raw().cmd(&["DEBUG", "DIGEST"]), digest);
    let mut c = replica.raw();
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "repl-diskless-load"]),
        Value::Array(vec![
            Value::bulk("repl-diskless-load"),
            Value::bulk("disabled")
        ])
    );
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "repl-diskless-load", "sometimes"]),
        err("ERR CONFIG SET failed (possibly related to argument 'repl-diskless-load') - argument(s) must be one of the following: disabled, on-empty-db, swapdb")
    );
}

/// What a replica holds of [`PAST_TTL_STREAM`]: (DBSIZE, then per key
/// EXISTS and PTTL as a client sees them).
fn past_ttl_view(replica: &Server) -> (Value, Vec<(Value, Value)>) {
    let mut c = replica.raw();
    wait_for("the stream to be applied", || {
        c.cmd(&["GET", "marker"]) == Value::bulk("done")
    });
    let keys = [
        "set-pxat",
        "set-exat",
        "getex-pxat",
        "getex-exat",
        "pexpireat",
    ];
    let seen = keys
        .iter()
        .map(|k| (c.cmd(&["EXISTS", k]), c.cmd(&["PTTL", k])))
        .collect();
    (c.cmd(&["DBSIZE"]), seen)
}

/// Redis 7.0's `checkAlreadyExpired`: on a replica, an absolute expiry
/// time already past (SET/GETEX PXAT/EXAT, PEXPIREAT from the master)
/// keeps the key with that TTL, to go with the master's DEL; clients see
/// it as missing. Compared with a redis-server replica fed the same.
#[test]
fn past_absolute_ttls_from_the_master_match_redis() {
    let (rdb, _) = source_rdb();
    let petrel = Server::start(&[("enable-debug-command", "yes")]);
    follow_scripted(&petrel, &rdb, vec![Serve::WholeThenPastTtls]);
    let got = past_ttl_view(&petrel);
    // The keys are kept (DB 0's DBSIZE counts them: 2000 of the RDB, the
    // five, marker), read as missing.
    assert_eq!(got.0, Value::Int(2006), "{:?}", got);
    for (exists, pttl) in &got.1 {
        assert_eq!((exists, pttl), (&Value::Int(0), &Value::Int(-2)));
    }
    if let Some(redis) = RefRedis::start() {
        follow_scripted(&redis, &rdb, vec![Serve::WholeThenPastTtls]);
        assert_eq!(past_ttl_view(&redis), got);
    }
}

/// A payload holding keys whose TTL has passed (saved by a redis-server
/// whose active expiry was off): a replica keeps them, to go with its
/// master's DELs, as a redis-server replica does (Redis skips them only
/// when it is a master). Both load paths: from the socket and from disk.
#[test]
fn a_replica_keeps_expired_keys_of_the_payload_as_redis() {
    let Some(src) = RefRedis::start_with(Opts::new(&[("enable-debug-command", "yes")])) else {
        return;
    };
    let mut c = src.raw();
    c.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]);
    c.cmd(&["SET", "live", "v"]);
    for i in 0..5 {
        c.cmd(&["SET", &format!("gone:{i}"), "v", "PX", "1"]);
    }
    assert_eq!(c.cmd(&["SAVE"]), Value::simple("OK"));
    let rdb = std::fs::read(src.dir().join("dump.rdb")).unwrap();
    let view = |r: &Server| {
        link_up(r);
        let mut c = r.raw();
        (
            c.cmd(&["DBSIZE"]),
            c.cmd(&["EXISTS", "live"]),
            c.cmd(&["EXISTS", "gone:0"]),
        )
    };
    let redis = RefRedis::start().unwrap();
    follow_scripted(&redis, &rdb, vec![Serve::Whole]);
    let want = view(&redis);
    assert_eq!(want, (Value::Int(6), Value::Int(1), Value::Int(0)));
    for mode in ["swapdb", "disabled"] {
        let (replica, _) = replica_with(mode, false);
        follow_scripted(&replica, &rdb, vec![Serve::Whole]);
        assert_eq!(view(&replica), want, "repl-diskless-load {mode}");
    }
}
