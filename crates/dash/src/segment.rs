//! One segment: a fixed set of buckets whose slot capacity grows one row at a time.
//!
//! Storage is slot-major: row `j` is one allocation holding slot `j` of every
//! bucket of the segment, so adding a row grows every bucket by one slot
//! without moving any entry. Bucket metadata (fingerprints, occupancy,
//! displacement bits, stash counters, version) lives in the segment header.

use std::mem::MaybeUninit;
use std::ptr;

#[cfg(not(test))]
mod geometry {
    /// Physical buckets per segment (regular + stash).
    pub const NB: usize = 56;
    /// Stash buckets per segment (the last `S` physical buckets).
    pub const S: usize = 4;
    /// Most rows (slots per bucket) a segment may have before it must split.
    pub const C_MAX: usize = 16;
}
#[cfg(test)]
mod geometry {
    // Tiny segments so unit and property tests cross many splits and merges
    // with a few hundred entries (and stay fast under Miri).
    pub const NB: usize = 16;
    pub const S: usize = 2;
    pub const C_MAX: usize = 4;
}
pub(crate) use geometry::{C_MAX, NB, S};

/// Regular (home) buckets per segment.
pub(crate) const B: usize = NB - S;

const _: () = assert!(C_MAX <= 16 && B <= 256 && S >= 1 && S <= 8 && B >= 3);
const _: () = assert!(std::mem::size_of::<Meta>() == 32);
// The production header is exactly 2 KiB (a jemalloc size class; 2,304
// bytes would be rounded up to 2,560) and a row of 32-byte entries 1,792.
#[cfg(not(test))]
const _: () = assert!(std::mem::size_of::<Segment<[u64; 4]>>() == 2048);

/// Metadata of one physical bucket. Slots `0..len` are occupied (packed).
#[derive(Clone, Copy, Default)]
#[repr(C, align(32))]
pub(crate) struct Meta {
    /// 1-byte fingerprint per slot (bits 32..40 of the hash).
    pub fp: [u8; 16],
    /// Regular bucket: bit j set = slot j holds an entry whose home is the
    /// previous bucket (it overflowed into its neighbour). Unused in stash buckets.
    pub disp: u16,
    /// Number of occupied slots.
    pub len: u8,
    /// Regular bucket: bit s set = stash bucket `B + s` holds at least one
    /// entry whose home is this bucket.
    pub stash: u8,
    /// Snapshot version (see the crate docs).
    pub version: u32,
    /// Regular bucket: fingerprints of this home's entries in the stash
    /// (`nsfp` of them), so misses skip the stash; `nsfp == SFP_OVERFLOW`
    /// means "too many, probe the stash" until the home has none there.
    /// `nsfp == 0` exactly when `stash == 0`. These 8 bytes are read as one
    /// word (see [`stash_may_hold`]).
    pub sfp: [u8; SFP],
    pub nsfp: u8,
}

const SFP: usize = 7;
const _: () = assert!(SFP == 7, "stash_may_hold reads sfp as 7 bytes");
const SFP_OVERFLOW: u8 = u8::MAX;

pub(crate) type Row<T> = [MaybeUninit<T>; NB];

/// `repr(C)`: the row pointers fill the first two cache lines and the
/// fields every insert touches (len, nrows) start the third; lookups
/// prefetch these lines while they load the bucket metadata.
#[repr(C, align(64))]
pub(crate) struct Segment<T> {
    /// `rows[j]` for `j < nrows` points to a live `Row<T>` allocation.
    /// Exactly the first two cache lines: all a read needs besides the
    /// bucket metadata.
    pub rows: [*mut MaybeUninit<T>; C_MAX],
    pub len: u32,
    /// Index in the table's segment list.
    pub idx: u32,
    pub nrows: u8,
    pub depth: u8,
    /// The top `depth` hash bits shared by all entries (right-aligned).
    pub prefix: u64,
    pub meta: [Meta; NB],
    /// Home bucket of each stash slot.
    pub stash_home: [[u8; C_MAX]; S],
}

// SAFETY: a Segment owns its rows and the `T`s in them exclusively (the raw
// pointers are never shared outside the segment), so it may move between
// threads when `T` may, and be shared when `T` may.
unsafe impl<T: Send> Send for Segment<T> {}
// SAFETY: see above; `&Segment` only hands out `&T`.
unsafe impl<T: Sync> Sync for Segment<T> {}

#[inline]
pub(crate) fn home_of(hash: u64) -> usize {
    (((hash as u32) as u64 * B as u64) >> 32) as usize
}

#[inline]
pub(crate) fn fp_of(hash: u64) -> u8 {
    // 0 marks a free slot (invariant I1), so no probe may carry it.
    let f = (hash >> 32) as u8;
    f | (f == 0) as u8
}

#[inline]
pub(crate) fn next(b: usize) -> usize {
    if b + 1 == B {
        0
    } else {
        b + 1
    }
}

#[inline]
pub(crate) fn prev(b: usize) -> usize {
    if b == 0 {
        B - 1
    } else {
        b - 1
    }
}

#[inline]
pub(crate) fn len_mask(len: u8) -> u32 {
    (1u32 << len) - 1
}

/// Whether the stash may hold an entry of this home with fingerprint `fp`:
/// one of its recorded stash fingerprints matches, or there were too many
/// to record. Branch-free (one word compare), so a miss pays one
/// predictable branch instead of a loop over a varying count.
#[inline]
pub(crate) fn stash_may_hold(m: &Meta, fp: u8) -> bool {
    const LO7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    // sfp and nsfp are adjacent: one 8-byte load (the count's byte is
    // never inside `valid`).
    let f = &m.sfp;
    let w = u64::from_le_bytes([f[0], f[1], f[2], f[3], f[4], f[5], f[6], m.nsfp]);
    let x = w ^ (fp as u64 * 0x0101_0101_0101_0101);
    // High bit of each byte set iff that byte of `x` is zero (exact: the
    // addition cannot carry into the next byte).
    let zero = !(((x & LO7) + LO7) | x) & !LO7;
    let n = m.nsfp as u32;
    let valid = if n >= 8 { 0 } else { (1u64 << (8 * n)) - 1 };
    (zero & valid != 0) | (m.nsfp == SFP_OVERFLOW)
}

/// Bit i set = `fps[i] == fp`.
#[cfg(all(target_arch = "x86_64", not(miri)))]
#[inline]
pub(crate) fn match_fp(fps: &[u8; 16], fp: u8) -> u32 {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_movemask_epi8, _mm_set1_epi8, _mm_set_epi64x};
    let lo = u64::from_le_bytes([
        fps[0], fps[1], fps[2], fps[3], fps[4], fps[5], fps[6], fps[7],
    ]);
    let hi = u64::from_le_bytes([
        fps[8], fps[9], fps[10], fps[11], fps[12], fps[13], fps[14], fps[15],
    ]);
    // SAFETY: SSE2 is part of the x86_64 baseline, so these are always available.
    unsafe {
        let v = _mm_set_epi64x(hi as i64, lo as i64);
        _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(fp as i8))) as u32
    }
}

/// Bit i set = `fps[i] == fp`.
#[cfg(any(not(target_arch = "x86_64"), miri))]
#[inline]
pub(crate) fn match_fp(fps: &[u8; 16], fp: u8) -> u32 {
    let mut m = 0u32;
    for (i, &f) in fps.iter().enumerate() {
        m |= ((f == fp) as u32) << i;
    }
    m
}

pub(crate) fn row_bytes<T>() -> usize {
    std::mem::size_of::<Row<T>>()
}

pub(crate) fn segment_bytes<T>() -> usize {
    std::mem::size_of::<Segment<T>>()
}

/// Starts loading the row-pointer line while the bucket metadata loads.
#[inline(always)]
fn prefetch<P>(p: *const P) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: prefetching is a hint and never faults, whatever the address.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p as *const i8) };
    }
    #[cfg(any(not(target_arch = "x86_64"), miri))]
    let _ = p;
}

/// Rows are cache-line aligned so that no entry of a power-of-two size
/// straddles two cache lines.
fn row_layout<T>() -> std::alloc::Layout {
    std::alloc::Layout::new::<Row<T>>()
        .align_to(64)
        .unwrap_or_else(|_| unreachable!())
}

fn alloc_row<T>() -> *mut MaybeUninit<T> {
    let layout = row_layout::<T>();
    if layout.size() == 0 {
        return ptr::NonNull::<MaybeUninit<T>>::dangling().as_ptr();
    }
    // SAFETY: the layout has a non-zero size.
    let p = unsafe { std::alloc::alloc(layout) };
    if p.is_null() {
        std::alloc::handle_alloc_error(layout);
    }
    p.cast::<MaybeUninit<T>>()
}

/// # Safety
/// `p` came from `alloc_row::<T>()` and is not used afterwards.
unsafe fn free_row<T>(p: *mut MaybeUninit<T>) {
    let layout = row_layout::<T>();
    if layout.size() != 0 {
        // SAFETY: per the contract `p` was allocated with this layout.
        unsafe { std::alloc::dealloc(p.cast::<u8>(), layout) };
    }
}

/// Rows freed by splits, merges and shrinks, kept for the next segment
/// that needs rows: a split frees the parent's 16 rows just after building
/// children that need ~18, so without the pool every split paid ~34 calls
/// into malloc/free (and their coalescing) for 2 KiB blocks.
pub(crate) struct RowPool<T> {
    rows: Vec<*mut MaybeUninit<T>>,
}

/// Most rows the pool keeps (one split's worth and then some).
const POOL_MAX: usize = 2 * C_MAX;

impl<T> Default for RowPool<T> {
    fn default() -> Self {
        RowPool { rows: Vec::new() }
    }
}

impl<T> RowPool<T> {
    fn take(&mut self) -> *mut MaybeUninit<T> {
        self.rows.pop().unwrap_or_else(alloc_row::<T>)
    }

    /// # Safety
    /// `p` came from `alloc_row::<T>()`, holds no live entry and is not used
    /// by the caller afterwards.
    unsafe fn give(&mut self, p: *mut MaybeUninit<T>) {
        if self.rows.len() < POOL_MAX {
            if self.rows.capacity() == 0 {
                self.rows.reserve_exact(POOL_MAX);
            }
            self.rows.push(p);
        } else {
            // SAFETY: per the contract.
            unsafe { free_row(p) };
        }
    }

    /// Bytes held by pooled rows.
    pub fn bytes(&self) -> usize {
        self.rows.len() * row_bytes::<T>()
    }

    /// Frees every pooled row (and the pool's own list).
    pub fn release(&mut self) {
        for p in self.rows.drain(..) {
            // SAFETY: pooled rows are live, empty allocations from `alloc_row`
            // owned only by the pool.
            unsafe { free_row(p) };
        }
        self.rows = Vec::new();
    }
}

impl<T> Drop for RowPool<T> {
    fn drop(&mut self) {
        self.release();
    }
}

// SAFETY: the pool owns its (empty) rows exclusively; no `T` lives in them.
unsafe impl<T> Send for RowPool<T> {}
// SAFETY: `&RowPool` exposes nothing but a byte count.
unsafe impl<T> Sync for RowPool<T> {}

impl<T> Segment<T> {
    pub fn new(depth: u8, prefix: u64) -> Box<Self> {
        Box::new(Segment {
            rows: [ptr::null_mut(); C_MAX],
            len: 0,
            nrows: 0,
            depth,
            idx: u32::MAX,
            prefix,
            meta: [Meta::default(); NB],
            stash_home: [[0; C_MAX]; S],
        })
    }

    /// Bytes this segment has allocated (header + rows).
    pub fn bytes(&self) -> usize {
        segment_bytes::<T>() + self.nrows as usize * row_bytes::<T>()
    }

    pub fn capacity(&self) -> usize {
        self.nrows as usize * NB
    }

    /// Adds one row (one more slot in every bucket). Returns false at `C_MAX`.
    pub fn add_row(&mut self, pool: &mut RowPool<T>) -> bool {
        let c = self.nrows as usize;
        if c == C_MAX {
            return false;
        }
        self.rows[c] = pool.take();
        self.nrows += 1;
        true
    }

    #[inline]
    pub fn slot_ptr(&self, b: usize, j: usize) -> *mut T {
        debug_assert!(b < NB && j < self.nrows as usize);
        // SAFETY: j < nrows <= C_MAX (callers pass occupied or reserved
        // slots); the pointer is only computed here, not dereferenced.
        unsafe { self.rows.get_unchecked(j) }
            .wrapping_add(b)
            .cast::<T>()
    }

    /// # Safety
    /// `j < meta[b].len` (the slot is occupied).
    #[inline]
    pub unsafe fn get(&self, b: usize, j: usize) -> &T {
        debug_assert!(j < self.meta[b].len as usize);
        // SAFETY: occupied slots hold initialised `T`s (invariant I1), and the
        // row outlives the returned borrow of `self`.
        unsafe { &*self.slot_ptr(b, j) }
    }

    /// # Safety
    /// `j < meta[b].len` (the slot is occupied).
    #[inline]
    pub unsafe fn get_mut(&mut self, b: usize, j: usize) -> &mut T {
        debug_assert!(j < self.meta[b].len as usize);
        // SAFETY: as in `get`, and `&mut self` guarantees exclusivity.
        unsafe { &mut *self.slot_ptr(b, j) }
    }

    /// Home bucket of the entry in physical slot (b, j).
    #[inline]
    pub fn home_of_slot(&self, b: usize, j: usize) -> usize {
        if b >= B {
            self.stash_home[b - B][j] as usize
        } else if self.meta[b].disp & (1 << j) != 0 {
            prev(b)
        } else {
            b
        }
    }

    /// Finds an entry by home bucket, fingerprint and equality.
    /// `WRITE`: the caller will insert or remove next, so the line with
    /// `len`/`nrows` is prefetched too; reads prefetch only the two lines of
    /// row pointers.
    #[inline]
    pub fn find<const WRITE: bool>(
        &self,
        home: usize,
        fp: u8,
        mut eq: impl FnMut(&T) -> bool,
    ) -> Option<(usize, usize)> {
        let base = (self as *const Self).cast::<u8>();
        prefetch(base);
        prefetch(base.wrapping_add(64));
        if WRITE {
            prefetch(base.wrapping_add(128));
        }
        let nb = next(home);
        let m = &self.meta[home];
        // Candidates of home (bits 0..16) and of the neighbour (bits 16..32)
        // in one mask, so a hit costs one predictable loop. The neighbour's
        // metadata is always read: its `disp` bits already select exactly
        // this home's entries, and branching on whether there are any
        // mispredicted often enough to cost ~20% of a miss at 1M entries
        // (docs/BENCHMARKS.md); at 10M the extra line made no measurable
        // difference.
        let m2 = &self.meta[nb];
        // Free slots hold fingerprint 0, which `fp` never is, so no length
        // mask is needed (I1).
        let mut bits = match_fp(&m.fp, fp) & !(m.disp as u32);
        bits |= (match_fp(&m2.fp, fp) & (m2.disp as u32)) << 16;
        while bits != 0 {
            let k = bits.trailing_zeros() as usize;
            let (b, j) = if k < 16 { (home, k) } else { (nb, k - 16) };
            // SAFETY: j < len of bucket b by the masks.
            if eq(unsafe { self.get(b, j) }) {
                return Some((b, j));
            }
            bits &= bits - 1;
        }
        if stash_may_hold(m, fp) {
            return self.find_in_stash(home, fp, eq);
        }
        None
    }

    #[inline(never)]
    fn find_in_stash(
        &self,
        home: usize,
        fp: u8,
        mut eq: impl FnMut(&T) -> bool,
    ) -> Option<(usize, usize)> {
        let mut mask = self.meta[home].stash;
        while mask != 0 {
            let s = B + mask.trailing_zeros() as usize;
            mask &= mask - 1;
            let m = &self.meta[s];
            let mut bits = match_fp(&m.fp, fp) & len_mask(m.len);
            while bits != 0 {
                let j = bits.trailing_zeros() as usize;
                // SAFETY: j < len by the mask.
                if self.stash_home[s - B][j] as usize == home && eq(unsafe { self.get(s, j) }) {
                    return Some((s, j));
                }
                bits &= bits - 1;
            }
        }
        None
    }

    /// Reserves the next free slot of bucket `b` (caller writes the entry).
    #[inline]
    fn push(&mut self, b: usize, fp: u8, disp: bool) -> (usize, usize) {
        let m = &mut self.meta[b];
        let j = m.len as usize;
        debug_assert!(j < self.nrows as usize);
        m.fp[j] = fp;
        if disp {
            m.disp |= 1 << j;
        } else {
            m.disp &= !(1 << j);
        }
        m.len += 1;
        (b, j)
    }

    /// Removes slot (b, j) without dropping its entry (the caller has moved
    /// it out): the last slot of the bucket moves into the hole.
    pub fn unlink(&mut self, b: usize, j: usize) {
        let last = self.meta[b].len as usize - 1;
        if b >= B {
            let home = self.stash_home[b - B][j];
            let others = (0..=last).any(|k| k != j && self.stash_home[b - B][k] == home);
            let fp = self.meta[b].fp[j];
            let hm = &mut self.meta[home as usize];
            if !others {
                hm.stash &= !(1 << (b - B));
            }
            if hm.stash == 0 {
                hm.nsfp = 0;
            } else if hm.nsfp != SFP_OVERFLOW {
                let n = hm.nsfp as usize;
                if let Some(k) = hm.sfp[..n].iter().position(|&x| x == fp) {
                    hm.sfp[k] = hm.sfp[n - 1];
                    hm.nsfp -= 1;
                }
            }
        }
        if j != last {
            // SAFETY: both slots are in bounds and distinct; `last` is occupied,
            // and after the copy its bits are owned by slot j (slot `last` is
            // marked free below, so the entry is not duplicated).
            unsafe { ptr::copy_nonoverlapping(self.slot_ptr(b, last), self.slot_ptr(b, j), 1) };
            let m = &mut self.meta[b];
            m.fp[j] = m.fp[last];
            let bit = (m.disp >> last) & 1;
            m.disp = (m.disp & !(1 << j)) | (bit << j);
            if b >= B {
                self.stash_home[b - B][j] = self.stash_home[b - B][last];
            }
        }
        let m = &mut self.meta[b];
        m.fp[last] = 0;
        m.disp &= !(1 << last);
        m.len -= 1;
    }

    /// After a slot of regular bucket `b` was freed: moves one stash entry
    /// whose home is `b` (or else one whose home is `prev(b)`, as a
    /// displaced entry) into `b`. Entries only enter the stash when both of
    /// their buckets are full, and nothing else brings them back, so under
    /// churn (a cache at maxmemory) the stash fills up and inserts fail, and
    /// the segment grows a row, at a lower fill than in fresh growth. The
    /// moved entry stays in its logical bucket (home, neighbour, stash slots
    /// of that home), which is what a scan visits as one unit.
    pub fn refill_from_stash(&mut self, b: usize) {
        debug_assert!(b < B);
        if self.meta[b].len as usize >= self.nrows as usize {
            return;
        }
        for (home, disp) in [(b, false), (prev(b), true)] {
            let mask = self.meta[home].stash;
            if mask == 0 {
                continue;
            }
            let s = B + mask.trailing_zeros() as usize;
            let Some(j) = (0..self.meta[s].len as usize)
                .find(|&k| self.stash_home[s - B][k] as usize == home)
            else {
                continue;
            };
            let fp = self.meta[s].fp[j];
            let (tb, tj) = self.push(b, fp, disp);
            // SAFETY: the source is occupied, the destination freshly
            // reserved, distinct slots; `unlink` then marks the source free
            // without dropping, so the entry is owned once.
            unsafe { ptr::copy_nonoverlapping(self.slot_ptr(s, j), self.slot_ptr(tb, tj), 1) };
            self.unlink(s, j);
            return;
        }
    }

    /// Moves the entry in regular bucket slot (b, j) into bucket `to_b`
    /// and reserves (b, j) for a new entry with fingerprint `fp` (displaced
    /// iff `disp`). The hole is reused in place rather than unlinked, which
    /// would move the bucket's last entry into it: one cold entry line less.
    fn displace(&mut self, b: usize, j: usize, to_b: usize, to_disp: bool, fp: u8, disp: bool) {
        debug_assert!(b < B && to_b < B && j < self.meta[b].len as usize);
        let old_fp = self.meta[b].fp[j];
        let (tb, tj) = self.push(to_b, old_fp, to_disp);
        // SAFETY: source occupied, destination freshly reserved, distinct
        // slots; the source slot is then reused for the caller's new entry
        // (the caller writes it), so the moved entry is owned once.
        unsafe { ptr::copy_nonoverlapping(self.slot_ptr(b, j), self.slot_ptr(tb, tj), 1) };
        let m = &mut self.meta[b];
        m.fp[j] = fp;
        m.disp = (m.disp & !(1 << j)) | ((disp as u16) << j);
    }

    /// Reserves a slot for an entry with this home and fingerprint, or returns
    /// None if home, neighbour, one displacement and the stash are all full.
    /// `balanced`: put the entry in the less loaded of home/neighbour
    /// (inserts); otherwise home first (bulk rebuilds in home order).
    pub fn place(&mut self, home: usize, fp: u8, balanced: bool) -> Option<(usize, usize)> {
        let c = self.nrows as usize;
        let nb = next(home);
        let la = self.meta[home].len as usize;
        let lb = self.meta[nb].len as usize;
        if la < c && (!balanced || la <= lb || lb >= c) {
            return Some(self.push(home, fp, false));
        }
        if lb < c {
            return Some(self.push(nb, fp, true));
        }
        if c == 0 {
            return None;
        }
        // Displacement 1: an entry living at home in `nb` moves on to its own neighbour.
        let nn = next(nb);
        if (self.meta[nn].len as usize) < c {
            let m = &self.meta[nb];
            let cand = len_mask(m.len) & !(m.disp as u32);
            if cand != 0 {
                let j = cand.trailing_zeros() as usize;
                self.displace(nb, j, nn, true, fp, true);
                return Some((nb, j));
            }
        }
        // Displacement 2: an entry displaced into `home` goes back to its own home.
        let pp = prev(home);
        if (self.meta[pp].len as usize) < c {
            let m = &self.meta[home];
            let cand = len_mask(m.len) & (m.disp as u32);
            if cand != 0 {
                let j = cand.trailing_zeros() as usize;
                self.displace(home, j, pp, false, fp, false);
                return Some((home, j));
            }
        }
        // Stash: the least loaded stash bucket.
        let mut best = B;
        for s in B + 1..NB {
            if self.meta[s].len < self.meta[best].len {
                best = s;
            }
        }
        if (self.meta[best].len as usize) < c {
            let (b, j) = self.push(best, fp, false);
            self.stash_home[best - B][j] = home as u8;
            self.note_stashed(home, best, fp);
            return Some((b, j));
        }
        None
    }

    /// Like `place`, but adds rows (up to `C_MAX`) until the entry fits.
    pub fn place_growing(
        &mut self,
        home: usize,
        fp: u8,
        balanced: bool,
        pool: &mut RowPool<T>,
    ) -> Option<(usize, usize)> {
        loop {
            if let Some(p) = self.place(home, fp, balanced) {
                return Some(p);
            }
            if !self.add_row(pool) {
                return None;
            }
        }
    }

    /// Reserves slot in physical bucket `b` exactly (positional rebuild).
    pub fn push_at(&mut self, b: usize, fp: u8, disp: bool, home: usize) -> (usize, usize) {
        let p = self.push(b, fp, disp);
        if b >= B {
            self.stash_home[b - B][p.1] = home as u8;
            self.note_stashed(home, b, fp);
        }
        p
    }

    /// Records that an entry of `home` with fingerprint `fp` went to stash bucket `s`.
    fn note_stashed(&mut self, home: usize, s: usize, fp: u8) {
        let hm = &mut self.meta[home];
        hm.stash |= 1 << (s - B);
        if hm.nsfp != SFP_OVERFLOW {
            if (hm.nsfp as usize) < SFP {
                hm.sfp[hm.nsfp as usize] = fp;
                hm.nsfp += 1;
            } else {
                hm.nsfp = SFP_OVERFLOW;
            }
        }
    }

    /// Marks every slot free without dropping entries (their bits were moved
    /// elsewhere), so dropping the segment only frees memory.
    pub fn forget_entries(&mut self) {
        for m in self.meta.iter_mut() {
            m.len = 0;
            m.fp = [0; 16];
            m.disp = 0;
            m.stash = 0;
            m.nsfp = 0;
        }
        self.len = 0;
    }

    /// Frees rows beyond what is needed (all rows must be empty past `keep`).
    pub fn free_rows_from(&mut self, keep: usize, pool: &mut RowPool<T>) {
        while self.nrows as usize > keep {
            let c = self.nrows as usize - 1;
            debug_assert!(self.meta.iter().all(|m| (m.len as usize) <= c));
            // SAFETY: rows[c] is a live row from alloc_row and no slot in it is
            // occupied (all bucket lens <= c); it is nulled right after.
            unsafe { pool.give(self.rows[c]) };
            self.rows[c] = ptr::null_mut();
            self.nrows -= 1;
        }
    }

    /// Drops a segment whose entries were moved out (`forget_entries`),
    /// handing its rows to the pool.
    pub fn recycle(mut self: Box<Self>, pool: &mut RowPool<T>) {
        debug_assert_eq!(self.len, 0);
        self.free_rows_from(0, pool);
    }

    pub fn max_version(&self) -> u32 {
        self.meta.iter().map(|m| m.version).max().unwrap_or(0)
    }

    pub fn min_version(&self) -> u32 {
        self.meta.iter().map(|m| m.version).min().unwrap_or(0)
    }

    pub fn set_all_versions(&mut self, v: u32) {
        for m in self.meta.iter_mut() {
            m.version = v;
        }
    }

    /// Reallocates the rows for which `should_move` says so, copying the
    /// slots. Returns the number of bytes moved.
    /// Offers every row to `relocate` (see [`crate::DashTable::defrag_step`]
    /// for its contract) and keeps the address it returns. Returns the
    /// bytes of the rows that moved.
    ///
    /// # Safety
    /// `relocate(p, layout)` returns `p` untouched, or a live block of the
    /// global allocator with `layout` holding a bit copy of `p`'s bytes,
    /// `p` having been freed.
    pub unsafe fn relocate_rows(
        &mut self,
        relocate: &mut impl FnMut(*mut u8, std::alloc::Layout) -> *mut u8,
    ) -> usize {
        let layout = row_layout::<T>();
        if layout.size() == 0 {
            return 0;
        }
        let mut moved = 0;
        for j in 0..self.nrows as usize {
            let old = self.rows[j];
            let new = relocate(old.cast::<u8>(), layout).cast::<MaybeUninit<T>>();
            if new != old {
                // The entries were copied bit for bit with the row (no
                // entry was dropped or duplicated: the old block is gone).
                self.rows[j] = new;
                moved += row_bytes::<T>();
            }
        }
        moved
    }

    /// Checks the structural invariants (tests / debug).
    pub fn check(&self) {
        let c = self.nrows as usize;
        let mut total = 0usize;
        let mut stash_masks = [0u8; B];
        for b in 0..NB {
            let m = &self.meta[b];
            assert!(m.len as usize <= c, "bucket over capacity");
            for j in m.len as usize..16 {
                assert_eq!(m.fp[j], 0, "free slot with a fingerprint");
                assert_eq!(m.disp & (1 << j), 0, "free slot marked displaced");
            }
            total += m.len as usize;
            if b >= B {
                for j in 0..m.len as usize {
                    stash_masks[self.stash_home[b - B][j] as usize] |= 1 << (b - B);
                }
            }
        }
        for (b, &m) in stash_masks.iter().enumerate() {
            assert_eq!(self.meta[b].stash, m, "stash mask");
            let hm = &self.meta[b];
            assert_eq!(hm.stash == 0, hm.nsfp == 0, "stash fingerprint count");
            if hm.nsfp != SFP_OVERFLOW {
                let mut want: Vec<u8> = Vec::new();
                for s in B..NB {
                    for j in 0..self.meta[s].len as usize {
                        if self.stash_home[s - B][j] as usize == b {
                            want.push(self.meta[s].fp[j]);
                        }
                    }
                }
                let mut got = hm.sfp[..hm.nsfp as usize].to_vec();
                want.sort_unstable();
                got.sort_unstable();
                assert_eq!(got, want, "stash fingerprints");
            }
        }
        assert_eq!(total, self.len as usize, "segment len");
        for j in 0..c {
            assert!(!self.rows[j].is_null());
        }
    }
}

impl<T> Drop for Segment<T> {
    fn drop(&mut self) {
        for b in 0..NB {
            for j in 0..self.meta[b].len as usize {
                // SAFETY: occupied slot, dropped exactly once (len reset below).
                unsafe { ptr::drop_in_place(self.slot_ptr(b, j)) };
            }
            self.meta[b].len = 0;
        }
        for j in 0..self.nrows as usize {
            // SAFETY: rows[j] is a live row; its entries were dropped above.
            unsafe { free_row(self.rows[j]) };
        }
        self.nrows = 0;
    }
}
