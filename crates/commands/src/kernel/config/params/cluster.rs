//! Cluster mode (`cluster-*`): whether this server is a cluster node, where
//! its nodes.conf lives, the bus port and the addresses it announces, and
//! the rules that decide when the cluster serves (see `kernel::cluster`).
//! `cluster-enabled`, `cluster-config-file` and `cluster-port` are fixed at
//! startup, as in Redis.

use super::super::settings::*;
use super::super::values::*;
use super::super::Param;

/// `cluster-preferred-endpoint-type` values, in Redis's order.
pub const ENDPOINT_TYPES: &[&str] = &["ip", "hostname", "unknown-endpoint"];

/// Redis's rule for `cluster-announce-hostname`.
fn check_hostname(v: &str) -> Result<(), String> {
    if v.len() >= 256 {
        return Err("Hostnames must be less than 256 characters".into());
    }
    if !v
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
    {
        return Err("Hostnames may only contain alphanumeric characters, hyphens or dots".into());
    }
    Ok(())
}

fn port(v: &str) -> Result<u16, String> {
    Ok(int_in(v, 0, 65535)? as u16)
}

fn int32(v: &str) -> Result<u32, String> {
    Ok(int_in(v, 0, i32::MAX as i64)? as u32)
}

pub static CLUSTER: &[Param] = &[
    p!(
        "cluster-enabled",
        false,
        "no",
        |s| fmt_bool(s.cluster.enabled),
        |s, v| {
            s.cluster.enabled = parse_bool(v)?;
            Ok(())
        }
    ),
    p!(
        "cluster-config-file",
        false,
        "nodes.conf",
        |s| s.cluster.config_file.clone(),
        |s, v| {
            s.cluster.config_file = v.to_string();
            Ok(())
        }
    ),
    p!(
        "cluster-node-timeout",
        true,
        "15000",
        |s| s.cluster.node_timeout_ms.to_string(),
        |s, v| {
            s.cluster.node_timeout_ms = int_in(v, 0, i64::MAX)? as u64;
            Ok(())
        }
    ),
    p!(
        "cluster-port",
        false,
        "0",
        |s| s.cluster.port.to_string(),
        |s, v| {
            s.cluster.port = port(v)?;
            Ok(())
        }
    ),
    Param {
        name: "cluster-replica-validity-factor",
        aliases: &["cluster-slave-validity-factor"],
        mutable: true,
        default: || String::from("10"),
        get: |s: &Settings| s.cluster.replica_validity_factor.to_string(),
        set: |s: &mut Settings, v: &str| {
            s.cluster.replica_validity_factor = int32(v)?;
            Ok(())
        },
    },
    p!(
        "cluster-migration-barrier",
        true,
        "1",
        |s| s.cluster.migration_barrier.to_string(),
        |s, v| {
            s.cluster.migration_barrier = int32(v)?;
            Ok(())
        }
    ),
    Param {
        name: "cluster-replica-no-failover",
        aliases: &["cluster-slave-no-failover"],
        mutable: true,
        default: || String::from("no"),
        get: |s: &Settings| fmt_bool(s.cluster.replica_no_failover),
        set: |s: &mut Settings, v: &str| {
            s.cluster.replica_no_failover = parse_bool(v)?;
            Ok(())
        },
    },
    p!(
        "cluster-allow-replica-migration",
        true,
        "yes",
        |s| fmt_bool(s.cluster.allow_replica_migration),
        |s, v| {
            s.cluster.allow_replica_migration = parse_bool(v)?;
            Ok(())
        }
    ),
    p!(
        "cluster-require-full-coverage",
        true,
        "yes",
        |s| fmt_bool(s.cluster.require_full_coverage),
        |s, v| {
            s.cluster.require_full_coverage = parse_bool(v)?;
            Ok(())
        }
    ),
    p!(
        "cluster-allow-reads-when-down",
        true,
        "no",
        |s| fmt_bool(s.cluster.allow_reads_when_down),
        |s, v| {
            s.cluster.allow_reads_when_down = parse_bool(v)?;
            Ok(())
        }
    ),
    p!(
        "cluster-link-sendbuf-limit",
        true,
        "0",
        |s| s.cluster.link_sendbuf_limit.to_string(),
        |s, v| {
            s.cluster.link_sendbuf_limit = memory_in(v, 0, i64::MAX as u64)?;
            Ok(())
        }
    ),
    p!(
        "cluster-allow-pubsubshard-when-down",
        true,
        "yes",
        |s| fmt_bool(s.cluster.allow_pubsubshard_when_down),
        |s, v| {
            s.cluster.allow_pubsubshard_when_down = parse_bool(v)?;
            Ok(())
        }
    ),
    p!(
        "cluster-announce-hostname",
        true,
        "",
        |s| s.cluster.announce_hostname.clone(),
        |s, v| {
            check_hostname(v)?;
            s.cluster.announce_hostname = v.to_string();
            Ok(())
        }
    ),
    p!(
        "cluster-preferred-endpoint-type",
        true,
        "ip",
        |s| ENDPOINT_TYPES[s.cluster.preferred_endpoint_type].to_string(),
        |s, v| {
            s.cluster.preferred_endpoint_type = enum_of(v, ENDPOINT_TYPES)?;
            Ok(())
        }
    ),
    p!(
        "cluster-announce-ip",
        true,
        "",
        |s| s.cluster.announce_ip.clone(),
        |s, v| {
            s.cluster.announce_ip = v.to_string();
            Ok(())
        }
    ),
    p!(
        "cluster-announce-port",
        true,
        "0",
        |s| s.cluster.announce_port.to_string(),
        |s, v| {
            s.cluster.announce_port = port(v)?;
            Ok(())
        }
    ),
    p!(
        "cluster-announce-tls-port",
        true,
        "0",
        |s| s.cluster.announce_tls_port.to_string(),
        |s, v| {
            s.cluster.announce_tls_port = port(v)?;
            Ok(())
        }
    ),
    p!(
        "cluster-announce-bus-port",
        true,
        "0",
        |s| s.cluster.announce_bus_port.to_string(),
        |s, v| {
            s.cluster.announce_bus_port = port(v)?;
            Ok(())
        }
    ),
];
