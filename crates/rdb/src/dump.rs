//! DUMP payloads, as Redis 7.0's DUMP produces and RESTORE checks them.
//!
//! ```text
//! <type u8> <value as in an RDB file> <RDB version u16 LE> <CRC64 LE>
//! ```
//!
//! The CRC64 covers everything before it (type, value and version) and is
//! always present (`rdbchecksum` does not apply); the value's strings follow
//! `rdbcompression` like a file's. RESTORE first checks the footer: at
//! least 10 bytes, a version no newer than 10 (Redis 7.0 accepts every
//! version up to its own), and a matching CRC; any failure there is
//! [`RestoreError::VersionOrChecksum`] ("ERR DUMP payload version or
//! checksum are wrong"). Then it reads one type byte and one value from the
//! payload (the whole payload, footer included, as Redis does: bytes left
//! over are ignored); any failure there, including an empty collection, a
//! type newer than version 10 (Redis 7.0 does not know it) or a type
//! Petrel does not load, is [`RestoreError::BadData`] ("Bad data format").

use collections::Limits;
use store::CompactValue;

use crate::crc64::crc64;
use crate::error::Error;
use crate::reader::ctx::Ctx;
use crate::reader::input::Input;
use crate::reader::value::read_value;
use crate::types::{self, RDB_VERSION};
use crate::writer::value::{value_type, write_value};
use crate::writer::WriteOptions;

/// The DUMP payload of `value` (`opts.compression` is `rdbcompression`;
/// `opts.checksum` does not apply, the CRC is always written).
pub fn dump(value: &CompactValue, opts: &WriteOptions) -> Vec<u8> {
    let mut out = vec![value_type(value)];
    let mut scratch = Vec::new();
    write_value(&mut out, value, opts, &mut scratch).expect("writing to a Vec cannot fail");
    out.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = crc64(0, &out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// Why RESTORE refused a payload.
#[derive(Debug)]
pub enum RestoreError {
    /// Shorter than 10 bytes, an RDB version newer than 10, or a CRC that
    /// does not match.
    VersionOrChecksum,
    /// The value could not be read (the error says why and where).
    BadData(Error),
}

impl RestoreError {
    /// The error text Redis 7.0 replies with (without the `-` prefix).
    pub fn redis_message(&self) -> &'static str {
        match self {
            RestoreError::VersionOrChecksum => "ERR DUMP payload version or checksum are wrong",
            RestoreError::BadData(_) => "ERR Bad data format",
        }
    }
}

impl std::fmt::Display for RestoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RestoreError::VersionOrChecksum => f.write_str(self.redis_message()),
            RestoreError::BadData(e) => write!(f, "{}: {e}", self.redis_message()),
        }
    }
}

impl std::error::Error for RestoreError {}

/// The RDB version in a payload's footer (`None` when too short).
pub fn payload_version(payload: &[u8]) -> Option<u16> {
    let n = payload.len();
    (n >= 10).then(|| u16::from_le_bytes([payload[n - 10], payload[n - 9]]))
}

/// Checks the footer (Redis's `verifyDumpPayload`).
pub fn verify_payload(payload: &[u8]) -> Result<(), RestoreError> {
    verify_payload_with(payload, true)
}

/// Checks the footer; the CRC only when `verify_crc` (Redis's `DEBUG
/// SET-SKIP-CHECKSUM-VALIDATION 1` skips it).
pub fn verify_payload_with(payload: &[u8], verify_crc: bool) -> Result<(), RestoreError> {
    let v = payload_version(payload).ok_or(RestoreError::VersionOrChecksum)?;
    if v > RDB_VERSION {
        return Err(RestoreError::VersionOrChecksum);
    }
    if !verify_crc {
        return Ok(());
    }
    let n = payload.len();
    let stored = u64::from_le_bytes(payload[n - 8..].try_into().unwrap());
    if crc64(0, &payload[..n - 8]) != stored {
        return Err(RestoreError::VersionOrChecksum);
    }
    Ok(())
}

/// RESTORE's reading of a payload into a value built under `limits`.
pub fn restore(payload: &[u8], limits: &Limits) -> Result<CompactValue, RestoreError> {
    restore_with(payload, limits, true)
}

/// [`restore`], checking the CRC only when `verify_crc`.
pub fn restore_with(
    payload: &[u8],
    limits: &Limits,
    verify_crc: bool,
) -> Result<CompactValue, RestoreError> {
    verify_payload_with(payload, verify_crc)?;
    let mut inp = Input::new(payload, Some(payload.len() as u64), false);
    let t = inp.u8("a value type").map_err(RestoreError::BadData)?;
    // Types of later versions (listpack sets, 7.2 streams, 7.4 hashes)
    // cannot come with a version-10 footer; Redis 7.0 does not know them.
    if t > types::STREAM_LISTPACKS_2 {
        return Err(RestoreError::BadData(Error::corrupt(
            0,
            format!("value type {t} is newer than RDB version {RDB_VERSION}"),
        )));
    }
    let mut cx = Ctx::new(*limits);
    match read_value(&mut inp, t, 0, &mut cx) {
        Ok(Some(v)) => Ok(v),
        Ok(None) => Err(RestoreError::BadData(Error::corrupt(1, "empty collection"))),
        Err(e) => Err(RestoreError::BadData(e)),
    }
}
