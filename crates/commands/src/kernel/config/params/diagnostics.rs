//! Diagnostics: SLOWLOG, LATENCY, latency tracking, DEBUG.

use super::super::settings::*;
use super::super::values::*;
use super::super::Param;

pub static DIAGNOSTICS: &[Param] = &[
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
    p!(
        "enable-protected-configs",
        false,
        "no",
        |s| ENABLEMENT[s.enable_protected_configs as usize].to_string(),
        |s, v| {
            s.enable_protected_configs =
                [Enablement::No, Enablement::Yes, Enablement::Local][enum_of(v, ENABLEMENT)?];
            Ok(())
        }
    ),
];
