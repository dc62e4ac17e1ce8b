//! What follows keys expiring (lazily on access or in the active cycle,
//! both inside the keyspace): their `expired` keyspace events, and (through
//! `services::tracking`) the invalidation of client-side caches.
//!
//! The keyspace logs expired keys only while someone needs them: keyspace
//! events asking for "expired", or a client tracking keys.

use crate::kernel::notify;
use crate::kernel::server::Server;

fn events_flags(srv: &Server) -> Option<u32> {
    let flags = srv.settings().notify_keyspace_events;
    let want = flags & notify::EXPIRED != 0 && flags & (notify::KEYSPACE | notify::KEYEVENT) != 0;
    want.then_some(flags)
}

/// Takes the keys logged by expiry since the last call and publishes their
/// "expired" events (when enabled).
pub fn drain(srv: &Server) -> Vec<(usize, Vec<u8>)> {
    let keys = srv.keyspace.drain_expired();
    if let Some(flags) = events_flags(srv) {
        let mut scratch = resp::ReplyBuf::new(resp::Protocol::Resp2);
        for (db, key) in &keys {
            let ev = notify::Event {
                class: notify::EXPIRED,
                name: "expired",
                key,
                db: *db,
            };
            srv.notify_keyspace_event(flags, ev, 0, &mut scratch);
        }
    }
    keys
}

/// Turns the expired-key log on or off as `notify-keyspace-events` and
/// client tracking need it. Called at startup and after CONFIG SET (so no
/// expiry between the change and the next cron tick goes unlogged), and
/// by the cron (tracking turns on and off there).
pub fn sync_expired_log(srv: &Server) -> bool {
    let want = events_flags(srv).is_some() || srv.tracking.any();
    srv.keyspace.set_track_expired(want);
    want
}

/// Cron step: turns the expired-key log on or off as needed and publishes
/// what it holds. Run after `services::tracking::expired`, which takes the
/// log first while clients track.
pub fn publish_expired(srv: &Server) {
    let want = sync_expired_log(srv);
    if want && srv.keyspace.expired_pending() {
        drain(srv);
    }
}
