//! Configuration end to end: startup errors, CONFIG GET/SET/REWRITE, bind,
//! unix socket.

mod common;
use common::*;

use std::time::Duration;

fn pairs(v: Value) -> Vec<(String, String)> {
    let items = match v {
        Value::Array(a) => a,
        Value::Map(kv) => kv.into_iter().flat_map(|(k, v)| [k, v]).collect(),
        other => panic!("not a CONFIG GET reply: {other}"),
    };
    let s = |v: &Value| String::from_utf8_lossy(v.as_bytes().expect("string")).into_owned();
    let mut out: Vec<(String, String)> = items.chunks(2).map(|c| (s(&c[0]), s(&c[1]))).collect();
    out.sort();
    out
}

#[test]
fn startup_fails_on_unknown_or_invalid_settings() {
    let cases: &[(Option<&str>, &[&str], &str)] = &[
        (None, &["--nosuchsetting", "1"], "nosuchsetting"),
        (None, &["--maxclients", "abc"], "maxclients"),
        (None, &["--port", "99999"], "port"),
        (None, &["--loglevel", "loud"], "loglevel"),
        (None, &["--protected-mode", "maybe"], "protected-mode"),
        (
            Some("# comment\nport 7777\nnosuchsetting yes\n"),
            &[],
            "nosuchsetting",
        ),
        (Some("maxclients -5\n"), &[], "maxclients"),
        (Some("timeout abc\n"), &[], "timeout"),
        (Some("requirepass \"unbalanced\n"), &[], "Unbalanced quotes"),
        (Some("proto-max-bulk-len lots\n"), &[], "proto-max-bulk-len"),
    ];
    for (config, args, needle) in cases {
        let (code, out) = petrel_startup_failure(*config, args);
        assert!(
            code.is_some_and(|c| c != 0),
            "{config:?} {args:?}: exit code {code:?}\n{out}"
        );
        assert!(
            out.contains(needle),
            "{config:?} {args:?}: message should name '{needle}':\n{out}"
        );
        assert!(out.contains("FATAL CONFIG ERROR"), "{out}");
    }
    // A missing config file.
    let (code, out) = petrel_startup_failure(None, &["/nonexistent/petrel.conf"]);
    assert!(code.is_some_and(|c| c != 0), "{out}");
    assert!(out.contains("/nonexistent/petrel.conf"), "{out}");
    // The port already in use.
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().port().to_string();
    let (code, out) = petrel_startup_failure(None, &["--port", &port, "--bind", "127.0.0.1"]);
    assert!(code.is_some_and(|c| c != 0), "{out}");
    assert!(out.contains(&port), "{out}");
}

#[test]
fn settings_from_file_and_command_line() {
    let s = TestServer::start_with(
        Opts::default()
            .config("# a comment\nmaxclients 123\ntimeout 5\nrequirepass \"a b\"\n")
            .arg("timeout", "9"),
    );
    let mut c = s.raw();
    assert_eq!(c.cmd(&["AUTH", "a b"]), Value::simple("OK"));
    let got = pairs(c.cmd(&["CONFIG", "GET", "maxclients", "timeout"]));
    assert_eq!(
        got,
        vec![
            ("maxclients".into(), "123".into()),
            ("timeout".into(), "9".into())
        ]
    );
    // Memory units.
    let s = TestServer::start(&[
        ("client-query-buffer-limit", "2mb"),
        ("proto-max-bulk-len", "1gb"),
    ]);
    let mut c = s.raw();
    let got = pairs(c.cmd(&[
        "CONFIG",
        "GET",
        "client-query-buffer-limit",
        "proto-max-bulk-len",
    ]));
    assert_eq!(
        got,
        vec![
            ("client-query-buffer-limit".into(), "2097152".into()),
            ("proto-max-bulk-len".into(), "1073741824".into())
        ]
    );
}

#[test]
fn config_set_is_all_or_nothing() {
    let s = TestServer::start(&[]);
    let mut c = s.client();
    let err = rcmd(&[
        "CONFIG",
        "SET",
        "maxclients",
        "50",
        "timeout",
        "abc",
        "slowlog-max-len",
        "3",
    ])
    .query::<()>(&mut c)
    .unwrap_err();
    assert!(err.to_string().contains("'timeout'"), "{err}");
    let v: Vec<String> = rcmd(&["CONFIG", "GET", "maxclients", "slowlog-max-len"])
        .query(&mut c)
        .unwrap();
    let mut got: Vec<(String, String)> =
        v.chunks(2).map(|p| (p[0].clone(), p[1].clone())).collect();
    got.sort();
    assert_eq!(
        got,
        vec![
            ("maxclients".into(), "10000".into()),
            ("slowlog-max-len".into(), "128".into())
        ]
    );
    // Several parameters at once.
    let _: () = rcmd(&["CONFIG", "SET", "maxclients", "50", "timeout", "7"])
        .query(&mut c)
        .unwrap();
    let v: Vec<String> = rcmd(&["CONFIG", "GET", "maxclients", "timeout"])
        .query(&mut c)
        .unwrap();
    assert!(
        v.contains(&"50".to_string()) && v.contains(&"7".to_string()),
        "{v:?}"
    );
}

#[test]
fn config_get_globs_and_several_patterns() {
    let s = TestServer::start(&[]);
    let mut c = s.raw();
    let all = pairs(c.cmd(&["CONFIG", "GET", "*"]));
    assert!(all.len() >= 20, "{all:?}");
    for name in [
        "maxclients",
        "port",
        "bind",
        "timeout",
        "proto-max-bulk-len",
    ] {
        assert!(all.iter().any(|(k, _)| k == name), "{name} missing");
    }
    let slow = pairs(c.cmd(&["CONFIG", "GET", "slowlog-*"]));
    assert_eq!(
        slow.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
        ["slowlog-log-slower-than", "slowlog-max-len"]
    );
    // Several patterns, overlapping: each parameter once.
    let several = pairs(c.cmd(&["CONFIG", "GET", "slowlog-*", "*max-len", "port"]));
    assert_eq!(
        several.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
        [
            "acllog-max-len",
            "port",
            "slowlog-log-slower-than",
            "slowlog-max-len"
        ]
    );
    assert_eq!(pairs(c.cmd(&["CONFIG", "GET", "nosuch*"])), vec![]);
    let q = pairs(c.cmd(&["CONFIG", "GET", "tim?out"]));
    assert_eq!(q, vec![("timeout".into(), "0".into())]);
    let cls = pairs(c.cmd(&["CONFIG", "GET", "[pt]ort"]));
    assert_eq!(cls[0].0, "port");
}

#[test]
fn config_rewrite_round_trip() {
    let conf = "# Petrel test configuration\n\
                # keep this comment\n\
                maxclients 100\n\
                \n\
                # timeout comment\n\
                timeout 3\n";
    let s = TestServer::start_with(Opts::default().config(conf));
    let path = s.config_path().unwrap().to_path_buf();
    let mut c = s.raw();
    assert_eq!(
        c.cmd(&[
            "CONFIG",
            "SET",
            "maxclients",
            "200",
            "slowlog-max-len",
            "77",
            "requirepass",
            "with space"
        ]),
        Value::simple("OK")
    );
    assert_eq!(c.cmd(&["CONFIG", "REWRITE"]), Value::simple("OK"));
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("# Petrel test configuration"), "{text}");
    assert!(text.contains("# keep this comment"), "{text}");
    assert!(text.contains("# timeout comment"), "{text}");
    assert!(text.contains("maxclients 200"), "{text}");
    assert!(!text.contains("maxclients 100"), "{text}");
    assert!(text.contains("timeout 3"), "{text}");
    assert!(text.contains("slowlog-max-len 77"), "{text}");
    // Comments stay in place: the maxclients line is still after them.
    let keep = text.find("# keep this comment").unwrap();
    assert!(text.find("maxclients 200").unwrap() > keep, "{text}");
    let text2 = text;
    drop(s);

    // Restarting from the rewritten file gives the same settings.
    let s2 = TestServer::start_with(Opts::default().config(&text2));
    let mut c = s2.raw();
    assert_eq!(c.cmd(&["AUTH", "with space"]), Value::simple("OK"));
    let got = pairs(c.cmd(&["CONFIG", "GET", "maxclients", "slowlog-max-len", "timeout"]));
    assert_eq!(
        got,
        vec![
            ("maxclients".into(), "200".into()),
            ("slowlog-max-len".into(), "77".into()),
            ("timeout".into(), "3".into())
        ]
    );
    // A second rewrite with no change keeps the file as it is.
    assert_eq!(c.cmd(&["AUTH", "with space"]), Value::simple("OK"));
    assert_eq!(c.cmd(&["CONFIG", "REWRITE"]), Value::simple("OK"));
    // (The port line differs: each test server gets its own --port.)
    let text3 = std::fs::read_to_string(s2.config_path().unwrap()).unwrap();
    let settings = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| !l.starts_with("port ") && !l.starts_with("# Generated by"))
            .map(String::from)
            .collect()
    };
    assert_eq!(settings(&text2), settings(&text3));

    // Without a config file, REWRITE fails like Redis.
    let s3 = TestServer::start(&[]);
    let mut c = s3.raw();
    assert_eq!(
        c.cmd(&["CONFIG", "REWRITE"]),
        Value::Error(b"ERR The server is running without a config file".to_vec())
    );
}

#[test]
fn unix_socket() {
    let dir = TempDir::new("sock");
    let path = dir.join("petrel.sock").display().to_string();
    let s = TestServer::start(&[("unixsocket", &path), ("unixsocketperm", "700")]);
    let mut u = s.raw_unix();
    assert_eq!(u.cmd(&["PING"]), Value::simple("PONG"));
    assert_eq!(u.cmd(&["ECHO", "over unix"]), Value::bulk("over unix"));
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
    let mut con = redis::Client::open(format!("redis+unix://{path}"))
        .unwrap()
        .get_connection()
        .unwrap();
    let v: String = rcmd(&["ECHO", "crate"]).query(&mut con).unwrap();
    assert_eq!(v, "crate");
    // TCP works too.
    assert_eq!(s.raw().cmd(&["PING"]), Value::simple("PONG"));
}

#[test]
fn unix_socket_only() {
    let dir = TempDir::new("sockonly");
    let path = dir.join("p.sock").display().to_string();
    let s = TestServer::start_with(Opts {
        no_tcp: true,
        ..Opts::new(&[("port", "0"), ("unixsocket", &path)])
    });
    let mut u = s.raw_unix();
    assert_eq!(u.cmd(&["PING"]), Value::simple("PONG"));
}

#[test]
fn bind_addresses() {
    // Bound to 127.0.0.2 only: 127.0.0.1 is refused.
    let s = TestServer::start(&[("bind", "127.0.0.1")]);
    assert_eq!(s.raw().cmd(&["PING"]), Value::simple("PONG"));
    let port = free_port();
    let mut p = Proc::spawn(
        PETREL_BIN,
        &[
            "--port".into(),
            port.to_string(),
            "--bind".into(),
            "127.0.0.2".into(),
            "--threads".into(),
            "1".into(),
        ],
        std::path::Path::new("/"),
    )
    .unwrap();
    let up = wait_until(Duration::from_secs(10), || {
        std::net::TcpStream::connect(("127.0.0.2", port)).is_ok()
    });
    assert!(up, "not listening on 127.0.0.2: {}", p.log());
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());
    p.kill();
    // Several addresses, one optional and unavailable ("-" prefix).
    let s = TestServer::start(&[("bind", "127.0.0.1 -192.0.2.123")]);
    assert_eq!(s.raw().cmd(&["PING"]), Value::simple("PONG"));
    // A mandatory address that can't be bound stops startup, naming it.
    let (code, out) = petrel_startup_failure(None, &["--bind", "192.0.2.123"]);
    assert!(code.is_some_and(|c| c != 0), "{out}");
    assert!(out.contains("192.0.2.123"), "{out}");
    // An invalid address is a config error.
    let (code, out) = petrel_startup_failure(None, &["--bind", "not-an-ip"]);
    assert!(code.is_some_and(|c| c != 0), "{out}");
    assert!(out.contains("not-an-ip"), "{out}");
}

/// A local non-loopback IPv4 address (the source address of the default
/// route), if the machine has one. No packet is sent.
fn non_loopback_ip() -> Option<std::net::IpAddr> {
    let s = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    s.connect("192.0.2.254:9").ok()?;
    let ip = s.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

fn first_bytes_from(ip: std::net::IpAddr, port: u16) -> Vec<u8> {
    use std::io::{Read, Write};
    let mut c = std::net::TcpStream::connect((ip, port)).expect("connect");
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let _ = c.write_all(b"PING\r\n");
    let mut out = Vec::new();
    let _ = c.read_to_end(&mut out);
    out
}

#[test]
fn protected_mode_denies_non_loopback_like_redis() {
    let Some(ip) = non_loopback_ip() else {
        eprintln!("no non-loopback address: protected-mode test skipped");
        return;
    };
    let p = TestServer::start(&[("bind", "*")]);
    let got = first_bytes_from(ip, p.port());
    assert!(
        got.starts_with(b"-DENIED Redis is running in protected mode"),
        "{:?}",
        String::from_utf8_lossy(&got)
    );
    // With a password, or with protected-mode off, remote clients are served.
    let p = TestServer::start(&[("bind", "*"), ("requirepass", "pw")]);
    let got = first_bytes_from_no_close(ip, p.port());
    assert_eq!(got, b"-NOAUTH Authentication required.\r\n");
    let p = TestServer::start(&[("bind", "*"), ("protected-mode", "no")]);
    assert_eq!(first_bytes_from_no_close(ip, p.port()), b"+PONG\r\n");
}

fn first_bytes_from_no_close(ip: std::net::IpAddr, port: u16) -> Vec<u8> {
    use std::io::{Read, Write};
    let mut c = std::net::TcpStream::connect((ip, port)).expect("connect");
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    c.write_all(b"PING\r\n").unwrap();
    let mut buf = [0u8; 256];
    let n = c.read(&mut buf).unwrap();
    buf[..n].to_vec()
}

#[test]
fn protected_mode_text_matches_redis() {
    let Some(ip) = non_loopback_ip() else {
        return;
    };
    let p = TestServer::start(&[("bind", "*")]);
    if let Some(r) = RefRedis::start_with(Opts::new(&[("bind", "*")])) {
        assert_eq!(
            String::from_utf8_lossy(&first_bytes_from(ip, p.port())),
            String::from_utf8_lossy(&first_bytes_from(ip, r.port()))
        );
    }
}

/// CONFIG SET port moves the listener at once, as in Redis: new clients
/// reach the new port, the old one is closed, open connections stay; a port
/// that cannot be bound is refused with Redis's text and the old listener
/// keeps serving.
#[test]
fn config_set_port_rebinds_the_listener() {
    let srv = Server::start(&[]);
    let mut c = srv.client();
    let new_port = free_port();
    let r: String = redis::cmd("CONFIG")
        .arg("SET")
        .arg("port")
        .arg(new_port)
        .query(&mut c)
        .unwrap();
    assert_eq!(r, "OK");
    let mut fresh = redis::Client::open(format!("redis://127.0.0.1:{new_port}/"))
        .unwrap()
        .get_connection()
        .unwrap();
    let pong: String = redis::cmd("PING").query(&mut fresh).unwrap();
    assert_eq!(pong, "PONG");
    assert!(std::net::TcpStream::connect(("127.0.0.1", srv.port())).is_err());
    let port: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg("port")
        .query(&mut c)
        .unwrap();
    assert_eq!(port[1], new_port.to_string());
    let tcp_port = redis::cmd("INFO")
        .arg("server")
        .query::<String>(&mut c)
        .unwrap();
    assert!(tcp_port.contains(&format!("tcp_port:{new_port}\r\n")));

    // A port someone else holds: error, nothing changes.
    let blocker = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let taken = blocker.local_addr().unwrap().port();
    let err = redis::cmd("CONFIG")
        .arg("SET")
        .arg("port")
        .arg(taken)
        .query::<String>(&mut c)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "An error was signalled by the server - ResponseError: CONFIG SET failed (possibly related to argument 'port') - Unable to listen on this port. Check server logs."
    );
    let pong: String = redis::cmd("PING").query(&mut fresh).unwrap();
    assert_eq!(pong, "PONG");
    let mut again = redis::Client::open(format!("redis://127.0.0.1:{new_port}/"))
        .unwrap()
        .get_connection()
        .unwrap();
    let port: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg("port")
        .query(&mut again)
        .unwrap();
    assert_eq!(port[1], new_port.to_string());
}

/// `busy-poll` (Petrel's own setting): default 50 µs, settable at runtime
/// and at startup, range-checked, and the server serves requests with it
/// off, on, and at its maximum.
#[test]
fn busy_poll_setting() {
    let s = TestServer::start(&[("busy-poll", "0")]);
    let mut c = s.client();
    let v: Vec<String> = rcmd(&["CONFIG", "GET", "busy-poll"]).query(&mut c).unwrap();
    assert_eq!(v, vec!["busy-poll".to_string(), "0".to_string()]);
    let err = rcmd(&["CONFIG", "SET", "busy-poll", "-1"])
        .query::<()>(&mut c)
        .unwrap_err();
    assert!(err.to_string().contains("'busy-poll'"), "{err}");
    let err = rcmd(&["CONFIG", "SET", "busy-poll", "10001"])
        .query::<()>(&mut c)
        .unwrap_err();
    assert!(err.to_string().contains("'busy-poll'"), "{err}");
    for us in ["10000", "50", "0"] {
        let _: () = rcmd(&["CONFIG", "SET", "busy-poll", us])
            .query(&mut c)
            .unwrap();
        for i in 0..200 {
            let _: () = rcmd(&["SET", "k", &i.to_string()]).query(&mut c).unwrap();
            let got: i64 = rcmd(&["GET", "k"]).query(&mut c).unwrap();
            assert_eq!(got, i);
        }
    }
    let d = TestServer::start(&[]);
    let v: Vec<String> = rcmd(&["CONFIG", "GET", "busy-poll"])
        .query(&mut d.client())
        .unwrap();
    assert_eq!(v, vec!["busy-poll".to_string(), "50".to_string()]);
}
