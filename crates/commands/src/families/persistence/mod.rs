//! Persistence commands: SAVE, BGSAVE [SCHEDULE], LASTSAVE, DUMP, RESTORE
//! (and RESTORE-ASKING, MIGRATE's form of it),
//! and the DEBUG subcommands RELOAD and SET-SKIP-CHECKSUM-VALIDATION. The
//! work is `services::snapshot` (files) and crate `rdb` (payloads).

mod dump;

use std::sync::atomic::Ordering::Relaxed;

use crate::base::parse::eq_ic;
use crate::kernel::ctx::Ctx;
use crate::kernel::spec::{flag, CommandSpec, DebugSub, Docs, KeyPos};
use crate::services::snapshot::{self, BgsaveError};

macro_rules! cmd {
    ($name:expr, $arity:expr, $flags:expr, $acl:expr, $keys:expr, $cx:expr, $sum:expr, $h:expr) => {
        CommandSpec {
            acl: $acl,
            keys: $keys,
            docs: Docs::new($cx, $sum),
            ..CommandSpec::new($name, $arity, $flags, $h)
        }
    };
}

pub const COMMANDS: &[CommandSpec] = &[
    cmd!(
        "save",
        1,
        flag::ADMIN | flag::NOSCRIPT | flag::NO_ASYNC_LOADING | flag::NO_MULTI,
        &["admin", "slow", "dangerous"],
        KeyPos::NONE,
        "O(N) where N is the total number of keys in all databases",
        "Synchronously saves the database(s) to disk.",
        save
    ),
    cmd!(
        "bgsave",
        -1,
        flag::ADMIN | flag::NOSCRIPT | flag::NO_ASYNC_LOADING,
        &["admin", "slow", "dangerous"],
        KeyPos::NONE,
        "O(1)",
        "Asynchronously saves the database(s) to disk.",
        bgsave
    ),
    cmd!(
        "lastsave",
        1,
        flag::LOADING | flag::STALE | flag::FAST,
        &["admin", "fast", "dangerous"],
        KeyPos::NONE,
        "O(1)",
        "Returns the Unix timestamp of the last successful save to disk.",
        lastsave
    ),
    cmd!(
        "dump",
        2,
        flag::READONLY,
        &["keyspace", "read", "slow"],
        KeyPos::ONE,
        "O(1) to access the key and additional O(N*M) to serialize it, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1).",
        "Returns a serialized representation of the value stored at a key.",
        dump::dump
    ),
    cmd!(
        "restore",
        -4,
        flag::WRITE | flag::DENYOOM,
        &["keyspace", "write", "slow", "dangerous"],
        KeyPos::ONE,
        "O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1). However for sorted set values the complexity is O(N*M*log(N)) because inserting values into sorted sets is O(log(N)).",
        "Creates a key from the serialized representation of a value.",
        dump::restore
    ),
    // MIGRATE's form of RESTORE: served, in cluster mode, as if ASKING had
    // been sent (the slot is being imported).
    cmd!(
        "restore-asking",
        -4,
        flag::WRITE | flag::DENYOOM | flag::ASKING,
        &["keyspace", "write", "slow", "dangerous"],
        KeyPos::ONE,
        "O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1). However for sorted set values the complexity is O(N*M*log(N)) because inserting values into sorted sets is O(log(N)).",
        "An internal command for migrating keys in a cluster",
        dump::restore
    ),
];

/// The persistence family's DEBUG subcommands.
pub const DEBUG: &[DebugSub] = &[
    DebugSub {
        name: "RELOAD",
        arity: -2,
        help: &[
            "RELOAD [option ...]",
            "    Save the RDB on disk and reload it back to memory. Valid <option> values:",
            "    * MERGE: conflicting keys will be loaded from RDB.",
            "    * NOFLUSH: the existing database will not be removed before load, but",
            "      conflicting keys will generate an exception and kill the server.",
            "    * NOSAVE: the database will be loaded from an existing RDB file.",
            "    Examples:",
            "    * DEBUG RELOAD: verify that the server is able to persist, flush and reload",
            "      the database.",
            "    * DEBUG RELOAD NOSAVE: replace the current database with the contents of an",
            "      existing RDB file.",
            "    * DEBUG RELOAD NOSAVE NOFLUSH MERGE: add the contents of an existing RDB",
            "      file to the database.",
        ],
        handler: debug_reload,
    },
    DebugSub {
        name: "SET-SKIP-CHECKSUM-VALIDATION",
        arity: 3,
        help: &[
            "SET-SKIP-CHECKSUM-VALIDATION <0|1>",
            "    Enables or disables checksum checks for RDB files and RESTORE's payload.",
        ],
        handler: debug_skip_checksum,
    },
];

fn save(ctx: &mut Ctx, _args: &[&[u8]]) {
    let (srv, settings) = (ctx.srv, ctx.settings);
    match crate::services::replication::with_save_info(srv, |r| snapshot::save(srv, settings, r)) {
        Ok(()) => ctx.ok(),
        Err(e) if e == "Background save already in progress" => {
            ctx.error("ERR Background save already in progress")
        }
        Err(e) => {
            crate::base::log::log(crate::base::log::LogLevel::Warning, &e);
            ctx.error("ERR")
        }
    }
}

fn bgsave(ctx: &mut Ctx, args: &[&[u8]]) {
    let schedule = match args.len() {
        1 => false,
        2 if eq_ic(args[1], "schedule") => true,
        _ => return ctx.syntax_error(),
    };
    let running = ctx.srv.persistence.bgsave_running();
    if running {
        return ctx.error("ERR Background save already in progress");
    }
    // The AOF rewrite holds the one snapshot (Redis: its one child).
    if ctx.srv.aof.rewrite_in_progress.load(Relaxed) {
        if schedule {
            ctx.srv.persistence.bgsave_scheduled.store(true, Relaxed);
            return ctx.out.simple("Background saving scheduled");
        }
        return ctx.error("ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.");
    }
    // Inside a transaction the cut would be taken under the locks the
    // transaction holds; Redis schedules the save for after it.
    if ctx.client.in_exec {
        ctx.srv.persistence.bgsave_scheduled.store(true, Relaxed);
        return ctx.out.simple("Background saving scheduled");
    }
    let _ = schedule;
    match snapshot::bgsave(ctx.srv, ctx.settings) {
        Ok(()) => ctx.out.simple("Background saving started"),
        Err(BgsaveError::AlreadyRunning) => ctx.error("ERR Background save already in progress"),
    }
}

fn lastsave(ctx: &mut Ctx, _args: &[&[u8]]) {
    let t = ctx.srv.persistence.lastsave.load(Relaxed);
    ctx.out.int(t as i64);
}

fn debug_reload(ctx: &mut Ctx, args: &[&[u8]]) {
    let (mut save, mut flush, mut merge) = (true, true, false);
    for a in &args[2..] {
        if eq_ic(a, "MERGE") {
            merge = true;
        } else if eq_ic(a, "NOFLUSH") {
            flush = false;
        } else if eq_ic(a, "NOSAVE") {
            save = false;
        } else {
            return ctx
                .error("ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.");
        }
    }
    match snapshot::debug_reload(ctx.srv, ctx.settings, save, flush, merge) {
        Ok(()) => ctx.ok(),
        Err(e) => ctx.error(&e),
    }
}

fn debug_skip_checksum(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(v) = ctx.parse_i64(args[2]) else {
        return;
    };
    ctx.srv.persistence.skip_checksum.store(v != 0, Relaxed);
    ctx.ok();
}
