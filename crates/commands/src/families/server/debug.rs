//! `DEBUG <subcommand> ...`, allowed by `enable-debug-command` (no | yes |
//! local). DEBUG's subcommands are not Redis subcommands (COMMAND INFO shows
//! none), so they are dispatched here by name from the table's list
//! (`CommandTable::debug`): a family adds its own (POPULATE, OBJECT,
//! SET-ACTIVE-EXPIRE...) by exposing a `pub const DEBUG: &[DebugSub]`
//! listed in `crate::registry::DEBUG_SUBCOMMANDS`.

use crate::base::errors;
use crate::kernel::ctx::Ctx;
use crate::kernel::spec::{flag, CommandSpec, DebugSub, Docs};

/// DEBUG subcommands of the server core.
pub const CORE: &[DebugSub] = &[
    DebugSub {
        name: "SLEEP",
        arity: 3,
        help: &[
            "SLEEP <seconds>",
            "    Stop the server for <seconds>. Decimals allowed.",
        ],
        handler: debug_sleep,
    },
    DebugSub {
        name: "PANIC-CONNECTION",
        arity: 2,
        help: &[
            "PANIC-CONNECTION",
            "    Panic while serving this connection (Petrel test hook): the server logs",
            "    it and closes this connection only.",
        ],
        handler: debug_panic_connection,
    },
];

pub const COMMANDS: &[CommandSpec] = &[CommandSpec {
    acl: &["admin", "slow", "dangerous"],
    docs: Docs::new(
        "Depends on subcommand.",
        "A container for debugging commands",
    ),
    ..CommandSpec::new(
        "debug",
        -2,
        flag::ADMIN | flag::NOSCRIPT | flag::LOADING | flag::STALE,
        debug,
    )
}];

fn debug(ctx: &mut Ctx, args: &[&[u8]]) {
    if !ctx
        .settings
        .enable_debug_command
        .allows(ctx.client.is_local)
    {
        return ctx.error(errors::ERR_DEBUG_NOT_ALLOWED);
    }
    if crate::base::parse::eq_ic(args[1], "HELP") {
        return debug_help(ctx);
    }
    let found = ctx
        .srv
        .table
        .debug
        .iter()
        .find(|s| crate::base::parse::eq_ic(args[1], s.name));
    match found {
        Some(sub) if arity_ok(sub.arity, args.len()) => (sub.handler)(ctx, args),
        _ => ctx.error(&crate::base::errors::unknown_subcommand_or_arity(
            &String::from_utf8_lossy(args[1]),
            "DEBUG",
        )),
    }
}

fn arity_ok(arity: i32, argc: usize) -> bool {
    if arity >= 0 {
        argc == arity as usize
    } else {
        argc >= (-arity) as usize
    }
}

fn debug_help(ctx: &mut Ctx) {
    let mut lines: Vec<&str> =
        vec!["DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"];
    for s in &ctx.srv.table.debug {
        lines.extend_from_slice(s.help);
    }
    lines.push("HELP");
    lines.push("    Prints this help.");
    ctx.reply_help(&lines);
}

/// `DEBUG SLEEP <seconds>`: blocks this worker thread (as Redis blocks its
/// event loop). Like Redis's `strtod`, a non-number sleeps 0 seconds.
fn debug_sleep(ctx: &mut Ctx, args: &[&[u8]]) {
    let secs = std::str::from_utf8(args[2])
        .ok()
        .and_then(|s| leading_float(s.trim_start()))
        .unwrap_or(0.0);
    if secs > 0.0 && secs.is_finite() {
        std::thread::sleep(std::time::Duration::from_secs_f64(secs));
    }
    ctx.ok();
}

/// The longest prefix of `s` that parses as a float (strtod-like).
fn leading_float(s: &str) -> Option<f64> {
    (1..=s.len())
        .rev()
        .filter(|&i| s.is_char_boundary(i))
        .find_map(|i| s[..i].parse::<f64>().ok())
}

fn debug_panic_connection(_ctx: &mut Ctx, _args: &[&[u8]]) {
    panic!("DEBUG PANIC-CONNECTION requested by the client");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strtod_like() {
        assert_eq!(leading_float("0.5"), Some(0.5));
        assert_eq!(leading_float("2abc"), Some(2.0));
        assert_eq!(leading_float("abc"), None);
    }
}
