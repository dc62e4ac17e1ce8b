//! Sorted-set values: `listpack` while small, `skiplist` (Petrel's B+tree
//! plus member table, reported under Redis's name) beyond
//! `zset-max-listpack-entries` / `zset-max-listpack-value`.

use crate::{ListpackZset, SortedSet};

/// A Redis sorted set in one of its two encodings.
#[derive(Clone, Debug)]
pub enum ZsetValue {
    Listpack(ListpackZset),
    Tree(SortedSet),
}

impl Default for ZsetValue {
    fn default() -> Self {
        ZsetValue::Listpack(ListpackZset::new())
    }
}

impl ZsetValue {
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
            ZsetValue::Tree(z) => z.heap_bytes(),
        }
    }

    /// OBJECT ENCODING name.
    pub fn encoding_name(&self) -> &'static str {
        match self {
            ZsetValue::Listpack(_) => "listpack",
            ZsetValue::Tree(_) => "skiplist",
        }
    }
}
