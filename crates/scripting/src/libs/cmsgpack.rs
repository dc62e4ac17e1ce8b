//! `cmsgpack`: lua-cmsgpack 0.4.0's API as Redis embeds it: `pack(...)`
//! (each argument encoded, concatenated), `unpack(s)` (every object),
//! `unpack_one(s [, offset])` and `unpack_limit(s, limit [, offset])`
//! (next offset, or -1 at the end, then the values).
//!
//! Encoding rules: whole numbers as the smallest MessagePack integer,
//! others as float 32 when exact, else float 64; strings as fixstr / str8 /
//! str16 / str32; a table whose keys are exactly 1..n is an array (empty
//! table → empty array), otherwise a map in `next` order; nesting deeper
//! than 16 and unsupported types encode as nil. Decoding turns every
//! integer into a Lua number and bin/str into strings.

use mlua::{Lua, MultiValue, Table, Value};

use crate::api::to_lstring;
use crate::error::lua_error;

const MAX_NESTING: usize = 16;

fn enc_int(out: &mut Vec<u8>, n: i64) {
    if n >= 0 {
        let u = n as u64;
        if u < 128 {
            out.push(u as u8);
        } else if u < 256 {
            out.extend_from_slice(&[0xcc, u as u8]);
        } else if u < 65536 {
            out.push(0xcd);
            out.extend_from_slice(&(u as u16).to_be_bytes());
        } else if u <= 0xffff_ffff {
            out.push(0xce);
            out.extend_from_slice(&(u as u32).to_be_bytes());
        } else {
            out.push(0xcf);
            out.extend_from_slice(&u.to_be_bytes());
        }
    } else if n >= -32 {
        out.push(n as i8 as u8);
    } else if n >= -128 {
        out.extend_from_slice(&[0xd0, n as i8 as u8]);
    } else if n >= -32768 {
        out.push(0xd1);
        out.extend_from_slice(&(n as i16).to_be_bytes());
    } else if n >= -2_147_483_648 {
        out.push(0xd2);
        out.extend_from_slice(&(n as i32).to_be_bytes());
    } else {
        out.push(0xd3);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

fn enc_number(out: &mut Vec<u8>, x: f64) {
    if x.is_finite() && (x as i64) as f64 == x {
        enc_int(out, x as i64);
    } else if ((x as f32) as f64) == x {
        out.push(0xca);
        out.extend_from_slice(&(x as f32).to_be_bytes());
    } else {
        out.push(0xcb);
        out.extend_from_slice(&x.to_be_bytes());
    }
}

fn enc_len(out: &mut Vec<u8>, n: usize, fix: u8, fix_max: usize, b16: u8, b32: u8) {
    if n < fix_max {
        out.push(fix | n as u8);
    } else if n <= 0xffff {
        out.push(b16);
        out.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        out.push(b32);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    }
}

fn array_len(t: &Table) -> mlua::Result<Option<usize>> {
    let mut count = 0usize;
    let mut max = 0f64;
    for pair in t.clone().pairs::<Value, Value>() {
        let (k, _) = pair?;
        let x = match k {
            Value::Integer(n) => n as f64,
            Value::Number(x) => x,
            _ => return Ok(None),
        };
        if x <= 0.0 || x.floor() != x {
            return Ok(None);
        }
        max = max.max(x);
        count += 1;
    }
    Ok((max as usize == count).then_some(count))
}

fn encode(out: &mut Vec<u8>, v: &Value, level: usize) -> mlua::Result<()> {
    match v {
        Value::Nil => out.push(0xc0),
        Value::Boolean(b) => out.push(if *b { 0xc3 } else { 0xc2 }),
        Value::Integer(n) => enc_int(out, *n),
        Value::Number(x) => enc_number(out, *x),
        Value::String(s) => {
            let b = s.as_bytes();
            let n = b.len();
            if n < 32 {
                out.push(0xa0 | n as u8);
            } else if n <= 0xff {
                out.extend_from_slice(&[0xd9, n as u8]);
            } else if n <= 0xffff {
                out.push(0xda);
                out.extend_from_slice(&(n as u16).to_be_bytes());
            } else {
                out.push(0xdb);
                out.extend_from_slice(&(n as u32).to_be_bytes());
            }
            out.extend_from_slice(&b);
        }
        Value::Table(t) if level < MAX_NESTING => match array_len(t)? {
            Some(n) => {
                enc_len(out, n, 0x90, 16, 0xdc, 0xdd);
                for i in 1..=n {
                    let v = super::exact::exact_in(t, i, t.raw_get::<Value>(i)?);
                    encode(out, &v, level + 1)?;
                }
            }
            None => {
                let pairs: Vec<(Value, Value)> = t
                    .clone()
                    .pairs::<Value, Value>()
                    .map(|p| p.map(|(k, v)| (k.clone(), super::exact::exact_in(t, k, v))))
                    .collect::<mlua::Result<_>>()?;
                enc_len(out, pairs.len(), 0x80, 16, 0xde, 0xdf);
                for (k, v) in &pairs {
                    encode(out, k, level + 1)?;
                    encode(out, v, level + 1)?;
                }
            }
        },
        _ => out.push(0xc0),
    }
    Ok(())
}

enum DecErr {
    Missing,
    Bad,
    Lua(mlua::Error),
}

impl From<mlua::Error> for DecErr {
    fn from(e: mlua::Error) -> Self {
        DecErr::Lua(e)
    }
}

struct Cur<'a> {
    b: &'a [u8],
    p: usize,
}

impl Cur<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], DecErr> {
        let end = self.p.checked_add(n).ok_or(DecErr::Missing)?;
        if end > self.b.len() {
            return Err(DecErr::Missing);
        }
        let s = &self.b[self.p..end];
        self.p = end;
        Ok(s)
    }

    fn be(&mut self, n: usize) -> Result<u64, DecErr> {
        Ok(self
            .take(n)?
            .iter()
            .fold(0u64, |a, &c| (a << 8) | u64::from(c)))
    }
}

fn decode(lua: &Lua, c: &mut Cur<'_>, depth: usize) -> Result<Value, DecErr> {
    if depth > 10_000 {
        return Err(DecErr::Bad);
    }
    let t = c.take(1)?[0];
    let str_of = |lua: &Lua, c: &mut Cur<'_>, n: usize| -> Result<Value, DecErr> {
        let s = c.take(n)?;
        Ok(Value::String(lua.create_string(s)?))
    };
    Ok(match t {
        0x00..=0x7f => Value::Number(f64::from(t)),
        0xe0..=0xff => Value::Number(f64::from(t as i8)),
        0xa0..=0xbf => str_of(lua, c, usize::from(t & 0x1f))?,
        0x90..=0x9f => array(lua, c, usize::from(t & 0x0f), depth)?,
        0x80..=0x8f => map(lua, c, usize::from(t & 0x0f), depth)?,
        0xc0 => Value::Nil,
        0xc2 => Value::Boolean(false),
        0xc3 => Value::Boolean(true),
        0xcc => Value::Number(c.be(1)? as f64),
        0xcd => Value::Number(c.be(2)? as f64),
        0xce => Value::Number(c.be(4)? as f64),
        0xcf => Value::Number(c.be(8)? as f64),
        0xd0 => Value::Number(f64::from(c.be(1)? as u8 as i8)),
        0xd1 => Value::Number(f64::from(c.be(2)? as u16 as i16)),
        0xd2 => Value::Number(f64::from(c.be(4)? as u32 as i32)),
        0xd3 => Value::Number(c.be(8)? as i64 as f64),
        0xca => Value::Number(f64::from(f32::from_bits(c.be(4)? as u32))),
        0xcb => Value::Number(f64::from_bits(c.be(8)?)),
        0xd9 | 0xc4 => {
            let n = c.be(1)? as usize;
            str_of(lua, c, n)?
        }
        0xda | 0xc5 => {
            let n = c.be(2)? as usize;
            str_of(lua, c, n)?
        }
        0xdb | 0xc6 => {
            let n = c.be(4)? as usize;
            str_of(lua, c, n)?
        }
        0xdc => {
            let n = c.be(2)? as usize;
            array(lua, c, n, depth)?
        }
        0xdd => {
            let n = c.be(4)? as usize;
            array(lua, c, n, depth)?
        }
        0xde => {
            let n = c.be(2)? as usize;
            map(lua, c, n, depth)?
        }
        0xdf => {
            let n = c.be(4)? as usize;
            map(lua, c, n, depth)?
        }
        _ => return Err(DecErr::Bad),
    })
}

fn array(lua: &Lua, c: &mut Cur<'_>, n: usize, depth: usize) -> Result<Value, DecErr> {
    let t = lua.create_table_with_capacity(n.min(c.b.len()), 0)?;
    for i in 1..=n {
        let v = decode(lua, c, depth + 1)?;
        t.raw_set(i, v)?;
    }
    Ok(Value::Table(t))
}

fn map(lua: &Lua, c: &mut Cur<'_>, n: usize, depth: usize) -> Result<Value, DecErr> {
    let t = lua.create_table_with_capacity(0, n.min(c.b.len()))?;
    for _ in 0..n {
        let k = decode(lua, c, depth + 1)?;
        let v = decode(lua, c, depth + 1)?;
        if !k.is_nil() {
            t.raw_set(k, v)?;
        }
    }
    Ok(Value::Table(t))
}

fn dec_err(lua: &Lua, e: DecErr) -> mlua::Error {
    match e {
        DecErr::Missing => lua_error(lua, "Missing bytes in input."),
        DecErr::Bad => lua_error(lua, "Bad data format in input."),
        DecErr::Lua(e) => e,
    }
}

/// Decodes up to `limit` objects (0 = all) from `offset`; returns the
/// values and the offset after them.
fn unpack_full(
    lua: &Lua,
    s: &[u8],
    limit: usize,
    offset: usize,
) -> mlua::Result<(Vec<Value>, usize)> {
    let mut c = Cur { b: s, p: offset };
    let mut vals = Vec::new();
    while c.p < s.len() && (limit == 0 || vals.len() < limit) {
        vals.push(decode(lua, &mut c, 0).map_err(|e| dec_err(lua, e))?);
    }
    Ok((vals, c.p))
}

fn str_arg(lua: &Lua, args: &MultiValue) -> mlua::Result<Vec<u8>> {
    args.front()
        .and_then(to_lstring)
        .ok_or_else(|| crate::error::arg_type_error(lua, args, 1, "string"))
}

fn limited(lua: &Lua, s: &[u8], limit: usize, offset: i64) -> mlua::Result<MultiValue> {
    if offset < 0 || limit > i32::MAX as usize || offset as usize > s.len() {
        return Err(lua_error(
            lua,
            format!("Invalid request to unpack with offset of {offset} and limit of {limit}."),
        ));
    }
    let (vals, end) = unpack_full(lua, s, limit, offset as usize)?;
    let mut out = MultiValue::new();
    out.push_back(Value::Number(if end >= s.len() {
        -1.0
    } else {
        end as f64
    }));
    out.extend(vals);
    Ok(out)
}

/// Creates the `cmsgpack` table.
pub fn open(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set("_NAME", "cmsgpack")?;
    t.raw_set("_VERSION", "lua-cmsgpack 0.4.0")?;
    t.raw_set("_COPYRIGHT", "Copyright (C) 2012, Salvatore Sanfilippo")?;
    t.raw_set("_DESCRIPTION", "MessagePack C implementation for Lua")?;
    t.raw_set(
        "pack",
        super::exact::create_function(lua, |lua, args: MultiValue| {
            if args.is_empty() {
                return Err(crate::error::arg_error(
                    lua,
                    0,
                    "MessagePack pack needs input.",
                ));
            }
            let mut out = Vec::new();
            for a in args.iter() {
                encode(&mut out, a, 0)?;
            }
            lua.create_string(out)
        })?,
    )?;
    t.raw_set(
        "unpack",
        super::exact::create_function(lua, |lua, args: MultiValue| {
            let s = str_arg(lua, &args)?;
            let (vals, _) = unpack_full(lua, &s, 0, 0)?;
            Ok(MultiValue::from_iter(vals))
        })?,
    )?;
    t.raw_set(
        "unpack_one",
        super::exact::create_function(lua, |lua, args: MultiValue| {
            let s = str_arg(lua, &args)?;
            let off = args.get(1).and_then(crate::api::to_number).unwrap_or(0.0) as i64;
            limited(lua, &s, 1, off)
        })?,
    )?;
    t.raw_set(
        "unpack_limit",
        super::exact::create_function(lua, |lua, args: MultiValue| {
            let s = str_arg(lua, &args)?;
            let limit = args
                .get(1)
                .and_then(crate::api::to_number)
                .unwrap_or(0.0)
                .max(0.0) as usize;
            let off = args.get(2).and_then(crate::api::to_number).unwrap_or(0.0) as i64;
            if limit == 0 && off >= 0 {
                // No object asked for: only the offset comes back.
                let end = off as f64;
                return Ok(MultiValue::from_iter([Value::Number(
                    if off as usize >= s.len() { -1.0 } else { end },
                )]));
            }
            limited(lua, &s, limit, off)
        })?,
    )?;
    Ok(t)
}
