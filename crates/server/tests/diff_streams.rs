//! Differential tests: the stream commands (XADD ... XINFO) against
//! redis-server 7.0, over RESP2 and RESP3: replies, every error path in
//! Redis's argument order, ID edge cases (0-0, the maximum ID, sequence
//! overflow, partial IDs), trimming (exact and `~`, LIMIT), consumer groups
//! (PEL, claims, lag and entries-read), XINFO, keyspace events, type
//! commands, and blocking XREAD/XREADGROUP.
//! Syntax of the scripts: see tests/common/script.rs.

mod common;
use common::*;

#[test]
fn streams_add_and_range() {
    diff_text(
        "streams_add_and_range",
        r###"
XADD s 1-1 a 1 b 2
XADD s 1-2 a 3
XADD s 2 c 4 d 5 e 6
XADD s 2-* f 7
XADD s 3-* f 8
XADD s 1-5 x y
XADD s 3-1 x y
XADD s 0-0 x y
XADD s 0 x y
XADD s 0-* x y
XADD s 4-0 x
XADD s 4-0 x y z
XADD s
XADD s 5-0
XADD s abc x y
XADD s 1-x x y
XADD s -1 x y
XADD s + x y
XADD s - x y
XADD s 18446744073709551616 x y
XADD s " 5" x y
XADD s 5-0- x y
XLEN s
XLEN nokey
XRANGE s - +
XRANGE s 1 1
XRANGE s 1-2 +
XRANGE s (1-1 (3-0
XRANGE s (1-1 +
XRANGE s - (2-0
XRANGE s - + COUNT 2
XRANGE s - + COUNT 0
XRANGE s - + COUNT -1
XRANGE s - + COUNT 1 COUNT 3
XRANGE s - + COUNT
XRANGE s - + COUNT x
XRANGE s - + FOO
XRANGE s 3 1
XRANGE s (18446744073709551615-18446744073709551615 +
XRANGE s - (0-0
XRANGE s (- +
XRANGE s ( +
XRANGE s x +
XRANGE s - x
XRANGE s 1-18446744073709551615 +
XRANGE nokey - +
XRANGE nokey - + COUNT 0
XREVRANGE s + -
XREVRANGE s + - COUNT 2
XREVRANGE s (3-0 (1-1
XREVRANGE s 2 2
XREVRANGE s - +
XREVRANGE s + - COUNT 0
XREVRANGE nokey + -
XADD n 18446744073709551615-18446744073709551614 a 1
XADD n 18446744073709551615-* a 1
XADD n 18446744073709551615-* a 1
XADD n * a 1
XADD n 18446744073709551615-18446744073709551615 a 1
XRANGE n - +
XADD m 5-18446744073709551615 a 1
XADD m 5-* a 1
XADD m 6-* a 1
XRANGE m - +
XADD big 1-0 f 9223372036854775807 g -9223372036854775808 h 007 i "" j " "
XRANGE big - +
SET str x
XADD str 1-0 a b
XLEN str
XRANGE str - +
TYPE s
OBJECT ENCODING s
EXISTS s
XADD nm NOMKSTREAM 1-0 a b
EXISTS nm
XADD nm NOMKSTREAM * a b
XADD auto * a b              # type
XADD auto * a b              # type
XLEN auto
"###,
    );
}

#[test]
fn streams_trim() {
    diff_text(
        "streams_trim",
        r###"
CONFIG SET stream-node-max-entries 10
XADD t 1 a 1
XADD t 2 a 1
XADD t 3 a 1
XADD t 4 a 1
XADD t 5 a 1
XADD t 6 a 1
XADD t 7 a 1
XADD t 8 a 1
XADD t 9 a 1
XADD t 10 a 1
XADD t 11 a 1
XADD t 12 a 1
XADD t 13 a 1
XADD t 14 a 1
XADD t 15 a 1
XADD t 16 a 1
XADD t 17 a 1
XADD t 18 a 1
XADD t 19 a 1
XADD t 20 a 1
XADD t 21 a 1
XADD t 22 a 1
XADD t 23 a 1
XADD t 24 a 1
XADD t 25 a 1
XTRIM t MAXLEN ~ 20
XLEN t
XTRIM t MAXLEN ~ 9
XLEN t
XTRIM t MAXLEN = 12
XLEN t
XRANGE t - + COUNT 1
XTRIM t MINID 14
XRANGE t - + COUNT 1
XTRIM t MINID ~ 22
XLEN t
XTRIM t MINID = 22
XRANGE t - +
XTRIM t MAXLEN 100
XTRIM t MAXLEN ~ 0 LIMIT 1
XTRIM t MAXLEN 0 LIMIT 1
XTRIM t LIMIT 1
XTRIM t LIMIT 0 MAXLEN 1
XTRIM t MAXLEN 1 MINID 1
XTRIM t MAXLEN -1
XTRIM t MAXLEN ~ -1
XTRIM t MAXLEN ~ 1 LIMIT -1
XTRIM t MAXLEN x
XTRIM t MAXLEN ~
XTRIM t MAXLEN
XTRIM t MINID x
XTRIM t MINID -
XTRIM t FOO 1
XTRIM t
XTRIM nokey MAXLEN 1
XTRIM nokey MAXLEN x
SET str x
XTRIM str MAXLEN 1
XTRIM t MAXLEN 0
XLEN t
EXISTS t
XINFO STREAM t
XADD t MAXLEN 2 30 a 1
XADD t MAXLEN 2 31 a 1
XADD t MAXLEN 2 32 a 1
XRANGE t - +
XADD t MAXLEN ~ 1 LIMIT 0 33 a 1
XADD t MINID 31 34 a 1
XRANGE t - +
XADD t LIMIT 5 35 a 1
XADD t MAXLEN 1 LIMIT 5 35 a 1
XADD t MAXLEN -5 35 a 1
XADD t MAXLEN 1 MINID 2 35 a 1
XADD t MINID 0-0 NOMKSTREAM 35 a 1
XADD t2 MAXLEN 0 1 a 1
EXISTS t2
XLEN t2
XINFO STREAM t2
CONFIG SET stream-node-max-entries 100
CONFIG SET stream-node-max-bytes 60
XADD b 1 field value
XADD b 2 field value
XADD b 3 field value
XADD b 4 field value
XADD b 5 field value
XINFO STREAM b
XTRIM b MAXLEN ~ 2
XINFO STREAM b
"###,
    );
}

#[test]
fn streams_del_setid() {
    diff_text(
        "streams_del_setid",
        r###"
XADD s 1 a 1
XADD s 2 a 1
XADD s 3 a 1
XADD s 4 a 1
XDEL s 2 3 9
XDEL s 2
XDEL s x
XDEL s 1 x
XDEL nokey x
XDEL nokey 1
XLEN s
XINFO STREAM s
XDEL s 1
XINFO STREAM s
XDEL s 4
XINFO STREAM s
EXISTS s
XSETID s 3
XSETID s 5
XINFO STREAM s
XADD s 5-0 a 1
XADD s 5-1 a 1
XSETID s 5-0
XSETID s 5-1 ENTRIESADDED 0
XSETID s 5-1 ENTRIESADDED 1
XSETID s 5-1 ENTRIESADDED -1
XSETID s 5-1 ENTRIESADDED x
XSETID s 5-1 MAXDELETEDID 6
XSETID s 9 MAXDELETEDID 6-5 ENTRIESADDED 20
XINFO STREAM s
XSETID s 9 MAXDELETEDID 0-0
XINFO STREAM s
XSETID s 9 FOO
XSETID s 9 ENTRIESADDED
XSETID nokey 1
XSETID nokey x
XSETID nokey 1 MAXDELETEDID 2
SET str x
XSETID str 1
XDEL str 1
XSETID s 18446744073709551615-18446744073709551615
XADD s * a 1
XADD s 1-* a 1
"###,
    );
}

#[test]
fn streams_read() {
    diff_text(
        "streams_read",
        r###"
XADD a 1-1 f v
XADD a 1-2 f v2
XADD b 5 x y
XREAD STREAMS a 0
XREAD STREAMS a b 0 0
XREAD COUNT 1 STREAMS a b 0 0
XREAD COUNT 0 STREAMS a b 0 0
XREAD COUNT -5 STREAMS a b 0 0
XREAD STREAMS a b 1-1 5
XREAD STREAMS a b $ $
XREAD STREAMS a nokey 0 0
XREAD STREAMS nokey 0
XREAD STREAMS a b 0
XREAD STREAMS a
XREAD STREAMS
XREAD COUNT 1
XREAD FOO STREAMS a 0
XREAD STREAMS a >
XREAD STREAMS a x
XREAD STREAMS a -
XREAD COUNT x STREAMS a 0
XREAD BLOCK x STREAMS a 0
XREAD BLOCK -1 STREAMS a 0
XREAD BLOCK 1.5 STREAMS a 0
XREAD BLOCK 9223372036854775807 STREAMS a 0
XREAD BLOCK 0 STREAMS a 0
XREAD BLOCK 10 STREAMS a $
XREAD BLOCK 10 STREAMS nokey $
XREAD GROUP g c STREAMS a 0
XREAD NOACK STREAMS a 0
XREAD STREAMS a a 0 1-1
SET str x
XREAD STREAMS a str 0 0
XREAD STREAMS str a 0 0
XREAD STREAMS nokey str 0 0
MULTI
XREAD BLOCK 0 STREAMS a $
XREAD BLOCK 0 STREAMS a 0
EXEC
XDEL a 1-2
XREAD STREAMS a 1-1
XADD e 1 a 1
XDEL e 1
XREAD STREAMS e 0
"###,
    );
}

#[test]
fn streams_groups() {
    diff_text(
        "streams_groups",
        r###"
XGROUP CREATE s g $
XGROUP CREATE s g $ MKSTREAM
XGROUP CREATE s g $ MKSTREAM
XGROUP CREATE s g2 0 ENTRIESREAD 5
XGROUP CREATE s g3 0 ENTRIESREAD -1
XGROUP CREATE s g4 0 ENTRIESREAD -2
XGROUP CREATE s g4 0 ENTRIESREAD x
XGROUP CREATE s g4 0 FOO
XGROUP CREATE s g4 x
XGROUP CREATE s g4 -
XGROUP CREATE s g4
XGROUP CREATE nokey g 0
XGROUP CREATE nokey g x MKSTREAM
EXISTS nokey
XINFO GROUPS s
XADD s 1 a 1
XADD s 2 a 2
XADD s 3 a 3
XINFO GROUPS s
XREADGROUP GROUP g c1 STREAMS s >
XREADGROUP GROUP g c1 STREAMS s >
XREADGROUP GROUP g c2 COUNT 1 STREAMS s 0
XREADGROUP GROUP g c1 COUNT 1 STREAMS s 0
XREADGROUP GROUP g c1 STREAMS s 1
XINFO GROUPS s
XGROUP SETID s g 0
XREADGROUP GROUP g c2 COUNT 2 STREAMS s >
XPENDING s g
XPENDING s g - + 10         # type
XPENDING s g - + 10 c1         # type
XPENDING s g - + 10 c2         # type
XPENDING s g - + 10 nobody
XPENDING s g (1 + 10         # type
XPENDING s g - (3 1         # type
XPENDING s g - + 0
XPENDING s g - + -1
XPENDING s g IDLE 0 - + 10         # type
XPENDING s g IDLE 100000 - + 10
XPENDING s g IDLE x - + 10
XPENDING s g IDLE 0 - + 10 c1 extra
XPENDING s g - + 10 c1 extra         # type
XPENDING s g - +
XPENDING s g - + x
XPENDING s g x + 1
XPENDING s g IDLE 5 - +
XPENDING s nogroup
XPENDING nokey g
XPENDING s g3
XACK s g 1 2
XACK s g 1
XACK s g x
XACK s nogroup 1
XACK nokey g 1
XACK s g 1 x
XPENDING s g
XREADGROUP GROUP g c1 STREAMS s 0
XREADGROUP GROUP g c2 STREAMS s 0
XDEL s 3
XREADGROUP GROUP g c2 STREAMS s 0
XREADGROUP GROUP g c3 NOACK STREAMS s 0
XGROUP SETID s g 0
XREADGROUP GROUP g c3 NOACK STREAMS s >
XPENDING s g - + 10 c3
XGROUP CREATECONSUMER s g c9
XGROUP CREATECONSUMER s g c9
XGROUP CREATECONSUMER s nogroup c9
XGROUP CREATECONSUMER nokey g c9
XGROUP DELCONSUMER s g c2
XGROUP DELCONSUMER s g c2
XGROUP DELCONSUMER s nogroup c2
XINFO CONSUMERS s g          # type
XINFO CONSUMERS s nogroup
XINFO CONSUMERS nokey g
XGROUP SETID s g $
XGROUP SETID s g - ENTRIESREAD 0
XGROUP SETID s g + ENTRIESREAD 3
XGROUP SETID s g 1 ENTRIESREAD -1
XGROUP SETID s g 1 ENTRIESREAD -3
XGROUP SETID s g 1 FOO 1
XGROUP SETID s g x
XGROUP SETID s nogroup 0
XGROUP SETID nokey g 0
XINFO GROUPS s
XGROUP DESTROY s g
XGROUP DESTROY s g
XGROUP DESTROY nokey g
XINFO GROUPS s
XGROUP HELP
XINFO HELP
XGROUP FOO
XGROUP CREATE s
XGROUP DESTROY s g extra
XINFO FOO
XREADGROUP GROUP g2 c STREAMS s $
XREADGROUP GROUP nogroup c STREAMS s >
XREADGROUP GROUP g2 c STREAMS nokey >
XREADGROUP GROUP g2 STREAMS s >
XREADGROUP STREAMS s >
XREADGROUP GROUP g2 c STREAMS s
XREADGROUP GROUP g2 c STREAMS s x
XREADGROUP GROUP g2 c STREAMS s > > 
SET str x
XGROUP CREATE str g 0
XREADGROUP GROUP g c STREAMS str >
XINFO GROUPS str
XACK str g 1
XPENDING str g
XREADGROUP GROUP g2 c BLOCK 10 STREAMS s >
MULTI
XREADGROUP GROUP g2 c BLOCK 0 STREAMS s >
EXEC
"###,
    );
}

#[test]
fn streams_claim() {
    diff_text(
        "streams_claim",
        r###"
XADD s 1 a 1
XADD s 2 a 2
XADD s 3 a 3
XADD s 4 a 4
XGROUP CREATE s g 0
XREADGROUP GROUP g c1 STREAMS s >
XCLAIM s g c2 0 1 2
XCLAIM s g c2 0 1 JUSTID
XPENDING s g - + 10         # type
XCLAIM s g c3 100000 1 2
XCLAIM s g c3 0 3 RETRYCOUNT 7 JUSTID
XPENDING s g - + 10         # type
XCLAIM s g c3 0 9 JUSTID
XCLAIM s g c3 0 4 FORCE JUSTID
XACK s g 4
XCLAIM s g c3 0 4 FORCE
XPENDING s g - + 10         # type
XCLAIM s g c3 0 4 LASTID 10
XINFO GROUPS s
XCLAIM s g c3 0 4 LASTID x
XCLAIM s g c3 0 4 IDLE x
XCLAIM s g c3 0 4 TIME x
XCLAIM s g c3 0 4 RETRYCOUNT x
XCLAIM s g c3 0 4 FOO
XCLAIM s g c3 0 4 IDLE
XCLAIM s g c3 x 4
XCLAIM s g c3 -5 4 JUSTID
XCLAIM s nogroup c3 0 4
XCLAIM nokey g c3 0 4
XCLAIM s g c3 0 x
XCLAIM s g c3 0 4 IDLE 1000000 JUSTID
XPENDING s g IDLE 999000 - + 10   # type (the idle time can be 1 ms more on a loaded machine)
XCLAIM s g c3 0 4 TIME 1 JUSTID
XPENDING s g IDLE 999000 - + 10   # type (idle = now - 1: the two servers answer in different milliseconds)
XDEL s 2
XCLAIM s g c4 0 2 3
XPENDING s g
XAUTOCLAIM s g c5 0 0
XPENDING s g
XAUTOCLAIM s g c5 0 0 COUNT 1
XAUTOCLAIM s g c5 0 0 COUNT 1 JUSTID
XAUTOCLAIM s g c5 0 (1 JUSTID
XAUTOCLAIM s g c5 100000 0
XAUTOCLAIM s g c5 0 0 COUNT 0
XAUTOCLAIM s g c5 0 0 COUNT x
XAUTOCLAIM s g c5 0 0 COUNT 576460752303423487
XAUTOCLAIM s g c5 0 0 COUNT 576460752303423488
XAUTOCLAIM s g c5 0 0 FOO
XAUTOCLAIM s g c5 x 0
XAUTOCLAIM s g c5 0 x
XAUTOCLAIM s g c5 0 (18446744073709551615-18446744073709551615
XAUTOCLAIM s nogroup c5 0 0
XAUTOCLAIM nokey g c5 0 0
XAUTOCLAIM nokey g c5 x 0
XDEL s 3 4
XAUTOCLAIM s g c6 0 0
XPENDING s g
XINFO STREAM s FULL          # type
"###,
    );
}

#[test]
fn streams_info() {
    diff_text(
        "streams_info",
        r###"
XADD s 1-1 a 1 b 2
XADD s 1-2 a 3 b 4
XADD s 2-1 c 5
XINFO STREAM s
XGROUP CREATE s g 0
XGROUP CREATE s h $
XREADGROUP GROUP g c COUNT 2 STREAMS s >
XINFO STREAM s
XINFO STREAM s FULL COUNT 0  # type
XINFO STREAM s FULL COUNT x
XINFO STREAM s FULL COUNT
XINFO STREAM s FULL FOO 1
XINFO STREAM s FOO
XINFO STREAM nokey
XINFO STREAM nokey FOO
XINFO STREAM
XINFO GROUPS s
XINFO GROUPS nokey
XINFO CONSUMERS s g          # type
XDEL s 1-2
XINFO GROUPS s
XADD s 3 a 1
XINFO GROUPS s
XGROUP SETID s h 2-1 ENTRIESREAD 2
XINFO GROUPS s
XINFO STREAM nostream
SET str x
XINFO STREAM str
XINFO GROUPS str
XINFO CONSUMERS str g
XADD e 1 a 1
XDEL e 1
XINFO STREAM e
"###,
    );
}

#[test]
fn streams_keyspace() {
    diff_text(
        "streams_keyspace",
        r###"
XADD s 1 a 1
XGROUP CREATE s g 0
COPY s d
XINFO GROUPS d
XADD d 2 b 2
XLEN s
XLEN d
RENAME d e
XRANGE e - +
MOVE e 1
SELECT 1
XRANGE e - +
SELECT 0
TYPE s
OBJECT ENCODING s
SORT s
SORT_RO s
DEL s
EXISTS s
XGROUP CREATE e2 g $ MKSTREAM
TYPE e2
XLEN e2
LPUSH s x
XADD s 1 a 1
GETRANGE e2 0 1
"###,
    );
}

/// Keyspace events a list of commands fires, as "channel payload" lines.
fn keyspace_events(srv: &Server, cmds: &[Vec<String>]) -> Vec<String> {
    let mut c = srv.raw();
    let mut sub = srv.raw();
    c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "KEA"]);
    sub.cmd(&["PSUBSCRIBE", "__key*"]);
    sub.cmd(&["SUBSCRIBE", "end-of-test"]);
    for cmd in cmds {
        let a: Vec<&str> = cmd.iter().map(|s| s.as_str()).collect();
        c.cmd(&a);
    }
    c.cmd(&["PUBLISH", "end-of-test", "x"]);
    let mut out = Vec::new();
    loop {
        let resp::Value::Array(m) = sub.read_reply() else {
            panic!("unexpected message")
        };
        match &m[..] {
            [resp::Value::Bulk(k), _, resp::Value::Bulk(ch), resp::Value::Bulk(p)]
                if k == b"pmessage" =>
            {
                out.push(format!(
                    "{} {}",
                    String::from_utf8_lossy(ch),
                    String::from_utf8_lossy(p)
                ))
            }
            [resp::Value::Bulk(k), ..] if k == b"message" => return out,
            _ => panic!("unexpected message {m:?}"),
        }
    }
}

#[test]
fn streams_notifications() {
    let script = "
XADD s 1 a 1
XADD s MAXLEN 0 2 a 1
XADD s 3 a 1
XADD s NOMKSTREAM 4 a 1
XADD nokey NOMKSTREAM 4 a 1
XDEL s 3
XDEL s 3
XADD s 5 a 1
XTRIM s MAXLEN 5
XTRIM s MAXLEN 0
XSETID s 10
XGROUP CREATE s g 0
XGROUP CREATE s g 0
XGROUP CREATE m g $ MKSTREAM
XGROUP CREATECONSUMER s g c
XGROUP CREATECONSUMER s g c
XGROUP SETID s g 0
XGROUP DELCONSUMER s g c
XGROUP DELCONSUMER s g c
XADD s 11 a 1
XREADGROUP GROUP g c1 STREAMS s >
XREADGROUP GROUP g c1 STREAMS s >
XREADGROUP GROUP g c2 STREAMS s 0
XCLAIM s g c3 0 11
XAUTOCLAIM s g c4 0 0
XACK s g 11
XGROUP DESTROY s g
XGROUP DESTROY s g
DEL s
";
    let cmds: Vec<Vec<String>> = script
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().map(String::from).collect())
        .collect();
    let petrel = TestServer::start(&[]);
    let got = keyspace_events(&petrel, &cmds);
    let Some(redis) = RefRedis::start() else {
        return;
    };
    let want = keyspace_events(&redis, &cmds);
    assert_eq!(got, want, "petrel vs redis keyspace events");
}

#[test]
fn streams_digest() {
    diff_text(
        "streams_digest",
        r###"
XADD s 1-1 a 1 b 2
XADD s 1-2 a 3 b 4
XADD s 2-1 c 5 d -9223372036854775808 e 0x10
XGROUP CREATE s g 0
DEBUG DIGEST-VALUE s
DEBUG DIGEST
XDEL s 1-2
DEBUG DIGEST-VALUE s
XADD e MAXLEN 0 1 a 1
DEBUG DIGEST-VALUE e
PEXPIRE s 100000
DEBUG DIGEST-VALUE s
"###,
    );
}
