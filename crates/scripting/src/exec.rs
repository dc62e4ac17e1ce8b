//! Running an EVAL script or a function on the raw Lua stack: one
//! protected call of the VM's entry closure, which sets up `KEYS`/`ARGV`,
//! calls the script under the error handler and writes its result as the
//! reply ([`crate::convert`]'s Lua → reply side), with no mlua value
//! wrapper on the way.
//!
//! The entry closure ([`Entry`]) is made once per VM; its upvalues are the
//! global table `real`, the error handler, and the field names the
//! conversion looks up ([`FIELD_NAMES`]). It is called with `lua_pcall` on
//! the VM's main thread, which is idle whenever an engine method runs (the
//! engines are used under a mutex, one call at a time): the only things
//! done outside that protected call are a registry read and a light
//! userdata push, which cannot raise.
//!
//! A script error leaves its error value in a registry slot of the VM;
//! the engine formats it with [`crate::reply::write_error`] (a rare path,
//! kept on mlua values).
//!
//! Invariant: a run writes exactly one reply to `out` (a reply partly
//! written when a memory error interrupted the conversion is discarded
//! and replaced by the error).

use std::os::raw::{c_int, c_void};

use mlua::{ffi, Lua, RegistryKey, Value};
use resp::{Protocol, ReplyBuf};

use crate::convert::{
    push_bytes, push_field, push_field_names, write_value, ARGV, FIELD_NAMES, FIELD_UPVALUE, KEYS,
};
use crate::reply::write_error;
use crate::run::RunState;

/// Upvalue 1 of the entry closure: the global table `real`.
const REAL: c_int = 1;
/// Upvalue 2: the error handler.
const HANDLER: c_int = 2;

/// How the code is called.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// An EVAL script: `KEYS` and `ARGV` are globals, no arguments.
    Script,
    /// A function: called as `f(KEYS, ARGV)`.
    Function,
}

/// One run, passed to the entry closure as a light userdata.
struct Job<'a> {
    kind: Kind,
    /// Registry reference of the function to call.
    func: c_int,
    keys: &'a [&'a [u8]],
    args: &'a [&'a [u8]],
    /// Registry reference where a script error's value is left.
    err_slot: c_int,
    state: *mut RunState,
    out: *mut ReplyBuf,
    failed: bool,
}

/// The entry closure of one VM and what it needs.
pub(crate) struct Entry {
    /// The VM's main thread.
    main: *mut ffi::lua_State,
    /// The entry closure, in the registry.
    func: RegistryKey,
    /// Where a failed run's error value is left.
    err: RegistryKey,
}

// SAFETY: `main` is only used by the thread running the VM, one call at a
// time (the engines live in a mutex); the Lua state it points into is
// owned by the same VM as this value.
unsafe impl Send for Entry {}

impl Entry {
    /// Makes the entry closure of `lua` with the globals `real` and the
    /// error `handler` (registry references).
    pub fn new(lua: &Lua, real: &RegistryKey, handler: &RegistryKey) -> mlua::Result<Entry> {
        let (real, handler) = (real.id(), handler.id());
        let mut main: *mut ffi::lua_State = std::ptr::null_mut();
        // SAFETY: pushes the upvalues (two registry reads and interned
        // strings) and makes the closure, the function's one result;
        // nothing with a destructor is live in the closure.
        let func: mlua::Function = unsafe {
            lua.exec_raw((), |l| {
                main = l;
                ffi::lua_rawgeti_(l, ffi::LUA_REGISTRYINDEX, real);
                ffi::lua_rawgeti_(l, ffi::LUA_REGISTRYINDEX, handler);
                push_field_names(l);
                ffi::lua_pushcclosure(l, entry, FIELD_UPVALUE - 1 + FIELD_NAMES.len() as c_int);
            })?
        };
        Ok(Entry {
            main,
            func: lua.create_registry_value(func)?,
            err: lua.create_registry_value(false)?,
        })
    }

    /// Runs the function with registry reference `func` as `kind` and
    /// writes its reply, or its error (`ERR Error running script <name>,
    /// ...` forms, see [`write_error`]), to `out`. The caller has entered
    /// the run (`crate::run::enter`) on `state`, the VM's run state.
    #[allow(clippy::too_many_arguments)]
    pub fn run(
        &self,
        lua: &Lua,
        state: *mut RunState,
        kind: Kind,
        func: c_int,
        keys: &[&[u8]],
        args: &[&[u8]],
        name: &str,
        out: &mut ReplyBuf,
    ) {
        let start = out.len();
        let mut job = Job {
            kind,
            func,
            keys,
            args,
            err_slot: self.err.id(),
            state,
            out: &mut *out,
            failed: false,
        };
        let l = self.main;
        // SAFETY: the main thread is idle (module doc), so its stack has
        // room for the two values pushed (the closure from the registry and
        // a light userdata; neither allocates). Everything that may raise
        // happens inside `lua_pcall`, which leaves one error value on
        // failure, popped here.
        let failure = unsafe {
            ffi::lua_rawgeti_(l, ffi::LUA_REGISTRYINDEX, self.func.id());
            ffi::lua_pushlightuserdata(l, (&mut job as *mut Job<'_>).cast::<c_void>());
            if ffi::lua_pcall(l, 1, 0, 0) == 0 {
                None
            } else {
                let msg = if ffi::lua_type(l, -1) == ffi::LUA_TSTRING {
                    let mut len = 0usize;
                    let p = ffi::lua_tolstring(l, -1, &mut len);
                    String::from_utf8_lossy(std::slice::from_raw_parts(p.cast::<u8>(), len))
                        .into_owned()
                } else {
                    "unknown error".to_owned()
                };
                ffi::lua_settop(l, -2);
                Some(msg)
            }
        };
        if let Some(msg) = failure {
            out.truncate(start);
            out.error(&format!("ERR Error running script {name}, {msg}"));
        } else if job.failed {
            let v = lua.registry_value::<Value>(&self.err).unwrap_or(Value::Nil);
            write_error(&v, name, out);
            drop(v);
            // SAFETY: replaces the value of an existing registry key (no
            // allocation) on the idle main thread, which has a free slot.
            unsafe {
                ffi::lua_pushboolean(l, 0);
                ffi::lua_rawseti_(l, ffi::LUA_REGISTRYINDEX, self.err.id());
            }
        }
    }
}

/// Pushes a Lua array of byte strings (`KEYS`, `ARGV`).
///
/// # Safety
/// `l` is a valid state with two free stack slots. Raises on a memory
/// error.
unsafe fn push_string_array(l: *mut ffi::lua_State, items: &[&[u8]]) {
    // SAFETY: per the function contract; indices fit Lua's `int` since
    // `items` came from one command's arguments.
    unsafe {
        ffi::lua_createtable(l, c_int::try_from(items.len()).unwrap_or(c_int::MAX), 0);
        for (i, it) in items.iter().enumerate() {
            push_bytes(l, it);
            ffi::lua_rawseti_(l, -2, (i + 1) as c_int);
        }
    }
}

/// The entry closure: `entry(job)`.
unsafe extern "C-unwind" fn entry(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: called only by `Entry::run`, with the address of a live
    // `Job` as its one argument and the upvalues `Entry::new` gave it.
    // Nothing in this frame or below owns anything across a call that can
    // raise (see `crate::convert`), so a memory error unwinding to
    // `Entry::run`'s `lua_pcall` drops nothing. Stack, from empty:
    // [real k t] -> [] -> [h f (k a)] -> [h result].
    unsafe {
        let job = &mut *ffi::lua_touserdata(l, 1).cast::<Job<'_>>();
        ffi::lua_settop(l, 0);
        let nargs = match job.kind {
            Kind::Script => {
                ffi::lua_pushvalue(l, ffi::lua_upvalueindex(REAL));
                push_field(l, KEYS);
                push_string_array(l, job.keys);
                ffi::lua_rawset(l, -3);
                push_field(l, ARGV);
                push_string_array(l, job.args);
                ffi::lua_rawset(l, -3);
                ffi::lua_settop(l, 0);
                ffi::lua_pushvalue(l, ffi::lua_upvalueindex(HANDLER));
                ffi::lua_rawgeti_(l, ffi::LUA_REGISTRYINDEX, job.func);
                0
            }
            Kind::Function => {
                ffi::lua_pushvalue(l, ffi::lua_upvalueindex(HANDLER));
                ffi::lua_rawgeti_(l, ffi::LUA_REGISTRYINDEX, job.func);
                push_string_array(l, job.keys);
                push_string_array(l, job.args);
                2
            }
        };
        if ffi::lua_pcall(l, nargs, 1, 1) == 0 {
            let resp: Protocol = (*job.state).resp;
            write_value(l, 2, resp, &mut *job.out, 0);
        } else {
            ffi::lua_rawseti_(l, ffi::LUA_REGISTRYINDEX, job.err_slot);
            job.failed = true;
        }
        0
    }
}
