//! The write journal: every successful change to the keyspace, once, in one
//! total order across worker threads, in the deterministic form Redis 7.0
//! propagates (to its AOF and replicas). The state and the order lock are
//! `kernel::journal`; the append-only file (`services::aof`) consumes the
//! stream.
//!
//! # How a change gets into the journal (for command authors)
//! Nothing to do for most write commands: dispatch (`runtime::dispatch::
//! call`) journals the command as the client sent it when it reported a
//! change (`Ctx::notify` / `Ctx::modified`, which every write already
//! calls), or unconditionally for `WHOLE_KEYSPACE` commands (FLUSHALL,
//! FLUSHDB, SWAPDB). A read-only command or a no-op write journals nothing.
//! A command whose effect is not deterministic from its arguments rewrites
//! itself through its `Ctx`, only when it changed something:
//! * `ctx.propagate_as(|| vec![argv, ...])` — these commands instead
//!   (relative TTL -> `SET k v PXAT ms` / `PEXPIREAT`, `INCRBYFLOAT` -> `SET
//!   k v KEEPTTL`, `SPOP` -> `SREM`, `GETDEL` -> `DEL`, a blocking pop -> its
//!   non-blocking form...). The closure runs only while the journal is
//!   enabled, so the rewrite costs nothing otherwise. Several commands are
//!   wrapped in MULTI/EXEC with the rest of the unit.
//! * `ctx.propagate_none()` — nothing (a write that must not reach the AOF).
//! * `ctx.propagate_always()` — as sent even without a key change
//!   (`FUNCTION LOAD`).
//! * A blocking operation (`kernel::blocking::BlockedOp`) pushes its
//!   non-blocking form into `Served::propagate` when it serves; the
//!   blocking service journals it, for the command's own first try and for
//!   waiters served later.
//! * Deletions the server makes by itself call [`deleted`] (eviction) or are
//!   logged by the keyspace (expiry) and journaled as `DEL` (or `UNLINK`
//!   with `lazyfree-lazy-eviction` / `lazyfree-lazy-expire`).
//!
//! # Units
//! A command run by a client is one unit; EXEC and a script are one unit
//! with everything they call, and so is serving blocked clients after a
//! write. A unit of more than one record is wrapped in MULTI/EXEC (as
//! Redis 7.0 does: a MULTI/EXEC or script with a single write is journaled
//! bare). Keys a command finds expired are journaled as `DEL` in its unit,
//! ahead of its own records; keys the active cycle expires, and evicted
//! keys, are journaled bare.
//!
//! # Scopes and the order lock
//! [`scope`] opens a unit on this thread: the outermost scope takes the
//! order lock (shared or exclusive, see `kernel::journal`), nested scopes
//! (commands inside EXEC or a script) only add records; the outermost
//! scope's drop journals the unit and releases the lock. A scope is
//! opened in `call` after the script gate protocol, so a script that waits
//! for other workers' gates never waits for a command holding the lock:
//! every such command finishes without waiting for the script.

use std::cell::RefCell;

use parking_lot::{RwLockReadGuard, RwLockWriteGuard};

use crate::kernel::journal::{encode_command, Journal, Out};
use crate::kernel::server::Server;

/// Records of the unit open on this thread.
#[derive(Default)]
struct Unit {
    /// The outermost scope discards the unit (DEBUG LOADAOF replaying).
    discard: bool,
    /// Open scopes on this thread (0: none, the order lock is not held).
    depth: u32,
    /// (database, argv) in order.
    records: Vec<(usize, Vec<Vec<u8>>)>,
}

thread_local! {
    static UNIT: RefCell<Unit> = RefCell::new(Unit::default());
}

enum Held<'a> {
    Shared(#[allow(dead_code)] RwLockReadGuard<'a, ()>),
    Exclusive(#[allow(dead_code)] RwLockWriteGuard<'a, ()>),
    /// A nested scope: the outer one holds the lock.
    Nested,
}

/// An open unit (see the module doc); dropping the outermost one journals
/// the unit and releases the order lock.
pub struct Scope<'a> {
    srv: &'a Server,
    held: Held<'a>,
}

/// How a scope holds the order lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// May only delete expired or evicted keys.
    Shared,
    /// May write.
    Exclusive,
}

/// Is a unit open on this thread?
pub fn in_scope() -> bool {
    UNIT.with(|u| u.borrow().depth > 0)
}

/// Opens a unit when the journal is enabled (None otherwise: nothing to do).
pub fn scope(srv: &Server, mode: Mode) -> Option<Scope<'_>> {
    if !srv.journal.enabled() {
        return None;
    }
    let nested = UNIT.with(|u| {
        let mut u = u.borrow_mut();
        u.depth += 1;
        u.depth > 1
    });
    let held = if nested {
        Held::Nested
    } else {
        match mode {
            Mode::Shared => Held::Shared(srv.journal.order.read()),
            Mode::Exclusive => Held::Exclusive(srv.journal.order.write()),
        }
    };
    Some(Scope { srv, held })
}

impl Drop for Scope<'_> {
    fn drop(&mut self) {
        let (records, discard) = UNIT.with(|u| {
            let mut u = u.borrow_mut();
            u.depth -= 1;
            if u.depth == 0 {
                (
                    std::mem::take(&mut u.records),
                    std::mem::take(&mut u.discard),
                )
            } else {
                (Vec::new(), false)
            }
        });
        if matches!(self.held, Held::Nested) {
            return;
        }
        if discard {
            srv_drain_discard(self.srv);
            return;
        }
        flush_expired(self.srv);
        emit_unit(self.srv, records);
        // The guard in `held` is released after this.
    }
}

/// Opens an exclusive unit whose records are dropped, for replaying the
/// AOF into the running server (DEBUG LOADAOF): nothing it does is new.
pub fn suppress(srv: &Server) -> Option<Scope<'_>> {
    let s = scope(srv, Mode::Exclusive)?;
    UNIT.with(|u| {
        let mut u = u.borrow_mut();
        if u.depth == 1 {
            u.discard = true;
        }
    });
    Some(s)
}

/// Drops the expired-key log along with a discarded unit.
fn srv_drain_discard(srv: &Server) {
    if srv.keyspace.journal_expired_pending() {
        srv.keyspace.drain_journal_expired();
    }
}

/// Adds a record to the open unit (no-op when none is open: the journal
/// was disabled meanwhile or the caller runs outside any scope).
pub fn record(db: usize, argv: Vec<Vec<u8>>) {
    UNIT.with(|u| {
        let mut u = u.borrow_mut();
        if u.depth > 0 {
            u.records.push((db, argv));
        }
    });
}

/// Ends the open unit here and starts another in the same scope: what
/// was recorded so far is journaled now (in MULTI/EXEC when more than one
/// record). Serving blocked clients calls it after each waiter, as Redis
/// 7.0 propagates each served client on its own. A no-op inside a nested
/// scope (EXEC, a script: their unit stays whole) or outside any.
pub fn unit_boundary(srv: &Server) {
    let records = UNIT.with(|u| {
        let mut u = u.borrow_mut();
        if u.depth == 1 && !u.discard {
            std::mem::take(&mut u.records)
        } else {
            Vec::new()
        }
    });
    emit_unit(srv, records);
}

/// Records a command given as borrowed arguments.
pub fn record_args(db: usize, args: &[&[u8]]) {
    record(db, args.iter().map(|a| a.to_vec()).collect());
}

/// Journals the deletion of `key` by the server itself (eviction): `DEL`,
/// or `UNLINK` when freed lazily, immediately (not part of a unit), as
/// Redis 7.0 propagates deletions. The caller holds the order lock (a
/// scope of any mode).
pub fn deleted(srv: &Server, db: usize, key: &[u8], lazy: bool) {
    if !srv.journal.enabled() {
        return;
    }
    let name: &[u8] = if lazy { b"UNLINK" } else { b"DEL" };
    let mut out = srv.journal.out.lock();
    append(&srv.journal, &mut out, db, &[name, key]);
}

/// Adds the keys the keyspace removed by expiry since the last call to
/// the open unit, as `DEL` (`UNLINK` with `lazyfree-lazy-expire`): a
/// command's lazy expirations belong to its unit, ahead of its own
/// records, as Redis 7.0 propagates them.
pub fn expired_into_unit(srv: &Server) {
    if !srv.keyspace.journal_expired_pending() {
        return;
    }
    let lazy = srv.settings().lazyfree_lazy_expire;
    let name: &[u8] = if lazy { b"UNLINK" } else { b"DEL" };
    for (db, key) in srv.keyspace.drain_journal_expired() {
        record(db, vec![name.to_vec(), key]);
    }
}

/// Journals keys the keyspace removed by expiry since the last call (the
/// caller holds the order lock).
pub fn flush_expired(srv: &Server) {
    if !srv.keyspace.journal_expired_pending() {
        return;
    }
    let keys = srv.keyspace.drain_journal_expired();
    if keys.is_empty() {
        return;
    }
    let lazy = srv.settings().lazyfree_lazy_expire;
    let name: &[u8] = if lazy { b"UNLINK" } else { b"DEL" };
    let mut out = srv.journal.out.lock();
    for (db, key) in keys {
        append(&srv.journal, &mut out, db, &[name, &key]);
    }
}

fn emit_unit(srv: &Server, records: Vec<(usize, Vec<Vec<u8>>)>) {
    if records.is_empty() {
        return;
    }
    let j = &srv.journal;
    let mut out = j.out.lock();
    let wrap = records.len() > 1;
    if wrap {
        // MULTI selects the database of the unit's first record first, as
        // Redis emits SELECT before MULTI.
        let first = records[0].0;
        append(j, &mut out, first, &[b"MULTI".as_slice()]);
    }
    for (db, argv) in &records {
        append(j, &mut out, *db, argv);
    }
    if wrap {
        let db = out.db.unwrap_or(0);
        append(j, &mut out, db, &[b"EXEC".as_slice()]);
    }
}

/// Appends one record, selecting its database first when the stream's
/// current one differs.
fn append<A: AsRef<[u8]>>(j: &Journal, out: &mut Out, db: usize, argv: &[A]) {
    let mut bytes = Vec::with_capacity(64);
    if j.timestamps.load(std::sync::atomic::Ordering::Relaxed) {
        let now = crate::base::clock::unix_time_ms() / 1000;
        if now > out.ts {
            out.ts = now;
            bytes.extend_from_slice(format!("#TS:{now}\r\n").as_bytes());
        }
    }
    if out.db != Some(db) {
        let n = db.to_string();
        encode_command(&mut bytes, &[b"SELECT".as_slice(), n.as_bytes()]);
        out.db = Some(db);
    }
    encode_command(&mut bytes, argv);
    j.push(out, &bytes);
}

/// Runs `f` holding the order lock shared, then journals the keys expiry
/// removed meanwhile: for the server's own deletions (active expiry,
/// eviction) outside any command. Without the journal, just runs `f`.
pub fn shared_section<R>(srv: &Server, f: impl FnOnce() -> R) -> R {
    let _scope = scope(srv, Mode::Shared);
    f()
}

/// `PXAT`-style absolute milliseconds as a decimal argument.
pub fn ms_arg(ms: u64) -> Vec<u8> {
    ms.to_string().into_bytes()
}
