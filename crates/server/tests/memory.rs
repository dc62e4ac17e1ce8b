//! Memory seen by users: lazy freeing (UNLINK, FLUSHALL ASYNC,
//! lazyfree-lazy-user-del) returning memory in the background.

mod common;
use common::*;

fn info_text(c: &mut RawConn, section: &str) -> String {
    match c.cmd(&["INFO", section]) {
        Value::Bulk(b) => String::from_utf8_lossy(&b).into_owned(),
        v => panic!("INFO: {v}"),
    }
}

/// used_memory as INFO reports it (sampled by the server's cron, so wait
/// for a fresh sample first).
fn used_memory(c: &mut RawConn) -> i64 {
    std::thread::sleep(Duration::from_millis(250));
    let info = info_text(c, "memory");
    info.lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("used_memory")
}

fn info_field(c: &mut RawConn, section: &str, field: &str) -> i64 {
    let info = info_text(c, section);
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("{field} in {info}"))
}

/// Sends `cmds` pipelined and checks none failed.
fn load(c: &mut RawConn, cmds: &[Vec<String>]) {
    for chunk in cmds.chunks(200) {
        for cmd in chunk {
            c.send_cmd(cmd);
        }
        for _ in chunk {
            let r = c.read_reply();
            assert!(!matches!(r, Value::Error(_)), "{r}");
        }
    }
}

fn batches(
    cmd: &str,
    key: &str,
    n: usize,
    per: usize,
    item: impl Fn(usize) -> Vec<String>,
) -> Vec<Vec<String>> {
    (0..n)
        .step_by(per)
        .map(|j| {
            let mut v = vec![cmd.to_string(), key.to_string()];
            for i in j..(j + per).min(n) {
                v.extend(item(i));
            }
            v
        })
        .collect()
}

/// UNLINK of a large set hands it to the lazyfree thread; its memory comes
/// back without further commands, and the counters show it went there.
#[test]
fn unlink_frees_large_values_in_the_background() {
    let s = TestServer::start(&[("threads", "2")]);
    let mut c = s.raw();
    let base = used_memory(&mut c);
    load(
        &mut c,
        &batches("SADD", "big", 200_000, 1000, |i| {
            vec![format!("member:{i}")]
        }),
    );
    let loaded = used_memory(&mut c);
    assert!(loaded - base > 4_000_000, "{base} -> {loaded}");
    assert_eq!(c.cmd(&["UNLINK", "big", "missing"]), Value::Int(1));
    assert_eq!(c.cmd(&["EXISTS", "big"]), Value::Int(0));
    assert!(wait_until(Duration::from_secs(10), || {
        used_memory(&mut c) - base < 1_000_000
    }));
    assert_eq!(info_field(&mut c, "memory", "lazyfreed_objects"), 1);
    assert_eq!(info_field(&mut c, "memory", "lazyfree_pending_objects"), 0);
    // Small values are freed in place (not worth a hand-off).
    c.cmd(&["SADD", "small", "a", "b"]);
    assert_eq!(c.cmd(&["UNLINK", "small"]), Value::Int(1));
    assert_eq!(info_field(&mut c, "memory", "lazyfreed_objects"), 1);
    // FLUSHALL ASYNC frees databases there too.
    load(
        &mut c,
        &batches("RPUSH", "l", 10_000, 1000, |i| vec![i.to_string()]),
    );
    assert_eq!(c.cmd(&["FLUSHALL", "ASYNC"]), Value::Simple(b"OK".to_vec()));
    assert!(wait_until(Duration::from_secs(10), || info_field(
        &mut c,
        "memory",
        "lazyfreed_objects"
    ) >= 2));
    // lazyfree-lazy-user-del makes DEL lazy as well.
    c.cmd(&["CONFIG", "SET", "lazyfree-lazy-user-del", "yes"]);
    load(
        &mut c,
        &batches("HSET", "h", 2_000, 500, |i| {
            vec![format!("f{i}"), "v".into()]
        }),
    );
    assert_eq!(c.cmd(&["DEL", "h"]), Value::Int(1));
    assert!(wait_until(Duration::from_secs(10), || info_field(
        &mut c,
        "memory",
        "lazyfreed_objects"
    ) >= 3));
}
