//! MULTI/EXEC/DISCARD/WATCH: differential scripts against redis-server,
//! WATCH invalidation from other clients and threads, and a concurrent
//! atomicity stress test.

mod common;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::*;

#[test]
fn diff_multi_exec() {
    diff_text(
        "multi_exec",
        r#"
EXEC
DISCARD
MULTI
SET a 1
INCR a
INCR a
GET a
EXEC
MULTI
SET s notanumber
INCR s
GET s
EXEC
MULTI
MULTI
WATCH a
SET a 2
GET
NOSUCHCOMMAND x
EXEC
GET a
MULTI
SET a 3
DISCARD
GET a
WATCH a
SET a 4
MULTI
GET a
EXEC
WATCH a
MULTI
GET a
EXEC
WATCH a b c
UNWATCH
SET a 5
MULTI
GET a
EXEC
MULTI
EXEC
"#,
    );
}

fn exec_after<F: FnOnce(&mut redis::Connection)>(
    s: &TestServer,
    setup: &[&[&str]],
    interfere: F,
) -> redis::Value {
    let mut a = s.client();
    let mut b = s.client();
    for cmd in setup {
        let _: redis::Value = rcmd(cmd).query(&mut a).unwrap();
    }
    let _: () = rcmd(&["WATCH", "k"]).query(&mut a).unwrap();
    interfere(&mut b);
    let _: () = rcmd(&["MULTI"]).query(&mut a).unwrap();
    let _: redis::Value = rcmd(&["SET", "k", "from-tx"]).query(&mut a).unwrap();
    rcmd(&["EXEC"]).query(&mut a).unwrap()
}

#[test]
fn watch_is_invalidated_by_other_clients_and_whole_db_commands() {
    let s = TestServer::start(&[("threads", "2")]);
    let aborted = redis::Value::Nil;
    type Interference = Box<dyn Fn(&mut redis::Connection)>;
    let cases: Vec<(&str, Interference)> = vec![
        (
            "SET by another client",
            Box::new(|b| rcmd(&["SET", "k", "x"]).query::<()>(b).unwrap()),
        ),
        (
            "DEL by another client",
            Box::new(|b| rcmd(&["DEL", "k"]).query::<()>(b).unwrap()),
        ),
        (
            "FLUSHDB",
            Box::new(|b| rcmd(&["FLUSHDB"]).query::<()>(b).unwrap()),
        ),
        (
            "FLUSHALL",
            Box::new(|b| rcmd(&["FLUSHALL"]).query::<()>(b).unwrap()),
        ),
        (
            "SWAPDB",
            Box::new(|b| rcmd(&["SWAPDB", "0", "1"]).query::<()>(b).unwrap()),
        ),
        (
            "RENAME onto the key",
            Box::new(|b| {
                rcmd(&["SET", "other", "v"]).query::<()>(b).unwrap();
                rcmd(&["RENAME", "other", "k"]).query::<()>(b).unwrap()
            }),
        ),
    ];
    for (what, f) in cases {
        let r = exec_after(&s, &[&["FLUSHALL"], &["SET", "k", "v"]], f);
        assert_eq!(r, aborted, "EXEC should abort after {what}");
    }
    // Reads by others leave the transaction alone.
    let r = exec_after(&s, &[&["FLUSHALL"], &["SET", "k", "v"]], |b| {
        rcmd(&["GET", "k"]).query::<String>(b).unwrap();
    });
    assert_ne!(r, aborted);
}

#[test]
fn watch_of_a_key_that_expires_aborts() {
    let s = TestServer::start(&[]);
    let r = exec_after(&s, &[&["SET", "k", "v", "PX", "100"]], |_| {
        std::thread::sleep(Duration::from_millis(200))
    });
    assert_eq!(r, redis::Value::Nil);
}

/// Writers move amounts between accounts in MULTI/EXEC while readers check
/// that the total never changes, on a server with two worker threads. The
/// accounts hash to different slots, hence different partitions.
#[test]
fn exec_is_atomic_across_partitions_and_threads() {
    const ACCOUNTS: usize = 16;
    const TOTAL: i64 = 1000 * ACCOUNTS as i64;
    let s = TestServer::start(&[("threads", "2")]);
    let keys: Vec<String> = (0..ACCOUNTS).map(|i| format!("account:{i}")).collect();
    {
        let mut c = s.client();
        for k in &keys {
            let _: () = rcmd(&["SET", k, "1000"]).query(&mut c).unwrap();
        }
    }
    let stop = Arc::new(AtomicBool::new(false));
    let transfers = Arc::new(AtomicU64::new(0));
    let mut handles = Vec::new();
    for w in 0..4u64 {
        let mut c = s.client();
        let keys = keys.clone();
        let stop = stop.clone();
        let transfers = transfers.clone();
        handles.push(std::thread::spawn(move || {
            let mut x = w.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            while !stop.load(Ordering::Relaxed) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let from = &keys[(x % ACCOUNTS as u64) as usize];
                let to = &keys[((x >> 20) % ACCOUNTS as u64) as usize];
                let amount = (x >> 40) % 50;
                let r: Vec<i64> = redis::pipe()
                    .atomic()
                    .cmd("DECRBY")
                    .arg(from)
                    .arg(amount)
                    .cmd("INCRBY")
                    .arg(to)
                    .arg(amount)
                    .query(&mut c)
                    .unwrap();
                assert_eq!(r.len(), 2);
                transfers.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    let mut checks = 0u64;
    let mut readers = Vec::new();
    for _ in 0..2 {
        let mut c = s.client();
        let keys = keys.clone();
        let stop = stop.clone();
        readers.push(std::thread::spawn(move || {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                // MGET is itself atomic across partitions...
                let vals: Vec<i64> = rcmd(&["MGET"]).arg(&keys).query(&mut c).unwrap();
                assert_eq!(
                    vals.iter().sum::<i64>(),
                    TOTAL,
                    "MGET saw a transfer half applied"
                );
                // ...and so is a read-only transaction.
                let mut p = redis::pipe();
                p.atomic();
                for k in &keys {
                    p.cmd("GET").arg(k);
                }
                let vals: Vec<i64> = p.query(&mut c).unwrap();
                assert_eq!(
                    vals.iter().sum::<i64>(),
                    TOTAL,
                    "EXEC of GETs saw a transfer half applied"
                );
                n += 2;
            }
            n
        }));
    }
    std::thread::sleep(Duration::from_secs(3));
    stop.store(true, Ordering::Relaxed);
    for h in handles {
        h.join().unwrap();
    }
    for r in readers {
        checks += r.join().unwrap();
    }
    let moved = transfers.load(Ordering::Relaxed);
    assert!(
        moved > 1000 && checks > 1000,
        "too little concurrency to mean anything: {moved} transfers, {checks} checks"
    );
    eprintln!("atomicity: {moved} transfers, {checks} consistent sums");
}

#[test]
fn client_info_inside_exec_shows_the_transaction() {
    let s = TestServer::start(&[]);
    let mut c = s.raw();
    c.cmd(&["MULTI"]);
    c.cmd(&["SET", "a", "1"]);
    c.cmd(&["CLIENT", "INFO"]);
    let r = format!("{}", c.cmd(&["EXEC"]));
    assert!(r.contains("flags=x ") && r.contains(" multi=2 "), "{r}");
    let after = format!("{}", c.cmd(&["CLIENT", "INFO"]));
    assert!(
        after.contains("flags=N ") && after.contains(" multi=-1 "),
        "{after}"
    );
}
