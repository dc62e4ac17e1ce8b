//! CRC-64 as Redis computes it for RDB files and DUMP payloads.
//!
//! The "Jones" polynomial `0xad93d23594c935a9`, reflected input and output
//! (so the table uses the bit-reversed polynomial `0x95ac9329ac4bc9b5`),
//! initial value 0, no final xor. Check value: `crc64(0, b"123456789") ==
//! 0xe9c6d914c4b8d9ca`.
//!
//! The update is table-driven, eight bytes per step ("slicing by 8"): eight
//! 256-entry tables built at compile time, where table `k` gives the CRC
//! contribution of a byte followed by `k` zero bytes. The running value is a
//! plain `u64`, so a CRC can be continued over any split of the input.

/// The bit-reversed Jones polynomial.
const POLY: u64 = 0x95ac_9329_ac4b_c9b5;

const fn make_tables() -> [[u64; 256]; 8] {
    let mut t = [[0u64; 256]; 8];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u64;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 == 1 { (c >> 1) ^ POLY } else { c >> 1 };
            k += 1;
        }
        t[0][i] = c;
        i += 1;
    }
    let mut k = 1;
    while k < 8 {
        let mut i = 0;
        while i < 256 {
            let prev = t[k - 1][i];
            t[k][i] = (prev >> 8) ^ t[0][(prev & 0xff) as usize];
            i += 1;
        }
        k += 1;
    }
    t
}

static TABLES: [[u64; 256]; 8] = make_tables();

/// Continue the CRC `crc` over `data` (start with 0).
pub fn crc64(mut crc: u64, data: &[u8]) -> u64 {
    let t = &TABLES;
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        crc ^= u64::from_le_bytes(c.try_into().unwrap());
        crc = t[7][(crc & 0xff) as usize]
            ^ t[6][((crc >> 8) & 0xff) as usize]
            ^ t[5][((crc >> 16) & 0xff) as usize]
            ^ t[4][((crc >> 24) & 0xff) as usize]
            ^ t[3][((crc >> 32) & 0xff) as usize]
            ^ t[2][((crc >> 40) & 0xff) as usize]
            ^ t[1][((crc >> 48) & 0xff) as usize]
            ^ t[0][(crc >> 56) as usize];
    }
    for &b in chunks.remainder() {
        crc = t[0][((crc ^ b as u64) & 0xff) as usize] ^ (crc >> 8);
    }
    crc
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Bit by bit, straight from the definition.
    fn slow(mut crc: u64, data: &[u8]) -> u64 {
        for &b in data {
            crc ^= b as u64;
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ POLY
                } else {
                    crc >> 1
                };
            }
        }
        crc
    }

    #[test]
    fn check_values() {
        assert_eq!(crc64(0, b"123456789"), 0xe9c6d914c4b8d9ca);
        assert_eq!(crc64(0, b""), 0);
        // Redis's own self-test string (crc64.c's test).
        let lorem = b"This is a test of the emergency broadcast system.";
        assert_eq!(crc64(0, lorem), slow(0, lorem));
    }

    proptest! {
        #[test]
        fn tables_match_bitwise(data in proptest::collection::vec(any::<u8>(), 0..300), split in 0usize..300) {
            let s = split.min(data.len());
            prop_assert_eq!(crc64(0, &data), slow(0, &data));
            prop_assert_eq!(crc64(crc64(0, &data[..s]), &data[s..]), crc64(0, &data));
        }
    }
}
