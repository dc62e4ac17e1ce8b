//! MIGRATE between real processes in standalone mode: petrel -> petrel,
//! petrel -> redis-server and redis-server -> petrel, with KEYS, COPY,
//! REPLACE, AUTH/AUTH2, a destination database, TTLs and every value
//! type; the errors a client sees (the target's BUSYKEY passed through,
//! NOKEY, IOERR on a closed port and on a silent target); the cached
//! connection (INFO's `migrate_cached_sockets`, SELECT sent again only
//! when the database changes); and the deletion reaching a replica as DEL.
//! Tests that need redis-server skip without it unless
//! PETREL_REQUIRE_REDIS=1.

mod common;
use common::*;

use std::time::Instant;

fn ok() -> Value {
    Value::Simple(b"OK".to_vec())
}

fn bulk(s: &str) -> Value {
    Value::Bulk(s.as_bytes().to_vec())
}

fn int(s: &Server, args: &[&str]) -> i64 {
    match s.raw().cmd(args) {
        Value::Int(n) => n,
        v => panic!("{args:?}: {v:?}"),
    }
}

/// Waits (a deadline, not a timing claim) for `f`.
fn eventually(what: &str, mut f: impl FnMut() -> bool) {
    let end = Instant::now() + Duration::from_secs(30);
    while !f() {
        assert!(Instant::now() < end, "{what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Every kind of value, written on `src`.
fn fill(src: &Server) {
    let mut c = src.raw();
    for cmd in [
        &["SET", "s", "hello"][..],
        &["SET", "n", "12345"],
        &["RPUSH", "l", "a", "b", "c"],
        &["HSET", "h", "f1", "v1", "f2", "v2"],
        &["SADD", "set", "x", "y", "z"],
        &["ZADD", "z", "1", "a", "2.5", "b"],
        &["XADD", "x", "1-1", "f", "v"],
        &["SET", "ttl", "v", "PX", "100000"],
    ] {
        let v = c.cmd(cmd);
        assert!(!matches!(v, Value::Error(_)), "{cmd:?}: {v:?}");
    }
}

/// The values `fill` wrote, read on `s` (DUMP payloads compare the
/// values byte for byte: same RDB encoding on both sides; a hash-table
/// set's element order is its table's, so the set is compared sorted).
fn dumps(s: &Server, keys: &[&str]) -> Vec<Value> {
    let mut c = s.raw();
    keys.iter()
        .map(|k| {
            if *k != "set" {
                return c.cmd(&["DUMP", k]);
            }
            match c.cmd(&["SMEMBERS", k]) {
                Value::Array(mut a) | Value::Set(mut a) => {
                    a.sort_by_key(|v| format!("{v:?}"));
                    Value::Array(a)
                }
                v => v,
            }
        })
        .collect()
}

const KEYS: &[&str] = &["s", "n", "l", "h", "set", "z", "x", "ttl"];

/// MIGRATE of every type with KEYS from `src` to `dst`: the values arrive
/// unchanged, the TTL is kept, the source loses them.
fn migrate_all_types(src: &Server, dst: &Server) {
    fill(src);
    let before = dumps(src, KEYS);
    let mut args = vec![
        "MIGRATE".to_string(),
        "127.0.0.1".into(),
        dst.port().to_string(),
        String::new(),
        "0".into(),
        "5000".into(),
        "KEYS".into(),
    ];
    args.extend(KEYS.iter().map(|k| k.to_string()));
    args.push("missing".into());
    assert_eq!(src.raw().cmd(&args), ok());
    assert_eq!(dumps(dst, KEYS), before);
    let pttl = int(dst, &["PTTL", "ttl"]);
    assert!(pttl > 0 && pttl <= 100000, "{pttl}");
    assert_eq!(int(dst, &["PTTL", "s"]), -1);
    assert_eq!(int(src, &["DBSIZE"]), 0);
}

fn migrate_options(src: &Server, dst: &Server) {
    let port = dst.port().to_string();
    let mut s = src.raw();
    let mut d = dst.raw();
    let m = |key: &str, db: &str, more: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = ["MIGRATE", "127.0.0.1", &port, key, db, "5000"]
            .iter()
            .map(|a| a.to_string())
            .collect();
        v.extend(more.iter().map(|a| a.to_string()));
        v
    };
    // NOKEY: nothing to migrate is no error.
    assert_eq!(
        s.cmd(&m("nosuch", "0", &[])),
        Value::Simple(b"NOKEY".to_vec())
    );
    // COPY keeps the source's key.
    s.cmd(&["SET", "k", "v1"]);
    assert_eq!(s.cmd(&m("k", "0", &["COPY"])), ok());
    assert_eq!(s.cmd(&["GET", "k"]), bulk("v1"));
    assert_eq!(d.cmd(&["GET", "k"]), bulk("v1"));
    // The target's BUSYKEY is passed through, and nothing is deleted.
    s.cmd(&["SET", "k", "v2"]);
    assert_eq!(
        s.cmd(&m("k", "0", &[])),
        Value::Error(
            b"ERR Target instance replied with error: BUSYKEY Target key name already exists."
                .to_vec()
        )
    );
    assert_eq!(s.cmd(&["GET", "k"]), bulk("v2"));
    // REPLACE overwrites it.
    assert_eq!(s.cmd(&m("k", "0", &["REPLACE"])), ok());
    assert_eq!(s.cmd(&["EXISTS", "k"]), Value::Int(0));
    assert_eq!(d.cmd(&["GET", "k"]), bulk("v2"));
    // Another database, then back to 0: SELECT follows the changes.
    s.cmd(&["SET", "k3", "in3"]);
    assert_eq!(s.cmd(&m("k3", "3", &[])), ok());
    s.cmd(&["SET", "k0", "in0"]);
    assert_eq!(s.cmd(&m("k0", "0", &[])), ok());
    s.cmd(&["SET", "k3b", "in3"]);
    assert_eq!(s.cmd(&m("k3b", "3", &[])), ok());
    assert_eq!(d.cmd(&["GET", "k0"]), bulk("in0"));
    d.cmd(&["SELECT", "3"]);
    assert_eq!(d.cmd(&["GET", "k3"]), bulk("in3"));
    assert_eq!(d.cmd(&["GET", "k3b"]), bulk("in3"));
    assert_eq!(d.cmd(&["EXISTS", "k0"]), Value::Int(0));
    d.cmd(&["SELECT", "0"]);
    // A database the target does not have.
    s.cmd(&["SET", "kx", "v"]);
    assert_eq!(
        s.cmd(&m("kx", "99", &[])),
        Value::Error(
            b"ERR Target instance replied with error: ERR DB index is out of range".to_vec()
        )
    );
    assert_eq!(s.cmd(&["GET", "kx"]), bulk("v"));
    // KEYS needs the empty key argument.
    assert_eq!(
        s.cmd(&m("kx", "0", &["KEYS", "kx"])),
        Value::Error(
            b"ERR When using MIGRATE KEYS option, the key argument must be set to the empty string"
                .to_vec()
        )
    );
    // One key busy among several: the others move, the error is reported.
    s.cmd(&["SET", "{t}a", "1"]);
    s.cmd(&["SET", "{t}b", "2"]);
    d.cmd(&["SET", "{t}b", "old"]);
    assert_eq!(
        s.cmd(&m("", "0", &["KEYS", "{t}a", "{t}b"])),
        Value::Error(
            b"ERR Target instance replied with error: BUSYKEY Target key name already exists."
                .to_vec()
        )
    );
    assert_eq!(s.cmd(&["EXISTS", "{t}a", "{t}b"]), Value::Int(1));
    assert_eq!(d.cmd(&["GET", "{t}a"]), bulk("1"));
    assert_eq!(d.cmd(&["GET", "{t}b"]), bulk("old"));
}

fn migrate_auth(src: &Server, dst_kind: Kind) {
    let dst = Server::start_opts(dst_kind, Opts::new(&[("requirepass", "sesame")]));
    let port = dst.port().to_string();
    let mut s = src.raw();
    s.cmd(&["SET", "a", "1"]);
    let m = |more: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = ["MIGRATE", "127.0.0.1", &port, "a", "0", "5000"]
            .iter()
            .map(|a| a.to_string())
            .collect();
        v.extend(more.iter().map(|a| a.to_string()));
        v
    };
    assert_eq!(
        s.cmd(&m(&[])),
        Value::Error(
            b"ERR Target instance replied with error: NOAUTH Authentication required.".to_vec()
        )
    );
    assert_eq!(
        s.cmd(&m(&["AUTH", "wrong"])),
        Value::Error(
            b"ERR Target instance replied with error: WRONGPASS invalid username-password pair or user is disabled."
                .to_vec()
        )
    );
    assert_eq!(s.cmd(&["GET", "a"]), bulk("1"));
    assert_eq!(s.cmd(&m(&["COPY", "AUTH", "sesame"])), ok());
    assert_eq!(s.cmd(&m(&["REPLACE", "AUTH2", "default", "sesame"])), ok());
    assert_eq!(s.cmd(&["EXISTS", "a"]), Value::Int(0));
    let mut d = dst.client();
    let v: String = redis::cmd("GET").arg("a").query(&mut d).unwrap();
    assert_eq!(v, "1");
}

#[test]
fn petrel_to_petrel() {
    let src = Server::start(&[]);
    let dst = Server::start(&[]);
    migrate_all_types(&src, &dst);
    migrate_options(&src, &dst);
    migrate_auth(&src, Kind::Petrel);
    // The connection to the target stays cached.
    let info = src.raw().cmd(&["INFO", "stats"]);
    let Value::Bulk(info) = info else { panic!() };
    let info = String::from_utf8_lossy(&info).into_owned();
    assert!(info.contains("migrate_cached_sockets:2\r\n"), "{info}");
}

#[test]
fn petrel_to_redis() {
    if !redis_available() {
        return;
    }
    let src = Server::start(&[]);
    let dst = Server::start_opts(Kind::Redis, Opts::default());
    migrate_all_types(&src, &dst);
    migrate_options(&src, &dst);
    migrate_auth(&src, Kind::Redis);
}

#[test]
fn redis_to_petrel() {
    if !redis_available() {
        return;
    }
    let src = Server::start_opts(Kind::Redis, Opts::default());
    let dst = Server::start(&[]);
    migrate_all_types(&src, &dst);
    migrate_options(&src, &dst);
    migrate_auth(&src, Kind::Petrel);
}

/// IOERR when the host does not resolve, when nothing listens (found out
/// when writing, as redis-server does), and when the target never answers.
#[test]
fn io_errors() {
    let src = Server::start(&[]);
    let mut s = src.raw();
    s.cmd(&["SET", "k", "v"]);
    assert_eq!(
        s.cmd(&["MIGRATE", "no.such.host.invalid", "1", "k", "0", "1000"]),
        Value::Error(b"IOERR error or timeout connecting to the client".to_vec())
    );
    // Port 1: nothing of the suite listens on a privileged port (an
    // ephemeral one picked as free may be taken by a parallel test).
    let closed = "1".to_string();
    assert_eq!(
        s.cmd(&["MIGRATE", "127.0.0.1", &closed, "k", "0", "1000"]),
        Value::Error(b"IOERR error or timeout writing to target instance".to_vec())
    );
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port().to_string();
    assert_eq!(
        s.cmd(&["MIGRATE", "127.0.0.1", &port, "k", "0", "200"]),
        Value::Error(b"IOERR error or timeout reading to target instance".to_vec())
    );
    // The key stays, and the server serves meanwhile and after.
    assert_eq!(s.cmd(&["GET", "k"]), bulk("v"));
    drop(silent);
}

/// A MIGRATE waiting on a silent target holds back only its keys'
/// partition: another client's command on a key of another partition is
/// answered before the MIGRATE's reply comes (the server has two worker
/// threads; a connection on the MIGRATE's own worker waits, as every
/// client of Redis does, so several are tried).
#[test]
fn a_waiting_migrate_does_not_stop_other_clients() {
    let src = Server::start(&[]);
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port().to_string();
    let mut s = src.raw();
    // "b" is in slot 3300, "a" in slot 15495: different partitions.
    s.cmd(&["SET", "b", "v"]);
    s.send_cmd(&["MIGRATE", "127.0.0.1", &port, "b", "0", "5000"]);
    // The target has the connection: the MIGRATE is waiting for it.
    let (_conn, _) = silent.accept().unwrap();
    let mut served = false;
    let mut tried = Vec::new();
    for _ in 0..4 {
        let mut c = src.raw();
        c.timeout = Duration::from_millis(1500);
        if let Reply::Value(v) = c.try_cmd(&["SET", "a", "x"]) {
            assert_eq!(v, ok());
            served = true;
            break;
        }
        tried.push(c);
    }
    assert!(served, "no client was served while MIGRATE waited");
    s.timeout = Duration::from_secs(10);
    assert_eq!(
        s.read_reply(),
        Value::Error(b"IOERR error or timeout reading to target instance".to_vec())
    );
}

/// The source's replica loses the migrated keys: MIGRATE reaches it as DEL.
#[test]
fn migrated_keys_are_deleted_on_the_replica() {
    let src = Server::start(&[]);
    let dst = Server::start(&[]);
    let rep = Server::start(&[("replicaof", &format!("127.0.0.1 {}", src.port()))]);
    let mut s = src.raw();
    s.cmd(&["SET", "a", "1"]);
    s.cmd(&["SET", "b", "2"]);
    s.cmd(&["SET", "c", "3"]);
    eventually("replica synced", || int(&rep, &["DBSIZE"]) == 3);
    let port = dst.port().to_string();
    assert_eq!(
        s.cmd(&[
            "MIGRATE",
            "127.0.0.1",
            &port,
            "",
            "0",
            "5000",
            "KEYS",
            "a",
            "b"
        ]),
        ok()
    );
    assert_eq!(
        s.cmd(&["MIGRATE", "127.0.0.1", &port, "c", "0", "5000", "COPY"]),
        ok()
    );
    eventually("DEL reached the replica", || {
        int(&rep, &["EXISTS", "a", "b"]) == 0
    });
    assert_eq!(int(&rep, &["EXISTS", "c"]), 1);
    assert_eq!(int(&dst, &["EXISTS", "a", "b", "c"]), 3);
}
