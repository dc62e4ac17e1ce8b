//! Transaction bookkeeping shared by dispatch, the transaction commands and
//! the connection service: queueing under MULTI, leaving a transaction, and
//! forgetting WATCHes.

use std::sync::atomic::Ordering::Relaxed;

use crate::kernel::client::{cflag, Client};
use crate::kernel::server::Server;

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
    c.shared.multi_mem.store(0, Relaxed);
    c.shared.set_flag(cflag::MULTI, false);
    unwatch_all(srv, c);
}

/// Queues a command arriving while in MULTI (dispatch calls it after the
/// same checks as immediate execution).
pub fn queue_command(c: &mut Client, args: &[&[u8]]) {
    if let Some(q) = c.tx.queue.as_mut() {
        q.push(args.iter().map(|a| a.to_vec()).collect());
        c.shared.multi.store(q.len() as i64, Relaxed);
        let bytes: usize = args.iter().map(|a| a.len() + 8).sum();
        c.shared.multi_mem.fetch_add(bytes as u64, Relaxed);
    }
}
