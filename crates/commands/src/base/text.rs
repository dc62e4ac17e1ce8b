//! Text shaping for replies and logs: Redis's quoted `sdscatrepr` form,
//! one-line argument excerpts for error messages, random hex ids.

use std::fmt::Write as _;

/// Quoted representation like Redis's `sdscatrepr`.
pub fn repr(a: &[u8]) -> String {
    let mut s = String::with_capacity(a.len() + 2);
    s.push('"');
    for &b in a {
        match b {
            b'\\' => s.push_str("\\\\"),
            b'"' => s.push_str("\\\""),
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            b'\t' => s.push_str("\\t"),
            7 => s.push_str("\\a"),
            8 => s.push_str("\\b"),
            b if b.is_ascii_graphic() || b == b' ' => s.push(b as char),
            b => {
                let _ = write!(s, "\\x{b:02x}");
            }
        }
    }
    s.push('"');
    s
}

/// Argument text for error messages: at most `max` bytes, lossy UTF-8.
/// Redis also replaces spaces and newlines so the error stays one line.
pub fn sanitize(a: &[u8], max: usize) -> String {
    let cut = &a[..a.len().min(max)];
    String::from_utf8_lossy(cut)
        .chars()
        .map(|c| if c == '\r' || c == '\n' { ' ' } else { c })
        .collect()
}

/// Random lowercase hex string (run_id), from the OS random source.
pub fn random_hex(n: usize) -> String {
    let mut bytes = vec![0u8; n / 2 + 1];
    if let Ok(mut f) = std::fs::File::open("/dev/urandom") {
        use std::io::Read;
        let _ = f.read_exact(&mut bytes);
    }
    let mut s: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    s.truncate(n);
    s
}

/// Compares two secrets in time that does not depend on where they differ
/// or on their lengths (both are hashed first, as Redis compares password
/// hashes), so a client cannot find a password byte by byte by timing AUTH.
pub fn same_secret(a: &[u8], b: &[u8]) -> bool {
    let ha = sha1_smol::Sha1::from(a).digest().bytes();
    let hb = sha1_smol::Sha1::from(b).digest().bytes();
    let diff = ha
        .iter()
        .zip(hb.iter())
        .fold(0u8, |acc, (x, y)| acc | (x ^ y));
    // Equal digests of different inputs would need a SHA-1 collision; the
    // length check only settles that case and runs after the hashing.
    diff == 0 && a.len() == b.len()
}

/// An I/O error as C's `strerror` words it ("No such file or directory"),
/// without Rust's " (os error N)" suffix.
pub fn os_error_text(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}
