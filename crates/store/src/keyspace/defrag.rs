//! Active defragmentation walks over the keyspace (see
//! `collections::defrag` for the move decision and the per-structure
//! moves).
//!
//! A pass visits every partition in order, and in each every database in
//! two stages: the entries (through the table's scan cursor, each entry
//! offering its key and value blocks; a big collection a bounded step at
//! a time, at most [`FIELDS_PER_STEP`] elements or 16 list nodes, the key
//! looked up again before each step, the rest finished before the scan
//! goes on),
//! then the table's own blocks
//! (segment headers and rows, one segment per step). [`Keyspace::defrag_slice`]
//! runs for about a given slice and stops where it is; the
//! [`DefragCursor`] says where to continue, so a pass is spread over many
//! slices.
//!
//! Invariants:
//! * A partition lock is held for at most [`HOLD`] in one go (plus one
//!   logical bucket, one step of a big collection or one segment: the
//!   clock is read after each), then
//!   handed to a waiting command and released; only one partition is
//!   locked at a time.
//! * The partition's pending lookup is settled first (a move would leave
//!   its entry pointer dangling); no other pointer into a table or a value
//!   survives a partition lock.
//! * Nothing a client can observe changes: bytes are copied as they are,
//!   no entry is added or removed, sizes and statistics stay the same.
//! * Between stretches (and slices) the table may change; the scan
//!   cursor's guarantee (every entry present for the whole pass is
//!   visited) carries over.

use std::ptr::NonNull;
use std::time::{Duration, Instant};

use collections::defrag::Defrag;

use super::{Keyspace, Partition};
use crate::object::defrag::Resume;
use crate::object::Key;

/// `active-defrag-max-scan-fields`' default (Redis's), used unless set
/// otherwise ([`DefragCursor::set_max_fields`]).
pub const MAX_FIELDS: usize = 1000;

/// Most elements of a hash, set or sorted set visited in one step, the
/// clock being read after each step: Redis's deferred walk over a big
/// key reads its clock at least every 64 fields too. A step's elements
/// are the smaller of this and `active-defrag-max-scan-fields`, so a
/// step moves at most this many member blocks: with 1,000-element steps
/// (the setting's default) one step took the partition and the core for
/// ~0.5 ms or more, and a GET probe beside `frag --big-collections` saw
/// 35-57 GETs a second over 0.5 ms during the pass against 5-12 with
/// 64 (BENCHMARKS.md, issue 23).
pub const FIELDS_PER_STEP: usize = 64;

/// Where a defrag pass continues (see the module docs). `Default` starts
/// a pass.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DefragCursor {
    part: usize,
    db: usize,
    /// 0: entries, 1: the table's own blocks.
    stage: u8,
    /// Stage 0's place.
    entries: EntriesCursor,
    /// Stage 1's place (the table's segment cursor).
    cursor: u64,
    /// `active-defrag-max-scan-fields`; 0 means [`MAX_FIELDS`].
    max_fields: usize,
}

impl DefragCursor {
    /// At the start of a pass?
    pub fn at_start(&self) -> bool {
        *self
            == DefragCursor {
                max_fields: self.max_fields,
                ..DefragCursor::default()
            }
    }

    /// Sets the elements of a big collection visited per step
    /// (`active-defrag-max-scan-fields`; at least 1).
    pub fn set_max_fields(&mut self, n: usize) {
        self.max_fields = n.max(1);
    }

    /// Elements of a big collection visited per step (see
    /// [`FIELDS_PER_STEP`]).
    fn step_fields(&self) -> usize {
        let setting = if self.max_fields == 0 {
            MAX_FIELDS
        } else {
            self.max_fields
        };
        setting.min(FIELDS_PER_STEP)
    }
}

/// Where the walk over one database's entries continues.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EntriesCursor {
    /// The table's scan cursor: 0 at the start, and again at the end once
    /// `scanned` is set.
    scan: u64,
    scanned: bool,
    /// Big collections met in the buckets visited whose blocks are still
    /// to be offered, a step at a time: the key and where its value goes
    /// on. They are finished before the scan goes on; a key gone or no
    /// longer of the same type by then is dropped.
    later: Vec<(Box<[u8]>, Resume)>,
}

/// Keys visited by defrag: some block moved (hits) or none did (misses).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeyCounts {
    pub hits: u64,
    pub misses: u64,
}

impl Partition {
    /// Moves the blocks of database `db`'s entries, one logical bucket of
    /// the table after the other from `at` (default: the start), a big
    /// collection a step of `max_fields` elements (or list nodes) at a
    /// time, until `deadline` (at least one step). Returns true when the
    /// database is done (`at` is back at the start).
    #[allow(clippy::too_many_arguments)]
    pub fn defrag_entries(
        &mut self,
        db: usize,
        at: &mut EntriesCursor,
        max_fields: usize,
        deadline: Instant,
        d: &mut Defrag,
        keys: &mut KeyCounts,
    ) -> bool {
        self.settle();
        let Some(t) = self.dbs.get_mut(db).and_then(|x| x.as_deref_mut()) else {
            *at = EntriesCursor::default();
            return true;
        };
        loop {
            while let Some((k, from)) = at.later.last_mut() {
                let key = Key::new(&k[..]);
                let h = t.table_hash(key.hash);
                let next = t
                    .table
                    .get_mut(h, |e| e.matches(&key))
                    .and_then(|e| e.defrag_from(*from, max_fields, d));
                match next {
                    Some(n) => *from = n,
                    None => {
                        at.later.pop();
                    }
                }
                if Instant::now() >= deadline {
                    return false;
                }
            }
            if at.scanned {
                *at = EntriesCursor::default();
                return true;
            }
            let later = &mut at.later;
            at.scan = t.table.scan_retain(at.scan, |e| {
                let before = d.hits;
                if let Some(n) = e.defrag(max_fields, d) {
                    later.push((e.key().to_vec().into_boxed_slice(), n));
                }
                if d.hits > before {
                    keys.hits += 1;
                } else {
                    keys.misses += 1;
                }
                true
            });
            at.scanned = at.scan == 0;
            if at.scanned && at.later.is_empty() {
                *at = EntriesCursor::default();
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
        }
    }

    /// Moves the table blocks (segment headers, rows) of database `db`
    /// that the allocator advises moving, one segment after the other from
    /// `cursor` (0 starts), until `deadline`. Returns the next cursor, 0
    /// when done.
    pub fn defrag_table(
        &mut self,
        db: usize,
        cursor: u64,
        deadline: Instant,
        d: &mut Defrag,
    ) -> u64 {
        self.settle();
        let Some(t) = self.dbs.get_mut(db).and_then(|x| x.as_deref_mut()) else {
            return 0;
        };
        let mut c = cursor;
        loop {
            // SAFETY: `Defrag::relocate` leaves a block or moves it to a
            // new block of the same layout (outside the thread cache) and
            // frees it; the table's blocks come from the global allocator
            // with exactly the layouts it names.
            c = unsafe {
                t.table.defrag_step(c, |p, layout| match NonNull::new(p) {
                    Some(p) => d.relocate(p, layout).as_ptr(),
                    None => p,
                })
            };
            if c == 0 || Instant::now() >= deadline {
                return c;
            }
        }
    }
}

/// The longest stretch a defrag slice holds one partition's lock: after
/// it the lock goes to a command waiting for it, if any
/// ([`crate::partlock::PartitionGuard::bump`]; a plain unlock would let
/// this thread take it again before the woken waiter runs), and is
/// released. So a command on the partition being defragmented waits about
/// this long, not a whole slice. (The thread does not also yield its core
/// here: a worker sharing that core and busy-polling would keep it for a
/// whole scheduler slice each time, and the pass, whose duty cycle counts
/// that wait as work, slowed to a fraction; measured, see BENCHMARKS.md,
/// issue 23. Keeping the core for short stretches is the slice length's
/// job.)
pub const HOLD: Duration = Duration::from_micros(50);

impl Keyspace {
    /// Runs the defrag pass from `cur` for about `slice` (see the module
    /// docs), one partition lock at a time, in stretches of [`HOLD`].
    /// Returns true when the pass finished (and `cur` is back at the
    /// start).
    pub fn defrag_slice(
        &self,
        cur: &mut DefragCursor,
        slice: Duration,
        d: &mut Defrag,
        keys: &mut KeyCounts,
    ) -> bool {
        let deadline = Instant::now() + slice;
        loop {
            if cur.part >= self.parts.len() {
                *cur = DefragCursor {
                    max_fields: cur.max_fields,
                    ..DefragCursor::default()
                };
                return true;
            }
            if cur.db >= self.ndb || self.is_stopped(cur.part) {
                *cur = DefragCursor {
                    part: cur.part + 1,
                    max_fields: cur.max_fields,
                    ..DefragCursor::default()
                };
                continue;
            }
            let done;
            {
                let mut g = self.lock_partition(cur.part);
                let stretch = (Instant::now() + HOLD).min(deadline);
                let step_fields = cur.step_fields();
                done = if cur.stage == 0 {
                    g.defrag_entries(cur.db, &mut cur.entries, step_fields, stretch, d, keys)
                } else {
                    cur.cursor = g.defrag_table(cur.db, cur.cursor, stretch, d);
                    cur.cursor == 0
                };
                g.bump();
            }
            if done {
                if cur.stage == 0 {
                    cur.stage = 1;
                } else {
                    cur.stage = 0;
                    cur.db += 1;
                }
            }
            if Instant::now() >= deadline {
                return false;
            }
        }
    }
}
