//! Limits a client can hit: bulk length, query buffer, output buffers.

use super::super::values::*;
use super::super::Param;

pub static CLIENT_LIMITS: &[Param] = &[
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
];
