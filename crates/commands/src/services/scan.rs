//! The SCAN family's shared arguments (SCAN, SSCAN, HSCAN, ZSCAN): the
//! cursor, `COUNT`, `MATCH` and (SCAN only) `TYPE`, parsed with Redis 7.0's
//! rules and errors, and the `[cursor, items]` reply header.
//!
//! Order of checks, as in Redis: the cursor first; then, for the key
//! commands, the key's lookup (a missing key answers an empty scan without
//! looking at the options) and type; then the options.

use resp::ReplyBuf;

use crate::base::errors;
use crate::base::errors::{ERR_NOT_INT, ERR_SYNTAX};
use crate::base::glob::glob_match;
use crate::base::parse::{eq_ic, parse_i64};

/// Parses a SCAN-family cursor like Redis's `strtoul`: an optional sign (a
/// '-' wraps around), decimal digits, nothing else, no overflow.
pub fn parse_cursor(arg: &[u8]) -> Result<u64, &'static str> {
    let (neg, digits) = match arg.first() {
        Some(b'-') => (true, &arg[1..]),
        Some(b'+') => (false, &arg[1..]),
        _ => (false, arg),
    };
    let mut v: u64 = 0;
    let mut ok = arg.is_empty() || !digits.is_empty();
    for &c in digits {
        match (c as char)
            .to_digit(10)
            .and_then(|d| v.checked_mul(10)?.checked_add(d as u64))
        {
            Some(n) => v = n,
            None => ok = false,
        }
    }
    if !ok {
        return Err(errors::ERR_INVALID_CURSOR);
    }
    Ok(if neg { v.wrapping_neg() } else { v })
}

/// The options of one SCAN-family call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanArgs<'a> {
    /// `COUNT`: how much work one call may do (default 10).
    pub count: usize,
    /// `MATCH` pattern; `None` for no pattern or `*`.
    pub pattern: Option<&'a [u8]>,
    /// `TYPE` (SCAN only): the type name keys must have.
    pub typ: Option<&'a [u8]>,
}

impl ScanArgs<'_> {
    /// Parses the options in `args[from..]`; `TYPE` is accepted only when
    /// `allow_type` (SCAN itself).
    pub fn parse<'a>(
        args: &[&'a [u8]],
        from: usize,
        allow_type: bool,
    ) -> Result<ScanArgs<'a>, &'static str> {
        let mut a = ScanArgs {
            count: 10,
            pattern: None,
            typ: None,
        };
        let mut j = from;
        while j < args.len() {
            let has_value = j + 1 < args.len();
            if eq_ic(args[j], "count") && has_value {
                let c = parse_i64(args[j + 1]).ok_or(ERR_NOT_INT)?;
                if c < 1 {
                    return Err(ERR_SYNTAX);
                }
                a.count = c as usize;
            } else if eq_ic(args[j], "match") && has_value {
                a.pattern = Some(args[j + 1]).filter(|p| *p != b"*");
            } else if allow_type && eq_ic(args[j], "type") && has_value {
                a.typ = Some(args[j + 1]);
            } else {
                return Err(ERR_SYNTAX);
            }
            j += 2;
        }
        Ok(a)
    }

    /// Does `item` pass the `MATCH` pattern?
    pub fn matches(&self, item: &[u8]) -> bool {
        self.pattern.is_none_or(|p| glob_match(p, item, false))
    }
}

/// Writes the reply's head: a two-element array whose first element is the
/// next cursor (as a bulk string); the caller writes the items array.
pub fn reply_cursor(out: &mut ReplyBuf, next: u64) {
    out.array_len(2);
    out.bulk(next.to_string().as_bytes());
}

/// The reply for a key that does not exist: cursor 0 and no items.
pub fn reply_empty(out: &mut ReplyBuf) {
    reply_cursor(out, 0);
    out.array_len(0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_parse_like_strtoul() {
        assert_eq!(parse_cursor(b"0"), Ok(0));
        assert_eq!(parse_cursor(b"+17"), Ok(17));
        assert_eq!(parse_cursor(b"-1"), Ok(u64::MAX));
        assert_eq!(parse_cursor(b"18446744073709551615"), Ok(u64::MAX));
        assert_eq!(parse_cursor(b""), Ok(0));
        for bad in [&b"18446744073709551616"[..], b"1a", b"-", b" 1", b"0x1"] {
            assert_eq!(parse_cursor(bad), Err("ERR invalid cursor"), "{bad:?}");
        }
    }

    #[test]
    fn options() {
        let args: Vec<&[u8]> = vec![
            b"scan", b"0", b"MATCH", b"a*", b"count", b"5", b"TYPE", b"set",
        ];
        let a = ScanArgs::parse(&args, 2, true).unwrap();
        assert_eq!(
            (a.count, a.pattern, a.typ),
            (5, Some(&b"a*"[..]), Some(&b"set"[..]))
        );
        assert!(a.matches(b"abc") && !a.matches(b"bc"));
        assert_eq!(ScanArgs::parse(&args, 2, false), Err(ERR_SYNTAX));
        let star: Vec<&[u8]> = vec![b"scan", b"0", b"match", b"*"];
        assert_eq!(ScanArgs::parse(&star, 2, true).unwrap().pattern, None);
        let zero: Vec<&[u8]> = vec![b"scan", b"0", b"count", b"0"];
        assert_eq!(ScanArgs::parse(&zero, 2, true), Err(ERR_SYNTAX));
        let nan: Vec<&[u8]> = vec![b"scan", b"0", b"count", b"x"];
        assert_eq!(ScanArgs::parse(&nan, 2, true), Err(ERR_NOT_INT));
        let dangling: Vec<&[u8]> = vec![b"scan", b"0", b"count"];
        assert_eq!(ScanArgs::parse(&dangling, 2, true), Err(ERR_SYNTAX));
    }
}
