//! `CONFIG SET appendonly yes` at runtime, as Redis 7.0 does it: the reply
//! comes at once, the first base is written in the background while
//! clients are served (INFO persistence: `aof_enabled:1`,
//! `aof_rewrite_in_progress:1`, then `aof_last_bgrewrite_status:ok`), and
//! every write made meanwhile is in the AOF exactly once: the AOF loads
//! into Petrel and into redis-server with the dataset of the server that
//! wrote it.

#[path = "common/aof.rs"]
mod aof_util;
mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use aof_util::*;
use common::*;

fn info(srv: &Server) -> String {
    String::from_utf8_lossy(srv.raw().cmd(&["INFO", "persistence"]).as_bytes().unwrap())
        .into_owned()
}

fn field<'a>(info: &'a str, name: &str) -> &'a str {
    info.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(':')))
        .unwrap_or_else(|| panic!("no {name} in\n{info}"))
        .trim()
}

/// Keys populated before the AOF is turned on: enough that writing the
/// base takes far longer than a few round trips.
const KEYS: &str = "1000000";

#[test]
fn config_set_appendonly_writes_the_base_in_the_background() {
    let petrel = Server::start(&[
        ("appendonly", "no"),
        ("appendfsync", "always"),
        ("enable-debug-command", "yes"),
    ]);
    let mut c = petrel.raw();
    assert_eq!(
        c.cmd(&["DEBUG", "POPULATE", KEYS, "k", "16"]),
        Value::Simple(b"OK".to_vec())
    );
    let before = info(&petrel);
    assert_eq!(field(&before, "aof_enabled"), "0");
    assert_eq!(field(&before, "aof_rewrites"), "0");

    // Writers run through the switch: non-idempotent writes (INCR,
    // RPUSH) would show any write journaled twice or lost.
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let mut c = petrel.raw();
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    c.cmd(&["INCR", "counter"]);
                    c.cmd(&["RPUSH", &format!("list{w}"), &n.to_string()]);
                    c.cmd(&["SET", &format!("k:{}", n % 5000), &format!("w{w}-{n}")]);
                    n += 1;
                }
                n
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(50));

    assert_eq!(
        c.cmd(&["CONFIG", "SET", "appendonly", "yes"]),
        Value::Simple(b"OK".to_vec())
    );
    // The reply came before the base was written: the rewrite runs, and
    // another client's write is served while it does.
    let during = info(&petrel);
    assert_eq!(field(&during, "aof_enabled"), "1", "{during}");
    assert_eq!(field(&during, "aof_rewrite_in_progress"), "1", "{during}");
    // As redis-server 7.0.15: counted when it starts, no status yet.
    assert_eq!(field(&during, "aof_rewrites"), "1", "{during}");
    assert_eq!(
        field(&during, "aof_last_bgrewrite_status"),
        "ok",
        "{during}"
    );
    assert_eq!(
        field(&during, "aof_last_rewrite_time_sec"),
        "-1",
        "{during}"
    );
    assert_eq!(field(&during, "aof_rewrite_scheduled"), "0", "{during}");
    let dir = aof_dir(petrel.dir());
    let mut other = petrel.raw();
    assert_eq!(
        other.cmd(&["SET", "during", "1"]),
        Value::Simple(b"OK".to_vec())
    );
    // No manifest names the incremental file yet.
    let temp_seen = dir.join("temp-appendonly.aof.incr").is_file();
    let after_write = info(&petrel);
    assert_eq!(
        field(&after_write, "aof_rewrite_in_progress"),
        "1",
        "a write waited for the base"
    );
    assert!(temp_seen, "the journal goes to a temporary file meanwhile");

    wait_rewrite(|| info(&petrel));
    std::thread::sleep(Duration::from_millis(50));
    stop.store(true, Ordering::Relaxed);
    let written: u64 = writers.into_iter().map(|t| t.join().unwrap()).sum();
    assert!(written > 0);

    let done = info(&petrel);
    assert_eq!(field(&done, "aof_enabled"), "1");
    assert_eq!(field(&done, "aof_rewrite_in_progress"), "0");
    assert_eq!(field(&done, "aof_rewrite_scheduled"), "0");
    assert_eq!(field(&done, "aof_last_bgrewrite_status"), "ok");
    assert_eq!(field(&done, "aof_rewrites"), "1");
    assert!(!dir.join("temp-appendonly.aof.incr").exists());
    let files = manifest_files(&dir);
    let kinds: Vec<&str> = files.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(kinds, ["b", "i"], "{files:?}");
    assert!(files[0].0.ends_with(".base.rdb"), "{files:?}");
    for (name, _) in &files {
        assert!(dir.join(name).is_file(), "{name} missing");
    }
    assert!(incr_commands(&dir)
        .iter()
        .any(|c| c[0].eq_ignore_ascii_case(b"set") && c[1] == b"during"));

    let want = c.cmd(&["DEBUG", "DIGEST"]);
    for kind in [Kind::Petrel, Kind::Redis] {
        let Some((_copy, srv)) = start_on_aof_copy(kind, &dir, "aofenable") else {
            continue;
        };
        assert_same(&petrel, &srv, &format!("{kind:?}"));
        assert_eq!(srv.raw().cmd(&["DEBUG", "DIGEST"]), want, "{kind:?}");
    }
}

/// `CONFIG SET appendonly no` while the base is being written: the AOF is
/// off at once, the half-made files are removed, and turning it on again
/// works.
#[test]
fn appendonly_no_during_the_first_rewrite() {
    let petrel = Server::start(&[("appendonly", "no"), ("enable-debug-command", "yes")]);
    let mut c = petrel.raw();
    c.cmd(&["DEBUG", "POPULATE", KEYS, "k", "16"]);
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "appendonly", "yes"]),
        Value::Simple(b"OK".to_vec())
    );
    c.cmd(&["SET", "a", "1"]);
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "appendonly", "no"]),
        Value::Simple(b"OK".to_vec())
    );
    let off = info(&petrel);
    assert_eq!(field(&off, "aof_enabled"), "0", "{off}");
    wait_rewrite(|| info(&petrel));
    let dir = aof_dir(petrel.dir());
    assert!(!dir.join("temp-appendonly.aof.incr").exists());

    c.cmd(&["SET", "b", "2"]);
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "appendonly", "yes"]),
        Value::Simple(b"OK".to_vec())
    );
    c.cmd(&["SET", "c", "3"]);
    wait_rewrite(|| info(&petrel));
    let done = info(&petrel);
    assert_eq!(field(&done, "aof_enabled"), "1", "{done}");
    assert_eq!(field(&done, "aof_last_bgrewrite_status"), "ok", "{done}");
    let want = c.cmd(&["DEBUG", "DIGEST"]);
    let copy = TempDir::new("aofenable2");
    copy_dir(&dir, &copy.join("appendonlydir"));
    let d = copy.path().display().to_string();
    let srv = Server::start(&[
        ("appendonly", "yes"),
        ("enable-debug-command", "yes"),
        ("dir", &d),
    ]);
    wait_loaded(&srv);
    assert_eq!(srv.raw().cmd(&["DEBUG", "DIGEST"]), want);
}

/// SHUTDOWN while the first base is written is refused, as redis-server
/// 7.0.15 refuses it (the files on disk do not hold the dataset yet);
/// SHUTDOWN ... FORCE exits.
#[test]
fn shutdown_refused_while_the_first_base_is_written() {
    let mut petrel = Server::start(&[("appendonly", "no"), ("enable-debug-command", "yes")]);
    let mut c = petrel.raw();
    c.cmd(&["DEBUG", "POPULATE", KEYS, "k", "16"]);
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "appendonly", "yes"]),
        Value::Simple(b"OK".to_vec())
    );
    assert_eq!(
        c.cmd(&["SHUTDOWN", "NOSAVE"]),
        Value::Error(b"ERR Errors trying to SHUTDOWN. Check logs.".to_vec())
    );
    let during = info(&petrel);
    assert_eq!(field(&during, "aof_rewrite_in_progress"), "1", "{during}");
    c.send_cmd(&["SHUTDOWN", "NOSAVE", "FORCE"]);
    assert!(petrel.wait_exit(Duration::from_secs(10)).is_some());
}

/// `aof-use-rdb-preamble no`: the command-format base is written while
/// the server waits, but writers running through the switch still end up
/// in the AOF exactly once.
#[test]
fn command_format_base_under_writers() {
    let petrel = Server::start(&[
        ("appendonly", "no"),
        ("aof-use-rdb-preamble", "no"),
        ("enable-debug-command", "yes"),
    ]);
    let mut c = petrel.raw();
    c.cmd(&["DEBUG", "POPULATE", "20000", "k", "16"]);
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let mut c = petrel.raw();
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    c.cmd(&["INCR", "counter"]);
                    c.cmd(&["RPUSH", &format!("list{w}"), &n.to_string()]);
                    n += 1;
                }
                n
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "appendonly", "yes"]),
        Value::Simple(b"OK".to_vec())
    );
    std::thread::sleep(Duration::from_millis(100));
    stop.store(true, Ordering::Relaxed);
    for t in writers {
        t.join().unwrap();
    }
    wait_rewrite(|| info(&petrel));
    let dir = aof_dir(petrel.dir());
    let files = manifest_files(&dir);
    assert!(files[0].0.ends_with(".base.aof"), "{files:?}");
    let want = c.cmd(&["DEBUG", "DIGEST"]);
    let copy = TempDir::new("aofenable3");
    copy_dir(&dir, &copy.join("appendonlydir"));
    let d = copy.path().display().to_string();
    let srv = Server::start(&[
        ("appendonly", "yes"),
        ("enable-debug-command", "yes"),
        ("dir", &d),
    ]);
    wait_loaded(&srv);
    assert_eq!(srv.raw().cmd(&["DEBUG", "DIGEST"]), want);
}
