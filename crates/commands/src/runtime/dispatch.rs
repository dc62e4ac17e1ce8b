//! Command execution: lookup, arity, authentication, the ACL permission
//! check, the `maxmemory` gate,
//! MULTI queueing, pause, then the handler, then statistics, SLOWLOG,
//! LATENCY, MONITOR feeds, WATCH invalidation, client-side caching
//! (`services::tracking`) and blocked-client wake-ups.
//!
//! This is the single entry point the network layer calls for every parsed
//! command; everything a command needs besides its arguments comes from the
//! [`Server`] and the [`Client`]. Every cross-cutting step runs here once,
//! for every command; a command opts in or out through its spec's flags
//! (`kernel::spec::flag`) and redactor, never by its name.

use std::fmt::Write as _;

use resp::ReplyBuf;

use crate::base::errors;
use crate::base::text::sanitize;
use crate::kernel::client::{Client, ReplyMode};
use crate::kernel::config::Settings;
use crate::kernel::ctx::Ctx;
use crate::kernel::server::Server;
use crate::kernel::spec::{flag, CommandSpec};

/// What the network layer should do after [`execute`].
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The command ran (or was rejected with an error reply).
    Done,
    /// The server is paused for this command: keep it and retry later.
    Paused,
    /// The command blocked the client (`client.blocked` is set): read no
    /// more commands until its worker gets the reply.
    Blocked,
}

/// Executes one command. `args[0]` is the command name.
pub fn execute(
    srv: &Server,
    client: &mut Client,
    settings: &Settings,
    args: &[&[u8]],
    out: &mut ReplyBuf,
) -> Outcome {
    let reply_start = out.len();
    out.record_pushes();
    // Inside the script gate until the end (see kernel::scripting).
    let _gate = srv.scripting.enter();
    // ASKING holds for the next command only (for a whole transaction when
    // given inside MULTI); ASKING itself sets it again, and a command held
    // back by CLIENT PAUSE keeps it for its retry.
    let asking = if client.tx.in_multi() {
        client.cluster_asking
    } else {
        std::mem::take(&mut client.cluster_asking)
    };
    let mut outcome = execute_inner(srv, client, settings, args, out, asking);
    if outcome == Outcome::Paused && asking {
        client.cluster_asking = true;
    }
    let pushes = out.take_push_marks();
    if client.blocked.is_some() {
        outcome = Outcome::Blocked;
    }
    if !client.ready_keys.is_empty() && !client.in_exec {
        let keys = std::mem::take(&mut client.ready_keys);
        // Serving waiters writes: one journal unit.
        let _journal =
            crate::services::journal::scope(srv, crate::services::journal::Mode::Exclusive);
        crate::services::blocking::serve_ready(
            srv,
            &settings.limits,
            settings.notify_keyspace_events,
            keys,
        );
    }
    if outcome == Outcome::Done {
        match client.reply_mode {
            ReplyMode::On => {}
            ReplyMode::Off => mute(out, reply_start, &pushes),
            ReplyMode::SkipNext => client.reply_mode = ReplyMode::Skipping,
            ReplyMode::Skipping => {
                mute(out, reply_start, &pushes);
                client.reply_mode = ReplyMode::On;
            }
        }
    }
    outcome
}

/// Drops the command's reply (`CLIENT REPLY OFF|SKIP`) but keeps the push
/// frames it wrote at `pushes` (Pub/Sub confirmations and messages), which
/// Redis 7.0 delivers whatever the reply mode.
fn mute(out: &mut ReplyBuf, reply_start: usize, pushes: &[usize]) {
    let kept: Vec<u8> = pushes
        .iter()
        .filter(|&&at| at >= reply_start)
        .filter_map(|&at| {
            let frame = &out.as_bytes()[at..];
            match resp::parse_value(frame) {
                Ok(Some((_, n))) => Some(frame[..n].to_vec()),
                _ => None,
            }
        })
        .flatten()
        .collect();
    out.truncate(reply_start);
    out.raw(&kept);
}

fn reject(srv: &Server, out: &mut ReplyBuf, msg: &str) {
    out.error(msg);
    srv.stats.count_error(msg.as_bytes());
}

/// Rejects a command before execution; inside MULTI this also dooms the
/// transaction (EXEC will answer EXECABORT), as in Redis. A rejected EXEC
/// itself (wrong arity, NOAUTH, OOM...) discards the transaction and
/// answers `EXECABORT Transaction discarded because of: <why>`, in MULTI
/// or not, as Redis 7.0 does.
fn reject_cmd(srv: &Server, client: &mut Client, name: &[u8], out: &mut ReplyBuf, msg: &str) {
    if name.eq_ignore_ascii_case(b"exec") {
        crate::services::transactions::discard_transaction(srv, client);
        let why = msg.strip_prefix("ERR ").unwrap_or(msg);
        return reject(
            srv,
            out,
            &format!("EXECABORT Transaction discarded because of: {why}"),
        );
    }
    if client.tx.in_multi() {
        client.tx.dirty_exec = true;
    }
    reject(srv, out, msg);
}

fn execute_inner(
    srv: &Server,
    client: &mut Client,
    settings: &Settings,
    args: &[&[u8]],
    out: &mut ReplyBuf,
    asking: bool,
) -> Outcome {
    let table = &srv.table;
    // Pipelines usually repeat one command: reuse the last lookup when the
    // name bytes are identical.
    let cached = match &client.last_lookup {
        Some((name, i)) if name.as_slice() == args[0] => Some(*i),
        _ => None,
    };
    let found = cached.or_else(|| {
        let i = table.lookup(args[0])?;
        client.last_lookup = Some((args[0].to_vec(), i));
        Some(i)
    });
    let Some(mut idx) = found else {
        let mut msg = errors::unknown_command_with_args(&sanitize(args[0], 128));
        for a in args.iter().skip(1) {
            if msg.len() >= 1024 {
                break;
            }
            let _ = write!(msg, "'{}' ", sanitize(a, 128));
        }
        reject_cmd(srv, client, args[0], out, &msg);
        return Outcome::Done;
    };
    let top = table.get(idx);
    // A container with its own handler (COMMAND) also runs without a subcommand.
    if !(top.spec.subcommands.is_empty() || args.len() < 2 && top.spec.handler.is_some()) {
        if args.len() < 2 {
            top.stats
                .rejected_calls
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            reject_cmd(
                srv,
                client,
                args[0],
                out,
                &errors::wrong_arity(&top.full_name),
            );
            return Outcome::Done;
        }
        match table.lookup_sub(idx, args[1]) {
            Some(s) => idx = s,
            None => {
                let msg = errors::unknown_subcommand(&sanitize(args[1], 128), &top.full_name);
                reject_cmd(srv, client, args[0], out, &msg);
                return Outcome::Done;
            }
        }
    }
    let entry = table.get(idx);
    let spec = entry.spec;
    if !spec.arity_ok(args.len()) {
        entry
            .stats
            .rejected_calls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        reject_cmd(
            srv,
            client,
            args[0],
            out,
            &errors::wrong_arity(&entry.full_name),
        );
        return Outcome::Done;
    }
    if !client.authenticated && spec.flags & flag::NO_AUTH == 0 && srv.acl.auth_required() {
        entry
            .stats
            .rejected_calls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        reject_cmd(srv, client, args[0], out, errors::NOAUTH);
        return Outcome::Done;
    }
    // The permission check (services::acl): one generation compare and
    // one flag test for a user with `+@all ~* &*`.
    crate::services::acl::refresh_user(srv, client);
    if !client.acl.user.unrestricted() {
        let context = crate::services::acl::context_of(client);
        if let Err(d) = crate::services::acl::check_call(srv, client, idx, args, context, None) {
            entry
                .stats
                .rejected_calls
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let msg = crate::services::acl::noperm(srv, idx, d);
            reject_cmd(srv, client, args[0], out, &msg);
            return Outcome::Done;
        }
    }
    // Cluster mode: the slot check, once, for every command (and for EXEC,
    // its whole queue), as Redis does right after the permission check.
    // The pass is held until the command has run (`services::cluster::Pass`).
    let _pass = if srv.cluster.enabled && client.replay_now_ms.is_none() {
        let asking = asking || spec.flags & flag::ASKING != 0;
        match cluster_gate(srv, client, settings, spec, args, asking) {
            Ok(pass) => pass,
            Err(r) => {
                entry
                    .stats
                    .rejected_calls
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if spec.flags & flag::RUNS_QUEUE != 0 {
                    // A redirected EXEC drops the transaction and answers the
                    // redirection itself.
                    crate::services::transactions::discard_transaction(srv, client);
                    reject(srv, out, &r.text());
                } else {
                    reject_cmd(srv, client, args[0], out, &r.text());
                }
                return Outcome::Done;
            }
        }
    } else {
        None
    };
    if client.protocol == resp::Protocol::Resp2
        && spec.flags & flag::SUBSCRIBED_OK == 0
        && client.pubsub.is_subscribed()
    {
        entry
            .stats
            .rejected_calls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let msg = errors::not_in_subscribed_context(&entry.full_name);
        reject_cmd(srv, client, args[0], out, &msg);
        return Outcome::Done;
    }
    if let Some(outcome) = script_running(srv, client, spec, out) {
        return outcome;
    }
    let flags = match spec.flags_of {
        Some(f) => f(srv, args, spec.flags),
        None => spec.flags,
    };
    if srv.eviction.maxmemory() > 0 && over_memory(srv, client, settings, flags, out) {
        entry
            .stats
            .rejected_calls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        reject_cmd(srv, client, args[0], out, crate::base::errors::OOM_ERROR);
        return Outcome::Done;
    }
    if let Some(msg) = persistence_gate(srv, client, settings, spec, flags) {
        entry
            .stats
            .rejected_calls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        reject_cmd(srv, client, args[0], out, &msg);
        return Outcome::Done;
    }
    if client.tx.in_multi() && spec.flags & flag::NOT_QUEUED == 0 {
        if spec.flags & flag::NO_MULTI != 0 {
            reject_cmd(
                srv,
                client,
                args[0],
                out,
                errors::ERR_COMMAND_NOT_ALLOWED_INSIDE_TRANSACTION,
            );
            return Outcome::Done;
        }
        crate::services::transactions::queue_command(client, args);
        out.simple("QUEUED");
        return Outcome::Done;
    }
    let now_ms = crate::base::clock::cached_time_ms();
    // A FAILOVER, and a SHUTDOWN waiting for replicas, pause writes as
    // CLIENT PAUSE WRITE does.
    let pause = srv
        .active_pause(now_ms)
        .or_else(|| crate::services::replication::failover::pause(srv))
        .or_else(|| crate::services::replication::shutdown_wait::pause(srv));
    if let Some(p) = pause {
        let writes = if spec.flags & flag::RUNS_QUEUE != 0 {
            queued_any(srv, client, flag::WRITE | flag::MAY_REPLICATE)
        } else {
            flags & (flag::WRITE | flag::MAY_REPLICATE) != 0
        };
        // As in Redis 7.0, PAUSE ALL holds up every command of a normal
        // client, CLIENT UNPAUSE and PING included (the pause then ends by
        // its timeout or from a client it does not hold).
        if p.all || writes {
            // CLIENT LIST shows the postponed command (`cmd=`), as Redis does.
            client
                .shared
                .last_cmd
                .store(idx as u32 + 1, std::sync::atomic::Ordering::Relaxed);
            return Outcome::Paused;
        }
    }

    let runs_script = spec.flags & flag::RUNS_SCRIPT != 0
        || spec.flags & flag::RUNS_QUEUE != 0 && queued_any(srv, client, flag::RUNS_SCRIPT);
    if runs_script && !srv.scripting.try_begin(client.id, now_ms) {
        // Another script claimed the slot since the check above.
        return Outcome::Paused;
    }
    call(srv, client, settings, idx, args, out, now_ms);
    if runs_script {
        srv.scripting.end();
    }
    Outcome::Done
}

/// The cluster slot check of one command, or of EXEC's queue
/// (`services::cluster::check_calls`).
fn cluster_gate<'a>(
    srv: &'a Server,
    client: &Client,
    settings: &Settings,
    spec: &'static CommandSpec,
    args: &[&[u8]],
    asking: bool,
) -> Result<Option<crate::services::cluster::Pass<'a>>, crate::services::cluster::Redirect> {
    let now_ms = crate::base::clock::cached_time_ms();
    let readonly = client.cluster_readonly;
    let use_pport = crate::services::cluster::use_pport(settings, client.is_tls);
    if spec.flags & flag::RUNS_QUEUE != 0 {
        let Some(queue) = client.tx.queue.as_ref() else {
            return Ok(None);
        };
        let mut calls = Vec::with_capacity(queue.len());
        let mut writes = false;
        for cmd in queue {
            let argv: Vec<&[u8]> = cmd.iter().map(|a| a.as_slice()).collect();
            if let Ok(idx) = resolve(srv, &argv) {
                let spec = srv.table.get(idx).spec;
                writes |= spec.flags & flag::WRITE != 0;
                calls.push((spec, argv));
            }
        }
        return crate::services::cluster::check_calls_pass(
            srv, settings, &calls, writes, asking, readonly, now_ms, use_pport,
        );
    }
    let writes = spec.flags & flag::WRITE != 0;
    crate::services::cluster::check_calls_pass(
        srv,
        settings,
        &[(spec, args.to_vec())],
        writes,
        asking,
        readonly,
        now_ms,
        use_pport,
    )
}

/// While a script runs (see `kernel::scripting`), other clients' commands
/// wait their turn until it passes `busy-reply-threshold`, then get
/// `-BUSY`, except `allow-busy` commands that name no key (SCRIPT KILL,
/// FUNCTION KILL, SHUTDOWN, MULTI...), which run. A key-naming one (WATCH)
/// waits: the script holds every partition.
fn script_running(
    srv: &Server,
    client: &mut Client,
    spec: &CommandSpec,
    out: &mut ReplyBuf,
) -> Option<Outcome> {
    let (owner, _) = srv.scripting.running()?;
    if owner == client.id {
        return None;
    }
    if !srv.scripting.timed_out() {
        // Most scripts end within microseconds: wait a little before
        // handing the command back for a retry (10 ms later).
        if crate::kernel::hub::current_worker().is_some()
            && srv
                .scripting
                .wait_briefly(std::time::Duration::from_micros(200))
        {
            return None;
        }
        return Some(Outcome::Paused);
    }
    if spec.flags & flag::ALLOW_BUSY != 0 {
        let names_keys = spec.keys.first != 0 || spec.getkeys.is_some();
        return if names_keys {
            Some(Outcome::Paused)
        } else {
            None
        };
    }
    let msg = if srv.scripting.running_function() {
        errors::BUSY_FUNCTION
    } else {
        errors::BUSY_EVAL
    };
    reject_cmd(srv, client, spec.name.as_bytes(), out, msg);
    Some(Outcome::Done)
}

/// `maxmemory` gate (see `eviction`): should this command be refused with
/// OOM? Denyoom commands are, and inside MULTI every command but EXEC,
/// DISCARD, QUIT and RESET (queuing takes memory); EXEC is when a queued
/// command is denyoom. Evicts first when the policy allows.
fn over_memory(
    srv: &Server,
    client: &Client,
    settings: &Settings,
    flags: u32,
    out: &mut ReplyBuf,
) -> bool {
    let mut denyoom = flags & flag::DENYOOM != 0;
    if client.tx.in_multi() && flags & flag::ENDS_TX == 0 {
        denyoom = true;
    }
    if flags & flag::RUNS_QUEUE != 0 {
        denyoom = queued_any(srv, client, flag::DENYOOM);
    }
    if !denyoom {
        return false;
    }
    crate::services::eviction::perform(srv, settings.notify_keyspace_events, client.id, out)
        == crate::services::eviction::Outcome::Fail
}

/// Redis's persistence refusals, in its order: MISCONF for writes (and
/// PING) after a failed background save (`services::snapshot::writes_refused`)
/// or while the AOF cannot be written (`services::aof::write_error`),
/// then replication's (NOREPLICAS, READONLY, MASTERDOWN), then LOADING
/// for commands without the `loading` flag while the dataset loads (during
/// an async load, for commands with the `no_async_loading` flag). EXEC
/// is judged by its queued commands; `flags` are the command's as this
/// call sees them (a script's declared flags, `CommandSpec::flags_of`).
fn persistence_gate(
    srv: &Server,
    client: &Client,
    settings: &Settings,
    spec: &CommandSpec,
    flags: u32,
) -> Option<std::borrow::Cow<'static, str>> {
    let queue = spec.flags & flag::RUNS_QUEUE != 0;
    let writes = if queue {
        queued_any(srv, client, flag::WRITE)
    } else {
        flags & (flag::WRITE | flag::DISK_ERROR_PROBE) != 0
    };
    if writes {
        if crate::services::snapshot::writes_refused(srv, settings) {
            return Some(errors::MISCONF_RDB.into());
        }
        if let Some(msg) = crate::services::aof::write_error(srv) {
            return Some(msg.into());
        }
    }
    // Replication's refusals concern write commands only (not PING).
    let is_write = if queue {
        queued_any(srv, client, flag::WRITE)
    } else {
        flags & flag::WRITE != 0
    };
    if is_write {
        if crate::services::replication::too_few_good_replicas(srv, settings) {
            return Some(errors::NOREPLICAS.into());
        }
        // A read-only replica takes writes from its master only.
        if client.kind != crate::kernel::client::ClientKind::Master
            && crate::services::replication::refuses_writes(srv, settings)
        {
            return Some(errors::READONLY_REPLICA.into());
        }
    }
    // `replica-serve-stale-data no` while the link to the master is down:
    // only `stale` commands (EXEC: when all it queued are).
    if client.kind != crate::kernel::client::ClientKind::Master
        && crate::services::replication::serves_stale_only(srv, settings)
    {
        let denied = if queue {
            client.tx.queue.as_ref().is_some_and(|q| {
                q.iter().any(|c| {
                    let argv: Vec<&[u8]> = c.iter().map(|a| a.as_slice()).collect();
                    resolve(srv, &argv)
                        .is_ok_and(|i| srv.table.get(i).spec.flags & flag::STALE == 0)
                })
            })
        } else {
            flags & flag::STALE == 0
        };
        if denied {
            return Some(errors::MASTERDOWN.into());
        }
    }
    if srv.persistence.is_async_loading() {
        // Async loading (a replica's swapdb load): the served dataset
        // stays; only `no_async_loading` commands wait (EXEC: when one
        // of the queued is).
        let refused = if queue {
            queued_any(srv, client, flag::NO_ASYNC_LOADING)
        } else {
            spec.flags & flag::NO_ASYNC_LOADING != 0
        };
        if refused {
            return Some(errors::LOADING.into());
        }
    } else if srv.persistence.is_loading() {
        let refused = if queue {
            client.tx.queue.as_ref().is_some_and(|q| {
                q.iter().any(|c| {
                    let argv: Vec<&[u8]> = c.iter().map(|a| a.as_slice()).collect();
                    resolve(srv, &argv)
                        .is_ok_and(|i| srv.table.get(i).spec.flags & flag::LOADING == 0)
                })
            })
        } else {
            spec.flags & flag::LOADING == 0
        };
        if refused {
            return Some(errors::LOADING.into());
        }
    }
    None
}

/// Does any command queued in the client's transaction have one of `flags`?
fn queued_any(srv: &Server, client: &Client, flags: u32) -> bool {
    client.tx.queue.as_ref().is_some_and(|q| {
        q.iter().any(|c| {
            let argv: Vec<&[u8]> = c.iter().map(|a| a.as_slice()).collect();
            resolve(srv, &argv).is_ok_and(|i| srv.table.get(i).spec.flags & flags != 0)
        })
    })
}

/// Runs a command queued by MULTI (from EXEC): checks were done when it was queued.
pub fn execute_queued(
    srv: &Server,
    client: &mut Client,
    settings: &Settings,
    args: &[&[u8]],
    out: &mut ReplyBuf,
) {
    let now_ms = client
        .replay_now_ms
        .unwrap_or_else(crate::base::clock::unix_time_ms);
    match resolve(srv, args) {
        Ok(idx) => {
            // Rules may have changed since the command was queued. A
            // replaying client (the AOF loader) has no user and is not
            // checked, as Redis's loader client is not.
            let context = crate::kernel::acl::log::Context::Multi;
            if client.replay_now_ms.is_none() {
                if let Err(d) =
                    crate::services::acl::check_call(srv, client, idx, args, context, None)
                {
                    return reject(srv, out, &crate::services::acl::exec_text(d));
                }
            }
            call(srv, client, settings, idx, args, out, now_ms)
        }
        Err(msg) => reject(srv, out, &msg),
    }
}

/// Finds the command-table index for `args` (subcommand included).
pub fn resolve(srv: &Server, args: &[&[u8]]) -> Result<usize, String> {
    let table = &srv.table;
    let idx = table
        .lookup(args[0])
        .ok_or_else(|| errors::unknown_command(&sanitize(args[0], 128)))?;
    let top = table.get(idx);
    if top.spec.subcommands.is_empty() || (args.len() < 2 && top.spec.handler.is_some()) {
        return Ok(idx);
    }
    if args.len() < 2 {
        return Err(errors::wrong_arity(&top.full_name));
    }
    table
        .lookup_sub(idx, args[1])
        .ok_or_else(|| errors::unknown_subcommand(&sanitize(args[1], 128), &top.full_name))
}

/// Runs the handler of command `idx` and records everything about the call.
pub(crate) fn call(
    srv: &Server,
    client: &mut Client,
    settings: &Settings,
    idx: usize,
    args: &[&[u8]],
    out: &mut ReplyBuf,
    now_ms: u64,
) {
    let entry = srv.table.get(idx);
    let spec = entry.spec;
    let Some(handler) = spec.handler else {
        reject_cmd(
            srv,
            client,
            args[0],
            out,
            &errors::unknown_subcommand_for(&entry.full_name),
        );
        return;
    };
    client
        .shared
        .last_cmd
        .store(idx as u32 + 1, std::sync::atomic::Ordering::Relaxed);
    let argv_mem: usize = args.iter().map(|a| a.len()).sum();
    client
        .shared
        .argv_mem
        .store(argv_mem as u64, std::sync::atomic::Ordering::Relaxed);
    if spec.flags & flag::RUNS_SCRIPT != 0
        && srv.has_monitors.load(std::sync::atomic::Ordering::Relaxed)
    {
        // As Redis shows it: the script first, then the commands it calls.
        let redacted = redact(spec, args);
        crate::services::monitor::feed_monitors(srv, client, redacted.as_deref().unwrap_or(args));
    }
    // The write journal's unit around the handler (services::journal).
    let outermost = !crate::services::journal::in_scope();
    let journal = journal_scope(srv, spec);
    // Let through on a MIGRATING slot before this thread got the journal's
    // order lock: a MIGRATE that held it meanwhile may have moved the keys,
    // so the slot check is made again (`services::cluster::Pass`).
    if outermost && journal.is_some() && crate::services::cluster::holds_pass() {
        let asking = spec.flags & flag::ASKING != 0;
        if let Err(r) = cluster_gate(srv, client, settings, spec, args, asking) {
            drop(journal);
            reject_cmd(srv, client, args[0], out, &r.text());
            return;
        }
    }
    let db_before = client.db;
    let start = crate::base::stopwatch::Stopwatch::start();
    let mut ctx = Ctx {
        srv,
        client,
        settings,
        out,
        cmd_index: idx,
        failed: false,
        now_ms,
        propagate: Default::default(),
    };
    // A stopped partition (a command panicked while changing it, see
    // `store::partlock`) refuses every lock: the command answers an error
    // and whatever it wrote to the reply before is taken back. Any other
    // panic goes on to the connection, which closes (`server::conn`).
    let mark = ctx.out.len();
    // During a replica's async load, Redis 7.0 suspends expiry for every
    // lookup (`keyIsExpired` while loading): clients reading the old data
    // see keys whose TTL passed as present (`with_expired_visible`, in
    // effect while a replica's expiry is frozen).
    let expired_visible = srv.persistence.is_async_loading();
    // A replica's own clients (writable with `replica-read-only no`): the
    // keys they give a TTL are the replica's to expire.
    let local_ttls = crate::services::replication::is_replica(srv)
        && ctx.client.kind != crate::kernel::client::ClientKind::Master;
    if let Err(payload) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        use store::keyspace::Keyspace;
        match (expired_visible, local_ttls) {
            (false, false) => handler(&mut ctx, args),
            (true, false) => Keyspace::with_expired_visible(|| handler(&mut ctx, args)),
            (false, true) => Keyspace::with_local_ttls_tracked(|| handler(&mut ctx, args)),
            (true, true) => Keyspace::with_expired_visible(|| {
                Keyspace::with_local_ttls_tracked(|| handler(&mut ctx, args))
            }),
        }
    })) {
        match payload.downcast_ref::<store::partlock::PartitionStopped>() {
            Some(stopped) => {
                ctx.out.truncate(mark);
                ctx.error(&errors::partition_stopped(stopped.0));
            }
            None => std::panic::resume_unwind(payload),
        }
    }
    let failed = ctx.failed;
    let propagate = std::mem::take(&mut ctx.propagate);
    let client = ctx.client;
    let out = ctx.out;
    if journal.is_some() {
        journal_record(srv, spec, client, db_before, failed, propagate, args);
    }
    client
        .shared
        .argv_mem
        .store(0, std::sync::atomic::Ordering::Relaxed);
    let ns = start.elapsed_ns();
    let us = ns / 1000;
    entry.record(ns, settings.latency_tracking);
    if failed {
        entry
            .stats
            .failed_calls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    {
        // Only this client's thread writes its counters.
        let c = &client.shared.tot_cmds;
        c.store(
            c.load(std::sync::atomic::Ordering::Relaxed) + 1,
            std::sync::atomic::Ordering::Relaxed,
        );
    }
    if spec.flags & flag::SKIP_SLOWLOG == 0
        && settings.slowlog_log_slower_than >= 0
        && us >= settings.slowlog_log_slower_than as u64
    {
        let name = client.shared.strings.lock().name.clone();
        let redacted = redact(spec, args);
        srv.slowlog.push(
            redacted.as_deref().unwrap_or(args),
            us,
            &client.shared.addr,
            &name,
            settings.slowlog_max_len as usize,
        );
    }
    let ms = us / 1000;
    if settings.latency_monitor_threshold > 0 && ms >= settings.latency_monitor_threshold {
        let ev = if spec.flags & flag::FAST != 0 {
            "fast-command"
        } else {
            "command"
        };
        srv.latency.add(ev, ms);
    }
    if !failed && spec.flags & flag::WRITE != 0 {
        let whole_db = spec.flags & flag::WHOLE_KEYSPACE != 0;
        // Changes since the last save (INFO persistence): one per change the
        // command signalled; the whole-database commands count once.
        let changes = if whole_db { 1 } else { client.changes };
        srv.stats
            .dirty
            .fetch_add(changes, std::sync::atomic::Ordering::Relaxed);
        if srv.watches.any() {
            touch_watched(srv, client);
        }
        if srv.blocking.any() && !whole_db {
            collect_ready_keys(client, spec, args);
        }
    }
    crate::services::tracking::after_command(srv, client, spec, args, out);
    client.changes = 0;
    client.modified.clear();
    if srv.has_monitors.load(std::sync::atomic::Ordering::Relaxed)
        && spec.flags & (flag::SKIP_MONITOR | flag::ADMIN) == 0
    {
        let redacted = redact(spec, args);
        crate::services::monitor::feed_monitors(srv, client, redacted.as_deref().unwrap_or(args));
    }
}

/// Opens the command's journal unit (None when the journal is off):
/// exclusive for anything that may write, shared for the rest, none for
/// admin and `allow-busy` commands that do not write (they never touch
/// keys, and some, like BGREWRITEAOF, take the order lock themselves).
fn journal_scope<'a>(
    srv: &'a Server,
    spec: &CommandSpec,
) -> Option<crate::services::journal::Scope<'a>> {
    use crate::services::journal::{scope, Mode};
    if !srv.journal.enabled() {
        return None;
    }
    let writes = flag::WRITE | flag::MAY_REPLICATE | flag::RUNS_QUEUE | flag::RUNS_SCRIPT;
    if spec.flags & writes != 0 {
        scope(srv, Mode::Exclusive)
    } else if spec.flags & (flag::ADMIN | flag::ALLOW_BUSY) != 0 {
        None
    } else {
        scope(srv, Mode::Shared)
    }
}

/// Adds the command's propagated form to the open journal unit: as sent
/// when it reported a change (or changes whole databases), its rewrite
/// when it gave one, nothing for reads, no-op writes and commands that run
/// others (EXEC and scripts journal what they ran).
fn journal_record(
    srv: &Server,
    spec: &CommandSpec,
    client: &Client,
    db: usize,
    failed: bool,
    propagate: crate::kernel::journal::Propagate,
    args: &[&[u8]],
) {
    use crate::kernel::journal::Propagate;
    use crate::services::journal::{expired_into_unit, record, record_args};
    expired_into_unit(srv);
    match propagate {
        Propagate::Nothing => {}
        Propagate::As(cmds) => cmds.into_iter().for_each(|c| record(db, c)),
        Propagate::Always => {
            if !failed {
                record_args(db, args)
            }
        }
        Propagate::Verbatim => {
            let writes = spec.flags & (flag::WRITE | flag::MAY_REPLICATE) != 0;
            let runs_others = spec.flags & (flag::RUNS_QUEUE | flag::RUNS_SCRIPT) != 0;
            let whole = spec.flags & flag::WHOLE_KEYSPACE != 0 && !failed;
            if writes && !runs_others && (client.changes > 0 || whole) {
                record_args(db, args);
            }
        }
    }
}

/// Invalidates WATCHes on the keys the command reported changing (see
/// `Ctx::modified`): a no-op write leaves WATCHes alone, as in Redis.
fn touch_watched(srv: &Server, client: &Client) {
    for (db, k) in &client.modified {
        srv.watches.touch(Some(*db), k);
    }
}

/// What Redis shows instead of a secret argument in MONITOR and SLOWLOG.
const REDACTED: &[u8] = b"(redacted)";

/// The arguments as MONITOR and SLOWLOG may show them: `None` when nothing
/// is secret, else a copy with the arguments the spec's redactor names
/// replaced by `(redacted)`.
fn redact<'a>(spec: &CommandSpec, args: &[&'a [u8]]) -> Option<Vec<&'a [u8]>> {
    let hide = (spec.redact?)(args);
    if hide.is_empty() {
        return None;
    }
    let mut v = args.to_vec();
    for i in hide {
        if let Some(a) = v.get_mut(i) {
            *a = REDACTED;
        }
    }
    Some(v)
}

/// Records the keys a successful write named, so the waiters blocked on them
/// are served after the command (see `services::blocking`). Commands that
/// change whole databases hand their keys over themselves.
fn collect_ready_keys(client: &mut Client, spec: &CommandSpec, args: &[&[u8]]) {
    for i in spec.key_indexes(args).unwrap_or_default() {
        if let Some(k) = args.get(i) {
            client.ready_keys.push(k.to_vec());
        }
    }
}
