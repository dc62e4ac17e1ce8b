//! Differential tests: the hash command family against redis-server.
//! Script syntax: see tests/common/script.rs.
//!
//! `hashtable` replies come in table order, which differs from Redis's
//! dict order: those steps are compared `# pairs` / `# unordered`.
//! `listpack` replies keep insertion order in both servers and are exact.

mod common;
use common::*;

/// 65 bytes: one more than the default `hash-max-listpack-value`.
fn long65() -> String {
    "x".repeat(65)
}

#[test]
fn hashes_listpack() {
    diff_text(
        "hashes_listpack",
        r##"
HSET h a 1 b 2 c 3
HSET h a 10 d 4
HGET h a
HGET h nofield
HGET nokey a
HMGET h a b nofield d
HMGET nokey a b
HGETALL h
HKEYS h
HVALS h
HLEN h
HLEN nokey
HEXISTS h a
HEXISTS h z
HEXISTS nokey a
HSTRLEN h a
HSTRLEN h nofield
HSTRLEN nokey a
HSET h neg -123 big 9223372036854775807 small -9223372036854775808 lead 007 plus +1 sp " 1" empty ""
HSTRLEN h neg
HSTRLEN h big
HSTRLEN h small
HSTRLEN h lead
HSTRLEN h empty
HGETALL h
HSETNX h a 99
HSETNX h e 5
HSETNX newkey f v
HGETALL newkey
HMSET h a 1 z 26
HMSET m x 1
HGETALL h
OBJECT ENCODING h
HDEL h a a nofield
HDEL h b c
HDEL nokey a
HGETALL h
HDEL h d e z neg big small lead plus sp empty
EXISTS h
HDEL h x
HGETALL nokey
HKEYS nokey
HVALS nokey
HSET k "" ""
HGET k ""
HSET bin "\x00\xff" "\r\n"
HGETALL bin
HSET ttl a 1
EXPIRE ttl 100
HSET ttl b 2
TTL ttl
HDEL ttl a b
TTL ttl
"##,
    );
}

#[test]
fn hashes_arity_and_errors() {
    diff_text(
        "hashes_arity_and_errors",
        r##"
HSET h a
HSET h a 1 b
HSET h
HMSET h a
HMSET h a 1 b
HSETNX h a
HGET h
HMGET h
HDEL h
HLEN
HSTRLEN h
HEXISTS h
HINCRBY h a
HINCRBYFLOAT h a
HGETALL
HKEYS h x
HRANDFIELD
HSCAN h
EXISTS h
SET s x
HSET s a 1
HMSET s a 1
HSETNX s a 1
HGET s a
HMGET s a
HDEL s a
HLEN s
HSTRLEN s a
HEXISTS s a
HGETALL s
HKEYS s
HVALS s
HINCRBY s a 1
HINCRBY s a x
HINCRBYFLOAT s a 1
HINCRBYFLOAT s a x
HRANDFIELD s
HRANDFIELD s 1
HRANDFIELD s 1 x
HRANDFIELD s x
HSCAN s 0
HSCAN s x
HSCAN s 0 COUNT 0
GET s
"##,
    );
}

#[test]
fn hashes_counters() {
    diff_text(
        "hashes_counters",
        r##"
HSET h a x n 10 f 1.5 big 9223372036854775807 small -9223372036854775808 lead 007 plus +1
HINCRBY h n 5
HINCRBY h n -20
HINCRBY h new 3
HINCRBY h a 1
HINCRBY h lead 1
HINCRBY h plus 1
HINCRBY h f 1
HINCRBY h big 1
HINCRBY h small -1
HINCRBY h big 0
HINCRBY h n abc
HINCRBY h n 9223372036854775808
HINCRBY h n 1.5
HINCRBY nokey2 f abc
EXISTS nokey2
HINCRBY fresh f -7
HGETALL fresh
HINCRBYFLOAT h f 1.1
HINCRBYFLOAT h f -1.1
HINCRBYFLOAT h n 2.5e3
HINCRBYFLOAT h a 1
HINCRBYFLOAT h big 1.5
HINCRBYFLOAT h lead 1
HINCRBYFLOAT h fnew -0.0
HINCRBYFLOAT h fnew2 10.5
HINCRBYFLOAT h fnew2 0.1
HINCRBYFLOAT h e 1e308
HINCRBYFLOAT h e 1e308
HINCRBYFLOAT h huge 1e400
HINCRBYFLOAT h huge 1e4932
HINCRBYFLOAT h f inf
HINCRBYFLOAT h f -inf
HINCRBYFLOAT h f nan
HINCRBYFLOAT h f abc
HINCRBYFLOAT h f ""
HINCRBYFLOAT h f " 1"
HSET h sp " 1" tr "1 " hex 0x10
HINCRBYFLOAT h sp 1
HINCRBYFLOAT h tr 1
HINCRBYFLOAT h hex 1
HINCRBYFLOAT nokey3 f inf
EXISTS nokey3
HINCRBYFLOAT fresh2 f 3.0
HGETALL fresh2
HGETALL h                        # pairs
OBJECT ENCODING h
"##,
    );
}

#[test]
fn hashes_hashtable_and_conversions() {
    let l = long65();
    let l64 = "y".repeat(64);
    let script = format!(
        r##"
HSET small a 1 b {l64}
OBJECT ENCODING small
HSET h1 a {l}
OBJECT ENCODING h1
HSET h2 {l} a
OBJECT ENCODING h2
HSET h3 a 1
HSET h3 b 2 c {l}
OBJECT ENCODING h3
HGETALL h3                       # pairs
HSET h4 a 1
HSETNX h4 a {l}
OBJECT ENCODING h4
HSETNX h4 b {l}
OBJECT ENCODING h4
HSET h5 a 1
HMSET h5 {l} 1
OBJECT ENCODING h5
HSET h6 a 1
HINCRBY h6 {l} 1
OBJECT ENCODING h6
HSET h7 a 1
HINCRBYFLOAT h7 {l} 1.5
OBJECT ENCODING h7
HSET h8 a 1
HSET h8 a 1 b 2 c 3 {l}
OBJECT ENCODING h8
HDEL h8 {l}
OBJECT ENCODING h8
HDEL h8 a b c
EXISTS h8
CONFIG SET hash-max-listpack-entries 4
HSET e a 1 b 2 c 3 d 4
OBJECT ENCODING e
HSET e a 5
OBJECT ENCODING e
HSET e f 6
OBJECT ENCODING e
HDEL e a b c
OBJECT ENCODING e
HGETALL e                        # pairs
HSET e2 a 1 b 2 c 3 d 4 e 5
OBJECT ENCODING e2
HINCRBY e3 a 1
HINCRBY e3 b 1
HINCRBY e3 c 1
HINCRBY e3 d 1
OBJECT ENCODING e3
HINCRBY e3 e 1
OBJECT ENCODING e3
HSETNX e3 f 1
HGETALL e3                       # pairs
CONFIG SET hash-max-listpack-entries 0
HSET z a 1
OBJECT ENCODING z
CONFIG SET hash-max-listpack-entries 128
CONFIG SET hash-max-listpack-value 3
HSET v abc abc
OBJECT ENCODING v
HSET v abcd 1
OBJECT ENCODING v
HSET v2 n 100
HINCRBY v2 n 900
OBJECT ENCODING v2
HINCRBY v2 n 1
OBJECT ENCODING v2
CONFIG SET hash-max-listpack-value 64
HSET t f1 v1 f2 v2 f3 v3 f4 v4 f5 v5 f6 v6 f7 v7 f8 v8 f9 v9 f10 {l}
OBJECT ENCODING t
HGET t f1
HGET t f10
HGET t nofield
HMGET t f1 f10 nofield
HEXISTS t f5
HEXISTS t nofield
HSTRLEN t f10
HLEN t
HGETALL t                        # pairs
HKEYS t                          # unordered
HVALS t                          # unordered
HSETNX t f1 x
HSETNX t f11 x
HSET t f1 new f12 12
HINCRBY t n 5
HINCRBYFLOAT t fl 0.5
HINCRBY t f1 1
HDEL t f1 f2 nofield
HLEN t
HGETALL t                        # pairs
HSCAN t 0 COUNT 1000             # unordered
HSCAN t 0 COUNT 1000 MATCH f1*   # unordered
HRANDFIELD t 100                 # unordered
HRANDFIELD t 100 WITHVALUES      # unordered
HRANDFIELD t 3                   # type
HRANDFIELD t -3                  # type
HRANDFIELD t -3 WITHVALUES       # type
HRANDFIELD t                     # type
HDEL t f3 f4 f5 f6 f7 f8 f9 f10 f11 f12 n fl
EXISTS t
HGETALL t
"##
    );
    diff_text("hashes_hashtable_and_conversions", &script);
}

#[test]
fn hashes_big_listpack() {
    // 500 fields stay a listpack (fingerprint-indexed lookups), 513 convert.
    let mut s = String::from("HSET big");
    for i in 0..500 {
        s.push_str(&format!(" field:{i} {i}"));
    }
    let mut more = String::from("HSET big");
    for i in 500..513 {
        more.push_str(&format!(" field:{i} {i}"));
    }
    let script = format!(
        "{s}\nOBJECT ENCODING big\nHGET big field:0\nHGET big field:499\nHGET big field:500\n\
         HEXISTS big field:250\nHEXISTS big nofield\nHDEL big field:1\nHLEN big\n\
         HSET big field:1 x\nHGETALL big\nHSCAN big 0\n{more}\nOBJECT ENCODING big\nHLEN big\n\
         HGET big field:512\n"
    );
    diff_text("hashes_big_listpack", &script);
}

#[test]
fn hashes_hrandfield() {
    diff_text(
        "hashes_hrandfield",
        r##"
HRANDFIELD nokey
HRANDFIELD nokey 5
HRANDFIELD nokey -5 WITHVALUES
HRANDFIELD nokey abc
HRANDFIELD nokey 1 x
HSET one a 1
HRANDFIELD one
HRANDFIELD one 0
HRANDFIELD one 0 WITHVALUES
HRANDFIELD one -3
HRANDFIELD one -3 WITHVALUES
HRANDFIELD one -3 withvalues
HRANDFIELD one 5 WITHVALUES
HRANDFIELD one 1 WITHVALUE
HRANDFIELD one 1 WITHVALUES x
HRANDFIELD one abc
HRANDFIELD one 1.5
HRANDFIELD one -9223372036854775808
HRANDFIELD one -9223372036854775808 WITHVALUES
HRANDFIELD one 9223372036854775807 x
HRANDFIELD one 4611686018427387904 WITHVALUES
HRANDFIELD one -4611686018427387904 WITHVALUES
HRANDFIELD one 4611686018427387903 WITHVALUES
HRANDFIELD one 9223372036854775807
HSET h a 1 b 2 c 3 d 4 e 5
HRANDFIELD h 5
HRANDFIELD h 6 WITHVALUES
HRANDFIELD h 100 WITHVALUES
HRANDFIELD h 3                   # type
HRANDFIELD h 3 WITHVALUES        # type
HRANDFIELD h -10                 # type
HRANDFIELD h -10 WITHVALUES      # type
HRANDFIELD h                     # type
"##,
    );
}

#[test]
fn hashes_hscan() {
    diff_text(
        "hashes_hscan",
        r##"
HSCAN nokey 0
HSCAN nokey 0 COUNT 0
HSCAN nokey abc
HSET h a 1 b 2 c 3 ab 4 "a*" 5 10 x
HSCAN h 0
HSCAN h 12345
HSCAN h 0 COUNT 1
HSCAN h 0 MATCH a*
HSCAN h 0 MATCH a* COUNT 2
HSCAN h 0 MATCH "a\\*"
HSCAN h 0 MATCH 1?
HSCAN h 0 MATCH zzz
HSCAN h 0 COUNT 0
HSCAN h 0 COUNT -1
HSCAN h 0 COUNT abc
HSCAN h 0 COUNT
HSCAN h 0 MATCH
HSCAN h 0 TYPE hash
HSCAN h 0 NOVALUES
HSCAN h abc
HSCAN h -1
HSCAN h 18446744073709551615
HSCAN h 18446744073709551616
"##,
    );
}

#[test]
fn hashes_commands_info() {
    diff_text(
        "hashes_commands_info",
        r###"
COMMAND INFO hdel hexists hget hgetall hincrby hincrbyfloat hkeys hlen
COMMAND INFO hmget hmset hrandfield hscan hset hsetnx hstrlen hvals
COMMAND DOCS hdel hexists hget hgetall hincrby hincrbyfloat hkeys hlen     # pairs
COMMAND DOCS hmget hrandfield hscan hset hsetnx hstrlen hvals              # pairs
COMMAND GETKEYS HSET h a 1
COMMAND GETKEYS HMGET h a b
"###,
    );
}

#[test]
/// Deprecated commands carry Redis's `deprecated_since` and `replaced_by`.
/// (Only commands whose argument docs are complete are compared here: the
/// string and range-by-score/lex commands still lack argument docs.)
fn deprecated_commands_docs() {
    diff_text(
        "deprecated_commands_docs",
        "COMMAND DOCS hmset rpoplpush   # pairs\n",
    );
}

#[test]
fn hashes_notifications() {
    diff_events(&[
        &["HSET", "h", "a", "1", "b", "2"],
        &["HSET", "h", "a", "1"],
        &["HMSET", "h", "c", "3"],
        &["HSETNX", "h", "a", "9"],
        &["HSETNX", "h", "d", "4"],
        &["HINCRBY", "h", "n", "1"],
        &["HINCRBY", "h", "a", "x"],
        &["HINCRBY", "h", "c", "1"],
        &["HINCRBYFLOAT", "h", "f", "1.5"],
        &["HINCRBYFLOAT", "h", "f", "inf"],
        &["HDEL", "h", "nofield"],
        &["HDEL", "h", "a", "b"],
        &["HDEL", "nokey", "a"],
        &["HGET", "h", "c"],
        &["HGETALL", "h"],
        &["HDEL", "h", "c", "d", "n", "f"],
        &["SET", "s", "x"],
        &["HSET", "s", "a", "1"],
        &["HSET", "t", "a", "1"],
        &["EXPIRE", "t", "100"],
        &["HDEL", "t", "a"],
    ]);
}

/// A hash through the packed form (below 16 fields, one block in the value
/// cell), the indexed listpack (16+) and back (below 8), then hashtable,
/// with the key-level commands that move or copy the value (RENAME, COPY,
/// MOVE), expiry, SCAN TYPE, HRANDFIELD/HSCAN in listpack order, and the
/// conversion at a lowered hash-max-listpack-entries.
#[test]
fn hashes_packed_form_changes() {
    let mut script = String::from("FLUSHALL\n");
    for i in 0..20 {
        script.push_str(&format!(
            "HSET p f{i} v{i} n{i} {i}\nHGETALL p\nOBJECT ENCODING p\n"
        ));
    }
    script.push_str("HRANDFIELD p 100 WITHVALUES\nHSCAN p 0\nHSTRLEN p n7\n");
    for i in 0..19 {
        script.push_str(&format!(
            "HDEL p f{i} n{i}\nHGETALL p\nHLEN p\nHEXISTS p f{i}\n"
        ));
    }
    script.push_str(
        r##"
OBJECT ENCODING p
HSET s a 1 b 2 c 3
EXPIRE s 1000
TTL s
HSET s d 4
TTL s
HGETALL s
RENAME s s2
HGETALL s2
TTL s2
COPY s2 s3
HGETALL s3
OBJECT ENCODING s3
HSET s3 x y
HGETALL s2
HGETALL s3
MOVE s3 1
EXISTS s3
SELECT 1
HGETALL s3
HINCRBY s3 a 5
HINCRBYFLOAT s3 b 1.5
HGETALL s3
SELECT 0
SCAN 0 TYPE hash COUNT 1000        # unordered
TYPE s2
PERSIST s2
TTL s2
UNLINK s2
EXISTS s2
CONFIG SET hash-max-listpack-entries 10
HSET c f0 0 f1 1 f2 2 f3 3 f4 4 f5 5 f6 6 f7 7 f8 8 f9 9
OBJECT ENCODING c
HSET c f10 10
OBJECT ENCODING c
HLEN c
CONFIG SET hash-max-listpack-entries 128
HSET l short x
HSET l long "##,
    );
    script.push_str(&long65());
    script.push_str(
        r##"
OBJECT ENCODING l
HGETALL l                          # pairs
DEL l c p
"##,
    );
    diff_text("hashes_packed_form_changes", &script);
}
