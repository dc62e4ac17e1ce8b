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
//!   [`TOPKEYS_MIN_BYTES`], ordered by (MEMORY USAGE, key). Each entry is
//!   one node allocation plus a copy of the key name, both counted in the
//!   key's MEMORY USAGE ([`usage_bytes`]), so MEMORY USAGE stays exactly the
//!   memory the key's existence costs.
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
    slot: u16,
    big_key: Option<Box<[u8]>>,
}

impl Measured {
    #[inline]
    pub fn of(e: &Entry) -> Measured {
        let size = Size::of(e);
        let big_key =
            (size.bytes >= TOPKEYS_MIN_BYTES).then(|| e.key().to_vec().into_boxed_slice());
        Measured {
            size,
            slot: crate::slot::slot_of_hash(e.hash()),
            big_key,
        }
    }
}

/// Order of the big-keys index: by bytes, then key *descending*, so that
/// iterating in reverse gives largest first and ties by key ascending
/// (MEMORY TOPKEYS order).
fn big_order(a: (usize, &[u8]), b: (usize, &[u8])) -> std::cmp::Ordering {
    a.0.cmp(&b.0).then_with(|| b.1.cmp(a.1))
}

/// One entry of the big-keys index: one allocation of its own plus the copy
/// of the key name, so the memory one entry costs is known exactly
/// ([`index_entry_bytes`]) and MEMORY USAGE can count it.
struct BigNode {
    /// The key's MEMORY USAGE without its table slot share: heap bytes plus
    /// this entry ([`usage_bytes`]).
    bytes: usize,
    prio: u32,
    key: Box<[u8]>,
    left: Link,
    right: Link,
}

type Link = Option<Box<BigNode>>;

/// Bytes one big-key index entry allocates for a key name of `key_len`
/// bytes: its node and the copy of the name (an empty name allocates none).
pub fn index_entry_bytes(key_len: usize) -> usize {
    crate::heap::size_class(std::mem::size_of::<BigNode>())
        + if key_len == 0 {
            0
        } else {
            crate::heap::size_class(key_len)
        }
}

/// A key's memory without its slot share: its heap bytes, plus its
/// big-key index entry when it has one (heap bytes >= [`TOPKEYS_MIN_BYTES`]).
#[inline]
pub fn usage_bytes(heap: usize, key_len: usize) -> usize {
    if heap >= TOPKEYS_MIN_BYTES {
        heap + index_entry_bytes(key_len)
    } else {
        heap
    }
}

/// The big-keys index of one type: a treap in [`big_order`] (random
/// priorities, so expected O(log n) per operation) whose nodes are single
/// allocations, unlike a B-tree whose nodes are shared between entries.
#[derive(Default)]
struct BigIndex {
    root: Link,
    rng: u32,
}

impl BigIndex {
    fn next_prio(&mut self) -> u32 {
        // xorshift32; the state never becomes 0 once seeded non-zero.
        if self.rng == 0 {
            self.rng = 0x9e37_79b9;
        }
        let mut x = self.rng;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.rng = x;
        x
    }

    fn insert(&mut self, bytes: usize, key: Box<[u8]>) {
        let prio = self.next_prio();
        let n = Box::new(BigNode {
            bytes,
            prio,
            key,
            left: None,
            right: None,
        });
        Self::insert_node(&mut self.root, n);
    }

    fn insert_node(link: &mut Link, mut n: Box<BigNode>) {
        match link {
            None => *link = Some(n),
            Some(t) if n.prio > t.prio => {
                let (l, r) = Self::split(link.take(), (n.bytes, &n.key));
                n.left = l;
                n.right = r;
                *link = Some(n);
            }
            Some(t) => {
                if big_order((n.bytes, &n.key), (t.bytes, &t.key)).is_lt() {
                    Self::insert_node(&mut t.left, n)
                } else {
                    Self::insert_node(&mut t.right, n)
                }
            }
        }
    }

    /// Splits `t` into the entries before and after `p` (not in `t`).
    fn split(t: Link, p: (usize, &[u8])) -> (Link, Link) {
        let Some(mut t) = t else {
            return (None, None);
        };
        if big_order((t.bytes, &t.key), p).is_lt() {
            let (l, r) = Self::split(t.right.take(), p);
            t.right = l;
            (Some(t), r)
        } else {
            let (l, r) = Self::split(t.left.take(), p);
            t.left = r;
            (l, Some(t))
        }
    }

    /// Joins two treaps, every entry of `a` before every entry of `b`.
    fn merge(a: Link, b: Link) -> Link {
        match (a, b) {
            (None, b) => b,
            (a, None) => a,
            (Some(mut a), Some(mut b)) => {
                if a.prio > b.prio {
                    a.right = Self::merge(a.right.take(), Some(b));
                    Some(a)
                } else {
                    b.left = Self::merge(Some(a), b.left.take());
                    Some(b)
                }
            }
        }
    }

    /// Takes the entry (bytes, key) out; returns its key copy.
    fn take(&mut self, bytes: usize, key: &[u8]) -> Option<Box<[u8]>> {
        let mut link = &mut self.root;
        loop {
            let t = link.as_mut()?;
            match big_order((bytes, key), (t.bytes, &t.key)) {
                std::cmp::Ordering::Less => link = &mut link.as_mut().unwrap().left,
                std::cmp::Ordering::Greater => link = &mut link.as_mut().unwrap().right,
                std::cmp::Ordering::Equal => {
                    let mut n = link.take().unwrap();
                    *link = Self::merge(n.left.take(), n.right.take());
                    return Some(std::mem::take(&mut n.key));
                }
            }
        }
    }

    /// Entries largest first: (bytes, key).
    fn iter_rev(&self) -> impl Iterator<Item = (usize, &[u8])> + '_ {
        let mut stack: Vec<&BigNode> = Vec::new();
        let mut l = &self.root;
        while let Some(n) = l {
            stack.push(n);
            l = &n.right;
        }
        std::iter::from_fn(move || {
            let n = stack.pop()?;
            let mut l = &n.left;
            while let Some(m) = l {
                stack.push(m);
                l = &m.right;
            }
            Some((n.bytes, &n.key[..]))
        })
    }
}

impl Clone for BigIndex {
    fn clone(&self) -> Self {
        let mut c = BigIndex::default();
        for (b, k) in self.iter_rev() {
            c.insert(b, k.into());
        }
        c
    }
}

impl PartialEq for BigIndex {
    fn eq(&self, o: &Self) -> bool {
        self.iter_rev().eq(o.iter_rev())
    }
}
impl Eq for BigIndex {}

impl std::fmt::Debug for BigIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(
                self.iter_rev()
                    .map(|(b, k)| (b, String::from_utf8_lossy(k))),
            )
            .finish()
    }
}

/// Size statistics of one database of one partition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sizes {
    hist: [[u64; BINS]; 5],
    bytes: [u64; 6],
    keys: [u64; 6],
    big: [BigIndex; 6],
    /// Bytes of string values stored inline in their table slot (no heap
    /// block): the string part of MEMORY STATS' inline-versus-heap split.
    inline_string_bytes: u64,
    /// Keys per hash slot (CLUSTER COUNTKEYSINSLOT), indexed by the slot's
    /// low bits (a partition's slots differ only there); empty in a
    /// `Sizes` that only merges counts. Kept by `add_measured`/`sub_size`,
    /// the one path every entry takes into and out of a table.
    slot_keys: Box<[u32]>,
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
            slot_keys: Box::default(),
        }
    }
}

impl Sizes {
    /// Statistics of a table whose slots differ in their low `bits` bits
    /// (a partition of `2^(14 - bits)`), with per-slot key counts.
    pub fn with_slot_bits(bits: u32) -> Sizes {
        Sizes {
            slot_keys: vec![0u32; 1usize << bits].into_boxed_slice(),
            ..Sizes::default()
        }
    }

    /// Keys of `slot` counted (0 without per-slot counts).
    #[inline]
    pub fn slot_keys(&self, slot: u16) -> u32 {
        let n = self.slot_keys.len();
        if n == 0 {
            return 0;
        }
        self.slot_keys[slot as usize & (n - 1)]
    }

    #[inline]
    fn count_slot(&mut self, slot: u16, add: bool) {
        let n = self.slot_keys.len();
        if n != 0 {
            let c = &mut self.slot_keys[slot as usize & (n - 1)];
            if add {
                *c += 1;
            } else {
                *c -= 1;
            }
        }
    }

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
        self.count_slot(m.slot, true);
        let k = s.kind as usize;
        if k < 5 {
            self.hist[k][bin(s.len)] += 1;
        }
        self.bytes[k] += s.bytes as u64;
        self.keys[k] += 1;
        self.inline_string_bytes += inline_string(&s);
        if let Some(key) = m.big_key {
            let u = usage_bytes(s.bytes, key.len());
            self.big[k].insert(u, key);
        }
    }

    /// Uncounts an entry leaving the table.
    #[inline]
    pub fn sub(&mut self, e: &Entry) {
        self.sub_size(e, Size::of(e));
    }

    fn sub_size(&mut self, e: &Entry, s: Size) {
        self.count_slot(crate::slot::slot_of_hash(e.hash()), false);
        let k = s.kind as usize;
        if k < 5 {
            self.hist[k][bin(s.len)] -= 1;
        }
        self.bytes[k] -= s.bytes as u64;
        self.keys[k] -= 1;
        self.inline_string_bytes -= inline_string(&s);
        if s.bytes >= TOPKEYS_MIN_BYTES {
            let key = e.key();
            let gone = self.big[k].take(usage_bytes(s.bytes, key.len()), &key);
            debug_assert!(gone.is_some(), "big key missing from the index");
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
            let t = self.big[ok].take(usage_bytes(old.bytes, key.len()), &key);
            debug_assert!(t.is_some(), "big key missing from the index");
            t
        } else {
            None
        };
        if is {
            let u = usage_bytes(new.bytes, key.len());
            let key = taken.unwrap_or_else(|| key.to_vec().into_boxed_slice());
            self.big[nk].insert(u, key);
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

    /// The largest indexed keys of a type, largest first: (MEMORY USAGE
    /// without the slot share, i.e. [`usage_bytes`], key).
    pub fn largest(&self, t: usize) -> impl Iterator<Item = (usize, &[u8])> + '_ {
        self.big[t].iter_rev()
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
                        let live = d.find(&k).is_some_and(|e| !e.is_expired(now_ms));
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
        // Stopped partitions are left out, as in the other reports
        // (`Keyspace::db_info`).
        for p in (0..self.partitions()).filter(|&p| !self.is_stopped(p)) {
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
    use proptest::prelude::*;

    proptest! {
        /// The treap against a BTreeSet model: inserts, removals (present
        /// and absent), and the largest-first order.
        #[test]
        fn big_index_matches_model(
            ops in proptest::collection::vec((any::<bool>(), 0usize..8, 0u8..12), 0..300)
        ) {
            use std::collections::BTreeSet;
            // model key: (bytes, Reverse(key)) sorts like big_order
            let mut model: BTreeSet<(usize, std::cmp::Reverse<Vec<u8>>)> = BTreeSet::new();
            let mut t = BigIndex::default();
            for (add, bytes, k) in ops {
                let key = vec![b'k'; k as usize];
                let entry = (bytes, std::cmp::Reverse(key.clone()));
                if add && !model.contains(&entry) {
                    model.insert(entry);
                    t.insert(bytes, key.into_boxed_slice());
                } else if !add {
                    let had = model.remove(&entry);
                    prop_assert_eq!(t.take(bytes, &key).is_some(), had);
                }
                let got: Vec<(usize, Vec<u8>)> = t.iter_rev().map(|(b, k)| (b, k.to_vec())).collect();
                let want: Vec<(usize, Vec<u8>)> = model.iter().rev().map(|(b, k)| (*b, k.0.clone())).collect();
                prop_assert_eq!(&got, &want);
            }
            prop_assert_eq!(t.clone(), t);
        }
    }

    #[test]
    fn index_entry_cost() {
        assert_eq!(std::mem::size_of::<BigNode>(), 48);
        assert_eq!(index_entry_bytes(0), 48);
        assert_eq!(index_entry_bytes(3), 48 + 8);
        assert_eq!(usage_bytes(4095, 3), 4095);
        assert_eq!(usage_bytes(4096, 20), 4096 + 48 + 32);
    }

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
