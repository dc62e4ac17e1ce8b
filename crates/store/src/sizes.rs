//! Key size tracking: what INFO keysizes, MEMORY TOPKEYS and the per-type
//! byte totals read, kept exact and up to date without ever scanning.
//!
//! Each [`Db`](crate::keyspace::Db) of each partition owns one [`Sizes`]:
//!
//! * `hist[t][b]`: keys of type `t` (string, list, set, zset, hash) whose
//!   length falls in bin `b` — strings by byte length (STRLEN), collections by
//!   element count. Bin 0 holds length 0, bin `i >= 1` holds lengths
//!   `2^(i-1) ..= 2^i - 1` (Redis 8's power-of-two bins).
//! * `bytes[t]` and `keys[t]`: total heap bytes and number of keys of type `t`.
//! * `big[t]`: every key of type `t` whose heap bytes are at least
//!   [`TOPKEYS_MIN_BYTES`], ordered by (bytes, key).
//!
//! A key's "heap bytes" are [`Entry::heap_size`]: the blocks the entry owns
//! (heap key, string block, collection blocks), by allocator size class.
//! MEMORY USAGE is that plus the key's share of the table slots, which is the
//! same for every key of one partition's database; so ordering by heap bytes
//! inside a partition is ordering by MEMORY USAGE.
//!
//! Invariant (checked by `debug_check` in tests): for every database of every
//! partition, once the partition has settled its pending lookup (see
//! `Partition` in keyspace.rs), `Sizes` equals what [`Sizes::add`] of every
//! entry in the table would give from zero. The partition keeps it by calling
//! [`Sizes::add`] for every entry put into a table, [`Sizes::sub`] for every
//! entry taken out, and [`Sizes::change`] with the entry's [`Size`] from
//! before and after any lookup that handed out `&mut Entry`. Keys below the
//! floor cost two counter updates per write and nothing else.

use std::borrow::Borrow;
use std::collections::BTreeSet;

use crate::keyspace::Keyspace;
use crate::object::{Entry, Key, Kind};

/// Keys whose heap bytes are below this are not indexed for MEMORY TOPKEYS.
pub const TOPKEYS_MIN_BYTES: usize = 4096;

/// Histogram bins: length 0, then one per power of two up to 2^63.
pub const BINS: usize = 65;

/// Types with a histogram, in INFO keysizes order, with their field names.
pub const HIST_KINDS: [(Kind, &str); 5] = [
    (Kind::String, "distrib_strings_sizes"),
    (Kind::List, "distrib_lists_items"),
    (Kind::Set, "distrib_sets_items"),
    (Kind::ZSet, "distrib_zsets_items"),
    (Kind::Hash, "distrib_hashes_items"),
];

/// Every type, indexed by [`kind_index`].
pub const KINDS: [Kind; 6] = [
    Kind::String,
    Kind::List,
    Kind::Set,
    Kind::ZSet,
    Kind::Hash,
    Kind::Stream,
];

#[inline]
pub fn kind_index(k: Kind) -> usize {
    match k {
        Kind::String => 0,
        Kind::List => 1,
        Kind::Set => 2,
        Kind::ZSet => 3,
        Kind::Hash => 4,
        Kind::Stream => 5,
    }
}

/// Histogram bin of a length.
#[inline]
pub fn bin(len: u64) -> usize {
    (64 - len.leading_zeros()) as usize
}

/// Lower bound of a bin (its INFO label before humanizing).
pub fn bin_floor(b: usize) -> u64 {
    if b == 0 {
        0
    } else {
        1u64 << (b - 1)
    }
}

/// A bin's INFO label: `0`, `1`, ... `512`, `1K` ... `512K`, `1M`, ... `P`.
pub fn bin_label(b: usize) -> String {
    let v = bin_floor(b);
    for (shift, unit) in [(50, "P"), (40, "T"), (30, "G"), (20, "M"), (10, "K")] {
        if v >= 1 << shift {
            return format!("{}{unit}", v >> shift);
        }
    }
    v.to_string()
}

/// What tracking knows of one entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Size {
    pub kind: u8,
    pub len: u64,
    pub bytes: usize,
}

impl Size {
    #[inline]
    pub fn of(e: &Entry) -> Size {
        let v = e.value();
        let kind = kind_index(v.kind());
        let len = if kind == 0 {
            v.str_len()
        } else {
            v.collection_len()
        } as u64;
        Size {
            kind: kind as u8,
            len,
            bytes: e.heap_size(),
        }
    }
}

/// An entry's [`Size`], and its key if it belongs in the big-keys index.
pub struct Measured {
    size: Size,
    big_key: Option<Box<[u8]>>,
}

impl Measured {
    #[inline]
    pub fn of(e: &Entry) -> Measured {
        let size = Size::of(e);
        let big_key =
            (size.bytes >= TOPKEYS_MIN_BYTES).then(|| e.key().to_vec().into_boxed_slice());
        Measured { size, big_key }
    }
}

/// One entry of the big-keys index, ordered by bytes, then key *descending*,
/// so that iterating in reverse gives largest first and ties by key
/// ascending (MEMORY TOPKEYS order).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Big {
    bytes: usize,
    key: Box<[u8]>,
}

fn big_order(a: (usize, &[u8]), b: (usize, &[u8])) -> std::cmp::Ordering {
    a.0.cmp(&b.0).then_with(|| b.1.cmp(a.1))
}

impl PartialOrd for Big {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for Big {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        big_order(self.pair(), o.pair())
    }
}

/// Borrowed form of [`Big`], so the index can be searched by (bytes, &key)
/// without allocating a key copy on every change of a big key.
trait BigRef {
    fn pair(&self) -> (usize, &[u8]);
}

impl BigRef for Big {
    fn pair(&self) -> (usize, &[u8]) {
        (self.bytes, &self.key)
    }
}

impl BigRef for (usize, &[u8]) {
    fn pair(&self) -> (usize, &[u8]) {
        (self.0, self.1)
    }
}

impl<'a> Borrow<dyn BigRef + 'a> for Big {
    fn borrow(&self) -> &(dyn BigRef + 'a) {
        self
    }
}

impl PartialEq for dyn BigRef + '_ {
    fn eq(&self, o: &Self) -> bool {
        self.pair() == o.pair()
    }
}
impl Eq for dyn BigRef + '_ {}
impl PartialOrd for dyn BigRef + '_ {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for dyn BigRef + '_ {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        big_order(self.pair(), o.pair())
    }
}

/// Size statistics of one database of one partition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sizes {
    hist: [[u64; BINS]; 5],
    bytes: [u64; 6],
    keys: [u64; 6],
    big: [BTreeSet<Big>; 6],
    /// Bytes of string values stored inline in their table slot (no heap
    /// block): the string part of MEMORY STATS' inline-versus-heap split.
    inline_string_bytes: u64,
}

/// The bytes an entry's string value keeps inline in its slot (0 for heap
/// strings and other types).
#[inline]
fn inline_string(s: &Size) -> u64 {
    if s.kind == 0 && s.bytes == 0 {
        s.len
    } else {
        0
    }
}

impl Default for Sizes {
    fn default() -> Self {
        Sizes {
            hist: [[0; BINS]; 5],
            bytes: [0; 6],
            keys: [0; 6],
            big: Default::default(),
            inline_string_bytes: 0,
        }
    }
}

impl Sizes {
    /// Counts a new entry.
    #[inline]
    pub fn add(&mut self, e: &Entry) {
        self.add_measured(Measured::of(e));
    }

    /// Counts a new entry measured before it went into the table (so that an
    /// entry it replaces can be uncounted first: both may carry the same
    /// key and bytes).
    pub fn add_measured(&mut self, m: Measured) {
        let s = m.size;
        let k = s.kind as usize;
        if k < 5 {
            self.hist[k][bin(s.len)] += 1;
        }
        self.bytes[k] += s.bytes as u64;
        self.keys[k] += 1;
        self.inline_string_bytes += inline_string(&s);
        if let Some(key) = m.big_key {
            self.big[k].insert(Big {
                bytes: s.bytes,
                key,
            });
        }
    }

    /// Uncounts an entry leaving the table.
    #[inline]
    pub fn sub(&mut self, e: &Entry) {
        self.sub_size(e, Size::of(e));
    }

    fn sub_size(&mut self, e: &Entry, s: Size) {
        let k = s.kind as usize;
        if k < 5 {
            self.hist[k][bin(s.len)] -= 1;
        }
        self.bytes[k] -= s.bytes as u64;
        self.keys[k] -= 1;
        self.inline_string_bytes -= inline_string(&s);
        if s.bytes >= TOPKEYS_MIN_BYTES {
            let key = e.key();
            let gone = self.big[k].remove(&(s.bytes, &key[..]) as &dyn BigRef);
            debug_assert!(gone, "big key missing from the index");
        }
    }

    /// Re-counts an entry whose value changed in place from `old` to `new`.
    #[inline]
    pub fn change(&mut self, e: &Entry, old: Size, new: Size) {
        if old == new {
            return;
        }
        let (ok, nk) = (old.kind as usize, new.kind as usize);
        if ok < 5 {
            self.hist[ok][bin(old.len)] -= 1;
        }
        if nk < 5 {
            self.hist[nk][bin(new.len)] += 1;
        }
        self.bytes[ok] -= old.bytes as u64;
        self.bytes[nk] += new.bytes as u64;
        self.keys[ok] -= 1;
        self.keys[nk] += 1;
        self.inline_string_bytes -= inline_string(&old);
        self.inline_string_bytes += inline_string(&new);
        let (was, is) = (
            old.bytes >= TOPKEYS_MIN_BYTES,
            new.bytes >= TOPKEYS_MIN_BYTES,
        );
        if !was && !is || (ok == nk && old.bytes == new.bytes) {
            return;
        }
        let key = e.key();
        let taken = if was {
            let t = self.big[ok].take(&(old.bytes, &key[..]) as &dyn BigRef);
            debug_assert!(t.is_some(), "big key missing from the index");
            t
        } else {
            None
        };
        if is {
            let key = taken.map_or_else(|| key.to_vec().into_boxed_slice(), |b| b.key);
            self.big[nk].insert(Big {
                bytes: new.bytes,
                key,
            });
        }
    }

    /// Keys of a histogram type (index into [`HIST_KINDS`]) per bin.
    pub fn hist(&self, t: usize) -> &[u64; BINS] {
        &self.hist[t]
    }

    /// Total heap bytes of keys of a type (index of [`KINDS`]).
    pub fn bytes(&self, t: usize) -> u64 {
        self.bytes[t]
    }

    /// Number of keys of a type (index of [`KINDS`]).
    pub fn keys(&self, t: usize) -> u64 {
        self.keys[t]
    }

    /// The largest indexed keys of a type, largest first: (heap bytes, key).
    pub fn largest(&self, t: usize) -> impl Iterator<Item = (usize, &[u8])> + '_ {
        self.big[t].iter().rev().map(|b| (b.bytes, &b.key[..]))
    }

    /// Adds another database's statistics into this one (INFO merges the
    /// partitions' counters; the big-key index is not merged).
    pub fn merge_counts(&mut self, o: &Sizes) {
        for t in 0..5 {
            for b in 0..BINS {
                self.hist[t][b] += o.hist[t][b];
            }
        }
        for t in 0..6 {
            self.bytes[t] += o.bytes[t];
            self.keys[t] += o.keys[t];
        }
        self.inline_string_bytes += o.inline_string_bytes;
    }

    /// Bytes of string values kept inline in their table slots.
    pub fn inline_string_bytes(&self) -> u64 {
        self.inline_string_bytes
    }

    /// True when no key is counted.
    pub fn is_empty(&self) -> bool {
        self.keys.iter().all(|&k| k == 0)
    }
}

/// One row of MEMORY TOPKEYS.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BigKey {
    pub key: Vec<u8>,
    /// MEMORY USAGE of the key (heap bytes plus its table slot share).
    pub bytes: usize,
    pub kind: Kind,
}

impl Keyspace {
    /// The `count` largest live keys of `db` by MEMORY USAGE, optionally of
    /// one type, largest first (ties by key). Only keys of at least
    /// [`TOPKEYS_MIN_BYTES`] heap bytes are candidates. Takes every partition
    /// at once, so the answer is one consistent moment; expired keys met on
    /// the way are deleted as a lookup would.
    pub fn largest_keys(
        &self,
        db: usize,
        kind: Option<Kind>,
        count: usize,
        now_ms: u64,
    ) -> Vec<BigKey> {
        let kinds: Vec<usize> = match kind {
            Some(k) => vec![kind_index(k)],
            None => (0..KINDS.len()).collect(),
        };
        let mut out: Vec<BigKey> = Vec::new();
        let mut all = self.lock_all();
        for p in all.partitions() {
            let mut expired: Vec<Vec<u8>> = Vec::new();
            if let Some(d) = p.settled_db(db) {
                let share = d.slot_share();
                let mut rows: Vec<BigKey> = Vec::new();
                for &t in &kinds {
                    let mut taken = 0;
                    for (bytes, key) in d.sizes().largest(t) {
                        if taken == count {
                            break;
                        }
                        let k = Key::new(key);
                        let live = d
                            .table
                            .get(k.hash, |e| e.matches(&k))
                            .is_some_and(|e| !e.is_expired(now_ms));
                        if !live {
                            expired.push(key.to_vec());
                            continue;
                        }
                        taken += 1;
                        rows.push(BigKey {
                            key: key.to_vec(),
                            bytes: bytes + share,
                            kind: KINDS[t],
                        });
                    }
                }
                out.extend(rows);
            }
            for k in expired {
                p.remove(db, &Key::new(&k), now_ms);
            }
        }
        out.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.key.cmp(&b.key)));
        out.truncate(count);
        out
    }

    /// Size statistics of `db` summed over the partitions (histograms, keys
    /// and bytes per type; no big-key index).
    pub fn size_stats(&self, db: usize) -> Sizes {
        let mut s = Sizes::default();
        for p in 0..self.partitions() {
            if let Some(d) = self.lock_partition(p).settled_db(db) {
                s.merge_counts(d.sizes());
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_and_labels() {
        assert_eq!(bin(0), 0);
        assert_eq!(bin(1), 1);
        assert_eq!(bin(2), 2);
        assert_eq!(bin(3), 2);
        assert_eq!(bin(4), 3);
        assert_eq!(bin(1023), 10);
        assert_eq!(bin(1024), 11);
        assert_eq!(bin(u64::MAX), 64);
        let labels: Vec<String> = [0, 1, 2, 3, 10, 11, 12, 20, 21, 31, 41, 51, 64]
            .iter()
            .map(|&b| bin_label(b))
            .collect();
        assert_eq!(
            labels,
            ["0", "1", "2", "4", "512", "1K", "2K", "512K", "1M", "1G", "1T", "1P", "8192P"]
        );
    }
}
