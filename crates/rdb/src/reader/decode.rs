//! The reading half of the primitives: lengths, strings in every encoding
//! (plain, int8/16/32, LZF), text and binary doubles, times.
//!
//! Stricter than Redis where Redis reads nonsense that it never writes: a
//! string-encoding byte (`11xxxxxx`) where a plain length is expected, and
//! an LZF record claiming an empty result, are errors here. An LZF record
//! claiming more than 88 output bytes per compressed byte (the format's
//! maximum expansion: a three-byte back-reference copies at most 264 bytes)
//! is refused before anything is allocated.

use std::io::Read;

use collections::quicklist::lzf;

use super::input::Input;
use crate::error::{Error, Result};
use crate::types::{ENC_INT16, ENC_INT32, ENC_INT8, ENC_LZF, LEN_32, LEN_64};

/// A length or a special string encoding.
pub enum Len {
    Plain(u64),
    /// `11xxxxxx`: the low six bits.
    Enc(u8),
}

pub fn read_len_or_enc<R: Read>(inp: &mut Input<R>) -> Result<Len> {
    let at = inp.offset();
    let b = inp.u8("a length")?;
    len_or_enc_after(inp, b, at)
}

/// The rest of a length whose first byte `b` (at offset `at`) was read.
fn len_or_enc_after<R: Read>(inp: &mut Input<R>, b: u8, at: u64) -> Result<Len> {
    Ok(match b >> 6 {
        0 => Len::Plain((b & 0x3F) as u64),
        1 => Len::Plain(((b & 0x3F) as u64) << 8 | inp.u8("a length")? as u64),
        2 => match b {
            LEN_32 => Len::Plain(u32::from_be_bytes(inp.array("a 32-bit length")?) as u64),
            LEN_64 => Len::Plain(u64::from_be_bytes(inp.array("a 64-bit length")?)),
            _ => {
                return Err(Error::corrupt(
                    at,
                    format!("unknown length encoding 0x{b:02x} (expected 0x80 or 0x81)"),
                ))
            }
        },
        _ => Len::Enc(b & 0x3F),
    })
}

/// A plain length (`what` says whose).
pub fn read_len<R: Read>(inp: &mut Input<R>) -> Result<u64> {
    let at = inp.offset();
    match read_len_or_enc(inp)? {
        Len::Plain(n) => Ok(n),
        Len::Enc(e) => Err(Error::corrupt(
            at,
            format!("expected a length, found string encoding {e}"),
        )),
    }
}

/// A length that must fit in memory sizes.
pub fn read_usize<R: Read>(inp: &mut Input<R>) -> Result<usize> {
    let at = inp.offset();
    let n = read_len(inp)?;
    usize::try_from(n).map_err(|_| Error::corrupt(at, format!("length {n} too large")))
}

/// A string, appended to `out` (cleared first).
pub fn read_string_into<R: Read>(inp: &mut Input<R>, out: &mut Vec<u8>) -> Result<()> {
    let at = inp.offset();
    let b = inp.u8("a string")?;
    read_string_after(inp, b, at, out)
}

/// [`read_string_into`] when the first byte `b` (at `at`) was consumed.
fn read_string_after<R: Read>(inp: &mut Input<R>, b: u8, at: u64, out: &mut Vec<u8>) -> Result<()> {
    out.clear();
    match len_or_enc_after(inp, b, at)? {
        Len::Plain(n) => inp.read_into(out, n, "string bytes"),
        Len::Enc(ENC_INT8) => {
            let v = inp.u8("an 8-bit integer")? as i8 as i64;
            push_int(out, v);
            Ok(())
        }
        Len::Enc(ENC_INT16) => {
            let v = i16::from_le_bytes(inp.array("a 16-bit integer")?) as i64;
            push_int(out, v);
            Ok(())
        }
        Len::Enc(ENC_INT32) => {
            let v = i32::from_le_bytes(inp.array("a 32-bit integer")?) as i64;
            push_int(out, v);
            Ok(())
        }
        Len::Enc(ENC_LZF) => {
            let mut packed = Vec::new();
            read_lzf_into(inp, at, &mut packed, out)
        }
        Len::Enc(e) => Err(Error::corrupt(
            at,
            format!("unknown string encoding {e} (expected 0..=3)"),
        )),
    }
}

fn push_int(out: &mut Vec<u8>, v: i64) {
    let mut buf = [0u8; 20];
    out.extend_from_slice(collections::value::set::fmt_int(v, &mut buf));
}

/// The body of an LZF string record (after `0xC3`): the compressed bytes
/// into `packed`, the result into `out`.
fn read_lzf_into<R: Read>(
    inp: &mut Input<R>,
    at: u64,
    packed: &mut Vec<u8>,
    out: &mut Vec<u8>,
) -> Result<()> {
    let clen = read_len(inp)?;
    let len = read_len(inp)?;
    if len == 0 || clen == 0 || len > clen.saturating_mul(88) {
        return Err(Error::corrupt(
            at,
            format!("LZF string of {clen} compressed bytes cannot hold {len} bytes"),
        ));
    }
    packed.clear();
    inp.read_into(packed, clen, "LZF-compressed bytes")?;
    let len =
        usize::try_from(len).map_err(|_| Error::corrupt(at, "LZF string too large".to_string()))?;
    lzf::decompress(packed, len, out)
        .map_err(|_| Error::corrupt(at, "invalid LZF compressed string"))
}

/// A string as a new vector.
pub fn read_string<R: Read>(inp: &mut Input<R>) -> Result<Vec<u8>> {
    let mut v = Vec::new();
    read_string_into(inp, &mut v)?;
    Ok(v)
}

/// A string that was LZF-compressed in the input keeps its compressed
/// form too (a quicklist node can stay compressed in memory).
pub struct Blob {
    pub raw: Vec<u8>,
    pub lzf: Option<Vec<u8>>,
}

pub fn read_blob<R: Read>(inp: &mut Input<R>) -> Result<Blob> {
    let at = inp.offset();
    let b = inp.u8("a string")?;
    if b == 0xC0 | ENC_LZF {
        let mut packed = Vec::new();
        let mut raw = Vec::new();
        read_lzf_into(inp, at, &mut packed, &mut raw)?;
        return Ok(Blob {
            raw,
            lzf: Some(packed),
        });
    }
    let mut raw = Vec::new();
    read_string_after(inp, b, at, &mut raw)?;
    Ok(Blob { raw, lzf: None })
}

/// An old-style text double (`ZSET`, type 3): a length byte, with 253 =
/// NaN, 254 = +inf, 255 = -inf, else that many bytes of decimal text.
pub fn read_text_double<R: Read>(inp: &mut Input<R>) -> Result<f64> {
    let at = inp.offset();
    let n = inp.u8("a double")?;
    match n {
        253 => Ok(f64::NAN),
        254 => Ok(f64::INFINITY),
        255 => Ok(f64::NEG_INFINITY),
        _ => {
            let mut b = Vec::with_capacity(n as usize);
            inp.read_into(&mut b, n as u64, "double text")?;
            std::str::from_utf8(&b)
                .ok()
                .and_then(|t| t.trim().parse::<f64>().ok())
                .ok_or_else(|| Error::corrupt(at, "double text that is not a number"))
        }
    }
}

pub fn read_binary_double<R: Read>(inp: &mut Input<R>) -> Result<f64> {
    Ok(f64::from_le_bytes(inp.array("a binary double")?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::writer::encode::{write_len, write_string};

    fn inp(b: &[u8]) -> Input<&[u8]> {
        Input::new(b, Some(b.len() as u64), false)
    }

    #[test]
    fn lengths_round_trip() {
        for n in [
            0u64,
            1,
            63,
            64,
            16383,
            16384,
            u32::MAX as u64,
            1 << 32,
            u64::MAX,
        ] {
            let mut v = Vec::new();
            write_len(&mut v, n).unwrap();
            assert_eq!(read_len(&mut inp(&v)).unwrap(), n);
        }
        assert!(read_len(&mut inp(&[0x82])).is_err());
        assert!(read_len(&mut inp(&[0xC0])).is_err());
        assert!(read_len(&mut inp(&[0x80, 1, 2]))
            .unwrap_err()
            .is_truncated());
    }

    #[test]
    fn strings_round_trip() {
        let long: Vec<u8> = b"abcdefgh".repeat(50);
        let cases: Vec<&[u8]> = vec![
            b"",
            b"0",
            b"-1",
            b"127",
            b"-129",
            b"40000",
            b"2147483647",
            b"-2147483648",
            b"2147483648",
            b"007",
            b"hello",
            &long,
        ];
        for s in cases {
            for z in [false, true] {
                let mut v = Vec::new();
                write_string(&mut v, s, z).unwrap();
                assert_eq!(read_string(&mut inp(&v)).unwrap(), s);
                let b = read_blob(&mut inp(&v)).unwrap();
                assert_eq!(b.raw, s);
                assert_eq!(b.lzf.is_some(), v[0] == 0xC3);
            }
        }
    }

    #[test]
    fn lzf_claims_are_checked() {
        // 2 compressed bytes claiming 1000 output bytes.
        assert!(read_string(&mut inp(&[0xC3, 2, 0x43, 0xE8, 0, b'a'])).is_err());
        assert!(read_string(&mut inp(&[0xC3, 2, 0, 0, b'a'])).is_err());
        // A literal of one byte, claimed length 1: fine.
        assert_eq!(read_string(&mut inp(&[0xC3, 2, 1, 0, b'a'])).unwrap(), b"a");
        assert!(read_string(&mut inp(&[0xC4])).is_err());
    }

    #[test]
    fn text_doubles() {
        assert!(read_text_double(&mut inp(&[253])).unwrap().is_nan());
        assert_eq!(read_text_double(&mut inp(&[254])).unwrap(), f64::INFINITY);
        assert_eq!(
            read_text_double(&mut inp(&[255])).unwrap(),
            f64::NEG_INFINITY
        );
        assert_eq!(read_text_double(&mut inp(b"\x031.5")).unwrap(), 1.5);
        assert!(read_text_double(&mut inp(b"\x03abc")).is_err());
    }
}
