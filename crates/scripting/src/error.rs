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

/// `luaL_where(L, 1)`: `source:line: ` of the Lua function that called the
/// running Rust callback, or nothing when that caller is a C function.
pub fn where_prefix(lua: &Lua) -> String {
    match lua.inspect_stack(1) {
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

/// `luaL_argerror`: `bad argument #n to 'fname' (msg)`.
pub fn arg_error(lua: &Lua, n: usize, fname: &str, msg: impl fmt::Display) -> mlua::Error {
    lua_error(lua, format!("bad argument #{n} to '{fname}' ({msg})"))
}

/// `luaL_typerror`: `bad argument #n to 'fname' (T expected, got U)`.
pub fn type_error(lua: &Lua, n: usize, fname: &str, expected: &str, got: &Value) -> mlua::Error {
    let got = match got {
        Value::Nil => "nil",
        v => v.type_name(),
    };
    arg_error(lua, n, fname, format!("{expected} expected, got {got}"))
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
