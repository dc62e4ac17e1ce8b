//! Lists: `LIST` (count + strings, before 3.2), `LIST_ZIPLIST` (one
//! ziplist), `LIST_QUICKLIST` (ziplist nodes, 3.2 to 6.2) and
//! `LIST_QUICKLIST_2` (7.0: per node a container, 1 = plain element, 2 =
//! packed listpack, possibly LZF-compressed).
//!
//! Old forms are rebuilt element by element under the caller's
//! `list-max-listpack-size` / `list-compress-depth`. Quicklist 2 nodes are
//! kept as they are (a node over the fill limit is split): an interior
//! node that came LZF-compressed and satisfies the in-memory compression
//! rule stays compressed, so it is never decompressed and compressed
//! again. A plain node stays a plain node, whatever the packed threshold
//! is now (compressed under the same rule). Empty
//! ziplist/listpack nodes are skipped, as Redis does; a list left with no
//! element is an empty key.

use std::io::Read;

use collections::quicklist::node::{MIN_COMPRESS_BYTES, MIN_COMPRESS_IMPROVE};
use collections::quicklist::{Node, AUTO_DEPTH};
use collections::value::hash::lp_bytes;
use collections::value::list::End;
use collections::{ListValue, LpValue, Quicklist};
use store::CompactValue;

use super::blocks;
use super::ctx::{cap_hint, Ctx};
use super::decode::{read_blob, read_len, read_string, read_string_into};
use super::input::Input;
use crate::error::{Error, Result};
use crate::types::*;
use crate::ziplist;

fn push_all(l: &mut ListValue, items: &[LpValue<'_>]) {
    let mut buf = [0u8; 20];
    for &v in items {
        l.push(End::Tail, lp_bytes(v, &mut buf));
    }
}

fn done(l: ListValue) -> Option<CompactValue> {
    (!l.is_empty()).then(|| CompactValue::from_list(l))
}

pub fn read<R: Read>(inp: &mut Input<R>, t: u8, cx: &mut Ctx) -> Result<Option<CompactValue>> {
    match t {
        LIST => {
            let n = read_len(inp)?;
            let mut l = ListValue::new(&cx.limits);
            for _ in 0..n {
                read_string_into(inp, &mut cx.a)?;
                l.push(End::Tail, &cx.a);
            }
            Ok(done(l))
        }
        LIST_ZIPLIST => {
            let at = inp.offset();
            let zl = read_string(inp)?;
            let items = ziplist::entries(&zl).map_err(|e| Error::corrupt(at, e))?;
            let mut l = ListValue::new(&cx.limits);
            push_all(&mut l, &items);
            Ok(done(l))
        }
        LIST_QUICKLIST => {
            let n = read_len(inp)?;
            let mut l = ListValue::new(&cx.limits);
            for _ in 0..n {
                let at = inp.offset();
                let zl = read_string(inp)?;
                let items = ziplist::entries(&zl).map_err(|e| Error::corrupt(at, e))?;
                push_all(&mut l, &items);
            }
            Ok(done(l))
        }
        _ => read_quicklist2(inp, cx),
    }
}

fn read_quicklist2<R: Read>(inp: &mut Input<R>, cx: &mut Ctx) -> Result<Option<CompactValue>> {
    let n = read_len(inp)?;
    let mut nodes = Vec::with_capacity(cap_hint(inp, n));
    // Nodes within the compress depth of either end will be plain in
    // memory: keeping their compressed form would only make the list
    // decompress them again.
    let depth = match cx.limits.list_compress_depth {
        0 => AUTO_DEPTH as u64,
        d => d as u64,
    };
    for i in 0..n {
        let interior = i >= depth && n - i > depth;
        let at = inp.offset();
        let container = read_len(inp)?;
        if container != NODE_PLAIN && container != NODE_PACKED {
            return Err(Error::corrupt(
                at,
                format!("quicklist node container {container} (expected 1 or 2)"),
            ));
        }
        let at = inp.offset();
        let blob = read_blob(inp)?;
        if blob.raw.is_empty() {
            return Err(Error::corrupt(at, "empty quicklist node"));
        }
        if container == NODE_PLAIN {
            // A plain node stays plain, compressed when it was and stays
            // interior, as for packed nodes below.
            let raw_len = blob.raw.len();
            let node = match blob.lzf {
                Some(c)
                    if interior
                        && raw_len >= MIN_COMPRESS_BYTES
                        && c.len() + MIN_COMPRESS_IMPROVE < raw_len
                        && u32::try_from(raw_len).is_ok() =>
                {
                    Node::PlainLzf {
                        data: c.into_boxed_slice(),
                        raw_len: raw_len as u32,
                    }
                }
                _ => Node::Plain {
                    elem: blob.raw.into_boxed_slice(),
                    stuck: false,
                },
            };
            nodes.push(node);
            continue;
        }
        let raw_len = blob.raw.len();
        let lp = blocks::listpack(blob.raw).map_err(|e| Error::corrupt(at, e))?;
        if lp.is_empty() {
            continue;
        }
        let node = match blob.lzf {
            Some(c)
                if interior
                    && raw_len >= MIN_COMPRESS_BYTES
                    && c.len() + MIN_COMPRESS_IMPROVE < raw_len
                    && u32::try_from(raw_len).is_ok() =>
            {
                Node::Lzf {
                    data: c.into_boxed_slice(),
                    raw_len: raw_len as u32,
                    count: lp.len() as u32,
                }
            }
            _ => Node::Raw(lp),
        };
        nodes.push(node);
    }
    let ql = Quicklist::from_nodes(
        cx.limits.list_max_listpack_size,
        cx.limits.list_compress_depth,
        nodes,
    );
    Ok(done(ListValue { ql }))
}
