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

#[cfg(test)]
mod tests {
    use super::*;
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
