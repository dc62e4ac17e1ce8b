//! Bitmap commands: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD,
//! BITFIELD_RO, on string values (the bit logic is in `store::bitops`).
//!
//! Redis 7.0 details kept here:
//! * argument errors are checked in Redis's order (offsets before the key
//!   lookup for SETBIT/GETBIT/BITFIELD; the key lookup first for BITCOUNT
//!   and BITPOS, so a missing key answers 0 / -1 whatever the range);
//! * offsets are limited to `proto-max-bulk-len` bytes;
//! * SETBIT and BITFIELD fire `setbit` only when the string was created,
//!   grew, or a written value changed; BITFIELD's FAIL overflows still
//!   create/grow the key but count as no change;
//! * BITOP stores a raw string without TTL (`set`), or deletes the
//!   destination when every source is empty (`del`).

use store::bitops::{self, BitOp, Overflow};
use store::heap::HeapStr;
use store::{CompactValue, Key};

use crate::base::errors;
use crate::base::errors::{ERR_NOT_INT, ERR_WRONGTYPE};
use crate::base::parse::{eq_ic, parse_i64};
use crate::kernel::ctx::Ctx;
use crate::kernel::notify;
use crate::kernel::spec::{flag, CommandSpec, Docs, KeyPos};

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        acl: &["write", "bitmap", "slow"],
        keys: KeyPos::ONE,
        docs: Docs::new("O(1)",
            "Sets or clears the bit at offset in the string value stored at key",
        ),
        ..CommandSpec::new("setbit", 4, flag::WRITE | flag::DENYOOM, setbit)
    },
    CommandSpec {
        acl: &["read", "bitmap", "fast"],
        keys: KeyPos::ONE,
        docs: Docs::new("O(1)",
            "Returns the bit value at offset in the string value stored at key",
        ),
        ..CommandSpec::new("getbit", 3, flag::READONLY | flag::FAST, getbit)
    },
    CommandSpec {
        acl: &["read", "bitmap", "slow"],
        keys: KeyPos::ONE,
        docs: Docs::new("O(N)", "Count set bits in a string"),
        ..CommandSpec::new("bitcount", -2, flag::READONLY, bitcount)
    },
    CommandSpec {
        acl: &["read", "bitmap", "slow"],
        keys: KeyPos::ONE,
        docs: Docs::new("O(N)",
            "Find first bit set or clear in a string",
        ),
        ..CommandSpec::new("bitpos", -3, flag::READONLY, bitpos)
    },
    CommandSpec {
        acl: &["write", "bitmap", "slow"],
        keys: KeyPos::range(2, -1, 1),
        docs: Docs::new("O(N)",
            "Perform bitwise operations between strings",
        ),
        ..CommandSpec::new("bitop", -4, flag::WRITE | flag::DENYOOM, bitop)
    },
    CommandSpec {
        acl: &["write", "bitmap", "slow"],
        keys: KeyPos::ONE,
        docs: Docs::new("O(1) for each subcommand specified",
            "Perform arbitrary bitfield integer operations on strings",
        ),
        ..CommandSpec::new("bitfield", -2, flag::WRITE | flag::DENYOOM, bitfield)
    },
    CommandSpec {
        acl: &["read", "bitmap", "fast"],
        keys: KeyPos::ONE,
        docs: Docs::new("O(1) for each subcommand specified",
            "Perform arbitrary bitfield integer operations on strings. Read-only variant of BITFIELD",
        ),
        ..CommandSpec::new("bitfield_ro", -2, flag::READONLY | flag::FAST, bitfield_ro)
    },
];

/// Redis's `getBitOffsetFromArgument`: a bit offset, `#N` meaning N * bits
/// when `bits` is given (BITFIELD), limited to proto-max-bulk-len bytes.
fn bit_offset(ctx: &mut Ctx, arg: &[u8], bits: Option<u32>) -> Option<u64> {
    let (hash, digits) = match (arg.first(), bits) {
        (Some(b'#'), Some(_)) => (true, &arg[1..]),
        _ => (false, arg),
    };
    let Some(mut off) = parse_i64(digits) else {
        ctx.error(errors::ERR_BIT_OFFSET_NOT_INTEGER_OUT_OF_RANGE);
        return None;
    };
    if hash {
        off = off.wrapping_mul(bits.unwrap() as i64);
    }
    if off < 0 || (off as u64 >> 3) >= ctx.settings.proto_max_bulk_len {
        ctx.error(errors::ERR_BIT_OFFSET_NOT_INTEGER_OUT_OF_RANGE);
        return None;
    }
    Some(off as u64)
}

fn setbit(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(off) = bit_offset(ctx, args[2], None) else {
        return;
    };
    let on = match parse_i64(args[3]) {
        Some(0) => false,
        Some(1) => true,
        _ => return ctx.error(errors::ERR_BIT_NOT_INTEGER_OUT_OF_RANGE),
    };
    let need = (off >> 3) as usize + 1;
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let (old, changed) = match p.get(db, &k, now) {
        None => {
            let mut h = HeapStr::zeroed(need);
            bitops::set_bit(h.as_mut_slice(), off, on);
            p.insert(db, &k, CompactValue::from_heap(h, true), None, now);
            (0, true)
        }
        Some(e) => {
            if !e.value().is_string() {
                return ctx.error(ERR_WRONGTYPE);
            }
            e.modify_string(|h| {
                let grown = h.len() < need;
                if grown {
                    h.resize(need);
                }
                let old = bitops::set_bit(h.as_mut_slice(), off, on);
                (old, grown || (old != 0) != on)
            })
            .unwrap()
        }
    };
    drop(p);
    if changed {
        ctx.notify(notify::STRING, "setbit", args[1]);
    }
    ctx.out.int(old as i64);
}

fn getbit(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(off) = bit_offset(ctx, args[2], None) else {
        return;
    };
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let bit = match p.get_read(db, &k, now) {
        None => 0,
        Some(e) => match e.value().string() {
            Some(s) => bitops::get_bit(&s, off),
            None => return ctx.error(ERR_WRONGTYPE),
        },
    };
    drop(p);
    ctx.out.int(bit as i64);
}

/// Parses BYTE|BIT; true for BIT. Replies a syntax error otherwise.
fn parse_unit(ctx: &mut Ctx, arg: &[u8]) -> Option<bool> {
    if eq_ic(arg, "bit") {
        Some(true)
    } else if eq_ic(arg, "byte") {
        Some(false)
    } else {
        ctx.syntax_error();
        None
    }
}

/// Turns a (start, end) range in bytes or bits, negative indexes counting
/// from the end, into an inclusive bit range of a string of `len` bytes;
/// None when the range is empty.
fn bit_range(len: usize, mut start: i64, mut end: i64, isbit: bool) -> Option<(u64, u64)> {
    let mut tot = len as i64;
    if isbit {
        tot <<= 3;
    }
    if start < 0 {
        start += tot;
    }
    if end < 0 {
        end += tot;
    }
    start = start.max(0);
    end = end.max(0);
    if end >= tot {
        end = tot - 1;
    }
    if start > end {
        return None;
    }
    if isbit {
        Some((start as u64, end as u64))
    } else {
        Some((start as u64 * 8, end as u64 * 8 + 7))
    }
}

fn bitcount(ctx: &mut Ctx, args: &[&[u8]]) {
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let Some(e) = p.get_read(db, &k, now) else {
        drop(p);
        return ctx.out.int(0);
    };
    let Some(s) = e.value().string() else {
        drop(p);
        return ctx.error(ERR_WRONGTYPE);
    };
    let range = match args.len() {
        2 => bit_range(s.len(), 0, -1, false),
        4 | 5 => {
            let (Some(start), Some(end)) = (parse_i64(args[2]), parse_i64(args[3])) else {
                drop(p);
                return ctx.error(ERR_NOT_INT);
            };
            if start < 0 && end < 0 && start > end {
                drop(p);
                return ctx.out.int(0);
            }
            let isbit = if args.len() == 5 {
                match parse_unit(ctx, args[4]) {
                    Some(b) => b,
                    None => return,
                }
            } else {
                false
            };
            bit_range(s.len(), start, end, isbit)
        }
        _ => {
            drop(p);
            return ctx.syntax_error();
        }
    };
    let n = match range {
        Some((f, l)) => bitops::popcount_bits(&s, f, l),
        None => 0,
    };
    drop(p);
    ctx.out.int(n as i64);
}

fn bitpos(ctx: &mut Ctx, args: &[&[u8]]) {
    let bit = match parse_i64(args[2]) {
        None => return ctx.error(ERR_NOT_INT),
        Some(b @ (0 | 1)) => b == 1,
        Some(_) => return ctx.error(errors::ERR_BIT_ARGUMENT_MUST_1_0),
    };
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let Some(e) = p.get_read(db, &k, now) else {
        drop(p);
        return ctx.out.int(if bit { -1 } else { 0 });
    };
    let Some(s) = e.value().string() else {
        drop(p);
        return ctx.error(ERR_WRONGTYPE);
    };
    let mut end_given = false;
    let range = match args.len() {
        3 => bit_range(s.len(), 0, -1, false),
        4..=6 => {
            let Some(start) = parse_i64(args[3]) else {
                drop(p);
                return ctx.error(ERR_NOT_INT);
            };
            let isbit = if args.len() == 6 {
                match parse_unit(ctx, args[5]) {
                    Some(b) => b,
                    None => return,
                }
            } else {
                false
            };
            let end = if args.len() >= 5 {
                end_given = true;
                match parse_i64(args[4]) {
                    Some(v) => v,
                    None => {
                        drop(p);
                        return ctx.error(ERR_NOT_INT);
                    }
                }
            } else {
                -1
            };
            bit_range(s.len(), start, end, isbit)
        }
        _ => {
            drop(p);
            return ctx.syntax_error();
        }
    };
    let pos = match range {
        None => -1,
        Some((f, l)) => match bitops::bitpos_bits(&s, bit, f, l) {
            Some(x) => x as i64,
            // Looking for a clear bit without an explicit end: the string
            // continues with zeros right after the range.
            None if !bit && !end_given => l as i64 + 1,
            None => -1,
        },
    };
    drop(p);
    ctx.out.int(pos);
}

fn bitop(ctx: &mut Ctx, args: &[&[u8]]) {
    let op = if eq_ic(args[1], "and") {
        BitOp::And
    } else if eq_ic(args[1], "or") {
        BitOp::Or
    } else if eq_ic(args[1], "xor") {
        BitOp::Xor
    } else if eq_ic(args[1], "not") {
        BitOp::Not
    } else {
        return ctx.syntax_error();
    };
    if op == BitOp::Not && args.len() != 4 {
        return ctx.error(errors::ERR_BITOP_NOT_MUST_CALLED_SINGLE_SOURCE_KEY);
    }
    let dest = Key::new(args[2]);
    let keys: Vec<Key> = args[2..].iter().map(|a| Key::new(a)).collect();
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut g = srv.keyspace.lock_keys(&keys);
    // Type checks and lengths first (one read lookup per source, as
    // Redis), then the result is built from the sources in place: no copy
    // of the sources is made.
    let mut lens: Vec<Option<usize>> = Vec::with_capacity(keys.len() - 1);
    for k in &keys[1..] {
        match g.part(k).get_read(db, k, now) {
            None => lens.push(None),
            Some(e) if !e.value().is_string() => {
                drop(g);
                return ctx.error(ERR_WRONGTYPE);
            }
            Some(e) => lens.push(Some(e.value().str_len())),
        }
    }
    let maxlen = lens.iter().flatten().copied().max().unwrap_or(0);
    // Built directly in the heap block the value will own.
    let mut res = (maxlen > 0).then(|| HeapStr::zeroed(maxlen));
    if let Some(res) = res.as_mut() {
        for (i, k) in keys[1..].iter().enumerate() {
            let src = match lens[i] {
                Some(_) => g.part(k).get(db, k, now).and_then(|e| e.value().string()),
                None => None,
            };
            let src: &[u8] = src.as_deref().unwrap_or(&[]);
            bitops::bitop_fold(op, res.as_mut_slice(), src, i == 0);
        }
    }
    let len = maxlen;
    let event = if let Some(res) = res {
        let v = CompactValue::from_heap(res, true);
        drop(g.part(&dest).insert(db, &dest, v, None, now));
        Some((notify::STRING, "set"))
    } else if g.part(&dest).remove(db, &dest, now).is_some() {
        Some((notify::GENERIC, "del"))
    } else {
        None
    };
    drop(g);
    if let Some((class, name)) = event {
        ctx.notify(class, name, args[2]);
    }
    ctx.out.int(len as i64);
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum FieldOp {
    Get,
    Set,
    Incrby,
}

#[derive(Clone, Copy)]
struct Field {
    op: FieldOp,
    signed: bool,
    bits: u32,
    offset: u64,
    value: i64,
    overflow: Overflow,
}

/// Redis's `getBitfieldTypeFromArgument`: `i1`..`i64` or `u1`..`u63`
/// (lower case; the number is read up to the first NUL, as C does).
fn bitfield_type(arg: &[u8]) -> Option<(bool, u32)> {
    let signed = match arg.first() {
        Some(b'i') => true,
        Some(b'u') => false,
        _ => return None,
    };
    let rest = &arg[1..];
    let rest = &rest[..rest.iter().position(|&b| b == 0).unwrap_or(rest.len())];
    let n = parse_i64(rest)?;
    if n < 1 || (signed && n > 64) || (!signed && n > 63) {
        return None;
    }
    Some((signed, n as u32))
}

/// Parses the operations; replies the error and returns None on a bad one.
fn parse_fields(ctx: &mut Ctx, args: &[&[u8]]) -> Option<Vec<Field>> {
    let mut ops = Vec::new();
    let mut overflow = Overflow::Wrap;
    let mut j = 2;
    while j < args.len() {
        let rem = args.len() - j - 1;
        let sub = args[j];
        let op = if eq_ic(sub, "get") && rem >= 2 {
            FieldOp::Get
        } else if eq_ic(sub, "set") && rem >= 3 {
            FieldOp::Set
        } else if eq_ic(sub, "incrby") && rem >= 3 {
            FieldOp::Incrby
        } else if eq_ic(sub, "overflow") && rem >= 1 {
            let t = args[j + 1];
            overflow = if eq_ic(t, "wrap") {
                Overflow::Wrap
            } else if eq_ic(t, "sat") {
                Overflow::Sat
            } else if eq_ic(t, "fail") {
                Overflow::Fail
            } else {
                ctx.error(errors::ERR_INVALID_OVERFLOW_TYPE_SPECIFIED);
                return None;
            };
            j += 2;
            continue;
        } else {
            ctx.syntax_error();
            return None;
        };
        let Some((signed, bits)) = bitfield_type(args[j + 1]) else {
            ctx.error(errors::ERR_INVALID_BITFIELD_TYPE);
            return None;
        };
        let offset = bit_offset(ctx, args[j + 2], Some(bits))?;
        let mut value = 0;
        if op != FieldOp::Get {
            value = ctx.parse_i64(args[j + 3])?;
        }
        ops.push(Field {
            op,
            signed,
            bits,
            offset,
            value,
            overflow,
        });
        j += if op == FieldOp::Get { 3 } else { 4 };
    }
    Some(ops)
}

/// Runs every operation on `buf` (already long enough for the writes);
/// returns the replies (None = FAIL overflow) and whether anything changed
/// (`dirty`: the string was created or grown).
fn run_fields(buf: &mut [u8], ops: &[Field], dirty: bool) -> (Vec<Option<i64>>, bool) {
    let mut out = Vec::with_capacity(ops.len());
    let mut changes = false;
    for f in ops {
        match (f.op, f.signed) {
            (FieldOp::Get, true) => out.push(Some(bitops::get_signed(buf, f.offset, f.bits))),
            (FieldOp::Get, false) => {
                out.push(Some(bitops::get_unsigned(buf, f.offset, f.bits) as i64))
            }
            (op, true) => {
                let old = bitops::get_signed(buf, f.offset, f.bits);
                let (from, incr) = if op == FieldOp::Incrby {
                    (old, f.value)
                } else {
                    (f.value, 0)
                };
                match bitops::signed_update(from, incr, f.bits, f.overflow) {
                    None => out.push(None),
                    Some(new) => {
                        out.push(Some(if op == FieldOp::Incrby { new } else { old }));
                        bitops::set_field(buf, f.offset, f.bits, new as u64);
                        changes |= dirty || old != new;
                    }
                }
            }
            (op, false) => {
                let old = bitops::get_unsigned(buf, f.offset, f.bits);
                let (from, incr) = if op == FieldOp::Incrby {
                    (old, f.value)
                } else {
                    (f.value as u64, 0)
                };
                match bitops::unsigned_update(from, incr, f.bits, f.overflow) {
                    None => out.push(None),
                    Some(new) => {
                        out.push(Some(if op == FieldOp::Incrby { new } else { old } as i64));
                        bitops::set_field(buf, f.offset, f.bits, new);
                        changes |= dirty || old != new;
                    }
                }
            }
        }
    }
    (out, changes)
}

/// GET-only operations on a string that is not modified.
fn read_fields(s: &[u8], ops: &[Field]) -> Vec<Option<i64>> {
    ops.iter()
        .map(|f| {
            Some(if f.signed {
                bitops::get_signed(s, f.offset, f.bits)
            } else {
                bitops::get_unsigned(s, f.offset, f.bits) as i64
            })
        })
        .collect()
}

fn reply_fields(ctx: &mut Ctx, res: &[Option<i64>]) {
    ctx.out.array_len(res.len());
    for r in res {
        match r {
            Some(v) => ctx.out.int(*v),
            None => ctx.out.null(),
        }
    }
}

fn bitfield_generic(ctx: &mut Ctx, args: &[&[u8]], ro: bool) {
    let Some(ops) = parse_fields(ctx, args) else {
        return;
    };
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let write = ops.iter().any(|f| f.op != FieldOp::Get);
    if !write {
        let mut p = srv.keyspace.lock(&k);
        let res = match p.get_read(db, &k, now) {
            None => read_fields(&[], &ops),
            Some(e) => match e.value().string() {
                Some(s) => read_fields(&s, &ops),
                None => {
                    drop(p);
                    return ctx.error(ERR_WRONGTYPE);
                }
            },
        };
        drop(p);
        return reply_fields(ctx, &res);
    }
    if ro {
        return ctx.error(errors::ERR_BITFIELD_RO_ONLY_SUPPORTS_GET_SUBCOMMAND);
    }
    let highest = ops
        .iter()
        .filter(|f| f.op != FieldOp::Get)
        .map(|f| f.offset + f.bits as u64 - 1)
        .max()
        .unwrap();
    let need = (highest >> 3) as usize + 1;
    let mut p = srv.keyspace.lock(&k);
    let (res, changed) = match p.get(db, &k, now) {
        None => {
            let mut h = HeapStr::zeroed(need);
            let r = run_fields(h.as_mut_slice(), &ops, true);
            p.insert(db, &k, CompactValue::from_heap(h, true), None, now);
            r
        }
        Some(e) => {
            if !e.value().is_string() {
                drop(p);
                return ctx.error(ERR_WRONGTYPE);
            }
            e.modify_string(|h| {
                let grown = h.len() < need;
                if grown {
                    h.resize(need);
                }
                run_fields(h.as_mut_slice(), &ops, grown)
            })
            .unwrap()
        }
    };
    drop(p);
    if changed {
        ctx.notify(notify::STRING, "setbit", args[1]);
    }
    reply_fields(ctx, &res);
}

fn bitfield(ctx: &mut Ctx, args: &[&[u8]]) {
    bitfield_generic(ctx, args, false)
}

fn bitfield_ro(ctx: &mut Ctx, args: &[&[u8]]) {
    bitfield_generic(ctx, args, true)
}
