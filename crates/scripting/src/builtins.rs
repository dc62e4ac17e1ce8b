//! The base functions the sandbox replaces (`rawget`, `rawset`, `next`,
//! `pairs`, `getmetatable`, `setmetatable`, `pcall`, `xpcall`,
//! `coroutine.resume`, `loadstring`, `load`), written as C functions
//! against the Lua C API, as Lua 5.1's own are.
//!
//! They differ from Lua's in what the sandbox needs (see `sandbox.lua`):
//! they see through the read-only proxies, refuse to change a protected
//! table, turn an error raised by Rust code into the value Redis shows
//! (`pcall` also an `{err=...}` table into its text, as Redis's own
//! `pcall` does), and never load a
//! precompiled chunk. Being C functions, everything else is Lua's: a call
//! in tail position keeps the script's frame (so errors keep their
//! `user_script:1: ` prefix), argument errors name the function as the
//! caller did (`'?'` under `pcall`, a local's name, no `self` in method
//! calls), and `error(msg, 2)` passed to `pcall` points at the script,
//! not at sandbox code.
//!
//! Upvalues, by function: `ro` (proxy -> protected table) for the table
//! functions; `pairs` also the `next` it returns; `getmetatable` also
//! `mt_view` (what it shows for a proxy) and the string metatable;
//! `pcall`, `xpcall` and `resume` the error converter (`libs.__conv`);
//! `resume` also Lua's own `coroutine.resume`.
//!
//! Error discipline: a Lua error is a `longjmp`; these functions hold only
//! raw pointers and integers, never a value with a destructor.

use std::os::raw::{c_char, c_int, c_void};

use mlua::{ffi, Function, Lua, MultiValue};

const MODIFY: &[u8] = b"Attempt to modify a readonly table";
const ESC: u8 = 0x1b;

fn up(i: c_int) -> c_int {
    ffi::lua_upvalueindex(i)
}

/// Builds the C closure `name` with `upvalues` (an error for an unknown name).
pub(crate) fn closure(lua: &Lua, name: &str, upvalues: MultiValue) -> mlua::Result<Function> {
    let f: ffi::lua_CFunction = match name {
        "rawget" => rawget,
        "rawset" => rawset,
        "next" => next,
        "pairs" => pairs,
        "getmetatable" => getmetatable,
        "setmetatable" => setmetatable,
        "pcall" => pcall,
        "xpcall" => xpcall,
        "resume" => resume,
        "loadstring" => loadstring,
        "load" => load,
        _ => return Err(mlua::Error::runtime(format!("no builtin {name}"))),
    };
    let n = upvalues.len() as c_int;
    // SAFETY: exec_raw runs this in a C frame whose stack holds exactly the
    // `n` upvalues; the closure takes them and is the one result.
    unsafe { lua.exec_raw(upvalues, |l| ffi::lua_pushcclosure(l, f, n)) }
}

/// Raises `msg` as a string with no position (`error(msg, 0)`).
unsafe fn raise_plain(l: *mut ffi::lua_State, msg: &'static [u8]) -> c_int {
    // SAFETY: the caller's frame; pushes one value then raises.
    unsafe {
        ffi::lua_pushlstring(l, msg.as_ptr().cast::<c_char>(), msg.len());
        ffi::lua_error(l)
    }
}

/// Raises `msg` prefixed with the caller's position (`luaL_error`).
unsafe fn raise_here(l: *mut ffi::lua_State, msg: &'static [u8]) -> c_int {
    // SAFETY: as above.
    unsafe {
        ffi::luaL_where(l, 1);
        ffi::lua_pushlstring(l, msg.as_ptr().cast::<c_char>(), msg.len());
        ffi::lua_concat(l, 2);
        ffi::lua_error(l)
    }
}

/// Pushes `ro[v]` for the value at `idx`: the protected table, or nil.
unsafe fn push_protected(l: *mut ffi::lua_State, idx: c_int) {
    // SAFETY: upvalue 1 is the `ro` table; a raw get never raises.
    unsafe {
        ffi::lua_pushvalue(l, idx);
        ffi::lua_rawget(l, up(1));
    }
}

/// Replaces the table at `idx` by the one it protects, if it is a proxy.
unsafe fn unproxy(l: *mut ffi::lua_State, idx: c_int) {
    // SAFETY: see push_protected.
    unsafe {
        push_protected(l, idx);
        if ffi::lua_isnil(l, -1) != 0 {
            ffi::lua_settop(l, -2);
        } else {
            ffi::lua_replace(l, idx);
        }
    }
}

unsafe extern "C-unwind" fn rawget(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: a C function's own frame, with LUA_MINSTACK free slots; at
    // most a few values are pushed (the same holds for all functions below).
    unsafe {
        ffi::luaL_checktype(l, 1, ffi::LUA_TTABLE);
        ffi::luaL_checkany(l, 2);
        ffi::lua_settop(l, 2);
        unproxy(l, 1);
        ffi::lua_rawget(l, 1);
        1
    }
}

unsafe extern "C-unwind" fn rawset(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: see the module docs: a frame of this C function (or its
    // caller's), a few slots pushed, nothing to drop across a raise.
    unsafe {
        ffi::luaL_checktype(l, 1, ffi::LUA_TTABLE);
        ffi::luaL_checkany(l, 2);
        ffi::luaL_checkany(l, 3);
        ffi::lua_settop(l, 3);
        push_protected(l, 1);
        if ffi::lua_isnil(l, -1) == 0 {
            return raise_plain(l, MODIFY);
        }
        ffi::lua_settop(l, 3);
        ffi::lua_rawset(l, 1);
        1
    }
}

unsafe extern "C-unwind" fn next(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: see the module docs: a frame of this C function (or its
    // caller's), a few slots pushed, nothing to drop across a raise.
    unsafe {
        ffi::luaL_checktype(l, 1, ffi::LUA_TTABLE);
        ffi::lua_settop(l, 2);
        unproxy(l, 1);
        if ffi::lua_next(l, 1) != 0 {
            2
        } else {
            ffi::lua_pushnil(l);
            1
        }
    }
}

/// `pairs(t)`: a `next` (upvalue 2), `t`, nil. As in Lua, that `next` is
/// its own closure, not the global one (`pairs({}) == next` is false).
unsafe extern "C-unwind" fn pairs(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: see the module docs: a frame of this C function (or its
    // caller's), a few slots pushed, nothing to drop across a raise.
    unsafe {
        ffi::luaL_checktype(l, 1, ffi::LUA_TTABLE);
        ffi::lua_pushvalue(l, up(2));
        ffi::lua_pushvalue(l, 1);
        ffi::lua_pushnil(l);
        3
    }
}

/// `getmetatable(v)`: for a proxy, what `mt_view` (upvalue 2) shows; for
/// a string, the protected view of the string metatable (upvalue 3);
/// else Lua's rule (`__metatable` if set).
unsafe extern "C-unwind" fn getmetatable(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: see the module docs: a frame of this C function (or its
    // caller's), a few slots pushed, nothing to drop across a raise.
    unsafe {
        ffi::luaL_checkany(l, 1);
        ffi::lua_settop(l, 1);
        push_protected(l, 1);
        if ffi::lua_isnil(l, -1) == 0 {
            ffi::lua_pushvalue(l, 1);
            ffi::lua_rawget(l, up(2));
            return 1;
        }
        ffi::lua_settop(l, 1);
        if ffi::lua_getmetatable(l, 1) == 0 {
            ffi::lua_pushnil(l);
            return 1;
        }
        if ffi::lua_rawequal(l, -1, up(3)) != 0 {
            ffi::lua_pushvalue(l, up(3));
            ffi::lua_rawget(l, up(2));
            return 1;
        }
        ffi::luaL_getmetafield(l, 1, c"__metatable".as_ptr());
        1
    }
}

unsafe extern "C-unwind" fn setmetatable(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: see the module docs: a frame of this C function (or its
    // caller's), a few slots pushed, nothing to drop across a raise.
    unsafe {
        let t = ffi::lua_type(l, 2);
        ffi::luaL_checktype(l, 1, ffi::LUA_TTABLE);
        if t != ffi::LUA_TNIL && t != ffi::LUA_TTABLE {
            ffi::luaL_argerror(l, 2, c"nil or table expected".as_ptr());
        }
        push_protected(l, 1);
        if ffi::lua_isnil(l, -1) == 0 {
            return raise_plain(l, MODIFY);
        }
        ffi::lua_settop(l, 2);
        if ffi::luaL_getmetafield(l, 1, c"__metatable".as_ptr()) != ffi::LUA_TNIL {
            return raise_here(l, b"cannot change a protected metatable");
        }
        ffi::lua_settop(l, 2);
        ffi::lua_setmetatable(l, 1);
        1
    }
}

/// Replaces the error value at `idx` by what Redis shows: an error raised
/// by Rust code (a userdata) goes through the converter (upvalue 1).
unsafe fn convert_error(l: *mut ffi::lua_State, idx: c_int) {
    // SAFETY: see the module docs: a frame of this C function (or its
    // caller's), a few slots pushed, nothing to drop across a raise.
    unsafe {
        if ffi::lua_type(l, idx) == ffi::LUA_TUSERDATA {
            ffi::lua_pushvalue(l, up(1));
            ffi::lua_pushvalue(l, idx);
            ffi::lua_call(l, 1, 1);
            ffi::lua_replace(l, idx);
        }
    }
}

/// Redis 7.0's `pcall` (`luaRedisPcall`): a failure's error is converted
/// first; an error that is a table with a string or number `err` becomes
/// that text, and a table whose `err` is anything else is followed by
/// that value (Redis leaves it on the stack). Called with no arguments,
/// Redis's calls the stale slot above its stack, a boolean: the answer is
/// false and "attempt to call a boolean value".
unsafe extern "C-unwind" fn pcall(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: see the module docs: a frame of this C function (or its
    // caller's), a few slots pushed, nothing to drop across a raise.
    unsafe {
        let argc = ffi::lua_gettop(l);
        if argc == 0 {
            ffi::lua_pushboolean(l, 0);
            ffi::lua_pushstring(l, c"attempt to call a boolean value".as_ptr());
            return 2;
        }
        let status = ffi::lua_pcall(l, argc - 1, ffi::LUA_MULTRET, 0);
        if status != 0 {
            // The stack is the error value alone.
            convert_error(l, 1);
            if ffi::lua_type(l, 1) == ffi::LUA_TTABLE {
                ffi::lua_getfield(l, 1, c"err".as_ptr());
                if ffi::lua_isstring(l, -1) != 0 {
                    ffi::lua_replace(l, 1);
                }
            }
        }
        ffi::lua_pushboolean(l, c_int::from(status == 0));
        ffi::lua_insert(l, 1);
        ffi::lua_gettop(l)
    }
}

/// The handler `xpcall` installs: converts the error (upvalue 1), then
/// calls the script's handler (upvalue 2) with it.
unsafe extern "C-unwind" fn xpcall_handler(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: see the module docs: a frame of this C function (or its
    // caller's), a few slots pushed, nothing to drop across a raise.
    unsafe {
        ffi::lua_settop(l, 1);
        convert_error(l, 1);
        ffi::lua_pushvalue(l, up(2));
        ffi::lua_insert(l, 1);
        ffi::lua_call(l, 1, 1);
        1
    }
}

unsafe extern "C-unwind" fn xpcall(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: see the module docs: a frame of this C function (or its
    // caller's), a few slots pushed, nothing to drop across a raise.
    unsafe {
        ffi::luaL_checkany(l, 2);
        ffi::lua_settop(l, 2);
        ffi::lua_pushvalue(l, up(1));
        ffi::lua_pushvalue(l, 2);
        ffi::lua_pushcclosure(l, xpcall_handler, 2);
        ffi::lua_replace(l, 2);
        ffi::lua_insert(l, 1);
        let status = ffi::lua_pcall(l, 0, ffi::LUA_MULTRET, 1);
        ffi::lua_pushboolean(l, c_int::from(status == 0));
        ffi::lua_replace(l, 1);
        ffi::lua_gettop(l)
    }
}

/// `coroutine.resume(co, ...)` through Lua's own (upvalue 2); a failure's
/// error is converted.
unsafe extern "C-unwind" fn resume(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: see the module docs: a frame of this C function (or its
    // caller's), a few slots pushed, nothing to drop across a raise.
    unsafe {
        if ffi::lua_tothread(l, 1).is_null() {
            ffi::luaL_argerror(l, 1, c"coroutine expected".as_ptr());
        }
        let n = ffi::lua_gettop(l);
        ffi::lua_pushvalue(l, up(2));
        ffi::lua_insert(l, 1);
        ffi::lua_call(l, n, ffi::LUA_MULTRET);
        if ffi::lua_toboolean(l, 1) == 0 && ffi::lua_gettop(l) >= 2 {
            convert_error(l, 2);
        }
        ffi::lua_gettop(l)
    }
}

/// Lua's `load_aux`: the function, or nil and the message.
unsafe fn load_result(l: *mut ffi::lua_State, status: c_int) -> c_int {
    // SAFETY: see the module docs: a frame of this C function (or its
    // caller's), a few slots pushed, nothing to drop across a raise.
    unsafe {
        if status == 0 {
            1
        } else {
            ffi::lua_pushnil(l);
            ffi::lua_insert(l, -2);
            2
        }
    }
}

/// Replaces the string on top of the stack by `" " .. it` when it starts
/// with ESC, so Lua parses it as text (see `sandbox::text_chunk`).
unsafe fn text_on_top(l: *mut ffi::lua_State) {
    // SAFETY: see the module docs: a frame of this C function (or its
    // caller's), a few slots pushed, nothing to drop across a raise.
    unsafe {
        let mut len = 0usize;
        let p = ffi::lua_tolstring(l, -1, &mut len);
        if len > 0 && *p.cast::<u8>() == ESC {
            ffi::lua_pushlstring(l, c" ".as_ptr(), 1);
            ffi::lua_insert(l, -2);
            ffi::lua_concat(l, 2);
        }
    }
}

/// `loadstring(s [, name])`, parsing `s` as text; the chunk name defaults
/// to `s` itself, as Lua's.
unsafe extern "C-unwind" fn loadstring(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: see the module docs: a frame of this C function (or its
    // caller's), a few slots pushed, nothing to drop across a raise.
    unsafe {
        let mut len = 0usize;
        let s = ffi::luaL_checklstring(l, 1, &mut len);
        let name = ffi::luaL_optlstring(l, 2, s, std::ptr::null_mut());
        ffi::lua_settop(l, 2);
        ffi::lua_pushvalue(l, 1);
        text_on_top(l);
        let mut len = 0usize;
        let chunk = ffi::lua_tolstring(l, 3, &mut len);
        let status = ffi::luaL_loadbuffer(l, chunk, len, name);
        load_result(l, status)
    }
}

/// `load`'s reader: calls the function at index 1 for the next piece,
/// kept at index 3; the first piece is made text (`data` points to the
/// "first piece" flag).
unsafe extern "C-unwind" fn read_piece(
    l: *mut ffi::lua_State,
    data: *mut c_void,
    size: *mut usize,
) -> *const c_char {
    // SAFETY: see the module docs: a frame of this C function (or its
    // caller's), a few slots pushed, nothing to drop across a raise.
    unsafe {
        ffi::luaL_checkstack(l, 2, c"too many nested functions".as_ptr());
        ffi::lua_pushvalue(l, 1);
        ffi::lua_call(l, 0, 1);
        if ffi::lua_isnil(l, -1) != 0 {
            ffi::lua_settop(l, -2);
            *size = 0;
            return std::ptr::null();
        }
        if ffi::lua_isstring(l, -1) == 0 {
            raise_here(l, b"reader function must return a string");
        }
        let first = data.cast::<c_int>();
        if *first != 0 {
            *first = 0;
            text_on_top(l);
        }
        ffi::lua_replace(l, 3);
        ffi::lua_tolstring(l, 3, size)
    }
}

/// `load(f [, name])`, parsing the pieces as text.
unsafe extern "C-unwind" fn load(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: see the module docs: a frame of this C function (or its
    // caller's), a few slots pushed, nothing to drop across a raise.
    unsafe {
        let name = ffi::luaL_optlstring(l, 2, c"=(load)".as_ptr(), std::ptr::null_mut());
        ffi::luaL_checktype(l, 1, ffi::LUA_TFUNCTION);
        ffi::lua_settop(l, 3);
        let mut first: c_int = 1;
        let status = ffi::lua_load(
            l,
            read_piece,
            (&mut first as *mut c_int).cast::<c_void>(),
            name,
        );
        load_result(l, status)
    }
}
