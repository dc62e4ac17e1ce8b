//! C `printf`-style number formatting (`%.14g`, `%.17g`) as glibc prints
//! it, for `cjson.encode` (lua-cjson's default `%.14g`), arguments of
//! `redis.call` (`%.17g`) and `struct`/`cmsgpack` helpers.
//!
//! Invariant: `fmt_g(x, p)` equals glibc's `printf("%.<p>g", x)` for every
//! finite `x`; infinities print `inf`/`-inf`, NaNs `nan`/`-nan` by sign bit.

/// `%.<prec>g` of `x`, appended to `out`.
pub fn write_g(out: &mut Vec<u8>, x: f64, prec: usize) {
    let prec = prec.max(1);
    if x.is_nan() {
        out.extend_from_slice(if x.is_sign_negative() {
            b"-nan"
        } else {
            b"nan"
        });
        return;
    }
    if x.is_infinite() {
        out.extend_from_slice(if x < 0.0 { b"-inf" } else { b"inf" });
        return;
    }
    if x == 0.0 {
        out.extend_from_slice(if x.is_sign_negative() { b"-0" } else { b"0" });
        return;
    }
    // The exponent after rounding to `prec` significant digits.
    let sci = format!("{:.*e}", prec - 1, x);
    let (mant, exp) = sci.split_once('e').expect("{:e} has an exponent");
    let exp: i32 = exp.parse().expect("{:e} exponent is an integer");
    if exp < -4 || exp >= prec as i32 {
        out.extend_from_slice(strip_zeros(mant).as_bytes());
        out.push(b'e');
        out.push(if exp < 0 { b'-' } else { b'+' });
        let a = exp.unsigned_abs();
        if a < 10 {
            out.push(b'0');
        }
        out.extend_from_slice(a.to_string().as_bytes());
    } else {
        let decimals = (prec as i32 - 1 - exp).max(0) as usize;
        let fixed = format!("{:.*}", decimals, x);
        out.extend_from_slice(strip_zeros(&fixed).as_bytes());
    }
}

/// `%.<prec>g` of `x` as a string.
pub fn fmt_g(x: f64, prec: usize) -> String {
    let mut v = Vec::with_capacity(24);
    write_g(&mut v, x, prec);
    String::from_utf8(v).expect("ASCII")
}

fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// `(long long)x` as x86-64 computes it: values out of range and NaN give
/// `i64::MIN` (Redis converts Lua numbers to integer replies this way).
pub fn c_trunc_i64(x: f64) -> i64 {
    if x.is_nan() || !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&x) {
        i64::MIN
    } else {
        x as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g_formats_like_glibc() {
        let cases: &[(f64, usize, &str)] = &[
            (0.1, 17, "0.10000000000000001"),
            (0.1, 14, "0.1"),
            (3.0, 17, "3"),
            (1e20, 17, "1e+20"),
            (1e15, 14, "1e+15"),
            (123456789012345.0, 14, "1.2345678901234e+14"),
            (12345678901234.0, 14, "12345678901234"),
            (0.0001, 14, "0.0001"),
            (0.00001, 14, "1e-05"),
            (-2.5, 14, "-2.5"),
            (1.0 / 3.0, 14, "0.33333333333333"),
            (100.0, 14, "100"),
            (f64::INFINITY, 14, "inf"),
            (-0.0, 14, "-0"),
            (1e23, 17, "9.9999999999999992e+22"),
        ];
        for &(x, p, s) in cases {
            assert_eq!(fmt_g(x, p), s, "{x} %.{p}g");
        }
    }

    #[test]
    fn trunc_like_x86() {
        assert_eq!(c_trunc_i64(3.99), 3);
        assert_eq!(c_trunc_i64(-3.99), -3);
        assert_eq!(c_trunc_i64(f64::NAN), i64::MIN);
        assert_eq!(c_trunc_i64(1e300), i64::MIN);
    }
}
