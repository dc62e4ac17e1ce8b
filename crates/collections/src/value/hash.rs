//! Hash values: `listpack` while small, `hashtable` once a field or value is
//! longer than `hash-max-listpack-value` or the hash has more than
//! `hash-max-listpack-entries` fields.
//!
//! Conversion points (Redis 7.0):
//! * [`HashValue::convert_for_args`]: before a write (HSET, HMSET, HSETNX)
//!   the lengths of all the field and value arguments are checked, and the
//!   hash converts if any is longer than `hash-max-listpack-value`;
//! * [`HashValue::insert`]: a field or value that is too long converts
//!   before it is written (the HINCRBY / HINCRBYFLOAT path), and the hash
//!   converts after the write when it has more than
//!   `hash-max-listpack-entries` fields.
//!
//! A `hashtable` never converts back. The `listpack` encoding has two
//! forms, both reported as `listpack`:
//! * [`HashValue::Pack`] ([`PackHash`]) below [`INDEX_MIN`] (16) fields:
//!   one heap block that the keyspace points to directly from the value
//!   cell, found by a scan of at most 15 fields;
//! * [`HashValue::Listpack`] ([`ListpackHash`]) from [`INDEX_MIN`] fields:
//!   the listpack plus its fingerprint index (the keyspace boxes the enum),
//!   so a lookup never costs one comparison per field. It goes back to the
//!   packed form when it drops below [`INDEX_DROP`] fields (the index's
//!   own hysteresis).
//!
//! Invariant: a `Pack` hash has fewer than [`INDEX_MIN`] fields after
//! every method returns.
//!
//! Values are handed out as [`LpValue`]: the listpack keeps canonical
//! integers as integers, so a value may come back as `LpValue::Int`; its
//! bytes are the decimal text (see [`lp_bytes`]).

use rand::Rng;

use super::Limits;
use crate::small::{INDEX_DROP, INDEX_MIN};
use crate::{CompactMap, ListpackHash, LpValue, PackHash};

/// A Redis hash in one of its two encodings.
#[derive(Clone, Debug)]
pub enum HashValue {
    Pack(PackHash),
    Listpack(ListpackHash),
    Table(Box<CompactMap>),
}

impl Default for HashValue {
    fn default() -> Self {
        HashValue::Pack(PackHash::new())
    }
}

/// The thread's random generator, for the sampling methods (HRANDFIELD)
/// when the caller has none of its own.
pub fn rng() -> rand::rngs::ThreadRng {
    rand::thread_rng()
}

/// Bytes of a listpack entry; integers are written into `buf`.
#[inline]
pub fn lp_bytes<'a>(v: LpValue<'a>, buf: &'a mut [u8; 20]) -> &'a [u8] {
    match v {
        LpValue::Str(s) => s,
        LpValue::Int(i) => {
            let mut n = i.unsigned_abs();
            let mut p = buf.len();
            loop {
                p -= 1;
                buf[p] = b'0' + (n % 10) as u8;
                n /= 10;
                if n == 0 {
                    break;
                }
            }
            if i < 0 {
                p -= 1;
                buf[p] = b'-';
            }
            &buf[p..]
        }
    }
}

/// Length in bytes of an entry's text.
#[inline]
pub fn lp_len(v: LpValue<'_>) -> usize {
    match v {
        LpValue::Str(s) => s.len(),
        LpValue::Int(i) => {
            let mut n = i.unsigned_abs();
            let mut d = 1;
            while n >= 10 {
                n /= 10;
                d += 1;
            }
            d + usize::from(i < 0)
        }
    }
}

/// Iterator over (field, value) pairs in encoding order.
pub enum HashIter<'a> {
    Listpack(crate::small::PairIter<'a>),
    Table(Box<dyn Iterator<Item = (&'a [u8], &'a [u8])> + 'a>),
}

impl<'a> Iterator for HashIter<'a> {
    type Item = (LpValue<'a>, LpValue<'a>);
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            HashIter::Listpack(it) => it.next(),
            HashIter::Table(it) => it.next().map(|(f, v)| (LpValue::Str(f), LpValue::Str(v))),
        }
    }
}

impl HashValue {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        match self {
            HashValue::Pack(h) => h.len(),
            HashValue::Listpack(h) => h.len(),
            HashValue::Table(h) => h.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes allocated by the encoding (O(1)).
    pub fn heap_bytes(&self) -> usize {
        match self {
            HashValue::Pack(h) => h.heap_bytes(),
            HashValue::Listpack(h) => h.heap_bytes(),
            HashValue::Table(h) => crate::value::boxed_bytes(&**h),
        }
    }

    /// OBJECT ENCODING name.
    pub fn encoding_name(&self) -> &'static str {
        match self {
            HashValue::Pack(_) | HashValue::Listpack(_) => "listpack",
            HashValue::Table(_) => "hashtable",
        }
    }

    /// The value of `field`.
    #[inline]
    pub fn get(&self, field: &[u8]) -> Option<LpValue<'_>> {
        match self {
            HashValue::Pack(h) => h.get(field),
            HashValue::Listpack(h) => h.get(field),
            HashValue::Table(h) => h.get(field).map(LpValue::Str),
        }
    }

    #[inline]
    pub fn contains(&self, field: &[u8]) -> bool {
        match self {
            HashValue::Pack(h) => h.contains(field),
            HashValue::Listpack(h) => h.contains(field),
            HashValue::Table(h) => h.contains(field),
        }
    }

    /// Length of `field`'s value (HSTRLEN).
    pub fn value_len(&self, field: &[u8]) -> Option<usize> {
        self.get(field).map(lp_len)
    }

    /// Converts a `listpack` hash to `hashtable` (no-op otherwise).
    pub fn convert_to_table(&mut self) {
        if self.is_listpack() {
            let mut t = CompactMap::with_capacity(self.len());
            let (mut a, mut b) = ([0u8; 20], [0u8; 20]);
            for (f, v) in self.iter() {
                t.insert(lp_bytes(f, &mut a), lp_bytes(v, &mut b));
            }
            *self = HashValue::Table(Box::new(t));
        }
    }

    /// True in the `listpack` encoding (either form).
    #[inline]
    pub fn is_listpack(&self) -> bool {
        !matches!(self, HashValue::Table(_))
    }

    /// Moves between the two listpack forms at the index thresholds (see
    /// the module docs); a no-op for a `hashtable`.
    fn settle_form(&mut self) {
        match self {
            HashValue::Pack(h) if h.len() >= INDEX_MIN => {
                *self = HashValue::Listpack(h.to_listpack_hash());
            }
            HashValue::Listpack(h) if h.len() < INDEX_DROP => {
                *self = HashValue::Pack(PackHash::from_listpack_hash(h));
            }
            _ => {}
        }
    }

    /// The hash in the form the keyspace stores for its size: a listpack
    /// below [`INDEX_MIN`] fields in the packed form (values adopted from
    /// elsewhere, e.g. a loaded listpack).
    pub fn normalized(mut self) -> Self {
        if let HashValue::Listpack(h) = &self {
            if h.len() < INDEX_MIN {
                self = HashValue::Pack(PackHash::from_listpack_hash(h));
            }
        }
        self
    }

    /// Redis's pre-write check: converts when any of `args` (the field and
    /// value arguments of the write) is longer than
    /// `hash-max-listpack-value`.
    pub fn convert_for_args<'a>(
        &mut self,
        limits: &Limits,
        args: impl IntoIterator<Item = &'a [u8]>,
    ) {
        if self.is_listpack()
            && args
                .into_iter()
                .any(|a| a.len() > limits.hash_max_listpack_value)
        {
            self.convert_to_table();
        }
    }

    /// Sets `field` to `value`; true if the field is new. Converts before
    /// writing a field or value that is too long for a listpack, and after
    /// the write when the hash has too many fields.
    pub fn insert(&mut self, limits: &Limits, field: &[u8], value: &[u8]) -> bool {
        if self.is_listpack()
            && (field.len() > limits.hash_max_listpack_value
                || value.len() > limits.hash_max_listpack_value)
        {
            self.convert_to_table();
        }
        let new = match self {
            HashValue::Pack(h) => h.insert(field, value),
            HashValue::Listpack(h) => h.insert(field, value),
            HashValue::Table(h) => return h.insert(field, value),
        };
        if self.len() > limits.hash_max_listpack_entries {
            self.convert_to_table();
        } else {
            self.settle_form();
        }
        new
    }

    /// Removes `field`; true if it existed.
    pub fn remove(&mut self, field: &[u8]) -> bool {
        let gone = match self {
            HashValue::Pack(h) => h.remove(field),
            HashValue::Listpack(h) => h.remove(field),
            HashValue::Table(h) => return h.remove(field).is_some(),
        };
        self.settle_form();
        gone
    }

    /// (field, value) pairs: listpack order, or table order.
    pub fn iter(&self) -> HashIter<'_> {
        match self {
            HashValue::Pack(h) => HashIter::Listpack(h.iter()),
            HashValue::Listpack(h) => HashIter::Listpack(h.iter()),
            HashValue::Table(h) => HashIter::Table(Box::new(h.iter())),
        }
    }

    /// A uniformly random pair.
    pub fn random_pair<R: Rng + ?Sized>(&self, rng: &mut R) -> Option<(LpValue<'_>, LpValue<'_>)> {
        match self {
            HashValue::Pack(h) => {
                if h.is_empty() {
                    return None;
                }
                h.pair_at(rng.gen_range(0..h.len()))
            }
            HashValue::Listpack(h) => {
                if h.is_empty() {
                    return None;
                }
                h.pair_at(rng.gen_range(0..h.len()))
            }
            HashValue::Table(h) => h
                .random(rng)
                .map(|(f, v)| (LpValue::Str(f), LpValue::Str(v))),
        }
    }

    /// `count` independent uniform picks (HRANDFIELD with a negative
    /// count), passed to `f` one at a time.
    pub fn random_pairs<R: Rng + ?Sized>(
        &self,
        count: u64,
        rng: &mut R,
        mut f: impl FnMut(LpValue<'_>, LpValue<'_>),
    ) {
        if self.is_empty() {
            return;
        }
        for _ in 0..count {
            let (k, v) = self.random_pair(rng).expect("not empty");
            f(k, v);
        }
    }

    /// `count` distinct pairs chosen uniformly (HRANDFIELD with a positive
    /// count). `count >= len` gives every pair in encoding order; a
    /// listpack gives its pick in listpack order (as Redis does).
    pub fn sample_unique<R: Rng + ?Sized>(
        &self,
        count: usize,
        rng: &mut R,
    ) -> Vec<(LpValue<'_>, LpValue<'_>)> {
        let n = self.len();
        if count >= n {
            return self.iter().collect();
        }
        match self {
            HashValue::Pack(_) | HashValue::Listpack(_) => {
                // Selection sampling: keeps listpack order.
                let mut out = Vec::with_capacity(count);
                let mut need = count;
                for (i, p) in self.iter().enumerate() {
                    if need == 0 {
                        break;
                    }
                    if rng.gen_range(0..n - i) < need {
                        out.push(p);
                        need -= 1;
                    }
                }
                out
            }
            HashValue::Table(h) => {
                if count * 3 > n {
                    // Most of the hash: shuffle a full copy partially.
                    let mut all: Vec<(&[u8], &[u8])> = h.iter().collect();
                    for i in 0..count {
                        let j = rng.gen_range(i..all.len());
                        all.swap(i, j);
                    }
                    all.truncate(count);
                    all.into_iter()
                        .map(|(f, v)| (LpValue::Str(f), LpValue::Str(v)))
                        .collect()
                } else {
                    // Few: random picks, deduplicated by record address.
                    let mut seen = std::collections::HashSet::with_capacity(count * 2);
                    let mut out = Vec::with_capacity(count);
                    while out.len() < count {
                        let (f, v) = h.random(rng).expect("not empty");
                        if seen.insert(f.as_ptr() as usize) {
                            out.push((LpValue::Str(f), LpValue::Str(v)));
                        }
                    }
                    out
                }
            }
        }
    }

    /// One HSCAN step: calls `f` for the pairs of this step and returns the
    /// next cursor (0 = done). A listpack hash returns everything at once
    /// with cursor 0, whatever the cursor, as Redis does.
    pub fn scan(
        &self,
        cursor: u64,
        count: usize,
        mut f: impl FnMut(LpValue<'_>, LpValue<'_>),
    ) -> u64 {
        match self {
            HashValue::Pack(_) | HashValue::Listpack(_) => {
                for (k, v) in self.iter() {
                    f(k, v);
                }
                0
            }
            HashValue::Table(h) => {
                h.scan(cursor, count, |k, v| f(LpValue::Str(k), LpValue::Str(v)))
            }
        }
    }
}

#[cfg(test)]
mod tests;

impl HashValue {
    /// Offers its blocks to the defragmenter (see [`crate::defrag`]), in
    /// steps: `from` 0 starts; returns where to go on, `None` when done.
    /// A small encoding offers its one block at once; a table moves its
    /// box, then its arrays and record chunks until about `max_fields`
    /// records were visited per step ([`crate::arena::ArenaMap::defrag`]).
    pub fn defrag(
        &mut self,
        from: u64,
        max_fields: usize,
        d: &mut crate::defrag::Defrag,
    ) -> Option<u64> {
        match self {
            HashValue::Pack(p) => p.defrag(d),
            HashValue::Listpack(h) => h.defrag(d),
            HashValue::Table(t) => {
                if from == 0 {
                    d.boxed(t);
                }
                return t.defrag(from, max_fields, d);
            }
        }
        None
    }
}
