//! Fast keyed hashing for collection elements.
//!
//! One random seed per process (so hash flooding needs the seed); the same
//! bytes always hash to the same value within a process, which the scan
//! cursors of [`crate::table`] rely on. Integers have their own hash
//! ([`hash_int`]) used by the listpack side index for integer-encoded entries:
//! a byte string that is a canonical integer must be hashed with
//! [`hash_canonical`] so both forms agree.

use crate::listpack::string_to_i64;
use std::sync::OnceLock;

const P0: u64 = 0xa076_1d64_78bd_642f;
const P1: u64 = 0xe703_7ed1_a0b4_28db;
const P2: u64 = 0x8ebc_6af0_9c88_c6e3;

fn seed() -> u64 {
    static SEED: OnceLock<u64> = OnceLock::new();
    *SEED.get_or_init(|| {
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(0x5eed);
        h.finish() | 1
    })
}

#[inline]
fn mix(a: u64, b: u64) -> u64 {
    let r = (a as u128).wrapping_mul(b as u128);
    (r as u64) ^ ((r >> 64) as u64)
}

#[inline]
fn rd8(s: &[u8]) -> u64 {
    u64::from_le_bytes(s[..8].try_into().unwrap())
}

/// Hash of a byte string.
#[inline]
pub fn hash_bytes(s: &[u8]) -> u64 {
    let len = s.len() as u64;
    let mut h = seed() ^ mix(len ^ P0, P1);
    let mut rest = s;
    while rest.len() > 16 {
        h = mix(rd8(rest) ^ P1, rd8(&rest[8..]) ^ h);
        rest = &rest[16..];
    }
    let (a, b) = if rest.len() >= 8 {
        (rd8(rest), rd8(&rest[rest.len() - 8..]))
    } else if rest.len() >= 4 {
        let lo = u32::from_le_bytes(rest[..4].try_into().unwrap()) as u64;
        let hi = u32::from_le_bytes(rest[rest.len() - 4..].try_into().unwrap()) as u64;
        (lo, hi)
    } else if !rest.is_empty() {
        let x = ((rest[0] as u64) << 16)
            | ((rest[rest.len() / 2] as u64) << 8)
            | rest[rest.len() - 1] as u64;
        (x, 0)
    } else {
        (0, 0)
    };
    mix(a ^ P1 ^ h, b ^ P2) ^ mix(h ^ len, P0)
}

/// Hash of an integer element (listpack integer entries).
#[inline]
pub fn hash_int(v: i64) -> u64 {
    let h = seed();
    mix((v as u64) ^ P2 ^ h, P1 ^ h.rotate_left(17))
}

/// Hash of a byte string, treating canonical integers as [`hash_int`].
#[inline]
pub fn hash_canonical(s: &[u8]) -> u64 {
    match string_to_i64(s) {
        Some(v) => hash_int(v),
        None => hash_bytes(s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn distinct() {
        let mut seen = std::collections::HashSet::new();
        for i in 0..100_000u32 {
            assert!(seen.insert(hash_bytes(format!("k{i}").as_bytes())));
        }
        assert_eq!(hash_bytes(b"abc"), hash_bytes(b"abc"));
        assert_ne!(hash_bytes(b""), hash_bytes(b"\0"));
        assert_eq!(hash_canonical(b"12"), hash_int(12));
    }
}
