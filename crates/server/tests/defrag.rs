//! Memory that stays small (issue 23), end to end: keys that expire before
//! a table segment splits are dropped like any expired key (events,
//! `expired_keys`, the AOF's DEL), and active defragmentation moves values
//! of every type without changing what clients read, while other clients
//! read and write.

mod common;
use common::*;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn info_field(c: &mut RawConn, section: &str, name: &str) -> i64 {
    let Value::Bulk(b) = c.cmd(&["INFO", section]) else {
        panic!("INFO")
    };
    let text = String::from_utf8_lossy(&b).into_owned();
    text.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(':')))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("{name} in INFO {section}"))
}

fn pipeline(c: &mut RawConn, cmds: &[Vec<String>]) {
    let mut buf = Vec::new();
    for a in cmds {
        buf.extend_from_slice(format!("*{}\r\n", a.len()).as_bytes());
        for x in a {
            buf.extend_from_slice(format!("${}\r\n{x}\r\n", x.len()).as_bytes());
        }
    }
    c.send(&buf);
    for a in cmds {
        let r = c.read_reply();
        assert!(!matches!(r, Value::Error(_)), "{a:?}: {r}");
    }
}

/// A stream of short-TTL keys with active expiry slowed down: every key
/// that left (through active expiry, a lookup, or an insert dropping the
/// expired keys of a full segment) gave one `expired` event, one
/// `expired_keys` count and one DEL in the AOF.
#[test]
fn expired_keys_are_counted_notified_and_journaled_once() {
    let srv = TestServer::start(&[
        ("hz", "1"),
        ("notify-keyspace-events", "Ex"),
        ("appendonly", "yes"),
        ("appendfsync", "no"),
    ]);
    let mut sub = srv.raw();
    sub.cmd(&["SUBSCRIBE", "__keyevent@0__:expired"]);
    let mut c = srv.raw();
    // The keyspace logs expired keys for events once the cron has seen
    // that someone wants them (at hz 1, up to a second after start): a
    // probe key that expires and is read until its event arrives.
    let mut ready = false;
    for _ in 0..200 {
        c.cmd(&["SET", "probe", "v", "PX", "1"]);
        std::thread::sleep(Duration::from_millis(5));
        c.cmd(&["GET", "probe"]);
        if let Reply::Value(Value::Array(_)) = sub.read_reply_within(Duration::from_millis(100)) {
            ready = true;
            break;
        }
    }
    assert!(ready, "expired events flow");
    let probes = info_field(&mut c, "stats", "expired_keys");
    let n = 60_000usize;
    // The subscriber reads all along (its output buffer stays small).
    let events = std::thread::spawn(move || {
        let mut seen = std::collections::HashSet::new();
        while seen.len() < n {
            match sub.read_reply_within(Duration::from_secs(120)) {
                Reply::Value(Value::Array(m)) => {
                    let Value::Bulk(k) = &m[2] else {
                        panic!("{m:?}")
                    };
                    if k != b"probe" {
                        assert!(seen.insert(k.clone()), "one event per key");
                    }
                }
                r => panic!("missing expired events: got {} of {n}: {r:?}", seen.len()),
            }
        }
        seen.len()
    });
    for chunk in (0..n as u32).collect::<Vec<u32>>().chunks(1000) {
        let cmds: Vec<Vec<String>> = chunk
            .iter()
            .map(|i| {
                vec![
                    "SET".into(),
                    format!("ttl:{i}"),
                    format!("value:{i}"),
                    "PX".into(),
                    "20".into(),
                ]
            })
            .collect();
        pipeline(&mut c, &cmds);
    }
    assert!(
        wait_until(Duration::from_secs(120), || {
            matches!(c.cmd(&["DBSIZE"]), Value::Int(0))
        }),
        "every key expires"
    );
    let expired = info_field(&mut c, "stats", "expired_keys");
    assert_eq!(expired - probes, n as i64);
    assert_eq!(events.join().unwrap(), n);
    // The AOF holds one DEL per key (after the SETs).
    c.cmd(&["CONFIG", "SET", "appendfsync", "always"]);
    c.cmd(&["SET", "flush", "1"]);
    let dir = srv.dir().join("appendonlydir");
    let mut dels = 0;
    for f in std::fs::read_dir(&dir).expect("appendonlydir") {
        let p = f.unwrap().path();
        if p.to_string_lossy().ends_with(".incr.aof") {
            let b = std::fs::read(&p).unwrap();
            let pat = b"$3\r\nDEL\r\n$";
            for i in 0..b.len().saturating_sub(pat.len()) {
                if &b[i..i + pat.len()] == pat {
                    // `$<len>\r\n<key>`: the key starts after the length line.
                    let rest = &b[i + pat.len()..];
                    let nl = rest.iter().position(|&x| x == b'\n').unwrap();
                    dels += rest[nl + 1..].starts_with(b"ttl:") as usize;
                }
            }
        }
    }
    assert_eq!(dels, n, "one DEL per expired key in the AOF");
}

/// Every key's DUMP payload (type, encoding and contents) by name.
fn dump_all(c: &mut RawConn) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let Value::Array(keys) = c.cmd(&["KEYS", "*"]) else {
        panic!("KEYS")
    };
    let mut out = BTreeMap::new();
    for k in keys {
        let Value::Bulk(k) = k else { panic!() };
        if k.starts_with(b"w") {
            continue; // the concurrent writers' keys
        }
        let Value::Bulk(d) = c.cmd(&[&b"DUMP"[..], &k]) else {
            panic!("DUMP")
        };
        out.insert(k, d);
    }
    out
}

/// Values of every type and encoding read back identically after active
/// defrag moved them, with two worker threads and other clients reading
/// and writing their own keys all along.
#[test]
fn defrag_moves_values_of_every_type_without_changing_them() {
    let srv = TestServer::start(&[
        ("threads", "2"),
        ("activedefrag", "yes"),
        ("active-defrag-ignore-bytes", "1"),
        ("active-defrag-threshold-lower", "0"),
        ("active-defrag-cycle-max", "50"),
    ]);
    let mut c = srv.raw();
    c.cmd(&["CONFIG", "SET", "activedefrag", "no"]);
    let mut cmds: Vec<Vec<String>> = Vec::new();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<String>>();
    for i in 0..30_000u32 {
        let size = 10 + (i * 7919) % 700;
        let v: String = (0..size)
            .map(|j| (b'a' + ((i + j) % 26) as u8) as char)
            .collect();
        cmds.push(s(&["SET", &format!("str:{i}"), &v]));
        if i.is_multiple_of(3) {
            cmds.push(s(&["PEXPIRE", &format!("str:{i}"), "100000000"]));
        }
        // Long key names live in heap blocks too.
        if i.is_multiple_of(10) {
            cmds.push(s(&[
                "SET",
                &format!("a-long-key-name-that-is-not-inline:{i}"),
                &i.to_string(),
            ]));
        }
    }
    for i in 0..300u32 {
        let n = if i.is_multiple_of(2) { 10 } else { 700 };
        for j in 0..n {
            let m = format!("m{j}-{}", "x".repeat((j % 40) as usize));
            cmds.push(s(&["HSET", &format!("hash:{i}"), &m, &format!("v{j}")]));
            cmds.push(s(&["SADD", &format!("set:{i}"), &m]));
            cmds.push(s(&["SADD", &format!("iset:{i}"), &j.to_string()]));
            cmds.push(s(&["ZADD", &format!("zset:{i}"), &j.to_string(), &m]));
            cmds.push(s(&["RPUSH", &format!("list:{i}"), &m]));
        }
        cmds.push(s(&["RPUSH", &format!("list:{i}"), &"p".repeat(9000)]));
        cmds.push(s(&["XADD", &format!("stream:{i}"), "*", "f", "v"]));
        // Some streams with consumer groups and pending entries (their
        // PELs' entry arrays move too; DUMP shows every pending entry).
        if i.is_multiple_of(10) {
            let k = format!("stream:{i}");
            for j in 0..400 {
                cmds.push(s(&["XADD", &k, "*", "f", &format!("v{j}")]));
            }
            cmds.push(s(&["XGROUP", "CREATE", &k, "g", "0"]));
            for who in ["alice", "bob", "carol"] {
                cmds.push(s(&[
                    "XREADGROUP",
                    "GROUP",
                    "g",
                    who,
                    "COUNT",
                    "120",
                    "STREAMS",
                    &k,
                    ">",
                ]));
            }
        }
    }
    for chunk in cmds.chunks(2000) {
        pipeline(&mut c, chunk);
    }
    // Sparse slabs: delete two keys of three.
    let dels: Vec<Vec<String>> = (0..30_000u32)
        .filter(|i| !i.is_multiple_of(3))
        .map(|i| s(&["DEL", &format!("str:{i}")]))
        .collect();
    for chunk in dels.chunks(2000) {
        pipeline(&mut c, chunk);
    }
    let before = dump_all(&mut c);
    assert!(before.len() > 10_000);

    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let stop = stop.clone();
            let port = srv.port();
            std::thread::spawn(move || {
                let mut c = RawConn::tcp(port);
                let mut i = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let k = format!("w{w}:{}", i % 5000);
                    let v = format!("{i}-{}", "y".repeat((i % 300) as usize));
                    c.cmd(&["SET", k.as_str(), v.as_str()]);
                    assert_eq!(c.cmd(&["GET", k.as_str()]), Value::Bulk(v.into_bytes()));
                    c.cmd(&[
                        "HSET",
                        &format!("w{w}:h"),
                        &format!("f{}", i % 100),
                        &i.to_string(),
                    ]);
                    if i.is_multiple_of(7) {
                        c.cmd(&["DEL", k.as_str()]);
                    }
                    i += 1;
                }
                i
            })
        })
        .collect();

    c.cmd(&["CONFIG", "SET", "activedefrag", "yes"]);
    let moved = wait_until(Duration::from_secs(120), || {
        info_field(&mut c, "stats", "active_defrag_hits") > 1000
            && info_field(&mut c, "stats", "active_defrag_key_hits") > 100
    });
    // A second look at every key while defrag keeps running.
    let during = dump_all(&mut c);
    c.cmd(&["CONFIG", "SET", "activedefrag", "no"]);
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        assert!(w.join().unwrap() > 0);
    }
    assert!(moved, "defrag moved blocks");
    assert!(info_field(&mut c, "stats", "active_defrag_misses") > 0);
    assert_eq!(during.len(), before.len());
    assert!(during == before, "a value changed while defrag ran");
    let after = dump_all(&mut c);
    assert!(after == before, "a value changed after defrag");
    let Value::Array(summary) = c.cmd(&["XPENDING", "stream:10", "g"]) else {
        panic!("XPENDING")
    };
    assert_eq!(summary[0], Value::Int(360), "pending entries kept");
    // Values still change normally afterwards.
    c.cmd(&["APPEND", "str:0", "-tail"]);
    c.cmd(&["LPUSH", "list:1", "head"]);
    assert_eq!(
        c.cmd(&["LINDEX", "list:1", "0"]),
        Value::Bulk(b"head".to_vec())
    );
}

/// The settings and INFO fields exist with Redis 7.0's defaults.
#[test]
fn defrag_settings_and_info_fields() {
    let srv = TestServer::start(&[]);
    let mut c = srv.raw();
    for (k, v) in [
        ("activedefrag", "no"),
        ("active-defrag-ignore-bytes", "104857600"),
        ("active-defrag-threshold-lower", "10"),
        ("active-defrag-threshold-upper", "100"),
        ("active-defrag-cycle-min", "1"),
        ("active-defrag-cycle-max", "25"),
        ("active-defrag-max-scan-fields", "1000"),
    ] {
        assert_eq!(
            c.cmd(&["CONFIG", "GET", k]),
            Value::Array(vec![
                Value::Bulk(k.as_bytes().to_vec()),
                Value::Bulk(v.as_bytes().to_vec())
            ])
        );
    }
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "activedefrag", "yes"]),
        Value::Simple(b"OK".to_vec())
    );
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "active-defrag-ignore-bytes", "10mb"]),
        Value::Simple(b"OK".to_vec())
    );
    assert!(matches!(
        c.cmd(&["CONFIG", "SET", "active-defrag-cycle-max", "100"]),
        Value::Error(_)
    ));
    for f in [
        "active_defrag_hits",
        "active_defrag_misses",
        "active_defrag_key_hits",
        "active_defrag_key_misses",
    ] {
        assert!(info_field(&mut c, "stats", f) >= 0);
    }
    assert!(info_field(&mut c, "memory", "active_defrag_running") >= 0);
}

fn server_for_defrag() -> TestServer {
    TestServer::start(&[
        ("threads", "2"),
        ("activedefrag", "no"),
        ("active-defrag-ignore-bytes", "1"),
        ("active-defrag-threshold-lower", "0"),
        ("active-defrag-cycle-max", "50"),
    ])
}

/// Runs active defrag until `want` more blocks moved (or two minutes went
/// by), then turns it off; returns the blocks moved.
fn defrag_until(c: &mut RawConn, want: i64) -> i64 {
    let hits0 = info_field(c, "stats", "active_defrag_hits");
    c.cmd(&["CONFIG", "SET", "activedefrag", "yes"]);
    wait_until(Duration::from_secs(120), || {
        info_field(c, "stats", "active_defrag_hits") - hits0 > want
    });
    c.cmd(&["CONFIG", "SET", "activedefrag", "no"]);
    info_field(c, "stats", "active_defrag_hits") - hits0
}

/// Active defrag's last stage (issue 23): the workers move their
/// connections' buffers (reply buffers, argument ranges, WATCHed keys)
/// while pipelining clients run, and every reply stays intact. The
/// keyspace and the Pub/Sub registry are empty, so every hit is a
/// connection's block: none moved when the workers' stage was taken out.
#[test]
fn defrag_moves_client_buffers() {
    let srv = server_for_defrag();
    let mut c = srv.raw();
    // Three clients WATCH keys one at a time, interleaved (the keys need
    // not exist), then two of them UNWATCH: the first one's key buffers
    // sit in slabs two thirds empty.
    let mut watcher = srv.raw();
    let mut others = [srv.raw(), srv.raw()];
    for j in 0..600 {
        assert_eq!(
            watcher.cmd(&["WATCH", &format!("watched:{j}")]),
            Value::Simple(b"OK".to_vec())
        );
        for (o, c) in others.iter_mut().enumerate() {
            c.cmd(&["WATCH", &format!("other{o}:{j}")]);
        }
    }
    for c in others.iter_mut() {
        c.cmd(&["UNWATCH"]);
    }

    let stop = Arc::new(AtomicBool::new(false));
    let pipeliners: Vec<_> = (0..6)
        .map(|w| {
            let stop = stop.clone();
            let mut con = srv.client();
            std::thread::spawn(move || {
                let mut rounds = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let n = 10 + (rounds as usize * 7 + w) % 60;
                    let payloads: Vec<Vec<u8>> = (0..n)
                        .map(|k| {
                            let len = 50 + (k * 131 + rounds as usize) % 400;
                            (0..len).map(|b| b'a' + ((b + k + w) % 26) as u8).collect()
                        })
                        .collect();
                    let mut p = redis::pipe();
                    for x in &payloads {
                        p.cmd("ECHO").arg(x);
                    }
                    let got: Vec<Vec<u8>> = p.query(&mut con).expect("pipeline");
                    assert!(got == payloads, "a reply changed");
                    rounds += 1;
                }
                rounds
            })
        })
        .collect();
    let hits = defrag_until(&mut c, 100);
    stop.store(true, Ordering::Relaxed);
    for p in pipeliners {
        assert!(p.join().unwrap() > 0);
    }
    let misses = info_field(&mut c, "stats", "active_defrag_misses");
    assert!(
        hits > 100,
        "defrag moved client blocks: {hits} hits, {misses} misses"
    );
    // The watcher's keys are still its keys: a change to one of them
    // aborts its transaction.
    c.cmd(&["SET", "watched:150", "changed"]);
    watcher.cmd(&["MULTI"]);
    watcher.cmd(&["PING"]);
    assert_eq!(watcher.cmd(&["EXEC"]), Value::NullArray);
}

/// Active defrag's stage after the keyspace (issue 23): the Pub/Sub
/// registry's blocks (bucket arrays, channel names and patterns,
/// subscriber vectors) move while subscribers wait; afterwards every
/// subscription still gets its messages, and only those. Each subscriber
/// keeps more than `DEFRAG_NAMES_MAX` (1024) channels and patterns, so
/// the workers' stage leaves its own name sets alone and the keyspace is
/// empty: nearly every hit is the registry's (none moved when the
/// registry's stage was taken out).
#[test]
fn defrag_moves_the_pubsub_registry() {
    let srv = server_for_defrag();
    let mut c = srv.raw();
    const SUBS: usize = 4;
    const NAMES: usize = 3300;
    let chan = |i: usize, j: usize| format!("chan:{}:{j}", i % 2);
    let pat = |i: usize, j: usize| format!("pat:{i}:{j}:*");
    let mut conns: Vec<redis::Connection> = (0..SUBS).map(|_| srv.client()).collect();
    let mut subs: Vec<redis::PubSub<'_>> = conns.iter_mut().map(|c| c.as_pubsub()).collect();
    for (i, ps) in subs.iter_mut().enumerate() {
        // Two subscribers share each channel; two of three subscriptions
        // go again (sparse slabs), 1100 of each kind stay.
        let chans: Vec<String> = (0..NAMES).map(|j| chan(i, j)).collect();
        let pats: Vec<String> = (0..NAMES).map(|j| pat(i, j)).collect();
        ps.subscribe(&chans).unwrap();
        ps.psubscribe(&pats).unwrap();
        let gone = |v: &[String]| -> Vec<String> {
            v.iter()
                .enumerate()
                .filter(|(j, _)| j % 3 != 0)
                .map(|(_, n)| n.clone())
                .collect()
        };
        ps.unsubscribe(gone(&chans)).unwrap();
        ps.punsubscribe(gone(&pats)).unwrap();
    }
    let numsub = |c: &mut RawConn| c.cmd(&["PUBSUB", "NUMSUB", "chan:1:3", "chan:1:4"]);
    let expect_numsub = Value::Array(vec![
        Value::bulk("chan:1:3"),
        Value::Int(2),
        Value::bulk("chan:1:4"),
        Value::Int(0),
    ]);
    let kept = (NAMES / 3) as i64;
    assert!(wait_until(Duration::from_secs(30), || numsub(&mut c) == expect_numsub));
    assert!(wait_until(Duration::from_secs(30), || {
        c.cmd(&["PUBSUB", "NUMPAT"]) == Value::Int(SUBS as i64 * kept)
    }));

    let hits = defrag_until(&mut c, 500);
    assert!(hits > 500, "defrag moved registry blocks: {hits} hits");

    assert_eq!(numsub(&mut c), expect_numsub);
    assert_eq!(c.cmd(&["PUBSUB", "NUMPAT"]), Value::Int(SUBS as i64 * kept));
    let mut publish = Vec::new();
    for k in 0..2 {
        for j in 0..NAMES {
            let want = if j % 3 == 0 { 2 } else { 0 };
            publish.push((chan(k, j), format!("m{j}"), want));
        }
    }
    for i in 0..SUBS {
        for j in (0..NAMES).step_by(3) {
            publish.push((format!("pat:{i}:{j}:x"), "p".to_string(), 1));
        }
    }
    for chunk in publish.chunks(1000) {
        let mut buf = Vec::new();
        for (ch, m, _) in chunk {
            buf.extend_from_slice(
                format!(
                    "*3\r\n$7\r\nPUBLISH\r\n${}\r\n{ch}\r\n${}\r\n{m}\r\n",
                    ch.len(),
                    m.len()
                )
                .as_bytes(),
            );
        }
        c.send(&buf);
        for (ch, _, want) in chunk {
            assert_eq!(c.read_reply(), Value::Int(*want), "{ch}");
        }
    }
    for (i, ps) in subs.iter_mut().enumerate() {
        ps.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut want = std::collections::BTreeSet::new();
        for j in (0..NAMES).step_by(3) {
            want.insert((chan(i, j), format!("m{j}")));
            want.insert((format!("pat:{i}:{j}:x"), "p".to_string()));
        }
        let mut got = std::collections::BTreeSet::new();
        for _ in 0..want.len() {
            let m = ps.get_message().expect("a message");
            let payload: String = m.get_payload().unwrap();
            got.insert((m.get_channel_name().to_string(), payload));
        }
        assert!(got == want, "subscriber {i} got other messages");
    }
}
