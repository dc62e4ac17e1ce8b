//! Hash values: `listpack` while small, `hashtable` once a field or value is
//! longer than `hash-max-listpack-value` or the hash has more than
//! `hash-max-listpack-entries` fields.

use crate::{CompactMap, ListpackHash};

/// A Redis hash in one of its two encodings.
#[derive(Clone, Debug)]
pub enum HashValue {
    Listpack(ListpackHash),
    Table(CompactMap),
}

impl Default for HashValue {
    fn default() -> Self {
        HashValue::Listpack(ListpackHash::new())
    }
}

impl HashValue {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        match self {
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
            HashValue::Listpack(h) => h.heap_bytes(),
            HashValue::Table(h) => h.heap_bytes(),
        }
    }

    /// OBJECT ENCODING name.
    pub fn encoding_name(&self) -> &'static str {
        match self {
            HashValue::Listpack(_) => "listpack",
            HashValue::Table(_) => "hashtable",
        }
    }
}
