//! Feeds arbitrary value bytes to RESTORE's reader with a valid footer
//! (RDB version 10 and the CRC64 computed here, so the value parsers see
//! every input), and the raw bytes as a whole payload: no panic, and a
//! value that loads dumps to a payload that restores to the same value.
//! The first byte picks default or tiny encoding limits.
#![no_main]

mod common_model;

use common_model::{limits, model};
use libfuzzer_sys::fuzz_target;
use rdb::WriteOptions;

fuzz_target!(|data: &[u8]| {
    let Some((&sel, body)) = data.split_first() else {
        return;
    };
    let lim = limits(sel & 1 == 1);
    let _ = rdb::restore(body, &lim);
    let mut p = body.to_vec();
    p.extend_from_slice(&10u16.to_le_bytes());
    let crc = rdb::crc64::crc64(0, &p);
    p.extend_from_slice(&crc.to_le_bytes());
    if let Ok(v) = rdb::restore(&p, &lim) {
        let opts = WriteOptions {
            compression: sel & 2 == 2,
            ..WriteOptions::default()
        };
        let again = rdb::restore(&rdb::dump(&v, &opts), &lim).expect("our own payload restores");
        assert_eq!(model(&v), model(&again));
        assert_eq!(v.encoding_name(), again.encoding_name());
    }
});
