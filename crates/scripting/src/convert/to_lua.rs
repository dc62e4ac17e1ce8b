//! Reply → Lua: a RESP reply the host wrote, pushed onto the Lua stack as
//! the values of the table in [`super`] (Redis's `redisProtocolToLuaType`).
//!
//! Everything here may raise a Lua memory error (a `longjmp`): the
//! functions own nothing that needs dropping, and so must their callers.
//! The field names of the wrapper tables (`ok`, `err`...) are pushed from
//! the running closure's upvalues ([`super::FIELD_NAMES`]).

use std::os::raw::{c_char, c_int};

use mlua::ffi;

use super::{push_field, BIG_NUMBER, DOUBLE, ERR, FORMAT, MAP, OK, SET, STRING, VERBATIM};

/// A malformed reply from the host (a host bug, not a script error).
#[derive(Clone, Copy, Debug)]
pub struct BadReply;

/// Deepest reply nesting converted to Lua.
const MAX_REPLY_DEPTH: usize = 10_000;

/// A position in the reply being converted (plain data: it may be
/// unwound by a Lua error).
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// The rest of the current line, up to its CRLF (skipped).
    fn line(&mut self) -> Result<&'a [u8], BadReply> {
        let rest = &self.buf[self.pos..];
        let mut from = 0;
        loop {
            let i = from
                + rest[from..]
                    .iter()
                    .position(|&c| c == b'\r')
                    .ok_or(BadReply)?;
            if rest.get(i + 1) == Some(&b'\n') {
                self.pos += i + 2;
                return Ok(&rest[..i]);
            }
            from = i + 1;
        }
    }

    /// `n` bytes followed by CRLF.
    fn blob(&mut self, n: usize) -> Result<&'a [u8], BadReply> {
        let end = self.pos.checked_add(n).ok_or(BadReply)?;
        if end.checked_add(2).is_none_or(|e| e > self.buf.len()) {
            return Err(BadReply);
        }
        let b = &self.buf[self.pos..end];
        self.pos = end + 2;
        Ok(b)
    }
}

/// A RESP length or integer (Rust's `i64` syntax: optional sign, digits).
fn int_of(s: &[u8]) -> Result<i64, BadReply> {
    let (neg, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() {
        return Err(BadReply);
    }
    let mut n: i64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return Err(BadReply);
        }
        let d = i64::from(c - b'0');
        n = n.checked_mul(10).ok_or(BadReply)?;
        n = if neg {
            n.checked_sub(d)
        } else {
            n.checked_add(d)
        }
        .ok_or(BadReply)?;
    }
    Ok(n)
}

fn double_of(s: &[u8]) -> f64 {
    let s = std::str::from_utf8(s).unwrap_or("0");
    match s {
        "inf" | "+inf" => f64::INFINITY,
        "-inf" => f64::NEG_INFINITY,
        "nan" | "-nan" => f64::NAN,
        _ => s.parse().unwrap_or(0.0),
    }
}

/// A table size hint: Lua's `int`, and never more than 65536 (the reply's
/// count is not trusted for preallocation).
fn hint(n: i64) -> c_int {
    n.clamp(0, 1 << 16) as c_int
}

/// Pushes a byte string.
///
/// # Safety
/// `l` is a valid state with a free stack slot. Raises on a memory error.
#[inline]
pub(crate) unsafe fn push_bytes(l: *mut ffi::lua_State, b: &[u8]) {
    // SAFETY: a slice's pointer is valid for its length (and non-null
    // even when empty), per the function contract otherwise.
    unsafe { ffi::lua_pushlstring_(l, b.as_ptr().cast::<c_char>(), b.len()) }
}

/// Pushes `{[field] = <the value on top>}` in place of the value on top.
///
/// # Safety
/// `l` is a valid state with a value on top and two free stack slots,
/// running a closure with the field upvalues. Raises on a memory error.
unsafe fn wrap_top(l: *mut ffi::lua_State, field: usize) {
    // SAFETY: per the function contract: stack [v] -> [v, t] -> [t, v] ->
    // [t, v, k] -> [t, k, v] -> rawset -> [t].
    unsafe {
        ffi::lua_createtable(l, 0, 1);
        ffi::lua_insert(l, -2);
        push_field(l, field);
        ffi::lua_insert(l, -2);
        ffi::lua_rawset(l, -3);
    }
}

/// Pushes the error table `{err = text}`.
///
/// # Safety
/// `l` is a valid state with three free stack slots, running a closure
/// with the field upvalues. Raises on a memory error.
pub(crate) unsafe fn push_err_table(l: *mut ffi::lua_State, text: &[u8]) {
    // SAFETY: per the function contract.
    unsafe {
        ffi::lua_createtable(l, 0, 1);
        push_field(l, ERR);
        push_bytes(l, text);
        ffi::lua_rawset(l, -3);
    }
}

/// Converts one reply (the first in `bytes`) to a Lua value pushed on the
/// stack of `l`. On `Err` the stack may hold partial values above where
/// it was: the caller resets it.
///
/// # Safety
/// `l` is a valid state with three free stack slots, running a closure
/// with the field upvalues. Raises on a memory error: the caller must own
/// nothing that needs dropping.
pub(crate) unsafe fn push_reply(l: *mut ffi::lua_State, bytes: &[u8]) -> Result<(), BadReply> {
    let mut r = Reader { buf: bytes, pos: 0 };
    // SAFETY: per the function contract.
    unsafe { push_value(l, &mut r, 0) }
}

/// # Safety
/// As for [`push_reply`].
unsafe fn push_value(
    l: *mut ffi::lua_State,
    r: &mut Reader<'_>,
    depth: usize,
) -> Result<(), BadReply> {
    if depth > MAX_REPLY_DEPTH {
        return Err(BadReply);
    }
    let kind = *r.buf.get(r.pos).ok_or(BadReply)?;
    r.pos += 1;
    let line = r.line()?;
    // SAFETY: per the function contract; aggregates reserve the slots
    // their elements need with `lua_checkstack` before recursing.
    unsafe {
        match kind {
            b':' => ffi::lua_pushnumber(l, int_of(line)? as f64),
            b'+' => {
                push_bytes(l, line);
                wrap_top(l, OK);
            }
            b'-' => {
                push_bytes(l, line);
                wrap_top(l, ERR);
            }
            b'$' | b'!' | b'=' => {
                let n = int_of(line)?;
                if n < 0 {
                    ffi::lua_pushboolean(l, 0);
                } else {
                    let data = r.blob(usize::try_from(n).map_err(|_| BadReply)?)?;
                    match kind {
                        b'$' => push_bytes(l, data),
                        b'!' => {
                            push_bytes(l, data);
                            wrap_top(l, ERR);
                        }
                        _ => {
                            let (fmt, s) = if data.len() >= 4 {
                                data.split_at(4)
                            } else {
                                (data, &b""[..])
                            };
                            let fmt = &fmt[..fmt.len().min(3)];
                            ffi::lua_createtable(l, 0, 2);
                            push_field(l, FORMAT);
                            push_bytes(l, fmt);
                            ffi::lua_rawset(l, -3);
                            push_field(l, STRING);
                            push_bytes(l, s);
                            ffi::lua_rawset(l, -3);
                            wrap_top(l, VERBATIM);
                        }
                    }
                }
            }
            b'*' | b'>' => {
                let n = int_of(line)?;
                if n < 0 {
                    ffi::lua_pushboolean(l, 0);
                } else {
                    let n = c_int::try_from(n).map_err(|_| BadReply)?;
                    if ffi::lua_checkstack(l, 4) == 0 {
                        return Err(BadReply);
                    }
                    ffi::lua_createtable(l, hint(n.into()), 0);
                    for i in 1..=n {
                        push_value(l, r, depth + 1)?;
                        ffi::lua_rawseti_(l, -2, i);
                    }
                }
            }
            b'%' | b'~' => {
                let n = int_of(line)?.max(0);
                if ffi::lua_checkstack(l, 5) == 0 {
                    return Err(BadReply);
                }
                ffi::lua_createtable(l, 0, hint(n));
                for _ in 0..n {
                    push_value(l, r, depth + 1)?;
                    if kind == b'%' {
                        push_value(l, r, depth + 1)?;
                    } else {
                        ffi::lua_pushboolean(l, 1);
                    }
                    if ffi::lua_type(l, -2) == ffi::LUA_TNIL {
                        ffi::lua_settop(l, -3);
                    } else {
                        ffi::lua_rawset(l, -3);
                    }
                }
                wrap_top(l, if kind == b'%' { MAP } else { SET });
            }
            b'|' => {
                let n = int_of(line)?.max(0);
                if ffi::lua_checkstack(l, 4) == 0 {
                    return Err(BadReply);
                }
                for _ in 0..2 * n {
                    push_value(l, r, depth + 1)?;
                    ffi::lua_settop(l, -2);
                }
                push_value(l, r, depth + 1)?;
            }
            b'_' => ffi::lua_pushnil(l),
            b'#' => ffi::lua_pushboolean(l, c_int::from(line == b"t")),
            b',' => {
                ffi::lua_pushnumber(l, double_of(line));
                wrap_top(l, DOUBLE);
            }
            b'(' => {
                push_bytes(l, line);
                wrap_top(l, BIG_NUMBER);
            }
            _ => return Err(BadReply),
        }
    }
    Ok(())
}
