//! `maxmemory` and eviction: OOM replies, the eviction settings, OBJECT
//! FREQ/IDLETIME under each kind of policy, the `evicted` event,
//! `evicted_keys`, WATCH invalidation, and that eviction really keeps the
//! keyspace within the limit. Deterministic behaviour is diffed against
//! redis-server; no timing assertions.

mod common;
use common::*;

#[test]
fn oom_replies_under_noeviction_and_volatile_without_ttl_keys() {
    diff_text(
        "eviction_oom",
        r##"
flushall
config set maxmemory-policy noeviction
config set maxmemory 1
set a b
get a
setnx a b
incr x
lpush l a
del a
multi
get a
set a b
ping
exec
multi
discard
config set maxmemory 0
set a b
config set maxmemory-policy volatile-lru
config set maxmemory 1
set b c
set c d ex 100
get a
config set maxmemory 0
dbsize
get a
"##,
    );
}

#[test]
fn eviction_settings() {
    diff_text(
        "eviction_config",
        r##"
config get maxmemory                            # pairs
config get maxmemory-policy                     # pairs
config get maxmemory-samples                    # pairs
config get maxmemory-eviction-tenacity          # pairs
config get lfu-log-factor                       # pairs
config get lfu-decay-time                       # pairs
config get lazyfree-lazy-eviction               # pairs
config get lazyfree-lazy-expire                 # pairs
config get lazyfree-lazy-server-del             # pairs
config set maxmemory 100mb
config get maxmemory                            # pairs
config set maxmemory 1gb maxmemory-policy allkeys-lfu
config get maxmemory                            # pairs
config get maxmemory-policy                     # pairs
config set maxmemory -1
config set maxmemory foo
config set maxmemory 1.5mb
config set maxmemory-policy foo
config set maxmemory-policy ALLKEYS-LRU
config get maxmemory-policy                     # pairs
config set maxmemory-policy volatile-ttl
config set maxmemory-samples 0
config set maxmemory-samples x
config set maxmemory-samples 10
config get maxmemory-samples                    # pairs
config set maxmemory-eviction-tenacity 101
config set maxmemory-eviction-tenacity -1
config set maxmemory-eviction-tenacity 100
config set lfu-log-factor -1
config set lfu-log-factor 0
config set lfu-decay-time -1
config set lfu-decay-time 0
config get lfu-*                                # pairs
config set lazyfree-lazy-eviction maybe
config set lazyfree-lazy-eviction yes lazyfree-lazy-expire yes lazyfree-lazy-server-del yes
config get lazyfree-lazy-e*                     # pairs
config get lazyfree-lazy-server-del             # pairs
config set maxmemory 0 maxmemory-policy noeviction
"##,
    );
}

#[test]
fn object_freq_and_idletime_follow_the_policy() {
    diff_text(
        "eviction_object",
        r##"
flushall
set k v
object freq k
object freq nokey
object idletime k
config set maxmemory-policy allkeys-lfu
del k
set k v
object freq k
get k
object freq k
object idletime k
object idletime nokey
config set maxmemory-policy volatile-lfu
object freq k
config set maxmemory-policy volatile-lru
object freq k
config set maxmemory-policy allkeys-lru
set j v
object idletime j
config set maxmemory-policy noeviction
"##,
    );
}

#[test]
fn info_reports_the_limit() {
    let lines = |srv: &dyn Fn() -> RawConn| {
        let mut c = srv();
        c.cmd(&["CONFIG", "SET", "maxmemory", "100mb"]);
        c.cmd(&["CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"]);
        let Value::Bulk(b) = c.cmd(&["INFO", "memory"]) else {
            panic!("INFO")
        };
        c.cmd(&["CONFIG", "SET", "maxmemory", "0"]);
        String::from_utf8_lossy(&b)
            .lines()
            .filter(|l| l.starts_with("maxmemory"))
            .map(String::from)
            .collect::<Vec<_>>()
    };
    let p = TestServer::start(&[]);
    let got = lines(&|| p.raw());
    assert_eq!(
        got,
        [
            "maxmemory:104857600",
            "maxmemory_human:100.00M",
            "maxmemory_policy:allkeys-lfu"
        ]
    );
    if let Some(r) = RefRedis::start() {
        assert_eq!(got, lines(&|| r.raw()));
    }
}

/// The only key is evicted, then nothing is left and the write is refused.
const EVICT_ONLY_KEY: &[&[&str]] = &[
    &["CONFIG", "SET", "maxmemory-policy", "allkeys-lru"],
    &["SET", "big", "value"],
    &["CONFIG", "SET", "maxmemory", "1"],
    &["SET", "x", "y"],
    &["CONFIG", "SET", "maxmemory", "0"],
];

#[test]
fn eviction_fires_the_evicted_event() {
    diff_events(EVICT_ONLY_KEY);
}

fn info_int(c: &mut RawConn, section: &str, field: &str) -> i64 {
    let Value::Bulk(b) = c.cmd(&["INFO", section]) else {
        panic!("INFO")
    };
    String::from_utf8_lossy(&b)
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field}"))
}

/// evicted_keys counts, CONFIG RESETSTAT clears it; a WATCHed key that is
/// evicted aborts the transaction. Same on both servers.
fn evicted_keys_and_watch(conn: &dyn Fn() -> RawConn) -> Vec<String> {
    let mut c = conn();
    let mut w = conn();
    let mut out = Vec::new();
    c.cmd(&["FLUSHALL"]);
    c.cmd(&["CONFIG", "RESETSTAT"]);
    w.cmd(&["SET", "watched", "v"]);
    w.cmd(&["WATCH", "watched"]);
    for cmd in EVICT_ONLY_KEY {
        out.push(format!("{}", c.cmd(cmd)));
    }
    out.push(format!("exists {}", c.cmd(&["EXISTS", "big", "watched"])));
    out.push(format!(
        "evicted {}",
        info_int(&mut c, "stats", "evicted_keys")
    ));
    w.cmd(&["MULTI"]);
    w.cmd(&["PING"]);
    out.push(format!("exec {}", w.cmd(&["EXEC"])));
    c.cmd(&["CONFIG", "RESETSTAT"]);
    out.push(format!(
        "reset {}",
        info_int(&mut c, "stats", "evicted_keys")
    ));
    c.cmd(&["CONFIG", "SET", "maxmemory-policy", "noeviction"]);
    out
}

#[test]
fn evicted_keys_counts_and_watch_is_invalidated() {
    let p = TestServer::start(&[]);
    let got = evicted_keys_and_watch(&|| p.raw());
    assert!(got.contains(&"evicted 2".to_string()), "{got:?}");
    assert!(got.contains(&"exists (integer) 0".to_string()), "{got:?}");
    assert!(got.contains(&"exec (nil)".to_string()), "{got:?}");
    if let Some(r) = RefRedis::start() {
        assert_eq!(got, evicted_keys_and_watch(&|| r.raw()));
    }
}

/// Writes `n` keys of `size` bytes (pipelined); returns how many were refused.
fn write_keys(c: &mut RawConn, prefix: &str, n: usize, size: usize, ttl: bool) -> usize {
    let v = "x".repeat(size);
    let mut refused = 0;
    for chunk in (0..n).collect::<Vec<_>>().chunks(100) {
        for i in chunk {
            let k = format!("{prefix}:{i}");
            if ttl {
                c.send_cmd(&["SET", &k, &v, "EX", "100000"]);
            } else {
                c.send_cmd(&["SET", &k, &v]);
            }
        }
        for _ in chunk {
            if let Value::Error(e) = c.read_reply() {
                assert!(e.starts_with(b"OOM"), "{}", String::from_utf8_lossy(&e));
                refused += 1;
            }
        }
    }
    refused
}

#[test]
fn every_policy_keeps_writes_flowing_within_the_limit() {
    let srv = TestServer::start(&[]);
    let mut c = srv.raw();
    for policy in [
        "allkeys-lru",
        "allkeys-lfu",
        "allkeys-random",
        "volatile-lru",
        "volatile-lfu",
        "volatile-random",
        "volatile-ttl",
    ] {
        c.cmd(&["CONFIG", "SET", "maxmemory", "0"]);
        c.cmd(&["FLUSHALL"]);
        c.cmd(&["CONFIG", "RESETSTAT"]);
        // Keys without a TTL that volatile policies must leave alone.
        assert_eq!(write_keys(&mut c, "keep", 500, 100, false), 0);
        std::thread::sleep(Duration::from_millis(200));
        let used = info_int(&mut c, "memory", "used_memory");
        let limit = used + 8 * 1024 * 1024;
        c.cmd(&["CONFIG", "SET", "maxmemory-policy", policy]);
        c.cmd(&["CONFIG", "SET", "maxmemory", &limit.to_string()]);
        let volatile = policy.starts_with("volatile");
        // 40 MB of 1 KB values: five times the room left.
        let refused = write_keys(&mut c, "fill", 40_000, 1000, volatile);
        assert_eq!(refused, 0, "{policy}: writes refused");
        let evicted = info_int(&mut c, "stats", "evicted_keys");
        assert!(evicted > 25_000, "{policy}: evicted {evicted}");
        let Value::Int(n) = c.cmd(&["DBSIZE"]) else {
            panic!("DBSIZE")
        };
        assert!(n < 15_000, "{policy}: {n} keys left");
        if volatile {
            let Value::Int(kept) = c.cmd(&["EXISTS", "keep:0", "keep:250", "keep:499"]) else {
                panic!("EXISTS")
            };
            assert_eq!(kept, 3, "{policy} evicted a key without TTL");
            // Only keys without TTL left to add: refused once nothing
            // volatile remains.
            let refused = write_keys(&mut c, "more", 20_000, 1000, false);
            assert!(refused > 0, "{policy}: never refused");
        }
        let used = info_int(&mut c, "memory", "used_memory");
        assert!(
            (used as f64) < limit as f64 * 1.05,
            "{policy}: used {used} limit {limit}"
        );
    }
    c.cmd(&["CONFIG", "SET", "maxmemory", "0"]);
}

#[test]
fn lfu_keeps_frequently_read_keys() {
    let srv = TestServer::start(&[]);
    let mut c = srv.raw();
    assert_eq!(write_keys(&mut c, "hot", 200, 1000, false), 0);
    std::thread::sleep(Duration::from_millis(200));
    let used = info_int(&mut c, "memory", "used_memory");
    c.cmd(&["CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"]);
    // No decay step may land in the middle of the test.
    c.cmd(&["CONFIG", "SET", "lfu-decay-time", "0"]);
    // Make the hot keys frequent. From the initial counter 5 the first read
    // always increments, each next one with probability 1/11: with 100
    // reads the chance of never passing 6 is (10/11)^99, about 1e-4.
    for _ in 0..100 {
        for i in 0..200 {
            c.send_cmd(&["GET", &format!("hot:{i}")]);
        }
        for _ in 0..200 {
            c.read_reply();
        }
    }
    c.cmd(&[
        "CONFIG",
        "SET",
        "maxmemory",
        &(used + 2 * 1024 * 1024).to_string(),
    ]);
    assert_eq!(write_keys(&mut c, "cold", 20_000, 1000, false), 0);
    let mut kept = 0;
    for i in 0..200 {
        if c.cmd(&["EXISTS", &format!("hot:{i}")]) == Value::Int(1) {
            kept += 1;
        }
    }
    assert!(kept >= 190, "only {kept} of 200 hot keys survived");
    let Value::Int(f) = c.cmd(&["OBJECT", "FREQ", "hot:0"]) else {
        panic!("FREQ")
    };
    assert!(f > 6, "freq {f}");
    c.cmd(&["CONFIG", "SET", "maxmemory", "0"]);
}
