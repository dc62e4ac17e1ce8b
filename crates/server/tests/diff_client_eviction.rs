//! `maxmemory-clients` (Redis 7.0 client eviction), differential: the same
//! clients (a big MULTI queue, big pending output, NO-EVICT, idle ones) on
//! petrel and redis-server 7.0; the same clients must be disconnected, and
//! `evicted_clients` must agree. Also CLIENT LIST's `multi-mem` and the
//! `qbuf` of the running command.

mod common;
use common::*;

fn info_field(c: &mut RawConn, section: &str, field: &str) -> String {
    let text = match c.cmd(&["INFO", section]) {
        Value::Bulk(t) => String::from_utf8(t).unwrap(),
        other => panic!("INFO: {other}"),
    };
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .unwrap_or_else(|| panic!("no {field} in INFO {section}"))
        .to_string()
}

/// Runs the scenario on one server: (names of the clients still connected,
/// evicted_clients).
fn scenario(srv: &Server) -> (Vec<String>, String) {
    let big = "x".repeat(500_000);
    let mut ctl = srv.raw();
    ctl.cmd(&["CLIENT", "SETNAME", "ctl"]);
    ctl.cmd(&["SET", "big", &big]);
    assert_eq!(
        ctl.cmd(&["CONFIG", "SET", "maxmemory-clients", "4mb"]),
        Value::Simple(b"OK".to_vec())
    );
    let mut idle = srv.raw();
    idle.cmd(&["CLIENT", "SETNAME", "idle"]);
    // Exempt, with a 2 MB transaction queued: stays.
    let mut keep = srv.raw();
    keep.cmd(&["CLIENT", "SETNAME", "noevict"]);
    keep.cmd(&["CLIENT", "NO-EVICT", "on"]);
    keep.cmd(&["MULTI"]);
    for i in 0..4 {
        keep.cmd(&["SET", &format!("a{i}"), &big]);
    }
    // A 2.5 MB transaction on top: over the limit, the largest goes.
    let mut multi = srv.raw();
    multi.cmd(&["CLIENT", "SETNAME", "multi"]);
    multi.cmd(&["MULTI"]);
    for i in 0..5 {
        // The server may close it mid-way (that is the point).
        let _ = multi.try_send(&resp::encode_command(&["SET", &format!("d{i}"), &big]));
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    // 10 MB of replies it does not read.
    let mut reader = srv.raw();
    reader.cmd(&["CLIENT", "SETNAME", "slowreader"]);
    for _ in 0..20 {
        let _ = reader.try_send(&resp::encode_command(&["GET", "big"]));
    }
    std::thread::sleep(Duration::from_millis(500));
    ctl.cmd(&["PING"]);
    std::thread::sleep(Duration::from_millis(200));
    let list = match ctl.cmd(&["CLIENT", "LIST"]) {
        Value::Bulk(t) => String::from_utf8(t).unwrap(),
        other => panic!("CLIENT LIST: {other}"),
    };
    let mut names: Vec<String> = list
        .lines()
        .filter_map(|l| l.split(' ').find_map(|f| f.strip_prefix("name=")))
        .map(String::from)
        .collect();
    names.sort();
    let evicted = info_field(&mut ctl, "stats", "evicted_clients");
    ctl.cmd(&["CONFIG", "SET", "maxmemory-clients", "0"]);
    (names, evicted)
}

#[test]
fn evicts_the_biggest_clients_like_redis() {
    let Some(redis) = RefRedis::start() else {
        return;
    };
    let petrel = TestServer::start(&[]);
    let p = scenario(&petrel);
    let r = scenario(&redis);
    assert_eq!(p, r, "petrel vs redis: (clients left, evicted_clients)");
    assert_eq!(
        r.0,
        vec!["ctl".to_string(), "idle".into(), "noevict".into()]
    );
}

#[test]
fn maxmemory_clients_config_values() {
    let text = r#"
        CONFIG GET maxmemory-clients # pairs
        CONFIG SET maxmemory-clients 10%
        CONFIG GET maxmemory-clients # pairs
        CONFIG SET maxmemory-clients 1mb
        CONFIG GET maxmemory-clients # pairs
        CONFIG SET maxmemory-clients 101%
        CONFIG SET maxmemory-clients -1
        CONFIG SET maxmemory-clients 50%x
        CONFIG SET maxmemory-clients 0%
        CONFIG GET maxmemory-clients # pairs
        CONFIG GET tracking-table-max-keys # pairs
        CONFIG SET tracking-table-max-keys -1
        CONFIG SET tracking-table-max-keys 1kb
        CONFIG SET tracking-table-max-keys 10
        CONFIG GET tracking-table-max-keys # pairs
    "#;
    diff_text("maxmemory_clients_config", text);
}

/// The fields of CLIENT LIST that follow Redis's rules exactly.
fn fields(line: &str, want: &[&str]) -> Vec<String> {
    line.split(' ')
        .filter(|f| want.iter().any(|w| f.split('=').next() == Some(w)))
        .map(String::from)
        .collect()
}

#[test]
fn client_info_counts_running_command_and_multi_queue() {
    let Some(redis) = RefRedis::start() else {
        return;
    };
    let petrel = TestServer::start(&[]);
    let mut got = Vec::new();
    for srv in [&petrel, &redis] {
        let mut a = srv.raw();
        let mut b = srv.raw();
        let own = match a.cmd(&["CLIENT", "INFO"]) {
            Value::Bulk(t) => String::from_utf8(t).unwrap(),
            other => panic!("{other}"),
        };
        let id = match a.cmd(&["CLIENT", "ID"]) {
            Value::Int(i) => i.to_string(),
            other => panic!("{other}"),
        };
        a.cmd(&["MULTI"]);
        a.cmd(&["SET", "a", "b"]);
        a.cmd(&["SET", "abc", &"x".repeat(100)]);
        let other = match b.cmd(&["CLIENT", "LIST", "ID", &id]) {
            Value::Bulk(t) => String::from_utf8(t).unwrap(),
            other => panic!("{other}"),
        };
        got.push((
            fields(&own, &["qbuf", "argv-mem", "multi", "multi-mem"]),
            fields(&other, &["qbuf", "argv-mem", "multi", "multi-mem"]),
        ));
    }
    assert_eq!(got[0], got[1], "petrel vs redis");
    assert!(got[1].0.contains(&"qbuf=26".to_string()), "{:?}", got[1]);
    assert!(
        got[1].1.contains(&"multi-mem=159".to_string()),
        "{:?}",
        got[1]
    );
}
