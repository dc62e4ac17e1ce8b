//! A plain model of Petrel values, shared by the RDB fuzz targets.

use collections::value::hash::lp_bytes;
use store::{CompactValue, Kind};

#[derive(Debug, PartialEq)]
pub enum Model {
    Str(Vec<u8>),
    List(Vec<Vec<u8>>),
    Set(std::collections::BTreeSet<Vec<u8>>),
    Hash(std::collections::BTreeMap<Vec<u8>, Vec<u8>>),
    Zset(Vec<(Vec<u8>, u64)>),
    /// A stream as its RDB body (nodes, IDs, groups and PELs at once).
    Stream(Vec<u8>),
}

pub fn model(v: &CompactValue) -> Model {
    let (mut a, mut b) = ([0u8; 20], [0u8; 20]);
    match v.kind() {
        Kind::String => Model::Str(v.string().unwrap().to_vec()),
        Kind::List => Model::List(v.as_list().unwrap().to_vecs()),
        Kind::Set => Model::Set(
            v.as_set()
                .unwrap()
                .iter()
                .map(|m| lp_bytes(m, &mut a).to_vec())
                .collect(),
        ),
        Kind::Hash => Model::Hash(
            v.as_hash()
                .unwrap()
                .iter()
                .map(|(f, x)| (lp_bytes(f, &mut a).to_vec(), lp_bytes(x, &mut b).to_vec()))
                .collect(),
        ),
        Kind::ZSet => Model::Zset(
            v.as_zset()
                .unwrap()
                .to_pairs()
                .into_iter()
                .map(|(m, s)| (m, s.to_bits()))
                .collect(),
        ),
        Kind::Stream => Model::Stream(rdb::dump(v, &rdb::WriteOptions::default())),
    }
}

/// Default limits, or tiny ones (chosen by a byte of the input) so the
/// conversions to large encodings happen on small inputs too.
pub fn limits(small: bool) -> collections::Limits {
    if small {
        collections::Limits {
            hash_max_listpack_entries: 3,
            hash_max_listpack_value: 6,
            set_max_intset_entries: 4,
            set_max_listpack_entries: 3,
            set_max_listpack_value: 6,
            zset_max_listpack_entries: 3,
            zset_max_listpack_value: 6,
            list_max_listpack_size: 2,
            list_compress_depth: 1,
        }
    } else {
        collections::Limits::default()
    }
}
