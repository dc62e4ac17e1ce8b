//! Every limit a client can hit: proto-max-bulk-len, client-query-buffer-limit,
//! client-output-buffer-limit, maxclients, timeout, requirepass and the
//! unauthenticated request limits. After each, the server keeps serving.

mod common;
use common::*;

use std::time::{Duration, Instant};

#[test]
fn proto_max_bulk_len() {
    let mut s = TestServer::start(&[]);
    let mut admin = s.raw();
    assert_eq!(
        admin.cmd(&["CONFIG", "SET", "proto-max-bulk-len", "1mb"]),
        Value::simple("OK")
    );
    // Exactly at the limit is fine.
    let ok = vec![b'x'; 1024 * 1024];
    let mut c = s.raw();
    assert_eq!(c.cmd(&[b"ECHO".as_slice(), &ok]), Value::Bulk(ok));
    // One byte more is a protocol error, before any data is sent.
    let mut c = s.raw();
    c.expect_error_and_close(
        b"*2\r\n$4\r\nECHO\r\n$1048577\r\n",
        "ERR Protocol error: invalid bulk length",
    );
    // The minimum is 1mb.
    assert!(matches!(
        admin.cmd(&["CONFIG", "SET", "proto-max-bulk-len", "1000"]),
        Value::Error(_)
    ));
    s.assert_alive();
}

#[test]
fn client_query_buffer_limit() {
    let mut s = TestServer::start(&[]);
    let mut admin = s.raw();
    assert_eq!(
        admin.cmd(&["CONFIG", "SET", "client-query-buffer-limit", "1mb"]),
        Value::simple("OK")
    );
    let mut c = s.raw();
    // A 3 MB argument of which 2 MB are sent: the query buffer passes 1 MB
    // and the client is closed without a reply.
    let _ = c.try_send(b"*2\r\n$4\r\nECHO\r\n$3145728\r\n");
    let chunk = vec![b'q'; 64 * 1024];
    for _ in 0..32 {
        if c.try_send(&chunk).is_err() {
            break;
        }
    }
    assert!(
        c.closed_within(Duration::from_secs(5)),
        "client over the query buffer limit must be closed"
    );
    assert!(c.pending().is_empty(), "no reply expected");
    assert!(
        s.wait_log("max query buffer", Duration::from_secs(2)),
        "{}",
        s.log()
    );
    s.assert_alive();
}

#[test]
fn client_output_buffer_limit_normal_hard() {
    let mut s = TestServer::start(&[]);
    let mut admin = s.raw();
    assert_eq!(
        admin.cmd(&[
            "CONFIG",
            "SET",
            "client-output-buffer-limit",
            "normal 256kb 0 0"
        ]),
        Value::simple("OK")
    );
    // (Don't shrink the client's receive buffer: with a window smaller than
    // the loopback MSS the close can take tens of seconds to arrive.)
    let mut c = s.raw();
    // Ask for far more output than the socket buffers hold, never reading.
    let arg = vec![b'o'; 512 * 1024];
    let frame = resp::encode_command(&[b"ECHO".as_slice(), &arg]);
    let start = Instant::now();
    let mut sent = 0;
    while sent < 64 && start.elapsed() < Duration::from_secs(10) {
        if c.try_send(&frame).is_err() {
            break;
        }
        sent += 1;
    }
    assert!(
        s.wait_log("output buffer limits", Duration::from_secs(10)),
        "{}",
        s.log()
    );
    assert!(
        c.closed_within(Duration::from_secs(20)),
        "client over its output hard limit must be disconnected"
    );
    s.assert_alive();
    // Default (0 0 0): no limit for normal clients.
    let mut s2 = TestServer::start(&[]);
    let mut c = s2.raw();
    let big = vec![b'b'; 4 << 20];
    for _ in 0..3 {
        c.send_cmd(&[b"ECHO".as_slice(), &big]);
    }
    std::thread::sleep(Duration::from_millis(200));
    for _ in 0..3 {
        assert_eq!(c.read_reply(), Value::Bulk(big.clone()));
    }
    s2.assert_alive();
}

#[test]
fn maxclients() {
    let s = TestServer::start(&[("maxclients", "5")]);
    // The readiness probe's connection may still be counted for a moment.
    assert!(wait_until(Duration::from_secs(5), || {
        let mut conns: Vec<RawConn> = Vec::new();
        for _ in 0..5 {
            let mut c = s.raw();
            c.timeout = Duration::from_secs(2);
            if c.try_cmd(&["PING"]) != Reply::Value(Value::simple("PONG")) {
                return false;
            }
            conns.push(c);
        }
        let mut sixth = s.raw();
        let _ = sixth.try_send(b"PING\r\n");
        let r = sixth.try_read_reply();
        assert_eq!(
            r,
            Reply::Value(Value::Error(b"ERR max number of clients reached".to_vec()))
        );
        sixth.assert_closed();
        // The five keep working; closing one frees a slot.
        for c in conns.iter_mut() {
            assert_eq!(c.cmd(&["PING"]), Value::simple("PONG"));
        }
        drop(conns.pop());
        wait_until(Duration::from_secs(3), || {
            let mut c = s.raw();
            c.timeout = Duration::from_secs(2);
            c.try_cmd(&["PING"]) == Reply::Value(Value::simple("PONG"))
        })
    }));
    // Connections closed above are released asynchronously.
    assert!(wait_until(Duration::from_secs(5), || {
        let mut c = s.raw();
        c.timeout = Duration::from_secs(2);
        c.try_cmd(&["PING"]) == Reply::Value(Value::simple("PONG"))
    }));
}

#[test]
fn maxclients_matches_redis() {
    let Some(r) = RefRedis::start_with(Opts::new(&[("maxclients", "3")])) else {
        return;
    };
    let p = TestServer::start(&[("maxclients", "3")]);
    let mut replies = Vec::new();
    for s in [&p, &r] {
        std::thread::sleep(Duration::from_millis(100));
        let keep: Vec<RawConn> = (0..3)
            .map(|_| {
                let mut c = s.raw();
                assert_eq!(c.cmd(&["PING"]), Value::simple("PONG"));
                c
            })
            .collect();
        let mut extra = s.raw();
        let _ = extra.try_send(b"PING\r\n");
        replies.push(extra.try_read_reply());
        drop(keep);
    }
    assert_eq!(replies[0], replies[1], "petrel vs redis");
}

#[test]
fn idle_timeout() {
    let mut s = TestServer::start(&[("timeout", "1")]);
    let mut idle = s.raw();
    assert_eq!(idle.cmd(&["PING"]), Value::simple("PONG"));
    // A monitor is exempt.
    let mut mon = s.raw();
    assert_eq!(mon.cmd(&["MONITOR"]), Value::simple("OK"));
    let start = Instant::now();
    std::thread::scope(|sc| {
        // A client that keeps talking is not closed.
        let port = s.port();
        sc.spawn(move || {
            let mut busy = RawConn::tcp(port);
            while start.elapsed() < Duration::from_millis(2600) {
                std::thread::sleep(Duration::from_millis(300));
                assert_eq!(busy.cmd(&["PING"]), Value::simple("PONG"));
            }
        });
        assert!(
            idle.closed_within(Duration::from_secs(5)),
            "idle client not closed"
        );
        let took = start.elapsed();
        assert!(
            took >= Duration::from_millis(900),
            "closed too early: {took:?}"
        );
    });
    // The monitor saw the busy client's PINGs and is still open.
    assert!(mon.read_line().unwrap().ends_with("\"PING\""));
    assert!(!mon.closed_within(Duration::from_millis(100)));
    s.assert_alive();
}

/// With many connections the cron visits a share of them per call (issue
/// 27): every idle one is still closed after about the timeout, and one
/// that keeps talking is not.
#[test]
fn idle_timeout_with_many_clients() {
    let mut s = TestServer::start(&[("timeout", "1"), ("threads", "2")]);
    let n = 300;
    let mut idle: Vec<RawConn> = (0..n)
        .map(|_| {
            let mut c = s.raw();
            assert_eq!(c.cmd(&["PING"]), Value::simple("PONG"));
            c
        })
        .collect();
    let start = Instant::now();
    std::thread::scope(|sc| {
        let port = s.port();
        let busy = sc.spawn(move || {
            let mut busy = RawConn::tcp(port);
            while start.elapsed() < Duration::from_millis(4000) {
                std::thread::sleep(Duration::from_millis(300));
                assert_eq!(busy.cmd(&["PING"]), Value::simple("PONG"));
            }
            busy
        });
        for (i, c) in idle.iter_mut().enumerate() {
            let left = Duration::from_secs(8).saturating_sub(start.elapsed());
            assert!(c.closed_within(left), "idle client {i} of {n} not closed");
        }
        let took = start.elapsed();
        assert!(
            took >= Duration::from_millis(900),
            "closed too early: {took:?}"
        );
        let mut busy = busy.join().unwrap();
        assert_eq!(busy.cmd(&["PING"]), Value::simple("PONG"));
    });
    s.assert_alive();
}

#[test]
fn requirepass_auth_noauth() {
    let mut s = TestServer::start(&[("requirepass", "s3cret")]);
    let mut c = s.raw();
    assert_eq!(
        c.cmd(&["PING"]),
        Value::Error(b"NOAUTH Authentication required.".to_vec())
    );
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "port"]),
        Value::Error(b"NOAUTH Authentication required.".to_vec())
    );
    assert_eq!(
        c.cmd(&["AUTH", "wrong"]),
        Value::Error(b"WRONGPASS invalid username-password pair or user is disabled.".to_vec())
    );
    assert_eq!(
        c.cmd(&["AUTH", "default", "wrong"]),
        Value::Error(b"WRONGPASS invalid username-password pair or user is disabled.".to_vec())
    );
    assert_eq!(c.cmd(&["AUTH", "s3cret"]), Value::simple("OK"));
    assert_eq!(c.cmd(&["PING"]), Value::simple("PONG"));
    // RESET de-authenticates.
    assert_eq!(c.cmd(&["RESET"]), Value::simple("RESET"));
    assert_eq!(
        c.cmd(&["ECHO", "x"]),
        Value::Error(b"NOAUTH Authentication required.".to_vec())
    );
    // HELLO with AUTH authenticates and switches protocol at once.
    assert!(matches!(
        c.cmd(&["HELLO", "3", "AUTH", "default", "s3cret"]),
        Value::Map(_)
    ));
    assert_eq!(c.cmd(&["ECHO", "x"]), Value::bulk("x"));

    // The redis crate with a password in the URL works; without one it fails.
    let mut con = s.client();
    let pong: String = redis::cmd("PING").query(&mut con).unwrap();
    assert_eq!(pong, "PONG");
    let url = format!("redis://127.0.0.1:{}/", s.port());
    let mut anon = redis::Client::open(url).unwrap().get_connection().unwrap();
    let err = redis::cmd("PING").query::<String>(&mut anon).unwrap_err();
    assert_eq!(err.code(), Some("NOAUTH"), "{err}");

    // CONFIG SET requirepass takes effect for new and existing clients.
    let mut admin = s.raw();
    admin.cmd(&["AUTH", "s3cret"]);
    assert_eq!(
        admin.cmd(&["CONFIG", "SET", "requirepass", "other"]),
        Value::simple("OK")
    );
    let mut n = s.raw();
    assert_eq!(
        n.cmd(&["PING"]),
        Value::Error(b"NOAUTH Authentication required.".to_vec())
    );
    assert_eq!(n.cmd(&["AUTH", "other"]), Value::simple("OK"));
    admin.cmd(&["CONFIG", "SET", "requirepass", "s3cret"]);
    s.assert_alive();
}

#[test]
fn unauthenticated_request_limits() {
    let mut s = TestServer::start(&[("requirepass", "pw")]);
    // More than 10 arguments before AUTH.
    let mut c = s.raw();
    c.expect_error_and_close(
        b"*11\r\n",
        "ERR Protocol error: unauthenticated multibulk length",
    );
    // A bulk larger than 16 KiB before AUTH.
    let mut c = s.raw();
    c.expect_error_and_close(
        b"*2\r\n$4\r\nECHO\r\n$16385\r\n",
        "ERR Protocol error: unauthenticated bulk length",
    );
    // Just under the limits is fine (NOAUTH, connection open).
    let mut c = s.raw();
    // (Unknown command and arity errors come before NOAUTH, as in Redis.)
    let mut args: Vec<String> = vec!["PING".into()];
    args.extend((1..10).map(|i| i.to_string()));
    assert_eq!(
        c.cmd(&args),
        Value::Error(b"NOAUTH Authentication required.".to_vec())
    );
    let mut frame = b"*2\r\n$4\r\nECHO\r\n$16384\r\n".to_vec();
    frame.extend(std::iter::repeat_n(b'u', 16384));
    frame.extend_from_slice(b"\r\n");
    c.send(&frame);
    assert_eq!(
        c.read_reply(),
        Value::Error(b"NOAUTH Authentication required.".to_vec())
    );
    // After AUTH the normal limits apply.
    assert_eq!(c.cmd(&["AUTH", "pw"]), Value::simple("OK"));
    let many: Vec<String> = (0..100).map(|i| i.to_string()).collect();
    let mut cmd = vec!["PING".to_string()];
    cmd.extend(many);
    assert_eq!(
        c.cmd(&cmd),
        Value::Error(b"ERR wrong number of arguments for 'ping' command".to_vec())
    );
    let big = vec![b'B'; 100_000];
    assert_eq!(c.cmd(&[b"ECHO".as_slice(), &big]), Value::Bulk(big));
    s.assert_alive();
}

/// Announcing a huge bulk must not make the server commit that memory up
/// front (Redis reserves lazily too); otherwise a few clients could exhaust RAM.
#[test]
fn big_bulk_announcement_does_not_commit_memory() {
    let mut s = TestServer::start(&[]);
    let rss_kb = |pid: u32| -> u64 {
        let st = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        st.lines()
            .find(|l| l.starts_with("VmRSS:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    let before = rss_kb(s.pid());
    let mut conns = Vec::new();
    for _ in 0..3 {
        let mut c = s.raw();
        c.send(b"*2\r\n$4\r\nECHO\r\n$400000000\r\nabc");
        conns.push(c);
    }
    std::thread::sleep(Duration::from_millis(300));
    let after = rss_kb(s.pid());
    assert!(
        after < before + 100 * 1024,
        "RSS grew from {before} kB to {after} kB after 3 x 400MB bulk headers"
    );
    s.assert_alive();
    drop(conns);
}

/// Same, when the client keeps sending the data slowly: the server must not
/// zero-fill the whole announced size at once (that commits the memory and
/// stalls every client of the worker thread meanwhile).
#[test]
fn big_bulk_trickle_does_not_commit_memory_or_stall() {
    let s = TestServer::start(&[("threads", "1")]);
    let rss_kb = |pid: u32| -> u64 {
        let st = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        st.lines()
            .find(|l| l.starts_with("VmRSS:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    let mut bystander = s.raw();
    assert_eq!(bystander.cmd(&["PING"]), Value::simple("PONG"));
    let before = rss_kb(s.pid());
    let mut conns = Vec::new();
    for _ in 0..3 {
        let mut c = s.raw();
        c.send(b"*2\r\n$4\r\nECHO\r\n$400000000\r\nabc");
        conns.push(c);
    }
    std::thread::sleep(Duration::from_millis(50));
    for c in conns.iter_mut() {
        c.send(b"defg");
    }
    let t = Instant::now();
    assert_eq!(bystander.cmd(&["PING"]), Value::simple("PONG"));
    let stall = t.elapsed();
    std::thread::sleep(Duration::from_millis(300));
    let after = rss_kb(s.pid());
    assert!(
        after < before + 100 * 1024,
        "RSS grew from {before} kB to {after} kB"
    );
    assert!(stall < Duration::from_millis(100), "PING took {stall:?}");
}

#[test]
fn client_output_buffer_limit_normal_soft() {
    let mut s = TestServer::start(&[("client-output-buffer-limit", "normal 0 256kb 1")]);
    let mut c = s.raw();
    let arg = vec![b's'; 512 * 1024];
    let frame = resp::encode_command(&[b"ECHO".as_slice(), &arg]);
    // ~16 MB of replies, far more than the socket buffers hold: the backlog
    // stays over the soft limit, and after 1 s the client is closed.
    let start = Instant::now();
    for _ in 0..32 {
        if c.try_send(&frame).is_err() {
            break;
        }
    }
    assert!(
        s.wait_log("output buffer limits", Duration::from_secs(10)),
        "{}",
        s.log()
    );
    assert!(
        start.elapsed() >= Duration::from_millis(900),
        "soft limit must allow {:?} < 1 s",
        start.elapsed()
    );
    assert!(c.closed_within(Duration::from_secs(20)));
    s.assert_alive();
}
