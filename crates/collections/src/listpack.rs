//! `Listpack`: a contiguous byte block in Redis 7.0's listpack format.
//!
//! Layout (all integers little-endian), so RDB save/load can copy the block:
//!
//! ```text
//! <total-bytes u32> <num-elements u16> <entry> ... <entry> <0xFF>
//! entry = <encoding+data> <backlen>
//! ```
//!
//! Encodings (first byte):
//! * `0xxxxxxx` 7-bit unsigned int; `10LLLLLL` string of < 64 bytes;
//! * `110xxxxx yyyyyyyy` 13-bit signed int; `1110LLLL LLLLLLLL` string < 4096 bytes;
//! * `0xF0 <u32 len>` long string; `0xF1`/`0xF2`/`0xF3`/`0xF4` 16/24/32/64-bit
//!   signed int; `0xFF` terminator.
//!
//! `backlen` encodes the length of `<encoding+data>` in 1..5 bytes of 7 bits,
//! readable right-to-left: the last byte carries the lowest 7 bits, every byte
//! but the first has its high bit set.
//!
//! Invariants (checked by [`Listpack::validate`] and debug assertions):
//! * `buf[0..4]` equals `buf.len()`, the last byte is `0xFF`;
//! * `buf[4..6]` equals `min(len, 65535)` (65535 = "unknown, count it");
//!   `self.count` always holds the exact element count;
//! * every entry's backlen equals its encoded length; strings that satisfy
//!   Redis's `lpStringToInt64` rules (see [`string_to_i64`]) are stored as
//!   integers with the smallest encoding, as Redis does.
//!
//! Capacity is the allocator size class of the length (see [`crate::mem`]):
//! it grows and shrinks with the content, class by class, so a listpack
//! never keeps room a larger past content needed;
//! [`Listpack::heap_bytes`] reports the capacity.

use crate::mem::grow_capacity;
use std::fmt;

/// Header size: total bytes (u32) + element count (u16).
pub const HEADER_SIZE: usize = 6;
/// Terminator byte.
pub const EOF: u8 = 0xFF;
const EMPTY_BYTES: usize = HEADER_SIZE + 1;
const NUMELE_UNKNOWN: u16 = u16::MAX;

/// One listpack element: a byte string or an integer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LpValue<'a> {
    Str(&'a [u8]),
    Int(i64),
}

impl<'a> LpValue<'a> {
    /// The element as bytes (integers in decimal).
    pub fn to_vec(&self) -> Vec<u8> {
        match *self {
            LpValue::Str(s) => s.to_vec(),
            LpValue::Int(v) => v.to_string().into_bytes(),
        }
    }

    /// True if this element equals the byte string `s` (integers compare by
    /// their decimal form).
    pub fn eq_bytes(&self, s: &[u8]) -> bool {
        match *self {
            LpValue::Str(x) => x == s,
            LpValue::Int(v) => string_to_i64(s) == Some(v),
        }
    }

    /// Parse as an integer the way Redis's `lpGetValue` + `string2ll` would.
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            LpValue::Int(v) => Some(v),
            LpValue::Str(s) => std::str::from_utf8(s).ok()?.parse().ok(),
        }
    }
}

impl fmt::Display for LpValue<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LpValue::Str(s) => write!(f, "{}", String::from_utf8_lossy(s)),
            LpValue::Int(v) => write!(f, "{v}"),
        }
    }
}

/// A byte string prepared for many comparisons with listpack elements
/// (LPOS, LREM, LINSERT): its integer form is parsed once.
#[derive(Clone, Copy, Debug)]
pub struct Needle<'a> {
    raw: &'a [u8],
    int: Option<i64>,
}

impl<'a> Needle<'a> {
    pub fn new(raw: &'a [u8]) -> Self {
        Needle {
            raw,
            int: string_to_i64(raw),
        }
    }

    /// True if `v` equals the needle byte for byte (a stored string is
    /// never a canonical integer, so each kind compares with its own form).
    #[inline]
    pub fn matches(&self, v: LpValue<'_>) -> bool {
        match v {
            LpValue::Int(x) => self.int == Some(x),
            LpValue::Str(b) => b == self.raw,
        }
    }
}

/// Redis's `lpStringToInt64`: a canonical decimal i64 — no sign other than a
/// leading `-`, no leading zeros (except `"0"` itself), no `"-0"`, no spaces,
/// at most 20 bytes, no overflow.
pub fn string_to_i64(s: &[u8]) -> Option<i64> {
    if s.is_empty() || s.len() > 20 {
        return None;
    }
    if s == b"0" {
        return Some(0);
    }
    let (neg, digits) = if s[0] == b'-' {
        (true, &s[1..])
    } else {
        (false, s)
    };
    if digits.is_empty() || !(b'1'..=b'9').contains(&digits[0]) {
        return None;
    }
    let mut v: u64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add((c - b'0') as u64)?;
    }
    if neg {
        if v > (i64::MAX as u64) + 1 {
            return None;
        }
        Some((v as i64).wrapping_neg())
    } else {
        i64::try_from(v).ok()
    }
}

/// An element ready to be written: integer or string.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Enc<'a> {
    Int(i64),
    Str(&'a [u8]),
}

impl<'a> Enc<'a> {
    /// Canonical encoding of a byte string (ints when they parse as ints).
    pub(crate) fn of(s: &'a [u8]) -> Enc<'a> {
        match string_to_i64(s) {
            Some(v) => Enc::Int(v),
            None => Enc::Str(s),
        }
    }
}

/// Encoded entry header (+ integer payload) in a small stack buffer; string
/// payloads are written separately.
pub(crate) struct Encoded<'a> {
    pub(crate) head: [u8; 9],
    pub(crate) head_len: usize,
    pub(crate) data: &'a [u8],
    pub(crate) back: [u8; 5],
    pub(crate) back_len: usize,
}

impl Encoded<'_> {
    pub(crate) fn total(&self) -> usize {
        self.head_len + self.data.len() + self.back_len
    }

    /// The entry's bytes in order: header, payload, backlen.
    pub(crate) fn parts(&self) -> [&[u8]; 3] {
        [
            &self.head[..self.head_len],
            self.data,
            &self.back[..self.back_len],
        ]
    }
}

pub(crate) fn encode(e: Enc<'_>) -> Encoded<'_> {
    let mut head = [0u8; 9];
    let (head_len, data): (usize, &[u8]) = match e {
        Enc::Int(v) => {
            let n = if (0..=127).contains(&v) {
                head[0] = v as u8;
                1
            } else if (-4096..=4095).contains(&v) {
                let u = (v as u64) & 0x1FFF;
                head[0] = 0xC0 | (u >> 8) as u8;
                head[1] = u as u8;
                2
            } else if (-32768..=32767).contains(&v) {
                head[0] = 0xF1;
                head[1..3].copy_from_slice(&(v as i16).to_le_bytes());
                3
            } else if (-8_388_608..=8_388_607).contains(&v) {
                head[0] = 0xF2;
                head[1..4].copy_from_slice(&(v as i32).to_le_bytes()[..3]);
                4
            } else if (i32::MIN as i64..=i32::MAX as i64).contains(&v) {
                head[0] = 0xF3;
                head[1..5].copy_from_slice(&(v as i32).to_le_bytes());
                5
            } else {
                head[0] = 0xF4;
                head[1..9].copy_from_slice(&v.to_le_bytes());
                9
            };
            (n, &[])
        }
        Enc::Str(s) => {
            let l = s.len();
            let n = if l < 64 {
                head[0] = 0x80 | l as u8;
                1
            } else if l < 4096 {
                head[0] = 0xE0 | (l >> 8) as u8;
                head[1] = l as u8;
                2
            } else {
                head[0] = 0xF0;
                head[1..5].copy_from_slice(&(l as u32).to_le_bytes());
                5
            };
            (n, s)
        }
    };
    let mut back = [0u8; 5];
    let back_len = encode_backlen(head_len + data.len(), &mut back);
    Encoded {
        head,
        head_len,
        data,
        back,
        back_len,
    }
}

/// Redis's `lpEncodeBacklen` (same thresholds, byte for byte).
fn encode_backlen(l: usize, buf: &mut [u8; 5]) -> usize {
    let l = l as u64;
    if l <= 127 {
        buf[0] = l as u8;
        1
    } else if l < 16383 {
        buf[0] = (l >> 7) as u8;
        buf[1] = (l & 127) as u8 | 128;
        2
    } else if l < 2_097_151 {
        buf[0] = (l >> 14) as u8;
        buf[1] = ((l >> 7) & 127) as u8 | 128;
        buf[2] = (l & 127) as u8 | 128;
        3
    } else if l < 268_435_455 {
        buf[0] = (l >> 21) as u8;
        buf[1] = ((l >> 14) & 127) as u8 | 128;
        buf[2] = ((l >> 7) & 127) as u8 | 128;
        buf[3] = (l & 127) as u8 | 128;
        4
    } else {
        buf[0] = (l >> 28) as u8;
        buf[1] = ((l >> 21) & 127) as u8 | 128;
        buf[2] = ((l >> 14) & 127) as u8 | 128;
        buf[3] = ((l >> 7) & 127) as u8 | 128;
        buf[4] = (l & 127) as u8 | 128;
        5
    }
}

fn backlen_size(l: usize) -> usize {
    if l <= 127 {
        1
    } else if l < 16383 {
        2
    } else if l < 2_097_151 {
        3
    } else if l < 268_435_455 {
        4
    } else {
        5
    }
}

/// Bytes an element would take once encoded (entry + backlen).
pub fn encoded_size(s: &[u8]) -> usize {
    encode(Enc::of(s)).total()
}

/// Decode the entry starting at `p`: its value and the length of
/// `<encoding+data>` (without backlen). `None` on a malformed/EOF byte.
#[inline]
fn decode(buf: &[u8], p: usize) -> Option<(LpValue<'_>, usize)> {
    let b = *buf.get(p)?;
    if b & 0x80 == 0 {
        return Some((LpValue::Int(b as i64), 1));
    }
    if b & 0xC0 == 0x80 {
        let l = (b & 0x3F) as usize;
        return Some((LpValue::Str(buf.get(p + 1..p + 1 + l)?), 1 + l));
    }
    if b & 0xE0 == 0xC0 {
        let u = (((b & 0x1F) as u64) << 8) | *buf.get(p + 1)? as u64;
        let v = if u >= 1 << 12 {
            u as i64 - (1 << 13)
        } else {
            u as i64
        };
        return Some((LpValue::Int(v), 2));
    }
    if b & 0xF0 == 0xE0 {
        let l = (((b & 0x0F) as usize) << 8) | *buf.get(p + 1)? as usize;
        return Some((LpValue::Str(buf.get(p + 2..p + 2 + l)?), 2 + l));
    }
    let le = |n: usize| -> Option<u64> {
        let s = buf.get(p + 1..p + 1 + n)?;
        let mut v = 0u64;
        for (i, &x) in s.iter().enumerate() {
            v |= (x as u64) << (8 * i);
        }
        Some(v)
    };
    match b {
        0xF0 => {
            let l = le(4)? as usize;
            Some((LpValue::Str(buf.get(p + 5..p + 5 + l)?), 5 + l))
        }
        0xF1 => Some((LpValue::Int(le(2)? as u16 as i16 as i64), 3)),
        0xF2 => {
            let u = le(3)? as u32;
            Some((LpValue::Int(((u << 8) as i32 >> 8) as i64), 4))
        }
        0xF3 => Some((LpValue::Int(le(4)? as u32 as i32 as i64), 5)),
        0xF4 => Some((LpValue::Int(le(8)? as i64), 9)),
        _ => None,
    }
}

/// Read a backlen whose last byte is at `p`. Returns (value, byte count).
fn decode_backlen(buf: &[u8], mut p: usize) -> Option<(usize, usize)> {
    let mut v = 0u64;
    let mut shift = 0;
    let mut n = 0;
    loop {
        let b = *buf.get(p)?;
        v |= ((b & 127) as u64) << shift;
        n += 1;
        if b & 128 == 0 {
            break;
        }
        if n == 5 || p == 0 {
            return None;
        }
        shift += 7;
        p -= 1;
    }
    Some((v as usize, n))
}

/// Offset of the entry before `off` in listpack-format bytes (`off` may
/// be the terminator's offset); `None` at the first entry. Panics on a
/// malformed backlen.
#[inline]
pub(crate) fn prev_offset_in(buf: &[u8], off: usize) -> Option<usize> {
    if off <= HEADER_SIZE {
        return None;
    }
    let (l, k) = decode_backlen(buf, off - 1).expect("listpack: bad backlen");
    Some(off - k - l)
}

/// Error from [`Listpack::from_bytes`].
/// Entry at byte offset `off` of listpack-format bytes and the offset of
/// the next entry. Panics if `off` is not an entry start.
#[inline]
pub(crate) fn entry_at(buf: &[u8], off: usize) -> (LpValue<'_>, usize) {
    let (v, l) = decode(buf, off).expect("listpack: not an entry offset");
    (v, off + l + backlen_size(l))
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidListpack(pub &'static str);

/// A Redis-compatible listpack.
#[derive(Clone, PartialEq, Eq)]
pub struct Listpack {
    buf: Vec<u8>,
    count: usize,
}

impl Default for Listpack {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Listpack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Listpack {
    /// An empty listpack (7 bytes).
    pub fn new() -> Self {
        let mut buf = Vec::with_capacity(grow_capacity(EMPTY_BYTES));
        buf.extend_from_slice(&(EMPTY_BYTES as u32).to_le_bytes());
        buf.extend_from_slice(&0u16.to_le_bytes());
        buf.push(EOF);
        Listpack { buf, count: 0 }
    }

    /// Adopt a serialized listpack (e.g. from RDB) after full validation.
    /// Its capacity becomes the size class of its length.
    pub fn from_bytes(mut buf: Vec<u8>) -> Result<Self, InvalidListpack> {
        let count = Self::validate_bytes(&buf)?;
        crate::mem::fit_to_class(&mut buf);
        Ok(Listpack { buf, count })
    }

    /// Check every structural invariant of a serialized listpack; returns
    /// the element count.
    pub fn validate_bytes(buf: &[u8]) -> Result<usize, InvalidListpack> {
        if buf.len() < EMPTY_BYTES {
            return Err(InvalidListpack("too short"));
        }
        let total = u32::from_le_bytes(buf[0..4].try_into().unwrap()) as usize;
        if total != buf.len() {
            return Err(InvalidListpack("total bytes mismatch"));
        }
        if buf[buf.len() - 1] != EOF {
            return Err(InvalidListpack("missing terminator"));
        }
        let hdr = u16::from_le_bytes(buf[4..6].try_into().unwrap());
        let mut p = HEADER_SIZE;
        let mut n = 0usize;
        while buf[p] != EOF {
            let (_, l) = decode(buf, p).ok_or(InvalidListpack("bad entry"))?;
            let bl = backlen_size(l);
            if p + l + bl >= buf.len() {
                return Err(InvalidListpack("entry overflows"));
            }
            match decode_backlen(buf, p + l + bl - 1) {
                Some((v, k)) if v == l && k == bl => {}
                _ => return Err(InvalidListpack("bad backlen")),
            }
            p += l + bl;
            n += 1;
        }
        if p != buf.len() - 1 {
            return Err(InvalidListpack("data after terminator"));
        }
        if hdr != NUMELE_UNKNOWN && hdr as usize != n {
            return Err(InvalidListpack("count mismatch"));
        }
        if hdr == NUMELE_UNKNOWN && n < NUMELE_UNKNOWN as usize {
            return Err(InvalidListpack("count mismatch"));
        }
        Ok(n)
    }

    /// Debug check of all invariants.
    pub fn validate(&self) -> Result<(), InvalidListpack> {
        let n = Self::validate_bytes(&self.buf)?;
        if n != self.count {
            return Err(InvalidListpack("cached count"));
        }
        Ok(())
    }

    /// The serialized bytes (Redis format).
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf
    }

    /// Give up the serialized bytes.
    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Serialized size (`lpBytes`).
    pub fn bytes_len(&self) -> usize {
        self.buf.len()
    }

    /// Heap bytes owned (buffer capacity).
    pub fn heap_bytes(&self) -> usize {
        self.buf.capacity()
    }

    /// Offset of the first entry (== [`Self::end_offset`] when empty).
    pub fn first_offset(&self) -> usize {
        HEADER_SIZE
    }

    /// Offset of the terminator.
    pub fn end_offset(&self) -> usize {
        self.buf.len() - 1
    }

    /// Entry at byte offset `off` and the offset of the next entry.
    /// Panics if `off` is not an entry start.
    #[inline]
    pub fn entry_at(&self, off: usize) -> (LpValue<'_>, usize) {
        entry_at(&self.buf, off)
    }

    /// Offset of the entry after the one at `off`, or `None` at the end.
    #[inline]
    pub fn next_offset(&self, off: usize) -> Option<usize> {
        let (_, n) = self.entry_at(off);
        (self.buf[n] != EOF).then_some(n)
    }

    /// Offset of the entry before `off` (`off` may be the end offset).
    #[inline]
    pub fn prev_offset(&self, off: usize) -> Option<usize> {
        prev_offset_in(&self.buf, off)
    }

    /// Byte offset of element `index` (negative counts from the tail), the
    /// listpack `lpSeek`. Walks from the nearer end.
    pub fn seek(&self, index: isize) -> Option<usize> {
        let n = self.count as isize;
        let i = if index < 0 { n + index } else { index };
        if i < 0 || i >= n {
            return None;
        }
        let i = i as usize;
        if i < self.count / 2 {
            let mut off = HEADER_SIZE;
            for _ in 0..i {
                off = self.entry_at(off).1;
            }
            Some(off)
        } else {
            let mut off = self.end_offset();
            for _ in 0..(self.count - i) {
                off = self.prev_offset(off).unwrap();
            }
            Some(off)
        }
    }

    /// Element at `index` (negative counts from the tail).
    pub fn get(&self, index: isize) -> Option<LpValue<'_>> {
        self.seek(index).map(|o| self.entry_at(o).0)
    }

    pub fn first(&self) -> Option<LpValue<'_>> {
        self.get(0)
    }

    pub fn last(&self) -> Option<LpValue<'_>> {
        self.get(-1)
    }

    /// Forward/backward iterator over the elements.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            buf: &self.buf,
            front: HEADER_SIZE,
            back: self.end_offset(),
            left: self.count,
        }
    }

    /// Iterator over the elements from `index` (0..=len) to the tail; its
    /// `next_back` still ends at the tail. Seeks from the nearer end.
    pub fn iter_at(&self, index: usize) -> Iter<'_> {
        if index >= self.count {
            return Iter {
                buf: &self.buf,
                front: self.end_offset(),
                back: self.end_offset(),
                left: 0,
            };
        }
        Iter {
            buf: &self.buf,
            front: self.seek(index as isize).unwrap(),
            back: self.end_offset(),
            left: self.count - index,
        }
    }

    /// Iterator over the elements `0..=index` (clipped to len), to be
    /// walked with `.rev()` from element `index` towards the head.
    pub fn iter_upto(&self, index: usize) -> Iter<'_> {
        if index + 1 >= self.count {
            return self.iter();
        }
        let off = self.seek(index as isize).unwrap();
        Iter {
            buf: &self.buf,
            front: HEADER_SIZE,
            back: self.entry_at(off).1,
            left: index + 1,
        }
    }

    /// Index of the first element equal to `s`, comparing every `stride`-th
    /// element starting at `start` (stride 2 finds hash fields).
    pub fn find(&self, s: &[u8], start: usize, stride: usize) -> Option<usize> {
        let want = Enc::of(s);
        let mut off = self.seek(start as isize)?;
        let mut i = start;
        loop {
            let (v, mut next) = self.entry_at(off);
            let hit = match (want, v) {
                (Enc::Int(a), LpValue::Int(b)) => a == b,
                (Enc::Str(a), LpValue::Str(b)) => a == b,
                (Enc::Int(_), LpValue::Str(b)) => b == s,
                (Enc::Str(_), LpValue::Int(_)) => false,
            };
            if hit {
                return Some(i);
            }
            for _ in 1..stride {
                if self.buf[next] == EOF {
                    return None;
                }
                next = self.entry_at(next).1;
            }
            if self.buf[next] == EOF {
                return None;
            }
            off = next;
            i += stride;
        }
    }

    fn set_header(&mut self) {
        let total = self.buf.len() as u32;
        self.buf[0..4].copy_from_slice(&total.to_le_bytes());
        let n = self.count.min(NUMELE_UNKNOWN as usize) as u16;
        self.buf[4..6].copy_from_slice(&n.to_le_bytes());
    }

    /// Replace `remove` bytes at `off` by the concatenation of `parts`.
    fn splice(&mut self, off: usize, remove: usize, parts: &[&[u8]]) {
        let ins: usize = parts.iter().map(|p| p.len()).sum();
        let old = self.buf.len();
        let new_len = old - remove + ins;
        assert!(new_len <= u32::MAX as usize, "listpack over 4 GiB");
        if ins > remove {
            if new_len > self.buf.capacity() {
                let cap = grow_capacity(new_len);
                self.buf.reserve_exact(cap - old);
            }
            self.buf.resize(new_len, 0);
            self.buf.copy_within(off + remove..old, off + ins);
        } else if ins < remove {
            self.buf.copy_within(off + remove..old, off + ins);
            self.buf.truncate(new_len);
        }
        let mut p = off;
        for part in parts {
            self.buf[p..p + part.len()].copy_from_slice(part);
            p += part.len();
        }
        // Never more room than the size class of the length (Redis
        // reallocates a listpack to its exact size on every change).
        if self.buf.capacity() > grow_capacity(new_len) {
            self.buf.shrink_to(grow_capacity(new_len));
        }
    }

    fn write_enc(&mut self, off: usize, remove: usize, e: Enc<'_>) -> usize {
        let enc = encode(e);
        let total = enc.total();
        self.splice(off, remove, &enc.parts());
        total
    }

    /// Insert `s` at byte offset `off` (an entry start or the end offset).
    /// Returns the number of bytes inserted.
    pub fn insert_at_offset(&mut self, off: usize, s: &[u8]) -> usize {
        self.insert_enc_at_offset(off, Enc::of(s))
    }

    pub(crate) fn insert_enc_at_offset(&mut self, off: usize, e: Enc<'_>) -> usize {
        let n = self.write_enc(off, 0, e);
        self.count += 1;
        self.set_header();
        n
    }

    /// Insert an integer at byte offset `off`.
    pub fn insert_int_at_offset(&mut self, off: usize, v: i64) -> usize {
        self.insert_enc_at_offset(off, Enc::Int(v))
    }

    /// Delete `n` entries starting at byte offset `off`; returns bytes removed.
    pub fn delete_at_offset(&mut self, off: usize, n: usize) -> usize {
        let mut end = off;
        let mut k = 0;
        while k < n && self.buf[end] != EOF {
            end = self.entry_at(end).1;
            k += 1;
        }
        self.splice(off, end - off, &[]);
        self.count -= k;
        self.set_header();
        end - off
    }

    /// Replace the entry at `off` by `s`; returns the size change in bytes.
    pub fn replace_at_offset(&mut self, off: usize, s: &[u8]) -> isize {
        self.replace_enc_at_offset(off, Enc::of(s))
    }

    pub(crate) fn replace_enc_at_offset(&mut self, off: usize, e: Enc<'_>) -> isize {
        let old = self.entry_at(off).1 - off;
        let new = self.write_enc(off, old, e);
        self.set_header();
        new as isize - old as isize
    }

    /// Append at the tail.
    pub fn push_back(&mut self, s: &[u8]) {
        let off = self.end_offset();
        self.insert_at_offset(off, s);
    }

    /// Append an integer at the tail.
    pub fn push_back_int(&mut self, v: i64) {
        let off = self.end_offset();
        self.insert_int_at_offset(off, v);
    }

    /// Prepend at the head.
    pub fn push_front(&mut self, s: &[u8]) {
        self.insert_at_offset(HEADER_SIZE, s);
    }

    /// Insert so that `s` becomes element `index` (0..=len).
    pub fn insert(&mut self, index: usize, s: &[u8]) {
        assert!(index <= self.count, "listpack insert index out of range");
        let off = if index == self.count {
            self.end_offset()
        } else {
            self.seek(index as isize).unwrap()
        };
        self.insert_at_offset(off, s);
    }

    /// Delete element `index` (negative counts from the tail). Returns false
    /// when out of range.
    pub fn delete(&mut self, index: isize) -> bool {
        match self.seek(index) {
            Some(off) => {
                self.delete_at_offset(off, 1);
                true
            }
            None => false,
        }
    }

    /// Delete `count` elements starting at `index` (negative counts from the
    /// tail); clipped at the end. Returns how many were deleted.
    pub fn delete_range(&mut self, index: isize, count: usize) -> usize {
        let Some(off) = self.seek(index) else {
            return 0;
        };
        let before = self.count;
        self.delete_at_offset(off, count);
        before - self.count
    }

    /// Replace element `index` (negative counts from the tail).
    pub fn replace(&mut self, index: isize, s: &[u8]) -> bool {
        match self.seek(index) {
            Some(off) => {
                self.replace_at_offset(off, s);
                true
            }
            None => false,
        }
    }

    /// Remove and return the first element as bytes.
    pub fn pop_front(&mut self) -> Option<Vec<u8>> {
        let v = self.first()?.to_vec();
        self.delete_at_offset(HEADER_SIZE, 1);
        Some(v)
    }

    /// Remove and return the last element as bytes.
    pub fn pop_back(&mut self) -> Option<Vec<u8>> {
        let off = self.seek(-1)?;
        let v = self.entry_at(off).0.to_vec();
        self.delete_at_offset(off, 1);
        Some(v)
    }

    /// The raw entry bytes between two entry offsets.
    pub(crate) fn raw_entries(&self, from: usize, to: usize) -> &[u8] {
        &self.buf[from..to]
    }

    /// A listpack made of `count` already-encoded entries.
    pub(crate) fn from_entries(entries: &[u8], count: usize) -> Listpack {
        let n = HEADER_SIZE + entries.len() + 1;
        let mut buf = Vec::with_capacity(grow_capacity(n));
        buf.extend_from_slice(&[0; HEADER_SIZE]);
        buf.extend_from_slice(entries);
        buf.push(EOF);
        let mut lp = Listpack { buf, count };
        lp.set_header();
        debug_assert!(lp.validate().is_ok());
        lp
    }

    /// Adopt bytes this crate produced from a valid listpack of `count`
    /// elements (a decompressed quicklist node); checked in debug builds.
    pub(crate) fn from_trusted(buf: Vec<u8>, count: usize) -> Listpack {
        let lp = Listpack { buf, count };
        debug_assert!(lp.validate().is_ok());
        lp
    }

    /// A placeholder that owns no allocation, to be overwritten at once
    /// (it is not a valid listpack).
    pub(crate) fn hollow() -> Listpack {
        Listpack {
            buf: Vec::new(),
            count: 0,
        }
    }

    /// Append `n` entries already encoded back to back (one `memcpy`
    /// instead of one splice per element; used by stream nodes).
    pub(crate) fn append_raw(&mut self, entries: &[u8], n: usize) {
        let end = self.end_offset();
        self.splice(end, 0, &[entries]);
        self.count += n;
        self.set_header();
    }

    /// Append every entry of `other` (byte copy).
    pub(crate) fn append_listpack(&mut self, other: &Listpack) {
        let end = self.end_offset();
        self.splice(
            end,
            0,
            &[other.raw_entries(HEADER_SIZE, other.end_offset())],
        );
        self.count += other.count;
        self.set_header();
    }

    /// Release spare capacity beyond the size class of the current length.
    pub fn shrink_to_fit(&mut self) {
        self.buf.shrink_to(grow_capacity(self.buf.len()));
    }
}

/// Double-ended iterator over a listpack's elements.
pub struct Iter<'a> {
    buf: &'a [u8],
    front: usize,
    back: usize,
    left: usize,
}

impl<'a> Iter<'a> {
    /// Iterator over the `count` entries of listpack-format bytes `buf`
    /// (header first; the entries end at `end`, where a listpack has its
    /// terminator). Used for blocks that do not store the terminator.
    pub(crate) fn over(buf: &'a [u8], end: usize, count: usize) -> Iter<'a> {
        Iter {
            buf,
            front: HEADER_SIZE,
            back: end,
            left: count,
        }
    }
}

impl<'a> Iterator for Iter<'a> {
    type Item = LpValue<'a>;
    fn next(&mut self) -> Option<LpValue<'a>> {
        if self.left == 0 {
            return None;
        }
        let (v, n) = entry_at(self.buf, self.front);
        self.front = n;
        self.left -= 1;
        Some(v)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.left == 0 || self.back <= HEADER_SIZE {
            return None;
        }
        let (l, k) = decode_backlen(self.buf, self.back - 1).expect("listpack: bad backlen");
        self.back -= k + l;
        self.left -= 1;
        Some(entry_at(self.buf, self.back).0)
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl Listpack {
    /// Offers its buffer to the defragmenter (see [`crate::defrag`]).
    pub fn defrag(&mut self, d: &mut crate::defrag::Defrag) {
        d.vec(&mut self.buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn model_bytes(s: &[u8]) -> Vec<u8> {
        s.to_vec()
    }

    #[test]
    fn empty_layout() {
        let lp = Listpack::new();
        assert_eq!(lp.as_bytes(), &[7, 0, 0, 0, 0, 0, 0xFF]);
        lp.validate().unwrap();
    }

    #[test]
    fn known_encodings() {
        // Bytes as produced by Redis 7.0 for these values.
        let cases: &[(&[u8], &[u8])] = &[
            (b"0", &[0x00, 0x01]),
            (b"127", &[0x7F, 0x01]),
            (b"128", &[0xC0, 0x80, 0x02]),
            (b"-1", &[0xDF, 0xFF, 0x02]),
            (b"-4096", &[0xD0, 0x00, 0x02]),
            (b"4095", &[0xCF, 0xFF, 0x02]),
            (b"4096", &[0xF1, 0x00, 0x10, 0x03]),
            (b"-32769", &[0xF2, 0xFF, 0x7F, 0xFF, 0x04]),
            (b"8388608", &[0xF3, 0x00, 0x00, 0x80, 0x00, 0x05]),
            (
                b"-9223372036854775808",
                &[0xF4, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x09],
            ),
            (b"abc", &[0x83, b'a', b'b', b'c', 0x04]),
            (b"01", &[0x82, b'0', b'1', 0x03]),
        ];
        for (s, want) in cases {
            let mut lp = Listpack::new();
            lp.push_back(s);
            assert_eq!(&lp.as_bytes()[6..lp.bytes_len() - 1], *want, "{s:?}");
            assert!(lp.get(0).unwrap().eq_bytes(s));
            lp.validate().unwrap();
        }
    }

    #[test]
    fn long_strings_and_backlen() {
        for l in [63, 64, 126, 127, 200, 4095, 4096, 16380, 16383, 20000] {
            let s = vec![b'x'; l];
            let mut lp = Listpack::new();
            lp.push_back(b"a");
            lp.push_back(&s);
            lp.push_back(b"b");
            lp.validate().unwrap();
            assert_eq!(lp.get(1), Some(LpValue::Str(&s)));
            let back: Vec<_> = lp.iter().rev().map(|v| v.to_vec()).collect();
            assert_eq!(back, vec![b"b".to_vec(), s.clone(), b"a".to_vec()]);
        }
    }

    #[test]
    fn string_to_int_rules() {
        assert_eq!(string_to_i64(b"0"), Some(0));
        assert_eq!(string_to_i64(b"-0"), None);
        assert_eq!(string_to_i64(b"007"), None);
        assert_eq!(string_to_i64(b"+7"), None);
        assert_eq!(string_to_i64(b" 7"), None);
        assert_eq!(string_to_i64(b"-"), None);
        assert_eq!(string_to_i64(b""), None);
        assert_eq!(string_to_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(string_to_i64(b"9223372036854775808"), None);
        assert_eq!(string_to_i64(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(string_to_i64(b"-9223372036854775809"), None);
        assert_eq!(string_to_i64(b"12a"), None);
    }

    #[test]
    fn count_over_u16() {
        let mut lp = Listpack::new();
        for i in 0..70000 {
            lp.push_back_int(i % 100);
        }
        assert_eq!(&lp.as_bytes()[4..6], &[0xFF, 0xFF]);
        assert_eq!(
            Listpack::from_bytes(lp.as_bytes().to_vec()).unwrap().len(),
            70000
        );
        lp.delete_range(0, 69000);
        assert_eq!(lp.len(), 1000);
        assert_eq!(&lp.as_bytes()[4..6], &1000u16.to_le_bytes());
        lp.validate().unwrap();
    }

    #[test]
    fn rejects_garbage() {
        assert!(Listpack::from_bytes(vec![7, 0, 0, 0, 0, 0, 0xFE]).is_err());
        assert!(Listpack::from_bytes(vec![9, 0, 0, 0, 1, 0, 0x05, 0x02, 0xFF]).is_err());
        assert!(Listpack::from_bytes(vec![9, 0, 0, 0, 1, 0, 0x05, 0x01, 0xFF]).is_ok());
    }

    #[derive(Debug, Clone)]
    enum Op {
        PushBack(Vec<u8>),
        PushFront(Vec<u8>),
        Insert(usize, Vec<u8>),
        Delete(isize),
        DeleteRange(isize, usize),
        Replace(isize, Vec<u8>),
        PopFront,
        PopBack,
    }

    fn elem() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            any::<i64>().prop_map(|v| v.to_string().into_bytes()),
            (-5000i64..5000).prop_map(|v| v.to_string().into_bytes()),
            proptest::collection::vec(any::<u8>(), 0..80),
            proptest::collection::vec(b'0'..=b'9', 1..5),
            (0usize..3).prop_map(|k| vec![b'z'; [100, 5000, 17000][k]]),
        ]
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            elem().prop_map(Op::PushBack),
            elem().prop_map(Op::PushFront),
            (any::<usize>(), elem()).prop_map(|(i, e)| Op::Insert(i, e)),
            (-20isize..20).prop_map(Op::Delete),
            (-20isize..20, 0usize..5).prop_map(|(i, n)| Op::DeleteRange(i, n)),
            (-20isize..20, elem()).prop_map(|(i, e)| Op::Replace(i, e)),
            Just(Op::PopFront),
            Just(Op::PopBack),
        ]
    }

    fn norm(len: usize, i: isize) -> Option<usize> {
        let j = if i < 0 { len as isize + i } else { i };
        (j >= 0 && (j as usize) < len).then_some(j as usize)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn model(ops in proptest::collection::vec(op(), 1..60)) {
            let mut lp = Listpack::new();
            let mut m: Vec<Vec<u8>> = Vec::new();
            for o in ops {
                match o {
                    Op::PushBack(e) => { lp.push_back(&e); m.push(model_bytes(&e)); }
                    Op::PushFront(e) => { lp.push_front(&e); m.insert(0, e); }
                    Op::Insert(i, e) => { let i = i % (m.len() + 1); lp.insert(i, &e); m.insert(i, e); }
                    Op::Delete(i) => {
                        let r = lp.delete(i);
                        match norm(m.len(), i) { Some(j) => { prop_assert!(r); m.remove(j); } None => prop_assert!(!r) }
                    }
                    Op::DeleteRange(i, n) => {
                        let r = lp.delete_range(i, n);
                        match norm(m.len(), i) {
                            Some(j) => { let e = (j + n).min(m.len()); prop_assert_eq!(r, e - j); m.drain(j..e); }
                            None => prop_assert_eq!(r, 0),
                        }
                    }
                    Op::Replace(i, e) => {
                        let r = lp.replace(i, &e);
                        match norm(m.len(), i) { Some(j) => { prop_assert!(r); m[j] = e; } None => prop_assert!(!r) }
                    }
                    Op::PopFront => { let want = if m.is_empty() { None } else { Some(m.remove(0)) }; prop_assert_eq!(lp.pop_front(), want); }
                    Op::PopBack => prop_assert_eq!(lp.pop_back(), m.pop()),
                }
                lp.validate().unwrap();
                prop_assert_eq!(lp.len(), m.len());
            }
            let fwd: Vec<Vec<u8>> = lp.iter().map(|v| v.to_vec()).collect();
            prop_assert_eq!(&fwd, &m);
            let mut back: Vec<Vec<u8>> = lp.iter().rev().map(|v| v.to_vec()).collect();
            back.reverse();
            prop_assert_eq!(&back, &m);
            for i in 0..m.len() {
                prop_assert_eq!(lp.get(i as isize).unwrap().to_vec(), m[i].clone());
                prop_assert_eq!(lp.get(-(i as isize) - 1).unwrap().to_vec(), m[m.len() - 1 - i].clone());
                let f = lp.find(&m[i], 0, 1).unwrap();
                prop_assert_eq!(&m[f], &m[i]);
                prop_assert!(m[..f].iter().all(|x| x != &m[i]));
            }
            let again = Listpack::from_bytes(lp.as_bytes().to_vec()).unwrap();
            prop_assert_eq!(again.len(), m.len());
        }
    }
}
