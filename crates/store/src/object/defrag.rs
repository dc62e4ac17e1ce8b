//! Defragmentation of one entry: every heap block the key and value cells
//! own is offered to the defragmenter (`collections::defrag`), and the
//! cells take the new addresses. Bytes are copied unchanged, so no reply
//! changes; the cells' codes, lengths and TTLs are not touched.
//!
//! A list's nodes are offered [`LIST_NODES_PER_STEP`] at a time: the first
//! step comes with the entry, and the caller continues from the node it
//! is given back ([`Entry::defrag_list_from`]), so a long list does
//! not hold its partition for one long step. (The other collections move
//! their top block only, a bounded amount of work.)

use std::mem::ManuallyDrop;

use collections::defrag::Defrag;

use super::*;

/// List nodes offered per step (a node holds up to 8 KB: a step copies at
/// most ~128 KB).
pub const LIST_NODES_PER_STEP: usize = 16;

impl Entry {
    /// Offers the entry's blocks: a heap key's block, then the value's.
    /// Returns the list node to continue from when the value is a list
    /// with more than [`LIST_NODES_PER_STEP`] nodes (see the module docs).
    pub fn defrag(&mut self, d: &mut Defrag) -> Option<usize> {
        if self.kcode() == K_HEAP {
            let p = read_ptr(&self.k);
            // SAFETY: a heap key cell owns the HeapBytes block at its pointer.
            let n = unsafe { HeapBytes::defrag_raw(p, d) };
            write_ptr(&mut self.k, n);
        }
        self.v.defrag(d)
    }

    /// Offers the next [`LIST_NODES_PER_STEP`] nodes of a list value from
    /// node `from`; returns where to continue, `None` when the list is
    /// done (or the value is no longer a list: it was replaced meanwhile).
    pub fn defrag_list_from(&mut self, from: usize, d: &mut Defrag) -> Option<usize> {
        self.v.as_list_mut()?.defrag(from, LIST_NODES_PER_STEP, d)
    }
}

impl CompactValue {
    /// Offers the value's blocks: a heap string's block; a collection's
    /// box, then the blocks the collection owns (each type moves its own,
    /// see its `defrag`). A list offers its first [`LIST_NODES_PER_STEP`]
    /// nodes; the result is the node to continue from, if any.
    pub fn defrag(&mut self, d: &mut Defrag) -> Option<usize> {
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
                more = l.defrag(0, LIST_NODES_PER_STEP, d);
            }),
            V_SET => self.defrag_box::<SetValue>(d, |s, d| s.defrag(d)),
            V_ZSET => self.defrag_box::<ZsetValue>(d, |z, d| z.defrag(d)),
            V_HASH => self.defrag_box::<HashValue>(d, |h, d| h.defrag(d)),
            V_STREAM => self.defrag_box::<Stream>(d, |_, _| {}),
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
        more
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
