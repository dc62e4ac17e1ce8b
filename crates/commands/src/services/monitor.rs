//! MONITOR: the list of monitoring clients lives in `Server::monitors`;
//! this service adds and removes them and sends each the line for every
//! command that runs (dispatch calls [`feed_monitors`]).

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use crate::kernel::client::{cflag, Client};
use crate::kernel::hub::WorkerMsg;
use crate::kernel::server::Server;

/// Puts a client in MONITOR mode.
pub fn start_monitor(srv: &Server, c: &mut Client) {
    c.monitor = true;
    c.shared.set_flag(cflag::MONITOR, true);
    srv.monitors.lock().push((c.id, c.shared.worker));
    srv.has_monitors.store(true, Relaxed);
}

/// Removes a client from the monitor list (RESET, disconnect).
pub fn stop_monitor(srv: &Server, c: &mut Client) {
    c.monitor = false;
    c.shared.set_flag(cflag::MONITOR, false);
    let mut m = srv.monitors.lock();
    m.retain(|(id, _)| *id != c.id);
    srv.has_monitors.store(!m.is_empty(), Relaxed);
}

/// Sends the MONITOR line for this command to every monitoring client.
pub fn feed_monitors(srv: &Server, client: &Client, args: &[&[u8]]) {
    let us = crate::base::clock::unix_time_us();
    let addr = if client.is_unix {
        format!("unix:{}", client.shared.laddr)
    } else {
        client.shared.addr.clone()
    };
    let mut line = format!(
        "+{}.{:06} [{} {}]",
        us / 1_000_000,
        us % 1_000_000,
        client.db,
        addr
    );
    for a in args {
        line.push(' ');
        line.push_str(&crate::base::text::repr(a));
    }
    line.push_str("\r\n");
    let bytes: Arc<[u8]> = Arc::from(line.into_bytes());
    let monitors = srv.monitors.lock().clone();
    for (id, worker) in monitors {
        srv.hub.send(
            worker,
            WorkerMsg::Deliver {
                client_id: id,
                bytes: bytes.clone(),
            },
        );
    }
}
