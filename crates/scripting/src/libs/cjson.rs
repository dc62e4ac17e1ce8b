//! `cjson`: lua-cjson 2.1.0's API and behaviour as Redis embeds it.
//!
//! Encoding: `nil` and `cjson.null` → `null`; numbers `%.14g` (precision
//! settable 1..14), NaN/Inf refused; strings escaped as lua-cjson does
//! (`/` → `\/`, controls and DEL → `\u` with four hex digits or `\n`-style); a table whose
//! keys are all positive integers is an array up to its largest key (holes
//! → `null`; "excessively sparse" past ratio 2 and 10 elements is an
//! error), an empty table is `{}`, other tables are objects with string or
//! number keys in Lua's `next` order; nesting past `encode_max_depth`
//! (1000) is an error. Decoding: JSON into tables, `null` → `cjson.null`,
//! numbers through `strtod` rules (hex, `inf`, `nan` accepted, as
//! `decode_invalid_numbers` is on by default), errors read `Expected <what>
//! but found <token> at character <n>` with lua-cjson's token names.
//!
//! Invariant: settings are per `cjson` table (`cjson.new()` makes a fresh
//! one) and persist across scripts of one VM, as in Redis.

use std::sync::{Arc, Mutex};

use mlua::{LightUserData, Lua, MultiValue, Table, Value};

use crate::error::{arg_error, lua_error, type_error};
use crate::num::write_g;

#[derive(Clone, Debug)]
struct Config {
    precision: usize,
    encode_max_depth: usize,
    decode_max_depth: usize,
    sparse_convert: bool,
    sparse_ratio: usize,
    sparse_safe: usize,
    encode_invalid: u8, // 0 off, 1 on, 2 null
    decode_invalid: bool,
    keep_buffer: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            precision: 14,
            encode_max_depth: 1000,
            decode_max_depth: 1000,
            sparse_convert: false,
            sparse_ratio: 2,
            sparse_safe: 10,
            encode_invalid: 0,
            decode_invalid: true,
            keep_buffer: true,
        }
    }
}

type Cfg = Arc<Mutex<Config>>;

fn cfg(c: &Cfg) -> Config {
    c.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// `cjson.null`.
pub fn null() -> Value {
    Value::LightUserData(LightUserData(std::ptr::null_mut()))
}

fn is_null(v: &Value) -> bool {
    matches!(v, Value::LightUserData(p) if p.0.is_null())
}

fn escape_into(out: &mut Vec<u8>, s: &[u8]) {
    out.push(b'"');
    for &c in s {
        match c {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'/' => out.extend_from_slice(b"\\/"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            c if c < 0x20 || c == 0x7f => {
                out.extend_from_slice(format!("\\u{c:04x}").as_bytes());
            }
            c => out.push(c),
        }
    }
    out.push(b'"');
}

struct Enc<'a> {
    lua: &'a Lua,
    cfg: Config,
    out: Vec<u8>,
}

impl Enc<'_> {
    fn fail(&self, v: &Value, reason: &str) -> mlua::Error {
        lua_error(
            self.lua,
            format!(
                "Cannot serialise {}: {}",
                crate::error::lua_typename(v),
                reason
            ),
        )
    }

    fn number(&mut self, v: &Value, x: f64) -> mlua::Result<()> {
        if !x.is_finite() {
            match self.cfg.encode_invalid {
                0 => return Err(self.fail(v, "must not be NaN or Inf")),
                2 => {
                    self.out.extend_from_slice(b"null");
                    return Ok(());
                }
                _ => {}
            }
        }
        write_g(&mut self.out, x, self.cfg.precision);
        Ok(())
    }

    fn value(&mut self, v: &Value, depth: usize) -> mlua::Result<()> {
        match v {
            Value::Nil => self.out.extend_from_slice(b"null"),
            v if is_null(v) => self.out.extend_from_slice(b"null"),
            Value::Boolean(b) => self
                .out
                .extend_from_slice(if *b { b"true" } else { b"false" }),
            Value::Integer(n) => self.number(v, *n as f64)?,
            Value::Number(x) => self.number(v, *x)?,
            Value::String(s) => escape_into(&mut self.out, &s.as_bytes()),
            Value::Table(t) => self.table(t, depth + 1)?,
            other => return Err(self.fail(other, "type not supported")),
        }
        Ok(())
    }

    /// lua-cjson's array test: Some(len) for arrays, None for objects.
    fn array_len(&self, t: &Table) -> mlua::Result<Option<usize>> {
        let mut max = 0usize;
        let mut items = 0usize;
        for pair in t.clone().pairs::<Value, Value>() {
            let (k, _) = pair?;
            let x = match k {
                Value::Integer(n) => n as f64,
                Value::Number(x) => x,
                _ => return Ok(None),
            };
            if x < 1.0 || x.floor() != x {
                return Ok(None);
            }
            max = max.max(x as usize);
            items += 1;
        }
        if self.cfg.sparse_ratio > 0
            && max > items * self.cfg.sparse_ratio
            && max > self.cfg.sparse_safe
        {
            if !self.cfg.sparse_convert {
                return Err(lua_error(
                    self.lua,
                    "Cannot serialise table: excessively sparse array",
                ));
            }
            return Ok(None);
        }
        Ok(Some(max))
    }

    fn table(&mut self, t: &Table, depth: usize) -> mlua::Result<()> {
        if depth > self.cfg.encode_max_depth {
            return Err(lua_error(
                self.lua,
                format!("Cannot serialise, excessive nesting ({depth})"),
            ));
        }
        match self.array_len(t)? {
            Some(n) if n > 0 => {
                self.out.push(b'[');
                for i in 1..=n {
                    if i > 1 {
                        self.out.push(b',');
                    }
                    let v = super::exact::exact_in(t, i, t.raw_get(i)?);
                    self.value(&v, depth)?;
                }
                self.out.push(b']');
            }
            _ => {
                self.out.push(b'{');
                let mut first = true;
                for pair in t.clone().pairs::<Value, Value>() {
                    let (k, v) = pair?;
                    let v = super::exact::exact_in(t, k.clone(), v);
                    if !first {
                        self.out.push(b',');
                    }
                    first = false;
                    match &k {
                        Value::String(s) => escape_into(&mut self.out, &s.as_bytes()),
                        Value::Integer(_) | Value::Number(_) => {
                            let x = match k {
                                Value::Integer(n) => n as f64,
                                Value::Number(x) => x,
                                _ => 0.0,
                            };
                            self.out.push(b'"');
                            self.number(&k, x)?;
                            self.out.push(b'"');
                        }
                        other => {
                            return Err(self.fail(other, "table key must be a number or string"))
                        }
                    }
                    self.out.push(b':');
                    self.value(&v, depth)?;
                }
                self.out.push(b'}');
            }
        }
        Ok(())
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    ObjBegin,
    ObjEnd,
    ArrBegin,
    ArrEnd,
    Str(Vec<u8>),
    Num(f64),
    Bool(bool),
    Null,
    Colon,
    Comma,
    End,
    Error(&'static str),
}

impl Tok {
    fn name(&self) -> &'static str {
        match self {
            Tok::ObjBegin => "T_OBJ_BEGIN",
            Tok::ObjEnd => "T_OBJ_END",
            Tok::ArrBegin => "T_ARR_BEGIN",
            Tok::ArrEnd => "T_ARR_END",
            Tok::Str(_) => "T_STRING",
            Tok::Num(_) => "T_NUMBER",
            Tok::Bool(_) => "T_BOOLEAN",
            Tok::Null => "T_NULL",
            Tok::Colon => "T_COLON",
            Tok::Comma => "T_COMMA",
            Tok::End => "T_END",
            Tok::Error(s) => s,
        }
    }
}

/// The longest prefix of `s` that C's `strtod` accepts; (value, length).
pub fn strtod_prefix(s: &[u8]) -> Option<(f64, usize)> {
    let mut i = 0;
    let neg = match s.first() {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let rest = &s[i..];
    let lower: Vec<u8> = rest
        .iter()
        .take(8)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    let sign = if neg { -1.0 } else { 1.0 };
    if lower.starts_with(b"infinity") {
        return Some((sign * f64::INFINITY, i + 8));
    }
    if lower.starts_with(b"inf") {
        return Some((sign * f64::INFINITY, i + 3));
    }
    if lower.starts_with(b"nan") {
        return Some((f64::NAN, i + 3));
    }
    if lower.starts_with(b"0x") {
        let digits = rest[2..]
            .iter()
            .take_while(|c| c.is_ascii_hexdigit())
            .count();
        if digits > 0 {
            let mut v = 0f64;
            for &c in &rest[2..2 + digits] {
                v = v * 16.0 + f64::from((c as char).to_digit(16).unwrap_or(0));
            }
            return Some((sign * v, i + 2 + digits));
        }
    }
    let mut j = 0;
    let int = rest.iter().take_while(|c| c.is_ascii_digit()).count();
    j += int;
    let mut frac = 0;
    if rest.get(j) == Some(&b'.') {
        frac = rest[j + 1..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if int + frac > 0 {
            j += 1 + frac;
        }
    }
    if int + frac == 0 {
        return None;
    }
    if matches!(rest.get(j), Some(b'e' | b'E')) {
        let mut k = j + 1;
        if matches!(rest.get(k), Some(b'+' | b'-')) {
            k += 1;
        }
        let ed = rest[k..].iter().take_while(|c| c.is_ascii_digit()).count();
        if ed > 0 {
            j = k + ed;
        }
    }
    let text = std::str::from_utf8(&s[..i + j]).ok()?;
    Some((text.parse::<f64>().unwrap_or(0.0), i + j))
}

struct Dec<'a> {
    s: &'a [u8],
    pos: usize,
    invalid_numbers: bool,
}

impl Dec<'_> {
    /// Next token and its 0-based index.
    fn next(&mut self) -> (Tok, usize) {
        while self.pos < self.s.len() && matches!(self.s[self.pos], b' ' | b'\t' | b'\n' | b'\r') {
            self.pos += 1;
        }
        let start = self.pos;
        let Some(&c) = self.s.get(self.pos) else {
            return (Tok::End, start);
        };
        let simple = match c {
            b'{' => Some(Tok::ObjBegin),
            b'}' => Some(Tok::ObjEnd),
            b'[' => Some(Tok::ArrBegin),
            b']' => Some(Tok::ArrEnd),
            b':' => Some(Tok::Colon),
            b',' => Some(Tok::Comma),
            _ => None,
        };
        if let Some(t) = simple {
            self.pos += 1;
            return (t, start);
        }
        let rest = &self.s[self.pos..];
        match c {
            b'"' => self.string(),
            b'-' | b'0'..=b'9' => self.number(start),
            b't' if rest.starts_with(b"true") => {
                self.pos += 4;
                (Tok::Bool(true), start)
            }
            b'f' if rest.starts_with(b"false") => {
                self.pos += 5;
                (Tok::Bool(false), start)
            }
            b'n' if rest.starts_with(b"null") => {
                self.pos += 4;
                (Tok::Null, start)
            }
            b'i' | b'I' | b'n' | b'N' if self.invalid_numbers => {
                let l: Vec<u8> = rest
                    .iter()
                    .take(3)
                    .map(|c| c.to_ascii_lowercase())
                    .collect();
                if l == b"inf" || l == b"nan" {
                    self.number(start)
                } else {
                    (Tok::Error("invalid token"), start)
                }
            }
            _ => (Tok::Error("invalid token"), start),
        }
    }

    fn number(&mut self, start: usize) -> (Tok, usize) {
        let rest = &self.s[self.pos..];
        if !self.invalid_numbers {
            let l: Vec<u8> = rest
                .iter()
                .take(4)
                .map(|c| c.to_ascii_lowercase())
                .collect();
            if l.starts_with(b"0x")
                || l.starts_with(b"-0x")
                || l.contains(&b'i')
                || l.contains(&b'n')
            {
                return (Tok::Error("invalid number"), start);
            }
        }
        match strtod_prefix(rest) {
            Some((x, n)) => {
                self.pos += n;
                (Tok::Num(x), start)
            }
            None => (Tok::Error("invalid number"), start),
        }
    }

    fn hex4(&self, at: usize) -> Option<u32> {
        let h = self.s.get(at..at + 4)?;
        let t = std::str::from_utf8(h).ok()?;
        if !t.bytes().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        u32::from_str_radix(t, 16).ok()
    }

    fn string(&mut self) -> (Tok, usize) {
        let start = self.pos;
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            let Some(&c) = self.s.get(self.pos) else {
                return (Tok::Error("unexpected end of string"), self.pos);
            };
            match c {
                b'"' => {
                    self.pos += 1;
                    return (Tok::Str(out), start);
                }
                b'\\' => {
                    let Some(&e) = self.s.get(self.pos + 1) else {
                        return (Tok::Error("unexpected end of string"), self.pos);
                    };
                    let simple = match e {
                        b'"' => Some(b'"'),
                        b'\\' => Some(b'\\'),
                        b'/' => Some(b'/'),
                        b'b' => Some(0x08),
                        b'f' => Some(0x0c),
                        b'n' => Some(b'\n'),
                        b'r' => Some(b'\r'),
                        b't' => Some(b'\t'),
                        _ => None,
                    };
                    if let Some(b) = simple {
                        out.push(b);
                        self.pos += 2;
                    } else if e == b'u' {
                        let Some(mut cp) = self.hex4(self.pos + 2) else {
                            return (Tok::Error("invalid unicode escape code"), self.pos);
                        };
                        let mut len = 6;
                        if (0xD800..0xDC00).contains(&cp) {
                            let lo = if self.s.get(self.pos + 6..self.pos + 8) == Some(b"\\u") {
                                self.hex4(self.pos + 8)
                            } else {
                                None
                            };
                            match lo {
                                Some(lo) if (0xDC00..0xE000).contains(&lo) => {
                                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                                    len = 12;
                                }
                                _ => return (Tok::Error("invalid unicode escape code"), self.pos),
                            }
                        } else if (0xDC00..0xE000).contains(&cp) {
                            return (Tok::Error("invalid unicode escape code"), self.pos);
                        }
                        let ch = char::from_u32(cp).unwrap_or('\u{fffd}');
                        let mut b = [0u8; 4];
                        out.extend_from_slice(ch.encode_utf8(&mut b).as_bytes());
                        self.pos += len;
                    } else {
                        return (Tok::Error("invalid escape code"), self.pos);
                    }
                }
                c => {
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
    }
}

fn expected(lua: &Lua, what: &str, tok: &Tok, at: usize) -> mlua::Error {
    lua_error(
        lua,
        format!(
            "Expected {what} but found {} at character {}",
            tok.name(),
            at + 1
        ),
    )
}

fn decode_value(
    lua: &Lua,
    d: &mut Dec<'_>,
    tok: Tok,
    at: usize,
    depth: usize,
    max: usize,
) -> mlua::Result<Value> {
    Ok(match tok {
        Tok::Str(s) => Value::String(lua.create_string(&s)?),
        Tok::Num(x) => Value::Number(x),
        Tok::Bool(b) => Value::Boolean(b),
        Tok::Null => null(),
        Tok::ObjBegin | Tok::ArrBegin => {
            let depth = depth + 1;
            if depth > max {
                return Err(lua_error(
                    lua,
                    format!(
                        "Found too many nested data structures ({depth}) at character {}",
                        at + 1
                    ),
                ));
            }
            let t = lua.create_table()?;
            if tok == Tok::ArrBegin {
                let (mut tk, mut ta) = d.next();
                if tk == Tok::ArrEnd {
                    return Ok(Value::Table(t));
                }
                let mut i = 1;
                loop {
                    let v = decode_value(lua, d, tk, ta, depth, max)?;
                    t.raw_set(i, v)?;
                    i += 1;
                    let (sep, sa) = d.next();
                    match sep {
                        Tok::ArrEnd => break,
                        Tok::Comma => {}
                        other => return Err(expected(lua, "comma or array end", &other, sa)),
                    }
                    (tk, ta) = d.next();
                }
            } else {
                let (mut tk, mut ta) = d.next();
                if tk == Tok::ObjEnd {
                    return Ok(Value::Table(t));
                }
                loop {
                    let Tok::Str(key) = tk else {
                        return Err(expected(lua, "object key string", &tk, ta));
                    };
                    let (colon, ca) = d.next();
                    if colon != Tok::Colon {
                        return Err(expected(lua, "colon", &colon, ca));
                    }
                    let (vt, va) = d.next();
                    let v = decode_value(lua, d, vt, va, depth, max)?;
                    t.raw_set(lua.create_string(&key)?, v)?;
                    let (sep, sa) = d.next();
                    match sep {
                        Tok::ObjEnd => break,
                        Tok::Comma => {}
                        other => return Err(expected(lua, "comma or object end", &other, sa)),
                    }
                    (tk, ta) = d.next();
                }
            }
            Value::Table(t)
        }
        other => return Err(expected(lua, "value", &other, at)),
    })
}

/// lua-cjson's `json_arg_init`: a settings function takes at most `max`
/// arguments.
fn arg_init(lua: &Lua, args: &MultiValue, max: usize) -> mlua::Result<()> {
    if args.len() > max {
        return Err(arg_error(lua, max + 1, "found too many arguments"));
    }
    Ok(())
}

/// lua-cjson's `json_integer_option`: argument `i` (from 1), unless nil,
/// is read with `luaL_checkinteger` into a C `int` and must lie in
/// `lo..=hi`; the range error names argument 1 whatever `i` is, as
/// lua-cjson's does.
fn int_option(
    lua: &Lua,
    args: &MultiValue,
    i: usize,
    lo: i32,
    hi: i32,
) -> mlua::Result<Option<usize>> {
    match args.get(i - 1) {
        None | Some(Value::Nil) => Ok(None),
        Some(v) => {
            let x = crate::api::to_number(v).ok_or_else(|| type_error(lua, i, "number", v))?;
            let value = crate::num::c_trunc_i64(x) as i32;
            if value < lo || value > hi {
                return Err(arg_error(
                    lua,
                    1,
                    format!("expected integer between {lo} and {hi}"),
                ));
            }
            Ok(Some(value as usize))
        }
    }
}

/// The options of an on/off setting.
const ON_OFF: &[&str] = &["off", "on"];

/// lua-cjson's `json_enum_option`: argument `i` (from 1), unless nil, is a
/// boolean (false 0, true 1) or one of `options` by name (its index;
/// `luaL_checkoption`).
fn enum_option(
    lua: &Lua,
    args: &MultiValue,
    i: usize,
    options: &[&str],
) -> mlua::Result<Option<u8>> {
    match args.get(i - 1) {
        None | Some(Value::Nil) => Ok(None),
        Some(Value::Boolean(b)) => Ok(Some(u8::from(*b))),
        Some(v) => {
            let name = crate::api::to_lstring(v).ok_or_else(|| type_error(lua, i, "string", v))?;
            match options.iter().position(|o| o.as_bytes() == name.as_slice()) {
                Some(k) => Ok(Some(k as u8)),
                None => Err(arg_error(
                    lua,
                    i,
                    format!("invalid option '{}'", String::from_utf8_lossy(&name)),
                )),
            }
        }
    }
}

fn open_with(lua: &Lua, c: Cfg) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set("_NAME", "cjson")?;
    t.raw_set("_VERSION", "2.1.0")?;
    t.raw_set("null", null())?;
    let cc = c.clone();
    t.raw_set(
        "encode",
        super::exact::create_function(lua, move |lua, args: MultiValue| {
            if args.len() != 1 {
                return Err(arg_error(lua, 1, "expected 1 argument"));
            }
            let mut e = Enc {
                lua,
                cfg: cfg(&cc),
                out: Vec::with_capacity(64),
            };
            e.value(&args[0], 0)?;
            lua.create_string(&e.out)
        })?,
    )?;
    let cc = c.clone();
    t.raw_set(
        "decode",
        super::exact::create_function(lua, move |lua, args: MultiValue| {
            if args.len() != 1 {
                return Err(arg_error(lua, 1, "expected 1 argument"));
            }
            let s = match crate::api::to_lstring(&args[0]) {
                Some(s) => s,
                None => return Err(type_error(lua, 1, "string", &args[0])),
            };
            let conf = cfg(&cc);
            let mut d = Dec {
                s: &s,
                pos: 0,
                invalid_numbers: conf.decode_invalid,
            };
            let (tok, at) = d.next();
            let v = decode_value(lua, &mut d, tok, at, 0, conf.decode_max_depth)?;
            let (end, ea) = d.next();
            if end != Tok::End {
                return Err(expected(lua, "the end", &end, ea));
            }
            Ok(v)
        })?,
    )?;
    type Field<T> = fn(&mut Config) -> &mut T;
    let ints: [(&str, i32, i32, Field<usize>); 3] = [
        ("encode_number_precision", 1, 14, |g| &mut g.precision),
        ("encode_max_depth", 1, i32::MAX, |g| &mut g.encode_max_depth),
        ("decode_max_depth", 1, i32::MAX, |g| &mut g.decode_max_depth),
    ];
    for (name, lo, hi, field) in ints {
        let cc = c.clone();
        t.raw_set(
            name,
            lua.create_function(move |lua, args: MultiValue| {
                arg_init(lua, &args, 1)?;
                let n = int_option(lua, &args, 1, lo, hi)?;
                let mut g = cc.lock().unwrap_or_else(|e| e.into_inner());
                let setting = field(&mut g);
                if let Some(n) = n {
                    *setting = n;
                }
                Ok(*setting)
            })?,
        )?;
    }
    let bools: [(&str, Field<bool>); 2] = [
        ("encode_keep_buffer", |g| &mut g.keep_buffer),
        ("decode_invalid_numbers", |g| &mut g.decode_invalid),
    ];
    for (name, field) in bools {
        let cc = c.clone();
        t.raw_set(
            name,
            lua.create_function(move |lua, args: MultiValue| {
                arg_init(lua, &args, 1)?;
                let b = enum_option(lua, &args, 1, ON_OFF)?;
                let mut g = cc.lock().unwrap_or_else(|e| e.into_inner());
                let setting = field(&mut g);
                if let Some(b) = b {
                    *setting = b == 1;
                }
                Ok(*setting)
            })?,
        )?;
    }
    let cc = c.clone();
    t.raw_set(
        "encode_invalid_numbers",
        lua.create_function(move |lua, args: MultiValue| {
            arg_init(lua, &args, 1)?;
            let v = enum_option(lua, &args, 1, &["off", "on", "null"])?;
            let mut g = cc.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(v) = v {
                g.encode_invalid = v;
            }
            Ok(match g.encode_invalid {
                2 => Value::String(lua.create_string("null")?),
                n => Value::Boolean(n == 1),
            })
        })?,
    )?;
    let cc = c.clone();
    t.raw_set(
        "encode_sparse_array",
        lua.create_function(move |lua, args: MultiValue| {
            arg_init(lua, &args, 3)?;
            // Each setting is stored as soon as it is read, so a bad later
            // argument leaves the earlier ones changed (as lua-cjson).
            let mut g = cc.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(b) = enum_option(lua, &args, 1, ON_OFF)? {
                g.sparse_convert = b == 1;
            }
            if let Some(n) = int_option(lua, &args, 2, 0, i32::MAX)? {
                g.sparse_ratio = n;
            }
            if let Some(n) = int_option(lua, &args, 3, 0, i32::MAX)? {
                g.sparse_safe = n;
            }
            Ok((g.sparse_convert, g.sparse_ratio, g.sparse_safe))
        })?,
    )?;
    t.raw_set(
        "new",
        lua.create_function(|lua, _: MultiValue| {
            open_with(lua, Arc::new(Mutex::new(Config::default())))
        })?,
    )?;
    Ok(t)
}

/// Creates the `cjson` table.
pub fn open(lua: &Lua) -> mlua::Result<Table> {
    open_with(lua, Arc::new(Mutex::new(Config::default())))
}
