//! Persistence: RDB save points and the RDB file (`services::snapshot`),
//! shutdown on signals. The append-only file's settings are in `params::aof`.

use super::super::values::*;
use super::super::Param;

/// `sanitize-dump-payload` values, Redis's order.
pub const SANITIZE_NAMES: &[&str] = &["no", "yes", "clients"];

/// Redis's built-in save points (`save` when no configuration sets it).
pub const DEFAULT_SAVE: &str = "3600 1 300 100 60 10000";

pub static PERSISTENCE: &[Param] = &[
    // A config file's `save` lines add up (the first one replaces these
    // defaults, `save ""` empties the list): `file::apply_text` joins them
    // before calling this. CONFIG SET replaces the whole list.
    p!(
        "save",
        true,
        DEFAULT_SAVE,
        |s| fmt_save_points(&s.save_points),
        |s, v| {
            s.save_points = parse_save_points(v)?;
            Ok(())
        }
    ),
    Param {
        name: "dbfilename",
        aliases: &[],
        mutable: true,
        default: || "dump.rdb".into(),
        get: |s| s.dbfilename.clone(),
        set: |s, v| {
            // Redis's rule: a file name, not a path.
            if v.is_empty() || v.contains('/') || v == "." || v == ".." {
                return Err("dbfilename can't be a path, just a filename".into());
            }
            s.dbfilename = v.to_string();
            Ok(())
        },
    },
    p!(
        "rdbcompression",
        true,
        "yes",
        |s| fmt_bool(s.rdbcompression),
        |s, v| {
            s.rdbcompression = parse_bool(v)?;
            Ok(())
        }
    ),
    p!(
        "rdbchecksum",
        false,
        "yes",
        |s| fmt_bool(s.rdbchecksum),
        |s, v| {
            s.rdbchecksum = parse_bool(v)?;
            Ok(())
        }
    ),
    p!(
        "rdb-save-incremental-fsync",
        true,
        "yes",
        |s| fmt_bool(s.rdb_save_incremental_fsync),
        |s, v| {
            s.rdb_save_incremental_fsync = parse_bool(v)?;
            Ok(())
        }
    ),
    p!(
        "stop-writes-on-bgsave-error",
        true,
        "yes",
        |s| fmt_bool(s.stop_writes_on_bgsave_error),
        |s, v| {
            s.stop_writes_on_bgsave_error = parse_bool(v)?;
            Ok(())
        }
    ),
    p!(
        "sanitize-dump-payload",
        true,
        "no",
        |s| SANITIZE_NAMES[s.sanitize_dump_payload].to_string(),
        |s, v| {
            s.sanitize_dump_payload = enum_of(v, SANITIZE_NAMES)?;
            Ok(())
        }
    ),
    p!(
        "shutdown-on-sigterm",
        true,
        "default",
        |s| fmt_shutdown_flags(s.shutdown_on_sigterm),
        |s, v| {
            s.shutdown_on_sigterm = parse_shutdown_flags(v)?;
            Ok(())
        }
    ),
    p!(
        "shutdown-on-sigint",
        true,
        "default",
        |s| fmt_shutdown_flags(s.shutdown_on_sigint),
        |s, v| {
            s.shutdown_on_sigint = parse_shutdown_flags(v)?;
            Ok(())
        }
    ),
    // Waiting for replicas to catch up before exiting: no replication yet.
    p!(
        "shutdown-timeout",
        true,
        "10",
        |s| s.shutdown_timeout.to_string(),
        |s, v| {
            s.shutdown_timeout = int_in(v, 0, i32::MAX as i64)? as u64;
            Ok(())
        }
    ),
];
