//! `math.random` / `math.randomseed` replaced by Redis's deterministic
//! generator ([`crate::rand`]), with Lua 5.1's argument rules and errors.

use mlua::{Lua, MultiValue};

use crate::error::{arg_error, arg_type_error, lua_error};
use crate::rand;

fn int_arg(lua: &Lua, args: &MultiValue, n: usize) -> mlua::Result<f64> {
    args.get(n - 1)
        .and_then(crate::api::to_number)
        .ok_or_else(|| arg_type_error(lua, args, n, "number"))
}

/// Replaces `math.random` and `math.randomseed` in the VM's `math` table.
pub fn install(lua: &Lua) -> mlua::Result<()> {
    let math: mlua::Table = lua.globals().get("math")?;
    math.raw_set(
        "random",
        lua.create_function(|lua, args: MultiValue| {
            let r = rand::next_unit();
            match args.len() {
                0 => Ok(r),
                1 => {
                    let u = int_arg(lua, &args, 1)?.trunc();
                    if u < 1.0 {
                        return Err(arg_error(lua, 1, "interval is empty"));
                    }
                    Ok((r * u).floor() + 1.0)
                }
                2 => {
                    let l = int_arg(lua, &args, 1)?.trunc();
                    let u = int_arg(lua, &args, 2)?.trunc();
                    if l > u {
                        return Err(arg_error(lua, 2, "interval is empty"));
                    }
                    Ok((r * (u - l + 1.0)).floor() + l)
                }
                _ => Err(lua_error(lua, "wrong number of arguments")),
            }
        })?,
    )?;
    math.raw_set(
        "randomseed",
        lua.create_function(|lua, args: MultiValue| {
            let s = int_arg(lua, &args, 1)?;
            rand::seed(crate::num::c_trunc_i64(s) as i32);
            Ok(())
        })?,
    )?;
    Ok(())
}
