//! `bit`: LuaBitOp's API with its 32-bit semantics. Numbers are reduced to
//! a signed 32-bit integer the way LuaBitOp does it (adding 2^52 + 2^51 and
//! keeping the low word, i.e. round to nearest then modulo 2^32); results
//! are signed 32-bit numbers. Shift counts use their low 5 bits.

use mlua::{Lua, MultiValue, Table, Value};

use crate::api::to_number;
use crate::error::type_error;

/// LuaBitOp's number → int32 reduction.
pub fn tobit(x: f64) -> i32 {
    (x + 6_755_399_441_055_744.0).to_bits() as u32 as i32
}

fn arg(lua: &Lua, args: &MultiValue, i: usize) -> mlua::Result<i32> {
    match args.get(i) {
        Some(v) => match to_number(v) {
            Some(x) => Ok(tobit(x)),
            None => Err(type_error(lua, i + 1, "number", v)),
        },
        None => Err(crate::error::arg_error(
            lua,
            i + 1,
            "number expected, got no value",
        )),
    }
}

fn unary(lua: &Lua, t: &Table, name: &'static str, f: fn(i32) -> i32) -> mlua::Result<()> {
    t.raw_set(
        name,
        lua.create_function(move |lua, a: MultiValue| Ok(f(arg(lua, &a, 0)?) as f64))?,
    )
}

fn fold(lua: &Lua, t: &Table, name: &'static str, f: fn(i32, i32) -> i32) -> mlua::Result<()> {
    t.raw_set(
        name,
        lua.create_function(move |lua, a: MultiValue| {
            let mut acc = arg(lua, &a, 0)?;
            for i in 1..a.len() {
                acc = f(acc, arg(lua, &a, i)?);
            }
            Ok(acc as f64)
        })?,
    )
}

fn shift(lua: &Lua, t: &Table, name: &'static str, f: fn(i32, u32) -> i32) -> mlua::Result<()> {
    t.raw_set(
        name,
        lua.create_function(move |lua, a: MultiValue| {
            let x = arg(lua, &a, 0)?;
            let n = arg(lua, &a, 1)? as u32 & 31;
            Ok(f(x, n) as f64)
        })?,
    )
}

/// Creates the `bit` table.
pub fn open(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    unary(lua, &t, "tobit", |x| x)?;
    unary(lua, &t, "bnot", |x| !x)?;
    unary(lua, &t, "bswap", |x| x.swap_bytes())?;
    fold(lua, &t, "band", |a, b| a & b)?;
    fold(lua, &t, "bor", |a, b| a | b)?;
    fold(lua, &t, "bxor", |a, b| a ^ b)?;
    shift(lua, &t, "lshift", |x, n| ((x as u32) << n) as i32)?;
    shift(lua, &t, "rshift", |x, n| ((x as u32) >> n) as i32)?;
    shift(lua, &t, "arshift", |x, n| x >> n)?;
    shift(lua, &t, "rol", |x, n| (x as u32).rotate_left(n) as i32)?;
    shift(lua, &t, "ror", |x, n| (x as u32).rotate_right(n) as i32)?;
    t.raw_set(
        "tohex",
        lua.create_function(|lua, a: MultiValue| {
            let x = arg(lua, &a, 0)? as u32;
            let mut n: i32 = match a.get(1) {
                None | Some(Value::Nil) => 8,
                Some(_) => arg(lua, &a, 1)?,
            };
            let upper = n < 0;
            if upper {
                n = n.wrapping_neg();
            }
            let n = if !(0..=8).contains(&n) { 8 } else { n as usize };
            let digits: &[u8; 16] = if upper {
                b"0123456789ABCDEF"
            } else {
                b"0123456789abcdef"
            };
            let mut out = vec![0u8; n];
            let mut v = x;
            for c in out.iter_mut().rev() {
                *c = digits[(v & 15) as usize];
                v >>= 4;
            }
            lua.create_string(out)
        })?,
    )?;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::tobit;

    #[test]
    fn tobit_reduces_like_luabitop() {
        assert_eq!(tobit(0xffff_ffffu32 as f64), -1);
        assert_eq!(tobit(4_294_967_296.0 + 5.0), 5);
        assert_eq!(tobit(-1.0), -1);
        assert_eq!(tobit(2.5), 2);
        assert_eq!(tobit(3.5), 4);
    }
}
