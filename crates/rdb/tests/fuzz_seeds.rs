//! Writes the seed corpora of the fuzz targets `rdb_load` and
//! `restore_payload` (in `fuzz/seeds/`). Run after a format change:
//! `cargo test -p rdb --test fuzz_seeds -- --ignored`.

mod common;

use common::gen::mixed_dataset;
use common::old::{old_file, records};
use common::*;
use rdb::{KeyEntry, WriteOptions};

#[test]
#[ignore]
fn write_fuzz_seeds() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds");
    let load = root.join("rdb_load");
    let restore = root.join("restore_payload");
    std::fs::create_dir_all(&load).unwrap();
    std::fs::create_dir_all(&restore).unwrap();
    let entries: Vec<KeyEntry> = mixed_dataset()
        .into_iter()
        .map(|(db, key, value, expire_ms)| KeyEntry {
            db,
            key,
            value,
            expire_ms,
            idle_secs: Some(7),
            freq: None,
        })
        .collect();
    for (name, opts) in [
        ("mixed-lzf", WriteOptions::default()),
        (
            "mixed-plain",
            WriteOptions {
                compression: false,
                checksum: false,
                packed_threshold: 1000,
            },
        ),
    ] {
        std::fs::write(load.join(name), write_all(&entries, opts)).unwrap();
    }
    for (ver, zero) in [(9, false), (6, true), (4, false)] {
        std::fs::write(load.join(format!("old-v{ver}")), old_file(ver, zero)).unwrap();
    }
    // Payload bodies (the target adds version and CRC).
    for e in &entries {
        let p = rdb::dump(&e.value, &WriteOptions::default());
        let name = String::from_utf8_lossy(&e.key).replace(':', "-");
        std::fs::write(restore.join(name), &p[..p.len() - 10]).unwrap();
    }
    for r in records() {
        let mut body = vec![r.ty];
        body.extend_from_slice(&r.body);
        std::fs::write(restore.join(r.key.replace(':', "-")), body).unwrap();
    }
}
