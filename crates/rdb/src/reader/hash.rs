//! Hashes: `HASH` (count + field/value strings), `HASH_ZIPMAP` (2.x),
//! `HASH_ZIPLIST` (before 7.0) and `HASH_LISTPACK` (7.0).
//!
//! Encodings as Redis 7.0 chooses them on load: a `HASH` of more than
//! `hash-max-listpack-entries` fields is a hashtable from the start, a
//! smaller one a listpack until a field or value is longer than
//! `hash-max-listpack-value`; a zipmap converts to a listpack, or to a
//! hashtable when it has too many fields or one too long; a ziplist or
//! listpack becomes a hashtable only when it has too many fields. A
//! repeated field is an error, as in Redis.

use std::io::Read;

use collections::{CompactMap, HashValue, Listpack, ListpackHash};
use store::CompactValue;

use super::blocks::{self, listpack_of};
use super::ctx::{cap_hint, Ctx};
use super::decode::{read_len, read_string, read_string_into};
use super::input::Input;
use crate::error::{Error, Result};
use crate::types::*;
use crate::{ziplist, zipmap};

const DUP: &str = "duplicate hash fields detected";

/// A listpack hash (validated pairs), converted when it has more fields
/// than `entries` or a field/value longer than `max_value` (when given).
fn from_listpack(
    lp: Listpack,
    entries: usize,
    too_long: bool,
    at: u64,
) -> Result<Option<CompactValue>> {
    if lp.is_empty() {
        return Ok(None);
    }
    let h = ListpackHash::from_listpack(lp).map_err(|e| Error::corrupt(at, e.0))?;
    let mut h = HashValue::Listpack(h);
    if h.len() > entries || too_long {
        h.convert_to_table();
    }
    Ok(Some(CompactValue::from_hash(h)))
}

pub fn read<R: Read>(inp: &mut Input<R>, t: u8, cx: &mut Ctx) -> Result<Option<CompactValue>> {
    let entries = cx.limits.hash_max_listpack_entries;
    match t {
        HASH => {
            let n = read_len(inp)?;
            if n == 0 {
                return Ok(None);
            }
            if n > entries as u64 {
                let mut m = CompactMap::with_capacity(cap_hint(inp, n));
                for _ in 0..n {
                    let at = inp.offset();
                    read_string_into(inp, &mut cx.a)?;
                    read_string_into(inp, &mut cx.b)?;
                    if !m.insert(&cx.a, &cx.b) {
                        return Err(Error::corrupt(at, DUP));
                    }
                }
                return Ok(Some(CompactValue::from_hash(HashValue::Table(Box::new(m)))));
            }
            let mut h = HashValue::new();
            for _ in 0..n {
                let at = inp.offset();
                read_string_into(inp, &mut cx.a)?;
                read_string_into(inp, &mut cx.b)?;
                if !h.insert(&cx.limits, &cx.a, &cx.b) {
                    return Err(Error::corrupt(at, DUP));
                }
            }
            Ok(Some(CompactValue::from_hash(h)))
        }
        HASH_ZIPMAP => {
            let at = inp.offset();
            let zm = read_string(inp)?;
            let pairs = zipmap::pairs(&zm).map_err(|e| Error::corrupt(at, e))?;
            let mut lp = Listpack::new();
            let mut maxlen = 0;
            for (f, v) in &pairs {
                maxlen = maxlen.max(f.len()).max(v.len());
                lp.push_back(f);
                lp.push_back(v);
            }
            blocks::hash_pairs(&lp).map_err(|_| Error::corrupt(at, DUP))?;
            from_listpack(lp, entries, maxlen > cx.limits.hash_max_listpack_value, at)
        }
        HASH_ZIPLIST => {
            let at = inp.offset();
            let zl = read_string(inp)?;
            let items = ziplist::entries(&zl).map_err(|e| Error::corrupt(at, e))?;
            let lp = listpack_of(&items);
            blocks::hash_pairs(&lp).map_err(|e| Error::corrupt(at, e))?;
            from_listpack(lp, entries, false, at)
        }
        _ => {
            let at = inp.offset();
            let lp = blocks::listpack(read_string(inp)?).map_err(|e| Error::corrupt(at, e))?;
            blocks::hash_pairs(&lp).map_err(|e| Error::corrupt(at, e))?;
            from_listpack(lp, entries, false, at)
        }
    }
}
