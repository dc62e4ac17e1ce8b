//! `INFO keysizes`: Redis 8's per-type histograms of value sizes, in powers
//! of two, for every database holding keys:
//!
//! ```text
//! # Keysizes
//! db0_distrib_strings_sizes:0=1,2=3,1K=1
//! db0_distrib_lists_items:4=1,8=2
//! ```
//!
//! Strings are binned by byte length (STRLEN), lists, sets, sorted sets and
//! hashes by element count. A bin `b=n` counts the `n` keys whose length is in
//! `b ..= 2b-1` (`0` only length 0); labels use K, M, G, T, P for powers of
//! 1024. Only non-empty bins, only types with keys and only databases with
//! keys are printed. Keys that have expired but were not collected yet are
//! counted, as in Redis.
//!
//! The figures come from the statistics every partition keeps exactly as
//! values change (`store::keyspace::sizes`), so the section costs one pass over the
//! partitions' counters, never a scan of the keys.
//!
//! Selection: only `INFO keysizes` (with any other sections named). Not in
//! `INFO` (default), `INFO all` nor `INFO everything`, unlike Redis 8: Petrel
//! answers as Redis 7.0, whose INFO these keep matching field for field, and
//! tools written for it read every `db<N>...` line as a keyspace line.

use std::fmt::Write;

use store::keyspace::sizes::{bin_label, HIST_KINDS, KINDS};

use crate::kernel::server::Server;

/// The section's lines after the `# Keysizes` header.
pub fn keysizes_lines(srv: &Server, t: &mut String) {
    for db in 0..srv.keyspace.databases() {
        let s = srv.keyspace.size_stats(db);
        if s.is_empty() {
            continue;
        }
        for (ti, (_, name)) in HIST_KINDS.iter().enumerate() {
            let mut first = true;
            for (b, &n) in s.hist(ti).iter().enumerate() {
                if n == 0 {
                    continue;
                }
                if first {
                    let _ = write!(t, "db{db}_{name}:");
                    first = false;
                } else {
                    t.push(',');
                }
                let _ = write!(t, "{}={n}", bin_label(b));
            }
            if !first {
                t.push_str("\r\n");
            }
        }
    }
}

/// The whole `# Keysizes` section.
pub fn keysizes_section(srv: &Server, t: &mut String) {
    t.push_str("# Keysizes\r\n");
    keysizes_lines(srv, t);
}

/// Exact heap bytes of the values of each type, summed over all databases:
/// `("keys.bytes.string", n)` ... for MEMORY STATS. O(partitions x dbs).
/// Bytes of string values kept inline in their table slots, all databases
/// (MEMORY STATS' inline side of the string split). O(partitions x dbs).
pub fn inline_string_bytes(srv: &Server) -> u64 {
    (0..srv.keyspace.databases())
        .map(|db| srv.keyspace.size_stats(db).inline_string_bytes())
        .sum()
}

pub fn bytes_by_type(srv: &Server) -> Vec<(String, u64)> {
    let mut tot = [0u64; KINDS.len()];
    for db in 0..srv.keyspace.databases() {
        let s = srv.keyspace.size_stats(db);
        for (i, t) in tot.iter_mut().enumerate() {
            *t += s.bytes(i);
        }
    }
    KINDS
        .iter()
        .zip(tot)
        .map(|(k, n)| (format!("keys.bytes.{}", k.name()), n))
        .collect()
}
