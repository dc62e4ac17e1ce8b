//! A worker's share of active defragmentation: its connections' buffers.
//!
//! Connections belong to their worker thread (only it touches a `Conn`),
//! so the defrag thread cannot move their blocks: at the end of each pass
//! it raises `DefragState::clients_pass` (`commands::services::defrag`),
//! and each worker, at the end of an event-loop pass (after it flushed
//! the replies, before it sleeps), walks its connections from where it
//! stopped, offering the blocks of at most [`CONNS_PER_LOOP`] of them per
//! loop pass ([`crate::conn::Conn::defrag`]), so a walk never delays the
//! next poll by more than a few connections' worth; a pass whose poll found
//! nothing to serve (the worker woke on its timeout) takes
//! [`CONNS_PER_IDLE_LOOP`], so an idle worker, which passes its loop only
//! every 100 ms, still walks thousands of connections in seconds. A
//! connection running a script is out of the slab and skipped. Moves count
//! in the pass's `active_defrag_hits` / `misses`.
//!
//! Invariant: `served` is the last `clients_pass` whose walk this worker
//! finished (or skipped, without a mover); a walk in progress serves the
//! newest request when it ends (requests raised meanwhile are merged).

use std::sync::atomic::Ordering::Relaxed;

use collections::defrag::Defrag;

use super::Worker;

/// Connections one event-loop pass offers (each: a dozen blocks or so,
/// a few microseconds with jemalloc's query).
pub const CONNS_PER_LOOP: usize = 8;
/// Connections a pass offers when its poll found no work.
pub const CONNS_PER_IDLE_LOOP: usize = 128;

#[derive(Default, Debug)]
pub struct ConnDefrag {
    served: u64,
    /// The next slot of the walk in progress.
    cursor: usize,
}

impl Worker {
    /// The defrag hook of the event loop (see the module docs): nothing
    /// unless a pass asked for the connections' buffers.
    pub(super) fn defrag_conns(&mut self) {
        let st = &self.srv.defrag;
        let wanted = st.clients_pass.load(Relaxed);
        let cd = &mut self.conn_defrag;
        if wanted == cd.served {
            return;
        }
        let Some(mut d) = Defrag::new() else {
            cd.served = wanted;
            return;
        };
        let budget = if self.served_last_poll {
            CONNS_PER_LOOP
        } else {
            CONNS_PER_IDLE_LOOP
        };
        let mut offered = 0;
        while offered < budget {
            let Some(slot) = self.conns.get_mut(cd.cursor) else {
                cd.cursor = 0;
                cd.served = wanted;
                break;
            };
            cd.cursor += 1;
            if let Some(conn) = slot.as_mut() {
                conn.defrag(&mut d);
                offered += 1;
            }
        }
        st.hits.fetch_add(d.hits, Relaxed);
        st.misses.fetch_add(d.misses, Relaxed);
    }
}
