//! LZF, the block format Redis compresses quicklist nodes (and RDB strings)
//! with, so compressed nodes can be saved and loaded as they are.
//!
//! A compressed block is a sequence of items, each starting with a control
//! byte `c`:
//! * `c < 32`: a literal run; the next `c + 1` bytes are copied as they are;
//! * otherwise a back-reference: `len = c >> 5` (1..=7; 7 means "add the
//!   next byte"), then one byte `lo`; the distance back from the output end
//!   is `((c & 31) << 8 | lo) + 1` (1..=8192) and `len + 2` bytes are copied
//!   from there (3..=264 bytes; the source may overlap the bytes written).
//!
//! [`compress`] is a greedy single-pass matcher over a 3-byte hash table;
//! any encoder producing valid items is compatible with every decoder, so
//! its output need not equal Redis's byte for byte, only decode the same.
//! [`decompress`] checks every item against the input and the expected size
//! and never reads or writes out of bounds, whatever the input.

use std::cell::RefCell;

const HASH_LOG: u32 = 13;
const MAX_LIT: usize = 32;
const MAX_OFF: usize = 1 << 13;
const MAX_REF: usize = (1 << 8) + (1 << 3);

thread_local! {
    /// Last position of each 3-byte hash. Never cleared: a stale entry from
    /// an earlier input is only used after comparing the bytes it points to
    /// in the current input, so any candidate that passes is a real match.
    static TABLE: RefCell<Box<[u32]>> = RefCell::new(vec![0u32; 1 << HASH_LOG].into_boxed_slice());
}

#[inline]
fn hash3(b: &[u8]) -> usize {
    let v = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
    (v.wrapping_mul(2654435761) >> (32 - HASH_LOG)) as usize
}

fn flush_literals(out: &mut Vec<u8>, mut lit: &[u8]) {
    while !lit.is_empty() {
        let k = lit.len().min(MAX_LIT);
        out.push((k - 1) as u8);
        out.extend_from_slice(&lit[..k]);
        lit = &lit[k..];
    }
}

/// Compress `input`; `None` when the result would be longer than `limit`
/// bytes (the caller's "not worth it" bound; the work stops there).
pub fn compress(input: &[u8], limit: usize) -> Option<Vec<u8>> {
    TABLE.with(|t| compress_with(&mut t.borrow_mut(), input, limit))
}

fn compress_with(table: &mut [u32], input: &[u8], limit: usize) -> Option<Vec<u8>> {
    let n = input.len();
    let mut out = Vec::with_capacity(limit.min(n + n / 32 + 1));
    let mut lit = 0usize;
    let mut ip = 0usize;
    while ip + 3 <= n {
        let h = hash3(&input[ip..]);
        let cand = table[h] as usize;
        table[h] = ip as u32;
        let dist = ip.wrapping_sub(cand);
        if cand < ip && dist <= MAX_OFF && input[cand..cand + 3] == input[ip..ip + 3] {
            let max = MAX_REF.min(n - ip);
            let mut len = 3;
            while len < max && input[cand + len] == input[ip + len] {
                len += 1;
            }
            flush_literals(&mut out, &input[lit..ip]);
            let (l, off) = (len - 2, dist - 1);
            if l < 7 {
                out.push(((l << 5) | (off >> 8)) as u8);
            } else {
                out.push(((7 << 5) | (off >> 8)) as u8);
                out.push((l - 7) as u8);
            }
            out.push(off as u8);
            if out.len() > limit {
                return None;
            }
            // Remember positions inside the match too, so later repeats of
            // its tail find it: all of a short match, the last two of a
            // long one (a long match is a run the table already knows).
            let end = ip + len;
            let from = if len <= 16 { ip + 1 } else { end - 2 };
            for p in from..end.min(n - 2) {
                table[hash3(&input[p..])] = p as u32;
            }
            ip = end;
            lit = ip;
        } else {
            ip += 1;
            if ip - lit > limit {
                return None;
            }
        }
    }
    flush_literals(&mut out, &input[lit..]);
    (out.len() <= limit).then_some(out)
}

/// Why a block did not decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Corrupt;

/// Decompress `input` into `out` (cleared first), which must come to
/// exactly `size` bytes.
pub fn decompress(input: &[u8], size: usize, out: &mut Vec<u8>) -> Result<(), Corrupt> {
    out.clear();
    out.reserve(size);
    let mut ip = 0usize;
    while ip < input.len() {
        let c = input[ip] as usize;
        ip += 1;
        if c < 32 {
            let k = c + 1;
            let lit = input.get(ip..ip + k).ok_or(Corrupt)?;
            if out.len() + k > size {
                return Err(Corrupt);
            }
            out.extend_from_slice(lit);
            ip += k;
        } else {
            let mut len = c >> 5;
            if len == 7 {
                len += *input.get(ip).ok_or(Corrupt)? as usize;
                ip += 1;
            }
            let lo = *input.get(ip).ok_or(Corrupt)? as usize;
            ip += 1;
            let dist = ((c & 31) << 8 | lo) + 1;
            len += 2;
            if dist > out.len() || out.len() + len > size {
                return Err(Corrupt);
            }
            let from = out.len() - dist;
            if dist >= len {
                out.extend_from_within(from..from + len);
            } else {
                // Overlapping copy: a run repeating the last `dist` bytes.
                for k in 0..len {
                    let b = out[from + k];
                    out.push(b);
                }
            }
        }
    }
    if out.len() == size {
        Ok(())
    } else {
        Err(Corrupt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn round_trip(x: &[u8]) {
        let c = compress(x, usize::MAX).unwrap();
        let mut out = Vec::new();
        decompress(&c, x.len(), &mut out).unwrap();
        assert_eq!(out, x);
        // Too small a size, or a truncated block, is an error.
        if !x.is_empty() {
            assert!(decompress(&c, x.len() - 1, &mut out).is_err());
            assert!(decompress(&c[..c.len() - 1], x.len(), &mut out).is_err());
        }
    }

    #[test]
    fn known_blocks() {
        // A literal run of 3, then a reference of 5 bytes at distance 3.
        let mut out = Vec::new();
        decompress(&[2, b'a', b'b', b'c', 3 << 5, 2], 8, &mut out).unwrap();
        assert_eq!(out, b"abcabcab");
        // A long reference: len field 7 + extra byte.
        decompress(&[0, b'x', 7 << 5, 10, 0], 20, &mut out).unwrap();
        assert_eq!(out, vec![b'x'; 20]);
        // Distance beyond the output.
        assert_eq!(decompress(&[0, b'x', 1 << 5, 1], 4, &mut out), Err(Corrupt));
        round_trip(b"");
        round_trip(&[7; 10_000]);
        round_trip(&(0..=255u8).cycle().take(40_000).collect::<Vec<_>>());
    }

    #[test]
    fn limit_is_respected() {
        let mut x = 88172645463325252u64;
        let noise: Vec<u8> = (0..5000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        assert!(compress(&noise, noise.len() - 9).is_none());
        let c = compress(&[1; 100], 10).unwrap();
        assert!(c.len() <= 10);
    }

    fn repetitive() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(
            (proptest::collection::vec(any::<u8>(), 1..12), 1usize..40),
            0..40,
        )
        .prop_map(|parts| parts.into_iter().flat_map(|(p, k)| p.repeat(k)).collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn round_trips_random(x in proptest::collection::vec(any::<u8>(), 0..3000)) {
            round_trip(&x);
        }

        #[test]
        fn round_trips_repetitive(x in repetitive()) {
            round_trip(&x);
        }

        #[test]
        fn garbage_never_panics(x in proptest::collection::vec(any::<u8>(), 0..200), size in 0usize..600) {
            let mut out = Vec::new();
            let _ = decompress(&x, size, &mut out);
            prop_assert!(out.len() <= size);
        }
    }
}
