//! Property tests: encode -> parse round trips with arbitrary split points,
//! inline quoting, reply writer -> reply parser, and robustness on noise.

mod common;

use common::{feed_chunks, Outcome};
use proptest::collection::vec;
use proptest::prelude::*;
use resp::{
    encode_command, format_double_like_redis, parse_value, Limits, Protocol, ProtocolError,
    ReplyBuf, Value,
};

fn arg() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        vec(any::<u8>(), 0..40),
        // Bytes that matter to the protocol, densely.
        vec(prop::sample::select(b"*$\r\n \"'\\x0aA\t".to_vec()), 0..20),
        vec(any::<u8>(), 200..3000),
    ]
}

fn command() -> impl Strategy<Value = Vec<Vec<u8>>> {
    vec(arg(), 1..8)
}

/// Cuts `input` at the given (arbitrary) points.
fn cut<'a>(input: &'a [u8], points: &[usize]) -> Vec<&'a [u8]> {
    let mut pts: Vec<usize> = points.iter().map(|p| p % (input.len() + 1)).collect();
    pts.sort_unstable();
    let mut chunks = Vec::new();
    let mut last = 0;
    for p in pts {
        chunks.push(&input[last..p]);
        last = p;
    }
    chunks.push(&input[last..]);
    chunks
}

/// redis-cli style quoting (`sdscatrepr`): always double quotes, escapes for
/// `\\ \" \n \r \t \a \b` and `\xHH` for other non-printable bytes.
fn quote(arg: &[u8]) -> Vec<u8> {
    let mut out = vec![b'"'];
    for &c in arg {
        match c {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'"' => out.extend_from_slice(b"\\\""),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x07 => out.extend_from_slice(b"\\a"),
            0x08 => out.extend_from_slice(b"\\b"),
            c if c.is_ascii_graphic() || c == b' ' => out.push(c),
            c => out.extend_from_slice(format!("\\x{c:02x}").as_bytes()),
        }
    }
    out.push(b'"');
    out
}

/// A reply tree the writer can produce.
#[derive(Clone, Debug)]
enum Reply {
    Simple(String),
    Error(String),
    Int(i64),
    Bulk(Vec<u8>),
    BulkInt(i64),
    NullBulk,
    NullArray,
    Double(f64),
    Boolean(bool),
    Verbatim(Vec<u8>),
    Array(Vec<Reply>),
    Map(Vec<(Reply, Reply)>),
    Set(Vec<Reply>),
    Push(Vec<Reply>),
}

fn reply() -> impl Strategy<Value = Reply> {
    let leaf = prop_oneof![
        "[a-zA-Z0-9 ]{0,12}".prop_map(Reply::Simple),
        "ERR [a-z ]{0,12}".prop_map(Reply::Error),
        any::<i64>().prop_map(Reply::Int),
        vec(any::<u8>(), 0..30).prop_map(Reply::Bulk),
        any::<i64>().prop_map(Reply::BulkInt),
        Just(Reply::NullBulk),
        Just(Reply::NullArray),
        any::<f64>().prop_map(Reply::Double),
        any::<bool>().prop_map(Reply::Boolean),
        vec(any::<u8>(), 0..30).prop_map(Reply::Verbatim),
    ];
    leaf.prop_recursive(3, 40, 6, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..6).prop_map(Reply::Array),
            vec((inner.clone(), inner.clone()), 0..4).prop_map(Reply::Map),
            vec(inner.clone(), 0..6).prop_map(Reply::Set),
            vec(inner, 0..6).prop_map(Reply::Push),
        ]
    })
}

fn write(r: &Reply, out: &mut ReplyBuf) {
    match r {
        Reply::Simple(s) => out.simple(s),
        Reply::Error(s) => out.error(s),
        Reply::Int(n) => out.int(*n),
        Reply::Bulk(b) => out.bulk(b),
        Reply::BulkInt(n) => out.bulk_from_int(*n),
        Reply::NullBulk => out.null_bulk(),
        Reply::NullArray => out.null_array(),
        Reply::Double(x) => out.double(*x),
        Reply::Boolean(b) => out.boolean(*b),
        Reply::Verbatim(b) => out.verbatim(b"txt", b),
        Reply::Array(v) => {
            out.array_len(v.len());
            v.iter().for_each(|e| write(e, out));
        }
        Reply::Map(kv) => {
            out.map_len(kv.len());
            for (k, v) in kv {
                write(k, out);
                write(v, out);
            }
        }
        Reply::Set(v) => {
            out.set_len(v.len());
            v.iter().for_each(|e| write(e, out));
        }
        Reply::Push(v) => {
            out.push_len(v.len());
            v.iter().for_each(|e| write(e, out));
        }
    }
}

/// What a client should read back.
fn expect(r: &Reply, proto: Protocol) -> Value {
    let r3 = proto == Protocol::Resp3;
    let all = |v: &[Reply]| v.iter().map(|e| expect(e, proto)).collect::<Vec<_>>();
    match r {
        Reply::Simple(s) => Value::simple(s),
        Reply::Error(s) => Value::Error(s.as_bytes().to_vec()),
        Reply::Int(n) => Value::Int(*n),
        Reply::Bulk(b) => Value::bulk(b),
        Reply::BulkInt(n) => Value::bulk(n.to_string()),
        Reply::NullBulk if r3 => Value::Null,
        Reply::NullArray if r3 => Value::Null,
        Reply::NullBulk => Value::NullBulk,
        Reply::NullArray => Value::NullArray,
        Reply::Double(x) if r3 => Value::Double(format_double_like_redis(*x)),
        Reply::Double(x) => Value::Bulk(format_double_like_redis(*x)),
        Reply::Boolean(b) if r3 => Value::Boolean(*b),
        Reply::Boolean(b) => Value::Int(i64::from(*b)),
        Reply::Verbatim(b) if r3 => Value::Verbatim {
            format: *b"txt",
            data: b.clone(),
        },
        Reply::Verbatim(b) => Value::bulk(b),
        Reply::Array(v) => Value::Array(all(v)),
        Reply::Map(kv) if r3 => Value::Map(
            kv.iter()
                .map(|(k, v)| (expect(k, proto), expect(v, proto)))
                .collect(),
        ),
        Reply::Map(kv) => Value::Array(
            kv.iter()
                .flat_map(|(k, v)| [expect(k, proto), expect(v, proto)])
                .collect(),
        ),
        Reply::Set(v) if r3 => Value::Set(all(v)),
        Reply::Push(v) if r3 => Value::Push(all(v)),
        Reply::Set(v) | Reply::Push(v) => Value::Array(all(v)),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn multibulk_round_trip_any_split(
        cmds in vec(command(), 1..6),
        points in vec(any::<usize>(), 0..12),
    ) {
        let mut wire = Vec::new();
        for c in &cmds {
            wire.extend_from_slice(&encode_command(c));
        }
        let out = feed_chunks(&cut(&wire, &points), &Limits::default());
        prop_assert_eq!(out, Outcome { commands: cmds, error: None, leftover: 0 });
    }

    #[test]
    fn inline_quoted_round_trip_any_split(
        cmds in vec(vec(vec(any::<u8>(), 0..24), 1..6), 1..4),
        points in vec(any::<usize>(), 0..8),
        lf_only in any::<bool>(),
    ) {
        let mut wire = Vec::new();
        for c in &cmds {
            for (i, a) in c.iter().enumerate() {
                if i > 0 {
                    wire.push(b' ');
                }
                wire.extend_from_slice(&quote(a));
            }
            wire.extend_from_slice(if lf_only { b"\n" } else { b"\r\n" });
        }
        let out = feed_chunks(&cut(&wire, &points), &Limits::default());
        prop_assert_eq!(out, Outcome { commands: cmds, error: None, leftover: 0 });
    }

    #[test]
    fn plain_inline_words(words in vec("[!-~&&[^\"'*]][!-~&&[^\"']]{0,9}", 1..8)) {
        let line = format!("{}\r\n", words.join(" "));
        let out = feed_chunks(&[line.as_bytes()], &Limits::default());
        let want: Vec<Vec<u8>> = words.iter().map(|w| w.as_bytes().to_vec()).collect();
        prop_assert_eq!(out, Outcome { commands: vec![want], error: None, leftover: 0 });
    }

    /// Noise never panics, and splitting it never changes the commands or
    /// the error (too-big errors aside: they depend on what was buffered).
    #[test]
    fn noise_is_split_invariant(
        bytes in vec(prop::sample::select(b"*$-0129\r\n \"'\\xaZ\0".to_vec()), 0..200),
        points in vec(any::<usize>(), 0..10),
        unauthenticated in any::<bool>(),
    ) {
        let limits = Limits { max_inline_len: 32, max_bulk_len: 20, unauthenticated, ..Limits::default() };
        let whole = feed_chunks(&[&bytes], &limits);
        let split = feed_chunks(&cut(&bytes, &points), &limits);
        let too_big = |o: &Outcome| matches!(o.error, Some(ProtocolError::TooBigInlineRequest | ProtocolError::TooBigBulkCountString | ProtocolError::TooBigMbulkCountString));
        if !too_big(&whole) && !too_big(&split) {
            prop_assert_eq!(&whole.commands, &split.commands);
            prop_assert_eq!(whole.error, split.error);
        }
    }

    #[test]
    fn replies_parse_back(r in reply(), resp3 in any::<bool>()) {
        let proto = if resp3 { Protocol::Resp3 } else { Protocol::Resp2 };
        let mut out = ReplyBuf::new(proto);
        write(&r, &mut out);
        let (v, n) = parse_value(out.as_bytes()).unwrap().unwrap();
        prop_assert_eq!(n, out.len());
        prop_assert_eq!(v, expect(&r, proto));
    }

    #[test]
    fn double_text_round_trips(x in any::<f64>()) {
        let text = String::from_utf8(format_double_like_redis(x)).unwrap();
        let back: f64 = text.parse().unwrap();
        if x.is_nan() {
            prop_assert!(back.is_nan());
        } else {
            prop_assert_eq!(back.to_bits(), x.to_bits());
        }
    }
}
