//! One database of one partition ([`Db`]): its Dashtable, keyed by the
//! partition's rotated key hash, its TTL count and average, its active-expiry
//! position and its size statistics; and the per-partition counters and
//! summaries the keyspace reports ([`Stats`], [`TableStats`], [`DbInfo`]).

use dash::DashTable;

use super::sizes::Sizes;
use crate::object::{Entry, Key};
use crate::slot::SLOT_BITS;

pub type Hasher = fn(&Entry) -> u64;

/// The fill (percent of slots) a table's slot share assumes at least: the
/// fill Dashtable segments are built and grown at (90%).
pub const SHARE_FILL_PCT: usize = 90;
pub type Table = DashTable<Entry, Hasher>;

/// A partition's table hash: the key hash (slot in the top 14 bits) rotated
/// left by the partition bits. The slot bits that name the partition are the
/// same for every key of the partition; left at the top they would be the
/// directory's first bits, so its directory would have `2^pbits` entries
/// for every segment it needs (16x with 16 partitions: 17 MB instead of
/// 1 MB at 20M keys). Rotated to the bottom they are out of the way (the
/// home bucket and fingerprint come from bits 0..40, where the low `pbits`
/// bits change nothing that matters), and the top bits are the slot's bits
/// within the partition, so one slot's keys still share a prefix.
fn rotated<const R: u32>(e: &Entry) -> u64 {
    e.hash().rotate_left(R)
}

/// `rotated::<R>` for every possible partition bit count (0..=14).
const HASHERS: [Hasher; SLOT_BITS as usize + 1] = [
    rotated::<0>,
    rotated::<1>,
    rotated::<2>,
    rotated::<3>,
    rotated::<4>,
    rotated::<5>,
    rotated::<6>,
    rotated::<7>,
    rotated::<8>,
    rotated::<9>,
    rotated::<10>,
    rotated::<11>,
    rotated::<12>,
    rotated::<13>,
    rotated::<14>,
];

/// One database inside one partition.
pub struct Db {
    /// Keyed by [`Db::table_hash`] of the key hash, never the key hash itself.
    pub table: Table,
    /// Partition bits: the table hash is the key hash rotated left by this.
    pub(super) rot: u32,
    pub(super) expires: usize,
    /// Running TTL estimate in ms (Redis's avg_ttl rule).
    pub(super) avg_ttl: f64,
    /// Active-expiry sweep position.
    pub(super) expire_cursor: u64,
    /// Size statistics of the entries (see the module docs).
    pub(super) sizes: Sizes,
    /// Set while the table is part of a running snapshot (see `snapshot`).
    pub(crate) snap: Option<DbSnap>,
}

/// The state of a table that is part of the running snapshot (see
/// `keyspace::snapshot`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct DbSnap {
    /// The table's database index at the cut.
    pub(crate) db: u32,
    /// The walk's position (`DashTable::snapshot_walk`).
    pub(crate) cursor: u64,
    /// The walk visited the whole table: every bucket is at the version.
    pub(crate) done: bool,
}

impl Db {
    pub(super) fn new(pbits: u32) -> Db {
        Db {
            table: DashTable::with_hasher(HASHERS[pbits as usize]),
            rot: pbits,
            expires: 0,
            avg_ttl: 0.0,
            expire_cursor: 0,
            sizes: Sizes::with_slot_bits(SLOT_BITS - pbits),
            snap: None,
        }
    }
    /// The table's hash for a key hash (see [`rotated`]).
    #[inline]
    pub fn table_hash(&self, key_hash: u64) -> u64 {
        key_hash.rotate_left(self.rot)
    }
    /// The key's entry, expired or not (no statistics, no touch).
    #[inline]
    pub fn find(&self, key: &Key) -> Option<&Entry> {
        self.table
            .get(self.table_hash(key.hash), |e| e.matches(key))
    }
    pub fn len(&self) -> usize {
        self.table.len()
    }
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }
    /// Keys with a TTL.
    pub fn expires(&self) -> usize {
        self.expires
    }
    /// Size statistics; exact once the partition has settled (get the `Db`
    /// from [`Partition::settled_db`]).
    pub fn sizes(&self) -> &Sizes {
        &self.sizes
    }
    /// Frees the database a table segment at a time, calling `between`
    /// after each (the lazyfree thread paces itself there).
    pub fn drop_with(self: Box<Self>, between: impl FnMut()) {
        self.table.drop_with(between);
    }
    /// The slot share of MEMORY USAGE: the table's bytes per entry, counting
    /// the table as at least [`SHARE_FILL_PCT`] full. A table that holds
    /// fewer keys than that (a new or almost empty database: a single key
    /// sits in a 2 KiB segment header plus a row of 56 slots, ~4 KB)
    /// charges each key what its slot costs at the fill tables grow at, not
    /// the whole table; the rest is the database's own overhead, as Redis's
    /// MEMORY USAGE leaves a dict's bucket array out. At the fills tables
    /// run at this is table bytes / keys, as before.
    pub fn slot_share(&self) -> usize {
        let at_fill = self.table.slot_capacity() * SHARE_FILL_PCT / 100;
        let n = self.table.len().max(at_fill).max(1);
        self.table.allocated_bytes().div_ceil(n)
    }
}

/// Counters kept per partition (summed by [`Keyspace::stats`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    pub hits: u64,
    pub misses: u64,
    pub expired_keys: u64,
    /// Active-expiry cycles that stopped on their time budget.
    pub expire_time_cap_reached: u64,
    /// Time spent in active expiry, microseconds.
    pub expire_cycle_us: u64,
}

impl std::ops::AddAssign for Stats {
    fn add_assign(&mut self, o: Stats) {
        self.hits += o.hits;
        self.misses += o.misses;
        self.expired_keys += o.expired_keys;
        self.expire_time_cap_reached += o.expire_time_cap_reached;
        self.expire_cycle_us += o.expire_cycle_us;
    }
}

/// One database's tables (MEMORY STATS): `bytes` includes the directory;
/// `slots - keys` slots are empty.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TableStats {
    pub keys: usize,
    pub expires: usize,
    pub bytes: usize,
    pub directory_bytes: usize,
    pub slots: usize,
    /// Segments over all partitions' tables.
    pub segments: usize,
    /// The deepest global depth (directory bits) of any partition's table.
    pub max_global_depth: u32,
}

/// Per-database summary (INFO keyspace).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DbInfo {
    pub keys: usize,
    pub expires: usize,
    pub avg_ttl: u64,
}
