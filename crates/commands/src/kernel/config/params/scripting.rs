//! Scripting: how long a script may run before other clients get `-BUSY`.

use super::super::settings::*;
use super::super::values::*;
use super::super::Param;

pub static SCRIPTING: &[Param] = &[Param {
    name: "busy-reply-threshold",
    aliases: &["lua-time-limit"],
    mutable: true,
    default: || String::from("5000"),
    get: |s: &Settings| s.busy_reply_threshold_ms.to_string(),
    set: |s: &mut Settings, v: &str| {
        s.busy_reply_threshold_ms = int_in(v, 0, i64::MAX)? as u64;
        Ok(())
    },
}];
