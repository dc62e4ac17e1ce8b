//! What follows keys expiring (lazily on access or in the active cycle,
//! both inside the keyspace): their `expired` keyspace events, fired from
//! the cron.

use crate::kernel::notify;
use crate::kernel::server::Server;

/// Publishes "expired" keyspace events for keys the keyspace dropped by
/// expiry (lazily or in the active cycle) since the last call. Called from
/// the server cron; keeps the keyspace's expired-key log on only while
/// `notify-keyspace-events` asks for expired events.
pub fn publish_expired(srv: &Server) {
    let flags = srv.settings().notify_keyspace_events;
    let want = flags & notify::EXPIRED != 0 && flags & (notify::KEYSPACE | notify::KEYEVENT) != 0;
    srv.keyspace.set_track_expired(want);
    if !want {
        return;
    }
    let mut scratch = resp::ReplyBuf::new(resp::Protocol::Resp2);
    for (db, key) in srv.keyspace.drain_expired() {
        let ev = notify::Event {
            class: notify::EXPIRED,
            name: "expired",
            key: &key,
            db,
        };
        srv.notify_keyspace_event(flags, ev, 0, &mut scratch);
    }
}
