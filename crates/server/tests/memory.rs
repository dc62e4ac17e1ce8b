//! Memory seen by users: exact accounting (MEMORY USAGE against the change
//! of used_memory), MEMORY STATS / DOCTOR / MALLOC-STATS / PURGE, INFO
//! memory fields, and lazy freeing (UNLINK, FLUSHALL ASYNC,
//! lazyfree-lazy-user-del) returning memory in the background.

mod common;
use common::*;

fn info_text(c: &mut RawConn, section: &str) -> String {
    match c.cmd(&["INFO", section]) {
        Value::Bulk(b) => String::from_utf8_lossy(&b).into_owned(),
        v => panic!("INFO: {v}"),
    }
}

/// used_memory as INFO reports it: exact, read when INFO runs. The first
/// INFO may grow the connection's reply buffer after it read the figure, so
/// the second one is taken.
fn used_memory(c: &mut RawConn) -> i64 {
    info_text(c, "memory");
    let info = info_text(c, "memory");
    info.lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("used_memory")
}

/// A Petrel server for exact memory figures: two workers, and no slow log.
/// A command the machine delays past `slowlog-log-slower-than` (10 ms by
/// default, reached on a loaded CI machine) leaves a slow-log entry, a few
/// hundred bytes of `used_memory` that belong to no key.
fn start_petrel() -> TestServer {
    TestServer::start(&[("threads", "2"), ("slowlog-log-slower-than", "-1")])
}

/// used_memory minus the keyspace table's own bytes (directory and
/// segments), from one MEMORY STATS reply: the heap blocks of keys, values
/// and everything else. The table grows and shrinks in whole segments when a
/// key is added or removed (a split or a merge of sparse siblings, which
/// depends on the process's random hash seed), so exactness tests compare
/// this figure and take the key's slot share from MEMORY USAGE at the same
/// table state. The first call may grow the reply buffer; the second is used.
fn heap_memory(c: &mut RawConn) -> i64 {
    c.cmd(&["MEMORY", "STATS"]);
    let Value::Array(items) = c.cmd(&["MEMORY", "STATS"]) else {
        panic!("MEMORY STATS is not an array")
    };
    let field = |name: &str| {
        items
            .chunks(2)
            .find(|p| matches!(&p[0], Value::Bulk(b) if b == name.as_bytes()))
            .map(|p| int(p[1].clone()))
            .unwrap_or_else(|| panic!("{name} in MEMORY STATS"))
    };
    field("total.allocated") - field("petrel.keyspace.table.bytes")
}

fn info_field(c: &mut RawConn, section: &str, field: &str) -> i64 {
    let info = info_text(c, section);
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("{field} in {info}"))
}

/// Sends `cmds` pipelined and checks none failed.
fn load(c: &mut RawConn, cmds: &[Vec<String>]) {
    for chunk in cmds.chunks(200) {
        for cmd in chunk {
            c.send_cmd(cmd);
        }
        for _ in chunk {
            let r = c.read_reply();
            assert!(!matches!(r, Value::Error(_)), "{r}");
        }
    }
}

/// Runs `cmds` on a connection of their own and waits until the server has
/// closed it (`connected_clients` back to 1), so the measuring connection
/// `c` sees none of its buffers: how far a pipelined load grows the query
/// buffer depends on how TCP splits it, and the clients cron shrinks it on
/// its own schedule (seen once as an exact 16 KiB difference).
fn load_and_close(s: &TestServer, c: &mut RawConn, cmds: &[Vec<String>]) {
    let mut loader = s.raw();
    load(&mut loader, cmds);
    drop(loader);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while info_field(c, "clients", "connected_clients") != 1 {
        assert!(
            std::time::Instant::now() < deadline,
            "the loading connection was not closed"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

fn batches(
    cmd: &str,
    key: &str,
    n: usize,
    per: usize,
    item: impl Fn(usize) -> Vec<String>,
) -> Vec<Vec<String>> {
    (0..n)
        .step_by(per)
        .map(|j| {
            let mut v = vec![cmd.to_string(), key.to_string()];
            for i in j..(j + per).min(n) {
                v.extend(item(i));
            }
            v
        })
        .collect()
}

/// UNLINK of a large set hands it to the lazyfree thread; its memory comes
/// back without further commands, and the counters show it went there.
#[test]
fn unlink_frees_large_values_in_the_background() {
    let s = start_petrel();
    let mut c = s.raw();
    let base = used_memory(&mut c);
    load(
        &mut c,
        &batches("SADD", "big", 200_000, 1000, |i| {
            vec![format!("member:{i}")]
        }),
    );
    let loaded = used_memory(&mut c);
    assert!(loaded - base > 4_000_000, "{base} -> {loaded}");
    assert_eq!(c.cmd(&["UNLINK", "big", "missing"]), Value::Int(1));
    assert_eq!(c.cmd(&["EXISTS", "big"]), Value::Int(0));
    // The thread counts the object after freeing it, and runs at
    // SCHED_IDLE: on a busy machine the count can trail the memory.
    assert!(wait_until(Duration::from_secs(10), || {
        used_memory(&mut c) - base < 1_000_000
            && info_field(&mut c, "memory", "lazyfreed_objects") == 1
    }));
    assert_eq!(info_field(&mut c, "memory", "lazyfree_pending_objects"), 0);
    // Small values are freed in place (not worth a hand-off).
    c.cmd(&["SADD", "small", "a", "b"]);
    assert_eq!(c.cmd(&["UNLINK", "small"]), Value::Int(1));
    assert_eq!(info_field(&mut c, "memory", "lazyfreed_objects"), 1);
    // FLUSHALL ASYNC frees databases there too.
    load(
        &mut c,
        &batches("RPUSH", "l", 10_000, 1000, |i| vec![i.to_string()]),
    );
    assert_eq!(c.cmd(&["FLUSHALL", "ASYNC"]), Value::Simple(b"OK".to_vec()));
    assert!(wait_until(Duration::from_secs(10), || info_field(
        &mut c,
        "memory",
        "lazyfreed_objects"
    ) >= 2));
    // lazyfree-lazy-user-del makes DEL lazy as well.
    c.cmd(&["CONFIG", "SET", "lazyfree-lazy-user-del", "yes"]);
    load(
        &mut c,
        &batches("HSET", "h", 2_000, 500, |i| {
            vec![format!("f{i}"), "v".into()]
        }),
    );
    assert_eq!(c.cmd(&["DEL", "h"]), Value::Int(1));
    assert!(wait_until(Duration::from_secs(10), || info_field(
        &mut c,
        "memory",
        "lazyfreed_objects"
    ) >= 3));
}

fn int(v: Value) -> i64 {
    match v {
        Value::Int(n) => n,
        v => panic!("not an integer: {v}"),
    }
}

fn text(v: Value) -> String {
    match v {
        Value::Bulk(b) | Value::Simple(b) => String::from_utf8_lossy(&b).into_owned(),
        v => panic!("not text: {v}"),
    }
}

/// One shape of value per type and encoding, built with one small command
/// per element (so the connection's query buffer never grows: its size is
/// client memory, not the key's).
fn encodings() -> Vec<(&'static str, &'static str, Vec<Vec<String>>)> {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let each = |n: usize, f: &dyn Fn(usize) -> Vec<String>| (0..n).map(f).collect::<Vec<_>>();
    // 20 HSETs, then HDELs of the first fields until `n` commands in all.
    let fill_then_drain = |n: usize| {
        each(n, &|i| {
            if i < 20 {
                s(&["HSET", "k", &format!("f{i}"), "value"])
            } else {
                s(&["HDEL", "k", &format!("f{}", i - 20)])
            }
        })
    };
    vec![
        ("string", "int", vec![s(&["SET", "k", "1234567"])]),
        ("string", "embstr", vec![s(&["SET", "k", &"e".repeat(30)])]),
        ("string", "raw", vec![s(&["SET", "k", &"r".repeat(300)])]),
        // heap strings: 6-bit packed (40 digits -> 30 bytes), 7-bit packed
        // (36 ASCII chars -> 32 bytes), plain binary (40 bytes, no header),
        // 6-bit packed beyond embstr's 44 bytes, and packed then edited.
        (
            "string",
            "embstr",
            vec![s(&["SET", "k", &"1234567890".repeat(4)])],
        ),
        (
            "string",
            "embstr",
            vec![s(&["SET", "k", "hello world, this is 36 chars long!!"])],
        ),
        (
            "string",
            "embstr",
            vec![s(&["SET", "k", &"\u{e9}".repeat(20)])],
        ),
        ("string", "raw", vec![s(&["SET", "k", &"x".repeat(60)])]),
        (
            "string",
            "raw",
            vec![
                s(&["SET", "k", &"1234567890".repeat(4)]),
                s(&["APPEND", "k", "z"]),
            ],
        ),
        (
            "string",
            "raw",
            vec![
                s(&["SET", "k", &"1234567890".repeat(4)]),
                s(&["SETRANGE", "k", "38", "-"]),
            ],
        ),
        (
            "string",
            "raw",
            vec![s(&["SET", "k", "a"]), s(&["APPEND", "k", &"b".repeat(100)])],
        ),
        (
            "hash",
            "listpack",
            each(20, &|i| s(&["HSET", "k", &format!("f{i}"), "value"])),
        ),
        // The packed form (one block pointed to by the value cell).
        (
            "hash",
            "listpack",
            each(10, &|i| {
                s(&["HSET", "k", &format!("field:{i}"), &format!("value:{i}")])
            }),
        ),
        // Indexed (20 fields), then down to 12 (still indexed: hysteresis)
        // and down to 7 (back to the packed form).
        ("hash", "listpack", fill_then_drain(28)),
        ("hash", "listpack", fill_then_drain(33)),
        (
            "hash",
            "hashtable",
            each(1000, &|i| {
                s(&["HSET", "k", &format!("f{i}"), &"v".repeat(i % 40)])
            }),
        ),
        (
            "list",
            "quicklist",
            each(3000, &|i| s(&["RPUSH", "k", &format!("element:{i}")])),
        ),
        (
            "set",
            "intset",
            each(300, &|i| s(&["SADD", "k", &i.to_string()])),
        ),
        (
            "set",
            "listpack",
            each(60, &|i| s(&["SADD", "k", &format!("m{i}")])),
        ),
        (
            "set",
            "hashtable",
            each(2000, &|i| s(&["SADD", "k", &format!("member:{i}")])),
        ),
        (
            "zset",
            "listpack",
            each(60, &|i| s(&["ZADD", "k", &i.to_string(), &format!("m{i}")])),
        ),
        (
            "zset",
            "skiplist",
            each(2000, &|i| {
                s(&[
                    "ZADD",
                    "k",
                    &(i * 7 % 13).to_string(),
                    &format!("member:{i}"),
                ])
            }),
        ),
        // Streams: entries over many nodes, then groups with pending
        // entries, consumers, acknowledgements and tombstones.
        (
            "stream",
            "stream",
            each(700, &|i| {
                s(&[
                    "XADD",
                    "k",
                    &format!("{}-{}", i + 1, i % 3),
                    "sensor",
                    &i.to_string(),
                    "v",
                    &"x".repeat(i % 40),
                ])
            }),
        ),
        (
            "stream",
            "stream",
            each(900, &|i| match i {
                0..=599 => s(&["XADD", "k", &format!("{}-0", i + 1), "f", &i.to_string()]),
                600 => s(&["XGROUP", "CREATE", "k", "g1", "0"]),
                601 => s(&["XGROUP", "CREATE", "k", "g2", "$", "MKSTREAM"]),
                602..=699 => s(&[
                    "XREADGROUP",
                    "GROUP",
                    "g1",
                    &format!("consumer:{}", i % 7),
                    "COUNT",
                    "5",
                    "STREAMS",
                    "k",
                    ">",
                ]),
                700..=799 => s(&["XACK", "k", "g1", &format!("{}-0", (i - 700) * 3 + 1)]),
                _ => s(&["XDEL", "k", &format!("{}-0", (i - 800) * 5 + 2)]),
            }),
        ),
    ]
}

/// MEMORY USAGE equals the change of used_memory when a key is created and
/// when it is deleted, for every type and encoding.
///
/// Tolerance: exactly the key's share of the keyspace table (`slot share` =
/// table bytes / keys in its partition), and nothing else. The table is
/// allocated in whole segments ahead of the keys, so creating one key
/// allocates only the key's own heap blocks, while MEMORY USAGE (like
/// Redis's) also charges the key its part of the table. A create or delete
/// can still split or merge a segment (rarely, with 3000 filler keys; when
/// depends on the random hash seed), so the change is read as used_memory
/// minus the table's bytes, both from one MEMORY STATS reply. Every heap
/// block is counted at its jemalloc size class on both sides, so there is no
/// further rounding slack.
#[test]
fn memory_usage_equals_used_memory_change() {
    let s = start_petrel();
    let mut c = s.raw();
    load(
        &mut c,
        &(0..3000)
            .map(|i| vec!["SET".into(), format!("filler:{i}"), "x".into()])
            .collect::<Vec<_>>(),
    );
    // The key's partition's slot share: MEMORY USAGE of an inline-valued key
    // in the same hash slot (hashtag `k`) whose key and value live in the
    // slot (no heap blocks), read at the same table state as the key's.
    c.cmd(&["SET", "{k}probe", "1"]);
    // Connections go to the worker threads in turn, and a worker's first
    // connection grows its connection table: a few first, so every worker
    // has served one before anything is measured.
    for _ in 0..4 {
        load_and_close(&s, &mut c, &[]);
    }
    for (ty, enc, cmds) in encodings() {
        // Each case runs once unmeasured first: the first use of a command
        // family may grow process-wide state that belongs to no key (seen
        // with the stream commands after the persistence merge: 64 bytes
        // on the first XADD of the process, 256 on the first group
        // commands); the measured run then sees only the key's own bytes.
        load_and_close(&s, &mut c, &cmds);
        assert_eq!(int(c.cmd(&["DEL", "k"])), 1);
        // Up to three tries: a background change of a few bytes that
        // belongs to no key (a connection's buffers resized by the clients
        // cron between the two readings) can land between them. A wrong
        // MEMORY USAGE is wrong every time; every try is reported.
        let mut tries = Vec::new();
        for _ in 0..3 {
            let before = heap_memory(&mut c);
            load_and_close(&s, &mut c, &cmds);
            let after = heap_memory(&mut c);
            assert_eq!(text(c.cmd(&["TYPE", "k"])), ty);
            assert_eq!(text(c.cmd(&["OBJECT", "ENCODING", "k"])), enc, "{ty}");
            let usage = int(c.cmd(&["MEMORY", "USAGE", "k"]));
            let share = int(c.cmd(&["MEMORY", "USAGE", "{k}probe"]));
            assert!(share > 0 && share < 100, "slot share {share}");
            assert_eq!(int(c.cmd(&["DEL", "k"])), 1);
            let freed = after - heap_memory(&mut c);
            // Keys owning 4 KiB or more also have an entry in the big-key
            // index (MEMORY TOPKEYS): MEMORY USAGE counts it too, so no
            // allowance.
            let created = after - before;
            if usage - share == created && freed == created {
                tries.clear();
                break;
            }
            tries.push(format!(
                "MEMORY USAGE {usage} (share {share}) vs created +{created}, deleted -{freed}"
            ));
        }
        assert!(tries.is_empty(), "{ty}/{enc}: {tries:?}");
    }
}

/// A key reaching 4 KiB of heap gets a big-key index entry (MEMORY
/// TOPKEYS): its node and a copy of the key name. MEMORY USAGE counts both,
/// for any name length (the empty name allocates no copy), as the key grows
/// across the threshold and when it is deleted.
#[test]
fn memory_usage_counts_big_key_index_entry() {
    let s = start_petrel();
    let mut c = s.raw();
    load(
        &mut c,
        &(0..3000)
            .map(|i| vec!["SET".into(), format!("filler:{i}"), "x".into()])
            .collect::<Vec<_>>(),
    );
    let chunk = "z".repeat(100);
    for key in ["", "k", &"n".repeat(40), &"L".repeat(300)] {
        // The key with an int value: slot share plus the key's own block if
        // it has one (the block is what creating it allocated). Created and
        // deleted once first, so a table segment split it may cause happens
        // before the measurements.
        c.cmd(&["SET", key, "1"]);
        c.cmd(&["DEL", key]);
        let empty = heap_memory(&mut c);
        c.cmd(&["SET", key, "1"]);
        let before = heap_memory(&mut c);
        let base = int(c.cmd(&["MEMORY", "USAGE", key]));
        let share = base - (before - empty);
        assert!(share > 0 && share < 100, "slot share {share}");
        for i in 0..60 {
            c.cmd(&["APPEND", key, &chunk]);
            let usage = int(c.cmd(&["MEMORY", "USAGE", key]));
            assert_eq!(
                usage - base,
                heap_memory(&mut c) - before,
                "key of {} bytes, {} value bytes",
                key.len(),
                (i + 1) * 100
            );
        }
        assert_eq!(int(c.cmd(&["DEL", key])), 1);
        assert_eq!(heap_memory(&mut c), empty, "key of {} bytes", key.len());
    }
}

/// A long key lives in its own heap block: counted on both sides too.
#[test]
fn memory_usage_counts_heap_keys() {
    let s = start_petrel();
    let mut c = s.raw();
    load(
        &mut c,
        &(0..3000)
            .map(|i| vec!["SET".into(), format!("filler:{i}"), "x".into()])
            .collect::<Vec<_>>(),
    );
    let key = "K".repeat(70);
    c.cmd(&["SET", &key, "1"]);
    c.cmd(&["DEL", &key]);
    let before = heap_memory(&mut c);
    c.cmd(&["SET", &key, &"v".repeat(50)]);
    let after = heap_memory(&mut c);
    let usage = int(c.cmd(&["MEMORY", "USAGE", &key]));
    // Key block: 4-byte length header + 70 -> 80-byte class. Value: 50 `v`
    // split, 8 in the cell and 42 -> 48-byte class (plain would be 64).
    assert_eq!(after - before, 80 + 48);
    assert!(usage - (after - before) > 0 && usage - (after - before) < 100);
}

/// A heap string costs exactly its block: no length header, and packed
/// (6 or 7 bits per char) when that puts it in a smaller size class.
#[test]
fn heap_string_blocks() {
    let s = start_petrel();
    let mut c = s.raw();
    load(
        &mut c,
        &(0..3000)
            .map(|i| vec!["SET".into(), format!("filler:{i}"), "x".into()])
            .collect::<Vec<_>>(),
    );
    let digits = "1234567890".repeat(4);
    for (value, block) in [
        (digits.as_str(), 32),                        // split: 8 + 32 bytes
        ("hello world, this is 36 chars long!!", 32), // split: 8 + 28 bytes
        (&"\u{e9}".repeat(20), 32),                   // binary, split: 8 + 32
        (&"\u{e9}".repeat(21), 48),                   // binary: 42 bytes
        (&"7".repeat(41), 32),                        // 6-bit: 31 bytes
        (&"a".repeat(44), 48),                        // packing gains nothing
        (&"x".repeat(60), 48),                        // 6-bit: 45 bytes
        (&"x".repeat(65), 80),                        // over PACK_MAX: plain
        (&"y".repeat(100), 112),
    ] {
        let before = heap_memory(&mut c);
        c.cmd(&["SET", "key:000000000001", value]);
        let after = heap_memory(&mut c);
        assert_eq!(after - before, block, "{value:?}");
        assert_eq!(text(c.cmd(&["GET", "key:000000000001"])), value);
        assert_eq!(
            int(c.cmd(&["STRLEN", "key:000000000001"])),
            value.len() as i64
        );
        c.cmd(&["DEL", "key:000000000001"]);
        assert_eq!(heap_memory(&mut c), before, "{value:?}");
    }
}

/// A split string (40 bytes: 8 in the cell, 32 in a block) under a key
/// whose cell has 3 free bytes: a TTL needs 5, so EXPIRE (and SET EX)
/// store the value unsplit (48-byte block) and keep the key inline;
/// PERSIST splits it again. used_memory and MEMORY USAGE follow each step,
/// and the value, TTL and encoding read back unchanged.
#[test]
fn split_strings_with_and_without_ttl() {
    let s = start_petrel();
    let mut c = s.raw();
    load(
        &mut c,
        &(0..3000)
            .map(|i| vec!["SET".into(), format!("filler:{i}"), "x".into()])
            .collect::<Vec<_>>(),
    );
    let key = "key:000000000001";
    let value = "\u{e9}".repeat(20);
    let steps: [(&[&str], i64, bool); 6] = [
        (&["SET", key, &value], 32, false),
        (&["EXPIRE", key, "1000"], 48, true),
        (&["PERSIST", key], 32, false),
        (&["SET", key, &value, "EX", "1000"], 48, true),
        (&["SET", key, &value, "KEEPTTL"], 48, true),
        (&["SET", key, &value], 32, false),
    ];
    // Rounds are repeated until one leaves the server where it was: the
    // first uses of a command may grow process-wide state that belongs to
    // no key (see memory_usage_equals_used_memory_change; here 64 bytes at
    // some SET EX of an early round, kept after the DEL, on main before
    // split strings as well). The round after a clean one is measured.
    // A measured round can also be disturbed by a background change of a
    // few bytes that belongs to no key (this connection's buffers resized
    // by the clients cron between two readings): up to 8 rounds, every
    // measured one that missed is reported. A wrong figure misses always.
    let mut clean = false;
    let mut misses = Vec::new();
    for round in 0..8 {
        let measured = clean;
        c.cmd(&["SET", key, "1"]);
        let usage0 = int(c.cmd(&["MEMORY", "USAGE", key]));
        c.cmd(&["DEL", key]);
        let before = heap_memory(&mut c);
        let mut exact = true;
        for (cmd, block, ttl) in steps {
            c.cmd(cmd);
            assert_eq!(text(c.cmd(&["GET", key])), value);
            assert_eq!(text(c.cmd(&["OBJECT", "ENCODING", key])), "embstr");
            let t = int(c.cmd(&["TTL", key]));
            assert!(if ttl { t > 900 && t <= 1000 } else { t == -1 }, "{t}");
            // MEMORY USAGE includes the key's share of the table
            // (table bytes / keys), which moves by a byte or two when a
            // row comes or goes between the readings: a miss, retried
            // like the heap's.
            let usage = int(c.cmd(&["MEMORY", "USAGE", key]));
            if usage - usage0 != block {
                exact = false;
                misses.push(format!(
                    "round {round} {cmd:?}: usage +{}, want +{block}",
                    usage - usage0
                ));
            }
            if measured {
                let grew = heap_memory(&mut c) - before;
                if grew != block {
                    exact = false;
                    misses.push(format!("round {round} {cmd:?}: +{grew}, want +{block}"));
                }
            }
        }
        c.cmd(&["DEL", key]);
        clean = heap_memory(&mut c) == before;
        if measured && !clean {
            misses.push(format!("round {round}: memory left after DEL"));
        }
        if measured && exact && clean {
            return;
        }
    }
    panic!("no measured round was exact: {misses:?}");
}

fn stats_map(v: Value) -> Vec<(String, Value)> {
    let Value::Array(items) = v else {
        panic!("MEMORY STATS: {v}")
    };
    items
        .chunks(2)
        .map(|p| (text(p[0].clone()), p[1].clone()))
        .collect()
}

/// MEMORY STATS has Redis 7.0's fields in Redis's order (then Petrel's own,
/// all named `petrel.*`), and its figures agree with INFO and each other.
#[test]
fn memory_stats_fields_and_figures() {
    let s = start_petrel();
    let mut c = s.raw();
    c.cmd(&["SET", "a", "1"]);
    c.cmd(&["SELECT", "3"]);
    c.cmd(&["SET", "b", &"x".repeat(100)]);
    let st = stats_map(c.cmd(&["MEMORY", "STATS"]));
    let names: Vec<&str> = st.iter().map(|(k, _)| k.as_str()).collect();
    let redis_names: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| !n.starts_with("petrel."))
        .collect();
    if redis_available() {
        let r = TestServer::start_opts(Kind::Redis, Opts::new(&[]));
        let mut rc = r.raw();
        rc.cmd(&["SET", "a", "1"]);
        rc.cmd(&["SELECT", "3"]);
        rc.cmd(&["SET", "b", &"x".repeat(100)]);
        let rs = stats_map(rc.cmd(&["MEMORY", "STATS"]));
        let rn: Vec<&str> = rs.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(redis_names, rn);
        // db.N entries are maps with the same two fields.
        for (k, v) in &rs {
            if k.starts_with("db.") {
                let p = &st.iter().find(|(n, _)| n == k).unwrap().1;
                let keys = |v: &Value| match v {
                    Value::Array(a) => a.iter().step_by(2).cloned().collect::<Vec<_>>(),
                    v => panic!("{k}: {v}"),
                };
                assert_eq!(keys(v), keys(p), "{k}");
            }
        }
    }
    let get = |name: &str| -> i64 {
        match &st.iter().find(|(k, _)| k == name).unwrap().1 {
            Value::Int(n) => *n,
            v => panic!("{name}: {v}"),
        }
    };
    assert!(names.contains(&"db.0") && names.contains(&"db.3"));
    assert!(!names.contains(&"db.1"));
    assert_eq!(get("keys.count"), 2);
    assert_eq!(get("petrel.ttl.index.bytes"), 0);
    let total = get("total.allocated");
    // dataset = total - overhead (0 if the startup figure was higher).
    assert_eq!(get("dataset.bytes"), (total - get("overhead.total")).max(0));
    assert_eq!(
        get("keys.bytes-per-key"),
        (total - get("startup.allocated")).max(0) / 2
    );
    assert!(get("peak.allocated") >= total);
    let table = get("petrel.keyspace.table.bytes");
    assert_eq!(
        table,
        get("petrel.keyspace.table.directory.bytes") + get("petrel.keyspace.table.segments.bytes")
    );
    assert_eq!(
        get("petrel.keyspace.table.slots") - get("petrel.keyspace.table.empty-slots"),
        2
    );
    // Heap bytes per type: "1" is inline (none), 100 bytes take a 112-byte
    // block; MEMORY USAGE of a key is its heap bytes plus its slot share.
    assert_eq!(get("petrel.values.heap-bytes.string"), 112);
    // ... and "1" is the one inline string byte.
    assert_eq!(get("petrel.strings.inline-bytes"), 1);
    for t in ["list", "set", "zset", "hash"] {
        assert_eq!(get(&format!("petrel.values.heap-bytes.{t}")), 0, "{t}");
    }
    assert!(get("clients.normal") > 0);
    assert_eq!(
        get("clients.normal"),
        get("petrel.clients.query-buffers")
            + get("petrel.clients.output-buffers")
            + get("petrel.clients.argv")
            + get("petrel.clients.structs")
    );
    // INFO memory agrees on the derived fields (same definitions).
    let info = info_text(&mut c, "memory");
    for f in [
        "used_memory_startup",
        "maxmemory",
        "mem_replication_backlog",
    ] {
        assert!(info.contains(&format!("{f}:")), "{f}");
    }
    assert!(info.contains("maxmemory_policy:"));
    assert_eq!(
        info_field(&mut c, "memory", "used_memory_startup"),
        get("startup.allocated")
    );
}

/// INFO memory lists Redis 7.0's fields in Redis's order.
#[test]
fn info_memory_fields_match_redis() {
    if !redis_available() {
        return;
    }
    let names = |t: String| -> Vec<String> {
        t.lines()
            .filter_map(|l| l.split_once(':').map(|(k, _)| k.to_string()))
            .collect()
    };
    let p = start_petrel();
    let r = TestServer::start_opts(Kind::Redis, Opts::new(&[]));
    assert_eq!(
        names(info_text(&mut p.raw(), "memory")),
        names(info_text(&mut r.raw(), "memory"))
    );
}

/// DOCTOR's empty-instance text, HELP, MALLOC-STATS and PURGE, and the
/// subcommands' errors, as Redis replies.
#[test]
fn memory_doctor_help_malloc_stats_purge() {
    let s = start_petrel();
    let mut c = s.raw();
    let doc = text(c.cmd(&["MEMORY", "DOCTOR"]));
    assert!(doc.starts_with("Hi Sam, this instance is empty"), "{doc}");
    assert_eq!(c.cmd(&["MEMORY", "PURGE"]), Value::Simple(b"OK".to_vec()));
    let ms = text(c.cmd(&["MEMORY", "MALLOC-STATS"]));
    assert!(
        ms.contains("Begin jemalloc statistics"),
        "{}",
        &ms[..ms.len().min(200)]
    );
    // Past 5 MB, with a 3x peak behind: the peak report. (A sorted set: a
    // long list would be compressed below the 5 MB floor.)
    load(
        &mut c,
        &batches("ZADD", "big", 1_200_000, 2000, |i| {
            vec![i.to_string(), format!("element:{i:08}")]
        }),
    );
    c.cmd(&["INFO", "memory"]); // records the peak
    c.cmd(&["ZREMRANGEBYRANK", "big", "400000", "-1"]);
    let doc = text(c.cmd(&["MEMORY", "DOCTOR"]));
    assert!(
        doc.starts_with("Sam, I detected a few issues in this Redis instance memory implants:\n\n * Peak memory:"),
        "{doc}"
    );
    assert!(doc.ends_with("I'm here to keep you safe, Sam. I want to help you.\n"));
    if redis_available() {
        let r = TestServer::start_opts(Kind::Redis, Opts::new(&[]));
        let mut rc = r.raw();
        // MEMORY HELP: Redis's lines, plus Petrel's TOPKEYS entry (two
        // description lines after it).
        let Value::Array(mine) = c.cmd(&["MEMORY", "HELP"]) else {
            panic!("MEMORY HELP")
        };
        let Value::Array(theirs) = rc.cmd(&["MEMORY", "HELP"]) else {
            panic!("MEMORY HELP")
        };
        let at = mine
            .iter()
            .position(|l| text(l.clone()).starts_with("TOPKEYS"))
            .expect("TOPKEYS in MEMORY HELP");
        let mut without = mine.clone();
        without.drain(at..at + 3);
        assert_eq!(without, theirs);
        for cmd in [
            vec!["MEMORY", "DOCTOR", "x"],
            vec!["MEMORY", "STATS", "x"],
            vec!["MEMORY", "PURGE", "x"],
            vec!["MEMORY", "MALLOC-STATS", "x"],
            vec!["MEMORY", "NOPE"],
            vec!["MEMORY", "USAGE", "nokey"],
            vec!["MEMORY", "USAGE", "big", "SAMPLES", "-1"],
            vec!["MEMORY", "USAGE", "big", "FOO"],
        ] {
            assert_eq!(c.cmd(&cmd), rc.cmd(&cmd), "{cmd:?}");
        }
        let empty = text(rc.cmd(&["MEMORY", "DOCTOR"]));
        let p = start_petrel();
        assert_eq!(text(p.raw().cmd(&["MEMORY", "DOCTOR"])), empty);
    }
}

/// Scheduling policy (`SCHED_*`) of each thread of process `pid`, by name.
fn thread_policies(pid: u32) -> Vec<(String, u32)> {
    let mut out = Vec::new();
    for t in std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .flatten()
    {
        let Ok(stat) = std::fs::read_to_string(t.path().join("stat")) else {
            continue;
        };
        let (head, tail) = stat.rsplit_once(')').unwrap();
        let name = head.split_once('(').unwrap().1.to_string();
        // Field 41 of stat is the policy; `tail` starts at field 3.
        let policy = tail
            .split_whitespace()
            .nth(41 - 3)
            .unwrap()
            .parse()
            .unwrap();
        out.push((name, policy));
    }
    out
}

/// The threads that free memory in the background (jemalloc's purging
/// thread, the lazyfree thread) run at SCHED_IDLE, so they only take CPU
/// time the workers leave; the workers stay at the normal policy.
#[test]
fn background_freeing_threads_run_at_idle_priority() {
    const SCHED_OTHER: u32 = 0;
    const SCHED_IDLE: u32 = 5;
    let s = start_petrel();
    let mut c = s.raw();
    // The lazyfree thread starts with the first hand-off.
    load(
        &mut c,
        &batches("SADD", "big", 100_000, 1000, |i| vec![format!("m:{i}")]),
    );
    assert_eq!(c.cmd(&["UNLINK", "big"]), Value::Int(1));
    assert!(wait_until(Duration::from_secs(10), || {
        info_field(&mut c, "memory", "lazyfree_pending_objects") == 0
    }));
    let policy = |threads: &[(String, u32)], name: &str| -> Vec<u32> {
        threads
            .iter()
            .filter(|t| t.0 == name)
            .map(|t| t.1)
            .collect()
    };
    // jemalloc starts its threads when it needs them; the cron lowers them
    // within a second.
    let bg_idle = || {
        let bg = policy(&thread_policies(s.pid()), "jemalloc_bg_thd");
        !bg.is_empty() && bg.iter().all(|&p| p == SCHED_IDLE)
    };
    let idle = wait_until(Duration::from_secs(10), bg_idle);
    let threads = thread_policies(s.pid());
    assert!(idle, "{threads:?}");
    assert_eq!(
        policy(&threads, "petrel-lazyfree"),
        vec![SCHED_IDLE],
        "{threads:?}"
    );
    let workers: Vec<_> = threads
        .iter()
        .filter(|t| t.0.starts_with("petrel-worker"))
        .collect();
    assert_eq!(workers.len(), 2, "{threads:?}");
    assert!(workers.iter().all(|t| t.1 == SCHED_OTHER), "{threads:?}");
}

/// Once every key is gone (deleted here; expiry takes the same path), the
/// server's memory returns to that of a server that never held a key: the
/// emptied tables shrink back and the cron frees the empty databases.
#[test]
fn memory_returns_to_the_empty_server_after_all_keys_go() {
    let s = start_petrel();
    let mut c = s.raw();
    let empty = used_memory(&mut c);
    let n = 100_000;
    // Loading goes through its own connection, closed afterwards, so its
    // grown buffers do not count against the comparison.
    let mut l = s.raw();
    load(
        &mut l,
        &batches("MSET", "", n, 500, |i| {
            vec![format!("key:{i}"), format!("value:{i}")]
        })
        .into_iter()
        .map(|mut cmd| {
            cmd.remove(1); // MSET takes no key argument before the pairs
            cmd
        })
        .collect::<Vec<_>>(),
    );
    assert!(used_memory(&mut c) > empty + 2_000_000);
    load(
        &mut l,
        &batches("DEL", "", n, 500, |i| vec![format!("key:{i}")])
            .into_iter()
            .map(|mut cmd| {
                cmd.remove(1);
                cmd
            })
            .collect::<Vec<_>>(),
    );
    drop(l);
    assert_eq!(c.cmd(&["DBSIZE"]), Value::Int(0));
    let back = wait_until(Duration::from_secs(10), || {
        used_memory(&mut c) <= empty + empty / 100
    });
    assert!(back, "empty {empty}, now {}", used_memory(&mut c));
}
