//! Key size tracking seen by users: `INFO keysizes` (Redis 8's histograms),
//! `MEMORY TOPKEYS`, and `redis-cli --bigkeys` / `--memkeys`.
//!
//! redis-server 7.0 has no keysizes section, so histograms are checked the
//! way Redis 8's own suite checks them: against fixed expectations for
//! simple steps, and against a histogram recomputed from the keys (KEYS,
//! TYPE, STRLEN/LLEN/SCARD/ZCARD/HLEN) after random operation mixes.

mod common;
use common::*;

use std::collections::BTreeMap;

fn start() -> Server {
    Server::start(&[("enable-debug-command", "yes")])
}

fn s(v: &Value) -> String {
    match v {
        Value::Bulk(b) | Value::Simple(b) | Value::Error(b) => String::from_utf8_lossy(b).into(),
        v => panic!("not a string: {v:?}"),
    }
}

fn int(v: Value) -> i64 {
    match v {
        Value::Int(n) => n,
        v => panic!("not an int: {v:?}"),
    }
}

fn ok(c: &mut RawConn, args: &[&str]) {
    let r = c.cmd(args);
    assert!(!matches!(r, Value::Error(_)), "{args:?}: {r:?}");
}

/// `INFO keysizes` without header and line ends, lines joined by spaces.
fn keysizes(c: &mut RawConn) -> String {
    let t = s(&c.cmd(&["INFO", "keysizes"]));
    let mut lines = t.lines();
    assert_eq!(lines.next(), Some("# Keysizes"), "{t}");
    lines.collect::<Vec<_>>().join(" ")
}

/// Expands Redis's test shorthand (`db0_STR:4=1 db0_LIST:2=1`).
fn expand(short: &str) -> String {
    short
        .split_whitespace()
        .map(|l| {
            l.replace("_STR:", "_distrib_strings_sizes:")
                .replace("_LIST:", "_distrib_lists_items:")
                .replace("_ZSET:", "_distrib_zsets_items:")
                .replace("_SET:", "_distrib_sets_items:")
                .replace("_HASH:", "_distrib_hashes_items:")
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn check(c: &mut RawConn, args: &[&str], want: &str) {
    if !args.is_empty() {
        ok(c, args);
    }
    assert_eq!(keysizes(c), expand(want), "after {args:?}");
}

fn label(v: u64) -> String {
    if v == 0 {
        return "0".into();
    }
    let p = 1u64 << (63 - v.leading_zeros());
    for (shift, unit) in [(50, "P"), (40, "T"), (30, "G"), (20, "M"), (10, "K")] {
        if p >= 1 << shift {
            return format!("{}{unit}", p >> shift);
        }
    }
    p.to_string()
}

/// The histogram lines of every database, computed from the keys themselves
/// (Redis 8's `eval_db_histogram`).
fn recomputed(c: &mut RawConn, dbs: usize) -> String {
    let mut out = Vec::new();
    for db in 0..dbs {
        ok(c, &["SELECT", &db.to_string()]);
        let Value::Array(keys) = c.cmd(&["KEYS", "*"]) else {
            panic!("KEYS")
        };
        let mut bins: BTreeMap<(usize, u64), u64> = BTreeMap::new();
        for k in keys {
            let k = s(&k);
            let (t, len_cmd) = match s(&c.cmd(&["TYPE", &k])).as_str() {
                "string" => (0, "STRLEN"),
                "list" => (1, "LLEN"),
                "set" => (2, "SCARD"),
                "zset" => (3, "ZCARD"),
                "hash" => (4, "HLEN"),
                other => panic!("type {other}"),
            };
            let n = int(c.cmd(&[len_cmd, &k])) as u64;
            let p = if n == 0 {
                0
            } else {
                1u64 << (63 - n.leading_zeros())
            };
            *bins.entry((t, p)).or_default() += 1;
        }
        for (t, name) in ["STR", "LIST", "SET", "ZSET", "HASH"].iter().enumerate() {
            let row: Vec<String> = bins
                .iter()
                .filter(|((tt, _), _)| *tt == t)
                .map(|((_, p), n)| format!("{}={n}", label(*p)))
                .collect();
            if !row.is_empty() {
                out.push(format!("db{db}_{name}:{}", row.join(",")));
            }
        }
    }
    ok(c, &["SELECT", "0"]);
    expand(&out.join(" "))
}

#[test]
fn bins_are_powers_of_two_as_in_redis8() {
    let srv = start();
    let mut c = srv.raw();
    check(&mut c, &["FLUSHALL"], "");
    let mut v = String::new();
    for i in 1..=10u32 {
        v.push('x');
        let want = format!("db0_STR:{}=1", 1u32 << (31 - i.leading_zeros()));
        check(&mut c, &["SET", "mykey", &v], &want);
    }
    // Bytes, kilo and mega labels.
    check(&mut c, &["FLUSHALL"], "");
    check(&mut c, &["SET", "x", "0123456789ABCDEF"], "db0_STR:16=1");
    for want in [
        "32", "64", "128", "256", "512", "1K", "2K", "4K", "8K", "16K", "32K", "64K", "128K",
        "256K", "512K", "1M", "2M",
    ] {
        let cur = s(&c.cmd(&["GET", "x"]));
        check(&mut c, &["APPEND", "x", &cur], &format!("db0_STR:{want}=1"));
    }
    // Empty strings, type changes.
    check(&mut c, &["FLUSHALL"], "");
    check(&mut c, &["SET", "s1", ""], "db0_STR:0=1");
    check(&mut c, &["SET", "s2", ""], "db0_STR:0=2");
    check(&mut c, &["SET", "s2", "bla"], "db0_STR:0=1,2=1");
    check(
        &mut c,
        &["HSET", "h", "f", "v"],
        "db0_STR:0=1,2=1 db0_HASH:1=1",
    );
    check(&mut c, &["SET", "h", ""], "db0_STR:0=2,2=1");
    check(&mut c, &["DEL", "h", "s2"], "db0_STR:0=1");
    check(
        &mut c,
        &["SETRANGE", "k", "200000", "v"],
        "db0_STR:0=1,128K=1",
    );
}

#[test]
fn collections_follow_their_element_counts() {
    let srv = start();
    let mut c = srv.raw();
    check(
        &mut c,
        &["RPUSH", "l1", "1", "2", "3", "4", "5"],
        "db0_LIST:4=1",
    );
    check(&mut c, &["RPUSH", "l1", "6", "7", "8", "9"], "db0_LIST:8=1");
    check(&mut c, &["LPUSH", "l2", "1"], "db0_LIST:1=1,8=1");
    check(&mut c, &["RPOP", "l1"], "db0_LIST:1=1,8=1");
    check(&mut c, &["RPOP", "l1"], "db0_LIST:1=1,4=1");
    check(
        &mut c,
        &["LMOVE", "l1", "l2", "LEFT", "LEFT"],
        "db0_LIST:2=1,4=1",
    );
    check(&mut c, &["LTRIM", "l1", "0", "0"], "db0_LIST:1=1,2=1");
    check(&mut c, &["LPOP", "l1"], "db0_LIST:2=1");
    check(
        &mut c,
        &["SADD", "s1", "1", "2", "3", "4", "5"],
        "db0_LIST:2=1 db0_SET:4=1",
    );
    check(
        &mut c,
        &["SREM", "s1", "2", "3", "4", "5"],
        "db0_LIST:2=1 db0_SET:1=1",
    );
    check(
        &mut c,
        &["SMOVE", "s1", "s2", "1"],
        "db0_LIST:2=1 db0_SET:1=1",
    );
    check(
        &mut c,
        &["ZADD", "z", "1", "a", "2", "b", "3", "c"],
        "db0_LIST:2=1 db0_SET:1=1 db0_ZSET:2=1",
    );
    check(
        &mut c,
        &["ZUNIONSTORE", "z2", "2", "z", "s2"],
        "db0_LIST:2=1 db0_SET:1=1 db0_ZSET:2=1,4=1",
    );
    check(
        &mut c,
        &["ZREMRANGEBYRANK", "z", "0", "-1"],
        "db0_LIST:2=1 db0_SET:1=1 db0_ZSET:4=1",
    );
    check(
        &mut c,
        &["HSET", "h", "a", "1", "b", "2"],
        "db0_LIST:2=1 db0_SET:1=1 db0_ZSET:4=1 db0_HASH:2=1",
    );
    check(
        &mut c,
        &["HDEL", "h", "a", "b"],
        "db0_LIST:2=1 db0_SET:1=1 db0_ZSET:4=1",
    );
    check(
        &mut c,
        &["SADD", "s3", "x", "y", "z"],
        "db0_LIST:2=1 db0_SET:1=1,2=1 db0_ZSET:4=1",
    );
    check(
        &mut c,
        &["SUNIONSTORE", "s2", "s2", "s3"],
        "db0_LIST:2=1 db0_SET:2=1,4=1 db0_ZSET:4=1",
    );
    check(
        &mut c,
        &["SET", "z2", "1234567"],
        "db0_STR:4=1 db0_LIST:2=1 db0_SET:2=1,4=1",
    );
    ok(&mut c, &["PFADD", "hll", "a", "b", "c"]);
    assert_eq!(keysizes(&mut c), recomputed(&mut c, 1));
}

#[test]
fn keyspace_moves_expiry_and_flushes() {
    let srv = start();
    let mut c = srv.raw();
    ok(&mut c, &["DEBUG", "SET-ACTIVE-EXPIRE", "0"]);
    check(&mut c, &["SET", "a", "12345"], "db0_STR:4=1");
    check(&mut c, &["RENAME", "a", "b"], "db0_STR:4=1");
    check(
        &mut c,
        &["COPY", "b", "c", "DB", "3"],
        "db0_STR:4=1 db3_STR:4=1",
    );
    check(&mut c, &["MOVE", "b", "1"], "db1_STR:4=1 db3_STR:4=1");
    check(&mut c, &["SWAPDB", "1", "3"], "db1_STR:4=1 db3_STR:4=1");
    check(&mut c, &["SWAPDB", "0", "1"], "db0_STR:4=1 db3_STR:4=1");
    check(
        &mut c,
        &["RPUSH", "l", "x", "y"],
        "db0_STR:4=1 db0_LIST:2=1 db3_STR:4=1",
    );
    check(&mut c, &["UNLINK", "l"], "db0_STR:4=1 db3_STR:4=1");
    check(&mut c, &["FLUSHDB"], "db3_STR:4=1");
    // Lazy expiry: counted until a lookup collects the key, as in Redis.
    check(&mut c, &["SADD", "s", "a", "b"], "db0_SET:2=1 db3_STR:4=1");
    check(&mut c, &["PEXPIRE", "s", "1"], "db0_SET:2=1 db3_STR:4=1");
    std::thread::sleep(Duration::from_millis(20));
    check(&mut c, &[], "db0_SET:2=1 db3_STR:4=1");
    check(&mut c, &["EXISTS", "s"], "db3_STR:4=1");
    // Active expiry.
    ok(&mut c, &["DEBUG", "SET-ACTIVE-EXPIRE", "1"]);
    ok(&mut c, &["SELECT", "3"]);
    check(&mut c, &["PEXPIRE", "b", "1"], "db3_STR:4=1");
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !keysizes(&mut c).is_empty() {
        assert!(std::time::Instant::now() < deadline, "active expiry");
        std::thread::sleep(Duration::from_millis(20));
    }
    check(&mut c, &["SET", "x", "1"], "db3_STR:1=1");
    check(&mut c, &["FLUSHALL"], "");
}

/// A deterministic random mix over several databases; the histograms must
/// equal a recount from the keys after every batch.
#[test]
fn random_operation_mix_matches_recount() {
    let srv = start();
    let mut c = srv.raw();
    let mut seed = 0x2545F4914F6CDD1Du64;
    let mut rnd = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let key = |i: u64| format!("k{i}");
    for round in 0..30 {
        for _ in 0..40 {
            let k = key(rnd(12));
            let k2 = key(rnd(12));
            let n = rnd(40) + 1;
            let items: Vec<String> = (0..n).map(|i| format!("e{}", rnd(60) + i)).collect();
            let mut args: Vec<String> = match rnd(20) {
                0 => vec!["SET".into(), k, "v".repeat(rnd(9000) as usize)],
                1 => vec!["APPEND".into(), k, "a".repeat(rnd(300) as usize)],
                2 => vec!["INCR".into(), k],
                3 => vec!["SETRANGE".into(), k, rnd(5000).to_string(), "r".into()],
                4 => [vec!["RPUSH".into(), k], items].concat(),
                5 => vec!["LPOP".into(), k, rnd(10).to_string()],
                6 => [vec!["SADD".into(), k], items].concat(),
                7 => [vec!["SREM".into(), k], items].concat(),
                8 => {
                    let mut a = vec!["ZADD".into(), k];
                    for (i, m) in items.into_iter().enumerate() {
                        a.push(i.to_string());
                        a.push(m);
                    }
                    a
                }
                9 => vec!["ZREMRANGEBYRANK".into(), k, "0".into(), rnd(5).to_string()],
                10 => {
                    let mut a = vec!["HSET".into(), k];
                    for m in items {
                        a.push(m);
                        a.push("x".repeat(rnd(200) as usize));
                    }
                    a
                }
                11 => [vec!["HDEL".into(), k], items].concat(),
                12 => vec!["DEL".into(), k],
                13 => vec!["UNLINK".into(), k],
                14 => vec!["RENAME".into(), k, k2],
                15 => vec![
                    "COPY".into(),
                    k,
                    k2,
                    "DB".into(),
                    rnd(3).to_string(),
                    "REPLACE".into(),
                ],
                16 => vec!["MOVE".into(), k, rnd(3).to_string()],
                17 => vec!["SELECT".into(), rnd(3).to_string()],
                18 => vec!["SWAPDB".into(), rnd(3).to_string(), rnd(3).to_string()],
                _ => vec!["SUNIONSTORE".into(), k, k2],
            };
            if round == 17 && args[0] == "DEL" {
                args = vec!["FLUSHDB".into()];
            }
            let _ = c.cmd(&args); // WRONGTYPE and missing keys are part of the mix
        }
        let got = keysizes(&mut c);
        assert_eq!(got, recomputed(&mut c, 3), "round {round}");
    }
}

#[test]
fn info_selection_keeps_default_light() {
    let srv = start();
    let mut c = srv.raw();
    ok(&mut c, &["SET", "k", "v"]);
    for args in [
        &["INFO"][..],
        &["INFO", "default"],
        &["INFO", "all"],
        &["INFO", "everything"],
    ] {
        assert!(!s(&c.cmd(args)).contains("Keysizes"), "{args:?}");
    }
    let alone = s(&c.cmd(&["INFO", "KEYSIZES"]));
    assert_eq!(alone, "# Keysizes\r\ndb0_distrib_strings_sizes:1=1\r\n");
    let both = s(&c.cmd(&["INFO", "keyspace", "keysizes"]));
    assert!(both.starts_with("# Keyspace\r\ndb0:keys=1,"), "{both}");
    assert!(
        both.ends_with("\r\n# Keysizes\r\ndb0_distrib_strings_sizes:1=1\r\n"),
        "{both}"
    );
}

type Row = (String, i64, String);

fn topkeys(c: &mut RawConn, args: &[&str]) -> Vec<Row> {
    let mut a = vec!["MEMORY", "TOPKEYS"];
    a.extend_from_slice(args);
    match c.cmd(&a) {
        Value::Array(rows) => rows
            .into_iter()
            .map(|r| match r {
                Value::Array(v) if v.len() == 3 => {
                    let mut v = v.into_iter();
                    let k = s(&v.next().unwrap());
                    let n = int(v.next().unwrap());
                    (k, n, s(&v.next().unwrap()))
                }
                r => panic!("row {r:?}"),
            })
            .collect(),
        r => panic!("MEMORY TOPKEYS {args:?}: {r:?}"),
    }
}

fn names(rows: &[Row]) -> Vec<&str> {
    rows.iter().map(|r| r.0.as_str()).collect()
}

fn usage(c: &mut RawConn, k: &str) -> i64 {
    int(c.cmd(&["MEMORY", "USAGE", k]))
}

#[test]
fn topkeys_order_types_and_errors() {
    let srv = start();
    let mut c = srv.raw();
    assert_eq!(topkeys(&mut c, &[]), vec![]);
    ok(&mut c, &["SET", "small", "x"]);
    ok(&mut c, &["SET", "s10k", &"a".repeat(10_000)]);
    ok(&mut c, &["SET", "s40k", &"b".repeat(40_000)]);
    ok(&mut c, &["SET", "s20k", &"c".repeat(20_000)]);
    let members: Vec<String> = (0..3000).map(|i| format!("member:{i}")).collect();
    let mut sadd = vec!["SADD", "bigset"];
    sadd.extend(members.iter().map(String::as_str));
    ok(&mut c, &sadd);
    let mut rpush = vec!["RPUSH", "biglist"];
    rpush.extend(members.iter().take(1000).map(String::as_str));
    ok(&mut c, &rpush);
    for i in 0..200 {
        ok(&mut c, &["SET", &format!("filler:{i}"), "small value"]);
    }
    let all = topkeys(&mut c, &[]);
    assert_eq!(all.len(), 5, "{all:?}");
    for (k, n, t) in &all {
        assert_eq!(*n, usage(&mut c, k), "{k}");
        assert_eq!(*t, s(&c.cmd(&["TYPE", k])));
    }
    assert!(all.windows(2).all(|w| w[0].1 >= w[1].1), "{all:?}");
    let strings = topkeys(&mut c, &["10", "TYPE", "STRING"]);
    assert_eq!(names(&strings), ["s40k", "s20k", "s10k"]);
    assert_eq!(
        names(&topkeys(&mut c, &["2", "type", "string"])),
        ["s40k", "s20k"]
    );
    assert_eq!(names(&topkeys(&mut c, &["TYPE", "set"])), ["bigset"]);
    assert_eq!(topkeys(&mut c, &["TYPE", "hash"]), vec![]);
    assert_eq!(topkeys(&mut c, &["1"]).len(), 1);
    assert_eq!(topkeys(&mut c, &["1"])[0], all[0]);
    // RESP3 gives the same shape.
    ok(&mut c, &["HELLO", "3"]);
    assert_eq!(topkeys(&mut c, &["1"])[0], all[0]);
    ok(&mut c, &["HELLO", "2"]);
    for (args, err) in [
        (&["0"][..], "ERR value is out of range, must be positive"),
        (&["-3"], "ERR value is out of range, must be positive"),
        (&["ten"], "ERR value is not an integer or out of range"),
        (&["5", "TYPE", "blob"], "ERR unknown type name 'blob'"),
        (&["5", "TYPE"], "ERR syntax error"),
        (&["5", "6"], "ERR syntax error"),
        (&["TYPE", "string", "extra"], "ERR syntax error"),
    ] {
        let mut a = vec!["MEMORY", "TOPKEYS"];
        a.extend_from_slice(args);
        assert_eq!(c.cmd(&a), Value::Error(err.into()), "{args:?}");
    }
    let Value::Array(help) = c.cmd(&["MEMORY", "HELP"]) else {
        panic!("MEMORY HELP")
    };
    assert!(help
        .iter()
        .any(|l| s(l) == "TOPKEYS [<count>] [TYPE <type>]"));
}

#[test]
fn topkeys_follow_every_keyspace_change() {
    let srv = start();
    let mut c = srv.raw();
    ok(&mut c, &["DEBUG", "SET-ACTIVE-EXPIRE", "0"]);
    let big = "x".repeat(8000);
    let top = |c: &mut RawConn| -> Vec<String> {
        topkeys(c, &["100"]).into_iter().map(|r| r.0).collect()
    };
    ok(&mut c, &["SET", "a", &big]);
    ok(&mut c, &["SET", "b", &big]);
    ok(&mut c, &["APPEND", "b", &"m".repeat(4000)]);
    assert_eq!(top(&mut c), ["b", "a"]);
    ok(&mut c, &["DEL", "b"]);
    assert_eq!(top(&mut c), ["a"]);
    ok(&mut c, &["RENAME", "a", "r"]);
    assert_eq!(top(&mut c), ["r"]);
    ok(&mut c, &["COPY", "r", "c"]);
    assert_eq!(top(&mut c), ["c", "r"]);
    ok(&mut c, &["UNLINK", "c"]);
    ok(&mut c, &["MOVE", "r", "2"]);
    assert_eq!(top(&mut c), Vec::<String>::new());
    ok(&mut c, &["SELECT", "2"]);
    assert_eq!(top(&mut c), ["r"]);
    ok(&mut c, &["SWAPDB", "2", "0"]);
    assert_eq!(top(&mut c), Vec::<String>::new());
    ok(&mut c, &["SELECT", "0"]);
    assert_eq!(top(&mut c), ["r"]);
    // Shrinking below the floor drops the key; growing brings it back.
    ok(&mut c, &["SET", "r", "tiny"]);
    assert_eq!(top(&mut c), Vec::<String>::new());
    ok(&mut c, &["SETRANGE", "r", "9000", "z"]);
    assert_eq!(top(&mut c), ["r"]);
    let items: Vec<String> = (0..2000).map(|i| format!("item-{i}")).collect();
    let mut rpush = vec!["RPUSH", "l"];
    rpush.extend(items.iter().map(String::as_str));
    ok(&mut c, &rpush);
    assert!(top(&mut c).contains(&"l".to_string()));
    ok(&mut c, &["LTRIM", "l", "0", "1"]);
    assert_eq!(top(&mut c), ["r"]);
    // Lazy and active expiry.
    ok(&mut c, &["PEXPIRE", "r", "1"]);
    std::thread::sleep(Duration::from_millis(10));
    assert_eq!(top(&mut c), Vec::<String>::new());
    assert_eq!(int(c.cmd(&["DBSIZE"])), 1); // only "l" is left
    ok(&mut c, &["SET", "e", &big, "PX", "1"]);
    ok(&mut c, &["DEBUG", "SET-ACTIVE-EXPIRE", "1"]);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(int(c.cmd(&["DBSIZE"])), 1);
    assert_eq!(top(&mut c), Vec::<String>::new());
    // Flushes.
    ok(&mut c, &["SET", "f", &big]);
    ok(&mut c, &["SELECT", "1"]);
    ok(&mut c, &["SET", "g", &big]);
    ok(&mut c, &["FLUSHDB"]);
    assert_eq!(top(&mut c), Vec::<String>::new());
    ok(&mut c, &["SELECT", "0"]);
    assert_eq!(top(&mut c), ["f"]);
    ok(&mut c, &["FLUSHALL", "ASYNC"]);
    assert_eq!(top(&mut c), Vec::<String>::new());
}

/// Runs redis-cli with `args` against a port; None if redis-cli is missing.
fn redis_cli(port: u16, args: &[&str]) -> Option<String> {
    let out = std::process::Command::new("redis-cli")
        .args(["-p", &port.to_string()])
        .args(args)
        .output()
        .ok()?;
    assert!(out.status.success(), "redis-cli {args:?}: {out:?}");
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn load_dataset(c: &mut RawConn) {
    for i in 0..150 {
        ok(c, &["SET", &format!("str:{i}"), &"v".repeat(i * 61)]);
    }
    ok(c, &["SET", "str:huge", &"h".repeat(50_000)]);
    for i in 0..16 {
        // the last of each type is clearly the largest (no ties by memory)
        let n = if i == 15 { 3000 } else { i * 40 + 1 };
        let items: Vec<String> = (0..n).map(|j| format!("element-{j}")).collect();
        let refs: Vec<&str> = items.iter().map(String::as_str).collect();
        ok(c, &[&["RPUSH", &format!("list:{i}")][..], &refs].concat());
        ok(c, &[&["SADD", &format!("set:{i}")][..], &refs].concat());
        let mut z = vec!["ZADD".to_string(), format!("zset:{i}")];
        let mut h = vec!["HSET".to_string(), format!("hash:{i}")];
        for (j, m) in items.iter().enumerate() {
            z.extend([j.to_string(), m.clone()]);
            h.extend([m.clone(), "x".repeat(j % 50)]);
        }
        ok(c, &z.iter().map(String::as_str).collect::<Vec<_>>());
        ok(c, &h.iter().map(String::as_str).collect::<Vec<_>>());
    }
}

/// The summary part of redis-cli's output, lines sorted (the scan order,
/// hence the "found so far" lines, differs between servers).
fn summary(out: &str) -> Vec<String> {
    let from = out.find("-------- summary -------").expect("summary");
    let mut v: Vec<String> = out[from..]
        .lines()
        .map(str::to_string)
        .filter(|l| !l.is_empty())
        .collect();
    v.sort();
    v
}

/// `redis-cli --bigkeys` gives the same summary against petrel and
/// redis-server; `--memkeys` runs and names, per type, the key MEMORY
/// TOPKEYS puts first.
#[test]
fn redis_cli_bigkeys_and_memkeys() {
    let srv = start();
    let mut c = srv.raw();
    load_dataset(&mut c);
    let Some(ours) = redis_cli(srv.port(), &["--bigkeys"]) else {
        eprintln!("redis-cli not found: skipped");
        return;
    };
    assert!(ours.contains("Sampled 215 keys in the keyspace!"), "{ours}");
    if let Some(r) = RefRedis::start() {
        let mut rc = r.raw();
        load_dataset(&mut rc);
        let theirs = redis_cli(r.port(), &["--bigkeys"]).unwrap();
        assert_eq!(summary(&ours), summary(&theirs));
    }
    let mem = redis_cli(srv.port(), &["--memkeys"]).unwrap();
    assert!(mem.contains("Sampled 215 keys in the keyspace!"), "{mem}");
    for t in ["string", "list", "set", "zset", "hash"] {
        let first = &topkeys(&mut c, &["1", "TYPE", t])[0];
        let line = format!("found '\"{}\"' has {} bytes", first.0, first.1);
        assert!(mem.contains(&line), "{t}: {line} not in {mem}");
    }
}
