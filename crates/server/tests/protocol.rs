//! End-to-end protocol tests: pipelining, inline commands, malformed input
//! (exact error, connection closed, other clients unaffected), RESP3 with
//! the redis crate, MONITOR.

mod common;
use common::*;

use std::time::Duration;

#[test]
fn pipelining_1000_commands_in_one_write() {
    let s = TestServer::start(&[]);
    let mut c = s.raw();
    let mut buf = Vec::new();
    for i in 0..1000 {
        if i % 2 == 0 {
            resp::write_command(&mut buf, &["PING"]);
        } else {
            resp::write_command(&mut buf, &["ECHO", &format!("msg-{i}")]);
        }
    }
    c.send(&buf);
    for i in 0..1000 {
        let v = c.read_reply();
        if i % 2 == 0 {
            assert_eq!(v, Value::simple("PONG"), "reply {i}");
        } else {
            assert_eq!(v, Value::bulk(format!("msg-{i}")), "reply {i}");
        }
    }
    // Inline and multibulk mixed in one write.
    c.send(b"PING\r\n*2\r\n$4\r\nECHO\r\n$1\r\nx\r\nECHO y\r\n");
    assert_eq!(c.read_reply(), Value::simple("PONG"));
    assert_eq!(c.read_reply(), Value::bulk("x"));
    assert_eq!(c.read_reply(), Value::bulk("y"));
}

#[test]
fn pipelining_with_redis_crate_and_split_writes() {
    let s = TestServer::start(&[]);
    let mut con = s.client();
    let mut p = redis::pipe();
    for i in 0..500 {
        p.cmd("ECHO").arg(i);
    }
    let out: Vec<String> = p.query(&mut con).unwrap();
    assert_eq!(out.len(), 500);
    assert_eq!(out[499], "499");

    // A command delivered one byte at a time.
    let mut c = s.raw();
    for b in resp::encode_command(&["ECHO", "slowly"]) {
        c.send(&[b]);
        std::thread::sleep(Duration::from_micros(200));
    }
    assert_eq!(c.read_reply(), Value::bulk("slowly"));
    // A big argument (above the 32 KiB "big arg" threshold) in pieces.
    let big = vec![b'z'; 300_000];
    let frame = resp::encode_command(&[b"ECHO".as_slice(), &big]);
    for chunk in frame.chunks(7777) {
        c.send(chunk);
    }
    assert_eq!(c.read_reply(), Value::Bulk(big));
}

#[test]
fn inline_commands_as_typed_in_telnet() {
    let s = TestServer::start(&[]);
    let mut c = s.raw();
    let cases: &[(&[u8], Value)] = &[
        (b"PING\r\n", Value::simple("PONG")),
        (b"ping\n", Value::simple("PONG")),
        (b"  PING  \r\n", Value::simple("PONG")),
        (b"\r\n\r\nPING\r\n", Value::simple("PONG")),
        (b"ECHO hello\r\n", Value::bulk("hello")),
        (b"ECHO \"a b\"\r\n", Value::bulk("a b")),
        (b"ECHO 'a b'\r\n", Value::bulk("a b")),
        (
            b"ECHO \"\\x41\\x42\\n\\t\\\"\"\r\n",
            Value::bulk("AB\n\t\""),
        ),
        (b"ECHO 'it\\'s'\r\n", Value::bulk("it's")),
        (b"ECHO \"\"\r\n", Value::bulk("")),
        (
            b"NOSUCH a 'b c'\r\n",
            Value::Error(
                b"ERR unknown command 'NOSUCH', with args beginning with: 'a' 'b c' ".to_vec(),
            ),
        ),
        (
            b"ECHO\r\n",
            Value::Error(b"ERR wrong number of arguments for 'echo' command".to_vec()),
        ),
    ];
    for (input, want) in cases {
        c.send(input);
        assert_eq!(
            &c.read_reply(),
            want,
            "input {:?}",
            String::from_utf8_lossy(input)
        );
    }
}

/// Every malformed input: Redis's exact error, the connection is closed,
/// and a client connected before keeps working.
#[test]
fn malformed_input_closes_only_that_connection() {
    let s = TestServer::start(&[]);
    let mut bystander = s.raw();
    assert_eq!(bystander.cmd(&["PING"]), Value::simple("PONG"));
    let digits = "9".repeat(70_000);
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (
            b"*abc\r\n".to_vec(),
            "ERR Protocol error: invalid multibulk length",
        ),
        (
            b"*3000000000\r\n".to_vec(),
            "ERR Protocol error: invalid multibulk length",
        ),
        (
            b"*99999999999999999999\r\n".to_vec(),
            "ERR Protocol error: invalid multibulk length",
        ),
        (
            b"*1\r\n$abc\r\n".to_vec(),
            "ERR Protocol error: invalid bulk length",
        ),
        (
            b"*1\r\n$-1\r\n".to_vec(),
            "ERR Protocol error: invalid bulk length",
        ),
        (
            b"*1\r\n$-5\r\n".to_vec(),
            "ERR Protocol error: invalid bulk length",
        ),
        (
            b"*1\r\n$536870913\r\n".to_vec(),
            "ERR Protocol error: invalid bulk length",
        ),
        (
            b"*1\r\n$9999999999999999999999\r\n".to_vec(),
            "ERR Protocol error: invalid bulk length",
        ),
        (
            b"*1\r\nfoo\r\n".to_vec(),
            "ERR Protocol error: expected '$', got 'f'",
        ),
        (
            b"*2\r\n$4\r\nECHO\r\n:1\r\n".to_vec(),
            "ERR Protocol error: expected '$', got ':'",
        ),
        (
            vec![b'a'; 70_000],
            "ERR Protocol error: too big inline request",
        ),
        (
            format!("*{digits}").into_bytes(),
            "ERR Protocol error: too big mbulk count string",
        ),
        (
            format!("*1\r\n${digits}").into_bytes(),
            "ERR Protocol error: too big bulk count string",
        ),
        (
            b"ECHO \"abc\r\n".to_vec(),
            "ERR Protocol error: unbalanced quotes in request",
        ),
        (
            b"ECHO 'abc\r\n".to_vec(),
            "ERR Protocol error: unbalanced quotes in request",
        ),
        (
            b"ECHO \"abc\"x\r\n".to_vec(),
            "ERR Protocol error: unbalanced quotes in request",
        ),
    ];
    for (input, err) in &cases {
        let mut c = s.raw();
        // Commands before the bad frame in the same write still run.
        let mut bytes = b"PING\r\n".to_vec();
        bytes.extend_from_slice(input);
        let _ = c.try_send(&bytes);
        assert_eq!(c.read_reply(), Value::simple("PONG"));
        c.expect_error_and_close(b"", err);
        assert_eq!(
            bystander.cmd(&["ECHO", "still here"]),
            Value::bulk("still here"),
            "after {err}"
        );
    }
    // Negative and zero counts are ignored, as in Redis.
    let mut c = s.raw();
    c.send(b"*0\r\n*-1\r\n*-100\r\nPING\r\n");
    assert_eq!(c.read_reply(), Value::simple("PONG"));
    assert!(!s.log().contains("panicked"), "{}", s.log());
}

#[test]
fn resp3_with_redis_crate() {
    let s = TestServer::start(&[]);
    let mut con = s.client_resp3();
    let pong: String = redis::cmd("PING").query(&mut con).unwrap();
    assert_eq!(pong, "PONG");
    let v: redis::Value = rcmd(&["CONFIG", "GET", "maxclients"])
        .query(&mut con)
        .unwrap();
    match v {
        redis::Value::Map(kv) => {
            assert_eq!(kv.len(), 1);
            assert_eq!(kv[0].0, redis::Value::BulkString(b"maxclients".to_vec()));
        }
        other => panic!("CONFIG GET over RESP3 should be a map, got {other:?}"),
    }
    // RESP2 client sees a flat array.
    let mut con2 = s.client();
    let v: redis::Value = rcmd(&["CONFIG", "GET", "maxclients"])
        .query(&mut con2)
        .unwrap();
    assert!(
        matches!(v, redis::Value::Array(ref a) if a.len() == 2),
        "{v:?}"
    );

    // Raw HELLO 3 reply shape.
    let mut c = s.raw();
    match c.cmd(&["HELLO", "3"]) {
        Value::Map(kv) => {
            let get = |k: &str| kv.iter().find(|(a, _)| *a == Value::bulk(k)).map(|x| &x.1);
            assert_eq!(get("server"), Some(&Value::bulk("redis")));
            assert_eq!(get("proto"), Some(&Value::Int(3)));
            assert_eq!(get("mode"), Some(&Value::bulk("standalone")));
            assert_eq!(get("role"), Some(&Value::bulk("master")));
            assert!(matches!(get("id"), Some(Value::Int(_))));
        }
        other => panic!("HELLO 3: {other}"),
    }
    match c.cmd(&["CONFIG", "GET", "timeout"]) {
        Value::Map(_) => {}
        other => panic!("RESP3 CONFIG GET: {other}"),
    }
    assert!(matches!(c.cmd(&["HELLO", "2"]), Value::Array(_)));
    assert!(matches!(
        c.cmd(&["CONFIG", "GET", "timeout"]),
        Value::Array(_)
    ));
}

#[test]
fn monitor_shows_other_clients_commands() {
    let s = TestServer::start(&[]);
    let mut mon = s.raw();
    assert_eq!(mon.cmd(&["MONITOR"]), Value::simple("OK"));
    let mut c = s.raw();
    assert_eq!(c.cmd(&["SELECT", "3"]), Value::simple("OK"));
    assert_eq!(
        c.cmd(&[b"ECHO".as_slice(), b"a \"b\"\n\x01"]),
        Value::bulk(b"a \"b\"\n\x01")
    );
    assert_eq!(c.cmd(&["PING"]), Value::simple("PONG"));
    let mut lines = Vec::new();
    for _ in 0..3 {
        lines.push(mon.read_line().expect("monitor line"));
    }
    // +1700000000.123456 [3 127.0.0.1:54321] "ECHO" "a \"b\"\n\x01"
    let check = |line: &str, db: u32, args: &str| {
        let rest = line.strip_prefix('+').unwrap_or_else(|| panic!("{line}"));
        let (ts, rest) = rest.split_once(' ').unwrap();
        let (sec, usec) = ts.split_once('.').unwrap();
        assert!(sec.parse::<u64>().unwrap() > 1_600_000_000, "{line}");
        assert_eq!(usec.len(), 6, "{line}");
        let prefix = format!("[{db} 127.0.0.1:");
        assert!(rest.starts_with(&prefix), "{line}");
        let (_, cmd) = rest.split_once("] ").unwrap();
        assert_eq!(cmd, args, "{line}");
    };
    // Like Redis, the db shown is the one after the command ran.
    check(&lines[0], 3, "\"SELECT\" \"3\"");
    check(&lines[1], 3, "\"ECHO\" \"a \\\"b\\\"\\n\\x01\"");
    check(&lines[2], 3, "\"PING\"");
    // Admin commands are not shown; the monitor keeps receiving afterwards.
    c.cmd(&["CONFIG", "GET", "port"]);
    c.cmd(&["ECHO", "after"]);
    let line = mon.read_line().unwrap();
    assert!(line.ends_with("\"ECHO\" \"after\""), "{line}");
    // RESET stops monitoring.
    assert_eq!(mon.cmd(&["RESET"]), Value::simple("RESET"));
    c.cmd(&["ECHO", "unseen"]);
    assert_eq!(mon.cmd(&["PING"]), Value::simple("PONG"));
}

#[test]
fn quit_closes_after_reply() {
    let s = TestServer::start(&[]);
    let mut c = s.raw();
    c.send(b"PING\r\nQUIT\r\nPING\r\n");
    assert_eq!(c.read_reply(), Value::simple("PONG"));
    assert_eq!(c.read_reply(), Value::simple("OK"));
    c.assert_closed();
    assert!(c.pending().is_empty(), "nothing after QUIT's reply");
}

#[test]
fn many_clients_in_parallel_get_their_own_replies() {
    let s = TestServer::start(&[("threads", "2")]);
    let port = s.port();
    std::thread::scope(|sc| {
        for t in 0..16 {
            sc.spawn(move || {
                let mut c = RawConn::tcp(port);
                for round in 0..20 {
                    let mut buf = Vec::new();
                    for i in 0..50 {
                        resp::write_command(&mut buf, &["ECHO", &format!("{t}-{round}-{i}")]);
                    }
                    c.send(&buf);
                    for i in 0..50 {
                        assert_eq!(c.read_reply(), Value::bulk(format!("{t}-{round}-{i}")));
                    }
                }
            });
        }
    });
}

#[test]
fn ipv6_loopback_when_available() {
    // The default bind is "127.0.0.1 -::1": ::1 is optional.
    let s = TestServer::start(&[]);
    if std::net::TcpListener::bind("[::1]:0").is_err() {
        eprintln!("no IPv6 loopback here; skipped");
        return;
    }
    let mut c = std::net::TcpStream::connect(("::1", s.port())).expect("connect [::1]");
    use std::io::{Read, Write};
    c.write_all(b"PING\r\n").unwrap();
    let mut b = [0u8; 7];
    c.read_exact(&mut b).unwrap();
    assert_eq!(&b, b"+PONG\r\n");
}

/// The fairness rule (docs/ARCHITECTURE.md "Request path"): a connection
/// reads at most a read budget (64 KiB) per pass of its worker, so a
/// client streaming a big pipeline does not keep the others waiting until
/// it is done, and the rest of its pipeline is still served in order
/// although no new readiness edge comes for the bytes it left behind.
#[test]
fn a_big_pipeline_is_served_whole_while_other_clients_get_turns() {
    use std::io::{Read, Write};
    let s = TestServer::start(&[("threads", "1")]);
    const N: usize = 200_000; // 24 bytes each: ~4.6 MiB, ~70 read budgets
                              // B waits for the pipeline's first command, so its next command
                              // arrives while the pipeline runs.
    let mut b = s.raw();
    b.send_cmd(&["BLPOP", "go", "0"]);
    let mut admin = s.raw();
    let end = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let info = admin.cmd(&["INFO", "clients"]);
        let text = String::from_utf8_lossy(info.as_bytes().unwrap_or_default()).into_owned();
        if text.contains("blocked_clients:1\r\n") {
            break;
        }
        assert!(std::time::Instant::now() < end, "B never blocked: {text}");
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut frame = Vec::with_capacity(N * 24 + 64);
    resp::write_command(&mut frame, &["RPUSH", "go", "x"]);
    for _ in 0..N {
        resp::write_command(&mut frame, &["INCR", "n"]);
    }
    let mut a = std::net::TcpStream::connect(("127.0.0.1", s.port())).unwrap();
    a.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut writer = a.try_clone().unwrap();
    let sending = std::thread::spawn(move || writer.write_all(&frame));
    assert_eq!(
        b.read_reply(),
        Value::Array(vec![Value::bulk("go"), Value::bulk("x")])
    );
    let during = match b.cmd(&["GET", "n"]) {
        Value::Bulk(v) => String::from_utf8(v).unwrap().parse::<usize>().unwrap(),
        other => panic!("GET n: {other:?}"),
    };
    assert!(
        during < N,
        "the other client waited for the whole pipeline (saw n = {during})"
    );
    // Every reply of the pipeline arrives, in order.
    let mut replies = 0;
    let mut buf = vec![0u8; 64 * 1024];
    let mut last = Vec::new();
    while replies < N + 1 {
        let n = a.read(&mut buf).expect("replies to the pipeline");
        assert!(n > 0, "connection closed after {replies} replies");
        replies += buf[..n].iter().filter(|&&c| c == b'\n').count();
        last.extend_from_slice(&buf[..n]);
        if last.len() > 64 {
            last.drain(..last.len() - 64);
        }
    }
    sending.join().unwrap().unwrap();
    assert_eq!(replies, N + 1);
    assert!(
        String::from_utf8_lossy(&last).ends_with(&format!(":{N}\r\n")),
        "last reply: {:?}",
        String::from_utf8_lossy(&last)
    );
    assert_eq!(b.cmd(&["GET", "n"]), Value::bulk(N.to_string()));
}
