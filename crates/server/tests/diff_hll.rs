//! Differential tests: HyperLogLog commands (PFADD, PFCOUNT, PFMERGE,
//! PFDEBUG) against redis-server, including the stored bytes (`GET`), which
//! must be identical: sparse edits, promotion to dense at
//! `hll-sparse-max-bytes`, the cached cardinality in the header.
//! Syntax of the scripts: see tests/common/script.rs.

mod common;
use common::*;

fn elems(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i}")).collect()
}

fn cmd_with(head: &[&str], items: &[String]) -> Vec<String> {
    head.iter()
        .map(|s| s.to_string())
        .chain(items.iter().cloned())
        .collect()
}

#[test]
fn pfadd_pfcount_basic() {
    diff_text(
        "pfadd_pfcount_basic",
        r###"
PFADD h
GET h
PFCOUNT h
GET h
PFADD h
PFADD h a b c
GET h
PFADD h a b c
PFCOUNT h
GET h
PFADD h d
GET h
PFCOUNT h
PFCOUNT nokey
PFCOUNT nokey nokey2
PFADD h2 "" "\x00" "\xff\xfe" "a b"
GET h2
PFCOUNT h2
PFCOUNT h h2
PFCOUNT h h2 nokey
OBJECT ENCODING h
STRLEN h
PFADD
PFCOUNT
SET t x
PFADD t a
PFCOUNT t
PFCOUNT h t
PFMERGE t h
PFMERGE h t
SET n 123
PFADD n a
PFCOUNT n
SET short HYLL
PFADD short a
SET fake "HYLL\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\xff"
PFADD fake a
SET baddense "HYLL\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\xff"
PFCOUNT baddense
SET magic "HYLX\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\xff"
PFCOUNT magic
SET ttl x EX 100
DEL ttl
PFADD ttl a
TTL ttl
"###,
    );
}

#[test]
fn sparse_edits_bytes() {
    // Many small PFADDs in different orders: every intermediate value must
    // be byte-identical (in-place opcode splits and VAL merges).
    let mut s = Script::new("sparse_edits_bytes");
    for (i, e) in elems("x", 120).iter().enumerate() {
        s = s.cmd(&["PFADD", "h", e.as_str()]);
        if i % 7 == 0 {
            s = s.cmd(&["GET", "h"]).cmd(&["PFCOUNT", "h"]);
        }
    }
    s = s
        .cmd(&["GET", "h"])
        .cmd(&["PFCOUNT", "h"])
        .cmd(&["GET", "h"]);
    let batch = elems("y", 300);
    s = s
        .cmd(&cmd_with(&["PFADD", "h2"], &batch))
        .cmd(&["GET", "h2"])
        .cmd(&["PFCOUNT", "h2"]);
    let rev: Vec<String> = batch.iter().rev().cloned().collect();
    s = s
        .cmd(&cmd_with(&["PFADD", "h3"], &rev))
        .cmd(&["GET", "h3"])
        .cmd(&["PFCOUNT", "h3"])
        .cmd(&["PFDEBUG", "ENCODING", "h3"])
        .cmd(&["PFDEBUG", "DECODE", "h3"])
        .cmd(&[&b"PFDEBUG"[..], b"n\xffo\xfe", b"h3"])
        .cmd(&[&b"PFDEBUG"[..], b"n\x00o", b"h3"]);
    diff(&s);
}

#[test]
fn promotion_to_dense() {
    let mut s = Script::new("promotion_to_dense");
    // Default limit (3000 bytes): grows sparse, then dense.
    for chunk in elems("e", 3000).chunks(250) {
        s = s
            .cmd(&cmd_with(&["PFADD", "h"], chunk))
            .cmd(&["PFDEBUG", "ENCODING", "h"])
            .cmd(&["STRLEN", "h"])
            .cmd(&["GET", "h"]);
    }
    s = s.cmd(&["PFCOUNT", "h"]).cmd(&["GET", "h"]);
    // A small limit promotes early.
    s = s
        .cmd(&["CONFIG", "SET", "hll-sparse-max-bytes", "40"])
        .cmd(&["CONFIG", "GET", "hll-sparse-max-bytes"]);
    for e in elems("s", 30) {
        s = s
            .cmd(&["PFADD", "small", e.as_str()])
            .cmd(&["STRLEN", "small"])
            .cmd(&["GET", "small"]);
    }
    s = s
        .cmd(&["PFCOUNT", "small"])
        .cmd(&["CONFIG", "SET", "hll-sparse-max-bytes", "0"])
        .cmd(&["PFADD", "zero", "a"])
        .cmd(&["PFDEBUG", "ENCODING", "zero"])
        .cmd(&["GET", "zero"])
        .cmd(&["CONFIG", "SET", "hll-sparse-max-bytes", "-1"])
        .cmd(&["CONFIG", "SET", "hll-sparse-max-bytes", "1kb"])
        .cmd(&["CONFIG", "GET", "hll-sparse-max-bytes"]);
    // Registers above 32 force dense: find such elements by brute force is
    // not needed, 200k elements surely contain some.
    diff(&s);
}

#[test]
fn large_counts() {
    let mut s = Script::new("large_counts");
    for chunk in elems("big", 60000).chunks(5000) {
        s = s.cmd(&cmd_with(&["PFADD", "big"], chunk));
    }
    s = s
        .cmd(&["PFCOUNT", "big"])
        .cmd(&["GET", "big"])
        .cmd(&["PFADD", "other", "a", "b"])
        .cmd(&["PFCOUNT", "big", "other"])
        .cmd(&["PFMERGE", "m", "big", "other"])
        .cmd(&["GET", "m"])
        .cmd(&["PFCOUNT", "m"]);
    diff(&s);
}

#[test]
fn pfmerge() {
    let mut s = Script::new("pfmerge");
    s = s
        .cmd(&cmd_with(&["PFADD", "a"], &elems("a", 50)))
        .cmd(&cmd_with(&["PFADD", "b"], &elems("b", 70)))
        .cmd(&cmd_with(&["PFADD", "c"], &elems("a", 2000)))
        .text(
            r###"
PFMERGE d a b
GET d
PFCOUNT d
PFMERGE d
GET d
PFMERGE d a
GET d
PFMERGE e a b nokey
GET e
PFCOUNT e
PFMERGE f c a
PFDEBUG ENCODING f
GET f
PFMERGE a c
PFDEBUG ENCODING a
GET a
PFCOUNT a b c
PFMERGE empty nokey
GET empty
PFMERGE empty2
GET empty2
PFCOUNT empty2
SET s x
PFMERGE s a
PFMERGE d s
GET s
PFMERGE
"###,
        );
    diff(&s);
}

#[test]
fn redis_values_accepted() {
    // Values written as raw bytes (as copied from redis-server) work.
    diff_text(
        "redis_values_accepted",
        r###"
SET h "HYLL\x01\x00\x00\x00\x03\x00\x00\x00\x00\x00\x00\x00Q\x84\x80d\x8b\x80E\x91\x80W\x9d"
PFCOUNT h
GET h
PFADD h z
PFCOUNT h
GET h
SET stale "HYLL\x01\x00\x00\x00\x07\x00\x00\x00\x00\x00\x00\x80\x7f\xff"
PFCOUNT stale
GET stale
SET corrupt "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xfe"
PFCOUNT corrupt
PFADD corrupt a
PFCOUNT corrupt nokey
PFMERGE x corrupt
SET corrupt2 "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff\x80"
PFCOUNT corrupt2
PFADD corrupt2 a
SET cached "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x2a\x00\x00\x00\x00\x00\x00\x00\x7f\xfe"
PFCOUNT cached
PFDEBUG GETREG nokey
PFDEBUG FOO h
PFDEBUG ENCODING h
PFDEBUG DECODE h
PFDEBUG TODENSE h
PFDEBUG TODENSE h
PFDEBUG ENCODING h
PFDEBUG DECODE h
GET h
PFCOUNT h
PFADD g a b c
PFDEBUG GETREG g
PFDEBUG ENCODING g
GET g
SET n 1
PFDEBUG ENCODING n
SET c2 "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xfe"
PFDEBUG GETREG c2
PFDEBUG TODENSE c2
PFDEBUG DECODE c2
"###,
    );
}

#[test]
fn hll_commands_info() {
    diff_text(
        "hll_commands_info",
        r###"
COMMAND INFO pfadd pfcount pfmerge pfdebug pfselftest
COMMAND DOCS pfadd pfcount pfmerge pfdebug pfselftest        # pairs
PFSELFTEST
PFSELFTEST x
COMMAND GETKEYS PFMERGE d a b
COMMAND GETKEYS PFCOUNT a b
"###,
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
fn hll_notifications() {
    let cmds: &[&[&str]] = &[
        &["PFADD", "h"],
        &["PFADD", "h"],
        &["PFADD", "h", "a"],
        &["PFADD", "h", "a"],
        &["PFCOUNT", "h"],
        &["PFMERGE", "d", "h"],
        &["PFMERGE", "d"],
        &["PFMERGE", "e"],
        &["SET", "s", "x"],
        &["PFADD", "s", "a"],
        &["PFMERGE", "s", "h"],
    ];
    let petrel = TestServer::start(&[]);
    let got = keyspace_events(&petrel, cmds);
    let Some(redis) = RefRedis::start() else {
        return;
    };
    assert_eq!(got, keyspace_events(&redis, cmds));
}

/// PFCOUNT storing a recomputed cardinality counts as a modification for
/// WATCH; returning the cached one does not.
#[test]
fn pfcount_cache_update_touches_watch() {
    fn run(srv: &Server) -> Vec<Value> {
        let mut a = srv.raw();
        let mut b = srv.raw();
        let mut out = Vec::new();
        b.cmd(&["PFADD", "h", "x", "y"]);
        for _ in 0..2 {
            a.cmd(&["WATCH", "h"]);
            out.push(b.cmd(&["PFCOUNT", "h"]));
            a.cmd(&["MULTI"]);
            a.cmd(&["PING"]);
            out.push(a.cmd(&["EXEC"]));
        }
        out
    }
    let petrel = TestServer::start(&[]);
    let got = run(&petrel);
    let Some(redis) = RefRedis::start() else {
        return;
    };
    assert_eq!(got, run(&redis));
}

/// PFCOUNT and PFMERGE's sources are read lookups (hits/misses); PFADD and
/// PFMERGE's destination are write lookups, as in Redis.
#[test]
fn hll_hit_stats() {
    let s = Script::new("hll_hit_stats")
        .text(
            r###"
PFADD h a
PFADD h b
PFCOUNT h
PFCOUNT nokey
PFCOUNT h nokey
PFMERGE d h nokey
PFDEBUG ENCODING h
"###,
        )
        .check(&["INFO", "stats"], |p, r| {
            let f = |r: &Reply| -> Vec<String> {
                let Reply::Value(Value::Bulk(b) | Value::Verbatim { data: b, .. }) = r else {
                    return vec![format!("{r:?}")];
                };
                String::from_utf8_lossy(b)
                    .lines()
                    .filter(|l| l.starts_with("keyspace_"))
                    .map(String::from)
                    .collect()
            };
            if f(p) == f(r) {
                Ok(())
            } else {
                Err(format!("petrel {:?} redis {:?}", f(p), f(r)))
            }
        });
    diff(&s);
}

/// MurmurHash64A with Redis's HLL seed: (register, value) of an element,
/// to build adds that hit chosen registers.
fn register_of(elem: &[u8]) -> (usize, u8) {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    let mut h: u64 = 0xadc8_3b19 ^ (elem.len() as u64).wrapping_mul(M);
    let mut chunks = elem.chunks_exact(8);
    for c in &mut chunks {
        let mut k = u64::from_le_bytes(c.try_into().unwrap());
        k = k.wrapping_mul(M);
        k ^= k >> 47;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate() {
            h ^= (b as u64) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> 47;
    h = h.wrapping_mul(M);
    h ^= h >> 47;
    let reg = (h & 16383) as usize;
    let rest = (h >> 14) | (1 << 50);
    (reg, rest.trailing_zeros() as u8 + 1)
}

/// Elements for `len` consecutive registers, all with register value 1.
fn adjacent_elements(len: usize) -> Vec<String> {
    let mut by_reg: Vec<Option<String>> = vec![None; 16384];
    for i in 0..400_000 {
        let e = format!("adj{i}");
        let (r, v) = register_of(e.as_bytes());
        if v == 1 && by_reg[r].is_none() {
            by_reg[r] = Some(e);
        }
    }
    for start in 0..16384 - len {
        if by_reg[start..start + len].iter().all(|x| x.is_some()) {
            return by_reg[start..start + len]
                .iter()
                .map(|x| x.clone().unwrap())
                .collect();
        }
    }
    panic!("no run of {len} registers found");
}

/// Sparse runs Redis leaves unmerged: registers r+1..r+4 then r give
/// `VAL(1,1) VAL(1,4)` (a run of 5 cannot merge), not the canonical
/// `VAL(1,4) VAL(1,1)`; other orders merge differently again.
#[test]
fn non_canonical_sparse_runs() {
    let e = adjacent_elements(12);
    let mut s = Script::new("non_canonical_sparse_runs");
    for x in &e[1..5] {
        s = s.cmd(&["PFADD", "h", x.as_str()]);
    }
    s = s
        .cmd(&["PFADD", "h", e[0].as_str()])
        .check(&["PFDEBUG", "DECODE", "h"], |p, r| {
            let want = "v:1,1 v:1,4";
            match (p, r) {
                (Reply::Value(Value::Bulk(a)), Reply::Value(Value::Bulk(b)))
                    if a == b && String::from_utf8_lossy(a).contains(want) =>
                {
                    Ok(())
                }
                _ => Err(format!("expected equal decodes containing {want}")),
            }
        })
        .cmd(&["GET", "h"]);
    // A scrambled order over 12 adjacent registers.
    for i in [5, 0, 11, 3, 8, 1, 10, 6, 2, 9, 4, 7] {
        s = s
            .cmd(&["PFADD", "g", e[i].as_str()])
            .cmd(&["PFDEBUG", "DECODE", "g"]);
    }
    s = s.cmd(&["GET", "g"]).cmd(&["PFCOUNT", "g"]);
    diff(&s);
}

/// Random PFADD/PFMERGE/PFCOUNT over a few keys, with the sparse limit
/// changing on the way; every value is compared byte for byte (fixed seed).
#[test]
fn random_hll_ops() {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut rnd = |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    let keys = ["h1", "h2", "h3"];
    let mut s = Script::new("random_hll_ops");
    for step in 0..500 {
        let k = keys[rnd(3) as usize].to_string();
        let cmd: Vec<String> = match rnd(10) {
            0..=5 => {
                let mut c = vec!["PFADD".into(), k];
                for _ in 0..rnd(40) {
                    c.push(format!("e{}", rnd(20000)));
                }
                c
            }
            6 => {
                let mut c = vec!["PFMERGE".into(), k];
                for _ in 0..rnd(3) {
                    c.push(keys[rnd(3) as usize].into());
                }
                c
            }
            7 => {
                let mut c = vec!["PFCOUNT".into(), k];
                for _ in 0..rnd(2) {
                    c.push(keys[rnd(3) as usize].into());
                }
                c
            }
            8 if step % 50 == 8 => vec![
                "CONFIG".into(),
                "SET".into(),
                "hll-sparse-max-bytes".into(),
                (20 + rnd(3000)).to_string(),
            ],
            _ => vec!["GET".into(), k],
        };
        s = s.cmd(&cmd);
    }
    for k in keys {
        s = s.cmd(&["GET", k]).cmd(&["PFCOUNT", k]).cmd(&["GET", k]);
    }
    diff(&s);
}

/// A memory setting given no digits reads as 0 (Redis's memtoull): with
/// `hll-sparse-max-bytes ""` every HLL goes dense at once (found by the
/// differential fuzzer, whose datasets then differed after PFADD).
#[test]
fn hll_sparse_limit_of_nothing() {
    diff_text(
        "hll_sparse_limit_of_nothing",
        r#"
CONFIG SET hll-sparse-max-bytes ''
CONFIG GET hll-sparse-max-bytes
PFADD h a b c
DEBUG DIGEST-VALUE h
OBJECT ENCODING h
CONFIG SET hll-sparse-max-bytes kb
CONFIG GET hll-sparse-max-bytes
CONFIG SET hll-sparse-max-bytes 1x
CONFIG SET hll-sparse-max-bytes -1
CONFIG SET hll-sparse-max-bytes 3000
"#,
    );
}
