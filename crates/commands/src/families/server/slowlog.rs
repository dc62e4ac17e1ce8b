//! `SLOWLOG GET [count] | LEN | RESET | HELP` over [`crate::kernel::slowlog::SlowLog`],
//! which the dispatcher feeds with commands slower than
//! `slowlog-log-slower-than` microseconds.

use crate::base::errors;
use crate::kernel::ctx::Ctx;
use crate::kernel::spec::{flag, CommandSpec, Docs};

const F: u32 = flag::ADMIN | flag::LOADING | flag::STALE;

const SUBS: &[CommandSpec] = &[
    CommandSpec {
        docs: Docs::new(
            "O(N) where N is the number of entries returned",
            "Get the slow log's entries",
        ),
        ..CommandSpec::new("get", -2, F, slowlog_get)
    },
    CommandSpec {
        docs: Docs::new("O(1)", "Get the slow log's length"),
        ..CommandSpec::new("len", 2, F, slowlog_len)
    },
    CommandSpec {
        docs: Docs::new(
            "O(N) where N is the number of entries in the slowlog",
            "Clear all entries from the slow log",
        ),
        ..CommandSpec::new("reset", 2, F, slowlog_reset)
    },
    CommandSpec {
        docs: Docs::new("O(1)", "Show helpful text about the different subcommands"),
        ..CommandSpec::new("help", 2, flag::LOADING | flag::STALE, slowlog_help)
    },
];

pub const COMMANDS: &[CommandSpec] = &[CommandSpec {
    docs: Docs::new(
        "Depends on subcommand.",
        "A container for slow log commands",
    ),
    handler: None,
    subcommands: SUBS,
    ..CommandSpec::new("slowlog", -2, 0, slowlog_help)
}];

const HELP: &[&str] = &[
    "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GET [<count>]",
    "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
    "    Entries are made of:",
    "    id, timestamp, time in microseconds, arguments array, client IP and port,",
    "    client name",
    "LEN",
    "    Return the length of the slowlog.",
    "RESET",
    "    Reset the slowlog.",
    "HELP",
    "    Prints this help.",
];

fn slowlog_help(ctx: &mut Ctx, _args: &[&[u8]]) {
    ctx.reply_help(HELP);
}

fn slowlog_get(ctx: &mut Ctx, args: &[&[u8]]) {
    if args.len() > 3 {
        return ctx.error(&crate::base::errors::unknown_subcommand_or_arity(
            &String::from_utf8_lossy(args[1]),
            "SLOWLOG",
        ));
    }
    let count = match args.get(2) {
        None => 10,
        Some(a) => match crate::base::parse::parse_i64(a) {
            Some(-1) => usize::MAX,
            Some(n) if n >= 0 => n as usize,
            _ => return ctx.error(errors::ERR_COUNT_SHOULD_GREATER_THAN_EQUAL_1),
        },
    };
    let entries = ctx.srv.slowlog.get(count);
    ctx.out.array_len(entries.len());
    for e in entries {
        ctx.out.array_len(6);
        ctx.out.int(e.id as i64);
        ctx.out.int(e.unix_time);
        ctx.out.int(e.duration_us as i64);
        ctx.out.array_len(e.args.len());
        for a in &e.args {
            ctx.out.bulk(a);
        }
        ctx.out.bulk(e.peer.as_bytes());
        ctx.out.bulk(&e.name);
    }
}

fn slowlog_len(ctx: &mut Ctx, _args: &[&[u8]]) {
    ctx.out.int(ctx.srv.slowlog.len() as i64);
}

fn slowlog_reset(ctx: &mut Ctx, _args: &[&[u8]]) {
    ctx.srv.slowlog.reset();
    ctx.ok();
}
