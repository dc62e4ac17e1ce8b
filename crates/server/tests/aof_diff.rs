//! The write journal's propagated forms against redis-server 7.0: the same
//! commands run on both with `appendonly yes`; the incremental files must
//! hold the same commands (absolute times within a few seconds of each
//! other, keyword case aside).

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

/// Normalizes a command for comparison: lower case, and absolute unix
/// times (13-digit numbers) replaced by a marker after the caller checked them.
fn norm(c: &[Vec<u8>]) -> Vec<Vec<u8>> {
    c.iter()
        .map(|a| {
            if a.len() == 13 && a.iter().all(u8::is_ascii_digit) {
                b"<ms>".to_vec()
            } else {
                a.to_ascii_lowercase()
            }
        })
        .collect()
}

fn times(c: &[Vec<u8>]) -> Vec<i64> {
    c.iter()
        .filter(|a| a.len() == 13 && a.iter().all(u8::is_ascii_digit))
        .map(|a| std::str::from_utf8(a).unwrap().parse().unwrap())
        .collect()
}

/// Runs `script` on petrel and redis-server with `appendonly yes` and
/// compares what each journaled.
fn diff_journal(name: &str, extra: &[(&str, &str)], script: &str) {
    let mut args = vec![
        ("appendonly", "yes"),
        ("appendfsync", "always"),
        ("enable-debug-command", "yes"),
    ];
    args.extend_from_slice(extra);
    let Some(redis) = RefRedis::start_with(Opts::new(&args)) else {
        return;
    };
    let petrel = Server::start(&args);
    run(&redis, script);
    run(&petrel, script);
    // Both write before replying; a PING round trip flushes any tail.
    redis.raw().cmd(&["PING"]);
    petrel.raw().cmd(&["PING"]);
    let want = incr_commands(&aof_dir(redis.dir()));
    let got = incr_commands(&aof_dir(petrel.dir()));
    let w: Vec<_> = want.iter().map(|c| norm(c)).collect();
    let g: Vec<_> = got.iter().map(|c| norm(c)).collect();
    if w != g {
        let lines = |v: &[Vec<Vec<u8>>]| v.iter().map(|c| show(c)).collect::<Vec<_>>().join("\n  ");
        panic!(
            "{name}: journals differ\nredis:\n  {}\npetrel:\n  {}",
            lines(&want),
            lines(&got)
        );
    }
    for (a, b) in want.iter().zip(&got) {
        for (x, y) in times(a).into_iter().zip(times(b)) {
            assert!(
                (x - y).abs() < 10_000,
                "{name}: times {x} and {y} in {} / {}",
                show(a),
                show(b)
            );
        }
    }
}

#[test]
fn strings_and_ttls() {
    diff_journal(
        "strings",
        &[],
        r#"
set a 1 ex 100
set b 2 px 100000 get
set c 3 exat 9999999999 nx
set c2 3 pxat 9999999999000
setex d 100 x
psetex e 100000 y
set f 1 keepttl
set f 2 xx
set f 3 nx
setnx f 4
setnx g0 4
getset f 9
mset m1 1 m2 2
msetnx m1 1 m3 3
msetnx m4 4 m5 5
append f xyz
setrange f 1 QQ
incr n
incrby n 10
decr n
decrby n 3
incrbyfloat g 1.5
incrbyfloat g 2.0e2
getdel f
getdel nokey
set f 1
getex f ex 100
getex f persist
getex f persist
getex f
getex f pxat 1
set lcs1 ohmytext
lcs lcs1 lcs1
get a
strlen a
"#,
    );
}

#[test]
fn keys_and_expire() {
    diff_journal(
        "keys",
        &[],
        r#"
debug set-active-expire 0
set a 1
expire a 200
pexpire a 300000 gt
expireat a 9999999999
pexpireat a 9999999999001
expire a 10 lt
persist a
persist a
expire nokey 10
set b 1
expire b -1
set b 1
expireat b 1
set c 1
pexpireat c 1
set k 1
del k nokey
del nokey
unlink nokey
set k 1
unlink k
set r 1
rename r r2
renamenx r2 r3
set r4 x
renamenx r3 r4
copy r3 r5
copy r3 r6 db 2
move r5 1
move nokey 1
touch r3
select 3
set x 1
flushdb
select 0
swapdb 0 1
swapdb 0 1
set p 1 px 1
sleep 20
get p
set p2 1 px 1
sleep 20
incr p2
set lz 1 px 1
config set lazyfree-lazy-expire yes
sleep 20
get lz
config set lazyfree-lazy-expire no
set e1 1
config set lazyfree-lazy-expire yes
expire e1 -5
config set lazyfree-lazy-expire no
flushall
"#,
    );
}

#[test]
fn collections() {
    diff_journal(
        "collections",
        &[],
        r#"
hset h a 1 b 2
hset h a 1
hsetnx h a 5
hsetnx h c 5
hdel h zz
hdel h c
hincrby h n 5
hincrbyfloat h f 2.5
hincrbyfloat h f 1e3
hmset h x 1
rpush l 1 2 3 4 5 6
lpush l 0
lpushx l -1
rpushx nol 1
lpop l
rpop l 2
lset l 0 z
linsert l before z y
lrem l 1 y
ltrim l 0 10
ltrim l 1 -1
lmove l l2 left right
rpoplpush l l2
lmpop 1 l left count 2
lmpop 2 nol l right
sadd s a b c
sadd s a
srem s zz
srem s a
smove s s2 b
smove s s2 zz
sadd t 1 2 3
sinterstore d s t
sunionstore d s t
sdiffstore d t s
sadd one x
spop one
sadd two x y
spop two 5
spop nokey
zadd z 1 a 2 b 3 c 4 d 5 e
zadd z xx ch 10 a
zadd z nx 1 a
zincrby z 2 b
zrem z zz
zrem z e
zpopmin z
zpopmax z 1
zmpop 1 z min count 1
zmpop 2 noz z max
zadd z2 1 a 2 b 3 c
zremrangebyscore z2 1 1
zremrangebyrank z2 0 0
zremrangebylex z2 - +
zadd z3 1 a 2 b
zunionstore z4 2 z3 z3
zinterstore z5 1 z3
zrangestore z6 z3 0 -1
zdiffstore z7 1 z3
pfadd hll a b c
pfadd hll a
pfcount hll
pfcount hll
pfmerge hll2 hll
setbit bm 7 1
setbit bm 7 1
bitop or bm2 bm bm
bitfield bf set u8 0 200
bitfield bf get u8 0
rpush sl 3 1 2
sort sl store sl2
sort sl
"#,
    );
}

#[test]
fn blocking_pops_immediate() {
    diff_journal(
        "blocking",
        &[],
        r#"
rpush l 1 2 3 4 5 6 7 8
blpop l 0
brpop l 0
blmove l l2 LEFT left 0
brpoplpush l l2 0
blmpop 0 1 l right
blmpop 0 1 l left count 2
zadd z 1 a 2 b 3 c 4 d 5 e
bzpopmin z 0
bzpopmax z 0
bzmpop 0 1 z min
bzmpop 0 1 z max count 2
blpop nolist 0.01
"#,
    );
}

#[test]
fn transactions_and_scripts() {
    diff_journal(
        "tx",
        &[],
        r##"
multi
set m1 1
incr m2
exec
multi
set m3 1
exec
multi
get m3
exec
multi
set t 1 ex 100
spop nokey
incrbyfloat fl 1.5
exec
eval "redis.call('set','k1','v'); redis.call('incr','k2'); return 1" 0
eval "redis.call('set','k3','v')" 0
eval "return redis.call('get','k3')" 0
eval "redis.call('set','k4','v','ex',100); redis.call('expire','k3',100); return 1" 0
eval "return 1" 0
script load "return 1"
function load "#!lua name=lib\nredis.register_function('f', function(keys, args) return redis.call('incr', keys[1]) end)"
fcall f 1 fk
function delete lib
select 2
eval "redis.call('set','in2','v'); redis.call('select','3'); redis.call('set','in3','v')" 0
select 0
"##,
    );
}

/// Waiters served after a push: their non-blocking forms, after the push.
#[test]
fn blocking_pops_served() {
    let args = [("appendonly", "yes"), ("appendfsync", "always")];
    let Some(redis) = RefRedis::start_with(Opts::new(&args)) else {
        return;
    };
    let petrel = Server::start(&args);
    let mut all = Vec::new();
    for srv in [&redis, &petrel] {
        let waits: &[&[&str]] = &[
            &["brpoplpush", "w1", "w2", "0"],
            &["blmove", "w3", "w2", "right", "LEFT", "0"],
            &["blpop", "w4", "0"],
            &["bzpopmax", "w5", "0"],
            &["blmpop", "0", "1", "w6", "left", "count", "3"],
            &["bzmpop", "0", "1", "w7", "max", "count", "2"],
        ];
        let mut conns = Vec::new();
        for w in waits {
            let mut c = srv.raw();
            c.send_cmd(w);
            conns.push(c);
        }
        let mut admin = srv.raw();
        assert!(wait_until(Duration::from_secs(5), || {
            let v = admin.cmd(&["INFO", "clients"]);
            v.as_bytes()
                .is_some_and(|t| String::from_utf8_lossy(t).contains("blocked_clients:6"))
        }));
        run(
            srv,
            "rpush w1 x\nrpush w3 y z\nlpush w4 1 2\nzadd w5 1 a 2 b\nrpush w6 1 2 3 4\nzadd w7 1 a 2 b 3 c",
        );
        for mut c in conns {
            c.read_reply();
        }
        srv.raw().cmd(&["PING"]);
        all.push(incr_commands(&aof_dir(srv.dir())));
    }
    let w: Vec<_> = all[0].iter().map(|c| norm(c)).collect();
    let g: Vec<_> = all[1].iter().map(|c| norm(c)).collect();
    assert_eq!(
        g.iter().map(|c| show(c)).collect::<Vec<_>>(),
        w.iter().map(|c| show(c)).collect::<Vec<_>>()
    );
}

/// SPOP's random choice reaches the journal as the members it popped.
#[test]
fn spop_count_as_srem() {
    let petrel = Server::start(&[("appendonly", "yes")]);
    let mut c = petrel.raw();
    c.cmd(&["SADD", "s", "a", "b", "c", "d", "e"]);
    let popped = match c.cmd(&["SPOP", "s", "3"]) {
        Value::Array(v) | Value::Set(v) => v,
        other => panic!("{other:?}"),
    };
    c.cmd(&["PING"]);
    let cmds = incr_commands(&aof_dir(petrel.dir()));
    let tail: Vec<String> = cmds.iter().skip(2).map(|c| show(c)).collect();
    assert_eq!(tail.len(), 5, "{tail:?}");
    assert_eq!(tail[0], "MULTI");
    assert_eq!(tail[4], "EXEC");
    for (p, line) in popped.iter().zip(&tail[1..4]) {
        let Value::Bulk(m) = p else { panic!() };
        assert_eq!(*line, format!("SREM s {}", String::from_utf8_lossy(m)));
    }
}

/// PFDEBUG TODENSE / GETREG convert a sparse HyperLogLog to dense: the
/// encoding is part of the value (digest, DUMP), and Redis propagates the
/// command when it converted (not when the value was already dense).
#[test]
fn pfdebug_conversions_are_journaled() {
    diff_journal(
        "pfdebug",
        &[],
        r#"
pfadd h1 a b c
pfdebug todense h1
pfdebug todense h1
pfadd h2 a
pfdebug getreg h2
pfdebug getreg h2
pfdebug encoding h2
"#,
    );
}

/// XADD journals the ID it generated (`<ms>-*` included) and an
/// approximate trim (`~`) as the exact threshold it reached; so does
/// XTRIM `~` when it removed something. The node layout is not replayed.
#[test]
fn xadd_and_xtrim_rewrites() {
    diff_journal(
        "xadd",
        &[("stream-node-max-entries", "4")],
        r#"
xadd s 1-1 a 1
xadd s 1-* a 2
xadd s 2-* a 3
xadd s 3-5 a 4
xadd s 4-1 a 5
xadd s 5-1 a 6
xadd s 6-1 a 7
xadd s 7-1 a 8
xadd s 8-1 a 9
xadd s 9-1 a 10
xadd s maxlen ~ 5 10-* a 11
xadd s maxlen ~ 5 11-1 a 12
xadd s minid ~ 9-0 limit 100 12-1 a 13
xadd s maxlen = 6 13-1 a 14
xadd s nomkstream 14-* a 15
xadd none nomkstream 1-1 a 1
xtrim s maxlen ~ 1
xtrim s maxlen ~ 1
xtrim s minid ~ 14-0
xtrim s maxlen 1
"#,
    );
}

/// XADD with `*`: the journaled ID is the one the client got back.
#[test]
fn xadd_auto_id_is_journaled() {
    let srv = Server::start(&[("appendonly", "yes"), ("appendfsync", "always")]);
    let mut c = srv.raw();
    let id = c.cmd(&["XADD", "s", "*", "f", "v"]);
    let id = id.as_bytes().unwrap().to_vec();
    c.cmd(&["PING"]);
    let cmds = incr_commands(&aof_dir(srv.dir()));
    let xadd = cmds
        .iter()
        .find(|c| c[0].eq_ignore_ascii_case(b"xadd"))
        .expect("XADD journaled");
    assert_eq!(xadd[2], id, "journaled {}", show(xadd));
}

/// Runs `script` on Petrel (`appendonly yes`, the given preamble), runs
/// BGREWRITEAOF, then loads the AOF into a fresh Petrel and redis-server:
/// both must hold the original's dataset. Returns the base's commands
/// (empty with an RDB preamble).
fn rewrite_and_load(preamble: &str, script: &str) -> Vec<Vec<Vec<u8>>> {
    let petrel = Server::start(&[
        ("appendonly", "yes"),
        ("aof-use-rdb-preamble", preamble),
        ("enable-debug-command", "yes"),
    ]);
    run(&petrel, script);
    petrel.raw().cmd(&["BGREWRITEAOF"]);
    wait_rewrite(|| {
        String::from_utf8_lossy(
            petrel
                .raw()
                .cmd(&["INFO", "persistence"])
                .as_bytes()
                .unwrap(),
        )
        .into_owned()
    });
    let base = manifest_files(&aof_dir(petrel.dir()))
        .into_iter()
        .find(|(_, t)| t == "b")
        .unwrap()
        .0;
    let cmds = if base.ends_with(".aof") {
        parse_aof(&std::fs::read(aof_dir(petrel.dir()).join(base)).unwrap())
    } else {
        Vec::new()
    };
    let want = petrel.raw().cmd(&["DEBUG", "DIGEST"]);
    for kind in [Kind::Petrel, Kind::Redis] {
        let Some((_copy, srv)) = start_on_aof_copy(kind, &aof_dir(petrel.dir()), "aofbase") else {
            continue;
        };
        assert_same(&petrel, &srv, &format!("{kind:?}"));
        assert_eq!(srv.raw().cmd(&["DEBUG", "DIGEST"]), want, "{kind:?}");
    }
    cmds
}

/// `aof-use-rdb-preamble no`: the command-form base rebuilds streams
/// (entries, last ID and counters, groups, consumers, pending entries),
/// loadable by Petrel and redis-server into the same dataset.
#[test]
fn command_base_rebuilds_streams() {
    let cmds = rewrite_and_load(
        "no",
        r#"
xadd s 1-1 a 1 b 2
xadd s 2-1 a 3
xadd s 3-1 a 4
xadd s 4-1 a 5
xdel s 3-1
xgroup create s g1 0
xgroup create s g2 $ entriesread 2
xreadgroup group g1 c1 count 2 streams s >
xreadgroup group g1 c2 count 1 streams s >
xgroup createconsumer s g1 idle
xadd empty maxlen 0 5-5 x y
xsetid empty 9-9 entriesadded 12 maxdeletedid 7-7
xgroup create empty g 0
"#,
    );
    assert!(
        cmds.iter().any(|c| c[0] == b"XCLAIM"),
        "no XCLAIM in the base: {:?}",
        cmds.iter().map(|c| show(c)).collect::<Vec<_>>()
    );
}

/// XSETID may move the last ID below deleted entries still in their node
/// (down to the last live entry); an RDB base holding such a stream loads
/// (it was refused as "entry above last id").
#[test]
fn rdb_base_with_tombstones_above_the_last_id_loads() {
    for preamble in ["yes", "no"] {
        rewrite_and_load(
            preamble,
            r#"
xadd s 1-1 a 1
xadd s 2-1 a 2
xadd s 3-1 a 3
xdel s 3-1
xsetid s 2-1
"#,
        );
    }
}

/// ZRANGESTORE is journaled as sent, so its result must be Redis's own:
/// BYLEX on a small (listpack) zset with mixed scores follows Redis's scan
/// (forward from the head, REV from the tail), not a sorted-interval
/// search; the AOF replayed by redis-server then rebuilds the same set.
#[test]
fn zrangestore_bylex_mixed_scores_matches_redis() {
    let script = r#"
zadd z 1 26 1 36 1 38 2 m18 3 895 4 a0 5 zz
zrangestore d1 z [9 - bylex rev
zrangestore d2 z [m (9 bylex rev
zrangestore d3 z [9 - bylex rev limit 1 2
zrangestore d4 z (5 [a bylex
zrangestore d5 z (zz - bylex rev
zrangestore d6 z [zz [0 bylex rev
zadd y 3 b 1 c 2 a
zremrangebylex y [a [b
"#;
    let args = [("appendonly", "yes"), ("enable-debug-command", "yes")];
    let Some(redis) = RefRedis::start_with(Opts::new(&args)) else {
        return;
    };
    let petrel = Server::start(&args);
    run(&redis, script);
    run(&petrel, script);
    for k in ["d1", "d2", "d3", "d4", "d5", "d6", "y"] {
        assert_eq!(
            petrel.raw().cmd(&["ZRANGE", k, "0", "-1", "WITHSCORES"]),
            redis.raw().cmd(&["ZRANGE", k, "0", "-1", "WITHSCORES"]),
            "{k}"
        );
    }
    for (max, min) in [("[9", "-"), ("[m", "(9"), ("+", "[4")] {
        assert_eq!(
            petrel.raw().cmd(&["ZREVRANGEBYLEX", "z", max, min]),
            redis.raw().cmd(&["ZREVRANGEBYLEX", "z", max, min]),
            "ZREVRANGEBYLEX z {max} {min}"
        );
    }
    assert_same(&petrel, &redis, "after the script");
    // The AOF of Petrel, replayed by redis-server: the same dataset.
    let copy = TempDir::new("aofzlex");
    copy_dir(&aof_dir(petrel.dir()), &copy.join("appendonlydir"));
    let d = copy.path().display().to_string();
    let loaded = Server::start_opts(
        Kind::Redis,
        Opts::new(&[
            ("appendonly", "yes"),
            ("enable-debug-command", "yes"),
            ("dir", &d),
        ]),
    );
    assert!(wait_until(Duration::from_secs(30), || {
        String::from_utf8_lossy(
            loaded
                .raw()
                .cmd(&["INFO", "persistence"])
                .as_bytes()
                .unwrap(),
        )
        .contains("loading:0")
    }));
    assert_same(&petrel, &loaded, "redis-server loading Petrel's AOF");
}
