//! Differential tests: the list commands (LPUSH ... LPOS, LMPOP, LMOVE)
//! against redis-server 7.0: replies (RESP2 and RESP3 null shapes), every
//! error path in Redis's argument order, WRONGTYPE, deletion of emptied
//! keys, node sizes (`list-max-listpack-size`, big elements), OBJECT
//! ENCODING, keyspace events and COMMAND INFO/DOCS.
//! Syntax of the scripts: see tests/common/script.rs.

mod common;
use common::*;

#[test]
fn push_pop_basic() {
    diff_text(
        "push_pop_basic",
        r###"
LPUSH l a b c
RPUSH l d e 1 -2 9223372036854775807 -9223372036854775808 007 " " ""
LRANGE l 0 -1
LLEN l
LPUSHX l x
RPUSHX l y z
LPUSHX nokey x
RPUSHX nokey x
EXISTS nokey
LPUSH l
RPUSH
LPOP l
RPOP l
LPOP l 2
RPOP l 3
LPOP l 0
RPOP l 0
LPOP l -1
LPOP l x
LPOP l 1 2
RPOP l 1 2
LPOP nokey
RPOP nokey
LPOP nokey 0
LPOP nokey 3
RPOP nokey 1
LRANGE l 0 -1
LPOP l 100
EXISTS l
LPOP l
RPUSH one x
RPOP one 5
EXISTS one
OBJECT ENCODING l
RPUSH l a
OBJECT ENCODING l
TYPE l
"###,
    );
}

#[test]
fn wrongtype_everywhere() {
    diff_text(
        "wrongtype_everywhere",
        r###"
SET s v
RPUSH l a b
LPUSH s a
RPUSH s a
LPUSHX s a
RPUSHX s a
LPOP s
RPOP s
LPOP s 0
RPOP s 2
LLEN s
LINDEX s 0
LINDEX s x
LSET s 0 a
LINSERT s BEFORE a b
LRANGE s 0 -1
LTRIM s 0 1
LREM s 0 a
LPOS s a
LPOS s a COUNT 0
LMOVE s l LEFT RIGHT
LMOVE l s LEFT RIGHT
LMOVE nokey s LEFT RIGHT
RPOPLPUSH s l
RPOPLPUSH l s
LMPOP 2 s l LEFT
LMPOP 2 l s LEFT
LMPOP 2 nokey s RIGHT COUNT 2
LRANGE l 0 -1
GET s
"###,
    );
}

#[test]
fn index_range_trim() {
    diff_text(
        "index_range_trim",
        r###"
RPUSH l 0 1 2 3 4 5 6 7 8 9
LINDEX l 0
LINDEX l -1
LINDEX l 9
LINDEX l 10
LINDEX l -10
LINDEX l -11
LINDEX l 9223372036854775807
LINDEX l -9223372036854775808
LINDEX l x
LINDEX nokey x
LINDEX nokey 0
LRANGE l 0 0
LRANGE l 2 5
LRANGE l -3 -1
LRANGE l -100 100
LRANGE l 5 2
LRANGE l 10 20
LRANGE l -1 -2
LRANGE l 0 -11
LRANGE l -9223372036854775808 9223372036854775807
LRANGE l x 1
LRANGE l 1 x
LRANGE nokey 0 -1
LRANGE nokey x 1
LSET l 0 zero
LSET l -1 last
LSET l 10 x
LSET l -11 x
LSET l x y
LSET nokey 0 a
LSET nokey x a
LRANGE l 0 -1
LTRIM l 1 -2
LRANGE l 0 -1
LTRIM l -100 100
LRANGE l 0 -1
LTRIM l 2 1
LTRIM l x 1
LTRIM nokey 0 1
LTRIM nokey x 1
EXISTS l
RPUSH l a b c
LTRIM l 5 10
EXISTS l
RPUSH l a b c
LTRIM l -1 -1
LRANGE l 0 -1
LTRIM l -9223372036854775808 9223372036854775807
LRANGE l 0 -1
"###,
    );
}

#[test]
fn insert_rem() {
    diff_text(
        "insert_rem",
        r###"
RPUSH l a b c a b c 1 2 1
LINSERT l BEFORE a x
LINSERT l after c y
LINSERT l AFTER 1 one
LINSERT l before 01 z
LINSERT l BEFORE nosuch z
LINSERT l MIDDLE a z
LINSERT nokey BEFORE a z
LINSERT nokey MIDDLE a z
EXISTS nokey
LRANGE l 0 -1
LREM l 1 a
LRANGE l 0 -1
LREM l -1 c
LRANGE l 0 -1
LREM l 0 1
LREM l 0 nosuch
LREM l x a
LREM nokey 0 a
LREM nokey x a
LRANGE l 0 -1
LREM l -100 b
LREM l 2 c
LRANGE l 0 -1
LREM l 0 x
LREM l 0 a
LREM l 0 y
LREM l 0 one
LREM l 0 2
LRANGE l 0 -1
EXISTS l
"###,
    );
}

#[test]
fn lpos_options() {
    diff_text(
        "lpos_options",
        r###"
RPUSH l a b c 1 2 3 c c a 1
LPOS l c
LPOS l 1
LPOS l 01
LPOS l nosuch
LPOS l c RANK 2
LPOS l c RANK -1
LPOS l c RANK -2
LPOS l c RANK 10
LPOS l c RANK -10
LPOS l c RANK 0
LPOS l c RANK x
LPOS l c RANK -9223372036854775808
LPOS l c RANK 9223372036854775807
LPOS l c COUNT 0
LPOS l c COUNT 2
LPOS l c COUNT 2 RANK 2
LPOS l c COUNT 0 RANK -1
LPOS l c COUNT 1 RANK -3
LPOS l nosuch COUNT 0
LPOS l c COUNT -1
LPOS l c COUNT x
LPOS l c MAXLEN 3
LPOS l c MAXLEN 6
LPOS l c MAXLEN 3 COUNT 0
LPOS l c MAXLEN 3 RANK -1 COUNT 0
LPOS l a MAXLEN 1 RANK -1
LPOS l c MAXLEN -1
LPOS l c MAXLEN x
LPOS l c MAXLEN 0 COUNT 0 RANK 1
LPOS l c RANK 1 RANK 2
LPOS l c COUNT
LPOS l c FOO 1
LPOS l c rank 1 count 1 maxlen 0
LPOS nokey c
LPOS nokey c COUNT 0
LPOS nokey c RANK 0
LPOS l
"###,
    );
}

#[test]
fn lmove_rpoplpush() {
    diff_text(
        "lmove_rpoplpush",
        r###"
RPUSH src a b c
LMOVE src dst LEFT RIGHT
LMOVE src dst RIGHT LEFT
LMOVE src dst left left
LRANGE dst 0 -1
EXISTS src
LMOVE src dst LEFT RIGHT
LMOVE dst dst LEFT RIGHT
LRANGE dst 0 -1
LMOVE dst dst RIGHT LEFT
LRANGE dst 0 -1
LMOVE dst dst LEFT LEFT
LMOVE dst dst RIGHT RIGHT
LRANGE dst 0 -1
LMOVE dst src UP LEFT
LMOVE dst src LEFT DOWN
LMOVE nokey src UP LEFT
LMOVE dst src LEFT
RPOPLPUSH dst other
RPOPLPUSH dst other
RPOPLPUSH dst other
RPOPLPUSH dst other
LRANGE other 0 -1
EXISTS dst
RPUSH one x
RPOPLPUSH one one
LRANGE one 0 -1
RPOPLPUSH nokey one
RPOPLPUSH one
"###,
    );
}

#[test]
fn lmpop_args() {
    diff_text(
        "lmpop_args",
        r###"
RPUSH a 1 2 3
RPUSH b x y z w
LMPOP 1 a LEFT
LMPOP 1 a RIGHT
LMPOP 2 nokey b LEFT COUNT 2
LMPOP 2 a b RIGHT COUNT 10
LMPOP 2 a b right count 10
EXISTS a b
LMPOP 2 a b LEFT
LMPOP 0 a LEFT
LMPOP -1 a LEFT
LMPOP x a LEFT
LMPOP 1 a
LMPOP 1 a MIDDLE
LMPOP 3 a b LEFT
LMPOP 9223372036854775807 a LEFT
LMPOP 1 a LEFT COUNT 0
LMPOP 1 a LEFT COUNT -1
LMPOP 1 a LEFT COUNT x
LMPOP 1 a LEFT COUNT 1 COUNT 1
LMPOP 1 a LEFT COUNT
LMPOP 1 a LEFT FOO
LMPOP 2 a
RPUSH a 1
LMPOP 1 a LEFT COUNT 1 extra
LMPOP 1 a LEFT COUNT 1
LMPOP 1 a LEFT
"###,
    );
}

/// Node sizes: small fills, byte-limited fills, elements larger than a node,
/// so every path of the quicklist (new nodes, splits, merges) runs on both.
#[test]
fn node_shapes() {
    let big = "x".repeat(9000);
    let mid = "m".repeat(3000);
    for fill in ["1", "2", "3", "-1", "-2", "-5"] {
        let script = format!(
            r###"
CONFIG SET list-max-listpack-size {fill}
RPUSH l a b c d e f g h i j k 1 2 3 4 5
LPUSH l {big} {mid} z
RPUSH l {mid} {big} {mid}
LINSERT l BEFORE e {big}
LINSERT l AFTER e {mid}
LINSERT l AFTER 5 tail
LINSERT l BEFORE z head
LSET l 3 {big}
LSET l 4 small
LRANGE l 0 -1
LRANGE l 5 9
LRANGE l -7 -3
LINDEX l 7
LINDEX l -4
LPOS l {mid} COUNT 0
LPOS l {mid} RANK -2 COUNT 0
LREM l -2 {mid}
LRANGE l 0 -1
LTRIM l 2 -3
LRANGE l 0 -1
LPOP l 3
RPOP l 3
LRANGE l 0 -1
LMOVE l l LEFT RIGHT
LRANGE l 0 -1
OBJECT ENCODING l
LLEN l
DEL l
"###
        );
        diff_text(&format!("node_shapes_fill_{fill}"), &script);
    }
}

/// A list created under one `list-max-listpack-size` keeps it (Redis sets
/// the quicklist options at creation); results are the same either way.
#[test]
fn config_changes() {
    diff_text(
        "config_changes",
        r###"
CONFIG SET list-max-listpack-size 2
RPUSH l 1 2 3 4 5 6 7 8 9 10
CONFIG SET list-max-listpack-size -2
RPUSH l 11 12 13
LINSERT l AFTER 5 x
LRANGE l 0 -1
CONFIG GET list-max-listpack-size
CONFIG SET list-compress-depth 1
CONFIG GET list-compress-depth
RPUSH c 1 2 3
LRANGE c 0 -1
OBJECT ENCODING c
"###,
    );
}

/// Keyspace events a list of commands fires, as (channel, payload) pairs.
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
fn list_notifications() {
    let script = "
RPUSH l a b c d e f
LPUSH l x
LPUSHX l y
RPUSHX l z
LPUSHX nokey a
LPOP l
RPOP l 2
LPOP l 0
LINSERT l BEFORE a w
LINSERT l BEFORE nosuch w
LSET l 0 q
LREM l 0 nosuch
LREM l 1 w
LTRIM l 0 -1
LTRIM l 1 -1
LMOVE l m LEFT RIGHT
RPOPLPUSH l m
LMOVE m m LEFT LEFT
LMPOP 2 nokey m RIGHT COUNT 1
RPUSH one 1
LMOVE one two LEFT LEFT
RPOPLPUSH two two
LMPOP 1 two LEFT
RPUSH t 1 2
LTRIM t 5 6
RPUSH r 1 1
LREM r 0 1
RPUSH p 1 2
RPOP p 5
RPUSH q 1
LPOP q
LRANGE l 0 -1
LLEN l
LINDEX l 0
LPOS l a
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
fn list_commands_info() {
    // RPOPLPUSH is left out of COMMAND DOCS: its command-level
    // `deprecated_since`/`replaced_by` fields have no place in `Docs` yet.
    diff_text(
        "list_commands_info",
        r###"
COMMAND INFO lindex linsert llen lmove lmpop lpop lpos lpush lpushx lrange lrem lset ltrim rpop rpoplpush rpush rpushx
COMMAND DOCS lindex linsert llen lmove lmpop lpop lpos lpush lpushx lrange lrem lset ltrim rpop rpush rpushx        # pairs
COMMAND GETKEYS LMPOP 2 a b LEFT
COMMAND GETKEYS LMOVE a b LEFT RIGHT
COMMAND GETKEYS RPOPLPUSH a b
"###,
    );
}

/// MULTI/EXEC and WATCH see list writes (key positions and write flags).
/// The EXEC after `LMPOP 2 l l2` with `l2` watched is not compared: Redis
/// invalidates only the key it popped from, petrel's dispatch invalidates
/// every key position of a write command (a stricter, allowed outcome).
#[test]
fn watch_and_multi() {
    diff_text(
        "watch_and_multi",
        r###"
RPUSH l a b
WATCH l
LPOS l a
EXEC
WATCH l
LPUSHX l c
MULTI
LLEN l
EXEC
WATCH l2
LMPOP 2 l l2 LEFT
MULTI
LLEN l2
EXEC            # any
MULTI
RPUSH x 1 2
LMOVE x y LEFT LEFT
LMPOP 2 x y RIGHT COUNT 5
EXEC
"###,
    );
}

/// `list-compress-depth` 1 and 2 with small nodes, so most nodes are
/// interior and LZF-compressed on both servers: every read and write path
/// goes through compressed nodes (pushes and pops moving nodes across the
/// depth boundary, LSET/LINSERT/LREM/LTRIM inside compressed nodes, reads
/// of single elements and ranges, LMOVE and SORT over them). Depth 0 with
/// 2-element nodes: Petrel compresses the nodes beyond the 8 at each end
/// (see quicklist's module docs), Redis nothing; replies are the same.
#[test]
fn compressed_nodes() {
    for (depth, fill) in [("1", "4"), ("2", "4"), ("1", "-1"), ("2", "3"), ("0", "2")] {
        let e = |i: u32| format!("element-number-{i:05}");
        let mut s = String::new();
        let push: Vec<String> = (0..120).map(e).collect();
        s += &format!("RPUSH l {}\n", push.join(" "));
        let front: Vec<String> = (500..540).map(e).collect();
        s += &format!("LPUSH l {}\n", front.join(" "));
        s += "LRANGE l 0 -1\nLLEN l\n";
        for i in [
            0, 1, 3, 4, 5, 7, 8, 40, 77, 100, 155, 158, 159, 160, -1, -4, -5, -9, -80,
        ] {
            s += &format!("LINDEX l {i}\n");
        }
        for i in [6i32, 50, 90, -7, 130] {
            s += &format!(
                "LSET l {i} {}\n",
                "x".repeat(60 + i.unsigned_abs() as usize)
            );
        }
        s += &format!("LSET l 60 {}\n", "y".repeat(9000));
        s += "LRANGE l 0 -1\n";
        s += &format!("LINSERT l BEFORE {} inserted-before\n", e(60));
        s += &format!("LINSERT l AFTER {} inserted-after\n", e(61));
        s += &format!("LINSERT l AFTER {} {}\n", e(62), "z".repeat(7000));
        s += "LINSERT l BEFORE nosuch x\n";
        s += &format!("LPOS l {}\n", e(70));
        s += &format!("LPOS l {} RANK -1\n", e(10));
        s += "LPOS l inserted-after COUNT 0\n";
        s += &format!("LPOS l {} MAXLEN 50\n", e(100));
        s += "LRANGE l 30 90\nLRANGE l -100 -60\n";
        for i in (20..120).step_by(7) {
            s += &format!("LREM l 1 {}\n", e(i));
        }
        s += &format!("RPUSH l {0} {0} {0}\nLPUSH l {0}\n", e(33));
        s += &format!("LREM l -2 {}\nLREM l 0 {}\n", e(33), e(33));
        s += "LRANGE l 0 -1\n";
        s += "LMOVE l m LEFT RIGHT\nLMOVE l m RIGHT LEFT\nLMOVE l l LEFT RIGHT\nRPOPLPUSH l l\n";
        s += "LRANGE l 0 -1\nLRANGE m 0 -1\n";
        s +=
            "SORT l ALPHA LIMIT 0 20\nSORT l ALPHA DESC LIMIT 10 30\nSORT l BY nosort LIMIT 5 10\n";
        s += "SORT l ALPHA STORE sorted\nLRANGE sorted 0 -1\nLINDEX sorted 70\n";
        s += "LTRIM l 10 -12\nLRANGE l 0 -1\nLTRIM l 5 40\nLRANGE l 0 -1\n";
        s += "LPOP l 7\nRPOP l 9\nLRANGE l 0 -1\nLPOP l 3\nRPOP l 3\nLINDEX l 3\n";
        for _ in 0..4 {
            s += "RPOP l 2\nLPOP l\nLRANGE l 0 -1\n";
        }
        s += "LLEN l\nOBJECT ENCODING l\nLLEN sorted\n";
        diff_text_with(
            &format!("compressed_nodes_depth_{depth}_fill_{fill}"),
            &s,
            &DiffOpts::new(&[
                ("list-compress-depth", depth),
                ("list-max-listpack-size", fill),
            ]),
        );
    }
}

/// A list keeps the compress depth it was created with (Redis passes the
/// server setting to `quicklistCreate` only), and DEBUG OBJECT shows the
/// quicklist fields as Redis's.
#[test]
fn compress_depth_is_per_list() {
    let s = TestServer::start(&[("enable-debug-command", "yes")]);
    let mut c = s.raw();
    let elems: Vec<String> = (0..2000).map(|i| format!("item:{i}")).collect();
    let mut push = vec!["RPUSH", "plain"];
    push.extend(elems.iter().map(|e| e.as_str()));
    c.cmd(&push);
    c.cmd(&["CONFIG", "SET", "list-compress-depth", "1"]);
    c.cmd(&["CONFIG", "SET", "list-max-listpack-size", "128"]);
    push[1] = "packed";
    c.cmd(&push);
    c.cmd(&push[..3]);
    let debug = |c: &mut RawConn, k: &str| match c.cmd(&["DEBUG", "OBJECT", k]) {
        Value::Simple(s) => String::from_utf8(s).unwrap(),
        v => panic!("{v:?}"),
    };
    let int = |c: &mut RawConn, a: &[&str]| match c.cmd(a) {
        Value::Int(i) => i,
        v => panic!("{v:?}"),
    };
    let d = debug(&mut c, "plain");
    assert!(d.contains(" ql_listpack_max:-2 ql_compressed:0 "), "{d}");
    let d = debug(&mut c, "packed");
    assert!(
        d.contains(" ql_nodes:16 ql_avg_node:125.06 ql_listpack_max:128 ql_compressed:1 "),
        "{d}"
    );
    let plain = int(&mut c, &["MEMORY", "USAGE", "plain"]);
    let packed = int(&mut c, &["MEMORY", "USAGE", "packed"]);
    assert!(packed * 4 < plain * 3, "packed {packed} plain {plain}");
    // Pushing more to the existing plain list keeps it uncompressed.
    c.cmd(&push);
    let d = debug(&mut c, "plain");
    assert!(d.contains(" ql_compressed:0 "), "{d}");
}
