//! Round trips with a real redis-server 7.0, for every type and encoding:
//!
//! * file: redis-server builds the data and SAVEs; this crate reads every
//!   key, writes a new file; `redis-check-rdb` accepts it; a fresh
//!   redis-server loads it, and `DEBUG DIGEST` plus every key's
//!   `DEBUG DIGEST-VALUE`, TYPE, PTTL and OBJECT ENCODING (and OBJECT
//!   IDLETIME / FREQ under LRU / LFU policies) equal the original's;
//! * DUMP: every key's payload from redis-server is restored here, dumped
//!   again and RESTOREd into a fresh server, with the same comparisons;
//!   with `rdbcompression no` the payloads must be byte-identical wherever
//!   the order of elements is defined (everything but hashtables);
//! * streams and functions in a file are refused with a clear error.
//!
//! Skipped (with a loud notice) without redis-server, unless
//! `PETREL_REQUIRE_REDIS=1`.

mod common;

use std::collections::BTreeMap;

use collections::Limits;
use common::*;
use rdb::{ErrorKind, ReadOptions, WriteOptions};

/// Per-key facts as redis-server reports them.
#[derive(Debug, Clone, PartialEq)]
struct KeyFacts {
    ty: String,
    encoding: String,
    digest: String,
    /// PTTL rounded to seconds (-1 without TTL).
    ttl_s: i64,
    idle: Option<i64>,
    freq: Option<i64>,
}

fn big_random(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// Fills a redis-server with every type and encoding.
fn build_dataset(r: &mut Redis) {
    r.select(0);
    let _: () = r.run("DEBUG POPULATE 3000 pop 40");
    // Strings: integer boundaries, near-integers, empty, binary, LZF.
    let ints = [
        "0",
        "1",
        "-1",
        "127",
        "128",
        "-128",
        "-129",
        "255",
        "32767",
        "32768",
        "-32768",
        "-32769",
        "2147483647",
        "2147483648",
        "-2147483648",
        "-2147483649",
        "9223372036854775807",
        "-9223372036854775808",
        "9223372036854775808",
        "007",
        "-0",
        "+1",
        " 1",
        "1.5",
        "12345678901",
        "99999999999",
    ];
    for (i, v) in ints.iter().enumerate() {
        let _: () = r.cmd(&[b"SET", format!("s:int:{i}").as_bytes(), v.as_bytes()]);
    }
    let _: () = r.cmd(&[b"SET", b"s:empty", b""]);
    let bin: Vec<u8> = (0..=255u8).collect();
    let _: () = r.cmd(&[b"SET", b"s:bin", &bin]);
    let _: () = r.cmd(&[b"SET", &bin, b"binary key"]);
    let _: () = r.cmd(&[b"SET", b"", b"empty key"]);
    for n in [20usize, 21, 44, 45, 100] {
        let _: () = r.cmd(&[b"SET", format!("s:rep:{n}").as_bytes(), &vec![b'a'; n]]);
    }
    let _: () = r.cmd(&[b"SET", b"s:big:rand", &big_random(300_000, 7)]);
    let _: () = r.cmd(&[b"SET", b"s:big:rep", &b"petrel ".repeat(100_000)]);
    let _: i64 = r.run("APPEND s:append abc");
    let _: i64 = r.run("APPEND s:append def");
    let _: () = r.run("SET 12345 numeric-key");

    // Lists: small, integers of every listpack width, large (compressed
    // interior nodes: the server runs with list-compress-depth 1), plain
    // nodes for large elements.
    let _: i64 = r.run("RPUSH l:small a b c 1 2 3");
    let _: i64 = r.run(
        "RPUSH l:ints 0 127 128 -1 -4096 4095 -4097 4096 32767 32768 -32768 -32769 8388607 8388608 -8388608 -8388609 2147483647 2147483648 -2147483648 -2147483649 9223372036854775807 -9223372036854775808 007 -0",
    );
    for chunk in 0..20 {
        let mut args: Vec<Vec<u8>> = vec![b"RPUSH".to_vec(), b"l:big".to_vec()];
        for i in 0..500 {
            args.push(format!("element-{}-{}", chunk, i % 50).into_bytes());
        }
        let refs: Vec<&[u8]> = args.iter().map(|a| a.as_slice()).collect();
        let _: i64 = r.cmd(&refs);
    }
    let _: i64 = r.cmd(&[b"RPUSH", b"l:bin", &bin, b"", b"x"]);
    let _: () = r.run("DEBUG QUICKLIST-PACKED-THRESHOLD 100");
    for i in 0..30 {
        let big = if i % 3 == 0 {
            big_random(150 + i, i as u64)
        } else {
            format!("big-{i}-").repeat(30).into_bytes()
        };
        let _: i64 = r.cmd(&[b"RPUSH", b"l:plain", &big]);
        let _: i64 = r.cmd(&[b"RPUSH", b"l:plain", format!("small{i}").as_bytes()]);
    }
    let _: () = r.run("DEBUG QUICKLIST-PACKED-THRESHOLD 1073741824");

    // Sets: intsets of each width, over the intset limit, strings.
    let _: i64 = r.run("SADD set:i16 1 2 3 -5 32767");
    let _: i64 = r.run("SADD set:i32 1 70000 -70000");
    let _: i64 = r.run("SADD set:i64 1 9223372036854775807 -9223372036854775808");
    let _: i64 = r.run("SADD set:wide 1 2 5000000000");
    let _: i64 = r.run("SREM set:wide 5000000000");
    let mut args: Vec<Vec<u8>> = vec![b"SADD".to_vec(), b"set:intbig".to_vec()];
    args.extend((0..600).map(|i| (i * 7).to_string().into_bytes()));
    let refs: Vec<&[u8]> = args.iter().map(|a| a.as_slice()).collect();
    let _: i64 = r.cmd(&refs);
    let _: i64 = r.run("SADD set:str a b c 1 2");
    let mut args: Vec<Vec<u8>> = vec![b"SADD".to_vec(), b"set:strbig".to_vec()];
    args.extend((0..1000).map(|i| format!("member:{i}").into_bytes()));
    let refs: Vec<&[u8]> = args.iter().map(|a| a.as_slice()).collect();
    let _: i64 = r.cmd(&refs);
    let _: i64 = r.cmd(&[b"SADD", b"set:bin", &bin, b"", b"-0"]);
    let _: i64 = r.run("SADD set:onlyints 1 2 x");
    let _: i64 = r.run("SREM set:onlyints x");

    // Hashes: listpack, long value, many fields, integers, binary.
    let _: i64 = r.run("HSET h:small a 1 b 2 c hello 10 -5");
    let _: i64 = r.cmd(&[b"HSET", b"h:long", b"f", &[b'v'; 100]]);
    let mut args: Vec<Vec<u8>> = vec![b"HSET".to_vec(), b"h:many".to_vec()];
    for i in 0..1000 {
        args.push(format!("field:{i}").into_bytes());
        args.push(format!("{}", i * 3).into_bytes());
    }
    let refs: Vec<&[u8]> = args.iter().map(|a| a.as_slice()).collect();
    let _: i64 = r.cmd(&refs);
    let _: i64 = r.cmd(&[b"HSET", b"h:bin", &bin, &bin, b"", b""]);
    let mut args: Vec<Vec<u8>> = vec![b"HSET".to_vec(), b"h:mid".to_vec()];
    for i in 0..100 {
        args.push(format!("f{i}").into_bytes());
        args.push(format!("value number {i}").into_bytes());
    }
    let refs: Vec<&[u8]> = args.iter().map(|a| a.as_slice()).collect();
    let _: i64 = r.cmd(&refs);

    // Sorted sets: listpack with special scores, skiplist by count and by
    // member length, equal scores.
    let _: i64 = r.run("ZADD z:small 0 zero -0 negzero 1.5 a inf pinf -inf ninf 1e308 huge 3.141592653589793 pi 4611686018427387904 two62 -17 neg");
    let mut args: Vec<Vec<u8>> = vec![b"ZADD".to_vec(), b"z:many".to_vec()];
    for i in 0..300 {
        args.push(format!("{}", (i as f64) * 0.37 - 20.0).into_bytes());
        args.push(format!("m{i}").into_bytes());
    }
    let refs: Vec<&[u8]> = args.iter().map(|a| a.as_slice()).collect();
    let _: i64 = r.cmd(&refs);
    let _: i64 = r.cmd(&[b"ZADD", b"z:long", b"1", &[b'm'; 100], b"2", b"short"]);
    let _: i64 = r.run("ZADD z:lex 0 a 0 b 0 c 0 aa 0 ab");
    let _: i64 = r.cmd(&[b"ZADD", b"z:bin", b"1", &bin, b"2", b""]);

    // TTLs (far in the future so nothing expires during the test).
    let _: i64 = r.run("EXPIRE s:int:3 100000");
    let _: i64 = r.run("PEXPIRE l:small 200000123");
    let _: i64 = r.run("PEXPIREAT h:small 4102444800123");
    let _: i64 = r.run("EXPIRE z:many 3000000");
    let _: i64 = r.run("EXPIRE set:i16 5000");

    // All 16 databases, each with a few types and TTLs.
    for db in 1..16u32 {
        r.select(db);
        let _: () = r.cmd(&[
            b"SET",
            format!("db{db}:s").as_bytes(),
            format!("v{db}").as_bytes(),
        ]);
        let _: i64 = r.cmd(&[b"RPUSH", format!("db{db}:l").as_bytes(), b"x", b"y"]);
        let _: i64 = r.cmd(&[
            b"SADD",
            format!("db{db}:set").as_bytes(),
            db.to_string().as_bytes(),
        ]);
        let _: i64 = r.cmd(&[b"HSET", format!("db{db}:h").as_bytes(), b"f", b"v"]);
        let _: i64 = r.cmd(&[b"ZADD", format!("db{db}:z").as_bytes(), b"1", b"m"]);
        let _: i64 = r.cmd(&[
            b"EXPIRE",
            format!("db{db}:s").as_bytes(),
            format!("{}", 10000 + db).as_bytes(),
        ]);
        let _: i64 = r.cmd(&[
            b"PEXPIRE",
            format!("db{db}:z").as_bytes(),
            format!("{}", 20_000_000 + db).as_bytes(),
        ]);
    }
    r.select(0);
}

/// Sets LRU idle times or LFU counters on a few keys by RESTORE (the only
/// way to set them exactly).
fn set_eviction_meta(r: &mut Redis, policy: &str) {
    r.select(0);
    for (i, k) in ["s:rep:100", "l:small", "set:str", "h:small", "z:small"]
        .iter()
        .enumerate()
    {
        let payload: Vec<u8> = r.cmd(&[b"DUMP", k.as_bytes()]);
        let pttl: i64 = r.cmd(&[b"PTTL", k.as_bytes()]);
        let ttl = pttl.max(0).to_string();
        let (opt, val) = if policy.contains("lfu") {
            ("FREQ", (40 * i + 3).to_string())
        } else {
            ("IDLETIME", (1000 * i + 500).to_string())
        };
        let _: () = r.cmd(&[
            b"RESTORE",
            k.as_bytes(),
            ttl.as_bytes(),
            &payload,
            b"REPLACE",
            opt.as_bytes(),
            val.as_bytes(),
        ]);
    }
}

/// `DEBUG DIGEST-VALUE key` (an array of one digest).
fn digest_value(r: &mut Redis, k: &[u8]) -> String {
    let v: Vec<String> = r.cmd(&[b"DEBUG", b"DIGEST-VALUE", k]);
    v.into_iter().next().unwrap()
}

fn facts(r: &mut Redis, policy: &str) -> BTreeMap<(u32, Vec<u8>), KeyFacts> {
    let mut out = BTreeMap::new();
    for db in 0..16u32 {
        r.select(db);
        let keys: Vec<Vec<u8>> = r.run("KEYS *");
        for k in keys {
            // OBJECT first: the other commands do not touch the key either,
            // but keep eviction metadata reads ahead of everything.
            let idle = policy
                .contains("lru")
                .then(|| r.cmd::<i64>(&[b"OBJECT", b"IDLETIME", &k]));
            let freq = policy
                .contains("lfu")
                .then(|| r.cmd::<i64>(&[b"OBJECT", b"FREQ", &k]));
            let ty: String = r.cmd(&[b"TYPE", &k]);
            let encoding: String = r.cmd(&[b"OBJECT", b"ENCODING", &k]);
            let digest = digest_value(r, &k);
            let pttl: i64 = r.cmd(&[b"PTTL", &k]);
            let ttl_s = if pttl < 0 { pttl } else { (pttl + 500) / 1000 };
            out.insert(
                (db, k),
                KeyFacts {
                    ty,
                    encoding,
                    digest,
                    ttl_s,
                    idle,
                    freq,
                },
            );
        }
    }
    r.select(0);
    out
}

/// Compares two servers' facts; idle times within 5 s (the LRU clock
/// ticks in seconds and the servers were read moments apart), LFU
/// counters within 1 (a decay step may fall between two reads), TTLs
/// within 2 s.
fn compare_facts(
    a: &BTreeMap<(u32, Vec<u8>), KeyFacts>,
    b: &BTreeMap<(u32, Vec<u8>), KeyFacts>,
    what: &str,
) {
    let ka: Vec<_> = a.keys().collect();
    let kb: Vec<_> = b.keys().collect();
    assert_eq!(ka.len(), kb.len(), "{what}: key count");
    assert_eq!(ka, kb, "{what}: key sets");
    for (k, fa) in a {
        let fb = &b[k];
        let name = format!("{what}: db {} key {:?}", k.0, String::from_utf8_lossy(&k.1));
        assert_eq!(fa.ty, fb.ty, "{name}: TYPE");
        assert_eq!(fa.encoding, fb.encoding, "{name}: OBJECT ENCODING");
        assert_eq!(fa.digest, fb.digest, "{name}: DEBUG DIGEST-VALUE");
        assert!(
            (fa.ttl_s - fb.ttl_s).abs() <= 2,
            "{name}: PTTL {} vs {}",
            fa.ttl_s,
            fb.ttl_s
        );
        assert_eq!(fa.ttl_s < 0, fb.ttl_s < 0, "{name}: TTL presence");
        if let (Some(x), Some(y)) = (fa.idle, fb.idle) {
            assert!((x - y).abs() <= 5, "{name}: OBJECT IDLETIME {x} vs {y}");
        }
        if let (Some(x), Some(y)) = (fa.freq, fb.freq) {
            assert!((x - y).abs() <= 1, "{name}: OBJECT FREQ {x} vs {y}");
        }
    }
}

/// The encoding Petrel gives a loaded value must be Redis's, except for
/// small sets of strings, which Petrel keeps as a listpack (Redis 7.2's
/// encoding) where 7.0 has a hashtable.
fn check_petrel_encodings(loaded: &Loaded, redis: &BTreeMap<(u32, Vec<u8>), KeyFacts>) {
    for e in &loaded.entries {
        let f = &redis[&(e.db, e.key.clone())];
        let ours = e.value.encoding_name();
        if f.ty == "set" && ours == "listpack" && f.encoding == "hashtable" {
            continue;
        }
        assert_eq!(
            ours,
            f.encoding,
            "Petrel encoding of {:?}",
            String::from_utf8_lossy(&e.key)
        );
    }
}

fn limits_like_redis() -> Limits {
    Limits {
        list_compress_depth: 1,
        ..Limits::default()
    }
}

fn file_round_trip(policy: &str, compression: bool) {
    let dir_a = TempDir::new("src");
    let compress = if compression { "yes" } else { "no" };
    let cfg = [
        ("maxmemory-policy", policy),
        ("list-compress-depth", "1"),
        ("rdbcompression", compress),
    ];
    let Some(mut a) = Redis::start(dir_a.path(), &cfg) else {
        return;
    };
    build_dataset(&mut a);
    set_eviction_meta(&mut a, policy);
    // Reload so the reference is what redis-server makes of its own file.
    let _: () = a.run("DEBUG RELOAD");
    let _: () = a.run("SAVE");
    let facts_a = facts(&mut a, policy);
    let digest_a: String = a.run("DEBUG DIGEST");
    let file = std::fs::read(dir_a.join("dump.rdb")).unwrap();

    let loaded = load_all(
        &file,
        ReadOptions {
            limits: limits_like_redis(),
            input_len: Some(file.len() as u64),
            ..ReadOptions::default()
        },
    )
    .unwrap_or_else(|e| panic!("reading redis-server's file: {e}"));
    assert_eq!(loaded.version, 10);
    assert!(loaded.checksum.is_some());
    assert!(loaded
        .aux
        .iter()
        .any(|(k, v)| k == b"redis-ver" && v.starts_with(b"7.0")));
    assert_eq!(loaded.entries.len(), facts_a.len(), "every key read");
    check_petrel_encodings(&loaded, &facts_a);
    for e in &loaded.entries {
        let f = &facts_a[&(e.db, e.key.clone())];
        assert_eq!(e.expire_ms.is_some(), f.ttl_s >= 0, "TTL of {:?}", e.key);
        match policy {
            p if p.contains("lru") => assert!(e.idle_secs.is_some() && e.freq.is_none()),
            p if p.contains("lfu") => assert!(e.freq.is_some() && e.idle_secs.is_none()),
            _ => assert!(e.freq.is_none() && e.idle_secs.is_none()),
        }
    }
    // The big list's interior nodes came LZF-compressed and stay so.
    let big = loaded.entries.iter().find(|e| e.key == b"l:big").unwrap();
    let st = big.value.as_list().unwrap().ql.stats();
    assert!(
        st.nodes > 10 && st.compressed_nodes == st.nodes - 2,
        "{st:?}"
    );
    if policy.contains("lfu") {
        let f = loaded.entries.iter().find(|e| e.key == b"h:small").unwrap();
        // 123 as set by RESTORE, or 122 if a minute boundary passed (one
        // LFU decay step) between the RESTORE and the SAVE.
        assert!(matches!(f.freq, Some(122 | 123)), "{:?}", f.freq);
    }

    let out = write_all(
        &loaded.entries,
        WriteOptions {
            compression,
            ..WriteOptions::default()
        },
    );
    let dir_b = TempDir::new("dst");
    std::fs::write(dir_b.join("dump.rdb"), &out).unwrap();
    check_rdb(&dir_b.join("dump.rdb")).unwrap_or_else(|e| panic!("redis-check-rdb refused: {e}"));
    let Some(mut b) = Redis::start(dir_b.path(), &[("maxmemory-policy", policy)]) else {
        return;
    };
    let facts_b = facts(&mut b, policy);
    let digest_b: String = b.run("DEBUG DIGEST");
    compare_facts(&facts_a, &facts_b, &format!("file, {policy}"));
    assert_eq!(digest_a, digest_b, "DEBUG DIGEST");

    // And Petrel reads its own file back to the same values.
    let again = load_all(
        &out,
        ReadOptions {
            limits: limits_like_redis(),
            ..ReadOptions::default()
        },
    )
    .unwrap();
    assert_eq!(again.entries.len(), loaded.entries.len());
    for (x, y) in loaded.entries.iter().zip(&again.entries) {
        assert_eq!(
            (x.db, &x.key, x.expire_ms, x.idle_secs, x.freq),
            (y.db, &y.key, y.expire_ms, y.idle_secs, y.freq)
        );
        assert_eq!(model(&x.value), model(&y.value), "{:?}", x.key);
        assert_eq!(x.value.encoding_name(), y.value.encoding_name());
    }
}

#[test]
fn redis_file_through_petrel_noeviction() {
    file_round_trip("noeviction", true);
}

#[test]
fn redis_file_through_petrel_lru() {
    file_round_trip("allkeys-lru", true);
}

#[test]
fn redis_file_through_petrel_lfu_uncompressed() {
    file_round_trip("allkeys-lfu", false);
}

#[test]
fn dump_restore_both_ways() {
    for compression in [false, true] {
        let dir_a = TempDir::new("dump-a");
        let compress = if compression { "yes" } else { "no" };
        let cfg = [("list-compress-depth", "1"), ("rdbcompression", compress)];
        let Some(mut a) = Redis::start(dir_a.path(), &cfg) else {
            return;
        };
        build_dataset(&mut a);
        let dir_b = TempDir::new("dump-b");
        let mut b = Redis::start(dir_b.path(), &cfg).unwrap();
        let limits = limits_like_redis();
        let opts = WriteOptions {
            compression,
            packed_threshold: 100,
            ..WriteOptions::default()
        };
        let mut identical = 0;
        for db in 0..16u32 {
            a.select(db);
            b.select(db);
            let keys: Vec<Vec<u8>> = a.run("KEYS *");
            for k in keys {
                let payload: Vec<u8> = a.cmd(&[b"DUMP", &k]);
                let enc: String = a.cmd(&[b"OBJECT", b"ENCODING", &k]);
                let v = rdb::restore(&payload, &limits)
                    .unwrap_or_else(|e| panic!("restore {:?}: {e}", String::from_utf8_lossy(&k)));
                let ours = rdb::dump(&v, &opts);
                if k == b"l:plain" {
                    // Type, node count, then the first node's container:
                    // 1 = plain (its element is over the threshold), both
                    // in Redis's payload and in ours.
                    assert_eq!((payload[0], payload[2]), (18, 1));
                    assert_eq!((ours[0], ours[2]), (18, 1));
                }
                // Plain list nodes are loaded and written back as they are
                // (interior compressed ones keep Redis's LZF block), so
                // their payloads are identical too.
                if !compression && enc != "hashtable" {
                    assert_eq!(
                        ours,
                        payload,
                        "payload of {:?} ({enc})",
                        String::from_utf8_lossy(&k)
                    );
                    identical += 1;
                }
                // Redis's payload and ours, side by side in the other server.
                let mut orig = b"orig:".to_vec();
                orig.extend_from_slice(&k);
                let pttl: i64 = a.cmd(&[b"PTTL", &k]);
                let ttl = pttl.max(0).to_string();
                let _: () = b.cmd(&[b"RESTORE", &orig, ttl.as_bytes(), &payload]);
                let _: () = b.cmd(&[b"RESTORE", &k, ttl.as_bytes(), &ours]);
                let da = digest_value(&mut a, &k);
                let d1 = digest_value(&mut b, &orig);
                let d2 = digest_value(&mut b, &k);
                assert_eq!(
                    (&da, &da),
                    (&d1, &d2),
                    "digest of {:?}",
                    String::from_utf8_lossy(&k)
                );
                let e1: String = b.cmd(&[b"OBJECT", b"ENCODING", &orig]);
                let e2: String = b.cmd(&[b"OBJECT", b"ENCODING", &k]);
                assert_eq!(e1, e2, "encoding of {:?}", String::from_utf8_lossy(&k));
                let t1: String = b.cmd(&[b"TYPE", &orig]);
                let t2: String = b.cmd(&[b"TYPE", &k]);
                assert_eq!(t1, t2);
            }
        }
        if !compression {
            assert!(identical > 3000, "only {identical} identical payloads");
        }
        // A payload from a newer RDB version, a broken CRC: Redis's errors.
        let mut p = rdb::dump(&store::CompactValue::from_bytes(b"x"), &opts);
        let n = p.len();
        p[n - 10] = 11;
        assert!(matches!(
            rdb::restore(&p, &limits),
            Err(rdb::RestoreError::VersionOrChecksum)
        ));
        let e = b.cmd_err(&[b"RESTORE", b"newer", b"0", &p]);
        assert_eq!(e, "ERR DUMP payload version or checksum are wrong");
    }
}

trait CmdErr {
    fn cmd_err(&mut self, args: &[&[u8]]) -> String;
}

impl CmdErr for Redis {
    fn cmd_err(&mut self, args: &[&[u8]]) -> String {
        let mut c = redis::cmd(std::str::from_utf8(args[0]).unwrap());
        for a in &args[1..] {
            c.arg(*a);
        }
        match c.query::<redis::Value>(&mut self.con) {
            Ok(v) => panic!("expected an error, got {v:?}"),
            Err(e) => format!("{} {}", e.code().unwrap_or("?"), e.detail().unwrap_or("")),
        }
    }
}

#[test]
fn streams_and_functions_are_refused() {
    let dir = TempDir::new("refuse");
    let Some(mut r) = Redis::start(dir.path(), &[]) else {
        return;
    };
    let _: () = r.run("SET a 1");
    let _: String = r.run("XADD mystream * field value");
    let _: () = r.run("SAVE");
    let file = std::fs::read(dir.join("dump.rdb")).unwrap();
    let e = load_all(&file, ReadOptions::default()).unwrap_err();
    assert!(
        matches!(e.kind, ErrorKind::Unsupported { code: 15 | 19, .. }),
        "{e}"
    );
    assert_eq!(e.key.as_deref(), Some(&b"mystream"[..]));
    let msg = e.to_string();
    assert!(
        msg.contains("STREAM_LISTPACKS") && msg.contains("mystream") && msg.contains("offset"),
        "{msg}"
    );

    let _: i64 = r.run("DEL mystream");
    let _: String = r.cmd(&[
        b"FUNCTION",
        b"LOAD",
        b"#!lua name=mylib\nredis.register_function('f', function() return 1 end)",
    ]);
    let _: () = r.run("SAVE");
    let file = std::fs::read(dir.join("dump.rdb")).unwrap();
    let e = load_all(&file, ReadOptions::default()).unwrap_err();
    assert!(
        matches!(e.kind, ErrorKind::Unsupported { code: 245, .. }),
        "{e}"
    );
    assert!(e.to_string().contains("FUNCTION2"), "{e}");
    // With functions allowed, the library's code comes out as an item.
    let mut rd = rdb::Reader::new(
        &file[..],
        ReadOptions {
            allow_functions: true,
            ..ReadOptions::default()
        },
    )
    .unwrap();
    let mut code = None;
    let mut keys = 0;
    for item in &mut rd {
        match item.unwrap() {
            rdb::Item::Function { code: c } => code = Some(c),
            rdb::Item::Entry(_) => keys += 1,
            _ => {}
        }
    }
    assert!(code.unwrap().starts_with(b"#!lua name=mylib"));
    assert_eq!(keys, 1);
}
