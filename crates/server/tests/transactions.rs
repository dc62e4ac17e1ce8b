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

/// WATCH is invalidated exactly when a write changes the watched key, as in
/// Redis: every write command once in a changing form and, where it can be
/// one, in a form that changes nothing (SADD of a present member, DEL of a
/// missing key, SET NX on an existing key, ...), which must leave the WATCH
/// alone. Each block: fresh data, WATCH, the command, then an EXEC that is
/// nil when the WATCH was invalidated.
#[test]
fn diff_watch_is_touched_only_by_real_changes() {
    diff_text(
        "watch_only_real_changes",
        r#"
FLUSHALL
SET k 1
WATCH k
SET k v
MULTI
PING
EXEC
FLUSHALL
SET k 1
WATCH k
SET k v NX
MULTI
PING
EXEC
FLUSHALL
WATCH k
SET k v XX
MULTI
PING
EXEC
FLUSHALL
SET k 1
WATCH k
APPEND k x
MULTI
PING
EXEC
FLUSHALL
SET k 1
WATCH k
INCR k
MULTI
PING
EXEC
FLUSHALL
SET k 1
WATCH k
DECRBY k 2
MULTI
PING
EXEC
FLUSHALL
SET k 1
WATCH k
INCRBYFLOAT k 1.5
MULTI
PING
EXEC
FLUSHALL
WATCH k
GETDEL k
MULTI
PING
EXEC
FLUSHALL
SET k 1
WATCH k
GETDEL k
MULTI
PING
EXEC
FLUSHALL
SET k 1
WATCH k
GETEX k
MULTI
PING
EXEC
FLUSHALL
SET k 1
WATCH k
GETEX k EX 100
MULTI
PING
EXEC
FLUSHALL
SET k 1
WATCH k
GETEX k PERSIST
MULTI
PING
EXEC
FLUSHALL
SET k 1 EX 100
WATCH k
GETEX k PERSIST
MULTI
PING
EXEC
FLUSHALL
SET k 1
WATCH k
GETSET k 2
MULTI
PING
EXEC
FLUSHALL
WATCH k
MSET k 1 j 2
MULTI
PING
EXEC
FLUSHALL
SET k 1
WATCH k
MSETNX k 1 j 2
MULTI
PING
EXEC
FLUSHALL
WATCH k
PSETEX k 1000 v
MULTI
PING
EXEC
FLUSHALL
WATCH k
SETEX k 10 v
MULTI
PING
EXEC
FLUSHALL
SET k 1
WATCH k
SETNX k 2
MULTI
PING
EXEC
FLUSHALL
WATCH k
SETNX k 2
MULTI
PING
EXEC
FLUSHALL
SET k 1
WATCH k
SETRANGE k 0 ""
MULTI
PING
EXEC
FLUSHALL
SET k 1
WATCH k
SETRANGE k 1 x
MULTI
PING
EXEC
FLUSHALL
WATCH k
SETRANGE k 0 ""
MULTI
PING
EXEC
FLUSHALL
WATCH k
SETBIT k 1 0
MULTI
PING
EXEC
FLUSHALL
SET k 1
WATCH k
BITFIELD k GET u8 0
MULTI
PING
EXEC
FLUSHALL
SET k 1
WATCH k
BITFIELD k SET u8 0 1
MULTI
PING
EXEC
FLUSHALL
WATCH k
BITFIELD k INCRBY u8 0 0
MULTI
PING
EXEC
FLUSHALL
SET a x
WATCH d
BITOP AND d a
MULTI
PING
EXEC
FLUSHALL
WATCH d
BITOP AND d missing
MULTI
PING
EXEC
FLUSHALL
SET d x
WATCH d
BITOP AND d missing
MULTI
PING
EXEC
FLUSHALL
WATCH k
PFADD k a
MULTI
PING
EXEC
FLUSHALL
PFADD k a
WATCH k
PFADD k a
MULTI
PING
EXEC
FLUSHALL
PFADD k a
WATCH k
PFCOUNT k
MULTI
PING
EXEC
FLUSHALL
PFADD k a
PFCOUNT k
WATCH k
PFCOUNT k
MULTI
PING
EXEC
FLUSHALL
PFADD a x
WATCH d
PFMERGE d a
MULTI
PING
EXEC
FLUSHALL
WATCH k
DEL k
MULTI
PING
EXEC
FLUSHALL
SET k 1
WATCH k
DEL k
MULTI
PING
EXEC
FLUSHALL
SET k 1
WATCH k
UNLINK k j
MULTI
PING
EXEC
FLUSHALL
WATCH k
UNLINK k
MULTI
PING
EXEC
FLUSHALL
SET k 1
WATCH k
EXPIRE k 100
MULTI
PING
EXEC
FLUSHALL
WATCH k
EXPIRE k 100
MULTI
PING
EXEC
FLUSHALL
SET k 1 EX 50
WATCH k
EXPIRE k 100 NX
MULTI
PING
EXEC
FLUSHALL
SET k 1
WATCH k
EXPIRE k 100 XX
MULTI
PING
EXEC
FLUSHALL
SET k 1
WATCH k
PEXPIRE k 100000
MULTI
PING
EXEC
FLUSHALL
SET k 1
WATCH k
EXPIREAT k 99999999999
MULTI
PING
EXEC
FLUSHALL
SET k 1
WATCH k
PEXPIREAT k 99999999999999
MULTI
PING
EXEC
FLUSHALL
SET k 1
WATCH k
PERSIST k
MULTI
PING
EXEC
FLUSHALL
SET k 1 EX 100
WATCH k
PERSIST k
MULTI
PING
EXEC
FLUSHALL
SET k 1
WATCH k
EXPIRE k -1
MULTI
PING
EXEC
FLUSHALL
SET k 1
WATCH k
RENAME k k2
MULTI
PING
EXEC
FLUSHALL
SET k 1
WATCH k2
RENAME k k2
MULTI
PING
EXEC
FLUSHALL
SET k 1
SET k2 1
WATCH k2
RENAMENX k k2
MULTI
PING
EXEC
FLUSHALL
SET k 1
SET k2 1
WATCH k
RENAMENX k k2
MULTI
PING
EXEC
FLUSHALL
SET k 1
WATCH k3
COPY k k3
MULTI
PING
EXEC
FLUSHALL
SET k 1
SET k3 2
WATCH k3
COPY k k3
MULTI
PING
EXEC
FLUSHALL
SET k 1
SET k3 2
WATCH k3
COPY k k3 REPLACE
MULTI
PING
EXEC
FLUSHALL
SET k 1
WATCH k
MOVE k 1
MULTI
PING
EXEC
FLUSHALL
WATCH k
MOVE k 1
MULTI
PING
EXEC
FLUSHALL
RPUSH l 3 1 2
WATCH d
SORT l STORE d
MULTI
PING
EXEC
FLUSHALL
WATCH d
SORT l STORE d
MULTI
PING
EXEC
FLUSHALL
SET d 1
WATCH d
SORT l STORE d
MULTI
PING
EXEC
FLUSHALL
WATCH h
HSET h f v
MULTI
PING
EXEC
FLUSHALL
HSET h f v
WATCH h
HSET h f v
MULTI
PING
EXEC
FLUSHALL
HSET h f v
WATCH h
HSETNX h f v
MULTI
PING
EXEC
FLUSHALL
HSET h f v
WATCH h
HDEL h zz
MULTI
PING
EXEC
FLUSHALL
HSET h f v
WATCH h
HDEL h f
MULTI
PING
EXEC
FLUSHALL
WATCH h
HINCRBY h f 1
MULTI
PING
EXEC
FLUSHALL
WATCH h
HINCRBYFLOAT h f 1.5
MULTI
PING
EXEC
FLUSHALL
WATCH h
HMSET h f v
MULTI
PING
EXEC
FLUSHALL
WATCH l
LPUSH l a
MULTI
PING
EXEC
FLUSHALL
WATCH l
LPUSHX l a
MULTI
PING
EXEC
FLUSHALL
RPUSH l a
WATCH l
RPUSHX l b
MULTI
PING
EXEC
FLUSHALL
RPUSH l a
WATCH l
LINSERT l BEFORE zz b
MULTI
PING
EXEC
FLUSHALL
RPUSH l a
WATCH l
LINSERT l BEFORE a b
MULTI
PING
EXEC
FLUSHALL
WATCH l
LPOP l
MULTI
PING
EXEC
FLUSHALL
RPUSH l a b
WATCH l
RPOP l
MULTI
PING
EXEC
FLUSHALL
RPUSH l a b
WATCH l
LPOP l 0
MULTI
PING
EXEC
FLUSHALL
RPUSH l a
WATCH l
LREM l 0 zz
MULTI
PING
EXEC
FLUSHALL
RPUSH l a
WATCH l
LREM l 0 a
MULTI
PING
EXEC
FLUSHALL
RPUSH l a
WATCH l
LSET l 0 b
MULTI
PING
EXEC
FLUSHALL
RPUSH l a
WATCH l
LTRIM l 0 -1
MULTI
PING
EXEC
FLUSHALL
WATCH l
LTRIM l 0 -1
MULTI
PING
EXEC
FLUSHALL
RPUSH l a
WATCH d
LMOVE l d LEFT RIGHT
MULTI
PING
EXEC
FLUSHALL
WATCH d
RPOPLPUSH l d
MULTI
PING
EXEC
FLUSHALL
RPUSH l a
WATCH l
LMPOP 1 l LEFT
MULTI
PING
EXEC
FLUSHALL
WATCH l
LMPOP 1 l LEFT
MULTI
PING
EXEC
FLUSHALL
SADD s a
WATCH s
SADD s a
MULTI
PING
EXEC
FLUSHALL
WATCH s
SADD s a
MULTI
PING
EXEC
FLUSHALL
SADD s a
WATCH s
SREM s zz
MULTI
PING
EXEC
FLUSHALL
SADD s a
WATCH s
SREM s a
MULTI
PING
EXEC
FLUSHALL
SADD s a
WATCH d
SMOVE s d zz
MULTI
PING
EXEC
FLUSHALL
SADD s a
WATCH d
SMOVE s d a
MULTI
PING
EXEC
FLUSHALL
WATCH s
SPOP s
MULTI
PING
EXEC
FLUSHALL
SADD s a
WATCH s
SPOP s 0
MULTI
PING
EXEC
FLUSHALL
SADD s a
WATCH s
SPOP s
MULTI
PING
EXEC
FLUSHALL
SADD s a
WATCH d
SINTERSTORE d s
MULTI
PING
EXEC
FLUSHALL
WATCH d
SUNIONSTORE d s
MULTI
PING
EXEC
FLUSHALL
SADD d x
WATCH d
SDIFFSTORE d s
MULTI
PING
EXEC
FLUSHALL
ZADD z 1 a
WATCH z
ZADD z 1 a
MULTI
PING
EXEC
FLUSHALL
ZADD z 1 a
WATCH z
ZADD z 2 a
MULTI
PING
EXEC
FLUSHALL
ZADD z 1 a
WATCH z
ZADD z XX 1 b
MULTI
PING
EXEC
FLUSHALL
WATCH z
ZADD z INCR 1 a
MULTI
PING
EXEC
FLUSHALL
WATCH z
ZINCRBY z 1 a
MULTI
PING
EXEC
FLUSHALL
ZADD z 1 a
WATCH z
ZREM z zz
MULTI
PING
EXEC
FLUSHALL
ZADD z 1 a
WATCH z
ZREMRANGEBYSCORE z 5 6
MULTI
PING
EXEC
FLUSHALL
ZADD z 1 a
WATCH z
ZREMRANGEBYRANK z 0 0
MULTI
PING
EXEC
FLUSHALL
ZADD z 1 a
WATCH z
ZREMRANGEBYLEX z [b [c
MULTI
PING
EXEC
FLUSHALL
WATCH z
ZPOPMIN z
MULTI
PING
EXEC
FLUSHALL
ZADD z 1 a
WATCH z
ZPOPMAX z
MULTI
PING
EXEC
FLUSHALL
ZADD z 1 a
WATCH z
ZMPOP 1 z MIN
MULTI
PING
EXEC
FLUSHALL
ZADD z 1 a
WATCH d
ZRANGESTORE d z 0 -1
MULTI
PING
EXEC
FLUSHALL
WATCH d
ZRANGESTORE d z 0 -1
MULTI
PING
EXEC
FLUSHALL
ZADD z 1 a
WATCH d
ZUNIONSTORE d 1 z
MULTI
PING
EXEC
FLUSHALL
ZADD d 1 a
WATCH d
ZINTERSTORE d 1 z
MULTI
PING
EXEC
FLUSHALL
WATCH d
ZDIFFSTORE d 1 z
MULTI
PING
EXEC
FLUSHALL
RPUSH l a
WATCH l
BLPOP l 1
MULTI
PING
EXEC
FLUSHALL
RPUSH l a
WATCH l
BRPOP l 1
MULTI
PING
EXEC
FLUSHALL
RPUSH l a
WATCH d
BLMOVE l d LEFT LEFT 1
MULTI
PING
EXEC
FLUSHALL
RPUSH l a
WATCH d
BRPOPLPUSH l d 1
MULTI
PING
EXEC
FLUSHALL
RPUSH l a
WATCH l
BLMPOP 1 1 l LEFT
MULTI
PING
EXEC
FLUSHALL
ZADD z 1 a
WATCH z
BZPOPMIN z 1
MULTI
PING
EXEC
FLUSHALL
ZADD z 1 a
WATCH z
BZMPOP 1 1 z MAX
MULTI
PING
EXEC
FLUSHALL
SET k 1
WATCH k
FLUSHDB
MULTI
PING
EXEC
FLUSHALL
WATCH k
FLUSHALL
MULTI
PING
EXEC
FLUSHALL
SELECT 1
SET k 1
SELECT 0
WATCH k
SWAPDB 0 1
MULTI
PING
EXEC
FLUSHALL
SELECT 1
SET k 1
SELECT 0
WATCH k
FLUSHALL
MULTI
PING
EXEC
FLUSHALL
SET k 1
WATCH k
FLUSHALL ASYNC
MULTI
PING
EXEC
FLUSHALL
WATCH k
SWAPDB 0 1
MULTI
PING
EXEC
FLUSHALL
SET k 1
WATCH k
SWAPDB 1 2
MULTI
PING
EXEC
FLUSHALL
SET k 1
SELECT 1
WATCH k
FLUSHDB
MULTI
PING
EXEC
FLUSHALL
SET k 1
WATCH k
SWAPDB 0 0
MULTI
PING
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
