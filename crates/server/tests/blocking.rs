//! Blocking commands (BLPOP ... BZMPOP, CLIENT UNBLOCK): argument errors and
//! timeouts as differential scripts; wake-up order and reply interleaving as
//! multi-connection scenarios replayed on petrel and redis-server and
//! compared reply by reply; a stress test with many competing consumers.

mod common;
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;

#[test]
fn diff_blocking_errors_and_timeouts() {
    diff_text(
        "blocking_errors",
        r#"
BLPOP a abc
BLPOP a -1
BLPOP a inf
BLPOP a 1e400
BLPOP a nan
BLPOP a ""
BRPOP a 0.01
BLPOP a b 0.01
BLMOVE a b up left 0.01
BLMOVE a b left right 0.01
BRPOPLPUSH a b 0.01
BLMPOP 0.01 0 a left
BLMPOP abc 1 a left
BLMPOP 0.01 abc a left
BLMPOP 0.01 99999999999 a left
BLMPOP 0.01 1 a middle
BLMPOP 0.01 1 a left count 0
BLMPOP 0.01 1 a left count -1
BLMPOP 0.01 1 a left count 1 count 2
BLMPOP 0.01 2 a b left count 2
BLMPOP x 1 a left
BZPOPMIN a 0.01
BZPOPMAX a b 0.01
BZMPOP 0.01 1 a min
BZMPOP 0.01 1 a left
BZMPOP 0.01 1 a max count 0
SET s x
BLPOP s 0.01
BLPOP a s 0.01
BLMPOP 0.01 2 a s left
BZPOPMIN s 0.01
BZMPOP 0.01 1 s min
BLMOVE s a left left 0.01
RPUSH l x y
BLMOVE l s left left 0.01
LRANGE l 0 -1
BLMOVE nosuch s left left 0.01
BLPOP l 0
BRPOP l 0
EXISTS l
RPUSH l a b c d
BLMPOP 0 1 l right count 3
BLMPOP 0 1 l left count 3
ZADD z 1 a 2 b 3 c
BZPOPMIN z 0
BZPOPMAX z 0
BZMPOP 0 1 z min count 5
EXISTS z
RPUSH src a b
BLMOVE src dst right left 0
BRPOPLPUSH src dst 0
LRANGE dst 0 -1
EXISTS src
MULTI
BLPOP empty 0
BZPOPMIN empty 0
BLMOVE empty dst left left 0
BLMPOP 0 1 empty left
EXEC
CLIENT UNBLOCK 999999
CLIENT UNBLOCK 999999 timeout
CLIENT UNBLOCK 999999 error
CLIENT UNBLOCK 999999 foo
CLIENT UNBLOCK abc
COMMAND INFO blpop brpop blmove brpoplpush blmpop bzpopmin bzpopmax bzmpop client|unblock
COMMAND GETKEYS blmpop 0 2 a b left
COMMAND GETKEYS bzmpop 0 1 a min count 2
"#,
    );
}

/// A step of a multi-connection scenario.
enum Step<'a> {
    /// Send a command on connection `c` without reading the reply.
    Post(usize, &'a [&'a str]),
    /// Send and read the reply on connection `c`.
    Cmd(usize, &'a [&'a str]),
    /// Read one pending reply on connection `c`.
    Read(usize),
    /// Pause (lets the server register a blocked client).
    Sleep(u64),
}

use Step::*;

/// Runs the steps on a server and returns every reply read, in order.
fn play(port: u16, conns: usize, steps: &[Step]) -> Vec<String> {
    let mut cs: Vec<RawConn> = (0..conns).map(|_| RawConn::tcp(port)).collect();
    let mut out = Vec::new();
    for s in steps {
        match s {
            Post(c, args) => cs[*c].send_cmd(args),
            Cmd(c, args) => out.push(format!("{c}: {}", cs[*c].cmd(args))),
            Read(c) => out.push(format!("{c}: {}", cs[*c].read_reply())),
            Sleep(ms) => std::thread::sleep(Duration::from_millis(*ms)),
        }
    }
    out
}

/// Plays the scenario on petrel (2 threads, so waiters and pushers are
/// spread over workers) and on redis-server, and compares.
fn scenario(name: &str, conns: usize, steps: &[Step]) {
    let p = TestServer::start(&[("threads", "2")]);
    let got = play(p.port(), conns, steps);
    let Some(r) = RefRedis::start() else {
        eprintln!("{name}: redis-server not available, petrel replies: {got:#?}");
        return;
    };
    let want = play(r.port(), conns, steps);
    assert_eq!(got, want, "scenario {name}: petrel (left) vs redis (right)");
}

#[test]
fn waiters_are_served_first_come_first_served() {
    scenario(
        "fifo",
        5,
        &[
            Post(0, &["BLPOP", "q", "0"]),
            Sleep(50),
            Post(1, &["BLPOP", "q", "0"]),
            Sleep(50),
            Post(2, &["BRPOP", "q", "0"]),
            Sleep(50),
            // One push of three elements serves three waiters, in order.
            Cmd(3, &["RPUSH", "q", "a", "b", "c", "d"]),
            Read(0),
            Read(1),
            Read(2),
            Cmd(3, &["LRANGE", "q", "0", "-1"]),
        ],
    );
}

#[test]
fn blocked_client_pipeline_resumes_after_wakeup() {
    scenario(
        "pipeline",
        2,
        &[
            Post(0, &["BLPOP", "k1", "k2", "0"]),
            Post(0, &["SET", "after", "1"]),
            Post(0, &["GET", "after"]),
            Sleep(80),
            Cmd(1, &["GET", "after"]),
            Cmd(1, &["LPUSH", "k2", "x"]),
            Read(0),
            Read(0),
            Read(0),
            Cmd(1, &["EXISTS", "k2"]),
        ],
    );
}

#[test]
fn push_inside_multi_serves_after_exec() {
    scenario(
        "multi",
        2,
        &[
            Post(0, &["BLPOP", "m", "0"]),
            Sleep(80),
            Cmd(1, &["MULTI"]),
            Cmd(1, &["RPUSH", "m", "a", "b"]),
            Cmd(1, &["LPOP", "m"]),
            Cmd(1, &["EXEC"]),
            Read(0),
            Cmd(1, &["LRANGE", "m", "0", "-1"]),
        ],
    );
}

#[test]
fn blmove_chains_wake_the_next_waiter() {
    scenario(
        "chain",
        3,
        &[
            Post(0, &["BLMOVE", "a", "b", "LEFT", "RIGHT", "0"]),
            Sleep(50),
            Post(1, &["BLPOP", "b", "0"]),
            Sleep(50),
            Cmd(2, &["RPUSH", "a", "x"]),
            Read(0),
            Read(1),
            Cmd(2, &["EXISTS", "a", "b"]),
        ],
    );
}

#[test]
fn sorted_set_waiters_and_mpop_forms() {
    scenario(
        "zset",
        4,
        &[
            Post(0, &["BZPOPMIN", "z1", "z2", "0"]),
            Sleep(50),
            Post(1, &["BZMPOP", "0", "1", "z2", "MAX", "COUNT", "2"]),
            Sleep(50),
            Post(2, &["BLMPOP", "0", "2", "l1", "l2", "RIGHT", "COUNT", "5"]),
            Sleep(50),
            Cmd(3, &["ZADD", "z2", "1", "a", "2", "b", "3", "c", "4", "d"]),
            Read(0),
            Read(1),
            Cmd(3, &["ZRANGE", "z2", "0", "-1", "WITHSCORES"]),
            Cmd(3, &["RPUSH", "l2", "1", "2", "3"]),
            Read(2),
            Cmd(3, &["EXISTS", "l2"]),
        ],
    );
}

#[test]
fn wrong_type_and_recreated_keys() {
    scenario(
        "types",
        2,
        &[
            Post(0, &["BLPOP", "t", "0.5"]),
            Sleep(50),
            // A string under the key does not serve the waiter.
            Cmd(1, &["SET", "t", "str"]),
            Cmd(1, &["DEL", "t"]),
            Cmd(1, &["RPUSH", "t", "v"]),
            Read(0),
            // RENAME onto a waited key serves the waiter too.
            Post(0, &["BRPOP", "dst", "0"]),
            Sleep(50),
            Cmd(1, &["RPUSH", "src", "moved"]),
            Cmd(1, &["RENAME", "src", "dst"]),
            Read(0),
        ],
    );
}

#[test]
fn client_unblock_and_info_counts() {
    let s = TestServer::start(&[("threads", "2")]);
    let mut waiter = s.raw();
    let mut ctl = s.raw();
    let id = match waiter.cmd(&["CLIENT", "ID"]) {
        Value::Int(i) => i,
        v => panic!("CLIENT ID: {v:?}"),
    };
    waiter.send_cmd(&["BLPOP", "nothing", "0"]);
    assert!(wait_until(Duration::from_secs(2), || {
        let info = format!("{}", ctl.cmd(&["INFO", "clients"]));
        info.contains("blocked_clients:1")
    }));
    let list = format!("{}", ctl.cmd(&["CLIENT", "LIST", "ID", &id.to_string()]));
    assert!(list.contains("flags=b"), "{list}");
    assert_eq!(
        ctl.cmd(&["CLIENT", "UNBLOCK", &id.to_string()]),
        Value::Int(1)
    );
    assert_eq!(waiter.read_reply(), Value::NullArray);
    assert_eq!(
        ctl.cmd(&["CLIENT", "UNBLOCK", &id.to_string()]),
        Value::Int(0)
    );
    waiter.send_cmd(&["BLMOVE", "nothing", "x", "LEFT", "LEFT", "0"]);
    assert!(wait_until(Duration::from_secs(2), || {
        ctl.cmd(&["CLIENT", "UNBLOCK", &id.to_string(), "ERROR"]) == Value::Int(1)
    }));
    assert_eq!(
        waiter.read_reply(),
        err("UNBLOCKED client unblocked via CLIENT UNBLOCK")
    );
    // The connection keeps working after being unblocked.
    assert_eq!(waiter.cmd(&["PING"]), Value::Simple(b"PONG".to_vec()));
    let info = format!("{}", ctl.cmd(&["INFO", "clients"]));
    assert!(info.contains("blocked_clients:0"), "{info}");
}

#[test]
fn disconnected_waiter_leaves_nothing_behind() {
    let s = TestServer::start(&[("threads", "2")]);
    let mut ctl = s.raw();
    {
        let mut w = s.raw();
        w.send_cmd(&["BLPOP", "gone", "0"]);
        assert!(wait_until(Duration::from_secs(2), || format!(
            "{}",
            ctl.cmd(&["INFO", "clients"])
        )
        .contains("blocked_clients:1")));
    }
    assert!(wait_until(Duration::from_secs(2), || format!(
        "{}",
        ctl.cmd(&["INFO", "clients"])
    )
    .contains("blocked_clients:0")));
    // The element pushed afterwards stays in the list: nobody is waiting.
    assert_eq!(ctl.cmd(&["RPUSH", "gone", "v"]), Value::Int(1));
    assert_eq!(ctl.cmd(&["LLEN", "gone"]), Value::Int(1));
}

#[test]
fn timeouts_fire_close_to_their_deadline() {
    let s = TestServer::start(&[]);
    let mut c = s.raw();
    let t = std::time::Instant::now();
    assert_eq!(c.cmd(&["BLPOP", "none", "0.2"]), Value::NullArray);
    let e = t.elapsed();
    assert!(e >= Duration::from_millis(195), "{e:?}");
    // Not a timing assertion on speed: only that the timeout is not ignored
    // for many seconds (the cron alone would be 100 ms late at most).
    assert!(e < Duration::from_secs(3), "{e:?}");
    assert!(!matches!(c.cmd(&["HELLO", "3"]), Value::Error(_)));
    assert_eq!(
        c.cmd(&["BLMOVE", "none", "x", "LEFT", "LEFT", "0.05"]),
        Value::Null
    );
    assert_eq!(c.cmd(&["BZPOPMIN", "none", "0.05"]), Value::Null);
}

/// Many BLPOP/BLMPOP consumers against several pushers on two threads:
/// every element is received exactly once.
#[test]
fn no_element_lost_or_duplicated_under_competition() {
    let total: usize = std::env::var("PETREL_BLOCKING_STRESS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let s = TestServer::start(&[("threads", "2")]);
    let port = s.port();
    let pushers = 4;
    let consumers = 16;
    let batch = 100;
    let seen = Arc::new(Mutex::new(Vec::<u64>::with_capacity(total)));
    let received = Arc::new(AtomicUsize::new(0));
    // Set once every push has been answered: from then on a timed-out pop
    // means both lists are empty for good, so a lost element ends the test
    // with a failed count instead of consumers waiting forever.
    let pushed = Arc::new(AtomicUsize::new(0));
    let mut hs = Vec::new();
    for c in 0..consumers {
        let seen = seen.clone();
        let received = received.clone();
        let pushed = pushed.clone();
        hs.push(std::thread::spawn(move || {
            let mut con = RawConn::tcp(port);
            let mut local = Vec::new();
            while received.load(Ordering::Relaxed) < total {
                let reply = if c % 2 == 0 {
                    con.cmd(&["BLPOP", "q1", "q2", "0.05"])
                } else {
                    con.cmd(&["BLMPOP", "0.05", "2", "q2", "q1", "LEFT", "COUNT", "7"])
                };
                let items: Vec<Vec<u8>> = match reply {
                    Value::NullArray | Value::Null if pushed.load(Ordering::Acquire) == pushers => {
                        break
                    }
                    Value::NullArray | Value::Null => continue,
                    Value::Array(v) if c % 2 == 0 => vec![bulk_bytes(&v[1])],
                    Value::Array(v) => match &v[1] {
                        Value::Array(items) => items.iter().map(bulk_bytes).collect(),
                        x => panic!("BLMPOP items: {x:?}"),
                    },
                    x => panic!("consumer {c}: {x:?}"),
                };
                received.fetch_add(items.len(), Ordering::Relaxed);
                for i in items {
                    local.push(std::str::from_utf8(&i).unwrap().parse::<u64>().unwrap());
                }
            }
            seen.lock().unwrap().extend(local);
        }));
    }
    let per = total / pushers;
    for p in 0..pushers {
        let pushed = pushed.clone();
        hs.push(std::thread::spawn(move || {
            let mut con = RawConn::tcp(port);
            let key = if p % 2 == 0 { "q1" } else { "q2" };
            let mut next = (p * per) as u64;
            let end = ((p + 1) * per) as u64;
            while next < end {
                let n = (end - next).min(batch);
                let mut args = vec![
                    if p < 2 { "RPUSH" } else { "LPUSH" }.to_string(),
                    key.to_string(),
                ];
                args.extend((next..next + n).map(|i| i.to_string()));
                match con.cmd(&args) {
                    Value::Int(_) => {}
                    x => panic!("push: {x:?}"),
                }
                next += n;
            }
            pushed.fetch_add(1, Ordering::AcqRel);
        }));
    }
    for h in hs {
        h.join().unwrap();
    }
    let mut all = std::mem::take(&mut *seen.lock().unwrap());
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), n, "duplicated elements");
    assert_eq!(n, per * pushers, "lost elements");
    let uniq: HashSet<u64> = all.into_iter().collect();
    assert!((0..(per * pushers) as u64).all(|i| uniq.contains(&i)));
    let mut c = s.raw();
    assert_eq!(c.cmd(&["EXISTS", "q1", "q2"]), Value::Int(0));
}

fn bulk_bytes(v: &Value) -> Vec<u8> {
    match v {
        Value::Bulk(b) => b.clone(),
        x => panic!("expected bulk: {x:?}"),
    }
}
