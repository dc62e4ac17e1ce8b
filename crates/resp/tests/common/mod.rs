#![allow(dead_code)]

use resp::{Limits, ProtocolError, RequestParser};

/// What a stream of bytes turned into: the commands parsed (empty ones
/// included, as empty vectors), the error that stopped parsing if any, and
/// how many bytes were left unconsumed.
#[derive(Debug, PartialEq, Eq)]
pub struct Outcome {
    pub commands: Vec<Vec<Vec<u8>>>,
    pub error: Option<ProtocolError>,
    pub leftover: usize,
}

/// Feeds `input` to a parser in the given chunks, the way a server would:
/// one growing buffer, commands dropped from its front as they complete.
pub fn feed_chunks(chunks: &[&[u8]], limits: &Limits) -> Outcome {
    let mut parser = RequestParser::new();
    let mut buf: Vec<u8> = Vec::new();
    let mut args = Vec::new();
    let mut commands = Vec::new();
    for chunk in chunks {
        buf.extend_from_slice(chunk);
        loop {
            match parser.parse(&buf, limits, &mut args) {
                Ok(Some(p)) => {
                    assert!(p.consumed > 0 && p.consumed <= buf.len());
                    let base = parser.base(&buf, &p);
                    commands.push(args.iter().map(|&(s, e)| base[s..e].to_vec()).collect());
                    buf.drain(..p.consumed);
                }
                Ok(None) => break,
                Err(e) => {
                    return Outcome {
                        commands,
                        error: Some(e),
                        leftover: buf.len(),
                    }
                }
            }
        }
    }
    Outcome {
        commands,
        error: None,
        leftover: buf.len(),
    }
}

pub fn feed(input: &[u8]) -> Outcome {
    feed_chunks(&[input], &Limits::default())
}

pub fn feed_with(input: &[u8], limits: &Limits) -> Outcome {
    feed_chunks(&[input], limits)
}

/// Feeds `input` one byte at a time.
pub fn feed_bytewise(input: &[u8], limits: &Limits) -> Outcome {
    let chunks: Vec<&[u8]> = input.chunks(1).collect();
    feed_chunks(&chunks, limits)
}

pub fn cmd(args: &[&str]) -> Vec<Vec<u8>> {
    args.iter().map(|a| a.as_bytes().to_vec()).collect()
}
