//! Test harness shared by every end-to-end and differential test.
//!
//! * [`TestServer`] starts the built `petrel` binary on a free port (retrying
//!   when another test grabbed the port first), waits until it answers, hands
//!   out clients ([`TestServer::client`] for the `redis` crate,
//!   [`TestServer::raw`] for exact bytes), captures its log, and kills it on
//!   drop. Each test starts its own server, so tests run in parallel.
//! * [`RefRedis`] does the same for a reference `redis-server`; it returns
//!   `None` (after a loud message) when redis-server is not installed, unless
//!   `PETREL_REQUIRE_REDIS=1` asks for a hard failure.
//! * [`diff`] runs command scripts against both and reports every mismatch;
//!   see `diff.rs` and `script.rs`.
//!
//! Usage from a test file: `mod common; use common::*;`.
#![allow(dead_code, unused_imports)]

pub mod cluster;
pub mod diff;
pub mod raw;
pub mod rdbdata;
pub mod script;

pub use diff::{diff, diff_text, diff_text_with, diff_with, help_with_additions, DiffOpts};
pub use raw::{RawConn, Reply};
pub use resp::Value;
pub use script::{Mode, Script, Step};
pub use std::time::Duration;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Path of the petrel binary cargo built for these tests.
pub const PETREL_BIN: &str = env!("CARGO_BIN_EXE_petrel");

/// How long a server may take to start answering.
const START_TIMEOUT: Duration = Duration::from_secs(15);

/// A temporary directory removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static N: AtomicU64 = AtomicU64::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let p = std::env::temp_dir().join(format!(
            "petrel-test-{tag}-{}-{n}-{}",
            std::process::id(),
            nanos_now() % 1_000_000_000
        ));
        std::fs::create_dir_all(&p).expect("create temp dir");
        TempDir(p)
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
    pub fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn nanos_now() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

/// A port that was free a moment ago (the OS picks it).
pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    l.local_addr().unwrap().port()
}

/// A child process whose stdout and stderr are collected into one log.
pub struct Proc {
    child: Option<Child>,
    log: Arc<Mutex<Vec<u8>>>,
    readers: Vec<std::thread::JoinHandle<()>>,
    status: Option<ExitStatus>,
}

impl Proc {
    pub fn spawn(bin: &str, args: &[String], cwd: &Path) -> std::io::Result<Proc> {
        let mut child = Command::new(bin)
            .args(args)
            .current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let log = Arc::new(Mutex::new(Vec::new()));
        let mut readers = Vec::new();
        let out: Box<dyn Read + Send> = Box::new(child.stdout.take().unwrap());
        let err: Box<dyn Read + Send> = Box::new(child.stderr.take().unwrap());
        for pipe in [out, err] {
            let log = log.clone();
            readers.push(std::thread::spawn(move || {
                let mut r = BufReader::new(pipe);
                let mut line = Vec::new();
                loop {
                    line.clear();
                    match r.read_until(b'\n', &mut line) {
                        Ok(0) | Err(_) => break,
                        Ok(_) => log.lock().unwrap().extend_from_slice(&line),
                    }
                }
            }));
        }
        Ok(Proc {
            child: Some(child),
            log,
            readers,
            status: None,
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().map(|c| c.id()).unwrap_or(0)
    }

    /// Everything the process wrote to stdout and stderr so far.
    pub fn log(&self) -> String {
        String::from_utf8_lossy(&self.log.lock().unwrap()).into_owned()
    }

    /// Exit status if the process has exited.
    pub fn try_status(&mut self) -> Option<ExitStatus> {
        if self.status.is_none() {
            if let Some(c) = self.child.as_mut() {
                if let Ok(Some(st)) = c.try_wait() {
                    self.status = Some(st);
                }
            }
        }
        self.status
    }

    /// Waits up to `timeout` for the process to exit.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let end = Instant::now() + timeout;
        loop {
            if let Some(st) = self.try_status() {
                self.join_readers();
                return Some(st);
            }
            if Instant::now() >= end {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn join_readers(&mut self) {
        for r in self.readers.drain(..) {
            let _ = r.join();
        }
    }

    /// Sends a signal (libc::SIGTERM, SIGINT...).
    pub fn signal(&self, sig: i32) {
        if self.status.is_none() {
            // SAFETY: kill(2) on a child pid we spawned and have not reaped.
            unsafe {
                libc::kill(self.pid() as i32, sig);
            }
        }
    }

    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            if self.status.is_none() {
                let _ = c.kill();
            }
            let _ = c.wait();
        }
        self.join_readers();
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Which server a [`Server`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Petrel,
    Redis,
}

/// How to start a server: `--name value` settings and/or a config file.
#[derive(Clone, Debug, Default)]
pub struct Opts {
    /// `--name value` pairs (value may contain spaces: it is one argument).
    pub args: Vec<(String, String)>,
    /// Config file contents; written to `<tmp>/server.conf` and passed first.
    pub config: Option<String>,
    /// Don't listen on TCP (`--port 0`); readiness is checked on `unixsocket`.
    pub no_tcp: bool,
}

impl Opts {
    pub fn new(args: &[(&str, &str)]) -> Opts {
        Opts {
            args: args
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect(),
            ..Default::default()
        }
    }
    pub fn arg(mut self, name: &str, value: &str) -> Opts {
        self.args.push((name.into(), value.into()));
        self
    }
    pub fn config(mut self, text: &str) -> Opts {
        self.config = Some(text.into());
        self
    }
    fn get(&self, name: &str) -> Option<&str> {
        self.args
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A running server (petrel or redis-server) owned by one test.
pub struct Server {
    pub kind: Kind,
    port: u16,
    proc: Proc,
    dir: TempDir,
    unixsocket: Option<String>,
    password: Option<String>,
    config_path: Option<PathBuf>,
    quiet: bool,
}

/// The petrel server under test.
pub type TestServer = Server;

impl Server {
    /// Starts petrel with `--name value` settings (threads defaults to 2).
    pub fn start(args: &[(&str, &str)]) -> Server {
        Server::start_opts(Kind::Petrel, Opts::new(args))
    }

    /// Starts petrel with full options (a config file, no TCP...).
    pub fn start_with(opts: Opts) -> Server {
        Server::start_opts(Kind::Petrel, opts)
    }

    pub fn start_opts(kind: Kind, opts: Opts) -> Server {
        let mut last_log = String::new();
        for _attempt in 0..8 {
            match Server::try_start(kind, &opts) {
                Ok(s) => return s,
                Err((retry, log)) => {
                    if !retry {
                        panic!("{kind:?} failed to start:\n{log}");
                    }
                    last_log = log;
                }
            }
        }
        panic!("{kind:?} failed to start after retries:\n{last_log}");
    }

    /// Err((retryable, log)).
    fn try_start(kind: Kind, opts: &Opts) -> Result<Server, (bool, String)> {
        let dir = TempDir::new(match kind {
            Kind::Petrel => "petrel",
            Kind::Redis => "redis",
        });
        let port = if opts.no_tcp { 0 } else { free_port() };
        let mut args: Vec<String> = Vec::new();
        let mut config_path = None;
        if let Some(text) = &opts.config {
            let p = dir.join("server.conf");
            std::fs::write(&p, text).unwrap();
            args.push(p.display().to_string());
            config_path = Some(p);
        }
        let bin = match kind {
            Kind::Petrel => {
                if opts.get("threads").is_none() && !config_has(opts, "threads") {
                    args.extend(["--threads".into(), "2".into()]);
                }
                // As the reference redis-server below: no save points
                // unless the test asks for them.
                if opts.get("save").is_none() && !config_has(opts, "save") {
                    args.extend(["--save".into(), String::new()]);
                }
                PETREL_BIN.to_string()
            }
            Kind::Redis => {
                args.extend(
                    [
                        "--save",
                        "",
                        "--appendonly",
                        "no",
                        "--daemonize",
                        "no",
                        "--dir",
                    ]
                    .map(String::from),
                );
                args.push(dir.path().display().to_string());
                redis_server_bin()
            }
        };
        if opts.get("port").is_none() {
            args.extend(["--port".into(), port.to_string()]);
        }
        for (n, v) in &opts.args {
            args.push(format!("--{n}"));
            args.push(v.clone());
        }
        let port = opts
            .get("port")
            .map(|p| p.parse().expect("port"))
            .unwrap_or(port);
        let mut proc = Proc::spawn(&bin, &args, dir.path()).map_err(|e| (false, e.to_string()))?;
        let unixsocket = opts.get("unixsocket").map(String::from);
        let password = opts.get("requirepass").map(String::from);
        let start = Instant::now();
        loop {
            if let Some(st) = proc.wait_exit(Duration::ZERO) {
                let log = format!("args: {args:?}\nexit: {st}\n{}", proc.log());
                let retry = log.contains("Address already in use");
                return Err((retry, log));
            }
            if probe(port, unixsocket.as_deref()) {
                // The port was free when picked, but another test's server
                // may have bound it first: then this one is about to exit
                // with "Address already in use" while the probe reached the
                // other. Only a listener owned by our child counts.
                if port == 0 || listens_on(proc.pid(), port) {
                    break;
                }
                // Retry on a new port (dropping `proc` stops the child).
                return Err((true, format!("port {port} answered by another process")));
            }
            if start.elapsed() > START_TIMEOUT {
                return Err((false, format!("args: {args:?}\nnot ready\n{}", proc.log())));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        Ok(Server {
            kind,
            port,
            proc,
            dir,
            unixsocket,
            password,
            config_path,
            quiet: false,
        })
    }

    /// Don't print the log when the test panics.
    pub fn quiet(mut self) -> Server {
        self.quiet = true;
        self
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub fn pid(&self) -> u32 {
        self.proc.pid()
    }

    /// The server's temporary working directory.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The config file the server was started with, if any.
    pub fn config_path(&self) -> Option<&Path> {
        self.config_path.as_deref()
    }

    /// A `redis` crate connection (RESP2), authenticated if `requirepass` was given.
    pub fn client(&self) -> redis::Connection {
        self.client_url(&self.url(false))
    }

    /// A `redis` crate connection speaking RESP3.
    pub fn client_resp3(&self) -> redis::Connection {
        self.client_url(&self.url(true))
    }

    pub fn url(&self, resp3: bool) -> String {
        let auth = match &self.password {
            Some(p) => format!(":{p}@"),
            None => String::new(),
        };
        let proto = if resp3 { "/?protocol=resp3" } else { "" };
        format!("redis://{auth}127.0.0.1:{}{proto}", self.port)
    }

    fn client_url(&self, url: &str) -> redis::Connection {
        let c = redis::Client::open(url).expect("redis url");
        c.get_connection_with_timeout(Duration::from_secs(10))
            .unwrap_or_else(|e| panic!("connect {url}: {e}\nlog:\n{}", self.log()))
    }

    /// A raw TCP connection for exact-byte tests.
    pub fn raw(&self) -> RawConn {
        RawConn::tcp(self.port)
    }

    /// A raw connection over the unix socket (`--unixsocket` must be set).
    pub fn raw_unix(&self) -> RawConn {
        RawConn::unix(
            self.unixsocket
                .as_deref()
                .expect("no unixsocket configured"),
        )
    }

    /// The server's log (stdout + stderr) so far.
    pub fn log(&self) -> String {
        self.proc.log()
    }

    /// Waits until the log contains `needle`; false on timeout.
    pub fn wait_log(&self, needle: &str, timeout: Duration) -> bool {
        let end = Instant::now() + timeout;
        while Instant::now() < end {
            if self.log().contains(needle) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        self.log().contains(needle)
    }

    /// True if the process has not exited.
    pub fn is_alive(&mut self) -> bool {
        self.proc.try_status().is_none()
    }

    /// Waits up to `timeout` for the process to exit.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        self.proc.wait_exit(timeout)
    }

    /// Sends a signal (e.g. `libc::SIGTERM`).
    pub fn signal(&self, sig: i32) {
        self.proc.signal(sig)
    }

    /// Panics (with the log) unless a fresh connection answers PING.
    pub fn assert_alive(&mut self) {
        let ok = self.is_alive() && {
            let mut r = self.raw();
            if let Some(p) = self.password.clone() {
                r.cmd(&["AUTH", &p]);
            }
            r.cmd(&["PING"]) == Value::simple("PONG")
        };
        assert!(ok, "server is not answering PING; log:\n{}", self.log());
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if std::thread::panicking() && !self.quiet {
            eprintln!(
                "---- {:?} log (port {}) ----\n{}---- end of log ----",
                self.kind,
                self.port,
                self.log()
            );
        }
    }
}

fn config_has(opts: &Opts, name: &str) -> bool {
    opts.config
        .as_deref()
        .is_some_and(|c| c.lines().any(|l| l.split_whitespace().next() == Some(name)))
}

/// True once the server answers anything to PING.
/// Does process `pid` own a listening TCP socket on `port` (IPv4 or IPv6)?
fn listens_on(pid: u32, port: u16) -> bool {
    let mut inodes = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            // local_address is "ADDR:PORT" in hex, st 0A = LISTEN, inode at 9.
            if f.len() > 9
                && f[3] == "0A"
                && f[1]
                    .rsplit(':')
                    .next()
                    .and_then(|p| u16::from_str_radix(p, 16).ok())
                    == Some(port)
            {
                inodes.push(format!("socket:[{}]", f[9]));
            }
        }
    }
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.flatten().any(|fd| {
        std::fs::read_link(fd.path())
            .is_ok_and(|l| inodes.iter().any(|i| l.as_os_str() == i.as_str()))
    })
}

fn probe(port: u16, unixsocket: Option<&str>) -> bool {
    fn ask<S: Read + Write>(mut s: S) -> bool {
        if s.write_all(b"PING\r\n").is_err() {
            return false;
        }
        let mut b = [0u8; 64];
        matches!(s.read(&mut b), Ok(n) if n > 0)
    }
    let t = Duration::from_millis(500);
    if port != 0 {
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        return match TcpStream::connect_timeout(&addr, t) {
            Ok(s) => {
                let _ = s.set_read_timeout(Some(t));
                ask(s)
            }
            Err(_) => false,
        };
    }
    match unixsocket.map(std::os::unix::net::UnixStream::connect) {
        Some(Ok(s)) => {
            let _ = s.set_read_timeout(Some(t));
            ask(s)
        }
        _ => false,
    }
}

/// A reference redis-server for differential tests.
pub struct RefRedis;

impl RefRedis {
    /// Starts redis-server with default settings, or None if it is missing.
    pub fn start() -> Option<Server> {
        RefRedis::start_with(Opts::default())
    }

    pub fn start_with(opts: Opts) -> Option<Server> {
        if !redis_available() {
            return None;
        }
        Some(Server::start_opts(Kind::Redis, opts))
    }
}

/// The reference server binary: `$PETREL_REDIS_SERVER` or `redis-server`.
pub fn redis_server_bin() -> String {
    std::env::var("PETREL_REDIS_SERVER").unwrap_or_else(|_| "redis-server".into())
}

/// Whether `redis-server` can be run. When it cannot, prints a loud notice
/// once per test binary, straight to stderr so the test harness does not
/// capture it; panics instead if `PETREL_REQUIRE_REDIS=1`.
pub fn redis_available() -> bool {
    static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let ok = *AVAILABLE.get_or_init(|| {
        let ok = Command::new(redis_server_bin())
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !ok && std::env::var("PETREL_REQUIRE_REDIS").as_deref() != Ok("1") {
            let _ = std::io::stderr().write_all(
                b"\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n\
                  !!! REDIS-SERVER NOT FOUND: differential tests skipped       !!!\n\
                  !!! install redis-server 7.0 (apt-get install redis-server)  !!!\n\
                  !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n\n",
            );
        }
        ok
    });
    if !ok && std::env::var("PETREL_REQUIRE_REDIS").as_deref() == Ok("1") {
        panic!(
            "{} not found and PETREL_REQUIRE_REDIS=1",
            redis_server_bin()
        );
    }
    ok
}

/// Runs petrel with these arguments and expects it to fail at startup.
/// Returns (exit code, combined output).
pub fn petrel_startup_failure(config: Option<&str>, args: &[&str]) -> (Option<i32>, String) {
    let dir = TempDir::new("fail");
    let mut all: Vec<String> = Vec::new();
    if let Some(text) = config {
        let p = dir.join("bad.conf");
        std::fs::write(&p, text).unwrap();
        all.push(p.display().to_string());
    }
    all.extend(args.iter().map(|s| s.to_string()));
    if !args.contains(&"--port") {
        all.extend(["--port".into(), free_port().to_string()]);
    }
    let mut p = Proc::spawn(PETREL_BIN, &all, dir.path()).expect("spawn petrel");
    match p.wait_exit(Duration::from_secs(10)) {
        Some(st) => (st.code(), p.log()),
        None => panic!(
            "petrel {all:?} was expected to fail but is still running:\n{}",
            p.log()
        ),
    }
}

/// Polls `f` until it returns true or `timeout` passes.
pub fn wait_until(timeout: Duration, mut f: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + timeout;
    loop {
        if f() {
            return true;
        }
        if Instant::now() >= end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Shorthand: a redis crate command from string args.
pub fn rcmd(args: &[&str]) -> redis::Cmd {
    let mut c = redis::cmd(args[0]);
    for a in &args[1..] {
        c.arg(*a);
    }
    c
}

/// `assert_eq!` for replies, printing both redis-cli style on failure.
#[macro_export]
macro_rules! assert_reply {
    ($got:expr, $want:expr) => {{
        let (got, want) = (&$got, &$want);
        if got != want {
            panic!("reply mismatch\n  got:  {}\n  want: {}", got, want);
        }
    }};
}

/// An error reply value.
pub fn err(text: &str) -> Value {
    Value::Error(text.as_bytes().to_vec())
}

/// Keyspace events a list of commands fires, as (channel, payload) pairs,
/// collected by a second connection subscribed to every keyspace channel.
pub fn keyspace_events(srv: &Server, cmds: &[&[&str]]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut c = srv.raw();
    let mut sub = srv.raw();
    c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "KEA"]);
    sub.cmd(&["PSUBSCRIBE", "__key*"]);
    sub.cmd(&["SUBSCRIBE", "end-of-test"]);
    for cmd in cmds {
        c.cmd(cmd);
    }
    c.cmd(&["PUBLISH", "end-of-test", "x"]);
    let mut out = Vec::new();
    loop {
        let Value::Array(m) = sub.read_reply() else {
            panic!("unexpected message")
        };
        match &m[..] {
            [Value::Bulk(k), _, Value::Bulk(ch), Value::Bulk(p)] if k == b"pmessage" => {
                out.push((ch.clone(), p.clone()))
            }
            [Value::Bulk(k), ..] if k == b"message" => return out,
            _ => panic!("unexpected message {m:?}"),
        }
    }
}

/// Runs `cmds` on petrel and on redis-server and compares the keyspace
/// events both fired.
pub fn diff_events(cmds: &[&[&str]]) {
    let petrel = TestServer::start(&[]);
    let got = keyspace_events(&petrel, cmds);
    let Some(redis) = RefRedis::start() else {
        return;
    };
    let want = keyspace_events(&redis, cmds);
    let show = |v: &[(Vec<u8>, Vec<u8>)]| {
        v.iter()
            .map(|(c, p)| {
                format!(
                    "{} {}",
                    String::from_utf8_lossy(c),
                    String::from_utf8_lossy(p)
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(show(&got), show(&want), "petrel vs redis keyspace events");
}

/// A named pipe at `path` that a reader (a server loading a file) gets in
/// two halves: the first at once, the second only on [`HalfFedFifo::finish`],
/// so a test can look at the server mid-load without depending on timing.
pub struct HalfFedFifo {
    rest: std::sync::mpsc::Sender<()>,
    feeder: std::thread::JoinHandle<()>,
}

impl HalfFedFifo {
    pub fn new(path: std::path::PathBuf, data: Vec<u8>) -> HalfFedFifo {
        let c = std::ffi::CString::new(path.display().to_string()).unwrap();
        // SAFETY: mkfifo with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let (rest, rx) = std::sync::mpsc::channel::<()>();
        let feeder = std::thread::spawn(move || {
            use std::io::Write;
            let half = data.len() / 2;
            let mut f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
            f.write_all(&data[..half]).unwrap();
            f.flush().unwrap();
            rx.recv().unwrap();
            f.write_all(&data[half..]).unwrap();
        });
        HalfFedFifo { rest, feeder }
    }

    /// Sends the second half and waits until it is written.
    pub fn finish(self) {
        self.rest.send(()).unwrap();
        self.feeder.join().unwrap();
    }
}
