//! Broken inputs: truncated files and payloads are errors at every length,
//! changed bytes never panic, and hand-made corrupt values get the error
//! they deserve (with an offset and the key).

mod common;

use collections::Limits;
use common::gen::mixed_dataset;
use common::*;
use rdb::writer::encode::{write_len, write_string};
use rdb::{types, ErrorKind, KeyEntry, ReadOptions, RestoreError, WriteOptions};
use store::CompactValue;

fn lim() -> Limits {
    Limits {
        list_compress_depth: 1,
        ..Limits::default()
    }
}

fn mixed_file(opts: WriteOptions) -> Vec<u8> {
    let entries: Vec<KeyEntry> = mixed_dataset()
        .into_iter()
        .map(|(db, key, value, expire_ms)| KeyEntry {
            db,
            key,
            value,
            expire_ms,
            idle_secs: Some(3),
            freq: None,
        })
        .collect();
    write_all(&entries, opts)
}

fn read_opts(verify: bool) -> ReadOptions {
    ReadOptions {
        limits: lim(),
        verify_checksum: verify,
        ..ReadOptions::default()
    }
}

#[test]
fn every_truncation_of_a_file_is_an_error() {
    for opts in [
        WriteOptions::default(),
        WriteOptions {
            compression: false,
            packed_threshold: 1000,
            ..WriteOptions::default()
        },
    ] {
        let file = mixed_file(opts);
        assert!(load_all(&file, read_opts(true)).is_ok());
        for cut in 0..file.len() {
            let e = load_all(&file[..cut], read_opts(true))
                .expect_err("a truncated file must not load");
            assert!(e.is_truncated(), "cut at {cut}: {e}");
            assert!(e.offset <= cut as u64, "cut at {cut}: offset {}", e.offset);
            // The same with the length known up front.
            let mut o = read_opts(true);
            o.input_len = Some(cut as u64);
            assert!(load_all(&file[..cut], o).is_err());
        }
    }
}

fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

#[test]
fn changed_bytes_never_panic() {
    let file = mixed_file(WriteOptions::default());
    let mut failed = 0;
    for i in 0..file.len() {
        for x in [0x01u8, 0x80, 0xFF, 0x3C] {
            let mut f = file.clone();
            f[i] ^= x;
            // Without the checksum every parser sees the damage.
            failed += load_all(&f, read_opts(false)).is_err() as usize;
            // With it, any accepted change must have kept the CRC equal,
            // i.e. none: one changed byte always changes a CRC64.
            if i + 8 < f.len() {
                assert!(
                    load_all(&f, read_opts(true)).is_err(),
                    "byte {i} ^ {x:#x} passed the checksum"
                );
            }
        }
    }
    assert!(
        failed > file.len(),
        "damage mostly detected without checksum ({failed})"
    );
    // Random multi-byte damage, inserted and deleted bytes.
    let mut seed = 0x9E3779B97F4A7C15u64;
    for _ in 0..3000 {
        let mut f = file.clone();
        for _ in 0..(xorshift(&mut seed) % 6 + 1) {
            let p = (xorshift(&mut seed) as usize) % f.len();
            match xorshift(&mut seed) % 3 {
                0 => f[p] = xorshift(&mut seed) as u8,
                1 => {
                    f.remove(p);
                }
                _ => f.insert(p, xorshift(&mut seed) as u8),
            }
        }
        let _ = load_all(&f, read_opts(false));
    }
}

/// A payload with a valid footer around `body`.
fn payload(body: &[u8], version: u16) -> Vec<u8> {
    let mut p = body.to_vec();
    p.extend_from_slice(&version.to_le_bytes());
    let crc = rdb::crc64::crc64(0, &p);
    p.extend_from_slice(&crc.to_le_bytes());
    p
}

#[test]
fn payloads_truncated_or_damaged() {
    for (_, key, v, _) in mixed_dataset() {
        for opts in [
            WriteOptions::default(),
            WriteOptions {
                compression: false,
                ..WriteOptions::default()
            },
        ] {
            let p = rdb::dump(&v, &opts);
            assert!(rdb::restore(&p, &lim()).is_ok());
            for cut in 0..p.len() {
                assert!(
                    rdb::restore(&p[..cut], &lim()).is_err(),
                    "{key:?} cut at {cut}"
                );
            }
            for i in 0..p.len() {
                let mut q = p.clone();
                q[i] ^= 0x41;
                assert!(
                    matches!(
                        rdb::restore(&q, &lim()),
                        Err(RestoreError::VersionOrChecksum)
                    ),
                    "{key:?}: byte {i} changed, footer still accepted"
                );
            }
            // Damage inside the value with a recomputed footer reaches the
            // value parsers: any outcome but a panic.
            let body = &p[..p.len() - 10];
            for i in 0..body.len() {
                for x in [0x01u8, 0x80, 0xFF] {
                    let mut b = body.to_vec();
                    b[i] ^= x;
                    let _ = rdb::restore(&payload(&b, 10), &lim());
                }
                let _ = rdb::restore(&payload(&body[..i], 10), &lim());
            }
        }
    }
}

#[test]
fn payload_footer_rules() {
    let v = CompactValue::from_bytes(b"hello");
    let p = rdb::dump(&v, &WriteOptions::default());
    assert_eq!(p[p.len() - 10..p.len() - 8], [10, 0]);
    // Older versions are accepted, newer ones are not.
    let body = &p[..p.len() - 10];
    assert!(rdb::restore(&payload(body, 6), &lim()).is_ok());
    let e = rdb::restore(&payload(body, 11), &lim()).unwrap_err();
    assert!(matches!(e, RestoreError::VersionOrChecksum));
    assert_eq!(
        e.redis_message(),
        "ERR DUMP payload version or checksum are wrong"
    );
    assert!(matches!(
        rdb::restore(&p[..9], &lim()),
        Err(RestoreError::VersionOrChecksum)
    ));
    // Bytes after the value (before the footer) are ignored, as in Redis.
    let mut b = body.to_vec();
    b.extend_from_slice(b"trailing");
    assert!(rdb::restore(&payload(&b, 10), &lim()).is_ok());
}

fn bad_value(body: &[u8]) -> rdb::Error {
    match rdb::restore(&payload(body, 10), &lim()) {
        Err(RestoreError::BadData(e)) => {
            assert_eq!(
                RestoreError::BadData(rdb::Error::new(ErrorKind::Signature, 0)).redis_message(),
                "ERR Bad data format"
            );
            e
        }
        other => panic!("expected bad data, got {other:?}"),
    }
}

fn s(out: &mut Vec<u8>, b: &[u8]) {
    write_string(out, b, false).unwrap();
}

fn l(out: &mut Vec<u8>, n: u64) {
    write_len(out, n).unwrap();
}

/// Listpack bytes of `items` (built by Petrel's listpack).
fn lp(items: &[&[u8]]) -> Vec<u8> {
    let mut lp = collections::Listpack::new();
    for i in items {
        lp.push_back(i);
    }
    lp.as_bytes().to_vec()
}

#[test]
fn hand_made_corrupt_values() {
    let msg = |e: rdb::Error| e.to_string();
    // Duplicate set member.
    let mut b = vec![types::SET];
    l(&mut b, 3);
    s(&mut b, b"a");
    s(&mut b, b"b");
    s(&mut b, b"a");
    assert!(msg(bad_value(&b)).contains("duplicate set members"));
    // Duplicate in an intset-bound SET of integers.
    let mut b = vec![types::SET];
    l(&mut b, 2);
    s(&mut b, b"7");
    s(&mut b, b"7");
    assert!(msg(bad_value(&b)).contains("duplicate set members"));
    // Duplicate hash field, in both encodings' paths.
    for n in [2u64, 600] {
        let mut b = vec![types::HASH];
        l(&mut b, n);
        for i in 0..n {
            let f = if i == n - 1 {
                "f0".to_string()
            } else {
                format!("f{i}")
            };
            s(&mut b, f.as_bytes());
            s(&mut b, b"v");
        }
        assert!(msg(bad_value(&b)).contains("duplicate hash fields"), "{n}");
    }
    // NaN score (binary and text), duplicate zset member.
    let mut b = vec![types::ZSET_2];
    l(&mut b, 1);
    s(&mut b, b"m");
    b.extend_from_slice(&f64::NAN.to_le_bytes());
    assert!(msg(bad_value(&b)).contains("NaN"));
    let mut b = vec![types::ZSET];
    l(&mut b, 1);
    s(&mut b, b"m");
    b.push(253);
    assert!(msg(bad_value(&b)).contains("NaN"));
    let mut b = vec![types::ZSET_2];
    l(&mut b, 2);
    for _ in 0..2 {
        s(&mut b, b"m");
        b.extend_from_slice(&1.0f64.to_le_bytes());
    }
    assert!(msg(bad_value(&b)).contains("duplicate zset"));
    // Intset: unsorted, empty, bad width.
    let mut is = vec![2, 0, 0, 0, 2, 0, 0, 0];
    is.extend_from_slice(&[5, 0, 1, 0]);
    let mut b = vec![types::SET_INTSET];
    s(&mut b, &is);
    assert!(msg(bad_value(&b)).contains("intset"));
    let mut b = vec![types::SET_INTSET];
    s(&mut b, &[2, 0, 0, 0, 0, 0, 0, 0]);
    assert!(msg(bad_value(&b)).contains("intset"));
    let mut b = vec![types::SET_INTSET];
    s(&mut b, &[3, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0]);
    assert!(msg(bad_value(&b)).contains("intset"));
    // Listpacks: odd hash, duplicate set member, unsorted zset, bad backlen.
    let mut b = vec![types::HASH_LISTPACK];
    s(&mut b, &lp(&[b"f", b"v", b"g"]));
    assert!(msg(bad_value(&b)).contains("odd"));
    let mut f = b"REDIS0011".to_vec();
    f.push(types::SET_LISTPACK);
    s(&mut f, b"k");
    s(&mut f, &lp(&[b"a", b"b", b"a"]));
    let e = load_all(&f, read_opts(true)).unwrap_err();
    assert!(msg(e).contains("duplicate set members"));
    let mut b = vec![types::ZSET_LISTPACK];
    s(&mut b, &lp(&[b"a", b"2", b"b", b"1"]));
    assert!(msg(bad_value(&b)).contains("sorted"));
    let mut bad = lp(&[b"abc", b"d"]);
    bad[10] = 9; // backlen of "abc"
    let mut b = vec![types::LIST_QUICKLIST_2];
    l(&mut b, 1);
    l(&mut b, 2);
    s(&mut b, &bad);
    assert!(msg(bad_value(&b)).contains("listpack integrity"));
    // Quicklist: unknown container, empty node.
    let mut b = vec![types::LIST_QUICKLIST_2];
    l(&mut b, 1);
    l(&mut b, 3);
    s(&mut b, &lp(&[b"a"]));
    assert!(msg(bad_value(&b)).contains("container 3"));
    let mut b = vec![types::LIST_QUICKLIST_2];
    l(&mut b, 1);
    l(&mut b, 1);
    s(&mut b, b"");
    assert!(msg(bad_value(&b)).contains("empty quicklist node"));
    // An LZF string that lies about its size; a broken LZF stream.
    let e = bad_value(&[types::STRING, 0xC3, 0x02, 0x80, 0x40, 0, 0, 0, 1, b'a']);
    assert!(msg(e).contains("cannot hold"));
    let e = bad_value(&[types::STRING, 0xC3, 0x02, 0x05, 0x20, 0x00]);
    assert!(msg(e).contains("LZF"));
    // Unknown string encoding, unknown length encoding, unknown type.
    assert!(msg(bad_value(&[types::STRING, 0xC5])).contains("string encoding"));
    assert!(msg(bad_value(&[types::STRING, 0x85])).contains("length encoding"));
    assert!(msg(bad_value(&[8, 0])).contains("unknown value type 8"));
    // Empty collections.
    let e = bad_value(&[types::LIST, 0]);
    assert!(msg(e).contains("empty"));
    // A listpack set (version 11) cannot come in a version-10 payload.
    let mut b = vec![types::SET_LISTPACK];
    s(&mut b, &lp(&[b"a"]));
    assert!(msg(bad_value(&b)).contains("newer than RDB version 10"));
    // Streams: node keys, counts against the nodes, groups and PELs.
    let stream = |nodes: &[(&[u8], &[u8])], len: u64, tail: &[u8]| {
        let mut b = vec![types::STREAM_LISTPACKS_2];
        l(&mut b, nodes.len() as u64);
        for (k, v) in nodes {
            s(&mut b, k);
            s(&mut b, v);
        }
        l(&mut b, len);
        for n in [9, 9, 0, 0, 0, 0] {
            l(&mut b, n); // last, first, max deleted IDs
        }
        l(&mut b, len); // entries added
        b.extend_from_slice(tail);
        b
    };
    let e = bad_value(&stream(&[(b"abc", b"x")], 1, &[0]));
    assert!(msg(e).contains("not the size of a stream ID"));
    let e = bad_value(&stream(&[], 5, &[0]));
    assert!(
        msg(e).contains("length"),
        "{}",
        msg(bad_value(&stream(&[], 5, &[0])))
    );
    let key = [0u8; 16];
    let e = bad_value(&stream(&[(&key, &lp(&[b"a"]))], 1, &[0]));
    assert!(matches!(e.kind, ErrorKind::Corrupt(_)), "{e}");
    // Two groups of one name.
    let mut groups = Vec::new();
    l(&mut groups, 2);
    for _ in 0..2 {
        s(&mut groups, b"g");
        l(&mut groups, 0);
        l(&mut groups, 0);
        l(&mut groups, 0);
        l(&mut groups, 0); // empty PEL
        l(&mut groups, 0); // no consumers
    }
    let e = bad_value(&stream(&[], 0, &groups));
    assert!(msg(e).contains("Duplicated consumer group name"));
    // A consumer's pending entry missing from the group's PEL.
    let mut g = Vec::new();
    l(&mut g, 1);
    s(&mut g, b"g");
    l(&mut g, 0);
    l(&mut g, 0);
    l(&mut g, 0);
    l(&mut g, 0); // empty global PEL
    l(&mut g, 1); // one consumer
    s(&mut g, b"c");
    g.extend_from_slice(&0i64.to_le_bytes());
    l(&mut g, 1);
    g.extend_from_slice(&[0u8; 16]);
    let e = bad_value(&stream(&[], 0, &g));
    assert!(msg(e).contains("not found in group global PEL"));
    // An empty stream with a group and a consumer loads.
    let mut ok = Vec::new();
    l(&mut ok, 1);
    s(&mut ok, b"g");
    for _ in 0..4 {
        l(&mut ok, 0);
    }
    l(&mut ok, 1);
    s(&mut ok, b"c");
    ok.extend_from_slice(&5i64.to_le_bytes());
    l(&mut ok, 0);
    let v = rdb::restore(&payload(&stream(&[], 0, &ok), 10), &lim()).unwrap();
    assert_eq!(v.kind(), store::Kind::Stream);
    // Modules: refused, naming the type.
    let e = bad_value(&[types::MODULE_2, 0]);
    assert!(
        matches!(e.kind, ErrorKind::Unsupported { code: 7, .. }),
        "{e}"
    );
}

#[test]
fn file_level_errors() {
    let file = mixed_file(WriteOptions::default());
    let mut f = file.clone();
    f[0] = b'X';
    assert!(matches!(
        load_all(&f, read_opts(true)).unwrap_err().kind,
        ErrorKind::Signature
    ));
    let mut f = file.clone();
    f[5..9].copy_from_slice(b"0013");
    assert!(matches!(
        load_all(&f, read_opts(true)).unwrap_err().kind,
        ErrorKind::Version(13)
    ));
    f[5..9].copy_from_slice(b"0000");
    assert!(matches!(
        load_all(&f, read_opts(true)).unwrap_err().kind,
        ErrorKind::Version(0)
    ));
    f[5..9].copy_from_slice(b"00x1");
    assert!(load_all(&f, read_opts(true)).is_err());
    // A wrong checksum: refused when checked, accepted when not; a zero
    // checksum is never checked.
    let mut f = file.clone();
    let n = f.len();
    f[n - 1] ^= 1;
    let e = load_all(&f, read_opts(true)).unwrap_err();
    assert!(matches!(e.kind, ErrorKind::Checksum { .. }));
    assert_eq!(e.offset as usize, n - 8);
    assert!(load_all(&f, read_opts(false)).is_ok());
    f[n - 8..].fill(0);
    assert!(load_all(&f, read_opts(true)).unwrap().checksum.is_none());
    // Unknown record type, with the offset of the byte.
    let mut f = file[..9].to_vec();
    f.push(100);
    let e = load_all(&f, read_opts(true)).unwrap_err();
    assert_eq!(e.offset, 9);
    assert!(e.to_string().contains("unknown record type 100"), "{e}");
    // Module aux data and module values name the module.
    let mut id = 0u64;
    for c in b"mymodule1" {
        let cs = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        id = id << 6 | cs.iter().position(|x| x == c).unwrap() as u64;
    }
    id = id << 10 | 2;
    let mut f = file[..9].to_vec();
    f.push(types::OP_MODULE_AUX);
    write_len(&mut f, id).unwrap();
    let e = load_all(&f, read_opts(true)).unwrap_err();
    assert!(e.to_string().contains("'mymodule1'"), "{e}");
    let mut f = file[..9].to_vec();
    f.push(types::MODULE_2);
    s(&mut f, b"modkey");
    write_len(&mut f, id).unwrap();
    let e = load_all(&f, read_opts(true)).unwrap_err();
    let m = e.to_string();
    assert!(
        m.contains("'mymodule1'") && m.contains("modkey") && m.contains("offset 9"),
        "{m}"
    );
    // A corrupt value names its key and its offset.
    let mut f = file[..9].to_vec();
    f.push(types::SET);
    s(&mut f, b"the-key");
    l(&mut f, 2);
    s(&mut f, b"x");
    let at = f.len();
    s(&mut f, b"x");
    f.push(types::OP_EOF);
    f.extend_from_slice(&[0; 8]);
    let e = load_all(&f, read_opts(true)).unwrap_err();
    assert_eq!(e.key.as_deref(), Some(&b"the-key"[..]));
    assert_eq!(e.offset, at as u64);
}

/// A Redis 5..6.2 stream (`STREAM_LISTPACKS`, no first ID, max deleted ID,
/// entries added or entries read): the 7.0 fields are derived on load.
#[test]
fn stream_v1_loads_with_derived_fields() {
    use collections::stream::{AddId, NodeLimits, Stream, StreamId};
    let mut st = Stream::new();
    for i in 1..=5u64 {
        st.add(
            AddId::Explicit(StreamId::new(i, 0)),
            &[b"f".as_slice(), b"v"],
            0,
            NodeLimits::default(),
        )
        .unwrap();
    }
    st.delete(&[StreamId::new(1, 0)]);
    let mut b = vec![types::STREAM_LISTPACKS];
    let nodes: Vec<(StreamId, Vec<u8>)> = st.nodes().map(|(k, v)| (k, v.to_vec())).collect();
    l(&mut b, nodes.len() as u64);
    for (k, v) in &nodes {
        s(&mut b, &k.to_be_bytes());
        s(&mut b, v);
    }
    l(&mut b, 4); // length
    l(&mut b, 5);
    l(&mut b, 0); // last ID 5-0
    l(&mut b, 1); // one group
    s(&mut b, b"g");
    l(&mut b, 3);
    l(&mut b, 0); // last delivered 3-0
    l(&mut b, 1); // PEL: 3-0
    b.extend_from_slice(&StreamId::new(3, 0).to_be_bytes());
    b.extend_from_slice(&1000i64.to_le_bytes());
    l(&mut b, 2);
    l(&mut b, 1); // one consumer owning it
    s(&mut b, b"c");
    b.extend_from_slice(&900i64.to_le_bytes());
    l(&mut b, 1);
    b.extend_from_slice(&StreamId::new(3, 0).to_be_bytes());
    let v = rdb::restore(&payload(&b, 10), &lim()).unwrap();
    let got = v.as_stream().unwrap();
    assert_eq!(got.len(), 4);
    assert_eq!(got.first_id(), StreamId::new(2, 0));
    assert_eq!(got.max_deleted_id(), StreamId::MIN);
    assert_eq!(got.entries_added(), 4);
    let g = got.group(b"g").unwrap();
    assert_eq!(g.pending_len(), 1);
    assert_eq!(g.consumer(b"c").unwrap().seen_time(), 900);
    assert_eq!(g.nack(StreamId::new(3, 0)).unwrap().delivery_count, 2);
    // Written back as 7.0 writes it.
    assert_eq!(
        rdb::dump(&v, &rdb::WriteOptions::default())[0],
        types::STREAM_LISTPACKS_2
    );
}
