//! Faults the server survives (issue 26, "Faults contained"; the behaviour
//! is documented in `crates/server/src/faults.rs` and the README).
//!
//! A command that panics while it changes a partition leaves that change
//! possibly half made: the partition is stopped (its keys answer an error,
//! with a log line naming it), the panicking connection is closed, and
//! everything else goes on: other partitions, other connections, the cron.

mod common;
use common::*;
use resp::Value;
use std::time::Duration;

fn err_text(v: &Value) -> Option<String> {
    match v {
        Value::Error(e) => Some(String::from_utf8_lossy(e).into_owned()),
        _ => None,
    }
}

/// The partition a "partition N is stopped" error names.
fn stopped_partition(v: &Value) -> Option<usize> {
    let e = err_text(v)?;
    let rest = e.strip_prefix("ERR partition ")?;
    assert!(
        rest.contains(" is stopped after an internal error (see the server log)"),
        "{e}"
    );
    rest.split(' ').next()?.parse().ok()
}

fn ok(v: Value) {
    assert_eq!(v, Value::Simple(b"OK".to_vec()));
}

#[test]
fn a_panic_outside_any_partition_stops_nothing() {
    let srv = TestServer::start(&[("enable-debug-command", "yes")]);
    let mut a = srv.raw();
    ok(a.cmd(&["SET", "k", "v"]));
    let mut victim = srv.raw();
    victim.send_cmd(&["DEBUG", "PANIC-CONNECTION"]);
    assert!(victim.closed_within(Duration::from_secs(5)));
    assert_eq!(a.cmd(&["GET", "k"]), Value::Bulk(b"v".to_vec()));
    assert_eq!(a.cmd(&["DBSIZE"]), Value::Int(1));
    assert!(srv.wait_log("Panic in thread", Duration::from_secs(5)));
    assert!(!srv.log().contains("is stopped"), "{}", srv.log());
}

#[test]
fn a_panic_while_writing_stops_that_partition_only() {
    let srv = TestServer::start(&[("enable-debug-command", "yes")]);
    let mut a = srv.raw();
    let n = 200;
    for i in 0..n {
        ok(a.cmd(&["SET", &format!("k{i}"), &format!("v{i}")]));
    }

    // The write panics half way: the connection closes, the server lives.
    let mut victim = srv.raw();
    victim.send_cmd(&["DEBUG", "PANIC-WRITE", "victim", "half"]);
    assert!(victim.closed_within(Duration::from_secs(5)));
    assert_eq!(a.cmd(&["PING"]), Value::Simple(b"PONG".to_vec()));

    // The half-written key is not served: its partition is stopped.
    let got = a.cmd(&["GET", "victim"]);
    let part = stopped_partition(&got).unwrap_or_else(|| panic!("GET victim: {got}"));
    assert!(srv.wait_log(
        &format!("Partition {part} (hash slots"),
        Duration::from_secs(5)
    ));
    assert!(srv
        .log()
        .contains("DEBUG PANIC-WRITE requested by the client"));

    // Every other key is served, or refused naming the same partition.
    let (mut served, mut stopped) = (Vec::new(), Vec::new());
    for i in 0..n {
        let k = format!("k{i}");
        let v = a.cmd(&["GET", &k]);
        if v == Value::Bulk(format!("v{i}").into_bytes()) {
            served.push(k);
        } else {
            assert_eq!(stopped_partition(&v), Some(part), "GET {k}: {v}");
            stopped.push(k);
        }
    }
    assert!(
        !served.is_empty() && !stopped.is_empty(),
        "{served:?} {stopped:?}"
    );

    // Writes: served keys change, stopped ones are refused; a multi-key
    // command that needs the stopped partition changes nothing at all.
    let (s0, t0) = (served[0].as_str(), stopped[0].as_str());
    ok(a.cmd(&["SET", s0, "new"]));
    assert_eq!(a.cmd(&["GET", s0]), Value::Bulk(b"new".to_vec()));
    assert_eq!(stopped_partition(&a.cmd(&["SET", t0, "x"])), Some(part));
    let got = a.cmd(&["MSET", s0, "changed", t0, "x"]);
    assert_eq!(stopped_partition(&got), Some(part), "{got}");
    assert_eq!(a.cmd(&["GET", s0]), Value::Bulk(b"new".to_vec()));
    assert_eq!(stopped_partition(&a.cmd(&["DEL", s0, t0])), Some(part));
    assert_eq!(a.cmd(&["EXISTS", s0]), Value::Int(1));

    // In a transaction the refused command gets its error, as any command
    // that fails at run time; the others run.
    ok(a.cmd(&["MULTI"]));
    a.cmd(&["SET", s0, "in-exec"]);
    a.cmd(&["GET", t0]);
    a.cmd(&["GET", s0]);
    let Value::Array(items) = a.cmd(&["EXEC"]) else {
        panic!("EXEC")
    };
    assert_eq!(items[0], Value::Simple(b"OK".to_vec()));
    assert_eq!(stopped_partition(&items[1]), Some(part));
    assert_eq!(items[2], Value::Bulk(b"in-exec".to_vec()));

    // Commands over the whole keyspace need every partition: refused, so a
    // save never writes half-changed data.
    assert_eq!(stopped_partition(&a.cmd(&["DBSIZE"])), Some(part));
    // INFO still answers, counting the served partitions and naming the
    // stopped one.
    let Value::Bulk(info) = a.cmd(&["INFO", "everything"]) else {
        panic!("INFO")
    };
    let info = String::from_utf8_lossy(&info).into_owned();
    assert!(
        info.contains(&format!("\r\npetrel_stopped_partitions:{part}\r\n")),
        "{info}"
    );
    for section in ["# Memory", "# Stats", "# Keyspace", "# Server"] {
        assert!(info.contains(section), "{section}: {info}");
    }
    for cmd in [&["INFO", "keysizes"][..], &["MEMORY", "STATS"][..]] {
        let v = a.cmd(cmd);
        assert!(stopped_partition(&v).is_none(), "{cmd:?}: {v}");
    }
    // db0 counts the keys of the served partitions: exactly the served ones.
    let counted = info
        .lines()
        .find_map(|l| l.strip_prefix("db0:keys="))
        .and_then(|l| l.split(',').next())
        .and_then(|n| n.parse::<usize>().ok());
    assert_eq!(counted, Some(served.len()), "{info}");
    assert_eq!(stopped_partition(&a.cmd(&["SAVE"])), Some(part));
    assert_eq!(stopped_partition(&a.cmd(&["BGSAVE"])), Some(part));
    assert_eq!(stopped_partition(&a.cmd(&["FLUSHALL"])), Some(part));
    assert_eq!(a.cmd(&["GET", s0]), Value::Bulk(b"in-exec".to_vec()));

    // Other connections, new ones, and the cron go on; nothing else panics.
    let mut fresh = srv.raw();
    assert_eq!(fresh.cmd(&["GET", s0]), Value::Bulk(b"in-exec".to_vec()));
    ok(fresh.cmd(&["SET", s0, "v", "PX", "50"]));
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(fresh.cmd(&["EXISTS", s0]), Value::Int(0));
    let mut srv = srv;
    srv.assert_alive();
    let log = srv.log();
    assert_eq!(log.matches("Panic in thread").count(), 1, "{log}");
    assert_eq!(log.matches("is stopped").count(), 1, "{log}");
    assert!(!log.contains("exiting"), "{log}");
}

/// The death of a background thread is noticed: the process logs which
/// thread and exits (status 1) instead of running on without it.
#[test]
fn a_dead_background_thread_ends_the_process() {
    for (thread, line) in [
        ("cron", "The cron thread panicked"),
        (
            "worker",
            "ended unexpectedly (see the panic above): its clients",
        ),
        ("acceptor", "The acceptor thread ended unexpectedly"),
        ("lazyfree", "The lazy-free thread panicked"),
    ] {
        let mut srv = TestServer::start(&[("enable-debug-command", "yes")]).quiet();
        let mut a = srv.raw();
        ok(a.cmd(&["DEBUG", "PANIC-THREAD", thread]));
        if thread == "lazyfree" {
            // The thread panics when it is next handed something to free.
            ok(a.cmd(&["SET", "k", "v"]));
            ok(a.cmd(&["FLUSHALL", "ASYNC"]));
        }
        let status = srv
            .wait_exit(Duration::from_secs(10))
            .unwrap_or_else(|| panic!("{thread}: the server did not exit"));
        assert_eq!(status.code(), Some(1), "{thread}");
        let log = srv.log();
        assert!(
            log.contains(&format!("DEBUG PANIC-THREAD {thread}")),
            "{thread}: {log}"
        );
        assert!(log.contains(line), "{thread}: {log}");
    }
    let srv = TestServer::start(&[("enable-debug-command", "yes")]);
    let got = srv.raw().cmd(&["DEBUG", "PANIC-THREAD", "nosuch"]);
    assert_eq!(
        err_text(&got).as_deref(),
        Some("ERR PANIC-THREAD takes cron, worker, acceptor, lazyfree or bgsave-writer")
    );
}

/// The main thread sleeps until a watched thread ends (issue 27): with
/// several workers, the death of one is still noticed and ends the process,
/// and a SHUTDOWN still ends it cleanly.
#[test]
fn a_dead_worker_among_several_is_noticed_and_shutdown_still_ends() {
    let mut srv = TestServer::start(&[("enable-debug-command", "yes"), ("threads", "3")]).quiet();
    let mut conns: Vec<RawConn> = (0..6).map(|_| srv.raw()).collect();
    for c in &mut conns {
        assert_eq!(c.cmd(&["PING"]), Value::Simple(b"PONG".to_vec()));
    }
    ok(conns[0].cmd(&["DEBUG", "PANIC-THREAD", "worker"]));
    let status = srv
        .wait_exit(Duration::from_secs(10))
        .expect("the server did not exit after a worker died");
    assert_eq!(status.code(), Some(1));
    assert!(srv
        .log()
        .contains("ended unexpectedly (see the panic above): its clients"));

    let mut srv = TestServer::start(&[("threads", "3")]).quiet();
    let mut conns: Vec<RawConn> = (0..6).map(|_| srv.raw()).collect();
    for c in &mut conns {
        assert_eq!(c.cmd(&["PING"]), Value::Simple(b"PONG".to_vec()));
    }
    conns[0].send_cmd(&["SHUTDOWN", "NOSAVE"]);
    let status = srv
        .wait_exit(Duration::from_secs(10))
        .expect("the server did not exit after SHUTDOWN");
    assert_eq!(status.code(), Some(0));
    assert!(!srv.log().contains("ended unexpectedly"), "{}", srv.log());
}

/// A BGSAVE whose writer thread panics fails like a save with an I/O
/// error: logged, `rdb_last_bgsave_status:err`, no temporary file left,
/// and the next BGSAVE works.
#[test]
fn a_panicking_bgsave_writer_fails_that_save_only() {
    let mut srv = TestServer::start(&[("enable-debug-command", "yes")]);
    let mut a = srv.raw();
    for i in 0..100 {
        ok(a.cmd(&["SET", &format!("k{i}"), "v"]));
    }
    ok(a.cmd(&["DEBUG", "PANIC-THREAD", "bgsave-writer"]));
    let info = |a: &mut RawConn, field: &str| -> String {
        let Value::Bulk(b) = a.cmd(&["INFO", "persistence"]) else {
            panic!("INFO")
        };
        String::from_utf8_lossy(&b)
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{field}:")).map(String::from))
            .unwrap_or_default()
    };
    assert!(matches!(a.cmd(&["BGSAVE"]), Value::Simple(_)));
    assert!(wait_until(Duration::from_secs(10), || info(
        &mut a,
        "rdb_bgsave_in_progress"
    ) == "0"));
    assert_eq!(info(&mut a, "rdb_last_bgsave_status"), "err");
    assert!(srv.wait_log("writer thread panicked", Duration::from_secs(5)));
    assert!(
        srv.log().contains("Background saving error"),
        "{}",
        srv.log()
    );
    let temps: Vec<_> = std::fs::read_dir(srv.dir())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("temp-"))
        .collect();
    assert!(temps.is_empty(), "{temps:?}");
    // The next save works and the server goes on.
    assert!(matches!(a.cmd(&["BGSAVE"]), Value::Simple(_)));
    assert!(wait_until(Duration::from_secs(10), || info(
        &mut a,
        "rdb_bgsave_in_progress"
    ) == "0"));
    assert_eq!(info(&mut a, "rdb_last_bgsave_status"), "ok");
    assert!(srv.dir().join("dump.rdb").exists());
    srv.assert_alive();
}
