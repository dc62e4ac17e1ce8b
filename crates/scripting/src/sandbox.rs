//! One sandboxed Lua 5.1 VM as Redis 7.0 sets it up.
//!
//! Loaded libraries: base, `table`, `string`, `math`, `coroutine` (part of
//! 5.1's base) and this crate's `bit`, `cjson`, `struct`, `cmsgpack`, plus
//! `redis`. Not reachable: `os`, `io`, `debug`, `package`/`require`,
//! `loadfile`, `dofile`, `print`, `module`, `setfenv`/`getfenv`, `newproxy`
//! (checked against redis-server 7.0.15: the globals are exactly the 35
//! names `pairs(_G)` lists there).
//!
//! Read-only tables. Redis 7.0 patches its Lua to mark tables read-only;
//! this crate runs the unmodified Lua 5.1.5 that `mlua` vendors, so it
//! gets the same behaviour with proxies (`sandbox.lua`):
//!
//! * The state's global table `P` is emptied and given the metatable
//!   `{__index = real, __newindex = error}`; `real` holds the globals and
//!   has `__index` raising `Script attempted to access nonexistent global
//!   variable 'x'`. Assigning any global raises `Attempt to modify a
//!   readonly table`, as in Redis; the same for every library table
//!   (`redis`, `string`, `math`, `table`, `coroutine`, `bit`, `cjson`,
//!   `struct`, `cmsgpack`), which are proxies too, and for the string
//!   metatable as `getmetatable('')` shows it.
//! * The functions that would see through a proxy are replaced: `rawget`,
//!   `rawset`, `next`, `pairs`, `getmetatable`, `setmetatable` act on the
//!   protected table (and refuse changes) with Lua's own argument errors.
//! * `loadstring` and `load` are replaced so they parse every chunk as
//!   text, as Redis's Lua (which has no undump) does: precompiled bytecode,
//!   the way out of any Lua sandbox, never loads (see [`text_chunk`]).
//! * `pcall` is Redis 7.0's own (an error table gives its `err` text), and
//!   `pcall`, `xpcall` and `coroutine.resume` turn an error raised by Rust
//!   code into the string or `{err=...}` table Redis would raise (see
//!   [`crate::error`]).
//!
//! The replacements are C functions (`builtins.rs`), as Lua's own are, so
//! stack levels, tail calls and the names in argument errors come out as
//! in Redis.
//!
//! Known differences, all outside documented script behaviour:
//! `table.insert(redis, x)` (and `rawseti`-based `table` functions) on a
//! protected table stores into the proxy's array part instead of raising;
//! `#_G`/`unpack` over a protected table see the (empty) proxy, which
//! gives the same result as Redis since library tables have no array part;
//! `cjson.encode` and `cmsgpack.pack` of a library table (`cjson:encode()`)
//! see the empty proxy where Redis refuses its functions.
//!
//! Invariant: nothing but the `real` table, the proxies' metatables and
//! Rust code can change a global; scripts of one run cannot leave state
//! for the next except in tables they reach through `KEYS`/`ARGV` (which
//! are replaced each run) — exactly Redis's guarantee.

use mlua::{Function, Lua, LuaOptions, MultiValue, StdLib, Table, Value};

use crate::error::{find_raise, plain_text, to_lua_error_value, Raise};
use crate::exec::Entry;
use crate::run::{StateBox, StatePtr};

const SANDBOX_LUA: &str = include_str!("sandbox.lua");

/// Chunk name of the sandbox's own Lua code; frames from it are skipped
/// when an error's position is looked up.
pub(crate) const INTERNAL_SOURCE: &str = "=petrel";

/// Base-library globals kept as they are (the others are wrapped or are
/// libraries).
const BASE_ALLOW: [&str; 12] = [
    "_VERSION",
    "assert",
    "collectgarbage",
    "error",
    "gcinfo",
    "ipairs",
    "load",
    "loadstring",
    "select",
    "tonumber",
    "tostring",
    "type",
];
const BASE_ALLOW_2: [&str; 2] = ["unpack", "rawequal"];

/// `src` as Redis's Lua loads every chunk: parsed as text. A chunk that
/// starts with ESC (Lua's mark of a precompiled chunk) gets a leading
/// blank, so Lua 5.1's loader parses it (and reports Redis's syntax error)
/// instead of undumping bytecode, which no sandbox survives; no line
/// number changes. `loadstring` and `load` inside scripts do the same
/// (`sandbox.lua`).
pub(crate) fn text_chunk(src: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if src.first() == Some(&0x1b) {
        let mut v = Vec::with_capacity(src.len() + 1);
        v.push(b' ');
        v.extend_from_slice(src);
        std::borrow::Cow::Owned(v)
    } else {
        std::borrow::Cow::Borrowed(src)
    }
}

/// Which VM: EVAL scripts, or function libraries (whose load-time globals
/// are restricted and whose globals lack `__redis__err__handler`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum VmKind {
    Eval,
    Functions,
}

/// Handles into a sandboxed VM.
pub(crate) struct Vm {
    pub lua: Lua,
    /// The table behind the read-only globals.
    pub real: Table,
    /// The metatable of the global table (its `__index` is swapped to
    /// `load_real` while a function library loads).
    pub pmt: Table,
    /// Load-time globals of the functions VM.
    pub load_real: Option<Table>,
    /// The unwrapped `xpcall`.
    pub xpcall: Function,
    /// The error handler (Redis's `__redis__err__handler`).
    pub handler: Function,
    /// Runs scripts and functions on the raw stack.
    pub entry: Entry,
    /// The run state; declared last so it is freed after the Lua state
    /// is closed (see [`StateBox`]).
    pub state: StateBox,
}

/// Where an error happened: the first frame that is neither a C function
/// nor sandbox code, as Redis's error handler picks it.
fn error_position(lua: &Lua) -> Option<(String, i32)> {
    for level in 1..32 {
        let d = lua.inspect_stack(level)?;
        let src = d.source();
        if src.what == "C" {
            continue;
        }
        let source = src.source.map(|s| s.into_owned()).unwrap_or_default();
        if source.starts_with(INTERNAL_SOURCE) || source == "=(tail call)" {
            continue;
        }
        return Some((source, d.curr_line()));
    }
    None
}

/// The error handler: turns any error value into Redis's error table
/// `{err = "CODE msg", source = "@user_script", line = n}`.
fn handle_error(lua: &Lua, err: Value) -> mlua::Result<Value> {
    let t = match err {
        Value::Table(t) => t,
        Value::Error(e) => {
            let text = match find_raise(&e) {
                Some(Raise::Table(s)) => s.clone(),
                Some(Raise::Str(s)) => format!("ERR {s}"),
                None => format!("ERR {}", plain_text(&e)),
            };
            let t = lua.create_table_with_capacity(0, 3)?;
            t.raw_set("err", text)?;
            t
        }
        other => {
            let text = match &other {
                Value::String(s) => {
                    let mut v = b"ERR ".to_vec();
                    v.extend_from_slice(&s.as_bytes());
                    lua.create_string(v)?
                }
                Value::Nil => lua.create_string("ERR nil")?,
                Value::Boolean(b) => lua.create_string(format!("ERR {b}"))?,
                Value::Number(x) => {
                    lua.create_string(format!("ERR {}", crate::num::fmt_g(*x, 14)))?
                }
                v => lua.create_string(format!("ERR {}: {:p}", v.type_name(), v.to_pointer()))?,
            };
            let t = lua.create_table_with_capacity(0, 3)?;
            t.raw_set("err", text)?;
            t
        }
    };
    if let Some((source, line)) = error_position(lua) {
        // A protected table (error(redis)) cannot take the fields.
        let _ = t.raw_set("source", source);
        let _ = t.raw_set("line", line);
    }
    Ok(Value::Table(t))
}

impl Vm {
    /// Creates a VM with the sandbox applied. `redis` is the runtime
    /// `redis` table; `load_redis` the load-time one (functions VM).
    pub fn new(
        kind: VmKind,
        build_redis: impl FnOnce(&Lua) -> mlua::Result<(Table, Option<Table>)>,
    ) -> mlua::Result<Vm> {
        let lua = Lua::new_with(
            StdLib::TABLE | StdLib::STRING | StdLib::MATH,
            LuaOptions::new(),
        )?;
        let state = StateBox::new();
        lua.set_app_data(StatePtr(state.ptr()));
        let libs = lua.create_table()?;
        libs.raw_set("bit", crate::libs::bit::open(&lua)?)?;
        libs.raw_set("cjson", crate::libs::cjson::open(&lua)?)?;
        libs.raw_set("struct", crate::libs::structlib::open(&lua)?)?;
        libs.raw_set("cmsgpack", crate::libs::cmsgpack::open(&lua)?)?;
        crate::libs::mathrand::install(&lua)?;
        let (redis, load_redis) = build_redis(&lua)?;
        libs.raw_set("redis", redis)?;
        if let Some(lr) = load_redis {
            libs.raw_set("load_redis", lr)?;
        }
        libs.raw_set(
            "__conv",
            lua.create_function(|lua, v: Value| to_lua_error_value(lua, v))?,
        )?;
        libs.raw_set(
            "__builtin",
            lua.create_function(|lua, (name, ups): (mlua::String, MultiValue)| {
                crate::builtins::closure(lua, &name.to_str()?, ups)
            })?,
        )?;
        let handler = lua.create_function(handle_error)?;
        libs.raw_set("__handler", handler.clone())?;
        libs.raw_set("__err_handler_global", kind == VmKind::Eval)?;
        let allow =
            lua.create_sequence_from(BASE_ALLOW.iter().chain(BASE_ALLOW_2.iter()).copied())?;
        let setup: Table =
            lua.load(SANDBOX_LUA)
                .set_name(INTERNAL_SOURCE)
                .call((lua.globals(), libs, allow))?;
        let real: Table = setup.raw_get("real")?;
        let entry = Entry::new(
            &lua,
            &lua.create_registry_value(real.clone())?,
            &lua.create_registry_value(handler.clone())?,
        )?;
        Ok(Vm {
            entry,
            state,
            real,
            pmt: setup.raw_get("pmt")?,
            load_real: setup.raw_get("load_real")?,
            xpcall: setup.raw_get("xpcall")?,
            handler,
            lua,
        })
    }
}
