//! Reads one request stream per stdin line (hex-encoded) and prints what the
//! parser makes of it: one line per command (`CMD <argc>` + hex args) or the error
//! (`ERR` + message), or `INCOMPLETE`. Used to compare the parser with a
//! real redis-server on generated streams.
//!
//! `cargo run --release -p resp --example parse_stream < streams.hex`

use std::io::{BufRead, Write};

use resp::{Limits, RequestParser};

fn hex(b: &[u8]) -> String {
    b.iter().map(|c| format!("{c:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

fn main() {
    let limits = Limits::default();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for line in std::io::stdin().lock().lines() {
        let input = unhex(line.expect("stdin").trim());
        let mut parser = RequestParser::new();
        let mut args = Vec::new();
        let mut pos = 0;
        let mut results = Vec::new();
        loop {
            match parser.parse(&input[pos..], &limits, &mut args) {
                Ok(Some(p)) => {
                    let base = parser.base(&input[pos..], &p);
                    let parts: Vec<String> = args.iter().map(|&(s, e)| hex(&base[s..e])).collect();
                    results.push(format!("CMD {} {}", parts.len(), parts.join(" ")));
                    pos += p.consumed;
                }
                Ok(None) => {
                    if pos < input.len() {
                        results.push("INCOMPLETE".to_string());
                    }
                    break;
                }
                Err(e) => {
                    results.push(format!("ERR {}", hex(&e.message())));
                    break;
                }
            }
        }
        writeln!(out, "{}", results.join(" | ")).unwrap();
    }
}
