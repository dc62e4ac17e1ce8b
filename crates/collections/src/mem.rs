//! Allocation size helpers.
//!
//! [`grow_capacity`] rounds a requested byte count up to a size class shaped
//! like jemalloc's (16-byte steps up to 128, then four classes per doubling).
//! Growing buffers to such a class wastes nothing the allocator would not
//! waste anyway and turns most appends into in-place writes.

/// The size class (>= `n`) a growable byte buffer reserves.
pub const fn grow_capacity(n: usize) -> usize {
    if n <= 8 {
        return 8;
    }
    if n <= 128 {
        return (n + 15) & !15;
    }
    let k = usize::BITS - (n - 1).leading_zeros(); // 2^(k-1) < n <= 2^k
    let step = 1usize << (k - 3);
    (n + step - 1) & !(step - 1)
}

/// Bytes the allocator really hands out for a block of `n` bytes: its
/// jemalloc size class, or 0 when there is no block. Every `heap_bytes` in
/// this crate adds blocks up with this, so MEMORY USAGE matches the
/// allocator's count.
pub const fn block_bytes(n: usize) -> usize {
    if n == 0 {
        0
    } else {
        grow_capacity(n)
    }
}

/// Gives `buf` exactly the capacity of its length's size class, so its
/// capacity is what the allocator really holds for it (a buffer read from
/// a file or a socket may have been sized for more, or exactly for its
/// length): shrinks the room a larger past content left, or claims the
/// rest of the class (in place: the block already has that size).
pub fn fit_to_class(buf: &mut Vec<u8>) {
    let cap = grow_capacity(buf.len());
    if buf.capacity() > cap {
        buf.shrink_to(cap);
    } else if buf.capacity() < cap {
        buf.reserve_exact(cap - buf.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn fit_to_class_sets_the_class() {
        for (len, cap) in [
            (0, 100),
            (10, 10),
            (100, 4096),
            (1000, 1000),
            (5000, 1 << 20),
        ] {
            let mut v = Vec::with_capacity(cap);
            v.resize(len, 7u8);
            fit_to_class(&mut v);
            assert_eq!((v.len(), v.capacity()), (len, grow_capacity(len)));
            assert!(v.iter().all(|&b| b == 7));
        }
    }

    #[test]
    fn classes() {
        assert_eq!(grow_capacity(1), 8);
        assert_eq!(grow_capacity(9), 16);
        assert_eq!(grow_capacity(128), 128);
        assert_eq!(grow_capacity(129), 160);
        assert_eq!(grow_capacity(160), 160);
        assert_eq!(grow_capacity(161), 192);
        assert_eq!(grow_capacity(257), 320);
        assert_eq!(grow_capacity(4097), 5120);
        for n in 1..100_000 {
            let c = grow_capacity(n);
            assert!(c >= n && c <= n + n / 4 + 16);
        }
    }
}
