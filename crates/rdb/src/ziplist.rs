//! Ziplists: the compact block of Redis before 7.0 (RDB types
//! `LIST_ZIPLIST`, `ZSET_ZIPLIST`, `HASH_ZIPLIST` and the nodes of
//! `LIST_QUICKLIST`). Redis 7.0 no longer keeps them: it converts them to
//! listpacks on load, and so does this crate ([`entries`] then listpack
//! pushes).
//!
//! ```text
//! <zlbytes u32 LE> <zltail u32 LE> <zllen u16 LE> <entry>... <0xFF>
//! entry = <prevlen> <encoding> <data>
//! prevlen  = 1 byte (< 254) | 0xFE + u32 LE (any value, Redis may keep the
//!            long form for a short entry)
//! encoding = 00LLLLLL            string, 6-bit length
//!          | 01LLLLLL LLLLLLLL   string, 14-bit length (big-endian)
//!          | 10xxxxxx + u32 BE   string, 32-bit length
//!          | 0xC0 i16 | 0xD0 i32 | 0xE0 i64 | 0xF0 i24 | 0xFE i8 (LE)
//!          | 0xF1..=0xFD         immediate 0..=12, no data
//! ```
//!
//! Validation is Redis's deep check: sizes match the header, every entry
//! lies inside the block with a valid encoding, each `prevlen` equals the
//! previous entry's size, `zltail` points at the last entry, and `zllen`
//! equals the entry count unless it is 65535 ("count it").

use collections::LpValue;

const HEADER: usize = 10;
const END: u8 = 0xFF;

/// Every entry of a ziplist, after full validation.
pub fn entries(zl: &[u8]) -> Result<Vec<LpValue<'_>>, &'static str> {
    let size = zl.len();
    if size < HEADER + 1 {
        return Err("ziplist shorter than its header");
    }
    let bytes = u32::from_le_bytes(zl[0..4].try_into().unwrap()) as usize;
    if bytes != size {
        return Err("ziplist size does not match its header");
    }
    if zl[size - 1] != END {
        return Err("ziplist does not end with 0xFF");
    }
    let tail = u32::from_le_bytes(zl[4..8].try_into().unwrap()) as usize;
    if tail > size - 1 {
        return Err("ziplist tail offset out of range");
    }
    let header_count = u16::from_le_bytes(zl[8..10].try_into().unwrap());
    let mut out = Vec::new();
    let mut p = HEADER;
    let mut prev_size = 0usize;
    let mut last = None;
    while zl[p] != END {
        let (v, n, prevlen) = entry(zl, p)?;
        if prevlen != prev_size {
            return Err("ziplist entry with a wrong previous-entry length");
        }
        out.push(v);
        last = Some(p);
        prev_size = n;
        p += n;
    }
    if p != size - 1 {
        return Err("ziplist entries do not end at the terminator");
    }
    if last.is_some_and(|l| l != tail) {
        return Err("ziplist tail offset does not point at the last entry");
    }
    if header_count != u16::MAX && header_count as usize != out.len() {
        return Err("ziplist entry count does not match its header");
    }
    Ok(out)
}

/// The entry at `p`: value, total size, stored previous-entry length.
fn entry(zl: &[u8], p: usize) -> Result<(LpValue<'_>, usize, usize), &'static str> {
    // Entries may not reach the terminator byte.
    let limit = zl.len() - 1;
    let get = |from: usize, n: usize| -> Result<&[u8], &'static str> {
        from.checked_add(n)
            .filter(|&e| e <= limit)
            .map(|e| &zl[from..e])
            .ok_or("ziplist entry runs past the end")
    };
    let (prevlen, mut q) = if zl[p] < 0xFE {
        (zl[p] as usize, p + 1)
    } else if zl[p] == 0xFE {
        let b = get(p + 1, 4)?;
        (u32::from_le_bytes(b.try_into().unwrap()) as usize, p + 5)
    } else {
        return Err("ziplist entry with an invalid previous-entry length");
    };
    let e = get(q, 1)?[0];
    q += 1;
    let v = match e >> 6 {
        0 => {
            let n = (e & 0x3F) as usize;
            let s = get(q, n)?;
            q += n;
            LpValue::Str(s)
        }
        1 => {
            let n = ((e & 0x3F) as usize) << 8 | get(q, 1)?[0] as usize;
            q += 1;
            let s = get(q, n)?;
            q += n;
            LpValue::Str(s)
        }
        2 => {
            let n = u32::from_be_bytes(get(q, 4)?.try_into().unwrap()) as usize;
            q += 4;
            let s = get(q, n)?;
            q += n;
            LpValue::Str(s)
        }
        _ => {
            let (w, v) = match e {
                0xC0 => (2, i16::from_le_bytes(get(q, 2)?.try_into().unwrap()) as i64),
                0xD0 => (4, i32::from_le_bytes(get(q, 4)?.try_into().unwrap()) as i64),
                0xE0 => (8, i64::from_le_bytes(get(q, 8)?.try_into().unwrap())),
                0xF0 => {
                    let b = get(q, 3)?;
                    (3, (i32::from_le_bytes([0, b[0], b[1], b[2]]) >> 8) as i64)
                }
                0xFE => (1, get(q, 1)?[0] as i8 as i64),
                0xF1..=0xFD => (0, (e & 0x0F) as i64 - 1),
                _ => return Err("ziplist entry with an invalid encoding"),
            };
            q += w;
            LpValue::Int(v)
        }
    };
    Ok((v, q - p, prevlen))
}

/// Builds a ziplist of `entries` (strings, or integers for `Int`) the way
/// Redis before 7.0 laid them out. For tests and tools that need inputs
/// Redis 7.0 can no longer produce.
pub fn build(entries: &[LpValue<'_>]) -> Vec<u8> {
    let mut body = Vec::new();
    let mut prev = 0usize;
    let mut tail = HEADER;
    for v in entries {
        let start = body.len();
        tail = HEADER + start;
        if prev < 254 {
            body.push(prev as u8);
        } else {
            body.push(0xFE);
            body.extend_from_slice(&(prev as u32).to_le_bytes());
        }
        match *v {
            LpValue::Str(s) => {
                let n = s.len();
                if n < 64 {
                    body.push(n as u8);
                } else if n < 16384 {
                    body.push(0x40 | (n >> 8) as u8);
                    body.push(n as u8);
                } else {
                    body.push(0x80);
                    body.extend_from_slice(&(n as u32).to_be_bytes());
                }
                body.extend_from_slice(s);
            }
            LpValue::Int(i) => {
                if (0..=12).contains(&i) {
                    body.push(0xF1 + i as u8);
                } else if let Ok(x) = i8::try_from(i) {
                    body.push(0xFE);
                    body.push(x as u8);
                } else if let Ok(x) = i16::try_from(i) {
                    body.push(0xC0);
                    body.extend_from_slice(&x.to_le_bytes());
                } else if (-(1 << 23)..(1 << 23)).contains(&i) {
                    body.push(0xF0);
                    body.extend_from_slice(&(i as i32).to_le_bytes()[..3]);
                } else if let Ok(x) = i32::try_from(i) {
                    body.push(0xD0);
                    body.extend_from_slice(&x.to_le_bytes());
                } else {
                    body.push(0xE0);
                    body.extend_from_slice(&i.to_le_bytes());
                }
            }
        }
        prev = body.len() - start;
    }
    let total = HEADER + body.len() + 1;
    let mut zl = Vec::with_capacity(total);
    zl.extend_from_slice(&(total as u32).to_le_bytes());
    zl.extend_from_slice(&(tail as u32).to_le_bytes());
    zl.extend_from_slice(&(entries.len().min(u16::MAX as usize) as u16).to_le_bytes());
    zl.extend_from_slice(&body);
    zl.push(END);
    zl
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn value() -> impl Strategy<Value = (bool, i64, Vec<u8>)> {
        (
            any::<bool>(),
            prop_oneof![-20i64..20, any::<i64>(), -(1i64 << 23)..(1 << 23)],
            proptest::collection::vec(any::<u8>(), 0..300),
        )
    }

    proptest! {
        #[test]
        fn build_then_parse(vals in proptest::collection::vec(value(), 0..40)) {
            let entries: Vec<LpValue<'_>> = vals.iter()
                .map(|(int, i, s)| if *int { LpValue::Int(*i) } else { LpValue::Str(s) })
                .collect();
            let zl = build(&entries);
            prop_assert_eq!(super::entries(&zl).unwrap(), entries);
            // Every truncation and every single-byte change is handled.
            for cut in 0..zl.len() {
                prop_assert!(super::entries(&zl[..cut]).is_err());
            }
            for i in 0..zl.len() {
                let mut z = zl.clone();
                z[i] ^= 0x5A;
                let _ = super::entries(&z);
            }
        }
    }

    #[test]
    fn known_bytes() {
        // A hand-written ziplist: "a", 5 (immediate), -300 (int16).
        let zl = [
            20, 0, 0, 0, 15, 0, 0, 0, 3, 0, // header: 20 bytes, tail 15, 3 entries
            0, 0x01, b'a', // prevlen 0, 1-byte string
            3, 0xF6, // prevlen 3, immediate 5
            2, 0xC0, 0xD4, 0xFE, // prevlen 2, int16 -300
            0xFF,
        ];
        assert_eq!(
            entries(&zl).unwrap(),
            vec![LpValue::Str(b"a"), LpValue::Int(5), LpValue::Int(-300)]
        );
        let mut bad = zl;
        bad[15] = 3; // wrong prevlen
        assert!(entries(&bad).is_err());
        let mut bad = zl;
        bad[4] = 13; // tail at the second entry
        assert!(entries(&bad).is_err());
    }
}
