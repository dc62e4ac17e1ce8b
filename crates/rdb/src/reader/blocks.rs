//! Deep checks of the blocks a file carries (listpacks, intsets), done on
//! every load: Petrel always validates as Redis does with
//! `sanitize-dump-payload yes`, and a little more, because Petrel's
//! structures rely on these properties and must never meet a broken block
//! later (where Redis would crash or misbehave, Petrel refuses at load).
//!
//! * listpack: every structural invariant (`Listpack::from_bytes`), plus
//!   canonical entries: a string entry never holds a canonical integer, and
//!   every entry uses the smallest encoding for its value (Redis only ever
//!   writes such entries; Petrel's lookups compare integers as integers);
//! * pairs (hash, zset): an even entry count and distinct keys; zset scores
//!   are numbers (not NaN) and the pairs are sorted by (score, member);
//! * set listpack: distinct members;
//! * intset: Redis's check (size matches the header, a valid width, not
//!   empty, strictly ascending).

use std::collections::HashSet;

use collections::listpack::{encoded_size, string_to_i64};
use collections::value::hash::lp_bytes;
use collections::{IntSet, Listpack, LpValue};

/// A listpack entry as a hashable key (canonical entries: an `Int` and a
/// `Str` never denote the same text).
#[derive(Hash, PartialEq, Eq)]
enum Key<'a> {
    I(i64),
    S(&'a [u8]),
}

fn key(v: LpValue<'_>) -> Key<'_> {
    match v {
        LpValue::Int(i) => Key::I(i),
        LpValue::Str(s) => Key::S(s),
    }
}

/// A listpack from a file: structurally valid, canonical entries.
pub fn listpack(bytes: Vec<u8>) -> Result<Listpack, String> {
    let lp = Listpack::from_bytes(bytes)
        .map_err(|e| format!("listpack integrity check failed: {}", e.0))?;
    let (mut off, end) = (lp.first_offset(), lp.end_offset());
    while off < end {
        let (v, next) = lp.entry_at(off);
        let want = match v {
            LpValue::Str(s) => {
                if string_to_i64(s).is_some() {
                    return Err("listpack string entry holding an integer".into());
                }
                encoded_size(s)
            }
            LpValue::Int(_) => {
                let mut b = [0u8; 20];
                encoded_size(lp_bytes(v, &mut b))
            }
        };
        if next - off != want {
            return Err("listpack entry not in its smallest encoding".into());
        }
        off = next;
    }
    Ok(lp)
}

/// Every `stride`-th entry (the keys) is distinct.
pub fn distinct_keys(lp: &Listpack, stride: usize) -> Result<(), &'static str> {
    let n = lp.len() / stride;
    let keys = lp.iter().step_by(stride);
    if n <= 16 {
        let ks: Vec<LpValue<'_>> = keys.collect();
        for i in 0..ks.len() {
            if ks[..i].contains(&ks[i]) {
                return Err("duplicate elements in a listpack");
            }
        }
        return Ok(());
    }
    let mut seen = HashSet::with_capacity(n);
    for k in keys {
        if !seen.insert(key(k)) {
            return Err("duplicate elements in a listpack");
        }
    }
    Ok(())
}

/// Parses a zset score entry.
pub fn score(v: LpValue<'_>) -> Option<f64> {
    let s = match v {
        LpValue::Int(i) => i as f64,
        LpValue::Str(b) => std::str::from_utf8(b).ok()?.parse::<f64>().ok()?,
    };
    (!s.is_nan()).then_some(s)
}

/// Zset listpack: pairs, distinct members, numeric scores.
pub fn zset_pairs(lp: &Listpack) -> Result<(), &'static str> {
    if !lp.len().is_multiple_of(2) {
        return Err("zset listpack with an odd number of entries");
    }
    distinct_keys(lp, 2)?;
    if lp.iter().skip(1).step_by(2).any(|s| score(s).is_none()) {
        return Err("zset listpack with a score that is not a number");
    }
    Ok(())
}

/// Hash listpack: pairs, distinct fields.
pub fn hash_pairs(lp: &Listpack) -> Result<(), &'static str> {
    if !lp.len().is_multiple_of(2) {
        return Err("hash listpack with an odd number of entries");
    }
    distinct_keys(lp, 2)
}

/// An intset from a file (Redis's deep check).
pub fn intset(bytes: Vec<u8>) -> Result<IntSet, String> {
    let s =
        IntSet::from_bytes(bytes).map_err(|e| format!("intset integrity check failed: {}", e.0))?;
    if s.is_empty() {
        return Err("intset integrity check failed: empty".into());
    }
    Ok(s)
}

/// A listpack of ziplist entries (as Redis converts them: each entry
/// appended, integers staying integers).
pub fn listpack_of(items: &[LpValue<'_>]) -> Listpack {
    let mut lp = Listpack::new();
    let mut buf = [0u8; 20];
    for &v in items {
        lp.push_back(lp_bytes(v, &mut buf));
    }
    lp
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lp_of(items: &[&[u8]]) -> Listpack {
        let mut lp = Listpack::new();
        for i in items {
            lp.push_back(i);
        }
        lp
    }

    #[test]
    fn canonical_entries() {
        let lp = lp_of(&[b"a", b"12", b"-5000", b"x".repeat(5000).as_slice()]);
        assert!(listpack(lp.as_bytes().to_vec()).is_ok());
        // "12" stored as a 2-byte string entry: 0x82 '1' '2' backlen 3.
        let mut raw = vec![0, 0, 0, 0, 1, 0, 0x82, b'1', b'2', 3, 0xFF];
        raw[0] = raw.len() as u8;
        assert!(listpack(raw).is_err());
        // 5 in a 16-bit encoding (0xF1) instead of 7 bits.
        let mut raw = vec![0, 0, 0, 0, 1, 0, 0xF1, 5, 0, 3, 0xFF];
        raw[0] = raw.len() as u8;
        assert!(listpack(raw).is_err());
    }

    #[test]
    fn duplicates_and_scores() {
        assert!(hash_pairs(&lp_of(&[b"f", b"1", b"g", b"1"])).is_ok());
        assert!(hash_pairs(&lp_of(&[b"f", b"1", b"f", b"2"])).is_err());
        assert!(hash_pairs(&lp_of(&[b"f", b"1", b"g"])).is_err());
        let many: Vec<Vec<u8>> = (0..40)
            .map(|i| format!("m{}", i % 39).into_bytes())
            .collect();
        let refs: Vec<&[u8]> = many.iter().map(|v| v.as_slice()).collect();
        assert!(distinct_keys(&lp_of(&refs), 1).is_err());
        assert!(distinct_keys(&lp_of(&refs[..39]), 1).is_ok());
        assert!(zset_pairs(&lp_of(&[b"a", b"1.5", b"b", b"inf"])).is_ok());
        assert!(zset_pairs(&lp_of(&[b"a", b"nan"])).is_err());
        assert!(zset_pairs(&lp_of(&[b"a", b"x"])).is_err());
    }
}
