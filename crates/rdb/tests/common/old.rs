//! Hand-built values and files in the forms Redis 7.0 still loads but no
//! longer writes (see `old_formats.rs`), also used as fuzzing seeds.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};

use super::Model;
use collections::LpValue;
use rdb::writer::encode::{write_len, write_string};
use rdb::{types, ziplist, zipmap};

/// One hand-built value: its RDB type and body, and what it must load as.
pub struct Rec {
    pub key: &'static str,
    pub ty: u8,
    pub body: Vec<u8>,
    pub want: Model,
    /// OBJECT ENCODING under default limits.
    pub encoding: &'static str,
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

pub fn records() -> Vec<Rec> {
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
pub fn old_file(ver: u32, zero_sum: bool) -> Vec<u8> {
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
