//! HyperLogLog with Redis's exact byte format (so values are interchangeable
//! with Redis: GET/SET/DUMP of a HLL key work both ways).
//!
//! Layout: 16-byte header `"HYLL" | encoding (0 dense, 1 sparse) | 3 unused |
//! 8-byte cached cardinality (LE, bit 7 of the last byte = cache invalid)`,
//! then the registers: dense = 16384 6-bit registers packed LSB-first
//! (12288 bytes); sparse = ZERO `00xxxxxx` (1-64 zero registers), XZERO
//! `01xxxxxx yyyyyyyy` (1-16384), VAL `1vvvvvxx` (value 1-32, run 1-4).
//!
//! Elements are hashed with MurmurHash64A (seed 0xadc83b19); the low 14 bits
//! pick the register, the position of the first set bit of the rest is the
//! value. Counting uses Ertl's improved estimator, as Redis 7.
//!
//! This module holds the format's constants, the element hash and header
//! validation; `hll_exact` edits and counts values the way Redis does, so
//! the bytes stay identical to redis-server's.

pub const P: u32 = 14;
pub const REGISTERS: usize = 1 << P;
const Q: u32 = 64 - P;
pub const HDR: usize = 16;
pub const DENSE_SIZE: usize = HDR + (REGISTERS * 6).div_ceil(8);
const DENSE: u8 = 0;
const SPARSE: u8 = 1;

#[derive(Debug, PartialEq, Eq)]
pub enum HllError {
    /// Not a HLL: "WRONGTYPE Key is not a valid HyperLogLog string value."
    NotHll,
    /// Bad sparse data: "INVALIDOBJ Corrupted HLL object detected".
    Corrupt,
}

pub const ERR_NOT_HLL: &str = "WRONGTYPE Key is not a valid HyperLogLog string value.";
pub const ERR_CORRUPT: &str = "INVALIDOBJ Corrupted HLL object detected";

/// MurmurHash64A, as used by Redis for HLL.
pub fn murmur64a(data: &[u8], seed: u64) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let len = data.len();
    let mut h = seed ^ (len as u64).wrapping_mul(M);
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        let mut k = u64::from_le_bytes(c.try_into().unwrap());
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let t = chunks.remainder();
    if !t.is_empty() {
        for (i, &b) in t.iter().enumerate().rev() {
            h ^= (b as u64) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

/// Register index and value for an element.
pub fn pat_len(elem: &[u8]) -> (usize, u8) {
    let mut hash = murmur64a(elem, 0xadc8_3b19);
    let index = (hash & (REGISTERS as u64 - 1)) as usize;
    hash >>= P;
    hash |= 1u64 << Q;
    let count = hash.trailing_zeros() + 1;
    (index, count as u8)
}

/// A fresh empty HLL (sparse, cached cardinality 0).
/// Checks the header (Redis's isHLLObjectOrReply).
pub fn validate(s: &[u8]) -> Result<(), HllError> {
    if s.len() < HDR || &s[..4] != b"HYLL" || s[4] > SPARSE {
        return Err(HllError::NotHll);
    }
    if s[4] == DENSE && s.len() != DENSE_SIZE {
        return Err(HllError::NotHll);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validate_checks_magic_encoding_and_dense_size() {
        let mut fresh = b"HYLL\x01".to_vec();
        fresh.extend_from_slice(&[0; 11]);
        fresh.extend_from_slice(b"\x7f\xff");
        assert_eq!(validate(&fresh), Ok(()));
        assert_eq!(
            validate(b"HYLX\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"),
            Err(HllError::NotHll)
        );
        let mut dense = b"HYLL\x00".to_vec();
        dense.resize(DENSE_SIZE - 1, 0);
        assert_eq!(validate(&dense), Err(HllError::NotHll));
        dense.push(0);
        assert_eq!(validate(&dense), Ok(()));
    }
}
