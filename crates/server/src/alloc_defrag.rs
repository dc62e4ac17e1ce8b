//! jemalloc's side of active defragmentation (see `collections::defrag`):
//! the "should this block move" query and the move itself.
//!
//! * **The query** is `experimental.utilization.query` (jemalloc 5.3): for
//!   a pointer it gives the slab the block lives in (free and total
//!   regions), the same totals for the slab's bin (the size class in that
//!   arena), and the bin's current slab (the one new blocks come from). A
//!   block moves when its slab has free regions, is not the current slab,
//!   and is used no more than 1/8 above the bin's average slab: moving it
//!   then frees room in a sparse slab and fills a dense one. Redis's and
//!   Valkey's rule is the same test with the same 12.5% margin, except
//!   that their average counts only the bin's non-full slabs (from
//!   jemalloc's per-bin statistics); the query's live average
//!   counts full slabs too, so it is higher, more so as a pass fills slabs,
//!   and this rule moves a little more. Large allocations (no slab) never
//!   move; blocks above the largest small class ([`max_small_size`], the
//!   mover's `max_size`) are not even queried. The name is resolved to a MIB once.
//! * **The move** allocates the replacement in the old block's arena with
//!   `MALLOCX_TCACHE_NONE`, so it comes from the bin's fullest slabs
//!   rather than the thread cache (which would hand back a block of the
//!   same sparse slab), copies, and frees the old block also bypassing the
//!   cache, so its slab can empty and be returned. The size class is the
//!   same, so `used_memory` (counted by `alloc::Counting`) does not change.
//! * **A rebuild** (a structure that cannot move its block bit for bit,
//!   such as a hash table's bucket array, `collections::defrag_table`)
//!   gets its new block the same way (`Mover::alloc`) and frees the old
//!   one bypassing the cache (`Mover::free`).

use std::alloc::Layout;
use std::ffi::c_void;
use std::sync::OnceLock;

use tikv_jemalloc_sys as sys;

/// A resolved mallctl name.
struct Mib {
    mib: [usize; 8],
    len: usize,
}

fn mib(name: &std::ffi::CStr) -> Option<Mib> {
    let mut m = Mib {
        mib: [0; 8],
        len: 8,
    };
    // SAFETY: `mib` has room for `len` entries; the name is NUL-terminated.
    let rc = unsafe { sys::mallctlnametomib(name.as_ptr(), m.mib.as_mut_ptr(), &mut m.len) };
    (rc == 0).then_some(m)
}

fn query_mib() -> Option<&'static Mib> {
    static M: OnceLock<Option<Mib>> = OnceLock::new();
    M.get_or_init(|| mib(c"experimental.utilization.query"))
        .as_ref()
}

fn lookup_mib() -> Option<&'static Mib> {
    static M: OnceLock<Option<Mib>> = OnceLock::new();
    M.get_or_init(|| mib(c"arenas.lookup")).as_ref()
}

/// The query's output (`experimental.utilization.query`).
#[repr(C)]
#[derive(Default, Debug, Clone, Copy)]
pub struct Util {
    pub slabcur: usize,
    pub nfree: usize,
    pub nregs: usize,
    pub size: usize,
    pub bin_nfree: usize,
    pub bin_nregs: usize,
}

/// Utilisation of the slab holding `p` (None if the query failed).
pub fn utilization(p: *const u8) -> Option<Util> {
    let m = query_mib()?;
    let mut out = Util::default();
    let mut outlen = std::mem::size_of::<Util>();
    let mut ptr = p as *const c_void;
    // SAFETY: the output buffer has exactly the size jemalloc checks for
    // (one pointer and five size_t), the input is one pointer; the query
    // only reads jemalloc's metadata for the address.
    let rc = unsafe {
        sys::mallctlbymib(
            m.mib.as_ptr(),
            m.len,
            (&mut out as *mut Util).cast(),
            &mut outlen,
            (&mut ptr as *mut *const c_void).cast(),
            std::mem::size_of::<*const c_void>(),
        )
    };
    (rc == 0).then_some(out)
}

/// The decision, on a query's figures (see the module docs).
pub fn worth_moving(p: *const u8, u: &Util) -> bool {
    if u.nfree == 0 || u.nregs == 0 || u.bin_nregs == 0 {
        return false;
    }
    let a = p as usize;
    if u.slabcur != 0 && a >= u.slabcur && a < u.slabcur + u.size {
        return false;
    }
    let used = (u.nregs - u.nfree) as u128;
    let bin_used = (u.bin_nregs - u.bin_nfree) as u128;
    // used / nregs <= (1 + BIAS) * bin_used / bin_nregs, in integers.
    used * (u.bin_nregs as u128) * BIAS_DEN <= bin_used * (u.nregs as u128) * (BIAS_DEN + BIAS_NUM)
}

/// The margin over the bin's average use under which a slab still counts
/// as sparse: 1/8 (Redis's and Valkey's 12.5%). Without it a pass leaves
/// every slab that is a little above the average when its blocks are
/// visited, and the average rises as the pass empties slabs: measured on
/// `mem_scenarios frag` with 5M keys, the strict rule stopped at
/// `allocator_frag_ratio` 1.12-1.13 after a pass, this one at 1.05.
const BIAS_NUM: u128 = 1;
const BIAS_DEN: u128 = 8;

fn should_move(p: *const u8) -> bool {
    utilization(p).is_some_and(|u| worth_moving(p, &u))
}

/// The arena index holding `p`.
fn arena_of(p: *mut u8) -> Option<u32> {
    let m = lookup_mib()?;
    let mut ind: u32 = 0;
    let mut len = std::mem::size_of::<u32>();
    let mut ptr = p as *mut c_void;
    // SAFETY: `arenas.lookup` reads one pointer and writes one unsigned.
    let rc = unsafe {
        sys::mallctlbymib(
            m.mib.as_ptr(),
            m.len,
            (&mut ind as *mut u32).cast(),
            &mut len,
            (&mut ptr as *mut *mut c_void).cast(),
            std::mem::size_of::<*mut c_void>(),
        )
    };
    (rc == 0).then_some(ind)
}

/// The alignment flag jemalloc's Rust allocator would use for `layout`.
fn align_flags(layout: Layout) -> i32 {
    if layout.align() <= 16 && layout.align() <= layout.size() {
        0
    } else {
        sys::MALLOCX_ALIGN(layout.align())
    }
}

/// See `collections::defrag::Mover::move_block`.
///
/// # Safety
/// `old` is a live block of the global allocator (jemalloc) of `layout`.
unsafe fn move_block(old: *mut u8, layout: Layout) -> *mut u8 {
    let mut flags = align_flags(layout) | sys::MALLOCX_TCACHE_NONE;
    if let Some(a) = arena_of(old) {
        flags |= sys::MALLOCX_ARENA(a as usize);
    }
    // SAFETY: non-zero size (the caller never moves empty blocks); the
    // flags name a live arena and a valid alignment.
    let new = unsafe { sys::mallocx(layout.size(), flags) }.cast::<u8>();
    if new.is_null() {
        return new;
    }
    // SAFETY: both blocks hold at least `layout.size()` bytes and are
    // distinct; the old block is ours to free, with the same size and
    // alignment it was allocated with (sized deallocation).
    unsafe {
        std::ptr::copy_nonoverlapping(old, new, layout.size());
        sys::sdallocx(
            old.cast(),
            layout.size(),
            align_flags(layout) | sys::MALLOCX_TCACHE_NONE,
        );
    }
    new
}

/// See `collections::defrag::Mover::alloc`: like the replacement in
/// [`move_block`], from `near`'s arena and outside the thread cache.
///
/// # Safety
/// `layout` has a non-zero size; `near` is a live jemalloc block.
unsafe fn alloc_outside_cache(near: *const u8, layout: Layout) -> *mut u8 {
    let mut flags = align_flags(layout) | sys::MALLOCX_TCACHE_NONE;
    if let Some(a) = arena_of(near.cast_mut()) {
        flags |= sys::MALLOCX_ARENA(a as usize);
    }
    // SAFETY: non-zero size; the flags name a live arena and a valid
    // alignment.
    unsafe { sys::mallocx(layout.size(), flags) }.cast::<u8>()
}

/// See `collections::defrag::Mover::free`.
///
/// # Safety
/// `p` is a live jemalloc block of `layout`.
unsafe fn free_outside_cache(p: *mut u8, layout: Layout) {
    // SAFETY: the caller's block, freed with the size and alignment it was
    // allocated with.
    unsafe {
        sys::sdallocx(
            p.cast(),
            layout.size(),
            align_flags(layout) | sys::MALLOCX_TCACHE_NONE,
        )
    };
}

/// jemalloc's largest small size class (`arenas.bin.<nbins-1>.size`,
/// 14 KiB with 4 KiB pages): bigger allocations have no slab and never
/// move, so they are not offered (`Mover::max_size`). `None` when the
/// figures cannot be read.
pub fn max_small_size() -> Option<usize> {
    let mut nbins: u32 = 0;
    let mut len = std::mem::size_of::<u32>();
    // SAFETY: `arenas.nbins` writes one unsigned; nothing is written in.
    let rc = unsafe {
        sys::mallctl(
            c"arenas.nbins".as_ptr(),
            (&mut nbins as *mut u32).cast(),
            &mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    if rc != 0 || nbins == 0 {
        return None;
    }
    let name = std::ffi::CString::new(format!("arenas.bin.{}.size", nbins - 1)).ok()?;
    let mut size: usize = 0;
    let mut len = std::mem::size_of::<usize>();
    // SAFETY: `arenas.bin.<i>.size` writes one size_t; the name is
    // NUL-terminated.
    let rc = unsafe {
        sys::mallctl(
            name.as_ptr(),
            (&mut size as *mut usize).cast(),
            &mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    (rc == 0 && size > 0).then_some(size)
}

/// Installs jemalloc's mover for `collections::defrag` (call once at
/// startup, in the binary whose global allocator is jemalloc). Does
/// nothing when this jemalloc lacks the query.
pub fn install() {
    if query_mib().is_some() && lookup_mib().is_some() {
        collections::defrag::install(collections::defrag::Mover {
            should_move,
            move_block,
            alloc: alloc_outside_cache,
            free: free_outside_cache,
            max_size: max_small_size().unwrap_or(usize::MAX),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The largest small class is a slab class (several regions per
    /// slab); one byte more is a large allocation (no slab: never moved).
    #[test]
    fn max_small_size_is_the_last_slab_class() {
        let max = max_small_size().expect("jemalloc's bin sizes");
        assert!((4096..=1 << 20).contains(&max), "{max}");
        // SAFETY: plain jemalloc allocations, freed below.
        unsafe {
            let small = sys::mallocx(max, sys::MALLOCX_TCACHE_NONE).cast::<u8>();
            let large = sys::mallocx(max + 1, sys::MALLOCX_TCACHE_NONE).cast::<u8>();
            let us = utilization(small).expect("query");
            let ul = utilization(large).expect("query");
            assert!(us.nregs > 1, "{us:?}");
            assert!(!worth_moving(large, &ul), "{ul:?}");
            sys::sdallocx(small.cast(), max, sys::MALLOCX_TCACHE_NONE);
            sys::sdallocx(large.cast(), max + 1, sys::MALLOCX_TCACHE_NONE);
        }
    }

    /// The rebuild's allocation lands in the arena of the block it
    /// replaces, is a live jemalloc block of the size asked (its slab is
    /// known to the query), and frees like any block of its layout.
    #[test]
    fn rebuild_blocks_come_from_the_replaced_blocks_arena() {
        let layout = Layout::from_size_align(4096, 16).unwrap();
        // SAFETY: plain jemalloc allocations of `layout`, each freed once.
        unsafe {
            let old = sys::mallocx(4096, 0).cast::<u8>();
            let new = alloc_outside_cache(old, layout);
            assert!(!new.is_null());
            assert_eq!(arena_of(new), arena_of(old));
            assert!(sys::sallocx(new.cast(), 0) >= 4096);
            let u = utilization(new).expect("query");
            assert!(u.nregs >= 1 && u.size >= 4096, "{u:?}");
            new.write_bytes(7, 4096);
            free_outside_cache(new, layout);
            free_outside_cache(old, layout);
        }
    }

    /// Runs only with jemalloc as the global allocator (the test binary of
    /// this crate uses the system allocator unless told otherwise), so it
    /// allocates through jemalloc directly.
    #[test]
    fn sparse_slabs_are_moved_dense_ones_are_not() {
        assert!(
            query_mib().is_some(),
            "jemalloc has experimental.utilization"
        );
        let layout = Layout::from_size_align(48, 8).unwrap();
        // SAFETY: plain jemalloc allocations, freed below.
        let blocks: Vec<*mut u8> = (0..20_000)
            .map(|_| unsafe { sys::mallocx(48, sys::MALLOCX_TCACHE_NONE) }.cast())
            .collect();
        // Free 15 of 16: every slab becomes sparse except where the bin
        // allocates next.
        let mut kept = Vec::new();
        for (i, &p) in blocks.iter().enumerate() {
            if i % 16 == 0 {
                // SAFETY: written before being moved, to check the copy.
                unsafe { p.write_bytes(i as u8, 48) };
                kept.push((i, p));
            } else {
                // SAFETY: allocated above, freed once.
                unsafe { sys::sdallocx(p.cast(), 48, sys::MALLOCX_TCACHE_NONE) };
            }
        }
        // Fill the holes of some slabs again: those become dense.
        // SAFETY: as above.
        let fill: Vec<*mut u8> = (0..5_000)
            .map(|_| unsafe { sys::mallocx(48, sys::MALLOCX_TCACHE_NONE) }.cast())
            .collect();
        let mut moved = 0;
        for (i, p) in kept.iter_mut() {
            let u = utilization(*p).expect("query");
            assert!(u.nregs > 0 && u.nfree <= u.nregs, "{u:?}");
            if worth_moving(*p, &u) {
                // SAFETY: a live 48-byte jemalloc block.
                *p = unsafe { move_block(*p, layout) };
                moved += 1;
            }
            // SAFETY: live block of 48 bytes.
            let b = unsafe { std::slice::from_raw_parts(*p, 48) };
            assert!(b.iter().all(|&x| x == *i as u8), "bytes survive the move");
        }
        assert!(moved > 0, "some blocks sit in sparse slabs");
        for &(_, p) in &kept {
            // SAFETY: live blocks.
            unsafe { sys::sdallocx(p.cast(), 48, 0) };
        }
        for &p in &fill {
            // SAFETY: live blocks.
            unsafe { sys::sdallocx(p.cast(), 48, 0) };
        }
    }
}
