//! `Quicklist`: Redis lists as a sequence of listpack nodes, the interior
//! ones LZF-compressed per `list-compress-depth`.
//!
//! Nodes live in a `VecDeque<Node>` (32 bytes per node, against Redis's
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
//! Compression (`list-compress-depth`, fixed when the list is created, as
//! Redis's `quicklistCreate` takes the server setting): the `depth` nodes at
//! each end stay plain, every node between them is stored LZF-compressed
//! ([`node`], [`lzf`]) when Redis's rule says it pays (listpack of at least
//! 48 bytes, compressed block more than 8 bytes smaller); a node where it
//! does not pay is kept plain and marked so it is not retried until it
//! changes.
//!
//! **Petrel-specific:** `list-compress-depth 0` (Redis: "never compress")
//! uses `depth` = [`AUTO_DEPTH`] (8): lists of up to 16 nodes (about 9,000
//! small elements at the default node size) are never compressed, and a
//! longer list keeps its 8 nodes at each end plain, so pushes, pops and
//! ranges near the ends never touch a compressed node; only the middle of
//! large lists is compressed. Clients see the same replies; DEBUG OBJECT
//! still reports `ql_compressed:0` (the configured depth), MEMORY USAGE
//! the real, smaller size. See docs/BENCHMARKS.md, "List compression".
//!
//! Reads go through visitors ([`Quicklist::get_with`],
//! [`Quicklist::for_each_from`], [`Quicklist::for_each_rev_from`]): a
//! plain node is read in place; a compressed one is decompressed into a
//! buffer local to the call (the stored node stays compressed, so reads
//! never need `&mut` and the list stays `Sync`). Writes decompress the
//! nodes they touch in place and recompress the interior ones afterwards.
//!
//! Invariants (checked by `check()` in tests):
//! * no node is empty; `len` is the sum of node lengths;
//! * every node with more than one element satisfies the fill limit
//!   (measured on the uncompressed listpack size);
//! * node `i` of `n` is plain when `i < depth` or `i >= n - depth`; every
//!   other node is compressed, or plain and not compressible by the rule
//!   above;
//! * `node_heap` is the sum of the nodes' `heap_bytes()` (listpack
//!   capacities, or the allocator size class of each compressed block), so
//!   [`Quicklist::heap_bytes`] (plus the deque's capacity) is O(1).
//!
//! After removals a node is merged with a neighbour when the two fit in one
//! node, so a list that shrinks does not keep many tiny nodes.

pub mod lzf;
pub mod node;
#[cfg(test)]
mod tests;

use crate::listpack::{encoded_size, Listpack, LpValue, Needle, HEADER_SIZE};
pub use node::Node;
use std::collections::VecDeque;
use std::ops::Range;

/// Redis's per-node byte limit for positive fill values.
pub const SIZE_SAFETY_LIMIT: usize = 8192;
const BYTE_LIMITS: [usize; 5] = [4096, 8192, 16384, 32768, 65536];

/// A list of listpack nodes.
#[derive(Clone, Debug)]
pub struct Quicklist {
    nodes: VecDeque<Node>,
    len: usize,
    fill: i32,
    /// Effective depth (never 0, see [`AUTO_DEPTH`]).
    depth: usize,
    /// `list-compress-depth` as configured (DEBUG OBJECT reports it).
    configured: u32,
    /// False only while every node is known to be plain (`Node::Raw`).
    packed: bool,
    node_heap: usize,
}

/// Plain nodes kept at each end when `list-compress-depth` is 0.
pub const AUTO_DEPTH: usize = 8;

impl Default for Quicklist {
    fn default() -> Self {
        Self::new(-2)
    }
}

/// Figures for DEBUG OBJECT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QuicklistStats {
    pub nodes: usize,
    pub compressed_nodes: usize,
    /// Sum of the nodes' uncompressed listpack sizes.
    pub uncompressed_bytes: usize,
}

impl Quicklist {
    /// An empty list with `list-max-listpack-size = fill` and
    /// `list-compress-depth` 0 (see [`AUTO_DEPTH`]).
    pub fn new(fill: i32) -> Self {
        Quicklist {
            nodes: VecDeque::new(),
            len: 0,
            fill,
            depth: AUTO_DEPTH,
            configured: 0,
            packed: false,
            node_heap: 0,
        }
    }

    pub fn fill(&self) -> i32 {
        self.fill
    }

    /// Set `list-compress-depth` (Redis caps it at 65535; 0 means
    /// [`AUTO_DEPTH`]) and bring every node in line with it.
    pub fn set_compress_depth(&mut self, depth: u32) {
        self.configured = depth.min(u16::MAX as u32);
        self.depth = match self.configured {
            0 => AUTO_DEPTH,
            d => d as usize,
        };
        self.packed = true;
        self.settle(0..self.nodes.len());
    }

    /// `list-compress-depth` as configured.
    pub fn compress_depth(&self) -> u32 {
        self.configured
    }

    /// The depth applied: plain nodes kept at each end.
    pub fn effective_depth(&self) -> usize {
        self.depth
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
        self.node_heap + self.nodes.capacity() * std::mem::size_of::<Node>()
    }

    /// Node count, compressed nodes and uncompressed bytes (O(nodes)).
    pub fn stats(&self) -> QuicklistStats {
        QuicklistStats {
            nodes: self.nodes.len(),
            compressed_nodes: self.nodes.iter().filter(|n| n.is_compressed()).count(),
            uncompressed_bytes: self.nodes.iter().map(Node::bytes_len).sum(),
        }
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

    fn fits(&self, node: &Node, add: usize) -> bool {
        self.within(node.bytes_len() + add, node.len() + 1)
    }

    /// Run `f` on node `i`, keeping `node_heap` and `len` in step.
    #[inline]
    fn touch<R>(&mut self, i: usize, f: impl FnOnce(&mut Node) -> R) -> R {
        let n = &mut self.nodes[i];
        let (hb, lb) = (n.heap_bytes(), n.len());
        let r = f(n);
        let (ha, la) = (n.heap_bytes(), n.len());
        self.node_heap = self.node_heap + ha - hb;
        self.len = self.len + la - lb;
        r
    }

    /// Run `f` on node `i`'s listpack, decompressing it first (the caller
    /// settles compression afterwards).
    #[inline]
    fn with_node<R>(&mut self, i: usize, f: impl FnOnce(&mut Listpack) -> R) -> R {
        self.touch(i, |n| f(n.plain_mut()))
    }

    /// Restore the compression invariant after a change to the nodes in
    /// `touched` (the nodes that replaced them, after splits and merges):
    /// nodes near both ends and near `touched` may have crossed the depth
    /// boundary. O(depth + touched); nothing to do while the list is too
    /// short to have interior nodes and all its nodes are plain.
    #[inline]
    fn settle(&mut self, touched: Range<usize>) {
        if !self.packed && self.nodes.len() <= 2 * self.depth {
            return;
        }
        self.settle_slow(touched);
    }

    fn settle_slow(&mut self, touched: Range<usize>) {
        let n = self.nodes.len();
        let d = self.depth;
        // With at most 2 * depth + 2 nodes the two end zones cover every
        // node, so afterwards all are plain when there is no interior.
        self.packed = n > 2 * d;
        let head = 0..(d + 1).min(n);
        let tail = n.saturating_sub(d + 1).max(head.end)..n;
        // Nodes up to `d + 1` before or after the touched ones may have
        // crossed the depth boundary when the touched range grew or shrank.
        let mid = touched.start.saturating_sub(d + 1).max(head.end)
            ..touched.end.saturating_add(d + 1).min(tail.start);
        for i in head.chain(mid).chain(tail) {
            let interior = i >= d && n - i > d;
            match (&self.nodes[i], interior) {
                (Node::Raw(_), true) => self.touch(i, Node::compress),
                (Node::Raw(_), false) | (_, true) => {}
                (_, false) => self.touch(i, Node::decompress),
            }
        }
    }

    fn new_node_with(&mut self, at: usize, s: &[u8]) {
        let mut lp = Listpack::new();
        lp.push_back(s);
        self.node_heap += lp.heap_bytes();
        self.len += 1;
        self.nodes.insert(at, Node::Raw(lp));
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
            _ => {
                self.new_node_with(self.nodes.len(), s);
                self.settle(0..0);
            }
        }
    }

    pub fn push_front(&mut self, s: &[u8]) {
        let add = encoded_size(s);
        match self.nodes.front() {
            Some(n) if self.fits(n, add) => self.with_node(0, |n| n.push_front(s)),
            _ => {
                self.new_node_with(0, s);
                self.settle(0..0);
            }
        }
    }

    pub fn pop_front(&mut self) -> Option<Vec<u8>> {
        if self.nodes.is_empty() {
            return None;
        }
        let v = self.with_node(0, |n| n.pop_front())?;
        if self.nodes[0].is_empty() {
            self.drop_node(0);
            self.settle(0..0);
        }
        Some(v)
    }

    pub fn pop_back(&mut self) -> Option<Vec<u8>> {
        let i = self.nodes.len().checked_sub(1)?;
        let v = self.with_node(i, |n| n.pop_back())?;
        if self.nodes[i].is_empty() {
            self.drop_node(i);
            self.settle(0..0);
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

    /// Element `index` (negative counts from the tail), passed to `f`.
    pub fn get_with<R>(&self, index: isize, f: impl FnOnce(LpValue<'_>) -> R) -> Option<R> {
        let (ni, pos) = self.locate(self.norm(index)?);
        Some(self.nodes[ni].get_with(pos, f))
    }

    /// Element `index` as bytes (integers in decimal).
    pub fn get_vec(&self, index: isize) -> Option<Vec<u8>> {
        self.get_with(index, |v| v.to_vec())
    }

    /// Replace element `index` (LSET); false when out of range.
    pub fn set(&mut self, index: isize, s: &[u8]) -> bool {
        let Some(i) = self.norm(index) else {
            return false;
        };
        let (ni, pos) = self.locate(i);
        self.with_node(ni, |n| n.replace(pos as isize, s));
        let k = self.split_if_needed(ni);
        self.settle(ni..ni + k);
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
            self.settle(ni - 1..ni);
            return;
        }
        self.with_node(ni, |n| n.insert(pos, s));
        let k = self.split_if_needed(ni);
        self.settle(ni..ni + k);
    }

    /// Split plain node `i` until every part is within the limit; returns
    /// how many nodes it became.
    fn split_if_needed(&mut self, i: usize) -> usize {
        let n = self.nodes[i].as_plain().expect("split of a plain node");
        if self.within(n.bytes_len(), n.len()) {
            return 1;
        }
        let half = n.len() / 2;
        let mid = n.seek(half as isize).unwrap();
        let left = Listpack::from_entries(n.raw_entries(HEADER_SIZE, mid), half);
        let right = Listpack::from_entries(n.raw_entries(mid, n.end_offset()), n.len() - half);
        let (lh, rh) = (left.heap_bytes(), right.heap_bytes());
        let old = std::mem::replace(&mut self.nodes[i], Node::Raw(left));
        self.node_heap = self.node_heap - old.heap_bytes() + lh + rh;
        self.nodes.insert(i + 1, Node::Raw(right));
        let r = self.split_if_needed(i + 1);
        self.split_if_needed(i) + r
    }

    /// Merge node `i` with a neighbour when both fit in one node; returns
    /// the index of the merged node.
    fn merge_around(&mut self, i: usize) -> Option<usize> {
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
                self.len -= y.len();
                let y = y.into_plain();
                self.with_node(a, |x| x.append_listpack(&y));
                return Some(a);
            }
        }
        None
    }

    /// Merge every pair of adjacent nodes that fits in one node.
    fn merge_all(&mut self) {
        let mut i = 0;
        while i + 1 < self.nodes.len() {
            if self.merge_around(i).is_none() {
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
        let (first, mut pos) = self.locate(start);
        let mut ni = first;
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
        self.settle(first.saturating_sub(2)..first + 3);
        total
    }

    /// Remove element `index`; returns it.
    pub fn remove(&mut self, index: isize) -> Option<Vec<u8>> {
        let i = self.norm(index)?;
        let v = self.get_vec(i as isize)?;
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
    /// `count > 0`, from the tail when `< 0`, all when 0). A compressed
    /// node without a match is left compressed.
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
        let mut buf = Vec::new();
        while k < self.nodes.len() && removed < limit {
            let ni = if rev { self.nodes.len() - 1 - k } else { k };
            if self.nodes[ni].is_compressed()
                && !self.nodes[ni].with_view(&mut buf, |lp| lp.iter().any(|v| needle.matches(v)))
            {
                k += 1;
                continue;
            }
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
        self.settle(0..self.nodes.len());
        removed
    }

    /// Call `f` on the elements from `index` towards the tail until it
    /// returns false (nothing when `index >= len`). Seeks once (nearer end
    /// of the list, then of the node), then walks.
    pub fn for_each_from(&self, index: usize, mut f: impl FnMut(LpValue<'_>) -> bool) {
        if index >= self.len {
            return;
        }
        let (first, pos) = self.locate(index);
        let mut buf = Vec::new();
        let mut go = true;
        for (k, n) in self.nodes.range(first..).enumerate() {
            let from = if k == 0 { pos } else { 0 };
            n.with_view(&mut buf, |lp| {
                for v in lp.iter_at(from) {
                    if !f(v) {
                        go = false;
                        break;
                    }
                }
            });
            if !go {
                return;
            }
        }
    }

    /// Call `f` on the elements from `index` towards the head (from the
    /// tail when `index >= len`) until it returns false.
    pub fn for_each_rev_from(&self, index: usize, mut f: impl FnMut(LpValue<'_>) -> bool) {
        if self.len == 0 {
            return;
        }
        let (last, pos) = self.locate(index.min(self.len - 1));
        let mut buf = Vec::new();
        let mut go = true;
        for (k, n) in self.nodes.range(..=last).rev().enumerate() {
            n.with_view(&mut buf, |lp| {
                let it = if k == 0 { lp.iter_upto(pos) } else { lp.iter() };
                for v in it.rev() {
                    if !f(v) {
                        go = false;
                        break;
                    }
                }
            });
            if !go {
                return;
            }
        }
    }

    /// Every element head to tail, as bytes.
    pub fn to_vecs(&self) -> Vec<Vec<u8>> {
        let mut out = Vec::with_capacity(self.len);
        self.for_each_from(0, |v| {
            out.push(v.to_vec());
            true
        });
        out
    }

    /// Remove and return up to `n` elements from the head, in pop order.
    pub fn pop_front_n(&mut self, n: usize) -> Vec<Vec<u8>> {
        if n <= 1 {
            return if n == 0 {
                Vec::new()
            } else {
                self.pop_front().into_iter().collect()
            };
        }
        let mut v = Vec::with_capacity(n.min(self.len));
        self.for_each_from(0, |x| {
            v.push(x.to_vec());
            v.len() < n
        });
        self.remove_range(0, v.len());
        v
    }

    /// Remove and return up to `n` elements from the tail, in pop order
    /// (last element first).
    pub fn pop_back_n(&mut self, n: usize) -> Vec<Vec<u8>> {
        if n <= 1 {
            return if n == 0 {
                Vec::new()
            } else {
                self.pop_back().into_iter().collect()
            };
        }
        let mut v = Vec::with_capacity(n.min(self.len));
        self.for_each_rev_from(usize::MAX, |x| {
            v.push(x.to_vec());
            v.len() < n
        });
        self.remove_range(self.len - v.len(), v.len());
        v
    }

    /// LINSERT: insert `s` before (or after) the first element equal to
    /// `pivot`, scanning from the head. False when no element matches.
    pub fn insert_at_pivot(&mut self, pivot: &Needle<'_>, s: &[u8], after: bool) -> bool {
        let mut buf = Vec::new();
        for ni in 0..self.nodes.len() {
            let hit = self.nodes[ni].with_view(&mut buf, |n| {
                let (mut off, end) = (n.first_offset(), n.end_offset());
                while off < end {
                    let (v, next) = n.entry_at(off);
                    if pivot.matches(v) {
                        return Some(if after { next } else { off });
                    }
                    off = next;
                }
                None
            });
            if let Some(off) = hit {
                self.insert_in_node(ni, off, s);
                return true;
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
            if off == n.bytes_len() - 1 {
                match self.nodes.get(ni + 1) {
                    Some(next) if self.fits(next, add) => {
                        self.with_node(ni + 1, |x| x.push_front(s))
                    }
                    _ => self.new_node_with(ni + 1, s),
                }
                return self.settle(ni + 1..ni + 2);
            }
            if off == HEADER_SIZE {
                match ni.checked_sub(1).map(|p| &self.nodes[p]) {
                    Some(prev) if self.fits(prev, add) => {
                        self.with_node(ni - 1, |x| x.push_back(s));
                        return self.settle(ni - 1..ni);
                    }
                    _ => self.new_node_with(ni, s),
                }
                return self.settle(ni..ni + 1);
            }
        }
        self.with_node(ni, |x| x.insert_at_offset(off, s));
        let k = self.split_if_needed(ni);
        self.settle(ni..ni + k);
    }

    /// The nodes (for RDB save: each is a Redis listpack, plain or LZF).
    pub fn nodes(&self) -> impl Iterator<Item = &Node> {
        self.nodes.iter()
    }

    /// A list made of `nodes` in order (nodes loaded from an RDB file or a
    /// DUMP payload), with `list-max-listpack-size = fill` and
    /// `list-compress-depth = depth`. Empty nodes are skipped; a node over
    /// the fill limit is split (its elements appended one by one); then
    /// every node is brought in line with the compress depth, so a
    /// compressed node that stays interior is kept as it is, without being
    /// decompressed and compressed again.
    ///
    /// The caller guarantees the node invariants of [`node`]: a
    /// `Node::Lzf` decompresses to a valid listpack of `raw_len` bytes and
    /// `count` elements, and is smaller than `raw_len` by more than
    /// `MIN_COMPRESS_IMPROVE` with `raw_len >= MIN_COMPRESS_BYTES`.
    pub fn from_nodes(fill: i32, depth: u32, nodes: impl IntoIterator<Item = Node>) -> Quicklist {
        let mut ql = Quicklist::new(fill);
        ql.configured = depth.min(u16::MAX as u32);
        ql.depth = match ql.configured {
            0 => AUTO_DEPTH,
            d => d as usize,
        };
        for n in nodes {
            if n.is_empty() {
                continue;
            }
            if ql.within(n.bytes_len(), n.len()) {
                ql.packed |= !matches!(n, Node::Raw(_));
                ql.len += n.len();
                ql.node_heap += n.heap_bytes();
                ql.nodes.push_back(n);
            } else {
                let mut buf = Vec::new();
                n.with_view(&mut buf, |lp| {
                    for v in lp.iter() {
                        let mut b = [0u8; 20];
                        ql.push_back(crate::value::hash::lp_bytes(v, &mut b));
                    }
                });
            }
        }
        ql.packed = true;
        ql.settle(0..ql.nodes.len());
        ql
    }

    /// Append a node loaded from RDB (skipped when empty).
    pub fn push_node(&mut self, lp: Listpack) {
        if lp.is_empty() {
            return;
        }
        self.len += lp.len();
        self.node_heap += lp.heap_bytes();
        self.nodes.push_back(Node::Raw(lp));
        self.settle(0..0);
    }

    #[cfg(test)]
    fn check(&self) {
        let mut len = 0;
        let mut heap = 0;
        let (n, d) = (self.nodes.len(), self.depth);
        for (i, node) in self.nodes.iter().enumerate() {
            assert!(!node.is_empty());
            assert!(self.within(node.bytes_len(), node.len()), "node over limit");
            let lp = node.clone().into_plain();
            lp.validate().unwrap();
            assert_eq!((lp.len(), lp.bytes_len()), (node.len(), node.bytes_len()));
            let interior = i >= d && n - i > d;
            match node {
                Node::Raw(_) => assert!(
                    !interior,
                    "plain interior node {i} of {n} (depth {d}): {:?}",
                    self.nodes
                        .iter()
                        .map(|x| (x.len(), x.bytes_len(), x.is_compressed()))
                        .collect::<Vec<_>>()
                ),
                Node::Stuck(lp) => {
                    assert!(interior, "stuck edge node {i} of {n} (depth {d})");
                    assert!(!Node::compressible(lp), "stuck node {i} compresses");
                }
                Node::Lzf { .. } => {
                    assert!(interior, "compressed edge node {i} of {n} (depth {d})")
                }
            }
            len += node.len();
            heap += node.heap_bytes();
        }
        assert_eq!((len, heap), (self.len, self.node_heap));
    }
}
