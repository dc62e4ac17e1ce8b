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
];
