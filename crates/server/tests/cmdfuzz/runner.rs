//! Sends generated commands to a running server over several connections
//! and checks every reply.
//!
//! Each connection thread draws its own command stream from the seed (the
//! stream of connection `t` is a function of the seed and `t` alone; how
//! the connections interleave is not, so a failure is replayed with the
//! same seed and `PETREL_CMDFUZZ_CONNS=1` when it does not need another
//! connection). A connection speaks RESP2 or RESP3 (and switches with HELLO
//! and RESET), and sends single commands, pipelines, MULTI/EXEC blocks and,
//! in RESP3, (un)subscriptions. What counts as a failure:
//!
//! * the server closes the connection, except after QUIT;
//! * a reply does not arrive within [`REPLY_DEADLINE`]; a blocking command
//!   that still waits after [`BLOCK_GRACE`] is released with
//!   `CLIENT UNBLOCK` from another connection and must then reply;
//! * a reply that is not valid RESP, or uses RESP3 types on a RESP2
//!   connection (or RESP2 nulls on a RESP3 one), or a push on RESP2;
//! * more replies than commands (checked with a PING at the end of every
//!   session).
//!
//! The server log is checked by the caller (no "Panic while serving").

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use resp::Value;

use super::gen::{CmdModel, ConnState, Generator};
use super::values::Rng;
use crate::common::{script::quote, RawConn, Reply};

/// How long any reply may take.
pub const REPLY_DEADLINE: Duration = Duration::from_secs(10);
/// A reply slower than this is a stall: the server's state is taken
/// (see [`Outcome::diagnosis`]) while the reader keeps waiting.
pub const STALL: Duration = Duration::from_secs(3);
/// How long a blocking command may wait before it is unblocked.
pub const BLOCK_GRACE: Duration = Duration::from_millis(1500);
/// Failures recorded before the run stops early.
const MAX_FAILURES: usize = 20;

pub struct Config {
    pub seed: u64,
    pub duration: Duration,
    pub conns: usize,
    /// The server's process id: on the first hang, its threads' stacks
    /// are taken with gdb (when installed) for the report.
    pub pid: Option<u32>,
}

/// What a run did.
#[derive(Default)]
pub struct Outcome {
    pub commands: u64,
    pub errors: u64,
    pub pushes: u64,
    pub unblocked: u64,
    /// Replies that took longer than [`STALL`].
    pub stalls: u64,
    pub sessions: u64,
    /// Calls per command (full name).
    pub per_command: BTreeMap<String, u64>,
    pub failures: Vec<String>,
    /// The slowest replies seen (time from the unit's send to the reply),
    /// slowest first, at most 5.
    pub slowest: Vec<(Duration, String)>,
    /// What the server was doing at the first stall: whether a fresh
    /// connection gets PONG, CLIENT LIST, the threads' stacks.
    pub diagnosis: Option<String>,
}

struct Shared {
    port: u16,
    seed: u64,
    stop: AtomicBool,
    commands: AtomicU64,
    errors: AtomicU64,
    pushes: AtomicU64,
    unblocked: AtomicU64,
    stalls: AtomicU64,
    sessions: AtomicU64,
    per_command: Mutex<BTreeMap<String, u64>>,
    failures: Mutex<Vec<String>>,
    pid: Option<u32>,
    diagnosis: Mutex<Option<String>>,
    slowest: Mutex<Vec<(Duration, String)>>,
}

impl Shared {
    fn timed(&self, took: Duration, shown: &str) {
        if took < Duration::from_millis(200) {
            return;
        }
        let mut v = self.slowest.lock().unwrap();
        v.push((took, shown.chars().take(200).collect()));
        v.sort_by_key(|e| std::cmp::Reverse(e.0));
        v.truncate(5);
    }

    /// Records, once, what the server is doing (see
    /// [`Outcome::diagnosis`]): a fresh connection's PING and CLIENT LIST
    /// at a stall; with `stacks` (a reply that never came) also the
    /// threads' stacks, taken with gdb, which stops the server meanwhile:
    /// the run ends there, as other connections would then time out too.
    fn diagnose(&self, stacks: bool) {
        let mut d = self.diagnosis.lock().unwrap();
        if stacks {
            self.stop.store(true, Ordering::Relaxed);
        }
        if d.as_ref().is_some_and(|t| !stacks || t.contains("Thread ")) {
            return;
        }
        let mut text = String::new();
        match RawConn::try_tcp(self.port) {
            Ok(mut c) => {
                c.timeout = Duration::from_secs(2);
                text.push_str(&format!(
                    "a fresh connection's PING: {}\n",
                    c.try_cmd(&["PING"])
                ));
                text.push_str(&format!(
                    "CLIENT LIST: {}\n",
                    c.try_cmd(&["CLIENT", "LIST"])
                ));
            }
            Err(e) => text.push_str(&format!("connect: {e}\n")),
        }
        if let (true, Some(pid)) = (stacks, self.pid) {
            let out = std::process::Command::new("gdb")
                .args([
                    "-p",
                    &pid.to_string(),
                    "-batch",
                    "-ex",
                    "thread apply all bt 30",
                ])
                .output();
            if let Ok(o) = out {
                text.push_str(&String::from_utf8_lossy(&o.stdout));
            }
        }
        *d = Some(text);
    }

    fn fail(&self, msg: String) {
        let mut f = self.failures.lock().unwrap();
        f.push(msg);
        if f.len() >= MAX_FAILURES {
            self.stop.store(true, Ordering::Relaxed);
        }
    }
}

/// One command on its way: what to expect of its reply.
struct Sent {
    name: String,
    shown: String,
    blocking: bool,
    quit: bool,
}

/// A connection under test and what is known of its state.
struct Conn {
    raw: RawConn,
    id: i64,
    resp3: bool,
    in_multi: bool,
    subscribed: bool,
    /// The last commands sent and their replies (pushes too), for
    /// failure reports.
    history: VecDeque<(String, Option<String>)>,
}

fn show(argv: &[Vec<u8>]) -> String {
    argv.iter()
        .map(|a| {
            if a.len() > 60 {
                format!("<{} bytes of {}>", a.len(), quote(&a[..8]))
            } else {
                quote(a)
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether `v` (and everything inside it) may be sent on a connection of
/// this protocol: Err(reason) when not.
pub fn check_types(v: &Value, resp3: bool) -> Result<(), String> {
    use Value::*;
    match v {
        Simple(_) | Error(_) | Int(_) | Bulk(_) => Ok(()),
        NullBulk | NullArray if resp3 => Err("a RESP2 null in a RESP3 reply".into()),
        NullBulk | NullArray => Ok(()),
        Array(items) => items.iter().try_for_each(|i| check_types(i, resp3)),
        _ if !resp3 => Err(format!("a RESP3 type in a RESP2 reply: {v}")),
        Map(kv) => kv
            .iter()
            .try_for_each(|(k, v)| check_types(k, true).and(check_types(v, true))),
        Set(items) | Push(items) => items.iter().try_for_each(|i| check_types(i, true)),
        Attribute { .. } => Ok(()),
        _ => Ok(()),
    }
}

/// Parses one reply like `resp::parse_value`, but a push inside an
/// aggregate is taken out of it (validated, not counted as an element):
/// Redis 7.0 writes the Pub/Sub messages a command sends to its own
/// RESP3 client where they happen, so inside an EXEC reply too, and
/// petrel does the same (byte for byte).
pub fn parse_skipping_pushes(buf: &[u8]) -> Result<Option<(Value, usize)>, resp::ValueError> {
    let mut pos = 0;
    Ok(parse_at(buf, &mut pos)?.map(|v| (v, pos)))
}

fn parse_at(buf: &[u8], pos: &mut usize) -> Result<Option<Value>, resp::ValueError> {
    let Some(&kind) = buf.get(*pos) else {
        return Ok(None);
    };
    if !matches!(kind, b'*' | b'%' | b'~') {
        return Ok(resp::parse_value(&buf[*pos..])?.map(|(v, n)| {
            *pos += n;
            v
        }));
    }
    let rest = &buf[*pos..];
    let Some(eol) = rest.windows(2).position(|w| w == b"\r\n") else {
        return Ok(None);
    };
    let n: i64 = std::str::from_utf8(&rest[1..eol])
        .ok()
        .and_then(|t| t.parse().ok())
        .ok_or_else(|| resp::ValueError("bad aggregate length".into()))?;
    if n < 0 {
        // A RESP2 null array.
        return Ok(resp::parse_value(rest)?.map(|(v, k)| {
            *pos += k;
            v
        }));
    }
    let mut at = *pos + eol + 2;
    let count = if kind == b'%' {
        2 * n as usize
    } else {
        n as usize
    };
    let mut items = Vec::with_capacity(count.min(1024));
    while items.len() < count {
        if buf.get(at) == Some(&b'>') {
            match resp::parse_value(&buf[at..])? {
                Some((_, k)) => {
                    at += k;
                    continue;
                }
                None => return Ok(None),
            }
        }
        match parse_at(buf, &mut at)? {
            Some(v) => items.push(v),
            None => return Ok(None),
        }
    }
    *pos = at;
    Ok(Some(match kind {
        b'*' => Value::Array(items),
        b'~' => Value::Set(items),
        _ => {
            let mut it = items.into_iter();
            let mut kv = Vec::new();
            while let (Some(k), Some(v)) = (it.next(), it.next()) {
                kv.push((k, v));
            }
            Value::Map(kv)
        }
    }))
}

fn is_error(v: &Value) -> bool {
    matches!(v, Value::Error(_) | Value::BlobError(_))
}

impl Conn {
    fn open(port: u16, resp3: bool) -> Result<Conn, String> {
        let mut raw = RawConn::try_tcp(port).map_err(|e| format!("connect: {e}"))?;
        raw.timeout = REPLY_DEADLINE;
        let id = match raw.try_cmd(&["CLIENT", "ID"]) {
            Reply::Value(Value::Int(id)) => id,
            other => return Err(format!("CLIENT ID: {other}")),
        };
        if resp3 {
            match raw.try_cmd(&["HELLO", "3"]) {
                Reply::Value(Value::Map(_)) => {}
                other => return Err(format!("HELLO 3: {other}")),
            }
        }
        Ok(Conn {
            raw,
            id,
            resp3,
            in_multi: false,
            subscribed: false,
            history: VecDeque::new(),
        })
    }

    fn remember(&mut self, shown: &str) {
        if self.history.len() == 48 {
            self.history.pop_front();
        }
        self.history.push_back((shown.to_string(), None));
    }

    /// Notes a reply (or a push) in the history.
    fn note(&mut self, v: &Value) {
        let mut text = v.to_string();
        if text.len() > 100 {
            let cut = text.char_indices().nth(100).map_or(text.len(), |(i, _)| i);
            text.truncate(cut);
            text.push_str("...");
        }
        if let Value::Push(_) = v {
            if self.history.len() == 48 {
                self.history.pop_front();
            }
            self.history
                .push_back((format!("<push {text}>"), Some(String::new())));
            return;
        }
        if let Some(e) = self.history.iter_mut().find(|e| e.1.is_none()) {
            e.1 = Some(text);
        }
    }

    fn trace(&self) -> String {
        self.history
            .iter()
            .map(|(c, r)| match r {
                Some(r) if r.is_empty() => c.clone(),
                Some(r) => format!("{c}  ->  {r}"),
                None => format!("{c}  ->  (no reply yet)"),
            })
            .collect::<Vec<_>>()
            .join("\n  ")
    }

    fn state(&self, restricted: bool) -> ConnState {
        ConnState {
            resp3: self.resp3,
            in_multi: restricted || self.in_multi,
            maybe_subscribed: self.subscribed,
        }
    }

    /// Reads the next reply that is not a push (pushes are checked and
    /// counted). A blocking command is unblocked after [`BLOCK_GRACE`].
    fn read(&mut self, sh: &Shared, blocking: bool) -> Reply {
        let start = Instant::now();
        let mut unblocked = false;
        let mut stalled = false;
        loop {
            let limit = if blocking && !unblocked {
                BLOCK_GRACE
            } else if !blocking && !stalled {
                STALL
            } else {
                REPLY_DEADLINE
            };
            let left = limit.saturating_sub(start.elapsed());
            let reply = if self.resp3 {
                self.raw.read_reply_with(left, parse_skipping_pushes)
            } else {
                self.raw.read_reply_within(left)
            };
            match reply {
                Reply::Value(Value::Push(p)) => {
                    self.note(&Value::Push(p.clone()));
                    if !self.resp3 {
                        return Reply::Invalid(format!("a push on a RESP2 connection: {p:?}"));
                    }
                    if let Err(e) = check_types(&Value::Push(p), true) {
                        return Reply::Invalid(e);
                    }
                    sh.pushes.fetch_add(1, Ordering::Relaxed);
                }
                Reply::Timeout if !blocking && !stalled => {
                    // Not a failure yet: note what the server is doing.
                    stalled = true;
                    sh.stalls.fetch_add(1, Ordering::Relaxed);
                    sh.diagnose(false);
                }
                Reply::Timeout if blocking && !unblocked => {
                    unblocked = true;
                    sh.unblocked.fetch_add(1, Ordering::Relaxed);
                    if let Ok(mut ctl) = RawConn::try_tcp(sh.port) {
                        let _ = ctl.try_cmd(&["CLIENT", "UNBLOCK", &self.id.to_string()]);
                    }
                }
                Reply::Value(v) => {
                    self.note(&v);
                    return Reply::Value(v);
                }
                other => return other,
            }
        }
    }
}

/// Runs the fuzzer against the server on `port`.
pub fn run(port: u16, gen: &Generator, cfg: &Config) -> Outcome {
    let sh = Shared {
        port,
        seed: cfg.seed,
        stop: AtomicBool::new(false),
        commands: AtomicU64::new(0),
        errors: AtomicU64::new(0),
        pushes: AtomicU64::new(0),
        unblocked: AtomicU64::new(0),
        stalls: AtomicU64::new(0),
        sessions: AtomicU64::new(0),
        per_command: Mutex::new(BTreeMap::new()),
        failures: Mutex::new(Vec::new()),
        pid: cfg.pid,
        diagnosis: Mutex::new(None),
        slowest: Mutex::new(Vec::new()),
    };
    let deadline = Instant::now() + cfg.duration;
    std::thread::scope(|s| {
        for t in 0..cfg.conns {
            let sh = &sh;
            s.spawn(move || {
                let mut rng = Rng(cfg.seed ^ (t as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
                let mut local: BTreeMap<String, u64> = BTreeMap::new();
                let mut session = 0;
                while Instant::now() < deadline && !sh.stop.load(Ordering::Relaxed) {
                    session += 1;
                    sh.sessions.fetch_add(1, Ordering::Relaxed);
                    if let Err(e) = run_session(sh, gen, &mut rng, deadline, &mut local) {
                        sh.fail(format!(
                            "seed {} connection {t} session {session}: {e}",
                            sh.seed
                        ));
                    }
                }
                let mut all = sh.per_command.lock().unwrap();
                for (k, v) in local {
                    *all.entry(k).or_default() += v;
                }
            });
        }
    });
    Outcome {
        commands: sh.commands.load(Ordering::Relaxed),
        errors: sh.errors.load(Ordering::Relaxed),
        pushes: sh.pushes.load(Ordering::Relaxed),
        unblocked: sh.unblocked.load(Ordering::Relaxed),
        stalls: sh.stalls.load(Ordering::Relaxed),
        sessions: sh.sessions.load(Ordering::Relaxed),
        per_command: sh.per_command.into_inner().unwrap(),
        failures: sh.failures.into_inner().unwrap(),
        diagnosis: sh.diagnosis.into_inner().unwrap(),
        slowest: sh.slowest.into_inner().unwrap(),
    }
}

/// One connection's life: a few hundred commands at most, then a check
/// that nothing extra is pending.
fn run_session(
    sh: &Shared,
    gen: &Generator,
    rng: &mut Rng,
    deadline: Instant,
    counts: &mut BTreeMap<String, u64>,
) -> Result<(), String> {
    let mut c = Conn::open(sh.port, rng.one_in(2))?;
    let units = 10 + rng.below(200);
    for _ in 0..units {
        if Instant::now() >= deadline || sh.stop.load(Ordering::Relaxed) {
            break;
        }
        let mut batch: Vec<(Vec<Vec<u8>>, Sent)> = Vec::new();
        let mut sync_ping = false;
        let kind = rng.below(20);
        let mk = |m: &CmdModel, argv: Vec<Vec<u8>>| {
            let sent = Sent {
                name: m.full_name(),
                shown: show(&argv),
                blocking: m.blocking(),
                quit: m.full_name() == "quit",
            };
            (argv, sent)
        };
        match kind {
            // A pipeline.
            0..=3 => {
                for _ in 0..2 + rng.below(15) {
                    let (m, argv) = gen.call(rng, c.state(true));
                    batch.push(mk(m, argv));
                }
            }
            // A transaction, as a pipeline or one command at a time.
            4..=6 => {
                let lit = |w: &[&str]| -> Vec<Vec<u8>> {
                    w.iter().map(|s| s.as_bytes().to_vec()).collect()
                };
                let plain = |argv: Vec<Vec<u8>>, name: &str| {
                    let shown = show(&argv);
                    (
                        argv,
                        Sent {
                            name: name.into(),
                            shown,
                            blocking: false,
                            quit: false,
                        },
                    )
                };
                if rng.one_in(3) {
                    let k = super::values::key(rng);
                    batch.push(plain(vec![b"WATCH".to_vec(), k], "watch"));
                }
                batch.push(plain(lit(&["MULTI"]), "multi"));
                for _ in 0..rng.below(8) {
                    let (m, argv) = gen.call(rng, c.state(true));
                    batch.push(mk(m, argv));
                }
                let end = if rng.one_in(6) { "DISCARD" } else { "EXEC" };
                batch.push(plain(lit(&[end]), &end.to_ascii_lowercase()));
            }
            // One command, HELLO/QUIT/(un)subscribe allowed.
            _ => {
                let (m, argv) = gen.call(rng, c.state(false));
                sync_ping = m.subscribes();
                batch.push(mk(m, argv));
            }
        }
        let one_by_one = batch.len() > 1 && rng.one_in(3);
        if one_by_one {
            for (argv, sent) in batch {
                exchange(sh, &mut c, vec![(argv, sent)], false, counts)?;
                if c.raw_closed_by_quit() {
                    return Ok(());
                }
            }
        } else {
            exchange(sh, &mut c, batch, sync_ping, counts)?;
            if c.raw_closed_by_quit() {
                return Ok(());
            }
        }
    }
    // Nothing more than one reply per command: a PING now is answered by PONG.
    let token = format!("end-{}", rng.next());
    if c.raw
        .try_send(&resp::encode_command(&["PING", &token]))
        .is_err()
    {
        return Err(format!(
            "closed at the end of the session; last commands:\n  {}",
            c.trace()
        ));
    }
    match c.read(sh, false) {
        Reply::Value(Value::Bulk(b)) if b == token.as_bytes() => Ok(()),
        Reply::Value(Value::Simple(b)) if b == b"QUEUED" && c.in_multi => Ok(()),
        Reply::Value(v) => Err(format!(
            "an extra reply {v} before the final PING's; last commands:\n  {}",
            c.trace()
        )),
        other => Err(format!(
            "final PING: {other}; last commands:\n  {}",
            c.trace()
        )),
    }
}

impl Conn {
    fn raw_closed_by_quit(&self) -> bool {
        self.id < 0
    }
}

/// Sends `batch` at once and reads its replies in order.
fn exchange(
    sh: &Shared,
    c: &mut Conn,
    batch: Vec<(Vec<Vec<u8>>, Sent)>,
    sync_ping: bool,
    counts: &mut BTreeMap<String, u64>,
) -> Result<(), String> {
    let mut bytes = Vec::new();
    for (argv, sent) in &batch {
        bytes.extend(resp::encode_command(argv));
        c.remember(&sent.shown);
    }
    let token = "fuzz-sync";
    if sync_ping {
        bytes.extend(resp::encode_command(&["PING", token]));
    }
    // Every unit ends with an ECHO whose reply must come right after the
    // unit's own replies (QUEUED inside a transaction): a command that
    // answers twice, or not at all, is caught at its unit.
    let quits = batch.iter().any(|(_, s)| s.quit);
    let check = format!("fuzz-check-{}", sh.commands.load(Ordering::Relaxed));
    if !sync_ping && !quits {
        bytes.extend(resp::encode_command(&["ECHO", &check]));
        c.remember(&format!("ECHO {check}"));
    }
    let history = |c: &Conn| c.trace();
    let proto = |c: &Conn| if c.resp3 { "RESP3" } else { "RESP2" };
    let sent_at = Instant::now();
    if c.raw.try_send(&bytes).is_err() {
        return Err(format!(
            "[{}] the connection was closed before sending; last commands:\n  {}",
            proto(c),
            history(c)
        ));
    }
    for (argv, sent) in &batch {
        sh.commands.fetch_add(1, Ordering::Relaxed);
        *counts.entry(sent.name.clone()).or_default() += 1;
        let reply = if sent.name.contains("subscribe") && sync_ping {
            // Pushes only, or one error, then the PING's reply.
            let mut seen = Vec::new();
            loop {
                match c.read(sh, false) {
                    Reply::Value(Value::Bulk(b)) if b == token.as_bytes() => break,
                    Reply::Value(v) => seen.push(v),
                    other => {
                        return Err(format!(
                            "[{}] {}: {other}; last commands:\n  {}",
                            proto(c),
                            sent.shown,
                            history(c)
                        ))
                    }
                }
            }
            if seen.len() > 1 || seen.iter().any(|v| !is_error(v)) {
                return Err(format!(
                    "[RESP3] {}: replies besides pushes: {seen:?}; last commands:\n  {}",
                    sent.shown,
                    history(c)
                ));
            }
            if seen.is_empty()
                && !sent.name.starts_with("un")
                && !sent.name.starts_with("pun")
                && !sent.name.starts_with("sun")
            {
                c.subscribed = true;
            }
            sh.errors.fetch_add(seen.len() as u64, Ordering::Relaxed);
            continue;
        } else {
            c.read(sh, sent.blocking)
        };
        let v = match reply {
            Reply::Value(v) => v,
            Reply::Closed if sent.quit => {
                return Err(format!("QUIT: closed without +OK; {}", sent.shown));
            }
            Reply::Closed => {
                return Err(format!(
                    "[{}] the server closed the connection after {}; last commands:\n  {}",
                    proto(c),
                    sent.shown,
                    history(c)
                ))
            }
            Reply::Timeout => {
                sh.diagnose(true);
                return Err(format!(
                    "[{}] no reply within {REPLY_DEADLINE:?} (blocking: {}) to {}; last commands:\n  {}",
                    proto(c),
                    sent.blocking,
                    sent.shown,
                    history(c)
                ));
            }
            other => {
                return Err(format!(
                    "[{}] {}: {other}; last commands:\n  {}",
                    proto(c),
                    sent.shown,
                    history(c)
                ))
            }
        };
        sh.timed(sent_at.elapsed(), &sent.shown);
        // HELLO answers in the protocol it switches to.
        if sent.name == "hello" && !is_error(&v) && !c.in_multi {
            match argv.get(1).map(|v| v.as_slice()) {
                Some(b"2") => c.resp3 = false,
                Some(b"3") => c.resp3 = true,
                _ => {}
            }
        }
        if let Err(e) = check_types(&v, c.resp3) {
            return Err(format!(
                "[{}] {}: {e}; last commands:\n  {}",
                proto(c),
                sent.shown,
                history(c)
            ));
        }
        if is_error(&v) {
            sh.errors.fetch_add(1, Ordering::Relaxed);
        }
        // What the reply tells about the connection's state.
        let ok = !is_error(&v);
        match sent.name.as_str() {
            "multi" if ok => c.in_multi = true,
            // An arity error leaves the transaction open; any other reply ends it.
            "exec" | "discard" => {
                let arity =
                    matches!(&v, Value::Error(e) if e.windows(15).any(|w| w == b"wrong number of"));
                if !arity {
                    c.in_multi = false;
                }
            }
            "reset" if ok => {
                c.in_multi = false;
                c.resp3 = false;
                c.subscribed = false;
            }
            "quit" => {
                if !c.raw.closed_within(Duration::from_secs(5)) {
                    return Err("QUIT: the connection stayed open".into());
                }
                c.id = -1;
                return Ok(());
            }
            _ => {}
        }
    }
    if !sync_ping && !quits {
        let ok = match c.read(sh, false) {
            Reply::Value(Value::Bulk(b)) => b == check.as_bytes(),
            Reply::Value(Value::Simple(b)) => b == b"QUEUED" && c.in_multi,
            _ => false,
        };
        if !ok {
            return Err(format!(
                "[{}] the replies of this unit are off by some (the closing ECHO got another reply); last commands:\n  {}",
                proto(c),
                history(c)
            ));
        }
    }
    Ok(())
}
