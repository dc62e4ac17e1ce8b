//! FUNCTION DUMP / FUNCTION RESTORE payloads, as Redis 7.0 writes and
//! checks them:
//!
//! ```text
//! (<FUNCTION2 opcode 245> <library code as an RDB string>)* <RDB version u16 LE> <CRC64 LE>
//! ```
//!
//! The footer is checked as DUMP payloads' are ("ERR DUMP payload version
//! or checksum are wrong"); a pre-GA function record (opcode 246) and any
//! other byte in place of an opcode are refused with Redis's texts.

use crate::crc64::crc64;
use crate::dump::verify_payload;
use crate::reader::decode::read_string;
use crate::reader::input::Input;
use crate::types::{OP_FUNCTION2, OP_FUNCTION_PRE_GA, RDB_VERSION};
use crate::writer::encode::write_string;

/// Why FUNCTION RESTORE refused a payload; [`FunctionsError::redis_message`]
/// is the reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FunctionsError {
    /// Short payload, newer version or wrong CRC.
    VersionOrChecksum,
    /// A function record in the pre-GA format.
    PreGa,
    /// A byte that is not a function opcode.
    NotAFunction,
    /// A record that cannot be read (truncated, bad length or LZF).
    Corrupt,
}

impl FunctionsError {
    /// The error text Redis 7.0 replies with (without the `-` prefix).
    pub fn redis_message(self) -> &'static str {
        match self {
            FunctionsError::VersionOrChecksum => "ERR DUMP payload version or checksum are wrong",
            FunctionsError::PreGa => "ERR Pre-GA function format not supported",
            FunctionsError::NotAFunction => "ERR given type is not a function",
            FunctionsError::Corrupt => "ERR Failed loading library",
        }
    }
}

/// The FUNCTION DUMP payload of these library codes (uncompressed strings,
/// as Redis writes them).
pub fn dump_functions(codes: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for code in codes {
        out.push(OP_FUNCTION2);
        write_string(&mut out, code, false).expect("writing to a Vec cannot fail");
    }
    out.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = crc64(0, &out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// The library codes of a FUNCTION RESTORE payload.
pub fn restore_functions(payload: &[u8]) -> Result<Vec<Vec<u8>>, FunctionsError> {
    verify_payload(payload).map_err(|_| FunctionsError::VersionOrChecksum)?;
    let body = &payload[..payload.len() - 10];
    let mut inp = Input::new(body, Some(body.len() as u64), false);
    let mut codes = Vec::new();
    while !inp.at_end().map_err(|_| FunctionsError::Corrupt)? {
        match inp
            .u8("a function opcode")
            .map_err(|_| FunctionsError::Corrupt)?
        {
            OP_FUNCTION2 => codes.push(read_string(&mut inp).map_err(|_| FunctionsError::Corrupt)?),
            OP_FUNCTION_PRE_GA => return Err(FunctionsError::PreGa),
            _ => return Err(FunctionsError::NotAFunction),
        }
    }
    Ok(codes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_refusals() {
        let codes: Vec<&[u8]> = vec![
            b"#!lua name=a\nredis.register_function('f', function() return 1 end)",
            b"",
        ];
        let p = dump_functions(&codes);
        assert_eq!(
            restore_functions(&p).unwrap(),
            codes.iter().map(|c| c.to_vec()).collect::<Vec<_>>()
        );
        let mut bad = p.clone();
        bad[3] ^= 1;
        assert_eq!(
            restore_functions(&bad),
            Err(FunctionsError::VersionOrChecksum)
        );
        assert_eq!(
            restore_functions(&p[..5]),
            Err(FunctionsError::VersionOrChecksum)
        );
        // A value type byte where an opcode must be.
        let mut other = vec![0u8, 1, b'x'];
        other.extend_from_slice(&RDB_VERSION.to_le_bytes());
        let crc = crc64(0, &other);
        other.extend_from_slice(&crc.to_le_bytes());
        assert_eq!(restore_functions(&other), Err(FunctionsError::NotAFunction));
        // A record cut short inside its string.
        let mut cut = vec![OP_FUNCTION2, 10, b'x'];
        cut.extend_from_slice(&RDB_VERSION.to_le_bytes());
        let crc = crc64(0, &cut);
        cut.extend_from_slice(&crc.to_le_bytes());
        assert_eq!(restore_functions(&cut), Err(FunctionsError::Corrupt));
    }
}
