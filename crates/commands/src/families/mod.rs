//! Families layer: one module (file or folder) per command family. Each
//! exposes `pub const COMMANDS: &[CommandSpec]` (and, where it has some,
//! `DEBUG: &[DebugSub]`), which [`crate::registry`] collects.
//!
//! A family changes data only through the keyspace and [`crate::kernel::ctx::Ctx`]
//! (notify, modified); it may use `services`, `kernel` and `base`, and never
//! imports another family or the runtime. Shared operations go to
//! `services`, shared state to `kernel`.
//!
//! `scripting` has the EVAL/FUNCTION commands (the Lua engine is crate
//! `scripting` behind a host trait); `streams` and `geo` are folders here.
//! `replication` has replication (SYNC, PSYNC, REPLCONF, WAIT, ROLE,
//! REPLICAOF); `cluster` has CLUSTER, READONLY, READWRITE and ASKING on
//! `kernel::cluster`; `migrate` has MIGRATE (its connections are
//! `services::migrate`).
//! `persistence` holds SAVE/BGSAVE/LASTSAVE/DUMP/RESTORE (the codec is
//! crate `rdb`, the machinery `services::snapshot`); `acl` the ACL command
//! family (the permission check itself is `services::acl`, run by dispatch).

pub mod acl;
pub mod aof;
pub mod bitmap;
pub mod cluster;
pub mod connection;
pub mod geo;
pub mod hashes;
pub mod hyperloglog;
pub mod keys;
pub mod lists;
pub mod migrate;
pub mod persistence;
pub mod pubsub;
pub mod replication;
pub mod scripting;
pub mod server;
pub mod sets;
pub mod streams;
pub mod strings;
pub mod transactions;
pub mod zsets;
