//! Where the memory goes: the figures behind INFO memory, MEMORY STATS and
//! MEMORY DOCTOR, computed once by [`MemOverhead::now`].
//!
//! Definitions (Redis 7.0's, applied to Petrel):
//! * `total.allocated` = `used_memory`: the exact count of the counting
//!   allocator (every live block at its jemalloc size class).
//! * `overhead.total` = startup + client buffers + the replication backlog
//!   and the replicas' output buffers + per database the keyspace tables. Redis counts its hash table buckets plus a dictEntry and
//!   a robj header per key there; Petrel's equivalent is the Dashtable (its
//!   directory and segments, whose 32-byte slots hold each key's cell and
//!   value cell), so that is `overhead.hashtable.main`. Petrel has no expires
//!   dictionary (a TTL lives in the key's own cell), so
//!   `overhead.hashtable.expires` is always 0.
//! * `dataset.bytes` = total - overhead: the heap blocks values and long keys
//!   own.
//! * Ratios: allocator fragmentation = active / allocated, allocator RSS =
//!   resident / active, RSS overhead = process RSS / resident, fragmentation
//!   = process RSS / used_memory.
//!
//! * `overhead.hashtable.slot-to-keys` (the cluster slot index) is always 0
//!   by design: a key's hash slot is the top bits of its table position, so
//!   there is no per-key slot index to pay for (Redis in cluster mode keeps
//!   one, linking every key into its slot's list).
//!
//! Petrel's own fields follow Redis's in MEMORY STATS (names start with
//! `petrel.`).
//!
//! Cost: O(partitions x databases + clients); no key is visited.

use std::sync::atomic::Ordering::Relaxed;

use store::keyspace::TableStats;

use crate::kernel::client::ClientShared;
use crate::kernel::memprobe::AllocStats;
use crate::kernel::server::Server;

/// Client memory, split (MEMORY STATS `petrel.clients.*`).
#[derive(Clone, Copy, Debug, Default)]
pub struct ClientMem {
    pub count: u64,
    pub query_buffers: u64,
    pub output_buffers: u64,
    pub argv: u64,
    pub structs: u64,
}

impl ClientMem {
    pub fn total(&self) -> u64 {
        self.query_buffers + self.output_buffers + self.argv + self.structs
    }
}

/// One snapshot of the memory figures.
#[derive(Clone, Debug)]
pub struct MemOverhead {
    pub used: u64,
    pub peak: u64,
    pub startup: u64,
    pub rss: u64,
    pub alloc: AllocStats,
    pub clients: ClientMem,
    /// `mem_clients_normal` (= `clients.total()`).
    pub clients_normal: u64,
    /// `mem_replication_backlog`.
    pub repl_backlog: u64,
    /// `mem_clients_slaves`: the replicas' output buffers.
    pub replica_buffers: u64,
    /// Databases with keys: (index, tables).
    pub dbs: Vec<(usize, TableStats)>,
    pub maxmemory: u64,
    pub maxmemory_policy: String,
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

impl MemOverhead {
    pub fn now(srv: &Server) -> MemOverhead {
        let probe = crate::kernel::memprobe::probe();
        let used = (probe.used)();
        let alloc = (probe.stats)();
        let peak = crate::kernel::metrics::metrics().note_memory(used);
        let mut clients = ClientMem::default();
        for c in srv.clients.all().iter() {
            clients.count += 1;
            clients.query_buffers += c.qbuf.load(Relaxed) + c.qbuf_free.load(Relaxed);
            clients.output_buffers += c.omem.load(Relaxed);
            clients.argv += c.argv_mem.load(Relaxed);
            clients.structs += std::mem::size_of::<ClientShared>() as u64;
        }
        let dbs = (0..srv.keyspace.databases())
            .map(|d| (d, srv.keyspace.table_stats(d)))
            .filter(|(_, t)| t.keys > 0)
            .collect();
        let conf = |name: &str, default: &str| {
            srv.config
                .get_matching(&[name.as_bytes()])
                .into_iter()
                .find(|(n, _)| n == name)
                .map_or_else(|| default.to_string(), |(_, v)| v)
        };
        MemOverhead {
            used,
            peak,
            startup: crate::kernel::memprobe::startup_memory(),
            rss: crate::kernel::memprobe::rss_bytes(),
            alloc,
            clients_normal: clients.total(),
            clients,
            repl_backlog: crate::services::replication::backlog_memory(srv),
            replica_buffers: crate::services::replication::replica_buffers_memory(srv),
            dbs,
            maxmemory: conf("maxmemory", "0").parse().unwrap_or(0),
            maxmemory_policy: conf("maxmemory-policy", "noeviction"),
        }
    }

    /// Keyspace table bytes over all databases.
    pub fn tables(&self) -> u64 {
        self.dbs.iter().map(|(_, t)| t.bytes as u64).sum()
    }

    pub fn keys(&self) -> u64 {
        self.dbs.iter().map(|(_, t)| t.keys as u64).sum()
    }

    pub fn overhead_total(&self) -> u64 {
        self.startup
            + self.clients_normal
            + self.repl_backlog
            + self.replica_buffers
            + self.tables()
    }

    pub fn dataset(&self) -> u64 {
        self.used.saturating_sub(self.overhead_total())
    }

    /// used - startup.
    pub fn net(&self) -> u64 {
        self.used.saturating_sub(self.startup)
    }

    pub fn dataset_perc(&self) -> f64 {
        ratio(self.dataset(), self.net()) * 100.0
    }

    pub fn peak_perc(&self) -> f64 {
        ratio(self.used, self.peak) * 100.0
    }

    pub fn bytes_per_key(&self) -> u64 {
        self.net().checked_div(self.keys()).unwrap_or(0)
    }

    pub fn allocator_frag(&self) -> f64 {
        ratio(self.alloc.active, self.alloc.allocated)
    }
    pub fn allocator_frag_bytes(&self) -> i64 {
        self.alloc.active as i64 - self.alloc.allocated as i64
    }
    pub fn allocator_rss(&self) -> f64 {
        ratio(self.alloc.resident, self.alloc.active)
    }
    pub fn allocator_rss_bytes(&self) -> i64 {
        self.alloc.resident as i64 - self.alloc.active as i64
    }
    pub fn rss_overhead(&self) -> f64 {
        ratio(self.rss, self.alloc.resident)
    }
    pub fn rss_overhead_bytes(&self) -> i64 {
        self.rss as i64 - self.alloc.resident as i64
    }
    pub fn fragmentation(&self) -> f64 {
        ratio(self.rss, self.used)
    }
    pub fn fragmentation_bytes(&self) -> i64 {
        self.rss as i64 - self.used as i64
    }
}

/// MEMORY DOCTOR: Redis's checks and report texts.
pub fn doctor_report(m: &MemOverhead) -> String {
    const MB: u64 = 1 << 20;
    if m.used < 5 * MB {
        return "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting.\n".to_string();
    }
    let mut issues: Vec<String> = Vec::new();
    if m.peak as f64 / m.used as f64 > 1.5 {
        issues.push(" * Peak memory: In the past this instance used more than 150% the memory that is currently using. The allocator is normally not able to release memory after a peak, so you can expect to see a big fragmentation ratio, however this is actually harmless and is only due to the memory peak, and if the Redis instance Resident Set Size (RSS) is currently bigger than expected, the memory will be used as soon as you fill the Redis instance with more data. If the memory peak was only occasional and you want to try to reclaim memory, please try the MEMORY PURGE command, otherwise the only other option is to shutdown and restart the instance.\n\n".to_string());
    }
    let ten_mb = 10 * MB as i64;
    if m.fragmentation() > 1.4 && m.fragmentation_bytes() > ten_mb {
        issues.push(format!(" * High total RSS: This instance has a memory fragmentation and RSS overhead greater than 1.4 (this means that the Resident Set Size of the Redis process is much larger than the sum of the logical allocations Redis performed). This problem is usually due either to a large peak memory (check if there is a peak memory entry above in the report) or may result from a workload that causes the allocator to fragment memory a lot. If the problem is a large peak memory, then there is no issue. Otherwise, make sure you are using the Jemalloc allocator and not the default libc malloc. Note: The currently used allocator is \"{}\".\n\n", crate::kernel::memprobe::probe().name));
    }
    if m.allocator_frag() > 1.1 && m.allocator_frag_bytes() > ten_mb {
        issues.push(" * High allocator fragmentation: This instance has an allocator external fragmentation greater than 1.1. This problem is usually due either to a large peak memory (check if there is a peak memory entry above in the report) or may result from a workload that causes the allocator to fragment memory a lot. You can try enabling 'activedefrag' config option.\n\n".to_string());
    }
    if m.allocator_rss() > 1.1 && m.allocator_rss_bytes() > ten_mb {
        issues.push(" * High allocator RSS overhead: This instance has an RSS memory overhead is greater than 1.1 (this means that the Resident Set Size of the allocator is much larger than the sum what the allocator actually holds). This problem is usually due to a large peak memory (check if there is a peak memory entry above in the report), you can try the MEMORY PURGE command to reclaim it.\n\n".to_string());
    }
    if m.rss_overhead() > 1.1 && m.rss_overhead_bytes() > ten_mb {
        issues.push(" * High process RSS overhead: This instance has non-allocator RSS memory overhead is greater than 1.1 (this means that the Resident Set Size of the Redis process is much larger than the RSS the allocator holds). This problem may be due to Lua scripts or Modules.\n\n".to_string());
    }
    if m.clients_normal / m.clients.count.max(1) > 200 * 1024 {
        issues.push(" * Big client buffers: The clients output buffers in this instance are greater than 200K per client (on average). This may result from different causes, like Pub/Sub clients subscribed to channels bot not receiving data fast enough, so that data piles on the Redis instance output buffer, or clients sending commands with large replies or very large sequences of commands in the same pipeline. Please use the CLIENT LIST command in order to investigate the issue if it causes problems in your instance, or to understand better why certain clients are using a big amount of memory.\n\n".to_string());
    }
    if issues.is_empty() {
        return "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.\n".to_string();
    }
    let mut s =
        String::from("Sam, I detected a few issues in this Redis instance memory implants:\n\n");
    for i in issues {
        s.push_str(&i);
    }
    s.push_str("I'm here to keep you safe, Sam. I want to help you.\n");
    s
}
