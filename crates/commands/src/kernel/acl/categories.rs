//! Redis 7.0's ACL command categories: their names in Redis's order, and
//! the categories of a command (those its row declares plus those Redis
//! implies from its flags). `COMMAND INFO`, `COMMAND LIST FILTERBY
//! ACLCAT`, `ACL CAT` and the `+@category` rules all read them from here.

use crate::kernel::spec::{flag, CommandSpec};

/// Redis's ACL categories in the order `COMMAND INFO` lists them.
pub const ACL_CATEGORIES: &[&str] = &[
    "keyspace",
    "read",
    "write",
    "set",
    "sortedset",
    "list",
    "hash",
    "string",
    "bitmap",
    "hyperloglog",
    "geo",
    "stream",
    "pubsub",
    "admin",
    "fast",
    "slow",
    "blocking",
    "dangerous",
    "connection",
    "transaction",
    "scripting",
];

/// The ACL categories of a command: its declared ones plus those Redis
/// implies from its flags (write, read, admin+dangerous, pubsub, fast,
/// blocking, and slow for everything not fast), in Redis's order.
pub fn acl_categories(spec: &CommandSpec) -> Vec<&'static str> {
    let has = |c: &str| spec.acl.contains(&c);
    let f = spec.flags;
    let mut out = Vec::new();
    let fast = has("fast") || f & flag::FAST != 0;
    for &cat in ACL_CATEGORIES {
        let implied = match cat {
            "write" => f & flag::WRITE != 0,
            "read" => f & flag::READONLY != 0 && !has("scripting"),
            "admin" | "dangerous" => f & flag::ADMIN != 0,
            "pubsub" => f & flag::PUBSUB != 0,
            "fast" => fast,
            "slow" => !fast,
            "blocking" => f & flag::BLOCKING != 0,
            _ => false,
        };
        if implied || has(cat) {
            out.push(cat);
        }
    }
    out
}

/// The bit of category `name` (case-insensitive) in a [`mask`], or `None`
/// for a name Redis does not know.
pub fn bit_of(name: &[u8]) -> Option<u32> {
    ACL_CATEGORIES
        .iter()
        .position(|c| c.as_bytes().eq_ignore_ascii_case(name))
        .map(|i| 1 << i)
}

/// The categories of `spec` as a bit set (bit i = `ACL_CATEGORIES[i]`).
pub fn mask(spec: &CommandSpec) -> u32 {
    acl_categories(spec)
        .iter()
        .filter_map(|c| bit_of(c.as_bytes()))
        .fold(0, |m, b| m | b)
}
