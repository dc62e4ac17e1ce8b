//! Families layer: one module (file or folder) per command family. Each
//! exposes `pub const COMMANDS: &[CommandSpec]` (and, where it has some,
//! `DEBUG: &[DebugSub]`), which [`crate::registry`] collects.
//!
//! A family changes data only through the keyspace and [`crate::kernel::ctx::Ctx`]
//! (notify, modified); it may use `services`, `kernel` and `base`, and never
//! imports another family or the runtime. Shared operations go to
//! `services`, shared state to `kernel`.
//!
//! Coming families and where they go: `streams` and `geo` (folders here),
//! `scripting` (EVAL/FUNCTION commands here, the Lua engine in crate
//! `scripting` behind a host trait), `replication`, `cluster`, `acl`.
//! `persistence` holds SAVE/BGSAVE/LASTSAVE/DUMP/RESTORE (the codec is
//! crate `rdb`, the machinery `services::snapshot`).

pub mod bitmap;
pub mod connection;
pub mod hashes;
pub mod hyperloglog;
pub mod keys;
pub mod lists;
pub mod persistence;
pub mod pubsub;
pub mod scripting;
pub mod server;
pub mod sets;
pub mod strings;
pub mod transactions;
pub mod zsets;
