//! `DEBUG <subcommand> ...`, allowed by `enable-debug-command` (no | yes |
//! local). DEBUG's subcommands are not Redis subcommands (COMMAND INFO shows
//! none), so they are dispatched here by name from [`DEBUG_FAMILIES`]:
//! another module adds its own (POPULATE, OBJECT, SET-ACTIVE-EXPIRE...) by
//! exposing a `pub const DEBUG: &[DebugSub]` and listing it there.

use crate::ctx::Ctx;
use crate::spec::{flag, CommandSpec, Docs};

/// One DEBUG subcommand.
pub struct DebugSub {
    /// Upper-case name as shown in DEBUG HELP.
    pub name: &'static str,
    /// Like a command arity, counting `DEBUG` and the subcommand name:
    /// positive = exact, negative = at least.
    pub arity: i32,
    /// Help lines: the usage line, then indented explanations.
    pub help: &'static [&'static str],
    pub handler: fn(&mut Ctx, &[&[u8]]),
}

/// Every module's DEBUG subcommands, in DEBUG HELP order.
pub const DEBUG_FAMILIES: &[&[DebugSub]] = &[CORE, crate::keys::DEBUG];

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

pub const ERR_NOT_ALLOWED: &str = "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.";

fn debug(ctx: &mut Ctx, args: &[&[u8]]) {
    if !ctx
        .settings
        .enable_debug_command
        .allows(ctx.client.is_local)
    {
        return ctx.error(ERR_NOT_ALLOWED);
    }
    if crate::util::eq_ic(args[1], "HELP") {
        return debug_help(ctx);
    }
    let found = DEBUG_FAMILIES
        .iter()
        .flat_map(|f| f.iter())
        .find(|s| crate::util::eq_ic(args[1], s.name));
    match found {
        Some(sub) if arity_ok(sub.arity, args.len()) => (sub.handler)(ctx, args),
        _ => ctx.error(&format!(
            "ERR unknown subcommand or wrong number of arguments for '{}'. Try DEBUG HELP.",
            String::from_utf8_lossy(args[1])
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
    for fam in DEBUG_FAMILIES {
        for s in fam.iter() {
            lines.extend_from_slice(s.help);
        }
    }
    lines.push("HELP");
    lines.push("    Prints this help.");
    crate::client_cmd::reply_help(ctx, &lines);
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

    #[test]
    fn names_are_unique_and_upper_case() {
        let mut seen = std::collections::HashSet::new();
        for s in DEBUG_FAMILIES.iter().flat_map(|f| f.iter()) {
            assert_eq!(s.name, s.name.to_ascii_uppercase());
            assert!(seen.insert(s.name), "duplicate DEBUG {}", s.name);
        }
    }
}
