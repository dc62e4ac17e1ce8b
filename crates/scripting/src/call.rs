//! `redis.call` and `redis.pcall`: the scripts' hot path, written against
//! the Lua C API (Redis's `luaRedisGenericCommand`) instead of mlua's
//! value wrappers, which allocate and reference-count every argument and
//! every reply element.
//!
//! One call: the arguments are read from the Lua stack into the run
//! state's reusable argument vector (strings by pointer, numbers as
//! `%.17g`, anything else refused), the host runs the command into the run
//! state's reply buffer, and the reply is pushed back as Lua values
//! ([`crate::convert::push_reply`]). A failed command raises its
//! `{err = ...}` table from `redis.call`, and is returned by `redis.pcall`.
//!
//! Error discipline: a Lua error is a `longjmp`, which must not cross a
//! Rust frame that still owns something to drop. So the work is split:
//! [`call_host`] owns what needs dropping (the caught panic, the borrows
//! of the host) and calls only Lua functions that never raise
//! (`lua_gettop`, `lua_type`, `lua_tolstring` of a string,
//! `lua_tonumber`); the frames that push values (which raise on memory
//! errors) hold only plain data and borrows; and the error the call must
//! raise is pushed, then raised by the C-ABI shim ([`redis_call`]) with
//! nothing left to drop.
//!
//! Invariants: the run state's `args` is empty whenever no call is in
//! progress; a call leaves exactly one value (its result) on the stack or
//! raises.

use std::os::raw::{c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};

use mlua::{ffi, Function, Lua};

use crate::convert::{
    push_bytes, push_err_table, push_field_names, push_reply, FIELD_NAMES, FIELD_UPVALUE,
};
use crate::host::CallContext;
use crate::num::write_g;
use crate::run::RunState;

const NO_ARGS: &[u8] = b"ERR Please specify at least one argument for this redis lib call";
const BAD_ARGS: &[u8] = b"ERR Lua redis lib command arguments must be strings or integers";
const NO_RUN: &[u8] = b"ERR redis.call is not available outside a script run";
const MALFORMED: &[u8] = b"malformed reply from the command runtime";
const PANICKED: &[u8] = b"the command runtime panicked";

/// Builds `redis.call` (`raise`) or `redis.pcall` for the VM whose run
/// state is `state`: a C closure whose upvalues are the state's address,
/// an unused slot, and the field names of [`crate::convert::FIELD_NAMES`].
pub(crate) fn function(lua: &Lua, state: *mut RunState, raise: bool) -> mlua::Result<Function> {
    let f: ffi::lua_CFunction = if raise { redis_call } else { redis_pcall };
    // SAFETY: pushes the upvalues and makes a closure of them (the
    // function's one result; the stack has room: exec_raw runs this in a C
    // function's frame); nothing with a destructor is live in the closure,
    // so a memory error unwinding it is harmless.
    unsafe {
        lua.exec_raw((), |l| {
            ffi::lua_pushlightuserdata(l, state.cast::<c_void>());
            ffi::lua_pushnil(l);
            push_field_names(l);
            ffi::lua_pushcclosure(l, f, FIELD_UPVALUE - 1 + FIELD_NAMES.len() as c_int);
        })
    }
}

/// What a call ends with.
enum Outcome {
    /// Return this many values (on top of the stack).
    Return(c_int),
    /// Raise the value on top of the stack.
    Raise,
}

/// `redis.call`.
unsafe extern "C-unwind" fn redis_call(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: called by Lua as a C closure made by `function`; `command`
    // returns before anything is raised, so `lua_error` unwinds only this
    // frame, which owns nothing.
    unsafe {
        match command(l, true) {
            Outcome::Return(n) => n,
            Outcome::Raise => ffi::lua_error(l),
        }
    }
}

/// `redis.pcall`.
unsafe extern "C-unwind" fn redis_pcall(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: as for `redis_call`.
    unsafe {
        match command(l, false) {
            Outcome::Return(n) => n,
            Outcome::Raise => ffi::lua_error(l),
        }
    }
}

/// What [`call_host`] did.
#[derive(Clone, Copy)]
enum Called {
    /// The reply is in the run state's buffer.
    Reply,
    /// The call was refused with this error text.
    Refused(&'static [u8]),
    /// The host panicked (the panic is kept in the run state).
    Panicked,
}

/// The body of `redis.call` / `redis.pcall`.
///
/// # Safety
/// `l` is the running thread, the running C closure is one `function`
/// made (upvalue 1 the address of a live [`RunState`] that nothing else
/// borrows, see [`crate::run`]; then the field names). May raise a memory
/// error; owns nothing droppable.
unsafe fn command(l: *mut ffi::lua_State, raise: bool) -> Outcome {
    // SAFETY: per the function contract.
    let st = unsafe { &mut *ffi::lua_touserdata(l, ffi::lua_upvalueindex(1)).cast::<RunState>() };
    // SAFETY: `call_host` only reads the stack with functions that do not
    // raise; nothing is pushed.
    let called = unsafe { call_host(l, st, raise) };
    // From here on only plain data and borrows are live: pushing may raise.
    // SAFETY: `l` is a valid state with the C function's free stack slots
    // (LUA_MINSTACK) for the pushes below.
    unsafe {
        match called {
            Called::Refused(text) => {
                push_err_table(l, text);
                if raise {
                    Outcome::Raise
                } else {
                    Outcome::Return(1)
                }
            }
            Called::Panicked => {
                push_bytes(l, PANICKED);
                Outcome::Raise
            }
            Called::Reply => {
                let reply = st.buf.as_bytes();
                if raise && matches!(reply.first(), Some(b'-' | b'!')) {
                    push_err_table(l, error_reply_text(reply));
                    return Outcome::Raise;
                }
                let top = ffi::lua_gettop(l);
                if push_reply(l, reply).is_err() {
                    ffi::lua_settop(l, top);
                    push_bytes(l, MALFORMED);
                    return Outcome::Raise;
                }
                Outcome::Return(1)
            }
        }
    }
}

/// Reads the arguments and runs the command through the host.
///
/// # Safety
/// As for [`command`]. Calls no Lua function that can raise.
unsafe fn call_host(l: *mut ffi::lua_State, st: &mut RunState, raise: bool) -> Called {
    // SAFETY: `l` is valid (contract); `lua_gettop` does not raise.
    let n = unsafe { ffi::lua_gettop(l) };
    if n == 0 {
        return Called::Refused(NO_ARGS);
    }
    // SAFETY: as above; `gather` reads only indices 1..=n.
    if !unsafe { gather(l, st, n) } {
        return Called::Refused(BAD_ARGS);
    }
    // SAFETY: the host pointer is set for the whole run, and no other
    // reference to the host is live while a script's callback runs.
    let Some(host) = (unsafe { st.host() }) else {
        st.args.clear();
        return Called::Refused(NO_RUN);
    };
    st.buf.clear();
    st.buf.set_protocol(st.resp);
    let ctx = CallContext {
        repl: st.repl,
        pcall: !raise,
    };
    let (args, buf) = (&st.args, &mut st.buf);
    let res = catch_unwind(AssertUnwindSafe(|| host.call(args, ctx, buf)));
    st.args.clear();
    match res {
        Ok(()) => Called::Reply,
        Err(p) => {
            st.panic.get_or_insert(p);
            Called::Panicked
        }
    }
}

/// Redis's `luaArgsToRedisArgv`: fills `st.args` with the `n` arguments,
/// strings as they are and numbers as `%.17g`; false (and `st.args`
/// empty) when one is of another type.
///
/// # Safety
/// `l` is valid with at least `n` values on its stack. The slices stored
/// in `st.args` point into those strings (alive while they stay on the
/// stack, i.e. for the whole call) and into `st.nums` (left alone until
/// `st.args` is cleared); the caller clears `st.args` before returning.
unsafe fn gather(l: *mut ffi::lua_State, st: &mut RunState, n: c_int) -> bool {
    st.nums.clear();
    st.num_ends.clear();
    for i in 1..=n {
        // SAFETY: index within the stack; `lua_type` does not raise, nor
        // does `lua_tonumber` of a number.
        let num = unsafe {
            match ffi::lua_type(l, i) {
                ffi::LUA_TSTRING => None,
                ffi::LUA_TNUMBER => Some(ffi::lua_tonumber(l, i)),
                _ => return false,
            }
        };
        if let Some(x) = num {
            write_g(&mut st.nums, x, 17);
            st.num_ends.push(st.nums.len());
        }
    }
    let mut num = 0;
    let mut start = 0;
    for i in 1..=n {
        // SAFETY: index within the stack; the type was checked above, and
        // `lua_tolstring` of a string neither converts nor raises.
        let arg: &'static [u8] = unsafe {
            if ffi::lua_type(l, i) == ffi::LUA_TSTRING {
                let mut len = 0usize;
                let p = ffi::lua_tolstring(l, i, &mut len);
                std::slice::from_raw_parts(p.cast::<u8>(), len)
            } else {
                let end = st.num_ends[num];
                num += 1;
                let s = std::slice::from_raw_parts(st.nums.as_ptr().add(start), end - start);
                start = end;
                s
            }
        };
        st.args.push(arg);
    }
    true
}

/// The text of an error reply (`-text\r\n` or `!len\r\ntext\r\n`).
fn error_reply_text(reply: &[u8]) -> &[u8] {
    if reply.first() == Some(&b'!') {
        let start = reply
            .iter()
            .position(|&c| c == b'\n')
            .map_or(reply.len(), |i| i + 1);
        let body = &reply[start..];
        body.strip_suffix(b"\r\n").unwrap_or(body)
    } else {
        let body = &reply[1..];
        body.strip_suffix(b"\r\n").unwrap_or(body)
    }
}
