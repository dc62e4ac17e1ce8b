//! What resetting or closing a connection undoes, in one place: Pub/Sub
//! subscriptions, MONITOR mode, a pending blocking wait, the transaction
//! and its WATCHes. Also the client-name rule CLIENT SETNAME and HELLO share.

use std::sync::atomic::Ordering::Relaxed;

use crate::base::errors;
use crate::kernel::client::Client;
use crate::kernel::server::Server;
use crate::services::monitor::stop_monitor;
use crate::services::transactions::discard_transaction;

/// Drops every subscription of a client.
pub fn unsubscribe_all(srv: &Server, c: &mut Client) {
    let subs = std::mem::take(&mut c.pubsub);
    srv.pubsub.unsubscribe_all(&subs, c.id);
    c.sync_pubsub_counts();
}

/// RESET: leaves Pub/Sub, the transaction, MONITOR mode and tracking.
pub fn reset(srv: &Server, c: &mut Client) {
    crate::services::tracking::disable(srv, c);
    unsubscribe_all(srv, c);
    discard_transaction(srv, c);
    if c.monitor {
        stop_monitor(srv, c);
    }
}

/// A connection closes: undoes everything it registered anywhere. Returns
/// true when the client was blocked (its worker forgets its deadline).
pub fn close(srv: &Server, c: &mut Client) -> bool {
    if c.monitor {
        stop_monitor(srv, c);
    }
    crate::services::tracking::disable(srv, c);
    unsubscribe_all(srv, c);
    let was_blocked = match c.blocked.take() {
        Some(w) => {
            // Served meanwhile or not, the waiter must leave the registry.
            w.finish();
            srv.blocking.unregister(&w);
            srv.stats.blocked_clients.fetch_sub(1, Relaxed);
            true
        }
        None => false,
    };
    discard_transaction(srv, c);
    was_blocked
}

/// CLIENT SETNAME / HELLO SETNAME validation.
pub fn validate_client_name(n: &[u8]) -> Result<(), &'static str> {
    if n.iter().any(|&b| !(b'!'..=b'~').contains(&b)) {
        return Err(errors::ERR_CLIENT_NAME_CHARS);
    }
    Ok(())
}
