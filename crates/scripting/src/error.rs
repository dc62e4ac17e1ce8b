//! How errors raised by Rust code reach Lua with the values Redis's C code
//! would have raised.
//!
//! A Rust callback cannot raise an arbitrary Lua value through mlua: its
//! `Err` becomes an mlua error object (a userdata). Every callback of this
//! crate therefore returns one of two [`Raise`] forms, and the places that
//! can observe an error value — the script's error handler, and the
//! sandbox's `pcall`, `xpcall` and `coroutine.resume` wrappers — turn the
//! userdata back into what Redis 7.0 shows:
//!
//! * [`Raise::Str`]: a string error (`luaL_error`), message already
//!   prefixed with the caller's position (`user_script:1: `) by
//!   [`lua_error`], exactly as `luaL_where(L, 1)` would.
//! * [`Raise::Table`]: an error table `{err = "CODE message"}` (Redis's
//!   `luaPushError` + `luaError`, and errors from `redis.call`).

use std::fmt;

use mlua::{Lua, Value};

/// An error raised by a Rust callback; see the module documentation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Raise {
    /// A string error value.
    Str(String),
    /// An error table `{err = text}`.
    Table(String),
}

impl fmt::Display for Raise {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Raise::Str(s) | Raise::Table(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for Raise {}

/// The stack level of the function that called the running Rust callback:
/// 1, or 2 behind an exact-number trampoline (`libs::exact`), which is
/// itself a C function between the two.
fn caller_level(lua: &Lua) -> usize {
    if crate::libs::exact::in_trampoline()
        && lua.inspect_stack(1).is_some_and(|d| d.source().what == "C")
    {
        2
    } else {
        1
    }
}

/// `luaL_where(L, 1)`: `source:line: ` of the Lua function that called the
/// running Rust callback, or nothing when that caller is a C function.
pub fn where_prefix(lua: &Lua) -> String {
    match lua.inspect_stack(caller_level(lua)) {
        Some(d) => {
            let line = d.curr_line();
            if line > 0 {
                let src = d.source();
                format!("{}:{}: ", src.short_src.unwrap_or_default(), line)
            } else {
                String::new()
            }
        }
        None => String::new(),
    }
}

/// A `luaL_error`-style string error raised from a Rust callback.
pub fn lua_error(lua: &Lua, msg: impl fmt::Display) -> mlua::Error {
    mlua::Error::external(Raise::Str(format!("{}{}", where_prefix(lua), msg)))
}

/// `luaL_argerror`: `bad argument #n to 'name' (msg)`, where the name is
/// the one the caller used (`?` when a C function such as `pcall` made the
/// call); a method call (`t:f(x)`) does not count `self`, and an error in
/// `self` itself reads `calling 'name' on bad self (msg)`.
pub fn arg_error(lua: &Lua, n: usize, msg: impl fmt::Display) -> mlua::Error {
    let Some(d) = lua.inspect_stack(caller_level(lua) - 1) else {
        return lua_error(lua, format!("bad argument #{n} ({msg})"));
    };
    let names = d.names();
    let name = names.name.unwrap_or(std::borrow::Cow::Borrowed("?"));
    let mut n = n;
    if names.name_what == Some("method") {
        if n <= 1 {
            return lua_error(lua, format!("calling '{name}' on bad self ({msg})"));
        }
        n -= 1;
    }
    lua_error(lua, format!("bad argument #{n} to '{name}' ({msg})"))
}

/// `luaL_typerror`: `bad argument #n to 'name' (T expected, got U)`.
pub fn type_error(lua: &Lua, n: usize, expected: &str, got: &Value) -> mlua::Error {
    arg_error(
        lua,
        n,
        format!("{expected} expected, got {}", lua_typename(got)),
    )
}

/// `luaL_typerror` for argument `n` (from 1) of `args`: `got no value`
/// when there is no such argument, as `luaL_checktype` says.
pub fn arg_type_error(lua: &Lua, args: &mlua::MultiValue, n: usize, expected: &str) -> mlua::Error {
    match args.get(n - 1) {
        Some(v) => type_error(lua, n, expected, v),
        None => arg_error(lua, n, format!("{expected} expected, got no value")),
    }
}

/// Lua's `luaL_typename` of a value (mlua's own names differ for numbers,
/// light userdata and error objects).
pub fn lua_typename(v: &Value) -> &'static str {
    match v {
        Value::Nil => "nil",
        Value::Boolean(_) => "boolean",
        Value::Integer(_) | Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Table(_) => "table",
        Value::Function(_) => "function",
        Value::Thread(_) => "thread",
        _ => "userdata",
    }
}

/// An error table `{err = text}` raised from a Rust callback.
pub fn table_error(text: impl Into<String>) -> mlua::Error {
    mlua::Error::external(Raise::Table(text.into()))
}

/// Finds the [`Raise`] inside an mlua error (through callback wrappers).
pub fn find_raise(e: &mlua::Error) -> Option<&Raise> {
    match e {
        mlua::Error::CallbackError { cause, .. } => find_raise(cause),
        mlua::Error::ExternalError(x) => x.downcast_ref::<Raise>(),
        mlua::Error::WithContext { cause, .. } => find_raise(cause),
        _ => None,
    }
}

/// The text of an mlua error that carries no [`Raise`] (conversion
/// failures, memory errors): the innermost cause's message.
pub fn plain_text(e: &mlua::Error) -> String {
    match e {
        mlua::Error::CallbackError { cause, .. } => plain_text(cause),
        mlua::Error::WithContext { cause, .. } => plain_text(cause),
        mlua::Error::RuntimeError(s) => s.clone(),
        mlua::Error::SyntaxError { message, .. } => message.clone(),
        mlua::Error::MemoryError(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The Lua value an error object stands for: an mlua error object becomes
/// the string or `{err=...}` table Redis would have raised; other values
/// are returned unchanged.
pub fn to_lua_error_value(lua: &Lua, v: Value) -> mlua::Result<Value> {
    let Value::Error(e) = v else {
        return Ok(v);
    };
    match find_raise(&e) {
        Some(Raise::Str(s)) => Ok(Value::String(lua.create_string(s)?)),
        Some(Raise::Table(s)) => {
            let t = lua.create_table_with_capacity(0, 1)?;
            t.raw_set("err", lua.create_string(s)?)?;
            Ok(Value::Table(t))
        }
        None => Ok(Value::String(lua.create_string(plain_text(&e))?)),
    }
}

/// Redis's `luaPushErrorBuff` rules for the text of an error table:
/// `-CODE msg` keeps its code, `-msg` (no space) and `msg` get `ERR`;
/// trailing CR/LF are trimmed.
pub fn error_table_text(raw: &[u8]) -> Vec<u8> {
    let (code, msg): (&[u8], &[u8]) = if let Some(rest) = raw.strip_prefix(b"-") {
        match rest.iter().position(|&c| c == b' ') {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (b"ERR", rest),
        }
    } else {
        (b"ERR", raw)
    };
    let mut msg = msg;
    while let Some((&last, head)) = msg.split_last() {
        if last == b'\r' || last == b'\n' {
            msg = head;
        } else {
            break;
        }
    }
    let mut out = Vec::with_capacity(code.len() + 1 + msg.len());
    out.extend_from_slice(code);
    out.push(b' ');
    out.extend_from_slice(msg);
    out
}
