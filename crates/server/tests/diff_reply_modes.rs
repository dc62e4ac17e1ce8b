//! `CLIENT REPLY OFF|SKIP` against Pub/Sub and blocking commands, compared
//! with redis-server 7.0: Redis drops a muted command's reply but still
//! delivers every Pub/Sub push (subscribe and unsubscribe confirmations,
//! messages, keyspace events for the client itself), in RESP2 and RESP3.
//! A client waiting for a confirmation it never gets would hang.

mod common;
use std::time::Duration;

use common::*;

/// Sends `cmds` on one connection (after `HELLO 3` when `resp3`), then
/// collects every reply that arrives until the connection stays quiet.
fn replies(port: u16, resp3: bool, cmds: &[&[&str]]) -> Vec<String> {
    let mut c = RawConn::tcp(port);
    if resp3 {
        c.cmd(&["HELLO", "3"]);
    }
    for cmd in cmds {
        c.send_cmd(cmd);
        // One at a time, as an interactive client would.
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut out = Vec::new();
    loop {
        match c.read_reply_within(Duration::from_millis(300)) {
            Reply::Value(v) => out.push(v.to_string()),
            Reply::Timeout => break,
            other => {
                out.push(other.to_string());
                break;
            }
        }
    }
    out
}

fn compare(name: &str, cmds: &[&[&str]]) {
    let p = TestServer::start(&[("threads", "2")]);
    let Some(r) = RefRedis::start() else {
        return;
    };
    for resp3 in [false, true] {
        let got = replies(p.port(), resp3, cmds);
        let want = replies(r.port(), resp3, cmds);
        assert_eq!(
            got, want,
            "{name} (resp3: {resp3}): petrel (left) vs redis-server (right)"
        );
    }
}

#[test]
fn subscribe_confirmations_arrive_with_replies_off() {
    compare(
        "reply off",
        &[
            &["CLIENT", "REPLY", "OFF"],
            &["SUBSCRIBE", "ch", "other"],
            &["PSUBSCRIBE", "c*"],
            &["SSUBSCRIBE", "shard"],
            &["PING"],
            // Named: without arguments the order is the server's hash order.
            &["UNSUBSCRIBE", "other", "ch"],
            &["PUNSUBSCRIBE", "c*"],
            &["SUNSUBSCRIBE"],
            &["PING"],
            &["CLIENT", "REPLY", "ON"],
            &["PING"],
        ],
    );
}

#[test]
fn subscribe_confirmations_arrive_when_skipped() {
    compare(
        "reply skip",
        &[
            &["CLIENT", "REPLY", "SKIP"],
            &["SUBSCRIBE", "ch"],
            &["PING"],
            &["CLIENT", "REPLY", "SKIP"],
            &["UNSUBSCRIBE", "ch"],
            &["PING"],
        ],
    );
}

#[test]
fn messages_and_own_keyspace_events_arrive_with_replies_off() {
    let p = TestServer::start(&[("threads", "2")]);
    let Some(r) = RefRedis::start() else {
        return;
    };
    for port in [p.port(), r.port()] {
        RawConn::tcp(port).cmd(&["CONFIG", "SET", "notify-keyspace-events", "KEA"]);
    }
    // RESP3 only: a RESP2 subscriber cannot run SET.
    let cmds: &[&[&str]] = &[
        &["CLIENT", "REPLY", "OFF"],
        &["SUBSCRIBE", "__keyevent@0__:set", "ch"],
        &["SET", "a", "b"],
        &["PUBLISH", "ch", "hello"],
        &["CLIENT", "REPLY", "ON"],
        &["PING"],
    ];
    let got = replies(p.port(), true, cmds);
    let want = replies(r.port(), true, cmds);
    assert_eq!(got, want, "petrel (left) vs redis-server (right)");
}

#[test]
fn muted_blocking_and_transaction_replies() {
    compare(
        "muted blocking",
        &[
            &["CLIENT", "REPLY", "OFF"],
            &["RPUSH", "l", "a"],
            &["BLPOP", "l", "0"],
            &["MULTI"],
            &["RPUSH", "l", "b"],
            &["EXEC"],
            &["BLPOP", "l", "0.05"],
            &["CLIENT", "REPLY", "ON"],
            &["LRANGE", "l", "0", "-1"],
        ],
    );
}
