//! Where memory figures come from: the allocator probe the binary installs
//! (`used_memory`, allocator statistics, purge), RSS, and the startup
//! baseline. Read by INFO, MEMORY, eviction and the cron.

use std::sync::OnceLock;

/// Allocator statistics (INFO `allocator_*`, MEMORY STATS `allocator.*`).
#[derive(Clone, Copy, Debug, Default)]
pub struct AllocStats {
    /// Bytes the allocator handed out (all callers, C code included).
    pub allocated: u64,
    /// Bytes in pages the allocator holds active (allocated + fragmentation).
    pub active: u64,
    /// Bytes the allocator keeps resident.
    pub resident: u64,
}

/// Where `used_memory` and the allocator figures come from. The binary
/// installs jemalloc's (with an exact counting allocator); without it (unit
/// tests) glibc's `mallinfo2` stands in.
#[derive(Clone, Copy, Debug)]
pub struct MemProbe {
    /// `mem_allocator` field, e.g. "libc" or "jemalloc-5.3.0".
    pub name: &'static str,
    /// `used_memory`: bytes of the live blocks, O(threads).
    pub used: fn() -> u64,
    /// The allocator's own statistics (may cost a refresh).
    pub stats: fn() -> AllocStats,
    /// MEMORY PURGE: returns dirty pages to the OS; false on failure.
    pub purge: fn() -> bool,
    /// MEMORY MALLOC-STATS text.
    pub malloc_stats: fn() -> String,
    /// `jemalloc-bg-thread`: turns the allocator's background purging
    /// thread on or off; false when the allocator has none.
    pub background_thread: fn(bool) -> bool,
}

static PROBE: OnceLock<MemProbe> = OnceLock::new();

/// Installs the allocator probe (call once at startup, before serving).
pub fn set_mem_probe(p: MemProbe) -> bool {
    PROBE.set(p).is_ok()
}

/// The installed probe.
pub fn probe() -> &'static MemProbe {
    PROBE.get_or_init(|| MemProbe {
        name: "libc",
        used: libc_allocated,
        stats: || AllocStats {
            allocated: libc_allocated(),
            active: libc_active(),
            resident: rss_bytes(),
        },
        purge: || {
            // SAFETY: malloc_trim has no preconditions.
            unsafe { libc::malloc_trim(0) };
            true
        },
        malloc_stats: || "Stats not supported for the current allocator".to_string(),
        background_thread: |_| false,
    })
}

fn libc_allocated() -> u64 {
    // SAFETY: mallinfo2 only reads glibc's allocator statistics.
    let mi = unsafe { libc::mallinfo2() };
    (mi.uordblks + mi.hblkhd) as u64
}

fn libc_active() -> u64 {
    // SAFETY: as above.
    let mi = unsafe { libc::mallinfo2() };
    (mi.arena + mi.hblkhd) as u64
}

/// Bytes currently allocated by the process (INFO `used_memory`): exact
/// under the binary's counting allocator, and cheap (a sum over per-thread
/// counters), so it may be called before every write.
pub fn used_memory() -> u64 {
    (probe().used)()
}

/// Resident set size from /proc/self/statm.
pub fn rss_bytes() -> u64 {
    let pages = std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .unwrap_or(0);
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    pages * page.max(0) as u64
}

/// `used_memory` at the time the server was created, for `used_memory_startup`.
static STARTUP_MEMORY: OnceLock<u64> = OnceLock::new();

/// Records the baseline memory (called when the server starts; lazily otherwise).
pub fn note_startup_memory() {
    STARTUP_MEMORY.get_or_init(used_memory);
}

/// `used_memory_startup` (taken now if the baseline was never noted).
pub fn startup_memory() -> u64 {
    *STARTUP_MEMORY.get_or_init(used_memory)
}
