//! Sets: `SET` (count + members), `SET_INTSET` (an intset block) and
//! `SET_LISTPACK` (version 11, a listpack of members).
//!
//! Encodings chosen as Redis chooses them on load, with Petrel's 7.2-style
//! listpack sets: a `SET` of more than `set-max-intset-entries` members is
//! a hashtable from the start; a smaller one is built member by member with
//! Petrel's usual conversions (intset, listpack while the members fit
//! `set-max-listpack-*`, else hashtable). An intset over
//! `set-max-intset-entries`, or a listpack over `set-max-listpack-entries`,
//! becomes a hashtable. A repeated member is an error ("duplicate set
//! members"), as in Redis.

use std::io::Read;

use collections::value::hash::lp_bytes;
use collections::{CompactSet, ListpackSet, SetValue};
use store::CompactValue;

use super::blocks;
use super::ctx::{cap_hint, Ctx};
use super::decode::{read_len, read_string, read_string_into};
use super::input::Input;
use crate::error::{Error, Result};
use crate::types::*;

fn to_table(s: &SetValue) -> SetValue {
    let mut t = CompactSet::with_capacity(s.len());
    let mut buf = [0u8; 20];
    for m in s.iter() {
        t.insert(lp_bytes(m, &mut buf));
    }
    SetValue::Table(Box::new(t))
}

const DUP: &str = "duplicate set members detected";

pub fn read<R: Read>(inp: &mut Input<R>, t: u8, cx: &mut Ctx) -> Result<Option<CompactValue>> {
    match t {
        SET => {
            let n = read_len(inp)?;
            if n == 0 {
                return Ok(None);
            }
            let mut s = if n > cx.limits.set_max_intset_entries as u64 {
                SetValue::Table(Box::new(CompactSet::with_capacity(cap_hint(inp, n))))
            } else {
                SetValue::new()
            };
            for _ in 0..n {
                let at = inp.offset();
                read_string_into(inp, &mut cx.a)?;
                if !s.insert(&cx.a, &cx.limits) {
                    return Err(Error::corrupt(at, DUP));
                }
            }
            Ok(Some(CompactValue::from_set(s)))
        }
        SET_INTSET => {
            let at = inp.offset();
            let is = blocks::intset(read_string(inp)?).map_err(|e| Error::corrupt(at, e))?;
            let mut s = SetValue::IntSet(is);
            if s.len() > cx.limits.set_max_intset_entries {
                s = to_table(&s);
            }
            Ok(Some(CompactValue::from_set(s)))
        }
        _ => {
            let at = inp.offset();
            let lp = blocks::listpack(read_string(inp)?).map_err(|e| Error::corrupt(at, e))?;
            blocks::distinct_keys(&lp, 1).map_err(|_| Error::corrupt(at, DUP))?;
            if lp.is_empty() {
                return Ok(None);
            }
            let ls = ListpackSet::from_listpack(lp).map_err(|e| Error::corrupt(at, e.0))?;
            let mut s = SetValue::Listpack(ls);
            if s.len() > cx.limits.set_max_listpack_entries {
                s = to_table(&s);
            }
            Ok(Some(CompactValue::from_set(s)))
        }
    }
}
