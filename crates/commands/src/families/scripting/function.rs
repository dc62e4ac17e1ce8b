//! FCALL, FCALL_RO and FUNCTION LOAD / DELETE / FLUSH / LIST / STATS /
//! KILL / DUMP / RESTORE / HELP.
//!
//! Libraries live in memory only: RDB files do not carry them yet (that
//! comes with persistence, which will write and read the same opcode-245
//! records FUNCTION DUMP produces, see `rdb::functions`).
//!
//! FUNCTION LIST lists libraries by name and each library's functions by
//! name; Redis lists both in hash-table order, which no client can rely on.

use scripting::RestorePolicy;

use super::eval::{kill, script_cmd_flags};
use super::host::{prepare, run_with_host, split_keys, RunKind};
use crate::base::errors;
use crate::base::glob::glob_match;
use crate::base::parse::eq_ic;
use crate::kernel::ctx::Ctx;
use crate::kernel::scripting::RunInfo;
use crate::kernel::server::Server;

/// `flags_of` for FCALL / FCALL_RO: the function's flags.
pub(super) fn fcall_flags(srv: &Server, args: &[&[u8]], base: u32) -> u32 {
    let Some(name) = args.get(1) else {
        return base;
    };
    let f = srv.scripting.functions.lock();
    match f.function(name) {
        Some((_, def)) => script_cmd_flags(base, def.flags),
        None => base,
    }
}

fn fcall_generic(ctx: &mut Ctx, args: &[&[u8]], read_only: bool) {
    let srv = ctx.srv;
    let mut engine = srv.scripting.functions.lock();
    // As Redis 7.0: the function is looked up before numkeys is read.
    let Some((_, def)) = engine.function(args[1]) else {
        drop(engine);
        return ctx.error(errors::ERR_FUNCTION_NOT_FOUND);
    };
    let Some((keys, argv)) = split_fcall_keys(ctx, args) else {
        return;
    };
    let (flags, name) = (def.flags, def.name.clone());
    let kind = RunKind {
        read_only,
        function: true,
    };
    let sc = match prepare(ctx, flags, kind) {
        Ok(sc) => sc,
        Err(e) => {
            drop(engine);
            return ctx.error(e);
        }
    };
    let info = RunInfo {
        name,
        argv: args.iter().map(|a| a.to_vec()).collect(),
        is_function: true,
    };
    let fname = args[1];
    run_with_host(ctx, sc, info, &mut |host, out| {
        engine.call(host, fname, keys, argv, out)
    });
    srv.scripting.refresh_function_counts(&engine);
}

/// FCALL's `numkeys`: as [`split_keys`], but a value that is not an
/// integer gets FCALL's own message.
fn split_fcall_keys<'a, 'b>(
    ctx: &mut Ctx,
    args: &'b [&'a [u8]],
) -> Option<super::host::KeysAndArgs<'a, 'b>> {
    if crate::base::parse::parse_i64(args[2]).is_none() {
        ctx.error(errors::ERR_FCALL_BAD_NUMKEYS);
        return None;
    }
    split_keys(ctx, args)
}

pub(super) fn fcall(ctx: &mut Ctx, args: &[&[u8]]) {
    fcall_generic(ctx, args, false)
}

pub(super) fn fcall_ro(ctx: &mut Ctx, args: &[&[u8]]) {
    fcall_generic(ctx, args, true)
}

pub(super) fn function_load(ctx: &mut Ctx, args: &[&[u8]]) {
    let mut replace = false;
    for a in &args[2..args.len() - 1] {
        if eq_ic(a, "REPLACE") {
            replace = true;
        } else {
            return ctx.error_with_arg("ERR Unknown option given: ", a, "");
        }
    }
    let code = args[args.len() - 1];
    let srv = ctx.srv;
    let mut engine = srv.scripting.functions.lock();
    let res = engine.load(None, code, replace);
    srv.scripting.refresh_function_counts(&engine);
    drop(engine);
    match res {
        Ok(name) => {
            ctx.client.changes += 1;
            ctx.out.bulk(name.as_bytes())
        }
        Err(e) => ctx.error(&e),
    }
}

pub(super) fn function_delete(ctx: &mut Ctx, args: &[&[u8]]) {
    let srv = ctx.srv;
    let mut engine = srv.scripting.functions.lock();
    let res = engine.delete(&String::from_utf8_lossy(args[2]));
    srv.scripting.refresh_function_counts(&engine);
    drop(engine);
    match res {
        Ok(()) => {
            ctx.client.changes += 1;
            ctx.ok()
        }
        Err(e) => ctx.error(&e),
    }
}

pub(super) fn function_flush(ctx: &mut Ctx, args: &[&[u8]]) {
    if args.len() == 3 && !(eq_ic(args[2], "SYNC") || eq_ic(args[2], "ASYNC")) {
        return ctx.error(errors::ERR_FUNCTION_FLUSH_ONLY_SUPPORTS_SYNC_ASYNC_OPTION);
    }
    if args.len() > 3 {
        let msg = crate::base::errors::unknown_subcommand_or_arity(
            &String::from_utf8_lossy(args[1]),
            "FUNCTION",
        );
        return ctx.error(&msg);
    }
    let srv = ctx.srv;
    let mut engine = srv.scripting.functions.lock();
    engine.flush();
    srv.scripting.refresh_function_counts(&engine);
    drop(engine);
    ctx.client.changes += 1;
    ctx.ok();
}

pub(super) fn function_list(ctx: &mut Ctx, args: &[&[u8]]) {
    let mut pattern: Option<&[u8]> = None;
    let mut withcode = false;
    let mut i = 2;
    while i < args.len() {
        let a = args[i];
        if eq_ic(a, "WITHCODE") && !withcode {
            withcode = true;
        } else if eq_ic(a, "LIBRARYNAME") && pattern.is_none() {
            if i + 1 >= args.len() {
                return ctx.error(errors::ERR_LIBRARY_NAME_ARGUMENT_WAS_NOT_GIVEN);
            }
            pattern = Some(args[i + 1]);
            i += 1;
        } else {
            // The argument's bytes as sent, as Redis writes them.
            // Redis formats the argument up to NUL, CR and LF written as
            // spaces (not trimmed here).
            let mut msg = b"ERR Unknown argument ".to_vec();
            msg.extend_from_slice(a.split(|&c| c == 0).next().unwrap_or(b""));
            return ctx.error_bytes(&msg);
        }
        i += 1;
    }
    let engine = ctx.srv.scripting.functions.lock();
    let libs: Vec<_> = engine
        .libraries()
        .filter(|l| pattern.is_none_or(|p| glob_match(p, l.name.as_bytes(), false)))
        .collect();
    let out = &mut *ctx.out;
    out.array_len(libs.len());
    for lib in libs {
        out.map_len(if withcode { 4 } else { 3 });
        out.bulk("library_name");
        out.bulk(lib.name.as_bytes());
        out.bulk("engine");
        out.bulk("LUA");
        out.bulk("functions");
        out.array_len(lib.functions.len());
        for f in lib.functions.values() {
            out.map_len(3);
            out.bulk("name");
            out.bulk(f.name.as_bytes());
            out.bulk("description");
            match &f.description {
                Some(d) => out.bulk(d),
                None => out.null_bulk(),
            }
            out.bulk("flags");
            let names = f.flags.names();
            out.set_len(names.len());
            for n in names {
                out.simple(n);
            }
        }
        if withcode {
            out.bulk("library_code");
            out.bulk(&lib.code);
        }
    }
}

pub(super) fn function_stats(ctx: &mut Ctx, _args: &[&[u8]]) {
    // Answered while a function runs: read the kernel's copies, never the
    // engine (the running function holds it).
    let srv = ctx.srv;
    let running = srv.scripting.run_info();
    if running.as_ref().is_some_and(|(i, _)| !i.is_function) {
        // As Redis 7.0: an EVAL script runs, not a function.
        return ctx.error(crate::base::errors::BUSY_EVAL);
    }
    let counts = srv.scripting.counts();
    let out = &mut *ctx.out;
    out.map_len(2);
    out.bulk("running_script");
    match running {
        None => out.null_bulk(),
        Some((info, started)) => {
            out.map_len(3);
            out.bulk("name");
            out.bulk(info.name.as_bytes());
            out.bulk("command");
            out.array_len(info.argv.len());
            for a in &info.argv {
                out.bulk(a);
            }
            out.bulk("duration_ms");
            let now = crate::base::clock::unix_time_ms();
            out.int(now.saturating_sub(started) as i64);
        }
    }
    out.bulk("engines");
    out.map_len(1);
    out.bulk("LUA");
    out.map_len(2);
    out.bulk("libraries_count");
    out.int(counts.libraries as i64);
    out.bulk("functions_count");
    out.int(counts.functions as i64);
}

pub(super) fn function_kill(ctx: &mut Ctx, _args: &[&[u8]]) {
    kill(ctx, true)
}

pub(super) fn function_dump(ctx: &mut Ctx, _args: &[&[u8]]) {
    let engine = ctx.srv.scripting.functions.lock();
    let payload = rdb::dump_functions(&engine.dump_codes());
    drop(engine);
    ctx.out.bulk(payload);
}

pub(super) fn function_restore(ctx: &mut Ctx, args: &[&[u8]]) {
    // Redis 7.0 matches RESTORE with 3 or 4 arguments only.
    if args.len() > 4 {
        return ctx.error(&errors::unknown_subcommand_or_arity(
            &String::from_utf8_lossy(args[1]),
            "FUNCTION",
        ));
    }
    let policy = match args.get(3) {
        None => RestorePolicy::Append,
        Some(p) if eq_ic(p, "APPEND") => RestorePolicy::Append,
        Some(p) if eq_ic(p, "REPLACE") => RestorePolicy::Replace,
        Some(p) if eq_ic(p, "FLUSH") => RestorePolicy::Flush,
        Some(_) => return ctx.error(errors::ERR_WRONG_RESTORE_POLICY_GIVEN_VALUE_SHOULD_EITHER),
    };
    let codes = match rdb::restore_functions(args[2]) {
        Ok(c) => c,
        Err(e) => return ctx.error(e.redis_message()),
    };
    let refs: Vec<&[u8]> = codes.iter().map(|c| c.as_slice()).collect();
    let srv = ctx.srv;
    let mut engine = srv.scripting.functions.lock();
    let res = engine.restore(&refs, policy);
    srv.scripting.refresh_function_counts(&engine);
    drop(engine);
    match res {
        Ok(()) => {
            ctx.client.changes += 1;
            ctx.ok()
        }
        Err(e) => ctx.error(&e),
    }
}

pub(super) const FUNCTION_HELP: &[&str] = &[
    "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "LOAD [REPLACE] <FUNCTION CODE>",
    "    Create a new library with the given library name and code.",
    "DELETE <LIBRARY NAME>",
    "    Delete the given library.",
    "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
    "    Return general information on all the libraries:",
    "    * Library name",
    "    * The engine used to run the Library",
    "    * Library description",
    "    * Functions list",
    "    * Library code (if WITHCODE is given)",
    "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
    "STATS",
    "    Return information about the current function running:",
    "    * Function name",
    "    * Command used to run the function",
    "    * Duration in MS that the function is running",
    "    If no function is running, return nil",
    "    In addition, returns a list of available engines.",
    "KILL",
    "    Kill the current running function.",
    "FLUSH [ASYNC|SYNC]",
    "    Delete all the libraries.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the libraries.",
    "    * SYNC: Synchronously flush the libraries.",
    "DUMP",
    "    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
    "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
    "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
    "    control how to handle existing libraries (default APPEND):",
    "    * FLUSH: delete all existing libraries.",
    "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
    "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
    "      libraries with the new libraries (notice that even on this option there is a chance of failure",
    "      in case of functions name collision with another library).",
    "HELP",
    "    Prints this help.",
];

pub(super) fn function_help(ctx: &mut Ctx, _args: &[&[u8]]) {
    ctx.reply_help(FUNCTION_HELP)
}
