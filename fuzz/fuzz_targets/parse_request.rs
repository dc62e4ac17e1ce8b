//! Feeds arbitrary bytes through `resp::RequestParser`.
//!
//! Input layout: byte 0 picks the limits (small inline/bulk limits so the
//! "too big" and "invalid" paths are reachable with short inputs, and the
//! unauthenticated flag), bytes 1..3 seed the chunk sizes, the rest is the
//! byte stream a client sends.
//!
//! Checked for every input:
//! * no panic (debug assertions inside the parser are on: cargo fuzz builds
//!   with `-Cdebug-assertions`);
//! * every `Ok(Some(p))` makes progress (`p.consumed > 0`) and stays inside
//!   the buffer; every argument range lies inside the buffer it indexes;
//! * feeding the stream in random chunks (a server's reads) gives the same
//!   commands, error (and unparsed leftover when there is no error) as
//!   feeding it whole, except when a
//!   "too big" error is involved (that one depends on what was buffered,
//!   as in Redis);
//! * every command parsed re-encodes as a multibulk request that parses
//!   back to the same arguments.
#![no_main]

use libfuzzer_sys::fuzz_target;
use resp::{encode_command, ArgsIn, Limits, ProtocolError, RequestParser};

#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    commands: Vec<Vec<Vec<u8>>>,
    error: Option<ProtocolError>,
    leftover: usize,
}

fn is_too_big(e: &Option<ProtocolError>) -> bool {
    matches!(
        e,
        Some(
            ProtocolError::TooBigInlineRequest
                | ProtocolError::TooBigMbulkCountString
                | ProtocolError::TooBigBulkCountString
        )
    )
}

/// Parses everything available in `buf`, draining completed commands.
fn drain(
    parser: &mut RequestParser,
    buf: &mut Vec<u8>,
    limits: &Limits,
    args: &mut Vec<(usize, usize)>,
    commands: &mut Vec<Vec<Vec<u8>>>,
) -> Result<(), ProtocolError> {
    loop {
        match parser.parse(buf, limits, args)? {
            Some(p) => {
                assert!(p.consumed > 0, "no progress");
                assert!(p.consumed <= buf.len(), "consumed past the buffer");
                let base = parser.base(buf, &p);
                for &(s, e) in args.iter() {
                    assert!(s <= e && e <= base.len(), "range out of bounds");
                    if p.args_in == ArgsIn::Input {
                        assert!(e <= p.consumed, "argument past the command");
                    }
                }
                commands.push(args.iter().map(|&(s, e)| base[s..e].to_vec()).collect());
                buf.drain(..p.consumed);
            }
            None => {
                if let Some(n) = parser.pending_bulk_len() {
                    assert!(n > 0);
                }
                return Ok(());
            }
        }
    }
}

fn run(chunks: &[&[u8]], limits: &Limits) -> Outcome {
    let mut parser = RequestParser::new();
    let mut buf = Vec::new();
    let mut args = Vec::new();
    let mut commands = Vec::new();
    for chunk in chunks {
        buf.extend_from_slice(chunk);
        if let Err(e) = drain(&mut parser, &mut buf, limits, &mut args, &mut commands) {
            return Outcome {
                commands,
                error: Some(e),
                leftover: buf.len(),
            };
        }
    }
    Outcome {
        commands,
        error: None,
        leftover: buf.len(),
    }
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 3 {
        return;
    }
    let mode = data[0];
    let mut seed = u16::from_le_bytes([data[1], data[2]]) as u32 | 1;
    let stream = &data[3..];
    let limits = Limits {
        max_inline_len: if mode & 1 != 0 {
            16 + (mode as usize >> 3)
        } else {
            64 * 1024
        },
        max_bulk_len: if mode & 2 != 0 {
            (mode as usize >> 2) & 31
        } else {
            512 << 20
        },
        max_multibulk_len: if mode & 2 != 0 { 4 } else { i32::MAX as usize },
        unauthenticated: mode & 4 != 0,
    };

    let whole = run(&[stream], &limits);

    // Random chunking, as a server's reads would cut the stream.
    let mut chunks = Vec::new();
    let mut rest = stream;
    while !rest.is_empty() {
        seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        let n = (((seed >> 16) as usize) % 8 + 1).min(rest.len());
        chunks.push(&rest[..n]);
        rest = &rest[n..];
    }
    let chunked = run(&chunks, &limits);
    if !is_too_big(&whole.error) && !is_too_big(&chunked.error) {
        assert_eq!(
            whole.commands, chunked.commands,
            "chunking changed the commands"
        );
        assert_eq!(whole.error, chunked.error, "chunking changed the error");
        if whole.error.is_none() {
            // (After an error the leftover depends on what had arrived.)
            assert_eq!(whole.leftover, chunked.leftover);
        }
    }

    // Round trip: re-encode each command as multibulk and parse it back.
    let roomy = Limits::default();
    for command in whole.commands.iter().filter(|c| !c.is_empty()) {
        let wire = encode_command(command);
        let mut parser = RequestParser::new();
        let mut args = Vec::new();
        let p = parser
            .parse(&wire, &roomy, &mut args)
            .expect("re-encoded command parses")
            .expect("re-encoded command is complete");
        assert_eq!(p.consumed, wire.len());
        assert_eq!(p.args_in, ArgsIn::Input);
        let back: Vec<Vec<u8>> = args.iter().map(|&(s, e)| wire[s..e].to_vec()).collect();
        assert_eq!(&back, command);
    }
});
