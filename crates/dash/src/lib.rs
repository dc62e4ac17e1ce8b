//! # dash — the Dashtable
//!
//! A segmented extendible hash table for the keyspace. It knows nothing of
//! Redis: it stores values of any type `T`; the caller supplies each entry's
//! 64-bit hash and an equality predicate, and gives the table a function `H`
//! that recomputes an entry's hash (needed only when a segment splits and by
//! [`DashTable::for_each_with_prefix`]). Entries never store their hash.
//!
//! ## Layout
//!
//! ```text
//! directory: 2^gd pointers, indexed by the top gd bits of the hash
//!   │  (a segment of local depth d owns 2^(gd-d) consecutive, aligned entries)
//!   ▼
//! segment header (exactly 2 KiB)                  rows (one allocation each)
//! ┌──────────────────────────────────────────┐     row 0: [slot 0 of bucket 0..56]
//! │ rows[16] pointers (lines 0-1)             │     row 1: [slot 1 of bucket 0..56]
//! │ len│idx│nrows│depth│prefix (line 2)       │     ...
//! │ meta[56]: 16 fingerprints │ displaced     │     row c-1 (c = 0..=16 rows)
//! │ bits│len│stash mask│version│sfp[7] (32 B) │
//! │ stash_home[4][16]                         │
//! └──────────────────────────────────────────┘
//! ```
//!
//! * A segment has 56 physical buckets: 52 regular ("home") buckets and 4
//!   stash buckets. 56 (not 64) makes the header exactly 2,048 bytes, a
//!   jemalloc size class (2,304 bytes were rounded up to 2,560), and a row of
//!   32-byte entries 1,792 bytes, also a size class. A bucket holds up to `c` entries, where `c` is the number
//!   of **rows** the segment has allocated (0 to 16). Storage is slot-major:
//!   row `j` holds slot `j` of every bucket (56 entries, 1,792 bytes for
//!   32-byte entries), so a segment grows by one row — 1/c more capacity — without
//!   moving a single entry.
//! * Hash bits: the top `gd` bits pick the directory entry; the low 32 bits
//!   pick the home bucket (`(lo32 * 52) >> 32`); bits 32..40 are the 1-byte
//!   fingerprint, with 0 read as 1 (0 marks a free slot). The cluster slot
//!   can therefore live in the top 14 bits: it only decides which segment,
//!   so one slot's keys share segments and
//!   [`DashTable::for_each_with_prefix`] touches only those.
//! * Per bucket, 32 bytes of metadata (one aligned half cache line):
//!   fingerprints, occupancy as a count (slots `0..len` are occupied, removal
//!   moves the last slot into the hole), a "displaced" bit per slot (the
//!   entry's home is the previous bucket), a bitmask of the stash buckets
//!   holding entries of this home plus up to 7 of their fingerprints (misses
//!   skip the stash unless one matches; the 7 bytes and their count are
//!   tested as one word, without a loop), and the snapshot version.
//! * The header's first two lines are the row pointers, the third holds
//!   `len` and `nrows`; a read prefetches the first two while it loads the
//!   bucket metadata, a write (insert, remove, entry) all three. Positions
//!   handed around internally name the segment by pointer, so a lookup never
//!   waits for a header line before it can read the metadata.
//!
//! ## Placement and growth
//!
//! An insert goes, in order, to: the less loaded of its home bucket and the
//! next bucket (balanced two-choice); else, one displacement (an entry living
//! at home in the neighbour moves on to *its* neighbour, or an entry displaced
//! into the home bucket moves back to its own home — the new entry takes the
//! moved entry's slot, so no other entry moves); else the least loaded
//! stash bucket. If all fail, the segment gets one more row; at 16 rows it
//! **splits**: the two children (local depth + 1) are built by one pass over
//! the parent, each sized for its entries at 90% fill, and only the directory
//! range of that segment is rewritten. Rows freed by a split (or merge,
//! shrink) go to a small per-table pool (at most 32 rows) that the next
//! build takes from, so a split does not pay ~34 malloc/free calls.
//!
//! The directory doubles only when a splitting segment's depth equals the
//! global depth. That copy (8 bytes per entry, 512 KiB written at 2^15
//! entries) is **not** done inside that insert: the deeper directory
//! (`next_dir`) is built ahead of need, `DIR_STEP` (256) entries per split,
//! and every directory write also updates its built part (invariant I5).
//! Uniform hashes split about `2^(gd-1)` segments between two doublings,
//! far more than the `2^gd / 256` needed, so the doubling itself is a
//! pointer swap; a skewed key set that needs it sooner finishes the copy
//! synchronously (the old cost). The replaced directory is not freed there
//! either (with glibc that is a ~50 us `munmap` at 2^15 entries): retired
//! directories, together smaller than the live one, are freed when the
//! directory halves, on `clear` and on drop. The next `next_dir` is
//! allocated by the split after the doubling, not in it, and the segment
//! list is chunked (`seglist`), so it never copies itself either. What is
//! left in the doubling insert is the split itself (one segment, ~900
//! entries): 32-50 us in `split_cost 10` at every directory size, against
//! ~25 us for the median split. Nothing is ever rehashed table-wide and no
//! single insert does work proportional to the number of entries or
//! segments. Growing to 20M entries, the slowest insert is a split of
//! 53-58 us when each insert is timed by its fastest of three identical
//! runs (`growth_latency -- 20 repeat 3`); one run's raw maximum is larger
//! (0.35-5 ms on a 2-vCPU VM) because stalls of the machine land on single
//! inserts, including ones that split nothing.
//!
//! When removals leave a segment and its buddy (same depth, sibling prefix)
//! with at most 45% of one full segment between them, they **merge**; a
//! segment whose fill would stay under 94% with one row less is rebuilt with
//! one row less (**shrink**). Both return memory after mass deletes. The
//! shrink threshold is close to the fill where inserts start to fail on
//! purpose: under steady churn (as many inserts as removes, e.g. a cache at
//! `maxmemory`) each segment's fill wanders between its shrink point and
//! its grow point (~96%). With a 70% threshold a 2M-key table drifted from
//! 0.90 to 0.80 load, with 90% to 0.87, with 94% it stays at 0.905 (the
//! `churn` example). Also under churn, a removal from a regular bucket pulls
//! one stash entry of that home (or of the previous one, as a displaced
//! entry) back into the freed slot: the stash otherwise only fills, and
//! full stashes make inserts fail (and segments grow) at lower fill. No
//! thrash: a shrunk segment has 6% of its slots free, so it grows again only
//! after many more inserts than removals; growing adds a row and moves no
//! entry.
//!
//! ## Why the memory numbers come out as they do
//!
//! Plain extendible hashing wastes space because a segment is born half full
//! (a split halves it) and all segments fill and split at about the same
//! time, so utilisation swings between ~50% and ~90% with the table size.
//! Here a segment's capacity follows its contents in steps of one row:
//!
//! * with two choices, one displacement and a 4-bucket stash, a segment
//!   accepts entries until about 95-97% of its slots are used before it needs
//!   a row (simulated and measured);
//! * a new row adds 1/c of the capacity (6-12%), so right after growing the
//!   segment is still ~86-91% full;
//! * a split or merge builds segments at ~90% fill, not 50%.
//!
//! So the load factor stays between ~0.86 and ~0.97 for every segment at
//! every size, and the table as a whole sits at 0.89-0.92 from 1M to 20M
//! entries. For 32-byte entries the cost per entry is `32 / load` (~35.5 B)
//! plus the header (2 KiB per segment of ~550-800 entries: ~2.5-3.5 B) plus
//! the directories (live, next, retired: ~0.05 B): about 39 B per entry,
//! 7 B of overhead
//! (`cargo run --release -p dash --example memory`; figures in
//! `docs/BENCHMARKS.md`).
//!
//! ## Speed, and what it costs
//!
//! Compared with `hashbrown` (see `docs/BENCHMARKS.md`) a lookup does more
//! work, and that, rather than a longer chain of cache misses, is what makes
//! it slower:
//!
//! * **Steps.** Directory entry, then the bucket metadata and the row
//!   pointers (loaded side by side), then the entry; hashbrown goes from its
//!   control group straight to the entry. A hit also probes two buckets
//!   (home and neighbour) and picks the row pointer of the matching slot.
//!   Counted in the disassembly of `lookup_profile` (2026-11-24), a hit
//!   runs about 80 instructions here against about 45 in hashbrown, not
//!   counting the hash both compute.
//! * **Overlap.** A loop of independent lookups is as fast as the number of
//!   lookups the core keeps in flight, and more work per lookup means fewer
//!   in flight: adding 30 plain register additions to each hashbrown lookup
//!   made it as slow as dash at 10M entries (60 -> 107-121 ns per hit). One
//!   lookup at a time (`lookup_profile -- 10 dependent`), where overlap does
//!   not count, dash's hit is within 1.09-1.16x of hashbrown's. The count
//!   alone is not the whole story: inlining `get` (~15 fewer instructions)
//!   left 10M hits where they were.
//! * **Not density.** TLB reach and the placement of the 2 KiB headers
//!   between the rows are not the cause: with huge pages, or with headers
//!   grouped in jemalloc's slabs, the ratios stayed the same.
//!
//! Inserts also pay splits (each reads and rehashes one segment), removes
//! move the bucket's last entry into the hole. The price buys the memory
//! figures above and the absence of any whole-table rehash or O(n) stall.
//!
//! **Skew caveat.** The directory has `2^(deepest local depth)` entries. If
//! most keys share a long hash prefix — e.g. millions of keys in one cluster
//! slot when the slot is in the top 14 bits — the directory grows to
//! `2^(14 + log2(segments of that slot))` pointers (10M keys in one slot:
//! ~2^28 x 8 B). A two-level directory (per-prefix subdirectories) would fix
//! this; it is not done yet.
//!
//! ## Invariants (checked by `check_invariants` in the tests)
//!
//! * **I1** In every bucket, slots `0..len` hold initialised entries and no
//!   other slot does; `len <= rows`; `rows[j]` is a live allocation for
//!   `j < rows`. Slots `len..` have fingerprint 0 and a clear displaced
//!   bit, and no entry's fingerprint is 0, so a lookup matches fingerprints
//!   without masking by `len`.
//! * **I2** An entry lives in its home bucket (displaced bit clear), in the
//!   next bucket (displaced bit set), or in a stash bucket whose
//!   `stash_home` names its home and whose bit is set in the home's stash mask
//!   (and the mask has no other bits). Its fingerprint is bits 32..40 of its
//!   hash (1 if those are 0).
//! * **I3** A segment of depth `d` and prefix `p` holds exactly the entries
//!   whose top `d` hash bits are `p`, and owns directory entries
//!   `p << (gd-d) .. (p+1) << (gd-d)`; per-depth segment counts are kept so
//!   the directory halves when no segment needs its depth.
//! * **I4** Every directory entry and every non-null entry of the segment
//!   list points to a live segment owned by the table; the segment records
//!   its index in that list.
//! * **I5** The deeper directory under construction is a prefix of the
//!   doubled directory: `next_dir[2i] == next_dir[2i+1] == dir[i]` for every
//!   `i < next_dir.len() / 2` (so it is complete, and can replace `dir`, when
//!   its length is `2 * dir.len()`). The model tests build it one entry per
//!   split, so they run with half-built next directories.
//! * `len` and the allocated-bytes counter equal the sums over segments, so
//!   [`DashTable::len`] and [`DashTable::allocated_bytes`] are O(1) and exact
//!   (requested sizes; allocator rounding is the allocator's business); the
//!   row pool and the directories are added in.
//!
//! ## Scan
//!
//! The cursor is `(home bucket b, hash position P)`: bucket in the top 8 bits,
//! `P >> 8` below (depth is capped at 56). One call visits *logical* bucket
//! `b` — every entry whose home is `b`, wherever it sits (home, neighbour,
//! stash) — of the segment covering `P`, then moves `P` to the end of that
//! segment's hash range; after the last range it moves to bucket `b + 1`,
//! and returns 0 after the last bucket. Splits, merges, row growth and
//! shrinks never change an entry's home bucket (it comes from the low hash
//! bits) nor the hash order of segments, so for each `b` the calls cover
//! `[0, 2^64)` monotonically: a split only shortens the next step, a merge
//! only re-visits part of a range. Hence Redis's guarantee: an entry present
//! for the whole scan is returned at least once (possibly more).
//!
//! ## Snapshots (bucket versions)
//!
//! Each physical bucket has a `u32` version. A snapshot with version `V`:
//! calls [`DashTable::set_restructure_barrier`]`(V)` (merges and shrinks then
//! skip segments with buckets below `V`), walks
//! [`DashTable::snapshot_step`] (serialises buckets with version `< V` and
//! raises them to `V`) and, before every write, calls
//! [`DashTable::snapshot_before_write`] (serialises the buckets the write may
//! touch, the whole segment if it may split). Segments built by a split,
//! merge or shrink take the highest version of their sources. The primitive
//! operations ([`DashTable::bucket_version`], [`DashTable::raise_bucket_version`],
//! [`DashTable::buckets_for_write`], [`DashTable::for_each_in_bucket`]) are
//! public for other schemes.
//!
//! ## Defrag
//!
//! [`DashTable::defrag_step`] walks segments one per call and offers the
//! header and each row to the caller's `relocate`, which moves a block (a
//! bit copy into a new block of the same layout) or leaves it.
//!
//! ## Eviction before a split
//!
//! [`DashTable::insert_evicting`] and [`DashTable::insert_unique_evicting`]
//! take a predicate that is offered every entry of a segment that is about
//! to split (full at 16 rows, no place for the new entry), or with
//! [`EvictBefore::Grow`] also about to add a row; the entries it selects
//! are removed and the insert tries the same segment again, so it grows
//! only if it is still full. The table does not know why an entry
//! may go: the keyspace uses it to drop expired keys ("expired keys never
//! make the table grow", Dragonfly's rule). At most one eviction round per
//! insert; no merge or shrink follows it (the insert needs the room).
//!
//! ## `unsafe`
//!
//! Rows are arrays of `MaybeUninit<T>` whose occupancy is in the metadata, so
//! reading, moving (bit copies during splits, merges, displacement) and
//! dropping entries is `unsafe`, as is owning segments through raw pointers
//! (the directory holds direct segment pointers: one dependent load less per
//! lookup than an index). Every block states its invariant; the tests pass
//! under Miri (see the crate README). SSE2 fingerprint matching and a
//! prefetch are used on x86_64 (portable code under Miri and elsewhere).

mod seglist;
mod segment;

use seglist::SegList;
use segment::{fp_of, home_of, next, prev, row_bytes, RowPool, Segment, B, C_MAX, NB};
use std::ptr;

/// Deepest local depth a segment may reach (the scan cursor keeps 56 bits of
/// hash position). Reaching it means more entries share a 56-bit hash prefix
/// than one segment can hold: a broken hash function.
const MAX_DEPTH: u32 = 56;

/// Fill a freshly built segment (split, merge, shrink) is sized for.
const BUILD_FILL_PCT: usize = 90;
/// Sibling segments merge when together they hold at most this many entries.
const MERGE_MAX: usize = NB * C_MAX * 45 / 100;
/// A segment is rebuilt with one row less when its fill with one row less
/// would be below this percentage. Close to the fill where inserts start to
/// fail (~95-97%) on purpose: under churn a segment's fill wanders between
/// this point and its grow point, so this sets the table's load at
/// maxmemory (90: 0.885, 93: 0.899, 94: 0.905 at 2M entries in `churn`;
/// fresh growth 0.902). 94 keeps 6% of the slots free after a shrink (~50
/// at 15 rows), so the next row is needed only after that many more inserts
/// than removals; a shrink is one pass over the segment (~10-25 us).
const SHRINK_PCT: usize = 94;

/// Entries of the next directory built per split (see `build_next_dir`).
#[cfg(not(test))]
const DIR_STEP: usize = 256;
/// Small in tests so the model tests see half-built next directories.
#[cfg(test)]
const DIR_STEP: usize = 1;

const SIDE_WORDS: usize = (NB * C_MAX).div_ceil(64);

fn rows_for(n: usize) -> usize {
    (n * 100).div_ceil(NB * BUILD_FILL_PCT).min(C_MAX)
}

/// An occupied slot: the segment is named by its pointer (not its index in
/// the segment list) so that a lookup never waits for the header line that
/// holds the index before it can read the bucket metadata.
struct Pos<T> {
    seg: *mut Segment<T>,
    b: u8,
    j: u8,
}

impl<T> Clone for Pos<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Pos<T> {}

/// Identifies one physical bucket (for snapshot versions). Valid until the
/// next call that mutates the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BucketId {
    seg: u32,
    bucket: u8,
}

/// A segmented extendible hash table. See the crate docs.
pub struct DashTable<T, H: Fn(&T) -> u64> {
    /// Directory: `2^gd` segment pointers, indexed by the top `gd` hash bits.
    /// Each points into `segs` (invariant I4).
    dir: Vec<*mut Segment<T>>,
    gd: u32,
    /// The directory at depth `gd + 1`, built ahead of need a few entries
    /// per split: `next_dir[2i] == next_dir[2i+1] == dir[i]` for
    /// `i < next_dir.len() / 2` (invariant I5). When a split needs a deeper
    /// directory this is usually complete and becomes `dir` in O(1).
    next_dir: Vec<*mut Segment<T>>,
    /// Directories replaced by a doubling. Freeing one is a `munmap` of up
    /// to hundreds of KiB with glibc (~50 us at 2^15 entries), so they are
    /// kept until the directory halves or the table is cleared or dropped;
    /// together they are smaller than the live directory.
    retired: Vec<Vec<*mut Segment<T>>>,
    /// Owned segments (from `Box::into_raw`); null = free index. Chunked,
    /// so growing it never copies it (see `seglist`).
    segs: SegList<*mut Segment<T>>,
    free: Vec<u32>,
    len: usize,
    /// Bytes of all segments (headers + rows).
    seg_bytes: usize,
    /// Number of segments at each local depth.
    depth_count: [u32; MAX_DEPTH as usize + 1],
    /// Merges and shrinks skip segments with a bucket version below this.
    barrier: u32,
    /// Empty rows kept for reuse (see `RowPool`); counted in `allocated_bytes`.
    /// Filled by splits, emptied when removals merge or shrink segments, so
    /// a table that shrank holds no pooled rows.
    pool: RowPool<T>,
    hasher: H,
}

/// The eviction predicate of [`DashTable::insert_evicting`].
type Evict<'a, T> = &'a mut dyn FnMut(&mut T) -> bool;

/// When [`DashTable::insert_evicting`] offers a full segment's entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EvictBefore {
    /// Only before the segment splits (it has all its rows).
    Split,
    /// Before it adds a row too (each time it is full): keeps the table
    /// at the size of what it must keep, at the cost of a pass over the
    /// segment per growth step.
    Grow,
}

/// A view into a single entry, which may be vacant or occupied.
pub enum Entry<'a, T, H: Fn(&T) -> u64> {
    Occupied(OccupiedEntry<'a, T, H>),
    Vacant(VacantEntry<'a, T, H>),
}

/// An entry that exists in the table.
pub struct OccupiedEntry<'a, T, H: Fn(&T) -> u64> {
    table: &'a mut DashTable<T, H>,
    pos: Pos<T>,
}

/// A place for an entry that is absent.
pub struct VacantEntry<'a, T, H: Fn(&T) -> u64> {
    table: &'a mut DashTable<T, H>,
    hash: u64,
}

impl<T, H: Fn(&T) -> u64> DashTable<T, H> {
    /// Drops the table one segment at a time, calling `between` after each
    /// segment (its entries and rows) is freed. The result is the same as
    /// dropping the table; a background thread freeing a large table can
    /// pace itself in `between` instead of holding its CPU for the whole
    /// table (a 10M-key database is ~80 ms of freeing).
    pub fn drop_with(mut self, between: impl FnMut()) {
        self.free_segments(between);
    }

    /// Frees every segment (entries and rows), calling `between` after
    /// each, and leaves the segment list empty.
    fn free_segments(&mut self, mut between: impl FnMut()) {
        let segs = std::mem::take(&mut self.segs);
        for &p in segs.iter() {
            if !p.is_null() {
                // SAFETY: live boxes owned by the table, each freed once
                // (the list is taken out first); the directory's copies of
                // the pointers are not read before it is rebuilt or dropped.
                drop(unsafe { Box::from_raw(p) });
                between();
            }
        }
    }
}

impl<T, H: Fn(&T) -> u64> Drop for DashTable<T, H> {
    fn drop(&mut self) {
        self.free_segments(|| {});
    }
}

// SAFETY: the table owns its segments and entries exclusively (the raw
// pointers are never shared outside it), so it is Send/Sync when its
// contents are.
unsafe impl<T: Send, H: Fn(&T) -> u64 + Send> Send for DashTable<T, H> {}
// SAFETY: see above; `&DashTable` only hands out `&T` and calls `&H`.
unsafe impl<T: Sync, H: Fn(&T) -> u64 + Sync> Sync for DashTable<T, H> {}

impl<'a, T, H: Fn(&T) -> u64> Entry<'a, T, H> {
    /// Returns the existing entry or inserts `f()`.
    pub fn or_insert_with(self, f: impl FnOnce() -> T) -> &'a mut T {
        match self {
            Entry::Occupied(o) => o.into_mut(),
            Entry::Vacant(v) => v.insert(f()),
        }
    }
}

impl<'a, T, H: Fn(&T) -> u64> OccupiedEntry<'a, T, H> {
    pub fn get(&self) -> &T {
        // SAFETY: as in `DashTable::at_mut`; `&self` borrows the table.
        unsafe { (*self.pos.seg).get(self.pos.b as usize, self.pos.j as usize) }
    }
    pub fn get_mut(&mut self) -> &mut T {
        self.table.at_mut(self.pos)
    }
    pub fn into_mut(self) -> &'a mut T {
        self.table.at_mut(self.pos)
    }
    pub fn remove(self) -> T {
        self.table.remove_at(self.pos)
    }
}

impl<'a, T, H: Fn(&T) -> u64> VacantEntry<'a, T, H> {
    pub fn insert(self, value: T) -> &'a mut T {
        self.table.insert_unique(self.hash, value)
    }
}

/// Iterator over all entries.
pub struct Iter<'a, T> {
    segs: std::iter::Flatten<std::slice::Iter<'a, Vec<*mut Segment<T>>>>,
    cur: Option<&'a Segment<T>>,
    b: usize,
    j: usize,
    remaining: usize,
}

impl<'a, T> Iterator for Iter<'a, T> {
    type Item = &'a T;
    fn next(&mut self) -> Option<&'a T> {
        loop {
            let seg = self.cur?;
            while self.b < NB {
                if self.j < seg.meta[self.b].len as usize {
                    // SAFETY: j < len: occupied slot.
                    let e = unsafe { seg.get(self.b, self.j) };
                    self.j += 1;
                    self.remaining -= 1;
                    return Some(e);
                }
                self.b += 1;
                self.j = 0;
            }
            self.cur = next_live(&mut self.segs);
            self.b = 0;
            self.j = 0;
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl<T> ExactSizeIterator for Iter<'_, T> {}

fn next_live<'a, T>(it: &mut impl Iterator<Item = &'a *mut Segment<T>>) -> Option<&'a Segment<T>> {
    // SAFETY: non-null entries of the segment list are live segments owned by
    // the table, which the iterator borrows for 'a.
    it.find(|p| !p.is_null()).map(|&p| unsafe { &*p })
}

fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl<T, H: Fn(&T) -> u64> DashTable<T, H> {
    /// An empty table; `hasher` recomputes an entry's 64-bit hash (used only
    /// when a segment splits and by `for_each_with_prefix`).
    pub fn with_hasher(hasher: H) -> Self {
        let mut t = DashTable {
            dir: Vec::new(),
            gd: 1,
            next_dir: Vec::new(),
            retired: Vec::new(),
            segs: SegList::default(),
            free: Vec::new(),
            len: 0,
            seg_bytes: 0,
            depth_count: [0; MAX_DEPTH as usize + 1],
            barrier: 0,
            pool: RowPool::default(),
            hasher,
        };
        t.reset();
        t
    }

    fn reset(&mut self) {
        self.free_segments(|| {});
        self.free = Vec::new();
        self.pool = RowPool::default();
        self.seg_bytes = 0;
        self.depth_count = [0; MAX_DEPTH as usize + 1];
        self.gd = 1;
        self.len = 0;
        let s = self.alloc_seg(Segment::new(0, 0));
        self.dir = vec![self.segs[s]; 2];
        self.next_dir = Vec::new();
        self.retired = Vec::new();
        self.depth_count[0] = 1;
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Exact bytes allocated by the table itself (directory + segment list +
    /// segment headers + rows), O(1). Allocator rounding is not included.
    pub fn allocated_bytes(&self) -> usize {
        self.seg_bytes + self.directory_bytes() + self.pool.bytes()
    }

    /// Bytes of the directories (live, being built, retired) and of the
    /// segment list.
    pub fn directory_bytes(&self) -> usize {
        let retired: usize = self.retired.iter().map(|d| d.capacity()).sum();
        (self.dir.capacity() + self.next_dir.capacity() + retired)
            * std::mem::size_of::<*mut Segment<T>>()
            + self.retired.capacity() * std::mem::size_of::<Vec<*mut Segment<T>>>()
            + self.segs.bytes()
            + self.free.capacity() * 4
    }

    /// Number of live segments.
    pub fn segment_count(&self) -> usize {
        self.segs.len() - self.free.len()
    }

    /// Global depth of the directory (it has `2^depth` entries).
    pub fn global_depth(&self) -> u32 {
        self.gd
    }

    /// Entry slots currently allocated.
    pub fn capacity(&self) -> usize {
        self.segs_iter().map(|s| s.capacity()).sum()
    }

    /// Entry slots currently allocated, O(1) (from the byte count: every
    /// segment has a header and `nrows` rows of `NB` slots).
    pub fn slot_capacity(&self) -> usize {
        let rows = (self.seg_bytes - self.segment_count() * segment::segment_bytes::<T>())
            / segment::row_bytes::<T>();
        rows * segment::NB
    }

    /// `len / capacity`.
    pub fn load_factor(&self) -> f64 {
        let c = self.capacity();
        if c == 0 {
            0.0
        } else {
            self.len as f64 / c as f64
        }
    }

    /// Free entry slots in allocated rows.
    pub fn empty_slots(&self) -> usize {
        self.capacity() - self.len
    }

    #[inline]
    fn dir_index(&self, hash: u64) -> usize {
        (hash >> (64 - self.gd)) as usize
    }

    /// The segment covering `hash`, without a bounds check: the directory
    /// has exactly `2^gd` entries (checked by `check_invariants`), and the
    /// index is the top `gd` bits of the hash, so it is always in range.
    #[inline]
    fn dir_entry(&self, hash: u64) -> *mut Segment<T> {
        let i = self.dir_index(hash);
        debug_assert!(i < self.dir.len());
        // SAFETY: i < 2^gd == dir.len() (see above).
        unsafe { *self.dir.get_unchecked(i) }
    }

    #[inline]
    fn seg(&self, si: usize) -> &Segment<T> {
        let p = self.segs[si];
        debug_assert!(!p.is_null());
        // SAFETY: non-null entries of `segs` are live boxes owned by the table
        // (invariant I4); the borrow is tied to `&self`.
        unsafe { &*p }
    }

    #[inline]
    fn seg_mut(&mut self, si: usize) -> &mut Segment<T> {
        let p = self.segs[si];
        debug_assert!(!p.is_null());
        // SAFETY: as in `seg`; `&mut self` makes the access exclusive.
        unsafe { &mut *p }
    }

    /// Segment index of directory entry `i`.
    #[inline]
    fn si_at(&self, i: usize) -> usize {
        // SAFETY: directory entries point to live segments (invariant I4).
        unsafe { (*self.dir[i]).idx as usize }
    }

    #[inline]
    fn at_mut(&mut self, p: Pos<T>) -> &mut T {
        // SAFETY: positions are only created for occupied slots of live
        // segments (from the directory) and used before any further mutation
        // of the table; `&mut self` makes the access exclusive.
        unsafe { (*p.seg).get_mut(p.b as usize, p.j as usize) }
    }

    #[inline]
    fn find(&self, hash: u64, eq: impl FnMut(&T) -> bool) -> Option<Pos<T>> {
        let sp = self.dir_entry(hash);
        // SAFETY: directory entries point to live segments (I4).
        let seg = unsafe { &*sp };
        seg.find::<true>(home_of(hash), fp_of(hash), eq)
            .map(|(b, j)| Pos {
                seg: sp,
                b: b as u8,
                j: j as u8,
            })
    }

    pub fn get(&self, hash: u64, eq: impl FnMut(&T) -> bool) -> Option<&T> {
        // SAFETY: directory entries point to live segments (I4).
        let seg = unsafe { &*self.dir_entry(hash) };
        let (b, j) = seg.find::<false>(home_of(hash), fp_of(hash), eq)?;
        // SAFETY: `find` returns occupied slots.
        Some(unsafe { seg.get(b, j) })
    }

    pub fn get_mut(&mut self, hash: u64, eq: impl FnMut(&T) -> bool) -> Option<&mut T> {
        let p = self.find(hash, eq)?;
        Some(self.at_mut(p))
    }

    /// Inserts; if an entry matching `eq` exists it is replaced and returned.
    pub fn insert(&mut self, hash: u64, value: T, eq: impl FnMut(&T) -> bool) -> Option<T> {
        match self.find(hash, eq) {
            Some(p) => Some(std::mem::replace(self.at_mut(p), value)),
            None => {
                self.insert_unique(hash, value);
                None
            }
        }
    }

    /// Inserts an entry the caller guarantees is absent; returns a reference to it.
    pub fn insert_unique(&mut self, hash: u64, value: T) -> &mut T {
        let p = self.insert_pos(hash, value);
        self.at_mut(p)
    }

    /// Like [`insert`](Self::insert), but before the insert would split a
    /// segment, every entry of that segment is offered to `evict`; those for
    /// which it returns true are removed (and dropped) and the insert tries
    /// that segment again, splitting only if it is still full. The caller
    /// does its bookkeeping for a removed entry inside `evict` (it may also
    /// change the entry, e.g. take its value). Used by the keyspace to drop
    /// expired keys instead of growing the table for them (Dragonfly's rule).
    /// `evict` is called only on a full segment about to grow: to split
    /// ([`EvictBefore::Split`]), or also to add a row
    /// ([`EvictBefore::Grow`]), never otherwise.
    pub fn insert_evicting(
        &mut self,
        hash: u64,
        value: T,
        eq: impl FnMut(&T) -> bool,
        evict: &mut dyn FnMut(&mut T) -> bool,
        when: EvictBefore,
    ) -> Option<T> {
        match self.find(hash, eq) {
            Some(p) => Some(std::mem::replace(self.at_mut(p), value)),
            None => {
                let p = self.insert_pos_with(hash, value, Some((evict, when)));
                let _ = self.at_mut(p);
                None
            }
        }
    }

    /// [`insert_unique`](Self::insert_unique) with the eviction hook of
    /// [`insert_evicting`](Self::insert_evicting).
    pub fn insert_unique_evicting(
        &mut self,
        hash: u64,
        value: T,
        evict: &mut dyn FnMut(&mut T) -> bool,
        when: EvictBefore,
    ) -> &mut T {
        let p = self.insert_pos_with(hash, value, Some((evict, when)));
        self.at_mut(p)
    }

    /// Removes the entries of segment `si` that `evict` selects (no merge
    /// or shrink: the caller is about to insert into it). Returns how many.
    fn evict_in_segment(&mut self, si: usize, evict: &mut dyn FnMut(&mut T) -> bool) -> usize {
        let seg = self.seg_mut(si);
        let mut removed = 0usize;
        for b in 0..NB {
            let mut j = 0;
            while j < seg.meta[b].len as usize {
                // SAFETY: j < len: an occupied slot.
                if evict(unsafe { seg.get_mut(b, j) }) {
                    // SAFETY: occupied slot, unlinked right after the read,
                    // so ownership moves to `v`.
                    let v = unsafe { ptr::read(seg.slot_ptr(b, j)) };
                    seg.unlink(b, j);
                    seg.len -= 1;
                    removed += 1;
                    drop(v);
                    continue; // slot j now holds the former last entry
                }
                j += 1;
            }
        }
        self.len -= removed;
        removed
    }

    #[inline]
    fn insert_pos(&mut self, hash: u64, value: T) -> Pos<T> {
        self.insert_pos_with(hash, value, None)
    }

    fn insert_pos_with(
        &mut self,
        hash: u64,
        value: T,
        mut evict: Option<(Evict<'_, T>, EvictBefore)>,
    ) -> Pos<T> {
        let home = home_of(hash);
        let fp = fp_of(hash);
        loop {
            let sp = self.dir[self.dir_index(hash)];
            // SAFETY: directory entries point to live segments (I4) and
            // `&mut self` gives exclusive access.
            let seg = unsafe { &mut *sp };
            if let Some((b, j)) = seg.place(home, fp, true) {
                // SAFETY: `place` reserved slot (b, j): it is in a live row and
                // marked occupied; we initialise it now.
                unsafe { seg.slot_ptr(b, j).write(value) };
                seg.len += 1;
                self.len += 1;
                return Pos {
                    seg: sp,
                    b: b as u8,
                    j: j as u8,
                };
            }
            let si = seg.idx as usize;
            // At most once per insert: a second full segment grows.
            if matches!(evict, Some((_, EvictBefore::Grow))) {
                let (f, _) = evict.take().expect("checked");
                if self.evict_in_segment(si, f) > 0 {
                    continue;
                }
            }
            // SAFETY: as above; `evict_in_segment` left the segment live.
            let seg = unsafe { &mut *sp };
            if seg.add_row(&mut self.pool) {
                self.seg_bytes += row_bytes::<T>();
                continue;
            }
            if let Some((f, _)) = evict.take() {
                if self.evict_in_segment(si, f) > 0 {
                    continue;
                }
            }
            self.split(si);
        }
    }

    pub fn remove(&mut self, hash: u64, eq: impl FnMut(&T) -> bool) -> Option<T> {
        let p = self.find(hash, eq)?;
        Some(self.remove_at(p))
    }

    fn remove_at(&mut self, p: Pos<T>) -> T {
        // SAFETY: `p` names a live segment (see `at_mut`).
        let seg = unsafe { &mut *p.seg };
        let si = seg.idx as usize;
        // SAFETY: p is an occupied slot; `unlink` marks it free without
        // dropping, so ownership moves to the returned value.
        let v = unsafe { ptr::read(seg.slot_ptr(p.b as usize, p.j as usize)) };
        seg.unlink(p.b as usize, p.j as usize);
        seg.len -= 1;
        self.len -= 1;
        if (p.b as usize) < B && self.barrier_ok(si) {
            // Only outside a snapshot (or once this segment is serialised):
            // the move touches a stash bucket the write did not announce.
            self.seg_mut(si).refill_from_stash(p.b as usize);
        }
        self.maintain(si);
        v
    }

    pub fn entry(&mut self, hash: u64, eq: impl FnMut(&T) -> bool) -> Entry<'_, T, H> {
        match self.find(hash, eq) {
            Some(pos) => Entry::Occupied(OccupiedEntry { table: self, pos }),
            None => Entry::Vacant(VacantEntry { table: self, hash }),
        }
    }

    /// Removes all entries and frees all segments but one empty one.
    pub fn clear(&mut self) {
        self.reset();
    }

    pub fn iter(&self) -> Iter<'_, T> {
        let mut segs = self.segs.iter();
        let cur = next_live(&mut segs);
        Iter {
            segs,
            cur,
            b: 0,
            j: 0,
            remaining: self.len,
        }
    }

    // ---------------------------------------------------------------- growth

    fn alloc_seg(&mut self, mut seg: Box<Segment<T>>) -> usize {
        self.seg_bytes += seg.bytes();
        let i = match self.free.pop() {
            Some(i) => i as usize,
            None => self.segs.push(ptr::null_mut()),
        };
        seg.idx = i as u32;
        self.segs[i] = Box::into_raw(seg);
        i
    }

    /// Removes segment `si` from the table (the caller fixes the directory).
    fn take_seg(&mut self, si: usize) -> Box<Segment<T>> {
        let p = std::mem::replace(&mut self.segs[si], ptr::null_mut());
        assert!(!p.is_null());
        // SAFETY: `p` came from `Box::into_raw` in `alloc_seg` and is removed
        // from `segs` above, so ownership returns to this box.
        let s = unsafe { Box::from_raw(p) };
        self.seg_bytes -= s.bytes();
        self.free.push(si as u32);
        s
    }

    fn segs_iter(&self) -> impl Iterator<Item = &Segment<T>> {
        // SAFETY: non-null entries are live segments owned by the table.
        self.segs
            .iter()
            .filter(|p| !p.is_null())
            .map(|&p| unsafe { &*p })
    }

    /// Points directory entries `r` at segment `si`.
    fn set_dir(&mut self, r: std::ops::Range<usize>, si: usize) {
        let p = self.segs[si];
        // Keep the part of the next directory built so far in step (I5).
        let built = self.next_dir.len() / 2;
        if r.start < built {
            let end = r.end.min(built);
            self.next_dir[2 * r.start..2 * end]
                .iter_mut()
                .for_each(|x| *x = p);
        }
        self.dir[r].iter_mut().for_each(|x| *x = p);
    }

    /// Builds up to `n` more entries of the next (deeper) directory. Called
    /// on every split, so the directory doubling that some later split needs
    /// is spread over the splits before it instead of being one O(directory)
    /// copy inside a single insert.
    fn build_next_dir(&mut self, n: usize) {
        let built = self.next_dir.len() / 2;
        let end = built.saturating_add(n).min(self.dir.len());
        if built == end {
            return;
        }
        if self.next_dir.capacity() == 0 {
            // Only reserves address space; pages are touched as entries are
            // written, a few per split.
            self.next_dir.reserve_exact(2 * self.dir.len());
        }
        for i in built..end {
            let s = self.dir[i];
            self.next_dir.push(s);
            self.next_dir.push(s);
        }
    }

    fn double_dir(&mut self) {
        // Normally complete already (uniform hashes split about 2^(gd-1)
        // segments between doublings, each building DIR_STEP entries); a
        // skewed key set can need it sooner, then the rest is copied here.
        self.build_next_dir(usize::MAX);
        let old = std::mem::replace(&mut self.dir, std::mem::take(&mut self.next_dir));
        self.retired.push(old);
        self.gd += 1;
    }

    fn maybe_halve_dir(&mut self) {
        while self.gd > 1 && self.depth_count[self.gd as usize] == 0 {
            let d: Vec<*mut Segment<T>> = self.dir.iter().step_by(2).copied().collect();
            self.dir = d;
            self.next_dir = Vec::new();
            self.retired = Vec::new();
            self.gd -= 1;
        }
    }

    /// Directory range of a segment.
    fn dir_range(&self, seg: &Segment<T>) -> std::ops::Range<usize> {
        let shift = self.gd - seg.depth as u32;
        let first = (seg.prefix as usize) << shift;
        first..first + (1 << shift)
    }

    /// Splits segment `si` into two of depth + 1.
    #[cold]
    #[inline(never)]
    fn split(&mut self, si: usize) {
        let d = self.seg(si).depth as u32;
        assert!(
            d < MAX_DEPTH,
            "dash: too many entries share one hash prefix (broken hash function?)"
        );
        // Decide sides first: this calls the user's hasher, before any mutation.
        let mut side = [0u64; SIDE_WORDS];
        let mut n1 = 0usize;
        {
            let seg = self.seg(si);
            let shift = 63 - d;
            // Row-major order: each row is read sequentially.
            for j in 0..seg.nrows as usize {
                for b in 0..NB {
                    if j >= seg.meta[b].len as usize {
                        continue;
                    }
                    // SAFETY: j < len.
                    let h = (self.hasher)(unsafe { seg.get(b, j) });
                    if (h >> shift) & 1 == 1 {
                        let k = b * C_MAX + j;
                        side[k / 64] |= 1 << (k % 64);
                        n1 += 1;
                    }
                }
            }
        }
        if d == self.gd {
            // The next deeper directory is started by the next split: its
            // allocation (256 KiB at 2^15 entries, ~20 us with glibc) would
            // otherwise add to this insert's split.
            self.double_dir();
        } else {
            self.build_next_dir(DIR_STEP);
        }
        let n = self.seg(si).len as usize;
        let n0 = n - n1;
        let prefix = self.seg(si).prefix;
        self.depth_count[d as usize] -= 1;
        self.depth_count[d as usize + 1] += 2;
        if n0 == 0 || n1 == 0 {
            // Everything goes one way: keep the segment, add an empty sibling.
            let v = self.seg(si).max_version();
            let (keep, empty) = if n1 == 0 { (0, 1) } else { (1, 0) };
            let seg = self.seg_mut(si);
            seg.depth = d as u8 + 1;
            seg.prefix = prefix * 2 + keep;
            let mut e = Segment::new(d as u8 + 1, prefix * 2 + empty);
            e.set_all_versions(v);
            let ei = self.alloc_seg(e);
            let r = self.dir_range(self.seg(ei));
            self.set_dir(r, ei);
            return;
        }
        let mut pool = std::mem::take(&mut self.pool);
        let parent = self.seg(si);
        let v = parent.max_version();
        let mut kids = [
            Segment::<T>::new(d as u8 + 1, prefix * 2),
            Segment::<T>::new(d as u8 + 1, prefix * 2 + 1),
        ];
        for (kid, want) in kids.iter_mut().zip([n0, n1]) {
            while (kid.nrows as usize) < rows_for(want) {
                kid.add_row(&mut pool);
            }
        }
        // One pass distributes the entries (bit copies; the parent keeps
        // ownership until it forgets them below).
        let mut ok = [true, true];
        for j in 0..parent.nrows as usize {
            for b in 0..NB {
                if j >= parent.meta[b].len as usize {
                    continue;
                }
                let i = b * C_MAX + j;
                let k = ((side[i / 64] >> (i % 64)) & 1) as usize;
                if !ok[k] {
                    continue;
                }
                let home = parent.home_of_slot(b, j);
                let kid = &mut kids[k];
                match kid.place_growing(home, parent.meta[b].fp[j], false, &mut pool) {
                    Some((db, dj)) => {
                        // SAFETY: source occupied, destination reserved, distinct
                        // allocations; ownership settles when the parent forgets.
                        unsafe {
                            ptr::copy_nonoverlapping(parent.slot_ptr(b, j), kid.slot_ptr(db, dj), 1)
                        };
                        kid.len += 1;
                    }
                    None => ok[k] = false,
                }
            }
        }
        for k in 0..2 {
            if !ok[k] {
                kids[k].forget_entries();
                let sel = |_: usize, b: usize, j: usize| {
                    let i = b * C_MAX + j;
                    (side[i / 64] >> (i % 64)) & 1 == k as u64
                };
                kids[k] =
                    build_positional(parent, d as u8 + 1, prefix * 2 + k as u64, sel, &mut pool);
            }
            kids[k].set_all_versions(v);
        }
        let mut parent = self.take_seg(si);
        parent.forget_entries();
        parent.recycle(&mut pool);
        self.pool = pool;
        for kid in kids {
            let ki = self.alloc_seg(kid);
            let r = self.dir_range(self.seg(ki));
            self.set_dir(r, ki);
        }
    }

    /// After removals from segment `si`: merge with its buddy or drop rows
    /// when sparse.
    fn maintain(&mut self, si: usize) {
        let mut si = si;
        loop {
            let seg = self.seg(si);
            let d = seg.depth as u32;
            let n = seg.len as usize;
            if n > MERGE_MAX {
                break;
            }
            if d > 0 {
                let r = self.dir_range(seg);
                let span = r.len();
                let bfirst = r.start ^ span;
                let bi = self.si_at(bfirst);
                let buddy = self.seg(bi);
                if buddy.depth as u32 == d && n + buddy.len as usize <= MERGE_MAX {
                    if let Some(mi) = self.merge(si, bi) {
                        si = mi;
                        continue;
                    }
                }
            }
            break;
        }
        self.maybe_shrink(si);
        if self.len == 0 && self.segs.len() > 1 && self.barrier == 0 {
            // Emptied by removes: merges left one segment, but the segment
            // list (and its free-index list) keep their peak size, 24 KB
            // per table after 1M entries. Start afresh instead. Once reset
            // the list has one entry, so a table that hovers at empty does
            // not reset again.
            self.reset();
        }
    }

    fn barrier_ok(&self, si: usize) -> bool {
        self.barrier == 0 || self.seg(si).min_version() >= self.barrier
    }

    fn merge(&mut self, a: usize, b: usize) -> Option<usize> {
        if !self.barrier_ok(a) || !self.barrier_ok(b) {
            return None;
        }
        let (sa, sb) = (self.seg(a), self.seg(b));
        let d = sa.depth as u32;
        let n = (sa.len + sb.len) as usize;
        let v = sa.max_version().max(sb.max_version());
        let mut pool = std::mem::take(&mut self.pool);
        let (sa, sb) = (self.seg(a), self.seg(b));
        let built = build(
            &[sa, sb],
            d as u8 - 1,
            sa.prefix / 2,
            rows_for(n),
            |_, _, _| true,
            &mut pool,
        );
        self.pool = pool;
        let mut m = built?;
        m.set_all_versions(v);
        let mut x = self.take_seg(a);
        let mut y = self.take_seg(b);
        x.forget_entries();
        y.forget_entries();
        x.recycle(&mut self.pool);
        y.recycle(&mut self.pool);
        // The pool serves growth; once removals restructure, give it back.
        self.pool.release();
        let mi = self.alloc_seg(m);
        let r = self.dir_range(self.seg(mi));
        self.set_dir(r, mi);
        self.depth_count[d as usize] -= 2;
        self.depth_count[d as usize - 1] += 1;
        self.maybe_halve_dir();
        Some(mi)
    }

    fn maybe_shrink(&mut self, si: usize) {
        let seg = self.seg(si);
        let c = seg.nrows as usize;
        let n = seg.len as usize;
        if c == 0 || (n > 0 && n * 100 >= (c - 1) * NB * SHRINK_PCT) {
            return;
        }
        if n == 0 {
            let mut pool = std::mem::take(&mut self.pool);
            self.seg_mut(si).free_rows_from(0, &mut pool);
            pool.release();
            self.pool = pool;
            self.seg_bytes -= c * row_bytes::<T>();
            return;
        }
        if !self.barrier_ok(si) {
            return;
        }
        let v = seg.max_version();
        let mut pool = std::mem::take(&mut self.pool);
        let seg = self.seg(si);
        // As few rows as keep the fill under SHRINK_PCT (at most c - 1), so a
        // mass delete right-sizes a segment in one rebuild, not one per row.
        let rows = (n * 100).div_ceil(NB * SHRINK_PCT).clamp(1, c - 1);
        let built = build(
            &[seg],
            seg.depth,
            seg.prefix,
            rows,
            |_, _, _| true,
            &mut pool,
        );
        self.pool = pool;
        let Some(mut m) = built else {
            return;
        };
        if m.nrows as usize >= c {
            m.forget_entries();
            return;
        }
        m.set_all_versions(v);
        let mut old = self.take_seg(si);
        old.forget_entries();
        old.recycle(&mut self.pool);
        self.pool.release();
        let mi = self.alloc_seg(m);
        let r = self.dir_range(self.seg(mi));
        self.set_dir(r, mi);
    }

    // ------------------------------------------------------------ scanning

    /// Visits logical bucket `b` (entries whose home is `b`) of the segment
    /// holding hash position `p`; returns (segment index, end of its range).
    fn scan_one(&self, p: u64, b: usize, f: &mut impl FnMut(&T)) -> (usize, u128) {
        let si = self.si_at(self.dir_index(p));
        let seg = self.seg(si);
        let m = &seg.meta[b];
        for j in 0..m.len as usize {
            if m.disp & (1 << j) == 0 {
                // SAFETY: j < len.
                f(unsafe { seg.get(b, j) });
            }
        }
        let nb = next(b);
        let m2 = &seg.meta[nb];
        for j in 0..m2.len as usize {
            if m2.disp & (1 << j) != 0 {
                // SAFETY: j < len.
                f(unsafe { seg.get(nb, j) });
            }
        }
        if m.stash != 0 {
            for s in B..NB {
                for j in 0..seg.meta[s].len as usize {
                    if seg.stash_home[s - B][j] as usize == b {
                        // SAFETY: j < len.
                        f(unsafe { seg.get(s, j) });
                    }
                }
            }
        }
        (si, seg_end(p, seg.depth as u32))
    }

    /// Resumable scan: visits the entries of one logical bucket (or a few, if
    /// they are empty) and returns the next cursor; 0 = complete. Start with 0.
    ///
    /// Redis SCAN guarantee: an entry present for the whole scan is returned
    /// at least once, even if segments split or merge between calls. Entries
    /// may be returned more than once.
    pub fn scan(&self, cursor: u64, mut f: impl FnMut(&T)) -> u64 {
        let mut cursor = cursor;
        let mut seen = 0usize;
        for _ in 0..64 {
            let (b, p) = split_cursor(cursor);
            if b >= B {
                return 0;
            }
            let (_, end) = self.scan_one(p, b, &mut |e| {
                seen += 1;
                f(e)
            });
            cursor = advance_cursor(b, end, B);
            if cursor == 0 || seen > 0 {
                break;
            }
        }
        cursor
    }

    /// Same walk as [`scan`](Self::scan), but `f` may mutate and returns
    /// false to remove the entry (used by active expiry). Same guarantee for
    /// entries not removed. May merge or shrink the visited segment.
    pub fn scan_retain(&mut self, cursor: u64, mut f: impl FnMut(&mut T) -> bool) -> u64 {
        let (b, p) = split_cursor(cursor);
        if b >= B {
            return 0;
        }
        let si = self.si_at(self.dir_index(p));
        let seg = self.seg_mut(si);
        let mut removed = 0usize;
        let nb = next(b);
        let mut visit =
            |seg: &mut Segment<T>, pb: usize, want: &dyn Fn(&Segment<T>, usize) -> bool| {
                let mut j = 0;
                while j < seg.meta[pb].len as usize {
                    if want(seg, j) {
                        // SAFETY: j < len.
                        let keep = f(unsafe { seg.get_mut(pb, j) });
                        if !keep {
                            // SAFETY: occupied slot, unlinked right after the read.
                            let v = unsafe { ptr::read(seg.slot_ptr(pb, j)) };
                            seg.unlink(pb, j);
                            seg.len -= 1;
                            removed += 1;
                            drop(v);
                            continue; // slot j now holds the former last entry
                        }
                    }
                    j += 1;
                }
            };
        visit(seg, b, &|s, j| s.meta[b].disp & (1 << j) == 0);
        visit(seg, nb, &|s, j| s.meta[nb].disp & (1 << j) != 0);
        if seg.meta[b].stash != 0 {
            for s in B..NB {
                visit(seg, s, &|sg, j| sg.stash_home[s - B][j] as usize == b);
            }
        }
        let end = seg_end(p, seg.depth as u32);
        if removed > 0 {
            self.len -= removed;
            self.maintain(si);
        }
        advance_cursor(b, end, B)
    }

    /// A random entry in O(1) expected time; `seed` is a random u64 from the caller.
    pub fn random(&self, seed: u64) -> Option<&T> {
        if self.len == 0 {
            return None;
        }
        let mut x = seed;
        for _ in 0..64 {
            let r = splitmix(&mut x);
            let si = self.si_at((r as usize) & (self.dir.len() - 1));
            let seg = self.seg(si);
            if seg.nrows == 0 {
                continue;
            }
            let r2 = splitmix(&mut x);
            let b = (r2 % NB as u64) as usize;
            let j = ((r2 >> 32) % seg.nrows as u64) as usize;
            if j < seg.meta[b].len as usize {
                // SAFETY: j < len.
                return Some(unsafe { seg.get(b, j) });
            }
        }
        // Very sparse table: walk from a random segment.
        let start = (splitmix(&mut x) as usize) % self.segs.len();
        (0..self.segs.len())
            .map(|k| self.segs[(start + k) % self.segs.len()])
            .filter(|p| !p.is_null())
            // SAFETY: live segment owned by the table.
            .map(|p| unsafe { &*p })
            .find_map(|seg| {
                (0..NB).find_map(|b| {
                    // SAFETY: slot 0 is occupied when len > 0.
                    (seg.meta[b].len > 0).then(|| unsafe { seg.get(b, 0) })
                })
            })
    }

    /// Visits up to `n` entries taken together from one random place: a
    /// random segment, row and bucket, then the same row of the following
    /// buckets, which lie next to each other in memory (as Redis's
    /// `dictGetSomeKeys` takes consecutive buckets). For sampling by
    /// anything independent of the hash (access time, frequency, TTL) this
    /// is as good as `n` calls of [`DashTable::random`] and much cheaper: one
    /// segment header and a few consecutive cache lines instead of `n`
    /// random probes of three lines each. When one segment's row yields
    /// fewer than `n`, further random places are tried (at most 64), so an
    /// entry may be visited twice on a small table. Returns the number of
    /// visits.
    pub fn random_run(&self, seed: u64, n: usize, mut f: impl FnMut(&T)) -> usize {
        if self.len == 0 || n == 0 {
            return 0;
        }
        let n = n.min(self.len);
        let mut x = seed;
        let mut got = 0;
        for _ in 0..64 {
            let r = splitmix(&mut x);
            let seg = self.seg(self.si_at((r as usize) & (self.dir.len() - 1)));
            if seg.nrows == 0 {
                continue;
            }
            let r2 = splitmix(&mut x);
            let b0 = (r2 % NB as u64) as usize;
            let j = ((r2 >> 32) % seg.nrows as u64) as usize;
            for k in 0..NB {
                let b = (b0 + k) % NB;
                if j < seg.meta[b].len as usize {
                    // SAFETY: j < len: slot j of bucket b is occupied (I1).
                    f(unsafe { seg.get(b, j) });
                    got += 1;
                    if got == n {
                        return got;
                    }
                }
            }
        }
        if got == 0 {
            if let Some(e) = self.random(splitmix(&mut x)) {
                f(e);
                got = 1;
            }
        }
        got
    }

    /// Visits entries whose hash's top `bits` bits equal `prefix` (prefix
    /// right-aligned), at a cost proportional to the segments holding that prefix.
    pub fn for_each_with_prefix(&self, prefix: u64, bits: u32, mut f: impl FnMut(&T)) {
        self.for_each_with_prefix_while(prefix, bits, |e| {
            f(e);
            true
        });
    }

    /// [`for_each_with_prefix`](Self::for_each_with_prefix) until `f`
    /// answers false: the cost is that of the segments visited up to then.
    pub fn for_each_with_prefix_while(
        &self,
        prefix: u64,
        bits: u32,
        mut f: impl FnMut(&T) -> bool,
    ) {
        let bits = bits.min(64);
        let matches = |h: u64| bits == 0 || h >> (64 - bits) == prefix;
        // False once `f` asked to stop.
        let visit = |seg: &Segment<T>, filter: bool, f: &mut dyn FnMut(&T) -> bool| {
            for b in 0..NB {
                for j in 0..seg.meta[b].len as usize {
                    // SAFETY: j < len.
                    let e = unsafe { seg.get(b, j) };
                    if (!filter || matches((self.hasher)(e))) && !f(e) {
                        return false;
                    }
                }
            }
            true
        };
        if bits <= self.gd {
            let span = 1usize << (self.gd - bits);
            let first = (prefix as usize) << (self.gd - bits);
            let mut i = first;
            while i < first + span {
                let si = self.si_at(i);
                let seg = self.seg(si);
                if !visit(seg, (seg.depth as u32) < bits, &mut f) {
                    return;
                }
                i = (i | ((1usize << (self.gd - seg.depth as u32)) - 1)) + 1;
            }
        } else {
            let si = self.si_at((prefix >> (bits - self.gd)) as usize);
            visit(self.seg(si), true, &mut f);
        }
    }

    // ------------------------------------------------------------ snapshots

    /// Version of a physical bucket.
    pub fn bucket_version(&self, id: BucketId) -> u32 {
        self.seg(id.seg as usize).meta[id.bucket as usize].version
    }

    /// Raises a bucket's version to `v` (never lowers it).
    pub fn raise_bucket_version(&mut self, id: BucketId, v: u32) {
        let m = &mut self.seg_mut(id.seg as usize).meta[id.bucket as usize];
        m.version = m.version.max(v);
    }

    /// Visits the entries stored in one physical bucket (the references
    /// live as long as the borrow of the table).
    pub fn for_each_in_bucket<'a>(&'a self, id: BucketId, mut f: impl FnMut(&'a T)) {
        let seg = self.seg(id.seg as usize);
        for j in 0..seg.meta[id.bucket as usize].len as usize {
            // SAFETY: j < len.
            f(unsafe { seg.get(id.bucket as usize, j) });
        }
    }

    /// Calls `f` for every physical bucket that a write for `hash` (insert,
    /// get_mut, remove, including any split it triggers) may modify or move
    /// entries out of. Merges and shrinks are governed by
    /// [`set_restructure_barrier`](Self::set_restructure_barrier) instead.
    pub fn buckets_for_write(&self, hash: u64, mut f: impl FnMut(BucketId)) {
        let si = self.si_at(self.dir_index(hash));
        let seg = self.seg(si);
        let home = home_of(hash);
        let nb = next(home);
        let id = |b: usize| BucketId {
            seg: si as u32,
            bucket: b as u8,
        };
        let full = |b: usize| seg.meta[b].len as usize == C_MAX;
        if seg.nrows as usize == C_MAX && full(home) && full(nb) {
            (0..NB).for_each(|b| f(id(b)));
            return;
        }
        for b in [prev(home), home, nb, next(nb)] {
            f(id(b));
        }
        (B..NB).for_each(|b| f(id(b)));
    }

    /// [`buckets_for_write`](Self::buckets_for_write) for an insert that
    /// may drop entries first ([`insert_evicting`](Self::insert_evicting)
    /// with either [`EvictBefore`]): the whole segment whenever the entry's
    /// home and next buckets are full at the segment's current row count,
    /// because the insert may then fail to place the entry and run the
    /// eviction pass over every bucket of the segment (before adding a row
    /// or before splitting).
    pub fn buckets_for_evicting_write(&self, hash: u64, mut f: impl FnMut(BucketId)) {
        let si = self.si_at(self.dir_index(hash));
        let seg = self.seg(si);
        let home = home_of(hash);
        let rows = seg.nrows as usize;
        let full = |b: usize| seg.meta[b].len as usize >= rows;
        if full(home) && full(next(home)) {
            let id = |b: usize| BucketId {
                seg: si as u32,
                bucket: b as u8,
            };
            (0..NB).for_each(|b| f(id(b)));
            return;
        }
        self.buckets_for_write(hash, f)
    }

    /// The physical bucket holding the entry for `hash` that matches `eq`,
    /// if there is one: the only bucket an in-place change of that entry,
    /// or its removal, modifies (removal moves the bucket's last entry into
    /// the hole; pulling a stash entry back and merging or shrinking
    /// segments are held back by the restructure barrier).
    pub fn bucket_of(&self, hash: u64, eq: impl FnMut(&T) -> bool) -> Option<BucketId> {
        let p = self.find(hash, eq)?;
        // SAFETY: `find` returns positions in live segments (I4).
        let seg = unsafe { &*p.seg };
        Some(BucketId {
            seg: seg.idx,
            bucket: p.b,
        })
    }

    /// Calls `f` for every physical bucket that
    /// [`scan_retain`](Self::scan_retain)`(cursor, ..)` may modify: the
    /// logical bucket's home, the next bucket (its displaced entries) and
    /// the stash buckets of that segment.
    pub fn buckets_for_scan(&self, cursor: u64, mut f: impl FnMut(BucketId)) {
        let (b, p) = split_cursor(cursor);
        if b >= B {
            return;
        }
        let si = self.si_at(self.dir_index(p));
        let id = |b: usize| BucketId {
            seg: si as u32,
            bucket: b as u8,
        };
        f(id(b));
        f(id(next(b)));
        if self.seg(si).meta[b].stash != 0 {
            (B..NB).for_each(|s| f(id(s)));
        }
    }

    /// Snapshot helper: before a write for `hash`, passes to `f` the entries
    /// of every bucket the write may touch whose version is below `version`,
    /// and raises those buckets to `version`.
    pub fn snapshot_before_write(&mut self, hash: u64, version: u32, mut f: impl FnMut(&T)) {
        let mut ids = [BucketId { seg: 0, bucket: 0 }; NB];
        let mut n = 0;
        self.buckets_for_write(hash, |id| {
            ids[n] = id;
            n += 1;
        });
        for &id in &ids[..n] {
            if self.bucket_version(id) < version {
                self.for_each_in_bucket(id, &mut f);
                self.raise_bucket_version(id, version);
            }
        }
    }

    /// Snapshot walk in hash order, one segment after the other (the rows
    /// of a segment are read together, unlike [`snapshot_step`]'s
    /// bucket-major order): from the bucket index and position in `cursor`
    /// (0 starts), passes to `f` each physical bucket of the segment at
    /// that position whose version is below `version`, until `f` returns
    /// false (stop after that bucket) or the segment ends. Returns the next
    /// cursor, 0 when the whole table was visited. `f` does not raise the
    /// versions: the caller serialises the buckets and raises them with
    /// [`raise_bucket_version`](Self::raise_bucket_version) before it
    /// changes the table.
    ///
    /// Sound under concurrent writes that follow the snapshot protocol
    /// (module docs): a segment that splits or is rebuilt after the walk
    /// passed its position holds only buckets at `version`, and a segment
    /// with buckets below `version` never merges or shrinks, so every
    /// bucket below `version` lies at or after the cursor's position.
    ///
    /// [`snapshot_step`]: Self::snapshot_step
    pub fn snapshot_walk(
        &self,
        cursor: u64,
        version: u32,
        mut f: impl FnMut(BucketId) -> bool,
    ) -> u64 {
        let (b0, p) = split_cursor(cursor);
        let si = self.si_at(self.dir_index(p));
        let seg = self.seg(si);
        let end = seg_end(p, seg.depth as u32);
        for b in b0.min(NB)..NB {
            if seg.meta[b].version < version {
                let go_on = f(BucketId {
                    seg: si as u32,
                    bucket: b as u8,
                });
                if !go_on && b + 1 < NB {
                    return ((b as u64 + 1) << 56) | (p >> 8);
                }
                if !go_on {
                    break;
                }
            }
        }
        if end >= 1u128 << 64 {
            0
        } else {
            (end as u64) >> 8
        }
    }

    /// Snapshot walk: resumable like `scan` (cursor 0 starts, 0 returned =
    /// complete), it visits physical buckets; each one whose version is below
    /// `version` has its entries passed to `f` and is raised to `version`.
    pub fn snapshot_step(&mut self, cursor: u64, version: u32, mut f: impl FnMut(&T)) -> u64 {
        let (b, p) = split_cursor(cursor);
        if b >= NB {
            return 0;
        }
        let si = self.si_at(self.dir_index(p));
        let id = BucketId {
            seg: si as u32,
            bucket: b as u8,
        };
        if self.bucket_version(id) < version {
            self.for_each_in_bucket(id, &mut f);
            self.raise_bucket_version(id, version);
        }
        advance_cursor(b, seg_end(p, self.seg(si).depth as u32), NB)
    }

    /// While a snapshot with version `v` runs, merges and shrinks (which move
    /// entries between buckets on removal) skip segments with buckets below
    /// `v`. Set 0 (the default) when no snapshot runs.
    pub fn set_restructure_barrier(&mut self, v: u32) {
        self.barrier = v;
    }

    // -------------------------------------------------------------- defrag

    /// Active-defrag hook: processes one segment per call, offering each of
    /// its allocations (the header, then each row) to `relocate` and
    /// keeping the address it returns. Returns the next cursor (0 = done;
    /// start with 0). Entry references are invalidated.
    ///
    /// `relocate` decides and moves (for active defrag: the allocator's
    /// advice, and a replacement taken outside the thread cache, so it
    /// comes from a dense slab rather than the sparse one just left).
    ///
    /// # Safety
    /// `relocate(p, layout)` returns `p` untouched, or a live block of the
    /// global allocator with `layout` holding a bit copy of `p`'s bytes,
    /// `p` having been freed.
    pub unsafe fn defrag_step(
        &mut self,
        cursor: u64,
        mut relocate: impl FnMut(*mut u8, std::alloc::Layout) -> *mut u8,
    ) -> u64 {
        let i = cursor as usize;
        if i >= self.segs.len() {
            return 0;
        }
        let p = self.segs[i];
        if !p.is_null() {
            let r = self.dir_range(self.seg(i));
            let new = relocate(p.cast::<u8>(), std::alloc::Layout::new::<Segment<T>>())
                .cast::<Segment<T>>();
            if new != p {
                // The old header is gone: every reference to it is
                // replaced right away (the list, the directory range).
                self.segs[i] = new;
                self.set_dir(r, i);
            }
            // SAFETY: forwarded from the caller's guarantee.
            unsafe { self.seg_mut(i).relocate_rows(&mut relocate) };
        }
        if i + 1 < self.segs.len() {
            i as u64 + 1
        } else {
            0
        }
    }

    /// Checks all structural invariants (for tests); panics on violation.
    #[doc(hidden)]
    pub fn check_invariants(&self) {
        assert_eq!(self.dir.len(), 1 << self.gd);
        assert!(self.next_dir.len() <= 2 * self.dir.len());
        for (i, pair) in self.next_dir.chunks(2).enumerate() {
            assert_eq!(pair.len(), 2, "next directory half-built pair");
            assert!(
                pair[0] == self.dir[i] && pair[1] == self.dir[i],
                "I5: next directory stale"
            );
        }
        let mut i = 0;
        let mut counts = [0u32; MAX_DEPTH as usize + 1];
        let mut seen = std::collections::HashSet::new();
        while i < self.dir.len() {
            let si = self.si_at(i);
            let seg = self.seg(si);
            let d = seg.depth as u32;
            assert!(d <= self.gd);
            let span = 1usize << (self.gd - d);
            assert_eq!(i % span, 0, "segment range misaligned");
            for k in i..i + span {
                assert_eq!(self.si_at(k), si, "directory range not uniform");
            }
            assert!(seen.insert(si), "segment referenced by two ranges");
            counts[d as usize] += 1;
            seg.check();
            i += span;
        }
        assert_eq!(counts, self.depth_count);
        assert_eq!(seen.len(), self.segment_count());
        let total: usize = self.segs_iter().map(|s| s.len as usize).sum();
        assert_eq!(total, self.len);
        let bytes: usize = self.segs_iter().map(|s| s.bytes()).sum();
        assert_eq!(bytes, self.seg_bytes);
        assert_eq!(self.slot_capacity(), self.capacity());
        // Every entry is reachable through its hash.
        for seg in self.segs_iter() {
            for b in 0..NB {
                for j in 0..seg.meta[b].len as usize {
                    // SAFETY: j < len.
                    let e = unsafe { seg.get(b, j) };
                    let h = (self.hasher)(e);
                    let home = seg.home_of_slot(b, j);
                    assert_eq!(home, home_of(h), "entry in wrong bucket");
                    assert_eq!(seg.meta[b].fp[j], fp_of(h), "fingerprint");
                    let si = self.si_at(self.dir_index(h));
                    assert!(std::ptr::eq(self.seg(si), seg), "entry in wrong segment");
                }
            }
        }
    }
}

/// End (exclusive) of the hash range of the depth-`d` segment holding `p`.
fn seg_end(p: u64, d: u32) -> u128 {
    let size = 1u128 << (64 - d);
    (p as u128 & !(size - 1)) + size
}

/// Cursor layout: bucket index in the top 8 bits, hash position >> 8 below.
fn split_cursor(c: u64) -> (usize, u64) {
    ((c >> 56) as usize, c << 8)
}

fn advance_cursor(b: usize, end: u128, nbuckets: usize) -> u64 {
    if end >= 1u128 << 64 {
        if b + 1 >= nbuckets {
            0
        } else {
            ((b + 1) as u64) << 56
        }
    } else {
        ((b as u64) << 56) | ((end as u64) >> 8)
    }
}

/// Builds a segment of depth `depth` holding the selected entries of `srcs`
/// (bit-copied; the sources still own them until the caller forgets them),
/// starting with `rows` rows and adding more if the entries do not fit.
/// None if they do not fit in `C_MAX` rows (the partial result is discarded).
fn build<T>(
    srcs: &[&Segment<T>],
    depth: u8,
    prefix: u64,
    rows: usize,
    select: impl Fn(usize, usize, usize) -> bool,
    pool: &mut RowPool<T>,
) -> Option<Box<Segment<T>>> {
    let mut dst = Segment::new(depth, prefix);
    while (dst.nrows as usize) < rows {
        dst.add_row(pool);
    }
    for (k, src) in srcs.iter().enumerate() {
        for b in 0..NB {
            for j in 0..src.meta[b].len as usize {
                if !select(k, b, j) {
                    continue;
                }
                let home = src.home_of_slot(b, j);
                let fp = src.meta[b].fp[j];
                match dst.place_growing(home, fp, false, pool) {
                    Some((db, dj)) => {
                        // SAFETY: source slot occupied, destination reserved;
                        // different allocations. Ownership is settled by the caller.
                        unsafe {
                            ptr::copy_nonoverlapping(src.slot_ptr(b, j), dst.slot_ptr(db, dj), 1)
                        };
                        dst.len += 1;
                    }
                    None => {
                        dst.forget_entries();
                        dst.recycle(pool);
                        return None;
                    }
                }
            }
        }
    }
    Some(dst)
}

/// Fallback for a split: keeps every selected entry in the same physical
/// bucket it had in `src`; always fits since it is a subset of `src`.
fn build_positional<T>(
    src: &Segment<T>,
    depth: u8,
    prefix: u64,
    select: impl Fn(usize, usize, usize) -> bool,
    pool: &mut RowPool<T>,
) -> Box<Segment<T>> {
    let mut dst = Segment::new(depth, prefix);
    while dst.nrows < src.nrows {
        dst.add_row(pool);
    }
    for b in 0..NB {
        for j in 0..src.meta[b].len as usize {
            if select(0, b, j) {
                let disp = src.meta[b].disp & (1 << j) != 0;
                let (db, dj) = dst.push_at(b, src.meta[b].fp[j], disp, src.home_of_slot(b, j));
                // SAFETY: as in `build`.
                unsafe { ptr::copy_nonoverlapping(src.slot_ptr(b, j), dst.slot_ptr(db, dj), 1) };
                dst.len += 1;
            }
        }
    }
    dst
}

#[cfg(test)]
mod tests;
