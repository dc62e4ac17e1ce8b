//! Differential tests: SORT and SORT_RO against redis-server.
//! Script syntax: see tests/common/script.rs.
//!
//! Stored results are read back with `SORT dst BY nosort`, which returns a
//! list in its own order. Sets without a sorting step come back in table
//! order, which differs from Redis's: those steps are `# unordered`.

mod common;
use common::*;

/// SORT paths that need no list/set/zset commands.
#[test]
fn sort_without_collections() {
    diff_text(
        "sort_without_collections",
        r##"
SORT nokey
SORT nokey DESC ALPHA LIMIT 0 10
SORT nokey BY w_* GET # GET h_*->f
SORT_RO nokey
SORT_RO nokey BY nosort GET #
SET d x
EXPIRE d 100
SORT nokey STORE d
EXISTS d
SORT nokey STORE d
SET str x
HSET h a 1
SORT str
SORT h
SORT_RO str
SORT str STORE d
SORT str foo
SORT str LIMIT 1
SORT str LIMIT a 1
SORT str LIMIT 1 b
SORT str LIMIT 1 1.5
SORT str STORE
SORT str BY
SORT str GET
SORT_RO str STORE d
SORT_RO nokey STORE d
SORT nokey LIMIT 0 1 foo
SORT
SORT_RO
EXISTS d
MULTI
SORT nokey BY w_* GET #
SORT nokey STORE d
HSET h b 2
EXEC
"##,
    );
}

#[test]
fn sort_commands_info() {
    diff_text(
        "sort_commands_info",
        r###"
COMMAND INFO sort sort_ro
COMMAND DOCS sort sort_ro                 # pairs
COMMAND GETKEYS SORT k
COMMAND GETKEYS SORT k STORE d
COMMAND GETKEYS SORT k STORE d LIMIT 0 1 STORE e
COMMAND GETKEYS SORT k GET store x
COMMAND GETKEYS SORT k BY store STORE d
COMMAND GETKEYS SORT_RO k BY x GET y
COMMAND GETKEYSANDFLAGS SORT k BY w_* GET o_* STORE d
COMMAND GETKEYSANDFLAGS SORT k STORE d LIMIT 0 1 STORE e
COMMAND GETKEYSANDFLAGS SORT_RO k
COMMAND GETKEYSANDFLAGS ZUNIONSTORE d 2 a b
COMMAND GETKEYSANDFLAGS ZDIFFSTORE d 2 a b
COMMAND GETKEYSANDFLAGS LMPOP 2 a b LEFT
COMMAND GETKEYSANDFLAGS SINTERCARD 2 a b
"###,
    );
}

#[test]

fn sort_lists() {
    diff_text(
        "sort_lists",
        r##"
RPUSH l 3 1 2 10 -5 1.5 0x10 " 7" +1.5
SORT l
SORT l ASC
SORT l DESC
SORT l DESC ASC
SORT l LIMIT 1 2
SORT l LIMIT -1 2
SORT l LIMIT 10 5
SORT l LIMIT 0 0
SORT l LIMIT 2 -1
SORT l LIMIT 8 1
SORT l LIMIT 9 1
SORT l DESC LIMIT 0 3
SORT l limit 0 3 desc
SORT l ALPHA
SORT l ALPHA DESC LIMIT 1 3
SORT_RO l
SORT_RO l DESC LIMIT 1 2
RPUSH dup 2 1 2 1 3
SORT dup
SORT dup ALPHA DESC
RPUSH bad 1 a 2
SORT bad
SORT bad ALPHA
SORT bad STORE dst
EXISTS dst
# Before the ERANGE cases: Redis does not clear errno before strtod, so a
# conversion error can leak into the next SORT of the same connection.
RPUSH special inf -inf 0 "" -0
SORT special
RPUSH spaces "1 " 2
SORT spaces
RPUSH huge 1e400 1
SORT huge
RPUSH tiny 1e-310 1
SORT tiny
RPUSH nan nan
SORT nan
RPUSH nul "a\x00b" "a" "a\x00a" "b"
SORT nul ALPHA STORE nuls
SORT nuls BY nosort
RPUSH words banana Apple cherry apple 10 9
SORT words ALPHA
SORT words ALPHA DESC
SORT words
"##,
    );
}

#[test]

fn sort_by_and_get() {
    diff_text(
        "sort_by_and_get",
        r##"
RPUSH l 1 2 3 4 5
MSET w_1 50 w_2 40 w_3 30 w_4 20 w_5 10
HSET h_1 f 5 name one
HSET h_2 f 4 name two
HSET h_3 f 3 name three
HSET h_4 f 2
MSET o_1 x o_3 y
SORT l BY w_*
SORT l BY w_* DESC
SORT l BY w_* LIMIT 1 2
SORT l BY w_* DESC LIMIT 0 2
SORT l BY h_*->f
SORT l BY h_*->name ALPHA
SORT l BY h_*->name ALPHA DESC
SORT l BY h_*->nofield
SORT l BY o_* ALPHA
SORT l BY o_*
SORT l BY nokey_*
SORT l BY w_* GET #
SORT l BY w_* GET # GET w_* GET h_*->name GET o_* GET nokey_* GET constant
SORT l GET # GET h_*->f LIMIT 1 2
SORT l BY nosort
SORT l BY nosort DESC
SORT l BY nosort LIMIT 1 2
SORT l BY nosort DESC LIMIT 1 2
SORT l BY nosort LIMIT 3 10
SORT l BY nosort GET o_*
SORT l BY h_*->
SORT l BY "w_*->"
SORT l BY "*" 
SORT l BY # 
SORT l GET
SORT l GET h_*
SORT l GET h_*->f BY w_* DESC
SET w_bad abc
RPUSH l2 bad 1
SORT l2 BY w_*
SORT l2 BY w_* ALPHA
SORT l2 BY nosort
SORT l BY w_* GET # GET o_* STORE dst
SORT dst BY nosort
TYPE dst
OBJECT ENCODING dst
SORT_RO l BY w_* GET o_*
SET t x
EXPIRE t 100
SORT l STORE t
TTL t
SORT t BY nosort
SORT l LIMIT 0 0 STORE t
EXISTS t
SORT l BY w_* STORE l
SORT l BY nosort
RPUSH ints 3 -2 9223372036854775807 -9223372036854775808 0
SORT ints
SORT ints BY nosort DESC
"##,
    );
}

#[test]

fn sort_sets_and_zsets() {
    diff_text(
        "sort_sets_and_zsets",
        r##"
SADD s 5 3 1 10 -2
OBJECT ENCODING s
SORT s
SORT s DESC LIMIT 1 2
SORT s ALPHA
SORT s BY nosort                 # unordered
SORT s BY nosort STORE dst
SORT dst BY nosort
SORT s BY nosort DESC STORE dst
SORT dst BY nosort
SORT_RO s BY nosort              # unordered
SADD ls a c b 1
# petrel keeps small string sets in a listpack (Redis 7.2), 7.0 says hashtable
OBJECT ENCODING ls # any
SORT ls
SORT ls ALPHA
SORT ls ALPHA DESC LIMIT 0 2
SORT ls BY nosort STORE dst
SORT dst BY nosort
MSET w_a 3 w_b 1 w_c 2 w_1 0
SORT ls BY w_*
SORT ls BY w_* GET # GET w_*
ZADD z 1 c 2 b 3 a 3 d
OBJECT ENCODING z
SORT z BY nosort
SORT z BY nosort DESC
SORT z BY nosort LIMIT 1 2
SORT z BY nosort DESC LIMIT 1 2
SORT z BY nosort LIMIT 5 1
SORT z ALPHA
SORT z ALPHA DESC
SORT z
SORT z BY w_*
SORT z BY nosort STORE dst
SORT dst BY nosort
CONFIG SET zset-max-listpack-entries 1
ZADD z2 1 c 2 b 3 a 4 e
OBJECT ENCODING z2
SORT z2 BY nosort
SORT z2 BY nosort DESC LIMIT 1 2
SORT z2 ALPHA DESC
CONFIG SET set-max-intset-entries 2
SADD big 1 2 3 4 5
OBJECT ENCODING big
SORT big
SORT big BY nosort STORE dst
SORT dst BY nosort
"##,
    );
}

/// Redis 7.0 converts a sorted set kept as a listpack to a skiplist for
/// good when SORT or SORT_RO reads it, whatever the options, unless they
/// fail to parse; a failed conversion of the scores does not undo it.
#[test]
fn sort_converts_a_listpack_zset_for_good() {
    diff_text(
        "sort_converts_a_listpack_zset_for_good",
        r##"
ZADD z 1 c 2 b 3 a
OBJECT ENCODING z
SORT z foo
SORT z LIMIT 0 x
OBJECT ENCODING z
SORT_RO z BY nosort LIMIT 0 1
OBJECT ENCODING z
ZCARD z
ZRANGE z 0 -1 WITHSCORES
ZADD z2 1 x 2 y
SORT z2
OBJECT ENCODING z2
ZADD z3 1 1 2 2
SORT z3 BY nosort DESC STORE dst
OBJECT ENCODING z3
DUMP z3
ZREM z3 1
OBJECT ENCODING z3
ZADD z4 1 1
MULTI
SORT z4 ALPHA
OBJECT ENCODING z4
EXEC
SET s x
SORT s
"##,
    );
}

#[test]
fn sort_notifications_without_collections() {
    diff_events(&[
        &["SET", "d", "x"],
        &["SORT", "nokey", "STORE", "d"],
        &["SORT", "nokey", "STORE", "d"],
        &["SORT", "nokey"],
    ]);
}

#[test]

fn sort_notifications() {
    diff_events(&[
        &["RPUSH", "l", "2", "1"],
        &["SORT", "l", "STORE", "d"],
        &["SORT", "l", "STORE", "d"],
        &["SORT", "l", "LIMIT", "0", "0", "STORE", "d"],
        &["SORT", "l", "LIMIT", "0", "0", "STORE", "d"],
        &["SORT", "l"],
        &["RPUSH", "bad", "x"],
        &["SORT", "bad", "STORE", "d"],
    ]);
}
