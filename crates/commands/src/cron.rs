//! Periodic server work, called `hz` times a second from the cron thread:
//! ending expired CLIENT PAUSE, and (as the keyspace lands) active expiry in
//! short time-budgeted steps.

use crate::server::Server;

pub fn tick(srv: &Server) {
    let now = crate::util::unix_time_ms();
    let p = srv.pause_state();
    if p.until_ms != 0 && p.until_ms <= now {
        srv.set_pause(crate::server::Pause::default());
    }
}
