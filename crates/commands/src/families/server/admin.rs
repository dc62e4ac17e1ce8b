//! Server administration commands: CONFIG, TIME, SHUTDOWN, MONITOR, and the
//! CLIENT basics. (INFO, COMMAND, SLOWLOG, LATENCY, DEBUG and the rest of
//! CLIENT live in their own modules as they grow.)

use std::sync::atomic::Ordering::Relaxed;

use crate::base::errors;
use crate::base::parse::eq_ic;
use crate::kernel::ctx::Ctx;
use crate::kernel::spec::{flag, CommandSpec, Docs};

const CONFIG_SUBS: &[CommandSpec] = &[
    CommandSpec {
        acl: &["admin", "slow", "dangerous"],
        docs: Docs::new(
            "O(N) when N is the number of configuration parameters provided",
            "Get the values of configuration parameters",
        ),
        ..CommandSpec::new(
            "get",
            -3,
            flag::ADMIN | flag::NOSCRIPT | flag::LOADING | flag::STALE,
            config_get,
        )
    },
    CommandSpec {
        acl: &["admin", "slow", "dangerous"],
        docs: Docs::new(
            "O(N) when N is the number of configuration parameters provided",
            "Set configuration parameters to the given values",
        ),
        redact: Some(redact_config_set),
        ..CommandSpec::new(
            "set",
            -4,
            flag::ADMIN | flag::NOSCRIPT | flag::LOADING | flag::STALE,
            config_set,
        )
    },
    CommandSpec {
        acl: &["admin", "slow", "dangerous"],
        docs: Docs::new("O(1)", "Reset the stats returned by INFO"),
        ..CommandSpec::new(
            "resetstat",
            2,
            flag::ADMIN | flag::NOSCRIPT | flag::LOADING | flag::STALE,
            config_resetstat,
        )
    },
    CommandSpec {
        acl: &["admin", "slow", "dangerous"],
        docs: Docs::new(
            "O(1)",
            "Rewrite the configuration file with the in memory configuration",
        ),
        ..CommandSpec::new(
            "rewrite",
            2,
            flag::ADMIN | flag::NOSCRIPT | flag::LOADING | flag::STALE,
            config_rewrite,
        )
    },
    CommandSpec {
        acl: &["slow"],
        docs: Docs::new("O(1)", "Show helpful text about the different subcommands"),
        ..CommandSpec::new("help", 2, flag::LOADING | flag::STALE, config_help)
    },
];

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        docs: Docs::new("Depends on subcommand.", "A container for server configuration commands"),
        handler: None,
        subcommands: CONFIG_SUBS,
        ..CommandSpec::new("config", -2, 0, config_help)
    },
    CommandSpec {
        acl: &["fast"],
        docs: Docs::new("O(1)", "Return the current server time"),
        ..CommandSpec::new("time", 1, flag::LOADING | flag::STALE | flag::FAST, time)
    },
    CommandSpec {
        acl: &["admin", "slow", "dangerous"],
        docs: Docs::new("O(N) when saving, where N is the total number of keys in all databases when saving data, otherwise O(1)", "Synchronously save the dataset to disk and then shut down the server"),
        ..CommandSpec::new(
            "shutdown",
            -1,
            flag::ADMIN | flag::NOSCRIPT | flag::LOADING | flag::STALE | flag::NO_MULTI | flag::SENTINEL_OK | flag::ALLOW_BUSY,
            shutdown,
        )
    },
    CommandSpec {
        acl: &["admin", "slow", "dangerous"],
        docs: Docs::new("", "Listen for all requests received by the server in real time"),
        ..CommandSpec::new("monitor", 1, flag::ADMIN | flag::NOSCRIPT | flag::LOADING | flag::STALE, monitor)
    },
];

fn config_help(ctx: &mut Ctx, _args: &[&[u8]]) {
    let lines = [
        "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "GET <pattern>",
        "    Return parameters matching the glob-like <pattern> and their values.",
        "SET <directive> <value>",
        "    Set the configuration <directive> to <value>.",
        "RESETSTAT",
        "    Reset statistics reported by the INFO command.",
        "REWRITE",
        "    Rewrite the configuration file.",
        "HELP",
        "    Prints this help.",
    ];
    ctx.out.array_len(lines.len());
    for l in lines {
        ctx.out.simple(l);
    }
}

fn config_get(ctx: &mut Ctx, args: &[&[u8]]) {
    let pairs = ctx.srv.config.get_matching(&args[2..]);
    ctx.out.map_len(pairs.len());
    for (k, v) in pairs {
        ctx.out.bulk(k.as_bytes());
        ctx.out.bulk(v.as_bytes());
    }
}

fn config_set(ctx: &mut Ctx, args: &[&[u8]]) {
    let rest = &args[2..];
    if !rest.len().is_multiple_of(2) {
        return ctx.syntax_error();
    }
    let mut owned: Vec<(String, String)> = Vec::new();
    for pair in rest.chunks(2) {
        owned.push((
            String::from_utf8_lossy(pair[0]).into_owned(),
            String::from_utf8_lossy(pair[1]).into_owned(),
        ));
    }
    let pairs: Vec<(&str, &str)> = owned
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let before = ctx.srv.settings();
    match ctx.srv.config.set_many(&pairs, ctx.client.is_local) {
        Ok(()) => {
            let s = ctx.srv.settings();
            if let Err(e) = apply_oom_score(ctx.srv, &before, &s, &pairs) {
                return ctx.error(&e);
            }
            ctx.srv.slowlog.trim(s.slowlog_max_len as usize);
            ctx.srv.eviction.apply(&s, &ctx.srv.keyspace);
            ctx.srv
                .keyspace
                .set_active_expire_effort(s.active_expire_effort);
            (crate::kernel::memprobe::probe().background_thread)(s.jemalloc_bg_thread);
            crate::services::expiry::sync_expired_log(ctx.srv);
            // `appendonly yes` writes a base, then appends (services::aof).
            match crate::services::aof::apply_settings(ctx.srv, &s, ctx.client.in_exec) {
                Ok(()) => ctx.ok(),
                Err(e) => ctx.error(&format!("ERR {e}")),
            }
        }
        Err(e) => ctx.error(&e),
    }
}

/// `oom-score-adj` or its values changed: sets the process's score. As
/// Redis, a score the kernel refuses undoes both settings (and the score)
/// and answers CONFIG SET's error naming the setting.
fn apply_oom_score(
    srv: &crate::kernel::server::Server,
    before: &crate::kernel::config::Settings,
    now: &crate::kernel::config::Settings,
    pairs: &[(&str, &str)],
) -> Result<(), String> {
    use crate::base::oom_score;
    if (now.oom_score_adj, now.oom_score_adj_values)
        == (before.oom_score_adj, before.oom_score_adj_values)
    {
        return Ok(());
    }
    let replica = crate::services::replication::is_replica(srv);
    if oom_score::apply(now.oom_score_adj, now.oom_score_adj_values, replica).is_ok() {
        return Ok(());
    }
    let [a, b, c] = before.oom_score_adj_values;
    let values = format!("{a} {b} {c}");
    let undo = [
        ("oom-score-adj", oom_score::MODE_NAMES[before.oom_score_adj]),
        ("oom-score-adj-values", values.as_str()),
    ];
    let _ = srv.config.set_many(&undo, true);
    let _ = oom_score::apply(before.oom_score_adj, before.oom_score_adj_values, replica);
    let name = pairs
        .iter()
        .map(|(n, _)| *n)
        .find(|n| {
            n.eq_ignore_ascii_case("oom-score-adj")
                || n.eq_ignore_ascii_case("oom-score-adj-values")
        })
        .unwrap_or("oom-score-adj");
    Err(format!(
        "ERR CONFIG SET failed (possibly related to argument '{name}') - Failed to set current oom_score_adj. Check server logs."
    ))
}

/// CONFIG SET's arguments hidden from MONITOR and SLOWLOG: the values of
/// secret settings (`kernel::config::SENSITIVE`), as Redis 7.0 does.
fn redact_config_set(args: &[&[u8]]) -> Vec<usize> {
    args.iter()
        .enumerate()
        .skip(2)
        .step_by(2)
        .filter(|(_, name)| {
            crate::kernel::config::SENSITIVE
                .iter()
                .any(|s| name.eq_ignore_ascii_case(s.as_bytes()))
        })
        .map(|(i, _)| i + 1)
        .filter(|&i| i < args.len())
        .collect()
}

fn config_resetstat(ctx: &mut Ctx, _args: &[&[u8]]) {
    ctx.srv.stats.reset();
    ctx.srv.replication.master.stats.reset();
    ctx.srv.keyspace.reset_stats();
    ctx.srv.defrag.reset_stats();
    for e in &ctx.srv.table.entries {
        e.reset();
    }
    ctx.ok();
}

fn config_rewrite(ctx: &mut Ctx, _args: &[&[u8]]) {
    match ctx.srv.config.rewrite() {
        Ok(()) => ctx.ok(),
        Err(e) => ctx.error(&e),
    }
}

fn time(ctx: &mut Ctx, _args: &[&[u8]]) {
    let us = crate::base::clock::unix_time_us();
    ctx.out.array_len(2);
    ctx.out.bulk((us / 1_000_000).to_string().as_bytes());
    ctx.out.bulk((us % 1_000_000).to_string().as_bytes());
}

fn shutdown(ctx: &mut Ctx, args: &[&[u8]]) {
    use crate::services::replication::shutdown_wait;
    let mut save = None;
    let (mut force, mut now) = (false, false);
    for a in &args[1..] {
        if eq_ic(a, "NOSAVE") || eq_ic(a, "SAVE") {
            let this = eq_ic(a, "SAVE");
            if save.is_some_and(|s| s != this) {
                return ctx.syntax_error();
            }
            save = Some(this);
        } else if eq_ic(a, "NOW") || eq_ic(a, "FORCE") || eq_ic(a, "ABORT") {
            if eq_ic(a, "ABORT") && args.len() > 2 {
                return ctx.syntax_error();
            }
            if eq_ic(a, "ABORT") {
                return if shutdown_wait::abort(ctx.srv) {
                    ctx.ok()
                } else {
                    ctx.error(errors::ERR_NO_SHUTDOWN_PROGRESS)
                };
            }
            force |= eq_ic(a, "FORCE");
            now |= eq_ic(a, "NOW");
        } else {
            return ctx.syntax_error();
        }
    }
    if save != Some(false) && ctx.srv.scripting.timed_out() {
        // A script past busy-reply-threshold: only SHUTDOWN NOSAVE goes.
        return ctx.error(if ctx.srv.scripting.running_function() {
            errors::BUSY_FUNCTION
        } else {
            errors::BUSY_EVAL
        });
    }
    // A shutdown already waiting for replicas: this caller waits with it.
    if shutdown_wait::in_progress(ctx.srv) {
        if let Some(w) = park_shutdown(ctx) {
            shutdown_wait::add_waiter(ctx.srv, w);
        }
        return;
    }
    // Replicas behind the stream: wait for them first (up to
    // shutdown-timeout seconds), unless NOW.
    let timeout_s = ctx.srv.settings().shutdown_timeout;
    if !now && timeout_s > 0 && !shutdown_wait::ready(ctx.srv) {
        if let Some(srv) = crate::services::replication::server() {
            if let Some(w) = park_shutdown(ctx) {
                shutdown_wait::start(&srv, Some(w), save, force, timeout_s);
            }
            return;
        }
    }
    // Stops a background save and saves when asked or when save points are
    // set; a failed save keeps the server running unless FORCE.
    if crate::services::snapshot::prepare_shutdown(ctx.srv, save, force).is_err() {
        return ctx.error(errors::ERR_SHUTDOWN_FAILED);
    }
    ctx.srv.shutdown_requested.store(true, Relaxed);
    ctx.client.shutdown_requested = true;
    ctx.srv.hub.broadcast_shutdown();
}

/// Parks a SHUTDOWN caller (no deadline: the wait's own timeout ends it);
/// None when it could not be parked (then `park` answered).
fn park_shutdown(ctx: &mut Ctx) -> Option<std::sync::Arc<crate::kernel::blocking::Waiter>> {
    crate::services::blocking::park(ctx, &[], None, Box::new(ShutdownWaitOp));
    ctx.client.blocked.clone()
}

/// A SHUTDOWN parked while replicas catch up: keyless, answered by
/// `services::replication::shutdown_wait` only if the shutdown does not
/// happen (CLIENT UNBLOCK gets the same error).
#[derive(Debug)]
struct ShutdownWaitOp;

impl crate::kernel::blocking::BlockedOp for ShutdownWaitOp {
    fn awaits(&self) -> store::Kind {
        store::Kind::String
    }

    fn ready(
        &self,
        _g: &mut store::keyspace::MultiGuard<'_>,
        _db: usize,
        _key: &store::Key<'_>,
        _now_ms: u64,
    ) -> Result<crate::kernel::blocking::Readiness, crate::kernel::coll::WrongType> {
        Ok(crate::kernel::blocking::Readiness::NotYet)
    }

    fn serve(
        &self,
        _g: &mut store::keyspace::MultiGuard<'_>,
        _db: usize,
        _key: &[u8],
        _now_ms: u64,
        _limits: &collections::Limits,
        _out: &mut resp::ReplyBuf,
        _effects: &mut crate::kernel::blocking::Served,
    ) {
    }

    fn timeout_reply(&self, out: &mut resp::ReplyBuf) {
        out.error(errors::ERR_SHUTDOWN_FAILED);
    }

    fn empty_reply(&self, out: &mut resp::ReplyBuf) {
        self.timeout_reply(out);
    }
}

fn monitor(ctx: &mut Ctx, _args: &[&[u8]]) {
    if !ctx.client.monitor {
        crate::services::monitor::start_monitor(ctx.srv, ctx.client);
    }
    ctx.ok();
}
