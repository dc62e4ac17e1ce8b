//! The MEMORY command.
//!
//! * USAGE: the exact bytes a key costs (its share of the table slots plus
//!   the heap blocks it owns, by allocator size class), in O(1); SAMPLES is
//!   accepted and ignored.
//! * STATS and DOCTOR: Redis's fields and report, from
//!   [`crate::services::memory`], followed by Petrel's own breakdown.
//! * MALLOC-STATS and PURGE: the allocator's report and purge, through the
//!   [`crate::kernel::memprobe::MemProbe`] the binary installs (glibc stand-ins without it).

use store::Key;

use crate::base::errors;
use crate::base::errors::ERR_SYNTAX;
use crate::base::parse::eq_ic;
use crate::kernel::ctx::Ctx;
use crate::kernel::spec::{flag, CommandSpec, Docs, KeyPos};
use crate::services::memory::MemOverhead;

const SUBS: &[CommandSpec] = &[
    CommandSpec {
        acl: &["read", "slow"],
        keys: KeyPos::range(2, 2, 1),
        docs: Docs::new(
            "O(N) where N is the number of samples.",
            "Estimate the memory usage of a key",
        ),
        ..CommandSpec::new("memory|usage", -3, flag::READONLY, usage)
    },
    CommandSpec {
        acl: &["read", "slow"],
        docs: Docs::petrel(
            "server",
            "7.0.0",
            "O(P*N) where P is the number of keyspace partitions and N the count.",
            "Returns the largest keys of the database by memory usage (Petrel).",
        ),
        ..CommandSpec::new(
            "memory|topkeys",
            -2,
            flag::READONLY,
            crate::families::server::topkeys::topkeys,
        )
    },
    CommandSpec {
        acl: &["slow"],
        docs: Docs::new("O(1)", "Show helpful text about the different subcommands"),
        ..CommandSpec::new("memory|help", 2, flag::LOADING | flag::STALE, help)
    },
    CommandSpec {
        acl: &["slow"],
        docs: Docs::new(
            "Depends on how much memory is allocated, could be slow",
            "Show allocator internal stats",
        ),
        ..CommandSpec::new("memory|malloc-stats", 2, 0, malloc_stats)
    },
    CommandSpec {
        acl: &["slow"],
        docs: Docs::new("O(1)", "Show memory usage details"),
        ..CommandSpec::new("memory|stats", 2, 0, stats)
    },
    CommandSpec {
        acl: &["slow"],
        docs: Docs::new("O(1)", "Outputs memory problems report"),
        ..CommandSpec::new("memory|doctor", 2, 0, doctor)
    },
    CommandSpec {
        acl: &["slow"],
        docs: Docs::new(
            "Depends on how much memory is allocated, could be slow",
            "Ask the allocator to release memory",
        ),
        ..CommandSpec::new("memory|purge", 2, 0, purge)
    },
];

pub const COMMANDS: &[CommandSpec] = &[CommandSpec {
    docs: Docs::new(
        "Depends on subcommand.",
        "A container for memory diagnostics commands.",
    ),
    handler: None,
    subcommands: SUBS,
    ..CommandSpec::new("memory", -2, 0, help)
}];

fn usage(ctx: &mut Ctx, args: &[&[u8]]) {
    let mut j = 3;
    while j < args.len() {
        if eq_ic(args[j], "samples") && j + 1 < args.len() {
            let Some(n) = ctx.parse_i64(args[j + 1]) else {
                return;
            };
            if n < 0 {
                return ctx.error(ERR_SYNTAX);
            }
            j += 2;
        } else {
            return ctx.error(ERR_SYNTAX);
        }
    }
    let k = Key::new(args[2]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let n = srv.keyspace.lock(&k).memory_usage(db, &k, now);
    match n {
        Some(n) => ctx.out.int(n as i64),
        None => ctx.out.null_bulk(),
    }
}

fn help(ctx: &mut Ctx, _args: &[&[u8]]) {
    let lines = [
        "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "DOCTOR",
        "    Return memory problems reports.",
        "MALLOC-STATS",
        "    Return internal statistics report from the memory allocator.",
        "PURGE",
        "    Attempt to purge dirty pages for reclamation by the allocator.",
        "STATS",
        "    Return information about the memory usage of the server.",
        "USAGE <key> [SAMPLES <count>]",
        "    Return memory in bytes used by <key> and its value. Nested values are",
        "    sampled up to <count> times (default: 5, 0 means sample all).",
        crate::families::server::topkeys::HELP[0],
        crate::families::server::topkeys::HELP[1],
        crate::families::server::topkeys::HELP[2],
        "HELP",
        "    Prints this help.",
    ];
    ctx.reply_help(&lines);
}

fn malloc_stats(ctx: &mut Ctx, _args: &[&[u8]]) {
    let text = (crate::kernel::memprobe::probe().malloc_stats)();
    ctx.out.verbatim(b"txt", text.as_bytes());
}

fn purge(ctx: &mut Ctx, _args: &[&[u8]]) {
    if (crate::kernel::memprobe::probe().purge)() {
        ctx.out.simple("OK");
    } else {
        ctx.error(errors::ERR_ERROR_PURGING_DIRTY_PAGES);
    }
}

fn doctor(ctx: &mut Ctx, _args: &[&[u8]]) {
    let m = MemOverhead::now(ctx.srv);
    let text = crate::services::memory::doctor_report(&m);
    ctx.out.verbatim(b"txt", text.as_bytes());
}

/// MEMORY STATS: Redis 7.0's fields in its order, then `petrel.*`.
fn stats(ctx: &mut Ctx, _args: &[&[u8]]) {
    let srv = ctx.srv;
    let m = MemOverhead::now(srv);
    let mut ints: Vec<(&str, i64)> = vec![
        ("peak.allocated", m.peak as i64),
        ("total.allocated", m.used as i64),
        ("startup.allocated", m.startup as i64),
        ("replication.backlog", m.repl_backlog as i64),
        ("clients.slaves", m.replica_buffers as i64),
        ("clients.normal", m.clients_normal as i64),
        ("cluster.links", 0),
        ("aof.buffer", 0),
        ("lua.caches", srv.scripting.counts().scripts_bytes as i64),
        (
            "functions.caches",
            srv.scripting.counts().functions_bytes as i64,
        ),
    ];
    let mut n = ints.len() + m.dbs.len() + 17;
    let extra = petrel_fields(srv, &m);
    n += extra.len();
    ctx.out.map_len(n);
    for (k, v) in ints.drain(..) {
        ctx.out.bulk(k);
        ctx.out.int(v);
    }
    for (d, t) in &m.dbs {
        ctx.out.bulk(format!("db.{d}"));
        ctx.out.map_len(3);
        ctx.out.bulk("overhead.hashtable.main");
        ctx.out.int(t.bytes as i64);
        ctx.out.bulk("overhead.hashtable.expires");
        ctx.out.int(0);
        // 0 by design: the hash slot is the top bits of the table position.
        ctx.out.bulk("overhead.hashtable.slot-to-keys");
        ctx.out.int(0);
    }
    let pairs_i = |ctx: &mut Ctx, k: &str, v: i64| {
        ctx.out.bulk(k);
        ctx.out.int(v);
    };
    let pairs_d = |ctx: &mut Ctx, k: &str, v: f64| {
        ctx.out.bulk(k);
        ctx.out.double(v);
    };
    pairs_i(ctx, "overhead.total", m.overhead_total() as i64);
    pairs_i(ctx, "keys.count", m.keys() as i64);
    pairs_i(ctx, "keys.bytes-per-key", m.bytes_per_key() as i64);
    pairs_i(ctx, "dataset.bytes", m.dataset() as i64);
    pairs_d(ctx, "dataset.percentage", m.dataset_perc());
    pairs_d(ctx, "peak.percentage", m.peak_perc());
    pairs_i(ctx, "allocator.allocated", m.alloc.allocated as i64);
    pairs_i(ctx, "allocator.active", m.alloc.active as i64);
    pairs_i(ctx, "allocator.resident", m.alloc.resident as i64);
    pairs_d(ctx, "allocator-fragmentation.ratio", m.allocator_frag());
    pairs_i(
        ctx,
        "allocator-fragmentation.bytes",
        m.allocator_frag_bytes(),
    );
    pairs_d(ctx, "allocator-rss.ratio", m.allocator_rss());
    pairs_i(ctx, "allocator-rss.bytes", m.allocator_rss_bytes());
    pairs_d(ctx, "rss-overhead.ratio", m.rss_overhead());
    pairs_i(ctx, "rss-overhead.bytes", m.rss_overhead_bytes());
    pairs_d(ctx, "fragmentation", m.fragmentation());
    pairs_i(ctx, "fragmentation.bytes", m.fragmentation_bytes());
    for (k, v) in extra {
        pairs_i(ctx, &k, v);
    }
}

/// Petrel's breakdown (integers, bytes unless the name says otherwise).
fn petrel_fields(srv: &crate::kernel::server::Server, m: &MemOverhead) -> Vec<(String, i64)> {
    let mut v: Vec<(String, i64)> = Vec::new();
    let mut push = |k: &str, n: u64| v.push((format!("petrel.{k}"), n as i64));
    let (mut bytes, mut dir, mut slots, mut keys, mut ttl) = (0, 0, 0, 0, 0);
    let (mut segments, mut depth) = (0, 0);
    for (_, t) in &m.dbs {
        segments += t.segments as u64;
        depth = depth.max(t.max_global_depth as u64);
        bytes += t.bytes as u64;
        dir += t.directory_bytes as u64;
        slots += t.slots as u64;
        keys += t.keys as u64;
        ttl += t.expires as u64;
    }
    push("keyspace.table.bytes", bytes);
    push("keyspace.table.directory.bytes", dir);
    push("keyspace.table.segments.bytes", bytes - dir);
    push("keyspace.table.segments", segments);
    push("keyspace.table.max-global-depth", depth);
    push("keyspace.table.slots", slots);
    push("keyspace.table.empty-slots", slots.saturating_sub(keys));
    push(
        "keyspace.table.bytes-per-key",
        bytes.checked_div(keys).unwrap_or(0),
    );
    push("keys.with-ttl", ttl);
    push("ttl.index.bytes", 0);
    push("clients.count", m.clients.count);
    push("clients.query-buffers", m.clients.query_buffers);
    push("clients.output-buffers", m.clients.output_buffers);
    push("clients.argv", m.clients.argv);
    push("clients.structs", m.clients.structs);
    push("lazyfree.pending-objects", srv.lazyfree.pending());
    // Heap bytes owned by the values of each type (by allocator size
    // class; the table slots are in keyspace.table.bytes), kept exact by the
    // store's size statistics. Inline strings own none.
    for (k, n) in crate::services::keysizes::bytes_by_type(srv) {
        let t = k.trim_start_matches("keys.bytes.");
        v.push((format!("petrel.values.heap-bytes.{t}"), n as i64));
    }
    // String values stored inline in their slot (counted in the table's
    // bytes above, no heap block of their own).
    v.push((
        "petrel.strings.inline-bytes".into(),
        crate::services::keysizes::inline_string_bytes(srv) as i64,
    ));
    v
}
