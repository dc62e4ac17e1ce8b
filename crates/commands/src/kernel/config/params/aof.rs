//! The append-only file (`services::aof`): whether it is on, its files'
//! names, the fsync policy, loading and rewrite rules. Applied at startup
//! and after every CONFIG SET by `services::aof::apply_settings`
//! (`appendonly yes` at runtime writes a base, then appends).

use super::super::values::*;
use super::super::Param;

/// `appendfsync` values, Redis's order.
/// In Redis 7.0's order (its "must be one of" error lists them so).
pub const FSYNC_NAMES: &[&str] = &["everysec", "always", "no"];

fn fsync_of(i: usize) -> crate::kernel::aof::Fsync {
    use crate::kernel::aof::Fsync;
    [Fsync::Everysec, Fsync::Always, Fsync::No][i]
}

fn fsync_name(f: crate::kernel::aof::Fsync) -> String {
    use crate::kernel::aof::Fsync;
    match f {
        Fsync::Always => "always",
        Fsync::Everysec => "everysec",
        Fsync::No => "no",
    }
    .into()
}

/// A file or directory name inside `dir`, never a path (Redis's rule).
fn plain_name(v: &str, what: &str) -> Result<String, String> {
    if v.is_empty() || v.contains('/') {
        return Err(format!(
            "{what} can't be a path, just a {}",
            if what == "appenddirname" {
                "dirname"
            } else {
                "filename"
            }
        ));
    }
    Ok(v.to_string())
}

pub static AOF: &[Param] = &[
    p!(
        "appendonly",
        true,
        "no",
        |s| fmt_bool(s.aof.enabled),
        |s, v| {
            s.aof.enabled = parse_bool(v)?;
            Ok(())
        }
    ),
    p!(
        "appendfilename",
        false,
        "appendonly.aof",
        |s| s.aof.filename.clone(),
        |s, v| {
            s.aof.filename = plain_name(v, "appendfilename")?;
            Ok(())
        }
    ),
    p!(
        "appenddirname",
        false,
        "appendonlydir",
        |s| s.aof.dirname.clone(),
        |s, v| {
            s.aof.dirname = plain_name(v, "appenddirname")?;
            Ok(())
        }
    ),
    p!(
        "appendfsync",
        true,
        "everysec",
        |s| fsync_name(s.aof.fsync),
        |s, v| {
            s.aof.fsync = fsync_of(enum_of(v, FSYNC_NAMES)?);
            Ok(())
        }
    ),
    p!(
        "no-appendfsync-on-rewrite",
        true,
        "no",
        |s| fmt_bool(s.aof.no_fsync_on_rewrite),
        |s, v| {
            s.aof.no_fsync_on_rewrite = parse_bool(v)?;
            Ok(())
        }
    ),
    p!(
        "auto-aof-rewrite-percentage",
        true,
        "100",
        |s| s.aof.rewrite_percentage.to_string(),
        |s, v| {
            s.aof.rewrite_percentage = int_in(v, 0, i32::MAX as i64)? as u64;
            Ok(())
        }
    ),
    p!(
        "auto-aof-rewrite-min-size",
        true,
        "67108864",
        |s| s.aof.rewrite_min_size.to_string(),
        |s, v| {
            s.aof.rewrite_min_size = memory_in(v, 0, i64::MAX as u64)?;
            Ok(())
        }
    ),
    p!(
        "aof-load-truncated",
        true,
        "yes",
        |s| fmt_bool(s.aof.load_truncated),
        |s, v| {
            s.aof.load_truncated = parse_bool(v)?;
            Ok(())
        }
    ),
    p!(
        "aof-use-rdb-preamble",
        true,
        "yes",
        |s| fmt_bool(s.aof.use_rdb_preamble),
        |s, v| {
            s.aof.use_rdb_preamble = parse_bool(v)?;
            Ok(())
        }
    ),
    p!(
        "aof-timestamp-enabled",
        true,
        "no",
        |s| fmt_bool(s.aof.timestamp_enabled),
        |s, v| {
            s.aof.timestamp_enabled = parse_bool(v)?;
            Ok(())
        }
    ),
    p!(
        "aof-rewrite-incremental-fsync",
        true,
        "yes",
        |s| fmt_bool(s.aof.rewrite_incremental_fsync),
        |s, v| {
            s.aof.rewrite_incremental_fsync = parse_bool(v)?;
            Ok(())
        }
    ),
    p!(
        "aof-disable-auto-gc",
        true,
        "no",
        |s| fmt_bool(s.aof.disable_auto_gc),
        |s, v| {
            s.aof.disable_auto_gc = parse_bool(v)?;
            Ok(())
        }
    ),
];
