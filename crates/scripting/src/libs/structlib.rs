//! `struct`: Roberto Ierusalimschy's struct library (as Redis embeds it):
//! `pack(fmt, ...)`, `unpack(fmt, data [, pos])`, `size(fmt)`.
//!
//! Format: `>` big endian, `<` little, `=` native (little), `![n]` maximum
//! alignment (default 1, i.e. none; `!` alone = 8); `x` a zero byte;
//! `b`/`B` 1-byte, `h`/`H` 2, `l`/`L` 8, `T` 8, `i`/`I[n]` n-byte (default
//! 4) signed/unsigned integers; `f` float, `d` double; `c[n]` n chars
//! (`c0`: the whole string when packing, the previous number when
//! unpacking); `s` zero-terminated string; spaces ignored.
//! Invariant: `unpack` returns the values then the next position.

use mlua::{Lua, MultiValue, Table, Value};

use crate::api::{to_lstring, to_number};
use crate::error::{arg_error, arg_type_error, lua_error, lua_typename, type_error};
use crate::libs::exact;

const MAXINTSIZE: usize = 32;

struct Fmt<'a> {
    f: &'a [u8],
    i: usize,
    little: bool,
    align: usize,
}

enum Opt {
    Int { size: usize, signed: bool },
    Float,
    Double,
    Chars(usize),
    Zstr,
    Pad,
}

impl Fmt<'_> {
    fn num(&mut self, default: usize) -> usize {
        let start = self.i;
        let mut n = 0usize;
        while self.i < self.f.len() && self.f[self.i].is_ascii_digit() {
            n = n
                .saturating_mul(10)
                .saturating_add(usize::from(self.f[self.i] - b'0'));
            self.i += 1;
        }
        if self.i == start {
            default
        } else {
            n
        }
    }

    /// Next option (after settings), or None at the end.
    fn next(&mut self, lua: &Lua) -> mlua::Result<Option<Opt>> {
        while self.i < self.f.len() {
            let c = self.f[self.i];
            self.i += 1;
            let o = match c {
                b' ' => continue,
                b'>' => {
                    self.little = false;
                    continue;
                }
                b'<' | b'=' => {
                    self.little = true;
                    continue;
                }
                b'!' => {
                    self.align = self.num(8);
                    continue;
                }
                b'x' => Opt::Pad,
                b'b' => Opt::Int {
                    size: 1,
                    signed: true,
                },
                b'B' => Opt::Int {
                    size: 1,
                    signed: false,
                },
                b'h' => Opt::Int {
                    size: 2,
                    signed: true,
                },
                b'H' => Opt::Int {
                    size: 2,
                    signed: false,
                },
                b'l' => Opt::Int {
                    size: 8,
                    signed: true,
                },
                b'L' | b'T' => Opt::Int {
                    size: 8,
                    signed: false,
                },
                b'i' | b'I' => {
                    let size = self.num(4);
                    if size > MAXINTSIZE {
                        return Err(lua_error(
                            lua,
                            format!("integral size {size} is larger than limit of {MAXINTSIZE}"),
                        ));
                    }
                    Opt::Int {
                        size,
                        signed: c == b'i',
                    }
                }
                b'f' => Opt::Float,
                b'd' => Opt::Double,
                b'c' => Opt::Chars(self.num(1)),
                b's' => Opt::Zstr,
                other => {
                    return Err(arg_error(
                        lua,
                        1,
                        format!("invalid format option '{}'", other as char),
                    ))
                }
            };
            return Ok(Some(o));
        }
        Ok(None)
    }

    fn padding(&self, pos: usize, size: usize) -> usize {
        let mut a = size.min(self.align);
        if a <= 1 {
            return 0;
        }
        if !a.is_power_of_two() {
            a = 1;
        }
        (a - (pos & (a - 1))) & (a - 1)
    }
}

fn opt_size(o: &Opt) -> usize {
    match o {
        Opt::Int { size, .. } => *size,
        Opt::Float => 4,
        Opt::Double => 8,
        Opt::Chars(n) => *n,
        Opt::Zstr => 0,
        Opt::Pad => 1,
    }
}

fn put_int(out: &mut Vec<u8>, v: i128, size: usize, little: bool) {
    let mut bytes = Vec::with_capacity(size);
    for k in 0..size {
        let b = if k < 16 {
            (v >> (8 * k)) as u8
        } else if v < 0 {
            0xff
        } else {
            0
        };
        bytes.push(b);
    }
    if !little {
        bytes.reverse();
    }
    out.extend_from_slice(&bytes);
}

/// `luaL_checknumber` / `luaL_checklstring` of `pack`'s argument `i`
/// (from 0, the format being 0) failing: Redis's struct pushes a nil after
/// the arguments, so the first missing one is "got nil".
fn pack_arg_error(lua: &Lua, args: &MultiValue, i: usize, expected: &str) -> mlua::Error {
    let got = match args.get(i) {
        Some(v) => lua_typename(v),
        None if i == args.len() => "nil",
        None => "no value",
    };
    arg_error(lua, i + 1, format!("{expected} expected, got {got}"))
}

fn pack(lua: &Lua, args: MultiValue) -> mlua::Result<mlua::String> {
    let fmt = args
        .front()
        .and_then(to_lstring)
        .ok_or_else(|| arg_type_error(lua, &args, 1, "string"))?;
    let mut f = Fmt {
        f: &fmt,
        i: 0,
        little: true,
        align: 1,
    };
    let mut out = Vec::new();
    let mut arg = 1;
    while let Some(o) = f.next(lua)? {
        let pad = f.padding(out.len(), opt_size(&o));
        out.extend(std::iter::repeat_n(0u8, pad));
        match o {
            Opt::Pad => out.push(0),
            Opt::Int { size, signed } => {
                let x = args
                    .get(arg)
                    .and_then(to_number)
                    .ok_or_else(|| pack_arg_error(lua, &args, arg, "number"))?;
                arg += 1;
                let v: i128 = if signed {
                    crate::num::c_trunc_i64(x) as i128
                } else {
                    (x as i128) & 0xffff_ffff_ffff_ffff
                };
                put_int(&mut out, v, size, f.little);
            }
            Opt::Float | Opt::Double => {
                let x = args
                    .get(arg)
                    .and_then(to_number)
                    .ok_or_else(|| pack_arg_error(lua, &args, arg, "number"))?;
                arg += 1;
                let mut b = if matches!(o, Opt::Float) {
                    (x as f32).to_le_bytes().to_vec()
                } else {
                    x.to_le_bytes().to_vec()
                };
                if !f.little {
                    b.reverse();
                }
                out.extend_from_slice(&b);
            }
            Opt::Chars(n) => {
                let s = args
                    .get(arg)
                    .and_then(to_lstring)
                    .ok_or_else(|| pack_arg_error(lua, &args, arg, "string"))?;
                arg += 1;
                let n = if n == 0 { s.len() } else { n };
                if s.len() < n {
                    return Err(arg_error(lua, arg, "string too short"));
                }
                out.extend_from_slice(&s[..n]);
            }
            Opt::Zstr => {
                let s = args
                    .get(arg)
                    .and_then(to_lstring)
                    .ok_or_else(|| pack_arg_error(lua, &args, arg, "string"))?;
                arg += 1;
                if s.contains(&0) {
                    return Err(arg_error(lua, arg, "string contains zeros"));
                }
                out.extend_from_slice(&s);
                out.push(0);
            }
        }
    }
    lua.create_string(out)
}

fn unpack(lua: &Lua, args: MultiValue) -> mlua::Result<MultiValue> {
    let fmt = args
        .front()
        .and_then(to_lstring)
        .ok_or_else(|| arg_type_error(lua, &args, 1, "string"))?;
    let data = args
        .get(1)
        .and_then(to_lstring)
        .ok_or_else(|| arg_type_error(lua, &args, 2, "string"))?;
    let start = match args.get(2) {
        None | Some(Value::Nil) => 1.0,
        Some(v) => to_number(v).ok_or_else(|| type_error(lua, 3, "number", v))?,
    };
    if start < 1.0 {
        return Err(arg_error(lua, 3, "offset must be 1 or greater"));
    }
    let mut pos = start as usize - 1;
    let mut f = Fmt {
        f: &fmt,
        i: 0,
        little: true,
        align: 1,
    };
    let mut out = MultiValue::new();
    let mut last_num = 0f64;
    while let Some(o) = f.next(lua)? {
        let size = opt_size(&o);
        pos += f.padding(pos, size);
        let need = |n: usize| -> mlua::Result<()> {
            if pos.checked_add(n).is_none_or(|e| e > data.len()) {
                return Err(arg_error(lua, 2, "data string too short"));
            }
            Ok(())
        };
        match o {
            Opt::Pad => {
                need(1)?;
                pos += 1;
            }
            Opt::Int { size, signed } => {
                need(size)?;
                let mut b = data[pos..pos + size].to_vec();
                if !f.little {
                    b.reverse();
                }
                let mut v: u64 = 0;
                for (k, &byte) in b.iter().enumerate().take(8) {
                    v |= u64::from(byte) << (8 * k);
                }
                let x = if signed && size < 8 && size > 0 {
                    let shift = 64 - 8 * size as u32;
                    (((v << shift) as i64) >> shift) as f64
                } else if signed {
                    v as i64 as f64
                } else {
                    v as f64
                };
                last_num = x;
                out.push_back(Value::Number(x));
                pos += size;
            }
            Opt::Float | Opt::Double => {
                need(size)?;
                let mut b = data[pos..pos + size].to_vec();
                if !f.little {
                    b.reverse();
                }
                let x = if size == 4 {
                    f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                } else {
                    f64::from_le_bytes(b.try_into().unwrap_or([0; 8]))
                };
                last_num = x;
                out.push_back(Value::Number(x));
                pos += size;
            }
            Opt::Chars(n) => {
                let n = if n == 0 {
                    // `c0` takes its length from the value just read,
                    // which is not returned.
                    out.pop_back();
                    last_num.max(0.0) as usize
                } else {
                    n
                };
                need(n)?;
                out.push_back(Value::String(lua.create_string(&data[pos..pos + n])?));
                pos += n;
            }
            Opt::Zstr => {
                let Some(z) = data.get(pos..).and_then(|r| r.iter().position(|&c| c == 0)) else {
                    return Err(lua_error(lua, "unfinished string in data"));
                };
                out.push_back(Value::String(lua.create_string(&data[pos..pos + z])?));
                pos += z + 1;
            }
        }
    }
    out.push_back(Value::Number((pos + 1) as f64));
    Ok(out)
}

fn size(lua: &Lua, args: MultiValue) -> mlua::Result<f64> {
    let fmt = args
        .front()
        .and_then(to_lstring)
        .ok_or_else(|| arg_type_error(lua, &args, 1, "string"))?;
    let mut f = Fmt {
        f: &fmt,
        i: 0,
        little: true,
        align: 1,
    };
    let mut pos = 0usize;
    while let Some(o) = f.next(lua)? {
        let sz = opt_size(&o);
        if matches!(o, Opt::Zstr) || matches!(o, Opt::Chars(0)) {
            return Err(arg_error(lua, 1, "options 'c0' - 's' have undefined sizes"));
        }
        pos += f.padding(pos, sz) + sz;
    }
    Ok(pos as f64)
}

/// Creates the `struct` table.
pub fn open(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set("pack", exact::create_function(lua, pack)?)?;
    t.raw_set("unpack", exact::create_function(lua, unpack)?)?;
    t.raw_set("size", exact::create_function(lua, size)?)?;
    Ok(t)
}
