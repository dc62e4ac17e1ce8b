//! Replication settings (issue 21, `services::replication`).

use super::super::values::*;
use super::super::Param;
use crate::kernel::config::settings::DisklessLoad;

/// `propagation-error-behavior` values, in `ReplSettings::propagation_error`
/// order (`services::replication::propagation`).
pub const PROPAGATION_ERROR_NAMES: &[&str] = &["ignore", "panic", "panic-on-replicas"];

/// `repl-diskless-load` values, in `DisklessLoad` order.
pub const DISKLESS_LOAD_NAMES: &[&str] = &["disabled", "on-empty-db", "swapdb"];

pub static REPLICATION: &[Param] = &[
    Param {
        name: "replicaof",
        aliases: &["slaveof"],
        // As in Redis: only the config file sets it; REPLICAOF changes it.
        mutable: false,
        default: String::new,
        get: |s| match &s.repl.replicaof {
            Some((h, p)) => format!("{h} {p}"),
            None => String::new(),
        },
        set: |s, v| {
            let words: Vec<&str> = v.split_whitespace().collect();
            s.repl.replicaof = match words.as_slice() {
                [] => None,
                [h, p] => {
                    let port =
                        int_in(p, 0, 65535).map_err(|_| "Invalid master port".to_string())?;
                    Some((h.to_string(), port as u16))
                }
                _ => return Err("wrong number of arguments".into()),
            };
            Ok(())
        },
    },
    p!(
        "masterauth",
        true,
        "",
        |s| s.repl.masterauth.clone(),
        |s, v| {
            s.repl.masterauth = v.to_string();
            Ok(())
        }
    ),
    p!(
        "masteruser",
        true,
        "",
        |s| s.repl.masteruser.clone(),
        |s, v| {
            s.repl.masteruser = v.to_string();
            Ok(())
        }
    ),
    Param {
        name: "replica-announce-ip",
        aliases: &["slave-announce-ip"],
        mutable: true,
        default: String::new,
        get: |s| s.repl.announce_ip.clone(),
        set: |s, v| {
            s.repl.announce_ip = v.to_string();
            Ok(())
        },
    },
    Param {
        name: "replica-announce-port",
        aliases: &["slave-announce-port"],
        mutable: true,
        default: || "0".into(),
        get: |s| s.repl.announce_port.to_string(),
        set: |s, v| {
            s.repl.announce_port = int_in(v, 0, 65535)? as u16;
            Ok(())
        },
    },
    Param {
        name: "replica-priority",
        aliases: &["slave-priority"],
        mutable: true,
        default: || "100".into(),
        get: |s| s.repl.priority.to_string(),
        set: |s, v| {
            s.repl.priority = int_in(v, 0, i32::MAX as i64)?;
            Ok(())
        },
    },
    p!(
        "replica-announced",
        true,
        "yes",
        |s| fmt_bool(s.repl.announced),
        |s, v| {
            s.repl.announced = parse_bool(v)?;
            Ok(())
        }
    ),
    Param {
        name: "replica-read-only",
        aliases: &["slave-read-only"],
        mutable: true,
        default: || "yes".into(),
        get: |s| fmt_bool(s.repl.read_only),
        set: |s, v| {
            s.repl.read_only = parse_bool(v)?;
            Ok(())
        },
    },
    Param {
        name: "replica-lazy-flush",
        aliases: &["slave-lazy-flush"],
        mutable: true,
        default: || "no".into(),
        get: |s| fmt_bool(s.repl.lazy_flush),
        set: |s, v| {
            s.repl.lazy_flush = parse_bool(v)?;
            Ok(())
        },
    },
    p!(
        "repl-disable-tcp-nodelay",
        true,
        "no",
        |s| fmt_bool(s.repl.disable_tcp_nodelay),
        |s, v| {
            s.repl.disable_tcp_nodelay = parse_bool(v)?;
            Ok(())
        }
    ),
    p!(
        "rdb-del-sync-files",
        true,
        "no",
        |s| fmt_bool(s.repl.rdb_del_sync_files),
        |s, v| {
            s.repl.rdb_del_sync_files = parse_bool(v)?;
            Ok(())
        }
    ),
    Param {
        name: "replica-ignore-maxmemory",
        aliases: &["slave-ignore-maxmemory"],
        mutable: true,
        default: || "yes".into(),
        get: |s| fmt_bool(s.repl.ignore_maxmemory),
        set: |s, v| {
            s.repl.ignore_maxmemory = parse_bool(v)?;
            Ok(())
        },
    },
    p!(
        "propagation-error-behavior",
        true,
        "ignore",
        |s| PROPAGATION_ERROR_NAMES[s.repl.propagation_error as usize].to_string(),
        |s, v| {
            s.repl.propagation_error = enum_of(v, PROPAGATION_ERROR_NAMES)? as u8;
            Ok(())
        }
    ),
    p!(
        "replica-ignore-disk-write-errors",
        true,
        "no",
        |s| fmt_bool(s.repl.ignore_disk_write_errors),
        |s, v| {
            s.repl.ignore_disk_write_errors = parse_bool(v)?;
            Ok(())
        }
    ),
    Param {
        name: "replica-serve-stale-data",
        aliases: &["slave-serve-stale-data"],
        mutable: true,
        default: || "yes".into(),
        get: |s| fmt_bool(s.repl.serve_stale_data),
        set: |s, v| {
            s.repl.serve_stale_data = parse_bool(v)?;
            Ok(())
        },
    },
    p!(
        "repl-diskless-sync",
        true,
        "yes",
        |s| fmt_bool(s.repl.diskless_sync),
        |s, v| {
            s.repl.diskless_sync = parse_bool(v)?;
            Ok(())
        }
    ),
    p!(
        "repl-diskless-load",
        true,
        "disabled",
        |s| DISKLESS_LOAD_NAMES[s.repl.diskless_load as usize].to_string(),
        |s, v| {
            s.repl.diskless_load = match enum_of(v, DISKLESS_LOAD_NAMES)? {
                1 => DisklessLoad::OnEmptyDb,
                2 => DisklessLoad::Swapdb,
                _ => DisklessLoad::Disabled,
            };
            Ok(())
        }
    ),
    p!(
        "repl-diskless-sync-delay",
        true,
        "5",
        |s| s.repl.diskless_sync_delay.to_string(),
        |s, v| {
            s.repl.diskless_sync_delay = int_in(v, 0, i32::MAX as i64)? as u64;
            Ok(())
        }
    ),
    p!(
        "repl-diskless-sync-max-replicas",
        true,
        "0",
        |s| s.repl.diskless_sync_max_replicas.to_string(),
        |s, v| {
            s.repl.diskless_sync_max_replicas = int_in(v, 0, i32::MAX as i64)? as u64;
            Ok(())
        }
    ),
    Param {
        name: "repl-ping-replica-period",
        aliases: &["repl-ping-slave-period"],
        mutable: true,
        default: || "10".into(),
        get: |s| s.repl.ping_period.to_string(),
        set: |s, v| {
            s.repl.ping_period = int_in(v, 1, i32::MAX as i64)? as u64;
            Ok(())
        },
    },
    p!(
        "repl-timeout",
        true,
        "60",
        |s| s.repl.timeout.to_string(),
        |s, v| {
            s.repl.timeout = int_in(v, 1, i32::MAX as i64)? as u64;
            Ok(())
        }
    ),
    p!(
        "repl-backlog-size",
        true,
        "1048576",
        |s| s.repl.backlog_size.to_string(),
        |s, v| {
            // Redis raises anything smaller to its 16 KiB minimum.
            s.repl.backlog_size = memory_in(v, 1, i64::MAX as u64)?.max(16 * 1024);
            Ok(())
        }
    ),
    p!(
        "repl-backlog-ttl",
        true,
        "3600",
        |s| s.repl.backlog_ttl.to_string(),
        |s, v| {
            s.repl.backlog_ttl = int_in(v, 0, i64::MAX)? as u64;
            Ok(())
        }
    ),
    Param {
        name: "min-replicas-to-write",
        aliases: &["min-slaves-to-write"],
        mutable: true,
        default: || "0".into(),
        get: |s| s.repl.min_replicas_to_write.to_string(),
        set: |s, v| {
            s.repl.min_replicas_to_write = int_in(v, 0, i32::MAX as i64)? as u64;
            Ok(())
        },
    },
    Param {
        name: "min-replicas-max-lag",
        aliases: &["min-slaves-max-lag"],
        mutable: true,
        default: || "10".into(),
        get: |s| s.repl.min_replicas_max_lag.to_string(),
        set: |s, v| {
            s.repl.min_replicas_max_lag = int_in(v, 0, i32::MAX as i64)? as u64;
            Ok(())
        },
    },
];
