//! Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH.
//!
//! While a client is in MULTI, dispatch queues its commands (after the same
//! checks as immediate execution; a rejected command marks the transaction
//! so EXEC answers EXECABORT). EXEC runs the queue inside
//! [`crate::kernel::server::Server::atomically`], which holds every keyspace partition, so no other
//! client on any thread observes the transaction half applied. The WATCH
//! registry is `kernel::watches`.

use std::sync::atomic::Ordering::Relaxed;

use crate::base::errors;
use crate::kernel::client::cflag;
use crate::kernel::ctx::Ctx;
use crate::kernel::spec::{flag, CommandSpec, Docs, KeyPos};
use crate::services::transactions::{discard_transaction, unwatch_all};

fn multi(ctx: &mut Ctx, _args: &[&[u8]]) {
    if ctx.client.tx.in_multi() {
        return ctx.error(errors::ERR_MULTI_CALLS_CAN_NOT_NESTED);
    }
    ctx.client.tx.queue = Some(Vec::new());
    ctx.client.tx.dirty_exec = false;
    ctx.client.shared.multi.store(0, Relaxed);
    ctx.client.shared.set_flag(cflag::MULTI, true);
    ctx.ok();
}

fn discard(ctx: &mut Ctx, _args: &[&[u8]]) {
    if !ctx.client.tx.in_multi() {
        return ctx.error(errors::ERR_DISCARD_WITHOUT_MULTI);
    }
    discard_transaction(ctx.srv, ctx.client);
    ctx.ok();
}

fn exec(ctx: &mut Ctx, _args: &[&[u8]]) {
    if !ctx.client.tx.in_multi() {
        return ctx.error(errors::ERR_EXEC_WITHOUT_MULTI);
    }
    let queue = ctx.client.tx.queue.take().unwrap_or_default();
    let dirty_exec = ctx.client.tx.dirty_exec;
    let now = ctx.now_ms;
    let watched_expired = ctx
        .client
        .tx
        .watched
        .iter()
        .any(|(_, _, ttl)| ttl.is_some_and(|t| t <= now));
    let dirty_cas = ctx.client.shared.has_flag(cflag::DIRTY_CAS) || watched_expired;
    discard_transaction(ctx.srv, ctx.client);
    if dirty_exec {
        return ctx.error(errors::EXECABORT);
    }
    if dirty_cas {
        ctx.out.null_array();
        return;
    }
    ctx.client.in_exec = true;
    // While EXEC runs, CLIENT INFO/LIST still show the transaction (flag x,
    // multi=<queued>), as Redis does.
    ctx.client.shared.multi.store(queue.len() as i64, Relaxed);
    ctx.client.shared.set_flag(cflag::MULTI, true);
    ctx.out.array_len(queue.len());
    let srv = ctx.srv;
    let settings = ctx.settings;
    let client = &mut *ctx.client;
    let out = &mut *ctx.out;
    let execute_queued = srv.hooks.execute_queued;
    srv.atomically(&mut || {
        for cmd in &queue {
            let argv: Vec<&[u8]> = cmd.iter().map(|a| a.as_slice()).collect();
            execute_queued(srv, client, settings, &argv, out);
        }
    });
    ctx.client.in_exec = false;
    ctx.client.shared.multi.store(-1, Relaxed);
    ctx.client.shared.multi_mem.store(0, Relaxed);
    ctx.client.shared.set_flag(cflag::MULTI, false);
}

fn watch(ctx: &mut Ctx, args: &[&[u8]]) {
    if ctx.client.tx.in_multi() {
        return ctx.error(errors::ERR_WATCH_INSIDE_MULTI_NOT_ALLOWED);
    }
    let db = ctx.client.db;
    for key in &args[1..] {
        if ctx
            .client
            .tx
            .watched
            .iter()
            .any(|(d, k, _)| *d == db && k.as_slice() == *key)
        {
            continue;
        }
        let ttl = ctx.srv.key_expire_at(db, key, ctx.now_ms);
        ctx.srv.watches.add(db, key, &ctx.client.shared);
        ctx.client.tx.watched.push((db, key.to_vec(), ttl));
    }
    ctx.ok();
}

fn unwatch(ctx: &mut Ctx, _args: &[&[u8]]) {
    unwatch_all(ctx.srv, ctx.client);
    ctx.ok();
}

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        acl: &["fast", "transaction"],
        docs: Docs::new("O(1)", "Starts a transaction."),
        ..CommandSpec::new(
            "multi",
            1,
            flag::NOSCRIPT
                | flag::LOADING
                | flag::STALE
                | flag::FAST
                | flag::ALLOW_BUSY
                | flag::NOT_QUEUED,
            multi,
        )
    },
    CommandSpec {
        acl: &["slow", "transaction"],
        docs: Docs::new(
            "Depends on commands in the transaction",
            "Executes all commands in a transaction.",
        ),
        ..CommandSpec::new(
            "exec",
            1,
            flag::NOSCRIPT
                | flag::LOADING
                | flag::STALE
                | flag::SKIP_SLOWLOG
                | flag::NOT_QUEUED
                | flag::ENDS_TX
                | flag::RUNS_QUEUE,
            exec,
        )
    },
    CommandSpec {
        acl: &["fast", "transaction"],
        docs: Docs::new(
            "O(N), when N is the number of queued commands",
            "Discards a transaction.",
        ),
        ..CommandSpec::new(
            "discard",
            1,
            flag::NOSCRIPT
                | flag::LOADING
                | flag::STALE
                | flag::FAST
                | flag::ALLOW_BUSY
                | flag::NOT_QUEUED
                | flag::ENDS_TX,
            discard,
        )
    },
    CommandSpec {
        acl: &["fast", "transaction"],
        keys: KeyPos::ALL,
        docs: Docs::new(
            "O(1) for every key.",
            "Monitors changes to keys to determine the execution of a transaction.",
        ),
        ..CommandSpec::new(
            "watch",
            -2,
            flag::NOSCRIPT
                | flag::LOADING
                | flag::STALE
                | flag::FAST
                | flag::ALLOW_BUSY
                | flag::NOT_QUEUED,
            watch,
        )
    },
    CommandSpec {
        acl: &["fast", "transaction"],
        docs: Docs::new("O(1)", "Forgets about watched keys of a transaction."),
        ..CommandSpec::new(
            "unwatch",
            1,
            flag::NOSCRIPT | flag::LOADING | flag::STALE | flag::FAST | flag::ALLOW_BUSY,
            unwatch,
        )
    },
];
