//! `maxmemory` and eviction.

use super::super::settings::*;
use super::super::values::*;
use super::super::Param;

pub static MEMORY: &[Param] = &[
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
        "jemalloc-bg-thread",
        true,
        "yes",
        |s| fmt_bool(s.jemalloc_bg_thread),
        |s, v| {
            s.jemalloc_bg_thread = parse_bool(v)?;
            Ok(())
        }
    ),
    p!(
        "activedefrag",
        true,
        "no",
        |s| fmt_bool(s.defrag.enabled),
        |s, v| {
            s.defrag.enabled = parse_bool(v)?;
            Ok(())
        }
    ),
    p!(
        "active-defrag-ignore-bytes",
        true,
        "104857600",
        |s| s.defrag.ignore_bytes.to_string(),
        |s, v| {
            s.defrag.ignore_bytes = memory_in(v, 1, i64::MAX as u64)?;
            Ok(())
        }
    ),
    p!(
        "active-defrag-threshold-lower",
        true,
        "10",
        |s| s.defrag.threshold_lower.to_string(),
        |s, v| {
            s.defrag.threshold_lower = int_in(v, 0, 1000)? as u32;
            Ok(())
        }
    ),
    p!(
        "active-defrag-threshold-upper",
        true,
        "100",
        |s| s.defrag.threshold_upper.to_string(),
        |s, v| {
            s.defrag.threshold_upper = int_in(v, 0, 1000)? as u32;
            Ok(())
        }
    ),
    p!(
        "active-defrag-cycle-min",
        true,
        "1",
        |s| s.defrag.cycle_min.to_string(),
        |s, v| {
            s.defrag.cycle_min = int_in(v, 1, 99)? as u32;
            Ok(())
        }
    ),
    p!(
        "active-defrag-cycle-max",
        true,
        "25",
        |s| s.defrag.cycle_max.to_string(),
        |s, v| {
            s.defrag.cycle_max = int_in(v, 1, 99)? as u32;
            Ok(())
        }
    ),
    p!(
        "active-defrag-max-scan-fields",
        true,
        "1000",
        |s| s.defrag.max_scan_fields.to_string(),
        |s, v| {
            s.defrag.max_scan_fields = int_in(v, 1, i64::MAX)? as u64;
            Ok(())
        }
    ),
];
