//! A software x87 80-bit `long double`, just enough to reproduce Redis's
//! `INCRBYFLOAT` / `HINCRBYFLOAT` results exactly on x86-64, where Redis
//! parses with `strtold`, adds in `long double` and prints with
//! `ld2string(.., LD_STR_HUMAN)` (`%.17Lf`, trailing zeros trimmed).
//!
//! Doing the same in `f64` gives different text for everyday input
//! (`10.5` + `0.1`: Redis says `10.6`, `f64` says `10.59999999999999964`),
//! hence this type.
//!
//! Representation: sign, a 64-bit significand with an explicit leading bit
//! and a binary exponent, value = `mant * 2^exp`. Results are rounded to 64
//! significant bits, ties to even, as the x87 unit does in its default mode.
//! The exponent range is the x87 one, with gradual underflow (subnormals
//! down to about 3.6e-4951); results above the largest finite value (about
//! 1.19e4932) become infinite, which Redis then rejects.

use std::cmp::Ordering;

/// Exponent (of the value's leading bit) of the largest finite x87 number.
const MAX_EXP2: i64 = 16383;
/// Exponent (of the leading bit) of the smallest normal x87 number.
const MIN_EXP2: i64 = -16382;

/// An 80-bit extended precision float (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LongDouble {
    /// A finite value `(-1)^neg * mant * 2^exp`; `mant == 0` is zero,
    /// otherwise `mant` has its top bit set.
    Finite {
        /// Sign.
        neg: bool,
        /// Significand (normalized: top bit set, or 0 for zero).
        mant: u64,
        /// Binary exponent of the significand's lowest bit.
        exp: i32,
    },
    /// Positive or negative infinity.
    Inf {
        /// Sign.
        neg: bool,
    },
    /// Not a number.
    NaN,
}

// ---------------------------------------------------------------------------
// Minimal unsigned big integers (little-endian u32 limbs), enough for exact
// decimal <-> binary conversion of x87 values (at most ~16500 bits).

#[derive(Clone, Debug, PartialEq, Eq)]
struct Big(Vec<u32>);

impl Big {
    fn from_u64(v: u64) -> Big {
        let mut b = Big(vec![v as u32, (v >> 32) as u32]);
        b.trim();
        b
    }
    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }
    fn is_zero(&self) -> bool {
        self.0.is_empty()
    }
    fn bits(&self) -> u64 {
        match self.0.last() {
            None => 0,
            Some(&top) => (self.0.len() as u64 - 1) * 32 + (32 - u64::from(top.leading_zeros())),
        }
    }
    fn bit(&self, i: u64) -> bool {
        let limb = (i / 32) as usize;
        limb < self.0.len() && (self.0[limb] >> (i % 32)) & 1 == 1
    }
    /// True if any bit below `i` is set.
    fn any_below(&self, i: u64) -> bool {
        let limb = (i / 32) as usize;
        let rem = i % 32;
        self.0.iter().take(limb.min(self.0.len())).any(|&l| l != 0)
            || (limb < self.0.len() && rem > 0 && self.0[limb] & ((1u32 << rem) - 1) != 0)
    }
    fn mul_small_add(&mut self, m: u32, a: u32) {
        let mut carry = u64::from(a);
        for l in &mut self.0 {
            let v = u64::from(*l) * u64::from(m) + carry;
            *l = v as u32;
            carry = v >> 32;
        }
        if carry != 0 {
            self.0.push(carry as u32);
        }
    }
    fn mul_pow(&mut self, base: u32, mut n: u64) {
        // base^k fitting in u32 chunks.
        let (chunk, chunk_n) = match base {
            10 => (1_000_000_000u32, 9),
            5 => (1_220_703_125u32, 13),
            _ => unreachable!("only powers of 5 and 10"),
        };
        while n >= chunk_n {
            self.mul_small_add(chunk, 0);
            n -= chunk_n;
        }
        if n > 0 {
            self.mul_small_add(base.pow(n as u32), 0);
        }
    }
    fn shl(&mut self, n: u64) {
        if self.is_zero() {
            return;
        }
        let limbs = (n / 32) as usize;
        let bits = (n % 32) as u32;
        if bits > 0 {
            let mut carry = 0u32;
            for l in &mut self.0 {
                let v = (*l << bits) | carry;
                carry = *l >> (32 - bits);
                *l = v;
            }
            if carry != 0 {
                self.0.push(carry);
            }
        }
        if limbs > 0 {
            self.0.splice(0..0, std::iter::repeat_n(0, limbs));
        }
    }
    fn shr(&mut self, n: u64) {
        let limbs = (n / 32) as usize;
        if limbs >= self.0.len() {
            self.0.clear();
            return;
        }
        self.0.drain(..limbs);
        let bits = (n % 32) as u32;
        if bits > 0 {
            let len = self.0.len();
            for i in 0..len {
                let hi = if i + 1 < len {
                    self.0[i + 1] << (32 - bits)
                } else {
                    0
                };
                self.0[i] = (self.0[i] >> bits) | hi;
            }
        }
        self.trim();
    }
    fn cmp(&self, o: &Big) -> Ordering {
        self.0
            .len()
            .cmp(&o.0.len())
            .then_with(|| self.0.iter().rev().cmp(o.0.iter().rev()))
    }
    /// self -= o, requires self >= o.
    fn sub(&mut self, o: &Big) {
        let mut borrow = 0i64;
        for i in 0..self.0.len() {
            let v = i64::from(self.0[i]) - i64::from(o.0.get(i).copied().unwrap_or(0)) - borrow;
            if v < 0 {
                self.0[i] = (v + (1 << 32)) as u32;
                borrow = 1;
            } else {
                self.0[i] = v as u32;
                borrow = 0;
            }
        }
        debug_assert_eq!(borrow, 0);
        self.trim();
    }
    /// Divides by a small number, returning the remainder.
    fn div_small(&mut self, d: u32) -> u32 {
        let mut rem = 0u64;
        for l in self.0.iter_mut().rev() {
            let v = (rem << 32) | u64::from(*l);
            *l = (v / u64::from(d)) as u32;
            rem = v % u64::from(d);
        }
        self.trim();
        rem as u32
    }
    /// Bits `from..from + 64` as an integer.
    fn low_bits_from(&self, from: u64) -> u64 {
        let mut c = self.clone();
        c.shr(from);
        c.0.iter()
            .take(2)
            .enumerate()
            .fold(0u64, |acc, (i, &l)| acc | (u64::from(l) << (32 * i)))
    }
    fn to_decimal(&self) -> Vec<u8> {
        if self.is_zero() {
            return b"0".to_vec();
        }
        let mut c = self.clone();
        let mut chunks = Vec::new();
        while !c.is_zero() {
            chunks.push(c.div_small(1_000_000_000));
        }
        let mut out = chunks.pop().expect("nonzero").to_string().into_bytes();
        for ch in chunks.iter().rev() {
            out.extend_from_slice(format!("{ch:09}").as_bytes());
        }
        out
    }
}

/// Exponent of the lowest significand bit of the smallest subnormal.
const MIN_LSB: i64 = MIN_EXP2 - 63;

/// Rounds the big integer `n` (times `2^exp`) to a 64-bit significand (fewer
/// bits for subnormal results, as the x87 unit does), ties to even, with
/// `sticky` telling whether nonzero bits were already dropped below `n`.
fn round_big(neg: bool, n: &Big, exp: i64, sticky: bool) -> LongDouble {
    let bits = n.bits();
    if bits == 0 {
        return LongDouble::Finite {
            neg,
            mant: 0,
            exp: 0,
        };
    }
    let mut drop = bits as i64 - 64;
    if exp + drop < MIN_LSB {
        drop = MIN_LSB - exp;
    }
    let (mut mant, mut e) = if drop <= 0 {
        debug_assert!(!sticky, "sticky bits need headroom");
        (n.low_bits_from(0), exp)
    } else {
        let d = drop as u64;
        let mut mant = n.low_bits_from(d);
        let half = n.bit(d - 1);
        let rest = sticky || n.any_below(d - 1);
        let mut e = exp + drop;
        if half && (rest || mant & 1 == 1) {
            mant = mant.wrapping_add(1);
            if mant == 0 {
                mant = 1 << 63;
                e += 1;
            }
        }
        (mant, e)
    };
    if mant == 0 {
        return LongDouble::Finite {
            neg,
            mant: 0,
            exp: 0,
        };
    }
    let lz = mant.leading_zeros();
    mant <<= lz;
    e -= i64::from(lz);
    if e + 63 > MAX_EXP2 {
        LongDouble::Inf { neg }
    } else {
        LongDouble::Finite {
            neg,
            mant,
            exp: e as i32,
        }
    }
}

impl LongDouble {
    /// Zero.
    pub const ZERO: LongDouble = LongDouble::Finite {
        neg: false,
        mant: 0,
        exp: 0,
    };

    /// The exact value of an integer (every `i64` fits in 64 bits).
    pub fn from_i64(v: i64) -> LongDouble {
        if v == 0 {
            return LongDouble::ZERO;
        }
        let m = v.unsigned_abs();
        let shift = m.leading_zeros();
        LongDouble::Finite {
            neg: v < 0,
            mant: m << shift,
            exp: -(shift as i32),
        }
    }

    /// The exact value of a double.
    pub fn from_f64(x: f64) -> LongDouble {
        if x.is_nan() {
            return LongDouble::NaN;
        }
        if x.is_infinite() {
            return LongDouble::Inf { neg: x < 0.0 };
        }
        let bits = x.to_bits();
        let neg = bits >> 63 == 1;
        let be = ((bits >> 52) & 0x7ff) as i64;
        let frac = bits & ((1 << 52) - 1);
        let (m, e) = if be == 0 {
            (frac, -1074)
        } else {
            (frac | (1 << 52), be - 1075)
        };
        if m == 0 {
            return LongDouble::Finite {
                neg,
                mant: 0,
                exp: 0,
            };
        }
        let shift = m.leading_zeros();
        LongDouble::Finite {
            neg,
            mant: m << shift,
            exp: (e - i64::from(shift)) as i32,
        }
    }

    /// True for NaN.
    pub fn is_nan(&self) -> bool {
        matches!(self, LongDouble::NaN)
    }

    /// True for +-infinity.
    pub fn is_infinite(&self) -> bool {
        matches!(self, LongDouble::Inf { .. })
    }

    /// True for NaN or +-infinity (Redis: "increment would produce NaN or
    /// Infinity").
    pub fn is_nan_or_inf(&self) -> bool {
        !matches!(self, LongDouble::Finite { .. })
    }

    /// Parses like Redis's `string2ld`: `strtold` on the whole string, which
    /// must not start with a blank, must be used up entirely, must not be NaN
    /// and must not overflow or underflow to zero. Accepts what `strtold`
    /// accepts: optional sign, decimal digits with optional point and
    /// exponent, hexadecimal (`0x1.8p3`), `inf` / `infinity`
    /// (case-insensitive). Strings of 5120 bytes or more are rejected
    /// (`MAX_LONG_DOUBLE_CHARS`).
    pub fn parse(s: &[u8]) -> Option<LongDouble> {
        if s.is_empty() || s.len() >= 5 * 1024 {
            return None;
        }
        let (neg, body) = match s[0] {
            b'-' => (true, &s[1..]),
            b'+' => (false, &s[1..]),
            _ => (false, s),
        };
        let lower = body.to_ascii_lowercase();
        if lower == b"inf" || lower == b"infinity" {
            return Some(LongDouble::Inf { neg });
        }
        let v = if lower.starts_with(b"0x") {
            parse_hex(neg, &body[2..])?
        } else {
            parse_dec(neg, body)?
        };
        match v {
            // ERANGE with HUGE_VAL or zero is rejected.
            LongDouble::Inf { .. } | LongDouble::NaN => None,
            LongDouble::Finite { mant: 0, .. } if underflowed(body) => None,
            v => Some(v),
        }
    }

    /// `self + other`, rounded to nearest, ties to even (also `+`).
    pub fn sum(self, other: LongDouble) -> LongDouble {
        use LongDouble::*;
        let (an, am, ae, bn, bm, be) = match (self, other) {
            (NaN, _) | (_, NaN) => return NaN,
            (Inf { neg: a }, Inf { neg: b }) => return if a == b { Inf { neg: a } } else { NaN },
            (Inf { neg }, _) | (_, Inf { neg }) => return Inf { neg },
            (
                Finite {
                    neg: an,
                    mant: am,
                    exp: ae,
                },
                Finite {
                    neg: bn,
                    mant: bm,
                    exp: be,
                },
            ) => (an, am, ae, bn, bm, be),
        };
        if am == 0 && bm == 0 {
            return Finite {
                neg: an && bn,
                mant: 0,
                exp: 0,
            };
        }
        if am == 0 {
            return other;
        }
        if bm == 0 {
            return self;
        }
        // Order by magnitude: x >= y.
        let a_big = (ae, am) >= (be, bm);
        let ((xn, xm, xe), (yn, ym, ye)) = if a_big {
            ((an, am, ae), (bn, bm, be))
        } else {
            ((bn, bm, be), (an, am, ae))
        };
        // Work with 62 extra low bits; y shifted right by the exponent gap
        // with a sticky bit for anything shifted out.
        const G: u32 = 62;
        let x = u128::from(xm) << G;
        let gap = (i64::from(xe) - i64::from(ye)) as u64;
        let y_full = u128::from(ym) << G;
        // Anything shifted out of y is "jammed" into its lowest bit: that bit
        // lies at least 60 places below the rounding position, so values on
        // either side of it round the same way (for sums and differences).
        let y = if gap >= 127 {
            1u128
        } else {
            let y = y_full >> gap;
            y | u128::from((y << gap) != y_full)
        };
        let base_exp = i64::from(xe) - i64::from(G);
        let sum = if xn == yn {
            // At most 127 bits: fits.
            x + y
        } else {
            let d = x - y;
            if d == 0 {
                return Finite {
                    neg: false,
                    mant: 0,
                    exp: 0,
                };
            }
            d
        };
        let mut n = Big(vec![
            sum as u32,
            (sum >> 32) as u32,
            (sum >> 64) as u32,
            (sum >> 96) as u32,
        ]);
        n.trim();
        round_big(xn, &n, base_exp, false)
    }

    /// The nearest `f64` (ties to even); for tests and approximate uses.
    pub fn to_f64(self) -> f64 {
        match self {
            LongDouble::NaN => f64::NAN,
            LongDouble::Inf { neg } => {
                if neg {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                }
            }
            LongDouble::Finite { .. } => {
                // Formatting exactly and reparsing is exact and simple.
                let text = String::from_utf8(self.format_exact_sci()).expect("ascii");
                text.parse().expect("valid float text")
            }
        }
    }

    /// Exact decimal text `[-]D*2^E` rendered as `[-]digits e exp10`.
    fn format_exact_sci(self) -> Vec<u8> {
        let LongDouble::Finite { neg, mant, exp } = self else {
            unreachable!()
        };
        let mut out = Vec::new();
        if neg {
            out.push(b'-');
        }
        let mut n = Big::from_u64(mant);
        let e10 = if exp >= 0 {
            n.shl(exp as u64);
            0i64
        } else {
            // mant * 2^-k = mant * 5^k / 10^k
            n.mul_pow(5, u64::from(exp.unsigned_abs()));
            i64::from(exp)
        };
        out.extend_from_slice(&n.to_decimal());
        out.extend_from_slice(format!("e{e10}").as_bytes());
        out
    }

    /// Redis's `ld2string(.., LD_STR_HUMAN)`: `%.17Lf` (exact, ties to even)
    /// with trailing zeros and then a trailing `.` removed and `-0` shown as
    /// `0`; `inf` / `-inf` for infinities. `None` for NaN (Redis refuses).
    pub fn format_human(&self) -> Option<Vec<u8>> {
        let (neg, mant, exp) = match *self {
            LongDouble::NaN => return None,
            LongDouble::Inf { neg } => {
                return Some(if neg {
                    b"-inf".to_vec()
                } else {
                    b"inf".to_vec()
                })
            }
            LongDouble::Finite { neg, mant, exp } => (neg, mant, exp),
        };
        // N = round(|value| * 10^17), ties to even.
        let mut n = Big::from_u64(mant);
        n.mul_pow(10, 17);
        if exp >= 0 {
            n.shl(exp as u64);
        } else {
            let k = u64::from(exp.unsigned_abs());
            let half = n.bit(k - 1);
            let rest = n.any_below(k - 1);
            n.shr(k);
            if half && (rest || n.bit(0)) {
                n.mul_small_add(1, 1);
            }
        }
        let mut digits = n.to_decimal();
        if digits.len() < 18 {
            let mut padded = vec![b'0'; 18 - digits.len()];
            padded.extend_from_slice(&digits);
            digits = padded;
        }
        let point = digits.len() - 17;
        let mut out = Vec::with_capacity(digits.len() + 2);
        if neg {
            out.push(b'-');
        }
        out.extend_from_slice(&digits[..point]);
        let mut frac = &digits[point..];
        while let Some((&b'0', rest)) = frac.split_last() {
            frac = rest;
        }
        if !frac.is_empty() {
            out.push(b'.');
            out.extend_from_slice(frac);
        }
        if out == b"-0" {
            out = b"0".to_vec();
        }
        Some(out)
    }
}

impl std::ops::Add for LongDouble {
    type Output = LongDouble;
    fn add(self, other: LongDouble) -> LongDouble {
        self.sum(other)
    }
}

impl std::ops::Neg for LongDouble {
    type Output = LongDouble;
    fn neg(self) -> LongDouble {
        match self {
            LongDouble::Finite { neg, mant, exp } => LongDouble::Finite {
                neg: !neg,
                mant,
                exp,
            },
            LongDouble::Inf { neg } => LongDouble::Inf { neg: !neg },
            LongDouble::NaN => LongDouble::NaN,
        }
    }
}

/// Whether a string that parsed to zero had a nonzero digit (an underflow,
/// which `strtold` reports with ERANGE and Redis rejects).
fn underflowed(body: &[u8]) -> bool {
    let digits_end = body
        .iter()
        .position(|&c| c == b'e' || c == b'E' || c == b'p' || c == b'P')
        .unwrap_or(body.len());
    let mantissa = if body.len() > 2 && body[..2].eq_ignore_ascii_case(b"0x") {
        &body[2..digits_end]
    } else {
        &body[..digits_end]
    };
    mantissa
        .iter()
        .any(|&c| c.is_ascii_alphanumeric() && c != b'0')
}

/// Decimal `strtold`: digits[.digits][e[+-]digits], whole string.
fn parse_dec(neg: bool, s: &[u8]) -> Option<LongDouble> {
    let mut i = 0;
    let mut n = Big(Vec::new());
    let mut digits = 0usize;
    let mut exp10: i64 = 0;
    let mut seen_digit = false;
    // Inputs are shorter than 5120 bytes, so no digit is ever dropped; the
    // sticky path only guards against misuse with longer input.
    const MAX_DIGITS: usize = 5120;
    let mut sticky = false;
    while i < s.len() && s[i].is_ascii_digit() {
        seen_digit = true;
        if digits < MAX_DIGITS {
            n.mul_small_add(10, u32::from(s[i] - b'0'));
            if !n.is_zero() {
                digits += 1;
            }
        } else {
            exp10 += 1;
            sticky |= s[i] != b'0';
        }
        i += 1;
    }
    if i < s.len() && s[i] == b'.' {
        i += 1;
        while i < s.len() && s[i].is_ascii_digit() {
            seen_digit = true;
            if digits < MAX_DIGITS {
                n.mul_small_add(10, u32::from(s[i] - b'0'));
                if !n.is_zero() {
                    digits += 1;
                }
                exp10 -= 1;
            } else {
                sticky |= s[i] != b'0';
            }
            i += 1;
        }
    }
    if !seen_digit {
        return None;
    }
    if i < s.len() && (s[i] == b'e' || s[i] == b'E') {
        // strtold backs off an exponent without digits ("1e" parses "1"
        // and leaves "e"): that leftover makes Redis reject the string.
        let mut j = i + 1;
        let eneg = match s.get(j) {
            Some(b'-') => {
                j += 1;
                true
            }
            Some(b'+') => {
                j += 1;
                false
            }
            _ => false,
        };
        if j >= s.len() || !s[j].is_ascii_digit() {
            return None;
        }
        let mut e: i64 = 0;
        while j < s.len() && s[j].is_ascii_digit() {
            e = (e * 10 + i64::from(s[j] - b'0')).min(1_000_000);
            j += 1;
        }
        exp10 += if eneg { -e } else { e };
        i = j;
    }
    if i != s.len() {
        return None;
    }
    if n.is_zero() {
        return Some(LongDouble::Finite {
            neg,
            mant: 0,
            exp: 0,
        });
    }
    if sticky {
        // Append a nonzero digit far below: marks "slightly more than n".
        n.mul_small_add(10, 1);
        exp10 -= 1;
    }
    // Quick range cut-offs (x87 finite values lie within 1e-4951..1.2e4932).
    let mag = digits as i64 + exp10;
    if mag > 4940 {
        return Some(LongDouble::Inf { neg });
    }
    if mag < -4960 {
        return Some(LongDouble::Finite {
            neg,
            mant: 0,
            exp: 0,
        });
    }
    Some(dec_to_ld(neg, n, exp10))
}

/// Correctly rounded `n * 10^e10`.
fn dec_to_ld(neg: bool, mut n: Big, e10: i64) -> LongDouble {
    if e10 >= 0 {
        n.mul_pow(10, e10 as u64);
        return round_big(neg, &n, 0, false);
    }
    // n / 10^k = (n / 5^k) * 2^-k. Scale n so the quotient has >= 66 bits.
    let k = e10.unsigned_abs();
    let mut den = Big::from_u64(1);
    den.mul_pow(5, k);
    let shift = (den.bits() + 66).saturating_sub(n.bits());
    n.shl(shift);
    // Long division for a quotient of at most ~67 bits.
    let qbits = n.bits().saturating_sub(den.bits()) + 1;
    let mut d = den.clone();
    d.shl(qbits);
    let mut q = Big(Vec::new());
    for _ in 0..=qbits {
        q.shl(1);
        if n.cmp(&d) != Ordering::Less {
            n.sub(&d);
            q.mul_small_add(1, 1);
        }
        d.shr(1);
    }
    let rem = !n.is_zero();
    // q has >= 66 bits, so the sticky remainder sits below the rounding bit.
    round_big(neg, &q, -(shift as i64) - k as i64, rem)
}

/// Hexadecimal `strtold` after the `0x`: hexdigits[.hexdigits][p[+-]digits].
fn parse_hex(neg: bool, s: &[u8]) -> Option<LongDouble> {
    let mut i = 0;
    let mut n = Big(Vec::new());
    let mut exp2: i64 = 0;
    let mut seen = false;
    let mut sticky = false;
    let hex = |c: u8| (c as char).to_digit(16);
    while let Some(v) = s.get(i).and_then(|&c| hex(c)) {
        seen = true;
        if n.bits() < 200 {
            n.mul_small_add(16, v);
        } else {
            exp2 += 4;
            sticky |= v != 0;
        }
        i += 1;
    }
    if s.get(i) == Some(&b'.') {
        i += 1;
        while let Some(v) = s.get(i).and_then(|&c| hex(c)) {
            seen = true;
            if n.bits() < 200 {
                n.mul_small_add(16, v);
                exp2 -= 4;
            } else {
                sticky |= v != 0;
            }
            i += 1;
        }
    }
    if !seen {
        return None;
    }
    if i < s.len() && (s[i] == b'p' || s[i] == b'P') {
        let mut j = i + 1;
        let eneg = match s.get(j) {
            Some(b'-') => {
                j += 1;
                true
            }
            Some(b'+') => {
                j += 1;
                false
            }
            _ => false,
        };
        if j >= s.len() || !s[j].is_ascii_digit() {
            return None;
        }
        let mut e: i64 = 0;
        while j < s.len() && s[j].is_ascii_digit() {
            e = (e * 10 + i64::from(s[j] - b'0')).min(1_000_000);
            j += 1;
        }
        exp2 += if eneg { -e } else { e };
        i = j;
    }
    if i != s.len() {
        return None;
    }
    if n.is_zero() {
        return Some(LongDouble::Finite {
            neg,
            mant: 0,
            exp: 0,
        });
    }
    if sticky || n.bits() <= 64 {
        // Give round_big headroom below the significand.
        n.shl(8);
        exp2 -= 8;
        if sticky {
            n.mul_small_add(1, 1);
        }
    }
    if exp2 + n.bits() as i64 > MAX_EXP2 + 2 {
        return Some(LongDouble::Inf { neg });
    }
    Some(round_big(neg, &n, exp2, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn human(v: LongDouble) -> String {
        String::from_utf8(v.format_human().unwrap()).unwrap()
    }

    fn incr(a: &str, b: &str) -> String {
        let a = LongDouble::parse(a.as_bytes()).unwrap();
        let b = LongDouble::parse(b.as_bytes()).unwrap();
        human(a + b)
    }

    /// Expected strings are `SET f a; INCRBYFLOAT f b` on Redis 7.0.15.
    #[test]
    fn incrbyfloat_matches_redis() {
        let cases = [
            ("10.5", "0.1", "10.6"),
            ("0", "0.1", "0.1"),
            ("0", "1e17", "100000000000000000"),
            ("0", "-0", "0"),
            ("0", "1.5", "1.5"),
            ("0", "3.0000000000000004", "3.0000000000000004"),
            ("0", "0.00001", "0.00001"),
            ("1", "-1", "0"),
            ("0", "-0.1", "-0.1"),
            ("0", "123456789012345678", "123456789012345678"),
            ("0", "1e-20", "0"),
            ("0", "0.3", "0.3"),
            ("0.1", "0.2", "0.3"),
            ("0", "2e-17", "0.00000000000000002"),
            ("0", "5e-18", "0"),
            ("0", "1.1", "1.1"),
            (
                "0",
                "1e300",
                "1000000000000000000008997324079559193870523944273290747938260082321265646596180935755849152083750497190350372508614274835903592556184672983913096260520748646287327135641843653294084255107606016789726652932370030551382947620994540294772781889620606179267611627097410650567187386105690089424915104006144",
            ),
        ];
        for (a, b, want) in cases {
            assert_eq!(incr(a, b), want, "{a} + {b}");
        }
    }

    #[test]
    fn parse_rules() {
        for bad in [
            "", " 1", "1 ", "abc", "1e", "1e+", ".", "-", "nan", "NaN", "1e5000", "1e-5000", "0x",
            "1.5x",
        ] {
            assert_eq!(LongDouble::parse(bad.as_bytes()), None, "{bad:?}");
        }
        for good in [
            "1",
            "+1",
            "-1.5",
            ".5",
            "5.",
            "1E3",
            "inf",
            "-Infinity",
            "0x10",
            "0x1.8p1",
            "0",
            "-0.0",
            "1e-4000",
        ] {
            assert!(LongDouble::parse(good.as_bytes()).is_some(), "{good:?}");
        }
        assert_eq!(human(LongDouble::parse(b"0x1.8p1").unwrap()), "3");
        assert!(LongDouble::parse(b"inf").unwrap().is_nan_or_inf());
    }

    #[test]
    fn exact_conversions() {
        for v in [0i64, 1, -1, 42, i64::MAX, i64::MIN] {
            assert_eq!(human(LongDouble::from_i64(v)), v.to_string());
        }
        for x in [0.1f64, 1.5, -2.25, 1e300, 5e-324, 123456.789] {
            assert_eq!(LongDouble::from_f64(x).to_f64(), x);
            assert_eq!(
                human(LongDouble::from_f64(x)).into_bytes(),
                crate::num::format_long_double_like_redis(x)
            );
        }
        let huge = LongDouble::parse(b"1e4000").unwrap();
        assert!(!huge.is_nan_or_inf());
        assert!(!(huge + huge).is_nan_or_inf());
        let max = LongDouble::parse(b"1.1e4932").unwrap();
        assert!((max + max).is_infinite());
        assert!((LongDouble::Inf { neg: false } + LongDouble::Inf { neg: true }).is_nan());
    }

    #[test]
    fn addition_rounds_to_nearest_even() {
        // 2^64 + 1 is not representable: rounds to 2^64 (tie -> even).
        let two64 = LongDouble::parse(b"18446744073709551616").unwrap();
        let one = LongDouble::from_i64(1);
        assert_eq!(human(two64 + one), "18446744073709551616");
        // 2^64 + 3 -> 2^64 + 4 (tie -> even).
        assert_eq!(
            human(two64 + LongDouble::from_i64(3)),
            "18446744073709551620"
        );
        // Cancellation.
        let a = LongDouble::parse(b"1.0000000000000000001").unwrap();
        assert_eq!(human(a + LongDouble::from_i64(-1)), "0");
        assert_eq!(human(one + -one), "0");
    }
}
