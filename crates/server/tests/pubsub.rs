//! Pub/Sub: differential scripts against redis-server, delivery across
//! worker threads, and the pubsub output buffer limit for a slow subscriber.

mod common;
use std::time::{Duration, Instant};

use common::*;

#[test]
fn diff_pubsub_commands() {
    diff_text(
        "pubsub_commands",
        r#"
PUBLISH nobody hello
PUBSUB NUMSUB a b
PUBSUB NUMPAT
PUBSUB CHANNELS
PUBSUB SHARDCHANNELS
PUBSUB SHARDNUMSUB a
PUBSUB NOSUCH
PUBSUB
PUBLISH onlyone
SPUBLISH ch msg
SUBSCRIBE
PSUBSCRIBE
UNSUBSCRIBE
PUNSUBSCRIBE
SUNSUBSCRIBE
"#,
    );
}

#[test]
fn diff_subscribed_mode() {
    diff_text(
        "subscribed_mode",
        r#"
SUBSCRIBE a b
PING
PING hi
GET x                       # resp2
ECHO x                      # resp2
PSUBSCRIBE p*
PUBLISH a self              # resp3
UNSUBSCRIBE a
PUNSUBSCRIBE
UNSUBSCRIBE
UNSUBSCRIBE
SSUBSCRIBE s1 s2
SUNSUBSCRIBE
PING
"#,
    );
}

#[test]
fn messages_reach_subscribers_on_every_thread() {
    let s = TestServer::start(&[("threads", "2")]);
    // Connections are spread round-robin over the two workers.
    let mut subs: Vec<RawConn> = (0..6).map(|_| s.raw()).collect();
    for (i, c) in subs.iter_mut().enumerate() {
        let reply = c.cmd(&["SUBSCRIBE", "news"]);
        assert_eq!(
            reply,
            Value::Array(vec![
                Value::bulk("subscribe"),
                Value::bulk("news"),
                Value::Int(1)
            ]),
            "subscriber {i}"
        );
    }
    let mut pat = s.raw();
    pat.cmd(&["PSUBSCRIBE", "n*"]);
    let mut publisher = s.raw();
    assert_eq!(publisher.cmd(&["PUBLISH", "news", "hello"]), Value::Int(7));
    for c in subs.iter_mut() {
        assert_eq!(
            c.read_reply(),
            Value::Array(vec![
                Value::bulk("message"),
                Value::bulk("news"),
                Value::bulk("hello")
            ])
        );
    }
    assert_eq!(
        pat.read_reply(),
        Value::Array(vec![
            Value::bulk("pmessage"),
            Value::bulk("n*"),
            Value::bulk("news"),
            Value::bulk("hello")
        ])
    );
    // A subscriber that disconnects is forgotten.
    drop(subs.pop());
    assert!(wait_until(Duration::from_secs(2), || {
        let r = publisher.cmd(&["PUBSUB", "NUMSUB", "news"]);
        r == Value::Array(vec![Value::bulk("news"), Value::Int(5)])
    }));
}

#[test]
fn slow_subscriber_is_disconnected_and_memory_stays_bounded() {
    let mut s = TestServer::start(&[
        ("threads", "2"),
        ("client-output-buffer-limit", "pubsub 1mb 512kb 60"),
    ]);
    let mut slow = s.raw();
    slow.cmd(&["SUBSCRIBE", "flood"]);
    let mut c = s.client();
    let payload = "x".repeat(16 * 1024);
    let start = Instant::now();
    let mut receivers = 1;
    let used_memory = |c: &mut redis::Connection| -> u64 {
        let mem: String = redis::cmd("INFO").arg("memory").query(c).unwrap();
        mem.lines()
            .find_map(|l| l.strip_prefix("used_memory:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap()
    };
    let base = used_memory(&mut c);
    let mut peak = base;
    // Publish ~64 MB while the subscriber never reads: the server must drop it
    // once its output buffer passes the 1 MB hard limit, and what is queued
    // for it must stay near that limit meanwhile.
    for i in 0..4096 {
        if i % 64 == 0 {
            peak = peak.max(used_memory(&mut c));
        }
        receivers = redis::cmd("PUBLISH")
            .arg("flood")
            .arg(&payload)
            .query::<i64>(&mut c)
            .unwrap();
        if receivers == 0 {
            break;
        }
    }
    // The subscriber's worker may still be draining its inbox when the
    // publisher is done: give it time to reach the limit and drop the client.
    let dropped = receivers == 0
        || wait_until(Duration::from_secs(10), || {
            let r: Vec<redis::Value> = redis::cmd("PUBSUB")
                .arg("NUMSUB")
                .arg("flood")
                .query(&mut c)
                .unwrap();
            r.get(1) == Some(&redis::Value::Int(0))
        });
    assert!(dropped, "the slow subscriber was never disconnected");
    assert!(
        peak - base < 16 * 1024 * 1024,
        "used_memory grew by {} while flooding a subscriber limited to 1 MB",
        peak - base
    );
    assert!(start.elapsed() < Duration::from_secs(30));
    let info: String = redis::cmd("INFO").arg("stats").query(&mut c).unwrap();
    let line = info
        .lines()
        .find(|l| l.starts_with("client_output_buffer_limit_disconnections:"));
    assert_eq!(
        line,
        Some("client_output_buffer_limit_disconnections:1"),
        "{info}"
    );
    let mem: String = redis::cmd("INFO").arg("memory").query(&mut c).unwrap();
    let used: u64 = mem
        .lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap();
    assert!(
        used < 64 * 1024 * 1024,
        "used_memory {used} after flooding a slow subscriber"
    );
    s.assert_alive();
}

/// Nothing follows an UNSUBSCRIBE/PUNSUBSCRIBE/RESET reply: messages that
/// PUBLISH addressed to the client before its worker ran the unsubscribe
/// are dropped, never written after the confirmation. Publishers on other
/// connections (spread over both workers) publish without pause while each
/// subscriber repeatedly subscribes, reads a message, and leaves.
#[test]
fn no_message_after_the_unsubscribe_reply() {
    let s = TestServer::start(&[("threads", "2")]);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let publishers: Vec<_> = (0..2)
        .map(|_| {
            let mut p = s.raw();
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    p.send_cmd(&["PUBLISH", "feed", "x"]);
                    p.send_cmd(&["PUBLISH", "feed", "y"]);
                    p.read_reply();
                    p.read_reply();
                }
            })
        })
        .collect();
    for round in 0..40 {
        let mut c = s.raw();
        let (sub, leave): (&[&str], &[&str]) = match round % 3 {
            0 => (&["SUBSCRIBE", "feed"], &["UNSUBSCRIBE"]),
            1 => (&["PSUBSCRIBE", "f*"], &["PUNSUBSCRIBE"]),
            _ => (&["SUBSCRIBE", "feed"], &["RESET"]),
        };
        c.cmd(sub);
        // Wait for traffic, then leave while messages are in flight.
        c.read_reply();
        c.send_cmd(leave);
        let confirmation = loop {
            match c.read_reply() {
                Value::Array(v) if matches!(v.first(), Some(Value::Bulk(k)) if k == b"message" || k == b"pmessage") =>
                    {}
                other => break other,
            }
        };
        let expected = match round % 3 {
            0 => Value::Array(vec![
                Value::bulk("unsubscribe"),
                Value::bulk("feed"),
                Value::Int(0),
            ]),
            1 => Value::Array(vec![
                Value::bulk("punsubscribe"),
                Value::bulk("f*"),
                Value::Int(0),
            ]),
            _ => Value::Simple(b"RESET".to_vec()),
        };
        assert_eq!(confirmation, expected, "round {round}");
        // A plain command's reply must be the very next thing.
        assert_eq!(
            c.cmd(&["PING"]),
            Value::Simple(b"PONG".to_vec()),
            "round {round}"
        );
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for p in publishers {
        p.join().unwrap();
    }
}

/// A key that expires right after startup, or right after CONFIG SET turns
/// `expired` events on, gets its event: the expired-key log is switched on
/// then, not at the next cron tick (up to a second later at `hz 1`).
#[test]
fn expired_events_flow_from_startup_and_from_config_set() {
    use resp::Value;
    fn expired_event(s: &Server, key: &str) -> Reply {
        let mut sub = s.raw();
        sub.cmd(&["SUBSCRIBE", "__keyevent@0__:expired"]);
        let mut c = s.raw();
        c.cmd(&["SET", key, "v", "PX", "1"]);
        std::thread::sleep(Duration::from_millis(5));
        c.cmd(&["GET", key]);
        sub.read_reply_within(Duration::from_secs(5))
    }
    let want = |key: &str| {
        Value::Array(vec![
            Value::Bulk(b"message".to_vec()),
            Value::Bulk(b"__keyevent@0__:expired".to_vec()),
            Value::Bulk(key.as_bytes().to_vec()),
        ])
    };
    let s = Server::start(&[("hz", "1"), ("notify-keyspace-events", "Ex")]);
    match expired_event(&s, "at-start") {
        Reply::Value(v) => assert_eq!(v, want("at-start")),
        other => panic!("no expired event after startup: {other}"),
    }
    let s = Server::start(&[("hz", "1")]);
    s.raw()
        .cmd(&["CONFIG", "SET", "notify-keyspace-events", "Ex"]);
    match expired_event(&s, "after-set") {
        Reply::Value(v) => assert_eq!(v, want("after-set")),
        other => panic!("no expired event after CONFIG SET: {other}"),
    }
}
