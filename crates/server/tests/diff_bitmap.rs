//! Differential tests: bitmap commands (SETBIT, GETBIT, BITCOUNT, BITPOS,
//! BITOP, BITFIELD, BITFIELD_RO) against redis-server.
//! Syntax of the scripts: see tests/common/script.rs.

mod common;
use common::*;
use resp::Value;

#[test]
fn setbit_getbit() {
    diff_text(
        "setbit_getbit",
        r###"
SETBIT k 7 1
GET k
SETBIT k 7 1
SETBIT k 7 0
GET k
SETBIT k 0 1
SETBIT k 100 1
GET k
STRLEN k
GETBIT k 0
GETBIT k 1
GETBIT k 100
GETBIT k 101
GETBIT k 99999999
GETBIT nokey 0
GETBIT nokey 4294967295
OBJECT ENCODING k
SET n 12
SETBIT n 0 1
GET n
OBJECT ENCODING n
SET n 255
GETBIT n 2
GETBIT n 3
SETBIT k -1 1
SETBIT k 4294967296 1
SETBIT k 4294967295 2
SETBIT k 1 2
SETBIT k 1 -1
SETBIT k 1 01
SETBIT k 1 " 1"
SETBIT k abc 1
SETBIT k 1.5 1
SETBIT k 01 1
GETBIT k -1
GETBIT k abc
GETBIT k 4294967296
GETBIT nokey x
SETBIT k 1
GETBIT k
SETBIT k 1 1 1
SET t abc EX 100
SETBIT t 3 1
TTL t
"###,
    );
}

#[test]
fn bitcount() {
    diff_text(
        "bitcount",
        r###"
SET k foobar
BITCOUNT k
BITCOUNT k 0 0
BITCOUNT k 1 1
BITCOUNT k 1 -1
BITCOUNT k -2 -1
BITCOUNT k -1 -2
BITCOUNT k -100 100
BITCOUNT k 5 2
BITCOUNT k 0 -1 BYTE
BITCOUNT k 0 -1 byte
BITCOUNT k 5 30 BIT
BITCOUNT k 5 30 bit
BITCOUNT k 0 0 BIT
BITCOUNT k 7 7 BIT
BITCOUNT k 1 1 BIT
BITCOUNT k -1 -1 BIT
BITCOUNT k -10 -3 BIT
BITCOUNT k 9 14 BIT
BITCOUNT k 3 60 BIT
BITCOUNT k 0 1000 BIT
BITCOUNT k -1000 -1 BIT
BITCOUNT k 40 20 BIT
BITCOUNT k 0 -1 FOO
BITCOUNT k -1 -2 FOO
BITCOUNT k 1
BITCOUNT k 1 2 3
BITCOUNT k 1 2 BIT 4
BITCOUNT k a b
BITCOUNT k 0 b
BITCOUNT k a 1 FOO
BITCOUNT k 9223372036854775807 -9223372036854775808
BITCOUNT k -9223372036854775808 9223372036854775807 BIT
BITCOUNT nokey
BITCOUNT nokey 1
BITCOUNT nokey a b
SET e ""
BITCOUNT e
BITCOUNT e 0 -1
BITCOUNT e 0 0 BIT
SET n 1234567
BITCOUNT n
BITCOUNT n 1 2
BITCOUNT
"###,
    );
}

#[test]
fn bitpos() {
    diff_text(
        "bitpos",
        r###"
SET k "\xff\xf0\x00"
BITPOS k 0
BITPOS k 1
BITPOS k 0 0
BITPOS k 0 1
BITPOS k 1 2
BITPOS k 1 2 -1
BITPOS k 0 0 0
BITPOS k 0 0 -1
BITPOS k 1 0 -1 BIT
BITPOS k 0 0 -1 BIT
BITPOS k 0 3 11 BIT
BITPOS k 0 3 12 BIT
BITPOS k 0 12 12 BIT
BITPOS k 1 12 23 BIT
BITPOS k 1 -12 -1 BIT
BITPOS k 0 -100 -1 bit
BITPOS k 1 2 1
BITPOS k 1 5 3 BIT
SET ones "\xff\xff"
BITPOS ones 0
BITPOS ones 0 0
BITPOS ones 0 1
BITPOS ones 0 0 -1
BITPOS ones 0 0 1
BITPOS ones 0 0 15 BIT
BITPOS ones 0 3 5 BIT
BITPOS ones 1 0 -1 BYTE
BITPOS ones 0 -1
BITPOS ones 0 5
SET zeros "\x00\x00\x00"
BITPOS zeros 1
BITPOS zeros 0
BITPOS zeros 1 1
BITPOS zeros 1 0 -1 BIT
BITPOS zeros 0 17 20 BIT
SET e ""
BITPOS e 0
BITPOS e 1
BITPOS e 0 0
BITPOS e 0 0 -1 BIT
BITPOS nokey 0
BITPOS nokey 1
BITPOS nokey 1 x
BITPOS nokey 2
BITPOS k 2
BITPOS k -1
BITPOS k x
BITPOS k 1 x
BITPOS k 1 0 x
BITPOS k 1 0 abc FOO
BITPOS k 1 abc 1 FOO
BITPOS k 1 0 1 FOO
BITPOS k 1 0 1 BIT 3
BITPOS k 1 9223372036854775807 -9223372036854775808
BITPOS k
SET big "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\xff"
BITPOS big 1
BITPOS big 0 19
BITPOS big 1 3 -2
BITPOS big 1 3 -1
SETBIT wide 1000 1
BITPOS wide 1
BITPOS wide 1 1 -1
BITPOS wide 1 1001 1001 BIT
"###,
    );
}

#[test]
fn bitop() {
    diff_text(
        "bitop",
        r###"
SET a "\xff\x0f\xaa"
SET b "\x0f"
SET c "\x01\x02\x03\x04\x05"
BITOP AND dest a b
GET dest
BITOP OR dest a b c
GET dest
BITOP XOR dest a b c
GET dest
BITOP NOT dest a
GET dest
BITOP and dest a c
GET dest
BITOP And dest a nokey
GET dest
BITOP OR dest nokey a
GET dest
BITOP NOT dest nokey
EXISTS dest
SET dest x
BITOP OR dest nokey nokey2
EXISTS dest
BITOP OR dest nokey
EXISTS dest
BITOP NOT dest a b
BITOP FOO dest a
BITOP AND dest
BITOP NOT dest
SET e ""
BITOP OR dest e e
EXISTS dest
SET n 123
BITOP NOT dest n
GET dest
BITOP OR dest n
OBJECT ENCODING dest
SET t v EX 100
BITOP OR t a
TTL t
GET t
BITOP OR a a b
GET a
"###,
    );
}

#[test]
fn bitfield() {
    diff_text(
        "bitfield",
        r###"
BITFIELD k SET i8 0 100 GET i8 0 INCRBY i8 0 100 GET u8 0
GET k
BITFIELD k SET u8 0 255 INCRBY u8 0 1 OVERFLOW SAT INCRBY u8 0 10 OVERFLOW FAIL INCRBY u8 0 1 GET u8 0
BITFIELD k OVERFLOW WRAP INCRBY i8 0 200 OVERFLOW SAT INCRBY i8 0 -1000 OVERFLOW FAIL INCRBY i8 0 -1
BITFIELD k SET i5 3 -3 GET i5 3 GET u5 3 GET u3 0 GET i64 0 GET u63 0
GET k
BITFIELD k SET u8 #1 7 SET u8 #2 8 GET u8 #1 GET u16 #1 GET i4 #3
GET k
STRLEN k
BITFIELD k SET u8 0 -5
BITFIELD k OVERFLOW SAT SET u8 0 -5
BITFIELD k OVERFLOW SAT SET u8 0 300
BITFIELD k OVERFLOW SAT SET i8 0 -300
BITFIELD k OVERFLOW FAIL SET u8 0 -5
BITFIELD k OVERFLOW FAIL SET i8 0 128 GET i8 0
BITFIELD k OVERFLOW WRAP SET i8 0 128 GET i8 0
BITFIELD k SET i64 0 -1 GET i64 0 GET u63 0 GET u63 1 INCRBY i64 0 1
BITFIELD k SET i64 0 9223372036854775807 INCRBY i64 0 1 OVERFLOW SAT INCRBY i64 0 -1 INCRBY i64 0 -9223372036854775808 INCRBY i64 0 -9223372036854775808
BITFIELD k OVERFLOW SAT SET u63 0 9223372036854775807 INCRBY u63 0 1 INCRBY u63 0 -9223372036854775808
BITFIELD k OVERFLOW WRAP SET u63 0 0 INCRBY u63 0 -1 INCRBY u1 0 1 INCRBY i1 0 1 INCRBY i1 0 -1
BITFIELD k OVERFLOW SAT SET i8 0 -9223372036854775808 GET i8 0 SET i8 0 -9223372036854775681 GET i8 0 SET i8 0 -9223372036854775680 GET i8 0
BITFIELD k OVERFLOW SAT SET i32 0 -9223372036854775808 GET i32 0 SET i63 0 -9223372036854775808 GET i63 0 SET i16 3 -9223372036854775000 GET i16 3
BITFIELD k OVERFLOW WRAP SET i8 0 -9223372036854775808 GET i8 0 OVERFLOW FAIL SET i8 0 -9223372036854775808 GET i8 0
BITFIELD k GET u8 1000 GET i16 99999
BITFIELD k
BITFIELD nokey
EXISTS nokey
BITFIELD nokey GET u8 0 GET i64 100
EXISTS nokey
BITFIELD fk OVERFLOW FAIL INCRBY u8 16 1000
GET fk
BITFIELD k get u8 0 set u8 0 1 incrby u8 0 1 overflow sat overflow wrap incrby u8 0 255
BITFIELD k GET I8 0
BITFIELD k GET i0 0
BITFIELD k GET i65 0
BITFIELD k GET u64 0
BITFIELD k GET u 0
BITFIELD k GET x8 0
BITFIELD k GET i08 0
BITFIELD k GET "i8\x00zz" 0
BITFIELD k GET i8 -1
BITFIELD k GET i8 "#-1"
BITFIELD k GET i8 "#a"
BITFIELD k GET i8 "##1"
BITFIELD k GET i8 4294967296
BITFIELD k GET i8 "#536870912"
BITFIELD k GET i8 4294967288
BITFIELD k SET i8 0 x
BITFIELD k INCRBY i8 0 1.5
BITFIELD k SET i8 0
BITFIELD k GET i8
BITFIELD k FOO
BITFIELD k OVERFLOW
BITFIELD k OVERFLOW FOO GET i8 0
BITFIELD k GET i8 0 SET
BITFIELD k SET u8 0 1 GET x 0
SET n 255
BITFIELD n GET u8 0 GET u16 0
BITFIELD n INCRBY u8 0 1
GET n
OBJECT ENCODING n
SET t abc EX 100
BITFIELD t SET u8 100 1
TTL t
STRLEN t
"###,
    );
}

#[test]
fn bitfield_ro() {
    diff_text(
        "bitfield_ro",
        r###"
SET k "\x01\x02\x03"
BITFIELD_RO k GET u8 0 GET u16 8 GET i4 20 get u8 #2
BITFIELD_RO k
BITFIELD_RO nokey GET u8 0
EXISTS nokey
BITFIELD_RO k SET u8 0 1
BITFIELD_RO k GET u8 0 INCRBY u8 0 1
BITFIELD_RO k OVERFLOW SAT GET u8 0
BITFIELD_RO k OVERFLOW SAT
BITFIELD_RO k GET u64 0
BITFIELD_RO k GET u8 0 SET x 0 1
BITFIELD_RO k GET u8
GET k
BITFIELD_RO
"###,
    );
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

/// Runs `cmds` on petrel and redis-server and compares the events.
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

#[test]
fn bitmap_notifications() {
    diff_events(&[
        &["SETBIT", "k", "3", "1"],
        &["SETBIT", "k", "3", "1"],
        &["SETBIT", "k", "3", "0"],
        &["SETBIT", "k", "100", "0"],
        &["SETBIT", "k", "1", "0"],
        &["BITFIELD", "k", "SET", "u8", "0", "0"],
        &["BITFIELD", "k", "SET", "u8", "0", "7"],
        &["BITFIELD", "k", "INCRBY", "u8", "0", "0"],
        &[
            "BITFIELD", "k", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "1000",
        ],
        &["BITFIELD", "k", "SET", "u8", "800", "0"],
        &["BITFIELD", "new", "SET", "u8", "0", "0"],
        &[
            "BITFIELD", "new2", "OVERFLOW", "FAIL", "SET", "u8", "0", "-1",
        ],
        &["BITFIELD", "k", "GET", "u8", "0"],
        &["BITFIELD_RO", "k", "GET", "u8", "0"],
        &["BITOP", "OR", "d", "k"],
        &["BITOP", "AND", "d", "nokey"],
        &["BITOP", "AND", "d2", "nokey"],
        &["SET", "t", "x", "EX", "100"],
        &["BITOP", "NOT", "t", "k"],
        &["GETBIT", "k", "3"],
        &["BITCOUNT", "k"],
        &["BITPOS", "k", "1"],
    ]);
}

#[test]
fn bitmap_commands_info() {
    diff_text(
        "bitmap_commands_info",
        r###"
COMMAND INFO setbit getbit bitcount bitpos bitop bitfield bitfield_ro
COMMAND DOCS setbit getbit bitcount bitpos bitop bitfield bitfield_ro        # pairs
COMMAND GETKEYS BITOP AND dest a b c
COMMAND GETKEYS BITFIELD k GET u8 0
"###,
    );
}

#[test]
fn bitmap_wrongtype() {
    diff_text(
        "bitmap_wrongtype",
        r###"
RPUSH l a
SET k foo
SETBIT l 0 1
SETBIT l 0 5
SETBIT l x 1
GETBIT l 0
GETBIT l x
BITCOUNT l a b
BITPOS l 1
BITPOS l 7
BITOP AND dest k l
BITOP AND l k
TYPE l
BITFIELD l GET u8 0
BITFIELD l SET u8 0 1
BITFIELD l GET x 0
BITFIELD_RO l GET u8 0
"###,
    );
}

#[test]
fn offsets_follow_proto_max_bulk_len() {
    diff_text(
        "offsets_follow_proto_max_bulk_len",
        r###"
CONFIG SET proto-max-bulk-len 1mb
SETBIT k 8388608 1
SETBIT k 8388607 1
STRLEN k
GETBIT k 8388608
GETBIT k 8388607
BITFIELD k GET u8 8388608
BITFIELD k GET u8 "#1048576"
BITFIELD k SET u8 8388607 1
STRLEN k
BITCOUNT k
BITPOS k 1
BITPOS k 1 -2
BITCOUNT k -9 -1 BIT
"###,
    );
}

/// The `keyspace_hits` / `keyspace_misses` lines of an INFO reply.
pub fn hit_stats(r: &Reply) -> Vec<String> {
    let Reply::Value(Value::Bulk(b) | Value::Simple(b) | Value::Verbatim { data: b, .. }) = r
    else {
        return vec![format!("{r:?}")];
    };
    String::from_utf8_lossy(b)
        .lines()
        .filter(|l| l.starts_with("keyspace_hits:") || l.starts_with("keyspace_misses:"))
        .map(String::from)
        .collect()
}

/// Read lookups (GETBIT, BITCOUNT, BITPOS, BITOP sources, BITFIELD GETs)
/// count hits and misses; write lookups (SETBIT, BITFIELD writes, BITOP's
/// destination) do not, as in Redis.
#[test]
fn bitmap_hit_stats() {
    let s = Script::new("bitmap_hit_stats")
        .text(
            r###"
SETBIT k 1 1
SETBIT nokey0 1 0
GETBIT k 1
GETBIT nokey 1
BITCOUNT k
BITCOUNT nokey
BITPOS k 1
BITPOS nokey 1
BITOP OR dest k nokey
BITFIELD k GET u8 0
BITFIELD nokey GET u8 0
BITFIELD k SET u8 0 1
BITFIELD_RO k GET u8 0
"###,
        )
        .check(&["INFO", "stats"], |p, r| {
            let (a, b) = (hit_stats(p), hit_stats(r));
            if a == b {
                Ok(())
            } else {
                Err(format!("petrel {a:?} redis {b:?}"))
            }
        });
    diff(&s);
}

/// Random SETBIT/BITFIELD/BITOP writes mixed with BITCOUNT/BITPOS/GETBIT
/// reads and GETs, over a few keys (fixed seed, reproducible).
#[test]
fn random_bitmap_ops() {
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut rnd = |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    let keys = ["k1", "k2", "k3"];
    let mut s = Script::new("random_bitmap_ops");
    for _ in 0..600 {
        let k = keys[rnd(3) as usize].to_string();
        let int = |v: i64| v.to_string();
        let cmd: Vec<String> = match rnd(9) {
            0 | 1 => vec!["SETBIT".into(), k, int(rnd(300) as i64), int(rnd(2) as i64)],
            2 => vec!["GETBIT".into(), k, int(rnd(320) as i64)],
            3 => {
                let mut c = vec![
                    "BITCOUNT".into(),
                    k,
                    int(rnd(80) as i64 - 40),
                    int(rnd(80) as i64 - 40),
                ];
                match rnd(3) {
                    0 => c.push("BIT".into()),
                    1 => c.push("BYTE".into()),
                    _ => {}
                }
                c
            }
            4 => {
                let mut c = vec!["BITPOS".into(), k, int(rnd(2) as i64)];
                let extra = rnd(4);
                if extra >= 1 {
                    c.push(int(rnd(60) as i64 - 30));
                }
                if extra >= 2 {
                    c.push(int(rnd(60) as i64 - 30));
                }
                if extra == 3 {
                    c.push(if rnd(2) == 0 { "BIT" } else { "BYTE" }.into());
                }
                c
            }
            5 | 6 => {
                let mut c = vec!["BITFIELD".into(), k];
                for _ in 0..1 + rnd(3) {
                    if rnd(3) == 0 {
                        c.push("OVERFLOW".into());
                        c.push(["WRAP", "SAT", "FAIL"][rnd(3) as usize].into());
                    }
                    let signed = rnd(2) == 0;
                    let bits = 1 + rnd(if signed { 64 } else { 63 });
                    let ty = format!("{}{bits}", if signed { "i" } else { "u" });
                    let off = if rnd(4) == 0 {
                        format!("#{}", rnd(10))
                    } else {
                        rnd(200).to_string()
                    };
                    let val = (rnd(u64::MAX) as i64) >> rnd(64);
                    match rnd(3) {
                        0 => c.extend(["GET".into(), ty, off]),
                        1 => c.extend(["SET".into(), ty, off, int(val)]),
                        _ => c.extend(["INCRBY".into(), ty, off, int(val)]),
                    }
                }
                c
            }
            7 => {
                let op = ["AND", "OR", "XOR", "NOT"][rnd(4) as usize];
                let mut c = vec!["BITOP".into(), op.into(), k];
                let n = if op == "NOT" { 1 } else { 1 + rnd(3) };
                for _ in 0..n {
                    c.push(keys[rnd(3) as usize].into());
                }
                c
            }
            _ => vec!["GET".into(), k],
        };
        s = s.cmd(&cmd);
    }
    for k in keys {
        s = s.cmd(&["GET", k]);
    }
    diff(&s);
}
