//! Load errors: what went wrong, where (byte offset from the start of the
//! file or payload), and for which key when one was being read.
//!
//! Every failure of the reader is one of these; no input makes it panic.
//! Nothing half-built escapes: values are built completely before they are
//! handed out, so a caller that drops what it loaded so far on `Err` keeps
//! nothing of a broken input.

use std::fmt;

/// What went wrong.
#[derive(Debug)]
pub enum ErrorKind {
    /// The underlying reader failed.
    Io(std::io::Error),
    /// The input ended while `expected` was being read.
    Truncated { expected: &'static str },
    /// The bytes do not follow the format; the text says what was expected
    /// and what was found.
    Corrupt(String),
    /// The input does not start with `REDIS`.
    Signature,
    /// A file version outside 1..=12 (Redis 7.0 itself loads 1..=10).
    Version(u32),
    /// A record this codec recognises but Petrel cannot hold (yet):
    /// modules, functions, hash field expiry. `code` is the type or opcode.
    Unsupported { code: u8, what: String },
    /// The stored CRC64 differs from the one computed over the input.
    Checksum { stored: u64, computed: u64 },
}

/// A load error at a byte offset, naming the key when one was being read.
#[derive(Debug)]
pub struct Error {
    pub kind: ErrorKind,
    /// Offset of the byte where the problem was found (or of the start of
    /// the record that is wrong).
    pub offset: u64,
    /// The key whose value was being read, if any.
    pub key: Option<Vec<u8>>,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn new(kind: ErrorKind, offset: u64) -> Error {
        Error {
            kind,
            offset,
            key: None,
        }
    }

    pub(crate) fn corrupt(offset: u64, msg: impl Into<String>) -> Error {
        Error::new(ErrorKind::Corrupt(msg.into()), offset)
    }

    /// Attach `key` unless a key is already named.
    pub(crate) fn with_key(mut self, key: &[u8]) -> Error {
        if self.key.is_none() {
            self.key = Some(key.to_vec());
        }
        self
    }

    /// True when the input simply ended early.
    pub fn is_truncated(&self) -> bool {
        matches!(self.kind, ErrorKind::Truncated { .. })
    }
}

/// `key` for a message: printable ASCII as is, other bytes as `\xNN`, cut
/// after 128 bytes.
pub fn printable(key: &[u8]) -> String {
    let mut s = String::new();
    for &b in key.iter().take(128) {
        if (0x20..0x7f).contains(&b) && b != b'\\' && b != b'\'' {
            s.push(b as char);
        } else {
            s.push_str(&format!("\\x{b:02x}"));
        }
    }
    if key.len() > 128 {
        s.push_str("...");
    }
    s
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::Io(e) => write!(f, "read error: {e}"),
            ErrorKind::Truncated { expected } => {
                write!(f, "unexpected end of input, expected {expected}")
            }
            ErrorKind::Corrupt(m) => write!(f, "corrupt data: {m}"),
            ErrorKind::Signature => write!(f, "wrong signature, expected \"REDIS\""),
            ErrorKind::Version(v) => write!(f, "can't handle RDB format version {v}"),
            ErrorKind::Unsupported { what, .. } => write!(f, "{what}"),
            ErrorKind::Checksum { stored, computed } => write!(
                f,
                "wrong RDB checksum: stored {stored:016x}, computed {computed:016x}"
            ),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at offset {}", self.kind, self.offset)?;
        if let Some(k) = &self.key {
            write!(f, " (key '{}')", printable(k))?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ErrorKind::Io(e) => Some(e),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_names_offset_and_key() {
        let e = Error::new(
            ErrorKind::Truncated {
                expected: "a length",
            },
            42,
        )
        .with_key(b"k\x00'y");
        assert_eq!(
            e.to_string(),
            "unexpected end of input, expected a length at offset 42 (key 'k\\x00\\x27y')"
        );
        assert!(e.is_truncated());
    }
}
