//! Open-addressing tables for large hashes and sets.
//!
//! Storage per slot: one control byte plus one [`Elem`] (plus a `V` in a
//! parallel array; `V = ()` costs nothing). A set element is the member in a
//! 16-byte `Elem` (inline up to 15 bytes); a map element is
//! `varint(field length) ++ field ++ value` in one 24-byte `Elem` (inline up
//! to 23 bytes), otherwise one exact-size allocation. So a set member costs
//! 17 bytes / load factor and a map pair 25 bytes / load factor, plus their
//! bytes when they do not fit inline, and nothing else. Load stays between
//! 0.42 and 0.85 (grow to 0.6 when an insert would pass 0.85; shrink below
//! 1/8).
//!
//! Probing is linear *without wrap-around*, and the home slot of hash `h` is
//! `floor(h * home_cap / 2^64)`: a monotone function of the hash. Slots past
//! `home_cap` are an overflow area that grows when a rebuild needs it.
//!
//! Invariants (checked by `check()` in tests):
//! * `ctrl.len() == slots.len() + GROUP`; the `GROUP` trailing bytes are
//!   `EMPTY`; control bytes are `EMPTY` (0x80), `TOMB` (0xFE) or, for a full
//!   slot, the 7-bit fingerprint `h & 0x7F` of its key's hash;
//! * a full slot `k` with home `m` satisfies `m <= k` and no slot in `m..k` is
//!   `EMPTY` (so a probe from `m` stopping at `EMPTY` has seen it);
//! * `len` counts full slots, `tombs` counts `TOMB` slots,
//!   `(len + tombs) <= MAX_LOAD * home_cap` after every insert;
//! * `elem_heap` is the sum of `heap_size()` of full slots' elements, so
//!   `heap_bytes()` is O(1).
//!
//! SCAN guarantee: the cursor is a 64-bit *hash value*. Because homes are
//! monotone in the hash for every table size, one scan step returns exactly
//! the elements whose hash lies in `[cursor, next)`, and the next call goes
//! on from `next` in whatever table exists then. An element present from
//! the start to the end of a full scan is returned exactly once, across any
//! number of grows and shrinks; cursor 0 starts and ends the iteration.
//!
//! Random sampling picks uniformly random slots until one is full (rejection
//! sampling: unbiased; the table shrinks below 1/8 load so this stays cheap).

use crate::elem::Elem;
use crate::hash::hash_bytes;
use rand::Rng;

const EMPTY: u8 = 0x80;
const TOMB: u8 = 0xFE;
const GROUP: usize = 8;
const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;
/// Maximum (full + tombstone) / home slots, as a fraction of 100.
const MAX_LOAD_PCT: usize = 85;
/// Load right after a grow.
const GROW_LOAD_PCT: usize = 60;

#[inline]
fn match_byte(g: u64, b: u8) -> u64 {
    let x = g ^ (LO * b as u64);
    x.wrapping_sub(LO) & !x & HI
}

#[inline]
fn below(lim: u32) -> u64 {
    if lim >= 8 {
        u64::MAX
    } else {
        (1u64 << (lim * 8)) - 1
    }
}

/// Split a map element into (field, value).
#[inline]
pub(crate) fn split_map(b: &[u8]) -> (&[u8], &[u8]) {
    let mut len = 0usize;
    let mut shift = 0;
    let mut i = 0;
    loop {
        let c = b[i];
        len |= ((c & 0x7F) as usize) << shift;
        i += 1;
        if c & 0x80 == 0 {
            break;
        }
        shift += 7;
    }
    (&b[i..i + len], &b[i + len..])
}

#[cfg(test)]
pub(crate) fn map_elem<const N: usize>(field: &[u8], value: &[u8]) -> Elem<N> {
    let mut hdr = [0u8; 5];
    let mut n = field.len();
    let mut k = 0;
    loop {
        let c = (n & 0x7F) as u8;
        n >>= 7;
        if n == 0 {
            hdr[k] = c;
            k += 1;
            break;
        }
        hdr[k] = c | 0x80;
        k += 1;
    }
    Elem::from_parts(&[&hdr[..k], field, value])
}

/// The open-addressing core of [`CompactSet`] (the large hash uses the same
/// design over arena refs, see [`crate::arena`]). `MAP` selects a
/// field/value element layout (kept for inline map elements; tested).
pub(crate) struct RawTable<const MAP: bool, V: Copy + Default, const N: usize = 16> {
    ctrl: Vec<u8>,
    slots: Vec<Elem<N>>,
    vals: Vec<V>,
    home_cap: usize,
    len: usize,
    tombs: usize,
    elem_heap: usize,
}

impl<const MAP: bool, V: Copy + Default, const N: usize> Default for RawTable<MAP, V, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const MAP: bool, V: Copy + Default, const N: usize> Clone for RawTable<MAP, V, N> {
    fn clone(&self) -> Self {
        RawTable {
            ctrl: self.ctrl.clone(),
            slots: self.slots.clone(),
            vals: self.vals.clone(),
            home_cap: self.home_cap,
            len: self.len,
            tombs: self.tombs,
            elem_heap: self.elem_heap,
        }
    }
}

impl<const MAP: bool, V: Copy + Default, const N: usize> Drop for RawTable<MAP, V, N> {
    fn drop(&mut self) {
        if self.elem_heap == 0 {
            // No element owns heap memory (`elem_heap` sums the full slots'
            // heap, and empty and tomb slots hold `Elem::EMPTY`), so the
            // per-slot drop pass would only read the whole array: for a
            // 10M-member set of short members that is ~270 MB and ~10 ms on
            // the lazyfree thread. Forget the slots; the buffer is freed.
            // SAFETY: shrinking the length of a Vec whose dropped elements
            // would free nothing only skips no-op destructors.
            unsafe { self.slots.set_len(0) };
        } else {
            self.slots.clear();
        }
        // On the lazyfree thread, hand the big arrays' pages back in steps
        // (crate::release); elsewhere this does nothing.
        // SAFETY: the three vectors are dropped right after this and hold
        // nothing that needs dropping (slots were emptied above; ctrl and
        // vals are Copy).
        unsafe {
            crate::release::release_vec(&mut self.slots);
            crate::release::release_vec(&mut self.ctrl);
            crate::release::release_vec(&mut self.vals);
        }
    }
}

impl<const MAP: bool, V: Copy + Default, const N: usize> RawTable<MAP, V, N> {
    pub(crate) fn new() -> Self {
        RawTable {
            ctrl: Vec::new(),
            slots: Vec::new(),
            vals: Vec::new(),
            home_cap: 0,
            len: 0,
            tombs: 0,
            elem_heap: 0,
        }
    }

    pub(crate) fn with_capacity(n: usize) -> Self {
        let mut t = Self::new();
        if n > 0 {
            t.rebuild((n * 100).div_ceil(MAX_LOAD_PCT).max(8));
        }
        t
    }

    #[inline]
    pub(crate) fn key_of(e: &Elem<N>) -> &[u8] {
        if MAP {
            split_map(e.bytes()).0
        } else {
            e.bytes()
        }
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        use crate::mem::block_bytes;
        block_bytes(self.ctrl.capacity())
            + block_bytes(self.slots.capacity() * std::mem::size_of::<Elem<N>>())
            + block_bytes(self.vals.capacity() * std::mem::size_of::<V>())
            + self.elem_heap
    }

    #[inline]
    fn home(&self, h: u64) -> usize {
        ((h as u128 * self.home_cap as u128) >> 64) as usize
    }

    #[inline]
    fn group(&self, i: usize) -> u64 {
        u64::from_le_bytes(self.ctrl[i..i + GROUP].try_into().unwrap())
    }

    /// Slot holding `key` (whose hash is `h`).
    #[inline]
    pub(crate) fn find(&self, key: &[u8], h: u64) -> Option<usize> {
        if self.len == 0 {
            return None;
        }
        let fp = (h & 0x7F) as u8;
        let mut i = self.home(h);
        loop {
            let g = self.group(i);
            let em = match_byte(g, EMPTY);
            let lim = em.trailing_zeros() / 8;
            let mut m = match_byte(g, fp) & below(lim);
            while m != 0 {
                let j = i + (m.trailing_zeros() / 8) as usize;
                if self.ctrl[j] == fp && Self::key_of(&self.slots[j]) == key {
                    return Some(j);
                }
                m &= m - 1;
            }
            if em != 0 {
                return None;
            }
            i += GROUP;
            if i >= self.slots.len() {
                return None;
            }
        }
    }

    /// First free (EMPTY or TOMB) slot at or after the home of `h`.
    fn free_slot(&self, h: u64) -> Option<usize> {
        let mut i = self.home(h);
        while i < self.slots.len() {
            let m = self.group(i) & HI;
            if m != 0 {
                let j = i + (m.trailing_zeros() / 8) as usize;
                return (j < self.slots.len()).then_some(j);
            }
            i += GROUP;
        }
        None
    }

    #[inline]
    pub(crate) fn elem(&self, i: usize) -> &Elem<N> {
        &self.slots[i]
    }

    /// Insert an element whose key is known to be absent. Returns its slot.
    pub(crate) fn insert_new(&mut self, e: Elem<N>, h: u64, v: V) -> usize {
        if (self.len + self.tombs + 1) * 100 > self.home_cap * MAX_LOAD_PCT {
            self.resize_for(self.len + 1);
        }
        let i = loop {
            match self.free_slot(h) {
                Some(i) => break i,
                None => {
                    let cap = self.home_cap + self.home_cap / 4 + 8;
                    self.rebuild(cap);
                }
            }
        };
        if self.ctrl[i] == TOMB {
            self.tombs -= 1;
        }
        self.ctrl[i] = (h & 0x7F) as u8;
        self.elem_heap += e.heap_size();
        self.slots[i] = e;
        self.vals[i] = v;
        self.len += 1;
        i
    }

    /// Remove the element in full slot `i`.
    pub(crate) fn remove_at(&mut self, i: usize) -> (Elem<N>, V) {
        debug_assert!(self.ctrl[i] & 0x80 == 0);
        let e = std::mem::replace(&mut self.slots[i], Elem::EMPTY);
        let v = std::mem::take(&mut self.vals[i]);
        self.elem_heap -= e.heap_size();
        self.len -= 1;
        if self.ctrl[i + 1] == EMPTY {
            self.ctrl[i] = EMPTY;
            let mut j = i;
            while j > 0 && self.ctrl[j - 1] == TOMB {
                j -= 1;
                self.ctrl[j] = EMPTY;
                self.tombs -= 1;
            }
        } else {
            self.ctrl[i] = TOMB;
            self.tombs += 1;
        }
        if self.len == 0 {
            *self = Self::new();
        } else if self.home_cap > 64 && self.len * 8 < self.home_cap {
            self.resize_for(self.len);
        }
        (e, v)
    }

    /// Rebuild sized for `n` elements (also clears tombstones).
    fn resize_for(&mut self, n: usize) {
        let cap = (n * 100).div_ceil(GROW_LOAD_PCT).max(8);
        self.rebuild(cap);
    }

    fn rebuild(&mut self, home_cap: usize) {
        let extra = GROUP + home_cap / 64;
        let n = home_cap + extra;
        let old_ctrl = std::mem::take(&mut self.ctrl);
        let old_slots = std::mem::take(&mut self.slots);
        let old_vals = std::mem::take(&mut self.vals);
        self.home_cap = home_cap;
        self.ctrl = vec![EMPTY; n + GROUP];
        self.slots = Vec::with_capacity(n);
        self.slots.resize_with(n, || Elem::EMPTY);
        self.vals = vec![V::default(); n];
        self.tombs = 0;
        for ((c, e), v) in old_ctrl.into_iter().zip(old_slots).zip(old_vals) {
            if c & 0x80 != 0 {
                continue;
            }
            let h = hash_bytes(Self::key_of(&e));
            let i = match self.free_slot(h) {
                Some(i) => i,
                None => {
                    // Grow the overflow area (no wrap-around).
                    let at = self.slots.len();
                    self.slots.reserve_exact(GROUP);
                    self.slots.resize_with(at + GROUP, || Elem::EMPTY);
                    self.vals.resize(at + GROUP, V::default());
                    self.ctrl.resize(at + 2 * GROUP, EMPTY);
                    self.free_slot(h).expect("fresh overflow slots")
                }
            };
            self.ctrl[i] = c;
            self.slots[i] = e;
            self.vals[i] = v;
        }
    }

    /// Full slot indices in table order.
    pub(crate) fn iter(&self) -> impl DoubleEndedIterator<Item = usize> + '_ {
        self.ctrl[..self.slots.len()]
            .iter()
            .enumerate()
            .filter(|(_, &c)| c & 0x80 == 0)
            .map(|(i, _)| i)
    }

    /// A uniformly random full slot.
    pub(crate) fn random<R: Rng + ?Sized>(&self, rng: &mut R) -> Option<usize> {
        if self.len == 0 {
            return None;
        }
        loop {
            let i = rng.gen_range(0..self.slots.len());
            if self.ctrl[i] & 0x80 == 0 {
                return Some(i);
            }
        }
    }

    /// One SCAN step: calls `f` for every element with hash in
    /// `[cursor, next)`, visiting about `count` home slots; returns `next`
    /// (0 when done).
    pub(crate) fn scan(&self, cursor: u64, count: usize, mut f: impl FnMut(usize)) -> u64 {
        if self.len == 0 {
            return 0;
        }
        let a = self.home(cursor);
        let b = (a + count.max(1)).min(self.home_cap);
        let next: u128 = ((b as u128) << 64).div_ceil(self.home_cap as u128);
        let mut i = a;
        while i < self.slots.len() {
            let c = self.ctrl[i];
            if c == EMPTY && i >= b {
                break;
            }
            if c & 0x80 == 0 {
                let h = hash_bytes(Self::key_of(&self.slots[i])) as u128;
                if h >= cursor as u128 && h < next {
                    f(i);
                }
            }
            i += 1;
        }
        if next >= 1u128 << 64 {
            0
        } else {
            next as u64
        }
    }

    /// One defrag step (see [`crate::defrag`]): from slot `from` (0 also
    /// offers the three arrays first), offers the heap blocks of the
    /// elements in the next `max_slots` slots. Returns the slot to go on
    /// from, `None` when done. A `from` left over from before the table
    /// changed is only a place to resume: past the end means done.
    pub(crate) fn defrag(
        &mut self,
        from: u64,
        max_slots: usize,
        d: &mut crate::defrag::Defrag,
    ) -> Option<u64> {
        if from == 0 {
            d.vec(&mut self.ctrl);
            d.vec(&mut self.slots);
            d.vec(&mut self.vals);
        }
        if self.elem_heap == 0 {
            // No element owns a block.
            return None;
        }
        let a = usize::try_from(from)
            .unwrap_or(usize::MAX)
            .min(self.slots.len());
        let b = a.saturating_add(max_slots.max(1)).min(self.slots.len());
        for i in a..b {
            if self.ctrl[i] & 0x80 == 0 {
                self.slots[i].defrag(d);
            }
        }
        (b < self.slots.len()).then_some(b as u64)
    }

    #[cfg(test)]
    pub(crate) fn check(&self) {
        if self.slots.is_empty() {
            assert_eq!(self.len, 0);
            return;
        }
        assert_eq!(self.ctrl.len(), self.slots.len() + GROUP);
        assert!(self.ctrl[self.slots.len()..].iter().all(|&c| c == EMPTY));
        let (mut len, mut tombs, mut heap) = (0, 0, 0);
        for i in 0..self.slots.len() {
            match self.ctrl[i] {
                EMPTY => {}
                TOMB => tombs += 1,
                c => {
                    assert!(c < 0x80);
                    len += 1;
                    heap += self.slots[i].heap_size();
                    let h = hash_bytes(Self::key_of(&self.slots[i]));
                    assert_eq!(c, (h & 0x7F) as u8);
                    let m = self.home(h);
                    assert!(m <= i);
                    assert!(self.ctrl[m..i].iter().all(|&x| x != EMPTY));
                }
            }
        }
        assert_eq!((len, tombs, heap), (self.len, self.tombs, self.elem_heap));
        assert!((len + tombs) * 100 <= self.home_cap * MAX_LOAD_PCT);
    }
}

// ---------------------------------------------------------------- map

/// Large hash (Redis `hashtable` encoding): the arena-backed map.
pub type CompactMap = crate::arena::ArenaMap;

// ---------------------------------------------------------------- set

/// Large set (Redis `hashtable` encoding).
#[derive(Clone, Default)]
pub struct CompactSet(RawTable<false, ()>);

impl std::fmt::Debug for CompactSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set()
            .entries(self.iter().map(String::from_utf8_lossy))
            .finish()
    }
}

impl CompactSet {
    pub fn new() -> Self {
        CompactSet(RawTable::new())
    }

    pub fn with_capacity(n: usize) -> Self {
        CompactSet(RawTable::with_capacity(n))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn heap_bytes(&self) -> usize {
        self.0.heap_bytes()
    }

    pub fn contains(&self, m: &[u8]) -> bool {
        self.0.find(m, hash_bytes(m)).is_some()
    }

    /// Add `m`; true if new.
    pub fn insert(&mut self, m: &[u8]) -> bool {
        let h = hash_bytes(m);
        if self.0.find(m, h).is_some() {
            return false;
        }
        self.0.insert_new(Elem::new(m), h, ());
        true
    }

    /// Remove `m`; true if it was present.
    pub fn remove(&mut self, m: &[u8]) -> bool {
        match self.0.find(m, hash_bytes(m)) {
            Some(i) => {
                self.0.remove_at(i);
                true
            }
            None => false,
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = &[u8]> + '_ {
        self.0.iter().map(|i| self.0.elem(i).bytes())
    }

    /// A uniformly random member (SRANDMEMBER).
    pub fn random<R: Rng + ?Sized>(&self, rng: &mut R) -> Option<&[u8]> {
        self.0.random(rng).map(|i| self.0.elem(i).bytes())
    }

    /// Remove and return a uniformly random member (SPOP).
    pub fn pop_random<R: Rng + ?Sized>(&mut self, rng: &mut R) -> Option<Vec<u8>> {
        let i = self.0.random(rng)?;
        Some(self.0.remove_at(i).0.bytes().to_vec())
    }

    /// One defrag step: from `from` (0 starts, with the arrays), offers
    /// the blocks of the members in the next `max_fields` slots; returns
    /// where to go on, `None` when done (see [`crate::defrag`]).
    pub fn defrag(
        &mut self,
        from: u64,
        max_fields: usize,
        d: &mut crate::defrag::Defrag,
    ) -> Option<u64> {
        self.0.defrag(from, max_fields, d)
    }

    #[cfg(test)]
    pub(crate) fn check(&self) {
        self.0.check();
    }

    /// One SSCAN step (see module docs for the guarantee).
    pub fn scan(&self, cursor: u64, count: usize, mut f: impl FnMut(&[u8])) -> u64 {
        self.0.scan(cursor, count, |i| f(self.0.elem(i).bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::SeedableRng;
    use std::collections::{HashMap, HashSet};

    fn key() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            (0u32..300).prop_map(|i| format!("k{i}").into_bytes()),
            (0u32..50).prop_map(|i| format!("a-much-longer-key-{i}").into_bytes()),
            proptest::collection::vec(any::<u8>(), 0..3),
        ]
    }

    fn val() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            proptest::collection::vec(any::<u8>(), 0..8),
            proptest::collection::vec(any::<u8>(), 0..200),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        #[test]
        fn map_model(ops in proptest::collection::vec((0u8..4, key(), val()), 1..600)) {
            let mut t = CompactMap::new();
            let mut m: HashMap<Vec<u8>, Vec<u8>> = HashMap::new();
            for (op, k, v) in ops {
                if op < 3 {
                    prop_assert_eq!(t.insert(&k, &v), m.insert(k, v).is_none());
                } else {
                    prop_assert_eq!(t.remove(&k), m.remove(&k));
                }
                prop_assert_eq!(t.len(), m.len());
            }
            t.check();
            for (k, v) in &m {
                prop_assert_eq!(t.get(k), Some(&v[..]));
            }
            prop_assert!(t.get(b"absent-key").is_none());
            let got: HashMap<Vec<u8>, Vec<u8>> = t.iter().map(|(a, b)| (a.to_vec(), b.to_vec())).collect();
            prop_assert_eq!(&got, &m);
            let mut c = 0;
            let mut seen = HashMap::new();
            loop {
                c = t.scan(c, 7, |k, v| { assert!(seen.insert(k.to_vec(), v.to_vec()).is_none()); });
                if c == 0 { break; }
            }
            prop_assert_eq!(&seen, &m);
        }

        #[test]
        fn set_model_and_scan_across_resizes(ops in proptest::collection::vec((0u8..3, key()), 1..800), seed in any::<u64>()) {
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
            let mut t = CompactSet::new();
            let mut m: HashSet<Vec<u8>> = HashSet::new();
            // Members present throughout the scan must be returned exactly once.
            for i in 0..50 { let k = format!("stable{i}").into_bytes(); t.insert(&k); }
            let mut cursor = 0u64;
            let mut seen: HashMap<Vec<u8>, usize> = HashMap::new();
            let mut done = false;
            for (op, k) in ops {
                match op {
                    0 | 1 => { prop_assert_eq!(t.insert(&k), m.insert(k.clone())); }
                    _ => { prop_assert_eq!(t.remove(&k), m.remove(&k)); }
                }
                if !done && rand::Rng::gen_bool(&mut rng, 0.3) {
                    cursor = t.scan(cursor, 3, |x| *seen.entry(x.to_vec()).or_default() += 1);
                    done = cursor == 0;
                }
            }
            while !done {
                cursor = t.scan(cursor, 3, |x| *seen.entry(x.to_vec()).or_default() += 1);
                done = cursor == 0;
            }
            for i in 0..50 {
                prop_assert_eq!(seen.get(format!("stable{i}").as_bytes()), Some(&1));
            }
            t.0.check();
            for i in 0..50 { let k = format!("stable{}", i); prop_assert!(t.remove(k.as_bytes())); }
            let got: HashSet<Vec<u8>> = t.iter().map(|x| x.to_vec()).collect();
            prop_assert_eq!(&got, &m);
            while let Some(x) = t.pop_random(&mut rng) {
                prop_assert!(m.remove(&x));
            }
            prop_assert!(m.is_empty());
            prop_assert_eq!(t.heap_bytes(), 0);
        }
    }

    #[test]
    fn big_and_heap_accounting() {
        let mut s = CompactSet::new();
        for i in 0..100_000u32 {
            assert!(s.insert(format!("member:{i}").as_bytes()));
        }
        s.0.check();
        let long = vec![b'x'; 100];
        s.insert(&long);
        assert!(s.heap_bytes() >= 100 + 100_001 * 17);
        for i in 0..99_990u32 {
            assert!(s.remove(format!("member:{i}").as_bytes()));
        }
        s.0.check();
        assert_eq!(s.len(), 11);
        assert!(s.heap_bytes() < 4096, "{}", s.heap_bytes());
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        let mut counts = HashMap::new();
        for _ in 0..11_000 {
            *counts
                .entry(s.random(&mut rng).unwrap().to_vec())
                .or_insert(0) += 1;
        }
        assert_eq!(counts.len(), 11);
        assert!(counts.values().all(|&c| c > 700 && c < 1300), "{counts:?}");
    }

    #[test]
    fn map_elem_roundtrip() {
        for fl in [0, 1, 127, 128, 20000] {
            let f = vec![b'f'; fl];
            let e: Elem<24> = map_elem(&f, b"value");
            assert_eq!(split_map(e.bytes()), (&f[..], &b"value"[..]));
        }
    }
}
