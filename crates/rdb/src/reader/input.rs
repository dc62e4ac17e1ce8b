//! The reader's byte source: a 64 KiB buffer over any `Read`, with the
//! offset of every byte, a running CRC64 of the bytes consumed, and reads
//! of long runs that never trust a length before the bytes arrive.
//!
//! Invariants:
//! * `buf[pos..end]` are buffered bytes not yet consumed; `base + pos` is
//!   the offset of the next byte in the input;
//! * when `track_crc`, `crc` covers every consumed byte before
//!   `buf[crc_pos]` (`crc_pos <= pos`);
//! * a long read allocates at most `CHUNK` bytes ahead of the data that has
//!   actually arrived, unless the input's total length is known (`limit`)
//!   and the read fits in it, so a lying length fails with "truncated"
//!   after reading what exists, never with a huge allocation.

use std::io::{self, Read};

use crate::crc64::crc64;
use crate::error::{Error, ErrorKind, Result};

const CAP: usize = 64 * 1024;
/// Largest allocation made ahead of arriving data.
const CHUNK: usize = 1 << 20;

pub struct Input<R> {
    r: R,
    buf: Box<[u8]>,
    pos: usize,
    end: usize,
    base: u64,
    crc: u64,
    crc_pos: usize,
    track_crc: bool,
    /// Total input length, when known.
    limit: Option<u64>,
}

impl<R: Read> Input<R> {
    pub fn new(r: R, limit: Option<u64>, track_crc: bool) -> Input<R> {
        // An input of known length never needs more buffer than itself: a
        // RESTORE payload of 20 bytes must not pay for a zeroed 64 KiB block
        // (a large allocation, which jemalloc zeroes by handing pages back
        // and faulting them in again: most of a MIGRATE target's time).
        // Every read of `want` bytes either fits in what is left of the
        // input, and so in the buffer, or fails as truncated.
        let cap = limit.map_or(CAP, |l| usize::try_from(l).unwrap_or(CAP).clamp(1, CAP));
        Input {
            r,
            buf: vec![0u8; cap].into_boxed_slice(),
            pos: 0,
            end: 0,
            base: 0,
            crc: 0,
            crc_pos: 0,
            track_crc,
            limit,
        }
    }

    /// Offset of the next byte.
    #[inline]
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Bytes left in the input, when its length is known.
    pub fn remaining(&self) -> Option<u64> {
        self.limit.map(|l| l.saturating_sub(self.offset()))
    }

    fn truncated(&self, expected: &'static str) -> Error {
        Error::new(ErrorKind::Truncated { expected }, self.offset())
    }

    fn io_err(&self, e: io::Error) -> Error {
        Error::new(ErrorKind::Io(e), self.offset())
    }

    /// Fold the consumed bytes into the CRC and drop them from the buffer.
    fn compact(&mut self) {
        if self.track_crc {
            self.crc = crc64(self.crc, &self.buf[self.crc_pos..self.pos]);
        }
        self.buf.copy_within(self.pos..self.end, 0);
        self.end -= self.pos;
        self.base += self.pos as u64;
        self.pos = 0;
        self.crc_pos = 0;
    }

    /// Make at least `want` (<= CAP) bytes available; false at end of input
    /// (also when `want` is more than the buffer, which is only smaller
    /// than CAP when the whole input fits in it: the reads then fill the
    /// buffer and find no room, as at the end of the input).
    fn fill(&mut self, want: usize) -> Result<bool> {
        debug_assert!(want <= CAP);
        if self.end - self.pos >= want {
            return Ok(true);
        }
        self.compact();
        while self.end < want {
            let n = loop {
                match self.r.read(&mut self.buf[self.end..]) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(self.io_err(e)),
                }
            };
            if n == 0 {
                return Ok(false);
            }
            self.end += n;
        }
        Ok(true)
    }

    /// One byte.
    #[inline]
    pub fn u8(&mut self, what: &'static str) -> Result<u8> {
        if self.pos < self.end {
            let b = self.buf[self.pos];
            self.pos += 1;
            return Ok(b);
        }
        if !self.fill(1)? {
            return Err(self.truncated(what));
        }
        self.pos += 1;
        Ok(self.buf[self.pos - 1])
    }

    /// `N` bytes (N <= 64).
    #[inline]
    pub fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N]> {
        if self.end - self.pos < N && !self.fill(N)? {
            return Err(self.truncated(what));
        }
        let a: [u8; N] = self.buf[self.pos..self.pos + N].try_into().unwrap();
        self.pos += N;
        Ok(a)
    }

    /// Whether the input has ended (no byte left).
    pub fn at_end(&mut self) -> Result<bool> {
        Ok(!self.fill(1)?)
    }

    /// Append the next `n` bytes to `out`.
    pub fn read_into(&mut self, out: &mut Vec<u8>, n: u64, what: &'static str) -> Result<()> {
        if let Some(rem) = self.remaining() {
            if n > rem {
                return Err(self.truncated(what));
            }
        }
        let Ok(mut left) = usize::try_from(n) else {
            return Err(self.truncated(what));
        };
        // Buffered bytes first.
        let k = left.min(self.end - self.pos);
        out.extend_from_slice(&self.buf[self.pos..self.pos + k]);
        self.pos += k;
        left -= k;
        if left == 0 {
            return Ok(());
        }
        if left < CAP / 2 {
            if !self.fill(left)? {
                // Consume what is there so the offset points at the end.
                self.pos = self.end;
                return Err(self.truncated(what));
            }
            out.extend_from_slice(&self.buf[self.pos..self.pos + left]);
            self.pos += left;
            return Ok(());
        }
        // A long run: straight from the source into `out`, CRC on the way.
        self.compact();
        debug_assert_eq!(self.end, 0);
        if self.limit.is_some() {
            out.reserve(left);
        }
        while left > 0 {
            let step = left.min(CHUNK);
            let start = out.len();
            out.resize(start + step, 0);
            let mut got = 0;
            while got < step {
                match self.r.read(&mut out[start + got..start + step]) {
                    Ok(0) => break,
                    Ok(m) => got += m,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        out.truncate(start + got);
                        self.account(&out[start..]);
                        return Err(self.io_err(e));
                    }
                }
            }
            out.truncate(start + got);
            self.account(&out[start..]);
            if got < step {
                return Err(self.truncated(what));
            }
            left -= step;
        }
        Ok(())
    }

    /// Bytes read around the buffer: count them and fold them into the CRC.
    fn account(&mut self, b: &[u8]) {
        if self.track_crc {
            self.crc = crc64(self.crc, b);
        }
        self.base += b.len() as u64;
    }

    /// CRC64 of every byte consumed so far.
    pub fn crc(&mut self) -> u64 {
        if self.track_crc {
            self.crc = crc64(self.crc, &self.buf[self.crc_pos..self.pos]);
            self.crc_pos = self.pos;
        }
        self.crc
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out at most 7 bytes per call.
    struct Dribble<'a>(&'a [u8]);
    impl Read for Dribble<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = out.len().min(7).min(self.0.len());
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn offsets_crc_and_long_reads() {
        let data: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
        for limit in [None, Some(data.len() as u64)] {
            let mut inp = Input::new(Dribble(&data), limit, true);
            assert_eq!(inp.u8("x").unwrap(), data[0]);
            assert_eq!(inp.array::<3>("x").unwrap(), data[1..4]);
            let mut out = Vec::new();
            inp.read_into(&mut out, 10, "x").unwrap();
            inp.read_into(&mut out, 200_000, "x").unwrap();
            assert_eq!(out, data[4..200_014]);
            assert_eq!(inp.offset(), 200_014);
            assert_eq!(inp.crc(), crc64(0, &data[..200_014]));
            out.clear();
            let e = inp.read_into(&mut out, 200_000, "blob").unwrap_err();
            assert!(e.is_truncated());
            if limit.is_none() {
                assert_eq!(e.offset, data.len() as u64);
            }
        }
    }

    #[test]
    fn lying_length_allocates_little() {
        let data = [1u8; 100];
        let mut inp = Input::new(&data[..], None, false);
        let mut out = Vec::new();
        assert!(inp.read_into(&mut out, u32::MAX as u64 * 4, "x").is_err());
        assert!(out.capacity() <= 2 * CHUNK);
        let mut inp = Input::new(&data[..], Some(100), false);
        assert!(inp.read_into(&mut out, 101, "x").is_err());
    }

    /// A known-length input gets a buffer of its own size, not 64 KiB; every
    /// sequence of reads over it gives the same bytes, offsets and errors
    /// as over the same bytes with the full buffer.
    #[test]
    fn short_known_length_inputs_read_as_unbounded_ones() {
        let data: Vec<u8> = (0..90u8).collect();
        for len in 0..data.len() {
            let bytes = &data[..len];
            let small = Input::new(bytes, Some(len as u64), false);
            assert_eq!(small.buf.len(), len.max(1));
            for step in [1usize, 3, 8, 17, 40, 64] {
                let mut a = Input::new(bytes, Some(len as u64), false);
                let mut b = Input::new(Dribble(bytes), None, false);
                loop {
                    let (ra, rb) = if step == 8 {
                        (
                            a.array::<8>("x").map(|v| v.to_vec()),
                            b.array::<8>("x").map(|v| v.to_vec()),
                        )
                    } else {
                        let (mut oa, mut ob) = (Vec::new(), Vec::new());
                        (
                            a.read_into(&mut oa, step as u64, "x").map(|_| oa),
                            b.read_into(&mut ob, step as u64, "x").map(|_| ob),
                        )
                    };
                    match (ra, rb) {
                        (Ok(x), Ok(y)) => assert_eq!(x, y),
                        (Err(x), Err(y)) => {
                            assert!(x.is_truncated() && y.is_truncated());
                            break;
                        }
                        (x, y) => panic!("len {len} step {step}: {x:?} vs {y:?}"),
                    }
                    assert_eq!(a.offset(), b.offset());
                }
            }
        }
    }
}
