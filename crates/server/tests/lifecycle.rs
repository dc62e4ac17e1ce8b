//! Process lifecycle: startup log line, SHUTDOWN, SIGTERM/SIGINT, and panic
//! isolation (a panic while serving one connection closes only that one).

mod common;
use common::*;

use std::time::Duration;

#[test]
fn startup_line() {
    let s = TestServer::start(&[("threads", "3")]);
    let log = s.log();
    let line = log
        .lines()
        .find(|l| l.contains("started"))
        .unwrap_or_else(|| panic!("no startup line:\n{log}"));
    assert!(line.contains(&format!("port={}", s.port())), "{line}");
    assert!(line.contains("threads=3"), "{line}");
    assert!(line.contains(&format!("pid={}", s.pid())), "{line}");
    assert!(line.contains(env!("CARGO_PKG_VERSION")), "{line}");
    assert!(
        log.contains("Ready to accept connections"),
        "startup log:\n{log}"
    );
}

#[test]
fn shutdown_command_exits_zero() {
    let mut s = TestServer::start(&[]);
    let mut other = s.raw();
    assert_eq!(other.cmd(&["PING"]), Value::simple("PONG"));
    let mut c = s.raw();
    // Errors first: unknown flag, SAVE without persistence, ABORT with nothing to abort.
    assert_eq!(
        c.cmd(&["SHUTDOWN", "PLEASE"]),
        Value::Error(b"ERR syntax error".to_vec())
    );
    assert!(matches!(c.cmd(&["SHUTDOWN", "ABORT"]), Value::Error(_)));
    assert!(s.is_alive());
    c.send_cmd(&["SHUTDOWN", "NOSAVE"]);
    // Like Redis: no reply, the connection just closes.
    assert!(c.closed_within(Duration::from_secs(5)));
    assert!(c.pending().is_empty(), "{:?}", c.pending());
    let st = s.wait_exit(Duration::from_secs(10)).expect("process exits");
    assert_eq!(st.code(), Some(0), "{}", s.log());
    let log = s.log();
    assert!(log.contains("shutdown"), "{log}");
    assert!(log.contains("ready to exit"), "{log}");
    assert!(other.closed_within(Duration::from_secs(2)));
}

#[test]
fn shutdown_plain() {
    let mut s = TestServer::start(&[]);
    let mut c = s.client();
    let _ = redis::cmd("SHUTDOWN").query::<()>(&mut c);
    let st = s.wait_exit(Duration::from_secs(10)).expect("process exits");
    assert_eq!(st.code(), Some(0), "{}", s.log());
}

fn graceful_signal(sig: i32, name: &str) {
    let mut s = TestServer::start(&[]);
    let mut c = s.raw();
    assert_eq!(c.cmd(&["PING"]), Value::simple("PONG"));
    s.signal(sig);
    let st = s
        .wait_exit(Duration::from_secs(10))
        .unwrap_or_else(|| panic!("no exit after {name}:\n{}", s.log()));
    assert_eq!(st.code(), Some(0), "{name}: {st}\n{}", s.log());
    let log = s.log();
    assert!(log.contains(&format!("Received {name}")), "{log}");
    assert!(log.contains("ready to exit"), "{log}");
    assert!(c.closed_within(Duration::from_secs(2)));
}

#[test]
fn sigterm_graceful() {
    graceful_signal(libc::SIGTERM, "SIGTERM");
}

#[test]
fn sigint_graceful() {
    graceful_signal(libc::SIGINT, "SIGINT");
}

#[test]
fn unix_socket_removed_on_sigterm() {
    let dir = TempDir::new("sigsock");
    let path = dir.join("s.sock").display().to_string();
    let mut s = TestServer::start(&[("unixsocket", &path)]);
    assert!(std::path::Path::new(&path).exists());
    s.signal(libc::SIGTERM);
    assert!(s.wait_exit(Duration::from_secs(10)).is_some());
    assert!(!std::path::Path::new(&path).exists());
}

#[test]
fn debug_command_disabled_by_default() {
    let s = TestServer::start(&[]);
    let mut c = s.raw();
    match c.cmd(&["DEBUG", "PANIC-CONNECTION"]) {
        Value::Error(e) => {
            let e = String::from_utf8_lossy(&e).into_owned();
            assert!(
                e.starts_with("ERR DEBUG command not allowed")
                    || e.starts_with("ERR unknown command"),
                "{e}"
            );
        }
        other => panic!("{other}"),
    }
    assert_eq!(c.cmd(&["PING"]), Value::simple("PONG"));
}

#[test]
fn panic_closes_only_that_connection() {
    let mut s = TestServer::start(&[("enable-debug-command", "yes")]);
    let mut bystander = s.raw();
    assert_eq!(bystander.cmd(&["PING"]), Value::simple("PONG"));
    let mut victim = s.raw();
    victim.send_cmd(&["DEBUG", "PANIC-CONNECTION"]);
    assert!(
        victim.closed_within(Duration::from_secs(5)),
        "the panicking connection must be closed"
    );
    assert!(s.wait_log("Panic", Duration::from_secs(2)), "{}", s.log());
    assert_eq!(bystander.cmd(&["ECHO", "alive"]), Value::bulk("alive"));
    // Several panics in a row on the same worker threads.
    for _ in 0..4 {
        let mut v = s.raw();
        v.send_cmd(&["DEBUG", "PANIC-CONNECTION"]);
        assert!(v.closed_within(Duration::from_secs(5)));
    }
    assert_eq!(bystander.cmd(&["PING"]), Value::simple("PONG"));
    s.assert_alive();
}

#[test]
fn logfile_and_loglevel() {
    let dir = TempDir::new("logfile");
    let path = dir.join("petrel.log");
    let p = path.display().to_string();
    let s = TestServer::start(&[("logfile", &p)]);
    let read = || std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        wait_until(Duration::from_secs(2), || read()
            .contains("Ready to accept")),
        "log file: {}",
        read()
    );
    assert!(read().contains(&format!("pid={}", s.pid())), "{}", read());
    assert!(!s.log().contains("Ready to accept"), "stdout: {}", s.log());
    // Protocol errors are logged at verbose level: not at notice...
    let mut c = s.raw();
    c.expect_error_and_close(b"*1\r\n$x\r\n", "ERR Protocol error: invalid bulk length");
    std::thread::sleep(Duration::from_millis(100));
    assert!(!read().contains("Protocol error"), "{}", read());
    // ...but once CONFIG SET loglevel verbose is in effect, they are.
    let mut admin = s.raw();
    assert_eq!(
        admin.cmd(&["CONFIG", "SET", "loglevel", "verbose"]),
        Value::simple("OK")
    );
    let mut c = s.raw();
    c.expect_error_and_close(b"*1\r\n$x\r\n", "ERR Protocol error: invalid bulk length");
    assert!(
        wait_until(Duration::from_secs(2), || read().contains("Protocol error")),
        "{}",
        read()
    );
    // loglevel warning at startup hides notices.
    let s2 = TestServer::start(&[("loglevel", "warning")]);
    assert!(!s2.log().contains("Ready to accept"), "{}", s2.log());
}

/// Starts `bin` (petrel, or redis-server) on a free port with `args`
/// and `env`, in `dir`, its output discarded. Returns the child and its
/// port.
fn spawn_supervised(
    bin: &str,
    args: &[&str],
    env: (&str, &str),
    dir: &std::path::Path,
) -> (std::process::Child, u16) {
    let port = free_port();
    let child = std::process::Command::new(bin)
        .args(["--port", &port.to_string(), "--save", ""])
        .args(args)
        .env(env.0, env.1)
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    (child, port)
}

fn ping_ok(port: u16) -> bool {
    match RawConn::try_tcp(port) {
        Ok(mut c) => {
            c.timeout = Duration::from_millis(500);
            matches!(c.try_cmd(&["PING"]), Reply::Value(Value::Simple(ref p)) if p == b"PONG")
        }
        Err(_) => false,
    }
}

/// The binaries to compare: petrel, and redis-server when installed.
fn petrel_and_redis() -> Vec<String> {
    let mut v = vec![PETREL_BIN.to_string()];
    if redis_available() {
        v.push(redis_server_bin());
    }
    v
}

/// `supervised systemd` (and `auto` with `NOTIFY_SOCKET` set): the
/// server tells systemd it is loading, ready, and stopping, with Redis's
/// datagrams (the product name aside).
#[test]
fn supervised_by_systemd_notifies_as_redis() {
    let dir = TempDir::new("sd-notify");
    for bin in petrel_and_redis() {
        for mode in ["systemd", "auto"] {
            let path = dir.join("notify.sock");
            let _ = std::fs::remove_file(&path);
            let sock = std::os::unix::net::UnixDatagram::bind(&path).unwrap();
            sock.set_read_timeout(Some(Duration::from_secs(30)))
                .unwrap();
            let (mut child, port) = spawn_supervised(
                &bin,
                &["--supervised", mode],
                ("NOTIFY_SOCKET", &path.display().to_string()),
                dir.path(),
            );
            let mut got = Vec::new();
            let mut recv = |until: &str| loop {
                let mut buf = [0u8; 512];
                let n = sock.recv(&mut buf).expect("a datagram from the server");
                let m = String::from_utf8_lossy(&buf[..n]).replace("Redis", "<name>");
                let done = m.contains(until);
                got.push(m.replace("Petrel", "<name>"));
                if done {
                    break;
                }
            };
            recv("READY=1");
            RawConn::tcp(port).send_cmd(&["SHUTDOWN", "NOSAVE"]);
            recv("STOPPING=1");
            assert!(child.wait().unwrap().success(), "{bin} {mode}");
            assert_eq!(
                got,
                [
                    "STATUS=<name> is loading...\n",
                    "STATUS=Ready to accept connections\n",
                    "READY=1\n",
                    "STOPPING=1\n"
                ],
                "{bin} {mode}"
            );
        }
    }
}

/// `supervised upstart` with `UPSTART_JOB` set: the server stops itself
/// (SIGSTOP) once started, as upstart's `expect stop` wants, and serves
/// once continued.
#[test]
fn supervised_by_upstart_stops_itself_until_continued() {
    let dir = TempDir::new("upstart");
    for bin in petrel_and_redis() {
        let (mut child, port) = spawn_supervised(
            &bin,
            &["--supervised", "upstart"],
            ("UPSTART_JOB", "petrel-test"),
            dir.path(),
        );
        let stat = format!("/proc/{}/stat", child.id());
        let state = || {
            let s = std::fs::read_to_string(&stat).unwrap_or_default();
            s.rsplit(')')
                .next()
                .unwrap_or("")
                .split_whitespace()
                .next()
                .map(String::from)
        };
        assert!(
            wait_until(Duration::from_secs(30), || state().as_deref() == Some("T")),
            "{bin}: {:?}",
            state()
        );
        // SAFETY: kill(2) on our own child.
        unsafe {
            libc::kill(child.id() as i32, libc::SIGCONT);
        }
        assert!(
            wait_until(Duration::from_secs(30), || ping_ok(port)),
            "{bin}"
        );
        RawConn::tcp(port).send_cmd(&["SHUTDOWN", "NOSAVE"]);
        assert!(child.wait().unwrap().success(), "{bin}");
    }
}

/// `oom-score-adj`: the process's OOM score (`/proc/<pid>/oom_score_adj`)
/// follows the setting and the role (master: the first value, replica:
/// the second), relative to the score it started with or absolute, and
/// goes back to that score with `no`: the same on petrel and
/// redis-server (scores only raised: lowering one needs a privilege the
/// test may not have).
#[test]
fn oom_score_adj_follows_the_role_and_the_setting() {
    let base: i32 = std::fs::read_to_string("/proc/self/oom_score_adj")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let mut kinds = vec![Kind::Petrel];
    if redis_available() {
        kinds.push(Kind::Redis);
    }
    for kind in kinds {
        let s = Server::start_opts(
            kind,
            Opts::new(&[
                ("oom-score-adj", "yes"),
                ("oom-score-adj-values", "10 20 30"),
            ]),
        );
        let score = || -> i32 {
            std::fs::read_to_string(format!("/proc/{}/oom_score_adj", s.pid()))
                .unwrap()
                .trim()
                .parse()
                .unwrap()
        };
        let mut c = s.raw();
        let mut seen = vec![score()];
        c.cmd(&["REPLICAOF", "127.0.0.1", "1"]);
        seen.push(score());
        c.cmd(&["REPLICAOF", "NO", "ONE"]);
        seen.push(score());
        assert_eq!(
            c.cmd(&["CONFIG", "SET", "oom-score-adj", "absolute"]),
            Value::Simple(b"OK".to_vec())
        );
        seen.push(score());
        c.cmd(&["CONFIG", "SET", "oom-score-adj-values", "40 50 60"]);
        seen.push(score());
        c.cmd(&["CONFIG", "SET", "oom-score-adj", "no"]);
        seen.push(score());
        let clamp = |v: i32| v.clamp(-1000, 1000);
        assert_eq!(
            seen,
            vec![
                clamp(base + 10),
                clamp(base + 20),
                clamp(base + 10),
                10,
                40,
                base
            ],
            "{kind:?}"
        );
        assert_eq!(
            c.cmd(&["CONFIG", "GET", "oom-score-adj-values"]),
            Value::Array(vec![
                Value::Bulk(b"oom-score-adj-values".to_vec()),
                Value::Bulk(b"40 50 60".to_vec())
            ])
        );
    }
}

/// `disable-thp yes` (the default): where the kernel gives transparent
/// huge pages to every process (`[always]`), the server turns them off
/// for itself, as redis-server does; under `madvise` or `never` it leaves
/// the flag alone. Compared through `/proc/<pid>/status`.
#[test]
fn disable_thp_matches_redis_for_this_kernel() {
    let Ok(mode) = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled") else {
        return;
    };
    let thp_flag = |pid: u32| -> Option<String> {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("THP_enabled:"))
            .map(|v| v.trim().to_string())
    };
    let want = if mode.contains("[always]") { "0" } else { "1" };
    let mut kinds = vec![Kind::Petrel];
    if redis_available() {
        kinds.push(Kind::Redis);
    }
    for kind in kinds {
        let s = Server::start_opts(kind, Opts::default());
        if let Some(flag) = thp_flag(s.pid()) {
            assert_eq!(flag, want, "{kind:?} under '{}'", mode.trim());
        }
    }
}
