//! Shared pieces of the persistence tests: a dataset with every type and
//! encoding Redis 7.0 writes (and the edge values of each), and helpers
//! that describe a server's whole keyspace key by key so two servers can
//! be compared after a save and a load.

use std::collections::BTreeMap;
use std::time::Duration;

use super::*;

/// Commands building the dataset, database by database (`SELECT` first).
/// Runs the same on petrel and redis-server.
pub fn dataset_commands() -> Vec<Vec<Vec<u8>>> {
    let mut cmds: Vec<Vec<Vec<u8>>> = Vec::new();
    fn c(cmds: &mut Vec<Vec<Vec<u8>>>, args: &[&[u8]]) {
        cmds.push(args.iter().map(|a| a.to_vec()).collect());
    }
    c(&mut cmds, &[b"SELECT", b"0"]);
    // Strings: integers at every encoding boundary, non-canonical numbers,
    // empty, binary, compressible and incompressible long values.
    let ints = [
        "0",
        "1",
        "-1",
        "127",
        "128",
        "-128",
        "-129",
        "255",
        "256",
        "32767",
        "32768",
        "-32768",
        "-32769",
        "65535",
        "2147483647",
        "2147483648",
        "-2147483648",
        "-2147483649",
        "4294967296",
        "9223372036854775807",
        "-9223372036854775808",
        "9223372036854775808",
        "007",
        "+1",
        "1.5",
        " 1",
        "12345678901",
    ];
    for (i, v) in ints.iter().enumerate() {
        c(
            &mut cmds,
            &[b"SET", format!("int:{i}").as_bytes(), v.as_bytes()],
        );
    }
    c(&mut cmds, &[b"SET", b"empty", b""]);
    c(&mut cmds, &[b"SET", b"bin", b"\x00\xff\r\n\x01binary\x00"]);
    c(&mut cmds, &[b"SET", b"", b"empty key name"]);
    c(&mut cmds, &[b"SET", b"emb44", &[b'e'; 44]]);
    c(&mut cmds, &[b"SET", b"raw45", &[b'r'; 45]]);
    c(
        &mut cmds,
        &[b"SET", b"compressible", "abcdefgh".repeat(600).as_bytes()],
    );
    let noise: Vec<u8> = (0..3000u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    c(&mut cmds, &[b"SET", b"noise", &noise]);
    c(&mut cmds, &[b"SET", b"big", &vec![b'x'; 300_000]]);
    c(&mut cmds, &[b"SETBIT", b"bitmap", b"100000", b"1"]);
    c(&mut cmds, &[b"PFADD", b"hll", b"a", b"b", b"c"]);
    // Lists: a listpack, multi-node quicklists of small, large and mixed
    // elements, integers at the listpack boundaries.
    c(
        &mut cmds,
        &[b"RPUSH", b"list:small", b"a", b"1", b"-5", b"", b"\x00x"],
    );
    let mut big = vec![b"RPUSH".to_vec(), b"list:big".to_vec()];
    for i in 0..5000 {
        big.push(format!("element-{i}-{}", "x".repeat(i % 40)).into_bytes());
    }
    cmds.push(big);
    let mut ints_list = vec![b"RPUSH".to_vec(), b"list:ints".to_vec()];
    for v in [
        "0",
        "127",
        "-128",
        "4095",
        "-4096",
        "32767",
        "-32768",
        "8388607",
        "-8388608",
        "2147483647",
        "-2147483648",
        "9223372036854775807",
        "-9223372036854775808",
    ] {
        ints_list.push(v.as_bytes().to_vec());
    }
    cmds.push(ints_list);
    let mut huge = vec![b"RPUSH".to_vec(), b"list:huge-elements".to_vec()];
    for i in 0..20 {
        huge.push(vec![b'a' + i as u8; 9000]);
    }
    cmds.push(huge);
    // Sets: intsets of each width, a hashtable of strings, a large intset
    // converted to a hashtable.
    c(&mut cmds, &[b"SADD", b"set:int16", b"1", b"2", b"-300"]);
    c(
        &mut cmds,
        &[b"SADD", b"set:int32", b"1", b"70000", b"-70000"],
    );
    c(
        &mut cmds,
        &[b"SADD", b"set:int64", b"1", b"5000000000", b"-5000000000"],
    );
    c(
        &mut cmds,
        &[b"SADD", b"set:str", b"a", b"b", b"", b"\x00\xff"],
    );
    let mut sbig = vec![b"SADD".to_vec(), b"set:big".to_vec()];
    for i in 0..700 {
        sbig.push(format!("member-{i}").into_bytes());
    }
    cmds.push(sbig);
    let mut sints = vec![b"SADD".to_vec(), b"set:many-ints".to_vec()];
    for i in 0..600 {
        sints.push((i * 7 - 1000).to_string().into_bytes());
    }
    cmds.push(sints);
    // Hashes: a listpack, hashtables by count and by value length.
    c(
        &mut cmds,
        &[
            b"HSET",
            b"hash:small",
            b"f",
            b"v",
            b"n",
            b"12",
            b"",
            b"empty field",
        ],
    );
    let mut hbig = vec![b"HSET".to_vec(), b"hash:big".to_vec()];
    for i in 0..600 {
        hbig.push(format!("field-{i}").into_bytes());
        hbig.push(format!("value-{}", i * 3).into_bytes());
    }
    cmds.push(hbig);
    c(&mut cmds, &[b"HSET", b"hash:longval", b"f", &[b'v'; 100]]);
    // Sorted sets: a listpack, a skiplist, special scores.
    c(
        &mut cmds,
        &[
            b"ZADD",
            b"zset:small",
            b"1",
            b"a",
            b"2.5",
            b"b",
            b"-3",
            b"c",
            b"inf",
            b"top",
            b"-inf",
            b"bottom",
        ],
    );
    let mut zbig = vec![b"ZADD".to_vec(), b"zset:big".to_vec()];
    for i in 0..300 {
        zbig.push(format!("{}", i as f64 / 7.0).into_bytes());
        zbig.push(format!("m{i}").into_bytes());
    }
    cmds.push(zbig);
    c(
        &mut cmds,
        &[b"ZADD", b"zset:longmember", b"1e300", &[b'm'; 100]],
    );
    // TTLs in every database, and a key of each type per database.
    for db in 0..16 {
        c(&mut cmds, &[b"SELECT", db.to_string().as_bytes()]);
        c(&mut cmds, &[b"SET", format!("db{db}:s").as_bytes(), b"v"]);
        c(
            &mut cmds,
            &[
                b"SET",
                format!("db{db}:ttl").as_bytes(),
                b"v",
                b"PX",
                format!("{}", 3_600_000 + db * 1000).as_bytes(),
            ],
        );
        c(
            &mut cmds,
            &[b"RPUSH", format!("db{db}:l").as_bytes(), b"x", b"y"],
        );
        c(
            &mut cmds,
            &[
                b"PEXPIRE",
                format!("db{db}:l").as_bytes(),
                format!("{}", 7_200_000 + db).as_bytes(),
            ],
        );
        c(
            &mut cmds,
            &[b"HSET", format!("db{db}:h").as_bytes(), b"f", b"v"],
        );
        c(
            &mut cmds,
            &[b"SADD", format!("db{db}:set").as_bytes(), b"x"],
        );
        c(
            &mut cmds,
            &[b"ZADD", format!("db{db}:z").as_bytes(), b"1", b"x"],
        );
    }
    cmds
}

/// Runs commands on a connection, panicking on an error reply.
pub fn run_all(c: &mut redis::Connection, cmds: &[Vec<Vec<u8>>]) {
    for args in cmds {
        let mut cmd = redis::cmd(std::str::from_utf8(&args[0]).unwrap());
        for a in &args[1..] {
            cmd.arg(&a[..]);
        }
        let r: redis::RedisResult<redis::Value> = cmd.query(c);
        if let Err(e) = r {
            panic!("{:?}: {e}", String::from_utf8_lossy(&args[0]));
        }
    }
}

/// What a key looks like from outside.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyView {
    pub kind: String,
    pub encoding: String,
    /// Absolute expiry (PEXPIRETIME), -1 when none.
    pub expire_at: i64,
    pub digest: String,
}

/// Every key of every database: (db, key) -> view.
pub fn describe(c: &mut redis::Connection, dbs: usize) -> BTreeMap<(usize, Vec<u8>), KeyView> {
    let mut out = BTreeMap::new();
    for db in 0..dbs {
        let _: () = redis::cmd("SELECT").arg(db).query(c).unwrap();
        let keys: Vec<Vec<u8>> = redis::cmd("KEYS").arg("*").query(c).unwrap();
        for k in keys {
            let kind: String = redis::cmd("TYPE").arg(&k).query(c).unwrap();
            let encoding: String = redis::cmd("OBJECT")
                .arg("ENCODING")
                .arg(&k)
                .query(c)
                .unwrap();
            let expire_at: i64 = redis::cmd("PEXPIRETIME").arg(&k).query(c).unwrap();
            let digest: String = redis::cmd("DEBUG")
                .arg("DIGEST-VALUE")
                .arg(&k)
                .query::<Vec<String>>(c)
                .unwrap()
                .remove(0);
            out.insert(
                (db, k),
                KeyView {
                    kind,
                    encoding,
                    expire_at,
                    digest,
                },
            );
        }
    }
    let _: () = redis::cmd("SELECT").arg(0).query(c).unwrap();
    out
}

/// Encodings that may legitimately differ after a load: Redis 7.0 keeps
/// small string sets as hashtables, Petrel as listpacks; Redis 7.0 loads a
/// list of one small node as a quicklist. Everything else must match.
pub fn encodings_compatible(kind: &str, a: &str, b: &str) -> bool {
    a == b
        || (kind == "string" && (a == "embstr-or-raw" || b == "embstr-or-raw"))
        || (kind == "set"
            && matches!(
                (a, b),
                ("listpack", "hashtable") | ("hashtable", "listpack")
            ))
        || (kind == "list"
            && matches!(
                (a, b),
                ("listpack", "quicklist") | ("quicklist", "listpack")
            ))
}

/// A string's encoding after a load is Redis's load rule (embstr up to 44
/// bytes) rather than how it was written (APPEND, SETRANGE, PFADD make
/// raw strings): `describe` output with raw strings compared as either.
pub fn loose_strings(
    m: &BTreeMap<(usize, Vec<u8>), KeyView>,
) -> BTreeMap<(usize, Vec<u8>), KeyView> {
    let mut m = m.clone();
    for v in m.values_mut() {
        if v.kind == "string" && v.encoding == "raw" {
            v.encoding = "embstr-or-raw".into();
        }
    }
    m
}

/// Compares two keyspace descriptions; panics listing every difference.
pub fn assert_same_keyspace(
    what: &str,
    got: &BTreeMap<(usize, Vec<u8>), KeyView>,
    want: &BTreeMap<(usize, Vec<u8>), KeyView>,
) {
    let mut diffs = Vec::new();
    for (k, w) in want {
        match got.get(k) {
            None => diffs.push(format!("missing {k:?}")),
            Some(g) => {
                if g.kind != w.kind || g.expire_at != w.expire_at || g.digest != w.digest {
                    diffs.push(format!("{k:?}: got {g:?}, want {w:?}"));
                } else if !encodings_compatible(&w.kind, &g.encoding, &w.encoding) {
                    diffs.push(format!(
                        "{k:?}: encoding {} instead of {}",
                        g.encoding, w.encoding
                    ));
                }
            }
        }
    }
    for k in got.keys() {
        if !want.contains_key(k) {
            diffs.push(format!("unexpected {k:?}"));
        }
    }
    assert!(
        diffs.is_empty(),
        "{what}: {} differences:\n{}",
        diffs.len(),
        diffs.join("\n")
    );
}

/// DEBUG DIGEST of the whole dataset.
pub fn digest(c: &mut redis::Connection) -> String {
    redis::cmd("DEBUG").arg("DIGEST").query(c).unwrap()
}

/// One field of INFO.
pub fn info_field(c: &mut redis::Connection, section: &str, field: &str) -> String {
    let text: String = redis::cmd("INFO").arg(section).query(c).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .unwrap_or_else(|| panic!("no {field} in INFO {section}:\n{text}"))
        .trim()
        .to_string()
}

/// Waits for a running BGSAVE to finish; panics after `timeout`.
pub fn wait_bgsave(c: &mut redis::Connection, timeout: Duration) {
    assert!(
        wait_until(timeout, || info_field(
            c,
            "persistence",
            "rdb_bgsave_in_progress"
        ) == "0"),
        "BGSAVE still running after {timeout:?}"
    );
}

/// Runs `redis-check-rdb` on a file; panics with its output unless it
/// accepts the file.
pub fn check_rdb(path: &std::path::Path) {
    let out = std::process::Command::new("redis-check-rdb")
        .arg(path)
        .output()
        .expect("redis-check-rdb (redis-tools) is installed");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && text.contains("RDB looks OK"),
        "redis-check-rdb refused {}:\n{text}",
        path.display()
    );
}
