//! Petrel's keyspace: compact 32-byte entries in Dashtables, partitioned by
//! cluster hash slot, with lazy and active expiry, per-key memory accounting,
//! and the value logic of strings, bitmaps and HyperLogLogs.

pub mod bitops;
pub mod heap;
pub mod hll;
pub mod hll_exact;
pub mod keyspace;
pub mod object;
pub mod pace;
pub mod pack;
pub mod partlock;
pub mod slot;

pub use keyspace::{Config, Db, DbInfo, Keyspace, MultiGuard, Partition, Stats, Ttl};
pub use object::{Bytes, CompactValue, Entry, HashMut, HashRef, Key, Kind};
