//! `ChunkMap`: an ordered map as a sorted vector of sorted chunks, with
//! exact, O(1) memory accounting.
//!
//! Used for the stream's node index (first ID -> listpack), the consumer
//! groups' pending entries lists and each consumer's own PEL. Those keys are
//! mostly appended in ascending order and removed from the front (trimming,
//! XACK of old entries), which this layout does with a short `memmove` in
//! one chunk.
//!
//! Invariants (checked by `check()` in tests):
//! * every chunk is non-empty and sorted; the last key of a chunk is below
//!   the first key of the next; `len` is the total entry count;
//! * a chunk's capacity is at most [`CHUNK`];
//! * `heap` equals the allocator size class of the outer vector's capacity
//!   plus that of every chunk's capacity (`crate::mem::block_bytes`),
//!   updated on every change. Values' own heap blocks are not counted here.
//!
//! Appending past the last key of a full last chunk starts a new chunk
//! (ascending inserts fill chunks completely); other inserts into a full
//! chunk split it in halves. A chunk left below a quarter full merges with
//! a neighbour when both fit in one chunk.

use crate::mem::block_bytes;
use std::mem::size_of;

/// Maximum entries per chunk.
pub const CHUNK: usize = 64;
const FIRST_CAP: usize = 4;

/// Position of an entry: (chunk, index in chunk).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pos {
    c: usize,
    i: usize,
}

#[derive(Debug)]
pub struct ChunkMap<K, V> {
    chunks: Vec<Vec<(K, V)>>,
    /// `firsts[c]` is the first key of `chunks[c]`: lookups binary-search
    /// this contiguous array instead of following every probed chunk's
    /// pointer (a cache miss each on large maps, half of XACK's time on a
    /// 200k-entry PEL before it existed).
    firsts: Vec<K>,
    len: usize,
    heap: usize,
}

impl<K, V> Default for ChunkMap<K, V> {
    fn default() -> Self {
        ChunkMap {
            chunks: Vec::new(),
            firsts: Vec::new(),
            len: 0,
            heap: 0,
        }
    }
}

/// A clone allocates its own vectors (capacities may differ), so the
/// accounted bytes are recomputed.
impl<K: Clone, V: Clone> Clone for ChunkMap<K, V> {
    fn clone(&self) -> Self {
        let chunks: Vec<Vec<(K, V)>> = self.chunks.clone();
        let firsts = self.firsts.clone();
        let heap = block_bytes(chunks.capacity() * size_of::<Vec<(K, V)>>())
            + block_bytes(firsts.capacity() * size_of::<K>())
            + chunks
                .iter()
                .map(|c| chunk_bytes::<K, V>(c.capacity()))
                .sum::<usize>();
        ChunkMap {
            chunks,
            firsts,
            len: self.len,
            heap,
        }
    }
}

fn chunk_bytes<K, V>(cap: usize) -> usize {
    block_bytes(cap * size_of::<(K, V)>())
}

impl<K: Ord + Copy, V> ChunkMap<K, V> {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of chunks (entry arrays).
    pub(crate) fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    /// Offers the map's two index arrays to the defragmenter (see
    /// [`crate::defrag`]).
    pub(crate) fn defrag_index(&mut self, d: &mut crate::defrag::Defrag) {
        d.vec(&mut self.chunks);
        d.vec(&mut self.firsts);
    }

    /// Offers the entry arrays of chunks `from..` (and lets `each` offer
    /// the blocks of their values) until `max_chunks` chunks were visited;
    /// returns the chunk to go on from, `None` when done. An array moved
    /// bit for bit keeps every key and value as it was.
    pub(crate) fn defrag_chunks(
        &mut self,
        from: usize,
        max_chunks: usize,
        d: &mut crate::defrag::Defrag,
        mut each: impl FnMut(&mut V, &mut crate::defrag::Defrag),
    ) -> Option<usize> {
        let end = from
            .saturating_add(max_chunks.max(1))
            .min(self.chunks.len());
        for c in self.chunks[from.min(end)..end].iter_mut() {
            d.vec(c);
            for (_, v) in c.iter_mut() {
                each(v, d);
            }
        }
        (end < self.chunks.len()).then_some(end)
    }

    /// Bytes allocated by the map itself (not by values).
    pub fn heap_bytes(&self) -> usize {
        self.heap
    }

    fn outer_bytes(&self) -> usize {
        block_bytes(self.chunks.capacity() * size_of::<Vec<(K, V)>>())
            + block_bytes(self.firsts.capacity() * size_of::<K>())
    }

    /// Index of the chunk that holds or would hold `k`.
    fn chunk_for(&self, k: &K) -> usize {
        let n = self.firsts.partition_point(|f| *f <= *k);
        n.saturating_sub(1)
    }

    fn locate(&self, k: &K) -> Option<Pos> {
        if self.chunks.is_empty() {
            return None;
        }
        let c = self.chunk_for(k);
        self.chunks[c]
            .binary_search_by(|e| e.0.cmp(k))
            .ok()
            .map(|i| Pos { c, i })
    }

    pub fn get(&self, k: &K) -> Option<&V> {
        self.locate(k).map(|p| &self.chunks[p.c][p.i].1)
    }

    pub fn get_mut(&mut self, k: &K) -> Option<&mut V> {
        let p = self.locate(k)?;
        Some(&mut self.chunks[p.c][p.i].1)
    }

    pub fn contains_key(&self, k: &K) -> bool {
        self.locate(k).is_some()
    }

    /// Insert or replace; returns the old value.
    pub fn insert(&mut self, k: K, v: V) -> Option<V> {
        if self.chunks.is_empty() {
            let before = self.outer_bytes();
            let mut c = Vec::with_capacity(FIRST_CAP);
            c.push((k, v));
            self.heap += chunk_bytes::<K, V>(c.capacity());
            self.chunks.push(c);
            self.firsts.push(k);
            self.heap = self.heap + self.outer_bytes() - before;
            self.len = 1;
            return None;
        }
        let c = self.chunk_for(&k);
        let i = match self.chunks[c].binary_search_by(|e| e.0.cmp(&k)) {
            Ok(i) => return Some(std::mem::replace(&mut self.chunks[c][i].1, v)),
            Err(i) => i,
        };
        self.len += 1;
        let clen = self.chunks[c].len();
        if clen == CHUNK {
            if c + 1 == self.chunks.len() && i == CHUNK {
                let before = self.outer_bytes();
                let mut n = Vec::with_capacity(FIRST_CAP);
                n.push((k, v));
                self.heap += chunk_bytes::<K, V>(n.capacity());
                self.chunks.push(n);
                self.firsts.push(k);
                self.heap = self.heap + self.outer_bytes() - before;
                return None;
            }
            // Split in halves.
            let before = self.outer_bytes();
            let mut right = Vec::with_capacity(CHUNK);
            right.extend(self.chunks[c].drain(CHUNK / 2..));
            self.heap += chunk_bytes::<K, V>(right.capacity());
            self.firsts.insert(c + 1, right[0].0);
            self.chunks.insert(c + 1, right);
            self.heap = self.heap + self.outer_bytes() - before;
            let (c, i) = if i > CHUNK / 2 {
                (c + 1, i - CHUNK / 2)
            } else {
                (c, i)
            };
            self.chunks[c].insert(i, (k, v));
            if i == 0 {
                self.firsts[c] = k;
            }
            return None;
        }
        let cap = self.chunks[c].capacity();
        if clen == cap {
            let new_cap = (cap * 2).min(CHUNK);
            self.chunks[c].reserve_exact(new_cap - clen);
            let got = self.chunks[c].capacity();
            self.heap = self.heap + chunk_bytes::<K, V>(got) - chunk_bytes::<K, V>(cap);
        }
        self.chunks[c].insert(i, (k, v));
        if i == 0 {
            self.firsts[c] = k;
        }
        None
    }

    pub fn remove(&mut self, k: &K) -> Option<V> {
        let p = self.locate(k)?;
        Some(self.remove_at(p).1)
    }

    /// Remove the entry at `p` (from [`Self::first_pos`] etc.).
    pub fn remove_at(&mut self, p: Pos) -> (K, V) {
        let e = self.chunks[p.c].remove(p.i);
        if p.i == 0 {
            if let Some(f) = self.chunks[p.c].first() {
                self.firsts[p.c] = f.0;
            }
        }
        self.len -= 1;
        self.after_remove(p.c);
        e
    }

    fn after_remove(&mut self, c: usize) {
        let clen = self.chunks[c].len();
        if clen == 0 {
            let before = self.outer_bytes();
            let cap = self.chunks[c].capacity();
            self.chunks.remove(c);
            self.firsts.remove(c);
            self.heap -= chunk_bytes::<K, V>(cap);
            if self.chunks.is_empty() {
                self.chunks = Vec::new();
                self.firsts = Vec::new();
            } else if self.chunks.capacity() > 2 * self.chunks.len() + 8 {
                let keep = self.chunks.len() + self.chunks.len() / 4 + 1;
                self.chunks.shrink_to(keep);
                self.firsts.shrink_to(keep);
            }
            self.heap = self.heap + self.outer_bytes() - before;
            return;
        }
        if clen < CHUNK / 4 {
            // Merge with the next (or previous) chunk when both fit.
            let pair = if c + 1 < self.chunks.len() && clen + self.chunks[c + 1].len() <= CHUNK {
                Some((c, c + 1))
            } else if c > 0 && clen + self.chunks[c - 1].len() <= CHUNK {
                Some((c - 1, c))
            } else {
                None
            };
            if let Some((a, b)) = pair {
                let before = self.outer_bytes();
                let moved = self.chunks.remove(b);
                self.firsts.remove(b);
                let bcap = moved.capacity();
                let acap = self.chunks[a].capacity();
                let need = self.chunks[a].len() + moved.len();
                if need > acap {
                    let alen = self.chunks[a].len();
                    self.chunks[a].reserve_exact(CHUNK.min(need.max(acap * 2)) - alen);
                }
                self.chunks[a].extend(moved);
                let ncap = self.chunks[a].capacity();
                self.heap = self.heap + chunk_bytes::<K, V>(ncap)
                    - chunk_bytes::<K, V>(acap)
                    - chunk_bytes::<K, V>(bcap);
                self.heap = self.heap + self.outer_bytes() - before;
                return;
            }
            let cap = self.chunks[c].capacity();
            if cap > 2 * clen.max(FIRST_CAP) {
                self.chunks[c].shrink_to(clen.max(FIRST_CAP));
                let ncap = self.chunks[c].capacity();
                self.heap = self.heap + chunk_bytes::<K, V>(ncap) - chunk_bytes::<K, V>(cap);
            }
        }
    }

    pub fn clear(&mut self) {
        *self = Self::default();
    }

    pub fn first_pos(&self) -> Option<Pos> {
        (!self.chunks.is_empty()).then_some(Pos { c: 0, i: 0 })
    }

    pub fn last_pos(&self) -> Option<Pos> {
        let c = self.chunks.len().checked_sub(1)?;
        Some(Pos {
            c,
            i: self.chunks[c].len() - 1,
        })
    }

    /// Position of the greatest key `<= k`.
    pub fn pos_le(&self, k: &K) -> Option<Pos> {
        if self.chunks.is_empty() || self.chunks[0][0].0 > *k {
            return None;
        }
        let c = self.chunk_for(k);
        let i = self.chunks[c].partition_point(|e| e.0 <= *k) - 1;
        Some(Pos { c, i })
    }

    /// Position of the smallest key `>= k`.
    pub fn pos_ge(&self, k: &K) -> Option<Pos> {
        if self.chunks.is_empty() {
            return None;
        }
        let c = self.chunk_for(k);
        let i = self.chunks[c].partition_point(|e| e.0 < *k);
        if i < self.chunks[c].len() {
            Some(Pos { c, i })
        } else if c + 1 < self.chunks.len() {
            Some(Pos { c: c + 1, i: 0 })
        } else {
            None
        }
    }

    pub fn next_pos(&self, p: Pos) -> Option<Pos> {
        if p.i + 1 < self.chunks[p.c].len() {
            Some(Pos { c: p.c, i: p.i + 1 })
        } else if p.c + 1 < self.chunks.len() {
            Some(Pos { c: p.c + 1, i: 0 })
        } else {
            None
        }
    }

    pub fn prev_pos(&self, p: Pos) -> Option<Pos> {
        if p.i > 0 {
            Some(Pos { c: p.c, i: p.i - 1 })
        } else if p.c > 0 {
            Some(Pos {
                c: p.c - 1,
                i: self.chunks[p.c - 1].len() - 1,
            })
        } else {
            None
        }
    }

    pub fn at(&self, p: Pos) -> (&K, &V) {
        let e = &self.chunks[p.c][p.i];
        (&e.0, &e.1)
    }

    pub fn at_mut(&mut self, p: Pos) -> (&K, &mut V) {
        let e = &mut self.chunks[p.c][p.i];
        (&e.0, &mut e.1)
    }

    pub fn first(&self) -> Option<(&K, &V)> {
        self.first_pos().map(|p| self.at(p))
    }

    pub fn last(&self) -> Option<(&K, &V)> {
        self.last_pos().map(|p| self.at(p))
    }

    /// Ascending iteration over all entries.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&K, &V)> + '_ {
        self.chunks.iter().flatten().map(|e| (&e.0, &e.1))
    }

    /// Ascending iteration over all entries, values mutable.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&K, &mut V)> + '_ {
        self.chunks.iter_mut().flatten().map(|e| (&e.0, &mut e.1))
    }

    /// Ascending iteration from the first key `>= k`.
    pub fn iter_from(&self, k: &K) -> impl Iterator<Item = (&K, &V)> + '_ {
        let start = self.pos_ge(k);
        let (c0, i0) = start.map_or((self.chunks.len(), 0), |p| (p.c, p.i));
        self.chunks[c0.min(self.chunks.len())..]
            .iter()
            .enumerate()
            .flat_map(move |(n, c)| c[if n == 0 { i0 } else { 0 }..].iter())
            .map(|e| (&e.0, &e.1))
    }

    /// Blocks a defrag pass offers for the map itself (tests): its index
    /// arrays that are allocated, and its entry arrays.
    #[cfg(test)]
    pub(crate) fn blocks(&self) -> (u64, u64) {
        let index = (self.chunks.capacity() > 0) as u64 + (self.firsts.capacity() > 0) as u64;
        (index, self.chunks.len() as u64)
    }

    #[cfg(test)]
    pub(crate) fn check(&self) {
        let mut n = 0;
        let mut prev: Option<K> = None;
        let mut heap = self.outer_bytes();
        assert_eq!(self.firsts.len(), self.chunks.len());
        for (c, f) in self.chunks.iter().zip(&self.firsts) {
            assert!(!c.is_empty());
            assert!(c[0].0 == *f);
            assert!(c.capacity() <= CHUNK);
            heap += chunk_bytes::<K, V>(c.capacity());
            for e in c {
                if let Some(p) = prev {
                    assert!(p < e.0);
                }
                prev = Some(e.0);
                n += 1;
            }
        }
        assert_eq!(n, self.len);
        assert_eq!(heap, self.heap);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    #[derive(Debug, Clone)]
    enum Op {
        Ins(u16, u32),
        Del(u16),
        PopFirst,
        Ge(u16),
        Le(u16),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (any::<u16>(), any::<u32>()).prop_map(|(k, v)| Op::Ins(k % 2000, v)),
            2 => any::<u16>().prop_map(|k| Op::Del(k % 2000)),
            1 => Just(Op::PopFirst),
            1 => any::<u16>().prop_map(|k| Op::Ge(k % 2100)),
            1 => any::<u16>().prop_map(|k| Op::Le(k % 2100)),
        ]
    }

    proptest! {
        #[test]
        fn matches_btreemap(ops in proptest::collection::vec(op(), 1..600)) {
            let mut m = ChunkMap::new();
            let mut model = BTreeMap::new();
            for o in ops {
                match o {
                    Op::Ins(k, v) => prop_assert_eq!(m.insert(k, v), model.insert(k, v)),
                    Op::Del(k) => prop_assert_eq!(m.remove(&k), model.remove(&k)),
                    Op::PopFirst => {
                        let got = m.first_pos().map(|p| m.remove_at(p));
                        prop_assert_eq!(got, model.pop_first());
                    }
                    Op::Ge(k) => {
                        let got = m.pos_ge(&k).map(|p| *m.at(p).0);
                        prop_assert_eq!(got, model.range(k..).next().map(|e| *e.0));
                        let it: Vec<_> = m.iter_from(&k).map(|e| (*e.0, *e.1)).collect();
                        let want: Vec<_> = model.range(k..).map(|e| (*e.0, *e.1)).collect();
                        prop_assert_eq!(it, want);
                    }
                    Op::Le(k) => {
                        let got = m.pos_le(&k).map(|p| *m.at(p).0);
                        prop_assert_eq!(got, model.range(..=k).next_back().map(|e| *e.0));
                    }
                }
                m.check();
                prop_assert_eq!(m.len(), model.len());
            }
            let all: Vec<_> = m.iter().map(|e| (*e.0, *e.1)).collect();
            let want: Vec<_> = model.iter().map(|e| (*e.0, *e.1)).collect();
            prop_assert_eq!(all, want);
            // Walk forward and backward by position.
            let mut fw = Vec::new();
            let mut p = m.first_pos();
            while let Some(q) = p { fw.push(*m.at(q).0); p = m.next_pos(q); }
            let mut bw = Vec::new();
            let mut p = m.last_pos();
            while let Some(q) = p { bw.push(*m.at(q).0); p = m.prev_pos(q); }
            bw.reverse();
            prop_assert_eq!(fw, bw);
        }
    }

    #[test]
    fn ascending_fills_chunks() {
        let mut m = ChunkMap::new();
        for k in 0..(CHUNK as u32 * 10) {
            m.insert(k, ());
        }
        m.check();
        assert_eq!(m.chunks.len(), 10);
        while let Some(p) = m.first_pos() {
            m.remove_at(p);
            m.check();
        }
        assert_eq!(m.heap_bytes(), 0);
    }
}
