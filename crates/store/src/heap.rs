//! Heap blocks owned by compact objects, and the allocator's size classes.
//!
//! Two kinds of block, both allocated at exactly jemalloc's size class for
//! their length, so the memory a block costs is known without asking the
//! allocator, and slack inside the class is used when a string grows:
//!
//! * [`HeapStr`]: the bytes of a string value. A string of 1..=255 bytes
//!   has no header (its length is one byte of the value cell, see
//!   object.rs), so a 40-byte value costs a 48-byte block, not 48 + a
//!   header's worth; an empty or a 256+-byte one starts with its u32
//!   length (at most 1.6% of the block), which keeps 5 free bytes in the
//!   value cell for a TTL.
//! * [`HeapBytes`]: `[len: u32 LE][bytes...]`, for heap keys, whose cell has
//!   no room for a length next to the TTL.
//!
//! Each block is owned by exactly one object, which makes it movable
//! (defrag: allocate, copy, free).

use std::alloc::{alloc, dealloc, realloc, Layout};
use std::ptr::NonNull;

/// Header bytes before the payload.
pub const HDR: usize = 4;
/// Longest payload a heap block can hold.
pub const MAX_LEN: usize = u32::MAX as usize - 64;
const ALIGN: usize = 8;

/// jemalloc's size class for a request of `n` bytes (x86_64, 16-byte quantum,
/// four classes per doubling above 128 bytes).
pub const fn size_class(n: usize) -> usize {
    if n <= 8 {
        8
    } else if n <= 128 {
        (n + 15) & !15
    } else {
        let k = usize::BITS - 1 - (n - 1).leading_zeros(); // 2^k < n <= 2^(k+1)
        let step = 1usize << (k - 2);
        (n + step - 1) & !(step - 1)
    }
}

/// An owned, length-prefixed byte block.
#[repr(transparent)]
pub struct HeapBytes {
    ptr: NonNull<u8>,
}

// SAFETY: HeapBytes uniquely owns its allocation, like Box<[u8]>.
unsafe impl Send for HeapBytes {}
// SAFETY: shared access is read-only.
unsafe impl Sync for HeapBytes {}

fn layout(len: usize) -> Layout {
    Layout::from_size_align(size_class(HDR + len), ALIGN).expect("heap block too large")
}

impl HeapBytes {
    /// A block of `len` zero bytes.
    pub fn zeroed(len: usize) -> HeapBytes {
        assert!(len <= MAX_LEN, "string too long");
        let l = layout(len);
        // SAFETY: the layout has non-zero size.
        let p = unsafe { std::alloc::alloc_zeroed(l) };
        let ptr = NonNull::new(p).unwrap_or_else(|| std::alloc::handle_alloc_error(l));
        let mut h = HeapBytes { ptr };
        h.set_len(len);
        h
    }

    pub fn from_slice(b: &[u8]) -> HeapBytes {
        assert!(b.len() <= MAX_LEN, "string too long");
        let l = layout(b.len());
        // SAFETY: the layout has non-zero size.
        let p = unsafe { alloc(l) };
        let ptr = NonNull::new(p).unwrap_or_else(|| std::alloc::handle_alloc_error(l));
        let mut h = HeapBytes { ptr };
        h.set_len(b.len());
        h.as_mut_slice().copy_from_slice(b);
        h
    }

    #[inline]
    fn set_len(&mut self, len: usize) {
        // SAFETY: the block is at least 8 bytes, aligned to 8.
        unsafe { (self.ptr.as_ptr() as *mut u32).write(len as u32) }
    }

    #[inline]
    pub fn len(&self) -> usize {
        // SAFETY: the header is always initialized.
        unsafe { (self.ptr.as_ptr() as *const u32).read() as usize }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: HDR + len bytes are allocated and initialized.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr().add(HDR), self.len()) }
    }

    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        let n = self.len();
        // SAFETY: HDR + len bytes are allocated and initialized; we own them.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr().add(HDR), n) }
    }

    /// Bytes the allocator really gave this block.
    #[inline]
    pub fn alloc_size(&self) -> usize {
        size_class(HDR + self.len())
    }

    /// Payload bytes available without reallocating.
    pub fn capacity(&self) -> usize {
        self.alloc_size() - HDR
    }

    /// Changes the length; new bytes are zero. Reallocates only when the size
    /// class changes.
    pub fn resize(&mut self, new_len: usize) {
        assert!(new_len <= MAX_LEN, "string too long");
        let old_len = self.len();
        let old = layout(old_len);
        let new = layout(new_len);
        if old.size() != new.size() {
            // SAFETY: ptr was allocated with `old`; new size is non-zero.
            let p = unsafe { realloc(self.ptr.as_ptr(), old, new.size()) };
            self.ptr = NonNull::new(p).unwrap_or_else(|| std::alloc::handle_alloc_error(new));
        }
        if new_len > old_len {
            // SAFETY: the block holds at least HDR + new_len bytes.
            unsafe {
                std::ptr::write_bytes(self.ptr.as_ptr().add(HDR + old_len), 0, new_len - old_len)
            }
        }
        self.set_len(new_len);
    }

    /// Appends bytes.
    pub fn extend_from_slice(&mut self, b: &[u8]) {
        let old = self.len();
        self.resize(old + b.len());
        self.as_mut_slice()[old..].copy_from_slice(b);
    }

    /// Gives up ownership; the pointer must come back through [`from_raw`].
    #[inline]
    pub fn into_raw(self) -> *mut u8 {
        let p = self.ptr.as_ptr();
        std::mem::forget(self);
        p
    }

    /// # Safety
    /// `p` must come from [`HeapBytes::into_raw`] and not be owned elsewhere.
    #[inline]
    pub unsafe fn from_raw(p: *mut u8) -> HeapBytes {
        // SAFETY: guaranteed by the caller (non-null, owned block).
        let ptr = unsafe { NonNull::new_unchecked(p) };
        HeapBytes { ptr }
    }

    /// Borrows the payload of a raw block without taking ownership.
    ///
    /// # Safety
    /// `p` must point to a live block and the returned slice must not outlive it.
    #[inline]
    pub unsafe fn slice_from_raw<'a>(p: *const u8) -> &'a [u8] {
        // SAFETY: guaranteed by the caller.
        unsafe {
            let n = (p as *const u32).read() as usize;
            std::slice::from_raw_parts(p.add(HDR), n)
        }
    }
}

// ---------------------------------------------------------------------------
// HeapStr
// ---------------------------------------------------------------------------

/// Strings of at least this many bytes carry their length in the block.
pub const STR_LONG: usize = 256;

/// Header bytes of a string block of `len` bytes: a u32 LE length for the
/// empty string and strings of [`STR_LONG`] bytes or more, none otherwise
/// (their length, 1..=255, fits in one byte of the value cell).
#[inline]
pub const fn str_hdr(len: usize) -> usize {
    if len == 0 || len >= STR_LONG {
        HDR
    } else {
        0
    }
}

/// Bytes the allocator gives a string block of `len` bytes.
#[inline]
pub const fn str_block_size(len: usize) -> usize {
    size_class(str_hdr(len) + len)
}

fn str_layout(len: usize) -> Layout {
    Layout::from_size_align(str_block_size(len), ALIGN).expect("heap block too large")
}

/// An owned string block: `len` bytes in an allocation of
/// [`str_block_size`]`(len)` bytes. A string of 1..=255 bytes has no header
/// (the owner keeps the length, one byte), so a 40-byte value costs a
/// 48-byte block; an empty one or one of [`STR_LONG`] bytes or more starts
/// with its length (u32 LE), at most 1.6% of the block, which the owner
/// reads back with [`HeapStr::len_from_raw`]. [`HeapStr::into_raw`] /
/// [`HeapStr::from_raw`] pass pointer and length. Resizing across the
/// 256-byte line moves the bytes by the header's 4; no other edit does.
pub struct HeapStr {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: HeapStr uniquely owns its allocation, like Box<[u8]>.
unsafe impl Send for HeapStr {}
// SAFETY: shared access is read-only.
unsafe impl Sync for HeapStr {}

impl HeapStr {
    fn alloc(len: usize, zeroed: bool) -> HeapStr {
        assert!(len <= MAX_LEN, "string too long");
        let l = str_layout(len);
        // SAFETY: the layout has non-zero size (at least 8 bytes).
        let p = unsafe {
            if zeroed {
                std::alloc::alloc_zeroed(l)
            } else {
                alloc(l)
            }
        };
        let ptr = NonNull::new(p).unwrap_or_else(|| std::alloc::handle_alloc_error(l));
        let mut h = HeapStr { ptr, len };
        h.write_hdr();
        h
    }

    /// Writes the length header when this length has one.
    #[inline]
    fn write_hdr(&mut self) {
        if str_hdr(self.len) != 0 {
            // SAFETY: the block is at least 8 bytes; unaligned write.
            unsafe { (self.ptr.as_ptr() as *mut u32).write_unaligned(self.len as u32) }
        }
    }

    #[inline]
    fn data(&self) -> *mut u8 {
        // SAFETY: the header (if any) lies inside the block.
        unsafe { self.ptr.as_ptr().add(str_hdr(self.len)) }
    }

    /// A block of `len` zero bytes.
    pub fn zeroed(len: usize) -> HeapStr {
        Self::alloc(len, true)
    }

    pub fn from_slice(b: &[u8]) -> HeapStr {
        let h = Self::alloc(b.len(), false);
        // SAFETY: the block holds the header plus at least b.len() bytes and
        // does not overlap `b` (fresh allocation).
        unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), h.data(), b.len()) };
        h
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: len bytes after the header are allocated and initialized.
        unsafe { std::slice::from_raw_parts(self.data(), self.len) }
    }

    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: len bytes after the header are allocated and initialized;
        // we own them.
        unsafe { std::slice::from_raw_parts_mut(self.data(), self.len) }
    }

    /// Bytes the allocator really gave this block.
    #[inline]
    pub fn alloc_size(&self) -> usize {
        str_block_size(self.len)
    }

    /// Bytes available without reallocating.
    pub fn capacity(&self) -> usize {
        self.alloc_size() - str_hdr(self.len)
    }

    /// Changes the length; new bytes are zero. Reallocates only when the size
    /// class changes; moves the kept bytes (by 4) only when the header comes
    /// or goes (crossing 256 bytes, or to/from empty).
    pub fn resize(&mut self, new_len: usize) {
        assert!(new_len <= MAX_LEN, "string too long");
        let old_len = self.len;
        let (ho, hn) = (str_hdr(old_len), str_hdr(new_len));
        let old = str_layout(old_len);
        let new = str_layout(new_len);
        let keep = old_len.min(new_len);
        let shift = |p: *mut u8| {
            if ho != hn && keep > 0 {
                // SAFETY: both ranges lie inside the current block: when it
                // shrinks we move before reallocating (hn + keep <= new size
                // < old size), otherwise after (ho + keep <= old size <= new
                // size). `copy` allows overlap.
                unsafe { std::ptr::copy(p.add(ho), p.add(hn), keep) }
            }
        };
        if new.size() < old.size() {
            shift(self.ptr.as_ptr());
        }
        if old.size() != new.size() {
            // SAFETY: ptr was allocated with `old`; new size is non-zero.
            let p = unsafe { realloc(self.ptr.as_ptr(), old, new.size()) };
            self.ptr = NonNull::new(p).unwrap_or_else(|| std::alloc::handle_alloc_error(new));
        }
        if new.size() >= old.size() {
            shift(self.ptr.as_ptr());
        }
        if new_len > old_len {
            // SAFETY: the block holds hn + new_len bytes.
            unsafe {
                std::ptr::write_bytes(self.ptr.as_ptr().add(hn + old_len), 0, new_len - old_len)
            }
        }
        self.len = new_len;
        self.write_hdr();
    }

    /// Appends bytes.
    pub fn extend_from_slice(&mut self, b: &[u8]) {
        let old = self.len;
        self.resize(old + b.len());
        self.as_mut_slice()[old..].copy_from_slice(b);
    }

    /// Gives up ownership; the pointer must come back through
    /// [`HeapStr::from_raw`] with the same length.
    #[inline]
    pub fn into_raw(self) -> (*mut u8, usize) {
        let r = (self.ptr.as_ptr(), self.len);
        std::mem::forget(self);
        r
    }

    /// # Safety
    /// `p` and `len` must come from one [`HeapStr::into_raw`] and the block
    /// must not be owned elsewhere.
    #[inline]
    pub unsafe fn from_raw(p: *mut u8, len: usize) -> HeapStr {
        // SAFETY: guaranteed by the caller (non-null, owned block).
        let ptr = unsafe { NonNull::new_unchecked(p) };
        HeapStr { ptr, len }
    }

    /// The length stored in the header of a raw block whose length is 0 or
    /// at least [`STR_LONG`].
    ///
    /// # Safety
    /// `p` must point to a live block from [`HeapStr::into_raw`] of such a
    /// length (one with a header).
    #[inline]
    pub unsafe fn len_from_raw(p: *const u8) -> usize {
        // SAFETY: guaranteed by the caller; unaligned read of the header.
        unsafe { (p as *const u32).read_unaligned() as usize }
    }

    /// Borrows the bytes of a raw block without taking ownership.
    ///
    /// # Safety
    /// `p` must point to a live block of `len` initialized bytes (after its
    /// header, if that length has one) and the returned slice must not
    /// outlive it.
    #[inline]
    pub unsafe fn slice_from_raw<'a>(p: *const u8, len: usize) -> &'a [u8] {
        // SAFETY: guaranteed by the caller.
        unsafe { std::slice::from_raw_parts(p.add(str_hdr(len)), len) }
    }
}

impl Drop for HeapStr {
    fn drop(&mut self) {
        // SAFETY: the block was allocated with this layout (size depends only on len).
        unsafe { dealloc(self.ptr.as_ptr(), str_layout(self.len)) }
    }
}

impl Clone for HeapStr {
    fn clone(&self) -> Self {
        HeapStr::from_slice(self.as_slice())
    }
}

impl std::fmt::Debug for HeapStr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HeapStr({:?})", String::from_utf8_lossy(self.as_slice()))
    }
}

impl Drop for HeapBytes {
    fn drop(&mut self) {
        // SAFETY: the block was allocated with this layout (size depends only on len).
        unsafe { dealloc(self.ptr.as_ptr(), layout(self.len())) }
    }
}

impl Clone for HeapBytes {
    fn clone(&self) -> Self {
        HeapBytes::from_slice(self.as_slice())
    }
}

impl std::fmt::Debug for HeapBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "HeapBytes({:?})",
            String::from_utf8_lossy(self.as_slice())
        )
    }
}

// ---------------------------------------------------------------------------
// Defrag
// ---------------------------------------------------------------------------

impl HeapStr {
    /// Offers a raw string block to the defragmenter; returns its address
    /// afterwards (`p` when it stayed).
    ///
    /// # Safety
    /// `p` and `len` come from one [`HeapStr::into_raw`], the caller owns
    /// the block and, if the result differs, keeps only the result.
    pub unsafe fn defrag_raw(
        p: *mut u8,
        len: usize,
        d: &mut collections::defrag::Defrag,
    ) -> *mut u8 {
        // SAFETY: a string block of `len` bytes has `str_layout(len)`.
        unsafe {
            d.relocate(NonNull::new_unchecked(p), str_layout(len))
                .as_ptr()
        }
    }
}

impl HeapBytes {
    /// Offers a raw key block to the defragmenter; returns its address
    /// afterwards (`p` when it stayed).
    ///
    /// # Safety
    /// `p` comes from [`HeapBytes::into_raw`], the caller owns the block
    /// and, if the result differs, keeps only the result.
    pub unsafe fn defrag_raw(p: *mut u8, d: &mut collections::defrag::Defrag) -> *mut u8 {
        // SAFETY: the block starts with its length; its layout is `layout(len)`.
        unsafe {
            let n = (p as *const u32).read() as usize;
            d.relocate(NonNull::new_unchecked(p), layout(n)).as_ptr()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes() {
        let expect = [
            (1, 8),
            (8, 8),
            (9, 16),
            (17, 32),
            (33, 48),
            (128, 128),
            (129, 160),
            (160, 160),
            (161, 192),
            (257, 320),
            (513, 640),
            (4097, 5120),
            (16385, 20480),
        ];
        for (n, c) in expect {
            assert_eq!(size_class(n), c, "{n}");
        }
    }

    #[test]
    fn grow_shrink() {
        let mut h = HeapBytes::from_slice(b"hello");
        assert_eq!(h.alloc_size(), 16);
        h.extend_from_slice(b" world, this is longer");
        assert_eq!(h.as_slice(), b"hello world, this is longer");
        h.resize(3);
        assert_eq!(h.as_slice(), b"hel");
        h.resize(1000);
        assert_eq!(&h.as_slice()[..4], b"hel\0");
        assert!(h.as_slice()[3..].iter().all(|&b| b == 0));
        let c = h.clone();
        assert_eq!(c.as_slice(), h.as_slice());
        let z = HeapBytes::zeroed(0);
        assert!(z.is_empty());
    }

    #[test]
    fn heap_str_has_no_header() {
        let mut h = HeapStr::from_slice(&[b'7'; 40]);
        assert_eq!(h.alloc_size(), 48);
        assert_eq!(HeapStr::from_slice(&[1; 32]).alloc_size(), 32);
        assert_eq!(HeapStr::zeroed(0).alloc_size(), 8);
        h.extend_from_slice(b"abcdefgh");
        assert_eq!(h.len(), 48);
        assert_eq!(h.alloc_size(), 48);
        assert_eq!(&h.as_slice()[40..], b"abcdefgh");
        h.resize(1000);
        assert!(h.as_slice()[48..].iter().all(|&b| b == 0));
        h.resize(3);
        assert_eq!(h.as_slice(), b"777");
        let (p, n) = h.clone().into_raw();
        // SAFETY: p/n come from into_raw just above.
        let back = unsafe { HeapStr::from_raw(p, n) };
        assert_eq!(back.as_slice(), b"777");
        assert!(HeapStr::zeroed(5).as_slice().iter().all(|&b| b == 0));
        assert!(HeapStr::zeroed(0).is_empty());
    }
}
