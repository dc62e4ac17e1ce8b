//! MEMORY USAGE: the exact bytes a key costs (its share of the table slots
//! plus the heap blocks it owns, by allocator size class), in O(1).
//! Other MEMORY subcommands (STATS, DOCTOR, MALLOC-STATS, PURGE) belong to
//! the memory-accounting work and are added here as they come.

use store::Key;

use crate::ctx::Ctx;
use crate::spec::{flag, CommandSpec, Docs, KeyPos};
use crate::util::{eq_ic, ERR_SYNTAX};

const SUBS: &[CommandSpec] = &[
    CommandSpec {
        acl: &["read", "slow"],
        keys: KeyPos::range(2, 2, 1),
        docs: Docs::new(
            "server",
            "4.0.0",
            "O(N) where N is the number of samples.",
            "Estimates the memory usage of a key.",
        ),
        ..CommandSpec::new("memory|usage", -3, flag::READONLY, usage)
    },
    CommandSpec {
        acl: &["read", "slow"],
        docs: Docs::new(
            "server",
            "7.0.0",
            "O(P*N) where P is the number of keyspace partitions and N the count.",
            "Returns the largest keys of the database by memory usage (Petrel).",
        ),
        ..CommandSpec::new(
            "memory|topkeys",
            -2,
            flag::READONLY,
            crate::topkeys::topkeys,
        )
    },
    CommandSpec {
        acl: &["slow"],
        docs: Docs::new(
            "server",
            "4.0.0",
            "O(1)",
            "Returns helpful text about the different subcommands.",
        ),
        ..CommandSpec::new("memory|help", 2, flag::LOADING | flag::STALE, help)
    },
];

pub const COMMANDS: &[CommandSpec] = &[CommandSpec {
    docs: Docs::new(
        "server",
        "4.0.0",
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
        "USAGE <key> [SAMPLES <count>]",
        "    Return memory in bytes used by <key> and its value. Nested values are",
        "    sampled up to <count> times (default: 5, 0 means sample all).",
        crate::topkeys::HELP[0],
        crate::topkeys::HELP[1],
        crate::topkeys::HELP[2],
        "HELP",
        "    Prints this help.",
    ];
    crate::client_cmd::reply_help(ctx, &lines);
}
