//! Incremental, zero-copy parser for client requests (RESP multibulk and
//! inline commands), byte-for-byte compatible with Redis 7.0's
//! `processMultibulkBuffer` / `processInlineBuffer`.
//!
//! # Contract
//!
//! The caller owns the bytes. It calls [`RequestParser::parse`] with `buf`
//! starting at the first byte of the command being parsed (the bytes of
//! earlier commands already dropped, or `buf` sliced past them):
//!
//! * `Ok(Some(parsed))`: a whole command occupies `buf[..parsed.consumed]`.
//!   `args` holds one `(start, end)` range per argument, into `buf` when
//!   `parsed.args_in` is [`ArgsIn::Input`], into [`RequestParser::scratch`]
//!   when it is [`ArgsIn::Scratch`] (only inline commands whose arguments
//!   had quotes or escapes). [`RequestParser::base`] picks the right one.
//!   `args` may be empty: Redis skips `*0`, `*-1` and blank inline lines and
//!   so must the caller (the bytes are still consumed). The parser is then
//!   ready for the next command, which starts at `buf[parsed.consumed..]`.
//! * `Ok(None)`: the command is not complete. Call again with the same bytes
//!   plus more at the end. The parser keeps its progress, so a large bulk
//!   arriving in many pieces is scanned once, not once per piece. The bytes
//!   may be moved in memory (e.g. a buffer compacted so the command starts at
//!   offset 0) as long as `buf` again starts at the command's first byte.
//!   [`RequestParser::pending_bulk_len`] tells how many more bytes the
//!   current bulk argument needs.
//! * `Err(e)`: a protocol error. Redis replies `-ERR <message>` (see
//!   [`ProtocolError::to_reply`]) and closes the connection after the
//!   reply. The parser must be [`reset`](RequestParser::reset) before reuse.
//!
//! # Invariants
//!
//! * On `Ok(Some(p))`: `0 < p.consumed <= buf.len()`; every range has
//!   `start <= end`; for [`ArgsIn::Input`] ranges are in increasing order
//!   and end at or before `p.consumed`; for [`ArgsIn::Scratch`] they end
//!   within [`RequestParser::scratch`] (checked with debug assertions).
//! * Progress is monotonic: across calls on one command every byte is
//!   examined a bounded number of times (line terminators are searched from
//!   where the previous call stopped).
//! * The parser never allocates per argument for multibulk requests; it only
//!   reuses its own vectors.
//!
//! # Redis quirks reproduced on purpose
//!
//! * Like Redis's `strchr`, a NUL byte before the line terminator of an
//!   inline command, a `*` count line or a `$` length line hides the
//!   terminator: the command never completes and, once more than
//!   `max_inline_len` bytes are buffered, fails with the "too big" error.
//! * In `*<n>` and `$<n>` lines only the `\r` is looked for: the byte after
//!   it is skipped whatever it is. The two bytes after a bulk's data are
//!   skipped without checking that they are `\r\n`.
//! * The "too big ... request/count string" errors fire when no terminator
//!   is found and more than `max_inline_len` bytes are buffered after the
//!   start of the line (pipelined data after it included), exactly Redis's
//!   test; so when a terminator arrives later than 64 KiB the outcome
//!   depends on how much the caller had buffered, as it does in Redis.
//! * `expected '$', got 'c'` prints the offending byte raw, with `\r` and
//!   `\n` replaced by spaces (Redis's `addReplyErrorFormat` does so).

use std::fmt;

use crate::inline::split_inline;
use crate::num::parse_redis_i64;

/// Redis's `PROTO_INLINE_MAX_SIZE`: longest inline command, and longest
/// `*<count>` / `$<len>` line buffered without a terminator.
pub const PROTO_INLINE_MAX_SIZE: usize = 64 * 1024;
/// Redis's default `proto-max-bulk-len` (512mb).
pub const DEFAULT_MAX_BULK_LEN: usize = 512 * 1024 * 1024;
/// Redis 7.0 rejects multibulk counts above `INT_MAX`.
pub const DEFAULT_MAX_MULTIBULK_LEN: usize = i32::MAX as usize;
/// Before authentication (when a password is required) Redis 7.0 rejects
/// multibulk counts above this ("unauthenticated multibulk length").
pub const UNAUTHENTICATED_MAX_MULTIBULK_LEN: usize = 10;
/// Before authentication (when a password is required) Redis 7.0 rejects
/// bulk lengths above this ("unauthenticated bulk length").
pub const UNAUTHENTICATED_MAX_BULK_LEN: usize = 16384;
/// Redis's `PROTO_MBULK_BIG_ARG`: bulks at least this big deserve a buffer
/// sized for them (see [`RequestParser::pending_bulk_len`]).
pub const PROTO_MBULK_BIG_ARG: usize = 32 * 1024;

/// Limits a request must respect. The defaults are Redis 7.0's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// `proto-max-bulk-len`: larger `$<len>` -> "invalid bulk length".
    pub max_bulk_len: usize,
    /// Larger `*<count>` -> "invalid multibulk length". Redis 7.0 uses
    /// `INT_MAX` and has no setting for it.
    pub max_multibulk_len: usize,
    /// `PROTO_INLINE_MAX_SIZE` (64 KiB).
    pub max_inline_len: usize,
    /// Set while the connection still has to `AUTH` (a password is required
    /// and the client is not authenticated): then a count above
    /// [`UNAUTHENTICATED_MAX_MULTIBULK_LEN`] or a bulk above
    /// [`UNAUTHENTICATED_MAX_BULK_LEN`] is an error that closes the
    /// connection. Inline commands have no such limit, as in Redis.
    pub unauthenticated: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bulk_len: DEFAULT_MAX_BULK_LEN,
            max_multibulk_len: DEFAULT_MAX_MULTIBULK_LEN,
            max_inline_len: PROTO_INLINE_MAX_SIZE,
            unauthenticated: false,
        }
    }
}

/// A malformed request. Redis answers `-ERR Protocol error: ...` and closes
/// the connection once the reply is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProtocolError {
    /// No `\n` within an inline command longer than `max_inline_len`.
    TooBigInlineRequest,
    /// An inline command with an unterminated quote, or a closing quote not
    /// followed by a space.
    UnbalancedQuotes,
    /// No `\r` after a `*` within `max_inline_len` bytes.
    TooBigMbulkCountString,
    /// `*<count>` is not an integer or exceeds `max_multibulk_len`.
    InvalidMultibulkLength,
    /// `*<count>` above 10 before authentication.
    UnauthenticatedMultibulkLength,
    /// No `\r` after a bulk header start within `max_inline_len` bytes.
    TooBigBulkCountString,
    /// An element of a multibulk request does not start with `$`; holds the
    /// byte found.
    ExpectedDollar(u8),
    /// `$<len>` is not an integer, is negative or exceeds `max_bulk_len`.
    InvalidBulkLength,
    /// `$<len>` above 16384 before authentication.
    UnauthenticatedBulkLength,
}

impl ProtocolError {
    /// The error text exactly as Redis sends it after `-ERR ` (may hold a
    /// non-UTF-8 byte for [`ProtocolError::ExpectedDollar`]).
    pub fn message(&self) -> Vec<u8> {
        let fixed: &str = match self {
            ProtocolError::TooBigInlineRequest => "Protocol error: too big inline request",
            ProtocolError::UnbalancedQuotes => "Protocol error: unbalanced quotes in request",
            ProtocolError::TooBigMbulkCountString => "Protocol error: too big mbulk count string",
            ProtocolError::InvalidMultibulkLength => "Protocol error: invalid multibulk length",
            ProtocolError::UnauthenticatedMultibulkLength => {
                "Protocol error: unauthenticated multibulk length"
            }
            ProtocolError::TooBigBulkCountString => "Protocol error: too big bulk count string",
            ProtocolError::InvalidBulkLength => "Protocol error: invalid bulk length",
            ProtocolError::UnauthenticatedBulkLength => {
                "Protocol error: unauthenticated bulk length"
            }
            ProtocolError::ExpectedDollar(c) => {
                let c = match *c {
                    b'\r' | b'\n' => b' ',
                    c => c,
                };
                let mut m = b"Protocol error: expected '$', got '".to_vec();
                m.push(c);
                m.push(b'\'');
                return m;
            }
        };
        fixed.as_bytes().to_vec()
    }

    /// The whole wire reply: `-ERR Protocol error: ...\r\n`.
    pub fn to_reply(&self) -> Vec<u8> {
        let mut r = b"-ERR ".to_vec();
        r.extend_from_slice(&self.message());
        r.extend_from_slice(b"\r\n");
        r
    }

    /// The short reason Redis logs (at `verbose`) as
    /// `Protocol error (<reason>) from client: ...`.
    pub fn log_reason(&self) -> &'static str {
        match self {
            ProtocolError::TooBigInlineRequest => "too big inline request",
            ProtocolError::UnbalancedQuotes => "unbalanced quotes in inline request",
            ProtocolError::TooBigMbulkCountString => "too big mbulk count string",
            ProtocolError::InvalidMultibulkLength => "invalid mbulk count",
            ProtocolError::UnauthenticatedMultibulkLength => "unauth mbulk count",
            ProtocolError::TooBigBulkCountString => "too big bulk count string",
            ProtocolError::ExpectedDollar(_) => "expected $ but got something else",
            ProtocolError::InvalidBulkLength => "invalid bulk length",
            ProtocolError::UnauthenticatedBulkLength => "unauth bulk length",
        }
    }
}

impl fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&String::from_utf8_lossy(&self.message()))
    }
}

impl std::error::Error for ProtocolError {}

/// Where the argument ranges of a parsed command point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgsIn {
    /// Into the caller's `buf` (all multibulk requests, and inline commands
    /// without quotes or escapes).
    Input,
    /// Into [`RequestParser::scratch`]: an inline command some of whose
    /// arguments had to be unescaped. Valid until the next `parse` call.
    Scratch,
}

/// A complete command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parsed {
    /// Bytes of `buf` the command occupied (including any terminator).
    pub consumed: usize,
    /// Which bytes the argument ranges index.
    pub args_in: ArgsIn,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Nothing of the current command parsed yet.
    Start,
    /// An inline command: looking for its `\n`.
    Inline,
    /// `*` seen: looking for the `\r` ending the count.
    Count,
    /// Expecting a `$<len>\r\n` line (`remaining` bulks left).
    BulkHeader,
    /// Expecting `len` bytes of data plus two terminator bytes.
    BulkBody { len: usize },
}

/// Outcome of searching a line terminator the way C's `strchr` does.
enum Scan {
    Found(usize),
    /// Not (yet) found: more bytes may still bring it.
    Pending,
    /// A NUL came first: C code would never see the terminator.
    Blocked,
}

/// Fast path for the usual `*<n>\r\n` / `$<n>\r\n` line at `pos` (the type
/// byte is not checked): a plain number of at most 18 digits with no sign
/// or leading zero, directly followed by `\r` and one more byte. Returns the
/// number and the offset of the `\r`; `None` sends the caller to the general
/// path, which gives the same answer for these lines.
#[inline]
fn fast_number_line(buf: &[u8], pos: usize) -> Option<(i64, Option<usize>)> {
    let s = buf.get(pos + 1..)?;
    let first = *s.first()?;
    let mut v = i64::from(first.wrapping_sub(b'0'));
    let mut i = 1;
    if first != b'0' {
        if !(b'1'..=b'9').contains(&first) {
            return None;
        }
        while i < s.len() && i < 18 && s[i].is_ascii_digit() {
            v = v * 10 + i64::from(s[i] - b'0');
            i += 1;
        }
    }
    if s.get(i) == Some(&b'\r') && i + 1 < s.len() {
        Some((v, Some(pos + 1 + i)))
    } else {
        None
    }
}

/// Parses requests one command at a time; see the module documentation.
#[derive(Debug)]
pub struct RequestParser {
    state: State,
    /// Offset in `buf` where the element being parsed starts.
    pos: usize,
    /// `buf[pos..scanned]` is known to hold no terminator and no NUL.
    scanned: usize,
    /// A NUL precedes any terminator of the current line.
    blocked: bool,
    /// Bulks still to read for the current multibulk command.
    remaining: usize,
    /// `buf.len()` at the last call (for `pending_bulk_len`).
    buffered: usize,
    /// Argument ranges gathered so far for the current command.
    partial: Vec<(usize, usize)>,
    /// Unescaped arguments of an inline command.
    scratch: Vec<u8>,
}

impl Default for RequestParser {
    fn default() -> Self {
        Self::new()
    }
}

impl RequestParser {
    /// A parser waiting for the first byte of a command.
    pub fn new() -> Self {
        RequestParser {
            state: State::Start,
            pos: 0,
            scanned: 0,
            blocked: false,
            remaining: 0,
            buffered: 0,
            partial: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// Forgets any partial command (after an error, or when the caller
    /// throws its buffer away).
    pub fn reset(&mut self) {
        self.state = State::Start;
        self.pos = 0;
        self.scanned = 0;
        self.blocked = false;
        self.remaining = 0;
        self.buffered = 0;
        self.partial.clear();
    }

    /// Gives back memory a large command grew: the argument-range vector
    /// kept for reuse keeps room for `keep_args` ranges (or the ranges of
    /// the command in progress, if more), and an inline scratch buffer of
    /// more than 1 KiB, whose contents only matter while the command parsed
    /// from it runs, is released. Call between commands (never while the
    /// ranges of a parsed [`ArgsIn::Scratch`] command are in use).
    pub fn shrink_buffers(&mut self, keep_args: usize) {
        let keep = keep_args.max(self.partial.len());
        if self.partial.capacity() > keep {
            self.partial.shrink_to(keep);
        }
        if self.scratch.capacity() > 1024 {
            self.scratch = Vec::new();
        }
    }

    /// Room of the argument-range vector kept for reuse, in ranges.
    pub fn args_capacity(&self) -> usize {
        self.partial.capacity()
    }

    /// True when no byte of a next command has been examined: `buf` may be
    /// replaced by anything.
    pub fn is_idle(&self) -> bool {
        self.state == State::Start && self.pos == 0
    }

    /// While a bulk argument is being received: how many more bytes it needs
    /// (data plus its `\r\n`) beyond what the last call saw. Callers can
    /// reserve that much so a big argument lands in one allocation.
    pub fn pending_bulk_len(&self) -> Option<usize> {
        match self.state {
            State::BulkBody { len } => {
                Some((self.pos.saturating_add(len).saturating_add(2)).saturating_sub(self.buffered))
            }
            _ => None,
        }
    }

    /// Length of the bulk currently being received, if any (the `$<len>`
    /// already parsed).
    pub fn current_bulk_len(&self) -> Option<usize> {
        match self.state {
            State::BulkBody { len } => Some(len),
            _ => None,
        }
    }

    /// Offset in `buf` of the first byte of the element being parsed (the
    /// data of the current bulk while one is being received).
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Bytes of unescaped inline arguments ([`ArgsIn::Scratch`]).
    pub fn scratch(&self) -> &[u8] {
        &self.scratch
    }

    /// The bytes the ranges of `parsed` index: `buf` or the scratch buffer.
    pub fn base<'a>(&'a self, buf: &'a [u8], parsed: &Parsed) -> &'a [u8] {
        match parsed.args_in {
            ArgsIn::Input => buf,
            ArgsIn::Scratch => &self.scratch,
        }
    }

    /// Parses one command from `buf` (see the module documentation).
    ///
    /// On `Ok(Some(_))` the previous contents of `args` are replaced by the
    /// command's argument ranges; on `Ok(None)` and `Err(_)` `args` is left
    /// as it was.
    pub fn parse(
        &mut self,
        buf: &[u8],
        limits: &Limits,
        args: &mut Vec<(usize, usize)>,
    ) -> Result<Option<Parsed>, ProtocolError> {
        debug_assert!(self.pos <= buf.len(), "buffer shrank between calls");
        self.buffered = buf.len();
        loop {
            match self.state {
                State::Start => {
                    let Some(&first) = buf.get(self.pos) else {
                        return Ok(None);
                    };
                    if first == b'*' && self.pos == 0 {
                        if let Some(parsed) = self.parse_whole_multibulk(buf, limits, args) {
                            return Ok(Some(parsed));
                        }
                    }
                    self.scanned = self.pos;
                    self.blocked = false;
                    self.state = if first == b'*' {
                        State::Count
                    } else {
                        State::Inline
                    };
                }
                State::Inline => return self.parse_inline(buf, limits, args),
                State::Count => {
                    let (count, nl) = if let Some(fast) = fast_number_line(buf, self.pos) {
                        fast
                    } else {
                        self.slow_count(buf, limits)?
                    };
                    let Some(nl) = nl else {
                        return Ok(None);
                    };
                    if count > limits.max_multibulk_len.min(i64::MAX as usize) as i64 {
                        return Err(ProtocolError::InvalidMultibulkLength);
                    }
                    if limits.unauthenticated && count > UNAUTHENTICATED_MAX_MULTIBULK_LEN as i64 {
                        return Err(ProtocolError::UnauthenticatedMultibulkLength);
                    }
                    // Skip the '\r' and whatever byte follows it.
                    self.pos = nl + 2;
                    if count <= 0 {
                        return Ok(Some(self.finish(args, ArgsIn::Input)));
                    }
                    self.remaining = count as usize;
                    self.partial.clear();
                    self.partial.reserve(self.remaining.min(1024));
                    self.start_line();
                    self.state = State::BulkHeader;
                }
                State::BulkHeader => {
                    let (len, nl) = if let Some(fast) =
                        fast_number_line(buf, self.pos).filter(|_| buf[self.pos] == b'$')
                    {
                        fast
                    } else {
                        self.slow_bulk_len(buf, limits)?
                    };
                    let Some(nl) = nl else {
                        return Ok(None);
                    };
                    let len = match usize::try_from(len) {
                        Ok(n) if n <= limits.max_bulk_len => n,
                        _ => return Err(ProtocolError::InvalidBulkLength),
                    };
                    if limits.unauthenticated && len > UNAUTHENTICATED_MAX_BULK_LEN {
                        return Err(ProtocolError::UnauthenticatedBulkLength);
                    }
                    self.pos = nl + 2;
                    self.state = State::BulkBody { len };
                }
                State::BulkBody { len } => {
                    if buf.len() - self.pos < len.saturating_add(2) {
                        return Ok(None);
                    }
                    self.partial.push((self.pos, self.pos + len));
                    // The two bytes after the data are skipped unchecked.
                    self.pos += len + 2;
                    self.remaining -= 1;
                    if self.remaining == 0 {
                        return Ok(Some(self.finish(args, ArgsIn::Input)));
                    }
                    self.start_line();
                    self.state = State::BulkHeader;
                }
            }
        }
    }

    /// Fast path for a complete, well-formed multibulk command at the start
    /// of `buf`: one straight pass, no state kept. Returns `None` for
    /// anything else (incomplete, unusual or erroneous input), which the
    /// state machine then parses from the start, so the outcome is the same.
    #[inline]
    fn parse_whole_multibulk(
        &mut self,
        buf: &[u8],
        limits: &Limits,
        args: &mut Vec<(usize, usize)>,
    ) -> Option<Parsed> {
        let (count, Some(nl)) = fast_number_line(buf, 0)? else {
            return None;
        };
        let max_count = if limits.unauthenticated {
            UNAUTHENTICATED_MAX_MULTIBULK_LEN.min(limits.max_multibulk_len)
        } else {
            limits.max_multibulk_len
        };
        let max_len = if limits.unauthenticated {
            UNAUTHENTICATED_MAX_BULK_LEN.min(limits.max_bulk_len)
        } else {
            limits.max_bulk_len
        };
        if count <= 0 || count as u64 > max_count as u64 {
            return None;
        }
        let mut pos = nl + 2;
        self.partial.clear();
        for _ in 0..count {
            if buf.get(pos) != Some(&b'$') {
                return None;
            }
            let (len, Some(nl)) = fast_number_line(buf, pos)? else {
                return None;
            };
            if len as u64 > max_len as u64 {
                return None;
            }
            let start = nl + 2;
            let end = start + len as usize;
            if end + 2 > buf.len() {
                return None;
            }
            self.partial.push((start, end));
            pos = end + 2;
        }
        self.pos = pos;
        Some(self.finish(args, ArgsIn::Input))
    }

    /// The `*<count>` line the general way (any terminator position, NUL
    /// blocking, string2ll rules). `Ok((count, None))` = incomplete.
    fn slow_count(
        &mut self,
        buf: &[u8],
        limits: &Limits,
    ) -> Result<(i64, Option<usize>), ProtocolError> {
        let Some(nl) = self.find_line(buf, b'\r', limits, ProtocolError::TooBigMbulkCountString)?
        else {
            return Ok((0, None));
        };
        match parse_redis_i64(&buf[self.pos + 1..nl]) {
            Some(n) => Ok((n, Some(nl))),
            None => Err(ProtocolError::InvalidMultibulkLength),
        }
    }

    /// The `$<len>` line the general way. `Ok((len, None))` = incomplete;
    /// negative lengths are returned for the caller to reject.
    fn slow_bulk_len(
        &mut self,
        buf: &[u8],
        limits: &Limits,
    ) -> Result<(i64, Option<usize>), ProtocolError> {
        let Some(nl) = self.find_line(buf, b'\r', limits, ProtocolError::TooBigBulkCountString)?
        else {
            return Ok((0, None));
        };
        if buf[self.pos] != b'$' {
            return Err(ProtocolError::ExpectedDollar(buf[self.pos]));
        }
        match parse_redis_i64(&buf[self.pos + 1..nl]) {
            Some(n) => Ok((n, Some(nl))),
            None => Err(ProtocolError::InvalidBulkLength),
        }
    }

    fn start_line(&mut self) {
        self.scanned = self.pos;
        self.blocked = false;
    }

    /// Hands the finished command to the caller and gets ready for the next.
    fn finish(&mut self, args: &mut Vec<(usize, usize)>, args_in: ArgsIn) -> Parsed {
        let consumed = self.pos;
        debug_assert!(consumed > 0);
        debug_assert!(self.partial.iter().all(|&(s, e)| s <= e));
        debug_assert!(
            args_in == ArgsIn::Scratch
                || (self.partial.windows(2).all(|w| w[0].1 <= w[1].0)
                    && self.partial.iter().all(|&(_, e)| e <= consumed))
        );
        debug_assert!(
            args_in == ArgsIn::Input || self.partial.iter().all(|&(_, e)| e <= self.scratch.len())
        );
        std::mem::swap(args, &mut self.partial);
        self.partial.clear();
        self.state = State::Start;
        self.pos = 0;
        self.scanned = 0;
        self.blocked = false;
        self.remaining = 0;
        Parsed { consumed, args_in }
    }

    /// Searches `term` from `self.pos` like C's `strchr` (a NUL stops the
    /// search) and, for `\r`, requires one more byte after it, as Redis does.
    /// Returns the terminator's offset; `None` when more input is needed;
    /// `too_big` when nothing was found and more than `max_inline_len` bytes
    /// are buffered from the line start.
    fn find_line(
        &mut self,
        buf: &[u8],
        term: u8,
        limits: &Limits,
        too_big: ProtocolError,
    ) -> Result<Option<usize>, ProtocolError> {
        match self.scan(buf, term) {
            Scan::Found(i) => {
                if term == b'\r' && i + 2 > buf.len() {
                    // Remember where it is; the next call finds it at once.
                    self.scanned = i;
                    return Ok(None);
                }
                Ok(Some(i))
            }
            Scan::Pending | Scan::Blocked => {
                if buf.len() - self.pos > limits.max_inline_len {
                    Err(too_big)
                } else {
                    Ok(None)
                }
            }
        }
    }

    fn scan(&mut self, buf: &[u8], term: u8) -> Scan {
        if self.blocked {
            return Scan::Blocked;
        }
        let from = self.scanned.max(self.pos);
        match memchr::memchr2(term, 0, &buf[from..]) {
            Some(off) => {
                let i = from + off;
                if buf[i] == 0 {
                    self.blocked = true;
                    self.scanned = i;
                    Scan::Blocked
                } else {
                    Scan::Found(i)
                }
            }
            None => {
                self.scanned = buf.len();
                Scan::Pending
            }
        }
    }

    fn parse_inline(
        &mut self,
        buf: &[u8],
        limits: &Limits,
        args: &mut Vec<(usize, usize)>,
    ) -> Result<Option<Parsed>, ProtocolError> {
        let Some(nl) = self.find_line(buf, b'\n', limits, ProtocolError::TooBigInlineRequest)?
        else {
            return Ok(None);
        };
        let mut end = nl;
        if end > self.pos && buf[end - 1] == b'\r' {
            end -= 1;
        }
        self.partial.clear();
        self.scratch.clear();
        let args_in = match split_inline(buf, self.pos, end, &mut self.partial, &mut self.scratch) {
            Ok(true) => ArgsIn::Scratch,
            Ok(false) => ArgsIn::Input,
            Err(()) => {
                self.partial.clear();
                return Err(ProtocolError::UnbalancedQuotes);
            }
        };
        self.pos = nl + 1;
        Ok(Some(self.finish(args, args_in)))
    }
}
