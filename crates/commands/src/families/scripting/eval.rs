//! EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT LOAD / EXISTS / FLUSH /
//! KILL / DEBUG / HELP.
//!
//! SCRIPT DEBUG: Petrel has no Lua debugger. `SCRIPT DEBUG NO` answers OK
//! (debugging is off, as asked); `YES` and `SYNC` are refused with an error
//! instead of Redis's OK, since no debugging session would follow.

use scripting::shebang::parse_eval;
use scripting::ScriptFlags;

use super::host::{prepare, run_with_host, split_keys, RunKind};
use crate::base::errors;
use crate::base::parse::eq_ic;
use crate::kernel::ctx::Ctx;
use crate::kernel::scripting::{KillOutcome, RunInfo};
use crate::kernel::server::Server;
use crate::kernel::spec::flag;

/// Redis's `scriptFlagsToCmdFlags`: a script with a shebang replaces the
/// command's `write`, `denyoom` and `stale` flags by what it declares.
pub(super) fn script_cmd_flags(base: u32, sf: ScriptFlags) -> u32 {
    if sf.contains(ScriptFlags::EVAL_COMPAT_MODE) {
        return base;
    }
    let mut f = base & !(flag::STALE | flag::DENYOOM | flag::WRITE | flag::MAY_REPLICATE);
    if !sf.contains(ScriptFlags::ALLOW_OOM) && !sf.contains(ScriptFlags::NO_WRITES) {
        f |= flag::DENYOOM;
    }
    if !sf.contains(ScriptFlags::NO_WRITES) {
        f |= flag::WRITE;
    }
    if sf.contains(ScriptFlags::ALLOW_STALE) {
        f |= flag::STALE;
    }
    f
}

/// `flags_of` for EVAL / EVAL_RO: the body's shebang.
pub(super) fn eval_flags(_srv: &Server, args: &[&[u8]], base: u32) -> u32 {
    match args.get(1).map(|b| parse_eval(b)) {
        Some(Ok(s)) => script_cmd_flags(base, s.flags),
        _ => base,
    }
}

/// `flags_of` for EVALSHA / EVALSHA_RO: the cached script's flags.
pub(super) fn evalsha_flags(srv: &Server, args: &[&[u8]], base: u32) -> u32 {
    let Some(sha) = args.get(1).filter(|s| s.len() == 40) else {
        return base;
    };
    let eng = srv.scripting.eval.lock();
    match eng.flags_of(sha) {
        Some(f) => script_cmd_flags(base, f),
        None => base,
    }
}

fn eval_generic(ctx: &mut Ctx, args: &[&[u8]], by_sha: bool, read_only: bool) {
    // As Redis 7.0: a SHA that is not 40 characters long is not looked up,
    // nor is numkeys read.
    if by_sha && args[1].len() != 40 {
        return ctx.error(scripting::NOSCRIPT);
    }
    let Some((keys, argv)) = split_keys(ctx, args) else {
        return;
    };
    let srv = ctx.srv;
    let mut eng = srv.scripting.eval.lock();
    let found = if by_sha {
        eng.find_with_flags(args[1])
    } else {
        match eng.load(args[1]) {
            Ok(s) => {
                srv.scripting.refresh_eval_counts(&eng);
                eng.find_with_flags(&s)
            }
            Err(e) => return ctx.error_bytes(&e),
        }
    };
    let Some((sha, flags)) = found else {
        return ctx.error(scripting::NOSCRIPT);
    };
    let kind = RunKind {
        read_only,
        function: false,
    };
    let sc = match prepare(ctx, flags, kind) {
        Ok(sc) => sc,
        Err(e) => return ctx.error(e),
    };
    // Only FUNCTION STATS shows the arguments, and it never shows EVALs.
    let info = RunInfo {
        name: String::new(),
        argv: Vec::new(),
        is_function: false,
    };
    run_with_host(ctx, sc, info, &mut |host, out| {
        eng.run(host, &sha, keys, argv, out)
    });
    srv.scripting.refresh_eval_vm(&eng);
}

pub(super) fn eval(ctx: &mut Ctx, args: &[&[u8]]) {
    eval_generic(ctx, args, false, false)
}

pub(super) fn eval_ro(ctx: &mut Ctx, args: &[&[u8]]) {
    eval_generic(ctx, args, false, true)
}

pub(super) fn evalsha(ctx: &mut Ctx, args: &[&[u8]]) {
    eval_generic(ctx, args, true, false)
}

pub(super) fn evalsha_ro(ctx: &mut Ctx, args: &[&[u8]]) {
    eval_generic(ctx, args, true, true)
}

pub(super) fn script_load(ctx: &mut Ctx, args: &[&[u8]]) {
    let srv = ctx.srv;
    let mut eng = srv.scripting.eval.lock();
    match eng.load(args[2]) {
        Ok(sha) => {
            srv.scripting.refresh_eval_counts(&eng);
            drop(eng);
            ctx.out.bulk(sha);
        }
        Err(e) => {
            drop(eng);
            ctx.error_bytes(&e)
        }
    }
}

pub(super) fn script_exists(ctx: &mut Ctx, args: &[&[u8]]) {
    let eng = ctx.srv.scripting.eval.lock();
    let found: Vec<bool> = args[2..].iter().map(|s| eng.exists(s)).collect();
    drop(eng);
    ctx.out.array_len(found.len());
    for f in found {
        ctx.out.int(i64::from(f));
    }
}

pub(super) fn script_flush(ctx: &mut Ctx, args: &[&[u8]]) {
    if args.len() > 3 || args.len() == 3 && !(eq_ic(args[2], "SYNC") || eq_ic(args[2], "ASYNC")) {
        return ctx.error(errors::ERR_SCRIPT_FLUSH_ONLY_SUPPORT_SYNC_ASYNC_OPTION);
    }
    // The old VM is dropped here either way: SYNC and ASYNC differ only in
    // who frees it, and a VM's memory is small next to the keyspace.
    let srv = ctx.srv;
    let mut eng = srv.scripting.eval.lock();
    eng.flush();
    srv.scripting.refresh_eval_counts(&eng);
    drop(eng);
    ctx.ok();
}

/// SCRIPT KILL and FUNCTION KILL.
pub(super) fn kill(ctx: &mut Ctx, function: bool) {
    match ctx.srv.scripting.request_kill(function) {
        KillOutcome::Killed => ctx.ok(),
        KillOutcome::NotBusy => ctx.error(errors::NOTBUSY),
        KillOutcome::Unkillable => ctx.error(errors::UNKILLABLE),
        KillOutcome::WrongKind if function => ctx.error(errors::BUSY_EVAL),
        KillOutcome::WrongKind => ctx.error(errors::BUSY_FUNCTION),
    }
}

pub(super) fn script_kill(ctx: &mut Ctx, _args: &[&[u8]]) {
    kill(ctx, false)
}

pub(super) fn script_debug(ctx: &mut Ctx, args: &[&[u8]]) {
    // Redis refuses while the client has replies not yet written: after
    // other commands of the same read (a pipeline) and inside EXEC, whose
    // array header is already out (so its "outside MULTI" check is never
    // reached there).
    if ctx.client.tx.in_multi() || !ctx.out.is_empty() {
        return ctx.error(errors::ERR_SCRIPT_DEBUG_MUST_CALLED_OUTSIDE_PIPELINE);
    }
    if eq_ic(args[2], "NO") {
        ctx.ok()
    } else if eq_ic(args[2], "YES") || eq_ic(args[2], "SYNC") {
        ctx.error(errors::ERR_SCRIPT_DEBUG_YES_SYNC_NOT_SUPPORTED_SERVER)
    } else {
        ctx.error(errors::ERR_SCRIPT_DEBUG_YES_SYNC_NO)
    }
}

pub(super) const SCRIPT_HELP: &[&str] = &[
    "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DEBUG (YES|SYNC|NO)",
    "    Set the debug mode for subsequent scripts executed.",
    "EXISTS <sha1> [<sha1> ...]",
    "    Return information about the existence of the scripts in the script cache.",
    "FLUSH [ASYNC|SYNC]",
    "    Flush the Lua scripts cache. Very dangerous on replicas.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the scripts cache.",
    "    * SYNC: Synchronously flush the scripts cache.",
    "KILL",
    "    Kill the currently executing Lua script.",
    "LOAD <script>",
    "    Load a script into the scripts cache without executing it.",
    "HELP",
    "    Prints this help.",
];

pub(super) fn script_help(ctx: &mut Ctx, _args: &[&[u8]]) {
    ctx.reply_help(SCRIPT_HELP)
}
