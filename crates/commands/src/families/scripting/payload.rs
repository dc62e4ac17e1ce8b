//! FUNCTION DUMP / RESTORE payloads, as Redis 7.0 frames them: for each
//! library the function opcode (245) and its code as an RDB string, then
//! the RDB version (2 bytes, little endian) and the CRC-64 (Jones
//! polynomial, reflected, as Redis's `crc64`) of everything before it
//! (8 bytes, little endian).
//!
//! Dumps write the code as a plain RDB string; restores also read the
//! integer and LZF-compressed string encodings redis-server writes.
//!
//! This is a private copy of the framing until the `rdb` crate (which will
//! own the RDB string codec and CRC-64) is merged; then it should call it.
//! Invariant: [`decode`] never panics on any input; a malformed payload is
//! an error.

/// The RDB version written (Redis 7.0's).
pub const RDB_VERSION: u16 = 10;
/// `RDB_OPCODE_FUNCTION2`.
const OPCODE_FUNCTION: u8 = 245;
/// `RDB_OPCODE_FUNCTION_PRE_GA` (7.0 release candidates).
const OPCODE_FUNCTION_PRE_GA: u8 = 246;

/// Redis's CRC-64 (Jones polynomial, reflected in and out, init 0).
pub fn crc64(mut crc: u64, data: &[u8]) -> u64 {
    static TABLE: std::sync::OnceLock<[u64; 256]> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        const POLY: u64 = 0x95ac_9329_ac4b_c9b5; // 0xad93d23594c935a9 reflected
        let mut t = [0u64; 256];
        for (i, slot) in t.iter_mut().enumerate() {
            let mut c = i as u64;
            for _ in 0..8 {
                c = if c & 1 != 0 { (c >> 1) ^ POLY } else { c >> 1 };
            }
            *slot = c;
        }
        t
    });
    for &b in data {
        crc = table[((crc ^ b as u64) & 0xff) as usize] ^ (crc >> 8);
    }
    crc
}

fn write_len(out: &mut Vec<u8>, n: usize) {
    if n < 1 << 6 {
        out.push(n as u8);
    } else if n < 1 << 14 {
        out.push(0x40 | (n >> 8) as u8);
        out.push(n as u8);
    } else if n <= u32::MAX as usize {
        out.push(0x80);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    } else {
        out.push(0x81);
        out.extend_from_slice(&(n as u64).to_be_bytes());
    }
}

/// The payload of FUNCTION DUMP for these library codes.
pub fn encode(codes: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for code in codes {
        out.push(OPCODE_FUNCTION);
        write_len(&mut out, code.len());
        out.extend_from_slice(code);
    }
    out.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = crc64(0, &out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

const BAD_PAYLOAD: &str = "ERR DUMP payload version or checksum are wrong";

/// The library codes of a FUNCTION RESTORE payload, or the error reply.
pub fn decode(payload: &[u8]) -> Result<Vec<Vec<u8>>, String> {
    if payload.len() < 10 {
        return Err(BAD_PAYLOAD.into());
    }
    let (body, footer) = payload.split_at(payload.len() - 10);
    let version = u16::from_le_bytes([footer[0], footer[1]]);
    let crc = u64::from_le_bytes(footer[2..10].try_into().expect("8 bytes"));
    if version > RDB_VERSION || crc64(0, &payload[..payload.len() - 8]) != crc {
        return Err(BAD_PAYLOAD.into());
    }
    let mut r = Reader { data: body, pos: 0 };
    let mut codes = Vec::new();
    while r.pos < body.len() {
        match r.byte()? {
            OPCODE_FUNCTION => codes.push(r.string()?),
            OPCODE_FUNCTION_PRE_GA => return Err("ERR Pre-GA function format not supported".into()),
            _ => return Err("ERR given type is not a function".into()),
        }
    }
    Ok(codes)
}

const LOAD_FAILED: &str = "ERR Failed loading library";

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], String> {
        let end = self.pos.checked_add(n).ok_or(LOAD_FAILED)?;
        let s = self.data.get(self.pos..end).ok_or(LOAD_FAILED)?;
        self.pos = end;
        Ok(s)
    }

    fn byte(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }

    /// An RDB length, or `Err(encoding)` for the special string encodings.
    fn len(&mut self) -> Result<Result<usize, u8>, String> {
        let b = self.byte()?;
        Ok(match b >> 6 {
            0 => Ok((b & 0x3f) as usize),
            1 => Ok((((b & 0x3f) as usize) << 8) | self.byte()? as usize),
            2 => match b {
                0x80 => Ok(u32::from_be_bytes(self.take(4)?.try_into().expect("4")) as usize),
                0x81 => {
                    let n = u64::from_be_bytes(self.take(8)?.try_into().expect("8"));
                    Ok(usize::try_from(n).map_err(|_| LOAD_FAILED)?)
                }
                _ => return Err(LOAD_FAILED.into()),
            },
            _ => Err(b & 0x3f),
        })
    }

    fn plain_len(&mut self) -> Result<usize, String> {
        self.len()?.map_err(|_| LOAD_FAILED.to_string())
    }

    fn string(&mut self) -> Result<Vec<u8>, String> {
        match self.len()? {
            Ok(n) => Ok(self.take(n)?.to_vec()),
            Err(0) => Ok((self.byte()? as i8).to_string().into_bytes()),
            Err(1) => {
                let v = i16::from_le_bytes(self.take(2)?.try_into().expect("2"));
                Ok(v.to_string().into_bytes())
            }
            Err(2) => {
                let v = i32::from_le_bytes(self.take(4)?.try_into().expect("4"));
                Ok(v.to_string().into_bytes())
            }
            Err(3) => {
                let clen = self.plain_len()?;
                let len = self.plain_len()?;
                let src = self.take(clen)?;
                lzf_decompress(src, len).ok_or_else(|| LOAD_FAILED.to_string())
            }
            Err(_) => Err(LOAD_FAILED.into()),
        }
    }
}

/// LZF decompression (the format of `lzf_d.c`) to exactly `len` bytes.
fn lzf_decompress(src: &[u8], len: usize) -> Option<Vec<u8>> {
    let mut out: Vec<u8> = Vec::with_capacity(len.min(64 << 20));
    let mut i = 0;
    while i < src.len() {
        let ctrl = src[i] as usize;
        i += 1;
        if ctrl < 32 {
            let n = ctrl + 1;
            let lit = src.get(i..i + n)?;
            if out.len() + n > len {
                return None;
            }
            out.extend_from_slice(lit);
            i += n;
        } else {
            let mut n = ctrl >> 5;
            if n == 7 {
                n += *src.get(i)? as usize;
                i += 1;
            }
            n += 2;
            let back = ((ctrl & 0x1f) << 8) + *src.get(i)? as usize + 1;
            i += 1;
            if back > out.len() || out.len() + n > len {
                return None;
            }
            let from = out.len() - back;
            for k in 0..n {
                let b = out[from + k];
                out.push(b);
            }
        }
    }
    (out.len() == len).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc64_check_value() {
        assert_eq!(crc64(0, b"123456789"), 0xe9c6_d914_c4b8_d9ca);
    }

    #[test]
    fn round_trip_and_corruption() {
        let codes: Vec<&[u8]> = vec![b"#!lua name=a\nx", &[b'y'; 20000]];
        let p = encode(&codes);
        assert_eq!(
            decode(&p).unwrap(),
            codes.iter().map(|c| c.to_vec()).collect::<Vec<_>>()
        );
        for i in 0..p.len() {
            let mut q = p.clone();
            q[i] ^= 0x41;
            assert!(decode(&q).is_err());
            assert!(decode(&p[..i]).is_err());
        }
    }

    #[test]
    fn lzf_literals_and_back_references() {
        // "abcabcabc": 3 literals, then a back reference of 6 at distance 3.
        let src = [2, b'a', b'b', b'c', (4 << 5) as u8, 2];
        assert_eq!(lzf_decompress(&src, 9).unwrap(), b"abcabcabc");
        assert!(lzf_decompress(&src, 8).is_none());
        assert!(lzf_decompress(&[0xe0, 0xff, 0xff], 10).is_none());
    }
}
