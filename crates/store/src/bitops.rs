//! Bit-level logic of the bitmap commands (SETBIT, GETBIT, BITCOUNT, BITPOS,
//! BITOP, BITFIELD) over plain byte strings.
//!
//! Bit numbering follows Redis: bit 0 is the most significant bit of byte 0,
//! so bit `n` lives in byte `n / 8` under mask `0x80 >> (n % 8)`. Bits past
//! the end of a string read as zero. Bitfields are read and written most
//! significant bit first starting at their offset.

/// Value of bit `off` (0 past the end).
#[inline]
pub fn get_bit(s: &[u8], off: u64) -> u8 {
    let byte = (off >> 3) as usize;
    match s.get(byte) {
        Some(b) => (b >> (7 - (off & 7))) & 1,
        None => 0,
    }
}

/// Sets bit `off` of `buf` (which must be long enough) to `on`; returns the
/// old bit.
#[inline]
pub fn set_bit(buf: &mut [u8], off: u64, on: bool) -> u8 {
    let byte = (off >> 3) as usize;
    let mask = 0x80u8 >> (off & 7);
    let old = (buf[byte] & mask != 0) as u8;
    if on {
        buf[byte] |= mask;
    } else {
        buf[byte] &= !mask;
    }
    old
}

/// Number of set bits.
pub fn popcount(s: &[u8]) -> u64 {
    let mut chunks = s.chunks_exact(8);
    let mut n: u64 = 0;
    for c in &mut chunks {
        n += u64::from_ne_bytes(c.try_into().unwrap()).count_ones() as u64;
    }
    for b in chunks.remainder() {
        n += b.count_ones() as u64;
    }
    n
}

/// Set bits among bits `first..=last` of `s` (both within the string).
pub fn popcount_bits(s: &[u8], first: u64, last: u64) -> u64 {
    if first > last {
        return 0;
    }
    let (fb, lb) = ((first >> 3) as usize, (last >> 3) as usize);
    let head_mask = 0xffu8 >> (first & 7);
    let tail_mask = 0xffu8 << (7 - (last & 7));
    if fb == lb {
        return (s[fb] & head_mask & tail_mask).count_ones() as u64;
    }
    (s[fb] & head_mask).count_ones() as u64
        + popcount(&s[fb + 1..lb])
        + (s[lb] & tail_mask).count_ones() as u64
}

/// First bit equal to `bit` among bits `first..=last` of `s` (both within
/// the string), as an absolute bit position.
pub fn bitpos_bits(s: &[u8], bit: bool, first: u64, last: u64) -> Option<u64> {
    if first > last {
        return None;
    }
    // Look for a 1 in (byte ^ flip).
    let flip = if bit { 0u8 } else { 0xff };
    let (fb, lb) = ((first >> 3) as usize, (last >> 3) as usize);
    let head_mask = 0xffu8 >> (first & 7);
    let tail_mask = 0xffu8 << (7 - (last & 7));
    let found = |i: usize, v: u8| Some(i as u64 * 8 + v.leading_zeros() as u64);
    if fb == lb {
        let v = (s[fb] ^ flip) & head_mask & tail_mask;
        return if v != 0 { found(fb, v) } else { None };
    }
    let v = (s[fb] ^ flip) & head_mask;
    if v != 0 {
        return found(fb, v);
    }
    let mid = &s[fb + 1..lb];
    let skip = if bit { 0u8 } else { 0xff };
    let skip64 = u64::from_ne_bytes([skip; 8]);
    let mut i = 0;
    while i + 8 <= mid.len() {
        if u64::from_ne_bytes(mid[i..i + 8].try_into().unwrap()) != skip64 {
            break;
        }
        i += 8;
    }
    while i < mid.len() {
        let v = mid[i] ^ flip;
        if v != 0 {
            return found(fb + 1 + i, v);
        }
        i += 1;
    }
    let v = (s[lb] ^ flip) & tail_mask;
    if v != 0 {
        return found(lb, v);
    }
    None
}

/// A BITOP operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BitOp {
    And,
    Or,
    Xor,
    Not,
}

/// BITOP over `srcs` (missing keys as empty strings, which read as zero
/// bytes). The result is as long as the longest source.
pub fn bitop(op: BitOp, srcs: &[&[u8]]) -> Vec<u8> {
    let maxlen = srcs.iter().map(|s| s.len()).max().unwrap_or(0);
    if maxlen == 0 {
        return Vec::new();
    }
    let mut out = vec![0u8; maxlen];
    let first = srcs[0];
    out[..first.len()].copy_from_slice(first);
    match op {
        BitOp::Not => {
            for b in out.iter_mut() {
                *b = !*b;
            }
        }
        BitOp::And => {
            for s in &srcs[1..] {
                for (o, b) in out.iter_mut().zip(s.iter()) {
                    *o &= b;
                }
                for o in out.iter_mut().skip(s.len()) {
                    *o = 0;
                }
            }
        }
        BitOp::Or => {
            for s in &srcs[1..] {
                for (o, b) in out.iter_mut().zip(s.iter()) {
                    *o |= b;
                }
            }
        }
        BitOp::Xor => {
            for s in &srcs[1..] {
                for (o, b) in out.iter_mut().zip(s.iter()) {
                    *o ^= b;
                }
            }
        }
    }
    out
}

/// One step of BITOP into `out` (as long as the longest source, zeroed on
/// entry): the first source is copied (and inverted for NOT), later ones are
/// combined; bytes past a source's end count as zero.
pub fn bitop_fold(op: BitOp, out: &mut [u8], src: &[u8], first: bool) {
    if first {
        out[..src.len()].copy_from_slice(src);
        if op == BitOp::Not {
            for b in out.iter_mut() {
                *b = !*b;
            }
        }
        return;
    }
    match op {
        BitOp::And => {
            for (o, b) in out.iter_mut().zip(src.iter()) {
                *o &= b;
            }
            for o in out.iter_mut().skip(src.len()) {
                *o = 0;
            }
        }
        BitOp::Or => {
            for (o, b) in out.iter_mut().zip(src.iter()) {
                *o |= b;
            }
        }
        BitOp::Xor => {
            for (o, b) in out.iter_mut().zip(src.iter()) {
                *o ^= b;
            }
        }
        BitOp::Not => {}
    }
}

/// Reads an unsigned bitfield of `bits` (1..=64) bits at bit `off`; bits
/// past the end of `s` read as zero.
pub fn get_unsigned(s: &[u8], off: u64, bits: u32) -> u64 {
    let byte = (off >> 3) as usize;
    let fb = (off & 7) as u32;
    let n = (fb + bits).div_ceil(8) as usize;
    let mut acc: u128 = 0;
    for i in 0..n {
        let b = byte
            .checked_add(i)
            .and_then(|j| s.get(j))
            .copied()
            .unwrap_or(0);
        acc = (acc << 8) | b as u128;
    }
    let shift = n as u32 * 8 - fb - bits;
    ((acc >> shift) & ((1u128 << bits) - 1)) as u64
}

/// Bit-by-bit reference of [`get_unsigned`] (tests).
#[cfg(test)]
fn get_unsigned_naive(s: &[u8], off: u64, bits: u32) -> u64 {
    let mut v: u64 = 0;
    for i in 0..bits as u64 {
        v = (v << 1) | get_bit(s, off + i) as u64;
    }
    v
}

/// Reads a signed (two's complement) bitfield of `bits` (1..=64) bits.
pub fn get_signed(s: &[u8], off: u64, bits: u32) -> i64 {
    let u = get_unsigned(s, off, bits);
    if bits == 64 {
        return u as i64;
    }
    let shift = 64 - bits;
    ((u << shift) as i64) >> shift
}

/// Writes the low `bits` bits of `v` at bit `off` of `buf` (which must be
/// long enough).
pub fn set_field(buf: &mut [u8], off: u64, bits: u32, v: u64) {
    let byte = (off >> 3) as usize;
    let fb = (off & 7) as u32;
    let n = (fb + bits).div_ceil(8) as usize;
    let cells = &mut buf[byte..byte + n];
    let mut acc: u128 = 0;
    for &b in cells.iter() {
        acc = (acc << 8) | b as u128;
    }
    let shift = n as u32 * 8 - fb - bits;
    let mask = ((1u128 << bits) - 1) << shift;
    acc = (acc & !mask) | (((v as u128) << shift) & mask);
    for c in cells.iter_mut().rev() {
        *c = acc as u8;
        acc >>= 8;
    }
}

/// BITFIELD OVERFLOW behaviour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overflow {
    Wrap,
    Sat,
    Fail,
}

/// Result of a bitfield SET/INCRBY: the value to store, or None when the
/// operation overflows under [`Overflow::Fail`].
/// `value` is the current value (INCRBY) or the value to set (SET, with
/// `incr` = 0), as Redis checks both the same way.
///
/// The overflow test is Redis 7.0's `checkSignedBitfieldOverflow`, with
/// its wrapping arithmetic: exact for every INCRBY, but a SET of a value
/// more than `i64::MAX` below the type's maximum (`SET i8 0
/// -9223372036854775808`) wraps `max - value` negative and counts as an
/// overflow *upwards*, so SAT stores the maximum there (WRAP and FAIL give
/// the same result either way).
pub fn signed_update(value: i64, incr: i64, bits: u32, ow: Overflow) -> Option<i64> {
    let max: i64 = if bits == 64 {
        i64::MAX
    } else {
        (1i64 << (bits - 1)) - 1
    };
    let min = -max - 1;
    let maxincr = (max as u64).wrapping_sub(value as u64) as i64;
    let minincr = min.wrapping_sub(value);
    let high =
        value > max || (bits != 64 && incr > maxincr) || (value >= 0 && incr > 0 && incr > maxincr);
    let low = !high
        && (value < min
            || (bits != 64 && incr < minincr)
            || (value < 0 && incr < 0 && incr < minincr));
    if !high && !low {
        return Some(value.wrapping_add(incr));
    }
    match ow {
        Overflow::Fail => None,
        Overflow::Sat => Some(if high { max } else { min }),
        Overflow::Wrap => {
            let c = (value as u64).wrapping_add(incr as u64);
            if bits == 64 {
                return Some(c as i64);
            }
            let shift = 64 - bits;
            Some(((c << shift) as i64) >> shift)
        }
    }
}

/// Unsigned counterpart of [`signed_update`] (`bits` <= 63). Like Redis, a
/// SET of a negative value counts as an overflow upwards (its unsigned
/// reinterpretation is huge), so SAT stores the maximum.
pub fn unsigned_update(value: u64, incr: i64, bits: u32, ow: Overflow) -> Option<u64> {
    let max: u64 = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let sum = value as i128 + incr as i128;
    let high = value > max || sum > max as i128;
    let low = !high && sum < 0;
    if !high && !low {
        return Some(sum as u64);
    }
    match ow {
        Overflow::Fail => None,
        Overflow::Sat => Some(if high { max } else { 0 }),
        Overflow::Wrap => {
            let c = value.wrapping_add(incr as u64);
            Some(if bits == 64 { c } else { c & max })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn naive_bits(s: &[u8]) -> Vec<u8> {
        (0..s.len() as u64 * 8).map(|i| get_bit(s, i)).collect()
    }

    #[test]
    fn bits_msb_first() {
        let mut b = vec![0u8; 2];
        assert_eq!(set_bit(&mut b, 1, true), 0);
        assert_eq!(b, [0x40, 0]);
        assert_eq!(set_bit(&mut b, 15, true), 0);
        assert_eq!(b, [0x40, 1]);
        assert_eq!(set_bit(&mut b, 1, false), 1);
        assert_eq!(get_bit(&b, 15), 1);
        assert_eq!(get_bit(&b, 1000), 0);
    }

    #[test]
    fn fields() {
        let mut b = vec![0u8; 4];
        set_field(&mut b, 3, 8, 0xab);
        assert_eq!(get_unsigned(&b, 3, 8), 0xab);
        assert_eq!(get_signed(&b, 3, 8), 0xab_u8 as i8 as i64);
        assert_eq!(get_unsigned(&b, 100, 8), 0);
        assert_eq!(signed_update(127, 1, 8, Overflow::Wrap), Some(-128));
        assert_eq!(signed_update(127, 1, 8, Overflow::Sat), Some(127));
        assert_eq!(signed_update(127, 1, 8, Overflow::Fail), None);
        assert_eq!(signed_update(-128, -1, 8, Overflow::Sat), Some(-128));
        // Redis 7.0's wrapping check: a SET far below the range saturates
        // to the maximum; just inside that wrap it saturates to the minimum.
        assert_eq!(signed_update(i64::MIN, 0, 8, Overflow::Sat), Some(127));
        assert_eq!(
            signed_update(i64::MIN + 127, 0, 8, Overflow::Sat),
            Some(127)
        );
        assert_eq!(
            signed_update(i64::MIN + 128, 0, 8, Overflow::Sat),
            Some(-128)
        );
        assert_eq!(signed_update(i64::MIN, 0, 8, Overflow::Wrap), Some(0));
        assert_eq!(signed_update(i64::MIN, 0, 8, Overflow::Fail), None);
        assert_eq!(
            signed_update(i64::MAX, 1, 64, Overflow::Wrap),
            Some(i64::MIN)
        );
        assert_eq!(unsigned_update(255, 1, 8, Overflow::Wrap), Some(0));
        assert_eq!(unsigned_update(0, -1, 8, Overflow::Wrap), Some(255));
        assert_eq!(unsigned_update(0, -1, 8, Overflow::Sat), Some(0));
        // SET u8 -5: the value itself is out of range (as unsigned).
        assert_eq!(
            unsigned_update(-5i64 as u64, 0, 8, Overflow::Wrap),
            Some(251)
        );
        assert_eq!(
            unsigned_update(-5i64 as u64, 0, 8, Overflow::Sat),
            Some(255)
        );
    }

    proptest! {
        #[test]
        fn popcount_matches_naive(s in proptest::collection::vec(any::<u8>(), 0..80), a in 0u64..700, b in 0u64..700) {
            let bits = naive_bits(&s);
            prop_assert_eq!(popcount(&s), bits.iter().map(|&x| x as u64).sum::<u64>());
            if !s.is_empty() {
                let n = s.len() as u64 * 8;
                let (f, l) = (a % n, b % n);
                let want: u64 = if f <= l { bits[f as usize..=l as usize].iter().map(|&x| x as u64).sum() } else { 0 };
                prop_assert_eq!(popcount_bits(&s, f, l), want);
                for bit in [false, true] {
                    let want = if f <= l {
                        (f..=l).find(|&i| bits[i as usize] == bit as u8)
                    } else { None };
                    prop_assert_eq!(bitpos_bits(&s, bit, f, l), want);
                }
            }
        }

        /// Redis's wrapping overflow check is exact whenever the current
        /// value is inside the type's range (every INCRBY, and every SET
        /// of a value not more than i64::MAX below the maximum).
        #[test]
        fn signed_update_is_exact_in_range(bits in 1u32..=64, v in any::<i64>(), incr in any::<i64>(), ow in 0usize..3) {
            let max: i64 = if bits == 64 { i64::MAX } else { (1i64 << (bits - 1)) - 1 };
            let min = -max - 1;
            let value = if bits == 64 { v } else { min + v.rem_euclid(1i64 << (bits - 1) << 1) };
            let ow = [Overflow::Wrap, Overflow::Sat, Overflow::Fail][ow];
            let sum = value as i128 + incr as i128;
            let want = if sum >= min as i128 && sum <= max as i128 {
                Some(sum as i64)
            } else {
                match ow {
                    Overflow::Fail => None,
                    Overflow::Sat => Some(if sum > max as i128 { max } else { min }),
                    Overflow::Wrap => {
                        let shift = 64 - bits;
                        Some((((sum as u64) << shift) as i64) >> shift)
                    }
                }
            };
            prop_assert_eq!(signed_update(value, incr, bits, ow), want);
            if v as i128 >= max as i128 - i64::MAX as i128 {
                prop_assert_eq!(
                    signed_update(v, 0, bits, ow).is_some_and(|x| x == v),
                    v >= min && v <= max
                );
            }
        }

        #[test]
        fn field_roundtrip(s in proptest::collection::vec(any::<u8>(), 17..24), off in 0u64..64, bits in 1u32..=64, v in any::<u64>()) {
            let mut b = s.clone();
            set_field(&mut b, off, bits, v);
            let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
            prop_assert_eq!(get_unsigned(&b, off, bits), v & mask);
            prop_assert_eq!(get_unsigned_naive(&b, off, bits), v & mask);
            for o in [0, off / 2, off + 60, 200] {
                prop_assert_eq!(get_unsigned(&b, o, bits), get_unsigned_naive(&b, o, bits));
            }
            // bits outside the field are untouched
            for i in 0..b.len() as u64 * 8 {
                if i < off || i >= off + bits as u64 {
                    prop_assert_eq!(get_bit(&b, i), get_bit(&s, i));
                }
            }
        }

        #[test]
        fn bitop_matches_naive(a in proptest::collection::vec(any::<u8>(), 0..20), b in proptest::collection::vec(any::<u8>(), 0..20)) {
            let n = a.len().max(b.len());
            let at = |v: &Vec<u8>, i: usize| v.get(i).copied().unwrap_or(0);
            let and: Vec<u8> = (0..n).map(|i| at(&a, i) & at(&b, i)).collect();
            let or: Vec<u8> = (0..n).map(|i| at(&a, i) | at(&b, i)).collect();
            let xor: Vec<u8> = (0..n).map(|i| at(&a, i) ^ at(&b, i)).collect();
            prop_assert_eq!(bitop(BitOp::And, &[&a, &b]), and);
            prop_assert_eq!(bitop(BitOp::Or, &[&a, &b]), or);
            prop_assert_eq!(bitop(BitOp::Xor, &[&a, &b]), xor);
            let not: Vec<u8> = a.iter().map(|x| !x).collect();
            prop_assert_eq!(bitop(BitOp::Not, &[&a]), not);
            for op in [BitOp::And, BitOp::Or, BitOp::Xor] {
                let mut out = vec![0u8; n];
                bitop_fold(op, &mut out, &a, true);
                bitop_fold(op, &mut out, &b, false);
                prop_assert_eq!(out, bitop(op, &[&a, &b]));
            }
        }
    }
}
