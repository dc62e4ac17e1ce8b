//! Differential runner: the same script against petrel and redis-server, once
//! over RESP2 and once after `HELLO 3`, each pass on a fresh pair of servers
//! (so state never leaks between passes). Every mismatch is collected and
//! reported together: the step, petrel's reply and redis's reply.

use std::time::Duration;

use resp::Value;

use super::raw::{RawConn, Reply};
use super::script::{Action, Mode, Only, Script, Step};
use super::{redis_available, Kind, Opts, Server};

/// Settings for both servers of a differential run.
#[derive(Clone, Debug, Default)]
pub struct DiffOpts {
    /// `--name value` given to both petrel and redis-server.
    pub args: Vec<(String, String)>,
    /// Extra settings for petrel only.
    pub petrel_args: Vec<(String, String)>,
    /// Password to send with AUTH right after connecting (when the script
    /// itself should not deal with authentication).
    pub auth: Option<String>,
}

impl DiffOpts {
    pub fn new(args: &[(&str, &str)]) -> DiffOpts {
        DiffOpts {
            args: args
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect(),
            ..Default::default()
        }
    }
}

/// Runs `script` against both servers; panics with a report of every mismatch.
pub fn diff(script: &Script) {
    diff_with(script, &DiffOpts::default())
}

/// Parses and runs a text script (see `script.rs` for the syntax).
pub fn diff_text(name: &str, text: &str) {
    diff(&Script::parse(name, text))
}

pub fn diff_text_with(name: &str, text: &str, opts: &DiffOpts) {
    diff_with(&Script::parse(name, text), opts)
}

pub fn diff_with(script: &Script, opts: &DiffOpts) {
    let have_redis = redis_available();
    let mut report = Vec::new();
    let servers: Vec<(Server, Option<Server>)> = std::thread::scope(|s| {
        let hs: Vec<_> = [2, 3]
            .iter()
            .map(|_| {
                s.spawn(|| {
                    let p = s.spawn(|| {
                        let mut o = Opts::default();
                        o.args.extend(opts.args.iter().cloned());
                        o.args.extend(opts.petrel_args.iter().cloned());
                        Server::start_opts(Kind::Petrel, o).quiet()
                    });
                    let r = have_redis.then(|| {
                        let mut o = Opts::default();
                        o.args.extend(opts.args.iter().cloned());
                        Server::start_opts(Kind::Redis, o).quiet()
                    });
                    (p.join().unwrap(), r)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for ((petrel, redis), proto) in servers.iter().zip([2u8, 3]) {
        run_pass(script, opts, proto, petrel, redis.as_ref(), &mut report);
    }
    if !report.is_empty() {
        panic!(
            "differential script '{}': {} mismatch(es)\n{}",
            script.name,
            report.len(),
            report.join("\n")
        );
    }
}

struct Side {
    conn: RawConn,
    port: u16,
}

impl Side {
    fn open(port: u16, proto: u8, opts: &DiffOpts) -> Side {
        let mut conn = RawConn::tcp(port);
        conn.timeout = Duration::from_secs(3);
        if let Some(p) = &opts.auth {
            conn.cmd(&["AUTH", p]);
        }
        // The harness's readiness probe (a PING on its own connection) may
        // not be reaped yet; scripts that count clients (CLIENT KILL ...)
        // must see only this one, as a fresh single-client server would.
        let deadline = std::time::Instant::now() + Duration::from_secs(2);
        while std::time::Instant::now() < deadline {
            match conn.cmd(&["INFO", "clients"]) {
                resp::Value::Bulk(b)
                    if !String::from_utf8_lossy(&b).contains("connected_clients:1\r\n") =>
                {
                    std::thread::sleep(Duration::from_millis(5));
                }
                _ => break,
            }
        }
        if proto == 3 {
            // Not compared (ids differ); fails with NOAUTH before AUTH on
            // both servers alike, and the pass then continues in RESP2.
            let _ = conn.cmd(&["HELLO", "3"]);
        }
        Side { conn, port }
    }

    fn run(&mut self, step: &Step, proto: u8, opts: &DiffOpts) -> Reply {
        match &step.action {
            Action::Cmd(args) => {
                let b = resp::encode_command(args);
                self.exchange(&b, step.noreply, step.replies)
            }
            Action::Bytes(b) => self.exchange(b, step.noreply, step.replies),
            Action::Reconnect => {
                *self = Side::open(self.port, proto, opts);
                Reply::NotRead
            }
            Action::SleepMs(_) => Reply::NotRead,
        }
    }

    fn exchange(&mut self, bytes: &[u8], noreply: bool, replies: usize) -> Reply {
        let first = self.exchange_one(bytes, noreply);
        if replies <= 1 {
            return first;
        }
        // Several replies: compared as one array of them.
        let mut all = vec![first];
        for _ in 1..replies {
            all.push(self.conn.try_read_reply());
        }
        if all.iter().all(|r| matches!(r, Reply::Value(_))) {
            let vals = all
                .into_iter()
                .map(|r| match r {
                    Reply::Value(v) => v,
                    _ => unreachable!(),
                })
                .collect();
            return Reply::Value(Value::Array(vals));
        }
        all.into_iter()
            .find(|r| !matches!(r, Reply::Value(_)))
            .unwrap()
    }

    fn exchange_one(&mut self, bytes: &[u8], noreply: bool) -> Reply {
        let sent = self.conn.try_send(bytes);
        if noreply {
            return match sent {
                Ok(()) => Reply::NotRead,
                Err(_) => Reply::Closed,
            };
        }
        match sent {
            Ok(()) => self.conn.try_read_reply(),
            Err(_) => match self.conn.read_reply_within(Duration::from_millis(300)) {
                Reply::Timeout => Reply::Closed,
                r => r,
            },
        }
    }
}

fn run_pass(
    script: &Script,
    opts: &DiffOpts,
    proto: u8,
    petrel: &Server,
    redis: Option<&Server>,
    report: &mut Vec<String>,
) {
    let trace = std::env::var("PETREL_DIFF_TRACE").is_ok_and(|v| v == "1");
    let mut p = Side::open(petrel.port(), proto, opts);
    let mut r = redis.map(|s| Side::open(s.port(), proto, opts));
    for step in &script.steps {
        match (step.only, proto) {
            (Only::Resp2, 3) | (Only::Resp3, 2) => continue,
            _ => {}
        }
        if let Action::SleepMs(ms) = step.action {
            std::thread::sleep(Duration::from_millis(ms));
            continue;
        }
        let t0 = std::time::Instant::now();
        let pr = p.run(step, proto, opts);
        let rr = r.as_mut().map(|r| r.run(step, proto, opts));
        if trace {
            eprintln!(
                "[RESP{proto}] {} -> petrel {pr} | redis {} ({:?})",
                step.origin,
                rr.as_ref().map(|r| r.to_string()).unwrap_or_default(),
                t0.elapsed()
            );
        }
        let closed = |side: &mut Side, reply: &Reply| {
            *reply == Reply::Closed || side.conn.closed_within(Duration::from_secs(2))
        };
        if step.closes {
            let pc = closed(&mut p, &pr);
            let rc = match (r.as_mut(), &rr) {
                (Some(side), Some(reply)) => closed(side, reply),
                _ => true,
            };
            if !pc || !rc {
                report.push(format!(
                    "[RESP{proto}] {}: connection should be closed after the reply: petrel closed={pc}, redis closed={rc}",
                    step.origin
                ));
            }
            p = Side::open(petrel.port(), proto, opts);
            r = redis.map(|s| Side::open(s.port(), proto, opts));
        }
        // A closed connection is reopened for the next step, as a client would.
        if pr == Reply::Closed {
            p = Side::open(petrel.port(), proto, opts);
        }
        if let Some(rr) = &rr {
            if *rr == Reply::Closed {
                r = redis.map(|s| Side::open(s.port(), proto, opts));
            }
        }
        let problem = match &rr {
            Some(rr) => compare(&step.mode, &pr, rr).err(),
            None => match &pr {
                Reply::Invalid(_) | Reply::Timeout if !step.noreply => {
                    Some("petrel gave no valid reply".to_string())
                }
                _ => None,
            },
        };
        if let Some(why) = problem {
            let rr = rr.unwrap_or(Reply::NotRead);
            let mut msg = format!(
                "[RESP{proto}] {} ({:?}): {why}\n    petrel: {pr}\n    redis:  {rr}",
                step.origin, step.mode
            );
            if pr.to_string() == rr.to_string() {
                msg.push_str(&format!(
                    "\n    petrel wire: {}\n    redis wire:  {}",
                    wire(&pr),
                    wire(&rr)
                ));
            }
            report.push(msg);
        }
    }
}

fn wire(r: &Reply) -> String {
    match r {
        Reply::Value(v) => format!("{:?}", String::from_utf8_lossy(&v.encode())),
        other => other.to_string(),
    }
}

/// Compares two replies under `mode`: Ok or the reason they differ.
pub fn compare(mode: &Mode, p: &Reply, r: &Reply) -> Result<(), String> {
    let (pv, rv) = match (p, r) {
        (Reply::Value(a), Reply::Value(b)) => (a, b),
        _ => {
            return match mode {
                Mode::Any => Ok(()),
                Mode::Custom(f) => f(p, r),
                _ if p == r => Ok(()),
                _ => Err("different outcome".into()),
            }
        }
    };
    match mode {
        Mode::Exact => eq_or(pv == rv, "replies differ"),
        Mode::Unordered => eq_or(
            normalize(pv) == normalize(rv),
            "replies differ as multisets",
        ),
        Mode::Pairs => match (pairs(pv), pairs(rv)) {
            (Some(a), Some(b)) => eq_or(a == b, "field/value pairs differ"),
            _ => eq_or(pv == rv, "replies differ (not pair lists)"),
        },
        Mode::SameType => eq_or(same_shape(pv, rv), "reply shapes differ"),
        Mode::ErrCode => match (pv, rv) {
            (Value::Error(a), Value::Error(b)) => eq_or(
                a.split(|&c| c == b' ').next() == b.split(|&c| c == b' ').next(),
                "error codes differ",
            ),
            _ => eq_or(pv == rv, "replies differ"),
        },
        Mode::Any => Ok(()),
        Mode::Custom(f) => f(p, r),
    }
}

fn eq_or(ok: bool, why: &str) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(why.to_string())
    }
}

/// Sorts every aggregate (recursively) so order does not matter.
pub fn normalize(v: &Value) -> Value {
    let sort = |items: &[Value]| {
        let mut n: Vec<Value> = items.iter().map(normalize).collect();
        n.sort_by_key(|x| x.encode());
        n
    };
    match v {
        Value::Array(a) => Value::Array(sort(a)),
        Value::Set(a) => Value::Set(sort(a)),
        Value::Push(a) => Value::Push(sort(a)),
        Value::Map(kv) => {
            let mut n: Vec<(Value, Value)> = kv
                .iter()
                .map(|(k, v)| (normalize(k), normalize(v)))
                .collect();
            n.sort_by_key(|(k, v)| (k.encode(), v.encode()));
            Value::Map(n)
        }
        other => other.clone(),
    }
}

/// A flat RESP2 pair list or a RESP3 map as sorted encoded pairs.
fn pairs(v: &Value) -> Option<Vec<(Vec<u8>, Vec<u8>)>> {
    let mut out: Vec<(Vec<u8>, Vec<u8>)> = match v {
        Value::Array(a) if a.len() % 2 == 0 => a
            .chunks(2)
            .map(|c| (c[0].encode(), c[1].encode()))
            .collect(),
        Value::Map(kv) => kv.iter().map(|(k, v)| (k.encode(), v.encode())).collect(),
        _ => return None,
    };
    out.sort();
    Some(out)
}

/// Same types and aggregate lengths at every depth; scalar contents ignored.
pub fn same_shape(a: &Value, b: &Value) -> bool {
    use Value::*;
    match (a, b) {
        (Array(x), Array(y)) | (Set(x), Set(y)) | (Push(x), Push(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_shape(p, q))
        }
        (Map(x), Map(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((k1, v1), (k2, v2))| same_shape(k1, k2) && same_shape(v1, v2))
        }
        _ => std::mem::discriminant(a) == std::mem::discriminant(b),
    }
}

/// A custom comparison for HELP replies: redis-server's lines, in order,
/// with petrel's additions (petrel-only subcommands and options) between
/// them, and the same first line.
pub fn help_with_additions(p: &Reply, r: &Reply) -> Result<(), String> {
    let lines = |v: &Reply| -> Option<Vec<Vec<u8>>> {
        match v {
            Reply::Value(Value::Array(a)) => a
                .iter()
                .map(|l| match l {
                    Value::Simple(s) => Some(s.clone()),
                    _ => None,
                })
                .collect(),
            _ => None,
        }
    };
    let (Some(pl), Some(rl)) = (lines(p), lines(r)) else {
        return Err("not arrays of simple strings".into());
    };
    let mut it = pl.iter();
    for want in &rl {
        if !it.any(|l| l == want) {
            return Err(format!(
                "redis's line {:?} missing or out of order",
                String::from_utf8_lossy(want)
            ));
        }
    }
    if pl.first() != rl.first() {
        return Err("first lines differ".into());
    }
    Ok(())
}
