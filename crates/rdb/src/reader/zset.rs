//! Sorted sets: `ZSET` (count + member/text-double pairs, before 4.0),
//! `ZSET_2` (binary doubles), `ZSET_ZIPLIST` (before 7.0) and
//! `ZSET_LISTPACK` (7.0).
//!
//! Encodings as Redis 7.0 chooses them on load: a counted zset is built as
//! a skiplist and converted to a listpack when it has at most
//! `zset-max-listpack-entries` members, none longer than
//! `zset-max-listpack-value`; a ziplist or listpack becomes a skiplist when
//! it has more than `zset-max-listpack-entries` members. A NaN score or a
//! repeated member is an error, as in Redis; a listpack must also be
//! sorted by (score, member) (Redis assumes it; Petrel checks).

use std::io::Read;

use collections::{ListpackZset, SortedSet, ZsetValue};
use store::CompactValue;

use super::blocks::{self, listpack_of};
use super::ctx::Ctx;
use super::decode::{
    read_binary_double, read_len, read_string, read_string_into, read_text_double,
};
use super::input::Input;
use crate::error::{Error, Result};
use crate::types::*;
use crate::ziplist;

pub fn read<R: Read>(inp: &mut Input<R>, t: u8, cx: &mut Ctx) -> Result<Option<CompactValue>> {
    match t {
        ZSET | ZSET_2 => {
            let n = read_len(inp)?;
            if n == 0 {
                return Ok(None);
            }
            let mut z = SortedSet::new();
            let mut maxlen = 0;
            for _ in 0..n {
                let at = inp.offset();
                read_string_into(inp, &mut cx.a)?;
                let score = if t == ZSET_2 {
                    read_binary_double(inp)?
                } else {
                    read_text_double(inp)?
                };
                if score.is_nan() {
                    return Err(Error::corrupt(at, "zset with NaN score detected"));
                }
                maxlen = maxlen.max(cx.a.len());
                if z.insert(&cx.a, score).is_some() {
                    return Err(Error::corrupt(at, "duplicate zset fields detected"));
                }
            }
            let small = z.len() <= cx.limits.zset_max_listpack_entries
                && maxlen <= cx.limits.zset_max_listpack_value;
            let v = if small {
                let mut pairs = Vec::with_capacity(z.len());
                z.for_each_in(0, z.len(), false, |m, s| {
                    pairs.push((m.to_vec(), s));
                    true
                });
                ZsetValue::from_sorted(&pairs, &cx.limits)
            } else {
                ZsetValue::Tree(Box::new(z))
            };
            Ok(Some(CompactValue::from_zset(v)))
        }
        ZSET_ZIPLIST => {
            let at = inp.offset();
            let zl = read_string(inp)?;
            let items = ziplist::entries(&zl).map_err(|e| Error::corrupt(at, e))?;
            let lp = listpack_of(&items);
            from_listpack(lp, at, cx)
        }
        _ => {
            let at = inp.offset();
            let lp = blocks::listpack(read_string(inp)?).map_err(|e| Error::corrupt(at, e))?;
            from_listpack(lp, at, cx)
        }
    }
}

fn from_listpack(lp: collections::Listpack, at: u64, cx: &Ctx) -> Result<Option<CompactValue>> {
    blocks::zset_pairs(&lp).map_err(|e| Error::corrupt(at, e))?;
    if lp.is_empty() {
        return Ok(None);
    }
    let z = ListpackZset::from_listpack(lp).map_err(|e| Error::corrupt(at, e.0))?;
    let mut v = ZsetValue::Listpack(z);
    if v.len() > cx.limits.zset_max_listpack_entries {
        v.convert_to_tree();
    }
    Ok(Some(CompactValue::from_zset(v)))
}
