//! RESP2/RESP3 protocol for Petrel: the server-side request parser, the
//! reply writer, Redis-exact number formatting, and a small client-side
//! reply parser.
//!
//! * [`RequestParser`] turns client bytes into commands: incremental (a
//!   command may arrive in any number of pieces; progress is kept between
//!   calls), zero-copy (arguments are `(start, end)` ranges into the
//!   caller's buffer, except unescaped inline arguments, which live in the
//!   parser's scratch buffer), and byte-for-byte compatible with Redis 7.0,
//!   error texts included. See [`request`] for the contract and invariants.
//! * [`ReplyBuf`] appends encoded replies for a [`Protocol`] (RESP2 or
//!   RESP3), degrading RESP3 types the way Redis does for RESP2 clients.
//! * [`format_double_like_redis`] / [`format_long_double_like_redis`] spell
//!   floats the way Redis 7.0 replies them (scores vs. `INCRBYFLOAT`), and
//!   [`LongDouble`] does `INCRBYFLOAT` arithmetic in x87 80-bit precision as
//!   Redis does, so results print identically.
//! * [`Value`] / [`parse_value`] read replies (tests, tools, benchmarks).
//!
//! Nothing here does I/O, and the crate has no `unsafe`.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod inline;
pub mod ldouble;
pub mod num;
pub mod reply;
pub mod request;
pub mod value;

pub use inline::split_args;
pub use ldouble::LongDouble;
pub use num::{format_double_like_redis, format_long_double_like_redis, parse_redis_i64};
pub use reply::{encode_command, write_command, DeferredLen, Protocol, ReplyBuf};
pub use request::{
    ArgsIn, Limits, Parsed, ProtocolError, RequestParser, DEFAULT_MAX_BULK_LEN,
    DEFAULT_MAX_MULTIBULK_LEN, PROTO_INLINE_MAX_SIZE, PROTO_MBULK_BIG_ARG,
    UNAUTHENTICATED_MAX_BULK_LEN, UNAUTHENTICATED_MAX_MULTIBULK_LEN,
};
pub use value::{parse_all, parse_value, Value, ValueError};
