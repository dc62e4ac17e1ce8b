//! On a replica, the master client sees keys whose TTL passed on the
//! replica's clock as present (Redis 7.0's `expireIfNeeded`), while the
//! replica's other clients see them as missing (issue 21).
//!
//! The master is played by the test on a raw socket, so the replica's
//! clock is ahead of "the master's" deterministically: the stream sets a
//! TTL already in the past (`PEXPIREAT key 1`, which a replica keeps as a
//! TTL) and then changes the key (INCR, APPEND, HSET, DEL). A petrel and
//! a redis-server replica of the same fake master end with the same
//! values and `DEBUG DIGEST`.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};

use common::*;

/// An empty RDB: magic, EOF, a zero checksum (not checked).
const EMPTY_RDB: &[u8] = b"REDIS0009\xff\0\0\0\0\0\0\0\0";

/// Reads one multibulk command from the replica.
fn read_command(r: &mut BufReader<TcpStream>) -> Vec<String> {
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    let n: usize = line
        .trim_end()
        .strip_prefix('*')
        .expect(&line)
        .parse()
        .unwrap();
    (0..n)
        .map(|_| {
            let mut l = String::new();
            r.read_line(&mut l).unwrap();
            let len: usize = l.trim_end()[1..].parse().unwrap();
            let mut b = vec![0; len + 2];
            r.read_exact(&mut b).unwrap();
            String::from_utf8_lossy(&b[..len]).into_owned()
        })
        .collect()
}

/// Plays a master for one replica: answers the handshake, sends an empty
/// payload at offset 0 and returns the stream's socket.
fn fake_master_session(listener: &TcpListener) -> TcpStream {
    let (s, _) = listener.accept().unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut w = s.try_clone().unwrap();
    let mut r = BufReader::new(s);
    loop {
        let argv = read_command(&mut r);
        match argv[0].to_ascii_uppercase().as_str() {
            "PING" => w.write_all(b"+PONG\r\n").unwrap(),
            "PSYNC" | "SYNC" => {
                let head = format!(
                    "+FULLRESYNC {} 0\r\n${}\r\n",
                    "a".repeat(40),
                    EMPTY_RDB.len()
                );
                w.write_all(head.as_bytes()).unwrap();
                w.write_all(EMPTY_RDB).unwrap();
                // The replica's ACKs are read and dropped by a thread.
                std::thread::spawn(move || {
                    let mut sink = [0u8; 4096];
                    while matches!(r.read(&mut sink), Ok(n) if n > 0) {}
                });
                return w;
            }
            _ => w.write_all(b"+OK\r\n").unwrap(),
        }
    }
}

fn encode(args: &[&str]) -> Vec<u8> {
    let mut v = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        v.extend_from_slice(format!("${}\r\n{a}\r\n", a.len()).as_bytes());
    }
    v
}

/// The stream: keys with a TTL long past on the replica's clock, changed
/// by the master as if still alive, and read back by a normal client
/// once their TTL is removed.
const STREAM: &[&[&str]] = &[
    &["SELECT", "0"],
    &["SET", "counter", "10"],
    &["PEXPIREAT", "counter", "1"],
    &["INCR", "counter"],
    &["SET", "text", "ab"],
    &["PEXPIREAT", "text", "1"],
    &["APPEND", "text", "cd"],
    &["HSET", "hash", "a", "1"],
    &["PEXPIREAT", "hash", "1"],
    &["HSET", "hash", "b", "2"],
    &["SET", "gone", "x"],
    &["PEXPIREAT", "gone", "1"],
    &["DEL", "gone"],
    &["SET", "other", "x"],
    &["PEXPIREAT", "other", "1"],
    &["SET", "kept", "1"],
    &["PEXPIREAT", "kept", "1"],
    &["INCRBY", "kept", "5"],
];

/// Keys made persistent at the end (the master's view: still alive).
const REVIVE: &[&str] = &["counter", "text", "hash", "kept"];

/// Runs the scenario against `replica`; returns (values, digest).
fn scenario(replica: &Server) -> (Vec<Value>, Value) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let mut c = replica.raw();
    assert_eq!(
        c.cmd(&["REPLICAOF", "127.0.0.1", &port]),
        Value::simple("OK")
    );
    let mut m = fake_master_session(&listener);
    for cmd in STREAM {
        m.write_all(&encode(cmd)).unwrap();
    }
    m.write_all(&encode(&["SET", "marker1", "1"])).unwrap();
    let wait = |c: &mut RawConn, key: &str| {
        let end = std::time::Instant::now() + Duration::from_secs(60);
        while c.cmd(&["EXISTS", key]) != Value::Int(1) {
            assert!(
                std::time::Instant::now() < end,
                "the replica never got {key}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    wait(&mut c, "marker1");
    // Other clients see the expired keys as missing.
    for key in ["counter", "text", "hash", "other", "kept"] {
        assert_eq!(c.cmd(&["EXISTS", key]), Value::Int(0), "{key}");
    }
    assert_eq!(c.cmd(&["GET", "counter"]), Value::NullBulk);
    for key in REVIVE {
        m.write_all(&encode(&["PERSIST", key])).unwrap();
    }
    // Gone on the master too (the digests then compare live keys only).
    m.write_all(&encode(&["DEL", "other"])).unwrap();
    m.write_all(&encode(&["SET", "marker2", "1"])).unwrap();
    wait(&mut c, "marker2");
    let values = vec![
        c.cmd(&["GET", "counter"]),
        c.cmd(&["GET", "text"]),
        c.cmd(&["HGETALL", "hash"]),
        c.cmd(&["GET", "kept"]),
        c.cmd(&["TTL", "counter"]),
        c.cmd(&["EXISTS", "gone"]),
        c.cmd(&["EXISTS", "other"]),
    ];
    let digest = c.cmd(&["DEBUG", "DIGEST"]);
    c.cmd(&["REPLICAOF", "NO", "ONE"]);
    drop(m);
    (values, digest)
}

#[test]
fn master_client_sees_keys_expired_on_the_replica_clock() {
    let petrel = Server::start(&[("enable-debug-command", "yes")]);
    let (values, digest) = scenario(&petrel);
    assert_eq!(
        values,
        vec![
            Value::bulk("11"),
            Value::bulk("abcd"),
            Value::Array(vec![
                Value::bulk("a"),
                Value::bulk("1"),
                Value::bulk("b"),
                Value::bulk("2")
            ]),
            Value::bulk("6"),
            Value::Int(-1),
            Value::Int(0),
            Value::Int(0),
        ]
    );
    let Some(redis) = RefRedis::start_with(Opts::new(&[("enable-debug-command", "yes")])) else {
        return;
    };
    let (rvalues, rdigest) = scenario(&redis);
    assert_eq!(values, rvalues, "petrel and redis-server replicas differ");
    assert_eq!(digest, rdigest, "DEBUG DIGEST of the two replicas");
}
