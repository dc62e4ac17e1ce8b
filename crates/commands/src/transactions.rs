//! Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH.
//!
//! While a client is in MULTI, [`crate::dispatch`] queues its commands (after
//! the same checks as immediate execution; a rejected command marks the
//! transaction so EXEC answers EXECABORT). EXEC runs the queue inside
//! [`Server::atomically`], which holds every keyspace partition, so no other
//! client on any thread observes the transaction half applied.
//!
//! WATCH: the [`Watches`] registry maps (db, key) to the watching clients.
//! Every successful write command touches the keys it names (and FLUSHDB,
//! FLUSHALL, SWAPDB whole databases), setting the watchers' `DIRTY_CAS` flag
//! from whatever thread ran the write; EXEC of a dirty client answers with a
//! null array. Invariant: a key is in the registry with a client iff it is in
//! that client's `Transaction::watched`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::client::{cflag, Client, ClientShared};
use crate::ctx::Ctx;
use crate::server::Server;
use crate::spec::{flag, CommandSpec, Docs, KeyPos};

/// Per-client transaction state.
#[derive(Default, Debug)]
pub struct Transaction {
    /// Queued commands while in MULTI (`None` outside MULTI).
    pub queue: Option<Vec<Vec<Vec<u8>>>>,
    /// A command was rejected while queuing: EXEC must abort.
    pub dirty_exec: bool,
    /// Keys watched with WATCH: (db, key, TTL deadline in unix ms when watched).
    pub watched: Vec<(usize, Vec<u8>, Option<u64>)>,
}

impl Transaction {
    pub fn in_multi(&self) -> bool {
        self.queue.is_some()
    }
}

pub type WatchKey = (usize, Vec<u8>);

#[derive(Default, Debug)]
pub struct Watches {
    entries: AtomicUsize,
    map: Mutex<HashMap<WatchKey, Vec<Arc<ClientShared>>>>,
}

impl Watches {
    fn add(&self, db: usize, key: &[u8], c: &Arc<ClientShared>) {
        let mut m = self.map.lock();
        let v = m.entry((db, key.to_vec())).or_default();
        if !v.iter().any(|x| x.id == c.id) {
            v.push(c.clone());
            self.entries.fetch_add(1, Relaxed);
        }
    }

    fn remove(&self, db: usize, key: &[u8], id: u64) {
        let mut m = self.map.lock();
        let k = (db, key.to_vec());
        if let Some(v) = m.get_mut(&k) {
            let before = v.len();
            v.retain(|x| x.id != id);
            self.entries.fetch_sub(before - v.len(), Relaxed);
            if v.is_empty() {
                m.remove(&k);
            }
        }
    }

    /// True if any client watches anything (one atomic load).
    pub fn any(&self) -> bool {
        self.entries.load(Relaxed) > 0
    }

    /// Marks the watchers of `key` in `db` (or in every db when `db` is None) dirty.
    pub fn touch(&self, db: Option<usize>, key: &[u8]) {
        if !self.any() {
            return;
        }
        let m = self.map.lock();
        match db {
            Some(db) => {
                if let Some(v) = m.get(&(db, key.to_vec())) {
                    v.iter().for_each(|c| c.set_flag(cflag::DIRTY_CAS, true));
                }
            }
            None => {
                for ((_, k), v) in m.iter() {
                    if k == key {
                        v.iter().for_each(|c| c.set_flag(cflag::DIRTY_CAS, true));
                    }
                }
            }
        }
    }

    /// The watched keys of database `db` (every database when None).
    pub fn keys_in_db(&self, db: Option<usize>) -> Vec<WatchKey> {
        if !self.any() {
            return Vec::new();
        }
        let m = self.map.lock();
        m.keys()
            .filter(|(d, _)| db.is_none_or(|db| db == *d))
            .cloned()
            .collect()
    }
}

/// Forgets every watched key of the client (EXEC, DISCARD, UNWATCH, RESET, disconnect).
pub fn unwatch_all(srv: &Server, c: &mut Client) {
    for (db, key, _) in std::mem::take(&mut c.tx.watched) {
        srv.watches.remove(db, &key, c.id);
    }
    c.shared.set_flag(cflag::DIRTY_CAS, false);
}

/// Leaves MULTI without running anything.
pub fn discard_transaction(srv: &Server, c: &mut Client) {
    c.tx.queue = None;
    c.tx.dirty_exec = false;
    c.shared.multi.store(-1, Relaxed);
    c.shared.set_flag(cflag::MULTI, false);
    unwatch_all(srv, c);
}

/// Called by dispatch for commands arriving while in MULTI. Returns true
/// when the command was queued (the caller replies nothing more).
pub fn queue_command(c: &mut Client, args: &[&[u8]]) {
    if let Some(q) = c.tx.queue.as_mut() {
        q.push(args.iter().map(|a| a.to_vec()).collect());
        c.shared.multi.store(q.len() as i64, Relaxed);
    }
}

/// True for the commands that act on the transaction instead of being queued.
pub fn is_transaction_control(full_name: &str) -> bool {
    matches!(
        full_name,
        "exec" | "discard" | "multi" | "watch" | "quit" | "reset"
    )
}

fn multi(ctx: &mut Ctx, _args: &[&[u8]]) {
    if ctx.client.tx.in_multi() {
        return ctx.error("ERR MULTI calls can not be nested");
    }
    ctx.client.tx.queue = Some(Vec::new());
    ctx.client.tx.dirty_exec = false;
    ctx.client.shared.multi.store(0, Relaxed);
    ctx.client.shared.set_flag(cflag::MULTI, true);
    ctx.ok();
}

fn discard(ctx: &mut Ctx, _args: &[&[u8]]) {
    if !ctx.client.tx.in_multi() {
        return ctx.error("ERR DISCARD without MULTI");
    }
    discard_transaction(ctx.srv, ctx.client);
    ctx.ok();
}

fn exec(ctx: &mut Ctx, _args: &[&[u8]]) {
    if !ctx.client.tx.in_multi() {
        return ctx.error("ERR EXEC without MULTI");
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
        return ctx.error("EXECABORT Transaction discarded because of previous errors.");
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
    srv.atomically(&mut || {
        for cmd in &queue {
            let argv: Vec<&[u8]> = cmd.iter().map(|a| a.as_slice()).collect();
            crate::dispatch::execute_queued(srv, client, settings, &argv, out);
        }
    });
    ctx.client.in_exec = false;
    ctx.client.shared.multi.store(-1, Relaxed);
    ctx.client.shared.set_flag(cflag::MULTI, false);
}

fn watch(ctx: &mut Ctx, args: &[&[u8]]) {
    if ctx.client.tx.in_multi() {
        return ctx.error("ERR WATCH inside MULTI is not allowed");
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
            flag::NOSCRIPT | flag::LOADING | flag::STALE | flag::FAST | flag::ALLOW_BUSY,
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
            flag::NOSCRIPT | flag::LOADING | flag::STALE | flag::SKIP_SLOWLOG,
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
            flag::NOSCRIPT | flag::LOADING | flag::STALE | flag::FAST | flag::ALLOW_BUSY,
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
            flag::NOSCRIPT | flag::LOADING | flag::STALE | flag::FAST | flag::ALLOW_BUSY,
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
