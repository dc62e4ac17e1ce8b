//! Value encodings: the HyperLogLog sparse limit and the collection encoding
//! thresholds (Redis 7.0 names and ranges, with the old `ziplist` names as
//! aliases; the set listpack pair comes from Redis 7.2) and the stream
//! node limits.

use super::super::values::*;
use super::super::Param;

macro_rules! limit {
    ($name:expr, $alias:expr, $default:expr, $field:ident, $parse:expr) => {
        Param {
            name: $name,
            aliases: $alias,
            mutable: true,
            default: || String::from($default),
            get: |s| s.limits.$field.to_string(),
            set: |s, v| {
                s.limits.$field = $parse(v)?;
                Ok(())
            },
        }
    };
}

pub static ENCODINGS: &[Param] = &[
    p!(
        "hll-sparse-max-bytes",
        true,
        "3000",
        |s| fmt_memory(s.hll_sparse_max_bytes),
        |s, v| {
            s.hll_sparse_max_bytes = memory_in(v, 0, i64::MAX as u64)?;
            Ok(())
        }
    ),
    limit!(
        "hash-max-listpack-entries",
        &["hash-max-ziplist-entries"],
        "512",
        hash_max_listpack_entries,
        count_limit
    ),
    limit!(
        "hash-max-listpack-value",
        &["hash-max-ziplist-value"],
        "64",
        hash_max_listpack_value,
        bytes_limit
    ),
    limit!(
        "set-max-intset-entries",
        &[],
        "512",
        set_max_intset_entries,
        count_limit
    ),
    limit!(
        "set-max-listpack-entries",
        &[],
        "128",
        set_max_listpack_entries,
        count_limit
    ),
    limit!(
        "set-max-listpack-value",
        &[],
        "64",
        set_max_listpack_value,
        bytes_limit
    ),
    limit!(
        "zset-max-listpack-entries",
        &["zset-max-ziplist-entries"],
        "128",
        zset_max_listpack_entries,
        count_limit
    ),
    limit!(
        "zset-max-listpack-value",
        &["zset-max-ziplist-value"],
        "64",
        zset_max_listpack_value,
        bytes_limit
    ),
    limit!(
        "list-max-listpack-size",
        &["list-max-ziplist-size"],
        "-2",
        list_max_listpack_size,
        |v| Ok::<i32, String>(int_in(v, i32::MIN as i64, i32::MAX as i64)? as i32)
    ),
    limit!(
        "list-compress-depth",
        &[],
        "0",
        list_compress_depth,
        |v| Ok::<u32, String>(int_in(v, 0, i32::MAX as i64)? as u32)
    ),
    p!(
        "stream-node-max-bytes",
        true,
        "4096",
        |s| s.stream_node.max_bytes.to_string(),
        |s, v| {
            s.stream_node.max_bytes = bytes_limit(v)?;
            Ok(())
        }
    ),
    p!(
        "stream-node-max-entries",
        true,
        "100",
        |s| s.stream_node.max_entries.to_string(),
        |s, v| {
            s.stream_node.max_entries = count_limit(v)?;
            Ok(())
        }
    ),
];
