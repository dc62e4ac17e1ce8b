//! Reply encoding for RESP2 and RESP3, byte-for-byte as Redis 7.0 writes it.
//!
//! A [`ReplyBuf`] is a growable byte buffer plus the protocol the client
//! negotiated (`HELLO 2|3`). Each method appends one complete RESP element
//! (or the header of an aggregate, whose elements the caller appends next).
//! The RESP3-only types degrade the way Redis degrades them for RESP2
//! clients:
//!
//! | method | RESP3 | RESP2 |
//! |---|---|---|
//! | `null_bulk` / `null_array` / `null` | `_` | `$-1` / `*-1` / `$-1` |
//! | `map_len(n)` | `%n` | `*2n` |
//! | `set_len(n)` | `~n` | `*n` |
//! | `push_len(n)` | `>n` | `*n` |
//! | `double(x)` | `,<%.17g>` | bulk `<%.17g>` (`inf`, `-inf`) |
//! | `boolean(b)` | `#t` / `#f` | `:1` / `:0` |
//! | `verbatim(f, s)` | `=<len>\r\nfff:s` | bulk `s` |
//! | `big_number(n)` | `(n` | bulk `n` |
//!
//! Invariant: after any sequence of complete calls the buffer holds valid
//! RESP; simple strings and errors never contain `\r` or `\n` (they are
//! replaced by spaces, as Redis's `addReplyErrorFormat` does).

use crate::num::{digits_u64, double_g17, write_double_g17, write_i64, write_u64};

/// The protocol version a client speaks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// RESP2 (the default for a new connection).
    #[default]
    Resp2,
    /// RESP3 (after `HELLO 3`).
    Resp3,
}

/// A reserved spot for an aggregate length not known yet
/// (see [`ReplyBuf::deferred_len`]).
#[derive(Debug)]
#[must_use = "a deferred length must be filled in with set_*_len"]
pub struct DeferredLen {
    at: usize,
}

/// An output buffer of encoded replies.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReplyBuf {
    buf: Vec<u8>,
    proto: Protocol,
    /// Offsets where push frames (Pub/Sub confirmations and messages)
    /// begin, recorded between [`ReplyBuf::record_pushes`] and
    /// [`ReplyBuf::take_push_marks`]: a client that turned its replies off
    /// still gets those (Redis 7.0 delivers every Pub/Sub push).
    push_marks: Option<Vec<usize>>,
}

impl ReplyBuf {
    /// An empty buffer for a client speaking `proto`.
    pub fn new(proto: Protocol) -> Self {
        ReplyBuf {
            buf: Vec::new(),
            proto,
            push_marks: None,
        }
    }

    /// An empty buffer with room for `cap` bytes.
    pub fn with_capacity(proto: Protocol, cap: usize) -> Self {
        ReplyBuf {
            buf: Vec::with_capacity(cap),
            proto,
            push_marks: None,
        }
    }

    /// The protocol replies are encoded for.
    pub fn protocol(&self) -> Protocol {
        self.proto
    }

    /// Switches protocol (`HELLO`); affects later calls only.
    pub fn set_protocol(&mut self, proto: Protocol) {
        self.proto = proto;
    }

    /// True for RESP3.
    #[inline]
    pub fn is_resp3(&self) -> bool {
        self.proto == Protocol::Resp3
    }

    /// The encoded bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf
    }

    /// Number of encoded bytes.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// True when nothing is buffered.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Drops the buffered bytes, keeping the allocation.
    pub fn clear(&mut self) {
        self.buf.clear();
    }

    /// Bytes allocated for the buffer.
    pub fn capacity(&self) -> usize {
        self.buf.capacity()
    }

    /// Gives back allocated room beyond `max(len, n)` bytes (0 with an
    /// empty buffer frees the allocation).
    pub fn shrink_to(&mut self, n: usize) {
        if n == 0 && self.buf.is_empty() {
            self.buf = Vec::new();
        } else {
            self.buf.shrink_to(n);
        }
    }

    /// Takes the buffered bytes, leaving the buffer empty.
    pub fn take(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.buf)
    }

    /// Drops the first `n` bytes (e.g. after a partial write to a socket).
    pub fn consume(&mut self, n: usize) {
        self.buf.drain(..n);
    }

    /// Truncates to `len` bytes (e.g. to undo a partly written reply).
    pub fn truncate(&mut self, len: usize) {
        self.buf.truncate(len);
    }

    /// The underlying vector, for callers that write pre-encoded bytes.
    pub fn vec_mut(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// Appends bytes that are already valid RESP.
    pub fn raw(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Appends one pre-encoded push frame (see [`ReplyBuf::push_len`]).
    pub fn raw_push(&mut self, frame: &[u8]) {
        self.mark_push();
        self.buf.extend_from_slice(frame);
    }

    /// Starts recording where push frames begin (no allocation until one
    /// is written).
    pub fn record_pushes(&mut self) {
        self.push_marks = Some(Vec::new());
    }

    /// Stops recording and returns the offsets of the push frames written
    /// since [`ReplyBuf::record_pushes`], in order.
    pub fn take_push_marks(&mut self) -> Vec<usize> {
        self.push_marks.take().unwrap_or_default()
    }

    #[inline]
    fn mark_push(&mut self) {
        if let Some(m) = self.push_marks.as_mut() {
            m.push(self.buf.len());
        }
    }

    #[inline]
    fn crlf(&mut self) {
        self.buf.extend_from_slice(b"\r\n");
    }

    #[inline]
    fn header(&mut self, prefix: u8, n: u64) {
        self.buf.push(prefix);
        write_u64(&mut self.buf, n);
        self.crlf();
    }

    /// Text with `\r` / `\n` turned into spaces.
    fn line_text(&mut self, text: &[u8]) {
        let start = self.buf.len();
        self.buf.extend_from_slice(text);
        if memchr::memchr2(b'\r', b'\n', text).is_some() {
            for c in &mut self.buf[start..] {
                if *c == b'\r' || *c == b'\n' {
                    *c = b' ';
                }
            }
        }
    }

    /// `+text\r\n`.
    pub fn simple(&mut self, text: impl AsRef<[u8]>) {
        self.buf.push(b'+');
        self.line_text(text.as_ref());
        self.crlf();
    }

    /// `+OK\r\n`.
    pub fn ok(&mut self) {
        self.buf.extend_from_slice(b"+OK\r\n");
    }

    /// `-text\r\n`: pass the whole error including its code, e.g.
    /// `error("ERR wrong number of arguments for 'get' command")`.
    pub fn error(&mut self, text: &str) {
        self.error_bytes(text.as_bytes());
    }

    /// [`ReplyBuf::error`] for text that may not be UTF-8.
    pub fn error_bytes(&mut self, text: &[u8]) {
        self.buf.push(b'-');
        self.line_text(text);
        self.crlf();
    }

    /// `:n\r\n`.
    #[inline]
    pub fn int(&mut self, n: i64) {
        self.buf.push(b':');
        write_i64(&mut self.buf, n);
        self.crlf();
    }

    /// `$len\r\ndata\r\n`.
    #[inline]
    pub fn bulk(&mut self, data: impl AsRef<[u8]>) {
        let data = data.as_ref();
        self.buf.reserve(data.len() + 16);
        self.header(b'$', data.len() as u64);
        self.buf.extend_from_slice(data);
        self.crlf();
    }

    /// Only the `$len\r\n` of a bulk string: the caller then appends exactly
    /// `len` bytes and calls [`ReplyBuf::bulk_end`].
    pub fn bulk_header(&mut self, len: usize) {
        self.header(b'$', len as u64);
    }

    /// The `\r\n` ending a bulk started with [`ReplyBuf::bulk_header`].
    pub fn bulk_end(&mut self) {
        self.crlf();
    }

    /// `n` as a bulk string (`GET` of an integer-encoded value).
    #[inline]
    pub fn bulk_from_int(&mut self, n: i64) {
        let len = digits_u64(n.unsigned_abs()) + usize::from(n < 0);
        self.buf.push(b'$');
        write_u64(&mut self.buf, len as u64);
        self.crlf();
        write_i64(&mut self.buf, n);
        self.crlf();
    }

    /// RESP2 `$-1\r\n`; RESP3 `_\r\n`.
    pub fn null_bulk(&mut self) {
        if self.is_resp3() {
            self.buf.extend_from_slice(b"_\r\n");
        } else {
            self.buf.extend_from_slice(b"$-1\r\n");
        }
    }

    /// Redis's `addReplyNull`: same as [`ReplyBuf::null_bulk`].
    pub fn null(&mut self) {
        self.null_bulk();
    }

    /// RESP2 `*-1\r\n`; RESP3 `_\r\n`.
    pub fn null_array(&mut self) {
        if self.is_resp3() {
            self.buf.extend_from_slice(b"_\r\n");
        } else {
            self.buf.extend_from_slice(b"*-1\r\n");
        }
    }

    /// `*n\r\n`; `n` elements follow.
    #[inline]
    pub fn array_len(&mut self, n: usize) {
        self.header(b'*', n as u64);
    }

    /// RESP3 `%n\r\n`, RESP2 `*<2n>\r\n`; `n` key/value pairs follow.
    pub fn map_len(&mut self, n: usize) {
        if self.is_resp3() {
            self.header(b'%', n as u64);
        } else {
            self.header(b'*', 2 * n as u64);
        }
    }

    /// RESP3 `~n\r\n`, RESP2 `*n\r\n`.
    pub fn set_len(&mut self, n: usize) {
        let p = if self.is_resp3() { b'~' } else { b'*' };
        self.header(p, n as u64);
    }

    /// RESP3 `>n\r\n`, RESP2 `*n\r\n` (pub/sub messages).
    pub fn push_len(&mut self, n: usize) {
        self.mark_push();
        let p = if self.is_resp3() { b'>' } else { b'*' };
        self.header(p, n as u64);
    }

    /// RESP3 `|n\r\n` (`n` attribute pairs, then the reply they describe).
    /// RESP2 has no attributes: callers must not send them to RESP2 clients
    /// (Redis asserts); here RESP2 writes nothing.
    pub fn attribute_len(&mut self, n: usize) {
        debug_assert!(self.is_resp3(), "attributes are RESP3 only");
        if self.is_resp3() {
            self.header(b'|', n as u64);
        }
    }

    /// A score: RESP3 `,<x>\r\n`, RESP2 a bulk string, `x` formatted as
    /// `%.17g` with `inf` / `-inf` (Redis 7.0 `addReplyDouble`).
    pub fn double(&mut self, x: f64) {
        if self.is_resp3() {
            self.buf.push(b',');
            write_double_g17(&mut self.buf, x);
            self.crlf();
        } else {
            let (tmp, n) = double_g17(x);
            self.bulk(&tmp[..n]);
        }
    }

    /// RESP3 `#t` / `#f`, RESP2 `:1` / `:0`.
    pub fn boolean(&mut self, b: bool) {
        if self.is_resp3() {
            self.buf
                .extend_from_slice(if b { b"#t\r\n" } else { b"#f\r\n" });
        } else {
            self.buf
                .extend_from_slice(if b { b":1\r\n" } else { b":0\r\n" });
        }
    }

    /// RESP3 verbatim string `=<len+4>\r\nfff:data\r\n` with a three-byte
    /// format such as `txt` or `mkd`; RESP2 a plain bulk string.
    pub fn verbatim(&mut self, format: &[u8; 3], data: &[u8]) {
        if self.is_resp3() {
            self.header(b'=', data.len() as u64 + 4);
            self.buf.extend_from_slice(format);
            self.buf.push(b':');
            self.buf.extend_from_slice(data);
            self.crlf();
        } else {
            self.bulk(data);
        }
    }

    /// RESP3 big number `(digits\r\n`; RESP2 a bulk string.
    pub fn big_number(&mut self, digits: &[u8]) {
        if self.is_resp3() {
            self.buf.push(b'(');
            self.line_text(digits);
            self.crlf();
        } else {
            self.bulk(digits);
        }
    }

    /// Reserves the place of an aggregate header whose length is not known
    /// yet (Redis's `addReplyDeferredLen`); fill it with
    /// [`ReplyBuf::set_array_len`], [`ReplyBuf::set_map_len`],
    /// [`ReplyBuf::set_set_len`] or [`ReplyBuf::set_push_len`]. Costs a
    /// move of the bytes written after it.
    pub fn deferred_len(&mut self) -> DeferredLen {
        DeferredLen { at: self.buf.len() }
    }

    fn set_deferred(&mut self, d: DeferredLen, prefix: u8, n: u64) {
        let mut hdr = Vec::with_capacity(24);
        hdr.push(prefix);
        write_u64(&mut hdr, n);
        hdr.extend_from_slice(b"\r\n");
        self.buf.splice(d.at..d.at, hdr);
    }

    /// Fills a deferred header with `*n`.
    pub fn set_array_len(&mut self, d: DeferredLen, n: usize) {
        self.set_deferred(d, b'*', n as u64);
    }

    /// Fills a deferred header with a map of `n` pairs.
    pub fn set_map_len(&mut self, d: DeferredLen, n: usize) {
        if self.is_resp3() {
            self.set_deferred(d, b'%', n as u64);
        } else {
            self.set_deferred(d, b'*', 2 * n as u64);
        }
    }

    /// Fills a deferred header with a set of `n` elements.
    pub fn set_set_len(&mut self, d: DeferredLen, n: usize) {
        let p = if self.is_resp3() { b'~' } else { b'*' };
        self.set_deferred(d, p, n as u64);
    }

    /// Fills a deferred header with a push of `n` elements.
    pub fn set_push_len(&mut self, d: DeferredLen, n: usize) {
        let p = if self.is_resp3() { b'>' } else { b'*' };
        self.set_deferred(d, p, n as u64);
    }
}

/// Encodes a command as a RESP multibulk request (what clients send).
pub fn encode_command<A: AsRef<[u8]>>(args: &[A]) -> Vec<u8> {
    let mut out =
        Vec::with_capacity(16 + args.iter().map(|a| a.as_ref().len() + 16).sum::<usize>());
    write_command(&mut out, args);
    out
}

/// Appends a command as a RESP multibulk request to `out`.
pub fn write_command<A: AsRef<[u8]>>(out: &mut Vec<u8>, args: &[A]) {
    out.push(b'*');
    write_u64(out, args.len() as u64);
    out.extend_from_slice(b"\r\n");
    for a in args {
        let a = a.as_ref();
        out.push(b'$');
        write_u64(out, a.len() as u64);
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r2() -> ReplyBuf {
        ReplyBuf::new(Protocol::Resp2)
    }
    fn r3() -> ReplyBuf {
        ReplyBuf::new(Protocol::Resp3)
    }

    #[test]
    fn scalars() {
        let mut r = r2();
        r.simple("PONG");
        r.ok();
        r.error("ERR wrong number of arguments for 'get' command");
        r.int(-42);
        r.int(0);
        r.bulk(b"hello");
        r.bulk(b"");
        r.bulk_from_int(-1234);
        r.bulk_from_int(0);
        r.bulk_from_int(i64::MIN);
        assert_eq!(
            r.as_bytes(),
            &b"+PONG\r\n+OK\r\n-ERR wrong number of arguments for 'get' command\r\n:-42\r\n:0\r\n\
$5\r\nhello\r\n$0\r\n\r\n$5\r\n-1234\r\n$1\r\n0\r\n$20\r\n-9223372036854775808\r\n"[..]
        );
        assert_eq!(r.len(), r.as_bytes().len());
        let taken = r.take();
        assert!(r.is_empty() && !taken.is_empty());
    }

    #[test]
    fn newlines_in_status_and_error_are_spaces() {
        let mut r = r2();
        r.simple("a\r\nb");
        r.error("ERR x\ny");
        assert_eq!(r.as_bytes(), b"+a  b\r\n-ERR x y\r\n");
    }

    #[test]
    fn nulls() {
        let mut r = r2();
        r.null_bulk();
        r.null_array();
        r.null();
        assert_eq!(r.as_bytes(), b"$-1\r\n*-1\r\n$-1\r\n");
        let mut r = r3();
        r.null_bulk();
        r.null_array();
        assert_eq!(r.as_bytes(), b"_\r\n_\r\n");
    }

    #[test]
    fn aggregates() {
        let mut r = r2();
        r.array_len(2);
        r.map_len(3);
        r.set_len(4);
        r.push_len(5);
        assert_eq!(r.as_bytes(), b"*2\r\n*6\r\n*4\r\n*5\r\n");
        let mut r = r3();
        r.array_len(2);
        r.map_len(3);
        r.set_len(4);
        r.push_len(5);
        r.attribute_len(1);
        assert_eq!(r.as_bytes(), b"*2\r\n%3\r\n~4\r\n>5\r\n|1\r\n");
    }

    #[test]
    fn resp3_types_and_their_resp2_forms() {
        let mut r = r3();
        r.double(1.5);
        r.double(f64::INFINITY);
        r.double(f64::NEG_INFINITY);
        r.double(0.1);
        r.boolean(true);
        r.boolean(false);
        r.verbatim(b"txt", b"hi");
        r.big_number(b"12345678901234567890");
        assert_eq!(
            r.as_bytes(),
            &b",1.5\r\n,inf\r\n,-inf\r\n,0.10000000000000001\r\n#t\r\n#f\r\n=6\r\ntxt:hi\r\n(12345678901234567890\r\n"[..]
        );
        let mut r = r2();
        r.double(1.5);
        r.double(f64::INFINITY);
        r.double(f64::NEG_INFINITY);
        r.double(1e300);
        r.boolean(true);
        r.boolean(false);
        r.verbatim(b"txt", b"hi");
        r.big_number(b"123");
        assert_eq!(
            r.as_bytes(),
            &b"$3\r\n1.5\r\n$3\r\ninf\r\n$4\r\n-inf\r\n$23\r\n1.0000000000000001e+300\r\n:1\r\n:0\r\n$2\r\nhi\r\n$3\r\n123\r\n"[..]
        );
    }

    #[test]
    fn deferred_lengths() {
        let mut r = r2();
        r.array_len(2);
        let d = r.deferred_len();
        r.bulk(b"a");
        r.bulk(b"b");
        r.set_map_len(d, 1);
        r.int(1);
        assert_eq!(r.as_bytes(), b"*2\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n:1\r\n");
        let mut r = r3();
        let d = r.deferred_len();
        r.bulk(b"a");
        r.set_set_len(d, 1);
        let d = r.deferred_len();
        r.set_push_len(d, 0);
        let d = r.deferred_len();
        r.set_array_len(d, 0);
        assert_eq!(r.as_bytes(), b"~1\r\n$1\r\na\r\n>0\r\n*0\r\n");
    }

    #[test]
    fn bulk_in_pieces_and_commands() {
        let mut r = r2();
        r.bulk_header(3);
        r.raw(b"abc");
        r.bulk_end();
        assert_eq!(r.as_bytes(), b"$3\r\nabc\r\n");
        r.consume(4);
        assert_eq!(r.as_bytes(), b"abc\r\n");
        assert_eq!(
            encode_command(&["SET", "k", "v"]),
            b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"
        );
    }
}
