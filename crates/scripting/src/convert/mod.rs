//! Conversions between RESP replies and Lua values, both ways, as Redis
//! 7.0's `redisProtocolToLuaType` and `luaReplyToRedisReply` do them.
//!
//! Reply → Lua (what `redis.call` returns), from the bytes the host wrote,
//! pushed straight onto the Lua stack with the C API ([`to_lua`], the hot
//! path of [`crate::call`]):
//!
//! | reply | Lua |
//! |---|---|
//! | `:n` | number |
//! | `$data` / `$-1` | string / `false` |
//! | `*n` / `*-1` | array table / `false` |
//! | `+text` | `{ok = text}` |
//! | `-text`, `!text` | `{err = text}` (also raised by `redis.call`) |
//! | RESP3 `%n` | `{map = {k = v, ...}}` |
//! | RESP3 `~n` | `{set = {e = true, ...}}` |
//! | RESP3 `_` | `nil` |
//! | RESP3 `#t`/`#f` | `true`/`false` |
//! | RESP3 `,x` | `{double = x}` |
//! | RESP3 `(digits` | `{big_number = "digits"}` |
//! | RESP3 `=len fmt:s` | `{verbatim_string = {format = fmt, string = s}}` |
//! | RESP3 `\|n` attributes | skipped; the value they annotate is converted |
//!
//! Lua → reply (the script's return value, [`to_reply`]), read from the
//! Lua stack and written to the client's [`resp::ReplyBuf`]: strings are bulk strings; numbers integers (truncated as
//! C's `(long long)` cast); `nil` and other types a null; booleans `:1` /
//! null while the script is in RESP2 mode (`redis.setresp`), real booleans
//! (`#t`/`#f`, or `:1`/`:0` for a RESP2 client) in RESP3 mode; tables are
//! checked for the fields `err`, `ok`, `double`, `big_number`,
//! `verbatim_string`, `map`, `set` in that order (raw access), and are
//! otherwise arrays up to their first `nil`.
//!
//! Invariant: a conversion writes exactly one complete reply, even for
//! malformed tables; nesting deeper than [`MAX_DEPTH`] is replaced by the
//! error `reached lua stack limit`.

use std::os::raw::c_int;

use mlua::ffi;

mod to_lua;
mod to_reply;

pub use to_lua::BadReply;
pub(crate) use to_lua::{push_bytes, push_err_table, push_reply};
pub(crate) use to_reply::write_value;

/// Deepest table nesting converted to a reply (Redis stops when the Lua
/// C stack can not grow; its limit is of the same order).
pub const MAX_DEPTH: usize = 1000;

/// Replaces CR and LF by spaces (status and error lines).
pub fn one_line(s: &[u8]) -> Vec<u8> {
    s.iter()
        .map(|&c| if c == b'\r' || c == b'\n' { b' ' } else { c })
        .collect()
}

/// The table field names both directions use, kept as upvalues of the C
/// closures that convert (`redis.call`, `redis.pcall` and the run entry),
/// from upvalue [`FIELD_UPVALUE`] on in this order, so that pushing one is
/// a copy: no hashing, no allocation. The last two are the names of the
/// `KEYS` and `ARGV` globals.
pub(crate) const FIELD_NAMES: [&[u8]; 11] = [
    b"err",
    b"ok",
    b"double",
    b"big_number",
    b"verbatim_string",
    b"format",
    b"string",
    b"map",
    b"set",
    b"KEYS",
    b"ARGV",
];

/// The upvalue holding `FIELD_NAMES[0]`.
pub(crate) const FIELD_UPVALUE: c_int = 3;

pub(crate) const ERR: usize = 0;
pub(crate) const OK: usize = 1;
pub(crate) const DOUBLE: usize = 2;
pub(crate) const BIG_NUMBER: usize = 3;
pub(crate) const VERBATIM: usize = 4;
pub(crate) const FORMAT: usize = 5;
pub(crate) const STRING: usize = 6;
pub(crate) const MAP: usize = 7;
pub(crate) const SET: usize = 8;
pub(crate) const KEYS: usize = 9;
pub(crate) const ARGV: usize = 10;

/// Pushes `FIELD_NAMES[field]` from the running closure's upvalues.
///
/// # Safety
/// `l` is valid with a free stack slot, and the running C closure has the
/// field names as its upvalues from [`FIELD_UPVALUE`] on.
#[inline]
pub(crate) unsafe fn push_field(l: *mut ffi::lua_State, field: usize) {
    // SAFETY: per the function contract; `lua_pushvalue` copies a
    // reference and never allocates.
    unsafe { ffi::lua_pushvalue(l, ffi::lua_upvalueindex(FIELD_UPVALUE + field as c_int)) }
}

/// Pushes the field names, in order, as upvalues-to-be of a C closure.
///
/// # Safety
/// `l` is valid with `FIELD_NAMES.len()` free stack slots. Raises on a
/// memory error.
pub(crate) unsafe fn push_field_names(l: *mut ffi::lua_State) {
    for name in FIELD_NAMES {
        // SAFETY: per the function contract.
        unsafe { push_bytes(l, name) };
    }
}
