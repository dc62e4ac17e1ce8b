//! A small client-side reply parser and encoder (RESP2 and RESP3), for tests,
//! differential comparisons and benchmark tools. Not tuned for speed.
//!
//! [`parse_value`] reads one complete reply from the start of a buffer:
//! `Ok(Some((value, consumed)))`, `Ok(None)` if the buffer ends first, or
//! `Err` for bytes that are not RESP. Scalars that carry text keep their
//! exact bytes (doubles and big numbers too), so replies from two servers
//! can be compared byte for byte. [`Value::encode`] writes a value back in
//! the same wire form, so `parse_value(v.encode())` returns `v`.

use std::fmt;

use crate::num::{parse_redis_i64, write_i64, write_u64};

/// Deepest nesting accepted by [`parse_value`] (guards the stack).
pub const MAX_DEPTH: usize = 512;

/// One RESP reply.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `+text`
    Simple(Vec<u8>),
    /// `-text` (the whole text, e.g. `ERR unknown command`)
    Error(Vec<u8>),
    /// `:n`
    Int(i64),
    /// `$len` + data
    Bulk(Vec<u8>),
    /// RESP2 `$-1`
    NullBulk,
    /// RESP2 `*-1`
    NullArray,
    /// RESP3 `_`
    Null,
    /// `*n`
    Array(Vec<Value>),
    /// RESP3 `%n`
    Map(Vec<(Value, Value)>),
    /// RESP3 `~n`
    Set(Vec<Value>),
    /// RESP3 `>n`
    Push(Vec<Value>),
    /// RESP3 `,text`: the text exactly as sent (e.g. `inf`, `1.5`)
    Double(Vec<u8>),
    /// RESP3 `#t` / `#f`
    Boolean(bool),
    /// RESP3 `=len` + `fmt:data`
    Verbatim {
        /// The three-byte format (`txt`, `mkd`).
        format: [u8; 3],
        /// The text after `fmt:`.
        data: Vec<u8>,
    },
    /// RESP3 `(digits`
    BigNumber(Vec<u8>),
    /// RESP3 `!len` + data (blob error)
    BlobError(Vec<u8>),
    /// RESP3 `|n` attribute pairs followed by the value they annotate.
    Attribute {
        /// The attribute map.
        attrs: Vec<(Value, Value)>,
        /// The reply the attributes belong to.
        value: Box<Value>,
    },
}

/// Bytes that are not valid RESP.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueError(pub String);

impl fmt::Display for ValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid RESP: {}", self.0)
    }
}

impl std::error::Error for ValueError {}

fn bad<T>(msg: impl Into<String>) -> Result<T, ValueError> {
    Err(ValueError(msg.into()))
}

/// Parses one reply from the start of `buf`; see the module documentation.
pub fn parse_value(buf: &[u8]) -> Result<Option<(Value, usize)>, ValueError> {
    let mut pos = 0;
    match parse_at(buf, &mut pos, 0)? {
        Some(v) => Ok(Some((v, pos))),
        None => Ok(None),
    }
}

/// Parses every complete reply in `buf`; returns them and the bytes used.
pub fn parse_all(buf: &[u8]) -> Result<(Vec<Value>, usize), ValueError> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < buf.len() {
        match parse_value(&buf[pos..])? {
            Some((v, n)) => {
                out.push(v);
                pos += n;
            }
            None => break,
        }
    }
    Ok((out, pos))
}

/// The line starting at `*pos` (without `\r\n`); advances past it.
fn line<'a>(buf: &'a [u8], pos: &mut usize) -> Result<Option<&'a [u8]>, ValueError> {
    let rest = &buf[*pos..];
    match memchr::memchr(b'\r', rest) {
        None => Ok(None),
        Some(i) if i + 1 >= rest.len() => Ok(None),
        Some(i) => {
            if rest[i + 1] != b'\n' {
                return bad("line not terminated by CRLF");
            }
            *pos += i + 2;
            Ok(Some(&rest[..i]))
        }
    }
}

fn int_of(s: &[u8]) -> Result<i64, ValueError> {
    parse_redis_i64(s)
        .ok_or_else(|| ValueError(format!("bad integer {:?}", String::from_utf8_lossy(s))))
}

/// Length prefix: -1 means null; other negatives are errors.
fn len_of(s: &[u8]) -> Result<Option<usize>, ValueError> {
    match int_of(s)? {
        -1 => Ok(None),
        n if n < 0 => bad("negative length"),
        n => usize::try_from(n)
            .map(Some)
            .map_err(|_| ValueError("length too big".into())),
    }
}

fn blob(buf: &[u8], pos: &mut usize, len: usize) -> Result<Option<Vec<u8>>, ValueError> {
    let start = *pos;
    let Some(end) = start.checked_add(len) else {
        return bad("length too big");
    };
    if buf.len() < end.saturating_add(2) {
        return Ok(None);
    }
    if &buf[end..end + 2] != b"\r\n" {
        return bad("blob not terminated by CRLF");
    }
    *pos = end + 2;
    Ok(Some(buf[start..end].to_vec()))
}

fn elements(
    buf: &[u8],
    pos: &mut usize,
    n: usize,
    depth: usize,
) -> Result<Option<Vec<Value>>, ValueError> {
    // Each element takes at least 3 bytes: don't trust n for the capacity.
    let mut v = Vec::with_capacity(n.min((buf.len() - *pos) / 3 + 1));
    for _ in 0..n {
        match parse_at(buf, pos, depth + 1)? {
            Some(e) => v.push(e),
            None => return Ok(None),
        }
    }
    Ok(Some(v))
}

fn pairs(
    buf: &[u8],
    pos: &mut usize,
    n: usize,
    depth: usize,
) -> Result<Option<Vec<(Value, Value)>>, ValueError> {
    let Some(mut flat) = elements(
        buf,
        pos,
        n.checked_mul(2)
            .ok_or_else(|| ValueError("length too big".into()))?,
        depth,
    )?
    else {
        return Ok(None);
    };
    let mut out = Vec::with_capacity(n);
    while let Some(v) = flat.pop() {
        let k = flat.pop().expect("even number of elements");
        out.push((k, v));
    }
    out.reverse();
    Ok(Some(out))
}

fn parse_at(buf: &[u8], pos: &mut usize, depth: usize) -> Result<Option<Value>, ValueError> {
    if depth > MAX_DEPTH {
        return bad("nesting too deep");
    }
    let Some(&kind) = buf.get(*pos) else {
        return Ok(None);
    };
    let mut p = *pos + 1;
    let Some(l) = line(buf, &mut p)? else {
        return Ok(None);
    };
    let v = match kind {
        b'+' => Value::Simple(l.to_vec()),
        b'-' => Value::Error(l.to_vec()),
        b':' => Value::Int(int_of(l)?),
        b',' => Value::Double(l.to_vec()),
        b'(' => Value::BigNumber(l.to_vec()),
        b'#' => match l {
            b"t" => Value::Boolean(true),
            b"f" => Value::Boolean(false),
            _ => return bad("bad boolean"),
        },
        b'_' => {
            if !l.is_empty() {
                return bad("bad null");
            }
            Value::Null
        }
        b'$' | b'!' | b'=' => match len_of(l)? {
            None if kind == b'$' => Value::NullBulk,
            None => return bad("null blob error / verbatim"),
            Some(n) => {
                let Some(data) = blob(buf, &mut p, n)? else {
                    return Ok(None);
                };
                match kind {
                    b'$' => Value::Bulk(data),
                    b'!' => Value::BlobError(data),
                    _ => {
                        if data.len() < 4 || data[3] != b':' {
                            return bad("bad verbatim string");
                        }
                        Value::Verbatim {
                            format: [data[0], data[1], data[2]],
                            data: data[4..].to_vec(),
                        }
                    }
                }
            }
        },
        b'*' | b'~' | b'>' => match len_of(l)? {
            None if kind == b'*' => Value::NullArray,
            None => return bad("null set / push"),
            Some(n) => {
                let Some(items) = elements(buf, &mut p, n, depth)? else {
                    return Ok(None);
                };
                match kind {
                    b'*' => Value::Array(items),
                    b'~' => Value::Set(items),
                    _ => Value::Push(items),
                }
            }
        },
        b'%' | b'|' => {
            let Some(n) = len_of(l)? else {
                return bad("null map");
            };
            let Some(kv) = pairs(buf, &mut p, n, depth)? else {
                return Ok(None);
            };
            if kind == b'%' {
                Value::Map(kv)
            } else {
                let Some(inner) = parse_at(buf, &mut p, depth + 1)? else {
                    return Ok(None);
                };
                Value::Attribute {
                    attrs: kv,
                    value: Box::new(inner),
                }
            }
        }
        other => return bad(format!("unknown type byte {other:#04x}")),
    };
    *pos = p;
    Ok(Some(v))
}

impl Value {
    /// A bulk string value.
    pub fn bulk(data: impl AsRef<[u8]>) -> Value {
        Value::Bulk(data.as_ref().to_vec())
    }

    /// A simple string value.
    pub fn simple(text: impl AsRef<[u8]>) -> Value {
        Value::Simple(text.as_ref().to_vec())
    }

    /// True for the three null forms.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null | Value::NullBulk | Value::NullArray)
    }

    /// The bytes of a simple string, bulk string or verbatim string.
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Value::Simple(b) | Value::Bulk(b) => Some(b),
            Value::Verbatim { data, .. } => Some(data),
            _ => None,
        }
    }

    /// The wire form of this value.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_into(&mut out);
        out
    }

    /// Appends the wire form of this value to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        fn hdr(out: &mut Vec<u8>, c: u8, n: usize) {
            out.push(c);
            write_u64(out, n as u64);
            out.extend_from_slice(b"\r\n");
        }
        fn line(out: &mut Vec<u8>, c: u8, s: &[u8]) {
            out.push(c);
            out.extend_from_slice(s);
            out.extend_from_slice(b"\r\n");
        }
        match self {
            Value::Simple(s) => line(out, b'+', s),
            Value::Error(s) => line(out, b'-', s),
            Value::Int(n) => {
                out.push(b':');
                write_i64(out, *n);
                out.extend_from_slice(b"\r\n");
            }
            Value::Bulk(b) | Value::BlobError(b) => {
                hdr(
                    out,
                    if matches!(self, Value::Bulk(_)) {
                        b'$'
                    } else {
                        b'!'
                    },
                    b.len(),
                );
                out.extend_from_slice(b);
                out.extend_from_slice(b"\r\n");
            }
            Value::NullBulk => out.extend_from_slice(b"$-1\r\n"),
            Value::NullArray => out.extend_from_slice(b"*-1\r\n"),
            Value::Null => out.extend_from_slice(b"_\r\n"),
            Value::Array(v) | Value::Set(v) | Value::Push(v) => {
                let c = match self {
                    Value::Array(_) => b'*',
                    Value::Set(_) => b'~',
                    _ => b'>',
                };
                hdr(out, c, v.len());
                for e in v {
                    e.encode_into(out);
                }
            }
            Value::Map(kv) => {
                hdr(out, b'%', kv.len());
                for (k, v) in kv {
                    k.encode_into(out);
                    v.encode_into(out);
                }
            }
            Value::Attribute { attrs, value } => {
                hdr(out, b'|', attrs.len());
                for (k, v) in attrs {
                    k.encode_into(out);
                    v.encode_into(out);
                }
                value.encode_into(out);
            }
            Value::Double(s) => line(out, b',', s),
            Value::BigNumber(s) => line(out, b'(', s),
            Value::Boolean(b) => out.extend_from_slice(if *b { b"#t\r\n" } else { b"#f\r\n" }),
            Value::Verbatim { format, data } => {
                hdr(out, b'=', data.len() + 4);
                out.extend_from_slice(format);
                out.push(b':');
                out.extend_from_slice(data);
                out.extend_from_slice(b"\r\n");
            }
        }
    }
}

impl fmt::Display for Value {
    /// A redis-cli-like one-line rendering, handy in test failure messages.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn list(f: &mut fmt::Formatter<'_>, open: &str, v: &[Value], close: &str) -> fmt::Result {
            f.write_str(open)?;
            for (i, e) in v.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{e}")?;
            }
            f.write_str(close)
        }
        fn kvs(f: &mut fmt::Formatter<'_>, kv: &[(Value, Value)]) -> fmt::Result {
            f.write_str("{")?;
            for (i, (k, v)) in kv.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{k}: {v}")?;
            }
            f.write_str("}")
        }
        let s = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        match self {
            Value::Simple(b) => write!(f, "{}", s(b)),
            Value::Error(b) => write!(f, "(error) {}", s(b)),
            Value::BlobError(b) => write!(f, "(blob error) {}", s(b)),
            Value::Int(n) => write!(f, "(integer) {n}"),
            Value::Bulk(b) => write!(f, "{:?}", s(b)),
            Value::NullBulk | Value::NullArray | Value::Null => f.write_str("(nil)"),
            Value::Array(v) => list(f, "[", v, "]"),
            Value::Set(v) => list(f, "~[", v, "]"),
            Value::Push(v) => list(f, ">[", v, "]"),
            Value::Map(kv) => kvs(f, kv),
            Value::Attribute { attrs, value } => {
                f.write_str("|")?;
                kvs(f, attrs)?;
                write!(f, " {value}")
            }
            Value::Double(b) => write!(f, "(double) {}", s(b)),
            Value::BigNumber(b) => write!(f, "(big number) {}", s(b)),
            Value::Boolean(b) => write!(f, "({b})"),
            Value::Verbatim { format, data } => write!(f, "{}:{:?}", s(format), s(data)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_type() {
        let wire =
            b"+OK\r\n-ERR no\r\n:-5\r\n$3\r\nabc\r\n$-1\r\n*-1\r\n_\r\n*2\r\n:1\r\n$0\r\n\r\n\
%1\r\n+k\r\n:2\r\n~1\r\n#t\r\n>2\r\n+message\r\n,inf\r\n=7\r\ntxt:abc\r\n(123\r\n!3\r\nbad\r\n\
|1\r\n+a\r\n+b\r\n:9\r\n";
        let (vals, used) = parse_all(wire).unwrap();
        assert_eq!(used, wire.len());
        assert_eq!(
            vals,
            vec![
                Value::simple("OK"),
                Value::Error(b"ERR no".to_vec()),
                Value::Int(-5),
                Value::bulk("abc"),
                Value::NullBulk,
                Value::NullArray,
                Value::Null,
                Value::Array(vec![Value::Int(1), Value::bulk("")]),
                Value::Map(vec![(Value::simple("k"), Value::Int(2))]),
                Value::Set(vec![Value::Boolean(true)]),
                Value::Push(vec![
                    Value::simple("message"),
                    Value::Double(b"inf".to_vec())
                ]),
                Value::Verbatim {
                    format: *b"txt",
                    data: b"abc".to_vec()
                },
                Value::BigNumber(b"123".to_vec()),
                Value::BlobError(b"bad".to_vec()),
                Value::Attribute {
                    attrs: vec![(Value::simple("a"), Value::simple("b"))],
                    value: Box::new(Value::Int(9)),
                },
            ]
        );
        let mut again = Vec::new();
        for v in &vals {
            v.encode_into(&mut again);
        }
        assert_eq!(again, wire);
    }

    #[test]
    fn incomplete_at_every_cut() {
        let wire = b"*3\r\n$3\r\nabc\r\n%1\r\n:1\r\n=5\r\ntxt:a\r\n,1.5\r\n";
        for cut in 0..wire.len() {
            assert_eq!(parse_value(&wire[..cut]).unwrap(), None, "cut {cut}");
        }
        assert!(parse_value(wire).unwrap().is_some());
    }

    #[test]
    fn rejects_garbage() {
        for bad in [
            &b"?x\r\n"[..],
            b":x\r\n",
            b"$-2\r\n",
            b"$3\r\nabcde\r\n",
            b"#x\r\n",
            b"+a\rb\r\n",
            b"=3\r\nabc\r\n",
        ] {
            assert!(
                parse_value(bad).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
        let deep = vec![b"*1\r\n".as_slice(); MAX_DEPTH + 2].concat();
        assert!(parse_value(&deep).is_err());
    }
}
