//! One value of a given RDB type, built as a Petrel value
//! ([`CompactValue`]) with the encoding Redis would choose under the
//! caller's [`collections::Limits`]. The families are in [`super::list`],
//! [`super::set`], [`super::hash`], [`super::zset`] and [`super::stream`].
//!
//! `Ok(None)` is an empty collection: Redis skips such a key when loading a
//! file (and RESTORE refuses it).

use std::io::Read;

use store::CompactValue;

use super::ctx::Ctx;
use super::decode::read_string;
use super::input::Input;
use crate::error::{Error, ErrorKind, Result};
use crate::types::{self, *};

/// Whether `t` is a value type this crate knows (loadable or refused).
pub fn is_value_type(t: u8) -> bool {
    types::type_name(t).is_some()
}

/// Reads the value of type `t` (already consumed, at offset `at`; errors
/// about the type itself point there).
pub fn read_value<R: Read>(
    inp: &mut Input<R>,
    t: u8,
    at: u64,
    cx: &mut Ctx,
) -> Result<Option<CompactValue>> {
    match t {
        STRING => Ok(Some(CompactValue::from_bytes(&read_string(inp)?))),
        LIST | LIST_ZIPLIST | LIST_QUICKLIST | LIST_QUICKLIST_2 => super::list::read(inp, t, cx),
        SET | SET_INTSET | SET_LISTPACK => super::set::read(inp, t, cx),
        ZSET | ZSET_2 | ZSET_ZIPLIST | ZSET_LISTPACK => super::zset::read(inp, t, cx),
        HASH | HASH_ZIPMAP | HASH_ZIPLIST | HASH_LISTPACK => super::hash::read(inp, t, cx),
        STREAM_LISTPACKS | STREAM_LISTPACKS_2 | STREAM_LISTPACKS_3 => {
            super::stream::read(inp, t, cx)
        }
        MODULE_PRE_GA | MODULE_2 => {
            let id = super::decode::read_len(inp)?;
            let (name, ver) = types::module_name(id);
            Err(unsupported(
                at,
                t,
                &format!("module type '{name}' (encoding version {ver}) cannot be loaded: Petrel has no modules"),
            ))
        }
        HASH_METADATA_PRE_GA | HASH_LISTPACK_EX_PRE_GA | HASH_METADATA | HASH_LISTPACK_EX => {
            Err(unsupported(
                at,
                t,
                "hashes with field expiry (Redis 7.4) are not supported by Petrel",
            ))
        }
        _ => Err(Error::corrupt(
            at,
            format!("unknown value type {t} (expected an RDB type)"),
        )),
    }
}

fn unsupported(at: u64, t: u8, why: &str) -> Error {
    let name = types::type_name(t).unwrap_or("?");
    Error::new(
        ErrorKind::Unsupported {
            code: t,
            what: format!("value type {t} ({name}): {why}"),
        },
        at,
    )
}
