//! List values: always a [`Quicklist`] (Redis 7.0 reports `quicklist` for
//! every list, whether its nodes are listpacks or plain nodes holding one
//! large element), with the list commands' semantics on top: Redis's index
//! normalisation for LRANGE/LTRIM, LPOS's RANK/COUNT/MAXLEN walk, LREM's
//! direction, LINSERT by pivot.
//!
//! Invariants: the node size and the compress depth follow the
//! `list-max-listpack-size` and `list-compress-depth` in force when the list
//! was created (as Redis, which sets the quicklist options at creation);
//! `heap_bytes()` is the quicklist's exact, O(1) figure (compressed nodes
//! count their compressed size).
//!
//! Reads hand elements to callbacks (`index_with`, `for_each_in_range`,
//! `for_each`): an element of a compressed node lives in a buffer that is
//! only valid during the call. The
//! keyspace never holds an empty list: callers delete the key when a
//! removal leaves it empty.

use crate::listpack::{LpValue, Needle};
use crate::Quicklist;

/// Which end of a list (Redis's `LEFT`/`RIGHT`, `LIST_HEAD`/`LIST_TAIL`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    Head,
    Tail,
}

/// A Redis list.
#[derive(Clone, Debug)]
pub struct ListValue {
    pub ql: Quicklist,
}

/// Redis's LRANGE window: `(first index, element count)` for `start..=end`
/// (negative indexes count from the tail), `None` when empty.
pub fn range_window(len: usize, start: i64, end: i64) -> Option<(usize, usize)> {
    let len = len as i64;
    let mut start = if start < 0 { len + start } else { start };
    let mut end = if end < 0 { len + end } else { end };
    if start < 0 {
        start = 0;
    }
    if start > end || start >= len {
        return None;
    }
    if end >= len {
        end = len - 1;
    }
    Some((start as usize, (end - start + 1) as usize))
}

impl ListValue {
    /// An empty list with the given `list-max-listpack-size` and
    /// `list-compress-depth`.
    pub fn new(limits: &super::Limits) -> Self {
        let mut ql = Quicklist::new(limits.list_max_listpack_size);
        ql.set_compress_depth(limits.list_compress_depth);
        ListValue { ql }
    }

    pub fn len(&self) -> usize {
        self.ql.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ql.is_empty()
    }

    /// Bytes allocated (O(1)).
    pub fn heap_bytes(&self) -> usize {
        self.ql.heap_bytes()
    }

    /// OBJECT ENCODING name.
    pub fn encoding_name(&self) -> &'static str {
        "quicklist"
    }

    /// LPUSH/RPUSH of one element.
    #[inline]
    pub fn push(&mut self, end: End, s: &[u8]) {
        match end {
            End::Head => self.ql.push_front(s),
            End::Tail => self.ql.push_back(s),
        }
    }

    /// Pop one element.
    #[inline]
    pub fn pop(&mut self, end: End) -> Option<Vec<u8>> {
        match end {
            End::Head => self.ql.pop_front(),
            End::Tail => self.ql.pop_back(),
        }
    }

    /// Pop up to `n` elements, in pop order.
    pub fn pop_n(&mut self, end: End, n: usize) -> Vec<Vec<u8>> {
        match end {
            End::Head => self.ql.pop_front_n(n),
            End::Tail => self.ql.pop_back_n(n),
        }
    }

    /// LINDEX (negative counts from the tail): `f` sees the element.
    pub fn index_with<R>(&self, i: i64, f: impl FnOnce(LpValue<'_>) -> R) -> Option<R> {
        self.ql.get_with(isize::try_from(i).ok()?, f)
    }

    /// LINDEX as bytes.
    pub fn index(&self, i: i64) -> Option<Vec<u8>> {
        self.index_with(i, |v| v.to_vec())
    }

    /// LSET; false when the index is out of range.
    pub fn set(&mut self, i: i64, s: &[u8]) -> bool {
        match isize::try_from(i) {
            Ok(i) => self.ql.set(i, s),
            Err(_) => false,
        }
    }

    /// LRANGE `start end`: `f` sees the elements of [`range_window`] in
    /// order.
    pub fn for_each_in_range(&self, start: i64, end: i64, mut f: impl FnMut(LpValue<'_>)) {
        let Some((first, n)) = range_window(self.len(), start, end) else {
            return;
        };
        let mut left = n;
        self.ql.for_each_from(first, |v| {
            f(v);
            left -= 1;
            left > 0
        });
    }

    /// LRANGE as bytes.
    pub fn range(&self, start: i64, end: i64) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        self.for_each_in_range(start, end, |v| out.push(v.to_vec()));
        out
    }

    /// LTRIM `start end` (Redis's normalisation: an empty window empties
    /// the list).
    pub fn trim(&mut self, start: i64, end: i64) {
        match range_window(self.len(), start, end) {
            Some((first, n)) => self.ql.trim(first, first + n),
            None => self.ql.trim(0, 0),
        }
    }

    /// LREM: remove up to `|count|` elements equal to `s`, from the head
    /// when `count > 0`, from the tail when `< 0`, all when 0.
    pub fn remove(&mut self, count: i64, s: &[u8]) -> usize {
        self.ql.remove_value(s, count)
    }

    /// LINSERT: insert `s` before/after the first `pivot`; false when the
    /// pivot is not found.
    pub fn insert(&mut self, pivot: &[u8], s: &[u8], after: bool) -> bool {
        self.ql.insert_at_pivot(&Needle::new(pivot), s, after)
    }

    /// LPOS: indexes of the elements equal to `s`, skipping the first
    /// `|rank| - 1` matches (from the tail when `rank < 0`), at most `count`
    /// of them (0 = all), scanning at most `maxlen` elements (0 = all).
    /// `rank` must not be 0.
    pub fn positions(&self, s: &[u8], rank: i64, count: usize, maxlen: usize) -> Vec<usize> {
        debug_assert!(rank != 0);
        let needle = Needle::new(s);
        let skip = rank.unsigned_abs() - 1;
        let limit = if count == 0 { usize::MAX } else { count };
        let scan = if maxlen == 0 { usize::MAX } else { maxlen };
        let len = self.len();
        let mut out = Vec::new();
        let mut matches = 0u64;
        let mut seen = 0usize;
        let visit = |v: LpValue<'_>| {
            let i = if rank > 0 { seen } else { len - 1 - seen };
            seen += 1;
            if needle.matches(v) {
                matches += 1;
                if matches > skip {
                    out.push(i);
                    if out.len() >= limit {
                        return false;
                    }
                }
            }
            seen < scan
        };
        if rank > 0 {
            self.ql.for_each_from(0, visit);
        } else {
            self.ql.for_each_rev_from(usize::MAX, visit);
        }
        out
    }

    /// `f` sees every element, head to tail.
    pub fn for_each(&self, mut f: impl FnMut(LpValue<'_>)) {
        self.ql.for_each_from(0, |v| {
            f(v);
            true
        });
    }

    /// Every element as bytes, head to tail.
    pub fn to_vecs(&self) -> Vec<Vec<u8>> {
        self.ql.to_vecs()
    }

    /// DEBUG OBJECT's list fields, as Redis 7.0 prints them: node count,
    /// average elements per node, `list-max-listpack-size`, whether the
    /// list compresses (`list-compress-depth` != 0) and the sum of the
    /// nodes' uncompressed sizes.
    pub fn debug_fields(&self) -> String {
        let st = self.ql.stats();
        let avg = self.len() as f64 / st.nodes as f64;
        let compressed = self.ql.compress_depth() != 0;
        format!(
            " ql_nodes:{} ql_avg_node:{:.2} ql_listpack_max:{} ql_compressed:{} ql_uncompressed_size:{}",
            st.nodes,
            avg,
            self.ql.fill(),
            compressed as u8,
            st.uncompressed_bytes
        )
    }
}

impl ListValue {
    /// Offers up to `max_nodes` nodes' blocks from node `from` to the
    /// defragmenter; returns where to continue (`None`: done).
    pub fn defrag(
        &mut self,
        from: usize,
        max_nodes: usize,
        d: &mut crate::defrag::Defrag,
    ) -> Option<usize> {
        self.ql.defrag_nodes(from, max_nodes, d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Limits;
    use proptest::prelude::*;

    /// A command against the list and the `Vec` model.
    #[derive(Debug, Clone)]
    enum Op {
        Push(bool, Vec<Vec<u8>>),
        Pop(bool, usize),
        Set(i64, Vec<u8>),
        Trim(i64, i64),
        Rem(i64, Vec<u8>),
        Insert(Vec<u8>, Vec<u8>, bool),
        Range(i64, i64),
        Index(i64),
        Pos(Vec<u8>, i64, usize, usize),
    }

    fn elem() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            5 => (-3i64..12).prop_map(|v| v.to_string().into_bytes()),
            2 => proptest::collection::vec(b'a'..b'c', 0..3),
            1 => Just(b"007".to_vec()),
            2 => (0u32..4, 8usize..30).prop_map(|(k, n)| format!("item:{k}").repeat(n / 6).into_bytes()),
            1 => (0usize..3).prop_map(|k| vec![b'z'; [70, 5000, 9000][k]]),
        ]
    }

    fn idx() -> impl Strategy<Value = i64> {
        prop_oneof![-60i64..60, Just(i64::MIN), Just(i64::MAX)]
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => (any::<bool>(), proptest::collection::vec(elem(), 1..8)).prop_map(|(h, v)| Op::Push(h, v)),
            2 => (any::<bool>(), 1usize..6).prop_map(|(h, n)| Op::Pop(h, n)),
            2 => (idx(), elem()).prop_map(|(i, e)| Op::Set(i, e)),
            1 => (idx(), idx()).prop_map(|(a, b)| Op::Trim(a, b)),
            2 => (-3i64..3, elem()).prop_map(|(c, e)| Op::Rem(c, e)),
            2 => (elem(), elem(), any::<bool>()).prop_map(|(p, e, a)| Op::Insert(p, e, a)),
            2 => (idx(), idx()).prop_map(|(a, b)| Op::Range(a, b)),
            1 => idx().prop_map(Op::Index),
            3 => (elem(), prop_oneof![-4i64..0, 1i64..5], 0usize..4, 0usize..40)
                .prop_map(|(e, r, c, m)| Op::Pos(e, r, c, m)),
        ]
    }

    fn norm(len: usize, i: i64) -> Option<usize> {
        let j = if i < 0 {
            len as i128 + i as i128
        } else {
            i as i128
        };
        (j >= 0 && j < len as i128).then_some(j as usize)
    }

    fn model_window(len: usize, s: i64, e: i64) -> std::ops::Range<usize> {
        let l = len as i128;
        let mut s = if s < 0 { l + s as i128 } else { s as i128 };
        let mut e = if e < 0 { l + e as i128 } else { e as i128 };
        s = s.max(0);
        if s > e || s >= l {
            return 0..0;
        }
        e = e.min(l - 1);
        s as usize..(e + 1) as usize
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(60))]
        #[test]
        fn list_commands_match_vec(fill in prop_oneof![Just(-2i32), Just(-1), Just(2), Just(4), Just(16)],
                                   depth in 0u32..3,
                                   threshold in prop_oneof![Just(2usize), Just(20), Just(70), Just(crate::quicklist::DEFAULT_PACKED_THRESHOLD)],
                                   ops in proptest::collection::vec(op(), 1..120)) {
            // Small thresholds put many elements in plain nodes.
            crate::quicklist::set_test_threshold(Some(threshold));
            let lim = Limits { list_max_listpack_size: fill, list_compress_depth: depth, ..Limits::default() };
            let mut l = ListValue::new(&lim);
            let mut m: Vec<Vec<u8>> = Vec::new();
            for o in ops {
                match o {
                    Op::Push(head, v) => for e in v {
                        if head { l.push(End::Head, &e); m.insert(0, e) } else { l.push(End::Tail, &e); m.push(e) }
                    },
                    Op::Pop(head, n) => {
                        let k = n.min(m.len());
                        let want: Vec<Vec<u8>> = if head { m.drain(..k).collect() } else { m.drain(m.len() - k..).rev().collect() };
                        let got = if n == 1 { l.pop(if head { End::Head } else { End::Tail }).into_iter().collect() } else { l.pop_n(if head { End::Head } else { End::Tail }, n) };
                        prop_assert_eq!(got, want);
                    }
                    Op::Set(i, e) => {
                        let ok = l.set(i, &e);
                        match norm(m.len(), i) { Some(j) => { prop_assert!(ok); m[j] = e } None => prop_assert!(!ok) }
                    }
                    Op::Trim(a, b) => { l.trim(a, b); m = m[model_window(m.len(), a, b)].to_vec(); }
                    Op::Rem(c, e) => {
                        let mut hits: Vec<usize> = m.iter().enumerate().filter(|(_, x)| **x == e).map(|(i, _)| i).collect();
                        if c < 0 { hits.reverse(); }
                        if c != 0 { hits.truncate(c.unsigned_abs() as usize); }
                        hits.sort_unstable();
                        for &h in hits.iter().rev() { m.remove(h); }
                        prop_assert_eq!(l.remove(c, &e), hits.len());
                    }
                    Op::Insert(p, e, after) => {
                        let at = m.iter().position(|x| *x == p);
                        prop_assert_eq!(l.insert(&p, &e, after), at.is_some());
                        if let Some(i) = at { m.insert(if after { i + 1 } else { i }, e) }
                    }
                    Op::Range(a, b) => {
                        let got = l.range(a, b);
                        prop_assert_eq!(&got[..], &m[model_window(m.len(), a, b)]);
                    }
                    Op::Index(i) => prop_assert_eq!(l.index(i), norm(m.len(), i).map(|j| m[j].clone())),
                    Op::Pos(e, rank, count, maxlen) => {
                        let n = m.len();
                        let order: Vec<usize> = if rank > 0 { (0..n).collect() } else { (0..n).rev().collect() };
                        let scan = if maxlen == 0 { n } else { maxlen.min(n) };
                        let mut want: Vec<usize> = order[..scan].iter().copied().filter(|&i| m[i] == e).skip(rank.unsigned_abs() as usize - 1).collect();
                        if count != 0 { want.truncate(count) }
                        prop_assert_eq!(l.positions(&e, rank, count, maxlen), want);
                    }
                }
                prop_assert_eq!(l.len(), m.len());
            }
            prop_assert_eq!(l.to_vecs(), m);
            crate::quicklist::set_test_threshold(None);
        }
    }
}

/// Memory figure for the report: `cargo test -p collections --release --
/// --ignored memory_10m --nocapture`.
#[cfg(test)]
#[test]
#[ignore]
fn memory_10m() {
    let mut l = ListValue::new(&crate::Limits::default());
    for i in 0..10_000_000u32 {
        l.push(End::Tail, (i % 10000).to_string().as_bytes());
    }
    println!(
        "10M elements: heap_bytes {} ({} nodes, {:.2} B/elem)",
        l.heap_bytes(),
        l.ql.node_count(),
        l.heap_bytes() as f64 / 1e7
    );
}
