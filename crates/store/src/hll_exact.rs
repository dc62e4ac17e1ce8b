//! HyperLogLog edits that produce Redis 7.0's bytes exactly, so `GET` of a
//! key built by PFADD/PFMERGE/PFCOUNT is byte-for-byte what redis-server
//! holds after the same commands, and Redis-made values work here.
//!
//! The format (header, dense 6-bit registers, sparse ZERO/XZERO/VAL opcodes)
//! is described in [`crate::hll`]; this module adds what byte equality needs
//! beyond the format:
//! * sparse updates edit the opcode stream in place the way Redis does: the
//!   opcode covering the register is split into at most
//!   (ZERO|XZERO|VAL) VAL (ZERO|XZERO|VAL), then adjacent equal VAL opcodes
//!   are merged (run length <= 4) within five opcodes of the edit. The result
//!   is not always the canonical encoding (e.g. `VAL(3,1) VAL(3,4)` can stay),
//!   which is why a decode/re-encode would not match Redis;
//! * a sparse value becomes dense when a register value exceeds 32, or when
//!   an edit would grow it past `hll-sparse-max-bytes` (header included);
//! * the dense conversion copies the 16-byte header whole (the stale cached
//!   cardinality included), and invalidating the cache only sets bit 7 of
//!   byte 15, leaving the old count in the other bytes;
//! * corrupt sparse data is detected exactly where Redis detects it (a
//!   missing second XZERO byte reads as 0, like the string's terminator).

use crate::hll::{pat_len, HllError, DENSE_SIZE, HDR, REGISTERS};

const DENSE: u8 = 0;
const SPARSE: u8 = 1;
/// Longest run of a ZERO opcode; longer zero runs use XZERO.
const ZERO_MAX_LEN: usize = 64;
/// Largest register value a VAL opcode holds.
const VAL_MAX_VALUE: u8 = 32;
/// Longest run of a VAL opcode.
const VAL_MAX_LEN: usize = 4;
/// Redis's HLL_ALPHA_INF, 1 / (2 ln 2).
const ALPHA_INF: f64 = 0.721_347_520_444_481_7;
/// Redis's HLL_Q: hash bits left after the register index.
const Q: usize = 50;

#[inline]
fn is_zero(b: u8) -> bool {
    b & 0xc0 == 0
}
#[inline]
fn is_xzero(b: u8) -> bool {
    b & 0xc0 == 0x40
}
#[inline]
fn is_val(b: u8) -> bool {
    b & 0x80 != 0
}
#[inline]
fn zero_len(b: u8) -> usize {
    (b & 0x3f) as usize + 1
}
#[inline]
fn xzero_len(b0: u8, b1: u8) -> usize {
    (((b0 & 0x3f) as usize) << 8 | b1 as usize) + 1
}
#[inline]
fn val_value(b: u8) -> u8 {
    ((b >> 2) & 0x1f) + 1
}
#[inline]
fn val_len(b: u8) -> usize {
    (b & 3) as usize + 1
}
#[inline]
fn val_op(value: u8, len: usize) -> u8 {
    0x80 | ((value - 1) << 2) | (len - 1) as u8
}

/// Byte `i` of `s`, or 0 past the end (Redis reads the sds terminator).
#[inline]
fn at(s: &[u8], i: usize) -> u8 {
    s.get(i).copied().unwrap_or(0)
}

/// Pushes a zero run of 1..=16384 registers as ZERO or XZERO.
fn push_zeros(seq: &mut Vec<u8>, len: usize) {
    if len > ZERO_MAX_LEN {
        seq.push(0x40 | ((len - 1) >> 8) as u8);
        seq.push(((len - 1) & 0xff) as u8);
    } else {
        seq.push((len - 1) as u8);
    }
}

/// Is this a dense HLL (header already validated)?
pub fn is_dense(s: &[u8]) -> bool {
    s[4] == DENSE
}

/// A new empty HLL as PFADD/PFMERGE create it: sparse, one XZERO opcode
/// covering every register, cached cardinality 0 (valid).
pub fn create() -> Vec<u8> {
    let mut v = Vec::with_capacity(HDR + 2);
    v.extend_from_slice(b"HYLL");
    v.push(SPARSE);
    v.extend_from_slice(&[0; 11]);
    push_zeros(&mut v, REGISTERS);
    v
}

/// Register `i` of dense registers.
#[inline]
pub fn dense_get(regs: &[u8], i: usize) -> u8 {
    let byte = i * 6 / 8;
    let fb = (i * 6) & 7;
    let b0 = regs[byte] as u32;
    let b1 = at(regs, byte + 1) as u32;
    (((b0 >> fb) | (b1 << (8 - fb))) & 63) as u8
}

/// Sets register `i` of dense registers to `v` (0..=63).
#[inline]
pub fn dense_put(regs: &mut [u8], i: usize, v: u8) {
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

/// Raises register `i` to `count` if lower (hllDenseSet); true if changed.
#[inline]
pub fn dense_raise(regs: &mut [u8], i: usize, count: u8) -> bool {
    if dense_get(regs, i) < count {
        dense_put(regs, i, count);
        true
    } else {
        false
    }
}

/// Marks the cached cardinality stale (bit 7 of the last cache byte).
pub fn invalidate_cache(s: &mut [u8]) {
    s[15] |= 0x80;
}

/// The cached cardinality, when valid.
pub fn cached(s: &[u8]) -> Option<u64> {
    if s[15] & 0x80 != 0 {
        None
    } else {
        Some(u64::from_le_bytes(s[8..16].try_into().unwrap()))
    }
}

pub fn set_cache(s: &mut [u8], card: u64) {
    s[8..16].copy_from_slice(&card.to_le_bytes());
}

/// Converts a sparse HLL to dense in place (hllSparseToDense). A dense one
/// is left alone.
pub fn to_dense(s: &mut Vec<u8>) -> Result<(), HllError> {
    if s[4] == DENSE {
        return Ok(());
    }
    let mut d = vec![0u8; DENSE_SIZE];
    d[..HDR].copy_from_slice(&s[..HDR]);
    d[4] = DENSE;
    let mut idx = 0usize;
    let mut p = HDR;
    while p < s.len() {
        let b = s[p];
        if is_zero(b) {
            let run = zero_len(b);
            if idx + run > REGISTERS {
                break;
            }
            idx += run;
            p += 1;
        } else if is_xzero(b) {
            let run = xzero_len(b, at(s, p + 1));
            if idx + run > REGISTERS {
                break;
            }
            idx += run;
            p += 2;
        } else {
            let run = val_len(b);
            let v = val_value(b);
            if idx + run > REGISTERS {
                break;
            }
            for _ in 0..run {
                dense_put(&mut d[HDR..], idx, v);
                idx += 1;
            }
            p += 1;
        }
    }
    if idx != REGISTERS {
        return Err(HllError::Corrupt);
    }
    *s = d;
    Ok(())
}

/// Raises register `index` of a sparse HLL to `count` (hllSparseSet), in
/// place, promoting to dense when needed. Ok(true) if a register changed.
pub fn sparse_set(
    s: &mut Vec<u8>,
    index: usize,
    count: u8,
    sparse_max: u64,
) -> Result<bool, HllError> {
    if count > VAL_MAX_VALUE {
        return promote(s, index, count);
    }
    // Step 1: find the opcode covering `index`.
    let mut end = s.len();
    let mut p = HDR;
    let mut first = 0usize;
    let mut prev: Option<usize> = None;
    let mut span = 0usize;
    let mut oplen = 1;
    while p < end {
        let b = s[p];
        oplen = 1;
        span = if is_zero(b) {
            zero_len(b)
        } else if is_val(b) {
            val_len(b)
        } else {
            oplen = 2;
            xzero_len(b, at(s, p + 1))
        };
        if index < first + span {
            break;
        }
        prev = Some(p);
        p += oplen;
        first += span;
    }
    if span == 0 || p >= end {
        return Err(HllError::Corrupt);
    }
    let b = s[p];
    let runlen = span;
    // Step 2: the trivial in-place cases.
    let mut updated = false;
    if is_val(b) {
        if val_value(b) >= count {
            return Ok(false);
        }
        if runlen == 1 {
            s[p] = val_op(count, 1);
            updated = true;
        }
    }
    if !updated && is_zero(b) && runlen == 1 {
        s[p] = val_op(count, 1);
        updated = true;
    }
    if !updated {
        // General case: split the opcode around the register.
        let last = first + span - 1;
        let mut seq: Vec<u8> = Vec::with_capacity(5);
        if is_val(b) {
            let cur = val_value(b);
            if index != first {
                seq.push(val_op(cur, index - first));
            }
            seq.push(val_op(count, 1));
            if index != last {
                seq.push(val_op(cur, last - index));
            }
        } else {
            if index != first {
                push_zeros(&mut seq, index - first);
            }
            seq.push(val_op(count, 1));
            if index != last {
                push_zeros(&mut seq, last - index);
            }
        }
        // Step 3: replace the old opcode, or go dense if too big.
        let grow = seq.len() as i64 - oplen as i64;
        if grow > 0 && (s.len() as u64 + grow as u64) > sparse_max {
            return promote(s, index, count);
        }
        s.splice(p..p + oplen, seq);
        end = s.len();
    }
    // Step 4: merge adjacent equal VAL opcodes near the edit.
    let mut q = prev.unwrap_or(HDR);
    let mut scan = 5;
    while q < end && scan > 0 {
        scan -= 1;
        let b = s[q];
        if is_xzero(b) {
            q += 2;
            continue;
        }
        if is_zero(b) {
            q += 1;
            continue;
        }
        if q + 1 < end && is_val(s[q + 1]) {
            let (v1, v2) = (val_value(b), val_value(s[q + 1]));
            let len = val_len(b) + val_len(s[q + 1]);
            if v1 == v2 && len <= VAL_MAX_LEN {
                s[q + 1] = val_op(v1, len);
                s.remove(q);
                end -= 1;
                continue;
            }
        }
        q += 1;
    }
    invalidate_cache(s);
    Ok(true)
}

fn promote(s: &mut Vec<u8>, index: usize, count: u8) -> Result<bool, HllError> {
    to_dense(s)?;
    let changed = dense_raise(&mut s[HDR..], index, count);
    debug_assert!(changed, "a promotion always changes a register");
    Ok(changed)
}

/// Adds one element (hllAdd); Ok(true) if a register changed. `s` is a
/// validated HLL (see [`crate::hll::validate`]).
pub fn add(s: &mut Vec<u8>, elem: &[u8], sparse_max: u64) -> Result<bool, HllError> {
    let (index, count) = pat_len(elem);
    match s[4] {
        DENSE => Ok(dense_raise(&mut s[HDR..], index, count)),
        SPARSE => sparse_set(s, index, count, sparse_max),
        _ => Err(HllError::Corrupt),
    }
}

/// Adds one element to a dense HLL held in place (no copy of 12 KB).
pub fn add_dense_in_place(s: &mut [u8], elem: &[u8]) -> bool {
    let (index, count) = pat_len(elem);
    dense_raise(&mut s[HDR..], index, count)
}

/// Register-wise maximum of `s` into `max` (hllMerge).
pub fn merge_into(max: &mut [u8], s: &[u8]) -> Result<(), HllError> {
    if s[4] == DENSE {
        for (i, m) in max.iter_mut().enumerate().take(REGISTERS) {
            let v = dense_get(&s[HDR..], i);
            if v > *m {
                *m = v;
            }
        }
        return Ok(());
    }
    let mut i = 0usize;
    let mut p = HDR;
    while p < s.len() {
        let b = s[p];
        if is_zero(b) {
            i += zero_len(b);
            p += 1;
        } else if is_xzero(b) {
            i += xzero_len(b, at(s, p + 1));
            p += 2;
        } else {
            let run = val_len(b);
            let v = val_value(b);
            if i + run > REGISTERS {
                break;
            }
            for m in &mut max[i..i + run] {
                if v > *m {
                    *m = v;
                }
            }
            i += run;
            p += 1;
        }
    }
    if i != REGISTERS {
        return Err(HllError::Corrupt);
    }
    Ok(())
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
        let d = 1.0 - x;
        z -= d * d * y;
        if zp == z {
            return z / 3.0;
        }
    }
}

/// Cardinality from a register-value histogram (Ertl's estimator, hllCount).
fn count_histo(h: &[u32; 64]) -> u64 {
    let m = REGISTERS as f64;
    let mut z = m * tau((m - h[Q + 1] as f64) / m);
    for j in (1..=Q).rev() {
        z += h[j] as f64;
        z *= 0.5;
    }
    z += m * sigma(h[0] as f64 / m);
    (ALPHA_INF * m * m / z).round() as u64
}

/// Cardinality of one register per byte (PFCOUNT of several keys).
pub fn count_registers(regs: &[u8]) -> u64 {
    let mut h = [0u32; 64];
    for &r in regs {
        h[(r & 63) as usize] += 1;
    }
    count_histo(&h)
}

/// Cardinality of a validated HLL, ignoring its cache (Err for corrupt
/// sparse data).
pub fn count(s: &[u8]) -> Result<u64, HllError> {
    let mut h = [0u32; 64];
    if s[4] == DENSE {
        for i in 0..REGISTERS {
            h[dense_get(&s[HDR..], i) as usize] += 1;
        }
        return Ok(count_histo(&h));
    }
    let mut idx = 0usize;
    let mut p = HDR;
    while p < s.len() {
        let b = s[p];
        if is_zero(b) {
            let run = zero_len(b);
            idx += run;
            h[0] += run as u32;
            p += 1;
        } else if is_xzero(b) {
            let run = xzero_len(b, at(s, p + 1));
            idx += run;
            h[0] += run as u32;
            p += 2;
        } else {
            let run = val_len(b);
            idx += run;
            h[val_value(b) as usize] += run as u32;
            p += 1;
        }
    }
    if idx != REGISTERS {
        return Err(HllError::Corrupt);
    }
    Ok(count_histo(&h))
}

/// Decodes a validated HLL to one byte per register.
pub fn registers(s: &[u8]) -> Result<Vec<u8>, HllError> {
    let mut r = vec![0u8; REGISTERS];
    merge_into(&mut r, s)?;
    Ok(r)
}

/// PFSELFTEST: (1) dense registers keep random values without disturbing
/// their neighbours; (2) adding 1..=10M distinct elements to a dense and a
/// sparse HLL side by side, at every power of ten the sparse one is still
/// sparse while small, both counts agree, and the error is within six
/// standard errors. Err carries Redis's "TESTFAILED ..." text.
pub fn selftest(sparse_max: u64, seed: u64, elements: u64) -> Result<(), String> {
    let mut rng = seed | 1;
    let mut next = || {
        // xorshift64*
        rng ^= rng >> 12;
        rng ^= rng << 25;
        rng ^= rng >> 27;
        rng.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    let mut dense = vec![0u8; DENSE_SIZE];
    let mut want = vec![0u8; REGISTERS];
    for _ in 0..1000 {
        for (i, w) in want.iter_mut().enumerate() {
            *w = (next() & 63) as u8;
            dense_put(&mut dense[HDR..], i, *w);
        }
        for (i, &w) in want.iter().enumerate() {
            let got = dense_get(&dense[HDR..], i);
            if got != w {
                return Err(format!(
                    "TESTFAILED Register {i} should be {w} but is {got}"
                ));
            }
        }
    }
    dense[HDR..].fill(0);
    dense[..5].copy_from_slice(b"HYLL\x00");
    let mut sparse = create();
    let relerr = 1.04 / (REGISTERS as f64).sqrt();
    let base = next();
    let mut checkpoint = 1u64;
    for j in 1..=elements {
        let ele = (j ^ base).to_le_bytes();
        add_dense_in_place(&mut dense, &ele);
        add(&mut sparse, &ele, sparse_max).map_err(|_| "TESTFAILED corrupted sparse HLL")?;
        if j != checkpoint {
            continue;
        }
        if j < sparse_max / 2 && is_dense(&sparse) {
            return Err("TESTFAILED sparse encoding not used".into());
        }
        let cd = count(&dense).map_err(|_| "TESTFAILED corrupted dense HLL")?;
        let cs = count(&sparse).map_err(|_| "TESTFAILED corrupted sparse HLL")?;
        if cd != cs {
            return Err("TESTFAILED dense/sparse disagree".into());
        }
        let abserr = (checkpoint as f64 - cd as f64).abs();
        let maxerr = if j == 10 {
            1.0
        } else {
            (relerr * 6.0 * checkpoint as f64).ceil()
        };
        if abserr > maxerr {
            return Err(format!(
                "TESTFAILED Too big error. card:{checkpoint} abserr:{}",
                abserr as u64
            ));
        }
        checkpoint *= 10;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn add_all(s: &mut Vec<u8>, elems: &[Vec<u8>], max: u64) -> bool {
        let mut changed = false;
        for e in elems {
            changed |= add(s, e, max).unwrap();
        }
        if changed {
            invalidate_cache(s);
        }
        changed
    }

    #[test]
    fn selftest_passes() {
        assert_eq!(selftest(3000, 12345, 100_000), Ok(()));
    }

    #[test]
    fn empty_is_redis_bytes() {
        assert_eq!(
            create(),
            b"HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\xff"
        );
        assert_eq!(count(&create()), Ok(0));
    }

    #[test]
    fn redis_reference_values() {
        // redis-server 7.0: PFADD h a b c ; GET h
        let mut s = create();
        let elems: Vec<Vec<u8>> = ["a", "b", "c"]
            .iter()
            .map(|x| x.as_bytes().to_vec())
            .collect();
        add_all(&mut s, &elems, 3000);
        assert_eq!(count(&s), Ok(3));
    }

    #[test]
    fn promotion_on_size() {
        let mut s = create();
        let elems: Vec<Vec<u8>> = (0..5000).map(|i| format!("e{i}").into_bytes()).collect();
        add_all(&mut s, &elems, 3000);
        assert!(is_dense(&s));
        assert_eq!(s.len(), DENSE_SIZE);
        let c = count(&s).unwrap() as f64;
        assert!((c - 5000.0).abs() < 250.0, "{c}");
    }

    #[test]
    fn merge_runs_limit() {
        // VAL(3,1) then VAL(3,4) cannot merge (run 5): stays two opcodes.
        let mut s = create();
        for i in 1..5 {
            sparse_set(&mut s, i, 3, 3000).unwrap();
        }
        sparse_set(&mut s, 0, 3, 3000).unwrap();
        let body = &s[HDR..];
        assert_eq!(body[0], val_op(3, 1));
        assert_eq!(body[1], val_op(3, 4));
        assert_eq!(registers(&s).unwrap()[..6], [3, 3, 3, 3, 3, 0]);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Sparse and dense representations of the same adds hold the same
        /// registers and give the same count; every sparse edit keeps the
        /// stream valid.
        #[test]
        fn sparse_dense_agree(elems in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..6), 0..400), max in 20u64..4000) {
            let mut sparse = create();
            let mut dense = create();
            to_dense(&mut dense).unwrap();
            let mut model = vec![0u8; REGISTERS];
            for e in &elems {
                let (i, c) = pat_len(e);
                let changed_model = model[i] < c;
                model[i] = model[i].max(c);
                prop_assert_eq!(add(&mut sparse, e, max).unwrap(), changed_model);
                prop_assert_eq!(add(&mut dense, e, max).unwrap(), changed_model);
                if !is_dense(&sparse) {
                    prop_assert!(sparse.len() as u64 <= max.max(HDR as u64 + 2));
                }
            }
            prop_assert_eq!(registers(&sparse).unwrap(), model.clone());
            prop_assert_eq!(registers(&dense).unwrap(), model.clone());
            let c = count_registers(&model);
            prop_assert_eq!(count(&sparse).unwrap(), c);
            prop_assert_eq!(count(&dense).unwrap(), c);
        }

        #[test]
        fn direct_sets_match_model(sets in proptest::collection::vec((0usize..REGISTERS, 1u8..=40), 0..300)) {
            let mut s = create();
            let mut model = vec![0u8; REGISTERS];
            for (i, c) in sets {
                let want = model[i] < c;
                model[i] = model[i].max(c);
                prop_assert_eq!(sparse_set_any(&mut s, i, c), want);
            }
            prop_assert_eq!(registers(&s).unwrap(), model);
        }
    }

    fn sparse_set_any(s: &mut Vec<u8>, i: usize, c: u8) -> bool {
        if is_dense(s) {
            dense_raise(&mut s[HDR..], i, c)
        } else {
            sparse_set(s, i, c, 3000).unwrap()
        }
    }
}
