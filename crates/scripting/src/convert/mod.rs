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

mod to_lua;
mod to_reply;

pub use to_lua::BadReply;
pub(crate) use to_lua::{push_bytes, push_err_table, push_reply};
pub(crate) use to_reply::{write_value, FIELD_NAMES, FIELD_UPVALUE};

/// Deepest table nesting converted to a reply (Redis stops when the Lua
/// C stack can not grow; its limit is of the same order).
pub const MAX_DEPTH: usize = 1000;

/// Replaces CR and LF by spaces (status and error lines).
pub fn one_line(s: &[u8]) -> Vec<u8> {
    s.iter()
        .map(|&c| if c == b'\r' || c == b'\n' { b' ' } else { c })
        .collect()
}
