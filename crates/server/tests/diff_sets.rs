//! Differential tests: the SET family against redis-server 7.0, plus
//! petrel-only checks of what cannot be compared (random replies, listpack
//! encodings, SSCAN cursors over large sets).
//!
//! Encodings: petrel follows Redis 7.2 (`listpack` sets while small and not
//! all-integer, `set-max-listpack-entries` / `set-max-listpack-value`), which
//! redis-server 7.0 lacks (it says `hashtable` for every non-intset set and
//! rejects the listpack settings), so those OBJECT ENCODING lines and the
//! listpack CONFIG SETs are `# any`; the petrel-only test
//! `set_encoding_conversion_points` asserts petrel's encodings instead.
//! intset <-> hashtable transitions are the same in both and compared.
//! Syntax of the scripts: see tests/common/script.rs.

mod common;
use common::*;
use std::collections::HashSet;

#[test]
fn sets_basic() {
    diff_text(
        "sets_basic",
        r#"
# `# any` on OBJECT ENCODING: redis 7.0 says hashtable where petrel has listpack
SADD s 1 2 3
SADD s 3 4
SADD s 4
SCARD s
SCARD nokey
SISMEMBER s 1
SISMEMBER s 9
SISMEMBER s 01
SISMEMBER nokey 1
SMISMEMBER s 1 9 2 -0
SMISMEMBER nokey a b
SMEMBERS s                   # unordered
SMEMBERS nokey
OBJECT ENCODING s
SADD s -9223372036854775808 9223372036854775807 70000
SMEMBERS s                   # unordered
OBJECT ENCODING s
SADD s 007
OBJECT ENCODING s            # any
SISMEMBER s 007
SISMEMBER s 7
SMEMBERS s                   # unordered
SREM s 1 2 nope 007
SREM s 1
SREM nokey a
SCARD s
SMEMBERS s                   # unordered
SADD t a b c
SREM t a b c d
EXISTS t
SADD t x
SREM t x x
EXISTS t
SADD e ""
SISMEMBER e ""
SMEMBERS e
SET str v
SADD str a
SREM str a
SCARD str
SISMEMBER str a
SMISMEMBER str a
SMEMBERS str
SADD s
SREM s
SCARD
SISMEMBER s
SMISMEMBER s
SMEMBERS
SCARD s extra
SISMEMBER s a b
GET str
"#,
    );
}

#[test]
fn sets_intset_conversions() {
    diff_text(
        "sets_intset_conversions",
        r#"
# `# any` on OBJECT ENCODING / listpack CONFIG SET: redis 7.0 has no listpack sets
CONFIG SET set-max-intset-entries 4
SADD i 1 2 3 4
OBJECT ENCODING i
SADD i 4 3
OBJECT ENCODING i
SADD i 5
OBJECT ENCODING i
SREM i 1 2 3 4
OBJECT ENCODING i
SMEMBERS i
SADD j 1 2 3 4 5 6
OBJECT ENCODING j
SMEMBERS j                   # unordered
SADD k 1 2 x
OBJECT ENCODING k            # any
SADD k 3 4 5 6 7
OBJECT ENCODING k            # any
CONFIG SET set-max-intset-entries 512
SADD big a
CONFIG SET set-max-listpack-entries 3                   # any
CONFIG SET set-max-listpack-value 5                     # any
SADD lp a b
OBJECT ENCODING lp           # any
SADD lp c
OBJECT ENCODING lp           # any
SADD lp d
OBJECT ENCODING lp
SADD lv abcde
OBJECT ENCODING lv           # any
SADD lv abcdef
OBJECT ENCODING lv
SADD li 123456
SADD li x
OBJECT ENCODING li
SMEMBERS li                  # unordered
SMEMBERS lp                  # unordered
SISMEMBER lp d
SREM lp a b c d
EXISTS lp
"#,
    );
}

fn seq(prefix: &str, n: usize) -> String {
    (0..n)
        .map(|i| format!("{prefix}{i}"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn sets_large() {
    // Past every default limit: 600 integers (intset -> hashtable), 200
    // strings (listpack -> hashtable), a long member.
    let text = format!(
        r#"
SADD ints {ints}
OBJECT ENCODING ints
SADD ints {more}
OBJECT ENCODING ints
SCARD ints
SADD strs {strs}
OBJECT ENCODING strs
SCARD strs
SISMEMBER strs m199
SISMEMBER strs m200
SADD long {long}
OBJECT ENCODING long
SMEMBERS long
SREM strs {strs}
EXISTS strs
SINTERCARD 2 ints ints
SMEMBERS ints                # unordered
SSCAN ints 0 COUNT 100000    # unordered
SSCAN ints 0 COUNT 100000 MATCH 5*  # unordered
"#,
        ints = (0..500)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(" "),
        more = (500..600)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(" "),
        strs = seq("m", 200),
        long = "y".repeat(100),
    );
    diff_text("sets_large", &text);
}

#[test]
fn sets_algebra() {
    diff_text(
        "sets_algebra",
        r#"
# `# any` on OBJECT ENCODING: redis 7.0 says hashtable where petrel has listpack
SADD a 1 2 3 4 x
SADD b 3 4 5 y x
SADD c 4 x z
SADD ia 1 2 3
SADD ib 2 3 4
SINTER a b                   # unordered
SINTER a b c                 # unordered
SINTER a nokey
SINTER nokey a
SINTER a                     # unordered
SINTER ia ib                 # unordered
SUNION a b c                 # unordered
SUNION nokey
SUNION a nokey               # unordered
SDIFF a b                    # unordered
SDIFF a b c                  # unordered
SDIFF nokey a
SDIFF a nokey                # unordered
SDIFF a a
SDIFF ia ib                  # unordered
SINTERSTORE d a b
SMEMBERS d                   # unordered
OBJECT ENCODING d            # any
SINTERSTORE d ia ib
OBJECT ENCODING d
SMEMBERS d                   # unordered
SUNIONSTORE d a b c
SCARD d
SUNIONSTORE d ia ib
OBJECT ENCODING d
SDIFFSTORE d a b
SMEMBERS d                   # unordered
SDIFFSTORE d ia ib
SMEMBERS d
SINTERSTORE d a nokey
EXISTS d
SUNIONSTORE d nokey
EXISTS d
SADD d q
SDIFFSTORE d a a
EXISTS d
SET str v
EXPIRE str 100
SUNIONSTORE str a
TYPE str
TTL str
SINTERSTORE a a b
SMEMBERS a                   # unordered
SUNIONSTORE ia ia ib
SMEMBERS ia                  # unordered
SINTER a str                 # unordered
SINTER nokey str
SINTER str nokey
SUNION a str                 # unordered
SDIFF nokey str
SDIFF a str
SINTERSTORE d nokey str
SUNIONSTORE d str
SDIFFSTORE d a str
SINTERSTORE str2 a
SET str2 v
SUNIONSTORE str2 nokey
EXISTS str2
SINTER
SINTERSTORE d
SUNIONSTORE d
SDIFFSTORE d
SINTERCARD 2 a b
SINTERCARD 3 a b c
SINTERCARD 1 a
SINTERCARD 2 a b LIMIT 1
SINTERCARD 2 a b LIMIT 0
SINTERCARD 2 a b limit 100
SINTERCARD 2 a nokey
SINTERCARD 1 nokey
SINTERCARD 1 a LIMIT 1 LIMIT 3
SINTERCARD 0 a
SINTERCARD -1 a
SINTERCARD x a
SINTERCARD 2 a
SINTERCARD 99999999999999 a
SINTERCARD 1 a LIMIT -1
SINTERCARD 1 a LIMIT x
SINTERCARD 1 a LIMIT
SINTERCARD 1 a FOO 1
SINTERCARD 1 str
SINTERCARD 2 nokey str
SINTERCARD 1
COMMAND GETKEYS SINTERCARD 2 a b LIMIT 1
COMMAND GETKEYS SINTERCARD 3 a b
"#,
    );
}

#[test]
fn sets_smove() {
    diff_text(
        "sets_smove",
        r#"
# `# any` on OBJECT ENCODING: redis 7.0 says hashtable where petrel has listpack
SADD src 1 2 a
SADD dst 3
SMOVE src dst 1
SMEMBERS src                 # unordered
SMEMBERS dst                 # unordered
SMOVE src dst nope
SMOVE src dst a
OBJECT ENCODING dst          # any
SMOVE src src 2
SMOVE src src 9
SMOVE src new 2
EXISTS src
SMEMBERS new
SMOVE nokey dst 1
SET str v
SMOVE nokey str 1
SMOVE dst str 3
SMOVE str dst 3
SADD dst 2
SMOVE new dst 2
EXISTS new
SMEMBERS dst                 # unordered
SMOVE dst dst2
SMOVE dst
"#,
    );
}

#[test]
fn sets_spop_srandmember() {
    diff_text(
        "sets_spop_srandmember",
        r#"
SADD s 1 2 3 4 5
SPOP s                       # type
SCARD s
SPOP s 2                     # type
SCARD s
SPOP s 0
SCARD s
SPOP s 10                    # type
EXISTS s
SPOP nokey
SPOP nokey 3
SPOP nokey 0
SADD s a b c
SPOP s -1
SPOP s x
SPOP s 1 2
SPOP s 3                     # unordered
EXISTS s
SADD s a
SPOP s
EXISTS s
SADD r 1 2 3 a
SRANDMEMBER r                # type
SRANDMEMBER r 2              # type
SRANDMEMBER r 4              # unordered
SRANDMEMBER r 10             # unordered
SRANDMEMBER r -6             # type
SRANDMEMBER r 0
SRANDMEMBER r -1             # type
SRANDMEMBER nokey
SRANDMEMBER nokey 3
SRANDMEMBER nokey -3
SRANDMEMBER r x
SRANDMEMBER r -9223372036854775808
SRANDMEMBER r 1 2
SCARD r
SADD one z
SRANDMEMBER one
SRANDMEMBER one -3
SRANDMEMBER one 3
SET str v
SPOP str
SPOP str 2
SRANDMEMBER str
SRANDMEMBER str 2
SPOP
SRANDMEMBER
"#,
    );
}

#[test]
fn sets_sscan() {
    diff_text(
        "sets_sscan",
        r#"
SADD s 1 2 3 10 20
SSCAN s 0                    # unordered
SSCAN s 0 MATCH 1*           # unordered
SSCAN s 0 match *0 count 1   # unordered
SSCAN s 0 COUNT 1            # unordered
SSCAN s 77                   # unordered
SADD t foo bar baz
SSCAN t 0 MATCH ba?          # unordered
SSCAN t 0 MATCH *            # unordered
SSCAN t 0 MATCH nomatch
SSCAN nokey 0
SSCAN nokey 0 COUNT 0
SSCAN s x
SSCAN s -1                   # unordered
SSCAN s 18446744073709551616
SSCAN s 0 COUNT 0
SSCAN s 0 COUNT -1
SSCAN s 0 COUNT x
SSCAN s 0 MATCH
SSCAN s 0 TYPE set
SSCAN s 0 FOO bar
SET str v
SSCAN str 0
SSCAN s
"#,
    );
}

#[test]
fn sets_command_info() {
    diff_text(
        "sets_command_info",
        r#"
COMMAND INFO sadd scard sdiff sdiffstore sinter sintercard sinterstore sismember
COMMAND INFO smembers smismember smove spop srandmember srem sscan sunion sunionstore
COMMAND GETKEYS SMOVE a b m
COMMAND GETKEYS SUNIONSTORE d a b
COMMAND GETKEYSANDFLAGS SDIFFSTORE d a b
COMMAND GETKEYSANDFLAGS SINTERSTORE d a b
COMMAND GETKEYSANDFLAGS SINTERCARD 2 a b
COMMAND GETKEYSANDFLAGS SMOVE a b m
"#,
    );
}

#[test]
fn sets_transactions_and_watch() {
    diff_text(
        "sets_transactions_and_watch",
        r#"
SADD s a
WATCH s
SADD s b
MULTI
PING
EXEC
WATCH d
SUNIONSTORE d s
MULTI
PING
EXEC
MULTI
SADD m 1
SPOP m
SCARD m
EXEC
"#,
    );
}

/// A write that changes nothing (SADD of a present member, SREM of an
/// absent one) does not touch WATCHed keys in Redis.
#[test]
fn sets_noop_write_keeps_watch() {
    diff_text(
        "sets_noop_write_keeps_watch",
        r#"
SADD s a
WATCH s
SADD s a
MULTI
PING
EXEC
WATCH s
SREM s zz
MULTI
PING
EXEC
"#,
    );
}

/// Keyspace events fired by `cmds`, as "channel payload" lines, collected
/// by a second connection subscribed to every keyspace channel.
fn keyspace_events(srv: &Server, cmds: &[&[&str]]) -> Vec<String> {
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
                out.push(format!(
                    "{} {}",
                    String::from_utf8_lossy(ch),
                    String::from_utf8_lossy(p)
                ))
            }
            [Value::Bulk(k), ..] if k == b"message" => return out,
            _ => panic!("unexpected message {m:?}"),
        }
    }
}

#[test]
fn sets_notifications() {
    let cmds: &[&[&str]] = &[
        &["SADD", "s", "a", "b", "c"],
        &["SADD", "s", "a"],
        &["SREM", "s", "zz"],
        &["SREM", "s", "a"],
        &["SMOVE", "s", "t", "b"],
        &["SMOVE", "s", "t", "nope"],
        &["SADD", "t", "c"],
        &["SMOVE", "s", "t", "c"],
        &["SPOP", "t"],
        &["SPOP", "t", "0"],
        &["SPOP", "t", "1"],
        &["SADD", "u", "1", "2", "3"],
        &["SPOP", "u", "1"],
        &["SPOP", "u", "5"],
        &["SADD", "a", "1", "2"],
        &["SADD", "b", "2", "3"],
        &["SINTERSTORE", "d", "a", "b"],
        &["SUNIONSTORE", "d", "a", "b"],
        &["SDIFFSTORE", "d", "a", "b"],
        &["SDIFFSTORE", "d", "a", "a"],
        &["SDIFFSTORE", "d", "a", "a"],
        &["SINTERSTORE", "d", "a", "nokey"],
        &["SREM", "a", "1", "2"],
        &["SINTER", "b", "b"],
        &["SCARD", "b"],
    ];
    let petrel = TestServer::start(&[]);
    let got = keyspace_events(&petrel, cmds);
    let Some(redis) = RefRedis::start() else {
        return;
    };
    assert_eq!(got, keyspace_events(&redis, cmds));
}

// ------------------------------------------------------------ petrel only

fn q(con: &mut redis::Connection, args: &[&str]) -> redis::Value {
    rcmd(args).query(con).unwrap()
}

fn enc(con: &mut redis::Connection, key: &str) -> String {
    rcmd(&["OBJECT", "ENCODING", key]).query(con).unwrap()
}

#[test]
fn set_encoding_conversion_points() {
    let s = TestServer::start(&[]);
    let mut c = s.client();
    // intset while integers and <= set-max-intset-entries (512).
    for i in 0..512 {
        q(&mut c, &["SADD", "i", &i.to_string()]);
    }
    assert_eq!(enc(&mut c, "i"), "intset");
    q(&mut c, &["SADD", "i", "512"]);
    assert_eq!(enc(&mut c, "i"), "hashtable");
    // intset + non-integer that fits: listpack.
    q(&mut c, &["SADD", "l", "1", "2", "-3"]);
    assert_eq!(enc(&mut c, "l"), "intset");
    q(&mut c, &["SADD", "l", "x"]);
    assert_eq!(enc(&mut c, "l"), "listpack");
    // non-canonical integers are strings.
    for (k, m) in [("n1", "01"), ("n2", "+1"), ("n3", "-0"), ("n4", " 1")] {
        q(&mut c, &["SADD", k, m]);
        assert_eq!(enc(&mut c, k), "listpack", "{m:?}");
    }
    // listpack up to 128 entries, hashtable at 129.
    for i in 0..128 {
        q(&mut c, &["SADD", "p", &format!("m{i}")]);
    }
    assert_eq!(enc(&mut c, "p"), "listpack");
    q(&mut c, &["SADD", "p", "m128"]);
    assert_eq!(enc(&mut c, "p"), "hashtable");
    // listpack while members are <= 64 bytes.
    q(&mut c, &["SADD", "v", &"a".repeat(64)]);
    assert_eq!(enc(&mut c, "v"), "listpack");
    q(&mut c, &["SADD", "v", &"a".repeat(65)]);
    assert_eq!(enc(&mut c, "v"), "hashtable");
    // intset of 128 integers + a string: too many for a listpack.
    for i in 0..128 {
        q(&mut c, &["SADD", "w", &i.to_string()]);
    }
    q(&mut c, &["SADD", "w", "x"]);
    assert_eq!(enc(&mut c, "w"), "hashtable");
    // intset + a too long string: hashtable.
    q(&mut c, &["SADD", "z", "1", &"b".repeat(65)]);
    assert_eq!(enc(&mut c, "z"), "hashtable");
    // Removing never converts back.
    q(&mut c, &["SREM", "p", "m128"]);
    assert_eq!(enc(&mut c, "p"), "hashtable");
    // CONFIG SET thresholds apply to later writes.
    q(&mut c, &["CONFIG", "SET", "set-max-listpack-entries", "2"]);
    q(&mut c, &["CONFIG", "SET", "set-max-listpack-value", "3"]);
    q(&mut c, &["SADD", "c", "a", "b"]);
    assert_eq!(enc(&mut c, "c"), "listpack");
    q(&mut c, &["SADD", "c", "c"]);
    assert_eq!(enc(&mut c, "c"), "hashtable");
    q(&mut c, &["SADD", "c2", "abcd"]);
    assert_eq!(enc(&mut c, "c2"), "hashtable");
    // An intset whose integers are longer than set-max-listpack-value.
    q(&mut c, &["SADD", "c3", "12345"]);
    q(&mut c, &["SADD", "c3", "a"]);
    assert_eq!(enc(&mut c, "c3"), "hashtable");
    // STORE results are built under the same rules.
    q(
        &mut c,
        &["CONFIG", "SET", "set-max-listpack-entries", "128"],
    );
    q(&mut c, &["CONFIG", "SET", "set-max-listpack-value", "64"]);
    q(&mut c, &["SUNIONSTORE", "d", "l"]);
    assert_eq!(enc(&mut c, "d"), "listpack");
    q(&mut c, &["SINTERSTORE", "d", "i", "i"]);
    assert_eq!(enc(&mut c, "d"), "hashtable");
    q(&mut c, &["SDIFFSTORE", "d", "l", "l"]);
    let n: i64 = rcmd(&["EXISTS", "d"]).query(&mut c).unwrap();
    assert_eq!(n, 0);
}

fn members(con: &mut redis::Connection, key: &str) -> HashSet<String> {
    rcmd(&["SMEMBERS", key]).query(con).unwrap()
}

#[test]
fn spop_srandmember_rules() {
    let s = TestServer::start(&[]);
    let mut c = s.client();
    // One of each encoding.
    let fill: Vec<(&str, Vec<String>)> = vec![
        ("ints", (0..100).map(|i| i.to_string()).collect()),
        ("lp", (0..100).map(|i| format!("m{i}")).collect()),
        ("ht", (0..1000).map(|i| format!("h{i}")).collect()),
    ];
    for (k, ms) in &fill {
        let mut args = vec!["SADD", k];
        args.extend(ms.iter().map(|s| s.as_str()));
        q(&mut c, &args);
        let all: HashSet<String> = ms.iter().cloned().collect();
        for count in [1usize, 5, 30, 40, 99, 100, 150] {
            let r: Vec<String> = rcmd(&["SRANDMEMBER", k, &count.to_string()])
                .query(&mut c)
                .unwrap();
            let d: HashSet<String> = r.iter().cloned().collect();
            assert_eq!(r.len(), count.min(ms.len()), "{k} {count}");
            assert_eq!(d.len(), r.len(), "distinct {k} {count}");
            assert!(d.is_subset(&all));
            let r: Vec<String> = rcmd(&["SRANDMEMBER", k, &format!("-{count}")])
                .query(&mut c)
                .unwrap();
            assert_eq!(r.len(), count);
            assert!(r.iter().all(|m| all.contains(m)));
        }
        // Uniform enough: 2000 single draws hit most members.
        let r: Vec<String> = rcmd(&["SRANDMEMBER", k, "-2000"]).query(&mut c).unwrap();
        let d: HashSet<String> = r.into_iter().collect();
        assert!(d.len() * 10 >= ms.len().min(1000) * 8, "{k}: {}", d.len());
        // SPOP: distinct, removed, counts.
        let mut left = all.clone();
        for count in [1usize, 3, 10, 30] {
            let r: Vec<String> = rcmd(&["SPOP", k, &count.to_string()])
                .query(&mut c)
                .unwrap();
            assert_eq!(r.len(), count);
            for m in r {
                assert!(left.remove(&m), "{k}: popped {m} twice or not a member");
            }
            assert_eq!(members(&mut c, k), left);
        }
        let m: String = rcmd(&["SPOP", k]).query(&mut c).unwrap();
        assert!(left.remove(&m));
        let r: Vec<String> = rcmd(&["SPOP", k, "100000"]).query(&mut c).unwrap();
        assert_eq!(r.into_iter().collect::<HashSet<_>>(), left);
        let n: i64 = rcmd(&["EXISTS", k]).query(&mut c).unwrap();
        assert_eq!(n, 0);
    }
}

#[test]
fn sscan_full_iteration_large_set() {
    let s = TestServer::start(&[]);
    let mut c = s.client();
    let all: HashSet<String> = (0..5000).map(|i| format!("e{i}")).collect();
    let mut args = vec!["SADD", "big"];
    args.extend(all.iter().map(|s| s.as_str()));
    q(&mut c, &args);
    let mut seen = Vec::new();
    let mut cursor = "0".to_string();
    let mut calls = 0;
    loop {
        let (next, batch): (String, Vec<String>) = rcmd(&["SSCAN", "big", &cursor, "COUNT", "50"])
            .query(&mut c)
            .unwrap();
        calls += 1;
        seen.extend(batch);
        cursor = next;
        if cursor == "0" {
            break;
        }
    }
    assert!(
        calls > 10,
        "COUNT must bound the work per call ({calls} calls)"
    );
    let d: HashSet<String> = seen.iter().cloned().collect();
    assert_eq!(d.len(), seen.len(), "no duplicates without resizes");
    assert_eq!(d, all);
    // MATCH filters.
    let (_, batch): (String, Vec<String>) =
        rcmd(&["SSCAN", "big", "0", "COUNT", "100000", "MATCH", "e12?"])
            .query(&mut c)
            .unwrap();
    let got: HashSet<String> = batch.into_iter().collect();
    let want: HashSet<String> = (120..130).map(|i| format!("e{i}")).collect();
    assert_eq!(got, want);
}

#[test]
fn multi_key_commands_are_atomic() {
    // SMOVE between two sets from many clients: the total never changes.
    let s = TestServer::start(&[("threads", "4")]);
    let mut c = s.client();
    let ms: Vec<String> = (0..50).map(|i| format!("x{i}")).collect();
    let mut args = vec!["SADD", "{a}1"];
    args.extend(ms.iter().map(|s| s.as_str()));
    q(&mut c, &args);
    let port = s.port();
    let handles: Vec<_> = (0..4)
        .map(|t| {
            std::thread::spawn(move || {
                let cl = redis::Client::open(format!("redis://127.0.0.1:{port}")).unwrap();
                let mut c = cl.get_connection().unwrap();
                for i in 0..300 {
                    let m = format!("x{}", (i * 7 + t) % 50);
                    let (a, b) = if i % 2 == 0 {
                        ("{a}1", "zz2")
                    } else {
                        ("zz2", "{a}1")
                    };
                    let _: i64 = rcmd(&["SMOVE", a, b, &m]).query(&mut c).unwrap();
                    let n: i64 = rcmd(&["SUNIONSTORE", "tmp", "{a}1", "zz2"])
                        .query(&mut c)
                        .unwrap();
                    assert_eq!(n, 50);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let a: i64 = rcmd(&["SCARD", "{a}1"]).query(&mut c).unwrap();
    let b: i64 = rcmd(&["SCARD", "zz2"]).query(&mut c).unwrap();
    assert_eq!(a + b, 50);
}
