//! Shared pieces of the differential tests: a redis-server 7.0 started on
//! a free port, a plain RESP client, and a [`Host`] that forwards every
//! `redis.call` to that same server (so both sides see the same data).
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use resp::{encode_command, parse_value, Protocol, ReplyBuf, Value};
use scripting::{BusyAction, CallContext, Host, LogLevel};

/// A redis-server child, killed on drop.
pub struct Server {
    child: Child,
    pub port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts redis-server, or returns None (after a loud notice) when it is
/// not installed; panics instead if PETREL_REQUIRE_REDIS=1.
pub fn start_server() -> Option<Server> {
    let found = Command::new("redis-server")
        .arg("--version")
        .output()
        .is_ok();
    if !found {
        if std::env::var("PETREL_REQUIRE_REDIS").as_deref() == Ok("1") {
            panic!("redis-server not found and PETREL_REQUIRE_REDIS=1");
        }
        eprintln!(
            "\n!!!!! SKIPPED: redis-server not found; differential tests did not run !!!!!\n"
        );
        return None;
    }
    // The port was free a moment ago; another test may take it first, and
    // then our child exits while the connection reaches the other server.
    // The server's process_id must be our child's, else retry elsewhere.
    for _attempt in 0..8 {
        if let Some(s) = try_start_server() {
            return Some(s);
        }
    }
    panic!("redis-server did not start after 8 attempts");
}

fn try_start_server() -> Option<Server> {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new("redis-server")
        .args([
            "--save",
            "",
            "--appendonly",
            "no",
            "--daemonize",
            "no",
            "--bind",
            "127.0.0.1",
        ])
        .args(["--port", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn redis-server");
    let mut s = Server { child, port };
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(_)) = s.child.try_wait() {
            return None;
        }
        assert!(Instant::now() < deadline, "redis-server did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = server_pid(port);
    if pid != Some(s.child.id()) {
        return None;
    }
    Some(s)
}

/// The `process_id` in `INFO server` of whatever answers on `port`;
/// `None` when the connection fails (it never panics).
fn server_pid(port: u16) -> Option<u32> {
    let mut c = TcpStream::connect(("127.0.0.1", port)).ok()?;
    c.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    c.write_all(&encode_command(&["INFO", "server"])).ok()?;
    let mut buf = Vec::new();
    let info = loop {
        if let Some((v, _)) = parse_value(&buf).ok()? {
            break v;
        }
        let mut tmp = [0u8; 8192];
        match c.read(&mut tmp).ok()? {
            0 => return None,
            n => buf.extend_from_slice(&tmp[..n]),
        }
    };
    let Value::Bulk(info) = info else {
        return None;
    };
    String::from_utf8_lossy(&info)
        .lines()
        .find_map(|l| l.strip_prefix("process_id:"))
        .and_then(|v| v.trim().parse().ok())
}

/// A blocking RESP client.
pub struct Client {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Client {
    pub fn connect(port: u16, proto: Protocol) -> Client {
        let stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream.set_nodelay(true).unwrap();
        let mut c = Client {
            stream,
            buf: Vec::new(),
        };
        if proto == Protocol::Resp3 {
            c.raw(&[b"HELLO".as_slice(), b"3"]);
        }
        c
    }

    /// Sends a command and returns the exact bytes of its reply.
    pub fn raw<A: AsRef<[u8]>>(&mut self, argv: &[A]) -> Vec<u8> {
        self.stream.write_all(&encode_command(argv)).unwrap();
        loop {
            if let Some((_, n)) = parse_value(&self.buf).expect("valid RESP from redis-server") {
                let out = self.buf[..n].to_vec();
                self.buf.drain(..n);
                return out;
            }
            let mut tmp = [0u8; 65536];
            let n = self.stream.read(&mut tmp).unwrap();
            assert!(n > 0, "redis-server closed the connection");
            self.buf.extend_from_slice(&tmp[..n]);
        }
    }

    pub fn cmd<A: AsRef<[u8]>>(&mut self, argv: &[A]) -> Value {
        let b = self.raw(argv);
        parse_value(&b).unwrap().unwrap().0
    }
}

/// Forwards script commands to redis-server over a RESP2 and a RESP3
/// connection (chosen by the script's `redis.setresp`).
pub struct ForwardHost {
    pub r2: Client,
    pub r3: Client,
    pub logs: Vec<(LogLevel, Vec<u8>)>,
    pub calls: usize,
    pub kill_after: Option<usize>,
    pub busy_calls: usize,
}

impl ForwardHost {
    pub fn new(port: u16) -> Self {
        ForwardHost {
            r2: Client::connect(port, Protocol::Resp2),
            r3: Client::connect(port, Protocol::Resp3),
            logs: Vec::new(),
            calls: 0,
            kill_after: None,
            busy_calls: 0,
        }
    }
}

impl Host for ForwardHost {
    fn call(&mut self, argv: &[&[u8]], _ctx: CallContext, out: &mut ReplyBuf) {
        self.calls += 1;
        let c = if out.protocol() == Protocol::Resp3 {
            &mut self.r3
        } else {
            &mut self.r2
        };
        let reply = c.raw(argv);
        // What Redis's scriptCall says instead of the ordinary texts.
        if reply.starts_with(b"-ERR wrong number of arguments for ") {
            out.raw(b"-ERR Wrong number of args calling Redis command from script\r\n");
        } else if reply.starts_with(b"-ERR unknown command ") {
            out.raw(b"-ERR Unknown Redis command called from script\r\n");
        } else {
            out.raw(&reply);
        }
    }

    fn log(&mut self, level: LogLevel, msg: &[u8]) {
        self.logs.push((level, msg.to_vec()));
    }

    fn acl_check(&mut self, argv: &[&[u8]]) -> Option<bool> {
        let mut q: Vec<&[u8]> = vec![b"COMMAND", b"INFO", argv[0]];
        q.truncate(3);
        match self.r2.cmd(&q) {
            Value::Array(v) if v.first().is_some_and(|x| !x.is_null()) => Some(true),
            _ => None,
        }
    }

    fn busy(&mut self, _elapsed: Duration) -> BusyAction {
        self.busy_calls += 1;
        match self.kill_after {
            Some(n) if self.busy_calls >= n => BusyAction::Kill,
            _ => BusyAction::Continue,
        }
    }
}
