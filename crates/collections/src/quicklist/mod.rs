//! `Quicklist`: Redis lists as a sequence of nodes, each a listpack
//! ("packed") or one large element on its own ("plain"), the interior ones
//! LZF-compressed per `list-compress-depth`.
//!
//! Nodes live in a `VecDeque<Node>` (32 bytes per node, against Redis's
//! 32-byte `quicklistNode` plus its list links). `fill` follows
//! `list-max-listpack-size`:
//! * `fill > 0`: at most `fill` entries per node, and at most 8 KiB
//!   (Redis's `SIZE_SAFETY_LIMIT`);
//! * `fill` in `-1..=-5`: at most 4/8/16/32/64 KiB per node (values below
//!   -5 behave as -5).
//!
//! A packed node always accepts its first element whatever its size.
//!
//! **Plain nodes** (Redis 7.0's `QUICKLIST_NODE_CONTAINER_PLAIN`): an
//! element of at least [`packed_threshold`] bytes (1 GiB unless `DEBUG
//! QUICKLIST-PACKED-THRESHOLD` changed it) is stored alone, as its bytes,
//! in a plain node ([`node`]); nothing else ever goes into such a node, and
//! it is never merged or split. The threshold is checked when an element
//! is stored (push, insert, LSET); changing it leaves existing nodes as
//! they are, as in Redis. Like Redis's `packed_threshold` it is one value
//! for the whole process (an atomic here, read once per stored element):
//! the DEBUG command that sets it applies at once to every list of every
//! database, so it cannot be a per-list setting or one of the
//! [`Limits`](crate::Limits) that a list takes at creation.
//!
//! Compression (`list-compress-depth`, fixed when the list is created, as
//! Redis's `quicklistCreate` takes the server setting): the `depth` nodes at
//! each end stay uncompressed, every node between them, of either
//! container, is stored LZF-compressed ([`node`], [`lzf`]) when Redis's
//! rule says it pays (node of at least 48 bytes, compressed block more
//! than 8 bytes smaller); a node where it does not pay is kept
//! uncompressed and marked so it is not retried until it changes.
//!
//! **Petrel-specific:** `list-compress-depth 0` (Redis: "never compress")
//! uses `depth` = [`AUTO_DEPTH`] (8): lists of up to 16 nodes (about 9,000
//! small elements at the default node size) are never compressed, and a
//! longer list keeps its 8 nodes at each end uncompressed, so pushes, pops
//! and ranges near the ends never touch a compressed node; only the middle
//! of large lists is compressed. Clients see the same replies; DEBUG OBJECT
//! still reports `ql_compressed:0` (the configured depth), MEMORY USAGE
//! the real, smaller size. See docs/BENCHMARKS.md, "List compression".
//!
//! Reads go through visitors ([`Quicklist::get_with`],
//! [`Quicklist::for_each_from`], [`Quicklist::for_each_rev_from`]): an
//! uncompressed node is read in place; a compressed one is decompressed
//! into a buffer local to the call (the stored node stays compressed, so
//! reads never need `&mut` and the list stays `Sync`). Writes decompress
//! the nodes they touch in place and recompress the interior ones
//! afterwards.
//!
//! Invariants (checked by `check()` in tests):
//! * no node is empty; `len` is the sum of node lengths;
//! * every packed node with more than one element satisfies the fill limit
//!   (measured on the uncompressed listpack size); a plain node holds one
//!   element (whatever the threshold is now: it may have changed since);
//! * node `i` of `n` is uncompressed and unmarked when `i < depth` or
//!   `i >= n - depth`; every other node is compressed, or uncompressed and
//!   not compressible by the rule above;
//! * `node_heap` is the sum of the nodes' `heap_bytes()` (listpack
//!   capacities, or the allocator size class of each element or compressed
//!   block), so [`Quicklist::heap_bytes`] (plus the deque's capacity) is
//!   O(1).
//!
//! After removals a packed node is merged with a packed neighbour when the
//! two fit in one node, so a list that shrinks does not keep many tiny
//! nodes.

pub mod lzf;
pub mod node;
#[cfg(test)]
mod tests;

use crate::listpack::{encoded_size, Listpack, LpValue, Needle, HEADER_SIZE};
pub use node::{Container, Node, View};
use std::collections::VecDeque;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// Redis's default `packed_threshold`: elements of 1 GiB or more go into
/// plain nodes.
pub const DEFAULT_PACKED_THRESHOLD: usize = 1 << 30;
/// The largest threshold Redis accepts (4 GiB - 1 MiB): a listpack cannot
/// hold a 4 GiB element.
pub const MAX_PACKED_THRESHOLD: u64 = (1 << 32) - (1 << 20);

static PACKED_THRESHOLD: AtomicUsize = AtomicUsize::new(DEFAULT_PACKED_THRESHOLD);

#[cfg(test)]
thread_local! {
    /// A threshold for the current test thread only, so tests that use a
    /// small one do not change what tests running beside them see.
    static TEST_THRESHOLD: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// Elements of at least this many bytes are stored in plain nodes.
#[inline]
pub fn packed_threshold() -> usize {
    #[cfg(test)]
    if let Some(t) = TEST_THRESHOLD.with(|t| t.get()) {
        return t;
    }
    PACKED_THRESHOLD.load(Relaxed)
}

/// `DEBUG QUICKLIST-PACKED-THRESHOLD`: sets the process-wide threshold with
/// Redis's rule (0 restores the default of 1 GiB). False, and nothing
/// changed, above [`MAX_PACKED_THRESHOLD`].
pub fn set_packed_threshold(bytes: u64) -> bool {
    if bytes > MAX_PACKED_THRESHOLD {
        return false;
    }
    let t = if bytes == 0 {
        DEFAULT_PACKED_THRESHOLD
    } else {
        bytes as usize
    };
    PACKED_THRESHOLD.store(t, Relaxed);
    true
}

/// Sets the threshold for this thread only (`None`: the process-wide
/// one again). Tests only.
#[cfg(test)]
pub(crate) fn set_test_threshold(t: Option<usize>) {
    TEST_THRESHOLD.with(|c| c.set(t));
}

/// Redis's `isLargeElement`: does an element of `len` bytes get a plain node?
#[inline]
fn is_large(len: usize) -> bool {
    len >= packed_threshold()
}

/// Redis's per-node byte limit for positive fill values.
pub const SIZE_SAFETY_LIMIT: usize = 8192;
const BYTE_LIMITS: [usize; 5] = [4096, 8192, 16384, 32768, 65536];

/// A list of nodes (see the module docs).
#[derive(Clone, Debug)]
pub struct Quicklist {
    nodes: VecDeque<Node>,
    len: usize,
    fill: i32,
    /// Effective depth (never 0, see [`AUTO_DEPTH`]).
    depth: usize,
    /// `list-compress-depth` as configured (DEBUG OBJECT reports it).
    configured: u32,
    /// False only while every node is known to be uncompressed and
    /// unmarked ([`Node::Raw`] or an unmarked [`Node::Plain`]).
    maybe_compressed: bool,
    node_heap: usize,
}

/// Uncompressed nodes kept at each end when `list-compress-depth` is 0.
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
    /// Plain-container nodes.
    pub plain_nodes: usize,
    /// Sum of the nodes' uncompressed sizes (listpack bytes, or element
    /// length for plain nodes: Redis's `node->sz`).
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
            maybe_compressed: false,
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
        self.maybe_compressed = true;
        self.settle(0..self.nodes.len());
    }

    /// `list-compress-depth` as configured.
    pub fn compress_depth(&self) -> u32 {
        self.configured
    }

    /// The depth applied: uncompressed nodes kept at each end.
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

    /// Node counts and uncompressed bytes (O(nodes)).
    pub fn stats(&self) -> QuicklistStats {
        QuicklistStats {
            nodes: self.nodes.len(),
            compressed_nodes: self.nodes.iter().filter(|n| n.is_compressed()).count(),
            plain_nodes: self.nodes.iter().filter(|n| n.is_plain()).count(),
            uncompressed_bytes: self.nodes.iter().map(Node::bytes_len).sum(),
        }
    }

    /// Whether a packed node of `bytes` serialized bytes and `count`
    /// entries is within the fill limit.
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

    /// Whether `node` can take one more element of `add` encoded bytes (a
    /// plain node takes nothing more).
    fn fits(&self, node: &Node, add: usize) -> bool {
        !node.is_plain() && self.within(node.bytes_len() + add, node.len() + 1)
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

    /// Run `f` on packed node `i`'s listpack, decompressing it first (the
    /// caller settles compression afterwards).
    #[inline]
    fn with_node<R>(&mut self, i: usize, f: impl FnOnce(&mut Listpack) -> R) -> R {
        self.touch(i, |n| f(n.listpack_mut()))
    }

    /// Restore the compression invariant after a change to the nodes in
    /// `touched` (the nodes that replaced them, after splits and merges):
    /// nodes near both ends and near `touched` may have crossed the depth
    /// boundary. O(depth + touched); nothing to do while the list is too
    /// short to have interior nodes and all its nodes are uncompressed.
    #[inline]
    fn settle(&mut self, touched: Range<usize>) {
        if !self.maybe_compressed && self.nodes.len() <= 2 * self.depth {
            return;
        }
        self.settle_slow(touched);
    }

    fn settle_slow(&mut self, touched: Range<usize>) {
        let n = self.nodes.len();
        let d = self.depth;
        // With at most 2 * depth + 2 nodes the two end zones cover every
        // node, so afterwards all are uncompressed when there is no interior.
        self.maybe_compressed = n > 2 * d;
        let head = 0..(d + 1).min(n);
        let tail = n.saturating_sub(d + 1).max(head.end)..n;
        // Nodes up to `d + 1` before or after the touched ones may have
        // crossed the depth boundary when the touched range grew or shrank.
        let mid = touched.start.saturating_sub(d + 1).max(head.end)
            ..touched.end.saturating_add(d + 1).min(tail.start);
        for i in head.chain(mid).chain(tail) {
            let interior = i >= d && n - i > d;
            let fresh = self.nodes[i].is_fresh();
            if interior && fresh {
                self.touch(i, Node::compress);
            } else if !interior && !fresh {
                self.touch(i, Node::decompress);
            }
        }
    }

    /// Insert `node` (uncompressed) at `at`; the caller settles.
    fn insert_node(&mut self, at: usize, node: Node) {
        self.node_heap += node.heap_bytes();
        self.len += node.len();
        self.nodes.insert(at, node);
    }

    /// Insert a node holding `s` at `at`: a plain node when `s` is large,
    /// else a packed one. The caller settles.
    fn new_node_with(&mut self, at: usize, s: &[u8]) {
        let node = if is_large(s.len()) {
            Node::plain(s)
        } else {
            let mut lp = Listpack::new();
            lp.push_back(s);
            Node::Raw(lp)
        };
        self.insert_node(at, node);
    }

    /// Remove node `i` and return it; the caller settles.
    fn take_node(&mut self, i: usize) -> Node {
        let n = self.nodes.remove(i).unwrap();
        self.node_heap -= n.heap_bytes();
        self.len -= n.len();
        // The node array keeps at most twice the room its nodes need (as
        // growth by doubling leaves it), never what a longer past needed.
        let keep = self.nodes.len().max(4);
        if self.nodes.capacity() >= 2 * keep {
            self.nodes.shrink_to(keep);
        }
        n
    }

    fn drop_node(&mut self, i: usize) {
        drop(self.take_node(i));
    }

    pub fn push_back(&mut self, s: &[u8]) {
        let add = encoded_size(s);
        match self.nodes.back() {
            Some(n) if !is_large(s.len()) && self.fits(n, add) => {
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
            Some(n) if !is_large(s.len()) && self.fits(n, add) => {
                self.with_node(0, |n| n.push_front(s))
            }
            _ => {
                self.new_node_with(0, s);
                self.settle(0..0);
            }
        }
    }

    pub fn pop_front(&mut self) -> Option<Vec<u8>> {
        let first = self.nodes.front()?;
        if first.is_plain() {
            let v = self.take_node(0).into_elem();
            self.settle(0..0);
            return Some(v);
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
        if self.nodes[i].is_plain() {
            let v = self.take_node(i).into_elem();
            self.settle(0..0);
            return Some(v);
        }
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

    /// Replace element `index` (LSET); false when out of range. A large
    /// value gets a plain node of its own (the packed node it lands in is
    /// split around it); a small value replacing a plain node becomes a
    /// packed node, merged with a neighbour when they fit together.
    pub fn set(&mut self, index: isize, s: &[u8]) -> bool {
        let Some(i) = self.norm(index) else {
            return false;
        };
        let (ni, pos) = self.locate(i);
        let large = is_large(s.len());
        if self.nodes[ni].is_plain() || large {
            self.remove_range(i, 1);
            self.insert(i, s);
            return true;
        }
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
        if pos == 0 {
            // Between nodes ni - 1 and ni.
            return self.insert_between(ni, s);
        }
        // Inside packed node ni (a plain node has only position 0).
        debug_assert!(!self.nodes[ni].is_plain());
        if is_large(s.len()) {
            let off = self.with_node(ni, |lp| lp.seek(pos as isize).expect("pos in node"));
            return self.insert_in_node(ni, off, s);
        }
        self.with_node(ni, |n| n.insert(pos, s));
        let k = self.split_if_needed(ni);
        self.settle(ni..ni + k);
    }

    /// Insert `s` between nodes `at - 1` and `at` (`at` in `0..=nodes`):
    /// at the end of node `at - 1` or the start of node `at` when it fits
    /// there, else in a new node.
    fn insert_between(&mut self, at: usize, s: &[u8]) {
        let add = encoded_size(s);
        if !is_large(s.len()) {
            if at > 0 && self.fits(&self.nodes[at - 1], add) {
                self.with_node(at - 1, |x| x.push_back(s));
                return self.settle(at - 1..at);
            }
            if at < self.nodes.len() && self.fits(&self.nodes[at], add) {
                self.with_node(at, |x| x.push_front(s));
                return self.settle(at..at + 1);
            }
        }
        self.new_node_with(at, s);
        self.settle(at..at + 1);
    }

    /// Split packed node `i` at byte offset `off` (strictly between its
    /// first and its end offset) into two nodes; the caller settles.
    fn split_at_offset(&mut self, i: usize, off: usize) {
        let lp = self.nodes[i]
            .as_listpack()
            .expect("split of an uncompressed packed node");
        let mut count = 0;
        let mut p = lp.first_offset();
        while p < off {
            p = lp.entry_at(p).1;
            count += 1;
        }
        debug_assert!(p == off && count > 0 && count < lp.len());
        let left = Listpack::from_entries(lp.raw_entries(HEADER_SIZE, off), count);
        let right = Listpack::from_entries(lp.raw_entries(off, lp.end_offset()), lp.len() - count);
        let (lh, rh) = (left.heap_bytes(), right.heap_bytes());
        let old = std::mem::replace(&mut self.nodes[i], Node::Raw(left));
        self.node_heap = self.node_heap - old.heap_bytes() + lh + rh;
        self.nodes.insert(i + 1, Node::Raw(right));
    }

    /// Split packed node `i` until every part is within the limit; returns
    /// how many nodes it became.
    fn split_if_needed(&mut self, i: usize) -> usize {
        let n = self.nodes[i]
            .as_listpack()
            .expect("split of an uncompressed packed node");
        if self.within(n.bytes_len(), n.len()) {
            return 1;
        }
        let mid = n.seek((n.len() / 2) as isize).unwrap();
        self.split_at_offset(i, mid);
        let r = self.split_if_needed(i + 1);
        self.split_if_needed(i) + r
    }

    /// Merge node `i` with a neighbour when both are packed and fit in one
    /// node; returns the index of the merged node.
    fn merge_around(&mut self, i: usize) -> Option<usize> {
        for (a, b) in [(i, i + 1), (i.wrapping_sub(1), i)] {
            if b >= self.nodes.len() || a >= self.nodes.len() {
                continue;
            }
            let (x, y) = (&self.nodes[a], &self.nodes[b]);
            if x.is_plain() || y.is_plain() {
                continue;
            }
            if self.within(
                x.bytes_len() + y.bytes_len() - HEADER_SIZE - 1,
                x.len() + y.len(),
            ) {
                let y = self.take_node(b).into_listpack();
                self.with_node(a, |x| x.append_listpack(&y));
                return Some(a);
            }
        }
        None
    }

    /// Merge every pair of adjacent packed nodes that fits in one node.
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
                // Only a packed node has more than one element.
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
            let node = &self.nodes[ni];
            if node.is_plain() {
                if node.visit(
                    &mut buf,
                    |v| matches!(v, View::Plain(b) if needle.matches(LpValue::Str(b))),
                ) {
                    self.drop_node(ni);
                    removed += 1;
                    // The next unvisited node now has the same k in both directions.
                    continue;
                }
                k += 1;
                continue;
            }
            if node.is_compressed()
                && !node.with_view(&mut buf, |lp| lp.iter().any(|v| needle.matches(v)))
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
        for (k, n) in self.nodes.range(first..).enumerate() {
            let from = if k == 0 { pos } else { 0 };
            let go = n.visit(&mut buf, |v| match v {
                View::Packed(lp) => lp.iter_at(from).all(&mut f),
                View::Plain(b) => f(LpValue::Str(b)),
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
        for (k, n) in self.nodes.range(..=last).rev().enumerate() {
            let go = n.visit(&mut buf, |v| match v {
                View::Packed(lp) => {
                    let it = if k == 0 { lp.iter_upto(pos) } else { lp.iter() };
                    it.rev().all(&mut f)
                }
                View::Plain(b) => f(LpValue::Str(b)),
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
            let hit = self.nodes[ni].visit(&mut buf, |v| match v {
                View::Packed(n) => {
                    let (mut off, end) = (n.first_offset(), n.end_offset());
                    while off < end {
                        let (v, next) = n.entry_at(off);
                        if pivot.matches(v) {
                            return Some(if after { next } else { off });
                        }
                        off = next;
                    }
                    None
                }
                View::Plain(b) => pivot.matches(LpValue::Str(b)).then_some(0),
            });
            if let Some(off) = hit {
                if self.nodes[ni].is_plain() {
                    self.insert_between(ni + after as usize, s);
                } else {
                    self.insert_in_node(ni, off, s);
                }
                return true;
            }
        }
        false
    }

    /// Insert `s` at byte offset `off` of packed node `ni`. At an edge of
    /// the node, or when `s` is large, the element goes beside the node or
    /// to a node of its own between the node's two halves (see
    /// [`Quicklist::insert_between`]); otherwise into the node, which
    /// splits if it is over the limit.
    fn insert_in_node(&mut self, ni: usize, off: usize, s: &[u8]) {
        let add = encoded_size(s);
        let n = &self.nodes[ni];
        let (first, end) = (HEADER_SIZE, n.bytes_len() - 1);
        let large = is_large(s.len());
        if large || !self.fits(n, add) {
            if off == end {
                return self.insert_between(ni + 1, s);
            }
            if off == first {
                return self.insert_between(ni, s);
            }
        }
        if large {
            self.touch(ni, |n| {
                n.listpack_mut();
            });
            self.split_at_offset(ni, off);
            self.new_node_with(ni + 1, s);
            return self.settle(ni..ni + 3);
        }
        self.with_node(ni, |x| x.insert_at_offset(off, s));
        let k = self.split_if_needed(ni);
        self.settle(ni..ni + k);
    }

    /// The nodes (for RDB save: [`Node::container`], then the listpack or
    /// element, or [`Node::lzf`]'s block as it is).
    pub fn nodes(&self) -> impl Iterator<Item = &Node> {
        self.nodes.iter()
    }

    /// A list made of `nodes` in order (nodes loaded from an RDB file or a
    /// DUMP payload), with `list-max-listpack-size = fill` and
    /// `list-compress-depth = depth`. Empty nodes are skipped; a packed
    /// node over the fill limit is split (its elements appended one by
    /// one); a plain node is kept as it is, whatever its size and the
    /// packed threshold now (as Redis loads it); then every node is brought
    /// in line with the compress depth, so a compressed node that stays
    /// interior is kept as it is, without being decompressed and
    /// compressed again.
    ///
    /// The caller guarantees the node invariants of [`node`]: a
    /// `Node::Lzf` decompresses to a valid listpack of `raw_len` bytes and
    /// `count` elements, a `Node::PlainLzf` to `raw_len` bytes, and either
    /// is smaller than `raw_len` by more than `MIN_COMPRESS_IMPROVE` with
    /// `raw_len >= MIN_COMPRESS_BYTES`.
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
            if n.is_plain() || ql.within(n.bytes_len(), n.len()) {
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
        ql.maybe_compressed = true;
        ql.settle(0..ql.nodes.len());
        ql
    }

    /// Append a packed node loaded from RDB (skipped when empty).
    pub fn push_node(&mut self, lp: Listpack) {
        if lp.is_empty() {
            return;
        }
        self.insert_node(self.nodes.len(), Node::Raw(lp));
        self.settle(0..0);
    }

    /// Append a plain node loaded from RDB: `elem` stays in a plain node
    /// whatever its size and the threshold now.
    pub fn push_plain_node(&mut self, elem: &[u8]) {
        self.insert_node(self.nodes.len(), Node::plain(elem));
        self.settle(0..0);
    }

    /// `DEBUG QUICKLIST`: the structure in the shape of Redis's
    /// `quicklistRepr` (list header, then one line per node; with `full`,
    /// each node's elements too). `recompress` is always 0 (Petrel never
    /// leaves a node decompressed for later), `attempted_compress` is 1 for
    /// an interior node whose compression did not pay.
    pub fn repr(&self, full: bool) -> String {
        use std::fmt::Write;
        let mut o = String::new();
        let _ = writeln!(o, "{{count : {}}}", self.len);
        let _ = writeln!(o, "{{len : {}}}", self.nodes.len());
        let _ = writeln!(o, "{{fill : {}}}", self.fill);
        let _ = writeln!(o, "{{compress : {}}}", self.configured);
        let _ = writeln!(o, "{{bookmark_count : 0}}");
        let mut buf = Vec::new();
        for (i, n) in self.nodes.iter().enumerate() {
            let _ = writeln!(o, "{{quicklist node({i})");
            let _ = writeln!(
                o,
                "{{container : {}, encoding: {}, size: {}, count: {}, recompress: 0, attempted_compress: {}}}",
                if n.is_plain() { "PLAIN" } else { "PACKED" },
                if n.is_compressed() { "LZF" } else { "RAW" },
                n.bytes_len(),
                n.len(),
                matches!(n, Node::Stuck(_) | Node::Plain { stuck: true, .. }) as u8,
            );
            if full {
                n.visit(&mut buf, |v| match v {
                    View::Plain(b) => {
                        let _ = writeln!(o, "{{ entry : {} }}", String::from_utf8_lossy(b));
                    }
                    View::Packed(lp) => {
                        let _ = writeln!(o, "{{ listpack:");
                        let _ = writeln!(
                            o,
                            "{{total bytes {}}} {{num entries {}}}",
                            lp.bytes_len(),
                            lp.len()
                        );
                        let (mut off, end) = (lp.first_offset(), lp.end_offset());
                        let mut index = 0;
                        while off < end {
                            let (v, next) = lp.entry_at(off);
                            let value = match v {
                                LpValue::Int(x) => format!("[int]{x}"),
                                LpValue::Str(s) => format!("[str]{}", String::from_utf8_lossy(s)),
                            };
                            let _ = writeln!(
                                o,
                                "{{\n\tindex: {index:>2},\n\toffset: {off},\n\thdr+entrylen+backlen: {},\n\t{value}\n}}",
                                next - off
                            );
                            off = next;
                            index += 1;
                        }
                        let _ = writeln!(o, "{{end}}\n\n}}");
                    }
                });
            }
            let _ = writeln!(o, "}}");
        }
        o
    }

    #[cfg(test)]
    pub(crate) fn check(&self) {
        let mut len = 0;
        let mut heap = 0;
        let (n, d) = (self.nodes.len(), self.depth);
        let mut buf = Vec::new();
        for (i, node) in self.nodes.iter().enumerate() {
            assert!(!node.is_empty());
            assert!(
                node.is_plain() || self.within(node.bytes_len(), node.len()),
                "node over limit"
            );
            node.visit(&mut buf, |v| match v {
                View::Packed(lp) => {
                    lp.validate().unwrap();
                    assert_eq!((lp.len(), lp.bytes_len()), (node.len(), node.bytes_len()));
                }
                View::Plain(b) => assert_eq!((1, b.len()), (node.len(), node.bytes_len())),
            });
            let interior = i >= d && n - i > d;
            let shape = || {
                self.nodes
                    .iter()
                    .map(|x| (x.len(), x.bytes_len(), x.is_plain(), x.is_compressed()))
                    .collect::<Vec<_>>()
            };
            if node.is_fresh() {
                assert!(
                    !interior,
                    "uncompressed interior node {i} of {n} (depth {d}): {:?}",
                    shape()
                );
            } else {
                assert!(
                    interior,
                    "compressed or marked edge node {i} of {n} (depth {d}): {:?}",
                    shape()
                );
                if !node.is_compressed() {
                    assert!(!node.compressible(), "marked node {i} compresses");
                }
            }
            len += node.len();
            heap += node.heap_bytes();
        }
        assert_eq!((len, heap), (self.len, self.node_heap));
    }
}

impl Quicklist {
    /// The blocks a whole defrag pass offers (tests): the node array and
    /// every node's blocks (two for a [`Node::Stuck`]: its box and its
    /// listpack).
    #[cfg(test)]
    pub(crate) fn defrag_blocks(&self) -> u64 {
        let nodes: usize = self
            .nodes
            .iter()
            .map(|n| match n {
                Node::Stuck(_) => 2,
                _ => 1,
            })
            .sum();
        (self.nodes.capacity() > 0) as u64 + nodes as u64
    }

    /// Offers the blocks of nodes `from..` to the defragmenter until
    /// `max_nodes` nodes were visited; returns the next node to visit, or
    /// `None` when the list is done. The step from 0 first offers the
    /// node array itself (the deque's buffer, 32 bytes a node; rotated to
    /// the buffer's start first when it can move at all, see
    /// [`crate::defrag::Defrag::vec_deque`]).
    pub fn defrag_nodes(
        &mut self,
        from: usize,
        max_nodes: usize,
        d: &mut crate::defrag::Defrag,
    ) -> Option<usize> {
        if from == 0 {
            d.vec_deque(&mut self.nodes);
        }
        let end = from.saturating_add(max_nodes).min(self.nodes.len());
        for n in self.nodes.range_mut(from.min(end)..end) {
            n.defrag(d);
        }
        (end < self.nodes.len()).then_some(end)
    }
}
