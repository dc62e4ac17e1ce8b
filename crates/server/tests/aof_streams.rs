//! Consumer groups in the write journal, against redis-server 7.0: the
//! forms XREADGROUP, XCLAIM and XAUTOCLAIM are journaled in (XCLAIM ...
//! FORCE JUSTID LASTID, XGROUP SETID ... ENTRIESREAD, XGROUP
//! CREATECONSUMER) must be Redis's, command for command; and an AOF
//! written by Petrel must load into Petrel and redis-server with the same
//! groups, consumers and pending entries (delivery times and counts) as
//! the server that wrote it.

#[path = "common/aof.rs"]
mod aof_util;
mod common;

use aof_util::*;
use common::*;

/// Runs `lines` on a connection, one command per line; `sleep N` sleeps N ms.
fn run(srv: &Server, lines: &str) {
    let mut c = srv.raw();
    for line in lines.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(ms) = line.strip_prefix("sleep ") {
            std::thread::sleep(Duration::from_millis(ms.parse().unwrap()));
            continue;
        }
        let args = common::script::split_args(line).unwrap();
        c.cmd(&args);
    }
}

fn is_ms(a: &[u8]) -> bool {
    a.len() == 13 && a.iter().all(u8::is_ascii_digit)
}

/// Lower case, absolute unix times (13 digits) replaced by a marker.
fn norm(c: &[Vec<u8>]) -> String {
    c.iter()
        .map(|a| {
            if is_ms(a) {
                "<ms>".to_string()
            } else {
                String::from_utf8_lossy(&a.to_ascii_lowercase()).into_owned()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Asserts the two journals hold the same commands, with times within
/// 10 s of each other.
fn assert_same_journal(name: &str, want: &[Vec<Vec<u8>>], got: &[Vec<Vec<u8>>]) {
    let w: Vec<String> = want.iter().map(|c| norm(c)).collect();
    let g: Vec<String> = got.iter().map(|c| norm(c)).collect();
    assert_eq!(
        g,
        w,
        "{name}: journals differ\nredis:\n  {}\npetrel:\n  {}",
        w.join("\n  "),
        g.join("\n  ")
    );
    for (a, b) in want.iter().zip(got) {
        let ta = a.iter().filter(|x| is_ms(x));
        let tb = b.iter().filter(|x| is_ms(x));
        for (x, y) in ta.zip(tb) {
            let x: i64 = std::str::from_utf8(x).unwrap().parse().unwrap();
            let y: i64 = std::str::from_utf8(y).unwrap().parse().unwrap();
            assert!((x - y).abs() < 10_000, "{name}: times {x} / {y}");
        }
    }
}

const ARGS: &[(&str, &str)] = &[
    ("appendonly", "yes"),
    ("appendfsync", "always"),
    ("enable-debug-command", "yes"),
];

/// Every consumer-group write, with the cases Redis 7.0 journals
/// specially: several entries in one read (MULTI/EXEC), NOACK with a new
/// consumer, a history read (nothing), FORCE on an entry not pending
/// (count 2), JUSTID (count kept), IDLE (time in the past), LASTID alone
/// (SETID), claims of deleted entries (dropped from the PEL, journaled
/// with the former owner), XAUTOCLAIM interleaving claimed and deleted
/// entries, reads inside MULTI, claims that claim nothing.
const GROUP_SCRIPT: &str = r#"
xadd s 1-1 a 1
xadd s 2-1 b 2
xadd s 3-1 c 3
xgroup create s g 0
xreadgroup group g alice count 2 streams s >
xreadgroup group g bob noack count 1 streams s >
xadd s 4-1 d 4
xreadgroup group g alice streams s 0
xclaim s g carol 0 1-1 2-1
xclaim s g dave 0 1-1 justid
xclaim s g dave 0 2-1 idle 5000 retrycount 7
xdel s 2-1
xautoclaim s g erin 0 0-0 count 10
xautoclaim s g frank 0 0-0 justid
xadd s 5-1 e 5
xreadgroup group g gina count 1 streams s >
xreadgroup group g gina count 5 streams s >
xack s g 1-1
xgroup createconsumer s g zed
xgroup delconsumer s g gina
xgroup setid s g 0 entriesread 0
xclaim s g hal 0 3-1 lastid 9-9
xadd t 1-1 x 1
xadd t 2-1 x 2
xgroup create t g $
xgroup create t g2 0
xreadgroup group g newc count 1 streams t >
xreadgroup group g hist streams t 0
xreadgroup group g2 m streams s t > >
xclaim t g nc2 999999999 1-1
xautoclaim t g nc3 999999999 0
xgroup setid t g 1-1
xclaim t g forcer 0 1-1 force
xadd t 3-1 x 3
xreadgroup group g forcer noack streams t >
multi
xadd t 4-1 d 4
xreadgroup group g2 m streams t >
exec
xadd t 5-1 e 5
xreadgroup group g2 m streams t >
xdel t 5-1
xclaim t g2 m 0 5-1
xadd t 6-1 e 6
xreadgroup group g2 m streams t >
xdel t 6-1
xreadgroup group g2 m streams t 0
xreadgroup group g2 hn noack streams t 0
xadd u 1-1 a 1
xadd u 2-1 a 2
xadd u 3-1 a 3
xgroup create u g 0
xreadgroup group g p count 3 streams u >
xdel u 2-1
xclaim u g q 0 1-1 2-1 3-1 2-1
xgroup create u g3 0 entriesread 7
xreadgroup group g3 r noack streams u >
"#;

#[test]
fn group_commands_journal_as_redis() {
    let Some(redis) = RefRedis::start_with(Opts::new(ARGS)) else {
        return;
    };
    let petrel = Server::start(ARGS);
    run(&redis, GROUP_SCRIPT);
    run(&petrel, GROUP_SCRIPT);
    redis.raw().cmd(&["PING"]);
    petrel.raw().cmd(&["PING"]);
    let want = incr_commands(&aof_dir(redis.dir()));
    let got = incr_commands(&aof_dir(petrel.dir()));
    assert_same_journal("groups", &want, &got);
}

/// Blocked XREADGROUP clients served by a later XADD: the delivery is
/// journaled as Redis does it (XCLAIM forms; NOACK as CREATECONSUMER +
/// SETID), after the XADD, each served client a unit of its own (so are
/// two BLPOP clients served by one RPUSH); a client served two entries
/// by a transaction gets one MULTI/EXEC.
#[test]
fn served_blocked_xreadgroup_journals_as_redis() {
    let Some(redis) = RefRedis::start_with(Opts::new(ARGS)) else {
        return;
    };
    let petrel = Server::start(ARGS);
    let mut all = Vec::new();
    for srv in [&redis, &petrel] {
        run(
            srv,
            "xadd s 1-1 a 1\nxgroup create s g $\nxgroup create s g2 $",
        );
        let waits: &[&[&str]] = &[
            &[
                "xreadgroup",
                "group",
                "g",
                "bl",
                "count",
                "5",
                "block",
                "0",
                "streams",
                "s",
                ">",
            ],
            &[
                "xreadgroup",
                "group",
                "g2",
                "bl2",
                "noack",
                "block",
                "0",
                "streams",
                "s",
                ">",
            ],
            &["blpop", "l", "0"],
            &["blpop", "l", "0"],
        ];
        // One waiter at a time, each blocked before the next is sent: the
        // serving order is the blocking order, which with several worker
        // threads is only defined this way.
        let mut conns = Vec::new();
        let mut admin = srv.raw();
        for (i, w) in waits.iter().enumerate() {
            let mut c = srv.raw();
            c.send_cmd(w);
            conns.push(c);
            let want = format!("blocked_clients:{}", i + 1);
            assert!(wait_until(Duration::from_secs(5), || {
                let v = admin.cmd(&["INFO", "clients"]);
                v.as_bytes()
                    .is_some_and(|t| String::from_utf8_lossy(t).contains(&want))
            }));
        }
        run(srv, "xadd s 2-1 b 2\nrpush l 1 2 3");
        for mut c in conns {
            c.read_reply();
        }
        let mut c = srv.raw();
        c.send_cmd(&[
            "xreadgroup",
            "group",
            "g",
            "bl3",
            "block",
            "0",
            "streams",
            "s",
            ">",
        ]);
        assert!(wait_until(Duration::from_secs(5), || {
            let v = admin.cmd(&["INFO", "clients"]);
            v.as_bytes()
                .is_some_and(|t| String::from_utf8_lossy(t).contains("blocked_clients:1"))
        }));
        run(srv, "multi\nxadd s 3-1 c 3\nxadd s 4-1 d 4\nexec");
        c.read_reply();
        srv.raw().cmd(&["PING"]);
        all.push(incr_commands(&aof_dir(srv.dir())));
    }
    assert_same_journal("blocked", &all[0], &all[1]);
}

/// XINFO STREAM FULL of every stream key, with what a reload cannot keep
/// blanked: consumers' seen-time always; with `strict` false also the
/// groups' entries-read and lag (Redis 7.0 does not journal entries-read
/// for XREADGROUP without NOACK).
fn groups_state(srv: &Server, keys: &[&str], strict: bool) -> Vec<Value> {
    fn blank(v: &mut Value, strict: bool) {
        if let Value::Array(items) = v {
            let mut i = 0;
            while i + 1 < items.len() {
                let name = items[i].as_bytes().map(|b| b.to_vec());
                let hide = match name.as_deref() {
                    Some(b"seen-time") => true,
                    Some(b"entries-read") | Some(b"lag") => !strict,
                    _ => false,
                };
                if hide {
                    items[i + 1] = Value::Null;
                }
                i += 1;
            }
            for it in items.iter_mut() {
                blank(it, strict);
            }
        }
    }
    let mut c = srv.raw();
    keys.iter()
        .map(|k| {
            let mut v = c.cmd(&["XINFO", "STREAM", k, "FULL"]);
            blank(&mut v, strict);
            v
        })
        .collect()
}

/// The journal replays: a consumer-group workload on Petrel, then its AOF
/// directory loaded into a fresh Petrel and into redis-server. Both hold
/// the same dataset (digest) and the same groups, consumers and pending
/// entries, delivery times and counts included; and so does the server
/// that wrote it (except entries-read, which Redis 7.0 does not carry).
#[test]
fn group_state_survives_the_aof() {
    let script = r#"
xadd s 1-1 a 1
xadd s 2-1 b 2
xadd s 3-1 c 3
xadd s 4-1 d 4
xgroup create s g 0
xgroup create s g2 0
xreadgroup group g alice count 2 streams s >
xreadgroup group g bob count 1 streams s >
xreadgroup group g2 nick noack count 2 streams s >
xclaim s g carol 0 1-1 idle 2000
xclaim s g carol 0 2-1 justid
xclaim s g dave 0 4-1 force retrycount 5
xdel s 3-1
xautoclaim s g erin 0 0-0 count 2
xack s g 4-1
xgroup createconsumer s g zed
xclaim s g carol 0 1-1 lastid 8-0
xadd s 9-1 e 5
xreadgroup group g2 nick count 1 streams s >
xadd u 1-1 a 1
xgroup create u g 0
multi
xadd u 2-1 b 2
xreadgroup group g p streams u >
xclaim u g q 0 1-1
exec
"#;
    let petrel = Server::start(ARGS);
    run(&petrel, script);
    petrel.raw().cmd(&["PING"]);
    let keys = ["s", "u"];
    let want_digest = petrel.raw().cmd(&["DEBUG", "DIGEST"]);
    let original = groups_state(&petrel, &keys, false);
    let mut loaded = Vec::new();
    for kind in [Kind::Petrel, Kind::Redis] {
        let Some((_copy, srv)) = start_on_aof_copy(kind, &aof_dir(petrel.dir()), "aofgroups")
        else {
            continue;
        };
        assert_eq!(srv.raw().cmd(&["DEBUG", "DIGEST"]), want_digest, "{kind:?}");
        assert_eq!(groups_state(&srv, &keys, false), original, "{kind:?}");
        loaded.push(groups_state(&srv, &keys, true));
        for k in keys {
            for g in ["g", "g2"] {
                let a = petrel.raw().cmd(&["XPENDING", k, g]);
                let b = srv.raw().cmd(&["XPENDING", k, g]);
                assert_eq!(a, b, "{kind:?} XPENDING {k} {g}");
            }
        }
    }
    if loaded.len() == 2 {
        assert_eq!(
            loaded[0], loaded[1],
            "Petrel and redis-server loaded the AOF differently"
        );
    }
}
