//! The libraries Redis embeds, written for this crate on top of mlua:
//! `bit` (LuaBitOp), `cjson` (lua-cjson), `cmsgpack` (lua-cmsgpack),
//! `struct` (Roberto Ierusalimschy's struct), and Redis's `math.random`.

pub mod bit;
pub mod cjson;
pub mod cmsgpack;
pub mod mathrand;
pub mod structlib;

use mlua::{IntoLua, Table, Value};

// Exact numbers. mlua's Lua 5.1 conversion turns a number whose distance
// to an integer is below `f64::EPSILON` into `Value::Integer`: `-0.0` and
// every `|x| < f64::EPSILON` arrive as `Integer(0)`, where Redis's C
// libraries see the real double (`cjson.encode({1e-20})` is `[1e-20]`).
// Values read from tables are read again as `f64` ([`exact_in`]). A
// library function's own arguments cannot be (mlua converts them before
// the call): `cjson.encode(-0.0)` gives `0` where Redis gives `-0`, and
// `struct.pack('d', 1e-20)` packs 0.

/// `v`, read from `t[k]`, with the real number when mlua made it `Integer(0)`.
pub(crate) fn exact_in(t: &Table, k: impl IntoLua, v: Value) -> Value {
    if matches!(v, Value::Integer(0)) {
        if let Ok(x) = t.raw_get::<f64>(k) {
            if x != 0.0 || x.is_sign_negative() {
                return Value::Number(x);
            }
        }
    }
    v
}

/// Lua 5.1's `lua_str2number` (`strtod`, plus `0x` hex), trailing spaces
/// allowed: what `tonumber`/`lua_tonumber` accept for strings.
pub fn lua_str2number(s: &[u8]) -> Option<f64> {
    let t = std::str::from_utf8(s).ok()?;
    let t = t.trim_matches(|c: char| c.is_ascii_whitespace());
    if t.is_empty() {
        return None;
    }
    let (neg, body) = match t.as_bytes()[0] {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    if let Some(hex) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        let v = u64::from_str_radix(hex, 16).ok()? as f64;
        return Some(if neg { -v } else { v });
    }
    let lower = body.to_ascii_lowercase();
    if lower.starts_with("inf") || lower.starts_with("nan") {
        let v = match lower.as_str() {
            "inf" | "infinity" => f64::INFINITY,
            "nan" => f64::NAN,
            _ => return None,
        };
        return Some(if neg { -v } else { v });
    }
    if !body
        .bytes()
        .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        return None;
    }
    t.parse::<f64>().ok()
}
