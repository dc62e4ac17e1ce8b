//! Small helpers shared by command families: strict number parsing with
//! Redis's rules and error texts, time.

use std::time::{SystemTime, UNIX_EPOCH};

pub const ERR_NOT_INT: &str = "ERR value is not an integer or out of range";
pub const ERR_NOT_FLOAT: &str = "ERR value is not a valid float";
pub const ERR_SYNTAX: &str = "ERR syntax error";
pub const ERR_WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
pub const ERR_DB_INDEX: &str = "ERR DB index is out of range";

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
    if b.is_empty() || b.len() > 5120 {
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

/// `%g`-like formatting for small human numbers (percentiles).
pub fn fmt_g(v: f64) -> String {
    format!("{v}")
}

pub fn unix_time_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

thread_local! {
    /// Unix ms cached by the event loop (0 = not set on this thread).
    static CLOCK_MS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Refreshes this thread's cached clock (worker threads call it once per
/// event-loop iteration, so commands share one clock read per batch, like
/// Redis's cached `mstime`).
pub fn refresh_cached_clock() -> u64 {
    let now = unix_time_ms();
    CLOCK_MS.with(|c| c.set(now));
    now
}

/// The cached clock where the thread keeps one, the real clock otherwise.
pub fn cached_time_ms() -> u64 {
    let c = CLOCK_MS.with(|c| c.get());
    if c == 0 {
        unix_time_ms()
    } else {
        c
    }
}

pub fn unix_time_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0)
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
}
