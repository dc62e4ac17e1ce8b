//! The write journal's state: one ordered stream of every change to the
//! keyspace, in the form Redis 7.0 propagates it (RESP arrays, `SELECT`
//! inserted where the database changes). `services::journal` fills it;
//! two consumers read it: the append-only file (`services::aof`) takes
//! `out.buf`, and replication (`services::replication`) gets every
//! appended piece through [`Journal::set_feed`], in the same order, under
//! the same `out` lock. Each consumer turns its own bit of `enabled` on.
//!
//! # Order
//! While the journal is enabled, every command that may touch the
//! keyspace holds [`Journal::order`] for its whole run: exclusively when it
//! may write (its effective flags have `write` or `may-replicate`, EXEC,
//! scripts, serving blocked clients), shared otherwise (a read may delete
//! an expired key, whose `DEL` is journaled). Records are appended before
//! the lock is released, so the stream's order is the order in which
//! writers held the lock: a valid serialization of what clients saw. The
//! active-expiry cycle and eviction hold it shared while they delete.
//! Lock order: the order lock is taken before any partition lock, and
//! never while waiting for a script gate (see `services::journal`).
//!
//! With the journal disabled the only cost on the command path is one
//! relaxed atomic load ([`Journal::enabled`]).
//!
//! Invariants:
//! * `appended` equals the total bytes ever appended to `out.buf` (the
//!   stream offset); it only grows.
//! * `out.db` is the database the last record of the stream selected, or
//!   `None` when the next record must select its database first (start of
//!   a stream or of a new AOF file).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};

use parking_lot::{Mutex, RwLock};

/// How a command's effect is propagated, chosen by the command through
/// `Ctx::propagate_as` / `Ctx::propagate_none` / `Ctx::propagate_always`.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub enum Propagate {
    /// The command as the client sent it, when it changed something (it
    /// reported a change through `Ctx::modified` or changes whole
    /// databases).
    #[default]
    Verbatim,
    /// Nothing, whatever it changed.
    Nothing,
    /// These commands instead (deterministic rewrites: `SET .. PXAT`,
    /// `PEXPIREAT`, `SREM` for `SPOP`...), unconditionally.
    As(Vec<Vec<Vec<u8>>>),
    /// The command as sent, even if it reported no key change
    /// (`FUNCTION LOAD`).
    Always,
}

/// The stream's tail not yet taken by its consumer.
#[derive(Debug, Default)]
pub struct Out {
    pub buf: Vec<u8>,
    /// Database selected by the stream's last record (`None`: select first).
    pub db: Option<usize>,
    /// Unix second of the last `#TS:` annotation (`aof-timestamp-enabled`).
    pub ts: u64,
}

/// The journal (see the module doc).
/// The replication consumer: called with every appended piece, under the
/// `out` lock (so in stream order).
pub type Feed = Arc<dyn Fn(&[u8]) + Send + Sync>;

/// Consumer bits of `Journal::enabled`.
const AOF: u8 = 1;
const REPLICATION: u8 = 2;

#[derive(Default)]
pub struct Journal {
    /// Consumer bits ([`AOF`], [`REPLICATION`]).
    enabled: AtomicU8,
    feed: OnceLock<Feed>,
    /// The order lock (module doc).
    pub order: RwLock<()>,
    pub out: Mutex<Out>,
    /// Bytes ever appended (the stream offset).
    appended: AtomicU64,
    /// `aof-timestamp-enabled`: a `#TS:<unix seconds>` line before the
    /// first record of each second, as Redis 7.0 writes in its AOF.
    pub timestamps: AtomicBool,
}

impl Journal {
    /// Is anything consuming the stream? One relaxed load.
    #[inline]
    pub fn enabled(&self) -> bool {
        self.enabled.load(Relaxed) != 0
    }

    /// Starts or stops recording for the AOF. The caller holds `order`
    /// exclusively so no command is half-way through.
    pub fn set_enabled(&self, on: bool) {
        self.set_bit(AOF, on);
    }

    /// Starts or stops recording for replication (same rule as
    /// [`Journal::set_enabled`]; see `services::replication` for how a
    /// full sync makes sure no command missed the change).
    pub fn set_replicating(&self, on: bool) {
        self.set_bit(REPLICATION, on);
    }

    pub fn replicating(&self) -> bool {
        self.enabled.load(Relaxed) & REPLICATION != 0
    }

    fn set_bit(&self, bit: u8, on: bool) {
        if on {
            self.enabled.fetch_or(bit, Relaxed);
        } else {
            self.enabled.fetch_and(!bit, Relaxed);
        }
    }

    /// Installs the replication consumer (once; later calls are ignored).
    pub fn set_feed(&self, f: Feed) {
        let _ = self.feed.set(f);
    }

    /// The stream offset: bytes ever appended.
    pub fn appended(&self) -> u64 {
        self.appended.load(Relaxed)
    }

    /// Appends `bytes` (the caller holds `out`) and advances the offset.
    pub fn push(&self, out: &mut Out, bytes: &[u8]) {
        let on = self.enabled.load(Relaxed);
        if on & AOF != 0 {
            out.buf.extend_from_slice(bytes);
            self.appended.fetch_add(bytes.len() as u64, Relaxed);
        }
        if on & REPLICATION != 0 {
            if let Some(f) = self.feed.get() {
                f(bytes);
            }
        }
    }
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Journal(enabled={})", self.enabled.load(Relaxed))
    }
}

/// Appends one command as a RESP array of bulk strings to `buf`.
pub fn encode_command<A: AsRef<[u8]>>(buf: &mut Vec<u8>, argv: &[A]) {
    use std::io::Write as _;
    let _ = write!(buf, "*{}\r\n", argv.len());
    for a in argv {
        let a = a.as_ref();
        let _ = write!(buf, "${}\r\n", a.len());
        buf.extend_from_slice(a);
        buf.extend_from_slice(b"\r\n");
    }
}
