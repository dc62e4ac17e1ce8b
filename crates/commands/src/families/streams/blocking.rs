//! Blocked XREAD / XREADGROUP: what the blocking service runs when one of
//! the keys is written (see `kernel::blocking` for the waiter life cycle).
//!
//! Stream waiters differ from list waiters, following Redis 7.0:
//! * an XREAD waiter does not consume: one XADD serves every XREAD waiter
//!   whose ID is below the stream's last live entry ([`Readiness::NotYet`]
//!   for the others, which keep waiting without stopping the service from
//!   trying the next waiter); `$` was resolved to the last ID at block
//!   time. Redis compares with the last generated ID instead, but wakes
//!   stream readers only on XADD, key creation and deletion: testing for
//!   a live entry keeps XSETID (which wakes nothing in Redis) from serving
//!   an empty read here; an XADD undone by XDEL in the same transaction
//!   serves Redis's waiter an empty list and leaves petrel's waiting;
//! * an XREADGROUP `>` waiter reads after its group's last-delivered ID at
//!   serve time, so waiters of one group are served in registration order
//!   and each entry goes to one of them;
//! * XREAD keeps waiting when its key is deleted or changes type; an
//!   XREADGROUP waiter is then answered `-UNBLOCKED the stream key no
//!   longer exists`, and `-NOGROUP ...` when its group was destroyed
//!   (texts of redis-server 7.0.15);
//! * a served waiter gets only the key that woke it (`[[key, entries]]`,
//!   a one-pair map in RESP3), at most COUNT entries (1000 without COUNT).

use collections::stream::{Stream, StreamId};
use collections::Limits;
use resp::ReplyBuf;
use store::keyspace::MultiGuard;
use store::{Key, Kind};

use super::{journal, reply_entries, reply_entry};
use crate::kernel::blocking::{BlockedOp, Readiness, Served};
use crate::kernel::coll::WrongType;
use crate::kernel::notify;

/// Redis's `XREAD_BLOCKED_DEFAULT_COUNT`.
pub const BLOCKED_DEFAULT_COUNT: usize = 1000;

/// Reply of a blocked XREADGROUP whose key was deleted or replaced.
pub const UNBLOCKED_KEY_GONE: &str = "UNBLOCKED the stream key no longer exists";
/// Reply of a blocked XREADGROUP whose group was destroyed.
pub const NOGROUP_GONE: &str =
    "NOGROUP the consumer group this client was blocked on no longer exists";

/// The group side of a blocked XREADGROUP.
#[derive(Debug, Clone)]
pub struct GroupRead {
    pub group: Vec<u8>,
    pub consumer: Vec<u8>,
    pub noack: bool,
}

/// A blocked XREAD (each key with the ID its entries must follow) or
/// XREADGROUP `>` (the IDs are unused: the group's position counts).
#[derive(Debug, Clone)]
pub struct StreamOp {
    pub keys: Vec<(Vec<u8>, StreamId)>,
    pub group: Option<GroupRead>,
    /// Entries per reply (never 0).
    pub count: usize,
}

impl StreamOp {
    fn after(&self, key: &[u8]) -> StreamId {
        self.keys
            .iter()
            .find(|(k, _)| k == key)
            .map_or(StreamId::MAX, |(_, id)| *id)
    }
}

fn stream_of<'a>(
    g: &'a mut MultiGuard<'_>,
    db: usize,
    key: &Key<'_>,
    now: u64,
) -> Option<&'a mut Stream> {
    g.part(key).get(db, key, now).and_then(|e| e.stream_mut())
}

impl BlockedOp for StreamOp {
    fn awaits(&self) -> Kind {
        Kind::Stream
    }

    fn ready(
        &self,
        g: &mut MultiGuard<'_>,
        db: usize,
        key: &Key<'_>,
        now_ms: u64,
    ) -> Result<Readiness, WrongType> {
        let s = stream_of(g, db, key, now_ms);
        Ok(match (&self.group, s) {
            (None, None) => Readiness::NotYet,
            (None, Some(s)) => {
                if s.last_valid_id() > self.after(key.bytes) {
                    Readiness::Ready
                } else {
                    Readiness::NotYet
                }
            }
            (Some(_), None) => Readiness::Refused(UNBLOCKED_KEY_GONE),
            (Some(gr), Some(s)) => match s.group(&gr.group) {
                None => Readiness::Refused(NOGROUP_GONE),
                Some(grp) if s.last_valid_id() > grp.last_id() => Readiness::Ready,
                Some(_) => Readiness::NotYet,
            },
        })
    }

    fn serve(
        &self,
        g: &mut MultiGuard<'_>,
        db: usize,
        key: &[u8],
        now_ms: u64,
        _limits: &Limits,
        out: &mut ReplyBuf,
        effects: &mut Served,
    ) {
        let k = Key::new(key);
        let s =
            stream_of(g, db, &k, now_ms).expect("ready() found the stream under the same locks");
        if out.is_resp3() {
            out.map_len(1);
        } else {
            out.array_len(1);
            out.array_len(2);
        }
        out.bulk(key);
        match &self.group {
            None => {
                let start = self.after(key).next().unwrap_or(StreamId::MAX);
                reply_entries(out, s.range(start, StreamId::MAX, false).take(self.count));
            }
            Some(gr) => {
                let created = s
                    .group(&gr.group)
                    .is_some_and(|grp| grp.consumer(&gr.consumer).is_none());
                let d = out.deferred_len();
                let mut n = 0;
                let mut delivered = Vec::new();
                let served = s.read_group_new(
                    &gr.group,
                    &gr.consumer,
                    self.count,
                    gr.noack,
                    now_ms as i64,
                    |e| {
                        reply_entry(out, &e);
                        delivered.push(e.id);
                        n += 1;
                    },
                );
                out.set_array_len(d, n);
                let now_has = s
                    .group(&gr.group)
                    .is_some_and(|grp| grp.consumer(&gr.consumer).is_some());
                let created = created && now_has && served.is_some();
                if created {
                    effects.event(notify::STREAM, "xgroup-createconsumer", key);
                }
                if let Some(grp) = s.group(&gr.group) {
                    effects.propagate.extend(journal::read_new_forms(
                        key,
                        grp,
                        &gr.consumer,
                        &delivered,
                        gr.noack,
                        created,
                        now_ms as i64,
                    ));
                }
            }
        }
    }

    fn timeout_reply(&self, out: &mut ReplyBuf) {
        out.null_array();
    }

    fn empty_reply(&self, out: &mut ReplyBuf) {
        out.null_array();
    }
}
