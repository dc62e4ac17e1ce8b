//! Redis's RDB format for Petrel: snapshot files and DUMP payloads,
//! written as Redis 7.0 writes them and read from every version Redis 7.0
//! reads, built straight into Petrel's values (`store::CompactValue` over
//! the `collections` encodings).
//!
//! # API
//! * [`Writer`]: a file, one record at a time, to any `io::Write`, with
//!   the running CRC64 and a byte count ([`writer`] lists the record order).
//! * [`Reader`]: a file as a stream of [`Item`]s pulled one at a time from
//!   any `io::Read` (aux field, select/resize db, key entry with expiry,
//!   idle time and LFU counter, function, EOF), with the byte offset for
//!   progress reports.
//! * [`dump()`] / [`restore`]: DUMP payloads, with RESTORE's two error
//!   classes ([`RestoreError`]).
//!
//! # Format facts
//! * Header `REDIS` + four ASCII digits (`REDIS0010`); the body is records
//!   (opcodes 244..=255 or a value type byte followed by a key string and
//!   a value); `EOF` (255) then, from version 5, the CRC64 (Jones
//!   polynomial, reflected, Redis's variant; [`crc64`]) of every byte
//!   before it, little-endian, or zero when not computed.
//! * Lengths are 6, 14, 32 or 64 bits (big-endian past the first byte);
//!   strings are a length and bytes, or an `11xxxxxx` encoding: int8,
//!   int16, int32 (little-endian), or LZF (compressed length, original
//!   length, block). Doubles are binary (8 bytes LE) in `ZSET_2`, text with
//!   a length byte in the old `ZSET`.
//! * Listpack, intset and ziplist blocks travel as strings, so they may
//!   themselves be LZF-compressed. Petrel's listpack and intset blocks are
//!   Redis's byte for byte and are copied, never re-encoded.
//!
//! # What is written (version 10)
//! Exactly Redis 7.0's choices ([`writer::value`]): strings with
//! integer encoding where Redis uses it and LZF when `rdbcompression` is on
//! and the string is longer than 20 bytes and shrinks to at most `len - 4`;
//! lists as `LIST_QUICKLIST_2` (compressed nodes as their LZF block, nodes
//! holding one element of at least the packed threshold as plain nodes);
//! sets as `SET_INTSET` or `SET` (version 10 has no listpack set, so
//! Petrel's small string sets are written as `SET`); hashes as
//! `HASH_LISTPACK` or `HASH`; sorted sets as `ZSET_LISTPACK` or `ZSET_2`.
//!
//! # What is read
//! Versions 1 to 12 (Redis 7.0 itself reads 1 to 10). Value types: `STRING`,
//! `LIST`, `SET`, `ZSET` (text doubles), `HASH`, `ZSET_2`, `HASH_ZIPMAP`,
//! `LIST_ZIPLIST`, `SET_INTSET`, `ZSET_ZIPLIST`, `HASH_ZIPLIST`,
//! `LIST_QUICKLIST` (ziplist nodes), `HASH_LISTPACK`, `ZSET_LISTPACK`,
//! `LIST_QUICKLIST_2` (plain and packed nodes, compressed or not) and, from
//! version 11, `SET_LISTPACK`. Opcodes: `AUX`, `SELECTDB`, `RESIZEDB`,
//! `EXPIRETIME`, `EXPIRETIME_MS`, `IDLE`, `FREQ`, `EOF`, and from version
//! 12 `SLOT_INFO`. Zipmaps and ziplists are converted to listpacks, as
//! Redis does. Values get the encoding Redis would give them under the
//! caller's [`collections::Limits`] (e.g. a listpack hash with more fields
//! than `hash-max-listpack-entries` becomes a hashtable); each family's
//! module in [`reader`] states its rule.
//!
//! # What is refused (an error naming the key, the type and the offset)
//! Streams (`STREAM_LISTPACKS` 15, 19, 21: the stream reader will go in
//! [`reader::value`] where they are refused now), module values (6, 7; the
//! module's name is decoded for the message) and module aux data (247),
//! function libraries (`FUNCTION2` 245, unless
//! [`ReadOptions::allow_functions`] asks for them as items; the
//! pre-release `FUNCTION` 246 always), hashes with field expiry (Redis 7.4
//! types 22..=25), unknown types and opcodes.
//!
//! # Validation
//! Petrel always validates fully, as Redis does with
//! `sanitize-dump-payload yes` (Redis's default `no` skips most of it for
//! files and trusts the blocks): every listpack, intset, ziplist and
//! zipmap is walked entry by entry; duplicate set members, hash fields and
//! zset members, NaN scores, odd pair counts, unsorted intsets and zset
//! listpacks are errors. Listpack entries must also be canonical (a string
//! entry never holds an integer, every entry in its smallest encoding),
//! which Redis's writer always guarantees and Petrel's lookups rely on. A
//! truncated or corrupt input is an [`Error`] with the offset and what was
//! expected; nothing panics, and no length read from the input is trusted
//! for an allocation before the bytes arrive ([`reader::input`]).
//!
//! Stricter than Redis on nonsense Redis never writes (a string encoding
//! where a plain length is due, an LZF string claiming zero bytes) and on
//! the listpack properties above; otherwise what Redis loads, this loads.

pub mod crc64;
pub mod dump;
pub mod error;
pub mod functions;
pub mod reader;
pub mod types;
pub mod writer;
pub mod ziplist;
pub mod zipmap;

pub use dump::{dump, restore, restore_with, RestoreError};
pub use error::{Error, ErrorKind, Result};
pub use functions::{dump_functions, restore_functions, FunctionsError};
pub use reader::{Item, KeyEntry, ReadOptions, Reader};
pub use writer::{write_entry, write_select_db, EntryMeta, Sink, WriteOptions, Writer};
