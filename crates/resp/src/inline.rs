//! Splitting of inline (telnet style) commands, a faithful port of the
//! behaviour of Redis's `sdssplitargs`:
//!
//! * blanks between arguments are C `isspace` bytes (space, `\t`, `\n`,
//!   `\v`, `\f`, `\r`), but an unquoted argument ends only at space, `\t`,
//!   `\n`, `\r` or the end of the line (so `a\vb` is one argument);
//! * `"..."` understands `\xHH`, `\n`, `\r`, `\t`, `\b`, `\a` and `\<any>`;
//!   `'...'` understands only `\'`; a quote may open in the middle of an
//!   argument (`a"b c"` is `ab c`);
//! * a closing quote must be followed by a blank or the end of the line, and
//!   an unterminated quote is an error ("unbalanced quotes").
//!
//! Zero-copy: an argument whose bytes are a contiguous run of the line (no
//! quotes in the middle, no escapes) is returned as a range of the input.
//! If any argument is not, every argument of the command is copied to the
//! scratch buffer and all ranges index the scratch buffer, so a command's
//! arguments always live in one place.

/// Byte at `i` of the line `buf[..end]`, or 0 past its end (C string view).
#[inline]
fn at(buf: &[u8], end: usize, i: usize) -> u8 {
    if i < end {
        buf[i]
    } else {
        0
    }
}

/// C's `isspace` in the "C" locale.
#[inline]
pub(crate) fn is_c_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

#[inline]
fn hex_val(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// The argument being built.
enum Acc {
    Empty,
    /// A contiguous run `buf[start..end]` so far.
    Span(usize, usize),
    /// Bytes copied to scratch from this offset.
    Owned(usize),
}

struct Builder<'a> {
    buf: &'a [u8],
    scratch: &'a mut Vec<u8>,
    acc: Acc,
}

impl Builder<'_> {
    /// Appends the byte found at `buf[i]`.
    #[inline]
    fn byte_at(&mut self, i: usize) {
        match self.acc {
            Acc::Empty => self.acc = Acc::Span(i, i + 1),
            Acc::Span(s, e) if e == i => self.acc = Acc::Span(s, e + 1),
            Acc::Span(..) | Acc::Owned(_) => self.literal(self.buf[i]),
        }
    }

    /// Appends a byte that is not at its place in the input.
    fn literal(&mut self, c: u8) {
        match self.acc {
            Acc::Empty => {
                self.acc = Acc::Owned(self.scratch.len());
            }
            Acc::Span(s, e) => {
                self.acc = Acc::Owned(self.scratch.len());
                self.scratch.extend_from_slice(&self.buf[s..e]);
            }
            Acc::Owned(_) => {}
        }
        self.scratch.push(c);
    }
}

/// One argument, before we know whether the command needs the scratch.
#[derive(Clone, Copy)]
enum Tok {
    Input(usize, usize),
    Scratch(usize, usize),
}

/// Splits the line `buf[start..end]` (no NUL inside, terminator excluded).
/// Pushes ranges to `out`; returns `Ok(true)` if they index `scratch`,
/// `Ok(false)` if they index `buf`, `Err(())` for unbalanced quotes.
pub(crate) fn split_inline(
    buf: &[u8],
    start: usize,
    end: usize,
    out: &mut Vec<(usize, usize)>,
    scratch: &mut Vec<u8>,
) -> Result<bool, ()> {
    if memchr::memchr2(b'"', b'\'', &buf[start..end]).is_none() {
        // No quotes: arguments are the runs between separators, all
        // zero-copy (a backslash outside quotes is an ordinary byte).
        let mut p = start;
        loop {
            while p < end && is_c_space(buf[p]) {
                p += 1;
            }
            if p >= end {
                return Ok(false);
            }
            let s = p;
            while p < end && !matches!(buf[p], b' ' | b'\n' | b'\r' | b'\t') {
                p += 1;
            }
            out.push((s, p));
        }
    }
    split_general(buf, start, end, out, scratch)
}

/// The general splitter (any quoting); `split_inline` uses it for lines
/// with quotes.
fn split_general(
    buf: &[u8],
    start: usize,
    end: usize,
    out: &mut Vec<(usize, usize)>,
    scratch: &mut Vec<u8>,
) -> Result<bool, ()> {
    let mut toks: Vec<Tok> = Vec::new();
    let mut owned_any = false;
    let mut p = start;
    loop {
        while p < end && is_c_space(buf[p]) {
            p += 1;
        }
        if p >= end {
            break;
        }
        let mut b = Builder {
            buf,
            scratch: &mut *scratch,
            acc: Acc::Empty,
        };
        let (mut inq, mut insq) = (false, false);
        let token_start = p;
        loop {
            let c = at(buf, end, p);
            if inq {
                if c == b'\\' && at(buf, end, p + 1) == b'x' {
                    if let (Some(h), Some(l)) =
                        (hex_val(at(buf, end, p + 2)), hex_val(at(buf, end, p + 3)))
                    {
                        b.literal(h * 16 + l);
                        p += 4;
                        continue;
                    }
                }
                if c == b'\\' && at(buf, end, p + 1) != 0 {
                    p += 1;
                    match buf[p] {
                        b'n' => b.literal(b'\n'),
                        b'r' => b.literal(b'\r'),
                        b't' => b.literal(b'\t'),
                        b'b' => b.literal(0x08),
                        b'a' => b.literal(0x07),
                        _ => b.byte_at(p),
                    }
                } else if c == b'"' {
                    let next = at(buf, end, p + 1);
                    if next != 0 && !is_c_space(next) {
                        return Err(());
                    }
                    p += 1;
                    break;
                } else if c == 0 {
                    return Err(());
                } else {
                    b.byte_at(p);
                }
            } else if insq {
                if c == b'\\' && at(buf, end, p + 1) == b'\'' {
                    p += 1;
                    b.byte_at(p);
                } else if c == b'\'' {
                    let next = at(buf, end, p + 1);
                    if next != 0 && !is_c_space(next) {
                        return Err(());
                    }
                    p += 1;
                    break;
                } else if c == 0 {
                    return Err(());
                } else {
                    b.byte_at(p);
                }
            } else {
                match c {
                    b' ' | b'\n' | b'\r' | b'\t' | 0 => {
                        if c != 0 {
                            p += 1;
                        }
                        break;
                    }
                    b'"' => inq = true,
                    b'\'' => insq = true,
                    _ => b.byte_at(p),
                }
            }
            p += 1;
        }
        let tok = match b.acc {
            Acc::Empty => Tok::Input(token_start, token_start),
            Acc::Span(s, e) => Tok::Input(s, e),
            Acc::Owned(s) => {
                owned_any = true;
                Tok::Scratch(s, scratch.len())
            }
        };
        toks.push(tok);
    }
    if !owned_any {
        out.extend(toks.iter().map(|t| match *t {
            Tok::Input(s, e) => (s, e),
            Tok::Scratch(..) => unreachable!("no scratch token"),
        }));
        return Ok(false);
    }
    for t in toks {
        match t {
            Tok::Scratch(s, e) => out.push((s, e)),
            Tok::Input(s, e) => {
                let at = scratch.len();
                scratch.extend_from_slice(&buf[s..e]);
                out.push((at, scratch.len()));
            }
        }
    }
    Ok(true)
}

/// Redis's `sdssplitargs` on one line, as the config file loader, ACL
/// selectors and `redis-cli` use it: the arguments, copied, or `None` for
/// unbalanced quotes (or a closing quote followed by a non-blank). Like the
/// C function, the line ends at its first NUL byte.
pub fn split_args(line: &[u8]) -> Option<Vec<Vec<u8>>> {
    let end = memchr::memchr(0, line).unwrap_or(line.len());
    let (mut ranges, mut scratch) = (Vec::new(), Vec::new());
    let in_scratch = split_inline(line, 0, end, &mut ranges, &mut scratch).ok()?;
    let src = if in_scratch { &scratch[..] } else { line };
    Some(ranges.iter().map(|&(s, e)| src[s..e].to_vec()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_args_as_sdssplitargs() {
        let v = |xs: &[&[u8]]| Some(xs.iter().map(|x| x.to_vec()).collect::<Vec<_>>());
        assert_eq!(split_args(b"  set k  v "), v(&[b"set", b"k", b"v"]));
        assert_eq!(split_args(b"a\"b c\"d"), None);
        assert_eq!(split_args(b"a\"b c\" d"), v(&[b"ab c", b"d"]));
        assert_eq!(split_args(b"\"\\x41\\n\" 'it\\'s'"), v(&[b"A\n", b"it's"]));
        assert_eq!(split_args(b"\"open"), None);
        assert_eq!(split_args(b"x\0\"open"), v(&[b"x"]));
        assert_eq!(split_args(b"a\x0bb"), v(&[b"a\x0bb"]));
        assert_eq!(split_args(b""), v(&[]));
    }

    /// The quote-free fast path splits exactly like the general splitter,
    /// on every string of up to 6 bytes over the interesting alphabet.
    #[test]
    fn fast_path_equals_general_path() {
        let alphabet = b"a \t\r\n\x0b\x0c\\";
        let mut line = Vec::new();
        for len in 0..=6u32 {
            for mut code in 0..alphabet.len().pow(len) {
                line.clear();
                for _ in 0..len {
                    line.push(alphabet[code % alphabet.len()]);
                    code /= alphabet.len();
                }
                let (mut fast, mut slow) = (Vec::new(), Vec::new());
                let (mut s1, mut s2) = (Vec::new(), Vec::new());
                let a = split_inline(&line, 0, line.len(), &mut fast, &mut s1);
                let b = split_general(&line, 0, line.len(), &mut slow, &mut s2);
                assert_eq!(a, Ok(false));
                assert_eq!((a, &fast), (b, &slow), "{line:?}");
            }
        }
    }
}
