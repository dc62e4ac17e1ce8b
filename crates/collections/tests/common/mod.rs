//! A redis-server 7.0 child process and a minimal RESP2 client for the
//! differential tests of this crate. Skipped (with a loud notice) when
//! `redis-server` is missing, unless `PETREL_REQUIRE_REDIS=1`.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A reply, errors included as values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum V {
    Nil,
    Int(i64),
    Bulk(Vec<u8>),
    Status(String),
    Err(String),
    Arr(Vec<V>),
}

impl V {
    pub fn bulk(s: impl AsRef<[u8]>) -> V {
        V::Bulk(s.as_ref().to_vec())
    }
    pub fn arr(&self) -> &[V] {
        match self {
            V::Arr(a) => a,
            other => panic!("not an array: {other:?}"),
        }
    }
    pub fn bytes(&self) -> &[u8] {
        match self {
            V::Bulk(b) => b,
            other => panic!("not a bulk: {other:?}"),
        }
    }
    pub fn int(&self) -> i64 {
        match self {
            V::Int(i) => *i,
            other => panic!("not an int: {other:?}"),
        }
    }
    pub fn text(&self) -> String {
        String::from_utf8_lossy(self.bytes()).into_owned()
    }
}

pub struct Redis {
    child: Child,
    conn: BufReader<TcpStream>,
    pub port: u16,
}

fn redis_bin() -> String {
    std::env::var("PETREL_REDIS_SERVER").unwrap_or_else(|_| "redis-server".into())
}

impl Redis {
    /// Start a private redis-server, or `None` when it is not installed.
    pub fn start() -> Option<Redis> {
        Redis::start_with(&[])
    }

    /// Start a private redis-server with extra `--name value` arguments.
    ///
    /// The port is one the OS handed out a moment ago, so another test may
    /// take it first; then our child exits and the connection reaches the
    /// other test's server. The child's pid is checked against the server's
    /// `process_id`, and the start is retried on a fresh port otherwise.
    pub fn start_with(extra: &[&str]) -> Option<Redis> {
        let ok = Command::new(redis_bin())
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            if std::env::var("PETREL_REQUIRE_REDIS").as_deref() == Ok("1") {
                panic!("redis-server not found and PETREL_REQUIRE_REDIS=1");
            }
            let _ = std::io::stderr()
                .write_all(b"\n!!! REDIS-SERVER NOT FOUND: differential tests skipped !!!\n\n");
            return None;
        }
        for _attempt in 0..8 {
            if let Some(r) = Redis::try_start(extra) {
                return Some(r);
            }
        }
        panic!("redis-server did not start after 8 attempts");
    }

    fn try_start(extra: &[&str]) -> Option<Redis> {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut child = Command::new(redis_bin())
            .args([
                "--port",
                &port.to_string(),
                "--save",
                "",
                "--appendonly",
                "no",
                "--daemonize",
                "no",
                "--bind",
                "127.0.0.1",
                "--rdbcompression",
                "no",
            ])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn redis-server");
        let end = Instant::now() + Duration::from_secs(10);
        let tcp = loop {
            if let Ok(Some(_)) = child.try_wait() {
                return None; // port taken: retry elsewhere
            }
            if let Ok(s) = TcpStream::connect(("127.0.0.1", port)) {
                break s;
            }
            assert!(Instant::now() < end, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        };
        let _ = tcp.set_read_timeout(Some(Duration::from_secs(10)));
        let mut r = Redis {
            child,
            conn: BufReader::new(tcp),
            port,
        };
        if r.process_id() != Some(r.child.id()) {
            return None; // someone else's server (Drop kills our child)
        }
        let _ = r.conn.get_ref().set_read_timeout(None);
        Some(r)
    }

    /// The `process_id` of the server at the other end, `None` when the
    /// connection fails.
    fn process_id(&mut self) -> Option<u32> {
        let mut out = Vec::new();
        out.extend_from_slice(b"*2\r\n$4\r\nINFO\r\n$6\r\nserver\r\n");
        self.conn.get_mut().write_all(&out).ok()?;
        let mut head = Vec::new();
        self.conn.read_until(b'\n', &mut head).ok()?;
        let n: usize = std::str::from_utf8(head.strip_prefix(b"$")?)
            .ok()?
            .trim_end()
            .parse()
            .ok()?;
        let mut body = vec![0u8; n + 2];
        std::io::Read::read_exact(&mut self.conn, &mut body).ok()?;
        let text = String::from_utf8_lossy(&body);
        text.lines()
            .find_map(|l| l.strip_prefix("process_id:"))
            .and_then(|v| v.trim().parse().ok())
    }

    /// Send one command, read its reply.
    pub fn cmd<A: AsRef<[u8]>>(&mut self, args: &[A]) -> V {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            let a = a.as_ref();
            out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            out.extend_from_slice(a);
            out.extend_from_slice(b"\r\n");
        }
        self.conn.get_mut().write_all(&out).unwrap();
        read(&mut self.conn)
    }

    /// Send many commands at once, read all replies.
    pub fn pipeline(&mut self, cmds: &[Vec<Vec<u8>>]) -> Vec<V> {
        let mut out = Vec::new();
        for args in cmds {
            out.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
            for a in args {
                out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
                out.extend_from_slice(a);
                out.extend_from_slice(b"\r\n");
            }
        }
        self.conn.get_mut().write_all(&out).unwrap();
        cmds.iter().map(|_| read(&mut self.conn)).collect()
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn read(r: &mut BufReader<TcpStream>) -> V {
    let mut line = Vec::new();
    r.read_until(b'\n', &mut line).unwrap();
    assert!(line.ends_with(b"\r\n"), "bad reply line {line:?}");
    let body = &line[1..line.len() - 2];
    let text = String::from_utf8_lossy(body).into_owned();
    match line[0] {
        b'+' => V::Status(text),
        b'-' => V::Err(text),
        b':' => V::Int(text.parse().unwrap()),
        b'$' => {
            let n: i64 = text.parse().unwrap();
            if n < 0 {
                return V::Nil;
            }
            let mut buf = vec![0u8; n as usize + 2];
            std::io::Read::read_exact(r, &mut buf).unwrap();
            buf.truncate(n as usize);
            V::Bulk(buf)
        }
        b'*' => {
            let n: i64 = text.parse().unwrap();
            if n < 0 {
                return V::Nil;
            }
            V::Arr((0..n).map(|_| read(r)).collect())
        }
        other => panic!("unknown reply type {other}"),
    }
}

/// RDB length encoding.
fn rdb_len(b: &[u8], p: &mut usize) -> u64 {
    let t = b[*p] >> 6;
    match t {
        0 => {
            *p += 1;
            (b[*p - 1] & 63) as u64
        }
        1 => {
            *p += 2;
            (((b[*p - 2] & 63) as u64) << 8) | b[*p - 1] as u64
        }
        _ if b[*p] == 0x80 => {
            let v = u32::from_be_bytes(b[*p + 1..*p + 5].try_into().unwrap()) as u64;
            *p += 5;
            v
        }
        _ if b[*p] == 0x81 => {
            let v = u64::from_be_bytes(b[*p + 1..*p + 9].try_into().unwrap());
            *p += 9;
            v
        }
        _ => panic!("special string encoding in DUMP"),
    }
}

fn rdb_str(b: &[u8], p: &mut usize) -> Vec<u8> {
    let n = rdb_len(b, p) as usize;
    let s = b[*p..*p + n].to_vec();
    *p += n;
    s
}

/// The (master key, listpack) nodes of a stream's DUMP payload (needs
/// `rdbcompression no`).
pub fn dump_stream_nodes(payload: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    assert_eq!(payload[0], 19, "RDB_TYPE_STREAM_LISTPACKS_2 in Redis 7.0");
    let mut p = 1;
    let n = rdb_len(payload, &mut p);
    (0..n)
        .map(|_| {
            let k = rdb_str(payload, &mut p);
            let lp = rdb_str(payload, &mut p);
            (k, lp)
        })
        .collect()
}
