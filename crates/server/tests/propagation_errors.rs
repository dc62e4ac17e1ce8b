//! What a replica and the AOF loader do when a propagated command goes
//! wrong (`services::replication::propagation`), side by side with
//! redis-server 7.0 (its cases skipped when it is not installed, unless
//! `PETREL_REQUIRE_REDIS=1`):
//! * an error reply to the master's stream or to the AOF's commands is
//!   counted in `unexpected_error_replies`, and stops the server under
//!   `propagation-error-behavior panic` / `panic-on-replicas`;
//! * a master's write reaching a replica that cannot persist stops it
//!   (`replica-ignore-disk-write-errors no`) or is applied (`yes`).
//!
//! No timing assertions: everything waits by polling with generous limits.

#[path = "common/aof_workload.rs"]
mod aof_workload;
mod common;
#[path = "common/repl_links.rs"]
mod repl_links;

use common::*;
use repl_links::*;

/// petrel, or redis-server when `redis` (None if it is not installed).
fn node(redis: bool, args: &[(&str, &str)]) -> Option<Server> {
    if redis {
        RefRedis::start_with(Opts::new(args))
    } else {
        Some(Server::start(args))
    }
}

fn caught_up(master: &Server, replica: &Server) {
    let (mut m, mut r) = (master.raw(), replica.raw());
    wait_for("the replica to catch up", || {
        info_num(&mut m, "replication", "master_repl_offset")
            == info_num(&mut r, "replication", "slave_repl_offset")
    });
}

/// A petrel master and a replica (`redis`: redis-server) in sync.
fn pair(redis: bool, replica_args: &[(&str, &str)]) -> Option<(Server, Server)> {
    let master = Server::start(&[("repl-diskless-sync-delay", "0")]);
    let replica = node(redis, replica_args)?;
    let port = master.port().to_string();
    replica.raw().cmd(&["REPLICAOF", "127.0.0.1", &port]);
    link_up(&replica);
    caught_up(&master, &replica);
    Some((master, replica))
}

/// The master INCRs a key the (then writable) replica made a string:
/// the replica answers its master an error. Returns whether the replica
/// is still running, and its `unexpected_error_replies` if it is.
fn diverged_incr(redis: bool, behavior: &str) -> Option<(bool, Option<i64>)> {
    let (master, mut replica) = pair(redis, &[])?;
    let mut r = replica.raw();
    r.cmd(&["CONFIG", "SET", "replica-read-only", "no"]);
    r.cmd(&["SET", "k", "abc"]);
    r.cmd(&["CONFIG", "SET", "replica-read-only", "yes"]);
    assert_eq!(
        r.cmd(&["CONFIG", "SET", "propagation-error-behavior", behavior]),
        Value::simple("OK")
    );
    let mut m = master.raw();
    assert_eq!(m.cmd(&["INCR", "k"]), Value::Int(1));
    m.cmd(&["SET", "after", "1"]);
    if behavior != "ignore" {
        return Some((replica.wait_exit(Duration::from_secs(30)).is_none(), None));
    }
    caught_up(&master, &replica);
    let errors = info_num(&mut r, "stats", "unexpected_error_replies");
    assert_eq!(r.cmd(&["GET", "after"]), Value::Bulk(b"1".to_vec()));
    Some((replica.is_alive(), Some(errors)))
}

/// An error in the master's stream: counted and logged by default, the
/// end of a read-only replica under `panic` and `panic-on-replicas`.
#[test]
fn an_error_in_the_masters_stream() {
    for redis in [false, true] {
        let Some(ignored) = diverged_incr(redis, "ignore") else {
            continue;
        };
        assert_eq!(ignored, (true, Some(1)), "redis {redis}");
        for behavior in ["panic", "panic-on-replicas"] {
            let stopped = diverged_incr(redis, behavior).unwrap();
            assert_eq!(stopped, (false, None), "redis {redis} {behavior}");
        }
    }
    // petrel's log names the command and the error as Redis's does
    let (master, replica) = pair(false, &[]).unwrap();
    let mut r = replica.raw();
    r.cmd(&["CONFIG", "SET", "replica-read-only", "no"]);
    r.cmd(&["SET", "k", "abc"]);
    master.raw().cmd(&["INCR", "k"]);
    assert!(replica.wait_log(
        "== CRITICAL == This replica is sending an error to its master: 'ERR value is not an integer or out of range' after processing the command 'incr'",
        Duration::from_secs(30)
    ));
    // a writable replica does not stop, whatever the setting
    r.cmd(&["CONFIG", "SET", "propagation-error-behavior", "panic"]);
    master.raw().cmd(&["INCR", "k"]);
    master.raw().cmd(&["SET", "after", "1"]);
    caught_up(&master, &replica);
    assert_eq!(info_num(&mut r, "stats", "unexpected_error_replies"), 2);
}

/// A replica whose background save failed (its directory removed, with
/// a save point and `stop-writes-on-bgsave-error yes`): refuses its
/// clients' writes, and for its master's next write stops
/// (`replica-ignore-disk-write-errors no`) or applies it (`yes`).
/// Returns (still running, the master's write is there).
fn write_without_disk(redis: bool, ignore: &str) -> Option<(bool, bool)> {
    let dir = TempDir::new("no-disk");
    let d = dir.path().display().to_string();
    let args = [
        ("dir", d.as_str()),
        ("save", "3600 1"),
        ("replica-ignore-disk-write-errors", ignore),
    ];
    let (master, mut replica) = pair(redis, &args)?;
    std::fs::remove_dir_all(dir.path()).unwrap();
    let mut r = replica.raw();
    r.cmd(&["BGSAVE"]);
    wait_for("the background save to fail", || {
        info_field(&mut r, "persistence", "rdb_last_bgsave_status").as_deref() == Some("err")
            && info_num(&mut r, "persistence", "rdb_bgsave_in_progress") == 0
    });
    let misconf = r.cmd(&["SET", "x", "1"]);
    assert!(
        matches!(&misconf, Value::Error(e) if e.starts_with(b"MISCONF")),
        "{misconf:?}"
    );
    master.raw().cmd(&["SET", "k", "v"]);
    if ignore == "no" {
        return Some((replica.wait_exit(Duration::from_secs(30)).is_none(), false));
    }
    caught_up(&master, &replica);
    let applied = r.cmd(&["GET", "k"]) == Value::Bulk(b"v".to_vec());
    Some((replica.is_alive(), applied))
}

#[test]
fn a_master_write_on_a_replica_that_cannot_persist() {
    for redis in [false, true] {
        let Some(stops) = write_without_disk(redis, "no") else {
            continue;
        };
        assert_eq!(stops, (false, false), "redis {redis}: the replica stops");
        let goes_on = write_without_disk(redis, "yes").unwrap();
        assert_eq!(goes_on, (true, true), "redis {redis}: the write is applied");
    }
}

/// An AOF whose incr file ends with a command that fails on load (INCR of
/// a string): loaded and counted by default, the end of the server under
/// `propagation-error-behavior panic`, not under `panic-on-replicas`.
/// Returns (started, unexpected_error_replies, k) for each behavior.
fn aof_with_a_failing_command(redis: bool) -> Option<Vec<(bool, i64, Value)>> {
    let dir = TempDir::new("aof-error");
    let d = dir.path().display().to_string();
    let args = [("dir", d.as_str()), ("appendonly", "yes")];
    let mut first = node(redis, &args)?;
    let mut c = first.raw();
    wait_for("the first AOF base", || {
        info_num(&mut c, "persistence", "aof_rewrite_in_progress") == 0
    });
    c.cmd(&["SET", "k", "abc"]);
    c.send_cmd(&["SHUTDOWN", "NOSAVE"]);
    assert!(first.wait_exit(Duration::from_secs(30)).is_some());
    let aof = dir.path().join("appendonlydir");
    let incr = std::fs::read_dir(&aof)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".incr.aof"))
        .expect("an incr file");
    let mut text = std::fs::read(&incr).unwrap();
    text.extend_from_slice(b"*2\r\n$4\r\nINCR\r\n$1\r\nk\r\n");
    std::fs::write(&incr, text).unwrap();
    let mut out = Vec::new();
    for behavior in ["ignore", "panic-on-replicas", "panic"] {
        let opts = Opts::new(&args).arg("propagation-error-behavior", behavior);
        if behavior == "panic" {
            // The server stops while loading: it never serves.
            let bin = if redis {
                redis_server_bin()
            } else {
                env!("CARGO_BIN_EXE_petrel").to_string()
            };
            let mut cmd = std::process::Command::new(bin);
            for (n, v) in &opts.args {
                cmd.arg(format!("--{n}")).arg(v);
            }
            cmd.args(["--port", "0", "--save", ""])
                .current_dir(dir.path());
            let mut child = cmd
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            let end = std::time::Instant::now() + Duration::from_secs(60);
            let status = loop {
                if let Some(st) = child.try_wait().unwrap() {
                    break Some(st);
                }
                if std::time::Instant::now() > end {
                    let _ = child.kill();
                    let _ = child.wait();
                    break None;
                }
                std::thread::sleep(Duration::from_millis(50));
            };
            let stopped = status.is_some_and(|st| !st.success());
            out.push((!stopped, 0, Value::NullBulk));
            continue;
        }
        let s = if redis {
            RefRedis::start_with(opts)?
        } else {
            Server::start_with(opts)
        };
        let mut c = s.raw();
        wait_for("the AOF to load", || {
            info_num(&mut c, "persistence", "loading") == 0
        });
        out.push((
            true,
            info_num(&mut c, "stats", "unexpected_error_replies"),
            c.cmd(&["GET", "k"]),
        ));
    }
    Some(out)
}

#[test]
fn an_error_while_loading_the_aof() {
    let want = vec![
        (true, 1, Value::Bulk(b"abc".to_vec())),
        (true, 1, Value::Bulk(b"abc".to_vec())),
        (false, 0, Value::NullBulk),
    ];
    for redis in [false, true] {
        if let Some(got) = aof_with_a_failing_command(redis) {
            assert_eq!(got, want, "redis {redis}");
        }
    }
}
