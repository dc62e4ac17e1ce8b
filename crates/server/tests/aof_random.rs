//! Journal correctness under a randomized concurrent workload: several
//! clients on two worker threads run every write command Petrel's
//! `COMMAND` lists (the generator is `common/aof_workload.rs`; TTLs
//! relative and absolute, short TTLs that expire lazily and actively,
//! eviction, MULTI/EXEC, scripts and functions, blocking pops served by
//! other clients, random pops, streams with groups); then the AOF, loaded
//! into a fresh Petrel and into redis-server 7.0, must give the original's
//! DEBUG DIGEST. The test fails when a write command is neither generated
//! nor in `EXEMPT` with its reason.
//!
//! `AOF_RANDOM_SECS=N` runs rounds for N seconds instead of the default
//! six; `AOF_DEBUG=1` copies a failing round's AOF to /tmp/aof_debug.

#[path = "common/aof.rs"]
mod aof_util;
#[path = "common/aof_workload.rs"]
mod aof_workload;
mod common;

use aof_util::*;
use aof_workload::*;
use common::*;
use std::collections::BTreeSet;

/// Write commands the workload does not send, with the reason.
const EXEMPT: &[(&str, &str)] = &[
    (
        "flushall",
        "empties all 16 databases at once: one call ends every comparison \
         with two empty datasets (FLUSHDB, which is generated, covers the \
         same journal path per database)",
    ),
    (
        "migrate",
        "needs a second server to move keys to; its journal form (one DEL \
         of the moved keys) is checked through a replica in migrate.rs",
    ),
    (
        "restore-asking",
        "RESTORE's handler with the ASKING flag; RESTORE is generated",
    ),
];

/// Runs `clients` threads of `ops` random operations each; returns the
/// names of the commands sent.
fn workload(srv: &Server, clients: u64, ops: usize, seed: u64) -> BTreeSet<String> {
    run_clients(srv.port(), clients, ops, seed)
}

/// Touches every key of the universe in both databases used, so keys
/// whose TTL passed are gone (and journaled) before digests are compared.
fn collect_expired(srv: &Server) {
    let mut c = srv.raw();
    for db in ["0", "3"] {
        c.cmd(&["SELECT", db]);
        for kind in KINDS {
            for i in 0..KEYS {
                c.cmd(&["EXISTS", &format!("{kind}:{i}")]);
            }
        }
    }
}

fn digest(srv: &Server) -> Value {
    srv.raw().cmd(&["DEBUG", "DIGEST"])
}

fn used_memory(srv: &Server) -> u64 {
    let info = srv.raw().cmd(&["INFO", "memory"]);
    let text = String::from_utf8_lossy(info.as_bytes().unwrap()).into_owned();
    text.lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// One round: workload, rewrite, eviction, expiry, then the AOF loaded
/// into Petrel and redis-server. Returns (commands sent, Petrel's write
/// commands).
fn check_round(seed: u64, preamble: &str, ops: usize) -> (BTreeSet<String>, BTreeSet<String>) {
    let petrel = Server::start(&[
        ("appendonly", "yes"),
        ("aof-use-rdb-preamble", preamble),
        ("enable-debug-command", "yes"),
        ("maxmemory-policy", "allkeys-random"),
    ]);
    let writes = write_commands(&petrel.raw().cmd(&["COMMAND"]));
    let mut seen = workload(&petrel, 4, ops, seed);
    // A rewrite in the middle: the rest goes to the new incremental file.
    petrel.raw().cmd(&["BGREWRITEAOF"]);
    // Eviction: a limit a little above what is used now.
    let used = used_memory(&petrel);
    petrel.raw().cmd(&[
        "CONFIG",
        "SET",
        "maxmemory",
        &(used + 64 * 1024).to_string(),
    ]);
    seen.extend(workload(&petrel, 4, ops, seed.rotate_left(17)));
    petrel.raw().cmd(&["CONFIG", "SET", "maxmemory", "0"]);
    std::thread::sleep(Duration::from_millis(60));
    collect_expired(&petrel);
    let info = petrel.raw().cmd(&["INFO", "stats"]);
    let stats = String::from_utf8_lossy(info.as_bytes().unwrap()).into_owned();
    wait_rewrite(|| {
        String::from_utf8_lossy(
            petrel
                .raw()
                .cmd(&["INFO", "persistence"])
                .as_bytes()
                .unwrap(),
        )
        .into_owned()
    });
    let want = digest(&petrel);
    // One copy of the files, taken with the digest: both loaders read
    // exactly the same bytes.
    let snap = TempDir::new("aofsnap");
    copy_dir(&aof_dir(petrel.dir()), &snap.path().join("a"));
    let dir = snap.path().join("a");
    let mut loaded: Vec<Server> = Vec::new();
    for kind in [Kind::Petrel, Kind::Redis] {
        let Some((_copy, srv)) = start_on_aof_copy(kind, &dir, "aofrand") else {
            continue;
        };
        // Keys whose TTL passed by now stay in DEBUG DIGEST until expired
        // (the active cycle's timing differs): drop them as done on the
        // original.
        collect_expired(&srv);
        if digest(&srv) != want {
            if std::env::var("AOF_DEBUG").is_ok() {
                let _ = std::process::Command::new("cp")
                    .args(["-r", &dir.display().to_string(), "/tmp/aof_debug"])
                    .status();
            }
            let keyspace = |s: &Server| {
                let v = s.raw().cmd(&["INFO", "keyspace"]);
                String::from_utf8_lossy(v.as_bytes().unwrap_or_default()).replace("\r\n", " ")
            };
            assert_eq!(digest(&petrel), want, "the original changed after the copy");
            if let Some(first) = loaded.first() {
                assert_same(
                    first,
                    &srv,
                    &format!("seed {seed}: Petrel and {kind:?} loads"),
                );
            }
            assert_same(
                &petrel,
                &srv,
                &format!(
                    "seed {seed} preamble {preamble} {kind:?} (digests {:?} / {:?}, original {} loaded {})",
                    digest(&petrel),
                    digest(&srv),
                    keyspace(&petrel),
                    keyspace(&srv)
                ),
            );
        }
        assert_eq!(
            digest(&srv),
            want,
            "seed {seed} preamble {preamble}: {kind:?} loaded another dataset\n{}",
            stats
                .lines()
                .filter(|l| l.starts_with("evicted_keys") || l.starts_with("expired_keys"))
                .collect::<Vec<_>>()
                .join(" ")
        );
        loaded.push(srv);
    }
    (seen, writes)
}

/// Fails when a write command of Petrel's COMMAND reply was neither sent
/// nor exempted (and when an exemption is not a write command any more).
fn assert_covered(seen: &BTreeSet<String>, writes: &BTreeSet<String>) {
    let exempt: BTreeSet<String> = EXEMPT.iter().map(|(n, _)| n.to_string()).collect();
    let missing: Vec<&String> = writes
        .iter()
        .filter(|w| !seen.contains(*w) && !exempt.contains(*w))
        .collect();
    assert!(
        missing.is_empty(),
        "write commands neither generated nor exempted: {missing:?}"
    );
    let stale: Vec<&String> = exempt.iter().filter(|e| !writes.contains(*e)).collect();
    assert!(
        stale.is_empty(),
        "exemptions that are not write commands: {stale:?}"
    );
    let covered = writes.iter().filter(|w| seen.contains(*w)).count();
    eprintln!(
        "aof_random: {covered}/{} write commands generated, {} exempt",
        writes.len(),
        exempt.len()
    );
}

/// `AOF_RANDOM_SECS=N` keeps running rounds (new seeds, larger rounds)
/// for at least N seconds; the default is six rounds of 2500 steps per
/// client and phase.
#[test]
fn random_workload_round_trips_through_the_aof() {
    let long: u64 = std::env::var("AOF_RANDOM_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let start = std::time::Instant::now();
    let ops = if long > 0 { 3000 } else { 2500 };
    let mut seed = 0x5eed_1234_u64;
    let mut rounds = 0u64;
    let mut seen = BTreeSet::new();
    let writes = loop {
        let (s, w) = check_round(
            seed,
            if rounds.is_multiple_of(2) {
                "yes"
            } else {
                "no"
            },
            ops,
        );
        seen.extend(s);
        rounds += 1;
        seed = seed
            .wrapping_mul(0x2545_F491_4F6C_DD1D)
            .wrapping_add(rounds);
        let done = if long > 0 {
            start.elapsed().as_secs() >= long
        } else {
            rounds >= 6
        };
        if done {
            break w;
        }
    };
    eprintln!(
        "aof_random: {rounds} rounds of 2x4x{ops} steps in {:?}",
        start.elapsed()
    );
    assert_covered(&seen, &writes);
}
