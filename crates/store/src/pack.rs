//! Dense packings of short strings for inline storage.
//!
//! * `pack6`: 6 bits per character for strings over `[0-9a-zA-Z:_]` (the
//!   alphabet of most Redis key names and many short values); 20 characters
//!   fit in 15 bytes.
//! * `pack7`: 7 bits per character for any ASCII string; 17 characters fit in
//!   15 bytes.
//!
//! Bits are written LSB-first. Packings are canonical: a given input has
//! exactly one packed form, so packed bytes can be compared for equality.

const NO: u8 = 0xff;

const fn alphabet_index() -> [u8; 256] {
    let mut t = [NO; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    i = 0;
    while i < 26 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 36 + i as u8;
        i += 1;
    }
    t[b':' as usize] = 62;
    t[b'_' as usize] = 63;
    t
}

static INDEX6: [u8; 256] = alphabet_index();
static ALPHABET6: &[u8; 64] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ:_";

/// Bytes needed to pack `n` characters at `bits` bits each.
#[inline]
pub const fn packed_len(n: usize, bits: usize) -> usize {
    (n * bits).div_ceil(8)
}

/// Maximum characters that fit in `cap` bytes at `bits` bits each.
#[inline]
pub const fn max_chars(cap: usize, bits: usize) -> usize {
    cap * 8 / bits
}

/// Packs `s` at 6 bits per char into `out`; false if a char is outside the
/// alphabet. `out` must hold `packed_len(s.len(), 6)` bytes.
///
/// Four characters make three whole bytes, so full groups of four are done
/// with one 24-bit word each and only the last 0-3 characters go bit by bit.
pub fn pack6(s: &[u8], out: &mut [u8]) -> bool {
    let mut o = 0;
    let mut groups = s.chunks_exact(4);
    for g in &mut groups {
        let (a, b, c, d) = (
            INDEX6[g[0] as usize] as u32,
            INDEX6[g[1] as usize] as u32,
            INDEX6[g[2] as usize] as u32,
            INDEX6[g[3] as usize] as u32,
        );
        // Valid indexes are < 64; NO (0xff) has the top bits set.
        if (a | b | c | d) & 0xc0 != 0 {
            return false;
        }
        let w = a | (b << 6) | (c << 12) | (d << 18);
        out[o..o + 3].copy_from_slice(&w.to_le_bytes()[..3]);
        o += 3;
    }
    let mut acc: u32 = 0;
    let mut nbits = 0;
    for &c in groups.remainder() {
        let v = INDEX6[c as usize];
        if v == NO {
            return false;
        }
        acc |= (v as u32) << nbits;
        nbits += 6;
        while nbits >= 8 {
            out[o] = acc as u8;
            o += 1;
            acc >>= 8;
            nbits -= 8;
        }
    }
    if nbits > 0 {
        out[o] = acc as u8;
    }
    true
}

/// Unpacks `n` characters packed by [`pack6`] into `out[..n]`.
pub fn unpack6(packed: &[u8], n: usize, out: &mut [u8]) {
    let full = n / 4;
    for (g, o) in packed[..full * 3]
        .chunks_exact(3)
        .zip(out[..full * 4].chunks_exact_mut(4))
    {
        let w = g[0] as u32 | (g[1] as u32) << 8 | (g[2] as u32) << 16;
        o[0] = ALPHABET6[(w & 63) as usize];
        o[1] = ALPHABET6[((w >> 6) & 63) as usize];
        o[2] = ALPHABET6[((w >> 12) & 63) as usize];
        o[3] = ALPHABET6[(w >> 18) as usize];
    }
    let mut acc: u32 = 0;
    let mut nbits = 0;
    let mut i = full * 3;
    for slot in out[full * 4..n].iter_mut() {
        if nbits < 6 {
            acc |= (packed[i] as u32) << nbits;
            i += 1;
            nbits += 8;
        }
        *slot = ALPHABET6[(acc & 63) as usize];
        acc >>= 6;
        nbits -= 6;
    }
}

/// Packs ASCII `s` at 7 bits per char; false if a byte is >= 0x80.
///
/// Eight characters make seven whole bytes: full groups go through one
/// 64-bit word each.
pub fn pack7(s: &[u8], out: &mut [u8]) -> bool {
    let mut o = 0;
    let mut groups = s.chunks_exact(8);
    for g in &mut groups {
        let w = u64::from_le_bytes(g.try_into().unwrap());
        if w & 0x8080_8080_8080_8080 != 0 {
            return false;
        }
        let mut v = 0u64;
        for i in 0..8 {
            v |= ((w >> (8 * i)) & 0x7f) << (7 * i);
        }
        out[o..o + 7].copy_from_slice(&v.to_le_bytes()[..7]);
        o += 7;
    }
    let mut acc: u32 = 0;
    let mut nbits = 0;
    for &c in groups.remainder() {
        if c >= 0x80 {
            return false;
        }
        acc |= (c as u32) << nbits;
        nbits += 7;
        while nbits >= 8 {
            out[o] = acc as u8;
            o += 1;
            acc >>= 8;
            nbits -= 8;
        }
    }
    if nbits > 0 {
        out[o] = acc as u8;
    }
    true
}

/// Unpacks `n` characters packed by [`pack7`] into `out[..n]`.
pub fn unpack7(packed: &[u8], n: usize, out: &mut [u8]) {
    let full = n / 8;
    for (g, o) in packed[..full * 7]
        .chunks_exact(7)
        .zip(out[..full * 8].chunks_exact_mut(8))
    {
        let mut b = [0u8; 8];
        b[..7].copy_from_slice(g);
        let v = u64::from_le_bytes(b);
        for (i, c) in o.iter_mut().enumerate() {
            *c = ((v >> (7 * i)) & 0x7f) as u8;
        }
    }
    let mut acc: u32 = 0;
    let mut nbits = 0;
    let mut i = full * 7;
    for slot in out[full * 8..n].iter_mut() {
        if nbits < 7 {
            acc |= (packed[i] as u32) << nbits;
            i += 1;
            nbits += 8;
        }
        *slot = (acc & 127) as u8;
        acc >>= 7;
        nbits -= 7;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn sizes() {
        assert_eq!(max_chars(15, 6), 20);
        assert_eq!(max_chars(15, 7), 17);
        assert_eq!(max_chars(14, 6), 18);
        assert_eq!(max_chars(14, 7), 16);
        assert_eq!(packed_len(12, 6), 9);
        assert_eq!(packed_len(14, 7), 13);
    }

    proptest! {
        #[test]
        fn roundtrip6(s in "[0-9a-zA-Z:_]{0,20}") {
            let b = s.as_bytes();
            let mut p = [0u8; 15];
            prop_assert!(pack6(b, &mut p));
            let mut o = [0u8; 20];
            unpack6(&p, b.len(), &mut o);
            prop_assert_eq!(&o[..b.len()], b);
        }

        #[test]
        fn roundtrip7(b in proptest::collection::vec(0u8..128, 0..17)) {
            let mut p = [0u8; 15];
            prop_assert!(pack7(&b, &mut p));
            let mut o = [0u8; 17];
            unpack7(&p, b.len(), &mut o);
            prop_assert_eq!(&o[..b.len()], &b[..]);
        }
    }

    /// Bit-by-bit reference packing (LSB first), the format's definition.
    fn reference(vals: &[u8], bits: usize) -> Vec<u8> {
        let mut out = vec![0u8; packed_len(vals.len(), bits)];
        for (i, &v) in vals.iter().enumerate() {
            for b in 0..bits {
                if v >> b & 1 == 1 {
                    let p = i * bits + b;
                    out[p / 8] |= 1 << (p % 8);
                }
            }
        }
        out
    }

    proptest! {
        #[test]
        fn long6_matches_reference(s in "[0-9a-zA-Z:_]{0,100}", bad in 0usize..200) {
            let b = s.as_bytes();
            let mut p = vec![0u8; packed_len(b.len(), 6)];
            prop_assert!(pack6(b, &mut p));
            let idx: Vec<u8> = b.iter().map(|&c| INDEX6[c as usize]).collect();
            prop_assert_eq!(&p, &reference(&idx, 6));
            let mut o = vec![0u8; b.len()];
            unpack6(&p, b.len(), &mut o);
            prop_assert_eq!(&o[..], b);
            // one character outside the alphabet anywhere is refused
            if !b.is_empty() {
                let mut c = b.to_vec();
                c[bad % b.len()] = b'-';
                prop_assert!(!pack6(&c, &mut p));
            }
        }

        #[test]
        fn long7_matches_reference(b in proptest::collection::vec(0u8..128, 0..100), bad in 0usize..200) {
            let mut p = vec![0u8; packed_len(b.len(), 7)];
            prop_assert!(pack7(&b, &mut p));
            prop_assert_eq!(&p, &reference(&b, 7));
            let mut o = vec![0u8; b.len()];
            unpack7(&p, b.len(), &mut o);
            prop_assert_eq!(&o, &b);
            if !b.is_empty() {
                let mut c = b.clone();
                c[bad % b.len()] |= 0x80;
                prop_assert!(!pack7(&c, &mut p));
            }
        }
    }

    #[test]
    fn rejects() {
        let mut p = [0u8; 15];
        assert!(!pack6(b"a-b", &mut p));
        assert!(!pack7(&[0x80], &mut p));
    }
}
