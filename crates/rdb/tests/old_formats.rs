//! Files and payloads in the forms Redis 7.0 still loads but no longer
//! writes: linked lists, text-double zsets, zipmaps, ziplists, quicklists
//! of ziplists, second-resolution expiry, version 4 files without a
//! checksum. Built by hand from the format documentation; redis-server
//! 7.0 (when installed) must accept the same bytes and see the same data.

mod common;

use collections::Limits;
use common::old::{old_file, records, Rec};
use common::*;
use rdb::{ReadOptions, WriteOptions};

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

/// Version 11 and 12 files (Redis 7.2 / 7.4, Valkey 8): listpack sets and
/// slot info load; hashes with field expiry are refused by name.
#[test]
fn newer_files() {
    use collections::Listpack;
    use rdb::types;
    use rdb::writer::encode::{write_len, write_string};
    let s = |f: &mut Vec<u8>, b: &[u8]| write_string(f, b, false).unwrap();
    let lp = |items: &[&[u8]]| {
        let mut lp = Listpack::new();
        for i in items {
            lp.push_back(i);
        }
        lp.into_bytes()
    };
    for ver in [11u32, 12] {
        let mut f = format!("REDIS{ver:04}").into_bytes();
        f.push(types::OP_SELECTDB);
        write_len(&mut f, 0).unwrap();
        if ver == 12 {
            f.push(types::OP_SLOT_INFO);
            for n in [866u64, 2, 0] {
                write_len(&mut f, n).unwrap();
            }
        }
        f.push(types::SET_LISTPACK);
        s(&mut f, b"lpset");
        s(&mut f, &lp(&[b"a", b"17", b"bcd"]));
        let many: Vec<Vec<u8>> = (0..200).map(|i| format!("m{i}").into_bytes()).collect();
        let refs: Vec<&[u8]> = many.iter().map(|m| m.as_slice()).collect();
        f.push(types::SET_LISTPACK);
        s(&mut f, b"bigset");
        s(&mut f, &lp(&refs));
        let ok_len = f.len();
        f.push(types::OP_EOF);
        let sum = rdb::crc64::crc64(0, &f);
        f.extend_from_slice(&sum.to_le_bytes());
        let mut r = rdb::Reader::new(&f[..], ReadOptions::default()).unwrap();
        assert_eq!(r.version() as u32, ver);
        let mut sets = Vec::new();
        let mut slot = None;
        for item in &mut r {
            match item.unwrap() {
                rdb::Item::Entry(e) => {
                    sets.push((e.key.clone(), model(&e.value), e.value.encoding_name()))
                }
                rdb::Item::SlotInfo {
                    slot: s,
                    slot_size,
                    expires_slot_size,
                } => slot = Some((s, slot_size, expires_slot_size)),
                _ => {}
            }
        }
        assert_eq!(
            sets[0].1,
            Model::Set(
                [b"a".to_vec(), b"17".to_vec(), b"bcd".to_vec()]
                    .into_iter()
                    .collect()
            )
        );
        assert_eq!(sets[0].2, "listpack");
        // Over set-max-listpack-entries (128): a hashtable.
        assert_eq!(sets[1].2, "hashtable");
        assert_eq!(slot, (ver == 12).then_some((866, 2, 0)));

        // A Redis 7.4 hash with field expiry: refused, naming key and type.
        let mut g = f[..ok_len].to_vec();
        g.push(types::HASH_LISTPACK_EX);
        s(&mut g, b"ttlhash");
        let e = load_all(&g, ReadOptions::default()).unwrap_err();
        let m = e.to_string();
        assert!(
            m.contains("HASH_LISTPACK_EX") && m.contains("ttlhash") && m.contains("field expiry"),
            "{m}"
        );
        assert_eq!(e.offset as usize, ok_len);
    }
    // Version 13 is not known.
    assert!(rdb::Reader::new(&b"REDIS0013"[..], ReadOptions::default()).is_err());
}
