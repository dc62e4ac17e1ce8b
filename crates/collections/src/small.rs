//! Small collections: a listpack plus a compact side index.
//!
//! Redis finds a field in a listpack hash by comparing it with every field.
//! Here each small value keeps, beside its listpack block, a [`KeyIndex`]:
//! one fingerprint byte and one `u32` byte offset per *key entry* (hash
//! field, set member, zset member), in listpack order. A lookup hashes the
//! query once, scans the fingerprint bytes 16 at a time (SIMD compare) and
//! only decodes the entries whose fingerprint matches (1/256 false
//! positives), so a 500-field lookup costs ~32 vector compares and usually
//! one comparison.
//!
//! Invariants (checked by `check()` in tests):
//! * the listpack holds `stride` entries per element (`stride` = 2 for hash
//!   field/value and zset member/score, 1 for sets); key entry `k` is entry
//!   `k * stride`;
//! * when present, `index.offs[k]` is the byte offset of key entry `k` and
//!   `index.fps[k]` is `fingerprint(hash of its canonical value)`, where an
//!   integer entry hashes as [`hash_int`] and a string entry as
//!   [`hash_canonical`] (so `"12"` stored as integer 12 and the query `"12"`
//!   agree);
//! * the index exists iff the element count reached [`INDEX_MIN`] since it
//!   was last below [`INDEX_DROP`] (hysteresis); tiny values pay nothing;
//! * the index bytes count in `heap_bytes()`; they are updated on every
//!   change in O(n) (a listpack change is O(n) memmove anyway) and rebuilt
//!   from the block when adopting serialized bytes.
//!
//! Zset members are kept sorted by (score, member bytes) as in Redis; scores
//! are written like Redis (`integer` encoding when the score is a whole
//! number, otherwise the shortest round-trip decimal text).

use crate::block::PackBlock;
use crate::hash::{hash_canonical, hash_int};
use crate::listpack::{string_to_i64, Enc, InvalidListpack, Listpack, LpValue};
use std::cmp::Ordering;

/// Element count from which a side index is kept.
pub const INDEX_MIN: usize = 16;
/// Element count below which an existing index is dropped.
pub const INDEX_DROP: usize = 8;

#[inline]
fn fp_of(h: u64) -> u8 {
    (h >> 56) as u8
}

#[inline]
fn entry_fp(v: LpValue<'_>) -> u8 {
    fp_of(match v {
        LpValue::Int(i) => hash_int(i),
        LpValue::Str(s) => hash_canonical(s),
    })
}

#[inline]
fn entry_matches(v: LpValue<'_>, want: Enc<'_>, raw: &[u8]) -> bool {
    match (want, v) {
        (Enc::Int(a), LpValue::Int(b)) => a == b,
        (_, LpValue::Str(b)) => b == raw,
        (Enc::Str(_), LpValue::Int(_)) => false,
    }
}

/// Per-key fingerprints and offsets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeyIndex {
    fps: Vec<u8>,
    offs: Vec<u32>,
}

impl KeyIndex {
    fn heap_bytes(&self) -> usize {
        crate::mem::block_bytes(self.fps.capacity())
            + crate::mem::block_bytes(self.offs.capacity() * 4)
    }

    fn shift_after(&mut self, k: usize, delta: isize) {
        if delta == 0 {
            return;
        }
        for o in &mut self.offs[k..] {
            *o = (*o as isize + delta) as u32;
        }
    }

    /// Calls `hit(k)` for every k whose fingerprint equals `fp`, stopping at
    /// the first `true`. Compares 16 fingerprints per step (the loop is
    /// written so the compiler turns it into one SIMD compare + movemask).
    #[inline]
    fn probe(&self, fp: u8, mut hit: impl FnMut(usize) -> bool) -> Option<usize> {
        // Candidates are rare (1/256 per entry): keep the hot loop free of
        // the comparison closure's state by calling it through `dyn`.
        probe_fps(&self.fps, fp, &mut hit)
    }
}

fn probe_fps(fps: &[u8], fp: u8, hit: &mut dyn FnMut(usize) -> bool) -> Option<usize> {
    let n = fps.len();
    let mut base = 0;
    while base + 16 <= n {
        let c: &[u8; 16] = fps[base..base + 16].try_into().unwrap();
        #[cfg(target_arch = "x86_64")]
        // SAFETY: SSE2 is part of the x86_64 baseline, so the
        // `target_feature(enable = "sse2")` function can always run.
        // Measured win: see docs/BENCHMARKS.md (portable loop 330-410 ns
        // per 500-field miss).
        let m = unsafe { match16(c, fp) };
        #[cfg(not(target_arch = "x86_64"))]
        let m = match16(c, fp);
        if m != 0 {
            let mut m = m as u32;
            while m != 0 {
                let i = base + m.trailing_zeros() as usize;
                if hit(i) {
                    return Some(i);
                }
                m &= m - 1;
            }
        }
        base += 16;
    }
    (base..n).find(|&i| fps[i] == fp && hit(i))
}

/// Bit j set iff `c[j] == fp`.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "sse2")]
fn match16(c: &[u8; 16], fp: u8) -> u16 {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_movemask_epi8, _mm_set1_epi8, _mm_set_epi64x};
    let lo = i64::from_le_bytes(c[..8].try_into().unwrap());
    let hi = i64::from_le_bytes(c[8..].try_into().unwrap());
    let v = _mm_set_epi64x(hi, lo);
    _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(fp as i8))) as u16
}

/// Bit j set iff `c[j] == fp` (portable fallback).
#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn match16(c: &[u8; 16], fp: u8) -> u16 {
    let mut m = 0u16;
    for (j, &b) in c.iter().enumerate() {
        m |= ((b == fp) as u16) << j;
    }
    m
}

/// A listpack whose key entries (every `stride`-th) are indexed.
#[derive(Clone, Debug, PartialEq, Eq)]
struct IndexedPack {
    lp: Listpack,
    stride: usize,
    index: Option<Box<KeyIndex>>,
}

impl IndexedPack {
    fn new(stride: usize) -> Self {
        IndexedPack {
            lp: Listpack::new(),
            stride,
            index: None,
        }
    }

    fn from_listpack(lp: Listpack, stride: usize) -> Result<Self, InvalidListpack> {
        if !lp.len().is_multiple_of(stride) {
            return Err(InvalidListpack("odd number of entries"));
        }
        let mut p = IndexedPack {
            lp,
            stride,
            index: None,
        };
        p.maybe_build();
        Ok(p)
    }

    fn keys(&self) -> usize {
        self.lp.len() / self.stride
    }

    fn heap_bytes(&self) -> usize {
        self.lp.heap_bytes()
            + self.index.as_ref().map_or(0, |i| {
                crate::mem::block_bytes(std::mem::size_of::<KeyIndex>()) + i.heap_bytes()
            })
    }

    fn build(&mut self) {
        let n = self.keys();
        let mut ix = KeyIndex {
            fps: Vec::with_capacity(n),
            offs: Vec::with_capacity(n),
        };
        let mut off = self.lp.first_offset();
        for _ in 0..n {
            let (v, mut next) = self.lp.entry_at(off);
            ix.fps.push(entry_fp(v));
            ix.offs.push(off as u32);
            for _ in 1..self.stride {
                next = self.lp.entry_at(next).1;
            }
            off = next;
        }
        self.index = Some(Box::new(ix));
    }

    fn maybe_build(&mut self) {
        let n = self.keys();
        if self.index.is_none() && n >= INDEX_MIN {
            self.build();
        } else if self.index.is_some() && n < INDEX_DROP {
            self.index = None;
        }
    }

    /// Byte offset of key entry `k`.
    fn key_offset(&self, k: usize) -> usize {
        match &self.index {
            Some(ix) => ix.offs[k] as usize,
            None => self.lp.seek((k * self.stride) as isize).unwrap(),
        }
    }

    /// Find key `s`: (key number, byte offset).
    #[inline]
    fn find(&self, s: &[u8]) -> Option<(usize, usize)> {
        let want = Enc::of(s);
        match &self.index {
            Some(ix) => {
                let fp = fp_of(match want {
                    Enc::Int(v) => hash_int(v),
                    Enc::Str(b) => crate::hash::hash_bytes(b),
                });
                let k = ix.probe(fp, |k| {
                    entry_matches(self.lp.entry_at(ix.offs[k] as usize).0, want, s)
                })?;
                Some((k, ix.offs[k] as usize))
            }
            None => {
                let mut off = self.lp.first_offset();
                for k in 0..self.keys() {
                    let (v, mut next) = self.lp.entry_at(off);
                    if entry_matches(v, want, s) {
                        return Some((k, off));
                    }
                    for _ in 1..self.stride {
                        next = self.lp.entry_at(next).1;
                    }
                    off = next;
                }
                None
            }
        }
    }

    /// Insert an element (key + `stride-1` more entries) as key number `k`
    /// at byte offset `off`.
    fn insert_element(&mut self, k: usize, off: usize, entries: &[Enc<'_>]) {
        debug_assert_eq!(entries.len(), self.stride);
        let mut o = off;
        for e in entries {
            o += self.lp.insert_enc_at_offset(o, *e);
        }
        let added = (o - off) as isize;
        if let Some(ix) = &mut self.index {
            let fp = entry_fp(self.lp.entry_at(off).0);
            ix.fps.insert(k, fp);
            ix.offs.insert(k, off as u32);
            ix.shift_after(k + 1, added);
        }
        self.maybe_build();
    }

    fn remove_element(&mut self, k: usize, off: usize) {
        let removed = self.lp.delete_at_offset(off, self.stride) as isize;
        if let Some(ix) = &mut self.index {
            ix.fps.remove(k);
            ix.offs.remove(k);
            ix.shift_after(k, -removed);
            if ix.fps.capacity() > 2 * ix.fps.len() + 16 {
                ix.fps.shrink_to_fit();
                ix.offs.shrink_to_fit();
            }
        }
        self.maybe_build();
    }

    /// Replace entry `j` (1..stride) of key `k`'s element.
    fn replace_in_element(&mut self, k: usize, off: usize, j: usize, e: Enc<'_>) {
        let mut o = off;
        for _ in 0..j {
            o = self.lp.entry_at(o).1;
        }
        let delta = self.lp.replace_enc_at_offset(o, e);
        if let Some(ix) = &mut self.index {
            ix.shift_after(k + 1, delta);
        }
    }

    #[cfg(test)]
    fn check(&self) {
        self.lp.validate().unwrap();
        assert_eq!(self.lp.len() % self.stride, 0);
        let n = self.keys();
        if n >= INDEX_MIN {
            assert!(self.index.is_some());
        }
        if n < INDEX_DROP {
            assert!(self.index.is_none());
        }
        if let Some(ix) = &self.index {
            let mut fresh = self.clone();
            fresh.build();
            assert_eq!(fresh.index.as_ref().unwrap(), ix);
            assert_eq!(ix.fps.len(), n);
        }
    }
}

/// Iterator over `(key, value)` entry pairs.
pub struct PairIter<'a>(crate::listpack::Iter<'a>);

impl<'a> Iterator for PairIter<'a> {
    type Item = (LpValue<'a>, LpValue<'a>);
    fn next(&mut self) -> Option<Self::Item> {
        Some((self.0.next()?, self.0.next()?))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.0.len() / 2;
        (n, Some(n))
    }
}

impl DoubleEndedIterator for PairIter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        let v = self.0.next_back()?;
        let k = self.0.next_back()?;
        Some((k, v))
    }
}

impl ExactSizeIterator for PairIter<'_> {}

// ---------------------------------------------------------------- hash

/// Small hash: field/value pairs in a listpack (Redis `listpack` encoding).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListpackHash(IndexedPack);

impl Default for ListpackHash {
    fn default() -> Self {
        Self::new()
    }
}

impl ListpackHash {
    pub fn new() -> Self {
        ListpackHash(IndexedPack::new(2))
    }

    /// Adopt a listpack of field/value pairs (e.g. loaded from RDB).
    pub fn from_listpack(lp: Listpack) -> Result<Self, InvalidListpack> {
        IndexedPack::from_listpack(lp, 2).map(ListpackHash)
    }

    /// The underlying Redis-format block.
    pub fn listpack(&self) -> &Listpack {
        &self.0.lp
    }

    pub fn into_listpack(self) -> Listpack {
        self.0.lp
    }

    /// Number of fields.
    pub fn len(&self) -> usize {
        self.0.keys()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes allocated: listpack capacity + side index.
    pub fn heap_bytes(&self) -> usize {
        self.0.heap_bytes()
    }

    pub fn get(&self, field: &[u8]) -> Option<LpValue<'_>> {
        let (_, off) = self.0.find(field)?;
        let next = self.0.lp.entry_at(off).1;
        Some(self.0.lp.entry_at(next).0)
    }

    pub fn contains(&self, field: &[u8]) -> bool {
        self.0.find(field).is_some()
    }

    /// Set `field` to `value`; true if the field is new.
    pub fn insert(&mut self, field: &[u8], value: &[u8]) -> bool {
        match self.0.find(field) {
            Some((k, off)) => {
                self.0.replace_in_element(k, off, 1, Enc::of(value));
                false
            }
            None => {
                let k = self.0.keys();
                let off = self.0.lp.end_offset();
                self.0
                    .insert_element(k, off, &[Enc::of(field), Enc::of(value)]);
                true
            }
        }
    }

    /// Remove `field`; true if it existed.
    pub fn remove(&mut self, field: &[u8]) -> bool {
        match self.0.find(field) {
            Some((k, off)) => {
                self.0.remove_element(k, off);
                true
            }
            None => false,
        }
    }

    /// The `i`-th pair in listpack order (for HRANDFIELD).
    pub fn pair_at(&self, i: usize) -> Option<(LpValue<'_>, LpValue<'_>)> {
        if i >= self.len() {
            return None;
        }
        let off = self.0.key_offset(i);
        let (f, next) = self.0.lp.entry_at(off);
        Some((f, self.0.lp.entry_at(next).0))
    }

    /// Pairs in insertion order (both directions).
    pub fn iter(&self) -> PairIter<'_> {
        PairIter(self.0.lp.iter())
    }

    /// Whether a side index is currently kept.
    pub fn has_index(&self) -> bool {
        self.0.index.is_some()
    }
}

// ---------------------------------------------------------- packed hash

/// Small hash below [`INDEX_MIN`] fields: field/value pairs in one
/// [`PackBlock`] (Redis `listpack` encoding, without a side index: below
/// 16 fields a scan of the entries is as fast as a fingerprint probe).
///
/// The keyspace stores the block's pointer directly in the value cell, so
/// such a hash costs its block and nothing else. [`crate::HashValue`] moves
/// it to a [`ListpackHash`] (indexed) when it reaches [`INDEX_MIN`] fields
/// and back when a `ListpackHash` drops below [`INDEX_DROP`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PackHash(PackBlock);

impl PackHash {
    pub fn new() -> Self {
        PackHash(PackBlock::new())
    }

    /// Copies the pairs of an indexed listpack hash.
    pub fn from_listpack_hash(h: &ListpackHash) -> Self {
        PackHash(PackBlock::from_listpack(h.listpack()))
    }

    /// The same pairs as an indexed listpack hash.
    pub fn to_listpack_hash(&self) -> ListpackHash {
        ListpackHash::from_listpack(self.0.to_listpack()).expect("even entry count")
    }

    /// The block (Redis listpack bytes without the terminator).
    pub fn block(&self) -> &PackBlock {
        &self.0
    }

    /// Number of fields.
    #[inline]
    pub fn len(&self) -> usize {
        self.0.len() / 2
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Bytes allocated: the block's size class.
    #[inline]
    pub fn heap_bytes(&self) -> usize {
        self.0.heap_bytes()
    }

    /// Byte offset of `field`'s entry.
    #[inline]
    fn find(&self, field: &[u8]) -> Option<usize> {
        let want = Enc::of(field);
        let end = self.0.end_offset();
        let mut off = self.0.first_offset();
        while off < end {
            let (v, next) = self.0.entry_at(off);
            if entry_matches(v, want, field) {
                return Some(off);
            }
            off = self.0.entry_at(next).1;
        }
        None
    }

    pub fn get(&self, field: &[u8]) -> Option<LpValue<'_>> {
        let off = self.find(field)?;
        let next = self.0.entry_at(off).1;
        Some(self.0.entry_at(next).0)
    }

    pub fn contains(&self, field: &[u8]) -> bool {
        self.find(field).is_some()
    }

    /// Set `field` to `value`; true if the field is new.
    pub fn insert(&mut self, field: &[u8], value: &[u8]) -> bool {
        match self.find(field) {
            Some(off) => {
                let next = self.0.entry_at(off).1;
                self.0.replace_enc_at_offset(next, Enc::of(value));
                false
            }
            None => {
                let off = self.0.end_offset();
                let n = self.0.insert_enc_at_offset(off, Enc::of(field));
                self.0.insert_enc_at_offset(off + n, Enc::of(value));
                true
            }
        }
    }

    /// Remove `field`; true if it existed.
    pub fn remove(&mut self, field: &[u8]) -> bool {
        match self.find(field) {
            Some(off) => {
                self.0.delete_at_offset(off, 2);
                true
            }
            None => false,
        }
    }

    /// The `i`-th pair in listpack order.
    pub fn pair_at(&self, i: usize) -> Option<(LpValue<'_>, LpValue<'_>)> {
        self.iter().nth(i)
    }

    /// Pairs in insertion order (both directions).
    pub fn iter(&self) -> PairIter<'_> {
        PairIter(self.0.iter())
    }

    /// Hands the block over as a raw pointer (the keyspace's value cell).
    pub fn into_raw(self) -> *mut u8 {
        self.0.into_raw()
    }

    /// Takes back a block given away by [`into_raw`](Self::into_raw).
    ///
    /// # Safety
    /// As [`PackBlock::from_raw`]: `p` comes from `into_raw` and has one
    /// owner at a time.
    pub unsafe fn from_raw(p: *mut u8) -> Self {
        // SAFETY: forwarded contract.
        PackHash(unsafe { PackBlock::from_raw(p) })
    }

    #[cfg(test)]
    fn check(&self) {
        self.0.validate().unwrap();
        assert_eq!(self.0.len() % 2, 0);
    }
}

// ---------------------------------------------------------------- set

/// Small set of strings in a listpack (Redis 7.2 `listpack` set encoding).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListpackSet(IndexedPack);

impl Default for ListpackSet {
    fn default() -> Self {
        Self::new()
    }
}

impl ListpackSet {
    pub fn new() -> Self {
        ListpackSet(IndexedPack::new(1))
    }

    pub fn from_listpack(lp: Listpack) -> Result<Self, InvalidListpack> {
        IndexedPack::from_listpack(lp, 1).map(ListpackSet)
    }

    pub fn listpack(&self) -> &Listpack {
        &self.0.lp
    }

    pub fn into_listpack(self) -> Listpack {
        self.0.lp
    }

    pub fn len(&self) -> usize {
        self.0.keys()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn heap_bytes(&self) -> usize {
        self.0.heap_bytes()
    }

    pub fn contains(&self, member: &[u8]) -> bool {
        self.0.find(member).is_some()
    }

    /// Add `member`; true if it was new.
    pub fn insert(&mut self, member: &[u8]) -> bool {
        if self.0.find(member).is_some() {
            return false;
        }
        let k = self.0.keys();
        let off = self.0.lp.end_offset();
        self.0.insert_element(k, off, &[Enc::of(member)]);
        true
    }

    /// Remove `member`; true if it existed.
    pub fn remove(&mut self, member: &[u8]) -> bool {
        match self.0.find(member) {
            Some((k, off)) => {
                self.0.remove_element(k, off);
                true
            }
            None => false,
        }
    }

    /// The `i`-th member (for SRANDMEMBER).
    pub fn member_at(&self, i: usize) -> Option<LpValue<'_>> {
        (i < self.len()).then(|| self.0.lp.entry_at(self.0.key_offset(i)).0)
    }

    /// Remove and return the `i`-th member (for SPOP).
    pub fn remove_at(&mut self, i: usize) -> Option<Vec<u8>> {
        if i >= self.len() {
            return None;
        }
        let off = self.0.key_offset(i);
        let v = self.0.lp.entry_at(off).0.to_vec();
        self.0.remove_element(i, off);
        Some(v)
    }

    pub fn iter(&self) -> crate::listpack::Iter<'_> {
        self.0.lp.iter()
    }

    pub fn has_index(&self) -> bool {
        self.0.index.is_some()
    }
}

// ---------------------------------------------------------------- zset

/// Parse a stored zset score entry.
pub fn score_of(v: LpValue<'_>) -> f64 {
    match v {
        LpValue::Int(i) => i as f64,
        LpValue::Str(s) => std::str::from_utf8(s)
            .ok()
            .and_then(|t| t.parse::<f64>().ok())
            .unwrap_or(0.0),
    }
}

/// Redis 7.0's `double2ll`: the score as an integer when it is whole and
/// within +-LLONG_MAX/2.
fn score_as_int(score: f64) -> Option<i64> {
    const LIM: f64 = (i64::MAX / 2) as f64;
    if !(-LIM..=LIM).contains(&score) {
        return None;
    }
    let i = score as i64;
    (i as f64 == score).then_some(i)
}

/// C's `printf("%.17g", v)` for finite non-zero `v`.
fn fmt_g17(v: f64) -> String {
    let e = format!("{v:.16e}");
    let (mant, exp) = e.split_once('e').unwrap();
    let exp: i32 = exp.parse().unwrap();
    let strip = |t: &str| -> String {
        if t.contains('.') {
            t.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            t.to_string()
        }
    };
    if !(-4..17).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", strip(mant), exp.abs())
    } else {
        strip(&format!("{:.*}", (16 - exp) as usize, v))
    }
}

/// The text Redis 7.0's `d2string` writes for a score (`inf`, `-inf`,
/// `-0`, an integer when [`score_as_int`] allows, else `%.17g`). Stored
/// through the listpack's integer detection, as Redis does, so zset blocks
/// are byte-identical to Redis's.
pub fn score_text(score: f64) -> Vec<u8> {
    if score.is_infinite() {
        return if score > 0.0 {
            b"inf".to_vec()
        } else {
            b"-inf".to_vec()
        };
    }
    if score == 0.0 {
        return if score.is_sign_negative() {
            b"-0".to_vec()
        } else {
            b"0".to_vec()
        };
    }
    if let Some(i) = score_as_int(score) {
        return i.to_string().into_bytes();
    }
    fmt_g17(score).into_bytes()
}

fn score_enc(score: f64, buf: &mut Vec<u8>) -> Enc<'_> {
    if score != 0.0 {
        if let Some(i) = score_as_int(score) {
            return Enc::Int(i);
        }
    }
    *buf = score_text(score);
    Enc::of(buf)
}

/// Compare a stored member entry with member bytes.
fn cmp_member(v: LpValue<'_>, m: &[u8]) -> Ordering {
    match v {
        LpValue::Str(s) => s.cmp(m),
        LpValue::Int(i) => i.to_string().as_bytes().cmp(m),
    }
}

/// Small sorted set: member/score pairs sorted by (score, member).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListpackZset(IndexedPack);

impl Default for ListpackZset {
    fn default() -> Self {
        Self::new()
    }
}

impl ListpackZset {
    pub fn new() -> Self {
        ListpackZset(IndexedPack::new(2))
    }

    /// Adopt a listpack of member/score pairs (must already be sorted).
    pub fn from_listpack(lp: Listpack) -> Result<Self, InvalidListpack> {
        let z = IndexedPack::from_listpack(lp, 2).map(ListpackZset)?;
        let mut prev: Option<(f64, Vec<u8>)> = None;
        for (m, s) in z.iter() {
            let cur = (s, m.to_vec());
            if let Some(p) = &prev {
                if p.0 > cur.0 || (p.0 == cur.0 && p.1 >= cur.1) {
                    return Err(InvalidListpack("zset not sorted"));
                }
            }
            prev = Some(cur);
        }
        Ok(z)
    }

    pub fn listpack(&self) -> &Listpack {
        &self.0.lp
    }

    pub fn into_listpack(self) -> Listpack {
        self.0.lp
    }

    pub fn len(&self) -> usize {
        self.0.keys()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn heap_bytes(&self) -> usize {
        self.0.heap_bytes()
    }

    pub fn score(&self, member: &[u8]) -> Option<f64> {
        let (_, off) = self.0.find(member)?;
        let next = self.0.lp.entry_at(off).1;
        Some(score_of(self.0.lp.entry_at(next).0))
    }

    /// 0-based ascending rank of `member`.
    pub fn rank(&self, member: &[u8]) -> Option<usize> {
        self.0.find(member).map(|(k, _)| k)
    }

    /// Member and score at ascending rank `i`.
    pub fn at_rank(&self, i: usize) -> Option<(LpValue<'_>, f64)> {
        if i >= self.len() {
            return None;
        }
        let off = self.0.key_offset(i);
        let (m, next) = self.0.lp.entry_at(off);
        Some((m, score_of(self.0.lp.entry_at(next).0)))
    }

    /// Insert or update; returns the previous score.
    pub fn insert(&mut self, member: &[u8], score: f64) -> Option<f64> {
        debug_assert!(!score.is_nan());
        // Redis 7.0 writes -0 into a listpack as integer 0.
        let score = if score == 0.0 { 0.0 } else { score };
        let old = match self.0.find(member) {
            Some((k, off)) => {
                let next = self.0.lp.entry_at(off).1;
                let old = score_of(self.0.lp.entry_at(next).0);
                if old == score {
                    return Some(old);
                }
                self.0.remove_element(k, off);
                Some(old)
            }
            None => None,
        };
        // Find the first element greater than (score, member).
        let mut k = 0;
        let mut off = self.0.lp.first_offset();
        let n = self.len();
        while k < n {
            let (m, next) = self.0.lp.entry_at(off);
            let (sv, after) = self.0.lp.entry_at(next);
            let s = score_of(sv);
            if s > score || (s == score && cmp_member(m, member) == Ordering::Greater) {
                break;
            }
            off = after;
            k += 1;
        }
        let mut buf = Vec::new();
        let se = score_enc(score, &mut buf);
        self.0.insert_element(k, off, &[Enc::of(member), se]);
        old
    }

    /// Append `member` with `score` at the end; the caller guarantees
    /// (score, member) sorts after every element and `member` is absent
    /// (building a STORE result from sorted pairs).
    pub fn push_back(&mut self, member: &[u8], score: f64) {
        debug_assert!(!score.is_nan());
        let score = if score == 0.0 { 0.0 } else { score };
        let k = self.len();
        let off = self.0.lp.end_offset();
        let mut buf = Vec::new();
        let se = score_enc(score, &mut buf);
        self.0.insert_element(k, off, &[Enc::of(member), se]);
    }

    /// Remove `member`; returns its score.
    pub fn remove(&mut self, member: &[u8]) -> Option<f64> {
        let (k, off) = self.0.find(member)?;
        let next = self.0.lp.entry_at(off).1;
        let s = score_of(self.0.lp.entry_at(next).0);
        self.0.remove_element(k, off);
        Some(s)
    }

    /// Remove ranks `start..end` (ascending, clipped).
    pub fn remove_rank_range(&mut self, start: usize, end: usize) -> usize {
        let end = end.min(self.len());
        if start >= end {
            return 0;
        }
        let off = self.0.key_offset(start);
        let removed = self.0.lp.delete_at_offset(off, (end - start) * 2);
        let _ = removed;
        self.0.index = None;
        self.0.maybe_build();
        end - start
    }

    /// Remove and return the lowest (`max == false`) or highest element.
    pub fn pop(&mut self, max: bool) -> Option<(Vec<u8>, f64)> {
        let i = if max { self.len().checked_sub(1)? } else { 0 };
        let (m, s) = self.at_rank(i)?;
        let m = m.to_vec();
        let off = self.0.key_offset(i);
        self.0.remove_element(i, off);
        Some((m, s))
    }

    /// (member, score) in ascending order; `.rev()` for descending.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (LpValue<'_>, f64)> + '_ {
        PairIter(self.0.lp.iter()).map(|(m, s)| (m, score_of(s)))
    }

    /// Ascending rank of the first element with score >= `min` (or > when
    /// `exclusive`).
    pub fn rank_of_score(&self, min: f64, exclusive: bool) -> usize {
        self.iter()
            .position(|(_, s)| if exclusive { s > min } else { s >= min })
            .unwrap_or(self.len())
    }

    pub fn has_index(&self) -> bool {
        self.0.index.is_some()
    }
}

/// True if `s` would be stored as an integer entry.
pub fn is_int_like(s: &[u8]) -> bool {
    string_to_i64(s).is_some()
}

impl KeyIndex {
    fn defrag(&mut self, d: &mut crate::defrag::Defrag) {
        d.vec(&mut self.fps);
        d.vec(&mut self.offs);
    }
}

impl IndexedPack {
    fn defrag(&mut self, d: &mut crate::defrag::Defrag) {
        self.lp.defrag(d);
        if let Some(ix) = &mut self.index {
            d.boxed(ix);
            ix.defrag(d);
        }
    }
}

impl ListpackHash {
    /// Offers its blocks to the defragmenter (see [`crate::defrag`]).
    pub fn defrag(&mut self, d: &mut crate::defrag::Defrag) {
        self.0.defrag(d);
    }
}

impl ListpackSet {
    /// Offers its blocks to the defragmenter (see [`crate::defrag`]).
    pub fn defrag(&mut self, d: &mut crate::defrag::Defrag) {
        self.0.defrag(d);
    }
}

impl ListpackZset {
    /// Offers its blocks to the defragmenter (see [`crate::defrag`]).
    pub fn defrag(&mut self, d: &mut crate::defrag::Defrag) {
        self.0.defrag(d);
    }
}

impl PackHash {
    /// Offers its block to the defragmenter (see [`crate::defrag`]).
    pub fn defrag(&mut self, d: &mut crate::defrag::Defrag) {
        self.0.defrag(d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::{BTreeMap, HashMap};

    fn key() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            (0u32..60).prop_map(|i| format!("f{i}").into_bytes()),
            (-30i64..30).prop_map(|i| i.to_string().into_bytes()),
            Just(b"007".to_vec()),
            Just(b"".to_vec()),
            (0u32..5).prop_map(|i| vec![b'L'; 60 + i as usize * 40]),
        ]
    }

    #[test]
    fn int_and_string_forms_agree() {
        let mut h = ListpackHash::new();
        for i in 0..40 {
            h.insert(i.to_string().as_bytes(), b"v");
        }
        assert!(h.has_index());
        assert!(h.contains(b"17"));
        assert!(!h.contains(b"017"));
        assert!(!h.contains(b"40"));
        // A non-canonical string stored by someone else is found too.
        let mut lp = Listpack::new();
        for i in 0..20 {
            lp.push_back(format!("x{i}").as_bytes());
            lp.push_back(b"v");
        }
        let h = ListpackHash::from_listpack(lp).unwrap();
        assert_eq!(h.get(b"x7"), Some(LpValue::Str(b"v")));
    }

    #[derive(Debug, Clone)]
    enum HOp {
        Set(Vec<u8>, Vec<u8>),
        Del(Vec<u8>),
    }

    /// Lookups of absent fields, iteration and positional access of a
    /// small hash agree with the model map.
    macro_rules! hash_matches_model {
        ($h:expr, $m:expr) => {
            for k in [b"nope".as_slice(), b"99", b"-99"] {
                prop_assert_eq!($h.get(k).is_some(), $m.contains_key(k));
            }
            let got: HashMap<Vec<u8>, Vec<u8>> =
                $h.iter().map(|(a, b)| (a.to_vec(), b.to_vec())).collect();
            prop_assert_eq!(&got, &$m);
            for i in 0..$h.len() {
                let (f, v) = $h.pair_at(i).unwrap();
                prop_assert_eq!($m.get(&f.to_vec()), Some(&v.to_vec()));
            }
        };
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// The packed form against a HashMap, and byte-identical to the
        /// indexed form given the same edits.
        #[test]
        fn pack_hash_model(ops in proptest::collection::vec(prop_oneof![
            3 => (key(), key()).prop_map(|(k, v)| HOp::Set(k, v)),
            1 => key().prop_map(HOp::Del),
        ], 1..200)) {
            let mut h = PackHash::new();
            let mut lh = ListpackHash::new();
            let mut m: HashMap<Vec<u8>, Vec<u8>> = HashMap::new();
            for o in ops {
                match o {
                    HOp::Set(k, v) => {
                        prop_assert_eq!(lh.insert(&k, &v), !m.contains_key(&k));
                        prop_assert_eq!(h.insert(&k, &v), m.insert(k, v).is_none());
                    }
                    HOp::Del(k) => {
                        prop_assert_eq!(lh.remove(&k), m.contains_key(&k));
                        prop_assert_eq!(h.remove(&k), m.remove(&k).is_some());
                    }
                }
                h.check();
                prop_assert_eq!(h.len(), m.len());
                prop_assert_eq!(h.block().to_listpack_bytes(), lh.listpack().as_bytes().to_vec());
            }
            for (k, v) in &m {
                prop_assert_eq!(h.get(k).map(|x| x.to_vec()), Some(v.clone()));
                prop_assert!(h.contains(k));
            }
            hash_matches_model!(h, m);
            prop_assert!(h.pair_at(h.len()).is_none());
            prop_assert_eq!(&PackHash::from_listpack_hash(&lh), &h);
            let back = h.to_listpack_hash();
            prop_assert_eq!(back.listpack().as_bytes(), lh.listpack().as_bytes());
        }

        #[test]
        fn hash_model(ops in proptest::collection::vec(prop_oneof![
            3 => (key(), key()).prop_map(|(k, v)| HOp::Set(k, v)),
            1 => key().prop_map(HOp::Del),
        ], 1..200)) {
            let mut h = ListpackHash::new();
            let mut m: HashMap<Vec<u8>, Vec<u8>> = HashMap::new();
            for o in ops {
                match o {
                    HOp::Set(k, v) => prop_assert_eq!(h.insert(&k, &v), m.insert(k, v).is_none()),
                    HOp::Del(k) => prop_assert_eq!(h.remove(&k), m.remove(&k).is_some()),
                }
                h.0.check();
                prop_assert_eq!(h.len(), m.len());
            }
            for (k, v) in &m {
                prop_assert_eq!(h.get(k).map(|x| x.to_vec()), Some(v.clone()));
            }
            hash_matches_model!(h, m);
        }

        #[test]
        fn set_model(ops in proptest::collection::vec((any::<bool>(), key()), 1..200)) {
            let mut s = ListpackSet::new();
            let mut m = std::collections::HashSet::new();
            for (add, k) in ops {
                if add {
                    prop_assert_eq!(s.insert(&k), m.insert(k));
                } else {
                    prop_assert_eq!(s.remove(&k), m.remove(&k));
                }
                s.0.check();
            }
            for k in &m {
                prop_assert!(s.contains(k));
            }
            prop_assert!(!s.contains(b"absent"));
            let got: std::collections::HashSet<Vec<u8>> = s.iter().map(|v| v.to_vec()).collect();
            prop_assert_eq!(&got, &m);
            while let Some(x) = s.remove_at(s.len() / 2) {
                prop_assert!(m.remove(&x));
                s.0.check();
            }
            prop_assert!(m.is_empty());
        }

        #[test]
        fn zset_model(ops in proptest::collection::vec((0u8..3, key(), prop_oneof![
            (-5i32..5).prop_map(|x| x as f64),
            (-5i32..5).prop_map(|x| x as f64 / 4.0),
            Just(f64::INFINITY), Just(f64::NEG_INFINITY), Just(1e300), Just(0.1), Just(-0.0),
        ]), 1..150)) {
            let mut z = ListpackZset::new();
            let mut m: HashMap<Vec<u8>, f64> = HashMap::new();
            for (op, k, s) in ops {
                match op {
                    0 | 1 => prop_assert_eq!(z.insert(&k, s), m.insert(k, s)),
                    _ => prop_assert_eq!(z.remove(&k), m.remove(&k)),
                }
                z.0.check();
            }
            let mut want: Vec<(f64, Vec<u8>)> = m.iter().map(|(k, s)| (*s, k.clone())).collect();
            want.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap().then(a.1.cmp(&b.1)));
            let got: Vec<(f64, Vec<u8>)> = z.iter().map(|(k, s)| (s, k.to_vec())).collect();
            prop_assert_eq!(&got, &want);
            for (i, (s, k)) in want.iter().enumerate() {
                prop_assert_eq!(z.score(k), Some(*s));
                prop_assert_eq!(z.rank(k), Some(i));
            }
            let by: BTreeMap<usize, f64> = (0..z.len()).map(|i| (i, z.at_rank(i).unwrap().1)).collect();
            prop_assert_eq!(by.len(), want.len());
            if let Some((m0, s0)) = z.pop(false) {
                prop_assert_eq!((s0, m0), want[0].clone());
            }
            z.0.check();
        }
    }

    #[test]
    fn score_texts() {
        assert_eq!(score_text(1.5), b"1.5");
        assert_eq!(score_text(3.0), b"3");
        assert_eq!(score_text(1e300), b"1.0000000000000001e+300");
        assert_eq!(score_text(0.1), b"0.10000000000000001");
        assert_eq!(score_text(1e-5), b"1.0000000000000001e-05");
        assert_eq!(score_text(0.0001), b"0.0001");
        assert_eq!(score_text(-0.0), b"-0");
        assert_eq!(score_text(1e17), b"100000000000000000");
        assert_eq!(score_text(1e19), b"1e+19");
        assert_eq!(score_text(f64::NEG_INFINITY), b"-inf");
        for s in [
            0.1,
            1e-7,
            123456.789,
            -2.5e20,
            1e300,
            5e-324,
            f64::MAX,
            -1.0 / 3.0,
        ] {
            assert_eq!(score_of(LpValue::Str(&score_text(s))), s);
        }
    }
}
