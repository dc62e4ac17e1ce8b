//! Zipmaps: the small-hash block of Redis 2.x (RDB type `HASH_ZIPMAP`).
//! Redis 7.0 converts them to listpack hashes on load; so does this crate.
//!
//! ```text
//! <zmlen u8> (<len> field <len> <free u8> value <free bytes>)... <0xFF>
//! len = 1 byte (< 254) | 0xFE + u32 LE
//! ```
//!
//! `zmlen` is the pair count when below 254 (254 = "count them"). A field
//! length byte of 0xFF is the end marker. Validation follows Redis: every
//! part inside the block, at least one pair, `zmlen` equal to the count
//! unless 254, the terminator as the last byte.

const END: u8 = 0xFF;
const BIGLEN: u8 = 254;

/// A zipmap's (field, value) pairs.
pub type Pairs<'a> = Vec<(&'a [u8], &'a [u8])>;

/// Every (field, value) pair of a zipmap, after full validation.
pub fn pairs(zm: &[u8]) -> Result<Pairs<'_>, &'static str> {
    if zm.len() < 2 {
        return Err("zipmap shorter than two bytes");
    }
    let oob = "zipmap entry runs past the end";
    let get = |from: usize, n: usize| -> Result<&[u8], &'static str> {
        from.checked_add(n)
            .filter(|&e| e <= zm.len())
            .map(|e| &zm[from..e])
            .ok_or(oob)
    };
    let len_at = |p: usize| -> Result<(usize, usize), &'static str> {
        let b = get(p, 1)?[0];
        if b < BIGLEN {
            Ok((b as usize, 1))
        } else {
            let x = get(p + 1, 4)?;
            Ok((u32::from_le_bytes(x.try_into().unwrap()) as usize, 5))
        }
    };
    let mut out = Vec::new();
    let mut p = 1;
    loop {
        if get(p, 1)?[0] == END {
            break;
        }
        let (fl, k) = len_at(p)?;
        p += k;
        let field = get(p, fl)?;
        p += fl;
        let (vl, k) = len_at(p)?;
        p += k;
        let free = get(p, 1)?[0] as usize;
        p += 1;
        let value = get(p, vl)?;
        p += vl;
        get(p, free)?;
        p += free;
        out.push((field, value));
    }
    if out.is_empty() {
        return Err("empty zipmap");
    }
    if zm[0] != BIGLEN && zm[0] as usize != out.len() {
        return Err("zipmap pair count does not match its header");
    }
    if p != zm.len() - 1 {
        return Err("zipmap has bytes after its terminator");
    }
    Ok(out)
}

/// Builds a zipmap (with `free` spare bytes after each value, as Redis 2.x
/// left after shrinking a value). For tests and tools.
pub fn build(pairs: &[(&[u8], &[u8])], free: u8) -> Vec<u8> {
    let mut zm = vec![pairs.len().min(BIGLEN as usize) as u8];
    let put_len = |zm: &mut Vec<u8>, n: usize| {
        if n < BIGLEN as usize {
            zm.push(n as u8);
        } else {
            zm.push(BIGLEN);
            zm.extend_from_slice(&(n as u32).to_le_bytes());
        }
    };
    for (f, v) in pairs {
        put_len(&mut zm, f.len());
        zm.extend_from_slice(f);
        put_len(&mut zm, v.len());
        zm.push(free);
        zm.extend_from_slice(v);
        zm.extend(std::iter::repeat_n(0u8, free as usize));
    }
    zm.push(END);
    zm
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_damage() {
        let long = vec![b'v'; 300];
        let ps: Vec<(&[u8], &[u8])> = vec![(b"a", b"1"), (b"field", &long), (b"", b"")];
        for free in [0, 3] {
            let zm = build(&ps, free);
            assert_eq!(pairs(&zm).unwrap(), ps);
            for cut in 0..zm.len() {
                assert!(pairs(&zm[..cut]).is_err());
            }
            for i in 0..zm.len() {
                let mut z = zm.clone();
                z[i] = z[i].wrapping_add(1);
                let _ = pairs(&z);
            }
        }
        assert!(pairs(&[0, END]).is_err(), "empty zipmap");
        let mut zm = build(&ps, 0);
        zm[0] = 2;
        assert!(pairs(&zm).is_err(), "wrong count");
    }
}
