//! Scripting: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO, SCRIPT, FUNCTION, FCALL
//! and FCALL_RO, on the Lua engines of crate `scripting` (their state is
//! `kernel::scripting`).
//!
//! * [`eval`]: scripts by body or SHA, and the script cache (SCRIPT).
//! * [`function`]: function libraries (FUNCTION) and FCALL.
//! * [`host`]: one run — Redis's checks before it, the `Host` through
//!   which `redis.call` reaches `runtime::script_call`, the busy hook.
//! * FUNCTION DUMP / RESTORE payloads are framed by `rdb::functions`.
//!
//! Atomicity: a run holds every keyspace partition; dispatch keeps every
//! other command out while a script runs (the `RUNS_SCRIPT` flag and the
//! gate of `kernel::scripting`), answering `-BUSY` past
//! `busy-reply-threshold`.

mod eval;
mod function;
mod host;

use crate::kernel::spec::{flag, CommandSpec, Docs};

/// Keys of `CMD script numkeys key... arg...`.
fn script_keys(args: &[&[u8]]) -> Option<Vec<usize>> {
    let n = crate::base::parse::parse_i64(args.get(2)?)?;
    if n < 0 || n as usize > args.len().saturating_sub(3) {
        return None;
    }
    Some((3..3 + n as usize).collect())
}

/// EVAL's flags as Redis 7.0 reports them, plus `may_replicate` (hidden)
/// and the runtime's `RUNS_SCRIPT`.
const F_RUN: u32 = flag::NOSCRIPT
    | flag::STALE
    | flag::SKIP_MONITOR
    | flag::NO_MANDATORY_KEYS
    | flag::MOVABLEKEYS
    | flag::RUNS_SCRIPT;
const ACL: &[&str] = &["slow", "scripting"];
const ACL_WRITE: &[&str] = &["write", "slow", "scripting"];

macro_rules! run {
    ($name:expr, $flags:expr, $handler:expr, $flags_of:expr, $summary:expr) => {
        CommandSpec {
            acl: ACL,
            getkeys: Some(script_keys),
            flags_of: Some($flags_of),
            docs: Docs::new("Depends on the script that is executed.", $summary),
            ..CommandSpec::new($name, -3, $flags, $handler)
        }
    };
}

macro_rules! sub {
    ($name:expr, $arity:expr, $flags:expr, $acl:expr, $handler:expr, $cx:expr, $summary:expr) => {
        CommandSpec {
            acl: $acl,
            docs: Docs::new($cx, $summary),
            ..CommandSpec::new($name, $arity, $flags, $handler)
        }
    };
}

const SCRIPT_SUBS: &[CommandSpec] = &[
    sub!("debug", 3, flag::NOSCRIPT, ACL, eval::script_debug, "O(1)",
        "Set the debug mode for executed scripts."),
    sub!("exists", -3, flag::NOSCRIPT, ACL, eval::script_exists,
        "O(N) with N being the number of scripts to check (so checking a single script is an O(1) operation).",
        "Check existence of scripts in the script cache."),
    sub!("flush", -2, flag::NOSCRIPT, ACL, eval::script_flush,
        "O(N) with N being the number of scripts in cache",
        "Remove all the scripts from the script cache."),
    sub!("help", 2, flag::LOADING | flag::STALE, ACL, eval::script_help, "O(1)",
        "Show helpful text about the different subcommands"),
    sub!("kill", 2, flag::NOSCRIPT | flag::ALLOW_BUSY, ACL, eval::script_kill, "O(1)",
        "Kill the script currently in execution."),
    sub!("load", 3, flag::NOSCRIPT | flag::STALE, ACL, eval::script_load,
        "O(N) with N being the length in bytes of the script body.",
        "Load the specified Lua script into the script cache."),
];

const FUNCTION_SUBS: &[CommandSpec] = &[
    sub!(
        "delete",
        3,
        flag::WRITE | flag::NOSCRIPT,
        ACL_WRITE,
        function::function_delete,
        "O(1)",
        "Delete a function by name"
    ),
    sub!(
        "dump",
        2,
        flag::NOSCRIPT,
        ACL,
        function::function_dump,
        "O(N) where N is the number of functions",
        "Dump all functions into a serialized binary payload"
    ),
    sub!(
        "flush",
        -2,
        flag::WRITE | flag::NOSCRIPT,
        ACL_WRITE,
        function::function_flush,
        "O(N) where N is the number of functions deleted",
        "Deleting all functions"
    ),
    sub!(
        "help",
        2,
        flag::LOADING | flag::STALE,
        ACL,
        function::function_help,
        "O(1)",
        "Show helpful text about the different subcommands"
    ),
    sub!(
        "kill",
        2,
        flag::NOSCRIPT | flag::ALLOW_BUSY,
        ACL,
        function::function_kill,
        "O(1)",
        "Kill the function currently in execution."
    ),
    sub!(
        "list",
        -2,
        flag::NOSCRIPT,
        ACL,
        function::function_list,
        "O(N) where N is the number of functions",
        "List information about all the functions"
    ),
    sub!(
        "load",
        -3,
        flag::WRITE | flag::DENYOOM | flag::NOSCRIPT,
        ACL_WRITE,
        function::function_load,
        "O(1) (considering compilation time is redundant)",
        "Create a function with the given arguments (name, code, description)"
    ),
    sub!(
        "restore",
        -3,
        flag::WRITE | flag::DENYOOM | flag::NOSCRIPT,
        ACL_WRITE,
        function::function_restore,
        "O(N) where N is the number of functions on the payload",
        "Restore all the functions on the given payload"
    ),
    sub!(
        "stats",
        2,
        flag::NOSCRIPT | flag::ALLOW_BUSY,
        ACL,
        function::function_stats,
        "O(1)",
        "Return information about the function currently running (name, description, duration)"
    ),
];

pub const COMMANDS: &[CommandSpec] = &[
    run!(
        "eval",
        F_RUN,
        eval::eval,
        eval::eval_flags,
        "Execute a Lua script server side"
    ),
    run!(
        "eval_ro",
        F_RUN | flag::READONLY,
        eval::eval_ro,
        eval::eval_flags,
        "Execute a read-only Lua script server side"
    ),
    run!(
        "evalsha",
        F_RUN,
        eval::evalsha,
        eval::evalsha_flags,
        "Execute a Lua script server side"
    ),
    run!(
        "evalsha_ro",
        F_RUN | flag::READONLY,
        eval::evalsha_ro,
        eval::evalsha_flags,
        "Execute a read-only Lua script server side"
    ),
    run!(
        "fcall",
        F_RUN,
        function::fcall,
        function::fcall_flags,
        "Invoke a function"
    ),
    run!(
        "fcall_ro",
        F_RUN | flag::READONLY,
        function::fcall_ro,
        function::fcall_flags,
        "Invoke a read-only function"
    ),
    CommandSpec {
        acl: &["slow"],
        docs: Docs::new(
            "Depends on subcommand.",
            "A container for Lua scripts management commands",
        ),
        handler: None,
        subcommands: SCRIPT_SUBS,
        ..CommandSpec::new("script", -2, 0, eval::script_help)
    },
    CommandSpec {
        acl: &["slow"],
        docs: Docs::new(
            "Depends on subcommand.",
            "A container for function commands",
        ),
        handler: None,
        subcommands: FUNCTION_SUBS,
        ..CommandSpec::new("function", -2, 0, function::function_help)
    },
];
