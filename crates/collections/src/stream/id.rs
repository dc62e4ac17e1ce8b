//! Stream entry IDs: the `<ms>-<seq>` pair, Redis 7.0's parsing rules for
//! every place an ID appears in a command, and the exact error texts.
//!
//! Parsing follows `streamGenericParseIDOrReply` of Redis 7.0 (checked
//! against redis-server 7.0.15, see `tests/stream_redis.rs`):
//! * arguments longer than 127 bytes are invalid; the text ends at the
//!   first NUL byte (Redis copies the argument into a C string);
//! * `-` is 0-0 and `+` is the maximum ID, except in the "strict" forms
//!   (XADD, XDEL, XACK, XCLAIM, XREAD, XSETID, XGROUP, MINID and the part
//!   after an exclusive `(`);
//! * the text splits at its first `-`; each part is an unsigned 64-bit
//!   number as Redis's `string2ull` reads it: a canonical decimal, or
//!   anything C's `strtoull` accepts whole (leading white space, a `+` or
//!   `-` sign — negation is modulo 2^64 —, leading zeros), never more than
//!   `u64::MAX`;
//! * a missing sequence is 0 for range starts and `u64::MAX` for range
//!   ends; XADD accepts `<ms>-*` (sequence chosen by the stream).

use std::fmt;

/// A stream entry ID. Orders as Redis does: by `ms`, then by `seq`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StreamId {
    pub ms: u64,
    pub seq: u64,
}

impl StreamId {
    /// 0-0.
    pub const MIN: StreamId = StreamId { ms: 0, seq: 0 };
    /// 18446744073709551615-18446744073709551615.
    pub const MAX: StreamId = StreamId {
        ms: u64::MAX,
        seq: u64::MAX,
    };

    pub const fn new(ms: u64, seq: u64) -> StreamId {
        StreamId { ms, seq }
    }

    pub fn is_zero(self) -> bool {
        self == StreamId::MIN
    }

    /// The next ID (Redis's `streamIncrID`), `None` after the maximum.
    pub fn next(self) -> Option<StreamId> {
        if self.seq == u64::MAX {
            if self.ms == u64::MAX {
                None
            } else {
                Some(StreamId::new(self.ms + 1, 0))
            }
        } else {
            Some(StreamId::new(self.ms, self.seq + 1))
        }
    }

    /// The previous ID (Redis's `streamDecrID`), `None` before 0-0.
    pub fn prev(self) -> Option<StreamId> {
        if self.seq == 0 {
            if self.ms == 0 {
                None
            } else {
                Some(StreamId::new(self.ms - 1, u64::MAX))
            }
        } else {
            Some(StreamId::new(self.ms, self.seq - 1))
        }
    }

    /// The 128-bit big-endian form Redis uses as radix-tree key (and the
    /// RDB stores before each listpack).
    pub fn to_be_bytes(self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&self.ms.to_be_bytes());
        b[8..].copy_from_slice(&self.seq.to_be_bytes());
        b
    }

    /// Inverse of [`StreamId::to_be_bytes`]; `None` unless 16 bytes.
    pub fn from_be_bytes(b: &[u8]) -> Option<StreamId> {
        if b.len() != 16 {
            return None;
        }
        Some(StreamId::new(
            u64::from_be_bytes(b[..8].try_into().ok()?),
            u64::from_be_bytes(b[8..].try_into().ok()?),
        ))
    }

    /// `<ms>-<seq>` as Redis prints it.
    pub fn to_bytes(self) -> Vec<u8> {
        self.to_string().into_bytes()
    }

    /// Writes `<ms>-<seq>` into `out` without allocating elsewhere.
    pub fn write_to(self, out: &mut Vec<u8>) {
        use std::io::Write;
        let _ = write!(out, "{}-{}", self.ms, self.seq);
    }
}

impl fmt::Display for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.ms, self.seq)
    }
}

/// Errors of stream operations, each with Redis 7.0's exact reply text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamError {
    /// Any malformed ID argument.
    InvalidId,
    /// XADD with an explicit ID not above the last ID.
    XaddIdNotGreater,
    /// XADD with the explicit ID 0-0.
    XaddIdZero,
    /// XADD on a stream whose last ID is the maximum ID.
    Exhausted,
    /// XADD of more than 1 GiB of fields and values, and (as Redis 7.0.15
    /// replies, from a stale `errno`) XADD `<ms>-*` when the last ID is
    /// `<ms>-18446744073709551615`.
    ElementsTooLarge,
    /// `(` start bound at the maximum ID.
    InvalidStartInterval,
    /// `(` end bound at 0-0.
    InvalidEndInterval,
    /// XSETID below the stream's last live entry.
    SetIdBelowTop,
    /// XSETID with MAXDELETEDID above the new last ID.
    SetIdBelowGivenMaxDeleted,
    /// XSETID with ENTRIESADDED below the stream length.
    SetIdEntriesAddedBelowLength,
    /// XGROUP CREATE of an existing group.
    BusyGroup,
}

impl StreamError {
    /// The reply text (error prefix included, no CRLF).
    pub fn message(self) -> &'static str {
        match self {
            StreamError::InvalidId => "ERR Invalid stream ID specified as stream command argument",
            StreamError::XaddIdNotGreater => {
                "ERR The ID specified in XADD is equal or smaller than the target stream top item"
            }
            StreamError::XaddIdZero => "ERR The ID specified in XADD must be greater than 0-0",
            StreamError::Exhausted => {
                "ERR The stream has exhausted the last possible ID, unable to add more items"
            }
            StreamError::ElementsTooLarge => "ERR Elements are too large to be stored",
            StreamError::InvalidStartInterval => "ERR invalid start ID for the interval",
            StreamError::InvalidEndInterval => "ERR invalid end ID for the interval",
            StreamError::SetIdBelowTop => {
                "ERR The ID specified in XSETID is smaller than the target stream top item"
            }
            StreamError::SetIdBelowGivenMaxDeleted => {
                "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id"
            }
            StreamError::SetIdEntriesAddedBelowLength => {
                "ERR The entries_added specified in XSETID is smaller than the target stream length"
            }
            StreamError::BusyGroup => "BUSYGROUP Consumer Group name already exists",
        }
    }
}

impl fmt::Display for StreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for StreamError {}

/// Text of other stream argument errors the command layer replies with
/// (checked against redis-server 7.0.15).
pub mod texts {
    pub const MAXLEN_NEGATIVE: &str = "ERR The MAXLEN argument must be >= 0.";
    pub const LIMIT_NEGATIVE: &str = "ERR The LIMIT argument must be >= 0.";
    pub const MAXLEN_AND_MINID: &str =
        "ERR syntax error, MAXLEN and MINID options at the same time are not compatible";
    pub const LIMIT_WITHOUT_STRATEGY: &str =
        "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy";
    pub const LIMIT_WITHOUT_TILDE: &str =
        "ERR syntax error, LIMIT cannot be used without the special ~ option";
    pub const XTRIM_NO_STRATEGY: &str =
        "ERR syntax error, XTRIM must be called with a trimming strategy";
    pub const ENTRIESREAD_RANGE: &str = "ERR value for ENTRIESREAD must be positive or -1";
    pub const ENTRIES_ADDED_NEGATIVE: &str = "ERR entries_added must be positive";
    pub const NO_SUCH_KEY: &str = "ERR no such key";
    pub const XGROUP_NEEDS_KEY: &str = "ERR The XGROUP subcommand requires the key to exist. \
Note that for CREATE you may want to use the MKSTREAM option to create an empty stream \
automatically.";

    /// A name as Redis's `%s` in `addReplyErrorFormat` shows it: up to the
    /// first NUL, CR and LF turned into spaces.
    fn c_name(out: &mut Vec<u8>, name: &[u8]) {
        for &b in name {
            match b {
                0 => break,
                b'\r' | b'\n' => out.push(b' '),
                _ => out.push(b),
            }
        }
    }

    /// XPENDING, XCLAIM, XAUTOCLAIM (and, with `in_xreadgroup`,
    /// XREADGROUP) on a missing key or group.
    pub fn nogroup_key_or_group(key: &[u8], group: &[u8], in_xreadgroup: bool) -> Vec<u8> {
        let mut out = b"NOGROUP No such key '".to_vec();
        c_name(&mut out, key);
        out.extend_from_slice(b"' or consumer group '");
        c_name(&mut out, group);
        out.push(b'\'');
        if in_xreadgroup {
            out.extend_from_slice(b" in XREADGROUP with GROUP option");
        }
        out
    }

    /// XGROUP SETID / CREATECONSUMER / DELCONSUMER, XINFO CONSUMERS on a
    /// missing group.
    pub fn nogroup_for_key(group: &[u8], key: &[u8]) -> Vec<u8> {
        let mut out = b"NOGROUP No such consumer group '".to_vec();
        c_name(&mut out, group);
        out.extend_from_slice(b"' for key name '");
        c_name(&mut out, key);
        out.push(b'\'');
        out
    }
}

/// How an ID argument is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// `-` and `+` allowed.
    Loose,
    /// `-` and `+` rejected.
    Strict,
}

/// Redis's `string2ull`: canonical decimal or a whole `strtoull` parse.
fn string2ull(s: &[u8]) -> Option<u64> {
    if let Some(v) = crate::listpack::string_to_i64(s) {
        return (v >= 0).then_some(v as u64);
    }
    strtoull_whole(s)
}

/// C's `strtoull(s, &end, 10)` succeeding with `*end == 0` and no ERANGE.
fn strtoull_whole(s: &[u8]) -> Option<u64> {
    let mut i = 0;
    while i < s.len() && matches!(s[i], b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
        i += 1;
    }
    let mut neg = false;
    if i < s.len() && (s[i] == b'+' || s[i] == b'-') {
        neg = s[i] == b'-';
        i += 1;
    }
    let start = i;
    let mut v: u64 = 0;
    let mut overflow = false;
    while i < s.len() && s[i].is_ascii_digit() {
        match v
            .checked_mul(10)
            .and_then(|x| x.checked_add((s[i] - b'0') as u64))
        {
            Some(x) => v = x,
            None => overflow = true,
        }
        i += 1;
    }
    if i == start || i != s.len() || overflow {
        return None;
    }
    Some(if neg { v.wrapping_neg() } else { v })
}

/// The part of an argument Redis sees: at most 127 bytes, up to a NUL.
fn c_text(arg: &[u8]) -> Option<&[u8]> {
    if arg.len() > 127 {
        return None;
    }
    Some(match arg.iter().position(|&b| b == 0) {
        Some(n) => &arg[..n],
        None => arg,
    })
}

/// What an XADD ID argument asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddId {
    /// `*`: time-based.
    Auto,
    /// `<ms>-*`: this millisecond, the stream picks the sequence.
    Partial(u64),
    /// `<ms>-<seq>` or `<ms>` (sequence 0).
    Explicit(StreamId),
}

fn parse_generic(
    arg: &[u8],
    missing_seq: u64,
    mode: Mode,
    allow_partial: bool,
) -> Result<(StreamId, bool), StreamError> {
    let s = c_text(arg).ok_or(StreamError::InvalidId)?;
    if s == b"-" || s == b"+" {
        if mode == Mode::Strict {
            return Err(StreamError::InvalidId);
        }
        return Ok((
            if s == b"-" {
                StreamId::MIN
            } else {
                StreamId::MAX
            },
            true,
        ));
    }
    let (ms_part, seq_part) = match s.iter().position(|&b| b == b'-') {
        Some(d) => (&s[..d], Some(&s[d + 1..])),
        None => (s, None),
    };
    let ms = string2ull(ms_part).ok_or(StreamError::InvalidId)?;
    match seq_part {
        None => Ok((StreamId::new(ms, missing_seq), true)),
        Some(b"*") if allow_partial => Ok((StreamId::new(ms, 0), false)),
        Some(q) => {
            let seq = string2ull(q).ok_or(StreamError::InvalidId)?;
            Ok((StreamId::new(ms, seq), true))
        }
    }
}

/// An ID where `-`/`+` are allowed (XRANGE bounds without `(`), missing
/// sequence = `missing_seq`.
pub fn parse_id(arg: &[u8], missing_seq: u64) -> Result<StreamId, StreamError> {
    parse_generic(arg, missing_seq, Mode::Loose, false).map(|r| r.0)
}

/// A strict ID (no `-`/`+`), missing sequence = `missing_seq`: XDEL,
/// XACK, XCLAIM ids and LASTID, XREAD ids, XSETID, XGROUP ids, MINID.
pub fn parse_strict_id(arg: &[u8], missing_seq: u64) -> Result<StreamId, StreamError> {
    parse_generic(arg, missing_seq, Mode::Strict, false).map(|r| r.0)
}

/// The ID argument of XADD (`*`, `<ms>-*`, `<ms>[-<seq>]`). The 0-0 check
/// is [`crate::stream::Stream::add`]'s, as in Redis it comes after option
/// parsing.
pub fn parse_add_id(arg: &[u8]) -> Result<AddId, StreamError> {
    if arg == b"*" {
        return Ok(AddId::Auto);
    }
    let (id, seq_given) = parse_generic(arg, 0, Mode::Strict, true)?;
    Ok(if seq_given {
        AddId::Explicit(id)
    } else {
        AddId::Partial(id.ms)
    })
}

/// Which end of an interval a bound is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    Start,
    End,
}

/// An interval bound of XRANGE/XREVRANGE/XPENDING/XAUTOCLAIM: `-`, `+`,
/// an ID, or `(ID` (exclusive, strict). Returns the inclusive ID: an
/// exclusive start is incremented, an exclusive end decremented, with
/// Redis's errors when that is impossible.
pub fn parse_interval(arg: &[u8], bound: Bound) -> Result<StreamId, StreamError> {
    let missing = match bound {
        Bound::Start => 0,
        Bound::End => u64::MAX,
    };
    if arg.len() > 1 && arg[0] == b'(' {
        let id = parse_strict_id(&arg[1..], missing)?;
        match bound {
            Bound::Start => id.next().ok_or(StreamError::InvalidStartInterval),
            Bound::End => id.prev().ok_or(StreamError::InvalidEndInterval),
        }
    } else {
        parse_id(arg, missing)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAXS: &str = "18446744073709551615";

    #[test]
    fn formats() {
        assert_eq!(StreamId::new(1, 2).to_string(), "1-2");
        assert_eq!(StreamId::MAX.to_string(), format!("{MAXS}-{MAXS}"));
        let mut v = Vec::new();
        StreamId::new(0, 0).write_to(&mut v);
        assert_eq!(v, b"0-0");
        let b = StreamId::new(5, 7).to_be_bytes();
        assert_eq!(StreamId::from_be_bytes(&b), Some(StreamId::new(5, 7)));
        assert_eq!(StreamId::from_be_bytes(&b[..15]), None);
    }

    #[test]
    fn next_prev_edges() {
        assert_eq!(StreamId::MAX.next(), None);
        assert_eq!(StreamId::MIN.prev(), None);
        assert_eq!(StreamId::new(1, u64::MAX).next(), Some(StreamId::new(2, 0)));
        assert_eq!(StreamId::new(2, 0).prev(), Some(StreamId::new(1, u64::MAX)));
    }

    #[test]
    fn loose_and_strict() {
        assert_eq!(parse_id(b"-", 0), Ok(StreamId::MIN));
        assert_eq!(parse_id(b"+", 0), Ok(StreamId::MAX));
        assert_eq!(parse_strict_id(b"-", 0), Err(StreamError::InvalidId));
        assert_eq!(parse_strict_id(b"+", 0), Err(StreamError::InvalidId));
        assert_eq!(parse_id(b"5", u64::MAX), Ok(StreamId::new(5, u64::MAX)));
        assert_eq!(parse_id(b"5-3", u64::MAX), Ok(StreamId::new(5, 3)));
        assert_eq!(
            parse_id(format!("{MAXS}-{MAXS}").as_bytes(), 0),
            Ok(StreamId::MAX)
        );
        assert_eq!(
            parse_id(b"18446744073709551616", 0),
            Err(StreamError::InvalidId)
        );
        assert_eq!(parse_id(b"1x", 0), Err(StreamError::InvalidId));
        assert_eq!(parse_id(b"", 0), Err(StreamError::InvalidId));
        assert_eq!(parse_id(b"1-", 0), Err(StreamError::InvalidId));
        assert_eq!(parse_id(b"-05", 0), Err(StreamError::InvalidId));
        assert_eq!(parse_id(b"1-2-3", 0), Err(StreamError::InvalidId));
        assert_eq!(parse_id(b"5-*", 0), Err(StreamError::InvalidId));
    }

    #[test]
    fn strtoull_quirks_as_redis() {
        // Seen on redis-server 7.0.15: " 5", "+5", "007", "1-+5" are valid.
        assert_eq!(parse_id(b" 5", 0), Ok(StreamId::new(5, 0)));
        assert_eq!(parse_id(b"+5", 0), Ok(StreamId::new(5, 0)));
        assert_eq!(parse_id(b"007", 0), Ok(StreamId::new(7, 0)));
        assert_eq!(parse_id(b"1-+5", 0), Ok(StreamId::new(1, 5)));
        // "-5" as a sequence is canonical and negative: invalid; " -5" goes
        // through strtoull and wraps.
        assert_eq!(parse_id(b"1--5", 0), Err(StreamError::InvalidId));
        assert_eq!(parse_id(b"1- -5", 0), Ok(StreamId::new(1, u64::MAX - 4)));
        assert_eq!(parse_id(b"1-\t7", 0), Ok(StreamId::new(1, 7)));
        assert_eq!(parse_id(b"1-7 ", 0), Err(StreamError::InvalidId));
        // NUL ends the C string.
        assert_eq!(parse_id(b"-\x00x", 0), Ok(StreamId::MIN));
        assert_eq!(parse_strict_id(b"-\x00x", 0), Err(StreamError::InvalidId));
        assert_eq!(parse_id(b"7\x00-3", 0), Ok(StreamId::new(7, 0)));
        let long = vec![b'1'; 128];
        assert_eq!(parse_id(&long, 0), Err(StreamError::InvalidId));
    }

    #[test]
    fn add_ids() {
        assert_eq!(parse_add_id(b"*"), Ok(AddId::Auto));
        assert_eq!(parse_add_id(b"5-*"), Ok(AddId::Partial(5)));
        assert_eq!(parse_add_id(b"5"), Ok(AddId::Explicit(StreamId::new(5, 0))));
        assert_eq!(
            parse_add_id(b"5-6"),
            Ok(AddId::Explicit(StreamId::new(5, 6)))
        );
        assert_eq!(parse_add_id(b"*-5"), Err(StreamError::InvalidId));
        assert_eq!(parse_add_id(b"5-**"), Err(StreamError::InvalidId));
        assert_eq!(parse_add_id(b"-"), Err(StreamError::InvalidId));
        assert_eq!(parse_add_id(b"+"), Err(StreamError::InvalidId));
    }

    #[test]
    fn intervals() {
        assert_eq!(
            parse_interval(b"(5-5", Bound::Start),
            Ok(StreamId::new(5, 6))
        );
        assert_eq!(parse_interval(b"(5", Bound::Start), Ok(StreamId::new(5, 1)));
        assert_eq!(
            parse_interval(b"(5", Bound::End),
            Ok(StreamId::new(5, u64::MAX - 1))
        );
        assert_eq!(
            parse_interval(b"5", Bound::End),
            Ok(StreamId::new(5, u64::MAX))
        );
        assert_eq!(
            parse_interval(b"(", Bound::Start),
            Err(StreamError::InvalidId)
        );
        assert_eq!(
            parse_interval(b"(-", Bound::Start),
            Err(StreamError::InvalidId)
        );
        assert_eq!(
            parse_interval(b"(+", Bound::End),
            Err(StreamError::InvalidId)
        );
        assert_eq!(
            parse_interval(b"((5", Bound::Start),
            Err(StreamError::InvalidId)
        );
        assert_eq!(
            parse_interval(format!("({MAXS}-{MAXS}").as_bytes(), Bound::Start),
            Err(StreamError::InvalidStartInterval)
        );
        assert_eq!(
            parse_interval(b"(0-0", Bound::End),
            Err(StreamError::InvalidEndInterval)
        );
        assert_eq!(parse_interval(b"-", Bound::Start), Ok(StreamId::MIN));
    }

    #[test]
    fn nogroup_texts() {
        // As redis-server 7.0.15 replies.
        assert_eq!(
            texts::nogroup_key_or_group(b"k", b"nog", true),
            b"NOGROUP No such key 'k' or consumer group 'nog' in XREADGROUP with GROUP option"
        );
        assert_eq!(
            texts::nogroup_key_or_group(b"k", b"nog", false),
            b"NOGROUP No such key 'k' or consumer group 'nog'"
        );
        assert_eq!(
            texts::nogroup_for_key(b"nog", b"k\r\nx\0y"),
            b"NOGROUP No such consumer group 'nog' for key name 'k  x'"
        );
        assert_eq!(
            texts::XGROUP_NEEDS_KEY,
            "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically."
        );
    }

    #[test]
    fn error_texts() {
        assert_eq!(
            StreamError::XaddIdNotGreater.message(),
            "ERR The ID specified in XADD is equal or smaller than the target stream top item"
        );
        assert_eq!(
            StreamError::InvalidId.to_string(),
            "ERR Invalid stream ID specified as stream command argument"
        );
    }
}
