//! `INFO [section ...]`: Redis's sections and field names, every value
//! taken from what this process really does.
//!
//! * Persistence: real figures of the RDB saves and loads
//!   (`kernel::persistence`); Petrel does not fork, so the `*cow*` fields
//!   report the bytes a running save holds beyond the dataset. No AOF yet.
//! * Memory: `used_memory` comes through [`MemProbe`]: the binary's counting
//!   allocator (exact, every block by its jemalloc size class), glibc's
//!   `mallinfo2` in unit tests; RSS from `/proc/self/statm`. The overhead and
//!   ratio fields are computed by [`crate::services::memory::MemOverhead`], as
//!   MEMORY STATS reports them.
//! * CPU: `getrusage` for the process, its children and the calling thread
//!   (Petrel has no single main thread; the `_main_thread` fields describe
//!   the worker thread that ran INFO).
//! * Instantaneous rates come from the samples the cron takes ([`crate::kernel::metrics`]).
//!
//! Text uses `\r\n` line ends, a blank line between sections and none after
//! the last, as Redis does.

use std::fmt::Write as _;
use std::sync::atomic::Ordering::Relaxed;

use crate::kernel::ctx::Ctx;
use crate::kernel::memprobe::probe;
use crate::kernel::server::Server;
use crate::kernel::spec::{flag, CommandSpec, Docs};

pub const COMMANDS: &[CommandSpec] = &[CommandSpec {
    acl: &["dangerous"],
    docs: Docs::new("O(1)", "Get information and statistics about the server"),
    ..CommandSpec::new(
        "info",
        -1,
        flag::LOADING | flag::STALE | flag::SENTINEL_OK,
        info,
    )
}];

fn total_system_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("MemTotal:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map(|kb| kb * 1024)
        .unwrap_or(0)
}

/// Redis's `bytesToHuman`.
pub fn bytes_to_human(n: u64) -> String {
    let d = n as f64;
    const K: f64 = 1024.0;
    if n < 1024 {
        format!("{n}B")
    } else if d < K * K {
        format!("{:.2}K", d / K)
    } else if d < K * K * K {
        format!("{:.2}M", d / (K * K))
    } else if d < K * K * K * K {
        format!("{:.2}G", d / (K * K * K))
    } else if d < K * K * K * K * K {
        format!("{:.2}T", d / (K * K * K * K))
    } else if d < K * K * K * K * K * K {
        format!("{:.2}P", d / (K * K * K * K * K))
    } else {
        format!("{n}B")
    }
}

fn rusage(who: libc::c_int) -> (String, String) {
    // SAFETY: getrusage writes into the zeroed struct we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer to a live rusage.
    let ok = unsafe { libc::getrusage(who, &mut ru) } == 0;
    if !ok {
        return ("0.000000".into(), "0.000000".into());
    }
    let f = |t: libc::timeval| format!("{}.{:06}", t.tv_sec, t.tv_usec);
    (f(ru.ru_stime), f(ru.ru_utime))
}

/// Which sections a request selects.
#[derive(Default, Debug, PartialEq, Eq)]
struct Selection {
    sections: Vec<&'static str>,
}

/// Sections in output order.
const ALL_SECTIONS: &[&str] = &[
    "server",
    "clients",
    "memory",
    "persistence",
    "stats",
    "replication",
    "cpu",
    "modules",
    "commandstats",
    "errorstats",
    "latencystats",
    "cluster",
    "keyspace",
    "keysizes",
];

const DEFAULT_EXCLUDED: &[&str] = &["commandstats", "latencystats"];

/// Sections only their own name selects (not `default`, `all` nor
/// `everything`, whose output matches Redis 7.0's).
const BY_NAME_ONLY: &[&str] = &["keysizes"];

fn select(args: &[&[u8]]) -> Selection {
    let mut want: Vec<String> = args
        .iter()
        .map(|a| String::from_utf8_lossy(a).to_ascii_lowercase())
        .collect();
    if want.is_empty() {
        want.push("default".into());
    }
    let mut sections = Vec::new();
    for &s in ALL_SECTIONS {
        let on = want.iter().any(|w| match w.as_str() {
            _ if BY_NAME_ONLY.contains(&s) => w == s,
            "all" | "everything" => true,
            "default" => !DEFAULT_EXCLUDED.contains(&s),
            w => w == s,
        });
        if on {
            sections.push(s);
        }
    }
    Selection { sections }
}

/// Per-database key counts: `db0:keys=1,expires=0,avg_ttl=0` lines, for
/// databases holding at least one key.
pub fn keyspace_info(srv: &Server) -> String {
    let mut t = String::new();
    for db in 0..srv.keyspace.databases() {
        let i = srv.keyspace.db_info(db);
        if i.keys > 0 {
            t.push_str(&format!(
                "db{db}:keys={},expires={},avg_ttl={}\r\n",
                i.keys, i.expires, i.avg_ttl
            ));
        }
    }
    t
}

/// The whole INFO text for `args` (section names, possibly none).
pub fn info_text(
    srv: &Server,
    settings: &crate::kernel::config::Settings,
    args: &[&[u8]],
) -> String {
    let sel = select(args);
    let mut parts: Vec<String> = Vec::new();
    for s in sel.sections {
        let mut t = String::new();
        match s {
            "server" => server_section(srv, settings, &mut t),
            "clients" => clients_section(srv, settings, &mut t),
            "memory" => memory_section(srv, &mut t),
            "persistence" => persistence_section(srv, settings, &mut t),
            "stats" => stats_section(srv, &mut t),
            "replication" => replication_section(srv, &mut t),
            "cpu" => cpu_section(&mut t),
            "modules" => t.push_str("# Modules\r\n"),
            "commandstats" => commandstats_section(srv, &mut t),
            "errorstats" => errorstats_section(srv, &mut t),
            "latencystats" => latencystats_section(srv, settings, &mut t),
            "cluster" => t.push_str(if settings.cluster.enabled {
                "# Cluster\r\ncluster_enabled:1\r\n"
            } else {
                "# Cluster\r\ncluster_enabled:0\r\n"
            }),
            "keyspace" => {
                t.push_str("# Keyspace\r\n");
                t.push_str(&keyspace_info(srv));
            }
            "keysizes" => crate::services::keysizes::keysizes_section(srv, &mut t),
            _ => {}
        }
        parts.push(t);
    }
    parts.join("\r\n")
}

fn info(ctx: &mut Ctx, args: &[&[u8]]) {
    let text = info_text(ctx.srv, ctx.settings, &args[1..]);
    ctx.out.verbatim(b"txt", text.as_bytes());
}

macro_rules! field {
    ($t:expr, $name:expr, $($arg:tt)*) => {{
        let _ = write!($t, concat!($name, ":"));
        let _ = write!($t, $($arg)*);
        $t.push_str("\r\n");
    }};
}

fn uname() -> String {
    // SAFETY: uname fills the zeroed struct we own.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer.
    if unsafe { libc::uname(&mut u) } != 0 {
        return "Linux".into();
    }
    let f = |b: &[libc::c_char]| {
        let bytes: Vec<u8> = b
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    format!("{} {} {}", f(&u.sysname), f(&u.release), f(&u.machine))
}

fn server_section(srv: &Server, s: &crate::kernel::config::Settings, t: &mut String) {
    let now_us = crate::base::clock::unix_time_us();
    let uptime = srv.started.elapsed().as_secs();
    t.push_str("# Server\r\n");
    field!(t, "redis_version", "{}", crate::REDIS_VERSION);
    field!(t, "redis_git_sha1", "00000000");
    field!(t, "redis_git_dirty", "0");
    field!(t, "redis_build_id", "{}", build_id());
    field!(t, "redis_mode", "standalone");
    field!(t, "os", "{}", uname());
    field!(t, "arch_bits", "{}", usize::BITS);
    field!(t, "monotonic_clock", "POSIX clock_gettime");
    field!(t, "multiplexing_api", "epoll");
    field!(t, "atomicvar_api", "c11-builtin");
    field!(t, "gcc_version", "0.0.0");
    field!(t, "process_id", "{}", std::process::id());
    field!(t, "process_supervised", "no");
    field!(t, "run_id", "{}", srv.run_id);
    field!(t, "tcp_port", "{}", srv.tcp_port.load(Relaxed));
    field!(t, "server_time_usec", "{now_us}");
    field!(t, "uptime_in_seconds", "{uptime}");
    field!(t, "uptime_in_days", "{}", uptime / 86400);
    field!(t, "hz", "{}", s.hz);
    field!(t, "configured_hz", "{}", s.hz);
    field!(t, "lru_clock", "{}", (now_us / 1_000_000) & ((1 << 24) - 1));
    field!(t, "executable", "{}", srv.executable);
    field!(
        t,
        "config_file",
        "{}",
        srv.config
            .file
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default()
    );
    field!(t, "io_threads_active", "0");
    field!(t, "petrel_version", "{}", crate::PETREL_VERSION);
    field!(t, "petrel_threads", "{}", srv.hub.worker_count());
    // Partitions stopped by a fault (store::partlock): the other sections
    // count the served partitions only. Shown only when there are any.
    let stopped = srv.keyspace.stopped_partitions();
    if !stopped.is_empty() {
        let list: Vec<String> = stopped.iter().map(|p| p.to_string()).collect();
        field!(t, "petrel_stopped_partitions", "{}", list.join(","));
    }
}

fn build_id() -> String {
    // A stable id for this build: FNV-1a of the version strings.
    let mut h: u64 = 0xcbf29ce484222325;
    for b in crate::PETREL_VERSION
        .bytes()
        .chain(crate::REDIS_VERSION.bytes())
    {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    format!("{:015x}", h >> 4)
}

fn clients_section(srv: &Server, s: &crate::kernel::config::Settings, t: &mut String) {
    let clients = srv.clients.all();
    let max_in = clients
        .iter()
        .map(|c| c.qbuf.load(Relaxed) + c.qbuf_free.load(Relaxed))
        .max()
        .unwrap_or(0);
    let max_out = clients
        .iter()
        .map(|c| c.omem.load(Relaxed))
        .max()
        .unwrap_or(0);
    t.push_str("# Clients\r\n");
    field!(t, "connected_clients", "{}", clients.len());
    field!(t, "cluster_connections", "0");
    field!(t, "maxclients", "{}", s.maxclients);
    field!(t, "client_recent_max_input_buffer", "{max_in}");
    field!(t, "client_recent_max_output_buffer", "{max_out}");
    field!(
        t,
        "blocked_clients",
        "{}",
        srv.stats.blocked_clients.load(Relaxed)
    );
    field!(t, "tracking_clients", "{}", srv.tracking.clients());
    field!(t, "clients_in_timeout_table", "0");
}

fn memory_section(srv: &Server, t: &mut String) {
    let m = crate::services::memory::MemOverhead::now(srv);
    let (used, peak, rss, a) = (m.used, m.peak, m.rss, m.alloc);
    let sys = total_system_memory();
    t.push_str("# Memory\r\n");
    field!(t, "used_memory", "{used}");
    field!(t, "used_memory_human", "{}", bytes_to_human(used));
    field!(t, "used_memory_rss", "{rss}");
    field!(t, "used_memory_rss_human", "{}", bytes_to_human(rss));
    field!(t, "used_memory_peak", "{peak}");
    field!(t, "used_memory_peak_human", "{}", bytes_to_human(peak));
    field!(t, "used_memory_peak_perc", "{:.2}%", m.peak_perc());
    field!(t, "used_memory_overhead", "{}", m.overhead_total());
    field!(t, "used_memory_startup", "{}", m.startup);
    field!(t, "used_memory_dataset", "{}", m.dataset());
    field!(t, "used_memory_dataset_perc", "{:.2}%", m.dataset_perc());
    field!(t, "allocator_allocated", "{}", a.allocated);
    field!(t, "allocator_active", "{}", a.active);
    field!(t, "allocator_resident", "{}", a.resident);
    field!(t, "total_system_memory", "{sys}");
    field!(t, "total_system_memory_human", "{}", bytes_to_human(sys));
    // The Lua engines (kernel::scripting keeps their figures current, so
    // INFO never waits for a running script).
    let sc = srv.scripting.counts();
    let vm_eval = sc.eval_vm_bytes as u64;
    let vm_total = vm_eval + sc.functions_vm_bytes as u64;
    let scripts = (sc.scripts_bytes + sc.functions_bytes) as u64;
    field!(t, "used_memory_lua", "{vm_eval}");
    field!(t, "used_memory_vm_eval", "{vm_eval}");
    field!(t, "used_memory_lua_human", "{}", bytes_to_human(vm_eval));
    field!(t, "used_memory_scripts_eval", "{}", sc.scripts_bytes);
    field!(t, "number_of_cached_scripts", "{}", sc.cached_scripts);
    field!(t, "number_of_functions", "{}", sc.functions);
    field!(t, "number_of_libraries", "{}", sc.libraries);
    field!(t, "used_memory_vm_functions", "{}", sc.functions_vm_bytes);
    field!(t, "used_memory_vm_total", "{vm_total}");
    field!(
        t,
        "used_memory_vm_total_human",
        "{}",
        bytes_to_human(vm_total)
    );
    field!(t, "used_memory_functions", "{}", sc.functions_bytes);
    field!(t, "used_memory_scripts", "{scripts}");
    field!(
        t,
        "used_memory_scripts_human",
        "{}",
        bytes_to_human(scripts)
    );
    let maxmemory = srv.eviction.maxmemory();
    field!(t, "maxmemory", "{maxmemory}");
    field!(t, "maxmemory_human", "{}", bytes_to_human(maxmemory));
    field!(t, "maxmemory_policy", "{}", srv.eviction.policy_name());
    field!(t, "allocator_frag_ratio", "{:.2}", m.allocator_frag());
    field!(t, "allocator_frag_bytes", "{}", m.allocator_frag_bytes());
    field!(t, "allocator_rss_ratio", "{:.2}", m.allocator_rss());
    field!(t, "allocator_rss_bytes", "{}", m.allocator_rss_bytes());
    field!(t, "rss_overhead_ratio", "{:.2}", m.rss_overhead());
    field!(t, "rss_overhead_bytes", "{}", m.rss_overhead_bytes());
    field!(t, "mem_fragmentation_ratio", "{:.2}", m.fragmentation());
    field!(t, "mem_fragmentation_bytes", "{}", m.fragmentation_bytes());
    field!(t, "mem_not_counted_for_evict", "0");
    field!(t, "mem_replication_backlog", "{}", m.repl_backlog);
    field!(
        t,
        "mem_total_replication_buffers",
        "{}",
        m.repl_backlog + m.replica_buffers
    );
    field!(t, "mem_clients_slaves", "{}", m.replica_buffers);
    field!(t, "mem_clients_normal", "{}", m.clients_normal);
    field!(t, "mem_cluster_links", "0");
    field!(t, "mem_aof_buffer", "0");
    field!(t, "mem_allocator", "{}", probe().name);
    field!(
        t,
        "active_defrag_running",
        "{}",
        srv.defrag
            .running_pct
            .load(std::sync::atomic::Ordering::Relaxed)
    );
    field!(t, "lazyfree_pending_objects", "{}", srv.lazyfree.pending());
    field!(t, "lazyfreed_objects", "{}", srv.lazyfree.freed());
}

fn persistence_section(srv: &Server, _s: &crate::kernel::config::Settings, t: &mut String) {
    let p = &srv.persistence;
    let now_ms = crate::base::clock::unix_time_ms();
    let loading = p.is_loading();
    // The background save in progress: (keys done, keys at the cut,
    // bytes held, peak held, seconds running). Petrel does not fork: the
    // "cow" fields report the bytes the save holds beyond the dataset
    // (encoded, waiting for the disk), which is what a fork's copied
    // pages cost Redis.
    let running = p.with_running(|r| {
        (
            r.control.keys_done(),
            r.control.keys_total(),
            r.control.held_bytes(),
            r.control.peak_bytes(),
            now_ms.saturating_sub(r.started_ms) / 1000,
        )
    });
    let (done, total, held, peak, secs) = running.unwrap_or((0, 0, 0, 0, 0));
    t.push_str("# Persistence\r\n");
    // Redis 7.0: `loading` is the blocking kind only; the `loading_*`
    // progress fields below show for both.
    field!(t, "loading", "{}", p.is_blocking_loading() as u8);
    field!(t, "async_loading", "{}", p.is_async_loading() as u8);
    field!(t, "current_cow_peak", "{peak}");
    field!(t, "current_cow_size", "{held}");
    field!(t, "current_cow_size_age", "0");
    let perc = if total > 0 {
        done as f64 * 100.0 / total as f64
    } else {
        0.0
    };
    field!(t, "current_fork_perc", "{perc:.2}");
    field!(t, "current_save_keys_processed", "{done}");
    field!(t, "current_save_keys_total", "{total}");
    field!(
        t,
        "rdb_changes_since_last_save",
        "{}",
        p.changes_since_save(srv.stats.dirty.load(Relaxed))
    );
    field!(t, "rdb_bgsave_in_progress", "{}", running.is_some() as u8);
    field!(t, "rdb_last_save_time", "{}", p.lastsave.load(Relaxed));
    let ok = p.last_bgsave_ok.load(Relaxed);
    field!(
        t,
        "rdb_last_bgsave_status",
        "{}",
        if ok { "ok" } else { "err" }
    );
    field!(
        t,
        "rdb_last_bgsave_time_sec",
        "{}",
        p.last_bgsave_secs.load(Relaxed)
    );
    let current: i64 = if running.is_some() { secs as i64 } else { -1 };
    field!(t, "rdb_current_bgsave_time_sec", "{current}");
    field!(t, "rdb_saves", "{}", p.saves.load(Relaxed));
    field!(t, "rdb_last_cow_size", "{}", p.last_cow.load(Relaxed));
    field!(
        t,
        "rdb_last_load_keys_expired",
        "{}",
        p.load_keys_expired.load(Relaxed)
    );
    field!(
        t,
        "rdb_last_load_keys_loaded",
        "{}",
        p.load_keys_loaded.load(Relaxed)
    );
    crate::services::aof::info_fields(srv, t);
    if loading {
        let l = &p.loading;
        let total = l.total_bytes.load(Relaxed);
        let loaded = l.loaded_bytes.load(Relaxed);
        let start = l.start.load(Relaxed);
        let elapsed = (now_ms / 1000).saturating_sub(start);
        let used_mem = l.rdb_used_mem.load(Relaxed);
        // Redis 7.0's figures: against the length when it is known, else
        // (a payload streamed with an EOF mark) against the `used-mem`
        // the RDB announced, a rough guess kept below 100%.
        let (perc, remaining) = if total > 0 {
            (
                loaded as f64 * 100.0 / total as f64,
                total as i64 - loaded as i64,
            )
        } else if used_mem > 0 {
            (
                (loaded as f64 * 100.0 / used_mem as f64).min(99.99),
                (used_mem as i64 - loaded as i64).max(1),
            )
        } else {
            (0.0, 1)
        };
        // Redis's estimate: a fake second until there is something to go by.
        let eta = if elapsed == 0 {
            1
        } else {
            elapsed as i64 * remaining / (loaded as i64 + 1)
        };
        field!(t, "loading_start_time", "{start}");
        field!(t, "loading_total_bytes", "{total}");
        field!(t, "loading_rdb_used_mem", "{used_mem}");
        field!(t, "loading_loaded_bytes", "{loaded}");
        field!(t, "loading_loaded_perc", "{perc:.2}");
        field!(t, "loading_eta_seconds", "{eta}");
    }
}

fn stats_section(srv: &Server, t: &mut String) {
    let st = &srv.stats;
    let m = crate::kernel::metrics::metrics();
    let g = |a: &std::sync::atomic::AtomicU64| a.load(Relaxed);
    t.push_str("# Stats\r\n");
    field!(
        t,
        "total_connections_received",
        "{}",
        g(&st.total_connections_received)
    );
    field!(t, "total_commands_processed", "{}", srv.table.total_calls());
    field!(t, "instantaneous_ops_per_sec", "{}", m.ops_per_sec());
    field!(t, "total_net_input_bytes", "{}", g(&st.net_input_bytes));
    field!(t, "total_net_output_bytes", "{}", g(&st.net_output_bytes));
    let rs = &srv.replication.master.stats;
    field!(
        t,
        "total_net_repl_input_bytes",
        "{}",
        g(&rs.net_repl_input_bytes)
    );
    field!(
        t,
        "total_net_repl_output_bytes",
        "{}",
        g(&rs.net_repl_output_bytes)
    );
    field!(t, "instantaneous_input_kbps", "{:.2}", m.input_kbps());
    field!(t, "instantaneous_output_kbps", "{:.2}", m.output_kbps());
    field!(t, "instantaneous_input_repl_kbps", "0.00");
    field!(t, "instantaneous_output_repl_kbps", "0.00");
    field!(t, "rejected_connections", "{}", g(&st.rejected_connections));
    field!(t, "sync_full", "{}", g(&rs.sync_full));
    field!(t, "sync_partial_ok", "{}", g(&rs.sync_partial_ok));
    field!(t, "sync_partial_err", "{}", g(&rs.sync_partial_err));
    let ks = srv.keyspace.stats();
    field!(t, "expired_keys", "{}", ks.expired_keys);
    field!(t, "expired_stale_perc", "0.00");
    field!(
        t,
        "expired_time_cap_reached_count",
        "{}",
        ks.expire_time_cap_reached
    );
    field!(
        t,
        "expire_cycle_cpu_milliseconds",
        "{}",
        ks.expire_cycle_us / 1000
    );
    field!(t, "evicted_keys", "{}", g(&st.evicted_keys));
    field!(t, "evicted_clients", "{}", st.evicted_clients.load(Relaxed));
    field!(t, "total_eviction_exceeded_time", "0");
    field!(t, "current_eviction_exceeded_time", "0");
    field!(t, "keyspace_hits", "{}", ks.hits);
    field!(t, "keyspace_misses", "{}", ks.misses);
    field!(
        t,
        "pubsub_channels",
        "{}",
        srv.pubsub.channel_names(None, false).len()
    );
    field!(t, "pubsub_patterns", "{}", srv.pubsub.num_patterns());
    field!(
        t,
        "pubsubshard_channels",
        "{}",
        srv.pubsub.channel_names(None, true).len()
    );
    for f in ["latest_fork_usec:0", "total_forks:0"] {
        t.push_str(f);
        t.push_str("\r\n");
    }
    field!(
        t,
        "migrate_cached_sockets",
        "{}",
        crate::services::migrate::cached()
    );
    t.push_str("slave_expires_tracked_keys:0\r\n");
    for (name, v) in crate::services::defrag::info_stats(&srv.defrag) {
        let _ = write!(t, "{name}:{v}\r\n");
    }
    let tr = &srv.tracking;
    field!(t, "tracking_total_keys", "{}", tr.total_keys());
    field!(t, "tracking_total_items", "{}", tr.total_items());
    field!(t, "tracking_total_prefixes", "{}", tr.total_prefixes());
    field!(
        t,
        "unexpected_error_replies",
        "{}",
        g(&st.unexpected_error_replies)
    );
    field!(t, "total_error_replies", "{}", g(&st.total_error_replies));
    field!(t, "dump_payload_sanitizations", "0");
    field!(
        t,
        "total_reads_processed",
        "{}",
        g(&st.total_reads_processed)
    );
    field!(
        t,
        "total_writes_processed",
        "{}",
        g(&st.total_writes_processed)
    );
    field!(t, "io_threaded_reads_processed", "0");
    field!(t, "io_threaded_writes_processed", "0");
    field!(t, "reply_buffer_shrinks", "{}", g(&st.reply_buffer_shrinks));
    field!(t, "reply_buffer_expands", "0");
    field!(
        t,
        "client_query_buffer_limit_disconnections",
        "{}",
        g(&st.client_qbuf_limit_disconnections)
    );
    field!(
        t,
        "client_output_buffer_limit_disconnections",
        "{}",
        g(&st.client_output_buffer_limit_disconnections)
    );
    // Redis 7.2's ACL counters (7.0.15 has none; the issue asks for them).
    let d = &srv.acl.denied;
    field!(t, "acl_access_denied_auth", "{}", g(&d.auth));
    field!(t, "acl_access_denied_cmd", "{}", g(&d.cmd));
    field!(t, "acl_access_denied_key", "{}", g(&d.key));
    field!(t, "acl_access_denied_channel", "{}", g(&d.channel));
}

fn replication_section(srv: &Server, t: &mut String) {
    crate::services::replication::info_section(srv, t);
}

/// `RUSAGE_THREAD` (Linux): usage of the calling thread.
const RUSAGE_THREAD: libc::c_int = 1;

fn cpu_section(t: &mut String) {
    let (sys, user) = rusage(libc::RUSAGE_SELF);
    let (csys, cuser) = rusage(libc::RUSAGE_CHILDREN);
    let (tsys, tuser) = rusage(RUSAGE_THREAD);
    t.push_str("# CPU\r\n");
    field!(t, "used_cpu_sys", "{sys}");
    field!(t, "used_cpu_user", "{user}");
    field!(t, "used_cpu_sys_children", "{csys}");
    field!(t, "used_cpu_user_children", "{cuser}");
    field!(t, "used_cpu_sys_main_thread", "{tsys}");
    field!(t, "used_cpu_user_main_thread", "{tuser}");
}

fn commandstats_section(srv: &Server, t: &mut String) {
    t.push_str("# Commandstats\r\n");
    for e in &srv.table.entries {
        let st = &e.snapshot();
        let calls = st.calls.load(Relaxed);
        let rejected = st.rejected_calls.load(Relaxed);
        let failed = st.failed_calls.load(Relaxed);
        if calls == 0 && rejected == 0 && failed == 0 {
            continue;
        }
        let usec = st.usec.load(Relaxed);
        let per = if calls == 0 {
            0.0
        } else {
            usec as f64 / calls as f64
        };
        let _ = write!(
            t,
            "cmdstat_{}:calls={calls},usec={usec},usec_per_call={per:.2},rejected_calls={rejected},failed_calls={failed}\r\n",
            e.full_name
        );
    }
}

fn errorstats_section(srv: &Server, t: &mut String) {
    t.push_str("# Errorstats\r\n");
    for (prefix, n) in srv.stats.errors.lock().iter() {
        let _ = write!(t, "errorstat_{prefix}:count={n}\r\n");
    }
}

fn latencystats_section(srv: &Server, s: &crate::kernel::config::Settings, t: &mut String) {
    t.push_str("# Latencystats\r\n");
    if !s.latency_tracking {
        return;
    }
    for e in &srv.table.entries {
        let st = &e.snapshot();
        if st.histogram_ns.iter().all(|b| b.load(Relaxed) == 0) {
            continue;
        }
        let _ = write!(t, "latency_percentiles_usec_{}:", e.full_name);
        for (i, p) in s.latency_tracking_info_percentiles.iter().enumerate() {
            if i > 0 {
                t.push(',');
            }
            let _ = write!(
                t,
                "p{}={:.3}",
                crate::base::parse::fmt_g(*p),
                st.percentile_usec(*p)
            );
        }
        t.push_str("\r\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_bytes() {
        assert_eq!(bytes_to_human(0), "0B");
        assert_eq!(bytes_to_human(1023), "1023B");
        assert_eq!(bytes_to_human(1311264), "1.25M");
        assert_eq!(bytes_to_human(25276502016), "23.54G");
    }

    #[test]
    fn selection() {
        let d = select(&[]);
        assert!(d.sections.contains(&"server") && d.sections.contains(&"errorstats"));
        assert!(!d.sections.contains(&"commandstats"));
        assert_eq!(select(&[b"CPU", b"server"]).sections, ["server", "cpu"]);
        assert_eq!(
            select(&[b"everything"]).sections,
            ALL_SECTIONS[..ALL_SECTIONS.len() - 1]
        );
        assert_eq!(
            select(&[b"all"]).sections,
            ALL_SECTIONS[..ALL_SECTIONS.len() - 1]
        );
        assert!(!d.sections.contains(&"keysizes"));
        assert_eq!(select(&[b"KEYSIZES"]).sections, ["keysizes"]);
        assert!(select(&[b"nosuch"]).sections.is_empty());
    }

    #[test]
    fn text_layout() {
        let srv = Server::without_commands(crate::kernel::config::Settings::default());
        let s = crate::kernel::config::Settings::default();
        let t = info_text(&srv, &s, &[b"server", b"clients"]);
        assert!(t.starts_with("# Server\r\nredis_version:7.0.15\r\n"));
        assert!(t.contains("\r\n\r\n# Clients\r\nconnected_clients:0\r\n"));
        assert!(t.ends_with("clients_in_timeout_table:0\r\n"));
        let p = info_text(&srv, &s, &[b"persistence"]);
        assert!(p.contains("loading:0\r\n") && p.contains("rdb_saves:0\r\n"));
        assert_eq!(info_text(&srv, &s, &[b"nosuch"]), "");
        let r = info_text(&srv, &s, &[b"replication"]);
        assert!(r.contains("role:master\r\nconnected_slaves:0\r\n"));
    }
}
