//! Key routing: the Redis Cluster hash slot (CRC16/XMODEM of the key or of
//! its `{hashtag}`, modulo 16384) and the 64-bit table hash.
//!
//! The table hash puts the slot in the top 14 bits and 50 bits of a seeded
//! multiply-fold hash of the whole key below it, so that within a partition
//! the keys of one slot share a hash prefix (`DashTable::for_each_with_prefix`).

use std::sync::OnceLock;

pub const SLOTS: usize = 16384;
pub const SLOT_BITS: u32 = 14;
const LOW_MASK: u64 = (1u64 << (64 - SLOT_BITS)) - 1;

const fn crc16_table() -> [u16; 256] {
    let mut t = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = (i as u16) << 8;
        let mut b = 0;
        while b < 8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
            b += 1;
        }
        t[i] = crc;
        i += 1;
    }
    t
}

static CRC16: [u16; 256] = crc16_table();

/// CRC16/XMODEM (poly 0x1021, init 0), as used by Redis Cluster.
pub fn crc16(data: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &b in data {
        crc = (crc << 8) ^ CRC16[(((crc >> 8) as u8) ^ b) as usize];
    }
    crc
}

/// The part of the key that is hashed for the slot: the content of the first
/// `{...}` if non-empty, else the whole key.
pub fn hashtag(key: &[u8]) -> &[u8] {
    if let Some(s) = key.iter().position(|&c| c == b'{') {
        if let Some(len) = key[s + 1..].iter().position(|&c| c == b'}') {
            if len > 0 {
                return &key[s + 1..s + 1 + len];
            }
        }
    }
    key
}

/// Cluster hash slot of a key.
pub fn key_slot(key: &[u8]) -> u16 {
    crc16(hashtag(key)) & (SLOTS as u16 - 1)
}

fn seed() -> u64 {
    static SEED: OnceLock<u64> = OnceLock::new();
    *SEED.get_or_init(|| {
        if cfg!(test) {
            0x9e37_79b9_7f4a_7c15
        } else {
            rand::random::<u64>() | 1
        }
    })
}

#[inline]
fn fold(a: u64, b: u64) -> u64 {
    let r = (a as u128).wrapping_mul(b as u128);
    (r as u64) ^ ((r >> 64) as u64)
}

#[inline]
fn read8(b: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(b[i..i + 8].try_into().unwrap())
}

#[inline]
fn read_tail(b: &[u8]) -> u64 {
    // up to 8 bytes, little endian
    let mut buf = [0u8; 8];
    buf[..b.len()].copy_from_slice(b);
    u64::from_le_bytes(buf)
}

const P0: u64 = 0xa076_1d64_78bd_642f;
const P1: u64 = 0xe703_7ed1_a0b4_28db;
const P2: u64 = 0x8ebc_6af0_9c88_c6e3;
const P3: u64 = 0x5899_65cc_7537_4cc3;

/// A fast seeded 64-bit hash of arbitrary bytes (multiply-fold construction).
pub fn hash_bytes(data: &[u8]) -> u64 {
    let s = seed();
    let n = data.len();
    let mut h = s ^ fold(n as u64 ^ P0, P1);
    let mut i = 0;
    while i + 16 <= n {
        h = fold(read8(data, i) ^ P1 ^ h, read8(data, i + 8) ^ P2);
        i += 16;
    }
    let rest = &data[i..];
    let (a, b) = if rest.len() > 8 {
        (read8(rest, 0), read_tail(&rest[8..]))
    } else {
        (read_tail(rest), 0)
    };
    h = fold(a ^ P2 ^ h, b ^ P3);
    fold(h ^ P0, n as u64 ^ P3)
}

/// Table hash of a key: slot in the top 14 bits, 50 hash bits below.
#[inline]
pub fn key_hash(key: &[u8]) -> u64 {
    key_hash_with_slot(key, key_slot(key))
}

#[inline]
pub fn key_hash_with_slot(key: &[u8], slot: u16) -> u64 {
    ((slot as u64) << (64 - SLOT_BITS)) | (hash_bytes(key) & LOW_MASK)
}

/// Slot encoded in a table hash.
#[inline]
pub fn slot_of_hash(h: u64) -> u16 {
    (h >> (64 - SLOT_BITS)) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redis_slots() {
        // Values from Redis Cluster (CLUSTER KEYSLOT).
        assert_eq!(crc16(b"123456789"), 0x31c3);
        assert_eq!(key_slot(b"foo"), 12182);
        assert_eq!(key_slot(b"bar"), 5061);
        assert_eq!(key_slot(b"{user1000}.following"), key_slot(b"user1000"));
        assert_eq!(key_slot(b"foo{}{bar}"), key_slot(b"foo{}{bar}"));
        assert_eq!(hashtag(b"foo{}{bar}"), b"foo{}{bar}");
        assert_eq!(hashtag(b"foo{{bar}}zap"), b"{bar");
        assert_eq!(hashtag(b"foo{bar}{zap}"), b"bar");
    }

    #[test]
    fn hash_layout() {
        let h = key_hash(b"foo");
        assert_eq!(slot_of_hash(h), 12182);
        assert_ne!(key_hash(b"a"), key_hash(b"b"));
        assert_ne!(hash_bytes(b""), hash_bytes(b"\0"));
        let mut seen = std::collections::HashSet::new();
        for i in 0..10000 {
            assert!(seen.insert(hash_bytes(format!("key:{i}").as_bytes())));
        }
    }
}
