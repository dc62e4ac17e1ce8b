//! `maxclients` against the open-file limit at startup, side by side with
//! redis-server 7.0: each server is started under a low `ulimit -n`, and
//! the log lines about the limit and `CONFIG GET maxclients` must be the
//! same. A low soft limit under a high hard one is raised; a low hard
//! limit (no CAP_SYS_RESOURCE) makes both servers reduce `maxclients`.

mod common;
use common::*;
use resp::Value;
use std::time::Duration;

/// Starts `bin` under `ulimit <ulimit>`; returns it with its port once it
/// answers.
fn start_limited(bin: &str, ulimit: &str, extra: &[&str], dir: &TempDir) -> (Proc, u16) {
    let port = free_port();
    let mut args: Vec<String> = vec![
        "-c".into(),
        format!("ulimit {ulimit} && exec \"$0\" \"$@\""),
        bin.into(),
        "--port".into(),
        port.to_string(),
        "--save".into(),
        String::new(),
        "--dir".into(),
        dir.path().display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let p = Proc::spawn("sh", &args, dir.path()).expect("spawn");
    let up = wait_until(Duration::from_secs(15), || RawConn::try_tcp(port).is_ok());
    assert!(up, "{bin} did not start:\n{}", p.log());
    (p, port)
}

/// The log lines about open files and maxclients, without pid and time.
fn limit_lines(log: &str) -> Vec<String> {
    log.lines()
        .filter(|l| {
            l.contains("open files")
                || l.contains("max file descriptors")
                || l.contains("maxclients")
                || l.contains("NOFILE")
        })
        .map(|l| {
            let i = l.find(" # ").or_else(|| l.find(" * ")).unwrap_or(0);
            l[i..].to_string()
        })
        .collect()
}

fn compare(ulimit: &str, extra: &[&str]) -> (Vec<String>, Value) {
    let mut got = Vec::new();
    for bin in [PETREL_BIN.to_string(), redis_server_bin()] {
        let dir = TempDir::new("nofile");
        let (mut p, port) = start_limited(&bin, ulimit, extra, &dir);
        let mut c = RawConn::tcp(port);
        let max = c.cmd(&["CONFIG", "GET", "maxclients"]);
        // Let the log reach the pipe.
        std::thread::sleep(Duration::from_millis(100));
        got.push((limit_lines(&p.log()), max));
        p.kill();
    }
    assert_eq!(got[0], got[1], "petrel (left) vs redis-server (right)");
    got.remove(0)
}

fn maxclients(n: u64) -> Value {
    Value::Array(vec![
        Value::Bulk(b"maxclients".to_vec()),
        Value::Bulk(n.to_string().into_bytes()),
    ])
}

#[test]
fn maxclients_fits_the_open_file_limit_like_redis() {
    if !redis_available() {
        return;
    }
    let hard = std::process::Command::new("sh")
        .args(["-c", "ulimit -Hn"])
        .output()
        .unwrap();
    let hard = String::from_utf8_lossy(&hard.stdout).trim().to_string();
    if hard != "unlimited" && hard.parse::<u64>().unwrap() < 10_032 {
        eprintln!("hard open-file limit {hard} < 10032: the raising case skipped");
    } else {
        // A low soft limit is raised to what the default maxclients needs.
        let (lines, max) = compare("-Sn 100", &[]);
        assert_eq!(
            lines,
            [" * Increased maximum number of open files to 10032 (it was originally set to 100)."]
        );
        assert_eq!(max, maxclients(10_000));
    }
    // A low hard limit cannot be raised without privileges (root in a
    // container usually lacks CAP_SYS_RESOURCE too): maxclients shrinks.
    let (lines, max) = compare("-n 100", &["--maxclients", "500"]);
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    if lines.len() == 1 {
        // Privileged: raised like the first case.
        assert_eq!(max, maxclients(500));
        return;
    }
    assert_eq!(
        lines,
        [
            " # You requested maxclients of 500 requiring at least 532 max file descriptors.",
            " # Server can't set maximum open files to 532 because of OS error: Operation not permitted.",
            " # Current maximum open files is 100. maxclients has been reduced to 68 to compensate for low ulimit. If you need higher maxclients increase 'ulimit -n'."
        ]
    );
    assert_eq!(max, maxclients(68));
}

/// Descriptors of process `pid` in use.
fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count())
        .unwrap_or(0)
}

/// On EMFILE the acceptor logs and keeps serving: a client that connects
/// while no descriptor is free waits in the listen backlog and is served as
/// soon as one is freed (edge-triggered polling would otherwise never report
/// it again), and the clients already connected are served throughout.
#[test]
fn accepting_survives_running_out_of_descriptors() {
    let s = TestServer::start(&[("threads", "2")]);
    let pid = s.pid();
    let mut first = s.raw();
    assert_eq!(first.cmd(&["PING"]), Value::Simple(b"PONG".to_vec()));
    // Room for a few more connections, then none.
    let limit = open_fds(pid) + 4;
    let status = std::process::Command::new("prlimit")
        .arg(format!("--pid={pid}"))
        .arg(format!("--nofile={limit}:{limit}"))
        .status()
        .expect("prlimit");
    assert!(status.success());
    let mut held = Vec::new();
    for _ in 0..4 {
        let mut c = s.raw();
        assert_eq!(c.cmd(&["PING"]), Value::Simple(b"PONG".to_vec()));
        held.push(c);
    }
    // This one is accepted by the kernel but not by the server yet.
    let mut waiting = s.raw();
    waiting.send_cmd(&["SET", "k", "v"]);
    let logged = wait_until(Duration::from_secs(10), || {
        s.log()
            .contains("Accepting client connection: Too many open files")
    });
    assert!(logged, "{}", s.log());
    // The connected clients are still served.
    assert_eq!(first.cmd(&["PING"]), Value::Simple(b"PONG".to_vec()));
    // A descriptor comes free: the waiting client is served.
    std::thread::sleep(Duration::from_millis(500));
    drop(held.pop());
    assert_eq!(waiting.read_reply(), Value::Simple(b"OK".to_vec()));
    assert_eq!(
        first.cmd(&["GET", "k"]),
        Value::Bulk(b"v".to_vec()),
        "the waiting client's command ran"
    );
    // The warning is rate limited, not one line per retry.
    let lines = s
        .log()
        .lines()
        .filter(|l| l.contains("Too many open files"))
        .count();
    assert!(lines <= 15, "{lines} warnings");
}
