//! Replication settings. Petrel does not replicate yet (issue 21): the rows
//! report the truth (no master) and refuse values that would promise
//! otherwise.

use super::super::Param;

pub static REPLICATION: &[Param] = &[Param {
    name: "replicaof",
    aliases: &["slaveof"],
    // As in Redis: only the config file sets it; REPLICAOF changes it.
    mutable: false,
    default: String::new,
    get: |_| String::new(),
    set: |_, v| {
        if v.trim().is_empty() {
            Ok(())
        } else {
            Err("replication is not supported by this server yet".into())
        }
    },
}];
