//! Running one script or function for a client: the checks Redis makes
//! before a run (`scriptPrepareForRun`), the [`Host`] through which the
//! script's `redis.call`s reach the runtime, and what happens after.
//!
//! A run holds every keyspace partition (`Server::atomically`; see
//! `kernel::scripting` for why and for the gate that keeps other workers
//! from waiting inside a lock). The commands it calls run as the script's
//! own client (`[db lua]` in MONITOR), created once per server: it starts
//! each run in the caller's database, so SELECT inside a script never
//! changes the caller's; its `in_exec` makes blocking commands answer as
//! their non-blocking forms; the keys it made ready for blocked clients are
//! handed to the caller, whose command serves them after the script.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use parking_lot::Mutex;
use resp::ReplyBuf;
use scripting::{BusyAction, CallContext, Host, LogLevel, ScriptFlags};

use crate::base::errors;
use crate::kernel::client::{Client, ClientShared};
use crate::kernel::config::{LogLevel as ServerLevel, Settings};
use crate::kernel::ctx::Ctx;
use crate::kernel::scripting::{RunInfo, ScriptCall};
use crate::kernel::server::Server;

/// The id of the scripts' client: never a connection's.
const LUA_CLIENT_ID: u64 = u64::MAX;

/// The scripts' client, shared by every server of the process (its state
/// is reset at the start of every run, and one script runs at a time per
/// server; the mutex serializes servers of tests in one process).
fn lua_client() -> &'static Mutex<Client> {
    static LUA: OnceLock<Mutex<Client>> = OnceLock::new();
    LUA.get_or_init(|| {
        let shared = Arc::new(ClientShared::new(
            LUA_CLIENT_ID,
            "lua".into(),
            String::new(),
            -1,
            0,
            0,
        ));
        let mut c = Client::new(shared, false, true);
        c.authenticated = true;
        c.in_exec = true;
        Mutex::new(c)
    })
}

/// What kind of run, for the checks and the messages.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct RunKind {
    /// `*_RO` command.
    pub read_only: bool,
    /// FCALL / FCALL_RO.
    pub function: bool,
}

/// Redis's checks before a run, given the script's flags. `Err` is the
/// error reply.
pub(super) fn prepare(
    ctx: &mut Ctx,
    flags: ScriptFlags,
    kind: RunKind,
) -> Result<ScriptCall, &'static str> {
    let compat = flags.contains(ScriptFlags::EVAL_COMPAT_MODE);
    let no_writes = flags.contains(ScriptFlags::NO_WRITES);
    let allow_oom = flags.contains(ScriptFlags::ALLOW_OOM);
    // A script without a shebang on a stale replica does not run (one
    // with flags was judged by dispatch from its `allow-stale` flag).
    if compat
        && ctx.client.kind != crate::kernel::client::ClientKind::Master
        && crate::services::replication::serves_stale_only(ctx.srv, ctx.settings)
    {
        return Err(errors::MASTERDOWN);
    }
    if !compat && !no_writes && kind.read_only {
        return Err(errors::ERR_SCRIPT_WRITE_FLAG_RO);
    }
    let srv = ctx.srv;
    // Redis makes room before every command when `maxmemory` is set, and
    // remembers whether it was still over (`pre_command_oom_state`).
    let oom_at_start = srv.eviction.maxmemory() > 0
        && crate::services::eviction::perform(
            srv,
            ctx.settings.notify_keyspace_events,
            ctx.client.id,
            ctx.out,
        ) == crate::services::eviction::Outcome::Fail;
    if !compat && oom_at_start && !allow_oom && !no_writes {
        return Err(errors::ERR_SCRIPT_ALLOW_OOM);
    }
    Ok(ScriptCall {
        read_only: kind.read_only || (!compat && no_writes),
        allow_oom: !compat && allow_oom,
        oom_at_start,
        now_ms: ctx.now_ms,
        caller: ctx.client.id,
    })
}

/// The runtime as a running script sees it.
pub(super) struct RunHost<'a> {
    srv: &'a Server,
    settings: &'a Settings,
    client: &'a mut Client,
    sc: ScriptCall,
    /// The last `redis.call` (not `pcall`) failed: the script's error is
    /// that command's, already counted in the error statistics.
    raised: bool,
}

impl Host for RunHost<'_> {
    fn call(&mut self, argv: &[&[u8]], ctx: CallContext, out: &mut ReplyBuf) {
        self.client.protocol = out.protocol();
        let start = out.len();
        (self.srv.hooks.execute_from_script)(
            self.srv,
            self.client,
            self.settings,
            argv,
            &self.sc,
            out,
        );
        self.raised = !ctx.pcall && matches!(out.as_bytes().get(start).copied(), Some(b'-' | b'!'));
    }

    fn log(&mut self, level: LogLevel, msg: &[u8]) {
        let level = match level {
            LogLevel::Debug => ServerLevel::Debug,
            LogLevel::Verbose => ServerLevel::Verbose,
            LogLevel::Notice => ServerLevel::Notice,
            LogLevel::Warning => ServerLevel::Warning,
        };
        if level as usize >= self.settings.loglevel as usize {
            crate::kernel::scripting::log(level, &String::from_utf8_lossy(msg));
        }
    }

    fn acl_check(&mut self, argv: &[&[u8]]) -> Option<bool> {
        crate::services::acl::allowed_for_script(self.srv, self.client, argv)
    }

    fn busy(&mut self, elapsed: Duration) -> BusyAction {
        let sc = &self.srv.scripting;
        if elapsed.as_millis() as u64 >= self.settings.busy_reply_threshold_ms {
            if !sc.timed_out() {
                sc.mark_timed_out();
                crate::kernel::scripting::log(
                    ServerLevel::Warning,
                    &format!(
                        "Slow script detected: still in execution after {} milliseconds. You can try killing the script using the {} command.",
                        elapsed.as_millis(),
                        if sc.running_function() { "FUNCTION KILL" } else { "SCRIPT KILL" }
                    ),
                );
            }
            // Answer this worker's other clients (-BUSY, SCRIPT KILL...).
            crate::kernel::scripting::pump();
            if self.srv.shutdown_requested.load(Relaxed) {
                sc.force_kill();
            }
        }
        if sc.kill_requested() {
            crate::kernel::scripting::log(
                ServerLevel::Warning,
                "Lua script killed by user with SCRIPT KILL.",
            );
            return BusyAction::Kill;
        }
        BusyAction::Continue
    }
}

/// Runs `run` (which calls the engine with the host) for the client of
/// `ctx`, holding every partition, then hands over what the script left
/// for the caller and counts its error, if any.
pub(super) fn run_with_host(
    ctx: &mut Ctx,
    sc: ScriptCall,
    info: RunInfo,
    run: &mut dyn FnMut(&mut dyn Host, &mut ReplyBuf),
) {
    let srv = ctx.srv;
    srv.scripting.set_info(info);
    let mut lua = lua_client().lock();
    lua.set_db(ctx.client.db);
    // The script's calls run as the caller's user.
    lua.acl = ctx.client.acl.clone();
    lua.ready_keys.clear();
    let start = ctx.out.len();
    let raised = {
        let mut host = RunHost {
            srv,
            settings: ctx.settings,
            client: &mut lua,
            sc,
            raised: false,
        };
        let out = &mut *ctx.out;
        srv.atomically(&mut || run(&mut host, out));
        host.raised
    };
    if !lua.ready_keys.is_empty() {
        ctx.client.ready_keys.append(&mut lua.ready_keys);
    }
    drop(lua);
    let reply = &ctx.out.as_bytes()[start..];
    if matches!(reply.first(), Some(b'-' | b'!')) {
        ctx.failed = true;
        if !raised {
            let text = reply[1..].split(|&c| c == b'\r').next().unwrap_or(b"");
            srv.stats.count_error(text);
        }
    }
}

/// A script's `KEYS` and `ARGV`.
pub(super) type KeysAndArgs<'a, 'b> = (&'b [&'a [u8]], &'b [&'a [u8]]);

/// Parses `numkeys` at `args[2]` and splits the rest into keys and
/// arguments; replies with Redis's error when it does not fit.
pub(super) fn split_keys<'a, 'b>(
    ctx: &mut Ctx,
    args: &'b [&'a [u8]],
) -> Option<KeysAndArgs<'a, 'b>> {
    let n = ctx.parse_i64(args[2])?;
    if n < 0 {
        ctx.error(errors::ERR_NUMKEYS_NEGATIVE);
        return None;
    }
    let rest = &args[3..];
    if n as u64 > rest.len() as u64 {
        ctx.error(errors::ERR_NUMKEYS_OVER_ARGS);
        return None;
    }
    Some(rest.split_at(n as usize))
}
