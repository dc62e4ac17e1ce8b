//! End-to-end keyspace behaviour: lazy and active expiry, SCAN's guarantee
//! while keys come and go, DEBUG POPULATE, MEMORY USAGE.

mod common;
use common::*;

use std::collections::HashSet;
use std::time::{Duration, Instant};

fn q<T: redis::FromRedisValue>(con: &mut redis::Connection, args: &[&str]) -> T {
    rcmd(args).query(con).unwrap()
}

fn info_field(con: &mut redis::Connection, section: &str, field: &str) -> String {
    let info: String = q(con, &["INFO", section]);
    info.lines()
        .find_map(|l| {
            l.strip_prefix(&format!("{field}:"))
                .map(|v| v.trim().to_string())
        })
        .unwrap_or_default()
}

#[test]
fn lazy_expiry() {
    let s = TestServer::start(&[("enable-debug-command", "yes")]);
    let mut c = s.client();
    q::<()>(&mut c, &["DEBUG", "SET-ACTIVE-EXPIRE", "0"]);
    q::<()>(&mut c, &["SET", "k", "v", "PX", "100"]);
    assert_eq!(q::<i64>(&mut c, &["DBSIZE"]), 1);
    std::thread::sleep(Duration::from_millis(150));
    // still counted until touched (active expiry is off)
    assert_eq!(q::<i64>(&mut c, &["DBSIZE"]), 1);
    assert_eq!(q::<Option<String>>(&mut c, &["GET", "k"]), None);
    assert_eq!(q::<i64>(&mut c, &["DBSIZE"]), 0);
    assert_eq!(info_field(&mut c, "stats", "expired_keys"), "1");
}

#[test]
fn active_expiry_without_traffic() {
    let s = TestServer::start(&[("enable-debug-command", "yes")]);
    let mut c = s.client();
    let n = 50_000;
    let mut pipe = redis::pipe();
    for i in 0..n {
        pipe.cmd("SET")
            .arg(format!("key:{i}"))
            .arg("v")
            .arg("PX")
            .arg(200 + (i % 300))
            .ignore();
    }
    pipe.cmd("SET").arg("persistent").arg("v").ignore();
    pipe.query::<()>(&mut c).unwrap();
    let info: String = q(&mut c, &["INFO", "keyspace"]);
    assert!(info.contains("expires="), "{info}");
    let t = Instant::now();
    while q::<i64>(&mut c, &["DBSIZE"]) > 1 {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "active expiry too slow"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(q::<i64>(&mut c, &["EXISTS", "persistent"]), 1);
    assert_eq!(info_field(&mut c, "stats", "expired_keys"), n.to_string());
}

#[test]
fn scan_guarantee_under_churn() {
    let s = TestServer::start(&[("enable-debug-command", "yes")]);
    let mut c = s.client();
    let mut churn = s.client();
    q::<()>(&mut c, &["DEBUG", "POPULATE", "20000", "stable"]);
    let mut seen = HashSet::new();
    let mut cursor = 0u64;
    let mut round = 0;
    loop {
        let (next, keys): (u64, Vec<String>) =
            q(&mut c, &["SCAN", &cursor.to_string(), "COUNT", "50"]);
        seen.extend(keys);
        let mut pipe = redis::pipe();
        for j in 0..100 {
            pipe.cmd("SET")
                .arg(format!("churn:{round}:{j}"))
                .arg("x")
                .ignore();
            if round >= 2 {
                pipe.cmd("DEL")
                    .arg(format!("churn:{}:{j}", round - 2))
                    .ignore();
            }
        }
        pipe.query::<()>(&mut churn).unwrap();
        round += 1;
        cursor = next;
        if cursor == 0 {
            break;
        }
        assert!(round < 100_000);
    }
    for i in 0..20000 {
        assert!(
            seen.contains(&format!("stable:{i}")),
            "stable:{i} missed by SCAN"
        );
    }
}

#[test]
fn populate_memory_usage_and_debug_object() {
    let s = TestServer::start(&[("enable-debug-command", "yes")]);
    let mut c = s.client();
    q::<()>(&mut c, &["DEBUG", "POPULATE", "1000"]);
    assert_eq!(q::<i64>(&mut c, &["DBSIZE"]), 1000);
    assert_eq!(q::<String>(&mut c, &["GET", "key:999"]), "value:999");
    let u: i64 = q(&mut c, &["MEMORY", "USAGE", "key:1"]);
    // slot share of a small table (1000 keys over 16 partitions) is generous
    assert!((32..=200).contains(&u), "{u}");
    q::<()>(&mut c, &["SET", "big", &"x".repeat(1000)]);
    let u: i64 = q(&mut c, &["MEMORY", "USAGE", "big", "SAMPLES", "0"]);
    assert!((1024..1200).contains(&u), "{u}");
    assert_eq!(
        q::<Option<i64>>(&mut c, &["MEMORY", "USAGE", "nokey"]),
        None
    );
    let d: String = q(&mut c, &["DEBUG", "OBJECT", "key:1"]);
    assert!(
        d.contains("encoding:embstr") && d.contains("refcount:1"),
        "{d}"
    );
    q::<()>(&mut c, &["DEBUG", "POPULATE", "10", "p", "20"]);
    assert_eq!(q::<i64>(&mut c, &["STRLEN", "p:3"]), 20);
}

#[test]
fn expired_keyspace_events() {
    let s = TestServer::start(&[("enable-debug-command", "yes")]);
    let mut c = s.client();
    q::<()>(&mut c, &["CONFIG", "SET", "notify-keyspace-events", "Ex"]);
    let mut sub = s.raw();
    sub.cmd(&["SUBSCRIBE", "__keyevent@0__:expired"]);
    // let the cron notice the setting before the key expires
    std::thread::sleep(Duration::from_millis(300));
    q::<()>(&mut c, &["SET", "gone", "v", "PX", "50"]);
    let r = sub.read_reply();
    let want = Value::Array(vec![
        Value::bulk("message"),
        Value::bulk("__keyevent@0__:expired"),
        Value::bulk("gone"),
    ]);
    assert_eq!(r, want);
}
