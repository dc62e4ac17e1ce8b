//! Request parser behaviour. Every expectation about accepted/rejected input
//! and every error text was checked against a real redis-server 7.0.15 (see
//! crates/resp/README.md for how).

mod common;

use common::{cmd, feed, feed_bytewise, feed_chunks, feed_with, Outcome};
use resp::{ArgsIn, Limits, ProtocolError, RequestParser};

fn ok(cmds: Vec<Vec<Vec<u8>>>) -> Outcome {
    Outcome {
        commands: cmds,
        error: None,
        leftover: 0,
    }
}

fn err_text(input: &[u8]) -> String {
    let out = feed(input);
    String::from_utf8_lossy(&out.error.expect("an error").message()).into_owned()
}

/// Every way of cutting `input` in two, and byte-at-a-time, gives the same
/// outcome as feeding it whole.
fn assert_split_invariant(input: &[u8], limits: &Limits) -> Outcome {
    let whole = feed_with(input, limits);
    for cut in 0..=input.len() {
        let split = feed_chunks(&[&input[..cut], &input[cut..]], limits);
        assert_eq!(
            split,
            whole,
            "cut at {cut} of {:?}",
            String::from_utf8_lossy(input)
        );
    }
    assert_eq!(feed_bytewise(input, limits), whole);
    whole
}

#[test]
fn multibulk_basic_and_pipelined() {
    assert_eq!(feed(b"*1\r\n$4\r\nPING\r\n"), ok(vec![cmd(&["PING"])]));
    let pipeline = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhello\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n*1\r\n$0\r\n\r\n";
    let out = assert_split_invariant(pipeline, &Limits::default());
    assert_eq!(
        out,
        ok(vec![
            cmd(&["SET", "k", "hello"]),
            cmd(&["GET", "k"]),
            cmd(&[""])
        ])
    );
}

#[test]
fn binary_safe_bulks() {
    let out = feed(b"*2\r\n$4\r\na\r\nb\r\n$3\r\n\0\0\0\r\n");
    assert_eq!(out, ok(vec![vec![b"a\r\nb".to_vec(), b"\0\0\0".to_vec()]]));
}

#[test]
fn incomplete_keeps_state_and_reports_pending_bulk() {
    let mut p = RequestParser::new();
    let limits = Limits::default();
    let mut args = vec![(99, 99)];
    let full = b"*2\r\n$3\r\nGET\r\n$10\r\n0123456789\r\n";
    assert_eq!(p.parse(&full[..19], &limits, &mut args), Ok(None));
    assert_eq!(args, vec![(99, 99)], "args untouched while incomplete");
    // "$10\r\n" parsed, 1 data byte present: 11 more needed (9 data + CRLF).
    assert_eq!(p.pending_bulk_len(), Some(11));
    assert_eq!(p.current_bulk_len(), Some(10));
    assert_eq!(p.position(), 18);
    let r = p.parse(full, &limits, &mut args).unwrap().unwrap();
    assert_eq!(r.consumed, full.len());
    assert_eq!(r.args_in, ArgsIn::Input);
    assert_eq!(args, vec![(8, 11), (18, 28)]);
    assert_eq!(p.pending_bulk_len(), None);
    assert!(p.is_idle());
}

#[test]
fn buffer_may_move_between_calls() {
    let full = b"*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n".to_vec();
    let mut p = RequestParser::new();
    let limits = Limits::default();
    let mut args = Vec::new();
    let first = full[..10].to_vec();
    assert_eq!(p.parse(&first, &limits, &mut args), Ok(None));
    let moved = full.clone();
    let r = p.parse(&moved, &limits, &mut args).unwrap().unwrap();
    assert_eq!(r.consumed, full.len());
    assert_eq!(&moved[args[1].0..args[1].1], b"key");
}

#[test]
fn empty_multibulk_is_skipped_like_redis() {
    // Redis: "*0\r\n*-1\r\n*-5\r\nPING\r\n" -> +PONG only.
    let out = assert_split_invariant(b"*0\r\n*-1\r\n*-5\r\nPING\r\n", &Limits::default());
    assert_eq!(out, ok(vec![vec![], vec![], vec![], cmd(&["PING"])]));
}

#[test]
fn count_line_quirks() {
    // Only '\r' is looked for; the byte after it is skipped unchecked.
    assert_eq!(feed(b"*1\r\r$4\r\nPING\r\n"), ok(vec![cmd(&["PING"])]));
    // The two bytes after bulk data are skipped unchecked.
    assert_eq!(
        feed(b"*1\r\n$4\r\nPINGxx*1\r\n$4\r\nPING\r\n"),
        ok(vec![cmd(&["PING"]), cmd(&["PING"])])
    );
}

#[test]
fn invalid_multibulk_length() {
    for input in [
        &b"*-0\r\n"[..],
        b"*00\r\n",
        b"*+1\r\n",
        b"*\r\n",
        b"*x\r\n",
        b"* 1\r\n",
        b"*1 \r\n",
        b"*2147483648\r\n",
        b"*99999999999999999999\r\n",
        b"*111111111111111111111\r\n",
    ] {
        assert_eq!(
            err_text(input),
            "Protocol error: invalid multibulk length",
            "{:?}",
            String::from_utf8_lossy(input)
        );
    }
    // INT_MAX itself is accepted (Redis waits for the bulks).
    assert_eq!(feed(b"*2147483647\r\n").error, None);
    assert_eq!(feed(b"*1048577\r\n").error, None);
    let small = Limits {
        max_multibulk_len: 3,
        ..Limits::default()
    };
    assert_eq!(
        feed_with(b"*4\r\n", &small).error,
        Some(ProtocolError::InvalidMultibulkLength)
    );
}

#[test]
fn invalid_bulk_length() {
    for input in [
        &b"*1\r\n$-1\r\n"[..],
        b"*1\r\n$\r\n",
        b"*1\r\n$01\r\n",
        b"*1\r\n$x\r\n",
        b"*1\r\n$536870913\r\n",
        b"*1\r\n$999999999999\r\n",
        b"*1\r\n$11111111111111111111\r\n",
    ] {
        assert_eq!(
            err_text(input),
            "Protocol error: invalid bulk length",
            "{:?}",
            String::from_utf8_lossy(input)
        );
    }
    // proto-max-bulk-len itself is fine.
    assert_eq!(feed(b"*1\r\n$536870912\r\n").error, None);
}

#[test]
fn expected_dollar() {
    assert_eq!(
        err_text(b"*1\r\nx4\r\n"),
        "Protocol error: expected '$', got 'x'"
    );
    // Redis maps \r and \n in error texts to spaces.
    assert_eq!(
        err_text(b"*1\r\n\r\n"),
        "Protocol error: expected '$', got ' '"
    );
    assert_eq!(
        err_text(b"*1\r\n\n\r\n"),
        "Protocol error: expected '$', got ' '"
    );
    // Other bytes go out raw.
    let e = feed(b"*1\r\n\xff4\r\n").error.unwrap();
    assert_eq!(e, ProtocolError::ExpectedDollar(0xff));
    assert_eq!(e.message(), b"Protocol error: expected '$', got '\xff'");
    assert_eq!(
        e.to_reply(),
        b"-ERR Protocol error: expected '$', got '\xff'\r\n"
    );
    // Commands before the bad one were parsed.
    let out = feed(b"*1\r\n$4\r\nPING\r\n*2\r\n$3\r\nGET\r\n:1\r\n");
    assert_eq!(out.commands, vec![cmd(&["PING"])]);
    assert_eq!(out.error, Some(ProtocolError::ExpectedDollar(b':')));
}

#[test]
fn too_big_count_strings() {
    // 64 KiB without '\r' is still fine; one more byte is not.
    let mut input = b"*".to_vec();
    input.extend(std::iter::repeat_n(b'1', 65535));
    assert_eq!(feed(&input).error, None);
    input.push(b'1');
    assert_eq!(
        err_text(&input),
        "Protocol error: too big mbulk count string"
    );

    let mut input = b"*1\r\n$".to_vec();
    input.extend(std::iter::repeat_n(b'1', 65535));
    assert_eq!(feed(&input).error, None);
    input.push(b'1');
    assert_eq!(
        err_text(&input),
        "Protocol error: too big bulk count string"
    );

    // Redis counts everything buffered after the line start.
    let mut input = b"*1\r\n$4\r\nPING\r\n*1\r\n$".to_vec();
    input.extend(std::iter::repeat_n(b'1', 65536));
    let out = feed(&input);
    assert_eq!(out.commands, vec![cmd(&["PING"])]);
    assert_eq!(out.error, Some(ProtocolError::TooBigBulkCountString));

    // A terminator already buffered: the number itself is rejected.
    let mut input = b"*1".to_vec();
    input.extend(std::iter::repeat_n(b'x', 70000));
    input.extend_from_slice(b"\r\n");
    assert_eq!(err_text(&input), "Protocol error: invalid multibulk length");
}

#[test]
fn too_big_inline() {
    let input = vec![b'a'; 65536];
    assert_eq!(feed(&input).error, None);
    let input = vec![b'a'; 65537];
    assert_eq!(err_text(&input), "Protocol error: too big inline request");
    let small = Limits {
        max_inline_len: 8,
        ..Limits::default()
    };
    assert_eq!(
        feed_with(b"PING PING", &small).error,
        Some(ProtocolError::TooBigInlineRequest)
    );
    assert_eq!(feed_with(b"PING\r\n", &small), ok(vec![cmd(&["PING"])]));
}

#[test]
fn nul_hides_terminators_like_strchr() {
    // Redis never answers these (strchr stops at the NUL) ...
    for input in [
        &b"*1\0\r\n$4\r\nPING\r\n"[..],
        b"PI\0NG\r\n",
        b"*1\r\n$4\0\r\nPING\r\n",
    ] {
        let out = assert_split_invariant(input, &Limits::default());
        assert_eq!(out.commands, Vec::<Vec<Vec<u8>>>::new());
        assert_eq!(out.error, None);
        assert_eq!(out.leftover, input.len());
    }
    // ... until more than 64 KiB are buffered.
    let mut input = b"PI\0NG\r\n".to_vec();
    input.resize(65537, b'x');
    assert_eq!(feed(&input).error, Some(ProtocolError::TooBigInlineRequest));
    let mut input = b"*1\0\r\n".to_vec();
    input.resize(65537, b'\n');
    assert_eq!(
        feed(&input).error,
        Some(ProtocolError::TooBigMbulkCountString)
    );
}

#[test]
fn unauthenticated_limits() {
    let unauth = Limits {
        unauthenticated: true,
        ..Limits::default()
    };
    let e = feed_with(b"*11\r\n", &unauth).error.unwrap();
    assert_eq!(
        e.to_reply(),
        b"-ERR Protocol error: unauthenticated multibulk length\r\n"
    );
    assert_eq!(feed_with(b"*10\r\n", &unauth).error, None);
    let e = feed_with(b"*1\r\n$16385\r\n", &unauth).error.unwrap();
    assert_eq!(
        e.to_reply(),
        b"-ERR Protocol error: unauthenticated bulk length\r\n"
    );
    assert_eq!(feed_with(b"*1\r\n$16384\r\n", &unauth).error, None);
    // Invalid lengths are reported as invalid first.
    assert_eq!(
        feed_with(b"*2147483648\r\n", &unauth).error,
        Some(ProtocolError::InvalidMultibulkLength)
    );
    assert_eq!(
        feed_with(b"*1\r\n$-1\r\n", &unauth).error,
        Some(ProtocolError::InvalidBulkLength)
    );
    // Inline commands have no such limit.
    let mut line = b"GET ".to_vec();
    line.extend(std::iter::repeat_n(b'a', 20000));
    line.extend_from_slice(b"\r\n");
    assert_eq!(feed_with(&line, &unauth).commands.len(), 1);
}

#[test]
fn inline_commands() {
    // Blank lines (CRLF, LF, spaces) are empty commands; LF alone ends a line.
    let out = assert_split_invariant(b"\r\n\n   \r\nPING\n", &Limits::default());
    assert_eq!(out, ok(vec![vec![], vec![], vec![], cmd(&["PING"])]));
    // Only one \r before the \n belongs to the terminator; the other is a blank.
    assert_eq!(feed(b"PING\r\r\n"), ok(vec![cmd(&["PING"])]));
    assert_eq!(feed(b"ECHO a\rb\n"), ok(vec![cmd(&["ECHO", "a", "b"])]));
    assert_eq!(
        feed(b"  SET  key\tvalue  \r\n"),
        ok(vec![cmd(&["SET", "key", "value"])])
    );
    // \v and \f are skipped between arguments but do not end one.
    assert_eq!(feed(b"ECHO \x0bx\r\n"), ok(vec![cmd(&["ECHO", "x"])]));
    assert_eq!(feed(b"ECHO a\x0bx\r\n"), ok(vec![cmd(&["ECHO", "a\x0bx"])]));
    // Inline and multibulk mixed in one pipeline.
    assert_eq!(
        feed(b"PING\r\n*1\r\n$4\r\nPING\r\nECHO x\n"),
        ok(vec![cmd(&["PING"]), cmd(&["PING"]), cmd(&["ECHO", "x"])])
    );
}

#[test]
fn inline_quoting() {
    let cases: &[(&[u8], &[&[u8]])] = &[
        (b"ECHO \"\\x41\\n\\q\"\r\n", &[b"ECHO", b"A\nq"]),
        (b"ECHO a\"b c\"\r\n", &[b"ECHO", b"ab c"]),
        (b"ECHO 'a\\'b'\r\n", &[b"ECHO", b"a'b"]),
        (b"ECHO 'a\\nb'\r\n", &[b"ECHO", b"a\\nb"]),
        (b"SET \"\" ''\r\n", &[b"SET", b"", b""]),
        (
            b"ECHO \"\\r\\t\\b\\a\\\\\\\"\"\r\n",
            &[b"ECHO", b"\r\t\x08\x07\\\""],
        ),
        (b"ECHO \"\\x4\"\r\n", &[b"ECHO", b"x4"]),
        (b"ECHO \"\\xZZ\"\r\n", &[b"ECHO", b"xZZ"]),
        (b"ECHO \"\\xff\\x00\"\r\n", &[b"ECHO", b"\xff\x00"]),
        (b"ECHO \"a b\"\x0b\r\n", &[b"ECHO", b"a b"]),
        (b"ECHO \"a\r\nb\"\r\n", &[b"ECHO", b"a", b"b\""]),
    ];
    for (input, want) in cases {
        if input == b"ECHO \"a\r\nb\"\r\n" {
            // The first line is cut at its \n: unbalanced.
            assert_eq!(feed(input).error, Some(ProtocolError::UnbalancedQuotes));
            continue;
        }
        let want: Vec<Vec<u8>> = want.iter().map(|a| a.to_vec()).collect();
        let out = assert_split_invariant(input, &Limits::default());
        assert_eq!(out, ok(vec![want]), "{:?}", String::from_utf8_lossy(input));
    }
}

#[test]
fn inline_unbalanced_quotes() {
    for input in [
        &b"ECHO \"a\"b\r\n"[..],
        b"ECHO \"a\r\n",
        b"ECHO 'a\r\n",
        b"ECHO 'a'b\r\n",
        b"ECHO \"a\\\"\r\n",
        b"ECHO \"\\\r\n",
    ] {
        assert_eq!(
            err_text(input),
            "Protocol error: unbalanced quotes in request",
            "{:?}",
            String::from_utf8_lossy(input)
        );
    }
}

#[test]
fn inline_args_zero_copy_unless_unescaped() {
    let limits = Limits::default();
    let mut p = RequestParser::new();
    let mut args = Vec::new();
    let buf = b"SET \"k\" v\r\n";
    let r = p.parse(buf, &limits, &mut args).unwrap().unwrap();
    assert_eq!(r.args_in, ArgsIn::Input);
    assert_eq!(args, vec![(0, 3), (5, 6), (8, 9)]);
    let buf = b"SET k \"a\\x41\" x\r\n";
    let r = p.parse(buf, &limits, &mut args).unwrap().unwrap();
    assert_eq!(r.args_in, ArgsIn::Scratch);
    let base = p.base(buf, &r);
    let got: Vec<&[u8]> = args.iter().map(|&(s, e)| &base[s..e]).collect();
    assert_eq!(got, vec![&b"SET"[..], b"k", b"aA", b"x"]);
}

#[test]
fn error_texts_and_log_reasons() {
    let all = [
        (
            ProtocolError::TooBigInlineRequest,
            "Protocol error: too big inline request",
            "too big inline request",
        ),
        (
            ProtocolError::UnbalancedQuotes,
            "Protocol error: unbalanced quotes in request",
            "unbalanced quotes in inline request",
        ),
        (
            ProtocolError::TooBigMbulkCountString,
            "Protocol error: too big mbulk count string",
            "too big mbulk count string",
        ),
        (
            ProtocolError::InvalidMultibulkLength,
            "Protocol error: invalid multibulk length",
            "invalid mbulk count",
        ),
        (
            ProtocolError::UnauthenticatedMultibulkLength,
            "Protocol error: unauthenticated multibulk length",
            "unauth mbulk count",
        ),
        (
            ProtocolError::TooBigBulkCountString,
            "Protocol error: too big bulk count string",
            "too big bulk count string",
        ),
        (
            ProtocolError::ExpectedDollar(b'x'),
            "Protocol error: expected '$', got 'x'",
            "expected $ but got something else",
        ),
        (
            ProtocolError::InvalidBulkLength,
            "Protocol error: invalid bulk length",
            "invalid bulk length",
        ),
        (
            ProtocolError::UnauthenticatedBulkLength,
            "Protocol error: unauthenticated bulk length",
            "unauth bulk length",
        ),
    ];
    for (e, text, reason) in all {
        assert_eq!(e.to_string(), text);
        assert_eq!(e.to_reply(), format!("-ERR {text}\r\n").into_bytes());
        assert_eq!(e.log_reason(), reason);
    }
}

#[test]
fn reset_after_error_and_partial() {
    let limits = Limits::default();
    let mut p = RequestParser::new();
    let mut args = Vec::new();
    assert!(p.parse(b"*1\r\n$x\r\n", &limits, &mut args).is_err());
    p.reset();
    assert_eq!(p.parse(b"*1\r\n$4\r\nPI", &limits, &mut args), Ok(None));
    p.reset();
    assert!(p.is_idle());
    let r = p.parse(b"PING\r\n", &limits, &mut args).unwrap().unwrap();
    assert_eq!(r.consumed, 6);
}

#[test]
fn every_split_of_a_mixed_stream() {
    let stream: &[u8] = b"*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$7\r\nva\r\nlue\r\n\
\r\nGET \"key\"\r\n*0\r\nSET 'a b' \"c\\x41\"\n*2\r\n$4\r\nECHO\r\n$0\r\n\r\n";
    let out = assert_split_invariant(stream, &Limits::default());
    assert_eq!(
        out,
        ok(vec![
            cmd(&["SET", "key", "va\r\nlue"]),
            vec![],
            cmd(&["GET", "key"]),
            vec![],
            cmd(&["SET", "a b", "cA"]),
            cmd(&["ECHO", ""]),
        ])
    );
    // And every split of every error case.
    for input in [
        &b"*1\r\nx4\r\n"[..],
        b"*-0\r\n",
        b"*1\r\n$-1\r\n",
        b"ECHO \"a\r\n",
        b"PING\r\n*1\r\n$1\r\nab\r\n*x\r\n",
    ] {
        let out = assert_split_invariant(input, &Limits::default());
        assert!(out.error.is_some());
    }
}

#[test]
fn huge_bulk_in_pieces_is_not_rescanned() {
    let limits = Limits::default();
    let mut p = RequestParser::new();
    let mut args = Vec::new();
    let mut buf = b"*2\r\n$3\r\nSET\r\n$1000000\r\n".to_vec();
    let header = buf.len();
    assert_eq!(p.parse(&buf, &limits, &mut args), Ok(None));
    assert_eq!(p.pending_bulk_len(), Some(1_000_002));
    for i in 0..1000 {
        buf.extend(std::iter::repeat_n(b'a', 1000));
        assert_eq!(p.parse(&buf, &limits, &mut args), Ok(None));
        assert_eq!(p.pending_bulk_len(), Some(1_000_002 - (i + 1) * 1000));
    }
    buf.extend_from_slice(b"\r\n");
    let r = p.parse(&buf, &limits, &mut args).unwrap().unwrap();
    assert_eq!(r.consumed, buf.len());
    assert_eq!(args[1], (header, header + 1_000_000));
}

/// A command with many arguments grows the parser's argument vector;
/// `shrink_buffers` gives the room back, between commands and in the
/// middle of one (the ranges gathered so far are kept), and parsing goes
/// on as before.
#[test]
fn shrink_buffers_after_a_large_command() {
    let limits = Limits::default();
    let mut p = RequestParser::new();
    let mut args = Vec::new();
    let mut big = b"*10001\r\n$4\r\nSADD\r\n".to_vec();
    for i in 0..10_000 {
        let m = format!("m{i}");
        big.extend_from_slice(format!("${}\r\n{m}\r\n", m.len()).as_bytes());
    }
    let parsed = p.parse(&big, &limits, &mut args).unwrap().unwrap();
    assert_eq!((parsed.consumed, args.len()), (big.len(), 10_001));
    // The next command swaps vectors: the parser keeps the big one.
    let ping = b"*1\r\n$4\r\nPING\r\n";
    p.parse(ping, &limits, &mut args).unwrap().unwrap();
    assert!(p.args_capacity() >= 10_001);
    p.shrink_buffers(8);
    assert!(p.args_capacity() <= 8, "{}", p.args_capacity());
    // Shrinking halfway through a command keeps what it gathered.
    let half = &big[..big.len() / 2];
    assert!(p.parse(half, &limits, &mut args).unwrap().is_none());
    p.shrink_buffers(8);
    let parsed = p.parse(&big, &limits, &mut args).unwrap().unwrap();
    assert_eq!((parsed.consumed, args.len()), (big.len(), 10_001));
    assert_eq!(&big[args[10_000].0..args[10_000].1], b"m9999");
    // Inline commands with escapes use the scratch buffer, released too.
    let quoted = format!("SET k \"{}\"\r\n", "\\x41".repeat(2000));
    let parsed = p
        .parse(quoted.as_bytes(), &limits, &mut args)
        .unwrap()
        .unwrap();
    assert_eq!(parsed.args_in, ArgsIn::Scratch);
    p.shrink_buffers(8);
    assert!(p.scratch().is_empty());
    p.parse(ping, &limits, &mut args).unwrap().unwrap();
    assert_eq!(args.len(), 1);
}
