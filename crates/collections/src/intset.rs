//! `IntSet`: Redis's intset, byte for byte.
//!
//! Layout (little-endian): `encoding u32` (2, 4 or 8 = bytes per element),
//! `length u32`, then `length` elements of `encoding` bytes, sorted ascending
//! and distinct.
//!
//! Invariants (checked by [`IntSet::validate`]):
//! * `buf.len() == 8 + length * encoding`;
//! * elements strictly ascending;
//! * the encoding is the smallest that held every value ever inserted (an
//!   intset never downgrades, as in Redis; a value needing a wider encoding
//!   upgrades the whole set, and then sits at one end);
//! * `heap_bytes()` is the buffer capacity.

use crate::mem::grow_capacity;

const HDR: usize = 8;

/// Error from [`IntSet::from_bytes`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidIntSet(pub &'static str);

/// A sorted set of integers in Redis's intset format.
#[derive(Clone, PartialEq, Eq)]
pub struct IntSet {
    buf: Vec<u8>,
}

impl std::fmt::Debug for IntSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl Default for IntSet {
    fn default() -> Self {
        Self::new()
    }
}

fn width_for(v: i64) -> usize {
    if v >= i16::MIN as i64 && v <= i16::MAX as i64 {
        2
    } else if v >= i32::MIN as i64 && v <= i32::MAX as i64 {
        4
    } else {
        8
    }
}

impl IntSet {
    /// An empty set with 16-bit encoding (8 bytes).
    pub fn new() -> Self {
        let mut buf = Vec::with_capacity(HDR);
        buf.extend_from_slice(&2u32.to_le_bytes());
        buf.extend_from_slice(&0u32.to_le_bytes());
        IntSet { buf }
    }

    /// Adopt a serialized intset (e.g. from RDB) after validation; its
    /// capacity becomes the size class of its length.
    pub fn from_bytes(mut buf: Vec<u8>) -> Result<Self, InvalidIntSet> {
        crate::mem::fit_to_class(&mut buf);
        let s = IntSet { buf };
        s.validate()?;
        Ok(s)
    }

    pub fn validate(&self) -> Result<(), InvalidIntSet> {
        if self.buf.len() < HDR {
            return Err(InvalidIntSet("too short"));
        }
        let w = self.width();
        if ![2, 4, 8].contains(&w) {
            return Err(InvalidIntSet("bad encoding"));
        }
        if self.buf.len() != HDR + self.len() * w {
            return Err(InvalidIntSet("length mismatch"));
        }
        for i in 1..self.len() {
            if self.at(i - 1) >= self.at(i) {
                return Err(InvalidIntSet("not sorted"));
            }
        }
        Ok(())
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.buf
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }

    /// Bytes per element (2, 4 or 8).
    pub fn width(&self) -> usize {
        u32::from_le_bytes(self.buf[0..4].try_into().unwrap()) as usize
    }

    pub fn len(&self) -> usize {
        u32::from_le_bytes(self.buf[4..8].try_into().unwrap()) as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn heap_bytes(&self) -> usize {
        self.buf.capacity()
    }

    /// Serialized size (`intsetBlobLen`).
    pub fn bytes_len(&self) -> usize {
        self.buf.len()
    }

    #[inline]
    fn read(&self, i: usize, w: usize) -> i64 {
        let p = HDR + i * w;
        match w {
            2 => i16::from_le_bytes(self.buf[p..p + 2].try_into().unwrap()) as i64,
            4 => i32::from_le_bytes(self.buf[p..p + 4].try_into().unwrap()) as i64,
            _ => i64::from_le_bytes(self.buf[p..p + 8].try_into().unwrap()),
        }
    }

    #[inline]
    fn at(&self, i: usize) -> i64 {
        self.read(i, self.width())
    }

    fn write(buf: &mut [u8], i: usize, w: usize, v: i64) {
        let p = HDR + i * w;
        buf[p..p + w].copy_from_slice(&v.to_le_bytes()[..w]);
    }

    fn set_len(&mut self, n: usize) {
        self.buf[4..8].copy_from_slice(&(n as u32).to_le_bytes());
    }

    /// Element at position `i` in ascending order.
    pub fn get(&self, i: usize) -> Option<i64> {
        (i < self.len()).then(|| self.at(i))
    }

    /// Binary search: Ok(position) or Err(insertion point).
    fn search(&self, v: i64) -> Result<usize, usize> {
        let w = self.width();
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            let x = self.read(mid, w);
            if x == v {
                return Ok(mid);
            }
            if x < v {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Err(lo)
    }

    pub fn contains(&self, v: i64) -> bool {
        width_for(v) <= self.width() && self.search(v).is_ok()
    }

    fn resize(&mut self, n: usize) {
        if n > self.buf.capacity() {
            let cap = grow_capacity(n);
            self.buf.reserve_exact(cap - self.buf.len());
        }
        self.buf.resize(n, 0);
        // Never more room than the size class of the length.
        if self.buf.capacity() > grow_capacity(n) {
            self.buf.shrink_to(grow_capacity(n));
        }
    }

    /// Insert `v`; true if it was new.
    pub fn insert(&mut self, v: i64) -> bool {
        let n = self.len();
        let w = self.width();
        let nw = width_for(v);
        if nw > w {
            // Upgrade: v is beyond every element, so it goes at one end.
            let mut nb = Vec::with_capacity(grow_capacity(HDR + (n + 1) * nw));
            nb.extend_from_slice(&(nw as u32).to_le_bytes());
            nb.extend_from_slice(&((n + 1) as u32).to_le_bytes());
            nb.resize(HDR + (n + 1) * nw, 0);
            let shift = usize::from(v < 0);
            for i in 0..n {
                Self::write(&mut nb, i + shift, nw, self.read(i, w));
            }
            Self::write(&mut nb, if v < 0 { 0 } else { n }, nw, v);
            self.buf = nb;
            return true;
        }
        match self.search(v) {
            Ok(_) => false,
            Err(pos) => {
                self.resize(HDR + (n + 1) * w);
                self.buf
                    .copy_within(HDR + pos * w..HDR + n * w, HDR + (pos + 1) * w);
                Self::write(&mut self.buf, pos, w, v);
                self.set_len(n + 1);
                true
            }
        }
    }

    /// Remove `v`; true if it was present.
    pub fn remove(&mut self, v: i64) -> bool {
        if width_for(v) > self.width() {
            return false;
        }
        match self.search(v) {
            Ok(pos) => {
                self.remove_at(pos);
                true
            }
            Err(_) => false,
        }
    }

    /// Remove the element at position `i` and return it.
    pub fn remove_at(&mut self, i: usize) -> Option<i64> {
        let n = self.len();
        if i >= n {
            return None;
        }
        let w = self.width();
        let v = self.read(i, w);
        self.buf
            .copy_within(HDR + (i + 1) * w..HDR + n * w, HDR + i * w);
        self.resize(HDR + (n - 1) * w);
        self.set_len(n - 1);
        Some(v)
    }

    pub fn min(&self) -> Option<i64> {
        self.get(0)
    }

    pub fn max(&self) -> Option<i64> {
        self.len().checked_sub(1).map(|i| self.at(i))
    }

    /// Ascending iterator.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = i64> + ExactSizeIterator + '_ {
        let w = self.width();
        (0..self.len()).map(move |i| self.read(i, w))
    }
}

impl IntSet {
    /// Offers its buffer to the defragmenter (see [`crate::defrag`]).
    pub fn defrag(&mut self, d: &mut crate::defrag::Defrag) {
        d.vec(&mut self.buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    #[test]
    fn layout_and_upgrade() {
        let mut s = IntSet::new();
        assert!(s.insert(5));
        assert!(s.insert(-3));
        assert!(!s.insert(5));
        assert_eq!(s.as_bytes(), &[2, 0, 0, 0, 2, 0, 0, 0, 0xFD, 0xFF, 5, 0]);
        assert!(s.insert(70000));
        assert_eq!(s.width(), 4);
        assert!(s.insert(-(1 << 40)));
        assert_eq!(s.width(), 8);
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![-(1 << 40), -3, 5, 70000]);
        assert!(!s.contains(1 << 40));
        s.validate().unwrap();
        assert!(IntSet::from_bytes(s.as_bytes().to_vec()).is_ok());
        assert!(IntSet::from_bytes(vec![2, 0, 0, 0, 2, 0, 0, 0, 5, 0, 5, 0]).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn model(ops in proptest::collection::vec((any::<bool>(), prop_oneof![
            -100i64..100, any::<i16>().prop_map(i64::from), any::<i32>().prop_map(i64::from), any::<i64>()
        ]), 1..200)) {
            let mut s = IntSet::new();
            let mut m = BTreeSet::new();
            for (add, v) in ops {
                if add { prop_assert_eq!(s.insert(v), m.insert(v)); }
                else { prop_assert_eq!(s.remove(v), m.remove(&v)); }
                s.validate().unwrap();
                prop_assert_eq!(s.len(), m.len());
            }
            prop_assert!(s.iter().eq(m.iter().copied()));
            for v in &m { prop_assert!(s.contains(*v)); }
            prop_assert_eq!(s.min(), m.first().copied());
            prop_assert_eq!(s.max(), m.last().copied());
        }
    }
}
