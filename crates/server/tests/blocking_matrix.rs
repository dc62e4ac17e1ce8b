//! No blocked client waits forever where Redis would have answered.
//!
//! Every blocking command (BLPOP, BRPOP, BLMPOP, BLMOVE, BRPOPLPUSH,
//! BZPOPMIN, BZPOPMAX, BZMPOP) is blocked on key `k` with timeout 0, then
//! each way the awaited key (or, for the move commands, the destination)
//! can change is applied from another connection: data pushed, the key set
//! to another type, deleted, moved in by RENAME/MOVE/COPY/SWAPDB/LMOVE/
//! SORT STORE/ZUNIONSTORE, flushed, changed inside MULTI, expired, written
//! in another database, a destination of another type, CLIENT UNBLOCK.
//! After each step the waiter's connection is polled briefly: whatever it
//! received (a reply, or nothing) is the observation. The same matrix runs
//! on petrel (two worker threads, so the waiter and the writer sit on
//! different threads) and on redis-server 7.0, and the observations must
//! be identical, RESP2 and RESP3.

mod common;
use std::time::Duration;

use common::*;

/// How long a waiter is given to receive its reply after a step.
const POLL: Duration = Duration::from_millis(150);

/// The blocking commands, as (name, args with `k` the awaited key and `d`
/// the destination, kind of value awaited).
const BLOCKERS: &[(&str, &[&str], Kind)] = &[
    ("blpop", &["BLPOP", "k", "0"], Kind::List),
    ("brpop", &["BRPOP", "k", "0"], Kind::List),
    (
        "blmpop",
        &["BLMPOP", "0", "1", "k", "LEFT", "COUNT", "2"],
        Kind::List,
    ),
    (
        "blmove",
        &["BLMOVE", "k", "d", "LEFT", "RIGHT", "0"],
        Kind::List,
    ),
    ("brpoplpush", &["BRPOPLPUSH", "k", "d", "0"], Kind::List),
    ("bzpopmin", &["BZPOPMIN", "k", "0"], Kind::Zset),
    ("bzpopmax", &["BZPOPMAX", "k", "0"], Kind::Zset),
    (
        "bzmpop",
        &["BZMPOP", "0", "1", "k", "MIN", "COUNT", "2"],
        Kind::Zset,
    ),
];

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    List,
    Zset,
}

/// A change applied by the writer connection; `$` stands for a command
/// that adds one element of the awaited kind to the key named after it.
type Change = &'static [&'static [&'static str]];

/// The ways the awaited key can change, each a list of writer commands.
/// Commands starting with `$ADD key` add an element of the awaited kind.
const CHANGES: &[(&str, Change)] = &[
    ("push", &[&["$ADD", "k"]]),
    ("other type", &[&["SET", "k", "str"]]),
    (
        "other type, then data",
        &[&["SET", "k", "str"], &["DEL", "k"], &["$ADD", "k"]],
    ),
    (
        "deleted in MULTI",
        &[&["MULTI"], &["$ADD", "k"], &["DEL", "k"], &["EXEC"]],
    ),
    (
        "type changed in MULTI",
        &[
            &["MULTI"],
            &["$ADD", "k"],
            &["DEL", "k"],
            &["SET", "k", "s"],
            &["EXEC"],
        ],
    ),
    (
        "pushed in MULTI",
        &[&["MULTI"], &["$ADD", "k"], &["$ADD", "k"], &["EXEC"]],
    ),
    ("rename", &[&["$ADD", "src"], &["RENAME", "src", "k"]]),
    ("copy", &[&["$ADD", "src"], &["COPY", "src", "k"]]),
    (
        "move from db 1",
        &[
            &["SELECT", "1"],
            &["$ADD", "k"],
            &["MOVE", "k", "0"],
            &["SELECT", "0"],
        ],
    ),
    (
        "swapdb",
        &[
            &["SELECT", "1"],
            &["$ADD", "k"],
            &["SELECT", "0"],
            &["SWAPDB", "0", "1"],
        ],
    ),
    ("flushall then push", &[&["FLUSHALL"], &["$ADD", "k"]]),
    ("flushdb then push", &[&["FLUSHDB"], &["$ADD", "k"]]),
    (
        "other database",
        &[&["SELECT", "1"], &["$ADD", "k"], &["SELECT", "0"]],
    ),
    (
        "expired before read",
        &[
            &["MULTI"],
            &["$ADD", "k"],
            // 20 ms, not 1: the waiter is served in the same pass as the
            // EXEC on both servers; with 1 ms a loaded machine let
            // redis-server's clock pass the TTL first (reference flake).
            &["PEXPIRE", "k", "20"],
            &["EXEC"],
        ],
    ),
    (
        "destination of another type",
        &[&["SET", "d", "str"], &["$ADD", "k"]],
    ),
    (
        "list moved in",
        &[
            &["RPUSH", "src", "a"],
            &["LMOVE", "src", "k", "LEFT", "LEFT"],
        ],
    ),
    (
        "sort store",
        &[&["RPUSH", "src", "3", "1"], &["SORT", "src", "STORE", "k"]],
    ),
    (
        "zunionstore",
        &[
            &["ZADD", "src", "1", "m"],
            &["ZUNIONSTORE", "k", "1", "src"],
        ],
    ),
    (
        "unblock timeout",
        &[&["CLIENT", "UNBLOCK", "$ID", "TIMEOUT"]],
    ),
    ("unblock error", &[&["CLIENT", "UNBLOCK", "$ID", "ERROR"]]),
];

fn expand(cmd: &[&str], kind: Kind, id: &str) -> Vec<String> {
    if cmd[0] == "$ADD" {
        return match kind {
            Kind::List => vec!["RPUSH".into(), cmd[1].into(), "e1".into()],
            Kind::Zset => vec!["ZADD".into(), cmd[1].into(), "1".into(), "m1".into()],
        };
    }
    cmd.iter()
        .map(|a| {
            if *a == "$ID" {
                id.to_string()
            } else {
                a.to_string()
            }
        })
        .collect()
}

/// Runs the whole matrix against the server at `port` and returns one line
/// per observation.
fn observe(port: u16, resp3: bool) -> Vec<String> {
    let mut out = Vec::new();
    for (bname, bargs, kind) in BLOCKERS {
        for (cname, change) in CHANGES {
            let mut waiter = RawConn::tcp(port);
            let mut writer = RawConn::tcp(port);
            if resp3 {
                waiter.cmd(&["HELLO", "3"]);
                writer.cmd(&["HELLO", "3"]);
            }
            writer.cmd(&["FLUSHALL"]);
            let id = match waiter.cmd(&["CLIENT", "ID"]) {
                Value::Int(i) => i.to_string(),
                v => panic!("CLIENT ID: {v}"),
            };
            waiter.send_cmd(bargs);
            // Let the server register the waiter.
            std::thread::sleep(Duration::from_millis(30));
            let tag = format!("{bname} / {cname}");
            for step in change.iter() {
                let args = expand(step, *kind, &id);
                let r = writer.cmd(&args);
                // Client ids differ between servers: show the template.
                let shown = expand(step, *kind, "$ID");
                out.push(format!("{tag}: {} -> {r}", shown.join(" ")));
                out.push(format!(
                    "{tag}:   waiter: {}",
                    waiter.read_reply_within(POLL)
                ));
            }
            // What the data looks like afterwards (the element must stay
            // in the source when a move is refused).
            for key in ["k", "d"] {
                let t = writer.cmd(&["TYPE", key]);
                let dump = match &t {
                    Value::Simple(s) if s == b"list" => writer.cmd(&["LRANGE", key, "0", "-1"]),
                    Value::Simple(s) if s == b"zset" => writer.cmd(&["ZRANGE", key, "0", "-1"]),
                    _ => t.clone(),
                };
                out.push(format!("{tag}: after: {key} = {dump}"));
            }
            // End a wait that is still going, and check the connection is
            // usable: the unblock reply (or the pending one) comes first.
            writer.cmd(&["CLIENT", "UNBLOCK", &id, "TIMEOUT"]);
            let _ = waiter.read_reply_within(POLL);
            out.push(format!("{tag}: ping -> {}", waiter.cmd(&["PING"])));
        }
    }
    out
}

fn matrix(resp3: bool) {
    let p = TestServer::start(&[("threads", "2")]);
    let Some(r) = RefRedis::start() else {
        let got = observe(p.port(), resp3);
        eprintln!(
            "redis-server not available; petrel observations:\n{}",
            got.join("\n")
        );
        return;
    };
    // Both servers at once: the observations do not depend on each other.
    let (pp, rp) = (p.port(), r.port());
    let petrel = std::thread::spawn(move || observe(pp, resp3));
    let want = observe(rp, resp3);
    let got = petrel.join().expect("petrel observations");
    let mut diffs = Vec::new();
    for (i, (g, w)) in got.iter().zip(want.iter()).enumerate() {
        if g != w {
            diffs.push(format!("#{i}\n  petrel: {g}\n  redis:  {w}"));
        }
    }
    assert_eq!(got.len(), want.len(), "observation counts differ");
    assert!(
        diffs.is_empty(),
        "{} observations differ from redis-server:\n{}",
        diffs.len(),
        diffs.join("\n")
    );
}

#[test]
fn every_blocking_command_under_every_change_resp2() {
    matrix(false);
}

#[test]
fn every_blocking_command_under_every_change_resp3() {
    matrix(true);
}

// ---------------------------------------------------------------------------
// Streams (issue 25): XREAD / XREADGROUP blocked on `k`, under every way
// `k` can change, compared with redis-server 7.0 the same way. Each
// blocker has its own setup (the stream and group it needs); `k` starts
// with the entry 1-0 unless the setup deletes it.
// ---------------------------------------------------------------------------

/// (name, setup commands, blocking command).
type StreamBlocker = (
    &'static str,
    &'static [&'static [&'static str]],
    &'static [&'static str],
);

const STREAM_BLOCKERS: &[StreamBlocker] = &[
    (
        "xread $",
        &[&["XADD", "k", "1-0", "f", "v"]],
        &["XREAD", "BLOCK", "0", "STREAMS", "k", "$"],
    ),
    (
        "xread missing key",
        &[],
        &["XREAD", "BLOCK", "0", "STREAMS", "k", "$"],
    ),
    (
        "xread high id",
        &[&["XADD", "k", "1-0", "f", "v"]],
        &["XREAD", "BLOCK", "0", "STREAMS", "k", "15-0"],
    ),
    (
        "xread two keys count",
        &[&["XADD", "k", "1-0", "f", "v"]],
        &[
            "XREAD", "COUNT", "1", "BLOCK", "0", "STREAMS", "other", "k", "$", "$",
        ],
    ),
    (
        "xreadgroup",
        &[
            &["XADD", "k", "1-0", "f", "v"],
            &["XGROUP", "CREATE", "k", "g", "$"],
        ],
        &[
            "XREADGROUP",
            "GROUP",
            "g",
            "c",
            "BLOCK",
            "0",
            "STREAMS",
            "k",
            ">",
        ],
    ),
    (
        "xreadgroup noack count",
        &[
            &["XADD", "k", "1-0", "f", "v"],
            &["XGROUP", "CREATE", "k", "g", "$"],
        ],
        &[
            "XREADGROUP",
            "GROUP",
            "g",
            "c",
            "COUNT",
            "1",
            "NOACK",
            "BLOCK",
            "0",
            "STREAMS",
            "k",
            ">",
        ],
    ),
];

/// `$ADD` adds the entry `<n>-0` (n counts up within a change). Not in
/// the list: an XADD undone by XDEL in the same transaction (Redis serves
/// its waiters an empty list, petrel's keep waiting: see
/// `families::streams::blocking`), XGROUP SETID moving a group back (Redis does not wake its
/// blocked readers, petrel serves them the entries now readable), and a
/// key expiring right after the write (the waiter is served before the
/// TTL passes on both servers, and the later TYPE races the clock).
const STREAM_CHANGES: &[(&str, Change)] = &[
    ("xadd", &[&["$ADD", "k"]]),
    (
        "xadd twice in MULTI",
        &[&["MULTI"], &["$ADD", "k"], &["$ADD", "k"], &["EXEC"]],
    ),
    (
        "xadd below the id, then above",
        &[
            &["XADD", "k", "10-0", "f", "v"],
            &["XADD", "k", "20-0", "f", "v"],
        ],
    ),
    ("xsetid", &[&["XSETID", "k", "30-0"]]),
    ("xtrim", &[&["XTRIM", "k", "MAXLEN", "0"]]),
    ("deleted", &[&["DEL", "k"]]),
    ("deleted, then xadd", &[&["DEL", "k"], &["$ADD", "k"]]),
    ("other type", &[&["SET", "k", "str"]]),
    (
        "other type in MULTI",
        &[&["MULTI"], &["DEL", "k"], &["SET", "k", "s"], &["EXEC"]],
    ),
    ("group destroyed", &[&["XGROUP", "DESTROY", "k", "g"]]),
    (
        "group destroyed and created in MULTI",
        &[
            &["MULTI"],
            &["XGROUP", "DESTROY", "k", "g"],
            &["XGROUP", "CREATE", "k", "g", "$"],
            &["$ADD", "k"],
            &["EXEC"],
        ],
    ),
    ("rename", &[&["$ADD", "src"], &["RENAME", "src", "k"]]),
    ("renamed away", &[&["RENAME", "k", "gone"]]),
    ("flushall", &[&["FLUSHALL"]]),
    ("flushall then xadd", &[&["FLUSHALL"], &["$ADD", "k"]]),
    (
        "swapdb",
        &[
            &["SELECT", "1"],
            &["$ADD", "k"],
            &["SELECT", "0"],
            &["SWAPDB", "0", "1"],
        ],
    ),
    (
        "other database",
        &[&["SELECT", "1"], &["$ADD", "k"], &["SELECT", "0"]],
    ),
    (
        "unblock timeout",
        &[&["CLIENT", "UNBLOCK", "$ID", "TIMEOUT"]],
    ),
    ("unblock error", &[&["CLIENT", "UNBLOCK", "$ID", "ERROR"]]),
];

fn stream_observe(port: u16, resp3: bool) -> Vec<String> {
    let mut out = Vec::new();
    for (bname, setup, bargs) in STREAM_BLOCKERS {
        for (cname, change) in STREAM_CHANGES {
            let mut waiter = RawConn::tcp(port);
            let mut writer = RawConn::tcp(port);
            if resp3 {
                waiter.cmd(&["HELLO", "3"]);
                writer.cmd(&["HELLO", "3"]);
            }
            writer.cmd(&["FLUSHALL"]);
            for s in setup.iter() {
                writer.cmd(s);
            }
            let id = match waiter.cmd(&["CLIENT", "ID"]) {
                Value::Int(i) => i.to_string(),
                v => panic!("CLIENT ID: {v}"),
            };
            waiter.send_cmd(bargs);
            std::thread::sleep(Duration::from_millis(30));
            let tag = format!("{bname} / {cname}");
            let mut next = 40;
            for step in change.iter() {
                let args: Vec<String> = if step[0] == "$ADD" {
                    next += 1;
                    vec![
                        "XADD".into(),
                        step[1].into(),
                        format!("{next}-0"),
                        "f".into(),
                        format!("v{next}"),
                    ]
                } else {
                    step.iter()
                        .map(|a| {
                            if *a == "$ID" {
                                id.clone()
                            } else {
                                a.to_string()
                            }
                        })
                        .collect()
                };
                let a: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
                let r = writer.cmd(&a);
                let shown: Vec<&str> = step.to_vec();
                out.push(format!("{tag}: {} -> {r}", shown.join(" ")));
                out.push(format!(
                    "{tag}:   waiter: {}",
                    waiter.read_reply_within(POLL)
                ));
            }
            let t = writer.cmd(&["TYPE", "k"]);
            out.push(format!("{tag}: after: TYPE k = {t}"));
            if matches!(&t, Value::Simple(s) if s == b"stream") {
                out.push(format!(
                    "{tag}: after: {}",
                    writer.cmd(&["XRANGE", "k", "-", "+"])
                ));
                out.push(format!(
                    "{tag}: after: {}",
                    writer.cmd(&["XPENDING", "k", "g"])
                ));
            }
            writer.cmd(&["CLIENT", "UNBLOCK", &id, "TIMEOUT"]);
            let _ = waiter.read_reply_within(POLL);
            out.push(format!("{tag}: ping -> {}", waiter.cmd(&["PING"])));
        }
    }
    out
}

fn stream_matrix(resp3: bool) {
    let p = TestServer::start(&[("threads", "2")]);
    let Some(r) = RefRedis::start() else {
        let got = stream_observe(p.port(), resp3);
        eprintln!(
            "redis-server not available; petrel observations:\n{}",
            got.join("\n")
        );
        return;
    };
    let (pp, rp) = (p.port(), r.port());
    let petrel = std::thread::spawn(move || stream_observe(pp, resp3));
    let want = stream_observe(rp, resp3);
    let got = petrel.join().expect("petrel observations");
    let diffs: Vec<String> = got
        .iter()
        .zip(want.iter())
        .enumerate()
        .filter(|(_, (g, w))| g != w)
        .map(|(i, (g, w))| format!("#{i}\n  petrel: {g}\n  redis:  {w}"))
        .collect();
    assert!(
        diffs.is_empty() && got.len() == want.len(),
        "{} observations differ from redis-server ({} vs {} lines):\n{}",
        diffs.len(),
        got.len(),
        want.len(),
        diffs.join("\n")
    );
}

#[test]
fn every_stream_read_under_every_change_resp2() {
    stream_matrix(false);
}

#[test]
fn every_stream_read_under_every_change_resp3() {
    stream_matrix(true);
}
