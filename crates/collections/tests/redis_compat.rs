//! Byte compatibility with blocks produced by redis-server 7.0.15.
//!
//! The fixtures are the listpack / intset payloads of `DUMP` (with
//! `rdbcompression no` and `hash-max-listpack-value 100000`) after:
//!
//! ```text
//! HSET h f0 <v0> f1 <v1> ...   (values below, in order)
//! SADD s 5 -3 70000 -1099511627776 32767 -32768
//! ```

use collections::{IntSet, Listpack, ListpackHash, LpValue, PackBlock, PackHash};

fn values() -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = [
        "0",
        "127",
        "128",
        "-1",
        "-4096",
        "4095",
        "4096",
        "-32769",
        "8388608",
        "-9223372036854775808",
        "9223372036854775807",
        "abc",
        "01",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    v.push(vec![b'x'; 63]);
    v.push(vec![b'y'; 64]);
    v.push(vec![b'z'; 4095]);
    v.push(vec![b'w'; 4096]);
    for s in ["-0", "12a", "", "2147483648", "-2147483649"] {
        v.push(s.as_bytes().to_vec());
    }
    v
}

#[test]
fn hash_listpack_matches_redis() {
    let want = include_bytes!("fixtures/redis70_hash_listpack.bin");
    let mut h = ListpackHash::new();
    for (i, v) in values().iter().enumerate() {
        assert!(h.insert(format!("f{i}").as_bytes(), v));
    }
    assert_eq!(h.listpack().as_bytes(), &want[..]);

    let lp = Listpack::from_bytes(want.to_vec()).unwrap();
    let h2 = ListpackHash::from_listpack(lp).unwrap();
    for (i, v) in values().iter().enumerate() {
        assert!(h2.get(format!("f{i}").as_bytes()).unwrap().eq_bytes(v));
    }
    assert_eq!(h2.get(b"f1"), Some(LpValue::Int(127)));
}

/// The packed form (one block, no terminator) plus one 0xFF byte is the
/// listpack Redis writes for the same HSETs, so RDB can stream it.
#[test]
fn packed_hash_block_matches_redis() {
    let want = include_bytes!("fixtures/redis70_hash_listpack.bin");
    let mut h = PackHash::new();
    for (i, v) in values().iter().enumerate() {
        assert!(h.insert(format!("f{i}").as_bytes(), v));
    }
    assert_eq!(h.block().bytes(), &want[..want.len() - 1]);
    assert_eq!(h.block().to_listpack_bytes(), want.to_vec());
    let b = PackBlock::from_listpack_bytes(want).unwrap();
    assert_eq!(&b, h.block());
}

#[test]
fn intset_matches_redis() {
    let want = include_bytes!("fixtures/redis70_intset.bin");
    let mut s = IntSet::new();
    for v in [5, -3, 70000, -1_099_511_627_776, 32767, -32768] {
        assert!(s.insert(v));
    }
    assert_eq!(s.as_bytes(), &want[..]);
    assert!(IntSet::from_bytes(want.to_vec()).is_ok());
}

/// `ZADD z 1.5 a 0.1 b 3 c -inf d 1e300 e -2.5 f 123456789012345678 g`
#[test]
fn zset_listpack_matches_redis() {
    use collections::ListpackZset;
    let want = include_bytes!("fixtures/redis70_zset_listpack.bin");
    let mut z = ListpackZset::new();
    for (s, m) in [
        (1.5, "a"),
        (0.1, "b"),
        (3.0, "c"),
        (f64::NEG_INFINITY, "d"),
        (1e300, "e"),
        (-2.5, "f"),
        (123456789012345678.0, "g"),
    ] {
        z.insert(m.as_bytes(), s);
    }
    assert_eq!(z.listpack().as_bytes(), &want[..]);
    let z2 = ListpackZset::from_listpack(Listpack::from_bytes(want.to_vec()).unwrap()).unwrap();
    assert_eq!(z2.score(b"b"), Some(0.1));
    assert_eq!(z2.score(b"e"), Some(1e300));
}
