//! Command execution layer: the command table, per-client state, the shared
//! [`server::Server`], configuration, and one module per command family.
//!
//! The network layer (crate `server`) parses requests and calls
//! [`dispatch::execute`] for each; everything Redis-visible happens here.

pub mod admin;
pub mod bitmap;
pub mod blocking;
pub mod blocking_cmds;
pub mod client;
pub mod client_cmd;
pub mod coll;
pub mod config;
pub mod connection;
pub mod cron;
pub mod ctx;
pub mod debug;
pub mod dispatch;
pub mod eviction;
pub mod expire;
pub mod glob;
pub mod hashes;
pub mod hub;
pub mod hyperloglog;
pub mod info;
pub mod introspection;
pub mod keys;
pub mod keysizes;
pub mod latency_cmd;
pub mod lazyfree;
pub mod lists;
pub mod memory;
pub mod memory_stats;
#[rustfmt::skip]
pub mod redis_meta;
pub mod notify;
pub mod pubsub;
pub mod server;
pub mod sets;
pub mod slowlog;
pub mod slowlog_cmd;
pub mod sort;
pub mod spec;
pub mod stats;
pub mod stopwatch;
pub mod strings;
pub mod table;
pub mod topkeys;
pub mod transactions;
pub mod util;
pub mod zsets;

/// Redis version Petrel reports for compatibility (HELLO, INFO redis_version).
pub const REDIS_VERSION: &str = "7.0.15";
/// Petrel's own version.
pub const PETREL_VERSION: &str = env!("CARGO_PKG_VERSION");
