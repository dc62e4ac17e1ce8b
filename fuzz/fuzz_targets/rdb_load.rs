//! Feeds arbitrary bytes to the RDB file reader (checksum not verified, so
//! damage reaches every parser): no panic, no runaway allocation, and
//! whatever loads is written back by the writer and reads back equal.
//! The first byte picks default or tiny encoding limits.
#![no_main]

mod common_model;

use common_model::{limits, model};
use libfuzzer_sys::fuzz_target;
use rdb::{EntryMeta, Item, ReadOptions, Reader, WriteOptions, Writer};

fuzz_target!(|data: &[u8]| {
    let Some((&sel, file)) = data.split_first() else {
        return;
    };
    let opts = ReadOptions {
        limits: limits(sel & 1 == 1),
        verify_checksum: false,
        input_len: (sel & 2 == 2).then_some(file.len() as u64),
        ..ReadOptions::default()
    };
    let Ok(mut r) = Reader::new(file, opts) else {
        return;
    };
    let mut entries = Vec::new();
    loop {
        match r.read_item() {
            Ok(Item::Entry(e)) => entries.push(e),
            Ok(Item::Eof { .. }) => break,
            Ok(_) => {}
            Err(_) => return,
        }
    }
    // Everything loaded can be written and read back to the same values.
    let mut w = Writer::new(Vec::new(), WriteOptions::default()).unwrap();
    for e in &entries {
        w.select_db(e.db).unwrap();
        let meta = EntryMeta {
            expire_ms: e.expire_ms,
            idle_secs: e.idle_secs,
            freq: e.freq,
        };
        w.entry(&e.key, &e.value, meta).unwrap();
    }
    let (out, _) = w.finish().unwrap();
    let mut r2 = Reader::new(
        &out[..],
        ReadOptions {
            limits: opts.limits,
            ..ReadOptions::default()
        },
    )
    .unwrap();
    let mut i = 0;
    loop {
        match r2.read_item().expect("our own file reads back") {
            Item::Entry(e) => {
                let a = &entries[i];
                assert_eq!(
                    (a.db, &a.key, a.expire_ms, a.idle_secs, a.freq),
                    (e.db, &e.key, e.expire_ms, e.idle_secs, e.freq)
                );
                assert_eq!(model(&a.value), model(&e.value));
                i += 1;
            }
            Item::Eof { .. } => break,
            _ => {}
        }
    }
    assert_eq!(i, entries.len());
});
