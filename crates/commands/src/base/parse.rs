//! Argument parsing with Redis's rules: strict integers (`string2ll`),
//! floats, case-insensitive keyword comparison.

/// Parses an i64 exactly like Redis's `string2ll`: optional '-', no '+', no
/// spaces, no leading zeros, at most 20 characters.
pub fn parse_i64(b: &[u8]) -> Option<i64> {
    if b.is_empty() || b.len() > 20 {
        return None;
    }
    if b == b"0" {
        return Some(0);
    }
    let (neg, digits) = if b[0] == b'-' {
        (true, &b[1..])
    } else {
        (false, b)
    };
    if digits.is_empty() || !(b'1'..=b'9').contains(&digits[0]) {
        return None;
    }
    let mut v: u64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add((c - b'0') as u64)?;
    }
    if neg {
        if v > (i64::MAX as u64) + 1 {
            None
        } else {
            Some((v as i64).wrapping_neg())
        }
    } else if v > i64::MAX as u64 {
        None
    } else {
        Some(v as i64)
    }
}

/// Parses a float like Redis's `string2ld`/`strtold` users: no spaces, not
/// empty, no NaN; "inf"/"-inf"/"+inf" accepted.
pub fn parse_f64(b: &[u8]) -> Option<f64> {
    // Redis's string2ld reads at most 5 KiB (MAX_LONG_DOUBLE_CHARS).
    if b.len() > 5120 {
        return None;
    }
    parse_f64_any_length(b)
}

/// [`parse_f64`] without its length limit: C `strtod` reads any length.
fn parse_f64_any_length(b: &[u8]) -> Option<f64> {
    if b.is_empty() {
        return None;
    }
    if b[0].is_ascii_whitespace() || b[b.len() - 1].is_ascii_whitespace() {
        return None;
    }
    let s = std::str::from_utf8(b).ok()?;
    let v: f64 = match s.to_ascii_lowercase().as_str() {
        "inf" | "+inf" | "infinity" | "+infinity" => f64::INFINITY,
        "-inf" | "-infinity" => f64::NEG_INFINITY,
        l if l.contains("nan") || l.contains("inf") => return None,
        _ => s.parse().ok()?,
    };
    if v.is_nan() {
        None
    } else {
        Some(v)
    }
}

/// C `strtod` over the whole text (no leading/trailing blanks here):
/// decimal, `inf`/`infinity`, and hexadecimal floats (`0x10`, `0x1p3`). Returns
/// the value and whether it over- or underflowed (`ERANGE` to inf or 0).
pub fn strtod_full(b: &[u8]) -> Option<(f64, bool)> {
    let (neg, body) = match b.first() {
        Some(b'-') => (true, &b[1..]),
        Some(b'+') => (false, &b[1..]),
        _ => (false, b),
    };
    if body.len() > 2 && (body.starts_with(b"0x") || body.starts_with(b"0X")) {
        let v = hex_float(&body[2..])?;
        let erange = v.is_infinite();
        return Some((if neg { -v } else { v }, erange));
    }
    let v = parse_f64_any_length(b)?;
    let lower = b.to_ascii_lowercase();
    let named_inf = lower.windows(3).any(|w| w == b"inf");
    let mantissa = lower.split(|&c| c == b'e').next().unwrap_or(&[]);
    let nonzero_digits = mantissa.iter().any(|c| (b'1'..=b'9').contains(c));
    let erange = (v.is_infinite() && !named_inf) || (v == 0.0 && nonzero_digits);
    Some((v, erange))
}

/// The part of a C hexadecimal float after `0x`: hex digits, an optional
/// `.` and fraction digits (at least one digit in all), and an optional
/// binary exponent `p[+-]N` (`0x1p3` is 8, `0x.8` is 0.5).
fn hex_float(b: &[u8]) -> Option<f64> {
    let (mant, exp) = match b.iter().position(|&c| c == b'p' || c == b'P') {
        Some(i) => (&b[..i], Some(&b[i + 1..])),
        None => (b, None),
    };
    let (int, frac) = match mant.iter().position(|&c| c == b'.') {
        Some(i) => (&mant[..i], &mant[i + 1..]),
        None => (mant, &b""[..]),
    };
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let mut v = 0f64;
    for &c in int.iter().chain(frac) {
        v = v * 16.0 + (c as char).to_digit(16)? as f64;
    }
    let mut e: i64 = -4 * frac.len() as i64;
    if let Some(x) = exp {
        let digits = x
            .strip_prefix(b"+")
            .or_else(|| x.strip_prefix(b"-"))
            .unwrap_or(x);
        if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        let n: i64 = std::str::from_utf8(x)
            .ok()?
            .parse()
            .unwrap_or(if x[0] == b'-' { -100_000 } else { 100_000 });
        e = e.saturating_add(n.clamp(-100_000, 100_000));
    }
    Some(v * 2f64.powi(e.clamp(-2000, 2000) as i32))
}

/// A score or weight argument as Redis's `getDoubleFromObject`: `strtod`,
/// no blanks, no NaN, and no overflow or underflow to zero.
pub fn get_double(b: &[u8]) -> Option<f64> {
    match strtod_full(b)? {
        (_, true) => None,
        (v, false) => Some(v),
    }
}

/// `%g`-like formatting for small human numbers (percentiles).
pub fn fmt_g(v: f64) -> String {
    format!("{v}")
}

/// Lower-cases ASCII into `buf` and returns it as &str if valid UTF-8.
pub fn lower<'a>(src: &[u8], buf: &'a mut [u8; 64]) -> Option<&'a str> {
    if src.len() > buf.len() {
        return None;
    }
    for (d, s) in buf.iter_mut().zip(src) {
        *d = s.to_ascii_lowercase();
    }
    std::str::from_utf8(&buf[..src.len()]).ok()
}

pub fn eq_ic(a: &[u8], b: &str) -> bool {
    a.eq_ignore_ascii_case(b.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_ints() {
        assert_eq!(parse_i64(b"0"), Some(0));
        assert_eq!(parse_i64(b"-1"), Some(-1));
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        for bad in [
            &b""[..],
            b"-0",
            b"+1",
            b" 1",
            b"01",
            b"1 ",
            b"9223372036854775808",
            b"1a",
            b"-",
        ] {
            assert_eq!(parse_i64(bad), None, "{:?}", std::str::from_utf8(bad));
        }
    }

    #[test]
    fn floats() {
        assert_eq!(parse_f64(b"1.5"), Some(1.5));
        assert_eq!(parse_f64(b"-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_f64(b"nan"), None);
        assert_eq!(parse_f64(b" 1"), None);
        assert_eq!(parse_f64(b""), None);
    }

    /// `strtod` (score ranges, scores) reads numbers of any length;
    /// `string2ld` users stop at 5 KiB. Found by the differential fuzzer:
    /// ZREMRANGEBYSCORE with a 7 KiB bound answered "min or max is not a
    /// float" where Redis went on to the type check.
    #[test]
    fn long_numbers() {
        let long = format!("1{}", "0".repeat(7000));
        assert_eq!(parse_f64(long.as_bytes()), None);
        assert_eq!(strtod_full(long.as_bytes()), Some((f64::INFINITY, true)));
        let frac = format!("0.{}1", "0".repeat(7000));
        assert_eq!(strtod_full(frac.as_bytes()), Some((0.0, true)));
        let small = format!("1.{}", "0".repeat(7000));
        assert_eq!(strtod_full(small.as_bytes()), Some((1.0, false)));
        assert_eq!(get_double(small.as_bytes()), Some(1.0));
    }
}
