//! Reads lines `current increment` from stdin and prints what Redis's
//! `INCRBYFLOAT` would reply (`ERR` for an unparsable number, `NANINF` for a
//! NaN or infinite result). Used to compare `LongDouble` with a C program
//! using the machine's `long double` and with a real redis-server.
//!
//! `cargo run --release -p resp --example incrbyfloat < pairs.txt`

use std::io::{BufRead, Write};

use resp::LongDouble;

fn main() {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for line in stdin.lock().lines() {
        let line = line.expect("stdin");
        let mut parts = line.split_whitespace();
        let (Some(a), Some(b)) = (parts.next(), parts.next()) else {
            continue;
        };
        let reply = match (
            LongDouble::parse(a.as_bytes()),
            LongDouble::parse(b.as_bytes()),
        ) {
            (Some(x), Some(y)) => {
                let v = x + y;
                if v.is_nan_or_inf() {
                    b"NANINF".to_vec()
                } else {
                    v.format_human().expect("finite")
                }
            }
            _ => b"ERR".to_vec(),
        };
        out.write_all(&reply).unwrap();
        out.write_all(b"\n").unwrap();
    }
}
