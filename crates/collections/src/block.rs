//! [`PackBlock`]: a listpack in one exactly-sized heap block, owned through
//! a single pointer.
//!
//! The keyspace stores a small collection as this pointer directly in its
//! 16-byte value cell: no enum box, no `Vec` header, no terminator byte.
//!
//! ```text
//! block = <total-bytes u32> <num-elements u16> <entry> ... <entry>
//! ```
//!
//! The bytes are Redis's listpack minus the `0xFF` terminator: the header
//! says what a full listpack would say (`total-bytes` counts the missing
//! terminator), so a listpack for RDB or DUMP is the block followed by one
//! `0xFF` byte ([`PackBlock::to_listpack_bytes`]), with no re-encoding.
//!
//! Invariants:
//! * `total-bytes - 1` bytes are in use (`used`); the allocation is exactly
//!   `grow_capacity(used)` bytes (jemalloc's size class of `used`, requested
//!   as such), so [`PackBlock::heap_bytes`] is exact and needs no stored
//!   capacity. Every change that moves `used` into another class
//!   reallocates (grow or shrink) at once;
//! * `num-elements` is the exact entry count (below 65535: the owners keep
//!   few elements here and move to another encoding long before);
//! * entries are canonical listpack entries (see [`crate::listpack`]).

use std::alloc::{alloc, dealloc, handle_alloc_error, realloc, Layout};
use std::ptr::NonNull;

use crate::listpack::{self, encode, Enc, InvalidListpack, Iter, Listpack, LpValue, HEADER_SIZE};
use crate::mem::grow_capacity;

/// One heap block holding listpack header + entries (no terminator).
pub struct PackBlock {
    ptr: NonNull<u8>,
}

// SAFETY: PackBlock owns its block exclusively (like a Box<[u8]>); no
// interior mutability, no shared ownership.
unsafe impl Send for PackBlock {}
// SAFETY: as above; &PackBlock only reads.
unsafe impl Sync for PackBlock {}

fn layout(cap: usize) -> Layout {
    Layout::from_size_align(cap, 1).expect("block size")
}

impl PackBlock {
    /// An empty block (6 header bytes in an 8-byte class).
    pub fn new() -> Self {
        Self::from_entries(&[], 0)
    }

    /// A block holding `count` entries whose bytes are `entries`.
    fn from_entries(entries: &[u8], count: usize) -> Self {
        let used = HEADER_SIZE + entries.len();
        assert!(used < u32::MAX as usize, "listpack over 4 GiB");
        assert!(count < u16::MAX as usize, "too many entries for a block");
        let cap = grow_capacity(used);
        // SAFETY: `cap` >= 8 > 0.
        let p = unsafe { alloc(layout(cap)) };
        let Some(ptr) = NonNull::new(p) else {
            handle_alloc_error(layout(cap))
        };
        let mut b = PackBlock { ptr };
        // SAFETY: the block has `cap >= used` bytes; nothing else refers
        // to it yet.
        unsafe {
            std::ptr::copy_nonoverlapping(entries.as_ptr(), p.add(HEADER_SIZE), entries.len());
        }
        b.set_header(used, count);
        b
    }

    /// Copies the entries of a listpack (its bytes without the terminator).
    pub fn from_listpack(lp: &Listpack) -> Self {
        let b = lp.as_bytes();
        Self::from_entries(&b[HEADER_SIZE..b.len() - 1], lp.len())
    }

    /// Validates serialized listpack bytes (e.g. from RDB) and copies them.
    pub fn from_listpack_bytes(b: &[u8]) -> Result<Self, InvalidListpack> {
        let n = Listpack::validate_bytes(b)?;
        if n >= u16::MAX as usize {
            return Err(InvalidListpack("too many entries for a block"));
        }
        Ok(Self::from_entries(&b[HEADER_SIZE..b.len() - 1], n))
    }

    /// A full listpack (header, entries, terminator) with the same bytes.
    pub fn to_listpack(&self) -> Listpack {
        Listpack::from_bytes(self.to_listpack_bytes()).expect("block holds a valid listpack")
    }

    /// The Redis listpack bytes: the block followed by `0xFF`.
    pub fn to_listpack_bytes(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.used() + 1);
        v.extend_from_slice(self.bytes());
        v.push(listpack::EOF);
        v
    }

    fn header(&self) -> [u8; HEADER_SIZE] {
        // SAFETY: every block has at least HEADER_SIZE initialized bytes.
        unsafe { *self.ptr.as_ptr().cast::<[u8; HEADER_SIZE]>() }
    }

    fn set_header(&mut self, used: usize, count: usize) {
        let mut h = [0u8; HEADER_SIZE];
        h[0..4].copy_from_slice(&((used + 1) as u32).to_le_bytes());
        h[4..6].copy_from_slice(&(count as u16).to_le_bytes());
        // SAFETY: the block has at least HEADER_SIZE bytes and we own it.
        unsafe { *self.ptr.as_ptr().cast::<[u8; HEADER_SIZE]>() = h };
    }

    /// Bytes in use (header + entries).
    #[inline]
    pub fn used(&self) -> usize {
        let h = self.header();
        u32::from_le_bytes(h[0..4].try_into().unwrap()) as usize - 1
    }

    /// Number of entries.
    #[inline]
    pub fn len(&self) -> usize {
        let h = self.header();
        u16::from_le_bytes(h[4..6].try_into().unwrap()) as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Header + entries, as a listpack has them before its terminator.
    #[inline]
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `used` bytes are initialized (invariant) and the slice
        // borrows &self, so the block stays alive and unchanged.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.used()) }
    }

    /// Heap bytes: the allocator class of the block (O(1), exact).
    #[inline]
    pub fn heap_bytes(&self) -> usize {
        grow_capacity(self.used())
    }

    /// Offset of the first entry.
    #[inline]
    pub fn first_offset(&self) -> usize {
        HEADER_SIZE
    }

    /// Offset just past the last entry (where a listpack has its `0xFF`).
    #[inline]
    pub fn end_offset(&self) -> usize {
        self.used()
    }

    /// Entry at byte offset `off` and the offset of the next entry.
    #[inline]
    pub fn entry_at(&self, off: usize) -> (LpValue<'_>, usize) {
        listpack::entry_at(self.bytes(), off)
    }

    /// Entries in order (both directions).
    pub fn iter(&self) -> Iter<'_> {
        Iter::over(self.bytes(), self.used(), self.len())
    }

    /// Replaces `remove` bytes at `off` by the concatenation of `parts` and
    /// sets the header to `count` entries.
    fn splice(&mut self, off: usize, remove: usize, parts: &[&[u8]], count: usize) {
        let old = self.used();
        debug_assert!(off >= HEADER_SIZE && off + remove <= old);
        let ins: usize = parts.iter().map(|p| p.len()).sum();
        let new = old - remove + ins;
        assert!(new < u32::MAX as usize, "listpack over 4 GiB");
        let (old_cap, new_cap) = (grow_capacity(old), grow_capacity(new));
        let tail = old - off - remove;
        // SAFETY: offsets stay within the allocation: the tail is moved
        // while the block has max(old_cap, new_cap) bytes (grow before the
        // move, shrink after it); realloc keeps the first min(old, new)
        // bytes, and the caller's `off + remove <= old`.
        unsafe {
            if new_cap > old_cap {
                self.resize(old_cap, new_cap);
            }
            let p = self.ptr.as_ptr();
            std::ptr::copy(p.add(off + remove), p.add(off + ins), tail);
            let mut at = off;
            for part in parts {
                std::ptr::copy_nonoverlapping(part.as_ptr(), p.add(at), part.len());
                at += part.len();
            }
            if new_cap < old_cap {
                self.resize(old_cap, new_cap);
            }
        }
        self.set_header(new, count);
    }

    /// # Safety
    /// `old_cap` must be the block's current allocation size.
    unsafe fn resize(&mut self, old_cap: usize, new_cap: usize) {
        // SAFETY: the block was allocated with layout(old_cap) (invariant);
        // new_cap > 0.
        let p = unsafe { realloc(self.ptr.as_ptr(), layout(old_cap), new_cap) };
        self.ptr = NonNull::new(p).unwrap_or_else(|| handle_alloc_error(layout(new_cap)));
    }

    fn write_enc(&mut self, off: usize, remove: usize, e: Enc<'_>, count: usize) -> usize {
        let enc = encode(e);
        let total = enc.total();
        self.splice(off, remove, &enc.parts(), count);
        total
    }

    /// Inserts an entry at byte offset `off` (an entry start or the end
    /// offset); returns the bytes inserted.
    pub(crate) fn insert_enc_at_offset(&mut self, off: usize, e: Enc<'_>) -> usize {
        let n = self.len() + 1;
        assert!(n < u16::MAX as usize, "too many entries for a block");
        self.write_enc(off, 0, e, n)
    }

    /// Replaces the entry at `off`; returns the size change in bytes.
    pub(crate) fn replace_enc_at_offset(&mut self, off: usize, e: Enc<'_>) -> isize {
        let old = self.entry_at(off).1 - off;
        let n = self.len();
        let new = self.write_enc(off, old, e, n);
        new as isize - old as isize
    }

    /// Deletes `n` entries from byte offset `off`; returns the bytes removed.
    pub fn delete_at_offset(&mut self, off: usize, n: usize) -> usize {
        let end_all = self.end_offset();
        let mut end = off;
        let mut k = 0;
        while k < n && end < end_all {
            end = self.entry_at(end).1;
            k += 1;
        }
        let count = self.len() - k;
        self.splice(off, end - off, &[], count);
        end - off
    }

    /// Hands the block over as a raw pointer (the keyspace's value cell).
    pub fn into_raw(self) -> *mut u8 {
        let p = self.ptr.as_ptr();
        std::mem::forget(self);
        p
    }

    /// Takes back a block given away by [`into_raw`](Self::into_raw).
    ///
    /// # Safety
    /// `p` must come from `into_raw` and not have been taken back since
    /// (one owner at a time).
    pub unsafe fn from_raw(p: *mut u8) -> Self {
        PackBlock {
            // SAFETY: into_raw only hands out non-null pointers.
            ptr: unsafe { NonNull::new_unchecked(p) },
        }
    }

    /// Structural check (tests): the bytes plus a terminator validate as
    /// a listpack with the header's count.
    pub fn validate(&self) -> Result<(), InvalidListpack> {
        let n = Listpack::validate_bytes(&self.to_listpack_bytes())?;
        if n != self.len() {
            return Err(InvalidListpack("header count"));
        }
        Ok(())
    }
}

impl Default for PackBlock {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for PackBlock {
    fn drop(&mut self) {
        // SAFETY: we own the block, allocated with layout(grow_capacity(used)).
        unsafe { dealloc(self.ptr.as_ptr(), layout(grow_capacity(self.used()))) }
    }
}

impl Clone for PackBlock {
    fn clone(&self) -> Self {
        let b = self.bytes();
        Self::from_entries(&b[HEADER_SIZE..], self.len())
    }
}

impl PartialEq for PackBlock {
    fn eq(&self, other: &Self) -> bool {
        self.bytes() == other.bytes()
    }
}

impl Eq for PackBlock {}

impl std::fmt::Debug for PackBlock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl PackBlock {
    /// Offers its block to the defragmenter (see [`crate::defrag`]).
    pub fn defrag(&mut self, d: &mut crate::defrag::Defrag) {
        // SAFETY: the block is ours, allocated with
        // `layout(grow_capacity(used))` (see `Drop`); the pointer is
        // replaced by the one `relocate` returns.
        self.ptr = unsafe { d.relocate(self.ptr, layout(grow_capacity(self.used()))) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn empty_block() {
        let b = PackBlock::new();
        assert_eq!(b.bytes(), &[7, 0, 0, 0, 0, 0]);
        assert_eq!(b.heap_bytes(), 8);
        assert_eq!(b.to_listpack_bytes(), Listpack::new().as_bytes());
        b.validate().unwrap();
    }

    #[derive(Debug, Clone)]
    enum Op {
        Insert(usize, Vec<u8>),
        Replace(usize, Vec<u8>),
        Delete(usize, usize),
    }

    fn elem() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            proptest::collection::vec(any::<u8>(), 0..80),
            (-70000i64..70000).prop_map(|i| i.to_string().into_bytes()),
            proptest::collection::vec(b'a'..=b'z', 60..300),
        ]
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (any::<usize>(), elem()).prop_map(|(i, e)| Op::Insert(i, e)),
            (any::<usize>(), elem()).prop_map(|(i, e)| Op::Replace(i, e)),
            (any::<usize>(), 1usize..4).prop_map(|(i, n)| Op::Delete(i, n)),
        ]
    }

    proptest! {
        /// The block and a `Listpack` given the same edits hold the same
        /// bytes (block + 0xFF == listpack), and the size class is exact.
        #[test]
        fn block_matches_listpack(ops in proptest::collection::vec(op(), 0..60)) {
            let mut b = PackBlock::new();
            let mut lp = Listpack::new();
            for o in ops {
                match o {
                    Op::Insert(i, e) => {
                        let i = i % (lp.len() + 1);
                        let off = lp.seek(i as isize).unwrap_or(lp.end_offset());
                        lp.insert_at_offset(off, &e);
                        b.insert_enc_at_offset(off, Enc::of(&e));
                    }
                    Op::Replace(i, e) if !lp.is_empty() => {
                        let off = lp.seek((i % lp.len()) as isize).unwrap();
                        let d1 = lp.replace_at_offset(off, &e);
                        let d2 = b.replace_enc_at_offset(off, Enc::of(&e));
                        prop_assert_eq!(d1, d2);
                    }
                    Op::Delete(i, n) if !lp.is_empty() => {
                        let off = lp.seek((i % lp.len()) as isize).unwrap();
                        let r1 = lp.delete_at_offset(off, n);
                        let r2 = b.delete_at_offset(off, n);
                        prop_assert_eq!(r1, r2);
                    }
                    _ => {}
                }
                prop_assert_eq!(b.to_listpack_bytes(), lp.as_bytes().to_vec());
                prop_assert_eq!(b.len(), lp.len());
                prop_assert_eq!(b.heap_bytes(), grow_capacity(lp.bytes_len() - 1));
                b.validate().unwrap();
                let fwd: Vec<_> = b.iter().map(|v| v.to_vec()).collect();
                let want: Vec<_> = lp.iter().map(|v| v.to_vec()).collect();
                prop_assert_eq!(&fwd, &want);
                let mut back: Vec<_> = b.iter().rev().map(|v| v.to_vec()).collect();
                back.reverse();
                prop_assert_eq!(&back, &want);
            }
            let c = b.clone();
            prop_assert_eq!(&c, &b);
            let b2 = PackBlock::from_listpack(&lp);
            prop_assert_eq!(&b2, &b);
            let b3 = PackBlock::from_listpack_bytes(lp.as_bytes()).unwrap();
            prop_assert_eq!(&b3, &b);
            // SAFETY: the pointer comes from into_raw just above.
            let b4 = unsafe { PackBlock::from_raw(c.into_raw()) };
            prop_assert_eq!(&b4, &b);
        }
    }
}
