//! Configuration: the parameter table, `redis.conf`-style parsing, and the
//! live settings that `CONFIG GET/SET/REWRITE` work on.
//!
//! Every setting is a typed field of [`Settings`]. The [`PARAMS`] table maps a
//! Redis parameter name to a getter and a setter of that field, so the file
//! parser, the command line, `CONFIG SET` and `CONFIG REWRITE` share one
//! definition of names, defaults and validation.
//!
//! Invariants:
//! * A `Settings` value is immutable once published; `CONFIG SET` builds a new
//!   one from a clone, validates every pair, then publishes it whole (all or
//!   nothing) and bumps [`ConfigStore::generation`], which hot paths poll to
//!   refresh their cached `Arc<Settings>`.
//! * `format(parse(x)) == format(parse(format(parse(x))))`: what CONFIG GET
//!   prints can be fed back to CONFIG SET and to a config file.

use crate::base::errors;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::RwLock;

/// One class of `client-output-buffer-limit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutputLimit {
    pub hard: u64,
    pub soft: u64,
    pub soft_seconds: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    Debug,
    Verbose,
    Notice,
    Warning,
}

impl LogLevel {
    /// Redis 7.0's levels ("nothing" only arrived in 7.2).
    pub const NAMES: &'static [&'static str] = &["debug", "verbose", "notice", "warning"];
    fn from_index(i: usize) -> LogLevel {
        [
            LogLevel::Debug,
            LogLevel::Verbose,
            LogLevel::Notice,
            LogLevel::Warning,
        ][i]
    }
}

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
    pub loglevel: LogLevel,
    pub logfile: String,
    pub daemonize: bool,
    pub pidfile: String,
    pub dir: String,
    pub save: String,
    pub appendonly: bool,
    pub proto_max_bulk_len: u64,
    pub client_query_buffer_limit: u64,
    pub output_normal: OutputLimit,
    pub output_replica: OutputLimit,
    pub output_pubsub: OutputLimit,
    pub slowlog_log_slower_than: i64,
    pub slowlog_max_len: u64,
    pub latency_monitor_threshold: u64,
    pub latency_tracking: bool,
    pub latency_tracking_info_percentiles: Vec<f64>,
    pub enable_debug_command: Enablement,
    pub hz: u64,
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
            loglevel: LogLevel::Notice,
            logfile: String::new(),
            daemonize: false,
            pidfile: String::new(),
            dir: String::new(),
            save: String::new(),
            appendonly: false,
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
            slowlog_log_slower_than: 0,
            slowlog_max_len: 0,
            latency_monitor_threshold: 0,
            latency_tracking: true,
            latency_tracking_info_percentiles: Vec::new(),
            enable_debug_command: Enablement::No,
            hz: 10,
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
        };
        for p in all_params() {
            let d = (p.default)();
            (p.set)(&mut s, &d).unwrap_or_else(|e| panic!("bad default for {}: {e}", p.name));
        }
        s
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

/// A configuration parameter.
pub struct Param {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    /// Can be changed with CONFIG SET.
    pub mutable: bool,
    pub default: fn() -> String,
    pub get: fn(&Settings) -> String,
    /// Parses and stores; the error is Redis's reason text (without prefix).
    pub set: fn(&mut Settings, &str) -> Result<(), String>,
}

pub fn parse_bool(v: &str) -> Result<bool, String> {
    match v.to_ascii_lowercase().as_str() {
        "yes" => Ok(true),
        "no" => Ok(false),
        _ => Err("argument must be 'yes' or 'no'".into()),
    }
}

fn fmt_bool(b: bool) -> String {
    if b { "yes" } else { "no" }.into()
}

/// Parses Redis memory units: `1k` = 1000, `1kb` = 1024, `1m`, `1mb`, `1g`, `1gb` (case-insensitive).
pub fn parse_memory(v: &str) -> Option<u64> {
    let l = v.to_ascii_lowercase();
    let (num, mul): (&str, u64) = if let Some(n) = l.strip_suffix("gb") {
        (n, 1 << 30)
    } else if let Some(n) = l.strip_suffix("mb") {
        (n, 1 << 20)
    } else if let Some(n) = l.strip_suffix("kb") {
        (n, 1 << 10)
    } else if let Some(n) = l.strip_suffix('g') {
        (n, 1_000_000_000)
    } else if let Some(n) = l.strip_suffix('m') {
        (n, 1_000_000)
    } else if let Some(n) = l.strip_suffix('k') {
        (n, 1000)
    } else if let Some(n) = l.strip_suffix('b') {
        (n, 1)
    } else {
        (l.as_str(), 1)
    };
    if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    num.parse::<u64>().ok()?.checked_mul(mul)
}

/// Formats memory as Redis's CONFIG GET does (plain bytes).
fn fmt_memory(v: u64) -> String {
    v.to_string()
}

fn int_in(v: &str, min: i64, max: i64) -> Result<i64, String> {
    let n: i64 = v
        .parse()
        .map_err(|_| "argument couldn't be parsed into an integer".to_string())?;
    if n < min || n > max {
        return Err(format!(
            "argument must be between {min} and {max} inclusive"
        ));
    }
    Ok(n)
}

fn memory_in(v: &str, min: u64, max: u64) -> Result<u64, String> {
    let n = parse_memory(v).ok_or_else(|| "argument must be a memory value".to_string())?;
    if n < min || n > max {
        return Err(format!(
            "argument must be between {min} and {max} inclusive"
        ));
    }
    Ok(n)
}

fn enum_of(v: &str, names: &[&str]) -> Result<usize, String> {
    names
        .iter()
        .position(|n| n.eq_ignore_ascii_case(v))
        .ok_or_else(|| {
            format!(
                "argument(s) must be one of the following: {}",
                names.join(", ")
            )
        })
}

const ENABLEMENT: &[&str] = &["no", "yes", "local"];

fn fmt_output_limits(s: &Settings) -> String {
    let f = |n: &str, l: &OutputLimit| format!("{n} {} {} {}", l.hard, l.soft, l.soft_seconds);
    format!(
        "{} {} {}",
        f("normal", &s.output_normal),
        f("slave", &s.output_replica),
        f("pubsub", &s.output_pubsub)
    )
}

fn set_output_limits(s: &mut Settings, v: &str) -> Result<(), String> {
    let parts: Vec<&str> = v.split_whitespace().collect();
    if parts.is_empty() || !parts.len().is_multiple_of(4) {
        return Err("Wrong number of arguments in buffer limit configuration.".into());
    }
    let mut staged = (s.output_normal, s.output_replica, s.output_pubsub);
    for c in parts.chunks(4) {
        let hard = parse_memory(c[1])
            .ok_or("Error in hard, soft or soft_seconds setting in buffer limit configuration.")?;
        let soft = parse_memory(c[2])
            .ok_or("Error in hard, soft or soft_seconds setting in buffer limit configuration.")?;
        let secs: u64 = c[3].parse().map_err(|_| {
            "Error in hard, soft or soft_seconds setting in buffer limit configuration."
        })?;
        let l = OutputLimit {
            hard,
            soft,
            soft_seconds: secs,
        };
        match c[0].to_ascii_lowercase().as_str() {
            "normal" => staged.0 = l,
            "slave" | "replica" => staged.1 = l,
            "pubsub" => staged.2 = l,
            _ => {
                return Err("Invalid client class specified in buffer limit configuration.".into())
            }
        }
    }
    (s.output_normal, s.output_replica, s.output_pubsub) = staged;
    Ok(())
}

fn fmt_percentiles(v: &[f64]) -> String {
    v.iter()
        .map(|p| crate::base::parse::fmt_g(*p))
        .collect::<Vec<_>>()
        .join(" ")
}

const PERCENTILES_ERR: &str =
    "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]";

fn set_percentiles(s: &mut Settings, v: &str) -> Result<(), String> {
    let mut out = Vec::new();
    for t in v.split_whitespace() {
        let p: f64 = t.parse().map_err(|_| PERCENTILES_ERR.to_string())?;
        if !(0.0..=100.0).contains(&p) {
            return Err(PERCENTILES_ERR.into());
        }
        out.push(p);
    }
    s.latency_tracking_info_percentiles = out;
    Ok(())
}

fn default_threads() -> String {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .to_string()
}

macro_rules! p {
    ($name:expr, $mutable:expr, $default:expr, $get:expr, $set:expr) => {
        Param {
            name: $name,
            aliases: &[],
            mutable: $mutable,
            default: || String::from($default),
            get: $get,
            set: $set,
        }
    };
}

/// Every supported parameter, in the order CONFIG REWRITE appends them.
pub static PARAMS: &[Param] = &[
    p!("port", true, "6379", |s| s.port.to_string(), |s, v| {
        s.port = int_in(v, 0, 65535)? as u16;
        Ok(())
    }),
    p!(
        "bind",
        true,
        "127.0.0.1 -::1",
        |s| s.bind.join(" "),
        |s, v| {
            s.bind = v.split_whitespace().map(String::from).collect();
            Ok(())
        }
    ),
    p!("unixsocket", false, "", |s| s.unixsocket.clone(), |s, v| {
        s.unixsocket = v.to_string();
        Ok(())
    }),
    p!(
        "unixsocketperm",
        false,
        "0",
        |s| format!("{:o}", s.unixsocketperm),
        |s, v| {
            s.unixsocketperm = u32::from_str_radix(v, 8)
                .map_err(|_| "argument couldn't be parsed into an integer")?;
            if s.unixsocketperm > 0o777 {
                return Err("argument must be between 0 and 777 inclusive".into());
            }
            Ok(())
        }
    ),
    p!(
        "protected-mode",
        true,
        "yes",
        |s| fmt_bool(s.protected_mode),
        |s, v| {
            s.protected_mode = parse_bool(v)?;
            Ok(())
        }
    ),
    p!(
        "requirepass",
        true,
        "",
        |s| s.requirepass.clone(),
        |s, v| {
            if v.len() > 512 {
                return Err("Password is longer than 512 characters".into());
            }
            s.requirepass = v.to_string();
            Ok(())
        }
    ),
    p!(
        "maxclients",
        true,
        "10000",
        |s| s.maxclients.to_string(),
        |s, v| {
            s.maxclients = int_in(v, 1, u32::MAX as i64)? as u64;
            Ok(())
        }
    ),
    p!("timeout", true, "0", |s| s.timeout.to_string(), |s, v| {
        s.timeout = int_in(v, 0, i32::MAX as i64)? as u64;
        Ok(())
    }),
    p!(
        "tcp-keepalive",
        true,
        "300",
        |s| s.tcp_keepalive.to_string(),
        |s, v| {
            s.tcp_keepalive = int_in(v, 0, i32::MAX as i64)? as u64;
            Ok(())
        }
    ),
    p!(
        "tcp-backlog",
        false,
        "511",
        |s| s.tcp_backlog.to_string(),
        |s, v| {
            s.tcp_backlog = int_in(v, 0, i32::MAX as i64)? as u64;
            Ok(())
        }
    ),
    p!(
        "databases",
        false,
        "16",
        |s| s.databases.to_string(),
        |s, v| {
            s.databases = int_in(v, 1, i32::MAX as i64)? as usize;
            Ok(())
        }
    ),
    Param {
        name: "threads",
        aliases: &[],
        mutable: false,
        default: default_threads,
        get: |s| s.threads.to_string(),
        set: |s, v| {
            s.threads = int_in(v, 1, 1024)? as usize;
            Ok(())
        },
    },
    p!(
        "busy-poll",
        true,
        "50",
        |s| s.busy_poll_us.to_string(),
        |s, v| {
            s.busy_poll_us = int_in(v, 0, 10_000)? as u64;
            Ok(())
        }
    ),
    p!(
        "loglevel",
        true,
        "notice",
        |s| LogLevel::NAMES[s.loglevel as usize].to_string(),
        |s, v| {
            s.loglevel = LogLevel::from_index(enum_of(v, LogLevel::NAMES)?);
            Ok(())
        }
    ),
    p!("logfile", false, "", |s| s.logfile.clone(), |s, v| {
        s.logfile = v.to_string();
        Ok(())
    }),
    p!(
        "daemonize",
        false,
        "no",
        |s| fmt_bool(s.daemonize),
        |s, v| {
            s.daemonize = parse_bool(v)?;
            Ok(())
        }
    ),
    p!("pidfile", false, "", |s| s.pidfile.clone(), |s, v| {
        s.pidfile = v.to_string();
        Ok(())
    }),
    Param {
        name: "dir",
        aliases: &[],
        mutable: true,
        default: || {
            std::env::current_dir()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| ".".into())
        },
        get: |s| s.dir.clone(),
        set: |s, v| {
            let p = PathBuf::from(v);
            let abs = if p.is_absolute() {
                p
            } else {
                std::env::current_dir().map_err(|e| e.to_string())?.join(p)
            };
            if !abs.is_dir() {
                return Err(format!("No such file or directory: {v}"));
            }
            s.dir = abs
                .canonicalize()
                .map_err(|e| e.to_string())?
                .display()
                .to_string();
            Ok(())
        },
    },
    // Persistence is not implemented yet: these report the truth (nothing is
    // saved) and refuse values that would promise otherwise.
    p!("save", true, "", |s| s.save.clone(), |s, v| {
        if !v.trim().is_empty() {
            return Err("persistence (RDB save points) is not supported by this server yet".into());
        }
        s.save = String::new();
        Ok(())
    }),
    p!(
        "appendonly",
        true,
        "no",
        |s| fmt_bool(s.appendonly),
        |s, v| {
            if parse_bool(v)? {
                return Err("the append only file is not supported by this server yet".into());
            }
            s.appendonly = false;
            Ok(())
        }
    ),
    p!(
        "proto-max-bulk-len",
        true,
        "512mb",
        |s| fmt_memory(s.proto_max_bulk_len),
        |s, v| {
            s.proto_max_bulk_len = memory_in(v, 1024 * 1024, i64::MAX as u64)?;
            Ok(())
        }
    ),
    p!(
        "client-query-buffer-limit",
        true,
        "1gb",
        |s| fmt_memory(s.client_query_buffer_limit),
        |s, v| {
            s.client_query_buffer_limit = memory_in(v, 1024 * 1024, i64::MAX as u64)?;
            Ok(())
        }
    ),
    p!(
        "client-output-buffer-limit",
        true,
        "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60",
        fmt_output_limits,
        set_output_limits
    ),
    p!(
        "slowlog-log-slower-than",
        true,
        "10000",
        |s| s.slowlog_log_slower_than.to_string(),
        |s, v| {
            s.slowlog_log_slower_than = int_in(v, -1, i64::MAX)?;
            Ok(())
        }
    ),
    p!(
        "slowlog-max-len",
        true,
        "128",
        |s| s.slowlog_max_len.to_string(),
        |s, v| {
            s.slowlog_max_len = int_in(v, 0, i64::MAX)? as u64;
            Ok(())
        }
    ),
    p!(
        "latency-monitor-threshold",
        true,
        "0",
        |s| s.latency_monitor_threshold.to_string(),
        |s, v| {
            s.latency_monitor_threshold = int_in(v, 0, i64::MAX)? as u64;
            Ok(())
        }
    ),
    p!(
        "latency-tracking",
        true,
        "yes",
        |s| fmt_bool(s.latency_tracking),
        |s, v| {
            s.latency_tracking = parse_bool(v)?;
            Ok(())
        }
    ),
    p!(
        "latency-tracking-info-percentiles",
        true,
        "50 99 99.9",
        |s| fmt_percentiles(&s.latency_tracking_info_percentiles),
        set_percentiles
    ),
    p!(
        "enable-debug-command",
        false,
        "no",
        |s| ENABLEMENT[s.enable_debug_command as usize].to_string(),
        |s, v| {
            s.enable_debug_command =
                [Enablement::No, Enablement::Yes, Enablement::Local][enum_of(v, ENABLEMENT)?];
            Ok(())
        }
    ),
    p!("hz", true, "10", |s| s.hz.to_string(), |s, v| {
        // Redis clamps rather than rejects.
        s.hz = int_in(v, 0, i32::MAX as i64)?.clamp(1, 500) as u64;
        Ok(())
    }),
    p!(
        "notify-keyspace-events",
        true,
        "",
        |s| crate::kernel::notify::format_flags(s.notify_keyspace_events),
        |s, v| {
            s.notify_keyspace_events = crate::kernel::notify::parse_flags(v)
                .ok_or("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.")?;
            Ok(())
        }
    ),
    p!(
        "lazyfree-lazy-user-del",
        true,
        "no",
        |s| fmt_bool(s.lazyfree_lazy_user_del),
        |s, v| {
            s.lazyfree_lazy_user_del = parse_bool(v)?;
            Ok(())
        }
    ),
    p!(
        "lazyfree-lazy-user-flush",
        true,
        "no",
        |s| fmt_bool(s.lazyfree_lazy_user_flush),
        |s, v| {
            s.lazyfree_lazy_user_flush = parse_bool(v)?;
            Ok(())
        }
    ),
    p!(
        "lazyfree-lazy-eviction",
        true,
        "no",
        |s| fmt_bool(s.lazyfree_lazy_eviction),
        |s, v| {
            s.lazyfree_lazy_eviction = parse_bool(v)?;
            Ok(())
        }
    ),
    p!(
        "lazyfree-lazy-expire",
        true,
        "no",
        |s| fmt_bool(s.lazyfree_lazy_expire),
        |s, v| {
            s.lazyfree_lazy_expire = parse_bool(v)?;
            Ok(())
        }
    ),
    p!(
        "lazyfree-lazy-server-del",
        true,
        "no",
        |s| fmt_bool(s.lazyfree_lazy_server_del),
        |s, v| {
            s.lazyfree_lazy_server_del = parse_bool(v)?;
            Ok(())
        }
    ),
    p!(
        "maxmemory",
        true,
        "0",
        |s| fmt_memory(s.maxmemory),
        |s, v| {
            s.maxmemory = memory_in(v, 0, u64::MAX)?;
            Ok(())
        }
    ),
    p!(
        "maxmemory-policy",
        true,
        "noeviction",
        |s| POLICY_NAMES[s.maxmemory_policy].to_string(),
        |s, v| {
            s.maxmemory_policy = enum_of(v, POLICY_NAMES)?;
            Ok(())
        }
    ),
    p!(
        "maxmemory-samples",
        true,
        "5",
        |s| s.maxmemory_samples.to_string(),
        |s, v| {
            s.maxmemory_samples = int_in(v, 1, i32::MAX as i64)? as u32;
            Ok(())
        }
    ),
    p!(
        "maxmemory-eviction-tenacity",
        true,
        "10",
        |s| s.maxmemory_eviction_tenacity.to_string(),
        |s, v| {
            s.maxmemory_eviction_tenacity = int_in(v, 0, 100)? as u32;
            Ok(())
        }
    ),
    p!(
        "lfu-log-factor",
        true,
        "10",
        |s| s.lfu_log_factor.to_string(),
        |s, v| {
            s.lfu_log_factor = int_in(v, 0, i32::MAX as i64)? as u32;
            Ok(())
        }
    ),
    p!(
        "lfu-decay-time",
        true,
        "1",
        |s| s.lfu_decay_time.to_string(),
        |s, v| {
            s.lfu_decay_time = int_in(v, 0, i32::MAX as i64)? as u64;
            Ok(())
        }
    ),
    p!(
        "hll-sparse-max-bytes",
        true,
        "3000",
        |s| fmt_memory(s.hll_sparse_max_bytes),
        |s, v| {
            s.hll_sparse_max_bytes = memory_in(v, 0, i64::MAX as u64)?;
            Ok(())
        }
    ),
];

macro_rules! limit {
    ($name:expr, $alias:expr, $default:expr, $field:ident, $parse:expr) => {
        Param {
            name: $name,
            aliases: $alias,
            mutable: true,
            default: || String::from($default),
            get: |s| s.limits.$field.to_string(),
            set: |s, v| {
                s.limits.$field = $parse(v)?;
                Ok(())
            },
        }
    };
}

fn count_limit(v: &str) -> Result<usize, String> {
    Ok(int_in(v, 0, i64::MAX)? as usize)
}

fn bytes_limit(v: &str) -> Result<usize, String> {
    Ok(memory_in(v, 0, i64::MAX as u64)? as usize)
}

/// Collection encoding thresholds (Redis 7.0 names and ranges, with the old
/// `ziplist` names as aliases; the set listpack pair comes from Redis 7.2).
static LIMIT_PARAMS: &[Param] = &[
    limit!(
        "hash-max-listpack-entries",
        &["hash-max-ziplist-entries"],
        "512",
        hash_max_listpack_entries,
        count_limit
    ),
    limit!(
        "hash-max-listpack-value",
        &["hash-max-ziplist-value"],
        "64",
        hash_max_listpack_value,
        bytes_limit
    ),
    limit!(
        "set-max-intset-entries",
        &[],
        "512",
        set_max_intset_entries,
        count_limit
    ),
    limit!(
        "set-max-listpack-entries",
        &[],
        "128",
        set_max_listpack_entries,
        count_limit
    ),
    limit!(
        "set-max-listpack-value",
        &[],
        "64",
        set_max_listpack_value,
        bytes_limit
    ),
    limit!(
        "zset-max-listpack-entries",
        &["zset-max-ziplist-entries"],
        "128",
        zset_max_listpack_entries,
        count_limit
    ),
    limit!(
        "zset-max-listpack-value",
        &["zset-max-ziplist-value"],
        "64",
        zset_max_listpack_value,
        bytes_limit
    ),
    limit!(
        "list-max-listpack-size",
        &["list-max-ziplist-size"],
        "-2",
        list_max_listpack_size,
        |v| Ok::<i32, String>(int_in(v, i32::MIN as i64, i32::MAX as i64)? as i32)
    ),
    limit!(
        "list-compress-depth",
        &[],
        "0",
        list_compress_depth,
        |v| Ok::<u32, String>(int_in(v, 0, i32::MAX as i64)? as u32)
    ),
];

/// Every parameter: the server table then the collection thresholds.
pub fn all_params() -> impl Iterator<Item = &'static Param> {
    PARAMS.iter().chain(LIMIT_PARAMS.iter())
}

/// Looks a parameter up by name or alias (case-insensitive).
pub fn find_param(name: &str) -> Option<&'static Param> {
    all_params().find(|p| {
        p.name.eq_ignore_ascii_case(name) || p.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
    })
}

/// The published settings plus the config file they came from.
pub struct ConfigStore {
    current: RwLock<Arc<Settings>>,
    generation: AtomicU64,
    pub file: Option<PathBuf>,
    /// Rebinds the TCP listeners when CONFIG SET changes `port` or `bind`;
    /// installed by the server binary. Without it (unit tests) the new
    /// values are only stored.
    listener_hook: std::sync::OnceLock<ListenerHook>,
}

/// Moves the TCP listeners to the `bind` addresses and `port` of the given
/// settings, or fails leaving the old listeners in place (the error says
/// why, for the log; the client gets Redis's fixed text).
pub type ListenerHook = Box<dyn Fn(&Settings) -> Result<(), String> + Send + Sync>;

impl ConfigStore {
    pub fn new(settings: Settings, file: Option<PathBuf>) -> Self {
        ConfigStore {
            current: RwLock::new(Arc::new(settings)),
            generation: AtomicU64::new(1),
            file,
            listener_hook: std::sync::OnceLock::new(),
        }
    }

    /// Installs the listener rebinding hook (once, at startup).
    pub fn set_listener_hook(&self, hook: ListenerHook) {
        let _ = self.listener_hook.set(hook);
    }

    pub fn get(&self) -> Arc<Settings> {
        self.current.read().clone()
    }

    /// Bumped on every change; cheap to poll.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Applies `pairs` all-or-nothing. Errors carry Redis's full CONFIG SET text.
    pub fn set_many(&self, pairs: &[(&str, &str)]) -> Result<(), String> {
        let mut guard = self.current.write();
        let mut next: Settings = (**guard).clone();
        let mut seen: Vec<&'static str> = Vec::new();
        for (name, value) in pairs {
            let p = match find_param(name) {
                Some(p) => p,
                None => return Err(crate::base::errors::config_set_unknown(name)),
            };
            if seen.contains(&p.name) {
                return Err(crate::base::errors::config_set_failed(
                    name,
                    "duplicate parameter",
                ));
            }
            seen.push(p.name);
            if !p.mutable {
                return Err(crate::base::errors::config_set_failed(
                    name,
                    "can't set immutable config",
                ));
            }
            (p.set)(&mut next, value)
                .map_err(|e| crate::base::errors::config_set_failed(name, &e))?;
        }
        if next.dir != guard.dir {
            std::env::set_current_dir(&next.dir)
                .map_err(|e| crate::base::errors::config_set_failed("dir", &e.to_string()))?;
        }
        if next.port != guard.port || next.bind != guard.bind {
            if let Some(hook) = self.listener_hook.get() {
                let which = if next.port != guard.port {
                    "port"
                } else {
                    "bind"
                };
                if hook(&next).is_err() {
                    // Redis's texts for the two settings.
                    let why = if which == "port" {
                        "Unable to listen on this port. Check server logs."
                    } else {
                        "Failed to bind to specified addresses."
                    };
                    return Err(crate::base::errors::config_set_failed(which, why));
                }
            }
        }
        *guard = Arc::new(next);
        self.generation.fetch_add(1, Ordering::Release);
        Ok(())
    }

    /// CONFIG GET: (name, value) pairs of every parameter matching any pattern, each once.
    pub fn get_matching(&self, patterns: &[&[u8]]) -> Vec<(String, String)> {
        let s = self.get();
        let mut out: Vec<(String, String)> = Vec::new();
        for p in all_params() {
            let names = std::iter::once(p.name).chain(p.aliases.iter().copied());
            for n in names {
                // A plain name (no glob characters) is echoed as typed, like Redis 7.0.
                let matched = patterns
                    .iter()
                    .find(|pat| crate::base::glob::glob_match(pat, n.as_bytes(), true));
                if let Some(pat) = matched {
                    let plain = !pat.iter().any(|b| matches!(b, b'*' | b'?' | b'[' | b'\\'));
                    let shown = if plain {
                        String::from_utf8_lossy(pat).into_owned()
                    } else {
                        n.to_string()
                    };
                    if !out.iter().any(|(k, _)| k.eq_ignore_ascii_case(n)) {
                        out.push((shown, (p.get)(&s)));
                    }
                }
            }
        }
        out
    }

    /// CONFIG REWRITE: rewrites the config file keeping comments and unknown
    /// lines, replacing the lines of known parameters with their current value
    /// and appending changed parameters that had no line.
    pub fn rewrite(&self) -> Result<(), String> {
        let path = self
            .file
            .as_ref()
            .ok_or(errors::ERR_SERVER_RUNNING_WITHOUT_CONFIG_FILE)?;
        let old = std::fs::read_to_string(path).unwrap_or_default();
        let s = self.get();
        let text = rewrite_text(&old, &s);
        let tmp = path.with_extension("tmp-rewrite");
        std::fs::write(&tmp, text)
            .map_err(|e| crate::base::errors::config_rewrite_failed(&e.to_string()))?;
        std::fs::rename(&tmp, path)
            .map_err(|e| crate::base::errors::config_rewrite_failed(&e.to_string()))?;
        Ok(())
    }
}

const REWRITE_MARKER: &str = "# Generated by CONFIG REWRITE";

/// Pure part of CONFIG REWRITE, separated for tests.
pub fn rewrite_text(old: &str, s: &Settings) -> String {
    let defaults = Settings::default();
    let mut done: Vec<&'static str> = Vec::new();
    let mut lines: Vec<String> = Vec::new();
    for line in old.lines() {
        if line.trim() == REWRITE_MARKER {
            continue;
        }
        let words = split_config_line(line).unwrap_or_default();
        let param = words.first().and_then(|w| find_param(w));
        match param {
            Some(p) => {
                if done.contains(&p.name) {
                    continue; // later duplicates collapse into the first line
                }
                done.push(p.name);
                lines.push(format!("{} {}", p.name, quote_value(&(p.get)(s))));
            }
            None => lines.push(line.to_string()),
        }
    }
    let mut appended = false;
    for p in all_params() {
        if done.contains(&p.name) || (p.get)(s) == (p.get)(&defaults) {
            continue;
        }
        if !appended {
            lines.push(REWRITE_MARKER.to_string());
            appended = true;
        }
        lines.push(format!("{} {}", p.name, quote_value(&(p.get)(s))));
    }
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

fn quote_value(v: &str) -> String {
    if !v.is_empty()
        && v.bytes()
            .all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\'' && b != b'\\')
    {
        return v.to_string();
    }
    let mut q = String::from("\"");
    for c in v.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            '\n' => q.push_str("\\n"),
            '\r' => q.push_str("\\r"),
            '\t' => q.push_str("\\t"),
            c => q.push(c),
        }
    }
    q.push('"');
    q
}

/// Splits a config line into words like redis.conf (quotes, escapes). Comments
/// and blank lines give an empty vector; unbalanced quotes give `None`.
pub fn split_config_line(line: &str) -> Option<Vec<String>> {
    let t = line.trim();
    if t.is_empty() || t.starts_with('#') {
        return Some(Vec::new());
    }
    let mut out = Vec::new();
    let b = t.as_bytes();
    let mut i = 0;
    while i < b.len() {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= b.len() {
            break;
        }
        let mut cur = Vec::new();
        if b[i] == b'"' || b[i] == b'\'' {
            let q = b[i];
            i += 1;
            loop {
                if i >= b.len() {
                    return None;
                }
                if b[i] == b'\\' && q == b'"' && i + 1 < b.len() {
                    i += 1;
                    let c = match b[i] {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'a' => 7,
                        b'b' => 8,
                        b'x' if i + 2 < b.len()
                            && b[i + 1].is_ascii_hexdigit()
                            && b[i + 2].is_ascii_hexdigit() =>
                        {
                            let h =
                                u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 3]).ok()?, 16)
                                    .ok()?;
                            i += 2;
                            h
                        }
                        c => c,
                    };
                    cur.push(c);
                    i += 1;
                } else if b[i] == b'\\' && q == b'\'' && i + 1 < b.len() && b[i + 1] == b'\'' {
                    cur.push(b'\'');
                    i += 2;
                } else if b[i] == q {
                    i += 1;
                    if i < b.len() && !b[i].is_ascii_whitespace() {
                        return None; // closing quote must be followed by a space
                    }
                    break;
                } else {
                    cur.push(b[i]);
                    i += 1;
                }
            }
        } else {
            while i < b.len() && !b[i].is_ascii_whitespace() {
                cur.push(b[i]);
                i += 1;
            }
        }
        out.push(String::from_utf8_lossy(&cur).into_owned());
    }
    Some(out)
}

/// Error while loading configuration at startup; the message names the setting.
#[derive(Debug)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Builds settings from `petrel [file] [--name value ...]` arguments (without argv[0]).
/// Returns the settings and the config file path, if any.
pub fn load_from_args(args: &[String]) -> Result<(Settings, Option<PathBuf>), ConfigError> {
    let mut s = Settings::default();
    let mut rest = args;
    let mut file = None;
    if let Some(first) = rest.first() {
        if !first.starts_with("--") {
            let path = PathBuf::from(first);
            let text = std::fs::read_to_string(&path).map_err(|e| {
                ConfigError(format!(
                    "Fatal error, can't open config file '{first}': {e}"
                ))
            })?;
            apply_text(&mut s, &text, &format!("config file '{first}'"))?;
            file = Some(std::fs::canonicalize(&path).unwrap_or(path));
            rest = &rest[1..];
        }
    }
    // "--name v1 v2 --other v" → lines "name v1 v2", "other v", like redis-server.
    let mut text = String::new();
    for a in rest {
        if let Some(name) = a.strip_prefix("--") {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(name);
        } else {
            text.push(' ');
            text.push_str(&quote_value(a));
        }
    }
    apply_text(&mut s, &text, "command line")?;
    Ok((s, file))
}

fn apply_text(s: &mut Settings, text: &str, origin: &str) -> Result<(), ConfigError> {
    for (n, line) in text.lines().enumerate() {
        let words = split_config_line(line).ok_or_else(|| {
            ConfigError(format!("*** FATAL CONFIG ERROR ***\nIn {origin}, at line {}\n>>> '{line}'\nUnbalanced quotes in configuration line", n + 1))
        })?;
        if words.is_empty() {
            continue;
        }
        let name = &words[0];
        let fail = |why: String| {
            ConfigError(format!(
                "*** FATAL CONFIG ERROR ***\nIn {origin}, at line {}\n>>> '{}'\n{why}",
                n + 1,
                line.trim()
            ))
        };
        let p = find_param(name).ok_or_else(|| {
            fail(format!(
                "Bad directive or wrong number of arguments: unknown setting '{name}'"
            ))
        })?;
        let value = words[1..].join(" ");
        if words.len() < 2 && p.name != "save" && p.name != "requirepass" && p.name != "unixsocket"
        {
            return Err(fail(format!("wrong number of arguments for '{}'", p.name)));
        }
        (p.set)(s, &value).map_err(|e| fail(format!("invalid value for '{}': {e}", p.name)))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_round_trip() {
        let s = Settings::default();
        assert_eq!(s.port, 6379);
        assert_eq!(s.maxclients, 10000);
        assert_eq!(s.proto_max_bulk_len, 512 * 1024 * 1024);
        assert_eq!(s.client_query_buffer_limit, 1024 * 1024 * 1024);
        for p in all_params() {
            let mut t = s.clone();
            (p.set)(&mut t, &(p.get)(&s)).unwrap();
            assert_eq!((p.get)(&t), (p.get)(&s), "{}", p.name);
        }
    }

    #[test]
    fn memory_units() {
        assert_eq!(parse_memory("1gb"), Some(1 << 30));
        assert_eq!(parse_memory("100MB"), Some(100 << 20));
        assert_eq!(parse_memory("1k"), Some(1000));
        assert_eq!(parse_memory("12"), Some(12));
        assert_eq!(parse_memory("x"), None);
        assert_eq!(parse_memory("-1"), None);
    }

    #[test]
    fn args_and_errors() {
        let args: Vec<String> = ["--port", "7000", "--maxclients", "5"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let (s, f) = load_from_args(&args).unwrap();
        assert_eq!((s.port, s.maxclients, f), (7000, 5, None));
        let bad: Vec<String> = ["--nosuch", "1"].iter().map(|s| s.to_string()).collect();
        assert!(load_from_args(&bad).unwrap_err().0.contains("nosuch"));
        let bad: Vec<String> = ["--port", "abc"].iter().map(|s| s.to_string()).collect();
        assert!(load_from_args(&bad).unwrap_err().0.contains("port"));
    }

    #[test]
    fn set_many_is_all_or_nothing() {
        let c = ConfigStore::new(Settings::default(), None);
        let e = c
            .set_many(&[("maxclients", "10"), ("timeout", "x")])
            .unwrap_err();
        assert!(e.contains("'timeout'"), "{e}");
        assert_eq!(c.get().maxclients, 10000);
        c.set_many(&[("maxclients", "10"), ("timeout", "5")])
            .unwrap();
        assert_eq!((c.get().maxclients, c.get().timeout), (10, 5));
        assert!(c
            .set_many(&[("daemonize", "yes")])
            .unwrap_err()
            .contains("immutable"));
    }

    #[test]
    fn rewrite_keeps_comments() {
        let s = Settings {
            maxclients: 42,
            timeout: 7,
            ..Default::default()
        };
        let out = rewrite_text("# hello\nmaxclients 1\nmaxclients 2\n", &s);
        assert_eq!(
            out,
            "# hello\nmaxclients 42\n# Generated by CONFIG REWRITE\ntimeout 7\n"
        );
    }

    #[test]
    fn split_lines() {
        assert_eq!(
            split_config_line("save \"\"").unwrap(),
            vec!["save".to_string(), String::new()]
        );
        assert_eq!(
            split_config_line("requirepass \"a b\"").unwrap(),
            vec!["requirepass", "a b"]
        );
        assert!(split_config_line("x \"unbalanced").is_none());
    }
}
