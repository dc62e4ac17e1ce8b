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
pub fn pack6(s: &[u8], out: &mut [u8]) -> bool {
    let mut acc: u32 = 0;
    let mut nbits = 0;
    let mut o = 0;
    for &c in s {
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

pub fn unpack6(packed: &[u8], n: usize, out: &mut [u8]) {
    let mut acc: u32 = 0;
    let mut nbits = 0;
    let mut i = 0;
    for slot in out.iter_mut().take(n) {
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
pub fn pack7(s: &[u8], out: &mut [u8]) -> bool {
    let mut acc: u32 = 0;
    let mut nbits = 0;
    let mut o = 0;
    for &c in s {
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

pub fn unpack7(packed: &[u8], n: usize, out: &mut [u8]) {
    let mut acc: u32 = 0;
    let mut nbits = 0;
    let mut i = 0;
    for slot in out.iter_mut().take(n) {
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

    #[test]
    fn rejects() {
        let mut p = [0u8; 15];
        assert!(!pack6(b"a-b", &mut p));
        assert!(!pack7(&[0x80], &mut p));
    }
}
