//! Values as Redis 7.0 writes them: the type byte ([`value_type`]) and the
//! value body ([`write_value`]), shared by RDB files and DUMP payloads.
//!
//! | Petrel value | type written | body |
//! |---|---|---|
//! | string (any form) | `STRING` | one string |
//! | list | `LIST_QUICKLIST_2` | node count, then per node its container (2 = packed, 1 = plain) and its listpack (an LZF node as its compressed block) or, for a plain node, the element |
//! | set `intset` | `SET_INTSET` | the intset block |
//! | set `listpack` / `hashtable` | `SET` | count, members (7.0 has no listpack set) |
//! | hash `listpack` | `HASH_LISTPACK` | the listpack block |
//! | hash `hashtable` | `HASH` | count, field/value pairs |
//! | zset `listpack` | `ZSET_LISTPACK` | the listpack block |
//! | zset `skiplist` | `ZSET_2` | count, member/binary-double pairs from the highest rank down (Redis's order, cheap for its loader) |
//!
//! Blocks (listpack, intset) are copied byte for byte; as any string they
//! may be LZF-compressed in the file when compression is on. A quicklist
//! node is written in its own container: plain nodes (elements of at least
//! `DEBUG QUICKLIST-PACKED-THRESHOLD` bytes when stored, default 1 GiB) as
//! plain, and also a one-element packed node whose element is at least
//! `WriteOptions::packed_threshold` long.

use std::io;

use collections::quicklist::{Container, Node};
use collections::value::hash::lp_bytes;
use collections::{HashValue, LpValue, SetValue, ZsetValue};
use store::{CompactValue, Kind};

use super::encode::{
    write_binary_double, write_len, write_lzf_block, write_string, write_string_parts, Sink,
};
use super::WriteOptions;
use crate::types;

/// The RDB type byte Redis 7.0 writes for `v`.
pub fn value_type(v: &CompactValue) -> u8 {
    match v.kind() {
        Kind::String => types::STRING,
        Kind::List => types::LIST_QUICKLIST_2,
        Kind::Set => match v.as_set().expect("set") {
            SetValue::IntSet(_) => types::SET_INTSET,
            SetValue::Listpack(_) | SetValue::Table(_) => types::SET,
        },
        Kind::Hash => {
            if v.as_hash().expect("hash").is_listpack() {
                types::HASH_LISTPACK
            } else {
                types::HASH
            }
        }
        Kind::ZSet => match v.as_zset().expect("zset") {
            ZsetValue::Listpack(_) => types::ZSET_LISTPACK,
            ZsetValue::Tree(_) => types::ZSET_2,
        },
        Kind::Stream => unreachable!("Petrel has no stream values yet"),
    }
}

/// A listpack element as a string record.
fn write_elem<S: Sink + ?Sized>(s: &mut S, v: LpValue<'_>, compress: bool) -> io::Result<()> {
    match v {
        LpValue::Int(i) => super::encode::write_int(s, i),
        LpValue::Str(b) => write_string(s, b, compress),
    }
}

/// The body of `v` (everything after the type byte).
pub fn write_value<S: Sink + ?Sized>(
    s: &mut S,
    v: &CompactValue,
    opts: &WriteOptions,
    scratch: &mut Vec<u8>,
) -> io::Result<()> {
    let z = opts.compression;
    match v.kind() {
        Kind::String => {
            if v.is_int() {
                super::encode::write_int(s, v.as_int().expect("int"))
            } else {
                write_string(s, &v.string().expect("string"), z)
            }
        }
        Kind::List => {
            let ql = &v.as_list().expect("list").ql;
            write_len(s, ql.node_count() as u64)?;
            for node in ql.nodes() {
                write_node(s, node, opts, scratch)?;
            }
            Ok(())
        }
        Kind::Set => match v.as_set().expect("set") {
            SetValue::IntSet(is) => write_string(s, is.as_bytes(), z),
            set => {
                write_len(s, set.len() as u64)?;
                for m in set.iter() {
                    write_elem(s, m, z)?;
                }
                Ok(())
            }
        },
        Kind::Hash => match &*v.as_hash().expect("hash") {
            HashValue::Pack(p) => write_string_parts(s, &[p.block().bytes(), &[0xFF]], z, scratch),
            HashValue::Listpack(h) => write_string(s, h.listpack().as_bytes(), z),
            HashValue::Table(t) => {
                write_len(s, t.len() as u64)?;
                for (f, val) in t.iter() {
                    write_string(s, f, z)?;
                    write_string(s, val, z)?;
                }
                Ok(())
            }
        },
        Kind::ZSet => match v.as_zset().expect("zset") {
            ZsetValue::Listpack(l) => write_string(s, l.listpack().as_bytes(), z),
            ZsetValue::Tree(t) => {
                write_len(s, t.len() as u64)?;
                let mut res = Ok(());
                t.for_each_in(0, t.len(), true, |m, score| {
                    res = write_string(s, m, z).and_then(|_| write_binary_double(s, score));
                    res.is_ok()
                });
                res
            }
        },
        Kind::Stream => unreachable!("Petrel has no stream values yet"),
    }
}

/// One quicklist node: container, then the listpack (or plain element),
/// an LZF-compressed node as its compressed block.
fn write_node<S: Sink + ?Sized>(
    s: &mut S,
    node: &Node,
    opts: &WriteOptions,
    scratch: &mut Vec<u8>,
) -> io::Result<()> {
    if node.container() == Container::Packed
        && node.len() == 1
        && node.bytes_len() > opts.packed_threshold
    {
        // A packed node holding one element over `packed_threshold`
        // (stored while the process's threshold was higher) is written
        // plain.
        let mut plain = None;
        node.with_view(scratch, |lp| {
            let first = lp.first().expect("node not empty");
            let mut buf = [0u8; 20];
            let b = lp_bytes(first, &mut buf);
            if b.len() >= opts.packed_threshold {
                plain = Some(b.to_vec());
            }
        });
        if let Some(elem) = plain {
            // Written as the plain node memory would hold in its place:
            // LZF-compressed, when that pays, if the node is an interior
            // one (compressed, or tried), so a restore gives back the same
            // node and dumping it again the same bytes.
            let mut p = Node::plain(&elem);
            if !matches!(node, Node::Raw(_)) {
                p.compress();
            }
            return write_node(s, &p, opts, scratch);
        }
    }
    let code = match node.container() {
        Container::Plain => types::NODE_PLAIN,
        Container::Packed => types::NODE_PACKED,
    };
    write_len(s, code)?;
    match node.lzf() {
        Some((data, raw_len)) => write_lzf_block(s, data, raw_len),
        None => node.with_bytes(scratch, |b| write_string(s, b, opts.compression)),
    }
}
