//! The libraries Redis embeds, written for this crate on top of mlua:
//! `bit` (LuaBitOp), `cjson` (lua-cjson), `cmsgpack` (lua-cmsgpack),
//! `struct` (Roberto Ierusalimschy's struct), and Redis's `math.random`.

pub mod bit;
pub mod cjson;
pub mod cmsgpack;
pub(crate) mod exact;
pub mod mathrand;
pub mod structlib;

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
