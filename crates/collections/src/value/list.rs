//! List values: always a [`Quicklist`] (Redis 7.0 reports `quicklist` for
//! every list).

use crate::Quicklist;

/// A Redis list.
#[derive(Clone, Debug)]
pub struct ListValue {
    pub ql: Quicklist,
}

impl ListValue {
    /// An empty list with the given `list-max-listpack-size` and
    /// `list-compress-depth`.
    pub fn new(limits: &super::Limits) -> Self {
        let mut ql = Quicklist::new(limits.list_max_listpack_size);
        ql.set_compress_depth(limits.list_compress_depth);
        ListValue { ql }
    }

    pub fn len(&self) -> usize {
        self.ql.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ql.is_empty()
    }

    /// Bytes allocated (O(1)).
    pub fn heap_bytes(&self) -> usize {
        self.ql.heap_bytes()
    }

    /// OBJECT ENCODING name.
    pub fn encoding_name(&self) -> &'static str {
        "quicklist"
    }
}
