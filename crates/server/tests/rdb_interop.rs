//! RDB files and DUMP payloads between petrel and redis-server 7.0, both
//! ways: every type and encoding (`common::rdbdata`), TTLs in all 16
//! databases, compressed and plain list nodes, LFU and LRU metadata. Each
//! direction compares every key (type, expiry, encoding where Redis
//! defines it, `DEBUG DIGEST-VALUE`) and the whole `DEBUG DIGEST`; files
//! petrel writes must pass `redis-check-rdb`.

mod common;
use common::rdbdata::*;
use common::*;

use std::path::Path;

fn petrel_in(dir: &Path, extra: &[(&str, &str)]) -> TestServer {
    let mut o = Opts::new(&[
        ("dir", &dir.display().to_string()),
        ("enable-debug-command", "yes"),
        ("save", ""),
    ]);
    for (k, v) in extra {
        o = o.arg(k, v);
    }
    TestServer::start_with(o)
}

fn redis_in(dir: &Path, extra: &[(&str, &str)]) -> Option<Server> {
    let mut o = Opts::new(&[
        ("dir", &dir.display().to_string()),
        ("enable-debug-command", "yes"),
    ]);
    for (k, v) in extra {
        o = o.arg(k, v);
    }
    RefRedis::start_with(o)
}

fn save(c: &mut redis::Connection) {
    let r: String = redis::cmd("SAVE").query(c).unwrap();
    assert_eq!(r, "OK");
}

/// Builds the dataset on redis-server (with compressed list nodes and,
/// below the packed threshold, plain ones), saves it, loads the file in
/// petrel, and compares; then petrel saves (SAVE and BGSAVE), the file
/// passes redis-check-rdb and a fresh redis-server loads it identically.
#[test]
fn files_round_trip_between_redis_and_petrel() {
    let rdir = TempDir::new("interop-r");
    let Some(redis) = redis_in(rdir.path(), &[("list-compress-depth", "1")]) else {
        return;
    };
    let mut rc = redis.client();
    // Elements of 1000 bytes or more become plain quicklist nodes.
    let _: () = redis::cmd("DEBUG")
        .arg("QUICKLIST-PACKED-THRESHOLD")
        .arg(1000)
        .query(&mut rc)
        .unwrap();
    run_all(&mut rc, &dataset_commands());
    let mut plain = vec![b"RPUSH".to_vec(), b"list:plain".to_vec()];
    for i in 0..6 {
        plain.push(vec![b'p' + i as u8; 1500]);
        plain.push(format!("small-{i}").into_bytes());
    }
    run_all(&mut rc, &[plain]);
    // The reference is what redis-server itself has after loading its own
    // file (a loaded short string is embstr even if it was raw, e.g. a
    // HyperLogLog).
    let _: () = redis::cmd("DEBUG").arg("RELOAD").query(&mut rc).unwrap();
    let want = describe(&mut rc, 16);
    let want_digest = digest(&mut rc);
    save(&mut rc);
    drop(redis);

    // redis -> petrel
    let pdir = TempDir::new("interop-p");
    std::fs::copy(rdir.join("dump.rdb"), pdir.join("dump.rdb")).unwrap();
    let petrel = petrel_in(pdir.path(), &[("list-compress-depth", "1")]);
    let mut pc = petrel.client();
    assert_same_keyspace("redis file loaded by petrel", &describe(&mut pc, 16), &want);
    assert_eq!(digest(&mut pc), want_digest);

    // petrel -> redis, through SAVE and through BGSAVE
    for how in ["SAVE", "BGSAVE"] {
        std::fs::remove_file(pdir.join("dump.rdb")).unwrap();
        if how == "SAVE" {
            save(&mut pc);
        } else {
            let r: String = redis::cmd("BGSAVE").query(&mut pc).unwrap();
            assert_eq!(r, "Background saving started");
            wait_bgsave(&mut pc, Duration::from_secs(60));
            assert_eq!(
                info_field(&mut pc, "persistence", "rdb_last_bgsave_status"),
                "ok"
            );
        }
        check_rdb(&pdir.join("dump.rdb"));
        let r2dir = TempDir::new("interop-r2");
        std::fs::copy(pdir.join("dump.rdb"), r2dir.join("dump.rdb")).unwrap();
        let redis2 = redis_in(r2dir.path(), &[("list-compress-depth", "1")]).unwrap();
        let mut rc2 = redis2.client();
        assert_same_keyspace(
            &format!("petrel {how} file loaded by redis"),
            &describe(&mut rc2, 16),
            &want,
        );
        assert_eq!(digest(&mut rc2), want_digest, "{how}");
    }
}

/// Petrel builds the dataset itself (its own encodings: listpack sets,
/// its quicklists), saves, redis loads it, and petrel loads it back.
#[test]
fn petrel_dataset_survives_redis() {
    let pdir = TempDir::new("interop-p1");
    let petrel = petrel_in(pdir.path(), &[]);
    let mut pc = petrel.client();
    run_all(&mut pc, &dataset_commands());
    let want = describe(&mut pc, 16);
    let want_digest = digest(&mut pc);
    save(&mut pc);
    check_rdb(&pdir.join("dump.rdb"));
    let rdir = TempDir::new("interop-r1");
    std::fs::copy(pdir.join("dump.rdb"), rdir.join("dump.rdb")).unwrap();
    let Some(redis) = redis_in(rdir.path(), &[]) else {
        return;
    };
    let mut rc = redis.client();
    // Compare with what redis-server has after loading the same dataset
    // from its own file (see above); petrel's own view is the same apart
    // from the encodings Redis redefines on load.
    let got_r = describe(&mut rc, 16);
    let _: () = redis::cmd("DEBUG").arg("RELOAD").query(&mut rc).unwrap();
    assert_same_keyspace(
        "redis reloading its own save",
        &describe(&mut rc, 16),
        &got_r,
    );
    assert_same_keyspace("petrel file loaded by redis", &got_r, &loose_strings(&want));
    assert_eq!(digest(&mut rc), want_digest);
    std::fs::remove_file(rdir.join("dump.rdb")).unwrap();
    save(&mut rc);
    drop(petrel);
    let p2dir = TempDir::new("interop-p2");
    std::fs::copy(rdir.join("dump.rdb"), p2dir.join("dump.rdb")).unwrap();
    let petrel2 = petrel_in(p2dir.path(), &[]);
    let mut pc2 = petrel2.client();
    assert_same_keyspace(
        "back in petrel",
        &describe(&mut pc2, 16),
        &loose_strings(&want),
    );
    assert_eq!(digest(&mut pc2), want_digest);
}

/// DUMP on one server, RESTORE on the other, for every key of the
/// dataset, both ways; the restored values digest the same.
#[test]
fn dump_restore_both_ways() {
    let Some(redis) = RefRedis::start_with(Opts::new(&[("enable-debug-command", "yes")])) else {
        return;
    };
    let petrel = TestServer::start(&[("enable-debug-command", "yes")]);
    let mut rc = redis.client();
    let mut pc = petrel.client();
    run_all(&mut rc, &dataset_commands());
    run_all(&mut pc, &dataset_commands());
    let want = describe(&mut rc, 1);
    let _: () = redis::cmd("SELECT").arg(0).query(&mut pc).unwrap();
    // The expiry goes along as an absolute time (ABSTTL; 0 = none): the
    // value digests include it.
    let ttl = |v: &KeyView| v.expire_at.max(0);
    for ((_, k), v) in &want {
        let payload: Vec<u8> = redis::cmd("DUMP").arg(k).query(&mut rc).unwrap();
        let r: String = redis::cmd("RESTORE")
            .arg(k)
            .arg(ttl(v))
            .arg(&payload)
            .arg("REPLACE")
            .arg("ABSTTL")
            .query(&mut pc)
            .unwrap_or_else(|e| panic!("redis -> petrel {k:?}: {e}"));
        assert_eq!(r, "OK");
    }
    for ((_, k), v) in &want {
        let payload: Vec<u8> = redis::cmd("DUMP").arg(k).query(&mut pc).unwrap();
        let r: String = redis::cmd("RESTORE")
            .arg(k)
            .arg(ttl(v))
            .arg(&payload)
            .arg("REPLACE")
            .arg("ABSTTL")
            .query(&mut rc)
            .unwrap_or_else(|e| panic!("petrel -> redis {k:?}: {e}"));
        assert_eq!(r, "OK");
    }
    // Redis's own RESTORE of its own payloads is the reference for
    // encodings (a restored short string is embstr).
    let _: () = redis::cmd("DEBUG").arg("RELOAD").query(&mut rc).unwrap();
    let reference = describe(&mut rc, 1);
    assert_same_keyspace("restored in petrel", &describe(&mut pc, 1), &reference);
}

/// Eviction metadata: under an LFU policy the files carry FREQ, under an
/// LRU policy IDLE; each server reads the other's.
#[test]
fn lfu_and_lru_metadata_round_trip() {
    for (policy, field) in [("allkeys-lfu", "FREQ"), ("allkeys-lru", "IDLETIME")] {
        let extra = [("maxmemory-policy", policy), ("lfu-decay-time", "0")];
        let rdir = TempDir::new("meta-r");
        let Some(redis) = redis_in(rdir.path(), &extra) else {
            return;
        };
        let mut rc = redis.client();
        let _: () = redis::cmd("SET")
            .arg("seed")
            .arg("v")
            .query(&mut rc)
            .unwrap();
        let payload: Vec<u8> = redis::cmd("DUMP").arg("seed").query(&mut rc).unwrap();
        // Known metadata through RESTORE: FREQ n or IDLETIME n.
        // (Petrel's LRU ages saturate at 192 ticks of a second: see
        // store::keyspace::evict.)
        let vals = [3u32, 40, 150];
        for (i, n) in vals.iter().enumerate() {
            let _: () = redis::cmd("RESTORE")
                .arg(format!("k{i}"))
                .arg(0)
                .arg(&payload)
                .arg(field)
                .arg(n)
                .query(&mut rc)
                .unwrap();
        }
        let read = |c: &mut redis::Connection, k: &str| -> i64 {
            redis::cmd("OBJECT").arg(field).arg(k).query(c).unwrap()
        };
        for (i, n) in vals.iter().enumerate() {
            let got = read(&mut rc, &format!("k{i}"));
            assert!((got - *n as i64).abs() <= 1, "redis {policy} k{i}: {got}");
        }
        save(&mut rc);
        drop(redis);
        let pdir = TempDir::new("meta-p");
        std::fs::copy(rdir.join("dump.rdb"), pdir.join("dump.rdb")).unwrap();
        let petrel = petrel_in(pdir.path(), &extra);
        let mut pc = petrel.client();
        for (i, n) in vals.iter().enumerate() {
            let got = read(&mut pc, &format!("k{i}"));
            assert!(
                (got - *n as i64).abs() <= 2,
                "petrel {policy} k{i}: {got} after loading {n}"
            );
        }
        // And back: petrel's file, and petrel's own RESTORE.
        let _: () = redis::cmd("RESTORE")
            .arg("k9")
            .arg(0)
            .arg(&payload)
            .arg(field)
            .arg(77)
            .query(&mut pc)
            .unwrap();
        std::fs::remove_file(pdir.join("dump.rdb")).unwrap();
        save(&mut pc);
        check_rdb(&pdir.join("dump.rdb"));
        let r2dir = TempDir::new("meta-r2");
        std::fs::copy(pdir.join("dump.rdb"), r2dir.join("dump.rdb")).unwrap();
        let redis2 = redis_in(r2dir.path(), &extra).unwrap();
        let mut rc2 = redis2.client();
        for (i, n) in vals.iter().chain([77].iter()).enumerate() {
            let k = if i < 3 { format!("k{i}") } else { "k9".into() };
            let got = read(&mut rc2, &k);
            assert!(
                (got - *n as i64).abs() <= 3,
                "redis {policy} {k}: {got} after petrel saved {n}"
            );
        }
    }
}
