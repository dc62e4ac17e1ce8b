//! Keyspace background work and events: the cron rate, keyspace notifications, lazy freeing.

use super::super::values::*;
use super::super::Param;

pub static KEYSPACE: &[Param] = &[
    p!(
        "active-expire-effort",
        true,
        "1",
        |s| s.active_expire_effort.to_string(),
        |s, v| {
            s.active_expire_effort = int_in(v, 1, 10)? as u8;
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
];
