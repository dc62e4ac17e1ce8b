//! [`Settings`]: every setting as a typed field, with Redis's defaults, and
//! the small types some settings use. A `Settings` value is immutable once
//! published (see `ConfigStore`).
//!
//! Defaults are stated once, in the parameter rows: [`Settings::default`]
//! applies the kernel's own groups (`params::KERNEL`), and
//! [`Settings::defaults`] every group the registry composes.

/// One class of `client-output-buffer-limit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutputLimit {
    pub hard: u64,
    pub soft: u64,
    pub soft_seconds: u64,
}

pub use crate::base::log::LogLevel;

/// `enable-debug-command` and friends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enablement {
    No,
    Yes,
    Local,
}

impl Enablement {
    pub fn allows(self, is_local: bool) -> bool {
        match self {
            Enablement::No => false,
            Enablement::Yes => true,
            Enablement::Local => is_local,
        }
    }
}

/// All live settings.
#[derive(Clone, Debug)]
pub struct Settings {
    pub port: u16,
    pub bind: Vec<String>,
    pub unixsocket: String,
    pub unixsocketperm: u32,
    pub protected_mode: bool,
    pub requirepass: String,
    pub maxclients: u64,
    pub timeout: u64,
    pub tcp_keepalive: u64,
    pub tcp_backlog: u64,
    pub databases: usize,
    pub threads: usize,
    /// `busy-poll` (Petrel's own): microseconds a worker that just served
    /// events keeps polling before it sleeps in `epoll_wait` (0 = never).
    pub busy_poll_us: u64,
    /// `busy-reply-threshold` (`lua-time-limit`), in ms: how long a script
    /// runs before other clients get `-BUSY`.
    pub busy_reply_threshold_ms: u64,
    pub loglevel: LogLevel,
    pub logfile: String,
    pub daemonize: bool,
    /// `supervised`: an index of `base::supervisor::MODE_NAMES`.
    pub supervised: usize,
    pub pidfile: String,
    pub dir: String,
    /// `save`: RDB save points (seconds, changes), in the order given.
    pub save_points: Vec<SavePoint>,
    /// `dbfilename`: the RDB file's name inside `dir`.
    pub dbfilename: String,
    pub rdbcompression: bool,
    pub rdbchecksum: bool,
    pub rdb_save_incremental_fsync: bool,
    pub stop_writes_on_bgsave_error: bool,
    /// `sanitize-dump-payload` as set; Petrel validates every payload and
    /// file fully whatever it says (see crate `rdb`).
    pub sanitize_dump_payload: usize,
    /// `shutdown-on-sigterm` / `shutdown-on-sigint` flags.
    pub shutdown_on_sigterm: ShutdownFlags,
    /// `shutdown-timeout`: seconds SHUTDOWN waits for lagging replicas
    /// (0: no wait).
    pub shutdown_timeout: u64,
    pub shutdown_on_sigint: ShutdownFlags,
    /// `jemalloc-bg-thread`: jemalloc purges freed pages from its own thread.
    pub jemalloc_bg_thread: bool,
    /// `disable-thp` (startup only): see `base::thp`.
    pub disable_thp: bool,
    /// `oom-score-adj`: an index of `base::oom_score::MODE_NAMES`.
    pub oom_score_adj: usize,
    /// `oom-score-adj-values`: master, replica, (fork child).
    pub oom_score_adj_values: [i32; 3],
    /// `activedefrag` and `active-defrag-*` (see `services::defrag`).
    pub defrag: DefragSettings,
    pub proto_max_bulk_len: u64,
    pub client_query_buffer_limit: u64,
    pub output_normal: OutputLimit,
    pub output_replica: OutputLimit,
    pub output_pubsub: OutputLimit,
    /// Replication as a master (`params::replication`).
    pub repl: ReplSettings,
    pub slowlog_log_slower_than: i64,
    pub slowlog_max_len: u64,
    pub latency_monitor_threshold: u64,
    pub latency_tracking: bool,
    pub latency_tracking_info_percentiles: Vec<f64>,
    pub enable_debug_command: Enablement,
    /// Whether CONFIG SET may change protected settings (`dir`,
    /// `dbfilename`): no, yes, or from local connections only.
    pub enable_protected_configs: Enablement,
    pub hz: u64,
    /// `active-expire-effort` (1..=10): see
    /// `store::Keyspace::set_active_expire_effort`.
    pub active_expire_effort: u8,
    /// Extension values registered by other modules (collections thresholds etc.)
    /// are plain fields added here as features land.
    pub active_expire_enabled: bool,
    /// `notify-keyspace-events` as flag bits (see `notify`).
    pub notify_keyspace_events: u32,
    /// `hll-sparse-max-bytes`: a sparse HyperLogLog growing past this many
    /// bytes (header included) is converted to the dense representation.
    pub hll_sparse_max_bytes: u64,
    /// `lazyfree-lazy-user-del`: DEL behaves like UNLINK.
    pub lazyfree_lazy_user_del: bool,
    /// `lazyfree-lazy-user-flush`: FLUSHDB/FLUSHALL without SYNC free in the background.
    pub lazyfree_lazy_user_flush: bool,
    /// Eviction: `maxmemory` and friends (see `eviction`).
    pub maxmemory: u64,
    /// Index into [`POLICY_NAMES`].
    pub maxmemory_policy: usize,
    pub maxmemory_samples: u32,
    pub maxmemory_eviction_tenacity: u32,
    pub lfu_log_factor: u32,
    pub lfu_decay_time: u64,
    pub lazyfree_lazy_eviction: bool,
    pub lazyfree_lazy_expire: bool,
    pub lazyfree_lazy_server_del: bool,
    /// Collection encoding thresholds (`hash-max-listpack-entries` ...).
    pub limits: collections::Limits,
    /// `stream-node-max-bytes` / `stream-node-max-entries`.
    pub stream_node: collections::stream::NodeLimits,
    /// `tracking-table-max-keys` (0 = no limit).
    pub tracking_table_max_keys: u64,
    /// `maxmemory-clients` (see `services::client_eviction`).
    pub maxmemory_clients: ClientsMemory,
    /// `aclfile`: where ACL LOAD / ACL SAVE read and write users ("" = none).
    pub aclfile: String,
    /// `acllog-max-len`: entries ACL LOG keeps.
    pub acllog_max_len: u64,
    /// `acl-pubsub-default`: new users get every channel (`allchannels`)
    /// or none (`resetchannels`, Redis 7.0's default).
    pub acl_pubsub_all: bool,
    /// The config file's `user` lines, each `[name, rules...]` (applied at
    /// startup; not a parameter, as in Redis).
    pub acl_users: Vec<Vec<String>>,
    /// The config file's `rename-command` lines as (command, new name);
    /// an empty new name removes the command.
    pub renamed_commands: Vec<RenameCommand>,
    /// The append-only file (`params::aof`).
    pub aof: AofSettings,
    /// Cluster mode (`params::cluster`).
    pub cluster: ClusterSettings,
    /// TLS (`params::tls`).
    pub tls: TlsSettings,
}

/// `tls-auth-clients`: whether a TLS client must present a certificate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TlsAuthClients {
    No,
    /// Redis's default: a certificate signed by the configured CA is required.
    #[default]
    Yes,
    /// A certificate is verified if given, but not required.
    Optional,
}

/// The TLS settings (`params::tls`), as Redis 7.0 names them. The server
/// binary builds its TLS context from them; `replication` and `cluster`
/// (and the `client_*` files) are for the links those features open.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TlsSettings {
    /// `tls-port`; 0: no TLS listener.
    pub port: u16,
    pub cert_file: String,
    pub key_file: String,
    pub key_file_pass: String,
    pub client_cert_file: String,
    pub client_key_file: String,
    pub client_key_file_pass: String,
    pub ca_cert_file: String,
    pub ca_cert_dir: String,
    pub auth_clients: TlsAuthClients,
    /// `tls-protocols` as given (validated: `TLSv1.2` and/or `TLSv1.3`).
    pub protocols: String,
    /// `tls-ciphers` (TLSv1.2, OpenSSL names) as given (validated).
    pub ciphers: String,
    /// `tls-ciphersuites` (TLSv1.3) as given (validated).
    pub ciphersuites: String,
    pub prefer_server_ciphers: bool,
    pub session_caching: bool,
    pub session_cache_size: u64,
    /// Seconds.
    pub session_cache_timeout: u64,
    pub replication: bool,
    pub cluster: bool,
}

/// One `rename-command` line of the config file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenameCommand {
    pub from: String,
    /// Empty: the command is removed.
    pub to: String,
    /// Where the line was, for the startup error.
    pub at: String,
}

/// The append-only file's settings (`params::aof`).
#[derive(Clone, Debug, Default)]
pub struct AofSettings {
    /// `appendonly`.
    pub enabled: bool,
    /// `appendfilename`: the prefix of the files' names.
    pub filename: String,
    /// `appenddirname`: the directory inside `dir`.
    pub dirname: String,
    pub fsync: crate::kernel::aof::Fsync,
    pub no_fsync_on_rewrite: bool,
    pub rewrite_percentage: u64,
    pub rewrite_min_size: u64,
    pub load_truncated: bool,
    pub use_rdb_preamble: bool,
    pub timestamp_enabled: bool,
    pub rewrite_incremental_fsync: bool,
    pub disable_auto_gc: bool,
}

/// One RDB save point: save when at least `changes` writes happened and
/// more than `seconds` passed since the last save.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SavePoint {
    pub seconds: u64,
    pub changes: u64,
}

/// What SHUTDOWN does by default on a signal (`shutdown-on-sigterm`,
/// `shutdown-on-sigint`: `default` or any of `save`, `nosave`, `now`,
/// `force`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShutdownFlags {
    pub save: bool,
    pub nosave: bool,
    pub now: bool,
    pub force: bool,
}

/// `maxmemory-clients`: bytes (0 = no limit) or a percentage of `maxmemory`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientsMemory {
    Bytes(u64),
    Percent(u64),
}

impl ClientsMemory {
    /// The limit in bytes for a given `maxmemory` (0 = none).
    pub fn limit(self, maxmemory: u64) -> u64 {
        match self {
            ClientsMemory::Bytes(b) => b,
            ClientsMemory::Percent(p) => maxmemory / 100 * p + maxmemory % 100 * p / 100,
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        let mut s = Settings {
            port: 0,
            bind: Vec::new(),
            unixsocket: String::new(),
            unixsocketperm: 0,
            protected_mode: true,
            requirepass: String::new(),
            maxclients: 0,
            timeout: 0,
            tcp_keepalive: 0,
            tcp_backlog: 0,
            databases: 0,
            threads: 0,
            busy_poll_us: 0,
            busy_reply_threshold_ms: 5000,
            loglevel: LogLevel::Notice,
            logfile: String::new(),
            daemonize: false,
            supervised: 0,
            pidfile: String::new(),
            dir: String::new(),
            save_points: Vec::new(),
            dbfilename: String::new(),
            rdbcompression: true,
            rdbchecksum: true,
            rdb_save_incremental_fsync: true,
            stop_writes_on_bgsave_error: true,
            sanitize_dump_payload: 0,
            shutdown_on_sigterm: ShutdownFlags::default(),
            shutdown_timeout: 10,
            shutdown_on_sigint: ShutdownFlags::default(),
            jemalloc_bg_thread: true,
            disable_thp: true,
            oom_score_adj: 0,
            oom_score_adj_values: [0, 200, 800],
            defrag: DefragSettings::default(),
            proto_max_bulk_len: 0,
            client_query_buffer_limit: 0,
            output_normal: OutputLimit {
                hard: 0,
                soft: 0,
                soft_seconds: 0,
            },
            output_replica: OutputLimit {
                hard: 0,
                soft: 0,
                soft_seconds: 0,
            },
            output_pubsub: OutputLimit {
                hard: 0,
                soft: 0,
                soft_seconds: 0,
            },
            repl: ReplSettings::default(),
            slowlog_log_slower_than: 0,
            slowlog_max_len: 0,
            latency_monitor_threshold: 0,
            latency_tracking: true,
            latency_tracking_info_percentiles: Vec::new(),
            enable_debug_command: Enablement::No,
            enable_protected_configs: Enablement::No,
            hz: 10,
            active_expire_effort: 1,
            active_expire_enabled: true,
            notify_keyspace_events: 0,
            hll_sparse_max_bytes: 0,
            lazyfree_lazy_user_del: false,
            lazyfree_lazy_user_flush: false,
            maxmemory: 0,
            maxmemory_policy: 0,
            maxmemory_samples: 0,
            maxmemory_eviction_tenacity: 0,
            lfu_log_factor: 0,
            lfu_decay_time: 0,
            lazyfree_lazy_eviction: false,
            lazyfree_lazy_expire: false,
            lazyfree_lazy_server_del: false,
            limits: collections::Limits::default(),
            stream_node: collections::stream::NodeLimits::default(),
            tracking_table_max_keys: 0,
            maxmemory_clients: ClientsMemory::Bytes(0),
            aclfile: String::new(),
            acllog_max_len: 0,
            acl_pubsub_all: false,
            acl_users: Vec::new(),
            renamed_commands: Vec::new(),
            aof: AofSettings::default(),
            tls: TlsSettings::default(),
            cluster: ClusterSettings::default(),
        };
        s.apply_defaults(super::Params {
            groups: super::params::KERNEL,
        });
        s
    }
}

impl Settings {
    /// Settings with every parameter of `params` at its default (the
    /// kernel's own groups included, as in [`Settings::default`]).
    pub fn defaults(params: super::Params) -> Settings {
        let mut s = Settings::default();
        s.apply_defaults(params);
        s
    }

    /// Sets every parameter of `params` to the default its row states.
    fn apply_defaults(&mut self, params: super::Params) {
        for p in params.iter() {
            let d = (p.default)();
            (p.set)(self, &d).unwrap_or_else(|e| panic!("bad default for {}: {e}", p.name));
        }
    }
}

/// `maxmemory-policy` values, in the order Redis lists them in its error.
pub const POLICY_NAMES: &[&str] = &[
    "volatile-lru",
    "volatile-lfu",
    "volatile-random",
    "volatile-ttl",
    "allkeys-lru",
    "allkeys-lfu",
    "allkeys-random",
    "noeviction",
];

/// Active defragmentation settings, Redis 7.0's names and defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DefragSettings {
    /// `activedefrag`
    pub enabled: bool,
    /// `active-defrag-ignore-bytes`: fragmentation below this many bytes
    /// never starts a cycle.
    pub ignore_bytes: u64,
    /// `active-defrag-threshold-lower` (percent of fragmentation).
    pub threshold_lower: u32,
    /// `active-defrag-threshold-upper`
    pub threshold_upper: u32,
    /// `active-defrag-cycle-min` (percent of CPU).
    pub cycle_min: u32,
    /// `active-defrag-cycle-max`
    pub cycle_max: u32,
    /// `active-defrag-max-scan-fields`: the most elements of a collection
    /// defragmented in one step (the keyspace walk caps a step at 64,
    /// `store::keyspace::defrag::FIELDS_PER_STEP`, as Redis reads its
    /// clock at least every 64 fields of a big key).
    pub max_scan_fields: u64,
}

impl Default for DefragSettings {
    fn default() -> Self {
        DefragSettings {
            enabled: false,
            ignore_bytes: 100 << 20,
            threshold_lower: 10,
            threshold_upper: 100,
            cycle_min: 1,
            cycle_max: 25,
            max_scan_fields: 1000,
        }
    }
}

/// `repl-diskless-load`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DisklessLoad {
    /// The payload goes to a file, loaded once whole.
    Disabled = 0,
    /// Loaded from the socket when the dataset is empty, else as disabled.
    OnEmptyDb = 1,
    /// Loaded from the socket, the old dataset kept aside until it loaded
    /// (and put back if the transfer fails).
    Swapdb = 2,
}

/// Replication settings (`params::replication`), Redis 7.0's defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplSettings {
    /// `repl-diskless-sync`: the RDB goes straight to the replica's socket.
    pub diskless_sync: bool,
    /// `repl-diskless-sync-delay`, seconds to wait for more replicas.
    pub diskless_sync_delay: u64,
    /// `repl-diskless-sync-max-replicas`: a diskless transfer starts
    /// before the delay ends once this many replicas wait (0: no limit).
    pub diskless_sync_max_replicas: u64,
    /// `repl-diskless-load`: where a replica's full sync payload goes.
    pub diskless_load: DisklessLoad,
    /// `repl-backlog-size`, bytes.
    pub backlog_size: u64,
    /// `repl-backlog-ttl`, seconds without replicas before the backlog goes.
    pub backlog_ttl: u64,
    /// `repl-ping-replica-period`, seconds.
    pub ping_period: u64,
    /// `repl-timeout`, seconds.
    pub timeout: u64,
    /// `replicaof host port` from the configuration file.
    pub replicaof: Option<(String, u16)>,
    /// `masterauth`: the password a replica authenticates with (empty:
    /// none), as `masteruser` when that is set.
    pub masterauth: String,
    /// `masteruser` (empty: the master's default user).
    pub masteruser: String,
    /// `min-replicas-to-write` (0: off).
    pub min_replicas_to_write: u64,
    /// `min-replicas-max-lag`, seconds (0: off).
    pub min_replicas_max_lag: u64,
    /// `replica-serve-stale-data`: a replica whose link is down still
    /// answers (no: `-MASTERDOWN` for commands without the `stale` flag).
    pub serve_stale_data: bool,
    /// `replica-announce-ip`: the address a replica gives its master
    /// (`REPLCONF ip-address`; empty: none, the master sees the peer's).
    pub announce_ip: String,
    /// `replica-announce-port`: the port a replica gives its master
    /// (`REPLCONF listening-port`; 0: its own client port).
    pub announce_port: u16,
    /// `replica-priority`: shown in INFO for Sentinel (0: never promoted).
    pub priority: i64,
    /// `replica-announced`: shown in INFO for Sentinel.
    pub announced: bool,
    /// `replica-read-only`: a replica refuses its clients' writes
    /// (`-READONLY`). When off, their writes change only this replica's
    /// dataset: they are not in the stream it proxies to its own
    /// replicas, and the keys they give a TTL are expired by the replica
    /// itself (`store::keyspace::Keyspace::with_local_ttls_tracked`).
    pub read_only: bool,
    /// `replica-lazy-flush`: a full sync hands the replica's old dataset
    /// to the lazy-free thread instead of freeing it in place.
    pub lazy_flush: bool,
    /// `repl-disable-tcp-nodelay`: a master turns TCP_NODELAY off on the
    /// socket of a replica that takes a full sync.
    pub disable_tcp_nodelay: bool,
    /// `rdb-del-sync-files`: with RDB saving and the AOF both off, a
    /// replica removes the RDB a disk-based full sync received instead of
    /// keeping it as its `dbfilename`.
    pub rdb_del_sync_files: bool,
    /// `replica-ignore-maxmemory`: a replica leaves `maxmemory` to its
    /// master (no: it evicts by its own policy, and refuses its own
    /// clients' denyoom commands when it cannot).
    pub ignore_maxmemory: bool,
    /// `propagation-error-behavior`, an index of
    /// `params::replication::PROPAGATION_ERROR_NAMES`.
    pub propagation_error: u8,
    /// `replica-ignore-disk-write-errors`: a replica that cannot persist
    /// applies its master's writes anyway (no: it stops).
    pub ignore_disk_write_errors: bool,
}

impl Default for ReplSettings {
    fn default() -> Self {
        ReplSettings {
            diskless_sync: true,
            diskless_sync_delay: 5,
            diskless_sync_max_replicas: 0,
            diskless_load: DisklessLoad::Disabled,
            backlog_size: 1 << 20,
            backlog_ttl: 3600,
            ping_period: 10,
            timeout: 60,
            replicaof: None,
            masterauth: String::new(),
            masteruser: String::new(),
            min_replicas_to_write: 0,
            min_replicas_max_lag: 10,
            serve_stale_data: true,
            announce_ip: String::new(),
            announce_port: 0,
            priority: 100,
            announced: true,
            read_only: true,
            lazy_flush: false,
            disable_tcp_nodelay: false,
            rdb_del_sync_files: false,
            ignore_maxmemory: true,
            propagation_error: 0,
            ignore_disk_write_errors: false,
        }
    }
}

/// The `cluster-*` settings (see `params::cluster`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClusterSettings {
    /// `cluster-enabled` (immutable).
    pub enabled: bool,
    /// `cluster-config-file` (immutable): nodes.conf, relative to `dir`.
    pub config_file: String,
    /// `cluster-node-timeout`, ms.
    pub node_timeout_ms: u64,
    /// `cluster-port` (immutable): the bus port; 0 means port + 10000.
    pub port: u16,
    pub announce_ip: String,
    pub announce_hostname: String,
    pub announce_port: u16,
    pub announce_bus_port: u16,
    pub announce_tls_port: u16,
    pub require_full_coverage: bool,
    pub allow_reads_when_down: bool,
    /// `cluster-link-sendbuf-limit`: a bus link holding more unsent bytes
    /// is freed (and dialed again); 0: no limit.
    pub link_sendbuf_limit: u64,
    /// `cluster-allow-pubsubshard-when-down`: SPUBLISH, SSUBSCRIBE and
    /// SUNSUBSCRIBE are served while the cluster is down.
    pub allow_pubsubshard_when_down: bool,
    pub allow_replica_migration: bool,
    pub replica_validity_factor: u32,
    pub migration_barrier: u32,
    /// `cluster-replica-no-failover`: this replica never starts an
    /// election of its own (a manual failover still can).
    pub replica_no_failover: bool,
    /// Index into `params::cluster::ENDPOINT_TYPES`.
    pub preferred_endpoint_type: usize,
}
