//! Property tests: random values of every type and encoding, written to a
//! file (or a DUMP payload) and read back, come back equal — same content
//! (against a plain model), same encoding under the same limits, same
//! expiry, idle time and LFU counter.

mod common;

use common::gen::{build, limits, spec};
use common::*;
use proptest::prelude::*;
use rdb::{EntryMeta, Item, KeyEntry, ReadOptions, Reader, WriteOptions, Writer};

fn write_opts() -> impl Strategy<Value = WriteOptions> {
    (
        any::<bool>(),
        any::<bool>(),
        prop_oneof![Just(1usize << 30), Just(60usize)],
    )
        .prop_map(|(compression, checksum, packed_threshold)| WriteOptions {
            compression,
            checksum,
            packed_threshold,
        })
}

type Meta = (u32, Vec<u8>, Option<i64>, Option<u64>, Option<u8>);

fn meta() -> impl Strategy<Value = Meta> {
    (
        0u32..20,
        proptest::collection::vec(any::<u8>(), 0..12),
        proptest::option::of(any::<i64>()),
        proptest::option::of(prop_oneof![0u64..100, any::<u64>()]),
        proptest::option::of(any::<u8>()),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn file_round_trip(lim in limits(), opts in write_opts(),
                       items in proptest::collection::vec((meta(), spec()), 0..12)) {
        let mut entries: Vec<KeyEntry> = Vec::new();
        for ((db, key, expire_ms, idle_secs, freq), s) in &items {
            if let Some(value) = build(s, &lim) {
                entries.push(KeyEntry { db: *db, key: key.clone(), value, expire_ms: *expire_ms, idle_secs: *idle_secs, freq: *freq });
            }
        }
        // Databases in ascending order, as a snapshot writes them.
        entries.sort_by_key(|e| e.db);
        let bytes = write_all(&entries, opts);
        if !opts.checksum {
            prop_assert_eq!(&bytes[bytes.len() - 8..], &[0u8; 8]);
        }
        let back = load_all(&bytes, ReadOptions { limits: lim, input_len: Some(bytes.len() as u64), ..ReadOptions::default() }).unwrap();
        prop_assert_eq!(back.version, 10);
        prop_assert_eq!(back.checksum.is_some(), opts.checksum);
        prop_assert_eq!(back.entries.len(), entries.len());
        for (a, b) in entries.iter().zip(&back.entries) {
            prop_assert_eq!((a.db, &a.key, a.expire_ms, a.idle_secs, a.freq), (b.db, &b.key, b.expire_ms, b.idle_secs, b.freq));
            prop_assert_eq!(model(&a.value), model(&b.value));
            prop_assert_eq!(a.value.encoding_name(), b.value.encoding_name());
        }
    }

    #[test]
    fn dump_round_trip(lim in limits(), opts in write_opts(), s in spec()) {
        let Some(v) = build(&s, &lim) else { return Ok(()) };
        let payload = rdb::dump(&v, &opts);
        let back = rdb::restore(&payload, &lim).unwrap();
        prop_assert_eq!(model(&v), model(&back));
        prop_assert_eq!(v.encoding_name(), back.encoding_name());
        // Where element order is part of the encoding, dumping the restored
        // value gives the same bytes.
        if v.encoding_name() != "hashtable" {
            prop_assert_eq!(rdb::dump(&back, &opts), payload);
        }
    }
}

/// The streaming API: items arrive one by one, the offset grows, and a
/// file read from a slow reader gives the same items.
#[test]
fn items_stream_with_offsets() {
    let data = gen::mixed_dataset();
    let mut w = Writer::new(Vec::new(), WriteOptions::default()).unwrap();
    w.aux(b"redis-ver", b"7.0.15").unwrap();
    let mut last_db = None;
    for (db, k, v, ttl) in &data {
        if last_db != Some(*db) {
            w.select_db(*db).unwrap();
            w.resize_db(5, 1).unwrap();
            last_db = Some(*db);
        }
        let before = w.bytes_written();
        w.entry(
            k,
            v,
            EntryMeta {
                expire_ms: *ttl,
                idle_secs: None,
                freq: Some(9),
            },
        )
        .unwrap();
        assert!(w.bytes_written() > before);
    }
    let (bytes, n) = w.finish().unwrap();
    assert_eq!(n as usize, bytes.len());

    struct Slow<'a>(&'a [u8]);
    impl std::io::Read for Slow<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            let n = out.len().min(3).min(self.0.len());
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }
    let opts = ReadOptions {
        limits: collections::Limits {
            list_compress_depth: 1,
            ..Default::default()
        },
        ..ReadOptions::default()
    };
    let mut fast = Reader::new(&bytes[..], opts).unwrap();
    let mut slow = Reader::new(Slow(&bytes), opts).unwrap();
    let mut last_off = 0;
    let mut keys = 0;
    loop {
        let a = fast.read_item().unwrap();
        let b = slow.read_item().unwrap();
        assert!(fast.offset() > last_off);
        assert_eq!(fast.offset(), slow.offset());
        last_off = fast.offset();
        match (a, b) {
            (Item::Entry(x), Item::Entry(y)) => {
                let (db, k, v, ttl) = &data[keys];
                assert_eq!((x.db, &x.key, x.expire_ms, x.freq), (*db, k, *ttl, Some(9)));
                assert_eq!(model(&x.value), model(v));
                assert_eq!(model(&y.value), model(v));
                assert_eq!(x.value.encoding_name(), v.encoding_name());
                keys += 1;
            }
            (Item::Eof { checksum: a }, Item::Eof { checksum: b }) => {
                assert_eq!(a, b);
                assert!(a.is_some());
                break;
            }
            (Item::Aux { key, value }, Item::Aux { .. }) => {
                assert_eq!((key, value), (b"redis-ver".to_vec(), b"7.0.15".to_vec()))
            }
            (Item::SelectDb(a), Item::SelectDb(b)) => assert_eq!(a, b),
            (
                Item::ResizeDb {
                    db_size,
                    expires_size,
                },
                Item::ResizeDb { .. },
            ) => assert_eq!((db_size, expires_size), (5, 1)),
            (a, b) => panic!("different items: {a:?} / {b:?}"),
        }
    }
    assert_eq!(keys, data.len());
    assert_eq!(fast.offset(), bytes.len() as u64);
    // Nothing after EOF.
    assert!(fast.read_item().is_err());
    assert!(fast.next().is_none());
}
