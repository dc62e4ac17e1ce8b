//! Number parsing and formatting exactly as Redis 7.0 does it.
//!
//! * [`parse_redis_i64`] is Redis's `string2ll`: optional `-`, no `+`, no
//!   leading zeros, no spaces, at most 20 characters, no overflow.
//! * [`write_i64`] / [`write_u64`] are an itoa: digits straight into the output.
//! * [`format_double_like_redis`] is `printf("%.17g")`, what Redis 7.0's
//!   `addReplyDouble` sends for scores (`ZSCORE`, `ZINCRBY`, ...) in both
//!   protocols, with `inf` / `-inf` spelled explicitly.
//! * [`format_long_double_like_redis`] is `ld2string(.., LD_STR_HUMAN)`:
//!   `printf("%.17Lf")` with trailing zeros (and a bare `.`) trimmed and `-0`
//!   turned into `0`, what `INCRBYFLOAT` and `HINCRBYFLOAT` store and reply.
//!
//! Rust's float formatting with an explicit precision is exact and rounds
//! ties to even, like glibc's `printf` in the default rounding mode, so the
//! digits match glibc's byte for byte (checked by tests against values taken
//! from a real Redis 7.0 server).

use std::fmt::Write as _;

const DIGIT_PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Writes the digits of `v` at the end of `buf`; returns where they start.
#[inline]
fn u64_digits(mut v: u64, buf: &mut [u8; 20]) -> usize {
    let mut i = buf.len();
    while v >= 100 {
        let r = (v % 100) as usize * 2;
        v /= 100;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&DIGIT_PAIRS[r..r + 2]);
    }
    if v >= 10 {
        let r = v as usize * 2;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&DIGIT_PAIRS[r..r + 2]);
    } else {
        i -= 1;
        buf[i] = b'0' + v as u8;
    }
    i
}

/// Appends the decimal digits of `v` to `out`.
#[inline]
pub fn write_u64(out: &mut Vec<u8>, v: u64) {
    let mut buf = [0u8; 20];
    let i = u64_digits(v, &mut buf);
    out.extend_from_slice(&buf[i..]);
}

/// Appends the decimal form of `v` (with a leading `-` when negative).
#[inline]
pub fn write_i64(out: &mut Vec<u8>, v: i64) {
    if v < 0 {
        out.push(b'-');
    }
    write_u64(out, v.unsigned_abs());
}

/// Number of decimal digits `write_u64` produces for `v`.
#[inline]
pub fn digits_u64(v: u64) -> usize {
    if v == 0 {
        1
    } else {
        v.ilog10() as usize + 1
    }
}

/// Redis's `string2ll`: parses a whole byte string as an `i64`.
///
/// Accepts `0`, or an optional `-` followed by a digit `1`-`9` and more
/// digits; rejects the empty string, `+`, leading zeros, `-0`, spaces,
/// strings of 21 or more bytes and anything that overflows `i64`.
pub fn parse_redis_i64(s: &[u8]) -> Option<i64> {
    // LONG_STR_SIZE is 21: such a string cannot be a valid long long.
    if s.is_empty() || s.len() >= 21 {
        return None;
    }
    if s == b"0" {
        return Some(0);
    }
    let (negative, digits) = match s[0] {
        b'-' => (true, &s[1..]),
        _ => (false, s),
    };
    let (&first, rest) = digits.split_first()?;
    if !(b'1'..=b'9').contains(&first) {
        return None;
    }
    let mut v = u64::from(first - b'0');
    for &c in rest {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
    }
    if negative {
        if v > i64::MAX as u64 + 1 {
            return None;
        }
        Some((v as i64).wrapping_neg())
    } else {
        i64::try_from(v).ok()
    }
}

/// A small fixed buffer implementing `fmt::Write`, to format floats without
/// allocating.
struct StackBuf<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> StackBuf<N> {
    fn new() -> Self {
        StackBuf {
            buf: [0; N],
            len: 0,
        }
    }
    fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl<const N: usize> std::fmt::Write for StackBuf<N> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let b = s.as_bytes();
        let end = self.len.checked_add(b.len()).ok_or(std::fmt::Error)?;
        if end > N {
            return Err(std::fmt::Error);
        }
        self.buf[self.len..end].copy_from_slice(b);
        self.len = end;
        Ok(())
    }
}

/// Appends `x` formatted as C's `printf("%.17g", x)` (glibc spelling:
/// `inf`, `-inf`, `nan`, `-nan`).
pub fn write_double_g17(out: &mut Vec<u8>, x: f64) {
    let (buf, n) = double_g17(x);
    out.extend_from_slice(&buf[..n]);
}

/// `printf("%.17g", x)` into a stack buffer: `(bytes, len)`. The longest
/// output is 24 bytes (`-1.2345678901234567e-308`).
pub fn double_g17(x: f64) -> ([u8; 32], usize) {
    let mut out = StackBuf::<32>::new();
    g17(&mut out, x);
    (out.buf, out.len)
}

impl<const N: usize> StackBuf<N> {
    fn push(&mut self, c: u8) {
        self.buf[self.len] = c;
        self.len += 1;
    }
    fn extend_from_slice(&mut self, s: &[u8]) {
        self.buf[self.len..self.len + s.len()].copy_from_slice(s);
        self.len += s.len();
    }
    fn extend(&mut self, it: impl Iterator<Item = u8>) {
        for c in it {
            self.push(c);
        }
    }
}

fn g17(out: &mut StackBuf<32>, x: f64) {
    // Fast path: integral values below 1e15 print as plain integers under
    // %.17g (decimal exponent < 17, no fraction). -0.0 goes the long way.
    if x.fract() == 0.0 && x.abs() < 1e15 && (x != 0.0 || x.is_sign_positive()) {
        if x < 0.0 {
            out.push(b'-');
        }
        let mut buf = [0u8; 20];
        let i = u64_digits(x.abs() as u64, &mut buf);
        out.extend_from_slice(&buf[i..]);
        return;
    }
    if x.is_nan() {
        out.extend_from_slice(if x.is_sign_negative() {
            b"-nan"
        } else {
            b"nan"
        });
        return;
    }
    if x.is_infinite() {
        out.extend_from_slice(if x > 0.0 { b"inf" } else { b"-inf" });
        return;
    }
    if x == 0.0 {
        out.extend_from_slice(if x.is_sign_negative() { b"-0" } else { b"0" });
        return;
    }
    // 17 significant digits, exactly rounded (ties to even), in exponent form:
    // "[-]d.dddddddddddddddde[-]X".
    let mut s = StackBuf::<48>::new();
    write!(s, "{x:.16e}").expect("a %.16e float fits in 48 bytes");
    let s = s.as_bytes();
    let (negative, s) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, s),
    };
    let e_pos = s.iter().position(|&c| c == b'e').expect("exponent form");
    let mut digits = [0u8; 17];
    digits[0] = s[0];
    digits[1..].copy_from_slice(&s[2..e_pos]);
    let exp: i32 = std::str::from_utf8(&s[e_pos + 1..])
        .ok()
        .and_then(|e| e.parse().ok())
        .expect("valid exponent");
    // %g drops trailing zeros of the significand.
    let mut ndig = 17;
    while ndig > 1 && digits[ndig - 1] == b'0' {
        ndig -= 1;
    }
    let digits = &digits[..ndig];
    if negative {
        out.push(b'-');
    }
    if !(-4..17).contains(&exp) {
        // Exponent style: d[.ddd]e[+-]XX (at least two exponent digits).
        out.push(digits[0]);
        if digits.len() > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits[1..]);
        }
        out.push(b'e');
        out.push(if exp < 0 { b'-' } else { b'+' });
        let e = exp.unsigned_abs();
        if e >= 100 {
            out.push(b'0' + (e / 100) as u8);
        }
        out.push(b'0' + (e / 10 % 10) as u8);
        out.push(b'0' + (e % 10) as u8);
    } else if exp >= 0 {
        let int_len = exp as usize + 1;
        if digits.len() <= int_len {
            out.extend_from_slice(digits);
            out.extend(std::iter::repeat_n(b'0', int_len - digits.len()));
        } else {
            out.extend_from_slice(&digits[..int_len]);
            out.push(b'.');
            out.extend_from_slice(&digits[int_len..]);
        }
    } else {
        out.extend_from_slice(b"0.");
        out.extend(std::iter::repeat_n(b'0', (-exp - 1) as usize));
        out.extend_from_slice(digits);
    }
}

/// `x` as Redis 7.0 formats a score for a reply: `printf("%.17g")`, with
/// infinities spelled `inf` / `-inf` (e.g. `0.1` -> `0.10000000000000001`,
/// `1e300` -> `1.0000000000000001e+300`, `1.5` -> `1.5`).
pub fn format_double_like_redis(x: f64) -> Vec<u8> {
    let mut v = Vec::with_capacity(24);
    write_double_g17(&mut v, x);
    v
}

/// Appends `x` as Redis's `ld2string(.., LD_STR_HUMAN)` would print a long
/// double holding exactly `x`: `printf("%.17Lf")`, trailing zeros after the
/// point removed, then a trailing `.`, and `-0` printed as `0`; infinities
/// are `inf` / `-inf`. Returns `false` (and appends nothing) for NaN, which
/// Redis refuses to format.
///
/// Caveat: Redis computes `INCRBYFLOAT` in 80-bit `long double`, so a result
/// computed in `f64` can differ in the last digits (Redis: `10.5 + 0.1` =
/// `10.6`; in `f64` the sum prints as `10.59999999999999964`). See
/// [`crate::LongDouble`] for arithmetic that matches.
pub fn write_long_double_human(out: &mut Vec<u8>, x: f64) -> bool {
    if x.is_nan() {
        return false;
    }
    if x.is_infinite() {
        out.extend_from_slice(if x > 0.0 { b"inf" } else { b"-inf" });
        return true;
    }
    let s = format!("{x:.17}");
    let mut b = s.as_bytes();
    // There is always a '.' with 17 decimals: trim zeros then a bare '.'.
    while let Some((&b'0', rest)) = b.split_last() {
        b = rest;
    }
    if let Some((&b'.', rest)) = b.split_last() {
        b = rest;
    }
    if b == b"-0" {
        b = b"0";
    }
    out.extend_from_slice(b);
    true
}

/// [`write_long_double_human`] into a fresh vector (empty for NaN). This is
/// what `INCRBYFLOAT` / `HINCRBYFLOAT` reply for a result equal to `x`.
pub fn format_long_double_like_redis(x: f64) -> Vec<u8> {
    let mut v = Vec::new();
    write_long_double_human(&mut v, x);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(x: f64) -> String {
        String::from_utf8(format_double_like_redis(x)).unwrap()
    }

    #[test]
    fn string2ll_rules() {
        assert_eq!(parse_redis_i64(b"0"), Some(0));
        assert_eq!(parse_redis_i64(b"-1"), Some(-1));
        assert_eq!(parse_redis_i64(b"123"), Some(123));
        assert_eq!(parse_redis_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_redis_i64(b"-9223372036854775808"), Some(i64::MIN));
        for bad in [
            &b""[..],
            b"-",
            b"+1",
            b"01",
            b"00",
            b"-0",
            b" 1",
            b"1 ",
            b"1x",
            b"9223372036854775808",
            b"-9223372036854775809",
            b"18446744073709551616",
            b"000000000000000000001",
        ] {
            assert_eq!(parse_redis_i64(bad), None, "{:?}", bad);
        }
    }

    #[test]
    fn itoa_matches_std() {
        for v in [
            0i64,
            1,
            9,
            10,
            99,
            100,
            12345,
            -1,
            -10,
            i64::MAX,
            i64::MIN,
            1_000_000_000_000,
        ] {
            let mut out = Vec::new();
            write_i64(&mut out, v);
            assert_eq!(out, v.to_string().as_bytes());
        }
        for v in [0u64, 9, 10, 99, 100, u64::MAX] {
            assert_eq!(digits_u64(v), v.to_string().len());
        }
    }

    /// Expected strings are replies of a real Redis 7.0.15 to ZADD + ZSCORE.
    #[test]
    fn double_g17_matches_redis() {
        let cases: &[(f64, &str)] = &[
            (1.5, "1.5"),
            (0.1, "0.10000000000000001"),
            (1e300, "1.0000000000000001e+300"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (0.0, "0"),
            (-0.0, "-0"),
            (1.0, "1"),
            (100.0, "100"),
            (1e17, "1e+17"),
            (1e16, "10000000000000000"),
            (123456789012345678.0, "1.2345678901234568e+17"),
            (0.0001, "0.0001"),
            (0.00001, "1.0000000000000001e-05"),
            (1e-300, "1e-300"),
            (5e-324, "4.9406564584124654e-324"),
            (3.0000000000000004, "3.0000000000000004"),
            (2.5, "2.5"),
            (-1.25, "-1.25"),
            (1e21, "1e+21"),
            (12345.678, "12345.678"),
            (f64::NAN, "nan"),
            (-5.0, "-5"),
            (999999999999999.0, "999999999999999"),
            (1e15, "1000000000000000"),
            (-123456.0, "-123456"),
        ];
        for &(x, want) in cases {
            assert_eq!(g(x), want, "{x:e}");
        }
    }

    /// Expected strings are replies of a real Redis 7.0.15 to INCRBYFLOAT
    /// where the long double result equals the f64 value.
    #[test]
    fn long_double_human_matches_redis() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0"),
            (-0.0, "0"),
            (1.5, "1.5"),
            (1e17, "100000000000000000"),
            (123456789012345678.0, "123456789012345680"),
            (-2.0, "-2"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (1e-20, "0"),
            (-1e-20, "0"),
            (2.0f64.powi(-18), "0.00000381469726562"),
        ];
        for &(x, want) in cases {
            assert_eq!(
                String::from_utf8(format_long_double_like_redis(x)).unwrap(),
                want
            );
        }
        assert!(format_long_double_like_redis(f64::NAN).is_empty());
    }
}
