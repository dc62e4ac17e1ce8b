//! Sorted-set values: `listpack` while small, `skiplist` (Petrel's B+tree
//! plus member table, reported under Redis's name) beyond
//! `zset-max-listpack-entries` / `zset-max-listpack-value`.
//!
//! Operations are expressed over *ascending ranks*: a score or lex range is
//! turned into a rank interval `start..end` ([`ZsetValue::score_range`],
//! [`ZsetValue::lex_range`]) and then visited, counted or removed by rank,
//! so both encodings share one code path and the tree answers in O(log n).
//!
//! Invariants:
//! * scores are never NaN;
//! * conversion to the tree happens exactly where Redis 7.0 converts: when
//!   inserting a new member would make the count exceed
//!   `zset-max-listpack-entries` or the member is longer than
//!   `zset-max-listpack-value` ([`ZsetValue::insert`]); a value built whole
//!   (STORE commands) is a listpack iff it fits both limits
//!   ([`ZsetValue::from_sorted`]). Nothing converts back.

use crate::{Limits, ListpackZset, LpValue, SortedSet};
use rand::Rng;

/// A Redis sorted set in one of its two encodings.
#[derive(Clone, Debug)]
pub enum ZsetValue {
    Listpack(ListpackZset),
    Tree(Box<SortedSet>),
}

impl Default for ZsetValue {
    fn default() -> Self {
        ZsetValue::Listpack(ListpackZset::new())
    }
}

/// A score interval (`ZRANGEBYSCORE` min/max with `(` exclusions).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScoreRange {
    pub min: f64,
    pub max: f64,
    pub minex: bool,
    pub maxex: bool,
}

/// One end of a lex interval.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LexBound {
    /// `-`
    NegInf,
    /// `+`
    PosInf,
    /// `[member`
    Incl(Vec<u8>),
    /// `(member`
    Excl(Vec<u8>),
}

/// A lex interval (`ZRANGEBYLEX` min/max).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LexRange {
    pub min: LexBound,
    pub max: LexBound,
}

/// Decimal text of a listpack integer member.
struct IntBuf([u8; 20], usize);

impl IntBuf {
    fn of(v: LpValue<'_>, f: impl FnOnce(&[u8])) {
        match v {
            LpValue::Str(s) => f(s),
            LpValue::Int(i) => {
                let mut b = IntBuf([0; 20], 0);
                let mut n = i.unsigned_abs();
                let mut pos = 20;
                loop {
                    pos -= 1;
                    b.0[pos] = b'0' + (n % 10) as u8;
                    n /= 10;
                    if n == 0 {
                        break;
                    }
                }
                if i < 0 {
                    pos -= 1;
                    b.0[pos] = b'-';
                }
                b.1 = pos;
                f(&b.0[b.1..])
            }
        }
    }
}

impl ZsetValue {
    /// The empty value ZADD creates for its first member (Redis 7.0:
    /// the tree when `zset-max-listpack-entries` is 0 or that member is
    /// too long for a listpack).
    pub fn new_for(first_member_len: usize, limits: &Limits) -> ZsetValue {
        if limits.zset_max_listpack_entries == 0
            || first_member_len > limits.zset_max_listpack_value
        {
            ZsetValue::Tree(Box::default())
        } else {
            ZsetValue::default()
        }
    }

    /// A value holding `pairs` (already in (score, member) order, distinct
    /// members), encoded as Redis encodes a STORE result of that size.
    pub fn from_sorted(pairs: &[(Vec<u8>, f64)], limits: &Limits) -> ZsetValue {
        let small = pairs.len() <= limits.zset_max_listpack_entries
            && pairs
                .iter()
                .all(|(m, _)| m.len() <= limits.zset_max_listpack_value);
        if small {
            let mut z = ListpackZset::new();
            for (m, s) in pairs {
                z.push_back(m, *s);
            }
            ZsetValue::Listpack(z)
        } else {
            let mut z = SortedSet::new();
            for (m, s) in pairs {
                z.insert(m, *s);
            }
            ZsetValue::Tree(Box::new(z))
        }
    }

    /// A value built as Redis's ZRANGESTORE builds its destination from
    /// `pairs` (distinct members, in the order the range yields them): a
    /// listpack when their number fits `zset-max-listpack-entries`, else
    /// the tree, filled by inserts that convert at the first member too
    /// long for the listpack. Unlike [`from_sorted`](Self::from_sorted)'s
    /// all-or-nothing choice, this keeps Redis's scores exactly: a score of
    /// `-0` inserted while the value is still a listpack is stored as `0`
    /// (both listpacks write it as the integer 0), later ones stay `-0`.
    pub fn from_inserts(pairs: &[(Vec<u8>, f64)], limits: &Limits) -> ZsetValue {
        let mut z = if pairs.len() > limits.zset_max_listpack_entries {
            ZsetValue::Tree(Box::default())
        } else {
            ZsetValue::default()
        };
        for (m, s) in pairs {
            z.insert(m, *s, limits);
        }
        z
    }

    pub fn len(&self) -> usize {
        match self {
            ZsetValue::Listpack(z) => z.len(),
            ZsetValue::Tree(z) => z.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes allocated by the encoding (O(1)).
    pub fn heap_bytes(&self) -> usize {
        match self {
            ZsetValue::Listpack(z) => z.heap_bytes(),
            ZsetValue::Tree(z) => crate::value::boxed_bytes(&**z),
        }
    }

    /// OBJECT ENCODING name.
    pub fn encoding_name(&self) -> &'static str {
        match self {
            ZsetValue::Listpack(_) => "listpack",
            ZsetValue::Tree(_) => "skiplist",
        }
    }

    pub fn score(&self, member: &[u8]) -> Option<f64> {
        match self {
            ZsetValue::Listpack(z) => z.score(member),
            ZsetValue::Tree(z) => z.score(member),
        }
    }

    /// 0-based ascending rank of `member`.
    pub fn rank(&self, member: &[u8]) -> Option<usize> {
        match self {
            ZsetValue::Listpack(z) => z.rank(member),
            ZsetValue::Tree(z) => z.rank(member),
        }
    }

    /// Converts a listpack to the tree (no-op for the tree).
    pub fn convert_to_tree(&mut self) {
        if let ZsetValue::Listpack(lp) = self {
            let mut t = SortedSet::new();
            for (m, s) in lp.iter() {
                IntBuf::of(m, |b| {
                    t.insert(b, s);
                });
            }
            *self = ZsetValue::Tree(Box::new(t));
        }
    }

    /// Insert or update `member` (score must not be NaN), converting first
    /// when a new member would not fit the listpack limits. Returns the
    /// previous score. An equal score (`0` vs `-0` included) is not
    /// rewritten, as Redis.
    pub fn insert(&mut self, member: &[u8], score: f64, limits: &Limits) -> Option<f64> {
        debug_assert!(!score.is_nan());
        if let ZsetValue::Listpack(z) = self {
            let fits = z.len() < limits.zset_max_listpack_entries
                && member.len() <= limits.zset_max_listpack_value;
            if fits || z.score(member).is_some() {
                return z.insert(member, score);
            }
            self.convert_to_tree();
        }
        match self {
            ZsetValue::Tree(z) => z.insert(member, score),
            ZsetValue::Listpack(_) => unreachable!("converted above"),
        }
    }

    /// Remove `member`; returns its score.
    pub fn remove(&mut self, member: &[u8]) -> Option<f64> {
        match self {
            ZsetValue::Listpack(z) => z.remove(member),
            ZsetValue::Tree(z) => z.remove(member),
        }
    }

    /// Number of leading elements (ascending order) for which
    /// `before(member, score)` holds; `before` must hold for a prefix.
    pub fn rank_by(&self, before: impl Fn(&[u8], f64) -> bool) -> usize {
        match self {
            ZsetValue::Listpack(z) => {
                let mut n = 0;
                for (m, s) in z.iter() {
                    let mut t = false;
                    IntBuf::of(m, |b| t = before(b, s));
                    if !t {
                        break;
                    }
                    n += 1;
                }
                n
            }
            ZsetValue::Tree(z) => z.rank_by(before),
        }
    }

    /// Ascending rank interval `start..end` of the elements inside `r`
    /// (`start >= end` when empty).
    pub fn score_range(&self, r: &ScoreRange) -> (usize, usize) {
        if r.min > r.max || (r.min == r.max && (r.minex || r.maxex)) {
            return (0, 0);
        }
        let start = if r.minex {
            self.rank_by(|_, s| s <= r.min)
        } else {
            self.rank_by(|_, s| s < r.min)
        };
        let end = if r.maxex {
            self.rank_by(|_, s| s < r.max)
        } else {
            self.rank_by(|_, s| s <= r.max)
        };
        (start, end.max(start))
    }

    /// Ascending rank interval of the members inside `r` (meaningful when
    /// all scores are equal, as Redis documents).
    pub fn lex_range(&self, r: &LexRange) -> (usize, usize) {
        // Like Redis, nothing matches unless the last member reaches `min`
        // and the first member is within `max` (with mixed scores the
        // prefix rules below alone would disagree with Redis).
        let n = self.len();
        if n == 0 {
            return (0, 0);
        }
        let (first, last) = (self.at_rank(0).unwrap().0, self.at_rank(n - 1).unwrap().0);
        let gte_min = |m: &[u8]| match &r.min {
            LexBound::NegInf => true,
            LexBound::PosInf => false,
            LexBound::Incl(x) => m >= x.as_slice(),
            LexBound::Excl(x) => m > x.as_slice(),
        };
        let lte_max = |m: &[u8]| match &r.max {
            LexBound::NegInf => false,
            LexBound::PosInf => true,
            LexBound::Incl(x) => m <= x.as_slice(),
            LexBound::Excl(x) => m < x.as_slice(),
        };
        if !gte_min(&last) || !lte_max(&first) {
            return (0, 0);
        }
        if let ZsetValue::Listpack(_) = self {
            // Redis scans a listpack from its head: the first member at or
            // above `min` starts the range if it is within `max`, which
            // runs while members stay within `max`. With equal scores this
            // is the sorted interval below; with mixed scores it is what
            // Redis replies (and what a replayed ZRANGESTORE rebuilds).
            let at = |i: usize| self.at_rank(i).unwrap().0;
            let Some(start) = (0..n).find(|&i| gte_min(&at(i))) else {
                return (0, 0);
            };
            if !lte_max(&at(start)) {
                return (0, 0);
            }
            let end = (start + 1..n).find(|&i| !lte_max(&at(i))).unwrap_or(n);
            return (start, end);
        }
        let start = match &r.min {
            LexBound::NegInf => 0,
            LexBound::PosInf => return (0, 0),
            LexBound::Incl(m) => self.rank_by(|x, _| x < m.as_slice()),
            LexBound::Excl(m) => self.rank_by(|x, _| x <= m.as_slice()),
        };
        let end = match &r.max {
            LexBound::NegInf => return (0, 0),
            LexBound::PosInf => self.len(),
            LexBound::Incl(m) => self.rank_by(|x, _| x <= m.as_slice()),
            LexBound::Excl(m) => self.rank_by(|x, _| x < m.as_slice()),
        };
        (start, end.max(start))
    }

    /// [`ZsetValue::lex_range`] for a reply in descending order
    /// (`ZRANGE .. BYLEX REV`): on a listpack Redis scans from the tail for
    /// the last member within `max`, which starts the range if it reaches
    /// `min`; the range runs down while members stay at or above `min`.
    pub fn lex_range_rev(&self, r: &LexRange) -> (usize, usize) {
        let ZsetValue::Listpack(_) = self else {
            return self.lex_range(r);
        };
        let n = self.len();
        if n == 0 {
            return (0, 0);
        }
        let at = |i: usize| self.at_rank(i).unwrap().0;
        let gte_min = |m: &[u8]| match &r.min {
            LexBound::NegInf => true,
            LexBound::PosInf => false,
            LexBound::Incl(x) => m >= x.as_slice(),
            LexBound::Excl(x) => m > x.as_slice(),
        };
        let lte_max = |m: &[u8]| match &r.max {
            LexBound::NegInf => false,
            LexBound::PosInf => true,
            LexBound::Incl(x) => m <= x.as_slice(),
            LexBound::Excl(x) => m < x.as_slice(),
        };
        // As in `lex_range`: nothing unless the last member reaches `min`
        // and the first is within `max` (an empty or reversed range fails
        // the scan below too).
        if !gte_min(&at(n - 1)) || !lte_max(&at(0)) {
            return (0, 0);
        }
        let Some(last) = (0..n).rev().find(|&i| lte_max(&at(i))) else {
            return (0, 0);
        };
        if !gte_min(&at(last)) {
            return (0, 0);
        }
        let first = (0..last)
            .rev()
            .find(|&i| !gte_min(&at(i)))
            .map_or(0, |i| i + 1);
        (first, last + 1)
    }

    /// Visit ascending ranks `start..end` (clipped), in descending order
    /// when `rev`, until `f` returns false.
    pub fn for_each_in(
        &self,
        start: usize,
        end: usize,
        rev: bool,
        mut f: impl FnMut(&[u8], f64) -> bool,
    ) {
        let end = end.min(self.len());
        if start >= end {
            return;
        }
        match self {
            ZsetValue::Listpack(z) => {
                let n = z.len();
                let mut go = |(m, s): (LpValue<'_>, f64)| {
                    let mut more = true;
                    IntBuf::of(m, |b| more = f(b, s));
                    more
                };
                if rev {
                    z.iter().rev().skip(n - end).take(end - start).all(&mut go);
                } else {
                    z.iter().skip(start).take(end - start).all(&mut go);
                }
            }
            ZsetValue::Tree(z) => z.for_each_in(start, end, rev, f),
        }
    }

    /// The (member, score) pairs of ranks `start..end` in ascending order,
    /// or descending when `rev`.
    pub fn collect_range(&self, start: usize, end: usize, rev: bool) -> Vec<(Vec<u8>, f64)> {
        let mut out = Vec::with_capacity(end.saturating_sub(start).min(self.len()));
        self.for_each_in(start, end, rev, |m, s| {
            out.push((m.to_vec(), s));
            true
        });
        out
    }

    /// Every (member, score) in ascending order.
    pub fn to_pairs(&self) -> Vec<(Vec<u8>, f64)> {
        self.collect_range(0, self.len(), false)
    }

    /// Remove and return the lowest (`max == false`) or highest element.
    pub fn pop(&mut self, max: bool) -> Option<(Vec<u8>, f64)> {
        match self {
            ZsetValue::Listpack(z) => z.pop(max),
            ZsetValue::Tree(z) => z.pop(max),
        }
    }

    /// Remove ascending ranks `start..end` (clipped); returns how many.
    pub fn remove_rank_range(&mut self, start: usize, end: usize) -> usize {
        match self {
            ZsetValue::Listpack(z) => z.remove_rank_range(start, end),
            ZsetValue::Tree(z) => z.remove_rank_range(start, end),
        }
    }

    /// (member, score) at ascending rank `r`.
    pub fn at_rank(&self, r: usize) -> Option<(Vec<u8>, f64)> {
        let mut out = None;
        self.for_each_in(r, r + 1, false, |m, s| {
            out = Some((m.to_vec(), s));
            false
        });
        out
    }

    /// A uniformly random element.
    pub fn random<R: Rng + ?Sized>(&self, rng: &mut R) -> Option<(Vec<u8>, f64)> {
        match self {
            ZsetValue::Listpack(z) => {
                if z.is_empty() {
                    return None;
                }
                self.at_rank(rng.gen_range(0..z.len()))
            }
            ZsetValue::Tree(z) => z.random(rng).map(|(m, s)| (m.to_vec(), s)),
        }
    }

    /// `count` distinct random elements (`count < len`), in no useful order.
    pub fn random_distinct<R: Rng + ?Sized>(
        &self,
        rng: &mut R,
        count: usize,
    ) -> Vec<(Vec<u8>, f64)> {
        let n = self.len();
        let count = count.min(n);
        let mut idx = rand::seq::index::sample(rng, n, count).into_vec();
        match self {
            ZsetValue::Listpack(_) => {
                // One ordered walk over the listpack.
                idx.sort_unstable();
                let mut out = Vec::with_capacity(count);
                let mut k = 0;
                let mut r = 0;
                self.for_each_in(0, n, false, |m, s| {
                    if k < idx.len() && idx[k] == r {
                        out.push((m.to_vec(), s));
                        k += 1;
                    }
                    r += 1;
                    k < idx.len()
                });
                out
            }
            ZsetValue::Tree(z) => idx
                .into_iter()
                .filter_map(|r| z.at_rank(r).map(|(m, s)| (m.to_vec(), s)))
                .collect(),
        }
    }

    /// [`Self::random`] with the thread's generator.
    pub fn random_member(&self) -> Option<(Vec<u8>, f64)> {
        self.random(&mut rand::thread_rng())
    }

    /// [`Self::random_distinct`] with the thread's generator.
    pub fn random_sample(&self, count: usize) -> Vec<(Vec<u8>, f64)> {
        self.random_distinct(&mut rand::thread_rng(), count)
    }

    /// One ZSCAN step: a listpack is returned whole with cursor 0; the tree
    /// scans its member table (same guarantees as SCAN).
    pub fn scan(&self, cursor: u64, count: usize, mut f: impl FnMut(&[u8], f64)) -> u64 {
        match self {
            ZsetValue::Listpack(_) => {
                self.for_each_in(0, self.len(), false, |m, s| {
                    f(m, s);
                    true
                });
                0
            }
            ZsetValue::Tree(z) => z.scan(cursor, count, f),
        }
    }
}

impl ZsetValue {
    /// Offers its blocks to the defragmenter (see [`crate::defrag`]), in
    /// steps: `from` 0 starts; returns where to go on, `None` when done.
    /// A listpack offers its one block at once; a tree moves its box, then
    /// its nodes and members, then its member table, about `max_fields`
    /// entries per step ([`crate::zset::SortedSet::defrag`]).
    pub fn defrag(
        &mut self,
        from: u64,
        max_fields: usize,
        d: &mut crate::defrag::Defrag,
    ) -> Option<u64> {
        match self {
            ZsetValue::Listpack(z) => z.defrag(d),
            ZsetValue::Tree(t) => {
                if from == 0 {
                    d.boxed(t);
                }
                return t.defrag(from, max_fields, d);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    #[derive(Debug, Clone)]
    enum Op {
        Add(Vec<u8>, f64),
        Rem(Vec<u8>),
        Pop(bool),
        RemRange(usize, usize),
    }

    fn member() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            (0u32..40).prop_map(|i| format!("m{i}").into_bytes()),
            (-20i64..20).prop_map(|i| i.to_string().into_bytes()),
            (0u32..4).prop_map(|i| vec![b'x'; 10 + i as usize * 5]),
        ]
    }

    fn score() -> impl Strategy<Value = f64> {
        prop_oneof![
            (-5i32..5).prop_map(f64::from),
            (-5i32..5).prop_map(|x| x as f64 / 3.0),
            Just(f64::INFINITY),
            Just(f64::NEG_INFINITY),
            Just(-0.0),
        ]
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => (member(), score()).prop_map(|(m, s)| Op::Add(m, s)),
            2 => member().prop_map(Op::Rem),
            1 => any::<bool>().prop_map(Op::Pop),
            1 => (0usize..10, 0usize..10).prop_map(|(a, b)| Op::RemRange(a, a + b)),
        ]
    }

    /// Model: (score, member) order as Redis sorts.
    fn sorted(m: &BTreeMap<Vec<u8>, f64>) -> Vec<(Vec<u8>, f64)> {
        let mut v: Vec<(Vec<u8>, f64)> = m.iter().map(|(k, s)| (k.clone(), *s)).collect();
        v.sort_by(|a, b| a.1.partial_cmp(&b.1).unwrap().then(a.0.cmp(&b.0)));
        v
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Command-level semantics over both encodings and the conversion
        /// points, against a BTreeMap model.
        #[test]
        fn model(ops in proptest::collection::vec(op(), 1..120),
                 entries in 0usize..12, value in 8usize..20) {
            let limits = Limits {
                zset_max_listpack_entries: entries,
                zset_max_listpack_value: value,
                ..Limits::default()
            };
            let mut z: Option<ZsetValue> = None;
            let mut m: BTreeMap<Vec<u8>, f64> = BTreeMap::new();
            let mut ever_big = false;
            for o in ops {
                match o {
                    Op::Add(k, s) => {
                        let v = z.get_or_insert_with(|| ZsetValue::new_for(k.len(), &limits));
                        let old = m.get(&k).copied();
                        prop_assert_eq!(v.insert(&k, s, &limits), old);
                        // Equal scores are not rewritten (0 vs -0).
                        if old != Some(s) {
                            m.insert(k.clone(), s);
                        }
                        ever_big |= m.len() > entries || k.len() > value;
                    }
                    Op::Rem(k) => {
                        if let Some(v) = &mut z {
                            prop_assert_eq!(v.remove(&k), m.remove(&k));
                        }
                    }
                    Op::Pop(max) => {
                        if let Some(v) = &mut z {
                            let want = sorted(&m);
                            let w = if max { want.last() } else { want.first() };
                            let got = v.pop(max);
                            prop_assert_eq!(got.as_ref(), w);
                            if let Some((k, _)) = got { m.remove(&k); }
                        }
                    }
                    Op::RemRange(a, b) => {
                        if let Some(v) = &mut z {
                            let want = sorted(&m);
                            let n = v.remove_rank_range(a, b);
                            let hi = b.min(want.len());
                            prop_assert_eq!(n, hi.saturating_sub(a));
                            for (k, _) in want.iter().take(hi).skip(a) { m.remove(k); }
                        }
                    }
                }
                if let Some(v) = &z {
                    prop_assert_eq!(v.len(), m.len());
                    prop_assert_eq!(v.encoding_name() == "skiplist", ever_big);
                    if v.is_empty() { z = None; ever_big = false; }
                }
            }
            let Some(v) = z else { return Ok(()); };
            let want = sorted(&m);
            prop_assert_eq!(v.to_pairs(), want.clone());
            let mut rev = v.collect_range(1, want.len(), true);
            rev.reverse();
            prop_assert_eq!(&rev[..], &want[1.min(want.len())..]);
            for (i, (k, s)) in want.iter().enumerate() {
                prop_assert_eq!(v.rank(k), Some(i));
                prop_assert_eq!(v.score(k), Some(*s));
                prop_assert_eq!(v.at_rank(i), Some((k.clone(), *s)));
            }
            for (min, max, minex, maxex) in [(-1.0, 1.0, false, false), (-1.0, 1.0, true, true),
                (f64::NEG_INFINITY, f64::INFINITY, false, false), (0.0, 0.0, false, false),
                (2.0, -2.0, false, false), (0.0, 0.0, true, false)] {
                let r = ScoreRange { min, max, minex, maxex };
                let (a, b) = v.score_range(&r);
                let cnt = want.iter().filter(|(_, s)| {
                    (if minex { *s > min } else { *s >= min }) && (if maxex { *s < max } else { *s <= max })
                }).count();
                prop_assert_eq!(b.saturating_sub(a), cnt);
            }
            let same = ZsetValue::from_sorted(&want, &limits);
            prop_assert_eq!(same.to_pairs(), want.clone());
            let fits = want.len() <= entries && want.iter().all(|(k, _)| k.len() <= value);
            prop_assert_eq!(same.encoding_name(), if fits { "listpack" } else { "skiplist" });
            let mut rng = rand::thread_rng();
            let pick = v.random_distinct(&mut rng, want.len() / 2);
            prop_assert_eq!(pick.len(), want.len() / 2);
            let uniq: std::collections::HashSet<_> = pick.iter().map(|p| p.0.clone()).collect();
            prop_assert_eq!(uniq.len(), pick.len());
            let mut seen = BTreeMap::new();
            let mut c = 0;
            loop {
                c = v.scan(c, 3, |k, s| { seen.insert(k.to_vec(), s); });
                if c == 0 { break; }
            }
            prop_assert_eq!(seen, m);
        }
    }

    #[test]
    fn lex_ranges() {
        let limits = Limits::default();
        for big in [false, true] {
            let mut z = ZsetValue::default();
            for c in b'a'..=b'g' {
                z.insert(&[c], 0.0, &limits);
            }
            if big {
                z.convert_to_tree();
            }
            let r = |min: LexBound, max: LexBound| z.lex_range(&LexRange { min, max });
            use LexBound::*;
            assert_eq!(r(NegInf, PosInf), (0, 7));
            assert_eq!(r(Incl(b"b".to_vec()), Excl(b"e".to_vec())), (1, 4));
            assert_eq!(r(Excl(b"b".to_vec()), Incl(b"e".to_vec())), (2, 5));
            assert_eq!(r(PosInf, PosInf), (0, 0));
            let (a, b) = r(Incl(b"e".to_vec()), Incl(b"b".to_vec()));
            assert!(a >= b, "a reversed range is empty");
            assert_eq!(z.rank(b"c"), Some(2));
        }
    }

    /// Mixed scores on a listpack: Redis 7.0's scans (replies checked
    /// against redis-server: `ZRANGE z [9 - BYLEX REV` gives 895 m18 38 36
    /// 26, `ZRANGE z [m (9 BYLEX REV` gives a0, `ZRANGE z [3 + BYLEX` 36
    /// .. zz).
    #[test]
    fn lex_ranges_mixed_scores_listpack() {
        let limits = Limits::default();
        let mut z = ZsetValue::default();
        for (m, s) in [
            ("26", 1.0),
            ("36", 1.0),
            ("38", 1.0),
            ("m18", 2.0),
            ("895", 3.0),
            ("a0", 4.0),
            ("zz", 5.0),
        ] {
            z.insert(m.as_bytes(), s, &limits);
        }
        use LexBound::*;
        let lr = |min: LexBound, max: LexBound| LexRange { min, max };
        assert_eq!(z.lex_range_rev(&lr(NegInf, Incl(b"9".to_vec()))), (0, 5));
        assert_eq!(
            z.lex_range_rev(&lr(Excl(b"9".to_vec()), Incl(b"m".to_vec()))),
            (5, 6)
        );
        assert_eq!(z.lex_range(&lr(Incl(b"3".to_vec()), PosInf)), (1, 7));
        assert_eq!(z.lex_range(&lr(NegInf, Incl(b"9".to_vec()))), (0, 3));
    }

    /// `from_inserts` keeps Redis's -0 rule: members inserted while the
    /// value is a listpack store 0, those after the conversion keep -0;
    /// more members than the listpack allows start as the tree.
    #[test]
    fn from_inserts_and_negative_zero() {
        let limits = Limits {
            zset_max_listpack_value: 4,
            ..Limits::default()
        };
        let p = |m: &str, s: f64| (m.as_bytes().to_vec(), s);
        let sign = |z: &ZsetValue, m: &str| z.score(m.as_bytes()).unwrap().is_sign_negative();
        let asc = ZsetValue::from_inserts(&[p("a", -0.0), p("longer", 1.0)], &limits);
        assert!(matches!(asc, ZsetValue::Tree(_)));
        assert!(!sign(&asc, "a"), "inserted into the listpack: 0");
        let desc = ZsetValue::from_inserts(&[p("longer", 1.0), p("a", -0.0)], &limits);
        assert!(sign(&desc, "a"), "inserted after the conversion: -0");
        let small = ZsetValue::from_inserts(&[p("a", -0.0)], &limits);
        assert!(matches!(small, ZsetValue::Listpack(_)));
        assert!(!sign(&small, "a"));
        let one = Limits {
            zset_max_listpack_entries: 1,
            ..limits
        };
        let big = ZsetValue::from_inserts(&[p("a", -0.0), p("b", 1.0)], &one);
        assert!(matches!(big, ZsetValue::Tree(_)));
        assert!(sign(&big, "a"), "started as the tree: -0");
    }
}
