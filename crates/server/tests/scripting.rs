//! Scripts end to end: busy scripts (`-BUSY`, SCRIPT KILL, FUNCTION KILL,
//! `-UNKILLABLE`, SHUTDOWN NOSAVE) compared with redis-server 7.0, atomicity
//! of scripts across partitions with two worker threads, WATCH touched by
//! scripts, and real application scripts run unchanged on both servers.

mod common;
use common::*;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

const SPIN: &str = "while true do end";

fn is_busy(v: &Value) -> bool {
    matches!(v, Value::Error(e) if e.starts_with(b"BUSY "))
}

/// Waits until `c` gets `-BUSY` for PING (the script passed the threshold).
fn wait_busy(s: &Server) {
    assert!(
        wait_until(Duration::from_secs(20), || is_busy(&s.raw().cmd(&["PING"]))),
        "no -BUSY while a script spins"
    );
}

/// The busy-script scenario; returns what each step answered.
fn busy_transcript(s: &Server) -> Vec<String> {
    let mut t = Vec::new();
    let show = |v: Value| format!("{v:?}");
    let mut admin = s.raw();
    admin.cmd(&["CONFIG", "SET", "busy-reply-threshold", "200"]);

    // 1. A read-only spinning EVAL: -BUSY for others, SCRIPT KILL ends it.
    let mut runner = s.raw();
    runner.send_cmd(&["EVAL", SPIN, "0"]);
    // Sent before the threshold: gets its reply after the kill, or -BUSY
    // (as Redis answers it), never hangs.
    let mut early = s.raw();
    early.send_cmd(&["SET", "early", "1"]);
    wait_busy(s);
    // Several connections so some land on the script's own worker.
    for _ in 0..4 {
        t.push(show(s.raw().cmd(&["GET", "k"])));
    }
    t.push(show(admin.cmd(&["FUNCTION", "KILL"])));
    t.push(show(admin.cmd(&["FUNCTION", "STATS"])));
    t.push(show(admin.cmd(&["SHUTDOWN"])));
    t.push(show(admin.cmd(&["SCRIPT", "KILL"])));
    let killed = runner.read_reply();
    t.push(show(killed));
    let early_reply = early.read_reply();
    assert!(
        early_reply == Value::simple("OK") || is_busy(&early_reply),
        "{early_reply:?}"
    );
    t.push(show(admin.cmd(&["SCRIPT", "KILL"])));
    t.push(show(s.raw().cmd(&["PING"])));

    // 2. A script that wrote cannot be killed; it is left to finish.
    runner.send_cmd(&[
        "EVAL",
        "redis.call('set','w','1') local t = redis.call('time') local s = tonumber(t[1]) while tonumber(redis.call('time')[1]) < s + 2 do end return 'done'",
        "0",
    ]);
    wait_busy(s);
    t.push(show(admin.cmd(&["SCRIPT", "KILL"])));
    t.push(show(runner.read_reply()));
    t.push(show(admin.cmd(&["GET", "w"])));

    // 3. A spinning function: FUNCTION KILL ends it, SCRIPT KILL may not.
    admin.cmd(&[
        "FUNCTION",
        "LOAD",
        "#!lua name=spin\nredis.register_function{function_name='spin', callback=function() while true do end end, flags={'no-writes'}}",
    ]);
    runner.send_cmd(&["FCALL_RO", "spin", "0"]);
    wait_busy(s);
    t.push(show(s.raw().cmd(&["GET", "k"])));
    t.push(show(admin.cmd(&["SCRIPT", "KILL"])));
    let stats = admin.cmd(&["FUNCTION", "STATS"]);
    t.push(format!(
        "stats is array: {}",
        matches!(stats, Value::Array(_))
    ));
    t.push(show(admin.cmd(&["FUNCTION", "KILL"])));
    t.push(show(runner.read_reply()));
    t.push(show(admin.cmd(&["FUNCTION", "KILL"])));
    t.push(show(s.raw().cmd(&["PING"])));
    t
}

#[test]
fn busy_scripts_match_redis() {
    let petrel = TestServer::start(&[("threads", "2")]);
    let got = busy_transcript(&petrel);
    let Some(redis) = RefRedis::start() else {
        return;
    };
    let want = busy_transcript(&redis);
    assert_eq!(got, want);
}

#[test]
fn shutdown_nosave_stops_a_busy_script() {
    for threads in ["1", "2"] {
        let mut s = TestServer::start(&[("threads", threads), ("busy-reply-threshold", "100")]);
        let mut runner = s.raw();
        runner.send_cmd(&["EVAL", SPIN, "0"]);
        wait_busy(&s);
        let mut c = s.raw();
        c.send_cmd(&["SHUTDOWN", "NOSAVE"]);
        assert!(
            s.wait_exit(Duration::from_secs(20)).is_some(),
            "threads {threads}"
        );
    }
}

#[test]
fn single_worker_serves_script_kill_through_the_pump() {
    let s = TestServer::start(&[("threads", "1"), ("busy-reply-threshold", "100")]);
    let mut runner = s.raw();
    runner.send_cmd(&["EVAL", SPIN, "0"]);
    wait_busy(&s);
    let mut other = s.raw();
    assert!(is_busy(&other.cmd(&["SET", "a", "1"])));
    assert_eq!(other.cmd(&["SCRIPT", "KILL"]), Value::simple("OK"));
    assert!(matches!(runner.read_reply(), Value::Error(e) if e.starts_with(b"ERR Script killed")));
    // Pipelined input sent while the script ran is served afterwards.
    runner.send_cmd(&["EVAL", SPIN, "0"]);
    wait_busy(&s);
    runner.send_cmd(&["PING"]);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(other.cmd(&["SCRIPT", "KILL"]), Value::simple("OK"));
    assert!(matches!(runner.read_reply(), Value::Error(_)));
    assert_eq!(runner.read_reply(), Value::simple("PONG"));
    assert_eq!(other.cmd(&["GET", "a"]), Value::NullBulk);
}

/// Scripts move value between keys of different partitions (declared and
/// undeclared keys), alone and inside MULTI; readers never see the total
/// change.
#[test]
fn scripts_are_atomic_across_partitions() {
    let s = TestServer::start(&[("threads", "2")]);
    const ACCOUNTS: usize = 8;
    const TOTAL: i64 = 8 * 1000;
    let names: Vec<String> = (0..ACCOUNTS).map(|i| format!("acct:{i}")).collect();
    let mut c = s.raw();
    for n in &names {
        c.cmd(&["SET", n, "1000"]);
    }
    let mover = "local amt = tonumber(ARGV[1]) \
        local from = KEYS[1] or ARGV[2] local to = KEYS[2] or ARGV[3] \
        redis.call('set', from, tonumber(redis.call('get', from)) - amt) \
        for i = 1, 20 do redis.call('incr', 'noise') end \
        redis.call('set', to, tonumber(redis.call('get', to)) + amt) return 1";
    let Value::Bulk(sha) = c.cmd(&["SCRIPT", "LOAD", mover]) else {
        panic!("load")
    };
    let sha = String::from_utf8(sha).unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let mut readers = Vec::new();
    for _ in 0..2 {
        let done = done.clone();
        let port = s.port();
        let names = names.clone();
        readers.push(std::thread::spawn(move || {
            let mut r = RawConn::tcp(port);
            let mut mget = vec!["MGET".to_string()];
            mget.extend(names.iter().cloned());
            let mut reads = 0u64;
            while !done.load(Ordering::Relaxed) || reads < 10 {
                let Value::Array(vals) = r.cmd(&mget) else {
                    panic!("mget")
                };
                let sum: i64 = vals
                    .iter()
                    .map(|v| match v {
                        Value::Bulk(b) => std::str::from_utf8(b).unwrap().parse::<i64>().unwrap(),
                        other => panic!("{other:?}"),
                    })
                    .sum();
                assert_eq!(sum, TOTAL, "a reader saw a script half applied");
                reads += 1;
            }
            reads
        }));
    }
    let mut movers = Vec::new();
    for m in 0..3 {
        let port = s.port();
        let names = names.clone();
        let sha = sha.clone();
        movers.push(std::thread::spawn(move || {
            let mut w = RawConn::tcp(port);
            for i in 0..400usize {
                let from = &names[(i * 3 + m) % ACCOUNTS];
                let to = &names[(i * 5 + m + 1) % ACCOUNTS];
                let amt = ((i % 7) + 1).to_string();
                let r = match i % 3 {
                    0 => w.cmd(&["EVALSHA", &sha, "2", from, to, &amt]),
                    // Undeclared keys (allowed outside cluster mode).
                    1 => w.cmd(&["EVALSHA", &sha, "0", &amt, from, to]),
                    _ => {
                        w.cmd(&["MULTI"]);
                        w.cmd(&["EVALSHA", &sha, "2", from, to, &amt]);
                        w.cmd(&["INCR", "noise"]);
                        w.cmd(&["EXEC"])
                    }
                };
                assert!(!matches!(r, Value::Error(_)), "{r:?}");
            }
        }));
    }
    for m in movers {
        m.join().unwrap();
    }
    done.store(true, Ordering::Relaxed);
    for r in readers {
        assert!(r.join().unwrap() >= 10);
    }
    let per_mover: usize = (0..400usize)
        .map(|i| if i % 3 == 2 { 21 } else { 20 })
        .sum();
    assert_eq!(
        c.cmd(&["GET", "noise"]),
        Value::bulk((3 * per_mover).to_string())
    );
}

#[test]
fn watch_is_touched_by_script_writes_only() {
    let s = TestServer::start(&[("threads", "2")]);
    let mut a = s.raw();
    let mut b = s.raw();
    a.cmd(&["SET", "k", "0"]);
    // A script that only reads leaves the WATCH alone.
    a.cmd(&["WATCH", "k"]);
    b.cmd(&["EVAL", "return redis.call('get', KEYS[1])", "1", "k"]);
    a.cmd(&["MULTI"]);
    a.cmd(&["SET", "k", "1"]);
    assert_eq!(a.cmd(&["EXEC"]), Value::Array(vec![Value::simple("OK")]));
    // A script that writes the key (undeclared, in another db after
    // SELECT, then this db) aborts the watcher's EXEC.
    a.cmd(&["WATCH", "k"]);
    b.cmd(&[
        "EVAL",
        "redis.call('select', 1) redis.call('set', 'k', 'x') redis.call('select', 0) return redis.call('incr', ARGV[1])",
        "0",
        "k",
    ]);
    a.cmd(&["MULTI"]);
    a.cmd(&["SET", "k", "1"]);
    assert_eq!(a.cmd(&["EXEC"]), Value::NullArray);
    assert_eq!(a.cmd(&["GET", "k"]), Value::bulk("2"));
}

#[test]
fn blocked_clients_are_served_after_the_script() {
    let s = TestServer::start(&[("threads", "2")]);
    let mut waiter = s.raw();
    waiter.send_cmd(&["BLPOP", "jobs", "0"]);
    std::thread::sleep(Duration::from_millis(100));
    let mut c = s.raw();
    let r = c.cmd(&[
        "EVAL",
        "redis.call('rpush', KEYS[1], 'a', 'b') return redis.call('llen', KEYS[1])",
        "1",
        "jobs",
    ]);
    // The waiter is served after the script, not in the middle of it.
    assert_eq!(r, Value::Int(2));
    assert_eq!(
        waiter.read_reply(),
        Value::Array(vec![Value::bulk("jobs"), Value::bulk("a")])
    );
}

#[test]
fn commandstats_count_scripts_and_their_calls() {
    let s = TestServer::start(&[]);
    let mut c = s.raw();
    c.cmd(&["CONFIG", "RESETSTAT"]);
    c.cmd(&[
        "EVAL",
        "redis.call('set','a','1') redis.call('get','a') return redis.call('get','a')",
        "0",
    ]);
    c.cmd(&["EVAL", "return redis.call('nosuch')", "0"]);
    let Value::Bulk(info) = c.cmd(&["INFO", "commandstats"]) else {
        panic!("info")
    };
    let info = String::from_utf8(info).unwrap();
    assert!(info.contains("cmdstat_eval:calls=2,"), "{info}");
    assert!(info.contains("cmdstat_set:calls=1,"), "{info}");
    assert!(info.contains("cmdstat_get:calls=2,"), "{info}");
    assert!(info.contains("failed_calls=1"), "{info}");
    c.cmd(&["SCRIPT", "FLUSH"]);
    c.cmd(&["SCRIPT", "LOAD", "return 1"]);
    c.cmd(&["SCRIPT", "LOAD", "return 2"]);
    c.cmd(&[
        "FUNCTION",
        "LOAD",
        "#!lua name=l\nredis.register_function('a', function() return 1 end)\nredis.register_function('b', function() return 1 end)",
    ]);
    let Value::Bulk(mem) = c.cmd(&["INFO", "memory"]) else {
        panic!("info")
    };
    let mem = String::from_utf8(mem).unwrap();
    for line in [
        "number_of_cached_scripts:2\r\n",
        "number_of_functions:2\r\n",
        "number_of_libraries:1\r\n",
    ] {
        assert!(mem.contains(line), "{line} in {mem}");
    }
    let field = |name: &str| -> u64 {
        let start = mem.find(&format!("{name}:")).unwrap() + name.len() + 1;
        mem[start..].split("\r\n").next().unwrap().parse().unwrap()
    };
    assert!(field("used_memory_lua") > 0);
    assert!(field("used_memory_scripts_eval") >= 2 * (8 + 40));
    assert_eq!(
        field("used_memory_vm_total"),
        field("used_memory_vm_eval") + field("used_memory_vm_functions")
    );
}

fn run_app_scripts(s: &Server) -> Vec<Value> {
    let mut c = s.raw();
    let mut out = Vec::new();
    // A sliding-window rate limiter: 3 requests per 100 ms window.
    let limiter = r#"
local key = KEYS[1]
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
if count < limit then
  redis.call('ZADD', key, now, ARGV[4])
  redis.call('PEXPIRE', key, window)
  return {1, limit - count - 1}
end
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
return {0, tonumber(oldest[2]) + window - now}
"#;
    for (i, now) in [1000, 1010, 1020, 1030, 1090, 1105, 1111, 1200, 1201]
        .iter()
        .enumerate()
    {
        let now = now.to_string();
        let id = format!("req-{i}");
        out.push(c.cmd(&["EVAL", limiter, "1", "rl:user1", &now, "100", "3", &id]));
    }
    out.push(c.cmd(&["ZRANGE", "rl:user1", "0", "-1", "WITHSCORES"]));
    // A Redlock-style release: delete only if the token still matches.
    let release = r#"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
else
  return 0
end
"#;
    out.push(c.cmd(&["SET", "lock:res", "tok-1", "NX", "PX", "30000"]));
    out.push(c.cmd(&["EVAL", release, "1", "lock:res", "tok-2"]));
    out.push(c.cmd(&["EXISTS", "lock:res"]));
    out.push(c.cmd(&["EVAL", release, "1", "lock:res", "tok-1"]));
    out.push(c.cmd(&["EVAL", release, "1", "lock:res", "tok-1"]));
    // A job queue's move-to-processing step, in the spirit of BullMQ's:
    // take the oldest waiting job, mark it active with a lock token, and
    // schedule its lock expiry in a sorted set.
    let take = r#"
local jobId = redis.call('LMOVE', KEYS[1], KEYS[2], 'RIGHT', 'LEFT')
if not jobId then
  return false
end
local jobKey = KEYS[3] .. jobId
redis.call('HSET', jobKey, 'processedOn', ARGV[1], 'lock', ARGV[2])
redis.call('HINCRBY', jobKey, 'attemptsStarted', 1)
redis.call('ZADD', KEYS[4], tonumber(ARGV[1]) + tonumber(ARGV[3]), jobId)
return {jobId, redis.call('HGET', jobKey, 'attemptsStarted'), redis.call('ZSCORE', KEYS[4], jobId)}
"#;
    out.push(c.cmd(&["LPUSH", "q:wait", "1", "2", "3"]));
    out.push(c.cmd(&[
        "HSET",
        "q:job:1",
        "name",
        "email",
        "data",
        "{\"to\":\"a@b\"}",
    ]));
    for t in 0..4 {
        let now = (5000 + t * 10).to_string();
        let token = format!("token-{t}");
        out.push(c.cmd(&[
            "EVAL", take, "4", "q:wait", "q:active", "q:job:", "q:locks", &now, &token, "30000",
        ]));
    }
    out.push(c.cmd(&["LRANGE", "q:active", "0", "-1"]));
    out.push(c.cmd(&["HGETALL", "q:job:1"]));
    out.push(c.cmd(&["ZRANGE", "q:locks", "0", "-1", "WITHSCORES"]));
    out
}

#[test]
fn application_scripts_match_redis() {
    let petrel = TestServer::start(&[]);
    let got = run_app_scripts(&petrel);
    let Some(redis) = RefRedis::start() else {
        return;
    };
    let want = run_app_scripts(&redis);
    assert_eq!(got, want);
}
