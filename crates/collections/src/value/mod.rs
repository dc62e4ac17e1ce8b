//! Collection values as the keyspace stores them: one enum per Redis type
//! whose variants are the encodings, with conversions at Redis's points.
//!
//! * [`HashValue`]: `listpack` ([`PackHash`] below 16 fields, [`ListpackHash`]
//!   with its index from 16) or `hashtable` ([`CompactMap`]);
//! * [`SetValue`]: `intset`, `listpack` ([`ListpackSet`]) or `hashtable` ([`CompactSet`]);
//! * [`ZsetValue`]: `listpack` ([`ListpackZset`]) or `skiplist` ([`SortedSet`]);
//! * [`ListValue`]: `quicklist` ([`Quicklist`]); Redis 7.0 reports every list
//!   as `quicklist`.
//!
//! Invariants shared by all four:
//! * a value is converted to its large encoding as soon as an element or the
//!   element count passes the [`Limits`] in force when it was written (as
//!   Redis does), and never converted back, except where Redis converts back
//!   (none in 7.0);
//! * `heap_bytes()` is O(1) and counts every byte the value has allocated
//!   (capacities), not counting the enum itself (the keyspace boxes the enum
//!   and adds its own block; a `HashValue::Pack` is not boxed: the keyspace
//!   points to its block directly, so its `heap_bytes()` is all it costs);
//! * the keyspace never holds an empty collection: commands delete the key
//!   when the last element goes.
//!
//! [`ListpackHash`]: crate::ListpackHash
//! [`PackHash`]: crate::PackHash
//! [`ListpackSet`]: crate::ListpackSet
//! [`ListpackZset`]: crate::ListpackZset
//! [`CompactMap`]: crate::CompactMap
//! [`CompactSet`]: crate::CompactSet
//! [`SortedSet`]: crate::SortedSet
//! [`Quicklist`]: crate::Quicklist

pub mod hash;
pub mod list;
pub mod set;
pub mod zset;

pub use hash::HashValue;
pub use list::ListValue;
pub use set::SetValue;
pub use zset::ZsetValue;

/// A large encoding lives in its own box so the per-type enum (boxed again
/// by the keyspace) stays as small as the listpack variant: this is what
/// every small collection pays. Its bytes: the box's size class plus what
/// the structure allocated.
pub(crate) trait HeapSized {
    fn heap_bytes(&self) -> usize;
}

impl HeapSized for crate::CompactMap {
    fn heap_bytes(&self) -> usize {
        crate::CompactMap::heap_bytes(self)
    }
}

impl HeapSized for crate::CompactSet {
    fn heap_bytes(&self) -> usize {
        crate::CompactSet::heap_bytes(self)
    }
}

impl HeapSized for crate::SortedSet {
    fn heap_bytes(&self) -> usize {
        crate::SortedSet::heap_bytes(self)
    }
}

pub(crate) fn boxed_bytes<T: HeapSized>(b: &T) -> usize {
    crate::mem::grow_capacity(std::mem::size_of::<T>()) + b.heap_bytes()
}

/// Encoding thresholds, with Redis's config names and defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// `hash-max-listpack-entries`
    pub hash_max_listpack_entries: usize,
    /// `hash-max-listpack-value`
    pub hash_max_listpack_value: usize,
    /// `set-max-intset-entries`
    pub set_max_intset_entries: usize,
    /// `set-max-listpack-entries`
    pub set_max_listpack_entries: usize,
    /// `set-max-listpack-value`
    pub set_max_listpack_value: usize,
    /// `zset-max-listpack-entries`
    pub zset_max_listpack_entries: usize,
    /// `zset-max-listpack-value`
    pub zset_max_listpack_value: usize,
    /// `list-max-listpack-size`
    pub list_max_listpack_size: i32,
    /// `list-compress-depth`
    pub list_compress_depth: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            hash_max_listpack_entries: 512,
            hash_max_listpack_value: 64,
            set_max_intset_entries: 512,
            set_max_listpack_entries: 128,
            set_max_listpack_value: 64,
            zset_max_listpack_entries: 128,
            zset_max_listpack_value: 64,
            list_max_listpack_size: -2,
            list_compress_depth: 0,
        }
    }
}
