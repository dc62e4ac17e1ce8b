//! Set values: `intset` while every member is an integer and there are at
//! most `set-max-intset-entries`, `listpack` while small, `hashtable` beyond.
//!
//! Conversion points (Redis 7.2's, checked by the model test below):
//! * intset + a non-integer member: to `listpack` if the set would still fit
//!   the listpack limits (entries after the add <= `set-max-listpack-entries`,
//!   the new member and the decimal form of every integer <=
//!   `set-max-listpack-value` bytes), else to `hashtable`;
//! * intset growing past `set-max-intset-entries`: to `hashtable`;
//! * listpack + a member that would pass either listpack limit: to
//!   `hashtable`.
//!
//! An integer member is one whose bytes are a canonical 64-bit decimal
//! (Redis's `string2ll`: no '+', no leading zeros, no "-0", no spaces).
//! Conversions only go towards `hashtable`; removing members never converts
//! back (Redis does not either). Redis 7.2's size-hint conversions (a SADD
//! with more arguments than the limit converting before adding) are not
//! done: conversions depend on the actual member count, as in Redis 7.0.
//!
//! Members are handed out as [`Member`] (= [`LpValue`]): `Int` for intset and
//! listpack integer entries, `Str` for everything else; both denote the same
//! member when the string is the integer's decimal form.

use crate::listpack::{string_to_i64, LpValue};
use crate::{CompactSet, IntSet, Limits, ListpackSet};
use rand::Rng;

/// A set member as stored: integer or bytes.
pub type Member<'a> = LpValue<'a>;

/// The thread's random generator (SPOP, SRANDMEMBER), so callers need not
/// depend on `rand`.
pub fn thread_rng() -> rand::rngs::ThreadRng {
    rand::thread_rng()
}

/// Writes the decimal form of `v` into `buf`; returns the used tail.
pub fn fmt_int(v: i64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    let mut u = v.unsigned_abs();
    loop {
        i -= 1;
        buf[i] = b'0' + (u % 10) as u8;
        u /= 10;
        if u == 0 {
            break;
        }
    }
    if v < 0 {
        i -= 1;
        buf[i] = b'-';
    }
    &buf[i..]
}

fn digits(v: i64) -> usize {
    let mut buf = [0u8; 20];
    fmt_int(v, &mut buf).len()
}

/// A Redis set in one of its three encodings.
#[derive(Clone, Debug)]
pub enum SetValue {
    IntSet(IntSet),
    Listpack(ListpackSet),
    Table(Box<CompactSet>),
}

impl Default for SetValue {
    fn default() -> Self {
        SetValue::IntSet(IntSet::new())
    }
}

impl SetValue {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        match self {
            SetValue::IntSet(s) => s.len(),
            SetValue::Listpack(s) => s.len(),
            SetValue::Table(s) => s.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes allocated by the encoding (O(1)).
    pub fn heap_bytes(&self) -> usize {
        match self {
            SetValue::IntSet(s) => s.heap_bytes(),
            SetValue::Listpack(s) => s.heap_bytes(),
            SetValue::Table(s) => crate::value::boxed_bytes(&**s),
        }
    }

    /// OBJECT ENCODING name.
    pub fn encoding_name(&self) -> &'static str {
        match self {
            SetValue::IntSet(_) => "intset",
            SetValue::Listpack(_) => "listpack",
            SetValue::Table(_) => "hashtable",
        }
    }

    /// SISMEMBER. Small encodings use their index (binary search for the
    /// intset, the fingerprint index for the listpack).
    pub fn contains(&self, m: &[u8]) -> bool {
        match self {
            SetValue::IntSet(s) => string_to_i64(m).is_some_and(|v| s.contains(v)),
            SetValue::Listpack(s) => s.contains(m),
            SetValue::Table(s) => s.contains(m),
        }
    }

    /// [`contains`](Self::contains) for a member taken from another set.
    pub fn contains_member(&self, m: Member<'_>) -> bool {
        match (self, m) {
            (SetValue::IntSet(s), Member::Int(v)) => s.contains(v),
            (_, Member::Str(b)) => self.contains(b),
            (_, Member::Int(v)) => self.contains(fmt_int(v, &mut [0; 20])),
        }
    }

    /// SADD one member under `lim`; true if it was new. Converts first when
    /// the member would break the current encoding's limits.
    pub fn insert(&mut self, m: &[u8], lim: &Limits) -> bool {
        match self {
            SetValue::IntSet(s) => {
                if let Some(v) = string_to_i64(m) {
                    if !s.insert(v) {
                        return false;
                    }
                    if s.len() > lim.set_max_intset_entries {
                        self.convert_to_table(0);
                    }
                    return true;
                }
                let fits = s.len() < lim.set_max_listpack_entries
                    && m.len() <= lim.set_max_listpack_value
                    && s.min()
                        .is_none_or(|v| digits(v) <= lim.set_max_listpack_value)
                    && s.max()
                        .is_none_or(|v| digits(v) <= lim.set_max_listpack_value);
                if fits {
                    self.convert_to_listpack();
                } else {
                    self.convert_to_table(1);
                }
                self.insert(m, lim)
            }
            SetValue::Listpack(s) => {
                if s.contains(m) {
                    return false;
                }
                if s.len() < lim.set_max_listpack_entries && m.len() <= lim.set_max_listpack_value {
                    return s.insert(m);
                }
                self.convert_to_table(1);
                self.insert(m, lim)
            }
            SetValue::Table(s) => s.insert(m),
        }
    }

    /// [`insert`](Self::insert) for a member taken from another set.
    pub fn insert_member(&mut self, m: Member<'_>, lim: &Limits) -> bool {
        match m {
            Member::Str(b) => self.insert(b, lim),
            Member::Int(v) => {
                if let SetValue::IntSet(s) = self {
                    if s.len() < lim.set_max_intset_entries || s.contains(v) {
                        return s.insert(v);
                    }
                }
                self.insert(fmt_int(v, &mut [0; 20]), lim)
            }
        }
    }

    /// SREM one member; true if it was present.
    pub fn remove(&mut self, m: &[u8]) -> bool {
        match self {
            SetValue::IntSet(s) => string_to_i64(m).is_some_and(|v| s.remove(v)),
            SetValue::Listpack(s) => s.remove(m),
            SetValue::Table(s) => s.remove(m),
        }
    }

    fn convert_to_listpack(&mut self) {
        if let SetValue::IntSet(s) = self {
            let mut lp = ListpackSet::new();
            let mut buf = [0u8; 20];
            for v in s.iter() {
                lp.insert(fmt_int(v, &mut buf));
            }
            *self = SetValue::Listpack(lp);
        }
    }

    fn convert_to_table(&mut self, extra: usize) {
        let mut t = CompactSet::with_capacity(self.len() + extra);
        let mut buf = [0u8; 20];
        for m in self.iter() {
            match m {
                Member::Int(v) => t.insert(fmt_int(v, &mut buf)),
                Member::Str(b) => t.insert(b),
            };
        }
        *self = SetValue::Table(Box::new(t));
    }

    /// All members (intset ascending, listpack insertion order, table slot
    /// order).
    pub fn iter(&self) -> Box<dyn Iterator<Item = Member<'_>> + '_> {
        match self {
            SetValue::IntSet(s) => Box::new(s.iter().map(Member::Int)),
            SetValue::Listpack(s) => Box::new(s.iter()),
            SetValue::Table(s) => Box::new(s.iter().map(Member::Str)),
        }
    }

    /// A uniformly random member.
    pub fn random<R: Rng + ?Sized>(&self, rng: &mut R) -> Option<Member<'_>> {
        let n = self.len();
        if n == 0 {
            return None;
        }
        match self {
            SetValue::IntSet(s) => s.get(rng.gen_range(0..n)).map(Member::Int),
            SetValue::Listpack(s) => s.member_at(rng.gen_range(0..n)),
            SetValue::Table(s) => s.random(rng).map(Member::Str),
        }
    }

    /// Removes and returns a uniformly random member (SPOP).
    pub fn pop_random<R: Rng + ?Sized>(&mut self, rng: &mut R) -> Option<Vec<u8>> {
        let n = self.len();
        if n == 0 {
            return None;
        }
        match self {
            SetValue::IntSet(s) => s
                .remove_at(rng.gen_range(0..n))
                .map(|v| v.to_string().into_bytes()),
            SetValue::Listpack(s) => s.remove_at(rng.gen_range(0..n)),
            SetValue::Table(s) => s.pop_random(rng),
        }
    }

    /// `count` distinct random members (`count` < `len()`; SRANDMEMBER with
    /// a positive count). Small counts sample with rejection, large ones
    /// shuffle a copy of the member list.
    pub fn sample_distinct<R: Rng + ?Sized>(&self, count: usize, rng: &mut R) -> Vec<Member<'_>> {
        let n = self.len();
        if count >= n {
            return self.iter().collect();
        }
        if count * 3 > n {
            let mut all: Vec<Member<'_>> = self.iter().collect();
            for i in 0..count {
                let j = rng.gen_range(i..n);
                all.swap(i, j);
            }
            all.truncate(count);
            return all;
        }
        let mut seen = std::collections::HashSet::with_capacity(count);
        let mut out = Vec::with_capacity(count);
        while out.len() < count {
            match self {
                SetValue::Table(s) => {
                    let m = s.random(rng).expect("not empty");
                    if seen.insert(m.as_ptr() as usize) {
                        out.push(Member::Str(m));
                    }
                }
                _ => {
                    let i = rng.gen_range(0..n);
                    if seen.insert(i) {
                        out.push(self.member_at(i));
                    }
                }
            }
        }
        out
    }

    /// The `i`-th member of a small encoding (`i < len()`).
    fn member_at(&self, i: usize) -> Member<'_> {
        match self {
            SetValue::IntSet(s) => Member::Int(s.get(i).expect("in range")),
            SetValue::Listpack(s) => s.member_at(i).expect("in range"),
            SetValue::Table(s) => Member::Str(s.iter().nth(i).expect("in range")),
        }
    }

    /// One SSCAN step: small encodings return every member and cursor 0 (as
    /// Redis does); the table visits about `count` buckets from `cursor`.
    pub fn scan(&self, cursor: u64, count: usize, mut f: impl FnMut(Member<'_>)) -> u64 {
        match self {
            SetValue::Table(s) => s.scan(cursor, count, |m| f(Member::Str(m))),
            _ => {
                self.iter().for_each(f);
                0
            }
        }
    }
}

impl SetValue {
    /// Offers its blocks to the defragmenter (see [`crate::defrag`]), in
    /// steps: `from` 0 starts; returns where to go on, `None` when done.
    /// A small encoding offers its one block at once; a table moves its
    /// box and arrays, then its out-of-line members `max_fields` slots
    /// per step ([`crate::CompactSet::defrag`]).
    pub fn defrag(
        &mut self,
        from: u64,
        max_fields: usize,
        d: &mut crate::defrag::Defrag,
    ) -> Option<u64> {
        match self {
            SetValue::IntSet(s) => s.defrag(d),
            SetValue::Listpack(s) => s.defrag(d),
            SetValue::Table(t) => {
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
    use rand::SeedableRng;
    use std::collections::HashSet;

    fn member() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            (-40i64..40).prop_map(|i| i.to_string().into_bytes()),
            any::<i64>().prop_map(|i| i.to_string().into_bytes()),
            (0u32..40).prop_map(|i| format!("m{i}").into_bytes()),
            Just(b"007".to_vec()),
            Just(b"-0".to_vec()),
            Just(b"+1".to_vec()),
            Just(b"".to_vec()),
            (0usize..30).prop_map(|n| vec![b'x'; n]),
        ]
    }

    fn limits() -> impl Strategy<Value = Limits> {
        (1usize..40, 1usize..40, 1usize..25).prop_map(|(i, e, v)| Limits {
            set_max_intset_entries: i,
            set_max_listpack_entries: e,
            set_max_listpack_value: v,
            ..Limits::default()
        })
    }

    /// The encoding Redis 7.2 would have after adding `m` (new) to a set of
    /// encoding `enc` holding `model` (before the add).
    fn expected_after_add(
        enc: &str,
        model: &HashSet<Vec<u8>>,
        m: &[u8],
        lim: &Limits,
    ) -> &'static str {
        let is_int = string_to_i64(m).is_some();
        match enc {
            "intset" if is_int => {
                if model.len() + 1 > lim.set_max_intset_entries {
                    "hashtable"
                } else {
                    "intset"
                }
            }
            "intset" => {
                let fits = model.len() < lim.set_max_listpack_entries
                    && m.len() <= lim.set_max_listpack_value
                    && model.iter().all(|x| x.len() <= lim.set_max_listpack_value);
                if fits {
                    "listpack"
                } else {
                    "hashtable"
                }
            }
            "listpack"
                if model.len() < lim.set_max_listpack_entries
                    && m.len() <= lim.set_max_listpack_value =>
            {
                "listpack"
            }
            _ => "hashtable",
        }
    }

    fn members_of(s: &SetValue) -> HashSet<Vec<u8>> {
        s.iter().map(|m| m.to_vec()).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]
        #[test]
        fn model(lim in limits(), ops in proptest::collection::vec((0u8..10, member()), 1..150), seed in any::<u64>()) {
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
            let mut s = SetValue::new();
            let mut m: HashSet<Vec<u8>> = HashSet::new();
            for (op, x) in ops {
                match op {
                    0..=4 => {
                        let want_enc = if m.contains(&x) { s.encoding_name() } else { expected_after_add(s.encoding_name(), &m, &x, &lim) };
                        prop_assert_eq!(s.insert(&x, &lim), m.insert(x.clone()));
                        prop_assert_eq!(s.encoding_name(), want_enc);
                    }
                    5 => {
                        let enc = s.encoding_name();
                        prop_assert_eq!(s.remove(&x), m.remove(&x));
                        prop_assert_eq!(s.encoding_name(), enc);
                    }
                    6 => {
                        if let Some(p) = s.pop_random(&mut rng) {
                            prop_assert!(m.remove(&p));
                        } else {
                            prop_assert!(m.is_empty());
                        }
                    }
                    7 => {
                        let r = s.random(&mut rng).map(|v| v.to_vec());
                        prop_assert_eq!(r.is_some(), !m.is_empty());
                        if let Some(r) = r { prop_assert!(m.contains(&r)); }
                        let k = x.len() % (m.len() + 2);
                        let sample = s.sample_distinct(k, &mut rng);
                        let distinct: HashSet<Vec<u8>> = sample.iter().map(|v| v.to_vec()).collect();
                        prop_assert_eq!(sample.len(), k.min(m.len()));
                        prop_assert_eq!(distinct.len(), sample.len());
                        prop_assert!(distinct.is_subset(&m));
                    }
                    8 => {
                        // Rebuild through insert_member (the STORE path).
                        let mut t = SetValue::new();
                        for v in s.iter() { t.insert_member(v, &lim); }
                        prop_assert_eq!(members_of(&t), m.clone());
                        for v in s.iter() { prop_assert!(t.contains_member(v)); }
                    }
                    _ => {
                        let mut seen = Vec::new();
                        let mut c = 0;
                        loop {
                            c = s.scan(c, 3, |v| seen.push(v.to_vec()));
                            if c == 0 { break; }
                        }
                        let set: HashSet<Vec<u8>> = seen.iter().cloned().collect();
                        prop_assert_eq!(seen.len(), set.len());
                        prop_assert_eq!(&set, &m);
                    }
                }
                prop_assert_eq!(s.len(), m.len());
                prop_assert_eq!(s.contains(&x), m.contains(&x));
            }
            prop_assert_eq!(members_of(&s), m.clone());
            for x in &m { prop_assert!(s.contains(x)); }
            let inner = match &s {
                SetValue::IntSet(i) => i.heap_bytes(),
                SetValue::Listpack(l) => l.heap_bytes(),
                SetValue::Table(t) => crate::value::boxed_bytes(&**t),
            };
            prop_assert_eq!(s.heap_bytes(), inner);
        }
    }

    #[test]
    fn conversion_points_with_defaults() {
        let lim = Limits::default();
        let mut s = SetValue::new();
        for i in 0..512 {
            s.insert(i.to_string().as_bytes(), &lim);
        }
        assert_eq!(s.encoding_name(), "intset");
        s.insert(b"512", &lim);
        assert_eq!(s.encoding_name(), "hashtable");

        let mut s = SetValue::new();
        for i in 0..127 {
            s.insert(i.to_string().as_bytes(), &lim);
        }
        s.insert(b"a", &lim);
        assert_eq!(s.encoding_name(), "listpack");
        s.insert(b"b", &lim);
        assert_eq!(s.encoding_name(), "hashtable");

        let mut s = SetValue::new();
        s.insert(&[b'x'; 64], &lim);
        assert_eq!(s.encoding_name(), "listpack");
        s.insert(&[b'x'; 65], &lim);
        assert_eq!(s.encoding_name(), "hashtable");
    }

    #[test]
    fn fmt_int_matches_to_string() {
        for v in [0, 1, -1, 9, 10, -10, i64::MAX, i64::MIN, 1234567890] {
            assert_eq!(fmt_int(v, &mut [0; 20]), v.to_string().as_bytes());
        }
    }
}
