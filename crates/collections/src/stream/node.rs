//! One stream node: a listpack in Redis 7.0's stream layout, byte for byte
//! (so RDB `STREAM_LISTPACKS_2/3` can copy nodes both ways).
//!
//! ```text
//! master entry: count | deleted | num-fields | field_1 .. field_N | 0
//! entry:        flags | ms-diff | seq-diff | [num-fields | field_1 value_1 ..
//!               | field_N value_N] or [value_1 .. value_N] | lp-count
//! ```
//!
//! * `count` / `deleted`: live and tombstoned entries in the node;
//! * `flags`: bit 0 = deleted, bit 1 = same fields as the master entry (the
//!   field names and num-fields are then omitted);
//! * `ms-diff`, `seq-diff`: the entry ID minus the node's master ID (the
//!   index key), each as a wrapping 64-bit difference stored signed;
//! * `lp-count`: the number of listpack elements of the entry before it
//!   (3 + N values, plus N + 1 when the fields are written), so the node
//!   can be walked backwards; the master entry's trailing `0` plays that
//!   role for the master entry;
//! * fields and values are stored as Redis's `lpAppend` stores strings
//!   (canonical integers as integers); counters with `lpAppendInteger`.
//!
//! Nodes are only built by this module or checked by `validate` first, so
//! the readers below may assume the layout (a malformed node is a bug, and
//! panics in `expect`).

use super::StreamId;
use crate::listpack::{encode, Enc, Listpack, LpValue, HEADER_SIZE};
use crate::mem::block_bytes;

/// A read-only view of a node's listpack bytes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Lp<'a>(&'a [u8]);

impl<'a> Lp<'a> {
    pub(crate) fn of(lp: &'a Listpack) -> Lp<'a> {
        Lp(lp.as_bytes())
    }
    #[inline]
    pub(crate) fn entry_at(self, off: usize) -> (LpValue<'a>, usize) {
        crate::listpack::entry_at(self.0, off)
    }
    #[inline]
    pub(crate) fn prev_offset(self, off: usize) -> Option<usize> {
        crate::listpack::prev_offset_in(self.0, off)
    }
    pub(crate) fn first_offset(self) -> usize {
        HEADER_SIZE
    }
    pub(crate) fn end_offset(self) -> usize {
        self.0.len() - 1
    }
    pub(crate) fn as_bytes(self) -> &'a [u8] {
        self.0
    }
}

/// A node's storage: one heap block of exactly the allocator size class
/// the listpack's buffer had, holding the listpack in its prefix (its
/// header says how long). 16 bytes in the index instead of a `Listpack`'s
/// 32; mutations borrow it back as a [`Listpack`] without copying.
#[derive(Clone, Debug, Default)]
pub(crate) struct NodeBuf(Box<[u8]>);

impl NodeBuf {
    pub(crate) fn from_lp(lp: Listpack) -> NodeBuf {
        let mut v = lp.into_bytes();
        let cap = v.capacity();
        v.resize(cap, 0);
        NodeBuf(v.into_boxed_slice())
    }

    /// Offers its block to the defragmenter (see [`crate::defrag`]).
    pub(crate) fn defrag(&mut self, d: &mut crate::defrag::Defrag) {
        d.boxed_slice(&mut self.0);
    }

    fn total(&self) -> usize {
        u32::from_le_bytes(self.0[0..4].try_into().unwrap()) as usize
    }

    pub(crate) fn lp(&self) -> Lp<'_> {
        Lp(&self.0[..self.total()])
    }

    /// Bytes the block occupies (its size class).
    pub(crate) fn heap(&self) -> usize {
        block_bytes(self.0.len())
    }

    /// Run `f` on the node as a [`Listpack`].
    pub(crate) fn with_lp<R>(&mut self, f: impl FnOnce(&mut Listpack) -> R) -> R {
        let total = self.total();
        let hdr = u16::from_le_bytes(self.0[4..6].try_into().unwrap());
        let mut v = std::mem::take(&mut self.0).into_vec();
        v.truncate(total);
        let count = if hdr == u16::MAX {
            let view = Lp(&v);
            let mut n = 0;
            let mut o = HEADER_SIZE;
            while o < view.end_offset() {
                o = view.entry_at(o).1;
                n += 1;
            }
            n
        } else {
            hdr as usize
        };
        let mut lp = Listpack::from_trusted(v, count);
        let r = f(&mut lp);
        *self = NodeBuf::from_lp(lp);
        r
    }
}

pub(crate) const FLAG_DELETED: i64 = 1;
pub(crate) const FLAG_SAMEFIELDS: i64 = 2;

#[inline]
fn int_at(lp: Lp<'_>, off: usize) -> (i64, usize) {
    let (v, n) = lp.entry_at(off);
    (v.as_i64().expect("stream node: integer expected"), n)
}

#[inline]
fn skip(lp: Lp<'_>, mut off: usize, n: usize) -> usize {
    for _ in 0..n {
        off = lp.entry_at(off).1;
    }
    off
}

/// Live entries in the node (master `count`).
pub(crate) fn live_count(lp: Lp<'_>) -> i64 {
    int_at(lp, lp.first_offset()).0
}

/// Tombstones in the node (master `deleted`).
pub(crate) fn deleted_count(lp: Lp<'_>) -> i64 {
    let o = lp.entry_at(lp.first_offset()).1;
    int_at(lp, o).0
}

/// Layout facts of a node's master entry.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Master {
    /// Number of master fields.
    pub(crate) nfields: usize,
    /// Offset of the first master field.
    pub(crate) fields_off: usize,
    /// Offset of the first entry's flags (== end offset when none).
    pub(crate) first_entry: usize,
}

pub(crate) fn master(lp: Lp<'_>) -> Master {
    let o = skip(lp, lp.first_offset(), 2);
    let (n, fields_off) = int_at(lp, o);
    let n = n as usize;
    let term = skip(lp, fields_off, n);
    let first_entry = lp.entry_at(term).1;
    Master {
        nfields: n,
        fields_off,
        first_entry,
    }
}

/// One entry's position inside its node.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Loc {
    pub(crate) flags_off: usize,
    pub(crate) flags: i64,
    pub(crate) id: StreamId,
    pub(crate) nfields: usize,
    /// First field (or value, with SAMEFIELDS).
    pub(crate) data_off: usize,
    /// Offset after the entry's lp-count.
    pub(crate) end: usize,
}

impl Loc {
    pub(crate) fn deleted(&self) -> bool {
        self.flags & FLAG_DELETED != 0
    }
    pub(crate) fn same_fields(&self) -> bool {
        self.flags & FLAG_SAMEFIELDS != 0
    }
}

/// Read the entry whose flags are at `off`.
pub(crate) fn entry_at(lp: Lp<'_>, m: &Master, master_id: StreamId, off: usize) -> Loc {
    let (flags, o) = int_at(lp, off);
    let (msd, o) = int_at(lp, o);
    let (seqd, o) = int_at(lp, o);
    let id = StreamId::new(
        master_id.ms.wrapping_add(msd as u64),
        master_id.seq.wrapping_add(seqd as u64),
    );
    let (nfields, data_off) = if flags & FLAG_SAMEFIELDS != 0 {
        (m.nfields, o)
    } else {
        let (n, o) = int_at(lp, o);
        (n as usize, o)
    };
    let per = if flags & FLAG_SAMEFIELDS != 0 { 1 } else { 2 };
    let lpc = skip(lp, data_off, nfields * per);
    let end = lp.entry_at(lpc).1;
    Loc {
        flags_off: off,
        flags,
        id,
        nfields,
        data_off,
        end,
    }
}

/// The entry before the one starting at `flags_off` (`None` at the first).
pub(crate) fn prev_entry(
    lp: Lp<'_>,
    m: &Master,
    master_id: StreamId,
    flags_off: usize,
) -> Option<Loc> {
    if flags_off <= m.first_entry {
        return None;
    }
    // The previous element is that entry's lp-count.
    let lpc_off = lp.prev_offset(flags_off)?;
    let (n, _) = int_at(lp, lpc_off);
    let mut o = lpc_off;
    for _ in 0..n {
        o = lp.prev_offset(o)?;
    }
    Some(entry_at(lp, m, master_id, o))
}

/// The last entry of the node (tombstones included).
pub(crate) fn last_entry(lp: Lp<'_>, m: &Master, master_id: StreamId) -> Option<Loc> {
    prev_entry(lp, m, master_id, lp.end_offset())
}

/// Field/value pairs of an entry, borrowed from its node.
#[derive(Clone)]
pub struct Fields<'a> {
    lp: Lp<'a>,
    master_off: Option<usize>,
    off: usize,
    left: usize,
}

impl<'a> Fields<'a> {
    pub(crate) fn new(lp: Lp<'a>, m: &Master, loc: &Loc) -> Fields<'a> {
        Fields {
            lp,
            master_off: loc.same_fields().then_some(m.fields_off),
            off: loc.data_off,
            left: loc.nfields,
        }
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = (LpValue<'a>, LpValue<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let f = match &mut self.master_off {
            Some(mo) => {
                let (f, n) = self.lp.entry_at(*mo);
                *mo = n;
                f
            }
            None => {
                let (f, n) = self.lp.entry_at(self.off);
                self.off = n;
                f
            }
        };
        let (v, n) = self.lp.entry_at(self.off);
        self.off = n;
        Some((f, v))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for Fields<'_> {}

/// A new node for `first` holding the entry `fields` (flat field, value
/// list) as its first, same-fields entry.
pub(crate) fn new_node<F: AsRef<[u8]>>(fields: &[F]) -> Listpack {
    let n = fields.len() / 2;
    let mut lp = Listpack::new();
    lp.push_back_int(1);
    lp.push_back_int(0);
    lp.push_back_int(n as i64);
    for i in 0..n {
        lp.push_back(fields[2 * i].as_ref());
    }
    lp.push_back_int(0);
    push_entry(&mut lp, FLAG_SAMEFIELDS, 0, 0, fields);
    lp
}

fn push_entry<F: AsRef<[u8]>>(lp: &mut Listpack, flags: i64, msd: i64, seqd: i64, fields: &[F]) {
    let n = fields.len() / 2;
    let same = flags & FLAG_SAMEFIELDS != 0;
    let lp_count = if same { 3 + n } else { 3 + 2 * n + 1 };
    // Encode the whole entry first, then append it in one copy.
    let mut stack = [0u8; 512];
    let mut heap = Vec::new();
    let mut len = 0usize;
    let mut items = 0usize;
    let mut put = |e: Enc<'_>| {
        let enc = encode(e);
        let t = enc.total();
        if heap.is_empty() && len + t <= stack.len() {
            for part in enc.parts() {
                stack[len..len + part.len()].copy_from_slice(part);
                len += part.len();
            }
        } else {
            if heap.is_empty() {
                heap.extend_from_slice(&stack[..len]);
            }
            for part in enc.parts() {
                heap.extend_from_slice(part);
            }
            len += t;
        }
        items += 1;
    };
    put(Enc::Int(flags));
    put(Enc::Int(msd));
    put(Enc::Int(seqd));
    if !same {
        put(Enc::Int(n as i64));
    }
    for i in 0..n {
        if !same {
            put(Enc::of(fields[2 * i].as_ref()));
        }
        put(Enc::of(fields[2 * i + 1].as_ref()));
    }
    put(Enc::Int(lp_count as i64));
    let bytes = if heap.is_empty() {
        &stack[..len]
    } else {
        &heap[..]
    };
    lp.append_raw(bytes, items);
}

/// Append an entry to an existing node whose master ID is `master_id`.
pub(crate) fn append<F: AsRef<[u8]>>(
    lp: &mut Listpack,
    master_id: StreamId,
    id: StreamId,
    fields: &[F],
) {
    let count = live_count(Lp::of(lp));
    lp.replace_enc_at_offset(lp.first_offset(), Enc::Int(count + 1));
    let m = master(Lp::of(lp));
    let n = fields.len() / 2;
    let mut same = n == m.nfields;
    if same {
        let mut o = m.fields_off;
        for i in 0..n {
            let (f, next) = lp.entry_at(o);
            if !lp_eq(f, fields[2 * i].as_ref()) {
                same = false;
                break;
            }
            o = next;
        }
    }
    let flags = if same { FLAG_SAMEFIELDS } else { 0 };
    push_entry(
        lp,
        flags,
        id.ms.wrapping_sub(master_id.ms) as i64,
        id.seq.wrapping_sub(master_id.seq) as i64,
        fields,
    );
}

/// Byte equality of a stored element with `s` as Redis compares them
/// (`lpGet` renders integers in canonical decimal).
fn lp_eq(v: LpValue<'_>, s: &[u8]) -> bool {
    v.eq_bytes(s)
}

/// Mark the entry at `loc` deleted and update the master counters.
/// Returns false when it was the node's last live entry (the caller then
/// drops the whole node, as Redis does, without touching it).
pub(crate) fn mark_deleted(lp: &mut Listpack, loc: &Loc) -> bool {
    let count = live_count(Lp::of(lp));
    if count == 1 {
        return false;
    }
    lp.replace_enc_at_offset(loc.flags_off, Enc::Int(loc.flags | FLAG_DELETED));
    let dels = deleted_count(Lp::of(lp));
    set_counters(lp, count - 1, dels + 1);
    true
}

/// Rewrite the master `count` and `deleted` counters.
pub(crate) fn set_counters(lp: &mut Listpack, count: i64, deleted: i64) {
    let o = lp.first_offset();
    lp.replace_enc_at_offset(o, Enc::Int(count));
    let o = lp.entry_at(o).1;
    lp.replace_enc_at_offset(o, Enc::Int(deleted));
}

/// Why a node read from outside (RDB, RESTORE) was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvalidNode(pub &'static str);

/// Deep check of a node read from outside (RDB, RESTORE): a valid listpack
/// with Redis's stream layout (the rules of Redis's
/// `streamValidateListpackIntegrity`, deep mode), plus: the node holds at
/// least one entry (live or tombstone), entry IDs strictly ascend from
/// `master_id` and are above `after` (the previous node's last entry),
/// flags use only the two known bits. Returns (live entries, last entry
/// ID).
pub(crate) fn validate(
    lp: Lp<'_>,
    master_id: StreamId,
    after: Option<StreamId>,
) -> Result<(u64, StreamId), InvalidNode> {
    let bad = InvalidNode;
    let end = lp.end_offset();
    let mut o = lp.first_offset();
    let next_int = |o: &mut usize, what: &'static str| -> Result<i64, InvalidNode> {
        if *o >= end {
            return Err(bad(what));
        }
        let (v, n) = lp.entry_at(*o);
        *o = n;
        match v {
            LpValue::Int(i) => Ok(i),
            LpValue::Str(_) => Err(bad(what)),
        }
    };
    let count = next_int(&mut o, "master count")?;
    let deleted = next_int(&mut o, "master deleted")?;
    let nf = next_int(&mut o, "master fields")?;
    if count < 0
        || deleted < 0
        || count + deleted == 0
        || nf < 0
        || nf as usize > lp.as_bytes().len()
    {
        return Err(bad("master counters"));
    }
    for _ in 0..nf {
        if o >= end {
            return Err(bad("master fields"));
        }
        o = lp.entry_at(o).1;
    }
    if next_int(&mut o, "master terminator")? != 0 {
        return Err(bad("master terminator"));
    }
    let total = count.checked_add(deleted).ok_or(bad("counters"))?;
    let mut live = 0i64;
    let mut prev = after;
    let mut last = master_id;
    for k in 0..total {
        let flags = next_int(&mut o, "flags")?;
        if !(0..=3).contains(&flags) {
            return Err(bad("flags"));
        }
        let msd = next_int(&mut o, "ms diff")?;
        let seqd = next_int(&mut o, "seq diff")?;
        let id = StreamId::new(
            master_id.ms.wrapping_add(msd as u64),
            master_id.seq.wrapping_add(seqd as u64),
        );
        if k == 0 && id < master_id {
            return Err(bad("entry below master id"));
        }
        if let Some(p) = prev {
            if id <= p {
                return Err(bad("entry ids not ascending"));
            }
        }
        prev = Some(id);
        last = id;
        let (fields, extra) = if flags & FLAG_SAMEFIELDS != 0 {
            (nf, 3)
        } else {
            let n = next_int(&mut o, "num fields")?;
            if n < 0 || n as usize > lp.as_bytes().len() {
                return Err(bad("num fields"));
            }
            for _ in 0..n {
                if o >= end {
                    return Err(bad("fields"));
                }
                o = lp.entry_at(o).1;
            }
            (n, 3 + n + 1)
        };
        for _ in 0..fields {
            if o >= end {
                return Err(bad("values"));
            }
            o = lp.entry_at(o).1;
        }
        if next_int(&mut o, "lp-count")? != fields + extra {
            return Err(bad("lp-count"));
        }
        if flags & FLAG_DELETED == 0 {
            live += 1;
        }
    }
    if o != end {
        return Err(bad("trailing data"));
    }
    if live != count {
        return Err(bad("live count mismatch"));
    }
    Ok((count as u64, last))
}
