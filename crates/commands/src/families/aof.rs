//! The append-only file's commands: BGREWRITEAOF and DEBUG LOADAOF, on
//! `services::aof`.

use crate::kernel::ctx::Ctx;
use crate::kernel::spec::{flag, CommandSpec, DebugSub, Docs};

fn bgrewriteaof(ctx: &mut Ctx, _args: &[&[u8]]) {
    use crate::services::aof::Rewrite;
    match crate::services::aof::rewrite(ctx.srv, ctx.client.in_exec) {
        Ok(Rewrite::Started) => ctx
            .out
            .simple("Background append only file rewriting started"),
        Ok(Rewrite::Scheduled) => ctx
            .out
            .simple("Background append only file rewriting scheduled"),
        Err(e) if e.contains("already in progress") => ctx.error(&format!("ERR {e}")),
        Err(_) => ctx.error(
            "ERR Can't execute an AOF background rewriting. Please check the server logs for more information.",
        ),
    }
}

fn debug_loadaof(ctx: &mut Ctx, _args: &[&[u8]]) {
    match crate::services::aof::debug_loadaof(ctx.srv) {
        Ok(()) => ctx.ok(),
        Err(e) => ctx.error(&format!("ERR {e}")),
    }
}

pub const COMMANDS: &[CommandSpec] = &[CommandSpec {
    acl: &["admin", "slow", "dangerous"],
    docs: Docs::new("O(1)", "Asynchronously rewrite the append-only file"),
    ..CommandSpec::new(
        "bgrewriteaof",
        1,
        flag::ADMIN | flag::NOSCRIPT | flag::NO_ASYNC_LOADING,
        bgrewriteaof,
    )
}];

pub const DEBUG: &[DebugSub] = &[DebugSub {
    name: "LOADAOF",
    arity: 2,
    help: &[
        "LOADAOF",
        "    Flush the AOF buffers on disk and reload the AOF in memory.",
    ],
    handler: debug_loadaof,
}];
