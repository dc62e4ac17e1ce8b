//! The writing half of the format's primitives: lengths, strings (with
//! Redis 7.0's choice of integer and LZF encodings), doubles and times.
//!
//! * Length: `00xxxxxx` below 64, `01xxxxxx xxxxxxxx` (big-endian) below
//!   16384, `0x80` + u32 big-endian below 2^32, else `0x81` + u64
//!   big-endian.
//! * String (`rdbSaveRawString`'s rule): a string of at most 11 bytes that
//!   is a canonical decimal integer within i32 is written as `0xC0` + i8,
//!   `0xC1` + i16 LE or `0xC2` + i32 LE (smallest that holds it); otherwise,
//!   with compression on and more than 20 bytes, as LZF (`0xC3`, compressed
//!   length, original length, compressed bytes) when the compressed block is
//!   at most `len - 4` bytes; otherwise length + bytes.
//! * Binary double: 8 bytes little-endian IEEE 754. Millisecond time: i64
//!   little-endian.

use std::io;

use collections::listpack::string_to_i64;
use collections::quicklist::lzf;

use crate::types::{ENC_INT16, ENC_INT32, ENC_INT8, ENC_LZF, LEN_32, LEN_64};

/// Where encoded bytes go: a buffer (DUMP) or the file writer (with CRC).
pub trait Sink {
    fn put(&mut self, b: &[u8]) -> io::Result<()>;

    fn put_u8(&mut self, b: u8) -> io::Result<()> {
        self.put(&[b])
    }
}

impl Sink for Vec<u8> {
    #[inline]
    fn put(&mut self, b: &[u8]) -> io::Result<()> {
        self.extend_from_slice(b);
        Ok(())
    }
}

/// The encoded form of a length (at most 9 bytes).
pub fn len_bytes(n: u64) -> ([u8; 9], usize) {
    let mut b = [0u8; 9];
    if n < 1 << 6 {
        b[0] = n as u8;
        (b, 1)
    } else if n < 1 << 14 {
        b[0] = 0x40 | (n >> 8) as u8;
        b[1] = n as u8;
        (b, 2)
    } else if n <= u32::MAX as u64 {
        b[0] = LEN_32;
        b[1..5].copy_from_slice(&(n as u32).to_be_bytes());
        (b, 5)
    } else {
        b[0] = LEN_64;
        b[1..9].copy_from_slice(&n.to_be_bytes());
        (b, 9)
    }
}

pub fn write_len<S: Sink + ?Sized>(s: &mut S, n: u64) -> io::Result<()> {
    let (b, k) = len_bytes(n);
    s.put(&b[..k])
}

/// The integer encoding of `v` when it fits in 32 bits (at most 5 bytes).
pub fn int_bytes(v: i64) -> Option<([u8; 5], usize)> {
    let mut b = [0u8; 5];
    if let Ok(x) = i8::try_from(v) {
        b[0] = 0xC0 | ENC_INT8;
        b[1] = x as u8;
        Some((b, 2))
    } else if let Ok(x) = i16::try_from(v) {
        b[0] = 0xC0 | ENC_INT16;
        b[1..3].copy_from_slice(&x.to_le_bytes());
        Some((b, 3))
    } else if let Ok(x) = i32::try_from(v) {
        b[0] = 0xC0 | ENC_INT32;
        b[1..5].copy_from_slice(&x.to_le_bytes());
        Some((b, 5))
    } else {
        None
    }
}

/// An integer value (an `int`-encoded string): integer encoding when it
/// fits 32 bits, else its decimal digits (never compressed: at most 20).
pub fn write_int<S: Sink + ?Sized>(s: &mut S, v: i64) -> io::Result<()> {
    if let Some((b, k)) = int_bytes(v) {
        return s.put(&b[..k]);
    }
    let mut buf = [0u8; 20];
    let d = collections::value::set::fmt_int(v, &mut buf);
    write_len(s, d.len() as u64)?;
    s.put(d)
}

/// LZF-compress `b` for a string record: `Some` when it pays by Redis's
/// rule (more than 20 bytes, compressed block at most `len - 4`).
fn try_lzf(b: &[u8]) -> Option<Vec<u8>> {
    if b.len() <= 20 {
        return None;
    }
    lzf::compress(b, b.len() - 4)
}

fn write_lzf<S: Sink + ?Sized>(s: &mut S, packed: &[u8], raw_len: usize) -> io::Result<()> {
    s.put_u8(0xC0 | ENC_LZF)?;
    write_len(s, packed.len() as u64)?;
    write_len(s, raw_len as u64)?;
    s.put(packed)
}

/// A string by `rdbSaveRawString`'s rule (see the module docs).
pub fn write_string<S: Sink + ?Sized>(s: &mut S, b: &[u8], compress: bool) -> io::Result<()> {
    if b.len() <= 11 {
        if let Some((e, k)) = string_to_i64(b).and_then(int_bytes) {
            return s.put(&e[..k]);
        }
    }
    if compress {
        if let Some(c) = try_lzf(b) {
            return write_lzf(s, &c, b.len());
        }
    }
    write_len(s, b.len() as u64)?;
    s.put(b)
}

/// A string given in pieces (a block plus its terminator), written as if
/// concatenated. `scratch` holds the concatenation when it is compressed.
pub fn write_string_parts<S: Sink + ?Sized>(
    s: &mut S,
    parts: &[&[u8]],
    compress: bool,
    scratch: &mut Vec<u8>,
) -> io::Result<()> {
    let len: usize = parts.iter().map(|p| p.len()).sum();
    if len <= 11 || (compress && len > 20) {
        scratch.clear();
        for p in parts {
            scratch.extend_from_slice(p);
        }
        return write_string(s, scratch, compress);
    }
    write_len(s, len as u64)?;
    for p in parts {
        s.put(p)?;
    }
    Ok(())
}

/// An already LZF-compressed block (a compressed quicklist node: Redis
/// writes it as it is, whatever `rdbcompression` says).
pub fn write_lzf_block<S: Sink + ?Sized>(
    s: &mut S,
    packed: &[u8],
    raw_len: usize,
) -> io::Result<()> {
    write_lzf(s, packed, raw_len)
}

pub fn write_binary_double<S: Sink + ?Sized>(s: &mut S, v: f64) -> io::Result<()> {
    s.put(&v.to_le_bytes())
}

pub fn write_ms_time<S: Sink + ?Sized>(s: &mut S, ms: i64) -> io::Result<()> {
    s.put(&ms.to_le_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc_string(b: &[u8], compress: bool) -> Vec<u8> {
        let mut v = Vec::new();
        write_string(&mut v, b, compress).unwrap();
        v
    }

    #[test]
    fn lengths() {
        let cases: &[(u64, &[u8])] = &[
            (0, &[0x00]),
            (63, &[0x3F]),
            (64, &[0x40, 0x40]),
            (16383, &[0x7F, 0xFF]),
            (16384, &[0x80, 0, 0, 0x40, 0]),
            (u32::MAX as u64, &[0x80, 0xFF, 0xFF, 0xFF, 0xFF]),
            (1 << 32, &[0x81, 0, 0, 0, 1, 0, 0, 0, 0]),
        ];
        for (n, want) in cases {
            let mut v = Vec::new();
            write_len(&mut v, *n).unwrap();
            assert_eq!(&v[..], *want, "length {n}");
        }
    }

    #[test]
    fn integer_strings() {
        assert_eq!(enc_string(b"0", true), [0xC0, 0]);
        assert_eq!(enc_string(b"-128", true), [0xC0, 0x80]);
        assert_eq!(enc_string(b"128", true), [0xC1, 0x80, 0]);
        assert_eq!(enc_string(b"-32769", true), [0xC2, 0xFF, 0x7F, 0xFF, 0xFF]);
        assert_eq!(
            enc_string(b"2147483647", true),
            [0xC2, 0xFF, 0xFF, 0xFF, 0x7F]
        );
        // Outside i32, non-canonical, too long: plain bytes.
        assert_eq!(enc_string(b"2147483648", true)[0], 10);
        assert_eq!(enc_string(b"007", true), [3, b'0', b'0', b'7']);
        assert_eq!(enc_string(b"-0", true), [2, b'-', b'0']);
        assert_eq!(enc_string(b"+1", true), [2, b'+', b'1']);
        let mut v = Vec::new();
        write_int(&mut v, i64::MIN).unwrap();
        assert_eq!(&v[1..], b"-9223372036854775808");
        assert_eq!(v[0], 20);
    }

    #[test]
    fn lzf_only_past_20_bytes_and_when_it_pays() {
        // 20 bytes: never compressed.
        assert_eq!(enc_string(&[b'a'; 20], true)[0], 20);
        // 21 repeated bytes compress.
        let c = enc_string(&[b'a'; 21], true);
        assert_eq!(c[0], 0xC3);
        assert_eq!(c[2], 21);
        // Not with compression off.
        assert_eq!(enc_string(&[b'a'; 21], false)[0], 21);
        // Incompressible bytes stay plain.
        let mut x = 88172645463325252u64;
        let noise: Vec<u8> = (0..100)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        assert_eq!(enc_string(&noise, true)[..2], [0x40, 100]);
    }

    #[test]
    fn parts_equal_whole() {
        let mut scratch = Vec::new();
        for whole in [
            &b"12"[..],
            b"hello",
            &[b'x'; 40],
            b"0123456789abcdefghijklmnop",
        ] {
            for compress in [false, true] {
                for cut in 0..=whole.len() {
                    let mut v = Vec::new();
                    write_string_parts(
                        &mut v,
                        &[&whole[..cut], &whole[cut..]],
                        compress,
                        &mut scratch,
                    )
                    .unwrap();
                    assert_eq!(v, enc_string(whole, compress));
                }
            }
        }
    }
}
