//! Conversions between RESP replies and Lua values, both ways, as Redis
//! 7.0's `redisProtocolToLuaType` and `luaReplyToRedisReply` do them.
//!
//! Reply → Lua (what `redis.call` returns), from the bytes the host wrote:
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
//! Lua → reply (the script's return value), written to the client's
//! [`ReplyBuf`]: strings are bulk strings; numbers integers (truncated as
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

use mlua::{Lua, Table, Value};
use resp::{Protocol, ReplyBuf};

use crate::num::c_trunc_i64;

/// Deepest table nesting converted to a reply (Redis stops when the Lua
/// C stack can not grow; its limit is of the same order).
pub const MAX_DEPTH: usize = 1000;

/// A malformed reply from the host (a host bug, not a script error).
#[derive(Debug)]
pub struct BadReply;

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn line(&mut self) -> Result<&'a [u8], BadReply> {
        let rest = &self.buf[self.pos..];
        let i = rest.windows(2).position(|w| w == b"\r\n").ok_or(BadReply)?;
        self.pos += i + 2;
        Ok(&rest[..i])
    }

    fn blob(&mut self, n: usize) -> Result<&'a [u8], BadReply> {
        let end = self.pos.checked_add(n).ok_or(BadReply)?;
        if end + 2 > self.buf.len() {
            return Err(BadReply);
        }
        let b = &self.buf[self.pos..end];
        self.pos = end + 2;
        Ok(b)
    }
}

fn int_of(s: &[u8]) -> Result<i64, BadReply> {
    std::str::from_utf8(s)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or(BadReply)
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

fn wrap(lua: &Lua, field: &str, v: impl mlua::IntoLua) -> mlua::Result<Value> {
    let t = lua.create_table_with_capacity(0, 1)?;
    t.raw_set(field, v)?;
    Ok(Value::Table(t))
}

fn read_value(lua: &Lua, r: &mut Reader<'_>, depth: usize) -> Result<Value, ReadErr> {
    if depth > 10_000 {
        return Err(ReadErr::Bad);
    }
    let kind = *r.buf.get(r.pos).ok_or(ReadErr::Bad)?;
    r.pos += 1;
    let l = r.line()?;
    Ok(match kind {
        b':' => Value::Number(int_of(l)? as f64),
        b'+' => wrap(lua, "ok", lua.create_string(l)?)?,
        b'-' => wrap(lua, "err", lua.create_string(l)?)?,
        b'$' | b'!' | b'=' => {
            let n = int_of(l)?;
            if n < 0 {
                Value::Boolean(false)
            } else {
                let data = r.blob(n as usize)?;
                match kind {
                    b'$' => Value::String(lua.create_string(data)?),
                    b'!' => wrap(lua, "err", lua.create_string(data)?)?,
                    _ => {
                        let (fmt, s) = if data.len() >= 4 {
                            data.split_at(4)
                        } else {
                            (data, &b""[..])
                        };
                        let fmt = &fmt[..fmt.len().min(3)];
                        let inner = lua.create_table_with_capacity(0, 2)?;
                        inner.raw_set("format", lua.create_string(fmt)?)?;
                        inner.raw_set("string", lua.create_string(s)?)?;
                        wrap(lua, "verbatim_string", inner)?
                    }
                }
            }
        }
        b'*' | b'>' => {
            let n = int_of(l)?;
            if n < 0 {
                Value::Boolean(false)
            } else {
                let t = lua.create_table_with_capacity((n as usize).min(1 << 16), 0)?;
                for i in 1..=n {
                    let v = read_value(lua, r, depth + 1)?;
                    t.raw_set(i, v)?;
                }
                Value::Table(t)
            }
        }
        b'%' => {
            let n = int_of(l)?.max(0);
            let t = lua.create_table_with_capacity(0, (n as usize).min(1 << 16))?;
            for _ in 0..n {
                let k = read_value(lua, r, depth + 1)?;
                let v = read_value(lua, r, depth + 1)?;
                if !k.is_nil() {
                    t.raw_set(k, v)?;
                }
            }
            wrap(lua, "map", t)?
        }
        b'~' => {
            let n = int_of(l)?.max(0);
            let t = lua.create_table_with_capacity(0, (n as usize).min(1 << 16))?;
            for _ in 0..n {
                let k = read_value(lua, r, depth + 1)?;
                if !k.is_nil() {
                    t.raw_set(k, true)?;
                }
            }
            wrap(lua, "set", t)?
        }
        b'|' => {
            let n = int_of(l)?.max(0);
            for _ in 0..2 * n {
                read_value(lua, r, depth + 1)?;
            }
            read_value(lua, r, depth + 1)?
        }
        b'_' => Value::Nil,
        b'#' => Value::Boolean(l == b"t"),
        b',' => wrap(lua, "double", double_of(l))?,
        b'(' => wrap(lua, "big_number", lua.create_string(l)?)?,
        _ => return Err(ReadErr::Bad),
    })
}

enum ReadErr {
    Bad,
    Lua(mlua::Error),
}

impl From<BadReply> for ReadErr {
    fn from(_: BadReply) -> Self {
        ReadErr::Bad
    }
}

impl From<mlua::Error> for ReadErr {
    fn from(e: mlua::Error) -> Self {
        ReadErr::Lua(e)
    }
}

/// Converts one reply (the whole of `bytes`) to a Lua value. Returns the
/// value and whether the reply was an error (`{err=...}`).
pub fn reply_to_lua(lua: &Lua, bytes: &[u8]) -> mlua::Result<(Value, bool)> {
    let mut r = Reader { buf: bytes, pos: 0 };
    let is_err = matches!(bytes.first(), Some(b'-' | b'!'));
    let v = read_value(lua, &mut r, 0).map_err(|e| match e {
        ReadErr::Bad => {
            mlua::Error::RuntimeError("malformed reply from the command runtime".into())
        }
        ReadErr::Lua(e) => e,
    })?;
    Ok((v, is_err))
}

/// Replaces CR and LF by spaces (status and error lines).
pub fn one_line(s: &[u8]) -> Vec<u8> {
    s.iter()
        .map(|&c| if c == b'\r' || c == b'\n' { b' ' } else { c })
        .collect()
}

/// Writes the script's return value `v` as a reply to `out` (the client's
/// protocol). `script_resp` is the protocol the script selected with
/// `redis.setresp`, which decides how booleans are returned.
pub fn lua_to_reply(v: &Value, script_resp: Protocol, out: &mut ReplyBuf) {
    write_value(v, script_resp, out, 0);
}

fn raw_field(t: &Table, name: &str) -> Value {
    t.raw_get::<Value>(name).unwrap_or(Value::Nil)
}

fn write_value(v: &Value, script_resp: Protocol, out: &mut ReplyBuf, depth: usize) {
    match v {
        Value::String(s) => out.bulk(&*s.as_bytes()),
        Value::Boolean(b) => {
            if script_resp == Protocol::Resp2 {
                if *b {
                    out.int(1);
                } else {
                    out.null();
                }
            } else {
                out.boolean(*b);
            }
        }
        Value::Integer(n) => out.int(*n),
        Value::Number(x) => out.int(c_trunc_i64(*x)),
        Value::Table(t) => {
            if depth >= MAX_DEPTH {
                out.error("ERR reached lua stack limit");
                return;
            }
            write_table(t, script_resp, out, depth);
        }
        _ => out.null(),
    }
}

fn write_table(t: &Table, script_resp: Protocol, out: &mut ReplyBuf, depth: usize) {
    if let Value::String(e) = raw_field(t, "err") {
        // addReplyErrorFormat("-%s", err): written as is, one line.
        let mut text = one_line(&e.as_bytes());
        out.vec_mut().push(b'-');
        out.vec_mut().append(&mut text);
        out.vec_mut().extend_from_slice(b"\r\n");
        return;
    }
    if let Value::String(s) = raw_field(t, "ok") {
        out.simple(&*s.as_bytes());
        return;
    }
    match raw_field(t, "double") {
        Value::Number(x) => {
            out.double(x);
            return;
        }
        Value::Integer(n) => {
            out.double(n as f64);
            return;
        }
        _ => {}
    }
    if let Value::String(s) = raw_field(t, "big_number") {
        out.big_number(&one_line(&s.as_bytes()));
        return;
    }
    if let Value::Table(vt) = raw_field(t, "verbatim_string") {
        if let (Value::String(f), Value::String(s)) =
            (raw_field(&vt, "format"), raw_field(&vt, "string"))
        {
            let fb = f.as_bytes();
            let mut fmt = [b'\0'; 3];
            for (d, s) in fmt.iter_mut().zip(fb.iter()) {
                *d = *s;
            }
            out.verbatim(&fmt, &s.as_bytes());
            return;
        }
    }
    if let Value::Table(m) = raw_field(t, "map") {
        let pairs: Vec<(Value, Value)> = m.pairs::<Value, Value>().filter_map(Result::ok).collect();
        out.map_len(pairs.len());
        for (k, v) in &pairs {
            write_value(k, script_resp, out, depth + 1);
            write_value(v, script_resp, out, depth + 1);
        }
        return;
    }
    if let Value::Table(s) = raw_field(t, "set") {
        let keys: Vec<Value> = s
            .pairs::<Value, Value>()
            .filter_map(|r| r.ok().map(|(k, _)| k))
            .collect();
        out.set_len(keys.len());
        for k in &keys {
            write_value(k, script_resp, out, depth + 1);
        }
        return;
    }
    let mut n = 0usize;
    while !t.raw_get::<Value>(n + 1).unwrap_or(Value::Nil).is_nil() {
        n += 1;
    }
    out.array_len(n);
    for i in 1..=n {
        let v = t.raw_get::<Value>(i).unwrap_or(Value::Nil);
        write_value(&v, script_resp, out, depth + 1);
    }
}
