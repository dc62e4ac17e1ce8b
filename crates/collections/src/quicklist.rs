//! `Quicklist`: Redis lists as a sequence of listpack nodes.
//!
//! Nodes live in a `VecDeque<Listpack>` (32 bytes per node, against Redis's
//! 32-byte `quicklistNode` plus its list links). `fill` follows
//! `list-max-listpack-size`:
//! * `fill > 0`: at most `fill` entries per node, and at most 8 KiB
//!   (Redis's `SIZE_SAFETY_LIMIT`);
//! * `fill` in `-1..=-5`: at most 4/8/16/32/64 KiB per node (values below
//!   -5 behave as -5).
//!
//! A node always accepts its first element whatever its size (Redis turns
//! elements of 1 GiB and more into "plain" nodes; here they are simply a
//! listpack node of one element).
//!
//! `list-compress-depth` is stored but **not applied**: every node stays
//! uncompressed (no LZF of interior nodes). Memory figures in
//! docs/BENCHMARKS.md are for uncompressed nodes, which is also Redis's
//! default (`list-compress-depth 0`).
//!
//! Invariants (checked by `check()` in tests):
//! * no node is empty; `len` is the sum of node lengths;
//! * every node with more than one element satisfies the fill limit;
//! * `node_heap` is the sum of the nodes' `heap_bytes()`, so
//!   [`Quicklist::heap_bytes`] (plus the deque's capacity) is O(1).
//!
//! After removals a node is merged with a neighbour when the two fit in one
//! node, so a list that shrinks does not keep many tiny nodes.

use crate::listpack::{encoded_size, Listpack, LpValue, Needle, HEADER_SIZE};
use std::collections::VecDeque;

/// Redis's per-node byte limit for positive fill values.
pub const SIZE_SAFETY_LIMIT: usize = 8192;
const BYTE_LIMITS: [usize; 5] = [4096, 8192, 16384, 32768, 65536];

/// A list of listpack nodes.
#[derive(Clone, Debug)]
pub struct Quicklist {
    nodes: VecDeque<Listpack>,
    len: usize,
    fill: i32,
    compress_depth: u32,
    node_heap: usize,
}

impl Default for Quicklist {
    fn default() -> Self {
        Self::new(-2)
    }
}

impl Quicklist {
    /// An empty list with `list-max-listpack-size = fill`.
    pub fn new(fill: i32) -> Self {
        Quicklist {
            nodes: VecDeque::new(),
            len: 0,
            fill,
            compress_depth: 0,
            node_heap: 0,
        }
    }

    pub fn fill(&self) -> i32 {
        self.fill
    }

    /// Record `list-compress-depth` (not applied: see module docs).
    pub fn set_compress_depth(&mut self, depth: u32) {
        self.compress_depth = depth;
    }

    pub fn compress_depth(&self) -> u32 {
        self.compress_depth
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Bytes allocated: every node's block plus the node array.
    pub fn heap_bytes(&self) -> usize {
        self.node_heap + self.nodes.capacity() * std::mem::size_of::<Listpack>()
    }

    /// Whether a node of `bytes` serialized bytes and `count` entries is
    /// within the fill limit.
    fn within(&self, bytes: usize, count: usize) -> bool {
        if count <= 1 {
            return true;
        }
        if self.fill >= 0 {
            count <= (self.fill as usize).max(1) && bytes <= SIZE_SAFETY_LIMIT
        } else {
            let i = ((-(self.fill as i64)) - 1).min(4) as usize;
            bytes <= BYTE_LIMITS[i]
        }
    }

    fn fits(&self, node: &Listpack, add: usize) -> bool {
        self.within(node.bytes_len() + add, node.len() + 1)
    }

    /// Run `f` on node `i`, keeping `node_heap` and `len` in step.
    fn with_node<R>(&mut self, i: usize, f: impl FnOnce(&mut Listpack) -> R) -> R {
        let n = &mut self.nodes[i];
        let (hb, lb) = (n.heap_bytes(), n.len());
        let r = f(n);
        let (ha, la) = (n.heap_bytes(), n.len());
        self.node_heap = self.node_heap + ha - hb;
        self.len = self.len + la - lb;
        r
    }

    fn new_node_with(&mut self, at: usize, s: &[u8]) {
        let mut lp = Listpack::new();
        lp.push_back(s);
        self.node_heap += lp.heap_bytes();
        self.len += 1;
        self.nodes.insert(at, lp);
    }

    fn drop_node(&mut self, i: usize) {
        let n = self.nodes.remove(i).unwrap();
        self.node_heap -= n.heap_bytes();
        self.len -= n.len();
        if self.nodes.capacity() > 2 * self.nodes.len() + 8 {
            self.nodes.shrink_to_fit();
        }
    }

    pub fn push_back(&mut self, s: &[u8]) {
        let add = encoded_size(s);
        match self.nodes.back() {
            Some(n) if self.fits(n, add) => {
                let i = self.nodes.len() - 1;
                self.with_node(i, |n| n.push_back(s));
            }
            _ => self.new_node_with(self.nodes.len(), s),
        }
    }

    pub fn push_front(&mut self, s: &[u8]) {
        let add = encoded_size(s);
        match self.nodes.front() {
            Some(n) if self.fits(n, add) => self.with_node(0, |n| n.push_front(s)),
            _ => self.new_node_with(0, s),
        }
    }

    pub fn pop_front(&mut self) -> Option<Vec<u8>> {
        if self.nodes.is_empty() {
            return None;
        }
        let v = self.with_node(0, |n| n.pop_front())?;
        if self.nodes[0].is_empty() {
            self.drop_node(0);
        }
        Some(v)
    }

    pub fn pop_back(&mut self) -> Option<Vec<u8>> {
        let i = self.nodes.len().checked_sub(1)?;
        let v = self.with_node(i, |n| n.pop_back())?;
        if self.nodes[i].is_empty() {
            self.drop_node(i);
        }
        Some(v)
    }

    /// (node, index in node) of element `index` (0..len), walking from the
    /// nearer end.
    fn locate(&self, index: usize) -> (usize, usize) {
        debug_assert!(index < self.len);
        if index < self.len / 2 {
            let mut left = index;
            for (i, n) in self.nodes.iter().enumerate() {
                if left < n.len() {
                    return (i, left);
                }
                left -= n.len();
            }
        } else {
            let mut from_end = self.len - index; // >= 1
            for i in (0..self.nodes.len()).rev() {
                let n = self.nodes[i].len();
                if from_end <= n {
                    return (i, n - from_end);
                }
                from_end -= n;
            }
        }
        unreachable!("quicklist index beyond len")
    }

    fn norm(&self, index: isize) -> Option<usize> {
        let i = if index < 0 {
            self.len as isize + index
        } else {
            index
        };
        (i >= 0 && (i as usize) < self.len).then_some(i as usize)
    }

    /// Element `index` (negative counts from the tail).
    pub fn get(&self, index: isize) -> Option<LpValue<'_>> {
        let (ni, pos) = self.locate(self.norm(index)?);
        self.nodes[ni].get(pos as isize)
    }

    /// Replace element `index` (LSET); false when out of range.
    pub fn set(&mut self, index: isize, s: &[u8]) -> bool {
        let Some(i) = self.norm(index) else {
            return false;
        };
        let (ni, pos) = self.locate(i);
        self.with_node(ni, |n| n.replace(pos as isize, s));
        self.split_if_needed(ni);
        true
    }

    /// Insert `s` so that it becomes element `index` (0..=len).
    pub fn insert(&mut self, index: usize, s: &[u8]) {
        assert!(index <= self.len, "quicklist insert out of range");
        if index == self.len {
            return self.push_back(s);
        }
        if index == 0 {
            return self.push_front(s);
        }
        let (ni, pos) = self.locate(index);
        let add = encoded_size(s);
        if pos == 0 && !self.fits(&self.nodes[ni], add) && self.fits(&self.nodes[ni - 1], add) {
            self.with_node(ni - 1, |n| n.push_back(s));
            return;
        }
        self.with_node(ni, |n| n.insert(pos, s));
        self.split_if_needed(ni);
    }

    /// Split node `i` until every part is within the limit.
    fn split_if_needed(&mut self, i: usize) {
        let n = &self.nodes[i];
        if self.within(n.bytes_len(), n.len()) {
            return;
        }
        let half = n.len() / 2;
        let mid = n.seek(half as isize).unwrap();
        let left = Listpack::from_entries(n.raw_entries(HEADER_SIZE, mid), half);
        let right = Listpack::from_entries(n.raw_entries(mid, n.end_offset()), n.len() - half);
        let old = std::mem::replace(&mut self.nodes[i], left);
        self.node_heap =
            self.node_heap - old.heap_bytes() + self.nodes[i].heap_bytes() + right.heap_bytes();
        self.nodes.insert(i + 1, right);
        self.split_if_needed(i + 1);
        self.split_if_needed(i);
    }

    /// Merge node `i` with a neighbour when both fit in one node.
    fn merge_around(&mut self, i: usize) {
        for (a, b) in [(i, i + 1), (i.wrapping_sub(1), i)] {
            if b >= self.nodes.len() || a >= self.nodes.len() {
                continue;
            }
            let (x, y) = (&self.nodes[a], &self.nodes[b]);
            if self.within(
                x.bytes_len() + y.bytes_len() - HEADER_SIZE - 1,
                x.len() + y.len(),
            ) {
                let y = self.nodes.remove(b).unwrap();
                self.node_heap -= y.heap_bytes();
                let before = self.nodes[a].heap_bytes();
                self.nodes[a].append_listpack(&y);
                self.node_heap = self.node_heap - before + self.nodes[a].heap_bytes();
                return;
            }
        }
    }

    /// Merge every pair of adjacent nodes that fits in one node.
    fn merge_all(&mut self) {
        let mut i = 0;
        while i + 1 < self.nodes.len() {
            let before = self.nodes.len();
            self.merge_around(i);
            if self.nodes.len() == before {
                i += 1;
            }
        }
    }

    /// Delete `count` elements from `start` (clipped); returns how many.
    pub fn remove_range(&mut self, start: usize, count: usize) -> usize {
        if start >= self.len || count == 0 {
            return 0;
        }
        let mut left = count.min(self.len - start);
        let total = left;
        let (mut ni, mut pos) = self.locate(start);
        while left > 0 {
            let n = self.nodes[ni].len();
            let k = left.min(n - pos);
            if k == n {
                self.drop_node(ni);
            } else {
                self.with_node(ni, |lp| lp.delete_range(pos as isize, k));
                ni += 1;
            }
            left -= k;
            pos = 0;
        }
        if !self.nodes.is_empty() {
            let at = ni.min(self.nodes.len() - 1);
            self.merge_around(at);
            if at > 0 {
                self.merge_around(at - 1);
            }
        }
        total
    }

    /// Remove element `index`; returns it.
    pub fn remove(&mut self, index: isize) -> Option<Vec<u8>> {
        let i = self.norm(index)?;
        let v = self.get(i as isize)?.to_vec();
        self.remove_range(i, 1);
        Some(v)
    }

    /// Keep only elements `start..end` (LTRIM, after index normalisation).
    pub fn trim(&mut self, start: usize, end: usize) {
        let end = end.min(self.len);
        if start >= end {
            self.remove_range(0, self.len);
            return;
        }
        self.remove_range(end, self.len - end);
        self.remove_range(0, start);
    }

    /// LREM: remove up to `count` elements equal to `s` (from the head when
    /// `count > 0`, from the tail when `< 0`, all when 0).
    pub fn remove_value(&mut self, s: &[u8], count: i64) -> usize {
        let limit = if count == 0 {
            usize::MAX
        } else {
            count.unsigned_abs() as usize
        };
        let needle = Needle::new(s);
        let mut removed = 0;
        let rev = count < 0;
        let mut k = 0;
        while k < self.nodes.len() && removed < limit {
            let ni = if rev { self.nodes.len() - 1 - k } else { k };
            let got = self.with_node(ni, |lp| {
                let mut r = 0;
                if rev {
                    let mut off = lp.end_offset();
                    while r < limit - removed {
                        let Some(p) = lp.prev_offset(off) else { break };
                        if needle.matches(lp.entry_at(p).0) {
                            lp.delete_at_offset(p, 1);
                            r += 1;
                        }
                        off = p;
                    }
                } else {
                    let mut off = lp.first_offset();
                    while off < lp.end_offset() && r < limit - removed {
                        let (v, next) = lp.entry_at(off);
                        if needle.matches(v) {
                            lp.delete_at_offset(off, 1);
                            r += 1;
                        } else {
                            off = next;
                        }
                    }
                }
                r
            });
            removed += got;
            if self.nodes[ni].is_empty() {
                // The next unvisited node now has the same k in both directions.
                self.drop_node(ni);
                continue;
            }
            k += 1;
        }
        if removed > 0 {
            self.merge_all();
        }
        removed
    }

    /// All elements, head to tail (`.rev()` for tail to head).
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = LpValue<'_>> + '_ {
        self.nodes.iter().flat_map(|n| n.iter())
    }

    /// Elements from `index` towards the tail (nothing when `index >= len`).
    /// Seeks once (nearer end of the list, then of the node), then walks.
    pub fn iter_from(&self, index: usize) -> impl Iterator<Item = LpValue<'_>> + '_ {
        let (first, rest) = if index < self.len {
            let (ni, pos) = self.locate(index);
            (Some(self.nodes[ni].iter_at(pos)), ni + 1)
        } else {
            (None, self.nodes.len())
        };
        first
            .into_iter()
            .flatten()
            .chain(self.nodes.range(rest..).flat_map(|n| n.iter()))
    }

    /// Elements from `index` towards the head (from the tail when
    /// `index >= len`).
    pub fn iter_rev_from(&self, index: usize) -> impl Iterator<Item = LpValue<'_>> + '_ {
        let (first, rest) = if index < self.len {
            let (ni, pos) = self.locate(index);
            (Some(self.nodes[ni].iter_upto(pos)), ni)
        } else {
            (None, self.nodes.len())
        };
        first
            .into_iter()
            .flat_map(|it| it.rev())
            .chain(self.nodes.range(..rest).rev().flat_map(|n| n.iter().rev()))
    }

    /// Remove and return up to `n` elements from the head, in pop order.
    pub fn pop_front_n(&mut self, n: usize) -> Vec<Vec<u8>> {
        if n == 1 {
            return self.pop_front().into_iter().collect();
        }
        let v: Vec<Vec<u8>> = self.iter().take(n).map(|x| x.to_vec()).collect();
        self.remove_range(0, v.len());
        v
    }

    /// Remove and return up to `n` elements from the tail, in pop order
    /// (last element first).
    pub fn pop_back_n(&mut self, n: usize) -> Vec<Vec<u8>> {
        if n == 1 {
            return self.pop_back().into_iter().collect();
        }
        let v: Vec<Vec<u8>> = self.iter().rev().take(n).map(|x| x.to_vec()).collect();
        self.remove_range(self.len - v.len(), v.len());
        v
    }

    /// LINSERT: insert `s` before (or after) the first element equal to
    /// `pivot`, scanning from the head. False when no element matches.
    pub fn insert_at_pivot(&mut self, pivot: &Needle<'_>, s: &[u8], after: bool) -> bool {
        for ni in 0..self.nodes.len() {
            let n = &self.nodes[ni];
            let (mut off, end) = (n.first_offset(), n.end_offset());
            while off < end {
                let (v, next) = n.entry_at(off);
                if pivot.matches(v) {
                    self.insert_in_node(ni, if after { next } else { off }, s);
                    return true;
                }
                off = next;
            }
        }
        false
    }

    /// Insert `s` at byte offset `off` of node `ni`. A full node hands an
    /// element at its edge to the neighbour (or a new node) instead of
    /// splitting; otherwise it splits after the insert.
    fn insert_in_node(&mut self, ni: usize, off: usize, s: &[u8]) {
        let add = encoded_size(s);
        let n = &self.nodes[ni];
        if !self.fits(n, add) {
            if off == n.end_offset() {
                match self.nodes.get(ni + 1) {
                    Some(next) if self.fits(next, add) => {
                        self.with_node(ni + 1, |x| x.push_front(s))
                    }
                    _ => self.new_node_with(ni + 1, s),
                }
                return;
            }
            if off == n.first_offset() {
                match ni.checked_sub(1).map(|p| &self.nodes[p]) {
                    Some(prev) if self.fits(prev, add) => {
                        self.with_node(ni - 1, |x| x.push_back(s))
                    }
                    _ => self.new_node_with(ni, s),
                }
                return;
            }
        }
        self.with_node(ni, |x| x.insert_at_offset(off, s));
        self.split_if_needed(ni);
    }

    /// The nodes (for RDB save: each is a Redis listpack).
    pub fn nodes(&self) -> impl Iterator<Item = &Listpack> {
        self.nodes.iter()
    }

    /// Append a node loaded from RDB (skipped when empty).
    pub fn push_node(&mut self, lp: Listpack) {
        if lp.is_empty() {
            return;
        }
        self.len += lp.len();
        self.node_heap += lp.heap_bytes();
        self.nodes.push_back(lp);
    }

    #[cfg(test)]
    fn check(&self) {
        let mut len = 0;
        let mut heap = 0;
        for n in &self.nodes {
            n.validate().unwrap();
            assert!(!n.is_empty());
            assert!(self.within(n.bytes_len(), n.len()), "node over limit");
            len += n.len();
            heap += n.heap_bytes();
        }
        assert_eq!((len, heap), (self.len, self.node_heap));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
        PushBack(Vec<u8>),
        PushFront(Vec<u8>),
        PopBack,
        PopFront,
        Insert(usize, Vec<u8>),
        Set(isize, Vec<u8>),
        Remove(isize),
        RemoveRange(usize, usize),
        Trim(usize, usize),
        Lrem(Vec<u8>, i64),
        InsertPivot(Vec<u8>, Vec<u8>, bool),
        PopN(bool, usize),
    }

    fn elem() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            4 => (0i64..20).prop_map(|v| v.to_string().into_bytes()),
            2 => proptest::collection::vec(b'a'..b'd', 0..4),
            1 => (0usize..3).prop_map(|k| vec![b'x'; [100, 3000, 9000][k]]),
        ]
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => elem().prop_map(Op::PushBack),
            4 => elem().prop_map(Op::PushFront),
            1 => Just(Op::PopBack),
            1 => Just(Op::PopFront),
            3 => (any::<usize>(), elem()).prop_map(|(i, e)| Op::Insert(i, e)),
            2 => (-50isize..50, elem()).prop_map(|(i, e)| Op::Set(i, e)),
            1 => (-50isize..50).prop_map(Op::Remove),
            1 => (0usize..60, 0usize..30).prop_map(|(a, b)| Op::RemoveRange(a, b)),
            1 => (0usize..10, 0usize..200).prop_map(|(a, b)| Op::Trim(a, b)),
            1 => (elem(), -3i64..3).prop_map(|(e, c)| Op::Lrem(e, c)),
            2 => (elem(), elem(), any::<bool>()).prop_map(|(p, e, a)| Op::InsertPivot(p, e, a)),
            1 => (any::<bool>(), 0usize..40).prop_map(|(h, n)| Op::PopN(h, n)),
        ]
    }

    fn norm(len: usize, i: isize) -> Option<usize> {
        let j = if i < 0 { len as isize + i } else { i };
        (j >= 0 && (j as usize) < len).then_some(j as usize)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(40))]
        #[test]
        fn model(fill in prop_oneof![Just(-1i32), Just(-2), Just(1), Just(3), Just(5)],
                 ops in proptest::collection::vec(op(), 1..300)) {
            let mut q = Quicklist::new(fill);
            let mut m: Vec<Vec<u8>> = Vec::new();
            for o in ops {
                match o {
                    Op::PushBack(e) => { q.push_back(&e); m.push(e); }
                    Op::PushFront(e) => { q.push_front(&e); m.insert(0, e); }
                    Op::PopBack => prop_assert_eq!(q.pop_back(), m.pop()),
                    Op::PopFront => prop_assert_eq!(q.pop_front(), if m.is_empty() { None } else { Some(m.remove(0)) }),
                    Op::Insert(i, e) => { let i = i % (m.len() + 1); q.insert(i, &e); m.insert(i, e); }
                    Op::Set(i, e) => {
                        let r = q.set(i, &e);
                        match norm(m.len(), i) { Some(j) => { prop_assert!(r); m[j] = e; } None => prop_assert!(!r) }
                    }
                    Op::Remove(i) => {
                        let want = norm(m.len(), i).map(|j| m.remove(j));
                        prop_assert_eq!(q.remove(i), want);
                    }
                    Op::RemoveRange(a, n) => {
                        let e = (a + n).min(m.len());
                        let want = e.saturating_sub(a);
                        if a < m.len() { m.drain(a..e); }
                        prop_assert_eq!(q.remove_range(a, n), want);
                    }
                    Op::Trim(a, b) => {
                        q.trim(a, b);
                        let b = b.min(m.len());
                        m = if a < b { m[a..b].to_vec() } else { Vec::new() };
                    }
                    Op::Lrem(e, c) => {
                        let limit = if c == 0 { usize::MAX } else { c.unsigned_abs() as usize };
                        let mut hits: Vec<usize> = m.iter().enumerate().filter(|(_, x)| **x == e).map(|(i, _)| i).collect();
                        if c < 0 { hits.reverse(); }
                        hits.truncate(limit);
                        hits.sort_unstable();
                        for &h in hits.iter().rev() { m.remove(h); }
                        prop_assert_eq!(q.remove_value(&e, c), hits.len());
                    }
                    Op::InsertPivot(p, e, after) => {
                        let at = m.iter().position(|x| *x == p);
                        prop_assert_eq!(q.insert_at_pivot(&Needle::new(&p), &e, after), at.is_some());
                        if let Some(i) = at { m.insert(if after { i + 1 } else { i }, e) }
                    }
                    Op::PopN(head, n) => {
                        let k = n.min(m.len());
                        if head {
                            let want: Vec<Vec<u8>> = m.drain(..k).collect();
                            prop_assert_eq!(q.pop_front_n(n), want);
                        } else {
                            let want: Vec<Vec<u8>> = m.drain(m.len() - k..).rev().collect();
                            prop_assert_eq!(q.pop_back_n(n), want);
                        }
                    }
                }
                q.check();
                prop_assert_eq!(q.len(), m.len());
            }
            let fwd: Vec<Vec<u8>> = q.iter().map(|v| v.to_vec()).collect();
            prop_assert_eq!(&fwd, &m);
            let back: Vec<Vec<u8>> = q.iter().rev().map(|v| v.to_vec()).collect();
            prop_assert_eq!(back, m.iter().rev().cloned().collect::<Vec<_>>());
            for (i, x) in m.iter().enumerate() {
                prop_assert_eq!(&q.get(i as isize).unwrap().to_vec(), x);
            }
            for k in 0..=m.len() + 1 {
                let from: Vec<Vec<u8>> = q.iter_from(k).map(|v| v.to_vec()).collect();
                prop_assert_eq!(&from[..], &m[k.min(m.len())..]);
                let rv: Vec<Vec<u8>> = q.iter_rev_from(k).map(|v| v.to_vec()).collect();
                let upto = (k + 1).min(m.len());
                prop_assert_eq!(rv, m[..upto].iter().rev().cloned().collect::<Vec<_>>());
            }
        }
    }

    #[test]
    fn node_sizes() {
        let mut q = Quicklist::new(-2);
        for i in 0..100_000 {
            q.push_back((i % 100).to_string().as_bytes());
        }
        q.check();
        // 2-byte entries, 8 KiB nodes: ~4000 per node.
        assert!(q.node_count() < 30, "{}", q.node_count());
        let mut p = Quicklist::new(128);
        for i in 0..1000 {
            p.push_front(i.to_string().as_bytes());
        }
        assert_eq!(p.node_count(), 8);
        assert_eq!(p.get(0).unwrap(), LpValue::Int(999));
        assert_eq!(p.get(-1).unwrap(), LpValue::Int(0));
    }
}
