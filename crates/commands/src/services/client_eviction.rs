//! `maxmemory-clients`: when the memory all clients use (each one's
//! `tot-mem`: query and reply buffers, pending output, arguments, queued
//! MULTI commands, see the connection's accounting) passes the limit, the
//! clients using the most are disconnected until the sum is under it again,
//! as Redis 7.0 does. Exempt: clients with `CLIENT NO-EVICT on`, masters and
//! replicas. Each eviction counts in `evicted_clients`.
//!
//! Redis checks before each command and before it sleeps, picking from its
//! memory buckets (clients of similar size); petrel checks at the end of
//! every worker pass, after the pass's commands ran, and picks the largest
//! client exactly. A client is closed by its own worker (marked `killed`
//! and poked through the hub), so its pending output is dropped.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use crate::kernel::client::{cflag, ClientShared};
use crate::kernel::config::Settings;
use crate::kernel::hub::WorkerMsg;
use crate::kernel::server::Server;

fn evictable(c: &ClientShared) -> bool {
    !c.killed.load(Relaxed)
        && !c.has_flag(cflag::NO_EVICT)
        && !c.has_flag(cflag::MASTER)
        && !c.has_flag(cflag::REPLICA)
}

/// Evicts clients while their memory passes `maxmemory-clients`.
pub fn evict_clients(srv: &Server, settings: &Settings) {
    let limit = settings.maxmemory_clients.limit(settings.maxmemory);
    if limit == 0 {
        return;
    }
    let clients = srv.clients.all();
    let mut total: u64 = clients
        .iter()
        .filter(|c| !c.killed.load(Relaxed))
        .map(|c| c.tot_mem.load(Relaxed))
        .sum();
    if total <= limit {
        return;
    }
    let mut cands: Vec<(u64, Arc<ClientShared>)> = clients
        .into_iter()
        .filter(|c| evictable(c))
        .map(|c| (c.tot_mem.load(Relaxed), c))
        .collect();
    cands.sort_by_key(|c| std::cmp::Reverse(c.0));
    for (mem, c) in cands {
        if total <= limit {
            break;
        }
        if c.killed.swap(true, Relaxed) {
            continue;
        }
        c.set_flag(cflag::CLOSE_ASAP, true);
        srv.stats.evicted_clients.fetch_add(1, Relaxed);
        srv.hub.send(c.worker, WorkerMsg::Poke { client_id: c.id });
        total = total.saturating_sub(mem);
    }
}
