//! Replication state shared by the command family, the replication service
//! and the server's connection hand-off: the replication ID pair, the
//! master's stream offset, the backlog and the attached replicas.
//!
//! Invariants:
//! * `MasterInner::offset` (INFO's `master_repl_offset`) is the number of
//!   bytes ever fed to the replication stream; it only grows. Every fed
//!   byte goes, in order and under the `inner` lock, to the backlog (when
//!   it exists) and to the output of every replica whose stream is
//!   active, so a replica's output is exactly the stream from the offset
//!   at which it was activated.
//! * On a replica the stream's bytes are the master's, as applied
//!   (`Master::record_applied`); the journal feeds nothing.
//! * The backlog holds the last `histlen` bytes of the stream:
//!   `first_byte_offset = offset - histlen + 1`, as Redis reports it.
//! * Lock order: the journal's `out` lock, then `Master::inner`, then a
//!   replica's `out`. The feed is called under the journal's `out` lock,
//!   so the stream's order is the journal's.
//! * A replica's output is `LinkOut::buf` in memory up to
//!   [`spool::SPOOL_THRESHOLD`], the older rest in its spool file
//!   ([`spool`]); the feed does no I/O, and the output limits count both.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering::Relaxed};
use std::sync::Arc;

use parking_lot::{Condvar, Mutex};

use crate::kernel::client::ClientShared;

pub mod spool;

/// The current and previous replication IDs.
#[derive(Debug, Clone)]
pub struct ReplIds {
    /// 40 hex characters, random at startup.
    pub replid: String,
    /// The ID this server followed before, or 40 zeros.
    pub replid2: String,
    /// Offset up to which `replid2` is valid, -1 when none.
    pub second_offset: i64,
}

/// Replication state (see the module doc).
#[derive(Debug)]
pub struct Replication {
    ids: Mutex<ReplIds>,
    pub master: Arc<Master>,
    /// The replica side (REPLICAOF).
    pub replica: ReplicaSide,
    /// FAILOVER (`services::replication::failover`).
    pub failover: Failover,
    /// A SHUTDOWN waiting for lagging replicas
    /// (`services::replication::shutdown_wait`).
    pub shutdown: ShutdownWait,
}

/// A SHUTDOWN that waits for its replicas to acknowledge the whole stream
/// (Redis's `shutdown_mstime`, `shutdown-timeout`).
#[derive(Debug, Default)]
pub struct ShutdownWait {
    pub inner: Mutex<ShutdownWaitInner>,
    /// A wait is running: client writes are paused and expiry frozen (one
    /// relaxed load per command).
    pub active: AtomicBool,
}

/// What the waiting SHUTDOWN asked for.
#[derive(Debug, Default)]
pub struct ShutdownWaitInner {
    /// Bumped by every wait: the watcher of an older one stops.
    pub generation: u64,
    /// Unix ms at which the shutdown goes ahead anyway.
    pub end_ms: u64,
    /// SAVE / NOSAVE (None: as the save points say).
    pub save: Option<bool>,
    pub force: bool,
    /// The SHUTDOWN callers, parked without a deadline; answered only when
    /// the shutdown does not happen (aborted, or its save failed).
    pub waiters: Vec<Arc<crate::kernel::blocking::Waiter>>,
}

impl Default for Replication {
    fn default() -> Self {
        Replication {
            ids: Mutex::new(ReplIds {
                replid: crate::base::text::random_hex(40),
                replid2: "0".repeat(40),
                second_offset: -1,
            }),
            master: Arc::default(),
            replica: ReplicaSide::default(),
            failover: Failover::default(),
            shutdown: ShutdownWait::default(),
        }
    }
}

impl Replication {
    pub fn ids(&self) -> ReplIds {
        self.ids.lock().clone()
    }

    /// A new random replication ID (Redis's `changeReplicationId`); the
    /// previous pair is left as it was.
    pub fn change_replid(&self) {
        self.ids.lock().replid = crate::base::text::random_hex(40);
    }

    /// Takes `replid` as the current ID (a replica adopts its master's).
    pub fn set_replid(&self, replid: &str) {
        self.ids.lock().replid = replid.to_string();
    }

    /// Redis's `shiftReplicationId`: the current ID becomes the previous
    /// one, valid up to `offset + 1`, and a new ID is drawn.
    pub fn shift_replid(&self, offset: u64) {
        let mut g = self.ids.lock();
        g.replid2 = std::mem::replace(&mut g.replid, crate::base::text::random_hex(40));
        g.second_offset = offset as i64 + 1;
    }

    /// A replica (its master deletes its keys) or a FAILOVER (the stream
    /// must stay still) holds expiry (`Server::refresh_expiry_freeze`).
    pub fn expiry_held(&self) -> bool {
        self.replica.is_replica.load(Relaxed)
            || self.failover.active.load(Relaxed)
            || self.shutdown.active.load(Relaxed)
    }

    /// A FAILOVER or a SHUTDOWN waiting for replicas holds the dataset
    /// still (the part of [`Self::expiry_held`] that is not being a
    /// replica).
    pub fn handover_active(&self) -> bool {
        self.failover.active.load(Relaxed) || self.shutdown.active.load(Relaxed)
    }

    /// Forgets the previous ID (Redis's `clearReplicationId2`).
    pub fn clear_replid2(&self) {
        let mut g = self.ids.lock();
        g.replid2 = "0".repeat(40);
        g.second_offset = -1;
    }
}

/// The replica side's state: whom this server follows and how far it got.
#[derive(Debug, Default)]
pub struct ReplicaSide {
    /// `REPLICAOF host port` (None: a master).
    pub master: Mutex<Option<(String, u16)>>,
    /// Bumped by every REPLICAOF: a link thread of another generation ends.
    pub generation: AtomicU64,
    /// A replica (one relaxed load for the read-only check).
    pub is_replica: AtomicBool,
    /// The link is up and streaming (`master_link_status:up`).
    pub link_up: AtomicBool,
    pub sync_in_progress: AtomicBool,
    /// Stream bytes processed (`slave_repl_offset`).
    pub offset: AtomicU64,
    /// Unix ms of the last bytes from the master.
    pub last_io_ms: AtomicU64,
    /// Unix ms the link went down.
    pub down_since_ms: AtomicU64,
    /// Held by the link thread while it applies one unit of the stream
    /// (a command, or MULTI..EXEC whole) and records its bytes; a full
    /// sync to a sub-replica takes it for its cut, so the snapshot and
    /// the offset it is sent with agree.
    pub apply_lock: Mutex<()>,
    /// The database the master's stream last selected (the master
    /// client's), as `repl-stream-db` for a sub-replica's full sync.
    pub stream_db: AtomicU32,
    /// Started with `replicaof` and no place in any stream to continue
    /// from (no RDB that recorded one): PSYNC asks `? -1`, as Redis does
    /// without a cached master, until a full sync or a promotion.
    pub no_history: AtomicBool,
    /// The RDB loaded at startup recorded a place in a master's stream,
    /// now this server's own (`services::replication::restore_save_info`).
    pub place_restored: AtomicBool,
}

/// A coordinated FAILOVER in progress (Redis's `failover_state`).
#[derive(Debug, Default)]
pub struct Failover {
    pub inner: Mutex<FailoverInner>,
    /// `inner.state != NONE`: client writes are paused (one relaxed load
    /// per command).
    pub active: AtomicBool,
}

/// What a FAILOVER was asked for and how far it got.
#[derive(Debug, Default, Clone)]
pub struct FailoverInner {
    /// [`failover::NONE`], [`failover::WAIT_FOR_SYNC`] or
    /// [`failover::IN_PROGRESS`].
    pub state: u8,
    /// `TO host port` (or, once one caught up, the replica chosen).
    pub target: Option<(String, u16)>,
    /// `TO` was given (the target was not chosen among the replicas).
    pub targeted: bool,
    /// Unix ms at which the wait for the replica ends (0: no TIMEOUT).
    pub end_ms: u64,
    /// `FORCE`: at the timeout, fail over anyway.
    pub force: bool,
    /// Bumped by every FAILOVER: the thread of an older one stops.
    pub generation: u64,
    /// What became of `PSYNC ... FAILOVER` ([`failover::PSYNC_ACCEPTED`]
    /// ...; 0 while unanswered): noted by the replica link, acted on by
    /// the failover's watcher.
    pub psync: u8,
}

impl Failover {
    /// Is this server's replica link the failover's (its PSYNC carries
    /// FAILOVER)?
    pub fn psync_pending(&self) -> bool {
        self.inner.lock().state == failover::IN_PROGRESS
    }

    /// Ends the failover's state (Redis's `clearFailoverState`); the
    /// caller thaws expiry (`Server::refresh_expiry_freeze`). False when
    /// none was running.
    pub fn clear(&self) -> bool {
        let mut g = self.inner.lock();
        if g.state == failover::NONE {
            return false;
        }
        let generation = g.generation;
        *g = Default::default();
        g.generation = generation;
        self.active.store(false, Relaxed);
        true
    }

    /// The replica link notes the failover's PSYNC outcome (the first one
    /// counts; nothing when no failover is in progress).
    pub fn note_psync(&self, outcome: u8) {
        let mut g = self.inner.lock();
        if g.state == failover::IN_PROGRESS && g.psync == 0 {
            g.psync = outcome;
        }
    }
}

/// The states of a FAILOVER, as INFO's `master_failover_state` names them.
pub mod failover {
    pub const NONE: u8 = 0;
    pub const WAIT_FOR_SYNC: u8 = 1;
    pub const IN_PROGRESS: u8 = 2;

    /// Outcomes of `PSYNC ... FAILOVER` (`FailoverInner::psync`).
    pub const PSYNC_ACCEPTED: u8 = 1;
    pub const PSYNC_REJECTED: u8 = 2;
    pub const PSYNC_UNREACHABLE: u8 = 3;

    pub fn name(s: u8) -> &'static str {
        match s {
            WAIT_FOR_SYNC => "waiting-for-sync",
            IN_PROGRESS => "failover-in-progress",
            _ => "no-failover",
        }
    }
}

/// A replica's state, as INFO names it.
pub mod state {
    pub const WAIT_BGSAVE: u8 = 0;
    pub const SEND_BULK: u8 = 1;
    pub const ONLINE: u8 = 2;

    pub fn name(s: u8) -> &'static str {
        match s {
            WAIT_BGSAVE => "wait_bgsave",
            SEND_BULK => "send_bulk",
            _ => "online",
        }
    }
}

/// Output waiting for a replica's socket.
#[derive(Debug, Default)]
pub struct LinkOut {
    pub buf: Vec<u8>,
    /// The stream is being appended (from the offset the link started at).
    pub active: bool,
    /// The link must close (killed, over its output limit, socket error).
    pub closed: bool,
    /// Since when (unix ms) the buffer is over the soft limit.
    pub soft_since: Option<u64>,
    /// The pending bytes older than `buf`, on disk ([`spool`]).
    pub spool: spool::Spool,
}

/// One replica attached to this master.
#[derive(Debug)]
pub struct ReplicaLink {
    pub shared: Arc<ClientShared>,
    pub ip: String,
    pub port: u16,
    pub state: AtomicU8,
    /// Last offset the replica acknowledged (`REPLCONF ACK`).
    pub ack_offset: AtomicU64,
    /// Unix ms of the last message from the replica.
    pub ack_ms: AtomicU64,
    /// `REPLCONF ACK`s received (a diskless full sync waits for the first
    /// one after the payload before it sends the stream).
    pub acks: AtomicU64,
    pub out: Mutex<LinkOut>,
    /// Signalled when `out` gets bytes or closes.
    pub ready: Condvar,
    /// Wakes the link's spooler: `out.buf` reached the spool threshold,
    /// or the link closed.
    pub spool_wake: Condvar,
    /// Closed for exceeding the output buffer limit (logged once).
    pub over_limit: AtomicBool,
}

impl ReplicaLink {
    pub fn new(shared: Arc<ClientShared>, ip: String, port: u16) -> ReplicaLink {
        ReplicaLink {
            shared,
            ip,
            port,
            state: AtomicU8::new(state::WAIT_BGSAVE),
            ack_offset: AtomicU64::new(0),
            ack_ms: AtomicU64::new(crate::base::clock::unix_time_ms()),
            acks: AtomicU64::new(0),
            out: Mutex::new(LinkOut::default()),
            ready: Condvar::new(),
            spool_wake: Condvar::new(),
            over_limit: AtomicBool::new(false),
        }
    }

    /// Marks the link closed and wakes its sender.
    pub fn close(&self) {
        self.out.lock().closed = true;
        self.ready.notify_all();
        self.spool_wake.notify_all();
    }

    pub fn is_closed(&self) -> bool {
        self.out.lock().closed
    }
}

/// The output-buffer limit of the replica class, in bytes/seconds.
#[derive(Debug, Default, Clone, Copy)]
pub struct Limit {
    pub hard: u64,
    pub soft: u64,
    pub soft_seconds: u64,
}

/// The master side (see the module doc).
#[derive(Debug, Default)]
pub struct Master {
    pub inner: Mutex<MasterInner>,
    pub stats: ReplStats,
    /// Clients blocked in WAIT.
    pub waits: Mutex<Vec<WaitEntry>>,
    /// A copy of `inner.offset` readable without the lock.
    offset: AtomicU64,
}

/// A client blocked in WAIT until `num` replicas acknowledged `offset`.
#[derive(Debug)]
pub struct WaitEntry {
    pub waiter: Arc<crate::kernel::blocking::Waiter>,
    pub offset: u64,
    pub num: usize,
}

/// INFO stats counters of the master side.
#[derive(Debug, Default)]
pub struct ReplStats {
    pub sync_full: AtomicU64,
    pub sync_partial_ok: AtomicU64,
    pub sync_partial_err: AtomicU64,
    pub net_repl_output_bytes: AtomicU64,
    pub net_repl_input_bytes: AtomicU64,
}

impl ReplStats {
    /// CONFIG RESETSTAT.
    pub fn reset(&self) {
        for c in [
            &self.sync_full,
            &self.sync_partial_ok,
            &self.sync_partial_err,
            &self.net_repl_output_bytes,
            &self.net_repl_input_bytes,
        ] {
            c.store(0, Relaxed);
        }
    }
}

#[derive(Debug, Default)]
pub struct MasterInner {
    pub offset: u64,
    pub backlog: Option<Backlog>,
    pub replicas: Vec<Arc<ReplicaLink>>,
    /// Unix ms since which no replica is attached (backlog TTL).
    pub alone_since_ms: u64,
    pub limit: Limit,
}

impl Master {
    /// `master_repl_offset`.
    pub fn offset(&self) -> u64 {
        self.offset.load(Relaxed)
    }

    /// Sets `master_repl_offset` (a replica follows its master's; a
    /// promoted replica continues from there). Empties the backlog, which
    /// would otherwise hold bytes of another offset range.
    pub fn set_offset(&self, offset: u64) {
        let mut g = self.inner.lock();
        if g.offset == offset {
            return;
        }
        g.offset = offset;
        self.offset.store(offset, Relaxed);
        if let Some(b) = g.backlog.as_mut() {
            let size = b.size() as u64;
            *b = Backlog::new(size, offset);
        }
    }

    /// A replica's own history, as Redis keeps it: after a full sync the
    /// backlog restarts empty at the master's offset `offset` (created with
    /// `size` bytes if there was none), so that once promoted this server
    /// can continue its former siblings by partial resync.
    pub fn follow_from(&self, offset: u64, size: u64) {
        let mut g = self.inner.lock();
        g.offset = offset;
        self.offset.store(offset, Relaxed);
        let size = g.backlog.as_ref().map_or(size, |b| b.size() as u64);
        g.backlog = Some(Backlog::new(size, offset));
    }

    /// A replica applied `bytes` of its master's stream: they extend this
    /// server's offset and backlog exactly, and go on verbatim to this
    /// server's own replicas (chained replication: the stream a
    /// sub-replica gets is byte for byte its master's master's, so
    /// offsets and the replication ID agree down the chain).
    pub fn record_applied(&self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let mut g = self.inner.lock();
        self.append_locked(&mut g, bytes);
    }

    /// Replicas attached and streaming that acknowledged `offset`.
    pub fn acked(&self, offset: u64) -> usize {
        self.inner
            .lock()
            .replicas
            .iter()
            .filter(|r| {
                r.state.load(Relaxed) == state::ONLINE
                    && !r.is_closed()
                    && r.ack_offset.load(Relaxed) >= offset
            })
            .count()
    }

    /// Appends `bytes` to the stream: backlog and active replicas (the
    /// caller holds the journal's `out` lock, see the module doc). A
    /// `#TS:` annotation at the front (an AOF-only line) is left out.
    pub fn feed(&self, mut bytes: &[u8]) {
        if bytes.starts_with(b"#TS:") {
            match bytes.windows(2).position(|w| w == b"\r\n") {
                Some(i) => bytes = &bytes[i + 2..],
                None => return,
            }
        }
        if bytes.is_empty() {
            return;
        }
        let mut g = self.inner.lock();
        self.append_locked(&mut g, bytes);
    }

    /// Adds `bytes` to the stream under the `inner` lock: the offset, the
    /// backlog and the output of every active replica, closing the links
    /// over the replica output limit.
    fn append_locked(&self, g: &mut MasterInner, bytes: &[u8]) {
        let now = crate::base::clock::unix_time_ms();
        g.offset += bytes.len() as u64;
        self.offset.store(g.offset, Relaxed);
        if let Some(b) = g.backlog.as_mut() {
            b.append(bytes);
        }
        let limit = g.limit;
        for r in &g.replicas {
            let mut o = r.out.lock();
            if !o.active || o.closed {
                continue;
            }
            o.buf.extend_from_slice(bytes);
            if o.wants_spool() {
                r.spool_wake.notify_one();
            }
            // Spooled bytes count: the limits see what Redis would hold.
            let len = o.pending();
            let over_hard = limit.hard > 0 && len > limit.hard;
            let over_soft = limit.soft > 0 && len > limit.soft;
            if over_soft {
                let since = *o.soft_since.get_or_insert(now);
                if now.saturating_sub(since) > limit.soft_seconds * 1000 {
                    o.closed = true;
                }
            } else {
                o.soft_since = None;
            }
            if over_hard {
                o.closed = true;
            }
            let closed = o.closed;
            if closed {
                o.buf = Vec::new();
                r.over_limit.store(true, Relaxed);
            }
            drop(o);
            r.ready.notify_all();
            if closed {
                r.spool_wake.notify_all();
            }
        }
    }
}

/// The replication backlog: a ring of the stream's last `size` bytes.
#[derive(Debug)]
pub struct Backlog {
    buf: Vec<u8>,
    /// Where the next byte goes.
    head: usize,
    /// Bytes held (`repl_backlog_histlen`), at most `buf.len()`.
    histlen: usize,
    /// Stream offset of the last byte held (the master offset).
    end: u64,
}

/// Redis's `CONFIG_REPL_BACKLOG_MIN_SIZE`.
pub const BACKLOG_MIN_SIZE: u64 = 16 * 1024;

impl Backlog {
    /// An empty backlog of `size` bytes whose next byte is stream offset
    /// `offset + 1`.
    pub fn new(size: u64, offset: u64) -> Backlog {
        Backlog {
            buf: vec![0; size.max(BACKLOG_MIN_SIZE) as usize],
            head: 0,
            histlen: 0,
            end: offset,
        }
    }

    pub fn size(&self) -> usize {
        self.buf.len()
    }

    pub fn histlen(&self) -> usize {
        self.histlen
    }

    /// `repl_backlog_first_byte_offset`.
    pub fn first_byte_offset(&self) -> u64 {
        self.end + 1 - self.histlen as u64
    }

    pub fn append(&mut self, mut bytes: &[u8]) {
        let cap = self.buf.len();
        self.end += bytes.len() as u64;
        if bytes.len() >= cap {
            bytes = &bytes[bytes.len() - cap..];
        }
        let first = (cap - self.head).min(bytes.len());
        self.buf[self.head..self.head + first].copy_from_slice(&bytes[..first]);
        let rest = bytes.len() - first;
        self.buf[..rest].copy_from_slice(&bytes[first..]);
        self.head = (self.head + bytes.len()) % cap;
        self.histlen = (self.histlen + bytes.len()).min(cap);
    }

    /// The stream from offset `from` (the first byte a replica lacks) to
    /// the end, or None when the backlog does not reach back that far or
    /// `from` is beyond the end.
    pub fn since(&self, from: u64) -> Option<Vec<u8>> {
        if from < self.first_byte_offset() || from > self.end + 1 {
            return None;
        }
        let n = (self.end + 1 - from) as usize;
        let cap = self.buf.len();
        let start = (self.head + cap - n) % cap;
        let mut v = Vec::with_capacity(n);
        let first = (cap - start).min(n);
        v.extend_from_slice(&self.buf[start..start + first]);
        v.extend_from_slice(&self.buf[..n - first]);
        Some(v)
    }

    /// A new size, keeping the most recent bytes that still fit.
    pub fn resize(&mut self, size: u64) {
        let size = size.max(BACKLOG_MIN_SIZE) as usize;
        if size == self.buf.len() {
            return;
        }
        let keep = self.histlen.min(size);
        let data = self.since(self.end + 1 - keep as u64).unwrap_or_default();
        let end = self.end;
        *self = Backlog::new(size as u64, end - keep as u64);
        self.append(&data);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The backlog against a Vec of the whole stream.
        #[test]
        fn backlog_matches_model(
            size in 1usize..40_000,
            start in 0u64..1000,
            pieces in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..9000), 0..12),
            resize_to in proptest::option::of(1usize..40_000),
            probe in 0u64..200_000,
        ) {
            let mut b = Backlog::new(size as u64, start);
            let mut all: Vec<u8> = Vec::new();
            for p in &pieces {
                b.append(p);
                all.extend_from_slice(p);
            }
            let mut held = all.len().min(b.size());
            if let Some(r) = resize_to {
                b.resize(r as u64);
                held = held.min(b.size());
            }
            prop_assert_eq!(b.histlen(), held);
            let end = start + all.len() as u64;
            prop_assert_eq!(b.first_byte_offset(), end + 1 - held as u64);
            let from = start + 1 + probe % (all.len() as u64 + 2);
            let got = b.since(from);
            if from >= end + 1 - held as u64 && from <= end + 1 {
                let idx = (from - start - 1) as usize;
                prop_assert_eq!(got, Some(all[idx..].to_vec()));
            } else {
                prop_assert_eq!(got, None);
            }
        }
    }
}
