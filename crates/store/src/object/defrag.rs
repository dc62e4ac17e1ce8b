//! Defragmentation of one entry: every heap block the key and value cells
//! own is offered to the defragmenter (`collections::defrag`), and the
//! cells take the new addresses. Bytes are copied unchanged, so no reply
//! changes; the cells' codes, lengths and TTLs are not touched.
//!
//! A big collection is offered in steps: the first comes with the entry,
//! and the caller continues from the [`Resume`] it is given back
//! ([`Entry::defrag_from`]), so a big value does not hold its partition
//! for one long step. A list's step is [`LIST_NODES_PER_STEP`] nodes (the
//! first also offers the node array); a table-encoded hash or set and a
//! tree-encoded sorted set visit about `max_fields` elements per step
//! (the keyspace walk passes at most 64: `keyspace::defrag::FIELDS_PER_STEP`;
//! see each type's `defrag`); a stream
//! one chunk of up to 64 nodes per step, then 16 PEL entry arrays per
//! step (`collections::stream`'s defrag). Small encodings and strings are
//! one step.

use std::mem::ManuallyDrop;

use collections::defrag::Defrag;

use super::*;

/// List nodes offered per step (a node holds up to 8 KB: a step copies at
/// most ~128 KB).
pub const LIST_NODES_PER_STEP: usize = 16;

/// Where a value's defrag continues: the value's type (its cell code) and
/// the type's own cursor (never 0: 0 starts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resume {
    code: u8,
    at: u64,
}

impl Entry {
    /// Offers the entry's blocks: a heap key's block, then the value's
    /// first step. Returns where to continue when the value is a big
    /// collection with more to offer (see the module docs).
    pub fn defrag(&mut self, max_fields: usize, d: &mut Defrag) -> Option<Resume> {
        if self.kcode() == K_HEAP {
            let p = read_ptr(&self.k);
            // SAFETY: a heap key cell owns the HeapBytes block at its pointer.
            let n = unsafe { HeapBytes::defrag_raw(p, d) };
            write_ptr(&mut self.k, n);
        }
        self.v.defrag(max_fields, d)
    }

    /// Offers the value's next step from `at`; returns where to continue,
    /// `None` when the value is done (or is no longer of the type `at` was
    /// taken from: it was replaced meanwhile).
    pub fn defrag_from(&mut self, at: Resume, max_fields: usize, d: &mut Defrag) -> Option<Resume> {
        if self.v.code() != at.code {
            return None;
        }
        self.v.defrag_step(at.at, max_fields, d)
    }
}

impl CompactValue {
    /// Offers the value's blocks: a heap string's block; a collection's
    /// box, then the blocks the collection owns (each type moves its own,
    /// see its `defrag`), a big one's first step only; the result is where
    /// to continue, if anywhere.
    pub fn defrag(&mut self, max_fields: usize, d: &mut Defrag) -> Option<Resume> {
        let mut more = None;
        let p = read_ptr(&self.b);
        match self.code() {
            V_HEAP..=V_HEAP7 => {
                // SAFETY: heap string cells own a block of block_len() bytes
                // (see `Drop`).
                let n = unsafe { HeapStr::defrag_raw(p, self.block_len(), d) };
                write_ptr(&mut self.b, n);
            }
            V_SPLIT..=V_SPLIT_LAST => {
                let q = read_ptr48(&self.b);
                // SAFETY: split cells own a block of their length's rest at
                // their 48-bit address (see `Drop`); the cell keeps only
                // the result, set through set_split_block.
                unsafe {
                    let n = HeapStr::defrag_raw(q, self.split_len() - SPLIT_HEAD, d);
                    self.set_split_block(n);
                }
            }
            V_LIST => self.defrag_box::<ListValue>(d, |l, d| {
                more = l.defrag(0, LIST_NODES_PER_STEP, d).map(|n| n as u64);
            }),
            V_SET => self.defrag_box::<SetValue>(d, |s, d| more = s.defrag(0, max_fields, d)),
            V_ZSET => self.defrag_box::<ZsetValue>(d, |z, d| more = z.defrag(0, max_fields, d)),
            V_HASH => self.defrag_box::<HashValue>(d, |h, d| more = h.defrag(0, max_fields, d)),
            V_STREAM => self.defrag_box::<Stream>(d, |st, d| more = st.defrag(0, d)),
            V_HASH_PACK => {
                // SAFETY: a code-68 cell owns the PackHash block at its
                // pointer; ManuallyDrop keeps the cell the only owner until
                // the (possibly new) pointer is written back.
                let mut h = ManuallyDrop::new(unsafe { PackHash::from_raw(p) });
                h.defrag(d);
                write_ptr(&mut self.b, ManuallyDrop::into_inner(h).into_raw());
            }
            _ => {}
        }
        let code = self.code();
        more.map(|at| Resume { code, at })
    }

    /// The next step of a big collection's defrag from `at` (its type's
    /// cursor, not 0); its box is not offered again.
    fn defrag_step(&mut self, at: u64, max_fields: usize, d: &mut Defrag) -> Option<Resume> {
        let code = self.code();
        let next = match code {
            V_LIST => self
                .as_list_mut()?
                .defrag(usize::try_from(at).ok()?, LIST_NODES_PER_STEP, d)
                .map(|n| n as u64),
            V_SET => self.as_set_mut()?.defrag(at, max_fields, d),
            V_ZSET => self.as_zset_mut()?.defrag(at, max_fields, d),
            V_HASH => self
                .boxed_mut::<HashValue>(V_HASH)?
                .defrag(at, max_fields, d),
            V_STREAM => self.as_stream_mut()?.defrag(at, d),
            _ => None,
        };
        next.map(|at| Resume { code, at })
    }

    /// Moves the collection's box, then lets `inner` move what it owns.
    fn defrag_box<T>(&mut self, d: &mut Defrag, inner: impl FnOnce(&mut T, &mut Defrag)) {
        // SAFETY: collection cells own a Box<T> of the type their code names
        // (see `Drop`); ManuallyDrop keeps the cell the only owner until
        // the (possibly new) pointer is written back.
        let mut b = ManuallyDrop::new(unsafe { Box::from_raw(read_ptr(&self.b).cast::<T>()) });
        d.boxed(&mut b);
        inner(&mut b, d);
        write_ptr(
            &mut self.b,
            Box::into_raw(ManuallyDrop::into_inner(b)).cast(),
        );
    }
}
