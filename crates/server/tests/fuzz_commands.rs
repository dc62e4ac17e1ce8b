//! Command-level fuzzing: random commands with random arguments drawn from
//! the command table (names, subcommands, arities, key positions, the
//! documented tokens of each command) sent to a running petrel over
//! several RESP2 and RESP3 connections, with pipelines and MULTI/EXEC
//! mixed in. The server must never panic, never close a connection (but
//! after QUIT), never leave a command without a reply, and answer valid
//! RESP of the connection's protocol. See `cmdfuzz/` for what is generated
//! and checked.
//!
//! * `random_commands` (in the suite): a few seeds, a few seconds each.
//! * `long_run` (ignored): `PETREL_CMDFUZZ_SECS=600 cargo test -p server
//!   --test fuzz_commands -- --ignored long_run --nocapture`.
//! * `differential_with_redis` (in the suite): the same commands to
//!   petrel and redis-server 7.0 over one connection each, replies
//!   compared (normalisation documented in `cmdfuzz/compare.rs`), and
//!   the datasets (DEBUG DIGEST) after every write; fails on any
//!   difference not listed in `compare::KNOWN` (`PETREL_DIFFFUZZ_COUNT`
//!   commands, default 6000; `PETREL_DIFFFUZZ_SEED`).
//! * `differential_long` (ignored): the same for `PETREL_DIFFFUZZ_SECS`
//!   (default 600): `PETREL_DIFFFUZZ_SECS=600 cargo test -p server
//!   --test fuzz_commands -- --ignored differential_long --nocapture`.
//!
//! `PETREL_CMDFUZZ_SEED` replays one seed; `PETREL_CMDFUZZ_CONNS` sets the
//! number of connections (1 makes a run deterministic).

mod cmdfuzz;
mod common;

use cmdfuzz::compare;
use cmdfuzz::gen::{ConnState, Generator};
use cmdfuzz::runner::{self, check_types, Config};
use cmdfuzz::values::Rng;
use common::*;

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|s| {
        let s = s.trim();
        match s.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16).ok(),
            None => s.parse().ok(),
        }
    })
}

/// Runs one seed on a fresh server and panics with every failure found.
fn fuzz_one(gen: &Generator, seed: u64, secs: u64) -> runner::Outcome {
    let conns = env_u64("PETREL_CMDFUZZ_CONNS").unwrap_or(6) as usize;
    // A RESP3 connection that subscribed is a Pub/Sub client, whose
    // replies count against the pubsub output buffer limit (32 MB, as in
    // Redis): a pipeline of LRANGEs over lists of 100 KB elements passes
    // it, and the server closes the connection as Redis would.
    let mut s = TestServer::start(&[("client-output-buffer-limit", "pubsub 0 0 0")]);
    let cfg = Config {
        seed,
        duration: Duration::from_secs(secs),
        conns,
        pid: Some(s.pid()),
    };
    let t0 = std::time::Instant::now();
    let out = runner::run(s.port(), gen, &cfg);
    let ran = t0.elapsed();
    let log = s.log();
    let alive = s.is_alive();
    let mut problems = out.failures.clone();
    if !alive {
        problems.push("the server died".into());
    }
    for needle in ["Panic while serving", "panicked at"] {
        if log.contains(needle) {
            problems.push(format!("the log has \"{needle}\""));
        }
    }
    let errors_pct = (100 * out.errors).checked_div(out.commands).unwrap_or(0);
    let distinct = out.per_command.len();
    eprintln!(
        "cmdfuzz seed {seed:#x}: {} commands ({errors_pct}% errors) of {distinct}/{} kinds in {ran:.1?} over {conns} connections, {} sessions, {} pushes, {} blocked commands unblocked",
        out.commands,
        gen.cmds.len(),
        out.sessions,
        out.pushes,
        out.unblocked
    );
    for (took, cmd) in &out.slowest {
        eprintln!("  slow: {took:.1?} {cmd}");
    }
    if std::env::var("PETREL_CMDFUZZ_SHOW_STALL").is_ok_and(|v| v == "1") {
        eprintln!(
            "{} stalls; the first:\n{}",
            out.stalls,
            out.diagnosis.as_deref().unwrap_or("-")
        );
    }
    assert!(
        problems.is_empty(),
        "cmdfuzz seed {seed:#x} (replay: PETREL_CMDFUZZ_SEED={seed:#x}): {} problem(s):\n{}\n---- at the first stall ----\n{}\n---- server log ----\n{}",
        problems.len(),
        problems.join("\n\n"),
        out.diagnosis.as_deref().unwrap_or("(no hang)"),
        tail(&log, 60)
    );
    s.assert_alive();
    out
}

fn tail(log: &str, lines: usize) -> String {
    let all: Vec<&str> = log.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

#[test]
fn random_commands() {
    let gen = Generator::new();
    // Two seeds of 6 s, beside `differential_with_redis`'s ~16 s: the
    // file stays near 30 s in the suite; `long_run` is the long mode.
    let secs = env_u64("PETREL_CMDFUZZ_SECS").unwrap_or(6);
    let seeds: Vec<u64> = match env_u64("PETREL_CMDFUZZ_SEED") {
        Some(s) => vec![s],
        None => vec![0xC0FF_EE01, 0xC0FF_EE02],
    };
    for seed in seeds {
        let out = fuzz_one(&gen, seed, secs);
        assert!(out.commands > 500, "only {} commands", out.commands);
    }
}

#[test]
#[ignore = "long mode: PETREL_CMDFUZZ_SECS (default 600)"]
fn long_run() {
    let gen = Generator::new();
    let secs = env_u64("PETREL_CMDFUZZ_SECS").unwrap_or(600);
    let seed = env_u64("PETREL_CMDFUZZ_SEED").unwrap_or(0x10C0_FFEE);
    let out = fuzz_one(&gen, seed, secs);
    let never: Vec<String> = gen
        .cmds
        .iter()
        .map(|c| c.full_name())
        .filter(|n| !out.per_command.contains_key(n))
        .collect();
    eprintln!("commands never sent: {never:?}");
}

/// Petrel and redis-server 7.0 started alike for the differential run.
fn diff_pair() -> Option<(TestServer, Server)> {
    let opts = Opts::new(&[("enable-debug-command", "yes")]);
    let r = RefRedis::start_with(opts.clone())?;
    Some((TestServer::start_with(opts), r))
}

/// Runs the differential fuzzer and fails on every difference not in
/// `compare::KNOWN`.
fn differential(seed: u64, limit: compare::Limit) {
    let gen = Generator::new();
    let Some((mut p, r)) = diff_pair() else {
        return;
    };
    let t0 = std::time::Instant::now();
    let c = compare::compare(p.port(), r.port(), &gen, seed, limit);
    let (new, known) = compare::report(&c);
    eprintln!(
        "differential seed {seed:#x}: {} commands of {} kinds compared in {:.1?} ({:?}); petrel-only: {:?}; {} known difference(s)",
        c.commands,
        c.distinct.len(),
        t0.elapsed(),
        c.per_norm,
        c.petrel_only.keys().collect::<Vec<_>>(),
        known.len()
    );
    for k in &known {
        eprintln!("known: {k}");
    }
    p.assert_alive();
    assert!(
        new.is_empty(),
        "{} difference(s) with redis-server (replay: PETREL_DIFFFUZZ_SEED={seed:#x}):\n{}",
        new.len(),
        new.join("\n")
    );
}

/// The same random commands to petrel and redis-server 7.0, replies
/// compared (see `cmdfuzz/compare.rs` for the normalisation).
#[test]
fn differential_with_redis() {
    let seed = env_u64("PETREL_DIFFFUZZ_SEED").unwrap_or(0x00C0_4ABE);
    let n = env_u64("PETREL_DIFFFUZZ_COUNT").unwrap_or(6_000);
    differential(seed, compare::Limit::Commands(n));
}

/// Long mode: `PETREL_DIFFFUZZ_SECS=600 cargo test -p server --test
/// fuzz_commands -- --ignored differential_long --nocapture`.
#[test]
#[ignore = "long mode: PETREL_DIFFFUZZ_SECS (default 600)"]
fn differential_long() {
    let seed = env_u64("PETREL_DIFFFUZZ_SEED").unwrap_or(0x10D1_FF00);
    let secs = env_u64("PETREL_DIFFFUZZ_SECS").unwrap_or(600);
    differential(seed, compare::Limit::Time(Duration::from_secs(secs)));
}

/// Every command model produces calls that name it, for any state.
#[test]
fn generator_names_every_command() {
    let gen = Generator::new();
    assert!(gen.cmds.len() > 200, "{} models", gen.cmds.len());
    let mut rng = Rng(1);
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..200_000 {
        let state = ConnState {
            resp3: rng.one_in(2),
            in_multi: rng.one_in(2),
            maybe_subscribed: false,
        };
        let (m, argv) = gen.call(&mut rng, state);
        assert!(!argv.is_empty());
        assert!(m.words[0].as_bytes().eq_ignore_ascii_case(&argv[0]));
        seen.insert(m.full_name());
    }
    let missing: Vec<String> = gen
        .cmds
        .iter()
        .map(|c| c.full_name())
        .filter(|n| !seen.contains(n))
        .collect();
    assert!(missing.is_empty(), "never generated: {missing:?}");
}

#[test]
fn reply_type_check() {
    let m = Value::Map(vec![(Value::bulk("a"), Value::Int(1))]);
    assert!(check_types(&m, true).is_ok());
    assert!(check_types(&m, false).is_err());
    assert!(check_types(&Value::Array(vec![Value::NullBulk]), false).is_ok());
    assert!(check_types(&Value::Array(vec![Value::NullBulk]), true).is_err());
    assert!(check_types(&Value::Array(vec![Value::Double(b"1".to_vec())]), false).is_err());
}

/// Redis 7.0 (and petrel) write a RESP3 client's own keyspace
/// notifications inside its EXEC reply; the fuzzer's reader takes them
/// out of the array.
#[test]
fn pushes_inside_an_exec_reply() {
    let bytes = b"*2\r\n>4\r\n$8\r\npmessage\r\n$1\r\n*\r\n$16\r\n__keyspace@0__:x\r\n$3\r\ndel\r\n:1\r\n+PONG\r\n+next\r\n";
    let (v, n) = runner::parse_skipping_pushes(bytes).unwrap().unwrap();
    assert_eq!(v, Value::Array(vec![Value::Int(1), Value::simple("PONG")]));
    assert_eq!(&bytes[n..], b"+next\r\n");
    assert_eq!(runner::parse_skipping_pushes(&bytes[..20]).unwrap(), None);
    let map = b"%1\r\n$1\r\na\r\n>1\r\n$1\r\nx\r\n*0\r\n";
    let (v, _) = runner::parse_skipping_pushes(map).unwrap().unwrap();
    assert_eq!(
        v,
        Value::Map(vec![(Value::bulk("a"), Value::Array(vec![]))])
    );
}
