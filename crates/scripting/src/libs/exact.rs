//! Exact numbers for the library functions written in Rust.
//!
//! mlua's Lua 5.1 value conversion hands a number within `f64::EPSILON` of
//! an integer to Rust as that integer, so `-0.0` and every `|x| < 2^-52`
//! arrive as `Integer(0)`, where Redis's C libraries see the real double
//! (`cjson.encode(-0.0)` is `-0`, `struct.pack('d', 1e-20)` packs 1e-20,
//! `redis.sha1hex(1e-20)` hashes `"1e-20"`). Two repairs:
//!
//! * values read from tables are read again as `f64` ([`exact_in`]);
//! * a function's own arguments go through a C trampoline
//!   ([`create_function`]): it reads each numeric argument with
//!   `lua_tonumber`, records the ones mlua would turn into `Integer(0)`,
//!   then calls the mlua function, whose arguments are put right before
//!   the Rust body runs.
//!
//! Invariants: [`RECORDED`] holds entries only while a trampoline call is
//! in progress, tagged with that call's depth, in depth order; the Rust
//! body behind a trampoline never calls back into Lua, so while
//! [`DEPTH`] > 0 the running Rust callback is the one the innermost
//! trampoline called (and that trampoline is its caller's frame, which
//! [`in_trampoline`] lets `luaL_where` skip). The trampoline holds nothing
//! that needs dropping when it re-raises an error (a `longjmp`).

use std::cell::{Cell, RefCell};
use std::os::raw::c_int;

use mlua::{ffi, Function, IntoLua, IntoLuaMulti, Lua, MultiValue, Table, Value};

thread_local! {
    /// Trampoline calls in progress on this thread.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// `(depth, argument index from 0, exact value)` of the arguments mlua
    /// rounds to 0.
    static RECORDED: RefCell<Vec<(u32, usize, f64)>> = const { RefCell::new(Vec::new()) };
}

/// mlua's rule: a number whose truncation differs from it by less than
/// `f64::EPSILON` becomes that integer. Only 0 can lose anything.
fn rounded_by_mlua(x: f64) -> bool {
    x.abs() < f64::EPSILON && (x != 0.0 || x.is_sign_negative())
}

/// `v`, read from `t[k]`, with the real number when mlua made it `Integer(0)`.
pub(crate) fn exact_in(t: &Table, k: impl IntoLua, v: Value) -> Value {
    if matches!(v, Value::Integer(0)) {
        if let Ok(x) = t.raw_get::<f64>(k) {
            if rounded_by_mlua(x) {
                return Value::Number(x);
            }
        }
    }
    v
}

/// True while the running Rust callback was called by a trampoline: the
/// Lua-visible caller is then one frame further up.
pub(crate) fn in_trampoline() -> bool {
    DEPTH.get() > 0
}

/// `lua.create_function(f)` whose arguments `f` sees exactly as Lua
/// numbers (see the module documentation). `f` must not call Lua.
pub(crate) fn create_function<F, R>(lua: &Lua, f: F) -> mlua::Result<Function>
where
    F: Fn(&Lua, MultiValue) -> mlua::Result<R> + mlua::MaybeSend + 'static,
    R: IntoLuaMulti,
{
    let inner = lua.create_function(move |lua, args: MultiValue| f(lua, put_right(args)))?;
    // SAFETY: runs in a protected C frame with `inner` as its one
    // argument; makes it the closure's upvalue and leaves the closure as
    // the one result. Nothing with a destructor is live in the closure.
    unsafe { lua.exec_raw(inner, |l| ffi::lua_pushcclosure(l, trampoline, 1)) }
}

/// The arguments with the recorded exact values of this depth put back.
fn put_right(mut args: MultiValue) -> MultiValue {
    let depth = DEPTH.get();
    if depth == 0 {
        return args;
    }
    RECORDED.with_borrow(|r| {
        for &(d, i, x) in r.iter().rev() {
            if d != depth {
                break;
            }
            if let Some(v @ Value::Integer(0)) = args.get_mut(i) {
                *v = Value::Number(x);
            }
        }
    });
    args
}

/// Records the arguments mlua would round and enters a new depth.
///
/// # Safety
/// `l` is the trampoline's running state; only non-raising API is used.
unsafe fn enter(l: *mut ffi::lua_State, n: c_int) -> u32 {
    let depth = DEPTH.get() + 1;
    DEPTH.set(depth);
    for i in 1..=n {
        // SAFETY: `i` is a valid stack index of the running C function;
        // lua_type and lua_tonumber never raise.
        let x = unsafe {
            if ffi::lua_type(l, i) != ffi::LUA_TNUMBER {
                continue;
            }
            ffi::lua_tonumber(l, i)
        };
        if rounded_by_mlua(x) {
            RECORDED.with_borrow_mut(|r| r.push((depth, (i - 1) as usize, x)));
        }
    }
    depth
}

/// Leaves `depth`, dropping what it recorded.
fn leave(depth: u32) {
    RECORDED.with_borrow_mut(|r| {
        while r.last().is_some_and(|e| e.0 == depth) {
            r.pop();
        }
    });
    DEPTH.set(depth - 1);
}

/// The C function in front of a library function: upvalue 1 is the mlua
/// function it calls with the same arguments, returning what it returns
/// and re-raising what it raises (after [`leave`], so no record outlives
/// the call).
unsafe extern "C-unwind" fn trampoline(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: a C function's frame: its arguments are the stack, and
    // LUA_MINSTACK slots are free for the one value pushed. No Rust value
    // with a destructor is live across lua_error.
    unsafe {
        let n = ffi::lua_gettop(l);
        let depth = enter(l, n);
        ffi::lua_pushvalue(l, ffi::lua_upvalueindex(1));
        ffi::lua_insert(l, 1);
        let status = ffi::lua_pcall(l, n, ffi::LUA_MULTRET, 0);
        leave(depth);
        if status != 0 {
            ffi::lua_error(l);
        }
        ffi::lua_gettop(l)
    }
}
