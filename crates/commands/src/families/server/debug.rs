//! `DEBUG <subcommand> ...`, allowed by `enable-debug-command` (no | yes |
//! local). DEBUG's subcommands are not Redis subcommands (COMMAND INFO shows
//! none), so they are dispatched here by name from the table's list
//! (`CommandTable::debug`): a family adds its own (POPULATE, OBJECT,
//! SET-ACTIVE-EXPIRE...) by exposing a `pub const DEBUG: &[DebugSub]`
//! listed in `crate::registry::DEBUG_SUBCOMMANDS`.

use crate::base::errors;
use crate::kernel::ctx::Ctx;
use crate::kernel::spec::{flag, CommandSpec, DebugSub, Docs};
use crate::services::digest;

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
    DebugSub {
        name: "PANIC-WRITE",
        arity: 4,
        help: &[
            "PANIC-WRITE <key> <value>",
            "    Set <key> to <value>, then panic before the command ends (Petrel test",
            "    hook): the key's partition is stopped (its keys answer an error) and this",
            "    connection is closed; the rest of the server goes on.",
        ],
        handler: debug_panic_write,
    },
    DebugSub {
        name: "PANIC-THREAD",
        arity: 3,
        help: &[
            "PANIC-THREAD <cron|worker|acceptor|lazyfree|bgsave-writer>",
            "    Make that background thread panic (Petrel test hook): the server logs it",
            "    and exits, as it could not go on without that thread's work (lazyfree:",
            "    when it is next handed something to free). bgsave-writer: the next",
            "    BGSAVE's writer panics; that save fails and the server goes on.",
        ],
        handler: debug_panic_thread,
    },
    DebugSub {
        name: "CHANGE-REPL-ID",
        arity: 2,
        help: &[
            "CHANGE-REPL-ID",
            "    Change the replication IDs of the instance.",
            "    Dangerous: should be used only for testing the replication subsystem.",
        ],
        handler: debug_change_repl_id,
    },
    DebugSub {
        name: "CONFIG-REWRITE-FORCE-ALL",
        arity: 2,
        help: &[
            "CONFIG-REWRITE-FORCE-ALL",
            "    Like CONFIG REWRITE but writes all configuration options, including",
            "    keywords not listed in original configuration file or default values.",
        ],
        handler: debug_config_rewrite_force_all,
    },
    DebugSub {
        name: "DIGEST",
        arity: 2,
        help: &[
            "DIGEST",
            "    Output a hex signature representing the current DB content.",
        ],
        handler: debug_digest,
    },
    DebugSub {
        name: "DIGEST-VALUE",
        arity: -2,
        help: &[
            "DIGEST-VALUE <key> [<key> ...]",
            "    Output a hex signature of the values of all the specified keys.",
        ],
        handler: debug_digest_value,
    },
    DebugSub {
        name: "ERROR",
        arity: 3,
        help: &[
            "ERROR <string>",
            "    Return a Redis protocol error with <string> as message. Useful for clients",
            "    unit tests to simulate Redis errors.",
        ],
        handler: debug_error,
    },
    DebugSub {
        name: "LOG",
        arity: 3,
        help: &["LOG <message>", "    Write <message> to the server log."],
        handler: debug_log,
    },
    DebugSub {
        name: "PAUSE-CRON",
        arity: 3,
        help: &["PAUSE-CRON <0|1>", "    Stop periodic cron job processing."],
        handler: debug_pause_cron,
    },
    DebugSub {
        name: "PROTOCOL",
        arity: 3,
        help: &[
            "PROTOCOL <type>",
            "    Reply with a test value of the specified type. <type> can be: string,",
            "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
            "    true, false.",
        ],
        handler: debug_protocol,
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

fn debug_change_repl_id(ctx: &mut Ctx, _args: &[&[u8]]) {
    ctx.srv.replication.change_replid();
    ctx.ok();
}

fn debug_config_rewrite_force_all(ctx: &mut Ctx, _args: &[&[u8]]) {
    match ctx.srv.config.rewrite_with(true) {
        Ok(()) => ctx.ok(),
        Err(e) => ctx.error(&e),
    }
}

/// `DEBUG DIGEST`: the dataset digest Redis computes (see
/// `services::digest`), as a status reply.
fn debug_digest(ctx: &mut Ctx, _args: &[&[u8]]) {
    let d = digest::dataset_digest(ctx.srv);
    ctx.out.simple(digest::hex(&d));
}

/// `DEBUG DIGEST-VALUE key...`: one status reply per key; a logically
/// expired key still counts (Redis reads the table directly).
fn debug_digest_value(ctx: &mut Ctx, args: &[&[u8]]) {
    let db = ctx.client.db;
    ctx.out.array_len(args.len() - 2);
    for key in &args[2..] {
        let k = store::Key::new(key);
        let p = ctx.srv.keyspace.lock(&k);
        let d = digest::entry_value_digest(p.db(db).and_then(|d| d.find(&k)));
        drop(p);
        ctx.out.simple(digest::hex(&d));
    }
}

/// `DEBUG ERROR <string>`: an error reply of exactly that text (newlines
/// made spaces), as Redis sends it: `-<string>`.
fn debug_error(ctx: &mut Ctx, args: &[&[u8]]) {
    // The bytes as sent (CR and LF become spaces when written), as Redis.
    ctx.error_bytes(args[2]);
}

fn debug_log(ctx: &mut Ctx, args: &[&[u8]]) {
    crate::base::log::warning(&format!("DEBUG LOG: {}", String::from_utf8_lossy(args[2])));
    ctx.ok();
}

fn debug_pause_cron(ctx: &mut Ctx, args: &[&[u8]]) {
    let on = std::str::from_utf8(args[2])
        .ok()
        .and_then(|s| s.trim().parse::<i64>().ok())
        .unwrap_or(0)
        != 0;
    ctx.srv
        .cron_paused
        .store(on, std::sync::atomic::Ordering::Relaxed);
    ctx.ok();
}

/// `DEBUG PROTOCOL <type>`: Redis's test values of every reply type, as
/// each protocol can express them.
fn debug_protocol(ctx: &mut Ctx, args: &[&[u8]]) {
    let name = String::from_utf8_lossy(args[2]).to_ascii_lowercase();
    let resp3 = ctx.resp3();
    let out = &mut *ctx.out;
    match name.as_str() {
        "string" => out.bulk(b"Hello World"),
        "integer" => out.int(12345),
        // Redis's test value, not an approximation of pi.
        #[allow(clippy::approx_constant)]
        "double" => out.double(3.141),
        "bignum" => out.big_number(b"1234567999999999999999999999999999999"),
        "null" => out.null(),
        "array" | "set" | "map" => {
            match name.as_str() {
                "array" => out.array_len(3),
                "set" => out.set_len(3),
                _ => out.map_len(3),
            }
            for j in 0..3i64 {
                out.int(j);
                if name == "map" {
                    out.boolean(j == 1);
                }
            }
        }
        "attrib" => {
            if resp3 {
                out.attribute_len(1);
                out.bulk(b"key-popularity");
                out.array_len(2);
                out.bulk(b"key:123");
                out.int(90);
            }
            // Attributes are not replies: a real one follows.
            out.bulk(b"Some real reply following the attribute");
        }
        "push" => {
            if !resp3 {
                return ctx.error(crate::base::errors::ERR_RESP2_NOT_SUPPORTED);
            }
            out.push_len(2);
            out.bulk(b"server-cpu-usage");
            out.int(42);
            // A push is not a reply: a real one follows.
            out.bulk(b"Some real reply following the push reply");
        }
        "verbatim" => out.verbatim(b"txt", b"This is a verbatim\nstring"),
        "true" => out.boolean(true),
        "false" => out.boolean(false),
        _ => ctx.error(crate::base::errors::ERR_DEBUG_PROTOCOL_TYPE),
    }
}

fn debug_panic_connection(_ctx: &mut Ctx, _args: &[&[u8]]) {
    panic!("DEBUG PANIC-CONNECTION requested by the client");
}

fn debug_panic_thread(ctx: &mut Ctx, args: &[&[u8]]) {
    use crate::base::fault_hooks as h;
    let flag = match args[2].to_ascii_lowercase().as_slice() {
        b"cron" => &h::CRON,
        b"worker" => &h::WORKER,
        b"acceptor" => &h::ACCEPTOR,
        b"lazyfree" => &h::LAZYFREE,
        b"bgsave-writer" => &h::BGSAVE_WRITER,
        _ => {
            return ctx
                .error("ERR PANIC-THREAD takes cron, worker, acceptor, lazyfree or bgsave-writer")
        }
    };
    flag.store(true, std::sync::atomic::Ordering::Relaxed);
    ctx.ok();
}

/// A write that panics half way: the value is in the table, the command
/// never finishes (no notification, no reply), as a bug in a write path
/// would leave it.
fn debug_panic_write(ctx: &mut Ctx, args: &[&[u8]]) {
    let k = store::Key::new(args[2]);
    let mut p = ctx.srv.keyspace.lock(&k);
    drop(p.insert(
        ctx.client.db,
        &k,
        store::CompactValue::from_bytes(args[3]),
        None,
        ctx.now_ms,
    ));
    panic!("DEBUG PANIC-WRITE requested by the client");
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
