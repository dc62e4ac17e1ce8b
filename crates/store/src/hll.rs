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
//! Sparse edits decode to registers and re-encode canonically; a sparse value
//! is promoted to dense when a register exceeds 32 or the encoding would pass
//! `sparse_max` bytes (Redis: hll-sparse-max-bytes, 3000).

pub const P: u32 = 14;
pub const REGISTERS: usize = 1 << P;
const Q: u32 = 64 - P;
pub const HDR: usize = 16;
pub const DENSE_SIZE: usize = HDR + (REGISTERS * 6).div_ceil(8);
const DENSE: u8 = 0;
const SPARSE: u8 = 1;
const VAL_MAX: u8 = 32;
const ALPHA_INF: f64 = 0.721_347_520_444_481_7;

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
pub fn new_sparse() -> Vec<u8> {
    let mut v = header(SPARSE);
    encode_sparse_into(&[0u8; REGISTERS], &mut v);
    v
}

fn header(enc: u8) -> Vec<u8> {
    let mut v = Vec::with_capacity(HDR + 8);
    v.extend_from_slice(b"HYLL");
    v.push(enc);
    v.extend_from_slice(&[0; 11]);
    v
}

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

fn dense_get(regs: &[u8], i: usize) -> u8 {
    let byte = i * 6 / 8;
    let fb = (i * 6) & 7;
    let b0 = regs[byte] as u32;
    let b1 = regs.get(byte + 1).copied().unwrap_or(0) as u32;
    (((b0 >> fb) | (b1 << (8 - fb))) & 63) as u8
}

fn dense_set(regs: &mut [u8], i: usize, v: u8) {
    let byte = i * 6 / 8;
    let fb = (i * 6) & 7;
    let v = v as u32;
    regs[byte] &= !((63u32 << fb) as u8);
    regs[byte] |= (v << fb) as u8;
    if byte + 1 < regs.len() {
        let fb8 = 8 - fb;
        regs[byte + 1] &= !((63u32 >> fb8) as u8);
        regs[byte + 1] |= (v >> fb8) as u8;
    }
}

/// Decodes any valid HLL into one byte per register.
pub fn registers(s: &[u8]) -> Result<Box<[u8; REGISTERS]>, HllError> {
    validate(s)?;
    let mut r = Box::new([0u8; REGISTERS]);
    if s[4] == DENSE {
        for (i, x) in r.iter_mut().enumerate() {
            *x = dense_get(&s[HDR..], i);
        }
        return Ok(r);
    }
    let mut idx = 0usize;
    let mut p = HDR;
    while p < s.len() {
        let b = s[p];
        if b & 0xc0 == 0 {
            idx += (b & 0x3f) as usize + 1;
            p += 1;
        } else if b & 0xc0 == 0x40 {
            let n =
                (((b & 0x3f) as usize) << 8 | *s.get(p + 1).ok_or(HllError::Corrupt)? as usize) + 1;
            idx += n;
            p += 2;
        } else {
            let val = ((b >> 2) & 0x1f) + 1;
            let run = (b & 3) as usize + 1;
            if idx + run > REGISTERS {
                return Err(HllError::Corrupt);
            }
            r[idx..idx + run].fill(val);
            idx += run;
            p += 1;
        }
        if idx > REGISTERS {
            return Err(HllError::Corrupt);
        }
    }
    if idx != REGISTERS {
        return Err(HllError::Corrupt);
    }
    Ok(r)
}

/// Canonical sparse encoding of registers (all <= 32) appended to `out`.
fn encode_sparse_into(r: &[u8; REGISTERS], out: &mut Vec<u8>) {
    let mut i = 0;
    while i < REGISTERS {
        let v = r[i];
        let mut j = i + 1;
        while j < REGISTERS && r[j] == v {
            j += 1;
        }
        let mut run = j - i;
        if v == 0 {
            while run > 0 {
                if run > 64 {
                    let n = run.min(16384);
                    out.push(0x40 | ((n - 1) >> 8) as u8);
                    out.push(((n - 1) & 0xff) as u8);
                    run -= n;
                } else {
                    out.push((run - 1) as u8);
                    run = 0;
                }
            }
        } else {
            while run > 0 {
                let n = run.min(4);
                out.push(0x80 | ((v - 1) << 2) | (n - 1) as u8);
                run -= n;
            }
        }
        i = j;
    }
}

/// Dense encoding of registers.
pub fn encode_dense(r: &[u8; REGISTERS], card: Option<u64>) -> Vec<u8> {
    let mut v = header(DENSE);
    v.resize(DENSE_SIZE, 0);
    for (i, &x) in r.iter().enumerate() {
        dense_set(&mut v[HDR..], i, x);
    }
    set_cache(&mut v, card);
    v
}

/// Encodes registers as sparse if possible within `sparse_max` bytes, else dense.
pub fn encode(
    r: &[u8; REGISTERS],
    prefer_sparse: bool,
    sparse_max: usize,
    card: Option<u64>,
) -> Vec<u8> {
    if prefer_sparse && r.iter().all(|&x| x <= VAL_MAX) {
        let mut v = header(SPARSE);
        encode_sparse_into(r, &mut v);
        if v.len() <= sparse_max {
            set_cache(&mut v, card);
            return v;
        }
    }
    encode_dense(r, card)
}

fn set_cache(v: &mut [u8], card: Option<u64>) {
    match card {
        Some(c) => v[8..16].copy_from_slice(&c.to_le_bytes()),
        None => v[15] |= 0x80,
    }
}

/// The cached cardinality, if valid.
pub fn cached(s: &[u8]) -> Option<u64> {
    if s[15] & 0x80 != 0 {
        None
    } else {
        Some(u64::from_le_bytes(s[8..16].try_into().unwrap()))
    }
}

pub fn is_sparse(s: &[u8]) -> bool {
    s[4] == SPARSE
}

/// Adds elements: returns true if any register changed. `s` is replaced by
/// the new encoding when needed.
pub fn add(s: &mut Vec<u8>, elems: &[&[u8]], sparse_max: usize) -> Result<bool, HllError> {
    validate(s)?;
    if s[4] == DENSE {
        return Ok(add_dense(s, elems));
    }
    let mut r = registers(s)?;
    let mut changed = false;
    for e in elems {
        let (i, c) = pat_len(e);
        if r[i] < c {
            r[i] = c;
            changed = true;
        }
    }
    if changed {
        let card = cached(s);
        *s = encode(&r, true, sparse_max, card);
        s[15] |= 0x80;
    }
    Ok(changed)
}

/// Adds elements to a dense HLL in place (`s` must be a valid dense HLL);
/// invalidates the cache if a register changed.
pub fn add_dense(s: &mut [u8], elems: &[&[u8]]) -> bool {
    let mut changed = false;
    for e in elems {
        let (i, c) = pat_len(e);
        if dense_get(&s[HDR..], i) < c {
            dense_set(&mut s[HDR..], i, c);
            changed = true;
        }
    }
    if changed {
        s[15] |= 0x80;
    }
    changed
}

/// Stores a cardinality in the header cache (valid).
pub fn store_cache(s: &mut [u8], card: u64) {
    s[8..16].copy_from_slice(&card.to_le_bytes());
}

fn sigma(mut x: f64) -> f64 {
    if x == 1.0 {
        return f64::INFINITY;
    }
    let mut y = 1.0;
    let mut z = x;
    loop {
        x *= x;
        let zp = z;
        z += x * y;
        y += y;
        if zp == z {
            return z;
        }
    }
}

fn tau(mut x: f64) -> f64 {
    if x == 0.0 || x == 1.0 {
        return 0.0;
    }
    let mut y = 1.0;
    let mut z = 1.0 - x;
    loop {
        x = x.sqrt();
        let zp = z;
        y *= 0.5;
        z -= (1.0 - x).powi(2) * y;
        if zp == z {
            return z / 3.0;
        }
    }
}

/// Cardinality estimate of registers (Redis 7's hllCount).
pub fn count(r: &[u8; REGISTERS]) -> u64 {
    let m = REGISTERS as f64;
    let mut histo = [0u32; 64];
    for &x in r.iter() {
        histo[x as usize] += 1;
    }
    let q = Q as usize;
    let mut z = m * tau((m - histo[q + 1] as f64) / m);
    for j in (1..=q).rev() {
        z += histo[j] as f64;
        z *= 0.5;
    }
    z += m * sigma(histo[0] as f64 / m);
    (ALPHA_INF * m * m / z).round() as u64
}

/// Register-wise max of `src` into `acc`.
pub fn merge_into(acc: &mut [u8; REGISTERS], src: &[u8]) -> Result<(), HllError> {
    let r = registers(src)?;
    for (a, b) in acc.iter_mut().zip(r.iter()) {
        *a = (*a).max(*b);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_matches_redis_bytes() {
        // redis> PFADD h ; GET h  => "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\xff"
        let v = new_sparse();
        assert_eq!(
            v,
            b"HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\xff"
        );
        assert_eq!(count(&registers(&v).unwrap()), 0);
    }

    #[test]
    fn counts_close() {
        let mut v = new_sparse();
        let mut all = Vec::new();
        for i in 0..100_000 {
            all.push(format!("elem:{i}").into_bytes());
        }
        for chunk in all.chunks(1000) {
            let refs: Vec<&[u8]> = chunk.iter().map(|x| &x[..]).collect();
            add(&mut v, &refs, 3000).unwrap();
        }
        assert!(!is_sparse(&v));
        let c = count(&registers(&v).unwrap());
        assert!((c as f64 - 100_000.0).abs() < 2000.0, "{c}");
        let mut small = new_sparse();
        add(&mut small, &[b"a", b"b", b"c"], 3000).unwrap();
        assert!(is_sparse(&small));
        assert_eq!(count(&registers(&small).unwrap()), 3);
        // dense <-> registers roundtrip
        let r = registers(&v).unwrap();
        let d = encode_dense(&r, None);
        assert_eq!(&*registers(&d).unwrap(), &*r);
    }

    #[test]
    fn rejects() {
        assert_eq!(validate(b"hello"), Err(HllError::NotHll));
        let mut bad = new_sparse();
        bad.push(0x80);
        assert_eq!(registers(&bad).err(), Some(HllError::Corrupt));
    }
}
