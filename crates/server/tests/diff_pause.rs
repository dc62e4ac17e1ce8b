//! CLIENT PAUSE compared with redis-server 7.0: a postponed client counts
//! in `blocked_clients` and shows flag `b` and its command in CLIENT LIST
//! (so a tool waiting for clients to be paused sees them), and the dataset
//! stays as it is during the pause: expired keys read as missing but are
//! not deleted, and `expired_keys` does not move until the pause ends.

mod common;
use std::time::Duration;

use common::*;

fn info_field(c: &mut RawConn, section: &str, field: &str) -> String {
    let text = match c.cmd(&["INFO", section]) {
        Value::Bulk(b) => String::from_utf8_lossy(&b).into_owned(),
        Value::Verbatim { data, .. } => String::from_utf8_lossy(&data).into_owned(),
        v => panic!("INFO: {v}"),
    };
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .unwrap_or_else(|| panic!("no {field} in INFO {section}"))
        .trim()
        .to_string()
}

/// What a user observes around a pause, on the server at `port`.
fn observe(port: u16, mode: &str) -> Vec<String> {
    let mut c = RawConn::tcp(port);
    let mut out = Vec::new();
    c.cmd(&["FLUSHALL"]);
    c.cmd(&["CONFIG", "RESETSTAT"]);
    c.cmd(&["SET", "k", "v", "PX", "50"]);
    c.cmd(&["SET", "k2", "v", "PX", "50"]);
    c.cmd(&["SET", "live", "v"]);
    std::thread::sleep(Duration::from_millis(200));
    out.push(format!(
        "pause: {}",
        c.cmd(&["CLIENT", "PAUSE", "100000", mode])
    ));
    // A writer is postponed.
    let mut writer = RawConn::tcp(port);
    writer.send_cmd(&["SET", "x", "y"]);
    std::thread::sleep(Duration::from_millis(300));
    out.push(format!(
        "writer early: {}",
        writer.read_reply_within(Duration::from_millis(50))
    ));
    out.push(format!(
        "blocked_clients: {}",
        info_field(&mut c, "clients", "blocked_clients")
    ));
    let list = match c.cmd(&["CLIENT", "LIST"]) {
        Value::Bulk(b) => String::from_utf8_lossy(&b).into_owned(),
        Value::Verbatim { data, .. } => String::from_utf8_lossy(&data).into_owned(),
        v => panic!("CLIENT LIST: {v}"),
    };
    let mut postponed: Vec<String> = list
        .lines()
        .filter(|l| l.contains(" flags=b "))
        .map(|l| {
            let cmd = l.split(' ').find(|f| f.starts_with("cmd=")).unwrap_or("");
            format!("postponed client {cmd}")
        })
        .collect();
    postponed.sort();
    out.extend(postponed);
    if mode == "WRITE" {
        // Reads still run, and see expired keys as missing...
        out.push(format!("get k: {}", c.cmd(&["GET", "k"])));
        out.push(format!("exists k2: {}", c.cmd(&["EXISTS", "k2"])));
        out.push(format!("get live: {}", c.cmd(&["GET", "live"])));
        // ...but nothing is deleted or counted.
        out.push(format!("dbsize: {}", c.cmd(&["DBSIZE"])));
    }
    // Give active expiry (10 times a second) a chance to run.
    std::thread::sleep(Duration::from_millis(300));
    out.push(format!(
        "expired_keys paused: {}",
        info_field(&mut c, "stats", "expired_keys")
    ));
    out.push(format!("unpause: {}", c.cmd(&["CLIENT", "UNPAUSE"])));
    out.push(format!(
        "writer: {}",
        writer.read_reply_within(Duration::from_secs(5))
    ));
    out.push(format!("get k after: {}", c.cmd(&["GET", "k"])));
    out.push(format!(
        "blocked_clients after: {}",
        info_field(&mut c, "clients", "blocked_clients")
    ));
    let ok = wait_until(Duration::from_secs(5), || {
        info_field(&mut c, "stats", "expired_keys") == "2"
    });
    out.push(format!("both expired after the pause: {ok}"));
    out
}

/// PAUSE ALL postpones every command of normal clients (INFO and even
/// CLIENT UNPAUSE: in Redis 7.0 only the timeout ends it), so the
/// observations are what the postponed clients get once it ends.
fn observe_all(port: u16) -> Vec<String> {
    let mut c = RawConn::tcp(port);
    let mut out = Vec::new();
    c.cmd(&["FLUSHALL"]);
    c.cmd(&["CONFIG", "RESETSTAT"]);
    c.cmd(&["SET", "k", "v", "PX", "50"]);
    std::thread::sleep(Duration::from_millis(200));
    out.push(format!(
        "pause: {}",
        c.cmd(&["CLIENT", "PAUSE", "1000", "ALL"])
    ));
    let mut reader = RawConn::tcp(port);
    reader.send_cmd(&["INFO", "stats"]);
    let mut writer = RawConn::tcp(port);
    writer.send_cmd(&["SET", "x", "y"]);
    std::thread::sleep(Duration::from_millis(300));
    out.push(format!(
        "reader early: {}",
        reader.read_reply_within(Duration::from_millis(50))
    ));
    out.push(format!(
        "writer early: {}",
        writer.read_reply_within(Duration::from_millis(50))
    ));
    c.send_cmd(&["CLIENT", "UNPAUSE"]);
    out.push(format!(
        "unpause early: {}",
        c.read_reply_within(Duration::from_millis(50))
    ));
    out.push(format!(
        "unpause: {}",
        c.read_reply_within(Duration::from_secs(5))
    ));
    let stats = match reader.read_reply_within(Duration::from_secs(5)) {
        Reply::Value(Value::Bulk(b)) => String::from_utf8_lossy(&b).into_owned(),
        r => format!("{r}"),
    };
    // The postponed INFO runs after the pause, before k was touched again:
    // nothing expired while clients were paused.
    let expired = stats
        .lines()
        .find(|l| l.starts_with("expired_keys:"))
        .unwrap_or("");
    out.push(format!("reader: {expired}"));
    out.push(format!(
        "writer: {}",
        writer.read_reply_within(Duration::from_secs(5))
    ));
    out
}

fn compare(mode: &str) {
    if mode == "ALL" {
        let p = TestServer::start(&[("threads", "2")]);
        let got = observe_all(p.port());
        let Some(r) = RefRedis::start() else {
            return;
        };
        let want = observe_all(r.port());
        assert_eq!(
            got, want,
            "CLIENT PAUSE ALL: petrel (left) vs redis-server (right)"
        );
        return;
    }
    let p = TestServer::start(&[("threads", "2")]);
    let got = observe(p.port(), mode);
    let Some(r) = RefRedis::start() else {
        return;
    };
    let want = observe(r.port(), mode);
    assert_eq!(
        got, want,
        "CLIENT PAUSE {mode}: petrel (left) vs redis-server (right)"
    );
}

#[test]
fn pause_write_counts_postponed_clients_and_freezes_expiry() {
    compare("WRITE");
}

#[test]
fn pause_all_counts_postponed_clients_and_freezes_expiry() {
    compare("ALL");
}
