//! Set values: `intset` while every member is an integer and there are at
//! most `set-max-intset-entries`, `listpack` while small, `hashtable` beyond.

use crate::{CompactSet, IntSet, ListpackSet};

/// A Redis set in one of its three encodings.
#[derive(Clone, Debug)]
pub enum SetValue {
    IntSet(IntSet),
    Listpack(ListpackSet),
    Table(CompactSet),
}

impl Default for SetValue {
    fn default() -> Self {
        SetValue::IntSet(IntSet::new())
    }
}

impl SetValue {
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
            SetValue::Table(s) => s.heap_bytes(),
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
}
