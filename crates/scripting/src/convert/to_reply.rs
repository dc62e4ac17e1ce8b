//! Lua → reply: the script's return value, read from the Lua stack with
//! the C API and written as one reply (Redis's `luaReplyToRedisReply`; the
//! rules are in [`super`]).
//!
//! Tables are read raw (`lua_rawget`, `lua_next`), so metatables are never
//! consulted. The field names looked up in tables (`err`, `ok`...) are
//! upvalues of the running C closure ([`super::FIELD_NAMES`]), so looking
//! one up allocates nothing.
//!
//! The only Lua call here that can raise is `lua_checkstack` (a memory
//! error while growing the stack): the functions own nothing across it
//! (temporaries live between two Lua calls at most), and the caller
//! discards the partly written reply when that happens.

use std::os::raw::c_int;

use mlua::ffi;
use resp::{Protocol, ReplyBuf};

use super::{
    one_line, push_field, BIG_NUMBER, DOUBLE, ERR, FORMAT, MAP, MAX_DEPTH, OK, SET, STRING,
    VERBATIM,
};
use crate::num::c_trunc_i64;

/// Pushes `t[FIELD_NAMES[field]]` (raw) and returns its type.
///
/// # Safety
/// `l` is valid, `t` an absolute index of a table, one free stack slot,
/// and the running closure has the field upvalues (module doc).
unsafe fn field(l: *mut ffi::lua_State, t: c_int, field: usize) -> c_int {
    // SAFETY: per the function contract; neither call allocates.
    unsafe {
        push_field(l, field);
        ffi::lua_rawget(l, t);
        ffi::lua_type(l, -1)
    }
}

/// The bytes of the string at `idx`.
///
/// # Safety
/// The value at `idx` is a string; the slice is valid while it stays on
/// the stack.
unsafe fn bytes<'a>(l: *mut ffi::lua_State, idx: c_int) -> &'a [u8] {
    let mut len = 0usize;
    // SAFETY: per the function contract; `lua_tolstring` of a string
    // neither converts nor allocates.
    unsafe {
        let p = ffi::lua_tolstring(l, idx, &mut len);
        std::slice::from_raw_parts(p.cast::<u8>(), len)
    }
}

/// Writes the value at stack index `idx` as a reply. `script_resp` is
/// the protocol the script chose (`redis.setresp`): it decides booleans.
///
/// # Safety
/// `l` is valid, `idx` a valid index, and the running closure has the
/// field upvalues (module doc). May raise a memory error (see the module
/// doc); owns nothing across it.
pub(crate) unsafe fn write_value(
    l: *mut ffi::lua_State,
    idx: c_int,
    script_resp: Protocol,
    out: &mut ReplyBuf,
    depth: usize,
) {
    // SAFETY: per the function contract.
    unsafe {
        let idx = if idx < 0 {
            ffi::lua_gettop(l) + idx + 1
        } else {
            idx
        };
        match ffi::lua_type(l, idx) {
            ffi::LUA_TSTRING => out.bulk(bytes(l, idx)),
            ffi::LUA_TBOOLEAN => {
                let b = ffi::lua_toboolean(l, idx) != 0;
                if script_resp == Protocol::Resp2 {
                    if b {
                        out.int(1);
                    } else {
                        out.null();
                    }
                } else {
                    out.boolean(b);
                }
            }
            ffi::LUA_TNUMBER => out.int(c_trunc_i64(ffi::lua_tonumber(l, idx))),
            ffi::LUA_TTABLE => {
                if depth >= MAX_DEPTH {
                    out.error("ERR reached lua stack limit");
                } else {
                    write_table(l, idx, script_resp, out, depth);
                }
            }
            _ => out.null(),
        }
    }
}

/// Writes the table at absolute index `t`.
///
/// # Safety
/// As for [`write_value`], with a table at `t`.
unsafe fn write_table(
    l: *mut ffi::lua_State,
    t: c_int,
    script_resp: Protocol,
    out: &mut ReplyBuf,
    depth: usize,
) {
    // SAFETY: per the function contract. Each block pushes what it reads
    // and pops it before the next; `lua_checkstack` reserves the slots
    // (the table's fields, or a key and a value while iterating, plus the
    // nested value's own reservation).
    unsafe {
        if ffi::lua_checkstack(l, 4) == 0 {
            out.error("ERR reached lua stack limit");
            return;
        }
        let top = ffi::lua_gettop(l);
        if field(l, t, ERR) == ffi::LUA_TSTRING {
            // addReplyErrorFormat("-%s", err): written as is, one line.
            let text = one_line(bytes(l, -1));
            let v = out.vec_mut();
            v.push(b'-');
            v.extend_from_slice(&text);
            v.extend_from_slice(b"\r\n");
            drop(text);
            ffi::lua_settop(l, top);
            return;
        }
        ffi::lua_settop(l, top);
        if field(l, t, OK) == ffi::LUA_TSTRING {
            out.simple(bytes(l, -1));
            ffi::lua_settop(l, top);
            return;
        }
        ffi::lua_settop(l, top);
        if field(l, t, DOUBLE) == ffi::LUA_TNUMBER {
            out.double(ffi::lua_tonumber(l, -1));
            ffi::lua_settop(l, top);
            return;
        }
        ffi::lua_settop(l, top);
        if field(l, t, BIG_NUMBER) == ffi::LUA_TSTRING {
            let digits = one_line(bytes(l, -1));
            out.big_number(&digits);
            drop(digits);
            ffi::lua_settop(l, top);
            return;
        }
        ffi::lua_settop(l, top);
        if field(l, t, VERBATIM) == ffi::LUA_TTABLE {
            let vt = top + 1;
            if field(l, vt, FORMAT) == ffi::LUA_TSTRING && field(l, vt, STRING) == ffi::LUA_TSTRING
            {
                let mut fmt = [b'\0'; 3];
                for (d, s) in fmt.iter_mut().zip(bytes(l, -2)) {
                    *d = *s;
                }
                out.verbatim(&fmt, bytes(l, -1));
                ffi::lua_settop(l, top);
                return;
            }
        }
        ffi::lua_settop(l, top);
        if field(l, t, MAP) == ffi::LUA_TTABLE {
            let m = top + 1;
            out.map_len(count_pairs(l, m));
            ffi::lua_pushnil(l);
            while ffi::lua_next(l, m) != 0 {
                write_value(l, -2, script_resp, out, depth + 1);
                write_value(l, -1, script_resp, out, depth + 1);
                ffi::lua_settop(l, -2);
            }
            ffi::lua_settop(l, top);
            return;
        }
        ffi::lua_settop(l, top);
        if field(l, t, SET) == ffi::LUA_TTABLE {
            let s = top + 1;
            out.set_len(count_pairs(l, s));
            ffi::lua_pushnil(l);
            while ffi::lua_next(l, s) != 0 {
                write_value(l, -2, script_resp, out, depth + 1);
                ffi::lua_settop(l, -2);
            }
            ffi::lua_settop(l, top);
            return;
        }
        ffi::lua_settop(l, top);
        // An array, up to its first nil.
        let mut n: c_int = 0;
        loop {
            ffi::lua_rawgeti_(l, t, n + 1);
            let end = ffi::lua_type(l, -1) == ffi::LUA_TNIL;
            ffi::lua_settop(l, top);
            if end || n == c_int::MAX {
                break;
            }
            n += 1;
        }
        out.array_len(n as usize);
        for i in 1..=n {
            ffi::lua_rawgeti_(l, t, i);
            write_value(l, -1, script_resp, out, depth + 1);
            ffi::lua_settop(l, top);
        }
    }
}

/// The number of keys of the table at absolute index `t` (`lua_next`).
///
/// # Safety
/// `l` is valid, a table at `t`, two free stack slots.
unsafe fn count_pairs(l: *mut ffi::lua_State, t: c_int) -> usize {
    let mut n = 0;
    // SAFETY: per the function contract; the key stays on the stack for
    // the next `lua_next` and is never converted in place.
    unsafe {
        ffi::lua_pushnil(l);
        while ffi::lua_next(l, t) != 0 {
            n += 1;
            ffi::lua_settop(l, -2);
        }
    }
    n
}
