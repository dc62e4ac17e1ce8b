//! Petrel's collection encodings, independent of commands and networking.
//!
//! * [`Listpack`]: Redis 7.0 listpack byte format (RDB-compatible block).
//! * [`IntSet`]: Redis intset byte format.
//! * [`PackBlock`] / [`PackHash`]: a listpack in one exact-size heap block
//!   behind one pointer (hashes below 16 fields; see [`block`]).
//! * [`ListpackHash`], [`ListpackSet`], [`ListpackZset`]: small values, a
//!   listpack plus a fingerprint side index so lookups do not compare every
//!   entry (see [`small`]).
//! * [`CompactSet`]: large sets, open addressing with 16-byte inline-or-boxed
//!   elements and a resize-proof SCAN cursor; [`CompactMap`] (=
//!   [`arena::ArenaMap`]): large hashes, the same table over 4-byte refs into
//!   packed field/value chunks.
//! * [`SortedSet`]: order-statistic B+tree of (score, member) plus a
//!   member -> score table.
//! * [`Quicklist`]: lists as listpack nodes (`list-max-listpack-size`) and
//!   plain nodes for elements of the packed threshold or more,
//!   interior nodes LZF-compressed (`list-compress-depth`, [`quicklist::lzf`]).
//! * [`stream`]: the stream type (Redis 7.0 node layout, consumer groups);
//!   [`geo`]: Redis's 52-bit geohash, distances and search areas.
//! * [`value`]: the per-type enums the keyspace stores ([`HashValue`],
//!   [`SetValue`], [`ZsetValue`], [`ListValue`]) and the conversion
//!   thresholds ([`Limits`]).
//!
//! `tests/redis_compat.rs` checks hash and zset listpacks and intsets byte
//! for byte against blocks dumped by redis-server 7.0.15.
//!
//! Every structure reports `heap_bytes()`: the bytes it has allocated
//! (capacities, not lengths), maintained incrementally and O(1) to read.

pub mod arena;
pub mod block;
pub mod defrag;
pub mod defrag_table;
pub mod elem;
pub mod geo;
pub mod hash;
pub mod intset;
pub mod listpack;
pub mod mem;
pub mod quicklist;
pub mod release;
pub mod small;
pub mod stream;
pub mod table;
pub mod value;
pub mod zset;

pub use block::PackBlock;
pub use intset::IntSet;
pub use listpack::{Listpack, LpValue, Needle};
pub use quicklist::Quicklist;
pub use small::{ListpackHash, ListpackSet, ListpackZset, PackHash};
pub use table::{CompactMap, CompactSet};
pub use value::{HashValue, Limits, ListValue, SetValue, ZsetValue};
pub use zset::{ScoreTree, SortedSet};
