//! Files and payloads in the forms Redis 7.0 still loads but no longer
//! writes: linked lists, text-double zsets, zipmaps, ziplists, quicklists
//! of ziplists, second-resolution expiry, version 4 files without a
//! checksum. Built by hand from the format documentation; redis-server
//! 7.0 (when installed) must accept the same bytes and see the same data.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use collections::{Limits, LpValue};
use common::*;
use rdb::writer::encode::{write_len, write_string};
use rdb::{types, ziplist, zipmap, ReadOptions, WriteOptions};

/// One hand-built value: its RDB type and body, and what it must load as.
struct Rec {
    key: &'static str,
    ty: u8,
    body: Vec<u8>,
    want: Model,
    /// OBJECT ENCODING under default limits.
    encoding: &'static str,
}

fn s(out: &mut Vec<u8>, b: &[u8]) {
    write_string(out, b, false).unwrap();
}

fn l(out: &mut Vec<u8>, n: u64) {
    write_len(out, n).unwrap();
}

fn vecs(items: &[&[u8]]) -> Vec<Vec<u8>> {
    items.iter().map(|x| x.to_vec()).collect()
}

fn records() -> Vec<Rec> {
    let mut out = Vec::new();
    let long = b"long-value-".repeat(30); // 330 bytes: 5-byte prevlen follows

    // LIST: count + strings (int-encoded, LZF, plain).
    let mut b = Vec::new();
    l(&mut b, 4);
    s(&mut b, b"a");
    s(&mut b, b"12");
    let at = b.len();
    write_string(&mut b, &long, true).unwrap();
    assert_eq!(b[at], 0xC3, "the long element is LZF-compressed");
    s(&mut b, b"");
    out.push(Rec {
        key: "old:list",
        ty: types::LIST,
        body: b,
        want: Model::List(vec![
            b"a".to_vec(),
            b"12".to_vec(),
            long.clone(),
            Vec::new(),
        ]),
        encoding: "quicklist",
    });

    // SET: integers only (-> intset) and mixed (-> hashtable in 7.0).
    let mut b = Vec::new();
    l(&mut b, 3);
    for m in [&b"3"[..], b"-70000", b"5"] {
        s(&mut b, m);
    }
    out.push(Rec {
        key: "old:set:ints",
        ty: types::SET,
        body: b,
        want: Model::Set(vecs(&[b"3", b"-70000", b"5"]).into_iter().collect()),
        encoding: "intset",
    });
    let mut b = Vec::new();
    l(&mut b, 3);
    for m in [&b"x"[..], b"1", b"yy"] {
        s(&mut b, m);
    }
    out.push(Rec {
        key: "old:set:mixed",
        ty: types::SET,
        body: b,
        want: Model::Set(vecs(&[b"x", b"1", b"yy"]).into_iter().collect()),
        encoding: "hashtable",
    });

    // ZSET with text doubles (and the special lengths for infinities).
    let mut b = Vec::new();
    l(&mut b, 4);
    s(&mut b, b"a");
    b.extend_from_slice(b"\x031.5");
    s(&mut b, b"pinf");
    b.push(254);
    s(&mut b, b"ninf");
    b.push(255);
    s(&mut b, b"neg");
    b.extend_from_slice(b"\x02-3");
    out.push(Rec {
        key: "old:zset",
        ty: types::ZSET,
        body: b,
        want: Model::Zset(vec![
            (b"ninf".to_vec(), f64::NEG_INFINITY.to_bits()),
            (b"neg".to_vec(), (-3.0f64).to_bits()),
            (b"a".to_vec(), 1.5f64.to_bits()),
            (b"pinf".to_vec(), f64::INFINITY.to_bits()),
        ]),
        encoding: "listpack",
    });

    // HASH: count + pairs; one value too long for a listpack.
    let mut b = Vec::new();
    l(&mut b, 2);
    for x in [&b"f"[..], b"1", b"g", &long] {
        s(&mut b, x);
    }
    out.push(Rec {
        key: "old:hash",
        ty: types::HASH,
        body: b,
        want: Model::Hash(BTreeMap::from([
            (b"f".to_vec(), b"1".to_vec()),
            (b"g".to_vec(), long.clone()),
        ])),
        encoding: "hashtable",
    });

    // HASH_ZIPMAP: small (listpack) and with a long value (hashtable).
    let zm = zipmap::build(
        &[(b"name", b"petrel"), (b"n", b"42"), (b"", b"empty field")],
        2,
    );
    let mut b = Vec::new();
    s(&mut b, &zm);
    out.push(Rec {
        key: "old:zipmap",
        ty: types::HASH_ZIPMAP,
        body: b,
        want: Model::Hash(BTreeMap::from([
            (b"name".to_vec(), b"petrel".to_vec()),
            (b"n".to_vec(), b"42".to_vec()),
            (b"".to_vec(), b"empty field".to_vec()),
        ])),
        encoding: "listpack",
    });
    let zm = zipmap::build(&[(b"k", &long[..])], 0);
    let mut b = Vec::new();
    s(&mut b, &zm);
    out.push(Rec {
        key: "old:zipmap:long",
        ty: types::HASH_ZIPMAP,
        body: b,
        want: Model::Hash(BTreeMap::from([(b"k".to_vec(), long.clone())])),
        encoding: "hashtable",
    });

    // LIST_ZIPLIST with every integer encoding and a long string.
    let ints = [
        0i64,
        12,
        13,
        -1,
        127,
        -128,
        1000,
        -30000,
        8_000_000,
        -8_000_000,
        2_000_000_000,
        i64::MIN,
        i64::MAX,
    ];
    let mut zl_items: Vec<LpValue<'_>> = ints.iter().map(|&i| LpValue::Int(i)).collect();
    zl_items.push(LpValue::Str(&long));
    zl_items.push(LpValue::Str(b"after-long"));
    let mut want: Vec<Vec<u8>> = ints.iter().map(|i| i.to_string().into_bytes()).collect();
    want.push(long.clone());
    want.push(b"after-long".to_vec());
    let mut b = Vec::new();
    s(&mut b, &ziplist::build(&zl_items));
    out.push(Rec {
        key: "old:ziplist",
        ty: types::LIST_ZIPLIST,
        body: b,
        want: Model::List(want),
        encoding: "quicklist",
    });

    // SET_INTSET, 32-bit members.
    let mut is = vec![4, 0, 0, 0, 3, 0, 0, 0];
    for v in [-100000i32, 2, 100000] {
        is.extend_from_slice(&v.to_le_bytes());
    }
    let mut b = Vec::new();
    s(&mut b, &is);
    out.push(Rec {
        key: "old:intset",
        ty: types::SET_INTSET,
        body: b,
        want: Model::Set(
            vecs(&[b"-100000", b"2", b"100000"])
                .into_iter()
                .collect::<BTreeSet<_>>(),
        ),
        encoding: "intset",
    });

    // ZSET_ZIPLIST: member/score pairs sorted by score, text and int scores.
    let zz = ziplist::build(&[
        LpValue::Str(b"low"),
        LpValue::Int(-5),
        LpValue::Str(b"mid"),
        LpValue::Str(b"2.25"),
        LpValue::Int(77),
        LpValue::Int(3),
    ]);
    let mut b = Vec::new();
    s(&mut b, &zz);
    out.push(Rec {
        key: "old:zsetzl",
        ty: types::ZSET_ZIPLIST,
        body: b,
        want: Model::Zset(vec![
            (b"low".to_vec(), (-5.0f64).to_bits()),
            (b"mid".to_vec(), 2.25f64.to_bits()),
            (b"77".to_vec(), 3.0f64.to_bits()),
        ]),
        encoding: "listpack",
    });

    // HASH_ZIPLIST.
    let hz = ziplist::build(&[
        LpValue::Str(b"f1"),
        LpValue::Int(1),
        LpValue::Str(b"f2"),
        LpValue::Str(b"two"),
    ]);
    let mut b = Vec::new();
    s(&mut b, &hz);
    out.push(Rec {
        key: "old:hashzl",
        ty: types::HASH_ZIPLIST,
        body: b,
        want: Model::Hash(BTreeMap::from([
            (b"f1".to_vec(), b"1".to_vec()),
            (b"f2".to_vec(), b"two".to_vec()),
        ])),
        encoding: "listpack",
    });

    // LIST_QUICKLIST: ziplist nodes, one of them empty (skipped), one LZF'd.
    let n1 = ziplist::build(&[LpValue::Str(b"q1"), LpValue::Int(2)]);
    let n2 = ziplist::build(&[]);
    let rep: Vec<Vec<u8>> = (0..40)
        .map(|i| format!("node3-element-{}", i % 4).into_bytes())
        .collect();
    let n3_items: Vec<LpValue<'_>> = rep.iter().map(|x| LpValue::Str(x)).collect();
    let n3 = ziplist::build(&n3_items);
    let mut b = Vec::new();
    l(&mut b, 3);
    s(&mut b, &n1);
    s(&mut b, &n2);
    let at = b.len();
    write_string(&mut b, &n3, true).unwrap();
    assert_eq!(b[at], 0xC3, "the third node is LZF-compressed");
    let mut want = vec![b"q1".to_vec(), b"2".to_vec()];
    want.extend(rep.iter().cloned());
    out.push(Rec {
        key: "old:quicklist",
        ty: types::LIST_QUICKLIST,
        body: b,
        want: Model::List(want),
        encoding: "quicklist",
    });
    out
}

/// A whole file of the records: version `ver`, second and millisecond
/// expiries, two databases, an aux field; no checksum before version 5,
/// zero checksum when `zero_sum`.
fn old_file(ver: u32, zero_sum: bool) -> Vec<u8> {
    let mut f = format!("REDIS{ver:04}").into_bytes();
    if ver >= 7 {
        f.push(types::OP_AUX);
        s(&mut f, b"redis-ver");
        s(&mut f, b"4.0.0");
    }
    f.push(types::OP_SELECTDB);
    l(&mut f, 0);
    for (i, r) in records().iter().enumerate() {
        if i == 0 {
            f.push(types::OP_EXPIRETIME);
            f.extend_from_slice(&2_000_000_000i32.to_le_bytes());
        }
        if i == 1 {
            f.push(types::OP_EXPIRETIME_MS);
            f.extend_from_slice(&4_102_444_800_123i64.to_le_bytes());
        }
        f.push(r.ty);
        s(&mut f, r.key.as_bytes());
        f.extend_from_slice(&r.body);
    }
    f.push(types::OP_SELECTDB);
    l(&mut f, 5);
    f.push(types::STRING);
    s(&mut f, b"db5:key");
    s(&mut f, b"db5:value");
    f.push(types::OP_EOF);
    if ver >= 5 {
        let sum = if zero_sum {
            0
        } else {
            rdb::crc64::crc64(0, &f)
        };
        f.extend_from_slice(&sum.to_le_bytes());
    }
    f
}

/// Petrel keeps small sets of strings as a listpack (Redis 7.2's
/// encoding) where 7.0 uses a hashtable.
fn petrel_encoding(r: &Rec) -> &'static str {
    if r.key == "old:set:mixed" {
        "listpack"
    } else {
        r.encoding
    }
}

fn check_loaded(loaded: &Loaded) {
    let recs = records();
    assert_eq!(loaded.entries.len(), recs.len() + 1);
    for (e, r) in loaded.entries.iter().zip(&recs) {
        assert_eq!(e.key, r.key.as_bytes());
        assert_eq!(model(&e.value), r.want, "{}", r.key);
        assert_eq!(e.value.encoding_name(), petrel_encoding(r), "{}", r.key);
        assert_eq!(e.db, 0);
    }
    assert_eq!(loaded.entries[0].expire_ms, Some(2_000_000_000_000));
    assert_eq!(loaded.entries[1].expire_ms, Some(4_102_444_800_123));
    assert!(loaded.entries[2..].iter().all(|e| e.expire_ms.is_none()));
    let last = loaded.entries.last().unwrap();
    assert_eq!((last.db, &last.key[..]), (5, &b"db5:key"[..]));
}

#[test]
fn old_files_load() {
    for (ver, zero) in [
        (9, false),
        (7, true),
        (6, false),
        (5, true),
        (4, false),
        (1, false),
    ] {
        let f = old_file(ver, zero);
        let loaded =
            load_all(&f, ReadOptions::default()).unwrap_or_else(|e| panic!("version {ver}: {e}"));
        assert_eq!(loaded.version as u32, ver);
        assert_eq!(loaded.checksum.is_some(), ver >= 5 && !zero);
        check_loaded(&loaded);
        // Every truncation fails, every changed byte is handled.
        for cut in 0..f.len() {
            assert!(
                load_all(&f[..cut], ReadOptions::default()).is_err(),
                "v{ver} cut {cut}"
            );
        }
        for i in 0..f.len() {
            let mut g = f.clone();
            g[i] ^= 0x55;
            let _ = load_all(
                &g,
                ReadOptions {
                    verify_checksum: false,
                    ..ReadOptions::default()
                },
            );
        }
    }
}

/// A DUMP payload from a hand-built body, with an older RDB version.
fn old_payload(r: &Rec, ver: u16) -> Vec<u8> {
    let mut p = vec![r.ty];
    p.extend_from_slice(&r.body);
    p.extend_from_slice(&ver.to_le_bytes());
    let crc = rdb::crc64::crc64(0, &p);
    p.extend_from_slice(&crc.to_le_bytes());
    p
}

#[test]
fn old_payloads_restore() {
    for r in records() {
        let v = rdb::restore(&old_payload(&r, 9), &Limits::default())
            .unwrap_or_else(|e| panic!("{}: {e}", r.key));
        assert_eq!(model(&v), r.want, "{}", r.key);
        assert_eq!(v.encoding_name(), petrel_encoding(&r), "{}", r.key);
    }
}

fn redis_model(red: &mut Redis, key: &[u8]) -> Model {
    let ty: String = red.cmd(&[b"TYPE", key]);
    match ty.as_str() {
        "string" => Model::Str(red.cmd(&[b"GET", key])),
        "list" => Model::List(red.cmd(&[b"LRANGE", key, b"0", b"-1"])),
        "set" => Model::Set(
            red.cmd::<Vec<Vec<u8>>>(&[b"SMEMBERS", key])
                .into_iter()
                .collect(),
        ),
        "hash" => Model::Hash(
            red.cmd::<Vec<(Vec<u8>, Vec<u8>)>>(&[b"HGETALL", key])
                .into_iter()
                .collect(),
        ),
        "zset" => {
            let v: Vec<(Vec<u8>, String)> = red.cmd(&[b"ZRANGE", key, b"0", b"-1", b"WITHSCORES"]);
            Model::Zset(
                v.into_iter()
                    .map(|(m, sc)| (m, sc.parse::<f64>().unwrap().to_bits()))
                    .collect(),
            )
        }
        t => panic!("type {t}"),
    }
}

/// redis-server 7.0 agrees on the hand-built bytes: redis-check-rdb
/// accepts the files, the server loads them with the contents and
/// encodings expected here, RESTORE takes the payloads, and the file
/// Petrel rewrites from them loads to the same DEBUG DIGEST.
#[test]
fn redis_agrees_on_old_formats() {
    if !redis_available() {
        return;
    }
    for (ver, zero) in [(9, false), (4, false), (6, true)] {
        let dir = TempDir::new("old");
        let f = old_file(ver, zero);
        std::fs::write(dir.join("dump.rdb"), &f).unwrap();
        check_rdb(&dir.join("dump.rdb"))
            .unwrap_or_else(|e| panic!("redis-check-rdb, version {ver}: {e}"));
        let mut a = Redis::start(dir.path(), &[]).unwrap();
        for r in records() {
            assert_eq!(
                redis_model(&mut a, r.key.as_bytes()),
                r.want,
                "redis-server's {} (v{ver})",
                r.key
            );
            let enc: String = a.cmd(&[b"OBJECT", b"ENCODING", r.key.as_bytes()]);
            assert_eq!(enc, r.encoding, "redis-server's encoding of {}", r.key);
            let ttl: i64 = a.cmd(&[b"TTL", r.key.as_bytes()]);
            assert_eq!(
                ttl > 0,
                r.key == "old:list" || r.key == "old:set:ints",
                "{}",
                r.key
            );
        }
        let digest_a: String = a.run("DEBUG DIGEST");

        let loaded = load_all(&f, ReadOptions::default()).unwrap();
        let out = write_all(&loaded.entries, WriteOptions::default());
        let dir_b = TempDir::new("old-b");
        std::fs::write(dir_b.join("dump.rdb"), &out).unwrap();
        check_rdb(&dir_b.join("dump.rdb")).unwrap();
        let mut b = Redis::start(dir_b.path(), &[]).unwrap();
        let digest_b: String = b.run("DEBUG DIGEST");
        assert_eq!(digest_a, digest_b, "version {ver}");

        for r in records() {
            let p = old_payload(&r, ver as u16);
            let mut k = b"restored:".to_vec();
            k.extend_from_slice(r.key.as_bytes());
            let _: () = b.cmd(&[b"RESTORE", &k, b"0", &p]);
            assert_eq!(redis_model(&mut b, &k), r.want, "RESTORE of {}", r.key);
        }
    }
}
