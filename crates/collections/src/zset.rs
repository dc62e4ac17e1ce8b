//! Large sorted sets (Redis `skiplist` encoding): an order-statistic B+tree
//! keyed by `(score, member)` plus a member -> score open-addressing table.
//!
//! [`ScoreTree`]: leaves hold up to [`CAP`] entries of 24 bytes (an `f64`
//! score and a 16-byte [`Elem`] member, inline up to 15 bytes) sorted by
//! score, then member bytes (Redis's order). Inner nodes hold up to `CAP`
//! children, `kids.len() - 1` separator keys (`seps[k]` is a lower bound of
//! every key in `kids[k + 1]` and greater than every key in `kids[k]`) and
//! the entry count of every child, so rank, select and range-by-rank are
//! O(log n), range-by-score/lex are a rank lookup plus a walk.
//!
//! Invariants (checked by `check()` in tests):
//! * all leaves are at the same depth; entries are strictly increasing in
//!   an in-order walk; separators bound their children as above;
//! * `counts[k]` equals the number of entries below `kids[k]`; `len` equals
//!   the total;
//! * no node but the root is empty; the root is an inner node only when it
//!   has at least two children;
//! * `heap` equals the bytes of every node's vectors (capacities) plus the
//!   out-of-line bytes of every entry and separator member, maintained on
//!   each change.
//!
//! Appends at either end split a full leaf unevenly (keep the full part),
//! so ascending or descending inserts fill leaves completely; random inserts
//! give ~70% full leaves. Leaves grow their vectors by a quarter at a time.
//!
//! [`SortedSet`] keeps the tree and the member table in step; scores are
//! never NaN (callers reject NaN as Redis does).

use crate::arena::ArenaMap;

#[path = "zset_defrag.rs"]
mod defrag;
use crate::elem::Elem;
use crate::mem::block_bytes;
use rand::Rng;
use std::cmp::Ordering;

/// Maximum entries per leaf and children per inner node.
pub const CAP: usize = 64;
const MIN_FILL: usize = CAP / 4;

/// One (score, member) entry.
#[derive(Clone, Debug)]
pub struct Entry {
    pub score: f64,
    pub member: Elem,
}

#[inline]
fn cmp_key(a: &Entry, score: f64, member: &[u8]) -> Ordering {
    a.score
        .partial_cmp(&score)
        .expect("NaN score")
        .then_with(|| a.member.bytes().cmp(member))
}

enum Node {
    Leaf(Vec<Entry>),
    Inner(Inner),
}

struct Inner {
    seps: Vec<Entry>,
    kids: Vec<Node>,
    counts: Vec<usize>,
}

const ENTRY: usize = std::mem::size_of::<Entry>();
const NODE: usize = std::mem::size_of::<Node>();

/// Heap blocks of an inner node's own vectors (allocator size classes).
fn inner_shallow(i: &Inner) -> usize {
    block_bytes(i.seps.capacity() * ENTRY)
        + block_bytes(i.kids.capacity() * NODE)
        + block_bytes(i.counts.capacity() * 8)
}

impl Node {
    fn shallow(&self) -> usize {
        match self {
            Node::Leaf(v) => block_bytes(v.capacity() * ENTRY),
            Node::Inner(i) => inner_shallow(i),
        }
    }

    fn count(&self) -> usize {
        match self {
            Node::Leaf(v) => v.len(),
            Node::Inner(i) => i.counts.iter().sum(),
        }
    }

    fn fill(&self) -> usize {
        match self {
            Node::Leaf(v) => v.len(),
            Node::Inner(i) => i.kids.len(),
        }
    }

    /// Deep heap bytes (for a node being dropped or moved wholesale).
    fn deep(&self) -> usize {
        match self {
            Node::Leaf(v) => self.shallow() + v.iter().map(|e| e.member.heap_size()).sum::<usize>(),
            Node::Inner(i) => {
                self.shallow()
                    + i.seps.iter().map(|e| e.member.heap_size()).sum::<usize>()
                    + i.kids.iter().map(Node::deep).sum::<usize>()
            }
        }
    }
}

/// Running heap delta while a tree operation touches nodes.
struct Acc(isize);

impl Acc {
    fn add(&mut self, n: usize) {
        self.0 += n as isize;
    }
    fn sub(&mut self, n: usize) {
        self.0 -= n as isize;
    }
}

fn leaf_reserve(v: &mut Vec<Entry>) {
    if v.len() == v.capacity() {
        let extra = (v.len() / 4).max(2).min(CAP + 1 - v.len().min(CAP));
        v.reserve_exact(extra.max(1));
    }
}

fn route(seps: &[Entry], score: f64, member: &[u8]) -> usize {
    seps.partition_point(|s| cmp_key(s, score, member) != Ordering::Greater)
}

fn insert_rec(node: &mut Node, e: Entry, acc: &mut Acc) -> Option<(Entry, Node)> {
    let before = node.shallow();
    let out = match node {
        Node::Leaf(v) => {
            let pos =
                v.partition_point(|x| cmp_key(x, e.score, e.member.bytes()) == Ordering::Less);
            leaf_reserve(v);
            v.insert(pos, e);
            if v.len() > CAP {
                let at = if pos == CAP {
                    CAP
                } else if pos == 0 {
                    1
                } else {
                    v.len() / 2
                };
                let right: Vec<Entry> = v.drain(at..).collect();
                v.shrink_to_fit();
                let sep = right[0].clone();
                acc.add(sep.member.heap_size());
                let r = Node::Leaf(right);
                acc.add(r.shallow());
                Some((sep, r))
            } else {
                None
            }
        }
        Node::Inner(inn) => {
            let j = route(&inn.seps, e.score, e.member.bytes());
            inn.counts[j] += 1;
            if let Some((sep, right)) = insert_rec(&mut inn.kids[j], e, acc) {
                let rc = right.count();
                inn.counts[j] -= rc;
                inn.seps.insert(j, sep);
                inn.kids.insert(j + 1, right);
                inn.counts.insert(j + 1, rc);
            }
            if inn.kids.len() > CAP {
                let mid = inn.kids.len() / 2;
                let kids: Vec<Node> = inn.kids.drain(mid..).collect();
                let counts: Vec<usize> = inn.counts.drain(mid..).collect();
                let seps: Vec<Entry> = inn.seps.drain(mid..).collect();
                let up = inn.seps.pop().unwrap();
                inn.kids.shrink_to_fit();
                inn.counts.shrink_to_fit();
                inn.seps.shrink_to_fit();
                let r = Node::Inner(Inner { seps, kids, counts });
                acc.add(r.shallow());
                Some((up, r))
            } else {
                None
            }
        }
    };
    acc.add(node.shallow());
    acc.sub(before);
    out
}

fn remove_rec(node: &mut Node, score: f64, member: &[u8], acc: &mut Acc) -> Option<Entry> {
    let before = node.shallow();
    let out = match node {
        Node::Leaf(v) => {
            let pos = v.partition_point(|x| cmp_key(x, score, member) == Ordering::Less);
            if pos < v.len() && cmp_key(&v[pos], score, member) == Ordering::Equal {
                let e = v.remove(pos);
                if v.capacity() > v.len() + v.len() / 2 + 4 {
                    v.shrink_to_fit();
                }
                Some(e)
            } else {
                None
            }
        }
        Node::Inner(inn) => {
            let j = route(&inn.seps, score, member);
            let r = remove_rec(&mut inn.kids[j], score, member, acc);
            if r.is_some() {
                inn.counts[j] -= 1;
                fix_child(inn, j, acc);
            }
            r
        }
    };
    acc.add(node.shallow());
    acc.sub(before);
    out
}

/// Remove an empty child or merge an underfull one with a neighbour.
fn fix_child(inn: &mut Inner, j: usize, acc: &mut Acc) {
    let fill = inn.kids[j].fill();
    if fill == 0 {
        let k = inn.kids.remove(j);
        acc.sub(k.deep());
        inn.counts.remove(j);
        if !inn.seps.is_empty() {
            let s = inn.seps.remove(j.saturating_sub(1));
            acc.sub(s.member.heap_size());
        }
        return;
    }
    if fill >= MIN_FILL || inn.kids.len() < 2 {
        return;
    }
    let (l, r) = if j + 1 < inn.kids.len() {
        (j, j + 1)
    } else {
        (j - 1, j)
    };
    if inn.kids[l].fill() + inn.kids[r].fill() > CAP {
        return;
    }
    let right = inn.kids.remove(r);
    let rc = inn.counts.remove(r);
    let sep = inn.seps.remove(l);
    let left = &mut inn.kids[l];
    let lb = left.shallow();
    acc.sub(right.shallow());
    match (left, right) {
        (Node::Leaf(a), Node::Leaf(mut b)) => {
            acc.sub(sep.member.heap_size());
            a.reserve_exact(b.len());
            a.append(&mut b);
        }
        (Node::Inner(a), Node::Inner(b)) => {
            a.seps.reserve_exact(b.seps.len() + 1);
            a.seps.push(sep);
            a.seps.extend(b.seps);
            a.kids.reserve_exact(b.kids.len());
            a.kids.extend(b.kids);
            a.counts.reserve_exact(b.counts.len());
            a.counts.extend(b.counts);
        }
        _ => unreachable!("siblings at different depths"),
    }
    inn.counts[l] += rc;
    acc.add(inn.kids[l].shallow());
    acc.sub(lb);
}

/// Order-statistic B+tree of (score, member).
pub struct ScoreTree {
    root: Node,
    len: usize,
    heap: usize,
}

impl Default for ScoreTree {
    fn default() -> Self {
        Self::new()
    }
}

impl ScoreTree {
    pub fn new() -> Self {
        ScoreTree {
            root: Node::Leaf(Vec::new()),
            len: 0,
            heap: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn heap_bytes(&self) -> usize {
        self.heap
    }

    fn apply(&mut self, acc: Acc) {
        self.heap = (self.heap as isize + acc.0) as usize;
    }

    /// Insert an entry that is not present.
    pub fn insert(&mut self, score: f64, member: &[u8]) {
        let e = Entry {
            score,
            member: Elem::new(member),
        };
        let mut acc = Acc(e.member.heap_size() as isize);
        if let Some((sep, right)) = insert_rec(&mut self.root, e, &mut acc) {
            let left = std::mem::replace(&mut self.root, Node::Leaf(Vec::new()));
            let (lc, rc) = (left.count(), right.count());
            let seps = vec![sep];
            let kids = vec![left, right];
            self.root = Node::Inner(Inner {
                seps,
                kids,
                counts: vec![lc, rc],
            });
            acc.add(self.root.shallow());
        }
        self.len += 1;
        self.apply(acc);
    }

    /// Remove (score, member); true if it was present.
    pub fn remove(&mut self, score: f64, member: &[u8]) -> bool {
        let mut acc = Acc(0);
        let r = remove_rec(&mut self.root, score, member, &mut acc);
        let found = r.is_some();
        if let Some(e) = r {
            acc.sub(e.member.heap_size());
            self.len -= 1;
        }
        if self.len == 0 {
            acc.sub(self.root.shallow());
            self.root = Node::Leaf(Vec::new());
        }
        loop {
            let collapse = matches!(&self.root, Node::Inner(i) if i.kids.len() <= 1);
            if !collapse {
                break;
            }
            let old = std::mem::replace(&mut self.root, Node::Leaf(Vec::new()));
            if let Node::Inner(mut i) = old {
                acc.sub(inner_shallow(&i));
                for s in &i.seps {
                    acc.sub(s.member.heap_size());
                }
                if let Some(k) = i.kids.pop() {
                    self.root = k;
                }
            }
        }
        self.apply(acc);
        found
    }

    /// Number of entries for which `before` holds (`before` must be true
    /// for a prefix of the order and false after it).
    pub fn rank_by(&self, before: impl Fn(&Entry) -> bool) -> usize {
        let mut node = &self.root;
        let mut r = 0;
        loop {
            match node {
                Node::Leaf(v) => return r + v.partition_point(&before),
                Node::Inner(i) => {
                    let j = i.seps.partition_point(&before);
                    r += i.counts[..j].iter().sum::<usize>();
                    node = &i.kids[j];
                }
            }
        }
    }

    /// 0-based rank of (score, member) if present.
    pub fn rank(&self, score: f64, member: &[u8]) -> Option<usize> {
        let r = self.rank_by(|e| cmp_key(e, score, member) == Ordering::Less);
        let e = self.get(r)?;
        (cmp_key(e, score, member) == Ordering::Equal).then_some(r)
    }

    /// Entry at rank `r`.
    pub fn get(&self, mut r: usize) -> Option<&Entry> {
        if r >= self.len {
            return None;
        }
        let mut node = &self.root;
        loop {
            match node {
                Node::Leaf(v) => return v.get(r),
                Node::Inner(i) => {
                    let mut j = 0;
                    while r >= i.counts[j] {
                        r -= i.counts[j];
                        j += 1;
                    }
                    node = &i.kids[j];
                }
            }
        }
    }

    /// Visit ranks `start..end` (clipped) ascending, or descending when
    /// `rev`, until `f` returns false.
    pub fn for_each_in(
        &self,
        start: usize,
        end: usize,
        rev: bool,
        mut f: impl FnMut(&Entry) -> bool,
    ) {
        let end = end.min(self.len);
        if start < end {
            visit(&self.root, start, end, rev, &mut f);
        }
    }

    #[cfg(test)]
    fn check(&self) {
        fn walk(
            n: &Node,
            depth: usize,
            leaf_depth: &mut Option<usize>,
            out: &mut Vec<(f64, Vec<u8>)>,
            heap: &mut usize,
            root: bool,
        ) -> usize {
            *heap += n.shallow();
            match n {
                Node::Leaf(v) => {
                    assert!(root || !v.is_empty());
                    assert!(v.len() <= CAP);
                    assert_eq!(*leaf_depth.get_or_insert(depth), depth);
                    for e in v {
                        *heap += e.member.heap_size();
                        out.push((e.score, e.member.bytes().to_vec()));
                    }
                    v.len()
                }
                Node::Inner(i) => {
                    assert!(i.kids.len() >= if root { 2 } else { 1 });
                    assert!(i.kids.len() <= CAP);
                    assert_eq!(i.seps.len() + 1, i.kids.len());
                    assert_eq!(i.counts.len(), i.kids.len());
                    let mut total = 0;
                    for (k, kid) in i.kids.iter().enumerate() {
                        let start = out.len();
                        let c = walk(kid, depth + 1, leaf_depth, out, heap, false);
                        assert_eq!(c, i.counts[k]);
                        total += c;
                        if k > 0 {
                            let s = &i.seps[k - 1];
                            let first = &out[start];
                            assert!(cmp_key(s, first.0, &first.1) != Ordering::Greater);
                            let prev = &out[start - 1];
                            assert!(cmp_key(s, prev.0, &prev.1) == Ordering::Greater);
                        }
                    }
                    for s in &i.seps {
                        *heap += s.member.heap_size();
                    }
                    total
                }
            }
        }
        let mut out = Vec::new();
        let mut heap = 0;
        let n = walk(&self.root, 0, &mut None, &mut out, &mut heap, true);
        assert_eq!(n, self.len);
        assert_eq!(heap, self.heap);
        for w in out.windows(2) {
            assert!(w[0].0 < w[1].0 || (w[0].0 == w[1].0 && w[0].1 < w[1].1));
        }
    }
}

fn visit<F: FnMut(&Entry) -> bool>(
    n: &Node,
    start: usize,
    end: usize,
    rev: bool,
    f: &mut F,
) -> bool {
    match n {
        Node::Leaf(v) => {
            let s = &v[start..end];
            if rev {
                s.iter().rev().all(f)
            } else {
                s.iter().all(f)
            }
        }
        Node::Inner(i) => {
            let one = |k: usize, off: usize, f: &mut F| -> bool {
                let c = i.counts[k];
                let (a, b) = (start.max(off), end.min(off + c));
                a >= b || visit(&i.kids[k], a - off, b - off, rev, f)
            };
            if rev {
                let mut off: usize = i.counts.iter().sum();
                for k in (0..i.kids.len()).rev() {
                    off -= i.counts[k];
                    if off + i.counts[k] <= start {
                        break;
                    }
                    if !one(k, off, f) {
                        return false;
                    }
                }
            } else {
                let mut off = 0;
                for k in 0..i.kids.len() {
                    if off >= end {
                        break;
                    }
                    if !one(k, off, f) {
                        return false;
                    }
                    off += i.counts[k];
                }
            }
            true
        }
    }
}

#[inline]
fn sc(b: &[u8]) -> f64 {
    f64::from_le_bytes(b.try_into().expect("8-byte score"))
}

/// Large sorted set: tree + member -> score table (an [`ArenaMap`] whose
/// values are the 8-byte little-endian scores).
#[derive(Default)]
pub struct SortedSet {
    tree: ScoreTree,
    map: ArenaMap,
}

/// A deep copy (COPY); rebuilt by insertion so capacities, and with them
/// `heap_bytes()`, follow the same rules as a value built by commands.
impl Clone for SortedSet {
    fn clone(&self) -> Self {
        let mut out = SortedSet::new();
        self.for_each_in(0, self.len(), false, |m, s| {
            out.insert(m, s);
            true
        });
        out
    }
}

impl std::fmt::Debug for SortedSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SortedSet(len={})", self.len())
    }
}

impl SortedSet {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.tree.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes allocated by the tree and the member table.
    pub fn heap_bytes(&self) -> usize {
        self.tree.heap_bytes() + self.map.heap_bytes()
    }

    pub fn score(&self, member: &[u8]) -> Option<f64> {
        self.map.get(member).map(sc)
    }

    /// Insert or update; returns the previous score.
    pub fn insert(&mut self, member: &[u8], score: f64) -> Option<f64> {
        assert!(!score.is_nan(), "NaN score");
        match self.score(member) {
            Some(old) => {
                // Equal scores (0 and -0 included) are left alone, as Redis.
                if old != score {
                    self.tree.remove(old, member);
                    self.tree.insert(score, member);
                    self.map.insert(member, &score.to_le_bytes());
                }
                Some(old)
            }
            None => {
                self.map.insert(member, &score.to_le_bytes());
                self.tree.insert(score, member);
                None
            }
        }
    }

    /// Remove `member`; returns its score.
    pub fn remove(&mut self, member: &[u8]) -> Option<f64> {
        let s = sc(&self.map.remove(member)?);
        let found = self.tree.remove(s, member);
        debug_assert!(found);
        Some(s)
    }

    /// 0-based ascending rank.
    pub fn rank(&self, member: &[u8]) -> Option<usize> {
        let s = self.score(member)?;
        self.tree.rank(s, member)
    }

    /// (member, score) at ascending rank `r`.
    pub fn at_rank(&self, r: usize) -> Option<(&[u8], f64)> {
        self.tree.get(r).map(|e| (e.member.bytes(), e.score))
    }

    /// Visit ranks `start..end` (ascending positions), in descending order
    /// when `rev`, until `f` returns false.
    pub fn for_each_in(
        &self,
        start: usize,
        end: usize,
        rev: bool,
        mut f: impl FnMut(&[u8], f64) -> bool,
    ) {
        self.tree
            .for_each_in(start, end, rev, |e| f(e.member.bytes(), e.score))
    }

    /// Number of leading elements (ascending) for which
    /// `before(member, score)` holds; `before` must hold for a prefix.
    pub fn rank_by(&self, before: impl Fn(&[u8], f64) -> bool) -> usize {
        self.tree.rank_by(|e| before(e.member.bytes(), e.score))
    }

    /// Number of elements with score < `min` (or <= when `exclusive`): the
    /// rank where a ZRANGEBYSCORE starting at `min` begins.
    pub fn rank_of_score(&self, min: f64, exclusive: bool) -> usize {
        if exclusive {
            self.tree.rank_by(|e| e.score <= min)
        } else {
            self.tree.rank_by(|e| e.score < min)
        }
    }

    /// Number of elements whose member is < `min` (or <= when `exclusive`);
    /// meaningful when all scores are equal (ZRANGEBYLEX).
    pub fn rank_of_lex(&self, min: &[u8], exclusive: bool) -> usize {
        if exclusive {
            self.tree.rank_by(|e| e.member.bytes() <= min)
        } else {
            self.tree.rank_by(|e| e.member.bytes() < min)
        }
    }

    /// Remove and return the lowest (or highest when `max`) element.
    pub fn pop(&mut self, max: bool) -> Option<(Vec<u8>, f64)> {
        let r = if max { self.len().checked_sub(1)? } else { 0 };
        let (m, s) = self.at_rank(r).map(|(m, s)| (m.to_vec(), s))?;
        self.remove(&m);
        Some((m, s))
    }

    /// Remove ranks `start..end`; returns how many were removed.
    pub fn remove_rank_range(&mut self, start: usize, end: usize) -> usize {
        let mut ms = Vec::new();
        self.for_each_in(start, end, false, |m, _| {
            ms.push(m.to_vec());
            true
        });
        for m in &ms {
            self.remove(m);
        }
        ms.len()
    }

    /// A uniformly random (member, score) (ZRANDMEMBER).
    pub fn random<R: Rng + ?Sized>(&self, rng: &mut R) -> Option<(&[u8], f64)> {
        self.map.random(rng).map(|(m, s)| (m, sc(s)))
    }

    /// One ZSCAN step (same guarantee as [`crate::CompactSet::scan`]).
    pub fn scan(&self, cursor: u64, count: usize, mut f: impl FnMut(&[u8], f64)) -> u64 {
        self.map.scan(cursor, count, |m, s| f(m, sc(s)))
    }

    #[cfg(test)]
    pub(crate) fn check(&self) {
        self.tree.check();
        self.map.check();
        assert_eq!(self.map.len(), self.tree.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::{BTreeSet, HashMap};

    #[derive(Clone, Copy, PartialEq, Debug)]
    struct S(f64);
    impl PartialOrd for S {
        fn partial_cmp(&self, o: &S) -> Option<Ordering> {
            Some(self.cmp(o))
        }
    }
    impl Eq for S {}
    impl Ord for S {
        fn cmp(&self, o: &S) -> Ordering {
            self.0.partial_cmp(&o.0).unwrap()
        }
    }

    fn member() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            (0u32..400).prop_map(|i| format!("m{i}").into_bytes()),
            (0u32..40).prop_map(|i| format!("a-long-member-name-{i}").into_bytes()),
        ]
    }

    fn score() -> impl Strategy<Value = f64> {
        prop_oneof![
            (-20i32..20).prop_map(f64::from),
            (0i32..3).prop_map(f64::from),
            Just(f64::INFINITY),
            Just(f64::NEG_INFINITY),
            any::<i32>().prop_map(|x| x as f64 / 7.0),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        #[test]
        fn model(ops in proptest::collection::vec((0u8..4, member(), score()), 1..1500)) {
            let mut z = SortedSet::new();
            let mut m: HashMap<Vec<u8>, f64> = HashMap::new();
            let mut ord: BTreeSet<(S, Vec<u8>)> = BTreeSet::new();
            for (op, k, s) in ops {
                if op < 3 {
                    let old = m.insert(k.clone(), s);
                    if let Some(o) = old { ord.remove(&(S(o), k.clone())); }
                    ord.insert((S(s), k.clone()));
                    prop_assert_eq!(z.insert(&k, s), old);
                } else {
                    let old = m.remove(&k);
                    if let Some(o) = old { ord.remove(&(S(o), k.clone())); }
                    prop_assert_eq!(z.remove(&k), old);
                }
            }
            z.check();
            let want: Vec<(S, Vec<u8>)> = ord.iter().cloned().collect();
            let mut got = Vec::new();
            z.for_each_in(0, usize::MAX, false, |k, s| { got.push((S(s), k.to_vec())); true });
            prop_assert_eq!(&got, &want);
            let mut back = Vec::new();
            z.for_each_in(3, want.len().saturating_sub(2), true, |k, s| { back.push((S(s), k.to_vec())); true });
            back.reverse();
            prop_assert_eq!(&back[..], &want[3.min(want.len())..want.len().saturating_sub(2).max(3.min(want.len()))]);
            for (i, (s, k)) in want.iter().enumerate() {
                prop_assert_eq!(z.rank(k), Some(i));
                prop_assert_eq!(z.score(k), Some(s.0));
                let (am, as_) = z.at_rank(i).unwrap();
                prop_assert_eq!((S(as_), am.to_vec()), (*s, k.clone()));
            }
            for b in [-3.0, 0.0, 2.5, f64::INFINITY] {
                prop_assert_eq!(z.rank_of_score(b, false), want.iter().filter(|e| e.0 .0 < b).count());
                prop_assert_eq!(z.rank_of_score(b, true), want.iter().filter(|e| e.0 .0 <= b).count());
            }
            let n = z.len();
            let removed = z.remove_rank_range(n / 3, n / 2);
            prop_assert_eq!(removed, n / 2 - n / 3);
            z.check();
            let mut last = None;
            while let Some((m0, s0)) = z.pop(last == Some(true)) {
                last = Some(last != Some(true));
                prop_assert!(m.contains_key(&m0));
                let _ = s0;
            }
            z.check();
            prop_assert_eq!(z.heap_bytes(), 0);
        }
    }

    #[test]
    fn sequential_fill_and_lex() {
        let mut z = SortedSet::new();
        for i in 0..100_000u32 {
            z.insert(format!("m{i:06}").as_bytes(), i as f64);
        }
        z.check();
        // Appends fill leaves: tree bytes close to 24 B per entry.
        assert!(
            z.tree.heap_bytes() < 100_000 * 26,
            "{}",
            z.tree.heap_bytes()
        );
        let mut l = SortedSet::new();
        for c in b'a'..=b'z' {
            l.insert(&[c], 0.0);
        }
        assert_eq!(l.rank_of_lex(b"c", false), 2);
        assert_eq!(l.rank_of_lex(b"c", true), 3);
        for i in (0..100_000u32).rev() {
            assert_eq!(z.remove(format!("m{i:06}").as_bytes()), Some(i as f64));
            if i % 9999 == 0 {
                z.check();
            }
        }
        assert_eq!(z.heap_bytes(), 0);
    }
}
