//! The table's list of owned segments, indexed by segment number.
//!
//! Growing never copies the list. A `Vec` that doubles copies every element
//! in one push: at 16,384 segments that was a 43 µs copy, and it fell on the
//! very insert that also doubled the directory, because both reach a power
//! of two together under uniform hashing. Here the list is kept in chunks of
//! `CHUNK` entries: the first chunk grows like a `Vec` (copies of at most
//! 8 KiB, so a small table keeps a small list), every later chunk is
//! allocated at its full size once.
//!
//! Invariants: every chunk but the last holds exactly `CHUNK` entries; the
//! last holds 1 to `CHUNK` (none only when the list is empty); chunks after
//! the first have capacity `CHUNK`, so [`SegList::bytes`] is O(1).

use std::ops::{Index, IndexMut};

const CHUNK_BITS: u32 = 10;
const CHUNK: usize = 1 << CHUNK_BITS;

pub(crate) struct SegList<P> {
    chunks: Vec<Vec<P>>,
}

impl<P> Default for SegList<P> {
    fn default() -> Self {
        SegList { chunks: Vec::new() }
    }
}

impl<P: Copy> SegList<P> {
    pub fn len(&self) -> usize {
        // Every chunk but the last is full (see the module invariants).
        self.chunks
            .last()
            .map_or(0, |c| (self.chunks.len() - 1) * CHUNK + c.len())
    }

    /// Appends `p` and returns its index.
    pub fn push(&mut self, p: P) -> usize {
        let i = self.len();
        if i.is_multiple_of(CHUNK) {
            // The first chunk starts empty and grows; later ones are full-size.
            let cap = if i == 0 { 0 } else { CHUNK };
            self.chunks.push(Vec::with_capacity(cap));
        }
        let last = self.chunks.len() - 1;
        self.chunks[last].push(p);
        i
    }

    /// Entries in index order.
    pub fn iter(&self) -> std::iter::Flatten<std::slice::Iter<'_, Vec<P>>> {
        self.chunks.iter().flatten()
    }

    /// Bytes allocated by the list, O(1).
    pub fn bytes(&self) -> usize {
        let first = self.chunks.first().map_or(0, |c| c.capacity());
        let rest = self.chunks.len().saturating_sub(1) * CHUNK;
        (first + rest) * std::mem::size_of::<P>()
            + self.chunks.capacity() * std::mem::size_of::<Vec<P>>()
    }
}

impl<P> Index<usize> for SegList<P> {
    type Output = P;
    #[inline]
    fn index(&self, i: usize) -> &P {
        &self.chunks[i >> CHUNK_BITS][i & (CHUNK - 1)]
    }
}

impl<P> IndexMut<usize> for SegList<P> {
    #[inline]
    fn index_mut(&mut self, i: usize) -> &mut P {
        &mut self.chunks[i >> CHUNK_BITS][i & (CHUNK - 1)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_iterates_and_counts_bytes_across_chunks() {
        let n = if cfg!(miri) { CHUNK + 3 } else { 3 * CHUNK + 5 };
        let mut l = SegList::default();
        for i in 0..n {
            assert_eq!(l.push(i as u64), i);
        }
        assert_eq!(l.len(), n);
        for i in 0..n {
            assert_eq!(l[i], i as u64);
        }
        l[CHUNK] = 7;
        assert_eq!(l[CHUNK], 7);
        let seen: Vec<u64> = l.iter().copied().collect();
        assert_eq!(seen.len(), n);
        assert_eq!(seen[CHUNK], 7);
        assert_eq!(seen[n - 1], (n - 1) as u64);
        let chunks = n.div_ceil(CHUNK);
        let want = chunks * CHUNK * 8 + l.chunks.capacity() * std::mem::size_of::<Vec<u64>>();
        assert_eq!(l.bytes(), want);
    }

    #[test]
    fn later_chunks_are_allocated_once_at_full_size() {
        let mut l = SegList::default();
        for i in 0..CHUNK + 1 {
            l.push(i);
        }
        let p = l.chunks[1].as_ptr();
        for i in 0..CHUNK - 1 {
            l.push(i);
        }
        // The second chunk is full and never moved.
        assert_eq!(l.chunks[1].as_ptr(), p);
        assert_eq!(l.chunks[1].len(), CHUNK);
        assert_eq!(l.chunks.len(), 2);
    }
}
